//! The guest side of the `openkeel:magnum-driver@1.0.0` contract: the
//! generated bindings, re-exported under short names, and the few helpers
//! every driver needs (Magnum's base-driver rules and errors, label
//! lookups).
//!
//! A driver implements [`DriverGuest`], [`LifecycleGuest`] and
//! [`StatusGuest`] on one type and registers it with [`register_driver!`].
//! It is built with `cargo build --release --target wasm32-wasip2`.

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/magnum-driver@1.0.0",
        world: "cluster-driver",
        pub_export_macro: true,
        export_macro_name: "export_cluster_driver",
        default_bindings_module: "openkeel_magnum_driver::bindings",
    });
}

pub use bindings::exports::openkeel::magnum_driver::driver::{EntryPoint, Guest as DriverGuest};
pub use bindings::exports::openkeel::magnum_driver::lifecycle::{
    Guest as LifecycleGuest, Resize, Upgrade,
};
pub use bindings::exports::openkeel::magnum_driver::status::Guest as StatusGuest;
pub use bindings::openkeel::magnum_driver::types::{
    CallContext, Caller, Cluster, ClusterState, ClusterTemplate, DriverError, HostError, K8sObject,
    MagnumError, Nodegroup, ObjectRef, Selector, Status, StringMap, Target, Timestamp, Update,
};
pub use bindings::openkeel::magnum_driver::{cluster_secrets, config, kube, log, openstack, state};

/// Registers `$t` as the component's driver: it must implement
/// [`DriverGuest`], [`LifecycleGuest`] and [`StatusGuest`].
#[macro_export]
macro_rules! register_driver {
    ($t:ident) => {
        $crate::bindings::export_cluster_driver!($t with_types_in $crate::bindings);
    };
}

/// A client error (a 4xx Magnum shows the caller).
pub fn client_error(status: u16, kind: &str, message: impl Into<String>) -> DriverError {
    DriverError::Client(MagnumError {
        status,
        kind: kind.to_string(),
        message: message.into(),
    })
}

/// 400 `NotSupported` with a literal message, as Magnum's drivers raise it.
pub fn not_supported(message: impl Into<String>) -> DriverError {
    client_error(400, "NotSupported", message)
}

/// The base driver's refusal of a CA rotation.
///
/// Magnum: magnum/drivers/common/driver.py:306 raises NotSupported with
/// this literal message.
pub fn ca_rotation_not_supported() -> DriverError {
    not_supported("'rotate_ca_certificate' is not supported by this driver.")
}

/// The conductor's answer when a driver does not rotate credentials.
///
/// Magnum: magnum/conductor/handlers/credential_conductor.py:56.
pub fn credential_rotation_not_supported() -> DriverError {
    not_supported("Credential rotation is not supported by driver.")
}

/// The base driver's rule for the master count of a new cluster: odd and
/// at least 1, else 400 `MasterNGSizeInvalid`.
pub fn validate_master_size(count: i32) -> Result<(), DriverError> {
    if count % 2 == 0 || count < 1 {
        return Err(client_error(
            400,
            "MasterNGSizeInvalid",
            format!("master nodegroup size of {count} is invalid, size cannot be an even number."),
        ));
    }
    Ok(())
}

/// The base driver's refusal of a master nodegroup resize.
pub fn master_resize_not_supported() -> DriverError {
    client_error(
        400,
        "MasterNGResizeNotSupported",
        "Resizing the master nodegroup is not supported by this driver.",
    )
}

/// The value of `key` in an optional label map.
pub fn label<'a>(labels: &'a Option<StringMap>, key: &str) -> Option<&'a str> {
    labels
        .as_ref()?
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A copy of `labels` with `key` set to `value`, in key order.
pub fn with_label(labels: &Option<StringMap>, key: &str, value: &str) -> StringMap {
    let mut out: StringMap = labels
        .iter()
        .flatten()
        .filter(|(k, _)| k != key)
        .cloned()
        .collect();
    out.push((key.to_string(), value.to_string()));
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Writes one log record through the host.
pub fn log(level: log::Level, message: &str) {
    log::write(level, message, &[]);
}
