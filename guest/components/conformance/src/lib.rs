//! A driver for the conformance kit's own tests. In mode `good` it is a
//! small conforming driver: create, update and delete keep one ConfigMap
//! per cluster in `magnum-system`, the status is derived from it, and the
//! label `size` must be an integer between 1 and 10. Every other mode
//! breaks one rule of the kit:
//!
//! - `nonidempotent-create`: each create answers a new `stack_id`;
//! - `impure-status`: each status call answers a new `status_reason`;
//! - `ungranted-kind`: create also applies a Secret in `kube-system`,
//!   which it was not granted, and ignores the refusal;
//! - `labels-fail`: a bad `size` is answered `failed`, not 400;
//! - `unsupported-failed`: resize answers `failed("not supported")`.

use openkeel_magnum_driver::prelude::*;
use openkeel_magnum_driver::{config, kube, state};

const NAMESPACE: &str = "magnum-system";

#[derive(Default)]
struct Conformance;

register_driver!(Conformance);

fn mode() -> String {
    config::get("mode").unwrap_or_else(|| "good".to_string())
}

/// A counter kept for the cluster: a different value at every call.
fn tick() -> u64 {
    let n = state::get("tick")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        + 1;
    let _ = state::set("tick", &n.to_string());
    n
}

fn config_map(cluster: &Cluster, phase: &str) -> Result<K8sObject, DriverError> {
    let body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": format!("cluster-{}", cluster.uuid),
            "namespace": NAMESPACE,
            "labels": { "magnum.openstack.org/cluster": cluster.uuid },
        },
        "data": { "phase": phase },
    });
    K8sObject::from_value(&body).map_err(|e| DriverError::failed(e.to_string()))
}

fn reference(cluster: &Cluster) -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some(NAMESPACE.into()),
        name: format!("cluster-{}", cluster.uuid),
    }
}

fn check_labels(cluster: &Cluster) -> Result<(), DriverError> {
    match cluster.labels().int_in("size", 1, 1, 10) {
        Ok(_) => Ok(()),
        Err(e) if mode() == "labels-fail" => Err(DriverError::failed(e.to_string())),
        Err(e) => Err(e),
    }
}

/// Every row moved to `status`.
fn moved(st: ClusterState, status: Status) -> Update {
    let mut cl = st.cluster;
    cl.status = Some(status);
    let mut u = Update::cluster(cl);
    for mut ng in st.nodegroups {
        ng.status = Some(status);
        u = u.with_nodegroup(ng);
    }
    u
}

impl Driver for Conformance {
    fn describe(&self) -> Vec<EntryPoint> {
        let mut e = EntryPoint::new(
            "conformance",
            "Breaks a rule of the conformance kit on purpose",
            vec![Target::new("vm", "fedora-coreos", "kubernetes")],
        );
        e.beta = true;
        vec![e]
    }

    fn validate_create(&self, _ctx: &CallContext, st: &ClusterState) -> Result<(), DriverError> {
        check_labels(&st.cluster)
    }

    fn create_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        _timeout: u32,
    ) -> Result<Update, DriverError> {
        check_labels(&st.cluster)?;
        kube::apply(&config_map(&st.cluster, "creating")?)?;
        let m = mode();
        if m == "ungranted-kind" {
            let secret = serde_json::json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": { "name": "stolen", "namespace": "kube-system" },
            });
            if let Ok(obj) = K8sObject::from_value(&secret) {
                // The refusal is ignored: the kit must notice anyway.
                let _ = kube::apply(&obj);
            }
        }
        let stack = if m == "nonidempotent-create" {
            format!("stack-{}", tick())
        } else {
            format!("stack-{}", &st.cluster.uuid[..8])
        };
        let mut st = st;
        st.cluster.stack_id = Some(stack);
        Ok(moved(st, Status::CreateInProgress))
    }

    fn update_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        kube::apply(&config_map(&st.cluster, "updating")?)?;
        Ok(moved(st, Status::UpdateInProgress))
    }

    fn delete_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        kube::delete(&reference(&st.cluster))?;
        Ok(moved(st, Status::DeleteInProgress))
    }

    fn resize_cluster(
        &self,
        _ctx: &CallContext,
        _st: ClusterState,
        _req: Resize,
    ) -> Result<Update, DriverError> {
        if mode() == "unsupported-failed" {
            return Err(DriverError::failed("resize is not supported"));
        }
        Err(DriverError::not_supported("resize_cluster"))
    }

    fn watches(&self, _ctx: &CallContext, st: &ClusterState) -> Vec<Selector> {
        vec![Selector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some(NAMESPACE.into()),
            labels: Labels::new().with("magnum.openstack.org/cluster", st.cluster.uuid.clone()),
        }]
    }

    fn derive_status(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        observed: Vec<K8sObject>,
    ) -> Result<Update, DriverError> {
        let phase = observed
            .iter()
            .find_map(|o| {
                o.value().ok().and_then(|v| {
                    v.pointer("/data/phase")
                        .and_then(|p| p.as_str().map(str::to_string))
                })
            })
            .unwrap_or_default();
        let mut cl = st.cluster.clone();
        cl.status_reason = Some(if mode() == "impure-status" {
            format!("observed {phase} ({})", tick())
        } else {
            format!("observed {phase}")
        });
        Ok(Update::cluster(cl))
    }

    fn poll_status(&self, ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        let observed = kube::get(&reference(&st.cluster))?.into_iter().collect();
        self.derive_status(ctx, st, observed)
    }
}
