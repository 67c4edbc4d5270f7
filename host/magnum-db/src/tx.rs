//! The one way to run a transaction: run a function in a transaction, and
//! run it again when the database aborted it for a deadlock, a lock wait
//! timeout, a serialisation failure or a busy SQLite database.

use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::marker::PhantomData;
use std::pin::Pin;
use std::time::Duration;

use super::exec::{Target, TxConn};
use super::{Clock, Db, Dialect, Error, Queries, Retryable};

/// The future of the function given to [`Db::in_tx`]: `Box::pin(async move
/// { … })`.
pub type TxFuture<'t, T> = Pin<Box<dyn Future<Output = T> + Send + 't>>;

/// A transaction handed to the function given to [`Db::in_tx`].
///
/// The lifetime is that of the `in_tx` call: a `&'t mut Tx<'a>` is only
/// well-formed when `'a` outlives `'t`, which lets the function's future
/// borrow what the caller's scope owns.
pub struct Tx<'a> {
    conn: TxConn,
    clock: Clock,
    dialect: Dialect,
    _scope: PhantomData<&'a ()>,
}

impl Tx<'_> {
    /// The repository methods inside the transaction.
    pub fn q(&mut self) -> Queries<'_> {
        Queries::new(Target::Tx(&mut self.conn), &self.clock)
    }

    /// The repository methods with row locks: reads add `FOR UPDATE` on
    /// MariaDB and PostgreSQL. On SQLite the transaction already holds the
    /// database's write lock (BEGIN IMMEDIATE), so reads are plain.
    pub fn for_update(&mut self) -> Queries<'_> {
        self.q().locked()
    }

    /// The dialect of the database.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }
}

impl Db {
    /// Runs `f` in a transaction and commits it. When `f` or the commit
    /// fails with a retryable error (a deadlock, a lock wait timeout, a
    /// serialisation failure, a busy SQLite database), the transaction is
    /// rolled back and `f` runs again from the start, at most
    /// [`super::DbTarget::max_attempts`] times with a growing, jittered
    /// backoff. `f` must therefore have no effects outside the transaction
    /// (it returns what it computed instead of writing to captured state).
    /// Any other error rolls back and is returned as it is. Besides this,
    /// only a write that is a statement of its own ([`super::Db::q`]) is
    /// retried, with the same [`Attempts`].
    ///
    /// ```no_run
    /// # use magnum_db::{Db, Error, NodeGroupFilter, Scope};
    /// # async fn example(db: &Db, uuid: &str) -> Result<i64, Error> {
    /// let n = db
    ///     .in_tx(|tx| {
    ///         Box::pin(async move {
    ///             let all = Scope::ALL_PROJECTS;
    ///             let c = tx.for_update().get_cluster_by_uuid(uuid, &all).await?;
    ///             tx.q().count_nodegroups(&NodeGroupFilter::cluster(&c.uuid)).await
    ///         })
    ///     })
    ///     .await?;
    /// # Ok(n)
    /// # }
    /// ```
    pub async fn in_tx<'a, T, E, F>(&'a self, mut f: F) -> Result<T, E>
    where
        F: for<'t> FnMut(&'t mut Tx<'a>) -> TxFuture<'t, Result<T, E>> + Send + 'a,
        E: From<Error> + Retryable + fmt::Display,
    {
        let mut attempts = Attempts::new(self.inner.max_attempts, self.inner.retry_backoff);
        loop {
            match self.run_tx(&mut f).await {
                Err(e) if attempts.retries(&e) => {
                    if let Some(on_retry) = &self.inner.on_retry {
                        on_retry(attempts.number(), &e.to_string());
                    }
                    tracing::debug!(attempt = attempts.number(), error = %e, "retrying a database transaction");
                    attempts.wait().await;
                }
                other => return other,
            }
        }
    }

    async fn run_tx<'a, T, E, F>(&'a self, f: &mut F) -> Result<T, E>
    where
        F: for<'t> FnMut(&'t mut Tx<'a>) -> TxFuture<'t, Result<T, E>>,
        E: From<Error>,
    {
        let d = self.inner.dialect;
        let conn = self
            .pools()
            .begin()
            .await
            .map_err(|e| E::from(d.err("begin transaction", e)))?;
        let mut tx = Tx {
            conn,
            clock: self.inner.clock.clone(),
            dialect: d,
            _scope: PhantomData,
        };
        // A panic in `f` drops the transaction, which rolls it back.
        let r = f(&mut tx).await;
        match r {
            Ok(v) => {
                tx.conn
                    .commit()
                    .await
                    .map_err(|e| E::from(d.err("commit", e)))?;
                Ok(v)
            }
            Err(e) => {
                if let Err(rb) = tx.conn.rollback().await {
                    tracing::warn!(error = %rb, "rollback of a failed transaction failed");
                }
                Err(e)
            }
        }
    }
}

/// The attempts of a database operation that is run again on a retryable
/// error: a transaction of [`Db::in_tx`], a statement of its own of
/// [`super::Db::q`]. At most `max` attempts, with a jittered wait before
/// each next one that doubles from `backoff`.
pub(super) struct Attempts {
    number: u32,
    max: u32,
    backoff: Duration,
}

impl Attempts {
    pub(super) fn new(max: u32, backoff: Duration) -> Attempts {
        Attempts {
            number: 1,
            max,
            backoff,
        }
    }

    /// The number of the attempt under way (1, 2, …).
    pub(super) fn number(&self) -> u32 {
        self.number
    }

    /// Whether this attempt is the last one allowed.
    pub(super) fn last(&self) -> bool {
        self.number >= self.max
    }

    /// Whether the attempt that failed with `e` is followed by another.
    pub(super) fn retries(&self, e: &impl Retryable) -> bool {
        e.is_retryable() && !self.last()
    }

    /// Waits before the next attempt, which it counts (and the process's
    /// [`super::Stats`]).
    pub(super) async fn wait(&mut self) {
        super::STATS
            .retries
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tokio::time::sleep(jitter(self.backoff)).await;
        self.backoff = self.backoff.saturating_mul(2);
        self.number += 1;
    }
}

/// A wait between `backoff / 2` and `backoff`.
fn jitter(backoff: Duration) -> Duration {
    let half = backoff / 2;
    let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
    let r = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    half + Duration::from_nanos(if nanos == 0 { 0 } else { r % (nanos + 1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_in_range() {
        for ms in [0, 1, 20, 1000] {
            let b = Duration::from_millis(ms);
            for _ in 0..100 {
                let j = jitter(b);
                assert!(j >= b / 2 && j <= b, "{j:?} for {b:?}");
            }
        }
    }

    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use magnum_domain::Status;
    use magnum_domain::models::Quota;

    use crate::testing::{Check, dialect_tests, fresh_with, migrated, new_cluster};
    use crate::{ClusterFilter, Hooks, Scope, upgrade};

    /// A statement of its own that finds the database locked by another
    /// connection is run again until the lock is gone: the writes of
    /// [`Db::q`] ride out a deadlock or lock wait as a transaction of
    /// [`Db::in_tx`] does. Within a transaction the statement is not
    /// repeated: the transaction is, as a whole.
    #[tokio::test]
    async fn a_statement_of_its_own_is_retried_while_the_database_is_locked() {
        use sqlx::Connection;
        let dir = tempfile::tempdir().check("temporary directory");
        let path = dir.path().join("retry.db");
        let mut target =
            crate::DbTarget::new(Dialect::Sqlite, format!("sqlite://{}", path.display()));
        target.sqlite_busy_timeout = Duration::from_millis(10);
        target.retry_backoff = Duration::from_millis(40);
        target.max_attempts = 6;
        let db = Db::open(&target).await.check("open");
        upgrade(&db).await.check("upgrade");
        let mut c = new_cluster(1, "p1");
        db.q().create_cluster(&mut c).await.check("create");

        // Another connection to the file, holding its write lock.
        let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(&path);
        let locked = || async {
            let mut other = sqlx::SqliteConnection::connect_with(&opts)
                .await
                .check("connect");
            sqlx::query("BEGIN IMMEDIATE")
                .execute(&mut other)
                .await
                .check("lock");
            other
        };

        // The lock held for 150 ms.
        let mut other = locked().await;
        let holder = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            sqlx::query("COMMIT")
                .execute(&mut other)
                .await
                .check("unlock");
        });
        db.q()
            .set_cluster_status(&c.uuid, Status::DeleteInProgress, None)
            .await
            .check("a retried statement");
        holder.await.check("holder");
        let row = db
            .q()
            .get_cluster_by_uuid(&c.uuid, &Scope::ALL_PROJECTS)
            .await
            .check("read");
        assert_eq!(row.status, Some(Status::DeleteInProgress));

        // The same lock held throughout, against a transaction: the
        // transaction is what is attempted again, and when the lock outlasts
        // its attempts the error is the database's, still retryable.
        let mut other = locked().await;
        let r = db
            .in_tx(|tx| {
                let uuid = c.uuid.clone();
                Box::pin(async move {
                    tx.q()
                        .set_cluster_status(&uuid, Status::DeleteFailed, None)
                        .await
                })
            })
            .await;
        assert!(r.as_ref().is_err_and(|e| e.is_retryable()), "{r:?}");
        sqlx::query("ROLLBACK")
            .execute(&mut other)
            .await
            .check("unlock");
    }

    /// An error of the function given to `in_tx`: the database's, or one of
    /// the test's own.
    #[derive(Debug)]
    enum TestError {
        Db(Error),
        Boom,
        Deadlock,
    }

    impl From<Error> for TestError {
        fn from(e: Error) -> TestError {
            TestError::Db(e)
        }
    }

    impl Retryable for TestError {
        fn is_retryable(&self) -> bool {
            match self {
                TestError::Db(e) => e.is_retryable(),
                TestError::Boom => false,
                TestError::Deadlock => true,
            }
        }
    }

    impl fmt::Display for TestError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TestError::Db(e) => e.fmt(f),
                TestError::Boom => f.write_str("boom"),
                TestError::Deadlock => f.write_str("synthetic deadlock"),
            }
        }
    }

    dialect_tests!(in_tx_rolls_back_on_error);

    // SQLite serialises writers (BEGIN IMMEDIATE): it cannot deadlock.
    mod in_tx_retries_deadlock {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn mysql() {
            if crate::testing::available(crate::Dialect::MySql) {
                super::in_tx_retries_deadlock(crate::Dialect::MySql).await
            }
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn postgres() {
            if crate::testing::available(crate::Dialect::Postgres) {
                super::in_tx_retries_deadlock(crate::Dialect::Postgres).await
            }
        }
    }

    /// Go `TestInTxRollsBackOnError`.
    async fn in_tx_rolls_back_on_error(d: Dialect) {
        let db = migrated(d).await;
        let r: Result<(), TestError> = db
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut q = Quota {
                        project_id: "p".into(),
                        resource: "Cluster".into(),
                        hard_limit: 1,
                        ..Quota::default()
                    };
                    tx.q().create_quota(&mut q).await?;
                    Err(TestError::Boom)
                })
            })
            .await;
        assert!(matches!(r, Err(TestError::Boom)), "{r:?}");
        let got = db.q().get_quota("p", "Cluster").await;
        assert!(
            matches!(got, Err(Error::NotFound(_))),
            "row of a rolled back transaction: {got:?}"
        );
    }

    /// Go `TestInTxRetriesDeadlock`: a real deadlock. Two transactions lock
    /// two rows in opposite order; the database kills one, `in_tx` runs it
    /// again, and both transactions' writes end up committed.
    async fn in_tx_retries_deadlock(d: Dialect) {
        let retries = Arc::new(AtomicU32::new(0));
        let last = Arc::new(std::sync::Mutex::new(String::new()));
        let hooks = Hooks {
            clock: None,
            on_retry: Some({
                let retries = retries.clone();
                let last = last.clone();
                Arc::new(move |_, e: &str| {
                    retries.fetch_add(1, Ordering::SeqCst);
                    if let Ok(mut l) = last.lock() {
                        *l = e.to_string();
                    }
                })
            }),
        };
        let db = fresh_with(d, hooks, |t| t.retry_backoff = Duration::from_millis(5)).await;
        upgrade(&db).await.check("upgrade");
        let (mut a, mut b) = (new_cluster(1, "p"), new_cluster(2, "p"));
        db.q().create_cluster(&mut a).await.check("create a");
        db.q().create_cluster(&mut b).await.check("create b");
        // Each transaction locks its first row, waits until the other has
        // locked its own (the retry finds the flag already up), then takes
        // the other.
        let (tx0, rx0) = tokio::sync::watch::channel(false);
        let (tx1, rx1) = tokio::sync::watch::channel(false);
        let run = |first: String,
                   second: String,
                   status: Status,
                   me: tokio::sync::watch::Sender<bool>,
                   other: tokio::sync::watch::Receiver<bool>| {
            let db = db.db.clone();
            tokio::spawn(async move {
                let (first, second, me, other) = (&first, &second, &me, &other);
                db.in_tx(|tx| {
                    Box::pin(async move {
                        let all = Scope::ALL_PROJECTS;
                        let mut c1 = tx.for_update().get_cluster_by_uuid(first, &all).await?;
                        c1.status_reason = Some(format!("locked by {status}"));
                        tx.q().update_cluster(&mut c1, &["status_reason"]).await?;
                        me.send_replace(true);
                        let mut other = other.clone();
                        let waited = matches!(
                            tokio::time::timeout(Duration::from_secs(30), other.wait_for(|up| *up))
                                .await,
                            Ok(Ok(_))
                        );
                        if !waited {
                            return Err(Error::Schema("the other transaction never locked".into()));
                        }
                        let mut c2 = tx.for_update().get_cluster_by_uuid(second, &all).await?;
                        c2.status = Some(status);
                        tx.q().update_cluster(&mut c2, &["status"]).await
                    })
                })
                .await
            })
        };
        let h0 = run(
            a.uuid.clone(),
            b.uuid.clone(),
            Status::UpdateComplete,
            tx0,
            rx1,
        );
        let h1 = run(
            b.uuid.clone(),
            a.uuid.clone(),
            Status::UpdateFailed,
            tx1,
            rx0,
        );
        for h in [h0, h1] {
            h.await.check("join").check("in_tx");
        }
        assert!(
            retries.load(Ordering::SeqCst) >= 1,
            "no transaction was retried: the deadlock did not happen"
        );
        let msg = last.lock().map(|l| l.clone()).unwrap_or_default();
        assert!(
            msg.contains("1213") || msg.contains("40P01"),
            "retried error = {msg:?}"
        );
        let all = Scope::ALL_PROJECTS;
        let ga = db
            .q()
            .get_cluster_by_uuid(&a.uuid, &all)
            .await
            .check("get a");
        let gb = db
            .q()
            .get_cluster_by_uuid(&b.uuid, &all)
            .await
            .check("get b");
        assert_eq!(
            (ga.status, gb.status),
            (Some(Status::UpdateFailed), Some(Status::UpdateComplete))
        );
    }

    /// Go `TestInTxGivesUpAfterMaxAttempts`.
    #[tokio::test]
    async fn in_tx_gives_up_after_max_attempts() {
        let retries = Arc::new(AtomicU32::new(0));
        let hooks = Hooks {
            clock: None,
            on_retry: Some({
                let retries = retries.clone();
                Arc::new(move |_, _: &str| {
                    retries.fetch_add(1, Ordering::SeqCst);
                })
            }),
        };
        let db = fresh_with(Dialect::Sqlite, hooks, |t| {
            t.max_attempts = 3;
            t.retry_backoff = Duration::from_millis(1);
        })
        .await;
        let calls = &AtomicU32::new(0);
        let r: Result<(), TestError> = db
            .in_tx(|_| {
                Box::pin(async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Err(TestError::Deadlock)
                })
            })
            .await;
        assert!(matches!(r, Err(TestError::Deadlock)), "{r:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(retries.load(Ordering::SeqCst), 2);
        // An error that is not retryable is returned at once.
        let calls = &AtomicU32::new(0);
        let r: Result<(), TestError> = db
            .in_tx(|_| {
                Box::pin(async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Err(TestError::Boom)
                })
            })
            .await;
        assert!(matches!(r, Err(TestError::Boom)));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    /// Go `TestSQLiteConcurrentWriters`: many tasks write at once; the
    /// single writer connection and BEGIN IMMEDIATE serialise them without
    /// errors.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_concurrent_writers() {
        let db = migrated(Dialect::Sqlite).await;
        let mut tasks = Vec::new();
        for i in 0..20 {
            let db = db.db.clone();
            tasks.push(tokio::spawn(async move {
                db.in_tx(|tx| {
                    Box::pin(async move {
                        let n = tx
                            .q()
                            .count_clusters(&ClusterFilter::scope(Scope::ALL_PROJECTS))
                            .await?;
                        let mut c = new_cluster(i + 1, "p");
                        c.create_timeout = Some(i32::try_from(n).unwrap_or(-1));
                        tx.q().create_cluster(&mut c).await
                    })
                })
                .await
            }));
        }
        for t in tasks {
            t.await.check("join").check("in_tx");
        }
        let n = db
            .q()
            .count_clusters(&ClusterFilter::scope(Scope::ALL_PROJECTS))
            .await
            .check("count");
        assert_eq!(n, 20);
        // Each transaction saw the writes of those before it: the counts
        // are 0..19, each once.
        let rows = db
            .q()
            .list_clusters(
                &ClusterFilter::scope(Scope::ALL_PROJECTS),
                &Default::default(),
            )
            .await
            .check("list");
        let mut seen: Vec<i32> = rows.iter().filter_map(|c| c.create_timeout).collect();
        seen.sort();
        assert_eq!(seen, (0..20).collect::<Vec<_>>());
    }
}
