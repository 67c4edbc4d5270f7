//! Parses and evaluates arbitrary policy rules (oslo-policy): no panic,
//! deterministic parsing, and a cleanly parsed rule means the same as its
//! canonical form.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use oslo_policy::fuzzing::Fixture;

static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    if let Some(fixture) = FIXTURE.get_or_init(Fixture::new) {
        fixture.run(data);
    }
});
