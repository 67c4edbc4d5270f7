//! The driver's options: its manifest's `[options]`, overridden by the
//! operator's `[driver:capi] options`.

use openkeel_magnum_driver::{DriverError, config};

use crate::names::{CLASS_VERSION, NAMESPACE};
use crate::registries::{INSECURE_REGISTRIES, REGISTRY_MIRRORS, Registries};

/// Seconds, as the status rules count them (microseconds).
const MICROS: i64 = 1_000_000;

/// What the operations and the status rules read of the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// `namespace`: where every object goes (the manifest grants it).
    pub namespace: String,
    /// The class version clusters are built with.
    pub class_version: String,
    /// `default_boot_volume_size` (GiB; 0 boots from the image), as
    /// Magnum's `[cinder]` option.
    pub default_boot_volume_size: i64,
    /// `default_boot_volume_type`, as Magnum's `[cinder]` option.
    pub default_boot_volume_type: Option<String>,
    /// `update_grace` (seconds): how long a topology may fail to reconcile
    /// before an update fails.
    pub update_grace: i64,
    /// `delete_timeout` (seconds): how long a deletion may make no
    /// progress before it is `DELETE_FAILED`; 0 never.
    pub delete_timeout: i64,
    /// `autoscaler_image_repository`: where the cluster autoscaler's image
    /// comes from ("": the upstream registry) unless the cluster's
    /// `container_infra_prefix` says.
    pub autoscaler_image_repository: String,
    /// `keystone_auth_default_policy`: the content of the operator's
    /// `[kubernetes]/keystone_auth_default_policy` file, which the host
    /// reads; None for the built-in policy.
    pub keystone_auth_policy: Option<String>,
    /// `registry_mirrors` and `insecure_registries`: the containerd
    /// registry configuration of every cluster's nodes, which a cluster's
    /// labels of the same names extend.
    pub registries: Registries,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            namespace: NAMESPACE.into(),
            class_version: CLASS_VERSION.into(),
            default_boot_volume_size: 0,
            default_boot_volume_type: None,
            update_grace: 600,
            delete_timeout: 3600,
            autoscaler_image_repository: String::new(),
            keystone_auth_policy: None,
            registries: Registries::default(),
        }
    }
}

impl Options {
    /// The options of this call. A malformed number or registry entry is
    /// the operator's error, reported as a failed operation.
    pub fn read() -> Result<Options, DriverError> {
        let d = Options::default();
        let text = |k: &str| {
            config::get(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Ok(Options {
            namespace: text("namespace").unwrap_or(d.namespace),
            class_version: d.class_version,
            default_boot_volume_size: config::parse_or(
                "default_boot_volume_size",
                d.default_boot_volume_size,
            )?,
            default_boot_volume_type: text("default_boot_volume_type"),
            update_grace: config::parse_or("update_grace", d.update_grace)?,
            delete_timeout: config::parse_or("delete_timeout", d.delete_timeout)?,
            autoscaler_image_repository: text("autoscaler_image_repository")
                .unwrap_or(d.autoscaler_image_repository),
            keystone_auth_policy: text("keystone_auth_default_policy"),
            registries: Registries::parse(
                "Driver option",
                &text(REGISTRY_MIRRORS).unwrap_or_default(),
                &text(INSECURE_REGISTRIES).unwrap_or_default(),
            )
            .map_err(DriverError::failed)?,
        })
    }

    /// The status rules' waits at `now` (microseconds).
    pub fn rules(&self, now: i64) -> crate::status::Rules {
        crate::status::Rules {
            now,
            update_grace: self.update_grace.saturating_mul(MICROS),
            delete_timeout: self.delete_timeout.saturating_mul(MICROS),
        }
    }
}
