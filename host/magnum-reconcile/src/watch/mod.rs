//! The drivers' watches over the management cluster: one shared reflector
//! per (api version, kind, namespace) across every cluster and driver,
//! holding the objects without `metadata.managedFields`, indexed by the
//! labels the drivers' selectors name. A change to an object names the
//! clusters whose selectors match it (before or after the change) on the
//! hub's channel; the reconciler debounces those and derives their status
//! from a snapshot ([`WatchHub::snapshot`]).
//!
//! A reflector lists, then watches from the list's resource version; when
//! the watch breaks it resumes (or lists again when its version is too
//! old), with a backoff after errors, and the objects it held stay until
//! the new list is complete: a copy that is filling never reads as objects
//! gone. A kind the server does not serve is observed served = false and
//! asked about again every [`REDISCOVER`]. Watches carry no request
//! timeout (they last); discovery does.
//!
//! The coordination Lease of the active reconciler is in [`lease`].

pub mod lease;
pub mod store;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use driver_host::{KubeObject, Observation, Selector};
use futures::StreamExt;
use kube::api::DynamicObject;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use tokio::sync::mpsc;

use crate::management::ManagementCluster;
pub use store::Store;

/// How often a kind the server did not serve is asked about again (a
/// provider installed later).
pub const REDISCOVER: Duration = Duration::from_secs(60);

/// The first wait after a failed watch or discovery; it doubles up to
/// [`BACKOFF_MAX`], and starts again once a watch has run for a while.
const BACKOFF_MIN: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(10);

/// One watched kind in one namespace (`None`: cluster-scoped).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
}

impl Key {
    fn of(s: &Selector) -> Key {
        Key {
            api_version: s.api_version.clone(),
            kind: s.kind.clone(),
            namespace: s.namespace.clone(),
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.api_version, self.kind)?;
        if let Some(ns) = &self.namespace {
            write!(f, " in {ns}")?;
        }
        Ok(())
    }
}

/// A selector's labels as a map (a repeated key keeps its last value).
fn labels(s: &Selector) -> BTreeMap<String, String> {
    s.labels.iter().cloned().collect()
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The maps are rebuilt from the server at the next list: a panic
    // elsewhere cannot make them worse than stale.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A reflector: its store, and the task that fills it (stopped when the
/// reflector is dropped).
struct Reflector {
    store: Arc<Mutex<Store>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Reflector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the hub holds: the reflectors, and each cluster's selectors.
#[derive(Default)]
struct Inner {
    reflectors: HashMap<Key, Reflector>,
    clusters: HashMap<String, Vec<Selector>>,
}

/// The shared watches of every cluster.
pub struct WatchHub {
    management: Arc<ManagementCluster>,
    inner: Mutex<Inner>,
    changed: mpsc::UnboundedSender<String>,
}

/// A snapshot of what the hub holds for a cluster's selectors.
pub struct Snapshot {
    pub observations: Vec<Observation>,
    /// The bytes of the objects' JSON.
    pub bytes: usize,
}

/// The size of what the hub holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    pub reflectors: usize,
    pub clusters: usize,
    pub objects: usize,
    pub bytes: usize,
}

impl WatchHub {
    /// A hub over the management cluster, and the channel on which it
    /// names the clusters an object change concerns.
    pub fn new(
        management: Arc<ManagementCluster>,
    ) -> (Arc<WatchHub>, mpsc::UnboundedReceiver<String>) {
        let (changed, rx) = mpsc::unbounded_channel();
        let hub = Arc::new(WatchHub {
            management,
            inner: Mutex::new(Inner::default()),
            changed,
        });
        (hub, rx)
    }

    /// `cluster` watches `selectors` from now on (instead of what it
    /// watched before): reflectors start for kinds nobody watched, and stop
    /// for kinds nobody watches any more.
    pub fn register(&self, cluster: &str, selectors: Vec<Selector>) {
        let mut inner = lock(&self.inner);
        if inner.clusters.get(cluster) == Some(&selectors) {
            return;
        }
        let old = inner.clusters.remove(cluster).unwrap_or_default();
        let mut by_key: BTreeMap<Key, Vec<BTreeMap<String, String>>> = BTreeMap::new();
        for s in &selectors {
            by_key.entry(Key::of(s)).or_default().push(labels(s));
        }
        for key in old.iter().map(Key::of) {
            if !by_key.contains_key(&key) {
                unwatch(&mut inner, &key, cluster);
            }
        }
        for (key, labels) in by_key {
            let store = match inner.reflectors.get(&key) {
                Some(r) => r.store.clone(),
                None => {
                    let r = self.start(key.clone());
                    let store = r.store.clone();
                    inner.reflectors.insert(key, r);
                    store
                }
            };
            lock(&store).watch(cluster, labels);
        }
        inner.clusters.insert(cluster.to_string(), selectors);
    }

    /// `cluster` watches nothing any more.
    pub fn forget(&self, cluster: &str) {
        let mut inner = lock(&self.inner);
        let Some(old) = inner.clusters.remove(cluster) else {
            return;
        };
        for key in old.iter().map(Key::of) {
            unwatch(&mut inner, &key, cluster);
        }
    }

    /// The selectors `cluster` watches, if it is registered.
    pub fn selectors(&self, cluster: &str) -> Option<Vec<Selector>> {
        lock(&self.inner).clusters.get(cluster).cloned()
    }

    /// The registered clusters.
    pub fn clusters(&self) -> Vec<String> {
        lock(&self.inner).clusters.keys().cloned().collect()
    }

    /// What the hub holds of `selectors`, in their order.
    pub fn snapshot(&self, selectors: &[Selector]) -> Snapshot {
        let inner = lock(&self.inner);
        let mut bytes = 0;
        let observations = selectors
            .iter()
            .map(|s| {
                let Some(r) = inner.reflectors.get(&Key::of(s)) else {
                    return Observation {
                        selector: s.clone(),
                        served: false,
                        synced: false,
                        objects: Vec::new(),
                    };
                };
                let o = lock(&r.store).observe(&labels(s));
                bytes += o.bytes;
                Observation {
                    selector: s.clone(),
                    served: o.served,
                    synced: o.synced,
                    objects: o.objects.iter().map(|o| (**o).clone()).collect(),
                }
            })
            .collect();
        Snapshot {
            observations,
            bytes,
        }
    }

    /// How much the hub holds.
    pub fn size(&self) -> Size {
        let inner = lock(&self.inner);
        let mut size = Size {
            reflectors: inner.reflectors.len(),
            clusters: inner.clusters.len(),
            ..Size::default()
        };
        for r in inner.reflectors.values() {
            let (n, b) = lock(&r.store).size();
            size.objects += n;
            size.bytes += b;
        }
        size
    }

    /// Starts the reflector of `key`.
    fn start(&self, key: Key) -> Reflector {
        let store = Arc::new(Mutex::new(Store::default()));
        let task = tokio::spawn(reflect(
            self.management.clone(),
            key,
            store.clone(),
            self.changed.clone(),
        ));
        Reflector { store, task }
    }
}

/// `cluster` stops watching `key`; the reflector stops when nobody does.
fn unwatch(inner: &mut Inner, key: &Key, cluster: &str) {
    let idle = match inner.reflectors.get(key) {
        Some(r) => {
            let mut s = lock(&r.store);
            s.unwatch(cluster);
            s.unwatched()
        }
        None => false,
    };
    if idle {
        inner.reflectors.remove(key);
    }
}

/// A doubling wait between attempts, from [`BACKOFF_MIN`] to
/// [`BACKOFF_MAX`].
#[derive(Clone, Debug)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: BACKOFF_MIN }
    }
}

impl Iterator for Backoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let d = self.next;
        self.next = (d * 2).min(BACKOFF_MAX);
        Some(d)
    }
}

impl kube::runtime::utils::Backoff for Backoff {
    fn reset(&mut self) {
        self.next = BACKOFF_MIN;
    }
}

/// The object as a driver sees it: its envelope, and its JSON without
/// `metadata.managedFields`.
fn held(key: &Key, mut obj: DynamicObject) -> Option<KubeObject> {
    obj.metadata.managed_fields = None;
    crate::management::to_object(&key.api_version, &key.kind, obj).ok()
}

/// Names the clusters concerned by a change.
fn tell(changed: &mpsc::UnboundedSender<String>, clusters: Vec<String>) {
    for c in clusters {
        let _ = changed.send(c);
    }
}

/// Fills `store` with the objects of `key` for as long as the reflector
/// lives: discovery (again every [`REDISCOVER`] while the kind is not
/// served), then list and watch, resumed with a backoff after errors.
async fn reflect(
    management: Arc<ManagementCluster>,
    key: Key,
    store: Arc<Mutex<Store>>,
    changed: mpsc::UnboundedSender<String>,
) {
    let mut backoff = Backoff::default();
    loop {
        let api = match management
            .watch_api(&key.api_version, &key.kind, key.namespace.as_deref())
            .await
        {
            Ok(Some(api)) => api,
            Ok(None) => {
                let first = lock(&store).served().is_none();
                tell(&changed, lock(&store).set_served(false));
                if first {
                    tracing::info!(watch = %key, "the management cluster does not serve this kind");
                }
                tokio::time::sleep(REDISCOVER).await;
                continue;
            }
            Err(e) => {
                tracing::warn!(watch = %key, error = %e, "cannot discover a watched kind");
                tokio::time::sleep(Iterator::next(&mut backoff).unwrap_or(BACKOFF_MAX)).await;
                continue;
            }
        };
        tell(&changed, lock(&store).set_served(true));
        let events = watcher::watcher(api, watcher::Config::default()).backoff(Backoff::default());
        futures::pin_mut!(events);
        let mut listing: Option<Vec<KubeObject>> = None;
        let mut failing = false;
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(e) => e,
                Err(e) => {
                    if !failing {
                        tracing::warn!(watch = %key, error = %e, "watch failed; retrying");
                    }
                    failing = true;
                    if not_served(&e) {
                        // The kind went away (a CRD deleted): ask again.
                        break;
                    }
                    continue;
                }
            };
            if failing {
                tracing::info!(watch = %key, "watch resumed");
                failing = false;
            }
            let concerned = match event {
                Event::Init => {
                    listing = Some(Vec::new());
                    Vec::new()
                }
                Event::InitApply(o) => {
                    if let (Some(l), Some(o)) = (listing.as_mut(), held(&key, o)) {
                        l.push(o);
                    }
                    Vec::new()
                }
                Event::InitDone => lock(&store).replace(listing.take().unwrap_or_default()),
                Event::Apply(o) => match held(&key, o) {
                    Some(o) => lock(&store).apply(o),
                    None => Vec::new(),
                },
                Event::Delete(o) => {
                    let name = o.metadata.name.unwrap_or_default();
                    lock(&store).delete(&name)
                }
            };
            tell(&changed, concerned);
        }
        tokio::time::sleep(Iterator::next(&mut backoff).unwrap_or(BACKOFF_MAX)).await;
    }
}

/// Whether a watch error says the kind is not served (any more).
fn not_served(e: &watcher::Error) -> bool {
    let api = match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s)) => s,
        _ => return false,
    };
    api.code == 404
}

#[cfg(test)]
mod tests;
