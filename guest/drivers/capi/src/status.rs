//! The status rules (driver-capi.md §§ 5.2–5.4): Magnum's rows from the
//! Cluster API objects of one cluster. Pure: the same rows, objects and
//! time give the same answer, so that `derive-status` can run on every
//! change the watches see.
//!
//! Only the fields the rules read are parsed, each into a small typed view
//! of its object; everything else an object carries is ignored.

use std::collections::BTreeMap;

use openkeel_magnum_driver::{
    Cluster, ClusterState, K8sObject, NodeGroup, Status, Timestamp, Update,
};
use serde::Deserialize;

use crate::names::{LABEL_CONTROL_PLANE, LABEL_DEPLOYMENT_NAME};
use crate::time::{minutes, parse_rfc3339};

/// The size of the `status_reason` column.
pub const STATUS_REASON_MAX: usize = 255;

/// Magnum's default `create_timeout`, in minutes.
pub const DEFAULT_CREATE_TIMEOUT_MINUTES: i64 = 60;

/// Health values of `health_status`.
pub const HEALTHY: &str = "HEALTHY";
pub const UNHEALTHY: &str = "UNHEALTHY";
pub const UNKNOWN: &str = "UNKNOWN";

// The conditions the rules read (Cluster API v1beta2).
const INFRASTRUCTURE_READY: &str = "InfrastructureReady";
const CONTROL_PLANE_AVAILABLE: &str = "ControlPlaneAvailable";
const WORKERS_AVAILABLE: &str = "WorkersAvailable";
const TOPOLOGY_RECONCILED: &str = "TopologyReconciled";
const TOPOLOGY_RECONCILE_FAILED: &str = "ReconcileFailed";
const AVAILABLE: &str = "Available";
const NODE_HEALTHY: &str = "NodeHealthy";

/// A condition, as both Cluster API (v1beta2) and CAPO (v1beta1) write
/// them.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub kind: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    pub last_transition_time: Option<String>,
}

impl Condition {
    fn is(&self, status: &str) -> bool {
        self.status == status
    }

    /// `<type> <reason>[: <message>]`.
    fn text(&self) -> String {
        let mut s = format!("{} {}", self.kind, self.reason);
        if !self.message.is_empty() {
            s.push_str(": ");
            s.push_str(&self.message);
        }
        s
    }
}

fn find<'a>(conditions: &'a [Condition], kind: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.kind == kind)
}

fn is_true(conditions: &[Condition], kind: &str) -> bool {
    find(conditions, kind).is_some_and(|c| c.is("True"))
}

/// The first False condition, rendered, or "".
fn first_false(conditions: &[Condition]) -> String {
    conditions
        .iter()
        .find(|c| c.is("False"))
        .map(Condition::text)
        .unwrap_or_default()
}

/// The metadata the rules read.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Meta {
    pub name: String,
    pub generation: i64,
    pub labels: BTreeMap<String, String>,
    pub deletion_timestamp: Option<String>,
}

/// The CAPI Cluster `<stack_id>`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CapiCluster {
    pub metadata: Meta,
    pub spec: CapiClusterSpec,
    pub status: CapiClusterStatus,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CapiClusterSpec {
    pub control_plane_endpoint: Endpoint,
    pub topology: Topology,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Endpoint {
    pub host: String,
    pub port: i64,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Topology {
    pub version: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CapiClusterStatus {
    pub observed_generation: i64,
    pub conditions: Vec<Condition>,
}

/// The cluster's KubeadmControlPlane.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ControlPlane {
    pub metadata: Meta,
    pub spec: Replicas,
    pub status: ControlPlaneStatus,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Replicas {
    pub replicas: Option<i32>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ControlPlaneStatus {
    pub initialization: ControlPlaneInitialization,
    pub conditions: Vec<Condition>,
    pub observed_generation: i64,
    pub version: String,
    pub up_to_date_replicas: Option<i32>,
    pub ready_replicas: Option<i32>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ControlPlaneInitialization {
    pub control_plane_initialized: Option<bool>,
}

/// A nodegroup's MachineDeployment.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct MachineDeployment {
    pub metadata: Meta,
    pub spec: Replicas,
    pub status: MachineDeploymentStatus,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MachineDeploymentStatus {
    pub observed_generation: i64,
    pub phase: String,
    pub conditions: Vec<Condition>,
    pub up_to_date_replicas: Option<i32>,
    pub available_replicas: Option<i32>,
}

/// A Machine.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Machine {
    pub metadata: Meta,
    pub spec: MachineSpec,
    pub status: MachineStatus,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MachineSpec {
    pub infrastructure_ref: NameRef,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct NameRef {
    pub name: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct MachineStatus {
    pub addresses: Vec<Address>,
    pub conditions: Vec<Condition>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Address {
    #[serde(rename = "type")]
    pub kind: String,
    pub address: String,
}

/// The OpenStackCluster (CAPO v1beta1).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Infrastructure {
    pub metadata: Meta,
    pub status: InfrastructureStatus,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct InfrastructureStatus {
    pub ready: bool,
    pub failure_message: Option<String>,
    pub conditions: Vec<Condition>,
}

/// What the rules read of one cluster's objects. `None` and absent map
/// entries are objects that do not exist.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    pub cluster: Option<CapiCluster>,
    pub control_plane: Option<ControlPlane>,
    /// By nodegroup name (the label `topology.cluster.x-k8s.io/deployment-name`).
    pub machine_deployments: BTreeMap<String, MachineDeployment>,
    pub machines: Vec<Machine>,
    pub infrastructure: Option<Infrastructure>,
}

impl Observed {
    /// The typed views of a cluster's objects (any order; kinds the rules
    /// do not read are ignored). An object whose fields do not have the
    /// types the API defines is an error naming it.
    pub fn from_objects<'a>(
        objects: impl IntoIterator<Item = &'a K8sObject>,
    ) -> Result<Observed, String> {
        let mut obs = Observed::default();
        for o in objects {
            let bad = |e: serde_json::Error| format!("{} {}: {e}", o.kind, o.name);
            match o.kind.as_str() {
                "Cluster" => obs.cluster = Some(serde_json::from_str(&o.json).map_err(bad)?),
                "KubeadmControlPlane" => {
                    obs.control_plane = Some(serde_json::from_str(&o.json).map_err(bad)?)
                }
                "MachineDeployment" => {
                    let md: MachineDeployment = serde_json::from_str(&o.json).map_err(bad)?;
                    if let Some(ng) = md.metadata.labels.get(LABEL_DEPLOYMENT_NAME).cloned() {
                        obs.machine_deployments.insert(ng, md);
                    }
                }
                "Machine" => obs
                    .machines
                    .push(serde_json::from_str(&o.json).map_err(bad)?),
                "OpenStackCluster" => {
                    obs.infrastructure = Some(serde_json::from_str(&o.json).map_err(bad)?)
                }
                _ => {}
            }
        }
        obs.machines
            .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        Ok(obs)
    }
}

/// How long the rules wait, in microseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rules {
    /// The call's time.
    pub now: Timestamp,
    /// How long TopologyReconciled may report ReconcileFailed before an
    /// update fails.
    pub update_grace: i64,
    /// How long a deletion may make no progress before it is
    /// DELETE_FAILED; zero never fails.
    pub delete_timeout: i64,
}

/// The rows of `st` that change with what `obs` shows (§§ 5.2–5.4). A
/// deletion whose Cluster has gone is not decided here: it needs its
/// clean-up first (§ 5.5).
pub fn derive(st: &ClusterState, obs: &Observed, rules: &Rules) -> Update {
    let mut upd = Update::none();
    let cl = &st.cluster;
    // A value that is not a boolean reads as false here: the create refused
    // it already.
    let auto = crate::cluster::autoscaling(cl).unwrap_or(false);

    // Nodegroups first: the cluster completes only when they have.
    let mut nodegroups = Vec::with_capacity(st.nodegroups.len());
    for ng in &st.nodegroups {
        match nodegroup_status(ng, obs, auto) {
            None => upd.deleted_nodegroups.push(ng.uuid.clone()),
            Some(next) => {
                if !nodegroup_equal(ng, &next) {
                    upd.nodegroups.push(next.clone());
                }
                nodegroups.push(next);
            }
        }
    }

    let mut next = cl.clone();
    let capi = obs.cluster.as_ref();
    if let Some(c) = capi {
        let ep = &c.spec.control_plane_endpoint;
        if !ep.host.is_empty() {
            next.api_address = Some(format!("https://{}:{}", ep.host, ep.port));
        }
        if let Some(v) = coe_version(obs) {
            next.coe_version = Some(v);
        }
    }
    if let Some((health, reason)) = health(obs) {
        next.health_status = Some(health.to_string());
        next.health_status_reason = Some(reason);
    }

    match cl.status {
        // A CREATE_FAILED cluster stays so (the Go driver completed it when
        // Cluster API finished late; the host allows a status to move a
        // cluster out of an operation in progress only).
        Some(Status::CreateInProgress) => create_rules(&mut next, obs, &nodegroups, rules),
        Some(Status::UpdateInProgress) => {
            if cluster_ready(obs, &nodegroups, true) {
                complete(&mut next, Status::UpdateComplete);
            } else if let Some(c) = topology_failed(obs, cl, rules) {
                next.status = Some(Status::UpdateFailed);
                next.status_reason = Some(cut(&c.text()));
            } else if let Some(r) = first_failed_reason(&nodegroups) {
                next.status = Some(Status::UpdateFailed);
                next.status_reason = Some(cut(&r));
            } else {
                next.status_reason = reason(obs);
            }
        }
        Some(Status::DeleteInProgress) => {
            if let Some(c) = capi {
                next.status_reason = reason(obs);
                if delete_stuck(cl, c, &next, rules) {
                    next.status = Some(Status::DeleteFailed);
                    next.status_reason = Some(cut(&format!(
                        "Timed out waiting for the deletion: {}",
                        blocking_reason(obs, "the Cluster API cluster is still there")
                    )));
                }
            }
        }
        _ => {}
    }
    if !cluster_equal(cl, &next) {
        upd.cluster = Some(next);
    }
    upd
}

/// CREATE_IN_PROGRESS: complete when everything is ready, failed past the
/// create deadline.
fn create_rules(next: &mut Cluster, obs: &Observed, nodegroups: &[NodeGroup], rules: &Rules) {
    if cluster_ready(obs, nodegroups, false) {
        complete(next, Status::CreateComplete);
    } else if create_expired(next, rules.now) {
        next.status = Some(Status::CreateFailed);
        next.status_reason = Some(cut(&format!(
            "Timed out waiting for the cluster: {}",
            timeout_reason(obs, "the Cluster API cluster does not exist")
        )));
    } else {
        next.status_reason = reason(obs);
    }
}

fn complete(cl: &mut Cluster, status: Status) {
    cl.status = Some(status);
    cl.status_reason = None;
}

/// A nodegroup's next row, or `None` for a non-default nodegroup whose
/// deletion completed (its row goes).
fn nodegroup_status(ng: &NodeGroup, obs: &Observed, auto: bool) -> Option<NodeGroup> {
    let mut ng = ng.clone();
    let status = ng.status;
    let act = status.and_then(action);
    if ng.is_master() {
        ng.node_addresses = addresses(
            obs.machines
                .iter()
                .filter(|m| m.metadata.labels.contains_key(LABEL_CONTROL_PLANE)),
            ng.node_addresses.take(),
        );
        let (Some(kcp), Some(act)) = (&obs.control_plane, act) else {
            return Some(ng);
        };
        if act == Act::Delete {
            return Some(ng);
        }
        if control_plane_ready(kcp, ng.node_count.unwrap_or(0)) {
            ng.status = Some(act.complete());
            ng.status_reason = None;
        } else {
            let r = first_false(&kcp.status.conditions);
            if !r.is_empty() {
                ng.status_reason = Some(cut(&r));
            }
        }
        return Some(ng);
    }

    let md = obs.machine_deployments.get(&ng.name);
    let own = |m: &&Machine| m.metadata.labels.get(LABEL_DEPLOYMENT_NAME) == Some(&ng.name);
    if status == Some(Status::DeleteInProgress) {
        if md.is_some() || obs.machines.iter().any(|m| own(&m)) {
            return Some(ng);
        }
        if !ng.is_default() {
            return None;
        }
        ng.status = Some(Status::DeleteComplete);
        ng.status_reason = None;
        ng.node_addresses = Some(Vec::new());
        return Some(ng);
    }
    ng.node_addresses = addresses(obs.machines.iter().filter(own), ng.node_addresses.take());
    let Some(md) = md else {
        return Some(ng);
    };
    if auto
        && let Some(replicas) = md.spec.replicas
        && ng.node_count.unwrap_or(0) != replicas
    {
        ng.node_count = Some(replicas);
    }
    let Some(act) = act else {
        return Some(ng);
    };
    if md.status.phase == "Failed" {
        let r = first_false(&md.status.conditions);
        let r = if r.is_empty() {
            format!("MachineDeployment {} failed", md.metadata.name)
        } else {
            r
        };
        ng.status = Some(act.failed());
        ng.status_reason = Some(cut(&r));
    } else if machine_deployment_ready(md, &ng, auto) {
        ng.status = Some(act.complete());
        ng.status_reason = None;
    }
    Some(ng)
}

/// The operation of an `*_IN_PROGRESS` status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Act {
    Create,
    Update,
    Delete,
    Rollback,
}

fn action(s: Status) -> Option<Act> {
    match s {
        Status::CreateInProgress => Some(Act::Create),
        Status::UpdateInProgress => Some(Act::Update),
        Status::DeleteInProgress => Some(Act::Delete),
        Status::RollbackInProgress => Some(Act::Rollback),
        _ => None,
    }
}

impl Act {
    fn complete(self) -> Status {
        match self {
            Act::Create => Status::CreateComplete,
            Act::Update => Status::UpdateComplete,
            Act::Delete => Status::DeleteComplete,
            Act::Rollback => Status::RollbackComplete,
        }
    }

    fn failed(self) -> Status {
        match self {
            Act::Create => Status::CreateFailed,
            Act::Update => Status::UpdateFailed,
            Act::Delete => Status::DeleteFailed,
            Act::Rollback => Status::RollbackFailed,
        }
    }
}

/// The master nodegroup's rule: initialised, Available, at its current
/// generation, and every replica up to date and ready at the requested
/// count.
fn control_plane_ready(kcp: &ControlPlane, want: i32) -> bool {
    let s = &kcp.status;
    if s.initialization.control_plane_initialized != Some(true)
        || !is_true(&s.conditions, AVAILABLE)
        || s.observed_generation != kcp.metadata.generation
    {
        return false;
    }
    let spec = kcp.spec.replicas.unwrap_or(0);
    s.up_to_date_replicas.unwrap_or(0) == spec
        && s.ready_replicas.unwrap_or(0) == spec
        && spec == want
}

/// A worker nodegroup's rule: at its current generation, Running, and up
/// to date = available = the spec's replicas (= `node_count` unless the
/// autoscaler owns the size).
fn machine_deployment_ready(md: &MachineDeployment, ng: &NodeGroup, auto: bool) -> bool {
    let s = &md.status;
    if s.observed_generation != md.metadata.generation || s.phase != "Running" {
        return false;
    }
    let spec = md.spec.replicas.unwrap_or(0);
    if s.up_to_date_replicas.unwrap_or(0) != spec || s.available_replicas.unwrap_or(0) != spec {
        return false;
    }
    auto || spec == ng.node_count.unwrap_or(0)
}

/// The cluster's rule for CREATE_COMPLETE and UPDATE_COMPLETE: its
/// conditions, every nodegroup complete and, for an update, the control
/// plane at the topology's version.
fn cluster_ready(obs: &Observed, nodegroups: &[NodeGroup], update: bool) -> bool {
    let Some(c) = &obs.cluster else {
        return false;
    };
    if c.status.observed_generation != c.metadata.generation {
        return false;
    }
    let conditions = [
        INFRASTRUCTURE_READY,
        CONTROL_PLANE_AVAILABLE,
        WORKERS_AVAILABLE,
        TOPOLOGY_RECONCILED,
    ];
    if !conditions.iter().all(|t| is_true(&c.status.conditions, t)) {
        return false;
    }
    if !nodegroups
        .iter()
        .all(|ng| ng.status.is_some_and(Status::complete))
    {
        return false;
    }
    !update
        || obs
            .control_plane
            .as_ref()
            .is_some_and(|kcp| kcp.status.version == c.spec.topology.version)
}

/// The control plane's version once every one of its machines runs it,
/// else the topology's.
fn coe_version(obs: &Observed) -> Option<String> {
    if let Some(kcp) = &obs.control_plane
        && !kcp.status.version.is_empty()
        && kcp.status.up_to_date_replicas.unwrap_or(0) == kcp.spec.replicas.unwrap_or(0)
    {
        return Some(kcp.status.version.clone());
    }
    obs.cluster
        .as_ref()
        .map(|c| c.spec.topology.version.clone())
        .filter(|v| !v.is_empty())
}

/// The health monitor (§ 5.4): HEALTHY when the control plane is
/// Available and every Machine's node is healthy. The reason has `api`
/// and one `<OpenStackMachine name>.Ready` key per Machine. UNKNOWN with
/// an empty reason without a Cluster; `None` (the rows keep theirs) while
/// there is no control plane yet.
pub fn health(obs: &Observed) -> Option<(&'static str, BTreeMap<String, String>)> {
    if obs.cluster.is_none() {
        return Some((UNKNOWN, BTreeMap::new()));
    }
    let kcp = obs.control_plane.as_ref()?;
    let mut healthy = is_true(&kcp.status.conditions, AVAILABLE);
    let mut reason = BTreeMap::new();
    reason.insert(
        "api".to_string(),
        if healthy { "ok" } else { "nok" }.to_string(),
    );
    for m in &obs.machines {
        let ok = is_true(&m.status.conditions, NODE_HEALTHY);
        healthy &= ok;
        let name = match m.spec.infrastructure_ref.name.as_str() {
            "" => &m.metadata.name,
            n => n,
        };
        reason.insert(
            format!("{name}.Ready"),
            if ok { "True" } else { "False" }.to_string(),
        );
    }
    Some((if healthy { HEALTHY } else { UNHEALTHY }, reason))
}

/// The addresses of `machines` (in name order): the ExternalIP when a
/// Machine has one, else its InternalIP. With no address at all the row
/// keeps `old` when it had one, so that it is not rewritten while the
/// machines are still being created.
fn addresses<'a>(
    machines: impl Iterator<Item = &'a Machine>,
    old: Option<Vec<String>>,
) -> Option<Vec<String>> {
    let out: Vec<String> = machines
        .filter_map(|m| {
            let of = |kind: &str| {
                m.status
                    .addresses
                    .iter()
                    .find(|a| a.kind == kind && !a.address.is_empty())
                    .map(|a| a.address.clone())
            };
            of("ExternalIP").or_else(|| of("InternalIP"))
        })
        .collect();
    if out.is_empty() && old.is_some() {
        return old;
    }
    Some(out)
}

/// What blocks the cluster (§ 5.3): the first False of the Cluster's
/// InfrastructureReady, ControlPlaneAvailable and WorkersAvailable, the
/// OpenStackCluster's failure message or Ready condition, and the first
/// Machine whose infrastructure is not ready (Nova's errors). `none`
/// without a Cluster.
fn blocking_reason(obs: &Observed, none: &str) -> String {
    let Some(c) = &obs.cluster else {
        return none.to_string();
    };
    let mut parts = Vec::new();
    if let Some(cond) = [
        INFRASTRUCTURE_READY,
        CONTROL_PLANE_AVAILABLE,
        WORKERS_AVAILABLE,
    ]
    .iter()
    .filter_map(|t| find(&c.status.conditions, t))
    .find(|cond| cond.is("False"))
    {
        parts.push(format!("CAPI Cluster {}", cond.text()));
    }
    if let Some(infra) = &obs.infrastructure {
        match infra.status.failure_message.as_deref() {
            Some(msg) if !msg.is_empty() => parts.push(format!("OpenStackCluster: {msg}")),
            _ => {
                if let Some(cond) =
                    find(&infra.status.conditions, "Ready").filter(|c| !c.is("True"))
                {
                    let text = format!("Ready {}: {}", cond.reason, cond.message);
                    let text = text.strip_suffix(": ").unwrap_or(&text);
                    parts.push(format!("OpenStackCluster {text}"));
                }
            }
        }
    }
    if let Some((m, cond)) = obs.machines.iter().find_map(|m| {
        find(&m.status.conditions, INFRASTRUCTURE_READY)
            .filter(|c| c.is("False") && !c.message.is_empty())
            .map(|c| (m, c))
    }) {
        parts.push(format!("Machine {}: {}", m.metadata.name, cond.message));
    }
    parts.join(". ")
}

/// [`blocking_reason`], or, when nothing reports False, the first of the
/// Cluster's readiness conditions that is not True or not reported at all
/// (the Go driver's reason was empty then): a timeout always names what
/// it waited for.
fn timeout_reason(obs: &Observed, none: &str) -> String {
    let r = blocking_reason(obs, none);
    let Some(c) = obs.cluster.as_ref().filter(|_| r.is_empty()) else {
        return r;
    };
    for t in [
        INFRASTRUCTURE_READY,
        CONTROL_PLANE_AVAILABLE,
        WORKERS_AVAILABLE,
        TOPOLOGY_RECONCILED,
    ] {
        match find(&c.status.conditions, t) {
            None => return format!("CAPI Cluster {t} not reported"),
            Some(cond) if !cond.is("True") => {
                return format!("CAPI Cluster {} {}", cond.status, cond.text());
            }
            Some(_) => {}
        }
    }
    "the Cluster API cluster is not ready".to_string()
}

fn reason(obs: &Observed) -> Option<String> {
    let r = blocking_reason(obs, "");
    (!r.is_empty()).then(|| cut(&r))
}

/// Whether a deletion has made no progress for `delete_timeout`: the
/// reason is unchanged and neither the row (`updated_at`, moved by every
/// change and by a new DELETE) nor the Cluster's deletion moved since.
fn delete_stuck(cl: &Cluster, c: &CapiCluster, next: &Cluster, rules: &Rules) -> bool {
    if rules.delete_timeout <= 0 || cl.status_reason != next.status_reason {
        return false;
    }
    let deleted = c
        .metadata
        .deletion_timestamp
        .as_deref()
        .and_then(parse_rfc3339);
    let since = [Some(cl.created_at), cl.updated_at, deleted]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0);
    since > 0 && rules.now > since.saturating_add(rules.delete_timeout)
}

/// Whether the create's deadline (`create_timeout` minutes, 60 when
/// unset, none when zero or less) has passed.
fn create_expired(cl: &Cluster, now: Timestamp) -> bool {
    let timeout = cl
        .create_timeout
        .map_or(DEFAULT_CREATE_TIMEOUT_MINUTES, i64::from);
    timeout > 0 && cl.created_at > 0 && now > cl.created_at.saturating_add(minutes(timeout))
}

/// TopologyReconciled, when it has been False with ReconcileFailed (a
/// webhook's refusal, for example) for longer than the grace, about the
/// Cluster's current spec, and counted from the later of the condition's
/// change and the row's last write (the update's start at the latest): a
/// failure left from before a retried upgrade says nothing until the
/// controller has seen the new spec, and the retry gets its whole grace
/// even when its spec is the one that failed (a cause since fixed).
fn topology_failed<'a>(obs: &'a Observed, cl: &Cluster, rules: &Rules) -> Option<&'a Condition> {
    let cluster = obs.cluster.as_ref()?;
    if cluster.status.observed_generation != cluster.metadata.generation {
        return None;
    }
    let cond = find(&cluster.status.conditions, TOPOLOGY_RECONCILED)?;
    let changed = cond
        .last_transition_time
        .as_deref()
        .and_then(parse_rfc3339)?;
    let since = changed.max(cl.updated_at.unwrap_or(0));
    (cond.is("False")
        && cond.reason == TOPOLOGY_RECONCILE_FAILED
        && rules.now.saturating_sub(since) > rules.update_grace)
        .then_some(cond)
}

/// `Nodegroup <name>: <reason>` of the first failed nodegroup.
fn first_failed_reason(nodegroups: &[NodeGroup]) -> Option<String> {
    nodegroups
        .iter()
        .find(|ng| ng.status.is_some_and(Status::failed))
        .map(|ng| {
            format!(
                "Nodegroup {}: {}",
                ng.name,
                ng.status_reason.as_deref().unwrap_or_default()
            )
        })
}

/// `s` cut to the column's size, on a character boundary.
pub fn cut(s: &str) -> String {
    if s.len() <= STATUS_REASON_MAX {
        return s.to_string();
    }
    let mut end = STATUS_REASON_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Whether the fields the rules write are the same.
fn cluster_equal(a: &Cluster, b: &Cluster) -> bool {
    a.status == b.status
        && a.status_reason == b.status_reason
        && a.api_address == b.api_address
        && a.coe_version == b.coe_version
        && a.health_status == b.health_status
        && a.health_status_reason == b.health_status_reason
}

fn nodegroup_equal(a: &NodeGroup, b: &NodeGroup) -> bool {
    a.status == b.status
        && a.status_reason == b.status_reason
        && a.node_count == b.node_count
        && a.node_addresses == b.node_addresses
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
