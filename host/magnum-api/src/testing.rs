//! The API with every handler over a real conductor, for tests that read
//! like transcripts: a request, the status and body, the rows it left.
//! The caller is given by headers (`X-Project-Id`, `X-User-Id`, `X-Roles`),
//! as in all-in-one; the policy is Magnum's defaults.

use std::sync::Arc;

use axum::body::Body;
use http::{HeaderValue, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

use super::routes::{self, Row};
use super::{Api, ApiOptions, Handlers, Services};
use crate::auth::{Authenticator, NoAuth};
use crate::conductor::testing::TestConductor;
use magnum_conductor::policy::{self, PolicySettings};

/// The application and the conductor fixture behind it.
pub struct TestApp {
    pub app: axum::Router,
    pub t: TestConductor,
}

/// An answer of the application.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON (panics when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body {:?}: {e}", String::from_utf8_lossy(&self.body)))
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A header's value, or `""`.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// An admin of project `p0`.
pub const ADMIN: &[&str] = &["X-Project-Id: p0", "X-User-Id: a1", "X-Roles: admin"];
/// A member of project `p1`.
pub const MEMBER: &[&str] = &[
    "X-Project-Id: p1",
    "X-User-Id: u1",
    "X-Roles: member,reader",
];

impl TestApp {
    /// The application over a fresh conductor fixture.
    pub async fn new() -> TestApp {
        TestApp::over(TestConductor::new().await)
    }

    /// The application over `t`.
    pub fn over(t: TestConductor) -> TestApp {
        TestApp::serving(t, routes::table())
    }

    /// The application serving the rows of `table` over `t`.
    pub fn serving(t: TestConductor, table: Vec<Row<Services>>) -> TestApp {
        let enforcer = Arc::new(
            policy::load(&PolicySettings::default()).expect("Magnum's default rules load"),
        );
        let e = enforcer.clone();
        let auth =
            Authenticator::NoAuth(NoAuth::new(Arc::new(move |ctx| policy::is_admin(&e, ctx))));
        let services = Services {
            conductor: t.conductor.clone(),
            enforcer,
        };
        let handlers = Handlers::new(table, services);
        let app = Api::new(ApiOptions::default(), Arc::new(auth), handlers).into_router();
        TestApp { app, t }
    }

    /// [`TestApp::call`] at microversion `version` (`"1.9"`; none when
    /// empty).
    pub async fn call_at(&self, version: &str, req: &str, body: &str, who: &[&str]) -> Answer {
        let v = format!("OpenStack-API-Version: container-infra {version}");
        let mut headers: Vec<&str> = who.to_vec();
        if !version.is_empty() {
            headers.push(&v);
        }
        self.call(req, body, &headers).await
    }

    /// Sends `METHOD /path?query` with a JSON body (empty for none) and
    /// `Name: value` headers; `Content-Type: application/json` is added to
    /// a body unless a header sets it.
    pub async fn call(&self, req: &str, body: &str, headers: &[&str]) -> Answer {
        let (method, target) = req.split_once(' ').expect("METHOD /path");
        let mut b = Request::builder()
            .method(method)
            .uri(target)
            .header("host", "localhost");
        let mut content_type = false;
        for h in headers {
            let (k, v) = h.split_once(": ").unwrap_or((h, ""));
            content_type |= k.eq_ignore_ascii_case("content-type");
            b = b.header(
                k,
                HeaderValue::from_bytes(v.as_bytes()).expect("header value"),
            );
        }
        if !body.is_empty() && !content_type {
            b = b.header("content-type", "application/json");
        }
        send(
            &self.app,
            b.body(Body::from(body.to_string())).expect("request"),
        )
        .await
    }
}

/// The answer of `app` to `req`, read to its end.
pub async fn send(app: &axum::Router, req: Request<Body>) -> Answer {
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    Answer {
        status,
        headers,
        body,
    }
}
