//! An in-memory Kubernetes API server with the semantics a driver relies
//! on: server-side apply by field manager (each manager owns the fields it
//! last applied; a field no manager sets any more disappears), the
//! server's metadata (`uid`, `resourceVersion`, `generation`,
//! `creationTimestamp`, `managedFields`), list by label, delete that
//! waits for finalizers, create and replace with a resourceVersion
//! precondition, and the changes since a resourceVersion, for watches.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use crate::access::{HostError, HostFuture, KubeAccess, KubeObject, ObjectRef, Selector};
use crate::types::Observation;
use serde_json::{Map, Value};

/// The `creationTimestamp` and `deletionTimestamp` of every object: the
/// server's clock does not matter to a driver, and a fixed one keeps
/// snapshots comparable.
pub const SERVER_TIME: &str = "2026-01-02T03:04:05Z";

/// The field manager of status written with [`ApiServer::set_status`], as
/// a controller would.
pub const CONTROLLER: &str = "testkit-controller";

#[derive(Clone, Debug)]
struct Stored {
    /// Each manager's last applied configuration, in the order the
    /// managers first applied.
    applied: Vec<(String, Value)>,
    uid: String,
    resource_version: u64,
    generation: u64,
    deleting: bool,
}

/// How many changes the server keeps for watches that resume; a watch
/// from before the oldest is told its resourceVersion is too old.
pub const KEPT_CHANGES: usize = 10_000;

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

impl ChangeKind {
    /// The watch event's `type`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "ADDED",
            ChangeKind::Modified => "MODIFIED",
            ChangeKind::Deleted => "DELETED",
        }
    }
}

/// One change of one object, as a watch sees it.
#[derive(Clone, Debug)]
pub struct Change {
    /// The resourceVersion the change made.
    pub revision: u64,
    pub kind: ChangeKind,
    pub reference: ObjectRef,
    /// The object after the change (for a deletion, as it last was).
    pub object: Value,
}

/// A watch asked for changes the server no longer keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooOld {
    /// The oldest resourceVersion a watch may still start from.
    pub oldest: u64,
}

#[derive(Default)]
struct Inner {
    objects: BTreeMap<ObjectRef, Stored>,
    /// The last resourceVersion handed out (shared by every object, as
    /// etcd's revision).
    revision: u64,
    uids: u64,
    /// Every write: (verb, reference, field manager).
    writes: Vec<(String, ObjectRef, String)>,
    /// Kinds the server does not serve, as `api-version/kind`.
    unserved: Vec<String>,
    /// The last [`KEPT_CHANGES`] changes, oldest first.
    changes: VecDeque<Change>,
    /// The resourceVersion before the oldest kept change.
    forgotten: u64,
}

impl Inner {
    /// A new object written by `manager`, at the next resourceVersion.
    fn new_object(&mut self, manager: &str, body: Value) -> Stored {
        self.uids += 1;
        Stored {
            applied: vec![(manager.to_string(), body)],
            uid: format!("00000000-0000-4000-8000-{:012x}", self.uids),
            resource_version: self.revision + 1,
            generation: 1,
            deleting: false,
        }
    }

    /// Removes `r` at once, recording its deletion with the object as it
    /// last was, at the deletion's resourceVersion.
    fn forget(&mut self, r: &ObjectRef) {
        if let Some(mut s) = self.objects.remove(r) {
            s.resource_version = self.revision + 1;
            self.record(ChangeKind::Deleted, r, s.render());
        }
    }

    /// An object being deleted goes once no finalizer holds it.
    fn let_go_if_done(&mut self, r: &ObjectRef) {
        if self
            .objects
            .get(r)
            .is_some_and(|s| s.deleting && !s.finalizers())
        {
            self.forget(r);
        }
    }

    /// Records a change of `r` that is not in a write's own version yet:
    /// the object moves to the next resourceVersion.
    fn touch(&mut self, r: &ObjectRef) {
        let next = self.revision + 1;
        if let Some(s) = self.objects.get_mut(r) {
            s.resource_version = next;
            let now = s.render();
            self.record(ChangeKind::Modified, r, now);
        }
    }

    /// Takes the next resourceVersion for a change of `r`, now `object`.
    fn record(&mut self, kind: ChangeKind, r: &ObjectRef, object: Value) -> u64 {
        self.revision += 1;
        self.changes.push_back(Change {
            revision: self.revision,
            kind,
            reference: r.clone(),
            object,
        });
        if self.changes.len() > KEPT_CHANGES
            && let Some(c) = self.changes.pop_front()
        {
            self.forgotten = c.revision;
        }
        self.revision
    }
}

/// The management cluster of the test kit. Cheap to share (`Arc`).
pub struct ApiServer {
    inner: Mutex<Inner>,
    /// The last resourceVersion, for watches waiting for a change.
    revisions: tokio::sync::watch::Sender<u64>,
}

impl Default for ApiServer {
    fn default() -> Self {
        ApiServer {
            inner: Mutex::new(Inner::default()),
            revisions: tokio::sync::watch::Sender::new(0),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave the map worse than a
    // failed test.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Merges `over` into `base`: objects field by field, anything else
/// replaced.
fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

/// The object without what the server owns in `metadata`, and without
/// `status`: what counts for `generation`.
fn spec_part(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("status");
        if let Some(Value::Object(m)) = o.get_mut("metadata") {
            for k in SERVER_FIELDS {
                m.remove(*k);
            }
        }
    }
    v
}

/// The metadata fields the server sets; a client's values are ignored.
const SERVER_FIELDS: &[&str] = &[
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "managedFields",
];

impl Stored {
    /// The object as the server shows it.
    fn render(&self) -> Value {
        let mut obj = Value::Object(Map::new());
        for (_, cfg) in &self.applied {
            merge(&mut obj, cfg);
        }
        let managers: Vec<Value> = self
            .applied
            .iter()
            .map(|(m, cfg)| {
                let subresource = if m == CONTROLLER { "status" } else { "" };
                let mut e = serde_json::json!({
                    "manager": m,
                    "operation": "Apply",
                    "apiVersion": cfg.get("apiVersion").cloned().unwrap_or(Value::Null),
                    "time": SERVER_TIME,
                    "fieldsType": "FieldsV1",
                });
                if !subresource.is_empty() {
                    e["subresource"] = Value::String(subresource.to_string());
                }
                e
            })
            .collect();
        if let Some(o) = obj.as_object_mut() {
            let meta = o
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(m) = meta.as_object_mut() {
                m.insert("uid".into(), Value::String(self.uid.clone()));
                m.insert(
                    "resourceVersion".into(),
                    Value::String(self.resource_version.to_string()),
                );
                m.insert("generation".into(), Value::from(self.generation));
                m.insert(
                    "creationTimestamp".into(),
                    Value::String(SERVER_TIME.into()),
                );
                if self.deleting {
                    m.insert(
                        "deletionTimestamp".into(),
                        Value::String(SERVER_TIME.into()),
                    );
                }
                m.insert("managedFields".into(), Value::Array(managers));
            }
        }
        obj
    }

    fn finalizers(&self) -> bool {
        self.render()
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty())
    }
}

fn to_object(r: &ObjectRef, v: &Value) -> KubeObject {
    KubeObject {
        api_version: r.api_version.clone(),
        kind: r.kind.clone(),
        namespace: r.namespace.clone(),
        name: r.name.clone(),
        json: v.to_string(),
    }
}

fn labels_of(v: &Value) -> BTreeMap<String, String> {
    v.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Drops the server's metadata from a client's configuration.
fn client_part(mut v: Value) -> Value {
    if let Some(Value::Object(m)) = v.get_mut("metadata") {
        for k in SERVER_FIELDS {
            m.remove(*k);
        }
    }
    v
}

impl ApiServer {
    /// An empty cluster.
    pub fn new() -> ApiServer {
        ApiServer::default()
    }

    fn apply_as(&self, obj: &KubeObject, manager: &str) -> Result<KubeObject, HostError> {
        let body = client_body(obj)?;
        let r = obj.reference();
        let out = {
            let mut g = lock(&self.inner);
            let inner = &mut *g;
            let next = inner.revision + 1;
            let (stored, kind) = match inner.objects.get_mut(&r) {
                Some(s) => {
                    let before = client_part(s.render());
                    match s.applied.iter_mut().find(|(m, _)| m == manager) {
                        Some((_, cfg)) => *cfg = body,
                        None => s.applied.push((manager.to_string(), body)),
                    }
                    let after = client_part(s.render());
                    // A no-op apply changes nothing, resourceVersion included.
                    let changed = after != before;
                    if changed {
                        s.resource_version = next;
                        // Only a change outside status is a new generation.
                        if spec_part(&after) != spec_part(&before) {
                            s.generation += 1;
                        }
                    }
                    (s.clone(), changed.then_some(ChangeKind::Modified))
                }
                None => {
                    let s = inner.new_object(manager, body);
                    inner.objects.insert(r.clone(), s.clone());
                    (s, Some(ChangeKind::Added))
                }
            };
            inner
                .writes
                .push(("apply".into(), r.clone(), manager.to_string()));
            let rendered = stored.render();
            if let Some(kind) = kind {
                inner.record(kind, &r, rendered.clone());
            }
            inner.let_go_if_done(&r);
            to_object(&r, &rendered)
        };
        self.notify();
        Ok(out)
    }

    /// Wakes the watches after a change.
    fn notify(&self) {
        let revision = lock(&self.inner).revision;
        self.revisions.send_if_modified(|r| {
            let moved = *r != revision;
            *r = revision;
            moved
        });
    }

    /// Creates an object as a client's `POST` does: the whole body is the
    /// object, owned by `manager`; a conflict when it exists.
    pub fn create(&self, obj: &KubeObject, manager: &str) -> Result<KubeObject, HostError> {
        let body = client_body(obj)?;
        let r = obj.reference();
        let out = {
            let mut g = lock(&self.inner);
            let inner = &mut *g;
            if inner.objects.contains_key(&r) {
                return Err(HostError::Conflict(format!("{} already exists", r.name)));
            }
            let s = inner.new_object(manager, body);
            let rendered = s.render();
            inner.objects.insert(r.clone(), s);
            inner
                .writes
                .push(("create".into(), r.clone(), manager.to_string()));
            inner.record(ChangeKind::Added, &r, rendered.clone());
            to_object(&r, &rendered)
        };
        self.notify();
        Ok(out)
    }

    /// Replaces an object as a client's `PUT` does: the body is the whole
    /// object, owned by `manager`. With `resource_version`, a conflict
    /// unless the object is still at that version.
    pub fn replace(
        &self,
        obj: &KubeObject,
        manager: &str,
        resource_version: Option<u64>,
    ) -> Result<KubeObject, HostError> {
        let body = client_body(obj)?;
        let r = obj.reference();
        let out = {
            let mut g = lock(&self.inner);
            let inner = &mut *g;
            let next = inner.revision + 1;
            let Some(s) = inner.objects.get_mut(&r) else {
                return Err(HostError::NotFound(format!("{} not found", r.name)));
            };
            if resource_version.is_some_and(|v| v != s.resource_version) {
                return Err(HostError::Conflict(format!(
                    "the object has been modified; please apply your changes to the latest version \
                     ({} is at {})",
                    r.name, s.resource_version
                )));
            }
            let before = spec_part(&s.render());
            s.applied = vec![(manager.to_string(), body)];
            s.resource_version = next;
            if spec_part(&s.render()) != before {
                s.generation += 1;
            }
            let rendered = s.render();
            inner
                .writes
                .push(("replace".into(), r.clone(), manager.to_string()));
            inner.record(ChangeKind::Modified, &r, rendered.clone());
            // A replace that drops the last finalizer of an object being
            // deleted lets it go.
            inner.let_go_if_done(&r);
            to_object(&r, &rendered)
        };
        self.notify();
        Ok(out)
    }

    /// Writes `status` of an object as a controller would (its own field
    /// manager, no generation bump). `false` when the object is missing.
    pub fn set_status(&self, r: &ObjectRef, status: Value) -> bool {
        let envelope = {
            let g = lock(&self.inner);
            if !g.objects.contains_key(r) {
                return false;
            }
            KubeObject {
                api_version: r.api_version.clone(),
                kind: r.kind.clone(),
                namespace: r.namespace.clone(),
                name: r.name.clone(),
                json: serde_json::json!({ "status": status }).to_string(),
            }
        };
        self.apply_as(&envelope, CONTROLLER).is_ok()
    }

    /// Removes an object's finalizers, as its controller does when it is
    /// done; the object goes if it was being deleted.
    pub fn finalize(&self, r: &ObjectRef) {
        {
            let mut g = lock(&self.inner);
            let Some(s) = g.objects.get_mut(r) else {
                return;
            };
            let (had, deleting) = (s.finalizers(), s.deleting);
            for (_, cfg) in &mut s.applied {
                if let Some(Value::Object(m)) = cfg.get_mut("metadata") {
                    m.remove("finalizers");
                }
            }
            if deleting {
                g.forget(r);
            } else if had {
                g.touch(r);
            }
        }
        self.notify();
    }

    /// Every stored object as the server shows it, in reference order.
    pub fn objects(&self) -> Vec<KubeObject> {
        lock(&self.inner)
            .objects
            .iter()
            .map(|(r, s)| to_object(r, &s.render()))
            .collect()
    }

    /// The objects `selector` selects, as the server shows them, sorted by
    /// namespace and name.
    pub fn select(&self, selector: &Selector) -> Vec<KubeObject> {
        lock(&self.inner)
            .objects
            .iter()
            .filter(|(r, _)| {
                r.api_version == selector.api_version
                    && r.kind == selector.kind
                    && r.namespace == selector.namespace
            })
            .map(|(r, s)| (r, s.render()))
            .filter(|(_, v)| {
                let labels = labels_of(v);
                selector
                    .labels
                    .iter()
                    .all(|(k, v)| labels.get(k) == Some(v))
            })
            .map(|(r, v)| to_object(r, &v))
            .collect()
    }

    /// What the host hands `derive-status` for `selectors`, in their
    /// order: each one's objects without `metadata.managedFields`, whether
    /// its kind is served, and synced (the kit's copy is always complete).
    pub fn snapshot_of(&self, selectors: &[Selector]) -> Vec<Observation> {
        let unserved = lock(&self.inner).unserved.clone();
        selectors
            .iter()
            .map(|sel| {
                let served = !unserved.contains(&format!("{}/{}", sel.api_version, sel.kind));
                let objects = if served {
                    self.select(sel)
                        .into_iter()
                        .map(|mut o| {
                            if let Ok(mut v) = serde_json::from_str::<Value>(&o.json) {
                                if let Some(m) =
                                    v.get_mut("metadata").and_then(Value::as_object_mut)
                                {
                                    m.remove("managedFields");
                                }
                                o.json = v.to_string();
                            }
                            o
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                Observation {
                    selector: sel.clone(),
                    served,
                    synced: true,
                    objects,
                }
            })
            .collect()
    }

    /// The stored object.
    pub fn object(&self, r: &ObjectRef) -> Option<Value> {
        lock(&self.inner).objects.get(r).map(Stored::render)
    }

    /// What the clients wrote, without the server's fields: two snapshots
    /// are equal when no client changed anything.
    pub fn snapshot(&self) -> BTreeMap<ObjectRef, Value> {
        lock(&self.inner)
            .objects
            .iter()
            .map(|(r, s)| (r.clone(), spec_part(&s.render())))
            .collect()
    }

    /// Every write so far: (verb, reference, field manager).
    pub fn writes(&self) -> Vec<(String, ObjectRef, String)> {
        lock(&self.inner).writes.clone()
    }

    /// Stops serving `kind` of `api_version`, as a cluster without the
    /// CRD installed: [`KubeAccess::served`] answers `false`.
    pub fn unserve(&self, api_version: &str, kind: &str) {
        lock(&self.inner)
            .unserved
            .push(format!("{api_version}/{kind}"));
    }

    /// The field managers of an object.
    pub fn managers(&self, r: &ObjectRef) -> Vec<String> {
        lock(&self.inner)
            .objects
            .get(r)
            .map(|s| s.applied.iter().map(|(m, _)| m.clone()).collect())
            .unwrap_or_default()
    }
}

impl ApiServer {
    /// Deletes an object: it goes at once, or, with finalizers, is marked
    /// deleting until they are removed. `false` when there is none.
    fn remove(&self, reference: &ObjectRef) -> bool {
        let mut g = lock(&self.inner);
        let Some(s) = g.objects.get_mut(reference) else {
            return false;
        };
        if s.deleting {
            return true;
        }
        let held = s.finalizers();
        s.deleting = held;
        g.writes
            .push(("delete".into(), reference.clone(), String::new()));
        // Held by finalizers, it stays, marked deleting; else it goes.
        if held {
            g.touch(reference);
        } else {
            g.forget(reference);
        }
        true
    }

    /// The objects `keep` accepts, as the server shows them, and the
    /// resourceVersion they are at (a list's).
    pub fn list_where(&self, keep: impl Fn(&ObjectRef, &Value) -> bool) -> (Vec<Value>, u64) {
        let g = lock(&self.inner);
        let items = g
            .objects
            .iter()
            .map(|(r, s)| (r, s.render()))
            .filter(|(r, v)| keep(r, v))
            .map(|(_, v)| v)
            .collect();
        (items, g.revision)
    }

    /// The changes after resourceVersion `since`, oldest first.
    pub fn changes_since(&self, since: u64) -> Result<Vec<Change>, TooOld> {
        let g = lock(&self.inner);
        if since < g.forgotten {
            return Err(TooOld {
                oldest: g.forgotten,
            });
        }
        Ok(g.changes
            .iter()
            .filter(|c| c.revision > since)
            .cloned()
            .collect())
    }

    /// The last resourceVersion, changing with every write.
    pub fn revisions(&self) -> tokio::sync::watch::Receiver<u64> {
        self.revisions.subscribe()
    }

    /// Whether the server serves `kind` of `api_version`.
    pub fn serves(&self, api_version: &str, kind: &str) -> bool {
        !lock(&self.inner)
            .unserved
            .contains(&format!("{api_version}/{kind}"))
    }
}

/// A client's body of `obj`, without the server's metadata: a JSON
/// object.
fn client_body(obj: &KubeObject) -> Result<Value, HostError> {
    let body: Value = serde_json::from_str(&obj.json)
        .map_err(|e| HostError::Invalid(format!("the object is not JSON: {e}")))?;
    if !body.is_object() {
        return Err(HostError::Invalid("the object is not a JSON object".into()));
    }
    Ok(client_part(body))
}

impl KubeAccess for ApiServer {
    fn apply<'a>(
        &'a self,
        obj: KubeObject,
        field_manager: &'a str,
    ) -> HostFuture<'a, Result<KubeObject, HostError>> {
        Box::pin(async move { self.apply_as(&obj, field_manager) })
    }

    fn get(&self, reference: ObjectRef) -> HostFuture<'_, Result<Option<KubeObject>, HostError>> {
        Box::pin(async move {
            Ok(lock(&self.inner)
                .objects
                .get(&reference)
                .map(|s| to_object(&reference, &s.render())))
        })
    }

    fn list(&self, selector: Selector) -> HostFuture<'_, Result<Vec<KubeObject>, HostError>> {
        Box::pin(async move { Ok(self.select(&selector)) })
    }

    fn delete(&self, reference: ObjectRef) -> HostFuture<'_, Result<bool, HostError>> {
        Box::pin(async move {
            let deleted = self.remove(&reference);
            self.notify();
            Ok(deleted)
        })
    }

    fn served<'a>(
        &'a self,
        api_version: &'a str,
        kind: &'a str,
    ) -> HostFuture<'a, Result<bool, HostError>> {
        Box::pin(async move { Ok(self.serves(api_version, kind)) })
    }
}

#[cfg(test)]
mod tests;
