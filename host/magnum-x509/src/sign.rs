//! Signing of user CSRs behind `POST /v1/certificates`, as Magnum's
//! `sign()` (magnum/common/x509/operations.py) with the extension and key
//! usage filter of magnum/common/x509/validator.py.

use std::borrow::Cow;

use magnum_domain::MagnumError;
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private, Public};
use openssl::x509::{X509, X509Req};
use python_semantics::python::bytes_repr;
use x509_parser::cri_attributes::ParsedCriAttribute;
use x509_parser::prelude::{FromDer, X509CertificationRequest};

use crate::builder::{self, Extension};
use crate::der::{self, Oid};
use crate::generate::{KeyPair, basic_constraints};
use crate::oids;
use crate::options::{X509Options, usage};
use crate::pem;
use crate::pkcs8::KeyError;
use crate::repr;

/// keyUsage bit numbers the filter treats specially.
pub(crate) const BIT_KEY_AGREEMENT: usize = 4;
pub(crate) const BIT_KEY_CERT_SIGN: usize = 5;
pub(crate) const BIT_CRL_SIGN: usize = 6;
pub(crate) const BIT_ENCIPHER_ONLY: usize = 7;
pub(crate) const BIT_DECIPHER_ONLY: usize = 8;

/// A CA ready to sign: its certificate and decrypted key.
pub struct CertificateAuthority {
    cert: X509,
    key: PKey<Private>,
}

impl std::fmt::Debug for CertificateAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateAuthority")
            .field("key", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl CertificateAuthority {
    /// Decrypts the key of `ca` and parses its certificate (Magnum loads the
    /// key first).
    pub fn load(ca: &KeyPair) -> Result<Self, KeyError> {
        let key = ca.key()?;
        let cert = ca.x509()?;
        Ok(CertificateAuthority { cert, key })
    }

    /// A CA from its parts.
    pub fn new(cert: X509, key: PKey<Private>) -> Self {
        CertificateAuthority { cert, key }
    }

    /// The CA certificate.
    pub fn certificate(&self) -> &X509 {
        &self.cert
    }
}

/// Why a CSR was not signed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// Magnum's client error: `InvalidCsr` (400) for anything that is not a
    /// parseable, correctly self-signed CSR, `CertificateValidationError`
    /// (400) for a refused critical extension or key usage.
    #[error("{0}")]
    Client(MagnumError),
    /// What is a 500 in Magnum too (the CA key cannot be loaded, an
    /// extension value cryptography refuses, a duplicate extension). The
    /// reason names no key material.
    #[error("{0}")]
    Internal(String),
}

fn internal(reason: impl Into<String>) -> SignError {
    SignError::Internal(reason.into())
}

/// [`sign_csr`] with the CA as stored: its key is decrypted first, and a
/// CA that cannot be loaded is an internal error.
pub fn sign_csr_with_key_pair(
    ca: &KeyPair,
    csr: &[u8],
    opts: &X509Options,
) -> Result<String, SignError> {
    let ca = CertificateAuthority::load(ca).map_err(|e| internal(format!("load CA: {e}")))?;
    sign_csr(&ca, csr, opts)
}

/// Signs a PEM certificate signing request with `ca`: subject copied
/// verbatim from the CSR, issuer = the CA's subject, validity from now − 1
/// day to now + `term_of_validity` days, a UUID4 serial, the CSR's public
/// key, the CSR's extensions filtered by `opts` (Magnum's `filter_extensions`),
/// then a non-critical subjectKeyIdentifier, signed with SHA-256. The PEM has
/// no trailing newline.
///
/// `csr` is the text of the request body's `csr` string.
pub fn sign_csr(
    ca: &CertificateAuthority,
    csr: &[u8],
    opts: &X509Options,
) -> Result<String, SignError> {
    let raw = latin1(csr)?;
    let request = parse_csr(&raw)?;
    let requested = parse_requested_extensions(&request.extensions)?;
    let kept = filter_extensions(&requested, opts)?;
    if kept.iter().any(|e| e.oid == oids::SUBJECT_KEY_IDENTIFIER) {
        // Magnum: operations.py copies the CSR's subjectKeyIdentifier and
        // then adds its own, which cryptography refuses.
        return Err(internal("This extension has already been set."));
    }
    let cert = builder::build_certificate(
        ca.cert.subject_name(),
        request.req.subject_name(),
        &request.key,
        &kept,
        &ca.key,
        opts,
    )
    .map_err(|e| internal(e.to_string()))?;
    builder::certificate_pem(&cert).map_err(|e| internal(e.to_string()))
}

/// Magnum's `csr.encode('latin-1')` of the JSON string: text whose
/// characters all fit Latin-1 becomes one byte per character; a character
/// above U+00FF is a `UnicodeEncodeError` (500). Bytes that are not UTF-8
/// (only tests and the fuzzer send them) pass unchanged.
fn latin1(b: &[u8]) -> Result<Cow<'_, [u8]>, SignError> {
    let Ok(s) = std::str::from_utf8(b) else {
        return Ok(Cow::Borrowed(b));
    };
    if s.is_ascii() {
        return Ok(Cow::Borrowed(b));
    }
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect::<Option<Vec<u8>>>()
        .map(Cow::Owned)
        .ok_or_else(|| internal("'latin-1' codec can't encode the CSR"))
}

/// A CSR that parsed and whose self-signature verified.
struct Request {
    req: X509Req,
    key: PKey<Public>,
    extensions: Vec<RawExtension>,
}

/// One requested extension as the CSR carries it.
struct RawExtension {
    oid: Vec<u8>,
    critical: bool,
    value: Vec<u8>,
}

/// The signature algorithms a CSR may be signed with: SHA-1 and SHA-2 with
/// RSA (PKCS#1 v1.5 and PSS) or ECDSA, and Ed25519.
const SIGNATURE_ALGORITHMS: [&str; 10] = [
    "1.2.840.113549.1.1.5",
    "1.2.840.113549.1.1.11",
    "1.2.840.113549.1.1.12",
    "1.2.840.113549.1.1.13",
    "1.2.840.113549.1.1.10",
    "1.2.840.10045.4.1",
    "1.2.840.10045.4.3.2",
    "1.2.840.10045.4.3.3",
    "1.2.840.10045.4.3.4",
    "1.3.101.112",
];

/// Finds the first `CERTIFICATE REQUEST` (or `NEW CERTIFICATE REQUEST`) PEM
/// block, as cryptography's `load_pem_x509_csr` does, parses it and checks
/// its self-signature. Every failure is `InvalidCsr` with the CSR echoed as
/// a Python bytes literal, as Magnum's message carries it.
fn parse_csr(raw: &[u8]) -> Result<Request, SignError> {
    let invalid = || SignError::Client(MagnumError::invalid_csr(&bytes_repr(raw)));
    let block = pem::find(raw, |l| {
        l == b"CERTIFICATE REQUEST" || l == b"NEW CERTIFICATE REQUEST"
    })
    .ok_or_else(invalid)?;
    let der_bytes = block.der.as_slice();
    let (rest, parsed) = X509CertificationRequest::from_der(der_bytes).map_err(|_| invalid())?;
    if !rest.is_empty() {
        return Err(invalid());
    }
    let mut extensions = Vec::new();
    for attr in parsed.certification_request_info.iter_attributes() {
        if let ParsedCriAttribute::ExtensionRequest(er) = attr.parsed_attribute() {
            for e in &er.extensions {
                extensions.push(RawExtension {
                    oid: e.oid.as_bytes().to_vec(),
                    critical: e.critical,
                    value: e.value.to_vec(),
                });
            }
        }
    }
    for e in &extensions {
        if Oid::from_content(&e.oid).is_err() {
            return Err(invalid());
        }
        if oids::is(&Oid::trusted(&e.oid), oids::SUBJECT_ALT_NAME) && !san_is_well_formed(&e.value)
        {
            // Deviation: Magnum answers 500 for a malformed subjectAltName;
            // bad input is a 400 here.
            return Err(invalid());
        }
    }
    let sig_alg = parsed.signature_algorithm.algorithm.as_bytes();
    if !SIGNATURE_ALGORITHMS
        .iter()
        .any(|a| der::encode_oid_content(a).is_some_and(|c| c == sig_alg))
    {
        return Err(invalid());
    }
    let req = X509Req::from_der(der_bytes).map_err(|_| invalid())?;
    let key = req.public_key().map_err(|_| invalid())?;
    // Deviation: cryptography also accepts DSA, Ed448, X25519 and X448 keys,
    // other curves and RSA keys under 1024 bits; only keys whose signature is
    // checked here are certified.
    if !supported_key(&key) {
        return Err(invalid());
    }
    // Deviation: Magnum never verifies the CSR's self-signature, so it would
    // certify a public key the requester does not hold. We refuse.
    if !req.verify(&key).unwrap_or(false) {
        return Err(invalid());
    }
    Ok(Request {
        req,
        key,
        extensions,
    })
}

fn supported_key(key: &PKey<Public>) -> bool {
    match key.id() {
        Id::RSA => key.bits() >= 1024,
        Id::EC => key.ec_key().is_ok_and(|ec| {
            matches!(
                ec.group().curve_name(),
                Some(Nid::SECP224R1 | Nid::X9_62_PRIME256V1 | Nid::SECP384R1 | Nid::SECP521R1)
            )
        }),
        Id::ED25519 => true,
        _ => false,
    }
}

/// The subjectAltName checks of the reference's CSR reader: a SEQUENCE of
/// GeneralNames whose email, DNS and URI names are ASCII (a URI without
/// control characters) and whose IP addresses have 4 or 16 bytes.
fn san_is_well_formed(value: &[u8]) -> bool {
    let Ok(names) = der::read_sequence(value) else {
        return false;
    };
    names.iter().all(|n| {
        if n.class != der::Class::ContextSpecific || n.constructed {
            return true;
        }
        match n.number {
            1 | 2 => n.content.is_ascii(),
            6 => n.content.iter().all(|b| (0x20..0x7f).contains(b)),
            7 => n.content.len() == 4 || n.content.len() == 16,
            _ => true,
        }
    })
}

/// A requested extension with the values the filter needs.
pub(crate) struct Requested {
    oid: Vec<u8>,
    pub critical: bool,
    pub value: Vec<u8>,
    /// The nine keyUsage bits when the extension is keyUsage.
    pub key_usage: [bool; 9],
    /// basicConstraints' values when the extension is basicConstraints.
    pub bc_ca: bool,
    pub bc_path_len: Option<u64>,
}

impl Requested {
    pub fn oid(&self) -> Oid<'_> {
        Oid::trusted(&self.oid)
    }
}

/// Reads the CSR extensions the way cryptography's `csr.extensions` does: a
/// duplicate OID, or a value of a known type that does not parse, fails the
/// whole request (a `ValueError` in Magnum, hence an internal error).
fn parse_requested_extensions(raw: &[RawExtension]) -> Result<Vec<Requested>, SignError> {
    let mut out: Vec<Requested> = Vec::with_capacity(raw.len());
    for (i, e) in raw.iter().enumerate() {
        let oid = Oid::trusted(&e.oid);
        if raw[..i].iter().any(|p| p.oid == e.oid) {
            return Err(internal(format!("Duplicate {oid} extension found")));
        }
        let mut re = Requested {
            oid: e.oid.clone(),
            critical: e.critical,
            value: e.value.clone(),
            key_usage: [false; 9],
            bc_ca: false,
            bc_path_len: None,
        };
        parse_extension_value(&mut re)
            .map_err(|why| internal(format!("extension {oid}: {why}")))?;
        out.push(re);
    }
    Ok(out)
}

fn parse_extension_value(re: &mut Requested) -> Result<(), &'static str> {
    let oid = Oid::trusted(&re.oid);
    let is = |c: &str| oids::is(&oid, c);
    if is(oids::KEY_USAGE) {
        let t = der::read_one(&re.value).map_err(|e| e.0)?;
        let bits = der::bit_string(&t).map_err(|e| e.0)?;
        for (i, b) in re.key_usage.iter_mut().enumerate() {
            *b = bits.bit(i);
        }
        if !re.key_usage[BIT_KEY_AGREEMENT]
            && (re.key_usage[BIT_ENCIPHER_ONLY] || re.key_usage[BIT_DECIPHER_ONLY])
        {
            return Err(
                "encipher_only and decipher_only can only be true when key_agreement is true",
            );
        }
    } else if is(oids::BASIC_CONSTRAINTS) {
        let fields = der::read_sequence(&re.value).map_err(|e| e.0)?;
        let mut it = fields.iter().peekable();
        if let Some(t) = it.next_if(|t| t.is_universal(der::tag::BOOLEAN, false)) {
            // DER: the DEFAULT FALSE is never encoded.
            if !der::boolean(t).map_err(|e| e.0)? {
                return Err("DEFAULT value was explicitly encoded");
            }
            re.bc_ca = true;
        }
        if let Some(t) = it.next() {
            re.bc_path_len = Some(der::unsigned(t).map_err(|e| e.0)?);
        }
        if it.next().is_some() {
            return Err("trailing data in BasicConstraints");
        }
        if re.bc_path_len.is_some() && !re.bc_ca {
            return Err("path_length must be None when ca is False");
        }
    } else if is(oids::EXTENDED_KEY_USAGE) {
        for t in der::read_sequence(&re.value).map_err(|e| e.0)? {
            der::oid(&t).map_err(|e| e.0)?;
        }
    } else if is(oids::SUBJECT_KEY_IDENTIFIER) {
        der::octet_string(&der::read_one(&re.value).map_err(|e| e.0)?).map_err(|e| e.0)?;
    } else if is(oids::INHIBIT_ANY_POLICY) {
        der::unsigned(&der::read_one(&re.value).map_err(|e| e.0)?)
            .map_err(|_| "skip_certs must be a non-negative integer")?;
    } else if is(oids::OCSP_NO_CHECK) {
        der::null(&der::read_one(&re.value).map_err(|e| e.0)?).map_err(|e| e.0)?;
    } else if is(oids::SUBJECT_ALT_NAME) || is(oids::ISSUER_ALT_NAME) {
        for n in der::read_sequence(&re.value).map_err(|e| e.0)? {
            if n.class != der::Class::ContextSpecific || n.number > 8 {
                return Err("invalid GeneralName");
            }
        }
    } else if oids::extension_name(&oid).is_some() {
        // Other known types are copied as they are once they are one
        // well-formed DER element; unknown OIDs are UnrecognizedExtension
        // values in cryptography and are not parsed at all.
        der::read_one(&re.value).map_err(|e| e.0)?;
    }
    Ok(())
}

/// Magnum's `validator.filter_extensions`, applied extension by extension in
/// the CSR's order:
/// - an extension whose name is not in `allowed_extensions` (unknown OIDs
///   have no name) is dropped, or refused when critical;
/// - keyUsage: each usage set in the CSR but not allowed is cleared, or
///   refused when the extension is critical. Certificate Sign and CRL Sign
///   are never allowed unless `allow_ca`;
/// - basicConstraints with `CA:TRUE` and not `allow_ca` is refused when
///   critical, otherwise replaced by a non-critical `CA:FALSE`.
fn filter_extensions(exts: &[Requested], opts: &X509Options) -> Result<Vec<Extension>, SignError> {
    let mut allowed_usage = [false; 9];
    for (i, name) in usage::ALL.iter().enumerate() {
        allowed_usage[i] = opts.allowed_key_usage.iter().any(|u| u == name);
    }
    if !opts.allow_ca {
        allowed_usage[BIT_KEY_CERT_SIGN] = false;
        allowed_usage[BIT_CRL_SIGN] = false;
    }
    let refuse = |re: &Requested| {
        SignError::Client(MagnumError::certificate_validation_error(
            &repr::extension_repr(re),
        ))
    };
    let mut out = Vec::with_capacity(exts.len());
    for re in exts {
        let oid = re.oid();
        let allowed = oids::extension_name(&oid)
            .is_some_and(|name| opts.allowed_extensions.iter().any(|a| a == name));
        if !allowed {
            if re.critical {
                return Err(refuse(re));
            }
            continue;
        }
        if oids::is(&oid, oids::KEY_USAGE) {
            let mut bits = re.key_usage;
            for (i, set) in bits.iter_mut().enumerate() {
                if *set && !allowed_usage[i] {
                    if re.critical {
                        return Err(refuse(re));
                    }
                    *set = false;
                }
            }
            if !bits[BIT_KEY_AGREEMENT] && (bits[BIT_ENCIPHER_ONLY] || bits[BIT_DECIPHER_ONLY]) {
                // cryptography's KeyUsage() refuses the merged value (500).
                return Err(internal(
                    "encipher_only and decipher_only can only be true when key_agreement is true",
                ));
            }
            out.push(Extension {
                oid: oids::KEY_USAGE.into(),
                critical: re.critical,
                value: der::named_bits(&bits),
            });
        } else if oids::is(&oid, oids::BASIC_CONSTRAINTS) {
            if re.bc_ca && !opts.allow_ca {
                if re.critical {
                    return Err(refuse(re));
                }
                out.push(Extension {
                    oid: oids::BASIC_CONSTRAINTS.into(),
                    critical: false,
                    value: basic_constraints(false, None),
                });
                continue;
            }
            out.push(Extension {
                oid: oids::BASIC_CONSTRAINTS.into(),
                critical: re.critical,
                value: basic_constraints(re.bc_ca, re.bc_path_len),
            });
        } else {
            out.push(Extension {
                oid: oid.to_string(),
                critical: re.critical,
                value: re.value.clone(),
            });
        }
    }
    Ok(out)
}
