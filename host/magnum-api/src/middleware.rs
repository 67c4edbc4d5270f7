//! The layers in front of the dispatcher, outermost first: request id,
//! panic recovery, health check, CORS (oslo.middleware semantics) and the
//! proxy headers that decide the application URL of links.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use futures::FutureExt;
use http::header::{self, HeaderName, HeaderValue};
use http::{HeaderMap, Method, StatusCode};
use serde::Serialize;

use super::accept::Accept;
use super::errors::{ApiError, json_response};
use super::{Api, CorsOptions};

/// The response header carrying the request id (oslo.middleware
/// request_id).
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-openstack-request-id");

/// The request id of a request (`req-<uuid4>`), in its extensions.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

/// The application URL of a request (Magnum's
/// `pecan.request.application_url`): scheme and host after the proxy
/// headers, plus any `X-Forwarded-Prefix`, without a trailing slash.
#[derive(Clone, Debug)]
pub struct BaseUrl(pub String);

/// Sets `x-openstack-request-id` on every response.
pub async fn request_id(State(api): State<Arc<Api>>, mut req: Request, next: Next) -> Response {
    let id = (api.new_request_id)();
    crate::traces::note_request_id(&id);
    req.extensions_mut().insert(RequestId(id.clone()));
    let mut resp = next.run(req).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        resp.headers_mut().insert(REQUEST_ID, v);
    }
    resp
}

/// Turns a panic into Magnum's 500 body, logged once with the request id.
pub async fn catch_panic(req: Request, next: Next) -> Response {
    let id = req
        .extensions()
        .get::<RequestId>()
        .map(|r| r.0.clone())
        .unwrap_or_default();
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    match AssertUnwindSafe(next.run(req)).catch_unwind().await {
        Ok(resp) => resp,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic".into());
            tracing::error!(request_id = %id, %method, %path, panic = %what, "panic while serving request");
            ApiError::Internal(anyhow::anyhow!("panic")).render(&Accept::Absent)
        }
    }
}

/// Answers `/healthcheck` (oslo.middleware healthcheck with the
/// `disable_by_file` backend) and passes everything else on.
pub async fn healthcheck(State(api): State<Arc<Api>>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path != "/healthcheck" && !path.starts_with("/healthcheck/") {
        return next.run(req).await;
    }
    let mut resp = health(&api, &req);
    resp.extensions_mut()
        .insert(crate::traces::RoutePattern("/healthcheck"));
    resp
}

/// The answer of `/healthcheck`.
fn health(api: &Api, req: &Request) -> Response {
    let disabled = api
        .options
        .healthcheck_disable_file
        .as_ref()
        .is_some_and(|f| f.exists());
    let (status, reason) = if disabled {
        (StatusCode::SERVICE_UNAVAILABLE, "DISABLED BY FILE")
    } else {
        (StatusCode::OK, "OK")
    };
    if req.method() == Method::HEAD {
        let status = if status == StatusCode::OK {
            StatusCode::NO_CONTENT
        } else {
            status
        };
        return empty(status);
    }
    if Accept::of(req.headers()).health_json() {
        #[derive(Serialize)]
        struct Health {
            detailed: bool,
            reasons: [&'static str; 1],
        }
        return json_response(
            status,
            &Health {
                detailed: false,
                reasons: [reason],
            },
        );
    }
    let mut resp = Response::new(Body::from(reason));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=UTF-8"),
    );
    resp
}

fn empty(status: StatusCode) -> Response {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = status;
    resp
}

/// The headers always allowed in a CORS preflight (oslo.middleware).
const SIMPLE_HEADERS: &[&str] = &[
    "Accept",
    "Accept-Language",
    "Content-Type",
    "Cache-Control",
    "Content-Language",
    "Expires",
    "Last-Modified",
    "Pragma",
];

impl CorsOptions {
    /// The origin value to answer with, or `None` when the origin is not
    /// allowed.
    fn origin(&self, origin: &str) -> Option<String> {
        if self.allowed_origin.iter().any(|o| o == origin) {
            return Some(origin.to_string());
        }
        self.allowed_origin
            .iter()
            .any(|o| o == "*")
            .then(|| "*".to_string())
    }

    /// Adds the preflight headers when origin, method and headers are all
    /// allowed (oslo.middleware `_apply_cors_preflight_headers`).
    fn preflight(&self, h: &mut HeaderMap, req: &HeaderMap) {
        let Some(origin) = req
            .get(header::ORIGIN)
            .and_then(|v| v.to_str().ok())
            .and_then(|o| self.origin(o))
        else {
            return;
        };
        let Some(method) = req.get(header::ACCESS_CONTROL_REQUEST_METHOD) else {
            return;
        };
        let method = method.to_str().unwrap_or("");
        let requested: Vec<&str> = req
            .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .collect();
        if !self.allow_methods.iter().any(|m| m == method) {
            return;
        }
        let permitted = |x: &str| {
            self.allow_headers
                .iter()
                .map(String::as_str)
                .chain(SIMPLE_HEADERS.iter().copied())
                .any(|p| p.eq_ignore_ascii_case(x))
        };
        if !requested.iter().all(|x| permitted(x)) {
            return;
        }
        set(h, header::VARY, "Origin");
        set(h, header::ACCESS_CONTROL_ALLOW_ORIGIN, &origin);
        if self.allow_credentials {
            set(h, header::ACCESS_CONTROL_ALLOW_CREDENTIALS, "true");
        }
        if self.max_age != 0 {
            set(h, header::ACCESS_CONTROL_MAX_AGE, &self.max_age.to_string());
        }
        set(h, header::ACCESS_CONTROL_ALLOW_METHODS, method);
        if !requested.is_empty() {
            set(
                h,
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                &requested.join(","),
            );
        }
    }

    /// Decorates the answer of a simple request from an allowed origin.
    fn simple(&self, h: &mut HeaderMap, origin: &str) {
        if h.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN) {
            return;
        }
        let vary = match h.get(header::VARY).and_then(|v| v.to_str().ok()) {
            Some(v) => format!("{v},Origin"),
            None => "Origin".to_string(),
        };
        set(h, header::VARY, &vary);
        set(h, header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        if self.allow_credentials {
            set(h, header::ACCESS_CONTROL_ALLOW_CREDENTIALS, "true");
        }
        if !self.expose_headers.is_empty() {
            set(
                h,
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                &self.expose_headers.join(","),
            );
        }
    }
}

fn set(h: &mut HeaderMap, name: HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        h.insert(name, v);
    }
}

/// oslo.middleware's CORS filter: simple requests get the allow-origin
/// headers; OPTIONS requests go through the application and, if it did not
/// answer 2xx, the answer becomes an empty 200, decorated with the preflight
/// headers when the preflight is acceptable.
pub async fn cors(State(api): State<Arc<Api>>, req: Request, next: Next) -> Response {
    let cors = &api.options.cors;
    let has_origin = req.headers().contains_key(header::ORIGIN);
    if req.method() == Method::OPTIONS {
        let headers = req.headers().clone();
        let mut resp = next.run(req).await;
        if resp.status().is_success() {
            if !resp
                .headers()
                .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN)
                && has_origin
            {
                cors.preflight(resp.headers_mut(), &headers);
            }
            return resp;
        }
        // Not 2xx: a bare 200 without Content-Type.
        let mut resp = empty(StatusCode::OK);
        if has_origin {
            cors.preflight(resp.headers_mut(), &headers);
        }
        resp.headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from_static("0"));
        return resp;
    }
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .and_then(|o| cors.origin(o));
    let mut resp = next.run(req).await;
    if let Some(origin) = origin {
        cors.simple(resp.headers_mut(), &origin);
    }
    resp
}

/// Computes the application URL, honouring the proxy headers when enabled
/// (oslo.middleware `http_proxy_to_wsgi`: `Forwarded` wins over the
/// `X-Forwarded-*` headers; `X-Forwarded-Prefix` prefixes the script name).
pub async fn proxy_headers(State(api): State<Arc<Api>>, mut req: Request, next: Next) -> Response {
    let h = req.headers();
    let header = |name: &str| {
        h.get(name)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
    };
    let mut scheme = req.uri().scheme_str().unwrap_or("http").to_string();
    let mut host = header("host")
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default();
    let mut prefix = String::new();
    if api.options.proxy_headers {
        if let Some(fwd) = header("forwarded") {
            let first = fwd.split(',').next().unwrap_or("");
            for kv in first.split(';') {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
                if k == "proto" && !v.is_empty() {
                    scheme = v.to_string();
                } else if k == "host" && !v.is_empty() {
                    host = v.to_string();
                }
            }
        } else {
            if let Some(p) = header("x-forwarded-proto") {
                scheme = p.to_string();
            }
            if let Some(x) = header("x-forwarded-host") {
                host = x.to_string();
            }
        }
        prefix = header("x-forwarded-prefix").unwrap_or("").to_string();
    }
    let base = format!("{scheme}://{}{prefix}", host_url(&scheme, &host));
    req.extensions_mut().insert(BaseUrl(base));
    next.run(req).await
}

/// Drops the default port, as WebOb's `host_url` does.
fn host_url<'a>(scheme: &str, host: &'a str) -> &'a str {
    if let Some(i) = host.rfind(':')
        && !host.ends_with(']')
    {
        let port = &host[i + 1..];
        if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
            return &host[..i];
        }
    }
    host
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_ports_are_dropped() {
        assert_eq!(host_url("http", "localhost:80"), "localhost");
        assert_eq!(host_url("https", "api:443"), "api");
        assert_eq!(host_url("http", "api:443"), "api:443");
        assert_eq!(host_url("http", "[::1]"), "[::1]");
    }
}
