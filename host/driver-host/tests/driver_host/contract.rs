//! The contract's versions: the table of functions against the WIT files
//! and every hand-written list of them, and a 1.0 component (the fake
//! driver, built by the SDK for 1.0.0) beside a 1.1 one (the watcher test
//! component) in one host.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use driver_host::access::memory::MemoryCloud;
use driver_host::access::memory::kube::ApiServer;
use driver_host::contract::{self, Contract, FUNCTIONS};
use driver_host::{
    CallContext, CallError, CloudInfo, HostServices, KubeObject, Observation, Origin,
    PackageSource, SUPPORTED_WIT, Selector,
};
use magnum_domain::Status;

use crate::common::{
    CLUSTER_UUID, MASTER_UUID, WORKER_UUID, host_with, labels, settings, state, user,
};

/// The host's settings with the watcher granted what it requests.
fn granted() -> driver_host::DriverSettings {
    let mut s = settings();
    s.drivers.insert(
        "watcher".into(),
        driver_host::DriverConfig {
            grant_requested: Some(true),
            ..Default::default()
        },
    );
    s
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The functions each exported interface of a WIT package declares, in
/// the files' order: (interface, function).
fn wit_functions(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for iface in contract::EXPORTED_INTERFACES {
        let path = dir.join(format!("{iface}.wit"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            text.contains(&format!("interface {iface} {{")),
            "{} does not declare the interface {iface}",
            path.display()
        );
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with("///") {
                continue;
            }
            if let Some((name, rest)) = line.split_once(':')
                && rest.trim_start().starts_with("func(")
            {
                out.push((iface.to_string(), name.trim().to_string()));
            }
        }
    }
    out
}

/// `create-cluster` as Rust and Python spell it.
fn snake(name: &str) -> String {
    name.replace('-', "_")
}

#[test]
fn the_table_of_functions_is_the_wit_files() {
    // Every implemented version has its WIT files, and no other is there.
    let mut dirs: Vec<String> = std::fs::read_dir(root().join("wit"))
        .unwrap_or_else(|e| panic!("wit/: {e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("magnum-driver@"))
        .collect();
    dirs.sort();
    let implemented: Vec<String> = SUPPORTED_WIT
        .iter()
        .map(|v| format!("magnum-driver@{v}"))
        .collect();
    assert_eq!(dirs, implemented);
    for (c, v) in Contract::ALL.iter().zip(SUPPORTED_WIT.iter()) {
        assert_eq!(c.version(), *v);
        let declared = wit_functions(&root().join(format!("wit/magnum-driver@{v}")));
        let table: Vec<(String, String)> = contract::functions(*c)
            .map(|f| (f.interface.to_string(), f.name.to_string()))
            .collect();
        assert_eq!(declared, table, "the table of {v} is not its WIT files");
    }
}

/// The `openstack` functions of the newest WIT with the grant group their
/// doc comment names ("Grant `resolve`."), in the file's order.
fn wit_openstack_grants() -> Vec<(String, String)> {
    let v = SUPPORTED_WIT
        .last()
        .cloned()
        .unwrap_or_else(|| panic!("no contract version"));
    let text = read(&format!("wit/magnum-driver@{v}/openstack.wit"));
    let mut grants = Vec::new();
    let mut group: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some((_, rest)) = line.split_once("Grant `") {
            group = rest.split_once('`').map(|(g, _)| g.to_owned());
        } else if let Some((name, _)) = line.split_once(": func(") {
            let g = group
                .take()
                .unwrap_or_else(|| panic!("{name} names no grant"));
            grants.push((name.trim().to_owned(), g));
        }
    }
    grants
}

/// Adding an `openstack` import is its WIT declaration (with its grant) and
/// its handler: the handler checks the grant the WIT names, the group is
/// one the host's grant table knows, and the Python SDK's test harness
/// gates the function by the same group.
#[test]
fn every_openstack_import_checks_the_grant_its_wit_names() {
    let declared = wit_openstack_grants();
    assert!(declared.len() >= 13, "{declared:?}");
    let imports = read("host/driver-host/src/imports.rs");
    let python = read("sdk/python/openkeel_magnum_driver_testing/__init__.py");
    let mut wrong = Vec::new();
    for (name, group) in &declared {
        if !driver_host::capabilities::OPENSTACK_CALLS.contains(&group.as_str()) {
            wrong.push(format!("{name}: grant {group} is not in OPENSTACK_CALLS"));
        }
        let check = format!("check_openstack(\"{group}\", \"{name}\")");
        if !imports.contains(&check) {
            wrong.push(format!("{name}: imports.rs has no {check}"));
        }
        let python_group = format!("\"{name}\": \"{group}\"");
        if !python.contains(&python_group) {
            wrong.push(format!("{name}: _OPENSTACK_GROUPS has no {python_group}"));
        }
    }
    let checks = imports.matches("self.check_openstack(").count();
    assert_eq!(
        checks,
        declared.len(),
        "imports.rs checks a function the WIT does not declare"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// How a place spells a function of the contract.
type Spelling = fn(&str) -> String;

/// Functions a place does not list, and why.
const NOT_LISTED: &[(&str, &str, &str)] = &[
    (
        "host/driver-host/src/driver.rs",
        "describe",
        "called once, at load, by the package",
    ),
    (
        "sdk/testkit/src/conformance.rs",
        "describe",
        "checked by describe-matches-manifest",
    ),
];

/// Every place that names the contract's functions by hand names each of
/// them: the host's calls, the Rust SDK's defaults and glue, and the
/// conformance kit's sweep. The host's table and requests and the Python
/// SDK's exports are read from the WIT.
#[test]
fn every_list_of_the_functions_names_each_of_them() {
    let places: &[(&str, Spelling)] = &[
        ("host/driver-host/src/driver.rs", |f| {
            format!("pub async fn {}(", snake(f))
        }),
        ("guest/sdk/src/lib.rs", |f| format!("fn {}(", snake(f))),
        ("sdk/testkit/src/conformance.rs", |f| format!("\"{f}\"")),
    ];
    let mut missing = Vec::new();
    for (path, spelled) in places {
        let text = read(path);
        for f in FUNCTIONS {
            if NOT_LISTED.iter().any(|(p, n, _)| p == path && *n == f.name) {
                continue;
            }
            let want = spelled(f.name);
            if !text.contains(&want) {
                missing.push(format!(
                    "{path}: {want} ({} since {})",
                    f.name,
                    f.since.as_str()
                ));
            }
        }
    }
    assert!(missing.is_empty(), "missing:\n{}", missing.join("\n"));
}

fn watcher() -> PackageSource {
    let bytes = std::fs::read(driver_host::test_components::WATCHER)
        .unwrap_or_else(|e| panic!("the watcher component was not built: {e}"));
    PackageSource {
        manifest: driver_host::test_components::WATCHER_MANIFEST.to_string(),
        component: Arc::from(bytes),
        origin: Origin::Path("watcher".into()),
    }
}

fn cloud(ca: Option<&str>) -> CloudInfo {
    CloudInfo {
        keystone_url: "https://keystone.test:5000/v3".into(),
        region: Some("RegionOne".into()),
        endpoint_interface: "internal".into(),
        ca_bundle: ca.map(str::to_string),
        verify: true,
        cluster_ca_bundle: None,
        cluster_verify_ca: true,
    }
}

fn data(o: &KubeObject) -> BTreeMap<String, String> {
    let v: serde_json::Value = serde_json::from_str(&o.json).unwrap_or_default();
    v.get("data")
        .and_then(|d| d.as_object())
        .map(|d| {
            d.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn config_map(uuid: &str, data: &[(&str, &str)]) -> KubeObject {
    let name = format!("watch-{uuid}");
    let d: serde_json::Map<String, serde_json::Value> = data
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect();
    let body = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "magnum-system",
                     "labels": {"okm.test/cluster": uuid}},
        "data": d,
    });
    KubeObject {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some("magnum-system".into()),
        name,
        json: body.to_string(),
    }
}

#[tokio::test]
async fn a_1_0_and_a_1_1_component_serve_side_by_side() {
    let kube = Arc::new(ApiServer::new());
    let clouds = Arc::new(MemoryCloud::new(cloud(None)));
    let services = HostServices {
        kube: Some(kube.clone()),
        cloud: Some(clouds.clone()),
        ..Default::default()
    };
    let mut sources = driver_host::builtin_sources();
    sources.push(watcher());
    let h = host_with(granted(), services, sources).await;
    assert!(h.refused().is_empty(), "{:?}", h.refused());
    let fake = h
        .registry()
        .lookup("fake")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    let w = h
        .registry()
        .lookup("watcher")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (fake.contract(), fake.wit_version().to_string()),
        (Contract::V1_0, "1.0.0".into())
    );
    assert_eq!(
        (w.contract(), w.wit_version().to_string()),
        (Contract::V1_1, "1.1.0".into())
    );

    // The 1.0 driver works as it always did; it has no nodegroup checks.
    let mut st = state(CLUSTER_UUID, MASTER_UUID, WORKER_UUID, None);
    let upd = fake.create_cluster(&user(), &st, 60).await;
    assert!(upd.is_ok_and(|u| u.cluster.is_some_and(|c| c.stack_id.is_some())));
    let ng = st.nodegroups[1].clone();
    assert_eq!(fake.validate_nodegroup(&user(), &st, &ng).await, Ok(()));

    // The 1.1 driver reads the cloud as configured now.
    st.cluster.uuid = "c-one".into();
    let upd = w.create_cluster(&user(), &st, 60).await;
    let stack = upd.map(|u| u.cluster.and_then(|c| c.stack_id));
    assert_eq!(stack, Ok(Some("watch-c-one".to_string())));
    let cm = |uuid: &str| {
        kube.objects()
            .into_iter()
            .find(|o| o.name == format!("watch-{uuid}"))
            .map(|o| data(&o))
            .unwrap_or_default()
    };
    assert_eq!(
        cm("c-one").get("keystone").map(String::as_str),
        Some("https://keystone.test:5000/v3")
    );
    assert_eq!(cm("c-one").get("ca").map(String::as_str), Some("none"));
    clouds.set(cloud(Some(
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    )));
    st.cluster.uuid = "c-two".into();
    assert!(w.create_cluster(&user(), &st, 60).await.is_ok());
    let ca = cm("c-two").get("ca").cloned().unwrap_or_default();
    assert!(
        ca.len() == 8 && ca != "none",
        "the changed CA did not reach the next call: {ca}"
    );

    // Its checks refuse a nodegroup before any row exists.
    let mut bad = ng.clone();
    bad.labels = labels(&[("refused", "yes")]);
    match w.validate_nodegroup(&user(), &st, &bad).await {
        Err(CallError::Client(m)) => assert_eq!((m.status, m.kind), (400, "Invalid")),
        other => panic!("not refused: {other:?}"),
    }

    // A create that fails after it wrote its object keeps the stack id.
    st.cluster.uuid = "c-three".into();
    st.cluster.labels = labels(&[("fail_after", "quota exceeded")]);
    match w.create_cluster(&user(), &st, 60).await {
        Err(CallError::FailedAfter { reason, update }) => {
            assert_eq!(reason, "quota exceeded");
            assert_eq!(
                update.cluster.and_then(|c| c.stack_id).as_deref(),
                Some("watch-c-three")
            );
        }
        other => panic!("not failed-after: {other:?}"),
    }
}

#[tokio::test]
async fn derive_status_reads_a_snapshot_at_the_calls_time() {
    let kube = Arc::new(ApiServer::new());
    let services = HostServices {
        kube: Some(kube.clone()),
        ..Default::default()
    };
    let h = host_with(granted(), services, vec![watcher()]).await;
    let w = h
        .registry()
        .lookup("watcher")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut st = state(CLUSTER_UUID, MASTER_UUID, WORKER_UUID, None);
    st.cluster.status = Some(Status::CreateInProgress);
    let admin = CallContext::admin();
    let selectors = w
        .watches(&admin, &st)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        selectors,
        [Selector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("magnum-system".into()),
            labels: [("okm.test/cluster".to_string(), CLUSTER_UUID.to_string())].into(),
        }]
    );
    let observe = |synced: bool, objects: Vec<KubeObject>| {
        vec![Observation {
            selector: selectors[0].clone(),
            served: true,
            synced,
            objects,
        }]
    };
    let done = config_map(CLUSTER_UUID, &[("status", "CREATE_COMPLETE")]);

    // A copy still filling says nothing, even with the object missing.
    let a = w.derive_status(&admin, &st, &observe(false, vec![])).await;
    assert_eq!(a.map(|a| a.update.changed()), Ok(false));

    // Synced: the object's status, with the effect the transition asks for.
    let a = w
        .derive_status(&admin, &st, &observe(true, vec![done.clone()]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        a.update.cluster.as_ref().and_then(|c| c.status),
        Some(Status::CreateComplete)
    );
    assert_eq!(a.update.nodegroups.len(), st.nodegroups.len());
    let names: Vec<&str> = a.effects.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["record"]);
    // The same rows, snapshot and time: the same answer.
    let again = w
        .derive_status(&admin, &st, &observe(true, vec![done]))
        .await;
    assert_eq!(again.as_ref().ok(), Some(&a));
    // The effects run with the driver's imports.
    assert_eq!(w.apply_effects(&admin, &st, &a.effects).await, Ok(()));
    let recorded = kube
        .objects()
        .into_iter()
        .find(|o| o.name == format!("watch-{CLUSTER_UUID}-effects"))
        .map(|o| data(&o));
    assert_eq!(
        recorded.and_then(|d| d.get("last").cloned()).as_deref(),
        Some("CREATE_COMPLETE")
    );

    // The deadline is judged by the call's time, not a clock of the
    // driver's: the same object fails the create only once `now` is past.
    let late = config_map(CLUSTER_UUID, &[("deadline", "1767323045000000")]);
    let at = |s: i64| {
        admin.clone().at(chrono::DateTime::from_timestamp(s, 0)
            .unwrap_or_default()
            .naive_utc())
    };
    let before = w
        .derive_status(&at(1_767_323_000), &st, &observe(true, vec![late.clone()]))
        .await;
    assert_eq!(before.map(|a| a.update.changed()), Ok(false));
    let after = w
        .derive_status(&at(1_767_323_100), &st, &observe(true, vec![late]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let cl = after.update.cluster.unwrap_or_default();
    assert_eq!(
        (cl.status, cl.status_reason.as_deref()),
        (Some(Status::CreateFailed), Some("the deadline passed"))
    );

    // Gone from a synced snapshot while deleting: complete, and forgotten.
    st.cluster.status = Some(Status::DeleteInProgress);
    let gone = w
        .derive_status(&admin, &st, &observe(true, vec![]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        gone.update.cluster.and_then(|c| c.status),
        Some(Status::DeleteComplete)
    );
    assert_eq!(
        gone.effects.first().map(|e| e.name.as_str()),
        Some("forget")
    );
}
