//! The cost of authenticating a request whose token is in the cache (the Go
//! implementation's `BenchmarkCacheHit`): header parsing, the SHA-256 key,
//! the cache lookup and the per-request copy of the context.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use chrono::Utc;
use criterion::{Criterion, criterion_group, criterion_main};
use openkeel_magnum::auth::{Keystone, KeystoneSettings};

/// A Keystone that issues a service token and knows one user token.
async fn fake_keystone() -> String {
    async fn tokens(method: Method) -> Response {
        let exp = (Utc::now() + Duration::from_secs(3600)).format("%Y-%m-%dT%H:%M:%S%.6fZ");
        match method {
            Method::POST => (
                StatusCode::CREATED,
                [("x-subject-token", "svc-1")],
                format!(r#"{{"token": {{"expires_at": "{exp}"}}}}"#),
            )
                .into_response(),
            _ => format!(
                r#"{{"token": {{"expires_at": "{exp}", "user": {{"id": "u1", "name": "demo", "domain": {{"id": "default", "name": "Default"}}}},
                  "project": {{"id": "p1", "name": "demo", "domain": {{"id": "default", "name": "Default"}}}},
                  "roles": [{{"id": "r1", "name": "reader"}}, {{"id": "r2", "name": "member"}}],
                  "catalog": [{{"endpoints": [{{"id": "5aa6", "interface": "public", "region_id": "RegionOne",
                    "url": "http://127.0.0.1:9511/v1", "region": "RegionOne"}}], "id": "c1", "type": "container-infra", "name": "magnum"}}]}}}}"#
            )
            .into_response(),
        }
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let url = format!(
        "http://{}",
        listener.local_addr().unwrap_or_else(|e| panic!("{e}"))
    );
    tokio::spawn(async move {
        let _ = axum::serve(
            listener,
            Router::new().route("/v3/auth/tokens", any(tokens)),
        )
        .await;
    });
    url
}

fn cache_hit(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let url = rt.block_on(fake_keystone());
    let settings = KeystoneSettings {
        auth_url: url,
        username: "magnum".into(),
        password: "svc-secret".into(),
        project_name: Some("service".into()),
        ..Default::default()
    };
    let k = Keystone::new(settings, Arc::new(|c| c.has_role("admin")))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut h = HeaderMap::new();
    h.insert(
        "x-auth-token",
        HeaderValue::from_static("gAAAAABnot-a-real-token"),
    );
    h.insert(
        "x-openstack-request-id",
        HeaderValue::from_static("req-4b2b0d6e-1c3e-4d7a-9f61-3f1e2f6c1a11"),
    );
    if let Err(e) = rt.block_on(k.authenticate(&h)) {
        panic!("priming the cache: {e}");
    }
    c.bench_function("auth/token_cache_hit", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    match k.authenticate(black_box(&h)).await {
                        Ok(ctx) => {
                            black_box(ctx);
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
                start.elapsed()
            })
        })
    });
}

criterion_group!(benches, cache_hit);
criterion_main!(benches);
