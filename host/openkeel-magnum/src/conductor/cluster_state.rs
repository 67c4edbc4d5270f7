//! What the certificate use cases end with: writing back what a driver
//! answered, or the failure of the operation. (They find the cluster with
//! `Conductor::get_cluster`, read the driver's rows with `cluster_state` and
//! choose the driver with `driver_of`, as every cluster use case does.)

use driver_host::Update;
use magnum_domain::Status;

use super::Conductor;
use super::clusters::{NODEGROUP_SAVE_COLS, SAVE_COLS};
use super::error::{Error, Result};
use crate::db::{self, ListOptions, NodeGroupFilter};

/// An unexpected failure: `context`, then its cause (neither carries a
/// secret).
pub(crate) fn failure(context: impl std::fmt::Display, cause: impl std::fmt::Display) -> Error {
    Error::Internal(anyhow::anyhow!("{context}: {cause}"))
}

impl Conductor {
    /// Writes what a driver call returned, in one transaction: the cluster
    /// row, changed or new nodegroups, deleted nodegroups.
    pub(crate) async fn save_driver_answer(&self, upd: &Update) -> Result<()> {
        if !upd.changed() {
            return Ok(());
        }
        self.db()
            .in_tx(|tx| {
                Box::pin(async move {
                    if let Some(c) = &upd.cluster {
                        let mut c = c.clone();
                        c.labels.get_or_insert_with(Default::default);
                        c.health_status_reason.get_or_insert_with(Default::default);
                        tx.q().update_cluster(&mut c, SAVE_COLS).await?;
                    }
                    for ng in &upd.nodegroups {
                        let mut ng = ng.clone();
                        if ng.id == 0 {
                            tx.q().create_nodegroup(&mut ng).await?;
                            continue;
                        }
                        match tx.q().update_nodegroup(&mut ng, NODEGROUP_SAVE_COLS).await {
                            Ok(()) | Err(db::Error::NotFound(_)) => {}
                            Err(e) => return Err(e),
                        }
                    }
                    for uuid in &upd.deleted_nodegroups {
                        match tx.q().delete_nodegroup(uuid).await {
                            Ok(()) | Err(db::Error::NotFound(_)) => {}
                            Err(e) => return Err(e),
                        }
                    }
                    Ok(())
                })
            })
            .await
            .map_err(Error::from)
    }

    /// Sets the cluster, and its nodegroups in progress, to `status` with
    /// `reason`. A failure to write is logged: the operation has already
    /// failed and its error is what the caller gets.
    pub(crate) async fn mark_cluster_failed(&self, uuid: &str, status: Status, reason: &str) {
        let r = self
            .db()
            .in_tx(|tx| {
                Box::pin(async move {
                    tx.q()
                        .set_cluster_status(uuid, status, Some(reason))
                        .await?;
                    let ngs = tx
                        .q()
                        .list_nodegroups(&NodeGroupFilter::cluster(uuid), &ListOptions::default())
                        .await?;
                    for mut ng in ngs {
                        if ng.status.is_some_and(Status::is_in_progress) {
                            ng.status = Some(status);
                            ng.status_reason = Some(reason.to_owned());
                            tx.q()
                                .update_nodegroup(&mut ng, &["status", "status_reason"])
                                .await?;
                        }
                    }
                    Ok::<_, db::Error>(())
                })
            })
            .await;
        if let Err(e) = r {
            tracing::error!(cluster_uuid = uuid, error = %e, "mark the cluster failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use magnum_domain::RequestContext;
    use magnum_domain::models::{Cluster, ClusterTemplate};

    use super::*;
    use crate::conductor::testing::TestConductor;

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
