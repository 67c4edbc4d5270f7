//! The failure of a certificate use case. (They find the cluster with
//! `Conductor::get_cluster`, read the driver's rows with `cluster_state`,
//! choose the driver with `driver_of` and save with the compare-and-swap
//! `save_update` / `save_answer` / `mark_failed_if`, as every cluster use
//! case does.)

use super::error::Error;

/// An unexpected failure: `context`, then its cause (neither carries a
/// secret).
pub(crate) fn failure(context: impl std::fmt::Display, cause: impl std::fmt::Display) -> Error {
    Error::Internal(anyhow::anyhow!("{context}: {cause}"))
}

#[cfg(test)]
mod tests {
    use magnum_domain::RequestContext;
    use magnum_domain::models::{Cluster, ClusterTemplate};

    use crate::error::Result;
    use crate::testing::TestConductor;

    fn ctx(project: &str, user: &str) -> RequestContext {
        RequestContext {
            project_id: project.into(),
            user_id: user.into(),
            ..RequestContext::default()
        }
    }

    #[tokio::test]
    async fn clusters_are_found_by_uuid_or_name_in_the_callers_project() {
        let t = TestConductor::new().await;
        let mut q = t.db.q();
        let mut tpl = ClusterTemplate {
            uuid: "10000000-0000-4000-8000-000000000001".into(),
            name: "t".into(),
            project_id: "p1".into(),
            ..ClusterTemplate::default()
        };
        q.create_cluster_template(&mut tpl).await.unwrap();
        for (i, (name, project)) in [("c1", "p1"), ("dup", "p1"), ("dup", "p1"), ("c1", "p2")]
            .into_iter()
            .enumerate()
        {
            let mut c = Cluster {
                uuid: format!("20000000-0000-4000-8000-00000000000{i}"),
                name: name.into(),
                project_id: project.into(),
                cluster_template_id: tpl.uuid.clone(),
                ..Cluster::default()
            };
            q.create_cluster(&mut c).await.unwrap();
        }
        let c = &t.conductor;
        let p1 = ctx("p1", "u");
        let got = c.get_cluster(&p1, "c1").await.unwrap();
        assert_eq!(got.uuid, "20000000-0000-4000-8000-000000000000");
        let got = c
            .get_cluster(&p1, "20000000-0000-4000-8000-000000000000")
            .await
            .unwrap();
        assert_eq!(got.name, "c1");
        let status = |r: Result<Cluster>| {
            r.unwrap_err()
                .client()
                .map(|e| (e.status, e.message.clone()))
        };
        assert_eq!(
            status(c.get_cluster(&p1, "dup").await),
            Some((
                409,
                "Multiple clusters exist with same name. Please use the cluster uuid instead."
                    .into()
            ))
        );
        assert_eq!(
            status(
                c.get_cluster(&p1, "20000000-0000-4000-8000-000000000003")
                    .await
            ),
            Some((
                404,
                "Cluster 20000000-0000-4000-8000-000000000003 could not be found.".into()
            ))
        );
        assert_eq!(
            status(c.get_cluster(&ctx("p3", "u"), "c1").await),
            Some((404, "Cluster c1 could not be found.".into()))
        );
    }
}
