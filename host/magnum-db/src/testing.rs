//! Test fixtures: one fresh database per test on each dialect, the spec's
//! schema dumps and sample rows, row digests.
//!
//! MariaDB and PostgreSQL come from `OKM_TEST_MYSQL_URL` and
//! `OKM_TEST_POSTGRES_URL` (a user that may create and drop databases); a
//! test of a dialect whose variable is unset is skipped with a message, and
//! fails when `CI=true`. SQLite always runs, on temporary files.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::path::PathBuf;

use chrono::NaiveDateTime;

use super::exec::{Arg, Kind};
use super::migrate::{expected_columns, migrations, split_sql};
use super::queries::quote;
use super::{Db, DbTarget, Dialect, Error, Hooks, MAGNUM_TABLES};
pub use test_support::rows::Rows;

fn env_var(d: Dialect) -> &'static str {
    match d {
        Dialect::MySql => "OKM_TEST_MYSQL_URL",
        Dialect::Postgres => "OKM_TEST_POSTGRES_URL",
        Dialect::Sqlite => "",
    }
}

/// Whether tests of `d` can run: SQLite always; the others when their URL
/// variable is set. Unset on CI is a failure.
pub fn available(d: Dialect) -> bool {
    if d == Dialect::Sqlite {
        return true;
    }
    let var = env_var(d);
    if std::env::var(var).is_ok_and(|v| !v.is_empty()) {
        return true;
    }
    test_support::missing(&format!("{var} is not set, for the {d} test"));
    false
}

/// Generates, for each named `async fn name(d: Dialect)`, a module with one
/// test per dialect (`name::sqlite`, `name::mysql`, `name::postgres`).
#[macro_export]
macro_rules! dialect_tests {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::$name($crate::Dialect::Sqlite).await
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn mysql() {
                    if $crate::testing::available($crate::Dialect::MySql) {
                        super::$name($crate::Dialect::MySql).await
                    }
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if $crate::testing::available($crate::Dialect::Postgres) {
                        super::$name($crate::Dialect::Postgres).await
                    }
                }
            }
        )+
    };
}
pub use crate::dialect_tests;

/// Unwraps a result of the code under test with the error in the panic.
pub trait Check<T> {
    fn check(self, what: &str) -> T;
}

impl<T, E: std::fmt::Display> Check<T> for Result<T, E> {
    #[track_caller]
    fn check(self, what: &str) -> T {
        match self {
            Ok(v) => v,
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

/// A database created for one test, dropped when the value is.
pub struct TestDb {
    pub db: Db,
    _guard: Guard,
}

impl Deref for TestDb {
    type Target = Db;

    fn deref(&self) -> &Db {
        &self.db
    }
}

enum Guard {
    File(#[allow(dead_code)] tempfile::TempDir),
    Server {
        dialect: Dialect,
        admin_url: String,
        name: String,
    },
}

impl Drop for Guard {
    fn drop(&mut self) {
        let Guard::Server {
            dialect,
            admin_url,
            name,
        } = self
        else {
            return;
        };
        let (dialect, admin_url, name) = (*dialect, admin_url.clone(), name.clone());
        let shown = name.clone();
        // Drop is synchronous and may run inside the test's runtime: the
        // database is dropped from a thread with a runtime of its own.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                let sql = match dialect {
                    Dialect::MySql => format!("DROP DATABASE IF EXISTS {name}"),
                    _ => format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                };
                admin_exec(dialect, &admin_url, &sql).await
            })
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("drop test database {shown}: {e}"),
            Err(_) => eprintln!("drop test database {shown}: the thread panicked"),
        }
    }
}

async fn admin_exec(d: Dialect, url: &str, sql: &str) -> Result<(), String> {
    match d {
        Dialect::MySql => exec_once::<sqlx::MySql>(url, sql).await,
        Dialect::Postgres => exec_once::<sqlx::Postgres>(url, sql).await,
        Dialect::Sqlite => Ok(()),
    }
}

/// Runs one statement on a connection of its own to `url`.
async fn exec_once<D: sqlx::Database>(url: &str, sql: &str) -> Result<(), String>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
{
    use sqlx::Executor;
    let pool = sqlx::pool::PoolOptions::<D>::new()
        .max_connections(1)
        .connect(url)
        .await
        .map_err(|e| e.to_string())?;
    let r = pool
        .execute(sqlx::AssertSqlSafe(sql.to_string()))
        .await
        .map(drop)
        .map_err(|e| e.to_string());
    pool.close().await;
    r
}

/// A name for a test database or file: `okm_db_` and 12 random hex digits.
pub fn random_name() -> String {
    let u = uuid::Uuid::new_v4().simple().to_string();
    format!("okm_db_{}", &u[..12])
}

/// An empty database of the dialect, with the default pool settings
/// changed by `tweak`, opened with `hooks`.
pub async fn fresh_with(d: Dialect, hooks: Hooks, tweak: impl FnOnce(&mut DbTarget)) -> TestDb {
    let name = random_name();
    let (url, guard) = match d {
        Dialect::Sqlite => {
            let dir = tempfile::tempdir().check("temporary directory");
            let path = dir.path().join(format!("{name}.db"));
            (format!("sqlite://{}", path.display()), Guard::File(dir))
        }
        _ => {
            let admin_url = std::env::var(env_var(d)).check(env_var(d));
            let create = match d {
                Dialect::MySql => format!(
                    "CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
                ),
                _ => format!("CREATE DATABASE {name}"),
            };
            admin_exec(d, &admin_url, &create)
                .await
                .check("create the test database");
            let mut u = url::Url::parse(&admin_url).check("test database URL");
            u.set_path(&format!("/{name}"));
            (
                u.to_string(),
                Guard::Server {
                    dialect: d,
                    admin_url,
                    name,
                },
            )
        }
    };
    let mut target = DbTarget::new(d, url);
    tweak(&mut target);
    let db = Db::open_with(&target, hooks).await.check("open");
    TestDb { db, _guard: guard }
}

/// An empty database of the dialect.
pub async fn fresh(d: Dialect) -> TestDb {
    fresh_with(d, Hooks::default(), |_| {}).await
}

/// An empty database with a clock.
pub async fn fresh_clocked(d: Dialect, clock: super::Clock) -> TestDb {
    let hooks = Hooks {
        clock: Some(clock),
        on_retry: None,
    };
    fresh_with(d, hooks, |_| {}).await
}

/// An empty database upgraded to our schema.
pub async fn migrated(d: Dialect) -> TestDb {
    let db = fresh(d).await;
    super::upgrade(&db).await.check("upgrade");
    db
}

/// Go `newCluster`: cluster `i` of `project`, with two labels.
pub fn new_cluster(i: u32, project: &str) -> magnum_domain::models::Cluster {
    magnum_domain::models::Cluster {
        uuid: format!("00000000-0000-4000-8000-{i:012}"),
        name: format!("cluster-{i}"),
        project_id: project.into(),
        user_id: format!("user-{project}"),
        cluster_template_id: "tmpl-uuid".into(),
        status: Some(magnum_domain::Status::CreateInProgress),
        labels: Some(string_map(&[
            ("kube_tag", "v1.30.4"),
            ("boot_volume_size", "40"),
        ])),
        ..Default::default()
    }
}

/// A clock that advances one second per call, from 2026-11-30 01:48:07.123456789.
pub fn ticking_clock() -> super::Clock {
    let start = chrono::NaiveDate::from_ymd_opt(2026, 11, 30)
        .and_then(|d| d.and_hms_nano_opt(1, 48, 7, 123_456_789))
        .unwrap_or_default();
    let ticks = std::sync::atomic::AtomicI64::new(0);
    std::sync::Arc::new(move || {
        let n = ticks.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        start + chrono::TimeDelta::seconds(n)
    })
}

/// Go `newTemplate`.
pub fn new_template(
    i: u32,
    project: &str,
    public: bool,
    hidden: bool,
) -> magnum_domain::models::ClusterTemplate {
    magnum_domain::models::ClusterTemplate {
        uuid: format!("10000000-0000-4000-8000-{i:012}"),
        name: format!("tmpl-{i}"),
        project_id: project.into(),
        user_id: format!("user-{project}"),
        coe: Some("kubernetes".into()),
        image_id: Some("ubuntu".into()),
        public: Some(public),
        hidden: Some(hidden),
        ..Default::default()
    }
}

/// Go `newNodeGroup`: a worker nodegroup of one node with a fresh uuid.
pub fn new_nodegroup(
    cluster_id: &str,
    name: &str,
    project: &str,
) -> magnum_domain::models::NodeGroup {
    magnum_domain::models::NodeGroup {
        uuid: uuid::Uuid::new_v4().to_string(),
        name: name.into(),
        cluster_id: cluster_id.into(),
        project_id: project.into(),
        role: Some("worker".into()),
        node_count: Some(1),
        ..Default::default()
    }
}

/// A `Cluster` quota of `project` with `limit`.
pub fn new_quota(project: &str, limit: i32) -> magnum_domain::models::Quota {
    magnum_domain::models::Quota {
        project_id: project.into(),
        resource: "Cluster".into(),
        hard_limit: limit,
        ..Default::default()
    }
}

/// A string map from pairs.
pub fn string_map(pairs: &[(&str, &str)]) -> magnum_domain::models::StringMap {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The spec directory (`$OKM_SPEC_DIR`), when it holds the `db/` dumps;
/// `None` (skip) when it does not, a failure when `CI=true`.
pub fn spec_dir() -> Option<PathBuf> {
    let dir = test_support::spec_dir();
    if dir.join("db").is_dir() {
        return Some(dir);
    }
    test_support::missing(&format!(
        "spec directory {} (set OKM_SPEC_DIR)",
        dir.display()
    ));
    None
}

/// A file of the spec's `db/` directory.
pub fn read_spec(spec: &std::path::Path, name: &str) -> String {
    let p = spec.join("db").join(name);
    std::fs::read_to_string(&p).check(&p.display().to_string())
}

/// Runs a dump file statement by statement on one connection (so that
/// session settings hold), skipping what `skip` says.
pub async fn exec_script(db: &Db, script: &str, skip: fn(&str) -> bool) {
    let stmts: Vec<String> = split_sql(script).into_iter().filter(|s| !skip(s)).collect();
    let stmts = &stmts;
    db.in_tx(|tx| {
        Box::pin(async move {
            let mut q = tx.q();
            for s in stmts {
                let head: String = s.chars().take(200).collect();
                q.execute_raw(format!("exec {head}"), s).await?;
            }
            Ok::<_, Error>(())
        })
    })
    .await
    .check("exec script");
}

/// The statements of a pg_dump that need psql or a role we do not have.
pub fn pg_spec_skip(s: &str) -> bool {
    s.starts_with("SET ") || s.starts_with("SELECT pg_catalog.set_config") || s.contains("OWNER TO")
}

pub fn no_skip(_: &str) -> bool {
    false
}

/// A database as Python Magnum leaves it: the spec's schema and the sample
/// rows, without our version table. `None` without the spec.
pub async fn magnum_db(d: Dialect) -> Option<TestDb> {
    let spec = spec_dir()?;
    let db = fresh(d).await;
    match d {
        Dialect::MySql => {
            // The dumps themselves, byte for byte.
            exec_script(&db, &read_spec(&spec, "schema-mariadb.sql"), no_skip).await;
            exec_script(&db, &read_spec(&spec, "sample-data-mariadb.sql"), no_skip).await;
            return Some(db);
        }
        Dialect::Postgres => {
            exec_script(
                &db,
                &read_spec(&spec, "schema-postgresql.sql"),
                pg_spec_skip,
            )
            .await;
        }
        Dialect::Sqlite => {
            let m = migrations(Dialect::Sqlite);
            let first = m
                .first()
                .map(|m| m.stmts.join(";\n") + ";\n")
                .unwrap_or_default();
            exec_script(&db, &first, |s| {
                s.starts_with("INSERT INTO alembic_version")
            })
            .await;
        }
    }
    load_sample_rows(&db, &spec).await;
    Some(db)
}

/// The column kinds of Magnum's tables (and `alembic_version`), by
/// `table.column`.
fn column_kinds() -> BTreeMap<String, Kind> {
    let mut out = BTreeMap::new();
    for (table, cols) in expected_columns() {
        for c in cols {
            let kind = match c.ty.as_str() {
                "int" => Kind::Int,
                "bool" => Kind::Bool,
                "datetime" => Kind::Time,
                _ => Kind::Text,
            };
            out.insert(format!("{table}.{}", c.name), kind);
        }
    }
    out
}

/// Inserts the rows of `sample-data-mariadb.sql` through parameterised
/// statements, so that they load into any dialect (booleans and timestamps
/// converted to the dialect's types).
pub async fn load_sample_rows(db: &Db, spec: &std::path::Path) {
    let kinds = column_kinds();
    let mut n = 0;
    for line in read_spec(spec, "sample-data-mariadb.sql").lines() {
        let Some((table, cols, values)) = parse_insert(line) else {
            continue;
        };
        assert_eq!(cols.len(), values.len(), "{table}: columns and values");
        let mut args = Vec::new();
        for (c, v) in cols.iter().zip(values) {
            let kind = kinds
                .get(&format!("{table}.{c}"))
                .copied()
                .unwrap_or(Kind::Text);
            args.push(match (v, kind) {
                (None, k) => Arg::Null(k),
                (Some(v), Kind::Bool) => Arg::Bool(v != "0"),
                (Some(v), Kind::Int) => Arg::Int(v.parse().check(&format!("{table}.{c}"))),
                (Some(v), Kind::Time) => Arg::Time(
                    NaiveDateTime::parse_from_str(&v, "%Y-%m-%d %H:%M:%S")
                        .check(&format!("{table}.{c}")),
                ),
                (Some(v), Kind::Text) => Arg::Text(v),
            });
        }
        let quoted: Vec<String> = cols.iter().map(|c| quote(c)).collect();
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            quote(&table),
            quoted.join(", "),
            vec!["?"; cols.len()].join(", ")
        );
        db.q()
            .write(format!("insert {table}"), &sql, args)
            .await
            .check("insert a sample row");
        n += 1;
    }
    assert_eq!(n, 28, "sample rows loaded");
    if db.dialect() == Dialect::Postgres {
        // Explicit ids do not move the sequences; Magnum's own inserts did.
        for t in MAGNUM_TABLES {
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence('{t}', 'id'), COALESCE((SELECT MAX(id) FROM {t}), 0) + 1, false)"
            );
            db.q().scalar("setval", &sql, vec![]).await.check("setval");
        }
    }
}

/// Parses a mysqldump `INSERT INTO `t` (`a`, `b`) VALUES (…);` line.
fn parse_insert(line: &str) -> Option<(String, Vec<String>, Vec<Option<String>>)> {
    let rest = line.strip_prefix("INSERT INTO `")?;
    let (table, rest) = rest.split_once("` (")?;
    let (cols, rest) = rest.split_once(") VALUES (")?;
    let values = rest.strip_suffix(");")?;
    let cols = cols
        .split(", ")
        .map(|c| c.trim_matches('`').to_string())
        .collect();
    Some((table.to_string(), cols, parse_mysql_values(values)?))
}

/// Parses the value list of a mysqldump INSERT: NULL, numbers (as text)
/// and quoted strings with backslash escapes.
fn parse_mysql_values(s: &str) -> Option<Vec<Option<String>>> {
    let b: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(&['N', 'U', 'L', 'L']) {
            out.push(None);
            i += 4;
        } else if b[i] == '\'' {
            let mut v = String::new();
            i += 1;
            while i < b.len() && b[i] != '\'' {
                if b[i] == '\\' && i + 1 < b.len() {
                    i += 1;
                    v.push(match b[i] {
                        'n' => '\n',
                        'r' => '\r',
                        't' => '\t',
                        '0' => '\0',
                        'Z' => '\u{1a}',
                        c => c,
                    });
                } else {
                    v.push(b[i]);
                }
                i += 1;
            }
            if i >= b.len() {
                return None;
            }
            i += 1;
            out.push(Some(v));
        } else {
            let start = i;
            while i < b.len() && b[i] != ',' {
                i += 1;
            }
            out.push(Some(
                b[start..i].iter().collect::<String>().trim().to_string(),
            ));
        }
        if i < b.len() {
            if b[i] != ',' {
                return None;
            }
            i += 1;
        }
    }
    Some(out)
}

/// Every row of every Magnum table (and `alembic_version`), each cell
/// rendered as text: equal readings mean identical rows, and
/// [`Rows::assert_same_as`] names the rows that differ.
pub async fn table_digest(db: &Db) -> Rows {
    let expected = expected_columns();
    let mut out = Rows::default();
    for table in std::iter::once("alembic_version").chain(MAGNUM_TABLES) {
        let cols = &expected[table];
        let kinds: Vec<Kind> = column_kinds_of(table, cols);
        let names: Vec<String> = cols.iter().map(|c| quote(&c.name)).collect();
        let sql = format!("SELECT {} FROM {}", names.join(", "), quote(table));
        let mut r = db
            .q()
            .rows("digest", &sql, vec![], &kinds)
            .await
            .check("digest");
        let mut rows = Vec::new();
        while !r.is_empty() {
            let row: Vec<String> = (0..kinds.len())
                .map(|_| format!("{:?}", r.next().check("digest cell")))
                .collect();
            rows.push(row);
        }
        out.insert(table, cols.iter().map(|c| c.name.clone()).collect(), rows);
    }
    out
}

fn column_kinds_of(table: &str, cols: &[super::Column]) -> Vec<Kind> {
    let kinds = column_kinds();
    cols.iter()
        .map(|c| {
            kinds
                .get(&format!("{table}.{}", c.name))
                .copied()
                .unwrap_or(Kind::Text)
        })
        .collect()
}

/// Whether `table` has an index named `name`.
pub async fn has_index(db: &Db, table: &str, name: &str) -> bool {
    let sql = match db.dialect() {
        Dialect::MySql => {
            "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?"
        }
        Dialect::Postgres => {
            "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ? AND indexname = ?"
        }
        Dialect::Sqlite => {
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name = ?"
        }
    };
    db.q()
        .scalar("index", sql, vec![Arg::from(table), Arg::from(name)])
        .await
        .check("has index")
        > 0
}

/// Text cells of a query, row by row (catalogue reads of the tests).
#[cfg(test)]
pub(crate) async fn text_rows(
    db: &Db,
    sql: &str,
    args: Vec<Arg>,
    width: usize,
) -> Vec<Vec<String>> {
    let kinds = vec![Kind::Text; width];
    let mut r = db.q().rows("catalogue", sql, args, &kinds).await.check(sql);
    let mut out = Vec::new();
    while !r.is_empty() {
        let mut row = Vec::new();
        for _ in 0..width {
            row.push(r.text().check("text cell").unwrap_or_default());
        }
        out.push(row);
    }
    out
}

#[test]
fn mysql_values_parse() {
    assert_eq!(
        parse_mysql_values(r"NULL,1,'a\'b\\c\nd','x,y'"),
        Some(vec![
            None,
            Some("1".into()),
            Some("a'b\\c\nd".into()),
            Some("x,y".into())
        ])
    );
    assert_eq!(parse_mysql_values("'open"), None);
    let (t, cols, vals) = parse_insert("INSERT INTO `quotas` (`id`, `hard_limit`) VALUES (1,10);")
        .unwrap_or_default();
    assert_eq!((t.as_str(), cols.len(), vals.len()), ("quotas", 2, 2));
}
