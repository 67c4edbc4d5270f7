//! The use cases: every read the API serves and every state change, in
//! what Magnum's conductor did. The API calls this module, never the
//! database, the drivers or OpenStack directly.
//!
//! One file per resource (`templates.rs`, `clusters.rs`, `nodegroups.rs`,
//! …), each adding methods to [`Conductor`]. The policy engine with
//! Magnum's defaults ([`policy`]) is here too: some use cases check a rule
//! where Magnum's conductor checks it, after reading the resource.

pub mod policy;

// The layers below, by the names the modules use.
use magnum_db as db;
use magnum_integrations::{certs, notify, openstack};

mod certificates;
mod cluster_actions;
mod cluster_state;
pub mod cluster_templates;
mod clusters;
mod credentials;
mod driver_answers;
mod error;
mod federations;
mod jobs;
pub mod list_cache;
mod lock_row;
pub(crate) mod lookup;
mod nodegroups;
mod openstack_reads;
mod quotas;
mod services;
mod stats;
mod status_pass;

#[cfg(test)]
mod cluster_tests;
#[cfg(test)]
mod driver_secrets_tests;
#[cfg(test)]
mod lookup_tests;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

#[cfg(any(test, feature = "testing"))]
pub use certificates::test_support as certificate_test_support;
pub use certificates::{CERTIFICATE_COLUMNS, CertificateRefs};
pub use cluster_actions::{ClusterResize, ClusterUpgrade};
pub use cluster_templates::{TemplateCreate, TemplateUpdate};
pub use clusters::{ClusterCreate, ClusterDetail, ClusterPage, ClusterUpdate, generate_name};
pub use error::{Error, Result};
pub use federations::{FederationCreate, federation_doc};
pub use jobs::{CREATE_ORPHAN_AGE, JobsDropped};
#[cfg(any(test, feature = "testing"))]
pub use jobs::{Hook, JobHooks};
pub use lock_row::{LOCK_SERVICE_BINARY, LOCK_SERVICE_HOST, is_lock_row};
pub use nodegroups::NODEGROUP_PATCH_COLUMNS;
pub use services::Heartbeat;
pub use stats::Stats;
pub use status_pass::{ClusterFailure, DeletesUnfinished, HEALTH_POLLED, POLLED, PollPass, Source};

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::NaiveDateTime;
use driver_host::{DriverHost, Entry, Registry, TemplateDriverInput};
use magnum_domain::MagnumError;

use crate::certs::{KeyGenerator, Store, X509Options};
use crate::db::Db;
use crate::notify::Notifier;
use crate::openstack::Lookup;

/// The clock of the use cases (naive UTC, as the rows store it).
pub type Clock = Arc<dyn Fn() -> NaiveDateTime + Send + Sync>;

/// A new resource UUID (version 4 in production).
pub type NewUuid = Arc<dyn Fn() -> String + Send + Sync>;

/// The configuration values the use cases read.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `[quotas]/max_clusters_per_project`.
    pub max_clusters_per_project: i64,
    /// `[cluster_template]/kubernetes_allowed_network_drivers`.
    pub kubernetes_allowed_network_drivers: Vec<String>,
    /// `[cluster_template]/kubernetes_default_network_driver`.
    pub kubernetes_default_network_driver: String,
    /// `[DEFAULT]/service_down_time`.
    pub service_down_time: Duration,
    /// `[api]/max_limit`: the page size of lists when no limit is given and
    /// the cap of larger limits.
    pub max_limit: i64,
    /// `[drivers]/status_fault_limit`: the status polls of a cluster in
    /// progress that may fault in a row (the driver trapped, ran out of
    /// time, answered what the gate refused, or is shut off) before the
    /// operation is failed with the last fault as its reason.
    pub status_fault_limit: u32,
    /// `[drivers]/max_snapshot_kb` in bytes: the largest snapshot of
    /// watched objects `derive-status` is given.
    pub max_snapshot_bytes: usize,
}

impl Default for Settings {
    /// Magnum's defaults.
    fn default() -> Self {
        Settings {
            max_clusters_per_project: 20,
            kubernetes_allowed_network_drivers: vec!["all".into()],
            kubernetes_default_network_driver: "flannel".into(),
            service_down_time: Duration::from_secs(180),
            max_limit: 1000,
            status_fault_limit: 5,
            max_snapshot_bytes: 4096 << 10,
        }
    }
}

/// The certificates of clusters: where they are kept, the thread that
/// generates keys, and the `[x509]` options.
#[derive(Clone)]
pub struct Certificates {
    pub store: Arc<dyn Store>,
    pub keys: Arc<KeyGenerator>,
    pub x509: X509Options,
}

/// Magnum's driver selection of a new cluster template
/// (`Driver.get_driver` in `enforce_driver_supported`, then
/// `Driver.get_default_driver`): the driver host's registry, which the
/// composition root passes here too.
pub trait TemplateDrivers: Send + Sync {
    /// The driver name the template stores ([`Registry::resolve_template_driver`]).
    fn resolve_template_driver(&self, input: &TemplateDriverInput) -> Result<String, MagnumError>;
    /// The default driver's name ([`Registry::default_name`]).
    fn default_name(&self) -> Result<Option<String>, MagnumError>;
}

impl<D: Entry + Send + Sync> TemplateDrivers for Registry<D> {
    fn resolve_template_driver(&self, input: &TemplateDriverInput) -> Result<String, MagnumError> {
        Registry::resolve_template_driver(self, input)
    }

    fn default_name(&self) -> Result<Option<String>, MagnumError> {
        Ok(Registry::default_name(self)?.map(str::to_string))
    }
}

impl TemplateDrivers for DriverHost {
    fn resolve_template_driver(&self, input: &TemplateDriverInput) -> Result<String, MagnumError> {
        self.registry().resolve_template_driver(input)
    }

    fn default_name(&self) -> Result<Option<String>, MagnumError> {
        TemplateDrivers::default_name(self.registry())
    }
}

/// What a [`Conductor`] is built from (the composition root fills it).
#[derive(Clone)]
pub struct Parts {
    pub db: Db,
    pub drivers: Arc<DriverHost>,
    /// The selection of a new template's driver: `drivers` itself.
    pub template_drivers: Arc<dyn TemplateDrivers>,
    /// Glance, Nova and Neutron as the caller (`Static` in all-in-one).
    pub lookup: Arc<dyn Lookup>,
    pub certificates: Certificates,
    pub notifier: Notifier,
    pub settings: Settings,
    pub clock: Clock,
    pub new_uuid: NewUuid,
}

/// What the use cases keep while the process runs: the clusters with a
/// driver operation in flight (the status poller skips them), the
/// create-job pool, the lock row's state, the quota bounds and the status
/// polls that faulted in a row, by cluster.
#[derive(Default)]
pub(crate) struct Work {
    busy: Mutex<HashSet<String>>,
    status_faults: Mutex<std::collections::HashMap<String, u32>>,
    jobs: jobs::CreateJobs,
    /// Set once this process has seen the lock row.
    lock_row_seen: AtomicBool,
    quota: Mutex<lock_row::Bounds>,
    /// Rendered list answers, each valid under one change stamp.
    list_cache: list_cache::ListCache,
}

/// The conductor. Cheap to clone: every clone shares the same parts.
#[derive(Clone)]
pub struct Conductor {
    parts: Arc<Parts>,
    work: Arc<Work>,
}

impl Conductor {
    /// A copy of the parts, to build another conductor from (tests).
    #[cfg(any(test, feature = "testing"))]
    pub fn parts(&self) -> Parts {
        (*self.parts).clone()
    }

    /// The conductor over `parts`.
    pub fn new(parts: Parts) -> Conductor {
        Conductor {
            parts: Arc::new(parts),
            work: Arc::new(Work::default()),
        }
    }

    /// The current time of the clock.
    pub fn now(&self) -> NaiveDateTime {
        (self.parts.clock)()
    }

    /// A new resource UUID.
    pub fn new_uuid(&self) -> String {
        (self.parts.new_uuid)()
    }

    /// The database. Only the use cases reach it; the layers above call
    /// them (the tests of those layers, with the feature `testing`, may
    /// read and write rows directly).
    #[cfg(not(any(test, feature = "testing")))]
    pub(crate) fn db(&self) -> &Db {
        &self.parts.db
    }

    /// The database (tests).
    #[cfg(any(test, feature = "testing"))]
    pub fn db(&self) -> &Db {
        &self.parts.db
    }

    /// The connections open in each pool of the database: (pool, in use,
    /// idle), for the metrics.
    pub fn database_connections(&self) -> Vec<(&'static str, usize, usize)> {
        self.parts.db.connections()
    }

    /// The database's change stamp now: the sum of the counters every
    /// write to `cluster`, `nodegroup` or `cluster_template` raises
    /// (migration 3). `None` when it cannot be read; the list cache is then
    /// passed by.
    pub async fn change_stamp(&self) -> Option<i64> {
        self.parts.db.q().change_stamp().await.ok()
    }

    /// The process's cache of rendered list answers.
    pub fn list_cache(&self) -> &list_cache::ListCache {
        &self.work.list_cache
    }

    /// The driver host (registry and calls).
    pub fn drivers(&self) -> &DriverHost {
        &self.parts.drivers
    }

    /// The driver selection of new cluster templates.
    pub fn template_drivers(&self) -> &dyn TemplateDrivers {
        self.parts.template_drivers.as_ref()
    }

    /// Glance, Nova and Neutron lookups.
    pub fn lookup(&self) -> &dyn Lookup {
        self.parts.lookup.as_ref()
    }

    /// The certificate store, key generator and `[x509]` options.
    pub fn certificates(&self) -> &Certificates {
        &self.parts.certificates
    }

    /// The notifier of cluster operations.
    pub fn notifier(&self) -> &Notifier {
        &self.parts.notifier
    }

    /// The configuration values.
    pub fn settings(&self) -> &Settings {
        &self.parts.settings
    }
}

/// The wall clock, naive UTC.
pub fn wall_clock() -> Clock {
    Arc::new(|| chrono::Utc::now().naive_utc())
}

/// Random version 4 UUIDs.
pub fn random_uuids() -> NewUuid {
    Arc::new(|| uuid::Uuid::new_v4().to_string())
}
