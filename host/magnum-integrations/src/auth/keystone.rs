//! Token validation with Keystone, as keystonemiddleware's `auth_token` does
//! it for Magnum: a service token from password authentication, `GET
//! /v3/auth/tokens`, the token cache, and the answers for what goes wrong.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chrono::{DateTime, Utc};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use magnum_domain::RequestContext;
use serde_json::json;
use tokio::sync::Mutex;

use super::cache::{CacheEntry, MAX_ENTRIES, TokenCache, hash_prefix, key_of};
use super::token::{Identity, identity_from_token, parse_expiry};
use super::{AuthError, AuthErrorKind, IsAdmin, request_id};

/// keystonemiddleware's default `token_cache_time`, seconds.
pub const DEFAULT_TOKEN_CACHE_TIME: i64 = 300;
/// The bound of each call to Keystone when `http_connect_timeout` is unset.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The service token is renewed this long before it expires, so that a
/// validation never goes out with an expired one.
const SERVICE_TOKEN_MARGIN: Duration = Duration::from_secs(30);
/// Longer tokens are refused without calling Keystone (fernet tokens are
/// under 300 bytes, JWS tokens under 1 KiB).
pub(crate) const MAX_TOKEN_LENGTH: usize = 8192;
const X_AUTH_TOKEN: HeaderName = HeaderName::from_static("x-auth-token");
const X_STORAGE_TOKEN: HeaderName = HeaderName::from_static("x-storage-token");
const X_SUBJECT_TOKEN: HeaderName = HeaderName::from_static("x-subject-token");
/// The most read from one Keystone answer (a token body with a large catalog
/// is a few tens of KiB).
const MAX_BODY_SIZE: usize = 8 << 20;

/// `[keystone_authtoken]`, the part of it this module uses. Unset options
/// are `None` (or empty); [`Default`] gives keystonemiddleware's defaults.
#[derive(Clone)]
pub struct KeystoneSettings {
    /// `auth_url`: Keystone's identity endpoint, with or without `/v3`.
    /// Empty: `www_authenticate_uri` is used.
    pub auth_url: String,
    /// `www_authenticate_uri`: the URI of the `WWW-Authenticate` header of a
    /// 401. Default: `auth_url`, as keystonemiddleware falls back to the auth
    /// plugin's endpoint.
    pub www_authenticate_uri: Option<String>,
    /// `username` and `password`: the service user.
    pub username: String,
    pub password: String,
    /// `project_id` or `project_name` scope the service token (usually
    /// project `service`); `project_id` wins.
    pub project_id: Option<String>,
    pub project_name: Option<String>,
    /// `user_domain_id` or `user_domain_name` qualify `username`; default
    /// domain id `default`.
    pub user_domain_id: Option<String>,
    pub user_domain_name: Option<String>,
    /// `project_domain_id` or `project_domain_name` qualify `project_name`;
    /// default domain id `default`.
    pub project_domain_id: Option<String>,
    pub project_domain_name: Option<String>,
    /// `cafile`: a PEM bundle, the only roots trusted for Keystone's
    /// certificate.
    pub cafile: Option<PathBuf>,
    /// `insecure`: Keystone's certificate is not verified.
    pub insecure: bool,
    /// `token_cache_time`, seconds: how long a validated token is trusted
    /// without asking Keystone again, never beyond its expiry. Negative
    /// (keystonemiddleware's `-1`) disables the cache; 0 is memcached's "no
    /// expiry", so the entry lasts until the token expires.
    pub token_cache_time: i64,
    /// `http_connect_timeout`: the bound of each call to Keystone; `None`
    /// means [`DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
    /// `delay_auth_decision`: a request whose token is missing, invalid or
    /// cannot be validated goes on without an identity instead of being
    /// answered 401 or 503 (see [`Keystone::authenticate`]).
    pub delay_auth_decision: bool,
}

impl Default for KeystoneSettings {
    fn default() -> Self {
        Self {
            auth_url: String::new(),
            www_authenticate_uri: None,
            username: String::new(),
            password: String::new(),
            project_id: None,
            project_name: None,
            user_domain_id: None,
            user_domain_name: None,
            project_domain_id: None,
            project_domain_name: None,
            cafile: None,
            insecure: false,
            token_cache_time: DEFAULT_TOKEN_CACHE_TIME,
            timeout: None,
            delay_auth_decision: false,
        }
    }
}

impl fmt::Debug for KeystoneSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeystoneSettings")
            .field("auth_url", &self.auth_url)
            .field("www_authenticate_uri", &self.www_authenticate_uri)
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("project_id", &self.project_id)
            .field("project_name", &self.project_name)
            .field("user_domain_id", &self.user_domain_id)
            .field("user_domain_name", &self.user_domain_name)
            .field("project_domain_id", &self.project_domain_id)
            .field("project_domain_name", &self.project_domain_name)
            .field("cafile", &self.cafile)
            .field("insecure", &self.insecure)
            .field("token_cache_time", &self.token_cache_time)
            .field("timeout", &self.timeout)
            .field("delay_auth_decision", &self.delay_auth_decision)
            .finish()
    }
}

/// Settings [`Keystone::new`] refuses; the text names the option and never
/// holds the password.
#[derive(Debug, thiserror::Error)]
#[error("[keystone_authtoken]: {0}")]
pub struct SettingsError(String);

/// The start-up check failed: Keystone is unreachable or refused the service
/// user. One line naming the URL and the cause.
#[derive(Debug, thiserror::Error)]
#[error("keystone {url}: {source}")]
pub struct CheckError {
    url: String,
    #[source]
    source: AuthError,
}

/// The clock of an authenticator (tests move it instead of sleeping).
pub(crate) type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// The authenticator that validates tokens with Keystone. Cheap to clone;
/// the clones share the cache and the service token.
#[derive(Clone)]
pub struct Keystone {
    inner: Arc<Inner>,
}

impl fmt::Debug for Keystone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keystone")
            .field("base_url", &self.inner.base_url)
            .field("username", &self.inner.settings.username)
            .finish_non_exhaustive()
    }
}

struct Inner {
    settings: KeystoneSettings,
    /// `auth_url` ending in `/v3`, without a trailing slash.
    base_url: String,
    www_authenticate_uri: Arc<str>,
    client: reqwest::Client,
    /// `None`: the cache is disabled.
    cache: Option<TokenCache>,
    /// `None`: entries last until the token expires.
    cache_time: Option<Duration>,
    is_admin: IsAdmin,
    clock: Clock,
    /// Serialises service authentication.
    service: Mutex<Option<ServiceToken>>,
    /// Token cache lookups answered from the cache, and the others.
    cache_hits: std::sync::atomic::AtomicU64,
    cache_misses: std::sync::atomic::AtomicU64,
}

/// The service user's token (never logged: no `Debug`).
struct ServiceToken {
    token: String,
    expires: DateTime<Utc>,
}

impl Keystone {
    /// The token cache's lookups so far: (answered from the cache, not).
    pub fn cache_counts(&self) -> (u64, u64) {
        (
            self.inner.cache_hits.load(Ordering::Relaxed),
            self.inner.cache_misses.load(Ordering::Relaxed),
        )
    }

    /// Checks `settings` and builds the authenticator; `is_admin` is the
    /// `context_is_admin` rule. Keystone is not contacted: call
    /// [`Keystone::check`] at start-up for that.
    pub fn new(settings: KeystoneSettings, is_admin: IsAdmin) -> Result<Self, SettingsError> {
        Self::with_clock(settings, is_admin, Arc::new(Utc::now), MAX_ENTRIES)
    }

    pub(crate) fn with_clock(
        mut settings: KeystoneSettings,
        is_admin: IsAdmin,
        clock: Clock,
        max_entries: u64,
    ) -> Result<Self, SettingsError> {
        if settings.auth_url.is_empty()
            && let Some(www) = &settings.www_authenticate_uri
        {
            settings.auth_url = www.clone();
        }
        let url = settings.auth_url.clone();
        if url.is_empty() {
            return Err(SettingsError("auth_url is not set".to_owned()));
        }
        if !url.starts_with("http://") && !url.starts_with("https://") {
            return Err(SettingsError(format!(
                "auth_url {url:?} is not an http(s) URL"
            )));
        }
        if reqwest::Url::parse(&url).is_err() {
            return Err(SettingsError(format!(
                "auth_url {url:?} is not a valid URL"
            )));
        }
        if settings.username.is_empty() || settings.password.is_empty() {
            return Err(SettingsError(format!(
                "keystone {url}: the service username and password are required"
            )));
        }
        let mut base_url = url.trim_end_matches('/').to_owned();
        if !base_url.ends_with("/v3") {
            base_url.push_str("/v3");
        }
        let www = settings
            .www_authenticate_uri
            .clone()
            .unwrap_or_else(|| url.clone());
        if HeaderValue::from_str(&format!("Keystone uri=\"{www}\"")).is_err() || www.contains('"') {
            return Err(SettingsError(format!(
                "www_authenticate_uri {www:?} cannot be sent in a header"
            )));
        }
        let timeout = settings
            .timeout
            .filter(|t| !t.is_zero())
            .unwrap_or(DEFAULT_TIMEOUT);
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            // Keystone answers token calls directly; a redirect would resend
            // the tokens somewhere else.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent("openkeel-magnum")
            .tls_version_min(reqwest::tls::Version::TLS_1_2)
            .pool_max_idle_per_host(16)
            // Operator's choice ([keystone_authtoken]/insecure).
            .tls_danger_accept_invalid_certs(settings.insecure);
        if let Some(path) = &settings.cafile {
            let pem = std::fs::read(path)
                .map_err(|e| SettingsError(format!("read cafile {}: {e}", path.display())))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .ok()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| {
                    SettingsError(format!(
                        "cafile {} holds no PEM certificate",
                        path.display()
                    ))
                })?;
            builder = builder.tls_certs_only(certs);
        }
        let client = builder.build().map_err(|e| {
            SettingsError(format!("keystone {url}: HTTP client: {}", error_chain(&e)))
        })?;
        let cache = (settings.token_cache_time >= 0).then(|| TokenCache::new(max_entries));
        let cache_time = u64::try_from(settings.token_cache_time)
            .ok()
            .filter(|s| *s > 0)
            .map(Duration::from_secs);
        Ok(Self {
            inner: Arc::new(Inner {
                settings,
                base_url,
                www_authenticate_uri: Arc::from(www),
                client,
                cache,
                cache_time,
                is_admin,
                clock,
                service: Mutex::new(None),
                cache_hits: Default::default(),
                cache_misses: Default::default(),
            }),
        })
    }

    /// The URI of the `WWW-Authenticate` header of a 401.
    pub fn www_authenticate_uri(&self) -> &str {
        &self.inner.www_authenticate_uri
    }

    /// Authenticates the service user once, so that an unreachable or
    /// misconfigured Keystone is reported at start-up.
    pub async fn check(&self) -> Result<(), CheckError> {
        match self.inner.service_token(true, None).await {
            Ok(_) => Ok(()),
            Err(source) => Err(CheckError {
                url: self.inner.base_url.clone(),
                source,
            }),
        }
    }

    /// Validates the request's `X-Auth-Token` (or `X-Storage-Token`, as
    /// keystonemiddleware also accepts) and returns the caller's context,
    /// with the request id of [`super::REQUEST_ID_HEADER`].
    ///
    /// With `delay_auth_decision`, a missing, invalid or unverifiable token
    /// gives a context without identity (no user, project or role, the token
    /// as sent), as Magnum's `ContextHook` builds it from the request that
    /// keystonemiddleware passes on with `X-Identity-Status: Invalid`; the
    /// policy then refuses what needs an identity.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<RequestContext, AuthError> {
        let request_id = request_id(headers);
        let outcome = match self.inner.request_token(headers) {
            Ok(token) => self
                .inner
                .identity(&token)
                .await
                .map(|id| id.context_for(request_id.clone(), token)),
            Err(e) => Err(e),
        };
        match outcome {
            Err(_) if self.inner.settings.delay_auth_decision => {
                Ok(self.inner.anonymous(headers, request_id))
            }
            other => other,
        }
    }

    /// The service token currently held (tests).
    #[cfg(test)]
    pub(crate) async fn current_service_token(&self) -> Option<String> {
        self.inner
            .service
            .lock()
            .await
            .as_ref()
            .map(|s| s.token.clone())
    }

    #[cfg(test)]
    pub(crate) fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    #[cfg(test)]
    pub(crate) async fn cache_len(&self) -> u64 {
        match &self.inner.cache {
            Some(c) => c.len().await,
            None => 0,
        }
    }
}

impl Inner {
    fn error(&self, kind: AuthErrorKind, detail: impl Into<String>) -> AuthError {
        AuthError::new(kind, detail, self.www_authenticate_uri.clone())
    }

    /// The user token as keystonemiddleware reads it: `X-Auth-Token`, else
    /// `X-Storage-Token`, stripped of white space.
    fn request_token(&self, headers: &HeaderMap) -> Result<String, AuthError> {
        let value = headers
            .get(X_AUTH_TOKEN)
            .or_else(|| headers.get(X_STORAGE_TOKEN));
        let token = value.map(|v| v.as_bytes().trim_ascii()).unwrap_or_default();
        if token.is_empty() {
            return Err(self.error(AuthErrorKind::MissingToken, ""));
        }
        if token.len() > MAX_TOKEN_LENGTH {
            return Err(self.error(AuthErrorKind::InvalidToken, "token too long"));
        }
        if !token.iter().all(|c| (0x21..=0x7e).contains(c)) {
            // Keystone would answer 404; such bytes cannot even be sent on.
            return Err(self.error(
                AuthErrorKind::InvalidToken,
                "token has characters outside printable ASCII",
            ));
        }
        Ok(String::from_utf8_lossy(token).into_owned())
    }

    /// The context of a request that goes on without an identity
    /// (`delay_auth_decision`).
    fn anonymous(&self, headers: &HeaderMap, request_id: String) -> RequestContext {
        let token = headers
            .get(X_AUTH_TOKEN)
            .or_else(|| headers.get(X_STORAGE_TOKEN))
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        // Deviation: Magnum's roles would be [""] (''.split(',')) and its
        // ids None; here no role and empty ids. Only a rule naming an empty
        // role could tell the difference.
        let mut ctx = RequestContext {
            request_id,
            auth_token: token,
            ..RequestContext::default()
        };
        ctx.is_admin = (self.is_admin)(&ctx);
        ctx
    }

    /// The identity of `token`: from the cache while it holds, else from
    /// Keystone (one call for all concurrent requests with the token).
    async fn identity(&self, token: &str) -> Result<Arc<Identity>, AuthError> {
        let Some(cache) = &self.cache else {
            return self.validate(token).await.map(Arc::new);
        };
        let key = key_of(token);
        if let Some(entry) = cache.get(&key, (self.clock)()).await {
            self.cache_hits.fetch_add(1, Ordering::Relaxed);
            return entry.outcome.clone();
        }
        self.cache_misses.fetch_add(1, Ordering::Relaxed);
        let entry = cache
            .get_or_validate(key, async {
                let outcome = self.validate(token).await;
                let now = (self.clock)();
                match outcome {
                    Ok(id) => Ok(CacheEntry::valid(id, now, self.cache_time)),
                    // Rejections are remembered briefly; Keystone being
                    // unavailable is not remembered at all.
                    Err(e) if e.kind() == AuthErrorKind::InvalidToken => {
                        Ok(CacheEntry::rejected(e, now, self.cache_time))
                    }
                    Err(e) => Err(e),
                }
            })
            .await?;
        entry.outcome.clone()
    }

    /// Asks Keystone about `token` (`GET /v3/auth/tokens`), retrying once
    /// with a new service token when Keystone rejects the current one, as
    /// keystonemiddleware does (the service token was revoked or the fernet
    /// keys rotated).
    async fn validate(&self, token: &str) -> Result<Identity, AuthError> {
        let hash = hash_prefix(&key_of(token));
        let mut stale: Option<String> = None;
        for attempt in 0..2 {
            let service = self.service_token(attempt > 0, stale.as_deref()).await?;
            let mut headers = HeaderMap::new();
            headers.insert(X_AUTH_TOKEN, self.secret_header(&service)?);
            headers.insert(X_SUBJECT_TOKEN, self.secret_header(token)?);
            // Tells Keystone that access rules are understood (they are
            // refused when building the identity), as keystonemiddleware does.
            headers.insert(
                "openstack-identity-access-rules",
                HeaderValue::from_static("1"),
            );
            let (status, body, _) = self
                .call(reqwest::Method::GET, headers, None)
                .await
                .map_err(|e| self.unavailable(&hash, format!("validate token: {e}")))?;
            match status {
                StatusCode::OK => {
                    let id = identity_from_token(&body, &self.is_admin).map_err(|e| {
                        tracing::info!(token_hash = %hash, error = %e, "invalid token contents");
                        self.error(
                            AuthErrorKind::InvalidToken,
                            format!("invalid token contents: {e}"),
                        )
                    })?;
                    // keystonemiddleware: auth_token/__init__.py
                    // (_validate_token) — a token with no validity left is
                    // rejected (will_expire_soon(0)).
                    if id.expires < (self.clock)() {
                        tracing::info!(token_hash = %hash, "token expired");
                        return Err(self.error(AuthErrorKind::InvalidToken, "token expired"));
                    }
                    return Ok(id);
                }
                StatusCode::NOT_FOUND => {
                    tracing::info!(token_hash = %hash, "invalid user token (Keystone: not found)");
                    return Err(self.error(
                        AuthErrorKind::InvalidToken,
                        "token authorization failed (Keystone: not found)",
                    ));
                }
                StatusCode::UNAUTHORIZED if attempt == 0 => {
                    tracing::info!(
                        "identity server rejected the service token; authenticating again"
                    );
                    stale = Some(service);
                }
                StatusCode::UNAUTHORIZED => {
                    return Err(self.unavailable(
                        &hash,
                        "identity server rejected the service token twice".to_owned(),
                    ));
                }
                other => {
                    return Err(self.unavailable(
                        &hash,
                        format!(
                            "bad response code {} while validating token",
                            other.as_u16()
                        ),
                    ));
                }
            }
        }
        Err(self.unavailable(
            &hash,
            "identity server rejected the service token twice".to_owned(),
        ))
    }

    /// A header value holding a token, marked sensitive (never shown by the
    /// HTTP stack's debug output).
    fn secret_header(&self, token: &str) -> Result<HeaderValue, AuthError> {
        let mut v = HeaderValue::from_str(token).map_err(|_| {
            self.error(
                AuthErrorKind::InvalidToken,
                "token cannot be sent in a header",
            )
        })?;
        v.set_sensitive(true);
        Ok(v)
    }

    fn unavailable(&self, token_hash: &str, detail: String) -> AuthError {
        tracing::error!(token_hash = %token_hash, error = %detail, "unable to validate token");
        self.error(AuthErrorKind::KeystoneUnavailable, detail)
    }

    /// The service user's token: authenticating when there is none, when it
    /// expires within [`SERVICE_TOKEN_MARGIN`], or when `force` is set and
    /// the current token is still `stale` (another caller may already have
    /// replaced it; `None` forces a new one in any case).
    async fn service_token(&self, force: bool, stale: Option<&str>) -> Result<String, AuthError> {
        let mut held = self.service.lock().await;
        if let Some(t) = held.as_ref() {
            let fresh = (self.clock)() + SERVICE_TOKEN_MARGIN < t.expires;
            if fresh && (!force || stale.is_some_and(|s| s != t.token)) {
                return Ok(t.token.clone());
            }
        }
        *held = None;
        let user = &self.settings.username;
        let fail = |detail: String| {
            tracing::error!(user = %user, error = %detail, "service user authentication failed");
            self.error(
                AuthErrorKind::KeystoneUnavailable,
                format!("authenticate service user {user}: {detail}"),
            )
        };
        let body = serde_json::to_vec(&self.password_auth()).map_err(|e| fail(e.to_string()))?;
        let (status, body, headers) = self
            .call(reqwest::Method::POST, HeaderMap::new(), Some(body))
            .await
            .map_err(fail)?;
        if status != StatusCode::CREATED && status != StatusCode::OK {
            return Err(fail(format!(
                "Keystone answered {} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or("")
            )));
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            token: AnswerToken,
        }
        #[derive(serde::Deserialize)]
        struct AnswerToken {
            expires_at: Option<String>,
        }
        let token = headers
            .get(X_SUBJECT_TOKEN)
            .and_then(|v| v.to_str().ok())
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let answer: Option<Answer> = serde_json::from_slice(&body).ok();
        let (Some(token), Some(answer)) = (token, answer) else {
            return Err(fail("malformed Keystone answer".to_owned()));
        };
        let expires =
            parse_expiry(answer.token.expires_at.as_deref().unwrap_or("")).map_err(fail)?;
        *held = Some(ServiceToken {
            token: token.clone(),
            expires,
        });
        Ok(token)
    }

    /// The body of the service user's `POST /v3/auth/tokens`.
    fn password_auth(&self) -> serde_json::Value {
        let s = &self.settings;
        fn domain(id: &Option<String>, name: &Option<String>) -> serde_json::Value {
            match (
                id.as_deref().filter(|v| !v.is_empty()),
                name.as_deref().filter(|v| !v.is_empty()),
            ) {
                (Some(id), _) => json!({ "id": id }),
                (None, Some(name)) => json!({ "name": name }),
                (None, None) => json!({ "id": "default" }),
            }
        }
        let mut auth = json!({
            "identity": {
                "methods": ["password"],
                "password": {"user": {
                    "name": s.username,
                    "domain": domain(&s.user_domain_id, &s.user_domain_name),
                    "password": s.password,
                }},
            },
        });
        let project_id = s.project_id.as_deref().filter(|v| !v.is_empty());
        let project_name = s.project_name.as_deref().filter(|v| !v.is_empty());
        let scope = match (project_id, project_name) {
            (Some(id), _) => Some(json!({"project": {"id": id}})),
            (None, Some(name)) => Some(json!({"project": {
                "name": name,
                "domain": domain(&s.project_domain_id, &s.project_domain_name),
            }})),
            (None, None) => None,
        };
        if let (Some(scope), Some(obj)) = (scope, auth.as_object_mut()) {
            obj.insert("scope".to_owned(), scope);
        }
        json!({ "auth": auth })
    }

    /// One bounded call to `<base>/auth/tokens`. The error names the method,
    /// the URL (which never holds a token) and the transport error.
    async fn call(
        &self,
        method: reqwest::Method,
        headers: HeaderMap,
        body: Option<Vec<u8>>,
    ) -> Result<(StatusCode, Vec<u8>, HeaderMap), String> {
        let url = format!("{}/auth/tokens", self.base_url);
        let mut req = self
            .client
            .request(method.clone(), &url)
            .headers(headers)
            .header(http::header::ACCEPT, "application/json");
        if let Some(body) = body {
            req = req
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        let mut resp = req.send().await.map_err(|e| error_chain(&e))?;
        let status = resp.status();
        let headers = std::mem::take(resp.headers_mut());
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| format!("{method} {url}: read answer: {}", error_chain(&e)))?
        {
            if body.len() + chunk.len() > MAX_BODY_SIZE {
                return Err(format!(
                    "{method} {url}: answer larger than {MAX_BODY_SIZE} bytes"
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, body, headers))
    }
}

/// An error and its causes on one line (reqwest's own text stops at "error
/// sending request for url (…)").
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out.replace('\n', " ")
}

#[cfg(test)]
#[path = "keystone_tests.rs"]
mod tests;
