//! Magnum's JSON Patch dialect ([`patch`]): the operations, paths and values
//! Magnum's API accepts on clusters, templates and nodegroups, with Python's
//! semantics for the values ([`python_semantics`]).

pub mod patch;
