//! Driver call costs: a trivial call on a fresh instance, a create-cluster
//! and a status derivation (poll-status) of the fake driver with a
//! realistic cluster state, a contract 1.1 `derive-status` over the
//! snapshot of a 3-master, 2-nodegroup cluster (13 objects, about 70 KB),
//! and a host start-up to the first answered call with a warm precompiled
//! cache. Criterion's median is the p50; the derivation's p50 and p99 over
//! 2,000 calls are printed too.

use chrono::NaiveDate;
use criterion::{Criterion, criterion_group, criterion_main};
use driver_host::{
    CallContext, ClusterState, Credentials, DriverHost, DriverSettings, HostServices, KubeObject,
    Observation, Origin, PackageSource, Selector,
};
use magnum_domain::Status;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};

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
    let host = rt
        .block_on(DriverHost::start(
            settings(cache.path()),
            HostServices::default(),
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(host.pooling(), "the pooling allocator is not in use");
    let fake = host
        .registry()
        .lookup("fake")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));

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
                    let h = DriverHost::start(settings(cache.path()), HostServices::default())
                        .await
                        .unwrap_or_else(|e| panic!("{e}"));
                    let d = h
                        .registry()
                        .lookup("fake")
                        .cloned()
                        .unwrap_or_else(|e| panic!("{e}"));
                    d.poll_status(&CallContext::admin(), &st)
                        .await
                        .map(|u| u.update.changed())
                })
            })
        },
    );
    group.finish();
}

/// One object of a Cluster API cluster's snapshot: its envelope, labels
/// and annotations as CAPI writes them, a spec and status with the
/// conditions a controller reports (19 of them), about 5.4 KB.
fn capi_object(kind: &str, name: &str, cluster: &str, data: Option<(&str, &str)>) -> KubeObject {
    let conditions: Vec<serde_json::Value> = (0..19)
        .map(|i| {
            serde_json::json!({
                "type": format!("Condition{i}Ready"),
                "status": "True",
                "severity": "",
                "reason": "AsExpected",
                "message": "the component is up and reconciled as its spec says",
                "lastTransitionTime": "2026-11-30T14:27:03Z",
                "observedGeneration": 4,
            })
        })
        .collect();
    let mut v = serde_json::json!({
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": "magnum-system",
            "uid": "6f1d2c3b-4a59-4e8d-9c7b-1a2b3c4d5e6f",
            "resourceVersion": "123456",
            "generation": 4,
            "creationTimestamp": "2026-11-30T14:27:03Z",
            "labels": {
                "okm.test/cluster": cluster,
                "cluster.x-k8s.io/cluster-name": "kube-abc12",
                "topology.cluster.x-k8s.io/owned": "",
                "cluster.x-k8s.io/deployment-name": "kube-abc12-default-worker",
            },
            "annotations": {
                "cluster.x-k8s.io/cloned-from-name": "magnum-v0-13-0-worker",
                "cluster.x-k8s.io/cloned-from-groupkind": "OpenStackMachineTemplate.infrastructure.cluster.x-k8s.io",
                "machine.cluster.x-k8s.io/certificates-expiry": "2027-11-30T14:27:03Z",
            },
            "ownerReferences": [{
                "apiVersion": "cluster.x-k8s.io/v1beta2",
                "kind": "MachineSet",
                "name": "kube-abc12-default-worker-7f9c8",
                "uid": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "spec": {
            "clusterName": "kube-abc12",
            "version": "v1.30.4",
            "providerID": "openstack:///4b7c9d2e-1f3a-4c5b-8d6e-7f8a9b0c1d2e",
            "bootstrap": {"dataSecretName": format!("{name}-bootstrap")},
            "infrastructureRef": {"kind": "OpenStackMachine", "name": name},
        },
        "status": {
            "phase": "Running",
            "nodeRef": {"kind": "Node", "name": name},
            "addresses": [
                {"type": "InternalIP", "address": "10.0.0.17"},
                {"type": "ExternalIP", "address": "172.24.4.88"},
            ],
            "conditions": conditions,
        },
    });
    if let Some((k, val)) = data {
        v["data"] = serde_json::json!({ k: val });
    }
    KubeObject {
        api_version: "v1".into(),
        kind: kind.into(),
        namespace: Some("magnum-system".into()),
        name: name.into(),
        json: v.to_string(),
    }
}

/// The snapshot of a 3-master, 2-nodegroup cluster: the cluster, its
/// infrastructure and control plane, three control-plane machines, two
/// machine deployments with two machines each, and the status object the
/// watcher test driver reads; 13 objects.
fn capi_snapshot(cluster: &str) -> Vec<Observation> {
    let mut objects = vec![
        capi_object("Cluster", "kube-abc12", cluster, None),
        capi_object("OpenStackCluster", "kube-abc12-x7k2p", cluster, None),
        capi_object("KubeadmControlPlane", "kube-abc12-cp", cluster, None),
    ];
    for i in 0..3 {
        objects.push(capi_object(
            "Machine",
            &format!("kube-abc12-cp-{i}"),
            cluster,
            None,
        ));
    }
    for md in ["default-worker", "gpu"] {
        objects.push(capi_object(
            "MachineDeployment",
            &format!("kube-abc12-{md}"),
            cluster,
            None,
        ));
        for i in 0..2 {
            objects.push(capi_object(
                "Machine",
                &format!("kube-abc12-{md}-{i}"),
                cluster,
                None,
            ));
        }
    }
    objects.push(capi_object(
        "ConfigMap",
        &format!("watch-{cluster}"),
        cluster,
        Some(("status", "CREATE_COMPLETE")),
    ));
    objects.sort_by(|a, b| a.name.cmp(&b.name));
    vec![Observation {
        selector: Selector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("magnum-system".into()),
            labels: vec![("okm.test/cluster".into(), cluster.into())],
        },
        served: true,
        synced: true,
        objects,
    }]
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
    let w = host
        .registry()
        .lookup("watcher")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    let st = realistic_state();
    let snapshot = capi_snapshot(&st.cluster.uuid);
    let bytes: usize = snapshot[0].objects.iter().map(|o| o.json.len()).sum();
    let ctx = CallContext::admin().at(st.cluster.created_at);
    match rt.block_on(w.derive_status(&ctx, &st, &snapshot)) {
        Ok(a) => assert_eq!(
            a.update.cluster.and_then(|c| c.status),
            Some(Status::CreateComplete),
            "derive-status"
        ),
        Err(e) => panic!("derive-status: {e}"),
    }
    let name = format!(
        "derive-status, snapshot of {} objects ({} KB)",
        snapshot[0].objects.len(),
        bytes / 1000
    );
    let (p50, p99) = percentiles(2000, || {
        let _ = rt.block_on(w.derive_status(&ctx, &st, &snapshot));
    });
    println!("{name}: p50 {p50:.0} µs, p99 {p99:.0} µs over 2000 calls, instantiation included");
    cpu_per_call(&name, || {
        let _ = rt.block_on(w.derive_status(&ctx, &st, &snapshot));
    });
    c.bench_function(&name, |b| {
        b.iter(
            || match rt.block_on(w.derive_status(&ctx, &st, &snapshot)) {
                Ok(a) => a,
                Err(e) => panic!("{e}"),
            },
        )
    });
}

criterion_group!(benches, calls, derive);
criterion_main!(benches);
