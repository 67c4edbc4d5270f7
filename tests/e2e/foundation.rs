//! The service's foundation driven from outside: the version documents of
//! `all-in-one` against Magnum's recorded answers, and start-up errors.

use std::time::Duration;

use serde_json::Value;

use crate::harness::{Server, okm, spec_dir};

/// The answer Magnum 23.0.0 gave for `GET path` in the recorded exchanges
/// (the magnum-app records): its body with the host rewritten to `base`, and
/// its headers.
fn reference(path: &str, base: &str) -> (Value, serde_json::Map<String, Value>) {
    let file = spec_dir().join("exchanges/exchanges.json");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let records: Vec<Value> = serde_json::from_str(&text).expect("exchanges.json");
    for r in records {
        if r["app"] == "magnum-app"
            && r["request"]["method"] == "GET"
            && r["request"]["path"] == path
            && r["response"]["status"] == 200
        {
            let body = serde_json::to_string(&r["response"]["body"]).expect("body");
            let body = serde_json::from_str(&body.replace("http://localhost", base)).expect("body");
            let headers = r["response"]["headers"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            return (body, headers);
        }
    }
    panic!("no reference exchange for GET {path}");
}

#[test]
fn all_in_one_serves_the_version_documents_as_magnum() {
    let s = Server::start("", &["all-in-one"]);
    // The reference answered for http://localhost: the same host length
    // makes the same Content-Length.
    let host_len_delta = s.url.len() as i64 - "http://localhost".len() as i64;
    for (path, ref_path) in [("/", "/"), ("/v1", "/v1/"), ("/v1/", "/v1/")] {
        let a = crate::harness::get(&format!("{}{path}", s.url), &[]).expect("GET");
        assert_eq!(
            a.status,
            200,
            "GET {path}: {}",
            String::from_utf8_lossy(&a.body)
        );
        let (want_body, want_headers) = reference(ref_path, &s.url);
        assert_eq!(
            a.json(),
            want_body,
            "GET {path}: body differs from the reference"
        );
        assert!(
            a.header("x-openstack-request-id").starts_with("req-"),
            "GET {path}: request id"
        );
        for (name, value) in &want_headers {
            let value = value.as_str().unwrap_or("");
            let got = a.header(name);
            match name.to_ascii_lowercase().as_str() {
                "x-openstack-request-id" => {}
                "content-length" => {
                    let links = want_body.to_string().matches(&s.url).count() as i64;
                    let want: i64 = value.parse().expect("length");
                    assert_eq!(
                        got.parse::<i64>().ok(),
                        Some(want + links * host_len_delta),
                        "GET {path}: Content-Length"
                    );
                }
                _ => assert_eq!(got, value, "GET {path}: header {name}"),
            }
        }
    }
}

#[test]
fn start_up_errors_are_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p.display().to_string()
    };
    let ks_db = dir.path().join("ks.db").display().to_string();
    let cases = [
        (
            "malformed config file",
            write(
                "bad.conf",
                "[api]\nport = 9511\nthis line is not an option\n",
            ),
            "bad.conf:3",
            2,
        ),
        (
            "wrong option value",
            write("badvalue.conf", "[api]\nport = abc\n"),
            "[api]/port",
            2,
        ),
        (
            "unreachable database",
            write(
                "nodb.conf",
                "[DEFAULT]\nauth_strategy = noauth\n[database]\nconnection = mysql+pymysql://magnum:secretpw@127.0.0.1:1/magnum\n",
            ),
            "127.0.0.1:1",
            1,
        ),
        (
            "unreachable keystone",
            write(
                "noks.conf",
                &format!(
                    "[database]\nconnection = sqlite:///{ks_db}\n[keystone_authtoken]\nauth_url = http://127.0.0.1:1/v3\n\
                     www_authenticate_uri = http://127.0.0.1:1/v3\nauth_type = password\nusername = magnum\npassword = secretpw\n\
                     project_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n"
                ),
            ),
            "127.0.0.1:1",
            1,
        ),
    ];
    for (name, conf, want, want_code) in cases {
        if name == "unreachable keystone" {
            // The schema must exist so that the failure is Keystone's.
            let o = okm(&["db", "upgrade", "--config-file", &conf]);
            assert_eq!(o.code, 0, "db upgrade: {}", o.stderr);
        }
        let o = crate::harness::run(
            &crate::harness::binary(),
            &["api", "--config-file", &conf],
            Duration::from_secs(120),
        );
        assert_eq!(o.code, want_code, "{name}: exit code; stderr {}", o.stderr);
        let lines: Vec<&str> = o.stderr.trim().lines().collect();
        let last = lines.last().copied().unwrap_or("");
        assert!(
            last.contains(want),
            "{name}: last stderr line {last:?} does not name {want:?} (stderr: {})",
            o.stderr
        );
        assert!(
            !o.stderr.contains("panicked") && !o.stderr.contains("RUST_BACKTRACE"),
            "{name}: a panic: {}",
            o.stderr
        );
        assert!(
            !o.stderr.contains("secretpw"),
            "{name}: password leaked: {}",
            o.stderr
        );
    }
}

/// A request without a microversion header is served at 1.1, where resize
/// (1.7) does not exist: 406, as Magnum 23.0.0 answers Skyline's Resize.
/// `[api]/unversioned_at_route_minimum` serves it at the route's lowest
/// microversion instead (upgrade at 1.8, node groups at 1.9), and changes
/// nothing Magnum serves.
#[test]
fn unversioned_resize_is_406_unless_the_operator_serves_it_at_the_route_minimum() {
    let unversioned = [
        ("X-Project-Id", "p-skyline"),
        ("X-User-Id", "u-skyline"),
        ("X-Roles", "member,reader"),
        ("Content-Type", "application/json"),
    ];
    let resize = |s: &Server, uuid: &str, extra: &[(&str, &str)], count: u32| {
        let headers: Vec<(&str, &str)> = unversioned.iter().chain(extra).copied().collect();
        crate::harness::request(
            "POST",
            &format!("{}/v1/clusters/{uuid}/actions/resize", s.url),
            &headers,
            Some(&format!("{{\"node_count\": {count}}}")),
        )
        .expect("POST resize")
    };
    for allowed in [false, true] {
        let line = format!("unversioned_at_route_minimum = {allowed}");
        let s = Server::start_with(&line, "", &["all-in-one"]);
        let api = crate::harness::ProjectApi {
            url: &s.url,
            project: "p-skyline",
        };
        let template = api.template("t-skyline", "fake");
        let created = api.create("c-skyline", &template, serde_json::json!({}));
        assert_eq!(
            created.status,
            202,
            "create: {}",
            String::from_utf8_lossy(&created.body)
        );
        let uuid = created.json()["uuid"].as_str().expect("uuid").to_owned();
        api.wait(&uuid, Duration::from_secs(60), |st| st == "CREATE_COMPLETE");

        // An explicit 1.1 is refused either way, and a read without the
        // header is still served at 1.1.
        let explicit = resize(
            &s,
            &uuid,
            &[("OpenStack-API-Version", "container-infra 1.1")],
            2,
        );
        assert_eq!(explicit.status, 406, "explicit 1.1 ({line})");
        let read = crate::harness::get(&format!("{}/v1/clusters/{uuid}", s.url), &unversioned)
            .expect("GET");
        assert_eq!(read.status, 200, "{line}");
        assert_eq!(
            read.header("openstack-api-version"),
            "container-infrastructure-management 1.1",
            "{line}"
        );

        // The other routes 1.1 lacks: upgrade (served from 1.8: at 1.7
        // Magnum only refuses it) and node groups (1.9).
        let headers: Vec<(&str, &str)> = unversioned.to_vec();
        let upgrade = crate::harness::request(
            "POST",
            &format!("{}/v1/clusters/{uuid}/actions/upgrade", s.url),
            &headers,
            Some(&format!("{{\"cluster_template\": \"{template}\"}}")),
        )
        .expect("POST upgrade");
        let nodegroups = crate::harness::get(
            &format!("{}/v1/clusters/{uuid}/nodegroups", s.url),
            &headers,
        )
        .expect("GET nodegroups");
        if allowed {
            assert_eq!(
                upgrade.header("openstack-api-version"),
                "container-infrastructure-management 1.8",
                "upgrade: {} {}",
                upgrade.status,
                String::from_utf8_lossy(&upgrade.body)
            );
            assert_ne!(upgrade.status, 406);
            assert_eq!(
                nodegroups.status,
                200,
                "{}",
                String::from_utf8_lossy(&nodegroups.body)
            );
            assert_eq!(
                nodegroups.header("openstack-api-version"),
                "container-infrastructure-management 1.9"
            );
        } else {
            assert_eq!(upgrade.status, 406, "{line}");
            assert_eq!(nodegroups.status, 406, "{line}");
        }

        let a = resize(&s, &uuid, &[], 2);
        if !allowed {
            assert_eq!(a.status, 406, "{}", String::from_utf8_lossy(&a.body));
            // Magnum's method-level 406 body: empty title and detail (its
            // fault wrapper drops the message), which is why Skyline shows
            // nothing.
            assert_eq!(
                a.json(),
                serde_json::json!({"errors": [{"request_id": "", "code": "", "status": 406,
                    "title": "", "detail": "", "links": []}]})
            );
            assert_eq!(api.cluster(&uuid).expect("cluster")["node_count"], 1);
            continue;
        }
        assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
        assert_eq!(
            a.header("openstack-api-version"),
            "container-infrastructure-management 1.7"
        );
        let c = api.wait(&uuid, Duration::from_secs(60), |st| st == "UPDATE_COMPLETE");
        assert_eq!(c["node_count"], 2, "{c}");
    }
}
