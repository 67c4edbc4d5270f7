//! `nodegroup`: the node groups of a cluster (by cluster uuid), with
//! Magnum's project scoping (nodegroups have no `user_id`).

use std::collections::HashMap;

use magnum_domain::models::NodeGroup;

use super::Result;
use super::columns::table;
use super::queries::{Columns, Cond, ListOptions, Queries, Scope, default_bool};

table! {
    /// The `nodegroup` table.
    static TABLE: NodeGroup = "nodegroup", marker "uuid" {
        created_at: time,
        updated_at: opt_time,
        uuid: string,
        name: string,
        cluster_id: string,
        project_id: string,
        docker_volume_size: int,
        labels: json_map,
        flavor_id: text,
        image_id: text,
        node_addresses: json_list,
        node_count: int,
        max_node_count: int,
        min_node_count: int,
        role: text,
        is_default: bool,
        stack_id: text,
        status: status,
        status_reason: text,
        version: text,
        node_labels: json_map,
        node_taints: json_taints,
    }
}

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
        let mut c = Cond::eq("cluster_id", &self.cluster_id);
        if let Some(p) = &self.project_id {
            c.add_eq("project_id", p);
        }
        if let Some(r) = &self.role {
            c.add_eq("role", r);
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
        self.get_by(&TABLE, scoped(cluster_id, scope)?, "id", id)
            .await
    }

    /// The nodegroup of the cluster with `uuid`.
    pub async fn get_nodegroup_by_uuid(
        &mut self,
        cluster_id: &str,
        uuid: &str,
        scope: &Scope,
    ) -> Result<NodeGroup> {
        self.get_by(&TABLE, scoped(cluster_id, scope)?, "uuid", uuid)
            .await
    }

    /// The nodegroups of the cluster whose name matches (case-insensitively,
    /// as on MariaDB), by id.
    pub async fn get_nodegroups_by_name(
        &mut self,
        cluster_id: &str,
        name: &str,
        scope: &Scope,
    ) -> Result<Vec<NodeGroup>> {
        self.all_named(&TABLE, scoped(cluster_id, scope)?, name)
            .await
    }

    /// Lists the nodegroups of a cluster with Magnum's pagination.
    pub async fn list_nodegroups(
        &mut self,
        f: &NodeGroupFilter,
        o: &ListOptions,
    ) -> Result<Vec<NodeGroup>> {
        self.list(&TABLE, Columns::All, f.cond(), o).await
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
        c.add_in("cluster_id", cluster_ids);
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
        self.delete_by("nodegroup", "uuid", uuid).await
    }

    /// Deletes every nodegroup of the cluster `cluster_id` and returns how
    /// many there were.
    pub async fn delete_nodegroups_of_cluster(&mut self, cluster_id: &str) -> Result<u64> {
        self.delete_where("nodegroup", Cond::eq("cluster_id", cluster_id))
            .await
    }
}

#[cfg(test)]
mod tests {
    use magnum_domain::Status;

    use crate::exec::{Arg, Kind};
    use crate::testing::{Check, dialect_tests, migrated, new_nodegroup, string_map};
    use crate::{Dialect, Error, ListOptions, NodeGroupFilter, Scope};

    dialect_tests!(nodegroups);

    /// Go `TestNodeGroups`.
    async fn nodegroups(d: Dialect) {
        let db = migrated(d).await;
        let mut master = new_nodegroup("c1", "default-master", "p1");
        master.role = Some("master".into());
        master.is_default = Some(true);
        let mut worker = new_nodegroup("c1", "default-worker", "p1");
        worker.is_default = Some(true);
        worker.node_addresses = Some(vec!["10.0.0.21".into(), "10.0.0.22".into()]);
        let mut gpu = new_nodegroup("c1", "gpu-pool", "p1");
        gpu.role = Some("gpu".into());
        gpu.node_labels = Some(string_map(&[("nvidia.com/gpu.present", "true")]));
        gpu.node_taints = Some(vec![string_map(&[
            ("key", "nvidia.com/gpu"),
            ("value", "true"),
            ("effect", "NoSchedule"),
        ])]);
        let mut elsewhere = new_nodegroup("c2", "default-worker", "p2");
        for ng in [&mut master, &mut worker, &mut gpu, &mut elsewhere] {
            db.q().create_nodegroup(ng).await.check("create");
        }
        let mut r = db
            .q()
            .rows(
                "raw",
                "SELECT node_taints, node_addresses, labels FROM nodegroup WHERE id = ?",
                vec![Arg::Int(gpu.id)],
                &[Kind::Text; 3],
            )
            .await
            .check("raw");
        assert_eq!(
            r.string().check("taints"),
            r#"[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]"#
        );
        assert_eq!(r.string().check("addresses"), "[]");
        assert_eq!(r.string().check("labels"), "{}");
        let p1 = Scope::project("p1");
        let got = db
            .q()
            .get_nodegroup_by_uuid("c1", &gpu.uuid, &p1)
            .await
            .check("get");
        assert_eq!(got, gpu, "read back differs");
        for (cluster, scope, what) in [
            ("c2", Scope::ALL_PROJECTS, "another cluster"),
            ("c1", Scope::project("p2"), "another project"),
            ("c1", Scope::user("u"), "a caller without project"),
        ] {
            let r = db
                .q()
                .get_nodegroup_by_uuid(cluster, &gpu.uuid, &scope)
                .await;
            assert!(
                matches!(r, Err(Error::NotFound(_))),
                "nodegroup of {what}: {r:?}"
            );
        }
        let got = db
            .q()
            .get_nodegroup_by_id("c1", worker.id, &Scope::ALL_PROJECTS)
            .await
            .check("by id");
        assert_eq!(got.name, "default-worker");
        let got = db
            .q()
            .get_nodegroups_by_name("c1", "GPU-Pool", &p1)
            .await
            .check("by name");
        assert_eq!(got.len(), 1);
        let got = db
            .q()
            .get_nodegroups_by_name("c1", "gpu-pool", &Scope::project("p2"))
            .await
            .check("by name");
        assert_eq!(got.len(), 0);

        for (name, f, want) in [
            (
                "cluster",
                NodeGroupFilter::cluster("c1"),
                vec!["default-master", "default-worker", "gpu-pool"],
            ),
            (
                "role",
                NodeGroupFilter {
                    role: Some("master".into()),
                    ..NodeGroupFilter::cluster("c1")
                },
                vec!["default-master"],
            ),
            (
                "project",
                NodeGroupFilter {
                    project_id: Some("p2".into()),
                    ..NodeGroupFilter::cluster("c1")
                },
                vec![],
            ),
            (
                "non-default",
                NodeGroupFilter {
                    is_default: Some(false),
                    ..NodeGroupFilter::cluster("c1")
                },
                vec!["gpu-pool"],
            ),
            (
                "default",
                NodeGroupFilter {
                    is_default: Some(true),
                    ..NodeGroupFilter::cluster("c1")
                },
                vec!["default-master", "default-worker"],
            ),
        ] {
            let rows = db
                .q()
                .list_nodegroups(&f, &ListOptions::default())
                .await
                .check(name);
            let got: Vec<&str> = rows.iter().map(|n| n.name.as_str()).collect();
            assert_eq!(got, want, "{name}");
        }
        let page = ListOptions {
            sort_key: Some("role".into()),
            sort_dir: Some("desc".into()),
            limit: Some(1),
            marker: Some(worker.uuid.clone()),
        };
        let rows = db
            .q()
            .list_nodegroups(&NodeGroupFilter::cluster("c1"), &page)
            .await
            .check("page");
        let got: Vec<&str> = rows.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(got, ["default-master"], "page after worker by role desc");
        let ids = ["c1", "c2", "c3"].map(String::from);
        let by_cluster = db
            .q()
            .list_nodegroups_of_clusters(&ids)
            .await
            .check("of clusters");
        assert_eq!(
            (
                by_cluster["c1"].len(),
                by_cluster["c2"].len(),
                by_cluster.contains_key("c3")
            ),
            (3, 1, false)
        );

        // (cluster_id, name) is unique; MariaDB and SQLite compare names
        // without case, PostgreSQL (Magnum's migrated schema) with case.
        let mut dup = new_nodegroup("c1", "gpu-pool", "p1");
        let r = db.q().create_nodegroup(&mut dup).await;
        assert!(
            matches!(r, Err(Error::Duplicate { .. })),
            "duplicate name: {r:?}"
        );
        let mut dup_case = new_nodegroup("c1", "GPU-POOL", "p1");
        let r = db.q().create_nodegroup(&mut dup_case).await;
        if d == Dialect::Postgres {
            assert!(
                r.is_ok(),
                "PostgreSQL refused a name differing in case: {r:?}"
            );
        } else {
            assert!(
                matches!(r, Err(Error::Duplicate { .. })),
                "name differing in case: {r:?}"
            );
        }

        gpu.node_count = Some(3);
        gpu.status = Some(Status::UpdateInProgress);
        db.q()
            .update_nodegroup(&mut gpu, &["node_count", "status"])
            .await
            .check("update");
        let got = db
            .q()
            .get_nodegroup_by_uuid("c1", &gpu.uuid, &p1)
            .await
            .check("get");
        assert_eq!(
            (got.node_count, got.status),
            (Some(3), Some(Status::UpdateInProgress))
        );
        assert!(got.updated_at.is_some());
        assert_eq!(
            db.q()
                .count_nodegroups(&NodeGroupFilter::cluster("c1"))
                .await
                .check("count"),
            if d == Dialect::Postgres { 4 } else { 3 }
        );
        db.q().delete_nodegroup(&gpu.uuid).await.check("delete");
        let n = db
            .q()
            .delete_nodegroups_of_cluster("c1")
            .await
            .check("delete of cluster");
        assert!(n >= 2, "delete_nodegroups_of_cluster = {n}");
        let r = db.q().delete_nodegroup(&gpu.uuid).await;
        assert!(matches!(r, Err(Error::NotFound(_))), "{r:?}");
    }
}
