//! MariaDB (and MySQL): backquoted identifiers, `?` placeholders, found-rows
//! counts, error numbers, whole-second datetimes.

use std::str::FromStr;

use sqlx::mysql::{MySqlArguments, MySqlConnectOptions, MySqlQueryResult, MySqlRow};
use sqlx::{MySql, Row};

use super::driver::{Driver, bind_args, native_cell, pool_options};
use super::exec::{Arg, Cell, Classified, DialectSql, Done, Kind, Pools, probe};
use super::target::DbTarget;
use super::{Error, Result};

pub(crate) static SQL: DialectSql = DialectSql {
    for_update: " FOR UPDATE",
    table_exists: "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
    columns: "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS \
              WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
    version_table_ddl: "CREATE TABLE IF NOT EXISTS openkeel_schema_version (version int(11) NOT NULL, \
                        applied_at datetime NOT NULL, PRIMARY KEY (version)) ENGINE=InnoDB \
                        DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci",
    // MariaDB's *_general_ci collations already ignore case and trailing
    // spaces.
    name_equals: |col| format!("{col} = ?"),
    // NULLs sort first ascending and last descending.
    order_term: |col, desc| format!("{col} {}", if desc { "DESC" } else { "ASC" }),
    // SUM of integers is a DECIMAL in MariaDB.
    sum: |col| format!("CAST(COALESCE(SUM({col}), 0) AS SIGNED)"),
    returning_id: false,
    microseconds: false,
};

/// Rewrites neutral SQL: double-quoted identifiers become backquoted.
/// Statements of this layer never hold a `"` inside a literal.
pub(crate) fn rebind(sql: &str) -> String {
    sql.replace('"', "`")
}

pub(crate) async fn open(target: &DbTarget) -> Result<Pools> {
    let options = MySqlConnectOptions::from_str(&target.url).map_err(|e| {
        Error::Config(super::target::redact(
            &format!("invalid mysql database URL {}: {e}", target.redacted_url()),
            &target.url,
        ))
    })?;
    let place = place(&options, target);
    probe::<sqlx::MySqlConnection>(target, &place, &options).await?;
    let pool = pool_options::<MySql>(target).connect_lazy_with(options);
    Ok(Pools::MySql(pool))
}

/// `host:port/database` of the target, for messages.
fn place(options: &MySqlConnectOptions, target: &DbTarget) -> String {
    let db = options.get_database().unwrap_or_default();
    match url::Url::parse(&target.url) {
        Ok(u) if u.host_str().is_some() => format!(
            "{}:{}/{db}",
            u.host_str().unwrap_or_default(),
            u.port().unwrap_or(3306)
        ),
        _ => format!("{}:{}/{db}", options.get_host(), options.get_port()),
    }
}

impl Driver for MySql {
    fn rebind(sql: &str) -> String {
        rebind(sql)
    }

    fn bind(args: Vec<Arg>) -> std::result::Result<MySqlArguments, sqlx::Error> {
        bind_args::<MySql, _>(args, |t| t)
    }

    fn cell(row: &MySqlRow, i: usize, kind: Kind) -> std::result::Result<Cell, sqlx::Error> {
        match kind {
            Kind::Int => int_cell(row, i),
            _ => native_cell::<MySql>(row, i, kind),
        }
    }

    fn done(res: MySqlQueryResult) -> Done {
        Done {
            rows_affected: res.rows_affected(),
            last_insert_id: i64::try_from(res.last_insert_id())
                .ok()
                .filter(|id| *id != 0),
        }
    }
}

/// An integer column, signed or (catalogue columns) BIGINT UNSIGNED.
fn int_cell(row: &MySqlRow, i: usize) -> std::result::Result<Cell, sqlx::Error> {
    Ok(match row.try_get::<Option<i64>, _>(i) {
        Ok(v) => v.map_or(Cell::Null, Cell::Int),
        Err(sqlx::Error::ColumnDecode { .. }) => match row.try_get::<Option<u64>, _>(i)? {
            Some(v) => Cell::Int(i64::try_from(v).map_err(|e| sqlx::Error::ColumnDecode {
                index: i.to_string(),
                source: Box::new(e),
            })?),
            None => Cell::Null,
        },
        Err(e) => return Err(e),
    })
}

/// Error numbers: 1213 deadlock, 1205 lock wait timeout (both retryable),
/// 1062 duplicate entry.
pub(crate) fn classify(err: &sqlx::Error) -> Classified {
    let Some(db) = err.as_database_error() else {
        return Classified::default();
    };
    match db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
        Some(e) => classify_number(e.number()),
        None => Classified::default(),
    }
}

pub(crate) fn classify_number(number: u16) -> Classified {
    Classified {
        retryable: matches!(number, 1213 | 1205),
        duplicate: number == 1062,
        // The driver's message already starts with the number.
        code: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebind_backquotes_identifiers() {
        assert_eq!(
            rebind(r#"SELECT "binary" FROM t WHERE a = ? AND b IN (?, ?)"#),
            "SELECT `binary` FROM t WHERE a = ? AND b IN (?, ?)"
        );
    }

    /// Go `TestRetryableErrors` (MySQL part).
    #[test]
    fn error_numbers() {
        for (n, retryable, duplicate) in [
            (1213, true, false),
            (1205, true, false),
            (1062, false, true),
            (1146, false, false),
        ] {
            let c = classify_number(n);
            assert_eq!((c.retryable, c.duplicate), (retryable, duplicate), "{n}");
        }
        assert_eq!(classify(&sqlx::Error::PoolTimedOut), Classified::default());
    }
}
