//! The dialect-neutral way statements run: a statement is neutral SQL (`?`
//! placeholders, double-quoted identifiers) with [`Arg`] values, and a read
//! returns [`Cell`]s decoded by the [`Kind`] the caller expects of each
//! column. The dialect modules translate both ways; this module picks the
//! pool or the transaction a statement runs on.

use chrono::NaiveDateTime;

use super::target::DbTarget;
use super::{Dialect, Error, Result, driver, mysql, postgres, sqlite};

/// The type of a column as the row types see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `int(11)` / `integer` (and `COUNT(*)`).
    Int,
    /// `varchar(n)` / `text`, JSON columns included.
    Text,
    /// `tinyint(1)` / `boolean`.
    Bool,
    /// `datetime` / `timestamp without time zone` (naive UTC).
    Time,
}

/// A value bound to a placeholder. `Null` carries the column's kind, which
/// PostgreSQL needs to type the parameter.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Arg {
    Null(Kind),
    Int(i64),
    Text(String),
    Bool(bool),
    Time(NaiveDateTime),
}

impl From<&str> for Arg {
    fn from(s: &str) -> Arg {
        Arg::Text(s.to_string())
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Arg {
        Arg::Text(s)
    }
}

impl From<&String> for Arg {
    fn from(s: &String) -> Arg {
        Arg::Text(s.clone())
    }
}

impl From<i64> for Arg {
    fn from(v: i64) -> Arg {
        Arg::Int(v)
    }
}

impl From<bool> for Arg {
    fn from(v: bool) -> Arg {
        Arg::Bool(v)
    }
}

/// A value read from a column.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Text(String),
    Bool(bool),
    Time(NaiveDateTime),
}

/// The outcome of a write.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Done {
    /// Rows matched (MariaDB reports found rows, not changed ones).
    pub rows_affected: u64,
    /// The id the statement generated (MariaDB, SQLite).
    pub last_insert_id: Option<i64>,
}

/// The connection pools of an open database.
pub(crate) enum Pools {
    MySql(sqlx::MySqlPool),
    Postgres(sqlx::PgPool),
    /// A SQLite file has a read pool and a single writer connection (SQLite
    /// allows one write transaction at a time; queueing in the pool is
    /// cheaper than `SQLITE_BUSY` retries). In memory, both are the same
    /// one-connection pool.
    Sqlite {
        read: sqlx::SqlitePool,
        write: sqlx::SqlitePool,
    },
}

impl Pools {
    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Pools::MySql(_) => Dialect::MySql,
            Pools::Postgres(_) => Dialect::Postgres,
            Pools::Sqlite { .. } => Dialect::Sqlite,
        }
    }

    /// The connections open in each pool: (pool, in use, idle). MySQL and
    /// PostgreSQL have one pool, `main`; SQLite a `read` and a `write`
    /// pool (one and the same for an in-memory database).
    pub(crate) fn connections(&self) -> Vec<(&'static str, usize, usize)> {
        fn of<D: sqlx::Database>(
            name: &'static str,
            p: &sqlx::Pool<D>,
        ) -> (&'static str, usize, usize) {
            let idle = p.num_idle();
            let size = usize::try_from(p.size()).unwrap_or(usize::MAX);
            (name, size.saturating_sub(idle), idle)
        }
        match self {
            Pools::MySql(p) => vec![of("main", p)],
            Pools::Postgres(p) => vec![of("main", p)],
            Pools::Sqlite { read, write } => vec![of("read", read), of("write", write)],
        }
    }

    pub(crate) async fn close(&self) {
        match self {
            Pools::MySql(p) => p.close().await,
            Pools::Postgres(p) => p.close().await,
            Pools::Sqlite { read, write } => {
                read.close().await;
                write.close().await;
            }
        }
    }

    /// Begins a transaction: on SQLite with `BEGIN IMMEDIATE` on the writer,
    /// so that a transaction that reads then writes cannot fail to upgrade
    /// its lock (SQLite has no row locks; the write lock stands in for
    /// `SELECT … FOR UPDATE`).
    pub(crate) async fn begin(&self) -> std::result::Result<TxConn, sqlx::Error> {
        let started = std::time::Instant::now();
        let tx = match self {
            Pools::MySql(p) => TxConn::MySql(p.begin().await?),
            Pools::Postgres(p) => TxConn::Postgres(p.begin().await?),
            Pools::Sqlite { write, .. } => {
                TxConn::Sqlite(write.begin_with("BEGIN IMMEDIATE").await?)
            }
        };
        super::count_acquisition(started.elapsed());
        Ok(tx)
    }
}

/// An open transaction.
pub(crate) enum TxConn {
    MySql(sqlx::Transaction<'static, sqlx::MySql>),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
}

impl TxConn {
    pub(crate) async fn commit(self) -> std::result::Result<(), sqlx::Error> {
        match self {
            TxConn::MySql(t) => t.commit().await,
            TxConn::Postgres(t) => t.commit().await,
            TxConn::Sqlite(t) => t.commit().await,
        }
    }

    pub(crate) async fn rollback(self) -> std::result::Result<(), sqlx::Error> {
        match self {
            TxConn::MySql(t) => t.rollback().await,
            TxConn::Postgres(t) => t.rollback().await,
            TxConn::Sqlite(t) => t.rollback().await,
        }
    }
}

/// One connection taken from a pool for several reads in a row: one
/// acquisition instead of one per statement. On SQLite it comes from the
/// read pool.
pub(crate) enum PoolConn {
    MySql(sqlx::pool::PoolConnection<sqlx::MySql>),
    Postgres(sqlx::pool::PoolConnection<sqlx::Postgres>),
    Sqlite(sqlx::pool::PoolConnection<sqlx::Sqlite>),
}

impl Pools {
    /// A connection for reads (on SQLite one of the read pool).
    pub(crate) async fn acquire_read(&self) -> std::result::Result<PoolConn, sqlx::Error> {
        let started = std::time::Instant::now();
        let conn = match self {
            Pools::MySql(p) => PoolConn::MySql(p.acquire().await?),
            Pools::Postgres(p) => PoolConn::Postgres(p.acquire().await?),
            Pools::Sqlite { read, .. } => PoolConn::Sqlite(read.acquire().await?),
        };
        super::count_acquisition(started.elapsed());
        Ok(conn)
    }
}

/// A connection a statement runs on directly: one held from a pool or a
/// transaction's.
enum Direct<'c> {
    MySql(&'c mut sqlx::MySqlConnection),
    Postgres(&'c mut sqlx::PgConnection),
    Sqlite(&'c mut sqlx::SqliteConnection),
}

impl PoolConn {
    fn direct(&mut self) -> Direct<'_> {
        match self {
            PoolConn::MySql(c) => Direct::MySql(c),
            PoolConn::Postgres(c) => Direct::Postgres(c),
            PoolConn::Sqlite(c) => Direct::Sqlite(c),
        }
    }
}

impl TxConn {
    fn direct(&mut self) -> Direct<'_> {
        match self {
            TxConn::MySql(t) => Direct::MySql(t),
            TxConn::Postgres(t) => Direct::Postgres(t),
            TxConn::Sqlite(t) => Direct::Sqlite(t),
        }
    }
}

/// What a [`Target`] runs a statement on: the pool, or one connection.
enum On<'a> {
    Pool(&'a Pools),
    Direct(Direct<'a>),
}

/// Where a statement runs: on the pool (each statement on its own), on one
/// connection held for several reads, or in a transaction.
pub(crate) enum Target<'a> {
    Pool(&'a Pools),
    Conn(&'a mut PoolConn),
    Tx(&'a mut TxConn),
}

impl Target<'_> {
    fn on(&mut self) -> On<'_> {
        match self {
            Target::Pool(p) => On::Pool(p),
            Target::Conn(c) => On::Direct(c.direct()),
            Target::Tx(t) => On::Direct(t.direct()),
        }
    }

    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Target::Pool(p) => p.dialect(),
            Target::Conn(PoolConn::MySql(_)) => Dialect::MySql,
            Target::Conn(PoolConn::Postgres(_)) => Dialect::Postgres,
            Target::Conn(PoolConn::Sqlite(_)) => Dialect::Sqlite,
            Target::Tx(TxConn::MySql(_)) => Dialect::MySql,
            Target::Tx(TxConn::Postgres(_)) => Dialect::Postgres,
            Target::Tx(TxConn::Sqlite(_)) => Dialect::Sqlite,
        }
    }

    /// Runs a read and returns its cells row after row, `kinds.len()` per
    /// row.
    pub(crate) async fn fetch(
        &mut self,
        sql: &str,
        args: Vec<Arg>,
        kinds: &[Kind],
    ) -> std::result::Result<Vec<Cell>, sqlx::Error> {
        match self.on() {
            On::Pool(Pools::MySql(p)) => driver::fetch(p, sql, args, kinds).await,
            On::Pool(Pools::Postgres(p)) => driver::fetch(p, sql, args, kinds).await,
            On::Pool(Pools::Sqlite { read, .. }) => driver::fetch(read, sql, args, kinds).await,
            On::Direct(Direct::MySql(c)) => driver::fetch(c, sql, args, kinds).await,
            On::Direct(Direct::Postgres(c)) => driver::fetch(c, sql, args, kinds).await,
            On::Direct(Direct::Sqlite(c)) => driver::fetch(c, sql, args, kinds).await,
        }
    }

    /// Runs a write.
    pub(crate) async fn execute(
        &mut self,
        sql: &str,
        args: Vec<Arg>,
    ) -> std::result::Result<Done, sqlx::Error> {
        match self.on() {
            On::Pool(Pools::MySql(p)) => driver::execute(p, sql, args).await,
            On::Pool(Pools::Postgres(p)) => driver::execute(p, sql, args).await,
            On::Pool(Pools::Sqlite { write, .. }) => driver::execute(write, sql, args).await,
            On::Direct(Direct::MySql(c)) => driver::execute(c, sql, args).await,
            On::Direct(Direct::Postgres(c)) => driver::execute(c, sql, args).await,
            On::Direct(Direct::Sqlite(c)) => driver::execute(c, sql, args).await,
        }
    }

    /// Runs one statement as it is (no placeholders, no rewriting), with
    /// the simple query protocol: migration DDL and dump files.
    pub(crate) async fn execute_raw(&mut self, sql: &str) -> std::result::Result<(), sqlx::Error> {
        let sql = sqlx::AssertSqlSafe(sql.to_string());
        match self.on() {
            On::Pool(Pools::MySql(p)) => sqlx::raw_sql(sql).execute(p).await.map(drop),
            On::Pool(Pools::Postgres(p)) => sqlx::raw_sql(sql).execute(p).await.map(drop),
            On::Pool(Pools::Sqlite { write, .. }) => {
                sqlx::raw_sql(sql).execute(write).await.map(drop)
            }
            On::Direct(Direct::MySql(c)) => sqlx::raw_sql(sql).execute(c).await.map(drop),
            On::Direct(Direct::Postgres(c)) => sqlx::raw_sql(sql).execute(c).await.map(drop),
            On::Direct(Direct::Sqlite(c)) => sqlx::raw_sql(sql).execute(c).await.map(drop),
        }
    }
}

/// The dialect-specific pieces of SQL; each dialect module defines one.
pub(crate) struct DialectSql {
    /// The row-locking suffix of a read in a transaction.
    pub for_update: &'static str,
    /// Counts the tables named by the parameter in the current database.
    pub table_exists: &'static str,
    /// `(name, type, IS_NULLABLE-like 'YES'/'NO')` of the table named by the
    /// parameter, in column order, all as text.
    pub columns: &'static str,
    /// Creates our schema version table.
    pub version_table_ddl: &'static str,
    /// Compares a name column with a parameter the way MariaDB's
    /// `*_general_ci` collations do.
    pub name_equals: fn(col: &str) -> String,
    /// Orders by a column with NULLs as the smallest value.
    pub order_term: fn(col: &str, desc: bool) -> String,
    /// An integer sum that is 0 over no rows.
    pub sum: fn(col: &str) -> String,
    /// `INSERT … RETURNING id` instead of the driver's last insert id.
    pub returning_id: bool,
    /// Whether timestamps keep microseconds (else whole seconds).
    pub microseconds: bool,
}

impl Dialect {
    /// The SQL differences of the dialect.
    pub(crate) fn sql(self) -> &'static DialectSql {
        match self {
            Dialect::MySql => &mysql::SQL,
            Dialect::Postgres => &postgres::SQL,
            Dialect::Sqlite => &sqlite::SQL,
        }
    }

    /// Cuts `t` to what the dialect's datetime columns keep, so that the
    /// struct a caller holds after a write equals what a read returns:
    /// MariaDB `datetime` keeps whole seconds, the others microseconds.
    pub(crate) fn trunc_time(self, t: NaiveDateTime) -> NaiveDateTime {
        use chrono::{DurationRound, TimeDelta};
        let unit = if self.sql().microseconds {
            TimeDelta::microseconds(1)
        } else {
            TimeDelta::seconds(1)
        };
        t.duration_trunc(unit).unwrap_or(t)
    }

    /// Classifies a driver error: (retryable, duplicate, code suffix).
    pub(crate) fn classify(self, err: &sqlx::Error) -> Classified {
        match self {
            Dialect::MySql => mysql::classify(err),
            Dialect::Postgres => postgres::classify(err),
            Dialect::Sqlite => sqlite::classify(err),
        }
    }

    /// Wraps a driver error with what was being done.
    pub(crate) fn err(self, context: impl Into<String>, source: sqlx::Error) -> Error {
        let c = self.classify(&source);
        Error::Sql {
            context: context.into(),
            source,
            code: c.code,
            retryable: c.retryable,
        }
    }

    /// [`Dialect::err`] for a write: a unique-constraint violation becomes
    /// [`Error::Duplicate`].
    pub(crate) fn write_err(self, context: impl Into<String>, source: sqlx::Error) -> Error {
        let c = self.classify(&source);
        if c.duplicate {
            return Error::Duplicate {
                what: context.into(),
                detail: format!("{source}{}", c.code),
            };
        }
        Error::Sql {
            context: context.into(),
            source,
            code: c.code,
            retryable: c.retryable,
        }
    }
}

/// What a dialect says about a driver error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Classified {
    pub retryable: bool,
    pub duplicate: bool,
    pub code: String,
}

/// Opens the pools of `target` and checks that the database answers.
pub(crate) async fn open(target: &DbTarget) -> Result<Pools> {
    let scheme_ok = match target.dialect {
        Dialect::MySql => target.url.starts_with("mysql:") || target.url.starts_with("mariadb:"),
        Dialect::Postgres => {
            target.url.starts_with("postgres:") || target.url.starts_with("postgresql:")
        }
        Dialect::Sqlite => target.url.starts_with("sqlite:"),
    };
    if !scheme_ok {
        return Err(Error::Config(format!(
            "the {} database URL {} does not start with {}:",
            target.dialect,
            target.redacted_url(),
            target.dialect
        )));
    }
    match target.dialect {
        Dialect::MySql => mysql::open(target).await,
        Dialect::Postgres => postgres::open(target).await,
        Dialect::Sqlite => sqlite::open(target).await,
    }
}

/// Opens one connection of `options` and closes it: the connection check
/// of [`super::Db::open`], which reports the driver's cause (a pool only
/// says that it timed out).
pub(crate) async fn probe<C: sqlx::Connection>(
    target: &DbTarget,
    place: &str,
    options: &<C as sqlx::Connection>::Options,
) -> Result<()> {
    match tokio::time::timeout(target.acquire_timeout, C::connect_with(options)).await {
        Err(_) => Err(connect_error(
            target,
            place,
            &format!("timed out after {:?}", target.acquire_timeout),
        )),
        Ok(Err(e)) => Err(connect_error(target, place, &cause(&e))),
        Ok(Ok(conn)) => {
            // The check is done; a failing close does not matter.
            let _ = conn.close().await;
            Ok(())
        }
    }
}

fn cause(err: &sqlx::Error) -> String {
    match err {
        sqlx::Error::Io(e) => e.to_string(),
        other => other.to_string(),
    }
}

/// The message of a failed connection check: the dialect, where, and the
/// cause, without the password.
pub(crate) fn connect_error(target: &DbTarget, place: &str, cause: &str) -> Error {
    Error::Connect(super::target::redact(
        &format!(
            "cannot connect to {} database {place}: {cause}",
            target.dialect
        ),
        &target.url,
    ))
}
