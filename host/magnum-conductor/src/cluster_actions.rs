//! The cluster actions: resize (a nodegroup's node count) and upgrade (to
//! another template).
//!
//! Magnum: magnum/api/controllers/v1/cluster_actions.py,
//! magnum/conductor/handlers/cluster_conductor.py (`cluster_resize`,
//! `cluster_upgrade`).

use driver_host::{CallError, Resize, Upgrade};
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup};
use magnum_domain::transitions::Operation;
use magnum_domain::validation::{self, ROLE_MASTER};
use magnum_domain::{MagnumError, RequestContext, Status};

use super::clusters::{Saved, call_ctx, call_error, default_worker, detached, internal, own_scope};
use super::driver_answers::Call;
use super::nodegroups::{find_nodegroup, lock_cluster, lock_nodegroup};
use super::{Conductor, Error, Result};
use crate::db::{Scope, TemplateScope};
use crate::notify::{Action, Outcome};

/// `POST /v1/clusters/{id}/actions/resize`.
#[derive(Clone, Debug, Default)]
pub struct ClusterResize {
    /// The nodegroup's id, uuid or name; `None` (or empty) is the default
    /// worker.
    pub nodegroup: Option<String>,
    pub node_count: i32,
    /// Servers to remove first, as the client sent them.
    pub nodes_to_remove: Vec<String>,
}

/// `POST /v1/clusters/{id}/actions/upgrade`.
#[derive(Clone, Debug, Default)]
pub struct ClusterUpgrade {
    /// The template to upgrade to, already resolved.
    pub template: ClusterTemplate,
    /// `max_batch_size` (0 when absent).
    pub max_batch_size: i32,
    /// The nodegroup's id, uuid or name; `None` (or empty) is the default
    /// worker.
    pub nodegroup: Option<String>,
}

/// What the transaction of a resize decided.
enum ResizeStep {
    Refused(Box<Cluster>),
    Driver {
        old_count: Option<i32>,
        old_status: Option<Status>,
    },
}

impl Conductor {
    /// The nodegroup an action names: the default worker when `ident` is
    /// absent or empty, else the cluster's nodegroup with that id, uuid or
    /// name (admins see every project's).
    async fn action_nodegroup(
        &self,
        ctx: &RequestContext,
        cl: &Cluster,
        ident: Option<&str>,
    ) -> Result<NodeGroup> {
        match ident.filter(|i| !i.is_empty()) {
            None => {
                let ngs = self.cluster_nodegroups(&cl.uuid).await?;
                default_worker(&ngs).cloned().ok_or_else(|| {
                    internal(format!(
                        "cluster {} has no default worker nodegroup",
                        cl.uuid
                    ))
                })
            }
            Some(ident) => {
                let scope = if ctx.is_admin {
                    Scope::ALL_PROJECTS
                } else {
                    own_scope(ctx)
                };
                find_nodegroup(&mut self.db().q(), &cl.uuid, ident, &scope).await
            }
        }
    }

    /// The template of a cluster, whatever its project.
    pub async fn template_of(&self, cl: &Cluster) -> Result<ClusterTemplate> {
        let all = TemplateScope::new(Scope::ALL_PROJECTS);
        super::clusters::template_of(&mut self.db().q(), cl, &all).await
    }

    /// A resize after the `cluster:resize` policy (cluster_actions.py:99-141,
    /// cluster_conductor.py:193-264): the nodegroup (404/409), the min/max
    /// bounds of a worker nodegroup (400), the driver's master rule for the
    /// master nodegroup (400), the state guard (409); then the nodegroup's
    /// node count is stored, UPDATE_IN_PROGRESS, and the driver called. A
    /// driver failure restores the count and leaves the cluster and the
    /// nodegroup UPDATE_FAILED.
    ///
    /// Deviation: Magnum refuses a resize in a wrong status silently after
    /// its 202; this answers 409.
    pub async fn resize_cluster(
        &self,
        ctx: &RequestContext,
        cl: &Cluster,
        input: ClusterResize,
    ) -> Result<()> {
        let ng = self
            .action_nodegroup(ctx, cl, input.nodegroup.as_deref())
            .await?;
        if ng.role.as_deref() != Some(ROLE_MASTER) {
            validation::validate_resize_bounds(
                &ng.name,
                i64::from(input.node_count),
                i64::from(ng.min_node_count.unwrap_or(0)),
                ng.max_node_count.map(i64::from),
            )?;
        } else {
            let t = self.template_of(cl).await?;
            let drv = self.driver_of(&t)?;
            drv.validate_master_resize(input.node_count)
                .await
                .map_err(|e| call_error(&drv, e))?;
        }
        let (uuid, ng_uuid, count) = (cl.uuid.as_str(), ng.uuid.as_str(), input.node_count);
        let step = self
            .db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut q = tx.for_update();
                    let cur = lock_cluster(&mut q, uuid).await?;
                    if !cur.status.is_some_and(Status::can_resize) {
                        return Ok::<_, Error>(ResizeStep::Refused(Box::new(cur)));
                    }
                    let mut row = lock_nodegroup(&mut q, uuid, ng_uuid).await?;
                    let (old_count, old_status) = (row.node_count, row.status);
                    row.node_count = Some(count);
                    row.status = Some(Status::UpdateInProgress);
                    q.update_nodegroup(&mut row, &["node_count", "status"])
                        .await?;
                    Ok(ResizeStep::Driver {
                        old_count,
                        old_status,
                    })
                })
            })
            .await?;
        let (old_count, old_status) = match step {
            ResizeStep::Refused(cur) => {
                self.notify_refused(ctx, &cur).await;
                return Err(match cur.status {
                    Some(s) => MagnumError::state_guard_conflict("Resizing", s).into(),
                    None => MagnumError::not_supported_message(
                        "Resizing a cluster when status is \"None\" is not supported.",
                    )
                    .with_status(409)
                    .into(),
                });
            }
            ResizeStep::Driver {
                old_count,
                old_status,
            } => (old_count, old_status),
        };
        tracing::info!(cluster_uuid = %uuid, nodegroup_uuid = %ng_uuid, node_count = count, "cluster resize");
        let req = Resize {
            nodegroup_uuid: ng.uuid.clone(),
            node_count: count,
            nodes_to_remove: input.nodes_to_remove,
        };
        let (c, ctx, uuid, ng_uuid) = (self.clone(), ctx.clone(), cl.uuid.clone(), ng.uuid);
        detached(async move {
            c.run_update(
                &ctx,
                &uuid,
                &ng_uuid,
                old_count,
                Some(old_status),
                "resize-cluster",
                move |drv, cctx, st| {
                    Box::pin(async move { drv.resize_cluster(cctx, st, &req).await })
                },
            )
            .await
        })
        .await
    }

    /// An upgrade after the `cluster:upgrade` policy
    /// (cluster_actions.py:155-194, cluster_conductor.py:266-327): the
    /// nodegroup; a non-default nodegroup may only move to the cluster's
    /// own template (409); the state guard (400, as Magnum's RPC call
    /// answers); then the driver. A client error of the driver is returned
    /// without changing any row; another failure marks the cluster
    /// UPDATE_FAILED and is returned as Magnum's error saying that the
    /// driver failed and why.
    pub async fn upgrade_cluster(
        &self,
        ctx: &RequestContext,
        cl: &Cluster,
        input: ClusterUpgrade,
    ) -> Result<()> {
        let named = input.nodegroup.as_deref().filter(|n| !n.is_empty());
        let ng = self.action_nodegroup(ctx, cl, named).await?;
        if ng.is_default != Some(true) && input.template.uuid != cl.cluster_template_id {
            let current = self.template_of(cl).await?;
            return Err(
                MagnumError::node_group_upgrade_template_mismatch(&ng.name, &current.name).into(),
            );
        }
        let (c, ctx, uuid) = (self.clone(), ctx.clone(), cl.uuid.clone());
        let ng_uuid = named.map(|_| ng.uuid.clone());
        detached(async move { c.run_upgrade(&ctx, &uuid, input, ng_uuid).await }).await
    }

    async fn run_upgrade(
        &self,
        ctx: &RequestContext,
        uuid: &str,
        input: ClusterUpgrade,
        nodegroup_uuid: Option<String>,
    ) -> Result<()> {
        let _busy = self.mark_busy(uuid);
        let st = self.cluster_state(uuid).await?;
        let status = st.cluster.status;
        if !status.is_some_and(Status::can_upgrade) {
            self.notify_state(ctx, &st, Action::Update, Outcome::Failure);
            return Err(match status {
                Some(s) => MagnumError::upgrade_status_not_supported(s).into(),
                None => {
                    MagnumError::not_supported("Upgrading a cluster when status is \"None\"").into()
                }
            });
        }
        let drv = self.driver_of(&st.template)?;
        // The driver's own checks of the upgrade (a version it cannot move
        // to): its client error is the caller's 400, and nothing changes.
        drv.validate_upgrade(&call_ctx(ctx), &st, &input.template)
            .await
            .map_err(|e| call_error(&drv, e))?;
        self.notify_state(ctx, &st, Action::Update, Outcome::Pending);
        let req = Upgrade {
            template: input.template.clone(),
            max_batch_size: input.max_batch_size,
            nodegroup_uuid,
        };
        let answer = drv.upgrade_cluster(&call_ctx(ctx), &st, &req).await;
        let call = Call::new(Operation::UpdateCluster, "upgrade-cluster")
            .to_template(&input.template.uuid);
        let upd = match self.gate(&drv, call, &st, answer) {
            Ok(upd) => upd,
            // A driver's refusal (NotSupported) changes nothing.
            Err(CallError::Client(e)) => return Err(e.into()),
            Err(e) => {
                let reason = e.status_reason();
                tracing::error!(cluster_uuid = %uuid, error = %reason, "cluster upgrade failed");
                self.keep_after_failure(&st, &e).await;
                if let Some((cl, ngs)) = self.mark_failed(uuid, Status::UpdateFailed, &reason).await
                {
                    self.notifier()
                        .cluster_event(ctx, &cl, &ngs, Action::Update, Outcome::Failure);
                }
                // Magnum's upgrade is a synchronous call: its caller learns
                // why.
                return Err(call_error(&drv, e));
            }
        };
        tracing::info!(cluster_uuid = %uuid, template = %input.template.uuid, "cluster upgrade");
        match self.save_update(&upd, &st).await? {
            Saved::Stale => {
                // The driver acted on rows that changed meanwhile.
                self.save_stack_id(&upd).await;
                Err(MagnumError::operation_in_progress(&st.cluster.name).into())
            }
            _ => Ok(()),
        }
    }
}
