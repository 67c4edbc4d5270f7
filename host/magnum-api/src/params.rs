//! Query strings as WebOb parses them and the conversion of declared query
//! parameters that WSME does before a handler runs.

use std::collections::BTreeMap;

use magnum_domain::MagnumError;
use python_semantics::python;

use super::routes::{ParamType, Route};

/// A converted query parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum QueryValue {
    Text(String),
    Int(i64),
    Bool(bool),
}

/// The converted query parameters of a request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Query(pub BTreeMap<&'static str, QueryValue>);

impl Query {
    /// A text (or UUID) parameter.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.0.get(name) {
            Some(QueryValue::Text(s)) => Some(s),
            _ => None,
        }
    }

    /// An integer parameter.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.0.get(name) {
            Some(QueryValue::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// A boolean parameter.
    pub fn bool(&self, name: &str) -> Option<bool> {
        match self.0.get(name) {
            Some(QueryValue::Bool(b)) => Some(*b),
            _ => None,
        }
    }
}

/// Python's `urllib.parse.unquote_plus`: `+` is a space, valid `%XX`
/// escapes are decoded, anything else is kept; the bytes are read as UTF-8
/// with replacement characters.
pub fn unquote_plus(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = |c: u8| (c as char).to_digit(16);
                match (
                    b.get(i + 1).copied().and_then(hex),
                    b.get(i + 2).copied().and_then(hex),
                ) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The (key, value) pairs of a query string as `parse_qsl` with
/// `keep_blank_values` gives them, in order.
pub fn pairs(raw: &str) -> Vec<(String, String)> {
    raw.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (unquote_plus(k), unquote_plus(v))
        })
        .collect()
}

/// Converts the declared query parameters of `route` in signature order, as
/// pecan and WSME do before the handler runs; the first failure is the
/// answer. A repeated key reaches WSME as a Python list. `path_params` may
/// carry the marker of `<collection>/<marker>/detail`.
pub fn convert(
    raw_query: &str,
    route: &Route,
    path_params: &BTreeMap<String, String>,
) -> Result<Query, MagnumError> {
    let pairs = pairs(raw_query);
    let mut out = Query::default();
    for p in route.query {
        let mut values: Vec<&str> = pairs
            .iter()
            .filter(|(k, _)| k == p.name)
            .map(|(_, v)| v.as_str())
            .collect();
        if let Some(v) = path_params.get(p.name) {
            values = vec![v.as_str()];
        }
        if values.is_empty() {
            continue;
        }
        let is_list = values.len() > 1;
        let text = if is_list {
            python::repr(&values)
        } else {
            values[0].to_string()
        };
        let value = match p.kind {
            ParamType::Text => QueryValue::Text(text),
            ParamType::Int => {
                if is_list {
                    return Err(MagnumError::unable_to_convert(
                        p.name,
                        &text,
                        "int",
                        "int() argument must be a string, a bytes-like object or a real number, not 'list'",
                    ));
                }
                match python::parse_int(&text) {
                    // Integers beyond i64 saturate: every use bounds them.
                    Ok(n) => QueryValue::Int(n.to_i64().unwrap_or(if n.is_negative() {
                        i64::MIN
                    } else {
                        i64::MAX
                    })),
                    Err(e) => {
                        return Err(MagnumError::unable_to_convert(
                            p.name,
                            &text,
                            "int",
                            e.message(),
                        ));
                    }
                }
            }
            ParamType::Uuid => {
                if !is_uuid_like(&text) {
                    let err = MagnumError::invalid_uuid(&text);
                    return Err(MagnumError::unable_to_convert(
                        p.name,
                        &text,
                        "uuid",
                        &err.message,
                    ));
                }
                QueryValue::Text(text)
            }
            ParamType::Bool => match strict_bool(&text) {
                Some(b) => QueryValue::Bool(b),
                // Deviation: Magnum answers 500 ("__str__ returned
                // non-string"); we answer 400 with oslo.utils' message.
                None => {
                    return Err(MagnumError::unable_to_convert(
                        p.name,
                        &text,
                        "boolean",
                        &format!(
                            "Unrecognized value '{text}', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"
                        ),
                    ));
                }
            },
        };
        out.0.insert(p.name, value);
    }
    Ok(out)
}

/// oslo.utils `uuidutils.is_uuid_like`: 32 hex digits once `urn:`, `uuid:`,
/// surrounding braces and dashes are removed (upper case and missing dashes
/// accepted).
pub fn is_uuid_like(s: &str) -> bool {
    let h = s.replace("urn:", "").replace("uuid:", "");
    let h = h.trim_matches(|c| c == '{' || c == '}').replace('-', "");
    h.len() == 32 && h.bytes().all(|c| c.is_ascii_hexdigit())
}

/// oslo.utils `bool_from_string(strict=True)`.
pub fn strict_bool(s: &str) -> Option<bool> {
    match s.trim().to_lowercase().as_str() {
        "1" | "t" | "true" | "on" | "y" | "yes" => Some(true),
        "0" | "f" | "false" | "off" | "n" | "no" => Some(false),
        _ => None,
    }
}

/// The request path percent-decoded (WSGI's `PATH_INFO`), read as UTF-8
/// with replacement characters.
pub fn unquote_path(path: &str) -> String {
    percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_like() {
        for (s, want) in [
            ("4695611e-3049-49d0-8c7d-af52116c437b", true),
            ("4695611E304949D08C7DAF52116C437B", true),
            ("{4695611e-3049-49d0-8c7d-af52116c437b}", true),
            ("urn:uuid:4695611e-3049-49d0-8c7d-af52116c437b", true),
            ("4695611e-3049-49d0-8c7d-af52116c437", false),
            ("cluster1", false),
            ("1", false),
        ] {
            assert_eq!(is_uuid_like(s), want, "{s}");
        }
    }

    #[test]
    fn unquoting_is_pythons() {
        assert_eq!(unquote_plus("a+b%20c"), "a b c");
        assert_eq!(unquote_plus("100%"), "100%");
        assert_eq!(unquote_plus("%zz%4"), "%zz%4");
        assert_eq!(unquote_plus("%C3%A9"), "é");
        assert_eq!(unquote_plus("%ff"), "\u{fffd}");
    }

    #[test]
    fn pairs_keep_blank_values_and_order() {
        assert_eq!(
            pairs("b=1&&a&c=%3D"),
            vec![
                ("b".into(), "1".into()),
                ("a".into(), "".into()),
                ("c".into(), "=".into())
            ]
        );
    }

    #[test]
    fn strict_booleans() {
        assert_eq!(strict_bool(" Yes "), Some(true));
        assert_eq!(strict_bool("off"), Some(false));
        assert_eq!(strict_bool("maybe"), None);
    }
}
