//! What the certificate use cases start and end with (the cluster a request
//! names is found by `Conductor::get_cluster`): reading the rows a driver works on,
//! choosing the cluster's driver, and writing back what the driver answered
//! (or the failure of the operation).

use driver_host::{CallContext, CallError, ClusterState, Credentials, Driver, Update};
use magnum_domain::models::ClusterTemplate;
use magnum_domain::{MagnumError, RequestContext, Status};

use super::Conductor;
use super::error::{Error, Result};
use crate::db::{self, ListOptions, NodeGroupFilter, Scope, TemplateScope};

/// The cluster columns a driver's update may change.
pub(crate) const DRIVER_CLUSTER_COLUMNS: &[&str] = &[
    "name",
    "cluster_template_id",
    "api_address",
    "stack_id",
    "status",
    "discovery_url",
    "status_reason",
    "ca_cert_ref",
    "magnum_cert_ref",
    "create_timeout",
    "coe_version",
    "container_version",
    "keypair",
    "docker_volume_size",
    "labels",
    "master_flavor_id",
    "flavor_id",
    "health_status",
    "health_status_reason",
    "fixed_network",
    "fixed_subnet",
    "floating_ip_enabled",
    "master_lb_enabled",
    "etcd_ca_cert_ref",
    "front_proxy_ca_cert_ref",
];

/// The nodegroup columns a driver's update may change.
pub(crate) const DRIVER_NODEGROUP_COLUMNS: &[&str] = &[
    "name",
    "docker_volume_size",
    "labels",
    "flavor_id",
    "image_id",
    "node_addresses",
    "node_count",
    "max_node_count",
    "min_node_count",
    "role",
    "is_default",
    "stack_id",
    "status",
    "status_reason",
    "version",
    "node_labels",
    "node_taints",
];

/// An unexpected failure: `context`, then its cause (neither carries a
/// secret).
pub(crate) fn failure(context: impl std::fmt::Display, cause: impl std::fmt::Display) -> Error {
    Error::Internal(anyhow::anyhow!("{context}: {cause}"))
}

/// The context of a driver call made for `ctx`'s request.
pub(crate) fn call_context(ctx: &RequestContext) -> CallContext {
    CallContext {
        credentials: Credentials::from_request(ctx),
        request_id: ctx.request_id.clone(),
    }
}

/// A driver call's error as the use case's: a client error goes back to
/// the caller as it is; a failure or a fault is a 500.
pub(crate) fn driver_error(e: CallError) -> Error {
    match e {
        CallError::Client(m) => Error::Client(m),
        other => failure("driver call", other),
    }
}

impl Conductor {
    /// The driver's view of a cluster: its row, its template (in any
    /// project) and its nodegroups.
    pub(crate) async fn driver_view(&self, uuid: &str) -> Result<ClusterState> {
        let mut q = self.db().q();
        let cluster = match q.get_cluster_by_uuid(uuid, &Scope::ALL_PROJECTS).await {
            Ok(c) => c,
            Err(db::Error::NotFound(_)) => return Err(MagnumError::cluster_not_found(uuid).into()),
            Err(e) => return Err(failure(format!("get cluster {uuid}"), e)),
        };
        let template = match q
            .get_cluster_template_by_uuid(
                &cluster.cluster_template_id,
                &TemplateScope::new(Scope::ALL_PROJECTS),
            )
            .await
        {
            Ok(t) => t,
            Err(db::Error::NotFound(_)) => {
                return Err(
                    MagnumError::cluster_template_not_found(&cluster.cluster_template_id).into(),
                );
            }
            Err(e) => {
                return Err(failure(format!("get the template of cluster {uuid}"), e));
            }
        };
        let nodegroups = q
            .list_nodegroups(&NodeGroupFilter::cluster(uuid), &ListOptions::default())
            .await
            .map_err(|e| failure(format!("list the nodegroups of cluster {uuid}"), e))?;
        Ok(ClusterState {
            cluster,
            template,
            nodegroups,
        })
    }

    /// The driver of a template: its stored driver name when set, else the
    /// enabled driver providing its (server_type, cluster_distro, coe).
    ///
    /// Magnum: magnum/drivers/common/driver.py `get_driver_for_cluster`.
    pub(crate) fn template_driver(&self, t: &ClusterTemplate) -> Result<Driver> {
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        self.drivers()
            .registry()
            .get(
                &s(&t.server_type),
                &s(&t.cluster_distro),
                &s(&t.coe),
                t.driver.as_deref(),
            )
            .cloned()
            .map_err(Error::Client)
    }

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
                        tx.q()
                            .update_cluster(&mut c, DRIVER_CLUSTER_COLUMNS)
                            .await?;
                    }
                    for ng in &upd.nodegroups {
                        let mut ng = ng.clone();
                        if ng.id == 0 {
                            tx.q().create_nodegroup(&mut ng).await?;
                            continue;
                        }
                        match tx
                            .q()
                            .update_nodegroup(&mut ng, DRIVER_NODEGROUP_COLUMNS)
                            .await
                        {
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
