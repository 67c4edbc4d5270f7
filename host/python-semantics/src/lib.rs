//! Python's semantics as Magnum's Python code shows them to clients and
//! stores them: `repr()`, `str()`, `int()` and `float()` ([`python`]), the
//! literals `ast.literal_eval` reads ([`literal`], into [`value::PyValue`]),
//! the lenient decoders of Magnum's types ([`decode`]) and `json.dumps`
//! ([`pyjson`]). A leaf: it knows nothing of Magnum or of HTTP.

pub mod decode;
pub mod literal;
pub mod pyjson;
pub mod python;
pub mod value;

#[cfg(test)]
mod testing;

pub use literal::{LiteralError, parse_literal};
pub use value::{Dict, PyValue};
