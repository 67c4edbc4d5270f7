//! The metrics: the registry, the observers of driver calls, and their
//! listener.

use super::*;

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
pub(super) struct Observers(Vec<Arc<dyn driver_host::CallObserver>>);

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
