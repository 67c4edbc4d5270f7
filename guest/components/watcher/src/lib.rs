//! A well-behaved driver of contract 1.1 whose status arrives by watch,
//! for the host's tests of watches, snapshots, side effects, the cloud's
//! configuration and `validate-nodegroup`.
//!
//! Each cluster has one ConfigMap, `watch-<uuid>` in `magnum-system`,
//! labelled `okm.test/cluster=<uuid>`. The driver writes `data.requested`
//! (`create`, `update`, `resize`, `upgrade`; the last three move the rows
//! to `UPDATE_IN_PROGRESS`) and, at create, what the
//! cloud's configuration said (`data.keystone`, `data.ca`); a test writes
//! what a controller would, under its own field manager:
//!
//! - `data.status`: the cluster's status (Magnum's spelling), which every
//!   nodegroup follows;
//! - `data.reason`: its `status_reason`;
//! - `data.health`: its `health_status` (`health_status_reason` is
//!   `{"api": "ok"}` or `{"api": "down"}`);
//! - `data.deadline`: UTC microseconds after which a cluster still in
//!   progress fails (`ctx.now` decides, never a clock of the driver's).
//!
//! A create sets the cluster's `stack_id` (the ConfigMap's name) and an API
//! address. A delete removes the ConfigMap; once the synced snapshot lacks it, the
//! cluster is `DELETE_COMPLETE`. Every transition to a `*_COMPLETE` status
//! asks for the effect `record` (its detail the status), which writes
//! `watch-<uuid>-effects` (`data.last`); `DELETE_COMPLETE` asks for `forget`,
//! which deletes it. Labels `refused` (cluster or nodegroup) are refused
//! with a 400 by the checks; the cluster label `fail_after` fails a create
//! after its ConfigMap was written, keeping its `stack_id`. The options
//! `entry_point` and `os` rename its entry point and target, so that one
//! component serves several test packages.

use openkeel_magnum_driver::prelude::*;
use openkeel_magnum_driver::{cloud, config, kube};

const NAMESPACE: &str = "magnum-system";
const LABEL: &str = "okm.test/cluster";

#[derive(Default)]
struct Watcher;

register_driver!(Watcher);

fn name(cl: &Cluster) -> String {
    format!("watch-{}", cl.uuid)
}

fn reference(name: String) -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some(NAMESPACE.into()),
        name,
    }
}

fn config_map(
    name: &str,
    cluster: &Cluster,
    data: serde_json::Value,
) -> Result<K8sObject, DriverError> {
    let body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": { LABEL: cluster.uuid },
        },
        "data": data,
    });
    Ok(K8sObject::from_value(&body)?)
}

/// Writes `data.requested` (the fields others own stay) and moves the
/// rows to UPDATE_IN_PROGRESS.
fn request(st: ClusterState, what: &str) -> Result<Update, DriverError> {
    let data = serde_json::json!({ "requested": what });
    kube::apply(&config_map(&name(&st.cluster), &st.cluster, data)?)?;
    let mut cl = st.cluster;
    cl.status = Some(Status::UpdateInProgress);
    let mut upd = Update::cluster(cl);
    for mut ng in st.nodegroups {
        ng.status = Some(Status::UpdateInProgress);
        upd = upd.with_nodegroup(ng);
    }
    Ok(upd)
}

fn refused(labels: &Labels) -> Result<(), DriverError> {
    match labels.get("refused") {
        Some(v) => Err(DriverError::invalid(format!(
            "the label refused ({v}) is refused"
        ))),
        None => Ok(()),
    }
}

/// The first eight hex digits of a stable digest of `text`.
fn digest(text: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// What the ConfigMap's `data` says, as strings.
fn data(obj: &K8sObject) -> Labels {
    let v = obj.value().unwrap_or_default();
    v.pointer("/data")
        .and_then(|d| d.as_object())
        .map(|d| {
            d.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The failure of the operation `status` is part of.
fn failure(status: Status) -> Status {
    match status {
        Status::UpdateInProgress => Status::UpdateFailed,
        Status::DeleteInProgress => Status::DeleteFailed,
        Status::RollbackInProgress => Status::RollbackFailed,
        _ => Status::CreateFailed,
    }
}

/// The rows as the ConfigMap (or its absence, in a synced snapshot) says.
fn derive(ctx: &CallContext, st: ClusterState, cm: Option<&K8sObject>) -> StatusAnswer {
    let mut cl = st.cluster.clone();
    let was = cl.status;
    let Some(cm) = cm else {
        if was == Some(Status::DeleteInProgress) {
            cl.status = Some(Status::DeleteComplete);
            return StatusAnswer::from(Update::cluster(cl))
                .with_effect(Effect::new("forget", st.cluster.uuid.clone()));
        }
        return StatusAnswer::none();
    };
    let d = data(cm);
    if let Some(s) = d.get("status").and_then(|s| s.parse::<Status>().ok()) {
        cl.status = Some(s);
    }
    if let Some(r) = d.get("reason") {
        cl.status_reason = Some(r.clone());
    }
    if let (Some(deadline), Some(now), Some(s)) = (
        d.get("deadline").and_then(|v| v.parse::<i64>().ok()),
        ctx.now,
        cl.status,
    ) && s.in_progress()
        && now > deadline
    {
        cl.status = Some(failure(s));
        cl.status_reason = Some("the deadline passed".into());
    }
    if let Some(h) = d.get("health") {
        cl.health_status = Some(h.clone());
        let api = if h == "HEALTHY" { "ok" } else { "down" };
        cl.health_status_reason = Some(Labels::new().with("api", api).0);
    }
    let mut upd = Update::none();
    for ng in &st.nodegroups {
        if ng.status != cl.status && cl.status.is_some_and(|s| s != Status::DeleteComplete) {
            let mut ng = ng.clone();
            ng.status = cl.status;
            upd = upd.with_nodegroup(ng);
        }
    }
    if cl == st.cluster && upd.nodegroups.is_empty() {
        return StatusAnswer::none();
    }
    let now = cl.status;
    upd.cluster = Some(cl);
    let mut answer = StatusAnswer::from(upd);
    if let Some(s) = now
        && now != was
        && s.complete()
    {
        answer = answer.with_effect(Effect::new("record", s.as_str()));
    }
    answer
}

impl Driver for Watcher {
    fn describe(&self) -> Vec<EntryPoint> {
        // One component serves several test packages: each names its entry
        // point and operating system in its options.
        let name = config::get("entry_point").unwrap_or_else(|| "watcher".into());
        let os = config::get("os").unwrap_or_else(|| "watcher".into());
        vec![EntryPoint::new(
            &name,
            "Derives each cluster's status from its ConfigMap, by watch",
            vec![Target::new("vm", &os, "kubernetes")],
        )]
    }

    fn validate_create(&self, _ctx: &CallContext, st: &ClusterState) -> Result<(), DriverError> {
        refused(st.cluster.labels())
    }

    fn validate_nodegroup(
        &self,
        _ctx: &CallContext,
        _st: &ClusterState,
        ng: &NodeGroup,
    ) -> Result<(), DriverError> {
        refused(ng.labels())
    }

    fn create_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        _timeout: u32,
    ) -> Result<Update, DriverError> {
        let cloud = cloud::info();
        let ca = cloud
            .ca_bundle
            .as_deref()
            .map_or("none".to_string(), digest);
        let data = serde_json::json!({
            "requested": "create",
            "keystone": cloud.keystone_url,
            "ca": ca,
        });
        let mut cl = st.cluster.clone();
        kube::apply(&config_map(&name(&cl), &cl, data)?)?;
        cl.stack_id = Some(name(&cl));
        cl.api_address = Some(format!("https://{}.watcher.test:6443", name(&cl)));
        let upd = Update::cluster(cl.clone());
        if let Some(reason) = cl.label("fail_after") {
            return Err(DriverError::failed_after(reason, upd));
        }
        Ok(upd)
    }

    fn update_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        request(st, "update")
    }

    fn resize_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        _req: Resize,
    ) -> Result<Update, DriverError> {
        request(st, "resize")
    }

    fn upgrade_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        _req: Upgrade,
    ) -> Result<Update, DriverError> {
        request(st, "upgrade")
    }

    fn create_nodegroup(
        &self,
        _ctx: &CallContext,
        _st: ClusterState,
        _ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        Ok(Update::none())
    }

    fn delete_nodegroup(
        &self,
        _ctx: &CallContext,
        _st: ClusterState,
        ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        Ok(Update::none().with_deleted_nodegroup(ng.uuid))
    }

    fn delete_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        kube::delete(&reference(name(&st.cluster)))?;
        Ok(Update::none())
    }

    fn watches(&self, _ctx: &CallContext, st: &ClusterState) -> Vec<Selector> {
        vec![Selector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some(NAMESPACE.into()),
            labels: Labels::new().with(LABEL, st.cluster.uuid.clone()),
        }]
    }

    fn derive(
        &self,
        ctx: &CallContext,
        st: ClusterState,
        snapshot: Vec<Observation>,
    ) -> Result<StatusAnswer, DriverError> {
        let Some(o) = snapshot.first() else {
            return Ok(StatusAnswer::none());
        };
        // A copy still filling, or a server without ConfigMaps, says
        // nothing about the cluster.
        if !o.synced || !o.served {
            return Ok(StatusAnswer::none());
        }
        let own = name(&st.cluster);
        let cm = o.objects.iter().find(|c| c.name == own);
        Ok(derive(ctx, st, cm))
    }

    fn poll(&self, ctx: &CallContext, st: ClusterState) -> Result<StatusAnswer, DriverError> {
        let cm = kube::get(&reference(name(&st.cluster)))?;
        Ok(derive(ctx, st, cm.as_ref()))
    }

    fn apply_effects(
        &self,
        _ctx: &CallContext,
        st: &ClusterState,
        effects: Vec<Effect>,
    ) -> Result<(), DriverError> {
        let effects_name = format!("{}-effects", name(&st.cluster));
        for e in effects {
            match e.name.as_str() {
                "record" => {
                    let data = serde_json::json!({ "last": e.detail });
                    kube::apply(&config_map(&effects_name, &st.cluster, data)?)?;
                }
                "forget" => {
                    kube::delete(&reference(effects_name.clone()))?;
                }
                other => return Err(DriverError::failed(format!("unknown effect {other}"))),
            }
        }
        Ok(())
    }
}
