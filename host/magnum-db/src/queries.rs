//! The statements every table shares: reads with Magnum's scoping and
//! keyset pagination, inserts, partial updates, deletes and counts. The
//! repository methods of each table (one file per table) are built on them.

pub use magnum_domain::query::{ListOptions, Scope};
use std::time::Duration;

use chrono::NaiveDateTime;

use super::columns::{Col, Reader};
use super::exec::{Arg, Cell, Done, Kind, Target};
use super::tx::Attempts;
use super::{Clock, Dialect, Error, Result};

/// The repository methods, bound to the pool ([`super::Db::q`]) or to a
/// transaction ([`super::Tx::q`], [`super::Tx::for_update`]).
pub struct Queries<'a> {
    target: Target<'a>,
    clock: &'a Clock,
    pub(crate) lock: bool,
    /// Attempts of a write and the first wait between them: more than one
    /// only for statements of their own ([`super::Db::q`]), never inside a
    /// transaction, which the database rolls back as a whole.
    retry: (u32, Duration),
}

impl<'a> Queries<'a> {
    pub(crate) fn new(target: Target<'a>, clock: &'a Clock) -> Queries<'a> {
        Queries {
            target,
            clock,
            lock: false,
            retry: (1, Duration::ZERO),
        }
    }

    /// These queries with each write run again, up to `attempts` times in
    /// all, when the database aborted it for a deadlock, a lock wait
    /// timeout or a busy SQLite file: a statement of its own changed
    /// nothing then.
    pub(crate) fn retrying(mut self, attempts: u32, backoff: Duration) -> Queries<'a> {
        self.retry = (attempts.max(1), backoff);
        self
    }

    /// These queries with row locks: reads add `FOR UPDATE` on MariaDB and
    /// PostgreSQL (SQLite transactions already hold the write lock).
    pub(crate) fn locked(mut self) -> Queries<'a> {
        self.lock = true;
        self
    }

    /// The dialect of the database.
    pub fn dialect(&self) -> Dialect {
        self.target.dialect()
    }

    /// Now, cut to what the dialect's datetime columns keep.
    pub(crate) fn now(&self) -> NaiveDateTime {
        self.dialect().trunc_time((self.clock)())
    }

    /// Runs a read; `what` names it in errors.
    pub(crate) async fn rows(
        &mut self,
        what: &'static str,
        sql: &str,
        args: Vec<Arg>,
        kinds: &[Kind],
    ) -> Result<Reader> {
        let cells = self.cells(what, sql, args, kinds).await?;
        Ok(Reader::new(cells, what))
    }

    /// Runs a read and returns its cells, row after row.
    async fn cells(
        &mut self,
        what: &'static str,
        sql: &str,
        args: Vec<Arg>,
        kinds: &[Kind],
    ) -> Result<Vec<Cell>> {
        let d = self.dialect();
        self.target
            .fetch(sql, args, kinds)
            .await
            .map_err(|e| d.err(format!("select {what}"), e))
    }

    /// Runs a write; a unique-constraint violation is [`Error::Duplicate`].
    pub(crate) async fn write(
        &mut self,
        what: String,
        sql: &str,
        mut args: Vec<Arg>,
    ) -> Result<Done> {
        let d = self.dialect();
        let (max, backoff) = self.retry;
        let mut attempts = Attempts::new(max, backoff);
        loop {
            let bound = if attempts.last() {
                std::mem::take(&mut args)
            } else {
                args.clone()
            };
            match self
                .target
                .execute(sql, bound)
                .await
                .map_err(|e| d.write_err(what.clone(), e))
            {
                Err(e) if attempts.retries(&e) => {
                    tracing::debug!(attempt = attempts.number(), error = %e, "retrying a database statement");
                    attempts.wait().await;
                }
                other => return other,
            }
        }
    }

    /// Runs a statement as it is, with the simple query protocol (DDL).
    pub(crate) async fn execute_raw(&mut self, what: String, sql: &str) -> Result<()> {
        let d = self.dialect();
        self.target
            .execute_raw(sql)
            .await
            .map_err(|e| d.err(what, e))
    }

    /// Reads one integer (a count, a sum).
    pub(crate) async fn scalar(
        &mut self,
        what: &'static str,
        sql: &str,
        args: Vec<Arg>,
    ) -> Result<i64> {
        let mut r = self.rows(what, sql, args, &[Kind::Int]).await?;
        if r.is_empty() {
            return Ok(0);
        }
        Ok(r.int64()?.unwrap_or_default())
    }

    /// The change stamp: the sum of the counters of `openkeel_change`
    /// (migration 3), which the triggers on `cluster`, `nodegroup` and
    /// `cluster_template` raise in every writer's transaction. It never
    /// goes down; equal stamps mean no such write committed in between.
    pub async fn change_stamp(&mut self) -> Result<i64> {
        let sql = match self.dialect() {
            Dialect::MySql => "SELECT CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM openkeel_change",
            Dialect::Postgres => "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM openkeel_change",
            Dialect::Sqlite => "SELECT COALESCE(SUM(n), 0) FROM openkeel_change",
        };
        self.scalar("change stamp", sql, vec![]).await
    }
}

/// The condition of `scope` (`None` for all projects). `has_user` says
/// whether the table has a `user_id` column.
pub(crate) fn scope_condition(scope: &Scope, has_user: bool) -> Result<Option<(String, Vec<Arg>)>> {
    if scope.all_projects {
        Ok(None)
    } else if !scope.project_id.is_empty() {
        Ok(Some((
            "project_id = ?".into(),
            vec![Arg::from(&scope.project_id)],
        )))
    } else if !scope.user_id.is_empty() && has_user {
        Ok(Some((
            "user_id = ?".into(),
            vec![Arg::from(&scope.user_id)],
        )))
    } else if !scope.user_id.is_empty() {
        // A table without user_id: Magnum filters on project_id = NULL,
        // which matches no row.
        Ok(Some(("1 = 0".into(), vec![])))
    } else {
        Err(Error::EmptyScope)
    }
}

/// WHERE conditions and their arguments.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cond {
    parts: Vec<String>,
    pub(crate) args: Vec<Arg>,
}

impl Cond {
    pub(crate) fn add(&mut self, part: impl Into<String>, args: impl IntoIterator<Item = Arg>) {
        self.parts.push(format!("({})", part.into()));
        self.args.extend(args);
    }

    /// The condition `col = value`.
    pub(crate) fn eq(col: &str, value: impl Into<Arg>) -> Cond {
        let mut c = Cond::default();
        c.add_eq(col, value);
        c
    }

    /// Adds `col = value`.
    pub(crate) fn add_eq(&mut self, col: &str, value: impl Into<Arg>) {
        self.add(format!("{col} = ?"), [value.into()]);
    }

    /// Adds `col IN (…)` for the values.
    pub(crate) fn add_in<S: AsRef<str>>(&mut self, col: &str, values: &[S]) {
        let (part, args) = in_list(col, values);
        self.add(part, args);
    }

    /// The condition of `scope` alone (see [`scope_condition`]).
    pub(crate) fn of_scope(scope: &Scope, has_user: bool) -> Result<Cond> {
        let mut c = Cond::default();
        c.scope(scope, has_user)?;
        Ok(c)
    }

    /// Adds a scope's condition, if any.
    pub(crate) fn scope(&mut self, scope: &Scope, has_user: bool) -> Result<()> {
        if let Some((part, args)) = scope_condition(scope, has_user)? {
            self.add(part, args);
        }
        Ok(())
    }

    pub(crate) fn sql(&self) -> String {
        if self.parts.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.parts.join(" AND "))
        }
    }
}

/// `col IN (?, ?, …)` for the values.
pub(crate) fn in_list<S: AsRef<str>>(col: &str, values: &[S]) -> (String, Vec<Arg>) {
    let marks = vec!["?"; values.len()].join(", ");
    (
        format!("{col} IN ({marks})"),
        values.iter().map(|v| Arg::from(v.as_ref())).collect(),
    )
}

/// Quotes an identifier in the neutral form the dialects rewrite.
pub(crate) fn quote(ident: &str) -> String {
    format!("\"{ident}\"")
}

fn quote_all(cols: &[Col]) -> String {
    cols.iter()
        .map(|c| quote(c.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One Magnum table: its columns (every one but `id`, in the order `read`
/// consumes and `write` produces them) and how its rows map to a row type.
pub(crate) struct Table<T> {
    pub name: &'static str,
    pub cols: &'static [Col],
    /// The column a pagination marker names (`uuid`, or `id` for quotas and
    /// services).
    pub marker_col: &'static str,
    /// Reads `id` then `cols`.
    pub read: fn(&mut Reader) -> Result<T>,
    /// The values of `cols`.
    pub write: fn(&T) -> Vec<Arg>,
    pub id: fn(&mut T) -> &mut i64,
    pub created_at: fn(&mut T) -> &mut NaiveDateTime,
    pub updated_at: fn(&mut T) -> &mut Option<NaiveDateTime>,
}

/// The columns of a table a read selects (a whole row, or a list view of
/// it). The columns left out read as NULL, which every row type decodes as
/// its field's default, so one row reader serves every view.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Columns {
    All,
    /// These columns only.
    Only(&'static [&'static str]),
    /// Every column but these.
    Except(&'static [&'static str]),
}

impl Columns {
    /// Whether the column is selected.
    fn selects(self, name: &str) -> bool {
        match self {
            Columns::All => true,
            Columns::Only(names) => names.contains(&name),
            Columns::Except(names) => !names.contains(&name),
        }
    }

    /// The columns named (to select, or to leave out).
    fn names(self) -> &'static [&'static str] {
        match self {
            Columns::All => &[],
            Columns::Only(names) | Columns::Except(names) => names,
        }
    }
}

/// Widens the cells of rows of `id` and the selected columns to whole rows
/// of `cols`, with NULL for each column left out.
fn pad_rows(cells: Vec<Cell>, cols: &[Col], selected: Columns) -> Vec<Cell> {
    let width = 1 + cols.iter().filter(|c| selected.selects(c.name)).count();
    let rows = cells.len() / width;
    let mut cells = cells.into_iter();
    let mut out = Vec::with_capacity(rows * (cols.len() + 1));
    for _ in 0..rows {
        out.extend(cells.next());
        for c in cols {
            out.push(if selected.selects(c.name) {
                cells.next().unwrap_or(Cell::Null)
            } else {
                Cell::Null
            });
        }
    }
    out
}

impl Queries<'_> {
    /// SELECT id and the selected columns of `t` with the condition, order
    /// and limit (and FOR UPDATE when locked).
    pub(crate) async fn select<T>(
        &mut self,
        t: &Table<T>,
        cols: Columns,
        c: Cond,
        order: &str,
        limit: Option<u64>,
    ) -> Result<Vec<T>> {
        debug_assert!(
            cols.names()
                .iter()
                .all(|n| t.cols.iter().any(|c| c.name == *n)),
            "{cols:?} names a column {} does not have",
            t.name
        );
        let selected: Vec<Col> = t
            .cols
            .iter()
            .filter(|c| cols.selects(c.name))
            .copied()
            .collect();
        let mut sql = format!(
            "SELECT id, {} FROM {}{}",
            quote_all(&selected),
            quote(t.name),
            c.sql()
        );
        if !order.is_empty() {
            sql.push_str(" ORDER BY ");
            sql.push_str(order);
        }
        if let Some(n) = limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        if self.lock {
            sql.push_str(self.dialect().sql().for_update);
        }
        let mut kinds = Vec::with_capacity(selected.len() + 1);
        kinds.push(Kind::Int);
        kinds.extend(selected.iter().map(|c| c.kind));
        let mut cells = self.cells(t.name, &sql, c.args, &kinds).await?;
        if selected.len() < t.cols.len() {
            cells = pad_rows(cells, t.cols, cols);
        }
        let mut r = Reader::new(cells, t.name);
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push((t.read)(&mut r)?);
        }
        Ok(out)
    }

    /// Every row of `t` matching the condition, in order.
    pub(crate) async fn all<T>(
        &mut self,
        t: &Table<T>,
        c: Cond,
        order: &str,
        limit: Option<u64>,
    ) -> Result<Vec<T>> {
        self.select(t, Columns::All, c, order, limit).await
    }

    /// The single row of `t` matching the condition.
    pub(crate) async fn get_one<T>(&mut self, t: &Table<T>, c: Cond) -> Result<T> {
        let mut rows = self.all(t, c, "", Some(2)).await?;
        match rows.len() {
            0 => Err(Error::NotFound(format!("select {}", t.name))),
            1 => Ok(rows.remove(0)),
            n => Err(Error::Decode(format!(
                "select {}: {n} rows match a unique key",
                t.name
            ))),
        }
    }

    /// The single row of `t` within `c` whose `col` (`id`, `uuid`) is
    /// `value`.
    pub(crate) async fn get_by<T>(
        &mut self,
        t: &Table<T>,
        mut c: Cond,
        col: &str,
        value: impl Into<Arg>,
    ) -> Result<T> {
        c.add_eq(col, value);
        self.get_one(t, c).await
    }

    /// Every row of `t` within `c` whose name matches (as on MariaDB:
    /// ignoring case and trailing spaces), by id; more than one is a 409
    /// for the API.
    pub(crate) async fn all_named<T>(
        &mut self,
        t: &Table<T>,
        mut c: Cond,
        name: &str,
    ) -> Result<Vec<T>> {
        c.add(
            (self.dialect().sql().name_equals)("name"),
            [Arg::from(name)],
        );
        self.all(t, c, "id ASC", None).await
    }

    /// A paginated read of the selected columns of `t`: Magnum's sort keys
    /// `[sort_key, id]` in one direction and keyset pagination after the
    /// marker row (oslo.db `paginate_query`), with NULLs sorting first as
    /// in MariaDB.
    pub(crate) async fn list<T>(
        &mut self,
        t: &Table<T>,
        cols: Columns,
        mut c: Cond,
        o: &ListOptions,
    ) -> Result<Vec<T>> {
        let key = o.sort_key.as_deref().unwrap_or("id");
        if key != "id" && !t.cols.iter().any(|c| c.name == key) {
            return Err(Error::InvalidSortKey(key.to_string()));
        }
        let desc = match o.sort_dir.as_deref().unwrap_or("asc") {
            "asc" => false,
            "desc" => true,
            other => return Err(Error::InvalidSortDir(other.to_string())),
        };
        let col = quote(key);
        if let Some(marker) = &o.marker {
            let marker_arg = if t.marker_col == "id" {
                match marker.parse::<i64>() {
                    Ok(n) => Arg::Int(n),
                    Err(_) => return Err(Error::NotFound(format!("marker {marker}"))),
                }
            } else {
                Arg::from(marker)
            };
            let sql = format!(
                "SELECT id, CASE WHEN {col} IS NULL THEN 1 ELSE 0 END FROM {} WHERE {} = ?",
                quote(t.name),
                quote(t.marker_col)
            );
            let mut r = self
                .rows(t.name, &sql, vec![marker_arg], &[Kind::Int, Kind::Int])
                .await?;
            if r.is_empty() {
                return Err(Error::NotFound(format!("marker {marker}")));
            }
            let mid = r.id()?;
            let mnull = r.int64()? == Some(1);
            let mv = format!("(SELECT m.{col} FROM {} m WHERE m.id = ?)", quote(t.name));
            let id = || Arg::Int(mid);
            match (key == "id", desc, mnull) {
                (true, false, _) => c.add("id > ?", [id()]),
                (true, true, _) => c.add("id < ?", [id()]),
                (false, false, true) => c.add(format!("{col} IS NOT NULL OR id > ?"), [id()]),
                (false, false, false) => c.add(
                    format!("{col} > {mv} OR ({col} = {mv} AND id > ?)"),
                    [id(), id(), id()],
                ),
                (false, true, true) => c.add(format!("{col} IS NULL AND id < ?"), [id()]),
                (false, true, false) => c.add(
                    format!("{col} < {mv} OR {col} IS NULL OR ({col} = {mv} AND id < ?)"),
                    [id(), id(), id()],
                ),
            }
        }
        let order_term = self.dialect().sql().order_term;
        let mut order = order_term(&col, desc);
        if key != "id" {
            order.push_str(", ");
            order.push_str(&order_term("id", desc));
        }
        self.select(t, cols, c, &order, o.limit).await
    }

    /// Inserts `v`, setting `created_at` (now, unless set) and `id`. A
    /// preset id is written as the primary key (Magnum stores an `id` given
    /// in a create body of nodegroups and quotas).
    pub(crate) async fn insert<T>(&mut self, t: &Table<T>, v: &mut T) -> Result<()> {
        let d = self.dialect();
        let created = (t.created_at)(v);
        if *created == NaiveDateTime::default() {
            *created = self.now();
        } else {
            *created = d.trunc_time(*created);
        }
        let updated = (t.updated_at)(v);
        *updated = updated.map(|u| d.trunc_time(u));
        let mut args = (t.write)(v);
        let preset = *(t.id)(v);
        let mut cols = quote_all(t.cols);
        if preset != 0 {
            cols = format!("{}, {cols}", quote("id"));
            args.insert(0, Arg::Int(preset));
        }
        let marks = vec!["?"; args.len()].join(", ");
        let sql = format!("INSERT INTO {} ({cols}) VALUES ({marks})", quote(t.name));
        let what = format!("insert {}", t.name);
        if preset != 0 {
            self.write(what, &sql, args).await?;
            if d == Dialect::Postgres {
                // Keep the serial ahead of the explicit id.
                let sql = format!(
                    "SELECT setval(pg_get_serial_sequence('{0}', 'id'), (SELECT MAX(id) FROM {1}))",
                    t.name,
                    quote(t.name)
                );
                self.scalar(t.name, &sql, vec![]).await?;
            }
            return Ok(());
        }
        let id = if d.sql().returning_id {
            let sql = format!("{sql} RETURNING id");
            let mut r = self
                .target
                .fetch(&sql, args, &[Kind::Int])
                .await
                .map_err(|e| d.write_err(what, e))?
                .into_iter();
            match r.next() {
                Some(Cell::Int(id)) => id,
                other => {
                    return Err(Error::Decode(format!(
                        "insert {}: RETURNING id gave {other:?}",
                        t.name
                    )));
                }
            }
        } else {
            let done = self.write(what, &sql, args).await?;
            done.last_insert_id
                .ok_or_else(|| Error::Decode(format!("insert {}: no last insert id", t.name)))?
        };
        *(t.id)(v) = id;
        Ok(())
    }

    /// Writes the named columns of `v` (by id) and sets `updated_at` to now.
    /// No row with that id → [`Error::NotFound`].
    pub(crate) async fn update<T>(&mut self, t: &Table<T>, v: &mut T, cols: &[&str]) -> Result<()> {
        let values = (t.write)(v);
        let mut sets = Vec::new();
        let mut args = Vec::new();
        for c in cols.iter().filter(|c| **c != "updated_at") {
            let i =
                t.cols
                    .iter()
                    .position(|tc| tc.name == *c)
                    .ok_or_else(|| Error::UnknownColumn {
                        table: t.name,
                        column: c.to_string(),
                    })?;
            sets.push(format!("{} = ?", quote(c)));
            args.push(values[i].clone());
        }
        let now = self.now();
        *(t.updated_at)(v) = Some(now);
        sets.push(format!("{} = ?", quote("updated_at")));
        args.push(Arg::Time(now));
        args.push(Arg::Int(*(t.id)(v)));
        let sql = format!(
            "UPDATE {} SET {} WHERE id = ?",
            quote(t.name),
            sets.join(", ")
        );
        let done = self.write(format!("update {}", t.name), &sql, args).await?;
        if done.rows_affected == 0 {
            return Err(Error::NotFound(format!("update {}", t.name)));
        }
        Ok(())
    }

    /// Deletes the rows of `table` matching the condition and returns how
    /// many there were.
    pub(crate) async fn delete_where(&mut self, table: &'static str, c: Cond) -> Result<u64> {
        let sql = format!("DELETE FROM {}{}", quote(table), c.sql());
        let done = self.write(format!("delete {table}"), &sql, c.args).await?;
        Ok(done.rows_affected)
    }

    /// Deletes the rows matching the condition; none → [`Error::NotFound`].
    pub(crate) async fn delete_one(&mut self, table: &'static str, c: Cond) -> Result<()> {
        if self.delete_where(table, c).await? == 0 {
            return Err(Error::NotFound(format!("delete {table}")));
        }
        Ok(())
    }

    /// Deletes the row of `table` whose `col` (`id`, `uuid`) is `value`;
    /// none → [`Error::NotFound`].
    pub(crate) async fn delete_by(
        &mut self,
        table: &'static str,
        col: &str,
        value: impl Into<Arg>,
    ) -> Result<()> {
        self.delete_one(table, Cond::eq(col, value)).await
    }

    /// `SELECT COUNT(*)` over `table` with the condition.
    pub(crate) async fn count(&mut self, table: &'static str, c: Cond) -> Result<i64> {
        let sql = format!("SELECT COUNT(*) FROM {}{}", quote(table), c.sql());
        self.scalar(table, &sql, c.args).await
    }
}

/// `Some(v)` unless set: Magnum's client-side boolean defaults.
pub(crate) fn default_bool(v: &mut Option<bool>, default: bool) {
    if v.is_none() {
        *v = Some(default);
    }
}
