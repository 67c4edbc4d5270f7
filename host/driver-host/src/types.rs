//! The host-side records of a driver call: the state a driver works on,
//! what it answers, the requests of resize and upgrade, and who a call acts
//! for. They carry `magnum_domain` rows; `convert` maps them onto the WIT
//! records.

use std::fmt;

use chrono::NaiveDateTime;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup};

use crate::access::{Credentials, KubeObject, Selector};

/// One cluster type a driver provides: Magnum's `{server_type, os, coe}`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Target {
    pub server_type: String,
    pub os: String,
    pub coe: String,
}

impl Target {
    /// A target from its three parts.
    pub fn new(server_type: &str, os: &str, coe: &str) -> Self {
        Target {
            server_type: server_type.to_string(),
            os: os.to_string(),
            coe: coe.to_string(),
        }
    }
}

impl fmt::Display for Target {
    /// As Magnum renders it in ClusterTypeNotSupported: "(vm, ubuntu,
    /// kubernetes)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.server_type, self.os, self.coe)
    }
}

/// The rows a driver call works on: the cluster, its template and every
/// nodegroup of the cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterState {
    pub cluster: Cluster,
    pub template: ClusterTemplate,
    pub nodegroups: Vec<NodeGroup>,
}

impl ClusterState {
    /// The nodegroup with the given uuid.
    pub fn nodegroup(&self, uuid: &str) -> Option<&NodeGroup> {
        self.nodegroups.iter().find(|ng| ng.uuid == uuid)
    }
}

/// What a driver call changed: full copies of the rows to save and the
/// uuids of nodegroup rows to destroy. A nodegroup with `id` 0 is new.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Update {
    pub cluster: Option<Cluster>,
    pub nodegroups: Vec<NodeGroup>,
    pub deleted_nodegroups: Vec<String>,
}

impl Update {
    /// Whether the update asks for any write.
    pub fn changed(&self) -> bool {
        self.cluster.is_some() || !self.nodegroups.is_empty() || !self.deleted_nodegroups.is_empty()
    }
}

/// POST /v1/clusters/{id}/actions/resize.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resize {
    /// The resized nodegroup (the default worker when the request named
    /// none; the conductor resolves it). Its row already has `node_count`.
    pub nodegroup_uuid: String,
    pub node_count: i32,
    /// Servers to remove first, as the client sent them.
    pub nodes_to_remove: Vec<String>,
}

/// POST /v1/clusters/{id}/actions/upgrade.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Upgrade {
    pub template: ClusterTemplate,
    /// `max_batch_size` (0 when absent).
    pub max_batch_size: i32,
    /// The request's nodegroup, resolved; `None` for the whole cluster.
    pub nodegroup_uuid: Option<String>,
}

/// Who a call acts for, the request it serves, and its time.
#[derive(Clone, Debug, Default)]
pub struct CallContext {
    pub credentials: Credentials,
    /// The API request id, for logs ("" for background work).
    pub request_id: String,
    /// The call's time (contract 1.1's `call-context.now`); `None`: the
    /// host's clock when the call starts.
    pub now: Option<NaiveDateTime>,
}

impl CallContext {
    /// The context of the periodic poll and of resumed work: service
    /// credentials, no request.
    pub fn admin() -> Self {
        CallContext {
            credentials: Credentials::admin(),
            request_id: String::new(),
            now: None,
        }
    }

    /// The same context at `now`.
    pub fn at(mut self, now: NaiveDateTime) -> Self {
        self.now = Some(now);
        self
    }
}

/// What the host holds of one selector a driver's `watches` declared
/// (contract 1.1's `observation`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    pub selector: Selector,
    /// Whether the management cluster serves the selector's kind.
    pub served: bool,
    /// Whether the host's copy of the selector is complete.
    pub synced: bool,
    /// The objects, sorted by namespace and name.
    pub objects: Vec<KubeObject>,
}

/// A side effect a status answer asks for, handed back to the driver's
/// `apply-effects`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effect {
    pub name: String,
    pub detail: String,
}

/// What a status call answers: the rows' new state and the side effects to
/// run before it is saved (none from a 1.0 driver).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusAnswer {
    pub update: Update,
    pub effects: Vec<Effect>,
}
