//! `cluster` (formerly `bay`): CRUD, scoped lookups, lists, counts and
//! stats, and the cascade delete with the cluster's nodegroups.

use magnum_domain::Status;
use magnum_domain::models::Cluster;

use super::Result;
use super::columns::{self as c, Col, Reader, col};
use super::exec::{Arg, Kind};
use super::queries::{Cond, ListOptions, Queries, Scope, Table, default_bool, in_list, quote};

pub(crate) const COLS: &[Col] = &[
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
    col("ca_cert_ref", Kind::Text),
    col("magnum_cert_ref", Kind::Text),
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
    col("etcd_ca_cert_ref", Kind::Text),
    col("front_proxy_ca_cert_ref", Kind::Text),
];

fn read(r: &mut Reader) -> Result<Cluster> {
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
        ca_cert_ref: r.text()?,
        magnum_cert_ref: r.text()?,
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
        etcd_ca_cert_ref: r.text()?,
        front_proxy_ca_cert_ref: r.text()?,
    })
}

fn write(v: &Cluster) -> Vec<Arg> {
    vec![
        c::time(v.created_at),
        c::opt_time(v.updated_at),
        c::string(&v.uuid),
        c::string(&v.name),
        c::string(&v.cluster_template_id),
        c::text(&v.api_address),
        c::text(&v.stack_id),
        c::string(&v.project_id),
        c::string(&v.user_id),
        c::status(v.status),
        c::text(&v.discovery_url),
        c::text(&v.status_reason),
        c::text(&v.ca_cert_ref),
        c::text(&v.magnum_cert_ref),
        c::int(v.create_timeout),
        c::text(&v.coe_version),
        c::text(&v.container_version),
        c::text(&v.keypair),
        c::int(v.docker_volume_size),
        c::json_map(&v.labels),
        c::text(&v.master_flavor_id),
        c::text(&v.flavor_id),
        c::text(&v.health_status),
        c::json_map(&v.health_status_reason),
        c::text(&v.fixed_network),
        c::text(&v.fixed_subnet),
        c::bool(v.floating_ip_enabled),
        c::bool(v.master_lb_enabled),
        c::text(&v.etcd_ca_cert_ref),
        c::text(&v.front_proxy_ca_cert_ref),
    ]
}

pub(crate) static TABLE: Table<Cluster> = Table {
    name: "cluster",
    cols: COLS,
    marker_col: "uuid",
    read,
    write,
    id: |v| &mut v.id,
    created_at: |v| &mut v.created_at,
    updated_at: |v| &mut v.updated_at,
};

/// Selects clusters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterFilter {
    /// The rows the caller may see.
    pub scope: Scope,
    /// Keeps clusters whose status is one of these (empty: any).
    pub statuses: Vec<Status>,
    /// Keeps clusters of this template uuid.
    pub cluster_template_id: Option<String>,
    /// Keeps the clusters with one of these uuids (empty: any).
    pub uuids: Vec<String>,
}

impl ClusterFilter {
    /// Every cluster the scope sees.
    pub fn scope(scope: Scope) -> ClusterFilter {
        ClusterFilter {
            scope,
            ..ClusterFilter::default()
        }
    }

    pub(crate) fn cond(&self) -> Result<Cond> {
        let mut c = Cond::default();
        c.scope(&self.scope, true)?;
        if !self.statuses.is_empty() {
            let names: Vec<&str> = self.statuses.iter().map(|s| s.as_str()).collect();
            let (part, args) = in_list("status", &names);
            c.add(part, args);
        }
        if let Some(t) = &self.cluster_template_id {
            c.add("cluster_template_id = ?", [Arg::from(t)]);
        }
        if !self.uuids.is_empty() {
            let (part, args) = in_list("uuid", &self.uuids);
            c.add(part, args);
        }
        Ok(c)
    }
}

impl Queries<'_> {
    /// The cluster with the database id.
    pub async fn get_cluster_by_id(&mut self, id: i64, scope: &Scope) -> Result<Cluster> {
        let mut c = ClusterFilter::scope(scope.clone()).cond()?;
        c.add("id = ?", [Arg::Int(id)]);
        self.get_one(&TABLE, c).await
    }

    /// The cluster with `uuid`.
    pub async fn get_cluster_by_uuid(&mut self, uuid: &str, scope: &Scope) -> Result<Cluster> {
        let mut c = ClusterFilter::scope(scope.clone()).cond()?;
        c.add("uuid = ?", [Arg::from(uuid)]);
        self.get_one(&TABLE, c).await
    }

    /// Every cluster in scope whose name matches (case-insensitively and
    /// ignoring trailing spaces, as on MariaDB), by id; more than one is a
    /// 409 for the caller.
    pub async fn get_clusters_by_name(
        &mut self,
        name: &str,
        scope: &Scope,
    ) -> Result<Vec<Cluster>> {
        let mut c = ClusterFilter::scope(scope.clone()).cond()?;
        c.add(
            (self.dialect().sql().name_equals)("name"),
            [Arg::from(name)],
        );
        self.all(&TABLE, c, "id ASC", None).await
    }

    /// Lists clusters with Magnum's pagination.
    pub async fn list_clusters(
        &mut self,
        f: &ClusterFilter,
        o: &ListOptions,
    ) -> Result<Vec<Cluster>> {
        let c = f.cond()?;
        self.list(&TABLE, &TABLE.all(), c, o).await
    }

    /// Counts the clusters of the filter (quota: the caller's scope, every
    /// status).
    pub async fn count_clusters(&mut self, f: &ClusterFilter) -> Result<i64> {
        let c = f.cond()?;
        self.count("cluster", c).await
    }

    /// The number of clusters and the sum of `node_count` over the
    /// nodegroups (masters included) of one project, or of every project
    /// when `project_id` is `None` (`GET /v1/stats`).
    pub async fn cluster_stats(&mut self, project_id: Option<&str>) -> Result<(i64, i64)> {
        let mut c = Cond::default();
        if let Some(p) = project_id {
            c.add("project_id = ?", [Arg::from(p)]);
        }
        let clusters = self.count("cluster", c.clone()).await?;
        let sum = (self.dialect().sql().sum)("node_count");
        let sql = format!("SELECT {sum} FROM {}{}", quote("nodegroup"), c.sql());
        let nodes = self.scalar("nodegroup", &sql, c.args).await?;
        Ok((clusters, nodes))
    }

    /// Inserts `v` with Magnum's client-side defaults (`floating_ip_enabled`
    /// true, `master_lb_enabled` false, `labels` and `health_status_reason`
    /// `{}`) and sets its id and `created_at`. A duplicate uuid →
    /// [`super::Error::Duplicate`].
    pub async fn create_cluster(&mut self, v: &mut Cluster) -> Result<()> {
        default_bool(&mut v.floating_ip_enabled, true);
        default_bool(&mut v.master_lb_enabled, false);
        v.labels.get_or_insert_with(Default::default);
        v.health_status_reason.get_or_insert_with(Default::default);
        self.insert(&TABLE, v).await
    }

    /// Writes the named columns of `v` and sets `updated_at`.
    pub async fn update_cluster(&mut self, v: &mut Cluster, cols: &[&str]) -> Result<()> {
        self.update(&TABLE, v, cols).await
    }

    /// Sets the status, `status_reason` and `updated_at` of the cluster
    /// with `uuid` in one statement (no read before it);
    /// [`super::Error::NotFound`] when there is no such cluster.
    pub async fn set_cluster_status(
        &mut self,
        uuid: &str,
        status: Status,
        reason: Option<&str>,
    ) -> Result<()> {
        let now = self.now();
        let sql = format!(
            "UPDATE {} SET {} = ?, {} = ?, {} = ? WHERE uuid = ?",
            quote("cluster"),
            quote("status"),
            quote("status_reason"),
            quote("updated_at")
        );
        let args = vec![
            Arg::from(status.as_str()),
            reason.map_or(Arg::Null(Kind::Text), Arg::from),
            Arg::Time(now),
            Arg::from(uuid),
        ];
        let done = self.write("update cluster".into(), &sql, args).await?;
        if done.rows_affected == 0 {
            return Err(super::Error::NotFound("update cluster".into()));
        }
        Ok(())
    }

    /// Deletes the cluster with `uuid` (its nodegroups stay; see
    /// [`Queries::delete_cluster_cascade`]).
    pub async fn delete_cluster(&mut self, uuid: &str) -> Result<()> {
        let mut c = Cond::default();
        c.add("uuid = ?", [Arg::from(uuid)]);
        self.delete_one("cluster", c).await
    }

    /// Deletes the clusters with these uuids and their nodegroups in two
    /// statements (none: nothing). Call it inside [`super::Db::in_tx`].
    pub async fn delete_clusters_cascade(&mut self, uuids: &[String]) -> Result<()> {
        if uuids.is_empty() {
            return Ok(());
        }
        let mut ng = Cond::default();
        let (part, args) = in_list("cluster_id", uuids);
        ng.add(part, args);
        self.delete_where("nodegroup", ng).await?;
        let mut cl = Cond::default();
        let (part, args) = in_list("uuid", uuids);
        cl.add(part, args);
        self.delete_where("cluster", cl).await?;
        Ok(())
    }

    /// Deletes the cluster with `uuid` and its nodegroups, as Magnum's
    /// `destroy_cluster` does. Call it inside [`super::Db::in_tx`] so both go
    /// together.
    pub async fn delete_cluster_cascade(&mut self, uuid: &str) -> Result<()> {
        self.delete_nodegroups_of_cluster(uuid).await?;
        self.delete_cluster(uuid).await
    }
}
