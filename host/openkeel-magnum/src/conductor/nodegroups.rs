//! Nodegroups of a cluster (magnum/api/controllers/v1/nodegroup.py,
//! magnum/conductor/handlers/nodegroup_conductor.py): the lookups the API
//! makes (the cluster, then the nodegroup inside it, by id, uuid or name),
//! the checks that need other parts (the template's image, the flavor's
//! root disk) and the row changes of create, update and delete with the
//! conductor's state guards.

use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup};
use magnum_domain::status::{can_create_node_group, can_update_node_group};
use magnum_domain::{MagnumError, RequestContext, Status};

use super::Conductor;
use super::error::{Error, Result};
use super::lookup::{self, Ident, Kind};
use crate::db::{self, ListOptions, NodeGroupFilter, Queries, Scope, TemplateScope};

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

/// Whether `s` is an integer as Python's `strutils.is_int_like` sees it
/// (`str(int(s)) == s`).
fn is_int_like(s: &str) -> Option<i64> {
    s.parse::<i64>().ok().filter(|n| n.to_string() == s)
}

impl Conductor {
    /// The cluster a nodegroup route names, by uuid or name, in the
    /// caller's scope (all projects when the handler set
    /// [`RequestContext::all_projects`] for an admin).
    pub async fn nodegroup_cluster(&self, ctx: &RequestContext, ident: &str) -> Result<Cluster> {
        let scope = lookup::scope(ctx);
        let mut q = self.db().q();
        match Ident::uuid_or_name(ident) {
            Ident::Uuid(u) => {
                lookup::found(Kind::Cluster, ident, q.get_cluster_by_uuid(u, &scope).await)
            }
            _ => lookup::single(
                Kind::Cluster,
                ident,
                q.get_clusters_by_name(ident, &scope).await,
            ),
        }
    }

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
        let Some(scope) = nodegroup_scope(ctx) else {
            return Ok(Vec::new());
        };
        let mut q = self.db().q();
        if let Some(m) = page.marker.as_deref() {
            find_nodegroup(&mut q, cluster_uuid, m, &scope).await?;
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

    /// Whether a nodegroup of the cluster (any project) has exactly this
    /// name, as Magnum compares the names of `cluster.nodegroups`.
    pub async fn nodegroup_name_used(&self, cluster_uuid: &str, name: &str) -> Result<bool> {
        name_used(&mut self.db().q(), cluster_uuid, name).await
    }

    /// The template a cluster was built from (any project: the cluster's
    /// reference is trusted); gone → 404.
    pub async fn template_of(&self, cl: &Cluster) -> Result<ClusterTemplate> {
        let scope = TemplateScope::new(Scope::ALL_PROJECTS);
        lookup::found(
            Kind::ClusterTemplate,
            &cl.cluster_template_id,
            self.db()
                .q()
                .get_cluster_template_by_uuid(&cl.cluster_template_id, &scope)
                .await,
        )
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
    /// cluster `UPDATE_IN_PROGRESS`, in one transaction. A status sent by
    /// the client that the conductor refuses is a 409 before anything is
    /// written; a name taken meanwhile is 409 `NodeGroupAlreadyExists`.
    /// Returns the stored row.
    ///
    /// Magnum: magnum/conductor/handlers/nodegroup_conductor.py:68-90.
    pub async fn create_nodegroup(&self, cl: &Cluster, ng: NodeGroup) -> Result<NodeGroup> {
        if !can_create_node_group(ng.status) {
            let s = ng.status.unwrap_or(Status::CreateFailed);
            return Err(state_conflict("nodegroup_create", s).into());
        }
        let (cluster_uuid, cluster_name) = (cl.uuid.as_str(), cl.name.as_str());
        self.db()
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
                        return Err(exists().into());
                    }
                    match q.create_nodegroup(&mut row).await {
                        Ok(()) => {}
                        Err(db::Error::Duplicate { .. }) => return Err(exists().into()),
                        Err(e) => return Err(e.into()),
                    }
                    cur.status = Some(Status::UpdateInProgress);
                    q.update_cluster(&mut cur, &["status"]).await?;
                    Ok(row)
                })
            })
            .await
    }

    /// Writes the patched columns of `ng` (a subset of
    /// [`NODEGROUP_PATCH_COLUMNS`]) with the nodegroup and its cluster
    /// `UPDATE_IN_PROGRESS`; a nodegroup whose stored status the conductor
    /// refuses is a 409 and changes nothing. Returns the saved row.
    ///
    /// Magnum: magnum/conductor/handlers/nodegroup_conductor.py:92-113.
    pub async fn update_nodegroup(
        &self,
        cl: &Cluster,
        ng: &NodeGroup,
        cols: &[&str],
    ) -> Result<NodeGroup> {
        if let Some(c) = cols.iter().find(|c| !NODEGROUP_PATCH_COLUMNS.contains(c)) {
            return Err(Error::Internal(anyhow::anyhow!(
                "update nodegroup: column {c} is not patchable"
            )));
        }
        let cluster_uuid = cl.uuid.as_str();
        self.db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut q = tx.for_update();
                    let mut cur = lock_nodegroup(&mut q, cluster_uuid, &ng.uuid).await?;
                    if !can_update_node_group(cur.status) {
                        let s = cur.status.unwrap_or(Status::UpdateFailed);
                        return Err(state_conflict("nodegroup_update", s).into());
                    }
                    cur.min_node_count = ng.min_node_count;
                    cur.max_node_count = ng.max_node_count;
                    cur.node_labels = ng.node_labels.clone();
                    cur.node_taints = ng.node_taints.clone();
                    cur.status = Some(Status::UpdateInProgress);
                    let mut write: Vec<&str> = cols.to_vec();
                    write.push("status");
                    q.update_nodegroup(&mut cur, &write).await?;
                    let mut c = lock_cluster(&mut q, cluster_uuid).await?;
                    c.status = Some(Status::UpdateInProgress);
                    q.update_cluster(&mut c, &["status"]).await?;
                    Ok(cur)
                })
            })
            .await
    }

    /// Starts deleting a non-default nodegroup (a default one is 400): it
    /// goes `DELETE_IN_PROGRESS` and its cluster `UPDATE_IN_PROGRESS`; the
    /// row goes when the driver reports the deletion done. There is no
    /// state guard. Returns the saved row.
    ///
    /// Magnum: magnum/conductor/handlers/nodegroup_conductor.py:115-133.
    pub async fn delete_nodegroup(&self, cl: &Cluster, ng: &NodeGroup) -> Result<NodeGroup> {
        if ng.is_default == Some(true) {
            return Err(MagnumError::deleting_default_ng_not_supported().into());
        }
        let cluster_uuid = cl.uuid.as_str();
        self.db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut q = tx.for_update();
                    let mut cur = lock_nodegroup(&mut q, cluster_uuid, &ng.uuid).await?;
                    cur.status = Some(Status::DeleteInProgress);
                    q.update_nodegroup(&mut cur, &["status"]).await?;
                    let mut c = lock_cluster(&mut q, cluster_uuid).await?;
                    c.status = Some(Status::UpdateInProgress);
                    q.update_cluster(&mut c, &["status"]).await?;
                    Ok(cur)
                })
            })
            .await
    }
}

/// [`Conductor::get_nodegroup`] on `q`.
async fn find_nodegroup(
    q: &mut Queries<'_>,
    cluster_uuid: &str,
    ident: &str,
    scope: &Scope,
) -> Result<NodeGroup> {
    if let Some(id) = is_int_like(ident) {
        return lookup::found(
            Kind::NodeGroup,
            ident,
            q.get_nodegroup_by_id(cluster_uuid, id, scope).await,
        );
    }
    match Ident::uuid_or_name(ident) {
        Ident::Uuid(u) => lookup::found(
            Kind::NodeGroup,
            ident,
            q.get_nodegroup_by_uuid(cluster_uuid, u, scope).await,
        ),
        _ => lookup::single(
            Kind::NodeGroup,
            ident,
            q.get_nodegroups_by_name(cluster_uuid, ident, scope).await,
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

/// The cluster row, read for update; gone → 404.
async fn lock_cluster(q: &mut Queries<'_>, uuid: &str) -> Result<Cluster> {
    lookup::found(
        Kind::Cluster,
        uuid,
        q.get_cluster_by_uuid(uuid, &Scope::ALL_PROJECTS).await,
    )
}

/// The nodegroup row, read for update; gone → 404.
async fn lock_nodegroup(q: &mut Queries<'_>, cluster_uuid: &str, uuid: &str) -> Result<NodeGroup> {
    lookup::found(
        Kind::NodeGroup,
        uuid,
        q.get_nodegroup_by_uuid(cluster_uuid, uuid, &Scope::ALL_PROJECTS)
            .await,
    )
}

#[cfg(test)]
mod tests;
