//! [`DriverHost`]: the composition of the sandbox, the host services and
//! the registry of loaded drivers; what the binary starts once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::access::{CloudAccess, KubeAccess, OpenStackAccess, SecretsAccess};
use crate::breaker::Health;
use crate::clock::{Clock, SystemClock};
use crate::driver::Driver;
use crate::error::LoadError;
use crate::imports::Services;
use crate::manifest::Manifest;
use crate::package::{self, Origin, Package, PackageSource};
use crate::registry::{Registry, Selection};
use crate::sandbox::Sandbox;
use crate::settings::DriverSettings;
use crate::state::StateStore;

/// What the binary gives drivers. A service left `None` answers the
/// driver's calls with `unavailable`.
#[derive(Clone)]
pub struct HostServices {
    /// The cloud's configuration for the `cloud` import (`None`: nothing
    /// configured: an empty Keystone URL, the public interface, TLS
    /// verified).
    pub cloud: Option<Arc<dyn CloudAccess>>,
    pub kube: Option<Arc<dyn KubeAccess>>,
    pub openstack: Option<Arc<dyn OpenStackAccess>>,
    pub secrets: Option<Arc<dyn SecretsAccess>>,
    pub clock: Arc<dyn Clock>,
}

impl Default for HostServices {
    fn default() -> Self {
        HostServices {
            cloud: None,
            kube: None,
            openstack: None,
            secrets: None,
            clock: Arc::new(SystemClock::default()),
        }
    }
}

/// Observes the driver calls of a host, for metrics and traces: it is
/// called on the calling task, so it must be quick (counters, a span
/// handed to a queue, no I/O).
pub trait CallObserver: Send + Sync {
    /// A call of `function` (`create-cluster`) of package `driver`, made
    /// for the API request `request_id` ("" for background work), ended
    /// after `elapsed` (instantiation included), answered or with the
    /// fault `fault` (told again to [`CallObserver::fault`]). A call an
    /// open breaker refused is not made and not counted here.
    fn call(
        &self,
        driver: &str,
        function: &'static str,
        request_id: &str,
        elapsed: std::time::Duration,
        fault: Option<crate::FaultKind>,
    );
    /// A fault of `driver` in `function`: one the call itself met, an
    /// answer the host refused, or a call refused by the open breaker
    /// (`FaultKind::BreakerOpen`).
    fn fault(&self, driver: &str, function: &'static str, kind: crate::FaultKind);
}

/// A driver package that was not loaded, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The package name when its manifest could be read, else the path.
    pub name: String,
    pub origin: Origin,
    /// One line.
    pub reason: String,
}

/// The driver host of a process: one engine, the loaded drivers and their
/// registry.
pub struct DriverHost {
    pub(crate) sandbox: Arc<Sandbox>,
    pub(crate) services: Arc<Services>,
    pub(crate) settings: DriverSettings,
    pub(crate) registry: Registry<Driver>,
    pub(crate) refused: Vec<Refusal>,
}

impl DriverHost {
    /// Starts the host with the built-in drivers and the packages found in
    /// `drivers_path`. Components are compiled here (or loaded from the
    /// precompiled cache), off the request path. A built-in driver that
    /// cannot be loaded is an error; a package from `drivers_path` that is
    /// refused is logged and listed by [`DriverHost::refused`].
    pub async fn start(
        settings: DriverSettings,
        services: HostServices,
    ) -> Result<DriverHost, LoadError> {
        let mut sources = crate::builtin::sources();
        let mut refused = Vec::new();
        for dir in &settings.drivers_path {
            let (found, bad) = discover(dir);
            sources.extend(found);
            refused.extend(bad);
        }
        let mut host = Self::start_with(settings, services, sources).await?;
        host.refused.splice(0..0, refused);
        Ok(host)
    }

    /// Starts the host with exactly these packages (tests, the testkit).
    pub async fn start_with(
        settings: DriverSettings,
        services: HostServices,
        sources: Vec<PackageSource>,
    ) -> Result<DriverHost, LoadError> {
        let sandbox = Arc::new(Sandbox::new(
            settings.pooling_allocator,
            settings.precompiled_cache_dir.clone(),
        )?);
        let services = Arc::new(Services {
            cloud: services.cloud,
            kube: services.kube,
            openstack: services.openstack,
            secrets: services.secrets,
            state: StateStore::default(),
            clock: services.clock,
            observer: std::sync::OnceLock::new(),
        });
        let mut packages: Vec<Arc<Package>> = Vec::new();
        let mut refused = Vec::new();
        let mut names = BTreeSet::new();
        let mut entry_points = BTreeSet::new();
        for src in sources {
            let origin = src.origin.clone();
            let pkg =
                match package::load(&sandbox, &services, &settings, &settings.breaker, src).await {
                    Ok(p) => p,
                    Err((e, ex)) => {
                        if origin == Origin::BuiltIn {
                            return Err(LoadError::new(format!("built-in {e}")));
                        }
                        let name = ex
                            .map(|x| x.manifest.driver.name)
                            .unwrap_or_else(|| origin.to_string());
                        tracing::warn!(driver = %name, origin = %origin, "driver refused: {e}");
                        refused.push(Refusal {
                            name,
                            origin,
                            reason: e.0,
                        });
                        continue;
                    }
                };
            let clash = pkg
                .entry_points
                .iter()
                .find(|e| entry_points.contains(&e.name))
                .map(|e| e.name.clone());
            if !names.insert(pkg.name().to_string()) || clash.is_some() {
                let reason = match clash {
                    Some(ep) => format!(
                        "driver {}: entry point {ep} is already provided by another driver",
                        pkg.name()
                    ),
                    None => format!("driver {} is installed twice", pkg.name()),
                };
                if pkg.origin == Origin::BuiltIn {
                    return Err(LoadError::new(reason));
                }
                tracing::warn!(driver = %pkg.name(), "driver refused: {reason}");
                refused.push(Refusal {
                    name: pkg.name().to_string(),
                    origin: pkg.origin.clone(),
                    reason,
                });
                continue;
            }
            for e in &pkg.entry_points {
                entry_points.insert(e.name.clone());
            }
            tracing::info!(driver = %pkg.name(), version = %pkg.manifest.driver.version, origin = %pkg.origin,
                wit = %pkg.wit_version, "driver loaded");
            packages.push(Arc::new(pkg));
        }
        let drivers = packages
            .iter()
            .flat_map(|p| (0..p.entry_points.len()).map(|i| Driver::new(p.clone(), i)));
        let registry = Registry::new(
            Selection {
                disabled: settings.disabled_drivers.clone(),
                enabled_beta: settings.enabled_beta_drivers.clone(),
                default: settings.default_driver.clone(),
            },
            drivers,
        )
        .map_err(LoadError::new)?;
        Ok(DriverHost {
            sandbox,
            services,
            settings,
            registry,
            refused,
        })
    }

    /// Tells `observer` of every driver call and fault from now on (once:
    /// a second observer is ignored).
    pub fn observe_calls(&self, observer: Arc<dyn CallObserver>) {
        let _ = self.services.observer.set(observer);
    }

    /// Each loaded package's name and health (its breaker), once per
    /// package, in name order.
    pub fn package_health(&self) -> Vec<(String, Health)> {
        let mut seen = BTreeMap::new();
        for d in self.registry.all() {
            seen.entry(d.package().to_string())
                .or_insert_with(|| d.health());
        }
        seen.into_iter().collect()
    }

    /// The registry of loaded drivers, for selection.
    pub fn registry(&self) -> &Registry<Driver> {
        &self.registry
    }

    /// The packages that were refused at start.
    pub fn refused(&self) -> &[Refusal] {
        &self.refused
    }

    /// The settings the host started with.
    pub fn settings(&self) -> &DriverSettings {
        &self.settings
    }

    /// Whether instances come from the pooling allocator.
    pub fn pooling(&self) -> bool {
        self.sandbox.pooling
    }

    /// What a package keeps in its `state` for a cluster (tests,
    /// diagnostics).
    pub fn driver_state(&self, package: &str, cluster_uuid: &str) -> BTreeMap<String, String> {
        self.services.state.snapshot(package, cluster_uuid)
    }

    /// Drops every driver's state of a cluster whose rows are gone.
    pub fn forget_cluster(&self, cluster_uuid: &str) {
        self.services.state.forget_cluster(cluster_uuid);
    }
}

/// The packages under one `drivers_path` directory: the directory itself
/// when it holds a `driver.toml`, else each subdirectory holding one.
fn discover(dir: &Path) -> (Vec<PackageSource>, Vec<Refusal>) {
    let mut found = Vec::new();
    let mut refused = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    if dir.join("driver.toml").is_file() {
        dirs.push(dir.to_path_buf());
    } else {
        match std::fs::read_dir(dir) {
            Ok(entries) => {
                for e in entries.flatten() {
                    let p = e.path();
                    if p.join("driver.toml").is_file() {
                        dirs.push(p);
                    }
                }
            }
            Err(e) => refused.push(Refusal {
                name: dir.display().to_string(),
                origin: Origin::Path(dir.to_path_buf()),
                reason: format!("cannot read drivers_path {}: {e}", dir.display()),
            }),
        }
    }
    dirs.sort();
    for d in dirs {
        match read_package(&d.join("driver.toml")) {
            Ok(src) => found.push(src),
            Err(r) => refused.push(r),
        }
    }
    (found, refused)
}

/// Reads a package from its manifest's path: the manifest and the
/// component it names, beside it.
pub(crate) fn read_package(manifest_path: &Path) -> Result<PackageSource, Refusal> {
    let origin = Origin::Path(
        manifest_path
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    );
    let refuse = |name: String, reason: String| Refusal {
        name,
        origin: origin.clone(),
        reason,
    };
    let text = std::fs::read_to_string(manifest_path).map_err(|e| {
        refuse(
            manifest_path.display().to_string(),
            format!("cannot read {}: {e}", manifest_path.display()),
        )
    })?;
    let m = Manifest::parse(&text).map_err(|e| refuse(manifest_path.display().to_string(), e.0))?;
    let component_path = manifest_path
        .parent()
        .unwrap_or(Path::new("."))
        .join(m.component_file());
    let bytes = std::fs::read(&component_path).map_err(|e| {
        refuse(
            m.driver.name.clone(),
            format!(
                "driver {}: cannot read its component {}: {e}",
                m.driver.name,
                component_path.display()
            ),
        )
    })?;
    Ok(PackageSource {
        manifest: text,
        component: Arc::from(bytes),
        origin,
    })
}
