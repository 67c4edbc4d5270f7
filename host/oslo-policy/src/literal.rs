//! `ast.literal_eval` of the left-hand side ("kind") of a generic check.
//!
//! oslo's `GenericCheck` first tries `ast.literal_eval(kind)`. A Python
//! literal (`True`, `'Member'`, `42`) is compared, as `str()`, with the
//! formatted match. When `literal_eval` raises `ValueError` (a name such as
//! `project_id`, a dotted path `user.id`, `-x`) the kind is a path into the
//! credentials. When it raises `SyntaxError` the exception escapes from
//! `enforce()`.

use python_semantics::python::float_repr;

use crate::python::{PyError, is_identifier, is_py_keyword};

/// The precomputed result of `literal_eval` on a check kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KindInfo {
    /// A literal: `str()` of its value, or `None` for a value no formatted
    /// match can equal (a `str` holding a lone surrogate).
    Literal(Option<String>),
    /// A `ValueError`: the kind, split on `.`, is a path into the credentials.
    Path(Vec<String>),
    /// A `SyntaxError` (or a literal this crate does not evaluate), raised
    /// when the check is evaluated.
    Error(PyError),
}

/// What the text of a kind is, as Python's parser sees it.
enum Class {
    /// An int or float constant: `str()` of its value.
    Number(String),
    /// Another literal (`str`, `True`, `None`, `...`).
    Literal(Option<String>),
    /// An expression `literal_eval` refuses with `ValueError`.
    NotLiteral,
    Error(PyError),
}

pub(crate) fn classify_kind(kind: &str) -> KindInfo {
    // literal_eval strips leading spaces and tabs; the parser ignores
    // trailing whitespace. The credential path uses the kind as written.
    let text = kind
        .trim_start_matches([' ', '\t'])
        .trim_end_matches([' ', '\t', '\n', '\r', '\x0c']);
    match classify(text) {
        Class::Number(v) => KindInfo::Literal(Some(v)),
        Class::Literal(v) => KindInfo::Literal(v),
        Class::NotLiteral => KindInfo::Path(kind.split('.').map(str::to_owned).collect()),
        Class::Error(e) => KindInfo::Error(e),
    }
}

fn classify(s: &str) -> Class {
    match s {
        "True" | "False" | "None" => return Class::Literal(Some(s.to_owned())),
        "..." => return Class::Literal(Some("Ellipsis".to_owned())),
        "" => return Class::Error(PyError::new("SyntaxError: empty check kind")),
        _ => {}
    }
    if is_name_path(s) {
        return Class::NotLiteral;
    }
    if let Some(sign) = s.chars().next().filter(|c| *c == '-' || *c == '+') {
        let operand = s[1..].trim_start_matches([' ', '\t']);
        let nested_sign = operand.starts_with(['-', '+']);
        return match classify(operand) {
            Class::Number(_) if nested_sign => Class::NotLiteral,
            // Magnum: ast.literal_eval accepts a sign only in front of a
            // number ("-5"); "-x", "-True", "--5" are malformed nodes.
            Class::Number(v) if sign == '-' => Class::Number(negate(&v)),
            Class::Number(v) => Class::Number(v),
            Class::Literal(_) | Class::NotLiteral => Class::NotLiteral,
            Class::Error(e) => Class::Error(e),
        };
    }
    match number_literal(s) {
        Ok(Some(v)) => return Class::Number(v),
        Ok(None) => {}
        Err(e) => return Class::Error(e),
    }
    match string_literal(s) {
        Ok(Some(v)) => return Class::Literal(v),
        Ok(None) => {}
        Err(e) => return Class::Error(e),
    }
    // Deviation: anything else (containers, bytes, complex numbers,
    // expressions) is a literal, a ValueError or a SyntaxError in Python;
    // this crate does not parse Python expressions and fails closed with an
    // evaluation error.
    Class::Error(PyError::unsupported(format!("check kind {s:?}")))
}

fn negate(v: &str) -> String {
    if let Some(rest) = v.strip_prefix('-') {
        return rest.to_owned();
    }
    if v == "0" {
        return v.to_owned();
    }
    format!("-{v}")
}

/// Whether `s` parses in Python as a name or an attribute chain
/// (`project_id`, `user.id`, `True.x`): `literal_eval` raises `ValueError`.
fn is_name_path(s: &str) -> bool {
    let mut segments = s.split('.');
    let Some(first) = segments.next() else {
        return false;
    };
    let constant = |seg: &str| matches!(seg, "True" | "False" | "None");
    let first_ok = (is_identifier(first) && !is_py_keyword(first) && !constant(first))
        || (constant(first) && s.len() > first.len());
    first_ok && segments.all(|seg| is_identifier(seg) && !is_py_keyword(seg) && !constant(seg))
}

/// Parses a Python int or float literal and returns `str()` of its value;
/// `Ok(None)` when `s` is not a number at all.
fn number_literal(s: &str) -> Result<Option<String>, PyError> {
    let b = s.as_bytes();
    let starts_number =
        b[0].is_ascii_digit() || (b[0] == b'.' && b.len() > 1 && b[1].is_ascii_digit());
    if !starts_number {
        return Ok(None);
    }
    if s.ends_with(['j', 'J']) {
        return Err(PyError::unsupported(format!("complex literal {s:?}")));
    }
    let invalid = || PyError::new(format!("SyntaxError: invalid literal {s:?}"));
    if b.len() > 1 && b[0] == b'0' && b"xXoObB".contains(&b[1]) {
        let base = match b[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            _ => 2,
        };
        let digits = underscore_digits(&s[2..], base, true).ok_or_else(invalid)?;
        return Ok(Some(to_decimal(&digits, base)));
    }
    if let Some(digits) = underscore_digits(s, 10, false) {
        if digits.len() > 1 && digits.starts_with('0') && digits.bytes().any(|c| c != b'0') {
            return Err(PyError::new(
                "SyntaxError: leading zeros in decimal integer literals are not permitted",
            ));
        }
        return Ok(Some(to_decimal(&digits, 10)));
    }
    // Float: [digitpart] ["." [digitpart]] [("e"|"E") ["+"|"-"] digitpart].
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    if let Some(exp) = exponent {
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        if underscore_digits(exp, 10, false).is_none() {
            return Err(PyError::new(format!(
                "SyntaxError: invalid float literal {s:?}"
            )));
        }
    }
    let (int_part, frac_part, dot) = match mantissa.split_once('.') {
        Some((i, f)) => (i, f, true),
        None => (mantissa, "", false),
    };
    let int_ok = int_part.is_empty() || underscore_digits(int_part, 10, false).is_some();
    let frac_ok = frac_part.is_empty() || underscore_digits(frac_part, 10, false).is_some();
    if !int_ok || !frac_ok || (int_part.is_empty() && frac_part.is_empty()) {
        return Err(invalid());
    }
    if !dot && exponent.is_none() {
        return Err(invalid());
    }
    let cleaned: String = s.chars().filter(|c| *c != '_').collect();
    let value: f64 = cleaned.parse().map_err(|_| invalid())?;
    Ok(Some(float_repr(value)))
}

/// Checks Python's digit grammar (single underscores between digits,
/// optionally one right after a base prefix) and strips the underscores.
fn underscore_digits(s: &str, base: u32, prefixed: bool) -> Option<String> {
    let s = if prefixed {
        s.strip_prefix('_').unwrap_or(s)
    } else {
        s
    };
    if s.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut prev_underscore = true;
    for c in s.chars() {
        if c == '_' {
            if prev_underscore {
                return None;
            }
            prev_underscore = true;
            continue;
        }
        c.to_digit(base)?;
        out.push(c);
        prev_underscore = false;
    }
    (!prev_underscore).then_some(out)
}

/// The decimal text of an integer of any size given by its digits.
fn to_decimal(digits: &str, base: u32) -> String {
    // Little-endian limbs of 10^9.
    const LIMB: u64 = 1_000_000_000;
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let mut carry = u64::from(c.to_digit(base).unwrap_or(0));
        for limb in &mut limbs {
            let v = *limb * u64::from(base) + carry;
            *limb = v % LIMB;
            carry = v / LIMB;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let mut out = String::new();
    for (i, limb) in limbs.iter().rev().enumerate() {
        if i == 0 {
            out.push_str(&limb.to_string());
        } else {
            out.push_str(&format!("{limb:09}"));
        }
    }
    out
}

/// Parses one or more adjacent Python `str` literals (implicit
/// concatenation), each with an optional `u` or `r` prefix, single or triple
/// quoted. `Ok(None)` when `s` is not a string literal at all.
fn string_literal(s: &str) -> Result<Option<Option<String>>, PyError> {
    if !s.starts_with(['\'', '"', 'u', 'U', 'r', 'R']) {
        return Ok(None);
    }
    let mut out = String::new();
    let mut representable = true;
    let mut rest = s;
    let mut first = true;
    while !rest.is_empty() {
        let mut raw = false;
        if let Some(r) = rest.strip_prefix(['u', 'U']) {
            rest = r;
        } else if let Some(r) = rest.strip_prefix(['r', 'R']) {
            raw = true;
            rest = r;
        }
        let Some(q) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            if first {
                // A name starting with u or r.
                return Ok(None);
            }
            return Err(PyError::unsupported("expression after a string literal"));
        };
        first = false;
        let quote: String = if rest[1..].starts_with(&format!("{q}{q}")) {
            q.to_string().repeat(3)
        } else {
            q.to_string()
        };
        let (body, after) = scan_string(&rest[quote.len()..], &quote)
            .ok_or_else(|| PyError::new("SyntaxError: unterminated string literal"))?;
        if raw {
            out.push_str(body);
        } else {
            match unescape(body)? {
                Some(v) => out.push_str(&v),
                None => representable = false,
            }
        }
        rest = after;
    }
    Ok(Some(representable.then_some(out)))
}

/// Finds the closing quote (a backslash always skips the next character,
/// also in raw strings).
fn scan_string<'a>(s: &'a str, quote: &str) -> Option<(&'a str, &'a str)> {
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '\\' {
            chars.next();
            continue;
        }
        if s[i..].starts_with(quote) {
            return Some((&s[..i], &s[i + quote.len()..]));
        }
    }
    None
}

/// Decodes the escapes of a non-raw string literal. `Ok(None)` for a text
/// holding a lone surrogate, which Python allows in a `str` but which no
/// UTF-8 text can equal.
fn unescape(s: &str) -> Result<Option<String>, PyError> {
    if !s.contains('\\') {
        return Ok(Some(s.to_owned()));
    }
    let mut out = String::with_capacity(s.len());
    let mut surrogate = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '0'..='7' => {
                let mut n = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            n = n * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                // At most 0o777: always a valid scalar value.
                out.push(char::from_u32(n).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let len = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut n: u32 = 0;
                for _ in 0..len {
                    let d = chars.next().and_then(|c| c.to_digit(16)).ok_or_else(|| {
                        PyError::new(format!("SyntaxError: truncated \\{e} escape"))
                    })?;
                    n = n.wrapping_mul(16).wrapping_add(d);
                }
                if n > 0x10_ffff {
                    return Err(PyError::new("SyntaxError: illegal Unicode character"));
                }
                match char::from_u32(n) {
                    Some(c) => out.push(c),
                    None => surrogate = true,
                }
            }
            'N' => return Err(PyError::unsupported("\\N{...} escape")),
            // Unknown escapes keep the backslash (with a warning).
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Ok((!surrogate).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    enum Want {
        Literal(&'static str),
        Path(&'static str),
        Error,
    }

    // Port of TestClassifyKind (Go), plus the kinds the Rust classifier
    // settles where Go failed closed.
    #[test]
    fn classify_kinds() {
        use Want::*;
        let cases = [
            ("True", Literal("True")),
            ("None", Literal("None")),
            ("...", Literal("Ellipsis")),
            ("'Member'", Literal("Member")),
            (r#""a\tb""#, Literal("a\tb")),
            (r"r'a\tb'", Literal(r"a\tb")),
            ("'a''b'", Literal("ab")),
            ("42", Literal("42")),
            ("1_000", Literal("1000")),
            ("0o17", Literal("15")),
            ("0b101", Literal("5")),
            ("00", Literal("0")),
            ("-0", Literal("0")),
            ("+7", Literal("7")),
            ("1.", Literal("1.0")),
            (".5", Literal("0.5")),
            ("1e400", Literal("inf")),
            ("project_id", Path("project_id")),
            ("user.domain.id", Path("user.domain.id")),
            ("True.x", Path("True.x")),
            ("-x", Path("-x")),
            ("", Error),
            ("01", Error),
            ("1__0", Error),
            ("if", Error),
            ("a.if", Error),
            ("x.None", Error),
            ("'open", Error),
            ("1j", Error),
            ("[1]", Error),
            // Beyond the Go table.
            ("0x1F", Literal("31")),
            (
                "0xffffffffffffffffffffffff",
                Literal("79228162514264337593543950335"),
            ),
            (
                "123456789012345678901234",
                Literal("123456789012345678901234"),
            ),
            ("-0.0", Literal("-0.0")),
            ("-1e400", Literal("-inf")),
            ("1e16", Literal("1e+16")),
            ("1.e5", Literal("100000.0")),
            (r"'\x41b'", Literal("Ab")),
            (r"'\u00e9'", Literal("é")),
            ("'''abc'''", Literal("abc")),
            ("u'abc'", Literal("abc")),
            ("--5", Path("--5")),
            ("-True", Path("-True")),
            ("-'a'", Path("-'a'")),
            (" x", Path(" x")),
            ("é", Path("é")),
            ("_", Path("_")),
            ("lambda", Error),
            ("1e", Error),
            ("0x", Error),
        ];
        for (kind, want) in cases {
            let got = classify_kind(kind);
            match (&want, &got) {
                (Literal(v), KindInfo::Literal(Some(g))) if v == g => {}
                (Path(p), KindInfo::Path(segs)) if segs.join(".") == *p => {}
                (Error, KindInfo::Error(_)) => {}
                _ => panic!("classify_kind({kind:?}) = {got:?}"),
            }
        }
    }

    #[test]
    fn lone_surrogates_never_match() {
        assert_eq!(classify_kind(r"'\ud800'"), KindInfo::Literal(None));
    }
}
