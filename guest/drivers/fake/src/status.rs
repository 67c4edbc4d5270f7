//! `poll-status`: completes (or fails) the pending operation of a cluster
//! once the delay has passed, and changes nothing otherwise.

use std::collections::{BTreeMap, BTreeSet};

use openkeel_magnum_driver::{ClusterState, Labels, NodeGroup, Status, StringMap, Update};

use crate::memory::{self, Membership};
use crate::nodes::{addresses, api_address, node_of, resize_indices, stack_id};
use crate::{DEFAULT_KUBE_TAG, LABEL_FAIL, delay_micros, fail_reason, has_op, label, now_micros};

/// The verb of a status: `Create` for CREATE_IN_PROGRESS.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    Create,
    Update,
    Delete,
    Rollback,
    Other,
}

fn action(s: Option<Status>) -> Action {
    match s {
        Some(Status::CreateInProgress | Status::CreateComplete | Status::CreateFailed) => {
            Action::Create
        }
        Some(Status::UpdateInProgress | Status::UpdateComplete | Status::UpdateFailed) => {
            Action::Update
        }
        Some(Status::DeleteInProgress | Status::DeleteComplete | Status::DeleteFailed) => {
            Action::Delete
        }
        Some(Status::RollbackInProgress | Status::RollbackComplete | Status::RollbackFailed) => {
            Action::Rollback
        }
        _ => Action::Other,
    }
}

fn in_progress(s: Option<Status>) -> bool {
    matches!(
        s,
        Some(
            Status::CreateInProgress
                | Status::UpdateInProgress
                | Status::DeleteInProgress
                | Status::RollbackInProgress
        )
    )
}

fn complete(a: Action) -> Status {
    match a {
        Action::Create => Status::CreateComplete,
        Action::Delete => Status::DeleteComplete,
        Action::Rollback => Status::RollbackComplete,
        Action::Update | Action::Other => Status::UpdateComplete,
    }
}

fn failed(a: Action) -> Status {
    match a {
        Action::Create => Status::CreateFailed,
        Action::Delete => Status::DeleteFailed,
        Action::Rollback => Status::RollbackFailed,
        Action::Update | Action::Other => Status::UpdateFailed,
    }
}

fn verb(a: Action) -> &'static str {
    match a {
        Action::Create => "create",
        Action::Update => "update",
        Action::Delete => "delete",
        Action::Rollback => "rollback",
        Action::Other => "other",
    }
}

fn empty() -> Update {
    Update {
        cluster: None,
        nodegroups: vec![],
        deleted_nodegroups: vec![],
    }
}

/// The kind of the pending operation, the nodegroups it targets (empty:
/// all) and the nodegroup labels that can fail it. Without a record (after
/// a restart) the kind is derived from the statuses.
fn infer_operation(
    op: Option<memory::Operation>,
    status: Option<Status>,
    busy: &[NodeGroup],
) -> (String, Vec<String>, Option<Labels>) {
    if let Some(op) = op {
        return (op.kind, op.targets, op.fail_labels);
    }
    if in_progress(status) {
        return (verb(action(status)).to_string(), vec![], None);
    }
    // Only nodegroups are in progress: a nodegroup operation.
    let ng = &busy[0];
    (
        format!("nodegroup_{}", verb(action(ng.status))),
        vec![ng.uuid.clone()],
        ng.labels.clone(),
    )
}

/// The cluster label kube_tag, else the template's, else the default.
fn coe_version(st: &ClusterState) -> String {
    for labels in [&st.cluster.labels, &st.template.labels] {
        if let Some(v) = label(labels, "kube_tag")
            && !v.is_empty()
        {
            return v.to_string();
        }
    }
    DEFAULT_KUBE_TAG.to_string()
}

pub fn poll(st: &ClusterState) -> Update {
    let mut cl = st.cluster.clone();
    let status = cl.status;
    let cluster_busy = in_progress(status);
    let busy: Vec<NodeGroup> = st
        .nodegroups
        .iter()
        .filter(|ng| in_progress(ng.status))
        .cloned()
        .collect();

    if status == Some(Status::DeleteComplete) {
        memory::forget();
        return empty();
    }
    if !cluster_busy && busy.is_empty() {
        // The pending operation, if any, has not been saved yet: keep it
        // for the next poll. A complete cluster's health is refreshed, as
        // Magnum's health monitor does.
        return refresh_health(st);
    }
    let op = memory::operation();
    if let Some(op) = &op
        && now_micros() < op.start.saturating_add(delay_micros())
    {
        return empty();
    }
    if op.is_none() {
        // The operation was started by another process serving the same
        // database (the API beside this reconciler): what this process
        // remembers of the nodes may be stale, the rows are the truth.
        for ng in &busy {
            memory::forget_membership(&ng.uuid);
        }
    }
    let (kind, targets, fail_labels) = infer_operation(op, status, &busy);
    let mut fail = has_op(label(&cl.labels, LABEL_FAIL), &kind);
    let mut reason = fail_reason(&cl.labels, &kind);
    if !fail
        && let Some(ng_labels) = &fail_labels
        && has_op(label(&fail_labels, LABEL_FAIL), &kind)
    {
        fail = true;
        reason = fail_reason(&Some(ng_labels.clone()), &kind);
    }
    memory::clear_operation();

    let mut upd = empty();
    if cluster_busy && action(status) == Action::Delete {
        if fail {
            cl.status = Some(Status::DeleteFailed);
            cl.status_reason = Some(reason);
        } else {
            cl.status = Some(Status::DeleteComplete);
            cl.status_reason = None;
            memory::forget();
        }
        upd.cluster = Some(cl);
        return upd;
    }

    let coe = coe_version(st);
    let mut deleted = BTreeSet::new();
    let mut any_failed = false;
    for mut ng in busy {
        let act = action(ng.status);
        if fail && (targets.is_empty() || targets.contains(&ng.uuid)) {
            ng.status = Some(failed(act));
            ng.status_reason = Some(reason.clone());
            upd.nodegroups.push(ng);
            any_failed = true;
            continue;
        }
        if act == Action::Delete {
            memory::forget_membership(&ng.uuid);
            if ng.is_default != Some(true) {
                deleted.insert(ng.uuid.clone());
                upd.deleted_nodegroups.push(ng.uuid);
                continue;
            }
            ng.status = Some(Status::DeleteComplete);
            ng.status_reason = None;
            ng.node_addresses = Some(vec![]);
            upd.nodegroups.push(ng);
            continue;
        }
        let mut m = memory::membership(&cl, &ng);
        let n = ng.node_count.unwrap_or(0);
        if m.indices.len() as i64 != i64::from(n) {
            // The row's node_count wins over a membership recovered from
            // node_addresses after a restart.
            let (indices, next) = resize_indices(&cl, &ng, &m.indices, m.next, n, &[]);
            m = Membership { indices, next };
            memory::save_membership(&ng.uuid, &m);
        }
        ng.status = Some(complete(act));
        ng.status_reason = None;
        ng.node_addresses = Some(addresses(&cl, &ng, &m.indices));
        ng.version = Some(coe.clone());
        upd.nodegroups.push(ng);
    }

    if cluster_busy || any_failed {
        // A nodegroup operation that failed while the cluster row was
        // already complete: Magnum marks the cluster UPDATE_FAILED.
        let act = if cluster_busy {
            action(status)
        } else {
            Action::Update
        };
        if fail {
            cl.status = Some(failed(act));
            cl.status_reason = Some(reason);
        } else {
            cl.status = Some(complete(act));
            cl.status_reason = None;
            cl.stack_id = Some(stack_id(&cl.uuid));
            cl.api_address = Some(api_address(&cl.uuid));
            cl.coe_version = Some(coe);
            cl.health_status = Some("HEALTHY".to_string());
            cl.health_status_reason = Some(health_reason(st, &deleted));
        }
        upd.cluster = Some(cl);
    }
    upd
}

/// The health of a complete cluster: `HEALTHY` with one entry per node,
/// when that is not what the row says already.
fn refresh_health(st: &ClusterState) -> Update {
    if !st.cluster.status.is_some_and(Status::complete) {
        return empty();
    }
    let reason = health_reason(st, &BTreeSet::new());
    let cl = &st.cluster;
    if cl.health_status.as_deref() == Some("HEALTHY")
        && cl.health_status_reason.as_ref() == Some(&reason)
    {
        return empty();
    }
    let mut cl = cl.clone();
    cl.health_status = Some("HEALTHY".to_string());
    cl.health_status_reason = Some(reason);
    Update {
        cluster: Some(cl),
        ..empty()
    }
}

/// `health_status_reason` in the Cluster API driver's format: one
/// `<node>.Ready` key per node, plus `api`.
fn health_reason(st: &ClusterState, deleted: &BTreeSet<String>) -> StringMap {
    let mut reason = BTreeMap::new();
    reason.insert("api".to_string(), "ok".to_string());
    for ng in &st.nodegroups {
        if deleted.contains(&ng.uuid) || action(ng.status) == Action::Delete {
            continue;
        }
        for i in memory::membership(&st.cluster, ng).indices {
            reason.insert(
                format!("{}.Ready", node_of(&st.cluster, ng, i).name),
                "True".to_string(),
            );
        }
    }
    reason
}
