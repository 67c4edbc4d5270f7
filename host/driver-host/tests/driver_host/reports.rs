//! `driver list [--details]`, `driver inspect FILE`, `driver validate FILE`,
//! drivers_path and the precompiled cache.

use std::sync::Arc;
use std::time::Instant;

use driver_host::{CallContext, DriverConfig, DriverHost, HostServices};

use crate::common::*;

#[tokio::test]
async fn list_shows_the_embedded_drivers() {
    let h = DriverHost::start(settings(), HostServices::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let t = h.list_table(false);
    assert_eq!(
        t.header,
        vec!["Name", "Version", "WIT", "Source", "State", "Health"]
    );
    fn capi(name: &'static str) -> Vec<&'static str> {
        vec![name, "1.0.0", "1.1.0", "built-in", "enabled", "ok"]
    }
    assert_eq!(
        t.rows,
        vec![
            vec!["fake", "1.0.0", "1.0.0", "built-in", "enabled (beta)", "ok"],
            capi("k8s_cluster_api"),
            capi("k8s_cluster_api_debian"),
            capi("k8s_cluster_api_flatcar"),
            capi("k8s_cluster_api_rockylinux"),
            capi("k8s_cluster_api_ubuntu"),
            capi("k8s_cluster_api_ubuntu_focal"),
        ]
    );
    let names: Vec<&str> = t.rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, driver_host::BUILTIN_ENTRY_POINTS);
    let t = h.list_table(true);
    assert_eq!(
        t.header,
        vec![
            "Name",
            "Server_Type",
            "OS",
            "COE",
            "Version",
            "WIT",
            "Source",
            "SHA256",
            "State",
            "Granted",
            "Limits",
            "Health"
        ]
    );
    let fake: Vec<&Vec<String>> = t.rows.iter().filter(|r| r[0] == "fake").collect();
    assert_eq!(fake.len(), 8, "one row per provided cluster type");
    let oses: Vec<&str> = fake.iter().map(|r| r[2].as_str()).collect();
    assert_eq!(
        oses,
        vec![
            "centos",
            "debian",
            "fedora-atomic",
            "fedora-coreos",
            "flatcar",
            "rockylinux",
            "ubuntu",
            "ubuntu-focal"
        ]
    );
    let row = fake[0];
    assert_eq!(row[7].len(), 64, "sha256");
    assert_eq!(row[9], "none");
    assert_eq!(
        row[10],
        "memory 32 MiB, call 60 s, output 4096 KiB, log 64 KiB / 200 lines a call, state 64 KiB"
    );
    // The Cluster API driver: every entry point with the grants its
    // manifest requests.
    let capi: Vec<&Vec<String>> = t.rows.iter().filter(|r| r[0] != "fake").collect();
    assert_eq!(
        capi.len(),
        10,
        "five distros, by k8s_cluster_api and by their own"
    );
    for r in &capi {
        assert_eq!(r[8], "enabled", "{r:?}");
        for grant in [
            "kube",
            "ClusterClass",
            "openstack",
            "application-credentials",
            "cluster-secrets",
        ] {
            assert!(r[9].contains(grant), "{grant} missing from {:?}", r[9]);
        }
    }
    let rendered = t.render();
    assert!(rendered.starts_with("+-----------------"), "{rendered}");
}

#[tokio::test]
async fn list_marks_disabled_and_beta_drivers() {
    let mut s = settings();
    s.enabled_beta_drivers.clear();
    let h = host_with(s, HostServices::default(), driver_host::builtin_sources()).await;
    assert_eq!(h.list_rows(false)[0].state, "beta, not enabled");
    let mut s = settings();
    s.disabled_drivers = vec!["fake".into()];
    let h = host_with(s, HostServices::default(), driver_host::builtin_sources()).await;
    assert_eq!(h.list_rows(false)[0].state, "disabled");
    assert!(!h.registry().names().contains(&"fake"));
    assert!(h.registry().names().contains(&"k8s_cluster_api"));
}

fn write_package(dir: &std::path::Path, manifest_extra: &str) -> std::path::PathBuf {
    let pkg = dir.join("fake2");
    std::fs::create_dir_all(&pkg).unwrap_or_else(|e| panic!("{e}"));
    let m = driver_host::builtin_sources()[0]
        .manifest
        .replace("name = \"fake\"\nversion", "name = \"fake2\"\nversion")
        + manifest_extra;
    std::fs::write(pkg.join("driver.toml"), m).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        pkg.join("fake2.wasm"),
        &*driver_host::builtin_sources()[0].component,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    pkg
}

#[tokio::test]
async fn drivers_path_packages_are_loaded_or_refused() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // The same component as the built-in: its entry point clashes.
    write_package(dir.path(), "");
    let mut s = settings();
    s.drivers_path = vec![dir.path().to_path_buf()];
    let h = DriverHost::start(s, HostServices::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.refused().len(), 1);
    assert_eq!(
        h.refused()[0].reason,
        "driver fake2: entry point fake is already provided by another driver"
    );
    let rows = h.list_rows(false);
    assert_eq!(
        rows.last().map(|r| r.state.as_str()),
        Some("refused: driver fake2: entry point fake is already provided by another driver")
    );
}

#[tokio::test]
async fn inspect_and_validate_a_file() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let pkg = write_package(dir.path(), "");
    let h = host_with(settings(), HostServices::default(), vec![]).await;
    let r = h.inspect(&pkg.join("fake2.wasm")).await;
    assert_eq!(r.exit_code(), 0, "{}", r.render());
    let text = r.render();
    for want in [
        "driver: fake2 1.0.0",
        "requires: openkeel:magnum-driver ^1.0",
        "built for: openkeel:magnum-driver@1.0.0",
        "  openkeel:magnum-driver/lifecycle@1.0.0",
        "  openkeel:magnum-driver/state@1.0.0",
        "  fake (beta): (vm, centos, kubernetes)",
        "requests: none",
        "granted: none",
        "verdict: would be loaded",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    // The fake driver imports nothing it was not granted.
    let world = r.world.clone().unwrap_or_default();
    assert!(
        !world
            .imports
            .iter()
            .any(|i| i.contains("/kube@") || i.contains("/openstack@")),
        "{world:?}"
    );
    assert!(
        r.render_verdict()
            .ends_with("driver fake2 1.0.0 would be loaded by this host")
    );

    // With a host that already has the built-in fake, the entry point clashes.
    let h = host_with(
        settings(),
        HostServices::default(),
        driver_host::builtin_sources(),
    )
    .await;
    let r = h.validate(&pkg).await;
    assert_eq!(r.exit_code(), 1);
    assert_eq!(
        r.render_verdict(),
        format!(
            "{}: would be refused: driver fake2: entry point fake is already provided by driver fake",
            pkg.display()
        )
    );

    // A component without its manifest.
    let lone = dir.path().join("lone.wasm");
    std::fs::write(&lone, &*driver_host::builtin_sources()[0].component)
        .unwrap_or_else(|e| panic!("{e}"));
    let r = h.inspect(&lone).await;
    assert_eq!(r.exit_code(), 1);
    assert!(r.world.is_some(), "the world is shown without a manifest");
}

#[tokio::test]
async fn a_warm_cache_starts_fast() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut s = settings();
    s.precompiled_cache_dir = Some(dir.path().to_path_buf());
    drop(
        DriverHost::start(s.clone(), HostServices::default())
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let cached: Vec<_> = std::fs::read_dir(dir.path())
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert_eq!(
        cached.len(),
        2,
        "one precompiled component per built-in driver"
    );
    let started = Instant::now();
    let h = Arc::new(
        DriverHost::start(s, HostServices::default())
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let d = h
        .registry()
        .lookup("fake")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    let st = state(CLUSTER_UUID, MASTER_UUID, WORKER_UUID, None);
    assert!(d.poll_status(&CallContext::admin(), &st).await.is_ok());
    // Generous for a debug build on a shared machine; the benchmark
    // measures the release figure.
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

#[tokio::test]
async fn operator_options_override_the_manifest() {
    let clock = driver_host::clock::ManualClock::new(start_time());
    let h = fake_host(&clock, 7).await;
    let d = h
        .registry()
        .lookup("fake")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.package(), "fake");
    let mut s = settings();
    s.drivers.insert(
        "fake".into(),
        DriverConfig::from_group([("memory_mb", "48"), ("call_timeout", "5")]).unwrap_or_default(),
    );
    let h = host_with(s, HostServices::default(), driver_host::builtin_sources()).await;
    let d = h
        .registry()
        .lookup("fake")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        d.limits().summary(),
        "memory 48 MiB, call 5 s, output 4096 KiB, log 64 KiB / 200 lines a call, state 64 KiB"
    );
}
