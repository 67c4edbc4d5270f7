//! The use cases of one pass of the status loop (the loop itself, its
//! lease and its watches are `magnum-reconcile`; what each pass does is
//! magnum/service/periodic.py's):
//! the clusters in progress, their driver's `poll-status` with the
//! service's credentials, the compare-and-swap save of what it reports,
//! the deadlines of operations that never end, and the removal of the
//! clusters whose deletion completed.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use driver_host::{CallContext, CallError, ClusterState, Observation, Update};
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup};
use magnum_domain::transitions::Operation;
use magnum_domain::{RequestContext, Status};

use super::clusters::{Saved, internal};
use super::driver_answers::Call;
use super::{Conductor, Error, Result};
use crate::db::{ClusterFilter, ListOptions, Scope, TemplateScope};
use crate::notify::{Action, Outcome};

/// The statuses the poller follows (magnum/service/periodic.py:166), plus
/// DELETE_COMPLETE: a deleted cluster whose rows could not be removed is
/// retried.
pub const POLLED: &[Status] = &[
    Status::CreateInProgress,
    Status::UpdateInProgress,
    Status::DeleteInProgress,
    Status::RollbackInProgress,
    Status::DeleteComplete,
];

/// The statuses whose health the poller refreshes every
/// `[kubernetes]/health_polling_interval` (magnum/service/periodic.py,
/// `sync_cluster_health_status`; its in-progress statuses are polled at
/// every pass anyway).
pub const HEALTH_POLLED: &[Status] = &[Status::CreateComplete, Status::UpdateComplete];

/// The create timeout when a cluster has none (Magnum's default, minutes).
const DEFAULT_CREATE_TIMEOUT: i64 = 60;

/// Where the status of a cluster comes from: the driver's `poll-status`,
/// or its `derive-status` over what the host's watches hold.
#[derive(Clone, Debug)]
pub enum Source {
    Poll,
    /// The snapshot of the cluster's selectors, and the bytes of its
    /// objects.
    Snapshot(Vec<Observation>, usize),
}

/// The admin context of the periodic tasks (Magnum's
/// `make_admin_context(all_tenants=True)`): no user, no project.
pub(crate) fn admin_context() -> RequestContext {
    RequestContext {
        is_admin: true,
        all_projects: true,
        ..RequestContext::default()
    }
}

/// One pass of the status poller: the clusters in progress with their
/// templates and nodegroups, read in three queries at its start instead of
/// three per cluster.
#[derive(Clone, Debug, Default)]
pub struct PollPass {
    /// The clusters to poll, by id.
    pub clusters: Vec<Cluster>,
    templates: HashMap<String, ClusterTemplate>,
    nodegroups: HashMap<String, Vec<NodeGroup>>,
}

impl PollPass {
    /// The rows of `cl` as the pass read them, when it found its template.
    pub fn state(&self, cl: &Cluster) -> Option<ClusterState> {
        let t = self.templates.get(&cl.cluster_template_id)?;
        Some(ClusterState {
            cluster: cl.clone(),
            template: t.clone(),
            nodegroups: self.nodegroups.get(&cl.uuid).cloned().unwrap_or_default(),
        })
    }

    /// What bounds the concurrency of a cluster's poll: the package of its
    /// template's driver (`""` when it has none; its poll fails at once).
    pub fn driver_package(&self, c: &Conductor, cl: &Cluster) -> String {
        self.templates
            .get(&cl.cluster_template_id)
            .and_then(|t| c.driver_of(t).ok())
            .map(|d| d.package().to_string())
            .unwrap_or_default()
    }
}

/// The nodegroups of `st` with those of an answer in their place (for the
/// counts and addresses of a notification).
fn merged_nodegroups(
    st: &ClusterState,
    answer: &[NodeGroup],
    deleted: &[String],
) -> Vec<NodeGroup> {
    let mut out: Vec<NodeGroup> = st
        .nodegroups
        .iter()
        .filter(|ng| !deleted.contains(&ng.uuid))
        .map(|ng| {
            answer
                .iter()
                .find(|a| a.uuid == ng.uuid)
                .cloned()
                .unwrap_or_else(|| ng.clone())
        })
        .collect();
    out.extend(
        answer
            .iter()
            .filter(|a| !st.nodegroups.iter().any(|ng| ng.uuid == a.uuid))
            .cloned(),
    );
    out
}

impl Conductor {
    /// The clusters of every project the poller follows, by id; with
    /// `health`, also the complete ones whose health it refreshes.
    pub async fn clusters_to_poll(&self, health: bool) -> Result<Vec<Cluster>> {
        let mut statuses = POLLED.to_vec();
        if health {
            statuses.extend_from_slice(HEALTH_POLLED);
        }
        let f = ClusterFilter {
            statuses,
            ..ClusterFilter::scope(Scope::ALL_PROJECTS)
        };
        Ok(self
            .db()
            .q()
            .list_clusters(&f, &ListOptions::default())
            .await?)
    }

    /// Reads the clusters in progress (with `health`, the complete ones
    /// too), their templates (any project) and their nodegroups.
    pub async fn start_poll_pass(&self, health: bool) -> Result<PollPass> {
        let clusters = self.clusters_to_poll(health).await?;
        self.pass_of(clusters).await
    }

    /// Reads every cluster, whatever its status, with its template and
    /// nodegroups: the pass of a reconciler that watches (a cluster of a
    /// watching driver is registered whatever its status).
    pub async fn start_full_pass(&self) -> Result<PollPass> {
        let f = ClusterFilter::scope(Scope::ALL_PROJECTS);
        let clusters = self
            .db()
            .q()
            .list_clusters(&f, &ListOptions::default())
            .await?;
        self.pass_of(clusters).await
    }

    async fn pass_of(&self, clusters: Vec<Cluster>) -> Result<PollPass> {
        if clusters.is_empty() {
            return Ok(PollPass::default());
        }
        let uuids: Vec<String> = clusters.iter().map(|c| c.uuid.clone()).collect();
        let mut tids: Vec<String> = Vec::new();
        for c in &clusters {
            if !tids.contains(&c.cluster_template_id) {
                tids.push(c.cluster_template_id.clone());
            }
        }
        let mut q = self.db().q();
        let templates = q
            .get_cluster_templates_by_uuids(&tids, &TemplateScope::new(Scope::ALL_PROJECTS))
            .await?;
        let nodegroups = q.list_nodegroups_of_clusters(&uuids).await?;
        Ok(PollPass {
            clusters,
            templates,
            nodegroups,
        })
    }

    /// Asks the cluster's driver for its status (service credentials, as
    /// Magnum's periodic task) and saves what changed. It returns the
    /// cluster as saved, or `None` when a driver operation of this process
    /// is in flight for it. A driver error is returned and changes nothing.
    /// A cluster the driver reports DELETE_COMPLETE is returned with that
    /// status without a write: [`Conductor::finish_deletes`] removes it.
    pub async fn poll_cluster(&self, uuid: &str) -> Result<Option<Cluster>> {
        if self.is_busy(uuid) {
            // Its result is saved by the operation; polled on the next tick.
            return Ok(None);
        }
        let st = self.cluster_state(uuid).await?;
        self.poll(st).await.map(Some)
    }

    /// [`Conductor::poll_cluster`] on the rows the pass read (the driver's
    /// answer is saved only if the rows are unchanged since). A cluster
    /// whose template the pass did not find is read again.
    pub async fn poll_in_pass(&self, pass: &PollPass, cl: &Cluster) -> Result<Option<Cluster>> {
        self.status_in_pass(pass, cl, Source::Poll).await
    }

    /// The status of a cluster of the pass from `source`, saved as
    /// [`Conductor::poll_in_pass`] saves a poll's.
    pub async fn status_in_pass(
        &self,
        pass: &PollPass,
        cl: &Cluster,
        source: Source,
    ) -> Result<Option<Cluster>> {
        let Some(st) = pass.state(cl) else {
            return self.derive_cluster(&cl.uuid, source).await;
        };
        if self.is_busy(&cl.uuid) {
            return Ok(None);
        }
        self.settle(st, source).await.map(Some)
    }

    /// The status of a cluster from `source`, on its rows read now: what a
    /// watched object's change asks for. `None` while an operation of this
    /// process is in flight for it (its result is saved by the operation).
    pub async fn derive_cluster(&self, uuid: &str, source: Source) -> Result<Option<Cluster>> {
        if self.is_busy(uuid) {
            return Ok(None);
        }
        let st = self.cluster_state(uuid).await?;
        self.settle(st, source).await.map(Some)
    }

    async fn poll(&self, st: ClusterState) -> Result<Cluster> {
        self.settle(st, Source::Poll).await
    }

    /// Asks the driver for the cluster's status (`poll-status`, or
    /// `derive-status` over a snapshot within `[drivers]/max_snapshot_kb`;
    /// a larger one is refused as the driver's fault and the cluster
    /// polled instead), runs the side effects the answer asks for, and
    /// saves it.
    async fn settle(&self, st: ClusterState, source: Source) -> Result<Cluster> {
        let uuid = st.cluster.uuid.clone();
        if st.cluster.status == Some(Status::DeleteComplete) {
            // Reported before, its rows not removed yet: remove them now.
            return Ok(st.cluster);
        }
        let drv = self.driver_of(&st.template)?;
        let cctx = CallContext::admin().at(self.now());
        let limit = self.settings().max_snapshot_bytes;
        let (function, answer) = match source {
            Source::Snapshot(_, bytes) if bytes > limit => {
                // Counted against the driver's breaker; the poll still
                // answers for the cluster.
                let _ = drv.refuse_answer(
                    "derive-status",
                    format!(
                        "the snapshot of cluster {uuid} is {} KiB, above [drivers]/max_snapshot_kb ({} KiB): polled instead",
                        bytes.div_ceil(1024),
                        limit / 1024
                    ),
                );
                ("poll-status", drv.poll_status(&cctx, &st).await)
            }
            Source::Snapshot(snapshot, _) => (
                "derive-status",
                drv.derive_status(&cctx, &st, &snapshot).await,
            ),
            Source::Poll => ("poll-status", drv.poll_status(&cctx, &st).await),
        };
        let (answer, effects) = match answer {
            Ok(a) => (Ok(a.update), a.effects),
            Err(e) => (Err(e), Vec::new()),
        };
        let call = Call::new(Operation::Status, function);
        let checked = match self.gate(&drv, call, &st, answer) {
            Ok(c) => c,
            Err(e) => return self.status_failed(&st, e).await,
        };
        // The side effects the answer asks for run before it is saved; when
        // they fail, nothing of it is, and the next status call (an object's
        // change, or the next pass) asks for them again: a service down for
        // a while delays the transition, and the operation's deadline bounds
        // the retries.
        if let Err(e) = drv.apply_effects(&cctx, &st, &effects).await {
            let names: Vec<&str> = effects.iter().map(|e| e.name.as_str()).collect();
            return Err(internal(format!(
                "cluster {uuid}: the effects {} failed, to be run again: {e}",
                names.join(", ")
            )));
        }
        self.status_answered(&uuid);
        let upd = checked.update();
        if let Some(cl) = &upd.cluster
            && cl.status == Some(Status::DeleteComplete)
        {
            // The rows go next: writing the status first would only cost a
            // transaction. What is removed (the rows, the certificates) is
            // the host's row as read, whatever else the answer says.
            let mut row = st.cluster.clone();
            row.status = Some(Status::DeleteComplete);
            row.status_reason = cl.status_reason.clone();
            return Ok(row);
        }
        if let Some(row) = self.save_health_only(&st, upd).await? {
            return Ok(row);
        }
        let saved = match self.save_update(&checked, &st).await? {
            Saved::Written(Some(cl)) => *cl,
            // Stale: polled again on the next tick.
            Saved::Stale | Saved::Nothing | Saved::Written(None) => return Ok(st.cluster),
        };
        let (before, now) = (st.cluster.status, saved.status);
        if before != now {
            tracing::info!(
                cluster_uuid = %uuid,
                from = before.map_or("None", Status::as_str),
                to = now.map_or("None", Status::as_str),
                call = function,
                "cluster status changed"
            );
            let ngs = merged_nodegroups(&st, &upd.nodegroups, &upd.deleted_nodegroups);
            self.notifier()
                .cluster_status_event(&admin_context(), &saved, &ngs);
        }
        Ok(saved)
    }

    /// The health refresh of a cluster not in progress, when the answer
    /// changes its health and nothing else: only those two columns are
    /// written, while the status is as polled, and not `updated_at`, so that
    /// a refresh never makes the answer of an operation another process
    /// just started stale (its compare-and-swap reads `updated_at`). `None`
    /// when the answer is not a health refresh.
    ///
    /// Deviation: Magnum's health monitor saves the two fields through the
    /// cluster object, which also moves `updated_at`.
    async fn save_health_only(&self, st: &ClusterState, upd: &Update) -> Result<Option<Cluster>> {
        let read = &st.cluster;
        let Some(status) = read.status.filter(|s| !s.is_in_progress()) else {
            return Ok(None);
        };
        let Some(answer) = &upd.cluster else {
            return Ok(None);
        };
        let mut same = answer.clone();
        same.health_status = read.health_status.clone();
        same.health_status_reason = read.health_status_reason.clone();
        if same != *read || !upd.nodegroups.is_empty() || !upd.deleted_nodegroups.is_empty() {
            return Ok(None);
        }
        self.db()
            .q()
            .set_cluster_health(
                &read.uuid,
                status,
                answer.health_status.as_deref(),
                &answer.health_status_reason,
            )
            .await?;
        Ok(Some(answer.clone()))
    }

    /// A status poll that answered: the cluster's count of faults in a row
    /// starts again.
    fn status_answered(&self, uuid: &str) {
        self.status_faults().remove(uuid);
    }

    fn status_faults(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.work
            .status_faults
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A status poll that did not answer. A driver that says the operation
    /// failed (`failed`, or a client error, which a status poll has no
    /// client for) moves the cluster and its nodegroups in progress to the
    /// operation's `*_FAILED` with its reason. A fault (a trap, the
    /// deadline, an answer the gate refused, a driver shut off by its
    /// breaker) is returned, and once `[drivers]/status_fault_limit` polls
    /// of the cluster faulted in a row, the operation is failed with the
    /// last fault as its reason: a broken driver cannot keep a cluster in
    /// progress until its deadline.
    async fn status_failed(&self, st: &ClusterState, e: CallError) -> Result<Cluster> {
        let uuid = st.cluster.uuid.as_str();
        self.keep_after_failure(st, &e).await;
        let reason = match &e {
            CallError::Failed(r) | CallError::FailedAfter { reason: r, .. } => r.clone(),
            CallError::Client(m) => m.message.clone(),
            CallError::Fault(f) => {
                let faults = {
                    let mut m = self.status_faults();
                    let n = m.entry(uuid.to_string()).or_default();
                    *n += 1;
                    *n
                };
                if faults < self.settings().status_fault_limit {
                    return Err(internal(format!("poll cluster {uuid}: {f}")));
                }
                format!("{f} (the status poll failed {faults} times in a row)")
            }
        };
        self.status_answered(uuid);
        let Some(failed) = st.cluster.status.and_then(Status::failure) else {
            return Err(internal(format!("poll cluster {uuid}: {reason}")));
        };
        tracing::warn!(cluster_uuid = %uuid, status = %failed, "{reason}");
        match self
            .mark_failed_if(uuid, failed, &reason, st.cluster.status)
            .await
        {
            Some((saved, ngs)) => {
                self.notifier()
                    .cluster_status_event(&admin_context(), &saved, &ngs);
                Ok(saved)
            }
            None => Ok(st.cluster.clone()),
        }
    }

    /// Fails an operation that has run past its deadline, as Heat's stack
    /// timeouts did: CREATE_IN_PROGRESS past `create_timeout` minutes after
    /// the create, UPDATE_IN_PROGRESS and ROLLBACK_IN_PROGRESS past
    /// `create_timeout` minutes without a change of the row, and
    /// DELETE_IN_PROGRESS past `delete_timeout` without one. `cl` is the
    /// row as polled; the write is a compare-and-swap on it. Returns the
    /// cluster as saved when it was failed.
    ///
    /// Deviation: Magnum leaves deadlines to Heat; drivers without Heat
    /// report no timeout, so the poller enforces them.
    pub async fn enforce_deadline(
        &self,
        cl: &Cluster,
        delete_timeout: Duration,
    ) -> Result<Option<Cluster>> {
        let minutes = match cl.create_timeout {
            Some(m) => i64::from(m),
            None => DEFAULT_CREATE_TIMEOUT,
        };
        let since_change = cl.updated_at.unwrap_or(cl.created_at);
        let (limit, since, failed, what) = match cl.status {
            Some(Status::CreateInProgress) if minutes > 0 => (
                chrono::Duration::minutes(minutes),
                cl.created_at,
                Status::CreateFailed,
                "create",
            ),
            Some(Status::UpdateInProgress) if minutes > 0 => (
                chrono::Duration::minutes(minutes),
                since_change,
                Status::UpdateFailed,
                "update",
            ),
            Some(Status::RollbackInProgress) if minutes > 0 => (
                chrono::Duration::minutes(minutes),
                since_change,
                Status::RollbackFailed,
                "rollback",
            ),
            Some(Status::DeleteInProgress) if !delete_timeout.is_zero() => (
                chrono::Duration::from_std(delete_timeout).unwrap_or(chrono::Duration::MAX),
                since_change,
                Status::DeleteFailed,
                "delete",
            ),
            _ => return Ok(None),
        };
        if self.now() - since <= limit {
            return Ok(None);
        }
        let shown = if failed == Status::DeleteFailed {
            format!("{} seconds", limit.num_seconds())
        } else {
            format!("{} minutes", limit.num_minutes())
        };
        let reason = format!("Cluster {what} did not complete within {shown}.");
        // Only while the row is still as it was read: a poll, a delete or
        // an update meanwhile decides instead.
        let still = |cur: &Cluster| cur.status == cl.status && cur.updated_at == cl.updated_at;
        let r = self.fail_cluster(&cl.uuid, failed, &reason, still).await?;
        let Some((saved, ngs)) = r else {
            return Ok(None);
        };
        tracing::warn!(cluster_uuid = %saved.uuid, status = %failed, "{reason}");
        self.notifier()
            .cluster_status_event(&admin_context(), &saved, &ngs);
        Ok(Some(saved))
    }

    /// Ends the deletion of clusters the poller returned as
    /// DELETE_COMPLETE: the certificates their rows reference (read again,
    /// while still being deleted as polled; never what a driver answered)
    /// are removed from the store, then, in one transaction, the nodegroups and rows of those still as
    /// their poll read them (a deleting status, the same `updated_at`; the
    /// others are seen again by the next poll). A cluster whose
    /// certificates could not be removed is saved DELETE_COMPLETE instead,
    /// which the poller keeps following; those clusters, and a failure of
    /// the removal, are the error. Clusters already gone are not an error.
    /// Each removed cluster's driver state is dropped and Magnum's delete
    /// success is sent.
    pub async fn finish_deletes(
        &self,
        polled: &[Cluster],
    ) -> std::result::Result<(), DeletesUnfinished> {
        if polled.is_empty() {
            return Ok(());
        }
        let mut failures = Vec::new();
        for cl in polled {
            // The certificates removed are those the row references now,
            // and only while the row is still being deleted as polled.
            let mut row = match self
                .db()
                .q()
                .get_cluster_by_uuid(&cl.uuid, &Scope::ALL_PROJECTS)
                .await
            {
                Ok(row) => row,
                Err(e) if e.is_not_found() => continue,
                Err(e) => {
                    failures.push(ClusterFailure::new(&cl.uuid, e.into()));
                    continue;
                }
            };
            let deleting = matches!(
                row.status,
                Some(Status::DeleteInProgress | Status::DeleteComplete)
            );
            if !deleting || row.updated_at != cl.updated_at {
                continue;
            }
            if let Err(e) = self.delete_cluster_certificates(&mut row).await {
                failures.push(ClusterFailure::new(&cl.uuid, e));
            }
        }
        // Saved DELETE_COMPLETE instead of removed.
        let kept: HashSet<&str> = failures.iter().map(|f| f.cluster_uuid.as_str()).collect();
        let by_uuid: HashMap<&str, &Cluster> =
            polled.iter().map(|c| (c.uuid.as_str(), c)).collect();
        let uuids: Vec<String> = polled.iter().map(|c| c.uuid.clone()).collect();
        let removed = self
            .db()
            .in_tx(|tx| {
                let (uuids, kept, by_uuid) = (uuids.clone(), &kept, &by_uuid);
                Box::pin(async move {
                    let f = ClusterFilter {
                        uuids,
                        ..ClusterFilter::scope(Scope::ALL_PROJECTS)
                    };
                    let rows = tx
                        .for_update()
                        .list_clusters(&f, &ListOptions::default())
                        .await?;
                    let mut destroyed: Vec<Cluster> = Vec::new();
                    for mut cur in rows {
                        let Some(seen) = by_uuid.get(cur.uuid.as_str()) else {
                            continue;
                        };
                        let deleting = matches!(
                            cur.status,
                            Some(Status::DeleteInProgress | Status::DeleteComplete)
                        );
                        if !deleting || cur.updated_at != seen.updated_at {
                            continue;
                        }
                        if kept.contains(cur.uuid.as_str()) {
                            cur.status = Some(Status::DeleteComplete);
                            cur.status_reason = seen.status_reason.clone();
                            tx.q()
                                .update_cluster(&mut cur, &["status", "status_reason"])
                                .await?;
                            continue;
                        }
                        cur.status = Some(Status::DeleteComplete);
                        cur.status_reason = seen.status_reason.clone();
                        destroyed.push(cur);
                    }
                    let ids: Vec<String> = destroyed.iter().map(|c| c.uuid.clone()).collect();
                    let ngs = tx.q().list_nodegroups_of_clusters(&ids).await?;
                    tx.q().delete_clusters_cascade(&ids).await?;
                    Ok::<_, Error>((destroyed, ngs))
                })
            })
            .await;
        let mut removal = None;
        match removed {
            Ok((destroyed, ngs)) => {
                let admin = admin_context();
                for cl in &destroyed {
                    self.drivers().forget_cluster(&cl.uuid);
                    tracing::info!(cluster_uuid = %cl.uuid, "cluster destroyed");
                    let empty = Vec::new();
                    let groups = ngs.get(&cl.uuid).unwrap_or(&empty);
                    self.notifier().cluster_event(
                        &admin,
                        cl,
                        groups,
                        Action::Delete,
                        Outcome::Success,
                    );
                }
            }
            Err(e) => removal = Some(e),
        }
        if failures.is_empty() && removal.is_none() {
            Ok(())
        } else {
            Err(DeletesUnfinished {
                kept: failures,
                removal,
            })
        }
    }
}

/// A cluster the background work could not follow or finish, and why:
/// the conductor's error, or the reconciler's.
#[derive(Debug, thiserror::Error)]
#[error("cluster {cluster_uuid}: {cause}")]
pub struct ClusterFailure<E: std::error::Error + 'static = Error> {
    pub cluster_uuid: String,
    #[source]
    pub cause: E,
}

impl<E: std::error::Error + 'static> ClusterFailure<E> {
    pub fn new(cluster_uuid: &str, cause: E) -> ClusterFailure<E> {
        ClusterFailure {
            cluster_uuid: cluster_uuid.to_string(),
            cause,
        }
    }
}

/// What [`Conductor::finish_deletes`] could not do.
#[derive(Debug, thiserror::Error)]
#[error("finish cluster deletions: {}", self.describe())]
pub struct DeletesUnfinished {
    /// The clusters saved DELETE_COMPLETE instead of removed: their row
    /// could not be read again or their certificates removed.
    pub kept: Vec<ClusterFailure>,
    /// Why the transaction that removes the others failed.
    #[source]
    pub removal: Option<Error>,
}

impl DeletesUnfinished {
    fn describe(&self) -> String {
        let mut parts: Vec<String> = self.kept.iter().map(ToString::to_string).collect();
        if let Some(e) = &self.removal {
            parts.push(format!("remove the rows: {e}"));
        }
        parts.join("; ")
    }

    /// Whether `cluster_uuid` is among the clusters kept.
    pub fn keeps(&self, cluster_uuid: &str) -> bool {
        self.kept.iter().any(|f| f.cluster_uuid == cluster_uuid)
    }
}
