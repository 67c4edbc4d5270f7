//! CSR signing (`POST /v1/certificates`): the input is the request's `csr`
//! text, signed with a fixed CA under two option sets (every extension
//! allowed; and with `allow_ca` and every key usage). Checks: nothing panics,
//! errors are only `InvalidCsr`, `CertificateValidationError` or internal
//! ones, and whatever is signed came from a well-formed, correctly
//! self-signed request, is signed by the CA, keeps the subject, ends with the
//! subject key identifier and keeps nothing the options forbid (no CA:TRUE,
//! no CA key usages without `allow_ca`). Seeds: corpus/seed-csr.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use magnum_x509::CertificateAuthority;
use magnum_x509::fuzzing;

static CA: OnceLock<CertificateAuthority> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let ca = CA.get_or_init(|| match fuzzing::fuzz_ca() {
        Ok(ca) => ca,
        Err(e) => panic!("fuzz CA: {e}"),
    });
    fuzzing::check_sign_csr(ca, data);
});
