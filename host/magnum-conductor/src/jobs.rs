//! The create job: what a cluster create does after its rows are written —
//! generate the cluster's CAs and admin client certificate, save their
//! references, then call the driver's create and save its answer. Once
//! [`Conductor::start_create_jobs`] has run, the job runs on a bounded
//! pool of workers after `POST /v1/clusters` answered, as Magnum's
//! conductor does after the API's RPC cast; before (and after
//! [`Conductor::stop_create_jobs`]), within the request (detached from it).
//!
//! A job does its work only if, when it starts, the cluster still waits
//! for it (CREATE_IN_PROGRESS without certificates nor driver id); the save
//! of the certificate references is a compare-and-swap on that state, so a
//! delete arriving meanwhile, or a second job for the same cluster (a
//! resumed create), leaves no certificates behind and calls no driver. The
//! driver calls of a job and of the delete path hold a per-cluster mutex,
//! and the job re-reads the status under it: the driver's create never
//! follows its delete, and a delete never waits for the certificates of the
//! cluster it removes (it stops their generation).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use driver_host::CallContext;
use futures::future::BoxFuture;
use magnum_domain::models::Cluster;
use magnum_domain::transitions::Operation;
use magnum_domain::{MagnumError, RequestContext, Status};
use tokio::sync::{Notify, OwnedMutexGuard, mpsc};
use tokio::task::JoinHandle;

use super::certificates::CERTIFICATE_COLUMNS;
use super::clusters::{BusyMark, DRIVER_TIMEOUT, Saved, call_ctx, detached};
use super::driver_answers::Call;
use super::{Conductor, Error};
use crate::db::Scope;
use crate::notify::{Action, Outcome};

/// The create jobs a shutdown dropped when its grace period ran out: their
/// clusters are left to the status loop ([`CREATE_ORPHAN_AGE`]).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0} cluster create jobs left to the status loop (shutdown grace period over)")]
pub struct JobsDropped(pub u64);

/// How long a cluster that still waits for its create job is left to the
/// process that accepted it. Past it, the status loop presumes that process
/// gone and runs the job itself ([`Conductor::resume_create`]).
pub const CREATE_ORPHAN_AGE: Duration = Duration::from_secs(2 * DRIVER_TIMEOUT.as_secs());

/// Queued jobs per worker; a create that finds the queue full runs its job
/// within the request (back-pressure). At about a quarter of a second of
/// CPU per job (four RSA-2048 keys), a full queue drains in about a minute,
/// well within [`CREATE_ORPHAN_AGE`].
const QUEUE_PER_WORKER: usize = 256;

/// A test hook: called with a cluster uuid at a fixed point of the job,
/// which waits for it.
pub type Hook = Arc<dyn Fn(String) -> BoxFuture<'static, ()> + Send + Sync>;

/// The points of the create job (and of the rotations) tests can observe
/// and hold.
#[derive(Clone, Default)]
pub struct JobHooks {
    /// When a worker takes the job, before anything else.
    pub before_job: Option<Hook>,
    /// When the job has read the cluster's row and found it waiting for
    /// the job, before anything is generated.
    pub after_read: Option<Hook>,
    /// When the job is about to generate the certificates (the generation
    /// can already be stopped).
    pub before_certificates: Option<Hook>,
    /// After the certificates are generated and stored, before their
    /// references are saved.
    pub before_save: Option<Hook>,
    /// With the cluster's mutex held, right before the driver's create is
    /// called (the delete path waits meanwhile).
    pub before_driver: Option<Hook>,
    /// When the job has ended (done or skipped).
    pub after_job: Option<Hook>,
    /// When a cluster's mutex is found held or awaited, before waiting.
    pub lock_waits: Option<Hook>,
    /// In a CA or credential rotation: after the driver answered, before
    /// its answer is saved.
    pub before_rotation_save: Option<Hook>,
}

pub(super) async fn run_hook(h: &Option<Hook>, uuid: &str) {
    if let Some(h) = h {
        h(uuid.to_string()).await;
    }
}

/// One create job.
struct Job {
    /// The caller (for a resumed create: the cluster's project and user,
    /// the owners of the certificates).
    ctx: RequestContext,
    uuid: String,
    /// Call the driver with the service's credentials (a resumed create).
    service: bool,
    /// Cleared when the job ends (or is dropped).
    _busy: Option<BusyMark>,
}

/// A cluster's mutex and the number of its holders and waiters.
type Held = (Arc<tokio::sync::Mutex<()>>, usize);

/// The create-job pool, the per-cluster mutexes and the certificate
/// generations in flight.
#[derive(Default)]
pub(crate) struct CreateJobs {
    /// The queue of the pool, from [`Conductor::start_create_jobs`] to
    /// [`Conductor::stop_create_jobs`].
    queue: Mutex<Option<mpsc::Sender<Job>>>,
    started: AtomicBool,
    workers: Mutex<Vec<JoinHandle<()>>>,
    /// Set when the stop ran out of time: the workers drop what is queued.
    dropping: AtomicBool,
    dropped: AtomicU64,
    /// Each cluster's mutex and the number of its holders and waiters.
    locks: Mutex<HashMap<String, Held>>,
    /// Stops the certificate generation of a running job, by cluster.
    generating: Mutex<HashMap<String, Arc<Notify>>>,
    hooks: Mutex<JobHooks>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The data stays consistent: nothing panics while holding these locks.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A create job's registration for [`Conductor::stop_certificates`]:
/// removed on drop, unless another job of the same cluster registered
/// since.
struct StopRegistration {
    conductor: Conductor,
    uuid: String,
    notify: Arc<Notify>,
}

impl StopRegistration {
    fn new(conductor: &Conductor, uuid: &str) -> Self {
        let notify = Arc::new(Notify::new());
        lock(&conductor.work.jobs.generating).insert(uuid.to_string(), notify.clone());
        Self {
            conductor: conductor.clone(),
            uuid: uuid.to_string(),
            notify,
        }
    }
}

impl Drop for StopRegistration {
    fn drop(&mut self) {
        let mut generating = lock(&self.conductor.work.jobs.generating);
        if generating
            .get(&self.uuid)
            .is_some_and(|n| Arc::ptr_eq(n, &self.notify))
        {
            generating.remove(&self.uuid);
        }
    }
}

/// A cluster's mutex, held; released (and forgotten when unused) on drop.
pub(crate) struct ClusterLock {
    conductor: Conductor,
    uuid: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Drop for ClusterLock {
    fn drop(&mut self) {
        self.guard = None;
        let mut locks = lock(&self.conductor.work.jobs.locks);
        if let Some(entry) = locks.get_mut(&self.uuid) {
            entry.1 -= 1;
            if entry.1 == 0 {
                locks.remove(&self.uuid);
            }
        }
    }
}

/// Whether a cluster still waits for its create job: CREATE_IN_PROGRESS,
/// no certificate reference and no driver id.
pub(crate) fn create_pending(cl: &Cluster) -> bool {
    let unset = |v: &Option<String>| v.as_deref().is_none_or(str::is_empty);
    cl.status == Some(Status::CreateInProgress)
        && unset(&cl.ca_cert_ref)
        && unset(&cl.magnum_cert_ref)
        && unset(&cl.etcd_ca_cert_ref)
        && unset(&cl.front_proxy_ca_cert_ref)
        && unset(&cl.stack_id)
}

impl Conductor {
    pub(super) fn hooks(&self) -> JobHooks {
        lock(&self.work.jobs.hooks).clone()
    }

    /// Installs the test hooks of the create job.
    #[cfg(any(test, feature = "testing"))]
    pub fn set_create_job_hooks(&self, hooks: JobHooks) {
        *lock(&self.work.jobs.hooks) = hooks;
    }

    /// Whether the stop ran out of time and the workers drop what is
    /// still queued.
    #[cfg(any(test, feature = "testing"))]
    pub fn create_jobs_dropping(&self) -> bool {
        self.work.jobs.dropping.load(Ordering::SeqCst)
    }

    /// Starts the create-job pool: `workers` tasks (at least one) and a
    /// bounded queue. From then on a cluster create answers once its rows
    /// are written, and the certificates and the driver call follow in the
    /// background. Calling it again does nothing.
    ///
    /// Key generation runs on the key generator's threads at a low
    /// priority; the pool bounds how many creates are worked on at once.
    pub fn start_create_jobs(&self, workers: usize) {
        let jobs = &self.work.jobs;
        if jobs.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let workers = workers.max(1);
        let (tx, rx) = mpsc::channel::<Job>(workers * QUEUE_PER_WORKER);
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        let mut handles = lock(&jobs.workers);
        for _ in 0..workers {
            let (c, rx) = (self.clone(), rx.clone());
            handles.push(tokio::spawn(async move { c.create_worker(rx).await }));
        }
        *lock(&jobs.queue) = Some(tx);
    }

    /// How many cluster create jobs wait in the pool's queue (not those
    /// running).
    pub fn create_jobs_queued(&self) -> usize {
        lock(&self.work.jobs.queue)
            .as_ref()
            .map_or(0, |tx| tx.max_capacity().saturating_sub(tx.capacity()))
    }

    /// Stops taking new jobs (later creates run theirs within the request),
    /// lets the workers finish the queue and waits for them. When `grace`
    /// passes first, the jobs still queued are dropped: their clusters stay
    /// CREATE_IN_PROGRESS without certificates and the status loop picks
    /// them up after [`CREATE_ORPHAN_AGE`]. Running jobs are always waited
    /// for; each is bounded by the driver timeout. The error says how many
    /// jobs were dropped.
    pub async fn stop_create_jobs(&self, grace: Duration) -> Result<(), JobsDropped> {
        let jobs = &self.work.jobs;
        let sender = lock(&jobs.queue).take();
        if sender.is_none() {
            return Ok(());
        }
        drop(sender);
        let handles = std::mem::take(&mut *lock(&jobs.workers));
        let all = futures::future::join_all(handles);
        tokio::pin!(all);
        tokio::select! {
            _ = &mut all => {}
            () = tokio::time::sleep(grace) => {
                jobs.dropping.store(true, Ordering::SeqCst);
                all.await;
            }
        }
        match jobs.dropped.load(Ordering::SeqCst) {
            0 => Ok(()),
            n => Err(JobsDropped(n)),
        }
    }

    async fn create_worker(&self, rx: Arc<tokio::sync::Mutex<mpsc::Receiver<Job>>>) {
        loop {
            let next = rx.lock().await.recv().await;
            let Some(job) = next else { return };
            if self.work.jobs.dropping.load(Ordering::SeqCst) {
                tracing::warn!(cluster_uuid = %job.uuid, "create job dropped at shutdown");
                self.work.jobs.dropped.fetch_add(1, Ordering::SeqCst);
                continue;
            }
            run_hook(&self.hooks().before_job, &job.uuid).await;
            self.run_create_job(job).await;
        }
    }

    /// Runs or queues the create job of a cluster just inserted and marked
    /// busy (`busy`); the job clears the mark when it ends.
    pub(crate) async fn start_create_job(
        &self,
        ctx: RequestContext,
        uuid: String,
        busy: Option<BusyMark>,
    ) {
        let job = Job {
            ctx,
            uuid,
            service: false,
            _busy: busy,
        };
        let queue = lock(&self.work.jobs.queue).clone();
        let job = match queue {
            Some(q) => match q.try_send(job) {
                Ok(()) => return,
                Err(mpsc::error::TrySendError::Full(j) | mpsc::error::TrySendError::Closed(j)) => j,
            },
            None => job,
        };
        let c = self.clone();
        let _ = detached(async move {
            c.run_create_job(job).await;
            Ok(())
        })
        .await;
    }

    /// The create job; failures are recorded on the cluster (CREATE_FAILED
    /// with the reason) and logged, never returned.
    async fn run_create_job(&self, job: Job) {
        let uuid = job.uuid.clone();
        if tokio::time::timeout(DRIVER_TIMEOUT, self.create_job(&job))
            .await
            .is_err()
        {
            tracing::error!(cluster_uuid = %uuid, "cluster create job timed out");
        }
        drop(job);
        run_hook(&self.hooks().after_job, &uuid).await;
    }

    async fn create_job(&self, job: &Job) {
        let uuid = job.uuid.as_str();
        // Registered before the row is read: a delete writes its status
        // first and then stops the generation, so either the read below
        // sees the delete or the stop finds this registration (and is kept
        // as a permit until the generation waits for it). Registered after
        // the read, a delete between the two would go unseen and the keys
        // of a deleted cluster be generated in full.
        let stop = StopRegistration::new(self, uuid);
        let cl = match self
            .db()
            .q()
            .get_cluster_by_uuid(uuid, &Scope::ALL_PROJECTS)
            .await
        {
            Ok(cl) => cl,
            Err(e) if e.is_not_found() => return,
            Err(e) => {
                tracing::error!(cluster_uuid = %uuid, error = %e, "read cluster for create");
                return;
            }
        };
        if !create_pending(&cl) {
            tracing::info!(cluster_uuid = %uuid, "create job skipped: the cluster changed");
            return;
        }
        run_hook(&self.hooks().after_read, uuid).await;
        // Magnum's conductor generates the cluster's CAs and client
        // certificate before it calls the driver (cluster_create).
        match self.claim_with_certificates(&job.ctx, &cl, stop).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::info!(cluster_uuid = %uuid, "create job skipped: the cluster changed");
                return;
            }
            Err(reason) => {
                self.fail_create(&job.ctx, uuid, &reason).await;
                return;
            }
        }
        // Only the driver call is serialised with the delete path, which
        // re-reads the status under the mutex.
        let _lock = self.lock_cluster(uuid).await;
        self.call_create(job).await;
    }

    /// CREATE_FAILED with `reason`, unless the cluster left
    /// CREATE_IN_PROGRESS meanwhile (a delete must stay a delete); and
    /// Magnum's create failure notification.
    async fn fail_create(&self, ctx: &RequestContext, uuid: &str, reason: &str) {
        tracing::error!(cluster_uuid = %uuid, error = %reason, "cluster create failed");
        if let Some((cl, ngs)) = self
            .mark_failed_if(
                uuid,
                Status::CreateFailed,
                reason,
                Some(Status::CreateInProgress),
            )
            .await
        {
            self.notifier()
                .cluster_event(ctx, &cl, &ngs, Action::Create, Outcome::Failure);
        }
    }

    /// Generates and stores the cluster's certificates
    /// ([`Conductor::generate_cluster_certificates`]), then saves their
    /// references if the cluster still waits for its create job (`true`).
    /// Otherwise (deleted, changed, claimed by another job) the
    /// certificates stored are removed again
    /// ([`Conductor::delete_cluster_certificates`]) and it answers `false`;
    /// a delete that stops the generation ([`Conductor::stop_certificates`])
    /// drops it between two keys, and nothing stays stored. `Err` is the
    /// reason of a failure.
    async fn claim_with_certificates(
        &self,
        ctx: &RequestContext,
        cl: &Cluster,
        stop: StopRegistration,
    ) -> Result<bool, String> {
        let uuid = cl.uuid.as_str();
        run_hook(&self.hooks().before_certificates, uuid).await;
        let mut made = cl.clone();
        let generated = tokio::select! {
            biased;
            () = stop.notify.notified() => None,
            r = self.generate_cluster_certificates(ctx, &mut made) => Some(r),
        };
        drop(stop);
        match generated {
            // A delete stopped the generation: what was stored is removed
            // by the generation itself.
            None => return Ok(false),
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(e.to_string()),
        }
        run_hook(&self.hooks().before_save, uuid).await;
        let claimed = self
            .db()
            .in_tx(|tx| {
                let made = &made;
                Box::pin(async move {
                    let all = Scope::ALL_PROJECTS;
                    let mut row = match tx.for_update().get_cluster_by_uuid(uuid, &all).await {
                        Ok(row) => row,
                        Err(e) if e.is_not_found() => return Ok::<_, Error>(false),
                        Err(e) => return Err(e.into()),
                    };
                    if !create_pending(&row) {
                        return Ok(false);
                    }
                    row.ca_cert_ref.clone_from(&made.ca_cert_ref);
                    row.etcd_ca_cert_ref.clone_from(&made.etcd_ca_cert_ref);
                    row.front_proxy_ca_cert_ref
                        .clone_from(&made.front_proxy_ca_cert_ref);
                    row.magnum_cert_ref.clone_from(&made.magnum_cert_ref);
                    tx.q()
                        .update_cluster(&mut row, &CERTIFICATE_COLUMNS)
                        .await?;
                    Ok(true)
                })
            })
            .await;
        match claimed {
            Ok(true) => Ok(true),
            Ok(false) => {
                // Each failure is logged; the references are dropped anyway.
                let _ = self.delete_cluster_certificates(&mut made).await;
                Ok(false)
            }
            Err(e) => {
                tracing::error!(cluster_uuid = %uuid, error = %e, "save certificate references");
                // Each failure is logged; the references are dropped anyway.
                let _ = self.delete_cluster_certificates(&mut made).await;
                Err(MagnumError::certificates_to_cluster_failed(uuid).message)
            }
        }
    }

    /// Calls the driver's create on the current rows and saves its answer,
    /// unless the cluster left CREATE_IN_PROGRESS meanwhile.
    async fn call_create(&self, job: &Job) {
        let uuid = job.uuid.as_str();
        let st = match self.cluster_state(uuid).await {
            Ok(st) => st,
            Err(e) => {
                tracing::error!(cluster_uuid = %uuid, error = %e, "read cluster state");
                return;
            }
        };
        if st.cluster.status != Some(Status::CreateInProgress) {
            tracing::info!(cluster_uuid = %uuid, "create job skipped: the cluster changed");
            return;
        }
        self.notify_state(&job.ctx, &st, Action::Create, Outcome::Pending);
        let cctx = if job.service {
            CallContext::admin()
        } else {
            call_ctx(&job.ctx)
        };
        let timeout = u32::try_from(st.cluster.create_timeout.unwrap_or(0).max(0)).unwrap_or(0);
        run_hook(&self.hooks().before_driver, uuid).await;
        let answer = match self.driver_of(&st.template) {
            Ok(drv) => {
                let answer = drv.create_cluster(&cctx, &st, timeout).await;
                let call = Call::new(Operation::CreateCluster, "create-cluster");
                match self.gate(&drv, call, &st, answer) {
                    Ok(upd) => Ok(upd),
                    Err(e) => {
                        // A failure that made something keeps its ids.
                        self.keep_after_failure(&st, &e).await;
                        Err(e.status_reason())
                    }
                }
            }
            Err(e) => Err(e.to_string()),
        };
        match answer {
            Ok(upd) => match self.save_update(&upd, &st).await {
                Ok(Saved::Stale) => {
                    // A delete (or another process's poll) moved the cluster
                    // on: only the driver's id is kept, so that the delete
                    // reaches what the driver created.
                    self.save_stack_id(&upd).await;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(cluster_uuid = %uuid, error = %e, "save driver update");
                }
            },
            Err(reason) => self.fail_create(&job.ctx, uuid, &reason).await,
        }
    }

    /// Stops the certificate generation of this process's create job for
    /// `uuid`, if one is running: the cluster is being deleted.
    pub(crate) fn stop_certificates(&self, uuid: &str) {
        if let Some(stop) = lock(&self.work.jobs.generating).get(uuid) {
            // A permit is kept if the job is not waiting yet.
            stop.notify_one();
        }
    }

    /// Takes the in-process mutex of a cluster.
    pub(crate) async fn lock_cluster(&self, uuid: &str) -> ClusterLock {
        let (m, contended) = {
            let mut locks = lock(&self.work.jobs.locks);
            let entry = locks
                .entry(uuid.to_string())
                .or_insert_with(|| (Arc::new(tokio::sync::Mutex::new(())), 0));
            entry.1 += 1;
            (entry.0.clone(), entry.1 > 1)
        };
        // Counted from here: dropping this future while it waits releases
        // the count.
        let mut held = ClusterLock {
            conductor: self.clone(),
            uuid: uuid.to_string(),
            guard: None,
        };
        if contended {
            run_hook(&self.hooks().lock_waits, uuid).await;
        }
        held.guard = Some(m.lock_owned().await);
        held
    }

    /// The status loop's part in cluster creation: given a cluster row it
    /// listed, whether the loop must leave the cluster alone this time
    /// (`true`) rather than poll it. That is so while a create job of this
    /// process is queued or running, and for a cluster that still waits for
    /// its create job (polling it would let a driver report on what was
    /// never created). Once such a cluster is older than
    /// [`CREATE_ORPHAN_AGE`], the process that accepted it is presumed gone
    /// and the job runs here, now, with the service's credentials and the
    /// cluster's project and user as the owners of the certificates.
    pub async fn resume_create(&self, cl: &Cluster) -> bool {
        if self.is_busy(&cl.uuid) {
            return true;
        }
        if !create_pending(cl) {
            return false;
        }
        let age = self.now() - cl.created_at;
        if age < chrono::Duration::from_std(CREATE_ORPHAN_AGE).unwrap_or(chrono::Duration::MAX) {
            return true;
        }
        let Some(busy) = self.mark_busy(&cl.uuid) else {
            return true;
        };
        tracing::warn!(cluster_uuid = %cl.uuid, "resuming a create whose job never ran");
        let ctx = RequestContext {
            project_id: cl.project_id.clone(),
            user_id: cl.user_id.clone(),
            ..RequestContext::default()
        };
        self.run_create_job(Job {
            ctx,
            uuid: cl.uuid.clone(),
            service: true,
            _busy: Some(busy),
        })
        .await;
        true
    }
}
