//! The records of the contract as plain Rust types: Magnum's rows with
//! labels as maps, the state a call works on, what it answers, and the
//! Kubernetes envelopes. Each converts to and from its generated binding
//! at the boundary (the [`Driver`](crate::Driver) trait never sees the
//! bindings).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::bindings::exports::openkeel::magnum_driver::driver as wd;
use crate::bindings::exports::openkeel::magnum_driver::lifecycle as wl;
use crate::bindings::openkeel::magnum_driver::types as wt;

/// UTC microseconds since 1970-01-01T00:00:00Z. A driver echoes the
/// `updated_at` it was given: the conductor's compare-and-swap compares it
/// exactly.
pub type Timestamp = i64;

/// A JSON object of strings: `health_status_reason`, a node taint.
pub type StringMap = BTreeMap<String, String>;

/// A label map (`labels`, `node_labels`), in key order. Typed readers with
/// Magnum's error messages are in [`crate::labels`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Labels(pub StringMap);

/// The empty label map, for rows whose labels are NULL.
pub(crate) static NO_LABELS: Labels = Labels(BTreeMap::new());

impl Labels {
    /// An empty map.
    pub fn new() -> Labels {
        Labels(BTreeMap::new())
    }

    /// A copy with `key` set to `value`.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Labels {
        self.0.insert(key.into(), value.into());
        self
    }

    fn from_wire(v: Vec<(String, String)>) -> Labels {
        // A repeated key keeps its last value, as a JSON object would.
        Labels(v.into_iter().collect())
    }

    fn into_wire(self) -> Vec<(String, String)> {
        self.0.into_iter().collect()
    }
}

impl Deref for Labels {
    type Target = StringMap;
    fn deref(&self) -> &StringMap {
        &self.0
    }
}

impl DerefMut for Labels {
    fn deref_mut(&mut self) -> &mut StringMap {
        &mut self.0
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Labels {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Labels {
        Labels(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl<K: Into<String>, V: Into<String>, const N: usize> From<[(K, V); N]> for Labels {
    fn from(pairs: [(K, V); N]) -> Labels {
        pairs.into_iter().collect()
    }
}

fn map_from(v: Vec<(String, String)>) -> StringMap {
    v.into_iter().collect()
}

fn map_into(m: StringMap) -> Vec<(String, String)> {
    m.into_iter().collect()
}

/// Magnum's cluster, nodegroup and federation statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    CreateInProgress,
    CreateFailed,
    CreateComplete,
    UpdateInProgress,
    UpdateFailed,
    UpdateComplete,
    DeleteInProgress,
    DeleteFailed,
    DeleteComplete,
    ResumeComplete,
    ResumeFailed,
    RestoreComplete,
    RollbackInProgress,
    RollbackFailed,
    RollbackComplete,
    SnapshotComplete,
    CheckComplete,
    AdoptComplete,
}

impl Status {
    /// Magnum's spelling: `CREATE_IN_PROGRESS`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::CreateInProgress => "CREATE_IN_PROGRESS",
            Status::CreateFailed => "CREATE_FAILED",
            Status::CreateComplete => "CREATE_COMPLETE",
            Status::UpdateInProgress => "UPDATE_IN_PROGRESS",
            Status::UpdateFailed => "UPDATE_FAILED",
            Status::UpdateComplete => "UPDATE_COMPLETE",
            Status::DeleteInProgress => "DELETE_IN_PROGRESS",
            Status::DeleteFailed => "DELETE_FAILED",
            Status::DeleteComplete => "DELETE_COMPLETE",
            Status::ResumeComplete => "RESUME_COMPLETE",
            Status::ResumeFailed => "RESUME_FAILED",
            Status::RestoreComplete => "RESTORE_COMPLETE",
            Status::RollbackInProgress => "ROLLBACK_IN_PROGRESS",
            Status::RollbackFailed => "ROLLBACK_FAILED",
            Status::RollbackComplete => "ROLLBACK_COMPLETE",
            Status::SnapshotComplete => "SNAPSHOT_COMPLETE",
            Status::CheckComplete => "CHECK_COMPLETE",
            Status::AdoptComplete => "ADOPT_COMPLETE",
        }
    }

    /// Whether an operation is running (`*_IN_PROGRESS`).
    pub fn in_progress(self) -> bool {
        matches!(
            self,
            Status::CreateInProgress
                | Status::UpdateInProgress
                | Status::DeleteInProgress
                | Status::RollbackInProgress
        )
    }

    /// Whether the status ends an operation in failure (`*_FAILED`).
    pub fn failed(self) -> bool {
        self.as_str().ends_with("_FAILED")
    }

    /// Whether the status ends an operation successfully (`*_COMPLETE`).
    pub fn complete(self) -> bool {
        self.as_str().ends_with("_COMPLETE")
    }
}

impl Status {
    /// Every status, in Magnum's order.
    pub const ALL: [Status; 18] = [
        Status::CreateInProgress,
        Status::CreateFailed,
        Status::CreateComplete,
        Status::UpdateInProgress,
        Status::UpdateFailed,
        Status::UpdateComplete,
        Status::DeleteInProgress,
        Status::DeleteFailed,
        Status::DeleteComplete,
        Status::ResumeComplete,
        Status::ResumeFailed,
        Status::RestoreComplete,
        Status::RollbackInProgress,
        Status::RollbackFailed,
        Status::RollbackComplete,
        Status::SnapshotComplete,
        Status::CheckComplete,
        Status::AdoptComplete,
    ];
}

/// Magnum's spelling (`CREATE_COMPLETE`); anything else is an error naming
/// the text.
impl std::str::FromStr for Status {
    type Err = String;

    fn from_str(s: &str) -> Result<Status, String> {
        Status::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not a Magnum status"))
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! status_map {
    ($($v:ident),* $(,)?) => {
        impl From<wt::Status> for Status {
            fn from(s: wt::Status) -> Status {
                match s { $(wt::Status::$v => Status::$v,)* }
            }
        }
        impl From<Status> for wt::Status {
            fn from(s: Status) -> wt::Status {
                match s { $(Status::$v => wt::Status::$v,)* }
            }
        }
    };
}

status_map!(
    CreateInProgress,
    CreateFailed,
    CreateComplete,
    UpdateInProgress,
    UpdateFailed,
    UpdateComplete,
    DeleteInProgress,
    DeleteFailed,
    DeleteComplete,
    ResumeComplete,
    ResumeFailed,
    RestoreComplete,
    RollbackInProgress,
    RollbackFailed,
    RollbackComplete,
    SnapshotComplete,
    CheckComplete,
    AdoptComplete,
);

/// One cluster type: Magnum's `{server_type, os, coe}`; `os` is the
/// template's `cluster_distro`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target {
    pub server_type: String,
    pub os: String,
    pub coe: String,
}

impl Target {
    /// A target from its three parts.
    pub fn new(server_type: &str, os: &str, coe: &str) -> Target {
        Target {
            server_type: server_type.to_string(),
            os: os.to_string(),
            coe: coe.to_string(),
        }
    }
}

/// One entry point: the name a cluster template stores in `driver`. It
/// must agree with the manifest's `[[entry-points]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryPoint {
    pub name: String,
    /// Chosen by cluster type only where `[drivers]/enabled_beta_drivers`
    /// lists it.
    pub beta: bool,
    pub provides: Vec<Target>,
    /// One line for `driver list`.
    pub description: String,
}

impl EntryPoint {
    /// A non-beta entry point.
    pub fn new(name: &str, description: &str, provides: Vec<Target>) -> EntryPoint {
        EntryPoint {
            name: name.to_string(),
            beta: false,
            provides,
            description: description.to_string(),
        }
    }
}

/// A row of `cluster_template`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterTemplate {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub project_id: String,
    pub user_id: String,
    pub flavor_id: Option<String>,
    pub master_flavor_id: Option<String>,
    pub keypair_id: Option<String>,
    pub image_id: Option<String>,
    pub external_network_id: Option<String>,
    pub fixed_network: Option<String>,
    pub fixed_subnet: Option<String>,
    pub network_driver: Option<String>,
    pub volume_driver: Option<String>,
    pub dns_nameserver: Option<String>,
    pub apiserver_port: Option<i32>,
    pub docker_volume_size: Option<i32>,
    pub docker_storage_driver: Option<String>,
    pub cluster_distro: Option<String>,
    pub coe: Option<String>,
    pub http_proxy: Option<String>,
    pub https_proxy: Option<String>,
    pub no_proxy: Option<String>,
    pub registry_enabled: Option<bool>,
    pub labels: Option<Labels>,
    pub tls_disabled: Option<bool>,
    pub public: Option<bool>,
    pub server_type: Option<String>,
    pub insecure_registry: Option<String>,
    pub master_lb_enabled: Option<bool>,
    pub floating_ip_enabled: Option<bool>,
    pub hidden: Option<bool>,
    pub tags: Option<String>,
    pub driver: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Option<Timestamp>,
}

/// A row of `cluster`. Node counts live in its nodegroups.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub project_id: String,
    pub user_id: String,
    pub cluster_template_id: String,
    pub keypair: Option<String>,
    pub docker_volume_size: Option<i32>,
    pub labels: Option<Labels>,
    pub master_flavor_id: Option<String>,
    pub flavor_id: Option<String>,
    pub stack_id: Option<String>,
    pub api_address: Option<String>,
    pub status: Option<Status>,
    pub status_reason: Option<String>,
    pub health_status: Option<String>,
    pub health_status_reason: Option<StringMap>,
    pub create_timeout: Option<i32>,
    pub discovery_url: Option<String>,
    pub coe_version: Option<String>,
    pub container_version: Option<String>,
    pub ca_cert_ref: Option<String>,
    pub magnum_cert_ref: Option<String>,
    pub etcd_ca_cert_ref: Option<String>,
    pub front_proxy_ca_cert_ref: Option<String>,
    pub fixed_network: Option<String>,
    pub fixed_subnet: Option<String>,
    pub floating_ip_enabled: Option<bool>,
    pub master_lb_enabled: Option<bool>,
    pub created_at: Timestamp,
    pub updated_at: Option<Timestamp>,
}

/// A row of `nodegroup`. `cluster_id` is the cluster's uuid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeGroup {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub cluster_id: String,
    pub project_id: String,
    pub docker_volume_size: Option<i32>,
    pub labels: Option<Labels>,
    pub flavor_id: Option<String>,
    pub image_id: Option<String>,
    pub node_addresses: Option<Vec<String>>,
    pub node_count: Option<i32>,
    pub max_node_count: Option<i32>,
    pub min_node_count: Option<i32>,
    pub role: Option<String>,
    pub is_default: Option<bool>,
    pub stack_id: Option<String>,
    pub status: Option<Status>,
    pub status_reason: Option<String>,
    pub version: Option<String>,
    pub node_labels: Option<Labels>,
    /// Each taint as the client sent it (`key`, `value`, `effect`, …).
    pub node_taints: Option<Vec<StringMap>>,
    pub created_at: Timestamp,
    pub updated_at: Option<Timestamp>,
}

macro_rules! labelled {
    ($t:ty) => {
        impl $t {
            /// The row's labels (empty when the column is NULL).
            pub fn labels(&self) -> &Labels {
                self.labels.as_ref().unwrap_or(&NO_LABELS)
            }

            /// One label.
            pub fn label(&self, key: &str) -> Option<&str> {
                self.labels().get(key).map(String::as_str)
            }

            /// Sets one label (a NULL column becomes a map).
            pub fn set_label(&mut self, key: impl Into<String>, value: impl Into<String>) {
                self.labels
                    .get_or_insert_with(Labels::new)
                    .insert(key.into(), value.into());
            }
        }
    };
}

labelled!(ClusterTemplate);
labelled!(Cluster);
labelled!(NodeGroup);

impl NodeGroup {
    /// Whether this is the cluster's default master nodegroup or one of
    /// its control-plane nodegroups (`role` master).
    pub fn is_master(&self) -> bool {
        self.role.as_deref() == Some("master")
    }

    /// Whether this is one of the two nodegroups created with the cluster.
    pub fn is_default(&self) -> bool {
        self.is_default == Some(true)
    }
}

/// The rows a call works on: the cluster, its template and every
/// nodegroup of the cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterState {
    pub cluster: Cluster,
    pub template: ClusterTemplate,
    pub nodegroups: Vec<NodeGroup>,
}

impl ClusterState {
    /// The nodegroup with this uuid.
    pub fn nodegroup(&self, uuid: &str) -> Option<&NodeGroup> {
        self.nodegroups.iter().find(|ng| ng.uuid == uuid)
    }

    /// The default worker nodegroup (the one `node_count` of the cluster
    /// means).
    pub fn default_worker(&self) -> Option<&NodeGroup> {
        self.nodegroups
            .iter()
            .find(|ng| ng.is_default() && !ng.is_master())
    }

    /// The default master nodegroup.
    pub fn default_master(&self) -> Option<&NodeGroup> {
        self.nodegroups
            .iter()
            .find(|ng| ng.is_default() && ng.is_master())
    }
}

/// What a call changed: full copies of the rows to save and the uuids of
/// nodegroup rows to destroy. A nodegroup with `id` 0 is inserted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Update {
    pub cluster: Option<Cluster>,
    pub nodegroups: Vec<NodeGroup>,
    pub deleted_nodegroups: Vec<String>,
}

impl Update {
    /// Nothing changed.
    pub fn none() -> Update {
        Update::default()
    }

    /// The cluster row changed.
    pub fn cluster(cluster: Cluster) -> Update {
        Update {
            cluster: Some(cluster),
            ..Update::default()
        }
    }

    /// Adds a changed nodegroup row.
    pub fn with_nodegroup(mut self, ng: NodeGroup) -> Update {
        self.nodegroups.push(ng);
        self
    }

    /// Adds a nodegroup row to destroy.
    pub fn with_deleted_nodegroup(mut self, uuid: impl Into<String>) -> Update {
        self.deleted_nodegroups.push(uuid.into());
        self
    }

    /// Whether the update asks for any write.
    pub fn is_empty(&self) -> bool {
        self.cluster.is_none() && self.nodegroups.is_empty() && self.deleted_nodegroups.is_empty()
    }
}

/// Who a call acts for. The host holds the credentials.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caller {
    pub user_id: String,
    pub project_id: String,
    /// The periodic poll and resumed work: the host acts with the
    /// service's credentials.
    pub admin: bool,
}

/// The context of one call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallContext {
    /// The entry point the call is for.
    pub entry_point: String,
    pub caller: Caller,
    /// The API request id (`req-…`), empty for background work.
    pub request_id: String,
    /// The time of the call, the same throughout it (contract 1.1; `None`
    /// in a driver built for 1.0). Compare deadlines with it, never with a
    /// clock of the driver's own: the same rows, snapshot and `now` then
    /// always derive the same status.
    pub now: Option<Timestamp>,
}

/// POST /v1/clusters/{id}/actions/resize.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resize {
    /// The resized nodegroup; its row already carries `node_count`.
    pub nodegroup_uuid: String,
    pub node_count: i32,
    /// Servers to remove first, as the client sent them (Nova server
    /// uuids, node names or addresses), unvalidated.
    pub nodes_to_remove: Vec<String>,
}

/// POST /v1/clusters/{id}/actions/upgrade.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Upgrade {
    pub template: ClusterTemplate,
    /// `max_batch_size` (0 when absent).
    pub max_batch_size: i32,
    /// The request's nodegroup; `None` for the whole cluster.
    pub nodegroup_uuid: Option<String>,
}

/// A Kubernetes object reference; `namespace` is `None` for a
/// cluster-scoped kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

/// A Kubernetes object: the envelope the host polices and the whole
/// object as JSON. The host refuses a body that disagrees with its
/// envelope. With the `json` feature, [`K8sObject::from_value`] and
/// [`K8sObject::parse`] build and read one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct K8sObject {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub json: String,
}

impl K8sObject {
    /// The object's reference.
    pub fn reference(&self) -> ObjectRef {
        ObjectRef {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }
}

/// Objects of one kind in one namespace (`None`: cluster-scoped) carrying
/// every label of `labels`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub labels: Labels,
}

/// What the host holds of one selector of [`Driver::watches`](crate::Driver::watches),
/// handed to [`Driver::derive`](crate::Driver::derive) (contract 1.1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observation {
    pub selector: Selector,
    /// Whether the management cluster serves the selector's kind (a kind
    /// it does not serve has no objects).
    pub served: bool,
    /// Whether the host's copy is complete. Until it is, `objects` may
    /// lack objects that exist: never read a missing object of an
    /// unsynced observation as deleted.
    pub synced: bool,
    /// The objects, without `metadata.managedFields`, sorted by namespace
    /// and name.
    pub objects: Vec<K8sObject>,
}

/// A side effect a status answer asks for, run by
/// [`Driver::apply_effects`](crate::Driver::apply_effects) before the
/// answer's update is saved: a name and a detail of the driver's choosing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effect {
    pub name: String,
    pub detail: String,
}

impl Effect {
    /// The effect `name` with `detail`.
    pub fn new(name: impl Into<String>, detail: impl Into<String>) -> Effect {
        Effect {
            name: name.into(),
            detail: detail.into(),
        }
    }
}

/// What a status call answers (contract 1.1): the rows' new state, and the
/// side effects to run before it is saved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusAnswer {
    pub update: Update,
    pub effects: Vec<Effect>,
}

impl StatusAnswer {
    /// Nothing changed, nothing to do.
    pub fn none() -> StatusAnswer {
        StatusAnswer::default()
    }

    /// Adds a side effect to run before the update is saved.
    pub fn with_effect(mut self, effect: Effect) -> StatusAnswer {
        self.effects.push(effect);
        self
    }
}

impl From<Update> for StatusAnswer {
    fn from(update: Update) -> StatusAnswer {
        StatusAnswer {
            update,
            effects: Vec::new(),
        }
    }
}

// Conversions from and to the bindings.

impl From<wt::ClusterTemplate> for ClusterTemplate {
    fn from(t: wt::ClusterTemplate) -> Self {
        ClusterTemplate {
            id: t.id,
            uuid: t.uuid,
            name: t.name,
            project_id: t.project_id,
            user_id: t.user_id,
            flavor_id: t.flavor_id,
            master_flavor_id: t.master_flavor_id,
            keypair_id: t.keypair_id,
            image_id: t.image_id,
            external_network_id: t.external_network_id,
            fixed_network: t.fixed_network,
            fixed_subnet: t.fixed_subnet,
            network_driver: t.network_driver,
            volume_driver: t.volume_driver,
            dns_nameserver: t.dns_nameserver,
            apiserver_port: t.apiserver_port,
            docker_volume_size: t.docker_volume_size,
            docker_storage_driver: t.docker_storage_driver,
            cluster_distro: t.cluster_distro,
            coe: t.coe,
            http_proxy: t.http_proxy,
            https_proxy: t.https_proxy,
            no_proxy: t.no_proxy,
            registry_enabled: t.registry_enabled,
            labels: t.labels.map(Labels::from_wire),
            tls_disabled: t.tls_disabled,
            public: t.public,
            server_type: t.server_type,
            insecure_registry: t.insecure_registry,
            master_lb_enabled: t.master_lb_enabled,
            floating_ip_enabled: t.floating_ip_enabled,
            hidden: t.hidden,
            tags: t.tags,
            driver: t.driver,
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

impl From<ClusterTemplate> for wt::ClusterTemplate {
    fn from(t: ClusterTemplate) -> Self {
        wt::ClusterTemplate {
            id: t.id,
            uuid: t.uuid,
            name: t.name,
            project_id: t.project_id,
            user_id: t.user_id,
            flavor_id: t.flavor_id,
            master_flavor_id: t.master_flavor_id,
            keypair_id: t.keypair_id,
            image_id: t.image_id,
            external_network_id: t.external_network_id,
            fixed_network: t.fixed_network,
            fixed_subnet: t.fixed_subnet,
            network_driver: t.network_driver,
            volume_driver: t.volume_driver,
            dns_nameserver: t.dns_nameserver,
            apiserver_port: t.apiserver_port,
            docker_volume_size: t.docker_volume_size,
            docker_storage_driver: t.docker_storage_driver,
            cluster_distro: t.cluster_distro,
            coe: t.coe,
            http_proxy: t.http_proxy,
            https_proxy: t.https_proxy,
            no_proxy: t.no_proxy,
            registry_enabled: t.registry_enabled,
            labels: t.labels.map(Labels::into_wire),
            tls_disabled: t.tls_disabled,
            public: t.public,
            server_type: t.server_type,
            insecure_registry: t.insecure_registry,
            master_lb_enabled: t.master_lb_enabled,
            floating_ip_enabled: t.floating_ip_enabled,
            hidden: t.hidden,
            tags: t.tags,
            driver: t.driver,
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

impl From<wt::Cluster> for Cluster {
    fn from(c: wt::Cluster) -> Self {
        Cluster {
            id: c.id,
            uuid: c.uuid,
            name: c.name,
            project_id: c.project_id,
            user_id: c.user_id,
            cluster_template_id: c.cluster_template_id,
            keypair: c.keypair,
            docker_volume_size: c.docker_volume_size,
            labels: c.labels.map(Labels::from_wire),
            master_flavor_id: c.master_flavor_id,
            flavor_id: c.flavor_id,
            stack_id: c.stack_id,
            api_address: c.api_address,
            status: c.status.map(Status::from),
            status_reason: c.status_reason,
            health_status: c.health_status,
            health_status_reason: c.health_status_reason.map(map_from),
            create_timeout: c.create_timeout,
            discovery_url: c.discovery_url,
            coe_version: c.coe_version,
            container_version: c.container_version,
            ca_cert_ref: c.ca_cert_ref,
            magnum_cert_ref: c.magnum_cert_ref,
            etcd_ca_cert_ref: c.etcd_ca_cert_ref,
            front_proxy_ca_cert_ref: c.front_proxy_ca_cert_ref,
            fixed_network: c.fixed_network,
            fixed_subnet: c.fixed_subnet,
            floating_ip_enabled: c.floating_ip_enabled,
            master_lb_enabled: c.master_lb_enabled,
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

impl From<Cluster> for wt::Cluster {
    fn from(c: Cluster) -> Self {
        wt::Cluster {
            id: c.id,
            uuid: c.uuid,
            name: c.name,
            project_id: c.project_id,
            user_id: c.user_id,
            cluster_template_id: c.cluster_template_id,
            keypair: c.keypair,
            docker_volume_size: c.docker_volume_size,
            labels: c.labels.map(Labels::into_wire),
            master_flavor_id: c.master_flavor_id,
            flavor_id: c.flavor_id,
            stack_id: c.stack_id,
            api_address: c.api_address,
            status: c.status.map(wt::Status::from),
            status_reason: c.status_reason,
            health_status: c.health_status,
            health_status_reason: c.health_status_reason.map(map_into),
            create_timeout: c.create_timeout,
            discovery_url: c.discovery_url,
            coe_version: c.coe_version,
            container_version: c.container_version,
            ca_cert_ref: c.ca_cert_ref,
            magnum_cert_ref: c.magnum_cert_ref,
            etcd_ca_cert_ref: c.etcd_ca_cert_ref,
            front_proxy_ca_cert_ref: c.front_proxy_ca_cert_ref,
            fixed_network: c.fixed_network,
            fixed_subnet: c.fixed_subnet,
            floating_ip_enabled: c.floating_ip_enabled,
            master_lb_enabled: c.master_lb_enabled,
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

impl From<wt::Nodegroup> for NodeGroup {
    fn from(n: wt::Nodegroup) -> Self {
        NodeGroup {
            id: n.id,
            uuid: n.uuid,
            name: n.name,
            cluster_id: n.cluster_id,
            project_id: n.project_id,
            docker_volume_size: n.docker_volume_size,
            labels: n.labels.map(Labels::from_wire),
            flavor_id: n.flavor_id,
            image_id: n.image_id,
            node_addresses: n.node_addresses,
            node_count: n.node_count,
            max_node_count: n.max_node_count,
            min_node_count: n.min_node_count,
            role: n.role,
            is_default: n.is_default,
            stack_id: n.stack_id,
            status: n.status.map(Status::from),
            status_reason: n.status_reason,
            version: n.version,
            node_labels: n.node_labels.map(Labels::from_wire),
            node_taints: n.node_taints.map(|l| l.into_iter().map(map_from).collect()),
            created_at: n.created_at,
            updated_at: n.updated_at,
        }
    }
}

impl From<NodeGroup> for wt::Nodegroup {
    fn from(n: NodeGroup) -> Self {
        wt::Nodegroup {
            id: n.id,
            uuid: n.uuid,
            name: n.name,
            cluster_id: n.cluster_id,
            project_id: n.project_id,
            docker_volume_size: n.docker_volume_size,
            labels: n.labels.map(Labels::into_wire),
            flavor_id: n.flavor_id,
            image_id: n.image_id,
            node_addresses: n.node_addresses,
            node_count: n.node_count,
            max_node_count: n.max_node_count,
            min_node_count: n.min_node_count,
            role: n.role,
            is_default: n.is_default,
            stack_id: n.stack_id,
            status: n.status.map(wt::Status::from),
            status_reason: n.status_reason,
            version: n.version,
            node_labels: n.node_labels.map(Labels::into_wire),
            node_taints: n.node_taints.map(|l| l.into_iter().map(map_into).collect()),
            created_at: n.created_at,
            updated_at: n.updated_at,
        }
    }
}

impl From<wt::ClusterState> for ClusterState {
    fn from(s: wt::ClusterState) -> Self {
        ClusterState {
            cluster: s.cluster.into(),
            template: s.template.into(),
            nodegroups: s.nodegroups.into_iter().map(NodeGroup::from).collect(),
        }
    }
}

impl From<Update> for wt::Update {
    fn from(u: Update) -> Self {
        wt::Update {
            cluster: u.cluster.map(wt::Cluster::from),
            nodegroups: u.nodegroups.into_iter().map(wt::Nodegroup::from).collect(),
            deleted_nodegroups: u.deleted_nodegroups,
        }
    }
}

impl From<wt::Update> for Update {
    fn from(u: wt::Update) -> Self {
        Update {
            cluster: u.cluster.map(Cluster::from),
            nodegroups: u.nodegroups.into_iter().map(NodeGroup::from).collect(),
            deleted_nodegroups: u.deleted_nodegroups,
        }
    }
}

impl From<wt::CallContext> for CallContext {
    fn from(c: wt::CallContext) -> Self {
        CallContext {
            entry_point: c.entry_point,
            caller: Caller {
                user_id: c.caller.user_id,
                project_id: c.caller.project_id,
                admin: c.caller.admin,
            },
            request_id: c.request_id,
            #[cfg(feature = "contract-1-1")]
            now: Some(c.now),
            #[cfg(not(feature = "contract-1-1"))]
            now: None,
        }
    }
}

impl From<Target> for wt::Target {
    fn from(t: Target) -> Self {
        wt::Target {
            server_type: t.server_type,
            os: t.os,
            coe: t.coe,
        }
    }
}

impl From<EntryPoint> for wd::EntryPoint {
    fn from(e: EntryPoint) -> Self {
        wd::EntryPoint {
            name: e.name,
            beta: e.beta,
            provides: e.provides.into_iter().map(wt::Target::from).collect(),
            description: e.description,
        }
    }
}

impl From<wl::Resize> for Resize {
    fn from(r: wl::Resize) -> Self {
        Resize {
            nodegroup_uuid: r.nodegroup_uuid,
            node_count: r.node_count,
            nodes_to_remove: r.nodes_to_remove,
        }
    }
}

impl From<wl::Upgrade> for Upgrade {
    fn from(u: wl::Upgrade) -> Self {
        Upgrade {
            template: u.template.into(),
            max_batch_size: u.max_batch_size,
            nodegroup_uuid: u.nodegroup_uuid,
        }
    }
}

impl From<wt::ObjectRef> for ObjectRef {
    fn from(r: wt::ObjectRef) -> Self {
        ObjectRef {
            api_version: r.api_version,
            kind: r.kind,
            namespace: r.namespace,
            name: r.name,
        }
    }
}

impl From<ObjectRef> for wt::ObjectRef {
    fn from(r: ObjectRef) -> Self {
        wt::ObjectRef {
            api_version: r.api_version,
            kind: r.kind,
            namespace: r.namespace,
            name: r.name,
        }
    }
}

impl From<wt::K8sObject> for K8sObject {
    fn from(o: wt::K8sObject) -> Self {
        K8sObject {
            api_version: o.api_version,
            kind: o.kind,
            namespace: o.namespace,
            name: o.name,
            json: o.json,
        }
    }
}

impl From<K8sObject> for wt::K8sObject {
    fn from(o: K8sObject) -> Self {
        wt::K8sObject {
            api_version: o.api_version,
            kind: o.kind,
            namespace: o.namespace,
            name: o.name,
            json: o.json,
        }
    }
}

impl From<wt::Selector> for Selector {
    fn from(s: wt::Selector) -> Self {
        Selector {
            api_version: s.api_version,
            kind: s.kind,
            namespace: s.namespace,
            labels: Labels::from_wire(s.labels),
        }
    }
}

#[cfg(feature = "contract-1-1")]
mod v1_1 {
    use super::*;
    use crate::bindings::exports::openkeel::magnum_driver::status as ws;

    impl From<ws::Observation> for Observation {
        fn from(o: ws::Observation) -> Self {
            Observation {
                selector: o.selector.into(),
                served: o.served,
                synced: o.synced,
                objects: o.objects.into_iter().map(K8sObject::from).collect(),
            }
        }
    }

    impl From<ws::Effect> for Effect {
        fn from(e: ws::Effect) -> Self {
            Effect {
                name: e.name,
                detail: e.detail,
            }
        }
    }

    impl From<Effect> for ws::Effect {
        fn from(e: Effect) -> Self {
            ws::Effect {
                name: e.name,
                detail: e.detail,
            }
        }
    }

    impl From<StatusAnswer> for ws::StatusAnswer {
        fn from(a: StatusAnswer) -> Self {
            ws::StatusAnswer {
                update: a.update.into(),
                effects: a.effects.into_iter().map(ws::Effect::from).collect(),
            }
        }
    }
}

impl From<Selector> for wt::Selector {
    fn from(s: Selector) -> Self {
        wt::Selector {
            api_version: s.api_version,
            kind: s.kind,
            namespace: s.namespace,
            labels: s.labels.into_wire(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_in_key_order_and_a_repeated_key_keeps_its_last_value() {
        let wire = vec![
            ("b".to_string(), "2".to_string()),
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "3".to_string()),
        ];
        let l = Labels::from_wire(wire);
        assert_eq!(l.get("b").map(String::as_str), Some("3"));
        assert_eq!(
            l.into_wire(),
            vec![
                ("a".to_string(), "1".to_string()),
                ("b".to_string(), "3".to_string())
            ]
        );
    }

    #[test]
    fn a_null_label_column_reads_as_empty_and_stays_null_until_written() {
        let mut c = Cluster::default();
        assert!(c.labels().is_empty());
        assert_eq!(c.label("kube_tag"), None);
        let w = wt::Cluster::from(c.clone());
        assert!(w.labels.is_none(), "NULL became a map");
        c.set_label("kube_tag", "v1.31.1");
        assert_eq!(c.label("kube_tag"), Some("v1.31.1"));
    }

    #[test]
    fn statuses_spell_as_magnum() {
        assert_eq!(Status::CreateInProgress.to_string(), "CREATE_IN_PROGRESS");
        assert!(Status::DeleteInProgress.in_progress());
        assert!(Status::UpdateFailed.failed() && !Status::UpdateFailed.complete());
        assert!(Status::AdoptComplete.complete());
        for s in [Status::RollbackFailed, Status::CheckComplete] {
            assert_eq!(Status::from(wt::Status::from(s)), s);
        }
        for s in Status::ALL {
            assert_eq!(s.as_str().parse(), Ok(s));
        }
        assert!("create_complete".parse::<Status>().is_err());
    }
}
