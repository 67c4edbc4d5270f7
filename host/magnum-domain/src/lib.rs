//! Magnum's vocabulary: resource types, statuses and their guards, the error
//! catalogue, validation rules and API microversions. No I/O.

pub mod catalogue;
pub mod context;
pub mod error;
pub mod microversion;
pub mod models;
pub mod query;
pub mod status;
pub mod transitions;
pub mod validation;

#[cfg(test)]
mod testspec;

pub use context::RequestContext;
pub use error::MagnumError;
pub use status::Status;
