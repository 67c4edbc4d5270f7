//! Generation: the CAs and the admin certificate against Magnum's sample
//! rows, names, validity, cancellation.

use chrono::NaiveDate;
use openssl::asn1::Asn1Time;
use openssl::x509::X509;

use super::*;
use crate::builder::validity;
use crate::fuzzing::certificate_extensions;
use crate::{
    ADMIN_COMMON_NAME, ADMIN_ORGANIZATION, CaKind, ClusterCertificates, GenerateError, generate_ca,
    generate_client_cert, generate_cluster_certificates, generate_cluster_certificates_until,
    issuer_name, subject_key_identifier,
};

/// Everything about a certificate that must be identical between Magnum
/// and us, leaving out keys, serial values and signatures.
#[derive(Debug, PartialEq)]
struct Shape {
    version: i32,
    uuid4_serial: bool,
    signature: String,
    issuer: Vec<u8>,
    subject: Vec<u8>,
    valid_secs: i64,
    /// (OID, critical, value); the subject key identifier's value is
    /// checked apart and left empty.
    extensions: Vec<(String, bool, Vec<u8>)>,
}

fn shape(c: &X509) -> Shape {
    let serial = c.serial_number().to_bn().unwrap().to_vec();
    let uuid4_serial = !serial.is_empty() && serial.len() <= 16 && {
        let mut b = [0u8; 16];
        b[16 - serial.len()..].copy_from_slice(&serial);
        b[6] >> 4 == 4 && b[8] >> 6 == 2
    };
    let ski =
        subject_key_identifier(&c.public_key().unwrap().public_key_to_der().unwrap()).unwrap();
    let extensions = certificate_extensions(&c.to_der().unwrap())
        .into_iter()
        .map(|(oid, critical, value)| {
            if oid == "2.5.29.14" {
                assert_eq!(
                    value,
                    der::octets(&ski),
                    "subject key identifier is not SHA-1 of the key"
                );
                (oid, critical, Vec::new())
            } else {
                (oid, critical, value)
            }
        })
        .collect();
    Shape {
        version: c.version(),
        uuid4_serial,
        signature: c.signature_algorithm().object().to_string(),
        issuer: c.issuer_name().to_der().unwrap(),
        subject: c.subject_name().to_der().unwrap(),
        valid_secs: unix(c.not_after()) - unix(c.not_before()),
        extensions,
    }
}

/// Ports TestGenerateMatchesSampleRows.
#[test]
fn generated_certificates_have_the_shape_of_magnums_sample_rows() {
    let Some(rows) = sample_rows() else { return };
    // Rows 1-3 are the kubernetes, etcd and front-proxy CAs of cluster
    // k8s-prod-1, row 4 its admin client certificate.
    let ca = cert_of(&rows[0].certificate);
    let client = cert_of(&rows[3].certificate);
    let cn = String::from_utf8(
        ca.subject_name()
            .entries()
            .next()
            .unwrap()
            .data()
            .as_slice()
            .to_vec(),
    )
    .unwrap();
    assert_eq!(cn, "k8s-prod-1");

    let opts = test_options();
    let ours = generate_ca(&cn, &opts).unwrap();
    let our_ca = cert_of(&ours.certificate);
    assert_eq!(shape(&our_ca), shape(&ca), "CA differs from Magnum's");
    for r in &rows[1..3] {
        assert_eq!(
            shape(&our_ca),
            shape(&cert_of(&r.certificate)),
            "row {}",
            r.id
        );
    }
    let our_client =
        generate_client_cert(&ours, ADMIN_COMMON_NAME, ADMIN_ORGANIZATION, &opts).unwrap();
    let oc = cert_of(&our_client.certificate);
    assert_eq!(
        shape(&oc),
        shape(&client),
        "client certificate differs from Magnum's"
    );

    assert!(!ours.certificate.ends_with('\n') && !rows[0].certificate.ends_with('\n'));
    assert!(
        ours.private_key
            .ends_with("-----END ENCRYPTED PRIVATE KEY-----\n")
    );
    // The sample client certificate is signed by the sample Kubernetes CA,
    // ours by ours.
    assert!(client.verify(&ca.public_key().unwrap()).unwrap());
    assert!(oc.verify(&our_ca.public_key().unwrap()).unwrap());
    assert!(!oc.verify(&ca.public_key().unwrap()).unwrap());
}

/// Ports TestGenerateClusterCertificates.
#[test]
fn cluster_certificates_chain_and_are_independent() {
    let opts = test_options();
    let cc = generate_cluster_certificates("my-cluster", &opts).unwrap();
    let k8s = cert_of(&cc.kubernetes.certificate);
    let want_before = NaiveDate::from_ymd_opt(2026, 11, 29)
        .unwrap()
        .and_hms_opt(1, 48, 7)
        .unwrap()
        .and_utc()
        .timestamp();
    for (name, kp) in [
        ("kubernetes", &cc.kubernetes),
        ("etcd", &cc.etcd),
        ("front-proxy", &cc.front_proxy),
        ("client", &cc.client),
    ] {
        let c = cert_of(&kp.certificate);
        let key = kp.key().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(key.rsa().unwrap().size() * 8, 2048, "{name}: key size");
        assert!(
            c.public_key().unwrap().public_eq(&key),
            "{name}: key does not match"
        );
        let issuer = c
            .issuer_name()
            .entries()
            .next()
            .unwrap()
            .data()
            .as_slice()
            .to_vec();
        assert_eq!(issuer, b"my-cluster", "{name}");
        assert_eq!(unix(c.not_before()), want_before, "{name}: not before");
        assert_eq!(
            unix(c.not_after()),
            want_before + 1826 * 86400,
            "{name}: not after"
        );
        assert_eq!(kp.passphrase.len(), 12, "{name}: passphrase");
        let dec = kp.decrypted_key_pem().unwrap();
        assert!(dec.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{name}");
        assert!(
            crate::decrypt_pkcs8_pem(dec.as_bytes(), "")
                .unwrap()
                .public_eq(&key)
        );
    }
    let client = cert_of(&cc.client.certificate);
    let subject: Vec<(String, String)> = client
        .subject_name()
        .entries()
        .map(|e| {
            (
                e.object().nid().short_name().unwrap().to_owned(),
                String::from_utf8(e.data().as_slice().to_vec()).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        subject,
        [
            ("CN".into(), "admin".into()),
            ("O".into(), "system:masters".into())
        ]
    );
    assert!(client.verify(&k8s.public_key().unwrap()).unwrap());
    // The client chains to the kubernetes CA for client authentication.
    let mut store = openssl::x509::store::X509StoreBuilder::new().unwrap();
    store.add_cert(k8s.clone()).unwrap();
    let mut param = openssl::x509::verify::X509VerifyParam::new().unwrap();
    param.set_time(want_before + 86400);
    param
        .set_purpose(openssl::x509::X509PurposeId::SSL_CLIENT)
        .unwrap();
    store.set_param(&param).unwrap();
    let store = store.build();
    let chain = openssl::stack::Stack::new().unwrap();
    let mut ctx = openssl::x509::X509StoreContext::new().unwrap();
    let ok = ctx
        .init(&store, &client, &chain, |c| c.verify_cert())
        .unwrap();
    assert!(
        ok,
        "client does not chain to the kubernetes CA: {}",
        ctx.error()
    );
    assert_ne!(
        cc.kubernetes.certificate, cc.etcd.certificate,
        "CAs are not independent"
    );
    assert_ne!(cc.etcd.passphrase, cc.front_proxy.passphrase);
    assert_eq!(cc.ca(CaKind::Etcd), &cc.etcd);
}

/// Ports TestGenerateNames.
#[test]
fn issuer_names_and_the_name_length_rule() {
    assert_eq!(issuer_name(Some("c"), "u"), "c");
    assert_eq!(issuer_name(Some(""), "u"), "", "an empty name is a name");
    assert_eq!(issuer_name(None, "u"), "u");
    let opts = X509Options {
        rsa_key_size: 1024,
        ..test_options()
    };
    for (name, ok) in [
        (String::new(), false),
        ("a".repeat(64), true),
        ("a".repeat(65), false),
        (format!("é{}", "a".repeat(63)), true),
    ] {
        let got = generate_ca(&name, &opts);
        assert_eq!(
            got.is_ok(),
            ok,
            "{} chars: {:?}",
            name.chars().count(),
            got.err()
        );
    }
    let err = generate_ca(&"a".repeat(65), &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Attribute's length must be >= 1 and <= 64, but it was 65"
    );
    let ca = generate_ca("c", &opts).unwrap();
    assert!(matches!(
        generate_client_cert(&ca, "admin", &"o".repeat(65), &opts),
        Err(GenerateError::NameLength(65))
    ));
    // A UTF-8 name is written as a UTF8String, unchanged.
    let cert = cert_of(&generate_ca("clüster", &opts).unwrap().certificate);
    let der = cert.subject_name().to_der().unwrap();
    assert_eq!(der, der::name(&[("2.5.4.3", "clüster")]));
}

/// Ports TestValidityUsesWallClockAsUTC.
#[test]
fn validity_writes_the_wall_clock_as_utc() {
    // Magnum: datetime.today() is naive local time, written as UTC.
    fn clock() -> chrono::NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 1, 10)
            .unwrap()
            .and_hms_nano_opt(12, 0, 0, 999)
            .unwrap()
    }
    let opts = X509Options {
        now: clock,
        ..X509Options::default()
    };
    let (nb, na) = validity(&opts).unwrap();
    let noon = NaiveDate::from_ymd_opt(2026, 1, 10)
        .unwrap()
        .and_hms_opt(12, 0, 0)
        .unwrap()
        .and_utc()
        .timestamp();
    assert_eq!(unix(&nb), noon - 86400);
    assert_eq!(unix(&na), noon + 1825 * 86400);
    // Dates from 2050 are GeneralizedTime, before UTCTime.
    fn late() -> chrono::NaiveDateTime {
        NaiveDate::from_ymd_opt(2051, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
    }
    let opts = X509Options {
        now: late,
        rsa_key_size: 1024,
        term_of_validity: 1,
        ..X509Options::default()
    };
    let cert = cert_of(&generate_ca("c", &opts).unwrap().certificate);
    let cert_der = cert.to_der().unwrap();
    let top = der::read_sequence(&cert_der).unwrap();
    let tbs = der::sequence_of(&top[0]).unwrap();
    let times = der::sequence_of(&tbs[4]).unwrap();
    assert_eq!(times[0].number, 24, "2050-12-31 is GeneralizedTime");
    assert_eq!(times[1].number, 24);
    let cert = cert_of(&shared_ca().0.certificate);
    let cert_der = cert.to_der().unwrap();
    let top = der::read_sequence(&cert_der).unwrap();
    let times = der::sequence_of(&der::sequence_of(&top[0]).unwrap()[4]).unwrap();
    assert_eq!(
        (times[0].number, times[1].number),
        (23, 23),
        "UTCTime before 2050"
    );
    // A term past what a certificate can hold is an error, not a panic.
    let opts = X509Options {
        term_of_validity: i64::MAX,
        ..test_options()
    };
    assert!(validity(&opts).is_err());
    let opts = X509Options {
        term_of_validity: 3_000_000,
        ..test_options()
    };
    assert!(validity(&opts).is_err());
    assert!(Asn1Time::from_unix(0).is_ok());
}

/// Ports TestParseCACertType.
#[test]
fn ca_cert_type_picks_the_ca() {
    for (input, want) in [
        (None, CaKind::Kubernetes),
        (Some(""), CaKind::Kubernetes),
        (Some("kubernetes"), CaKind::Kubernetes),
        (Some("ETCD"), CaKind::Kubernetes),
        (Some("bogus"), CaKind::Kubernetes),
        (Some("etcd"), CaKind::Etcd),
        (Some("front_proxy"), CaKind::FrontProxy),
        (Some("front-proxy"), CaKind::FrontProxy),
    ] {
        assert_eq!(CaKind::from_ca_cert_type(input), want, "{input:?}");
    }
    let kp = |c: &str| KeyPair {
        certificate: c.into(),
        private_key: String::new(),
        passphrase: String::new(),
    };
    let cc = ClusterCertificates {
        kubernetes: kp("k"),
        etcd: kp("e"),
        front_proxy: kp("f"),
        client: kp("c"),
    };
    assert_eq!(cc.ca(CaKind::Kubernetes).certificate, "k");
    assert_eq!(cc.ca(CaKind::Etcd).certificate, "e");
    assert_eq!(cc.ca(CaKind::FrontProxy).certificate, "f");
}

/// Ports TestGenerateClusterCertificatesContextStops.
#[test]
fn generation_stops_between_keys_when_cancelled() {
    let opts = X509Options {
        rsa_key_size: 1024,
        ..test_options()
    };
    assert!(matches!(
        generate_cluster_certificates_until("c1", &opts, &|| true),
        Err(GenerateError::Cancelled)
    ));
    // Cancelled after the second key: two asks answered false, then true.
    let asked = std::cell::Cell::new(0);
    let got = generate_cluster_certificates_until("c1", &opts, &|| {
        asked.set(asked.get() + 1);
        asked.get() > 2
    });
    assert!(matches!(got, Err(GenerateError::Cancelled)));
    assert_eq!(asked.get(), 3);
    let cc = generate_cluster_certificates_until("c1", &opts, &|| false).unwrap();
    assert!(cc.client.key().is_ok());
}

#[test]
fn debug_of_a_key_pair_shows_no_secret() {
    let kp = KeyPair {
        certificate: "cert".into(),
        private_key: "-----BEGIN ENCRYPTED PRIVATE KEY-----secret".into(),
        passphrase: "hunter2".into(),
    };
    let shown = format!("{kp:?}");
    assert!(
        !shown.contains("secret") && !shown.contains("hunter2"),
        "{shown}"
    );
    let ca = shared_authority();
    assert!(!format!("{ca:?}").contains("BEGIN"));
}
