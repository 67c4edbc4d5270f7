//! Tests of the Keystone authenticator against the in-process fake Keystone.

use std::sync::Arc;
use std::time::Duration;

use http::header::WWW_AUTHENTICATE;
use http::{HeaderMap, HeaderValue, StatusCode};
use magnum_domain::RequestContext;

use super::*;
use crate::auth::cache::NEGATIVE_CACHE_TIME;
use crate::auth::fake_keystone::{FakeKeystone, project_token_body};
use crate::auth::responses::UNAUTHORIZED_BODY;
use crate::auth::testing::{FakeClock, TestPki, admin_role, body_of, fields, headers};
use crate::auth::{AuthErrorKind, REQUEST_ID_HEADER};

const HOUR: Duration = Duration::from_secs(3600);

fn settings(f: &FakeKeystone, token_cache_time: i64) -> KeystoneSettings {
    KeystoneSettings {
        auth_url: format!("{}/v3/", f.url),
        username: "magnum".into(),
        password: "svc-secret".into(),
        project_name: Some("service".into()),
        user_domain_name: Some("Default".into()),
        token_cache_time,
        timeout: Some(Duration::from_secs(5)),
        ..Default::default()
    }
}

fn keystone(f: &FakeKeystone, clock: &FakeClock, token_cache_time: i64) -> Keystone {
    keystone_with(settings(f, token_cache_time), clock)
}

fn keystone_with(s: KeystoneSettings, clock: &FakeClock) -> Keystone {
    match Keystone::with_clock(s, admin_role(), clock.clock(), MAX_ENTRIES) {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    }
}

fn with_token(token: &str) -> HeaderMap {
    headers(&[("X-Auth-Token", token)])
}

async fn ok(k: &Keystone, h: &HeaderMap) -> RequestContext {
    match k.authenticate(h).await {
        Ok(c) => c,
        Err(e) => panic!("authenticate: {e}"),
    }
}

async fn err(k: &Keystone, h: &HeaderMap) -> AuthError {
    match k.authenticate(h).await {
        Ok(c) => panic!("authenticated: {c:?}"),
        Err(e) => e,
    }
}

async fn setup(token_cache_time: i64) -> (FakeClock, FakeKeystone, Keystone) {
    let clock = FakeClock::new();
    let f = FakeKeystone::start(&clock).await;
    let k = keystone(&f, &clock, token_cache_time);
    (clock, f, k)
}

// Go: TestAuthenticateBuildsContext.
#[tokio::test]
async fn authenticate_builds_the_context() {
    let (clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    let exp = clock.now() + HOUR;
    f.add_token("user-token", project_token_body(exp, &["reader", "member"]));
    let h = headers(&[
        ("X-Auth-Token", " user-token "),
        (
            REQUEST_ID_HEADER,
            "req-4b2b0d6e-1c3e-4d7a-9f61-3f1e2f6c1a11",
        ),
    ]);
    let mut got = ok(&k, &h).await;
    let catalog: serde_json::Value =
        serde_json::from_slice(got.service_catalog.as_deref().unwrap_or_default())
            .unwrap_or_default();
    assert_eq!(catalog[0]["type"], "container-infra", "the token's catalog");
    got.service_catalog = None;
    let want = RequestContext {
        request_id: "req-4b2b0d6e-1c3e-4d7a-9f61-3f1e2f6c1a11".into(),
        auth_token: Some("user-token".into()),
        user_id: "a0e636a8193048bea3f51a47d9cee816".into(),
        user_name: "demo".into(),
        user_domain_id: "default".into(),
        user_domain_name: "Default".into(),
        project_id: "8585326e93214d8094c1e0729223f18c".into(),
        project_name: "demo".into(),
        project_domain_id: "default".into(),
        roles: vec!["reader".into(), "member".into()],
        token_expires_unix: exp.timestamp(),
        ..Default::default()
    };
    assert_eq!(fields(&got), fields(&want));

    // The service user authenticated with the configured scope.
    let body = f.state().last_auth_body.clone().unwrap_or_default();
    assert_eq!(body["auth"]["scope"]["project"]["name"], "service");
    assert_eq!(body["auth"]["scope"]["project"]["domain"]["id"], "default");
    assert_eq!(
        body["auth"]["identity"]["password"]["user"]["domain"]["name"],
        "Default"
    );
    assert_eq!(
        body["auth"]["identity"]["password"]["user"]["name"],
        "magnum"
    );
}

#[tokio::test]
async fn service_scope_by_ids() {
    let clock = FakeClock::new();
    let f = FakeKeystone::start(&clock).await;
    let k = keystone_with(
        KeystoneSettings {
            project_id: Some("p-id".into()),
            user_domain_id: Some("d-id".into()),
            user_domain_name: Some("ignored".into()),
            ..settings(&f, DEFAULT_TOKEN_CACHE_TIME)
        },
        &clock,
    );
    assert!(k.check().await.is_ok());
    let body = f.state().last_auth_body.clone().unwrap_or_default();
    assert_eq!(
        body["auth"]["scope"],
        serde_json::json!({"project": {"id": "p-id"}})
    );
    assert_eq!(
        body["auth"]["identity"]["password"]["user"]["domain"],
        serde_json::json!({"id": "d-id"})
    );
    // Without a project the token is unscoped.
    let k = keystone_with(
        KeystoneSettings {
            project_name: None,
            ..settings(&f, DEFAULT_TOKEN_CACHE_TIME)
        },
        &clock,
    );
    assert!(k.check().await.is_ok());
    let body = f.state().last_auth_body.clone().unwrap_or_default();
    assert!(body["auth"].get("scope").is_none(), "{body}");
}

// Go: TestTokenCache/"a cached token is not validated again".
#[tokio::test]
async fn a_cached_token_is_not_validated_again() {
    let (clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.add_token("tok", project_token_body(clock.now() + HOUR, &["member"]));
    for i in 0..3 {
        let id = format!("req-{i}");
        let mut c = ok(
            &k,
            &headers(&[("X-Auth-Token", "tok"), (REQUEST_ID_HEADER, &id)]),
        )
        .await;
        assert_eq!(c.request_id, id, "per-request fields are refreshed");
        assert_eq!(c.auth_token.as_deref(), Some("tok"));
        c.roles[0] = "mutated".into(); // must not leak into the cache
    }
    assert_eq!(f.counts(), (1, 1), "issued and validations");
    let c = ok(&k, &with_token("tok")).await;
    assert_eq!(
        c.roles,
        vec!["member"],
        "cached roles were modified by a caller"
    );
    assert_eq!(c.request_id, "");
}

// Go: TestTokenCache/"a revoked token stays valid until its cache entry ends".
#[tokio::test]
async fn a_revoked_token_stays_valid_until_its_cache_entry_ends() {
    let (clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.add_token("tok", project_token_body(clock.now() + HOUR, &["member"]));
    ok(&k, &with_token("tok")).await;
    f.revoke("tok");
    clock.advance(Duration::from_secs(DEFAULT_TOKEN_CACHE_TIME as u64 - 1));
    ok(&k, &with_token("tok")).await;
    clock.advance(Duration::from_secs(1));
    let e = err(&k, &with_token("tok")).await;
    assert_eq!(
        e.kind(),
        AuthErrorKind::InvalidToken,
        "after the cache time: {e}"
    );
    assert_eq!(f.counts().1, 2, "validations");
}

// Go: TestTokenCache/"a cache entry never outlives the token".
#[tokio::test]
async fn a_cache_entry_never_outlives_the_token() {
    let (clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.add_token(
        "tok",
        project_token_body(clock.now() + Duration::from_secs(60), &["member"]),
    );
    ok(&k, &with_token("tok")).await;
    clock.advance(Duration::from_secs(61));
    let e = err(&k, &with_token("tok")).await;
    assert_eq!(e.kind(), AuthErrorKind::InvalidToken);
    assert!(e.to_string().contains("expired"), "{e}");
}

// Go: TestTokenCache/"a negative cache time disables the cache".
#[tokio::test]
async fn a_negative_cache_time_disables_the_cache() {
    let (clock, f, k) = setup(-1).await;
    f.add_token("tok", project_token_body(clock.now() + HOUR, &["member"]));
    for _ in 0..3 {
        ok(&k, &with_token("tok")).await;
    }
    assert_eq!(f.counts().1, 3, "validations");
    assert_eq!(k.cache_len().await, 0);
}

// keystonemiddleware reads token_cache_time = 0 as memcached's "no expiry":
// the entry lasts until the token expires.
#[tokio::test]
async fn a_zero_cache_time_keeps_tokens_until_they_expire() {
    let (clock, f, k) = setup(0).await;
    f.add_token("tok", project_token_body(clock.now() + HOUR, &["member"]));
    ok(&k, &with_token("tok")).await;
    clock.advance(HOUR - Duration::from_secs(1));
    ok(&k, &with_token("tok")).await;
    assert_eq!(f.counts().1, 1, "validations");
    clock.advance(Duration::from_secs(2));
    assert_eq!(
        err(&k, &with_token("tok")).await.kind(),
        AuthErrorKind::InvalidToken
    );
    assert_eq!(f.counts().1, 2, "validations");
}

// Go: TestTokenCache/"a rejection is cached for a few seconds only".
#[tokio::test]
async fn a_rejection_is_cached_for_a_few_seconds_only() {
    let (clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    for _ in 0..2 {
        assert_eq!(
            err(&k, &with_token("bogus")).await.kind(),
            AuthErrorKind::InvalidToken
        );
    }
    assert_eq!(f.counts().1, 1, "validations");
    clock.advance(NEGATIVE_CACHE_TIME);
    f.add_token("bogus", project_token_body(clock.now() + HOUR, &["member"]));
    ok(&k, &with_token("bogus")).await;
}

// Go: TestServiceToken/"is renewed before it expires".
#[tokio::test]
async fn the_service_token_is_renewed_before_it_expires() {
    let (clock, f, k) = setup(-1).await;
    f.add_token(
        "tok",
        project_token_body(clock.now() + 24 * HOUR, &["member"]),
    );
    ok(&k, &with_token("tok")).await;
    clock.advance(HOUR - SERVICE_TOKEN_MARGIN - Duration::from_secs(1));
    ok(&k, &with_token("tok")).await;
    assert_eq!(f.counts().0, 1, "still within the margin: issued");
    clock.advance(Duration::from_secs(2));
    ok(&k, &with_token("tok")).await;
    assert_eq!(f.counts().0, 2, "issued");
}

// Go: TestServiceToken/"is replaced once when Keystone answers 401".
#[tokio::test]
async fn the_service_token_is_replaced_once_when_keystone_answers_401() {
    let (clock, f, k) = setup(-1).await;
    f.add_token("tok", project_token_body(clock.now() + HOUR, &["member"]));
    ok(&k, &with_token("tok")).await;
    f.revoke_service_tokens();
    ok(&k, &with_token("tok")).await;
    assert_eq!(f.counts(), (2, 3), "issued and validations");
}

// Go: TestServiceToken/"a persistent 401 makes Keystone unavailable".
#[tokio::test]
async fn a_persistent_401_makes_keystone_unavailable() {
    let (_clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.set_force_status(Some(StatusCode::UNAUTHORIZED));
    let e = err(&k, &with_token("tok")).await;
    assert_eq!(e.kind(), AuthErrorKind::KeystoneUnavailable, "{e}");
    assert_eq!(f.counts(), (2, 2), "issued and validations");
}

// Go: TestServiceToken/"rejected service credentials make Keystone unavailable".
#[tokio::test]
async fn rejected_service_credentials_make_keystone_unavailable() {
    let (_clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.set_password("something else");
    let e = err(&k, &with_token("tok")).await;
    assert_eq!(e.kind(), AuthErrorKind::KeystoneUnavailable, "{e}");
    assert!(!e.to_string().contains("svc-secret"), "{e}");
}

// Go: TestAuthenticateErrors (the table, and only well-formed tokens reach
// Keystone).
#[tokio::test]
async fn authentication_errors() {
    let (_clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    let mut non_ascii = HeaderMap::new();
    non_ascii.insert(
        "x-auth-token",
        HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap_or(HeaderValue::from_static("x")),
    );
    let long = "a".repeat(MAX_TOKEN_LENGTH + 1);
    let cases: Vec<(&str, HeaderMap, AuthErrorKind)> = vec![
        ("no token", HeaderMap::new(), AuthErrorKind::MissingToken),
        ("blank token", with_token("  "), AuthErrorKind::MissingToken),
        (
            "unknown token",
            with_token("gAAAAABnope"),
            AuthErrorKind::InvalidToken,
        ),
        (
            "unknown X-Storage-Token",
            headers(&[("X-Storage-Token", "gAAAAABnope2")]),
            AuthErrorKind::InvalidToken,
        ),
        (
            "token with non-ASCII bytes",
            non_ascii,
            AuthErrorKind::InvalidToken,
        ),
        (
            "token too long",
            with_token(&long),
            AuthErrorKind::InvalidToken,
        ),
    ];
    for (name, h, want) in cases {
        let e = err(&k, &h).await;
        assert_eq!(e.kind(), want, "{name}: {e}");
        for v in h.values() {
            let tok = String::from_utf8_lossy(v.as_bytes()).trim().to_owned();
            assert!(
                tok.is_empty() || !e.to_string().contains(&tok),
                "{name}: error {e} contains the token"
            );
        }
    }
    assert_eq!(
        f.counts().1,
        2,
        "only well-formed tokens reach Keystone: validations"
    );
}

// Go: TestAuthenticateErrors/"X-Storage-Token is accepted".
#[tokio::test]
async fn x_storage_token_is_accepted() {
    let (clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.add_token(
        "storage",
        project_token_body(clock.now() + HOUR, &["member"]),
    );
    let c = ok(&k, &headers(&[("X-Storage-Token", "storage")])).await;
    assert_eq!(c.auth_token.as_deref(), Some("storage"));
    // X-Auth-Token comes first, even empty, as keystonemiddleware reads it.
    let e = err(
        &k,
        &headers(&[("X-Auth-Token", ""), ("X-Storage-Token", "storage")]),
    )
    .await;
    assert_eq!(e.kind(), AuthErrorKind::MissingToken);
}

// Go: TestAuthenticateErrors/"Keystone errors other than 404 make it
// unavailable and are not cached".
#[tokio::test]
async fn keystone_errors_other_than_404_make_it_unavailable_and_are_not_cached() {
    let (clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.add_token("good", project_token_body(clock.now() + HOUR, &["member"]));
    f.set_force_status(Some(StatusCode::INTERNAL_SERVER_ERROR));
    let e = err(&k, &with_token("good")).await;
    assert_eq!(e.kind(), AuthErrorKind::KeystoneUnavailable, "{e}");
    assert!(e.to_string().contains("500"), "{e}");
    f.set_force_status(None);
    ok(&k, &with_token("good")).await;
}

// Go: TestAuthenticateErrors/"a token body Keystone should never send is invalid".
#[tokio::test]
async fn a_token_body_keystone_should_never_send_is_invalid() {
    let (_clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.add_token("weird", r#"{"token": {"user": {"id": "u"}}}"#.to_owned());
    assert_eq!(
        err(&k, &with_token("weird")).await.kind(),
        AuthErrorKind::InvalidToken
    );
}

// The answers of errors.md §2.3 and keystonemiddleware's 503, end to end.
#[tokio::test]
async fn failures_are_answered_as_keystonemiddleware_does() {
    let (_clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    for h in [HeaderMap::new(), with_token("unknown")] {
        let resp = err(&k, &h).await.into_response(&h);
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
        let www = format!("Keystone uri=\"{}/v3/\"", f.url);
        assert_eq!(resp.headers()[WWW_AUTHENTICATE], www.as_str());
        assert_eq!(body_of(resp).await, UNAUTHORIZED_BODY);
    }
    f.set_force_status(Some(StatusCode::BAD_GATEWAY));
    let h = headers(&[("X-Auth-Token", "other"), ("Accept", "application/json")]);
    let resp = err(&k, &h).await.into_response(&h);
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        resp.headers()[http::header::CONTENT_TYPE],
        "application/json"
    );
    let body: serde_json::Value = serde_json::from_str(&body_of(resp).await).unwrap_or_default();
    assert_eq!(body["code"], "503 Service Unavailable");
}

#[tokio::test]
async fn www_authenticate_uri_is_the_configured_one() {
    let clock = FakeClock::new();
    let f = FakeKeystone::start(&clock).await;
    let k = keystone_with(
        KeystoneSettings {
            www_authenticate_uri: Some("https://keystone.example/v3".into()),
            ..settings(&f, DEFAULT_TOKEN_CACHE_TIME)
        },
        &clock,
    );
    let resp = err(&k, &HeaderMap::new())
        .await
        .into_response(&HeaderMap::new());
    assert_eq!(
        resp.headers()[WWW_AUTHENTICATE],
        r#"Keystone uri="https://keystone.example/v3""#
    );
}

// delay_auth_decision: keystonemiddleware passes the request on without an
// identity, and Magnum builds a context from the headers left.
#[tokio::test]
async fn delay_auth_decision_passes_failures_on_without_identity() {
    let clock = FakeClock::new();
    let f = FakeKeystone::start(&clock).await;
    let k = keystone_with(
        KeystoneSettings {
            delay_auth_decision: true,
            ..settings(&f, DEFAULT_TOKEN_CACHE_TIME)
        },
        &clock,
    );
    f.add_token("good", project_token_body(clock.now() + HOUR, &["admin"]));
    let c = ok(&k, &with_token("good")).await;
    assert_eq!(
        c.project_id, "8585326e93214d8094c1e0729223f18c",
        "a valid token keeps its identity"
    );
    assert!(c.is_admin);

    let anonymous = |token: Option<&str>, request_id: &str| RequestContext {
        request_id: request_id.into(),
        auth_token: token.map(str::to_owned),
        ..Default::default()
    };
    // Missing, invalid, and forged identity headers are not trusted.
    let h = headers(&[
        (REQUEST_ID_HEADER, "req-1"),
        ("X-Project-Id", "forged"),
        ("X-Roles", "admin"),
    ]);
    assert_eq!(fields(&ok(&k, &h).await), fields(&anonymous(None, "req-1")));
    assert_eq!(
        fields(&ok(&k, &with_token("bogus")).await),
        fields(&anonymous(Some("bogus"), ""))
    );
    // Keystone unavailable is deferred too.
    f.set_force_status(Some(StatusCode::INTERNAL_SERVER_ERROR));
    assert_eq!(
        fields(&ok(&k, &with_token("other")).await),
        fields(&anonymous(Some("other"), ""))
    );
}

// Go: TestKeystoneUnreachable.
#[tokio::test]
async fn an_unreachable_keystone_is_unavailable() {
    let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    };
    let url = match listener.local_addr() {
        Ok(a) => format!("http://{a}"),
        Err(e) => panic!("{e}"),
    };
    drop(listener);
    let clock = FakeClock::new();
    let k = keystone_with(
        KeystoneSettings {
            auth_url: url.clone(),
            username: "magnum".into(),
            password: "pw-do-not-print".into(),
            project_name: Some("service".into()),
            timeout: Some(Duration::from_secs(2)),
            ..Default::default()
        },
        &clock,
    );
    let e = err(&k, &with_token("tok")).await;
    assert_eq!(e.kind(), AuthErrorKind::KeystoneUnavailable, "{e}");
    assert_eq!(
        e.status(),
        StatusCode::SERVICE_UNAVAILABLE,
        "an unreachable Keystone maps to 503"
    );
    let e = err(&k, &with_token("")).await;
    assert_eq!(
        e.status(),
        StatusCode::UNAUTHORIZED,
        "a missing token maps to 401"
    );
    let msg = match k.check().await {
        Ok(()) => panic!("check succeeded"),
        Err(e) => e.to_string(),
    };
    assert!(
        msg.contains(&format!("{url}/v3"))
            && msg.to_lowercase().contains("connection refused")
            && !msg.contains("pw-do-not-print")
            && !msg.contains('\n'),
        "check error {msg:?} should be one line naming the URL and the cause, without the password"
    );
}

// Go: TestCheck.
#[tokio::test]
async fn check_authenticates_the_service_user() {
    let (_clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    if let Err(e) = k.check().await {
        panic!("{e}");
    }
    assert!(k.current_service_token().await.is_some());
    f.set_password("rotated");
    match k.check().await {
        Ok(()) => panic!("check succeeded with a rotated password"),
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains("401") && !msg.contains("svc-secret"), "{msg}");
        }
    }
}

// Go: TestNewKeystone.
#[test]
fn settings_are_checked() {
    let base = || KeystoneSettings {
        username: "u".into(),
        password: "p".into(),
        ..Default::default()
    };
    let cases = [
        ("no auth_url", base()),
        (
            "not http",
            KeystoneSettings {
                auth_url: "ftp://x".into(),
                ..base()
            },
        ),
        (
            "no password",
            KeystoneSettings {
                auth_url: "http://127.0.0.1:5000".into(),
                password: String::new(),
                ..base()
            },
        ),
        (
            "missing cafile",
            KeystoneSettings {
                auth_url: "https://127.0.0.1:5000".into(),
                cafile: Some("/nonexistent/ca.pem".into()),
                ..base()
            },
        ),
        (
            "www_authenticate_uri with a quote",
            KeystoneSettings {
                auth_url: "http://127.0.0.1:5000".into(),
                www_authenticate_uri: Some("http://x/\"".into()),
                ..base()
            },
        ),
    ];
    for (name, s) in cases {
        match Keystone::new(s, admin_role()) {
            Ok(_) => panic!("{name}: no error"),
            Err(e) => assert!(!e.to_string().contains("password: \"p\""), "{name}: {e}"),
        }
    }
    let k = Keystone::new(
        KeystoneSettings {
            auth_url: "http://127.0.0.1:5000".into(),
            ..base()
        },
        admin_role(),
    );
    let k = k.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(k.base_url(), "http://127.0.0.1:5000/v3");
    assert_eq!(k.www_authenticate_uri(), "http://127.0.0.1:5000");
    let k = Keystone::new(
        KeystoneSettings {
            auth_url: "http://127.0.0.1:5000/v3/".into(),
            www_authenticate_uri: Some("https://keystone.example/v3".into()),
            ..base()
        },
        admin_role(),
    );
    let k = k.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(k.base_url(), "http://127.0.0.1:5000/v3");
    assert_eq!(k.www_authenticate_uri(), "https://keystone.example/v3");
    // Without auth_url, www_authenticate_uri names Keystone.
    let k = Keystone::new(
        KeystoneSettings {
            www_authenticate_uri: Some("http://127.0.0.1:5000/v3".into()),
            ..base()
        },
        admin_role(),
    );
    let k = k.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(k.base_url(), "http://127.0.0.1:5000/v3");
}

#[test]
fn cafile_must_hold_a_certificate() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let bad = dir.path().join("bad.pem");
    std::fs::write(&bad, "not a certificate\n").unwrap_or_else(|e| panic!("{e}"));
    let s = KeystoneSettings {
        auth_url: "https://127.0.0.1:5000".into(),
        username: "u".into(),
        password: "p".into(),
        cafile: Some(bad),
        ..Default::default()
    };
    match Keystone::new(s, admin_role()) {
        Ok(_) => panic!("a cafile without a certificate was accepted"),
        Err(e) => assert!(e.to_string().contains("no PEM certificate"), "{e}"),
    }
}

// cafile is the only trust for Keystone's certificate; insecure turns the
// verification off; without either, Keystone's certificate must chain to the
// system's roots.
#[tokio::test]
async fn cafile_and_insecure_decide_the_trust_in_keystones_certificate() {
    let clock = FakeClock::new();
    let pki = TestPki::new();
    let f = FakeKeystone::start_tls(&clock, &pki).await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap_or_else(|e| panic!("{e}"));
    let other = dir.path().join("other-ca.pem");
    std::fs::write(&other, TestPki::new().ca_pem).unwrap_or_else(|e| panic!("{e}"));
    let cases = [
        ("the CA of the certificate", Some(ca), false, true),
        ("another CA", Some(other), false, false),
        ("the system's roots", None, false, false),
        ("insecure", None, true, true),
    ];
    for (name, cafile, insecure, works) in cases {
        let k = keystone_with(
            KeystoneSettings {
                cafile,
                insecure,
                ..settings(&f, DEFAULT_TOKEN_CACHE_TIME)
            },
            &clock,
        );
        match k.check().await {
            Ok(()) => assert!(works, "{name}: Keystone's certificate was trusted"),
            Err(e) => {
                assert!(!works, "{name}: {e}");
                assert!(
                    e.to_string().contains("keystone unavailable"),
                    "{name}: {e}"
                );
            }
        }
    }
}

#[test]
fn settings_debug_redacts_the_password() {
    let s = KeystoneSettings {
        password: "hunter2-secret".into(),
        ..Default::default()
    };
    let shown = format!("{s:?}");
    assert!(
        !shown.contains("hunter2-secret") && shown.contains("<redacted>"),
        "{shown}"
    );
}

/// Authenticates the token `tok` from `callers` tasks at once: Keystone
/// holds the first validation while the other callers arrive (on this
/// single-threaded runtime they have all run by then), then answers.
async fn authenticate_together(
    f: &FakeKeystone,
    k: &Keystone,
    callers: usize,
) -> Vec<Result<Result<RequestContext, AuthError>, tokio::task::JoinError>> {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    f.state().gate = Some(gate.clone());
    let mut tasks = Vec::new();
    for _ in 0..callers {
        let k = k.clone();
        tasks.push(tokio::spawn(async move {
            k.authenticate(&with_token("tok")).await
        }));
    }
    f.entered().await;
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    gate.add_permits(100);
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await);
    }
    results
}

// Go: TestFlightSharesOneValidation — concurrent requests with one uncached
// token share one Keystone call and all get the identity.
#[tokio::test]
async fn concurrent_validations_share_one_keystone_call() {
    let (clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.add_token("tok", project_token_body(clock.now() + HOUR, &["member"]));
    for r in authenticate_together(&f, &k, 5).await {
        match r {
            Ok(Ok(c)) => assert_eq!(c.user_id, "a0e636a8193048bea3f51a47d9cee816"),
            other => panic!("caller got {other:?}"),
        }
    }
    assert_eq!(f.counts().1, 1, "validations");
}

// A failure of the shared validation reaches every caller and is not cached.
#[tokio::test]
async fn concurrent_callers_share_an_unavailable_keystone() {
    let (clock, f, k) = setup(DEFAULT_TOKEN_CACHE_TIME).await;
    f.add_token("tok", project_token_body(clock.now() + HOUR, &["member"]));
    f.set_force_status(Some(StatusCode::SERVICE_UNAVAILABLE));
    for r in authenticate_together(&f, &k, 4).await {
        match r {
            Ok(Err(e)) => assert_eq!(e.kind(), AuthErrorKind::KeystoneUnavailable),
            other => panic!("caller got {other:?}"),
        }
    }
    assert_eq!(f.counts().1, 1, "validations");
    f.set_force_status(None);
    ok(&k, &with_token("tok")).await;
    assert_eq!(f.counts().1, 2, "validations");
}
