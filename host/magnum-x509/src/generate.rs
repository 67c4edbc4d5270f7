//! The certificates Magnum makes for every cluster
//! (magnum/conductor/handlers/common/cert_manager.py,
//! magnum/common/x509/operations.py): three self-signed CAs (Kubernetes,
//! etcd, front-proxy) and the admin client certificate signed by the
//! Kubernetes CA.

use std::fmt;

use openssl::asn1::Asn1Type;
use openssl::error::ErrorStack;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::x509::{X509, X509Name, X509NameBuilder};

use crate::builder::{self, BuildError, Extension};
use crate::der;
use crate::oids;
use crate::options::X509Options;
use crate::pkcs8::{self, KeyError};

/// The common name of the admin client certificate.
pub const ADMIN_COMMON_NAME: &str = "admin";
/// The organisation of the admin client certificate: Kubernetes RBAC maps
/// `O=system:masters` to cluster-admin.
pub const ADMIN_ORGANIZATION: &str = "system:masters";

/// A certificate with its private key as Magnum stores them (one
/// x509keypair row). `Debug` shows neither the key nor the passphrase.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyPair {
    /// The PEM certificate, without a trailing newline (Magnum strips it).
    pub certificate: String,
    /// The PKCS#8 private key: an `ENCRYPTED PRIVATE KEY` PEM encrypted with
    /// `passphrase`.
    pub private_key: String,
    /// The passphrase of `private_key` (`private_key_passphrase`).
    pub passphrase: String,
}

impl fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyPair")
            .field("certificate", &"<pem>")
            .field("private_key", &"<redacted>")
            .field("passphrase", &"<redacted>")
            .finish()
    }
}

impl KeyPair {
    /// Parses the certificate.
    pub fn x509(&self) -> Result<X509, KeyError> {
        X509::from_pem(self.certificate.as_bytes()).map_err(KeyError::Parse)
    }

    /// Decrypts the private key with the passphrase.
    pub fn key(&self) -> Result<PKey<Private>, KeyError> {
        pkcs8::decrypt_pkcs8_pem(self.private_key.as_bytes(), &self.passphrase)
    }

    /// The private key as unencrypted PKCS#8 PEM (`PRIVATE KEY`), as
    /// Magnum's `get_decrypted_private_key` returns it and the Cluster API
    /// certificate Secrets (`tls.key`) hold it.
    pub fn decrypted_key_pem(&self) -> Result<String, KeyError> {
        let key = self.key()?;
        pkcs8::encrypt_pkcs8_pem(&key, "")
    }
}

/// The certificates Magnum generates for a cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterCertificates {
    /// The cluster CA (`ca_cert_ref`).
    pub kubernetes: KeyPair,
    /// The etcd CA (`etcd_ca_cert_ref`).
    pub etcd: KeyPair,
    /// The front-proxy CA (`front_proxy_ca_cert_ref`).
    pub front_proxy: KeyPair,
    /// The admin client certificate signed by the Kubernetes CA
    /// (`magnum_cert_ref`).
    pub client: KeyPair,
}

impl ClusterCertificates {
    /// The CA of the given kind.
    pub fn ca(&self, kind: CaKind) -> &KeyPair {
        match kind {
            CaKind::Kubernetes => &self.kubernetes,
            CaKind::Etcd => &self.etcd,
            CaKind::FrontProxy => &self.front_proxy,
        }
    }
}

/// One of a cluster's three CAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaKind {
    Kubernetes,
    Etcd,
    FrontProxy,
}

impl CaKind {
    /// Maps the `ca_cert_type` of the certificate routes to a CA as Magnum
    /// does (cert_manager.py): `etcd` is the etcd CA, `front_proxy` and
    /// `front-proxy` the front-proxy CA, anything else (absent, `kubernetes`,
    /// unknown strings) the Kubernetes CA. It never fails.
    pub fn from_ca_cert_type(value: Option<&str>) -> CaKind {
        match value {
            Some("etcd") => CaKind::Etcd,
            Some("front_proxy" | "front-proxy") => CaKind::FrontProxy,
            _ => CaKind::Kubernetes,
        }
    }
}

/// The subject of a cluster's CAs: the cluster name, or its UUID when the
/// cluster has no name (Magnum's `_get_issuer_name`; an empty name is a
/// name).
pub fn issuer_name<'a>(name: Option<&'a str>, uuid: &'a str) -> &'a str {
    name.unwrap_or(uuid)
}

/// Why certificates could not be generated. No variant carries key
/// material.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// cryptography's `NameAttribute` refusal (Magnum hits it with long
    /// cluster names).
    #[error("Attribute's length must be >= 1 and <= 64, but it was {0}")]
    NameLength(usize),
    /// The caller stopped the generation between two keys.
    #[error("certificate generation cancelled")]
    Cancelled,
    #[error("generate RSA key: {0}")]
    Key(ErrorStack),
    #[error("CA: {0}")]
    Ca(KeyError),
    #[error(transparent)]
    Encrypt(KeyError),
    #[error(transparent)]
    Build(#[from] BuildError),
}

impl From<ErrorStack> for GenerateError {
    fn from(e: ErrorStack) -> Self {
        GenerateError::Build(BuildError::Crypto(e))
    }
}

/// Makes the three CAs and the admin client certificate in Magnum's order
/// (kubernetes, etcd, front-proxy, client).
pub fn generate_cluster_certificates(
    issuer: &str,
    opts: &X509Options,
) -> Result<ClusterCertificates, GenerateError> {
    generate_cluster_certificates_until(issuer, opts, &|| false)
}

/// [`generate_cluster_certificates`] that asks `cancelled` before each of
/// its four keys and stops with [`GenerateError::Cancelled`] once it answers
/// true (a key being generated is finished first).
pub fn generate_cluster_certificates_until(
    issuer: &str,
    opts: &X509Options,
    cancelled: &dyn Fn() -> bool,
) -> Result<ClusterCertificates, GenerateError> {
    let step = || {
        if cancelled() {
            Err(GenerateError::Cancelled)
        } else {
            Ok(())
        }
    };
    step()?;
    let kubernetes = generate_ca(issuer, opts)?;
    step()?;
    let etcd = generate_ca(issuer, opts)?;
    step()?;
    let front_proxy = generate_ca(issuer, opts)?;
    step()?;
    let client = generate_client_cert(&kubernetes, ADMIN_COMMON_NAME, ADMIN_ORGANIZATION, opts)?;
    Ok(ClusterCertificates {
        kubernetes,
        etcd,
        front_proxy,
        client,
    })
}

/// Makes a self-signed CA with subject and issuer `CN=name` (UTF8String), an
/// RSA key of `opts.rsa_key_size` bits, validity from now − 1 day to now +
/// `term_of_validity` days, and Magnum's extensions: critical
/// basicConstraints `CA:TRUE, pathlen:0`, critical keyUsage keyCertSign,
/// then a non-critical subjectKeyIdentifier. The key is encrypted with a
/// fresh passphrase.
pub fn generate_ca(name: &str, opts: &X509Options) -> Result<KeyPair, GenerateError> {
    check_name_attribute(name)?;
    let key = new_key(opts)?;
    let subject = x509_name(&[(Nid::COMMONNAME, name)])?;
    let extensions = [
        Extension {
            oid: oids::BASIC_CONSTRAINTS.into(),
            critical: true,
            value: basic_constraints(true, Some(0)),
        },
        Extension {
            oid: oids::KEY_USAGE.into(),
            critical: true,
            value: der::named_bits(&key_usage_bits(&[5])),
        },
    ];
    let cert = builder::build_certificate(&subject, &subject, &key, &extensions, &key, opts)?;
    finish(&cert, &key)
}

/// Makes a client certificate `CN=cn[, O=org]` signed by `ca`, with Magnum's
/// client extensions: critical keyUsage digitalSignature and
/// keyEncipherment, non-critical extendedKeyUsage clientAuth, critical
/// basicConstraints `CA:FALSE`, then a subjectKeyIdentifier. The issuer is
/// the CA's subject.
pub fn generate_client_cert(
    ca: &KeyPair,
    cn: &str,
    org: &str,
    opts: &X509Options,
) -> Result<KeyPair, GenerateError> {
    check_name_attribute(cn)?;
    let mut attrs = vec![(Nid::COMMONNAME, cn)];
    if !org.is_empty() {
        check_name_attribute(org)?;
        attrs.push((Nid::ORGANIZATIONNAME, org));
    }
    let ca_cert = ca.x509().map_err(GenerateError::Ca)?;
    let ca_key = ca.key().map_err(GenerateError::Ca)?;
    let key = new_key(opts)?;
    let subject = x509_name(&attrs)?;
    let extensions = [
        Extension {
            oid: oids::KEY_USAGE.into(),
            critical: true,
            value: der::named_bits(&key_usage_bits(&[0, 2])),
        },
        Extension {
            oid: oids::EXTENDED_KEY_USAGE.into(),
            critical: false,
            value: der::sequence(&[&der::oid_value(oids::CLIENT_AUTH)]),
        },
        Extension {
            oid: oids::BASIC_CONSTRAINTS.into(),
            critical: true,
            value: basic_constraints(false, None),
        },
    ];
    let cert = builder::build_certificate(
        ca_cert.subject_name(),
        &subject,
        &key,
        &extensions,
        &ca_key,
        opts,
    )?;
    finish(&cert, &key)
}

fn new_key(opts: &X509Options) -> Result<PKey<Private>, GenerateError> {
    Rsa::generate(opts.key_bits())
        .and_then(PKey::from_rsa)
        .map_err(GenerateError::Key)
}

fn finish(cert: &X509, key: &PKey<Private>) -> Result<KeyPair, GenerateError> {
    let passphrase = pkcs8::generate_passphrase()?;
    let private_key = pkcs8::encrypt_pkcs8_pem(key, &passphrase).map_err(GenerateError::Encrypt)?;
    Ok(KeyPair {
        certificate: builder::certificate_pem(cert)?,
        private_key,
        passphrase,
    })
}

/// A Name whose attributes are each their own RDN, with UTF8String values
/// (cryptography's default for `x509.Name([...])`).
fn x509_name(attrs: &[(Nid, &str)]) -> Result<X509Name, ErrorStack> {
    let mut b = X509NameBuilder::new()?;
    for (nid, value) in attrs {
        b.append_entry_by_nid_with_type(*nid, value, Asn1Type::UTF8STRING)?;
    }
    Ok(b.build())
}

/// cryptography's `NameAttribute` rule for commonName: 1 to 64 characters.
fn check_name_attribute(v: &str) -> Result<(), GenerateError> {
    let n = v.chars().count();
    if !(1..=64).contains(&n) {
        return Err(GenerateError::NameLength(n));
    }
    Ok(())
}

/// The nine keyUsage bits with the given ones set.
pub(crate) fn key_usage_bits(set: &[usize]) -> [bool; 9] {
    let mut bits = [false; 9];
    for &i in set {
        bits[i] = true;
    }
    bits
}

/// A BasicConstraints value.
pub(crate) fn basic_constraints(ca: bool, path_len: Option<u64>) -> Vec<u8> {
    let mut parts: Vec<Vec<u8>> = Vec::new();
    if ca {
        parts.push(der::true_value());
    }
    if let Some(n) = path_len {
        parts.push(der::uint(n));
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    der::sequence(&refs)
}
