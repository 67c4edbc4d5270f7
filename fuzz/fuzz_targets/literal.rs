//! `ast.literal_eval` of Python literals. The input is the source text
//! (UTF-8). Checks: nothing panics or overflows the stack, and a value whose
//! repr is a literal (no inf/nan, complex or Ellipsis) reads back from its
//! repr as the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use python_semantics::{PyValue, parse_literal, python};

fn round_trips(v: &PyValue) -> bool {
    match v {
        PyValue::Float(f) => f.is_finite(),
        PyValue::Complex(_) | PyValue::Ellipsis => false,
        PyValue::List(items) | PyValue::Tuple(items) | PyValue::Set(items) => {
            items.iter().all(round_trips)
        }
        PyValue::Dict(d) => d.iter().all(|(k, v)| round_trips(k) && round_trips(v)),
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let value = match parse_literal(source) {
        Ok(value) => value,
        Err(e) => {
            // Every error has Python's str() form.
            let _ = e.to_string();
            return;
        }
    };
    if !round_trips(&value) {
        return;
    }
    let repr = python::repr(&value);
    let again =
        parse_literal(&repr).unwrap_or_else(|e| panic!("repr {repr:?} does not read back: {e}"));
    assert_eq!(again, value, "round trip through {repr:?}");
});
