//! The bad-input sweep: every route of spec/api/routes.md crossed with
//! malformed input — JSON that does not parse, bodies of the wrong type,
//! fields of the wrong type, a body past the size limit, identifiers that
//! are no UUID nor name, microversions out of range or malformed, query
//! parameters of the wrong type, JSON Patch documents that are no patch —
//! sent to `openkeel-magnum api` over a database holding a template, a
//! cluster with its nodegroups, a quota and a federation. Every answer must
//! be a Magnum 4xx error body (`{"errors": [{"status", "title", "detail",
//! …}]}` with a meaningful title), never a 5xx nor a success, and every
//! table must read the same before and after (row snapshot).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use sqlx::{Connection, SqliteConnection};
use test_support::rows::Rows;

use crate::harness::{Server, request};

const TEMPLATE: &str = "a1e2803b-402e-4adf-9b62-b47e974375f0";
const CLUSTER: &str = "b2d12f6f-a196-4bf0-ae4c-1f639a523a52";
const NODEGROUP: &str = "c3c12f6f-a196-4bf0-ae4c-1f639a523a52";
const FEDERATION: &str = "d4e2803b-402e-4adf-9b62-b47e974375f0";
const PROJECT: &str = "sweep_project";

/// The rows the routes act on.
fn rows() -> BTreeMap<String, Vec<Map<String, Value>>> {
    let obj = |v: Value| v.as_object().cloned().unwrap_or_default();
    let mut t = BTreeMap::new();
    t.insert(
        "cluster_template".to_string(),
        vec![obj(json!({"id": 1, "uuid": TEMPLATE, "name": "sweep-template", "project_id": PROJECT,
            "user_id": "sweep_user", "coe": "kubernetes", "image_id": "ubuntu", "server_type": "vm",
            "cluster_distro": "ubuntu", "network_driver": "flannel", "public": false, "hidden": false,
            "tls_disabled": false, "registry_enabled": false, "master_lb_enabled": false,
            "floating_ip_enabled": true, "labels": {}, "created_at": "2026-11-30T01:32:51.717321"}))],
    );
    t.insert(
        "cluster".to_string(),
        vec![obj(
            json!({"id": 1, "uuid": CLUSTER, "name": "sweep-cluster", "project_id": PROJECT,
            "user_id": "sweep_user", "cluster_template_id": TEMPLATE, "status": "CREATE_COMPLETE",
            "create_timeout": 60, "master_lb_enabled": false, "floating_ip_enabled": true,
            "labels": {}, "health_status_reason": {}, "created_at": "2026-11-30T01:32:51.741089"}),
        )],
    );
    t.insert(
        "nodegroup".to_string(),
        vec![
            obj(json!({"id": 1, "uuid": NODEGROUP, "name": "default-worker", "cluster_id": CLUSTER,
                "project_id": PROJECT, "role": "worker", "node_count": 1, "min_node_count": 0,
                "is_default": true, "status": "CREATE_COMPLETE", "labels": {}, "node_addresses": [],
                "created_at": "2026-11-30T01:32:51.741089"})),
            obj(json!({"id": 2, "uuid": "e5c12f6f-a196-4bf0-ae4c-1f639a523a52", "name": "default-master",
                "cluster_id": CLUSTER, "project_id": PROJECT, "role": "master", "node_count": 1,
                "min_node_count": 1, "is_default": true, "status": "CREATE_COMPLETE", "labels": {},
                "node_addresses": [], "created_at": "2026-11-30T01:32:51.741089"})),
        ],
    );
    t.insert(
        "quotas".to_string(),
        vec![obj(
            json!({"id": 1, "project_id": PROJECT, "resource": "Cluster", "hard_limit": 5,
            "created_at": "2026-11-30T01:32:51.741089"}),
        )],
    );
    t.insert(
        "federation".to_string(),
        vec![obj(json!({"id": 1, "uuid": FEDERATION, "name": "sweep-federation", "project_id": PROJECT,
            "hostcluster_id": CLUSTER, "member_ids": [], "status": "CREATE_COMPLETE",
            "properties": {"dns-zone": "example.com."}, "created_at": "2026-11-30T01:32:51.741089"}))],
    );
    t
}

/// Every table, every row.
async fn snapshot(url: &str) -> Rows {
    let mut c = SqliteConnection::connect(url).await.expect("SQLite");
    test_support::rows::sqlite(&mut c, &[]).await
}

/// A malformed request.
struct Case {
    method: &'static str,
    path: String,
    version: Option<String>,
    content_type: &'static str,
    body: Option<String>,
    what: String,
}

/// The routes with their identifiers filled in, whether they take a body,
/// and whether that body is a JSON Patch.
fn routes() -> Vec<(&'static str, String, Option<&'static str>)> {
    let c = CLUSTER;
    vec![
        ("GET", "/v1/clusters".into(), None),
        ("GET", "/v1/clusters/detail".into(), None),
        ("GET", format!("/v1/clusters/{c}"), None),
        ("POST", "/v1/clusters".into(), Some("object")),
        ("PATCH", format!("/v1/clusters/{c}"), Some("patch")),
        ("DELETE", "/v1/clusters/{ident}".into(), None),
        (
            "POST",
            format!("/v1/clusters/{c}/actions/resize"),
            Some("object"),
        ),
        (
            "POST",
            format!("/v1/clusters/{c}/actions/upgrade"),
            Some("object"),
        ),
        ("GET", format!("/v1/clusters/{c}/nodegroups"), None),
        (
            "GET",
            format!("/v1/clusters/{c}/nodegroups/{NODEGROUP}"),
            None,
        ),
        (
            "POST",
            format!("/v1/clusters/{c}/nodegroups"),
            Some("object"),
        ),
        (
            "PATCH",
            format!("/v1/clusters/{c}/nodegroups/{NODEGROUP}"),
            Some("patch"),
        ),
        (
            "DELETE",
            format!("/v1/clusters/{c}/nodegroups/{{ident}}"),
            None,
        ),
        ("GET", "/v1/clustertemplates".into(), None),
        ("GET", "/v1/clustertemplates/detail".into(), None),
        ("GET", format!("/v1/clustertemplates/{TEMPLATE}"), None),
        ("POST", "/v1/clustertemplates".into(), Some("object")),
        (
            "PATCH",
            format!("/v1/clustertemplates/{TEMPLATE}"),
            Some("patch"),
        ),
        ("DELETE", "/v1/clustertemplates/{ident}".into(), None),
        ("GET", "/v1/quotas".into(), None),
        ("GET", format!("/v1/quotas/{PROJECT}/Cluster"), None),
        ("POST", "/v1/quotas".into(), Some("object")),
        (
            "PATCH",
            format!("/v1/quotas/{PROJECT}/Cluster"),
            Some("object"),
        ),
        ("DELETE", format!("/v1/quotas/{PROJECT}/{{ident}}"), None),
        ("GET", format!("/v1/certificates/{c}"), None),
        ("POST", "/v1/certificates".into(), Some("object")),
        ("PATCH", format!("/v1/certificates/{c}"), Some("object")),
        ("PATCH", format!("/v1/credentials/{c}"), Some("object")),
        ("GET", "/v1/stats".into(), None),
        ("GET", "/v1/mservices".into(), None),
        ("GET", "/v1/federations".into(), None),
        ("GET", "/v1/federations/detail".into(), None),
        ("GET", format!("/v1/federations/{FEDERATION}"), None),
        ("POST", "/v1/federations".into(), Some("object")),
        (
            "PATCH",
            format!("/v1/federations/{FEDERATION}"),
            Some("patch"),
        ),
        ("DELETE", "/v1/federations/{ident}".into(), None),
    ]
}

/// Identifiers that name nothing and are no UUID: a DELETE with one must
/// not find anything to delete.
const BAD_IDENTS: &[&str] = &[
    "not-a-uuid",
    "00000000-0000-0000-0000-00000000000g",
    "%27%20OR%201%3D1%20--",
    "%00",
    "%E2%98%83%F0%9F%98%80",
    "..%2F..%2Fetc%2Fpasswd",
];

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let huge = format!("{{\"name\": \"{}\"}}", "x".repeat(2 << 20));
    let long_ident = "a".repeat(10_000);
    for (method, path, body) in routes() {
        let mut add = |path: &str,
                       version: Option<&str>,
                       ct: &'static str,
                       body: Option<String>,
                       what: &str| {
            out.push(Case {
                method,
                path: path.to_string(),
                version: version.map(str::to_string),
                content_type: ct,
                body,
                what: what.to_string(),
            });
        };
        let base = path.replace("{ident}", "does-not-exist");
        // Microversions out of range or malformed.
        for v in [
            "container-infra 1.99",
            "container-infra 1.0",
            "container-infra 2.1",
            "container-infra one.two",
            "container-infra 1.",
            "container-infra 1.1.1",
            "container-infra -1.5",
        ] {
            add(
                &base,
                Some(v),
                "application/json",
                body.map(|_| "{}".to_string()),
                &format!("microversion {v:?}"),
            );
        }
        // Identifiers.
        if path.contains("{ident}") || path.matches('/').count() >= 3 {
            for ident in BAD_IDENTS.iter().copied().chain([long_ident.as_str()]) {
                let p = if path.contains("{ident}") {
                    path.replace("{ident}", ident)
                } else {
                    // The last identifier of the path.
                    let (head, _) = path.rsplit_once('/').unwrap_or((&path, ""));
                    if head.ends_with("/actions") || head == "/v1/quotas/sweep_project" {
                        continue;
                    }
                    format!("{head}/{ident}")
                };
                let shown = if ident.len() > 40 { "a ×10000" } else { ident };
                add(
                    &p,
                    Some("container-infra latest"),
                    "application/json",
                    body.map(|_| "{}".into()),
                    &format!("identifier {shown}"),
                );
            }
        }
        // Query parameters of the wrong type on lists.
        if method == "GET" && !path.contains("/v1/mservices") {
            for q in [
                "limit=-1",
                "limit=abc",
                "marker=not-a-uuid",
                "sort_dir=sideways",
                "sort_key=no_such_field",
                "all_tenants=maybe",
            ] {
                add(
                    &format!("{base}?{q}"),
                    Some("container-infra latest"),
                    "application/json",
                    None,
                    &format!("query {q}"),
                );
            }
        }
        let Some(kind) = body else { continue };
        // Bodies.
        for (b, what) in [
            ("{\"name\": ".to_string(), "JSON that does not parse"),
            ("{\"name\": \"x\",}".to_string(), "a trailing comma"),
            ("\u{0}\u{1}binary".to_string(), "binary garbage"),
            ("[]".to_string(), "an empty array"),
            ("\"a string\"".to_string(), "a string"),
            ("42".to_string(), "a number"),
            ("null".to_string(), "null"),
            (huge.clone(), "a body past the size limit"),
            ("{\"a\":".repeat(10_000), "deeply nested JSON"),
        ] {
            add(
                &base,
                Some("container-infra latest"),
                "application/json",
                Some(b),
                what,
            );
        }
        if kind == "object" {
            for b in [
                json!({"name": ["a", "list"], "node_count": "three"}),
                json!({"node_count": {"an": "object"}}),
                json!({"node_count": -5, "master_count": 1.5}),
                json!({"cluster_template_id": 12, "keypair": false}),
                json!({"hard_limit": "ten", "project_id": 5, "resource": ["Cluster"]}),
                json!({"labels": "not an object", "coe": 7}),
                json!({"no_such_attribute": 1}),
            ] {
                add(
                    &base,
                    Some("container-infra latest"),
                    "application/json",
                    Some(b.to_string()),
                    &format!("wrong types {b}"),
                );
            }
        } else {
            for b in [
                json!({"op": "replace", "path": "/name", "value": "x"}),
                json!([{"op": "bogus", "path": "/name", "value": "x"}]),
                json!([{"op": "replace", "value": "x"}]),
                json!([{"op": "replace", "path": "name", "value": "x"}]),
                json!([{"op": "replace", "path": "/uuid", "value": "x"}]),
                json!([{"op": "remove", "path": "/"}]),
                json!([{"op": "add", "path": "/no_such_field", "value": 1}]),
                json!([{"op": "replace", "path": "/node_count", "value": "many"}]),
                json!([{"op": "replace", "path": "/labels", "value": "{'unclosed"}]),
                json!([{"op": "replace", "path": "/labels/a~2b", "value": 1}]),
                json!([42]),
            ] {
                add(
                    &base,
                    Some("container-infra latest"),
                    "application/json",
                    Some(b.to_string()),
                    &format!("bad patch {b}"),
                );
            }
        }
        add(
            &base,
            Some("container-infra latest"),
            "text/plain",
            Some("name=x".into()),
            "a form body as text/plain",
        );
    }
    out
}

/// Whether `body` is one of Magnum's error bodies for `status`: the errors
/// envelope with a title that says something (and the status, when the
/// body carries one), or the empty envelope Magnum itself answers for a
/// path no controller serves (404) and an unparsable version header (406).
fn magnum_error(status: u16, body: &[u8]) -> Result<(), String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|_| format!("not JSON: {:.200}", String::from_utf8_lossy(body)))?;
    let e = &v["errors"][0];
    if !e["status"].is_null() && e["status"].as_u64() != Some(u64::from(status)) {
        return Err(format!("status {} in the body: {v}", e["status"]));
    }
    let title = e["title"].as_str().unwrap_or("");
    if !title.trim().is_empty() {
        return Ok(());
    }
    let empty = json!({"errors": [{"request_id": "", "code": "", "status": status, "title": "",
        "detail": "", "links": []}]});
    if (status == 404 || status == 406) && v == empty {
        return Ok(());
    }
    Err(format!("no title: {v}"))
}

#[test]
fn malformed_input_gets_magnum_4xx_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("magnum.db");
    let conf = format!(
        "[DEFAULT]\nauth_strategy = noauth\n\n[database]\nconnection = sqlite:///{}\n",
        db.display()
    );
    let conf_file = dir.path().join("db.conf");
    std::fs::write(&conf_file, &conf).expect("conf");
    crate::harness::db_upgrade(&conf_file);
    let rt = crate::sql::runtime();
    let url = format!("sqlite://{}", db.display());
    rt.block_on(openkeel_magnum_exchanges::seed::seed_db(&url, &rows()))
        .expect("seed");
    let before = rt.block_on(snapshot(&url));
    let server = Server::start(&conf, &["api"]);
    let mut problems = Vec::new();
    let cases = cases();
    for c in &cases {
        let mut headers = vec![
            ("X-Project-Id", PROJECT),
            ("X-User-Id", "sweep_user"),
            ("X-Roles", "admin,member,reader"),
            ("Content-Type", c.content_type),
        ];
        if let Some(v) = &c.version {
            headers.push(("OpenStack-API-Version", v));
        }
        let a = match request(
            c.method,
            &format!("{}{}", server.url, c.path),
            &headers,
            c.body.as_deref(),
        ) {
            Ok(a) => a,
            Err(e) => {
                problems.push(format!("{} {} ({}): {e}", c.method, c.path, c.what));
                continue;
            }
        };
        let shown = if c.path.len() > 100 {
            format!("{}…", &c.path[..100])
        } else {
            c.path.clone()
        };
        if !(400..500).contains(&a.status) {
            problems.push(format!(
                "{} {shown} ({}): {} {:.300}",
                c.method,
                c.what,
                a.status,
                String::from_utf8_lossy(&a.body)
            ));
            continue;
        }
        if let Err(e) = magnum_error(a.status, &a.body) {
            problems.push(format!(
                "{} {shown} ({}): {}: {e}",
                c.method, c.what, a.status
            ));
        }
    }
    drop(server);
    let after = rt.block_on(snapshot(&url));
    problems.extend(after.changes_since(&before));
    openkeel_magnum_exchanges::figures::report(&format!(
        "bad-input sweep: {} requests, {} problems",
        cases.len(),
        problems.len()
    ));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
