//! The persistence layer: it opens MariaDB (MySQL protocol), PostgreSQL or
//! SQLite databases holding Magnum's schema, migrates or adopts them, and
//! reads and writes Magnum's tables with hand-written SQL, one file per
//! table.
//!
//! The schema is Magnum 23.0.0's at Alembic head `b3e1cf4a2d5e`, kept
//! compatible so that Python Magnum can still open the database (rollback).
//! Rows are written the way Magnum writes them: naive UTC timestamps, JSON
//! columns as TEXT in Python's `json.dumps` form, client-side defaults
//! applied.
//!
//! Queries are written once, with `?` placeholders and double-quoted
//! identifiers, and bound with dialect-neutral values (`exec.rs`); every
//! difference between the three databases lives in `mysql.rs`,
//! `postgres.rs` or `sqlite.rs`. Writes that must be atomic go through
//! [`Db::in_tx`], the
//! only place that retries deadlocks, lock wait timeouts and serialisation
//! failures.

mod cluster_templates;
mod clusters;
mod clusters_list;
mod columns;
mod driver;
mod error;
mod exec;
mod federations;
mod magnum_services;
mod migrate;
mod mysql;
mod nodegroups;
mod nodegroups_list;
mod postgres;
mod queries;
mod quotas;
mod sqlite;
mod target;
mod tx;
mod x509keypairs;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::NaiveDateTime;

pub use cluster_templates::TemplateScope;
pub use clusters::ClusterFilter;
pub use clusters_list::ClusterView;
pub use error::{Error, Result, Retryable};
pub use migrate::{
    ALEMBIC_HEAD, Applied, Column, MAGNUM_TABLES, Report, SchemaVersion, VERSION_TABLE, adopt,
    check_schema, expected_columns, latest_version, live_columns, upgrade, version,
};
pub use nodegroups::NodeGroupFilter;
pub use queries::{ListOptions, Queries, Scope};
pub use quotas::QuotaFilter;
pub use target::{DbTarget, Dialect, PoolLimits, UNBOUNDED_POOL, pool_limits};
pub use tx::{Tx, TxFuture};

use exec::Pools;

/// What the database layer of this process has done, for the metrics:
/// counters from the start of the process, over every [`Db`] it opened.
struct Stats {
    /// Statements and transactions run again after a deadlock, a lock wait
    /// timeout, a serialisation failure or a busy SQLite database (Galera
    /// reports its certification conflicts as deadlocks).
    retries: AtomicU64,
    /// Connections taken from a pool for a transaction or a request's reads.
    acquisitions: AtomicU64,
    /// Nanoseconds spent waiting for them (for a transaction, until its
    /// `BEGIN` has answered).
    wait_ns: AtomicU64,
}

static STATS: Stats = Stats {
    retries: AtomicU64::new(0),
    acquisitions: AtomicU64::new(0),
    wait_ns: AtomicU64::new(0),
};

/// A reading of the process's database counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsReading {
    /// Retried statements and transactions.
    pub retries: u64,
    /// Pooled connections taken for transactions and readers.
    pub acquisitions: u64,
    /// Time spent waiting for them.
    pub wait: std::time::Duration,
}

/// The process's database counters.
pub fn stats() -> StatsReading {
    StatsReading {
        retries: STATS.retries.load(Ordering::Relaxed),
        acquisitions: STATS.acquisitions.load(Ordering::Relaxed),
        wait: std::time::Duration::from_nanos(STATS.wait_ns.load(Ordering::Relaxed)),
    }
}

/// Counts one acquisition that took `waited`.
fn count_acquisition(waited: std::time::Duration) {
    STATS.acquisitions.fetch_add(1, Ordering::Relaxed);
    STATS.wait_ns.fetch_add(
        u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
}

/// The clock that stamps `created_at` and `updated_at` (naive UTC).
pub type Clock = Arc<dyn Fn() -> NaiveDateTime + Send + Sync>;

/// Called before each retry of [`Db::in_tx`] with the attempt that failed
/// (1-based) and its error text, for the tests of one [`Db`]; the metrics
/// count every retry of the process in [`stats`].
pub type OnRetry = Arc<dyn Fn(u32, &str) + Send + Sync>;

/// What a [`Db`] is opened with besides its [`DbTarget`]: the clock and a
/// retry observer. The default is the wall clock and no observer.
#[derive(Clone, Default)]
pub struct Hooks {
    /// The clock for `created_at`/`updated_at`; `None` is `Utc::now()`.
    pub clock: Option<Clock>,
    /// Observer of [`Db::in_tx`] retries.
    pub on_retry: Option<OnRetry>,
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("clock", &self.clock.as_ref().map(|_| "<fn>"))
            .field("on_retry", &self.on_retry.as_ref().map(|_| "<fn>"))
            .finish()
    }
}

/// An open Magnum database: a cheap handle to the connection pool(s) that
/// every part of the process shares (clone it freely).
///
/// [`Db::q`] runs each statement on its own; [`Db::in_tx`] runs a function
/// in one transaction, retried on deadlocks.
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

struct Inner {
    pools: Pools,
    dialect: Dialect,
    clock: Clock,
    on_retry: Option<OnRetry>,
    max_attempts: u32,
    retry_backoff: std::time::Duration,
}

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("dialect", &self.inner.dialect)
            .finish_non_exhaustive()
    }
}

impl Db {
    /// Connects to the database of `target` and checks that it answers.
    /// Errors name the dialect, the host (or file) and the cause, never the
    /// password.
    pub async fn open(target: &DbTarget) -> Result<Db> {
        Db::open_with(target, Hooks::default()).await
    }

    /// [`Db::open`] with a clock and a retry observer.
    pub async fn open_with(target: &DbTarget, hooks: Hooks) -> Result<Db> {
        let pools = exec::open(target).await?;
        let clock = hooks
            .clock
            .unwrap_or_else(|| Arc::new(|| chrono::Utc::now().naive_utc()));
        Ok(Db {
            inner: Arc::new(Inner {
                pools,
                dialect: target.dialect,
                clock,
                on_retry: hooks.on_retry,
                max_attempts: target.max_attempts.max(1),
                retry_backoff: target.retry_backoff,
            }),
        })
    }

    /// The dialect of the database.
    pub fn dialect(&self) -> Dialect {
        self.inner.dialect
    }

    /// The repository methods, each statement on its own (no transaction).
    /// On SQLite files, reads use the read pool and writes the single
    /// writer connection: do not call this inside [`Db::in_tx`] for a
    /// write, it would wait for the connection the transaction holds.
    pub fn q(&self) -> Queries<'_> {
        Queries::new(exec::Target::Pool(&self.inner.pools), &self.inner.clock)
            .retrying(self.inner.max_attempts, self.inner.retry_backoff)
    }

    /// One pooled connection for several reads in a row (a cluster, its
    /// nodegroups and its template): the pool is acquired once instead of
    /// once per statement. Reads only, and every statement of the request
    /// through it: on an in-memory SQLite database it holds the one
    /// connection there is.
    pub async fn reader(&self) -> Result<Reader> {
        let conn = self
            .inner
            .pools
            .acquire_read()
            .await
            .map_err(|e| self.inner.dialect.err("acquire a connection", e))?;
        Ok(Reader {
            conn,
            clock: self.inner.clock.clone(),
        })
    }

    /// Closes the pools, waiting for connections in use to be returned.
    pub async fn close(&self) {
        self.inner.pools.close().await;
    }

    pub(crate) fn pools(&self) -> &Pools {
        &self.inner.pools
    }

    /// The connections open in each pool: (pool, in use, idle).
    pub fn connections(&self) -> Vec<(&'static str, usize, usize)> {
        self.inner.pools.connections()
    }

    /// The SQLite writer pool (`None` on the other dialects): the fuzz
    /// harness reads and puts back every row through it.
    #[cfg(any(test, feature = "fuzzing", feature = "testing"))]
    pub fn sqlite_writer(&self) -> Option<&sqlx::SqlitePool> {
        match &self.inner.pools {
            Pools::Sqlite { write, .. } => Some(write),
            _ => None,
        }
    }
}

/// A connection held for a request's reads ([`Db::reader`]); returned to
/// its pool when dropped.
pub struct Reader {
    conn: exec::PoolConn,
    clock: Clock,
}

impl Reader {
    /// The repository methods on the held connection.
    pub fn q(&mut self) -> Queries<'_> {
        Queries::new(exec::Target::Conn(&mut self.conn), &self.clock)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::testing::{Check, fresh};
    use super::*;
    use crate::exec::Kind;

    /// Go `TestOpenUnreachable`: the error names the dialect, the place and
    /// the cause, on one short line, without the password.
    #[tokio::test]
    async fn open_unreachable() {
        for (dialect, url, want) in [
            (
                Dialect::MySql,
                "mysql://magnum:s3cr3t-pw@127.0.0.1:1/magnum",
                &["mysql", "127.0.0.1:1", "refused"][..],
            ),
            (
                Dialect::Postgres,
                "postgres://magnum:s3cr3t-pw@127.0.0.1:1/magnum",
                &["postgres", "127.0.0.1:1", "refused"][..],
            ),
            (
                Dialect::Sqlite,
                "sqlite:///nonexistent-dir/x/magnum.db",
                &["sqlite", "/nonexistent-dir/x/magnum.db"][..],
            ),
            (
                Dialect::MySql,
                "postgres://magnum:s3cr3t-pw@127.0.0.1:1/magnum",
                &["does not start with mysql:", "***"][..],
            ),
        ] {
            let mut target = DbTarget::new(dialect, url);
            target.acquire_timeout = Duration::from_secs(3);
            let msg = match Db::open(&target).await {
                Ok(_) => panic!("{url}: open succeeded"),
                Err(e) => e.to_string(),
            };
            for w in want {
                assert!(msg.contains(w), "error {msg:?} does not mention {w:?}");
            }
            assert!(!msg.contains("s3cr3t"), "error {msg:?} leaks the password");
            assert!(msg.len() <= 300 && !msg.contains('\n'), "error {msg:?}");
        }
    }

    /// Go `TestOpenSQLiteMemory`: one connection, kept, so the database
    /// lives as long as the pool.
    #[tokio::test]
    async fn open_sqlite_memory() {
        let db = Db::open(&DbTarget::new(Dialect::Sqlite, "sqlite::memory:"))
            .await
            .check("open");
        upgrade(&db).await.check("upgrade");
        let n = db
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut c = super::testing::new_cluster(1, "p");
                    tx.q().create_cluster(&mut c).await?;
                    tx.q()
                        .count_clusters(&ClusterFilter::scope(Scope::ALL_PROJECTS))
                        .await
                })
            })
            .await
            .check("in_tx");
        assert_eq!(n, 1);
        let n = db
            .q()
            .count_clusters(&ClusterFilter::scope(Scope::ALL_PROJECTS))
            .await
            .check("count");
        assert_eq!(n, 1);
    }

    /// Go `TestSQLiteDSN`: the settings every SQLite file connection gets
    /// (WAL, NORMAL sync, the busy timeout, foreign keys), read back from a
    /// live connection of each pool.
    #[tokio::test]
    async fn sqlite_pragmas() {
        let db = fresh(Dialect::Sqlite).await;
        let pragma = async |name: &str| {
            let sql = format!("PRAGMA {name}");
            let kind = if name == "journal_mode" {
                Kind::Text
            } else {
                Kind::Int
            };
            let mut r = db
                .q()
                .rows("pragma", &sql, vec![], &[kind])
                .await
                .check(name);
            match kind {
                Kind::Text => r.string().check(name),
                _ => r.int64().check(name).unwrap_or(-1).to_string(),
            }
        };
        assert_eq!(pragma("journal_mode").await, "wal");
        assert_eq!(pragma("synchronous").await, "1");
        assert_eq!(pragma("busy_timeout").await, "5000");
        assert_eq!(pragma("foreign_keys").await, "1");
        // The writer connection too (a write runs there).
        upgrade(&db).await.check("upgrade");
        let mut tx_mode = String::new();
        db.in_tx(|tx| {
            Box::pin(async move {
                let mut r = tx
                    .q()
                    .rows("pragma", "PRAGMA journal_mode", vec![], &[Kind::Text])
                    .await?;
                r.string()
            })
        })
        .await
        .map(|m| tx_mode = m)
        .check("in_tx");
        assert_eq!(tx_mode, "wal");
    }
}
