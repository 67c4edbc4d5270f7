//! `[database]/connection` translation: never panics, never shows the
//! password (`oslo_config::fuzzing::database_url`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    oslo_config::fuzzing::database_url(data);
});
