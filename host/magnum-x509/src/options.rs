//! Magnum's `[x509]` options (magnum/conf/x509.py) and the clock the
//! certificates' validity is computed from.

use chrono::NaiveDateTime;

/// The clock of certificate validity: the server's local wall clock, naive.
pub type Clock = fn() -> NaiveDateTime;

/// Magnum's clock: `datetime.today()`, the local wall time without a zone,
/// which cryptography then writes as if it were UTC.
pub fn wall_clock() -> NaiveDateTime {
    chrono::Local::now().naive_local()
}

/// Magnum's `[x509]` options.
#[derive(Clone, Debug)]
pub struct X509Options {
    /// `[x509]/allow_ca`: whether a signed CSR may keep `CA:TRUE` and the
    /// Certificate Sign / CRL Sign key usages.
    pub allow_ca: bool,
    /// `[x509]/allowed_extensions`: the short names (cryptography's OID names,
    /// e.g. `keyUsage`) of the CSR extensions copied into a signed
    /// certificate.
    pub allowed_extensions: Vec<String>,
    /// `[x509]/allowed_key_usage`: the key usages (e.g. `Digital Signature`)
    /// kept in a signed certificate's keyUsage.
    pub allowed_key_usage: Vec<String>,
    /// `[x509]/term_of_validity` in days, for signed and generated
    /// certificates alike.
    pub term_of_validity: i64,
    /// `[x509]/rsa_key_size` in bits, for generated keys.
    pub rsa_key_size: u32,
    /// The clock; [`wall_clock`] in service, a fixed instant in tests.
    pub now: Clock,
}

/// The extension short names `[x509]/allowed_extensions` accepts
/// (magnum/common/x509/extensions.py).
pub mod ext {
    pub const AUTHORITY_KEY_IDENTIFIER: &str = "authorityKeyIdentifier";
    pub const SUBJECT_KEY_IDENTIFIER: &str = "subjectKeyIdentifier";
    pub const AUTHORITY_INFORMATION_ACCESS: &str = "authorityInfoAccess";
    pub const BASIC_CONSTRAINTS: &str = "basicConstraints";
    pub const CRL_DISTRIBUTION_POINTS: &str = "cRLDistributionPoints";
    pub const CERTIFICATE_POLICIES: &str = "certificatePolicies";
    pub const EXTENDED_KEY_USAGE: &str = "extendedKeyUsage";
    pub const OCSP_NO_CHECK: &str = "OCSPNoCheck";
    pub const INHIBIT_ANY_POLICY: &str = "inhibitAnyPolicy";
    pub const KEY_USAGE: &str = "keyUsage";
    pub const NAME_CONSTRAINTS: &str = "nameConstraints";
    pub const SUBJECT_ALTERNATIVE_NAME: &str = "subjectAltName";
    pub const ISSUER_ALTERNATIVE_NAME: &str = "issuerAltName";

    /// Every choice of `[x509]/allowed_extensions`.
    pub const ALL: [&str; 13] = [
        AUTHORITY_KEY_IDENTIFIER,
        SUBJECT_KEY_IDENTIFIER,
        AUTHORITY_INFORMATION_ACCESS,
        BASIC_CONSTRAINTS,
        CRL_DISTRIBUTION_POINTS,
        CERTIFICATE_POLICIES,
        EXTENDED_KEY_USAGE,
        OCSP_NO_CHECK,
        INHIBIT_ANY_POLICY,
        KEY_USAGE,
        NAME_CONSTRAINTS,
        SUBJECT_ALTERNATIVE_NAME,
        ISSUER_ALTERNATIVE_NAME,
    ];
}

/// The key usage names `[x509]/allowed_key_usage` accepts, in keyUsage bit
/// order (bit 0 first).
pub mod usage {
    pub const DIGITAL_SIGNATURE: &str = "Digital Signature";
    pub const NON_REPUDIATION: &str = "Non Repudiation";
    pub const KEY_ENCIPHERMENT: &str = "Key Encipherment";
    pub const DATA_ENCIPHERMENT: &str = "Data Encipherment";
    pub const KEY_AGREEMENT: &str = "Key Agreement";
    pub const CERTIFICATE_SIGN: &str = "Certificate Sign";
    pub const CRL_SIGN: &str = "CRL Sign";
    pub const ENCIPHER_ONLY: &str = "Encipher Only";
    pub const DECIPHER_ONLY: &str = "Decipher Only";

    /// Every choice of `[x509]/allowed_key_usage`, in bit order.
    pub const ALL: [&str; 9] = [
        DIGITAL_SIGNATURE,
        NON_REPUDIATION,
        KEY_ENCIPHERMENT,
        DATA_ENCIPHERMENT,
        KEY_AGREEMENT,
        CERTIFICATE_SIGN,
        CRL_SIGN,
        ENCIPHER_ONLY,
        DECIPHER_ONLY,
    ];
}

impl Default for X509Options {
    /// Magnum's defaults: `allow_ca` false; extensions keyUsage,
    /// extendedKeyUsage, subjectAltName, basicConstraints,
    /// subjectKeyIdentifier; key usages Digital Signature, Key Encipherment,
    /// Non Repudiation; 1825 days; RSA 2048; the wall clock.
    fn default() -> Self {
        X509Options {
            allow_ca: false,
            allowed_extensions: [
                ext::KEY_USAGE,
                ext::EXTENDED_KEY_USAGE,
                ext::SUBJECT_ALTERNATIVE_NAME,
                ext::BASIC_CONSTRAINTS,
                ext::SUBJECT_KEY_IDENTIFIER,
            ]
            .map(String::from)
            .to_vec(),
            allowed_key_usage: [
                usage::DIGITAL_SIGNATURE,
                usage::KEY_ENCIPHERMENT,
                usage::NON_REPUDIATION,
            ]
            .map(String::from)
            .to_vec(),
            term_of_validity: 1825,
            rsa_key_size: 2048,
            now: wall_clock,
        }
    }
}

impl X509Options {
    /// The key size generated keys get: `rsa_key_size`, or 2048 when unset.
    pub(crate) fn key_bits(&self) -> u32 {
        if self.rsa_key_size == 0 {
            2048
        } else {
            self.rsa_key_size
        }
    }
}
