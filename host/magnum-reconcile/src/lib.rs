//! The status loop: every tick, the one instance that holds the lease
//! (the lock row, [`Conductor::acquire_reconciler_lease`], or with a
//! management cluster its coordination Lease, [`crate::watch::lease`])
//! brings the clusters' rows up to date: it asks the drivers for the
//! status of every cluster in progress, saves what they report, fails
//! operations past their deadline and removes the clusters whose deletion
//! completed. It runs in `openkeel-magnum reconciler` and inside
//! `all-in-one`; everything it changes goes through the conductor.
//!
//! With a management cluster, a cluster whose driver declares `watches`
//! (granted) is watched instead of polled: an object change reaches its
//! rows through `derive-status` over a snapshot of the shared watches,
//! after a debounce, and the tick (the resync) derives the status of the
//! watched clusters in progress again, for deadlines and anything missed.
//!
//! Magnum: magnum/service/periodic.py (`sync_cluster_status`).

pub mod watch;

// The layers below, by the names the modules use.
use magnum_conductor as conductor;
#[cfg(test)]
use magnum_db as db;
use magnum_integrations::{management, traces};

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use chrono::NaiveDateTime;
use driver_host::CallContext;
use magnum_domain::Status;
use magnum_domain::models::Cluster;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use crate::conductor::{Conductor, HEALTH_POLLED, POLLED, PollPass, Source};
use crate::watch::WatchHub;
use crate::watch::lease::KubeLease;

/// What went wrong in a pass of the status loop.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The database lease could not be taken or renewed.
    #[error("acquire lease: {0}")]
    Lease(#[source] conductor::Error),
    /// The clusters of the pass could not be read.
    #[error("start poll pass: {0}")]
    Start(#[source] conductor::Error),
    /// Clusters whose status could not be followed, and deletions that
    /// could not be finished, each with its cause; the others went on.
    #[error("{}", describe(.unfollowed, .unfinished))]
    Clusters {
        unfollowed: Vec<Unfollowed>,
        unfinished: Vec<FinishError>,
    },
}

fn describe(unfollowed: &[Unfollowed], unfinished: &[FinishError]) -> String {
    let parts: Vec<String> = unfollowed
        .iter()
        .map(ToString::to_string)
        .chain(unfinished.iter().map(ToString::to_string))
        .collect();
    parts.join("; ")
}

/// A cluster a pass could not follow, and why.
pub type Unfollowed = conductor::ClusterFailure<FollowError>;

/// Why a pass could not follow a cluster.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    /// Its status could not be polled, derived or saved.
    #[error("{0}")]
    Status(#[source] conductor::Error),
    /// It could not be failed past its deadline.
    #[error("enforce its deadline: {0}")]
    Deadline(#[source] conductor::Error),
    /// Its status work outlasted the poll timeout.
    #[error("timed out after {0:?}")]
    TimedOut(Duration),
}

/// Why the clusters whose deletion completed were not all removed.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    #[error(transparent)]
    Unfinished(#[from] conductor::DeletesUnfinished),
    #[error("finish cluster deletions: timed out after {0:?}")]
    TimedOut(Duration),
}

/// How many deleted clusters one transaction removes.
const FINISH_BATCH: usize = 100;

/// The shortest a tick waits for the polls it started.
const MIN_TICK_WAIT: Duration = Duration::from_secs(1);

/// The shortest debounce of a watched cluster's changes.
pub const MIN_DEBOUNCE: Duration = Duration::from_millis(500);

/// The watches of a reconciler over a management cluster, and the Lease
/// that makes it the active one.
pub struct Watching {
    pub hub: Arc<WatchHub>,
    pub lease: Arc<KubeLease>,
    /// The hub's channel naming the clusters an object change concerns
    /// (taken by [`Reconciler::run`]).
    changed: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
}

impl Watching {
    /// The watches of `hub`, whose changes come on `changed`, under
    /// `lease`.
    pub fn new(
        hub: Arc<WatchHub>,
        changed: mpsc::UnboundedReceiver<String>,
        lease: Arc<KubeLease>,
    ) -> Watching {
        Watching {
            hub,
            lease,
            changed: Mutex::new(Some(changed)),
        }
    }
}

/// How a cluster's status is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// By its driver's `poll-status`.
    Poll,
    /// By watch and `derive-status`.
    Watch,
}

/// What the reconciler decided for a cluster, from the rows with this
/// `updated_at` (asked again when they change).
#[derive(Clone, Debug)]
struct Registration {
    updated_at: Option<NaiveDateTime>,
    mode: Mode,
    /// The package of its driver, whose slots its work takes.
    package: String,
}

/// How a [`Reconciler`] runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Between ticks (Magnum's periodic interval, 10 s; 1 s in
    /// all-in-one).
    pub interval: Duration,
    /// How long the lease stays valid without renewal (3 × `interval`
    /// when zero).
    pub lease: Duration,
    /// Names this instance in the lease.
    pub holder: String,
    /// Bounds the work on one cluster in a tick.
    pub poll_timeout: Duration,
    /// DELETE_IN_PROGRESS without a change for longer than this becomes
    /// DELETE_FAILED (zero: no deadline).
    pub delete_timeout: Duration,
    /// The polls of one driver's clusters that run at a time
    /// (`[drivers]/status_concurrency`).
    pub per_driver: usize,
    /// How often the health of complete clusters is refreshed
    /// (`[kubernetes]/health_polling_interval`); `None`: never. Watched
    /// clusters have theirs from their objects.
    pub health_interval: Option<Duration>,
    /// How long the changes of a watched cluster are gathered before its
    /// status is derived (at least half a second).
    pub debounce: Duration,
}

impl Settings {
    /// The defaults for `holder`: a 10 s tick, a 30 s lease, a minute per
    /// cluster, an hour for a deletion, four polls of a driver at a time,
    /// and no health refresh.
    pub fn new(holder: impl Into<String>) -> Settings {
        Settings {
            interval: Duration::from_secs(10),
            lease: Duration::ZERO,
            holder: holder.into(),
            poll_timeout: Duration::from_secs(60),
            delete_timeout: Duration::from_secs(3600),
            per_driver: 4,
            health_interval: None,
            debounce: MIN_DEBOUNCE,
        }
    }

    fn lease(&self) -> Duration {
        if self.lease.is_zero() {
            self.interval * 3
        } else {
            self.lease
        }
    }
}

/// The polls in flight, which may outlive the tick that started them.
#[derive(Default)]
struct Flight {
    /// The clusters being polled.
    clusters: Mutex<HashSet<String>>,
    /// The slots of each driver package.
    drivers: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Clusters whose deletion completed, to be removed.
    done: Mutex<Vec<Cluster>>,
    /// The clusters that could not be followed, for the next tick's answer.
    errors: Mutex<Vec<Unfollowed>>,
    /// When the health of complete clusters was last refreshed.
    health_at: Mutex<Option<tokio::time::Instant>>,
    /// How each cluster's status is followed, when watching.
    registered: Mutex<HashMap<String, Registration>>,
    /// Watched clusters whose status is to be derived: when, and when the
    /// first change not yet derived arrived.
    pending: Mutex<HashMap<String, Pending>>,
    /// Derivations of watched changes done, and the time from each
    /// change's arrival to its status being derived, summed (nanoseconds).
    derived: std::sync::atomic::AtomicU64,
    lag_ns: std::sync::atomic::AtomicU64,
    /// The clusters in progress the last pass found.
    in_progress: std::sync::atomic::AtomicUsize,
    /// Whether the last pass held the lease (the database's when not
    /// watching).
    leading: std::sync::atomic::AtomicBool,
}

/// A watched cluster waiting for its status to be derived.
#[derive(Clone, Copy)]
struct Pending {
    due: tokio::time::Instant,
    arrived: tokio::time::Instant,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A cluster's poll in flight: its place in [`Flight::clusters`], given
/// back when the poll ends, and the slots of its driver it waits for.
struct Slot {
    flight: Arc<Flight>,
    uuid: String,
    driver: Arc<Semaphore>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        lock(&self.flight.clusters).remove(&self.uuid);
    }
}

/// What the status loop holds at one moment, for metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gauges {
    /// The clusters in progress (`*_IN_PROGRESS`) the last pass found.
    pub in_progress: usize,
    /// Clusters whose status is being polled.
    pub polling: usize,
    /// Watched clusters whose status waits to be derived.
    pub pending: usize,
    /// Statuses derived from watched changes since the start.
    pub derived: u64,
    /// The time from each of those changes' arrival to its status being
    /// derived (the debounce included), summed.
    pub lag: Duration,
    /// The watches kept on the management cluster.
    pub reflectors: usize,
    /// The objects they hold.
    pub objects: usize,
    /// Whether this instance holds the lease: the Lease of the management
    /// cluster when watching, else the database's, as of the last pass.
    pub lease_held: bool,
}

/// The background status loop.
#[derive(Clone)]
pub struct Reconciler {
    conductor: Conductor,
    settings: Settings,
    flight: Arc<Flight>,
    watching: Option<Arc<Watching>>,
}

impl Reconciler {
    /// A reconciler over `conductor` that polls.
    pub fn new(conductor: Conductor, settings: Settings) -> Reconciler {
        Reconciler {
            conductor,
            settings,
            flight: Arc::default(),
            watching: None,
        }
    }

    /// A reconciler that watches the management cluster for the drivers
    /// that declare `watches`, under its Lease.
    pub fn watching(conductor: Conductor, settings: Settings, watching: Watching) -> Reconciler {
        Reconciler {
            watching: Some(Arc::new(watching)),
            ..Reconciler::new(conductor, settings)
        }
    }

    /// What the loop holds now.
    pub fn gauges(&self) -> Gauges {
        let mut g = Gauges {
            in_progress: self
                .flight
                .in_progress
                .load(std::sync::atomic::Ordering::Relaxed),
            polling: lock(&self.flight.clusters).len(),
            pending: lock(&self.flight.pending).len(),
            derived: self
                .flight
                .derived
                .load(std::sync::atomic::Ordering::Relaxed),
            lag: Duration::from_nanos(
                self.flight
                    .lag_ns
                    .load(std::sync::atomic::Ordering::Relaxed),
            ),
            lease_held: self
                .flight
                .leading
                .load(std::sync::atomic::Ordering::Relaxed),
            ..Gauges::default()
        };
        if let Some(w) = &self.watching {
            let size = w.hub.size();
            g.reflectors = size.reflectors;
            g.objects = size.objects;
            g.lease_held = w.lease.held();
        }
        g
    }

    /// Ticks every interval until `stop` resolves, then gives the lease
    /// up. Tick errors are logged. A watching reconciler also holds its
    /// Lease and derives the status of watched clusters as their objects
    /// change.
    pub async fn run(self, stop: impl std::future::Future<Output = ()>) {
        let (stopping, stopped) = tokio::sync::watch::channel(false);
        let until_stop = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        let mut background = JoinSet::new();
        if let Some(w) = &self.watching {
            let lease = w.lease.clone();
            let stop = until_stop(stopped.clone());
            background.spawn(async move { lease.run(stop).await });
            let changed = lock(&w.changed).take();
            if let Some(changed) = changed {
                let me = self.clone();
                let stop = until_stop(stopped.clone());
                background.spawn(async move { me.follow(changed, stop).await });
            }
        }
        let mut tick = tokio::time::interval(self.settings.interval.max(Duration::from_millis(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => break,
                _ = tick.tick() => {
                    if let Err(e) = self.tick().await {
                        tracing::error!(error = %e, "reconcile tick");
                    }
                }
            }
        }
        let _ = stopping.send(true);
        while background.join_next().await.is_some() {}
        if self.watching.is_none()
            && let Err(e) = self
                .conductor
                .release_reconciler_lease(&self.settings.holder)
                .await
        {
            tracing::warn!(error = %e, "release reconciler lease");
        }
    }

    /// Whether this instance is the active reconciler: it holds the
    /// database lease (taken at each tick) or the coordination Lease.
    async fn lead(&self) -> Result<bool, PassError> {
        if let Some(w) = &self.watching {
            return Ok(w.lease.held());
        }
        let (holder, lease) = (&self.settings.holder, self.settings.lease());
        self.conductor
            .acquire_reconciler_lease(holder, lease)
            .await
            .map_err(PassError::Lease)
    }

    /// Receives the clusters object changes concern and derives their
    /// status once their changes have settled for the debounce, while
    /// this instance holds the Lease, until `stop` resolves.
    async fn follow(
        &self,
        mut changed: mpsc::UnboundedReceiver<String>,
        stop: impl std::future::Future<Output = ()>,
    ) {
        tokio::pin!(stop);
        let debounce = self.settings.debounce.max(MIN_DEBOUNCE);
        loop {
            let next = lock(&self.flight.pending).values().map(|p| p.due).min();
            let sleep = tokio::time::sleep_until(
                next.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(3600)),
            );
            tokio::select! {
                () = &mut stop => break,
                uuid = changed.recv() => match uuid {
                    Some(uuid) => self.schedule(uuid, debounce, tokio::time::Instant::now()),
                    None => break,
                },
                () = sleep => self.derive_due(debounce),
            }
        }
    }

    /// Derives `uuid`'s status after `after`, unless it is already due; the
    /// change to derive arrived at `arrived`.
    fn schedule(&self, uuid: String, after: Duration, arrived: tokio::time::Instant) {
        let due = tokio::time::Instant::now() + after;
        lock(&self.flight.pending)
            .entry(uuid)
            .or_insert(Pending { due, arrived });
    }

    /// Starts the derivations that are due, each on a task of its own in
    /// its driver's slots; a cluster whose status work is in flight is
    /// tried again after another debounce.
    fn derive_due(&self, debounce: Duration) {
        let now = tokio::time::Instant::now();
        let due: Vec<(String, tokio::time::Instant)> = {
            let mut pending = lock(&self.flight.pending);
            let due: Vec<(String, tokio::time::Instant)> = pending
                .iter()
                .filter(|(_, p)| p.due <= now)
                .map(|(u, p)| (u.clone(), p.arrived))
                .collect();
            for (u, _) in &due {
                pending.remove(u);
            }
            due
        };
        let Some(w) = &self.watching else {
            return;
        };
        if !w.lease.held() {
            return;
        }
        for (uuid, arrived) in due {
            let package = match lock(&self.flight.registered).get(&uuid) {
                Some(r) if r.mode == Mode::Watch => r.package.clone(),
                _ => continue,
            };
            let Some(slot) = self.slot_for(&uuid, package) else {
                self.schedule(uuid, debounce, arrived);
                continue;
            };
            let me = self.clone();
            tokio::spawn(async move {
                let Ok(_permit) = slot.driver.clone().acquire_owned().await else {
                    return;
                };
                let _slot = slot;
                me.derive_changed(&uuid).await;
                let lag = u64::try_from(arrived.elapsed().as_nanos()).unwrap_or(u64::MAX);
                me.flight
                    .lag_ns
                    .fetch_add(lag, std::sync::atomic::Ordering::Relaxed);
                me.flight
                    .derived
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            });
        }
    }

    /// Derives the status of a watched cluster from what the watches hold
    /// now, and removes it when its deletion completed.
    async fn derive_changed(&self, uuid: &str) {
        let Some(w) = &self.watching else {
            return;
        };
        let Some(selectors) = w.hub.selectors(uuid) else {
            return;
        };
        let snap = w.hub.snapshot(&selectors);
        let source = Source::Snapshot(snap.observations, snap.bytes);
        let work = self.conductor.derive_cluster(uuid, source);
        match tokio::time::timeout(self.settings.poll_timeout, work).await {
            Ok(Ok(Some(cl))) if cl.status == Some(Status::DeleteComplete) => {
                if let Err(e) = self.finish(&[cl]).await {
                    // Retried by the next pass, which lists the cluster.
                    tracing::error!(cluster_uuid = %uuid, error = %e, "finish a watched deletion");
                }
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) if e.client().is_some_and(|m| m.status == 404) => self.unregister(uuid),
            Ok(Err(e)) => {
                tracing::error!(cluster_uuid = %uuid, error = %e, "derive cluster status")
            }
            Err(_) => tracing::error!(cluster_uuid = %uuid, "derive cluster status: timed out"),
        }
    }

    /// Forgets how a cluster was followed (it is gone, or this instance
    /// stopped leading).
    fn unregister(&self, uuid: &str) {
        lock(&self.flight.registered).remove(uuid);
        if let Some(w) = &self.watching {
            w.hub.forget(uuid);
        }
    }

    /// One pass: take or renew the lease (without it, nothing happens;
    /// a watching reconciler then watches nothing), then poll every
    /// cluster in progress that is not being polled already (when
    /// watching: register the clusters whose rows changed, and derive the
    /// status of the watched ones in progress), each on a task of its own,
    /// at most
    /// [`Settings::per_driver`] of one driver at a time (the others of
    /// that driver wait for a slot). The pass waits for its polls up to an
    /// interval: the polls of a slow or looping driver (until their
    /// deadline) go on in the background and hold only their driver's
    /// slots, so that one driver cannot delay another's clusters. The clusters whose deletion completed are then
    /// removed. The errors of the pass (and of polls that finished since
    /// the last) come back joined; one cluster's failure does not stop the
    /// others.
    pub async fn tick(&self) -> Result<(), PassError> {
        let c = &self.conductor;
        let leading = self.lead().await;
        self.flight.leading.store(
            matches!(leading, Ok(true)),
            std::sync::atomic::Ordering::Relaxed,
        );
        if !leading? {
            // Another instance reconciles: this one watches nothing.
            if self.watching.is_some() {
                let all: Vec<String> = lock(&self.flight.registered).keys().cloned().collect();
                for uuid in all {
                    self.unregister(&uuid);
                }
            }
            return Ok(());
        }
        let health = self.health_due();
        let pass = if self.watching.is_some() {
            c.start_full_pass().await
        } else {
            c.start_poll_pass(health).await
        };
        let pass = Arc::new(pass.map_err(PassError::Start)?);
        self.flight.in_progress.store(
            pass.clusters
                .iter()
                .filter(|c| c.status.is_some_and(Status::is_in_progress))
                .count(),
            std::sync::atomic::Ordering::Relaxed,
        );
        if self.watching.is_some() {
            // The clusters gone since the last pass are watched no more.
            let listed: HashSet<&str> = pass.clusters.iter().map(|c| c.uuid.as_str()).collect();
            let gone: Vec<String> = lock(&self.flight.registered)
                .keys()
                .filter(|u| !listed.contains(u.as_str()))
                .cloned()
                .collect();
            for uuid in gone {
                self.unregister(&uuid);
            }
        }
        let mut polls = JoinSet::new();
        // The pass's span (traces on), started with its first work.
        let mut span: Option<crate::traces::Pass> = None;
        let mut polls_started = 0;
        for cl in &pass.clusters {
            let Some(work) = self.work_for(cl, health) else {
                continue;
            };
            let Some(slot) = self.slot(&pass, cl) else {
                continue;
            };
            let (me, pass, cl) = (self.clone(), pass.clone(), cl.clone());
            let span = span.get_or_insert_with(crate::traces::Pass::start);
            polls_started += 1;
            polls.spawn(span.bind(async move {
                let Ok(_permit) = slot.driver.clone().acquire_owned().await else {
                    return;
                };
                let _slot = slot;
                // A create whose job has not run yet is not polled; an
                // orphaned one is finished here.
                if me.conductor.resume_create(&cl).await {
                    return;
                }
                let mode = match work {
                    Work::Register => me.register(&pass, &cl).await,
                    Work::Follow(mode) => mode,
                };
                if !due(mode, &cl, health) {
                    return;
                }
                match me.reconcile(&pass, &cl, mode).await {
                    Ok(Some(done)) => lock(&me.flight.done).push(done),
                    Ok(None) => {}
                    Err(cause) => {
                        tracing::error!(cluster_uuid = %cl.uuid, error = %cause, "reconcile cluster");
                        lock(&me.flight.errors).push(Unfollowed::new(&cl.uuid, cause));
                    }
                }
            }));
        }
        let wait = self.settings.interval.max(MIN_TICK_WAIT);
        let waited =
            tokio::time::timeout(wait, async { while polls.join_next().await.is_some() {} }).await;
        if waited.is_err() {
            // The polls still running finish on their own.
            polls.detach_all();
        }
        let unfollowed = std::mem::take(&mut *lock(&self.flight.errors));
        if let Some(span) = span {
            span.end(polls_started, unfollowed.len());
        }
        let mut unfinished = Vec::new();
        loop {
            let batch: Vec<Cluster> = {
                let mut done = lock(&self.flight.done);
                let n = done.len().min(FINISH_BATCH);
                done.drain(..n).collect()
            };
            if batch.is_empty() {
                break;
            }
            if let Err(e) = self.finish(&batch).await {
                tracing::error!(error = %e, "finish cluster deletions");
                unfinished.push(e);
            }
        }
        if unfollowed.is_empty() && unfinished.is_empty() {
            Ok(())
        } else {
            Err(PassError::Clusters {
                unfollowed,
                unfinished,
            })
        }
    }

    /// What the pass does for `cl`: asks its driver what it watches (its
    /// rows changed since it was asked), follows its status as decided, or
    /// nothing.
    fn work_for(&self, cl: &Cluster, health: bool) -> Option<Work> {
        if self.watching.is_none() {
            return Some(Work::Follow(Mode::Poll));
        }
        match lock(&self.flight.registered).get(&cl.uuid) {
            Some(r) if r.updated_at == cl.updated_at => {
                due(r.mode, cl, health).then_some(Work::Follow(r.mode))
            }
            _ => Some(Work::Register),
        }
    }

    /// Asks the driver of `cl` what it watches: granted selectors are
    /// registered with the hub and the cluster watched; no selectors, or
    /// one its grants do not cover, and the cluster is polled.
    async fn register(&self, pass: &PollPass, cl: &Cluster) -> Mode {
        let Some(w) = &self.watching else {
            return Mode::Poll;
        };
        let c = &self.conductor;
        let package = pass.driver_package(c, cl);
        let found = pass
            .state(cl)
            .and_then(|st| c.driver_of(&st.template).ok().map(|d| (d, st)));
        let mode = match found {
            None => Mode::Poll,
            Some((drv, st)) => {
                let ctx = CallContext::admin().at(c.now());
                match drv.watches(&ctx, &st).await {
                    Ok(selectors) if !selectors.is_empty() => {
                        match selectors.iter().find_map(|s| drv.may_watch(s).err()) {
                            Some(refusal) => {
                                drv.note_watch_refusal(Some(refusal));
                                Mode::Poll
                            }
                            None => {
                                w.hub.register(&cl.uuid, selectors);
                                Mode::Watch
                            }
                        }
                    }
                    Ok(_) => Mode::Poll,
                    Err(e) => {
                        tracing::warn!(cluster_uuid = %cl.uuid, error = %e, "watches: the cluster is polled");
                        Mode::Poll
                    }
                }
            }
        };
        if mode == Mode::Poll {
            w.hub.forget(&cl.uuid);
        }
        lock(&self.flight.registered).insert(
            cl.uuid.clone(),
            Registration {
                updated_at: cl.updated_at,
                mode,
                package,
            },
        );
        mode
    }

    /// Whether this pass refreshes the health of complete clusters too (as
    /// Magnum's health monitor, every `health_interval` from the first
    /// pass on); it then counts as refreshed.
    fn health_due(&self) -> bool {
        let Some(every) = self.settings.health_interval else {
            return false;
        };
        let now = tokio::time::Instant::now();
        let mut at = lock(&self.flight.health_at);
        if at.is_some_and(|t| now.duration_since(t) < every) {
            return false;
        }
        *at = Some(now);
        true
    }

    /// The place of `cl` among the polls in flight: `None` while it is
    /// being polled already.
    fn slot(&self, pass: &PollPass, cl: &Cluster) -> Option<Slot> {
        self.slot_for(&cl.uuid, pass.driver_package(&self.conductor, cl))
    }

    /// The place of the cluster `uuid` of the driver `package` among the
    /// work in flight.
    fn slot_for(&self, uuid: &str, package: String) -> Option<Slot> {
        if !lock(&self.flight.clusters).insert(uuid.to_string()) {
            return None;
        }
        let driver = lock(&self.flight.drivers)
            .entry(package)
            .or_insert_with(|| Arc::new(Semaphore::new(self.settings.per_driver.max(1))))
            .clone();
        Some(Slot {
            flight: self.flight.clone(),
            uuid: uuid.to_string(),
            driver,
        })
    }

    async fn finish(&self, batch: &[Cluster]) -> Result<(), FinishError> {
        let timeout = self.settings.poll_timeout;
        match tokio::time::timeout(timeout, self.conductor.finish_deletes(batch)).await {
            Ok(r) => Ok(r?),
            Err(_) => Err(FinishError::TimedOut(timeout)),
        }
    }

    /// Polls one cluster of the pass (or derives its status from what the
    /// watches hold), then fails it if it is still in progress past its
    /// deadline. It returns the cluster when its deletion has completed
    /// (to be removed).
    async fn reconcile(
        &self,
        pass: &PollPass,
        listed: &Cluster,
        mode: Mode,
    ) -> Result<Option<Cluster>, FollowError> {
        let c = &self.conductor;
        let source = match (mode, &self.watching) {
            (Mode::Watch, Some(w)) => match w.hub.selectors(&listed.uuid) {
                Some(selectors) => {
                    let snap = w.hub.snapshot(&selectors);
                    Source::Snapshot(snap.observations, snap.bytes)
                }
                None => Source::Poll,
            },
            _ => Source::Poll,
        };
        let work = async {
            let polled = match c.status_in_pass(pass, listed, source).await {
                Ok(Some(cl)) => cl,
                // Busy: its operation saves the result.
                Ok(None) => return Ok(None),
                // Deleted meanwhile.
                Err(e) if e.client().is_some_and(|m| m.status == 404) => return Ok(None),
                Err(e) => {
                    // A cluster whose driver faults is still held to its
                    // deadline.
                    c.enforce_deadline(listed, self.settings.delete_timeout)
                        .await
                        .map_err(FollowError::Deadline)?;
                    return Err(FollowError::Status(e));
                }
            };
            if polled.status == Some(Status::DeleteComplete) {
                return Ok(Some(polled));
            }
            c.enforce_deadline(&polled, self.settings.delete_timeout)
                .await
                .map_err(FollowError::Deadline)?;
            Ok(None)
        };
        let timeout = self.settings.poll_timeout;
        match tokio::time::timeout(timeout, work).await {
            Ok(r) => r,
            Err(_) => Err(FollowError::TimedOut(timeout)),
        }
    }
}

/// What a pass does for a cluster.
#[derive(Clone, Copy, Debug)]
enum Work {
    /// Ask its driver what it watches, then follow it.
    Register,
    /// Follow it as decided.
    Follow(Mode),
}

/// Whether a pass does status work for `cl`: a polled cluster in progress
/// (or whose deletion completed), and a complete one when the health is
/// due; a watched one only in progress (its health comes by watch).
fn due(mode: Mode, cl: &Cluster, health: bool) -> bool {
    let Some(status) = cl.status else {
        return false;
    };
    match mode {
        Mode::Poll => POLLED.contains(&status) || (health && HEALTH_POLLED.contains(&status)),
        Mode::Watch => POLLED.contains(&status),
    }
}

#[cfg(test)]
mod tests;
