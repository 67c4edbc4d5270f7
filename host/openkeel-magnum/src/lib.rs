//! openkeel-magnum: the Magnum v1 API host.
//!
//! The modules follow a request: [`api`] (HTTP pipeline and handlers) calls
//! the use cases, which read and write the database and call drivers.

pub mod api;
pub mod certs;

#[cfg(test)]
pub(crate) mod testing;
