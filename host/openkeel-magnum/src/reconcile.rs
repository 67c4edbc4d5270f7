//! The status loop without Kubernetes: every tick, the one instance that
//! holds the database lease (the lock row, [`Conductor::acquire_reconciler_lease`])
//! asks the drivers for the status of every cluster in progress, saves what
//! they report, fails operations past their deadline and removes the
//! clusters whose deletion completed. It runs in `openkeel-magnum
//! reconciler` and inside `all-in-one`; everything it changes goes through
//! the conductor.
//!
//! Magnum: magnum/service/periodic.py (`sync_cluster_status`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use magnum_domain::Status;
use magnum_domain::models::Cluster;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::conductor::{Conductor, PollPass};

/// How many deleted clusters one transaction removes.
const FINISH_BATCH: usize = 100;

/// The shortest a tick waits for the polls it started.
const MIN_TICK_WAIT: Duration = Duration::from_secs(1);

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
}

impl Settings {
    /// The defaults for `holder`: a 10 s tick, a 30 s lease, a minute per
    /// cluster, an hour for a deletion and four polls of a driver at a
    /// time.
    pub fn new(holder: impl Into<String>) -> Settings {
        Settings {
            interval: Duration::from_secs(10),
            lease: Duration::ZERO,
            holder: holder.into(),
            poll_timeout: Duration::from_secs(60),
            delete_timeout: Duration::from_secs(3600),
            per_driver: 4,
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
    /// What went wrong, for the next tick's answer.
    errors: Mutex<Vec<String>>,
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

/// The background status loop.
#[derive(Clone)]
pub struct Reconciler {
    conductor: Conductor,
    settings: Settings,
    flight: Arc<Flight>,
}

impl Reconciler {
    /// A reconciler over `conductor`.
    pub fn new(conductor: Conductor, settings: Settings) -> Reconciler {
        Reconciler {
            conductor,
            settings,
            flight: Arc::default(),
        }
    }

    /// Ticks every interval until `stop` resolves, then gives the lease
    /// up. Tick errors are logged.
    pub async fn run(self, stop: impl std::future::Future<Output = ()>) {
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
        if let Err(e) = self
            .conductor
            .release_reconciler_lease(&self.settings.holder)
            .await
        {
            tracing::warn!(error = %e, "release reconciler lease");
        }
    }

    /// One pass: take or renew the lease (without it, nothing happens),
    /// then poll every cluster in progress that is not being polled
    /// already, each on a task of its own, at most
    /// [`Settings::per_driver`] of one driver at a time (the others of
    /// that driver wait for a slot). The pass waits for its polls up to an
    /// interval: the polls of a slow or looping driver (until their
    /// deadline) go on in the background and hold only their driver's
    /// slots, so that one driver cannot delay another's clusters. The clusters whose deletion completed are then
    /// removed. The errors of the pass (and of polls that finished since
    /// the last) come back joined; one cluster's failure does not stop the
    /// others.
    pub async fn tick(&self) -> Result<(), String> {
        let c = &self.conductor;
        let (holder, lease) = (&self.settings.holder, self.settings.lease());
        match c.acquire_reconciler_lease(holder, lease).await {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(e) => return Err(format!("acquire lease: {e}")),
        }
        let pass = Arc::new(
            c.start_poll_pass()
                .await
                .map_err(|e| format!("start poll pass: {e}"))?,
        );
        let mut polls = JoinSet::new();
        for cl in &pass.clusters {
            let Some(slot) = self.slot(&pass, cl) else {
                continue;
            };
            let (me, pass, cl) = (self.clone(), pass.clone(), cl.clone());
            polls.spawn(async move {
                let Ok(_permit) = slot.driver.clone().acquire_owned().await else {
                    return;
                };
                let _slot = slot;
                // A create whose job has not run yet is not polled; an
                // orphaned one is finished here.
                if me.conductor.resume_create(&cl).await {
                    return;
                }
                match me.reconcile(&pass, &cl).await {
                    Ok(Some(done)) => lock(&me.flight.done).push(done),
                    Ok(None) => {}
                    Err(e) => {
                        tracing::error!(cluster_uuid = %cl.uuid, error = %e, "reconcile cluster");
                        lock(&me.flight.errors).push(format!("cluster {}: {e}", cl.uuid));
                    }
                }
            });
        }
        let wait = self.settings.interval.max(MIN_TICK_WAIT);
        let waited =
            tokio::time::timeout(wait, async { while polls.join_next().await.is_some() {} }).await;
        if waited.is_err() {
            // The polls still running finish on their own.
            polls.detach_all();
        }
        let mut errors = std::mem::take(&mut *lock(&self.flight.errors));
        loop {
            let batch: Vec<Cluster> = {
                let mut done = lock(&self.flight.done);
                let n = done.len().min(FINISH_BATCH);
                done.drain(..n).collect()
            };
            if batch.is_empty() {
                break;
            }
            self.finish(&batch, &mut errors).await;
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    /// The place of `cl` among the polls in flight: `None` while it is
    /// being polled already.
    fn slot(&self, pass: &PollPass, cl: &Cluster) -> Option<Slot> {
        if !lock(&self.flight.clusters).insert(cl.uuid.clone()) {
            return None;
        }
        let package = pass.driver_package(&self.conductor, cl);
        let driver = lock(&self.flight.drivers)
            .entry(package)
            .or_insert_with(|| Arc::new(Semaphore::new(self.settings.per_driver.max(1))))
            .clone();
        Some(Slot {
            flight: self.flight.clone(),
            uuid: cl.uuid.clone(),
            driver,
        })
    }

    async fn finish(&self, batch: &[Cluster], errors: &mut Vec<String>) {
        match tokio::time::timeout(
            self.settings.poll_timeout,
            self.conductor.finish_deletes(batch),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %e, "finish cluster deletions");
                errors.push(e);
            }
            Err(_) => errors.push("finish cluster deletions: timed out".into()),
        }
    }

    /// Polls one cluster of the pass, then fails it if it is still in
    /// progress past its deadline. It returns the cluster when its
    /// deletion has completed (to be removed).
    async fn reconcile(
        &self,
        pass: &PollPass,
        listed: &Cluster,
    ) -> Result<Option<Cluster>, String> {
        let c = &self.conductor;
        let work = async {
            let polled = match c.poll_in_pass(pass, listed).await {
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
                        .map_err(|d| d.to_string())?;
                    return Err(e.to_string());
                }
            };
            if polled.status == Some(Status::DeleteComplete) {
                return Ok(Some(polled));
            }
            c.enforce_deadline(&polled, self.settings.delete_timeout)
                .await
                .map_err(|e| e.to_string())?;
            Ok(None)
        };
        match tokio::time::timeout(self.settings.poll_timeout, work).await {
            Ok(r) => r,
            Err(_) => Err("timed out".into()),
        }
    }
}

#[cfg(test)]
mod tests;
