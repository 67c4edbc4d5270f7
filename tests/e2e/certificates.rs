//! `openstack coe cluster config` end to end on `all-in-one` (the
//! certificate steps of the Go `TestOpenStackCLILifecycleOnAllInOne`): the
//! kubeconfig the client writes holds a client certificate that
//! `openssl verify` accepts against the CA `openstack coe ca show` prints,
//! with `CN=admin, O=system:masters`, only a subjectKeyIdentifier and
//! Magnum's validity.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::{Coe, Server, run, service_env};

#[test]
fn cluster_config_writes_a_kubeconfig_that_verifies_against_the_ca() {
    let Some(cli) = service_env("OPENKEEL_TEST_OPENSTACK_CLI") else {
        return;
    };
    let s = Server::start("", &["all-in-one"]);
    let c = Coe {
        cli,
        endpoint: format!("{}/v1", s.url),
    };
    c.ok(&[
        "cluster",
        "template",
        "create",
        "--coe",
        "kubernetes",
        "--image",
        "ubuntu-jammy-kube",
        "--external-network",
        "public",
        "--flavor",
        "m1.small",
        "--master-flavor",
        "m1.medium",
        "--labels",
        "kube_tag=v1.31.1",
        "tpl1",
    ]);
    c.ok(&[
        "cluster",
        "create",
        "--cluster-template",
        "tpl1",
        "--node-count",
        "1",
        "c1",
    ]);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let st = c.status("c1");
        if st == "CREATE_COMPLETE" {
            break;
        }
        assert!(
            !st.ends_with("FAILED") && Instant::now() < deadline,
            "cluster c1 is {st}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().display().to_string();
    c.ok(&["cluster", "config", "c1", "--dir", &d, "--force"]);
    let ca = c.ok(&["ca", "show", "c1"]);
    // `ca show` prints what GET /v1/certificates serves.
    let served = crate::harness::get(&format!("{}/v1/certificates/c1", s.url), &[])
        .expect("GET /v1/certificates/c1");
    assert_eq!(served.status, 200);
    assert_eq!(
        served.json()["pem"].as_str().map(str::trim),
        Some(ca.trim()),
        "ca show and GET /v1/certificates differ"
    );
    check_kubeconfig(dir.path(), &ca);
}

/// Go `checkKubeconfig`: the client certificate of `dir/config` verifies
/// against `ca_pem` with `openssl verify`, has the admin subject, only a
/// subjectKeyIdentifier, and `term_of_validity` (1825) + 1 days; the
/// kubeconfig's CA is `ca_pem`.
fn check_kubeconfig(dir: &Path, ca_pem: &str) {
    let raw = std::fs::read_to_string(dir.join("config")).expect("kubeconfig");
    let data = raw
        .lines()
        .find_map(|l| l.trim().strip_prefix("client-certificate-data:"))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no client-certificate-data in the kubeconfig:\n{raw}"));
    let cert_pem = openssl::base64::decode_block(data).expect("base64");
    let cert_file = dir.join("client.crt");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&cert_file, &cert_pem).expect("write");
    std::fs::write(&ca_file, ca_pem).expect("write");
    let openssl = Path::new("openssl");
    let v = run(
        openssl,
        &[
            "verify",
            "-CAfile",
            &ca_file.display().to_string(),
            &cert_file.display().to_string(),
        ],
        Duration::from_secs(30),
    );
    assert!(
        v.code == 0 && v.stdout.contains(": OK"),
        "openssl verify: {v:?}"
    );
    let cert = openssl::x509::X509::from_pem(&cert_pem).expect("client certificate PEM");
    let subject = |nid| {
        cert.subject_name()
            .entries_by_nid(nid)
            .next()
            .map(|e| String::from_utf8_lossy(e.data().as_slice()).into_owned())
            .unwrap_or_default()
    };
    assert_eq!(subject(openssl::nid::Nid::COMMONNAME), "admin");
    assert_eq!(
        subject(openssl::nid::Nid::ORGANIZATIONNAME),
        "system:masters"
    );
    // The client's CSR asks for no extension: Magnum's signer adds only a
    // non-critical subjectKeyIdentifier, the SHA-1 of the public key's bits
    // (cryptography's `SubjectKeyIdentifier.from_public_key`).
    let der = cert.to_der().expect("DER");
    let (_, parsed) = x509_parser::parse_x509_certificate(&der).expect("parse");
    let exts: Vec<(String, bool)> = parsed
        .extensions()
        .iter()
        .map(|e| (e.oid.to_id_string(), e.critical))
        .collect();
    assert_eq!(
        exts,
        [("2.5.29.14".to_owned(), false)],
        "only a non-critical subjectKeyIdentifier"
    );
    let ski = parsed
        .extensions()
        .first()
        .map(|e| e.value.to_vec())
        .unwrap_or_default();
    let key_bits = parsed.public_key().subject_public_key.data.to_vec();
    let mut want = vec![0x04, 0x14];
    want.extend_from_slice(&openssl::sha::sha1(&key_bits));
    assert_eq!(ski, want, "the subjectKeyIdentifier is the key's SHA-1");
    // Magnum's validity: from a day before the signing to
    // `term_of_validity` (1825) days after it, to the second.
    let secs = parsed.validity().not_after.timestamp() - parsed.validity().not_before.timestamp();
    assert_eq!(secs, 1826 * 86_400, "validity {secs} s");
    assert!(!parsed.is_ca(), "the client certificate is a CA");
    // The kubeconfig's CA is the one GET /v1/certificates serves.
    let ca_data = raw
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data:"))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no certificate-authority-data in the kubeconfig:\n{raw}"));
    let ca_in_config = openssl::base64::decode_block(ca_data).expect("base64");
    let pem_der = |pem: &[u8]| {
        openssl::x509::X509::from_pem(pem)
            .and_then(|c| c.to_der())
            .expect("CA PEM")
    };
    assert_eq!(
        pem_der(&ca_in_config),
        pem_der(ca_pem.as_bytes()),
        "the kubeconfig's CA is not the one of GET /v1/certificates"
    );
}

/// `[certificates]/cert_manager_type`: kubernetes needs a reachable
/// management cluster configuration; barbican and local are refused at
/// start. Each is one line naming the option, never a panic.
#[test]
fn certificate_store_start_up_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("magnum.db").display().to_string();
    let missing = dir.path().join("no-such-kubeconfig").display().to_string();
    for (name, store, want) in [
        (
            "kubernetes without a kubeconfig",
            format!("kubernetes\n[capi]\nkubeconfig = {missing}\n"),
            "[capi]/kubeconfig",
        ),
        (
            "barbican",
            "barbican\n".to_owned(),
            "cert_manager_type = barbican is not supported",
        ),
        (
            "local",
            "local\n".to_owned(),
            "cert_manager_type = local is not supported",
        ),
    ] {
        let conf = dir.path().join("magnum.conf");
        std::fs::write(
            &conf,
            format!(
                "[DEFAULT]\nauth_strategy = noauth\n[database]\nconnection = sqlite:///{db}\n[certificates]\ncert_manager_type = {store}"
            ),
        )
        .expect("write conf");
        let conf = conf.display().to_string();
        let o = crate::harness::okm(&["db", "upgrade", "--config-file", &conf]);
        assert_eq!(o.code, 0, "db upgrade: {}", o.stderr);
        let o = crate::harness::okm(&["api", "--config-file", &conf]);
        assert_ne!(o.code, 0, "{name}: the server started");
        let last = o.stderr.trim().lines().last().unwrap_or("").to_owned();
        assert!(
            last.contains(want),
            "{name}: last stderr line {last:?} (stderr: {})",
            o.stderr
        );
        assert!(!o.stderr.contains("panicked"), "{name}: {}", o.stderr);
    }
}
