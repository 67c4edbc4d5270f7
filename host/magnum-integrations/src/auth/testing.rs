//! Helpers of the auth tests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::response::Response;
use chrono::{DateTime, Utc};
use http::{HeaderMap, HeaderName, HeaderValue};
use http_body_util::BodyExt;
use magnum_domain::RequestContext;

use super::IsAdmin;
use super::keystone::Clock;

/// `context_is_admin` as Magnum's default policy has it: `role:admin`.
pub(crate) fn admin_role() -> IsAdmin {
    Arc::new(|c: &RequestContext| c.has_role("admin"))
}

/// Every field of a context, comparable and printable (the context's own
/// `Debug` hides the token and leaves fields out).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    request_id: String,
    auth_token: Option<String>,
    user_id: String,
    user_name: String,
    user_domain_id: String,
    user_domain_name: String,
    project_id: String,
    project_name: String,
    project_domain_id: String,
    domain_id: String,
    domain_name: String,
    roles: Vec<String>,
    system_scope: String,
    is_admin: bool,
    all_projects: bool,
    token_expires_unix: i64,
    service_catalog: Option<String>,
}

pub(crate) fn fields(c: &RequestContext) -> Fields {
    Fields {
        request_id: c.request_id.clone(),
        auth_token: c.auth_token.clone(),
        user_id: c.user_id.clone(),
        user_name: c.user_name.clone(),
        user_domain_id: c.user_domain_id.clone(),
        user_domain_name: c.user_domain_name.clone(),
        project_id: c.project_id.clone(),
        project_name: c.project_name.clone(),
        project_domain_id: c.project_domain_id.clone(),
        domain_id: c.domain_id.clone(),
        domain_name: c.domain_name.clone(),
        roles: c.roles.clone(),
        system_scope: c.system_scope.clone(),
        is_admin: c.is_admin,
        all_projects: c.all_projects,
        token_expires_unix: c.token_expires_unix,
        service_catalog: c
            .service_catalog
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned()),
    }
}

/// A header map from name/value pairs (test inputs are valid headers).
pub(crate) fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        match (HeaderName::try_from(*k), HeaderValue::try_from(*v)) {
            (Ok(k), Ok(v)) => {
                h.append(k, v);
            }
            _ => panic!("invalid test header {k}"),
        }
    }
    h
}

/// The start of every fake clock: 2026-11-30 12:00:00 UTC.
pub(crate) fn start_time() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

/// A clock that only moves when told to.
#[derive(Clone)]
pub(crate) struct FakeClock(Arc<Mutex<DateTime<Utc>>>);

impl FakeClock {
    pub(crate) fn new() -> Self {
        Self::at(start_time())
    }

    pub(crate) fn at(t: DateTime<Utc>) -> Self {
        Self(Arc::new(Mutex::new(t)))
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn advance(&self, d: Duration) {
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *t += d;
    }

    pub(crate) fn clock(&self) -> Clock {
        let me = self.clone();
        Arc::new(move || me.now())
    }
}

/// The whole body of a response.
pub(crate) async fn body_of(resp: Response) -> String {
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A certificate authority and a server certificate it signed for
/// 127.0.0.1, made for one test.
pub(crate) struct TestPki {
    /// The CA certificate, PEM.
    pub(crate) ca_pem: Vec<u8>,
    /// The server's certificate and PKCS#8 key, PEM.
    pub(crate) server_cert_pem: Vec<u8>,
    pub(crate) server_key_pem: Vec<u8>,
}

impl TestPki {
    pub(crate) fn new() -> Self {
        match Self::make() {
            Ok(p) => p,
            Err(e) => panic!("test certificates: {e}"),
        }
    }

    fn make() -> Result<Self, openssl::error::ErrorStack> {
        use openssl::asn1::Asn1Time;
        use openssl::bn::{BigNum, MsbOption};
        use openssl::ec::{EcGroup, EcKey};
        use openssl::hash::MessageDigest;
        use openssl::nid::Nid;
        use openssl::pkey::{PKey, Private};
        use openssl::x509::extension::{BasicConstraints, KeyUsage, SubjectAlternativeName};
        use openssl::x509::{X509, X509Name};

        fn key() -> Result<PKey<Private>, openssl::error::ErrorStack> {
            let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
            PKey::from_ec_key(EcKey::generate(&group)?)
        }
        fn name(cn: &str) -> Result<X509Name, openssl::error::ErrorStack> {
            let mut n = X509Name::builder()?;
            n.append_entry_by_nid(Nid::COMMONNAME, cn)?;
            Ok(n.build())
        }
        fn builder(
            subject: &X509Name,
            issuer: &X509Name,
            key: &PKey<Private>,
        ) -> Result<openssl::x509::X509Builder, openssl::error::ErrorStack> {
            let mut b = X509::builder()?;
            b.set_version(2)?;
            let mut serial = BigNum::new()?;
            serial.rand(64, MsbOption::MAYBE_ZERO, false)?;
            let serial = serial.to_asn1_integer()?;
            b.set_serial_number(&serial)?;
            b.set_subject_name(subject)?;
            b.set_issuer_name(issuer)?;
            b.set_pubkey(key)?;
            let not_before = Asn1Time::days_from_now(0)?;
            b.set_not_before(&not_before)?;
            let not_after = Asn1Time::days_from_now(1)?;
            b.set_not_after(&not_after)?;
            Ok(b)
        }

        let ca_key = key()?;
        let ca_name = name("okm auth test CA")?;
        let mut ca = builder(&ca_name, &ca_name, &ca_key)?;
        ca.append_extension(BasicConstraints::new().critical().ca().build()?)?;
        ca.append_extension(
            KeyUsage::new()
                .critical()
                .key_cert_sign()
                .crl_sign()
                .build()?,
        )?;
        ca.sign(&ca_key, MessageDigest::sha256())?;
        let ca = ca.build();

        let server_key = key()?;
        let mut server = builder(&name("127.0.0.1")?, &ca_name, &server_key)?;
        let san = SubjectAlternativeName::new()
            .ip("127.0.0.1")
            .build(&server.x509v3_context(Some(&ca), None))?;
        server.append_extension(san)?;
        server.append_extension(KeyUsage::new().critical().digital_signature().build()?)?;
        server.sign(&ca_key, MessageDigest::sha256())?;
        let server = server.build();

        Ok(Self {
            ca_pem: ca.to_pem()?,
            server_cert_pem: server.to_pem()?,
            server_key_pem: server_key.private_key_to_pem_pkcs8()?,
        })
    }
}
