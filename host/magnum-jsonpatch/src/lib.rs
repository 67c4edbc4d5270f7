//! Magnum's JSON Patch dialect, the subset of Python literals Magnum evaluates
//! with `ast.literal_eval`, and Python's `repr`/`int`/`json.dumps` forms.

pub mod pyjson;
pub mod python;
