//! The object identifiers this crate knows, with cryptography's names for
//! them (`cryptography.x509.oid._OID_NAMES`): Magnum's validator compares
//! those names with `[x509]/allowed_extensions`.

use crate::der::Oid;
use crate::options::ext;

pub const SUBJECT_DIRECTORY_ATTRIBUTES: &str = "2.5.29.9";
pub const SUBJECT_KEY_IDENTIFIER: &str = "2.5.29.14";
pub const KEY_USAGE: &str = "2.5.29.15";
pub const PRIVATE_KEY_USAGE_PERIOD: &str = "2.5.29.16";
pub const SUBJECT_ALT_NAME: &str = "2.5.29.17";
pub const ISSUER_ALT_NAME: &str = "2.5.29.18";
pub const BASIC_CONSTRAINTS: &str = "2.5.29.19";
pub const CRL_NUMBER: &str = "2.5.29.20";
pub const CRL_REASON: &str = "2.5.29.21";
pub const INVALIDITY_DATE: &str = "2.5.29.24";
pub const DELTA_CRL_INDICATOR: &str = "2.5.29.27";
pub const ISSUING_DISTRIBUTION_POINT: &str = "2.5.29.28";
pub const CERTIFICATE_ISSUER: &str = "2.5.29.29";
pub const NAME_CONSTRAINTS: &str = "2.5.29.30";
pub const CRL_DISTRIBUTION_POINTS: &str = "2.5.29.31";
pub const CERTIFICATE_POLICIES: &str = "2.5.29.32";
pub const POLICY_MAPPINGS: &str = "2.5.29.33";
pub const AUTHORITY_KEY_IDENTIFIER: &str = "2.5.29.35";
pub const POLICY_CONSTRAINTS: &str = "2.5.29.36";
pub const EXTENDED_KEY_USAGE: &str = "2.5.29.37";
pub const FRESHEST_CRL: &str = "2.5.29.46";
pub const INHIBIT_ANY_POLICY: &str = "2.5.29.54";
pub const AUTHORITY_INFO_ACCESS: &str = "1.3.6.1.5.5.7.1.1";
pub const SUBJECT_INFO_ACCESS: &str = "1.3.6.1.5.5.7.1.11";
pub const TLS_FEATURE: &str = "1.3.6.1.5.5.7.1.24";
pub const OCSP_NO_CHECK: &str = "1.3.6.1.5.5.7.48.1.5";

pub const CLIENT_AUTH: &str = "1.3.6.1.5.5.7.3.2";

/// Extensions by OID with cryptography's names. An OID not listed has no
/// name and is never allowed.
const EXTENSION_NAMES: [(&str, &str); 32] = [
    (SUBJECT_DIRECTORY_ATTRIBUTES, "subjectDirectoryAttributes"),
    (SUBJECT_KEY_IDENTIFIER, ext::SUBJECT_KEY_IDENTIFIER),
    (KEY_USAGE, ext::KEY_USAGE),
    (PRIVATE_KEY_USAGE_PERIOD, "privateKeyUsagePeriod"),
    (SUBJECT_ALT_NAME, ext::SUBJECT_ALTERNATIVE_NAME),
    (ISSUER_ALT_NAME, ext::ISSUER_ALTERNATIVE_NAME),
    (BASIC_CONSTRAINTS, ext::BASIC_CONSTRAINTS),
    (CRL_NUMBER, "cRLNumber"),
    (CRL_REASON, "cRLReason"),
    (INVALIDITY_DATE, "invalidityDate"),
    (DELTA_CRL_INDICATOR, "deltaCRLIndicator"),
    (ISSUING_DISTRIBUTION_POINT, "issuingDistributionPoint"),
    (CERTIFICATE_ISSUER, "certificateIssuer"),
    (NAME_CONSTRAINTS, ext::NAME_CONSTRAINTS),
    (CRL_DISTRIBUTION_POINTS, ext::CRL_DISTRIBUTION_POINTS),
    (CERTIFICATE_POLICIES, ext::CERTIFICATE_POLICIES),
    (POLICY_MAPPINGS, "policyMappings"),
    (AUTHORITY_KEY_IDENTIFIER, ext::AUTHORITY_KEY_IDENTIFIER),
    (POLICY_CONSTRAINTS, "policyConstraints"),
    (EXTENDED_KEY_USAGE, ext::EXTENDED_KEY_USAGE),
    (FRESHEST_CRL, "freshestCRL"),
    (INHIBIT_ANY_POLICY, ext::INHIBIT_ANY_POLICY),
    (AUTHORITY_INFO_ACCESS, ext::AUTHORITY_INFORMATION_ACCESS),
    (SUBJECT_INFO_ACCESS, "subjectInfoAccess"),
    (TLS_FEATURE, "TLSFeature"),
    (OCSP_NO_CHECK, ext::OCSP_NO_CHECK),
    ("1.3.6.1.4.1.11129.2.4.2", "signedCertificateTimestampList"),
    ("1.3.6.1.4.1.11129.2.4.3", "ctPoison"),
    ("1.3.6.1.4.1.11129.2.4.5", "signedCertificateTimestampList"),
    ("1.3.6.1.4.1.311.21.7", "msCertificateTemplate"),
    ("1.3.36.8.3.3", "Admissions"),
    ("1.3.6.1.5.5.7.48.1.2", "OCSPNonce"),
];

/// cryptography's names for the OIDs that appear inside extension values
/// (extended key usages, access methods).
const OTHER_NAMES: [(&str, &str); 13] = [
    ("1.3.6.1.5.5.7.3.1", "serverAuth"),
    (CLIENT_AUTH, "clientAuth"),
    ("1.3.6.1.5.5.7.3.3", "codeSigning"),
    ("1.3.6.1.5.5.7.3.4", "emailProtection"),
    ("1.3.6.1.5.5.7.3.8", "timeStamping"),
    ("1.3.6.1.5.5.7.3.9", "OCSPSigning"),
    ("1.3.6.1.4.1.311.20.2.2", "msSmartcardLogin"),
    ("1.3.6.1.5.2.3.5", "pkInitKDC"),
    ("1.3.6.1.5.5.7.48.1", "OCSP"),
    ("1.3.6.1.5.5.7.48.2", "caIssuers"),
    ("1.3.6.1.5.5.7.48.5", "caRepository"),
    ("1.3.6.1.5.5.7.2.1", "id-qt-cps"),
    ("1.3.6.1.5.5.7.2.2", "id-qt-unotice"),
];

/// The name of an extension OID, when cryptography has one.
pub fn extension_name(oid: &Oid<'_>) -> Option<&'static str> {
    let dotted = oid.to_string();
    EXTENSION_NAMES
        .iter()
        .find(|(o, _)| *o == dotted)
        .map(|(_, n)| *n)
}

/// The name cryptography shows for any OID of an extension value
/// (`Unknown OID` when it has none).
pub fn display_name(oid: &Oid<'_>) -> &'static str {
    if let Some(n) = extension_name(oid) {
        return n;
    }
    let dotted = oid.to_string();
    OTHER_NAMES
        .iter()
        .find(|(o, _)| *o == dotted)
        .map_or("Unknown OID", |(_, n)| *n)
}

/// Whether `oid` is the dotted `constant`.
pub fn is(oid: &Oid<'_>, constant: &str) -> bool {
    crate::der::encode_oid_content(constant).is_some_and(|c| c == oid.content())
}
