//! Cluster certificates: what Magnum's cert manager does for the conductor
//! and `POST /v1/certificates`.
//!
//! The certificates themselves (the three CAs and the admin certificate,
//! CSR signing with the `[x509]` filters, encrypted PKCS#8 keys) are pure
//! computation in the `magnum-x509` crate, re-exported here; this module adds
//! where they are kept ([`Store`], `[certificates]/cert_manager_type`), the
//! low-priority thread that generates keys ([`KeyGenerator`]), and what
//! drivers read of them ([`DriverSecrets`]).

mod driver_secrets;
mod key_pair_rows;
mod keygen;
mod kube_store;
mod store;

pub use driver_secrets::{DriverSecrets, driver_key_pair};
#[cfg(any(test, feature = "testing"))]
pub use keygen::AskHook;
pub use keygen::{KeyGenError, KeyGenerator, LOW_PRIORITY_NICE};
pub use kube_store::{
    CERT_SECRET_PREFIX, DEFAULT_NAMESPACE, KubernetesStore, LABEL_MANAGED_BY, MANAGED_BY,
    is_cert_secret_name, management_client,
};
pub use magnum_x509::{
    ADMIN_COMMON_NAME, ADMIN_ORGANIZATION, CaKind, CertificateAuthority, ClusterCertificates,
    GenerateError, KeyError, KeyPair, SignError, X509Options, decrypt_pkcs8_pem, encrypt_pkcs8_pem,
    generate_ca, generate_client_cert, generate_cluster_certificates,
    generate_cluster_certificates_until, generate_passphrase, issuer_name, options, sign_csr,
    sign_csr_with_key_pair, wall_clock,
};
pub use store::{
    CLIENT_CERT_NAME, KeyPairRows, MemoryKeyPairRows, Owner, RowsError, Store, StoreError,
    StoreType, StoreTypeError, Stored, X509KeyPairStore,
};
