//! Test doubles of the OpenStack services openkeel-magnum calls: Glance v2
//! (image show and list), Nova v2.1 (flavor show and list, flavor extra
//! specs, keypair show, server groups), Neutron v2.0 (network and subnet
//! show and list, floating IPs), Octavia v2 (load balancers, cascade
//! delete), Cinder v3 (volume types), Manila v2 (share types) and the bit of
//! Keystone that service credentials and drivers need (password
//! authentication answered with a token whose catalog points here, user
//! token validation, application credentials).
//!
//! No production code may use this crate: it is a dev-dependency of the
//! binary crate, and the `okm-osfake` binary serves the same double for the
//! black-box suites. [`keystone`] is the test side of the real Keystone the
//! suites run against (tokens, admin calls, catalog regions pointing at a
//! double).
//!
//! The double is one HTTP server on a loopback port that speaks the real
//! shapes (Glance image properties at the top level of the image object,
//! Nova's `{"flavor":{…}}` envelopes and `flavors_links`, Neutron's filters
//! and `NeutronError` bodies, Octavia's `faultstring` errors). It records
//! every request so that tests can assert that lookups are filtered and
//! never list a whole collection ([`OsFake::calls`]), and injects faults (an
//! HTTP status, or an answer that never comes, to exercise client timeouts:
//! [`OsFake::inject`]).
//!
//! Layout: each service sits under a path prefix, and each Keystone
//! interface under another one, so that the recorded calls tell which
//! catalog entry a client picked:
//!
//! ```text
//! {url}/image                    Glance root (clients append /v2)
//! {url}/compute/v2.1             Nova endpoint as Keystone lists it
//! {url}/network                  Neutron root (clients append /v2.0)
//! {url}/load-balancer            Octavia root (clients append /v2)
//! {url}/volume/v3                Cinder v3 (a project id may follow)
//! {url}/share/v2                 Manila v2, catalog type sharev2 (a
//!                                project id may follow)
//! {url}/identity/v3              Keystone: POST auth/tokens (password),
//!                                users/{id}/application_credentials
//! {url}/internal/…, {url}/admin/…  the same for the other interfaces
//! {url}/_osfake/calls|faults|reset|seed  the control API of the binary
//! ```
//!
//! Tokens: the read-only services (Glance, Nova flavors and keypairs, Neutron
//! networks and subnets, Cinder, Manila) accept any token unless
//! [`OsFake::require_token`] names one. The read-write ones (server groups,
//! load balancers, floating IPs) need a token that maps to a project
//! ([`OsFake::add_token`], [`Seed::tokens`]); [`SERVICE_TOKEN`], which the
//! Keystone part issues to any password authentication, is an admin that
//! sees every project. The user tokens of [`Seed::user_tokens`] are validated
//! by the Keystone part (`GET /v3/auth/tokens`, as keystonemiddleware asks)
//! with their identity and the double's catalog, so that a service can run
//! with `[keystone_authtoken]` pointing here; they are also the users who
//! create application credentials (Keystone's own rules: a user creates
//! only its own, with roles it has; the owner or an admin deletes them).

mod cinder;
mod glance;
mod identity;
pub mod keystone;
mod manila;
mod neutron;
mod nova;
mod octavia;
mod seed;
mod server_groups;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State as AxumState};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};

pub use seed::{
    ApplicationCredential, Flavor, FloatingIp, Image, Keypair, LoadBalancer, Network, Seed,
    ServerGroup, ShareType, Subnet, UserToken, VolumeType,
};

/// The token the Keystone part issues on password authentication: an admin
/// of project [`SERVICE_PROJECT`].
pub const SERVICE_TOKEN: &str = "service-token";
/// The project of [`SERVICE_TOKEN`].
pub const SERVICE_PROJECT: &str = "service";
/// The time every resource was created and updated at.
pub(crate) const TIMESTAMP: &str = "2026-01-01T00:00:00Z";
/// The most read of one request body.
const MAX_BODY: usize = 1 << 20;

/// A service of the double, named by its Keystone catalog type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Service {
    Image,
    Compute,
    Network,
    LoadBalancer,
    BlockStorage,
    /// Manila, listed as `sharev2`.
    #[serde(rename = "sharev2")]
    SharedFileSystem,
    Identity,
}

impl Service {
    /// Every service, in catalog order.
    pub const ALL: [Service; 7] = [
        Service::Image,
        Service::Compute,
        Service::Network,
        Service::LoadBalancer,
        Service::BlockStorage,
        Service::SharedFileSystem,
        Service::Identity,
    ];

    /// The Keystone catalog type (`image`, `load-balancer`, …).
    pub fn catalog_type(self) -> &'static str {
        match self {
            Service::Image => "image",
            Service::Compute => "compute",
            Service::Network => "network",
            Service::LoadBalancer => "load-balancer",
            Service::BlockStorage => "block-storage",
            Service::SharedFileSystem => "sharev2",
            Service::Identity => "identity",
        }
    }

    /// The catalog name (`glance`, `nova`, …).
    pub fn catalog_name(self) -> &'static str {
        match self {
            Service::Image => "glance",
            Service::Compute => "nova",
            Service::Network => "neutron",
            Service::LoadBalancer => "octavia",
            Service::BlockStorage => "cinderv3",
            Service::SharedFileSystem => "manilav2",
            Service::Identity => "keystone",
        }
    }

    /// The path prefix of the service on the double.
    fn prefix(self) -> &'static str {
        match self {
            Service::Image => "/image",
            Service::Compute => "/compute",
            Service::Network => "/network",
            Service::LoadBalancer => "/load-balancer",
            Service::BlockStorage => "/volume",
            Service::SharedFileSystem => "/share",
            Service::Identity => "/identity",
        }
    }

    /// What follows the prefix in the endpoint Keystone lists.
    fn listed_version(self) -> &'static str {
        match self {
            Service::Compute => "/v2.1",
            Service::SharedFileSystem => "/v2",
            Service::BlockStorage | Service::Identity => "/v3",
            _ => "",
        }
    }
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.catalog_type())
    }
}

/// A decoded query string: each key with its values in request order, keys
/// sorted (Go's `url.Values`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query(BTreeMap<String, Vec<String>>);

/// What a query component leaves unescaped (Go's `url.QueryEscape`).
const QUERY_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

impl Query {
    /// Parses `a=1&b=2` (`+` is a space).
    pub fn parse(raw: &str) -> Self {
        let mut q = Query::default();
        for (k, v) in url::form_urlencoded::parse(raw.as_bytes()) {
            q.0.entry(k.into_owned()).or_default().push(v.into_owned());
        }
        q
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.first()).map(String::as_str)
    }

    /// Every value of `key`.
    pub fn get_all(&self, key: &str) -> &[String] {
        self.0.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    /// Whether `key` was sent (even empty).
    pub fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// How many distinct keys were sent.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the query is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The keys and their values, keys sorted.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }

    /// Replaces the values of `key`.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.0.insert(key.to_owned(), vec![value.into()]);
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) {
        self.0.remove(key);
    }

    /// The query in Go's `url.Values.Encode` form: keys sorted, values
    /// escaped as a query component (`:` as `%3A`, a space as `+`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        for (k, values) in &self.0 {
            for v in values {
                if !out.is_empty() {
                    out.push('&');
                }
                out.push_str(&escape_component(k));
                out.push('=');
                out.push_str(&escape_component(v));
            }
        }
        out
    }
}

fn escape_component(s: &str) -> String {
    utf8_percent_encode(s, QUERY_COMPONENT)
        .to_string()
        .replace("%20", "+")
}

/// One request the double received (Keystone's token requests excluded;
/// its application-credential requests are recorded).
#[derive(Clone, Debug)]
pub struct Call {
    pub service: Service,
    /// The Keystone interface whose URL was used: `public`, `internal` or
    /// `admin`.
    pub interface: String,
    pub method: Method,
    /// The request path below the service prefix, decoded:
    /// `/v2/images`, `/v2.1/flavors/detail`, `/v2.0/networks`.
    pub path: String,
    pub query: Query,
    /// The `X-Auth-Token` header received.
    pub token: Option<String>,
    /// The other request headers (`X-Auth-Token` removed).
    pub headers: HeaderMap,
}

impl Call {
    /// Whether the call read a lookup collection (rather than one resource
    /// by id).
    pub fn is_list(&self) -> bool {
        matches!(
            self.path.as_str(),
            "/v2/images"
                | "/v2.1/flavors"
                | "/v2.1/flavors/detail"
                | "/v2.1/os-keypairs"
                | "/v2.0/networks"
                | "/v2.0/subnets"
        )
    }

    /// Whether a list call carried a filter that narrows the result by name
    /// or id (pagination parameters do not count).
    pub fn filtered(&self) -> bool {
        self.query.has("name") || self.query.has("id")
    }

    /// A header value, when it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The call as JSON (the control API's form; headers left out).
    pub fn to_json(&self) -> Value {
        json!({
            "service": self.service,
            "interface": self.interface,
            "method": self.method.as_str(),
            "path": self.path,
            "query": self.query,
            "token": self.token,
        })
    }
}

impl fmt::Display for Call {
    /// `GET image /v2/images?name=x`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.method, self.service, self.path)?;
        if !self.query.is_empty() {
            write!(f, "?{}", self.query.encode())?;
        }
        Ok(())
    }
}

/// Makes matching requests fail.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Fault {
    /// Restricts the fault to one service (`None`: all).
    pub service: Option<Service>,
    /// Restricts the fault to paths below the service prefix that start
    /// with it (`None`: all), e.g. `/v2/images`.
    pub path: Option<String>,
    /// The HTTP status answered (with a small JSON error body).
    pub status: u16,
    /// The request is never answered: it waits until the client gives up
    /// (its timeout) or the double stops. `status` is ignored.
    pub hang: bool,
    /// How many requests the fault applies to; 0 means every one.
    pub times: u32,
}

/// The identity a read-write service sees behind a token.
#[derive(Clone, Debug)]
pub(crate) struct Caller {
    pub(crate) project: String,
    pub(crate) admin: bool,
}

/// The double's state, behind one lock.
pub(crate) struct State {
    pub(crate) seed: Seed,
    calls: Vec<Call>,
    faults: Vec<Fault>,
    required_token: Option<String>,
    /// Zero: the services' own page sizes.
    pub(crate) page_size: usize,
    /// Load-balancer reads before a deleted one disappears; negative: never.
    pub(crate) delete_delay: i64,
    /// Load balancers being deleted → reads left.
    pub(crate) pending: BTreeMap<String, i64>,
    /// The sequence of created server groups.
    pub(crate) seq: u64,
    /// The sequence of created application credentials.
    pub(crate) credential_seq: u64,
    /// Password authentications answered.
    authentications: usize,
}

impl State {
    fn caller(&self, token: Option<&str>) -> Option<Caller> {
        let token = token?;
        if token == SERVICE_TOKEN {
            return Some(Caller {
                project: SERVICE_PROJECT.to_owned(),
                admin: true,
            });
        }
        self.seed
            .tokens
            .get(token)
            .or(self.seed.user_tokens.get(token).map(|u| &u.project_id))
            .or(self.seed.default_project.as_ref())
            .map(|project| Caller {
                project: project.clone(),
                admin: false,
            })
    }

    fn replace_seed(&mut self, seed: Seed) {
        self.seed = seed;
        self.calls.clear();
        self.faults.clear();
        self.pending.clear();
    }

    /// The first fault matching the request, consuming one of its uses.
    fn take_fault(&mut self, service: Service, path: &str) -> Option<Fault> {
        let i = self.faults.iter().position(|f| {
            f.service.is_none_or(|s| s == service)
                && f.path.as_deref().is_none_or(|p| path.starts_with(p))
        })?;
        let fault = self.faults[i].clone();
        if self.faults[i].times > 0 {
            self.faults[i].times -= 1;
            if self.faults[i].times == 0 {
                self.faults.remove(i);
            }
        }
        Some(fault)
    }
}

struct Shared {
    url: String,
    state: Mutex<State>,
    /// Turns true when the double stops: requests held by a hang fault end.
    closing: watch::Sender<bool>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running double, stopped when dropped.
pub struct OsFake {
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl OsFake {
    /// Starts a double serving `seed` on a free loopback port.
    pub async fn start(seed: Seed) -> std::io::Result<Self> {
        Self::bind(SocketAddr::from(([127, 0, 0, 1], 0)), seed).await
    }

    /// Starts a double serving `seed` on `addr`.
    pub async fn bind(addr: SocketAddr, seed: Seed) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let url = format!("http://{}", listener.local_addr()?);
        let shared = Arc::new(Shared {
            url,
            state: Mutex::new(State {
                seed,
                calls: Vec::new(),
                faults: Vec::new(),
                required_token: None,
                page_size: 0,
                delete_delay: 0,
                pending: BTreeMap::new(),
                seq: 0,
                credential_seq: 0,
                authentications: 0,
            }),
            closing: watch::Sender::new(false),
        });
        let router = Router::new().fallback(handle).with_state(shared.clone());
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let shutdown = async {
                let _ = rx.await;
            };
            // The server ends with the double; an accept error ends it too,
            // and the test then sees refused connections.
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(shutdown)
                .await;
        });
        Ok(Self {
            shared,
            shutdown: Some(tx),
        })
    }

    /// The base URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.shared.url
    }

    /// Makes the read-only services answer 401 to a request whose
    /// `X-Auth-Token` is not `token`, and the read-write ones too; `None`
    /// (the default) accepts any token on the read-only services.
    pub fn require_token(&self, token: Option<&str>) {
        self.shared.lock().required_token = token.map(str::to_owned);
    }

    /// Makes `token` a user token of `project` for the read-write services.
    pub fn add_token(&self, token: &str, project: &str) {
        self.shared
            .lock()
            .seed
            .tokens
            .insert(token.to_owned(), project.to_owned());
    }

    /// Sets the page size of list answers when the client sends no smaller
    /// limit. 0 restores the services' defaults: Glance 25, Nova 1000,
    /// Neutron and Octavia no pagination.
    pub fn set_page_size(&self, n: usize) {
        self.shared.lock().page_size = n;
    }

    /// Adds a fault; faults are tried in the order they were added.
    pub fn inject(&self, fault: Fault) {
        self.shared.lock().faults.push(fault);
    }

    /// The requests received so far.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.lock().calls.clone()
    }

    /// Replaces what the double serves by `seed`, and forgets the recorded
    /// calls, the faults and the load balancers being deleted (the
    /// control API's `PUT seed`).
    pub fn set_seed(&self, seed: Seed) {
        self.shared.lock().replace_seed(seed);
    }

    /// Forgets the recorded calls and the faults.
    pub fn reset(&self) {
        let mut st = self.shared.lock();
        st.calls.clear();
        st.faults.clear();
    }

    /// How many password authentications the Keystone part answered (they
    /// are not in [`OsFake::calls`]).
    pub fn authentications(&self) -> usize {
        self.shared.lock().authentications
    }

    /// The lookup list calls that carried no name or id filter.
    pub fn unfiltered_lists(&self) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.is_list() && !c.filtered())
            .collect()
    }

    /// The URL Keystone would list for `service` and `interface` (`public`,
    /// `internal`, `admin`).
    pub fn endpoint(&self, service: Service, interface: &str) -> String {
        endpoint_of(self.url(), service, interface)
    }

    /// The Keystone v3 URL of the password authentication
    /// (`{url}/identity/v3`).
    pub fn identity_endpoint(&self) -> String {
        self.endpoint(Service::Identity, "public")
    }

    /// A Keystone v3 token catalog (the JSON array under `token.catalog`, and
    /// in keystonemiddleware's `X-Service-Catalog` header) with every
    /// service in region `RegionOne`, each with a public, internal and admin
    /// endpoint pointing at the double.
    pub fn catalog(&self) -> Vec<u8> {
        self.catalog_for(&["RegionOne"], &Service::ALL)
    }

    /// [`OsFake::catalog`] with one set of endpoints per region, in the order
    /// given. The endpoints of every region but `RegionOne` get a
    /// `/<region>` path prefix, which the double does not serve (404), so a
    /// client that picks the wrong region fails visibly.
    pub fn catalog_for_regions(&self, regions: &[&str]) -> Vec<u8> {
        self.catalog_for(regions, &Service::ALL)
    }

    /// [`OsFake::catalog`] without `services` (a cloud without Octavia, …).
    pub fn catalog_without(&self, services: &[Service]) -> Vec<u8> {
        let kept: Vec<Service> = Service::ALL
            .into_iter()
            .filter(|s| !services.contains(s))
            .collect();
        self.catalog_for(&["RegionOne"], &kept)
    }

    /// A catalog of `services` in `regions` (see
    /// [`OsFake::catalog_for_regions`]).
    pub fn catalog_for(&self, regions: &[&str], services: &[Service]) -> Vec<u8> {
        serde_json::to_vec(&catalog_value(self, regions, services)).unwrap_or_default()
    }

    /// The load balancers held (PENDING_DELETE ones included), in creation
    /// order.
    pub fn load_balancers(&self) -> Vec<LoadBalancer> {
        self.shared.lock().seed.load_balancers.clone()
    }

    /// Adds a load balancer (`ACTIVE` when its status is empty).
    pub fn add_load_balancer(&self, mut lb: LoadBalancer) {
        if lb.provisioning_status.is_empty() {
            lb.provisioning_status = "ACTIVE".to_owned();
        }
        self.shared.lock().seed.load_balancers.push(lb);
    }

    /// The floating IPs held.
    pub fn floating_ips(&self) -> Vec<FloatingIp> {
        self.shared.lock().seed.floating_ips.clone()
    }

    /// Adds a floating IP.
    pub fn add_floating_ip(&self, fip: FloatingIp) {
        self.shared.lock().seed.floating_ips.push(fip);
    }

    /// Sets after how many load-balancer reads (lists or shows) a deleted
    /// load balancer disappears: 0 at once (the default), negative never (it
    /// stays PENDING_DELETE). When it disappears its VIP port goes too, so
    /// the floating IPs on the port are disassociated, as in a real cloud.
    pub fn set_delete_delay(&self, reads: i64) {
        self.shared.lock().delete_delay = reads;
    }

    /// The server groups held, in creation order.
    pub fn server_groups(&self) -> Vec<ServerGroup> {
        self.shared.lock().seed.server_groups.clone()
    }

    /// Adds a server group.
    pub fn add_server_group(&self, group: ServerGroup) {
        self.shared.lock().seed.server_groups.push(group);
    }

    /// Adds a volume type.
    pub fn add_volume_type(&self, volume_type: VolumeType) {
        self.shared.lock().seed.volume_types.push(volume_type);
    }

    /// Names Cinder's default volume type (`None`: `GET /types/default` is
    /// 404).
    pub fn set_default_volume_type(&self, name: Option<&str>) {
        self.shared.lock().seed.default_volume_type = name.map(str::to_owned);
    }

    /// The extra specs of the flavor `id` from now on.
    pub fn set_flavor_extra_specs(&self, id: &str, specs: BTreeMap<String, String>) {
        self.shared
            .lock()
            .seed
            .flavor_extra_specs
            .insert(id.to_owned(), specs);
    }

    /// Adds a share type.
    pub fn add_share_type(&self, share_type: ShareType) {
        self.shared.lock().seed.share_types.push(share_type);
    }

    /// Names Manila's default share type (`None`: `GET /types/default` is
    /// 404).
    pub fn set_default_share_type(&self, name: Option<&str>) {
        self.shared.lock().seed.default_share_type = name.map(str::to_owned);
    }

    /// The application credentials Keystone holds, in creation order.
    pub fn application_credentials(&self) -> Vec<ApplicationCredential> {
        self.shared.lock().seed.application_credentials.clone()
    }

    /// What the binary prints: the base URL, the public endpoint of each
    /// service and the catalog.
    pub fn description(&self) -> Value {
        let mut endpoints = serde_json::Map::new();
        for s in Service::ALL {
            endpoints.insert(
                s.catalog_type().to_owned(),
                Value::String(self.endpoint(s, "public")),
            );
        }
        json!({
            "url": self.url(),
            "endpoints": endpoints,
            "catalog": catalog_value(self, &["RegionOne"], &Service::ALL),
        })
    }
}

impl Drop for OsFake {
    fn drop(&mut self) {
        self.shared.closing.send_replace(true);
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl fmt::Debug for OsFake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OsFake").field("url", &self.url()).finish()
    }
}

/// The endpoint of `service` for `interface` on the double at `base`.
fn endpoint_of(base: &str, service: Service, interface: &str) -> String {
    let iface = if interface.is_empty() || interface == "public" {
        String::new()
    } else {
        format!("/{interface}")
    };
    format!(
        "{base}{iface}{}{}",
        service.prefix(),
        service.listed_version()
    )
}

fn catalog_value(fake: &OsFake, regions: &[&str], services: &[Service]) -> Value {
    catalog_of(fake.url(), regions, services)
}

/// The catalog of `services` in `regions` of the double at `base`, each
/// with three interfaces.
pub(crate) fn catalog_of(base: &str, regions: &[&str], services: &[Service]) -> Value {
    let mut entries = Vec::new();
    for &svc in services {
        let mut eps = Vec::new();
        for region in regions {
            for iface in ["public", "internal", "admin"] {
                let mut u = endpoint_of(base, svc, iface);
                if *region != "RegionOne" {
                    u = format!("{base}/{region}{}", &u[base.len()..]);
                }
                eps.push(json!({
                    "id": format!("{svc}-{region}-{iface}"),
                    "interface": iface,
                    "region": region,
                    "region_id": region,
                    "url": u,
                }));
            }
        }
        entries.push(json!({
            "id": format!("{}-id", svc.catalog_name()),
            "name": svc.catalog_name(),
            "type": svc.catalog_type(),
            "endpoints": eps,
        }));
    }
    Value::Array(entries)
}

/// Splits a raw request path into interface, service and the rest.
fn route(path: &str) -> Option<(&'static str, Service, &str)> {
    let mut iface = "public";
    let mut p = path;
    for (prefix, name) in [("/internal/", "internal"), ("/admin/", "admin")] {
        if p.starts_with(prefix) {
            iface = name;
            p = &p[prefix.len() - 1..];
        }
    }
    Service::ALL.into_iter().find_map(|svc| {
        let rest = p.strip_prefix(svc.prefix())?;
        (rest.is_empty() || rest.starts_with('/')).then_some((iface, svc, rest))
    })
}

/// A JSON answer.
pub(crate) fn json_response(status: u16, body: Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(body)).into_response()
}

/// A plain-text answer (Glance's errors).
pub(crate) fn text_response(status: u16, body: &str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=UTF-8"),
        )],
        body.to_owned(),
    )
        .into_response()
}

pub(crate) fn no_content() -> Response {
    StatusCode::NO_CONTENT.into_response()
}

fn unauthorized() -> Response {
    let mut resp = json_response(
        401,
        json!({"error": {"code": 401, "title": "Unauthorized",
            "message": "The request you have made requires authentication."}}),
    );
    resp.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Keystone uri=\"http://127.0.0.1/identity\""),
    );
    resp
}

fn method_not_allowed() -> Response {
    json_response(
        405,
        json!({"error": {"code": 405, "message": "not supported by the double"}}),
    )
}

/// `items` after the element whose key is `marker`, cut to `limit` (0: no
/// limit). Also whether the page is full (services emit a next link then,
/// even when nothing follows); `None` when the marker is unknown.
pub(crate) fn page<T: Clone>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    marker: Option<&str>,
    limit: usize,
) -> Option<(Vec<T>, bool)> {
    let mut rest = items;
    if let Some(m) = marker.filter(|m| !m.is_empty()) {
        let i = items.iter().position(|it| key(it) == m)?;
        rest = &items[i + 1..];
    }
    if limit > 0 && rest.len() >= limit {
        return Some((rest[..limit].to_vec(), true));
    }
    Some((rest.to_vec(), false))
}

/// Whether the request of `service` at `rest` goes to a read-write service,
/// where tokens must be known.
fn read_write(service: Service, rest: &str) -> bool {
    match service {
        Service::Compute => rest.starts_with("/v2.1/os-server-groups"),
        Service::Network => rest.starts_with("/v2.0/floatingips"),
        Service::LoadBalancer => true,
        _ => false,
    }
}

async fn handle(AxumState(shared): AxumState<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let raw_path = parts.uri.path().to_owned();
    if let Some(control) = raw_path.strip_prefix("/_osfake/") {
        return serve_control(&shared, &parts.method, control, body).await;
    }
    let Some((iface, service, raw_rest)) = route(&raw_path) else {
        return json_response(
            404,
            json!({"error": {"code": 404, "message": "no such service"}}),
        );
    };
    let rest = percent_decode_str(raw_rest)
        .decode_utf8()
        .map(|s| s.into_owned())
        .unwrap_or_else(|_| raw_rest.to_owned());
    let query = Query::parse(parts.uri.query().unwrap_or_default());
    let token = parts
        .headers
        .get("x-auth-token")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return json_response(413, json!({"error": {"code": 413}})),
    };
    let base = {
        let iface_prefix = if iface == "public" {
            String::new()
        } else {
            format!("/{iface}")
        };
        format!("{}{iface_prefix}{}", shared.url, service.prefix())
    };
    if service == Service::Identity && !identity::is_application_credentials(&rest) {
        let mut st = shared.lock();
        if parts.method == Method::POST {
            st.authentications += 1;
        }
        return identity::serve(&st, &shared.url, &parts.method, &rest, &parts.headers);
    }
    let mut headers = parts.headers.clone();
    headers.remove("x-auth-token");
    let call = Call {
        service,
        interface: iface.to_owned(),
        method: parts.method.clone(),
        path: rest,
        query,
        token,
        headers,
    };

    let fault = {
        let mut st = shared.lock();
        st.calls.push(call.clone());
        st.take_fault(service, &call.path)
    };
    if let Some(fault) = fault {
        if fault.hang {
            let mut closing = shared.closing.subscribe();
            let _ = closing.wait_for(|c| *c).await;
            return Response::new(Body::empty());
        }
        return fault_response(service, fault.status);
    }

    let mut st = shared.lock();
    if service == Service::Identity {
        // Keystone checks the token itself.
        return identity::serve_application_credentials(&mut st, &shared.url, &call, &body);
    }
    if let Some(required) = &st.required_token
        && call.token.as_deref() != Some(required.as_str())
    {
        return unauthorized();
    }
    if read_write(service, &call.path) {
        let Some(caller) = st.caller(call.token.as_deref()) else {
            return unauthorized();
        };
        return match service {
            Service::Compute => server_groups::serve(&mut st, &call, &caller, &body),
            Service::Network => octavia::serve_floating_ips(&mut st, &call, &caller),
            _ => octavia::serve_load_balancers(&mut st, &call, &caller, &base, &body),
        };
    }
    if call.method != Method::GET {
        return method_not_allowed();
    }
    match service {
        Service::Image => glance::serve(&st, &call),
        Service::Compute => nova::serve(&st, &call, &base),
        Service::Network => neutron::serve(&st, &call, &base),
        Service::SharedFileSystem => manila::serve(&st, &call),
        _ => cinder::serve(&st, &call),
    }
}

/// The answer of an injected fault, in the service's error shape.
fn fault_response(service: Service, status: u16) -> Response {
    if service == Service::LoadBalancer {
        return octavia::fault(status, "injected fault");
    }
    let title = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or_default();
    json_response(
        status,
        json!({"error": {"code": status, "message": "injected fault", "title": title}}),
    )
}

/// The control API: `GET calls`, `POST faults` (a [`Fault`] as JSON),
/// `POST reset`, `PUT seed` (a [`Seed`] as JSON, see [`OsFake::set_seed`]).
async fn serve_control(shared: &Shared, method: &Method, what: &str, body: Body) -> Response {
    match (method.as_str(), what) {
        ("GET", "calls") => {
            let calls: Vec<Value> = shared.lock().calls.iter().map(Call::to_json).collect();
            json_response(200, Value::Array(calls))
        }
        ("POST", "faults") => {
            let raw = axum::body::to_bytes(body, MAX_BODY)
                .await
                .unwrap_or_default();
            match serde_json::from_slice::<Fault>(&raw) {
                Ok(f) => {
                    shared.lock().faults.push(f);
                    no_content()
                }
                Err(e) => json_response(400, json!({"error": e.to_string()})),
            }
        }
        ("PUT", "seed") => {
            let raw = axum::body::to_bytes(body, MAX_BODY)
                .await
                .unwrap_or_default();
            match serde_json::from_slice::<Seed>(&raw) {
                Ok(seed) => {
                    shared.lock().replace_seed(seed);
                    no_content()
                }
                Err(e) => json_response(400, json!({"error": e.to_string()})),
            }
        }
        ("POST", "reset") => {
            let mut st = shared.lock();
            st.calls.clear();
            st.faults.clear();
            no_content()
        }
        _ => json_response(404, json!({"error": "unknown control call"})),
    }
}

/// Neutron's list filters: every given key must match, and a key repeated in
/// the query matches any of its values. Unknown keys are ignored, as Neutron
/// does with filter validation off.
pub(crate) fn matches(q: &Query, fields: &HashMap<&str, String>) -> bool {
    for (k, wanted) in q.iter() {
        if matches!(
            k,
            "limit" | "marker" | "fields" | "sort_key" | "sort_dir" | "page_reverse"
        ) {
            continue;
        }
        let Some(have) = fields.get(k) else {
            continue;
        };
        let is_bool = have == "true" || have == "false";
        let any = wanted.iter().any(|v| {
            if is_bool {
                // Neutron converts boolean filters: True, true, 1, 0…
                v.eq_ignore_ascii_case(have)
                    || ((v == "1") == (have == "true") && (v == "1" || v == "0"))
            } else {
                v == have
            }
        });
        if !any {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests;
