//! openkeel-magnum: the Magnum v1 API host.
//!
//! The modules follow a request: [`api`] (HTTP pipeline and handlers)
//! authenticates the caller ([`auth`]), checks [`policy`] and calls the use
//! cases, which read and write the database ([`db`]), call drivers and the
//! OpenStack services ([`openstack`]). [`options`] is the configuration
//! every part is given.

pub mod api;
pub mod app;
pub mod auth;
pub mod cli;
pub mod conductor;
pub mod db;
pub mod openstack;
pub mod options;
pub mod policy;
pub mod telemetry;

#[cfg(test)]
pub(crate) mod testing;
