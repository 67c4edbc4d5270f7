//! CSR signing: the reference's table of filter cases, invalid requests,
//! duplicate extensions, and the fuzz seeds.

use std::collections::BTreeMap;

use openssl::nid::Nid;

use super::*;
use crate::fuzzing::{certificate_extensions, check_sign_csr, fuzz_ca};
use crate::oids;
use crate::options::{ext as names, usage};
use crate::{SignError, sign_csr, sign_csr_with_key_pair};

/// An extension expected in a signed certificate.
#[derive(Clone, Debug, PartialEq)]
pub enum Want {
    /// The subject key identifier Magnum adds (checked apart).
    Ski,
    Ext(String, bool, Vec<u8>),
}

pub fn we(oid: &str, critical: bool, value: Vec<u8>) -> Want {
    Want::Ext(oid.to_owned(), critical, value)
}

/// What signing a case gives.
#[derive(Clone, Debug)]
pub enum Expect {
    Signed(Vec<Want>),
    /// A 400 of this kind, with this exact message when set.
    Client(&'static str, Option<String>),
    /// A 500 (not a client error).
    Internal,
}

pub struct SignCase {
    pub name: String,
    pub opts: Box<dyn Fn(&mut X509Options)>,
    pub csr: CsrSpec,
    pub expect: Expect,
}

fn case(name: &str, csr: CsrSpec, expect: Expect) -> SignCase {
    SignCase {
        name: name.to_owned(),
        opts: Box::new(|_| {}),
        csr,
        expect,
    }
}

fn with(mut c: SignCase, opts: impl Fn(&mut X509Options) + 'static) -> SignCase {
    c.opts = Box::new(opts);
    c
}

fn refused(message: Option<&str>) -> Expect {
    Expect::Client("CertificateValidationError", message.map(String::from))
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn ku(critical: bool, bits: &[usize]) -> (String, bool, Vec<u8>) {
    ext(oids::KEY_USAGE, critical, ku_value(bits))
}

fn bc(critical: bool, ca: bool, path_len: Option<u64>) -> (String, bool, Vec<u8>) {
    ext(
        oids::BASIC_CONSTRAINTS,
        critical,
        crate::generate::basic_constraints(ca, path_len),
    )
}

/// Valid values for each `[x509]/allowed_extensions` choice.
pub fn sample_extension_values() -> BTreeMap<&'static str, (&'static str, Vec<u8>)> {
    let mut m = BTreeMap::new();
    m.insert(
        names::AUTHORITY_KEY_IDENTIFIER,
        (
            oids::AUTHORITY_KEY_IDENTIFIER,
            der::sequence(&[&der::tlv(0x80, &[1, 2, 3, 4])]),
        ),
    );
    m.insert(
        names::SUBJECT_KEY_IDENTIFIER,
        (oids::SUBJECT_KEY_IDENTIFIER, der::octets(&[1, 2, 3, 4])),
    );
    m.insert(
        names::AUTHORITY_INFORMATION_ACCESS,
        (
            oids::AUTHORITY_INFO_ACCESS,
            der::sequence(&[&der::sequence(&[
                &der::oid_value("1.3.6.1.5.5.7.48.1"),
                &ia5(6, "http://ocsp.example"),
            ])]),
        ),
    );
    m.insert(
        names::BASIC_CONSTRAINTS,
        (oids::BASIC_CONSTRAINTS, der::sequence(&[])),
    );
    m.insert(
        names::CRL_DISTRIBUTION_POINTS,
        (
            oids::CRL_DISTRIBUTION_POINTS,
            der::sequence(&[&der::sequence(&[&der::tlv(
                0xa0,
                &der::tlv(0xa0, &ia5(6, "http://crl.example")),
            )])]),
        ),
    );
    m.insert(
        names::CERTIFICATE_POLICIES,
        (
            oids::CERTIFICATE_POLICIES,
            der::sequence(&[&der::sequence(&[&der::oid_value("2.5.29.32.0")])]),
        ),
    );
    m.insert(
        names::EXTENDED_KEY_USAGE,
        (
            oids::EXTENDED_KEY_USAGE,
            der::sequence(&[&der::oid_value("1.3.6.1.5.5.7.3.1")]),
        ),
    );
    m.insert(
        names::OCSP_NO_CHECK,
        (oids::OCSP_NO_CHECK, der::null_value()),
    );
    m.insert(
        names::INHIBIT_ANY_POLICY,
        (oids::INHIBIT_ANY_POLICY, der::int(1)),
    );
    m.insert(names::KEY_USAGE, (oids::KEY_USAGE, ku_value(&[0])));
    m.insert(
        names::NAME_CONSTRAINTS,
        (
            oids::NAME_CONSTRAINTS,
            der::sequence(&[&der::tlv(0xa0, &der::sequence(&[&ia5(2, "example.com")]))]),
        ),
    );
    m.insert(
        names::SUBJECT_ALTERNATIVE_NAME,
        (
            oids::SUBJECT_ALT_NAME,
            der::sequence(&[&ia5(2, "a.example")]),
        ),
    );
    m.insert(
        names::ISSUER_ALTERNATIVE_NAME,
        (
            oids::ISSUER_ALT_NAME,
            der::sequence(&[&ia5(2, "b.example")]),
        ),
    );
    m
}

/// The reference's signing table (TestSignCSR's cases).
pub fn sign_cases() -> Vec<SignCase> {
    use Want::Ski;
    let allow_ca = |o: &mut X509Options| {
        o.allow_ca = true;
        o.allowed_key_usage.push(usage::CERTIFICATE_SIGN.into());
        o.allowed_key_usage.push(usage::CRL_SIGN.into());
    };
    let values = sample_extension_values();
    let san = values[names::SUBJECT_ALTERNATIVE_NAME].1.clone();
    let client_eku = der::sequence(&[&der::oid_value("1.3.6.1.5.5.7.3.2")]);
    let unknown = |critical| ext("1.2.3.4", critical, der::null_value());
    let mut cases = vec![
        case(
            "no extensions: only the subject key identifier",
            CsrSpec::default(),
            Expect::Signed(vec![Ski]),
        ),
        case(
            "non-critical key usage: forbidden usages are cleared",
            csr_with(vec![ku(false, &[0, 3, 5, 6])]),
            Expect::Signed(vec![we(oids::KEY_USAGE, false, ku_value(&[0])), Ski]),
        ),
        case(
            "critical key usage with allowed usages is kept",
            csr_with(vec![ku(true, &[0, 1, 2])]),
            Expect::Signed(vec![we(oids::KEY_USAGE, true, ku_value(&[0, 1, 2])), Ski]),
        ),
        case(
            "critical key usage with certificate sign is refused without allow_ca",
            csr_with(vec![ku(true, &[0, 5])]),
            refused(Some(
                "Extension '<Extension(oid=<ObjectIdentifier(oid=2.5.29.15, name=keyUsage)>, critical=True, value=<KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=False, encipher_only=False, decipher_only=False)>)>' not allowed",
            )),
        ),
        with(
            case(
                "certificate sign stays forbidden with allow_ca when not in allowed_key_usage",
                csr_with(vec![ku(true, &[5])]),
                refused(None),
            ),
            |o| o.allow_ca = true,
        ),
        with(
            case(
                "certificate sign and CRL sign are removed from allowed_key_usage without allow_ca",
                csr_with(vec![ku(false, &[0, 5, 6])]),
                Expect::Signed(vec![we(oids::KEY_USAGE, false, ku_value(&[0])), Ski]),
            ),
            |o| {
                o.allowed_key_usage.push(usage::CERTIFICATE_SIGN.into());
                o.allowed_key_usage.push(usage::CRL_SIGN.into());
            },
        ),
        with(
            case(
                "allow_ca keeps certificate sign, CRL sign and CA:TRUE",
                csr_with(vec![bc(true, true, Some(0)), ku(true, &[5, 6])]),
                Expect::Signed(vec![
                    we(
                        oids::BASIC_CONSTRAINTS,
                        true,
                        crate::generate::basic_constraints(true, Some(0)),
                    ),
                    we(oids::KEY_USAGE, true, ku_value(&[5, 6])),
                    Ski,
                ]),
            ),
            allow_ca,
        ),
        case(
            "critical CA:TRUE is refused without allow_ca",
            csr_with(vec![bc(true, true, None)]),
            refused(Some(
                "Extension '<Extension(oid=<ObjectIdentifier(oid=2.5.29.19, name=basicConstraints)>, critical=True, value=<BasicConstraints(ca=True, path_length=None)>)>' not allowed",
            )),
        ),
        case(
            "non-critical CA:TRUE becomes a non-critical CA:FALSE",
            csr_with(vec![bc(false, true, Some(3))]),
            Expect::Signed(vec![we(oids::BASIC_CONSTRAINTS, false, vec![0x30, 0]), Ski]),
        ),
        case(
            "critical CA:FALSE is kept",
            csr_with(vec![bc(true, false, None)]),
            Expect::Signed(vec![we(oids::BASIC_CONSTRAINTS, true, vec![0x30, 0]), Ski]),
        ),
        case(
            "CA:FALSE with a path length is a ValueError",
            csr_with(vec![ext(
                oids::BASIC_CONSTRAINTS,
                false,
                der::sequence(&[&der::int(1)]),
            )]),
            Expect::Internal,
        ),
        case(
            "extension order is kept",
            csr_with(vec![
                ext(oids::SUBJECT_ALT_NAME, false, san.clone()),
                ku(true, &[0, 2]),
                ext(oids::EXTENDED_KEY_USAGE, false, client_eku.clone()),
            ]),
            Expect::Signed(vec![
                we(oids::SUBJECT_ALT_NAME, false, san.clone()),
                we(oids::KEY_USAGE, true, ku_value(&[0, 2])),
                we(oids::EXTENDED_KEY_USAGE, false, client_eku.clone()),
                Ski,
            ]),
        ),
        case(
            "a subject key identifier in the CSR collides with Magnum's own",
            csr_with(vec![ext(
                oids::SUBJECT_KEY_IDENTIFIER,
                false,
                der::octets(&[1]),
            )]),
            Expect::Internal,
        ),
        with(
            case(
                "a subject key identifier is dropped when not allowed",
                csr_with(vec![ext(
                    oids::SUBJECT_KEY_IDENTIFIER,
                    false,
                    der::octets(&[1]),
                )]),
                Expect::Signed(vec![Ski]),
            ),
            |o| o.allowed_extensions = strings(&[names::KEY_USAGE]),
        ),
        case(
            "an unknown non-critical extension is dropped",
            csr_with(vec![unknown(false)]),
            Expect::Signed(vec![Ski]),
        ),
        case(
            "an unknown critical extension is refused",
            csr_with(vec![unknown(true)]),
            refused(Some(
                r"Extension '<Extension(oid=<ObjectIdentifier(oid=1.2.3.4, name=Unknown OID)>, critical=True, value=<UnrecognizedExtension(oid=<ObjectIdentifier(oid=1.2.3.4, name=Unknown OID)>, value=b'\x05\x00')>)>' not allowed",
            )),
        ),
        with(
            case(
                "an unknown extension is refused even when every name is allowed",
                csr_with(vec![unknown(true)]),
                refused(None),
            ),
            |o| o.allowed_extensions = strings(&names::ALL),
        ),
        case(
            "the first refused extension wins",
            csr_with(vec![
                ext(oids::INHIBIT_ANY_POLICY, true, der::int(2)),
                unknown(true),
            ]),
            refused(Some(
                "Extension '<Extension(oid=<ObjectIdentifier(oid=2.5.29.54, name=inhibitAnyPolicy)>, critical=True, value=<InhibitAnyPolicy(skip_certs=2)>)>' not allowed",
            )),
        ),
        case(
            "key agreement with encipher only is cleared as a whole",
            csr_with(vec![ku(false, &[0, 4, 7])]),
            Expect::Signed(vec![we(oids::KEY_USAGE, false, ku_value(&[0])), Ski]),
        ),
        case(
            "encipher only without key agreement cannot be parsed",
            csr_with(vec![ku(false, &[7])]),
            Expect::Internal,
        ),
        with(
            case(
                "encipher only kept while key agreement is cleared is a ValueError",
                csr_with(vec![ku(false, &[4, 7])]),
                Expect::Internal,
            ),
            |o| o.allowed_key_usage = strings(&[usage::ENCIPHER_ONLY]),
        ),
        with(
            case(
                "key agreement, encipher and decipher only when allowed",
                csr_with(vec![ku(true, &[4, 7, 8])]),
                Expect::Signed(vec![we(oids::KEY_USAGE, true, ku_value(&[4, 7, 8])), Ski]),
            ),
            |o| o.allowed_key_usage = strings(&usage::ALL),
        ),
        with(
            case(
                "an empty allowed key usage list clears everything",
                csr_with(vec![ku(false, &[0, 2])]),
                Expect::Signed(vec![
                    we(oids::KEY_USAGE, false, vec![0x03, 0x01, 0x00]),
                    Ski,
                ]),
            ),
            |o| o.allowed_key_usage.clear(),
        ),
        case(
            "ECDSA request",
            CsrSpec {
                key: Some(ec_key(Nid::X9_62_PRIME256V1)),
                ..CsrSpec::default()
            },
            Expect::Signed(vec![Ski]),
        ),
        case(
            "Ed25519 request",
            CsrSpec {
                key: Some(ed25519_key()),
                ..CsrSpec::default()
            },
            Expect::Signed(vec![Ski]),
        ),
    ];
    // Each extension choice, non-critical: kept when allowed (the default
    // list, then all of them), otherwise dropped; critical and not allowed:
    // refused.
    let defaults = X509Options::default().allowed_extensions;
    for name in names::ALL {
        let (oid, value) = values[name].clone();
        let e = ext(oid, false, value.clone());
        if name == names::SUBJECT_KEY_IDENTIFIER {
            cases.push(case(
                &format!("{name} allowed collides"),
                csr_with(vec![e]),
                Expect::Internal,
            ));
        } else if defaults.iter().any(|d| d == name) {
            cases.push(case(
                &format!("{name} kept by default"),
                csr_with(vec![e]),
                Expect::Signed(vec![we(oid, false, value), Want::Ski]),
            ));
        } else {
            cases.push(case(
                &format!("{name} dropped by default"),
                csr_with(vec![e.clone()]),
                Expect::Signed(vec![Want::Ski]),
            ));
            cases.push(case(
                &format!("{name} critical refused by default"),
                csr_with(vec![ext(oid, true, value.clone())]),
                refused(None),
            ));
            cases.push(with(
                case(
                    &format!("{name} kept when allowed"),
                    csr_with(vec![e]),
                    Expect::Signed(vec![we(oid, false, value), Want::Ski]),
                ),
                move |o| o.allowed_extensions = strings(&[name]),
            ));
        }
    }
    // Each key usage alone, non-critical and critical, with the defaults.
    for (bit, name) in usage::ALL.iter().enumerate() {
        if bit >= crate::sign::BIT_ENCIPHER_ONLY {
            continue; // needs key agreement; covered above
        }
        let allowed = [
            usage::DIGITAL_SIGNATURE,
            usage::KEY_ENCIPHERMENT,
            usage::NON_REPUDIATION,
        ]
        .contains(name);
        if allowed {
            cases.push(case(
                &format!("{name} kept"),
                csr_with(vec![ku(false, &[bit])]),
                Expect::Signed(vec![
                    we(oids::KEY_USAGE, false, ku_value(&[bit])),
                    Want::Ski,
                ]),
            ));
            cases.push(case(
                &format!("{name} kept when critical"),
                csr_with(vec![ku(true, &[bit])]),
                Expect::Signed(vec![we(oids::KEY_USAGE, true, ku_value(&[bit])), Want::Ski]),
            ));
        } else {
            cases.push(case(
                &format!("{name} cleared"),
                csr_with(vec![ku(false, &[bit])]),
                Expect::Signed(vec![we(oids::KEY_USAGE, false, ku_value(&[])), Want::Ski]),
            ));
            cases.push(case(
                &format!("{name} refused when critical"),
                csr_with(vec![ku(true, &[bit])]),
                refused(None),
            ));
        }
    }
    cases
}

/// The signed certificate's extensions in the form of [`Want`].
pub fn cert_wants(cert: &X509) -> Vec<Want> {
    certificate_extensions(&cert.to_der().unwrap())
        .into_iter()
        .map(|(oid, critical, value)| {
            if oid == oids::SUBJECT_KEY_IDENTIFIER {
                Want::Ski
            } else {
                Want::Ext(oid, critical, value)
            }
        })
        .collect()
}

/// Ports TestSignCSR.
#[test]
fn sign_table() {
    let ca = shared_authority();
    let ca_cert = ca.certificate().clone();
    let cases = sign_cases();
    assert_eq!(cases.len(), 68, "the reference's table has 68 cases");
    let want_before = unix(ca_cert.not_before());
    for tc in cases {
        let mut opts = test_options();
        (tc.opts)(&mut opts);
        let csr = make_csr(&tc.csr);
        let got = sign_csr(&ca, csr.as_bytes(), &opts);
        let name = &tc.name;
        let pem = match (tc.expect.clone(), got) {
            (Expect::Internal, Err(SignError::Internal(_))) => continue,
            (Expect::Client(kind, message), Err(SignError::Client(e))) => {
                assert_eq!((e.status, e.kind), (400, kind), "{name}");
                if let Some(m) = message {
                    assert_eq!(e.message, m, "{name}");
                }
                continue;
            }
            (Expect::Signed(_), Ok(pem)) => pem,
            (want, got) => panic!("{name}: want {want:?}, got {got:?}"),
        };
        let Expect::Signed(want) = tc.expect else {
            unreachable!()
        };
        assert!(!pem.ends_with('\n'), "{name}: trailing newline");
        let c = cert_of(&pem);
        assert!(
            c.verify(&ca_cert.public_key().unwrap()).unwrap(),
            "{name}: not signed by the CA"
        );
        let req = req_of(&csr);
        assert_eq!(
            c.subject_name().to_der().unwrap(),
            req.subject_name().to_der().unwrap(),
            "{name}"
        );
        assert_eq!(
            c.issuer_name().to_der().unwrap(),
            ca_cert.subject_name().to_der().unwrap(),
            "{name}"
        );
        assert_eq!(
            c.public_key().unwrap().public_key_to_der().unwrap(),
            req.public_key().unwrap().public_key_to_der().unwrap(),
            "{name}: public key"
        );
        assert_eq!(
            c.signature_algorithm().object().nid(),
            Nid::SHA256WITHRSAENCRYPTION,
            "{name}"
        );
        assert_eq!(c.version(), 2, "{name}: version 3");
        assert_eq!(unix(c.not_before()), want_before, "{name}");
        assert_eq!(unix(c.not_after()), want_before + 1826 * 86400, "{name}");
        assert_eq!(cert_wants(&c), want, "{name}: extensions");
    }
}

/// Ports TestSignCSRInvalid.
#[test]
fn invalid_requests_are_invalid_csr() {
    let (ca_kp, _) = shared_ca();
    let ca = shared_authority();
    let good = make_csr(&CsrSpec::default());
    let der_bytes = pem_der(&good);
    let mut bad_sig = der_bytes.clone();
    let n = bad_sig.len();
    bad_sig[n - 5] ^= 0xff;
    let mut bad_der = der_bytes.clone();
    bad_der[0] = 0x31;
    let mut trailing = der_bytes.clone();
    trailing.push(0);
    let block = |b: &[u8]| crate::pem::encode("CERTIFICATE REQUEST", b);
    for (name, input) in [
        ("empty", String::new()),
        ("not PEM", "hello".to_owned()),
        ("certificate instead of request", ca_kp.certificate.clone()),
        ("garbage in a request block", block(&[1, 2, 3])),
        ("wrong DER tag", block(&bad_der)),
        ("trailing DER", block(&trailing)),
        ("wrong signature", block(&bad_sig)),
    ] {
        match sign_csr(&ca, input.as_bytes(), &test_options()) {
            Err(SignError::Client(e)) => {
                assert_eq!((e.status, e.kind), (400, "InvalidCsr"), "{name}");
                let want = format!(
                    "Received invalid csr {}.",
                    python_semantics::python::bytes_repr(input.as_bytes())
                );
                assert_eq!(e.message, want, "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // NEW CERTIFICATE REQUEST after other blocks.
    let input = format!(
        "{}\n{}",
        ca_kp.certificate,
        crate::pem::encode("NEW CERTIFICATE REQUEST", &der_bytes)
    );
    sign_csr(&ca, input.as_bytes(), &test_options()).unwrap();
    // A wrong CA passphrase is a server error.
    let mut bad = ca_kp.clone();
    bad.passphrase = "nope".into();
    assert!(matches!(
        sign_csr_with_key_pair(&bad, good.as_bytes(), &test_options()),
        Err(SignError::Internal(_))
    ));
    sign_csr_with_key_pair(ca_kp, good.as_bytes(), &test_options()).unwrap();
    // A character above Latin-1 is a server error.
    assert!(matches!(
        sign_csr(
            &ca,
            "-----BEGIN CERTIFICATE REQUEST-----\n€".as_bytes(),
            &test_options()
        ),
        Err(SignError::Internal(_))
    ));
    // Latin-1 characters are echoed as bytes.
    match sign_csr(&ca, "é'".as_bytes(), &test_options()) {
        Err(SignError::Client(e)) => assert_eq!(e.message, r#"Received invalid csr b"\xe9'"."#),
        other => panic!("{other:?}"),
    }
}

/// Ports TestSignCSRDuplicateExtension.
#[test]
fn a_duplicate_extension_is_refused() {
    let ca = shared_authority();
    let key = &shared_ca().1;
    let eku = sample_extension_values()[names::EXTENDED_KEY_USAGE]
        .1
        .clone();
    let e = der::sequence(&[
        &der::oid_value(oids::EXTENDED_KEY_USAGE),
        &der::octets(&eku),
    ]);
    let attr = der::sequence(&[
        &der::oid_value("1.2.840.113549.1.9.14"),
        &der::set(&[&der::sequence(&[&e, &e])]),
    ]);
    let spki = key.public_key_to_der().unwrap();
    let info = der::sequence(&[
        &der::int(0),
        &der::name(&[("2.5.4.3", "x")]),
        &spki,
        &der::tlv(0xa0, &attr),
    ]);
    let csr = sign_request_info(&info);
    assert!(matches!(
        sign_csr(&ca, csr.as_bytes(), &test_options()),
        Err(SignError::Internal(_))
    ));
    // The same request with the extension once is signed.
    let attr = der::sequence(&[
        &der::oid_value("1.2.840.113549.1.9.14"),
        &der::set(&[&der::sequence(&[&e])]),
    ]);
    let info = der::sequence(&[
        &der::int(0),
        &der::name(&[("2.5.4.3", "x")]),
        &spki,
        &der::tlv(0xa0, &attr),
    ]);
    sign_csr(&ca, sign_request_info(&info).as_bytes(), &test_options()).unwrap();
}

/// Ports TestPythonBytesRepr: the CSR echo of InvalidCsr is Python's
/// `repr(bytes)`.
#[test]
fn python_bytes_repr() {
    for (input, want) in [
        (&b""[..], "b''"),
        (b"a\nb", r"b'a\nb'"),
        (b"it's", r#"b"it's""#),
        (b"'\"", r#"b'\'"'"#),
        (b"\x00\xff\\", r"b'\x00\xff\\'"),
    ] {
        assert_eq!(python_semantics::python::bytes_repr(input), want);
    }
}

/// The seed corpus of the `csr` fuzz target (the reference's 43 seeds) and
/// every table case hold the fuzz target's properties.
#[test]
fn fuzz_seeds_hold_the_properties() {
    let ca = fuzz_ca().unwrap();
    let dir = repo_root().join("fuzz/corpus/seed-csr");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        check_sign_csr(&ca, &std::fs::read(&path).unwrap());
        n += 1;
    }
    assert_eq!(n, 43, "seeds in {}", dir.display());
    for tc in sign_cases() {
        check_sign_csr(&ca, make_csr(&tc.csr).as_bytes());
    }
    check_sign_csr(
        &ca,
        b"-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n",
    );
}
