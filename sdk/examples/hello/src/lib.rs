//! hello: a small cluster driver, as a third party writes one.
//!
//! It keeps one ConfigMap per cluster in `magnum-system`: what the cluster
//! should be (the operation asked for, the `size` label, the workers'
//! count). It declares that ConfigMap in `watches`, and the host calls
//! `derive_status` whenever it changes: the status comes from the
//! ConfigMap alone. The label `size` (1 to 10, default 1) is checked
//! before anything is built. It creates, updates, resizes and deletes;
//! nothing else is supported, and says so (the SDK's defaults).

// [example: driver]
use openkeel_magnum_driver::kube;
use openkeel_magnum_driver::log::info;
use openkeel_magnum_driver::prelude::*;

const NAMESPACE: &str = "magnum-system";
const CLUSTER_LABEL: &str = "magnum.openstack.org/cluster";

#[derive(Default)]
struct Hello;

register_driver!(Hello);

fn reference(cluster: &Cluster) -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some(NAMESPACE.into()),
        name: format!("cluster-{}", cluster.uuid),
    }
}

/// The label `size`: 400 "Label size must be between 1 and 10, not 11."
/// for a bad value.
fn size(cluster: &Cluster) -> Result<i64, DriverError> {
    cluster.labels().int_in("size", 1, 1, 10)
}

/// The nodes of the worker nodegroups, as the rows have them.
fn workers(st: &ClusterState) -> i32 {
    st.nodegroups
        .iter()
        .filter(|ng| ng.role.as_deref() != Some("master"))
        .map(|ng| ng.node_count.unwrap_or(0))
        .sum()
}

/// The ConfigMap declaring the cluster for the operation `phase`.
fn config_map(st: &ClusterState, phase: &str) -> Result<K8sObject, DriverError> {
    let cluster = &st.cluster;
    let body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": reference(cluster).name,
            "namespace": NAMESPACE,
            "labels": { CLUSTER_LABEL: cluster.uuid },
        },
        "data": {
            "phase": phase,
            "size": size(cluster)?.to_string(),
            "workers": workers(st).to_string(),
        },
    });
    Ok(K8sObject::from_value(&body)?)
}

/// A field of the ConfigMap's `data`.
fn data(cm: &K8sObject, key: &str) -> Option<String> {
    let v = cm.value().ok()?;
    v.pointer(&format!("/data/{key}"))?
        .as_str()
        .map(str::to_string)
}

/// The cluster moved to `status`, with the nodegroups `pick` chooses.
fn moved(st: ClusterState, status: Status, pick: impl Fn(&NodeGroup) -> bool) -> Update {
    let mut cluster = st.cluster;
    cluster.status = Some(status);
    let mut update = Update::cluster(cluster);
    for mut ng in st.nodegroups.into_iter().filter(|ng| pick(ng)) {
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
            vec![Target::new("vm", "hello", "kubernetes")],
        );
        // Used when a template names it; never chosen by cluster type or
        // as the default unless [drivers]/enabled_beta_drivers lists it.
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
        // A host refusal fails the operation with its text.
        kube::apply(&config_map(&st, "creating")?)?;
        info!("cluster {} declared", st.cluster.uuid);
        // A create names what it builds in stack_id (lifecycle.wit), on the
        // cluster and its nodegroups; Magnum's clients show it.
        let stack = format!("hello-{}", &st.cluster.uuid[..8.min(st.cluster.uuid.len())]);
        st.cluster.stack_id = Some(stack.clone());
        for ng in &mut st.nodegroups {
            ng.stack_id = Some(stack.clone());
        }
        Ok(moved(st, Status::CreateInProgress, |_| true))
    }

    fn update_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        kube::apply(&config_map(&st, "updating")?)?;
        Ok(moved(st, Status::UpdateInProgress, |_| true))
    }

    fn resize_cluster(
        &self,
        _ctx: &CallContext,
        mut st: ClusterState,
        req: Resize,
    ) -> Result<Update, DriverError> {
        // The resized nodegroup's row carries the new count, as Magnum's.
        for ng in &mut st.nodegroups {
            if ng.uuid == req.nodegroup_uuid {
                ng.node_count = Some(req.node_count);
            }
        }
        kube::apply(&config_map(&st, "updating")?)?;
        info!("cluster {} resized to {}", st.cluster.uuid, req.node_count);
        Ok(moved(st, Status::UpdateInProgress, |ng| {
            ng.uuid == req.nodegroup_uuid
        }))
    }

    fn delete_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        kube::delete(&reference(&st.cluster))?;
        Ok(moved(st, Status::DeleteInProgress, |_| true))
    }

    /// What ties objects to the cluster: its ConfigMap, by label. The host
    /// watches it (the grants must let the driver `list` it) and calls
    /// `derive_status` when it changes.
    fn watches(&self, _ctx: &CallContext, st: &ClusterState) -> Vec<Selector> {
        vec![Selector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some(NAMESPACE.into()),
            labels: Labels::new().with(CLUSTER_LABEL, st.cluster.uuid.clone()),
        }]
    }

    /// Pure: the rows' next status from the watched ConfigMap alone. A
    /// create or an update (a resize is one) is complete once the ConfigMap
    /// declares it for the rows' workers; a delete once it is gone. The
    /// cluster moves with the nodegroups that were where it was.
    fn derive_status(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        observed: Vec<K8sObject>,
    ) -> Result<Update, DriverError> {
        let cm = observed.first();
        let phase = cm.and_then(|cm| data(cm, "phase"));
        let declared = cm.and_then(|cm| data(cm, "workers")) == Some(workers(&st).to_string());
        let from = st.cluster.status;
        let done = match (from, phase.as_deref()) {
            (Some(Status::CreateInProgress), Some("creating")) => Status::CreateComplete,
            (Some(Status::UpdateInProgress), Some("updating")) if declared => {
                Status::UpdateComplete
            }
            (Some(Status::DeleteInProgress), None) => Status::DeleteComplete,
            _ => return Ok(Update::none()),
        };
        Ok(moved(st, done, |ng| ng.status == from))
    }
}
// [/example: driver]

// [example: tests]
#[cfg(test)]
mod tests {
    //! Natively, without the host: the SDK's in-memory Kubernetes stands
    //! in for the management cluster, and `testing::snapshot` builds what
    //! the host hands `derive_status` for the driver's watches.

    use super::*;
    use openkeel_magnum_driver::testing;

    const UUID: &str = "5d12f6fd-a196-4bf0-ae4c-1f639a523a52";
    const WORKER: &str = "b2d1e9d4-5a9f-4e1d-8e1c-7b4f7b1ca012";

    /// A new cluster as the conductor writes it: one master, two workers.
    fn state(labels: &[(&str, &str)]) -> ClusterState {
        let mut st = ClusterState::default();
        st.cluster.uuid = UUID.into();
        st.cluster.labels = Some(labels.iter().copied().collect());
        st.cluster.status = Some(Status::CreateInProgress);
        for (uuid, role, count) in [
            ("a1c0d8c3-4f8e-4d0c-9d0b-6a3e6a0b9f01", "master", 1),
            (WORKER, "worker", 2),
        ] {
            st.nodegroups.push(NodeGroup {
                uuid: uuid.into(),
                cluster_id: UUID.into(),
                role: Some(role.into()),
                node_count: Some(count),
                status: Some(Status::CreateInProgress),
                ..Default::default()
            });
        }
        st
    }

    /// Saves an update into the rows, as the conductor does.
    fn save(st: &mut ClusterState, u: Update) {
        if let Some(c) = u.cluster {
            st.cluster = c;
        }
        for ng in u.nodegroups {
            if let Some(row) = st.nodegroups.iter_mut().find(|r| r.uuid == ng.uuid) {
                *row = ng;
            }
        }
    }

    /// What the host does when a watched object changes.
    fn status_by_watches(st: &ClusterState) -> Update {
        let ctx = CallContext::default();
        let observed = testing::snapshot(&Hello.watches(&ctx, st))
            .into_iter()
            .flat_map(|o| o.objects)
            .collect();
        Hello
            .derive_status(&ctx, st.clone(), observed)
            .unwrap_or_else(|e| panic!("derive_status: {e}"))
    }

    /// Saves what the watch derives.
    fn follow(st: &mut ClusterState) {
        let u = status_by_watches(st);
        save(st, u);
    }

    fn statuses(st: &ClusterState) -> Vec<Option<Status>> {
        std::iter::once(st.cluster.status)
            .chain(st.nodegroups.iter().map(|ng| ng.status))
            .collect()
    }

    fn the_config_map() -> serde_json::Value {
        match testing::objects().as_slice() {
            [cm] => cm.value().unwrap_or_default(),
            other => panic!("{} objects", other.len()),
        }
    }

    #[test]
    fn a_bad_size_label_is_a_400_before_anything_is_built() {
        testing::reset();
        let ctx = CallContext::default();
        assert_eq!(
            Hello.validate_create(&ctx, &state(&[("size", "3")])),
            Ok(())
        );
        for (value, message) in [
            ("11", "Label size must be between 1 and 10, not 11."),
            ("x", "Label size has an invalid integer value \"x\"."),
        ] {
            let bad = state(&[("size", value)]);
            let Err(DriverError::Client(e)) = Hello.validate_create(&ctx, &bad) else {
                panic!("size {value} accepted");
            };
            assert_eq!((e.status, e.message.as_str()), (400, message));
            let Err(DriverError::Client(e)) = Hello.create_cluster(&ctx, bad, 60) else {
                panic!("size {value} created");
            };
            assert_eq!(e.status, 400);
        }
        assert!(testing::objects().is_empty());
    }

    #[test]
    fn create_status_by_watches_resize_delete() {
        testing::reset();
        let ctx = CallContext::default();
        let mut st = state(&[("size", "3")]);

        let u = Hello.create_cluster(&ctx, st.clone(), 60);
        save(&mut st, u.unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(st.cluster.stack_id.as_deref(), Some("hello-5d12f6fd"));
        assert_eq!(
            the_config_map()["data"],
            serde_json::json!({ "phase": "creating", "size": "3", "workers": "2" })
        );
        assert_eq!(statuses(&st), [Some(Status::CreateInProgress); 3]);
        let created = testing::objects().remove(0);

        // The host watches the ConfigMap and derives the status from it.
        follow(&mut st);
        assert_eq!(statuses(&st), [Some(Status::CreateComplete); 3]);
        assert!(status_by_watches(&st).is_empty(), "nothing more to say");

        // Resize the workers to 5: the cluster and that nodegroup move.
        let req = Resize {
            nodegroup_uuid: WORKER.into(),
            node_count: 5,
            nodes_to_remove: vec![],
        };
        let u = Hello.resize_cluster(&ctx, st.clone(), req);
        save(&mut st, u.unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(the_config_map()["data"]["workers"], "5");
        assert_eq!(st.nodegroups[1].node_count, Some(5));
        assert_eq!(
            statuses(&st),
            [
                Some(Status::UpdateInProgress),
                Some(Status::CreateComplete),
                Some(Status::UpdateInProgress)
            ]
        );
        // A copy of the ConfigMap from before the resize says nothing.
        let stale = Hello.derive_status(&ctx, st.clone(), vec![created.clone()]);
        assert_eq!(stale, Ok(Update::none()));
        follow(&mut st);
        assert_eq!(
            statuses(&st),
            [
                Some(Status::UpdateComplete),
                Some(Status::CreateComplete),
                Some(Status::UpdateComplete)
            ]
        );

        // The SDK's default poll says nothing: the status comes by watch.
        let polled = Hello.poll_status(&ctx, st.clone());
        assert!(polled.is_ok_and(|u| u.is_empty()));

        let u = Hello.delete_cluster(&ctx, st.clone());
        save(&mut st, u.unwrap_or_else(|e| panic!("{e}")));
        assert!(testing::objects().is_empty());
        assert_eq!(st.cluster.status, Some(Status::DeleteInProgress));
        follow(&mut st);
        assert_eq!(statuses(&st)[0], Some(Status::DeleteComplete));
    }
}
// [/example: tests]
