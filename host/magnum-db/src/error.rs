//! The errors of the database layer. Callers map `NotFound`, `Duplicate`,
//! `InvalidSortKey` and `InvalidSortDir` to Magnum's client errors; the
//! others are internal (500) or start-up failures.

/// A result of the database layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error of the database layer. Messages never contain a password.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No row matches (get, update, delete, or an unknown pagination
    /// marker). The text says what was looked for.
    #[error("{0}: row not found")]
    NotFound(String),
    /// A write violates a unique constraint.
    #[error("{what}: duplicate row: {detail}")]
    Duplicate {
        /// The statement (`insert nodegroup`).
        what: String,
        /// The database's message.
        detail: String,
    },
    /// A `sort_key` that is not a column of the listed table. The API
    /// renders it as 400 `The sort_key value "<k>" is an invalid field for
    /// sorting`.
    #[error("the sort_key value \"{0}\" is an invalid field for sorting")]
    InvalidSortKey(String),
    /// A sort direction other than `asc`/`desc`.
    #[error("invalid sort direction: {0}")]
    InvalidSortDir(String),
    /// A [`super::Scope`] that names neither a project, a user nor all
    /// projects (a programming error that would otherwise leak rows).
    #[error("empty scope")]
    EmptyScope,
    /// A statement failed.
    #[error("{context}: {source}{code}")]
    Sql {
        /// What was being done (`select cluster`).
        context: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
        /// ` (code 1213)` / ` (SQLSTATE 40P01)`, or empty.
        code: String,
        /// A deadlock, lock wait timeout, serialisation failure or busy
        /// SQLite database: the transaction can run again from the start.
        retryable: bool,
    },
    /// An update named a column the table does not have (a programming
    /// error).
    #[error("update {table}: unknown column {column:?}")]
    UnknownColumn {
        /// The table.
        table: &'static str,
        /// The name given.
        column: String,
    },
    /// A column held a value the row type cannot carry.
    #[error("{0}")]
    Decode(String),
    /// The target is not usable (dialect, URL).
    #[error("{0}")]
    Config(String),
    /// The database did not answer; the text names it and the cause.
    #[error("{0}")]
    Connect(String),
    /// The schema is not what this operation needs; the text says what to
    /// do.
    #[error("{0}")]
    Schema(String),
    /// `db adopt` of a database at another Alembic revision than Magnum
    /// 23.0.0's head.
    #[error(
        "unexpected Alembic revision: database is at Alembic revision {found}, expected {expected}: upgrade it with magnum-db-manage upgrade (Magnum 23.0.0) first, then run db adopt"
    )]
    AlembicRevision {
        /// The revision(s) found, comma-separated.
        found: String,
        /// [`super::ALEMBIC_HEAD`].
        expected: &'static str,
    },
}

impl Error {
    /// Whether no row matched.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound(_))
    }

    /// Whether a unique constraint refused the write.
    pub fn is_duplicate(&self) -> bool {
        matches!(self, Error::Duplicate { .. })
    }
}

/// Errors that say whether the transaction that failed with them can run
/// again. [`super::Db::in_tx`] retries only those.
pub trait Retryable {
    /// A deadlock, lock wait timeout, serialisation failure or busy SQLite
    /// database.
    fn is_retryable(&self) -> bool;
}

impl Retryable for Error {
    fn is_retryable(&self) -> bool {
        matches!(
            self,
            Error::Sql {
                retryable: true,
                ..
            }
        )
    }
}
