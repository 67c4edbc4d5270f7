//! Why an authentication failed, and the answer the API gives for it.

use std::fmt;
use std::sync::Arc;

use axum::response::Response;
use http::{HeaderMap, StatusCode};

use super::responses;

/// The three ways an authentication fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthErrorKind {
    /// The request carried no token (401).
    MissingToken,
    /// The token was rejected: unknown, malformed, revoked or expired (401).
    InvalidToken,
    /// The token could not be validated because Keystone could not be
    /// reached or refused the service credentials (503).
    KeystoneUnavailable,
}

impl AuthErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::MissingToken => "missing token",
            Self::InvalidToken => "invalid token",
            Self::KeystoneUnavailable => "keystone unavailable",
        }
    }
}

/// An authentication failure. Its text says why in words that never include
/// a token or a password; [`AuthError::into_response`] is the answer.
#[derive(Clone, Debug)]
pub struct AuthError {
    kind: AuthErrorKind,
    detail: String,
    www_authenticate_uri: Arc<str>,
}

impl AuthError {
    pub(crate) fn new(
        kind: AuthErrorKind,
        detail: impl Into<String>,
        www_authenticate_uri: Arc<str>,
    ) -> Self {
        Self {
            kind,
            detail: detail.into(),
            www_authenticate_uri,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> AuthErrorKind {
        self.kind
    }

    /// The status the API answers with: 503 when Keystone is unavailable (as
    /// keystonemiddleware raises `HTTPServiceUnavailable`), 401 otherwise.
    pub fn status(&self) -> StatusCode {
        match self.kind {
            AuthErrorKind::KeystoneUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            AuthErrorKind::MissingToken | AuthErrorKind::InvalidToken => StatusCode::UNAUTHORIZED,
        }
    }

    /// The URI of the `WWW-Authenticate` header of the 401.
    pub fn www_authenticate_uri(&self) -> &str {
        &self.www_authenticate_uri
    }

    /// keystonemiddleware's answer: [`responses::unauthorized`] for a missing
    /// or invalid token, [`responses::service_unavailable`] (which reads the
    /// request's `Accept`) when Keystone is unavailable.
    pub fn into_response(self, request_headers: &HeaderMap) -> Response {
        match self.kind {
            AuthErrorKind::KeystoneUnavailable => responses::service_unavailable(request_headers),
            AuthErrorKind::MissingToken | AuthErrorKind::InvalidToken => {
                responses::unauthorized(&self.www_authenticate_uri)
            }
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.as_str())?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for AuthError {}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::WWW_AUTHENTICATE;

    // Go: TestWriteErrorUnauthorized and the 503 half of
    // TestWriteServiceUnavailable (WriteError picks the answer by kind).
    #[test]
    fn each_kind_has_its_answer() {
        let uri: Arc<str> = Arc::from("http://ks");
        for kind in [AuthErrorKind::MissingToken, AuthErrorKind::InvalidToken] {
            let err = AuthError::new(kind, "x", uri.clone());
            assert_eq!(err.status(), StatusCode::UNAUTHORIZED);
            let resp = err.into_response(&HeaderMap::new());
            assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{kind:?}");
            assert_eq!(
                resp.headers()[WWW_AUTHENTICATE],
                r#"Keystone uri="http://ks""#
            );
        }
        let err = AuthError::new(AuthErrorKind::KeystoneUnavailable, "", uri);
        assert_eq!(err.status(), StatusCode::SERVICE_UNAVAILABLE);
        let resp = err.into_response(&HeaderMap::new());
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(resp.headers().get(WWW_AUTHENTICATE).is_none());
    }

    #[test]
    fn display_is_kind_then_detail() {
        let uri: Arc<str> = Arc::from("http://ks");
        assert_eq!(
            AuthError::new(AuthErrorKind::MissingToken, "", uri.clone()).to_string(),
            "missing token"
        );
        assert_eq!(
            AuthError::new(AuthErrorKind::InvalidToken, "token expired", uri).to_string(),
            "invalid token: token expired"
        );
    }
}
