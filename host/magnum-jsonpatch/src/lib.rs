//! Magnum's JSON Patch dialect, the Python literals Magnum evaluates with
//! `ast.literal_eval`, and Python's `repr`/`int`/`json.dumps` forms.

pub mod decode;
pub mod literal;
pub mod patch;
pub mod pyjson;
pub mod python;
pub mod value;

pub use literal::{LiteralError, parse_literal};
pub use value::{Dict, PyValue};
