//! The host side of the imports: the data of one call's store
//! ([`CallState`]) and the implementation of each imported interface.
//! Every function checks the driver's grants first, then calls the
//! binary's implementation; a refusal is a typed `host-error`, never a
//! trap.

use std::collections::BTreeMap;
use std::path::{Component as PathPart, Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use magnum_domain::models::Cluster;
use wasmtime::component::ResourceTable;
use wasmtime::{StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::access::{
    CloudAccess, Credentials, HostError, KubeAccess, OpenStackAccess, SecretsAccess,
};
use crate::bindings::v1_0::openkeel::magnum_driver as w10;
use crate::bindings::v1_1::openkeel::magnum_driver as w;
use crate::capabilities::Capabilities;
use crate::clock::{Clock, WallClock};
use crate::convert;
use crate::settings::Limits;
use crate::state::StateStore;

/// The field manager of the server-side applies the host makes for the
/// package `package`: one per driver, so that two drivers writing the same
/// object cannot take each other's fields without a conflict showing.
pub fn field_manager(package: &str) -> String {
    format!("openkeel-magnum-{package}")
}

/// The longest log line a driver may write (a `log.write` with its fields,
/// or a line of its stdout or stderr); the rest of the line is cut.
const MAX_LOG_LINE: usize = 4096;
/// The most fields kept from one `log.write`.
const MAX_LOG_FIELDS: usize = 32;

/// What the host provides to every driver.
pub(crate) struct Services {
    pub(crate) cloud: Option<Arc<dyn CloudAccess>>,
    pub(crate) kube: Option<Arc<dyn KubeAccess>>,
    pub(crate) openstack: Option<Arc<dyn OpenStackAccess>>,
    pub(crate) secrets: Option<Arc<dyn SecretsAccess>>,
    pub(crate) state: StateStore,
    pub(crate) clock: Arc<dyn Clock>,
    /// Told of every call and fault ([`crate::DriverHost::observe_calls`]).
    pub(crate) observer: std::sync::OnceLock<Arc<dyn crate::CallObserver>>,
}

/// What every call of one driver package shares.
pub(crate) struct PackageCtx {
    pub(crate) name: String,
    pub(crate) caps: Capabilities,
    pub(crate) options: BTreeMap<String, String>,
    pub(crate) files_dir: Option<PathBuf>,
    pub(crate) limits: Limits,
    pub(crate) services: Arc<Services>,
    /// The latest import calls refused for want of a grant.
    pub(crate) denials: std::sync::Mutex<std::collections::VecDeque<String>>,
    /// Why the host does not watch what the driver's `watches` declared
    /// (a selector its grants do not cover); its clusters are polled.
    pub(crate) watch_refusal: std::sync::Mutex<Option<String>>,
}

/// How many refused import calls a package remembers.
pub(crate) const DENIALS_KEPT: usize = 64;

impl PackageCtx {
    fn record_denial(&self, what: &str) {
        let mut d = self
            .denials
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if d.len() == DENIALS_KEPT {
            d.pop_front();
        }
        d.push_back(what.to_string());
    }

    /// The latest refused import calls, oldest first.
    pub(crate) fn denials(&self) -> Vec<String> {
        self.denials
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }
}

/// The data of one call's store.
pub(crate) struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limits: StoreLimits,
    pkg: Arc<PackageCtx>,
    cluster_uuid: Option<String>,
    /// The call's cluster row, kept only for a driver granted its secrets.
    cluster: Option<Cluster>,
    credentials: Credentials,
    request_id: String,
    pub(crate) stdout: Capture,
    pub(crate) stderr: Capture,
    /// What the call may still log, shared by `log.write`, stdout and
    /// stderr.
    log_budget: Arc<Mutex<LogBudget>>,
    /// A call the contract declares pure (`derive-status`): the imports
    /// that reach outside the host answer `access-denied`.
    pure: bool,
}

impl CallState {
    /// The API request id of the call ("" for background work).
    pub(crate) fn request_id(&self) -> &str {
        &self.request_id
    }

    pub(crate) fn new(
        pkg: Arc<PackageCtx>,
        cluster: Option<&Cluster>,
        credentials: Credentials,
        request_id: String,
    ) -> CallState {
        let log_budget = Arc::new(Mutex::new(LogBudget::new(
            pkg.limits.max_log_bytes,
            pkg.limits.max_log_lines,
        )));
        let stdout = Capture::new(log_budget.clone());
        let stderr = Capture::new(log_budget.clone());
        // Deny-all WASI: no preopened directory, no sockets or name lookup,
        // no environment or arguments, stdin closed; the wall clock is the
        // host's.
        let wasi = WasiCtxBuilder::new()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .wall_clock(WallClock(pkg.services.clock.clone()))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        let mut table = ResourceTable::new();
        table.set_max_capacity(pkg.limits.max_resources);
        let limits = StoreLimitsBuilder::new()
            .memory_size(usize::try_from(pkg.limits.memory_bytes).unwrap_or(usize::MAX))
            .table_elements(pkg.limits.max_table_elements)
            .instances(64)
            .tables(64)
            .memories(16)
            .trap_on_grow_failure(false)
            .build();
        // The service acts in the project of the call's cluster: its
        // OpenStack calls reach that project's resources, no other's.
        let mut credentials = credentials;
        if credentials.admin
            && credentials.project_id.is_empty()
            && let Some(c) = cluster
        {
            credentials.project_id = c.project_id.clone();
        }
        CallState {
            wasi,
            table,
            limits,
            cluster_uuid: cluster.map(|c| c.uuid.clone()),
            cluster: cluster.filter(|_| pkg.caps.cluster_secrets).cloned(),
            pkg,
            credentials,
            request_id,
            stdout,
            stderr,
            log_budget,
            pure: false,
        }
    }

    /// The same state for a call the contract declares pure (or not).
    pub(crate) fn pure(mut self, pure: bool) -> Self {
        self.pure = pure;
        self
    }

    /// The refusal of an import during a pure call.
    fn impure(&self, what: &str) -> w::types::HostError {
        w::types::HostError::AccessDenied(format!(
            "{what} during derive-status, which is pure: read what it needs from its snapshot"
        ))
    }

    fn budget(&self) -> std::sync::MutexGuard<'_, LogBudget> {
        self.log_budget
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn denied(&self, what: String) -> w::types::HostError {
        host_error(self.refusal(what))
    }

    /// Logs and remembers an import call the driver was not granted.
    fn refusal(&self, what: String) -> HostError {
        tracing::warn!(driver = %self.pkg.name, cluster_uuid = self.cluster_uuid.as_deref().unwrap_or(""),
            request_id = %self.request_id, "driver refused: {what}");
        self.pkg.record_denial(&what);
        HostError::AccessDenied(format!("driver {} is not granted {what}", self.pkg.name))
    }

    /// The first lines the guest wrote to stderr (a panic message), for a
    /// fault's text.
    pub(crate) fn stderr_summary(&self) -> Option<String> {
        let g = self
            .stderr
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let text = String::from_utf8_lossy(&g.bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("note: run with"))
            .take(2)
            .collect();
        if lines.is_empty() {
            return None;
        }
        let mut s = lines.join(" ");
        if s.len() > 300 {
            let mut cut = 300;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
        }
        Some(s)
    }

    /// Writes what the guest printed into the log, one event per line
    /// (each cut at [`MAX_LOG_LINE`] and counted against the call's log
    /// budget), then one line saying how much of the call's log was
    /// dropped, if any.
    pub(crate) fn flush_output(&self, function: &str) {
        let taken = [
            (self.stdout.take(), "stdout"),
            (self.stderr.take(), "stderr"),
        ];
        // What was buffered is now logged line by line, within the budget.
        self.budget().buffered = 0;
        for (bytes, stream) in &taken {
            let text = String::from_utf8_lossy(bytes);
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let kept = cut_line(line);
                if !self.budget().admit(line.len(), kept.len()) {
                    continue;
                }
                let line = kept;
                tracing::warn!(driver = %self.pkg.name, cluster_uuid = self.cluster_uuid.as_deref().unwrap_or(""),
                    request_id = %self.request_id, function, stream, "{line}");
            }
        }
        let b = self.budget();
        if b.dropped_lines > 0 || b.dropped_bytes > 0 {
            tracing::warn!(driver = %self.pkg.name, cluster_uuid = self.cluster_uuid.as_deref().unwrap_or(""),
                request_id = %self.request_id, function,
                "driver log beyond {} bytes or {} lines a call dropped: {} lines, {} bytes",
                b.max_bytes, b.max_lines, b.dropped_lines, b.dropped_bytes);
        }
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// What one call may still log, and what it logged beyond that.
pub(crate) struct LogBudget {
    max_bytes: usize,
    max_lines: usize,
    /// Bytes held by the stdout and stderr buffers, not logged yet.
    buffered: usize,
    logged_bytes: usize,
    logged_lines: usize,
    dropped_bytes: usize,
    dropped_lines: usize,
}

impl LogBudget {
    fn new(max_bytes: usize, max_lines: usize) -> Self {
        LogBudget {
            max_bytes,
            max_lines,
            buffered: 0,
            logged_bytes: 0,
            logged_lines: 0,
            dropped_bytes: 0,
            dropped_lines: 0,
        }
    }

    /// How many of `n` more bytes of stdout or stderr may be buffered.
    fn reserve(&mut self, n: usize) -> usize {
        let room = self
            .max_bytes
            .saturating_sub(self.logged_bytes + self.buffered);
        let keep = room.min(n);
        self.buffered += keep;
        keep
    }

    /// Counts output that was not buffered.
    fn dropped(&mut self, bytes: usize, lines: usize) {
        self.dropped_bytes += bytes;
        self.dropped_lines += lines;
    }

    /// Whether the call may still log a line of `kept` bytes (cut from
    /// `original` bytes); a line it may not is counted as dropped.
    fn admit(&mut self, original: usize, kept: usize) -> bool {
        if self.logged_lines >= self.max_lines || self.logged_bytes + kept > self.max_bytes {
            self.dropped_lines += 1;
            self.dropped_bytes += original;
            return false;
        }
        self.logged_lines += 1;
        self.logged_bytes += kept;
        true
    }
}

/// `line` cut at [`MAX_LOG_LINE`] bytes, with how much was cut.
fn cut_line(line: &str) -> String {
    let kept = cut_to(line, MAX_LOG_LINE);
    if kept.len() == line.len() {
        return line.to_string();
    }
    format!("{kept}… ({} bytes cut)", line.len() - kept.len())
}

/// The first `max` bytes of `s`, on a character boundary.
fn cut_to(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

/// A buffer for the guest's stdout or stderr, bounded by the call's log
/// budget. Writes beyond it are dropped, not refused: a refused write
/// would make a Rust guest panic in `println!`.
#[derive(Clone)]
pub(crate) struct Capture {
    inner: Arc<Mutex<Buffered>>,
    budget: Arc<Mutex<LogBudget>>,
}

/// What a stream kept, and whether its last line is still open (its end
/// not written yet): that line is logged, cut, at the flush, so the end of
/// it among dropped bytes is not a dropped line.
#[derive(Default)]
struct Buffered {
    bytes: Vec<u8>,
    open: bool,
}

impl Capture {
    fn new(budget: Arc<Mutex<LogBudget>>) -> Self {
        Capture {
            inner: Arc::default(),
            budget,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buffered> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.lock().bytes)
    }
}

impl IsTerminal for Capture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Capture {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl tokio::io::AsyncWrite for Capture {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut budget = self
            .budget
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let keep = budget.reserve(buf.len());
        let mut b = self.lock();
        let (kept, dropped) = buf.split_at(keep);
        if let Some(last) = kept.last() {
            b.bytes.extend_from_slice(kept);
            b.open = *last != b'\n';
        }
        if !dropped.is_empty() {
            let mut lines = dropped.iter().filter(|c| **c == b'\n').count();
            if b.open && lines > 0 {
                lines -= 1;
                b.open = false;
            }
            budget.dropped(dropped.len(), lines);
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Declares the conversion of a [`HostError`] into the `host-error` of a
/// contract version's `types` interface.
macro_rules! host_error_to {
    ($(#[$doc:meta])* $name:ident, $($types:ident)::+) => {
        $(#[$doc])*
        fn $name(e: HostError) -> $($types)::+::HostError {
            use $($types)::+::HostError as W;
            match e {
                HostError::AccessDenied(s) => W::AccessDenied(s),
                HostError::Invalid(s) => W::Invalid(s),
                HostError::NotFound(s) => W::NotFound(s),
                HostError::Conflict(s) => W::Conflict(s),
                HostError::TooLarge(s) => W::TooLarge(s),
                HostError::Unavailable(s) => W::Unavailable(s),
                HostError::Client(m) => W::Client($($types)::+::MagnumError {
                    status: m.status,
                    kind: m.kind.to_string(),
                    message: m.message,
                }),
                HostError::Other(s) => W::Other(s),
            }
        }
    };
}

host_error_to!(
    /// A host error as contract 1.0 has it.
    host_error10,
    w10::types
);
host_error_to!(host_error, w::types);

fn unavailable(what: &str) -> w::types::HostError {
    w::types::HostError::Unavailable(format!("no {what} is configured on this host"))
}

impl w::types::Host for CallState {}

impl w::log::Host for CallState {
    async fn write(
        &mut self,
        level: w::log::Level,
        message: String,
        fields: Vec<(String, String)>,
    ) {
        // The message and its fields are one line of the call's log, cut
        // at MAX_LOG_LINE together before anything is formatted, so that a
        // huge field costs no more than a short one.
        let original = message.len()
            + fields
                .iter()
                .map(|(k, v)| k.len() + v.len() + 2)
                .sum::<usize>();
        let message = cut_line(&message);
        let mut fields_text = String::new();
        for (k, v) in fields.iter().take(MAX_LOG_FIELDS) {
            let room = MAX_LOG_LINE.saturating_sub(message.len() + fields_text.len());
            if room == 0 {
                break;
            }
            let field = format!("{}={:?}", cut_to(k, room), cut_to(v, room));
            if !fields_text.is_empty() {
                fields_text.push(' ');
            }
            fields_text.push_str(cut_to(&field, room));
        }
        if !self
            .budget()
            .admit(original, message.len() + fields_text.len())
        {
            return;
        }
        let fields = fields_text;
        let driver = self.pkg.name.as_str();
        let cluster_uuid = self.cluster_uuid.as_deref().unwrap_or("");
        let request_id = self.request_id.as_str();
        match level {
            w::log::Level::Trace => {
                tracing::trace!(driver, cluster_uuid, request_id, fields, "{message}")
            }
            w::log::Level::Debug => {
                tracing::debug!(driver, cluster_uuid, request_id, fields, "{message}")
            }
            w::log::Level::Info => {
                tracing::info!(driver, cluster_uuid, request_id, fields, "{message}")
            }
            w::log::Level::Warn => {
                tracing::warn!(driver, cluster_uuid, request_id, fields, "{message}")
            }
            w::log::Level::Error => {
                tracing::error!(driver, cluster_uuid, request_id, fields, "{message}")
            }
        }
    }

    async fn max_level(&mut self) -> w::log::Level {
        use tracing::level_filters::LevelFilter;
        match LevelFilter::current() {
            LevelFilter::TRACE => w::log::Level::Trace,
            LevelFilter::DEBUG => w::log::Level::Debug,
            LevelFilter::INFO => w::log::Level::Info,
            LevelFilter::WARN => w::log::Level::Warn,
            _ => w::log::Level::Error,
        }
    }
}

impl w::config::Host for CallState {
    async fn get(&mut self, key: String) -> Option<String> {
        self.pkg.options.get(&key).cloned()
    }

    async fn all(&mut self) -> Vec<(String, String)> {
        self.pkg
            .options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    async fn read_file(&mut self, path: String) -> Result<String, w::types::HostError> {
        if !self.pkg.caps.files {
            return Err(self.denied(format!("files (read of {path:?})")));
        }
        let Some(dir) = self.pkg.files_dir.clone() else {
            return Err(unavailable("files directory"));
        };
        let rel = Path::new(&path);
        if path.is_empty() || !rel.components().all(|c| matches!(c, PathPart::Normal(_))) {
            return Err(w::types::HostError::Invalid(format!(
                "{path:?} is not a relative path without '..'"
            )));
        }
        let max = self.pkg.limits.max_import_bytes;
        let full = dir.join(rel);
        let read = async {
            let dir = tokio::fs::canonicalize(&dir).await?;
            let full = tokio::fs::canonicalize(&full).await?;
            if !full.starts_with(&dir) {
                return Ok(Err(w::types::HostError::Invalid(format!(
                    "{path:?} leads outside the driver's files"
                ))));
            }
            let meta = tokio::fs::metadata(&full).await?;
            if meta.len() > max as u64 {
                return Ok(Err(w::types::HostError::TooLarge(format!(
                    "{path:?} is larger than {max} bytes"
                ))));
            }
            let bytes = tokio::fs::read(&full).await?;
            Ok::<_, std::io::Error>(
                String::from_utf8(bytes)
                    .map_err(|_| w::types::HostError::Invalid(format!("{path:?} is not UTF-8"))),
            )
        };
        match read.await {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(w::types::HostError::NotFound(path))
            }
            Err(e) => Err(w::types::HostError::Other(format!("{path:?}: {e}"))),
        }
    }
}

impl w::state::Host for CallState {
    async fn get(&mut self, key: String) -> Option<String> {
        let cluster = self.cluster_uuid.as_deref()?;
        self.pkg.services.state.get(&self.pkg.name, cluster, &key)
    }

    async fn set(&mut self, key: String, value: String) -> Result<(), w::types::HostError> {
        let Some(cluster) = self.cluster_uuid.as_deref() else {
            return Err(w::types::HostError::Invalid(
                "this call is about no cluster: there is no state to write".to_string(),
            ));
        };
        self.pkg
            .services
            .state
            .set(
                &self.pkg.name,
                cluster,
                key,
                value,
                self.pkg.limits.max_state_bytes,
            )
            .map_err(host_error)
    }

    async fn remove(&mut self, key: String) {
        if let Some(cluster) = self.cluster_uuid.as_deref() {
            self.pkg
                .services
                .state
                .remove(&self.pkg.name, cluster, &key);
        }
    }

    async fn clear(&mut self) {
        if let Some(cluster) = self.cluster_uuid.as_deref() {
            self.pkg.services.state.clear(&self.pkg.name, cluster);
        }
    }
}

/// The object as the driver sees it after the host checked its envelope
/// against its body (and filled a missing `metadata.namespace`).
fn checked_body(obj: &w::types::K8sObject) -> Result<String, w::types::HostError> {
    let invalid = |m: String| w::types::HostError::Invalid(m);
    let mut v: serde_json::Value = serde_json::from_str(&obj.json).map_err(|e| {
        invalid(format!(
            "the body of {} {} is not JSON: {e}",
            obj.kind, obj.name
        ))
    })?;
    let Some(body) = v.as_object_mut() else {
        return Err(invalid(format!(
            "the body of {} {} is not a JSON object",
            obj.kind, obj.name
        )));
    };
    let field =
        |body: &serde_json::Map<String, serde_json::Value>, path: &[&str]| -> Option<String> {
            let mut cur = body.get(path[0])?;
            for p in &path[1..] {
                cur = cur.get(p)?;
            }
            cur.as_str().map(str::to_string)
        };
    let disagree = |what: &str, body: Option<String>, envelope: &str| {
        invalid(format!(
            "the body's {what} ({}) disagrees with the envelope ({envelope})",
            body.unwrap_or_else(|| "missing".to_string())
        ))
    };
    let api = field(body, &["apiVersion"]);
    if api.as_deref() != Some(obj.api_version.as_str()) {
        return Err(disagree("apiVersion", api, &obj.api_version));
    }
    let kind = field(body, &["kind"]);
    if kind.as_deref() != Some(obj.kind.as_str()) {
        return Err(disagree("kind", kind, &obj.kind));
    }
    let name = field(body, &["metadata", "name"]);
    if name.as_deref() != Some(obj.name.as_str()) {
        return Err(disagree("metadata.name", name, &obj.name));
    }
    let ns = field(body, &["metadata", "namespace"]);
    match (&obj.namespace, ns) {
        (Some(want), None) => {
            if let Some(meta) = body.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                meta.insert(
                    "namespace".to_string(),
                    serde_json::Value::String(want.clone()),
                );
            }
            Ok(v.to_string())
        }
        (Some(want), Some(got)) if &got == want => Ok(obj.json.clone()),
        (None, None) => Ok(obj.json.clone()),
        (want, got) => Err(disagree(
            "metadata.namespace",
            got,
            want.as_deref().unwrap_or("cluster-scoped"),
        )),
    }
}

fn scope(ns: Option<&str>) -> String {
    match ns {
        Some(ns) => format!("in namespace {ns}"),
        None => "cluster-scoped".to_string(),
    }
}

impl CallState {
    fn check_kube(
        &self,
        verb: &str,
        api: &str,
        kind: &str,
        ns: Option<&str>,
    ) -> Result<Arc<dyn KubeAccess>, w::types::HostError> {
        if self.pure {
            return Err(self.impure(&format!("kube {verb}")));
        }
        if !self.pkg.caps.allows_kube(api, kind, verb, ns) {
            return Err(self.denied(format!("kube {verb} of {api}/{kind} {}", scope(ns))));
        }
        self.pkg
            .services
            .kube
            .clone()
            .ok_or_else(|| unavailable("Kubernetes management cluster"))
    }

    fn check_openstack(
        &self,
        group: &str,
        function: &str,
    ) -> Result<Arc<dyn OpenStackAccess>, w::types::HostError> {
        if self.pure {
            return Err(self.impure(&format!("openstack {function}")));
        }
        if !self.pkg.caps.allows_openstack(group) {
            return Err(self.denied(format!("openstack {group} ({function})")));
        }
        self.pkg
            .services
            .openstack
            .clone()
            .ok_or_else(|| unavailable("OpenStack client"))
    }
}

impl w::kube::Host for CallState {
    async fn apply(
        &mut self,
        obj: w::types::K8sObject,
    ) -> Result<w::types::K8sObject, w::types::HostError> {
        let max = self.pkg.limits.max_import_bytes;
        if obj.json.len() > max {
            return Err(w::types::HostError::TooLarge(format!(
                "{} {} is {} bytes, more than the {max} bytes allowed",
                obj.kind,
                obj.name,
                obj.json.len()
            )));
        }
        let kube = self.check_kube(
            "apply",
            &obj.api_version,
            &obj.kind,
            obj.namespace.as_deref(),
        )?;
        let json = checked_body(&obj)?;
        let obj = convert::object_from(w::types::K8sObject { json, ..obj });
        kube.apply(obj, &field_manager(&self.pkg.name))
            .await
            .map(|o| convert::object_to(&o))
            .map_err(host_error)
    }

    async fn get(
        &mut self,
        r: w::types::ObjectRef,
    ) -> Result<Option<w::types::K8sObject>, w::types::HostError> {
        let kube = self.check_kube("get", &r.api_version, &r.kind, r.namespace.as_deref())?;
        kube.get(convert::ref_from(r))
            .await
            .map(|o| o.map(|o| convert::object_to(&o)))
            .map_err(host_error)
    }

    async fn list_by_label(
        &mut self,
        sel: w::types::Selector,
    ) -> Result<Vec<w::types::K8sObject>, w::types::HostError> {
        let kube = self.check_kube(
            "list",
            &sel.api_version,
            &sel.kind,
            sel.namespace.as_deref(),
        )?;
        kube.list(convert::selector_to_plain(sel))
            .await
            .map(|l| l.iter().map(convert::object_to).collect())
            .map_err(host_error)
    }

    async fn delete(&mut self, r: w::types::ObjectRef) -> Result<bool, w::types::HostError> {
        let kube = self.check_kube("delete", &r.api_version, &r.kind, r.namespace.as_deref())?;
        kube.delete(convert::ref_from(r)).await.map_err(host_error)
    }

    async fn served(
        &mut self,
        api_version: String,
        kind: String,
    ) -> Result<bool, w::types::HostError> {
        // Needs no grant of the kind: whether a server serves it is no
        // secret, and a driver asks before it relies on a provider's kind.
        if self.pure {
            return Err(self.impure("kube served"));
        }
        let Some(kube) = self.pkg.services.kube.clone() else {
            return Err(unavailable("Kubernetes management cluster"));
        };
        kube.served(&api_version, &kind).await.map_err(host_error)
    }
}

/// `From` conversions between a host record and a contract record with
/// the same fields: `A => B` one way, `both A, B` both ways.
macro_rules! same_fields {
    ($a:ty => $b:ty { $($field:ident),+ }) => {
        impl From<$a> for $b {
            fn from(v: $a) -> Self {
                Self { $($field: v.$field),+ }
            }
        }
    };
    (both $a:ty, $b:ty { $($field:ident),+ }) => {
        same_fields!($a => $b { $($field),+ });
        same_fields!($b => $a { $($field),+ });
    };
}

same_fields!(crate::access::Image => w::openstack::Image { id, disk_bus });
same_fields!(crate::access::ApplicationCredential => w::openstack::ApplicationCredential { id, secret, name, user_id });
same_fields!(both crate::access::LoadBalancer, w::openstack::LoadBalancer { id, name, description, project_id, provisioning_status, vip_port_id });
same_fields!(crate::access::VolumeType => w::openstack::VolumeType { name, is_default });
same_fields!(crate::access::Flavor => w::openstack::Flavor { id, name, vcpus, ram_mb, disk_gb, extra_specs });
same_fields!(crate::access::ShareType => w::openstack::ShareType { id, name, is_default, driver_handles_share_servers });
same_fields!(crate::access::CloudInfo => w::cloud::CloudInfo { keystone_url, region, endpoint_interface, ca_bundle, verify, cluster_ca_bundle, cluster_verify_ca });
same_fields!(crate::access::KeyPair => w10::cluster_secrets::KeyPair { cert_pem, key_pem, passphrase });

/// The answer of an OpenStack call in the contract's terms.
async fn relay<T, U: From<T>>(
    call: crate::access::HostFuture<'_, Result<T, HostError>>,
) -> Result<U, w::types::HostError> {
    call.await.map(U::from).map_err(host_error)
}

/// The records of a list the service may not have (`None`), in the
/// contract's terms.
fn records<T, U: From<T>>(list: Option<Vec<T>>) -> Option<Vec<U>> {
    list.map(|l| l.into_iter().map(U::from).collect())
}

impl w::openstack::Host for CallState {
    async fn resolve_flavor_name(
        &mut self,
        reference: String,
    ) -> Result<String, w::types::HostError> {
        let os = self.check_openstack("resolve", "resolve-flavor-name")?;
        relay(os.flavor_name(&self.credentials, &reference)).await
    }

    async fn resolve_image(
        &mut self,
        reference: String,
    ) -> Result<w::openstack::Image, w::types::HostError> {
        let os = self.check_openstack("resolve", "resolve-image")?;
        relay(os.image(&self.credentials, &reference)).await
    }

    async fn resolve_network_id(
        &mut self,
        reference: String,
    ) -> Result<String, w::types::HostError> {
        let os = self.check_openstack("resolve", "resolve-network-id")?;
        relay(os.network_id(&self.credentials, &reference)).await
    }

    async fn resolve_subnet_id(
        &mut self,
        reference: String,
    ) -> Result<String, w::types::HostError> {
        let os = self.check_openstack("resolve", "resolve-subnet-id")?;
        relay(os.subnet_id(&self.credentials, &reference)).await
    }

    async fn ensure_server_group(
        &mut self,
        name: String,
        policy: String,
    ) -> Result<String, w::types::HostError> {
        let os = self.check_openstack("server-groups", "ensure-server-group")?;
        relay(os.ensure_server_group(&self.credentials, &name, &policy)).await
    }

    async fn delete_server_group(&mut self, name: String) -> Result<(), w::types::HostError> {
        let os = self.check_openstack("server-groups", "delete-server-group")?;
        relay(os.delete_server_group(&self.credentials, &name)).await
    }

    async fn create_application_credential(
        &mut self,
        name: String,
        description: String,
    ) -> Result<w::openstack::ApplicationCredential, w::types::HostError> {
        let os =
            self.check_openstack("application-credentials", "create-application-credential")?;
        relay(os.create_application_credential(&self.credentials, &name, &description)).await
    }

    async fn delete_application_credential(
        &mut self,
        user_id: String,
        id: String,
    ) -> Result<(), w::types::HostError> {
        let os =
            self.check_openstack("application-credentials", "delete-application-credential")?;
        relay(os.delete_application_credential(&user_id, &id)).await
    }

    async fn load_balancers(
        &mut self,
        project_id: String,
    ) -> Result<Option<Vec<w::openstack::LoadBalancer>>, w::types::HostError> {
        let os = self.check_openstack("load-balancers", "load-balancers")?;
        let lbs = relay(os.load_balancers(&self.credentials, &project_id)).await;
        lbs.map(records)
    }

    async fn delete_load_balancer(
        &mut self,
        lb: w::openstack::LoadBalancer,
    ) -> Result<(), w::types::HostError> {
        let os = self.check_openstack("load-balancers", "delete-load-balancer")?;
        let lb = lb.into();
        relay(os.delete_load_balancer(&self.credentials, &lb)).await
    }

    async fn volume_types(
        &mut self,
    ) -> Result<Option<Vec<w::openstack::VolumeType>>, w::types::HostError> {
        let os = self.check_openstack("volume-types", "volume-types")?;
        let types = relay(os.volume_types(&self.credentials)).await;
        types.map(records)
    }

    async fn flavor_details(
        &mut self,
        reference: String,
    ) -> Result<w::openstack::Flavor, w::types::HostError> {
        let os = self.check_openstack("resolve", "flavor-details")?;
        relay(os.flavor(&self.credentials, &reference)).await
    }

    async fn share_types(
        &mut self,
    ) -> Result<Option<Vec<w::openstack::ShareType>>, w::types::HostError> {
        let os = self.check_openstack("share-types", "share-types")?;
        let types = relay(os.share_types(&self.credentials)).await;
        types.map(records)
    }
}

impl CallState {
    /// The certificates of the call's cluster, as the store keeps them
    /// (keys encrypted), after the grant and purity checks. The checks run
    /// before the future: it must not borrow the (not `Sync`) call state.
    fn cluster_cas(
        &self,
    ) -> impl Future<Output = Result<crate::access::ClusterCas, HostError>> + Send + 'static {
        let asked = self.secrets_for_call();
        async move {
            let (secrets, cluster) = asked?;
            secrets.cluster_cas(&cluster).await
        }
    }

    /// The certificate store and the call's cluster, after the grant and
    /// purity checks.
    #[allow(clippy::type_complexity)]
    fn secrets_for_call(
        &self,
    ) -> Result<(std::sync::Arc<dyn crate::access::SecretsAccess>, Cluster), HostError> {
        if self.pure {
            return Err(HostError::AccessDenied(
                "cluster-secrets during derive-status, which is pure".to_string(),
            ));
        }
        if !self.pkg.caps.cluster_secrets {
            return Err(self.refusal("cluster-secrets".to_string()));
        }
        let Some(cluster) = self.cluster.clone() else {
            return Err(HostError::Invalid(
                "this call is about no cluster".to_string(),
            ));
        };
        let Some(secrets) = self.pkg.services.secrets.clone() else {
            return Err(HostError::Unavailable(
                "no certificate store is configured on this host".to_string(),
            ));
        };
        Ok((secrets, cluster))
    }
}

/// A key pair with its key decrypted: unencrypted PKCS#8 PEM.
fn decrypted(k: crate::access::KeyPair) -> Result<w::cluster_secrets::KeyPair, HostError> {
    let key = magnum_x509::decrypt_pkcs8_pem(k.key_pem.as_bytes(), &k.passphrase)
        .and_then(|key| magnum_x509::encrypt_pkcs8_pem(&key, ""))
        .map_err(|e| HostError::Other(format!("cannot decrypt a key of the cluster: {e}")))?;
    Ok(w::cluster_secrets::KeyPair {
        cert_pem: k.cert_pem,
        key_pem: key,
    })
}

impl w::cluster_secrets::Host for CallState {
    async fn cas(&mut self) -> Result<w::cluster_secrets::ClusterCas, w::types::HostError> {
        let c = self.cluster_cas().await.map_err(host_error)?;
        let pair = |k| decrypted(k).map_err(host_error);
        Ok(w::cluster_secrets::ClusterCas {
            kubernetes: pair(c.kubernetes)?,
            etcd: pair(c.etcd)?,
            front_proxy: pair(c.front_proxy)?,
            admin: pair(c.admin)?,
        })
    }
}

/// Contract 1.0's certificates: the keys as Magnum stores them, encrypted,
/// with their passphrase.
impl w10::cluster_secrets::Host for CallState {
    async fn cas(&mut self) -> Result<w10::cluster_secrets::ClusterCas, w10::types::HostError> {
        let kp = w10::cluster_secrets::KeyPair::from;
        self.cluster_cas()
            .await
            .map(|c| w10::cluster_secrets::ClusterCas {
                kubernetes: kp(c.kubernetes),
                etcd: kp(c.etcd),
                front_proxy: kp(c.front_proxy),
                admin: kp(c.admin),
            })
            .map_err(host_error10)
    }
}

impl w10::types::Host for CallState {}

impl w::cloud::Host for CallState {
    async fn info(&mut self) -> w::cloud::CloudInfo {
        let c = match &self.pkg.services.cloud {
            Some(cloud) => cloud.info().await,
            None => crate::access::CloudInfo {
                endpoint_interface: "public".to_string(),
                verify: true,
                cluster_verify_ca: true,
                ..Default::default()
            },
        };
        c.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(json: &str, ns: Option<&str>) -> w::types::K8sObject {
        w::types::K8sObject {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: ns.map(str::to_string),
            name: "cm".into(),
            json: json.into(),
        }
    }

    #[test]
    fn a_body_must_agree_with_its_envelope() {
        let ok =
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"a"}}"#;
        assert!(matches!(checked_body(&obj(ok, Some("a"))), Ok(s) if s == ok));
        for bad in [
            r#"{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"cm","namespace":"a"}}"#,
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"cm","namespace":"a"}}"#,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other","namespace":"a"}}"#,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"b"}}"#,
            r#"["not an object"]"#,
            r#"not json"#,
        ] {
            assert!(
                matches!(
                    checked_body(&obj(bad, Some("a"))),
                    Err(w::types::HostError::Invalid(_))
                ),
                "{bad}"
            );
        }
        let cluster_scoped =
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"a"}}"#;
        assert!(checked_body(&obj(cluster_scoped, None)).is_err());
    }

    #[test]
    fn a_missing_namespace_is_filled_from_the_envelope() {
        let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}"#;
        let out = checked_body(&obj(body, Some("a"))).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        assert_eq!(
            v.pointer("/metadata/namespace").and_then(|v| v.as_str()),
            Some("a")
        );
    }
}
