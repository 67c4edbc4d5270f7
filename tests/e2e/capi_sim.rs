//! A simulator of the Cluster API and CAPO controllers, for the tests that
//! run the Cluster API driver against a real kube-apiserver with the CRDs
//! installed ([`crate::kube::capi_api_server`]) and no controller: a port
//! of the Go simulator (`test/envtest/sim.go`).
//!
//! For each topology Cluster of one namespace it plays the topology,
//! KubeadmControlPlane, MachineDeployment/MachineSet and Machine
//! controllers and CAPO: it creates and updates the KubeadmControlPlane,
//! one MachineDeployment per `spec.topology.workers.machineDeployments`
//! entry and the OpenStackCluster, keeps one Machine per replica (Machines
//! annotated `cluster.x-k8s.io/delete-machine` go first on a scale down;
//! a new version rolls out one Machine per step and group), deletes the
//! MachineDeployments the topology no longer names, and writes the
//! statuses and conditions (Cluster API v1beta2, CAPO v1beta1) that a
//! cluster marked ready or failed shows. Deletion goes through finalizers
//! as on a real management cluster: a deleted Cluster's children are
//! deleted, and each finalizer is removed once what depends on the object
//! is gone. Objects whose Cluster does not exist are deleted.
//!
//! Nothing moves by itself: a test calls [`Sim::step`] (one pass over the
//! namespace) or [`Sim::settle`] (passes until one writes nothing), or
//! starts [`Sim::run`] for a background loop. Writes happen only when
//! something changes, so a settled namespace costs no write.
//!
//! Each kind is read and written in one version, the one its CRD stores
//! (no conversion webhook runs): v1beta2 for Cluster API's groups, v1beta1
//! for CAPO's.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams, TypeMeta,
};
use serde_json::{Value, json};

/// Cluster API's label naming the Cluster of an object.
pub const LABEL_CLUSTER_NAME: &str = "cluster.x-k8s.io/cluster-name";
/// Cluster API's label naming the topology MachineDeployment (nodegroup)
/// of a MachineDeployment and its Machines.
pub const LABEL_DEPLOYMENT: &str = "topology.cluster.x-k8s.io/deployment-name";
/// Cluster API's label on control-plane Machines.
pub const LABEL_CONTROL_PLANE: &str = "cluster.x-k8s.io/control-plane";
/// Cluster API's annotation marking a Machine to remove first on a scale
/// down.
pub const ANNOTATION_DELETE_MACHINE: &str = "cluster.x-k8s.io/delete-machine";
/// The control-plane endpoint the simulator gives a ready Cluster.
pub const ENDPOINT_HOST: &str = "203.0.113.10";
pub const ENDPOINT_PORT: i64 = 6443;

/// A Machine's provider ID is this prefix and its 12-digit number.
const PROVIDER_ID_PREFIX: &str = "openstack:///00000000-0000-4000-8000-";
const INFRASTRUCTURE_GROUP: &str = "infrastructure.cluster.x-k8s.io";
/// Passes [`Sim::settle`] makes before it gives up: a deletion takes five,
/// a rollout one per Machine of its largest group.
const SETTLE_LIMIT: usize = 40;

/// The kinds the simulator reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Cluster,
    KubeadmControlPlane,
    MachineDeployment,
    Machine,
    OpenStackCluster,
}

impl Kind {
    /// The kinds a Cluster owns, as the simulator creates them.
    const CHILDREN: [Kind; 4] = [
        Kind::KubeadmControlPlane,
        Kind::MachineDeployment,
        Kind::Machine,
        Kind::OpenStackCluster,
    ];

    /// The kind in the version its CRD stores.
    pub fn resource(self) -> ApiResource {
        let (group, version, kind, plural) = match self {
            Kind::Cluster => ("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters"),
            Kind::KubeadmControlPlane => (
                "controlplane.cluster.x-k8s.io",
                "v1beta2",
                "KubeadmControlPlane",
                "kubeadmcontrolplanes",
            ),
            Kind::MachineDeployment => (
                "cluster.x-k8s.io",
                "v1beta2",
                "MachineDeployment",
                "machinedeployments",
            ),
            Kind::Machine => ("cluster.x-k8s.io", "v1beta2", "Machine", "machines"),
            Kind::OpenStackCluster => (
                INFRASTRUCTURE_GROUP,
                "v1beta1",
                "OpenStackCluster",
                "openstackclusters",
            ),
        };
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
    }

    /// The finalizer the kind's controller keeps on its objects until
    /// what depends on them is gone.
    fn finalizer(self) -> &'static str {
        match self {
            Kind::Cluster => "cluster.cluster.x-k8s.io",
            Kind::KubeadmControlPlane => "kubeadm.controlplane.cluster.x-k8s.io",
            Kind::MachineDeployment => "cluster.x-k8s.io/machinedeployment",
            Kind::Machine => "machine.cluster.x-k8s.io",
            Kind::OpenStackCluster => "openstackcluster.infrastructure.cluster.x-k8s.io",
        }
    }
}

/// A request of a step that the API server refused.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{action} {kind:?} {name}: {source}")]
    Api {
        action: &'static str,
        kind: Kind,
        name: String,
        #[source]
        source: Box<kube::Error>,
    },
    #[error("the simulator still wrote after {0} steps")]
    NotSettled(usize),
}

/// How far the simulator takes a cluster's objects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum Mode {
    /// The objects exist; nothing reports ready.
    #[default]
    Provisioning,
    /// Every object reports ready.
    Ready,
    /// The servers fail with this message, as CAPO reports a Nova error.
    Failed(String),
}

#[derive(Default)]
struct State {
    modes: HashMap<String, Mode>,
    /// Clusters whose topology cannot be reconciled, with the message.
    topology_failures: HashMap<String, String>,
    last_write: HashMap<String, Instant>,
    /// The number of the last Machine created.
    seq: u64,
    /// Errors of the background loop.
    errors: Vec<String>,
    paused: bool,
    /// Clusters no `mark_*` call named report ready (else provisioning).
    ready_by_default: bool,
}

struct Inner {
    client: kube::Client,
    namespace: String,
    state: Mutex<State>,
}

/// The simulated controllers of one namespace. Clones share their state.
#[derive(Clone)]
pub struct Sim {
    inner: Arc<Inner>,
}

/// The background loop of [`Sim::run`]; dropping it stops the loop (an
/// unfinished step is abandoned), [`Running::stop`] lets the step end.
pub struct Running {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Stops the loop after its current step.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("the simulator's loop panicked");
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl Sim {
    /// A simulator of `namespace`; every cluster starts provisioning.
    pub fn new(client: kube::Client, namespace: &str) -> Sim {
        Sim {
            inner: Arc::new(Inner {
                client,
                namespace: namespace.to_string(),
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// The objects of `kind` in the simulator's namespace.
    pub fn api(&self, kind: Kind) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.inner.client.clone(),
            &self.inner.namespace,
            &kind.resource(),
        )
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().expect("simulator state")
    }

    /// Makes every object of the cluster report ready, now and after later
    /// changes (resize, upgrade); clears a topology failure.
    pub fn mark_ready(&self, stack: &str) {
        self.set_mode(stack, Mode::Ready);
    }

    /// Makes the cluster's servers fail with `message`, as CAPO reports a
    /// Nova error: Machines InfrastructureReady False (InstanceCreateFailed),
    /// MachineDeployments Failed, the OpenStackCluster's failureMessage and
    /// the Cluster's InfrastructureReady False; clears a topology failure.
    pub fn mark_failed(&self, stack: &str, message: &str) {
        self.set_mode(stack, Mode::Failed(message.to_string()));
    }

    /// Makes the cluster's topology fail to reconcile with `message`, as
    /// when a webhook refuses a change: the Cluster's TopologyReconciled is
    /// False with reason ReconcileFailed, and changes of its topology
    /// reach no object until [`Sim::mark_ready`] or [`Sim::mark_failed`].
    pub fn mark_topology_failed(&self, stack: &str, message: &str) {
        let mut st = self.state();
        st.topology_failures
            .insert(stack.to_string(), message.to_string());
        st.last_write.remove(stack);
    }

    /// Makes every cluster no `mark_*` call names report ready, as
    /// controllers that provision whatever they are given (a steady load).
    #[allow(dead_code)] // the fault suite's (tests/clients/faults)
    pub fn ready_by_default(&self) {
        self.state().ready_by_default = true;
    }

    fn set_mode(&self, stack: &str, mode: Mode) {
        let mut st = self.state();
        st.modes.insert(stack.to_string(), mode);
        st.topology_failures.remove(stack);
        st.last_write.remove(stack);
    }

    fn mode(&self, stack: &str) -> (Mode, Option<String>) {
        let st = self.state();
        (
            st.modes
                .get(stack)
                .cloned()
                .unwrap_or(if st.ready_by_default {
                    Mode::Ready
                } else {
                    Mode::Provisioning
                }),
            st.topology_failures.get(stack).cloned(),
        )
    }

    /// Stops (true) or resumes (false) the steps, so that a test can look
    /// at what the code under test wrote before a controller reacts.
    pub fn pause(&self, paused: bool) {
        self.state().paused = paused;
    }

    /// When the simulator last changed an object of the cluster (`None`
    /// before any change since the last `mark_*` call).
    pub fn last_write(&self, stack: &str) -> Option<Instant> {
        self.state().last_write.get(stack).copied()
    }

    /// The errors of the background loop so far (a conflict is not one:
    /// the next step retries it).
    pub fn errors(&self) -> Vec<String> {
        self.state().errors.clone()
    }

    /// One pass over the namespace; the number of writes it made (a
    /// conflict counts as one: the next pass retries it). Nothing when
    /// paused.
    pub async fn step(&self) -> Result<usize, SimError> {
        if self.state().paused {
            return Ok(0);
        }
        let mut pass = Pass {
            sim: self,
            writes: 0,
            now: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        };
        pass.run().await?;
        Ok(pass.writes)
    }

    /// Steps until a pass writes nothing; the number of passes.
    pub async fn settle(&self) -> Result<usize, SimError> {
        for n in 1..=SETTLE_LIMIT {
            if self.step().await? == 0 {
                return Ok(n);
            }
        }
        Err(SimError::NotSettled(SETTLE_LIMIT))
    }

    /// Steps every `interval` in a task of its own until the returned
    /// handle is stopped or dropped; errors are kept for [`Sim::errors`].
    pub fn run(&self, interval: Duration) -> Running {
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let sim = self.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    _ = tick.tick() => {
                        if let Err(e) = sim.step().await {
                            sim.state().errors.push(e.to_string());
                        }
                    }
                }
            }
        });
        Running {
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// The next Machine number.
    fn next(&self) -> u64 {
        let mut st = self.state();
        st.seq += 1;
        st.seq
    }

    fn wrote(&self, stack: &str) {
        self.state()
            .last_write
            .insert(stack.to_string(), Instant::now());
    }
}

/// The Nova server UUID of a Machine the simulator created (what
/// `nodes_to_remove` names).
pub fn server_id(machine: &DynamicObject) -> Option<&str> {
    machine.data["spec"]["providerID"]
        .as_str()?
        .strip_prefix("openstack:///")
}

/// The address the simulator gives a Machine: `10.0.<n / 250>.<n % 250 + 2>`
/// for the Machine numbered `n`.
pub fn machine_address(machine: &DynamicObject) -> Option<String> {
    let n: u64 = machine.data["spec"]["providerID"]
        .as_str()?
        .strip_prefix(PROVIDER_ID_PREFIX)?
        .parse()
        .ok()?;
    Some(format!("10.0.{}.{}", n / 250, n % 250 + 2))
}

fn name(o: &DynamicObject) -> &str {
    o.metadata.name.as_deref().unwrap_or_default()
}

fn label<'a>(o: &'a DynamicObject, key: &str) -> Option<&'a str> {
    o.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

fn stack_of(o: &DynamicObject) -> Option<&str> {
    label(o, LABEL_CLUSTER_NAME)
}

fn deleting(o: &DynamicObject) -> bool {
    o.metadata.deletion_timestamp.is_some()
}

fn has_finalizer(o: &DynamicObject, f: &str) -> bool {
    o.metadata
        .finalizers
        .as_ref()
        .is_some_and(|fs| fs.iter().any(|x| x == f))
}

fn marked_for_deletion(o: &DynamicObject) -> bool {
    o.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(ANNOTATION_DELETE_MACHINE))
}

fn generation(o: &DynamicObject) -> i64 {
    o.metadata.generation.unwrap_or(0)
}

fn version_of(machine: &DynamicObject) -> &str {
    machine.data["spec"]["version"].as_str().unwrap_or_default()
}

/// `v1.31.1` as numbers, for the oldest version of a control plane.
fn version_key(v: &str) -> Vec<u64> {
    v.trim_start_matches('v')
        .split(['.', '-', '+'])
        .map_while(|p| p.parse().ok())
        .collect()
}

/// A condition to set: v1beta2 (`metav1.Condition`) or, for CAPO, v1beta1
/// (Cluster API's own, with a severity and no empty strings).
struct Cond<'a> {
    kind: &'a str,
    ok: bool,
    reason: &'a str,
    message: &'a str,
}

impl<'a> Cond<'a> {
    fn ok(kind: &'a str, reason: &'a str) -> Self {
        Cond {
            kind,
            ok: true,
            reason,
            message: "",
        }
    }

    fn not(kind: &'a str, reason: &'a str, message: &'a str) -> Self {
        Cond {
            kind,
            ok: false,
            reason,
            message,
        }
    }
}

/// The status of `o`, or an empty one.
fn status_of(o: &DynamicObject) -> Value {
    match &o.data["status"] {
        st @ Value::Object(_) => st.clone(),
        _ => json!({}),
    }
}

/// Sets a condition in `status.conditions`, keeping its transition time
/// when its status does not change.
fn set_condition(status: &mut Value, c: Cond<'_>, now: &str, v1beta1: bool) {
    let truth = if c.ok { "True" } else { "False" };
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let conditions = status["conditions"]
        .as_array_mut()
        .expect("an array was just set");
    let at = match conditions.iter().position(|x| x["type"] == c.kind) {
        Some(i) => i,
        None => {
            conditions.push(json!({ "type": c.kind }));
            conditions.len() - 1
        }
    };
    let cond = conditions[at]
        .as_object_mut()
        .expect("a condition is an object");
    if cond.get("status").and_then(Value::as_str) != Some(truth) {
        cond.insert("lastTransitionTime".into(), now.into());
    }
    cond.insert("status".into(), truth.into());
    if v1beta1 {
        // CAPO's v1beta1 conditions: reason and message are absent rather
        // than empty; a False one has a severity.
        for (key, value) in [("reason", c.reason), ("message", c.message)] {
            if value.is_empty() {
                cond.remove(key);
            } else {
                cond.insert(key.into(), value.into());
            }
        }
        if c.ok {
            cond.remove("severity");
        } else {
            cond.insert("severity".into(), "Error".into());
        }
    } else {
        cond.insert("reason".into(), c.reason.into());
        cond.insert("message".into(), c.message.into());
    }
}

/// The objects of the namespace at the start of a pass.
struct Objects {
    clusters: Vec<DynamicObject>,
    control_planes: Vec<DynamicObject>,
    deployments: Vec<DynamicObject>,
    machines: Vec<DynamicObject>,
    infrastructures: Vec<DynamicObject>,
}

impl Objects {
    fn of(&self, kind: Kind) -> &[DynamicObject] {
        match kind {
            Kind::Cluster => &self.clusters,
            Kind::KubeadmControlPlane => &self.control_planes,
            Kind::MachineDeployment => &self.deployments,
            Kind::Machine => &self.machines,
            Kind::OpenStackCluster => &self.infrastructures,
        }
    }

    fn children<'a>(&'a self, stack: &'a str) -> impl Iterator<Item = &'a DynamicObject> + 'a {
        Kind::CHILDREN
            .into_iter()
            .flat_map(|k| self.of(k))
            .filter(move |o| stack_of(o) == Some(stack))
    }

    /// Whether something still keeps `o` (of `kind`) from losing its
    /// finalizer: a Cluster's children, the Machines of a control plane,
    /// of a MachineDeployment or of an OpenStackCluster.
    fn has_dependents(&self, kind: Kind, o: &DynamicObject) -> bool {
        let stack = stack_of(o).unwrap_or_else(|| name(o));
        match kind {
            Kind::Cluster => self.children(stack).next().is_some(),
            Kind::Machine => false,
            _ => self
                .machines
                .iter()
                .any(|m| stack_of(m) == Some(stack) && depends_on(kind, o, m)),
        }
    }
}

/// Whether the Machine `m` of the same cluster keeps `o` (of `kind`).
fn depends_on(kind: Kind, o: &DynamicObject, m: &DynamicObject) -> bool {
    match kind {
        Kind::KubeadmControlPlane => label(m, LABEL_CONTROL_PLANE).is_some(),
        Kind::MachineDeployment => {
            label(m, LABEL_DEPLOYMENT).is_some_and(|ng| label(o, LABEL_DEPLOYMENT) == Some(ng))
        }
        Kind::OpenStackCluster => true,
        Kind::Cluster | Kind::Machine => false,
    }
}

/// The Machines of one cluster that one controller keeps.
#[derive(Clone, Copy)]
enum Group<'a> {
    ControlPlane,
    Workers(&'a str),
}

impl Group<'_> {
    fn owns(self, m: &DynamicObject) -> bool {
        match self {
            Group::ControlPlane => label(m, LABEL_CONTROL_PLANE).is_some(),
            Group::Workers(ng) => label(m, LABEL_DEPLOYMENT) == Some(ng),
        }
    }
}

/// A nodegroup the topology names: its name and replicas (`None`: left to
/// the autoscaler).
struct Wanted {
    name: String,
    replicas: Option<i64>,
}

/// One pass: the writes it made and its time.
struct Pass<'a> {
    sim: &'a Sim,
    writes: usize,
    now: String,
}

impl Pass<'_> {
    fn api(&self, kind: Kind) -> Api<DynamicObject> {
        self.sim.api(kind)
    }

    fn wrote(&mut self, stack: &str) {
        self.writes += 1;
        self.sim.wrote(stack);
    }

    async fn list(&self, kind: Kind) -> Result<Vec<DynamicObject>, SimError> {
        let mut items = self
            .api(kind)
            .list(&ListParams::default())
            .await
            .map_err(|e| api_error("list", kind, "", e))?
            .items;
        items.sort_by(|a, b| name(a).cmp(name(b)));
        Ok(items)
    }

    async fn run(&mut self) -> Result<(), SimError> {
        let objects = Objects {
            clusters: self.list(Kind::Cluster).await?,
            control_planes: self.list(Kind::KubeadmControlPlane).await?,
            deployments: self.list(Kind::MachineDeployment).await?,
            machines: self.list(Kind::Machine).await?,
            infrastructures: self.list(Kind::OpenStackCluster).await?,
        };
        let mut live = BTreeSet::new();
        for c in &objects.clusters {
            if !deleting(c) {
                live.insert(name(c).to_string());
                self.cluster(c, &objects).await?;
            }
        }
        self.collect(&objects, &live).await
    }

    /// Reconciles the objects of one topology Cluster.
    async fn cluster(&mut self, c: &DynamicObject, objects: &Objects) -> Result<(), SimError> {
        let stack = name(c).to_string();
        let (mode, topology_failure) = self.sim.mode(&stack);
        let mut c = c.clone();
        if !has_finalizer(&c, Kind::Cluster.finalizer()) {
            let mut finalizers = c.metadata.finalizers.clone().unwrap_or_default();
            finalizers.push(Kind::Cluster.finalizer().to_string());
            let Some(next) = self
                .patch_metadata(
                    Kind::Cluster,
                    &stack,
                    &c,
                    json!({ "finalizers": finalizers }),
                )
                .await?
            else {
                return Ok(());
            };
            c = next;
        }
        let topology = c.data["spec"]["topology"].clone();
        if !topology.is_object() {
            // Not a topology Cluster: nothing of it is simulated.
            return Ok(());
        }
        let version = topology["version"].as_str().unwrap_or_default().to_string();
        // A topology that fails to reconcile reaches no object.
        let apply = topology_failure.is_none();
        let own = |kind: Kind| -> Vec<DynamicObject> {
            objects
                .of(kind)
                .iter()
                .filter(|o| stack_of(o) == Some(stack.as_str()))
                .cloned()
                .collect()
        };
        let machines = own(Kind::Machine);
        let live_machines = |g: Group<'_>| -> Vec<DynamicObject> {
            machines
                .iter()
                .filter(|m| g.owns(m) && !deleting(m))
                .cloned()
                .collect()
        };

        // The control plane.
        let kcp_name = format!("{stack}-control-plane");
        let mut kcp = own(Kind::KubeadmControlPlane)
            .into_iter()
            .find(|o| name(o) == kcp_name);
        if apply {
            let replicas = topology["controlPlane"]["replicas"].as_i64().unwrap_or(1);
            kcp = self
                .ensure_control_plane(&stack, kcp, replicas, &version)
                .await?;
        }
        let mut cp_machines = live_machines(Group::ControlPlane);
        if let Some(kcp) = kcp.as_ref().filter(|k| !deleting(k)) {
            let want = kcp.data["spec"]["replicas"].as_i64().unwrap_or(1);
            let v = kcp.data["spec"]["version"].as_str().unwrap_or_default();
            cp_machines = self
                .machines(&stack, Group::ControlPlane, want, v, cp_machines)
                .await?;
        }

        // The workers.
        let wanted: Vec<Wanted> = topology["workers"]["machineDeployments"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|t| {
                Some(Wanted {
                    name: t["name"].as_str()?.to_string(),
                    replicas: t["replicas"].as_i64(),
                })
            })
            .collect();
        let deployments = own(Kind::MachineDeployment);
        let mut workers = Vec::new();
        for w in &wanted {
            let md_name = format!("{stack}-{}", w.name);
            let mut md = deployments.iter().find(|o| name(o) == md_name).cloned();
            if apply {
                md = self
                    .ensure_deployment(&stack, &w.name, md, w.replicas, &version)
                    .await?;
            }
            let Some(md) = md.filter(|m| !deleting(m)) else {
                continue;
            };
            let group = Group::Workers(&w.name);
            let want = md.data["spec"]["replicas"].as_i64().unwrap_or(1);
            let v = md.data["spec"]["template"]["spec"]["version"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let ms = self
                .machines(&stack, group, want, &v, live_machines(group))
                .await?;
            workers.push((md, ms));
        }
        if apply {
            // Nodegroups the topology no longer names.
            for md in deployments.iter().filter(|m| !deleting(m)) {
                let Some(ng) = label(md, LABEL_DEPLOYMENT) else {
                    continue;
                };
                if !wanted.iter().any(|w| w.name == ng) {
                    for m in live_machines(Group::Workers(ng)) {
                        self.delete(Kind::Machine, &stack, name(&m)).await?;
                    }
                    self.delete(Kind::MachineDeployment, &stack, name(md))
                        .await?;
                }
            }
        }

        let mut osc = own(Kind::OpenStackCluster)
            .into_iter()
            .find(|o| name(o) == stack);
        if apply && osc.is_none() {
            osc = Some(self.create_infrastructure(&stack).await?);
        }

        if mode == Mode::Provisioning && topology_failure.is_none() {
            return Ok(());
        }
        // Statuses, leaves first; the Cluster last.
        let upgrading = kcp
            .iter()
            .any(|k| k.data["spec"]["version"] != version.as_str())
            || workers
                .iter()
                .any(|(md, _)| md.data["spec"]["template"]["spec"]["version"] != version.as_str())
            || cp_machines
                .iter()
                .chain(workers.iter().flat_map(|(_, ms)| ms))
                .any(|m| version_of(m) != version);
        if mode != Mode::Provisioning {
            for m in cp_machines
                .iter()
                .chain(workers.iter().flat_map(|(_, ms)| ms))
            {
                self.machine_status(&stack, m, &mode).await?;
            }
            if let (Mode::Ready, Some(kcp)) = (&mode, kcp.as_ref().filter(|k| !deleting(k))) {
                self.control_plane_status(&stack, kcp, &cp_machines).await?;
            }
            for (md, ms) in &workers {
                self.deployment_status(&stack, md, ms, &mode).await?;
            }
            if let Some(osc) = &osc {
                self.infrastructure_status(&stack, osc, &mode).await?;
            }
        }
        self.cluster_status(c, &mode, topology_failure.as_deref(), upgrading)
            .await
    }

    async fn ensure_control_plane(
        &mut self,
        stack: &str,
        kcp: Option<DynamicObject>,
        replicas: i64,
        version: &str,
    ) -> Result<Option<DynamicObject>, SimError> {
        let Some(kcp) = kcp else {
            let name = format!("{stack}-control-plane");
            let spec = json!({
                "replicas": replicas,
                "version": version,
                "machineTemplate": { "spec": {
                    "infrastructureRef": infrastructure_ref("OpenStackMachineTemplate", &name),
                }},
            });
            return self
                .create(
                    Kind::KubeadmControlPlane,
                    stack,
                    &name,
                    labels(stack, None),
                    spec,
                )
                .await
                .map(Some);
        };
        let spec = &kcp.data["spec"];
        if deleting(&kcp) || (spec["replicas"] == replicas && spec["version"] == version) {
            return Ok(Some(kcp));
        }
        let patch = json!({ "spec": { "replicas": replicas, "version": version } });
        self.patch(Kind::KubeadmControlPlane, stack, name(&kcp), patch)
            .await
    }

    async fn ensure_deployment(
        &mut self,
        stack: &str,
        nodegroup: &str,
        md: Option<DynamicObject>,
        replicas: Option<i64>,
        version: &str,
    ) -> Result<Option<DynamicObject>, SimError> {
        let Some(md) = md else {
            let name = format!("{stack}-{nodegroup}");
            let selected = labels(stack, Some(nodegroup));
            let spec = json!({
                "clusterName": stack,
                "replicas": replicas.unwrap_or(1),
                "selector": { "matchLabels": selected },
                "template": {
                    "metadata": { "labels": selected },
                    "spec": {
                        "clusterName": stack,
                        "version": version,
                        "bootstrap": { "dataSecretName": format!("{name}-bootstrap") },
                        "infrastructureRef": infrastructure_ref("OpenStackMachineTemplate", &name),
                    },
                },
            });
            return self
                .create(Kind::MachineDeployment, stack, &name, selected, spec)
                .await
                .map(Some);
        };
        let spec = &md.data["spec"];
        // Without replicas in the topology the size is the autoscaler's.
        let replicas = replicas.unwrap_or_else(|| spec["replicas"].as_i64().unwrap_or(1));
        if deleting(&md)
            || (spec["replicas"] == replicas && spec["template"]["spec"]["version"] == version)
        {
            return Ok(Some(md));
        }
        let patch = json!({ "spec": {
            "replicas": replicas,
            "template": { "spec": { "version": version } },
        }});
        self.patch(Kind::MachineDeployment, stack, name(&md), patch)
            .await
    }

    /// Keeps `want` Machines at `version` in a group, from its live
    /// Machines `have`: a scale down removes the Machines annotated
    /// delete-machine first, then the outdated, then the newest; a scale
    /// up adds Machines at `version`; at the right count, one outdated
    /// Machine is replaced per pass (a rolling update, one surge). The
    /// group's Machines afterwards, by name.
    async fn machines(
        &mut self,
        stack: &str,
        group: Group<'_>,
        want: i64,
        version: &str,
        mut have: Vec<DynamicObject>,
    ) -> Result<Vec<DynamicObject>, SimError> {
        let want = usize::try_from(want).unwrap_or(0);
        // The order of removal: annotated, outdated, then the newest name.
        have.sort_by(|a, b| {
            let key = |m: &DynamicObject| (!marked_for_deletion(m), version_of(m) == version);
            key(a).cmp(&key(b)).then_with(|| name(b).cmp(name(a)))
        });
        while have.len() > want {
            let m = have.remove(0);
            self.delete(Kind::Machine, stack, name(&m)).await?;
        }
        let outdated = have.iter().position(|m| version_of(m) != version);
        while have.len() < want {
            have.push(self.create_machine(stack, group, version).await?);
        }
        if let Some(i) = outdated.filter(|_| want > 0) {
            have.push(self.create_machine(stack, group, version).await?);
            let m = have.remove(i);
            self.delete(Kind::Machine, stack, name(&m)).await?;
        }
        have.sort_by(|a, b| name(a).cmp(name(b)));
        Ok(have)
    }

    async fn create_machine(
        &mut self,
        stack: &str,
        group: Group<'_>,
        version: &str,
    ) -> Result<DynamicObject, SimError> {
        let n = self.sim.next();
        let (part, nodegroup) = match group {
            Group::ControlPlane => ("control-plane", None),
            Group::Workers(ng) => (ng, Some(ng)),
        };
        let name = format!("{stack}-{part}-{n:04}");
        let spec = json!({
            "clusterName": stack,
            "version": version,
            "bootstrap": { "dataSecretName": format!("{name}-bootstrap") },
            "infrastructureRef": infrastructure_ref("OpenStackMachine", &name),
            "providerID": format!("{PROVIDER_ID_PREFIX}{n:012}"),
        });
        let mut lbls = labels(stack, nodegroup);
        if nodegroup.is_none() {
            lbls[LABEL_CONTROL_PLANE] = "".into();
        }
        self.create(Kind::Machine, stack, &name, lbls, spec).await
    }

    async fn create_infrastructure(&mut self, stack: &str) -> Result<DynamicObject, SimError> {
        let spec = json!({
            "identityRef": {
                "cloudName": "openstack",
                "name": format!("{stack}-cloud-config"),
                "type": "Secret",
            },
            "managedSubnets": [{ "cidr": "10.0.0.0/24" }],
        });
        self.create(
            Kind::OpenStackCluster,
            stack,
            stack,
            labels(stack, None),
            spec,
        )
        .await
    }

    async fn machine_status(
        &mut self,
        stack: &str,
        m: &DynamicObject,
        mode: &Mode,
    ) -> Result<(), SimError> {
        let mut st = status_of(m);
        let now = self.now.clone();
        match mode {
            Mode::Ready => {
                let address = machine_address(m).unwrap_or_else(|| "10.0.0.1".to_string());
                let infra = Cond::ok("InfrastructureReady", "Ready");
                set_condition(&mut st, infra, &now, false);
                set_condition(&mut st, Cond::ok("NodeHealthy", "NodeHealthy"), &now, false);
                st["initialization"] = json!({
                    "infrastructureProvisioned": true,
                    "bootstrapDataSecretCreated": true,
                });
                st["nodeRef"] = json!({ "name": name(m) });
                st["addresses"] = json!([{ "type": "InternalIP", "address": address }]);
                st["phase"] = "Running".into();
            }
            Mode::Failed(message) => {
                let infra = Cond::not("InfrastructureReady", "InstanceCreateFailed", message);
                let node = Cond::not("NodeHealthy", "NodeDoesNotExist", "");
                set_condition(&mut st, infra, &now, false);
                set_condition(&mut st, node, &now, false);
                st["phase"] = "Failed".into();
            }
            Mode::Provisioning => return Ok(()),
        }
        st["observedGeneration"] = generation(m).into();
        self.write_status(Kind::Machine, stack, m, st).await
    }

    async fn control_plane_status(
        &mut self,
        stack: &str,
        kcp: &DynamicObject,
        machines: &[DynamicObject],
    ) -> Result<(), SimError> {
        let want = kcp.data["spec"]["version"].as_str().unwrap_or_default();
        let count = machines.len();
        let up_to_date = machines.iter().filter(|m| version_of(m) == want).count();
        // The oldest version a control-plane Machine runs.
        let version = machines
            .iter()
            .map(version_of)
            .min_by_key(|v| version_key(v))
            .unwrap_or(want);
        let mut st = status_of(kcp);
        let available = Cond::ok("Available", "Available");
        set_condition(&mut st, available, &self.now.clone(), false);
        st["initialization"] = json!({ "controlPlaneInitialized": true });
        st["replicas"] = count.into();
        st["readyReplicas"] = count.into();
        st["availableReplicas"] = count.into();
        st["upToDateReplicas"] = up_to_date.into();
        st["version"] = version.into();
        st["observedGeneration"] = generation(kcp).into();
        self.write_status(Kind::KubeadmControlPlane, stack, kcp, st)
            .await
    }

    async fn deployment_status(
        &mut self,
        stack: &str,
        md: &DynamicObject,
        machines: &[DynamicObject],
        mode: &Mode,
    ) -> Result<(), SimError> {
        let spec = md.data["spec"]["replicas"].as_i64().unwrap_or(1);
        let want = md.data["spec"]["template"]["spec"]["version"]
            .as_str()
            .unwrap_or_default();
        let count = i64::try_from(machines.len()).unwrap_or(i64::MAX);
        let up_to_date = machines.iter().filter(|m| version_of(m) == want).count();
        let mut st = status_of(md);
        let now = self.now.clone();
        st["observedGeneration"] = generation(md).into();
        st["replicas"] = count.into();
        st["upToDateReplicas"] = up_to_date.into();
        match mode {
            Mode::Ready => {
                st["readyReplicas"] = count.into();
                st["availableReplicas"] = count.into();
                st["phase"] = match count.cmp(&spec) {
                    std::cmp::Ordering::Less => "ScalingUp",
                    std::cmp::Ordering::Greater => "ScalingDown",
                    std::cmp::Ordering::Equal => "Running",
                }
                .into();
                let available = Cond::ok("Available", "Available");
                set_condition(&mut st, available, &now, false);
            }
            Mode::Failed(message) => {
                st["readyReplicas"] = 0.into();
                st["availableReplicas"] = 0.into();
                st["phase"] = "Failed".into();
                let available = Cond::not("Available", "NotAvailable", message);
                set_condition(&mut st, available, &now, false);
            }
            Mode::Provisioning => return Ok(()),
        }
        self.write_status(Kind::MachineDeployment, stack, md, st)
            .await
    }

    async fn infrastructure_status(
        &mut self,
        stack: &str,
        osc: &DynamicObject,
        mode: &Mode,
    ) -> Result<(), SimError> {
        let mut st = status_of(osc);
        let now = self.now.clone();
        let ready = match mode {
            Mode::Ready => {
                if let Some(o) = st.as_object_mut() {
                    o.remove("failureMessage");
                    o.remove("failureReason");
                }
                let cond = Cond::ok("Ready", "");
                set_condition(&mut st, cond, &now, true);
                true
            }
            Mode::Failed(message) => {
                st["failureMessage"] = message.as_str().into();
                let cond = Cond::not("Ready", "InstanceCreateFailed", message);
                set_condition(&mut st, cond, &now, true);
                false
            }
            Mode::Provisioning => return Ok(()),
        };
        st["ready"] = ready.into();
        st["initialization"] = json!({ "provisioned": ready });
        self.write_status(Kind::OpenStackCluster, stack, osc, st)
            .await
    }

    async fn cluster_status(
        &mut self,
        mut c: DynamicObject,
        mode: &Mode,
        topology_failure: Option<&str>,
        upgrading: bool,
    ) -> Result<(), SimError> {
        let stack = name(&c).to_string();
        let ready = *mode == Mode::Ready;
        if ready
            && c.data["spec"]["controlPlaneEndpoint"]["host"]
                .as_str()
                .is_none()
        {
            let patch = json!({ "spec": { "controlPlaneEndpoint": {
                "host": ENDPOINT_HOST, "port": ENDPOINT_PORT,
            }}});
            match self.patch(Kind::Cluster, &stack, &stack, patch).await? {
                Some(next) => c = next,
                None => return Ok(()),
            }
        }
        let mut st = status_of(&c);
        let now = self.now.clone();
        st["observedGeneration"] = generation(&c).into();
        if *mode != Mode::Provisioning {
            let (infrastructure, control_plane, workers) = match mode {
                Mode::Failed(message) => (
                    Cond::not("InfrastructureReady", "InstanceCreateFailed", message),
                    Cond::not("ControlPlaneAvailable", "NotAvailable", ""),
                    Cond::not("WorkersAvailable", "NotAvailable", ""),
                ),
                _ => (
                    Cond::ok("InfrastructureReady", "Ready"),
                    Cond::ok("ControlPlaneAvailable", "Available"),
                    Cond::ok("WorkersAvailable", "Available"),
                ),
            };
            for cond in [infrastructure, control_plane, workers] {
                set_condition(&mut st, cond, &now, false);
            }
            if ready {
                st["phase"] = "Provisioned".into();
                st["initialization"] =
                    json!({ "infrastructureProvisioned": true, "controlPlaneInitialized": true });
            }
        }
        let topology = match topology_failure {
            Some(message) => Cond::not("TopologyReconciled", "ReconcileFailed", message),
            None if upgrading => Cond::not("TopologyReconciled", "ClusterUpgrading", ""),
            None => Cond::ok("TopologyReconciled", "ReconcileSucceeded"),
        };
        set_condition(&mut st, topology, &now, false);
        self.write_status(Kind::Cluster, &stack, &c, st).await
    }

    /// Deletes what a gone or deleted Cluster leaves and what a deleted
    /// owner keeps (the Machines of a deleted MachineDeployment or control
    /// plane), and removes each finalizer once nothing depends on its
    /// object. One pass acts on what the pass listed: a deletion made in it
    /// is finalized in the next.
    async fn collect(
        &mut self,
        objects: &Objects,
        live: &BTreeSet<String>,
    ) -> Result<(), SimError> {
        for kind in Kind::CHILDREN {
            for o in objects.of(kind) {
                let Some(stack) = stack_of(o) else {
                    continue;
                };
                if !deleting(o) {
                    let owner_deleted = kind == Kind::Machine
                        && [Kind::KubeadmControlPlane, Kind::MachineDeployment]
                            .into_iter()
                            .any(|k| {
                                objects.of(k).iter().any(|owner| {
                                    stack_of(owner) == Some(stack)
                                        && deleting(owner)
                                        && depends_on(k, owner, o)
                                })
                            });
                    if !live.contains(stack) || owner_deleted {
                        self.delete(kind, stack, name(o)).await?;
                    }
                    continue;
                }
                if has_finalizer(o, kind.finalizer()) && !objects.has_dependents(kind, o) {
                    self.remove_finalizer(kind, stack, o).await?;
                }
            }
        }
        for c in objects.clusters.iter().filter(|c| deleting(c)) {
            let stack = name(c);
            if c.data["status"]["phase"] != "Deleting" {
                let mut st = status_of(c);
                st["phase"] = "Deleting".into();
                self.write_status(Kind::Cluster, stack, c, st).await?;
            }
            if has_finalizer(c, Kind::Cluster.finalizer())
                && !objects.has_dependents(Kind::Cluster, c)
            {
                self.remove_finalizer(Kind::Cluster, stack, c).await?;
            }
        }
        Ok(())
    }

    async fn create(
        &mut self,
        kind: Kind,
        stack: &str,
        name: &str,
        labels: Value,
        spec: Value,
    ) -> Result<DynamicObject, SimError> {
        let mut o = DynamicObject::new(name, &kind.resource())
            .within(&self.sim.inner.namespace)
            .data(json!({ "spec": spec }));
        o.metadata.labels = serde_json::from_value(labels).ok();
        o.metadata.finalizers = Some(vec![kind.finalizer().to_string()]);
        let created = self
            .api(kind)
            .create(&PostParams::default(), &o)
            .await
            .map_err(|e| api_error("create", kind, name, e))?;
        self.wrote(stack);
        Ok(created)
    }

    /// A merge patch of `name`; `None` when it is gone.
    async fn patch(
        &mut self,
        kind: Kind,
        stack: &str,
        name: &str,
        patch: Value,
    ) -> Result<Option<DynamicObject>, SimError> {
        let r = self
            .api(kind)
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        match r {
            Ok(o) => {
                self.wrote(stack);
                Ok(Some(o))
            }
            Err(kube::Error::Api(s)) if s.is_not_found() => Ok(None),
            Err(e) => Err(api_error("patch", kind, name, e)),
        }
    }

    /// A merge patch of `o`'s metadata at its resource version; `None`
    /// when it is gone or changed since (a conflict: the next pass
    /// retries, so it counts as a write).
    async fn patch_metadata(
        &mut self,
        kind: Kind,
        stack: &str,
        o: &DynamicObject,
        mut metadata: Value,
    ) -> Result<Option<DynamicObject>, SimError> {
        metadata["resourceVersion"] = o.metadata.resource_version.clone().into();
        let r = self
            .api(kind)
            .patch(
                name(o),
                &PatchParams::default(),
                &Patch::Merge(&json!({ "metadata": metadata })),
            )
            .await;
        match r {
            Ok(next) => {
                self.wrote(stack);
                Ok(Some(next))
            }
            Err(kube::Error::Api(s)) if s.is_not_found() => Ok(None),
            Err(kube::Error::Api(s)) if s.is_conflict() => {
                self.writes += 1;
                Ok(None)
            }
            Err(e) => Err(api_error("patch", kind, name(o), e)),
        }
    }

    async fn remove_finalizer(
        &mut self,
        kind: Kind,
        stack: &str,
        o: &DynamicObject,
    ) -> Result<(), SimError> {
        let finalizers: Vec<&String> = o
            .metadata
            .finalizers
            .iter()
            .flatten()
            .filter(|f| *f != kind.finalizer())
            .collect();
        self.patch_metadata(kind, stack, o, json!({ "finalizers": finalizers }))
            .await
            .map(drop)
    }

    /// Deletes `name`; one that is gone already is fine.
    async fn delete(&mut self, kind: Kind, stack: &str, name: &str) -> Result<(), SimError> {
        match self.api(kind).delete(name, &DeleteParams::default()).await {
            Ok(_) => {
                self.wrote(stack);
                Ok(())
            }
            Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
            Err(e) => Err(api_error("delete", kind, name, e)),
        }
    }

    /// Replaces the status of `o` with `next` unless it is the same; a
    /// conflict is left to the next pass (and counts as a write).
    async fn write_status(
        &mut self,
        kind: Kind,
        stack: &str,
        o: &DynamicObject,
        next: Value,
    ) -> Result<(), SimError> {
        if o.data.get("status") == Some(&next) {
            return Ok(());
        }
        let ar = kind.resource();
        let mut o = o.clone();
        o.types = Some(TypeMeta {
            api_version: ar.api_version,
            kind: ar.kind,
        });
        o.data["status"] = next;
        let r = self
            .api(kind)
            .replace_status(name(&o), &PostParams::default(), &o)
            .await;
        match r {
            Ok(_) => {
                self.wrote(stack);
                Ok(())
            }
            Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
            Err(kube::Error::Api(s)) if s.is_conflict() => {
                self.writes += 1;
                Ok(())
            }
            Err(e) => Err(api_error("write the status of", kind, name(&o), e)),
        }
    }
}

fn api_error(action: &'static str, kind: Kind, name: &str, e: kube::Error) -> SimError {
    SimError::Api {
        action,
        kind,
        name: name.to_string(),
        source: Box::new(e),
    }
}

/// The labels of a cluster's object, with the nodegroup's for a worker.
fn labels(stack: &str, nodegroup: Option<&str>) -> Value {
    let mut l = json!({ LABEL_CLUSTER_NAME: stack });
    if let Some(ng) = nodegroup {
        l[LABEL_DEPLOYMENT] = ng.into();
    }
    l
}

/// A v1beta2 reference to a CAPO object.
fn infrastructure_ref(kind: &str, name: &str) -> Value {
    json!({ "apiGroup": INFRASTRUCTURE_GROUP, "kind": kind, "name": name })
}
