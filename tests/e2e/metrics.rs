//! `[metrics]`: the Prometheus listener of the binary, scraped as Prometheus
//! would and read with the OpenMetrics parser of the Python
//! `prometheus_client` (`OPENKEEL_TEST_PYTHON`, scripts/ci/python-oracle.sh).

use std::io::Write;
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{ProjectApi, Server, db_upgrade, free_port, get, service_env};

const PROJECT: &str = "metrics-project";

/// Parses an exposition with `prometheus_client.openmetrics.parser` (which
/// refuses anything that is not OpenMetrics, `# EOF` included) and prints
/// every sample as JSON.
const PARSE: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = []
for fam in text_string_to_metric_families(sys.stdin.read()):
    for s in fam.samples:
        out.append({"family": fam.name, "type": fam.type, "name": s.name,
                    "labels": s.labels, "value": s.value})
json.dump(out, sys.stdout)
"#;

/// One sample of the exposition.
#[derive(Debug)]
struct Sample {
    family: String,
    kind: String,
    name: String,
    labels: serde_json::Map<String, Value>,
    value: f64,
}

fn parse(python: &str, text: &str) -> Vec<Sample> {
    let mut child = Command::new(python)
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the parser");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write the exposition");
    let out = child.wait_with_output().expect("parser output");
    assert!(
        out.status.success(),
        "prometheus_client refused the exposition: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all: Vec<Value> = serde_json::from_slice(&out.stdout).expect("parser JSON");
    all.into_iter()
        .map(|s| Sample {
            family: s["family"].as_str().unwrap_or_default().into(),
            kind: s["type"].as_str().unwrap_or_default().into(),
            name: s["name"].as_str().unwrap_or_default().into(),
            labels: s["labels"].as_object().cloned().unwrap_or_default(),
            value: s["value"].as_f64().expect("a number"),
        })
        .collect()
}

/// The value of the sample `name` whose labels include `labels`, when
/// exactly one matches.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let hits: Vec<&Sample> = samples
        .iter()
        .filter(|s| {
            s.name == name
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).and_then(Value::as_str) == Some(*v))
        })
        .collect();
    assert!(hits.len() <= 1, "{name} {labels:?} matches {hits:?}");
    hits.first().map(|s| s.value)
}

/// Whether `v` holds a UUID, with or without dashes.
fn holds_uuid(v: &str) -> bool {
    v.split(|c: char| !(c.is_ascii_hexdigit() || c == '-'))
        .any(|t| {
            let hex: String = t.chars().filter(|c| *c != '-').collect();
            hex.len() >= 32 && hex.chars().all(|c| c.is_ascii_hexdigit())
        })
}

fn scrape(port: u16) -> (String, String) {
    let a = get(&format!("http://127.0.0.1:{port}/metrics"), &[]).expect("scrape /metrics");
    assert_eq!(a.status, 200);
    let ctype = a
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (ctype, String::from_utf8(a.body).expect("UTF-8 exposition"))
}

#[test]
fn metrics_count_requests_by_route_and_driver_calls_and_are_off_by_default() {
    let Some(python) = service_env("OPENKEEL_TEST_PYTHON") else {
        return;
    };
    let port = free_port();

    // Off (the default): nothing listens on the port.
    let off = Server::start(&format!("[metrics]\nport = {port}\n"), &["all-in-one"]);
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "something listens on {port} with [metrics]/enabled off"
    );
    drop(off);

    let s = Server::start(
        &format!("[metrics]\nenabled = true\nport = {port}\n"),
        &["all-in-one"],
    );
    let api = ProjectApi {
        url: &s.url,
        project: PROJECT,
    };
    let template = api.template("metrics-tpl", "fake");
    let a = api.create("metrics-c1", &template, json!({}));
    assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
    let uuid = a.json()["uuid"].as_str().expect("uuid").to_string();
    api.wait(&uuid, Duration::from_secs(60), |st| st == "CREATE_COMPLETE");
    let missing = uuid::Uuid::new_v4();
    assert_eq!(
        api.call("GET", &format!("/v1/clusters/{missing}"), None)
            .status,
        404
    );
    assert_eq!(api.call("GET", "/v1/no/such/thing", None).status, 404);
    let gets = 3;
    for _ in 0..gets {
        api.ok("GET", "/v1/clusters", None);
    }

    let (ctype, text) = scrape(port);
    assert!(
        ctype.starts_with("application/openmetrics-text"),
        "Content-Type {ctype}"
    );
    let samples = parse(&python, &text);

    // Requests, by route pattern, method and status.
    let req = |route: &str, method: &str, status: &str| {
        value(
            &samples,
            "openkeel_magnum_http_requests_total",
            &[("route", route), ("method", method), ("status", status)],
        )
    };
    assert_eq!(
        req("/v1/clustertemplates", "POST", "201"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(req("/v1/clusters", "POST", "202"), Some(1.0), "{text}");
    assert_eq!(
        req("/v1/clusters", "GET", "200"),
        Some(f64::from(gets)),
        "{text}"
    );
    assert_eq!(
        req("/v1/clusters/{cluster_ident}", "GET", "404"),
        Some(1.0),
        "{text}"
    );
    assert!(
        req("/v1/clusters/{cluster_ident}", "GET", "200").is_some_and(|n| n >= 1.0),
        "{text}"
    );
    assert_eq!(req("unmatched", "GET", "404"), Some(1.0), "{text}");
    let hist = |suffix: &str, extra: &[(&str, &str)]| {
        let mut labels = vec![
            ("route", "/v1/clusters"),
            ("method", "GET"),
            ("status", "200"),
        ];
        labels.extend_from_slice(extra);
        value(
            &samples,
            &format!("openkeel_magnum_http_request_duration_seconds_{suffix}"),
            &labels,
        )
    };
    assert_eq!(hist("count", &[]), Some(f64::from(gets)), "{text}");
    assert_eq!(hist("bucket", &[("le", "+Inf")]), Some(f64::from(gets)));
    assert!(hist("sum", &[]).is_some_and(|s| s > 0.0));
    assert!(
        samples.iter().any(
            |s| s.family == "openkeel_magnum_http_request_duration_seconds"
                && s.kind == "histogram"
        ),
        "{text}"
    );

    // The fake driver's calls: the create, then its status polls.
    let call = |suffix: &str, function: &str| {
        value(
            &samples,
            &format!("openkeel_magnum_driver_call{suffix}"),
            &[("driver", "fake"), ("function", function)],
        )
    };
    assert_eq!(call("s_total", "create-cluster"), Some(1.0), "{text}");
    assert_eq!(
        call("_duration_seconds_count", "create-cluster"),
        Some(1.0),
        "{text}"
    );
    assert!(
        samples
            .iter()
            .any(|s| s.name == "openkeel_magnum_driver_calls_total"
                && s.labels.get("function").and_then(Value::as_str) != Some("create-cluster")),
        "no status call counted: {text}"
    );
    assert_eq!(
        value(
            &samples,
            "openkeel_magnum_driver_breaker_open",
            &[("driver", "fake")]
        ),
        Some(0.0),
        "{text}"
    );
    assert!(
        !samples
            .iter()
            .any(|s| s.name == "openkeel_magnum_driver_faults_total"),
        "faults counted for a healthy driver: {text}"
    );

    // The status loop and the database (SQLite: a read and a write pool).
    for name in [
        "openkeel_magnum_reconciler_clusters_in_progress",
        "openkeel_magnum_reconciler_clusters_polling",
        "openkeel_magnum_create_jobs_queued",
    ] {
        assert!(value(&samples, name, &[]).is_some(), "{name}: {text}");
    }
    // Every request read through a pooled connection; retries and watches
    // are counted from zero.
    assert!(
        value(
            &samples,
            "openkeel_magnum_db_connection_acquisitions_total",
            &[]
        )
        .is_some_and(|n| n > 0.0),
        "{text}"
    );
    for name in [
        "openkeel_magnum_db_connection_wait_seconds_total",
        "openkeel_magnum_db_transaction_retries_total",
        "openkeel_magnum_watch_status_derivations_total",
        "openkeel_magnum_watch_lag_seconds_total",
    ] {
        assert!(value(&samples, name, &[]).is_some(), "{name}: {text}");
    }
    // The only reconciler holds the lease.
    assert_eq!(
        value(&samples, "openkeel_magnum_reconciler_lease_held", &[]),
        Some(1.0),
        "{text}"
    );
    // Notifications are off: none failed.
    assert_eq!(
        value(
            &samples,
            "openkeel_magnum_notifications_total",
            &[("outcome", "failed")]
        ),
        Some(0.0),
        "{text}"
    );
    for pool in ["read", "write"] {
        let idle = value(
            &samples,
            "openkeel_magnum_db_connections_idle",
            &[("pool", pool)],
        );
        let used = value(
            &samples,
            "openkeel_magnum_db_connections_in_use",
            &[("pool", pool)],
        );
        assert!(
            idle.zip(used).is_some_and(|(i, u)| i + u >= 1.0),
            "pool {pool}: {text}"
        );
    }

    // No label carries an id, a name or a project.
    for s in &samples {
        for (k, v) in &s.labels {
            let v = v.as_str().unwrap_or_default();
            assert!(
                !holds_uuid(v)
                    && !v.contains(PROJECT)
                    && !v.contains("metrics-c1")
                    && !v.contains("metrics-tpl"),
                "{}: label {k}={v:?}",
                s.name
            );
        }
    }

    // Only /metrics is served there.
    let a = get(&format!("http://127.0.0.1:{port}/v1/clusters"), &[]).expect("GET");
    assert_eq!(a.status, 404);
    drop(s);
}

/// `api` behind Keystone serves the metrics too: the token cache's hits and
/// misses, a refused token counted as `unmatched`.
#[test]
fn api_with_keystone_counts_token_cache_lookups() {
    let (Some(python), Some(keystone), Some(magnum_pass), Some(admin_pass)) = (
        service_env("OPENKEEL_TEST_PYTHON"),
        service_env("OPENKEEL_TEST_KEYSTONE_URL"),
        service_env("OPENKEEL_TEST_KEYSTONE_MAGNUM_PASSWORD"),
        service_env("OPENKEEL_TEST_KEYSTONE_ADMIN_PASSWORD"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let conf = format!(
        "[database]\nconnection = sqlite:///{}\n\n[keystone_authtoken]\nwww_authenticate_uri = {keystone}\n\
         auth_url = {keystone}\nauth_type = password\nusername = magnum\npassword = {magnum_pass}\n\
         project_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n\
         http_connect_timeout = 60\n\n[metrics]\nenabled = true\nport = {port}\n",
        dir.path().join("magnum.db").display()
    );
    let conf_file = dir.path().join("db.conf");
    std::fs::write(&conf_file, &conf).expect("write");
    db_upgrade(&conf_file);
    let s = Server::start(&conf, &["api"]);
    let url = format!("{}/v1/mservices", s.url);
    let admin = crate::keystone::issue_token(&keystone, "admin", &admin_pass, "admin");
    for _ in 0..3 {
        let a = get(&url, &[("X-Auth-Token", &admin)]).expect("GET");
        assert_eq!(a.status, 200, "{}", String::from_utf8_lossy(&a.body));
    }
    assert_eq!(get(&url, &[]).expect("GET").status, 401);

    let (_, text) = scrape(port);
    let samples = parse(&python, &text);
    let lookups = |result: &str| {
        value(
            &samples,
            "openkeel_magnum_token_cache_lookups_total",
            &[("result", result)],
        )
    };
    // The first request asks Keystone; the next two are answered from the
    // cache.
    assert_eq!(
        (lookups("miss"), lookups("hit")),
        (Some(1.0), Some(2.0)),
        "{text}"
    );
    let req = |route: &str, status: &str| {
        value(
            &samples,
            "openkeel_magnum_http_requests_total",
            &[("route", route), ("method", "GET"), ("status", status)],
        )
    };
    assert_eq!(req("/v1/mservices", "200"), Some(3.0), "{text}");
    assert_eq!(req("unmatched", "401"), Some(1.0), "{text}");
    for s in &samples {
        for v in s.labels.values() {
            let v = v.as_str().unwrap_or_default();
            assert!(!v.contains(&admin) && !holds_uuid(v), "{}: {v:?}", s.name);
        }
    }
    drop(s);
}

/// `reconciler` serves the metrics of its status loop: it holds the lease
/// (the database's, with no management cluster) and answers no requests.
#[test]
fn reconciler_serves_its_status_loop_gauges() {
    let Some(python) = service_env("OPENKEEL_TEST_PYTHON") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let conf = format!(
        "[database]\nconnection = sqlite:///{}\n\n[metrics]\nenabled = true\nport = {port}\n",
        dir.path().join("magnum.db").display()
    );
    let conf_file = dir.path().join("db.conf");
    std::fs::write(&conf_file, &conf).expect("write");
    db_upgrade(&conf_file);
    let r = Server::start_process(&conf, &["reconciler"], "reconciler started");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let samples = loop {
        if get(&format!("http://127.0.0.1:{port}/metrics"), &[]).is_ok() {
            let (_, text) = scrape(port);
            let samples = parse(&python, &text);
            if value(&samples, "openkeel_magnum_reconciler_lease_held", &[]) == Some(1.0) {
                break samples;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the reconciler never held the lease:\n{}",
            r.output()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        !samples
            .iter()
            .any(|s| s.name == "openkeel_magnum_http_requests_total"),
        "requests counted by a process that serves no API"
    );
    assert_eq!(
        value(
            &samples,
            "openkeel_magnum_reconciler_clusters_in_progress",
            &[]
        ),
        Some(0.0)
    );
    drop(r);
}
