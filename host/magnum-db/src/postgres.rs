//! PostgreSQL: `$n` placeholders, typed parameters, `RETURNING id`,
//! SQLSTATE codes, NULL ordering spelled out, case-insensitive names by
//! `lower()`.

use std::str::FromStr;

use sqlx::postgres::{PgArguments, PgConnectOptions, PgPoolOptions, PgRow};
use sqlx::{Arguments, Column, Executor, Postgres, Row, TypeInfo};

use super::exec::{Arg, Cell, Classified, DialectSql, Done, Kind, Pools, probe};
use super::target::DbTarget;
use super::{Error, Result};

pub(crate) static SQL: DialectSql = DialectSql {
    for_update: " FOR UPDATE",
    table_exists: "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?",
    columns: "SELECT column_name::text, \
              CASE WHEN data_type = 'character varying' THEN 'varchar(' || character_maximum_length || ')' \
              ELSE data_type::text END, is_nullable::text \
              FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? \
              ORDER BY ordinal_position",
    version_table_ddl: "CREATE TABLE IF NOT EXISTS openkeel_schema_version (version integer NOT NULL PRIMARY KEY, \
                        applied_at timestamp without time zone NOT NULL)",
    // Deviation: Python Magnum on PostgreSQL compares names case-sensitively;
    // we keep MariaDB's behaviour (case and trailing spaces ignored) on every
    // dialect so that a database moved between engines answers the same
    // lookups.
    name_equals: |col| format!("rtrim(lower({col})) = rtrim(lower(CAST(? AS TEXT)))"),
    // PostgreSQL sorts NULLs last ascending by default; MariaDB first.
    order_term: |col, desc| {
        if desc {
            format!("{col} DESC NULLS LAST")
        } else {
            format!("{col} ASC NULLS FIRST")
        }
    },
    sum: |col| format!("COALESCE(SUM({col}), 0)"),
    returning_id: true,
    microseconds: true,
};

/// Rewrites neutral SQL: `?` placeholders become `$1`, `$2`, …. Statements
/// of this layer never hold a `?` inside a literal.
pub(crate) fn rebind(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) async fn open(target: &DbTarget) -> Result<Pools> {
    let options = PgConnectOptions::from_str(&target.url).map_err(|e| {
        Error::Config(super::target::redact(
            &format!(
                "invalid postgres database URL {}: {e}",
                target.redacted_url()
            ),
            &target.url,
        ))
    })?;
    let place = format!(
        "{}:{}/{}",
        options.get_host(),
        options.get_port(),
        options.get_database().unwrap_or_default()
    );
    probe::<sqlx::PgConnection>(target, &place, &options).await?;
    let pool = PgPoolOptions::new()
        .max_connections(target.max_connections.max(1))
        .min_connections(target.min_connections)
        .idle_timeout(target.idle_timeout)
        .max_lifetime(target.max_lifetime)
        .acquire_timeout(target.acquire_timeout)
        .connect_lazy_with(options);
    Ok(Pools::Postgres(pool))
}

fn arguments(args: Vec<Arg>) -> std::result::Result<PgArguments, sqlx::Error> {
    let mut out = PgArguments::default();
    for a in args {
        let r = match a {
            Arg::Null(Kind::Int) => out.add(None::<i64>),
            Arg::Null(Kind::Text) => out.add(None::<String>),
            Arg::Null(Kind::Bool) => out.add(None::<bool>),
            Arg::Null(Kind::Time) => out.add(None::<chrono::NaiveDateTime>),
            Arg::Int(v) => out.add(v),
            Arg::Text(v) => out.add(v),
            Arg::Bool(v) => out.add(v),
            Arg::Time(v) => out.add(v),
        };
        r.map_err(sqlx::Error::Encode)?;
    }
    Ok(out)
}

pub(crate) async fn fetch<'e, E>(
    ex: E,
    sql: String,
    args: Vec<Arg>,
    kinds: &[Kind],
) -> std::result::Result<Vec<Cell>, sqlx::Error>
where
    E: Executor<'e, Database = Postgres>,
{
    let rows = sqlx::query_with(sqlx::AssertSqlSafe(sql), arguments(args)?)
        .fetch_all(ex)
        .await?;
    let mut out = Vec::with_capacity(rows.len() * kinds.len());
    for row in &rows {
        for (i, k) in kinds.iter().enumerate() {
            out.push(cell(row, i, *k)?);
        }
    }
    Ok(out)
}

fn cell(row: &PgRow, i: usize, kind: Kind) -> std::result::Result<Cell, sqlx::Error> {
    Ok(match kind {
        // integer columns are INT4, COUNT and SUM are INT8.
        Kind::Int => {
            let v = match row.columns().get(i).map(|c| c.type_info().name()) {
                Some("INT4") => row.try_get::<Option<i32>, _>(i)?.map(i64::from),
                Some("INT2") => row.try_get::<Option<i16>, _>(i)?.map(i64::from),
                _ => row.try_get::<Option<i64>, _>(i)?,
            };
            v.map_or(Cell::Null, Cell::Int)
        }
        Kind::Text => row
            .try_get::<Option<String>, _>(i)?
            .map_or(Cell::Null, Cell::Text),
        Kind::Bool => row
            .try_get::<Option<bool>, _>(i)?
            .map_or(Cell::Null, Cell::Bool),
        Kind::Time => row
            .try_get::<Option<chrono::NaiveDateTime>, _>(i)?
            .map_or(Cell::Null, Cell::Time),
    })
}

pub(crate) async fn execute<'e, E>(
    ex: E,
    sql: String,
    args: Vec<Arg>,
) -> std::result::Result<Done, sqlx::Error>
where
    E: Executor<'e, Database = Postgres>,
{
    let res = sqlx::query_with(sqlx::AssertSqlSafe(sql), arguments(args)?)
        .execute(ex)
        .await?;
    Ok(Done {
        rows_affected: res.rows_affected(),
        last_insert_id: None,
    })
}

/// SQLSTATE 40001 serialization failure and 40P01 deadlock are retryable;
/// 23505 is a unique violation.
pub(crate) fn classify(err: &sqlx::Error) -> Classified {
    match err.as_database_error().and_then(|e| e.code()) {
        Some(code) => classify_sqlstate(&code),
        None => Classified::default(),
    }
}

pub(crate) fn classify_sqlstate(code: &str) -> Classified {
    Classified {
        retryable: matches!(code, "40001" | "40P01"),
        duplicate: code == "23505",
        code: format!(" (SQLSTATE {code})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebind_numbers_placeholders() {
        assert_eq!(
            rebind(r#"SELECT "binary" FROM t WHERE a = ? AND b IN (?, ?)"#),
            r#"SELECT "binary" FROM t WHERE a = $1 AND b IN ($2, $3)"#
        );
    }

    /// Go `TestRetryableErrors` (PostgreSQL part).
    #[test]
    fn sqlstates() {
        for (code, retryable, duplicate) in [
            ("40001", true, false),
            ("40P01", true, false),
            ("23505", false, true),
            ("42P01", false, false),
        ] {
            let c = classify_sqlstate(code);
            assert_eq!((c.retryable, c.duplicate), (retryable, duplicate), "{code}");
            assert_eq!(c.code, format!(" (SQLSTATE {code})"));
        }
    }
}
