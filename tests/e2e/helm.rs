//! The Helm chart `deploy/helm/openkeel-magnum`, rendered by a real helm
//! (`$OKM_HELM`, from `scripts/ci/helm.sh`) with its default values and
//! each values file of its `ci/` folder, and every rendered object applied
//! to a real kube-apiserver that authorizes with RBAC and serves the Cluster
//! API CRDs: first as a server-side-apply dry run, then for real. The
//! generated `magnum.conf` is read by the binary's `config check`. The
//! chart's Role is compared with what the embedded drivers' manifests
//! (`drivers/*/driver.toml`) request, and the service account's rights are
//! tried for real: what the drivers write is allowed in the management
//! namespace and refused elsewhere, the autoscaler's Role can be written,
//! and the Lease can be held. Last, the binary runs as the minimal values'
//! pods would: the hook's `db upgrade`, the `api` answering its probes'
//! path, and the `reconciler` taking the Lease as the release's service
//! account.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::Role;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::harness::{binary, driver_cache_conf, free_port, in_ci};
use crate::kube::{CapiApiServer, capi_api_server_with, install_crds};

/// The Kubernetes namespace of the drivers' objects (`managementNamespace`,
/// the only one the Cluster API driver's grants name).
const MANAGEMENT_NS: &str = "magnum-system";
/// The Lease's own namespace in `ci/ha-values.yaml`.
const HA_LEASE_NS: &str = "openkeel-magnum-lease";
const LEASE: &str = "openkeel-magnum-reconciler";
const FIELD_MANAGER: &str = "openkeel-magnum-chart-test";

/// One rendering: a release name (its namespace too) and its values file.
struct Rendering {
    release: &'static str,
    values: Option<&'static str>,
}

const RENDERINGS: [Rendering; 3] = [
    Rendering {
        release: "default",
        values: None,
    },
    Rendering {
        release: "ha",
        values: Some("ci/ha-values.yaml"),
    },
    Rendering {
        release: "minimal",
        values: Some("ci/minimal-values.yaml"),
    },
];

fn chart_dir() -> PathBuf {
    test_support::repo_root().join("deploy/helm/openkeel-magnum")
}

fn repo_dir() -> PathBuf {
    test_support::repo_root()
}

/// The helm binary `OKM_HELM` names, or `None` (skipped, with a message)
/// when it is unset; unset when `CI=true` is a failure.
fn helm() -> Option<PathBuf> {
    match std::env::var_os("OKM_HELM") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            assert!(!in_ci(), "OKM_HELM must be set when CI=true");
            eprintln!("skipped: OKM_HELM is not set; run: eval \"$(scripts/ci/helm.sh)\"");
            None
        }
    }
}

/// Runs helm with `args`; its standard output, a failure naming its
/// standard error otherwise.
fn run_helm(helm: &Path, args: &[&str]) -> String {
    let out = helm_output(helm, args);
    assert!(
        out.status.success(),
        "helm {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Runs helm with `args` in the test's own helm homes.
fn helm_output(helm: &Path, args: &[&str]) -> std::process::Output {
    Command::new(helm)
        .args(args)
        .env(
            "HELM_CACHE_HOME",
            std::env::temp_dir().join("okm-helm-test"),
        )
        .env(
            "HELM_CONFIG_HOME",
            std::env::temp_dir().join("okm-helm-test"),
        )
        .env("HELM_DATA_HOME", std::env::temp_dir().join("okm-helm-test"))
        .output()
        .expect("run helm")
}

#[test]
fn the_chart_prints_integers_as_such_and_refuses_secrets_in_its_config_map() {
    let Some(helm) = helm() else {
        return;
    };
    let chart = chart_dir();
    let chart = chart.to_str().expect("path");
    // Helm reads numbers as floats: a large one must not become 1.048576e+06.
    let text = run_helm(
        &helm,
        &[
            "template",
            "t",
            chart,
            "--set",
            "conf.oslo_middleware.max_request_body_size=1048576",
        ],
    );
    assert!(text.contains("max_request_body_size = 1048576\n"), "{text}");
    assert!(!text.contains("e+06"), "{text}");
    for secret in [
        "conf.database.connection=mysql+pymysql://magnum:pw@db/magnum",
        "conf.keystone_authtoken.password=pw",
        "conf.DEFAULT.transport_url=rabbit://u:pw@mq:5672/",
    ] {
        let out = helm_output(&helm, &["template", "t", chart, "--set", secret]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{secret} was rendered");
        assert!(
            err.contains("is a secret: give it through secrets.*"),
            "{secret}: {err}"
        );
    }
}

/// `helm template` of the chart for `r`: every object, in order.
fn render(helm: &Path, r: &Rendering) -> Vec<Value> {
    let chart = chart_dir();
    let chart = chart.to_str().expect("path");
    let mut args = vec!["template", r.release, chart, "--namespace", r.release];
    let values = r.values.map(|v| chart_dir().join(v));
    if let Some(v) = &values {
        args.extend(["--values", v.to_str().expect("path")]);
    }
    let text = run_helm(helm, &args);
    serde_norway::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).expect("rendered YAML"))
        .filter(|v| !v.is_null())
        .collect()
}

fn kind_name(o: &Value) -> String {
    format!(
        "{} {}/{}",
        o["kind"].as_str().unwrap_or("?"),
        o["metadata"]["namespace"].as_str().unwrap_or(""),
        o["metadata"]["name"].as_str().unwrap_or("?")
    )
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} rendered"))
}

/// One grant of a Role: (API group, resource, verb, resource name or "").
type Grant = (String, String, String, String);

fn grants(role: &Value) -> BTreeSet<Grant> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|s| s.as_str().expect("string").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = BTreeSet::new();
    for rule in role["rules"].as_array().expect("rules") {
        let names = strings(&rule["resourceNames"]);
        let names = if names.is_empty() {
            vec![String::new()]
        } else {
            names
        };
        for g in strings(&rule["apiGroups"]) {
            for r in strings(&rule["resources"]) {
                for v in strings(&rule["verbs"]) {
                    for n in &names {
                        out.insert((g.clone(), r.clone(), v.clone(), n.clone()));
                    }
                }
            }
        }
    }
    out
}

fn grant(g: &str, r: &str, v: &str, n: &str) -> Grant {
    (g.into(), r.into(), v.into(), n.into())
}

/// What the embedded drivers' manifests request in `namespace`, as
/// Kubernetes authorizes it: each kind's resource as the server's discovery
/// names it, `get` as get, `list` as list and watch (the reconciler
/// watches), `apply` as patch and create (a server-side apply that creates
/// the object is authorized as a create too), `delete` as delete.
async fn requested(client: &kube::Client, namespace: &str) -> BTreeSet<Grant> {
    let mut out = BTreeSet::new();
    let mut manifests = 0;
    for entry in std::fs::read_dir(repo_dir().join("guest/drivers")).expect("guest/drivers/") {
        let path = entry.expect("entry").path().join("driver.toml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        manifests += 1;
        let manifest: toml::Value = toml::from_str(&text).expect("driver.toml");
        let rules = manifest
            .get("capabilities")
            .and_then(|c| c.get("kube"))
            .and_then(|k| k.as_array())
            .cloned()
            .unwrap_or_default();
        for rule in rules {
            let list = |k: &str| -> Vec<String> {
                rule.get(k)
                    .and_then(|v| v.as_array())
                    .map(|a| {
                        a.iter()
                            .map(|s| s.as_str().expect("string").to_owned())
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let namespaces = list("namespaces");
            assert!(
                rule.get("cluster-scoped").is_none(),
                "{}: a cluster-scoped request needs a ClusterRole, which the chart does not have",
                path.display()
            );
            if !namespaces.iter().any(|n| n == namespace || n == "*") {
                continue;
            }
            let api_version = rule["api-version"].as_str().expect("api-version");
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            for kind in list("kinds") {
                assert_ne!(kind, "*", "{}: any kind cannot be listed", path.display());
                let gvk = GroupVersionKind::gvk(group, version, &kind);
                let (resource, _) = kube::discovery::pinned_kind(client, &gvk)
                    .await
                    .unwrap_or_else(|e| panic!("discover {api_version} {kind}: {e}"));
                for verb in list("verbs") {
                    let verbs: &[&str] = match verb.as_str() {
                        "get" => &["get"],
                        "list" => &["list", "watch"],
                        "apply" => &["create", "patch"],
                        "delete" => &["delete"],
                        other => panic!("{}: verb {other}", path.display()),
                    };
                    for v in verbs {
                        out.insert(grant(group, &resource.plural, v, ""));
                    }
                }
            }
        }
    }
    assert!(manifests >= 2, "the drivers' manifests were not found");
    out
}

/// The Role the Cluster API driver writes for each cluster autoscaler
/// (guest/drivers/capi/src/autoscaler.rs, pinned by its test
/// `the_role_grants_what_the_clusterapi_provider_uses_and_no_more`).
fn autoscaler_grants() -> BTreeSet<Grant> {
    let mut out = BTreeSet::new();
    let c = "cluster.x-k8s.io";
    for r in [
        "machinedeployments",
        "machinesets",
        "machinepools",
        "machines",
    ] {
        for v in ["get", "list", "watch"] {
            out.insert(grant(c, r, v, ""));
        }
    }
    out.insert(grant(c, "machines", "update", ""));
    for r in [
        "machinedeployments/scale",
        "machinesets/scale",
        "machinepools/scale",
    ] {
        for v in ["get", "update", "patch"] {
            out.insert(grant(c, r, v, ""));
        }
    }
    for v in ["get", "list", "watch"] {
        out.insert(grant(
            "infrastructure.cluster.x-k8s.io",
            "openstackmachinetemplates",
            v,
            "",
        ));
    }
    out
}

fn autoscaler_role() -> Value {
    let mut rules = Vec::new();
    for (g, r, v, _) in autoscaler_grants() {
        rules.push(json!({ "apiGroups": [g], "resources": [r], "verbs": [v] }));
    }
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": { "name": "kube-abcde-autoscaler", "namespace": MANAGEMENT_NS },
        "rules": rules,
    })
}

fn lease_grants() -> BTreeSet<Grant> {
    let c = "coordination.k8s.io";
    [
        grant(c, "leases", "create", ""),
        grant(c, "leases", "get", LEASE),
        grant(c, "leases", "update", LEASE),
    ]
    .into()
}

/// The API servers' minimal CRD of the Prometheus operator's
/// ServiceMonitor: the kind served, its content not validated.
fn service_monitor_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": "servicemonitors.monitoring.coreos.com" },
        "spec": {
            "group": "monitoring.coreos.com",
            "scope": "Namespaced",
            "names": { "kind": "ServiceMonitor", "listKind": "ServiceMonitorList",
                       "plural": "servicemonitors", "singular": "servicemonitor" },
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": { "openAPIV3Schema": { "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true } }
            }]
        }
    })
}

/// Applies `objects` (server-side, forced) as a dry run, then for real;
/// the refusals, each naming the object.
async fn apply_all(client: &kube::Client, objects: &[Value]) -> Vec<String> {
    let mut refused = Vec::new();
    for dry_run in [true, false] {
        for o in objects {
            let api_version = o["apiVersion"].as_str().expect("apiVersion");
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            let gvk = GroupVersionKind::gvk(group, version, o["kind"].as_str().expect("kind"));
            let (resource, _) = match kube::discovery::pinned_kind(client, &gvk).await {
                Ok(r) => r,
                Err(e) => {
                    refused.push(format!("{}: not served: {e}", kind_name(o)));
                    continue;
                }
            };
            let ns = o["metadata"]["namespace"]
                .as_str()
                .unwrap_or_else(|| panic!("{} has no namespace", kind_name(o)));
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource);
            let mut params = PatchParams::apply(FIELD_MANAGER).force();
            if dry_run {
                params = params.dry_run();
            }
            let name = o["metadata"]["name"].as_str().expect("name");
            if let Err(e) = api.patch(name, &params, &Patch::Apply(o)).await {
                let how = if dry_run { "dry run" } else { "apply" };
                refused.push(format!("{how} {}: {e}", kind_name(o)));
            }
        }
    }
    refused
}

/// `openkeel-magnum config check` of the rendered magnum.conf, with the
/// secret options in the environment as the pods have them: it must read
/// every option without a warning.
fn config_check(conf: &str, release: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("magnum.conf");
    std::fs::write(&file, conf).expect("write");
    let out = Command::new(binary())
        .args(["config", "check", "--config-file"])
        .arg(&file)
        .env("OS_DATABASE__CONNECTION", "sqlite:////tmp/chart-test.db")
        .env("OS_KEYSTONE_AUTHTOKEN__PASSWORD", "chart-test-password")
        .output()
        .expect("run openkeel-magnum");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{release}: config check {}: {stderr}",
        out.status
    );
    let cells = |l: &str| -> Vec<String> {
        l.split(['|', ' '])
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert!(
        warnings.is_empty(),
        "{release}: the generated magnum.conf gives warnings:\n{stderr}\n{conf}"
    );
    let row = |group: &str, option: &str| -> String {
        stdout
            .lines()
            .find(|l| {
                let c = cells(l);
                c.len() >= 2 && c[0] == group && c[1] == option
            })
            .unwrap_or_else(|| panic!("{release}: no [{group}]/{option} in:\n{stdout}"))
            .to_owned()
    };
    assert!(
        row("api", "port").contains("9511"),
        "{}",
        row("api", "port")
    );
    assert!(row("api", "host").contains("0.0.0.0"));
    assert!(row("oslo_policy", "policy_file").contains("/etc/magnum/policy.yaml"));
    // The secret comes from the environment, not the file.
    assert!(
        row("database", "connection").contains("OS_DATABASE__CONNECTION"),
        "{}",
        row("database", "connection")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chart_renders_applies_and_grants_what_the_drivers_request() {
    let Some(helm) = helm() else {
        return;
    };
    let Some(env) = capi_api_server_with("RBAC").await else {
        return;
    };
    let started = Instant::now();
    let chart = chart_dir();
    let chart = chart.to_str().expect("path");

    // Lint and render.
    let mut rendered = Vec::new();
    for r in &RENDERINGS {
        let mut args = vec!["lint", "--strict", chart];
        let values = r.values.map(|v| chart_dir().join(v));
        if let Some(v) = &values {
            args.extend(["--values", v.to_str().expect("path")]);
        }
        run_helm(&helm, &args);
        rendered.push(render(&helm, r));
    }
    let render_time = started.elapsed();

    // What each rendering holds.
    let kinds = |objects: &[Value]| -> Vec<String> {
        let mut k: Vec<String> = objects.iter().map(kind_name).collect();
        k.sort();
        k
    };
    let [default, ha, minimal] = [&rendered[0], &rendered[1], &rendered[2]];
    assert_eq!(
        kinds(default),
        [
            "ConfigMap default/default-openkeel-magnum",
            "ConfigMap default/default-openkeel-magnum-db-upgrade",
            "Deployment default/default-openkeel-magnum-api",
            "Deployment default/default-openkeel-magnum-reconciler",
            "Job default/default-openkeel-magnum-db-upgrade",
            "PodDisruptionBudget default/default-openkeel-magnum-api",
            "Role magnum-system/default-openkeel-magnum",
            "RoleBinding magnum-system/default-openkeel-magnum",
            "Service default/default-openkeel-magnum-api",
            "ServiceAccount default/default-openkeel-magnum",
        ]
    );
    assert_eq!(
        kinds(ha),
        [
            "ConfigMap ha/ha-openkeel-magnum",
            "ConfigMap ha/ha-openkeel-magnum-db-upgrade",
            "Deployment ha/ha-openkeel-magnum-api",
            "Deployment ha/ha-openkeel-magnum-reconciler",
            "Job ha/ha-openkeel-magnum-db-upgrade",
            "NetworkPolicy ha/ha-openkeel-magnum-api",
            "NetworkPolicy ha/ha-openkeel-magnum-reconciler",
            "PodDisruptionBudget ha/ha-openkeel-magnum-api",
            "Role magnum-system/ha-openkeel-magnum",
            "Role openkeel-magnum-lease/ha-openkeel-magnum-lease",
            "RoleBinding magnum-system/ha-openkeel-magnum",
            "RoleBinding openkeel-magnum-lease/ha-openkeel-magnum-lease",
            "Service ha/ha-openkeel-magnum-api",
            "Service ha/ha-openkeel-magnum-api-metrics",
            "Service ha/ha-openkeel-magnum-reconciler-metrics",
            "ServiceAccount ha/ha-openkeel-magnum",
            "ServiceMonitor ha/ha-openkeel-magnum",
        ]
    );
    assert_eq!(
        kinds(minimal),
        [
            "ConfigMap minimal/minimal-openkeel-magnum",
            "Deployment minimal/minimal-openkeel-magnum-api",
            "Deployment minimal/minimal-openkeel-magnum-reconciler",
            "Role magnum-system/minimal-openkeel-magnum",
            "RoleBinding magnum-system/minimal-openkeel-magnum",
            "Service minimal/minimal-openkeel-magnum-api",
            "ServiceAccount minimal/minimal-openkeel-magnum",
        ]
    );

    // The pods: probes, replicas, hardening, secrets from Secrets only.
    for (r, objects) in RENDERINGS.iter().zip(&rendered) {
        let name = |suffix: &str| format!("{}-openkeel-magnum{suffix}", r.release);
        let api = find(objects, "Deployment", &name("-api"));
        let reconciler = find(objects, "Deployment", &name("-reconciler"));
        let (api_replicas, reconciler_replicas) = match r.release {
            "ha" => (3, 2),
            "minimal" => (1, 1),
            _ => (2, 2),
        };
        assert_eq!(api["spec"]["replicas"], api_replicas, "{}", r.release);
        assert_eq!(
            reconciler["spec"]["replicas"], reconciler_replicas,
            "{}",
            r.release
        );
        let c = &api["spec"]["template"]["spec"]["containers"][0];
        for probe in ["livenessProbe", "readinessProbe"] {
            assert_eq!(c[probe]["httpGet"]["path"], "/healthcheck", "{probe}");
            assert_eq!(c[probe]["httpGet"]["port"], "http", "{probe}");
        }
        assert_eq!(c["ports"][0]["containerPort"], 9511);
        assert_eq!(c["args"][0], "api");
        assert_eq!(
            reconciler["spec"]["template"]["spec"]["containers"][0]["args"][0],
            "reconciler"
        );
        for d in [api, reconciler] {
            let pod = &d["spec"]["template"]["spec"];
            assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
            assert_eq!(pod["serviceAccountName"], name(""));
            let c = &pod["containers"][0];
            assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
            assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
            let env = c["env"].as_array().expect("env");
            let db = env
                .iter()
                .find(|e| e["name"] == "OS_DATABASE__CONNECTION")
                .expect("the database connection");
            assert_eq!(
                db["valueFrom"]["secretKeyRef"],
                json!({ "name": "openkeel-magnum-database", "key": "connection" })
            );
            assert!(env.iter().all(|e| e.get("value").is_none()), "{env:?}");
        }
        let conf = find(objects, "ConfigMap", &name(""))["data"]["magnum.conf"]
            .as_str()
            .expect("magnum.conf")
            .to_owned();
        for secret in ["password", "connection"] {
            assert!(
                !conf.lines().any(|l| l.starts_with(secret)),
                "{}: {secret} written into the ConfigMap:\n{conf}",
                r.release
            );
        }
        config_check(&conf, r.release);
    }
    // The hook: db upgrade before install and upgrade, its own copy of the
    // configuration made first.
    let job = find(default, "Job", "default-openkeel-magnum-db-upgrade");
    assert_eq!(
        job["metadata"]["annotations"]["helm.sh/hook"],
        "pre-install,pre-upgrade"
    );
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["args"],
        json!(["db", "upgrade", "--config-file", "/etc/magnum/magnum.conf"])
    );
    let hook_conf = find(default, "ConfigMap", "default-openkeel-magnum-db-upgrade");
    assert_eq!(
        hook_conf["metadata"]["annotations"]["helm.sh/hook-weight"],
        "-10"
    );
    assert_eq!(
        hook_conf["data"],
        find(default, "ConfigMap", "default-openkeel-magnum")["data"]
    );
    // The HA values: the second configuration file from a Secret, metrics.
    let ha_api = &find(ha, "Deployment", "ha-openkeel-magnum-api")["spec"]["template"]["spec"];
    assert_eq!(
        ha_api["containers"][0]["args"],
        json!([
            "api",
            "--config-file",
            "/etc/magnum/magnum.conf",
            "--config-file",
            "/etc/magnum/secret/secrets.conf"
        ])
    );
    assert!(
        ha_api["volumes"]
            .as_array()
            .expect("volumes")
            .iter()
            .any(|v| v["secret"]["secretName"] == "openkeel-magnum-secret-conf"),
        "{ha_api}"
    );

    // The Role against the drivers' manifests, read by the server's
    // discovery.
    let from_manifests = requested(&env.client, MANAGEMENT_NS).await;
    assert!(
        from_manifests.contains(&grant("cluster.x-k8s.io", "clusters", "patch", "")),
        "{from_manifests:?}"
    );
    let role = |objects: &[Value], release: &str| {
        grants(find(objects, "Role", &format!("{release}-openkeel-magnum")))
    };
    let mut expected = from_manifests.clone();
    expected.extend(autoscaler_grants());
    expected.extend(lease_grants());
    assert_eq!(role(default, "default"), expected, "default values");
    // The certificate store of cert_manager_type = kubernetes (the HA
    // values) needs no more than the driver's Secrets.
    for v in ["get", "create", "delete"] {
        assert!(from_manifests.contains(&grant("", "secrets", v, "")), "{v}");
    }
    let mut expected = from_manifests.clone();
    expected.extend(autoscaler_grants());
    assert_eq!(role(ha, "ha"), expected, "ci/ha-values.yaml");
    assert_eq!(
        grants(find(ha, "Role", "ha-openkeel-magnum-lease")),
        lease_grants()
    );
    let mut expected = from_manifests.clone();
    expected.extend(lease_grants());
    assert_eq!(role(minimal, "minimal"), expected, "ci/minimal-values.yaml");

    // Apply everything: a dry run, then for real.
    for ns in [MANAGEMENT_NS, HA_LEASE_NS, "default", "ha", "minimal"] {
        env.create_namespace(ns).await;
    }
    install_crds(
        &env.client,
        &[(PathBuf::from("ServiceMonitor"), service_monitor_crd())],
    )
    .await;
    let apply_started = Instant::now();
    let mut refused = Vec::new();
    let mut applied = 0;
    for objects in &rendered {
        refused.extend(apply_all(&env.client, objects).await);
        applied += objects.len();
    }
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
    let apply_time = apply_started.elapsed();

    // What the service accounts may do, as the server authorizes it.
    authorize(&env, "default", MANAGEMENT_NS, true).await;
    authorize(&env, "ha", HA_LEASE_NS, true).await;
    authorize(&env, "minimal", MANAGEMENT_NS, false).await;

    let run_started = Instant::now();
    run_as_deployed(&env, default, minimal).await;
    let run_time = run_started.elapsed();

    eprintln!(
        "helm chart: {} renderings, {applied} objects applied (dry run and real); render and lint {:.1}s, apply {:.1}s, run as deployed {:.1}s, total {:.1}s",
        RENDERINGS.len(),
        render_time.as_secs_f64(),
        apply_time.as_secs_f64(),
        run_time.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

/// The service account of `release`, as the server authorizes it: it may
/// create a Secret by server-side apply in the management namespace but
/// not in its own, may not create with a plain create what the drivers
/// only apply, may write the autoscaler's Role only when `autoscaler`, and
/// may take and renew the Lease in `lease_ns` (and read no other Lease).
async fn authorize(env: &CapiApiServer, release: &str, lease_ns: &str, autoscaler: bool) {
    let sa = format!("system:serviceaccount:{release}:{release}-openkeel-magnum");
    let groups = [
        "system:serviceaccounts",
        &format!("system:serviceaccounts:{release}"),
        "system:authenticated",
    ];
    let client = env.server.kube_client_as(&sa, &groups);
    let forbidden = |r: Result<(), kube::Error>, what: &str| match r {
        Err(kube::Error::Api(s)) if s.code == 403 => {}
        other => panic!("{release}: {what}: expected 403, got {other:?}"),
    };
    let apply = PatchParams::apply("openkeel-magnum-capi");
    let secret =
        |name: &str| json!({ "apiVersion": "v1", "kind": "Secret", "metadata": { "name": name } });

    let secrets: Api<Secret> = Api::namespaced(client.clone(), MANAGEMENT_NS);
    let name = format!("{release}-cloud-config");
    secrets
        .patch(&name, &apply, &Patch::Apply(secret(&name)))
        .await
        .unwrap_or_else(|e| panic!("{release}: apply a Secret in {MANAGEMENT_NS}: {e}"));
    secrets
        .get(&name)
        .await
        .unwrap_or_else(|e| panic!("{release}: get a Secret: {e}"));
    let elsewhere: Api<Secret> = Api::namespaced(client.clone(), release);
    forbidden(
        elsewhere
            .patch("x", &apply, &Patch::Apply(secret("x")))
            .await
            .map(drop),
        "apply a Secret outside the management namespace",
    );
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), MANAGEMENT_NS);
    let cm: ConfigMap = serde_json::from_value(json!({ "metadata": { "name": "x" } })).expect("cm");
    forbidden(
        config_maps
            .create(&PostParams::default(), &cm)
            .await
            .map(drop),
        "create a ConfigMap, which no driver requests",
    );

    let roles: Api<Role> = Api::namespaced(client.clone(), MANAGEMENT_NS);
    let written = roles
        .patch(
            &format!("{release}-autoscaler"),
            &apply,
            &Patch::Apply({
                let mut r = autoscaler_role();
                r["metadata"]["name"] = json!(format!("{release}-autoscaler"));
                r
            }),
        )
        .await
        .map(drop);
    if autoscaler {
        written.unwrap_or_else(|e| panic!("{release}: write the autoscaler's Role: {e}"));
    } else {
        forbidden(written, "write the autoscaler's Role without its rights");
    }

    let leases: Api<Lease> = Api::namespaced(client.clone(), lease_ns);
    let lease: Lease = serde_json::from_value(json!({
        "metadata": { "name": LEASE },
        "spec": { "holderIdentity": release, "leaseDurationSeconds": 15 }
    }))
    .expect("lease");
    leases
        .create(&PostParams::default(), &lease)
        .await
        .unwrap_or_else(|e| panic!("{release}: create the Lease in {lease_ns}: {e}"));
    let mut held = leases
        .get(LEASE)
        .await
        .unwrap_or_else(|e| panic!("{release}: get the Lease: {e}"));
    if let Some(spec) = held.spec.as_mut() {
        spec.lease_transitions = Some(1);
    }
    leases
        .replace(LEASE, &PostParams::default(), &held)
        .await
        .unwrap_or_else(|e| panic!("{release}: renew the Lease: {e}"));
    forbidden(leases.get("another").await.map(drop), "read another Lease");
    // Clean up for the next release sharing the namespace.
    Api::<Lease>::namespaced(env.client.clone(), lease_ns)
        .delete(LEASE, &Default::default())
        .await
        .expect("delete the Lease");
}

/// A process of the binary, killed when dropped.
struct Running(Child, PathBuf);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Running {
    fn output(&self) -> String {
        std::fs::read_to_string(&self.1).unwrap_or_default()
    }
}

/// Runs the binary as the minimal values' pods would: each container's
/// command and arguments as rendered (the hook's from the default values,
/// which has one), its ConfigMap's files, a kubeconfig that impersonates
/// the release's service account (as the in-cluster one would be) and
/// the environment the pods have, with these overrides (which win over
/// the files): the database (SQLite) for the Secret, local paths for the
/// policy file and the compiled-driver cache, and a free loopback port for
/// the API. `db upgrade` must succeed, `api` must answer 200 on its probes'
/// path, and `reconciler` must take the Lease.
async fn run_as_deployed(env: &CapiApiServer, default: &[Value], minimal: &[Value]) {
    let release = "minimal";
    let sa = format!("system:serviceaccount:{release}:{release}-openkeel-magnum");
    let mark = env.server.audited().len();
    let dir = tempfile::tempdir().expect("tempdir");
    let p = |n: &str| dir.path().join(n);
    let data = &find(minimal, "ConfigMap", "minimal-openkeel-magnum")["data"];
    for file in ["magnum.conf", "policy.yaml"] {
        std::fs::write(p(file), data[file].as_str().expect(file)).expect("write");
    }
    let admin = std::fs::read_to_string(env.server.kubeconfig_path()).expect("kubeconfig");
    let mut kubeconfig: Value = serde_norway::from_str(&admin).expect("kubeconfig YAML");
    let user = &mut kubeconfig["users"][0]["user"];
    user["as"] = json!(sa);
    user["as-groups"] = json!([
        "system:serviceaccounts",
        format!("system:serviceaccounts:{release}"),
        "system:authenticated"
    ]);
    std::fs::write(
        p("kubeconfig"),
        serde_norway::to_string(&kubeconfig).expect("YAML"),
    )
    .expect("write");
    let cache_dir = driver_cache_conf().parent().expect("cache dir").to_owned();
    let port = free_port();
    let start = |container: &Value, name: &str| -> Running {
        let command = container["command"][0].as_str().expect("command");
        assert_eq!(command, "openkeel-magnum");
        let args: Vec<String> = container["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|a| {
                let a = a.as_str().expect("arg");
                a.strip_prefix("/etc/magnum/")
                    .map_or(a.to_owned(), |f| p(f).display().to_string())
            })
            .collect();
        let mut cmd = Command::new(binary());
        cmd.args(&args);
        for e in container["env"].as_array().expect("env") {
            let var = e["name"].as_str().expect("name");
            let value = match var {
                "OS_DATABASE__CONNECTION" => format!("sqlite:///{}", p("magnum.sqlite").display()),
                // The hook of the default values; noauth reads none.
                "OS_KEYSTONE_AUTHTOKEN__PASSWORD" => "unused".to_owned(),
                other => panic!("{name}: no value for {other} in this test"),
            };
            cmd.env(var, value);
        }
        let log = p(&format!("{name}.log"));
        let out = std::fs::File::create(&log).expect("log");
        cmd.env("OS_OSLO_POLICY__POLICY_FILE", p("policy.yaml"))
            .env("OS_DRIVERS__PRECOMPILED_CACHE_DIR", &cache_dir)
            .env("OS_CAPI__KUBECONFIG", p("kubeconfig"))
            .env("OS_API__HOST", "127.0.0.1")
            .env("OS_API__PORT", port.to_string())
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log"))
            .stderr(out);
        Running(cmd.spawn().expect("start the binary"), log)
    };
    let container = |d: &Value| -> Value { d["spec"]["template"]["spec"]["containers"][0].clone() };

    let mut upgrade = start(
        &container(find(default, "Job", "default-openkeel-magnum-db-upgrade")),
        "db-upgrade",
    );
    let status = upgrade.0.wait().expect("db upgrade");
    assert!(
        status.success(),
        "db upgrade: {status}\n{}",
        upgrade.output()
    );

    let api_container = container(find(minimal, "Deployment", "minimal-openkeel-magnum-api"));
    let probe = api_container["readinessProbe"]["httpGet"]["path"]
        .as_str()
        .expect("probe path")
        .to_owned();
    let mut api = start(&api_container, "api");
    let url = format!("http://127.0.0.1:{port}{probe}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = api.0.try_wait() {
            panic!("api exited {status}:\n{}", api.output());
        }
        match reqwest::get(&url).await {
            Ok(r) if r.status() == 200 => break,
            other => assert!(
                Instant::now() < deadline,
                "GET {url}: {other:?}\n{}",
                api.output()
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut reconciler = start(
        &container(find(
            minimal,
            "Deployment",
            "minimal-openkeel-magnum-reconciler",
        )),
        "reconciler",
    );
    let leases: Api<Lease> = Api::namespaced(env.client.clone(), MANAGEMENT_NS);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = reconciler.0.try_wait() {
            panic!("reconciler exited {status}:\n{}", reconciler.output());
        }
        let holder = leases
            .get_opt(LEASE)
            .await
            .expect("get the Lease")
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity)
            .filter(|h| !h.is_empty());
        if holder.is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the reconciler took no Lease:\n{}",
            reconciler.output()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The Lease was written as the service account, and only by it (the
    // audit log is written a moment after the request). Only the leases of
    // the release's namespace: the API server renews its own identity Lease
    // in kube-system every ten seconds.
    let lease_path = format!("/namespaces/{MANAGEMENT_NS}/leases");
    let audit_deadline = Instant::now() + Duration::from_secs(15);
    let writes: Vec<_> = loop {
        let writes: Vec<_> = env.server.audited()[mark..]
            .iter()
            .filter(|a| a.resource == "leases" && a.verb != "get" && a.uri.contains(&lease_path))
            .map(|a| (a.verb.clone(), a.impersonated.clone()))
            .collect();
        if !writes.is_empty() || Instant::now() > audit_deadline {
            break writes;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(!writes.is_empty(), "no Lease write audited");
    assert!(writes.iter().all(|(_, user)| *user == sa), "{writes:?}");
    // As the service account, nothing it did was refused.
    for (name, r) in [("api", &mut api), ("reconciler", &mut reconciler)] {
        let out = r.output();
        assert!(
            !out.contains("forbidden") && !out.contains("Forbidden"),
            "{name}:\n{out}"
        );
    }
}
