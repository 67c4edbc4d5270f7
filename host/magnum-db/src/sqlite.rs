//! SQLite: a read pool and a single writer connection (BEGIN IMMEDIATE),
//! WAL journal, busy timeout, timestamps as the text SQLAlchemy writes,
//! NOCASE names, extended result codes.

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use sqlx::sqlite::{
    SqliteArguments, SqliteConnectOptions, SqliteJournalMode, SqliteQueryResult, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{Row, Sqlite};

use super::driver::{Driver, bind_args, native_cell, pool_options};
use super::exec::{Arg, Cell, Classified, DialectSql, Done, Kind, Pools, connect_error, probe};
use super::target::DbTarget;
use super::{Error, Result};

pub(crate) static SQL: DialectSql = DialectSql {
    // No row locks: transactions hold the database's write lock from BEGIN
    // IMMEDIATE on.
    for_update: "",
    table_exists: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
    columns: r#"SELECT name, type, CASE WHEN "notnull" = 0 AND pk = 0 THEN 'YES' ELSE 'NO' END FROM pragma_table_info(?) ORDER BY cid"#,
    version_table_ddl: "CREATE TABLE IF NOT EXISTS openkeel_schema_version (version INTEGER NOT NULL PRIMARY KEY, \
                        applied_at DATETIME NOT NULL)",
    // The name columns are NOCASE (migration 1); rtrim drops the trailing
    // spaces MariaDB's collations ignore.
    name_equals: |col| format!("rtrim({col}) = rtrim(?) COLLATE NOCASE"),
    // NULLs are the smallest value, as in MariaDB.
    order_term: |col, desc| format!("{col} {}", if desc { "DESC" } else { "ASC" }),
    sum: |col| format!("COALESCE(SUM({col}), 0)"),
    returning_id: false,
    microseconds: true,
};

/// The text form of a stored timestamp, as SQLAlchemy writes it.
const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S%.6f";

/// Whether the URL names an in-memory database (`sqlite::memory:`,
/// `sqlite://`, `?mode=memory`): every connection to it is a new database,
/// so it gets exactly one, kept forever.
pub(crate) fn is_memory(url: &str) -> bool {
    let rest = url
        .trim_start_matches("sqlite://")
        .trim_start_matches("sqlite:");
    let (path, params) = rest.split_once('?').unwrap_or((rest, ""));
    path.is_empty() || path == ":memory:" || params.split('&').any(|kv| kv == "mode=memory")
}

pub(crate) async fn open(target: &DbTarget) -> Result<Pools> {
    let memory = is_memory(&target.url);
    let bare = target
        .url
        .trim_start_matches("sqlite:")
        .trim_start_matches("//");
    // `sqlite://` alone: SQLite would open a private temporary file per
    // connection; it means an in-memory database, as `sqlite://` does to
    // SQLAlchemy.
    let url = if bare.is_empty() {
        "sqlite::memory:"
    } else {
        &target.url
    };
    let parsed = SqliteConnectOptions::from_str(url)
        .map_err(|e| Error::Config(format!("invalid sqlite database URL {}: {e}", target.url)))?;
    let place = if memory {
        ":memory:".to_string()
    } else {
        parsed.get_filename().display().to_string()
    };
    let options = parsed
        .create_if_missing(true)
        .busy_timeout(target.sqlite_busy_timeout)
        .foreign_keys(true);
    if memory {
        // The pool's one connection is opened at once and kept: the
        // database lives as long as it does.
        let pool = pool_options::<Sqlite>(target)
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options)
            .await
            .map_err(|e| connect_error(target, &place, &e.to_string()))?;
        return Ok(Pools::Sqlite {
            read: pool.clone(),
            write: pool,
        });
    }
    let options = options
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal);
    // The check also switches a new database to WAL before any reader
    // opens it.
    probe::<sqlx::SqliteConnection>(target, &place, &options).await?;
    // One writer connection, opened when first needed.
    let write = pool_options::<Sqlite>(target)
        .max_connections(1)
        .min_connections(0)
        // A COMMIT that fails on a full disk is rolled back by SQLite
        // itself, but sqlx still counts the transaction open, and the one
        // writer would refuse every BEGIN after it: such a connection is
        // closed (the next write opens a new one). The ping first runs a
        // rollback queued by a transaction dropped unfinished.
        .after_release(|conn, _| {
            Box::pin(async move {
                sqlx::Connection::ping(&mut *conn).await?;
                Ok(!sqlx::Connection::is_in_transaction(&*conn))
            })
        })
        .connect_lazy_with(options.clone());
    let read = pool_options::<Sqlite>(target).connect_lazy_with(options);
    Ok(Pools::Sqlite { read, write })
}

impl Driver for Sqlite {
    /// SQLite takes neutral SQL as it is.
    fn rebind(sql: &str) -> String {
        sql.to_string()
    }

    fn bind(args: Vec<Arg>) -> std::result::Result<SqliteArguments, sqlx::Error> {
        bind_args::<Sqlite, _>(args, |t| t.format(TIME_FORMAT).to_string())
    }

    fn cell(row: &SqliteRow, i: usize, kind: Kind) -> std::result::Result<Cell, sqlx::Error> {
        match kind {
            Kind::Time => time_cell(row, i),
            _ => native_cell::<Sqlite>(row, i, kind),
        }
    }

    fn done(res: SqliteQueryResult) -> Done {
        Done {
            rows_affected: res.rows_affected(),
            last_insert_id: Some(res.last_insert_rowid()).filter(|id| *id != 0),
        }
    }
}

/// A timestamp column, stored as text.
fn time_cell(row: &SqliteRow, i: usize) -> std::result::Result<Cell, sqlx::Error> {
    Ok(match row.try_get::<Option<String>, _>(i)? {
        None => Cell::Null,
        Some(s) => Cell::Time(parse_time(&s).ok_or_else(|| sqlx::Error::ColumnDecode {
            index: i.to_string(),
            source: format!("cannot parse time {s:?}").into(),
        })?),
    })
}

/// Parses the text forms SQLite rows may hold: SQLAlchemy's
/// (`2026-11-30 01:48:07.000000`), and the variants other writers use (a
/// `T` separator, an offset, no seconds, a date alone). Times with an
/// offset are converted to UTC.
pub(crate) fn parse_time(s: &str) -> Option<NaiveDateTime> {
    for f in ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(t);
        }
    }
    for f in ["%Y-%m-%d %H:%M:%S%.f%:z", "%Y-%m-%dT%H:%M:%S%.f%:z"] {
        if let Ok(t) = DateTime::parse_from_str(s, f) {
            return Some(t.naive_utc());
        }
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.naive_utc());
    }
    if let Ok(t) = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M") {
        return Some(t);
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
}

/// Extended result codes: SQLITE_BUSY (5) and SQLITE_LOCKED (6) and their
/// extended forms are retryable; SQLITE_CONSTRAINT_UNIQUE (2067) and
/// SQLITE_CONSTRAINT_PRIMARYKEY (1555) are duplicates.
pub(crate) fn classify(err: &sqlx::Error) -> Classified {
    match err
        .as_database_error()
        .and_then(|e| e.code())
        .and_then(|c| c.parse::<i32>().ok())
    {
        Some(code) => classify_code(code),
        None => Classified::default(),
    }
}

pub(crate) fn classify_code(code: i32) -> Classified {
    Classified {
        retryable: matches!(code & 0xff, 5 | 6),
        duplicate: matches!(code, 2067 | 1555),
        code: format!(" (SQLite code {code})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transaction that SQLite ended behind sqlx's back (as a COMMIT
    /// failing on a full disk does) leaves the writer counting it open; the
    /// next transaction gets a new connection instead of being refused
    /// ("attempted to call begin_with at non-zero transaction depth").
    #[tokio::test]
    async fn a_transaction_ended_behind_sqlx_does_not_stop_the_next() {
        use crate::testing::{Check, fresh};
        let t = fresh(super::super::Dialect::Sqlite).await;
        let ended =
            t.db.in_tx(|tx| {
                Box::pin(async move {
                    tx.q().execute_raw("end it".to_owned(), "COMMIT").await?;
                    Ok::<_, Error>(())
                })
            })
            .await;
        assert!(ended.is_err(), "sqlx's own COMMIT finds no transaction");
        let next =
            t.db.in_tx(|tx| {
                Box::pin(async move {
                    tx.q()
                        .execute_raw("write".to_owned(), "CREATE TABLE t (a INTEGER)")
                        .await?;
                    Ok::<_, Error>(())
                })
            })
            .await;
        next.check("the next transaction");
    }

    #[test]
    fn result_codes() {
        for (code, retryable, duplicate) in [
            (5, true, false),
            (517, true, false), // SQLITE_BUSY_SNAPSHOT
            (6, true, false),
            (262, true, false), // SQLITE_LOCKED_SHAREDCACHE
            (2067, false, true),
            (1555, false, true),
            (19, false, false), // SQLITE_CONSTRAINT
            (1, false, false),
        ] {
            let c = classify_code(code);
            assert_eq!((c.retryable, c.duplicate), (retryable, duplicate), "{code}");
        }
    }

    /// Go `TestSQLiteDSN` (the in-memory classification; the pragmas are
    /// checked on a live connection in `tests::sqlite_pragmas`).
    #[test]
    fn memory_urls() {
        for (url, memory) in [
            ("sqlite::memory:", true),
            ("sqlite://:memory:", true),
            ("sqlite://", true),
            ("sqlite://?mode=memory&cache=shared", true),
            ("sqlite:///var/lib/magnum.db", false),
            ("sqlite://rel.db?mode=rwc", false),
        ] {
            assert_eq!(is_memory(url), memory, "{url}");
        }
    }

    #[test]
    fn time_layouts() {
        let t = |s| parse_time(s).map(|t| t.format("%Y-%m-%d %H:%M:%S%.6f").to_string());
        for (s, want) in [
            (
                "2026-11-30 01:48:07.000000",
                Some("2026-11-30 01:48:07.000000"),
            ),
            ("2026-11-30 01:48:07", Some("2026-11-30 01:48:07.000000")),
            ("2026-11-30 01:48:07.5", Some("2026-11-30 01:48:07.500000")),
            (
                "2026-11-30T01:48:07.123456",
                Some("2026-11-30 01:48:07.123456"),
            ),
            (
                "2026-11-30 02:48:07+01:00",
                Some("2026-11-30 01:48:07.000000"),
            ),
            ("2026-11-30T01:48:07Z", Some("2026-11-30 01:48:07.000000")),
            ("2026-11-30 01:48", Some("2026-11-30 01:48:00.000000")),
            ("2026-11-30", Some("2026-11-30 00:00:00.000000")),
            ("yesterday", None),
        ] {
            assert_eq!(t(s).as_deref(), want, "{s}");
        }
    }
}
