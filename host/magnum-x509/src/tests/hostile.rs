//! Hostile CSRs: huge, wrongly signed, asking for a CA, with unknown
//! critical extensions, with keys that are not certified. Each gets
//! Magnum's 400, and nothing signed is ever a CA.

use openssl::dsa::Dsa;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;

use super::sign::cert_wants;
use super::*;
use crate::oids;
use crate::{SignError, sign_csr};

enum Outcome {
    /// A 400 of this kind.
    Refused(&'static str),
    /// Signed, and the certificate is not a CA.
    SignedNotCa,
}

fn pem_block(der_bytes: &[u8]) -> String {
    crate::pem::encode("CERTIFICATE REQUEST", der_bytes)
}

/// A request whose public key is `spki`, with a signature that cannot be
/// right.
fn request_with_spki(spki: &[u8], sig_alg: &str) -> String {
    let info = der::sequence(&[
        &der::int(0),
        &der::name(&[("2.5.4.3", "x")]),
        spki,
        &der::tlv(0xa0, &[]),
    ]);
    let alg = der::sequence(&[&der::oid_value(sig_alg), &der::null_value()]);
    pem_block(&der::sequence(&[&info, &alg, &der::bits(&[0x55; 64])]))
}

#[test]
fn hostile_requests_get_magnums_400() {
    let ca = shared_authority();
    let good = make_csr(&CsrSpec::default());
    let mut bad_sig = pem_der(&good);
    let n = bad_sig.len();
    bad_sig[n - 1] ^= 0x01;
    // A huge RSA modulus (20000 bits) with a made-up signature.
    let mut modulus = vec![0xc5u8; 2500];
    modulus[0] = 0x00;
    modulus[2499] |= 1;
    let rsa_key = der::sequence(&[&der::tlv(0x02, &modulus), &der::int(65537)]);
    let huge_rsa = der::sequence(&[
        &der::sequence(&[&der::oid_value("1.2.840.113549.1.1.1"), &der::null_value()]),
        &der::bits(&rsa_key),
    ]);
    let x25519 = der::sequence(&[
        &der::sequence(&[&der::oid_value("1.3.101.110")]),
        &der::bits(&[9u8; 32]),
    ]);
    let dsa = PKey::from_dsa(Dsa::generate(2048).unwrap()).unwrap();
    let small_rsa = PKey::from_rsa(Rsa::generate(512).unwrap()).unwrap();
    let ed448 = PKey::generate_ed448().unwrap();
    let k256 = ec_key(Nid::SECP256K1);
    let key_csr = |key: PKey<Private>| {
        make_csr(&CsrSpec {
            key: Some(key),
            ..CsrSpec::default()
        })
    };
    let ca_true = |critical| {
        make_csr(&csr_with(vec![ext(
            oids::BASIC_CONSTRAINTS,
            critical,
            crate::generate::basic_constraints(true, None),
        )]))
    };
    let cert_sign = |critical| {
        make_csr(&csr_with(vec![ext(
            oids::KEY_USAGE,
            critical,
            ku_value(&[5, 6]),
        )]))
    };
    let mut many_unknown = Vec::new();
    for i in 0..2000 {
        many_unknown.push(ext(
            &format!("1.3.6.1.4.1.99999.{i}"),
            false,
            der::null_value(),
        ));
    }
    many_unknown.push(ext("1.3.6.1.4.1.99999.5000.1", true, der::null_value()));
    let cases: Vec<(&str, String, Outcome)> = vec![
        (
            "one MiB of base64 in a request block",
            pem_block(&vec![0x30; 786_432]),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "a length that claims more than the input",
            pem_block(&[
                0x30, 0x88, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02,
            ]),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "deep nesting",
            pem_block(&nested(5000)),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "a 20000-bit RSA key",
            request_with_spki(&huge_rsa, "1.2.840.113549.1.1.11"),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "a wrong signature",
            pem_block(&bad_sig),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "critical CA:TRUE",
            ca_true(true),
            Outcome::Refused("CertificateValidationError"),
        ),
        ("non-critical CA:TRUE", ca_true(false), Outcome::SignedNotCa),
        (
            "critical keyCertSign and cRLSign",
            cert_sign(true),
            Outcome::Refused("CertificateValidationError"),
        ),
        (
            "non-critical keyCertSign and cRLSign",
            cert_sign(false),
            Outcome::SignedNotCa,
        ),
        (
            "an unknown critical extension",
            make_csr(&csr_with(vec![ext(
                "1.3.6.1.4.1.99999.7",
                true,
                der::utf8("x"),
            )])),
            Outcome::Refused("CertificateValidationError"),
        ),
        (
            "an unknown critical extension after 2000 unknown ones",
            make_csr(&csr_with(many_unknown)),
            Outcome::Refused("CertificateValidationError"),
        ),
        ("a DSA key", key_csr(dsa), Outcome::Refused("InvalidCsr")),
        (
            "a 512-bit RSA key",
            key_csr(small_rsa),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "an Ed448 key",
            key_csr(ed448),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "a secp256k1 key",
            key_csr(k256),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "an X25519 key",
            request_with_spki(&x25519, "1.3.101.112"),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "an MD5 signature",
            make_csr(&CsrSpec {
                digest: Some(MessageDigest::md5()),
                ..CsrSpec::default()
            }),
            Outcome::Refused("InvalidCsr"),
        ),
        (
            "a malformed subjectAltName",
            make_csr(&csr_with(vec![ext(
                oids::SUBJECT_ALT_NAME,
                false,
                der::sequence(&[&der::tlv(0x87, &[1, 2, 3])]),
            )])),
            Outcome::Refused("InvalidCsr"),
        ),
    ];
    for (name, csr, outcome) in cases {
        for allow_all in [false, true] {
            let mut opts = test_options();
            if allow_all {
                opts.allowed_extensions = crate::options::ext::ALL.map(String::from).to_vec();
            }
            let got = sign_csr(&ca, csr.as_bytes(), &opts);
            match (&outcome, got) {
                (Outcome::Refused(kind), Err(SignError::Client(e))) => {
                    assert_eq!(
                        (e.status, e.kind),
                        (400, *kind),
                        "{name}: {}",
                        e.message.len()
                    );
                }
                (Outcome::SignedNotCa, Ok(pem)) => {
                    let c = cert_of(&pem);
                    for w in cert_wants(&c) {
                        if let super::sign::Want::Ext(oid, _, value) = w {
                            if oid == oids::BASIC_CONSTRAINTS {
                                assert_eq!(value, vec![0x30, 0x00], "{name}: CA:TRUE kept");
                            }
                            if oid == oids::KEY_USAGE {
                                let t = der::read_one(&value).unwrap();
                                let bits = der::bit_string(&t).unwrap();
                                assert!(!bits.bit(5) && !bits.bit(6), "{name}: CA usages kept");
                            }
                        }
                    }
                }
                (_, Ok(_)) => panic!("{name}: signed"),
                (_, Err(e)) => panic!("{name}: {e:?}"),
            }
        }
    }
}

/// `depth` nested SEQUENCEs.
fn nested(depth: usize) -> Vec<u8> {
    let mut v = der::sequence(&[]);
    for _ in 0..depth {
        v = der::sequence(&[&v]);
    }
    v
}
