//! An in-memory management cluster for `all-in-one --kube memory`
//! (`[capi]/management_cluster = memory`): driver-host's in-memory API server
//! (server-side apply by field manager, list by label, delete with
//! finalizers, create and replace with a resourceVersion precondition)
//! behind the part of the Kubernetes HTTP API the service uses — discovery,
//! get, list, watch, apply, create, replace, delete — served in process to
//! kube-rs, so that the drivers' calls, the shared watches and the
//! reconciler's Lease take the same path as with a real cluster.
//!
//! The server serves every kind a driver names (the first call registers
//! it; a kind is namespaced unless Kubernetes defines it cluster-scoped),
//! and needs no namespace to exist. Objects last as long as the process.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use driver_host::access::memory::kube::{ApiServer, Change, ChangeKind};
use driver_host::{HostError, KubeAccess, KubeObject, ObjectRef};
use serde_json::{Value, json};

/// The field manager of objects written whole (`POST`, `PUT`), as
/// kube-rs leaves it unset.
const WRITER: &str = "openkeel-magnum";

/// The longest a watch lasts before the client starts another (the
/// server's own limit; kube-rs asks for 290 s).
const MAX_WATCH: Duration = Duration::from_secs(300);

/// Kinds Kubernetes defines cluster-scoped; every other kind is served
/// namespaced.
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

/// A served kind.
#[derive(Clone, Debug)]
struct Kind {
    kind: String,
    namespaced: bool,
}

/// The in-memory management cluster: the store and the kinds it serves.
pub struct MemoryCluster {
    store: ApiServer,
    /// (api version, plural) → kind.
    kinds: Mutex<BTreeMap<(String, String), Kind>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The map only grows with whole entries: a panic elsewhere cannot
    // leave it half-written.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The resource name of `kind`: lower case, plural.
fn plural(kind: &str) -> String {
    let k = kind.to_ascii_lowercase();
    if let Some(stem) = k.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if k.ends_with('s') || k.ends_with('x') || k.ends_with("ch") || k.ends_with("sh") {
        return format!("{k}es");
    }
    format!("{k}s")
}

impl MemoryCluster {
    /// An empty cluster serving Namespaces, Secrets and the coordination
    /// Leases.
    pub fn new() -> Arc<MemoryCluster> {
        let m = MemoryCluster {
            store: ApiServer::new(),
            kinds: Mutex::new(BTreeMap::new()),
        };
        m.serve("v1", "Namespace");
        // The certificate store's Secrets and the reconciler's Lease are
        // asked for without discovery.
        m.serve("v1", "Secret");
        m.serve("coordination.k8s.io/v1", "Lease");
        Arc::new(m)
    }

    /// The cluster of this process: every client of `all-in-one` shares
    /// it.
    pub fn shared() -> Arc<MemoryCluster> {
        static SHARED: OnceLock<Arc<MemoryCluster>> = OnceLock::new();
        SHARED.get_or_init(MemoryCluster::new).clone()
    }

    /// The store, as the test kit shows it.
    pub fn store(&self) -> &ApiServer {
        &self.store
    }

    /// Serves `kind` of `api_version` from now on.
    pub fn serve(&self, api_version: &str, kind: &str) {
        if kind.is_empty() || !self.store.serves(api_version, kind) {
            return;
        }
        lock(&self.kinds)
            .entry((api_version.to_owned(), plural(kind)))
            .or_insert_with(|| Kind {
                kind: kind.to_owned(),
                namespaced: !CLUSTER_SCOPED.contains(&kind),
            });
    }

    /// A client reaching this cluster in process.
    pub fn client(self: &Arc<Self>) -> kube::Client {
        let router = axum::Router::new()
            .fallback(handle)
            .with_state(self.clone());
        kube::Client::new(router, "default")
    }

    fn kind(&self, api_version: &str, plural: &str) -> Option<Kind> {
        lock(&self.kinds)
            .get(&(api_version.to_owned(), plural.to_owned()))
            .cloned()
    }

    /// `GET /api/v1`, `GET /apis/<group>/<version>`: the served kinds.
    fn discovery(&self, api_version: &str) -> Response {
        let resources: Vec<Value> = lock(&self.kinds)
            .iter()
            .filter(|((av, _), _)| av == api_version)
            .map(|((_, plural), k)| {
                json!({
                    "name": plural,
                    "singularName": k.kind.to_ascii_lowercase(),
                    "namespaced": k.namespaced,
                    "kind": k.kind,
                    "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                })
            })
            .collect();
        if resources.is_empty() {
            return status(
                StatusCode::NOT_FOUND,
                "NotFound",
                "the server could not find the requested resource",
            );
        }
        json_response(
            StatusCode::OK,
            &json!({
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": api_version,
                "resources": resources,
            }),
        )
    }
}

/// A request on one kind: where it points.
#[derive(Clone)]
struct Target {
    api_version: String,
    kind: Kind,
    plural: String,
    namespace: Option<String>,
    name: Option<String>,
}

impl Target {
    fn reference(&self, name: &str) -> ObjectRef {
        ObjectRef {
            api_version: self.api_version.clone(),
            kind: self.kind.kind.clone(),
            namespace: self.namespace.clone(),
            name: name.to_owned(),
        }
    }

    /// Whether `r` is in this request's collection.
    fn holds(&self, r: &ObjectRef) -> bool {
        r.api_version == self.api_version
            && r.kind == self.kind.kind
            && (self.namespace.is_none() || r.namespace == self.namespace)
    }

    fn not_found(&self, name: &str) -> Response {
        status(
            StatusCode::NOT_FOUND,
            "NotFound",
            &format!("{} \"{name}\" not found", self.plural),
        )
    }
}

async fn handle(
    State(m): State<Arc<MemoryCluster>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let query: HashMap<String, String> =
        url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let t = match target(&m, &method, &uri) {
        Ok(t) => t,
        Err(answer) => return *answer,
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let write = Write {
        m: &m,
        t: &t,
        query: &query,
        body: &body,
    };
    match (method, t.name.clone()) {
        (Method::GET, Some(name)) => match m.store.get(t.reference(&name)).await {
            Ok(Some(o)) => object_response(StatusCode::OK, &o),
            Ok(None) => t.not_found(&name),
            Err(e) => refused(&e),
        },
        (Method::GET, None) if is_true(query.get("watch")) => watch(&m, &t, &query),
        (Method::GET, None) => list(&m, &t, &query),
        (Method::PATCH, Some(name)) if content_type.starts_with("application/apply-patch") => {
            apply(&write, &name).await
        }
        (Method::PATCH, Some(_)) => status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            "only server-side apply patches are served",
        ),
        (Method::POST, None) => create(&write),
        (Method::PUT, Some(name)) => replace(&write, &name),
        (Method::DELETE, Some(name)) => delete(&m, &t, &name).await,
        _ => status(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "this method is not served here",
        ),
    }
}

/// The collection or object a request's path names, or the answer when it
/// names none (the discovery document of a group version, or an error).
fn target(m: &MemoryCluster, method: &Method, uri: &Uri) -> Result<Target, Box<Response>> {
    let segments: Vec<&str> = uri
        .path()
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let not_found = |message: &str| Box::new(status(StatusCode::NOT_FOUND, "NotFound", message));
    let (api_version, rest) = match segments.as_slice() {
        ["api", v, rest @ ..] => ((*v).to_owned(), rest),
        ["apis", g, v, rest @ ..] => (format!("{g}/{v}"), rest),
        _ => {
            return Err(not_found(
                "the server could not find the requested resource",
            ));
        }
    };
    let (namespace, plural, tail) = match rest {
        [] => {
            return Err(Box::new(match *method {
                Method::GET => m.discovery(&api_version),
                _ => status(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "MethodNotAllowed",
                    "only GET is served here",
                ),
            }));
        }
        ["namespaces", ns, plural, tail @ ..] => (Some((*ns).to_owned()), *plural, tail),
        [plural, tail @ ..] => (None, *plural, tail),
    };
    let Some(kind) = m.kind(&api_version, plural) else {
        return Err(not_found(
            "the server could not find the requested resource",
        ));
    };
    if tail.len() > 1 {
        return Err(not_found("subresources are not served"));
    }
    if kind.namespaced != namespace.is_some() && tail.len() == 1 {
        let scope = if kind.namespaced {
            "namespaced"
        } else {
            "cluster-scoped"
        };
        return Err(not_found(&format!("{} is {scope}", kind.kind)));
    }
    Ok(Target {
        api_version,
        kind,
        plural: plural.to_owned(),
        namespace,
        name: tail.first().map(|s| (*s).to_owned()),
    })
}

/// A request that writes an object: the cluster, the collection or object
/// its path names, its query and its body.
struct Write<'a> {
    m: &'a MemoryCluster,
    t: &'a Target,
    query: &'a HashMap<String, String>,
    body: &'a [u8],
}

/// A server-side apply of `name` by the request's field manager.
async fn apply(w: &Write<'_>, name: &str) -> Response {
    let Write { m, t, query, body } = w;
    let manager = query.get("fieldManager").map_or("", String::as_str);
    if manager.is_empty() {
        return status(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "fieldManager is required for apply requests",
        );
    }
    match envelope(t, Some(name), body) {
        Ok(obj) => match m.store.apply(obj, manager).await {
            Ok(o) => object_response(StatusCode::OK, &o),
            Err(e) => refused(&e),
        },
        Err(m) => bad_request(&m),
    }
}

/// A POST of a new object to the collection.
fn create(w: &Write<'_>) -> Response {
    let Write { m, t, query, body } = w;
    match envelope(t, None, body) {
        Ok(obj) => match m.store.create(&obj, manager_or_writer(query)) {
            Ok(o) => object_response(StatusCode::CREATED, &o),
            Err(HostError::Conflict(_)) => status(
                StatusCode::CONFLICT,
                "AlreadyExists",
                &format!("{} \"{}\" already exists", t.plural, obj.name),
            ),
            Err(e) => refused(&e),
        },
        Err(m) => bad_request(&m),
    }
}

/// A PUT of `name`, refused when its `resourceVersion` is not the stored
/// one.
fn replace(w: &Write<'_>, name: &str) -> Response {
    let Write { m, t, query, body } = w;
    match envelope(t, Some(name), body) {
        Ok(obj) => {
            let precondition = serde_json::from_str::<Value>(&obj.json).ok().and_then(|v| {
                v.pointer("/metadata/resourceVersion")?
                    .as_str()?
                    .parse()
                    .ok()
            });
            match m
                .store
                .replace(&obj, manager_or_writer(query), precondition)
            {
                Ok(o) => object_response(StatusCode::OK, &o),
                Err(HostError::NotFound(_)) => t.not_found(name),
                Err(HostError::Conflict(msg)) => status(StatusCode::CONFLICT, "Conflict", &msg),
                Err(e) => refused(&e),
            }
        }
        Err(m) => bad_request(&m),
    }
}

/// A DELETE of `name`: the object itself while finalizers hold it, else
/// a `Status`.
async fn delete(m: &MemoryCluster, t: &Target, name: &str) -> Response {
    let r = t.reference(name);
    match m.store.delete(r.clone()).await {
        Ok(false) => t.not_found(name),
        Ok(true) => match m.store.get(r).await {
            // Finalizers hold it: the object, now deleting.
            Ok(Some(o)) => object_response(StatusCode::OK, &o),
            _ => json_response(
                StatusCode::OK,
                &json!({
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Success",
                    "details": {"name": name, "kind": t.plural},
                }),
            ),
        },
        Err(e) => refused(&e),
    }
}

fn is_true(v: Option<&String>) -> bool {
    matches!(v.map(String::as_str), Some("true" | "1"))
}

fn manager_or_writer(query: &HashMap<String, String>) -> &str {
    query
        .get("fieldManager")
        .map(String::as_str)
        .filter(|m| !m.is_empty())
        .unwrap_or(WRITER)
}

/// The server's 400 for a bad request.
fn bad_request(message: &str) -> Response {
    status(StatusCode::BAD_REQUEST, "BadRequest", message)
}

/// The body as the object `t` (and `name`) point at, or why it is a bad
/// request: its apiVersion, kind, namespace and name must be the path's.
fn envelope(t: &Target, name: Option<&str>, body: &[u8]) -> Result<KubeObject, String> {
    let mut v: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not a JSON object: {e}"))?;
    let field = |p: &str| v.pointer(p).and_then(Value::as_str);
    if field("/apiVersion") != Some(t.api_version.as_str())
        || field("/kind") != Some(t.kind.kind.as_str())
    {
        return Err(format!(
            "the object's apiVersion and kind must be {} and {}",
            t.api_version, t.kind.kind
        ));
    }
    if let Some(ns) = field("/metadata/namespace")
        && Some(ns) != t.namespace.as_deref()
    {
        return Err(
            "the namespace of the object does not match the namespace of the request".into(),
        );
    }
    let object_name = field("/metadata/name").unwrap_or_default().to_owned();
    if object_name.is_empty() || name.is_some_and(|n| n != object_name) {
        return Err("the name of the object does not match the name of the request".into());
    }
    // The object is in the request's namespace, said or not.
    if let (Some(ns), Some(meta)) = (
        &t.namespace,
        v.get_mut("metadata").and_then(Value::as_object_mut),
    ) {
        meta.insert("namespace".into(), Value::String(ns.clone()));
    }
    Ok(KubeObject {
        api_version: t.api_version.clone(),
        kind: t.kind.kind.clone(),
        namespace: t.namespace.clone(),
        name: object_name,
        json: v.to_string(),
    })
}

/// The labels of a `labelSelector` of equalities (`k=v`, `k==v`); `None`
/// for any other form.
fn label_selector(s: &str) -> Option<Vec<(String, String)>> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (k, v) = p.split_once("==").or_else(|| p.split_once('='))?;
            (!k.contains('!')).then(|| (k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect()
}

fn labelled(v: &Value, selector: &[(String, String)]) -> bool {
    selector.iter().all(|(k, want)| {
        v.pointer("/metadata/labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
            == Some(want.as_str())
    })
}

fn selector_of(query: &HashMap<String, String>) -> Result<Vec<(String, String)>, &'static str> {
    match query.get("labelSelector") {
        None => Ok(Vec::new()),
        Some(s) => label_selector(s).ok_or("only equality label selectors (k=v) are served"),
    }
}

fn list(m: &MemoryCluster, t: &Target, query: &HashMap<String, String>) -> Response {
    let selector = match selector_of(query) {
        Ok(s) => s,
        Err(m) => return bad_request(m),
    };
    let (items, revision) = m
        .store
        .list_where(|r, v| t.holds(r) && labelled(v, &selector));
    json_response(
        StatusCode::OK,
        &json!({
            "kind": format!("{}List", t.kind.kind),
            "apiVersion": t.api_version,
            "metadata": {"resourceVersion": revision.to_string()},
            "items": items,
        }),
    )
}

/// A watch in progress.
struct Watching {
    m: Arc<MemoryCluster>,
    t: Target,
    selector: Vec<(String, String)>,
    /// The last resourceVersion sent.
    since: u64,
    /// The first events (a watch from `0`: what is there, as added).
    first: Option<Vec<u8>>,
    revisions: tokio::sync::watch::Receiver<u64>,
    deadline: tokio::time::Instant,
    done: bool,
}

impl Watching {
    fn matches(&self, c: &Change) -> bool {
        self.t.holds(&c.reference) && labelled(&c.object, &self.selector)
    }

    /// The next events to send, waiting for a change until the deadline;
    /// `None` ends the watch.
    async fn next(mut self) -> Option<(Result<Bytes, Infallible>, Watching)> {
        if self.done {
            return None;
        }
        if let Some(first) = self.first.take().filter(|f| !f.is_empty()) {
            return Some((Ok(first.into()), self));
        }
        loop {
            // Seen before reading: a change after the read wakes the wait.
            self.revisions.borrow_and_update();
            match self.m.store.changes_since(self.since) {
                Err(_) => {
                    self.done = true;
                    let gone =
                        status_value(StatusCode::GONE, "Expired", "too old resource version");
                    return Some((Ok(event_line("ERROR", &gone).into()), self));
                }
                Ok(changes) => {
                    let lines: Vec<u8> = changes
                        .iter()
                        .filter(|c| self.matches(c))
                        .flat_map(|c| event_line(c.kind.as_str(), &c.object))
                        .collect();
                    if let Some(c) = changes.last() {
                        self.since = c.revision;
                    }
                    if !lines.is_empty() {
                        return Some((Ok(lines.into()), self));
                    }
                }
            }
            match tokio::time::timeout_at(self.deadline, self.revisions.changed()).await {
                Ok(Ok(())) => continue,
                _ => return None,
            }
        }
    }
}

/// A watch: the changes after `resourceVersion` (from `0` or none: the
/// objects there are, as added), one JSON event per line, until the
/// timeout; a version the server no longer keeps is a 410 event.
fn watch(m: &Arc<MemoryCluster>, t: &Target, query: &HashMap<String, String>) -> Response {
    let selector = match selector_of(query) {
        Ok(s) => s,
        Err(m) => return bad_request(m),
    };
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|s| s.parse().ok())
        .map_or(MAX_WATCH, |s| Duration::from_secs(s).min(MAX_WATCH));
    let mut since: u64 = query
        .get("resourceVersion")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let revisions = m.store.revisions();
    let mut first = Vec::new();
    if since == 0 {
        let (items, revision) = m
            .store
            .list_where(|r, v| t.holds(r) && labelled(v, &selector));
        first = items
            .iter()
            .flat_map(|o| event_line(ChangeKind::Added.as_str(), o))
            .collect();
        since = revision;
    }
    let watching = Watching {
        m: m.clone(),
        t: t.clone(),
        selector,
        since,
        first: Some(first),
        revisions,
        deadline: tokio::time::Instant::now() + timeout,
        done: false,
    };
    let events = futures::stream::unfold(watching, Watching::next);
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(events))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

fn event_line(kind: &str, object: &Value) -> Vec<u8> {
    let mut line = json!({"type": kind, "object": object})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

fn object_response(code: StatusCode, o: &KubeObject) -> Response {
    match serde_json::from_str::<Value>(&o.json) {
        Ok(v) => json_response(code, &v),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

fn json_response(code: StatusCode, v: &Value) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

fn status_value(code: StatusCode, reason: &str, message: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code.as_u16(),
    })
}

/// The server's `Status` answer.
fn status(code: StatusCode, reason: &str, message: &str) -> Response {
    json_response(code, &status_value(code, reason, message))
}

/// The store's refusal as the server's answer.
fn refused(e: &HostError) -> Response {
    match e {
        HostError::Invalid(m) => status(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", m),
        HostError::NotFound(m) => status(StatusCode::NOT_FOUND, "NotFound", m),
        HostError::Conflict(m) => status(StatusCode::CONFLICT, "Conflict", m),
        other => status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            &other.to_string(),
        ),
    }
}

#[cfg(test)]
mod tests;
