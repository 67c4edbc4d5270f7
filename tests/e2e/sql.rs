//! Direct SQL for the suites that prepare or inspect a database beside the
//! binary: fresh MariaDB and PostgreSQL databases, SQL scripts, and a
//! snapshot of every table (definition and rows) to prove that nothing
//! changed.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};
use sqlx::{Connection, Executor, MySqlConnection, PgConnection, Row};

/// The server kinds a snapshot knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    MySql,
    Postgres,
}

/// A current-thread runtime for the blocking tests.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Splits an SQL script into statements at the semicolons outside quoted
/// strings ('…', "…", `…`, with backslash escapes in '…' and "…" as MariaDB
/// reads them) and outside comments. "-- " line comments and plain /* */
/// comments are dropped; MariaDB's executable comments (/*!NNNNN … */) are
/// kept, since they are statements.
pub fn split_statements(script: &str) -> Vec<String> {
    let s = script.as_bytes();
    let mut out = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let flush = |cur: &mut Vec<u8>, out: &mut Vec<String>| {
        let text = String::from_utf8_lossy(cur).trim().to_string();
        if !text.is_empty() {
            out.push(text);
        }
        cur.clear();
    };
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        match c {
            b'\'' | b'"' | b'`' => {
                let mut j = i + 1;
                while j < s.len() {
                    if s[j] == b'\\' && c != b'`' {
                        j += 2;
                        continue;
                    }
                    if s[j] == c {
                        if j + 1 < s.len() && s[j + 1] == c {
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    j += 1;
                }
                let j = j.min(s.len() - 1);
                cur.extend_from_slice(&s[i..=j]);
                i = j + 1;
            }
            b'-' if s[i..].starts_with(b"--")
                && (i + 2 == s.len() || matches!(s[i + 2], b' ' | b'\t' | b'\n' | b'\r')) =>
            {
                match s[i..].iter().position(|&b| b == b'\n') {
                    None => i = s.len(),
                    Some(j) => {
                        cur.push(b'\n');
                        i += j + 1;
                    }
                }
            }
            b'/' if s[i..].starts_with(b"/*") => {
                let end = s[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(s.len(), |j| i + 2 + j + 2);
                if s[i..].starts_with(b"/*!") {
                    cur.extend_from_slice(&s[i..end]);
                } else {
                    cur.push(b' ');
                }
                i = end;
            }
            b';' => {
                flush(&mut cur, &mut out);
                i += 1;
            }
            _ => {
                cur.push(c);
                i += 1;
            }
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// A connection to a database made for one test, dropped with it.
pub enum Conn {
    MySql(MySqlConnection),
    Postgres(PgConnection),
}

/// A database created for one test on a shared server: dropped on drop.
pub struct FreshDb {
    pub name: String,
    /// The SQLAlchemy URL Magnum's configuration would name it with.
    pub sqlalchemy_url: String,
    /// The URL sqlx connects to.
    pub url: String,
    admin_url: String,
    pub dialect: Dialect,
}

fn random_suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_string()
}

impl FreshDb {
    /// Creates `<prefix><random>` on the server of `server_url` (a
    /// `mysql://` or `postgres://` URL naming any database).
    pub fn create(rt: &tokio::runtime::Runtime, server_url: &str, prefix: &str) -> FreshDb {
        let mut u = url::Url::parse(server_url).expect("database URL");
        let name = format!("{prefix}{}", random_suffix());
        let dialect = if u.scheme().starts_with("mysql") {
            Dialect::MySql
        } else {
            Dialect::Postgres
        };
        let admin_url = u.to_string();
        rt.block_on(async {
            match dialect {
                Dialect::MySql => {
                    let mut c = MySqlConnection::connect(&admin_url).await.expect("MariaDB");
                    c.execute(sqlx::AssertSqlSafe(format!(
                        "CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
                    )))
                    .await
                    .expect("create database");
                }
                Dialect::Postgres => {
                    let mut c = PgConnection::connect(&admin_url).await.expect("PostgreSQL");
                    c.execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                        .await
                        .expect("create database");
                }
            }
        });
        u.set_path(&format!("/{name}"));
        u.set_query(None);
        let url = u.to_string();
        let sqlalchemy_url = match dialect {
            Dialect::MySql => {
                format!(
                    "{}?charset=utf8mb4",
                    url.replacen("mysql://", "mysql+pymysql://", 1)
                )
            }
            Dialect::Postgres => url
                .replacen("postgres://", "postgresql+psycopg2://", 1)
                .replacen("postgresql://", "postgresql+psycopg2://", 1),
        };
        FreshDb {
            name,
            sqlalchemy_url,
            url,
            admin_url,
            dialect,
        }
    }

    pub fn connect(&self, rt: &tokio::runtime::Runtime) -> Conn {
        rt.block_on(async {
            match self.dialect {
                Dialect::MySql => {
                    Conn::MySql(MySqlConnection::connect(&self.url).await.expect("MariaDB"))
                }
                Dialect::Postgres => {
                    Conn::Postgres(PgConnection::connect(&self.url).await.expect("PostgreSQL"))
                }
            }
        })
    }
}

impl Drop for FreshDb {
    fn drop(&mut self) {
        let rt = runtime();
        let (admin, name, dialect) = (self.admin_url.clone(), self.name.clone(), self.dialect);
        rt.block_on(async move {
            let res = match dialect {
                Dialect::MySql => match MySqlConnection::connect(&admin).await {
                    Ok(mut c) => c
                        .execute(sqlx::AssertSqlSafe(format!(
                            "DROP DATABASE IF EXISTS {name}"
                        )))
                        .await
                        .map(|_| ()),
                    Err(e) => Err(e),
                },
                Dialect::Postgres => match PgConnection::connect(&admin).await {
                    Ok(mut c) => c
                        .execute(sqlx::AssertSqlSafe(format!(
                            "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                        )))
                        .await
                        .map(|_| ()),
                    Err(e) => Err(e),
                },
            };
            if let Err(e) = res {
                eprintln!("drop database {name}: {e}");
            }
        });
    }
}

impl Conn {
    /// Runs one statement through the text protocol (no preparation, so
    /// that a dump's session statements work).
    pub fn exec(&mut self, rt: &tokio::runtime::Runtime, sql: &str) -> Result<(), sqlx::Error> {
        rt.block_on(async {
            match self {
                Conn::MySql(c) => c
                    .execute(sqlx::AssertSqlSafe(sql.to_string()))
                    .await
                    .map(|_| ()),
                Conn::Postgres(c) => c
                    .execute(sqlx::AssertSqlSafe(sql.to_string()))
                    .await
                    .map(|_| ()),
            }
        })
    }

    /// Every statement of `script` except those `skip` drops; the number
    /// run.
    pub fn exec_script(
        &mut self,
        rt: &tokio::runtime::Runtime,
        script: &str,
        mut skip: impl FnMut(&str) -> bool,
    ) -> usize {
        let mut n = 0;
        for s in split_statements(script) {
            if skip(&s) {
                continue;
            }
            if let Err(e) = self.exec(rt, &s) {
                panic!("exec {:.200}: {e}", s);
            }
            n += 1;
        }
        n
    }

    /// Rows of a query whose every column is text (or NULL).
    pub fn text_rows(
        &mut self,
        rt: &tokio::runtime::Runtime,
        sql: &str,
    ) -> Vec<Vec<Option<String>>> {
        rt.block_on(async {
            match self {
                Conn::MySql(c) => {
                    let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
                        .fetch_all(c)
                        .await;
                    let rows = rows.unwrap_or_else(|e| panic!("{sql}: {e}"));
                    rows.iter()
                        .map(|r| {
                            (0..r.len())
                                .map(|i| {
                                    r.try_get::<Option<String>, _>(i)
                                        .or_else(|_| {
                                            r.try_get::<Option<Vec<u8>>, _>(i).map(|v| {
                                                v.map(|b| String::from_utf8_lossy(&b).into_owned())
                                            })
                                        })
                                        .or_else(|_| {
                                            r.try_get::<Option<i64>, _>(i)
                                                .map(|v| v.map(|n| n.to_string()))
                                        })
                                        .or_else(|_| {
                                            r.try_get::<Option<u64>, _>(i)
                                                .map(|v| v.map(|n| n.to_string()))
                                        })
                                        .unwrap_or_else(|e| panic!("{sql}: column {i}: {e}"))
                                })
                                .collect()
                        })
                        .collect()
                }
                Conn::Postgres(c) => {
                    let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
                        .fetch_all(c)
                        .await;
                    let rows = rows.unwrap_or_else(|e| panic!("{sql}: {e}"));
                    rows.iter()
                        .map(|r| {
                            (0..r.len())
                                .map(|i| {
                                    r.try_get::<Option<String>, _>(i)
                                        .or_else(|_| {
                                            r.try_get::<Option<i64>, _>(i)
                                                .map(|v| v.map(|n| n.to_string()))
                                        })
                                        .or_else(|_| {
                                            r.try_get::<Option<i32>, _>(i)
                                                .map(|v| v.map(|n| n.to_string()))
                                        })
                                        .unwrap_or_else(|e| panic!("{sql}: column {i}: {e}"))
                                })
                                .collect()
                        })
                        .collect()
                }
            }
        })
    }
}

/// What a table holds: its definition and its rows, rendered as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableState {
    pub ddl: String,
    pub rows: Vec<String>,
}

impl TableState {
    /// The SHA-256 over the definition and the rows.
    pub fn sum(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.ddl.as_bytes());
        h.update([0]);
        h.update(self.rows.join("\n").as_bytes());
        hex::encode(h.finalize())
    }
}

fn quote(dialect: Dialect, ident: &str) -> String {
    match dialect {
        Dialect::MySql => format!("`{ident}`"),
        Dialect::Postgres => format!("\"{ident}\""),
    }
}

/// Every table of the database (or the named ones): the definition as the
/// server prints it (on MariaDB with `CHECKSUM TABLE … EXTENDED`), and
/// every row rendered column by column as text, in a total order.
pub fn snapshot(
    rt: &tokio::runtime::Runtime,
    conn: &mut Conn,
    dialect: Dialect,
    names: Option<&[String]>,
) -> BTreeMap<String, TableState> {
    let names: Vec<String> = match names {
        Some(n) => n.to_vec(),
        None => {
            let q = match dialect {
                Dialect::MySql => {
                    "SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1"
                }
                Dialect::Postgres => {
                    "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
                }
            };
            conn.text_rows(rt, q)
                .into_iter()
                .filter_map(|r| r.into_iter().next().flatten())
                .collect()
        }
    };
    let mut out = BTreeMap::new();
    for tbl in names {
        let q = quote(dialect, &tbl);
        let ddl = match dialect {
            Dialect::MySql => {
                let create = conn.text_rows(rt, &format!("SHOW CREATE TABLE {q}"));
                let ddl = create
                    .first()
                    .and_then(|r| r.get(1).cloned().flatten())
                    .unwrap_or_default();
                let ck = conn.text_rows(rt, &format!("CHECKSUM TABLE {q} EXTENDED"));
                let sum = ck
                    .first()
                    .and_then(|r| r.get(1).cloned().flatten())
                    .unwrap_or_default();
                // AUTO_INCREMENT=N in the definition is the next id: part of
                // the state.
                format!("{ddl}\nCHECKSUM {sum}")
            }
            Dialect::Postgres => {
                let mut b = String::new();
                for r in conn.text_rows(
                    rt,
                    &format!(
                        "SELECT column_name::text, data_type::text, COALESCE(character_maximum_length, 0)::text, \
                         is_nullable::text, COALESCE(column_default, '')::text FROM information_schema.columns \
                         WHERE table_schema = 'public' AND table_name = '{tbl}' ORDER BY ordinal_position"
                    ),
                ) {
                    let f = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                    b.push_str(&format!(
                        "{} {}({}) null={} default={}\n",
                        f(0),
                        f(1),
                        f(2),
                        f(3),
                        f(4)
                    ));
                }
                for r in conn.text_rows(
                    rt,
                    &format!(
                        "SELECT indexdef::text FROM pg_indexes WHERE schemaname = 'public' AND tablename = '{tbl}' ORDER BY indexname"
                    ),
                ) {
                    b.push_str(&r.into_iter().next().flatten().unwrap_or_default());
                    b.push('\n');
                }
                b
            }
        };
        let cols: Vec<String> = conn
            .text_rows(
                rt,
                &match dialect {
                    Dialect::MySql => format!(
                        "SELECT CAST(column_name AS CHAR) FROM information_schema.columns \
                         WHERE table_schema = DATABASE() AND table_name = '{tbl}' ORDER BY ordinal_position"
                    ),
                    Dialect::Postgres => format!(
                        "SELECT column_name::text FROM information_schema.columns \
                         WHERE table_schema = 'public' AND table_name = '{tbl}' ORDER BY ordinal_position"
                    ),
                },
            )
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect();
        let select: Vec<String> = cols
            .iter()
            .map(|c| match dialect {
                Dialect::MySql => format!("CAST(`{c}` AS CHAR)"),
                Dialect::Postgres => format!("\"{c}\"::text"),
            })
            .collect();
        let mut rows: Vec<String> = if select.is_empty() {
            Vec::new()
        } else {
            conn.text_rows(rt, &format!("SELECT {} FROM {q}", select.join(", ")))
                .into_iter()
                .map(|r| {
                    cols.iter()
                        .zip(r)
                        .map(|(c, v)| format!("{c}={v:?}|"))
                        .collect::<String>()
                })
                .collect()
        };
        rows.sort();
        out.insert(tbl, TableState { ddl, rows });
    }
    out
}

/// The tables of `before` whose state differs in `after`, with the
/// difference.
pub fn changed_tables(
    before: &BTreeMap<String, TableState>,
    after: &BTreeMap<String, TableState>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (tbl, b) in before {
        match after.get(tbl) {
            None => out.push(format!("table {tbl} disappeared")),
            Some(a) if a.sum() != b.sum() => {
                let mut d = format!("table {tbl} changed (sha256 {} -> {})", b.sum(), a.sum());
                if a.ddl != b.ddl {
                    d.push_str(&format!(
                        "\n  definition before:\n{}\n  after:\n{}",
                        b.ddl, a.ddl
                    ));
                }
                for r in b.rows.iter().filter(|r| !a.rows.contains(r)) {
                    d.push_str(&format!("\n  - {r}"));
                }
                for r in a.rows.iter().filter(|r| !b.rows.contains(r)) {
                    d.push_str(&format!("\n  + {r}"));
                }
                out.push(d);
            }
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_statements_keeps_quoted_semicolons_and_executable_comments() {
        let script = "-- comment; not a statement\n\
                      /*!40101 SET NAMES utf8mb4 */;\n\
                      /* plain; comment */ CREATE TABLE `a;b` (x int);\n\
                      INSERT INTO `t` VALUES ('it''s; fine','back\\'slash;',\"dq;\");\n\
                      SELECT 1--2\n;\n\
                      SELECT 'trailing'";
        assert_eq!(
            split_statements(script),
            vec![
                "/*!40101 SET NAMES utf8mb4 */",
                "CREATE TABLE `a;b` (x int)",
                "INSERT INTO `t` VALUES ('it''s; fine','back\\'slash;',\"dq;\")",
                "SELECT 1--2",
                "SELECT 'trailing'",
            ]
        );
    }
}
