//! The composition root: from the options to a database, a policy
//! enforcer, an authenticator and the HTTP application, and serving it.
//! Nothing else builds these parts.

use std::fmt;
use std::future::IntoFuture;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use driver_host::{DriverConfig, DriverHost, DriverSettings, HostServices};

use crate::api::{self, Api, ApiOptions, CorsOptions};
use crate::auth;
use crate::certs::{self, X509Options};
use crate::conductor::{self, Conductor, Heartbeat};
use crate::db::{self, Db, DbTarget, Dialect};
use crate::notify::{self, Notifier, NotifierSettings};
use crate::openstack::{self, Lookup};
use crate::options::{AuthStrategy, Options};
use crate::policy::{self, Enforcer, PolicySettings};

/// How long a graceful stop waits for requests in flight.
const DRAIN: Duration = Duration::from_secs(15);

/// How the process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `openkeel-magnum api`: configured entirely by the files.
    Api,
    /// `openkeel-magnum all-in-one`: the embedded default (SQLite file,
    /// fake driver, no Keystone), schema created on start.
    AllInOne,
}

/// A start-up failure: one line naming its cause (never a secret).
#[derive(Debug)]
pub struct StartError(String);

impl StartError {
    /// A failure with `message`, made one line.
    pub fn new(message: impl fmt::Display) -> StartError {
        let text = message.to_string();
        StartError(text.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

/// Starts traces from `[tracing]` (none without an endpoint).
pub fn start_traces(options: &Options) -> Result<Option<crate::traces::Traces>, StartError> {
    let t = &options.tracing;
    let settings = crate::traces::TraceSettings {
        otlp_endpoint: t.otlp_endpoint.clone(),
        export_timeout: std::time::Duration::from_secs(t.export_timeout.max(1).unsigned_abs()),
        sample_ratio: t.sample_ratio,
        service_name: t.service_name.clone(),
    };
    crate::traces::start(&settings).map_err(StartError::new)
}

/// `[database]` as the database layer's target: the translated URL, the
/// SQLAlchemy pool options and oslo.db's retries.
pub fn database_target(options: &Options) -> Result<DbTarget, StartError> {
    if options
        .database
        .connection
        .as_ref()
        .is_none_or(|c| c.expose().trim().is_empty())
    {
        return Err(StartError::new("[database]/connection is not set"));
    }
    let url = options.database_url().map_err(StartError::new)?;
    let dialect = match url.dialect() {
        oslo_config::database::Dialect::MySql => Dialect::MySql,
        oslo_config::database::Dialect::Postgres => Dialect::Postgres,
        oslo_config::database::Dialect::Sqlite => Dialect::Sqlite,
    };
    let d = &options.database;
    let mut target = DbTarget::new(dialect, url.sqlx_url())
        .with_pool_limits(db::pool_limits(d.max_pool_size, d.max_overflow));
    target.acquire_timeout = url.connect_timeout();
    if d.connection_recycle_time > 0 {
        target.max_lifetime = Some(Duration::from_secs(
            d.connection_recycle_time.unsigned_abs(),
        ));
    }
    if d.db_max_retries > 0 {
        target.max_attempts = u32::try_from(d.db_max_retries + 1).unwrap_or(u32::MAX);
    }
    Ok(target)
}

/// Connects to `[database]/connection`. The error names the database
/// (password masked) and the cause on one line.
pub async fn open_database(options: &Options) -> Result<Db, StartError> {
    let target = database_target(options)?;
    Db::open(&target)
        .await
        .map_err(|e| StartError::new(format!("database {}: {e}", target.redacted_url())))
}

/// The `[oslo_policy]` options, with the configuration files' directories
/// searched first for relative policy files.
pub fn policy_settings(options: &Options) -> PolicySettings {
    let p = &options.oslo_policy;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for f in options.files() {
        if let Some(parent) = f.parent()
            && !dirs.iter().any(|d| d == parent)
        {
            dirs.push(parent.to_path_buf());
        }
    }
    PolicySettings {
        policy_file: p.policy_file.clone(),
        policy_dirs: p.policy_dirs.clone(),
        enforce_scope: options
            .lookup("oslo_policy", "enforce_scope")
            .is_some_and(|v| {
                matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "true" | "1" | "on" | "yes"
                )
            }),
        enforce_new_defaults: p.enforce_new_defaults,
        policy_default_rule: p.policy_default_rule.clone(),
        config_dirs_for_search: dirs,
    }
}

/// Loads Magnum's default rules and the configured overrides.
pub fn load_policy(options: &Options) -> Result<Enforcer, StartError> {
    policy::load(&policy_settings(options)).map_err(|e| StartError::new(format!("policy: {e}")))
}

/// What the HTTP layer takes from the options.
pub fn api_options(options: &Options) -> ApiOptions {
    let c = &options.cors;
    let disable_file = &options.healthcheck.disable_by_file_path;
    ApiOptions {
        max_limit: options.api.max_limit,
        cors: CorsOptions {
            allowed_origin: c.allowed_origin.clone(),
            allow_credentials: c.allow_credentials,
            expose_headers: c.expose_headers.clone(),
            max_age: c.max_age.max(0).unsigned_abs(),
            allow_methods: c.allow_methods.clone(),
            allow_headers: c.allow_headers.clone(),
        },
        proxy_headers: options.oslo_middleware.enable_proxy_headers_parsing,
        healthcheck_disable_file: (options
            .healthcheck
            .backends
            .iter()
            .any(|b| b == "disable_by_file")
            && !disable_file.is_empty())
        .then(|| PathBuf::from(disable_file)),
        unversioned_at_route_minimum: options.api.unversioned_at_route_minimum,
        ..ApiOptions::default()
    }
}

/// The listen address of `[api]`.
pub fn listen_address(options: &Options) -> Result<SocketAddr, StartError> {
    let host: IpAddr = options.api.host.parse().map_err(|_| {
        StartError::new(format!(
            "[api]/host: {:?} is not an IP address",
            options.api.host
        ))
    })?;
    Ok(SocketAddr::new(host, options.api.port))
}

/// The metrics of a server process: with `[metrics]` enabled, the driver
/// host observed and the conductor's pools and queue sampled at scrape
/// time. With traces started ([`crate::traces::start`], before this), the
/// driver calls make spans too; with neither, nothing observes them.
pub fn metrics(options: &Options, conductor: &Conductor) -> Arc<crate::metrics::Metrics> {
    let metrics = Arc::new(crate::metrics::Metrics::new());
    let mut observers: Vec<Arc<dyn driver_host::CallObserver>> = Vec::new();
    if options.metrics.enabled {
        observers.push(metrics.clone());
        metrics.sample_conductor(conductor.clone());
    }
    if crate::traces::enabled() {
        observers.push(Arc::new(crate::traces::DriverSpans));
    }
    match observers.len() {
        0 => {}
        1 => conductor.drivers().observe_calls(observers.remove(0)),
        _ => conductor
            .drivers()
            .observe_calls(Arc::new(Observers(observers))),
    }
    metrics
}

/// Several driver-call observers (metrics and traces), told in turn.
struct Observers(Vec<Arc<dyn driver_host::CallObserver>>);

impl driver_host::CallObserver for Observers {
    fn call(
        &self,
        driver: &str,
        function: &'static str,
        request_id: &str,
        elapsed: Duration,
        fault: Option<driver_host::FaultKind>,
    ) {
        for o in &self.0 {
            o.call(driver, function, request_id, elapsed, fault);
        }
    }

    fn fault(&self, driver: &str, function: &'static str, kind: driver_host::FaultKind) {
        for o in &self.0 {
            o.fault(driver, function, kind);
        }
    }
}

/// `app` with every request counted in `metrics` when `[metrics]` is
/// enabled and traced when traces are started; as it is otherwise.
pub fn tracked(
    options: &Options,
    app: axum::Router,
    metrics: Arc<crate::metrics::Metrics>,
) -> axum::Router {
    let app = if crate::traces::enabled() {
        app.layer(axum::middleware::from_fn(crate::traces::track))
    } else {
        app
    };
    if !options.metrics.enabled {
        return app;
    }
    app.layer(axum::middleware::from_fn_with_state(
        metrics,
        crate::metrics::track,
    ))
}

/// Starts the `[metrics]` listener when it is enabled: the address is
/// bound at once (one in use fails the start), then `GET /metrics` is
/// served until the task is aborted.
pub async fn serve_metrics(
    options: &Options,
    metrics: Arc<crate::metrics::Metrics>,
) -> Result<Option<MetricsListener>, StartError> {
    let m = &options.metrics;
    if !m.enabled {
        return Ok(None);
    }
    let host: IpAddr = m.host.parse().map_err(|_| {
        StartError::new(format!("[metrics]/host: {:?} is not an IP address", m.host))
    })?;
    let addr = SocketAddr::new(host, m.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| StartError::new(format!("metrics: listen on {addr}: {e}")))?;
    tracing::info!(address = %addr, "serving metrics");
    let app = crate::metrics::router(metrics);
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "metrics listener");
        }
    });
    Ok(Some(MetricsListener(task)))
}

/// The running metrics listener; stopped when dropped.
pub struct MetricsListener(tokio::task::JoinHandle<()>);

impl Drop for MetricsListener {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The HTTP application with every handler of this build.
pub fn application(
    options: &Options,
    auth: Arc<dyn api::Authenticator>,
    conductor: Conductor,
    enforcer: Arc<Enforcer>,
) -> axum::Router {
    let handlers = api::handlers(&api::Services {
        conductor,
        enforcer,
    });
    Api::new(api_options(options), auth, handlers).into_router()
}

/// The heartbeat of this process's `magnum-conductor` row, every
/// `min(periodic_interval_max, service_down_time / 3)` seconds as Magnum's
/// conductor reports.
pub fn heartbeat(options: &Options, conductor: Conductor) -> Heartbeat {
    let d = &options.default;
    let secs = d.periodic_interval_max.min(d.service_down_time / 3).max(1);
    Heartbeat {
        conductor,
        host: d.host.clone().unwrap_or_else(host_name),
        binary: "magnum-conductor".into(),
        interval: Duration::from_secs(secs.unsigned_abs()),
    }
}

/// The status loop of the process: a tick every `[capi]/resync_interval`
/// seconds (10; every second in all-in-one, where one process does
/// everything), held under a name unique to the process, and
/// `[drivers]/status_concurrency` status calls of one driver at a time.
/// With a management cluster it watches the objects its drivers declare
/// and holds the coordination Lease of `[capi]/lease_namespace`; without
/// one, it polls and holds the database lease (three ticks).
pub async fn reconciler(
    options: &Options,
    mode: Mode,
    conductor: Conductor,
) -> Result<crate::reconcile::Reconciler, StartError> {
    let holder = format!("reconciler-{}", uuid::Uuid::new_v4());
    let mut settings = crate::reconcile::Settings::new(holder.clone());
    let capi = &options.capi;
    let secs = |s: i64| Duration::from_secs(s.max(1).unsigned_abs());
    settings.interval = if mode == Mode::AllInOne {
        Duration::from_secs(1)
    } else {
        secs(capi.resync_interval)
    };
    settings.delete_timeout = secs(capi.delete_timeout);
    settings.per_driver =
        usize::try_from(options.drivers.status_concurrency.max(1)).unwrap_or(usize::MAX);
    // Magnum's health monitor; a negative interval disables it, zero polls
    // the health at every pass.
    let health = options.kubernetes.health_polling_interval;
    settings.health_interval = (health >= 0).then(|| Duration::from_secs(health.unsigned_abs()));
    let Some(management) = management(options, mode).await? else {
        return Ok(crate::reconcile::Reconciler::new(conductor, settings));
    };
    let client = management.client().clone();
    let (hub, changed) = crate::watch::WatchHub::new(management);
    let namespace = capi.lease_namespace().to_owned();
    let lease = crate::watch::lease::KubeLease::new(
        client,
        crate::watch::lease::LeaseSettings {
            holder,
            namespace,
            duration: secs(capi.lease_duration),
            renew_deadline: secs(capi.renew_deadline),
            retry_period: secs(capi.retry_period),
            request_timeout: secs(capi.request_timeout),
        },
    );
    let watching = crate::reconcile::Watching::new(hub, changed, Arc::new(lease));
    Ok(crate::reconcile::Reconciler::watching(
        conductor, settings, watching,
    ))
}

/// The management cluster: `[capi]/kubeconfig`; with the option empty,
/// `api` and `reconciler` infer it (in-cluster service account,
/// `KUBECONFIG`) and go without one when there is none, and all-in-one
/// goes without. With `[capi]/management_cluster = memory` (all-in-one
/// only) it is the process's in-memory cluster.
pub async fn management(
    options: &Options,
    mode: Mode,
) -> Result<Option<Arc<crate::management::ManagementCluster>>, StartError> {
    use crate::management::{ManagementCluster, memory::MemoryCluster};
    if options.capi.in_memory() {
        if mode != Mode::AllInOne {
            return Err(StartError::new(
                "[capi]/management_cluster = memory is for all-in-one only: the in-memory \
                 cluster lives in one process",
            ));
        }
        return Ok(Some(ManagementCluster::in_memory(MemoryCluster::shared())));
    }
    let kubeconfig = options.capi.kubeconfig.trim();
    if !kubeconfig.is_empty() {
        return certs::management_client(kubeconfig)
            .await
            .map(|c| Some(ManagementCluster::new(c)))
            .map_err(|e| StartError::new(format!("management cluster: {e}")));
    }
    if mode == Mode::AllInOne {
        return Ok(None);
    }
    match certs::management_client("").await {
        Ok(c) => Ok(Some(ManagementCluster::new(c))),
        Err(e) => {
            tracing::info!("no management cluster: {e}");
            Ok(None)
        }
    }
}

/// The workers of the cluster create jobs: one less than the cores (at
/// least one), so that requests keep a core.
pub fn create_job_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get().saturating_sub(1))
        .unwrap_or(1)
        .max(1)
}

/// The machine's host name, as Magnum's `[DEFAULT]/host` default.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Serves `app` on the `[api]` address until SIGINT or SIGTERM, then drains
/// requests in flight for at most 15 seconds.
pub async fn serve(options: &Options, app: axum::Router) -> Result<(), StartError> {
    let addr = listen_address(options)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| StartError::new(format!("listen on {addr}: {e}")))?;
    tracing::info!(address = %addr, "serving the Magnum API");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut server = tokio::spawn(
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .into_future(),
    );
    tokio::select! {
        done = &mut server => return served(done),
        () = shutdown_signal() => {}
    }
    tracing::info!("stopping: draining requests in flight");
    let _ = stop.send(());
    match tokio::time::timeout(DRAIN, server).await {
        Ok(done) => served(done),
        Err(_) => {
            tracing::warn!("requests still in flight after the drain period: stopping anyway");
            Ok(())
        }
    }
}

fn served(done: Result<std::io::Result<()>, tokio::task::JoinError>) -> Result<(), StartError> {
    match done {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(StartError::new(format!("serve: {e}"))),
        Err(e) => Err(StartError::new(format!("serve: {e}"))),
    }
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

/// The authenticator `[DEFAULT]/auth_strategy` asks for. With Keystone, it
/// checks that the service obtains its own token, so that a wrong URL or
/// password fails at start.
pub async fn authenticator(
    options: &Options,
    enforcer: Arc<Enforcer>,
) -> Result<Arc<dyn api::Authenticator>, StartError> {
    let is_admin: auth::IsAdmin = Arc::new(move |ctx| policy::is_admin(&enforcer, ctx));
    if options.default.auth_strategy == AuthStrategy::NoAuth {
        return Ok(Arc::new(auth::Authenticator::NoAuth(auth::NoAuth::new(
            is_admin,
        ))));
    }
    let keystone =
        auth::Keystone::new(keystone_settings(options), is_admin).map_err(StartError::new)?;
    keystone.check().await.map_err(StartError::new)?;
    Ok(Arc::new(auth::Authenticator::Keystone(keystone)))
}

/// `[keystone_authtoken]` as the authenticator's settings.
pub fn keystone_settings(options: &Options) -> auth::KeystoneSettings {
    let k = &options.keystone_authtoken;
    let c = &k.credentials;
    auth::KeystoneSettings {
        auth_url: c.auth_url.clone().unwrap_or_default(),
        www_authenticate_uri: k.www_authenticate_uri.clone(),
        username: c.username.clone().unwrap_or_default(),
        password: c.password_text(),
        project_id: c.project_id.clone(),
        project_name: c.project_name.clone(),
        user_domain_id: c.user_domain_id.clone(),
        user_domain_name: c.user_domain_name.clone(),
        project_domain_id: c.project_domain_id.clone(),
        project_domain_name: c.project_domain_name.clone(),
        cafile: k.cafile.as_ref().map(PathBuf::from),
        insecure: k.insecure,
        token_cache_time: k.token_cache_time,
        timeout: k
            .http_connect_timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_secs(t.unsigned_abs())),
        delay_auth_decision: k.delay_auth_decision,
    }
}

/// The Cluster API driver's option holding the k8s-keystone-auth policy.
const KEYSTONE_AUTH_POLICY: &str = "keystone_auth_default_policy";

/// `[drivers]` and the `[driver:<package>]` groups as the driver host's
/// settings. A group with a key the host does not know fails, naming it.
pub fn driver_settings(options: &Options) -> Result<DriverSettings, StartError> {
    let d = &options.drivers;
    let secs = |n: i64| Duration::from_secs(n.max(1).unsigned_abs());
    let kib = |n: i64| {
        usize::try_from(n.max(1).unsigned_abs().saturating_mul(1024)).unwrap_or(usize::MAX)
    };
    let mut drivers = std::collections::BTreeMap::new();
    for (package, entries) in options.driver_groups() {
        let pairs = entries.iter().map(|e| (e.key.as_str(), e.value.as_str()));
        let config = DriverConfig::from_group(pairs)
            .map_err(|e| StartError::new(format!("[driver:{package}]: {e}")))?;
        drivers.insert(package, config);
    }
    // The Cluster API driver reads the operator's add-on manifests
    // (`calico/<tag>.yaml`, `cilium/<tag>.yaml`) from `[capi]/
    // addons_manifests_dir`, as magnum-cluster-api's operators set it,
    // unless its own group names a `files_dir`.
    let addons = options.capi.addons_manifests_dir.trim();
    if !addons.is_empty() {
        let capi = drivers.entry("capi".to_string()).or_default();
        if capi.files_dir.is_none() {
            capi.files_dir = Some(PathBuf::from(addons));
        }
    }
    // And the k8s-keystone-auth policy it installs from `[kubernetes]/
    // keystone_auth_default_policy`, read here once: a missing file keeps
    // the driver's built-in policy, as magnum-cluster-api's does.
    let policy = options.kubernetes.keystone_auth_default_policy.trim();
    if !policy.is_empty() {
        match std::fs::read_to_string(policy) {
            Ok(text) => {
                if let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
                    return Err(StartError::new(format!(
                        "[kubernetes]/keystone_auth_default_policy {policy}: not JSON: {e}"
                    )));
                }
                let capi = drivers.entry("capi".to_string()).or_default();
                capi.options
                    .entry(KEYSTONE_AUTH_POLICY.to_string())
                    .or_insert(text);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(StartError::new(format!(
                    "[kubernetes]/keystone_auth_default_policy {policy}: {e}"
                )));
            }
        }
    }
    Ok(DriverSettings {
        default_driver: d.default_driver.clone(),
        enabled_beta_drivers: d.enabled_beta_drivers.clone(),
        disabled_drivers: d.disabled_drivers.clone(),
        drivers_path: d.drivers_path.iter().map(PathBuf::from).collect(),
        precompiled_cache_dir: (!d.precompiled_cache_dir.is_empty())
            .then(|| PathBuf::from(&d.precompiled_cache_dir)),
        pooling_allocator: d.pooling_allocator,
        drivers,
        breaker: driver_host::BreakerSettings {
            threshold: u32::try_from(d.breaker_threshold.max(1)).unwrap_or(u32::MAX),
            window: secs(d.breaker_window),
            cooldown: secs(d.breaker_cooldown),
        },
        maxima: driver_host::Maxima {
            call_timeout: secs(d.max_call_timeout),
            memory_bytes: d
                .max_memory_mb
                .max(1)
                .unsigned_abs()
                .saturating_mul(1 << 20),
            output_bytes: kib(d.max_output_kb),
            log_bytes: kib(d.log_kb_per_call),
            log_lines: usize::try_from(d.log_lines_per_call.max(1)).unwrap_or(usize::MAX),
            state_bytes: kib(d.max_state_kb),
        },
    })
}

/// Loads the built-in drivers and those of `[drivers]/drivers_path`,
/// compiled off the request path before the first request.
pub async fn start_drivers(options: &Options) -> Result<DriverHost, StartError> {
    start_drivers_with(options, HostServices::default()).await
}

/// [`start_drivers`] with the services a serving process gives drivers.
pub async fn start_drivers_with(
    options: &Options,
    services: HostServices,
) -> Result<DriverHost, StartError> {
    let settings = driver_settings(options)?;
    let host = DriverHost::start(settings, services)
        .await
        .map_err(|e| StartError::new(format!("drivers: {e}")))?;
    // What compiling the components allocated is garbage now.
    crate::memory::release_free_memory();
    Ok(host)
}

/// What a serving process gives drivers. Their `kube` import reaches the
/// management cluster of `[capi]/kubeconfig`; with the option empty, `api`
/// infers it (in-cluster service account, `KUBECONFIG`) and goes without
/// one when there is none, and all-in-one goes without. Without a
/// management cluster a driver's Kubernetes calls answer `unavailable`.
///
/// Their `cluster-secrets` import reads `certificates`, the conductor's
/// certificate store. Their `openstack` import resolves names through
/// `lookup` and makes its other calls with the `[*_client]` options (and
/// magnum-cluster-api's `[manila_client]`) in a session whose service
/// credentials are `[keystone_auth]`'s, else `[keystone_authtoken]`'s;
/// application credentials are made at the Keystone users authenticate
/// with (`[keystone_authtoken]/www_authenticate_uri`, else its `auth_url`)
/// with the roles of `[capi]/app_credential_roles`. All-in-one has no
/// cloud: its drivers' OpenStack calls answer `unavailable`.
pub async fn driver_services(
    options: &Options,
    mode: Mode,
    lookup: Arc<dyn Lookup>,
    certificates: Arc<dyn certs::Store>,
) -> Result<HostServices, StartError> {
    let management = management(options, mode).await?;
    let openstack = if mode == Mode::AllInOne {
        None
    } else {
        let k = &options.keystone_auth;
        let authtoken = &options.keystone_authtoken;
        // Magnum: magnum/common/keystone.py falls back on the
        // [keystone_authtoken] credentials when [keystone_auth] has none.
        let c = if k.credentials.auth_url.is_some() {
            &k.credentials
        } else {
            &authtoken.credentials
        };
        let service = c
            .auth_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(|auth_url| openstack::ServiceCredentials {
                auth_url: auth_url.to_owned(),
                username: c.username.clone().unwrap_or_default(),
                password: c.password_text(),
                user_domain_id: c.user_domain_id.clone(),
                user_domain_name: c.user_domain_name.clone(),
                project_id: c.project_id.clone(),
                project_name: c.project_name.clone(),
                project_domain_id: c.project_domain_id.clone(),
                project_domain_name: c.project_domain_name.clone(),
                system_scope: c.system_scope.clone(),
                region_name: authtoken.region_name.clone().filter(|r| !r.is_empty()),
                interface: None,
            });
        let session = openstack::Session::new(session_settings(options), service)
            .map_err(|e| StartError::new(format!("drivers: {e}")))?;
        let manila = endpoint(&options.manila_client.client);
        let cloud = openstack::DriverCloud::new(
            lookup,
            session,
            openstack::DriverCloudSettings {
                app_credentials: openstack::AppCredentialSettings {
                    auth_url: authtoken
                        .www_authenticate_uri
                        .clone()
                        .or_else(|| authtoken.credentials.auth_url.clone())
                        .unwrap_or_default(),
                    roles: options.capi.app_credential_roles.clone(),
                },
                nova: endpoint(&options.nova_client),
                neutron: endpoint(&options.neutron_client),
                octavia: endpoint(&options.octavia_client.client),
                cinder: endpoint(&options.cinder_client),
                manila,
            },
        )
        .map_err(|e| StartError::new(format!("drivers: {e}")))?;
        Some(Arc::new(cloud) as Arc<dyn driver_host::OpenStackAccess>)
    };
    Ok(HostServices {
        cloud: Some(Arc::new(crate::cloud::ConfiguredCloud::from_options(
            options,
        ))),
        kube: management.map(|m| m as Arc<dyn driver_host::KubeAccess>),
        openstack,
        secrets: Some(Arc::new(certs::DriverSecrets::new(certificates))),
        ..HostServices::default()
    })
}

/// The conductor's settings from the options.
pub fn conductor_settings(options: &Options) -> conductor::Settings {
    conductor::Settings {
        max_clusters_per_project: options.quotas.max_clusters_per_project,
        kubernetes_allowed_network_drivers: options
            .cluster_template
            .kubernetes_allowed_network_drivers
            .clone(),
        kubernetes_default_network_driver: options
            .cluster_template
            .kubernetes_default_network_driver
            .clone(),
        service_down_time: Duration::from_secs(
            options.default.service_down_time.max(1).unsigned_abs(),
        ),
        max_limit: options.api.max_limit,
        status_fault_limit: u32::try_from(options.drivers.status_fault_limit.max(1))
            .unwrap_or(u32::MAX),
        max_snapshot_bytes: usize::try_from(options.drivers.max_snapshot_kb.max(1))
            .unwrap_or(usize::MAX / 1024)
            .saturating_mul(1024),
    }
}

/// `[x509]` as the certificate options.
pub fn x509_options(options: &Options) -> X509Options {
    let x = &options.x509;
    X509Options {
        allow_ca: x.allow_ca,
        allowed_extensions: x.allowed_extensions.clone(),
        allowed_key_usage: x.allowed_key_usage.clone(),
        term_of_validity: x.term_of_validity,
        rsa_key_size: u32::try_from(x.rsa_key_size).unwrap_or(2048),
        ..X509Options::default()
    }
}

/// `[oslo_messaging_notifications]` and the transport as the notifier's
/// settings.
pub fn notifier_settings(options: &Options) -> NotifierSettings {
    let n = &options.oslo_messaging_notifications;
    let host = options.default.host.clone().unwrap_or_else(host_name);
    NotifierSettings {
        drivers: n.driver.clone(),
        transport_url: n
            .transport_url
            .clone()
            .unwrap_or_else(|| options.default.transport_url.clone()),
        topics: n.topics.clone(),
        retry: n.retry,
        exchange: options.default.control_exchange.clone(),
        publisher_id: notify::publisher_id(&host),
        rabbit: rabbit_settings(&options.oslo_messaging_rabbit),
        ..NotifierSettings::default()
    }
}

/// `[oslo_messaging_rabbit]` as the publisher's settings.
fn rabbit_settings(r: &crate::options::OsloMessagingRabbit) -> notify::RabbitSettings {
    let secs = |n: i64| Duration::from_secs(u64::try_from(n).unwrap_or(0));
    // Set empty, a file option means none, as in oslo.messaging.
    let file = |f: &Option<String>| f.clone().filter(|f| !f.is_empty());
    notify::RabbitSettings {
        retry_interval: secs(r.rabbit_retry_interval),
        retry_backoff: secs(r.rabbit_retry_backoff),
        interval_max: secs(r.rabbit_interval_max),
        heartbeat_timeout_threshold: u16::try_from(r.heartbeat_timeout_threshold.max(0))
            .unwrap_or(u16::MAX),
        durable_queues: r.amqp_durable_queues,
        auto_delete: r.amqp_auto_delete,
        ha_queues: r.rabbit_ha_queues,
        quorum_queue: r.rabbit_quorum_queue,
        quorum_delivery_limit: r.rabbit_quorum_delivery_limit,
        quorum_max_memory_length: r.rabbit_quorum_max_memory_length,
        quorum_max_memory_bytes: r.rabbit_quorum_max_memory_bytes,
        ssl: r.ssl,
        ssl_ca_file: file(&r.ssl_ca_file),
        ssl_cert_file: file(&r.ssl_cert_file),
        ssl_key_file: file(&r.ssl_key_file),
        ..notify::RabbitSettings::default()
    }
}

/// The OpenStack session's TLS and timeout settings, from `[keystone_auth]`.
fn session_settings(options: &Options) -> openstack::SessionSettings {
    let k = &options.keystone_auth;
    openstack::SessionSettings {
        timeout: k
            .timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_secs(t.unsigned_abs())),
        cafile: k.cafile.as_ref().map(PathBuf::from),
        certfile: k.certfile.as_ref().map(PathBuf::from),
        keyfile: k.keyfile.as_ref().map(PathBuf::from),
        insecure: k.insecure,
        user_agent: None,
    }
}

/// Where a `[<service>_client]` group says a service is found in the
/// catalog.
fn endpoint(c: &crate::options::Client) -> openstack::EndpointSettings {
    openstack::EndpointSettings {
        region_name: c.region_name.clone(),
        endpoint_type: c.endpoint_type.clone(),
        endpoint: None,
    }
}

/// Glance, Nova and Neutron: the built-in data in all-in-one, else the
/// services of the caller's catalog with the `[*_client]` options.
pub fn lookup(options: &Options, mode: Mode) -> Result<Arc<dyn Lookup>, StartError> {
    if mode == Mode::AllInOne {
        return Ok(Arc::new(openstack::Static::new(true)));
    }
    let session =
        openstack::Session::new(session_settings(options), None).map_err(StartError::new)?;
    let clients = openstack::Clients::new(
        session,
        openstack::ClientsSettings {
            glance: endpoint(&options.glance_client),
            nova: endpoint(&options.nova_client),
            neutron: endpoint(&options.neutron_client),
        },
    )
    .map_err(StartError::new)?;
    Ok(Arc::new(clients))
}

/// Where cluster certificates are kept (`[certificates]/cert_manager_type`):
/// the x509keypair table of `db`, or Secrets of `[capi]/namespace` in the
/// management cluster `[capi]/kubeconfig` names.
pub async fn certificate_store(
    options: &Options,
    db: &Db,
) -> Result<Arc<dyn certs::Store>, StartError> {
    let configured = options.lookup("certificates", "cert_manager_type");
    let (kind, warning) =
        certs::StoreType::resolve(configured.as_deref().map(str::trim)).map_err(StartError::new)?;
    if let Some(w) = warning {
        tracing::warn!("{w}");
    }
    match kind {
        certs::StoreType::X509KeyPair => {
            Ok(Arc::new(certs::X509KeyPairStore::new(Arc::new(db.clone()))))
        }
        certs::StoreType::Kubernetes => {
            let client = if options.capi.in_memory() {
                crate::management::memory::MemoryCluster::shared().client()
            } else {
                certs::management_client(&options.capi.kubeconfig)
                    .await
                    .map_err(|e| {
                        StartError::new(format!(
                            "[certificates]/cert_manager_type = kubernetes: {e}"
                        ))
                    })?
            };
            Ok(Arc::new(certs::KubernetesStore::new(
                client,
                &options.capi.namespace,
            )))
        }
    }
}

/// The conductor of a server process: every part built from the options.
/// The certificate store and the lookups are built once: the conductor
/// keeps the clusters' certificates in the store and drivers read them
/// there; both resolve OpenStack names through the same lookups.
pub async fn conductor(options: &Options, mode: Mode, db: Db) -> Result<Conductor, StartError> {
    let lookup = lookup(options, mode)?;
    let store = certificate_store(options, &db).await?;
    let services = driver_services(options, mode, lookup.clone(), store.clone()).await?;
    let drivers = Arc::new(start_drivers_with(options, services).await?);
    let threads =
        std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1));
    let keys = Arc::new(
        certs::KeyGenerator::start(threads)
            .map_err(|e| StartError::new(format!("start the key generator: {e}")))?,
    );
    let notifier = Notifier::new(notifier_settings(options))
        .map_err(|e| StartError::new(format!("notifications: {e}")))?;
    Ok(Conductor::new(conductor::Parts {
        certificates: conductor::Certificates {
            store,
            keys,
            x509: x509_options(options),
        },
        db,
        template_drivers: drivers.clone(),
        drivers,
        lookup,
        notifier,
        settings: conductor_settings(options),
        clock: conductor::wall_clock(),
        new_uuid: conductor::random_uuids(),
    }))
}

#[cfg(test)]
mod tests {
    use super::{KEYSTONE_AUTH_POLICY, driver_settings};
    use crate::options::from_text;

    fn with_policy(path: &std::path::Path) -> crate::options::Options {
        from_text(&format!(
            "[kubernetes]\nkeystone_auth_default_policy = {}\n",
            path.display()
        ))
    }

    #[test]
    fn the_keystone_auth_policy_file_reaches_the_cluster_api_driver() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("policy.json");
        std::fs::write(&file, r#"[{"match": []}]"#).expect("write");
        let s = driver_settings(&with_policy(&file)).expect("settings");
        assert_eq!(
            s.drivers["capi"]
                .options
                .get(KEYSTONE_AUTH_POLICY)
                .map(String::as_str),
            Some(r#"[{"match": []}]"#)
        );
        // Missing (the default path on most hosts): the built-in policy.
        let s = driver_settings(&with_policy(&dir.path().join("none.json"))).expect("settings");
        assert!(s.drivers.get("capi").is_none_or(|c| c.options.is_empty()));
        // Not JSON: the service does not start, naming the option.
        std::fs::write(&file, "{not json").expect("write");
        let e = driver_settings(&with_policy(&file)).expect_err("not JSON");
        assert!(
            e.to_string()
                .contains("[kubernetes]/keystone_auth_default_policy"),
            "{e}"
        );
    }
}
