//! The conditions → statuses table of § 5.2, the fields the rules fill in,
//! and the deletion deadline.

use std::collections::BTreeMap;

use openkeel_magnum_driver::{ClusterState, Labels, NodeGroup, Status, Update};

use super::*;
use crate::time::{minutes, parse_rfc3339};

const STACK_ID: &str = "kube-abcde";

fn now() -> i64 {
    parse_rfc3339("2026-11-30T12:00:00Z").expect("time")
}

fn condition(kind: &str, status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        kind: kind.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: Some("2026-11-30T11:00:00Z".into()),
    }
}

/// TopologyReconciled False with ReconcileFailed: a webhook refused the
/// Cluster's version (at the fixed time of `condition`).
fn refused_topology(c: &mut crate::status::CapiCluster) {
    set(
        &mut c.status.conditions,
        condition(
            TOPOLOGY_RECONCILED,
            "False",
            TOPOLOGY_RECONCILE_FAILED,
            "admission webhook denied: version cannot be increased",
        ),
    );
}

fn set(conditions: &mut Vec<Condition>, c: Condition) {
    match conditions.iter_mut().find(|x| x.kind == c.kind) {
        Some(x) => *x = c,
        None => conditions.push(c),
    }
}

fn meta(name: &str, generation: i64, labels: &[(&str, &str)]) -> Meta {
    Meta {
        name: name.into(),
        generation,
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        deletion_timestamp: None,
    }
}

/// A Machine of `nodegroup` ("" for the control plane), with one internal
/// address and its node healthy or not.
fn machine(name: &str, nodegroup: &str, ip: &str, healthy: bool) -> Machine {
    let mut labels = vec![(crate::names::LABEL_CLUSTER_NAME, STACK_ID)];
    if nodegroup.is_empty() {
        labels.push((LABEL_CONTROL_PLANE, ""));
    } else {
        labels.push((LABEL_DEPLOYMENT_NAME, nodegroup));
    }
    Machine {
        metadata: meta(name, 1, &labels),
        spec: MachineSpec {
            infrastructure_ref: NameRef {
                name: format!("{name}-osm"),
            },
        },
        status: MachineStatus {
            addresses: vec![Address {
                kind: "InternalIP".into(),
                address: ip.into(),
            }],
            conditions: vec![
                condition(
                    NODE_HEALTHY,
                    if healthy { "True" } else { "False" },
                    "x",
                    "",
                ),
                condition(INFRASTRUCTURE_READY, "True", "Ready", ""),
            ],
        },
    }
}

fn ready_md(name: &str, replicas: i32) -> MachineDeployment {
    MachineDeployment {
        metadata: meta(
            &format!("{STACK_ID}-{name}-x1"),
            2,
            &[(LABEL_DEPLOYMENT_NAME, name)],
        ),
        spec: Replicas {
            replicas: Some(replicas),
        },
        status: MachineDeploymentStatus {
            observed_generation: 2,
            phase: "Running".into(),
            conditions: vec![],
            up_to_date_replicas: Some(replicas),
            available_replicas: Some(replicas),
        },
    }
}

/// The management cluster of [`state`] once everything runs.
fn ready_world() -> Observed {
    let cluster = CapiCluster {
        metadata: meta(STACK_ID, 3, &[]),
        spec: CapiClusterSpec {
            control_plane_endpoint: Endpoint {
                host: "203.0.113.10".into(),
                port: 6443,
            },
            topology: Topology {
                version: "v1.31.1".into(),
            },
        },
        status: CapiClusterStatus {
            observed_generation: 3,
            conditions: vec![
                condition(INFRASTRUCTURE_READY, "True", "Ready", ""),
                condition(CONTROL_PLANE_AVAILABLE, "True", "Available", ""),
                condition(WORKERS_AVAILABLE, "True", "Available", ""),
                condition(TOPOLOGY_RECONCILED, "True", "ReconcileSucceeded", ""),
            ],
        },
    };
    let control_plane = ControlPlane {
        metadata: meta(&format!("{STACK_ID}-cp"), 1, &[]),
        spec: Replicas { replicas: Some(3) },
        status: ControlPlaneStatus {
            initialization: ControlPlaneInitialization {
                control_plane_initialized: Some(true),
            },
            conditions: vec![condition(AVAILABLE, "True", "Available", "")],
            observed_generation: 1,
            version: "v1.31.1".into(),
            up_to_date_replicas: Some(3),
            ready_replicas: Some(3),
        },
    };
    Observed {
        cluster: Some(cluster),
        control_plane: Some(control_plane),
        machine_deployments: [
            ("default-worker".to_string(), ready_md("default-worker", 2)),
            ("gpu".to_string(), ready_md("gpu", 1)),
        ]
        .into_iter()
        .collect(),
        machines: vec![
            machine("cp-1", "", "10.0.0.11", true),
            machine("cp-2", "", "10.0.0.12", true),
            machine("cp-3", "", "10.0.0.13", true),
            machine("g-1", "gpu", "10.0.0.31", true),
            machine("w-1", "default-worker", "10.0.0.21", true),
            machine("w-2", "default-worker", "10.0.0.22", true),
        ],
        infrastructure: None,
    }
}

fn nodegroup(uuid: &str, name: &str, role: &str, default: bool, count: i32) -> NodeGroup {
    NodeGroup {
        uuid: uuid.into(),
        name: name.into(),
        role: Some(role.into()),
        is_default: Some(default),
        node_count: Some(count),
        ..Default::default()
    }
}

/// Three masters, a default worker of two and a `gpu` nodegroup of one,
/// everything in `status`.
fn state(status: Status) -> ClusterState {
    let mut st = ClusterState::default();
    st.cluster.uuid = "2c4a9b9e-5d5e-4a52-9e49-0c2f1ac1f0b1".into();
    st.cluster.stack_id = Some(STACK_ID.into());
    st.cluster.status = Some(status);
    st.cluster.create_timeout = Some(60);
    st.cluster.created_at = now() - minutes(10);
    st.cluster.labels = Some(Labels::new().with("kube_tag", "v1.31.1"));
    st.nodegroups = vec![
        nodegroup("ng-master", "default-master", "master", true, 3),
        nodegroup("ng-worker", "default-worker", "worker", true, 2),
        nodegroup("ng-gpu", "gpu", "gpu", false, 1),
    ];
    for ng in &mut st.nodegroups {
        ng.status = Some(status);
    }
    st
}

fn rules() -> Rules {
    Rules {
        now: now(),
        update_grace: minutes(10),
        delete_timeout: 0,
    }
}

/// An answer, summarised: the cluster's new status ("" when unchanged),
/// its reason ("-" for none), its health, and the nodegroups whose status
/// changed.
#[derive(Debug, PartialEq)]
struct Summary {
    cluster: String,
    reason: String,
    health: String,
    nodegroups: BTreeMap<String, String>,
    deleted: Vec<String>,
}

fn summarize(st: &ClusterState, upd: &Update) -> Summary {
    let mut s = Summary {
        cluster: String::new(),
        reason: String::new(),
        health: String::new(),
        nodegroups: BTreeMap::new(),
        deleted: upd.deleted_nodegroups.clone(),
    };
    if let Some(c) = &upd.cluster {
        if c.status != st.cluster.status {
            s.cluster = c.status.map(Status::as_str).unwrap_or_default().into();
        }
        s.reason = c.status_reason.clone().unwrap_or_else(|| "-".into());
        s.health = c.health_status.clone().unwrap_or_default();
    }
    for ng in &upd.nodegroups {
        // A row rewritten only for its addresses is not a status change.
        if st
            .nodegroup(&ng.uuid)
            .is_some_and(|old| old.status == ng.status)
        {
            continue;
        }
        s.nodegroups.insert(
            ng.name.clone(),
            ng.status.map(Status::as_str).unwrap_or_default().into(),
        );
    }
    s
}

fn want(cluster: &str, reason: &str, health: &str, nodegroups: &[(&str, &str)]) -> Summary {
    Summary {
        cluster: cluster.into(),
        reason: reason.into(),
        health: health.into(),
        nodegroups: nodegroups
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        deleted: vec![],
    }
}

const ALL_CREATED: &[(&str, &str)] = &[
    ("default-master", "CREATE_COMPLETE"),
    ("default-worker", "CREATE_COMPLETE"),
    ("gpu", "CREATE_COMPLETE"),
];
const ALL_UPDATED: &[(&str, &str)] = &[
    ("default-master", "UPDATE_COMPLETE"),
    ("default-worker", "UPDATE_COMPLETE"),
    ("gpu", "UPDATE_COMPLETE"),
];

type Edit = fn(&mut ClusterState, &mut Observed);

#[test]
fn conditions_become_statuses() {
    let cases: Vec<(&str, Status, Edit, Summary)> = vec![
        (
            "create completes when every condition and nodegroup is ready",
            Status::CreateInProgress,
            |_, _| {},
            want("CREATE_COMPLETE", "-", "HEALTHY", ALL_CREATED),
        ),
        (
            "no CAPI cluster yet: in progress, health UNKNOWN",
            Status::CreateInProgress,
            |_, obs| *obs = Observed::default(),
            want("", "-", "UNKNOWN", &[]),
        ),
        (
            "infrastructure not ready: the reason from the conditions and the machine",
            Status::CreateInProgress,
            |_, obs| {
                let c = obs.cluster.as_mut().expect("cluster");
                set(
                    &mut c.status.conditions,
                    condition(
                        INFRASTRUCTURE_READY,
                        "False",
                        "NotReady",
                        "OpenStackCluster is not ready",
                    ),
                );
                set(
                    &mut obs.machines[3].status.conditions,
                    condition(
                        INFRASTRUCTURE_READY,
                        "False",
                        "InstanceCreateFailed",
                        "Quota exceeded for instances",
                    ),
                );
            },
            want(
                "",
                "CAPI Cluster InfrastructureReady NotReady: OpenStackCluster is not ready. Machine g-1: Quota exceeded for instances",
                "HEALTHY",
                ALL_CREATED,
            ),
        ),
        (
            "a stale observed generation keeps the cluster in progress",
            Status::CreateInProgress,
            |_, obs| {
                obs.cluster
                    .as_mut()
                    .expect("cluster")
                    .status
                    .observed_generation = 2
            },
            want("", "-", "HEALTHY", ALL_CREATED),
        ),
        (
            "the create deadline turns a stuck cluster CREATE_FAILED",
            Status::CreateInProgress,
            |st, obs| {
                st.cluster.created_at = now() - minutes(120);
                let c = obs.cluster.as_mut().expect("cluster");
                set(
                    &mut c.status.conditions,
                    condition(
                        CONTROL_PLANE_AVAILABLE,
                        "False",
                        "NotAvailable",
                        "0 of 3 available",
                    ),
                );
            },
            want(
                "CREATE_FAILED",
                "Timed out waiting for the cluster: CAPI Cluster ControlPlaneAvailable NotAvailable: 0 of 3 available",
                "HEALTHY",
                ALL_CREATED,
            ),
        ),
        (
            // Go: CREATE_COMPLETE. The host refuses a status that moves a
            // cluster out of a finished operation.
            "a CREATE_FAILED cluster that converges stays CREATE_FAILED",
            Status::CreateFailed,
            |st, _| {
                for ng in &mut st.nodegroups {
                    ng.status = Some(Status::CreateComplete);
                }
            },
            want("", "-", "HEALTHY", &[]),
        ),
        (
            "the master waits for node_count replicas",
            Status::UpdateInProgress,
            |st, _| st.nodegroups[0].node_count = Some(5),
            want(
                "",
                "-",
                "HEALTHY",
                &[
                    ("default-worker", "UPDATE_COMPLETE"),
                    ("gpu", "UPDATE_COMPLETE"),
                ],
            ),
        ),
        (
            "an update waits for the control plane's version",
            Status::UpdateInProgress,
            |_, obs| {
                obs.cluster.as_mut().expect("cluster").spec.topology.version = "v1.32.0".into()
            },
            want("", "-", "HEALTHY", ALL_UPDATED),
        ),
        (
            "a topology that keeps failing fails the update",
            Status::UpdateInProgress,
            |_, obs| {
                let c = obs.cluster.as_mut().expect("cluster");
                refused_topology(c);
            },
            want(
                "UPDATE_FAILED",
                "TopologyReconciled ReconcileFailed: admission webhook denied: version cannot be increased",
                "HEALTHY",
                ALL_UPDATED,
            ),
        ),
        (
            "a failure left by the spec before a retried upgrade waits for the new spec",
            Status::UpdateInProgress,
            |_, obs| {
                let c = obs.cluster.as_mut().expect("cluster");
                refused_topology(c);
                c.metadata.generation = c.status.observed_generation + 1;
            },
            want("", "-", "HEALTHY", ALL_UPDATED),
        ),
        (
            "a retry of the spec that failed gets its grace from its start",
            Status::UpdateInProgress,
            |st, obs| {
                let c = obs.cluster.as_mut().expect("cluster");
                refused_topology(c);
                // The retry moved the row to UPDATE_IN_PROGRESS just now.
                st.cluster.updated_at = Some(crate::fixtures::now());
            },
            want("", "-", "HEALTHY", ALL_UPDATED),
        ),
        (
            "a failed MachineDeployment fails its nodegroup and the cluster",
            Status::UpdateInProgress,
            |_, obs| {
                obs.machine_deployments
                    .get_mut("gpu")
                    .expect("gpu")
                    .status
                    .phase = "Failed".into()
            },
            want(
                "UPDATE_FAILED",
                "Nodegroup gpu: MachineDeployment kube-abcde-gpu-x1 failed",
                "HEALTHY",
                &[
                    ("default-master", "UPDATE_COMPLETE"),
                    ("default-worker", "UPDATE_COMPLETE"),
                    ("gpu", "UPDATE_FAILED"),
                ],
            ),
        ),
        (
            "a worker below its replicas stays in progress",
            Status::UpdateInProgress,
            |_, obs| {
                let md = obs
                    .machine_deployments
                    .get_mut("default-worker")
                    .expect("md");
                md.status.available_replicas = Some(1);
            },
            want(
                "",
                "-",
                "HEALTHY",
                &[
                    ("default-master", "UPDATE_COMPLETE"),
                    ("gpu", "UPDATE_COMPLETE"),
                ],
            ),
        ),
        (
            "an unhealthy node makes the cluster UNHEALTHY",
            Status::CreateComplete,
            |_, obs| {
                set(
                    &mut obs.machines[4].status.conditions,
                    condition(NODE_HEALTHY, "False", "NodeNotReady", ""),
                );
            },
            want("", "-", "UNHEALTHY", &[]),
        ),
        (
            "deleting while the Cluster exists refreshes only the reason",
            Status::DeleteInProgress,
            |_, obs| {
                obs.infrastructure = Some(Infrastructure {
                    status: InfrastructureStatus {
                        failure_message: Some("load balancer in use".into()),
                        ..Default::default()
                    },
                    ..Default::default()
                });
            },
            want("", "OpenStackCluster: load balancer in use", "HEALTHY", &[]),
        ),
    ];
    for (name, status, edit, want) in cases {
        let mut st = state(status);
        if matches!(
            status,
            Status::CreateComplete | Status::UpdateComplete | Status::DeleteInProgress
        ) {
            for ng in &mut st.nodegroups {
                ng.status = Some(Status::CreateComplete);
            }
        }
        let mut obs = ready_world();
        edit(&mut st, &mut obs);
        let got = summarize(&st, &derive(&st, &obs, &rules()));
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn a_deleted_nodegroup_goes_once_its_machines_have() {
    let mut st = state(Status::UpdateComplete);
    for ng in &mut st.nodegroups {
        ng.status = Some(Status::CreateComplete);
    }
    st.nodegroups[2].status = Some(Status::DeleteInProgress);
    let mut obs = ready_world();
    obs.machine_deployments.remove("gpu");
    let upd = derive(&st, &obs, &rules());
    assert!(
        upd.deleted_nodegroups.is_empty(),
        "its machine is still there"
    );
    obs.machines.retain(|m| m.metadata.name != "g-1");
    let upd = derive(&st, &obs, &rules());
    assert_eq!(upd.deleted_nodegroups, ["ng-gpu"]);
}

#[test]
fn the_rules_fill_in_address_version_health_and_node_addresses() {
    let st = state(Status::CreateInProgress);
    let upd = derive(&st, &ready_world(), &rules());
    let cl = upd.cluster.as_ref().expect("the cluster changed");
    assert_eq!(cl.api_address.as_deref(), Some("https://203.0.113.10:6443"));
    assert_eq!(cl.coe_version.as_deref(), Some("v1.31.1"));
    let reason: BTreeMap<String, String> = [
        ("api", "ok"),
        ("cp-1-osm.Ready", "True"),
        ("cp-2-osm.Ready", "True"),
        ("cp-3-osm.Ready", "True"),
        ("g-1-osm.Ready", "True"),
        ("w-1-osm.Ready", "True"),
        ("w-2-osm.Ready", "True"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(cl.health_status_reason.as_ref(), Some(&reason));
    let addresses: BTreeMap<&str, Vec<String>> = upd
        .nodegroups
        .iter()
        .map(|ng| {
            (
                ng.name.as_str(),
                ng.node_addresses.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        addresses["default-master"],
        ["10.0.0.11", "10.0.0.12", "10.0.0.13"]
    );
    assert_eq!(addresses["default-worker"], ["10.0.0.21", "10.0.0.22"]);
    assert_eq!(addresses["gpu"], ["10.0.0.31"]);
}

#[test]
fn the_api_endpoint_is_reported_before_the_cluster_is_ready() {
    let st = state(Status::CreateInProgress);
    let mut obs = ready_world();
    let c = obs.cluster.as_mut().expect("cluster");
    set(
        &mut c.status.conditions,
        condition(WORKERS_AVAILABLE, "False", "NotAvailable", ""),
    );
    let cl = derive(&st, &obs, &rules()).cluster.expect("changed");
    assert_eq!(cl.status, Some(Status::CreateInProgress));
    assert!(cl.api_address.is_some());
}

#[test]
fn the_autoscalers_size_flows_back_into_node_count() {
    let mut st = state(Status::UpdateComplete);
    st.cluster.labels = Some(Labels::new().with("auto_scaling_enabled", "true"));
    let mut obs = ready_world();
    obs.machine_deployments
        .get_mut("default-worker")
        .expect("md")
        .spec
        .replicas = Some(5);
    let upd = derive(&st, &obs, &rules());
    let worker = upd
        .nodegroups
        .iter()
        .find(|ng| ng.name == "default-worker")
        .expect("the worker changed");
    assert_eq!(worker.node_count, Some(5));
}

/// The rows with an answer applied, as the host saves them.
fn apply(mut st: ClusterState, upd: Update) -> ClusterState {
    if let Some(c) = upd.cluster {
        st.cluster = c;
    }
    for ng in upd.nodegroups {
        if let Some(old) = st.nodegroups.iter_mut().find(|o| o.uuid == ng.uuid) {
            *old = ng;
        }
    }
    st.nodegroups
        .retain(|ng| !upd.deleted_nodegroups.contains(&ng.uuid));
    st
}

#[test]
fn nothing_changed_nothing_written() {
    let st = state(Status::CreateInProgress);
    let first = derive(&st, &ready_world(), &rules());
    let st = apply(st, first);
    let again = derive(&st, &ready_world(), &rules());
    assert!(again.is_empty(), "a second pass changed {again:?}");
}

#[test]
fn status_reason_is_cut_at_the_columns_size() {
    let st = state(Status::CreateInProgress);
    let mut obs = ready_world();
    let c = obs.cluster.as_mut().expect("cluster");
    set(
        &mut c.status.conditions,
        condition(INFRASTRUCTURE_READY, "False", "X", &"é".repeat(300)),
    );
    let cl = derive(&st, &obs, &rules()).cluster.expect("changed");
    let n = cl.status_reason.as_deref().map_or(0, str::len);
    assert!(n > 0 && n <= STATUS_REASON_MAX, "{n} bytes");
}

#[test]
fn a_deletion_without_progress_fails_after_its_timeout() {
    let base = |updated_ago: i64, deleted_ago: i64| {
        let mut st = state(Status::DeleteInProgress);
        for ng in &mut st.nodegroups {
            ng.status = Some(Status::CreateComplete);
        }
        let mut obs = ready_world();
        obs.infrastructure = Some(Infrastructure {
            status: InfrastructureStatus {
                failure_message: Some("load balancer in use".into()),
                ..Default::default()
            },
            ..Default::default()
        });
        let deleted = now() - minutes(deleted_ago);
        obs.cluster
            .as_mut()
            .expect("cluster")
            .metadata
            .deletion_timestamp = Some(rfc3339(deleted));
        st.cluster.created_at = now() - minutes(48 * 60);
        st.cluster.updated_at = Some(now() - minutes(updated_ago));
        // The row already carries the reason the rules compute.
        if let Some(c) = derive(&st, &obs, &rules()).cluster {
            st.cluster.status_reason = c.status_reason;
        }
        (st, obs)
    };
    let timed = Rules {
        delete_timeout: minutes(60),
        ..rules()
    };
    // (what, updated minutes ago, deletion minutes ago, an older reason,
    // the timeout, whether it fails)
    let cases = [
        (
            "no progress for longer than the timeout",
            120,
            120,
            false,
            timed,
            true,
        ),
        ("the row changed recently", 10, 120, false, timed, false),
        (
            "the deletion was asked for again recently",
            120,
            10,
            false,
            timed,
            false,
        ),
        ("the reason changes", 120, 120, true, timed, false),
        ("no timeout configured", 120, 120, false, rules(), false),
    ];
    for (what, updated, deleted, older, rules, fails) in cases {
        let (mut st, obs) = base(updated, deleted);
        if older {
            st.cluster.status_reason = Some("an older reason".into());
        }
        let upd = derive(&st, &obs, &rules);
        let failed = upd
            .cluster
            .as_ref()
            .is_some_and(|c| c.status == Some(Status::DeleteFailed));
        assert_eq!(failed, fails, "{what}");
        if fails {
            let reason = upd
                .cluster
                .and_then(|c| c.status_reason)
                .unwrap_or_default();
            assert!(
                reason.contains(
                    "Timed out waiting for the deletion: OpenStackCluster: load balancer in use"
                ),
                "{what}: {reason}"
            );
        }
    }
}

/// `t` (microseconds) as the API server writes it, in whole seconds.
fn rfc3339(t: i64) -> String {
    let secs = t.div_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (the inverse of days_from_civil).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[test]
fn objects_of_the_snapshot_become_the_typed_views() {
    let objects = [
        K8sObject {
            api_version: "cluster.x-k8s.io/v1beta2".into(),
            kind: "MachineDeployment".into(),
            namespace: Some("magnum-system".into()),
            name: "kube-abcde-gpu-x1".into(),
            json: r#"{"metadata":{"name":"kube-abcde-gpu-x1","generation":2,
                "labels":{"topology.cluster.x-k8s.io/deployment-name":"gpu"}},
                "spec":{"replicas":1},"status":{"phase":"Running","observedGeneration":2,
                "upToDateReplicas":1,"availableReplicas":1,"somethingElse":{"a":[1]}}}"#
                .into(),
        },
        K8sObject {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("magnum-system".into()),
            name: "ignored".into(),
            json: "{}".into(),
        },
    ];
    let obs = Observed::from_objects(&objects).expect("parsed");
    assert_eq!(
        obs.machine_deployments["gpu"].status.up_to_date_replicas,
        Some(1)
    );
    assert_eq!(
        rfc3339(parse_rfc3339("2026-11-30T14:27:03Z").expect("time")),
        "2026-11-30T14:27:03Z"
    );

    let bad = K8sObject {
        kind: "Machine".into(),
        name: "m".into(),
        json: r#"{"status":{"addresses":"not a list"}}"#.into(),
        ..objects[1].clone()
    };
    let err = Observed::from_objects([&bad]).expect_err("a wrong type");
    assert!(err.starts_with("Machine m: "), "{err}");
}

#[test]
fn a_timeout_names_what_it_waited_for_when_nothing_reports_false() {
    // A Cluster API cluster that reports no condition yet (the Go driver's
    // reason was empty), then one whose InfrastructureReady is Unknown.
    let mut st = state(Status::CreateInProgress);
    st.cluster.created_at = now() - minutes(61);
    let mut obs = Observed {
        cluster: Some(CapiCluster::default()),
        ..Observed::default()
    };
    let reason = |obs: &Observed| {
        derive(&st, obs, &rules())
            .cluster
            .and_then(|c| c.status_reason)
            .unwrap_or_default()
    };
    assert_eq!(
        reason(&obs),
        "Timed out waiting for the cluster: CAPI Cluster InfrastructureReady not reported"
    );
    if let Some(c) = obs.cluster.as_mut() {
        c.status.conditions = vec![condition(
            INFRASTRUCTURE_READY,
            "Unknown",
            "WaitingForInfrastructure",
            "",
        )];
    }
    assert_eq!(
        reason(&obs),
        "Timed out waiting for the cluster: CAPI Cluster Unknown InfrastructureReady WaitingForInfrastructure"
    );
}
