//! openkeel-magnum: the Magnum v1 API host.
//!
//! The modules follow a request: [`api`] (HTTP pipeline and handlers)
//! authenticates the caller ([`auth`]), checks [`policy`] and calls the use
//! cases, which read and write the database ([`db`]) and call drivers.
//! [`options`] is the configuration every part is given; [`notify`] sends
//! the CADF notifications of cluster operations.

pub mod api;
pub mod app;
pub mod auth;
pub mod cli;
pub mod conductor;
pub mod db;
pub mod notify;
pub mod options;
pub mod policy;
pub mod telemetry;

#[cfg(test)]
pub(crate) mod testing;
