//! The properties the CSR fuzz target checks, shared with the unit test
//! that runs its seed corpus: signing never panics, fails only with
//! `InvalidCsr`, `CertificateValidationError` or an internal error, and
//! signs only well-formed, correctly self-signed requests, never keeping
//! what the options forbid.

use chrono::{NaiveDate, NaiveDateTime};
use openssl::x509::{X509, X509Req};

use crate::der;
use crate::oids;
use crate::options::{X509Options, ext, usage};
use crate::pem;
use crate::sign::{self, CertificateAuthority, SignError};

/// The fixed clock of the fuzz target and the tests: 2026-11-30 01:48:07.
pub fn fixed_clock() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 11, 30)
        .and_then(|d| d.and_hms_nano_opt(1, 48, 7, 500))
        .unwrap_or_default()
}

/// A CA `CN=k8s-prod-1` with a 1024-bit key (fast to sign with).
pub fn fuzz_ca() -> Result<CertificateAuthority, String> {
    let opts = X509Options {
        rsa_key_size: 1024,
        now: fixed_clock,
        ..X509Options::default()
    };
    let kp = crate::generate_ca("k8s-prod-1", &opts).map_err(|e| e.to_string())?;
    CertificateAuthority::load(&kp).map_err(|e| e.to_string())
}

/// The options of one fuzz mode: every extension allowed; with `allow_ca`,
/// every key usage too.
pub fn fuzz_options(allow_ca: bool) -> X509Options {
    let mut o = X509Options {
        allow_ca,
        now: fixed_clock,
        ..X509Options::default()
    };
    o.allowed_extensions = ext::ALL.map(String::from).to_vec();
    if allow_ca {
        o.allowed_key_usage = usage::ALL.map(String::from).to_vec();
    }
    o
}

/// Signs `input` in both modes.
///
/// # Panics
/// When a property does not hold: that is what the fuzz target looks for.
pub fn check_sign_csr(ca: &CertificateAuthority, input: &[u8]) {
    for allow_ca in [false, true] {
        let opts = fuzz_options(allow_ca);
        match sign::sign_csr(ca, input, &opts) {
            Err(SignError::Client(e)) => assert!(
                e.status == 400 && matches!(e.kind, "InvalidCsr" | "CertificateValidationError"),
                "unexpected client error {} {}",
                e.kind,
                e.status
            ),
            Err(SignError::Internal(_)) => {}
            Ok(pem) => check_signed(ca, input, &pem, &opts),
        }
    }
}

fn check_signed(ca: &CertificateAuthority, input: &[u8], cert_pem: &str, opts: &X509Options) {
    // The request must have been valid.
    let raw: Vec<u8> = match std::str::from_utf8(input) {
        Ok(s) if !s.is_ascii() => s.chars().map(|c| c as u8).collect(),
        _ => input.to_vec(),
    };
    let block = pem::find(&raw, |l| {
        l == b"CERTIFICATE REQUEST" || l == b"NEW CERTIFICATE REQUEST"
    })
    .unwrap_or_else(|| panic!("signed without a request PEM block"));
    let req = X509Req::from_der(&block.der)
        .unwrap_or_else(|e| panic!("signed an unparsable request: {e}"));
    let req_key = req
        .public_key()
        .unwrap_or_else(|e| panic!("request key: {e}"));
    assert!(
        req.verify(&req_key).unwrap_or(false),
        "signed a request with a bad signature"
    );

    assert!(!cert_pem.ends_with('\n'), "PEM has a trailing newline");
    let cert = X509::from_pem(cert_pem.as_bytes())
        .unwrap_or_else(|e| panic!("result is not a certificate: {e}"));
    let ca_key = ca
        .certificate()
        .public_key()
        .unwrap_or_else(|e| panic!("CA key: {e}"));
    assert!(cert.verify(&ca_key).unwrap_or(false), "bad signature");
    let der_of = |n: &openssl::x509::X509NameRef| n.to_der().unwrap_or_default();
    assert_eq!(
        der_of(cert.subject_name()),
        der_of(req.subject_name()),
        "subject changed"
    );
    assert_eq!(
        der_of(cert.issuer_name()),
        der_of(ca.certificate().subject_name()),
        "issuer is not the CA"
    );

    let exts = certificate_extensions(&cert.to_der().unwrap_or_default());
    let (last, rest) = exts.split_last().unwrap_or_else(|| panic!("no extensions"));
    assert!(
        last.0 == oids::SUBJECT_KEY_IDENTIFIER && !last.1,
        "the subject key identifier is not last"
    );
    for (oid, _critical, value) in rest {
        let content = der::encode_oid_content(oid).unwrap_or_default();
        let name = oids::extension_name(&der::Oid::trusted(&content));
        assert!(
            name.is_some_and(|n| opts.allowed_extensions.iter().any(|a| a == n)),
            "extension {oid} kept"
        );
        if opts.allow_ca {
            continue;
        }
        if oid == oids::BASIC_CONSTRAINTS {
            let fields = der::read_sequence(value).unwrap_or_default();
            let ca = fields
                .first()
                .and_then(|t| der::boolean(t).ok())
                .unwrap_or(false);
            assert!(!ca, "CA:TRUE kept");
        }
        if oid == oids::KEY_USAGE {
            let t = der::read_one(value).unwrap_or_else(|_| panic!("keyUsage unreadable"));
            let bits = der::bit_string(&t).unwrap_or_else(|_| panic!("keyUsage unreadable"));
            for forbidden in [3, 4, 5, 6] {
                assert!(!bits.bit(forbidden), "forbidden key usage {forbidden} kept");
            }
        }
    }
}

/// The extensions of a DER certificate: dotted OID, critical, value.
pub fn certificate_extensions(cert: &[u8]) -> Vec<(String, bool, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(top) = der::read_sequence(cert) else {
        return out;
    };
    let Some(Ok(tbs)) = top.first().map(der::sequence_of) else {
        return out;
    };
    let Some(wrapper) = tbs.iter().find(|t| t.is_context(3, true)) else {
        return out;
    };
    let Some(Ok(list)) = wrapper
        .children()
        .ok()
        .and_then(|c| c.first().map(der::sequence_of))
    else {
        return out;
    };
    for e in list {
        let Ok(fields) = der::sequence_of(&e) else {
            continue;
        };
        let (oid, critical, value) = match fields.as_slice() {
            [o, v] => (o, false, v),
            [o, c, v] => (o, der::boolean(c).unwrap_or(false), v),
            _ => continue,
        };
        if let (Ok(oid), Ok(value)) = (der::oid(oid), der::octet_string(value)) {
            out.push((oid.to_string(), critical, value.to_vec()));
        }
    }
    out
}
