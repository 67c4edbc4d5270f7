//! The cluster autoscaler: the capacity of a flavor, the scale-from-zero
//! annotations and the bounds of autoscaled MachineDeployments, and the
//! autoscaler's own manifests, labels and RBAC.

use std::collections::{BTreeMap, BTreeSet};

use openkeel_magnum_driver::openstack::Flavor;
use openkeel_magnum_driver::{DriverError, Labels, MagnumError, Status, StringMap};
use serde_json::{Value, json};

use super::*;
use crate::cluster::{
    AutoscalerBounds, GPU_RESOURCE, autoscaler_bounds, build_cluster, machine_deployment_topology,
    settle_autoscaler_bounds,
};
use crate::fixtures::{STACK_ID, UUID, test_input};
use crate::input::{Capacity, EXTRA_SPEC_PCI_ALIAS, EXTRA_SPEC_VGPU};
use crate::names::{
    ANNOTATION_AUTOSCALER_MAX, ANNOTATION_AUTOSCALER_MIN, ANNOTATION_CAPACITY_CPU,
    ANNOTATION_CAPACITY_EPHEMERAL_DISK, ANNOTATION_CAPACITY_GPU_COUNT,
    ANNOTATION_CAPACITY_GPU_TYPE, ANNOTATION_CAPACITY_LABELS, ANNOTATION_CAPACITY_MEMORY,
    ANNOTATION_CAPACITY_TAINTS, NAMESPACE,
};

/// Every capacity annotation.
const CAPACITY_ANNOTATIONS: [&str; 7] = [
    ANNOTATION_CAPACITY_CPU,
    ANNOTATION_CAPACITY_MEMORY,
    ANNOTATION_CAPACITY_EPHEMERAL_DISK,
    ANNOTATION_CAPACITY_GPU_COUNT,
    ANNOTATION_CAPACITY_GPU_TYPE,
    ANNOTATION_CAPACITY_LABELS,
    ANNOTATION_CAPACITY_TAINTS,
];

/// The client error of a failed call.
fn client_error<T: std::fmt::Debug>(result: Result<T, DriverError>) -> MagnumError {
    match result {
        Err(DriverError::Client(e)) => e,
        other => panic!("not a client error: {other:?}"),
    }
}

/// Extra specs from pairs.
fn specs(pairs: &[(&str, &str)]) -> StringMap {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The flavor `g1.xlarge` with these extra specs.
fn flavor(extra_specs: &[(&str, &str)]) -> Flavor {
    Flavor {
        id: "f-gpu".into(),
        name: "g1.xlarge".into(),
        vcpus: 8,
        ram_mb: 32768,
        disk_gb: 80,
        extra_specs: Labels(specs(extra_specs)),
    }
}

/// [`test_input`], autoscaled, with a capacity for both worker groups:
/// `m1.medium` (2 vCPUs, 4 GiB, 20 GB) and `g1.xlarge` with two GPUs.
fn autoscaled_input() -> Input {
    let mut input = test_input();
    input
        .state
        .cluster
        .set_label("auto_scaling_enabled", "true");
    let groups = &mut input.resolved.node_groups;
    groups.get_mut("default-worker").expect("worker").capacity = Some(Capacity {
        vcpus: 2,
        ram_mb: 4096,
        disk_gb: 20,
        gpus: 0,
    });
    groups.get_mut("gpu").expect("gpu").capacity = Some(Capacity {
        vcpus: 8,
        ram_mb: 32768,
        disk_gb: 80,
        gpus: 2,
    });
    input
}

/// The annotations of the MachineDeployment entry of the nodegroup at
/// `index` of `input`'s rows.
fn annotations(input: &Input, index: usize) -> BTreeMap<String, String> {
    let md = machine_deployment_topology(input, &input.state.nodegroups[index], true)
        .expect("machine deployment");
    md["metadata"]
        .get("annotations")
        .and_then(Value::as_object)
        .map(|a| {
            a.iter()
                .map(|(k, v)| (k.clone(), v.as_str().expect("string").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether any capacity annotation is in `annotations`.
fn has_capacity(annotations: &BTreeMap<String, String>) -> bool {
    CAPACITY_ANNOTATIONS
        .iter()
        .any(|key| annotations.contains_key(*key))
}

// ---- The capacity of a flavor ----

#[test]
fn a_flavor_without_gpu_specs_has_no_gpus() {
    let capacity = Capacity::from_flavor(&flavor(&[
        ("hw:cpu_policy", "dedicated"),
        ("resources:VCPU", "8"),
        ("resources:CUSTOM_VGPU", "4"),
        ("trait:CUSTOM_GPU", "required"),
    ]))
    .expect("capacity");
    assert_eq!(
        capacity,
        Capacity {
            vcpus: 8,
            ram_mb: 32768,
            disk_gb: 80,
            gpus: 0
        }
    );
}

#[test]
fn gpus_are_counted_from_vgpu_resources_and_pci_aliases() {
    for (pairs, want) in [
        (vec![(EXTRA_SPEC_VGPU, "1")], 1),
        (vec![(EXTRA_SPEC_VGPU, " 2 ")], 2),
        (
            vec![("resources1:VGPU", "2"), ("resources_gpu:VGPU", "1")],
            3,
        ),
        (vec![(EXTRA_SPEC_PCI_ALIAS, "a100:2")], 2),
        (vec![(EXTRA_SPEC_PCI_ALIAS, "a100:2, t4:1")], 3),
        (vec![(EXTRA_SPEC_PCI_ALIAS, "a100:0")], 0),
        (
            vec![(EXTRA_SPEC_VGPU, "1"), (EXTRA_SPEC_PCI_ALIAS, "a100:2")],
            3,
        ),
    ] {
        assert_eq!(Capacity::gpus_of(&specs(&pairs)), Ok(want), "{pairs:?}");
        let capacity = Capacity::from_flavor(&flavor(&pairs)).expect("capacity");
        assert_eq!(capacity.gpus, want, "{pairs:?}");
    }
}

#[test]
fn a_malformed_gpu_spec_is_refused_with_the_flavor_and_spec() {
    for (key, value) in [
        (EXTRA_SPEC_VGPU, "one"),
        (EXTRA_SPEC_VGPU, "-1"),
        (EXTRA_SPEC_VGPU, ""),
        ("resources2:VGPU", "1.5"),
        (EXTRA_SPEC_PCI_ALIAS, "a100"),
        (EXTRA_SPEC_PCI_ALIAS, "a100:x"),
        (EXTRA_SPEC_PCI_ALIAS, ":2"),
        (EXTRA_SPEC_PCI_ALIAS, "a100:2,,t4:1"),
        (EXTRA_SPEC_PCI_ALIAS, "a100:4294967295,t4:1"),
    ] {
        assert_eq!(
            Capacity::gpus_of(&specs(&[(key, value)])),
            Err(key),
            "{key}={value}"
        );
        let e = client_error(Capacity::from_flavor(&flavor(&[(key, value)])));
        assert_eq!((e.status, e.kind.as_str()), (400, "Invalid"));
        assert_eq!(
            e.message,
            format!("Flavor g1.xlarge has an invalid extra spec {key}: {value:?}.")
        );
    }
}

// ---- Scale-from-zero annotations ----

#[test]
fn autoscaled_groups_carry_the_capacity_of_their_flavor() {
    let input = autoscaled_input();
    let worker = annotations(&input, 1);
    assert_eq!(worker[ANNOTATION_CAPACITY_CPU], "2");
    assert_eq!(worker[ANNOTATION_CAPACITY_MEMORY], "4096Mi");
    // The cluster labels give the default worker a 40 GiB boot volume,
    // which is its root disk rather than the flavor's 20 GB.
    assert_eq!(worker[ANNOTATION_CAPACITY_EPHEMERAL_DISK], "40Gi");
    assert_eq!(
        worker[ANNOTATION_CAPACITY_LABELS],
        "node-role.kubernetes.io/worker=,node.cluster.x-k8s.io/nodegroup=default-worker"
    );
    for absent in [
        ANNOTATION_CAPACITY_GPU_COUNT,
        ANNOTATION_CAPACITY_GPU_TYPE,
        ANNOTATION_CAPACITY_TAINTS,
    ] {
        assert!(
            !worker.contains_key(absent),
            "{absent} on a group without GPUs or taints"
        );
    }

    let gpu = annotations(&input, 2);
    assert_eq!(gpu[ANNOTATION_CAPACITY_CPU], "8");
    assert_eq!(gpu[ANNOTATION_CAPACITY_MEMORY], "32768Mi");
    // No boot volume on the GPU group: the flavor's disk.
    assert_eq!(gpu[ANNOTATION_CAPACITY_EPHEMERAL_DISK], "80Gi");
    assert_eq!(gpu[ANNOTATION_CAPACITY_GPU_COUNT], "2");
    assert_eq!(gpu[ANNOTATION_CAPACITY_GPU_TYPE], GPU_RESOURCE);
    assert_eq!(gpu[ANNOTATION_CAPACITY_GPU_TYPE], "nvidia.com/gpu");
    // Only the node labels Cluster API propagates (not `team`).
    assert_eq!(
        gpu[ANNOTATION_CAPACITY_LABELS],
        "node-role.kubernetes.io/gpu=,node.cluster.x-k8s.io/nodegroup=gpu"
    );
    assert_eq!(gpu[ANNOTATION_CAPACITY_TAINTS], "gpu=true:NoSchedule");
    assert_eq!(gpu[ANNOTATION_AUTOSCALER_MIN], "0");
    assert_eq!(gpu[ANNOTATION_AUTOSCALER_MAX], "1");
}

#[test]
fn the_boot_volume_option_sizes_the_root_disk_of_a_group_without_the_label() {
    let mut input = autoscaled_input();
    input.default_boot_volume_size = 60;
    assert_eq!(
        annotations(&input, 2)[ANNOTATION_CAPACITY_EPHEMERAL_DISK],
        "60Gi"
    );
    // The label wins, and 0 boots from the image: the flavor's disk.
    input.state.nodegroups[2].set_label("boot_volume_size", "0");
    assert_eq!(
        annotations(&input, 2)[ANNOTATION_CAPACITY_EPHEMERAL_DISK],
        "80Gi"
    );
    input.state.nodegroups[2].set_label("boot_volume_size", "big");
    let e = client_error(machine_deployment_topology(
        &input,
        &input.state.nodegroups[2],
        true,
    ));
    assert_eq!(
        e.message,
        "Label boot_volume_size has an invalid integer value \"big\"."
    );
}

#[test]
fn unknown_sizes_are_left_out() {
    let mut input = autoscaled_input();
    input
        .resolved
        .node_groups
        .get_mut("gpu")
        .expect("gpu")
        .capacity = Some(Capacity {
        vcpus: 0,
        ram_mb: 2048,
        disk_gb: 0,
        gpus: 0,
    });
    let gpu = annotations(&input, 2);
    assert_eq!(gpu[ANNOTATION_CAPACITY_MEMORY], "2048Mi");
    for absent in [
        ANNOTATION_CAPACITY_CPU,
        ANNOTATION_CAPACITY_EPHEMERAL_DISK,
        ANNOTATION_CAPACITY_GPU_COUNT,
        ANNOTATION_CAPACITY_GPU_TYPE,
    ] {
        assert!(
            !gpu.contains_key(absent),
            "{absent} written for a zero size"
        );
    }
}

#[test]
fn no_capacity_without_autoscaling_or_without_flavor_details() {
    // Autoscaling off: the goldens' entries, whatever the lookups hold.
    let mut input = autoscaled_input();
    input
        .state
        .cluster
        .set_label("auto_scaling_enabled", "false");
    assert!(annotations(&input, 1).is_empty());
    assert!(annotations(&input, 2).is_empty());
    let with_capacity = build_cluster(&input).expect("cluster");
    assert_eq!(
        with_capacity,
        build_cluster(&test_input()).expect("cluster")
    );
    crate::golden::assert_matches(&with_capacity, "cluster.yaml");

    // Autoscaling on, flavor details not looked up: the bounds only.
    let mut input = autoscaled_input();
    input
        .resolved
        .node_groups
        .get_mut("gpu")
        .expect("gpu")
        .capacity = None;
    let gpu = annotations(&input, 2);
    assert!(!has_capacity(&gpu), "{gpu:?}");
    assert_eq!(
        gpu.keys().map(String::as_str).collect::<Vec<_>>(),
        [ANNOTATION_AUTOSCALER_MAX, ANNOTATION_AUTOSCALER_MIN]
    );
    assert!(has_capacity(&annotations(&input, 1)));
}

// ---- Bounds and the starting size ----

#[test]
fn a_new_group_without_bounds_starts_at_its_requested_size() {
    let input = autoscaled_input();
    let mut ng = input.state.nodegroups[1].clone();
    ng.min_node_count = None;
    ng.max_node_count = None;
    ng.node_count = Some(3);
    ng.status = Some(Status::CreateInProgress);
    assert_eq!(
        autoscaler_bounds(&input.state.cluster, &ng).expect("bounds"),
        AutoscalerBounds { min: 0, max: 3 }
    );
    let md = machine_deployment_topology(&input, &ng, true).expect("entry");
    assert_eq!(md["replicas"], 3);
    assert_eq!(
        md["metadata"]["annotations"][ANNOTATION_AUTOSCALER_MIN],
        "0"
    );
    assert_eq!(
        md["metadata"]["annotations"][ANNOTATION_AUTOSCALER_MAX],
        "3"
    );

    // A group of one keeps magnum-cluster-api's min + 1.
    ng.node_count = Some(1);
    assert_eq!(
        autoscaler_bounds(&input.state.cluster, &ng).expect("bounds"),
        AutoscalerBounds { min: 0, max: 1 }
    );
    // The default worker's minimum label raises both.
    let mut input = input;
    input.state.cluster.set_label("min_node_count", "2");
    ng.node_count = Some(2);
    assert_eq!(
        autoscaler_bounds(&input.state.cluster, &ng).expect("bounds"),
        AutoscalerBounds { min: 2, max: 3 }
    );
}

#[test]
fn a_max_node_count_of_zero_is_no_maximum() {
    let input = autoscaled_input();
    let mut ng = input.state.nodegroups[2].clone();
    ng.min_node_count = Some(1);
    ng.max_node_count = Some(0);
    ng.node_count = Some(4);
    assert_eq!(
        autoscaler_bounds(&input.state.cluster, &ng).expect("bounds"),
        AutoscalerBounds { min: 1, max: 4 }
    );
    ng.max_node_count = None;
    ng.set_label("max_node_count", "0");
    assert_eq!(
        autoscaler_bounds(&input.state.cluster, &ng).expect("bounds"),
        AutoscalerBounds { min: 1, max: 4 }
    );
    ng.set_label("max_node_count", "6");
    assert_eq!(
        autoscaler_bounds(&input.state.cluster, &ng).expect("bounds"),
        AutoscalerBounds { min: 1, max: 6 }
    );
}

#[test]
fn bounds_out_of_order_or_negative_are_refused() {
    let mut input = autoscaled_input();
    let mut ng = input.state.nodegroups[2].clone();
    ng.min_node_count = Some(3);
    ng.set_label("max_node_count", "2");
    let e = client_error(autoscaler_bounds(&input.state.cluster, &ng));
    assert_eq!((e.status, e.kind.as_str()), (400, "Invalid"));
    assert_eq!(
        e.message,
        "The autoscaler bounds of nodegroup gpu are invalid: min_node_count (3) should be \
         less or equal to max_node_count (2)."
    );
    ng.set_label("max_node_count", "-1");
    let e = client_error(autoscaler_bounds(&input.state.cluster, &ng));
    assert_eq!(
        e.message,
        "Label max_node_count must be between 0 and 2147483647, not -1."
    );

    input.state.cluster.set_label("min_node_count", "-2");
    let mut worker = input.state.nodegroups[1].clone();
    worker.min_node_count = None;
    let e = client_error(autoscaler_bounds(&input.state.cluster, &worker));
    assert_eq!(
        e.message,
        "Label min_node_count must be between 0 and 2147483647, not -2."
    );
    // The whole Cluster is refused, not only the bounds.
    input.state.nodegroups[1].min_node_count = None;
    assert_eq!(client_error(build_cluster(&input)).status, 400);
}

#[test]
fn settled_bounds_do_not_follow_node_count_afterwards() {
    let input = autoscaled_input();
    let cluster = &input.state.cluster;
    let mut ng = input.state.nodegroups[2].clone();
    ng.node_count = Some(3);
    let settled = settle_autoscaler_bounds(cluster, &ng)
        .expect("settle")
        .expect("a row to save");
    assert_eq!(
        (settled.min_node_count, settled.max_node_count),
        (Some(0), Some(3))
    );
    assert_eq!(settled.name, ng.name);
    assert_eq!(settled.node_count, Some(3));
    // Saved, the row needs nothing more.
    assert_eq!(
        settle_autoscaler_bounds(cluster, &settled).expect("settle"),
        None
    );

    // The autoscaler took the group down to one node: the maximum stays.
    let mut shrunk = settled.clone();
    shrunk.node_count = Some(1);
    shrunk.status = Some(Status::UpdateComplete);
    assert_eq!(
        autoscaler_bounds(cluster, &shrunk).expect("bounds"),
        AutoscalerBounds { min: 0, max: 3 }
    );
    // Unsaved, it would have fallen to min + 1.
    let mut unsaved = shrunk.clone();
    unsaved.max_node_count = None;
    assert_eq!(
        autoscaler_bounds(cluster, &unsaved).expect("bounds"),
        AutoscalerBounds { min: 0, max: 1 }
    );

    // Without autoscaling nothing is saved.
    let fixed = test_input();
    assert_eq!(
        settle_autoscaler_bounds(&fixed.state.cluster, &ng).expect("settle"),
        None
    );
}

// ---- The autoscaler's manifests ----

/// The autoscaler objects of [`autoscaled_input`].
fn objects() -> Vec<Value> {
    build_autoscaler(&autoscaled_input()).expect("autoscaler")
}

/// The object of `kind` among `objects`.
fn object<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

/// The autoscaler container of the Deployment.
fn container(objects: &[Value]) -> &Value {
    &object(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
}

#[test]
fn four_objects_named_after_the_cluster_in_the_namespace() {
    let objects = objects();
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(
        kinds,
        ["ServiceAccount", "Role", "RoleBinding", "Deployment"]
    );
    for o in &objects {
        assert_eq!(o["metadata"]["name"], "kube-abcde-autoscaler");
        assert_eq!(o["metadata"]["namespace"], NAMESPACE);
        assert_eq!(o["metadata"]["labels"]["cluster-uuid"], UUID);
        assert_eq!(
            o["metadata"]["labels"]["app.kubernetes.io/instance"],
            STACK_ID
        );
    }
    assert_eq!(autoscaler_name(STACK_ID), "kube-abcde-autoscaler");

    let mut input = autoscaled_input();
    input.namespace = "capi-clusters".into();
    for o in build_autoscaler(&input).expect("autoscaler") {
        assert_eq!(o["metadata"]["namespace"], "capi-clusters");
    }
}

#[test]
fn the_refs_to_delete_are_the_objects_built_deployment_first() {
    let input = autoscaled_input();
    let refs = autoscaler_refs(&input);
    assert_eq!(refs[0].kind, "Deployment");
    assert_eq!(refs[0].api_version, "apps/v1");
    let built: BTreeSet<(String, String, String, String)> = build_autoscaler(&input)
        .expect("autoscaler")
        .iter()
        .map(|o| {
            let s = |v: &Value| v.as_str().expect("string").to_string();
            (
                s(&o["apiVersion"]),
                s(&o["kind"]),
                s(&o["metadata"]["namespace"]),
                s(&o["metadata"]["name"]),
            )
        })
        .collect();
    let referenced: BTreeSet<(String, String, String, String)> = refs
        .iter()
        .map(|r| {
            (
                r.api_version.clone(),
                r.kind.clone(),
                r.namespace.clone().expect("namespaced"),
                r.name.clone(),
            )
        })
        .collect();
    assert_eq!(refs.len(), 4);
    assert_eq!(built, referenced);
    // The refs need no valid labels: a cluster is deleted whatever they say.
    let mut broken = input.clone();
    broken
        .state
        .cluster
        .set_label("autoscaler_tag", "not a tag");
    assert_eq!(autoscaler_refs(&broken), refs);
}

#[test]
fn the_image_follows_the_kubernetes_minor_under_the_mirror() {
    let mut input = autoscaled_input();
    assert_eq!(
        image(&input).expect("image"),
        "registry.example.com/k8s/cluster-autoscaler:v1.31.5"
    );
    assert_eq!(
        container(&build_autoscaler(&input).expect("autoscaler"))["image"],
        "registry.example.com/k8s/cluster-autoscaler:v1.31.5"
    );
    input
        .state
        .cluster
        .set_label("container_infra_prefix", "registry.example.com:5000/k8s/");
    assert_eq!(
        image(&input).expect("image"),
        "registry.example.com:5000/k8s/cluster-autoscaler:v1.31.5"
    );

    // Without a mirror: the driver option, else the upstream registry.
    input.state.cluster.set_label("container_infra_prefix", "");
    assert_eq!(
        image(&input).expect("image"),
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.31.5"
    );
    input.autoscaler_image_repository = "quay.example.org/autoscaling/".into();
    assert_eq!(
        image(&input).expect("image"),
        "quay.example.org/autoscaling/cluster-autoscaler:v1.31.5"
    );
    input.autoscaler_image_repository.clear();

    for (kube_tag, tag) in [
        ("v1.22.17", "v1.22.3"),
        ("1.30.4", "v1.30.7"),
        ("v1.33.0", "v1.33.6"),
        ("v1.36.2", "v1.36.1"),
        ("v1.37.0", "v1.37.0"),
        ("v1.21.14", "v1.21.0"),
    ] {
        input.state.cluster.set_label("kube_tag", kube_tag);
        assert_eq!(
            image(&input).expect("image"),
            format!("registry.k8s.io/autoscaling/cluster-autoscaler:{tag}"),
            "{kube_tag}"
        );
    }
    input
        .state
        .cluster
        .set_label("autoscaler_tag", "v1.35.0-custom_1");
    assert_eq!(
        image(&input).expect("image"),
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.0-custom_1"
    );
    // The override does not need a kube_tag, but the Cluster does.
    input
        .state
        .cluster
        .labels
        .as_mut()
        .expect("labels")
        .remove("kube_tag");
    assert!(image(&input).is_ok());
    input.state.cluster.set_label("autoscaler_tag", "");
    assert_eq!(client_error(image(&input)).kind, "Invalid");
}

#[test]
fn malformed_image_labels_are_refused() {
    for tag in [
        "latest tag",
        ".v1",
        "-v1",
        "v1.31.0@sha256:abc",
        "v1:31",
        "v1/31",
        "ü1",
    ] {
        let mut input = autoscaled_input();
        input.state.cluster.set_label("autoscaler_tag", tag);
        let e = client_error(build_autoscaler(&input));
        assert_eq!((e.status, e.kind.as_str()), (400, "Invalid"), "{tag}");
        assert_eq!(
            e.message,
            format!(
                "Label autoscaler_tag has an invalid value {tag:?}: expected an image tag, \
                 such as v1.32.0."
            )
        );
    }
    let mut long = autoscaled_input();
    long.state
        .cluster
        .set_label("autoscaler_tag", "v".repeat(129));
    assert!(build_autoscaler(&long).is_err());
    long.state
        .cluster
        .set_label("autoscaler_tag", "v".repeat(128));
    assert!(build_autoscaler(&long).is_ok());

    for prefix in [
        "https://registry.example.com",
        "registry.example.com/K8s",
        "registry.example.com:port/k8s",
        "registry.example.com:123456/k8s",
        "-registry.example.com",
        "registry..example.com",
        "registry.example.com//k8s",
        "registry.example.com/k8s..images",
        "registry.example.com/k8s_-images",
        "registry.example.com/k8s;rm -rf",
        "registry.example.com/k8s images",
        ":5000/k8s",
    ] {
        let mut input = autoscaled_input();
        input
            .state
            .cluster
            .set_label("container_infra_prefix", prefix);
        let e = client_error(build_autoscaler(&input));
        assert_eq!((e.status, e.kind.as_str()), (400, "Invalid"), "{prefix}");
        assert_eq!(
            e.message,
            format!(
                "Label container_infra_prefix has an invalid value {prefix:?}: expected a \
                 registry host with an optional port and path, such as \
                 registry.example.com/k8s."
            )
        );
    }
    for prefix in [
        "localhost:5000",
        "Registry.Example.com/k8s",
        "registry.example.com/a__b/c-d/e---f/g.h_i",
        "10.0.0.5:443/mirror",
        "myorg",
    ] {
        let mut input = autoscaled_input();
        input
            .state
            .cluster
            .set_label("container_infra_prefix", prefix);
        assert_eq!(
            image(&input).expect(prefix),
            format!("{prefix}/cluster-autoscaler:v1.31.5")
        );
    }
    // A malformed kube_tag fails as it fails the Cluster.
    let mut input = autoscaled_input();
    input.state.cluster.set_label("kube_tag", "latest");
    assert_eq!(
        client_error(build_autoscaler(&input)).kind,
        "InvalidVersion"
    );
}

#[test]
fn the_autoscaler_runs_the_clusterapi_provider_on_this_cluster_only() {
    let objects = objects();
    let c = container(&objects);
    assert_eq!(c["command"], json!(["/cluster-autoscaler"]));
    assert_eq!(
        c["args"],
        json!([
            "--cloud-provider=clusterapi",
            "--kubeconfig=/etc/kubernetes/workload/kubeconfig",
            "--clusterapi-cloud-config-authoritative",
            "--node-group-auto-discovery=clusterapi:namespace=magnum-system,clusterName=kube-abcde",
            "--enforce-node-group-min-size=true",
            "--scale-down-unneeded-time=10m",
            "--scale-down-delay-after-add=10m",
            "--scale-down-delay-after-failure=3m",
            "--v=4",
        ])
    );
    // The kubeconfig argument names the file the Secret's `value` becomes.
    let pod = &object(&objects, "Deployment")["spec"]["template"]["spec"];
    assert_eq!(
        pod["volumes"],
        json!([{
            "name": "kubeconfig",
            "secret": {
                "secretName": "kube-abcde-kubeconfig",
                "items": [{ "key": "value", "path": "kubeconfig" }],
            },
        }])
    );
    assert_eq!(
        c["volumeMounts"],
        json!([{ "name": "kubeconfig", "mountPath": "/etc/kubernetes/workload", "readOnly": true }])
    );
    assert_eq!(pod["serviceAccountName"], "kube-abcde-autoscaler");
    assert_eq!(object(&objects, "Deployment")["spec"]["replicas"], 1);
}

#[test]
fn the_deployment_selects_its_own_pods() {
    let objects = objects();
    let spec = &object(&objects, "Deployment")["spec"];
    let selector = spec["selector"]["matchLabels"]
        .as_object()
        .expect("selector");
    let labels = &spec["template"]["metadata"]["labels"];
    assert!(!selector.is_empty());
    for (key, value) in selector {
        assert_eq!(&labels[key], value, "{key}");
    }
    assert_eq!(selector["app.kubernetes.io/instance"], STACK_ID);
}

#[test]
fn the_autoscaler_runs_unprivileged_within_bounded_resources() {
    let objects = objects();
    let pod = &object(&objects, "Deployment")["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert!(pod["securityContext"]["runAsUser"].as_i64().expect("uid") > 0);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let c = container(&objects);
    let sc = &c["securityContext"];
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["privileged"], false);
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]));
    assert!(sc["capabilities"].get("add").is_none());
    for kind in ["requests", "limits"] {
        for resource in ["cpu", "memory"] {
            assert!(
                c["resources"][kind][resource].is_string(),
                "{kind}.{resource} missing"
            );
        }
    }
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/health-check");
    assert_eq!(c["ports"][0]["containerPort"], 8085);
}

/// The verbs the Role grants on each `group/resource`.
fn grants(role: &Value) -> BTreeMap<String, BTreeSet<String>> {
    let mut grants: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for rule in role["rules"].as_array().expect("rules") {
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .expect("list")
                .iter()
                .map(|s| s.as_str().expect("string").to_string())
                .collect()
        };
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                grants
                    .entry(format!("{group}/{resource}"))
                    .or_default()
                    .extend(strings(&rule["verbs"]));
            }
        }
    }
    grants
}

#[test]
fn the_role_grants_what_the_clusterapi_provider_uses_and_no_more() {
    let objects = objects();
    let grants = grants(object(&objects, "Role"));
    let verbs = |resource: &str| -> Vec<&str> {
        grants
            .get(resource)
            .unwrap_or_else(|| panic!("nothing granted on {resource}"))
            .iter()
            .map(String::as_str)
            .collect()
    };
    for watched in [
        "cluster.x-k8s.io/machinedeployments",
        "cluster.x-k8s.io/machinesets",
        "cluster.x-k8s.io/machinepools",
        "infrastructure.cluster.x-k8s.io/openstackmachinetemplates",
    ] {
        assert_eq!(verbs(watched), ["get", "list", "watch"], "{watched}");
    }
    assert_eq!(
        verbs("cluster.x-k8s.io/machines"),
        ["get", "list", "update", "watch"]
    );
    for scale in [
        "cluster.x-k8s.io/machinedeployments/scale",
        "cluster.x-k8s.io/machinesets/scale",
        "cluster.x-k8s.io/machinepools/scale",
    ] {
        assert_eq!(verbs(scale), ["get", "patch", "update"], "{scale}");
    }
    assert_eq!(grants.len(), 8, "{grants:?}");
    for (resource, verbs) in &grants {
        for forbidden in [
            "*",
            "create",
            "delete",
            "deletecollection",
            "escalate",
            "bind",
        ] {
            assert!(!verbs.contains(forbidden), "{forbidden} on {resource}");
        }
        assert!(!resource.contains("secrets"), "{resource}");
    }
}

#[test]
fn the_role_binding_gives_the_role_to_the_service_account() {
    let objects = objects();
    let binding = object(&objects, "RoleBinding");
    assert_eq!(
        binding["roleRef"],
        json!({ "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kube-abcde-autoscaler" })
    );
    assert_eq!(
        binding["subjects"],
        json!([{ "kind": "ServiceAccount", "name": "kube-abcde-autoscaler", "namespace": NAMESPACE }])
    );
    assert_eq!(
        object(&objects, "ServiceAccount")["metadata"]["name"],
        binding["subjects"][0]["name"]
    );
}
