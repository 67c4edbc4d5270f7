//! How a use case fails: a client error of Magnum's catalogue, answered with
//! its status and message, or anything else, which the API answers with
//! Magnum's generic 500 after logging it once.

use magnum_domain::MagnumError;

use crate::db;

/// The error of a use case.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error the caller sees as it is (status and message of Magnum's
    /// exception, 5xx included: `CertificatesToClusterFailed` is a 500 with
    /// its own message in Magnum too).
    #[error("{0}")]
    Client(MagnumError),
    /// An unexpected failure (database, store, driver fault). Its text is
    /// for the log, never for the client, and carries no secret.
    #[error("{0:#}")]
    Internal(anyhow::Error),
}

/// A result of a use case.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<MagnumError> for Error {
    fn from(e: MagnumError) -> Self {
        Error::Client(e)
    }
}

impl From<db::Error> for Error {
    fn from(e: db::Error) -> Self {
        Error::Internal(e.into())
    }
}

impl Error {
    /// An internal error with `context` before its cause.
    pub fn internal(context: impl std::fmt::Display, cause: impl std::fmt::Display) -> Error {
        Error::Internal(anyhow::anyhow!("{context}: {cause}"))
    }

    /// The client error, if it is one.
    pub fn client(&self) -> Option<&MagnumError> {
        match self {
            Error::Client(e) => Some(e),
            Error::Internal(_) => None,
        }
    }
}

impl db::Retryable for Error {
    fn is_retryable(&self) -> bool {
        match self {
            Error::Internal(e) => e
                .downcast_ref::<db::Error>()
                .is_some_and(db::Retryable::is_retryable),
            Error::Client(_) => false,
        }
    }
}
