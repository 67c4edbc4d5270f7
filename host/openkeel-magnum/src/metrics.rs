//! Prometheus metrics (`[metrics]`): the series of the API, the driver
//! calls, the status loop and the database, answered by `GET /metrics` on a
//! listener of their own in the OpenMetrics text format.
//!
//! Counters and histograms are atomics updated where things happen; the
//! gauges of state held elsewhere (database pools, queues, breakers, the
//! Lease) are sampled when the metrics are scraped. Labels take values
//! from bounded sets only — route patterns, methods, status codes, driver
//! packages, driver functions, fault kinds — never an id, a name, a
//! project or a token.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode, header};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::traces::{RoutePattern, UNMATCHED, method_label};

/// The media type of the answer.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    route: &'static str,
    method: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    driver: String,
    function: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FaultLabels {
    driver: String,
    function: &'static str,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DriverLabels {
    driver: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    pool: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

fn http_histogram() -> Histogram {
    // 5 ms to about 80 s: a create answers once its rows are written, but
    // a slow database or Keystone stretches any request.
    Histogram::new(exponential_buckets(0.005, 2.0, 15))
}

fn driver_histogram() -> Histogram {
    // 2 ms to about 260 s: up to the longest call timeout
    // ([drivers]/max_call_timeout, 300 s), so a slow call is not just
    // `+Inf`.
    Histogram::new(exponential_buckets(0.002, 2.0, 18))
}

/// What is sampled at scrape time.
type Sampler = Box<dyn Fn(&Metrics) + Send + Sync>;

/// The process's metrics. Shared (`Arc`) by the API layer, the driver host
/// (as its call observer) and the samplers.
pub struct Metrics {
    registry: Registry,
    http_requests: Family<HttpLabels, Counter>,
    http_seconds: Histograms<HttpLabels>,
    driver_calls: Family<CallLabels, Counter>,
    driver_seconds: Histograms<CallLabels>,
    driver_faults: Family<FaultLabels, Counter>,
    driver_breaker_open: Family<DriverLabels, Gauge>,
    db_in_use: Family<PoolLabels, Gauge>,
    db_idle: Family<PoolLabels, Gauge>,
    db_retries: Counter,
    db_acquisitions: Counter,
    db_wait: Counter<f64, AtomicU64>,
    create_jobs_queued: Gauge,
    reconciler_in_progress: Gauge,
    reconciler_polling: Gauge,
    reconciler_pending: Gauge,
    watch_reflectors: Gauge,
    watch_objects: Gauge,
    lease_held: Gauge,
    watch_derivations: Counter,
    watch_lag: Counter<f64, AtomicU64>,
    token_cache: Family<ResultLabels, Counter>,
    list_cache: Family<ResultLabels, Counter>,
    notifications: Family<OutcomeLabels, Counter>,
    samplers: Mutex<Vec<Sampler>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// Every series, registered under the `openkeel_magnum_` prefix.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("openkeel_magnum");
        let m = Metrics {
            registry: Registry::default(),
            http_requests: Family::default(),
            http_seconds: Family::new_with_constructor(http_histogram),
            driver_calls: Family::default(),
            driver_seconds: Family::new_with_constructor(driver_histogram),
            driver_faults: Family::default(),
            driver_breaker_open: Family::default(),
            db_in_use: Family::default(),
            db_idle: Family::default(),
            db_retries: Counter::default(),
            db_acquisitions: Counter::default(),
            db_wait: Counter::default(),
            create_jobs_queued: Gauge::default(),
            reconciler_in_progress: Gauge::default(),
            reconciler_polling: Gauge::default(),
            reconciler_pending: Gauge::default(),
            watch_reflectors: Gauge::default(),
            watch_objects: Gauge::default(),
            lease_held: Gauge::default(),
            watch_derivations: Counter::default(),
            watch_lag: Counter::default(),
            token_cache: Family::default(),
            list_cache: Family::default(),
            notifications: Family::default(),
            samplers: Mutex::new(Vec::new()),
        };
        let r = &mut registry;
        r.register(
            "http_requests",
            "API requests answered, by route pattern, method and status",
            m.http_requests.clone(),
        );
        r.register(
            "http_request_duration_seconds",
            "Time from a request's arrival to its response head, by route pattern, method and status",
            m.http_seconds.clone(),
        );
        r.register(
            "driver_calls",
            "Driver calls made, by driver package and function",
            m.driver_calls.clone(),
        );
        r.register(
            "driver_call_duration_seconds",
            "Duration of driver calls (instantiation included), by driver package and function",
            m.driver_seconds.clone(),
        );
        r.register(
            "driver_faults",
            "Driver faults, by driver package, function and kind",
            m.driver_faults.clone(),
        );
        r.register(
            "driver_breaker_open",
            "1 while the driver package's breaker refuses its calls",
            m.driver_breaker_open.clone(),
        );
        r.register(
            "db_connections_in_use",
            "Database connections lent out, by pool",
            m.db_in_use.clone(),
        );
        r.register(
            "db_connections_idle",
            "Database connections open and idle, by pool",
            m.db_idle.clone(),
        );
        r.register(
            "create_jobs_queued",
            "Cluster create jobs waiting for a worker",
            m.create_jobs_queued.clone(),
        );
        r.register(
            "reconciler_clusters_in_progress",
            "Clusters in progress (*_IN_PROGRESS) found by the reconciler's last pass",
            m.reconciler_in_progress.clone(),
        );
        r.register(
            "reconciler_clusters_polling",
            "Clusters whose status the reconciler is polling now",
            m.reconciler_polling.clone(),
        );
        r.register(
            "reconciler_clusters_pending",
            "Watched clusters whose status waits to be derived",
            m.reconciler_pending.clone(),
        );
        r.register(
            "watch_reflectors",
            "Watches the reconciler keeps on the management cluster",
            m.watch_reflectors.clone(),
        );
        r.register(
            "watch_objects",
            "Objects the reconciler's watches hold",
            m.watch_objects.clone(),
        );
        r.register(
            "reconciler_lease_held",
            "1 while this instance holds the reconciler's Lease",
            m.lease_held.clone(),
        );
        r.register(
            "db_transaction_retries",
            "Database statements and transactions run again after a deadlock, a lock wait timeout, a serialisation failure or a busy SQLite database",
            m.db_retries.clone(),
        );
        r.register(
            "db_connection_acquisitions",
            "Pooled database connections taken for a transaction or a request's reads",
            m.db_acquisitions.clone(),
        );
        r.register(
            "db_connection_wait_seconds",
            "Time spent waiting for those connections (for a transaction, until its BEGIN answered)",
            m.db_wait.clone(),
        );
        r.register(
            "watch_status_derivations",
            "Cluster statuses derived from watched changes",
            m.watch_derivations.clone(),
        );
        r.register(
            "watch_lag_seconds",
            "Time from each watched change's arrival to its cluster's status being derived (the debounce included), summed",
            m.watch_lag.clone(),
        );
        r.register(
            "token_cache_lookups",
            "Keystone token cache lookups, by result (hit, miss)",
            m.token_cache.clone(),
        );
        r.register(
            "list_cache_lookups",
            "Cluster list answers looked up in the list cache, by result (hit, miss)",
            m.list_cache.clone(),
        );
        r.register(
            "notifications",
            "Notifications for the message bus, by outcome (queued, delivered, failed after retries, dropped)",
            m.notifications.clone(),
        );
        Metrics { registry, ..m }
    }

    /// Counts a request answered with `status` after `elapsed`.
    pub fn request(&self, route: &'static str, method: &Method, status: u16, elapsed: Duration) {
        let labels = HttpLabels {
            route,
            method: method_label(method),
            status,
        };
        self.http_requests.get_or_create(&labels).inc();
        self.http_seconds
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Adds a sampler, run at every scrape before the series are written.
    pub fn sample(&self, f: impl Fn(&Metrics) + Send + Sync + 'static) {
        lock(&self.samplers).push(Box::new(f));
    }

    /// Samples the conductor: its drivers' breakers, database pools and
    /// create-job queue.
    pub fn sample_conductor(&self, conductor: crate::conductor::Conductor) {
        self.sample(move |m| {
            for (package, health) in conductor.drivers().package_health() {
                m.driver_breaker_open
                    .get_or_create(&DriverLabels { driver: package })
                    .set(i64::from(health.open));
            }
            for (pool, in_use, idle) in conductor.database_connections() {
                let l = PoolLabels { pool };
                m.db_in_use.get_or_create(&l).set(gauge(in_use));
                m.db_idle.get_or_create(&l).set(gauge(idle));
            }
            m.create_jobs_queued
                .set(gauge(conductor.create_jobs_queued()));
            let (hits, misses) = conductor.list_cache().counts();
            advance(&m.list_cache, ResultLabels { result: "hit" }, hits);
            advance(&m.list_cache, ResultLabels { result: "miss" }, misses);
            let db = crate::db::stats();
            advance_to(&m.db_retries, db.retries);
            advance_to(&m.db_acquisitions, db.acquisitions);
            advance_seconds(&m.db_wait, db.wait);
            let n = conductor.notifier().stats();
            for (outcome, count) in [
                ("queued", n.queued),
                ("delivered", n.delivered),
                ("failed", n.failed),
                ("dropped", n.dropped),
            ] {
                advance(&m.notifications, OutcomeLabels { outcome }, count);
            }
        });
    }

    /// Samples the authenticator's token cache (Keystone only).
    pub fn sample_auth(&self, auth: Arc<dyn crate::api::Authenticator>) {
        self.sample(move |m| {
            if let Some((hits, misses)) = auth.token_cache_counts() {
                advance(&m.token_cache, ResultLabels { result: "hit" }, hits);
                advance(&m.token_cache, ResultLabels { result: "miss" }, misses);
            }
        });
    }

    /// Samples the status loop: clusters in progress, and when it watches,
    /// its watches and Lease.
    pub fn sample_reconciler(&self, reconciler: crate::reconcile::Reconciler) {
        self.sample(move |m| {
            let g = reconciler.gauges();
            m.reconciler_in_progress.set(gauge(g.in_progress));
            m.reconciler_polling.set(gauge(g.polling));
            m.reconciler_pending.set(gauge(g.pending));
            m.watch_reflectors.set(gauge(g.reflectors));
            m.watch_objects.set(gauge(g.objects));
            m.lease_held.set(i64::from(g.lease_held));
            advance_to(&m.watch_derivations, g.derived);
            advance_seconds(&m.watch_lag, g.lag);
        });
    }

    /// The exposition: every series, sampled now.
    pub fn render(&self) -> String {
        for s in lock(&self.samplers).iter() {
            s(self);
        }
        let mut out = String::new();
        // Writing to a String does not fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

impl driver_host::CallObserver for Metrics {
    fn call(
        &self,
        driver: &str,
        function: &'static str,
        _request_id: &str,
        elapsed: Duration,
        _fault: Option<driver_host::FaultKind>,
    ) {
        let labels = CallLabels {
            driver: driver.to_string(),
            function,
        };
        self.driver_calls.get_or_create(&labels).inc();
        self.driver_seconds
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    fn fault(&self, driver: &str, function: &'static str, kind: driver_host::FaultKind) {
        self.driver_faults
            .get_or_create(&FaultLabels {
                driver: driver.to_string(),
                function,
                kind: kind.as_str(),
            })
            .inc();
    }
}

/// Brings the counter of `labels` up to `total`, a count kept elsewhere.
fn advance<L>(family: &Family<L, Counter>, labels: L, total: u64)
where
    L: Clone + std::hash::Hash + Eq,
{
    advance_to(&family.get_or_create(&labels), total);
}

/// Brings a counter up to a total counted elsewhere.
fn advance_to(c: &Counter, total: u64) {
    let now = c.get();
    if total > now {
        c.inc_by(total - now);
    }
}

/// Brings a counter of seconds up to a duration summed elsewhere.
fn advance_seconds(c: &Counter<f64, AtomicU64>, total: Duration) {
    let missing = total.as_secs_f64() - c.get();
    if missing > 0.0 {
        c.inc_by(missing);
    }
}

fn gauge(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The API layer: counts every request by the route pattern the API set on
/// its response ([`UNMATCHED`] when none).
pub async fn track(State(metrics): State<Arc<Metrics>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let resp = next.run(req).await;
    let route = resp
        .extensions()
        .get::<RoutePattern>()
        .map_or(UNMATCHED, |r| r.0);
    metrics.request(route, &method, resp.status().as_u16(), started.elapsed());
    resp
}

/// The metrics listener's application: `GET /metrics`, 404 elsewhere.
pub fn router(metrics: Arc<Metrics>) -> axum::Router {
    axum::Router::new()
        .route("/metrics", axum::routing::get(scrape))
        .with_state(metrics)
}

async fn scrape(State(metrics): State<Arc<Metrics>>) -> Response {
    let body = metrics.render();
    let mut resp = (StatusCode::OK, body).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use driver_host::CallObserver;

    #[test]
    fn the_exposition_carries_each_series_with_its_labels() {
        let m = Metrics::new();
        m.request(
            "/v1/clusters/{cluster_ident}",
            &Method::GET,
            404,
            Duration::from_millis(3),
        );
        m.request(
            UNMATCHED,
            &Method::from_bytes(b"BREW").unwrap(),
            405,
            Duration::ZERO,
        );
        m.call(
            "capi",
            "create-cluster",
            "req-1",
            Duration::from_millis(40),
            None,
        );
        m.fault("capi", "create-cluster", driver_host::FaultKind::Timeout);
        m.sample(|m| {
            m.create_jobs_queued.set(2);
            let main = PoolLabels { pool: "main" };
            m.db_in_use.get_or_create(&main).set(1);
            m.db_idle.get_or_create(&main).set(0);
            m.driver_breaker_open
                .get_or_create(&DriverLabels {
                    driver: "capi".into(),
                })
                .set(0);
            m.notifications
                .get_or_create(&OutcomeLabels { outcome: "failed" })
                .inc();
            // Totals counted elsewhere, read twice: counted once.
            for _ in 0..2 {
                advance_to(&m.db_retries, 3);
                advance_seconds(&m.db_wait, Duration::from_millis(250));
            }
        });
        let text = m.render();
        for line in [
            "openkeel_magnum_http_requests_total{route=\"/v1/clusters/{cluster_ident}\",method=\"GET\",status=\"404\"} 1",
            "openkeel_magnum_http_requests_total{route=\"unmatched\",method=\"other\",status=\"405\"} 1",
            "openkeel_magnum_http_request_duration_seconds_bucket{le=\"0.005\",route=\"/v1/clusters/{cluster_ident}\",method=\"GET\",status=\"404\"} 1",
            "openkeel_magnum_driver_calls_total{driver=\"capi\",function=\"create-cluster\"} 1",
            "openkeel_magnum_driver_call_duration_seconds_count{driver=\"capi\",function=\"create-cluster\"} 1",
            "openkeel_magnum_driver_faults_total{driver=\"capi\",function=\"create-cluster\",kind=\"timeout\"} 1",
            "openkeel_magnum_create_jobs_queued 2",
            "openkeel_magnum_db_transaction_retries_total 3",
            "openkeel_magnum_db_connection_wait_seconds_total 0.25",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing from\n{text}"
            );
        }
        assert!(text.ends_with("# EOF\n"), "{text}");

        // The sample alerts (deploy/prometheus) name only series of this
        // exposition.
        let rules = include_str!("../../../deploy/prometheus/openkeel-magnum-alerts.yaml");
        let named: std::collections::BTreeSet<&str> = rules
            .match_indices("openkeel_magnum_")
            .map(|(i, _)| {
                let rest = &rules[i..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                    .unwrap_or(rest.len());
                &rest[..end]
            })
            .collect();
        assert!(named.len() >= 8, "series of the sample alerts: {named:?}");
        for name in named {
            assert!(
                text.lines().any(|l| l
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with(['{', ' ']))),
                "the sample alerts name {name}, which is not served:\n{text}"
            );
        }
    }

    struct Cached(std::sync::atomic::AtomicU64);

    impl crate::api::Authenticator for Cached {
        fn authenticate<'a>(
            &'a self,
            _: &'a http::HeaderMap,
        ) -> futures::future::BoxFuture<'a, Result<magnum_domain::RequestContext, Response>>
        {
            Box::pin(async { Ok(magnum_domain::RequestContext::default()) })
        }

        fn token_cache_counts(&self) -> Option<(u64, u64)> {
            let n = self.0.load(std::sync::atomic::Ordering::SeqCst);
            Some((n, 1))
        }
    }

    #[test]
    fn counts_kept_elsewhere_are_counters_that_follow_them() {
        let m = Metrics::new();
        let auth = Arc::new(Cached(std::sync::atomic::AtomicU64::new(3)));
        m.sample_auth(auth.clone());
        let hits = |text: &str| {
            text.lines()
                .find_map(|l| {
                    l.strip_prefix("openkeel_magnum_token_cache_lookups_total{result=\"hit\"} ")
                })
                .map(str::to_string)
        };
        assert_eq!(hits(&m.render()).as_deref(), Some("3"));
        // A second scrape adds nothing; a later count adds the difference.
        assert_eq!(hits(&m.render()).as_deref(), Some("3"));
        auth.0.store(7, std::sync::atomic::Ordering::SeqCst);
        let text = m.render();
        assert_eq!(hits(&text).as_deref(), Some("7"));
        assert!(
            text.lines()
                .any(|l| l == "openkeel_magnum_token_cache_lookups_total{result=\"miss\"} 1"),
            "{text}"
        );
    }
}
