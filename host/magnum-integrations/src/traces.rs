//! OpenTelemetry traces (`[tracing]`): a span per API request, per driver
//! call and per pass of the status loop, exported in batches to an
//! OTLP/HTTP collector (`<otlp_endpoint>/v1/traces`, protobuf) with the
//! process's HTTP client.
//!
//! Off unless configured: then no tracer exists, the request layer and
//! the driver-call observer are not installed, and the status loop's
//! passes check one `OnceLock`.
//!
//! Every span of a request carries its `request_id` (the
//! `x-openstack-request-id` the service answers with), the request's own
//! and its driver calls', also those made later by its create job; the
//! driver calls of the status loop carry the `pass_id` of their pass
//! instead. Attributes take their values from the route pattern, the
//! method, the status, the driver package and function, and these ids —
//! never a token, a header, a body, a key or a CSR.
//!
//! Export runs on the batch processor's thread, its posts on the
//! process's runtime, each bounded by `[tracing]/export_timeout`; spans
//! the collector cannot take are dropped (the queue holds 2048) and the
//! failure is logged at most once a minute. A request never waits for
//! the collector.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use opentelemetry::trace::{
    FutureExt, Span, SpanKind, Status, TraceContextExt, Tracer, TracerProvider,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchSpanProcessor, Sampler, SdkTracer, SdkTracerProvider, SpanData, SpanExporter,
};

use http::Method;

/// The attribute of the request id.
pub const REQUEST_ID: &str = "request_id";

/// The attribute of the status loop pass id.
pub const PASS_ID: &str = "pass_id";

/// How often a failing export is logged at most.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// The tracer, set once tracing is started.
static TRACER: OnceLock<SdkTracer> = OnceLock::new();

/// The `route` of a request answered before a route of the API was chosen:
/// an unknown path, a refused authentication or microversion, a CORS
/// preflight.
pub const UNMATCHED: &str = "unmatched";

/// The route pattern that answered a request (`/v1/clusters/{cluster_ident}`),
/// set on the response by the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoutePattern(pub &'static str);

/// The method as a label: the methods of HTTP, any other as `other`.
pub fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// `[tracing]`: where and how spans are exported.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSettings {
    /// `[tracing]/otlp_endpoint`: the collector's base URL (empty: the
    /// `OTEL_EXPORTER_OTLP_*` variables).
    pub otlp_endpoint: String,
    /// `[tracing]/export_timeout`.
    pub export_timeout: Duration,
    /// `[tracing]/sample_ratio`, clamped to 0..=1.
    pub sample_ratio: f64,
    /// `[tracing]/service_name`.
    pub service_name: String,
}

/// Why traces could not start.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TraceError(String);

/// The traces of a running process: shut down (the spans queued are
/// sent) by [`Traces::shutdown`].
pub struct Traces {
    provider: SdkTracerProvider,
    export_timeout: Duration,
}

impl std::fmt::Debug for Traces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Traces").finish_non_exhaustive()
    }
}

impl Traces {
    /// Sends the spans still queued, for at most the export timeout plus
    /// a second, off the runtime's workers.
    pub async fn shutdown(self) {
        let timeout = self.export_timeout + Duration::from_secs(1);
        let provider = self.provider;
        let done = tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(timeout));
        match tokio::time::timeout(timeout + Duration::from_secs(1), done).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => tracing::warn!(error = %e, "traces: shutdown"),
            _ => tracing::warn!("traces: shutdown did not finish"),
        }
    }
}

/// Where spans are posted: `<[tracing]/otlp_endpoint>/v1/traces`; with the
/// option empty, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
/// `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`; `None`: no traces.
pub fn endpoint(settings: &TraceSettings) -> Option<String> {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let configured = settings.otlp_endpoint.trim();
    if !configured.is_empty() {
        return Some(traces_url(configured));
    }
    env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT").map(|e| traces_url(&e)))
}

fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

/// Starts tracing when an endpoint is configured ([`endpoint`]): must be
/// called on the runtime, whose workers make the posts. An endpoint that
/// is not an http(s) URL fails the start.
pub fn start(settings: &TraceSettings) -> Result<Option<Traces>, TraceError> {
    let Some(url) = endpoint(settings) else {
        return Ok(None);
    };
    let http = |u: &str| {
        url::Url::parse(u)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
    };
    // The base checked too: `http://` + `/v1/traces` would name host `v1`.
    let configured = settings.otlp_endpoint.trim();
    let parsed = http(&url).filter(|_| configured.is_empty() || http(configured).is_some());
    let Some(parsed) = parsed else {
        return Err(TraceError(format!(
            "[tracing]/otlp_endpoint: {url:?} is not an http(s) URL"
        )));
    };
    let timeout = settings.export_timeout;
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| TraceError(format!("traces: HTTP client: {e}")))?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(Post {
            client,
            runtime: tokio::runtime::Handle::current(),
        })
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(url.clone())
        .with_timeout(timeout)
        .build()
        .map_err(|e| TraceError(format!("traces: {e}")))?;
    let exporter = Logged {
        inner: exporter,
        logged: Mutex::new(None),
    };
    let ratio = settings.sample_ratio.clamp(0.0, 1.0);
    let provider = SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::builder(exporter).build())
        .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
            ratio,
        ))))
        .with_resource(
            Resource::builder()
                .with_service_name(settings.service_name.clone())
                .build(),
        )
        .build();
    if TRACER.set(provider.tracer("openkeel-magnum")).is_err() {
        tracing::warn!("traces: already started");
    }
    tracing::info!(
        collector = %format!("{}://{}", parsed.scheme(), parsed.authority().rsplit('@').next().unwrap_or_default()),
        sample_ratio = ratio,
        "exporting traces"
    );
    Ok(Some(Traces {
        provider,
        export_timeout: timeout,
    }))
}

/// Whether spans are made.
pub fn enabled() -> bool {
    TRACER.get().is_some()
}

/// The API layer: a server span per request, named and described by the
/// route pattern the API set on its response ([`UNMATCHED`] when none),
/// the parent of the driver calls the request makes. Installed only when
/// tracing is on.
pub async fn track(req: Request, next: Next) -> Response {
    let Some(tracer) = TRACER.get() else {
        return next.run(req).await;
    };
    let method = method_label(req.method());
    let span = tracer
        .span_builder(method)
        .with_kind(SpanKind::Server)
        .start_with_context(tracer, &Context::new());
    let cx = Context::new()
        .with_span(span)
        .with_value(RequestSlot::default());
    let resp = next.run(req).with_context(cx.clone()).await;
    let span = cx.span();
    let route = resp
        .extensions()
        .get::<RoutePattern>()
        .map_or(UNMATCHED, |r| r.0);
    let status = resp.status().as_u16();
    span.update_name(format!("{method} {route}"));
    let mut attributes = vec![
        KeyValue::new("http.request.method", method),
        KeyValue::new("http.route", route),
        KeyValue::new("http.response.status_code", i64::from(status)),
    ];
    if let Some(id) = resp
        .headers()
        .get(crate::auth::REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        attributes.push(KeyValue::new(REQUEST_ID, id.to_owned()));
    }
    span.set_attributes(attributes);
    if status >= 500 {
        span.set_status(Status::error(format!("answered {status}")));
    }
    span.end();
    resp
}

/// The request id of the request answered on a task, noted by the API's
/// request-id layer (inside this one) for the driver calls made without
/// one (`validate-master-size`).
#[derive(Clone, Debug, Default)]
struct RequestSlot(std::sync::Arc<OnceLock<String>>);

/// Notes `id` as the request id of the request traced on this task (no-op
/// when tracing is off).
pub fn note_request_id(id: &str) {
    if TRACER.get().is_none() {
        return;
    }
    if let Some(slot) = Context::current().get::<RequestSlot>() {
        let _ = slot.0.set(id.to_owned());
    }
}

/// The pass id of the status loop pass running on a task.
#[derive(Clone, Debug)]
struct PassId(String);

/// The span of one status loop pass: the parent of the driver calls of
/// the work bound to it ([`Pass::bind`]). Empty when tracing is off.
#[derive(Default)]
pub struct Pass(Option<Context>);

impl Pass {
    /// A pass span starting now, when tracing is on.
    pub fn start() -> Pass {
        let Some(tracer) = TRACER.get() else {
            return Pass(None);
        };
        let id = format!("pass-{}", uuid::Uuid::new_v4());
        let span = tracer
            .span_builder("status pass")
            .with_kind(SpanKind::Internal)
            .with_attributes([KeyValue::new(PASS_ID, id.clone())])
            .start_with_context(tracer, &Context::new());
        Pass(Some(Context::new().with_span(span).with_value(PassId(id))))
    }

    /// `work` run in the pass's context (as it is when tracing is off).
    pub fn bind<F: Future>(
        &self,
        work: F,
    ) -> futures::future::Either<F, opentelemetry::context::WithContext<F>> {
        match &self.0 {
            None => futures::future::Either::Left(work),
            Some(cx) => futures::future::Either::Right(work.with_context(cx.clone())),
        }
    }

    /// Ends the span; `clusters` were worked on, `errors` failed.
    pub fn end(self, clusters: usize, errors: usize) {
        if let Some(cx) = self.0 {
            let span = cx.span();
            span.set_attributes([
                KeyValue::new("clusters", i64::try_from(clusters).unwrap_or(i64::MAX)),
                KeyValue::new("errors", i64::try_from(errors).unwrap_or(i64::MAX)),
            ]);
            if errors > 0 {
                span.set_status(Status::error("the pass met errors"));
            }
            span.end();
        }
    }
}

/// The driver-call observer of traces: a span per call, the child of the
/// request or pass span of the calling task when there is one, with the
/// call's request id (the request's when the call has none, or the pass
/// id for background work).
#[derive(Debug, Default)]
pub struct DriverSpans;

impl driver_host::CallObserver for DriverSpans {
    fn call(
        &self,
        driver: &str,
        function: &'static str,
        request_id: &str,
        elapsed: Duration,
        fault: Option<driver_host::FaultKind>,
    ) {
        let Some(tracer) = TRACER.get() else {
            return;
        };
        let end = SystemTime::now();
        let start = end.checked_sub(elapsed).unwrap_or(end);
        let cx = Context::current();
        let mut attributes = vec![
            KeyValue::new("driver", driver.to_owned()),
            KeyValue::new("function", function),
        ];
        let noted = cx.get::<RequestSlot>().and_then(|s| s.0.get());
        if !request_id.is_empty() {
            attributes.push(KeyValue::new(REQUEST_ID, request_id.to_owned()));
        } else if let Some(id) = noted {
            attributes.push(KeyValue::new(REQUEST_ID, id.clone()));
        } else if let Some(p) = cx.get::<PassId>() {
            attributes.push(KeyValue::new(PASS_ID, p.0.clone()));
        }
        let mut span = tracer
            .span_builder(format!("driver {function}"))
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes(attributes)
            .start_with_context(tracer, &cx);
        if let Some(kind) = fault {
            span.set_attribute(KeyValue::new("fault", kind.as_str()));
            span.set_status(Status::error(format!("driver fault: {}", kind.as_str())));
        }
        span.end_with_timestamp(end);
    }

    fn fault(&self, driver: &str, function: &'static str, kind: driver_host::FaultKind) {
        // Every fault is also an event of the request's or pass's span: the
        // only record of an answer the host refused or of a call the open
        // breaker refused, which have no span of their own.
        if TRACER.get().is_none() {
            return;
        }
        Context::current().span().add_event(
            "driver fault",
            vec![
                KeyValue::new("driver", driver.to_owned()),
                KeyValue::new("function", function),
                KeyValue::new("fault", kind.as_str()),
            ],
        );
    }
}

/// Posts with the process's HTTP client on its runtime (the batch
/// processor's thread has none).
#[derive(Debug)]
struct Post {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

type Posted = Result<http::Response<Bytes>, opentelemetry_http::HttpError>;

impl opentelemetry_http::HttpClient for Post {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: http::Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Posted> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        let client = self.client.clone();
        let task = self.runtime.spawn(async move {
            let request = reqwest::Request::try_from(request)?;
            let resp = client.execute(request).await?;
            let mut answer = http::Response::builder().status(resp.status());
            for (k, v) in resp.headers() {
                answer = answer.header(k, v);
            }
            let body = resp.bytes().await?;
            Ok::<_, opentelemetry_http::HttpError>(answer.body(body)?)
        });
        Box::pin(async move { task.await? })
    }
}

/// The OTLP exporter, its failures logged at most once a minute.
#[derive(Debug)]
struct Logged<E> {
    inner: E,
    logged: Mutex<Option<Instant>>,
}

impl<E: SpanExporter> SpanExporter for Logged<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        let r = self.inner.export(batch).await;
        if let Err(e) = &r {
            let mut logged = self.logged.lock().unwrap_or_else(|e| e.into_inner());
            if logged.is_none_or(|t| t.elapsed() >= LOG_EVERY) {
                *logged = Some(Instant::now());
                tracing::warn!(spans, error = %e, "traces: the collector did not take spans (dropped; logged at most once a minute)");
            }
        }
        r
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(otlp_endpoint: &str) -> TraceSettings {
        TraceSettings {
            otlp_endpoint: otlp_endpoint.into(),
            export_timeout: Duration::from_secs(10),
            sample_ratio: 1.0,
            service_name: "magnum".into(),
        }
    }

    #[test]
    fn the_endpoint_is_the_collector_base_url_plus_the_traces_path() {
        let o = settings("http://collector:4318/");
        assert_eq!(
            endpoint(&o).as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(traces_url("https://c/otlp"), "https://c/otlp/v1/traces");
    }

    #[test]
    fn an_endpoint_that_is_not_an_http_url_stops_the_start() {
        for bad in ["collector:4318", "ftp://collector", "http://"] {
            let o = settings(bad);
            let e = start(&o).expect_err(bad).to_string();
            assert!(e.starts_with("[tracing]/otlp_endpoint: "), "{e}");
        }
        assert!(!enabled());
    }
}
