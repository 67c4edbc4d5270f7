//! The HTTP pieces of the stack that run inside the test process: the
//! recording proxy in front of the service, the front of the OpenStack
//! double (the Nova keypair writes, the server API of the auto-healer and the
//! version documents keystoneauth discovers, none of which the read-only
//! double serves), and the control API through which the Go suites read what
//! both saw.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use serde::Serialize;
use serde_json::{Value, json};

/// The most of one request or response body the proxies carry.
const MAX_BODY: usize = 64 << 20;

/// Headers that belong to one connection, dropped by a proxy (RFC 9110
/// § 7.6.1), as Go's `httputil.ReverseProxy` drops them.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The headers shown when exchanges are printed (never a token).
const SHOWN_HEADERS: [&str; 5] = [
    "Content-Type",
    "Openstack-Api-Version",
    "X-Openstack-Request-Id",
    "Location",
    "Www-Authenticate",
];

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Binds a loopback listener and serves `router` on `rt` until the runtime
/// stops; returns `http://127.0.0.1:<port>`.
pub fn serve(rt: &tokio::runtime::Runtime, router: Router) -> String {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(SocketAddr::from((
            [127, 0, 0, 1],
            0,
        ))))
        .unwrap_or_else(|e| panic!("listen on loopback: {e}"));
    let url = match listener.local_addr() {
        Ok(a) => format!("http://{a}"),
        Err(e) => panic!("listener address: {e}"),
    };
    rt.spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    url
}

fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap_or_else(|e| panic!("HTTP client: {e}"))
}

fn json_response(status: u16, body: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(body.clone())).into_response()
}

// ------------------------------------------------------- recording proxy

/// One request and response seen by the recording proxy.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub method: String,
    /// The request URI: path and query.
    pub url: String,
    pub req_headers: HeaderMap,
    pub req_body: Vec<u8>,
    /// 0 when no answer came.
    pub status: u16,
    pub resp_headers: HeaderMap,
    pub resp_body: Vec<u8>,
    /// The transport error, when no answer came.
    pub error: Option<String>,
    pub elapsed: Duration,
}

impl Exchange {
    /// The exchange as the control API gives it: no header but the shown
    /// ones, bodies as text.
    fn to_json(&self) -> Value {
        json!({
            "method": self.method,
            "url": self.url,
            "req_body": String::from_utf8_lossy(&self.req_body),
            "status": self.status,
            "resp_body": String::from_utf8_lossy(&self.resp_body),
            "error": self.error,
        })
    }
}

/// Forwards `req` to `target` (scheme and authority) keeping the client's
/// `Host` header, so that links the upstream builds point back at the proxy;
/// returns the answer and what was exchanged.
async fn forward(http: &reqwest::Client, target: &str, req: Request) -> (Response, Exchange) {
    let started = Instant::now();
    let (parts, body) = req.into_parts();
    let uri = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "/".to_owned());
    let mut ex = Exchange {
        method: parts.method.to_string(),
        url: uri.clone(),
        req_headers: parts.headers.clone(),
        req_body: Vec::new(),
        status: 0,
        resp_headers: HeaderMap::new(),
        resp_body: Vec::new(),
        error: None,
        elapsed: Duration::ZERO,
    };
    let gateway_error = |ex: &mut Exchange, e: String| {
        ex.error = Some(e);
        ex.elapsed = started.elapsed();
        StatusCode::BAD_GATEWAY.into_response()
    };
    match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => ex.req_body = b.to_vec(),
        Err(e) => {
            let resp = gateway_error(&mut ex, format!("read the request body: {e}"));
            return (resp, ex);
        }
    }
    let mut headers = parts.headers.clone();
    for h in HOP_BY_HOP {
        headers.remove(h);
    }
    headers.remove(header::CONTENT_LENGTH);
    headers.insert(
        HeaderName::from_static("x-forwarded-for"),
        HeaderValue::from_static("127.0.0.1"),
    );
    let sent = http
        .request(parts.method.clone(), format!("{target}{uri}"))
        .headers(headers)
        .body(ex.req_body.clone())
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) => {
            let resp = gateway_error(&mut ex, e.to_string());
            return (resp, ex);
        }
    };
    let status = resp.status();
    let mut resp_headers = resp.headers().clone();
    let body = match resp.bytes().await {
        Ok(b) => b.to_vec(),
        Err(e) => {
            let resp = gateway_error(&mut ex, format!("read the answer: {e}"));
            return (resp, ex);
        }
    };
    for h in HOP_BY_HOP {
        resp_headers.remove(h);
    }
    ex.status = status.as_u16();
    ex.resp_headers = resp_headers.clone();
    ex.resp_body = body.clone();
    ex.elapsed = started.elapsed();
    let mut out = Response::new(Body::from(body));
    *out.status_mut() = status;
    *out.headers_mut() = resp_headers;
    (out, ex)
}

/// The exchanges the recording proxy saw, in order.
#[derive(Clone, Default)]
pub struct Recorder {
    log: Arc<Mutex<Vec<Exchange>>>,
}

impl Recorder {
    /// Starts a recording proxy in front of `target`; returns its URL.
    pub fn start(rt: &tokio::runtime::Runtime, target: &str) -> (Recorder, String) {
        let rec = Recorder::default();
        let state = (
            rec.clone(),
            client(Duration::from_secs(150)),
            target.to_owned(),
        );
        let router = Router::new().fallback(record).with_state(Arc::new(state));
        let url = serve(rt, router);
        (rec, url)
    }

    /// A position in the log.
    pub fn mark(&self) -> usize {
        lock(&self.log).len()
    }

    /// The exchanges recorded after `mark`.
    pub fn exchanges(&self, mark: usize) -> Vec<Exchange> {
        lock(&self.log).iter().skip(mark).cloned().collect()
    }

    /// The exchanges after `mark`, rendered. Tokens are never shown.
    pub fn since(&self, mark: usize) -> String {
        self.render(mark, false)
    }

    /// The exchanges after `mark` that got a 4xx/5xx answer or none at all
    /// (for suites whose runs are too long to print in full).
    pub fn failures(&self, mark: usize) -> String {
        self.render(mark, true)
    }

    fn render(&self, mark: usize, only_failures: bool) -> String {
        let log = lock(&self.log);
        if mark >= log.len() {
            return "(no request reached the service)\n".to_owned();
        }
        let mut b = String::new();
        for (i, ex) in log.iter().enumerate().skip(mark) {
            if only_failures && ex.error.is_none() && ex.status < 400 {
                continue;
            }
            let _ = writeln!(b, "--- #{i} {} {}", ex.method, ex.url);
            write_headers(&mut b, &ex.req_headers);
            if !ex.req_body.is_empty() {
                let _ = writeln!(b, "{}", clip(&ex.req_body));
            }
            if let Some(e) = &ex.error {
                let _ = writeln!(b, "<<< transport error: {e}");
                continue;
            }
            let _ = writeln!(b, "<<< {} ({}ms)", ex.status, ex.elapsed.as_millis());
            write_headers(&mut b, &ex.resp_headers);
            if !ex.resp_body.is_empty() {
                let _ = writeln!(b, "{}", clip(&ex.resp_body));
            }
        }
        b
    }
}

type RecordState = Arc<(Recorder, reqwest::Client, String)>;

async fn record(State(state): State<RecordState>, req: Request) -> Response {
    let (rec, http, target) = &*state;
    let (resp, ex) = forward(http, target, req).await;
    lock(&rec.log).push(ex);
    resp
}

fn write_headers(b: &mut String, h: &HeaderMap) {
    for k in SHOWN_HEADERS {
        if let Some(v) = h.get(k).and_then(|v| v.to_str().ok())
            && !v.is_empty()
        {
            let _ = writeln!(b, "    {k}: {v}");
        }
    }
}

fn clip(b: &[u8]) -> String {
    const MAX: usize = 3000;
    if b.len() > MAX {
        format!(
            "{}… ({} bytes)",
            String::from_utf8_lossy(&b[..MAX]),
            b.len()
        )
    } else {
        String::from_utf8_lossy(b).into_owned()
    }
}

// --------------------------------------------------- OpenStack front

/// The flavor the auto-healer's server answers name.
const SERVER_FLAVOR: &str = "m1.small";

/// What the front of the OpenStack double holds itself.
#[derive(Default)]
struct FrontState {
    /// Keypair name → public key.
    keypairs: BTreeMap<String, String>,
    /// Server id → status (`ACTIVE`, `SHUTOFF`), for the auto-healer.
    servers: BTreeMap<String, String>,
    /// `<server id> <action>` in the order Nova received them.
    actions: Vec<String>,
}

/// The front of the OpenStack double: serves the Nova keypair writes
/// (`POST`/`DELETE /os-keypairs`) that tempest needs, the part of Nova's
/// server API the auto-healer uses, and the version documents keystoneauth
/// reads on the catalog URLs; everything else goes to the double.
#[derive(Clone)]
pub struct Front {
    /// Its base URL.
    pub url: String,
    state: Arc<Mutex<FrontState>>,
}

struct FrontShared {
    url: String,
    fake: String,
    http: reqwest::Client,
    state: Arc<Mutex<FrontState>>,
}

impl Front {
    /// Starts the front of the double at `fake`, knowing the keypair
    /// `keypair` (with `public_key`).
    pub fn start(
        rt: &tokio::runtime::Runtime,
        fake: &str,
        keypair: &str,
        public_key: &str,
    ) -> Front {
        let listener = rt
            .block_on(tokio::net::TcpListener::bind(SocketAddr::from((
                [127, 0, 0, 1],
                0,
            ))))
            .unwrap_or_else(|e| panic!("listen on loopback: {e}"));
        let url = match listener.local_addr() {
            Ok(a) => format!("http://{a}"),
            Err(e) => panic!("listener address: {e}"),
        };
        let mut st = FrontState::default();
        st.keypairs
            .insert(keypair.to_owned(), public_key.to_owned());
        let state = Arc::new(Mutex::new(st));
        let shared = Arc::new(FrontShared {
            url: url.clone(),
            fake: fake.to_owned(),
            http: client(Duration::from_secs(60)),
            state: state.clone(),
        });
        let router = Router::new().fallback(front).with_state(shared);
        rt.spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Front { url, state }
    }

    /// The server actions Nova received so far.
    pub fn nova_actions(&self) -> Vec<String> {
        lock(&self.state).actions.clone()
    }
}

async fn front(State(f): State<Arc<FrontShared>>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    if let Some(rest) = path.strip_prefix("/compute/v2.1/os-keypairs") {
        let name = rest.trim_matches('/').to_owned();
        let method = req.method().clone();
        let body = axum::body::to_bytes(req.into_body(), MAX_BODY)
            .await
            .unwrap_or_default();
        return serve_keypairs(&f, &method, &name, &body);
    }
    if let Some(rest) = path.strip_prefix("/compute/v2.1/servers/") {
        let rest = rest.trim_matches('/').to_owned();
        let method = req.method().clone();
        let body = axum::body::to_bytes(req.into_body(), MAX_BODY)
            .await
            .unwrap_or_default();
        return serve_server(&f, &method, &rest, &body);
    }
    if req.method() == Method::GET
        && let Some(resp) = serve_versions(&f.url, &path)
    {
        return resp;
    }
    forward(&f.http, &f.fake, req).await.0
}

/// The version discovery keystoneauth does on the catalog URLs
/// (openstacksdk): the unversioned Glance and Neutron roots and the Nova
/// v2.1 root.
fn serve_versions(base: &str, path: &str) -> Option<Response> {
    let link = |p: &str| json!([{"rel": "self", "href": format!("{base}{p}")}]);
    let resp = match path.trim_end_matches('/') {
        "/image" => json_response(
            300,
            &json!({"versions": [{"id": "v2.16", "status": "CURRENT", "links": link("/image/v2/")}]}),
        ),
        "/network" => json_response(
            200,
            &json!({"versions": [{"id": "v2.0", "status": "CURRENT", "links": link("/network/v2.0/")}]}),
        ),
        "/compute/v2.1" => json_response(
            200,
            &json!({"version": {"id": "v2.1", "status": "CURRENT", "version": "2.96",
                "min_version": "2.1", "updated": "2013-07-23T11:33:21Z",
                "links": link("/compute/v2.1/")}}),
        ),
        _ => return None,
    };
    Some(resp)
}

fn serve_keypairs(f: &FrontShared, method: &Method, name: &str, body: &[u8]) -> Response {
    let mut st = lock(&f.state);
    let fingerprint = |n: &str| format!("3f:4e:okm:{n}");
    let not_found = || {
        json_response(
            404,
            &json!({"itemNotFound": {"code": 404,
                "message": format!("Keypair {name} not found for user fake-user")}}),
        )
    };
    // Nova keypairs belong to a user; the double treats every writer as a
    // new user (as tempest's dynamic credentials are): DELETE finds nothing
    // and POST always creates. Reads see every keypair created so far.
    match (method.as_str(), name.is_empty()) {
        ("GET", true) => {
            let list: Vec<Value> = st
                .keypairs
                .iter()
                .map(|(n, pk)| {
                    json!({"keypair": {"name": n, "type": "ssh", "public_key": pk,
                        "fingerprint": fingerprint(n)}})
                })
                .collect();
            json_response(200, &json!({"keypairs": list}))
        }
        ("GET", false) => match st.keypairs.get(name) {
            Some(pk) => json_response(
                200,
                &json!({"keypair": {"name": name, "type": "ssh", "public_key": pk,
                    "fingerprint": fingerprint(name), "user_id": "fake-user", "id": 1,
                    "created_at": "2026-01-01T00:00:00.000000", "deleted": false,
                    "deleted_at": null, "updated_at": null}}),
            ),
            None => not_found(),
        },
        ("POST", true) => {
            let input: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let kp_name = input["keypair"]["name"].as_str().unwrap_or_default();
            if kp_name.is_empty() {
                return json_response(
                    400,
                    &json!({"badRequest": {"code": 400, "message": "Invalid input"}}),
                );
            }
            let given = input["keypair"]["public_key"].as_str().unwrap_or_default();
            let pk = if given.is_empty() {
                "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ generated"
            } else {
                given
            };
            st.keypairs.insert(kp_name.to_owned(), pk.to_owned());
            let mut out = json!({"name": kp_name, "public_key": pk,
                "fingerprint": fingerprint(kp_name), "user_id": "fake-user"});
            if given.is_empty() {
                out["private_key"] = Value::String(
                    "-----BEGIN RSA PRIVATE KEY-----\nMIIEfake\n-----END RSA PRIVATE KEY-----\n"
                        .to_owned(),
                );
            }
            json_response(200, &json!({"keypair": out}))
        }
        ("DELETE", false) => not_found(),
        _ => json_response(405, &json!({"error": "method not allowed"})),
    }
}

/// The part of Nova's server API the auto-healer uses on a worker it
/// repairs: `GET /servers/{id}`, `POST /servers/{id}/action` (reboot,
/// os-stop) and `GET /servers/{id}/os-volume_attachments`. Any server id is
/// known (ACTIVE until stopped).
fn serve_server(f: &FrontShared, method: &Method, rest: &str, body: &[u8]) -> Response {
    let mut st = lock(&f.state);
    let (id, sub) = rest.split_once('/').unwrap_or((rest, ""));
    let status = st
        .servers
        .get(id)
        .cloned()
        .unwrap_or_else(|| "ACTIVE".to_owned());
    match (method.as_str(), sub) {
        ("GET", "") => {
            let power_state = if status == "SHUTOFF" { 4 } else { 1 };
            let short: String = id.chars().take(8).collect();
            json_response(
                200,
                &json!({"server": {
                    "id": id, "name": format!("worker-{short}"), "status": status,
                    "tenant_id": "okm", "user_id": "okm", "metadata": {}, "hostId": "",
                    "image": "", "flavor": {"original_name": SERVER_FLAVOR},
                    "created": "2026-11-30T00:00:00Z", "updated": "2026-11-30T00:00:00Z",
                    "addresses": {}, "accessIPv4": "", "accessIPv6": "", "links": [],
                    "OS-DCF:diskConfig": "MANUAL", "OS-EXT-STS:power_state": power_state,
                    "OS-EXT-STS:task_state": null,
                    "OS-EXT-STS:vm_state": status.to_lowercase(),
                    "os-extended-volumes:volumes_attached": [], "progress": 0,
                    "security_groups": [],
                }}),
            )
        }
        ("GET", "os-volume_attachments") => json_response(200, &json!({"volumeAttachments": []})),
        ("POST", "action") => {
            let parsed: Result<serde_json::Map<String, Value>, _> = serde_json::from_slice(body);
            let action = match parsed {
                Ok(m) if m.len() == 1 => m.keys().next().cloned().unwrap_or_default(),
                _ => {
                    return json_response(
                        400,
                        &json!({"badRequest": {"code": 400, "message": "Malformed request body"}}),
                    );
                }
            };
            st.actions.push(format!("{id} {action}"));
            match action.as_str() {
                "reboot" => {}
                "os-stop" => {
                    st.servers.insert(id.to_owned(), "SHUTOFF".to_owned());
                }
                _ => {
                    return json_response(
                        400,
                        &json!({"badRequest": {"code": 400,
                            "message": format!("Invalid action {action}")}}),
                    );
                }
            }
            StatusCode::ACCEPTED.into_response()
        }
        _ => json_response(
            404,
            &json!({"itemNotFound": {"code": 404,
                "message": format!("Instance {id} could not be found.")}}),
        ),
    }
}

// --------------------------------------------------------- control API

/// Starts the control API the Go suites read the stack through:
///
/// ```text
/// GET /mark                      the position of the recorder's log
/// GET /exchanges?since=N         the exchanges after N (JSON, no headers)
/// GET /render?since=N[&failures=true]  the same, rendered as text
/// GET /nova/actions              the server actions Nova received (JSON)
/// ```
pub fn start_control(rt: &tokio::runtime::Runtime, rec: &Recorder, front: &Front) -> String {
    let router = Router::new()
        .fallback(control)
        .with_state(Arc::new((rec.clone(), front.clone())));
    serve(rt, router)
}

async fn control(
    State(state): State<Arc<(Recorder, Front)>>,
    Query(q): Query<BTreeMap<String, String>>,
    req: Request,
) -> Response {
    let (rec, front) = &*state;
    let since = q
        .get("since")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    match (req.method().as_str(), req.uri().path()) {
        ("GET", "/mark") => json_response(200, &json!(rec.mark())),
        ("GET", "/exchanges") => {
            let list: Vec<Value> = rec.exchanges(since).iter().map(Exchange::to_json).collect();
            json_response(200, &Value::Array(list))
        }
        ("GET", "/render") => {
            let text = if q.get("failures").is_some_and(|v| v == "true") {
                rec.failures(since)
            } else {
                rec.since(since)
            };
            text.into_response()
        }
        ("GET", "/nova/actions") => json_response(200, &json!(front.nova_actions())),
        _ => json_response(404, &json!({"error": "unknown control call"})),
    }
}

/// What a Go suite is told about the stack (`OKM_CLIENTS_STACK`).
#[derive(Serialize)]
pub struct StackInfo<'a> {
    pub region: &'a str,
    /// The recording proxy in front of the service.
    pub url: &'a str,
    /// `url` + `/v1`, the catalog's container-infra endpoint.
    pub endpoint: &'a str,
    /// The front of the OpenStack double.
    pub openstack_url: &'a str,
    pub control_url: &'a str,
    pub image_id: &'a str,
    pub image_name: &'a str,
    pub flavor_small: &'a str,
    pub flavor_medium: &'a str,
    pub keypair: &'a str,
    pub ext_net_name: &'a str,
    pub ext_net_id: &'a str,
}
