//! Policy files: YAML (JSON is YAML too) mapping rule names to rules, read
//! as `yaml.safe_load` does, and the legacy list-of-lists rule form.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::check::{Check, ParseError, parse_check, parse_text};
use python_semantics::python::{float_repr, write_string_repr};

/// A value of a policy file, as Python sees it after `yaml.safe_load`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FileValue {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<FileValue>),
    /// Entries in document order; a repeated key keeps its first position
    /// and takes the last value, as a Python dict does.
    Map(Vec<(FileValue, FileValue)>),
}

impl FileValue {
    fn truthy(&self) -> bool {
        match self {
            FileValue::Null => false,
            FileValue::Bool(b) => *b,
            FileValue::Int(i) => *i != 0,
            FileValue::Float(f) => *f != 0.0,
            FileValue::Str(s) => !s.is_empty(),
            FileValue::Seq(v) => !v.is_empty(),
            FileValue::Map(m) => !m.is_empty(),
        }
    }

    /// Python's `repr()`.
    pub(crate) fn repr(&self) -> String {
        match self {
            FileValue::Null => "None".into(),
            FileValue::Bool(true) => "True".into(),
            FileValue::Bool(false) => "False".into(),
            FileValue::Int(i) => i.to_string(),
            FileValue::Float(f) => float_repr(*f),
            FileValue::Str(s) => {
                let mut out = String::new();
                write_string_repr(&mut out, s);
                out
            }
            FileValue::Seq(items) => {
                let items: Vec<String> = items.iter().map(FileValue::repr).collect();
                format!("[{}]", items.join(", "))
            }
            FileValue::Map(entries) => {
                let items: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.repr(), v.repr()))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
        }
    }

    /// The text of a top-level key, as the rule name.
    pub(crate) fn key_name(&self) -> Option<String> {
        match self {
            FileValue::Str(s) => Some(s.clone()),
            FileValue::Seq(_) | FileValue::Map(_) => None,
            other => Some(other.repr()),
        }
    }
}

fn insert_entry(entries: &mut Vec<(FileValue, FileValue)>, k: FileValue, v: FileValue) {
    match entries.iter_mut().find(|(existing, _)| *existing == k) {
        Some(entry) => entry.1 = v,
        None => entries.push((k, v)),
    }
}

impl<'de> Deserialize<'de> for FileValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FileValueVisitor)
    }
}

struct FileValueVisitor;

impl<'de> Visitor<'de> for FileValueVisitor {
    type Value = FileValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<FileValue, E> {
        Ok(FileValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<FileValue, E> {
        Ok(FileValue::Int(i128::from(v)))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<FileValue, E> {
        Ok(FileValue::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<FileValue, E> {
        Ok(FileValue::Int(i128::from(v)))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<FileValue, E> {
        i128::try_from(v)
            .map(FileValue::Int)
            .map_err(|_| E::custom("integer too large"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<FileValue, E> {
        Ok(FileValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<FileValue, E> {
        Ok(FileValue::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<FileValue, E> {
        Ok(FileValue::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<FileValue, E> {
        Ok(FileValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<FileValue, E> {
        Ok(FileValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<FileValue, D::Error> {
        FileValue::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FileValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(FileValue::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FileValue, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry()? {
            insert_entry(&mut entries, k, v);
        }
        Ok(FileValue::Map(entries))
    }
}

/// The rules of one policy file, in document order.
pub(crate) enum Document {
    /// A falsy document (empty, `{}`, `[]`, `false`, `0`): no rules.
    Empty,
    Rules(Vec<(String, FileValue)>),
}

/// Reads the text of a policy file (oslo `parse_file_contents`).
pub(crate) fn parse_document(text: &str) -> Result<Document, DocumentError> {
    let doc: FileValue =
        serde_norway::from_str(text).map_err(|e| DocumentError::Syntax(e.to_string()))?;
    if !doc.truthy() {
        // oslo: "parsed or {}".
        return Ok(Document::Empty);
    }
    let FileValue::Map(entries) = doc else {
        return Err(DocumentError::NotAMapping);
    };
    let mut rules = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let name = k.key_name().ok_or(DocumentError::NotAMapping)?;
        match rules
            .iter_mut()
            .find(|(n, _): &&mut (String, FileValue)| *n == name)
        {
            Some(entry) => entry.1 = v,
            None => rules.push((name, v)),
        }
    }
    Ok(Document::Rules(rules))
}

pub(crate) enum DocumentError {
    Syntax(String),
    NotAMapping,
}

/// Parses a rule value read from a policy file (oslo `parse_rule`): a string
/// in the policy language, or the legacy list-of-lists form (outer list
/// "or", inner lists "and", each element a single check). Python's falsy
/// values (null, false, 0, empty) are the empty rule: always true.
pub(crate) fn parse_value(v: &FileValue) -> Result<(Check, Option<ParseError>), String> {
    match v {
        FileValue::Str(s) => Ok(parse_text(s)),
        v if !v.truthy() => Ok((Check::True, None)),
        FileValue::Seq(items) => parse_list(items.iter()),
        // Python iterates a dict's keys: each key is one inner rule.
        FileValue::Map(entries) => parse_list(entries.iter().map(|(k, _)| k)),
        other => Err(format!(
            "{} is not a rule (want a string or a list)",
            other.repr()
        )),
    }
}

fn parse_list<'a>(
    outer: impl Iterator<Item = &'a FileValue>,
) -> Result<(Check, Option<ParseError>), String> {
    let mut first_error = None;
    let mut ors = Vec::new();
    for inner in outer {
        if !inner.truthy() {
            continue;
        }
        let items: Vec<&FileValue> = match inner {
            FileValue::Str(_) => vec![inner],
            FileValue::Seq(items) => items.iter().collect(),
            FileValue::Map(entries) => entries.iter().map(|(k, _)| k).collect(),
            other => return Err(format!("{} is not a list of checks", other.repr())),
        };
        let mut ands: Vec<Check> = items
            .into_iter()
            .map(|item| match item {
                FileValue::Str(s) => {
                    let (check, err) = parse_check(s);
                    if first_error.is_none() {
                        first_error = err;
                    }
                    check
                }
                // oslo logs and fails closed on a check it cannot split.
                _ => Check::False,
            })
            .collect();
        if ands.len() == 1 {
            ors.extend(ands.pop());
        } else {
            ors.push(Check::And(ands));
        }
    }
    let check = match ors.len() {
        0 => Check::False,
        1 => ors.pop().unwrap_or(Check::False),
        _ => Check::Or(ors),
    };
    Ok((check, first_error))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(yaml: &str) -> FileValue {
        match serde_norway::from_str(yaml) {
            Ok(v) => v,
            Err(e) => panic!("{yaml}: {e}"),
        }
    }

    // Port of TestParseValue (Go).
    #[test]
    fn parse_values() {
        let cases: [(&str, &str, Option<&str>); 14] = [
            (
                "string",
                r#""role:a or role:b""#,
                Some("(role:a or role:b)"),
            ),
            ("null is the empty rule", "null", Some("@")),
            ("false is the empty rule", "false", Some("@")),
            ("empty list", "[]", Some("@")),
            (
                "legacy list of lists",
                r#"[["role:a"], ["role:b", "project_id:%(project_id)s"]]"#,
                Some("(role:a or (role:b and project_id:%(project_id)s))"),
            ),
            (
                "legacy elements are single checks",
                r#"["role:a or role:b"]"#,
                Some("role:a or role:b"),
            ),
            (
                "legacy inner lists that are all empty",
                "[[], null]",
                Some("!"),
            ),
            (
                "legacy non-string check",
                r#"[[1, "role:a"]]"#,
                Some("(! and role:a)"),
            ),
            ("number", "3", None),
            ("true", "true", None),
            ("empty mapping", "{}", Some("@")),
            // Document order, as Python iterates a dict.
            (
                "a mapping is a list of its keys",
                r#"{"role:b": 1, "role:a": null}"#,
                Some("(role:b or role:a)"),
            ),
            (
                "legacy empty mapping is skipped",
                r#"[{}, "role:a"]"#,
                Some("role:a"),
            ),
            ("legacy nested number", r#"[["role:a"], 5]"#, None),
        ];
        for (name, yaml, want) in cases {
            let got = parse_value(&value(yaml));
            match (want, got) {
                (Some(w), Ok((check, _))) => assert_eq!(check.to_string(), w, "{name}"),
                (None, Err(_)) => {}
                (want, got) => panic!("{name}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn errors_name_the_value() {
        assert_eq!(
            parse_value(&value("3")).err().as_deref(),
            Some("3 is not a rule (want a string or a list)")
        );
        assert_eq!(
            parse_value(&value("[true]")).err().as_deref(),
            Some("True is not a list of checks")
        );
    }

    #[test]
    fn documents() {
        assert!(matches!(parse_document("# nothing\n"), Ok(Document::Empty)));
        for empty in ["[]", "{}", "false", "0", "''"] {
            assert!(
                matches!(parse_document(empty), Ok(Document::Empty)),
                "{empty}"
            );
        }
        assert!(matches!(
            parse_document("- a\n- b\n"),
            Err(DocumentError::NotAMapping)
        ));
        assert!(matches!(
            parse_document("\"a\": [\n"),
            Err(DocumentError::Syntax(_))
        ));
        // A repeated key takes the last value, as yaml.safe_load does.
        let Ok(Document::Rules(rules)) = parse_document("a: role:x\nb: role:y\na: role:z\n") else {
            panic!("duplicate keys refused");
        };
        let names: Vec<_> = rules.iter().map(|(n, v)| (n.as_str(), v.repr())).collect();
        assert_eq!(
            names,
            [("a", "'role:z'".to_owned()), ("b", "'role:y'".to_owned())]
        );
        let Ok(Document::Rules(rules)) = parse_document(r#"{"x": "@", "x": "!"}"#) else {
            panic!("JSON duplicate keys refused");
        };
        assert_eq!(rules.len(), 1);
    }
}
