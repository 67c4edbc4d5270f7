//! What the driver remembers between calls, kept in the host's per-cluster
//! `state` store (a fresh instance per call keeps nothing): the pending
//! operation, the node membership of each nodegroup and the count of
//! credential rotations. Everything here can be lost (a restart, another
//! process): the poll then recovers from the rows.

use openkeel_magnum_driver::{Cluster, Labels, NodeGroup, logging, state};

use crate::nodes::recover_indices;

/// The last operation started on a cluster.
pub struct Operation {
    pub kind: String,
    /// UTC microseconds.
    pub start: i64,
    /// The nodegroups it targets; empty: all the nodegroups in progress.
    pub targets: Vec<String>,
    /// The `fake_fail` and `fake_fail_reason` labels of the targeted
    /// nodegroup, for nodegroup operations on a nodegroup with labels.
    pub fail_labels: Option<Labels>,
}

/// The pending operation is one key, so that starting one is one host call.
const OP: &str = "op";
const CREDENTIAL_ROTATIONS: &str = "credential_rotations";
/// Separates the fields of the operation's value.
const SEP: char = '\u{1f}';

fn opt_field(v: Option<&String>) -> String {
    match v {
        Some(v) => format!("+{v}"),
        None => "-".to_string(),
    }
}

fn parse_opt_field(v: &str) -> Option<String> {
    v.strip_prefix('+').map(str::to_string)
}

/// Records a new operation, replacing one that has not completed yet.
pub fn start(op: &Operation) {
    let labels = op.fail_labels.as_ref();
    let get = |key: &str| labels.and_then(|l| l.get(key));
    let value = [
        op.kind.clone(),
        op.start.to_string(),
        op.targets.join(","),
        if labels.is_some() { "1" } else { "0" }.to_string(),
        opt_field(get(crate::LABEL_FAIL)),
        opt_field(get(crate::LABEL_FAIL_REASON)),
    ]
    .join(&SEP.to_string());
    set(OP, &value);
}

/// The pending operation, when this process remembers one.
pub fn operation() -> Option<Operation> {
    let value = state::get(OP)?;
    let f: Vec<&str> = value.split(SEP).collect();
    let [kind, start, targets, has_labels, fail, reason] = f.as_slice() else {
        return None;
    };
    let fail_labels = (*has_labels == "1").then(|| {
        let mut labels = Labels::new();
        if let Some(v) = parse_opt_field(fail) {
            labels.insert(crate::LABEL_FAIL.to_string(), v);
        }
        if let Some(v) = parse_opt_field(reason) {
            labels.insert(crate::LABEL_FAIL_REASON.to_string(), v);
        }
        labels
    });
    Some(Operation {
        kind: kind.to_string(),
        start: start.parse().ok()?,
        targets: targets
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        fail_labels,
    })
}

/// Forgets the pending operation.
pub fn clear_operation() {
    state::remove(OP);
}

/// The node indices of a nodegroup and the next unused index.
pub struct Membership {
    pub indices: Vec<i32>,
    pub next: i32,
}

fn nodes_key(ng_uuid: &str) -> String {
    format!("nodes/{ng_uuid}")
}

/// The membership of a nodegroup, recovered from the row (and remembered)
/// when the driver has no record.
pub fn membership(cl: &Cluster, ng: &NodeGroup) -> Membership {
    if let Some(m) = state::get(&nodes_key(&ng.uuid)).and_then(|v| parse_membership(&v)) {
        return m;
    }
    let indices = recover_indices(cl, ng);
    let next = indices.last().map_or(0, |i| i + 1);
    let m = Membership { indices, next };
    save_membership(&ng.uuid, &m);
    m
}

fn parse_membership(v: &str) -> Option<Membership> {
    let (next, rest) = v.split_once(';')?;
    let indices = rest
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<Vec<i32>, _>>()
        .ok()?;
    Some(Membership {
        indices,
        next: next.parse().ok()?,
    })
}

/// Remembers the membership of a nodegroup.
pub fn save_membership(ng_uuid: &str, m: &Membership) {
    let list: Vec<String> = m.indices.iter().map(i32::to_string).collect();
    set(
        &nodes_key(ng_uuid),
        &format!("{};{}", m.next, list.join(",")),
    );
}

/// Forgets the membership of a nodegroup.
pub fn forget_membership(ng_uuid: &str) {
    state::remove(&nodes_key(ng_uuid));
}

/// Counts one credential rotation.
pub fn count_credential_rotation() {
    let n: u64 = state::get(CREDENTIAL_ROTATIONS)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    set(CREDENTIAL_ROTATIONS, &(n + 1).to_string());
}

/// Forgets everything about the cluster.
pub fn forget() {
    state::clear();
}

/// Sets a key. A refusal (the store is full) only costs the driver its
/// memory: the poll recovers from the rows, so it is logged and ignored.
fn set(key: &str, value: &str) {
    if let Err(e) = state::set(key, value) {
        logging::write(
            logging::Level::Warn,
            &format!("fake driver: cannot remember {key}: {e}"),
            &[],
        );
    }
}
