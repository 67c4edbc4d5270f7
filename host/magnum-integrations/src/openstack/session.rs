//! The HTTP session every client shares: one connection pool with the TLS
//! settings, the timeout of each call, the caller of a call, and the
//! service's own Keystone token for the calls made without a user.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use magnum_domain::RequestContext;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::catalog::{
    CatalogEntry, endpoint_url, normalize_interface, parse_catalog, service_roots,
};
use super::error::{ErrorKind, OpenStackError, SettingsError};

/// The bound of each call when [`SessionSettings::timeout`] is unset.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The `User-Agent` when [`SessionSettings::user_agent`] is unset.
pub const DEFAULT_USER_AGENT: &str = "openkeel-magnum";
/// The most read of one answer (a page of images with their properties is
/// a few hundred KiB).
const MAX_BODY_SIZE: usize = 8 << 20;
/// The service token is renewed this long before it expires.
const SERVICE_TOKEN_MARGIN: chrono::TimeDelta = chrono::TimeDelta::seconds(30);
/// Connections kept idle per host: a cluster create reads up to seven
/// resources at once, and requests run concurrently.
const MAX_IDLE_PER_HOST: usize = 32;

const X_AUTH_TOKEN: HeaderName = HeaderName::from_static("x-auth-token");

/// The HTTP settings of a [`Session`], as Magnum takes them from the
/// `[keystone_auth]` session options.
#[derive(Clone, Debug, Default)]
pub struct SessionSettings {
    /// The bound of each call; `None` or zero means [`DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
    /// `cafile`: a PEM bundle, the only roots trusted.
    pub cafile: Option<PathBuf>,
    /// `certfile` and `keyfile`: a client certificate (PEM) and its PKCS#8
    /// key (PEM).
    pub certfile: Option<PathBuf>,
    pub keyfile: Option<PathBuf>,
    /// `insecure`: certificates are not verified.
    pub insecure: bool,
    /// The `User-Agent` sent; `None` means [`DEFAULT_USER_AGENT`].
    pub user_agent: Option<String>,
}

/// The service's own Keystone credentials (`[keystone_auth]`'s password
/// plugin), used where no user token exists: deleting a deleted cluster's
/// application credential, server groups and load balancers.
#[derive(Clone, Default)]
pub struct ServiceCredentials {
    /// Keystone's identity endpoint, with or without `/v3`.
    pub auth_url: String,
    pub username: String,
    /// Never logged (`Debug` redacts it).
    pub password: String,
    /// `user_domain_id` or `user_domain_name` qualify `username`; domain id
    /// `default` when both are unset.
    pub user_domain_id: Option<String>,
    pub user_domain_name: Option<String>,
    /// `project_id` or `project_name` scope the token (`project_id` wins).
    pub project_id: Option<String>,
    pub project_name: Option<String>,
    /// `project_domain_id` or `project_domain_name` qualify `project_name`;
    /// domain id `default` when both are unset.
    pub project_domain_id: Option<String>,
    pub project_domain_name: Option<String>,
    /// `system_scope` (`all`): a system-scoped token instead of a project.
    pub system_scope: Option<String>,
    /// `region_name` and `interface` select the endpoints of the service
    /// token's catalog (any region; `public` when unset).
    pub region_name: Option<String>,
    pub interface: Option<String>,
}

impl fmt::Debug for ServiceCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceCredentials")
            .field("auth_url", &self.auth_url)
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("user_domain_id", &self.user_domain_id)
            .field("user_domain_name", &self.user_domain_name)
            .field("project_id", &self.project_id)
            .field("project_name", &self.project_name)
            .field("project_domain_id", &self.project_domain_id)
            .field("project_domain_name", &self.project_domain_name)
            .field("system_scope", &self.system_scope)
            .field("region_name", &self.region_name)
            .field("interface", &self.interface)
            .finish()
    }
}

/// Who a call of the stores ([`super::AppCredentials`],
/// [`super::ServerGroups`], [`super::LoadBalancers`],
/// [`super::VolumeTypes`]) is made for: the user's token and its catalog,
/// or, with `service` set or without a token, the service credentials (the
/// periodic poll has no user token).
#[derive(Clone, Default)]
pub struct Caller {
    /// The user's Keystone token; never logged (`Debug` redacts it).
    pub token: Option<String>,
    /// The user and the token's project.
    pub user_id: String,
    pub project_id: String,
    /// The token's catalog (JSON), where the user's endpoints are found.
    pub service_catalog: Option<Vec<u8>>,
    /// The token's role names; `None` means "ask Keystone".
    pub roles: Option<Vec<String>>,
    /// Use the service credentials even when a token is present.
    pub service: bool,
}

impl Caller {
    /// The caller of an API request.
    pub fn from_context(ctx: &RequestContext) -> Self {
        Self {
            token: ctx.auth_token.clone().filter(|t| !t.is_empty()),
            user_id: ctx.user_id.clone(),
            project_id: ctx.project_id.clone(),
            service_catalog: ctx.service_catalog.clone(),
            roles: Some(ctx.roles.clone()),
            service: false,
        }
    }

    /// The service itself (its own credentials).
    pub fn service() -> Self {
        Self {
            service: true,
            ..Self::default()
        }
    }

    /// The user token the call goes out with, or `None` for the service
    /// credentials.
    pub(crate) fn user_token(&self) -> Option<&str> {
        if self.service {
            return None;
        }
        self.token.as_deref().filter(|t| !t.is_empty())
    }
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("user_id", &self.user_id)
            .field("project_id", &self.project_id)
            .field("roles", &self.roles)
            .field("service", &self.service)
            .finish_non_exhaustive()
    }
}

/// The identity a request goes out with.
#[derive(Clone)]
pub(crate) enum Who {
    /// The user's token.
    User(String),
    /// The service credentials' token, renewed once on a 401.
    Service,
}

/// Where a caller reaches a service: the identity and the service's
/// versioned base (ending in `/`).
pub(crate) struct Target {
    pub(crate) who: Who,
    /// The versioned resource base: `…/v2.1/`.
    pub(crate) base: String,
}

/// A service's endpoint for a caller, or why the catalog has none.
pub(crate) enum Resolved {
    Found(Target),
    /// The catalog has no such service (keystoneauth's message).
    Missing(String),
}

/// A service the stores call: its name in messages, its catalog types
/// (the first found wins), its API version and its `[<service>_client]`
/// group.
#[derive(Debug)]
pub(crate) struct ServiceKind {
    pub(crate) name: &'static str,
    pub(crate) types: &'static [&'static str],
    pub(crate) version: &'static str,
    pub(crate) group: &'static str,
}

impl ServiceKind {
    const fn new(
        name: &'static str,
        types: &'static [&'static str],
        version: &'static str,
        group: &'static str,
    ) -> Self {
        ServiceKind {
            name,
            types,
            version,
            group,
        }
    }
}

/// Nova's compute API.
pub(crate) const NOVA: ServiceKind = ServiceKind::new("nova", &["compute"], "v2.1", "nova_client");

/// Neutron's network API.
pub(crate) const NEUTRON: ServiceKind =
    ServiceKind::new("neutron", &["network"], "v2.0", "neutron_client");

/// Octavia's load-balancer API.
pub(crate) const OCTAVIA: ServiceKind =
    ServiceKind::new("octavia", &["load-balancer"], "v2", "octavia_client");

/// Cinder's v3 API, by its newest catalog name first.
pub(crate) const CINDER: ServiceKind = ServiceKind::new(
    "cinder",
    &["block-storage", "volumev3"],
    "v3",
    "cinder_client",
);

/// Manila's v2 API: the catalog type magnum-cluster-api looks for first,
/// then the service-types authority's name.
pub(crate) const MANILA: ServiceKind = ServiceKind::new(
    "manila",
    &["sharev2", "shared-file-system"],
    "v2",
    "manila_client",
);

/// One service a store calls: the session its calls go through and how
/// the service is found. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Service {
    session: Session,
    kind: &'static ServiceKind,
    settings: super::EndpointSettings,
}

impl Service {
    /// Checks the fixed endpoint of `settings`; nothing is contacted.
    pub(crate) fn new(
        session: Session,
        kind: &'static ServiceKind,
        settings: super::EndpointSettings,
    ) -> Result<Self, SettingsError> {
        settings.check(kind.group, kind.version)?;
        Ok(Self {
            session,
            kind,
            settings,
        })
    }

    /// The session the service's calls go through.
    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    /// Where `caller` reaches the service ([`Session::target`]).
    pub(crate) async fn target(&self, caller: &Caller) -> Result<Resolved, OpenStackError> {
        self.session.target(caller, self).await
    }

    /// Where `caller` reaches the service, or `None` when the catalog has
    /// no such service.
    pub(crate) async fn optional(&self, caller: &Caller) -> Result<Option<Target>, OpenStackError> {
        match self.target(caller).await? {
            Resolved::Found(t) => Ok(Some(t)),
            Resolved::Missing(_) => Ok(None),
        }
    }

    /// The types `caller` sees of a service that names a default one
    /// (Cinder's volume types, Manila's share types), read by `list`, with
    /// the key `key` takes from the default type (`GET …/types/default`,
    /// decoded as `D`); `None` when the catalog has no such service.
    ///
    /// The default answers 404 when none is configured: then no type is
    /// the default. Any other failure is treated the same, as the list
    /// itself was read.
    pub(crate) async fn types_with_default<T, D: DeserializeOwned>(
        &self,
        caller: &Caller,
        context: &str,
        list: impl AsyncFnOnce(&Session, &Target) -> Result<Vec<T>, OpenStackError>,
        key: impl FnOnce(D) -> Option<String>,
    ) -> Result<Option<(Vec<T>, Option<String>)>, OpenStackError> {
        let Some(target) = self.optional(caller).await? else {
            return Ok(None);
        };
        let types = list(&self.session, &target).await?;
        let default = self
            .session
            .get_optional(
                &target.who,
                format!("{}types/default", target.base),
                context,
            )
            .await
            .and_then(key);
        Ok(Some((types, default)))
    }

    /// Where `caller` reaches the service, which the call cannot do
    /// without: a catalog without it is an [`ErrorKind::Endpoint`] error.
    pub(crate) async fn required(&self, caller: &Caller) -> Result<Target, OpenStackError> {
        match self.target(caller).await? {
            Resolved::Found(t) => Ok(t),
            Resolved::Missing(m) => Err(OpenStackError::new(
                format!("{}: endpoint", self.kind.name),
                ErrorKind::Endpoint(m),
            )),
        }
    }
}

/// An answer: its status and body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    /// The body decoded as `T`.
    pub(crate) fn json<T: DeserializeOwned>(&self, context: &str) -> Result<T, OpenStackError> {
        serde_json::from_slice(&self.body)
            .map_err(|e| OpenStackError::new(context, ErrorKind::Decode(e.to_string())))
    }

    /// Itself when the status is one of `ok`, else the status as an error.
    pub(crate) fn expect(self, ok: &[u16], context: &str) -> Result<Self, OpenStackError> {
        if ok.contains(&self.status) {
            Ok(self)
        } else {
            Err(OpenStackError::new(context, ErrorKind::Status(self.status)))
        }
    }
}

/// The service user's token and catalog (no `Debug`: it holds the token).
struct ServiceToken {
    token: String,
    expires: DateTime<Utc>,
    catalog: Vec<CatalogEntry>,
}

/// The HTTP client the OpenStack clients share, with the service
/// credentials. Cheap to clone; the clones share the connections and the
/// service token.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    client: reqwest::Client,
    timeout: Duration,
    service: Option<ServiceCredentials>,
    /// `…/v3/` of the service credentials.
    service_base: Option<String>,
    /// Serialises service authentication.
    service_token: Mutex<Option<Arc<ServiceToken>>>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("timeout", &self.inner.timeout)
            .field("service", &self.inner.service)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Builds the HTTP client (reading the TLS files) and checks the service
    /// credentials' URL; nothing is contacted.
    pub fn new(
        settings: SessionSettings,
        service: Option<ServiceCredentials>,
    ) -> Result<Self, SettingsError> {
        let timeout = settings
            .timeout
            .filter(|t| !t.is_zero())
            .unwrap_or(DEFAULT_TIMEOUT);
        let user_agent = settings
            .user_agent
            .clone()
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| DEFAULT_USER_AGENT.to_owned());
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            // OpenStack APIs answer directly; a redirect would resend the
            // token somewhere else.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(user_agent)
            .tls_version_min(reqwest::tls::Version::TLS_1_2)
            .pool_max_idle_per_host(MAX_IDLE_PER_HOST)
            // Operator's choice ([keystone_auth]/insecure).
            .tls_danger_accept_invalid_certs(settings.insecure);
        if let Some(path) = &settings.cafile {
            let pem = std::fs::read(path)
                .map_err(|e| SettingsError(format!("read CA file {}: {e}", path.display())))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .ok()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| {
                    SettingsError(format!(
                        "CA file {} holds no PEM certificate",
                        path.display()
                    ))
                })?;
            builder = builder.tls_certs_only(certs);
        }
        match (&settings.certfile, &settings.keyfile) {
            (None, None) => {}
            (Some(cert), Some(key)) => {
                let read = |p: &PathBuf| {
                    std::fs::read(p).map_err(|e| {
                        SettingsError(format!("read client certificate {}: {e}", p.display()))
                    })
                };
                let identity = reqwest::Identity::from_pkcs8_pem(&read(cert)?, &read(key)?)
                    .map_err(|e| {
                        SettingsError(format!(
                            "client certificate {} with key {}: {}",
                            cert.display(),
                            key.display(),
                            error_chain(&e)
                        ))
                    })?;
                builder = builder.identity(identity);
            }
            _ => {
                return Err(SettingsError(
                    "a client certificate needs both certfile and keyfile".to_owned(),
                ));
            }
        }
        let client = builder
            .build()
            .map_err(|e| SettingsError(format!("HTTP client: {}", error_chain(&e))))?;
        let service_base = match &service {
            Some(s) if !s.auth_url.is_empty() => Some(
                service_roots(&s.auth_url, "v3")
                    .map(|(_, base)| base)
                    .map_err(|e| SettingsError(format!("service credentials auth_url: {e}")))?,
            ),
            _ => None,
        };
        Ok(Self {
            inner: Arc::new(Inner {
                client,
                timeout,
                service,
                service_base,
                service_token: Mutex::new(None),
            }),
        })
    }

    /// The bound of each call.
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// One request, bounded by the timeout; the body is read (up to
    /// [`MAX_BODY_SIZE`]) whatever the status.
    pub(crate) async fn request(
        &self,
        method: Method,
        url: &str,
        token: &str,
        body: Option<&Value>,
        headers: &HeaderMap,
        context: &str,
    ) -> Result<Reply, OpenStackError> {
        let mut token_value = HeaderValue::from_str(token).map_err(|_| {
            OpenStackError::new(
                context,
                ErrorKind::Invalid("the token cannot be sent in a header".to_owned()),
            )
        })?;
        token_value.set_sensitive(true);
        let mut req = self
            .inner
            .client
            .request(method, url)
            .timeout(self.inner.timeout)
            .header(X_AUTH_TOKEN, token_value)
            .header(http::header::ACCEPT, "application/json")
            .headers(headers.clone());
        if let Some(b) = body {
            req = req.json(b);
        }
        let mut resp = req.send().await.map_err(|e| self.transport(context, &e))?;
        let status = resp.status().as_u16();
        let mut buf = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| self.transport(context, &e))?
        {
            if buf.len() + chunk.len() > MAX_BODY_SIZE {
                return Err(OpenStackError::new(
                    context,
                    ErrorKind::Decode(format!("answer larger than {MAX_BODY_SIZE} bytes")),
                ));
            }
            buf.extend_from_slice(&chunk);
        }
        Ok(Reply { status, body: buf })
    }

    fn transport(&self, context: &str, e: &reqwest::Error) -> OpenStackError {
        if e.is_timeout() {
            OpenStackError::new(context, ErrorKind::Timeout(self.inner.timeout))
        } else {
            OpenStackError::new(context, ErrorKind::Transport(error_chain(e)))
        }
    }

    /// One request as `who`: with the service token, a 401 renews the token
    /// and the request is sent once more (the token was revoked or the
    /// fernet keys rotated).
    pub(crate) async fn send(
        &self,
        who: &Who,
        method: Method,
        url: &str,
        body: Option<&Value>,
        context: &str,
    ) -> Result<Reply, OpenStackError> {
        self.send_with(who, method, url, body, &HeaderMap::new(), context)
            .await
    }

    /// A GET as `who`, which owns its URL: what reads the pages of a list.
    pub(crate) async fn get(
        &self,
        who: &Who,
        url: String,
        context: &str,
    ) -> Result<Reply, OpenStackError> {
        self.send(who, Method::GET, &url, None, context).await
    }

    /// The body of a GET as `who` decoded as `T`, or `None` when the call
    /// fails, answers another status than 200 or a body that does not
    /// decode: for what a call can do without.
    pub(crate) async fn get_optional<T: DeserializeOwned>(
        &self,
        who: &Who,
        url: String,
        context: &str,
    ) -> Option<T> {
        match self.get(who, url, context).await {
            Ok(r) if r.status == 200 => r.json(context).ok(),
            _ => None,
        }
    }

    /// [`Session::send`] with further request headers (a microversion).
    pub(crate) async fn send_with(
        &self,
        who: &Who,
        method: Method,
        url: &str,
        body: Option<&Value>,
        headers: &HeaderMap,
        context: &str,
    ) -> Result<Reply, OpenStackError> {
        match who {
            Who::User(token) => {
                self.request(method, url, token, body, headers, context)
                    .await
            }
            Who::Service => {
                let token = self.service_token(false).await?;
                let reply = self
                    .request(method.clone(), url, &token.token, body, headers, context)
                    .await?;
                if reply.status != 401 {
                    return Ok(reply);
                }
                let token = self.service_token(true).await?;
                self.request(method, url, &token.token, body, headers, context)
                    .await
            }
        }
    }

    /// The service token, from the cache unless it expires within
    /// [`SERVICE_TOKEN_MARGIN`] or `renew` is set.
    async fn service_token(&self, renew: bool) -> Result<Arc<ServiceToken>, OpenStackError> {
        const CONTEXT: &str = "keystone: authenticate the service user";
        let (Some(creds), Some(base)) = (&self.inner.service, &self.inner.service_base) else {
            return Err(OpenStackError::new(
                CONTEXT,
                ErrorKind::NoServiceCredentials,
            ));
        };
        let mut cached = self.inner.service_token.lock().await;
        if !renew
            && let Some(t) = cached.as_ref()
            && t.expires - SERVICE_TOKEN_MARGIN > Utc::now()
        {
            return Ok(t.clone());
        }
        let resp = self
            .inner
            .client
            .post(format!("{base}auth/tokens"))
            .timeout(self.inner.timeout)
            .header(http::header::ACCEPT, "application/json")
            .json(&password_auth(creds))
            .send()
            .await
            .map_err(|e| self.transport(CONTEXT, &e))?;
        let status = resp.status().as_u16();
        if status != 201 {
            return Err(OpenStackError::new(CONTEXT, ErrorKind::Status(status)));
        }
        let token = resp
            .headers()
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok())
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                OpenStackError::new(
                    CONTEXT,
                    ErrorKind::Decode("no X-Subject-Token header".to_owned()),
                )
            })?;
        #[derive(Deserialize)]
        struct Body {
            token: TokenBody,
        }
        #[derive(Deserialize)]
        struct TokenBody {
            expires_at: String,
            #[serde(default)]
            catalog: Option<Vec<CatalogEntry>>,
        }
        let raw = resp
            .bytes()
            .await
            .map_err(|e| self.transport(CONTEXT, &e))?;
        let body: Body = serde_json::from_slice(&raw)
            .map_err(|e| OpenStackError::new(CONTEXT, ErrorKind::Decode(e.to_string())))?;
        let expires = DateTime::parse_from_rfc3339(&body.token.expires_at)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| {
                OpenStackError::new(CONTEXT, ErrorKind::Decode(format!("expires_at: {e}")))
            })?;
        let fresh = Arc::new(ServiceToken {
            token,
            expires,
            catalog: body.token.catalog.unwrap_or_default(),
        });
        *cached = Some(fresh.clone());
        Ok(fresh)
    }

    /// Where `caller` reaches `svc`: the fixed endpoint when configured, else
    /// the first catalog type found in the user's catalog (with the
    /// `[<service>_client]` region and endpoint type) or, for the service
    /// credentials, in the service token's catalog (with their region and
    /// interface).
    pub(crate) async fn target(
        &self,
        caller: &Caller,
        svc: &Service,
    ) -> Result<Resolved, OpenStackError> {
        let (kind, settings) = (svc.kind, &svc.settings);
        let context = format!("{}: endpoint", kind.name);
        let fixed = settings.endpoint.as_deref().filter(|e| !e.is_empty());
        let (who, endpoint) = match caller.user_token() {
            Some(token) => {
                let who = Who::User(token.to_owned());
                match fixed {
                    Some(e) => (who, e.to_owned()),
                    None => {
                        let entries =
                            parse_catalog(caller.service_catalog.as_deref().unwrap_or_default())
                                .map_err(|e| {
                                    OpenStackError::new(&context, ErrorKind::Endpoint(e))
                                })?;
                        match first_endpoint(
                            &entries,
                            kind.types,
                            &settings.endpoint_type,
                            settings.region(),
                        ) {
                            Ok(e) => (who, e),
                            Err(missing) => return Ok(Resolved::Missing(missing)),
                        }
                    }
                }
            }
            None => match fixed {
                Some(e) => (Who::Service, e.to_owned()),
                None => {
                    let token = self.service_token(false).await?;
                    let creds = self.inner.service.as_ref();
                    let iface = creds
                        .and_then(|c| c.interface.as_deref())
                        .unwrap_or_default();
                    let region = creds
                        .and_then(|c| c.region_name.as_deref())
                        .unwrap_or_default();
                    match first_endpoint(
                        &token.catalog,
                        kind.types,
                        normalize_interface(iface),
                        region,
                    ) {
                        Ok(e) => (Who::Service, e),
                        Err(missing) => return Ok(Resolved::Missing(missing)),
                    }
                }
            },
        };
        let (_, base) = service_roots(&endpoint, kind.version)
            .map_err(|e| OpenStackError::new(&context, ErrorKind::Endpoint(e)))?;
        Ok(Resolved::Found(Target { who, base }))
    }
}

/// The first endpoint of the first of `types` the catalog has.
fn first_endpoint(
    entries: &[CatalogEntry],
    types: &[&str],
    endpoint_type: &str,
    region: &str,
) -> Result<String, String> {
    let mut first_err = None;
    for t in types {
        match endpoint_url(entries, t, endpoint_type, region) {
            Ok(e) => return Ok(e),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or_else(|| "no service type".to_owned()))
}

/// The password authentication body of the service credentials.
fn password_auth(c: &ServiceCredentials) -> Value {
    fn domain(id: &Option<String>, name: &Option<String>) -> Value {
        match (
            id.as_deref().filter(|s| !s.is_empty()),
            name.as_deref().filter(|s| !s.is_empty()),
        ) {
            (Some(id), _) => json!({"id": id}),
            (None, Some(name)) => json!({"name": name}),
            (None, None) => json!({"id": "default"}),
        }
    }
    let mut auth = json!({"identity": {"methods": ["password"], "password": {"user": {
        "name": c.username,
        "domain": domain(&c.user_domain_id, &c.user_domain_name),
        "password": c.password,
    }}}});
    let scope = if c.system_scope.as_deref().is_some_and(|s| !s.is_empty()) {
        Some(json!({"system": {"all": true}}))
    } else if let Some(id) = c.project_id.as_deref().filter(|s| !s.is_empty()) {
        Some(json!({"project": {"id": id}}))
    } else {
        c.project_name
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|name| {
                json!({"project": {"name": name,
                    "domain": domain(&c.project_domain_id, &c.project_domain_name)}})
            })
    };
    if let (Some(scope), Some(obj)) = (scope, auth.as_object_mut()) {
        obj.insert("scope".to_owned(), scope);
    }
    json!({ "auth": auth })
}

/// The error and its causes on one line.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds() -> ServiceCredentials {
        ServiceCredentials {
            auth_url: "http://ks:5000".into(),
            username: "magnum".into(),
            password: "pw".into(),
            ..Default::default()
        }
    }

    #[test]
    fn password_authentication_scopes() {
        let user = json!({"name": "magnum", "domain": {"id": "default"}, "password": "pw"});
        let body = password_auth(&ServiceCredentials {
            project_name: Some("service".into()),
            ..creds()
        });
        assert_eq!(
            body,
            json!({"auth": {
                "identity": {"methods": ["password"], "password": {"user": user}},
                "scope": {"project": {"name": "service", "domain": {"id": "default"}}},
            }})
        );
        let body = password_auth(&ServiceCredentials {
            user_domain_name: Some("Default".into()),
            project_name: Some("service".into()),
            project_domain_name: Some("Default".into()),
            ..creds()
        });
        assert_eq!(
            body["auth"]["identity"]["password"]["user"]["domain"],
            json!({"name": "Default"})
        );
        assert_eq!(
            body["auth"]["scope"]["project"]["domain"],
            json!({"name": "Default"})
        );
        let body = password_auth(&ServiceCredentials {
            project_id: Some("p-id".into()),
            project_name: Some("ignored".into()),
            ..creds()
        });
        assert_eq!(body["auth"]["scope"], json!({"project": {"id": "p-id"}}));
        let body = password_auth(&ServiceCredentials {
            system_scope: Some("all".into()),
            project_name: Some("ignored".into()),
            ..creds()
        });
        assert_eq!(body["auth"]["scope"], json!({"system": {"all": true}}));
        assert!(
            password_auth(&creds())["auth"].get("scope").is_none(),
            "unscoped"
        );
    }

    #[test]
    fn the_caller_of_a_request() {
        let ctx = RequestContext {
            auth_token: Some("tok".into()),
            user_id: "u".into(),
            project_id: "p".into(),
            roles: vec!["member".into()],
            service_catalog: Some(b"[]".to_vec()),
            ..Default::default()
        };
        let c = Caller::from_context(&ctx);
        assert_eq!(c.user_token(), Some("tok"));
        assert_eq!(c.roles.as_deref(), Some(&["member".to_owned()][..]));
        assert_eq!((c.user_id.as_str(), c.project_id.as_str()), ("u", "p"));
        let noauth = Caller::from_context(&RequestContext::default());
        assert_eq!(
            noauth.user_token(),
            None,
            "no token: the service credentials"
        );
        assert_eq!(Caller::service().user_token(), None);
        let forced = Caller { service: true, ..c };
        assert_eq!(forced.user_token(), None);
    }

    #[test]
    fn a_service_auth_url_must_be_http() {
        let bad = ServiceCredentials {
            auth_url: "keystone:5000".into(),
            ..creds()
        };
        assert!(Session::new(SessionSettings::default(), Some(bad)).is_err());
        let s = Session::new(SessionSettings::default(), Some(creds()));
        assert!(
            s.as_ref()
                .is_ok_and(|s| s.inner.service_base.as_deref() == Some("http://ks:5000/v3/")),
            "{s:?}"
        );
    }
}
