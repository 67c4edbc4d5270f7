//! The sandbox cases, each with a purpose-built component
//! (guest/components): every one gets its clear error within its deadline
//! while the host keeps serving the fake driver's traffic.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use driver_host::access::memory::kube::ApiServer;
use driver_host::access::memory::{MemoryOpenStack, MemorySecrets};
use driver_host::{
    BreakerSettings, CallContext, CallError, ClusterCas, DriverConfig, DriverHost, DriverSettings,
    FaultKind, HostServices, KeyPair, Origin, PackageSource, Resize, Upgrade,
};
use magnum_domain::models::NodeGroup;

use crate::common::*;

fn sandbox_bytes() -> Arc<[u8]> {
    match std::fs::read(driver_host::test_components::SANDBOX) {
        Ok(b) => Arc::from(b),
        Err(e) => panic!("the sandbox component was not built: {e}"),
    }
}

/// Everything the sandbox component imports.
const ALL_CAPS: &str = r#"
[capabilities]
kube = [{ api-version = "v1", kinds = ["ConfigMap"], verbs = ["get", "apply"], namespaces = ["magnum-system"] }]
openstack = ["resolve"]
cluster-secrets = true
"#;

/// The manifest of a driver `name` at `version`, one entry point of the
/// same name serving Kubernetes on `os` VMs, with the sections of `rest`.
fn manifest(name: &str, version: &str, os: &str, rest: &str) -> String {
    format!(
        r#"manifest-version = 1
[driver]
name = "{name}"
version = "{version}"
wit = "^1.0"
[[entry-points]]
name = "{name}"
provides = [{{ server-type = "vm", os = "{os}", coe = "kubernetes" }}]
{rest}"#
    )
}

/// A package of the sandbox component in `mode`, named `sb-<mode>`.
fn sandbox(mode: &str, limits: &str, capabilities: &str) -> PackageSource {
    let name = format!("sb-{mode}");
    let rest = format!(
        r#"[options]
mode = "{mode}"
entry_point = "{name}"
[limits]
{limits}
{capabilities}
"#
    );
    let manifest = manifest(&name, "0.1.0", "sandbox", &rest);
    PackageSource {
        manifest,
        component: sandbox_bytes(),
        origin: Origin::Path(format!("guest/components/sandbox/{mode}").into()),
    }
}

/// Settings that grant every sandbox package what it requests.
fn granting(names: &[&str]) -> DriverSettings {
    let mut s = settings();
    for n in names {
        s.drivers.insert(
            n.to_string(),
            DriverConfig {
                grant_requested: Some(true),
                ..Default::default()
            },
        );
    }
    s.breaker = BreakerSettings {
        threshold: 1000,
        ..Default::default()
    };
    s
}

async fn host(names: &[&str], sources: Vec<PackageSource>, services: HostServices) -> DriverHost {
    let mut all = driver_host::builtin_sources();
    all.extend(sources);
    host_with(granting(names), services, all).await
}

fn fault(r: Result<impl std::fmt::Debug, CallError>) -> driver_host::DriverFault {
    match r {
        Err(CallError::Fault(f)) => f,
        other => panic!("{other:?}, want a driver fault"),
    }
}

/// Calls the fake driver in a loop until `stop`, counting answers; any
/// error fails the test.
fn traffic(
    host: Arc<DriverHost>,
    stop: Arc<AtomicBool>,
    count: Arc<AtomicU64>,
) -> tokio::task::JoinHandle<Result<(), String>> {
    tokio::spawn(async move {
        let d = host
            .registry()
            .lookup("fake")
            .map_err(|e| e.to_string())?
            .clone();
        let mut st = state(CLUSTER_UUID, MASTER_UUID, WORKER_UUID, None);
        while !stop.load(Ordering::Relaxed) {
            let upd = d
                .poll_status(&CallContext::admin(), &st)
                .await
                .map_err(|e| e.to_string())?;
            apply(&mut st, &upd.update);
            d.validate_master_size(3).await.map_err(|e| e.to_string())?;
            count.fetch_add(1, Ordering::Relaxed);
            tokio::task::yield_now().await;
        }
        Ok(())
    })
}

/// Waits until the traffic has answered more than `n` requests.
async fn answered_more_than(count: &AtomicU64, n: u64) {
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        while count.load(Ordering::Relaxed) <= n {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the host stopped answering the fake driver");
}

/// Runs `case` while the fake driver serves traffic: the traffic answers
/// before, during (long cases) and after it, without an error. Returns how
/// many requests were answered while the case ran.
async fn while_serving<F, Fut>(host: Arc<DriverHost>, case: F) -> u64
where
    F: FnOnce(Arc<DriverHost>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let t = traffic(host.clone(), stop.clone(), count.clone());
    answered_more_than(&count, 0).await;
    let before = count.load(Ordering::Relaxed);
    case(host).await;
    let during = count.load(Ordering::Relaxed) - before;
    answered_more_than(&count, before + during).await;
    stop.store(true, Ordering::Relaxed);
    match t.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("traffic failed during the case: {e}"),
        Err(e) => panic!("traffic task: {e}"),
    }
    during
}

fn st() -> driver_host::ClusterState {
    state(CLUSTER_UUID, MASTER_UUID, WORKER_UUID, None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infinite_loop_is_stopped_at_its_deadline() {
    let h = Arc::new(
        host(
            &["sb-loop"],
            vec![sandbox("loop", "call-timeout-seconds = 1", ALL_CAPS)],
            HostServices::default(),
        )
        .await,
    );
    let during = while_serving(h, |h| async move {
        let d = h
            .registry()
            .lookup("sb-loop")
            .cloned()
            .unwrap_or_else(|e| panic!("{e}"));
        let started = Instant::now();
        let f = fault(d.create_cluster(&user(), &st(), 0).await);
        let took = started.elapsed();
        assert_eq!(f.kind, FaultKind::Timeout, "{f}");
        assert_eq!(
            f.to_string(),
            "driver sb-loop failed in create-cluster: stopped at its deadline of 1 s"
        );
        assert!(took >= Duration::from_secs(1), "{took:?}");
        assert!(
            took < Duration::from_secs(2),
            "stopped after {took:?}, more than the deadline + 1 s"
        );
    })
    .await;
    assert!(
        during > 0,
        "no request was answered while the driver looped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_gib_allocation_is_refused() {
    let h = Arc::new(
        host(
            &["sb-alloc"],
            vec![sandbox("alloc", "memory-mb = 64", ALL_CAPS)],
            HostServices::default(),
        )
        .await,
    );
    while_serving(h, |h| async move {
        let d = h
            .registry()
            .lookup("sb-alloc")
            .cloned()
            .unwrap_or_else(|e| panic!("{e}"));
        let f = fault(d.create_cluster(&user(), &st(), 0).await);
        assert_eq!(f.kind, FaultKind::Trap, "{f}");
        assert!(
            f.message
                .contains("memory allocation of 1073741824 bytes failed"),
            "{f}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_every_export_is_a_fault() {
    let h = Arc::new(
        host(
            &["sb-panic"],
            vec![sandbox("panic", "", ALL_CAPS)],
            HostServices::default(),
        )
        .await,
    );
    while_serving(h, |h| async move {
        let d = h
            .registry()
            .lookup("sb-panic")
            .cloned()
            .unwrap_or_else(|e| panic!("{e}"));
        let (c, s) = (user(), st());
        let ng = NodeGroup::default();
        let resize = Resize::default();
        let upgrade = Upgrade::default();
        let faults = vec![
            fault(d.validate_master_size(1).await),
            fault(d.validate_master_resize(1).await),
            fault(d.validate_create(&c, &s).await),
            fault(d.validate_upgrade(&c, &s, &s.template).await),
            fault(d.can_rotate_ca(&c, &s).await),
            fault(d.create_cluster(&c, &s, 0).await),
            fault(d.update_cluster(&c, &s).await),
            fault(d.delete_cluster(&c, &s).await),
            fault(d.resize_cluster(&c, &s, &resize).await),
            fault(d.upgrade_cluster(&c, &s, &upgrade).await),
            fault(d.create_nodegroup(&c, &s, &ng).await),
            fault(d.update_nodegroup(&c, &s, &ng).await),
            fault(d.delete_nodegroup(&c, &s, &ng).await),
            fault(d.rotate_ca(&c, &s).await),
            fault(d.rotate_credential(&c, &s).await),
            fault(d.watches(&c, &s).await),
            fault(d.derive_status(&c, &s, &[]).await),
            fault(d.poll_status(&c, &s).await),
        ];
        assert_eq!(faults.len(), 18);
        for f in &faults {
            assert_eq!(f.kind, FaultKind::Trap, "{f}");
            assert!(
                f.message.contains("sandbox component: panic on purpose"),
                "{f}"
            );
        }
        assert_eq!(d.health().faults_total, 18);
    })
    .await;
}

#[tokio::test]
async fn a_panic_in_describe_refuses_the_driver_at_load() {
    let h = host(
        &["sb-panic-describe"],
        vec![sandbox("panic-describe", "", ALL_CAPS)],
        HostServices::default(),
    )
    .await;
    assert!(h.registry().lookup("sb-panic-describe").is_err());
    let r = &h.refused()[0];
    assert_eq!(r.name, "sb-panic-describe");
    assert!(r.reason.starts_with("driver sb-panic-describe: describe failed: driver sb-panic-describe failed in describe: trapped"), "{}", r.reason);
    assert!(r.reason.contains("panic in describe"), "{}", r.reason);
    // The host still serves the others.
    assert!(h.registry().lookup("fake").is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_larger_than_the_cap_is_refused() {
    let h = Arc::new(
        host(
            &["sb-big"],
            vec![sandbox("big", "output-kb = 64", ALL_CAPS)],
            HostServices::default(),
        )
        .await,
    );
    while_serving(h, |h| async move {
        let d = h
            .registry()
            .lookup("sb-big")
            .cloned()
            .unwrap_or_else(|e| panic!("{e}"));
        let f = fault(d.poll_status(&CallContext::admin(), &st()).await);
        assert_eq!(f.kind, FaultKind::Oversized, "{f}");
        assert_eq!(
            f.message,
            "answered more than its output limit of 65536 bytes"
        );
    })
    .await;
}

#[tokio::test]
async fn an_import_of_an_ungranted_capability_is_refused_at_load() {
    // The component imports openstack and cluster-secrets; this manifest
    // asks only for kube.
    let caps = r#"
[capabilities]
kube = [{ api-version = "v1", kinds = ["ConfigMap"], verbs = ["apply"], namespaces = ["magnum-system"] }]
"#;
    let h = host(
        &["sb-ok"],
        vec![sandbox("ok", "", caps)],
        HostServices::default(),
    )
    .await;
    assert_eq!(
        h.refused()[0].reason,
        "driver sb-ok imports openkeel:magnum-driver/cluster-secrets@1.0.0 but is not granted cluster-secrets \
         (request it in driver.toml [capabilities] and grant it in [driver:sb-ok])"
    );
}

#[tokio::test]
async fn a_request_beyond_the_operator_grant_is_refused_at_load() {
    // A driver from drivers_path gets only what [driver:<name>] grants.
    let mut all = driver_host::builtin_sources();
    all.push(sandbox("ok", "", ALL_CAPS));
    let h = host_with(settings(), HostServices::default(), all).await;
    assert_eq!(
        h.refused()[0].reason,
        "driver sb-ok asks for kube get of v1/ConfigMap in namespace magnum-system, which is not granted \
         (grant it in [driver:sb-ok] of magnum.conf)"
    );
    // An explicit grant that covers it loads it.
    let mut s = settings();
    s.drivers.insert(
        "sb-ok".into(),
        DriverConfig::from_group([
            ("kube", "v1/*:*@magnum-system"),
            ("openstack", "resolve"),
            ("cluster_secrets", "true"),
        ])
        .unwrap_or_default(),
    );
    let mut all = driver_host::builtin_sources();
    all.push(sandbox("ok", "", ALL_CAPS));
    let h = host_with(s, HostServices::default(), all).await;
    assert!(h.refused().is_empty(), "{:?}", h.refused());
    assert!(h.registry().lookup("sb-ok").is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_apply_outside_the_granted_namespace_or_kind_is_denied() {
    let kube = Arc::new(ApiServer::new());
    let services = HostServices {
        kube: Some(kube.clone()),
        ..Default::default()
    };
    let h = Arc::new(host(&["sb-kube"], vec![sandbox("kube", "", ALL_CAPS)], services).await);
    let k = kube.clone();
    while_serving(h, move |h| async move {
        let d = h.registry().lookup("sb-kube").cloned().unwrap_or_else(|e| panic!("{e}"));
        let with = |pairs: &[(&str, &str)]| {
            let mut s = st();
            s.cluster.labels = labels(pairs);
            s
        };
        // Granted: stored, with the field manager of its driver.
        let upd = d.create_cluster(&user(), &with(&[("name", "cm1")]), 0).await;
        assert_eq!(upd.map(|u| u.deleted_nodegroups), Ok(vec!["cm1".to_string()]));
        assert_eq!(k.objects().len(), 1);
        let managers: Vec<String> = k.writes().into_iter().map(|(_, _, m)| m).collect();
        assert_eq!(managers, vec![driver_host::field_manager("sb-kube")]);
        // Another namespace.
        let r = d.create_cluster(&user(), &with(&[("namespace", "kube-system")]), 0).await;
        assert_eq!(
            r,
            Err(CallError::Failed(
                "AccessDenied(\"driver sb-kube is not granted kube apply of v1/ConfigMap in namespace kube-system\")".into()
            ))
        );
        // Another kind.
        let r = d.create_cluster(&user(), &with(&[("kind", "Secret")]), 0).await;
        match r {
            Err(CallError::Failed(t)) => assert!(t.contains("not granted kube apply of v1/Secret in namespace magnum-system"), "{t}"),
            other => panic!("{other:?}"),
        }
        // A body that disagrees with its envelope.
        let r = d.create_cluster(&user(), &with(&[("body_name", "other")]), 0).await;
        match r {
            Err(CallError::Failed(t)) => assert!(t.contains("Invalid") && t.contains("metadata.name (other) disagrees"), "{t}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(k.objects().len(), 1, "a refused object was stored");
        // The host remembers what it refused (the conformance kit reads it).
        assert_eq!(
            d.refused_imports(),
            [
                "kube apply of v1/ConfigMap in namespace kube-system",
                "kube apply of v1/Secret in namespace magnum-system",
            ]
        );
        // A refusal is the driver's answer, not a fault.
        assert_eq!(d.health().faults_total, 0);
    })
    .await;
}

#[tokio::test]
async fn openstack_and_secrets_act_for_the_caller() {
    let mut os = MemoryOpenStack::new();
    os.flavors.insert("m1.small".into(), "small".into());
    let os = Arc::new(os);
    let mut secrets = MemorySecrets::default();
    secrets.cas.insert(
        CLUSTER_UUID.into(),
        ClusterCas {
            kubernetes: KeyPair {
                cert_pem: "-----BEGIN CERTIFICATE-----k8s".into(),
                ..Default::default()
            },
            ..Default::default()
        },
    );
    let services = HostServices {
        openstack: Some(os.clone()),
        secrets: Some(Arc::new(secrets)),
        ..Default::default()
    };
    let h = host(
        &["sb-openstack", "sb-secrets"],
        vec![
            sandbox("openstack", "", ALL_CAPS),
            sandbox("secrets", "", ALL_CAPS),
        ],
        services,
    )
    .await;
    let d = h
        .registry()
        .lookup("sb-openstack")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut s = st();
    s.cluster.labels = labels(&[("flavor", "m1.small")]);
    assert_eq!(
        d.create_cluster(&user(), &s, 0)
            .await
            .map(|u| u.deleted_nodegroups),
        Ok(vec!["small".to_string()])
    );
    assert_eq!(
        d.poll_status(&CallContext::admin(), &s)
            .await
            .map(|u| u.update.deleted_nodegroups),
        Ok(vec!["small".to_string()])
    );
    assert_eq!(
        os.calls(),
        vec![
            ("flavor_name".to_string(), false),
            ("flavor_name".to_string(), true)
        ],
        "the user's call acts as the user, the poll as the service"
    );
    s.cluster.labels = labels(&[("flavor", "nope")]);
    match d.create_cluster(&user(), &s, 0).await {
        Err(CallError::Failed(t)) => assert!(t.contains("NotFound"), "{t}"),
        other => panic!("{other:?}"),
    }
    let d = h
        .registry()
        .lookup("sb-secrets")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        d.create_cluster(&user(), &st(), 0)
            .await
            .map(|u| u.deleted_nodegroups),
        Ok(vec!["-----BEGIN CERTIFICATE-----k8s".to_string()])
    );
}

#[tokio::test]
async fn unconfigured_services_are_unavailable() {
    let h = host(
        &["sb-kube"],
        vec![sandbox("kube", "", ALL_CAPS)],
        HostServices::default(),
    )
    .await;
    let d = h
        .registry()
        .lookup("sb-kube")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    match d.create_cluster(&user(), &st(), 0).await {
        Err(CallError::Failed(t)) => assert!(
            t.contains(
                "Unavailable(\"no Kubernetes management cluster is configured on this host\")"
            ),
            "{t}"
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_component_built_for_2_0_0_is_refused() {
    let bytes = std::fs::read(driver_host::test_components::V2).unwrap_or_default();
    let manifest = manifest("v2", "2.0.0", "ubuntu", "");
    let src = PackageSource {
        manifest: manifest.clone(),
        component: Arc::from(bytes),
        origin: Origin::Path("v2".into()),
    };
    let h = host(&[], vec![src.clone()], HostServices::default()).await;
    assert_eq!(
        h.refused()[0].reason,
        "driver v2 is built for openkeel:magnum-driver@2.0.0; this host supports >=1.0.0, <2.0.0 (implements 1.0.0 and 1.1.0)"
    );
    // Its manifest saying so is refused before anything is compiled.
    let src = PackageSource {
        manifest: manifest.replace("wit = \"^1.0\"", "wit = \"^2.0\""),
        ..src
    };
    let h = host(&[], vec![src], HostServices::default()).await;
    assert_eq!(
        h.refused()[0].reason,
        "driver v2 requires openkeel:magnum-driver ^2.0; this host supports >=1.0.0, <2.0.0 (implements 1.0.0 and 1.1.0)"
    );
}

#[tokio::test]
async fn a_corrupt_file_is_refused() {
    let mut bytes = driver_host::builtin_sources()[0].component.to_vec();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b = 0xff;
    }
    let mut fake = driver_host::builtin_sources().remove(0);
    fake.origin = Origin::Path("corrupt".into());
    let corrupt = PackageSource {
        component: Arc::from(bytes),
        ..fake.clone()
    };
    let h = host_with(settings(), HostServices::default(), vec![corrupt]).await;
    let reason = &h.refused()[0].reason;
    assert!(
        reason.starts_with("driver fake: the component is not valid WebAssembly: "),
        "{reason}"
    );
    assert!(!reason.contains('\n'));
    let garbage = PackageSource {
        component: Arc::from(&b"#!/bin/sh\necho not wasm\n"[..]),
        ..fake
    };
    let h = host_with(settings(), HostServices::default(), vec![garbage]).await;
    assert_eq!(
        h.refused()[0].reason,
        "driver fake: the file is not a WebAssembly component"
    );
}

#[tokio::test]
async fn a_manifest_with_an_unknown_field_is_refused() {
    let mut src = sandbox("ok", "", ALL_CAPS);
    src.manifest = src
        .manifest
        .replace("[options]", "flavour = \"vanilla\"\n[options]");
    let h = host(&["sb-ok"], vec![src], HostServices::default()).await;
    let r = &h.refused()[0];
    assert!(r.reason.starts_with("driver.toml: line "), "{}", r.reason);
    assert!(r.reason.contains("unknown field `flavour`"), "{}", r.reason);
}

#[tokio::test]
async fn repeated_faults_open_the_breaker() {
    let clock = driver_host::clock::ManualClock::new(start_time());
    let mut s = granting(&["sb-panic"]);
    s.breaker = BreakerSettings {
        threshold: 2,
        window: Duration::from_secs(60),
        cooldown: Duration::from_secs(30),
    };
    let services = HostServices {
        clock: clock.clone(),
        ..Default::default()
    };
    let h = host_with(s, services, vec![sandbox("panic", "", ALL_CAPS)]).await;
    let d = h
        .registry()
        .lookup("sb-panic")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fault(d.validate_master_size(1).await).kind, FaultKind::Trap);
    assert_eq!(fault(d.validate_master_size(1).await).kind, FaultKind::Trap);
    let f = fault(d.validate_master_size(1).await);
    assert_eq!(f.kind, FaultKind::BreakerOpen, "{f}");
    assert!(
        f.message
            .starts_with("the driver is shut off for 30 s more after repeated faults (last: "),
        "{f}"
    );
    assert!(d.health().open);
    // A refused call is not a new fault.
    assert_eq!(d.health().faults_total, 2);
    // After the cooldown one call probes the driver; it faults, and the
    // breaker opens again for twice as long.
    clock.advance(Duration::from_secs(31));
    assert_eq!(fault(d.validate_master_size(1).await).kind, FaultKind::Trap);
    let f = fault(d.validate_master_size(1).await);
    assert_eq!(f.kind, FaultKind::BreakerOpen, "{f}");
    assert!(
        f.message
            .starts_with("the driver is shut off for 60 s more"),
        "{f}"
    );
    assert_eq!(
        (d.health().opened_in_a_row, d.health().open_for_seconds),
        (2, 60)
    );
}

/// What a call observer was told: calls and faults, by function.
#[derive(Default)]
struct Seen(std::sync::Mutex<Vec<String>>);

impl driver_host::CallObserver for Seen {
    fn call(
        &self,
        driver: &str,
        function: &'static str,
        _: &str,
        _: Duration,
        fault: Option<FaultKind>,
    ) {
        let fault = fault.map_or("answered", FaultKind::as_str);
        self.0
            .lock()
            .unwrap()
            .push(format!("call {driver} {function} {fault}"));
    }

    fn fault(&self, driver: &str, function: &'static str, kind: FaultKind) {
        self.0
            .lock()
            .unwrap()
            .push(format!("fault {driver} {function} {}", kind.as_str()));
    }
}

#[tokio::test]
async fn the_call_observer_is_told_of_calls_faults_and_refusals() {
    let mut s = granting(&["sb-panic"]);
    s.breaker = BreakerSettings {
        threshold: 2,
        window: Duration::from_secs(60),
        cooldown: Duration::from_secs(30),
    };
    let h = host_with(
        s,
        HostServices::default(),
        vec![sandbox("panic", "", ALL_CAPS)],
    )
    .await;
    let seen = Arc::new(Seen::default());
    h.observe_calls(seen.clone());
    let d = h
        .registry()
        .lookup("sb-panic")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    let p = d.package().to_string();
    assert_eq!(h.package_health(), vec![(p.clone(), d.health())]);
    for _ in 0..3 {
        let _ = fault(d.validate_master_size(1).await);
    }
    let f = "validate-master-size";
    assert_eq!(
        *seen.0.lock().unwrap(),
        vec![
            format!("call {p} {f} trap"),
            format!("fault {p} {f} trap"),
            format!("call {p} {f} trap"),
            format!("fault {p} {f} trap"),
            // Refused by the open breaker: a fault, not a call.
            format!("fault {p} {f} breaker_open"),
        ]
    );
    let health = h.package_health();
    assert_eq!(health.len(), 1);
    assert!(health[0].1.open, "{health:?}");
}

#[tokio::test]
async fn guest_output_and_logs_reach_tracing_with_the_driver_name() {
    let buf = captured_log();
    let h = host(
        &["sb-log"],
        vec![sandbox("log", "", ALL_CAPS)],
        HostServices::default(),
    )
    .await;
    let d = h
        .registry()
        .lookup("sb-log")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(d.create_cluster(&user(), &st(), 0).await.is_ok());
    let out = String::from_utf8_lossy(
        &buf.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
    .to_string();
    for want in [
        "sandbox component: hello",
        "fields=\"k=\\\"v\\\"\"",
        "sandbox component: stdout line",
        "sandbox component: stderr line",
        "driver=\"sb-log\"",
        "request_id=\"req-1\"",
        // The SDK's bridges: the log crate, and tracing with its span.
        "sandbox component: through log",
        "sandbox component: through tracing",
        r#"k2=\"v2\""#,
        r#"span=\"phase\""#,
        r#"step=\"one\""#,
    ] {
        assert!(out.contains(want), "{want:?} not in the log:\n{out}");
    }
}

#[tokio::test]
async fn a_panic_is_logged_at_error_before_the_trap() {
    let buf = captured_log();
    let h = host(
        &["sb-panic"],
        vec![sandbox("panic", "", ALL_CAPS)],
        HostServices::default(),
    )
    .await;
    let d = h
        .registry()
        .lookup("sb-panic")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    let f = fault(d.create_cluster(&user(), &st(), 0).await);
    assert_eq!(f.kind, FaultKind::Trap, "{f}");
    let out = String::from_utf8_lossy(
        &buf.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
    .to_string();
    let line = out.lines().find(|l| {
        l.contains("panicked at")
            && l.contains("sandbox component: panic on purpose")
            && l.contains("driver=\"sb-panic\"")
            && l.contains("ERROR")
    });
    // The guest's stderr reaches the log at WARN: an ERROR line came
    // through the log import, before the trap.
    assert!(line.is_some(), "the panic was not logged at ERROR:\n{out}");
}

/// Every event of this test binary, as the fmt subscriber writes them.
#[derive(Clone, Default)]
struct Buf(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The log of the whole test binary, at INFO and above. One global
/// subscriber: a thread's own default would miss events emitted while
/// another test's thread had cached the host's callsites as disabled.
fn captured_log() -> Buf {
    static LOG: std::sync::OnceLock<Buf> = std::sync::OnceLock::new();
    LOG.get_or_init(|| {
        let buf = Buf::default();
        let writer = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .unwrap_or_else(|e| panic!("a global subscriber was already set: {e}"));
        buf
    })
    .clone()
}

#[tokio::test]
async fn what_a_call_logs_is_bounded_per_line_and_per_call() {
    let buf = captured_log();
    let mut s = granting(&["sb-log-flood", "sb-log-line"]);
    s.maxima.log_bytes = 8 << 10;
    s.maxima.log_lines = 10;
    let mut all = driver_host::builtin_sources();
    all.push(sandbox("log-flood", "", ALL_CAPS));
    let mut line = sandbox("log-line", "", ALL_CAPS);
    line.manifest = line
        .manifest
        .replace("[options]\n", "[options]\nbig_bytes = \"5000000\"\n");
    all.push(line);
    let h = host_with(s, HostServices::default(), all).await;
    let log = || {
        String::from_utf8_lossy(
            &buf.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
        .to_string()
    };
    let flood = h.registry().lookup("sb-log-flood").cloned();
    let flood = flood.unwrap_or_else(|e| panic!("{e}"));
    assert!(flood.create_cluster(&user(), &st(), 0).await.is_ok());
    let out = log();
    let lines = out.matches("sandbox component: flooding").count();
    assert_eq!(lines, 10, "{out}");
    assert!(
        out.contains("driver log beyond 8192 bytes or 10 lines a call dropped: 199990 lines"),
        "{out}"
    );
    let big = h.registry().lookup("sb-log-line").cloned();
    let big = big.unwrap_or_else(|e| panic!("{e}"));
    assert!(big.create_cluster(&user(), &st(), 0).await.is_ok());
    // Two lines of 5 MB (the log call with its field, and stdout), each cut
    // at 4 KiB, within the call's 8 KiB (the other tests log meanwhile:
    // only this driver's lines count).
    let out = log();
    let mine: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("driver=\"sb-log-line\""))
        .collect();
    let bytes: usize = mine.iter().map(|l| l.len()).sum();
    assert!(bytes < 12 << 10, "the driver's lines take {bytes} bytes");
    assert!(
        mine.iter().any(|l| l.contains("bytes cut)")),
        "no cut line: {mine:?}"
    );
}

#[tokio::test]
async fn the_operators_maxima_cap_what_a_manifest_asks() {
    let mut s = granting(&["sb-loop"]);
    s.maxima.call_timeout = Duration::from_secs(1);
    let mut all = driver_host::builtin_sources();
    all.push(sandbox(
        "loop",
        "call-timeout-seconds = 4000000000",
        ALL_CAPS,
    ));
    let h = host_with(s, HostServices::default(), all).await;
    let d = h
        .registry()
        .lookup("sb-loop")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.limits().call_timeout, Duration::from_secs(1));
    let started = Instant::now();
    let f = fault(d.validate_master_size(1).await);
    assert_eq!(f.kind, FaultKind::Timeout, "{f}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
