//! The certificate layout Magnum's `cryptography` code produces: v3, a UUID4
//! serial, the given extensions in order followed by a non-critical
//! subjectKeyIdentifier (no authorityKeyIdentifier), SHA-256 signatures.
//!
//! OpenSSL's builder gives that DER: it keeps names as they are encoded,
//! writes extensions in the order they are appended, omits a false critical
//! flag and picks UTCTime before 2050 and GeneralizedTime from then on.

use chrono::{NaiveDateTime, TimeDelta};
use openssl::asn1::{Asn1Integer, Asn1Object, Asn1OctetString, Asn1Time};
use openssl::bn::BigNum;
use openssl::error::ErrorStack;
use openssl::hash::MessageDigest;
use openssl::pkey::{HasPublic, Id, PKeyRef, Private};
use openssl::x509::{X509, X509Builder, X509Extension, X509NameRef};

use crate::der;
use crate::oids;
use crate::options::X509Options;

/// One certificate extension with its DER value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Extension {
    /// The dotted OID.
    pub oid: String,
    pub critical: bool,
    pub value: Vec<u8>,
}

/// Why a certificate could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("unsupported CA key type")]
    UnsupportedCaKey,
    #[error("certificate validity out of range")]
    Validity,
    #[error("malformed public key")]
    PublicKey,
    #[error("build certificate: {0}")]
    Crypto(#[from] ErrorStack),
}

/// Encodes and signs a certificate: the given extensions in order, then a
/// non-critical subjectKeyIdentifier of `public_key`.
pub(crate) fn build_certificate<T: HasPublic>(
    issuer: &X509NameRef,
    subject: &X509NameRef,
    public_key: &PKeyRef<T>,
    extensions: &[Extension],
    signer: &PKeyRef<Private>,
    opts: &X509Options,
) -> Result<X509, BuildError> {
    if !matches!(signer.id(), Id::RSA | Id::EC) {
        return Err(BuildError::UnsupportedCaKey);
    }
    let (not_before, not_after) = validity(opts)?;
    let mut b = X509Builder::new()?;
    b.set_version(2)?;
    let serial = uuid4_serial()?;
    b.set_serial_number(&serial)?;
    b.set_issuer_name(issuer)?;
    b.set_not_before(&not_before)?;
    b.set_not_after(&not_after)?;
    b.set_subject_name(subject)?;
    b.set_pubkey(public_key)?;
    let ski = subject_key_identifier(&public_key.public_key_to_der()?)?;
    let ski = Extension {
        oid: oids::SUBJECT_KEY_IDENTIFIER.to_owned(),
        critical: false,
        value: der::octets(&ski),
    };
    for e in extensions.iter().chain(std::iter::once(&ski)) {
        let oid = Asn1Object::from_str(&e.oid)?;
        let value = Asn1OctetString::new_from_bytes(&e.value)?;
        b.append_extension(X509Extension::new_from_der(&oid, e.critical, &value)?)?;
    }
    b.sign(signer, MessageDigest::sha256())?;
    Ok(b.build())
}

/// Magnum's validity: the clock's wall time written as UTC, from one day
/// before to `term_of_validity` days after, in whole seconds.
pub(crate) fn validity(opts: &X509Options) -> Result<(Asn1Time, Asn1Time), BuildError> {
    let now = (opts.now)();
    let now = now
        .checked_sub_signed(TimeDelta::nanoseconds(i64::from(
            chrono::Timelike::nanosecond(&now),
        )))
        .ok_or(BuildError::Validity)?;
    let before = now
        .checked_sub_signed(TimeDelta::days(1))
        .ok_or(BuildError::Validity)?;
    let after = TimeDelta::try_days(opts.term_of_validity)
        .and_then(|d| now.checked_add_signed(d))
        .ok_or(BuildError::Validity)?;
    Ok((asn1_time(before)?, asn1_time(after)?))
}

fn asn1_time(t: NaiveDateTime) -> Result<Asn1Time, BuildError> {
    let secs = t.and_utc().timestamp();
    // OpenSSL times end at year 9999.
    if secs > 253_402_300_799 {
        return Err(BuildError::Validity);
    }
    Ok(Asn1Time::from_unix(secs)?)
}

/// `int(uuid.uuid4())`: 122 random bits with the version and variant bits of
/// a version 4 UUID.
pub(crate) fn uuid4_serial() -> Result<Asn1Integer, ErrorStack> {
    let mut b = [0u8; 16];
    openssl::rand::rand_bytes(&mut b)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    BigNum::from_slice(&b)?.to_asn1_integer()
}

/// RFC 5280 method 1, as cryptography's `SubjectKeyIdentifier.
/// from_public_key`: SHA-1 of the subjectPublicKey bits of a DER
/// SubjectPublicKeyInfo.
pub fn subject_key_identifier(spki: &[u8]) -> Result<[u8; 20], BuildError> {
    let fields = der::read_sequence(spki).map_err(|_| BuildError::PublicKey)?;
    let [_, key] = fields.as_slice() else {
        return Err(BuildError::PublicKey);
    };
    let bits = der::bit_string(key).map_err(|_| BuildError::PublicKey)?;
    if bits.unused != 0 {
        return Err(BuildError::PublicKey);
    }
    Ok(openssl::sha::sha1(bits.bytes))
}

/// The certificate as PEM without the trailing newline, as Magnum returns
/// it (`.strip()`).
pub(crate) fn certificate_pem(cert: &X509) -> Result<String, ErrorStack> {
    let pem = cert.to_pem()?;
    let mut s: String = pem.iter().map(|b| char::from(*b)).collect();
    while s.ends_with('\n') {
        s.pop();
    }
    Ok(s)
}
