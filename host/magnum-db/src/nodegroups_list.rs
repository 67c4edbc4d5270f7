//! The nodegroup read of the cluster list views: only what a cluster list
//! shows of its nodegroups (role and node count, and the addresses for the
//! detail view).

use std::collections::HashMap;

use magnum_domain::models::NodeGroup;

use super::Result;
use super::exec::Kind;
use super::queries::{Cond, Queries, in_list, quote};

impl Queries<'_> {
    /// [`Queries::list_nodegroups_of_clusters`] for the cluster list views:
    /// it reads only `cluster_id`, `role` and `node_count` (and
    /// `node_addresses` when `with_addresses`) of the nodegroups of several
    /// clusters, in one query, by cluster uuid, each in id order. The other
    /// fields of the returned nodegroups are left at their defaults.
    pub async fn list_nodegroup_sizes_of_clusters(
        &mut self,
        cluster_ids: &[String],
        with_addresses: bool,
    ) -> Result<HashMap<String, Vec<NodeGroup>>> {
        let mut out: HashMap<String, Vec<NodeGroup>> = HashMap::with_capacity(cluster_ids.len());
        if cluster_ids.is_empty() {
            return Ok(out);
        }
        let mut c = Cond::default();
        let (part, args) = in_list("cluster_id", cluster_ids);
        c.add(part, args);
        let mut kinds = vec![Kind::Text, Kind::Text, Kind::Int];
        let mut cols = "cluster_id, role, node_count".to_string();
        if with_addresses {
            cols.push_str(", node_addresses");
            kinds.push(Kind::Text);
        }
        let mut sql = format!(
            "SELECT {cols} FROM {}{} ORDER BY id ASC",
            quote("nodegroup"),
            c.sql()
        );
        if self.lock {
            sql.push_str(self.dialect().sql().for_update);
        }
        let mut r = self.rows("nodegroup", &sql, c.args, &kinds).await?;
        while !r.is_empty() {
            let mut ng = NodeGroup {
                cluster_id: r.string()?,
                role: r.text()?,
                node_count: r.int()?,
                ..NodeGroup::default()
            };
            if with_addresses {
                ng.node_addresses = r.json_list()?;
            }
            out.entry(ng.cluster_id.clone()).or_default().push(ng);
        }
        Ok(out)
    }
}
