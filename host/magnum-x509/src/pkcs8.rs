//! Private keys as Magnum stores them: PKCS#8 PEM encrypted with
//! cryptography's `BestAvailableEncryption(passphrase)`, next to a random
//! passphrase.
//!
//! Every cryptography release Magnum 23.0.0 runs with (and the sample rows)
//! writes PBES2 with PBKDF2-HMAC-SHA256, a 16-byte salt, 2048 iterations and
//! AES-256-CBC with a 16-byte IV, and so does [`encrypt_pkcs8_pem`] (OpenSSL
//! 3.0's own PKCS#8 writer would take an 8-byte salt). Reading also takes the PBKDF2 PRFs and
//! AES key sizes older OpenSSL-backed releases wrote (hmacWithSHA1,
//! AES-128/192), and nothing else: the parameters are checked before OpenSSL
//! runs the key derivation, so a stored key cannot make it spin.

use openssl::error::ErrorStack;
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, PKeyRef, Private};
use openssl::rsa::Rsa;
use openssl::symm::{self, Cipher};

use crate::der::{self, Oid};
use crate::pem;

const PEM_ENCRYPTED_PRIVATE_KEY: &[u8] = b"ENCRYPTED PRIVATE KEY";
const PEM_PRIVATE_KEY: &[u8] = b"PRIVATE KEY";
const PEM_RSA_PRIVATE_KEY: &[u8] = b"RSA PRIVATE KEY";

/// The most PBKDF2 iterations a stored key may ask for.
const MAX_PBKDF2_ITERATIONS: u64 = 10_000_000;

const PBES2: &str = "1.2.840.113549.1.5.13";
const PBKDF2: &str = "1.2.840.113549.1.5.12";
const HMAC_WITH_SHA256: &str = "1.2.840.113549.2.9";
const AES_256_CBC: &str = "2.16.840.1.101.3.4.1.42";
/// cryptography's PBKDF2 iteration count.
const PBKDF2_ITERATIONS: usize = 2048;
const PRFS: [&str; 5] = [
    "1.2.840.113549.2.7",  // hmacWithSHA1
    "1.2.840.113549.2.8",  // hmacWithSHA224
    "1.2.840.113549.2.9",  // hmacWithSHA256
    "1.2.840.113549.2.10", // hmacWithSHA384
    "1.2.840.113549.2.11", // hmacWithSHA512
];
const AES_CBC: [(&str, u64); 3] = [
    ("2.16.840.1.101.3.4.1.2", 16),
    ("2.16.840.1.101.3.4.1.22", 24),
    ("2.16.840.1.101.3.4.1.42", 32),
];

/// Why a private key could not be read or written. No variant carries key
/// material or a passphrase.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("no PEM private key found")]
    NoPem,
    #[error("unsupported PEM block {0:?}")]
    UnsupportedPem(String),
    #[error("private key is encrypted but no passphrase was given")]
    NoPassphrase,
    /// PBES2 cannot tell a wrong passphrase from a corrupt ciphertext.
    #[error("bad decrypt: wrong passphrase or corrupt key")]
    WrongPassphrase,
    #[error("unsupported key encryption: {0}")]
    Unsupported(String),
    #[error("malformed encrypted private key: {0}")]
    Malformed(&'static str),
    #[error("parse private key: {0}")]
    Parse(ErrorStack),
    #[error("encode private key: {0}")]
    Encode(ErrorStack),
}

/// Serialises `key` as an `ENCRYPTED PRIVATE KEY` PEM block (PKCS#8, PBES2,
/// PBKDF2-HMAC-SHA256 with a 16-byte salt and 2048 iterations, AES-256-CBC
/// with a 16-byte IV), the format Magnum writes and cryptography's
/// `load_pem_private_key` reads. An empty passphrase yields an unencrypted
/// `PRIVATE KEY` block, as Magnum's `NoEncryption` branch does.
///
/// The structure is encoded here: OpenSSL's PKCS#8 writer takes an 8-byte
/// salt, cryptography a 16-byte one.
pub fn encrypt_pkcs8_pem(key: &PKeyRef<Private>, passphrase: &str) -> Result<String, KeyError> {
    if passphrase.is_empty() {
        let pem = key.private_key_to_pem_pkcs8().map_err(KeyError::Encode)?;
        // OpenSSL writes PEM as ASCII.
        return Ok(pem.iter().map(|b| char::from(*b)).collect());
    }
    let plain = key.private_key_to_pkcs8().map_err(KeyError::Encode)?;
    let mut salt = [0u8; 16];
    let mut iv = [0u8; 16];
    openssl::rand::rand_bytes(&mut salt).map_err(KeyError::Encode)?;
    openssl::rand::rand_bytes(&mut iv).map_err(KeyError::Encode)?;
    let mut dk = [0u8; 32];
    openssl::pkcs5::pbkdf2_hmac(
        passphrase.as_bytes(),
        &salt,
        PBKDF2_ITERATIONS,
        MessageDigest::sha256(),
        &mut dk,
    )
    .map_err(KeyError::Encode)?;
    let data =
        symm::encrypt(Cipher::aes_256_cbc(), &dk, Some(&iv), &plain).map_err(KeyError::Encode)?;
    let kdf = der::sequence(&[
        &der::oid_value(PBKDF2),
        &der::sequence(&[
            &der::octets(&salt),
            &der::uint(PBKDF2_ITERATIONS as u64),
            &der::sequence(&[&der::oid_value(HMAC_WITH_SHA256), &der::null_value()]),
        ]),
    ]);
    let scheme = der::sequence(&[&der::oid_value(AES_256_CBC), &der::octets(&iv)]);
    let info = der::sequence(&[
        &der::sequence(&[&der::oid_value(PBES2), &der::sequence(&[&kdf, &scheme])]),
        &der::octets(&data),
    ]);
    Ok(pem::encode("ENCRYPTED PRIVATE KEY", &info))
}

/// Reads a private key PEM as Magnum stores it: an `ENCRYPTED PRIVATE KEY`
/// (PBES2/PBKDF2/AES-CBC) decrypted with `passphrase`, or an unencrypted
/// `PRIVATE KEY` / `RSA PRIVATE KEY` block.
pub fn decrypt_pkcs8_pem(data: &[u8], passphrase: &str) -> Result<PKey<Private>, KeyError> {
    let block = pem::find(data, |_| true).ok_or(KeyError::NoPem)?;
    match block.label {
        PEM_ENCRYPTED_PRIVATE_KEY => {
            if passphrase.is_empty() {
                return Err(KeyError::NoPassphrase);
            }
            check_encrypted(&block.der)?;
            PKey::private_key_from_pkcs8_passphrase(&block.der, passphrase.as_bytes())
                .map_err(|_| KeyError::WrongPassphrase)
        }
        PEM_PRIVATE_KEY => PKey::private_key_from_pkcs8(&block.der).map_err(KeyError::Parse),
        PEM_RSA_PRIVATE_KEY => Rsa::private_key_from_der(&block.der)
            .and_then(PKey::from_rsa)
            .map_err(KeyError::Parse),
        other => Err(KeyError::UnsupportedPem(
            String::from_utf8_lossy(other).into_owned(),
        )),
    }
}

/// Checks an EncryptedPrivateKeyInfo against what Magnum's keys use, before
/// OpenSSL derives a key from it.
fn check_encrypted(der_bytes: &[u8]) -> Result<(), KeyError> {
    let malformed = |_| KeyError::Malformed("structure");
    let info = der::read_sequence(der_bytes).map_err(malformed)?;
    let [alg, data] = info.as_slice() else {
        return Err(KeyError::Malformed("EncryptedPrivateKeyInfo"));
    };
    let alg = der::sequence_of(alg).map_err(malformed)?;
    let [alg_oid, params] = alg.as_slice() else {
        return Err(KeyError::Malformed("encryption algorithm"));
    };
    let alg_oid = der::oid(alg_oid).map_err(malformed)?;
    if !crate::oids::is(&alg_oid, PBES2) {
        return Err(KeyError::Unsupported(format!("key encryption {alg_oid}")));
    }
    let params = der::sequence_of(params).map_err(malformed)?;
    let [kdf, scheme] = params.as_slice() else {
        return Err(KeyError::Malformed("PBES2 parameters"));
    };
    let kdf = der::sequence_of(kdf).map_err(malformed)?;
    let [kdf_oid, kdf_params] = kdf.as_slice() else {
        return Err(KeyError::Malformed("key derivation"));
    };
    let kdf_oid = der::oid(kdf_oid).map_err(malformed)?;
    if !crate::oids::is(&kdf_oid, PBKDF2) {
        return Err(KeyError::Unsupported(format!("key derivation {kdf_oid}")));
    }
    let kdf_params = der::sequence_of(kdf_params).map_err(malformed)?;
    let mut fields = kdf_params.iter();
    let salt = fields.next().ok_or(KeyError::Malformed("PBKDF2 salt"))?;
    der::octet_string(salt).map_err(|_| KeyError::Unsupported("PBKDF2 salt source".into()))?;
    let iterations = fields
        .next()
        .and_then(|t| der::unsigned(t).ok())
        .ok_or(KeyError::Malformed("PBKDF2 iteration count"))?;
    if !(1..=MAX_PBKDF2_ITERATIONS).contains(&iterations) {
        return Err(KeyError::Unsupported(format!(
            "PBKDF2 iteration count {iterations}"
        )));
    }
    let mut key_length = None;
    let mut next = fields.next();
    if let Some(t) = next
        && t.is_universal(der::tag::INTEGER, false)
    {
        key_length = Some(der::unsigned(t).map_err(malformed)?);
        next = fields.next();
    }
    if let Some(prf) = next {
        let prf = der::sequence_of(prf).map_err(malformed)?;
        let prf_oid = prf
            .first()
            .and_then(|t| der::oid(t).ok())
            .ok_or(KeyError::Malformed("PBKDF2 PRF"))?;
        if !PRFS.iter().any(|p| crate::oids::is(&prf_oid, p)) {
            return Err(KeyError::Unsupported(format!("PBKDF2 PRF {prf_oid}")));
        }
    }
    if fields.next().is_some() {
        return Err(KeyError::Malformed("PBKDF2 parameters"));
    }
    let scheme = der::sequence_of(scheme).map_err(malformed)?;
    let [cipher_oid, iv] = scheme.as_slice() else {
        return Err(KeyError::Malformed("encryption scheme"));
    };
    let cipher_oid: Oid<'_> = der::oid(cipher_oid).map_err(malformed)?;
    let cipher_key_len = AES_CBC
        .iter()
        .find(|(o, _)| crate::oids::is(&cipher_oid, o))
        .map(|(_, n)| *n)
        .ok_or_else(|| KeyError::Unsupported(format!("key cipher {cipher_oid}")))?;
    if key_length.is_some_and(|n| n != cipher_key_len) {
        return Err(KeyError::Malformed(
            "PBKDF2 key length does not match the cipher",
        ));
    }
    if der::octet_string(iv).map_err(malformed)?.len() != 16 {
        return Err(KeyError::Malformed("AES-CBC IV"));
    }
    let data = der::octet_string(data).map_err(malformed)?;
    if data.is_empty() || data.len() % 16 != 0 {
        return Err(KeyError::WrongPassphrase);
    }
    Ok(())
}

/// A random passphrase as Magnum makes them (magnum/common/short_id.py
/// `generate_id`): 12 lower-case base32 characters carrying 60 random bits.
pub fn generate_passphrase() -> Result<String, ErrorStack> {
    let mut b = [0u8; 8];
    openssl::rand::rand_bytes(&mut b)?;
    let v = u64::from_be_bytes(b);
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    // The top 60 bits, five at a time.
    Ok((0..12)
        .map(|i| char::from(ALPHABET[((v >> (59 - 5 * i)) & 0x1f) as usize]))
        .collect())
}
