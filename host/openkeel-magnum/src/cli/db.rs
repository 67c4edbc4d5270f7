//! `db upgrade | version | adopt` (magnum-db-manage).

use std::io::Write;

use super::{DbCommand, Failure};
use crate::app;
use crate::db;

pub(super) async fn run(
    options: &crate::options::Options,
    command: DbCommand,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let d = app::open_database(options).await?;
    let result = match command {
        DbCommand::Upgrade => db::upgrade(&d)
            .await
            .map(|r| format!("Database schema is at version {}", r.to)),
        DbCommand::Version => db::version(&d).await.map(|v| {
            // The second line is magnum-db-manage version's output.
            format!(
                "openkeel-magnum schema version is {} (latest {})\nCurrent DB revision is {}",
                v.ours,
                db::latest_version(),
                v.alembic.as_deref().unwrap_or("None")
            )
        }),
        DbCommand::Adopt => db::adopt(&d).await.map(|_| {
            format!(
                "Magnum database adopted at schema version {}",
                db::latest_version()
            )
        }),
    };
    d.close().await;
    let text = result.map_err(Failure::new)?;
    writeln!(out, "{text}").map_err(Failure::new)
}
