//! The status loop without Kubernetes: every tick, the one instance that
//! holds the database lease (the lock row, [`Conductor::acquire_reconciler_lease`])
//! asks the drivers for the status of every cluster in progress, saves what
//! they report, fails operations past their deadline and removes the
//! clusters whose deletion completed. It runs in `openkeel-magnum
//! reconciler` and inside `all-in-one`; everything it changes goes through
//! the conductor.
//!
//! Magnum: magnum/service/periodic.py (`sync_cluster_status`).

use std::time::Duration;

use magnum_domain::Status;
use magnum_domain::models::Cluster;

use crate::conductor::{Conductor, PollPass};

/// How many deleted clusters one transaction removes.
const FINISH_BATCH: usize = 100;

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
}

impl Settings {
    /// The defaults for `holder`: a 10 s tick, a 30 s lease, a minute per
    /// cluster and an hour for a deletion.
    pub fn new(holder: impl Into<String>) -> Settings {
        Settings {
            interval: Duration::from_secs(10),
            lease: Duration::ZERO,
            holder: holder.into(),
            poll_timeout: Duration::from_secs(60),
            delete_timeout: Duration::from_secs(3600),
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

/// The background status loop.
#[derive(Clone)]
pub struct Reconciler {
    conductor: Conductor,
    settings: Settings,
}

impl Reconciler {
    /// A reconciler over `conductor`.
    pub fn new(conductor: Conductor, settings: Settings) -> Reconciler {
        Reconciler {
            conductor,
            settings,
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
    /// then poll every cluster in progress. The errors of the pass come
    /// back joined; one cluster's failure does not stop the others.
    pub async fn tick(&self) -> Result<(), String> {
        let c = &self.conductor;
        let (holder, lease) = (&self.settings.holder, self.settings.lease());
        match c.acquire_reconciler_lease(holder, lease).await {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(e) => return Err(format!("acquire lease: {e}")),
        }
        let pass = c
            .start_poll_pass()
            .await
            .map_err(|e| format!("start poll pass: {e}"))?;
        let mut errors = Vec::new();
        let mut deleted: Vec<Cluster> = Vec::new();
        let mut renewed = c.now();
        let renew_after = chrono::Duration::from_std(lease / 3).unwrap_or(chrono::Duration::MAX);
        for cl in &pass.clusters {
            // A long pass renews the lease as it goes, and stops if another
            // instance took it meanwhile.
            if c.now() - renewed > renew_after {
                match c.acquire_reconciler_lease(holder, lease).await {
                    Ok(true) => renewed = c.now(),
                    Ok(false) => {
                        errors.push("lease lost".to_string());
                        break;
                    }
                    Err(e) => {
                        errors.push(format!("lease lost: {e}"));
                        break;
                    }
                }
            }
            // A create whose job has not run yet is not polled; an orphaned
            // one is finished here.
            if c.resume_create(cl).await {
                continue;
            }
            match self.reconcile(&pass, cl).await {
                Ok(Some(done)) => {
                    deleted.push(done);
                    if deleted.len() == FINISH_BATCH {
                        self.finish(&mut deleted, &mut errors).await;
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::error!(cluster_uuid = %cl.uuid, error = %e, "reconcile cluster");
                    errors.push(format!("cluster {}: {e}", cl.uuid));
                }
            }
        }
        self.finish(&mut deleted, &mut errors).await;
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    async fn finish(&self, deleted: &mut Vec<Cluster>, errors: &mut Vec<String>) {
        if deleted.is_empty() {
            return;
        }
        let batch = std::mem::take(deleted);
        match tokio::time::timeout(
            self.settings.poll_timeout,
            self.conductor.finish_deletes(&batch),
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
                Err(e) => return Err(e.to_string()),
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
