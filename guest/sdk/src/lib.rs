//! Write an openkeel-magnum cluster driver in Rust.
//!
//! A driver is a WebAssembly component implementing the
//! `openkeel:magnum-driver@1.0.0` contract; this crate (whose version
//! follows the contract's) hides the generated bindings behind plain Rust
//! types and one trait:
//!
//! ```ignore
//! use openkeel_magnum_driver::prelude::*;
//!
//! #[derive(Default)]
//! struct Demo;
//!
//! impl Driver for Demo {
//!     fn describe(&self) -> Vec<EntryPoint> {
//!         vec![EntryPoint::new("demo", "A demo driver",
//!             vec![Target::new("vm", "ubuntu", "kubernetes")])]
//!     }
//!     fn create_cluster(&self, _ctx: &CallContext, st: ClusterState, _timeout: u32)
//!         -> Result<Update, DriverError> {
//!         let mut cl = st.cluster;
//!         cl.status = Some(Status::CreateInProgress);
//!         Ok(Update::cluster(cl))
//!     }
//! }
//!
//! register_driver!(Demo);
//! ```
//!
//! Every method of [`Driver`] but `describe` has a default: Magnum's base
//! driver's answer, which for an operation is 400 `NotSupported`
//! (`'<function>' is not supported by this driver.`). Build with
//! `cargo build --release --target wasm32-wasip2` (crate type `cdylib`).
//!
//! - [`register_driver!`] exports the type, installs a panic hook that
//!   logs the panic's message before the instance traps, and bridges the
//!   `log` crate (feature `log`) and `tracing` (feature `tracing`) to the
//!   host's log.
//! - [`Labels`] has typed readers with Magnum's error messages.
//! - [`kube`], [`openstack`], [`secrets`], [`config`], [`state`] and
//!   [`logging`] are the host's imports; [`k8s`] (feature `k8s`) reads and
//!   writes k8s-openapi types.
//!
//! Outside WebAssembly (`cargo test` of a driver on the build machine) the
//! `kube`, `config`, `state` and log imports answer from the in-memory
//! world of [`testing`]; the real host with in-memory services is the
//! `openkeel-magnum-driver-testkit` crate's.
//!
//! A fresh instance serves every call: keep nothing in statics between
//! calls, put what must survive in [`state`] and be ready to recover from
//! the rows when it is empty.

#[doc(hidden)]
pub mod bindings {
    #[cfg(not(feature = "contract-1-1"))]
    wit_bindgen::generate!({
        path: "../../wit/magnum-driver@1.0.0",
        world: "cluster-driver",
        pub_export_macro: true,
        export_macro_name: "export_cluster_driver",
        default_bindings_module: "openkeel_magnum_driver::bindings",
    });
    #[cfg(feature = "contract-1-1")]
    wit_bindgen::generate!({
        path: "../../wit/magnum-driver@1.1.0",
        world: "cluster-driver",
        pub_export_macro: true,
        export_macro_name: "export_cluster_driver",
        default_bindings_module: "openkeel_magnum_driver::bindings",
    });
}

mod error;
mod host;
#[cfg(feature = "json")]
mod json;
mod labels;
pub mod logging;
#[cfg(not(target_family = "wasm"))]
mod native;
#[cfg(not(target_family = "wasm"))]
pub mod testing;
mod types;

pub use error::{
    DriverError, HostError, MagnumError, ca_rotation_not_supported,
    credential_rotation_not_supported, master_resize_not_supported, validate_master_size,
};
#[cfg(feature = "contract-1-1")]
pub use host::cloud;
pub use host::{config, kube, openstack, secrets, state};
#[cfg(feature = "k8s")]
pub use json::k8s;
pub use types::{
    CallContext, Caller, Cluster, ClusterState, ClusterTemplate, Effect, EntryPoint, K8sObject,
    Labels, NodeGroup, ObjectRef, Observation, Resize, Selector, Status, StatusAnswer, StringMap,
    Target, Timestamp, Update, Upgrade,
};

/// The `log` crate, whose macros reach the host's log (feature `log`).
#[cfg(feature = "log")]
pub use log;
/// `tracing`, whose events reach the host's log (feature `tracing`).
#[cfg(feature = "tracing")]
pub use tracing;

/// The version of the contract this build of the SDK builds drivers for:
/// 1.0.0, or 1.1.0 with the feature `contract-1-1`.
pub const WIT_VERSION: &str = if cfg!(feature = "contract-1-1") {
    "1.1.0"
} else {
    "1.0.0"
};

/// What most drivers import.
pub mod prelude {
    pub use crate::{
        CallContext, Cluster, ClusterState, ClusterTemplate, Driver, DriverError, Effect,
        EntryPoint, HostError, K8sObject, Labels, NodeGroup, ObjectRef, Observation, Resize,
        Selector, Status, StatusAnswer, Target, Update, Upgrade, register_driver,
    };
}

/// A cluster driver. A fresh value (from `Default`, or the expression
/// given to [`register_driver!`]) serves each call.
///
/// Every method but [`Driver::describe`] defaults to what Magnum's base
/// driver answers: the base rule for the master count, a refusal of
/// master resizes and CA rotations, no checks on create and upgrade, an
/// unchanged status, no watches, and 400 `NotSupported` for every
/// operation.
pub trait Driver {
    /// The entry points of this component; they must agree with the
    /// manifest (the host compares them at load).
    fn describe(&self) -> Vec<EntryPoint>;

    /// `master_count` of a new cluster. Default: odd and at least 1, else
    /// 400 `MasterNGSizeInvalid`.
    fn validate_master_size(&self, entry_point: &str, count: i32) -> Result<(), DriverError> {
        let _ = entry_point;
        validate_master_size(count)
    }

    /// A resize of the master nodegroup. Default: 400
    /// `MasterNGResizeNotSupported`.
    fn validate_master_resize(&self, entry_point: &str, count: i32) -> Result<(), DriverError> {
        let _ = (entry_point, count);
        Err(master_resize_not_supported())
    }

    /// The driver's checks of a cluster about to be created (labels,
    /// versions, names), as 400s. Default: none.
    fn validate_create(&self, ctx: &CallContext, state: &ClusterState) -> Result<(), DriverError> {
        let _ = (ctx, state);
        Ok(())
    }

    /// The driver's checks of an upgrade to `template`. Default: none.
    fn validate_upgrade(
        &self,
        ctx: &CallContext,
        state: &ClusterState,
        template: &ClusterTemplate,
    ) -> Result<(), DriverError> {
        let _ = (ctx, state, template);
        Ok(())
    }

    /// The driver's checks of a nodegroup about to be created (flavor,
    /// labels, counts), as 400s, before the host writes its row (contract
    /// 1.1; a driver built for 1.0 is not asked). Default: none.
    fn validate_nodegroup(
        &self,
        ctx: &CallContext,
        state: &ClusterState,
        ng: &NodeGroup,
    ) -> Result<(), DriverError> {
        let _ = (ctx, state, ng);
        Ok(())
    }

    /// Whether the cluster's CAs can be rotated. Default: 400
    /// `NotSupported`, the base driver's message.
    fn can_rotate_ca(&self, ctx: &CallContext, state: &ClusterState) -> Result<(), DriverError> {
        let _ = (ctx, state);
        Err(ca_rotation_not_supported())
    }

    /// Starts building a new cluster: set `stack_id` and move the rows to
    /// `CREATE_IN_PROGRESS`; completion is reported by the status calls.
    fn create_cluster(
        &self,
        ctx: &CallContext,
        state: ClusterState,
        timeout_minutes: u32,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state, timeout_minutes);
        Err(DriverError::not_supported("create_cluster"))
    }

    /// A PATCH of `node_count`: the default worker row has the new count.
    fn update_cluster(
        &self,
        ctx: &CallContext,
        state: ClusterState,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state);
        Err(DriverError::not_supported("update_cluster"))
    }

    /// Starts deleting the cluster.
    fn delete_cluster(
        &self,
        ctx: &CallContext,
        state: ClusterState,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state);
        Err(DriverError::not_supported("delete_cluster"))
    }

    /// Resizes one nodegroup, removing `req.nodes_to_remove` first.
    fn resize_cluster(
        &self,
        ctx: &CallContext,
        state: ClusterState,
        req: Resize,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state, req);
        Err(DriverError::not_supported("resize_cluster"))
    }

    /// Moves the cluster, or one nodegroup, to a template.
    fn upgrade_cluster(
        &self,
        ctx: &CallContext,
        state: ClusterState,
        req: Upgrade,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state, req);
        Err(DriverError::not_supported("upgrade_cluster"))
    }

    /// Starts building a nodegroup.
    fn create_nodegroup(
        &self,
        ctx: &CallContext,
        state: ClusterState,
        ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state, ng);
        Err(DriverError::not_supported("create_nodegroup"))
    }

    /// A PATCH of a nodegroup.
    fn update_nodegroup(
        &self,
        ctx: &CallContext,
        state: ClusterState,
        ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state, ng);
        Err(DriverError::not_supported("update_nodegroup"))
    }

    /// Starts deleting a non-default nodegroup.
    fn delete_nodegroup(
        &self,
        ctx: &CallContext,
        state: ClusterState,
        ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state, ng);
        Err(DriverError::not_supported("delete_nodegroup"))
    }

    /// Rolls the cluster onto the CAs the conductor has just generated.
    /// Default: the base driver's refusal.
    fn rotate_ca(&self, ctx: &CallContext, state: ClusterState) -> Result<Update, DriverError> {
        let _ = (ctx, state);
        Err(ca_rotation_not_supported())
    }

    /// Replaces the cluster's cloud credential. Default: the conductor's
    /// refusal.
    fn rotate_credential(
        &self,
        ctx: &CallContext,
        state: ClusterState,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state);
        Err(credential_rotation_not_supported())
    }

    /// The objects the host should watch for the cluster. Default: none
    /// (the host polls).
    fn watches(&self, ctx: &CallContext, state: &ClusterState) -> Vec<Selector> {
        let _ = (ctx, state);
        Vec::new()
    }

    /// The rows' new state from the observed objects (every object of
    /// every selector of [`Driver::watches`]). Must be pure: the same
    /// objects give the same answer. A driver built for contract 1.1 may
    /// implement [`Driver::derive`] instead.
    fn derive_status(
        &self,
        ctx: &CallContext,
        state: ClusterState,
        observed: Vec<K8sObject>,
    ) -> Result<Update, DriverError> {
        let _ = (ctx, state, observed);
        Err(DriverError::not_supported("derive_status"))
    }

    /// Contract 1.1's `derive-status`: the rows' new state from what the
    /// host holds of each selector of [`Driver::watches`], in their order,
    /// and the side effects to run before it is saved. Pure: the `kube`,
    /// `openstack` and `secrets` imports are refused during it, and the
    /// same rows, snapshot and `ctx.now` must give the same answer.
    ///
    /// Default: nothing changes until every selector is synced (a half
    /// filled copy must never read as objects gone), then
    /// [`Driver::derive_status`] over the objects, without effects.
    fn derive(
        &self,
        ctx: &CallContext,
        state: ClusterState,
        snapshot: Vec<Observation>,
    ) -> Result<StatusAnswer, DriverError> {
        if snapshot.iter().any(|o| !o.synced) {
            return Ok(StatusAnswer::none());
        }
        let objects = snapshot.into_iter().flat_map(|o| o.objects).collect();
        self.derive_status(ctx, state, objects)
            .map(StatusAnswer::from)
    }

    /// What changed since the rows were written (Magnum's
    /// `update_cluster_status` and health monitor). Default: nothing, as
    /// Magnum's base driver.
    fn poll_status(&self, ctx: &CallContext, state: ClusterState) -> Result<Update, DriverError> {
        let _ = (ctx, state);
        Ok(Update::none())
    }

    /// Contract 1.1's `poll-status`: [`Driver::poll_status`] with side
    /// effects. Default: [`Driver::poll_status`], without effects.
    fn poll(&self, ctx: &CallContext, state: ClusterState) -> Result<StatusAnswer, DriverError> {
        self.poll_status(ctx, state).map(StatusAnswer::from)
    }

    /// Runs the side effects a status answer asked for, with every import
    /// the driver is granted, before the host saves that answer's update
    /// (contract 1.1). `state` is the rows as the status call read them.
    /// When it fails nothing of the answer is saved, and the next status
    /// call asks again. Default: nothing to run; effects the driver asked
    /// for but does not run fail the call.
    fn apply_effects(
        &self,
        ctx: &CallContext,
        state: &ClusterState,
        effects: Vec<Effect>,
    ) -> Result<(), DriverError> {
        let _ = (ctx, state);
        if effects.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = effects.into_iter().map(|e| e.name).collect();
        Err(DriverError::failed(format!(
            "the driver asked for effects it does not apply: {}",
            names.join(", ")
        )))
    }
}

/// Exports a [`Driver`] as the component's implementation of the contract.
///
/// `register_driver!(MyDriver)` builds each call's value with
/// `MyDriver::default()`; `register_driver!(MyDriver, MyDriver::new())`
/// with the expression. Use it once, in the `cdylib` crate.
#[macro_export]
macro_rules! register_driver {
    ($t:ty) => {
        $crate::register_driver!($t, <$t as ::core::default::Default>::default());
    };
    ($t:ty, $make:expr) => {
        const _: () = {
            use $crate::__private as __p;

            struct __OkmDriverExport;

            fn __okm_driver() -> $t {
                $crate::logging::init();
                $make
            }

            impl __p::DriverGuest for __OkmDriverExport {
                fn describe() -> __p::Vec<__p::wd::EntryPoint> {
                    __p::describe(&__okm_driver())
                }
                fn validate_master_size(e: __p::String, n: i32) -> __p::Unit {
                    __p::validate_master_size(&__okm_driver(), e, n)
                }
                fn validate_master_resize(e: __p::String, n: i32) -> __p::Unit {
                    __p::validate_master_resize(&__okm_driver(), e, n)
                }
                fn validate_create(c: __p::wt::CallContext, s: __p::wt::ClusterState) -> __p::Unit {
                    __p::validate_create(&__okm_driver(), c, s)
                }
                fn validate_upgrade(
                    c: __p::wt::CallContext,
                    s: __p::wt::ClusterState,
                    t: __p::wt::ClusterTemplate,
                ) -> __p::Unit {
                    __p::validate_upgrade(&__okm_driver(), c, s, t)
                }
                fn can_rotate_ca(c: __p::wt::CallContext, s: __p::wt::ClusterState) -> __p::Unit {
                    __p::can_rotate_ca(&__okm_driver(), c, s)
                }
                $crate::__okm_driver_items!();
            }

            impl __p::LifecycleGuest for __OkmDriverExport {
                fn create_cluster(
                    c: __p::wt::CallContext,
                    s: __p::wt::ClusterState,
                    t: u32,
                ) -> __p::Upd {
                    __p::create_cluster(&__okm_driver(), c, s, t)
                }
                fn update_cluster(c: __p::wt::CallContext, s: __p::wt::ClusterState) -> __p::Upd {
                    __p::update_cluster(&__okm_driver(), c, s)
                }
                fn delete_cluster(c: __p::wt::CallContext, s: __p::wt::ClusterState) -> __p::Upd {
                    __p::delete_cluster(&__okm_driver(), c, s)
                }
                fn resize_cluster(
                    c: __p::wt::CallContext,
                    s: __p::wt::ClusterState,
                    r: __p::wl::Resize,
                ) -> __p::Upd {
                    __p::resize_cluster(&__okm_driver(), c, s, r)
                }
                fn upgrade_cluster(
                    c: __p::wt::CallContext,
                    s: __p::wt::ClusterState,
                    u: __p::wl::Upgrade,
                ) -> __p::Upd {
                    __p::upgrade_cluster(&__okm_driver(), c, s, u)
                }
                fn create_nodegroup(
                    c: __p::wt::CallContext,
                    s: __p::wt::ClusterState,
                    n: __p::wt::Nodegroup,
                ) -> __p::Upd {
                    __p::create_nodegroup(&__okm_driver(), c, s, n)
                }
                fn update_nodegroup(
                    c: __p::wt::CallContext,
                    s: __p::wt::ClusterState,
                    n: __p::wt::Nodegroup,
                ) -> __p::Upd {
                    __p::update_nodegroup(&__okm_driver(), c, s, n)
                }
                fn delete_nodegroup(
                    c: __p::wt::CallContext,
                    s: __p::wt::ClusterState,
                    n: __p::wt::Nodegroup,
                ) -> __p::Upd {
                    __p::delete_nodegroup(&__okm_driver(), c, s, n)
                }
                fn rotate_ca(c: __p::wt::CallContext, s: __p::wt::ClusterState) -> __p::Upd {
                    __p::rotate_ca(&__okm_driver(), c, s)
                }
                fn rotate_credential(c: __p::wt::CallContext, s: __p::wt::ClusterState) -> __p::Upd {
                    __p::rotate_credential(&__okm_driver(), c, s)
                }
            }

            impl __p::StatusGuest for __OkmDriverExport {
                fn watches(
                    c: __p::wt::CallContext,
                    s: __p::wt::ClusterState,
                ) -> __p::Vec<__p::wt::Selector> {
                    __p::watches(&__okm_driver(), c, s)
                }
                $crate::__okm_status_items!();
            }

            $crate::bindings::export_cluster_driver!(__OkmDriverExport with_types_in $crate::bindings);
        };
    };
}

/// The functions of the `driver` interface that only contract 1.1 has,
/// inside [`register_driver!`]'s implementation (none in a 1.0 build).
#[doc(hidden)]
#[cfg(not(feature = "contract-1-1"))]
#[macro_export]
macro_rules! __okm_driver_items {
    () => {};
}

#[doc(hidden)]
#[cfg(feature = "contract-1-1")]
#[macro_export]
macro_rules! __okm_driver_items {
    () => {
        fn validate_nodegroup(
            c: __p::wt::CallContext,
            s: __p::wt::ClusterState,
            n: __p::wt::Nodegroup,
        ) -> __p::Unit {
            __p::validate_nodegroup(&__okm_driver(), c, s, n)
        }
    };
}

/// The functions of the `status` interface as the contract the SDK is built
/// for has them (`watches` is the same in both), inside
/// [`register_driver!`]'s implementation.
#[doc(hidden)]
#[cfg(not(feature = "contract-1-1"))]
#[macro_export]
macro_rules! __okm_status_items {
    () => {
        fn derive_status(
            c: __p::wt::CallContext,
            s: __p::wt::ClusterState,
            o: __p::Vec<__p::wt::K8sObject>,
        ) -> __p::Upd {
            __p::derive_status(&__okm_driver(), c, s, o)
        }
        fn poll_status(c: __p::wt::CallContext, s: __p::wt::ClusterState) -> __p::Upd {
            __p::poll_status(&__okm_driver(), c, s)
        }
    };
}

#[doc(hidden)]
#[cfg(feature = "contract-1-1")]
#[macro_export]
macro_rules! __okm_status_items {
    () => {
        fn derive_status(
            c: __p::wt::CallContext,
            s: __p::wt::ClusterState,
            o: __p::Vec<__p::ws::Observation>,
        ) -> __p::Answer {
            __p::derive_status(&__okm_driver(), c, s, o)
        }
        fn poll_status(c: __p::wt::CallContext, s: __p::wt::ClusterState) -> __p::Answer {
            __p::poll_status(&__okm_driver(), c, s)
        }
        fn apply_effects(
            c: __p::wt::CallContext,
            s: __p::wt::ClusterState,
            e: __p::Vec<__p::ws::Effect>,
        ) -> __p::Unit {
            __p::apply_effects(&__okm_driver(), c, s, e)
        }
    };
}

/// What [`register_driver!`] expands to calls: the conversions between
/// the bindings and the SDK's types around each method of [`Driver`].
#[doc(hidden)]
// The contract's error carries the rows a failed operation keeps: its size
// is the bindings', not a choice of this module.
#[allow(clippy::result_large_err)]
pub mod __private {
    pub use std::string::String;
    pub use std::vec::Vec;

    pub use crate::bindings::exports::openkeel::magnum_driver::driver as wd;
    pub use crate::bindings::exports::openkeel::magnum_driver::driver::Guest as DriverGuest;
    pub use crate::bindings::exports::openkeel::magnum_driver::lifecycle as wl;
    pub use crate::bindings::exports::openkeel::magnum_driver::lifecycle::Guest as LifecycleGuest;
    pub use crate::bindings::exports::openkeel::magnum_driver::status::Guest as StatusGuest;
    pub use crate::bindings::openkeel::magnum_driver::types as wt;

    use crate::Driver;

    pub type Unit = Result<(), wt::DriverError>;
    pub type Upd = Result<wt::Update, wt::DriverError>;

    fn unit(r: Result<(), crate::DriverError>) -> Unit {
        r.map_err(wt::DriverError::from)
    }

    fn upd(r: Result<crate::Update, crate::DriverError>) -> Upd {
        r.map(wt::Update::from).map_err(wt::DriverError::from)
    }

    pub fn describe<D: Driver>(d: &D) -> Vec<wd::EntryPoint> {
        d.describe().into_iter().map(wd::EntryPoint::from).collect()
    }
    pub fn validate_master_size<D: Driver>(d: &D, e: String, n: i32) -> Unit {
        unit(d.validate_master_size(&e, n))
    }
    pub fn validate_master_resize<D: Driver>(d: &D, e: String, n: i32) -> Unit {
        unit(d.validate_master_resize(&e, n))
    }
    pub fn validate_create<D: Driver>(d: &D, c: wt::CallContext, s: wt::ClusterState) -> Unit {
        unit(d.validate_create(&c.into(), &s.into()))
    }
    pub fn validate_upgrade<D: Driver>(
        d: &D,
        c: wt::CallContext,
        s: wt::ClusterState,
        t: wt::ClusterTemplate,
    ) -> Unit {
        unit(d.validate_upgrade(&c.into(), &s.into(), &t.into()))
    }
    pub fn can_rotate_ca<D: Driver>(d: &D, c: wt::CallContext, s: wt::ClusterState) -> Unit {
        unit(d.can_rotate_ca(&c.into(), &s.into()))
    }
    pub fn create_cluster<D: Driver>(
        d: &D,
        c: wt::CallContext,
        s: wt::ClusterState,
        t: u32,
    ) -> Upd {
        upd(d.create_cluster(&c.into(), s.into(), t))
    }
    pub fn update_cluster<D: Driver>(d: &D, c: wt::CallContext, s: wt::ClusterState) -> Upd {
        upd(d.update_cluster(&c.into(), s.into()))
    }
    pub fn delete_cluster<D: Driver>(d: &D, c: wt::CallContext, s: wt::ClusterState) -> Upd {
        upd(d.delete_cluster(&c.into(), s.into()))
    }
    pub fn resize_cluster<D: Driver>(
        d: &D,
        c: wt::CallContext,
        s: wt::ClusterState,
        r: wl::Resize,
    ) -> Upd {
        upd(d.resize_cluster(&c.into(), s.into(), r.into()))
    }
    pub fn upgrade_cluster<D: Driver>(
        d: &D,
        c: wt::CallContext,
        s: wt::ClusterState,
        u: wl::Upgrade,
    ) -> Upd {
        upd(d.upgrade_cluster(&c.into(), s.into(), u.into()))
    }
    pub fn create_nodegroup<D: Driver>(
        d: &D,
        c: wt::CallContext,
        s: wt::ClusterState,
        n: wt::Nodegroup,
    ) -> Upd {
        upd(d.create_nodegroup(&c.into(), s.into(), n.into()))
    }
    pub fn update_nodegroup<D: Driver>(
        d: &D,
        c: wt::CallContext,
        s: wt::ClusterState,
        n: wt::Nodegroup,
    ) -> Upd {
        upd(d.update_nodegroup(&c.into(), s.into(), n.into()))
    }
    pub fn delete_nodegroup<D: Driver>(
        d: &D,
        c: wt::CallContext,
        s: wt::ClusterState,
        n: wt::Nodegroup,
    ) -> Upd {
        upd(d.delete_nodegroup(&c.into(), s.into(), n.into()))
    }
    pub fn rotate_ca<D: Driver>(d: &D, c: wt::CallContext, s: wt::ClusterState) -> Upd {
        upd(d.rotate_ca(&c.into(), s.into()))
    }
    pub fn rotate_credential<D: Driver>(d: &D, c: wt::CallContext, s: wt::ClusterState) -> Upd {
        upd(d.rotate_credential(&c.into(), s.into()))
    }
    pub fn watches<D: Driver>(d: &D, c: wt::CallContext, s: wt::ClusterState) -> Vec<wt::Selector> {
        d.watches(&c.into(), &s.into())
            .into_iter()
            .map(wt::Selector::from)
            .collect()
    }
    #[cfg(not(feature = "contract-1-1"))]
    pub fn derive_status<D: Driver>(
        d: &D,
        c: wt::CallContext,
        s: wt::ClusterState,
        o: Vec<wt::K8sObject>,
    ) -> Upd {
        upd(d.derive_status(
            &c.into(),
            s.into(),
            o.into_iter().map(crate::K8sObject::from).collect(),
        ))
    }
    #[cfg(not(feature = "contract-1-1"))]
    pub fn poll_status<D: Driver>(d: &D, c: wt::CallContext, s: wt::ClusterState) -> Upd {
        upd(d.poll_status(&c.into(), s.into()))
    }

    #[cfg(feature = "contract-1-1")]
    pub use v1_1::*;

    /// Contract 1.1's functions.
    #[cfg(feature = "contract-1-1")]
    mod v1_1 {
        pub use crate::bindings::exports::openkeel::magnum_driver::status as ws;

        use super::{Unit, unit, wt};
        use crate::Driver;

        pub type Answer = Result<ws::StatusAnswer, wt::DriverError>;

        fn answer(r: Result<crate::StatusAnswer, crate::DriverError>) -> Answer {
            r.map(ws::StatusAnswer::from).map_err(wt::DriverError::from)
        }

        pub fn validate_nodegroup<D: Driver>(
            d: &D,
            c: wt::CallContext,
            s: wt::ClusterState,
            n: wt::Nodegroup,
        ) -> Unit {
            unit(d.validate_nodegroup(&c.into(), &s.into(), &n.into()))
        }
        pub fn derive_status<D: Driver>(
            d: &D,
            c: wt::CallContext,
            s: wt::ClusterState,
            o: Vec<ws::Observation>,
        ) -> Answer {
            answer(d.derive(
                &c.into(),
                s.into(),
                o.into_iter().map(crate::Observation::from).collect(),
            ))
        }
        pub fn poll_status<D: Driver>(d: &D, c: wt::CallContext, s: wt::ClusterState) -> Answer {
            answer(d.poll(&c.into(), s.into()))
        }
        pub fn apply_effects<D: Driver>(
            d: &D,
            c: wt::CallContext,
            s: wt::ClusterState,
            e: Vec<ws::Effect>,
        ) -> Unit {
            unit(d.apply_effects(
                &c.into(),
                &s.into(),
                e.into_iter().map(crate::Effect::from).collect(),
            ))
        }
    }
}
