//! Python cryptography (what Magnum reads and writes certificates with) as
//! the oracle: the certificates we sign and generate, the refusal messages,
//! and the keys of the sample rows, which cryptography wrote.

use serde_json::{Value, json};

use super::sign::{Expect, Want, sign_cases};
use super::*;
use crate::der;
use crate::oids;
use crate::{CertificateAuthority, SignError, generate_cluster_certificates, sign_csr};

/// Reads `[{csr, cert, ca}]` and reports, per item, what Python
/// cryptography sees: the CSR's subject and extension reprs, and for a
/// signed certificate its subject, issuer, validity, extensions (OID,
/// criticality, DER value) and whether the CA signature verifies.
const ORACLE_SCRIPT: &str = r#"
import json, sys
from cryptography import x509
out = []
for item in json.load(sys.stdin):
    csr = x509.load_pem_x509_csr(item["csr"].encode())
    r = {"csr_subject": csr.subject.rfc4514_string(), "csr_ext_reprs": []}
    try:
        r["csr_ext_reprs"] = [repr(e) for e in csr.extensions]
    except Exception as e:
        r["csr_ext_error"] = type(e).__name__
    if item.get("cert"):
        c = x509.load_pem_x509_certificate(item["cert"].encode())
        ca = x509.load_pem_x509_certificate(item["ca"].encode())
        try:
            c.verify_directly_issued_by(ca)
            r["verified"] = True
        except Exception as e:
            r["verified"] = False
        r["subject"] = c.subject.rfc4514_string()
        r["issuer"] = c.issuer.rfc4514_string()
        r["not_before"] = c.not_valid_before_utc.isoformat()
        r["not_after"] = c.not_valid_after_utc.isoformat()
        r["serial_bits"] = c.serial_number.bit_length()
        exts = []
        for e in c.extensions:
            if e.oid == x509.oid.ExtensionOID.SUBJECT_KEY_IDENTIFIER:
                ok = e.value == x509.SubjectKeyIdentifier.from_public_key(c.public_key())
                exts.append({"oid": "ski", "critical": e.critical, "value": "ok" if ok else "mismatch"})
                continue
            exts.append({"oid": e.oid.dotted_string, "critical": e.critical, "value": e.value.public_bytes().hex()})
        r["extensions"] = exts
    out.append(r)
print(json.dumps(out))
"#;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Names the internal-error cases where cryptography reads the request but
/// Magnum fails later (duplicate subject key identifier, merged keyUsage
/// refused by `KeyUsage()`).
fn magnum_fails_after_parsing(name: &str) -> bool {
    matches!(
        name,
        "a subject key identifier in the CSR collides with Magnum's own"
            | "subjectKeyIdentifier allowed collides"
            | "encipher only kept while key agreement is cleared is a ValueError"
    )
}

/// Ports TestSignCSROracle: every table case signed, and checked with
/// cryptography — the certificate's subject, issuer, validity and
/// extensions; refusal messages carry cryptography's repr of the refused
/// extension; the requests we fail are the ones cryptography cannot read.
#[test]
fn oracle_sign_table() {
    let Some(python) = oracle_python() else {
        return;
    };
    let ca = shared_authority();
    let ca_pem = shared_ca().0.certificate.clone();
    let cases = sign_cases();
    let mut items = Vec::new();
    let mut results = Vec::new();
    for tc in &cases {
        let mut opts = test_options();
        (tc.opts)(&mut opts);
        let csr = make_csr(&tc.csr);
        let got = sign_csr(&ca, csr.as_bytes(), &opts);
        let cert = got.as_ref().ok().cloned();
        items.push(json!({"csr": csr, "cert": cert, "ca": ca_pem}));
        results.push(got);
    }
    let seen = run_python(&python, ORACLE_SCRIPT, &Value::Array(items));
    for ((tc, got), r) in cases.iter().zip(&results).zip(seen.as_array().unwrap()) {
        let name = &tc.name;
        match (got, &tc.expect) {
            (Ok(_), Expect::Signed(want)) => {
                assert_eq!(
                    r["verified"], true,
                    "{name}: python: signature does not verify"
                );
                assert_eq!(r["subject"], r["csr_subject"], "{name}");
                assert_eq!(r["issuer"], "CN=k8s-prod-1", "{name}");
                assert_eq!(r["not_before"], "2026-11-29T01:48:07+00:00", "{name}");
                assert_eq!(r["not_after"], "2031-11-29T01:48:07+00:00", "{name}");
                let bits = r["serial_bits"].as_u64().unwrap();
                assert!((64..=128).contains(&bits), "{name}: serial of {bits} bits");
                let want: Vec<Value> = want
                    .iter()
                    .map(|w| match w {
                        Want::Ski => json!({"oid": "ski", "critical": false, "value": "ok"}),
                        Want::Ext(oid, critical, value) => {
                            json!({"oid": oid, "critical": critical, "value": hex(value)})
                        }
                    })
                    .collect();
                assert_eq!(
                    r["extensions"],
                    Value::Array(want),
                    "{name}: python sees other extensions"
                );
            }
            (Err(SignError::Client(e)), _) if e.kind == "CertificateValidationError" => {
                let reprs = r["csr_ext_reprs"].as_array().unwrap();
                assert!(
                    reprs.iter().any(|rep| e.message
                        == format!("Extension '{}' not allowed", rep.as_str().unwrap())),
                    "{name}: message {} is none of python's reprs {reprs:?}",
                    e.message
                );
            }
            (Err(SignError::Internal(why)), Expect::Internal) => {
                assert!(
                    r.get("csr_ext_error").is_some() || magnum_fails_after_parsing(name),
                    "{name}: we fail ({why}) but python reads the extensions"
                );
            }
            (got, want) => panic!("{name}: {got:?}, want {want:?}"),
        }
    }
}

/// Ports TestRefusalReprOracle: one critical extension at a time, nothing
/// allowed; the message carries exactly cryptography's repr of it.
#[test]
fn oracle_refusal_reprs() {
    let Some(python) = oracle_python() else {
        return;
    };
    let ca = shared_authority();
    let ca_pem = shared_ca().0.certificate.clone();
    let ip = |b: &[u8]| der::tlv(0x87, b);
    let seq = |parts: &[&[u8]]| der::sequence(parts);
    let values: Vec<(&str, Vec<u8>)> = vec![
        (oids::KEY_USAGE, ku_value(&[0, 4, 7])),
        (oids::KEY_USAGE, ku_value(&[])),
        (
            oids::BASIC_CONSTRAINTS,
            crate::generate::basic_constraints(true, Some(7)),
        ),
        (
            oids::EXTENDED_KEY_USAGE,
            seq(&[
                &der::oid_value("1.3.6.1.5.5.7.3.2"),
                &der::oid_value("1.2.3.4.5"),
                &der::oid_value("1.3.6.1.4.1.311.20.2.2"),
            ]),
        ),
        (
            oids::SUBJECT_ALT_NAME,
            seq(&[
                &ia5(2, "it's.example"),
                &ia5(1, "a@b"),
                &ip(&[10, 0, 0, 1]),
                &ip(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
                &ia5(6, "spiffe://x/y"),
            ]),
        ),
        (oids::ISSUER_ALT_NAME, seq(&[&ia5(2, "b.example")])),
        (
            oids::SUBJECT_KEY_IDENTIFIER,
            der::octets(&[0, 0x27, 0x5c, 0x7f, 0x80]),
        ),
        (
            oids::AUTHORITY_KEY_IDENTIFIER,
            seq(&[&der::tlv(0x80, &[9, 8])]),
        ),
        (oids::AUTHORITY_KEY_IDENTIFIER, seq(&[])),
        (oids::OCSP_NO_CHECK, der::null_value()),
        (oids::INHIBIT_ANY_POLICY, der::int(0)),
        (
            oids::AUTHORITY_INFO_ACCESS,
            seq(&[
                &seq(&[
                    &der::oid_value("1.3.6.1.5.5.7.48.2"),
                    &ia5(6, "http://ca.example/ca.crt"),
                ]),
                &seq(&[
                    &der::oid_value("1.3.6.1.5.5.7.48.1"),
                    &ia5(6, "http://ocsp.example"),
                ]),
            ]),
        ),
        (
            oids::CRL_DISTRIBUTION_POINTS,
            seq(&[&seq(&[&der::tlv(
                0xa0,
                &der::tlv(
                    0xa0,
                    &[ia5(6, "http://crl.example"), ia5(2, "c.example")].concat(),
                ),
            )])]),
        ),
        (
            oids::CERTIFICATE_POLICIES,
            seq(&[
                &seq(&[&der::oid_value("2.23.140.1.2.1")]),
                &seq(&[&der::oid_value("1.2.3")]),
            ]),
        ),
        (
            oids::NAME_CONSTRAINTS,
            seq(&[
                &der::tlv(
                    0xa0,
                    &[
                        seq(&[&ia5(2, ".example.com")]),
                        seq(&[&ip(&[10, 0, 0, 0, 255, 0, 0, 0])]),
                    ]
                    .concat(),
                ),
                &der::tlv(0xa1, &seq(&[&ia5(1, "example.org")])),
            ]),
        ),
        ("1.3.6.1.4.1.99999.1", vec![0x0c, 0x02, b'h', b'i']),
        // Beyond the reference's list: names cryptography knows but does
        // not parse, and an IPv6 network.
        (oids::POLICY_MAPPINGS, seq(&[])),
        (
            oids::NAME_CONSTRAINTS,
            seq(&[&der::tlv(
                0xa1,
                &seq(&[&ip(&[
                    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
                    0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ])]),
            )]),
        ),
    ];
    let mut opts = test_options();
    opts.allowed_extensions.clear();
    let mut items = Vec::new();
    let mut messages = Vec::new();
    for (i, (oid, value)) in values.iter().enumerate() {
        let csr = make_csr(&csr_with(vec![ext(oid, true, value.clone())]));
        match sign_csr(&ca, csr.as_bytes(), &opts) {
            Err(SignError::Client(e)) if e.kind == "CertificateValidationError" => {
                messages.push(e.message)
            }
            other => panic!("value {i}: {other:?}, want a refusal"),
        }
        items.push(json!({"csr": csr, "ca": ca_pem}));
    }
    let seen = run_python(&python, ORACLE_SCRIPT, &Value::Array(items));
    for (i, (r, msg)) in seen.as_array().unwrap().iter().zip(&messages).enumerate() {
        let reprs = r["csr_ext_reprs"].as_array().unwrap();
        assert_eq!(
            reprs.len(),
            1,
            "value {i}: python reads {reprs:?} ({})",
            r["csr_ext_error"]
        );
        let want = format!("Extension '{}' not allowed", reprs[0].as_str().unwrap());
        assert_eq!(msg, &want, "value {i}");
    }
}

/// Keys cryptography wrote (the sample rows) are read and sign: a CSR
/// signed with the sample Kubernetes CA verifies against its certificate in
/// cryptography, with Magnum's extensions and validity.
#[test]
fn oracle_sample_ca_signs() {
    let Some(rows) = sample_rows() else { return };
    let Some(python) = oracle_python() else {
        return;
    };
    let ca = CertificateAuthority::load(&rows[0].key_pair()).unwrap();
    let csr = make_csr(&csr_with(vec![
        ext(oids::KEY_USAGE, true, ku_value(&[0, 2])),
        ext(
            oids::EXTENDED_KEY_USAGE,
            false,
            der::sequence(&[&der::oid_value("1.3.6.1.5.5.7.3.2")]),
        ),
        ext(
            oids::BASIC_CONSTRAINTS,
            false,
            crate::generate::basic_constraints(true, None),
        ),
    ]));
    let cert = sign_csr(&ca, csr.as_bytes(), &test_options()).unwrap();
    let seen = run_python(
        &python,
        ORACLE_SCRIPT,
        &json!([{"csr": csr, "cert": cert, "ca": rows[0].certificate}]),
    );
    let r = &seen[0];
    assert_eq!(r["verified"], true);
    assert_eq!(r["issuer"], "CN=k8s-prod-1");
    assert_eq!(r["not_after"], "2031-11-29T01:48:07+00:00");
    assert_eq!(
        r["extensions"],
        json!([
            {"oid": oids::KEY_USAGE, "critical": true, "value": hex(&ku_value(&[0, 2]))},
            {"oid": oids::EXTENDED_KEY_USAGE, "critical": false, "value": "300a06082b06010505070302"},
            {"oid": oids::BASIC_CONSTRAINTS, "critical": false, "value": "3000"},
            {"oid": "ski", "critical": false, "value": "ok"},
        ])
    );
    // Every sample CA row (Kubernetes, etcd, front-proxy of three clusters)
    // loads and signs.
    for row in rows.iter().filter(|r| !r.certificate.is_empty()) {
        let kp = row.key_pair();
        let c = cert_of(&kp.certificate);
        let is_ca = certificate_is_ca(&c);
        if is_ca {
            let ca = CertificateAuthority::load(&kp).unwrap();
            let cert = cert_of(&sign_csr(&ca, csr.as_bytes(), &test_options()).unwrap());
            assert!(
                cert.verify(&c.public_key().unwrap()).unwrap(),
                "row {}",
                row.id
            );
        }
    }
}

fn certificate_is_ca(c: &openssl::x509::X509) -> bool {
    crate::fuzzing::certificate_extensions(&c.to_der().unwrap())
        .iter()
        .any(|(oid, _, v)| {
            oid == oids::BASIC_CONSTRAINTS && v.starts_with(&[0x30, 0x06, 0x01, 0x01, 0xff])
        })
}

/// Keys and certificates we generate are read by cryptography: each key
/// loads with its passphrase and matches its certificate, the client
/// certificate is issued by the Kubernetes CA, and the extensions and
/// validity are Magnum's.
#[test]
fn oracle_cryptography_reads_our_cluster_certificates() {
    let Some(python) = oracle_python() else {
        return;
    };
    let cc = generate_cluster_certificates("k8s-prod-1", &test_options()).unwrap();
    const SCRIPT: &str = r#"
import json, sys
from cryptography import x509
from cryptography.hazmat.primitives import serialization
d = json.load(sys.stdin)
ca = x509.load_pem_x509_certificate(d["kubernetes"]["cert"].encode())
out = {}
for name, kp in d.items():
    c = x509.load_pem_x509_certificate(kp["cert"].encode())
    k = serialization.load_pem_private_key(kp["key"].encode(), password=kp["pass"].encode())
    pub = serialization.PublicFormat.SubjectPublicKeyInfo
    enc = serialization.Encoding.DER
    r = {
        "key_matches": k.public_key().public_bytes(enc, pub) == c.public_key().public_bytes(enc, pub),
        "key_size": k.key_size,
        "subject": c.subject.rfc4514_string(),
        "issuer": c.issuer.rfc4514_string(),
        "days": (c.not_valid_after_utc - c.not_valid_before_utc).days,
        "serial_version": (c.serial_number >> 76) & 0xf,
        "exts": [repr(e.value) if e.oid != x509.oid.ExtensionOID.SUBJECT_KEY_IDENTIFIER
                 else ("ski-ok" if e.value == x509.SubjectKeyIdentifier.from_public_key(c.public_key()) else "ski-bad")
                 for e in c.extensions],
        "critical": [e.critical for e in c.extensions],
    }
    try:
        c.verify_directly_issued_by(c if name != "client" else ca)
        r["issued"] = True
    except Exception:
        r["issued"] = False
    out[name] = r
print(json.dumps(out))
"#;
    let kp =
        |k: &KeyPair| json!({"cert": k.certificate, "key": k.private_key, "pass": k.passphrase});
    let input = json!({
        "kubernetes": kp(&cc.kubernetes), "etcd": kp(&cc.etcd),
        "front_proxy": kp(&cc.front_proxy), "client": kp(&cc.client),
    });
    let seen = run_python(&python, SCRIPT, &input);
    let ca_exts = json!([
        "<BasicConstraints(ca=True, path_length=0)>",
        "<KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False, data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=False, encipher_only=False, decipher_only=False)>",
        "ski-ok",
    ]);
    for name in ["kubernetes", "etcd", "front_proxy", "client"] {
        let r = &seen[name];
        assert_eq!(r["key_matches"], true, "{name}");
        assert_eq!(r["key_size"], 2048, "{name}");
        assert_eq!(r["issuer"], "CN=k8s-prod-1", "{name}");
        assert_eq!(r["days"], 1826, "{name}");
        assert_eq!(r["serial_version"], 4, "{name}");
        assert_eq!(r["issued"], true, "{name}");
        if name == "client" {
            assert_eq!(r["subject"], "O=system:masters,CN=admin");
            assert_eq!(
                r["exts"],
                json!([
                    "<KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=True, data_encipherment=False, key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False)>",
                    "<ExtendedKeyUsage([<ObjectIdentifier(oid=1.3.6.1.5.5.7.3.2, name=clientAuth)>])>",
                    "<BasicConstraints(ca=False, path_length=None)>",
                    "ski-ok",
                ])
            );
            assert_eq!(r["critical"], json!([true, false, true, false]));
        } else {
            assert_eq!(r["subject"], "CN=k8s-prod-1", "{name}");
            assert_eq!(r["exts"], ca_exts, "{name}");
            assert_eq!(r["critical"], json!([true, true, false]), "{name}");
        }
    }
}
