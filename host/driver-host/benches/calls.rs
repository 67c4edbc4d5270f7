//! Driver call costs: a trivial call on a fresh instance, a create-cluster
//! and a status derivation (poll-status) of the fake driver with a
//! realistic cluster state, and a host start-up
//! to the first answered call with a warm precompiled cache. Criterion's
//! median is the p50.

use chrono::NaiveDate;
use criterion::{Criterion, criterion_group, criterion_main};
use driver_host::{
    CallContext, ClusterState, Credentials, DriverHost, DriverSettings, HostServices,
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
            let status = u.cluster.as_ref().and_then(|c| c.status);
            assert_eq!(status, Some(Status::CreateComplete), "poll-status: {u:?}");
            assert!(!u.nodegroups.is_empty(), "poll-status: {u:?}");
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
                Ok(u) => u.changed(),
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
                        .map(|u| u.changed())
                })
            })
        },
    );
    group.finish();
}

criterion_group!(benches, calls);
criterion_main!(benches);
