//! One active reconciler per deployment when a management cluster is
//! configured: a `coordination.k8s.io/v1` Lease, taken and renewed as
//! client-go's leader election does. The holder renews every
//! `retry_period`; another instance takes the Lease over only once it has
//! seen the same record for `lease_duration` (measured on its own clock, so
//! that clocks need not agree). A holder that has not renewed within
//! `renew_deadline` (shorter than `lease_duration`) stops writing: it has
//! stopped before anyone else can start.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};

/// The name of the Lease.
pub const LEASE_NAME: &str = "openkeel-magnum-reconciler";

/// Why the Lease could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// The management cluster did not answer in time.
    #[error("the management cluster did not answer within {} s", .0.as_secs())]
    Unanswered(std::time::Duration),
    /// The management cluster refused or failed a request.
    #[error("{action} Lease {namespace}/{LEASE_NAME}: {source}")]
    Kube {
        action: &'static str,
        namespace: String,
        source: kube::Error,
    },
}

impl LeaseError {
    fn kube(action: &'static str, namespace: &str, source: kube::Error) -> LeaseError {
        LeaseError::Kube {
            action,
            namespace: namespace.to_owned(),
            source,
        }
    }
}

/// How the Lease is held.
#[derive(Clone, Debug)]
pub struct LeaseSettings {
    /// This instance's identity in `holderIdentity`.
    pub holder: String,
    pub namespace: String,
    /// `[capi]/lease_duration`.
    pub duration: Duration,
    /// `[capi]/renew_deadline`.
    pub renew_deadline: Duration,
    /// `[capi]/retry_period`.
    pub retry_period: Duration,
    /// The bound of each call (`[capi]/request_timeout`).
    pub request_timeout: Duration,
}

/// The record last seen: holder and renew time, and when it was first seen.
#[derive(Default)]
struct Seen {
    record: Option<(Option<String>, Option<MicroTime>)>,
    at: Option<Instant>,
    /// When this instance last took or renewed the Lease.
    renewed: Option<Instant>,
}

/// The reconciler's Lease.
pub struct KubeLease {
    api: Api<Lease>,
    settings: LeaseSettings,
    seen: Mutex<Seen>,
}

fn lock(m: &Mutex<Seen>) -> std::sync::MutexGuard<'_, Seen> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn seconds(d: Duration) -> i32 {
    i32::try_from(d.as_secs().max(1)).unwrap_or(i32::MAX)
}

impl KubeLease {
    /// The Lease of `settings.namespace`, through `client`.
    pub fn new(client: kube::Client, settings: LeaseSettings) -> KubeLease {
        KubeLease {
            api: Api::namespaced(client, &settings.namespace),
            settings,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// Whether this instance holds the Lease: it renewed it within the
    /// renew deadline.
    pub fn held(&self) -> bool {
        lock(&self.seen)
            .renewed
            .is_some_and(|t| t.elapsed() < self.settings.renew_deadline)
    }

    /// Takes the Lease when it is free or expired, renews it when held;
    /// whether this instance holds it now.
    pub async fn acquire(&self) -> Result<bool, LeaseError> {
        match tokio::time::timeout(self.settings.request_timeout, self.try_acquire()).await {
            Ok(r) => r,
            Err(_) => Err(LeaseError::Unanswered(self.settings.request_timeout)),
        }
    }

    async fn try_acquire(&self) -> Result<bool, LeaseError> {
        let s = &self.settings;
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let current = self
            .api
            .get_opt(LEASE_NAME)
            .await
            .map_err(|e| LeaseError::kube("read", &s.namespace, e))?;
        let Some(mut lease) = current else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(LEASE_NAME.into()),
                    namespace: Some(s.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(s.holder.clone()),
                    lease_duration_seconds: Some(seconds(s.duration)),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return self
                .write(self.api.create(&PostParams::default(), &lease).await)
                .map_err(|e| LeaseError::kube("create", &s.namespace, e));
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let mine = holder.as_deref() == Some(s.holder.as_str());
        if !mine && holder.is_some() {
            // Another holder: it expires once its record has stood still for
            // its duration, as this instance saw it.
            let record = (holder.clone(), spec.renew_time.clone());
            let duration = spec
                .lease_duration_seconds
                .and_then(|d| u64::try_from(d).ok())
                .map_or(s.duration, Duration::from_secs);
            let mut seen = lock(&self.seen);
            if seen.record.as_ref() != Some(&record) {
                seen.record = Some(record);
                seen.at = Some(Instant::now());
            }
            seen.renewed = None;
            if seen.at.is_some_and(|t| t.elapsed() < duration) {
                return Ok(false);
            }
        }
        let mut next = spec;
        if !mine {
            next.acquire_time = Some(now.clone());
            next.lease_transitions = Some(next.lease_transitions.unwrap_or(0).saturating_add(1));
        }
        next.holder_identity = Some(s.holder.clone());
        next.lease_duration_seconds = Some(seconds(s.duration));
        next.renew_time = Some(now);
        lease.spec = Some(next);
        // The resource version read makes the write conditional: of two
        // instances taking an expired Lease, one gets a conflict.
        self.write(
            self.api
                .replace(LEASE_NAME, &PostParams::default(), &lease)
                .await,
        )
        .map_err(|e| LeaseError::kube("renew", &s.namespace, e))
    }

    /// The outcome of a conditional write: held, lost to another writer
    /// (a conflict), or an error.
    fn write(&self, r: Result<Lease, kube::Error>) -> Result<bool, kube::Error> {
        match r {
            Ok(l) => {
                let mut seen = lock(&self.seen);
                let spec = l.spec.unwrap_or_default();
                seen.record = Some((spec.holder_identity, spec.renew_time));
                seen.at = Some(Instant::now());
                seen.renewed = Some(Instant::now());
                Ok(true)
            }
            Err(kube::Error::Api(e)) if e.code == 409 => {
                lock(&self.seen).renewed = None;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Gives the Lease up, when held, so that another instance takes it at
    /// once (an empty holder and a one-second duration, as client-go's
    /// release).
    pub async fn release(&self) {
        if !self.held() {
            return;
        }
        lock(&self.seen).renewed = None;
        let s = &self.settings;
        let give_up = async {
            let mut lease = self.api.get(LEASE_NAME).await?;
            let mut spec = lease.spec.clone().unwrap_or_default();
            if spec.holder_identity.as_deref() != Some(s.holder.as_str()) {
                return Ok(());
            }
            spec.holder_identity = None;
            spec.lease_duration_seconds = Some(1);
            spec.renew_time = Some(MicroTime(k8s_openapi::jiff::Timestamp::now()));
            lease.spec = Some(spec);
            self.api
                .replace(LEASE_NAME, &PostParams::default(), &lease)
                .await
                .map(|_| ())
        };
        match tokio::time::timeout(s.request_timeout, give_up).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "release the reconciler's Lease"),
            Err(_) => tracing::warn!("release the reconciler's Lease: timed out"),
        }
    }

    /// Takes and renews the Lease every retry period until `stop`
    /// resolves, then releases it. Changes of holder are logged.
    pub async fn run(&self, stop: impl std::future::Future<Output = ()>) {
        tokio::pin!(stop);
        let mut held = false;
        let mut failing = false;
        loop {
            match self.acquire().await {
                Ok(now) => {
                    if now != held {
                        if now {
                            tracing::info!(holder = %self.settings.holder, "reconciler Lease taken: this instance reconciles");
                        } else {
                            tracing::warn!(holder = %self.settings.holder, "reconciler Lease held by another instance");
                        }
                        held = now;
                    }
                    failing = false;
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "reconciler Lease");
                    }
                    failing = true;
                    if held && !self.held() {
                        tracing::warn!(
                            "reconciler Lease not renewed within the renew deadline: writes stop"
                        );
                        held = false;
                    }
                }
            }
            tokio::select! {
                () = &mut stop => break,
                () = tokio::time::sleep(self.settings.retry_period) => {}
            }
        }
        self.release().await;
    }
}
