//! Clusters: lookups and lists with Magnum's scoping, the create (value
//! inheritance from the template, Magnum's validation order, the quota
//! under the lock row, the two default nodegroups), the node count and
//! health PATCH, the delete, and what every driver operation shares: the
//! rows a driver works on, the compare-and-swap save of its answer and the
//! `*_FAILED` marking of a failure.
//!
//! Magnum: magnum/api/controllers/v1/cluster.py,
//! magnum/conductor/handlers/cluster_conductor.py.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::time::Duration;

use driver_host::{CallContext, CallError, ClusterState, Credentials, Driver, Update};
use futures::future::BoxFuture;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use magnum_domain::transitions::Operation;
use magnum_domain::validation::{self, ROLE_MASTER, ROLE_WORKER};
use magnum_domain::{MagnumError, RequestContext, Status};

use super::cluster_templates::template_scope;
use super::driver_answers::{Call, Checked};
use super::lookup::{self, Ident, Kind};
use super::nodegroups::lock_cluster;
use super::openstack_reads::{self, Lookups};
use super::{Conductor, Error, Result};
use crate::db::{
    self, ClusterFilter, ClusterView, ListOptions, NodeGroupFilter, Queries, Reader, Scope,
    TemplateScope,
};
use crate::notify::{Action, Outcome};

/// How long a driver operation started by a request may take, with the
/// writes that follow it. The operation is detached from the request: it
/// finishes even when the client goes away.
pub(crate) const DRIVER_TIMEOUT: Duration = Duration::from_secs(120);

/// The cluster columns a driver's answer may change.
pub(crate) const SAVE_COLS: &[&str] = &[
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

/// The nodegroup columns a driver's answer may change.
pub(crate) const NODEGROUP_SAVE_COLS: &[&str] = &[
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

/// The words of Magnum's name generator (magnum/common/name_generator.py).
const GREEK_LETTERS: [&str; 24] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega",
];

/// `<greek letter>-<1..24>-<kind>`, as Magnum names unnamed resources
/// (`omicron-23-cluster`).
pub fn generate_name(kind: &str) -> String {
    let r = uuid::Uuid::new_v4();
    let b = r.as_bytes();
    let word = GREEK_LETTERS[usize::from(b[0]) % GREEK_LETTERS.len()];
    let n = usize::from(b[1]) % 24 + 1;
    format!("{word}-{n}-{kind}")
}

/// The caller's own rows (its project, or its user when the token has no
/// project), whatever `all_projects` says: what the quota counts.
pub(crate) fn own_scope(ctx: &RequestContext) -> Scope {
    if ctx.project_id.is_empty() {
        Scope::user(&ctx.user_id)
    } else {
        Scope::project(&ctx.project_id)
    }
}

/// 404 ClusterNotFound for a missing row, the error itself otherwise.
pub(crate) fn cluster_not_found(e: db::Error, ident: &str) -> Error {
    if e.is_not_found() {
        MagnumError::cluster_not_found(ident).into()
    } else {
        e.into()
    }
}

/// The template of `cluster` as `scope` sees it; 404
/// ClusterTemplateNotFound when it sees none.
pub(crate) async fn template_of(
    q: &mut Queries<'_>,
    cluster: &Cluster,
    scope: &TemplateScope,
) -> Result<ClusterTemplate> {
    let uuid = &cluster.cluster_template_id;
    match q.get_cluster_template_by_uuid(uuid, scope).await {
        Ok(t) => Ok(t),
        Err(e) if e.is_not_found() => Err(MagnumError::cluster_template_not_found(uuid).into()),
        Err(e) => Err(e.into()),
    }
}

/// What a driver call answers: a future borrowing the call's arguments.
pub(crate) type Answer<'c> = BoxFuture<'c, std::result::Result<Update, CallError>>;

/// A request's call of the cluster's driver: from the driver, the call's
/// context and the rows it reads, the driver's answer.
pub(crate) trait DriverCall:
    for<'c> FnOnce(&'c Driver, &'c CallContext, &'c ClusterState) -> Answer<'c>
{
}

impl<F> DriverCall for F where
    F: for<'c> FnOnce(&'c Driver, &'c CallContext, &'c ClusterState) -> Answer<'c>
{
}

/// The synchronous 409 of an operation refused in `status`.
// Deviation: Magnum answers 202 and drops the operation in the conductor.
fn guard_conflict(operation: &str, status: Option<Status>) -> Error {
    match status {
        Some(s) => MagnumError::state_guard_conflict(operation, s).into(),
        None => MagnumError::not_supported_message(format!(
            "{operation} a cluster when status is \"None\" is not supported."
        ))
        .with_status(409)
        .into(),
    }
}

/// An unexpected failure described by `what` (for the logs, never for
/// clients).
pub(crate) fn internal(what: impl std::fmt::Display) -> Error {
    Error::Internal(anyhow::anyhow!("{what}"))
}

/// The driver's context of a request: the caller's credentials.
pub(crate) fn call_ctx(ctx: &RequestContext) -> CallContext {
    CallContext {
        credentials: Credentials::from_request(ctx),
        request_id: ctx.request_id.clone(),
        now: None,
    }
}

/// A failed synchronous driver call (a validation, a CA rotation's check,
/// an upgrade) as the caller's error: the driver's own client error, or
/// Magnum's error body saying that the driver failed and why (the fault
/// was logged once where it happened).
pub(crate) fn call_error(drv: &Driver, e: CallError) -> Error {
    match e {
        CallError::Client(e) => Error::Client(e),
        CallError::Failed(s) | CallError::FailedAfter { reason: s, .. } => {
            MagnumError::driver_failed(drv.package(), &s).into()
        }
        CallError::Fault(f) => f.client_error().into(),
    }
}

/// A map column, `{}` for NULL.
fn map_or_empty(m: &Option<StringMap>) -> StringMap {
    m.clone().unwrap_or_default()
}

/// One page of a cluster list with what the views need: the nodegroups of
/// every listed cluster (by cluster uuid) and the templates they reference
/// (by template uuid).
#[derive(Clone, Debug, Default)]
pub struct ClusterPage {
    pub clusters: Vec<Cluster>,
    pub nodegroups: HashMap<String, Vec<NodeGroup>>,
    pub templates: HashMap<String, ClusterTemplate>,
}

/// One cluster with its nodegroups and template, for the detail view.
#[derive(Clone, Debug)]
pub struct ClusterDetail {
    pub cluster: Cluster,
    pub nodegroups: Vec<NodeGroup>,
    pub template: ClusterTemplate,
}

/// A cluster create after the API parsed and type-checked the body. `None`
/// is an absent (or null) field.
#[derive(Clone, Debug, Default)]
pub struct ClusterCreate {
    /// The template the request names, already resolved.
    pub template: ClusterTemplate,
    pub name: Option<String>,
    pub keypair: Option<String>,
    pub labels: Option<StringMap>,
    pub merge_labels: bool,
    pub docker_volume_size: Option<i32>,
    pub master_flavor_id: Option<String>,
    pub flavor_id: Option<String>,
    pub fixed_network: Option<String>,
    pub fixed_subnet: Option<String>,
    pub floating_ip_enabled: Option<bool>,
    pub master_lb_enabled: Option<bool>,
    /// Minutes; Magnum's default is 60.
    pub create_timeout: i32,
    pub master_count: i32,
    pub node_count: i32,
    pub health_status: Option<String>,
    pub health_status_reason: Option<StringMap>,
    pub discovery_url: Option<String>,
}

/// A cluster PATCH after the API applied the patch and resolved the node
/// count (spec `api/patch.md` §3).
#[derive(Clone, Debug, Default)]
pub struct ClusterUpdate {
    /// The default worker nodegroup's new node count.
    pub node_count: i32,
    pub health_status: Option<String>,
    pub health_status_reason: Option<StringMap>,
}

/// What [`Conductor::save_update`] did.
#[derive(Clone, Debug)]
pub(crate) enum Saved {
    /// The answer changed nothing.
    Nothing,
    /// Written; the cluster as saved when the answer had one.
    Written(Option<Box<Cluster>>),
    /// The rows changed since they were read: nothing was written.
    Stale,
}

/// A read of [`ListReads`], borrowing its arguments.
pub(crate) type Read<'a, T> = BoxFuture<'a, db::Result<T>>;

/// The reads of a cluster list: three queries per page, whatever its size
/// (plus the marker's). The list views read narrower rows.
pub(crate) trait ListReads: Send {
    fn cluster<'a>(&'a mut self, uuid: &'a str, scope: &'a Scope) -> Read<'a, Cluster>;
    fn clusters<'a>(
        &'a mut self,
        f: &'a ClusterFilter,
        o: &'a ListOptions,
        view: Option<ClusterView>,
    ) -> Read<'a, Vec<Cluster>>;
    fn nodegroups<'a>(
        &'a mut self,
        clusters: &'a [String],
        view: Option<ClusterView>,
    ) -> Read<'a, HashMap<String, Vec<NodeGroup>>>;
    fn templates<'a>(
        &'a mut self,
        uuids: &'a [String],
        scope: &'a TemplateScope,
    ) -> Read<'a, HashMap<String, ClusterTemplate>>;
}

impl ListReads for Queries<'_> {
    fn cluster<'a>(&'a mut self, uuid: &'a str, scope: &'a Scope) -> Read<'a, Cluster> {
        Box::pin(self.get_cluster_by_uuid(uuid, scope))
    }

    fn clusters<'a>(
        &'a mut self,
        f: &'a ClusterFilter,
        o: &'a ListOptions,
        view: Option<ClusterView>,
    ) -> Read<'a, Vec<Cluster>> {
        match view {
            Some(v) => Box::pin(self.list_clusters_view(f, o, v)),
            None => Box::pin(self.list_clusters(f, o)),
        }
    }

    fn nodegroups<'a>(
        &'a mut self,
        clusters: &'a [String],
        view: Option<ClusterView>,
    ) -> Read<'a, HashMap<String, Vec<NodeGroup>>> {
        match view {
            Some(v) => {
                Box::pin(self.list_nodegroup_sizes_of_clusters(clusters, v == ClusterView::Detail))
            }
            None => Box::pin(self.list_nodegroups_of_clusters(clusters)),
        }
    }

    fn templates<'a>(
        &'a mut self,
        uuids: &'a [String],
        scope: &'a TemplateScope,
    ) -> Read<'a, HashMap<String, ClusterTemplate>> {
        Box::pin(self.get_cluster_templates_by_uuids(uuids, scope))
    }
}

/// A list error as Magnum answers it: unknown marker 404, bad sort key or
/// direction 400.
fn list_error(e: db::Error, o: &ListOptions) -> Error {
    match e {
        db::Error::NotFound(_) => {
            MagnumError::cluster_not_found(o.marker.as_deref().unwrap_or("")).into()
        }
        db::Error::InvalidSortKey(k) => MagnumError::invalid_sort_key(&k).into(),
        db::Error::InvalidSortDir(d) => MagnumError::invalid_sort_dir(&d).into(),
        e => e.into(),
    }
}

/// The default worker nodegroup of the cluster: the first default
/// nodegroup (by id) whose role is not master.
pub(crate) fn default_worker(ngs: &[NodeGroup]) -> Option<&NodeGroup> {
    ngs.iter()
        .find(|ng| ng.is_default == Some(true) && ng.role.as_deref() != Some(ROLE_MASTER))
}

/// Reads the default worker nodegroup of a cluster.
async fn read_default_worker(q: &mut Queries<'_>, cluster_uuid: &str) -> Result<NodeGroup> {
    let ngs = q
        .list_nodegroups(
            &NodeGroupFilter::cluster(cluster_uuid),
            &ListOptions::default(),
        )
        .await?;
    default_worker(&ngs).cloned().ok_or_else(|| {
        internal(format!(
            "cluster {cluster_uuid} has no default worker nodegroup"
        ))
    })
}

/// The cluster row of a create request (spec `api/logic.md` §1): the
/// request's values, else the template's.
pub(crate) fn inherit(t: &ClusterTemplate, input: &ClusterCreate) -> Cluster {
    let set = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
    let labels = match &input.labels {
        None => t.labels.clone(),
        Some(l) if l.is_empty() => t.labels.clone(),
        Some(l) if input.merge_labels => {
            let mut m = t.labels.clone().unwrap_or_default();
            m.extend(l.iter().map(|(k, v)| (k.clone(), v.clone())));
            Some(m)
        }
        Some(l) => Some(l.clone()),
    };
    Cluster {
        name: input.name.clone().unwrap_or_default(),
        cluster_template_id: t.uuid.clone(),
        keypair: input.keypair.clone().or_else(|| t.keypair_id.clone()),
        docker_volume_size: input
            .docker_volume_size
            .filter(|n| *n != 0)
            .or(t.docker_volume_size),
        labels: Some(labels.unwrap_or_default()),
        master_flavor_id: set(&input.master_flavor_id).or_else(|| t.master_flavor_id.clone()),
        flavor_id: set(&input.flavor_id).or_else(|| t.flavor_id.clone()),
        fixed_network: set(&input.fixed_network).or_else(|| t.fixed_network.clone()),
        fixed_subnet: set(&input.fixed_subnet).or_else(|| t.fixed_subnet.clone()),
        floating_ip_enabled: input.floating_ip_enabled.or(t.floating_ip_enabled),
        master_lb_enabled: input.master_lb_enabled.or(t.master_lb_enabled),
        create_timeout: Some(input.create_timeout),
        health_status: input.health_status.clone(),
        health_status_reason: Some(input.health_status_reason.clone().unwrap_or_default()),
        discovery_url: input.discovery_url.clone(),
        ..Cluster::default()
    }
}

/// The default master and worker nodegroups of a new cluster
/// (magnum/conductor/utils.py `_get_nodegroup_object`).
pub(crate) fn default_nodegroups(
    t: &ClusterTemplate,
    cl: &Cluster,
    master_count: i32,
    node_count: i32,
) -> (NodeGroup, NodeGroup) {
    let first = |own: &Option<String>, tmpl: &Option<String>| {
        openstack_reads::pick(own, tmpl).map(str::to_string)
    };
    let make = |role: &str, count: i32, flavor: Option<String>| NodeGroup {
        name: format!("default-{role}"),
        cluster_id: cl.uuid.clone(),
        project_id: cl.project_id.clone(),
        role: Some(role.to_string()),
        node_count: Some(count),
        flavor_id: flavor,
        image_id: t.image_id.clone(),
        labels: cl.labels.clone(),
        docker_volume_size: cl.docker_volume_size.or(t.docker_volume_size),
        min_node_count: Some(0),
        is_default: Some(true),
        status: Some(Status::CreateInProgress),
        ..NodeGroup::default()
    };
    let master = make(
        ROLE_MASTER,
        master_count,
        first(&cl.master_flavor_id, &t.master_flavor_id),
    );
    let mut worker = make(ROLE_WORKER, node_count, first(&cl.flavor_id, &t.flavor_id));
    if let Some(n) = cl
        .labels
        .as_ref()
        .and_then(|l| l.get("min_node_count"))
        .and_then(|v| v.trim().parse::<i32>().ok())
    {
        worker.min_node_count = Some(n);
    }
    (master, worker)
}

/// Magnum's `validate_flavor_root_volume_size` for the worker then the
/// master flavor (magnum/api/attr_validator.py:181-201): when the labels'
/// `boot_volume_size` is ≤ 0 (default 0), each flavor must exist (a null
/// flavor is looked up as "None") and have a root disk.
pub(crate) async fn check_flavors(
    l: &mut Lookups<'_>,
    labels: &Option<StringMap>,
    flavors: [&Option<String>; 2],
) -> Result<()> {
    let boot = openstack_reads::boot_volume_size(labels).map_err(MagnumError::server_error)?;
    if boot > 0 {
        return Ok(());
    }
    for f in flavors {
        if l.flavor(openstack_reads::flavor_name(f)).await?.disk == 0 {
            return Err(MagnumError::flavor_zero_root_volume_not_supported().into());
        }
    }
    Ok(())
}

/// `validate_os_resources(T, cluster)` (attr_validator.py:151-169): the
/// cluster's value when set, else the template's, for the image, the
/// flavors, the external network, the fixed network and subnet; then the
/// cluster's keypair.
pub(crate) async fn validate_resources(
    l: &mut Lookups<'_>,
    t: &ClusterTemplate,
    cl: &Cluster,
) -> Result<()> {
    if let Some(image) = t.image_id.as_deref()
        && l.image(image).await?.os_distro.is_none()
    {
        return Err(MagnumError::os_distro_field_not_found(image).into());
    }
    for f in [
        openstack_reads::pick(&cl.flavor_id, &t.flavor_id),
        openstack_reads::pick(&cl.master_flavor_id, &t.master_flavor_id),
    ]
    .into_iter()
    .flatten()
    {
        l.flavor(f).await?;
    }
    if let Some(n) = t.external_network_id.as_deref() {
        l.external_network(n).await?;
    }
    if let Some(n) = openstack_reads::pick(&cl.fixed_network, &t.fixed_network) {
        l.fixed_network(n).await?;
    }
    if let Some(s) = openstack_reads::pick(&cl.fixed_subnet, &t.fixed_subnet) {
        l.fixed_subnet(s).await?;
    }
    if let Some(k) = cl.keypair.as_deref().filter(|k| !k.is_empty()) {
        l.keypair(k).await?;
    }
    Ok(())
}

/// Runs `fut` on its own task, bounded by [`DRIVER_TIMEOUT`]: the rows are
/// already written when a driver operation starts, so it finishes even if
/// the request that started it is dropped.
pub(crate) async fn detached<T, F>(fut: F) -> Result<T>
where
    T: Send + 'static,
    F: Future<Output = Result<T>> + Send + 'static,
{
    match tokio::spawn(tokio::time::timeout(DRIVER_TIMEOUT, fut)).await {
        Ok(Ok(r)) => r,
        Ok(Err(_)) => Err(internal(
            "the driver operation did not finish within 2 minutes",
        )),
        Err(e) => Err(internal(format!("the driver operation failed: {e}"))),
    }
}

/// Marks a cluster as having a driver operation of this process in flight
/// while it lives: the status poller of this process leaves the cluster
/// alone meanwhile.
pub(crate) struct BusyMark {
    conductor: Conductor,
    uuid: String,
}

impl Drop for BusyMark {
    fn drop(&mut self) {
        self.conductor.busy().remove(&self.uuid);
    }
}

/// What the transaction of a PATCH decided.
enum UpdateStep {
    Refused(Box<Cluster>),
    Done,
    Driver {
        worker: String,
        old_count: Option<i32>,
    },
}

impl Conductor {
    fn busy(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // The set stays consistent: nothing panics while holding the lock.
        self.work.busy.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks `uuid` busy; `None` when it already is (the mark held
    /// elsewhere clears it).
    pub(crate) fn mark_busy(&self, uuid: &str) -> Option<BusyMark> {
        self.busy().insert(uuid.to_string()).then(|| BusyMark {
            conductor: self.clone(),
            uuid: uuid.to_string(),
        })
    }

    /// Whether a driver operation of this process is in flight for `uuid`.
    pub(crate) fn is_busy(&self, uuid: &str) -> bool {
        self.busy().contains(uuid)
    }

    /// The driver of a template: its stored driver name when set, else the
    /// one providing (server_type, cluster_distro, coe).
    ///
    /// Deviation: Magnum checks the tuple in the API and then loads the
    /// stored name in the conductor; the stored name serves both.
    pub fn driver_of(&self, t: &ClusterTemplate) -> Result<Driver> {
        self.drivers()
            .registry()
            .get(
                t.server_type.as_deref().unwrap_or(""),
                t.cluster_distro.as_deref().unwrap_or(""),
                t.coe.as_deref().unwrap_or(""),
                t.driver.as_deref(),
            )
            .cloned()
            .map_err(Error::Client)
    }

    /// Looks a cluster up by UUID (when `ident` is UUID-like) or by name,
    /// within the caller's scope ([`lookup::scope`]): none is 404
    /// ClusterNotFound (another project's cluster is invisible, hence 404
    /// too), several names 409.
    ///
    /// Magnum: magnum/api/utils.py:99 (`get_resource`).
    pub async fn get_cluster(&self, ctx: &RequestContext, ident: &str) -> Result<Cluster> {
        find_cluster(&mut self.db().q(), ctx, ident).await
    }

    /// A connection held for the several reads of one request
    /// ([`crate::db::Db::reader`]).
    pub async fn reader(&self) -> Result<Reader> {
        Ok(self.db().reader().await?)
    }

    /// [`Conductor::get_cluster`] on the connection `rd` holds.
    pub async fn get_cluster_on(
        &self,
        rd: &mut Reader,
        ctx: &RequestContext,
        ident: &str,
    ) -> Result<Cluster> {
        find_cluster(&mut rd.q(), ctx, ident).await
    }

    /// The nodegroups of a cluster, by id.
    pub async fn cluster_nodegroups(&self, cluster_uuid: &str) -> Result<Vec<NodeGroup>> {
        Ok(self
            .db()
            .q()
            .list_nodegroups(
                &NodeGroupFilter::cluster(cluster_uuid),
                &ListOptions::default(),
            )
            .await?)
    }

    /// The nodegroups and the template of `cluster`, the template with the
    /// caller's visibility: Magnum's detail view reads it to compute the
    /// `labels_*` fields, and an invisible template fails with 404
    /// ClusterTemplateNotFound. Both reads run on the connection `rd`
    /// holds.
    pub async fn cluster_details(
        &self,
        rd: &mut Reader,
        ctx: &RequestContext,
        cluster: Cluster,
    ) -> Result<ClusterDetail> {
        let nodegroups = rd
            .q()
            .list_nodegroups(
                &NodeGroupFilter::cluster(&cluster.uuid),
                &ListOptions::default(),
            )
            .await?;
        let scope = template_scope(ctx, ctx.all_projects);
        let template = template_of(&mut rd.q(), &cluster, &scope).await?;
        Ok(ClusterDetail {
            cluster,
            nodegroups,
            template,
        })
    }

    /// Lists the clusters of the caller's scope with Magnum's pagination
    /// (unknown marker 404 ClusterNotFound; bad sort key or direction 400),
    /// then reads the nodegroups of the page in one query and the templates
    /// it references in one query: a template the caller cannot see fails
    /// the whole list with 404 ClusterTemplateNotFound, as in Magnum. With
    /// a `view`, the clusters carry only the columns it shows and the
    /// nodegroups only their role, node count and (detail) addresses.
    pub async fn list_clusters(
        &self,
        ctx: &RequestContext,
        o: &ListOptions,
        view: Option<ClusterView>,
    ) -> Result<ClusterPage> {
        let mut q = self.db().q();
        list_page(&mut q, ctx, o, view).await
    }

    /// Checks a cluster create as Magnum's decorators do before the
    /// handler (cluster.py:503-517), in order: a driver for the template
    /// (400), the devicemapper volume size (400), the driver's master size
    /// rule (400).
    pub async fn check_cluster_create(
        &self,
        t: &ClusterTemplate,
        master_count: i32,
        docker_volume_size: Option<i32>,
    ) -> Result<()> {
        let driver = self.driver_of(t)?;
        validation::validate_devicemapper_volume(
            t.docker_storage_driver.as_deref().unwrap_or(""),
            docker_volume_size.map(i64::from),
            t.docker_volume_size.map(i64::from),
        )?;
        driver
            .validate_master_size(master_count)
            .await
            .map_err(|e| call_error(&driver, e))
    }

    /// The conductor's own checks of a create after the quota check, in
    /// Magnum's order: hidden template (403), flavors' root disk (400),
    /// OpenStack resources, master_count against master_lb_enabled (400).
    /// It sets the cluster's identity (uuid, project, user, generated
    /// name).
    async fn check_create(
        &self,
        l: &mut Lookups<'_>,
        ctx: &RequestContext,
        t: &ClusterTemplate,
        cl: &mut Cluster,
        master_count: i32,
    ) -> Result<()> {
        if t.hidden == Some(true) && !ctx.is_admin {
            return Err(MagnumError::not_authorized_default().into());
        }
        cl.uuid = self.new_uuid();
        cl.project_id = ctx.project_id.clone();
        cl.user_id = ctx.user_id.clone();
        if cl.name.is_empty() {
            cl.name = generate_name("cluster");
        }
        check_flavors(l, &cl.labels, [&cl.flavor_id, &cl.master_flavor_id]).await?;
        validate_resources(l, t, cl).await?;
        validation::validate_master_lb(
            i64::from(master_count),
            cl.master_lb_enabled == Some(true),
        )?;
        Ok(())
    }

    /// `POST /v1/clusters` after the policy check (cluster.py:521-611 and
    /// the conductor's `cluster_create`): quota (403), hidden template
    /// (403), value inheritance, flavor root disk (400), OpenStack
    /// resources, master_count and master_lb_enabled (400); then, in one
    /// transaction, the cluster row, its two default nodegroups and the
    /// quota under the lock row. The create job then generates the
    /// cluster's certificates and calls the driver (a failure leaves the
    /// cluster CREATE_FAILED with the reason, as after Magnum's RPC cast):
    /// after the return, on the create-job pool, once
    /// [`Conductor::start_create_jobs`] ran; within the call otherwise. The
    /// returned cluster is the row as inserted.
    ///
    /// Deviation: the quota check is atomic with the insert. Magnum counts
    /// in the API and inserts later in the conductor, so concurrent creates
    /// may exceed the limit; here the count and the insert run in one
    /// transaction serialised by the lock row.
    pub async fn create_cluster(
        &self,
        ctx: &RequestContext,
        input: ClusterCreate,
    ) -> Result<Cluster> {
        let t = &input.template;
        let mut cl = inherit(t, &input);
        // The OpenStack reads of the validation start now, together; their
        // answers are read in Magnum's order.
        let mut l = Lookups::new(self.lookup(), ctx);
        l.prefetch(&openstack_reads::create_lookups(t, &cl));
        // Magnum checks the quota first (403 before any validation error).
        // The count under the lock refuses an over-quota create anyway, so
        // the quota is counted here only when the validation fails: its 403
        // then comes first, as in Magnum, and an accepted create counts
        // once.
        if let Err(e) = self
            .check_create(&mut l, ctx, t, &mut cl, input.master_count)
            .await
        {
            self.check_cluster_quota(ctx).await?;
            return Err(e);
        }
        drop(l);
        cl.status = Some(Status::CreateInProgress);
        cl.status_reason = None;
        let (mut master, mut worker) =
            default_nodegroups(t, &cl, input.master_count, input.node_count);
        master.uuid = self.new_uuid();
        worker.uuid = self.new_uuid();
        // Then the driver's own checks of the rows about to be written (a
        // label it cannot use): its client error is the caller's 400, and
        // no row is written.
        let st = ClusterState {
            cluster: cl.clone(),
            template: t.clone(),
            nodegroups: vec![master.clone(), worker.clone()],
        };
        if let Err(e) = self.driver_validate_create(ctx, &st).await {
            self.check_cluster_quota(ctx).await?;
            return Err(e);
        }
        self.ensure_lock_row().await?;
        // From before the row is visible until its create job ends, the
        // status poller of this process leaves the new cluster alone.
        let busy = self.mark_busy(&cl.uuid);
        // The rows are written first and the lock row taken last, so that
        // concurrent creates wait for one another only during the count and
        // the commit.
        let (row, seen) = self
            .db()
            .in_tx(|tx| {
                let (mut row, mut m, mut w) = (cl.clone(), master.clone(), worker.clone());
                Box::pin(async move {
                    if let Err(e) = tx.q().create_cluster(&mut row).await {
                        if e.is_duplicate() {
                            return Err(MagnumError::cluster_already_exists(&row.uuid).into());
                        }
                        return Err(e.into());
                    }
                    tx.q().create_nodegroup(&mut m).await?;
                    tx.q().create_nodegroup(&mut w).await?;
                    let seen = self.quota_under_lock(tx, ctx).await?;
                    Ok::<_, Error>((row, seen))
                })
            })
            .await?;
        self.remember_quota(&ctx.project_id, seen);
        tracing::info!(cluster_uuid = %row.uuid, project_id = %row.project_id, "cluster created");
        self.start_create_job(ctx.clone(), row.uuid.clone(), busy)
            .await;
        Ok(row)
    }

    /// The driver's `validate-create` of the rows `st` about to be written.
    async fn driver_validate_create(&self, ctx: &RequestContext, st: &ClusterState) -> Result<()> {
        let drv = self.driver_of(&st.template)?;
        drv.validate_create(&call_ctx(ctx), st)
            .await
            .map_err(|e| call_error(&drv, e))
    }

    /// The root-disk check of a cluster PATCH (spec `api/patch.md` §3 step
    /// 2): it runs on every PATCH, on the patched cluster's flavors.
    pub async fn check_cluster_update_flavors(
        &self,
        ctx: &RequestContext,
        labels: &Option<StringMap>,
        flavor_id: &Option<String>,
        master_flavor_id: &Option<String>,
    ) -> Result<()> {
        let mut l = Lookups::new(self.lookup(), ctx);
        check_flavors(&mut l, labels, [flavor_id, master_flavor_id]).await
    }

    /// Applies a PATCH of the node count and health
    /// (cluster_conductor.py:89-164): the cluster must be in a `*_COMPLETE`
    /// status, else 409; nothing changed is a no-op; a health-only change
    /// is saved without the driver; a node count change sets the default
    /// worker's count and calls the driver's update.
    pub async fn update_cluster(
        &self,
        ctx: &RequestContext,
        uuid: &str,
        input: ClusterUpdate,
    ) -> Result<()> {
        let step = self
            .db()
            .in_tx(|tx| {
                let input = input.clone();
                Box::pin(async move {
                    let mut cl = lock_cluster(&mut tx.for_update(), uuid).await?;
                    if !cl.status.is_some_and(Status::can_update) {
                        return Ok::<_, Error>(UpdateStep::Refused(Box::new(cl)));
                    }
                    let mut worker = read_default_worker(&mut tx.q(), uuid).await?;
                    let old_count = worker.node_count;
                    let same_count = old_count.unwrap_or(0) == input.node_count;
                    let same_health = cl.health_status == input.health_status
                        && map_or_empty(&cl.health_status_reason)
                            == map_or_empty(&input.health_status_reason);
                    if same_count && same_health {
                        return Ok(UpdateStep::Done);
                    }
                    cl.health_status = input.health_status;
                    cl.health_status_reason = Some(input.health_status_reason.unwrap_or_default());
                    tx.q()
                        .update_cluster(&mut cl, &["health_status", "health_status_reason"])
                        .await?;
                    if same_count {
                        // Health only: no driver call, as Magnum.
                        return Ok(UpdateStep::Done);
                    }
                    worker.node_count = Some(input.node_count);
                    tx.q()
                        .update_nodegroup(&mut worker, &["node_count"])
                        .await?;
                    Ok(UpdateStep::Driver {
                        worker: worker.uuid,
                        old_count,
                    })
                })
            })
            .await?;
        match step {
            UpdateStep::Done => Ok(()),
            UpdateStep::Refused(cl) => {
                self.notify_refused(ctx, &cl).await;
                Err(guard_conflict("Updating", cl.status))
            }
            UpdateStep::Driver { worker, old_count } => {
                let (c, ctx, uuid) = (self.clone(), ctx.clone(), uuid.to_string());
                detached(async move {
                    c.run_update(
                        &ctx,
                        &uuid,
                        &worker,
                        old_count,
                        None,
                        "update-cluster",
                        |drv, cctx, st| Box::pin(async move { drv.update_cluster(cctx, st).await }),
                    )
                    .await
                })
                .await
            }
        }
    }

    /// Sends Magnum's `update` failure of an operation refused for the
    /// cluster's status.
    pub(crate) async fn notify_refused(&self, ctx: &RequestContext, cl: &Cluster) {
        let ngs = self.cluster_nodegroups(&cl.uuid).await.unwrap_or_default();
        self.notifier()
            .cluster_event(ctx, cl, &ngs, Action::Update, Outcome::Failure);
    }

    /// Sends Magnum's notification of `action` with `outcome` for the
    /// cluster and the nodegroups of `st`.
    pub(crate) fn notify_state(
        &self,
        ctx: &RequestContext,
        st: &ClusterState,
        action: Action,
        outcome: Outcome,
    ) {
        self.notifier()
            .cluster_event(ctx, &st.cluster, &st.nodegroups, action, outcome);
    }

    /// Sends the pending notification of `action`, then calls the
    /// cluster's driver with `f` and checks its answer to `call`. A
    /// template without a usable driver is a failure of the call (and
    /// notifies nothing).
    async fn call_driver(
        &self,
        ctx: &RequestContext,
        st: &ClusterState,
        action: Action,
        call: Call<'_>,
        f: impl DriverCall,
    ) -> std::result::Result<Checked, CallError> {
        let drv = self
            .driver_of(&st.template)
            .map_err(|e| CallError::Failed(e.to_string()))?;
        self.notify_state(ctx, st, action, Outcome::Pending);
        let answer = f(&drv, &call_ctx(ctx), st).await;
        self.gate(&drv, call, st, answer)
    }

    /// The driver part of a node count update or a resize: the nodegroup
    /// `ng_uuid` already holds its new count. A client error of the driver
    /// restores the count (and the nodegroup's status `old_status`, when
    /// given) and goes back to the caller; any other failure restores the
    /// count and leaves the cluster and the nodegroup UPDATE_FAILED with
    /// the reason.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run_update(
        &self,
        ctx: &RequestContext,
        uuid: &str,
        ng_uuid: &str,
        old_count: Option<i32>,
        old_status: Option<Option<Status>>,
        function: &'static str,
        call: impl DriverCall,
    ) -> Result<()> {
        let _busy = self.mark_busy(uuid);
        let st = self.cluster_state(uuid).await?;
        // A delete (of another process) that came in after the caller's
        // state guard wins: the driver is not called, the nodegroup keeps
        // its count, and the caller gets the guard's answer. Without this,
        // the driver's answer saved below would turn DELETE_IN_PROGRESS
        // back into UPDATE_IN_PROGRESS (the rows read are the delete's).
        if st.cluster.status == Some(Status::DeleteInProgress) {
            let status =
                old_status.unwrap_or_else(|| st.nodegroup(ng_uuid).and_then(|ng| ng.status));
            self.restore_node_count(uuid, ng_uuid, old_count, status, None)
                .await;
            self.notify_refused(ctx, &st.cluster).await;
            let operation = if function == "resize-cluster" {
                "Resizing"
            } else {
                "Updating"
            };
            return Err(guard_conflict(operation, st.cluster.status));
        }
        let op = Call::new(Operation::UpdateCluster, function);
        let answer = self.call_driver(ctx, &st, Action::Update, op, call).await;
        let undo = async || {
            let status =
                old_status.unwrap_or_else(|| st.nodegroup(ng_uuid).and_then(|ng| ng.status));
            self.restore_node_count(uuid, ng_uuid, old_count, status, None)
                .await;
        };
        let fail = async |reason: String| {
            let failed = Some(Status::UpdateFailed);
            self.restore_node_count(uuid, ng_uuid, old_count, failed, Some(&reason))
                .await;
            if let Some((cl, ngs)) = self.mark_failed(uuid, Status::UpdateFailed, &reason).await {
                self.notifier()
                    .cluster_event(ctx, &cl, &ngs, Action::Update, Outcome::Failure);
            }
        };
        self.end_driver_call(&st, answer, "driver operation failed", undo, fail)
            .await
    }

    /// Ends a request's driver call: saves a checked answer; undoes what
    /// the request wrote with `undo` on a client error of the driver,
    /// which goes back to the caller; on any other failure keeps what the
    /// call made, logs the reason as `what` and records it with `fail`.
    async fn end_driver_call(
        &self,
        st: &ClusterState,
        answer: std::result::Result<Checked, CallError>,
        what: &str,
        undo: impl AsyncFnOnce(),
        fail: impl AsyncFnOnce(String),
    ) -> Result<()> {
        match answer {
            Ok(upd) => {
                self.save_answer(st, upd).await;
                Ok(())
            }
            Err(CallError::Client(e)) => {
                undo().await;
                Err(e.into())
            }
            Err(e) => {
                let reason = e.status_reason();
                tracing::error!(cluster_uuid = %st.cluster.uuid, error = %reason, "{what}");
                self.keep_after_failure(st, &e).await;
                fail(reason).await;
                Ok(())
            }
        }
    }

    /// Puts a nodegroup's node count back after a failed driver call, as
    /// Magnum's conductor does, with `status` (and `reason`).
    async fn restore_node_count(
        &self,
        cluster_uuid: &str,
        ng_uuid: &str,
        count: Option<i32>,
        status: Option<Status>,
        reason: Option<&str>,
    ) {
        let r = self
            .db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let all = Scope::ALL_PROJECTS;
                    let mut ng = tx
                        .for_update()
                        .get_nodegroup_by_uuid(cluster_uuid, ng_uuid, &all)
                        .await?;
                    ng.node_count = count;
                    ng.status = status;
                    let mut cols = vec!["node_count", "status"];
                    if let Some(r) = reason {
                        ng.status_reason = Some(r.to_string());
                        cols.push("status_reason");
                    }
                    tx.q().update_nodegroup(&mut ng, &cols).await?;
                    Ok::<_, Error>(())
                })
            })
            .await;
        if let Err(e) = r {
            tracing::error!(cluster_uuid = %cluster_uuid, nodegroup_uuid = %ng_uuid, error = %e, "restore node count");
        }
    }

    /// Starts deleting a cluster (no state guard, as in Magnum):
    /// DELETE_IN_PROGRESS, then the driver's delete; the rows go when the
    /// status poller sees DELETE_COMPLETE. A delete of a cluster whose
    /// create job of this process is generating certificates stops the
    /// generation; one whose job is in the driver's create waits for it.
    /// A client error of the driver goes back to the caller with the
    /// cluster's previous status restored; any other failure leaves the
    /// cluster DELETE_FAILED with the reason.
    pub async fn delete_cluster(&self, ctx: &RequestContext, cluster: &Cluster) -> Result<()> {
        let uuid = cluster.uuid.clone();
        // One statement: the status poller's writes compare the status and
        // updated_at they read, so none overwrites this one.
        self.db()
            .q()
            .set_cluster_status(&uuid, Status::DeleteInProgress, None)
            .await
            .map_err(|e| cluster_not_found(e, &uuid))?;
        tracing::info!(cluster_uuid = %uuid, "cluster delete started");
        self.stop_certificates(&uuid);
        let (c, ctx) = (self.clone(), ctx.clone());
        let (before, before_reason) = (cluster.status, cluster.status_reason.clone());
        detached(async move {
            // A create job of this process for the cluster finishes its
            // driver call first (it sees the new status and stops before the
            // driver if it still can): the driver's delete never precedes
            // its create.
            let _lock = c.lock_cluster(&uuid).await;
            c.run_delete(&ctx, &uuid, before, before_reason).await
        })
        .await
    }

    async fn run_delete(
        &self,
        ctx: &RequestContext,
        uuid: &str,
        before: Option<Status>,
        before_reason: Option<String>,
    ) -> Result<()> {
        let _busy = self.mark_busy(uuid);
        let st = match self.cluster_state(uuid).await {
            Ok(st) => st,
            // The status poller of another process (a `reconciler`) saw the
            // delete through while this call waited for the cluster's lock:
            // the cluster is gone, as asked.
            Err(_) if self.cluster_gone(uuid).await => return Ok(()),
            Err(e) => return Err(e),
        };
        let op = Call::new(Operation::DeleteCluster, "delete-cluster");
        let delete = self.call_driver(ctx, &st, Action::Delete, op, |drv, cctx, st| {
            Box::pin(async move { drv.delete_cluster(cctx, st).await })
        });
        let undo = async || {
            self.restore_status(&st.cluster, before, before_reason)
                .await;
        };
        let fail = async |reason: String| {
            self.notify_state(ctx, &st, Action::Delete, Outcome::Failure);
            self.mark_failed(uuid, Status::DeleteFailed, &reason).await;
        };
        self.end_driver_call(&st, delete.await, "driver delete failed", undo, fail)
            .await
    }

    /// Whether the cluster's row no longer exists.
    async fn cluster_gone(&self, uuid: &str) -> bool {
        matches!(
            self.db().q().get_cluster_by_uuid(uuid, &Scope::ALL_PROJECTS).await,
            Err(e) if e.is_not_found()
        )
    }

    /// Puts back the status a cluster had before a delete the driver
    /// refused, unless the cluster changed since `read`.
    async fn restore_status(&self, read: &Cluster, status: Option<Status>, reason: Option<String>) {
        let r = self
            .db()
            .in_tx(|tx| {
                let reason = reason.clone();
                Box::pin(async move {
                    let all = Scope::ALL_PROJECTS;
                    let mut cur = tx
                        .for_update()
                        .get_cluster_by_uuid(&read.uuid, &all)
                        .await?;
                    if cur.status != read.status || cur.updated_at != read.updated_at {
                        return Ok::<_, Error>(());
                    }
                    cur.status = status;
                    cur.status_reason = reason;
                    tx.q()
                        .update_cluster(&mut cur, &["status", "status_reason"])
                        .await?;
                    Ok(())
                })
            })
            .await;
        if let Err(e) = r {
            tracing::error!(cluster_uuid = %read.uuid, error = %e, "restore cluster status");
        }
    }

    /// The rows a driver works on: the cluster, its template (any project)
    /// and its nodegroups.
    pub(crate) async fn cluster_state(&self, uuid: &str) -> Result<ClusterState> {
        let mut q = self.db().q();
        let all = Scope::ALL_PROJECTS;
        let cluster = q
            .get_cluster_by_uuid(uuid, &all)
            .await
            .map_err(|e| cluster_not_found(e, uuid))?;
        let template = template_of(&mut q, &cluster, &TemplateScope::new(all)).await?;
        let nodegroups = q
            .list_nodegroups(&NodeGroupFilter::cluster(uuid), &ListOptions::default())
            .await?;
        Ok(ClusterState {
            cluster,
            template,
            nodegroups,
        })
    }

    /// Saves what a driver call started by a request answered, unless the
    /// rows changed since `st` was read (the status poller of another
    /// process, a concurrent request): then only the driver's cluster id is
    /// kept, so that a later delete reaches what the driver made. Failures
    /// are logged: the driver has acted already.
    pub(crate) async fn save_answer(&self, st: &ClusterState, upd: Checked) {
        // A cluster row as it was read has nothing to write (a delete of a
        // cluster already marked).
        let upd = upd.without_unchanged_cluster(&st.cluster);
        match self.save_update(&upd, st).await {
            Ok(Saved::Stale) => self.save_stack_id(&upd).await,
            Ok(_) => {}
            Err(e) => {
                tracing::error!(cluster_uuid = %st.cluster.uuid, error = %e, "save driver update");
            }
        }
    }

    /// Writes what a driver call answered, in one transaction: the cluster
    /// row, changed or new nodegroups, and deleted nodegroups; `upd` passed
    /// the gate ([`Conductor::gate`]), so it is about the cluster of `read`
    /// only. Nothing is written when the cluster's status or `updated_at`,
    /// or a saved nodegroup's `updated_at`, changed since `read` (the rows
    /// the call was made on) ([`Saved::Stale`]): a result computed from
    /// older rows never overwrites a newer write.
    pub(crate) async fn save_update(&self, upd: &Checked, read: &ClusterState) -> Result<Saved> {
        let upd = upd.update();
        if !upd.changed() {
            return Ok(Saved::Nothing);
        }
        self.db()
            .in_tx(|tx| {
                let (upd, st) = (upd.clone(), read);
                Box::pin(async move {
                    let all = Scope::ALL_PROJECTS;
                    if let Some(cl) = &upd.cluster {
                        let cur = lock_cluster(&mut tx.for_update(), &cl.uuid).await?;
                        if cur.status != st.cluster.status
                            || cur.updated_at != st.cluster.updated_at
                        {
                            return Ok::<_, Error>(Saved::Stale);
                        }
                    }
                    for ng in upd.nodegroups.iter().filter(|ng| ng.id != 0) {
                        let cur = match tx
                            .for_update()
                            .get_nodegroup_by_uuid(&ng.cluster_id, &ng.uuid, &all)
                            .await
                        {
                            Ok(cur) => cur,
                            Err(e) if e.is_not_found() => continue,
                            Err(e) => return Err(e.into()),
                        };
                        let seen = st
                            .nodegroup(&ng.uuid)
                            .map_or(ng.updated_at, |r| r.updated_at);
                        if cur.updated_at != seen {
                            return Ok(Saved::Stale);
                        }
                    }
                    let mut saved = None;
                    if let Some(cl) = &upd.cluster {
                        let mut cl = cl.clone();
                        cl.labels.get_or_insert_with(Default::default);
                        cl.health_status_reason.get_or_insert_with(Default::default);
                        tx.q().update_cluster(&mut cl, SAVE_COLS).await?;
                        saved = Some(cl);
                    }
                    for ng in &upd.nodegroups {
                        let mut ng = ng.clone();
                        if ng.id == 0 {
                            tx.q().create_nodegroup(&mut ng).await?;
                            continue;
                        }
                        match tx.q().update_nodegroup(&mut ng, NODEGROUP_SAVE_COLS).await {
                            Ok(()) => {}
                            Err(e) if e.is_not_found() => {}
                            Err(e) => return Err(e.into()),
                        }
                    }
                    for id in &upd.deleted_nodegroups {
                        match tx.q().delete_nodegroup(id).await {
                            Ok(()) => {}
                            Err(e) if e.is_not_found() => {}
                            Err(e) => return Err(e.into()),
                        }
                    }
                    Ok(Saved::Written(saved.map(Box::new)))
                })
            })
            .await
    }

    /// Stores the driver's cluster id from `upd` when the row has none yet.
    pub(crate) async fn save_stack_id(&self, upd: &Checked) {
        let Some(cl) = &upd.update().cluster else {
            return;
        };
        let Some(stack) = cl.stack_id.clone() else {
            return;
        };
        let uuid = cl.uuid.as_str();
        let r = self
            .db()
            .in_tx(|tx| {
                let stack = stack.clone();
                Box::pin(async move {
                    let all = Scope::ALL_PROJECTS;
                    let mut cur = tx.for_update().get_cluster_by_uuid(uuid, &all).await?;
                    if cur.stack_id.as_deref().is_some_and(|s| !s.is_empty()) {
                        return Ok::<_, Error>(());
                    }
                    cur.stack_id = Some(stack);
                    tx.q().update_cluster(&mut cur, &["stack_id"]).await?;
                    Ok(())
                })
            })
            .await;
        if let Err(e) = r {
            tracing::error!(cluster_uuid = %uuid, error = %e, "save driver cluster id");
        }
    }

    /// Sets the cluster (and its nodegroups in progress) to `status` with
    /// `reason`; returns the rows as saved (for the notification). A
    /// failure is logged.
    pub(crate) async fn mark_failed(
        &self,
        uuid: &str,
        status: Status,
        reason: &str,
    ) -> Option<(Cluster, Vec<NodeGroup>)> {
        self.mark_failed_if(uuid, status, reason, None).await
    }

    /// [`Conductor::mark_failed`] only while the cluster is still in
    /// `while_in` (a create must not fail a cluster being deleted).
    pub(crate) async fn mark_failed_if(
        &self,
        uuid: &str,
        status: Status,
        reason: &str,
        while_in: Option<Status>,
    ) -> Option<(Cluster, Vec<NodeGroup>)> {
        let still = |cl: &Cluster| while_in.is_none_or(|s| cl.status == Some(s));
        match self.fail_cluster(uuid, status, reason, still).await {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(cluster_uuid = %uuid, error = %e, "mark cluster failed");
                None
            }
        }
    }

    /// In one transaction, while `still` holds for the locked row: the
    /// cluster and its nodegroups in progress get `status` and `reason`.
    /// The rows as saved, or `None` when `still` did not hold.
    pub(crate) async fn fail_cluster<F>(
        &self,
        uuid: &str,
        status: Status,
        reason: &str,
        still: F,
    ) -> Result<Option<(Cluster, Vec<NodeGroup>)>>
    where
        F: Fn(&Cluster) -> bool + Send + Sync,
    {
        let still = &still;
        self.db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let all = Scope::ALL_PROJECTS;
                    let mut cl = tx.for_update().get_cluster_by_uuid(uuid, &all).await?;
                    if !still(&cl) {
                        return Ok::<_, Error>(None);
                    }
                    cl.status = Some(status);
                    cl.status_reason = Some(reason.to_string());
                    tx.q()
                        .update_cluster(&mut cl, &["status", "status_reason"])
                        .await?;
                    let mut ngs = tx
                        .q()
                        .list_nodegroups(&NodeGroupFilter::cluster(uuid), &ListOptions::default())
                        .await?;
                    for ng in &mut ngs {
                        if ng.status.is_some_and(Status::is_in_progress) {
                            ng.status = Some(status);
                            ng.status_reason = Some(reason.to_string());
                            tx.q()
                                .update_nodegroup(ng, &["status", "status_reason"])
                                .await?;
                        }
                    }
                    Ok(Some((cl, ngs)))
                })
            })
            .await
    }
}

/// One page of clusters through `q` (see [`Conductor::list_clusters`]).
pub(crate) async fn list_page<Q: ListReads>(
    q: &mut Q,
    ctx: &RequestContext,
    o: &ListOptions,
    view: Option<ClusterView>,
) -> Result<ClusterPage> {
    let scope = lookup::scope(ctx);
    let tscope = template_scope(ctx, ctx.all_projects);
    if let Some(marker) = o.marker.as_deref() {
        // Magnum: the marker is looked up with the caller's scope.
        q.cluster(marker, &scope)
            .await
            .map_err(|e| cluster_not_found(e, marker))?;
    }
    let f = ClusterFilter::scope(scope);
    let clusters = q
        .clusters(&f, o, view)
        .await
        .map_err(|e| list_error(e, o))?;
    let ids: Vec<String> = clusters.iter().map(|c| c.uuid.clone()).collect();
    let mut tids: Vec<String> = Vec::new();
    for c in &clusters {
        if !tids.contains(&c.cluster_template_id) {
            tids.push(c.cluster_template_id.clone());
        }
    }
    let nodegroups = q.nodegroups(&ids, view).await?;
    let mut templates = HashMap::new();
    if !tids.is_empty() {
        templates = q.templates(&tids, &tscope).await?;
        if let Some(missing) = tids.iter().find(|id| !templates.contains_key(*id)) {
            return Err(MagnumError::cluster_template_not_found(missing).into());
        }
    }
    Ok(ClusterPage {
        clusters,
        nodegroups,
        templates,
    })
}

/// The cluster `ident` names within the caller's scope, read through `q`
/// ([`Conductor::get_cluster`]).
async fn find_cluster(q: &mut Queries<'_>, ctx: &RequestContext, ident: &str) -> Result<Cluster> {
    let scope = lookup::scope(ctx);
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
