//! The cluster list views: the same filter, pagination, order and errors
//! as [`Queries::list_clusters`], selecting only the columns a list shows.

use magnum_domain::models::Cluster;

use super::Result;
use super::clusters::{ClusterFilter, TABLE};
use super::columns::{Col, Reader, col};
use super::exec::Kind;
use super::queries::{ListOptions, Projection, Queries};

/// The columns a cluster list reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClusterView {
    /// What `GET /v1/clusters` shows: uuid, name, cluster_template_id,
    /// keypair, docker_volume_size, labels, master_flavor_id, flavor_id,
    /// create_timeout, stack_id, status and health_status.
    Summary,
    /// What `GET /v1/clusters/detail` shows: every column but the four
    /// certificate references.
    Detail,
}

const SUMMARY_COLS: &[Col] = &[
    col("uuid", Kind::Text),
    col("name", Kind::Text),
    col("cluster_template_id", Kind::Text),
    col("stack_id", Kind::Text),
    col("status", Kind::Text),
    col("create_timeout", Kind::Int),
    col("keypair", Kind::Text),
    col("docker_volume_size", Kind::Int),
    col("labels", Kind::Text),
    col("master_flavor_id", Kind::Text),
    col("flavor_id", Kind::Text),
    col("health_status", Kind::Text),
];

fn read_summary(r: &mut Reader) -> Result<Cluster> {
    Ok(Cluster {
        id: r.id()?,
        uuid: r.string()?,
        name: r.string()?,
        cluster_template_id: r.string()?,
        stack_id: r.text()?,
        status: r.status()?,
        create_timeout: r.int()?,
        keypair: r.text()?,
        docker_volume_size: r.int()?,
        labels: r.json_map()?,
        master_flavor_id: r.text()?,
        flavor_id: r.text()?,
        health_status: r.text()?,
        ..Cluster::default()
    })
}

const DETAIL_COLS: &[Col] = &[
    col("created_at", Kind::Time),
    col("updated_at", Kind::Time),
    col("uuid", Kind::Text),
    col("name", Kind::Text),
    col("cluster_template_id", Kind::Text),
    col("api_address", Kind::Text),
    col("stack_id", Kind::Text),
    col("project_id", Kind::Text),
    col("user_id", Kind::Text),
    col("status", Kind::Text),
    col("discovery_url", Kind::Text),
    col("status_reason", Kind::Text),
    col("create_timeout", Kind::Int),
    col("coe_version", Kind::Text),
    col("container_version", Kind::Text),
    col("keypair", Kind::Text),
    col("docker_volume_size", Kind::Int),
    col("labels", Kind::Text),
    col("master_flavor_id", Kind::Text),
    col("flavor_id", Kind::Text),
    col("health_status", Kind::Text),
    col("health_status_reason", Kind::Text),
    col("fixed_network", Kind::Text),
    col("fixed_subnet", Kind::Text),
    col("floating_ip_enabled", Kind::Bool),
    col("master_lb_enabled", Kind::Bool),
];

fn read_detail(r: &mut Reader) -> Result<Cluster> {
    Ok(Cluster {
        id: r.id()?,
        created_at: r.time()?,
        updated_at: r.opt_time()?,
        uuid: r.string()?,
        name: r.string()?,
        cluster_template_id: r.string()?,
        api_address: r.text()?,
        stack_id: r.text()?,
        project_id: r.string()?,
        user_id: r.string()?,
        status: r.status()?,
        discovery_url: r.text()?,
        status_reason: r.text()?,
        create_timeout: r.int()?,
        coe_version: r.text()?,
        container_version: r.text()?,
        keypair: r.text()?,
        docker_volume_size: r.int()?,
        labels: r.json_map()?,
        master_flavor_id: r.text()?,
        flavor_id: r.text()?,
        health_status: r.text()?,
        health_status_reason: r.json_map()?,
        fixed_network: r.text()?,
        fixed_subnet: r.text()?,
        floating_ip_enabled: r.bool()?,
        master_lb_enabled: r.bool()?,
        ..Cluster::default()
    })
}

static SUMMARY: Projection<Cluster> = Projection {
    cols: SUMMARY_COLS,
    read: read_summary,
};

static DETAIL: Projection<Cluster> = Projection {
    cols: DETAIL_COLS,
    read: read_detail,
};

impl Queries<'_> {
    /// [`Queries::list_clusters`] (same filter, pagination, order and
    /// errors) reading only the columns of `view`: the other fields of the
    /// returned clusters are left at their defaults.
    pub async fn list_clusters_view(
        &mut self,
        f: &ClusterFilter,
        o: &ListOptions,
        view: ClusterView,
    ) -> Result<Vec<Cluster>> {
        let p = match view {
            ClusterView::Summary => &SUMMARY,
            ClusterView::Detail => &DETAIL,
        };
        let c = f.cond()?;
        self.list(&TABLE, p, c, o).await
    }
}
