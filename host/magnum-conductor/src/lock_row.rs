//! The cluster lock row: one `magnum_service` row that serialises the
//! cluster quota check with the insert of a new cluster and holds the
//! reconciler's lease. It needs no migration and is the same on every
//! dialect; `GET /v1/mservices` leaves it out.
//!
//! Its `report_count` goes up with every cluster create and every lease
//! renewal, `disabled_reason` names the lease holder and `last_seen_up` is
//! the last renewal.
//!
//! Counting a project's clusters reads all of them, once per create, while
//! the lock is held. [`Bounds`] spares most of those counts: every create
//! bumps the lock row's `report_count` in its transaction. A process
//! remembers, per project, an upper bound of the project's clusters and the
//! `report_count` its last create wrote. When a create finds the lock row
//! still at that value, no other create has committed since (in any
//! process): the project has at most the remembered number of clusters
//! (deletions only lower it), and while that bound is below the limit no
//! count is needed. Any other value, an unknown project, or a bound at the
//! limit means an exact count. This relies on every cluster row being
//! inserted by [`Conductor::create_cluster`]: Python Magnum must not create
//! clusters in the same database meanwhile (it is stopped during a
//! takeover).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use magnum_domain::models::MagnumService;
use magnum_domain::validation::QUOTA_RESOURCE_CLUSTER;
use magnum_domain::{MagnumError, RequestContext};

use super::clusters::own_scope;
use super::{Conductor, Error, Result};
use crate::db::{self, ClusterFilter, Queries, Tx};

/// The `host` column of the lock row.
pub const LOCK_SERVICE_HOST: &str = "openkeel-magnum";
/// The `binary` column of the lock row.
pub const LOCK_SERVICE_BINARY: &str = "openkeel-reconciler";

/// Whether `row` is the lock row (hidden from `GET /v1/mservices`).
pub fn is_lock_row(row: &MagnumService) -> bool {
    row.host == LOCK_SERVICE_HOST && row.binary == LOCK_SERVICE_BINARY
}

/// What this process knows of the projects' cluster counts (see the module
/// documentation).
#[derive(Debug, Default)]
pub(crate) struct Bounds {
    /// The lock row's `report_count` as this process last wrote it; `None`
    /// before the first write.
    seq: Option<i32>,
    /// Per project, at most how many clusters it had when the lock row read
    /// `seq`.
    bound: HashMap<String, i64>,
}

impl Bounds {
    /// The bound of `project` if the lock row still reads `seq` as this
    /// process left it.
    fn lookup(&self, project: &str, seq: i32) -> Option<i64> {
        if self.seq != Some(seq) {
            return None;
        }
        self.bound.get(project).copied()
    }

    /// Records, after a commit, that `project` has at most `n` clusters now
    /// that the lock row reads `next`, written by a create that found it at
    /// `prev`. The other projects' bounds are kept only if they held at
    /// `prev`.
    fn store(&mut self, project: &str, n: i64, prev: i32, next: i32) {
        if self.seq != Some(prev) {
            self.bound.clear();
        }
        self.bound.insert(project.to_string(), n);
        self.seq = Some(next);
    }
}

/// What a create's transaction learnt under the lock, for [`Bounds::store`]
/// after its commit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuotaSeen {
    /// The project's clusters with the new one, at most.
    n: i64,
    prev: i32,
    next: i32,
}

impl Conductor {
    /// `[quotas]/max_clusters_per_project` (Magnum's 20 when it is not
    /// positive).
    pub fn default_cluster_quota(&self) -> i64 {
        match self.settings().max_clusters_per_project {
            n if n > 0 => n,
            _ => 20,
        }
    }

    /// The cluster quota of `project_id`: its `quotas` row, else the
    /// default.
    pub(crate) async fn cluster_quota_limit(
        &self,
        q: &mut Queries<'_>,
        project_id: &str,
    ) -> Result<i64> {
        match q.get_quota(project_id, QUOTA_RESOURCE_CLUSTER).await {
            Ok(row) => Ok(i64::from(row.hard_limit)),
            Err(db::Error::NotFound(_)) => Ok(self.default_cluster_quota()),
            Err(e) => Err(e.into()),
        }
    }

    /// Refuses a create when the caller's project already has its limit of
    /// clusters (every status counted): 403 ResourceLimitExceeded. The check
    /// that holds is the one under the lock; this one gives Magnum's error
    /// order when the validation of a create fails too.
    pub(crate) async fn check_cluster_quota(&self, ctx: &RequestContext) -> Result<()> {
        let mut q = self.db().q();
        let limit = self.cluster_quota_limit(&mut q, &ctx.project_id).await?;
        let n = q
            .count_clusters(&ClusterFilter::scope(own_scope(ctx)))
            .await?;
        if n >= limit {
            return Err(MagnumError::resource_limit_exceeded(limit).into());
        }
        Ok(())
    }

    /// Makes sure the lock row exists (outside any transaction; a
    /// concurrent creation is fine).
    pub(crate) async fn ensure_lock_row(&self) -> Result<()> {
        let work = &self.work;
        if work.lock_row_seen.load(Ordering::SeqCst) {
            return Ok(());
        }
        let mut q = self.db().q();
        match q
            .get_magnum_service(LOCK_SERVICE_HOST, LOCK_SERVICE_BINARY)
            .await
        {
            Ok(_) => {
                work.lock_row_seen.store(true, Ordering::SeqCst);
                Ok(())
            }
            Err(db::Error::NotFound(_)) => {
                let mut row = MagnumService {
                    host: LOCK_SERVICE_HOST.into(),
                    binary: LOCK_SERVICE_BINARY.into(),
                    disabled: Some(false),
                    forced_down: Some(false),
                    ..MagnumService::default()
                };
                match q.create_magnum_service(&mut row).await {
                    Ok(()) | Err(db::Error::Duplicate { .. }) => Ok(()),
                    Err(e) => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Takes the lock row FOR UPDATE in `tx` (MariaDB, PostgreSQL) and
    /// returns it; on SQLite every write transaction already holds the
    /// database's write lock. Two transactions that take it run one after
    /// the other: the count of the second sees the insert of the first.
    async fn lock_row(&self, tx: &mut Tx<'_>) -> Result<MagnumService> {
        match tx
            .for_update()
            .get_magnum_service(LOCK_SERVICE_HOST, LOCK_SERVICE_BINARY)
            .await
        {
            Ok(row) => Ok(row),
            Err(e) => {
                if e.is_not_found() {
                    // Removed since it was seen (deleted by hand): the next
                    // ensure_lock_row creates it again.
                    self.work.lock_row_seen.store(false, Ordering::SeqCst);
                }
                Err(e.into())
            }
        }
    }

    /// The quota check of a create inside its transaction, after its rows
    /// were written: takes the lock row, refuses the create (403
    /// ResourceLimitExceeded) when the caller's project already has its
    /// limit of clusters without it, else bumps the lock row's
    /// `report_count`.
    pub(crate) async fn quota_under_lock(
        &self,
        tx: &mut Tx<'_>,
        ctx: &RequestContext,
    ) -> Result<QuotaSeen> {
        let mut lock = self.lock_row(tx).await?;
        // The reads below run after the lock: their snapshot holds every
        // create committed before it.
        let limit = self
            .cluster_quota_limit(&mut tx.q(), &ctx.project_id)
            .await?;
        let prev = lock.report_count;
        let known = self.quota_bounds().lookup(&ctx.project_id, prev);
        let others = match known {
            Some(n) if n < limit => n,
            _ => {
                // The count includes this create's own row.
                let all = tx
                    .q()
                    .count_clusters(&ClusterFilter::scope(own_scope(ctx)))
                    .await?;
                all - 1
            }
        };
        if others >= limit {
            return Err(MagnumError::resource_limit_exceeded(limit).into());
        }
        lock.report_count = lock.report_count.wrapping_add(1);
        tx.q()
            .update_magnum_service(&mut lock, &["report_count"])
            .await?;
        Ok(QuotaSeen {
            n: others + 1,
            prev,
            next: lock.report_count,
        })
    }

    /// Remembers what a committed create learnt under the lock.
    pub(crate) fn remember_quota(&self, project: &str, seen: QuotaSeen) {
        self.quota_bounds()
            .store(project, seen.n, seen.prev, seen.next);
    }

    fn quota_bounds(&self) -> std::sync::MutexGuard<'_, Bounds> {
        // The bounds stay consistent: nothing panics while holding the lock.
        self.work.quota.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes or renews the reconciler lease for `holder`: it succeeds when
    /// the lease is free, expired (last renewal older than `ttl`) or
    /// already held by `holder`. Only the holder reconciles, so two
    /// reconcilers never race on a cluster's deletion.
    pub async fn acquire_reconciler_lease(&self, holder: &str, ttl: Duration) -> Result<bool> {
        self.ensure_lock_row().await?;
        let now = self.now();
        let ttl = chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX);
        self.db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut row = tx
                        .for_update()
                        .get_magnum_service(LOCK_SERVICE_HOST, LOCK_SERVICE_BINARY)
                        .await?;
                    let current = row.disabled_reason.as_deref().unwrap_or("");
                    let expired = row.last_seen_up.is_none_or(|t| now - t > ttl);
                    if !current.is_empty() && current != holder && !expired {
                        return Ok::<_, Error>(false);
                    }
                    row.disabled_reason = Some(holder.to_string());
                    row.last_seen_up = Some(now);
                    row.report_count = row.report_count.wrapping_add(1);
                    tx.q()
                        .update_magnum_service(
                            &mut row,
                            &["disabled_reason", "last_seen_up", "report_count"],
                        )
                        .await?;
                    Ok(true)
                })
            })
            .await
    }

    /// Gives the reconciler lease up if `holder` has it.
    pub async fn release_reconciler_lease(&self, holder: &str) -> Result<()> {
        self.db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut row = match tx
                        .for_update()
                        .get_magnum_service(LOCK_SERVICE_HOST, LOCK_SERVICE_BINARY)
                        .await
                    {
                        Ok(row) => row,
                        Err(db::Error::NotFound(_)) => return Ok::<_, Error>(()),
                        Err(e) => return Err(e.into()),
                    };
                    if row.disabled_reason.as_deref() != Some(holder) {
                        return Ok(());
                    }
                    row.disabled_reason = None;
                    row.last_seen_up = None;
                    tx.q()
                        .update_magnum_service(&mut row, &["disabled_reason", "last_seen_up"])
                        .await?;
                    Ok(())
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_holds_only_while_the_lock_row_is_unchanged() {
        let mut b = Bounds::default();
        assert_eq!(b.lookup("p1", 0), None, "nothing known before a create");
        b.store("p1", 2, 0, 1);
        assert_eq!(b.lookup("p1", 1), Some(2));
        assert_eq!(b.lookup("p1", 2), None, "another create committed since");
        assert_eq!(b.lookup("p2", 1), None, "unknown project");
        b.store("p2", 1, 1, 2);
        assert_eq!(b.lookup("p1", 2), Some(2), "p1 held at 1, when p2 wrote");
        b.store("p2", 2, 7, 8);
        assert_eq!(b.lookup("p1", 8), None, "p1's bound did not hold at 7");
        assert_eq!(b.lookup("p2", 8), Some(2));
    }
}
