//! The operator's driver settings: Magnum's `[drivers]` options and, per
//! driver package, a `[driver:<name>]` group of grants, limits and options.
//!
//! The binary reads magnum.conf and fills a [`DriverSettings`];
//! [`DriverConfig::from_group`] parses one `[driver:<name>]` group:
//!
//! ```ini
//! [drivers]
//! default_driver = k8s_cluster_api_ubuntu
//! enabled_beta_drivers = fake
//! disabled_drivers =
//! drivers_path = /var/lib/magnum/drivers
//! precompiled_cache_dir = /var/cache/magnum/drivers
//!
//! [driver:capi]
//! # Grant what the manifest requests (the default for built-in drivers).
//! grant_requested = true
//! # Or grant explicitly (a driver from drivers_path gets nothing else):
//! kube = v1/Secret:get+apply+delete@magnum-system, cluster.x-k8s.io/v1beta2/*:*@magnum-system
//! openstack = resolve, server-groups, application-credentials, load-balancers, volume-types
//! cluster_secrets = true
//! files_dir = /etc/magnum/addons
//! memory_mb = 256
//! call_timeout = 60
//! max_output_kb = 4096
//! options = default_cni:calico, image_repository:registry.example.com
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::breaker::BreakerSettings;
use crate::capabilities::{Capabilities, KubeRule, OPENSTACK_CALLS};

/// Magnum's `[drivers]` options and the per-driver groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverSettings {
    /// `[drivers]/default_driver` (`None` when unset).
    pub default_driver: Option<String>,
    /// `[drivers]/enabled_beta_drivers`: beta drivers that may be chosen by
    /// cluster type.
    pub enabled_beta_drivers: Vec<String>,
    /// `[drivers]/disabled_drivers`: entry points not chosen by cluster
    /// type, as the default, nor listed.
    pub disabled_drivers: Vec<String>,
    /// `[drivers]/drivers_path`: directories whose subdirectories hold
    /// driver packages (`<dir>/<package>/driver.toml` and its component).
    pub drivers_path: Vec<PathBuf>,
    /// `[drivers]/precompiled_cache_dir`: where compiled components are
    /// kept between starts (`None`: compile at every start).
    pub precompiled_cache_dir: Option<PathBuf>,
    /// `[drivers]/pooling_allocator`: pre-allocate instance slots (fast
    /// instantiation); falls back to on-demand allocation when the
    /// reservation fails.
    pub pooling_allocator: bool,
    /// `[driver:<package>]` groups, by package name.
    pub drivers: BTreeMap<String, DriverConfig>,
    /// When a driver's breaker opens (`[drivers]/breaker_threshold`,
    /// `breaker_window`, `breaker_cooldown`).
    pub breaker: BreakerSettings,
}

impl Default for DriverSettings {
    fn default() -> Self {
        DriverSettings {
            default_driver: None,
            enabled_beta_drivers: Vec::new(),
            disabled_drivers: Vec::new(),
            drivers_path: Vec::new(),
            precompiled_cache_dir: None,
            pooling_allocator: true,
            drivers: BTreeMap::new(),
            breaker: BreakerSettings::default(),
        }
    }
}

impl DriverSettings {
    /// The group of a package (defaults when magnum.conf has none).
    pub fn driver(&self, package: &str) -> DriverConfig {
        self.drivers.get(package).cloned().unwrap_or_default()
    }
}

/// One `[driver:<package>]` group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverConfig {
    /// `grant_requested`: `Some(true)` grants what the manifest requests,
    /// `Some(false)` only [`DriverConfig::grants`]; `None`: true for
    /// built-in drivers, false for drivers from `drivers_path`.
    pub grant_requested: Option<bool>,
    /// The explicit grants (`kube`, `openstack`, `cluster_secrets`,
    /// `files_dir`).
    pub grants: Capabilities,
    /// `files_dir`: the directory `config.read-file` reads from.
    pub files_dir: Option<PathBuf>,
    /// `memory_mb`, `call_timeout` (seconds), `max_output_kb`.
    pub limits: LimitOverrides,
    /// `options`: the driver's own options, over its manifest's defaults.
    pub options: BTreeMap<String, String>,
}

/// The operator's limits of one driver; `None` keeps the manifest's value
/// or the host default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LimitOverrides {
    pub memory_mb: Option<u64>,
    pub call_timeout_seconds: Option<u64>,
    pub max_output_kb: Option<u64>,
}

impl DriverConfig {
    /// Parses the values of a `[driver:<package>]` group (keys as in
    /// magnum.conf; list values comma-separated, `options` as oslo.config
    /// dicts `key:value, …`). An unknown key is refused.
    pub fn from_group<'a>(
        entries: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<DriverConfig, String> {
        let mut c = DriverConfig::default();
        for (key, value) in entries {
            let value = value.trim();
            let list = || {
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            match key {
                "grant_requested" => c.grant_requested = Some(parse_bool(key, value)?),
                "kube" => {
                    c.grants.kube = list()
                        .iter()
                        .map(|r| KubeRule::parse(r))
                        .collect::<Result<_, _>>()?;
                }
                "openstack" => {
                    for call in list() {
                        if call != "*" && !OPENSTACK_CALLS.contains(&call.as_str()) {
                            return Err(format!(
                                "openstack: unknown call group {call:?} (known: {})",
                                OPENSTACK_CALLS.join(", ")
                            ));
                        }
                        c.grants.openstack.insert(call);
                    }
                }
                "cluster_secrets" => c.grants.cluster_secrets = parse_bool(key, value)?,
                "files_dir" => {
                    if !value.is_empty() {
                        c.files_dir = Some(PathBuf::from(value));
                        c.grants.files = true;
                    }
                }
                "memory_mb" => c.limits.memory_mb = Some(parse_u64(key, value)?),
                "call_timeout" => c.limits.call_timeout_seconds = Some(parse_u64(key, value)?),
                "max_output_kb" => c.limits.max_output_kb = Some(parse_u64(key, value)?),
                "options" => {
                    for item in list() {
                        let (k, v) = item
                            .split_once(':')
                            .ok_or_else(|| format!("options: {item:?} is not key:value"))?;
                        c.options.insert(k.trim().to_string(), v.trim().to_string());
                    }
                }
                _ => return Err(format!("unknown option {key}")),
            }
        }
        Ok(c)
    }
}

fn parse_bool(key: &str, v: &str) -> Result<bool, String> {
    // oslo.config's boolean spellings.
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(format!("{key}: {v:?} is not a boolean")),
    }
}

fn parse_u64(key: &str, v: &str) -> Result<u64, String> {
    v.parse()
        .map_err(|_| format!("{key}: {v:?} is not a non-negative integer"))
}

/// The limits a driver's calls run under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The linear memory of one instance.
    pub memory_bytes: u64,
    /// One call, from instantiation to answer.
    pub call_timeout: Duration,
    /// The answer of one call, in bytes of text.
    pub max_output_bytes: usize,
    /// What one call may print to stdout and stderr (the rest is dropped).
    pub max_log_bytes: usize,
    /// One argument of an import (a Kubernetes object, a file).
    pub max_import_bytes: usize,
    /// What the driver may keep per cluster in `state`.
    pub max_state_bytes: usize,
    /// Elements of one table.
    pub max_table_elements: usize,
    /// Entries of the per-call resource table (WASI streams).
    pub max_resources: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 256 << 20,
            call_timeout: Duration::from_secs(60),
            max_output_bytes: 4 << 20,
            max_log_bytes: 64 << 10,
            max_import_bytes: 1 << 20,
            max_state_bytes: 64 << 10,
            max_table_elements: 20_000,
            max_resources: 1_000,
        }
    }
}

/// The largest memory limit a driver may have: the pooling allocator's slot.
pub const MAX_MEMORY_BYTES: u64 = 1 << 30;

impl Limits {
    /// The limits of a driver: the operator's values, else the manifest's,
    /// else the defaults.
    pub fn resolve(
        manifest: &crate::manifest::LimitsSection,
        operator: &LimitOverrides,
    ) -> Result<Limits, String> {
        let mut l = Limits::default();
        if let Some(mb) = operator.memory_mb.or(manifest.memory_mb) {
            l.memory_bytes = mb.saturating_mul(1 << 20);
        }
        if let Some(s) = operator
            .call_timeout_seconds
            .or(manifest.call_timeout_seconds)
        {
            l.call_timeout = Duration::from_secs(s);
        }
        if let Some(kb) = operator.max_output_kb.or(manifest.output_kb) {
            l.max_output_bytes = usize::try_from(kb.saturating_mul(1024)).unwrap_or(usize::MAX);
        }
        if l.memory_bytes == 0 || l.memory_bytes > MAX_MEMORY_BYTES {
            return Err(format!(
                "memory limit of {} MiB is outside what this host allows (1 to {} MiB)",
                l.memory_bytes >> 20,
                MAX_MEMORY_BYTES >> 20
            ));
        }
        if l.call_timeout.is_zero() {
            return Err("call timeout of 0 seconds".to_string());
        }
        Ok(l)
    }

    /// A one-line summary for `driver list`.
    pub fn summary(&self) -> String {
        format!(
            "memory {} MiB, call {} s, output {} KiB",
            self.memory_bytes >> 20,
            self.call_timeout.as_secs_f64(),
            self.max_output_bytes >> 10
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::LimitsSection;

    #[test]
    fn a_group_parses() {
        let c = DriverConfig::from_group([
            ("grant_requested", "false"),
            (
                "kube",
                "v1/Secret:get+apply@magnum-system, v1/Namespace:get",
            ),
            ("openstack", "resolve, volume-types"),
            ("cluster_secrets", "True"),
            ("files_dir", "/etc/magnum/addons"),
            ("memory_mb", "128"),
            ("call_timeout", "30"),
            ("max_output_kb", "512"),
            (
                "options",
                "default_cni:calico, repo:registry.example.com:5000",
            ),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.grant_requested, Some(false));
        assert_eq!(c.grants.kube.len(), 2);
        assert!(c.grants.allows_openstack("volume-types"));
        assert!(c.grants.cluster_secrets && c.grants.files);
        assert_eq!(c.limits.memory_mb, Some(128));
        assert_eq!(
            c.options.get("repo").map(String::as_str),
            Some("registry.example.com:5000")
        );
    }

    #[test]
    fn a_bad_group_is_refused() {
        assert!(DriverConfig::from_group([("colour", "blue")]).is_err());
        assert!(DriverConfig::from_group([("openstack", "nova-boot")]).is_err());
        assert!(DriverConfig::from_group([("cluster_secrets", "maybe")]).is_err());
        assert!(DriverConfig::from_group([("options", "novalue")]).is_err());
        assert!(DriverConfig::from_group([("kube", "v1/Secret")]).is_err());
    }

    #[test]
    fn the_operator_wins_over_the_manifest() {
        let m = LimitsSection {
            memory_mb: Some(64),
            call_timeout_seconds: Some(10),
            output_kb: None,
        };
        let l = Limits::resolve(&m, &LimitOverrides::default()).unwrap_or_default();
        assert_eq!(l.memory_bytes, 64 << 20);
        assert_eq!(l.call_timeout, Duration::from_secs(10));
        let o = LimitOverrides {
            memory_mb: Some(32),
            ..Default::default()
        };
        assert_eq!(
            Limits::resolve(&m, &o).map(|l| l.memory_bytes),
            Ok(32 << 20)
        );
        let huge = LimitOverrides {
            memory_mb: Some(4096),
            ..Default::default()
        };
        assert!(Limits::resolve(&m, &huge).is_err());
    }
}
