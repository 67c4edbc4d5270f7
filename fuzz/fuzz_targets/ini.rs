//! The INI reader and option loading: never panics, and what it returns
//! obeys the invariants checked in `oslo_config::fuzzing::ini`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    oslo_config::fuzzing::ini(data);
});
