//! The representative cluster of the Go driver's tests (`testState`,
//! `testResolved` and `testInput` of `helpers_test.go`), from which the
//! golden `cluster.yaml` was written: calico, 3 masters, a default worker
//! of 2 nodes and a GPU nodegroup with its own labels, flavor, image, node
//! labels and a taint.

use openkeel_magnum_driver::{
    Cluster, ClusterState, ClusterTemplate, Labels, NodeGroup, Status, StringMap,
};

use crate::input::{Image, Input, Resolved, ResolvedNodeGroup};
use crate::names::{CLASS_VERSION, NAMESPACE, server_group_name};
use crate::time::{minutes, parse_rfc3339};

/// The Glance ID of the image `img-ubuntu`.
pub const IMAGE_UBUNTU_ID: &str = "11111111-1111-4111-8111-111111111111";
/// The Glance ID of the image `img-gpu`.
pub const IMAGE_GPU_ID: &str = "22222222-2222-4222-8222-222222222222";
/// The Neutron ID of the network `public`.
pub const EXTERNAL_NETWORK_ID: &str = "33333333-3333-4333-8333-333333333333";
/// The Nova ID of the control plane's server group.
pub const SERVER_GROUP_CONTROL_PLANE_ID: &str = "44444444-4444-4444-8444-444444444444";
/// The Nova ID of the default worker's server group.
pub const SERVER_GROUP_WORKER_ID: &str = "55555555-5555-4555-8555-555555555555";
/// The Nova ID of the GPU nodegroup's server group.
pub const SERVER_GROUP_GPU_ID: &str = "66666666-6666-4666-8666-666666666666";

/// The cluster's `stack_id`.
pub const STACK_ID: &str = "kube-abcde";
/// The cluster's UUID.
pub const UUID: &str = "2c4a9b9e-5d5e-4a52-9e49-0c2f1ac1f0b1";

/// The tests' now, 2026-11-30T12:00:00Z.
pub fn now() -> i64 {
    parse_rfc3339("2026-11-30T12:00:00Z").expect("time")
}

/// The labels of the cluster, of its template and of its two default
/// nodegroups.
pub fn cluster_labels() -> Labels {
    Labels::from([
        ("kube_tag", "v1.31.1"),
        ("calico_tag", "v3.31.3"),
        ("availability_zone", "nova"),
        ("boot_volume_size", "40"),
        ("boot_volume_type", "ssd"),
        ("etcd_volume_size", "10"),
        ("api_server_cert_sans", "k8s.example.com, 10.0.0.10"),
        ("oidc_issuer_url", "https://idp.example.com"),
        ("oidc_client_id", "kubernetes"),
        ("audit_log_enabled", "true"),
        ("admission_control_list", "PodSecurity"),
        ("master_lb_floating_ip_enabled", "false"),
        ("container_infra_prefix", "registry.example.com/k8s"),
    ])
}

/// `testState`: the cluster `demo` of template `k8s-1.31`, all being
/// created.
pub fn test_state() -> ClusterState {
    ClusterState {
        cluster: cluster(),
        template: template(),
        nodegroups: vec![
            nodegroup(
                "ng-master",
                "default-master",
                "master",
                true,
                3,
                Some(cluster_labels()),
            ),
            nodegroup(
                "ng-worker",
                "default-worker",
                "worker",
                true,
                2,
                Some(cluster_labels()),
            ),
            gpu_nodegroup(),
        ],
    }
}

/// The cluster row.
fn cluster() -> Cluster {
    Cluster {
        uuid: UUID.into(),
        name: "demo".into(),
        project_id: "p1".into(),
        user_id: "u1".into(),
        cluster_template_id: "tpl-1".into(),
        keypair: Some("mykey".into()),
        docker_volume_size: Some(20),
        labels: Some(cluster_labels()),
        master_flavor_id: Some("m1.large".into()),
        flavor_id: Some("m1.medium".into()),
        master_lb_enabled: Some(true),
        create_timeout: Some(60),
        status: Some(Status::CreateInProgress),
        created_at: now() - minutes(10),
        ..Cluster::default()
    }
}

/// The template row.
fn template() -> ClusterTemplate {
    ClusterTemplate {
        uuid: "tpl-1".into(),
        name: "k8s-1.31".into(),
        image_id: Some("img-ubuntu".into()),
        external_network_id: Some("public".into()),
        network_driver: Some("calico".into()),
        dns_nameserver: Some("8.8.8.8,1.1.1.1".into()),
        cluster_distro: Some("ubuntu".into()),
        coe: Some("kubernetes".into()),
        http_proxy: Some("http://proxy:3128".into()),
        no_proxy: Some("localhost,10.0.0.0/8".into()),
        master_lb_enabled: Some(true),
        labels: Some(cluster_labels()),
        ..ClusterTemplate::default()
    }
}

/// A nodegroup of the cluster being created.
fn nodegroup(
    uuid: &str,
    name: &str,
    role: &str,
    is_default: bool,
    count: i32,
    labels: Option<Labels>,
) -> NodeGroup {
    NodeGroup {
        uuid: uuid.into(),
        name: name.into(),
        cluster_id: UUID.into(),
        role: Some(role.into()),
        is_default: Some(is_default),
        node_count: Some(count),
        labels,
        status: Some(Status::CreateInProgress),
        ..NodeGroup::default()
    }
}

/// The nodegroup `gpu`: its own flavor, image, availability zone and
/// failure-domain hint, a node label CAPI propagates and one it does not,
/// and a taint.
fn gpu_nodegroup() -> NodeGroup {
    let labels = Labels::from([
        ("availability_zone", "az-gpu"),
        ("different_failure_domain", "true"),
    ]);
    let taint: StringMap = [("key", "gpu"), ("value", "true"), ("effect", "NoSchedule")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    NodeGroup {
        flavor_id: Some("g1.xlarge".into()),
        image_id: Some("img-gpu".into()),
        node_labels: Some(Labels::from([
            ("node-role.kubernetes.io/gpu", ""),
            ("team", "ml"),
        ])),
        node_taints: Some(vec![taint]),
        ..nodegroup("ng-gpu", "gpu", "gpu", false, 1, Some(labels))
    }
}

/// `testResolved`: what the Go tests' fake OpenStack resolved for
/// [`test_state`].
pub fn test_resolved() -> Resolved {
    let ubuntu = Image {
        id: IMAGE_UBUNTU_ID.into(),
        disk_bus: String::new(),
    };
    let server_groups = [
        (None, SERVER_GROUP_CONTROL_PLANE_ID),
        (Some("default-worker"), SERVER_GROUP_WORKER_ID),
        (Some("gpu"), SERVER_GROUP_GPU_ID),
    ];
    Resolved {
        control_plane_flavor: "m1.large".into(),
        control_plane_image: ubuntu.clone(),
        external_network_id: EXTERNAL_NETWORK_ID.into(),
        server_groups: server_groups
            .into_iter()
            .map(|(ng, id)| (server_group_name(STACK_ID, ng), id.to_string()))
            .collect(),
        node_groups: [
            (
                "default-worker".to_string(),
                ResolvedNodeGroup {
                    flavor: "m1.medium".into(),
                    image: ubuntu,
                    capacity: None,
                },
            ),
            (
                "gpu".to_string(),
                ResolvedNodeGroup {
                    flavor: "g1.xlarge".into(),
                    image: Image {
                        id: IMAGE_GPU_ID.into(),
                        disk_bus: "scsi".into(),
                    },
                    capacity: None,
                },
            ),
        ]
        .into_iter()
        .collect(),
        ..Resolved::default()
    }
}

/// `testInput`: [`test_state`] with [`test_resolved`], in the default
/// namespace and class version, Cinder's default volume type `standard`
/// and no OpenStackCluster yet.
pub fn test_input() -> Input {
    Input {
        state: test_state(),
        stack_id: STACK_ID.into(),
        namespace: NAMESPACE.into(),
        class_version: CLASS_VERSION.into(),
        resolved: test_resolved(),
        live: None,
        default_boot_volume_size: 0,
        default_boot_volume_type: None,
        default_volume_type: "standard".into(),
        autoscaler_image_repository: String::new(),
        registries: Default::default(),
    }
}
