//! A conductor for unit tests: a fresh database (SQLite by default; MariaDB
//! or PostgreSQL from `OKM_TEST_MYSQL_URL` / `OKM_TEST_POSTGRES_URL` with
//! [`Builder::dialect`]), the built-in fake driver (enabled), the
//! all-in-one OpenStack data, certificates in the database, a recording
//! notifier, a controllable clock and numbered UUIDs.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use chrono::{DateTime, NaiveDateTime};
use driver_host::{DriverHost, DriverSettings, HostServices};

use super::{Certificates, Conductor, Parts, Settings};
use crate::certs::{KeyGenerator, X509KeyPairStore, X509Options};
use crate::db::testing::{TestDb, fresh_with};
use crate::db::{self, Db, Dialect};
use crate::notify::{Notifier, Recorder, Sources};
use crate::openstack::Static;

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
