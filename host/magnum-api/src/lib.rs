//! The HTTP API: Magnum's v1 REST interface on axum.
//!
//! A request goes through the layers of [`middleware`] (request id → panic
//! recovery → health check → CORS → proxy headers) and then the dispatcher
//! here: authentication (public paths exempt), path normalisation,
//! microversion negotiation, routing (pecan's rules, [`routes`]), WSME's
//! argument checks, and the route's handler. Every error on every path is
//! Magnum's error body ([`errors`]).
//!
//! The handlers call the use cases ([`magnum_conductor`]) and never the
//! database: this crate does not depend on `magnum-db`, and the conductor
//! neither re-exports its types nor hands out its handle outside tests.
//! The shapes of a read (scope, page, list view) are the domain's
//! ([`magnum_domain::query`]).

pub mod accept;
pub mod body;
pub mod certificates;
pub mod cluster_templates;
pub mod clusters;
pub mod credentials;
pub mod errors;
pub mod federations;
pub mod middleware;
pub mod mservices;
pub mod nodegroups;
pub mod paging;
pub mod params;
pub mod patch;
pub mod policy;
pub mod quotas;
pub mod routes;
pub mod stats;
pub mod versions;
pub mod views;

#[cfg(test)]
mod layers;
#[cfg(test)]
mod transcripts;

// The layers below, by the names the modules use.
use magnum_conductor as conductor;
#[cfg(test)]
use magnum_db as db;
use magnum_integrations::{auth, traces};
#[cfg(test)]
use magnum_integrations::{certs, notify, openstack};
#[cfg(test)]
use magnum_reconcile as reconcile;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router as AxumRouter;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::Response;
use futures::future::BoxFuture;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;
use magnum_domain::microversion::{self, Version};
use magnum_domain::{MagnumError, RequestContext};

use accept::Accept;
pub use errors::ApiError;
use middleware::{BaseUrl, RequestId};
use params::Query;
use routes::{Match, Route, Router, Row};

/// Authenticates the caller of a non-public request.
pub trait Authenticator: Send + Sync {
    /// The caller's context, or the answer to send instead
    /// (keystonemiddleware's 401, or 503 when Keystone cannot be reached).
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<RequestContext, Response>>;

    /// The token cache's lookups so far, (hits, misses), when there is a
    /// cache (metrics).
    fn token_cache_counts(&self) -> Option<(u64, u64)> {
        None
    }
}

/// Keystone's (or noauth's) authentication of each request.
impl Authenticator for auth::Authenticator {
    fn authenticate<'a>(
        &'a self,
        headers: &'a http::HeaderMap,
    ) -> futures::future::BoxFuture<
        'a,
        Result<magnum_domain::RequestContext, axum::response::Response>,
    > {
        Box::pin(async move {
            auth::Authenticator::authenticate(self, headers)
                .await
                .map_err(|e| {
                    if e.kind() == auth::AuthErrorKind::KeystoneUnavailable {
                        tracing::warn!(error = %e, "token validation unavailable");
                    }
                    e.into_response(headers)
                })
        })
    }

    fn token_cache_counts(&self) -> Option<(u64, u64)> {
        match self {
            auth::Authenticator::Keystone(k) => Some(k.cache_counts()),
            auth::Authenticator::NoAuth(_) => None,
        }
    }
}

/// The `[cors]` options (oslo.middleware), with Magnum's defaults for the
/// headers and methods.
#[derive(Clone, Debug, PartialEq)]
pub struct CorsOptions {
    /// The origins allowed to share the resource; `*` allows any. Empty
    /// disables CORS.
    pub allowed_origin: Vec<String>,
    pub allow_credentials: bool,
    /// Sent in `Access-Control-Expose-Headers` on simple requests.
    pub expose_headers: Vec<String>,
    /// Sent in `Access-Control-Max-Age` on preflight answers (seconds; 0
    /// omits it).
    pub max_age: u64,
    /// The methods a preflight may ask for.
    pub allow_methods: Vec<String>,
    /// The headers a preflight may ask for, besides the simple headers.
    pub allow_headers: Vec<String>,
}

impl Default for CorsOptions {
    /// The `[cors]` defaults Magnum sets
    /// (`magnum/common/config.py set_cors_middleware_defaults`), with no
    /// allowed origin.
    fn default() -> Self {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect();
        CorsOptions {
            allowed_origin: Vec::new(),
            allow_credentials: true,
            expose_headers: v(&[
                "X-Auth-Token",
                "X-Subject-Token",
                "X-Service-Token",
                "X-OpenStack-Request-ID",
                "X-Server-Management-Url",
            ]),
            max_age: 3600,
            allow_methods: v(&["GET", "PUT", "POST", "DELETE", "PATCH"]),
            allow_headers: v(&[
                "X-Auth-Token",
                "X-Identity-Status",
                "X-Roles",
                "X-Service-Catalog",
                "X-User-Id",
                "X-Tenant-Id",
                "X-OpenStack-Request-ID",
                "X-Server-Management-Url",
            ]),
        }
    }
}

/// What the HTTP layer is configured with.
#[derive(Clone, Debug)]
pub struct ApiOptions {
    /// `[api]/max_limit`: the page size when no limit is given and the cap of
    /// larger limits.
    pub max_limit: i64,
    /// Request bodies above this get a 413 in Magnum's error body.
    pub max_body_bytes: usize,
    pub cors: CorsOptions,
    /// `[oslo_middleware]/enable_proxy_headers_parsing`.
    pub proxy_headers: bool,
    /// The paths that need no token (`acl_public_routes` of api-paste.ini);
    /// each also matches with a trailing `.json` and trailing slashes.
    pub public_routes: Vec<String>,
    /// `[healthcheck]/disable_by_file_path`: when the file exists,
    /// `/healthcheck` answers 503 `DISABLED BY FILE`.
    pub healthcheck_disable_file: Option<PathBuf>,
    /// `[api]/unversioned_at_route_minimum` (ours, off by default): a
    /// request without a version header to a route that 1.1 does not have
    /// is served at the route's lowest microversion instead of Magnum's 406.
    pub unversioned_at_route_minimum: bool,
}

impl Default for ApiOptions {
    fn default() -> Self {
        ApiOptions {
            max_limit: 1000,
            // Deviation: Magnum has no body size limit in its pipeline; we
            // refuse bodies over 1 MiB with 413 in Magnum's error body.
            max_body_bytes: 1 << 20,
            cors: CorsOptions::default(),
            proxy_headers: false,
            public_routes: vec!["/".into(), "/v1".into()],
            healthcheck_disable_file: None,
            unversioned_at_route_minimum: false,
        }
    }
}

/// One call of a route's handler: everything the pipeline learnt of the
/// request. `P` is the handler's path arguments ([`routes::PathArgs`]).
#[derive(Clone, Debug)]
pub struct Call<P = ()> {
    pub ctx: RequestContext,
    pub version: Version,
    /// The application URL for links.
    pub base_url: String,
    pub route: Route,
    /// The path arguments the route's pattern declares, in path order.
    pub path: P,
    /// The converted declared query parameters.
    pub query: Query,
    /// Set for `/v1/<collection>/<marker>/detail`: the detail handlers then
    /// answer, after their policy check, Magnum's literal 404 (routes.md #4).
    pub marker_in_path: bool,
    /// The request body, when it has a JSON media type.
    pub body: Option<Bytes>,
    pub headers: HeaderMap,
}

impl<P> Call<P> {
    /// The call with its path arguments made into `Q` by `f`.
    pub fn with_path<Q>(self, f: impl FnOnce(P) -> Q) -> Call<Q> {
        Call {
            ctx: self.ctx,
            version: self.version,
            base_url: self.base_url,
            route: self.route,
            path: f(self.path),
            query: self.query,
            marker_in_path: self.marker_in_path,
            body: self.body,
            headers: self.headers,
        }
    }

    /// The request body, or Magnum's 400 `Missing argument` naming the
    /// route's body argument when there is none (a form body counts as none,
    /// as in WSME).
    pub fn require_body(&self) -> Result<&Bytes, MagnumError> {
        self.body
            .as_ref()
            .ok_or_else(|| MagnumError::missing_argument(self.route.body_arg.unwrap_or("body")))
    }
}

/// A row's handler with the rows' state bound: what the dispatcher calls,
/// with the values of the path arguments in pattern order.
pub(crate) type BoundHandler = Arc<dyn Fn(Call<Vec<String>>) -> routes::Answering + Send + Sync>;

/// A route table with the state its handlers share: what an [`Api`]
/// serves, every route with the handler of its row.
#[derive(Clone)]
pub struct Handlers {
    routes: Vec<Route>,
    handlers: Vec<BoundHandler>,
}

impl Handlers {
    /// The rows of a table (the first one the root document) with `state`
    /// given to each of their handlers.
    pub fn new<S: Clone + Send + Sync + 'static>(rows: Vec<Row<S>>, state: S) -> Handlers {
        let (routes, handlers) = rows.into_iter().map(|r| r.bind(state.clone())).unzip();
        Handlers { routes, handlers }
    }
}

/// The API's state: configuration, route table and handlers.
pub struct Api {
    pub options: ApiOptions,
    router: Router,
    /// The handler of each route of the router, by its index.
    handlers: Vec<BoundHandler>,
    auth: Arc<dyn Authenticator>,
    new_request_id: Box<dyn Fn() -> String + Send + Sync>,
}

impl Api {
    /// The API serving the routes of `handlers`.
    pub fn new(options: ApiOptions, auth: Arc<dyn Authenticator>, handlers: Handlers) -> Api {
        Api {
            options,
            router: Router::new(handlers.routes),
            handlers: handlers.handlers,
            auth,
            new_request_id: Box::new(new_request_id),
        }
    }

    /// Replaces the request id generator (tests).
    pub fn with_request_ids(mut self, f: impl Fn() -> String + Send + Sync + 'static) -> Api {
        self.new_request_id = Box::new(f);
        self
    }

    /// The axum application: the whole pipeline.
    pub fn into_router(self) -> AxumRouter {
        let api = Arc::new(self);
        use axum::middleware::{from_fn, from_fn_with_state};
        AxumRouter::new()
            .fallback(dispatch)
            .with_state(api.clone())
            .layer(from_fn_with_state(api.clone(), middleware::proxy_headers))
            .layer(from_fn_with_state(api.clone(), middleware::cors))
            .layer(from_fn_with_state(api.clone(), middleware::healthcheck))
            .layer(from_fn(middleware::catch_panic))
            .layer(from_fn_with_state(api, middleware::request_id))
    }

    fn is_public(&self, path: &str) -> bool {
        let trimmed = path.trim_end_matches('/');
        let p = if trimmed.is_empty() { path } else { trimmed };
        self.options
            .public_routes
            .iter()
            .any(|pr| p == pr || p.strip_suffix(".json") == Some(pr.as_str()))
    }
}

/// `req-` and a random (version 4) UUID.
fn new_request_id() -> String {
    format!("req-{}", uuid::Uuid::new_v4())
}

/// Marks a response whose version headers must not be set: Magnum's routing
/// and method-version errors replace the response that carried them.
pub(crate) mod version_headers {
    #[derive(Clone, Copy, Debug)]
    pub struct Drop;
}

const VERSION_HEADER: HeaderName = HeaderName::from_static("openstack-api-version");
const MIN_VERSION_HEADER: HeaderName = HeaderName::from_static("openstack-api-minimum-version");
const MAX_VERSION_HEADER: HeaderName = HeaderName::from_static("openstack-api-maximum-version");

/// The JSON media types WSME parses as JSON.
const JSON_TYPES: &[&str] = &[
    "application/json",
    "text/javascript",
    "application/javascript",
];

/// The request's `Content-Type` without parameters, as WebOb's
/// `request.content_type` gives it (case kept).
fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_string())
        .unwrap_or_default()
}

/// Everything after the proxy-header layer.
async fn dispatch(State(api): State<Arc<Api>>, req: Request) -> Response {
    let accept = Accept::of(req.headers());
    let request_id = req
        .extensions()
        .get::<RequestId>()
        .map(|r| r.0.clone())
        .unwrap_or_default();
    let (route, version, result) = serve(&api, req, &request_id).await;
    let route_id = route.map(|(id, _)| id);
    let mut resp = match result {
        Ok(resp) => resp,
        Err(e) => {
            if let ApiError::Internal(err) = &e {
                tracing::error!(request_id = %request_id, route = route_id.unwrap_or(""), error = %format!("{err:#}"), "unexpected error");
            }
            e.render(&accept)
        }
    };
    if let Some((_, pattern)) = route {
        resp.extensions_mut()
            .insert(crate::traces::RoutePattern(pattern));
    }
    if let Some(v) = version
        && resp.extensions().get::<version_headers::Drop>().is_none()
    {
        let h = resp.headers_mut();
        h.insert(
            MIN_VERSION_HEADER,
            HeaderValue::from_static(microversion::MIN_HEADER_VALUE),
        );
        h.insert(
            MAX_VERSION_HEADER,
            HeaderValue::from_static(microversion::MAX_HEADER_VALUE),
        );
        if let Ok(v) = HeaderValue::from_str(&v) {
            h.insert(VERSION_HEADER, v);
        }
        h.insert(header::VARY, HeaderValue::from_static(microversion::HEADER));
    }
    resp
}

/// The route served (id and pattern), the value of the version header to
/// answer with, and the answer.
type Served = (
    Option<(&'static str, &'static str)>,
    Option<String>,
    Result<Response, ApiError>,
);

async fn serve(api: &Api, req: Request, request_id: &str) -> Served {
    let (parts, body) = req.into_parts();
    let path = params::unquote_path(parts.uri.path());
    let base_url = parts
        .extensions
        .get::<BaseUrl>()
        .map(|b| b.0.clone())
        .unwrap_or_default();
    let mut ctx = RequestContext {
        request_id: request_id.to_string(),
        ..RequestContext::default()
    };
    if !api.is_public(&path) {
        match api.auth.authenticate(&parts.headers).await {
            Ok(c) => {
                ctx = RequestContext {
                    request_id: request_id.to_string(),
                    ..c
                }
            }
            Err(resp) => return (None, None, Ok(resp)),
        }
    }
    let mut segs = routes::split_path(&path);
    if segs.is_empty() {
        let root = api.router.get(ROOT);
        let name = (root.id, root.pattern);
        return (
            Some(name),
            None,
            serve_root(api, parts, ctx, base_url).await,
        );
    }
    // Magnum: root.py:98 — a first segment other than "v1" is routed to v1.
    if segs[0] != "v1" {
        segs.insert(0, "v1");
    }
    // Version negotiation (v1/__init__.py:226): parse, set the headers, then
    // check the range.
    let requested = match microversion::parse(
        parts
            .headers
            .get_all(VERSION_HEADER)
            .iter()
            .map(HeaderValue::as_bytes),
    ) {
        Ok(v) => v,
        Err(e) => {
            let err = ApiError::WebOb {
                status: StatusCode::NOT_ACCEPTABLE,
                detail: e.detail().to_string(),
                allow: None,
            };
            return (None, None, Err(err));
        }
    };
    let unversioned = parts.headers.get(VERSION_HEADER).is_none();
    let mut version = match requested.check() {
        Ok(v) => v,
        Err(e) => {
            return (
                None,
                Some(e.requested_header_value()),
                Err(ApiError::VersionRange {
                    description: e.message(),
                }),
            );
        }
    };
    let m = api.router.route(&parts.method, &segs);
    let mut selected = api.router.select(&m, version);
    if selected.is_none() && unversioned && api.options.unversioned_at_route_minimum {
        selected = api.router.lowest(&m).map(|(index, lowest)| {
            version = lowest;
            index
        });
    }
    let answered = Some(version.header_value().into_owned());
    let Some(index) = selected else {
        let err = if m.candidates.is_empty() {
            match m.allow {
                Some(allow) => match api.router.uncovered_method(&m, version) {
                    Some(name) => method_406(version, name),
                    None => ApiError::WebOb {
                        status: StatusCode::METHOD_NOT_ALLOWED,
                        detail: String::new(),
                        allow: Some(allow),
                    },
                },
                None => ApiError::not_found(),
            }
        } else {
            method_406(version, api.router.get(m.candidates[0]).method_name())
        };
        return (None, answered, Err(err));
    };
    let route = api.router.get(index);
    let name = (route.id, route.pattern);
    let result = serve_route(api, parts, body, index, m, ctx, version, base_url).await;
    (Some(name), answered, result)
}

fn method_406(version: Version, method: &str) -> ApiError {
    ApiError::WebOb {
        status: StatusCode::NOT_ACCEPTABLE,
        detail: microversion::method_not_supported_message(version, method),
        allow: None,
    }
}

/// The index of the root document's row: the first of every table.
const ROOT: usize = 0;

/// Answers `/` with the root row's handler (outside v1: no version headers,
/// no version negotiation; the call has the default microversion).
async fn serve_root(
    api: &Api,
    parts: http::request::Parts,
    ctx: RequestContext,
    base_url: String,
) -> Result<Response, ApiError> {
    if parts.method != Method::GET {
        return Err(ApiError::WebOb {
            status: StatusCode::METHOD_NOT_ALLOWED,
            detail: String::new(),
            allow: Some("GET"),
        });
    }
    if !Accept::of(&parts.headers).accepts_json() {
        return Err(ApiError::webob(StatusCode::NOT_ACCEPTABLE));
    }
    let root = api.router.get(ROOT);
    check_arguments(
        &parts.method,
        &parts.headers,
        parts.uri.query().unwrap_or(""),
        root,
        None,
    )?;
    let call = Call {
        ctx,
        version: Version::DEFAULT,
        base_url,
        route: root.clone(),
        path: Vec::new(),
        query: Query::default(),
        marker_in_path: false,
        body: None,
        headers: parts.headers,
    };
    api.handlers[ROOT](call).await
}

/// The checks WSME makes before a handler (content negotiation, unknown
/// arguments, body media type, missing arguments), then the handler.
#[allow(clippy::too_many_arguments)]
async fn serve_route(
    api: &Api,
    parts: http::request::Parts,
    body: Body,
    index: usize,
    m: Match,
    ctx: RequestContext,
    version: Version,
    base_url: String,
) -> Result<Response, ApiError> {
    let route = api.router.get(index).clone();
    if !Accept::of(&parts.headers).accepts_json() {
        return Err(ApiError::webob(StatusCode::NOT_ACCEPTABLE));
    }
    if let (Some(arg), Some(body_arg)) = (&m.post_arg, route.body_arg) {
        // Magnum: the create handler receives the segment positionally and
        // WSME fails to build the body type from a string.
        let typ = routes::body_type(body_arg);
        return Err(MagnumError::unable_to_convert(
            body_arg,
            arg,
            typ,
            &format!("{typ}.__init__() takes 1 positional argument but 2 were given"),
        )
        .into());
    }
    let raw_query = parts.uri.query().unwrap_or("");
    let query = params::convert(raw_query, &route, &m.params)?;
    let body = read_body(&parts.headers, body, api.options.max_body_bytes).await?;
    check_arguments(
        &parts.method,
        &parts.headers,
        raw_query,
        &route,
        body.as_deref(),
    )?;
    let mut path_params = m.params;
    let json_body =
        body.filter(|b| !b.is_empty() && JSON_TYPES.contains(&media_type(&parts.headers).as_str()));
    if m.missing.is_some() {
        // Pecan also fills a handler's missing arguments from the keys of a
        // JSON object body (PATCH /v1/quotas with project_id and resource in
        // the body reaches the handler).
        if let Some(name) = fill_from_body(&route, &mut path_params, json_body.as_deref()) {
            return Err(MagnumError::missing_argument(&name).into());
        }
    }
    // The values of the declared path arguments, in pattern order (every
    // one is filled by now).
    let path = route
        .path_args()
        .map(|name| path_params.remove(name).unwrap_or_default())
        .collect();
    let call = Call {
        ctx,
        version,
        base_url,
        route,
        path,
        query,
        marker_in_path: m.marker_in_path,
        body: json_body,
        headers: parts.headers,
    };
    api.handlers[index](call).await
}

/// A body over the limit but not over this is read to its end and dropped
/// before the 413 is sent: a client still sending it then reads the answer
/// instead of a reset connection. A larger one closes the connection.
const DRAIN_MAX_BYTES: u64 = 16 << 20;

/// How long the rest of a refused body may take to arrive.
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads the whole body within the size limit.
async fn read_body(
    headers: &HeaderMap,
    mut body: Body,
    limit: usize,
) -> Result<Option<Bytes>, ApiError> {
    let too_large = || ApiError::Magnum(MagnumError::request_too_large());
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared.filter(|n| *n > limit as u64) {
        // A client waiting for `100 Continue` has sent nothing yet: reading
        // would ask it for the body.
        let waits = headers
            .get(header::EXPECT)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        if n <= DRAIN_MAX_BYTES && !waits {
            drain(body, 0).await;
        }
        return Err(too_large());
    }
    let mut buf = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(MagnumError::request_body_unreadable().into());
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if buf.len() + data.len() > limit {
            drain(body, (buf.len() + data.len()) as u64).await;
            return Err(too_large());
        }
        buf.extend_from_slice(&data);
    }
    Ok((!buf.is_empty()).then(|| Bytes::from(buf)))
}

/// Reads and drops what is left of a refused body, up to
/// [`DRAIN_MAX_BYTES`] in all (`seen` already read) and [`DRAIN_TIME`].
async fn drain(mut body: Body, mut seen: u64) {
    let rest = async {
        while let Some(Ok(frame)) = body.frame().await {
            if let Some(data) = frame.data_ref() {
                seen += data.len() as u64;
                if seen > DRAIN_MAX_BYTES {
                    return;
                }
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, rest).await;
}

/// Whether WebOb parses a form body for the method.
fn form_method(m: &Method) -> bool {
    matches!(
        *m,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

/// wsme/rest/args.py `get_args`: query (and form) keys must be arguments of
/// the handler, then the body must have a JSON media type (415 otherwise),
/// be valid JSON and, for a handler without a body argument, be an object
/// whose keys are arguments.
fn check_arguments(
    method: &Method,
    headers: &HeaderMap,
    raw_query: &str,
    route: &Route,
    body: Option<&[u8]>,
) -> Result<(), MagnumError> {
    let mut keys: Vec<String> = params::pairs(raw_query)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let ct = media_type(headers);
    let body = body.filter(|b| !b.is_empty());
    let is_form = body.is_some()
        && (ct.is_empty() || ct == "application/x-www-form-urlencoded")
        && form_method(method);
    if let (true, Some(b)) = (is_form, body) {
        keys.extend(
            params::pairs(&String::from_utf8_lossy(b))
                .into_iter()
                .map(|(k, _)| k),
        );
    }
    let mut unknown: Vec<String> = Vec::new();
    for k in keys {
        if !route.knows_arg(&k) && !unknown.contains(&k) {
            unknown.push(k);
        }
    }
    if !unknown.is_empty() {
        // Deviation: Magnum lists several unknown names in Python set order;
        // we keep the order of the request.
        return Err(MagnumError::unknown_argument(&unknown.join(", ")));
    }
    let Some(body) = body else { return Ok(()) };
    if is_form || ct == "application/x-www-form-urlencoded" {
        return Ok(());
    }
    if !JSON_TYPES.contains(&ct.as_str()) {
        return Err(MagnumError::unknown_mimetype(&ct));
    }
    let doc: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| MagnumError::invalid_json_body())?;
    if route.body_arg.is_some() {
        return Ok(());
    }
    let serde_json::Value::Object(obj) = doc else {
        return Err(MagnumError::request_not_a_dict());
    };
    let extra: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !route.knows_arg(k))
        .collect();
    if !extra.is_empty() {
        return Err(MagnumError::unknown_argument(&extra.join(", ")));
    }
    Ok(())
}

/// Sets the path arguments of `route` absent from `params` from the string
/// members of a JSON object body; returns the first argument still missing.
fn fill_from_body(
    route: &Route,
    params: &mut BTreeMap<String, String>,
    body: Option<&[u8]>,
) -> Option<String> {
    let obj = body
        .and_then(|b| serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(b).ok());
    for name in route.path_args() {
        if params.contains_key(name) {
            continue;
        }
        match obj
            .as_ref()
            .and_then(|o| o.get(name))
            .and_then(|v| v.as_str())
        {
            Some(v) => {
                params.insert(name.to_string(), v.to_string());
            }
            None => return Some(name.to_string()),
        }
    }
    None
}

/// What the resource handlers use: the conductor and the policy.
#[derive(Clone)]
pub struct Services {
    pub conductor: crate::conductor::Conductor,
    pub enforcer: Arc<magnum_conductor::policy::Enforcer>,
}

/// The route table ([`routes::table`]) with its handlers over `services`.
pub fn handlers(services: &Services) -> Handlers {
    Handlers::new(routes::table(), services.clone())
}

#[cfg(test)]
mod conformance;
#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod job_tests;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
