//! The errors of the use cases: a client error Magnum answers with its
//! status and message, a database failure, or another internal failure.

use std::fmt;

use magnum_domain::MagnumError;

use crate::db;
use crate::openstack::LookupError;

/// A result of the use cases.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a use case failed.
#[derive(Debug)]
pub enum Error {
    /// One of Magnum's client errors: the API answers it as it is.
    Magnum(MagnumError),
    /// The database failed (the API answers 500).
    Db(db::Error),
    /// Anything else unexpected (an OpenStack failure, a driver fault in a
    /// synchronous call); the text is for the logs, never for clients.
    Internal(String),
}

impl Error {
    /// The client error, when this is one.
    pub fn magnum(&self) -> Option<&MagnumError> {
        match self {
            Error::Magnum(e) => Some(e),
            _ => None,
        }
    }

    /// An internal failure described by `what`.
    pub fn internal(what: impl fmt::Display) -> Error {
        Error::Internal(what.to_string())
    }

    /// Whether this is the database's "no row matches".
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Db(e) if e.is_not_found())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Magnum(e) => e.fmt(f),
            Error::Db(e) => e.fmt(f),
            Error::Internal(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Magnum(e) => Some(e),
            Error::Db(e) => Some(e),
            Error::Internal(_) => None,
        }
    }
}

impl From<MagnumError> for Error {
    fn from(e: MagnumError) -> Self {
        Error::Magnum(e)
    }
}

impl From<db::Error> for Error {
    fn from(e: db::Error) -> Self {
        Error::Db(e)
    }
}

impl From<LookupError> for Error {
    /// Magnum's client errors of a lookup stay client errors; an unexpected
    /// OpenStack failure is internal.
    fn from(e: LookupError) -> Self {
        match e {
            LookupError::Client(e) => Error::Magnum(e),
            LookupError::Failed(e) => Error::Internal(e.to_string()),
        }
    }
}

impl db::Retryable for Error {
    fn is_retryable(&self) -> bool {
        matches!(self, Error::Db(e) if e.is_retryable())
    }
}
