use std::path::PathBuf;

use super::*;

fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/seed-request");
    let mut out: Vec<(String, Vec<u8>)> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| {
                let data = std::fs::read(e.path()).unwrap_or_default();
                (e.file_name().to_string_lossy().into_owned(), data)
            })
            .collect(),
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    out.sort();
    out
}

/// What each seed is answered: the seeds reach real rows and real checks.
const EXPECTED: &[(&str, u16)] = &[
    ("create-cluster", 400),
    ("create-nodegroup", 202),
    ("create-quota-admin", 409),
    ("create-template-mutated", 400),
    ("delete-nodegroup", 400),
    ("get-cluster", 200),
    ("get-nodegroup-old-version", 406),
    ("get-template-by-name", 200),
    ("list-clusters-limit", 200),
    ("list-templates-detail-admin", 200),
    ("patch-cluster-by-name", 400),
    ("patch-template-text-plain", 415),
    ("resize-not-json", 400),
    ("root-no-headers", 200),
    ("upgrade-cluster", 400),
];

#[test]
fn the_seed_corpus_keeps_every_invariant_and_reaches_the_seed_rows() {
    let seeds = seeds();
    let names: Vec<&str> = seeds.iter().map(|(n, _)| n.as_str()).collect();
    let expected: Vec<&str> = EXPECTED.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, expected);
    for ((name, data), (_, status)) in seeds.iter().zip(EXPECTED) {
        let a = match run(data) {
            Some(a) => a,
            None => panic!("seed {name} builds no request"),
        };
        assert_eq!(
            a.status.as_u16(),
            *status,
            "seed {name}: {}",
            String::from_utf8_lossy(&a.body)
        );
    }
}

#[test]
fn every_input_starts_from_the_seed_rows() {
    let create = seeds()
        .into_iter()
        .find(|(n, _)| n == "create-nodegroup")
        .map(|(_, d)| d)
        .unwrap_or_default();
    // A second create of the same name would be a 409 on the rows the first
    // one left.
    for _ in 0..2 {
        let a = run(&create).map(|a| a.status);
        assert_eq!(a, Some(StatusCode::ACCEPTED));
    }
    let get_cluster = [0, 4, 0, 0, 0, 0, 0, 4, 0, 0];
    let a = run(&get_cluster).map(|a| name_of(&a));
    assert_eq!(a, Some(Some(CLUSTER_NAME.to_string())));
}

#[test]
fn inputs_build_the_requests_they_describe() {
    // PATCH /v1/clusters/fuzz-cluster/<"a b">?limit=%FF, no caller, admin
    // roles, version 1.10, text/plain, no Accept, the body as it is.
    let mut data = vec![2, 4, 1, 1 | 4, 3, b'a', b' ', b'b', 0, 0, 1, 0xFF];
    data.extend([3, 1, 3, 1, 3, 1]);
    data.extend(b"{not json");
    let b = match build(&data) {
        Some(b) => b,
        None => panic!("no request"),
    };
    let r = &b.request;
    assert_eq!(r.method(), Method::PATCH);
    assert_eq!(
        r.uri().to_string(),
        "/v1/clusters/fuzz-cluster/a%20b?limit=%EF%BF%BD"
    );
    let h = |n: &str| r.headers().get(n).and_then(|v| v.to_str().ok());
    assert_eq!(h("x-project-id"), None);
    assert_eq!(h("x-roles"), Some("admin"));
    assert_eq!(h("openstack-api-version"), Some("container-infra 1.10"));
    assert_eq!(h("content-type"), Some("text/plain"));
    assert_eq!(h("accept"), None);
    assert_eq!(b.body, b"{not json");
    // A header value with a newline makes no request.
    assert!(build(&[0, 0, 0, 0, 6, 2, b'a', b'\n']).is_none());
}

#[test]
fn mutations_keep_the_body_json_and_change_it() {
    // POST /v1/clusters with the cluster create body, one mutation: the
    // first value (`name`) becomes the string "x".
    let data = [1, 2, 0, 0, 0, 0, 4, 0, 2, 0, 1, 1, 7, 1, b'x'];
    let b = match build(&data) {
        Some(b) => b,
        None => panic!("no request"),
    };
    let v: Value = match serde_json::from_slice(&b.body) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(v["name"], "x");
    assert_eq!(v["cluster_template_id"], TEMPLATE_UUID);
}

/// The `name` of a JSON body, if any.
fn name_of(a: &Answer) -> Option<String> {
    let v: Value = serde_json::from_slice(&a.body).ok()?;
    v.get("name").and_then(Value::as_str).map(str::to_string)
}

fn answer(status: u16, body: &str) -> Answer {
    Answer {
        status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        body: body.as_bytes().to_vec(),
    }
}

fn json_accept() -> Accept {
    Accept::parse("application/json")
}

#[test]
fn magnum_error_envelopes_pass_the_answer_check() {
    let fault = r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Bad", "detail": "Bad.", "links": []}]}"#;
    check_answer(&Method::POST, &json_accept(), &answer(400, fault));
    // A routing error's title is empty for a client that does not prefer
    // JSON, as in Magnum.
    let routing = r#"{"errors": [{"request_id": "", "code": "", "status": 404, "title": "", "detail": "", "links": []}]}"#;
    check_answer(
        &Method::GET,
        &Accept::parse("text/html"),
        &answer(404, routing),
    );
    check_answer(&Method::GET, &json_accept(), &answer(200, "plain"));
    check_answer(&Method::HEAD, &json_accept(), &answer(404, ""));
}

#[test]
#[should_panic(expected = "not JSON")]
fn a_bare_500_breaks_the_answer_check() {
    check_answer(
        &Method::GET,
        &json_accept(),
        &answer(500, "Internal Server Error"),
    );
}

#[test]
#[should_panic(expected = "empty title")]
fn an_empty_title_for_a_json_client_breaks_the_answer_check() {
    let routing = r#"{"errors": [{"request_id": "", "code": "", "status": 404, "title": "", "detail": "", "links": []}]}"#;
    check_answer(&Method::GET, &json_accept(), &answer(404, routing));
}

#[test]
#[should_panic(expected = "another status")]
fn an_item_of_another_status_breaks_the_answer_check() {
    let fault = r#"{"errors": [{"request_id": "", "code": "client", "status": 400, "title": "Bad", "detail": "Bad.", "links": []}]}"#;
    check_answer(&Method::GET, &json_accept(), &answer(409, fault));
}

#[test]
#[should_panic(expected = "envelope")]
fn two_items_break_the_answer_check() {
    let two = r#"{"errors": [{"title": "a"}, {"title": "b"}]}"#;
    check_answer(&Method::GET, &json_accept(), &answer(400, two));
}
