//! The right-hand side of a check ("match") is a Python printf-style format
//! applied to the target with the `%` operator: `"%(project_id)s" % target`.
//! A missing key makes the check false (oslo catches `KeyError`); any other
//! formatting error is an exception in oslo and an error here.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::python::{PyError, ascii_escape, py_map_repr, py_repr, py_str};

/// The largest width or precision of a conversion.
const MAX_WIDTH: usize = 4096;

/// A compiled format. A text without `%` formats to itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MatchFormat {
    Plain,
    Parts(Vec<Part>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Literal(String),
    Spec(Spec),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spec {
    /// `%(key)…`; `None` for an un-keyed conversion, which formats the
    /// whole target (Python's `"%s" % {...}`).
    key: Option<String>,
    conv: char,
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
    /// Raised when formatting reaches this part (Python goes left to right,
    /// after it has looked the key up).
    err: Option<PyError>,
}

impl Spec {
    fn new(key: Option<String>) -> Self {
        Spec {
            key,
            conv: 's',
            left: false,
            plus: false,
            space: false,
            zero: false,
            width: 0,
            prec: None,
            err: None,
        }
    }

    fn failing(key: Option<String>, err: PyError) -> Self {
        Spec {
            err: Some(err),
            ..Spec::new(key)
        }
    }
}

impl MatchFormat {
    pub(crate) fn compile(s: &str) -> MatchFormat {
        if !s.contains('%') {
            return MatchFormat::Plain;
        }
        let mut parts = Vec::new();
        let mut lit = String::new();
        let flush = |lit: &mut String, parts: &mut Vec<Part>| {
            if !lit.is_empty() {
                parts.push(Part::Literal(std::mem::take(lit)));
            }
        };
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let Some(pct) = s[i..].find('%') else {
                lit.push_str(&s[i..]);
                break;
            };
            lit.push_str(&s[i..i + pct]);
            i += pct + 1;
            if i >= b.len() {
                flush(&mut lit, &mut parts);
                parts.push(Part::Spec(Spec::failing(
                    None,
                    PyError::new("ValueError: incomplete format"),
                )));
                return MatchFormat::Parts(parts);
            }
            if b[i] == b'%' {
                lit.push('%');
                i += 1;
                continue;
            }
            let mut key = None;
            if b[i] == b'(' {
                let start = i + 1;
                let mut depth = 1;
                let mut j = start;
                while j < b.len() && depth > 0 {
                    match b[j] {
                        b'(' => depth += 1,
                        b')' => depth -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                if depth > 0 {
                    flush(&mut lit, &mut parts);
                    parts.push(Part::Spec(Spec::failing(
                        None,
                        PyError::new("ValueError: incomplete format key"),
                    )));
                    return MatchFormat::Parts(parts);
                }
                key = Some(s[start..j - 1].to_owned());
                i = j;
            }
            let mut spec = Spec::new(key);
            while i < b.len() {
                match b[i] {
                    b'-' => spec.left = true,
                    b'+' => spec.plus = true,
                    b' ' => spec.space = true,
                    b'0' => spec.zero = true,
                    b'#' => {}
                    _ => break,
                }
                i += 1;
            }
            let mut star = false;
            match star_or_number(s, &mut i) {
                Some(width) => spec.width = width,
                None => star = true,
            }
            if i < b.len() && b[i] == b'.' {
                i += 1;
                match star_or_number(s, &mut i) {
                    Some(prec) => spec.prec = Some(prec),
                    None => star = true,
                }
            }
            // Python skips one length modifier.
            if i < b.len() && matches!(b[i], b'h' | b'l' | b'L') {
                i += 1;
            }
            let Some(conv) = s[i..].chars().next() else {
                flush(&mut lit, &mut parts);
                spec.err = Some(PyError::new("ValueError: incomplete format"));
                parts.push(Part::Spec(spec));
                return MatchFormat::Parts(parts);
            };
            i += conv.len_utf8();
            spec.conv = conv;
            if spec.width > MAX_WIDTH || spec.prec.is_some_and(|p| p > MAX_WIDTH) {
                // Deviation: Python pads to any width that fits in memory
                // ("width too big" only past sys.maxsize); a policy never
                // needs more than this.
                spec.err = Some(PyError::unsupported(format!(
                    "width or precision above {MAX_WIDTH}"
                )));
            } else if star {
                // "*" takes its value from a tuple argument; with a mapping
                // Python raises TypeError.
                spec.err = Some(PyError::new("TypeError: * wants int"));
            } else if "sraiud".contains(conv) {
            } else if "xXoeEfFgGc%".contains(conv) {
                // Deviation: these conversions are not reproduced; the check
                // fails closed.
                spec.err = Some(PyError::unsupported(format!("conversion %{conv}")));
            } else {
                spec.err = Some(PyError::new(format!(
                    "ValueError: unsupported format character {conv:?}"
                )));
            }
            flush(&mut lit, &mut parts);
            parts.push(Part::Spec(spec));
        }
        flush(&mut lit, &mut parts);
        MatchFormat::Parts(parts)
    }

    /// Formats the target. `Ok(None)` when a key is absent from the target
    /// (Python's `KeyError`, which makes the check false).
    pub(crate) fn apply<'a>(
        &self,
        raw: &'a str,
        target: &'a Map<String, Value>,
    ) -> Result<Option<Cow<'a, str>>, PyError> {
        let parts = match self {
            MatchFormat::Plain => return Ok(Some(Cow::Borrowed(raw))),
            MatchFormat::Parts(parts) => parts,
        };
        // Fast path: exactly one plain "%(key)s" is the value's str().
        if let [Part::Spec(spec)] = parts.as_slice()
            && spec.is_plain_str()
            && let Some(key) = &spec.key
        {
            return Ok(target.get(key).map(py_str));
        }
        let mut out = String::new();
        let mut whole_target_used = false;
        for part in parts {
            let spec = match part {
                Part::Literal(l) => {
                    out.push_str(l);
                    continue;
                }
                Part::Spec(spec) => spec,
            };
            // Python looks the key up as soon as it has read "%(key)",
            // before it reads the conversion: a missing key wins over a bad
            // format.
            let arg = match &spec.key {
                Some(key) => match target.get(key) {
                    Some(v) => Arg::Value(v),
                    None => return Ok(None),
                },
                None => {
                    if let Some(err) = &spec.err {
                        return Err(err.clone());
                    }
                    // With a mapping argument, the first un-keyed
                    // conversion takes the whole mapping; the next one has
                    // nothing left.
                    if whole_target_used {
                        return Err(PyError::new(
                            "TypeError: not enough arguments for format string",
                        ));
                    }
                    whole_target_used = true;
                    Arg::Map(target)
                }
            };
            if let Some(err) = &spec.err {
                return Err(err.clone());
            }
            spec.format(arg, &mut out)?;
        }
        Ok(Some(Cow::Owned(out)))
    }
}

#[derive(Clone, Copy)]
enum Arg<'a> {
    Value(&'a Value),
    Map(&'a Map<String, Value>),
}

impl Spec {
    fn is_plain_str(&self) -> bool {
        self.conv == 's' && self.err.is_none() && self.width == 0 && self.prec.is_none()
    }

    fn format(&self, arg: Arg<'_>, out: &mut String) -> Result<(), PyError> {
        match self.conv {
            's' | 'r' | 'a' => {
                let text: Cow<'_, str> = match (self.conv, arg) {
                    ('s', Arg::Value(v)) => py_str(v),
                    (_, Arg::Value(v)) => Cow::Owned(py_repr(v)),
                    (_, Arg::Map(m)) => Cow::Owned(py_map_repr(m)),
                };
                let text = if self.conv == 'a' {
                    Cow::Owned(ascii_escape(&text).into_owned())
                } else {
                    text
                };
                let text = match self.prec {
                    Some(p) if text.chars().count() > p => {
                        Cow::Owned(text.chars().take(p).collect())
                    }
                    _ => text,
                };
                pad(out, &text, self.width, self.left);
                Ok(())
            }
            _ => {
                let number = match arg {
                    Arg::Value(v) => integer_text(v, self.conv)?,
                    Arg::Map(_) => {
                        return Err(PyError::new(format!(
                            "TypeError: %{} format: a real number is required, not dict",
                            self.conv
                        )));
                    }
                };
                let (neg, digits) = match number.strip_prefix('-') {
                    Some(d) => (true, d),
                    None => (false, number.as_str()),
                };
                let mut digits = digits.to_owned();
                if let Some(p) = self.prec
                    && p > digits.len()
                {
                    digits.insert_str(0, &"0".repeat(p - digits.len()));
                }
                let sign = if neg {
                    "-"
                } else if self.plus {
                    "+"
                } else if self.space {
                    " "
                } else {
                    ""
                };
                if !self.left && self.zero && sign.len() + digits.len() < self.width {
                    let zeros = self.width - sign.len() - digits.len();
                    digits.insert_str(0, &"0".repeat(zeros));
                }
                pad(out, &format!("{sign}{digits}"), self.width, self.left);
                Ok(())
            }
        }
    }
}

/// The decimal text of `int(v)` for `%d`, `%i` and `%u`.
fn integer_text(v: &Value, conv: char) -> Result<String, PyError> {
    let type_name = match v {
        Value::Bool(b) => return Ok(if *b { "1" } else { "0" }.to_owned()),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                return Ok(i.to_string());
            }
            if let Some(u) = n.as_u64() {
                return Ok(u.to_string());
            }
            // A float truncates towards zero; Rust prints the exact value.
            let f = n.as_f64().unwrap_or(0.0).trunc();
            let text = format!("{f:.0}");
            return Ok(if text == "-0" { "0".to_owned() } else { text });
        }
        Value::String(_) => "str",
        Value::Null => "NoneType",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    };
    Err(PyError::new(format!(
        "TypeError: %{conv} format: a real number is required, not {type_name}"
    )))
}

fn pad(out: &mut String, s: &str, width: usize, left: bool) {
    let n = s.chars().count();
    if n >= width {
        out.push_str(s);
        return;
    }
    let fill = " ".repeat(width - n);
    if left {
        out.push_str(s);
        out.push_str(&fill);
    } else {
        out.push_str(&fill);
        out.push_str(s);
    }
}

/// Parses digits, saturating above the width limit.
/// The width or precision of a conversion at byte `*i` of `s`: `None` for
/// `*` (a value taken from a tuple argument), else its digits (none is 0)
/// as [`digits_capped`] reads them. `*i` moves past it.
fn star_or_number(s: &str, i: &mut usize) -> Option<usize> {
    let b = s.as_bytes();
    if *i < b.len() && b[*i] == b'*' {
        *i += 1;
        return None;
    }
    let start = *i;
    while *i < b.len() && b[*i].is_ascii_digit() {
        *i += 1;
    }
    Some(digits_capped(&s[start..*i]))
}

fn digits_capped(d: &str) -> usize {
    let mut n: usize = 0;
    for c in d.bytes() {
        n = n * 10 + usize::from(c - b'0');
        if n > MAX_WIDTH {
            return MAX_WIDTH + 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fmt(format: &str, target: Value) -> Result<Option<String>, PyError> {
        let Value::Object(target) = target else {
            panic!("target must be an object")
        };
        let f = MatchFormat::compile(format);
        f.apply(format, &target).map(|r| r.map(Cow::into_owned))
    }

    #[test]
    fn formats_like_python() {
        let t = json!({"name": "abc", "count": 42, "neg": -7.9, "big": 1e20, "flag": true,
                       "none": null, "list": ["a", 1], "é": "x"});
        for (format, want) in [
            ("plain", "plain"),
            ("%(name)s", "abc"),
            ("%(count)s", "42"),
            ("%(none)s", "None"),
            ("%(list)s", "['a', 1]"),
            ("%(name)r", "'abc'"),
            ("%(name)6s|", "   abc|"),
            ("%(name)-6s|", "abc   |"),
            ("%(name).2s", "ab"),
            ("%(count)05d", "00042"),
            ("%(neg)05.3d", "-0007"),
            ("%(big)d", "100000000000000000000"),
            ("%(flag)d", "1"),
            ("%(count)+d", "+42"),
            ("%(count) d", " 42"),
            ("%(count)hs", "42"),
            ("100%%", "100%"),
            ("x-%(name)s-%(count)s", "x-abc-42"),
            ("%(é)a", "'x'"),
            (
                "%s",
                "{'name': 'abc', 'count': 42, 'neg': -7.9, 'big': 1e+20, 'flag': True, 'none': None, 'list': ['a', 1], 'é': 'x'}",
            ),
        ] {
            assert_eq!(
                fmt(format, t.clone()),
                Ok(Some(want.to_owned())),
                "{format}"
            );
        }
    }

    #[test]
    fn missing_keys_and_errors() {
        let t = json!({"name": "abc"});
        assert_eq!(fmt("%(missing)s", t.clone()), Ok(None));
        // The key is looked up before the conversion is read.
        assert_eq!(fmt("%(missing)-", t.clone()), Ok(None));
        assert_eq!(fmt("%(missing)q", t.clone()), Ok(None));
        for format in [
            "%(name)",
            "abc%",
            "%(name",
            "%(name)q",
            "%(name)hhs",
            "%(name)d",
            "%(name)*s",
            "%(name)x",
            "%s%s",
            "%d",
            "%(name)5000s",
        ] {
            assert!(fmt(format, t.clone()).is_err(), "{format}");
        }
        // An error before a missing key raises.
        assert!(fmt("%(name)q%(missing)s", t.clone()).is_err());
    }

    #[test]
    fn empty_target_formats_as_empty_dict() {
        assert_eq!(fmt("%s", json!({})), Ok(Some("{}".to_owned())));
    }
}
