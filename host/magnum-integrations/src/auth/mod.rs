//! Authentication of API requests: the caller's [`RequestContext`], as
//! keystonemiddleware's `auth_token` filter and Magnum's `ContextHook` build
//! it together for the Python service.
//!
//! Two authenticators exist ([`Authenticator`]):
//!
//! - [`Keystone`] validates the user's `X-Auth-Token` (or `X-Storage-Token`)
//!   with `GET /v3/auth/tokens`, using a token of the service user obtained
//!   with password authentication (`[keystone_authtoken]` username, password,
//!   project, domains). The token body gives the user, the project, domain or
//!   system scope, the roles and the catalog.
//! - [`NoAuth`] is the development mode of `all-in-one`: the identity is read
//!   from the headers keystonemiddleware would have set.
//!
//! # Keystone behaviour
//!
//! The service token is obtained lazily (or eagerly by [`Keystone::check`],
//! used at start-up) and renewed 30 s before its `expires_at`, and once more
//! when Keystone answers a validation with 401 (the service token was revoked
//! or the fernet keys rotated), as keystonemiddleware retries once. A second
//! 401, any other unexpected status, and transport errors make Keystone
//! unavailable: 503, as keystonemiddleware raises `HTTPServiceUnavailable`.
//! Keystone's 404 (unknown, malformed or revoked token) and an `expires_at` in
//! the past make the token invalid, a missing token is missing: both 401.
//! With `delay_auth_decision` none of these is answered: the request goes on
//! without an identity, as keystonemiddleware passes it to Magnum.
//!
//! Tokens of application credentials restricted by access rules are refused,
//! as keystonemiddleware refuses them when `[keystone_authtoken]/service_type`
//! is unset (Magnum's default). A token with bytes outside printable ASCII is
//! refused without asking Keystone (Keystone would answer 404).
//!
//! Not reproduced: `X-Service-Token` (service tokens of service-to-service
//! calls), token bind enforcement, the memcached token cache,
//! `include_service_catalog = false` (the catalog is always read), and version
//! discovery (`auth_url` gets `/v3` appended when it lacks it).
//!
//! # Token cache
//!
//! Validated tokens are cached in memory for `token_cache_time` (default
//! 300 s), never beyond the token's `expires_at`. The key is the SHA-256 of
//! the token; the token itself is not stored. Like keystonemiddleware, a token
//! revoked in Keystone stays accepted until its cache entry ends: operators
//! who need immediate revocation set a short `token_cache_time` (a negative
//! value disables the cache; 0 keeps entries until the token expires, as
//! memcached reads 0). Rejections by Keystone (404) are cached for at most
//! 10 s. The cache holds at most 10,000 entries and evicts the least
//! recently used one. Concurrent validations of one uncached token share one
//! Keystone call.
//!
//! Tokens are never logged (at most the first bytes of their hash) and never
//! part of an error message.

mod cache;
mod error;
mod keystone;
mod noauth;
pub mod responses;
mod token;

#[cfg(test)]
mod fake_keystone;
#[cfg(test)]
mod integration_tests;
#[cfg(test)]
pub(crate) mod keystonetest;
#[cfg(test)]
pub(crate) mod testing;

use std::sync::Arc;

use http::{HeaderMap, HeaderName};
use magnum_domain::RequestContext;

pub use error::{AuthError, AuthErrorKind};
pub use keystone::{
    CheckError, DEFAULT_TIMEOUT, DEFAULT_TOKEN_CACHE_TIME, Keystone, KeystoneSettings,
    SettingsError,
};
pub use noauth::{
    NOAUTH_DOMAIN_ID, NOAUTH_DOMAIN_NAME, NOAUTH_PROJECT_ID, NOAUTH_PROJECT_NAME, NOAUTH_ROLES,
    NOAUTH_USER_ID, NOAUTH_USER_NAME, NoAuth,
};

/// The `context_is_admin` rule of the policy engine, evaluated once per
/// identity, as Magnum evaluates it when it creates a context.
pub type IsAdmin = Arc<dyn Fn(&RequestContext) -> bool + Send + Sync>;

/// The request header in which the request-id layer, which runs before
/// authentication, leaves the request id (the name of the response header
/// oslo.middleware sets). The context's `request_id` is taken from it.
pub const REQUEST_ID_HEADER: &str = "x-openstack-request-id";

/// The authenticator `[DEFAULT]/auth_strategy` chooses. Cheap to clone.
#[derive(Clone, Debug)]
pub enum Authenticator {
    /// `auth_strategy = keystone` (the default).
    Keystone(Keystone),
    /// `auth_strategy = noauth` (forced by `all-in-one`).
    NoAuth(NoAuth),
}

impl Authenticator {
    /// Authenticates one request from its headers. On error, answer with
    /// [`AuthError::into_response`].
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<RequestContext, AuthError> {
        match self {
            Self::Keystone(k) => k.authenticate(headers).await,
            Self::NoAuth(n) => Ok(n.authenticate(headers)),
        }
    }
}

/// The request id set by the pipeline, or empty.
fn request_id(headers: &HeaderMap) -> String {
    const NAME: HeaderName = HeaderName::from_static(REQUEST_ID_HEADER);
    headers
        .get(NAME)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}
