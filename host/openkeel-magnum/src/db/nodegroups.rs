//! `nodegroup`: the node groups of a cluster (by cluster uuid), with
//! Magnum's project scoping (nodegroups have no `user_id`).

use std::collections::HashMap;

use magnum_domain::models::NodeGroup;

use super::Result;
use super::columns::{self as c, Col, Reader, col};
use super::exec::{Arg, Kind};
use super::queries::{Cond, ListOptions, Queries, Scope, Table, default_bool, in_list};

const COLS: &[Col] = &[
    col("created_at", Kind::Time),
    col("updated_at", Kind::Time),
    col("uuid", Kind::Text),
    col("name", Kind::Text),
    col("cluster_id", Kind::Text),
    col("project_id", Kind::Text),
    col("docker_volume_size", Kind::Int),
    col("labels", Kind::Text),
    col("flavor_id", Kind::Text),
    col("image_id", Kind::Text),
    col("node_addresses", Kind::Text),
    col("node_count", Kind::Int),
    col("max_node_count", Kind::Int),
    col("min_node_count", Kind::Int),
    col("role", Kind::Text),
    col("is_default", Kind::Bool),
    col("stack_id", Kind::Text),
    col("status", Kind::Text),
    col("status_reason", Kind::Text),
    col("version", Kind::Text),
    col("node_labels", Kind::Text),
    col("node_taints", Kind::Text),
];

fn read(r: &mut Reader) -> Result<NodeGroup> {
    Ok(NodeGroup {
        id: r.id()?,
        created_at: r.time()?,
        updated_at: r.opt_time()?,
        uuid: r.string()?,
        name: r.string()?,
        cluster_id: r.string()?,
        project_id: r.string()?,
        docker_volume_size: r.int()?,
        labels: r.json_map()?,
        flavor_id: r.text()?,
        image_id: r.text()?,
        node_addresses: r.json_list()?,
        node_count: r.int()?,
        max_node_count: r.int()?,
        min_node_count: r.int()?,
        role: r.text()?,
        is_default: r.bool()?,
        stack_id: r.text()?,
        status: r.status()?,
        status_reason: r.text()?,
        version: r.text()?,
        node_labels: r.json_map()?,
        node_taints: r.json_taints()?,
    })
}

fn write(v: &NodeGroup) -> Vec<Arg> {
    vec![
        c::time(v.created_at),
        c::opt_time(v.updated_at),
        c::string(&v.uuid),
        c::string(&v.name),
        c::string(&v.cluster_id),
        c::string(&v.project_id),
        c::int(v.docker_volume_size),
        c::json_map(&v.labels),
        c::text(&v.flavor_id),
        c::text(&v.image_id),
        c::json_list(&v.node_addresses),
        c::int(v.node_count),
        c::int(v.max_node_count),
        c::int(v.min_node_count),
        c::text(&v.role),
        c::bool(v.is_default),
        c::text(&v.stack_id),
        c::status(v.status),
        c::text(&v.status_reason),
        c::text(&v.version),
        c::json_map(&v.node_labels),
        c::json_taints(&v.node_taints),
    ]
}

static TABLE: Table<NodeGroup> = Table {
    name: "nodegroup",
    cols: COLS,
    marker_col: "uuid",
    read,
    write,
    id: |v| &mut v.id,
    created_at: |v| &mut v.created_at,
    updated_at: |v| &mut v.updated_at,
};

/// Selects the nodegroups of one cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeGroupFilter {
    /// The cluster's uuid (required).
    pub cluster_id: String,
    /// Keeps nodegroups of that project (non-admin callers).
    pub project_id: Option<String>,
    /// Keeps nodegroups with exactly that role.
    pub role: Option<String>,
    /// Keeps default (or non-default) nodegroups.
    pub is_default: Option<bool>,
}

impl NodeGroupFilter {
    /// Every nodegroup of the cluster.
    pub fn cluster(cluster_id: impl Into<String>) -> NodeGroupFilter {
        NodeGroupFilter {
            cluster_id: cluster_id.into(),
            ..NodeGroupFilter::default()
        }
    }

    fn cond(&self) -> Cond {
        let mut c = Cond::default();
        c.add("cluster_id = ?", [Arg::from(&self.cluster_id)]);
        if let Some(p) = &self.project_id {
            c.add("project_id = ?", [Arg::from(p)]);
        }
        if let Some(r) = &self.role {
            c.add("role = ?", [Arg::from(r)]);
        }
        match self.is_default {
            Some(true) => c.add("is_default = TRUE", []),
            Some(false) => c.add("is_default = FALSE", []),
            None => {}
        }
        c
    }
}

/// The nodegroups of the cluster the caller may see: non-admin callers
/// see their project's only.
fn scoped(cluster_id: &str, scope: &Scope) -> Result<Cond> {
    let mut c = NodeGroupFilter::cluster(cluster_id).cond();
    c.scope(scope, false)?;
    Ok(c)
}

impl Queries<'_> {
    /// The nodegroup of the cluster with the database id.
    pub async fn get_nodegroup_by_id(
        &mut self,
        cluster_id: &str,
        id: i64,
        scope: &Scope,
    ) -> Result<NodeGroup> {
        let mut c = scoped(cluster_id, scope)?;
        c.add("id = ?", [Arg::Int(id)]);
        self.get_one(&TABLE, c).await
    }

    /// The nodegroup of the cluster with `uuid`.
    pub async fn get_nodegroup_by_uuid(
        &mut self,
        cluster_id: &str,
        uuid: &str,
        scope: &Scope,
    ) -> Result<NodeGroup> {
        let mut c = scoped(cluster_id, scope)?;
        c.add("uuid = ?", [Arg::from(uuid)]);
        self.get_one(&TABLE, c).await
    }

    /// The nodegroups of the cluster whose name matches (case-insensitively,
    /// as on MariaDB), by id.
    pub async fn get_nodegroups_by_name(
        &mut self,
        cluster_id: &str,
        name: &str,
        scope: &Scope,
    ) -> Result<Vec<NodeGroup>> {
        let mut c = scoped(cluster_id, scope)?;
        c.add(
            (self.dialect().sql().name_equals)("name"),
            [Arg::from(name)],
        );
        self.all(&TABLE, c, "id ASC", None).await
    }

    /// Lists the nodegroups of a cluster with Magnum's pagination.
    pub async fn list_nodegroups(
        &mut self,
        f: &NodeGroupFilter,
        o: &ListOptions,
    ) -> Result<Vec<NodeGroup>> {
        self.list(&TABLE, &TABLE.all(), f.cond(), o).await
    }

    /// The nodegroups of several clusters in one query, by cluster uuid,
    /// each in id order.
    pub async fn list_nodegroups_of_clusters(
        &mut self,
        cluster_ids: &[String],
    ) -> Result<HashMap<String, Vec<NodeGroup>>> {
        let mut out: HashMap<String, Vec<NodeGroup>> = HashMap::new();
        if cluster_ids.is_empty() {
            return Ok(out);
        }
        let mut c = Cond::default();
        let (part, args) = in_list("cluster_id", cluster_ids);
        c.add(part, args);
        for ng in self.all(&TABLE, c, "id ASC", None).await? {
            out.entry(ng.cluster_id.clone()).or_default().push(ng);
        }
        Ok(out)
    }

    /// Counts the nodegroups of the filter.
    pub async fn count_nodegroups(&mut self, f: &NodeGroupFilter) -> Result<i64> {
        self.count("nodegroup", f.cond()).await
    }

    /// Inserts `v` with Magnum's client-side defaults (`is_default` false;
    /// `labels`, `node_labels` `{}`; `node_addresses`, `node_taints` `[]`)
    /// and sets its id and `created_at`. A name already used in the cluster
    /// → [`super::Error::Duplicate`].
    pub async fn create_nodegroup(&mut self, v: &mut NodeGroup) -> Result<()> {
        default_bool(&mut v.is_default, false);
        v.labels.get_or_insert_with(Default::default);
        v.node_labels.get_or_insert_with(Default::default);
        v.node_addresses.get_or_insert_with(Vec::new);
        v.node_taints.get_or_insert_with(Vec::new);
        self.insert(&TABLE, v).await
    }

    /// Writes the named columns of `v` and sets `updated_at`.
    pub async fn update_nodegroup(&mut self, v: &mut NodeGroup, cols: &[&str]) -> Result<()> {
        self.update(&TABLE, v, cols).await
    }

    /// Deletes the nodegroup with `uuid`.
    pub async fn delete_nodegroup(&mut self, uuid: &str) -> Result<()> {
        let mut c = Cond::default();
        c.add("uuid = ?", [Arg::from(uuid)]);
        self.delete_one("nodegroup", c).await
    }

    /// Deletes every nodegroup of the cluster `cluster_id` and returns how
    /// many there were.
    pub async fn delete_nodegroups_of_cluster(&mut self, cluster_id: &str) -> Result<u64> {
        let mut c = Cond::default();
        c.add("cluster_id = ?", [Arg::from(cluster_id)]);
        self.delete_where("nodegroup", c).await
    }
}
