//! Nodegroups of a cluster (magnum/api/controllers/v1/nodegroup.py,
//! magnum/conductor/handlers/nodegroup_conductor.py): the lookups the API
//! makes (the cluster, then the nodegroup inside it, by id, uuid or name),
//! the checks that need other parts (the flavor's root disk), and create,
//! update and delete: the rows first (with the conductor's state guards),
//! then the cluster's driver with the request's credentials, whose
//! failure leaves the nodegroup `*_FAILED` and the cluster
//! `UPDATE_FAILED` with the driver's reason.

use magnum_domain::models::{Cluster, NodeGroup};
use magnum_domain::status::{can_create_node_group, can_update_node_group};
use magnum_domain::transitions::Operation;
use magnum_domain::{MagnumError, RequestContext, Status};

use super::Conductor;
use super::clusters::{call_ctx, call_error, detached};
use super::driver_answers::Call;
use super::error::{Error, Result};
use super::lookup::{self, Ident, Kind};
use crate::db::{self, ListOptions, NodeGroupFilter, Queries, Reader, Scope};

/// The nodegroup columns a PATCH may change.
pub const NODEGROUP_PATCH_COLUMNS: &[&str] = &[
    "min_node_count",
    "max_node_count",
    "node_labels",
    "node_taints",
];

/// The scope of nodegroup queries: admins see every project's nodegroups,
/// others their project's (Magnum's nodegroup queries filter on
/// `project_id` unless the context is admin); a token without a project
/// matches nothing (nodegroups have no user).
fn nodegroup_scope(ctx: &RequestContext) -> Option<Scope> {
    if ctx.is_admin {
        Some(Scope::ALL_PROJECTS)
    } else if ctx.project_id.is_empty() {
        None
    } else {
        Some(Scope::project(&ctx.project_id))
    }
}

/// The synchronous refusal of a nodegroup operation in a status the
/// conductor does not accept.
///
/// Deviation: Magnum casts the operation and its conductor drops it
/// silently (NotSupported, logged only); we answer 409 with that text
/// before writing anything.
fn state_conflict(op: &str, status: Status) -> MagnumError {
    MagnumError::new(
        409,
        "NotSupported",
        format!(
            "{op} when nodegroup status is \"{}\" is not supported.",
            status.as_str()
        ),
    )
}

/// A nodegroup operation of the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Create,
    Update,
    Delete,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Create => "nodegroup_create",
            Op::Update => "nodegroup_update",
            Op::Delete => "nodegroup_delete",
        }
    }

    /// The operation, for the gate of the driver's answer.
    fn operation(self) -> Operation {
        match self {
            Op::Create => Operation::CreateNodeGroup,
            Op::Update => Operation::UpdateNodeGroup,
            Op::Delete => Operation::DeleteNodeGroup,
        }
    }

    /// The driver's function.
    fn function(self) -> &'static str {
        match self {
            Op::Create => "create-nodegroup",
            Op::Update => "update-nodegroup",
            Op::Delete => "delete-nodegroup",
        }
    }

    /// The nodegroup's status when the driver failed the operation.
    fn failed(self) -> Status {
        match self {
            Op::Create => Status::CreateFailed,
            Op::Update => Status::UpdateFailed,
            Op::Delete => Status::DeleteFailed,
        }
    }
}

impl Conductor {
    /// The nodegroup of the cluster `cluster_uuid` the caller names the way
    /// Magnum's `NodeGroup.get` reads it: an integer-like identifier is a
    /// database id, a UUID-like one a uuid, anything else a name. Not found
    /// → 404 `Nodegroup <ident> could not be found.`, a name used twice →
    /// 409.
    pub async fn get_nodegroup(
        &self,
        ctx: &RequestContext,
        cluster_uuid: &str,
        ident: &str,
    ) -> Result<NodeGroup> {
        let Some(scope) = nodegroup_scope(ctx) else {
            return Err(Kind::NodeGroup.not_found(ident).into());
        };
        find_nodegroup(&mut self.db().q(), cluster_uuid, ident, &scope).await
    }

    /// The nodegroups of one cluster the caller sees, optionally of exactly
    /// `role`, with Magnum's pagination: the marker is looked up in the
    /// cluster first (404 naming it), an unknown sort key is 400.
    pub async fn list_nodegroups(
        &self,
        ctx: &RequestContext,
        cluster_uuid: &str,
        role: Option<&str>,
        page: &ListOptions,
    ) -> Result<Vec<NodeGroup>> {
        nodegroup_page(&mut self.db().q(), ctx, cluster_uuid, role, page).await
    }

    /// [`Conductor::list_nodegroups`] on the connection `rd` holds.
    pub async fn list_nodegroups_on(
        &self,
        rd: &mut Reader,
        ctx: &RequestContext,
        cluster_uuid: &str,
        role: Option<&str>,
        page: &ListOptions,
    ) -> Result<Vec<NodeGroup>> {
        nodegroup_page(&mut rd.q(), ctx, cluster_uuid, role, page).await
    }

    /// Whether a nodegroup of the cluster (any project) has exactly this
    /// name, as Magnum compares the names of `cluster.nodegroups`.
    pub async fn nodegroup_name_used(&self, cluster_uuid: &str, name: &str) -> Result<bool> {
        name_used(&mut self.db().q(), cluster_uuid, name).await
    }

    /// Magnum's `validate_flavor_root_volume_size`: unless the cluster
    /// label `boot_volume_size` is positive, the flavor must exist (a
    /// missing one is looked up as `None`) and have a root disk (400
    /// `FlavorZeroRootVolumeNotSupported`).
    ///
    /// Magnum: magnum/api/attr_validator.py:181-201.
    pub async fn check_flavor_root_volume(
        &self,
        ctx: &RequestContext,
        flavor_id: Option<&str>,
        cluster_labels: &magnum_domain::models::StringMap,
    ) -> Result<()> {
        let boot = match cluster_labels.get("boot_volume_size") {
            None => 0,
            // Magnum: strutils.validate_integer raises a ValueError that
            // escapes as a 500 (a 400 here, as every bad input).
            Some(v) => v
                .trim()
                .parse::<i64>()
                .map_err(|_| MagnumError::server_error("boot_volume_size must be an integer"))?,
        };
        if boot > 0 {
            return Ok(());
        }
        let flavor = self
            .lookup()
            .flavor(ctx, flavor_id.unwrap_or("None"))
            .await?;
        if flavor.disk == 0 {
            return Err(MagnumError::flavor_zero_root_volume_not_supported().into());
        }
        Ok(())
    }

    /// Stores a nodegroup the API built (validated, with its uuid,
    /// cluster_id and project_id) as `CREATE_IN_PROGRESS` and puts its
    /// cluster `UPDATE_IN_PROGRESS`, in one transaction, then starts it
    /// with the cluster's driver. A status sent by the client that the
    /// conductor refuses is a 409 before anything is written; a name taken
    /// meanwhile is 409 `NodeGroupAlreadyExists`. Returns the stored row
    /// (as inserted, before the driver's answer).
    ///
    /// Magnum: magnum/conductor/handlers/nodegroup_conductor.py:68-90.
    pub async fn create_nodegroup(
        &self,
        ctx: &RequestContext,
        cl: &Cluster,
        ng: NodeGroup,
    ) -> Result<NodeGroup> {
        if !can_create_node_group(ng.status) {
            let s = ng.status.unwrap_or(Status::CreateFailed);
            return Err(state_conflict("nodegroup_create", s).into());
        }
        // The driver's own checks of the new nodegroup (contract 1.1's
        // `validate-nodegroup`): its client error is the caller's 400, and
        // nothing is written. Without a driver for the template there is
        // nothing to ask; the create fails in its job, as before.
        let st = self.cluster_state(&cl.uuid).await?;
        if let Ok(drv) = self.driver_of(&st.template) {
            drv.validate_nodegroup(&call_ctx(ctx), &st, &ng)
                .await
                .map_err(|e| call_error(&drv, e))?;
        }
        let (cluster_uuid, cluster_name) = (cl.uuid.as_str(), cl.name.as_str());
        let row: NodeGroup = self
            .db()
            .in_tx(|tx| {
                let mut row = NodeGroup {
                    status: Some(Status::CreateInProgress),
                    ..ng.clone()
                };
                Box::pin(async move {
                    let mut q = tx.for_update();
                    let mut cur = lock_cluster(&mut q, cluster_uuid).await?;
                    let name = row.name.clone();
                    let exists = || MagnumError::node_group_already_exists(&name, cluster_name);
                    if name_used(&mut q, cluster_uuid, &name).await? {
                        return Err(Error::from(exists()));
                    }
                    match q.create_nodegroup(&mut row).await {
                        Ok(()) => {}
                        Err(db::Error::Duplicate { .. }) => return Err(Error::from(exists())),
                        Err(e) => return Err(e.into()),
                    }
                    mark_updating(&mut q, &mut cur).await?;
                    Ok(row)
                })
            })
            .await?;
        self.run_nodegroup_op(ctx, cluster_uuid, &row.uuid, Op::Create)
            .await;
        Ok(row)
    }

    /// Writes the patched columns of `ng` (a subset of
    /// [`NODEGROUP_PATCH_COLUMNS`]) with the nodegroup and its cluster
    /// `UPDATE_IN_PROGRESS`; a nodegroup whose stored status the conductor
    /// refuses is a 409 and changes nothing; then the cluster's driver
    /// updates it. Returns the saved row (before the driver's answer).
    ///
    /// Magnum: magnum/conductor/handlers/nodegroup_conductor.py:92-113.
    pub async fn update_nodegroup(
        &self,
        ctx: &RequestContext,
        cl: &Cluster,
        ng: &NodeGroup,
        cols: &[&str],
    ) -> Result<NodeGroup> {
        if let Some(c) = cols.iter().find(|c| !NODEGROUP_PATCH_COLUMNS.contains(c)) {
            return Err(Error::Internal(anyhow::anyhow!(
                "update nodegroup: column {c} is not patchable"
            )));
        }
        self.change_nodegroup(ctx, cl, &ng.uuid, Op::Update, |cur| {
            if !can_update_node_group(cur.status) {
                let s = cur.status.unwrap_or(Status::UpdateFailed);
                return Err(Error::from(state_conflict("nodegroup_update", s)));
            }
            cur.min_node_count = ng.min_node_count;
            cur.max_node_count = ng.max_node_count;
            cur.node_labels = ng.node_labels.clone();
            cur.node_taints = ng.node_taints.clone();
            cur.status = Some(Status::UpdateInProgress);
            let mut write: Vec<&str> = cols.to_vec();
            write.push("status");
            Ok(write)
        })
        .await
    }

    /// Starts deleting a non-default nodegroup (a default one is 400): it
    /// goes `DELETE_IN_PROGRESS` and its cluster `UPDATE_IN_PROGRESS`; the
    /// row goes when the driver reports the deletion done (its answer, or
    /// the status poller later). There is no state guard. Returns the
    /// saved row (before the driver's answer).
    ///
    /// Magnum: magnum/conductor/handlers/nodegroup_conductor.py:115-133.
    pub async fn delete_nodegroup(
        &self,
        ctx: &RequestContext,
        cl: &Cluster,
        ng: &NodeGroup,
    ) -> Result<NodeGroup> {
        if ng.is_default == Some(true) {
            return Err(MagnumError::deleting_default_ng_not_supported().into());
        }
        self.change_nodegroup(ctx, cl, &ng.uuid, Op::Delete, |cur| {
            cur.status = Some(Status::DeleteInProgress);
            Ok(vec!["status"])
        })
        .await
    }

    /// Changes the stored nodegroup `ng_uuid` of `cl` in one transaction:
    /// `change` sets its fields (or refuses) and names the columns it set,
    /// and the cluster goes `UPDATE_IN_PROGRESS`, as in Magnum's conductor;
    /// then the cluster's driver runs `op` on it. Returns the saved row
    /// (before the driver's answer).
    async fn change_nodegroup<'c>(
        &self,
        ctx: &RequestContext,
        cl: &Cluster,
        ng_uuid: &str,
        op: Op,
        change: impl Fn(&mut NodeGroup) -> Result<Vec<&'c str>> + Sync,
    ) -> Result<NodeGroup> {
        let cluster_uuid = cl.uuid.as_str();
        let change = &change;
        let row: NodeGroup = self
            .db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut q = tx.for_update();
                    let mut cur = lock_nodegroup(&mut q, cluster_uuid, ng_uuid).await?;
                    let cols = change(&mut cur)?;
                    q.update_nodegroup(&mut cur, &cols).await?;
                    let mut c = lock_cluster(&mut q, cluster_uuid).await?;
                    mark_updating(&mut q, &mut c).await?;
                    Ok::<_, Error>(cur)
                })
            })
            .await?;
        self.run_nodegroup_op(ctx, cluster_uuid, &row.uuid, op)
            .await;
        Ok(row)
    }

    /// Calls the cluster's driver for a nodegroup operation whose rows are
    /// written and saves its answer (unless the rows changed meanwhile).
    /// Like Magnum's cast, the client's answer does not depend on it: a
    /// failure leaves the nodegroup `*_FAILED` and the cluster
    /// `UPDATE_FAILED` with the reason, and is logged. The call runs on its
    /// own task, so it finishes even when the request is dropped.
    async fn run_nodegroup_op(
        &self,
        ctx: &RequestContext,
        cluster_uuid: &str,
        ng_uuid: &str,
        op: Op,
    ) {
        let (c, ctx) = (self.clone(), ctx.clone());
        let (cluster, ng) = (cluster_uuid.to_string(), ng_uuid.to_string());
        let r = detached(async move {
            let _busy = c.mark_busy(&cluster);
            let st = c.cluster_state(&cluster).await?;
            let Some(row) = st.nodegroup(&ng).cloned() else {
                return Err(Kind::NodeGroup.not_found(&ng).into());
            };
            let drv = c.driver_of(&st.template)?;
            let cctx = call_ctx(&ctx);
            let answer = match op {
                Op::Create => drv.create_nodegroup(&cctx, &st, &row).await,
                Op::Update => drv.update_nodegroup(&cctx, &st, &row).await,
                Op::Delete => drv.delete_nodegroup(&cctx, &st, &row).await,
            };
            let call = Call::new(op.operation(), op.function()).on_nodegroup(&row.uuid);
            match c.gate(&drv, call, &st, answer) {
                Ok(upd) => {
                    c.save_answer(&st, upd).await;
                    Ok(())
                }
                Err(e) => {
                    c.keep_after_failure(&st, &e).await;
                    Err(Error::Internal(anyhow::anyhow!(e.status_reason())))
                }
            }
        })
        .await;
        if let Err(e) = r {
            let reason = match &e {
                Error::Client(m) => m.message.clone(),
                Error::Internal(e) => format!("{e:#}"),
                Error::Db(e) => e.to_string(),
            };
            tracing::error!(cluster_uuid, nodegroup_uuid = ng_uuid, operation = op.name(), error = %reason, "nodegroup operation failed");
            if let Err(e) = self
                .fail_nodegroup_op(cluster_uuid, ng_uuid, op, &reason)
                .await
            {
                tracing::error!(cluster_uuid, nodegroup_uuid = ng_uuid, error = %e, "record nodegroup failure");
            }
        }
    }

    /// Marks the nodegroup `<OP>_FAILED` and its cluster `UPDATE_FAILED`
    /// with `reason`.
    async fn fail_nodegroup_op(
        &self,
        cluster_uuid: &str,
        ng_uuid: &str,
        op: Op,
        reason: &str,
    ) -> Result<()> {
        self.db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut q = tx.for_update();
                    let all = Scope::ALL_PROJECTS;
                    match q.get_nodegroup_by_uuid(cluster_uuid, ng_uuid, &all).await {
                        Ok(mut ng) => {
                            ng.status = Some(op.failed());
                            ng.status_reason = Some(reason.to_string());
                            q.update_nodegroup(&mut ng, &["status", "status_reason"])
                                .await?;
                        }
                        Err(e) if e.is_not_found() => {}
                        Err(e) => return Err(Error::from(e)),
                    }
                    match q.get_cluster_by_uuid(cluster_uuid, &all).await {
                        Ok(mut cl) => {
                            cl.status = Some(Status::UpdateFailed);
                            q.update_cluster(&mut cl, &["status"]).await?;
                            Ok(())
                        }
                        Err(e) if e.is_not_found() => Ok(()),
                        Err(e) => Err(e.into()),
                    }
                })
            })
            .await
    }
}

/// A nodegroup of the cluster `cluster_uuid` as Magnum's `NodeGroup.get`
/// finds it, on `q`: an integer-like ident is a database id, a UUID-like
/// one a uuid, anything else a name (404 NodeGroupNotFound, 409 when a name
/// is used twice).
pub(super) async fn find_nodegroup(
    q: &mut Queries<'_>,
    cluster_uuid: &str,
    ident: &str,
    scope: &Scope,
) -> Result<NodeGroup> {
    let k = Kind::NodeGroup;
    match Ident::id_uuid_or_name(ident) {
        Ident::Id(id) => lookup::found(
            k,
            ident,
            q.get_nodegroup_by_id(cluster_uuid, id, scope).await,
        ),
        Ident::Uuid(u) => lookup::found(
            k,
            ident,
            q.get_nodegroup_by_uuid(cluster_uuid, u, scope).await,
        ),
        Ident::Name(n) => lookup::single(
            k,
            ident,
            q.get_nodegroups_by_name(cluster_uuid, n, scope).await,
        ),
    }
}

async fn name_used(q: &mut Queries<'_>, cluster_uuid: &str, name: &str) -> Result<bool> {
    let filter = NodeGroupFilter {
        cluster_id: cluster_uuid.to_string(),
        ..NodeGroupFilter::default()
    };
    let rows = q.list_nodegroups(&filter, &ListOptions::default()).await?;
    Ok(rows.iter().any(|r| r.name == name))
}

/// Saves the locked `cluster` `UPDATE_IN_PROGRESS`, as every change of
/// one of its nodegroups leaves it.
async fn mark_updating(q: &mut Queries<'_>, cluster: &mut Cluster) -> Result<()> {
    cluster.status = Some(Status::UpdateInProgress);
    q.update_cluster(cluster, &["status"]).await?;
    Ok(())
}

/// The cluster row, read for update; gone → 404.
pub(crate) async fn lock_cluster(q: &mut Queries<'_>, uuid: &str) -> Result<Cluster> {
    lookup::found(
        Kind::Cluster,
        uuid,
        q.get_cluster_by_uuid(uuid, &Scope::ALL_PROJECTS).await,
    )
}

/// The nodegroup row, read for update; gone → 404.
pub(crate) async fn lock_nodegroup(
    q: &mut Queries<'_>,
    cluster_uuid: &str,
    uuid: &str,
) -> Result<NodeGroup> {
    lookup::found(
        Kind::NodeGroup,
        uuid,
        q.get_nodegroup_by_uuid(cluster_uuid, uuid, &Scope::ALL_PROJECTS)
            .await,
    )
}

/// A page of the nodegroups of a cluster the caller may see, read through
/// `q` ([`Conductor::list_nodegroups`]).
async fn nodegroup_page(
    q: &mut Queries<'_>,
    ctx: &RequestContext,
    cluster_uuid: &str,
    role: Option<&str>,
    page: &ListOptions,
) -> Result<Vec<NodeGroup>> {
    let Some(scope) = nodegroup_scope(ctx) else {
        return Ok(Vec::new());
    };
    if let Some(m) = page.marker.as_deref() {
        find_nodegroup(q, cluster_uuid, m, &scope).await?;
    }
    let filter = NodeGroupFilter {
        cluster_id: cluster_uuid.to_string(),
        project_id: (!scope.all_projects).then(|| scope.project_id.clone()),
        role: role.map(str::to_owned),
        is_default: None,
    };
    lookup::page(
        Kind::NodeGroup,
        page,
        q.list_nodegroups(&filter, page).await,
    )
}

#[cfg(test)]
mod tests;
