//! "Nothing stored changed": the rows of a database read into one value,
//! and the rows that differ between two readings.
//!
//! `magnum_db::testing::table_digest` reads any dialect through the host's
//! database layer, and [`sqlite`] reads a SQLite database directly (the
//! fuzz harness, the bad-input sweep). Both give [`Rows`], and a failed
//! [`Rows::assert_same_as`] names the rows that appeared and disappeared,
//! not two dumps of every table.

use std::collections::BTreeMap;
use std::fmt;

use sqlx::{Row, SqliteConnection};

/// One table: its columns and its rows, each row's cells as text in the
/// columns' order, the rows sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Every table read, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    tables: BTreeMap<String, Table>,
}

impl Rows {
    /// Adds `table` with its columns and rows (sorted here).
    pub fn insert(&mut self, table: &str, columns: Vec<String>, mut rows: Vec<Vec<String>>) {
        rows.sort();
        self.tables
            .insert(table.to_string(), Table { columns, rows });
    }

    /// The tables, by name.
    pub fn tables(&self) -> impl Iterator<Item = (&str, &Table)> {
        self.tables.iter().map(|(n, t)| (n.as_str(), t))
    }

    /// Whether no table has a row.
    pub fn is_empty(&self) -> bool {
        self.tables.values().all(|t| t.rows.is_empty())
    }

    /// What differs from `before` to `self`, one line per row: `+ table:
    /// column=value, …` for a row that appeared, `- …` for one that
    /// disappeared (a changed row is both), and a line for a table that
    /// appeared or disappeared or whose columns changed.
    pub fn changes_since(&self, before: &Rows) -> Vec<String> {
        let mut out = Vec::new();
        let names: std::collections::BTreeSet<&String> =
            before.tables.keys().chain(self.tables.keys()).collect();
        for name in names {
            match (before.tables.get(name), self.tables.get(name)) {
                (Some(_), None) => out.push(format!("table {name} disappeared")),
                (None, Some(t)) => {
                    out.push(format!("table {name} appeared"));
                    out.extend(t.rows.iter().map(|r| line('+', name, t, r)));
                }
                (Some(a), Some(b)) if a.columns != b.columns => out.push(format!(
                    "table {name}: columns {:?} became {:?}",
                    a.columns, b.columns
                )),
                (Some(a), Some(b)) => {
                    out.extend(
                        a.rows
                            .iter()
                            .filter(|r| b.rows.binary_search(r).is_err())
                            .map(|r| line('-', name, a, r)),
                    );
                    out.extend(
                        b.rows
                            .iter()
                            .filter(|r| a.rows.binary_search(r).is_err())
                            .map(|r| line('+', name, b, r)),
                    );
                }
                (None, None) => {}
            }
        }
        out
    }

    /// Fails, listing the rows that differ, unless `self` holds the same
    /// rows as `before`.
    #[track_caller]
    pub fn assert_same_as(&self, before: &Rows, what: impl fmt::Display) {
        let changes = self.changes_since(before);
        assert!(changes.is_empty(), "{what}:\n{}", changes.join("\n"));
    }
}

fn line(sign: char, table: &str, t: &Table, row: &[String]) -> String {
    let cells: Vec<String> = t
        .columns
        .iter()
        .zip(row)
        .map(|(c, v)| format!("{c}={v}"))
        .collect();
    format!("{sign} {table}: {}", cells.join(", "))
}

/// Every table of a SQLite database but those in `skip`, each cell as the
/// SQL literal SQLite's `quote()` gives, so that a row can be inserted
/// again as it was read.
pub async fn sqlite(conn: &mut SqliteConnection, skip: &[&str]) -> Rows {
    let names: Vec<String> =
        match sqlx::query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .fetch_all(&mut *conn)
            .await
        {
            Ok(rows) => rows.iter().map(|r| r.get::<String, _>(0)).collect(),
            Err(e) => panic!("list the tables: {e}"),
        };
    let mut out = Rows::default();
    for table in names.iter().filter(|t| !skip.contains(&t.as_str())) {
        let columns: Vec<String> = match sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT name FROM pragma_table_info('{table}')"
        )))
        .fetch_all(&mut *conn)
        .await
        {
            Ok(rows) => rows.iter().map(|r| r.get::<String, _>(0)).collect(),
            Err(e) => panic!("the columns of {table}: {e}"),
        };
        let select: Vec<String> = columns.iter().map(|c| format!("quote(\"{c}\")")).collect();
        let rows = match sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {} FROM \"{table}\"",
            select.join(", ")
        )))
        .fetch_all(&mut *conn)
        .await
        {
            Ok(rows) => rows
                .iter()
                .map(|r| (0..columns.len()).map(|i| r.get::<String, _>(i)).collect())
                .collect(),
            Err(e) => panic!("the rows of {table}: {e}"),
        };
        out.insert(table, columns, rows);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(table: &str, cells: &[&[&str]]) -> Rows {
        let mut r = Rows::default();
        r.insert(
            table,
            vec!["id".into(), "name".into()],
            cells
                .iter()
                .map(|c| c.iter().map(|s| s.to_string()).collect())
                .collect(),
        );
        r
    }

    #[test]
    fn only_the_rows_that_differ_are_named() {
        let before = rows("clusters", &[&["1", "'a'"], &["2", "'b'"]]);
        let after = rows("clusters", &[&["2", "'b'"], &["1", "'c'"]]);
        assert_eq!(
            after.changes_since(&before),
            vec!["- clusters: id=1, name='a'", "+ clusters: id=1, name='c'"]
        );
        assert!(before.changes_since(&before).is_empty());
        before.assert_same_as(&rows("clusters", &[&["2", "'b'"], &["1", "'a'"]]), "same");
        assert_eq!(
            Rows::default().changes_since(&before),
            vec!["table clusters disappeared"]
        );
    }

    #[tokio::test]
    async fn a_sqlite_database_is_read_with_its_literals() {
        use sqlx::Connection;
        let mut c = match SqliteConnection::connect("sqlite::memory:").await {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let setup = "CREATE TABLE t (id INTEGER, name TEXT); \
                     INSERT INTO t VALUES (2, 'it''s'), (1, NULL); \
                     CREATE TABLE skipped (x INTEGER);";
        if let Err(e) = sqlx::raw_sql(setup).execute(&mut c).await {
            panic!("{e}");
        }
        let read = sqlite(&mut c, &["skipped"]).await;
        let tables: Vec<(&str, &Table)> = read.tables().collect();
        assert_eq!(tables.len(), 1);
        assert_eq!(
            tables[0].1.rows,
            vec![vec!["1", "NULL"], vec!["2", "'it''s'"]]
        );
    }
}
