//! The fake driver as a component. Go: internal/driver/fake/fake_test.go,
//! test for test; the driver's memory lives in the host's `state`, so a
//! "restart" is a new host.

use std::sync::Arc;
use std::time::Duration;

use driver_host::clock::ManualClock;
use driver_host::{
    CallContext, CallError, ClusterState, Driver, DriverHost, Resize, Update, Upgrade,
};
use magnum_domain::Status;
use magnum_domain::models::{ClusterTemplate, NodeGroup, StringMap};

use crate::common::*;

struct World {
    host: DriverHost,
    clock: Arc<ManualClock>,
    st: ClusterState,
}

fn s(status: &Option<Status>) -> &'static str {
    status.map_or("<nil>", |s| s.as_str())
}

impl World {
    async fn new(delay: u64, l: Option<StringMap>) -> World {
        let clock = ManualClock::new(start_time());
        Self::with_uuids(clock, delay, CLUSTER_UUID, MASTER_UUID, WORKER_UUID, l).await
    }

    async fn with_uuids(
        clock: Arc<ManualClock>,
        delay: u64,
        c: &str,
        m: &str,
        w: &str,
        l: Option<StringMap>,
    ) -> World {
        let host = fake_host(&clock, delay).await;
        World {
            host,
            clock,
            st: state(c, m, w, l),
        }
    }

    fn drv(&self) -> Driver {
        match self.host.registry().lookup("fake") {
            Ok(d) => d.clone(),
            Err(e) => panic!("{e}"),
        }
    }

    /// A new process: a new host, the same clock and rows.
    async fn restart(&mut self, delay: u64) {
        self.host = fake_host(&self.clock, delay).await;
    }

    fn must(&mut self, r: Result<Update, CallError>) -> Update {
        match r {
            Ok(u) => {
                apply(&mut self.st, &u);
                u
            }
            Err(e) => panic!("driver call: {e}"),
        }
    }

    async fn poll(&mut self) -> Update {
        let r = self
            .drv()
            .poll_status(&CallContext::admin(), &self.st)
            .await
            .map(|a| a.update);
        self.must(r)
    }

    async fn create(&mut self) {
        let r = self.drv().create_cluster(&user(), &self.st, 60).await;
        self.must(r);
        self.poll().await;
        self.want_status("CREATE_COMPLETE", None);
    }

    fn want_status(&self, status: &str, reason: Option<&str>) {
        assert_eq!(s(&self.st.cluster.status), status, "cluster status");
        assert_eq!(
            self.st.cluster.status_reason.as_deref(),
            reason,
            "cluster status_reason"
        );
    }

    fn ng(&self, name: &str) -> NodeGroup {
        match self.st.nodegroups.iter().find(|n| n.name == name) {
            Some(n) => n.clone(),
            None => panic!("no nodegroup {name}"),
        }
    }

    fn want_ng(&self, name: &str, status: &str, addrs: Option<Vec<String>>) {
        let ng = self.ng(name);
        assert_eq!(s(&ng.status), status, "nodegroup {name} status");
        if let Some(a) = addrs {
            assert_eq!(
                ng.node_addresses,
                Some(a),
                "nodegroup {name} node_addresses"
            );
        }
    }

    fn addrs(&self, ng: &str, idx: &[i32]) -> Vec<String> {
        let ng = self.ng(ng);
        idx.iter()
            .map(|i| node_of(&self.st.cluster, &ng, *i).address)
            .collect()
    }

    fn node(&self, ng: &str, i: i32) -> Node {
        node_of(&self.st.cluster, &self.ng(ng), i)
    }
}

#[tokio::test]
async fn registered_as_a_beta_driver() {
    // Go: TestRegistered.
    let clock = ManualClock::new(start_time());
    let mut s = settings();
    s.enabled_beta_drivers.clear();
    let host = host_with(s, Default::default(), driver_host::builtin_sources()).await;
    assert!(
        host.registry()
            .for_target("vm", "fedora-coreos", "kubernetes")
            .is_err(),
        "the fake driver is chosen by tuple without being enabled as a beta driver"
    );
    // A type the Cluster API driver provides too goes to it.
    assert_eq!(
        host.registry()
            .for_target("vm", "ubuntu", "kubernetes")
            .map(|d| d.name().to_string()),
        Ok("k8s_cluster_api".to_string())
    );
    let host = fake_host(&clock, 0).await;
    assert!(host.registry().names().contains(&"fake"));
    for os in ["ubuntu", "fedora-coreos", "flatcar", "debian", "rockylinux"] {
        assert_eq!(
            host.registry()
                .for_target("vm", os, "kubernetes")
                .map(|d| d.name().to_string()),
            Ok("fake".to_string()),
            "{os}"
        );
    }
    assert!(
        host.registry()
            .for_target("bm", "ubuntu", "kubernetes")
            .is_err()
    );
}

#[tokio::test]
async fn create_cluster() {
    // Go: TestCreateCluster.
    let mut w = World::new(300, labels(&[("kube_tag", "v1.30.4")])).await;
    let r = w.drv().create_cluster(&user(), &w.st, 60).await;
    let upd = w.must(r);
    let stack = w.st.cluster.stack_id.clone().unwrap_or_default();
    assert_eq!(stack, stack_id(CLUSTER_UUID));
    assert!(stack.starts_with("kube-") && stack.len() == 10, "{stack}");
    assert_eq!(upd.nodegroups.len(), 2);
    for ng in &w.st.nodegroups {
        assert_eq!(ng.stack_id.as_deref(), Some(stack.as_str()));
        assert_eq!(s(&ng.status), "CREATE_IN_PROGRESS");
    }
    w.want_status("CREATE_IN_PROGRESS", None);
    // The rows' other columns, updated_at included, come back unchanged.
    assert_eq!(w.st.cluster.updated_at, Some(created()));

    // Nothing changes before the delay.
    w.clock.advance(Duration::from_secs(299));
    assert!(
        !w.poll().await.changed(),
        "poll before the delay changed something"
    );
    w.clock.advance(Duration::from_secs(1));
    w.poll().await;
    w.want_status("CREATE_COMPLETE", None);
    w.want_ng(
        "default-master",
        "CREATE_COMPLETE",
        Some(w.addrs("default-master", &[0])),
    );
    w.want_ng(
        "default-worker",
        "CREATE_COMPLETE",
        Some(w.addrs("default-worker", &[0, 1])),
    );
    let cl = w.st.cluster.clone();
    assert_eq!(cl.api_address, Some(api_address(CLUSTER_UUID)));
    assert!(
        cl.api_address
            .as_deref()
            .unwrap_or("")
            .starts_with("https://10.")
    );
    assert_eq!(cl.coe_version.as_deref(), Some("v1.30.4"));
    assert_eq!(w.ng("default-worker").version.as_deref(), Some("v1.30.4"));
    assert_eq!(cl.health_status.as_deref(), Some("HEALTHY"));
    let want = labels(&[
        (&format!("{stack}-default-master-0.Ready"), "True"),
        (&format!("{stack}-default-worker-0.Ready"), "True"),
        (&format!("{stack}-default-worker-1.Ready"), "True"),
        ("api", "ok"),
    ]);
    assert_eq!(cl.health_status_reason, want);
    let mut all = w.addrs("default-master", &[0]);
    all.extend(w.addrs("default-worker", &[0, 1]));
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 3, "node addresses are not distinct");
    // The Nova server uuids are UUIDv5 as the Go driver's NodeOf.
    assert_eq!(w.node("default-worker", 0).server_id.len(), 36);

    // A completed cluster does not change.
    w.clock.advance(Duration::from_secs(3600));
    assert!(!w.poll().await.changed());

    // Same cluster, same addresses.
    let mut w2 = World::new(0, None).await;
    w2.create().await;
    assert_eq!(
        w.st.nodegroups[1].node_addresses,
        w2.st.nodegroups[1].node_addresses
    );
}

#[tokio::test]
async fn coe_version() {
    // Go: TestCOEVersion.
    let mut w = World::new(0, None).await;
    w.create().await;
    assert_eq!(
        w.st.cluster.coe_version.as_deref(),
        Some("v1.30.4"),
        "template kube_tag"
    );
    let mut w = World::new(0, None).await;
    w.st.template.labels = None;
    w.create().await;
    assert_eq!(
        w.st.cluster.coe_version.as_deref(),
        Some("v1.31.1"),
        "default"
    );
}

#[tokio::test]
async fn update_cluster() {
    // Go: TestUpdateCluster.
    let mut w = World::new(0, None).await;
    w.create().await;
    let before = w.ng("default-worker").node_addresses;
    w.st.nodegroups[1].node_count = Some(3); // saved by the conductor first
    let r = w.drv().update_cluster(&user(), &w.st).await;
    w.must(r);
    w.want_status("UPDATE_IN_PROGRESS", None);
    w.want_ng("default-worker", "UPDATE_IN_PROGRESS", before);
    w.poll().await;
    w.want_status("UPDATE_COMPLETE", None);
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[0, 1, 2])),
    );
    w.want_ng("default-master", "CREATE_COMPLETE", None);
    assert_eq!(
        w.st.cluster.health_status_reason.as_ref().map(|m| m.len()),
        Some(5)
    );
}

async fn resize(w: &mut World, ng: &str, count: i32, remove: &[String]) {
    let req = Resize {
        nodegroup_uuid: w.ng(ng).uuid,
        node_count: count,
        nodes_to_remove: remove.to_vec(),
    };
    let r = w.drv().resize_cluster(&user(), &w.st, &req).await;
    w.must(r);
    w.want_status("UPDATE_IN_PROGRESS", None);
    w.want_ng(ng, "UPDATE_IN_PROGRESS", None);
    assert_eq!(w.ng(ng).node_count, Some(count));
    w.poll().await;
    w.want_status("UPDATE_COMPLETE", None);
}

#[tokio::test]
async fn resize_cluster() {
    // Go: TestResizeCluster.
    let mut w = World::new(0, None).await;
    w.create().await;
    // grow
    resize(&mut w, "default-worker", 4, &[]).await;
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[0, 1, 2, 3])),
    );
    // shrink removing a server by uuid
    let id = w.node("default-worker", 1).server_id;
    resize(&mut w, "default-worker", 3, &[id]).await;
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[0, 2, 3])),
    );
    // shrink without nodes_to_remove drops the newest node
    resize(&mut w, "default-worker", 2, &[]).await;
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[0, 2])),
    );
    // same count with nodes_to_remove replaces the nodes; index 3 was used
    // before: new nodes never reuse an index
    let (n0, a2) = (
        w.node("default-worker", 0).name,
        w.node("default-worker", 2).address,
    );
    resize(&mut w, "default-worker", 2, &[n0, a2]).await;
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[4, 5])),
    );
    // unknown nodes_to_remove are ignored
    resize(&mut w, "default-worker", 1, &["no-such-server".to_string()]).await;
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[4])),
    );
    // to zero
    resize(&mut w, "default-worker", 0, &[]).await;
    w.want_ng("default-worker", "UPDATE_COMPLETE", Some(vec![]));
    // master to three, nodes_to_remove ignored
    let m0 = w.node("default-master", 0).server_id;
    resize(&mut w, "default-master", 3, &[m0]).await;
    w.want_ng(
        "default-master",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-master", &[0, 1, 2])),
    );
    // unknown nodegroup
    let req = Resize {
        nodegroup_uuid: "nope".into(),
        node_count: 1,
        nodes_to_remove: vec![],
    };
    assert!(w.drv().resize_cluster(&user(), &w.st, &req).await.is_err());
}

#[tokio::test]
async fn validate_master() {
    // Go: TestValidateMaster.
    let w = World::new(0, None).await;
    let d = w.drv();
    for n in [1, 3, 5] {
        assert_eq!(d.validate_master_resize(n).await, Ok(()));
        assert_eq!(d.validate_master_size(n).await, Ok(()));
    }
    let want = |n: i32| {
        Err(CallError::Client(magnum_domain::MagnumError::new(
            400,
            "MasterNGSizeInvalid",
            format!("master nodegroup size of {n} is invalid, size cannot be an even number."),
        )))
    };
    assert_eq!(d.validate_master_resize(2).await, want(2));
    assert_eq!(d.validate_master_size(0).await, want(0));
}

#[tokio::test]
async fn upgrade_cluster() {
    // Go: TestUpgradeCluster.
    let mut w = World::new(0, labels(&[("kube_tag", "v1.30.4"), ("other", "x")])).await;
    w.create().await;
    let labels_before = w.st.cluster.labels.clone();
    let tmpl = ClusterTemplate {
        uuid: "tmpl-2".into(),
        name: "k8s-1.31".into(),
        image_id: Some("img-2".into()),
        labels: labels(&[("kube_tag", "v1.31.2")]),
        ..Default::default()
    };
    let req = Upgrade {
        template: tmpl.clone(),
        max_batch_size: 1,
        nodegroup_uuid: None,
    };
    let r = w.drv().upgrade_cluster(&user(), &w.st, &req).await;
    w.must(r);
    w.st.template = tmpl; // the conductor looks the template up by the new id
    w.want_status("UPDATE_IN_PROGRESS", None);
    let l = w.st.cluster.labels.clone().unwrap_or_default();
    assert_eq!(w.st.cluster.cluster_template_id, "tmpl-2");
    assert_eq!(l.get("kube_tag").map(String::as_str), Some("v1.31.2"));
    assert_eq!(l.get("other").map(String::as_str), Some("x"));
    assert_eq!(
        labels_before
            .and_then(|l| l.get("kube_tag").cloned())
            .as_deref(),
        Some("v1.30.4"),
        "the input row's labels were modified"
    );
    for ng in &w.st.nodegroups {
        assert_eq!(ng.image_id.as_deref(), Some("img-2"), "{}", ng.name);
        assert_eq!(
            ng.labels
                .as_ref()
                .and_then(|l| l.get("kube_tag"))
                .map(String::as_str),
            Some("v1.31.2")
        );
        assert_eq!(s(&ng.status), "UPDATE_IN_PROGRESS");
    }
    w.poll().await;
    w.want_status("UPDATE_COMPLETE", None);
    assert_eq!(w.st.cluster.coe_version.as_deref(), Some("v1.31.2"));
    for ng in &w.st.nodegroups {
        assert_eq!(ng.version.as_deref(), Some("v1.31.2"));
        assert_eq!(s(&ng.status), "UPDATE_COMPLETE");
    }

    // One nodegroup.
    let tmpl3 = ClusterTemplate {
        uuid: "tmpl-3".into(),
        image_id: Some("img-3".into()),
        labels: labels(&[("kube_tag", "v1.32.0")]),
        ..Default::default()
    };
    let req = Upgrade {
        template: tmpl3,
        max_batch_size: 0,
        nodegroup_uuid: Some(WORKER_UUID.into()),
    };
    let r = w.drv().upgrade_cluster(&user(), &w.st, &req).await;
    let upd = w.must(r);
    assert_eq!(upd.nodegroups.len(), 1);
    assert_eq!(upd.nodegroups[0].uuid, WORKER_UUID);
    assert_eq!(
        w.ng("default-master").image_id.as_deref(),
        Some("img-2"),
        "master image changed"
    );
    w.poll().await;
    w.want_status("UPDATE_COMPLETE", None);
}

#[tokio::test]
async fn nodegroup_operations() {
    // Go: TestNodeGroupOperations.
    let mut w = World::new(0, None).await;
    w.create().await;
    let stack = w.st.cluster.stack_id.clone().unwrap_or_default();
    let gpu = NodeGroup {
        uuid: "c3e2f0e5-6b0a-4f2e-9f2d-8c5a8c2db123".into(),
        name: "gpu".into(),
        cluster_id: CLUSTER_UUID.into(),
        project_id: "p1".into(),
        role: Some("worker".into()),
        is_default: Some(false),
        node_count: Some(2),
        min_node_count: Some(1),
        status: Some(Status::CreateInProgress),
        ..Default::default()
    };
    let r = w.drv().create_nodegroup(&user(), &w.st, &gpu).await;
    w.must(r);
    w.want_status("UPDATE_IN_PROGRESS", None);
    w.want_ng("gpu", "CREATE_IN_PROGRESS", None);
    assert_eq!(w.ng("gpu").stack_id.as_deref(), Some(stack.as_str()));
    w.poll().await;
    w.want_status("UPDATE_COMPLETE", None);
    w.want_ng("gpu", "CREATE_COMPLETE", Some(w.addrs("gpu", &[0, 1])));
    let reason =
        w.st.cluster
            .health_status_reason
            .clone()
            .unwrap_or_default();
    assert_eq!(
        reason
            .get(&format!("{stack}-gpu-1.Ready"))
            .map(String::as_str),
        Some("True")
    );

    let mut ng = w.ng("gpu");
    ng.max_node_count = Some(5);
    let r = w.drv().update_nodegroup(&user(), &w.st, &ng).await;
    w.must(r);
    w.want_status("UPDATE_IN_PROGRESS", None);
    w.want_ng("gpu", "UPDATE_IN_PROGRESS", None);
    w.poll().await;
    w.want_status("UPDATE_COMPLETE", None);
    w.want_ng("gpu", "UPDATE_COMPLETE", Some(w.addrs("gpu", &[0, 1])));
    assert_eq!(
        w.ng("gpu").max_node_count,
        Some(5),
        "max_node_count not kept"
    );

    let r = w.drv().delete_nodegroup(&user(), &w.st, &w.ng("gpu")).await;
    w.must(r);
    w.want_status("UPDATE_IN_PROGRESS", None);
    w.want_ng("gpu", "DELETE_IN_PROGRESS", None);
    let upd = w.poll().await;
    assert_eq!(upd.deleted_nodegroups, vec![gpu.uuid.clone()]);
    w.want_status("UPDATE_COMPLETE", None);
    assert_eq!(w.st.nodegroups.len(), 2);
    let reason =
        w.st.cluster
            .health_status_reason
            .clone()
            .unwrap_or_default();
    assert!(
        !reason.contains_key(&format!("{stack}-gpu-0.Ready")),
        "{reason:?}"
    );
}

#[tokio::test]
async fn delete_cluster() {
    // Go: TestDeleteCluster.
    let mut w = World::new(60, None).await;
    let r = w.drv().create_cluster(&user(), &w.st, 0).await;
    w.must(r);
    w.clock.advance(Duration::from_secs(60));
    w.poll().await;
    let r = w.drv().delete_cluster(&user(), &w.st).await;
    w.must(r);
    w.want_status("DELETE_IN_PROGRESS", None);
    assert!(
        !w.poll().await.changed(),
        "delete completed before the delay"
    );
    w.clock.advance(Duration::from_secs(60));
    w.poll().await;
    w.want_status("DELETE_COMPLETE", None);
    assert!(
        !w.poll().await.changed(),
        "poll of a deleted cluster changed something"
    );
    assert!(
        w.host.driver_state("fake", CLUSTER_UUID).is_empty(),
        "the driver kept state of a deleted cluster"
    );
}

#[tokio::test]
async fn delete_while_creating() {
    // Go: TestDeleteWhileCreating.
    let mut w = World::new(0, None).await;
    let r = w.drv().create_cluster(&user(), &w.st, 0).await;
    w.must(r);
    let r = w.drv().delete_cluster(&user(), &w.st).await;
    w.must(r);
    w.poll().await;
    w.want_status("DELETE_COMPLETE", None);
}

const OPS: [&str; 9] = [
    "create",
    "update",
    "delete",
    "resize",
    "upgrade",
    "nodegroup_create",
    "nodegroup_update",
    "nodegroup_delete",
    "rotate_ca",
];

/// Runs one operation of each kind (Go: the `operations` table).
async fn run(w: &World, op: &str) -> Result<Update, CallError> {
    let d = w.drv();
    let u = user();
    match op {
        "create" => d.create_cluster(&u, &w.st, 0).await,
        "update" => d.update_cluster(&u, &w.st).await,
        "delete" => d.delete_cluster(&u, &w.st).await,
        "resize" => {
            let r = Resize {
                nodegroup_uuid: WORKER_UUID.into(),
                node_count: 3,
                nodes_to_remove: vec![],
            };
            d.resize_cluster(&u, &w.st, &r).await
        }
        "upgrade" => {
            let r = Upgrade {
                template: w.st.template.clone(),
                ..Default::default()
            };
            d.upgrade_cluster(&u, &w.st, &r).await
        }
        "nodegroup_create" => {
            let ng = NodeGroup {
                uuid: "ng-new".into(),
                name: "extra".into(),
                cluster_id: w.st.cluster.uuid.clone(),
                role: Some("worker".into()),
                is_default: Some(false),
                node_count: Some(1),
                labels: w.st.cluster.labels.clone(),
                ..Default::default()
            };
            d.create_nodegroup(&u, &w.st, &ng).await
        }
        "nodegroup_update" => d.update_nodegroup(&u, &w.st, &w.ng("default-worker")).await,
        "nodegroup_delete" => {
            let mut ng = w.ng("default-worker");
            ng.is_default = Some(false); // the API refuses default nodegroups
            d.delete_nodegroup(&u, &w.st, &ng).await
        }
        "rotate_ca" => d.rotate_ca(&u, &w.st).await,
        _ => panic!("unknown operation {op}"),
    }
}

#[tokio::test]
async fn failure_injection() {
    // Go: TestFailureInjection.
    let cases = [
        (
            "create",
            "CREATE_FAILED",
            Some(("default-worker", "CREATE_FAILED")),
        ),
        (
            "update",
            "UPDATE_FAILED",
            Some(("default-worker", "UPDATE_FAILED")),
        ),
        ("delete", "DELETE_FAILED", None),
        (
            "resize",
            "UPDATE_FAILED",
            Some(("default-worker", "UPDATE_FAILED")),
        ),
        (
            "upgrade",
            "UPDATE_FAILED",
            Some(("default-master", "UPDATE_FAILED")),
        ),
        (
            "nodegroup_create",
            "UPDATE_FAILED",
            Some(("extra", "CREATE_FAILED")),
        ),
        (
            "nodegroup_update",
            "UPDATE_FAILED",
            Some(("default-worker", "UPDATE_FAILED")),
        ),
        (
            "nodegroup_delete",
            "UPDATE_FAILED",
            Some(("default-worker", "DELETE_FAILED")),
        ),
        ("rotate_ca", "UPDATE_FAILED", None),
    ];
    for (op, cluster_status, ng) in cases {
        for with_reason in [false, true] {
            let fail = format!("other,{op}");
            let mut pairs = vec![("fake_fail", fail.as_str())];
            let mut reason = format!("fake driver: injected {op} failure");
            if with_reason {
                pairs.push(("fake_fail_reason", "Quota exceeded for instances"));
                reason = "Quota exceeded for instances".to_string();
            }
            let l = labels(&pairs);
            let mut w = World::new(0, l.clone()).await;
            if op != "create" {
                // Create must succeed: the failure labels are added
                // afterwards, as a PATCH of labels would.
                w.st.cluster.labels = None;
                w.create().await;
                w.st.cluster.labels = l.clone();
                for n in &mut w.st.nodegroups {
                    n.labels = l.clone();
                }
            }
            let r = run(&w, op).await;
            w.must(r);
            w.poll().await;
            assert_eq!(
                s(&w.st.cluster.status),
                cluster_status,
                "{op} reason={with_reason}"
            );
            assert_eq!(
                w.st.cluster.status_reason.as_deref(),
                Some(reason.as_str()),
                "{op}"
            );
            if let Some((name, status)) = ng {
                let n = w.ng(name);
                assert_eq!(s(&n.status), status, "{op}: nodegroup {name}");
                assert_eq!(
                    n.status_reason.as_deref(),
                    Some(reason.as_str()),
                    "{op}: nodegroup {name}"
                );
            }
            assert!(
                !w.poll().await.changed(),
                "{op}: a failed cluster changed on the next poll"
            );
        }
    }
}

#[tokio::test]
async fn failure_labels_of_other_operations_and_nodegroups() {
    // Go: TestFailureInjection's two subtests.
    let mut w = World::new(0, labels(&[("fake_fail", "delete,resize")])).await;
    w.create().await;

    let mut w = World::new(0, None).await;
    w.create().await;
    let ng = NodeGroup {
        uuid: "ng-bad".into(),
        name: "bad".into(),
        cluster_id: CLUSTER_UUID.into(),
        role: Some("worker".into()),
        is_default: Some(false),
        node_count: Some(1),
        labels: labels(&[
            ("fake_fail", "nodegroup_create"),
            ("fake_fail_reason", "no GPUs"),
        ]),
        ..Default::default()
    };
    let r = w.drv().create_nodegroup(&user(), &w.st, &ng).await;
    w.must(r);
    w.poll().await;
    w.want_status("UPDATE_FAILED", Some("no GPUs"));
    w.want_ng("bad", "CREATE_FAILED", None);
    w.want_ng("default-worker", "CREATE_COMPLETE", None);
}

#[tokio::test]
async fn error_injection() {
    // Go: TestErrorInjection.
    for op in OPS {
        let reason = format!("boom {op}");
        let w = World::new(
            0,
            labels(&[("fake_error", op), ("fake_fail_reason", &reason)]),
        )
        .await;
        match run(&w, op).await {
            Err(CallError::Failed(text)) => assert_eq!(text, reason, "{op}"),
            other => panic!("{op}: {other:?}, want the failure {reason:?}"),
        }
    }
}

#[tokio::test]
async fn ca_rotation() {
    // Go: TestCARotation.
    let mut w = World::new(0, None).await;
    w.create().await;
    assert_eq!(w.drv().can_rotate_ca(&user(), &w.st).await, Ok(()));
    let r = w.drv().rotate_ca(&user(), &w.st).await;
    w.must(r);
    w.want_status("UPDATE_IN_PROGRESS", None);
    w.poll().await;
    w.want_status("UPDATE_COMPLETE", None);

    // Refused by label.
    let mut w = World::new(0, labels(&[("fake_no_ca_rotation", "true")])).await;
    w.create().await;
    let want = Err(CallError::Client(
        magnum_domain::MagnumError::rotate_ca_not_supported_by_driver(),
    ));
    assert_eq!(w.drv().can_rotate_ca(&user(), &w.st).await, want);
    assert_eq!(w.drv().rotate_ca(&user(), &w.st).await.map(|_| ()), want);
}

#[tokio::test]
async fn credential_rotation() {
    // Go: TestCredentialRotation.
    let mut w = World::new(0, None).await;
    w.create().await;
    for _ in 0..2 {
        let r = w.drv().rotate_credential(&user(), &w.st).await;
        assert!(!w.must(r).changed(), "credential rotation changed rows");
    }
    assert_eq!(
        w.host
            .driver_state("fake", CLUSTER_UUID)
            .get("credential_rotations")
            .map(String::as_str),
        Some("2")
    );
    w.st.cluster.labels = labels(&[("fake_no_credential_rotation", "True")]);
    assert_eq!(
        w.drv().rotate_credential(&user(), &w.st).await,
        Err(CallError::Client(
            magnum_domain::MagnumError::credential_rotation_not_supported_by_driver()
        ))
    );
}

#[tokio::test]
async fn restart() {
    // Go: TestRestart, subtest for subtest.

    // A creating cluster completes on the first poll.
    let mut w = World::new(3600, None).await;
    let r = w.drv().create_cluster(&user(), &w.st, 0).await;
    w.must(r);
    w.restart(3600).await;
    w.poll().await;
    w.want_status("CREATE_COMPLETE", None);
    w.want_ng(
        "default-worker",
        "CREATE_COMPLETE",
        Some(w.addrs("default-worker", &[0, 1])),
    );

    // A row never seen by the driver.
    let mut w = World::new(3600, None).await;
    w.poll().await;
    w.want_status("CREATE_COMPLETE", None);
    assert!(w.st.cluster.api_address.is_some() && w.st.cluster.health_status.is_some());

    // A resize completes from the stored addresses.
    let mut w = World::new(0, None).await;
    w.create().await;
    let req = Resize {
        nodegroup_uuid: WORKER_UUID.into(),
        node_count: 3,
        nodes_to_remove: vec![w.node("default-worker", 0).server_id],
    };
    let r = w.drv().resize_cluster(&user(), &w.st, &req).await;
    w.must(r);
    w.poll().await;
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[1, 2, 3])),
    );
    // Restart, then the conductor stores a new count and updates.
    w.restart(3600).await;
    w.st.nodegroups[1].node_count = Some(4);
    w.st.nodegroups[1].status = Some(Status::UpdateInProgress);
    w.st.cluster.status = Some(Status::UpdateInProgress);
    w.poll().await;
    w.want_status("UPDATE_COMPLETE", None);
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[1, 2, 3, 4])),
    );
    let nodes = w.host.driver_state("fake", CLUSTER_UUID);
    assert_eq!(
        nodes
            .get(&format!("nodes/{WORKER_UUID}"))
            .map(String::as_str),
        Some("5;1,2,3,4"),
        "the driver's memberships: {nodes:?}"
    );

    // nodes_to_remove reaches a second process serving the same rows.
    let clock = ManualClock::new(start_time());
    let mut w = World::with_uuids(
        clock.clone(),
        0,
        CLUSTER_UUID,
        MASTER_UUID,
        WORKER_UUID,
        None,
    )
    .await;
    let api = fake_host(&clock, 0).await;
    let api_drv = || match api.registry().lookup("fake") {
        Ok(d) => d.clone(),
        Err(e) => panic!("{e}"),
    };
    let r = api_drv().create_cluster(&user(), &w.st, 60).await;
    w.must(r);
    // The reconciler process (w.host) completes the create.
    w.poll().await;
    w.want_ng(
        "default-worker",
        "CREATE_COMPLETE",
        Some(w.addrs("default-worker", &[0, 1])),
    );
    // The API process replaces node 0 with the count unchanged.
    let req = Resize {
        nodegroup_uuid: WORKER_UUID.into(),
        node_count: 2,
        nodes_to_remove: vec![w.node("default-worker", 0).server_id],
    };
    let r = api_drv().resize_cluster(&user(), &w.st, &req).await;
    w.must(r);
    w.want_ng(
        "default-worker",
        "UPDATE_IN_PROGRESS",
        Some(w.addrs("default-worker", &[1])),
    );
    w.poll().await;
    w.want_status("UPDATE_COMPLETE", None);
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[1, 2])),
    );

    // Failure labels apply after a restart.
    let mut w = World::new(3600, labels(&[("fake_fail", "create")])).await;
    w.poll().await;
    w.want_status(
        "CREATE_FAILED",
        Some("fake driver: injected create failure"),
    );

    // A deleting cluster completes.
    let mut w = World::new(3600, None).await;
    w.st.cluster.status = Some(Status::DeleteInProgress);
    w.poll().await;
    w.want_status("DELETE_COMPLETE", None);

    // A nodegroup left in progress completes.
    let mut w = World::new(0, None).await;
    w.create().await;
    w.restart(3600).await;
    w.st.nodegroups[1].status = Some(Status::UpdateInProgress);
    let upd = w.poll().await;
    w.want_ng(
        "default-worker",
        "UPDATE_COMPLETE",
        Some(w.addrs("default-worker", &[0, 1])),
    );
    assert!(
        upd.cluster.is_none(),
        "the completed cluster row was rewritten"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_clusters() {
    // Go: TestConcurrentClusters: full lifecycles of 32 clusters at once on
    // one host.
    let clock = ManualClock::new(start_time());
    let host = Arc::new(fake_host(&clock, 1).await);
    let mut tasks = Vec::new();
    for i in 0..32 {
        let host = host.clone();
        let clock = clock.clone();
        tasks.push(tokio::spawn(
            async move { lifecycle(&host, &clock, i).await },
        ));
    }
    for t in tasks {
        match t.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("{e}"),
            Err(e) => panic!("task: {e}"),
        }
    }
}

/// create → resize → nodegroup create → delete for one cluster.
async fn lifecycle(host: &DriverHost, clock: &ManualClock, i: usize) -> Result<(), String> {
    let id = |kind: &str| format!("{i:08}-0000-4000-8000-{:012}", kind.len());
    let mut st = state(&id("c"), &id("mm"), &id("www"), None);
    let d = host
        .registry()
        .lookup("fake")
        .map_err(|e| e.to_string())?
        .clone();
    async fn step(
        d: &Driver,
        st: &mut ClusterState,
        clock: &ManualClock,
        i: usize,
        name: &str,
        r: Result<Update, CallError>,
        want: &str,
    ) -> Result<(), String> {
        let upd = r.map_err(|e| format!("cluster {i} {name}: {e}"))?;
        apply(st, &upd);
        for _ in 0..100 {
            let upd = d
                .poll_status(&CallContext::admin(), st)
                .await
                .map_err(|e| format!("cluster {i} poll after {name}: {e}"))?;
            apply(st, &upd.update);
            if s(&st.cluster.status) == want {
                return Ok(());
            }
            clock.advance(Duration::from_millis(100));
        }
        Err(format!(
            "cluster {i} {name}: status {}, want {want}",
            s(&st.cluster.status)
        ))
    }
    let r = d.create_cluster(&user(), &st, 0).await;
    step(&d, &mut st, clock, i, "create", r, "CREATE_COMPLETE").await?;
    let count = 1 + (i % 4) as i32;
    let req = Resize {
        nodegroup_uuid: id("www"),
        node_count: count,
        nodes_to_remove: vec![],
    };
    let r = d.resize_cluster(&user(), &st, &req).await;
    step(&d, &mut st, clock, i, "resize", r, "UPDATE_COMPLETE").await?;
    let got = st.nodegroups[1].node_addresses.as_ref().map_or(0, Vec::len);
    if got != count as usize {
        return Err(format!("cluster {i}: {got} worker addresses, want {count}"));
    }
    let ng = NodeGroup {
        uuid: id("nnnn"),
        name: "extra".into(),
        cluster_id: id("c"),
        role: Some("worker".into()),
        is_default: Some(false),
        node_count: Some(2),
        ..Default::default()
    };
    let r = d.create_nodegroup(&user(), &st, &ng).await;
    step(
        &d,
        &mut st,
        clock,
        i,
        "nodegroup create",
        r,
        "UPDATE_COMPLETE",
    )
    .await?;
    let r = d.delete_cluster(&user(), &st).await;
    step(&d, &mut st, clock, i, "delete", r, "DELETE_COMPLETE").await
}
