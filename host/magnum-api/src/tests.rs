//! The pipeline in isolation from the resource handlers: every route of the
//! table but the version documents is served by a test handler answering
//! `{"route": <id>}` unless a test installs its own. Ported from the Go
//! suite's api, routes and reference tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::response::Response;
use futures::future::BoxFuture;
use http::{HeaderMap, Request, StatusCode};
use magnum_domain::RequestContext;
use serde_json::{Value, json};
use tower::ServiceExt;

use super::*;
use crate::testing::{self, Answer};

/// Accepts the token "good", answers 503 for "down" and 401 otherwise.
struct FakeAuth;

impl Authenticator for FakeAuth {
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<RequestContext, Response>> {
        Box::pin(async move {
            let token = headers
                .get("x-auth-token")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let ctx = |user: &str, project: &str, roles: &[&str], admin: bool| RequestContext {
                user_id: user.into(),
                project_id: project.into(),
                roles: roles.iter().map(|r| r.to_string()).collect(),
                is_admin: admin,
                ..RequestContext::default()
            };
            match token {
                "good" => Ok(ctx("u1", "p1", &["reader", "member"], false)),
                "admin" => Ok(ctx("a1", "p0", &["admin"], true)),
                "down" => {
                    let mut r = Response::new(Body::from("down"));
                    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                    Err(r)
                }
                _ => {
                    let mut r = errors::json_response(
                        StatusCode::UNAUTHORIZED,
                        &json!({"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}),
                    );
                    r.headers_mut().insert(
                        "www-authenticate",
                        HeaderValue::from_static("Keystone uri=\"http://keystone:5000\""),
                    );
                    Err(r)
                }
            }
        })
    }
}

struct Harness {
    app: AxumRouter,
}

/// The checks of the pipeline's answers.
impl Answer {
    #[track_caller]
    fn expect(&self, status: u16, body: &str) {
        assert_eq!(self.status.as_u16(), status, "body {}", self.text());
        if !body.is_empty() {
            let want: Value = serde_json::from_str(body).expect("want body");
            assert_eq!(self.json(), want);
        }
    }

    /// Magnum's error body: one error with `code` (empty for WebOb's
    /// errors, else "client" or "server"), `title` and `detail`.
    #[track_caller]
    fn expect_error(&self, status: u16, code: &str, title: &str, detail: &str) {
        let body = json!({"errors": [{
            "request_id": "",
            "code": code,
            "status": status,
            "title": title,
            "detail": detail,
            "links": [],
        }]});
        self.expect(status, &body.to_string());
    }

    /// The four version headers, or none when `version` is empty.
    #[track_caller]
    fn expect_version_headers(&self, version: &str) {
        let got = [
            self.header("openstack-api-minimum-version"),
            self.header("openstack-api-maximum-version"),
            self.header("openstack-api-version"),
            self.header("vary"),
        ];
        let longv = format!("container-infrastructure-management {version}");
        let want = if version.is_empty() {
            ["", "", "", ""]
        } else {
            [
                "container-infrastructure-management 1.1",
                "container-infrastructure-management 1.14",
                longv.as_str(),
                "OpenStack-API-Version",
            ]
        };
        assert_eq!(got, want);
    }
}

/// The table with the version documents and every other route answering
/// `{"route": <id>}`.
fn echo_rows() -> Vec<Row<()>> {
    rows_answering(|id, _| json!({ "route": id }))
}

/// The table with the version documents and every other route answering
/// `answer` of its id and its path arguments.
fn rows_answering(answer: fn(&'static str, Vec<String>) -> Value) -> Vec<Row<()>> {
    let mut rows = routes::documents();
    rows.extend(routes::resources().into_iter().map(|r| {
        let id = r.route.id;
        r.route.untyped(move |(), c: Call<Vec<String>>| async move {
            Ok(errors::json_response(StatusCode::OK, &answer(id, c.path)))
        })
    }));
    rows
}

/// Serves the route `id` of `rows` with `handler` (which takes no path
/// argument) instead.
fn serve_with<F, Fut>(rows: &mut [Row<()>], id: &str, handler: F)
where
    F: Fn((), Call) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Response, ApiError>> + Send + 'static,
{
    let row = rows
        .iter_mut()
        .find(|r| r.route.id == id)
        .expect("a route of the table");
    *row = row.route.clone().to(handler);
}

fn sequential_ids() -> impl Fn() -> String + Send + Sync + 'static {
    let seq = AtomicUsize::new(0);
    move || {
        format!(
            "req-00000000-0000-4000-8000-{:012}",
            seq.fetch_add(1, Ordering::Relaxed) + 1
        )
    }
}

impl Harness {
    fn new() -> Harness {
        Harness::with(ApiOptions::default(), |_| {})
    }

    /// The pipeline over [`echo_rows`] with the changes of `custom`.
    fn with(options: ApiOptions, custom: impl FnOnce(&mut Vec<Row<()>>)) -> Harness {
        let mut rows = echo_rows();
        custom(&mut rows);
        let handlers = Handlers::new(rows, ());
        let api =
            Api::new(options, Arc::new(FakeAuth), handlers).with_request_ids(sequential_ids());
        Harness {
            app: api.into_router(),
        }
    }

    /// Sends "METHOD /path?query" with "Name: value" headers and a body.
    async fn call(&self, req: &str, body: &str, headers: &[&str]) -> Answer {
        let (method, target) = req.split_once(' ').expect("METHOD /path");
        let mut b = Request::builder().method(method).uri(target);
        let mut host = false;
        for h in headers {
            let (k, v) = h.split_once(": ").unwrap_or((h.trim_end_matches(':'), ""));
            host |= k.eq_ignore_ascii_case("host");
            b = b.header(
                k,
                HeaderValue::from_bytes(v.as_bytes()).expect("header value"),
            );
        }
        if !host {
            b = b.header("host", "example.com");
        }
        let req = b.body(Body::from(body.to_string())).expect("request");
        testing::send(&self.app, req).await
    }
}

const TOK: &str = "X-Auth-Token: good";
const ADMIN: &str = "X-Auth-Token: admin";
const WANT_JSON: &str = "Accept: application/json";
const JS: &str = "Content-Type: application/json";
const LATEST: &str = "OpenStack-API-Version: container-infra latest";

fn is_request_id(s: &str) -> bool {
    s.strip_prefix("req-")
        .and_then(|u| uuid::Uuid::parse_str(u).ok())
        .is_some_and(|u| u.get_version_num() == 4 && s.len() == 40)
}

#[tokio::test]
async fn every_answer_has_a_request_id() {
    let handlers = Handlers::new(echo_rows(), ());
    let api = Api::new(ApiOptions::default(), Arc::new(FakeAuth), handlers);
    let h = Harness {
        app: api.into_router(),
    };
    for req in [
        "GET /",
        "GET /v1/clusters",
        "GET /healthcheck",
        "GET /a/bogus",
        "PUT /v1/mservices",
    ] {
        let a = h.call(req, "", &[TOK]).await;
        assert!(
            is_request_id(a.header("x-openstack-request-id")),
            "{req}: {:?}",
            a.header("x-openstack-request-id")
        );
    }
    let a = h.call("GET /", "", &[]).await;
    let b = h.call("GET /", "", &[]).await;
    assert_ne!(
        a.header("x-openstack-request-id"),
        b.header("x-openstack-request-id")
    );
}

const ROOT: &str = r#"{"description":"Magnum is an OpenStack project which aims to provide container cluster management.",
  "name":"OpenStack Magnum API","versions":[{"id":"v1","links":[{"href":"http://localhost/v1/","rel":"self"}],
  "max_version":"1.14","min_version":"1.1","status":"CURRENT"}]}"#;

#[tokio::test]
async fn root_documents() {
    let h = Harness::new();
    // The root needs no token and has no version headers.
    let a = h.call("GET /", "", &["Host: localhost:80"]).await;
    a.expect(200, ROOT);
    a.expect_version_headers("");
    assert_eq!(a.header("content-length"), "287", "Magnum's exact body");
    assert_eq!(a.header("content-type"), "application/json");
    // It ignores a bad version header.
    h.call(
        "GET /",
        "",
        &["Host: localhost", "OpenStack-API-Version: bogus"],
    )
    .await
    .expect(200, ROOT);
    // /v1 needs no token and has version headers.
    for p in ["/v1", "/v1/"] {
        let a = h.call(&format!("GET {p}"), "", &[LATEST]).await;
        assert_eq!(a.status, 200, "{p}");
        a.expect_version_headers("1.14");
        assert_eq!(
            a.json()["clusters"][1]["href"],
            "http://example.com/clusters/"
        );
    }
    let a = h.call("GET /v1/", "", &["Host: localhost:80"]).await;
    assert_eq!(a.header("content-length"), "1560", "Magnum's exact body");
    // /v1.json and /.json pass auth but are not found.
    for p in ["/v1.json", "/.json"] {
        let a = h.call(&format!("GET {p}"), "", &[]).await;
        a.expect_error(404, "", "", "");
        a.expect_version_headers("");
    }
    // Other paths need a token.
    for p in ["/v1/clusters", "/clusters", "/bogus", "/v1/v1"] {
        let a = h.call(&format!("GET {p}"), "", &[]).await;
        a.expect(401, r#"{"error":{"code":401,"title":"Unauthorized","message":"The request you have made requires authentication."}}"#);
        assert_eq!(
            a.header("www-authenticate"),
            r#"Keystone uri="http://keystone:5000""#
        );
        a.expect_version_headers("");
    }
    // Keystone unavailable is the authenticator's 503.
    let a = h
        .call("GET /v1/clusters", "", &["X-Auth-Token: down"])
        .await;
    assert_eq!(a.status, 503);
    // POST on the root is a 405.
    let a = h.call("POST /", "", &[]).await;
    a.expect(405, "");
    assert_eq!(a.header("allow"), "GET");
}

#[tokio::test]
async fn auth_comes_before_version_negotiation() {
    let h = Harness::new();
    h.call("GET /v1/clusters", "", &["OpenStack-API-Version: bogus"])
        .await
        .expect(401, "");
    let a = h
        .call(
            "GET /v1/clusters",
            "",
            &[TOK, "OpenStack-API-Version: bogus"],
        )
        .await;
    a.expect_error(406, "", "", "");
    a.expect_version_headers("");
}

#[tokio::test]
async fn version_errors() {
    let h = Harness::new();
    let a = h
        .call(
            "GET /v1/clusters",
            "",
            &[
                TOK,
                WANT_JSON,
                "OpenStack-API-Version: container-infra 1.2.3",
            ],
        )
        .await;
    a.expect_error(
        406,
        "",
        "Not Acceptable",
        "Invalid value for OpenStack-API-Version header",
    );
    a.expect_version_headers("");
    h.call(
        "GET /v1/clusters",
        "",
        &[TOK, WANT_JSON, "OpenStack-API-Version: compute 1.2"],
    )
    .await
    .expect_error(
        406,
        "",
        "Not Acceptable",
        "Invalid service type for OpenStack-API-Version header",
    );
    // Out of range keeps the headers and echoes the version.
    let a = h
        .call(
            "GET /v1/clusters",
            "",
            &[TOK, "OpenStack-API-Version: container-infra 1.999"],
        )
        .await;
    a.expect(
        406,
        r#"{"errors":[{"code":"magnum.microversion-unsupported","links":[{"href":"http://docs.openstack.org/api-guide/compute/microversions.html","rel":"help"}],
          "max_version":"1.14","min_version":"1.1","title":"Requested microversion is unsupported"}]}"#,
    );
    a.expect_version_headers("1.999");
    // With a JSON Accept it has a description.
    let a = h
        .call(
            "GET /v1/clusters",
            "",
            &[
                TOK,
                WANT_JSON,
                "OpenStack-API-Version: container-infra 2.11",
            ],
        )
        .await;
    assert_eq!(
        a.json()["errors"][0]["description"],
        "Mutually exclusive versions requested. Version 2.11 requested but not supported by this service.The supported version range is: [container-infrastructure-management 1.1, container-infrastructure-management 1.14]."
    );
    // A handler below its minimum version.
    let a = h
        .call(
            "GET /v1/clusters/c1/nodegroups",
            "",
            &[TOK, "OpenStack-API-Version: container-infra 1.8"],
        )
        .await;
    a.expect_error(406, "", "", "");
    a.expect_version_headers("");
    h.call(
        "PATCH /v1/credentials/c1",
        "",
        &[
            TOK,
            WANT_JSON,
            "OpenStack-API-Version: container-infra 1.11",
        ],
    )
    .await
    .expect_error(
        406,
        "",
        "Not Acceptable",
        "Version 1.11 was requested but the requested API patch is not supported for this version.",
    );
    // An Accept without JSON.
    h.call("GET /v1/mservices", "", &[ADMIN, "Accept: application/xml"])
        .await
        .expect_error(406, "", "", "");
}

#[tokio::test]
async fn routing_errors() {
    let h = Harness::new();
    let a = h.call("GET /a/bogus/url", "", &[TOK]).await;
    a.expect_error(404, "", "", "");
    a.expect_version_headers("");
    h.call("GET /v1/bays", "", &[TOK, WANT_JSON])
        .await
        .expect_error(404, "", "Not Found", "");
    // Method not allowed lists the controller's methods.
    for (req, allow) in [
        ("PUT /v1/clusters", "DELETE, GET, PATCH, POST"),
        ("GET /v1/certificates", "GET, PATCH, POST"),
        ("POST /v1/mservices", "GET"),
        ("GET /v1/stats/x", "GET"),
        ("POST /v1/clusters/x/actions/scale", ""),
        ("HEAD /v1/clusters", "DELETE, GET, PATCH, POST"),
    ] {
        let a = h.call(req, "", &[TOK]).await;
        assert_eq!(a.status, 405, "{req}");
        assert_eq!(
            a.headers.get("allow").map(|v| v.to_str().unwrap()),
            Some(allow),
            "{req}"
        );
        a.expect_version_headers("");
    }
    // CORS turns a failed OPTIONS into an empty 200.
    assert_eq!(
        h.call("OPTIONS /v1/mservices", "", &[TOK]).await.status,
        200
    );
    h.call("PUT /v1/clusters", "", &[TOK, WANT_JSON])
        .await
        .expect_error(405, "", "Method Not Allowed", "");
    // Unprefixed paths are v1.
    let a = h.call("GET /mservices", "", &[ADMIN]).await;
    a.expect(200, r#"{"route":"magnum_service.get_all"}"#);
    a.expect_version_headers("1.1");
    // A collection DELETE misses the identifier.
    let a = h.call("DELETE /v1/clusters", "", &[TOK]).await;
    a.expect_error(
        400,
        "client",
        "Missing argument: \"cluster_ident\"",
        "Missing argument: \"cluster_ident\"",
    );
    a.expect_version_headers("1.1");
    let a = h.call("GET /v1/quotas/detail", "", &[TOK]).await;
    a.expect(400, "");
    assert!(
        a.text().contains(r#"Missing argument: \"resource\""#),
        "{}",
        a.text()
    );
    // A POST on a member path.
    let a = h
        .call("POST /v1/clustertemplates/x", "{}", &[TOK, JS])
        .await;
    a.expect_error(400, "client", "Invalid input for field/attribute cluster_template", "Invalid input for field/attribute cluster_template. Value: 'x'. unable to convert to ClusterTemplate. Error: ClusterTemplate.__init__() takes 1 positional argument but 2 were given");
    a.expect_version_headers("1.1");
}

/// Each row's handler is reached by a request of its method, pattern and
/// lowest microversion, with the path arguments the pattern declares.
#[tokio::test]
async fn every_route_reaches_its_own_handler_with_its_path_arguments() {
    let rows = rows_answering(|id, path| json!({ "route": id, "path": path }));
    let routes: Vec<Route> = rows.iter().skip(2).map(|r| r.route.clone()).collect();
    let app = Api::new(
        ApiOptions::default(),
        Arc::new(FakeAuth),
        Handlers::new(rows, ()),
    );
    let h = Harness {
        app: app.into_router(),
    };
    for r in routes {
        let values: Vec<String> = (1..=r.path_args().count())
            .map(|i| format!("a{i}"))
            .collect();
        let mut path = r.pattern.to_string();
        for (name, value) in r.path_args().zip(&values) {
            path = path.replace(&format!("{{{name}}}"), value);
        }
        let version = r
            .versions
            .map_or("1.1".to_string(), |(lo, _)| lo.to_string());
        let version = format!("OpenStack-API-Version: container-infra {version}");
        let body = match (r.body_arg, r.method.as_str()) {
            (Some(_), "PATCH") => "[]",
            (Some(_), _) => "{}",
            (None, _) => "",
        };
        let a = h
            .call(&format!("{} {path}", r.method), body, &[TOK, JS, &version])
            .await;
        a.expect(200, &json!({ "route": r.id, "path": values }).to_string());
    }
}

#[tokio::test]
async fn argument_checks() {
    let h = Harness::new();
    h.call("GET /v1/mservices?limit=1", "", &[ADMIN])
        .await
        .expect_error(
            400,
            "client",
            "Unknown argument: \"limit\"",
            "Unknown argument: \"limit\"",
        );
    // rollback is unknown before 1.3.
    h.call(
        "PATCH /v1/clusters/x?rollback=true",
        "[]",
        &[TOK, JS, "OpenStack-API-Version: container-infra 1.2"],
    )
    .await
    .expect(400, "");
    h.call(
        "PATCH /v1/clusters/x?rollback=true",
        "[]",
        &[TOK, JS, "OpenStack-API-Version: container-infra 1.3"],
    )
    .await
    .expect(200, r#"{"route":"cluster.patch@1.3"}"#);
    h.call(
        "POST /v1/clustertemplates",
        "<x/>",
        &[TOK, "Content-Type: application/xml"],
    )
    .await
    .expect_error(
        415,
        "client",
        "Unknown mimetype: application/xml",
        "Unknown mimetype: application/xml",
    );
    h.call("POST /v1/clustertemplates", "{", &[TOK, JS])
        .await
        .expect_error(
            400,
            "client",
            "Request is not in valid JSON format",
            "Request is not in valid JSON format",
        );
    // A body without a content type is a form.
    let a = h
        .call("POST /v1/clustertemplates", "image_id=x", &[TOK])
        .await;
    a.expect(400, "");
    assert!(a.text().contains(r#"Unknown argument: \"image_id\""#));
    // A handler without a body argument.
    h.call(
        "PATCH /v1/certificates/c1",
        r#"{"zeta": 1, "alpha": 2}"#,
        &[TOK, JS],
    )
    .await
    .expect_error(
        400,
        "client",
        "Unknown argument: \"zeta, alpha\"",
        "Unknown argument: \"zeta, alpha\"",
    );
    let a = h.call("PATCH /v1/certificates/c1", "[]", &[TOK, JS]).await;
    a.expect(400, "");
    assert!(a.text().contains("Request must be a JSON dict"));
    h.call("PATCH /v1/certificates/c1", "{}", &[TOK, JS])
        .await
        .expect(200, r#"{"route":"certificate.patch"}"#);
    // A body too large.
    let h = Harness::with(
        ApiOptions {
            max_body_bytes: 10,
            ..ApiOptions::default()
        },
        |_| {},
    );
    h.call(
        "POST /v1/clustertemplates",
        r#"{"name": "abcdefghijkl"}"#,
        &[TOK, JS],
    )
    .await
    .expect_error(
        413,
        "client",
        "Request is too large",
        "Request is too large.",
    );
}

#[tokio::test]
async fn healthcheck() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("disable");
    let h = Harness::with(
        ApiOptions {
            healthcheck_disable_file: Some(file.clone()),
            ..ApiOptions::default()
        },
        |_| {},
    );
    let a = h.call("GET /healthcheck", "", &[]).await;
    assert_eq!(
        (
            a.status.as_u16(),
            a.text().as_str(),
            a.header("content-type")
        ),
        (200, "OK", "text/plain; charset=UTF-8")
    );
    a.expect_version_headers("");
    assert!(
        is_request_id(a.header("x-openstack-request-id"))
            || !a.header("x-openstack-request-id").is_empty()
    );
    h.call("GET /healthcheck", "", &[WANT_JSON])
        .await
        .expect(200, r#"{"detailed":false,"reasons":["OK"]}"#);
    assert_eq!(h.call("HEAD /healthcheck", "", &[]).await.status, 204);
    std::fs::write(&file, b"").unwrap();
    let a = h.call("GET /healthcheck", "", &[]).await;
    assert_eq!(
        (a.status.as_u16(), a.text().as_str()),
        (503, "DISABLED BY FILE")
    );
    assert_eq!(a.header("content-length"), "16", "the reference's answer");
}

#[tokio::test]
async fn cors() {
    let options = ApiOptions {
        cors: CorsOptions {
            allowed_origin: vec!["https://dash.example.com".into()],
            ..CorsOptions::default()
        },
        ..ApiOptions::default()
    };
    let h = Harness::with(options, |_| {});
    // A preflight needs no token.
    let a = h
        .call(
            "OPTIONS /v1/clusters",
            "",
            &[
                "Origin: https://dash.example.com",
                "Access-Control-Request-Method: PATCH",
                "Access-Control-Request-Headers: X-Auth-Token, Content-Type",
            ],
        )
        .await;
    assert_eq!(
        (a.status.as_u16(), a.body.len(), a.header("content-type")),
        (200, 0, "")
    );
    for (k, v) in [
        ("access-control-allow-origin", "https://dash.example.com"),
        ("access-control-allow-credentials", "true"),
        ("access-control-max-age", "3600"),
        ("access-control-allow-methods", "PATCH"),
        ("access-control-allow-headers", "X-Auth-Token,Content-Type"),
        ("vary", "Origin"),
    ] {
        assert_eq!(a.header(k), v, "{k}");
    }
    assert!(!a.header("x-openstack-request-id").is_empty());
    // A preflight with a header not allowed.
    let a = h
        .call(
            "OPTIONS /v1/clusters",
            "",
            &[
                "Origin: https://dash.example.com",
                "Access-Control-Request-Method: GET",
                "Access-Control-Request-Headers: X-Evil",
            ],
        )
        .await;
    assert_eq!(
        (a.status.as_u16(), a.header("access-control-allow-origin")),
        (200, "")
    );
    // A simple request.
    let a = h
        .call(
            "GET /v1/mservices",
            "",
            &[ADMIN, "Origin: https://dash.example.com"],
        )
        .await;
    assert_eq!(a.status, 200);
    for (k, v) in [
        ("access-control-allow-origin", "https://dash.example.com"),
        (
            "access-control-expose-headers",
            "X-Auth-Token,X-Subject-Token,X-Service-Token,X-OpenStack-Request-ID,X-Server-Management-Url",
        ),
        ("vary", "OpenStack-API-Version,Origin"),
    ] {
        assert_eq!(a.header(k), v, "{k}");
    }
    // Another origin.
    assert_eq!(
        h.call("GET /", "", &["Origin: https://evil.example.com"])
            .await
            .header("access-control-allow-origin"),
        ""
    );
}

#[tokio::test]
async fn proxy_headers() {
    let href = |a: Answer| {
        a.json()["versions"][0]["links"][0]["href"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let off = Harness::new();
    assert_eq!(
        href(
            off.call(
                "GET /",
                "",
                &[
                    "X-Forwarded-Proto: https",
                    "X-Forwarded-Host: api.example.com"
                ]
            )
            .await
        ),
        "http://example.com/v1/",
        "proxy headers are ignored by default"
    );
    let on = Harness::with(
        ApiOptions {
            proxy_headers: true,
            ..ApiOptions::default()
        },
        |_| {},
    );
    for (headers, want) in [
        (
            vec![
                "X-Forwarded-Proto: https",
                "X-Forwarded-Host: api.example.com:443",
            ],
            "https://api.example.com/v1/",
        ),
        (
            vec![
                "Forwarded: for=1.2.3.4;proto=https;host=magnum.example.org, for=5.6.7.8",
                "X-Forwarded-Host: ignored",
            ],
            "https://magnum.example.org/v1/",
        ),
        (
            vec!["X-Forwarded-Prefix: /container-infra"],
            "http://example.com/container-infra/v1/",
        ),
    ] {
        assert_eq!(
            href(on.call("GET /", "", &headers).await),
            want,
            "{headers:?}"
        );
    }
}

#[tokio::test]
async fn panics_and_unexpected_errors_are_500s_logged_once() {
    let logs = test_support::logs::capture_json(tracing::Level::INFO);
    let h = Harness::with(ApiOptions::default(), |rows| {
        serve_with(rows, "cluster.get_all", |(), _c| async {
            panic!("secret internal state")
        });
        serve_with(rows, "cluster.detail", |(), _c| async {
            Err(ApiError::Internal(anyhow::anyhow!("db password wrong")))
        });
    });
    for req in ["GET /v1/clusters", "GET /v1/clusters/detail"] {
        let a = h.call(req, "", &[TOK]).await;
        a.expect_error(
            500,
            "server",
            "An unknown exception occurred",
            "An unknown exception occurred.",
        );
        assert!(!a.header("x-openstack-request-id").is_empty());
    }
    let text = logs.text();
    assert_eq!(text.lines().count(), 2, "one log line per failure:\n{text}");
    assert!(text.lines().all(|l| l.contains("req-")), "{text}");
}

#[tokio::test]
async fn next_links_follow_the_proxy_headers() {
    let h = Harness::with(
        ApiOptions {
            proxy_headers: true,
            ..ApiOptions::default()
        },
        |rows| {
            serve_with(rows, "cluster.get_all", |(), c| async move {
                let next = versions::next_link(
                    &c.base_url,
                    "clusters",
                    &[("sort_key", "id"), ("sort_dir", "asc")],
                    3,
                    "m1",
                );
                Ok(errors::json_response(
                    StatusCode::OK,
                    &json!({ "next": next }),
                ))
            });
        },
    );
    h.call("GET /v1/clusters", "", &[TOK, "X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com"])
        .await
        .expect(200, r#"{"next":"https://api.example.com/v1/clusters?sort_key=id&sort_dir=asc&limit=3&marker=m1"}"#);
}

#[tokio::test]
async fn detail_with_a_marker_in_the_path() {
    let seen: Arc<Mutex<Option<(String, bool)>>> = Arc::default();
    let s = seen.clone();
    let h = Harness::with(ApiOptions::default(), move |rows| {
        serve_with(rows, "cluster_template.detail", move |(), c| {
            let s = s.clone();
            async move {
                *s.lock().unwrap() = Some((
                    c.query.text("marker").unwrap_or("").to_string(),
                    c.marker_in_path,
                ));
                Ok(errors::json_response(StatusCode::OK, &json!({})))
            }
        });
    });
    const U: &str = "4695611e-3049-49d0-8c7d-af52116c437b";
    h.call(&format!("GET /v1/clustertemplates/{U}/detail"), "", &[TOK])
        .await
        .expect(200, "{}");
    assert_eq!(seen.lock().unwrap().clone(), Some((U.to_string(), true)));
    h.call("GET /v1/clustertemplates/abc/detail", "", &[TOK]).await.expect_error(400, "client", "Invalid input for field/attribute marker", "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc.");
}

#[tokio::test]
async fn query_conversion() {
    let got: Arc<Mutex<Vec<Value>>> = Arc::default();
    let (g1, g2) = (got.clone(), got.clone());
    let h = Harness::with(ApiOptions::default(), move |rows| {
        serve_with(rows, "cluster.get_all", move |(), c| {
            let g = g1.clone();
            async move {
                *g.lock().unwrap() =
                    vec![json!(c.query.int("limit")), json!(c.query.text("sort_key"))];
                Ok(errors::json_response(StatusCode::OK, &json!({})))
            }
        });
        serve_with(rows, "quota.get_all", move |(), c| {
            let g = g2.clone();
            async move {
                *g.lock().unwrap() = vec![json!(c.query.bool("all_tenants"))];
                Ok(errors::json_response(StatusCode::OK, &json!({})))
            }
        });
    });
    for (req, want) in [
        (
            "GET /v1/clusters?limit=abc",
            "Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'",
        ),
        (
            "GET /v1/clusters?limit=1&limit=2",
            "Invalid input for field/attribute limit. Value: '['1', '2']'. unable to convert to int. Error: int() argument must be a string, a bytes-like object or a real number, not 'list'",
        ),
        (
            "GET /v1/clusters?marker=abc&limit=x",
            "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc.",
        ),
        (
            "GET /v1/clusters?foo=1&limit=x",
            "Invalid input for field/attribute limit. Value: 'x'. unable to convert to int. Error: invalid literal for int() with base 10: 'x'",
        ),
        (
            "GET /v1/quotas?all_tenants=maybe",
            "Invalid input for field/attribute all_tenants. Value: 'maybe'. unable to convert to boolean. Error: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
        ),
    ] {
        let a = h.call(req, "", &[TOK]).await;
        assert_eq!(a.status, 400, "{req}");
        assert_eq!(a.json()["errors"][0]["detail"], want, "{req}");
    }
    h.call("GET /v1/clusters?limit=+1_0&sort_key=name", "", &[TOK])
        .await
        .expect(200, "{}");
    assert_eq!(*got.lock().unwrap(), vec![json!(10), json!("name")]);
    h.call("GET /v1/quotas?all_tenants=Yes", "", &[TOK])
        .await
        .expect(200, "{}");
    assert_eq!(*got.lock().unwrap(), vec![json!(true)]);
}

/// (request, body, headers, status, Allow ("-" for none), detail, versioned).
type QuirkCase<'a> = (&'a str, &'a str, &'a [&'a str], u16, &'a str, &'a str, bool);

/// Requests whose answers were observed on the reference application
/// (Magnum 23.0.0 under pecan/WSME): routing quirks, argument checks and
/// their order. Only the pipeline is involved.
#[tokio::test]
async fn reference_quirks() {
    let h = Harness::new();
    // (request, body, headers, status, Allow ("-" for none), detail, versioned)
    let cases: &[QuirkCase] = &[
        ("HEAD /", "", &[], 405, "GET", "", false),
        (
            "GET /?foo=1",
            "",
            &[],
            400,
            "-",
            r#"Unknown argument: "foo""#,
            false,
        ),
        (
            "GET /v1/?foo=1",
            "",
            &[],
            400,
            "-",
            r#"Unknown argument: "foo""#,
            true,
        ),
        (
            "POST /v1/clusters/x",
            "{}",
            &[JS],
            400,
            "-",
            "Invalid input for field/attribute cluster. Value: 'x'. unable to convert to Cluster. Error: Cluster.__init__() takes 1 positional argument but 2 were given",
            true,
        ),
        (
            "POST /v1/clusters/detail",
            "{}",
            &[JS],
            400,
            "-",
            "Value: 'detail'. unable to convert to Cluster.",
            true,
        ),
        (
            "POST /v1/quotas/p",
            "{}",
            &[JS],
            400,
            "-",
            "unable to convert to Quota. Error: Quota.__init__() takes 1 positional argument but 2 were given",
            true,
        ),
        ("POST /v1/quotas/p/r", "{}", &[JS], 404, "-", "", false),
        (
            "POST /v1/clusters/x/nodegroups/y",
            "{}",
            &[JS, LATEST],
            400,
            "-",
            "unable to convert to NodeGroup.",
            true,
        ),
        (
            "POST /v1/clusters/x/actions/resize/y",
            "{}",
            &[JS],
            405,
            "",
            "",
            false,
        ),
        (
            "DELETE /v1/clusters",
            "",
            &[],
            400,
            "-",
            r#"Missing argument: "cluster_ident""#,
            true,
        ),
        (
            "DELETE /v1/quotas/p",
            "",
            &[],
            400,
            "-",
            r#"Missing argument: "resource""#,
            true,
        ),
        (
            "DELETE /v1/clusters?foo=1",
            "",
            &[],
            400,
            "-",
            r#"Unknown argument: "foo""#,
            true,
        ),
        (
            "GET /v1/clusters//",
            "",
            &[],
            400,
            "-",
            r#"Missing argument: "cluster_ident""#,
            true,
        ),
        (
            "GET /v1/quotas/detail",
            "",
            &[],
            400,
            "-",
            r#"Missing argument: "resource""#,
            true,
        ),
        (
            "GET /v1/certificates",
            "",
            &[],
            405,
            "GET, PATCH, POST",
            "",
            false,
        ),
        (
            "GET /v1/credentials",
            "",
            &[LATEST],
            405,
            "PATCH",
            "",
            false,
        ),
        ("GET /v1/stats/x", "", &[], 405, "GET", "", false),
        (
            "GET /v1/clusters/x/actions",
            "",
            &[LATEST],
            405,
            "",
            "",
            false,
        ),
        ("GET /v1/clusters/x/y", "", &[], 404, "-", "", false),
        (
            "GET /v1/clusters/x/nodegroups/y/z",
            "",
            &[LATEST],
            404,
            "-",
            "",
            false,
        ),
        (
            "PUT /v1/clusters/x",
            "{}",
            &[JS],
            405,
            "DELETE, GET, PATCH, POST",
            "",
            false,
        ),
        ("OPTIONS /v1/clusters", "", &[], 200, "-", "", false),
        ("GET /v1/.json", "", &[], 404, "-", "", false),
        (
            "GET /v1/clusters?limit=1&limit=2",
            "",
            &[],
            400,
            "-",
            "Invalid input for field/attribute limit. Value: '['1', '2']'. unable to convert to int. Error: int() argument must be a string, a bytes-like object or a real number, not 'list'",
            true,
        ),
        (
            "GET /v1/clusters?foo=1&bar=2",
            "",
            &[],
            400,
            "-",
            r#"Unknown argument: "foo, bar""#,
            true,
        ),
        (
            "GET /v1/clusters?foo=1&limit=x",
            "",
            &[],
            400,
            "-",
            "Invalid input for field/attribute limit. Value: 'x'. unable to convert to int. Error: invalid literal for int() with base 10: 'x'",
            true,
        ),
        (
            "GET /v1/clusters?role=a&role=b",
            "",
            &[],
            400,
            "-",
            r#"Unknown argument: "role""#,
            true,
        ),
        (
            "GET /v1/clusters?marker=abc&limit=x",
            "",
            &[],
            400,
            "-",
            "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc.",
            true,
        ),
        (
            "GET /v1/clusters/detail?marker=1",
            "",
            &[],
            400,
            "-",
            "Expected a uuid but received 1.",
            true,
        ),
        (
            "GET /v1/clusters/abc/detail",
            "",
            &[],
            400,
            "-",
            "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc.",
            true,
        ),
        (
            "GET /v1/federations/abc/detail",
            "",
            &[],
            400,
            "-",
            "Expected a uuid but received abc.",
            true,
        ),
        (
            "GET /v1/quotas?marker=abc",
            "",
            &[],
            400,
            "-",
            "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'",
            true,
        ),
        (
            "GET /v1/stats?foo=1",
            "",
            &[],
            400,
            "-",
            r#"Unknown argument: "foo""#,
            true,
        ),
        (
            "GET /v1/clusters?foo=5",
            "",
            &["Accept: application/xml"],
            406,
            "-",
            "",
            false,
        ),
        (
            "GET /v1/clusters",
            "",
            &["Accept: */*;q=0"],
            406,
            "-",
            "",
            false,
        ),
        (
            "GET /v1/clusters/x/nodegroups?foo=1",
            "",
            &["OpenStack-API-Version: container-infra 1.8"],
            406,
            "-",
            "",
            false,
        ),
        (
            "GET /v1/clusters/x/nodegroups/y",
            "",
            &["OpenStack-API-Version: container-infra 1.8", WANT_JSON],
            406,
            "-",
            "Version 1.8 was requested but the requested API get_one is not supported for this version.",
            false,
        ),
        (
            "PATCH /v1/clusters/x",
            "a=b",
            &["Content-Type: application/x-www-form-urlencoded"],
            400,
            "-",
            r#"Unknown argument: "a""#,
            true,
        ),
        (
            "PATCH /v1/certificates/c1",
            r#"{"zeta": 1, "alpha": 2}"#,
            &[JS],
            400,
            "-",
            r#"Unknown argument: "zeta, alpha""#,
            true,
        ),
        (
            "PATCH /v1/certificates/c1",
            "[]",
            &[JS],
            400,
            "-",
            "Request must be a JSON dict",
            true,
        ),
        (
            "GET /v1/mservices",
            r#"{"a": 1}"#,
            &[JS],
            400,
            "-",
            r#"Unknown argument: "a""#,
            true,
        ),
        (
            "GET /v1/mservices",
            "  ",
            &[JS],
            400,
            "-",
            "Request is not in valid JSON format",
            true,
        ),
        (
            "POST /v1/clustertemplates",
            "{}",
            &["Content-Type: Application/JSON"],
            415,
            "-",
            "Unknown mimetype: Application/JSON",
            true,
        ),
        (
            "GET /v1/clusters",
            "",
            &["OpenStack-API-Version: container-infra 1.1_0"],
            200,
            "-",
            "",
            true,
        ),
        (
            "GET /v1/clusters",
            "",
            &["OpenStack-API-Version: ", WANT_JSON],
            406,
            "-",
            "Invalid service type for OpenStack-API-Version header",
            false,
        ),
        (
            "POST /v1/clusters/x/actions",
            "{}",
            &[JS],
            406,
            "-",
            "",
            false,
        ),
        (
            "POST /v1/clusters/x/actions",
            "{}",
            &[JS, LATEST],
            405,
            "",
            "",
            false,
        ),
        (
            "GET /v1/clusters/x/actions/resize",
            "",
            &[LATEST],
            405,
            "",
            "",
            false,
        ),
        (
            "GET /v1/clusters/x/actions/resize",
            "",
            &["OpenStack-API-Version: container-infra 1.6"],
            406,
            "-",
            "",
            false,
        ),
        (
            "PATCH /v1/clusters/x/actions/resize",
            "{}",
            &[JS, LATEST],
            405,
            "",
            "",
            false,
        ),
        (
            "POST /v1/clusters/x/actions/resize",
            "{}",
            &[JS, WANT_JSON, "OpenStack-API-Version: container-infra 1.6"],
            406,
            "-",
            "Version 1.6 was requested but the requested API resize is not supported for this version.",
            false,
        ),
        (
            "DELETE /v1/clusters/x/nodegroups",
            "",
            &[LATEST],
            400,
            "-",
            r#"Missing argument: "nodegroup_id""#,
            true,
        ),
        (
            "PATCH /v1/credentials",
            "",
            &[LATEST],
            400,
            "-",
            r#"Missing argument: "cluster_ident""#,
            true,
        ),
        ("GET /v1/credentials/x", "", &[], 406, "-", "", false),
        (
            "POST /v1/credentials/x",
            "{}",
            &[JS, LATEST],
            405,
            "PATCH",
            "",
            false,
        ),
        ("GET /v1/mservices/x", "", &[], 405, "GET", "", false),
        ("POST /v1/stats", "{}", &[JS], 405, "GET", "", false),
        ("GET /v1/clustertemplates/x/y", "", &[], 404, "-", "", false),
        ("DELETE /v1/quotas/p/r/x", "", &[], 404, "-", "", false),
        ("GET /v1/quotas/p/r/x", "", &[], 404, "-", "", false),
        ("GET /v1/federations/x/y", "", &[], 404, "-", "", false),
        (
            "PATCH /v1/certificates",
            "",
            &[],
            400,
            "-",
            r#"Missing argument: "cluster_ident""#,
            true,
        ),
        (
            "POST /v1/certificates/x",
            "{}",
            &[JS],
            400,
            "-",
            "unable to convert to Certificate.",
            true,
        ),
        (
            "POST /v1/federations/x",
            "{}",
            &[JS],
            400,
            "-",
            "unable to convert to Federation.",
            true,
        ),
    ];
    for (req, body, headers, status, allow, detail, versioned) in cases {
        let mut hs = vec![ADMIN];
        hs.extend_from_slice(headers);
        let a = h.call(req, body, &hs).await;
        assert_eq!(a.status.as_u16(), *status, "{req}: {}", a.text());
        match (*allow, a.headers.get("allow")) {
            ("-", None) => {}
            ("-", Some(v)) => panic!("{req}: unexpected Allow {v:?}"),
            (want, got) => assert_eq!(got.map(|v| v.to_str().unwrap()), Some(want), "{req}: Allow"),
        }
        if !detail.is_empty() {
            assert!(
                a.text().contains(&detail.replace('"', "\\\"")),
                "{req}: body {}\nwant detail containing {detail}",
                a.text()
            );
        }
        assert_eq!(
            !a.header("openstack-api-version").is_empty(),
            *versioned,
            "{req}: version headers"
        );
    }
}

/// Header bytes are Latin-1 to WSGI: a raw 0xA0 is a no-break space, which
/// Python's `str.split()` splits on.
#[tokio::test]
async fn a_latin1_no_break_space_separates_the_version() {
    let h = Harness::new();
    let req = Request::builder()
        .uri("/v1/clusters")
        .header("host", "example.com")
        .header("x-auth-token", "admin")
        .header(
            "openstack-api-version",
            HeaderValue::from_bytes(b"container-infra\xa01.2").unwrap(),
        )
        .body(Body::empty())
        .unwrap();
    let resp = h.app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["openstack-api-version"],
        "container-infrastructure-management 1.2"
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        /// Arbitrary paths, queries, headers and bodies through the whole
        /// pipeline: nothing panics (the recovery layer would turn it into a
        /// 500) and every answer carries a request id.
        #[test]
        fn no_input_breaks_the_pipeline(
            method in prop::sample::select(vec!["GET", "POST", "PATCH", "DELETE", "PUT", "OPTIONS", "HEAD", "FOO"]),
            path in "(/[a-z0-9.%_-]{0,12}){0,6}/?",
            query in "[a-z_=&%0-9.+-]{0,24}",
            version in "[a-z -]{0,24}[0-9._ -]{0,6}|latest",
            accept in "[a-z/*;=.0-9, ]{0,20}",
            body in ".{0,64}",
            ct in prop::sample::select(vec!["", "application/json", "text/plain", "application/x-www-form-urlencoded"]),
        ) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let a = rt.block_on(async {
                let h = Harness::with(ApiOptions { max_body_bytes: 1 << 10, ..ApiOptions::default() }, |_| {});
                let target = if query.is_empty() { path.clone() } else { format!("{path}?{query}") };
                let target = if target.starts_with('/') { target } else { format!("/{target}") };
                let v = format!("OpenStack-API-Version: {version}");
                let acc = format!("Accept: {accept}");
                let c = format!("Content-Type: {ct}");
                let mut headers = vec![ADMIN, v.as_str(), acc.as_str()];
                if !ct.is_empty() { headers.push(c.as_str()); }
                if http::Uri::try_from(target.as_str()).is_err() { return None; }
                Some(h.call(&format!("{method} {target}"), &body, &headers).await)
            });
            if let Some(a) = a {
                prop_assert_ne!(a.status.as_u16(), 500, "{}", a.text());
                prop_assert!(!a.header("x-openstack-request-id").is_empty());
            }
        }
    }
}

/// A body over the limit is read to its end before the 413 (so a client
/// still sending it reads the answer), whether its length was declared or
/// not; one past the drain bound, or from a client waiting for
/// `100 Continue`, is not read.
#[tokio::test]
async fn refused_bodies_are_drained_within_bounds() {
    fn counted(chunks: usize, size: usize) -> (Body, Arc<AtomicUsize>) {
        let polled = Arc::new(AtomicUsize::new(0));
        let p = polled.clone();
        let stream = futures::stream::iter((0..chunks).map(move |_| {
            p.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>(Bytes::from(vec![b'x'; size]))
        }));
        (Body::from_stream(stream), polled)
    }
    let refused = |r: Result<Option<Bytes>, ApiError>| match r {
        Err(ApiError::Magnum(e)) => e.status,
        other => panic!("not refused: {:?}", other.map(|b| b.map(|b| b.len()))),
    };
    // Not declared: the limit is found while reading, the rest drained.
    let (body, polled) = counted(8, 1024);
    assert_eq!(refused(read_body(&HeaderMap::new(), body, 1000).await), 413);
    assert_eq!(polled.load(Ordering::SeqCst), 8);
    // Declared too large: drained without keeping it.
    let mut declared = HeaderMap::new();
    declared.insert(http::header::CONTENT_LENGTH, "8192".parse().unwrap());
    let (body, polled) = counted(8, 1024);
    assert_eq!(refused(read_body(&declared, body, 1000).await), 413);
    assert_eq!(polled.load(Ordering::SeqCst), 8);
    // Waiting for 100 Continue: nothing read.
    let mut waiting = declared.clone();
    waiting.insert(http::header::EXPECT, "100-continue".parse().unwrap());
    let (body, polled) = counted(8, 1024);
    assert_eq!(refused(read_body(&waiting, body, 1000).await), 413);
    assert_eq!(polled.load(Ordering::SeqCst), 0);
    // Declared past the drain bound: not read.
    let mut huge = HeaderMap::new();
    huge.insert(
        http::header::CONTENT_LENGTH,
        (DRAIN_MAX_BYTES + 1).to_string().parse().unwrap(),
    );
    let (body, polled) = counted(8, 1024);
    assert_eq!(refused(read_body(&huge, body, 1000).await), 413);
    assert_eq!(polled.load(Ordering::SeqCst), 0);
    // Within the limit: the whole body.
    let (body, _) = counted(2, 100);
    let got = read_body(&HeaderMap::new(), body, 1000).await;
    assert_eq!(got.ok().flatten().map(|b| b.len()), Some(200));
}
