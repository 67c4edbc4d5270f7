//! Our schema versions, `db upgrade`, `db version`, `db adopt` and the
//! schema check of `api` start-up.
//!
//! Version 1 is Magnum 23.0.0's schema at Alembic head `b3e1cf4a2d5e` (with
//! the `alembic_version` row, so that Python Magnum can still open the
//! database); later versions add an index and the change counter of the
//! list cache (a table of ours and triggers on three of Magnum's tables),
//! nothing Python Magnum reads or writes itself. Applied versions are rows of
//! `openkeel_schema_version (version, applied_at)`; Magnum's
//! `alembic_version` is left to Magnum. sqlx's migrator is not used: it
//! cannot adopt a database Alembic created. A database migrated by the Go
//! implementation has the same tables and rows and is recognised as is.

use std::collections::BTreeMap;

use super::exec::{Arg, Kind};
use super::{Db, Dialect, Error, Result};

/// The Alembic revision of Magnum 23.0.0 whose schema is our version 1.
pub const ALEMBIC_HEAD: &str = "b3e1cf4a2d5e";

/// The table that records our migrations.
pub const VERSION_TABLE: &str = "openkeel_schema_version";

/// The tables of Magnum's schema (`alembic_version` aside).
pub const MAGNUM_TABLES: [&str; 7] = [
    "cluster",
    "cluster_template",
    "federation",
    "magnum_service",
    "nodegroup",
    "quotas",
    "x509keypair",
];

/// One migration file, embedded in the binary.
struct MigrationFile {
    version: i64,
    name: &'static str,
    sql: &'static str,
}

macro_rules! migrations {
    ($dialect:literal: $($version:literal => $name:literal),+ $(,)?) => {
        &[$(MigrationFile {
            version: $version,
            name: $name,
            sql: include_str!(concat!("../../../migrations/", $dialect, "/", $name)),
        }),+]
    };
}

// Every dialect has the same versions (checked by a test against the files
// of migrations/<dialect>/).
static MYSQL: &[MigrationFile] = migrations!("mysql":
    1 => "0001_magnum_schema.sql",
    2 => "0002_cluster_project_index.sql",
    3 => "0003_change_counter.sql",
);
static POSTGRES: &[MigrationFile] = migrations!("postgres":
    1 => "0001_magnum_schema.sql",
    2 => "0002_cluster_project_index.sql",
    3 => "0003_change_counter.sql",
);
static SQLITE: &[MigrationFile] = migrations!("sqlite":
    1 => "0001_magnum_schema.sql",
    2 => "0002_cluster_project_index.sql",
    3 => "0003_change_counter.sql",
);

/// A migration: its version, file name and statements.
#[derive(Clone, Debug)]
pub(crate) struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub stmts: Vec<String>,
}

/// The embedded migrations of a dialect, in order.
pub(crate) fn migrations(d: Dialect) -> Vec<Migration> {
    let files = match d {
        Dialect::MySql => MYSQL,
        Dialect::Postgres => POSTGRES,
        Dialect::Sqlite => SQLITE,
    };
    let mut out: Vec<Migration> = files
        .iter()
        .map(|f| Migration {
            version: f.version,
            name: f.name,
            stmts: split_sql(f.sql),
        })
        .collect();
    out.sort_by_key(|m| m.version);
    out
}

/// Splits a migration file into statements: a statement ends with a `;` at
/// the end of a line; `--` comment lines and blank lines are dropped.
pub(crate) fn split_sql(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in s.split('\n') {
        let t = line.trim();
        if t.is_empty() || t.starts_with("--") {
            continue;
        }
        cur.push_str(line);
        cur.push('\n');
        if t.ends_with(';') {
            let stmt = cur.trim();
            out.push(stmt.strip_suffix(';').unwrap_or(stmt).to_string());
            cur.clear();
        }
    }
    let rest = cur.trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}

/// The highest schema version this build knows.
pub fn latest_version() -> i64 {
    SQLITE.iter().map(|m| m.version).max().unwrap_or(0)
}

/// The versions of a database.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchemaVersion {
    /// Our schema version (0 when the database has none).
    pub ours: i64,
    /// Magnum's Alembic revision; several heads (a branched history) are
    /// comma-separated. `None` without `alembic_version` or a row in it.
    pub alembic: Option<String>,
}

/// One migration applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// Its version.
    pub version: i64,
    /// Its file name (`adopt` for the baseline of an adopted database).
    pub name: &'static str,
}

/// What `db upgrade` or `db adopt` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Our schema version before.
    pub from: i64,
    /// Our schema version after ([`latest_version`] on success).
    pub to: i64,
    /// The migrations applied, in order (empty: nothing to do).
    pub applied: Vec<Applied>,
}

async fn table_exists(db: &Db, name: &str) -> Result<bool> {
    let sql = db.dialect().sql().table_exists;
    let n = db
        .q()
        .scalar("table", sql, vec![Arg::from(name)])
        .await
        .map_err(|e| Error::Schema(format!("look for table {name}: {e}")))?;
    Ok(n > 0)
}

/// Our schema version and Magnum's Alembic revision (`db version`).
pub async fn version(db: &Db) -> Result<SchemaVersion> {
    let mut out = SchemaVersion::default();
    if table_exists(db, VERSION_TABLE).await? {
        let sql = format!("SELECT MAX(version) FROM {VERSION_TABLE}");
        out.ours = db
            .q()
            .scalar(VERSION_TABLE, &sql, vec![])
            .await
            .map_err(|e| Error::Schema(format!("read schema version: {e}")))?;
    }
    if table_exists(db, "alembic_version").await? {
        let mut r = db
            .q()
            .rows(
                "alembic_version",
                "SELECT version_num FROM alembic_version",
                vec![],
                &[Kind::Text],
            )
            .await
            .map_err(|e| Error::Schema(format!("read alembic_version: {e}")))?;
        let mut revs = Vec::new();
        while !r.is_empty() {
            revs.push(r.string()?);
        }
        if !revs.is_empty() {
            out.alembic = Some(revs.join(","));
        }
    }
    Ok(out)
}

async fn has_magnum_tables(db: &Db) -> Result<bool> {
    for t in std::iter::once("alembic_version").chain(MAGNUM_TABLES) {
        if table_exists(db, t).await? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Creates the schema on an empty database, or applies the migrations
/// newer than the recorded version (`db upgrade`). A Magnum database that
/// was never adopted is refused (run [`adopt`] first).
pub async fn upgrade(db: &Db) -> Result<Report> {
    let v = version(db).await?;
    if v.ours == 0 && has_magnum_tables(db).await? {
        return Err(Error::Schema(format!(
            "the database already holds a Magnum schema (Alembic revision {}): take it over with db adopt instead of db upgrade",
            v.alembic.as_deref().unwrap_or("none")
        )));
    }
    let ms = migrations(db.dialect());
    let latest = ms.last().map_or(0, |m| m.version);
    if v.ours > latest {
        return Err(Error::Schema(format!(
            "database schema version {} is newer than this build knows ({latest}): upgrade openkeel-magnum",
            v.ours
        )));
    }
    create_version_table(db).await?;
    let mut report = Report {
        from: v.ours,
        to: v.ours,
        applied: Vec::new(),
    };
    for m in ms.into_iter().filter(|m| m.version > v.ours) {
        apply(db, m.version, m.name, &m.stmts).await?;
        report.to = m.version;
        report.applied.push(Applied {
            version: m.version,
            name: m.name,
        });
    }
    Ok(report)
}

async fn create_version_table(db: &Db) -> Result<()> {
    db.q()
        .execute_raw(
            format!("create {VERSION_TABLE}"),
            db.dialect().sql().version_table_ddl,
        )
        .await
}

/// Runs the statements and records `version`. PostgreSQL and SQLite run
/// DDL in the transaction; MariaDB commits each DDL statement implicitly,
/// so a failure there leaves the statements before it applied (the error
/// says which one failed).
async fn apply(db: &Db, version: i64, name: &'static str, stmts: &[String]) -> Result<()> {
    db.in_tx(|tx| {
        Box::pin(async move {
            let mut q = tx.q();
            for (i, s) in stmts.iter().enumerate() {
                q.execute_raw(format!("migration {name}, statement {}", i + 1), s)
                    .await?;
            }
            let now = q.now();
            q.write(
                format!("record schema version {version}"),
                &format!("INSERT INTO {VERSION_TABLE} (version, applied_at) VALUES (?, ?)"),
                vec![Arg::Int(version), Arg::Time(now)],
            )
            .await?;
            Ok::<_, Error>(())
        })
    })
    .await
}

/// Takes over a database created and migrated by Python Magnum (`db
/// adopt`): it checks that `alembic_version` is [`ALEMBIC_HEAD`] and that
/// every Magnum table has the columns we expect, records our version 1
/// (Magnum's schema), then applies our later migrations, which add an
/// index and the change counter. It changes no row of Magnum's tables. Adopting an adopted
/// database applies what is missing of our migrations, if anything.
pub async fn adopt(db: &Db) -> Result<Report> {
    let v = version(db).await?;
    if v.ours >= 1 {
        return upgrade(db).await;
    }
    let Some(alembic) = v.alembic else {
        if !has_magnum_tables(db).await? {
            return Err(Error::Schema(
                "the database is empty: there is no Magnum schema to adopt, create one with db upgrade".into(),
            ));
        }
        return Err(Error::Schema(
            "the database has Magnum tables but no Alembic revision: upgrade it with magnum-db-manage upgrade (Magnum 23.0.0) first, then run db adopt".into(),
        ));
    };
    if alembic != ALEMBIC_HEAD {
        return Err(Error::AlembicRevision {
            found: alembic,
            expected: ALEMBIC_HEAD,
        });
    }
    check_columns(db).await?;
    create_version_table(db).await?;
    apply(db, 1, "adopt", &[]).await?;
    let mut report = upgrade(db).await?;
    report.from = 0;
    report.applied.insert(
        0,
        Applied {
            version: 1,
            name: "adopt",
        },
    );
    Ok(report)
}

/// Refuses to serve a database whose schema is not ours at the latest
/// version, with the command that fixes it (one line).
pub async fn check_schema(db: &Db) -> Result<()> {
    let v = version(db)
        .await
        .map_err(|e| Error::Schema(format!("read the schema version: {e}")))?;
    let latest = latest_version();
    let msg = match (v.ours, &v.alembic) {
        (0, Some(alembic)) => format!(
            "the database is a Magnum database (Alembic {alembic}) not yet adopted: run `openkeel-magnum db adopt`"
        ),
        (0, None) => "the database has no schema: run `openkeel-magnum db upgrade`".to_string(),
        (ours, _) if ours < latest => format!(
            "the database schema is at version {ours}, this release needs {latest}: run `openkeel-magnum db upgrade`"
        ),
        (ours, _) if ours > latest => format!(
            "the database schema is at version {ours}, newer than this release knows ({latest})"
        ),
        _ => return Ok(()),
    };
    Err(Error::Schema(msg))
}

/// One column of a table in a dialect-neutral form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column name.
    pub name: String,
    /// `int`, `varchar(N)`, `text`, `bool` or `datetime`; anything else is
    /// the database's own type name, lower-cased.
    pub ty: String,
    /// Whether NULL is allowed.
    pub nullable: bool,
}

/// The columns of Magnum's tables at [`ALEMBIC_HEAD`], read from our MariaDB
/// migration (the same DDL as the reference dump), by table.
pub fn expected_columns() -> BTreeMap<String, Vec<Column>> {
    let mut out = BTreeMap::new();
    let Some(m) = migrations(Dialect::MySql).into_iter().next() else {
        return out;
    };
    for s in m.stmts.iter().filter(|s| s.starts_with("CREATE TABLE")) {
        let Some(name) = s.split_whitespace().nth(2) else {
            continue;
        };
        let cols: Vec<Column> = s.lines().skip(1).filter_map(ddl_column).collect();
        out.insert(name.trim_matches('`').to_string(), cols);
    }
    out
}

/// Parses a column line of a MariaDB `CREATE TABLE`:
/// `` `name` type[(n)] … `` (other lines, keys, give `None`).
fn ddl_column(line: &str) -> Option<Column> {
    let rest = line.trim_start().strip_prefix('`')?;
    let (name, rest) = rest.split_once('`')?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let rest = rest.strip_prefix(' ')?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if end == 0 {
        return None;
    }
    let mut ty_end = end;
    if let Some(after) = rest[end..].strip_prefix('(')
        && let Some(close) = after.find(')')
        && close > 0
        && after[..close].chars().all(|c| c.is_ascii_digit())
    {
        ty_end = end + close + 2;
    }
    Some(Column {
        name: name.to_string(),
        ty: canonical_type(&rest[..ty_end]),
        nullable: !rest[ty_end..].contains("NOT NULL"),
    })
}

/// Maps a column type of any dialect to the neutral form.
pub(crate) fn canonical_type(t: &str) -> String {
    let l = t.trim().to_ascii_lowercase();
    match l.as_str() {
        "int" | "int(11)" | "integer" => return "int".into(),
        "tinyint(1)" | "boolean" | "bool" => return "bool".into(),
        "text" => return "text".into(),
        "datetime" | "timestamp without time zone" | "timestamp" => return "datetime".into(),
        _ => {}
    }
    for prefix in ["varchar(", "character varying("] {
        if let Some(n) = l.strip_prefix(prefix).and_then(|r| r.strip_suffix(')'))
            && !n.is_empty()
            && n.chars().all(|c| c.is_ascii_digit())
        {
            return format!("varchar({n})");
        }
    }
    l
}

/// The columns of a table, read from the database's catalogue.
pub async fn live_columns(db: &Db, table: &str) -> Result<Vec<Column>> {
    let sql = db.dialect().sql().columns;
    let mut r = db
        .q()
        .rows("columns", sql, vec![Arg::from(table)], &[Kind::Text; 3])
        .await
        .map_err(|e| Error::Schema(format!("read columns of {table}: {e}")))?;
    let mut out = Vec::new();
    while !r.is_empty() {
        let name = r.string()?;
        let ty = canonical_type(&r.string()?);
        let nullable = r.string()?.eq_ignore_ascii_case("yes");
        out.push(Column { name, ty, nullable });
    }
    Ok(out)
}

/// Compares the live columns of Magnum's tables with
/// [`expected_columns`]. Names and base types must match; varchar lengths
/// and nullability may differ: databases built from Magnum's models
/// (`create_all` + `stamp`, as on PostgreSQL) differ from the migrated
/// schema there (`docker_storage_driver` varchar(255), nullable nodegroup
/// keys and `quotas.hard_limit`) and Magnum itself runs on both.
async fn check_columns(db: &Db) -> Result<()> {
    let want = expected_columns();
    let mut problems = Vec::new();
    for table in MAGNUM_TABLES {
        let live = live_columns(db, table).await?;
        if live.is_empty() {
            problems.push(format!("table {table} is missing"));
            continue;
        }
        let mut got: BTreeMap<String, Column> =
            live.into_iter().map(|c| (c.name.clone(), c)).collect();
        for w in want.get(table).into_iter().flatten() {
            let Some(g) = got.remove(&w.name) else {
                problems.push(format!("{table}.{} is missing", w.name));
                continue;
            };
            if base_type(&g.ty) != base_type(&w.ty) {
                problems.push(format!("{table}.{} is {}, expected {}", w.name, g.ty, w.ty));
            }
        }
        for extra in got.keys() {
            problems.push(format!(
                "{table}.{extra} is not a column of Magnum {ALEMBIC_HEAD}"
            ));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Error::Schema(format!(
        "the database is stamped {ALEMBIC_HEAD} but its tables differ from Magnum's schema: {}",
        problems.join("; ")
    )))
}

fn base_type(t: &str) -> &str {
    t.split_once('(').map_or(t, |(b, _)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_sql_drops_comments_and_keeps_multiline_statements() {
        let got =
            split_sql("-- c\nCREATE TABLE a (\n  x int\n);\n\nINSERT INTO a VALUES (1);\nSELECT 1");
        assert_eq!(
            got,
            [
                "CREATE TABLE a (\n  x int\n)",
                "INSERT INTO a VALUES (1)",
                "SELECT 1"
            ]
        );
    }

    #[test]
    fn canonical_types() {
        for (t, want) in [
            ("int(11)", "int"),
            ("INTEGER", "int"),
            ("tinyint(1)", "bool"),
            ("BOOLEAN", "bool"),
            ("character varying(36)", "varchar(36)"),
            ("VARCHAR(255)", "varchar(255)"),
            ("timestamp without time zone", "datetime"),
            ("DATETIME", "datetime"),
            ("text", "text"),
            ("bigint", "bigint"),
            ("varchar()", "varchar()"),
        ] {
            assert_eq!(canonical_type(t), want, "{t}");
        }
    }

    #[test]
    fn expected_columns_come_from_the_mysql_migration() {
        let cols = expected_columns();
        let tables: Vec<&str> = cols.keys().map(String::as_str).collect();
        let mut want = vec!["alembic_version"];
        want.extend(MAGNUM_TABLES);
        assert_eq!(tables, want);
        assert_eq!(cols["cluster"].len(), 31);
        assert_eq!(cols["cluster_template"].len(), 36);
        assert_eq!(cols["nodegroup"].len(), 23);
        let ng_uuid = cols["nodegroup"].iter().find(|c| c.name == "uuid");
        assert_eq!(
            ng_uuid,
            Some(&Column {
                name: "uuid".into(),
                ty: "varchar(36)".into(),
                nullable: false
            })
        );
        let public = cols["cluster_template"].iter().find(|c| c.name == "public");
        assert_eq!(
            public.map(|c| (c.ty.as_str(), c.nullable)),
            Some(("bool", true))
        );
    }

    /// Go `TestMigrationVersionsMatchAcrossDialects`, plus: the embedded
    /// list names every file of `migrations/<dialect>/`.
    #[test]
    fn migration_versions_match_across_dialects() {
        let versions = |d| migrations(d).iter().map(|m| m.version).collect::<Vec<_>>();
        let want = versions(Dialect::MySql);
        assert_eq!(want.first(), Some(&1));
        assert_eq!(want.last(), Some(&latest_version()));
        for d in Dialect::ALL {
            assert_eq!(versions(d), want, "{d}");
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../migrations")
                .join(d.name());
            let mut files: Vec<String> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".sql"))
                .collect();
            files.sort();
            let embedded: Vec<&str> = migrations(d).iter().map(|m| m.name).collect();
            assert_eq!(files, embedded, "{d}");
            for (m, f) in migrations(d).iter().zip(&files) {
                let n: i64 = f[..4].parse().unwrap_or(-1);
                assert_eq!(m.version, n, "{d} {f}");
            }
        }
    }

    /// Go `TestLaterMigrationsOnlyAddIndexes`, since version 3 widened:
    /// version 1 is Magnum's schema; what we add after it are indexes, and
    /// the change counter's table of our own with its rows, function and
    /// triggers. No later statement alters or drops anything of Magnum's, so
    /// Python Magnum still runs on the database.
    #[test]
    fn later_migrations_only_add_indexes_and_the_change_counter() {
        const ADDITIONS: [&str; 7] = [
            "CREATE INDEX ",
            "CREATE TRIGGER ",
            "CREATE TABLE `openkeel_change` ",
            "CREATE TABLE IF NOT EXISTS `openkeel_change` ",
            "INSERT INTO `openkeel_change` ",
            "INSERT IGNORE INTO `openkeel_change` ",
            "CREATE FUNCTION okm_count_change() ",
        ];
        for d in Dialect::ALL {
            let mut triggers = 0;
            for m in migrations(d).iter().filter(|m| m.version > 1) {
                for (i, s) in m.stmts.iter().enumerate() {
                    let unquoted = s.replace('"', "`");
                    let plain = unquoted.replace("openkeel_change (", "`openkeel_change` (");
                    assert!(
                        ADDITIONS.iter().any(|a| plain.starts_with(a)),
                        "{d} {} statement {} is not an addition: {s}",
                        m.name,
                        i + 1
                    );
                    triggers += usize::from(s.starts_with("CREATE TRIGGER "));
                }
            }
            // Each of the three tables a list reads is counted.
            let want = if d == Dialect::Postgres { 3 } else { 9 };
            assert_eq!(triggers, want, "{d}");
        }
    }

    // Live databases: one fresh database per test and dialect.

    use crate::testing::{
        Check, dialect_tests, exec_script, fresh, has_index, magnum_db, migrated, pg_spec_skip,
        read_spec, spec_dir, table_digest, text_rows,
    };
    use magnum_domain::models::Quota;

    dialect_tests!(
        upgrade_creates_spec_schema,
        upgrade_refuses_magnum_database,
        adopt_takes_over_without_changing_a_row,
        adopt_refuses_another_alembic_revision,
        adopt_refuses_tables_that_differ,
        adopt_sends_an_empty_database_to_upgrade,
        check_schema_refuses_what_it_cannot_serve,
        read_magnum_rows,
        an_upgrade_stopped_in_the_change_counter_completes,
    );

    /// MariaDB commits each statement of a migration on its own: version 3
    /// stopped after some of its statements (a trigger refused for want of
    /// a privilege) completes when `db upgrade` runs again. PostgreSQL and
    /// SQLite apply it in one transaction, all or nothing: there, the same
    /// state is a database someone changed by hand, and upgrade is not asked
    /// to mend it.
    async fn an_upgrade_stopped_in_the_change_counter_completes(d: Dialect) {
        if d != Dialect::MySql {
            return;
        }
        let db = migrated(d).await;
        for s in [
            "DROP TRIGGER okm_nodegroup_ad",
            "DROP TRIGGER okm_cluster_template_au",
            "DELETE FROM openkeel_change WHERE slot > 10",
            "DELETE FROM openkeel_schema_version WHERE version = 3",
        ] {
            exec(&db, s).await;
        }
        let report = upgrade(&db).await.check("upgrade again");
        assert_eq!((report.from, report.to), (2, 3));
        let triggers = db
            .q()
            .scalar(
                "triggers",
                "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() \
                 AND TRIGGER_NAME LIKE 'okm\\_%'",
                vec![],
            )
            .await
            .check("triggers");
        assert_eq!(triggers, 9);
        let slots = db
            .q()
            .scalar("slots", "SELECT COUNT(*) FROM openkeel_change", vec![])
            .await
            .check("slots");
        assert_eq!(slots, 64);
    }

    /// Our later migrations (an index, the change counter) run on a database loaded from
    /// the spec's schema.
    async fn apply_additions(db: &Db) {
        for m in migrations(db.dialect()).iter().filter(|m| m.version > 1) {
            for s in &m.stmts {
                db.q()
                    .execute_raw(m.name.to_string(), s)
                    .await
                    .check(m.name);
            }
        }
    }

    /// `SHOW CREATE TABLE` without the AUTO_INCREMENT counter.
    async fn show_create(db: &Db, table: &str) -> String {
        let rows = text_rows(db, &format!("SHOW CREATE TABLE `{table}`"), vec![], 2).await;
        let ddl = rows
            .first()
            .and_then(|r| r.get(1))
            .cloned()
            .unwrap_or_default();
        assert!(
            ddl.starts_with("CREATE TABLE"),
            "SHOW CREATE TABLE {table}: {ddl:?}"
        );
        ddl.split(' ')
            .filter(|w| !w.starts_with("AUTO_INCREMENT="))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What defines the schema in PostgreSQL, one line each, sorted.
    async fn pg_catalog(db: &Db) -> Vec<String> {
        let queries = [
            "SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || COALESCE('(' || character_maximum_length || ')', '') || \
             ' nullable=' || is_nullable || ' default=' || COALESCE(column_default, '-') \
             FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> 'openkeel_schema_version'",
            "SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) \
             FROM pg_constraint WHERE connamespace = current_schema()::regnamespace AND conrelid::regclass::text <> 'openkeel_schema_version'",
            "SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename <> 'openkeel_schema_version'",
            "SELECT 'sequence ' || sequence_name || ' ' || data_type || ' ' || start_value || ' ' || increment \
             FROM information_schema.sequences WHERE sequence_schema = current_schema()",
            "SELECT 'type ' || t.typname || ' ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) \
             FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname",
        ];
        let mut out = Vec::new();
        for q in queries {
            out.extend(text_rows(db, q, vec![], 1).await.into_iter().flatten());
        }
        out.sort();
        out
    }

    /// The unique keys of each table of a MariaDB dump, as `name(col,col)`.
    fn mysql_unique_keys(dump: &str) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut table = String::new();
        for line in dump.lines() {
            if let Some(rest) = line.strip_prefix("CREATE TABLE `") {
                table = rest.split('`').next().unwrap_or_default().to_string();
            }
            if let Some(rest) = line.trim().strip_prefix("UNIQUE KEY `")
                && let Some((name, cols)) = rest.split_once("` (")
            {
                let cols = cols
                    .trim_end_matches(',')
                    .trim_end_matches(')')
                    .replace('`', "");
                out.entry(table.clone())
                    .or_default()
                    .push(format!("{name}({cols})"));
            }
        }
        for keys in out.values_mut() {
            keys.sort();
        }
        out
    }

    /// The unique constraints of a SQLite table as `name(col,col)`, named as
    /// the migration declares them (SQLite names their indexes
    /// `sqlite_autoindex_<table>_<n>`).
    async fn sqlite_unique_keys(db: &Db, table: &str) -> Vec<String> {
        let rows = text_rows(
            db,
            r#"SELECT il.name, ii.name FROM pragma_index_list(?) il, pragma_index_info(il.name) ii
               WHERE il."unique" = 1 AND il.origin = 'u' ORDER BY il.name, ii.seqno"#,
            vec![Arg::from(table)],
            2,
        )
        .await;
        let mut cols: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in rows {
            cols.entry(r[0].clone()).or_default().push(r[1].clone());
        }
        let ddl = text_rows(
            db,
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
            vec![Arg::from(table)],
            1,
        )
        .await
        .concat()
        .concat();
        let mut declared = BTreeMap::new();
        for part in ddl.split("CONSTRAINT ").skip(1) {
            if let Some((name, rest)) = part.split_once(" UNIQUE (") {
                let key = rest
                    .split(')')
                    .next()
                    .unwrap_or_default()
                    .replace(['"', ' '], "");
                declared.insert(key, name.to_string());
            }
        }
        let mut out: Vec<String> = cols
            .values()
            .map(|c| {
                let key = c.join(",");
                format!("{}({key})", declared.get(&key).cloned().unwrap_or_default())
            })
            .collect();
        out.sort();
        out
    }

    /// Go `TestUpgradeCreatesSpecSchema`: our migrations on an empty database
    /// give the schema Magnum's own migrations produce (the spec dumps, plus
    /// our index applied the same way): for MariaDB `SHOW CREATE TABLE` of
    /// both, for PostgreSQL the catalogue (columns, defaults, constraints,
    /// indexes, sequences, types), for SQLite the columns and unique keys of
    /// the MariaDB dump.
    async fn upgrade_creates_spec_schema(d: Dialect) {
        let Some(spec) = spec_dir() else { return };
        let db = migrated(d).await;
        let v = version(&db).await.check("version");
        assert_eq!(
            v,
            SchemaVersion {
                ours: latest_version(),
                alembic: Some(ALEMBIC_HEAD.into())
            }
        );
        // A second upgrade is a no-op.
        let again = upgrade(&db).await.check("second upgrade");
        assert!(again.applied.is_empty(), "{again:?}");
        assert!(has_index(&db, "cluster", "okm_cluster0project_id").await);
        match d {
            Dialect::MySql => {
                let reference = fresh(d).await;
                exec_script(&reference, &read_spec(&spec, "schema-mariadb.sql"), |_| {
                    false
                })
                .await;
                apply_additions(&reference).await;
                for t in std::iter::once("alembic_version").chain(MAGNUM_TABLES) {
                    assert_eq!(
                        show_create(&db, t).await,
                        show_create(&reference, t).await,
                        "table {t} differs from the spec"
                    );
                }
            }
            Dialect::Postgres => {
                let reference = fresh(d).await;
                exec_script(
                    &reference,
                    &read_spec(&spec, "schema-postgresql.sql"),
                    pg_spec_skip,
                )
                .await;
                apply_additions(&reference).await;
                let want = pg_catalog(&reference).await;
                assert!(
                    want.len() >= 130,
                    "spec catalogue has only {} entries",
                    want.len()
                );
                assert_eq!(pg_catalog(&db).await, want);
            }
            Dialect::Sqlite => {
                let want = expected_columns();
                let uniques = mysql_unique_keys(&read_spec(&spec, "schema-mariadb.sql"));
                for t in MAGNUM_TABLES {
                    assert_eq!(
                        live_columns(&db, t).await.check("columns"),
                        want[t],
                        "columns of {t}"
                    );
                    assert_eq!(
                        sqlite_unique_keys(&db, t).await,
                        uniques.get(t).cloned().unwrap_or_default(),
                        "unique keys of {t}"
                    );
                }
            }
        }
    }

    /// The error text of `r` (empty when it is not an error).
    fn message<T>(r: Result<T>) -> String {
        r.err().map(|e| e.to_string()).unwrap_or_default()
    }

    /// Runs a statement as it is.
    async fn exec(db: &Db, sql: &str) {
        db.q().execute_raw(sql.to_string(), sql).await.check(sql);
    }

    /// Go `TestUpgradeRefusesMagnumDatabase`.
    async fn upgrade_refuses_magnum_database(d: Dialect) {
        let Some(db) = magnum_db(d).await else { return };
        let err = message(upgrade(&db).await);
        assert!(
            err.contains("db adopt") && err.contains(ALEMBIC_HEAD),
            "upgrade on a Magnum database = {err:?}"
        );
    }

    async fn mysql_checksums(db: &Db) -> Vec<(String, Option<i64>)> {
        let mut out = Vec::new();
        for t in std::iter::once("alembic_version").chain(MAGNUM_TABLES) {
            let mut r = db
                .q()
                .rows(
                    "checksum",
                    &format!("CHECKSUM TABLE `{t}`"),
                    vec![],
                    &[Kind::Text, Kind::Int],
                )
                .await
                .check("CHECKSUM TABLE");
            out.push((r.string().check("table"), r.int64().check("checksum")));
        }
        out
    }

    /// Go `TestAdopt` "takes over a Magnum database without changing a row".
    async fn adopt_takes_over_without_changing_a_row(d: Dialect) {
        let Some(db) = magnum_db(d).await else { return };
        let before = table_digest(&db).await;
        let checksums = if d == Dialect::MySql {
            mysql_checksums(&db).await
        } else {
            Vec::new()
        };
        assert!(
            !has_index(&db, "cluster", "okm_cluster0project_id").await,
            "Magnum's schema already has our index"
        );
        let report = adopt(&db).await.check("adopt");
        assert_eq!((report.from, report.to), (0, latest_version()));
        assert_eq!(report.applied.first().map(|a| a.name), Some("adopt"));
        let v = version(&db).await.check("version");
        assert_eq!(
            v,
            SchemaVersion {
                ours: latest_version(),
                alembic: Some(ALEMBIC_HEAD.into())
            }
        );
        // Our later migrations (an index, the change counter) are applied by adopt.
        assert!(has_index(&db, "cluster", "okm_cluster0project_id").await);
        table_digest(&db)
            .await
            .assert_same_as(&before, "adopt changed rows");
        if d == Dialect::MySql {
            assert_eq!(
                mysql_checksums(&db).await,
                checksums,
                "CHECKSUM TABLE changed"
            );
        }
        // Adopting again is a no-op; upgrading an adopted database too.
        assert!(adopt(&db).await.check("second adopt").applied.is_empty());
        assert!(
            upgrade(&db)
                .await
                .check("upgrade after adopt")
                .applied
                .is_empty()
        );
        // New rows get ids above the existing ones.
        let mut q = Quota {
            project_id: "other-project".into(),
            resource: "Cluster".into(),
            hard_limit: 5,
            ..Quota::default()
        };
        db.q()
            .create_quota(&mut q)
            .await
            .check("insert after adopt");
        assert_eq!(q.id, 2);
    }

    /// Go `TestAdopt` "refuses another Alembic revision".
    async fn adopt_refuses_another_alembic_revision(d: Dialect) {
        let Some(db) = magnum_db(d).await else { return };
        exec(&db, "UPDATE alembic_version SET version_num = 'abc123'").await;
        let before = table_digest(&db).await;
        let err = adopt(&db).await.err();
        assert!(
            matches!(&err, Some(Error::AlembicRevision { found, .. }) if found == "abc123"),
            "{err:?}"
        );
        let msg = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("abc123") && msg.contains("magnum-db-manage upgrade"),
            "{msg}"
        );
        table_digest(&db)
            .await
            .assert_same_as(&before, "refused adopt changed rows");
        assert_eq!(version(&db).await.check("version").ours, 0);
    }

    /// Go `TestAdopt` "refuses tables that differ".
    async fn adopt_refuses_tables_that_differ(d: Dialect) {
        let Some(db) = magnum_db(d).await else { return };
        exec(&db, "ALTER TABLE nodegroup ADD COLUMN extra_col INTEGER").await;
        let err = message(adopt(&db).await);
        assert!(err.contains("nodegroup.extra_col"), "{err:?}");
        assert_eq!(version(&db).await.check("version").ours, 0);
    }

    /// Go `TestAdopt` "sends an empty database to db upgrade".
    async fn adopt_sends_an_empty_database_to_upgrade(d: Dialect) {
        let db = fresh(d).await;
        let err = message(adopt(&db).await);
        assert!(err.contains("db upgrade"), "{err:?}");
    }

    /// Go `app.CheckSchema` (exercised by the Go e2e suite through `status
    /// upgrade-check` and `api` start-up): each state it refuses, with the
    /// command that fixes it.
    async fn check_schema_refuses_what_it_cannot_serve(d: Dialect) {
        let db = fresh(d).await;
        assert_eq!(
            message(check_schema(&db).await),
            "the database has no schema: run `openkeel-magnum db upgrade`"
        );
        upgrade(&db).await.check("upgrade");
        check_schema(&db).await.check("check_schema after upgrade");
        exec(
            &db,
            "DELETE FROM openkeel_schema_version WHERE version >= 2",
        )
        .await;
        assert_eq!(
            message(check_schema(&db).await),
            "the database schema is at version 1, this release needs 3: run `openkeel-magnum db upgrade`"
        );
        db.q()
            .write(
                "record".into(),
                "INSERT INTO openkeel_schema_version (version, applied_at) VALUES (?, ?)",
                vec![Arg::Int(99), Arg::Time(chrono::NaiveDateTime::default())],
            )
            .await
            .check("record");
        assert_eq!(
            message(check_schema(&db).await),
            "the database schema is at version 99, newer than this release knows (3)"
        );
        let err = message(upgrade(&db).await.map(drop));
        assert!(err.contains("newer than this build knows"), "{err}");
        if let Some(magnum) = magnum_db(d).await {
            assert_eq!(
                message(check_schema(&magnum).await),
                "the database is a Magnum database (Alembic b3e1cf4a2d5e) not yet adopted: run `openkeel-magnum db adopt`"
            );
        }
    }

    /// The value of `key` in a JSON object column.
    fn entry<'a>(m: &'a Option<magnum_domain::models::StringMap>, key: &str) -> Option<&'a str> {
        m.as_ref()?.get(key).map(String::as_str)
    }

    /// Go `TestReadMagnumRows`: the rows Magnum 23.0.0 wrote (the spec's
    /// sample data) read through the repositories, after adopt.
    async fn read_magnum_rows(d: Dialect) {
        use crate::testing::string_map;
        use crate::{ClusterFilter, ListOptions, NodeGroupFilter, Scope, TemplateScope};
        use magnum_domain::Status;

        let Some(db) = magnum_db(d).await else { return };
        adopt(&db).await.check("adopt");
        const TENANT: &str = "8c1f4b2ba1c94e5c9a5d1f0e3b7a6d21";
        let tenant = Scope::project(TENANT);
        let clusters = db
            .q()
            .get_clusters_by_name("K8S-PROD-1", &tenant)
            .await
            .check("by name");
        assert_eq!(clusters.len(), 1);
        let c = &clusters[0];
        assert_eq!(
            (c.id, c.uuid.as_str()),
            (1, "8a09e93b-302c-4cc5-98c3-e24c1da2f172")
        );
        assert_eq!(c.status, Some(Status::UpdateComplete));
        assert_eq!(
            (c.floating_ip_enabled, c.master_lb_enabled),
            (Some(false), Some(true))
        );
        assert_eq!(
            (c.create_timeout, c.container_version.as_deref()),
            (Some(60), None)
        );
        let created =
            chrono::NaiveDate::from_ymd_opt(2026, 11, 30).and_then(|d| d.and_hms_opt(1, 48, 7));
        assert_eq!(Some(c.created_at), created);
        assert_eq!(
            c.labels,
            Some(string_map(&[
                ("kube_tag", "v1.30.4"),
                ("cinder_csi_enabled", "true"),
                ("auto_healing_enabled", "true"),
                ("auto_healing_controller", "magnum-auto-healer"),
                ("boot_volume_size", "40"),
                ("min_node_count", "1"),
                ("max_node_count", "5"),
            ]))
        );
        let reason = &c.health_status_reason;
        assert_eq!(entry(reason, "api"), Some("ok"));
        assert_eq!(
            entry(reason, "kube-8a09e-control-plane-x2bz9.Ready"),
            Some("True")
        );

        let all = db
            .q()
            .list_clusters(
                &ClusterFilter::scope(tenant.clone()),
                &ListOptions::default(),
            )
            .await
            .check("list");
        assert_eq!(all.len(), 3);
        let template_ids: Vec<String> = all.iter().map(|c| c.cluster_template_id.clone()).collect();
        let templates = db
            .q()
            .get_cluster_templates_by_uuids(&template_ids, &TemplateScope::new(tenant.clone()))
            .await
            .check("templates");
        assert_eq!(templates.len(), 2);
        let public = &templates["78579b4d-8f4c-4006-a2a9-411bdeaeffe9"];
        assert_eq!(public.public, Some(true));
        assert_eq!(public.driver.as_deref(), Some("k8s_cluster_api_ubuntu"));
        assert_eq!(public.server_type.as_deref(), Some("vm"));

        let gpu = db
            .q()
            .get_nodegroups_by_name(&c.uuid, "gpu-pool", &tenant)
            .await
            .check("gpu");
        assert_eq!(gpu.len(), 1);
        assert_eq!(
            gpu[0].node_taints,
            Some(vec![string_map(&[
                ("key", "nvidia.com/gpu"),
                ("value", "true"),
                ("effect", "NoSchedule")
            ])])
        );
        assert_eq!(
            (gpu[0].min_node_count, gpu[0].max_node_count),
            (Some(0), Some(3))
        );
        assert_eq!(gpu[0].is_default, Some(false));
        assert_eq!(
            entry(&gpu[0].node_labels, "nvidia.com/gpu.present"),
            Some("true")
        );
        let masters = db
            .q()
            .list_nodegroups(
                &NodeGroupFilter {
                    role: Some("master".into()),
                    ..NodeGroupFilter::cluster(&c.uuid)
                },
                &ListOptions::default(),
            )
            .await
            .check("masters");
        assert_eq!(masters.len(), 1);
        let addresses = masters[0].node_addresses.clone().unwrap_or_default();
        assert_eq!(addresses.first().map(String::as_str), Some("10.0.0.11"));
        assert_eq!(
            db.q().cluster_stats(Some(TENANT)).await.check("stats"),
            (3, 8)
        );

        let services = db.q().list_magnum_services().await.check("services");
        assert_eq!(services.len(), 1);
        assert_eq!(
            (services[0].report_count, services[0].binary.as_str()),
            (3, "magnum-conductor")
        );
        assert!(services[0].last_seen_up.is_some());
        let feds = db
            .q()
            .list_federations(&tenant, &ListOptions::default())
            .await
            .check("federations");
        assert_eq!(feds.len(), 1);
        assert_eq!(entry(&feds[0].properties, "dns-zone"), Some("example.com."));
        assert_eq!(feds[0].member_ids, Some(vec![]));
        let q = db.q().get_quota(TENANT, "Cluster").await.check("quota");
        assert_eq!(q.hard_limit, 10);
        let ca_ref = c.ca_cert_ref.clone().unwrap_or_default();
        let ca = db
            .q()
            .get_x509keypair_by_uuid(&ca_ref, &tenant)
            .await
            .check("CA key pair");
        assert!(ca.certificate.is_some() && ca.private_key_passphrase.is_some());
        assert!(ca.intermediates.is_none());
        let kps = db
            .q()
            .list_x509keypairs(&tenant, &ListOptions::default())
            .await
            .check("key pairs");
        assert_eq!(kps.len(), 12);
    }
}
