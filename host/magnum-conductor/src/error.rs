//! The error of every use case: one of Magnum's client errors (its status
//! and message go back to the caller), or a failure of the database or of
//! another part that the API answers with its generic 500.

use magnum_domain::MagnumError;

use crate::db::{self, Retryable};
use crate::openstack::LookupError;

/// A result of the conductor.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed use case.
///
/// `From` conversions let `?` lift the errors of the parts: a
/// [`MagnumError`] stays a client error, a [`LookupError`] is a client error
/// or a failure, a [`db::Error`] is a failure (map the rows that are
/// Magnum's 404/409 first, see [`super::lookup`]). It is also the error of
/// [`db::Db::in_tx`] closures: a client error returned inside a
/// transaction rolls it back and reaches the caller unchanged, and
/// deadlocks are retried.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Magnum client error, answered as it is.
    #[error(transparent)]
    Client(MagnumError),
    /// A database failure.
    #[error(transparent)]
    Db(#[from] db::Error),
    /// Any other unexpected failure (an OpenStack service that failed, a
    /// driver host fault), with its context.
    #[error("{0:#}")]
    Internal(anyhow::Error),
}

impl Error {
    /// The client error to answer with, or the failure behind a generic
    /// 500 (its cause kept for the log). The layers above see a database
    /// failure only this way.
    pub fn into_answer(self) -> std::result::Result<MagnumError, anyhow::Error> {
        match self {
            Error::Client(e) => Ok(e),
            Error::Db(e) => Err(e.into()),
            Error::Internal(e) => Err(e),
        }
    }

    /// The client error, when this is one.
    pub fn client(&self) -> Option<&MagnumError> {
        match self {
            Error::Client(e) => Some(e),
            _ => None,
        }
    }
}

impl From<MagnumError> for Error {
    fn from(e: MagnumError) -> Self {
        Error::Client(e)
    }
}

impl From<LookupError> for Error {
    fn from(e: LookupError) -> Self {
        match e {
            LookupError::Client(e) => Error::Client(e),
            LookupError::Failed(e) => Error::Internal(e.into()),
        }
    }
}

impl From<anyhow::Error> for Error {
    fn from(e: anyhow::Error) -> Self {
        Error::Internal(e)
    }
}

impl Retryable for Error {
    fn is_retryable(&self) -> bool {
        matches!(self, Error::Db(e) if e.is_retryable())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_errors_stay_client_errors_and_only_database_deadlocks_retry() {
        let e = Error::from(MagnumError::cluster_template_not_found("x"));
        assert_eq!(e.client().map(|m| m.status), Some(404));
        assert!(!e.is_retryable());
        let e = Error::from(LookupError::Client(MagnumError::image_not_found("i")));
        assert_eq!(
            e.client().map(|m| m.message.as_str()),
            Some("Image i could not be found.")
        );
        let e = Error::from(db::Error::NotFound("select cluster".into()));
        assert!(e.client().is_none());
        assert!(!e.is_retryable());
        assert_eq!(e.to_string(), "select cluster: row not found");
    }
}
