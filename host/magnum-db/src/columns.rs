//! Column codecs: how the fields of the row types become [`Arg`]s and come
//! back from [`Cell`]s. Each codec is a [`Reader`] method and a writer
//! function of the same name; [`table!`] declares a table from one list of
//! (column, codec) pairs, from which its column list, its `read` and its
//! `write` (serving SELECT, INSERT and UPDATE) all follow.

use chrono::NaiveDateTime;
use magnum_domain::Status;
use magnum_domain::models::{NodeTaint, StringMap};
use python_semantics::pyjson;

use super::exec::{Arg, Cell, Kind};
use super::{Error, Result};

/// A column of a table: its name and how it is read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Col {
    pub name: &'static str,
    pub kind: Kind,
}

/// Shorthand for the column tables.
pub(crate) const fn col(name: &'static str, kind: Kind) -> Col {
    Col { name, kind }
}

/// The [`Kind`] a column of the codec is selected as.
macro_rules! codec_kind {
    (time) => {
        $crate::exec::Kind::Time
    };
    (opt_time) => {
        $crate::exec::Kind::Time
    };
    (int) => {
        $crate::exec::Kind::Int
    };
    (int_or_zero) => {
        $crate::exec::Kind::Int
    };
    (bool) => {
        $crate::exec::Kind::Bool
    };
    (string) => {
        $crate::exec::Kind::Text
    };
    (text) => {
        $crate::exec::Kind::Text
    };
    (status) => {
        $crate::exec::Kind::Text
    };
    (json_map) => {
        $crate::exec::Kind::Text
    };
    (json_list) => {
        $crate::exec::Kind::Text
    };
    (json_taints) => {
        $crate::exec::Kind::Text
    };
}
pub(crate) use codec_kind;

/// Declares a Magnum table as a [`crate::queries::Table`] static: its
/// name, the column a pagination marker names, and every column but `id`
/// in the table's order, each named as the row type's field and followed
/// by its codec (a [`Reader`] method and a writer function of this module).
/// The column list, the row reader and the value writer come from that one
/// list, so they cannot fall out of step.
macro_rules! table {
    (
        $(#[$attr:meta])*
        $vis:vis static $table:ident: $row:ident = $name:literal, marker $marker:literal {
            $($field:ident: $codec:ident),+ $(,)?
        }
    ) => {
        $(#[$attr])*
        $vis static $table: $crate::queries::Table<$row> = $crate::queries::Table {
            name: $name,
            cols: &[$(
                $crate::columns::col(stringify!($field), $crate::columns::codec_kind!($codec))
            ),+],
            marker_col: $marker,
            read: |r| Ok($row { id: r.id()?, $($field: r.$codec()?),+ }),
            write: |v| vec![$($crate::columns::$codec(&v.$field)),+],
            id: |v| &mut v.id,
            created_at: |v| &mut v.created_at,
            updated_at: |v| &mut v.updated_at,
        };
    };
}
pub(crate) use table;

/// Reads the cells of a result, row after row, column after column, in the
/// order of the statement's select list.
pub(crate) struct Reader {
    cells: std::vec::IntoIter<Cell>,
    table: &'static str,
}

impl Reader {
    pub(crate) fn new(cells: Vec<Cell>, table: &'static str) -> Reader {
        Reader {
            cells: cells.into_iter(),
            table,
        }
    }

    fn bad(&self, want: &str, got: &Cell) -> Error {
        Error::Decode(format!("{}: expected {want}, read {got:?}", self.table))
    }

    /// The next cell as it is.
    pub(crate) fn next(&mut self) -> Result<Cell> {
        self.cells
            .next()
            .ok_or_else(|| Error::Decode(format!("{}: fewer columns than expected", self.table)))
    }

    /// The `id` column.
    pub(crate) fn id(&mut self) -> Result<i64> {
        Ok(self.int64()?.unwrap_or_default())
    }

    pub(crate) fn int64(&mut self) -> Result<Option<i64>> {
        match self.next()? {
            Cell::Null => Ok(None),
            Cell::Int(v) => Ok(Some(v)),
            // MariaDB and SQLite report booleans and integers alike.
            Cell::Bool(b) => Ok(Some(i64::from(b))),
            other => Err(self.bad("an integer", &other)),
        }
    }

    pub(crate) fn int(&mut self) -> Result<Option<i32>> {
        match self.int64()? {
            None => Ok(None),
            Some(v) => i32::try_from(v)
                .map(Some)
                .map_err(|_| Error::Decode(format!("{}: integer {v} out of range", self.table))),
        }
    }

    /// An `int NOT NULL` column.
    pub(crate) fn int_or_zero(&mut self) -> Result<i32> {
        Ok(self.int()?.unwrap_or_default())
    }

    /// A nullable text column.
    pub(crate) fn text(&mut self) -> Result<Option<String>> {
        match self.next()? {
            Cell::Null => Ok(None),
            Cell::Text(s) => Ok(Some(s)),
            other => Err(self.bad("text", &other)),
        }
    }

    /// A text column the row types carry as a plain string (NULL reads as
    /// `""`).
    pub(crate) fn string(&mut self) -> Result<String> {
        Ok(self.text()?.unwrap_or_default())
    }

    pub(crate) fn bool(&mut self) -> Result<Option<bool>> {
        match self.next()? {
            Cell::Null => Ok(None),
            Cell::Bool(b) => Ok(Some(b)),
            Cell::Int(v) => Ok(Some(v != 0)),
            other => Err(self.bad("a boolean", &other)),
        }
    }

    pub(crate) fn opt_time(&mut self) -> Result<Option<NaiveDateTime>> {
        match self.next()? {
            Cell::Null => Ok(None),
            Cell::Time(t) => Ok(Some(t)),
            other => Err(self.bad("a timestamp", &other)),
        }
    }

    /// `created_at`: NULL (rows of other writers) reads as the zero time.
    pub(crate) fn time(&mut self) -> Result<NaiveDateTime> {
        Ok(self.opt_time()?.unwrap_or_default())
    }

    pub(crate) fn status(&mut self) -> Result<Option<Status>> {
        match self.text()? {
            None => Ok(None),
            Some(s) => s
                .parse()
                .map(Some)
                .map_err(|_| Error::Decode(format!("{}: unknown status {s:?}", self.table))),
        }
    }

    /// A `JSONEncodedDict` of strings. NULL reads as `None`; a `null` text
    /// as an empty map (what Magnum's type returns for it).
    pub(crate) fn json_map(&mut self) -> Result<Option<StringMap>> {
        match self.text()? {
            None => Ok(None),
            Some(s) => pyjson::decode_str_map(&s)
                .map(|m| Some(m.unwrap_or_default()))
                .map_err(|e| self.json_error("object", &s, &e)),
        }
    }

    /// A `JSONEncodedList` of strings. NULL reads as `None`; `null` as an
    /// empty list.
    pub(crate) fn json_list(&mut self) -> Result<Option<Vec<String>>> {
        match self.text()? {
            None => Ok(None),
            Some(s) => pyjson::decode_str_list(&s)
                .map(|l| Some(l.unwrap_or_default()))
                .map_err(|e| self.json_error("array", &s, &e)),
        }
    }

    /// `nodegroup.node_taints`, a `JSONEncodedList` of objects.
    pub(crate) fn json_taints(&mut self) -> Result<Option<Vec<NodeTaint>>> {
        match self.text()? {
            None => Ok(None),
            Some(s) => pyjson::decode_map_list(&s)
                .map(|l| Some(l.unwrap_or_default()))
                .map_err(|e| self.json_error("array", &s, &e)),
        }
    }

    fn json_error(&self, what: &str, text: &str, e: &pyjson::ParseError) -> Error {
        Error::Decode(format!("{}: decode JSON {what} {text:?}: {e}", self.table))
    }

    /// Whether every cell was read.
    pub(crate) fn is_empty(&self) -> bool {
        self.cells.len() == 0
    }
}

// Writers, one per field shape.

pub(crate) fn text(v: &Option<String>) -> Arg {
    v.as_ref()
        .map_or(Arg::Null(Kind::Text), |s| Arg::Text(s.clone()))
}

pub(crate) fn string(v: &str) -> Arg {
    Arg::Text(v.to_string())
}

pub(crate) fn int(v: &Option<i32>) -> Arg {
    v.map_or(Arg::Null(Kind::Int), |n| Arg::Int(i64::from(n)))
}

/// An `int NOT NULL` column.
pub(crate) fn int_or_zero(v: &i32) -> Arg {
    Arg::Int(i64::from(*v))
}

pub(crate) fn bool(v: &Option<bool>) -> Arg {
    v.map_or(Arg::Null(Kind::Bool), Arg::Bool)
}

pub(crate) fn opt_time(v: &Option<NaiveDateTime>) -> Arg {
    v.map_or(Arg::Null(Kind::Time), Arg::Time)
}

/// `created_at`: the zero time writes NULL.
pub(crate) fn time(v: &NaiveDateTime) -> Arg {
    if *v == NaiveDateTime::default() {
        Arg::Null(Kind::Time)
    } else {
        Arg::Time(*v)
    }
}

pub(crate) fn status(v: &Option<Status>) -> Arg {
    v.map_or(Arg::Null(Kind::Text), |s| Arg::Text(s.as_str().to_string()))
}

/// A `JSONEncodedDict`: `None` writes `{}`, as Magnum's type does.
pub(crate) fn json_map(v: &Option<StringMap>) -> Arg {
    Arg::Text(match v {
        None => "{}".to_string(),
        Some(m) => pyjson::dumps_str_map(m),
    })
}

/// A `JSONEncodedList`: `None` writes `[]`.
pub(crate) fn json_list(v: &Option<Vec<String>>) -> Arg {
    Arg::Text(match v {
        None => "[]".to_string(),
        Some(l) => pyjson::dumps_str_list(l),
    })
}

/// `nodegroup.node_taints`: `None` writes `[]`.
pub(crate) fn json_taints(v: &Option<Vec<NodeTaint>>) -> Arg {
    Arg::Text(match v {
        None => "[]".to_string(),
        Some(l) => pyjson::dumps_taints(l),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go `TestJSONColumnsDecode`: NULL is `None`, values are coerced, an
    /// absent list writes `[]`, taints round-trip byte for byte.
    #[test]
    fn json_columns() {
        let cells = vec![
            Cell::Text(r#"{"api": "ok", "n": 3, "ready": true, "x": null}"#.into()),
            Cell::Null,
            Cell::Text(
                r#"[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]"#.into(),
            ),
            Cell::Text("null".into()),
            Cell::Text("{broken".into()),
        ];
        let mut r = Reader::new(cells, "t");
        let m = r.json_map().ok().flatten();
        let want: StringMap = [("api", "ok"), ("n", "3"), ("ready", "True"), ("x", "None")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(m, Some(want));
        assert_eq!(r.json_map().ok(), Some(None));
        let taints = r.json_taints().ok().flatten();
        assert_eq!(
            json_taints(&taints),
            Arg::Text(
                r#"[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]"#.into()
            )
        );
        assert_eq!(r.json_list().ok(), Some(Some(vec![])));
        assert!(r.json_map().is_err());
        assert!(r.is_empty());
        assert_eq!(json_list(&None), Arg::Text("[]".into()));
        assert_eq!(json_map(&None), Arg::Text("{}".into()));
    }

    #[test]
    fn plain_columns() {
        let cells = vec![
            Cell::Null,
            Cell::Int(1),
            Cell::Text("CREATE_FAILED".into()),
            Cell::Text("NOT_A_STATUS".into()),
            Cell::Int(i64::from(i32::MAX) + 1),
            Cell::Text("x".into()),
        ];
        let mut r = Reader::new(cells, "cluster");
        assert_eq!(r.string().ok().as_deref(), Some(""));
        assert_eq!(r.bool().ok(), Some(Some(true)));
        assert_eq!(r.status().ok(), Some(Some(Status::CreateFailed)));
        assert!(r.status().is_err());
        assert!(r.int().is_err());
        assert!(r.int().is_err());
        assert!(r.next().is_err());
        assert_eq!(time(&NaiveDateTime::default()), Arg::Null(Kind::Time));
    }
}
