//! openkeel-magnum: the Magnum v1 API host.
//!
//! The modules follow a request: [`api`] (HTTP pipeline and handlers)
//! authenticates the caller ([`auth`]), checks [`policy`] and calls the use
//! cases ([`conductor`]), which read and write the database ([`db`]), make
//! certificates ([`certs`]), call drivers and the OpenStack services
//! ([`openstack`]), and send the CADF notifications of cluster operations
//! ([`notify`]). [`app`] wires them from the [`options`]; [`cli`] is the
//! command line.

pub mod app;
pub mod cli;
pub mod cloud;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod memory;
pub mod metrics;
pub mod options;
pub mod telemetry;

/// The HTTP API.
pub use magnum_api as api;
/// The use cases and the policy engine.
pub use magnum_conductor::{self as conductor, policy};
/// The database layer, a crate of its own ([`magnum_db`]).
pub use magnum_db as db;
/// Keystone, the OpenStack services, the certificate stores, the
/// notification buses and the management cluster's client.
pub use magnum_integrations::{auth, certs, management, notify, openstack, traces};
/// The background work: the reconciler and the management cluster's watches.
pub use magnum_reconcile::{self as reconcile, watch};
