//! PostgreSQL: `$n` placeholders, typed parameters, `RETURNING id`,
//! SQLSTATE codes, NULL ordering spelled out, case-insensitive names by
//! `lower()`.

use std::str::FromStr;

use sqlx::postgres::{PgArguments, PgConnectOptions, PgQueryResult, PgRow};
use sqlx::{Column, Postgres, Row, TypeInfo};

use super::driver::{Driver, bind_args, native_cell, pool_options};
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
    let pool = pool_options::<Postgres>(target).connect_lazy_with(options);
    Ok(Pools::Postgres(pool))
}

impl Driver for Postgres {
    fn rebind(sql: &str) -> String {
        rebind(sql)
    }

    fn bind(args: Vec<Arg>) -> std::result::Result<PgArguments, sqlx::Error> {
        bind_args::<Postgres, _>(args, |t| t)
    }

    fn cell(row: &PgRow, i: usize, kind: Kind) -> std::result::Result<Cell, sqlx::Error> {
        match kind {
            Kind::Int => int_cell(row, i),
            _ => native_cell::<Postgres>(row, i, kind),
        }
    }

    /// The id of an insert comes from `RETURNING id`.
    fn done(res: PgQueryResult) -> Done {
        Done {
            rows_affected: res.rows_affected(),
            last_insert_id: None,
        }
    }
}

/// An integer column: the schema's integer columns are INT4, COUNT and SUM
/// are INT8.
fn int_cell(row: &PgRow, i: usize) -> std::result::Result<Cell, sqlx::Error> {
    let v = match row.columns().get(i).map(|c| c.type_info().name()) {
        Some("INT4") => row.try_get::<Option<i32>, _>(i)?.map(i64::from),
        Some("INT2") => row.try_get::<Option<i16>, _>(i)?.map(i64::from),
        _ => row.try_get::<Option<i64>, _>(i)?,
    };
    Ok(v.map_or(Cell::Null, Cell::Int))
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
