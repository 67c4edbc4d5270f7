//! Magnum's certificates: the three per-cluster CAs (Kubernetes, etcd,
//! front-proxy) and the admin client certificate Magnum generates at
//! cluster creation, the encrypted PKCS#8 private keys it stores next to a
//! random passphrase, and the signing of user CSRs behind
//! `POST /v1/certificates` with Magnum's extension and key usage filter
//! (`[x509]` options).
//!
//! The certificates have the shape Magnum 23.0.0 gives them with Python
//! cryptography (magnum/common/x509/operations.py): UTF8String names,
//! extensions in Magnum's order, a subject key identifier appended last, no
//! authority key identifier, a UUID4 serial number and SHA-256 signatures.
//!
//! Pure computation (no I/O, no logging), so the fuzz targets can use it
//! without the service. Keys, CSRs and passphrases leave it only through
//! return values; no error carries them.

mod builder;
mod der;
pub mod fuzzing;
mod generate;
mod oids;
pub mod options;
mod pem;
mod pkcs8;
mod repr;
mod sign;

pub use builder::{BuildError, subject_key_identifier};
pub use generate::{
    ADMIN_COMMON_NAME, ADMIN_ORGANIZATION, CaKind, ClusterCertificates, GenerateError, KeyPair,
    generate_ca, generate_client_cert, generate_cluster_certificates,
    generate_cluster_certificates_until, issuer_name,
};
pub use options::{Clock, X509Options, wall_clock};
pub use pkcs8::{KeyError, decrypt_pkcs8_pem, encrypt_pkcs8_pem, generate_passphrase};
pub use sign::{CertificateAuthority, SignError, sign_csr, sign_csr_with_key_pair};

#[cfg(test)]
mod tests;
