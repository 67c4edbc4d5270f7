//! hello: a small cluster driver, as a third party writes one.
//!
//! It keeps one ConfigMap per cluster in `magnum-system` (the desired
//! state: phase and size) and derives the cluster's status from it; the
//! label `size` (1 to 10, default 1) is checked before anything is built.
//! Nothing else is supported, and says so (the SDK's defaults).

use openkeel_magnum_driver::kube;
use openkeel_magnum_driver::log::info;
use openkeel_magnum_driver::prelude::*;

const NAMESPACE: &str = "magnum-system";
const CLUSTER_LABEL: &str = "magnum.openstack.org/cluster";

#[derive(Default)]
struct Hello;

register_driver!(Hello);

fn name(cluster: &Cluster) -> String {
    format!("cluster-{}", cluster.uuid)
}

fn reference(cluster: &Cluster) -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some(NAMESPACE.into()),
        name: name(cluster),
    }
}

fn size(cluster: &Cluster) -> Result<i64, DriverError> {
    cluster.labels().int_in("size", 1, 1, 10)
}

fn config_map(cluster: &Cluster, phase: &str) -> Result<K8sObject, DriverError> {
    let body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name(cluster),
            "namespace": NAMESPACE,
            "labels": { CLUSTER_LABEL: cluster.uuid },
        },
        "data": { "phase": phase, "size": size(cluster)?.to_string() },
    });
    Ok(K8sObject::from_value(&body)?)
}

/// Every row moved to `status`.
fn moved(st: ClusterState, status: Status) -> Update {
    let mut cluster = st.cluster;
    cluster.status = Some(status);
    let mut update = Update::cluster(cluster);
    for mut ng in st.nodegroups {
        ng.status = Some(status);
        update = update.with_nodegroup(ng);
    }
    update
}

impl Driver for Hello {
    fn describe(&self) -> Vec<EntryPoint> {
        let mut e = EntryPoint::new(
            "hello",
            "Kubernetes as a ConfigMap, from Rust",
            vec![Target::new("vm", "fedora-coreos", "kubernetes")],
        );
        e.beta = true;
        vec![e]
    }

    fn validate_create(&self, _ctx: &CallContext, st: &ClusterState) -> Result<(), DriverError> {
        size(&st.cluster).map(|_| ())
    }

    fn create_cluster(
        &self,
        _ctx: &CallContext,
        mut st: ClusterState,
        _timeout_minutes: u32,
    ) -> Result<Update, DriverError> {
        kube::apply(&config_map(&st.cluster, "creating")?)?;
        info!("cluster {} declared", st.cluster.uuid);
        let stack = format!("hello-{}", &st.cluster.uuid[..8.min(st.cluster.uuid.len())]);
        st.cluster.stack_id = Some(stack.clone());
        for ng in &mut st.nodegroups {
            ng.stack_id = Some(stack.clone());
        }
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

    fn watches(&self, _ctx: &CallContext, st: &ClusterState) -> Vec<Selector> {
        vec![Selector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some(NAMESPACE.into()),
            labels: Labels::new().with(CLUSTER_LABEL, st.cluster.uuid.clone()),
        }]
    }

    /// Pure: the rows from the ConfigMap alone. A declared cluster is
    /// complete at once; a deleted one is gone.
    fn derive_status(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        observed: Vec<K8sObject>,
    ) -> Result<Update, DriverError> {
        let phase = observed.iter().find_map(|o| {
            let v = o.value().ok()?;
            v.pointer("/data/phase")?.as_str().map(str::to_string)
        });
        let status = st.cluster.status;
        let done = match (phase.as_deref(), status) {
            (None, Some(Status::DeleteInProgress)) => Some(Status::DeleteComplete),
            (Some("creating"), _) => Some(Status::CreateComplete),
            (Some("updating"), _) => Some(Status::UpdateComplete),
            _ => None,
        };
        match done {
            Some(s) if Some(s) != status => Ok(moved(st, s)),
            _ => Ok(Update::none()),
        }
    }

    fn poll_status(&self, ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        let observed = kube::get(&reference(&st.cluster))?.into_iter().collect();
        self.derive_status(ctx, st, observed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(labels: &[(&str, &str)]) -> ClusterState {
        let mut st = ClusterState::default();
        st.cluster.uuid = "5d12f6fd-a196-4bf0-ae4c-1f639a523a52".into();
        st.cluster.labels = Some(labels.iter().copied().collect());
        st.cluster.status = Some(Status::CreateInProgress);
        st
    }

    fn cm(phase: &str) -> K8sObject {
        match config_map(&state(&[]).cluster, phase) {
            Ok(o) => o,
            Err(e) => panic!("{e}"),
        }
    }

    // Natively, without the host: the pure parts of the driver.
    #[test]
    fn the_size_label_is_checked_with_the_sdks_message() {
        let ctx = CallContext::default();
        assert_eq!(
            Hello.validate_create(&ctx, &state(&[("size", "3")])),
            Ok(())
        );
        let Err(DriverError::Client(e)) = Hello.validate_create(&ctx, &state(&[("size", "11")]))
        else {
            panic!("size 11 accepted");
        };
        assert_eq!(e.status, 400);
        assert_eq!(e.message, "Label size must be between 1 and 10, not 11.");
    }

    #[test]
    fn the_status_follows_the_config_map() {
        let ctx = CallContext::default();
        let upd = Hello
            .derive_status(&ctx, state(&[]), vec![cm("creating")])
            .unwrap_or_default();
        let status = upd.cluster.and_then(|c| c.status);
        assert_eq!(status, Some(Status::CreateComplete));
        let mut deleting = state(&[]);
        deleting.cluster.status = Some(Status::DeleteInProgress);
        let upd = Hello
            .derive_status(&ctx, deleting, vec![])
            .unwrap_or_default();
        assert_eq!(
            upd.cluster.and_then(|c| c.status),
            Some(Status::DeleteComplete)
        );
        // Nothing observed while creating: nothing to say yet.
        let upd = Hello
            .derive_status(&ctx, state(&[]), vec![])
            .unwrap_or_default();
        assert!(upd.is_empty());
    }
}
