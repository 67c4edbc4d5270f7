//! The database: its URL from `[database]` and the open pool.

use super::*;

/// `[database]` as the database layer's target: the translated URL, the
/// SQLAlchemy pool options and oslo.db's retries.
pub fn database_target(options: &Options) -> Result<DbTarget, StartError> {
    if options
        .database
        .connection
        .as_ref()
        .is_none_or(|c| c.expose().trim().is_empty())
    {
        return Err(StartError::new("[database]/connection is not set"));
    }
    let url = options.database_url().map_err(StartError::new)?;
    let dialect = match url.dialect() {
        oslo_config::database::Dialect::MySql => Dialect::MySql,
        oslo_config::database::Dialect::Postgres => Dialect::Postgres,
        oslo_config::database::Dialect::Sqlite => Dialect::Sqlite,
    };
    let d = &options.database;
    let mut target = DbTarget::new(dialect, url.sqlx_url())
        .with_pool_limits(db::pool_limits(d.max_pool_size, d.max_overflow));
    target.acquire_timeout = url.connect_timeout();
    if d.connection_recycle_time > 0 {
        target.max_lifetime = Some(Duration::from_secs(
            d.connection_recycle_time.unsigned_abs(),
        ));
    }
    if d.db_max_retries > 0 {
        target.max_attempts = u32::try_from(d.db_max_retries + 1).unwrap_or(u32::MAX);
    }
    Ok(target)
}

/// Connects to `[database]/connection`. The error names the database
/// (password masked) and the cause on one line.
pub async fn open_database(options: &Options) -> Result<Db, StartError> {
    let target = database_target(options)?;
    Db::open(&target)
        .await
        .map_err(|e| StartError::new(format!("database {}: {e}", target.redacted_url())))
}
