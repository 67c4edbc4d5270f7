//! What the three dialect modules share of their sqlx drivers: binding
//! [`Arg`]s, decoding [`Cell`]s, running a statement with both, and the
//! pool settings of a [`DbTarget`]. Each dialect module implements
//! [`Driver`] for its database with only what differs there (placeholders,
//! integer widths, SQLite's text timestamps, the id a write reports).

use chrono::NaiveDateTime;
use sqlx::pool::PoolOptions;
use sqlx::{Arguments, ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Row, Type};

use super::exec::{Arg, Cell, Done, Kind};
use super::target::DbTarget;

/// A database's side of statements in neutral SQL with [`Arg`] values.
pub(crate) trait Driver: Database {
    /// Rewrites neutral SQL (`?` placeholders, double-quoted identifiers)
    /// for the database.
    fn rebind(sql: &str) -> String;
    /// Binds the values of a statement, in order.
    fn bind(args: Vec<Arg>) -> Result<Self::Arguments, sqlx::Error>;
    /// Column `i` of a result row, read as `kind`.
    fn cell(row: &Self::Row, i: usize, kind: Kind) -> Result<Cell, sqlx::Error>;
    /// What a write reports.
    fn done(res: Self::QueryResult) -> Done;
}

/// Runs a read and returns its cells row after row, `kinds.len()` per row.
pub(crate) async fn fetch<'e, D, E>(
    ex: E,
    sql: &str,
    args: Vec<Arg>,
    kinds: &[Kind],
) -> Result<Vec<Cell>, sqlx::Error>
where
    D: Driver,
    D::Arguments: IntoArguments<D> + 'e,
    E: Executor<'e, Database = D>,
{
    let rows = sqlx::query_with(sqlx::AssertSqlSafe(D::rebind(sql)), D::bind(args)?)
        .fetch_all(ex)
        .await?;
    let mut out = Vec::with_capacity(rows.len() * kinds.len());
    for row in &rows {
        for (i, k) in kinds.iter().enumerate() {
            out.push(D::cell(row, i, *k)?);
        }
    }
    Ok(out)
}

/// Runs a write.
pub(crate) async fn execute<'e, D, E>(ex: E, sql: &str, args: Vec<Arg>) -> Result<Done, sqlx::Error>
where
    D: Driver,
    D::Arguments: IntoArguments<D> + 'e,
    E: Executor<'e, Database = D>,
{
    let res = sqlx::query_with(sqlx::AssertSqlSafe(D::rebind(sql)), D::bind(args)?)
        .execute(ex)
        .await?;
    Ok(D::done(res))
}

/// Binds `args` in order, each kind as the driver's native type but for
/// timestamps, which are bound as `time` makes them (SQLite stores text).
/// A NULL carries its kind: PostgreSQL needs it to type the parameter.
pub(crate) fn bind_args<D, T>(
    args: Vec<Arg>,
    time: fn(NaiveDateTime) -> T,
) -> Result<D::Arguments, sqlx::Error>
where
    D: Database,
    for<'q> i64: Encode<'q, D> + Type<D>,
    for<'q> String: Encode<'q, D> + Type<D>,
    for<'q> bool: Encode<'q, D> + Type<D>,
    for<'q> T: Encode<'q, D> + Type<D>,
    for<'q> Option<i64>: Encode<'q, D>,
    for<'q> Option<String>: Encode<'q, D>,
    for<'q> Option<bool>: Encode<'q, D>,
    for<'q> Option<T>: Encode<'q, D>,
{
    let mut out = D::Arguments::default();
    for a in args {
        let r = match a {
            Arg::Null(Kind::Int) => out.add(None::<i64>),
            Arg::Null(Kind::Text) => out.add(None::<String>),
            Arg::Null(Kind::Bool) => out.add(None::<bool>),
            Arg::Null(Kind::Time) => out.add(None::<T>),
            Arg::Int(v) => out.add(v),
            Arg::Text(v) => out.add(v),
            Arg::Bool(v) => out.add(v),
            Arg::Time(v) => out.add(time(v)),
        };
        r.map_err(sqlx::Error::Encode)?;
    }
    Ok(out)
}

/// Column `i` read as the driver reads `kind` natively: 64-bit integers,
/// text, booleans and naive timestamps. The dialect modules read the kinds
/// their database stores otherwise themselves and leave the rest to this.
pub(crate) fn native_cell<D>(row: &D::Row, i: usize, kind: Kind) -> Result<Cell, sqlx::Error>
where
    D: Database,
    usize: ColumnIndex<D::Row>,
    for<'r> Option<i64>: Decode<'r, D> + Type<D>,
    for<'r> Option<String>: Decode<'r, D> + Type<D>,
    for<'r> Option<bool>: Decode<'r, D> + Type<D>,
    for<'r> Option<NaiveDateTime>: Decode<'r, D> + Type<D>,
{
    Ok(match kind {
        Kind::Int => row
            .try_get::<Option<i64>, _>(i)?
            .map_or(Cell::Null, Cell::Int),
        Kind::Text => row
            .try_get::<Option<String>, _>(i)?
            .map_or(Cell::Null, Cell::Text),
        Kind::Bool => row
            .try_get::<Option<bool>, _>(i)?
            .map_or(Cell::Null, Cell::Bool),
        Kind::Time => row
            .try_get::<Option<NaiveDateTime>, _>(i)?
            .map_or(Cell::Null, Cell::Time),
    })
}

/// The pool settings of `target`: its size, idle time, lifetime and
/// acquire timeout.
pub(crate) fn pool_options<D: Database>(target: &DbTarget) -> PoolOptions<D> {
    PoolOptions::new()
        .max_connections(target.max_connections.max(1))
        .min_connections(target.min_connections)
        .idle_timeout(target.idle_timeout)
        .max_lifetime(target.max_lifetime)
        .acquire_timeout(target.acquire_timeout)
}
