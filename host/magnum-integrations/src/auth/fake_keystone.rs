//! An in-process Keystone for the tests: `POST` and `GET /v3/auth/tokens`
//! answered like Keystone, from an in-memory set of user tokens.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State as AxumState;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use chrono::{DateTime, Utc};
use http::{HeaderMap, Method, StatusCode};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinHandle;

use tokio_native_tls::native_tls;

use super::testing::{FakeClock, TestPki};

/// A TLS listener for `axum::serve`: a connection whose handshake fails
/// (the client refused the certificate) is dropped.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: tokio_native_tls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_native_tls::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// The fake's state, shared with the test.
pub(crate) struct State {
    /// User tokens: token → `{"token": {...}}` body.
    pub(crate) tokens: HashMap<String, String>,
    /// Service tokens GET accepts.
    pub(crate) service_tokens: HashSet<String>,
    /// Lifetime of the service tokens issued.
    pub(crate) service_ttl: Duration,
    /// The password the service user must present.
    pub(crate) password: String,
    /// The last POST body (to check the scope sent).
    pub(crate) last_auth_body: Option<serde_json::Value>,
    /// The status forced on every GET, when set.
    pub(crate) force_status: Option<StatusCode>,
    /// Service tokens issued.
    pub(crate) issued: usize,
    /// GET /v3/auth/tokens calls.
    pub(crate) validations: usize,
    /// When set, a GET waits for a permit after counting itself.
    pub(crate) gate: Option<Arc<Semaphore>>,
}

struct Shared {
    state: Mutex<State>,
    clock: FakeClock,
    /// Notified when a GET arrives.
    entered: Notify,
}

/// A running fake Keystone, stopped when dropped.
pub(crate) struct FakeKeystone {
    /// `http://127.0.0.1:<port>` (no `/v3`).
    pub(crate) url: String,
    shared: Arc<Shared>,
    server: JoinHandle<()>,
}

impl Drop for FakeKeystone {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl FakeKeystone {
    pub(crate) async fn start(clock: &FakeClock) -> Self {
        Self::start_with(clock, None).await
    }

    /// A fake Keystone serving HTTPS with the server certificate of `pki`.
    pub(crate) async fn start_tls(clock: &FakeClock, pki: &TestPki) -> Self {
        Self::start_with(clock, Some(pki)).await
    }

    async fn start_with(clock: &FakeClock, pki: Option<&TestPki>) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                tokens: HashMap::new(),
                service_tokens: HashSet::new(),
                service_ttl: Duration::from_secs(3600),
                password: "svc-secret".to_owned(),
                last_auth_body: None,
                force_status: None,
                issued: 0,
                validations: 0,
                gate: None,
            }),
            clock: clock.clone(),
            entered: Notify::new(),
        });
        let app = Router::new()
            .route("/v3/auth/tokens", any(serve))
            .fallback(|| async { StatusCode::NOT_FOUND })
            .with_state(shared.clone());
        let tcp = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
            Ok(l) => l,
            Err(e) => panic!("bind the fake Keystone: {e}"),
        };
        let addr = match tcp.local_addr() {
            Ok(a) => a,
            Err(e) => panic!("fake Keystone address: {e}"),
        };
        let (url, server) = match pki {
            None => (
                format!("http://{addr}"),
                tokio::spawn(async move {
                    let _ = axum::serve(tcp, app).await;
                }),
            ),
            Some(pki) => {
                let identity =
                    native_tls::Identity::from_pkcs8(&pki.server_cert_pem, &pki.server_key_pem)
                        .and_then(native_tls::TlsAcceptor::new);
                let acceptor = match identity {
                    Ok(a) => tokio_native_tls::TlsAcceptor::from(a),
                    Err(e) => panic!("TLS acceptor: {e}"),
                };
                let listener = TlsListener { tcp, acceptor };
                (
                    format!("https://{addr}"),
                    tokio::spawn(async move {
                        let _ = axum::serve(listener, app).await;
                    }),
                )
            }
        };
        Self {
            url,
            shared,
            server,
        }
    }

    /// The state, to read or change it.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn add_token(&self, token: &str, body: String) {
        self.state().tokens.insert(token.to_owned(), body);
    }

    pub(crate) fn revoke(&self, token: &str) {
        self.state().tokens.remove(token);
    }

    pub(crate) fn revoke_service_tokens(&self) {
        self.state().service_tokens.clear();
    }

    pub(crate) fn set_password(&self, pw: &str) {
        self.state().password = pw.to_owned();
    }

    pub(crate) fn set_force_status(&self, s: Option<StatusCode>) {
        self.state().force_status = s;
    }

    /// (service tokens issued, validations).
    pub(crate) fn counts(&self) -> (usize, usize) {
        let s = self.state();
        (s.issued, s.validations)
    }

    /// Waits until a GET has arrived.
    pub(crate) async fn entered(&self) {
        self.shared.entered.notified().await;
    }
}

async fn serve(
    AxumState(f): AxumState<Arc<Shared>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    match method {
        Method::POST => {
            let Ok(body) = serde_json::from_slice::<serde_json::Value>(&body) else {
                return StatusCode::BAD_REQUEST.into_response();
            };
            let mut s = f.state.lock().unwrap_or_else(|e| e.into_inner());
            let pw = body["auth"]["identity"]["password"]["user"]["password"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            s.last_auth_body = Some(body);
            if pw != s.password {
                return json(
                    StatusCode::UNAUTHORIZED,
                    r#"{"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}}"#
                        .to_owned(),
                );
            }
            s.issued += 1;
            let tok = format!("svc-{}", s.issued);
            s.service_tokens.insert(tok.clone());
            let exp = keystone_time(f.clock.now() + s.service_ttl);
            let mut resp = json(
                StatusCode::CREATED,
                format!(r#"{{"token": {{"expires_at": "{exp}"}}}}"#),
            );
            if let Ok(v) = tok.parse() {
                resp.headers_mut().insert("x-subject-token", v);
            }
            resp
        }
        Method::GET => {
            let gate = {
                let mut s = f.state.lock().unwrap_or_else(|e| e.into_inner());
                s.validations += 1;
                s.gate.clone()
            };
            f.entered.notify_one();
            if let Some(gate) = gate {
                let _permit = gate.acquire().await;
            }
            let s = f.state.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(status) = s.force_status {
                return status.into_response();
            }
            if !s.service_tokens.contains(&header("x-auth-token")) {
                return StatusCode::UNAUTHORIZED.into_response();
            }
            match s.tokens.get(&header("x-subject-token")) {
                Some(body) => json(StatusCode::OK, body.clone()),
                None => json(
                    StatusCode::NOT_FOUND,
                    r#"{"error": {"code": 404, "message": "Could not find token.", "title": "Not Found"}}"#.to_owned(),
                ),
            }
        }
        _ => StatusCode::METHOD_NOT_ALLOWED.into_response(),
    }
}

fn json(status: StatusCode, body: String) -> Response {
    (
        status,
        [(http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// Keystone's form of a time: `2026-11-30T04:31:08.000000Z`.
pub(crate) fn keystone_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// A project-scoped token body as Keystone 30 returns it (trimmed catalog).
pub(crate) fn project_token_body(expires: DateTime<Utc>, roles: &[&str]) -> String {
    let roles: Vec<serde_json::Value> = roles
        .iter()
        .enumerate()
        .map(|(i, r)| serde_json::json!({"id": format!("role{i}"), "name": r}))
        .collect();
    let roles = serde_json::Value::Array(roles);
    let exp = keystone_time(expires);
    format!(
        r#"{{"token": {{"methods": ["password"], "user": {{"domain": {{"id": "default", "name": "Default"}},
  "id": "a0e636a8193048bea3f51a47d9cee816", "name": "demo", "password_expires_at": null}},
  "audit_ids": ["6iU3AHxqTyWqEihG6gNNig"], "expires_at": "{exp}",
  "issued_at": "2026-11-30T03:31:08.000000Z",
  "project": {{"domain": {{"id": "default", "name": "Default"}}, "id": "8585326e93214d8094c1e0729223f18c", "name": "demo"}},
  "is_domain": false, "roles": {roles},
  "catalog": [{{"endpoints": [{{"id": "5aa6", "interface": "public", "region_id": "RegionOne",
    "url": "http://127.0.0.1:9511/v1", "region": "RegionOne"}}], "id": "c1", "type": "container-infra", "name": "magnum"}}]}}}}"#
    )
}
