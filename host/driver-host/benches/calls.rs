//! Driver call costs: a trivial call on a fresh instance, a create-cluster
//! and a status derivation (poll-status) of the fake driver with a
//! realistic cluster state, a host start-up to the first answered call
//! with a warm precompiled cache, and contract 1.1's `derive-status` over
//! the snapshot of a 3-master, 2-nodegroup Cluster API cluster (13
//! objects, 60–70 KB): on the `watcher` test component, which reads one
//! ConfigMap (the host's share), and on the built-in Cluster API driver
//! (`k8s_cluster_api`), which reads every object under its six selectors.
//! Criterion's median is the p50; the derivations' p50 and p99 over 2,000
//! calls are printed too.

use chrono::NaiveDate;
use criterion::{Criterion, criterion_group, criterion_main};
use driver_host::{
    CallContext, ClusterState, Credentials, Driver, DriverHost, DriverSettings, HostServices,
    KubeObject, Observation, Origin, PackageSource, Selector,
};
use magnum_domain::Status;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => panic!("runtime: {e}"),
    }
}

fn settings(cache: &std::path::Path) -> DriverSettings {
    DriverSettings {
        precompiled_cache_dir: Some(cache.to_path_buf()),
        enabled_beta_drivers: vec!["fake".into()],
        ..Default::default()
    }
}

/// A host of the built-in drivers, compiling into `cache`.
async fn start(cache: &std::path::Path) -> DriverHost {
    DriverHost::start(settings(cache), HostServices::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The driver `name` of `host`.
fn driver(host: &DriverHost, name: &str) -> Driver {
    host.registry()
        .lookup(name)
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn map(pairs: &[(&str, &str)]) -> Option<StringMap> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

/// A cluster as an operator's would look: a template with its labels, a
/// cluster with a dozen labels, two default nodegroups and a third one.
fn realistic_state() -> ClusterState {
    let t = NaiveDate::from_ymd_opt(2026, 11, 30)
        .and_then(|d| d.and_hms_micro_opt(14, 27, 3, 512_345))
        .unwrap_or_default();
    let labels = map(&[
        ("kube_tag", "v1.30.4"),
        ("calico_tag", "v3.28.5"),
        ("cloud_provider_tag", "v1.30.0"),
        ("auto_healing_enabled", "true"),
        ("auto_scaling_enabled", "false"),
        ("boot_volume_size", "40"),
        ("boot_volume_type", "ssd"),
        ("container_infra_prefix", "registry.example.com/magnum/"),
        ("master_lb_floating_ip_enabled", "true"),
        ("octavia_provider", "amphora"),
        ("keystone_auth_enabled", "true"),
        ("audit_log_enabled", "true"),
    ]);
    let template = ClusterTemplate {
        id: 42,
        uuid: "0f3d6a3e-9d7c-4a52-8b1e-2f6c3f1b7a10".into(),
        name: "k8s-v1.30.4-ubuntu".into(),
        project_id: "b6f0c2a4d1e94c3f9a8e7d6c5b4a3f21".into(),
        user_id: "9a8b7c6d5e4f30211234567890abcdef".into(),
        flavor_id: Some("m1.large".into()),
        master_flavor_id: Some("m1.xlarge".into()),
        keypair_id: Some("ops".into()),
        image_id: Some("ubuntu-22.04-kube-v1.30.4".into()),
        external_network_id: Some("public".into()),
        network_driver: Some("calico".into()),
        volume_driver: Some("cinder".into()),
        dns_nameserver: Some("8.8.8.8".into()),
        docker_volume_size: Some(50),
        cluster_distro: Some("ubuntu".into()),
        coe: Some("kubernetes".into()),
        labels: labels.clone(),
        tls_disabled: Some(false),
        public: Some(true),
        server_type: Some("vm".into()),
        master_lb_enabled: Some(true),
        floating_ip_enabled: Some(false),
        hidden: Some(false),
        driver: Some("fake".into()),
        created_at: t,
        updated_at: Some(t),
        ..Default::default()
    };
    let cluster = Cluster {
        id: 7,
        uuid: "5d12f6fd-a196-4bf0-ae4c-1f639a523a52".into(),
        name: "production-eu-1".into(),
        project_id: template.project_id.clone(),
        user_id: template.user_id.clone(),
        cluster_template_id: template.uuid.clone(),
        keypair: Some("ops".into()),
        labels,
        master_flavor_id: Some("m1.xlarge".into()),
        flavor_id: Some("m1.large".into()),
        status: Some(Status::CreateInProgress),
        create_timeout: Some(60),
        ca_cert_ref: Some("1c7a3f0e-7d2b-4c4e-9a55-0f6e7c1d2b3a".into()),
        magnum_cert_ref: Some("2d8b4a1f-8e3c-4d5f-8b66-1a7f8d2e3c4b".into()),
        etcd_ca_cert_ref: Some("3e9c5b2a-9f4d-4e6a-9c77-2b8a9e3f4d5c".into()),
        front_proxy_ca_cert_ref: Some("4fad6c3b-a05e-4f7b-8d88-3c9bafa4e5d6".into()),
        master_lb_enabled: Some(true),
        floating_ip_enabled: Some(false),
        created_at: t,
        updated_at: Some(t),
        ..Default::default()
    };
    let ng = |uuid: &str, name: &str, role: &str, count: i32, default: bool| NodeGroup {
        id: 1,
        uuid: uuid.into(),
        name: name.into(),
        cluster_id: cluster.uuid.clone(),
        project_id: cluster.project_id.clone(),
        flavor_id: Some("m1.large".into()),
        image_id: Some("ubuntu-22.04-kube-v1.30.4".into()),
        node_count: Some(count),
        min_node_count: Some(1),
        max_node_count: Some(10),
        role: Some(role.into()),
        is_default: Some(default),
        status: Some(Status::CreateInProgress),
        labels: map(&[("kube_tag", "v1.30.4")]),
        node_labels: map(&[("topology.kubernetes.io/zone", "eu-1a")]),
        node_taints: Some(vec![
            map(&[
                ("key", "dedicated"),
                ("value", "gpu"),
                ("effect", "NoSchedule"),
            ])
            .unwrap_or_default(),
        ]),
        created_at: t,
        updated_at: Some(t),
        ..Default::default()
    };
    ClusterState {
        nodegroups: vec![
            ng(
                "a1c0d8c3-4f8e-4d0c-9d0b-6a3e6a0b9f01",
                "default-master",
                "master",
                3,
                true,
            ),
            ng(
                "b2d1e9d4-5a9f-4e1d-8e1c-7b4f7b1ca012",
                "default-worker",
                "worker",
                5,
                true,
            ),
            ng(
                "c3e2f0e5-6b0a-4f2e-9f2d-8c5a8c2db123",
                "gpu",
                "worker",
                2,
                false,
            ),
        ],
        cluster,
        template,
    }
}

/// The CPU time this thread has run, in nanoseconds (Linux schedstat);
/// `None` elsewhere.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// The median over batches of the CPU time per call: on a machine shared
/// with other work, wall-clock figures include time spent descheduled.
fn cpu_per_call(name: &str, mut f: impl FnMut()) {
    const BATCHES: usize = 31;
    const CALLS: u64 = 300;
    let mut per_call = Vec::with_capacity(BATCHES);
    for _ in 0..BATCHES {
        let Some(start) = thread_cpu_ns() else {
            return;
        };
        for _ in 0..CALLS {
            f();
        }
        let Some(end) = thread_cpu_ns() else {
            return;
        };
        per_call.push((end - start) as f64 / CALLS as f64 / 1000.0);
    }
    per_call.sort_by(f64::total_cmp);
    println!(
        "{name}: CPU time per call, median of {BATCHES} batches of {CALLS}: {:.1} µs",
        per_call[BATCHES / 2]
    );
}

fn calls(c: &mut Criterion) {
    let rt = runtime();
    let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let host = rt.block_on(start(cache.path()));
    assert!(host.pooling(), "the pooling allocator is not in use");
    let fake = driver(&host, "fake");

    cpu_per_call("trivial call on a fresh instance", || {
        let _ = rt.block_on(fake.validate_master_size(3));
    });
    c.bench_function("trivial call on a fresh instance", |b| {
        b.iter(|| rt.block_on(fake.validate_master_size(3)))
    });

    let st = realistic_state();
    let ctx = CallContext {
        credentials: Credentials {
            auth_token: Some("gAAAAA-token".into()),
            user_id: st.cluster.user_id.clone(),
            project_id: st.cluster.project_id.clone(),
            service_catalog: None,
            admin: false,
        },
        request_id: "req-5b3c8a9e-2f1d-4c7b-9e6a-0d8f7c6b5a49".into(),
        now: None,
    };
    cpu_per_call("fake create-cluster, realistic state", || {
        let _ = rt.block_on(fake.create_cluster(&ctx, &st, 60));
    });
    c.bench_function("fake create-cluster, realistic state", |b| {
        b.iter(|| match rt.block_on(fake.create_cluster(&ctx, &st, 60)) {
            Ok(u) => u,
            Err(e) => panic!("{e}"),
        })
    });
    // The status derivation of a poll (Magnum's update_cluster_status and
    // health monitor): the fake driver's answer for a cluster in progress,
    // its create complete (no delay): the cluster row with its stack,
    // addresses, version and health, and its nodegroups. The answer is
    // not applied, so every poll derives the same completion.
    match rt.block_on(fake.poll_status(&ctx, &st)) {
        Ok(u) => {
            let status = u.update.cluster.as_ref().and_then(|c| c.status);
            assert_eq!(status, Some(Status::CreateComplete), "poll-status: {u:?}");
            assert!(!u.update.nodegroups.is_empty(), "poll-status: {u:?}");
        }
        Err(e) => panic!("poll-status: {e}"),
    }
    cpu_per_call(
        "fake poll-status (status derivation), realistic state",
        || {
            let _ = rt.block_on(fake.poll_status(&ctx, &st));
        },
    );
    c.bench_function(
        "fake poll-status (status derivation), realistic state",
        |b| {
            b.iter(|| match rt.block_on(fake.poll_status(&ctx, &st)) {
                Ok(u) => u.update.changed(),
                Err(e) => panic!("{e}"),
            })
        },
    );
    drop(host);

    let mut group = c.benchmark_group("start-up");
    group.sample_size(20);
    group.bench_function(
        "host start-up to the first answered call, warm cache",
        |b| {
            b.iter(|| {
                rt.block_on(async {
                    let h = start(cache.path()).await;
                    let d = driver(&h, "fake");
                    d.poll_status(&CallContext::admin(), &st)
                        .await
                        .map(|u| u.update.changed())
                })
            })
        },
    );
    group.finish();
}

/// The Cluster API name (`stack_id`) of the cluster the snapshots show.
const STACK_ID: &str = "kube-abc12";
/// Its KubeadmControlPlane and OpenStackCluster, named by the topology
/// controller.
const KCP: &str = "kube-abc12-cp-j8w2n";
const OPENSTACK_CLUSTER: &str = "kube-abc12-x7k2p";
/// Where every object of every cluster lives.
const NAMESPACE: &str = "magnum-system";

/// The realistic cluster once its create has written the Cluster API
/// cluster `kube-abc12` (its `stack_id`): 3 masters and two worker
/// nodegroups of 2 nodes, all still `CREATE_IN_PROGRESS`.
fn capi_state() -> ClusterState {
    let mut st = realistic_state();
    st.cluster.stack_id = Some(STACK_ID.into());
    st.template.driver = Some("k8s_cluster_api".into());
    for ng in &mut st.nodegroups {
        if ng.role.as_deref() == Some("worker") {
            ng.node_count = Some(2);
        }
    }
    st
}

/// A condition as Cluster API v1beta2 writes it.
fn condition(kind: &str, status: &str, reason: &str) -> Value {
    json!({
        "type": kind,
        "status": status,
        "reason": reason,
        "lastTransitionTime": "2026-11-30T14:41:17Z",
        "observedGeneration": 4,
    })
}

/// The conditions that report nothing going on, False in a cluster at
/// rest.
const AT_REST: [(&str, &str, &str); 6] = [
    ("RollingOut", "False", "NotRollingOut"),
    ("ScalingUp", "False", "NotScalingUp"),
    ("ScalingDown", "False", "NotScalingDown"),
    ("Remediating", "False", "NotRemediating"),
    ("Deleting", "False", "NotDeleting"),
    ("Paused", "False", "NotPaused"),
];

/// One Cluster API object of the snapshot: its envelope with `labels` and
/// the annotations and owner Cluster API writes, `spec`, and `status` with
/// `conditions` then older conditions of the same shape (v1beta1 ones,
/// which Cluster API still reports under `status.deprecated`), 19 in all;
/// 4–6 KB.
fn capi_object(
    api_version: &str,
    kind: &str,
    name: &str,
    labels: Value,
    spec: Value,
    mut status: Value,
    conditions: &[(&str, &str, &str)],
) -> KubeObject {
    let mut current: Vec<Value> = conditions
        .iter()
        .map(|(t, s, r)| condition(t, s, r))
        .collect();
    let older: Vec<Value> = (current.len()..19)
        .map(|i| {
            json!({
                "type": format!("Condition{i}Ready"),
                "status": "True",
                "severity": "",
                "reason": "AsExpected",
                "message": "the component is up and reconciled as its spec says",
                "lastTransitionTime": "2026-11-30T14:27:03Z",
            })
        })
        .collect();
    if api_version.ends_with("/v1beta1") {
        current.extend(older);
    } else {
        status["deprecated"] = json!({ "v1beta1": { "conditions": older } });
    }
    status["conditions"] = Value::Array(current);
    let v = json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": "6f1d2c3b-4a59-4e8d-9c7b-1a2b3c4d5e6f",
            "resourceVersion": "123456",
            "generation": 4,
            "creationTimestamp": "2026-11-30T14:27:03Z",
            "labels": labels,
            "annotations": {
                "cluster.x-k8s.io/cloned-from-name": "magnum-v0.38.2-openkeel.1-worker",
                "cluster.x-k8s.io/cloned-from-groupkind": "OpenStackMachineTemplate.infrastructure.cluster.x-k8s.io",
                "machine.cluster.x-k8s.io/certificates-expiry": "2027-11-30T14:27:03Z",
            },
            "finalizers": [format!("{}.cluster.x-k8s.io", kind.to_lowercase())],
            "ownerReferences": [{
                "apiVersion": "cluster.x-k8s.io/v1beta2",
                "kind": "Cluster",
                "name": STACK_ID,
                "uid": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "spec": spec,
        "status": status,
    });
    KubeObject {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: Some(NAMESPACE.into()),
        name: name.into(),
        json: v.to_string(),
    }
}

/// The labels of an object the topology controller generated for the
/// cluster, and the watcher test driver's label (the watcher's selector
/// takes the whole snapshot).
fn owned_labels(uuid: &str, extra: &[(&str, &str)]) -> Value {
    let mut l = json!({
        "cluster.x-k8s.io/cluster-name": STACK_ID,
        "topology.cluster.x-k8s.io/owned": "",
        "okm.test/cluster": uuid,
    });
    for (k, v) in extra {
        l[*k] = json!(v);
    }
    l
}

/// A Machine of the control plane (`deployment` None) or of a worker
/// nodegroup's MachineDeployment, Running with a healthy node.
fn machine(uuid: &str, name: &str, address: &str, deployment: Option<(&str, &str)>) -> KubeObject {
    let (labels, mut conditions) = match deployment {
        None => (
            owned_labels(
                uuid,
                &[
                    ("cluster.x-k8s.io/control-plane", ""),
                    ("cluster.x-k8s.io/control-plane-name", KCP),
                ],
            ),
            vec![
                ("APIServerPodHealthy", "True", "Running"),
                ("ControllerManagerPodHealthy", "True", "Running"),
                ("SchedulerPodHealthy", "True", "Running"),
                ("EtcdPodHealthy", "True", "Running"),
                ("EtcdMemberHealthy", "True", "Healthy"),
            ],
        ),
        Some((ng, md)) => (
            owned_labels(
                uuid,
                &[
                    ("topology.cluster.x-k8s.io/deployment-name", ng),
                    ("cluster.x-k8s.io/deployment-name", md),
                    ("cluster.x-k8s.io/set-name", &format!("{md}-7f9c8")),
                    ("machine-template-hash", "3415098211"),
                ],
            ),
            Vec::new(),
        ),
    };
    conditions.extend([
        ("Available", "True", "Available"),
        ("Ready", "True", "Ready"),
        ("UpToDate", "True", "UpToDate"),
        ("BootstrapConfigReady", "True", "Ready"),
        ("InfrastructureReady", "True", "Ready"),
        ("NodeReady", "True", "NodeReady"),
        ("NodeHealthy", "True", "NodeHealthy"),
        ("Deleting", "False", "NotDeleting"),
        ("Paused", "False", "NotPaused"),
    ]);
    capi_object(
        "cluster.x-k8s.io/v1beta2",
        "Machine",
        name,
        labels,
        json!({
            "clusterName": STACK_ID,
            "version": "v1.30.4",
            "providerID": "openstack:///4b7c9d2e-1f3a-4c5b-8d6e-7f8a9b0c1d2e",
            "failureDomain": "nova",
            "bootstrap": { "dataSecretName": name },
            "infrastructureRef": {
                "apiGroup": "infrastructure.cluster.x-k8s.io",
                "kind": "OpenStackMachine",
                "name": name,
            },
        }),
        json!({
            "observedGeneration": 4,
            "phase": "Running",
            "initialization": {
                "bootstrapDataSecretCreated": true,
                "infrastructureProvisioned": true,
            },
            "nodeRef": { "name": name },
            "nodeInfo": {
                "kubeletVersion": "v1.30.4",
                "osImage": "Ubuntu 22.04.5 LTS",
                "containerRuntimeVersion": "containerd://1.7.22",
                "architecture": "amd64",
            },
            "addresses": [
                { "type": "InternalIP", "address": address },
                { "type": "Hostname", "address": name },
            ],
        }),
        &conditions,
    )
}

/// The variables of the Cluster's topology: those the driver writes for
/// the cluster of its golden `cluster.yaml` (guest/drivers/capi/testdata), with
/// this cluster's names and flavors.
fn topology_variables() -> Value {
    json!([
        {"name": "admissionControlList", "value": "NodeRestriction"},
        {"name": "apiServerFloatingIP", "value": ""},
        {"name": "apiServerLoadBalancer", "value": {"enabled": true, "provider": "amphora"}},
        {"name": "apiServerSANs", "value": "- k8s.example.com\n- 10.0.0.10\n"},
        {"name": "apiServerTLSCipherSuites", "value": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"},
        {"name": "aptProxyConfig", "value": "QWNxdWlyZTo6aHR0cDo6UHJveHkgImh0dHA6Ly9wcm94eTozMTI4IjsK"},
        {"name": "auditLog", "value": {"enabled": true, "maxAge": "30", "maxBackup": "10", "maxSize": "100"}},
        {"name": "availabilityZone", "value": "nova"},
        {"name": "bootVolume", "value": {"size": 40, "type": "ssd"}},
        {"name": "bootVolumeAvailabilityZone", "value": "nova"},
        {"name": "clusterIdentityRefName", "value": "kube-abc12-cloud-config"},
        {"name": "containerdConfig", "value": "dmVyc2lvbiA9IDIKaW1wb3J0cyA9IFsiL2V0Yy9jb250YWluZXJkL2NvbmYuZC8qLnRvbWwiXQoKW3BsdWdpbnNdCiAgW3BsdWdpbnMuImlvLmNvbnRhaW5lcmQuZ3JwYy52MS5jcmkiXQogICAgc2FuZGJveF9pbWFnZSA9ICJyZWdpc3RyeS5leGFtcGxlLmNvbS9rOHMvcGF1c2U6My45IgogIFtwbHVnaW5zLiJpby5jb250YWluZXJkLmdycGMudjEuY3JpIi5jb250YWluZXJkLnJ1bnRpbWVzLnJ1bmNdCiAgICBydW50aW1lX3R5cGUgPSAiaW8uY29udGFpbmVyZC5ydW5jLnYyIgogIFtwbHVnaW5zLiJpby5jb250YWluZXJkLmdycGMudjEuY3JpIi5jb250YWluZXJkLnJ1bnRpbWVzLnJ1bmMub3B0aW9uc10KICAgIFN5c3RlbWRDZ3JvdXAgPSB0cnVlCg=="},
        {"name": "controlPlaneAvailabilityZones", "value": [""]},
        {"name": "controlPlaneFlavor", "value": "m1.xlarge"},
        {"name": "disableAPIServerFloatingIP", "value": true},
        {"name": "disableAPIServerFloatingIPManaged", "value": true},
        {"name": "dnsNameservers", "value": ["8.8.8.8", "1.1.1.1"]},
        {"name": "dockerVolumeSize", "value": 20},
        {"name": "dockerVolumeType", "value": "standard"},
        {"name": "enableDockerVolume", "value": true},
        {"name": "enableEtcdVolume", "value": true},
        {"name": "enableKeystoneAuth", "value": true},
        {"name": "etcdVolumeSize", "value": 10},
        {"name": "etcdVolumeType", "value": "standard"},
        {"name": "externalNetworkId", "value": "33333333-3333-4333-8333-333333333333"},
        {"name": "fixedNetworkId", "value": ""},
        {"name": "fixedSubnetId", "value": ""},
        {"name": "flavor", "value": "m1.large"},
        {"name": "hardwareDiskBus", "value": ""},
        {"name": "imageRepository", "value": "registry.example.com/magnum"},
        {"name": "imageUUID", "value": "11111111-1111-4111-8111-111111111111"},
        {"name": "isServerGroupDiffFailureDomain", "value": false},
        {"name": "kubeletTLSCipherSuites", "value": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"},
        {"name": "nodeCidr", "value": "10.0.0.0/24"},
        {"name": "openidConnect", "value": {"clientId": "kubernetes", "groupsClaim": "", "groupsPrefix": "", "issuerUrl": "https://idp.example.com", "usernameClaim": "sub", "usernamePrefix": "-"}},
        {"name": "operatingSystem", "value": "ubuntu"},
        {"name": "serverGroupId", "value": "44444444-4444-4444-8444-444444444444"},
        {"name": "sshKeyName", "value": "ops"},
        {"name": "systemdProxyConfig", "value": "W1NlcnZpY2VdCkVudmlyb25tZW50PSJodHRwX3Byb3h5PWh0dHA6Ly9wcm94eTozMTI4IgpFbnZpcm9ubWVudD0iSFRUUF9QUk9YWT1odHRwOi8vcHJveHk6MzEyOCIKRW52aXJvbm1lbnQ9Im5vX3Byb3h5PWxvY2FsaG9zdCwxMC4wLjAuMC84IgpFbnZpcm9ubWVudD0iTk9fUFJPWFk9bG9jYWxob3N0LDEwLjAuMC4wLzgiCg=="},
    ])
}

/// `{"name": …, "value": …}` of each pair: kubeadm's extra arguments.
fn args(pairs: &[(&str, &str)]) -> Value {
    pairs
        .iter()
        .map(|(name, value)| json!({ "name": name, "value": value }))
        .collect()
}

/// The control plane's kubeadm configuration, as the driver's ClusterClass
/// patches make it (`patched-control-plane.yaml` of its golden files),
/// without its files and commands.
fn kubeadm_config_spec() -> Value {
    let kubelet = json!({ "nodeRegistration": { "kubeletExtraArgs": args(&[
        ("cloud-provider", "external"),
        ("tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
    ]) } });
    json!({
        "clusterConfiguration": {
            "imageRepository": "registry.example.com/magnum",
            "apiServer": {
                "certSANs": [
                    STACK_ID,
                    format!("{STACK_ID}.{NAMESPACE}"),
                    format!("{STACK_ID}.{NAMESPACE}.svc"),
                    format!("{STACK_ID}.{NAMESPACE}.svc.cluster.local"),
                ],
                "extraArgs": args(&[
                    ("profiling", "false"),
                    ("enable-admission-plugins", "NodeRestriction"),
                    ("audit-log-path", "/var/log/audit/kube-apiserver-audit.log"),
                    ("audit-log-maxage", "30"),
                    ("audit-log-maxbackup", "10"),
                    ("audit-log-maxsize", "100"),
                    ("audit-policy-file", "/etc/kubernetes/audit-policy/apiserver-audit-policy.yaml"),
                    ("cloud-provider", "external"),
                    ("authentication-token-webhook-config-file", "/etc/kubernetes/webhooks/webhookconfig.yaml"),
                    ("authorization-webhook-config-file", "/etc/kubernetes/webhooks/webhookconfig.yaml"),
                    ("authorization-mode", "Node,RBAC,Webhook"),
                    ("tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
                ]),
                "extraVolumes": [
                    { "name": "webhooks", "hostPath": "/etc/kubernetes/webhooks", "mountPath": "/etc/kubernetes/webhooks" },
                    { "name": "audit-policy", "hostPath": "/etc/kubernetes/audit-policy", "mountPath": "/etc/kubernetes/audit-policy" },
                    { "name": "audit-logs", "hostPath": "/var/log/audit", "mountPath": "/var/log/audit" },
                ],
            },
            "controllerManager": { "extraArgs": args(&[
                ("bind-address", "0.0.0.0"),
                ("cloud-provider", "external"),
                ("profiling", "false"),
            ]) },
            "scheduler": { "extraArgs": args(&[("bind-address", "0.0.0.0"), ("profiling", "false")]) },
            "etcd": { "local": { "extraArgs": args(&[("listen-metrics-urls", "http://0.0.0.0:2381")]) } },
        },
        "initConfiguration": kubelet,
        "joinConfiguration": kubelet,
    })
}

/// The 12 Cluster API objects of the cluster of `st` once its create has
/// finished: the Cluster, its OpenStackCluster and KubeadmControlPlane, a
/// Machine a master, and for each worker nodegroup its MachineDeployment
/// and a Machine a node; every one at its generation, every condition of
/// the driver's status rules True, every count at the nodegroups'
/// `node_count`.
fn capi_objects(st: &ClusterState) -> Vec<KubeObject> {
    let uuid = st.cluster.uuid.as_str();
    let count = |ng: &NodeGroup| ng.node_count.unwrap_or(0);
    let masters = st
        .nodegroups
        .iter()
        .filter(|ng| ng.role.as_deref() == Some("master"))
        .map(count)
        .sum::<i32>();
    let workers: Vec<&NodeGroup> = st
        .nodegroups
        .iter()
        .filter(|ng| ng.role.as_deref() != Some("master"))
        .collect();
    let replicas = |n: i32| {
        json!({
            "replicas": n, "readyReplicas": n, "availableReplicas": n, "upToDateReplicas": n,
        })
    };
    let mut cluster_status = json!({
        "observedGeneration": 4,
        "phase": "Provisioned",
        "initialization": { "infrastructureProvisioned": true, "controlPlaneInitialized": true },
        "controlPlane": replicas(masters),
        "workers": replicas(workers.iter().map(|ng| count(ng)).sum()),
    });
    cluster_status["controlPlane"]["desiredReplicas"] = json!(masters);
    let mut cluster_conditions = vec![
        ("Available", "True", "Available"),
        ("InfrastructureReady", "True", "Ready"),
        ("ControlPlaneInitialized", "True", "Initialized"),
        ("ControlPlaneAvailable", "True", "Available"),
        ("WorkersAvailable", "True", "Available"),
        ("RemoteConnectionProbe", "True", "ProbeSucceeded"),
        ("MachinesReady", "True", "Ready"),
        ("MachinesUpToDate", "True", "UpToDate"),
        ("TopologyReconciled", "True", "ReconcileSucceeded"),
    ];
    cluster_conditions.extend(AT_REST);
    let mut objects = vec![
        capi_object(
            "cluster.x-k8s.io/v1beta2",
            "Cluster",
            STACK_ID,
            json!({ "cluster-uuid": uuid, "cni": "calico-v3.28.5", "okm.test/cluster": uuid }),
            json!({
                "clusterNetwork": {
                    "pods": { "cidrBlocks": ["10.100.0.0/16"] },
                    "services": { "cidrBlocks": ["10.254.0.0/16"] },
                    "serviceDomain": "cluster.local",
                },
                "controlPlaneEndpoint": { "host": "10.0.0.50", "port": 6443 },
                "controlPlaneRef": {
                    "apiGroup": "controlplane.cluster.x-k8s.io",
                    "kind": "KubeadmControlPlane",
                    "name": KCP,
                },
                "infrastructureRef": {
                    "apiGroup": "infrastructure.cluster.x-k8s.io",
                    "kind": "OpenStackCluster",
                    "name": OPENSTACK_CLUSTER,
                },
                "topology": {
                    "classRef": { "name": "magnum-v0.38.2-openkeel.1" },
                    "version": "v1.30.4",
                    "controlPlane": { "replicas": masters },
                    "workers": { "machineDeployments": workers.iter().map(|ng| json!({
                        "class": "default-worker",
                        "name": ng.name,
                        "replicas": count(ng),
                        "failureDomain": "nova",
                    })).collect::<Vec<_>>() },
                    "variables": topology_variables(),
                },
            }),
            cluster_status,
            &cluster_conditions,
        ),
        capi_object(
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "OpenStackCluster",
            OPENSTACK_CLUSTER,
            owned_labels(uuid, &[]),
            json!({
                "apiServerLoadBalancer": { "enabled": true, "provider": "amphora" },
                "controlPlaneEndpoint": { "host": "10.0.0.50", "port": 6443 },
                "externalNetwork": { "id": "33333333-3333-4333-8333-333333333333" },
                "identityRef": { "cloudName": "default", "name": "kube-abc12-cloud-config" },
                "managedSecurityGroups": { "allowAllInClusterTraffic": true },
                "managedSubnets": [{ "cidr": "10.0.0.0/24", "dnsNameservers": ["8.8.8.8"] }],
            }),
            json!({
                "ready": true,
                "network": { "id": "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6", "name": "k8s-clusterapi-cluster-magnum-system-kube-abc12" },
                "apiServerLoadBalancer": {
                    "id": "8e2f3a4b-5c6d-4e7f-9081-92a3b4c5d6e7",
                    "name": "k8s-clusterapi-cluster-magnum-system-kube-abc12-kubeapi",
                    "internalIP": "10.0.0.50",
                    "ip": "10.0.0.50",
                },
                "failureDomains": { "nova": { "controlPlane": true } },
            }),
            &[
                ("Ready", "True", ""),
                ("NetworkReady", "True", ""),
                ("SecurityGroupsReady", "True", ""),
                ("APIEndpointReady", "True", ""),
            ],
        ),
        capi_object(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlane",
            KCP,
            owned_labels(uuid, &[]),
            json!({
                "replicas": masters,
                "version": "v1.30.4",
                "machineTemplate": { "spec": { "infrastructureRef": {
                    "apiGroup": "infrastructure.cluster.x-k8s.io",
                    "kind": "OpenStackMachineTemplate",
                    "name": "kube-abc12-control-plane-5hq7t",
                } } },
                "kubeadmConfigSpec": kubeadm_config_spec(),
            }),
            {
                let mut s = replicas(masters);
                s["observedGeneration"] = json!(4);
                s["version"] = json!("v1.30.4");
                s["initialization"] = json!({ "controlPlaneInitialized": true });
                s["selector"] = json!(format!(
                    "cluster.x-k8s.io/cluster-name={STACK_ID},cluster.x-k8s.io/control-plane"
                ));
                s
            },
            &[
                ("Available", "True", "Available"),
                ("CertificatesAvailable", "True", "Available"),
                ("EtcdClusterHealthy", "True", "Healthy"),
                ("ControlPlaneComponentsHealthy", "True", "Healthy"),
                ("MachinesReady", "True", "Ready"),
                ("MachinesUpToDate", "True", "UpToDate"),
                AT_REST[0],
                AT_REST[1],
                AT_REST[2],
                AT_REST[3],
                AT_REST[4],
                AT_REST[5],
            ],
        ),
    ];
    for i in 0..masters {
        objects.push(machine(
            uuid,
            &format!("{KCP}-{i}"),
            &format!("10.0.0.{}", 10 + i),
            None,
        ));
    }
    let mut md_conditions = vec![
        ("Available", "True", "Available"),
        ("MachinesReady", "True", "Ready"),
        ("MachinesUpToDate", "True", "UpToDate"),
    ];
    md_conditions.extend(AT_REST);
    for (n, ng) in workers.iter().enumerate() {
        let md = format!("{STACK_ID}-{}-q9v4d", ng.name);
        let mut status = replicas(count(ng));
        status["observedGeneration"] = json!(4);
        status["phase"] = json!("Running");
        objects.push(capi_object(
            "cluster.x-k8s.io/v1beta2",
            "MachineDeployment",
            &md,
            owned_labels(
                uuid,
                &[("topology.cluster.x-k8s.io/deployment-name", &ng.name)],
            ),
            json!({
                "clusterName": STACK_ID,
                "replicas": count(ng),
                "selector": { "matchLabels": {
                    "cluster.x-k8s.io/cluster-name": STACK_ID,
                    "topology.cluster.x-k8s.io/deployment-name": ng.name,
                } },
                "template": { "spec": {
                    "clusterName": STACK_ID,
                    "version": "v1.30.4",
                    "failureDomain": "nova",
                    "bootstrap": { "configRef": {
                        "apiGroup": "bootstrap.cluster.x-k8s.io",
                        "kind": "KubeadmConfigTemplate",
                        "name": format!("{md}-bootstrap-2m6kx"),
                    } },
                    "infrastructureRef": {
                        "apiGroup": "infrastructure.cluster.x-k8s.io",
                        "kind": "OpenStackMachineTemplate",
                        "name": format!("{md}-infra-8tq3r"),
                    },
                } },
            }),
            status,
            &md_conditions,
        ));
        for i in 0..count(ng) {
            objects.push(machine(
                uuid,
                &format!("{md}-7f9c8-{i}"),
                &format!("10.0.0.{}", 20 + 10 * n as i32 + i),
                Some((&ng.name, &md)),
            ));
        }
    }
    objects
}

/// The cloud-config Secret the driver wrote at create (labelled with the
/// cluster's uuid): `clouds.yaml` with the cluster's application
/// credential and the cloud's CA bundle; no rotation pending.
fn cloud_config_secret(st: &ClusterState) -> KubeObject {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let clouds = concat!(
        "clouds:\n",
        "  default:\n",
        "    auth:\n",
        "      application_credential_id: 3c9f0e1d2b4a45c6a7e8f9012b3c4d5e\n",
        "      application_credential_secret: Zm9vYmFyYmF6cXV4LXNlY3JldC1vZi10aGUtY3JlZGVudGlhbA\n",
        "      auth_url: https://keystone.example.com:5000/v3\n",
        "    auth_type: v3applicationcredential\n",
        "    identity_api_version: 3\n",
        "    interface: public\n",
        "    region_name: RegionOne\n",
        "    verify: true\n",
    );
    // A bundle of two certificates of the usual size (the body is filler).
    let line = "MIIDdzCCAl+gAwIBAgIUP4b7c9d2e1f3a4c5b8d6e7f8a9b0c1d2e3f4a5b6c7d8";
    let cert = format!(
        "-----BEGIN CERTIFICATE-----\n{}-----END CERTIFICATE-----\n",
        format!("{line}\n").repeat(20)
    );
    let name = format!("{STACK_ID}-cloud-config");
    let v = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": "1e2d3c4b-5a69-4f8e-9d7c-6b5a4f3e2d1c",
            "resourceVersion": "123321",
            "creationTimestamp": "2026-11-30T14:27:02Z",
            "labels": { "cluster-uuid": st.cluster.uuid },
            // The digest of the cloud CA bundle the driver recorded: the
            // host's services here configure none, so a pass asks for no
            // refresh.
            "annotations": {
                "magnum.openstack.org/application-credential-user-id": st.cluster.user_id,
                "magnum.openstack.org/cloud-ca-digest": "none",
            },
        },
        "type": "Opaque",
        "data": { "clouds.yaml": b64(clouds), "cacert": b64(&cert.repeat(2)) },
    });
    KubeObject {
        api_version: "v1".into(),
        kind: "Secret".into(),
        namespace: Some(NAMESPACE.into()),
        name,
        json: v.to_string(),
    }
}

/// The watcher test driver's ConfigMap of the cluster, saying
/// `CREATE_COMPLETE`.
fn watcher_config_map(st: &ClusterState) -> KubeObject {
    let name = format!("watch-{}", st.cluster.uuid);
    let v = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": "2f3e4d5c-6b7a-4091-8e8d-7c6b5a4f3e2d",
            "resourceVersion": "123400",
            "creationTimestamp": "2026-11-30T14:27:02Z",
            "labels": { "okm.test/cluster": st.cluster.uuid },
        },
        "data": { "requested": "create", "status": "CREATE_COMPLETE" },
    });
    KubeObject {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some(NAMESPACE.into()),
        name,
        json: v.to_string(),
    }
}

/// The snapshot of the 3-master, 2-nodegroup cluster of `st` as the
/// watcher test driver sees it: its one selector (ConfigMaps labelled with
/// the cluster's uuid) holding the 12 Cluster API objects, which carry its
/// label too, and its ConfigMap; 13 objects.
fn watcher_snapshot(st: &ClusterState) -> Vec<Observation> {
    let mut objects = capi_objects(st);
    objects.push(watcher_config_map(st));
    objects.sort_by(|a, b| a.name.cmp(&b.name));
    vec![Observation {
        selector: Selector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some(NAMESPACE.into()),
            labels: vec![("okm.test/cluster".into(), st.cluster.uuid.clone())],
        },
        served: true,
        synced: true,
        objects,
    }]
}

/// The snapshot of the same cluster as the Cluster API driver's watches
/// hold it: one observation a selector of `selectors` (the driver's, in
/// its order), each with the objects of its kind carrying every label it
/// names, sorted by name; the 12 Cluster API objects and the cloud-config
/// Secret, 13 objects.
fn capi_snapshot(st: &ClusterState, selectors: &[Selector]) -> Vec<Observation> {
    let mut objects = capi_objects(st);
    objects.push(cloud_config_secret(st));
    let labelled = |o: &KubeObject, labels: &[(String, String)]| {
        let v: Value = serde_json::from_str(&o.json).unwrap_or_else(|e| panic!("{e}"));
        labels
            .iter()
            .all(|(k, val)| v["metadata"]["labels"][k].as_str() == Some(val))
    };
    let snapshot: Vec<Observation> = selectors
        .iter()
        .map(|s| {
            let mut held: Vec<KubeObject> = objects
                .iter()
                .filter(|o| {
                    o.api_version == s.api_version
                        && o.kind == s.kind
                        && o.namespace == s.namespace
                        && labelled(o, &s.labels)
                })
                .cloned()
                .collect();
            held.sort_by(|a, b| a.name.cmp(&b.name));
            Observation {
                selector: s.clone(),
                served: true,
                synced: true,
                objects: held,
            }
        })
        .collect();
    let held: usize = snapshot.iter().map(|o| o.objects.len()).sum();
    assert_eq!(
        held,
        objects.len(),
        "an object no selector holds: {snapshot:?}"
    );
    snapshot
}

/// The objects of a snapshot and their size in bytes.
fn snapshot_size(snapshot: &[Observation]) -> (usize, usize) {
    let objects = snapshot.iter().flat_map(|o| o.objects.iter());
    (
        snapshot.iter().map(|o| o.objects.len()).sum(),
        objects.map(|o| o.json.len()).sum(),
    )
}

/// The p50 and p99 of `f`'s wall-clock time over `n` calls, in
/// microseconds.
fn percentiles(n: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut t: Vec<f64> = (0..n)
        .map(|_| {
            let start = std::time::Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[n / 2], t[n * 99 / 100])
}

/// Times `d`'s derive-status of `snapshot` on a fresh instance a call:
/// the p50 and p99 over 2,000 calls and the CPU time per call (printed),
/// then criterion's estimate.
fn bench_derive(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    name: &str,
    d: &Driver,
    st: &ClusterState,
    snapshot: &[Observation],
) {
    let ctx = CallContext::admin().at(derive_time(st));
    let (p50, p99) = percentiles(2000, || {
        let _ = rt.block_on(d.derive_status(&ctx, st, snapshot));
    });
    let (_, bytes) = snapshot_size(snapshot);
    println!(
        "{name}: p50 {p50:.0} µs, p99 {p99:.0} µs over 2000 calls, instantiation included; \
         {bytes} bytes of JSON"
    );
    cpu_per_call(name, || {
        let _ = rt.block_on(d.derive_status(&ctx, st, snapshot));
    });
    c.bench_function(name, |b| {
        b.iter(|| match rt.block_on(d.derive_status(&ctx, st, snapshot)) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        })
    });
}

/// The time of the derivations: 20 minutes into the cluster's create,
/// well before its deadline.
fn derive_time(st: &ClusterState) -> chrono::NaiveDateTime {
    st.cluster.created_at + chrono::TimeDelta::minutes(20)
}

/// derive-status of the `watcher` test component, which reads only its
/// ConfigMap: the host's share of a derivation (instantiation, lowering
/// the snapshot's JSON strings, lifting the answer).
fn derive(c: &mut Criterion) {
    let rt = runtime();
    let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let component = std::fs::read(driver_host::test_components::WATCHER)
        .unwrap_or_else(|e| panic!("the watcher component was not built: {e}"));
    let source = PackageSource {
        manifest: driver_host::test_components::WATCHER_MANIFEST.to_string(),
        component: std::sync::Arc::from(component),
        origin: Origin::Path("watcher".into()),
    };
    // The watcher declares a kube grant (its ConfigMaps); the operator
    // grants what it asks. No call below reaches the API.
    let mut granted = settings(cache.path());
    granted.drivers.insert(
        "watcher".into(),
        driver_host::DriverConfig {
            grant_requested: Some(true),
            ..Default::default()
        },
    );
    let host = rt
        .block_on(DriverHost::start_with(
            granted,
            HostServices::default(),
            vec![source],
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    let w = driver(&host, "watcher");
    let st = capi_state();
    let snapshot = watcher_snapshot(&st);
    let ctx = CallContext::admin().at(derive_time(&st));
    match rt.block_on(w.derive_status(&ctx, &st, &snapshot)) {
        Ok(a) => assert_eq!(
            a.update.cluster.and_then(|c| c.status),
            Some(Status::CreateComplete),
            "derive-status"
        ),
        Err(e) => panic!("derive-status: {e}"),
    }
    let (objects, bytes) = snapshot_size(&snapshot);
    let name = format!(
        "derive-status, snapshot of {objects} objects ({} KB)",
        bytes / 1000
    );
    bench_derive(c, &rt, &name, &w, &st, &snapshot);
}

/// derive-status of the built-in Cluster API driver (`k8s_cluster_api`)
/// over the same cluster's objects under its six selectors: the driver
/// parses every object and applies its status rules, and its answer is
/// the create's completion.
fn derive_capi(c: &mut Criterion) {
    let rt = runtime();
    let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let host = rt.block_on(start(cache.path()));
    let capi = driver(&host, "k8s_cluster_api");
    let st = capi_state();
    let ctx = CallContext::admin().at(derive_time(&st));
    // The state is one the driver accepts at create, and the snapshot
    // holds what its watches declare, as the reconciler would.
    if let Err(e) = rt.block_on(capi.validate_create(&ctx, &st)) {
        panic!("validate-create: {e}");
    }
    let selectors = rt
        .block_on(capi.watches(&ctx, &st))
        .unwrap_or_else(|e| panic!("watches: {e}"));
    assert_eq!(selectors.len(), 6, "watches: {selectors:?}");
    for s in &selectors {
        if let Err(e) = capi.may_watch(s) {
            panic!("watches: {s:?}: {e}");
        }
    }
    let snapshot = capi_snapshot(&st, &selectors);
    match rt.block_on(capi.derive_status(&ctx, &st, &snapshot)) {
        Ok(a) => {
            let cluster = a.update.cluster.as_ref();
            assert_eq!(
                cluster.and_then(|c| c.status),
                Some(Status::CreateComplete),
                "derive-status: {a:?}"
            );
            assert_eq!(
                cluster.and_then(|c| c.health_status.as_deref()),
                Some("HEALTHY"),
                "derive-status: {a:?}"
            );
            assert_eq!(
                cluster.and_then(|c| c.api_address.as_deref()),
                Some("https://10.0.0.50:6443"),
                "derive-status: {a:?}"
            );
            assert_eq!(
                a.update.nodegroups.len(),
                st.nodegroups.len(),
                "derive-status: {a:?}"
            );
            for ng in &a.update.nodegroups {
                assert_eq!(ng.status, Some(Status::CreateComplete), "{ng:?}");
                let addresses = ng.node_addresses.as_ref().map_or(0, Vec::len);
                assert_eq!(Some(addresses as i32), ng.node_count, "{ng:?}");
            }
            assert!(a.effects.is_empty(), "derive-status: {a:?}");
        }
        Err(e) => panic!("derive-status: {e}"),
    }
    // The share of a call on a fresh instance of this (larger) component,
    // beside the derivation's.
    cpu_per_call("k8s_cluster_api trivial call on a fresh instance", || {
        let _ = rt.block_on(capi.validate_master_size(3));
    });
    let (objects, bytes) = snapshot_size(&snapshot);
    let name = format!(
        "k8s_cluster_api derive-status, snapshot of {objects} objects ({} KB)",
        bytes / 1000
    );
    bench_derive(c, &rt, &name, &capi, &st, &snapshot);
}

criterion_group!(benches, calls, derive, derive_capi);
criterion_main!(benches);
