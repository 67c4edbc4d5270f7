//! The error of a use case: Magnum's client error, or an unexpected
//! failure (the database, a driver fault) that the API answers with its
//! generic 500 and logs.

use magnum_domain::MagnumError;

use crate::db;

/// How a use case failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A client-visible error, answered with Magnum's status and message.
    #[error("{0}")]
    Client(MagnumError),
    /// The database failed (never a client's fault).
    #[error(transparent)]
    Db(#[from] db::Error),
    /// Anything else unexpected; the text is for the log only.
    #[error("{0}")]
    Internal(String),
}

impl From<MagnumError> for Error {
    fn from(e: MagnumError) -> Self {
        Error::Client(e)
    }
}

impl db::Retryable for Error {
    fn is_retryable(&self) -> bool {
        matches!(self, Error::Db(e) if e.is_retryable())
    }
}

impl Error {
    /// The client error, if this is one.
    pub fn client(&self) -> Option<&MagnumError> {
        match self {
            Error::Client(e) => Some(e),
            _ => None,
        }
    }
}

/// A result of a use case.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Maps the pagination errors of a list to Magnum's answers: an unknown
/// sort key or direction is a 400, an unknown marker `not_found(marker)`;
/// other errors stay internal.
pub(crate) fn list_error(
    e: db::Error,
    marker: Option<&str>,
    not_found: impl FnOnce(&str) -> MagnumError,
) -> Error {
    match (e, marker) {
        (db::Error::InvalidSortKey(k), _) => MagnumError::invalid_sort_key(&k).into(),
        (db::Error::InvalidSortDir(d), _) => MagnumError::invalid_sort_dir(&d).into(),
        (db::Error::NotFound(_), Some(m)) => not_found(m).into(),
        (e, _) => Error::Db(e),
    }
}
