//! Tests of the crate, ported from the reference implementation's, with
//! their shared fixtures: the sample x509keypair rows of the spec, CSR
//! builders, one CA for the signing tests and the Python oracle.

mod generate;
mod hostile;
mod oracle;
mod pkcs8;
mod sign;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use openssl::asn1::{Asn1Object, Asn1OctetString, Asn1Time, Asn1TimeRef};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private};
use openssl::rsa::Rsa;
use openssl::stack::Stack;
use openssl::x509::{X509, X509Extension, X509NameBuilder, X509Req, X509ReqBuilder};

use crate::der;
use crate::fuzzing::fixed_clock;
use crate::{KeyPair, X509Options};

pub use test_support::{in_ci, repo_root, spec_dir};

/// One x509keypair row of the sample database.
#[derive(Clone, Debug)]
pub struct SampleRow {
    pub id: String,
    pub certificate: String,
    pub private_key: String,
    pub passphrase: String,
}

impl SampleRow {
    pub fn key_pair(&self) -> KeyPair {
        KeyPair {
            certificate: self.certificate.clone(),
            private_key: self.private_key.clone(),
            passphrase: self.passphrase.clone(),
        }
    }
}

/// The x509keypair INSERTs of the spec's sample-data-mariadb.sql; `None`
/// (with a message) when the spec is not available outside CI.
pub fn sample_rows() -> Option<Vec<SampleRow>> {
    let path = spec_dir().join("db/sample-data-mariadb.sql");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if !in_ci() => {
            eprintln!("skipped: spec file {} not available: {e}", path.display());
            return None;
        }
        Err(e) => panic!("spec file {} not available: {e}", path.display()),
    };
    let mut out = Vec::new();
    for line in text.lines() {
        if !line.starts_with("INSERT INTO `x509keypair`") {
            continue;
        }
        let (cols, vals) = parse_insert(line).unwrap_or_else(|e| panic!("{e}: {:.60}", line));
        let get = |name: &str| {
            cols.iter()
                .position(|c| c == name)
                .map(|i| vals[i].clone())
                .unwrap_or_default()
        };
        out.push(SampleRow {
            id: get("id"),
            certificate: get("certificate"),
            private_key: get("private_key"),
            passphrase: get("private_key_passphrase"),
        });
    }
    assert!(!out.is_empty(), "no x509keypair rows in the sample data");
    Some(out)
}

/// Splits a single-row MariaDB INSERT into column names and values (NULL
/// becomes "", strings are unescaped).
fn parse_insert(line: &str) -> Result<(Vec<String>, Vec<String>), &'static str> {
    let open = line.find('(').ok_or("not an INSERT")?;
    let close = line.find(") VALUES (").ok_or("not a single-row INSERT")?;
    let cols: Vec<String> = line[open + 1..close]
        .split(',')
        .map(|c| c.trim().trim_matches('`').to_owned())
        .collect();
    let s = &line.as_bytes()[close + ") VALUES (".len()..];
    let mut vals = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\'' {
            let mut v = Vec::new();
            i += 1;
            while i < s.len() && s[i] != b'\'' {
                if s[i] == b'\\' && i + 1 < s.len() {
                    i += 1;
                    v.push(match s[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'0' => 0,
                        c => c,
                    });
                } else {
                    v.push(s[i]);
                }
                i += 1;
            }
            if i >= s.len() {
                return Err("unterminated string");
            }
            vals.push(String::from_utf8(v).map_err(|_| "not UTF-8")?);
            i += 1;
        } else {
            let end = s[i..]
                .iter()
                .position(|b| *b == b',' || *b == b')')
                .ok_or("unterminated value")?;
            let v = std::str::from_utf8(&s[i..i + end])
                .map_err(|_| "not UTF-8")?
                .trim();
            vals.push(if v == "NULL" {
                String::new()
            } else {
                v.to_owned()
            });
            i += end;
        }
        if i < s.len() && s[i] == b',' {
            i += 1;
            continue;
        }
        break;
    }
    if cols.len() != vals.len() {
        return Err("column and value counts differ");
    }
    Ok((cols, vals))
}

/// Magnum's defaults with the fixed clock.
pub fn test_options() -> X509Options {
    X509Options {
        now: fixed_clock,
        ..X509Options::default()
    }
}

/// The shared 1024-bit CA `CN=k8s-prod-1` (small keys keep the tests fast)
/// and the RSA key the test CSRs are signed with.
pub fn shared_ca() -> &'static (KeyPair, PKey<Private>) {
    static CA: OnceLock<(KeyPair, PKey<Private>)> = OnceLock::new();
    CA.get_or_init(|| {
        let opts = X509Options {
            rsa_key_size: 1024,
            ..test_options()
        };
        let ca = crate::generate_ca("k8s-prod-1", &opts).unwrap();
        let key = PKey::from_rsa(Rsa::generate(1024).unwrap()).unwrap();
        (ca, key)
    })
}

pub fn shared_authority() -> crate::CertificateAuthority {
    crate::CertificateAuthority::load(&shared_ca().0).unwrap()
}

pub fn cert_of(pem: &str) -> X509 {
    X509::from_pem(pem.as_bytes()).unwrap()
}

/// Seconds since the epoch of an ASN.1 time.
pub fn unix(t: &Asn1TimeRef) -> i64 {
    let d = Asn1Time::from_unix(0).unwrap().diff(t).unwrap();
    i64::from(d.days) * 86400 + i64::from(d.secs)
}

/// A test CSR: the key (the shared RSA key when `None`), the subject
/// (`O=system:nodes, CN=system:node:worker-0` when empty) and the requested
/// extensions as (dotted OID, critical, DER value).
#[derive(Clone, Default)]
pub struct CsrSpec {
    pub key: Option<PKey<Private>>,
    pub digest: Option<MessageDigest>,
    pub subject: Vec<(Nid, String)>,
    pub exts: Vec<(String, bool, Vec<u8>)>,
}

pub fn ext(oid: &str, critical: bool, value: Vec<u8>) -> (String, bool, Vec<u8>) {
    (oid.to_owned(), critical, value)
}

pub fn csr_with(exts: Vec<(String, bool, Vec<u8>)>) -> CsrSpec {
    CsrSpec {
        exts,
        ..CsrSpec::default()
    }
}

pub fn make_csr(spec: &CsrSpec) -> String {
    let key = spec.key.clone().unwrap_or_else(|| shared_ca().1.clone());
    let mut b = X509ReqBuilder::new().unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    if spec.subject.is_empty() {
        name.append_entry_by_nid(Nid::ORGANIZATIONNAME, "system:nodes")
            .unwrap();
        name.append_entry_by_nid(Nid::COMMONNAME, "system:node:worker-0")
            .unwrap();
    }
    for (nid, v) in &spec.subject {
        name.append_entry_by_nid(*nid, v).unwrap();
    }
    b.set_subject_name(&name.build()).unwrap();
    b.set_pubkey(&key).unwrap();
    if !spec.exts.is_empty() {
        let mut stack = Stack::new().unwrap();
        for (oid, critical, value) in &spec.exts {
            let o = Asn1Object::from_str(oid).unwrap();
            let v = Asn1OctetString::new_from_bytes(value).unwrap();
            stack
                .push(X509Extension::new_from_der(&o, *critical, &v).unwrap())
                .unwrap();
        }
        b.add_extensions(&stack).unwrap();
    }
    let digest = spec.digest.unwrap_or(match key.id() {
        Id::ED25519 | Id::ED448 => MessageDigest::null(),
        _ => MessageDigest::sha256(),
    });
    b.sign(&key, digest).unwrap();
    String::from_utf8(b.build().to_pem().unwrap()).unwrap()
}

/// The DER of the first PEM block of `pem`.
pub fn pem_der(pem: &str) -> Vec<u8> {
    crate::pem::find(pem.as_bytes(), |_| true).unwrap().der
}

pub fn req_of(pem: &str) -> X509Req {
    X509Req::from_pem(pem.as_bytes()).unwrap()
}

pub fn ec_key(curve: Nid) -> PKey<Private> {
    let group = openssl::ec::EcGroup::from_curve_name(curve).unwrap();
    PKey::from_ec_key(openssl::ec::EcKey::generate(&group).unwrap()).unwrap()
}

pub fn ed25519_key() -> PKey<Private> {
    PKey::generate_ed25519().unwrap()
}

/// A context-specific primitive string element (`[tag] IMPLICIT IA5String`).
pub fn ia5(tag: u8, s: &str) -> Vec<u8> {
    der::tlv(0x80 | tag, s.as_bytes())
}

/// A keyUsage value with the given bit numbers.
pub fn ku_value(bits: &[usize]) -> Vec<u8> {
    der::named_bits(&crate::generate::key_usage_bits(bits))
}

/// Builds a CSR from a hand-made CertificationRequestInfo signed with the
/// shared RSA key.
pub fn sign_request_info(info: &[u8]) -> String {
    let key = &shared_ca().1;
    let mut signer = openssl::sign::Signer::new(MessageDigest::sha256(), key).unwrap();
    signer.update(info).unwrap();
    let sig = signer.sign_to_vec().unwrap();
    let alg = der::sequence(&[&der::oid_value("1.2.840.113549.1.1.11"), &der::null_value()]);
    let csr = der::sequence(&[info, &alg, &der::bits(&sig)]);
    crate::pem::encode("CERTIFICATE REQUEST", &csr)
}

/// A python with the cryptography package (`OPENKEEL_TEST_PYTHON`), or
/// `None` with a message outside CI.
pub fn oracle_python() -> Option<String> {
    let candidate = std::env::var("OPENKEEL_TEST_PYTHON")
        .ok()
        .filter(|p| !p.is_empty());
    if let Some(p) = candidate {
        let ok = Command::new(&p)
            .args(["-c", "import cryptography"])
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(p);
        }
    }
    assert!(
        !in_ci(),
        "no python with the cryptography package (set OPENKEEL_TEST_PYTHON)"
    );
    eprintln!("skipped: no python with the cryptography package (set OPENKEEL_TEST_PYTHON)");
    None
}

/// Runs `script` with `input` as JSON on stdin and parses its JSON stdout.
pub fn run_python(python: &str, script: &str, input: &serde_json::Value) -> serde_json::Value {
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
