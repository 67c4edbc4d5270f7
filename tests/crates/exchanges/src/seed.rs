//! The recording's database rows as Magnum stored them, and the request
//! bodies as the tests sent them.

use serde_json::{Map, Value};
use sqlx::{Connection, SqliteConnection};

/// Magnum's JSONEncodedDict / JSONEncodedList columns, with what the object
/// layer stores for None.
fn json_column_default(table: &str, col: &str) -> Option<&'static str> {
    match (table, col) {
        ("cluster", "labels" | "health_status_reason") => Some("{}"),
        ("cluster_template", "labels") => Some("{}"),
        ("federation", "member_ids") => Some("[]"),
        ("federation", "properties") => Some("{}"),
        ("nodegroup", "labels" | "node_labels") => Some("{}"),
        ("nodegroup", "node_addresses" | "node_taints") => Some("[]"),
        _ => None,
    }
}

/// A stored column value.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    Null,
    Text(String),
    Bool(bool),
    Int(i64),
    Float(f64),
}

/// One recorded column value as Magnum stored it: JSON columns in Python's
/// json.dumps format with the recorded key order (None as "{}" / "[]"),
/// booleans, naive UTC datetimes in SQLAlchemy's SQLite text form.
pub fn column_value(table: &str, col: &str, v: &Value) -> Column {
    match v {
        Value::Object(_) | Value::Array(_) => Column::Text(py_json(v)),
        Value::Null => {
            json_column_default(table, col).map_or(Column::Null, |d| Column::Text(d.to_string()))
        }
        Value::Bool(b) => Column::Bool(*b),
        Value::String(s) => {
            if col.ends_with("_at") || col == "last_seen_up" {
                for layout in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
                    if let Ok(ts) = chrono::NaiveDateTime::parse_from_str(s, layout) {
                        return Column::Text(ts.format("%Y-%m-%d %H:%M:%S%.6f").to_string());
                    }
                }
            }
            Column::Text(s.clone())
        }
        Value::Number(n) => n.as_i64().map_or_else(
            || Column::Float(n.as_f64().unwrap_or_default()),
            Column::Int,
        ),
    }
}

/// JSON text the way Python's json.dumps writes it with its defaults: ", "
/// and ": " separators, non-ASCII characters as \uXXXX escapes (surrogate
/// pairs beyond the BMP), keys in their recorded order.
pub fn py_json(v: &Value) -> String {
    let mut out = String::new();
    write_py(v, &mut out);
    out
}

fn write_py(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py_str(k, out);
                out.push_str(": ");
                write_py(v, out);
            }
            out.push('}');
        }
        Value::Array(l) => {
            out.push('[');
            for (i, v) in l.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py(v, out);
            }
            out.push(']');
        }
        Value::String(s) => write_py_str(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn write_py_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Inserts db_before, table by table in name order and rows in recorded
/// order, with the recorded ids.
pub async fn seed_db(
    url: &str,
    tables: &std::collections::BTreeMap<String, Vec<Map<String, Value>>>,
) -> Result<(), String> {
    let mut c = SqliteConnection::connect(url)
        .await
        .map_err(|e| e.to_string())?;
    for (table, rows) in tables {
        for row in rows {
            let cols: Vec<&String> = {
                let mut c: Vec<&String> = row.keys().collect();
                c.sort();
                c
            };
            let quoted: Vec<String> = cols.iter().map(|c| format!("\"{c}\"")).collect();
            let marks = vec!["?"; cols.len()].join(", ");
            let sql = format!(
                "INSERT INTO \"{table}\" ({}) VALUES ({marks})",
                quoted.join(", ")
            );
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
            for col in &cols {
                q = match column_value(table, col, &row[col.as_str()]) {
                    Column::Null => q.bind(None::<String>),
                    Column::Text(s) => q.bind(s),
                    Column::Bool(b) => q.bind(b),
                    Column::Int(n) => q.bind(n),
                    Column::Float(f) => q.bind(f),
                };
            }
            q.execute(&mut c)
                .await
                .map_err(|e| format!("seed {table}: {e}"))?;
        }
    }
    c.close().await.map_err(|e| e.to_string())
}

/// The keys of a Python dict repr, in order.
fn py_keys(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            let ident = j > start && !b[start].is_ascii_digit();
            if ident && s[j..].starts_with("': ") {
                out.push(s[start..j].to_string());
                i = j + 3;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The body to send. The corpus stores JSON request bodies with their keys
/// sorted, but the tests sent them in insertion order, which Magnum shows
/// when it quotes the whole body in a WSME error ("Value: '{'uuid': …}'").
/// When the recorded answer quotes the body, its keys go in the quoted
/// order.
pub fn replay_body(req_body: &Value, req_text: Option<&str>, resp_body: &Value) -> Option<String> {
    if let Some(t) = req_text {
        return Some(t.to_string());
    }
    if req_body.is_null() {
        return None;
    }
    let compact = || Some(req_body.to_string());
    let Some(body) = req_body.as_object().filter(|m| !m.is_empty()) else {
        return compact();
    };
    let Some(detail) = resp_body["errors"][0]["detail"].as_str() else {
        return compact();
    };
    let Some(at) = detail.find("Value: '{") else {
        return compact();
    };
    let mut order: Vec<String> = Vec::new();
    for k in py_keys(&detail[at..]) {
        if body.contains_key(&k) && !order.contains(&k) {
            order.push(k);
        }
    }
    let mut rest: Vec<&String> = body.keys().filter(|k| !order.contains(k)).collect();
    rest.sort();
    order.extend(rest.into_iter().cloned());
    let parts: Vec<String> = order
        .iter()
        .map(|k| format!("{}: {}", Value::String(k.clone()), body[k]))
        .collect();
    Some(format!("{{{}}}", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_columns_are_written_as_pythons_json_dumps_writes_them() {
        let v: Value =
            serde_json::from_str(r#"{"b":"é😀","a":[1,{"x":"a,b:c"}],"q":"\"\\"}"#).unwrap();
        assert_eq!(
            py_json(&v),
            r#"{"b": "\u00e9\ud83d\ude00", "a": [1, {"x": "a,b:c"}], "q": "\"\\"}"#
        );
    }

    #[test]
    fn recorded_values_become_the_stored_column_values() {
        let t = |s: &str| Column::Text(s.to_string());
        for (table, col, raw, want) in [
            ("nodegroup", "labels", "null", t("{}")),
            ("nodegroup", "node_addresses", "null", t("[]")),
            ("cluster", "discovery_url", "null", Column::Null),
            ("cluster", "master_lb_enabled", "true", Column::Bool(true)),
            (
                "cluster",
                "created_at",
                r#""2026-11-30T01:33:02.123456""#,
                t("2026-11-30 01:33:02.123456"),
            ),
            (
                "cluster",
                "created_at",
                r#""2026-11-30T01:33:02""#,
                t("2026-11-30 01:33:02.000000"),
            ),
            ("cluster", "id", "42", Column::Int(42)),
            ("cluster", "labels", r#"{"k":"v"}"#, t(r#"{"k": "v"}"#)),
            ("cluster", "name", r#""x""#, t("x")),
        ] {
            let v: Value = serde_json::from_str(raw).unwrap();
            assert_eq!(column_value(table, col, &v), want, "{table}.{col} = {raw}");
        }
    }

    #[test]
    fn a_quoted_body_is_sent_in_the_quoted_key_order() {
        let body: Value =
            serde_json::from_str(r#"{"a": 1, "labels": {"z": "1"}, "name": "n", "zz": null}"#)
                .unwrap();
        let resp = serde_json::json!({"errors": [{"detail": "Invalid input for field/attribute cluster. Value: '{'name': 'n', 'labels': {'z': '1'}, 'a': 1}'. x"}]});
        assert_eq!(
            replay_body(&body, None, &resp).unwrap(),
            r#"{"name": "n", "labels": {"z":"1"}, "a": 1, "zz": null}"#
        );
    }
}
