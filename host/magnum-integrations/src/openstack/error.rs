//! The errors of the OpenStack calls that are not Magnum's client errors, and
//! of the settings.

use std::time::Duration;

use magnum_domain::MagnumError;

/// What went wrong with a call, when the answer is not one Magnum turns into
/// a client error. Never holds a token, a password, a secret or a response
/// body (bodies may echo what was sent).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// The service answered with an unexpected status.
    #[error("HTTP {0}")]
    Status(u16),
    /// No answer within the configured timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The connection failed (refused, reset, TLS…).
    #[error("{0}")]
    Transport(String),
    /// The answer is not what the API documents.
    #[error("unexpected answer: {0}")]
    Decode(String),
    /// The service has no usable endpoint (keystoneauth's message).
    #[error("{0}")]
    Endpoint(String),
    /// The call needs the service's own credentials and none are configured.
    #[error("no service credentials are configured")]
    NoServiceCredentials,
    /// The caller has none of the roles an application credential may get:
    /// a credential without an explicit role list would inherit every role
    /// of the caller, admin included.
    #[error("the caller has none of the roles an application credential may get")]
    NoGrantableRole,
    /// The catalog has no load-balancer (Octavia) endpoint: a cloud without
    /// Octavia has no load balancers to clean up.
    #[error("no load-balancer service in the catalog")]
    NoLoadBalancerService,
    /// The call was asked with arguments it cannot be made with.
    #[error("{0}")]
    Invalid(String),
}

/// A failed OpenStack call: what was being done (`glance: list images`) and
/// why. The conductor answers it with a 500 or moves the resource to
/// `*_FAILED`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{context}: {kind}")]
pub struct OpenStackError {
    context: String,
    kind: ErrorKind,
}

impl OpenStackError {
    pub fn new(context: impl Into<String>, kind: ErrorKind) -> Self {
        Self {
            context: context.into(),
            kind,
        }
    }

    /// Why the call failed.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The HTTP status of the answer, when one came.
    pub fn status(&self) -> Option<u16> {
        match self.kind {
            ErrorKind::Status(s) => Some(s),
            _ => None,
        }
    }

    /// Whether the service refused the call (403).
    pub fn is_forbidden(&self) -> bool {
        self.status() == Some(403)
    }

    /// Whether the call timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self.kind, ErrorKind::Timeout(_))
    }
}

/// The error of a lookup ([`super::Lookup`]): Magnum's client error (its
/// status and message go back to the caller), or a failure Magnum answers
/// with a 500.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// One of Magnum's client errors (`ImageNotFound`, `AuthorizationFailure`…).
    #[error(transparent)]
    Client(MagnumError),
    /// An unexpected failure (a 5xx answer, a timeout, an undecodable body).
    #[error(transparent)]
    Failed(OpenStackError),
}

impl From<MagnumError> for LookupError {
    fn from(e: MagnumError) -> Self {
        Self::Client(e)
    }
}

impl From<OpenStackError> for LookupError {
    fn from(e: OpenStackError) -> Self {
        Self::Failed(e)
    }
}

/// Settings the clients refuse: the text names the option or file and never
/// holds a password.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(pub(crate) String);
