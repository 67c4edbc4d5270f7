//! `GET /v1/stats`: how many clusters and nodes a project (or the whole
//! cloud) has (logic.md §7).

use super::Conductor;
use super::error::Result;

/// The answer of `GET /v1/stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// The cluster rows, every status.
    pub clusters: i64,
    /// The sum of `node_count` over the nodegroup rows, masters included.
    pub nodes: i64,
}

impl Conductor {
    /// The clusters and nodes of `project_id`, or of every project when
    /// `None`.
    ///
    /// Magnum: magnum/db/sqlalchemy/api.py:221-236.
    pub async fn cluster_stats(&self, project_id: Option<&str>) -> Result<Stats> {
        let (clusters, nodes) = self.db().q().cluster_stats(project_id).await?;
        Ok(Stats { clusters, nodes })
    }
}

#[cfg(test)]
mod tests {
    use magnum_domain::models::NodeGroup;

    use super::Stats;
    use crate::testing::TestConductor;

    /// Go `TestClusterStats`: one cluster of p1 with a master and three
    /// workers.
    #[tokio::test]
    async fn clusters_and_nodes_of_a_project_or_of_all() {
        let t = TestConductor::new().await;
        let cl = t.add_cluster().await;
        let mut q = t.db.q();
        for (i, (name, n)) in [("default-master", 1), ("default-worker", 3)]
            .into_iter()
            .enumerate()
        {
            let mut ng = NodeGroup {
                uuid: format!("a1000000-0000-4000-8000-00000000000{i}"),
                name: name.into(),
                cluster_id: cl.uuid.clone(),
                project_id: "p1".into(),
                node_count: Some(n),
                ..NodeGroup::default()
            };
            q.create_nodegroup(&mut ng).await.unwrap();
        }
        for (project, want) in [(Some("p1"), (1, 4)), (None, (1, 4)), (Some("p2"), (0, 0))] {
            let got = t.conductor.cluster_stats(project).await.unwrap();
            let want = Stats {
                clusters: want.0,
                nodes: want.1,
            };
            assert_eq!(got, want, "{project:?}");
        }
    }
}
