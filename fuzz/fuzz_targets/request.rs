//! The request pipeline: one request built from the input (method, a path
//! from the route table's segments and the input, the caller, microversion,
//! `Content-Type` and `Accept` headers, a raw or a mutated valid body) sent
//! to the whole in-process application on an in-memory SQLite database with
//! a template, a cluster and its nodegroups, without drivers. Checks:
//! nothing panics, every 4xx/5xx body is Magnum's error envelope with a
//! title, and a POST/PUT/PATCH body that is not JSON changes no row. The
//! input format and the checks: `openkeel_magnum::fuzzing`. Seeds:
//! corpus/seed-request.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    openkeel_magnum::fuzzing::request(data);
});
