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
    /// The most any driver's calls may use, whatever its manifest or its
    /// group asks (`[drivers]/max_call_timeout`, `max_memory_mb`,
    /// `max_output_kb`, `log_kb_per_call`, `log_lines_per_call`,
    /// `max_state_kb`).
    pub maxima: Maxima,
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
            maxima: Maxima::default(),
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

/// The operator's maxima of every driver's limits: a manifest asks, the
/// operator's `[driver:<package>]` group may set, and these cap both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Maxima {
    /// `[drivers]/max_call_timeout`: the longest deadline of one call.
    pub call_timeout: Duration,
    /// `[drivers]/max_memory_mb`: the largest linear memory of an instance
    /// (at most [`MAX_MEMORY_BYTES`], the pooling allocator's slot).
    pub memory_bytes: u64,
    /// `[drivers]/max_output_kb`: the largest answer of one call.
    pub output_bytes: usize,
    /// `[drivers]/log_kb_per_call`: what one call may log, through the
    /// `log` import and its stdout and stderr together.
    pub log_bytes: usize,
    /// `[drivers]/log_lines_per_call`: the log lines one call may write.
    pub log_lines: usize,
    /// `[drivers]/max_state_kb`: what a driver may keep per cluster in
    /// `state`.
    pub state_bytes: usize,
}

impl Default for Maxima {
    fn default() -> Self {
        Maxima {
            call_timeout: Duration::from_secs(300),
            memory_bytes: 512 << 20,
            output_bytes: 16 << 20,
            log_bytes: 64 << 10,
            log_lines: 200,
            state_bytes: 64 << 10,
        }
    }
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
    /// What one call may log, through the `log` import and its stdout and
    /// stderr together (the rest is dropped and counted).
    pub max_log_bytes: usize,
    /// The log lines one call may write (the rest is dropped and counted).
    pub max_log_lines: usize,
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
            max_log_lines: 200,
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
    /// else the defaults, each capped by the operator's `maxima`. The
    /// second value lists what was capped, for the log.
    pub fn resolve(
        manifest: &crate::manifest::LimitsSection,
        operator: &LimitOverrides,
        maxima: &Maxima,
    ) -> Result<(Limits, Vec<String>), String> {
        let mut l = Limits::default();
        let mut capped = Vec::new();
        let max_memory = maxima.memory_bytes.min(MAX_MEMORY_BYTES);
        if let Some(mb) = operator.memory_mb.or(manifest.memory_mb) {
            if mb == 0 {
                return Err("memory limit of 0 MiB".to_string());
            }
            l.memory_bytes = mb.saturating_mul(1 << 20);
        }
        if l.memory_bytes > max_memory {
            capped.push(format!(
                "memory {} MiB capped to {} MiB ([drivers]/max_memory_mb)",
                l.memory_bytes >> 20,
                max_memory >> 20
            ));
            l.memory_bytes = max_memory;
        }
        if let Some(s) = operator
            .call_timeout_seconds
            .or(manifest.call_timeout_seconds)
        {
            if s == 0 {
                return Err("call timeout of 0 seconds".to_string());
            }
            l.call_timeout = Duration::from_secs(s.min(u64::from(u32::MAX)));
        }
        if l.call_timeout > maxima.call_timeout {
            capped.push(format!(
                "call timeout {} s capped to {} s ([drivers]/max_call_timeout)",
                l.call_timeout.as_secs(),
                maxima.call_timeout.as_secs()
            ));
            l.call_timeout = maxima.call_timeout;
        }
        if let Some(kb) = operator.max_output_kb.or(manifest.output_kb) {
            l.max_output_bytes = usize::try_from(kb.saturating_mul(1024)).unwrap_or(usize::MAX);
        }
        if l.max_output_bytes > maxima.output_bytes {
            capped.push(format!(
                "output {} KiB capped to {} KiB ([drivers]/max_output_kb)",
                l.max_output_bytes >> 10,
                maxima.output_bytes >> 10
            ));
            l.max_output_bytes = maxima.output_bytes;
        }
        l.max_log_bytes = maxima.log_bytes;
        l.max_log_lines = maxima.log_lines;
        l.max_state_bytes = maxima.state_bytes;
        if l.memory_bytes == 0 || l.call_timeout.is_zero() || l.max_output_bytes == 0 {
            return Err(format!(
                "the operator's maxima leave it nothing ({})",
                l.summary()
            ));
        }
        Ok((l, capped))
    }

    /// A one-line summary for `driver list`.
    pub fn summary(&self) -> String {
        format!(
            "memory {} MiB, call {} s, output {} KiB, log {} KiB / {} lines a call, state {} KiB",
            self.memory_bytes >> 20,
            self.call_timeout.as_secs_f64(),
            self.max_output_bytes >> 10,
            self.max_log_bytes >> 10,
            self.max_log_lines,
            self.max_state_bytes >> 10
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
        let max = Maxima::default();
        let (l, capped) =
            Limits::resolve(&m, &LimitOverrides::default(), &max).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(l.memory_bytes, 64 << 20);
        assert_eq!(l.call_timeout, Duration::from_secs(10));
        assert!(capped.is_empty(), "{capped:?}");
        let o = LimitOverrides {
            memory_mb: Some(32),
            ..Default::default()
        };
        assert_eq!(
            Limits::resolve(&m, &o, &max).map(|(l, _)| l.memory_bytes),
            Ok(32 << 20)
        );
        let zero = LimitOverrides {
            memory_mb: Some(0),
            ..Default::default()
        };
        assert!(Limits::resolve(&m, &zero, &max).is_err());
    }

    #[test]
    fn the_operators_maxima_cap_what_a_manifest_asks() {
        let greedy = LimitsSection {
            memory_mb: Some(4096),
            call_timeout_seconds: Some(4_000_000_000),
            output_kb: Some(1 << 30),
        };
        let max = Maxima {
            call_timeout: Duration::from_secs(5),
            memory_bytes: 128 << 20,
            output_bytes: 1 << 20,
            log_bytes: 4 << 10,
            log_lines: 10,
            state_bytes: 1 << 10,
        };
        let (l, capped) = Limits::resolve(&greedy, &LimitOverrides::default(), &max)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(l.call_timeout, Duration::from_secs(5));
        assert_eq!(l.memory_bytes, 128 << 20);
        assert_eq!(l.max_output_bytes, 1 << 20);
        assert_eq!((l.max_log_bytes, l.max_log_lines), (4 << 10, 10));
        assert_eq!(l.max_state_bytes, 1 << 10);
        assert_eq!(capped.len(), 3, "{capped:?}");
        assert!(
            capped[1].contains("call timeout 4000000000 s capped to 5 s"),
            "{capped:?}"
        );
        // The operator's own group is capped too.
        let o = LimitOverrides {
            memory_mb: Some(1024),
            ..Default::default()
        };
        let (l, _) =
            Limits::resolve(&LimitsSection::default(), &o, &max).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(l.memory_bytes, 128 << 20);
    }
}
