//! `status upgrade-check` as an operator runs it before an upgrade: each of
//! our checks fails, warns or succeeds where it should, with magnum-status's
//! exit codes (0, 1 for a warning, 2 for a failure), on a SQLite database
//! and, for the management cluster and its Lease, on the test
//! kube-apiserver with the Cluster API CRDs.

use std::path::Path;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};

use crate::harness::{Output, db_upgrade, driver_cache_conf, okm, service_env};
use crate::kube::capi_api_server;

/// The result and details of the check `name` in an upgrade-check table.
fn check(o: &Output, name: &str) -> (String, String) {
    let lines: Vec<&str> = o
        .stdout
        .lines()
        .map(|l| l.trim_matches(|c| c == '|' || c == ' '))
        .collect();
    let at = lines
        .iter()
        .position(|l| *l == format!("Check: {name}"))
        .unwrap_or_else(|| panic!("no check {name}:\n{}", o.stdout));
    let field = |i: usize, key: &str| {
        lines
            .get(at + i)
            .and_then(|l| l.strip_prefix(key))
            .unwrap_or_default()
            .to_owned()
    };
    // A long detail wraps over the following rows of its block.
    let mut details = field(2, "Details: ");
    for l in &lines[at + 3..] {
        if l.starts_with("+--") || l.starts_with("Check: ") || l.is_empty() {
            break;
        }
        details.push(' ');
        details.push_str(l);
    }
    (field(1, "Result: "), details)
}

/// A migrated SQLite database and a configuration with `extra` lines.
fn setup(dir: &Path, extra: &str) -> String {
    let conf = dir.join("magnum.conf");
    let text = format!(
        "[database]\nconnection = sqlite:///{}\n{extra}\n",
        dir.join("m.db").display()
    );
    std::fs::write(&conf, text).expect("write");
    db_upgrade(&conf);
    conf.display().to_string()
}

/// `status upgrade-check` with the suite's cache of compiled drivers.
fn upgrade_check(conf: &str) -> Output {
    let cache = driver_cache_conf().display().to_string();
    okm(&[
        "status",
        "upgrade-check",
        "--config-file",
        conf,
        "--config-file",
        &cache,
    ])
}

#[test]
fn drivers_refused_or_not_granted_and_no_management_cluster() {
    let Some(example) = service_env("OKM_EXAMPLE_DRIVER") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let drivers = dir.path().join("drivers");
    // A package whose manifest does not parse, and the example package,
    // whose ConfigMap access nobody granted.
    std::fs::create_dir_all(drivers.join("junk")).expect("mkdir");
    std::fs::write(drivers.join("junk/driver.toml"), "not = [a manifest").expect("write");
    let hello = drivers.join("hello");
    std::fs::create_dir_all(&hello).expect("mkdir");
    for f in std::fs::read_dir(&example).expect("example package") {
        let f = f.expect("entry").path();
        std::fs::copy(&f, hello.join(f.file_name().expect("name"))).expect("copy");
    }
    let conf = setup(
        dir.path(),
        &format!("[drivers]\ndrivers_path = {}\n", drivers.display()),
    );
    let o = upgrade_check(&conf);
    assert_eq!(o.code, 2, "{o:?}");
    let (result, details) = check(&o, "Driver Grants");
    assert_eq!(result, "Failure", "{o:?}");
    assert!(
        details.contains("driver hello asks for") && details.contains("not granted"),
        "{details}"
    );
    let (result, details) = check(&o, "Cluster Drivers");
    assert_eq!(result, "Warning", "{o:?}");
    assert!(
        details.contains("Refused driver packages") && !details.contains("hello"),
        "{details}"
    );
    // No reconciler ever ran on this database.
    let (result, details) = check(&o, "Reconciler Lease");
    assert_eq!(result, "Warning", "{o:?}");
    assert!(details.contains("database lease"), "{details}");
    // The harness hides any kubeconfig of the machine's.
    let (result, details) = check(&o, "Management Cluster");
    assert_eq!(result, "Warning", "{o:?}");
    assert!(details.contains("capi"), "{details}");

    // Granted, it loads: the grants check passes, and the worst left is a
    // warning (exit 1).
    let conf = setup(
        dir.path(),
        &format!(
            "[drivers]\ndrivers_path = {}\n[driver:hello]\ngrant_requested = true\n",
            drivers.display()
        ),
    );
    let o = upgrade_check(&conf);
    assert_eq!(check(&o, "Driver Grants").0, "Success", "{o:?}");
    assert_eq!(o.code, 1, "{o:?}");
}

#[test]
fn a_management_cluster_that_does_not_answer_is_a_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
        ),
    )
    .expect("write");
    let conf = setup(
        dir.path(),
        &format!("[capi]\nkubeconfig = {}\n", kubeconfig.display()),
    );
    let o = upgrade_check(&conf);
    assert_eq!(o.code, 2, "{o:?}");
    let (result, details) = check(&o, "Management Cluster");
    assert_eq!(result, "Failure", "{o:?}");
    assert!(details.contains("does not answer"), "{details}");
    assert_eq!(check(&o, "Reconciler Lease").0, "Failure", "{o:?}");
}

#[tokio::test]
async fn the_management_cluster_serves_the_drivers_kinds_and_someone_holds_the_lease() {
    let Some(env) = capi_api_server().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = setup(
        dir.path(),
        &format!(
            "[capi]\nkubeconfig = {}\n",
            env.server.kubeconfig_path().display()
        ),
    );
    let o = upgrade_check(&conf);
    let (result, details) = check(&o, "Management Cluster");
    assert_eq!(result, "Success", "{o:?}");
    assert!(
        details.contains("serves the") && details.contains("kinds the enabled drivers request"),
        "{details}"
    );
    // Nobody took the Lease yet.
    let (result, details) = check(&o, "Reconciler Lease");
    assert_eq!(result, "Warning", "{o:?}");
    assert!(
        details.contains("No reconciler holds the Lease magnum-system/"),
        "{details}"
    );
    assert_eq!(o.code, 1, "{o:?}");

    // A reconciler's fresh Lease.
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("magnum-system".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("create the namespace");
    let leases: Api<Lease> = Api::namespaced(env.client.clone(), "magnum-system");
    let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
        k8s_openapi::jiff::Timestamp::now(),
    );
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some("openkeel-magnum-reconciler".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some("reconciler-one".into()),
            lease_duration_seconds: Some(60),
            renew_time: Some(now),
            ..LeaseSpec::default()
        }),
    };
    leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("create the Lease");
    let o = upgrade_check(&conf);
    let (result, details) = check(&o, "Reconciler Lease");
    assert_eq!(result, "Success", "{o:?}");
    assert!(details.contains("held by reconciler-one"), "{details}");
    assert_eq!(o.code, 0, "{o:?}");

    // A CRD the Cluster API driver needs goes: a warning naming its kind.
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    crds.delete("machines.cluster.x-k8s.io", &DeleteParams::default())
        .await
        .expect("delete the Machine CRD");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let o = upgrade_check(&conf);
        let (result, details) = check(&o, "Management Cluster");
        if result == "Warning" {
            assert!(
                details.contains("does not serve cluster.x-k8s.io/v1beta2/Machine"),
                "{details}"
            );
            assert_eq!(o.code, 1, "{o:?}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still {result}: {o:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}
