//! `OpenStack-API-Version` parsing and negotiation. The input is the header's
//! values, one per line (a real value holds no newline). Checks: nothing
//! panics, an accepted version round-trips through its own response header
//! value, and negotiation is parsing followed by the range check.
#![no_main]

use libfuzzer_sys::fuzz_target;
use magnum_domain::microversion::{self, NegotiationError};

fuzz_target!(|data: &[u8]| {
    let values: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    let parsed = microversion::parse(values.iter().copied());
    let negotiated = microversion::negotiate(values.iter().copied());
    match parsed {
        Err(e) => assert_eq!(negotiated, Err(NegotiationError::Header(e))),
        Ok(requested) => {
            let again = microversion::parse([requested.header_value().as_bytes()]);
            assert_eq!(again.as_ref(), Ok(&requested));
            match requested.check() {
                Ok(v) => {
                    assert_eq!(negotiated, Ok(v));
                    assert!(v >= microversion::Version::MIN && v <= microversion::Version::MAX);
                    let echoed = microversion::negotiate([v.header_value().as_bytes()]);
                    assert_eq!(echoed, Ok(v));
                }
                Err(e) => {
                    assert!(!e.message().is_empty());
                    assert_eq!(e.requested(), &requested);
                    assert_eq!(negotiated, Err(NegotiationError::Range(e)));
                }
            }
        }
    }
});
