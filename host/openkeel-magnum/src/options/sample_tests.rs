//! The generated sample (`config/magnum.conf.sample`) and the port of
//! internal/config/sample_test.go (our defaults against the reference
//! sample, `spec/api/config.conf`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use oslo_config::{Config, Key, Value, ini};

use super::known::KNOWN;
use super::schema;

use test_support::{repo_root, spec_dir_present as spec_dir};

/// The `#name = default` lines of a sample file, section by section.
fn sample_options(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut group = String::new();
    for line in text.split('\n') {
        if let Some(g) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if !g.is_empty() && !g.contains(']') {
                group = g.to_owned();
            }
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        let Some((name, def)) = rest.split_once(" =") else {
            continue;
        };
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            continue;
        }
        let def = def.strip_prefix(' ').unwrap_or(def);
        out.push((group.clone(), name.to_owned(), def.to_owned()));
    }
    out
}

/// The options whose default at run time differs from the reference
/// sample, because Magnum changes it when it starts.
const RUNTIME_DEFAULTS: &[(&str, &str)] = &[
    (
        "[DEFAULT]/control_exchange",
        "magnum/common/rpc.py set_defaults(control_exchange='magnum')",
    ),
    (
        "[keystone_auth]/auth_type",
        "magnum/conf/keystone.py set_default('auth_type', 'password')",
    ),
    (
        "[cors]/allow_headers",
        "magnum/common/config.py set_cors_middleware_defaults",
    ),
    (
        "[cors]/expose_headers",
        "magnum/common/config.py set_cors_middleware_defaults",
    ),
    (
        "[cors]/allow_methods",
        "magnum/common/config.py set_cors_middleware_defaults",
    ),
];

/// Modelled options the reference sample does not list, with why.
const NOT_IN_SAMPLE: &[(&str, &str)] = &[
    ("[DEFAULT]/auth_strategy", "ours"),
    (
        "[api]/unversioned_at_route_minimum",
        "ours: for dashboards without a microversion header",
    ),
    ("[drivers]/drivers_path", "ours: the driver host"),
    ("[drivers]/precompiled_cache_dir", "ours: the driver host"),
    ("[drivers]/pooling_allocator", "ours: the driver host"),
    ("[drivers]/breaker_threshold", "ours: the driver host"),
    ("[drivers]/breaker_window", "ours: the driver host"),
    ("[drivers]/breaker_cooldown", "ours: the driver host"),
    ("[drivers]/max_call_timeout", "ours: the driver host"),
    ("[drivers]/max_memory_mb", "ours: the driver host"),
    ("[drivers]/max_output_kb", "ours: the driver host"),
    ("[drivers]/log_kb_per_call", "ours: the driver host"),
    ("[drivers]/log_lines_per_call", "ours: the driver host"),
    ("[drivers]/max_state_kb", "ours: the driver host"),
    ("[drivers]/status_concurrency", "ours: the driver host"),
    ("[drivers]/status_fault_limit", "ours: the driver host"),
    ("[drivers]/max_snapshot_kb", "ours: the driver host"),
    ("[capi_client]/region_name", "magnum-cluster-api's"),
    ("[capi_client]/endpoint_type", "magnum-cluster-api's"),
    ("[capi_client]/ca_file", "magnum-cluster-api's"),
    ("[capi_client]/cert_file", "magnum-cluster-api's"),
    ("[capi_client]/key_file", "magnum-cluster-api's"),
    ("[capi_client]/insecure", "magnum-cluster-api's"),
    ("[manila_client]/region_name", "magnum-cluster-api's"),
    ("[manila_client]/endpoint_type", "magnum-cluster-api's"),
    ("[manila_client]/ca_file", "magnum-cluster-api's"),
    ("[manila_client]/cert_file", "magnum-cluster-api's"),
    ("[manila_client]/key_file", "magnum-cluster-api's"),
    ("[manila_client]/insecure", "magnum-cluster-api's"),
    (
        "[capi]/kubeconfig",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/management_cluster",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/namespace",
        "ours: the Cluster API management cluster",
    ),
    ("[capi]/enabled", "ours: the Cluster API management cluster"),
    (
        "[capi]/lease_namespace",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/lease_duration",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/renew_deadline",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/retry_period",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/resync_interval",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/request_timeout",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/update_grace",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/delete_timeout",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/app_credential_roles",
        "ours: the Cluster API management cluster",
    ),
    (
        "[capi]/addons_manifests_dir",
        "ours: the Cluster API management cluster",
    ),
    ("[metrics]/enabled", "ours: the Prometheus listener"),
    ("[metrics]/host", "ours: the Prometheus listener"),
    ("[metrics]/port", "ours: the Prometheus listener"),
    ("[tracing]/otlp_endpoint", "ours: OpenTelemetry traces"),
    ("[tracing]/service_name", "ours: OpenTelemetry traces"),
    ("[tracing]/sample_ratio", "ours: OpenTelemetry traces"),
    ("[tracing]/export_timeout", "ours: OpenTelemetry traces"),
    (
        "[oslo_middleware]/enable_proxy_headers_parsing",
        "http_proxy_to_wsgi namespace is not in Magnum's generator",
    ),
    (
        "[oslo_policy]/enforce_scope",
        "removed in oslo.policy 6; accepted with a warning",
    ),
    ("[healthcheck]/backends", "set in Magnum's api-paste.ini"),
    ("[healthcheck]/detailed", "set in Magnum's api-paste.ini"),
    (
        "[healthcheck]/disable_by_file_path",
        "set in Magnum's api-paste.ini",
    ),
    (
        "[keystone_auth]/cafile",
        "keystoneauth1 session option registered by Magnum",
    ),
    (
        "[keystone_auth]/certfile",
        "keystoneauth1 session option registered by Magnum",
    ),
    (
        "[keystone_auth]/keyfile",
        "keystoneauth1 session option registered by Magnum",
    ),
    (
        "[keystone_auth]/insecure",
        "keystoneauth1 session option registered by Magnum",
    ),
    (
        "[keystone_auth]/timeout",
        "keystoneauth1 session option registered by Magnum",
    ),
];

fn config_of(text: &str) -> Config {
    let file = ini::parse("sample", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    match Config::from_files(Arc::new(schema::schema()), vec![file]) {
        Ok((c, _)) => c,
        Err(e) => panic!("{}", e[0]),
    }
}

/// Whether a keystoneauth1 password plugin option, which keystonemiddleware
/// registers only once it loads the plugin (so [keystone_authtoken] in the
/// sample lacks them).
fn is_credential(name: &str) -> bool {
    <super::Credentials as oslo_config::Group>::opts("x")
        .iter()
        .any(|o| o.name == name)
}

// Port of TestSampleDefaults.
#[test]
fn reference_sample_defaults() {
    let Some(spec) = spec_dir() else { return };
    let path = spec.join("api/config.conf");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let samples = sample_options(&text);
    assert!(
        samples.len() >= 200,
        "only {} options found in {}",
        samples.len(),
        path.display()
    );

    // The sample itself loads cleanly: every line is a comment or a header.
    let loaded = super::load_with_environment(std::slice::from_ref(&path), &[], [])
        .unwrap_or_else(|e| panic!("loading the sample: {e}"));
    assert!(
        loaded.warnings.is_empty(),
        "warnings loading the sample: {:?}",
        loaded.warnings
    );
    assert_eq!(loaded.options.files(), std::slice::from_ref(&path));
    assert_same_values(&loaded.options, &super::Options::defaults());

    let known: BTreeMap<Key, &str> = KNOWN
        .iter()
        .map(|&(g, n, d, _)| (Key::new(g, n), d))
        .collect();
    let modelled: BTreeMap<Key, oslo_config::Opt> = schema::modelled()
        .into_iter()
        .map(|o| (o.key(), o))
        .collect();
    let defaults = config_of("");
    let runtime: BTreeSet<&str> = RUNTIME_DEFAULTS.iter().map(|(k, _)| *k).collect();
    let mut in_sample = BTreeSet::new();
    let mut checked = 0;
    let mut failures = Vec::new();
    for (group, name, def) in &samples {
        let key = Key::new(group.as_str(), name.as_str());
        in_sample.insert(key.clone());
        if known.get(&key) != Some(&def.as_str()) {
            failures.push(format!(
                "{key}: known table has {:?}, sample has {def:?}",
                known.get(&key)
            ));
        }
        let Some(opt) = modelled.get(&key) else {
            continue;
        };
        if runtime.contains(key.to_string().as_str()) {
            continue;
        }
        checked += 1;
        let ours = match defaults.get(group, name) {
            Some(Ok(v)) => v.clone(),
            other => {
                failures.push(format!("{key}: default: {other:?}"));
                continue;
            }
        };
        let want = if def == "<None>" {
            Value::None
        } else if opt.ty.is_multi() && def.is_empty() {
            Value::List(Vec::new())
        } else {
            match config_of(&format!("[{group}]\n{name} = {def}\n")).get(group, name) {
                Some(Ok(v)) => v.clone(),
                other => {
                    failures.push(format!("{key}: sample default {def:?}: {other:?}"));
                    continue;
                }
            }
        };
        if want != ours {
            failures.push(format!("{key}: sample default {want:?}, ours {ours:?}"));
        }
    }
    for key in known.keys() {
        if !in_sample.contains(key) {
            failures.push(format!("{key} is in the known table but not in the sample"));
        }
    }
    let not_in_sample: BTreeSet<&str> = NOT_IN_SAMPLE.iter().map(|(k, _)| *k).collect();
    for key in modelled.keys() {
        let credential = key.group.starts_with("keystone_auth") && is_credential(&key.name);
        if !in_sample.contains(key)
            && !credential
            && !not_in_sample.contains(key.to_string().as_str())
        {
            failures.push(format!(
                "{key} is modelled but not in the sample; list it in NOT_IN_SAMPLE with a reason"
            ));
        }
    }
    for (key, _) in RUNTIME_DEFAULTS {
        if !modelled.keys().any(|k| k.to_string() == *key) {
            failures.push(format!(
                "RUNTIME_DEFAULTS lists {key}, which is not modelled"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{} sample options, {checked} modelled with their sample default checked",
        samples.len()
    );
}

/// Compares every group of two option sets.
fn assert_same_values(a: &super::Options, b: &super::Options) {
    assert_eq!(a.default, b.default);
    assert_eq!(a.api, b.api);
    assert_eq!(a.database, b.database);
    assert_eq!(a.keystone_authtoken, b.keystone_authtoken);
    assert_eq!(a.keystone_auth, b.keystone_auth);
    assert_eq!(a.oslo_policy, b.oslo_policy);
    assert_eq!(a.oslo_middleware, b.oslo_middleware);
    assert_eq!(
        a.oslo_messaging_notifications,
        b.oslo_messaging_notifications
    );
    assert_eq!(a.oslo_messaging_rabbit, b.oslo_messaging_rabbit);
    assert_eq!(a.cors, b.cors);
    assert_eq!(a.quotas, b.quotas);
    assert_eq!(a.drivers, b.drivers);
    assert_eq!(a.certificates, b.certificates);
    assert_eq!(a.x509, b.x509);
    assert_eq!(a.cluster, b.cluster);
    assert_eq!(a.cluster_template, b.cluster_template);
    assert_eq!(a.kubernetes, b.kubernetes);
    assert_eq!(a.cinder, b.cinder);
    assert_eq!(a.conductor, b.conductor);
    assert_eq!(a.profiler, b.profiler);
    assert_eq!(a.healthcheck, b.healthcheck);
    assert_eq!(a.capi, b.capi);
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.tracing, b.tracing);
    for (x, y) in [
        (&a.glance_client, &b.glance_client),
        (&a.nova_client, &b.nova_client),
        (&a.neutron_client, &b.neutron_client),
        (&a.cinder_client, &b.cinder_client),
        (&a.barbican_client, &b.barbican_client),
        (&a.magnum_client, &b.magnum_client),
    ] {
        assert_eq!(x, y);
    }
    assert_eq!(a.octavia_client, b.octavia_client);
}

/// Fails unless the file at `rel` (from the repository root) holds `want`;
/// `OKM_UPDATE_SAMPLES=1` rewrites it instead.
fn assert_generated(rel: &str, want: &str) {
    let path = repo_root().join(rel);
    if std::env::var("OKM_UPDATE_SAMPLES").as_deref() == Ok("1") {
        std::fs::write(&path, want).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        return;
    }
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || got.lines().count().min(want.lines().count()) + 1,
                |i| i + 1,
            );
        panic!(
            "{rel} is stale (first difference at line {line}): run the tests with OKM_UPDATE_SAMPLES=1"
        );
    }
}

/// `config/magnum.conf.sample` is what the option table generates.
#[test]
fn generated_sample_is_current() {
    assert_generated("config/magnum.conf.sample", &super::sample());
}

/// `docs/configuration.md` is what the option table generates, and lists
/// every option of the sample.
#[test]
fn generated_reference_is_current() {
    let reference = super::reference();
    for (group, name, _) in sample_options(&super::sample()) {
        let section = reference
            .split_once(&format!("\n## [{group}]\n"))
            .map(|(_, rest)| rest.split("\n## ").next().unwrap_or(rest))
            .unwrap_or_else(|| panic!("no section [{group}] in the reference"));
        assert!(
            section.contains(&format!("\n| `{name}` |")),
            "[{group}]/{name} is not in the reference"
        );
    }
    assert_generated("docs/configuration.md", &reference);
}

/// The generated sample loads without warnings, lists every modelled
/// option once, and each commented-out default, when uncommented, gives the
/// default.
#[test]
fn generated_sample_round_trips() {
    let text = super::sample();
    let file = ini::parse("sample", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert!(file.entries.is_empty());
    let options = sample_options(&text);
    let listed: BTreeSet<Key> = options
        .iter()
        .map(|(g, n, _)| Key::new(g.as_str(), n.as_str()))
        .collect();
    assert_eq!(listed.len(), options.len(), "an option is listed twice");
    let modelled: BTreeSet<Key> = schema::modelled()
        .iter()
        .map(oslo_config::Opt::key)
        .collect();
    assert_eq!(listed, modelled);
    let defaults = config_of("");
    for (group, name, def) in &options {
        let got = if def == "<None>" {
            continue;
        } else {
            config_of(&format!("[{group}]\n{name} = {def}\n"))
        };
        let got = got
            .get(group, name)
            .map(|r| r.cloned().map_err(|e| e.to_string()));
        let want = defaults
            .get(group, name)
            .map(|r| r.cloned().map_err(|e| e.to_string()));
        if defaults
            .schema()
            .get(group, name)
            .is_some_and(|o| o.ty.is_multi())
            && def.is_empty()
        {
            assert_eq!(want, Some(Ok(Value::List(Vec::new()))), "[{group}]/{name}");
            continue;
        }
        assert_eq!(got, want, "[{group}]/{name} = {def}");
    }
    // Help lines are wrapped at 79 columns, except a single long word.
    for line in text.lines().filter(|l| l.starts_with("# ")) {
        assert!(
            line.chars().count() <= 79 || !line[2..].contains(' '),
            "{line}"
        );
    }
}
