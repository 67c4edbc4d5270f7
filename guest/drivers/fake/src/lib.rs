//! The fake driver, `fake`: builds nothing and simulates Magnum's cluster
//! lifecycle deterministically, for tests and all-in-one.
//!
//! It provides (vm, <os>, kubernetes) for os in centos, debian,
//! fedora-atomic, fedora-coreos, flatcar, rockylinux, ubuntu and
//! ubuntu-focal, and is a beta driver (chosen by cluster type only where
//! `[drivers]/enabled_beta_drivers` lists it).
//!
//! Every operation returns at once and leaves the rows it touches in
//! `*_IN_PROGRESS`; `poll-status` completes them once the option
//! `delay_seconds` (default 0) has passed on the host's clock, filling in
//! `stack_id` (`kube-` and five characters derived from the cluster uuid),
//! node addresses (one fake address in 10.0.0.0/8 per node), `api_address`,
//! `coe_version` (the cluster's `kube_tag` label, else the template's, else
//! v1.31.1), `health_status` HEALTHY and a `health_status_reason` with one
//! `<node>.Ready` key per node and `api`.
//!
//! A resize removes the nodes listed in `nodes_to_remove` (by server uuid,
//! node name or address), then adds nodes with new indices or removes the
//! highest until the nodegroup has `node_count` nodes.
//!
//! Failure injection, by cluster labels (nodegroup labels for nodegroup
//! operations): `fake_fail=<op>[,<op>…]` accepts the operation and the poll
//! ends it `*_FAILED` with `fake_fail_reason` (default "fake driver:
//! injected <op> failure"); `fake_error=<op>[,…]` makes the call itself
//! fail with that text; `fake_no_ca_rotation=true` and
//! `fake_no_credential_rotation=true` refuse the rotations with Magnum's
//! 400s. Operation names: create, update, delete, resize, upgrade,
//! nodegroup_create, nodegroup_update, nodegroup_delete, rotate_ca.
//!
//! A fresh instance serves every call: the pending operation and node
//! memberships live in the host's per-cluster `state`, and when they are
//! missing (a restart, another process) the poll infers the operation from
//! the statuses and the memberships from `node_addresses`.

mod memory;
mod nodes;
mod status;

use openkeel_magnum_driver::prelude::*;
use openkeel_magnum_driver::{
    ca_rotation_not_supported, config, credential_rotation_not_supported, validate_master_size,
};

use memory::{Membership, Operation};
use nodes::{addresses, resize_indices, stack_id};

/// The entry-point name stored in `cluster_template.driver`.
pub const NAME: &str = "fake";

/// The `coe_version` when neither the cluster nor the template has a
/// `kube_tag` label.
pub const DEFAULT_KUBE_TAG: &str = "v1.31.1";

const OP_CREATE: &str = "create";
const OP_UPDATE: &str = "update";
const OP_DELETE: &str = "delete";
const OP_RESIZE: &str = "resize";
const OP_UPGRADE: &str = "upgrade";
const OP_NODEGROUP_CREATE: &str = "nodegroup_create";
const OP_NODEGROUP_UPDATE: &str = "nodegroup_update";
const OP_NODEGROUP_DELETE: &str = "nodegroup_delete";
const OP_ROTATE_CA: &str = "rotate_ca";

const LABEL_FAIL: &str = "fake_fail";
const LABEL_FAIL_REASON: &str = "fake_fail_reason";
const LABEL_ERROR: &str = "fake_error";
const LABEL_NO_CA_ROTATION: &str = "fake_no_ca_rotation";
const LABEL_NO_CREDENTIAL_ROTATION: &str = "fake_no_credential_rotation";

const ROLE_MASTER: &str = "master";

const DESCRIPTION: &str = "In-memory simulation of the cluster lifecycle, for tests and all-in-one";

const OSES: [&str; 8] = [
    "centos",
    "debian",
    "fedora-atomic",
    "fedora-coreos",
    "flatcar",
    "rockylinux",
    "ubuntu",
    "ubuntu-focal",
];

#[derive(Default)]
struct Fake;

register_driver!(Fake);

/// The value of `key` in an optional label map.
fn label<'a>(labels: &'a Option<Labels>, key: &str) -> Option<&'a str> {
    labels.as_ref()?.get_str(key)
}

/// A copy of `labels` with `key` set to `value`.
fn with_label(labels: &Option<Labels>, key: &str, value: &str) -> Labels {
    labels.clone().unwrap_or_default().with(key, value)
}

/// The host's clock, in UTC microseconds.
fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// The option `delay_seconds`, in microseconds.
fn delay_micros() -> i64 {
    config::get("delay_seconds")
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or(0)
        .saturating_mul(1_000_000)
}

/// Whether a comma-separated label value lists `op`.
fn has_op(value: Option<&str>, op: &str) -> bool {
    value.is_some_and(|v| v.split(',').any(|x| x.trim() == op))
}

fn fail_reason(labels: &Option<Labels>, op: &str) -> String {
    match label(labels, LABEL_FAIL_REASON) {
        Some(r) if !r.is_empty() => r.to_string(),
        _ => format!("fake driver: injected {op} failure"),
    }
}

fn is_true(v: Option<&str>) -> bool {
    v.is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The `fake_error` check of an operation.
fn begin(labels: &Option<Labels>, op: &str) -> Result<(), DriverError> {
    if has_op(label(labels, LABEL_ERROR), op) {
        return Err(DriverError::Failed(fail_reason(labels, op)));
    }
    Ok(())
}

fn begin_nodegroup(
    cluster_labels: &Option<Labels>,
    ng_labels: &Option<Labels>,
    op: &str,
) -> Result<(), DriverError> {
    begin(cluster_labels, op)?;
    begin(ng_labels, op)
}

fn default_worker(ngs: &[NodeGroup]) -> Option<&NodeGroup> {
    ngs.iter()
        .find(|ng| ng.is_default == Some(true) && ng.role.as_deref() != Some(ROLE_MASTER))
}

/// Records the operation just started on the call's cluster.
fn start(kind: &str, targets: Vec<String>, labels: Option<&Labels>) {
    memory::start(&Operation {
        kind: kind.to_string(),
        start: now_micros(),
        targets,
        fail_labels: labels.cloned(),
    });
}

fn resize(
    st: &ClusterState,
    mut ng: NodeGroup,
    count: i32,
    to_remove: &[String],
    kind: &str,
) -> Update {
    let mut cl = st.cluster.clone();
    cl.status = Some(Status::UpdateInProgress);
    cl.status_reason = None;
    ng.node_count = Some(count);
    ng.status = Some(Status::UpdateInProgress);
    ng.status_reason = None;

    let mut m = memory::membership(&st.cluster, &ng);
    if !to_remove.is_empty() {
        // The removed nodes leave the row at once, so that another process
        // serving the same database (the reconciler beside the API) knows
        // which nodes went; their replacements appear when the poll
        // completes the operation.
        let (kept, _) = resize_indices(&st.cluster, &ng, &m.indices, m.next, -1, to_remove);
        if kept.len() != m.indices.len() {
            ng.node_addresses = Some(addresses(&st.cluster, &ng, &kept));
        }
    }
    let (indices, next) = resize_indices(&st.cluster, &ng, &m.indices, m.next, count, to_remove);
    m = Membership { indices, next };
    memory::save_membership(&ng.uuid, &m);
    start(kind, vec![ng.uuid.clone()], None);
    Update {
        cluster: Some(cl),
        nodegroups: vec![ng],
        deleted_nodegroups: vec![],
    }
}

fn nodegroup_op(st: &ClusterState, ng: NodeGroup, kind: &str) -> Update {
    let mut cl = st.cluster.clone();
    cl.status = Some(Status::UpdateInProgress);
    cl.status_reason = None;
    start(kind, vec![ng.uuid.clone()], ng.labels.as_ref());
    Update {
        cluster: Some(cl),
        nodegroups: vec![ng],
        deleted_nodegroups: vec![],
    }
}

fn can_rotate_ca(st: &ClusterState) -> Result<(), DriverError> {
    if is_true(label(&st.cluster.labels, LABEL_NO_CA_ROTATION)) {
        return Err(ca_rotation_not_supported());
    }
    Ok(())
}

impl Driver for Fake {
    fn describe(&self) -> Vec<EntryPoint> {
        vec![EntryPoint {
            name: NAME.to_string(),
            // Beta, so that a production deployment never selects it by
            // cluster type or as the alphabetically first driver.
            beta: true,
            provides: OSES
                .iter()
                .map(|os| Target {
                    server_type: "vm".to_string(),
                    os: os.to_string(),
                    coe: "kubernetes".to_string(),
                })
                .collect(),
            description: DESCRIPTION.to_string(),
        }]
    }

    fn validate_master_size(&self, _entry_point: &str, count: i32) -> Result<(), DriverError> {
        validate_master_size(count)
    }

    /// Like the Cluster API driver, the master nodegroup may be resized to
    /// an odd count of at least 1.
    fn validate_master_resize(&self, _entry_point: &str, count: i32) -> Result<(), DriverError> {
        validate_master_size(count)
    }

    fn validate_create(
        &self,
        _ctx: &CallContext,
        _state: &ClusterState,
    ) -> Result<(), DriverError> {
        Ok(())
    }

    fn validate_upgrade(
        &self,
        _ctx: &CallContext,
        _state: &ClusterState,
        _template: &ClusterTemplate,
    ) -> Result<(), DriverError> {
        Ok(())
    }

    fn can_rotate_ca(&self, _ctx: &CallContext, state: &ClusterState) -> Result<(), DriverError> {
        can_rotate_ca(state)
    }

    fn create_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        _timeout_minutes: u32,
    ) -> Result<Update, DriverError> {
        begin(&st.cluster.labels, OP_CREATE)?;
        let stack = stack_id(&st.cluster.uuid);
        let mut cl = st.cluster.clone();
        cl.stack_id = Some(stack.clone());
        cl.status = Some(Status::CreateInProgress);
        cl.status_reason = None;
        let mut nodegroups = Vec::with_capacity(st.nodegroups.len());
        for mut ng in st.nodegroups {
            ng.stack_id = Some(stack.clone());
            ng.status = Some(Status::CreateInProgress);
            let n = ng.node_count.unwrap_or(0);
            memory::save_membership(
                &ng.uuid,
                &Membership {
                    indices: (0..n).collect(),
                    next: n.max(0),
                },
            );
            nodegroups.push(ng);
        }
        start(OP_CREATE, vec![], None);
        Ok(Update {
            cluster: Some(cl),
            nodegroups,
            deleted_nodegroups: vec![],
        })
    }

    /// The default worker nodegroup is resized to the node_count already
    /// stored in its row.
    fn update_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        begin(&st.cluster.labels, OP_UPDATE)?;
        let Some(worker) = default_worker(&st.nodegroups).cloned() else {
            return Err(DriverError::Failed(
                "fake driver: cluster has no default worker nodegroup".to_string(),
            ));
        };
        let count = worker.node_count.unwrap_or(0);
        Ok(resize(&st, worker, count, &[], OP_UPDATE))
    }

    fn delete_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        begin(&st.cluster.labels, OP_DELETE)?;
        let mut cl = st.cluster;
        cl.status = Some(Status::DeleteInProgress);
        cl.status_reason = None;
        start(OP_DELETE, vec![], None);
        Ok(Update {
            cluster: Some(cl),
            nodegroups: vec![],
            deleted_nodegroups: vec![],
        })
    }

    fn resize_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        req: Resize,
    ) -> Result<Update, DriverError> {
        begin(&st.cluster.labels, OP_RESIZE)?;
        let Some(ng) = st
            .nodegroups
            .iter()
            .find(|ng| ng.uuid == req.nodegroup_uuid)
            .cloned()
        else {
            return Err(DriverError::Failed(format!(
                "fake driver: nodegroup {} is not part of cluster {}",
                req.nodegroup_uuid, st.cluster.uuid
            )));
        };
        // As with the Cluster API driver, nodes_to_remove does not apply
        // to the control plane.
        let to_remove = if ng.role.as_deref() == Some(ROLE_MASTER) {
            Vec::new()
        } else {
            req.nodes_to_remove
        };
        Ok(resize(&st, ng, req.node_count, &to_remove, OP_RESIZE))
    }

    /// The cluster moves to the new template and its kube_tag; the given
    /// nodegroup (or every nodegroup) takes the template's image and
    /// kube_tag.
    fn upgrade_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        req: Upgrade,
    ) -> Result<Update, DriverError> {
        begin(&st.cluster.labels, OP_UPGRADE)?;
        let kube_tag = label(&req.template.labels, "kube_tag").map(str::to_string);
        let mut cl = st.cluster.clone();
        cl.cluster_template_id = req.template.uuid.clone();
        if let Some(tag) = &kube_tag {
            cl.labels = Some(with_label(&cl.labels, "kube_tag", tag));
        }
        cl.status = Some(Status::UpdateInProgress);
        cl.status_reason = None;
        let mut nodegroups = Vec::new();
        let mut targets = Vec::new();
        for mut ng in st.nodegroups {
            if let Some(only) = &req.nodegroup_uuid
                && !only.is_empty()
                && &ng.uuid != only
            {
                continue;
            }
            if let Some(image) = &req.template.image_id {
                ng.image_id = Some(image.clone());
            }
            if let Some(tag) = &kube_tag {
                ng.labels = Some(with_label(&ng.labels, "kube_tag", tag));
            }
            ng.status = Some(Status::UpdateInProgress);
            ng.status_reason = None;
            targets.push(ng.uuid.clone());
            nodegroups.push(ng);
        }
        start(OP_UPGRADE, targets, None);
        Ok(Update {
            cluster: Some(cl),
            nodegroups,
            deleted_nodegroups: vec![],
        })
    }

    fn create_nodegroup(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        mut ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        begin_nodegroup(&st.cluster.labels, &ng.labels, OP_NODEGROUP_CREATE)?;
        ng.stack_id = Some(stack_id(&st.cluster.uuid));
        ng.status = Some(Status::CreateInProgress);
        ng.status_reason = None;
        let n = ng.node_count.unwrap_or(0);
        memory::save_membership(
            &ng.uuid,
            &Membership {
                indices: (0..n).collect(),
                next: n.max(0),
            },
        );
        Ok(nodegroup_op(&st, ng, OP_NODEGROUP_CREATE))
    }

    fn update_nodegroup(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        mut ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        begin_nodegroup(&st.cluster.labels, &ng.labels, OP_NODEGROUP_UPDATE)?;
        ng.status = Some(Status::UpdateInProgress);
        ng.status_reason = None;
        Ok(nodegroup_op(&st, ng, OP_NODEGROUP_UPDATE))
    }

    fn delete_nodegroup(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        mut ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        begin_nodegroup(&st.cluster.labels, &ng.labels, OP_NODEGROUP_DELETE)?;
        ng.status = Some(Status::DeleteInProgress);
        ng.status_reason = None;
        Ok(nodegroup_op(&st, ng, OP_NODEGROUP_DELETE))
    }

    fn rotate_ca(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        can_rotate_ca(&st)?;
        begin(&st.cluster.labels, OP_ROTATE_CA)?;
        let mut cl = st.cluster;
        cl.status = Some(Status::UpdateInProgress);
        cl.status_reason = None;
        start(OP_ROTATE_CA, vec![], None);
        Ok(Update {
            cluster: Some(cl),
            nodegroups: vec![],
            deleted_nodegroups: vec![],
        })
    }

    /// Changes no row (Magnum changes no status either) and counts the
    /// rotation in the cluster's state (`credential_rotations`).
    fn rotate_credential(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
    ) -> Result<Update, DriverError> {
        if is_true(label(&st.cluster.labels, LABEL_NO_CREDENTIAL_ROTATION)) {
            return Err(credential_rotation_not_supported());
        }
        memory::count_credential_rotation();
        Ok(Update {
            cluster: None,
            nodegroups: vec![],
            deleted_nodegroups: vec![],
        })
    }

    // No watches: the host polls; derive_status keeps its default
    // (NotSupported).

    fn poll_status(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        Ok(status::poll(&st))
    }
}
