//! API answers as transcripts: a member's requests in order, each answer's
//! status and body kept as an `insta` JSON snapshot (`src/snapshots/`).
//! The fixture's clock and numbered UUIDs make the rows deterministic; what
//! still varies between runs (request ids) is redacted. A changed answer
//! fails the test with the difference; `cargo insta review` (or
//! `INSTA_UPDATE=always`) records an intended change.

use serde_json::{Value, json};

use crate::openstack::{STATIC_IMAGE_NAME, Static};
use crate::testing::{MEMBER, TestApp};

/// One request of a transcript: `METHOD /path`, its JSON body (empty for
/// none) and extra headers.
struct Step<'a>(&'a str, Value, &'a [&'a str]);

/// The answers to `steps`, in order, as one JSON document.
async fn transcript(app: &TestApp, steps: &[Step<'_>]) -> Value {
    let mut out = Vec::new();
    for Step(req, body, extra) in steps {
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        let mut headers: Vec<&str> = MEMBER.to_vec();
        headers.extend_from_slice(extra);
        let a = app.call(req, &body, &headers).await;
        let answer = if a.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&a.body).unwrap_or_else(|_| Value::String(a.text()))
        };
        out.push(json!({
            "request": req,
            "status": a.status.as_u16(),
            "body": redact(answer),
        }));
    }
    Value::Array(out)
}

/// The values that differ from run to run: request ids.
fn redact(mut v: Value) -> Value {
    match &mut v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "request_id" && x.as_str().is_some_and(|s| !s.is_empty()) {
                    *x = Value::String("[request id]".into());
                } else {
                    *x = redact(std::mem::take(x));
                }
            }
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                *x = redact(std::mem::take(x));
            }
        }
        _ => {}
    }
    v
}

#[tokio::test]
async fn a_member_makes_a_template_and_a_cluster() {
    let mut t = crate::conductor::testing::TestConductor::new().await;
    t.conductor = t
        .conductor
        .with_lookup(std::sync::Arc::new(Static::new(false)));
    let app = TestApp::over(t);
    let v = &["OpenStack-API-Version: container-infra 1.10"];
    let template = json!({
        "name": "k8s", "coe": "kubernetes", "image_id": STATIC_IMAGE_NAME,
        "flavor_id": "m1.small", "master_flavor_id": "m1.medium",
        "external_network_id": "public", "keypair_id": "default",
        "labels": {"kube_tag": "v1.30.4"},
    });
    let steps = [
        Step("POST /v1/clustertemplates", template, v),
        Step("GET /v1/clustertemplates/k8s", Value::Null, v),
        Step("GET /v1/clustertemplates", Value::Null, v),
        Step(
            "POST /v1/clusters",
            json!({"name": "c1", "cluster_template_id": "k8s", "master_count": 1, "node_count": 2}),
            v,
        ),
        Step("GET /v1/clusters/c1", Value::Null, v),
        Step("GET /v1/clusters/c1/nodegroups", Value::Null, v),
        Step("GET /v1/clusters/nope", Value::Null, v),
        Step(
            "PATCH /v1/clusters/c1",
            json!([{"op": "replace", "path": "/name", "value": "c2"}]),
            v,
        ),
        Step("DELETE /v1/clustertemplates/k8s", Value::Null, v),
    ];
    insta::assert_json_snapshot!(transcript(&app, &steps).await);
}
