//! The drivers built with the host: their components are compiled for
//! wasm32-wasip2 by the build script and embedded in the binary with
//! their manifests, so that all-in-one needs nothing else.

use std::sync::Arc;

use crate::package::{Origin, PackageSource};

/// The fake driver's component.
pub const FAKE_COMPONENT: &[u8] = include_bytes!(env!("OKM_GUEST_FAKE"));
/// The fake driver's manifest.
pub const FAKE_MANIFEST: &str = include_str!("../../../guest/drivers/fake/driver.toml");

/// The Cluster API driver's component.
pub const CAPI_COMPONENT: &[u8] = include_bytes!(env!("OKM_GUEST_CAPI"));
/// The Cluster API driver's manifest.
pub const CAPI_MANIFEST: &str = include_str!("../../../guest/drivers/capi/driver.toml");

/// The entry points of the built-in drivers, sorted: what
/// `disabled_drivers` lists to run without any of them.
pub const ENTRY_POINTS: [&str; 7] = [
    "fake",
    "k8s_cluster_api",
    "k8s_cluster_api_debian",
    "k8s_cluster_api_flatcar",
    "k8s_cluster_api_rockylinux",
    "k8s_cluster_api_ubuntu",
    "k8s_cluster_api_ubuntu_focal",
];

/// Every built-in driver package: the fake driver, then the Cluster API
/// driver.
pub fn sources() -> Vec<PackageSource> {
    [
        (FAKE_MANIFEST, FAKE_COMPONENT),
        (CAPI_MANIFEST, CAPI_COMPONENT),
    ]
    .into_iter()
    .map(|(manifest, component)| PackageSource {
        manifest: manifest.to_string(),
        component: Arc::from(component),
        origin: Origin::BuiltIn,
    })
    .collect()
}

/// Paths of the sandbox test components, built with the host for its
/// tests (not embedded).
#[doc(hidden)]
pub mod test_components {
    /// A driver that misbehaves as its option `mode` says.
    pub const SANDBOX: &str = env!("OKM_GUEST_SANDBOX");
    /// A component built for `openkeel:magnum-driver@2.0.0`.
    pub const V2: &str = env!("OKM_GUEST_V2");
    /// A driver that breaks one rule of the conformance kit, as its option
    /// `mode` says (`good` breaks none).
    pub const CONFORMANCE: &str = env!("OKM_GUEST_CONFORMANCE");
    /// A well-behaved driver of contract 1.1 whose status arrives by
    /// watch (one ConfigMap per cluster).
    pub const WATCHER: &str = env!("OKM_GUEST_WATCHER");
    /// The watcher's manifest.
    pub const WATCHER_MANIFEST: &str =
        include_str!("../../../guest/components/watcher/driver.toml");
}
