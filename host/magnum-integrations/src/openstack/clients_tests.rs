//! How [`Clients`] reaches the services: endpoint selection, the caller's
//! token and request id, timeouts, and the TLS settings.

use std::time::Duration;

use magnum_domain::RequestContext;
use openkeel_magnum_osfake::{Fault, Service};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::testing::*;
use super::{
    Clients, ClientsSettings, DEFAULT_TIMEOUT, EndpointSettings, Lookup, LookupError, Session,
    SessionSettings,
};
use crate::auth::testing::TestPki;

fn endpoint_type(t: &str) -> EndpointSettings {
    EndpointSettings {
        endpoint_type: t.to_owned(),
        ..Default::default()
    }
}

fn region(r: &str) -> EndpointSettings {
    EndpointSettings {
        region_name: Some(r.to_owned()),
        ..Default::default()
    }
}

fn fixed(e: String) -> EndpointSettings {
    EndpointSettings {
        endpoint: Some(e),
        ..Default::default()
    }
}

// Go: TestClientsEndpointSelection/publicURL by default.
#[tokio::test]
async fn public_url_by_default_with_the_request_id_and_user_agent() {
    let h = Harness::new().await;
    if let Err(e) = h.clients.keypair(&h.ctx, "mykey").await {
        panic!("{e}");
    }
    let c = &h.fake.calls()[0];
    assert_eq!(c.interface, "public");
    assert_eq!(c.header("x-openstack-request-id"), Some(REQUEST_ID));
    assert!(
        c.header("user-agent")
            .is_some_and(|ua| ua.starts_with("openkeel-magnum")),
        "User-Agent = {:?}",
        c.header("user-agent")
    );
}

// Go: TestClientsEndpointSelection/a request ID of another form is not forwarded.
#[tokio::test]
async fn a_request_id_of_another_form_is_not_forwarded() {
    let mut h = Harness::new().await;
    h.ctx.request_id = "not-a-request-id".to_owned();
    if let Err(e) = h.clients.keypair(&h.ctx, "mykey").await {
        panic!("{e}");
    }
    assert_eq!(h.fake.calls()[0].header("x-openstack-request-id"), None);
}

// Go: TestClientsEndpointSelection/endpoint_type per service.
#[tokio::test]
async fn endpoint_type_per_service() {
    let h = Harness::with(|cs, _| {
        cs.glance = endpoint_type("internalURL");
        cs.nova = endpoint_type("admin");
    })
    .await;
    assert!(h.clients.image(&h.ctx, IMAGE_UBUNTU).await.is_ok());
    assert!(h.clients.keypair(&h.ctx, "mykey").await.is_ok());
    assert!(
        h.clients
            .fixed_subnet(&h.ctx, "private-subnet")
            .await
            .is_ok()
    );
    let got: Vec<String> = h
        .fake
        .calls()
        .iter()
        .map(|c| format!("{} {}", c.service, c.interface))
        .collect();
    assert_eq!(got, ["image internal", "compute admin", "network public"]);
}

// Go: TestClientsEndpointSelection/region_name picks the region's endpoint.
#[tokio::test]
async fn region_name_picks_the_regions_endpoint() {
    let fake = start_fake(test_seed()).await;
    let clients = clients(
        session(SessionSettings::default()),
        ClientsSettings {
            nova: region("RegionOne"),
            ..Default::default()
        },
    );
    // RegionTwo is listed first; its URLs are not served by the double.
    let ctx = ctx_with(Some(fake.catalog_for_regions(&["RegionTwo", "RegionOne"])));
    if let Err(e) = clients.keypair(&ctx, "mykey").await {
        panic!("{e}");
    }
    // No region for Neutron: the first endpoint, in RegionTwo.
    let e = want_failed(clients.fixed_subnet(&ctx, "private-subnet").await);
    assert_eq!(e.status(), Some(404), "{e}");
}

// Go: TestClientsEndpointSelection/unknown region.
#[tokio::test]
async fn unknown_region() {
    let h = Harness::with(|cs, _| cs.neutron = region("RegionNine")).await;
    want_client_error(
        h.clients.external_network(&h.ctx, "public").await,
        403,
        "AuthorizationFailure",
        "neutron connection failed. unexpected client error occurred: publicURL endpoint for \
         network service in RegionNine region not found",
    );
}

// Go: TestClientsEndpointSelection/service missing from the catalog.
#[tokio::test]
async fn service_missing_from_the_catalog() {
    let mut h = Harness::with(|cs, _| cs.glance = endpoint_type("internalURL")).await;
    h.ctx.service_catalog = Some(br#"[{"type":"compute","endpoints":[]}]"#.to_vec());
    want_client_error(
        h.clients.image(&h.ctx, "x").await,
        403,
        "AuthorizationFailure",
        "glance connection failed. unexpected client error occurred: internalURL endpoint for \
         image service not found",
    );
}

// Go: TestClientsEndpointSelection/empty catalog.
#[tokio::test]
async fn empty_catalog() {
    let mut h = Harness::new().await;
    h.ctx.service_catalog = None;
    want_client_error(
        h.clients.flavor(&h.ctx, "m1.small").await,
        403,
        "AuthorizationFailure",
        "nova connection failed. unexpected client error occurred: The service catalog is empty.",
    );
}

const NO_TOKEN: &str = "keystone connection failed. reason Keystone API connection failed: no password or token found.";

// Go: TestClientsEndpointSelection/no token.
#[tokio::test]
async fn no_token() {
    let mut h = Harness::new().await;
    h.ctx.auth_token = None;
    want_client_error(
        h.clients.keypair(&h.ctx, "mykey").await,
        403,
        "AuthorizationFailure",
        NO_TOKEN,
    );
    assert!(
        h.fake.calls().is_empty(),
        "requests made without a token: {:?}",
        h.paths()
    );
}

// Go: TestClientsEndpointSelection/no request context (a context without
// identity: the request was not authenticated).
#[tokio::test]
async fn a_context_without_identity() {
    let h = Harness::new().await;
    want_client_error(
        h.clients.keypair(&RequestContext::default(), "mykey").await,
        403,
        "AuthorizationFailure",
        NO_TOKEN,
    );
}

// Go: TestClientsEndpointSelection/fixed endpoints replace the catalog.
#[tokio::test]
async fn fixed_endpoints_replace_the_catalog() {
    let fake = start_fake(test_seed()).await;
    let clients = clients(
        session(SessionSettings::default()),
        ClientsSettings {
            glance: fixed(format!("{}/v2", fake.endpoint(Service::Image, "internal"))),
            nova: fixed(fake.endpoint(Service::Compute, "admin")),
            neutron: fixed(fake.endpoint(Service::Network, "public")),
        },
    );
    let ctx = ctx_with(None);
    assert!(clients.image(&ctx, "ubuntu-jammy").await.is_ok());
    assert!(clients.flavor(&ctx, "m1.small").await.is_ok());
    assert!(clients.fixed_network(&ctx, "private").await.is_ok());
    let got: Vec<String> = fake
        .calls()
        .iter()
        .map(|c| format!("{} {c}", c.interface))
        .collect();
    assert_eq!(
        got,
        [
            "internal GET image /v2/images?name=ubuntu-jammy",
            "admin GET compute /v2.1/flavors/m1.small",
            "admin GET compute /v2.1/flavors/detail",
            "public GET network /v2.0/networks?name=private",
        ]
    );
}

// Go: TestClientsEndpointSelection/the caller's token is sent.
#[tokio::test]
async fn the_callers_token_is_sent() {
    let h = Harness::new().await;
    h.fake.require_token(Some("someone-else"));
    // A 401 from Nova is unexpected, as in Magnum.
    let e = want_failed(h.clients.keypair(&h.ctx, "mykey").await);
    assert_eq!(e.status(), Some(401), "{e}");
}

#[tokio::test]
async fn the_endpoint_cache_serves_repeated_lookups() {
    let h = Harness::new().await;
    for _ in 0..3 {
        assert!(h.clients.keypair(&h.ctx, "mykey").await.is_ok());
    }
    assert_eq!(h.clients.endpoint_cache().catalogs(), 1);
    assert_eq!(h.fake.calls().len(), 3);
}

// Go: TestClientsTimeout.
#[tokio::test]
async fn every_lookup_gives_up_after_the_timeout() {
    type Call = for<'a> fn(
        &'a Clients,
        &'a RequestContext,
    ) -> futures::future::BoxFuture<'a, Result<(), LookupError>>;
    let cases: [(&str, Service, Call); 6] = [
        ("image", Service::Image, |c, x| {
            Box::pin(async move { c.image(x, "ubuntu-jammy").await.map(drop) })
        }),
        ("flavor", Service::Compute, |c, x| {
            Box::pin(async move { c.flavor(x, "m1.small").await.map(drop) })
        }),
        ("keypair", Service::Compute, |c, x| {
            Box::pin(async move { c.keypair(x, "mykey").await.map(drop) })
        }),
        ("external network", Service::Network, |c, x| {
            Box::pin(async move { c.external_network(x, "public").await.map(drop) })
        }),
        ("fixed network", Service::Network, |c, x| {
            Box::pin(async move { c.fixed_network(x, "private").await.map(drop) })
        }),
        ("fixed subnet", Service::Network, |c, x| {
            Box::pin(async move { c.fixed_subnet(x, "private-subnet").await.map(drop) })
        }),
    ];
    let runs = cases.map(|(name, service, call)| async move {
        let h = Harness::with(|_, ss| ss.timeout = Some(Duration::from_millis(100))).await;
        h.fake.inject(Fault {
            service: Some(service),
            hang: true,
            ..Default::default()
        });
        let e = want_failed(call(&h.clients, &h.ctx).await);
        assert!(e.is_timeout(), "{name}: {e}");
        assert!(
            e.to_string().contains("no answer within 100ms"),
            "{name}: {e}"
        );
    });
    futures::future::join_all(runs).await;
}

// Go: TestNewClients/default timeout.
#[test]
fn the_default_timeout() {
    let c = clients(
        session(SessionSettings::default()),
        ClientsSettings::default(),
    );
    assert_eq!(c.timeout(), DEFAULT_TIMEOUT);
    let c = clients(
        session(SessionSettings {
            timeout: Some(Duration::ZERO),
            ..Default::default()
        }),
        ClientsSettings::default(),
    );
    assert_eq!(c.timeout(), DEFAULT_TIMEOUT, "zero is unset");
}

// Go: TestNewClients/bad endpoint.
#[test]
fn a_fixed_endpoint_without_scheme_is_refused() {
    let e = Clients::new(
        session(SessionSettings::default()),
        ClientsSettings {
            nova: fixed("nova:8774".to_owned()),
            ..Default::default()
        },
    );
    match e {
        Err(e) => assert!(e.to_string().starts_with("[nova_client] endpoint"), "{e}"),
        Ok(_) => panic!("no error for an endpoint without scheme"),
    }
}

fn tempdir() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    }
}

fn write(dir: &tempfile::TempDir, name: &str, content: &[u8]) -> std::path::PathBuf {
    let p = dir.path().join(name);
    if let Err(e) = std::fs::write(&p, content) {
        panic!("{e}");
    }
    p
}

// Go: TestNewClients/missing CA file, CA file without certificates.
#[test]
fn unusable_tls_files_are_refused() {
    let dir = tempdir();
    let missing = dir.path().join("none.pem");
    let empty = write(&dir, "empty.pem", b"not a certificate\n");
    for (what, settings) in [
        (
            "a missing CA file",
            SessionSettings {
                cafile: Some(missing.clone()),
                ..Default::default()
            },
        ),
        (
            "a CA file without certificates",
            SessionSettings {
                cafile: Some(empty.clone()),
                ..Default::default()
            },
        ),
        (
            "a certificate without key",
            SessionSettings {
                certfile: Some(empty.clone()),
                ..Default::default()
            },
        ),
        (
            "a missing client certificate",
            SessionSettings {
                certfile: Some(missing.clone()),
                keyfile: Some(missing.clone()),
                ..Default::default()
            },
        ),
    ] {
        assert!(Session::new(settings, None).is_err(), "no error for {what}");
    }
}

/// A TLS server on loopback with a certificate of `pki` that answers every
/// request with a keypair, one connection at a time.
async fn tls_nova(pki: &TestPki) -> String {
    let identity = tokio_native_tls::native_tls::Identity::from_pkcs8(
        &pki.server_cert_pem,
        &pki.server_key_pem,
    )
    .and_then(tokio_native_tls::native_tls::TlsAcceptor::new);
    let acceptor = match identity {
        Ok(a) => tokio_native_tls::TlsAcceptor::from(a),
        Err(e) => panic!("{e}"),
    };
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    };
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let Ok(mut tls) = acceptor.accept(tcp).await else {
                continue;
            };
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match tls.read(&mut buf).await {
                    Ok(n) if n > 0 => req.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            let body = r#"{"keypair":{"name":"mykey","type":"ssh","fingerprint":"aa"}}"#;
            let resp = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = tls.write_all(resp.as_bytes()).await;
            let _ = tls.shutdown().await;
        }
    });
    format!("https://127.0.0.1:{}/compute/v2.1", addr.port())
}

// Go: TestNewClients/insecure (here against a TLS server: the settings are
// applied, not only stored).
#[tokio::test]
async fn tls_settings_decide_which_certificates_are_trusted() {
    let pki = TestPki::new();
    let nova = tls_nova(&pki).await;
    let dir = tempdir();
    let ca = write(&dir, "ca.pem", &pki.ca_pem);
    let lookup = |settings: SessionSettings| {
        clients(
            session(settings),
            ClientsSettings {
                nova: fixed(nova.clone()),
                ..Default::default()
            },
        )
    };
    let c = ctx();

    let untrusted = lookup(SessionSettings::default());
    let e = want_failed(untrusted.keypair(&c, "mykey").await);
    assert!(
        matches!(e.kind(), super::ErrorKind::Transport(_)),
        "an unknown CA: {e}"
    );

    let insecure = lookup(SessionSettings {
        insecure: true,
        ..Default::default()
    });
    assert!(insecure.keypair(&c, "mykey").await.is_ok(), "insecure");

    let trusted = lookup(SessionSettings {
        cafile: Some(ca),
        ..Default::default()
    });
    let k = trusted.keypair(&c, "mykey").await;
    assert!(
        matches!(&k, Ok(k) if k.fingerprint == "aa"),
        "cafile: {k:?}"
    );
}
