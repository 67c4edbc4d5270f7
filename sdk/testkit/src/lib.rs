//! Test an openkeel-magnum cluster driver the way the host will run it.
//!
//! [`Kit::load`] starts the real driver host (the sandbox, the grants, the
//! limits, the load-time checks) with one driver package, an in-memory
//! Kubernetes API server ([`kube::ApiServer`]: server-side apply by field
//! manager, list by label, delete with finalizers), an in-memory OpenStack
//! and certificate store, and a clock that moves only when told. The
//! [`fixtures`] build the rows of a new cluster the way the conductor
//! does, and [`conformance::run`] is the kit of checks every driver must
//! pass (the built-in ones do, in CI):
//!
//! ```ignore
//! use openkeel_magnum_driver_testkit::{Kit, Package, conformance};
//!
//! #[tokio::test]
//! async fn my_driver_conforms() {
//!     let kit = Kit::load(Package::from_dir("target/package").unwrap()).await.unwrap();
//!     conformance::run(&kit, &conformance::Options::default()).await.assert_passed();
//! }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use driver_host::access::memory::{MemoryCloud, MemoryOpenStack, MemorySecrets};
use driver_host::{
    DriverConfig, DriverHost, DriverSettings, HostServices, Origin, PackageSource, Refusal,
};

pub mod conformance;
pub mod fixtures;
/// The in-memory Kubernetes API server, with server-side apply.
pub use driver_host::access::memory::kube;

// The host's types a driver's tests use, so that they need no other
// dependency than the kit (and tokio for `#[tokio::test]`).
/// The rows' times (`created_at`, `updated_at`: `NaiveDateTime` in UTC).
pub use chrono::{DateTime, NaiveDateTime, Utc};
pub use driver_host::access::memory::MemoryCloud as Cloud;
pub use driver_host::access::memory::MemoryOpenStack as OpenStack;
pub use driver_host::clock::ManualClock;
pub use driver_host::manifest::Manifest;
pub use driver_host::{
    CallContext, CallError, CloudInfo, ClusterState, Credentials, Driver, DriverFault, Effect,
    FaultKind, HostError, KubeObject, ObjectRef, Observation, Resize, Selector, StatusAnswer,
    Target, Update, Upgrade, field_manager,
};
pub use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup};
pub use magnum_domain::{MagnumError, Status};
/// JSON, as [`kube::ApiServer`] answers objects.
pub use serde_json;

/// A driver package: its manifest and its component.
#[derive(Clone)]
pub struct Package {
    /// The text of `driver.toml`.
    pub manifest: String,
    /// The component's bytes.
    pub component: Vec<u8>,
    /// Where it was read from, for messages (`None`: built in memory).
    pub dir: Option<PathBuf>,
}

impl std::fmt::Debug for Package {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Package")
            .field("dir", &self.dir)
            .field("component_bytes", &self.component.len())
            .finish()
    }
}

impl Package {
    /// The package in `dir`: its `driver.toml` and the component it names.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Package, String> {
        let dir = dir.as_ref();
        let manifest = read_text(&dir.join("driver.toml"))?;
        let parsed = Manifest::parse(&manifest).map_err(|e| e.to_string())?;
        let component = read_bytes(&dir.join(parsed.component_file()))?;
        Ok(Package {
            manifest,
            component,
            dir: Some(dir.to_path_buf()),
        })
    }

    /// A manifest and a component file anywhere (a component just built
    /// by cargo, its manifest in the source tree).
    pub fn from_files(
        manifest: impl AsRef<Path>,
        component: impl AsRef<Path>,
    ) -> Result<Package, String> {
        let manifest_path = manifest.as_ref();
        Ok(Package {
            manifest: read_text(manifest_path)?,
            component: read_bytes(component.as_ref())?,
            dir: manifest_path.parent().map(Path::to_path_buf),
        })
    }

    /// The parsed manifest.
    pub fn parsed(&self) -> Result<Manifest, String> {
        Manifest::parse(&self.manifest).map_err(|e| e.to_string())
    }

    fn source(&self) -> PackageSource {
        PackageSource {
            manifest: self.manifest.clone(),
            component: self.component.clone().into(),
            origin: Origin::Path(self.dir.clone().unwrap_or_else(|| PathBuf::from("testkit"))),
        }
    }
}

fn read_text(p: &Path) -> Result<String, String> {
    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn read_bytes(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// How [`Kit::load_with`] sets the host up.
pub struct Options {
    /// The driver's options, over its manifest's defaults (as
    /// `[driver:<name>]/options`).
    pub driver_options: BTreeMap<String, String>,
    /// The OpenStack cloud the driver sees.
    pub openstack: MemoryOpenStack,
    /// The cloud's configuration the driver reads (contract 1.1's
    /// `cloud.info`); [`Kit::cloud`] changes it during a test.
    pub cloud: CloudInfo,
    /// Where the compiled component is kept between test runs (`None`:
    /// compiled by every load).
    pub precompiled_cache_dir: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            driver_options: BTreeMap::new(),
            openstack: fixtures::cloud(),
            cloud: fixtures::cloud_info(),
            precompiled_cache_dir: None,
        }
    }
}

/// One driver package loaded in the real host, with in-memory services.
pub struct Kit {
    host: DriverHost,
    manifest: Manifest,
    kube: Arc<kube::ApiServer>,
    openstack: Arc<MemoryOpenStack>,
    cloud: Arc<MemoryCloud>,
    clock: Arc<ManualClock>,
}

impl Kit {
    /// Loads the package as an operator would who grants what it requests
    /// and enables its beta entry points.
    pub async fn load(pkg: Package) -> Result<Kit, String> {
        Kit::load_with(pkg, Options::default()).await
    }

    /// Loads the package with these options. Refused packages are an error
    /// carrying the host's one-line reason.
    pub async fn load_with(pkg: Package, opts: Options) -> Result<Kit, String> {
        let manifest = pkg.parsed()?;
        let name = manifest.driver.name.clone();
        let mut settings = DriverSettings {
            enabled_beta_drivers: manifest
                .entry_points
                .iter()
                .map(|e| e.name.clone())
                .collect(),
            precompiled_cache_dir: opts.precompiled_cache_dir,
            ..Default::default()
        };
        settings.drivers.insert(
            name,
            DriverConfig {
                grant_requested: Some(true),
                options: opts.driver_options,
                ..Default::default()
            },
        );
        let kube = Arc::new(kube::ApiServer::new());
        let openstack = Arc::new(opts.openstack);
        let clock = ManualClock::new(fixtures::start_time());
        let cloud = Arc::new(MemoryCloud::new(opts.cloud));
        let services = HostServices {
            kube: Some(kube.clone()),
            openstack: Some(openstack.clone()),
            secrets: Some(Arc::new(MemorySecrets::default())),
            cloud: Some(cloud.clone()),
            clock: clock.clone(),
        };
        let host = DriverHost::start_with(settings, services, vec![pkg.source()])
            .await
            .map_err(|e| e.to_string())?;
        if let Some(Refusal { reason, .. }) = host.refused().first() {
            return Err(reason.clone());
        }
        Ok(Kit {
            host,
            manifest,
            kube,
            openstack,
            cloud,
            clock,
        })
    }

    /// The entry point named `name`.
    pub fn driver(&self, name: &str) -> Result<Driver, String> {
        self.host
            .registry()
            .lookup(name)
            .cloned()
            .map_err(|e| e.to_string())
    }

    /// Every entry point of the package, in the manifest's order.
    pub fn drivers(&self) -> Result<Vec<Driver>, String> {
        self.manifest
            .entry_points
            .iter()
            .map(|e| self.driver(&e.name))
            .collect()
    }

    /// The package's manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The management cluster.
    pub fn kube(&self) -> &kube::ApiServer {
        &self.kube
    }

    /// The cloud, with the calls made.
    pub fn openstack(&self) -> &MemoryOpenStack {
        &self.openstack
    }

    /// The cloud's configuration; [`Cloud::set`] changes what the
    /// driver's next call reads, as an operator's edited CA file.
    pub fn cloud(&self) -> &Cloud {
        &self.cloud
    }

    /// The host's clock (drivers read it through WASI).
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// The host itself.
    pub fn host(&self) -> &DriverHost {
        &self.host
    }

    /// What the driver keeps for a cluster (the `state` import).
    pub fn driver_state(&self, cluster_uuid: &str) -> BTreeMap<String, String> {
        self.host
            .driver_state(&self.manifest.driver.name, cluster_uuid)
    }
}
