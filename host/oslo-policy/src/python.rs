//! The few pieces of Python semantics oslo.policy relies on when it evaluates
//! a check: `str()`, `repr()` and `ascii()` of the values found in
//! credentials and targets, `str.lower()`, truthiness, and the whitespace of
//! `str.split()`.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use python_semantics::python::{float_repr, write_string_repr};
use serde_json::{Map, Number, Value};

/// An exception oslo.policy raises while it evaluates a rule (`TypeError`,
/// `ValueError`, `SyntaxError`, `AttributeError`, `RecursionError`), or a
/// Python behaviour this crate does not reproduce. Either way the request
/// fails closed: Magnum answers such an evaluation with a 403.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyError {
    message: String,
    unsupported: bool,
}

impl PyError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        PyError {
            message: message.into(),
            unsupported: false,
        }
    }

    /// A Python behaviour this crate deliberately does not reproduce.
    pub(crate) fn unsupported(message: impl Into<String>) -> Self {
        PyError {
            message: message.into(),
            unsupported: true,
        }
    }

    /// Whether the error stands for Python behaviour this crate does not
    /// reproduce (rather than an exception Python raises too).
    pub fn is_unsupported(&self) -> bool {
        self.unsupported
    }
}

impl fmt::Display for PyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unsupported {
            write!(
                f,
                "python exception: unsupported by this implementation: {}",
                self.message
            )
        } else {
            write!(f, "python exception: {}", self.message)
        }
    }
}

impl std::error::Error for PyError {}

/// Python's `str(v)`.
pub fn py_str(v: &Value) -> Cow<'_, str> {
    match v {
        Value::String(s) => Cow::Borrowed(s),
        Value::Null => Cow::Borrowed("None"),
        Value::Bool(true) => Cow::Borrowed("True"),
        Value::Bool(false) => Cow::Borrowed("False"),
        _ => {
            let mut out = String::new();
            write_repr(&mut out, v);
            Cow::Owned(out)
        }
    }
}

/// Python's `repr(v)`.
pub fn py_repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

/// Python's `str()` of a dict (the same as its `repr()`), in insertion
/// order as Python keeps it.
pub(crate) fn py_map_repr(m: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_map(&mut out, m);
    out
}

/// Python's `ascii(v)`: `repr(v)` with every non-ASCII character escaped.
pub(crate) fn ascii_escape(repr: &str) -> Cow<'_, str> {
    if repr.is_ascii() {
        return Cow::Borrowed(repr);
    }
    let mut out = String::with_capacity(repr.len() + 8);
    for c in repr.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            push_escape(&mut out, c);
        }
    }
    Cow::Owned(out)
}

fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string_repr(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => write_map(out, m),
    }
}

fn write_map(out: &mut String, m: &Map<String, Value>) {
    out.push('{');
    for (i, (k, item)) in m.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_string_repr(out, k);
        out.push_str(": ");
        write_repr(out, item);
    }
    out.push('}');
}

fn write_number(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(f) = n.as_f64() {
        out.push_str(&float_repr(f));
    }
}

/// `\xNN`, `\uNNNN` or `\UNNNNNNNN`, as `ascii()` escapes a character.
fn push_escape(out: &mut String, c: char) {
    let n = u32::from(c);
    let _ = if n <= 0xff {
        write!(out, "\\x{n:02x}")
    } else if n <= 0xffff {
        write!(out, "\\u{n:04x}")
    } else {
        write!(out, "\\U{n:08x}")
    };
}

/// Python's `bool(v)`.
pub fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i != 0
            } else if let Some(u) = n.as_u64() {
                u != 0
            } else {
                n.as_f64().is_some_and(|f| f != 0.0)
            }
        }
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// Python's `str.lower()`: full Unicode lower-casing, with the final sigma
/// rule (Rust's `to_lowercase` implements both, like CPython).
pub fn py_lower(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Owned(s.to_ascii_lowercase());
        }
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.to_lowercase())
}

/// Whether `py_lower(a) == py_lower(b)`, without allocating for ASCII text.
pub(crate) fn lower_equal(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    py_lower(a) == py_lower(b)
}

/// Whether `c` is whitespace for Python's `str.split()` and `re`'s `\s`:
/// the Unicode White_Space characters plus the four information separators
/// U+001C..U+001F (bidirectional class B or S).
pub(crate) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's hard keywords other than `True`, `False` and `None`:
/// `ast.literal_eval` raises `SyntaxError` on a check kind that uses one.
pub(crate) fn is_py_keyword(s: &str) -> bool {
    matches!(
        s,
        "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
    )
}

/// Whether `s` is a Python identifier (XID_Start or `_`, then XID_Continue).
///
/// Deviation: CPython normalises identifiers with NFKC before it checks
/// them; a handful of compatibility characters are classified differently.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c == '_' || unicode_ident::is_xid_start(c) => {}
        _ => return false,
    }
    chars.all(unicode_ident::is_xid_continue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Port of TestPythonValues (Go). Go's int64/json.Number cases map onto
    // serde_json numbers; a JSON integer above u64 cannot be held by a
    // serde_json::Number without arbitrary precision, so u64::MAX stands
    // for the "integer of any size" case.
    #[test]
    fn str_of_values() {
        let cases: Vec<(Value, &str)> = vec![
            (Value::Null, "None"),
            (json!(true), "True"),
            (json!(false), "False"),
            (json!(3), "3"),
            (json!(-2), "-2"),
            (json!(1.5), "1.5"),
            (json!(1000.0), "1000.0"),
            (json!(1e16), "1e+16"),
            (json!(1e15), "1000000000000000.0"),
            (json!(0.0001), "0.0001"),
            (json!(0.00001), "1e-05"),
            (json!(-0.0), "-0.0"),
            (json!(1.0 / 3.0), "0.3333333333333333"),
            (json!(u64::MAX), "18446744073709551615"),
            (json!(1e20), "1e+20"),
            (json!(["a", 1.0, null, true]), "['a', 1.0, None, True]"),
            (
                json!(["it's", "a\"b", "x\ny"]),
                r#"["it's", 'a"b', 'x\ny']"#,
            ),
            // Insertion order, as a Python dict keeps it.
            (json!({"b": 1, "a": "x"}), "{'b': 1, 'a': 'x'}"),
            (
                json!(["\u{7f}\u{0}é\u{a0}\u{200c}\u{1f600}\u{e000}\u{10ffff}"]),
                "['\\x7f\\x00é\\xa0\\u200c\u{1f600}\\ue000\\U0010ffff']",
            ),
        ];
        for (v, want) in cases {
            assert_eq!(py_str(&v), want, "str({v})");
        }
    }

    #[test]
    fn lower_is_full_unicode() {
        for (input, want) in [
            ("ADMIN", "admin"),
            ("İ", "i\u{307}"),
            ("ΟΔΟΣ", "οδος"),
            ("ΣΑ", "σα"),
            ("Σ", "σ"),
            ("Straße", "straße"),
        ] {
            assert_eq!(py_lower(input), want, "{input}");
        }
    }

    #[test]
    fn ascii_escapes_non_ascii() {
        assert_eq!(ascii_escape("'é\u{1f600}'"), "'\\xe9\\U0001f600'");
        assert_eq!(ascii_escape("'x'"), "'x'");
    }

    #[test]
    fn whitespace_includes_information_separators() {
        for c in ['\u{1c}', '\u{1f}', '\u{a0}', '\u{2003}', '\u{85}', '\t'] {
            assert!(is_py_space(c), "{c:?}");
        }
        assert!(!is_py_space('\u{200b}'));
    }

    #[test]
    fn truthiness() {
        for (v, want) in [
            (json!(null), false),
            (json!(0), false),
            (json!(0.0), false),
            (json!(""), false),
            (json!([]), false),
            (json!({}), false),
            (json!("x"), true),
            (json!(-1), true),
            (json!([0]), true),
        ] {
            assert_eq!(py_truthy(&v), want, "{v}");
        }
    }
}
