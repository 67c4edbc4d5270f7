//! A conductor for unit tests: a fresh database (SQLite by default; MariaDB
//! or PostgreSQL from `OKM_TEST_MYSQL_URL` / `OKM_TEST_POSTGRES_URL` with
//! [`Builder::dialect`]), the built-in fake driver (enabled), the
//! all-in-one OpenStack data, certificates in the database, a recording
//! notifier, a controllable clock and numbered UUIDs.

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, NaiveDateTime};
use driver_host::{DriverHost, DriverSettings, HostServices};
use futures::future::BoxFuture;
use magnum_domain::models::{Cluster, ClusterTemplate, Quota, StringMap};
use magnum_domain::validation::QUOTA_RESOURCE_CLUSTER;
use magnum_domain::{RequestContext, Status};

use super::{Certificates, ClusterCreate, Conductor, Error, Parts, Settings};
use crate::certs::{
    KeyGenerator, KeyPair, Owner, Store, StoreError, X509KeyPairStore, X509Options,
};
use crate::db::testing::{TestDb, fresh_with, string_map};
use crate::db::{self, ClusterFilter, Db, Dialect, ListOptions, NodeGroupFilter, Scope};
use crate::notify::{Notification, Notifier, Recorder, Sources};
use crate::openstack::{STATIC_IMAGE_NAME, Static};

/// The fixture: the conductor and handles on what it was built from.
pub struct TestConductor {
    pub conductor: Conductor,
    pub db: Db,
    /// Seconds since the Unix epoch of the clock; move it with
    /// [`TestConductor::advance`].
    pub seconds: Arc<AtomicI64>,
    pub notifications: Recorder,
    _db: TestDb,
}

/// 2026-11-30T12:00:00Z, the clock's start.
pub const START: i64 = 1_796_040_000;

type Tweak = Box<dyn FnOnce(&mut Parts) + Send>;

/// How a [`TestConductor`] is built.
pub struct Builder {
    dialect: Dialect,
    drivers: DriverSettings,
    tweaks: Vec<Tweak>,
}

impl Builder {
    /// The database: SQLite (the default), MariaDB or PostgreSQL.
    pub fn dialect(mut self, d: Dialect) -> Builder {
        self.dialect = d;
        self
    }

    /// Changes the driver host's settings (the fake driver is enabled).
    pub fn drivers(mut self, f: impl FnOnce(&mut DriverSettings)) -> Builder {
        f(&mut self.drivers);
        self
    }

    /// Changes the parts before the conductor is built (settings, lookup,
    /// certificate store, `[x509]` options…).
    pub fn parts(mut self, f: impl FnOnce(&mut Parts) + Send + 'static) -> Builder {
        self.tweaks.push(Box::new(f));
        self
    }

    /// The fixture.
    pub async fn build(self) -> TestConductor {
        let seconds = Arc::new(AtomicI64::new(START));
        let s = seconds.clone();
        let clock: super::Clock = Arc::new(move || {
            DateTime::from_timestamp(s.load(Ordering::SeqCst), 0)
                .map(|t| t.naive_utc())
                .unwrap_or_default()
        });
        // The rows' created_at and updated_at follow the same clock.
        let hooks = db::Hooks {
            clock: Some(clock.clone()),
            on_retry: None,
        };
        // Concurrent creates contend for the lock row: deadlocks and lock
        // waits are retried.
        let test_db = fresh_with(self.dialect, hooks, |t| t.max_attempts = 50).await;
        let db = test_db.db.clone();
        db::upgrade(&db).await.expect("migrate");
        let drivers = Arc::new(
            DriverHost::start(self.drivers, HostServices::default())
                .await
                .expect("the built-in drivers load"),
        );
        let counter = Arc::new(AtomicU64::new(0));
        let new_uuid: super::NewUuid = Arc::new(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            format!("00000000-0000-4000-8000-{n:012x}")
        });
        let (notifier, notifications): (Notifier, Recorder) =
            Notifier::recording("container-infra.test", Sources::default());
        let certificates = Certificates {
            store: Arc::new(X509KeyPairStore::new(Arc::new(db.clone()))),
            keys: Arc::new(KeyGenerator::start(2).expect("key generator")),
            x509: X509Options::default(),
        };
        let mut parts = Parts {
            db: db.clone(),
            template_drivers: drivers.clone(),
            drivers,
            lookup: Arc::new(Static::new(true)),
            certificates,
            notifier,
            settings: Settings::default(),
            clock,
            new_uuid,
        };
        for t in self.tweaks {
            t(&mut parts);
        }
        TestConductor {
            conductor: Conductor::new(parts),
            db,
            seconds,
            notifications,
            _db: test_db,
        }
    }
}

impl TestConductor {
    /// A conductor with Magnum's default settings.
    pub async fn new() -> TestConductor {
        TestConductor::builder().build().await
    }

    /// A conductor with `settings`.
    pub async fn with_settings(settings: Settings) -> TestConductor {
        TestConductor::builder()
            .parts(move |p| p.settings = settings)
            .build()
            .await
    }

    /// A builder of the fixture, on SQLite with the fake driver enabled.
    pub fn builder() -> Builder {
        Builder {
            dialect: Dialect::Sqlite,
            drivers: DriverSettings {
                enabled_beta_drivers: vec!["fake".into()],
                precompiled_cache_dir: test_support::compiled_drivers_dir(),
                ..DriverSettings::default()
            },
            tweaks: Vec::new(),
        }
    }

    /// Moves the clock on by `secs`.
    pub fn advance(&self, secs: i64) {
        self.seconds.fetch_add(secs, Ordering::SeqCst);
    }

    /// The clock's current time.
    pub fn now(&self) -> NaiveDateTime {
        self.conductor.now()
    }

    /// Stores cluster c1 ([`CLUSTER_UUID`]) of p1 and u1 as a bare row: no
    /// template, nodegroups or status.
    pub async fn add_cluster(&self) -> Cluster {
        let mut cl = Cluster {
            uuid: CLUSTER_UUID.into(),
            name: "c1".into(),
            project_id: "p1".into(),
            user_id: "u1".into(),
            ..Cluster::default()
        };
        self.db.q().create_cluster(&mut cl).await.expect("cluster");
        cl
    }
}

/// The uuid of the cluster [`TestConductor::add_cluster`] stores.
pub const CLUSTER_UUID: &str = "c1000000-0000-4000-8000-000000000001";

pub const TEMPLATE_UUID: &str = "e74c40e0-d825-11e2-a28f-0800200c9a66";

/// A conductor over a migrated database and the fake driver, with one
/// template of project p1.
pub struct Env {
    pub t: TestConductor,
    pub tmpl: ClusterTemplate,
}

impl Env {
    /// Small keys: the tests are about rows and ordering, not key
    /// strength.
    pub async fn new(d: Dialect) -> Env {
        let t = TestConductor::builder()
            .dialect(d)
            .parts(|p| p.certificates.x509.rsa_key_size = 1024)
            .build()
            .await;
        Env::with(t).await
    }

    pub async fn with(t: TestConductor) -> Env {
        let s = |v: &str| Some(v.to_string());
        let mut tmpl = ClusterTemplate {
            external_network_id: s("public"),
            network_driver: s("flannel"),
            labels: Some(StringMap::from([("kube_tag".into(), "v1.30.0".into())])),
            master_lb_enabled: Some(true),
            floating_ip_enabled: Some(true),
            tls_disabled: Some(false),
            registry_enabled: Some(false),
            ..fake_template(TEMPLATE_UUID, "tmpl")
        };
        t.db.q()
            .create_cluster_template(&mut tmpl)
            .await
            .expect("create template");
        Env { t, tmpl }
    }

    pub fn c(&self) -> &Conductor {
        &self.t.conductor
    }

    pub fn db(&self) -> &Db {
        &self.t.db
    }

    /// A cluster of the template for `project`, through `c`.
    pub async fn create_with(&self, c: &Conductor, project: &str) -> Result<Cluster, Error> {
        c.create_cluster(&caller(project), self.input()).await
    }

    pub async fn create(&self, project: &str) -> Cluster {
        self.create_with(self.c(), project)
            .await
            .expect("create cluster")
    }

    /// The create of a cluster by a member of p1.
    pub async fn create_from(&self, input: ClusterCreate) -> Result<Cluster, Error> {
        self.c().create_cluster(&caller("p1"), input).await
    }

    /// [`Env::input`] with `labels` merged into the template's.
    pub fn labelled(&self, labels: &[(&str, &str)]) -> ClusterCreate {
        ClusterCreate {
            labels: Some(string_map(labels)),
            merge_labels: true,
            ..self.input()
        }
    }

    /// A create of one master and one worker of the template.
    pub fn input(&self) -> ClusterCreate {
        ClusterCreate {
            template: self.tmpl.clone(),
            master_count: 1,
            node_count: 1,
            create_timeout: 60,
            ..ClusterCreate::default()
        }
    }

    pub async fn row(&self, uuid: &str) -> Option<Cluster> {
        match self
            .db()
            .q()
            .get_cluster_by_uuid(uuid, &Scope::ALL_PROJECTS)
            .await
        {
            Ok(c) => Some(c),
            Err(e) if e.is_not_found() => None,
            Err(e) => panic!("read cluster: {e}"),
        }
    }

    /// The status of the cluster, `None` when it is gone.
    pub async fn status(&self, uuid: &str) -> Option<Status> {
        self.row(uuid).await.and_then(|c| c.status)
    }

    /// Sets the status of the cluster in its row, as another request
    /// would.
    pub async fn set_status(&self, uuid: &str, status: Status) {
        self.db()
            .q()
            .set_cluster_status(uuid, status, None)
            .await
            .expect("status");
    }

    /// Polls the cluster, which must be in progress.
    pub async fn poll(&self, uuid: &str) -> Cluster {
        self.c()
            .poll_cluster(uuid)
            .await
            .expect("poll")
            .expect("polled")
    }

    /// The notifications sent since the last call, as
    /// `"<event type> <outcome>"`.
    pub fn events(&self) -> Vec<String> {
        outcomes(&self.t.notifications.take())
    }

    pub async fn count(&self, scope: Scope) -> i64 {
        self.db()
            .q()
            .count_clusters(&ClusterFilter::scope(scope))
            .await
            .expect("count")
    }

    pub async fn nodegroups(&self, uuid: &str) -> Vec<magnum_domain::models::NodeGroup> {
        self.db()
            .q()
            .list_nodegroups(&NodeGroupFilter::cluster(uuid), &ListOptions::default())
            .await
            .expect("nodegroups")
    }

    pub async fn set_quota(&self, project: &str, limit: i32) {
        let mut q = self.db().q();
        match q.get_quota(project, QUOTA_RESOURCE_CLUSTER).await {
            Ok(mut row) => {
                row.hard_limit = limit;
                q.update_quota(&mut row, &["hard_limit"])
                    .await
                    .expect("quota");
            }
            Err(_) => {
                let mut row = Quota {
                    project_id: project.into(),
                    resource: QUOTA_RESOURCE_CLUSTER.into(),
                    hard_limit: limit,
                    ..Quota::default()
                };
                q.create_quota(&mut row).await.expect("quota");
            }
        }
    }

    /// Creates a cluster of p1, deletes it and polls it: the cluster as the
    /// poll returns it (DELETE_COMPLETE, not written).
    pub async fn deleted_and_polled(&self) -> Cluster {
        let cl = self.create("p1").await;
        self.c()
            .delete_cluster(&caller("p1"), &cl)
            .await
            .expect("delete");
        let polled = self.poll(&cl.uuid).await;
        assert_eq!(polled.status, Some(Status::DeleteComplete));
        polled
    }
}

/// Notifications as `"<event type> <outcome>"`.
pub fn outcomes(sent: &[Notification]) -> Vec<String> {
    sent.iter()
        .map(|n| {
            format!(
                "{} {}",
                n.event_type,
                n.payload["outcome"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// A private Kubernetes template of p1 (user u1) for the fake driver, with
/// the all-in-one image and the m1.small flavor for every node.
pub fn fake_template(uuid: &str, name: &str) -> ClusterTemplate {
    let s = |v: &str| Some(v.to_string());
    ClusterTemplate {
        uuid: uuid.into(),
        name: name.into(),
        project_id: "p1".into(),
        user_id: "u1".into(),
        image_id: s(STATIC_IMAGE_NAME),
        flavor_id: s("m1.small"),
        master_flavor_id: s("m1.small"),
        coe: s("kubernetes"),
        server_type: s("vm"),
        cluster_distro: s("ubuntu"),
        driver: s("fake"),
        public: Some(false),
        hidden: Some(false),
        ..ClusterTemplate::default()
    }
}

/// A member of `project`.
pub fn caller(project: &str) -> RequestContext {
    RequestContext {
        project_id: project.into(),
        user_id: format!("u-{project}"),
        roles: vec!["member".into()],
        ..RequestContext::default()
    }
}

/// The client error of `r`, as (status, message).
pub fn client<T: std::fmt::Debug>(r: Result<T, Error>) -> (u16, String) {
    match r {
        Err(Error::Client(e)) => (e.status, e.message),
        other => panic!("want a client error, got {other:?}"),
    }
}

/// A certificate store whose deletes of the references in `failing` fail.
pub struct FailingDeletes {
    pub inner: X509KeyPairStore,
    pub failing: Mutex<HashSet<String>>,
}

impl FailingDeletes {
    /// An [`Env`] whose certificates are in a [`FailingDeletes`] store over
    /// its database, and that store (nothing failing yet).
    pub async fn env() -> (Env, Arc<FailingDeletes>) {
        let store: Arc<Mutex<Option<Arc<FailingDeletes>>>> = Arc::default();
        let s = store.clone();
        let t = TestConductor::builder()
            .parts(move |p| {
                let f = Arc::new(FailingDeletes {
                    inner: X509KeyPairStore::new(Arc::new(p.db.clone())),
                    failing: Mutex::default(),
                });
                p.certificates.store = f.clone();
                if let Ok(mut s) = s.lock() {
                    *s = Some(f);
                }
            })
            .build()
            .await;
        let env = Env::with(t).await;
        let failing = store.lock().expect("lock").clone().expect("store");
        (env, failing)
    }

    /// Makes the deletes of `reference` fail.
    pub fn fail(&self, reference: &str) {
        self.failing
            .lock()
            .expect("lock")
            .insert(reference.to_string());
    }

    /// Makes every delete succeed again.
    pub fn heal(&self) {
        self.failing.lock().expect("lock").clear();
    }
}

impl Store for FailingDeletes {
    fn put<'a>(
        &'a self,
        owner: Owner<'a>,
        kp: &'a KeyPair,
        name: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        self.inner.put(owner, kp, name)
    }

    fn get<'a>(&'a self, reference: &'a str) -> BoxFuture<'a, Result<KeyPair, StoreError>> {
        self.inner.get(reference)
    }

    fn delete<'a>(&'a self, reference: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        let fail = self
            .failing
            .lock()
            .map(|f| f.contains(reference))
            .unwrap_or(false);
        if fail {
            return Box::pin(async { Err(StoreError::Backend("certificate store down".into())) });
        }
        self.inner.delete(reference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_fixture_has_a_migrated_database_a_clock_uuids_and_no_notification() {
        let t = TestConductor::new().await;
        assert_eq!(db::version(&t.db).await.unwrap().ours, db::latest_version());
        let start = t.now();
        t.advance(90);
        assert_eq!((t.now() - start).num_seconds(), 90);
        assert_eq!(
            t.conductor.new_uuid(),
            "00000000-0000-4000-8000-000000000001"
        );
        assert_eq!(
            t.conductor.new_uuid(),
            "00000000-0000-4000-8000-000000000002"
        );
        assert!(t.notifications.all().is_empty());
        assert!(t.conductor.drivers().registry().names().contains(&"fake"));
    }
}
