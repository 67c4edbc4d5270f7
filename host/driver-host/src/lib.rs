//! The driver host: loads Magnum cluster drivers as sandboxed WebAssembly
//! components through the `openkeel:magnum-driver` WIT contract
//! (`wit/magnum-driver@1.0.0` and `@1.1.0`, [`contract`]). The only crate
//! that knows wasmtime.
//!
//! - [`DriverHost::start`] compiles the built-in drivers and those in
//!   `[drivers]/drivers_path` (validated first, cached precompiled), checks
//!   each one's manifest, contract version, grants and imports, and builds
//!   the [`Registry`] that selects a cluster's driver as Magnum does.
//! - A [`Driver`] is one entry point; each of its calls runs in a fresh
//!   instance from a pre-linked `InstancePre`, with a memory cap, an epoch
//!   deadline and an outer timeout, capped output and log sizes. A trap, a
//!   timeout or an oversized answer is a [`DriverFault`]; repeated faults
//!   open the driver's breaker.
//! - The host side of the imports calls the traits the binary implements
//!   ([`KubeAccess`], [`OpenStackAccess`], [`SecretsAccess`]) after checking
//!   the driver's grants; [`access::memory`] has in-memory ones for tests.
//! - [`DriverHost::list_table`], [`DriverHost::inspect`] and
//!   [`DriverHost::validate`] are the `driver` subcommands.

mod bindings;
mod breaker;
mod builtin;
mod convert;
mod driver;
mod error;
mod host;
mod imports;
mod lowering;
mod package;
mod registry;
mod report;
mod sandbox;
mod state;
mod types;

pub mod access;
pub mod capabilities;
pub mod clock;
pub mod contract;
pub mod manifest;
pub mod settings;

pub use access::{
    ApplicationCredential, CloudAccess, CloudInfo, ClusterCas, Credentials, Flavor, HostError,
    HostFuture, Image, KeyPair, KubeAccess, KubeObject, LoadBalancer, ObjectRef, OpenStackAccess,
    Reply, SecretsAccess, Selector, ShareType, VolumeType,
};
pub use breaker::{BreakerSettings, Health};
pub use builtin::test_components;
pub use driver::Driver;
pub use error::{CallError, DriverFault, FaultKind, LoadError};
pub use host::{CallObserver, DriverHost, HostServices, Refusal};
pub use imports::field_manager;
pub use package::{
    EntryPointInfo, Origin, PackageSource, SUPPORTED_WIT, WIT_PACKAGE, World, supported_wit_range,
};
pub use registry::{Entry, Registry, Selection, TemplateDriverInput};
pub use report::{ListRow, Report, Table};
pub use settings::{DriverConfig, DriverSettings, LimitOverrides, Limits, Maxima};
pub use types::{
    CallContext, ClusterState, Effect, Observation, Resize, StatusAnswer, Target, Update, Upgrade,
};

/// The built-in drivers' packages (for the testkit and benchmarks).
pub fn builtin_sources() -> Vec<PackageSource> {
    builtin::sources()
}

/// The entry points of the built-in drivers, sorted.
pub const BUILTIN_ENTRY_POINTS: [&str; 7] = builtin::ENTRY_POINTS;
