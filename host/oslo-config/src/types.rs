//! Option types and values: oslo.config's `types` module (String, Integer,
//! Float, Boolean, List, Dict, MultiString, Port, IPAddress, HostAddress,
//! URI) with its parsing rules.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::python;

/// The type of an option, named after the oslo.config type it mirrors, with
/// its constraints.
#[derive(Clone, Debug, PartialEq)]
pub enum OptType {
    /// `StrOpt`: any text, or one of `choices` when not empty.
    String {
        /// The allowed values; empty for any.
        choices: Vec<String>,
    },
    /// `IntOpt`: Python's `int()`, an empty value is none.
    Integer {
        /// The smallest allowed value.
        min: Option<i64>,
        /// The largest allowed value.
        max: Option<i64>,
    },
    /// `FloatOpt`: Python's `float()`, an empty value is none.
    Float {
        /// The smallest allowed value.
        min: Option<f64>,
        /// The largest allowed value.
        max: Option<f64>,
    },
    /// `BoolOpt`: `true`/`1`/`on`/`yes` or `false`/`0`/`off`/`no`, any case.
    Boolean,
    /// `ListOpt`: comma-separated strings, each trimmed, trailing commas
    /// dropped; each item one of `choices` when not empty.
    List {
        /// The allowed items; empty for any.
        choices: Vec<String>,
    },
    /// `DictOpt`: `key:value` pairs separated by commas.
    Dict,
    /// `MultiStrOpt`: one value per occurrence of the key, across files.
    MultiString,
    /// `PortOpt`: an integer from 0 to 65535.
    Port,
    /// `IPOpt`: an IPv4 or IPv6 address.
    IpAddress,
    /// `HostAddressOpt`: an IP address or a host name (a trailing dot is
    /// dropped).
    HostAddress,
    /// `URIOpt`: an RFC 3986 URI with a scheme and a host.
    Uri {
        /// The allowed schemes (lower case); empty for any.
        schemes: Vec<String>,
        /// The longest allowed value, in characters.
        max_length: Option<usize>,
    },
}

impl OptType {
    /// A string without choices.
    pub fn string() -> Self {
        OptType::String {
            choices: Vec::new(),
        }
    }

    /// An integer without bounds.
    pub fn integer() -> Self {
        OptType::Integer {
            min: None,
            max: None,
        }
    }

    /// A float without bounds.
    pub fn float() -> Self {
        OptType::Float {
            min: None,
            max: None,
        }
    }

    /// A list without choices.
    pub fn list() -> Self {
        OptType::List {
            choices: Vec::new(),
        }
    }

    /// What the sample configuration calls the type: `string value`,
    /// `integer value`, …
    pub fn sample_name(&self) -> &'static str {
        match self {
            OptType::String { .. } => "string value",
            OptType::Integer { .. } => "integer value",
            OptType::Float { .. } => "floating point value",
            OptType::Boolean => "boolean value",
            OptType::List { .. } => "list value",
            OptType::Dict => "dict value",
            OptType::MultiString => "multi valued",
            OptType::Port => "port value",
            OptType::IpAddress => "IP address value",
            OptType::HostAddress => "host address value",
            OptType::Uri { .. } => "uri value",
        }
    }

    /// Whether the option collects every occurrence of its key.
    pub fn is_multi(&self) -> bool {
        matches!(self, OptType::MultiString)
    }

    /// Converts one (already substituted) value. `secret` keeps the value out
    /// of the error text.
    pub(crate) fn convert(&self, s: &str, secret: bool) -> Result<Value, String> {
        let show = || {
            if secret {
                "the value".to_owned()
            } else {
                format!("{s:?}")
            }
        };
        match self {
            OptType::String { choices } => {
                if !choices.is_empty() && !choices.iter().any(|c| c == s) {
                    return Err(format!("{} is not one of: {}", show(), choices.join(", ")));
                }
                Ok(Value::String(s.to_owned()))
            }
            OptType::Integer { min, max } => convert_int(s, *min, *max, secret),
            OptType::Port => convert_int(s, Some(0), Some(65535), secret),
            OptType::Float { min, max } => {
                if python::strip(s).is_empty() {
                    return Ok(Value::None);
                }
                let f = python::float(s).ok_or_else(|| format!("{} is not a number", show()))?;
                let shown = || {
                    if secret {
                        "the value".to_owned()
                    } else {
                        python::float_str(f)
                    }
                };
                if let Some(lo) = min.filter(|lo| f < *lo) {
                    return Err(format!(
                        "{} is less than the minimum {}",
                        shown(),
                        bound_str(lo)
                    ));
                }
                if let Some(hi) = max.filter(|hi| f > *hi) {
                    return Err(format!(
                        "{} is greater than the maximum {}",
                        shown(),
                        bound_str(hi)
                    ));
                }
                Ok(Value::Float(f))
            }
            OptType::Boolean => match s.to_lowercase().as_str() {
                "true" | "1" | "on" | "yes" => Ok(Value::Boolean(true)),
                "false" | "0" | "off" | "no" => Ok(Value::Boolean(false)),
                _ => Err(format!(
                    "{} is not a boolean (true/false, yes/no, on/off, 1/0)",
                    show()
                )),
            },
            OptType::List { choices } => split_list(s, choices, secret).map(Value::List),
            OptType::MultiString => Ok(Value::List(vec![s.to_owned()])),
            OptType::Dict => split_dict(s, secret).map(Value::Dict),
            OptType::IpAddress => {
                if valid_ip(s) {
                    Ok(Value::String(s.to_owned()))
                } else {
                    Err(format!("{} is not an IPv4 or IPv6 address", show()))
                }
            }
            OptType::HostAddress => {
                if valid_ip(s) {
                    return Ok(Value::String(s.to_owned()));
                }
                if !valid_hostname(s) {
                    return Err(format!("{} is not a valid IP address or host name", show()));
                }
                Ok(Value::String(s.strip_suffix('.').unwrap_or(s).to_owned()))
            }
            OptType::Uri {
                schemes,
                max_length,
            } => {
                let Some(scheme) = uri_scheme(s) else {
                    return Err(format!("{} is not a URI with a scheme and a host", show()));
                };
                if !schemes.is_empty() && !schemes.iter().any(|x| x.eq_ignore_ascii_case(scheme)) {
                    return Err(format!(
                        "{} has a scheme other than {}",
                        show(),
                        schemes.join(", ")
                    ));
                }
                if let Some(max) = max_length.filter(|max| s.chars().count() > *max) {
                    return Err(format!("{} is longer than {max} characters", show()));
                }
                Ok(Value::String(s.to_owned()))
            }
        }
    }
}

/// A bound as the messages show it: integral bounds without a fraction.
fn bound_str(b: f64) -> String {
    if b.fract() == 0.0 && b.abs() < 1e15 {
        format!("{}", b as i64)
    } else {
        python::float_str(b)
    }
}

fn convert_int(s: &str, min: Option<i64>, max: Option<i64>, secret: bool) -> Result<Value, String> {
    if python::strip(s).is_empty() {
        // oslo.config: an empty integer is none.
        return Ok(Value::None);
    }
    let show = |text: &str| {
        if secret {
            "the value".to_owned()
        } else {
            text.to_owned()
        }
    };
    let n = match python::int(s) {
        None => return Err(format!("{} is not an integer", show(&format!("{s:?}")))),
        Some(python::PyInt::Small(n)) => n,
        Some(python::PyInt::Huge { negative }) => {
            let shown = show(python::strip(s));
            return Err(match (negative, min, max) {
                (false, _, Some(hi)) => format!("{shown} is greater than the maximum {hi}"),
                (true, Some(lo), _) => format!("{shown} is less than the minimum {lo}"),
                // Deviation: Python's integers have no bound; ours are 64-bit.
                _ => format!("{shown} is outside the 64-bit integer range"),
            });
        }
    };
    if let Some(lo) = min.filter(|lo| n < *lo) {
        return Err(format!(
            "{} is less than the minimum {lo}",
            show(&n.to_string())
        ));
    }
    if let Some(hi) = max.filter(|hi| n > *hi) {
        return Err(format!(
            "{} is greater than the maximum {hi}",
            show(&n.to_string())
        ));
    }
    Ok(Value::Integer(n))
}

/// Splits a list value like oslo.config's `List`: trimmed, trailing commas
/// dropped, split on `,`, each item trimmed; an empty value is an empty
/// list. An item that is not one of `choices` is glued to the next one with
/// a comma and tried again (so a choice may contain a comma), as oslo.config
/// does, before giving up.
fn split_list(s: &str, choices: &[String], secret: bool) -> Result<Vec<String>, String> {
    let s = python::strip(s).trim_end_matches(',');
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let ok = |item: &str| choices.is_empty() || choices.iter().any(|c| c == item);
    let mut pieces = s.split(',');
    let mut out = Vec::new();
    while let Some(first) = pieces.next() {
        let mut item = first.to_owned();
        loop {
            if ok(python::strip(&item)) {
                out.push(python::strip(&item).to_owned());
                break;
            }
            match pieces.next() {
                Some(next) => {
                    item.push(',');
                    item.push_str(next);
                }
                None => {
                    let shown = if secret {
                        "an item".to_owned()
                    } else {
                        format!("item {:?}", python::strip(first))
                    };
                    return Err(format!("{shown} is not one of: {}", choices.join(", ")));
                }
            }
        }
    }
    Ok(out)
}

/// Parses a dict value like oslo.config's `Dict`: `k1:v1,k2:v2`, keys and
/// values trimmed, in the order written. A piece without `:` is glued to
/// the next one with a comma before giving up; empty and duplicate keys are
/// errors.
fn split_dict(s: &str, secret: bool) -> Result<Vec<(String, String)>, String> {
    let shown = || {
        if secret {
            "the value".to_owned()
        } else {
            format!("{:?}", python::strip(s))
        }
    };
    let s = python::strip(s);
    let mut out: Vec<(String, String)> = Vec::new();
    if s.is_empty() {
        return Ok(out);
    }
    let mut pieces = s.split(',');
    while let Some(first) = pieces.next() {
        let mut pair = first.to_owned();
        let (key, value) = loop {
            if let Some((k, v)) = pair.split_once(':') {
                break (python::strip(k).to_owned(), python::strip(v).to_owned());
            }
            match pieces.next() {
                Some(next) => {
                    pair.push(',');
                    pair.push_str(next);
                }
                None => return Err(format!("{} is not a list of key:value pairs", shown())),
            }
        };
        if key.is_empty() {
            return Err(format!("{} has an empty key", shown()));
        }
        if out.iter().any(|(k, _)| *k == key) {
            let key = if secret {
                "a key".to_owned()
            } else {
                format!("the key {key:?}")
            };
            return Err(format!("{} has {key} twice", shown()));
        }
        out.push((key, value));
    }
    Ok(out)
}

/// An IPv4 address in dotted-quad form or an IPv6 address without a zone,
/// as `inet_pton` accepts them.
fn valid_ip(s: &str) -> bool {
    s.parse::<Ipv4Addr>().is_ok() || s.parse::<Ipv6Addr>().is_ok()
}

/// oslo.config's `Hostname`: at most 253 characters, an optional trailing
/// dot, labels of 1–63 letters, digits and inner hyphens, and a last label
/// that is not all digits. Python matches the labels case-insensitively, so
/// the four non-ASCII letters whose simple case mapping is an ASCII letter
/// (K, ſ, İ, ı) count as letters there, but not in the last-label check.
fn valid_hostname(s: &str) -> bool {
    if s.is_empty() || s.chars().count() > 253 {
        return false;
    }
    let s = s.strip_suffix('.').unwrap_or(s);
    let last = s.rsplit('.').next().unwrap_or("");
    if !last.bytes().any(|b| b.is_ascii_alphabetic() || b == b'-') {
        return false;
    }
    let label_char = |c: char| {
        c.is_ascii_alphanumeric()
            || c == '-'
            || matches!(c, '\u{212a}' | '\u{17f}' | '\u{130}' | '\u{131}')
    };
    s.split('.').all(|label| {
        (1..=63).contains(&label.chars().count())
            && label.chars().all(label_char)
            && !label.starts_with('-')
            && !label.ends_with('-')
    })
}

/// The scheme of `s` when it is a URI with a valid scheme and host and a
/// path of valid characters (what oslo.config's `URI` requires through
/// rfc3986's validator); `None` otherwise.
fn uri_scheme(s: &str) -> Option<&str> {
    let (scheme, rest) = s.split_once(':')?;
    let mut chars = scheme.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let rest = rest.strip_prefix("//")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let tail = &rest[end..];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        let (inside, after) = v6.split_once(']')?;
        if inside.parse::<Ipv6Addr>().is_err() || !(after.is_empty() || valid_port(after)) {
            return None;
        }
        inside
    } else {
        let (host, port) = match host_port.rsplit_once(':') {
            Some((h, p)) if valid_port(&format!(":{p}")) => (h, Some(p)),
            Some(_) => return None,
            None => (host_port, None),
        };
        let _ = port;
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=%".contains(c))
        {
            return None;
        }
        host
    };
    if host.is_empty() {
        return None;
    }
    let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
    let path = &tail[..path_end];
    if !path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/%".contains(c))
    {
        return None;
    }
    Some(scheme)
}

/// `:digits` or `:` (an empty port is allowed by RFC 3986).
fn valid_port(s: &str) -> bool {
    s.strip_prefix(':')
        .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// A typed option value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// No value (`None` in Python): an option without default, or an empty
    /// integer or float.
    None,
    /// A string, IP address, host address or URI.
    String(String),
    /// An integer or port.
    Integer(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Boolean(bool),
    /// A list or multi-valued option.
    List(Vec<String>),
    /// A dict, in the order written.
    Dict(Vec<(String, String)>),
}

impl Value {
    /// The string, when the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, when the value is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Integer(n) => Some(*n),
            _ => None,
        }
    }

    /// The float, when the value is one.
    pub fn as_float(&self) -> Option<f64> {
        match self {
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The boolean, when the value is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    /// The items, when the value is a list.
    pub fn as_list(&self) -> Option<&[String]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    /// The pairs, when the value is a dict.
    pub fn as_dict(&self) -> Option<&[(String, String)]> {
        match self {
            Value::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// The value as Python's `str()` renders it, which is what oslo.config
    /// substitutes for `$name`: `""` for none, `True`/`False`, Python's
    /// float repr, `['a', 'b']` for lists, `{'k': 'v'}` for dicts.
    pub fn python_str(&self) -> String {
        match self {
            Value::None => String::new(),
            Value::String(s) => s.clone(),
            Value::Integer(n) => n.to_string(),
            Value::Float(f) => python::float_str(*f),
            Value::Boolean(true) => "True".to_owned(),
            Value::Boolean(false) => "False".to_owned(),
            Value::List(items) => {
                let items: Vec<String> = items.iter().map(|s| python::repr(s)).collect();
                format!("[{}]", items.join(", "))
            }
            Value::Dict(pairs) => {
                let pairs: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", python::repr(k), python::repr(v)))
                    .collect();
                format!("{{{}}}", pairs.join(", "))
            }
        }
    }
}

/// The value as a configuration file would write it (`a,b` for a list,
/// `k:v` pairs for a dict, `true`/`false`, `<None>` for none); what a sample
/// file and `config check` show.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::None => f.write_str("<None>"),
            Value::String(s) => f.write_str(s),
            Value::Integer(n) => write!(f, "{n}"),
            Value::Float(x) => f.write_str(&python::float_str(*x)),
            Value::Boolean(b) => write!(f, "{b}"),
            Value::List(items) => f.write_str(&items.join(",")),
            Value::Dict(pairs) => {
                let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                f.write_str(&pairs.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(t: &OptType, s: &str) -> Result<Value, String> {
        t.convert(s, false)
    }

    #[test]
    fn lists() {
        let t = OptType::list();
        assert_eq!(
            conv(&t, "a,b, c,"),
            Ok(Value::List(vec!["a".into(), "b".into(), "c".into()]))
        );
        assert_eq!(conv(&t, " , "), Ok(Value::List(vec![])));
        assert_eq!(
            conv(&t, " ,x"),
            Ok(Value::List(vec![String::new(), "x".into()]))
        );
        assert_eq!(conv(&t, ",,"), Ok(Value::List(vec![])));
        assert_eq!(conv(&t, ""), Ok(Value::List(vec![])));
        assert_eq!(
            conv(&t, "a,,b"),
            Ok(Value::List(vec!["a".into(), String::new(), "b".into()]))
        );
        let c = OptType::List {
            choices: vec!["a".into(), "b".into(), "c,d".into()],
        };
        assert_eq!(
            conv(&c, "a, c,d"),
            Ok(Value::List(vec!["a".into(), "c,d".into()]))
        );
        assert_eq!(
            conv(&c, "a,bogus"),
            Err("item \"bogus\" is not one of: a, b, c,d".into())
        );
        assert_eq!(
            c.convert("a,bogus", true),
            Err("an item is not one of: a, b, c,d".into())
        );
    }

    #[test]
    fn dicts() {
        let d = |pairs: &[(&str, &str)]| {
            Value::Dict(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        };
        assert_eq!(
            conv(&OptType::Dict, "b:2, a : 1"),
            Ok(d(&[("b", "2"), ("a", "1")]))
        );
        assert_eq!(conv(&OptType::Dict, "k:v:w"), Ok(d(&[("k", "v:w")])));
        assert_eq!(conv(&OptType::Dict, "a,b:c"), Ok(d(&[("a,b", "c")])));
        assert_eq!(conv(&OptType::Dict, ""), Ok(d(&[])));
        assert!(conv(&OptType::Dict, "k1:v1, k2 : v2 ,").is_err());
        assert!(conv(&OptType::Dict, "novalue").is_err());
        assert!(conv(&OptType::Dict, ":v").is_err());
        assert_eq!(
            conv(&OptType::Dict, "a:1,a:2"),
            Err("\"a:1,a:2\" has the key \"a\" twice".into())
        );
        let secret = OptType::Dict
            .convert("pw:hunter2,pw:x", true)
            .expect_err("duplicate");
        assert!(
            !secret.contains("hunter2") && !secret.contains("pw"),
            "{secret}"
        );
        assert_eq!(
            d(&[("b", "2"), ("a", "1")]).python_str(),
            "{'b': '2', 'a': '1'}"
        );
    }

    #[test]
    fn addresses() {
        for ok in ["127.0.0.1", "::1", "fe80::1", "::ffff:1.2.3.4"] {
            assert!(valid_ip(ok), "{ok}");
        }
        for bad in [
            "10.0.0.300",
            "fe80::1%eth0",
            "01.2.3.4",
            "localhost",
            "",
            " 1.2.3.4",
            "1.2.3",
        ] {
            assert!(!valid_ip(bad), "{bad}");
        }
        let h = OptType::HostAddress;
        assert_eq!(
            conv(&h, "example.com."),
            Ok(Value::String("example.com".into()))
        );
        assert_eq!(conv(&h, "node-1"), Ok(Value::String("node-1".into())));
        for bad in ["node_1", "-bad-", "123", "1.2.3.300", "a..b", ""] {
            assert!(conv(&h, bad).is_err(), "{bad}");
        }
        assert!(conv(&h, &"a".repeat(64)).is_err());
        assert!(conv(&h, "\u{212a}x").is_ok());
        assert!(conv(&h, "x.\u{212a}").is_err());
        assert!(conv(&h, &format!("{}.com", "a.".repeat(126))).is_err());
    }

    #[test]
    fn uris() {
        let t = OptType::Uri {
            schemes: vec![],
            max_length: None,
        };
        for ok in [
            "http://h:5000/v3",
            "https://[::1]:8080/",
            "mysql+pymysql://u:p@h/db",
            "x://h",
            "http://h:/",
        ] {
            assert!(conv(&t, ok).is_ok(), "{ok}");
        }
        for bad in [
            "h/v3",
            "http:/h",
            "http://",
            "1http://h",
            "http://h:x/",
            "http://h/a b",
            "http://[zz]/",
        ] {
            assert!(conv(&t, bad).is_err(), "{bad}");
        }
        let t = OptType::Uri {
            schemes: vec!["https".into()],
            max_length: Some(12),
        };
        assert!(conv(&t, "https://h/x").is_ok());
        assert!(conv(&t, "http://h/x").is_err());
        assert!(conv(&t, "https://h/xyz").is_err());
    }

    #[test]
    fn python_str_of_values() {
        assert_eq!(Value::None.python_str(), "");
        assert_eq!(Value::Boolean(false).python_str(), "False");
        assert_eq!(Value::Integer(9511).python_str(), "9511");
        assert_eq!(Value::Float(1e3).python_str(), "1000.0");
        assert_eq!(
            Value::List(vec!["GET".into(), "it's".into()]).python_str(),
            "['GET', \"it's\"]"
        );
    }

    #[test]
    fn secret_numbers_stay_out_of_messages() {
        let t = OptType::Integer {
            min: Some(0),
            max: Some(5),
        };
        assert_eq!(
            t.convert("12345678", true),
            Err("the value is greater than the maximum 5".into())
        );
        assert_eq!(
            t.convert("x1234", true),
            Err("the value is not an integer".into())
        );
        let t = OptType::Float {
            min: Some(0.0),
            max: Some(1.0),
        };
        assert_eq!(
            t.convert("-4321.5", true),
            Err("the value is less than the minimum 0".into())
        );
        assert_eq!(
            OptType::Port.convert("99999999999999999999", true),
            Err("the value is greater than the maximum 65535".into())
        );
    }

    #[test]
    fn float_bounds_in_messages() {
        let t = OptType::Float {
            min: Some(0.0),
            max: Some(10.0),
        };
        assert_eq!(
            conv(&t, "-0.5"),
            Err("-0.5 is less than the minimum 0".into())
        );
        assert_eq!(
            conv(&t, "1e3"),
            Err("1000.0 is greater than the maximum 10".into())
        );
        assert_eq!(conv(&t, " "), Ok(Value::None));
        assert!(conv(&t, "nan").is_ok());
    }
}
