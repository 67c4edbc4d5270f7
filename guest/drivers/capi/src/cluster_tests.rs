//! The topology Cluster (Go: `TestGoldenObjects` "cluster",
//! `TestClusterMapping` and `TestAutoscalerMapping`, every case).

use openkeel_magnum_driver::{DriverError, Labels, Status};
use serde_json::{Value, json};

use super::*;
use crate::fixtures::{IMAGE_GPU_ID, SERVER_GROUP_GPU_ID, UUID, test_input};
use crate::golden;
use crate::names::CLASS_VERSION;

/// The topology's MachineDeployment entries.
fn machine_deployments_of(cluster: &Value) -> &Vec<Value> {
    cluster["spec"]["topology"]["workers"]["machineDeployments"]
        .as_array()
        .expect("machineDeployments")
}

/// The value of the variable `name` in a topology list.
fn variable<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .expect("variables")
        .iter()
        .find(|v| v["name"] == name)
        .map(|v| &v["value"])
        .unwrap_or_else(|| panic!("variable {name} not set"))
}

/// Go: TestGoldenObjects ("cluster").
#[test]
fn the_cluster_matches_the_go_golden() {
    let cluster = build_cluster(&test_input()).expect("cluster");
    golden::assert_matches(&cluster, "cluster.yaml");
}

/// Go: TestClusterMapping ("topology of the representative cluster").
#[test]
fn topology_of_the_representative_cluster() {
    let cluster = build_cluster(&test_input()).expect("cluster");
    let labels = &cluster["metadata"]["labels"];
    assert_eq!(labels[LABEL_CNI], "calico-v3.31.3");
    assert_eq!(labels[LABEL_CLUSTER_UUID], UUID);
    let topology = &cluster["spec"]["topology"];
    assert_eq!(
        topology["classRef"]["name"],
        format!("magnum-v{CLASS_VERSION}")
    );
    assert_eq!(topology["version"], "v1.31.1");
    assert_eq!(topology["controlPlane"]["replicas"], 3);
    let mds = machine_deployments_of(&cluster);
    let names: Vec<&str> = mds
        .iter()
        .map(|md| md["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["default-worker", "gpu"]);

    let gpu = &mds[1];
    assert_eq!(gpu["failureDomain"], "az-gpu");
    assert_eq!(gpu["replicas"], 1);
    let node_labels = gpu["metadata"]["labels"].as_object().expect("labels");
    assert_eq!(node_labels["node-role.kubernetes.io/gpu"], "");
    assert_eq!(node_labels[LABEL_NODE_GROUP], "gpu");
    assert!(
        !node_labels.contains_key("team"),
        "a node label outside the propagated prefixes was mapped"
    );
    assert_eq!(
        gpu["taints"],
        json!([{ "key": "gpu", "value": "true", "effect": "NoSchedule", "propagation": "Always" }])
    );
    let overrides = &gpu["variables"]["overrides"];
    for (name, want) in [
        ("flavor", json!("g1.xlarge")),
        ("imageUUID", json!(IMAGE_GPU_ID)),
        ("hardwareDiskBus", json!("scsi")),
        ("serverGroupId", json!(SERVER_GROUP_GPU_ID)),
        ("isServerGroupDiffFailureDomain", json!(true)),
        ("imageRepository", json!("")),
        ("bootVolume", json!({ "size": 0, "type": "standard" })),
    ] {
        assert_eq!(variable(overrides, name), &want, "gpu override {name}");
    }
}

/// Go: TestClusterMapping ("nodegroups being deleted leave the
/// topology").
#[test]
fn nodegroups_being_deleted_leave_the_topology() {
    let mut input = test_input();
    input.state.nodegroups[2].status = Some(Status::DeleteInProgress);
    let cluster = build_cluster(&input).expect("cluster");
    assert_eq!(machine_deployments_of(&cluster).len(), 1);
}

/// Go: TestClusterMapping ("kube_tag is mandatory").
#[test]
fn kube_tag_is_mandatory() {
    let mut input = test_input();
    input
        .state
        .cluster
        .labels
        .as_mut()
        .expect("labels")
        .remove("kube_tag");
    let Err(DriverError::Client(e)) = build_cluster(&input) else {
        panic!("a cluster without kube_tag was built");
    };
    assert_eq!((e.status, e.kind.as_str()), (400, "Invalid"));
    assert_eq!(
        e.message,
        "The cluster template has no kube_tag label, which the Cluster API driver requires."
    );
}

/// Go: TestClusterMapping ("cilium pod CIDR and no cni label").
#[test]
fn cilium_pod_cidr_and_no_cni_label() {
    let mut input = test_input();
    input.state.template.network_driver = Some("cilium".into());
    input
        .state
        .cluster
        .set_label("cilium_ipv4pool", "10.200.0.0/16");
    let cluster = build_cluster(&input).expect("cluster");
    assert!(cluster["metadata"]["labels"].get(LABEL_CNI).is_none());
    assert_eq!(
        cluster["spec"]["clusterNetwork"]["pods"]["cidrBlocks"],
        json!(["10.200.0.0/16"])
    );
}

/// The order of the MachineDeployments does not follow the rows: the
/// default worker first, then by name.
#[test]
fn the_default_worker_comes_first_whatever_the_row_order() {
    let mut input = test_input();
    input.state.nodegroups.reverse();
    let mut extra = input.state.nodegroups[0].clone();
    extra.name = "batch".into();
    input.state.nodegroups.push(extra);
    let cluster = build_cluster(&input).expect("cluster");
    let names: Vec<&str> = machine_deployments_of(&cluster)
        .iter()
        .map(|md| md["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["default-worker", "batch", "gpu"]);
}

/// Auto-healing off turns off every health check; a nodegroup without a
/// role is a worker.
#[test]
fn healing_and_roles() {
    let mut input = test_input();
    input
        .state
        .cluster
        .set_label("auto_healing_enabled", "false");
    input.state.nodegroups[1].role = None;
    let cluster = build_cluster(&input).expect("cluster");
    let topology = &cluster["spec"]["topology"];
    assert_eq!(topology["controlPlane"]["healthCheck"]["enabled"], false);
    let worker = &machine_deployments_of(&cluster)[0];
    assert_eq!(worker["healthCheck"]["enabled"], false);
    assert_eq!(
        worker["metadata"]["labels"]["node-role.kubernetes.io/worker"],
        ""
    );
    input
        .state
        .cluster
        .set_label("auto_healing_enabled", "sometimes");
    assert!(build_cluster(&input).is_err());
}

/// A case of `TestAutoscalerMapping`: the default worker, autoscaled,
/// with these columns, labels, status and count.
struct AutoscalerCase {
    name: &'static str,
    cluster_labels: &'static [(&'static str, &'static str)],
    min: Option<i32>,
    max: Option<i32>,
    ng_labels: Option<&'static [(&'static str, &'static str)]>,
    status: Status,
    count: i32,
    want_min: &'static str,
    want_max: &'static str,
    want_replicas: Option<i64>,
}

/// Every case of `TestAutoscalerMapping`, in its order.
fn autoscaler_cases() -> [AutoscalerCase; 6] {
    let case = AutoscalerCase {
        name: "",
        cluster_labels: &[],
        min: None,
        max: None,
        ng_labels: None,
        status: Status::CreateComplete,
        count: 0,
        want_min: "0",
        want_max: "1",
        want_replicas: None,
    };
    [
        // Go wanted max 1 here (min + 1): the default maximum no longer
        // falls below node_count (the Deviation of `autoscaler_bounds`).
        AutoscalerCase {
            name: "defaults: min 0, max min+1 or node_count, running group has no replicas",
            count: 2,
            want_max: "2",
            ..case
        },
        AutoscalerCase {
            name: "min from the cluster label for the default worker",
            cluster_labels: &[("min_node_count", "2")],
            status: Status::UpdateComplete,
            count: 3,
            want_min: "2",
            want_max: "3",
            ..case
        },
        AutoscalerCase {
            name: "max from the nodegroup label",
            ng_labels: Some(&[("max_node_count", "7")]),
            count: 1,
            want_max: "7",
            ..case
        },
        AutoscalerCase {
            name: "columns win",
            min: Some(1),
            max: Some(5),
            count: 1,
            want_min: "1",
            want_max: "5",
            ..case
        },
        AutoscalerCase {
            name: "a new group starts at node_count",
            min: Some(1),
            max: Some(5),
            status: Status::CreateInProgress,
            count: 3,
            want_min: "1",
            want_max: "5",
            want_replicas: Some(3),
            ..case
        },
        AutoscalerCase {
            name: "a new group starts inside [min, max]",
            min: Some(1),
            max: Some(2),
            status: Status::CreateInProgress,
            count: 4,
            want_min: "1",
            want_max: "2",
            want_replicas: Some(2),
            ..case
        },
    ]
}

/// Go: TestAutoscalerMapping.
#[test]
fn autoscaled_nodegroups_carry_their_bounds() {
    for case in autoscaler_cases() {
        let mut input = test_input();
        input
            .state
            .cluster
            .set_label("auto_scaling_enabled", "true");
        for (key, value) in case.cluster_labels {
            input.state.cluster.set_label(*key, *value);
        }
        let mut ng = input.state.nodegroups[1].clone();
        ng.min_node_count = case.min;
        ng.max_node_count = case.max;
        ng.labels = case
            .ng_labels
            .map(|l| l.iter().copied().collect::<Labels>());
        ng.status = Some(case.status);
        ng.node_count = Some(case.count);
        let md = machine_deployment_topology(&input, &ng, true)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let annotations = &md["metadata"]["annotations"];
        assert_eq!(
            annotations[ANNOTATION_AUTOSCALER_MIN], case.want_min,
            "{}",
            case.name
        );
        assert_eq!(
            annotations[ANNOTATION_AUTOSCALER_MAX], case.want_max,
            "{}",
            case.name
        );
        assert_eq!(
            md.get("replicas").and_then(Value::as_i64),
            case.want_replicas,
            "{}",
            case.name
        );
    }
}

/// Without autoscaling the group has its `node_count` and no
/// annotations; a malformed bound is a 400.
#[test]
fn fixed_size_and_malformed_bounds() {
    let input = test_input();
    let ng = &input.state.nodegroups[1];
    assert!(!autoscaling(&input.state.cluster).expect("autoscaling"));
    let md = machine_deployment_topology(&input, ng, true).expect("entry");
    assert_eq!(md["replicas"], 2);
    assert!(md["metadata"].get("annotations").is_none());

    let mut ng = ng.clone();
    ng.set_label("max_node_count", "lots");
    let Err(DriverError::Client(e)) = autoscaler_bounds(&input.state.cluster, &ng) else {
        panic!("a malformed max_node_count was accepted");
    };
    assert_eq!(
        e.message,
        "Label max_node_count has an invalid integer value \"lots\"."
    );
    // A non-default nodegroup does not read the cluster's minimum.
    let mut input = test_input();
    input.state.cluster.set_label("min_node_count", "2");
    let gpu = &input.state.nodegroups[2];
    assert_eq!(
        autoscaler_bounds(&input.state.cluster, gpu).expect("bounds"),
        AutoscalerBounds { min: 0, max: 1 }
    );
}

/// The 400 of `input`'s Cluster, which must not build.
fn refused(input: &Input) -> String {
    match build_cluster(input) {
        Err(DriverError::Client(e)) if e.status == 400 => e.message,
        Err(e) => panic!("not a 400: {e}"),
        Ok(c) => panic!("built: {}", c["spec"]),
    }
}

/// What the Cluster CRD of Cluster API v1.14 refuses in
/// `spec.clusterNetwork` (an empty, an over-long or a malformed entry) is
/// a 400 naming the label; the edges it takes are built.
#[test]
fn service_network_labels_are_checked_against_the_clusters_schema() {
    for (label, bad) in [
        ("dns_cluster_domain", ""),
        ("dns_cluster_domain", "Cluster.Local"),
        ("dns_cluster_domain", "cluster_local"),
        ("dns_cluster_domain", "a.-b"),
        ("service_cluster_ip_range", ""),
        ("service_cluster_ip_range", "10.254.0.0"),
        ("service_cluster_ip_range", "10.254.0.0/33"),
        ("service_cluster_ip_range", "10.254.0.0/16,10.255.0.0/16"),
        ("service_cluster_ip_range", " 10.254.0.0/16"),
    ] {
        let mut input = test_input();
        input.state.cluster.set_label(label, bad);
        let message = refused(&input);
        assert!(
            message.starts_with(&format!("Label {label} has an invalid value")),
            "{label}={bad:?}: {message}"
        );
    }
    let long = [
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(61),
    ]
    .join(".");
    assert_eq!(long.len(), 253);
    let mut input = test_input();
    input.state.cluster.set_label("dns_cluster_domain", &long);
    input
        .state
        .cluster
        .set_label("service_cluster_ip_range", "fd00:10:96::/112");
    let cluster = build_cluster(&input).expect("cluster");
    let network = &cluster["spec"]["clusterNetwork"];
    assert_eq!(network["serviceDomain"], long.as_str());
    assert_eq!(
        network["services"]["cidrBlocks"],
        json!(["fd00:10:96::/112"])
    );
    input
        .state
        .cluster
        .set_label("dns_cluster_domain", format!("{long}x"));
    assert!(refused(&input).contains("dns_cluster_domain"));
}

/// The taints the Cluster CRD refuses (a key or value outside Kubernetes'
/// syntax, a repeated key and effect, more than 64, an unknown effect)
/// are a 400 naming the nodegroup, at create and when a nodegroup is
/// added; what it takes is built.
#[test]
fn node_taints_are_checked_against_the_clusters_schema() {
    let taint = |key: &str, value: &str, effect: &str| {
        [("key", key), ("value", value), ("effect", effect)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let with_taints = |taints: Vec<_>| {
        let mut input = test_input();
        input.state.nodegroups[2].node_taints = Some(taints);
        input
    };
    let good = with_taints(vec![
        taint("example.com/dedicated", "gpu_a100.x", "NoSchedule"),
        taint("example.com/dedicated", "", "NoExecute"),
        taint(&"k".repeat(63), &"v".repeat(63), "PreferNoSchedule"),
    ]);
    let cluster = build_cluster(&good).expect("cluster");
    let gpu = &machine_deployments_of(&cluster)[1];
    assert_eq!(gpu["taints"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        gpu["taints"][1],
        json!({
            "key": "example.com/dedicated", "effect": "NoExecute", "propagation": "Always"
        })
    );
    let ng = &good.state.nodegroups[2];
    crate::cluster::validate_taints(ng).expect("valid taints");
    for (taints, expected) in [
        (
            vec![taint("bad key", "", "NoSchedule")],
            "node_taints[0].key \"bad key\"",
        ),
        (
            vec![taint("Example.com/x", "", "NoSchedule")],
            "node_taints[0].key",
        ),
        (
            vec![taint(&"k".repeat(64), "", "NoSchedule")],
            "node_taints[0].key",
        ),
        (
            vec![taint("k", "with space", "NoSchedule")],
            "node_taints[0].value",
        ),
        (
            vec![taint("k", &"v".repeat(64), "NoSchedule")],
            "node_taints[0].value",
        ),
        (vec![taint("k", "-v", "NoSchedule")], "node_taints[0].value"),
        (vec![taint("k", "v", "Sometimes")], "node_taints[0].effect"),
        (
            vec![taint("k", "a", "NoSchedule"), taint("k", "b", "NoSchedule")],
            "node_taints[1] repeats the key \"k\" with the effect NoSchedule",
        ),
        (
            (0..65)
                .map(|i| taint(&format!("k{i}"), "", "NoSchedule"))
                .collect(),
            "65 taints, at most 64",
        ),
    ] {
        let input = with_taints(taints);
        let message = refused(&input);
        let name = &input.state.nodegroups[2].name;
        assert!(
            message.starts_with(&format!("Nodegroup {name} has invalid node_taints: "))
                && message.contains(expected),
            "{message}"
        );
        let Err(DriverError::Client(e)) =
            crate::cluster::validate_taints(&input.state.nodegroups[2])
        else {
            panic!("taints accepted: {expected}");
        };
        assert_eq!((e.status, e.message), (400, message));
    }
}

/// An availability zone longer than Nova's column is a 400 (the
/// MachineDeployment's `failureDomain` takes 256 characters at most); a
/// kube_tag longer than an image tag is Magnum's InvalidVersion (the
/// Cluster's `topology.version` takes 256 at most).
#[test]
fn over_long_zone_and_kube_tag_are_refused() {
    let mut input = test_input();
    input.state.nodegroups[2].set_label("availability_zone", "z".repeat(256));
    assert!(refused(&input).starts_with("Label availability_zone has an invalid value"));
    input.state.nodegroups[2].set_label("availability_zone", "z".repeat(255));
    build_cluster(&input).expect("a 255-character zone");

    let mut input = test_input();
    let tag = format!("v1.31.1-{}", "r".repeat(120));
    assert_eq!(tag.len(), 128);
    input.state.cluster.set_label("kube_tag", &tag);
    build_cluster(&input).expect("a 128-character kube_tag");
    input.state.cluster.set_label("kube_tag", format!("{tag}x"));
    let Err(DriverError::Client(e)) = build_cluster(&input) else {
        panic!("an over-long kube_tag was taken");
    };
    assert_eq!((e.status, e.kind.as_str()), (400, "InvalidVersion"));
}
