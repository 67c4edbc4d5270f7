//! Tests against the real Keystone 30.0.0 of `scripts/ci/keystone.sh`, named
//! by `OPENKEEL_TEST_KEYSTONE_URL` and the users' passwords. They skip when
//! it is unset, and fail when `CI=true`.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use http::header::WWW_AUTHENTICATE;
use http::{HeaderMap, StatusCode};
use serde_json::json;

use super::keystone::Clock;
use super::keystonetest::Identity;
use super::responses::UNAUTHORIZED_BODY;
use super::testing::{admin_role, body_of, headers};
use super::{AuthErrorKind, Keystone, KeystoneSettings, REQUEST_ID_HEADER};

/// The authenticator's clock: the real time moved by an offset the test
/// sets (Keystone's tokens live an hour; the test does not wait for them).
#[derive(Clone, Default)]
struct OffsetClock(Arc<AtomicI64>);

impl OffsetClock {
    fn clock(&self) -> Clock {
        let offset = self.0.clone();
        Arc::new(move || Utc::now() + chrono::TimeDelta::seconds(offset.load(Ordering::SeqCst)))
    }

    fn set(&self, to: DateTime<Utc>) {
        self.0
            .store((to - Utc::now()).num_seconds(), Ordering::SeqCst);
    }

    fn advance(&self, d: Duration) {
        self.0.fetch_add(d.as_secs() as i64, Ordering::SeqCst);
    }
}

/// The settings of the service user magnum (project service) at `auth_url`.
fn settings(id: &Identity, auth_url: &str, token_cache_time: i64) -> KeystoneSettings {
    KeystoneSettings {
        auth_url: auth_url.to_owned(),
        username: "magnum".into(),
        password: id.password("magnum").to_owned(),
        project_name: Some("service".into()),
        user_domain_name: Some("Default".into()),
        project_domain_name: Some("Default".into()),
        token_cache_time,
        timeout: Some(Duration::from_secs(20)),
        ..Default::default()
    }
}

/// An authenticator of the real Keystone, checked at once.
async fn authenticator(id: &Identity, token_cache_time: i64, clock: &OffsetClock) -> Keystone {
    authenticator_at(id, &id.url, token_cache_time, clock).await
}

async fn authenticator_at(
    id: &Identity,
    auth_url: &str,
    token_cache_time: i64,
    clock: &OffsetClock,
) -> Keystone {
    let k = Keystone::with_clock(
        settings(id, auth_url, token_cache_time),
        admin_role(),
        clock.clock(),
        10_000,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = k.check().await {
        panic!("{e}");
    }
    k
}

fn with_token(token: &str) -> HeaderMap {
    headers(&[("X-Auth-Token", token)])
}

/// Asserts keystonemiddleware's 401 for `h`.
async fn assert_401(k: &Keystone, h: &HeaderMap, want: AuthErrorKind, what: &str) -> String {
    let e = match k.authenticate(h).await {
        Ok(c) => panic!("{what}: authenticated: {c:?}"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), want, "{what}: {e}");
    let text = e.to_string();
    let resp = e.into_response(h);
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{what}");
    assert_eq!(
        resp.headers()[http::header::CONTENT_TYPE],
        "application/json",
        "{what}"
    );
    let www = format!("Keystone uri=\"{}\"", k.www_authenticate_uri());
    assert_eq!(resp.headers()[WWW_AUTHENTICATE], www.as_str(), "{what}");
    assert_eq!(body_of(resp).await, UNAUTHORIZED_BODY, "{what}");
    text
}

// Go: TestKeystoneIntegration/"a member token carries its project and roles".
#[tokio::test]
async fn a_member_token_carries_its_project_and_roles() {
    let Some(id) = Identity::new("a_member_token_carries_its_project_and_roles") else {
        return;
    };
    let k = authenticator(&id, -1, &OffsetClock::default()).await;
    let tok = id.project_token("demo", "demo").await;
    let h = headers(&[
        ("X-Auth-Token", &tok.token),
        (REQUEST_ID_HEADER, "req-integration"),
    ]);
    let c = k.authenticate(&h).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (
            c.project_id.as_str(),
            c.project_name.as_str(),
            c.project_domain_id.as_str(),
            c.user_id.as_str(),
            c.user_name.as_str(),
            c.user_domain_name.as_str()
        ),
        (
            tok.project_id.as_str(),
            "demo",
            "default",
            tok.user_id.as_str(),
            "demo",
            "Default"
        ),
        "identity"
    );
    assert!(
        c.has_role("member") && c.has_role("reader") && !c.has_role("admin") && !c.is_admin,
        "roles {:?}, is_admin {}: want member and reader, not admin",
        c.roles,
        c.is_admin
    );
    assert_eq!(c.request_id, "req-integration");
    assert_eq!(c.auth_token.as_deref(), Some(tok.token.as_str()));
    assert_eq!(c.token_expires_unix, tok.expires_at.timestamp());
    let catalog: serde_json::Value =
        serde_json::from_slice(c.service_catalog.as_deref().unwrap_or_default())
            .unwrap_or_default();
    let types: Vec<&str> = catalog
        .as_array()
        .map(|a| a.iter().filter_map(|s| s["type"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        types.contains(&"container-infra"),
        "catalog types {types:?}"
    );
}

// Go: TestKeystoneIntegration/"an admin project token is admin", "a
// system-scoped token has system scope all", "a domain-scoped token names its
// domain".
#[tokio::test]
async fn scopes_of_admin_tokens() {
    let Some(id) = Identity::new("scopes_of_admin_tokens") else {
        return;
    };
    let k = authenticator(&id, -1, &OffsetClock::default()).await;

    let tok = id.project_token("admin", "admin").await;
    let c = k
        .authenticate(&with_token(&tok.token))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        c.is_admin
            && c.project_name == "admin"
            && c.system_scope.is_empty()
            && c.domain_id.is_empty(),
        "project admin: {c:?}"
    );

    let tok = id.issue("admin", json!({"system": {"all": true}})).await;
    let c = k
        .authenticate(&with_token(&tok.token))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        c.system_scope == "all" && c.project_id.is_empty() && c.is_admin,
        "system scope: {c:?}"
    );

    let tok = id
        .issue("admin", json!({"domain": {"id": "default"}}))
        .await;
    let c = k
        .authenticate(&with_token(&tok.token))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        c.domain_id == "default"
            && c.domain_name == "Default"
            && c.project_id.is_empty()
            && c.system_scope.is_empty(),
        "domain scope: {c:?}"
    );
}

// Go: TestKeystoneIntegration/"a missing token is refused", "a malformed
// token is refused", "an expired token is refused"; each answered with
// keystonemiddleware's 401.
#[tokio::test]
async fn missing_malformed_and_expired_tokens_get_keystonemiddlewares_401() {
    let Some(id) =
        Identity::new("missing_malformed_and_expired_tokens_get_keystonemiddlewares_401")
    else {
        return;
    };
    let k = authenticator(&id, -1, &OffsetClock::default()).await;
    assert_401(
        &k,
        &HeaderMap::new(),
        AuthErrorKind::MissingToken,
        "missing",
    )
    .await;
    for bad in [
        "garbage",
        "gAAAAABpbm90LWEtZmVybmV0LXRva2Vu",
        &"x".repeat(300),
    ] {
        assert_401(
            &k,
            &with_token(bad),
            AuthErrorKind::InvalidToken,
            "malformed",
        )
        .await;
    }
    // Keystone issues tokens for [token]/expiration; the authenticator's
    // clock is moved past expires_at instead of waiting.
    let tok = id.project_token("admin", "admin").await;
    let clock = OffsetClock::default();
    let later = authenticator(&id, -1, &clock).await;
    clock.set(tok.expires_at + chrono::TimeDelta::seconds(1));
    let text = assert_401(
        &later,
        &with_token(&tok.token),
        AuthErrorKind::InvalidToken,
        "expired",
    )
    .await;
    assert!(text.contains("expired"), "{text}");
}

// Go: TestKeystoneIntegration/"a revoked token is refused once the cache no
// longer holds it".
#[tokio::test]
async fn a_revoked_token_is_refused_once_the_cache_no_longer_holds_it() {
    let Some(id) = Identity::new("a_revoked_token_is_refused_once_the_cache_no_longer_holds_it")
    else {
        return;
    };
    let uncached = authenticator(&id, -1, &OffsetClock::default()).await;
    let cached = authenticator(&id, 300, &OffsetClock::default()).await;
    let tok = id.project_token("admin", "admin").await;
    for k in [&uncached, &cached] {
        k.authenticate(&with_token(&tok.token))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    id.revoke(&tok.token).await;
    assert_401(
        &uncached,
        &with_token(&tok.token),
        AuthErrorKind::InvalidToken,
        "revoked",
    )
    .await;
    // Like keystonemiddleware: the cached validation stays good for
    // token_cache_time.
    if let Err(e) = cached.authenticate(&with_token(&tok.token)).await {
        panic!("with cache: {e}, want the cached identity");
    }
}

// Go: TestKeystoneIntegration/"a revoked service token is replaced".
#[tokio::test]
async fn a_revoked_service_token_is_replaced() {
    let Some(id) = Identity::new("a_revoked_service_token_is_replaced") else {
        return;
    };
    let k = authenticator(&id, -1, &OffsetClock::default()).await;
    let tok = id.project_token("admin", "admin").await;
    let svc = k.current_service_token().await.unwrap_or_default();
    id.revoke(&svc).await;
    k.authenticate(&with_token(&tok.token))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(
        k.current_service_token().await.unwrap_or_default(),
        svc,
        "the service token was not replaced"
    );
}

// Go: TestKeystoneIntegration/"application credential tokens are accepted
// unless restricted by access rules".
#[tokio::test]
async fn application_credential_tokens_are_accepted_unless_restricted() {
    let Some(id) = Identity::new("application_credential_tokens_are_accepted_unless_restricted")
    else {
        return;
    };
    let k = authenticator(&id, -1, &OffsetClock::default()).await;
    let demo = id.project_token("demo", "demo").await;
    let (plain, plain_id) = id.app_credential_token(&demo, None).await;
    let (restricted, restricted_id) = id
        .app_credential_token(
            &demo,
            Some(json!([{"service": "container-infra", "path": "/v1/clusters", "method": "GET"}])),
        )
        .await;
    let plain_result = k.authenticate(&with_token(&plain)).await;
    let restricted_result = k.authenticate(&with_token(&restricted)).await;
    id.delete_app_credential(&demo, &plain_id).await;
    id.delete_app_credential(&demo, &restricted_id).await;

    let c = plain_result.unwrap_or_else(|e| panic!("plain application credential: {e}"));
    assert!(
        c.project_id == demo.project_id && c.has_role("member"),
        "{c:?}"
    );
    // Refused by the check of the token body, not by Keystone.
    match restricted_result {
        Err(e) => assert!(
            e.kind() == AuthErrorKind::InvalidToken && e.to_string().contains("access rules"),
            "{e}"
        ),
        Ok(c) => panic!("restricted application credential accepted: {c:?}"),
    }
}

// Go: TestKeystoneIntegration/"wrong service credentials fail the start-up check".
#[tokio::test]
async fn wrong_service_credentials_fail_the_startup_check() {
    let Some(id) = Identity::new("wrong_service_credentials_fail_the_startup_check") else {
        return;
    };
    let s = KeystoneSettings {
        password: "not-the-password".into(),
        ..settings(&id, &id.url, -1)
    };
    let k = Keystone::new(s, admin_role()).unwrap_or_else(|e| panic!("{e}"));
    match k.check().await {
        Ok(()) => panic!("check succeeded with a wrong password"),
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains("keystone unavailable")
                    && msg.contains(&id.url)
                    && !msg.contains("not-the-password"),
                "{msg}"
            );
        }
    }
}

/// A reverse proxy in front of Keystone that counts the token validations
/// (`GET /v3/auth/tokens`) going through it.
struct CountingProxy {
    url: String,
    validations: Arc<AtomicUsize>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

#[derive(Clone)]
struct ProxyState {
    origin: String,
    client: reqwest::Client,
    validations: Arc<AtomicUsize>,
}

impl CountingProxy {
    async fn start(origin: String) -> Self {
        let validations = Arc::new(AtomicUsize::new(0));
        let state = ProxyState {
            origin,
            client: reqwest::Client::new(),
            validations: validations.clone(),
        };
        let app = Router::new().fallback(forward).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind the proxy: {e}"));
        let url = format!(
            "http://{}",
            listener.local_addr().unwrap_or_else(|e| panic!("{e}"))
        );
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url,
            validations,
            server,
        }
    }

    fn validations(&self) -> usize {
        self.validations.load(Ordering::SeqCst)
    }
}

async fn forward(State(p): State<ProxyState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map(|pq| pq.as_str())
        .unwrap_or("/")
        .to_owned();
    if parts.method == http::Method::GET && parts.uri.path() == "/v3/auth/tokens" {
        p.validations.fetch_add(1, Ordering::SeqCst);
    }
    let body = axum::body::to_bytes(body, 1 << 24)
        .await
        .unwrap_or_default();
    let mut headers = parts.headers.clone();
    headers.remove(http::header::HOST);
    let sent = p
        .client
        .request(parts.method.clone(), format!("{}{path}", p.origin))
        .headers(headers)
        .body(body)
        .send()
        .await;
    let Ok(resp) = sent else {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::BAD_GATEWAY;
        return r;
    };
    let status = resp.status();
    let mut headers = resp.headers().clone();
    let bytes: Bytes = resp.bytes().await.unwrap_or_default();
    headers.remove(http::header::TRANSFER_ENCODING);
    headers.remove(http::header::CONNECTION);
    let mut r = Response::new(Body::from(bytes));
    *r.status_mut() = status;
    *r.headers_mut() = headers;
    r
}

// A token is validated once per cache time, not once per request: counted by
// a proxy between the authenticator and Keystone, with the authenticator's
// clock moved past the cache time instead of waiting for it.
#[tokio::test]
async fn a_token_is_validated_once_per_cache_time() {
    let Some(id) = Identity::new("a_token_is_validated_once_per_cache_time") else {
        return;
    };
    let proxy = CountingProxy::start(id.origin()).await;
    let clock = OffsetClock::default();
    let cache_time = 60;
    let k = authenticator_at(&id, &format!("{}/v3", proxy.url), cache_time, &clock).await;
    let tok = id.project_token("demo", "demo").await;
    let h = with_token(&tok.token);
    for i in 0..20 {
        let c = k
            .authenticate(&h)
            .await
            .unwrap_or_else(|e| panic!("request {i}: {e}"));
        assert_eq!(c.project_id, tok.project_id);
    }
    assert_eq!(proxy.validations(), 1, "20 requests, one validation");

    clock.advance(Duration::from_secs(cache_time as u64 - 1));
    k.authenticate(&h).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(proxy.validations(), 1, "within the cache time");

    clock.advance(Duration::from_secs(1));
    for _ in 0..10 {
        k.authenticate(&h).await.unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        proxy.validations(),
        2,
        "after the cache time, one more validation"
    );

    // Concurrent requests with a new token share one validation.
    let fresh = id.project_token("demo", "demo").await;
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let k = k.clone();
        let h = with_token(&fresh.token);
        tasks.push(tokio::spawn(async move { k.authenticate(&h).await }));
    }
    for t in tasks {
        match t.await {
            Ok(Ok(c)) => assert_eq!(c.user_id, fresh.user_id),
            other => panic!("concurrent request: {other:?}"),
        }
    }
    assert_eq!(
        proxy.validations(),
        3,
        "16 concurrent requests, one validation"
    );

    // A rejected token is asked about once within the negative cache time.
    for _ in 0..5 {
        assert!(k.authenticate(&with_token("gAAAAABbogus")).await.is_err());
    }
    assert_eq!(
        proxy.validations(),
        4,
        "a bad token retried: one validation"
    );
}
