//! Magnum's option table: every option openkeel-magnum models, with the
//! group, name, type, default and help Magnum 23.0.0 (and the oslo
//! libraries and keystonemiddleware it ships) give it, plus openkeel-magnum's
//! own; and every other option of the reference sample configuration,
//! accepted without effect.

use oslo_config::{Opt, OptType, Schema};

use super::known::KNOWN;

/// The namespaces the reference sample groups options under.
pub(super) const MAGNUM: &str = "magnum.conf";
pub(super) const OSLO_LOG: &str = "oslo.log";
pub(super) const OSLO_MESSAGING: &str = "oslo.messaging";
pub(super) const OSLO_CORS: &str = "oslo.middleware.cors";
pub(super) const OSLO_DB: &str = "oslo.db";
pub(super) const OSLO_POLICY: &str = "oslo.policy";
pub(super) const AUTH_TOKEN: &str = "keystonemiddleware.auth_token";
/// Not in Magnum's sample generator, but read by the middleware Magnum's
/// paste pipeline loads.
pub(super) const PROXY_HEADERS: &str = "oslo.middleware.http_proxy_to_wsgi";
/// Set in Magnum's api-paste.ini, which openkeel-magnum does not read.
pub(super) const HEALTHCHECK: &str = "oslo.middleware.healthcheck";
/// The keystoneauth1 password plugin, which keystonemiddleware registers
/// in [keystone_authtoken] once it loads the plugin.
pub(super) const KEYSTONEAUTH: &str = "keystoneauth1";
/// openkeel-magnum's own options.
pub(super) const OURS: &str = "openkeel-magnum";

/// The order of the namespaces within a group of the sample, as Magnum's
/// generator configuration lists them.
pub(super) const NAMESPACE_ORDER: &[&str] = &[
    MAGNUM,
    OSLO_DB,
    OSLO_LOG,
    OSLO_MESSAGING,
    OSLO_CORS,
    PROXY_HEADERS,
    HEALTHCHECK,
    OSLO_POLICY,
    AUTH_TOKEN,
    KEYSTONEAUTH,
    OURS,
];

/// Magnum's allowed x509 extension names (magnum/common/x509/extensions.py).
pub(super) const X509_EXTENSIONS: &[&str] = &[
    "authorityKeyIdentifier",
    "subjectKeyIdentifier",
    "authorityInfoAccess",
    "basicConstraints",
    "cRLDistributionPoints",
    "certificatePolicies",
    "extendedKeyUsage",
    "OCSPNoCheck",
    "inhibitAnyPolicy",
    "keyUsage",
    "nameConstraints",
    "subjectAltName",
    "issuerAltName",
];

/// Magnum's allowed key usage names (magnum/common/x509/extensions.py).
pub(super) const X509_KEY_USAGES: &[&str] = &[
    "Digital Signature",
    "Non Repudiation",
    "Key Encipherment",
    "Data Encipherment",
    "Key Agreement",
    "Certificate Sign",
    "CRL Sign",
    "Encipher Only",
    "Decipher Only",
];

pub(super) fn int(min: Option<i64>, max: Option<i64>) -> OptType {
    OptType::Integer { min, max }
}

pub(super) fn choices(values: &[&str]) -> OptType {
    OptType::String {
        choices: values.iter().map(|s| (*s).to_owned()).collect(),
    }
}

pub(super) fn list_of(values: &[&str]) -> OptType {
    OptType::List {
        choices: values.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// The options openkeel-magnum models, in declaration order (`groups.rs`).
pub(super) fn modelled() -> Vec<Opt> {
    super::Options::opts()
}

/// The schema: the modelled options, then every other option of the
/// reference sample as an unchecked string (accepted, readable through
/// `lookup` and usable in `$name` substitutions, left out of our sample).
pub(super) fn schema() -> Schema {
    let mut schema = Schema::new();
    // [driver:<package>]: the grants, limits and options of one driver,
    // read by `Options::driver_groups`.
    schema.open_group_prefix("driver:");
    for opt in modelled() {
        if let Err(e) = schema.register(opt) {
            // The table is a constant: a duplicate is a programmer error,
            // caught by the tests.
            panic!("Magnum option table: {e}");
        }
    }
    for &(group, name, default, deprecated) in KNOWN {
        if schema.get(group, name).is_some() {
            continue;
        }
        let mut opt = Opt::new(group, name, OptType::string())
            .unchecked()
            .hidden();
        if default != "<None>" {
            opt = opt.default(default);
        }
        for old in deprecated {
            if let Some((g, n)) = old.split_once('/') {
                opt = opt.deprecated_in(g, n);
            }
        }
        if schema.register(opt).is_err() {
            panic!("Magnum option table: [{group}]/{name} is listed twice");
        }
    }
    schema
}
