//! Python's text forms of values, as Magnum's messages show them: `repr()`
//! and `str()` of strings, integers, floats, booleans, `None`, bytes, lists,
//! tuples and dicts, `str(type(v))`, and the `int()` and `float()`
//! conversions of strings with CPython's error texts.
//!
//! The reference runs CPython 3.11; the Unicode properties `repr()`, `int()`,
//! `float()` and the tokenizer depend on (printable characters, decimal
//! digits, white space, identifier characters) come from that interpreter's Unicode database
//! ([`UNICODE_VERSION`]), generated into `python/unicode_tables.rs` by
//! `tools/unicode_tables.py`.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

#[rustfmt::skip]
mod unicode_tables;

/// The Unicode version of the character tables (CPython 3.11's).
pub const UNICODE_VERSION: &str = unicode_tables::UNICODE_VERSION;

/// CPython's default `sys.get_int_max_str_digits()`: `int()` refuses longer
/// decimal strings.
pub const INT_MAX_STR_DIGITS: usize = 4300;

// ---------------------------------------------------------------- repr/str

/// A value with a Python representation.
///
/// `write_repr` is `repr(v)`; `write_str` is `str(v)`, which differs from
/// `repr` only for `str` itself (no quotes) in the types Magnum shows;
/// `class_name` is the name in `str(type(v))` (`"<class 'int'>"`).
pub trait PyRepr {
    /// Appends Python's `repr()` of the value.
    fn write_repr(&self, out: &mut String);

    /// Appends Python's `str()` of the value; `repr()` unless overridden.
    fn write_str(&self, out: &mut String) {
        self.write_repr(out);
    }

    /// The Python class name: `str`, `int`, `float`, `bool`, `NoneType`,
    /// `list`, `dict`, `bytes`, …
    fn class_name(&self) -> &'static str;
}

/// Python's `repr(v)`.
pub fn repr<T: PyRepr + ?Sized>(v: &T) -> String {
    let mut out = String::new();
    v.write_repr(&mut out);
    out
}

/// Python's `str(v)`: strings as they are, everything else as [`repr`].
pub fn str_of<T: PyRepr + ?Sized>(v: &T) -> String {
    let mut out = String::new();
    v.write_str(&mut out);
    out
}

/// Python's `str(type(v))`: `<class 'float'>`.
pub fn class_of<T: PyRepr + ?Sized>(v: &T) -> String {
    format!("<class '{}'>", v.class_name())
}

/// Python's `None`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PyNone;

impl PyRepr for PyNone {
    fn write_repr(&self, out: &mut String) {
        out.push_str("None");
    }
    fn class_name(&self) -> &'static str {
        "NoneType"
    }
}

/// A reference or a box renders as the value it points to.
macro_rules! pointer_repr {
    ($($pointer:ty),+) => {$(
        impl<T: PyRepr + ?Sized> PyRepr for $pointer {
            fn write_repr(&self, out: &mut String) {
                (**self).write_repr(out);
            }
            fn write_str(&self, out: &mut String) {
                (**self).write_str(out);
            }
            fn class_name(&self) -> &'static str {
                (**self).class_name()
            }
        }
    )+};
}

pointer_repr!(&T, Box<T>);

/// `None` renders as Python's `None`.
impl<T: PyRepr> PyRepr for Option<T> {
    fn write_repr(&self, out: &mut String) {
        match self {
            Some(v) => v.write_repr(out),
            None => PyNone.write_repr(out),
        }
    }
    fn write_str(&self, out: &mut String) {
        match self {
            Some(v) => v.write_str(out),
            None => PyNone.write_str(out),
        }
    }
    fn class_name(&self) -> &'static str {
        match self {
            Some(v) => v.class_name(),
            None => PyNone.class_name(),
        }
    }
}

impl PyRepr for str {
    fn write_repr(&self, out: &mut String) {
        write_string_repr(out, self);
    }
    fn write_str(&self, out: &mut String) {
        out.push_str(self);
    }
    fn class_name(&self) -> &'static str {
        "str"
    }
}

/// An owned string renders as the `str` it holds.
impl PyRepr for String {
    fn write_repr(&self, out: &mut String) {
        self.as_str().write_repr(out);
    }
    fn write_str(&self, out: &mut String) {
        self.as_str().write_str(out);
    }
    fn class_name(&self) -> &'static str {
        self.as_str().class_name()
    }
}

impl PyRepr for bool {
    fn write_repr(&self, out: &mut String) {
        out.push_str(if *self { "True" } else { "False" });
    }
    fn class_name(&self) -> &'static str {
        "bool"
    }
}

macro_rules! int_repr {
    ($($t:ty),+) => {$(
        impl PyRepr for $t {
            fn write_repr(&self, out: &mut String) {
                // Writing to a String cannot fail.
                let _ = write!(out, "{self}");
            }
            fn class_name(&self) -> &'static str {
                "int"
            }
        }
    )+};
}

int_repr!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

impl PyRepr for f64 {
    fn write_repr(&self, out: &mut String) {
        write_float_repr(out, *self);
    }
    fn class_name(&self) -> &'static str {
        "float"
    }
}

/// Python's `bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes<'a>(pub &'a [u8]);

impl PyRepr for Bytes<'_> {
    fn write_repr(&self, out: &mut String) {
        write_bytes_repr(out, self.0);
    }
    fn class_name(&self) -> &'static str {
        "bytes"
    }
}

/// Python's `complex`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Complex {
    pub re: f64,
    pub im: f64,
}

impl PyRepr for Complex {
    fn write_repr(&self, out: &mut String) {
        write_complex_repr(out, self.re, self.im);
    }
    fn class_name(&self) -> &'static str {
        "complex"
    }
}

/// A slice rendered as a Python `tuple`: `(1,)`, `(1, 2)`, `()`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuple<'a, T>(pub &'a [T]);

impl<T: PyRepr> PyRepr for Tuple<'_, T> {
    fn write_repr(&self, out: &mut String) {
        out.push('(');
        write_items(out, self.0.iter());
        if self.0.len() == 1 {
            out.push(',');
        }
        out.push(')');
    }
    fn class_name(&self) -> &'static str {
        "tuple"
    }
}

/// Slices and vectors are Python `list`s.
impl<T: PyRepr> PyRepr for [T] {
    fn write_repr(&self, out: &mut String) {
        out.push('[');
        write_items(out, self.iter());
        out.push(']');
    }
    fn class_name(&self) -> &'static str {
        "list"
    }
}

impl<T: PyRepr> PyRepr for Vec<T> {
    fn write_repr(&self, out: &mut String) {
        self.as_slice().write_repr(out);
    }
    fn class_name(&self) -> &'static str {
        "list"
    }
}

/// A `BTreeMap` is a Python `dict` whose insertion order was the key order.
impl<K: PyRepr, V: PyRepr> PyRepr for BTreeMap<K, V> {
    fn write_repr(&self, out: &mut String) {
        write_dict(out, self.iter());
    }
    fn class_name(&self) -> &'static str {
        "dict"
    }
}

/// A JSON value is the Python value `json.loads` makes of it: `null` is
/// `None`, numbers are `int` or `float`, objects are `dict`s in the order of
/// the document.
///
/// serde_json reads integers beyond the 64-bit range as floats where Python
/// keeps an exact `int`; callers that must echo such integers decode them
/// themselves.
impl PyRepr for serde_json::Value {
    fn write_repr(&self, out: &mut String) {
        use serde_json::Value;
        match self {
            Value::Null => PyNone.write_repr(out),
            Value::Bool(b) => b.write_repr(out),
            Value::Number(n) => write_json_number(out, n),
            Value::String(s) => write_string_repr(out, s),
            Value::Array(items) => items.write_repr(out),
            Value::Object(map) => map.write_repr(out),
        }
    }
    fn write_str(&self, out: &mut String) {
        match self {
            serde_json::Value::String(s) => out.push_str(s),
            other => other.write_repr(out),
        }
    }
    fn class_name(&self) -> &'static str {
        use serde_json::Value;
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            Value::String(_) => "str",
            Value::Array(_) => "list",
            Value::Object(_) => "dict",
        }
    }
}

impl PyRepr for serde_json::Map<String, serde_json::Value> {
    fn write_repr(&self, out: &mut String) {
        write_dict(out, self.iter());
    }
    fn class_name(&self) -> &'static str {
        "dict"
    }
}

fn write_json_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        i.write_repr(out);
    } else if let Some(u) = n.as_u64() {
        u.write_repr(out);
    } else if let Some(f) = n.as_f64() {
        write_float_repr(out, f);
    } else {
        // Only reachable with serde_json's arbitrary-precision numbers: the
        // document's own digits.
        out.push_str(&n.to_string());
    }
}

fn write_items<'a, T: PyRepr + 'a>(out: &mut String, items: impl Iterator<Item = &'a T>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        item.write_repr(out);
    }
}

/// Appends a Python dict of `items` in the given order: `{'a': 1, 'b': 2}`.
pub fn write_dict<K: PyRepr, V: PyRepr>(out: &mut String, items: impl IntoIterator<Item = (K, V)>) {
    out.push('{');
    for (i, (k, v)) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        k.write_repr(out);
        out.push_str(": ");
        v.write_repr(out);
    }
    out.push('}');
}

// ---------------------------------------------------------------- strings

/// Python's `repr(s)` of a `str`.
pub fn string_repr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string_repr(&mut out, s);
    out
}

/// Appends Python's `repr(s)` of a `str`: single quotes unless the text
/// holds a `'` and no `"`; backslash escapes for the quote, `\\`, `\t`,
/// `\n`, `\r`, other control characters and every character
/// `str.isprintable()` refuses.
pub fn write_string_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c < ' ' || c == '\x7f' => push_hex(out, 'x', c as u32, 2),
            c if c.is_ascii() || is_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => push_hex(out, 'x', c as u32, 2),
            c if (c as u32) < 0x10000 => push_hex(out, 'u', c as u32, 4),
            c => push_hex(out, 'U', c as u32, 8),
        }
    }
    out.push(quote);
}

fn push_hex(out: &mut String, kind: char, n: u32, width: usize) {
    let _ = write!(out, "\\{kind}{n:0width$x}");
}

/// Whether Python's `str.isprintable()` accepts `c`.
pub fn is_printable(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    !in_ranges(unicode_tables::NON_PRINTABLE, c as u32)
}

fn in_ranges(ranges: &[(u32, u32)], cp: u32) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Whether `c` may start a Python identifier (`c.isidentifier()`: `_`,
/// ASCII letters and XID_Start).
pub fn is_id_start(c: char) -> bool {
    if c.is_ascii() {
        return c == '_' || c.is_ascii_alphabetic();
    }
    in_ranges(unicode_tables::ID_START, c as u32)
}

/// Whether `c` may continue a Python identifier (`('a' + c).isidentifier()`:
/// `_`, ASCII letters and digits, and XID_Continue).
pub fn is_id_continue(c: char) -> bool {
    if c.is_ascii() {
        return c == '_' || c.is_ascii_alphanumeric();
    }
    in_ranges(unicode_tables::ID_CONTINUE, c as u32)
}

/// Whether `c` is a word character of a `re` pattern on `str` (`\w`):
/// `str.isalnum()` or `_`.
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c == '_' || c.is_ascii_alphanumeric();
    }
    in_ranges(unicode_tables::ALNUM, c as u32)
}

/// Whether Python's `str.isspace()` accepts `c` (what `str.split()` and
/// `str.strip()` without arguments remove).
pub fn is_space(c: char) -> bool {
    match c {
        '\t'..='\r' | '\x1c'..='\x1f' | ' ' => true,
        c if c.is_ascii() => false,
        c => unicode_tables::SPACES.binary_search(&(c as u32)).is_ok(),
    }
}

/// The value of `c` as a decimal digit (Unicode category Nd), as
/// `unicodedata.decimal(c)`.
pub fn decimal_value(c: char) -> Option<u8> {
    if c.is_ascii_digit() {
        return Some(c as u8 - b'0');
    }
    if c.is_ascii() {
        return None;
    }
    let cp = c as u32;
    let zeros = unicode_tables::DECIMAL_ZEROS;
    let i = zeros.partition_point(|&z| z <= cp);
    let zero = *zeros.get(i.checked_sub(1)?)?;
    // Each zero is followed by the nine other digits of its script.
    u8::try_from(cp - zero).ok().filter(|d| *d < 10)
}

/// Python's `repr(b)` of `bytes`.
pub fn bytes_repr(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() + 3);
    write_bytes_repr(&mut out, b);
    out
}

/// Appends Python's `repr(b)` of `bytes`: `b'…'` with `\xNN` for everything
/// outside printable ASCII.
pub fn write_bytes_repr(out: &mut String, b: &[u8]) {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    out.push('b');
    out.push(quote as char);
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c as char);
            }
            c if !(0x20..0x7f).contains(&c) => push_hex(out, 'x', u32::from(c), 2),
            c => out.push(c as char),
        }
    }
    out.push(quote as char);
}

// ---------------------------------------------------------------- floats

/// Python's `repr(f)` of a `float`: the shortest digits that read back as
/// `f`, positional for decimal exponents from -4 to 15 (with `.0` for
/// integral values), scientific otherwise (`1e+16`, `1e-05`).
pub fn float_repr(f: f64) -> String {
    let mut out = String::new();
    write_float_repr(&mut out, f);
    out
}

/// Appends [`float_repr`].
pub fn write_float_repr(out: &mut String, f: f64) {
    write_float(out, f, true);
}

/// Python's `repr(complex(re, im))`: `(1+2j)`, `-2j`, `(-0+1j)`.
pub fn complex_repr(re: f64, im: f64) -> String {
    let mut out = String::new();
    write_complex_repr(&mut out, re, im);
    out
}

/// Appends [`complex_repr`].
pub fn write_complex_repr(out: &mut String, re: f64, im: f64) {
    // A positive zero real part is left out; the parts have no ".0".
    if re == 0.0 && !re.is_sign_negative() {
        write_float(out, im, false);
        out.push('j');
        return;
    }
    out.push('(');
    write_float(out, re, false);
    if !im.is_sign_negative() || im.is_nan() {
        out.push('+');
    }
    write_float(out, im, false);
    out.push_str("j)");
}

fn write_float(out: &mut String, f: f64, dot_zero: bool) {
    if f.is_nan() {
        out.push_str("nan");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "inf" } else { "-inf" });
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits, as Python's repr
    // does: "-1.2345e17", "1e-5", "0e0". When two candidates of that length
    // are equally close (120163.047119140625 → ...062 or ...063), Python
    // takes the correctly rounded one, ties to even, which is what Rust's
    // fixed-precision form gives.
    let mut sci = format!("{f:e}");
    let n_digits = sci
        .split('e')
        .next()
        .map_or(0, |m| m.bytes().filter(u8::is_ascii_digit).count());
    if n_digits > 1 {
        sci = format!("{f:.prec$e}", prec = n_digits - 1);
        if let Some((m, e)) = sci.split_once('e') {
            let m = if m.contains('.') {
                m.trim_end_matches('0').trim_end_matches('.')
            } else {
                m
            };
            sci = format!("{m}e{e}");
        }
    }
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    out.push_str(sign);
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                if dot_zero {
                    out.push_str(".0");
                }
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
        return;
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
}

// ---------------------------------------------------------------- int()

/// A Python `int`: exact whatever its size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PyInt(IntRepr);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum IntRepr {
    Small(i64),
    /// Outside `i64`: the sign and the decimal digits, without leading zeros.
    Big {
        negative: bool,
        digits: Box<str>,
    },
}

impl PyInt {
    /// The value as an `i64`, when it fits.
    pub fn to_i64(&self) -> Option<i64> {
        match self.0 {
            IntRepr::Small(n) => Some(n),
            IntRepr::Big { .. } => None,
        }
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        match &self.0 {
            IntRepr::Small(n) => *n < 0,
            IntRepr::Big { negative, .. } => *negative,
        }
    }
}

impl From<i64> for PyInt {
    fn from(n: i64) -> Self {
        PyInt(IntRepr::Small(n))
    }
}

impl PyInt {
    /// The integer with this sign and these decimal digits (ASCII digits
    /// only, leading zeros allowed); `None` when `digits` is empty or holds
    /// anything else.
    pub fn from_decimal(negative: bool, digits: &str) -> Option<PyInt> {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = digits.trim_start_matches('0');
        if digits.len() <= 19 {
            // At most 19 digits fit an i128 whatever they are.
            let magnitude: i128 = digits.parse().unwrap_or(0);
            let value = if negative { -magnitude } else { magnitude };
            if let Ok(n) = i64::try_from(value) {
                return Some(PyInt(IntRepr::Small(n)));
            }
        }
        Some(PyInt(IntRepr::Big {
            negative,
            digits: digits.into(),
        }))
    }

    /// The integer written with `digits` in `radix` (2 to 36; ASCII digits
    /// and letters in either case, no sign, no underscores); `None` when a
    /// digit is invalid or there is none.
    ///
    /// The value is kept in decimal, so the conversion of a long non-decimal
    /// literal costs time quadratic in its length; callers bound the length
    /// ([`INT_MAX_STR_DIGITS`] decimal digits is what `str()` accepts).
    pub fn from_str_radix(digits: &str, radix: u32) -> Option<PyInt> {
        if digits.is_empty() || !(2..=36).contains(&radix) {
            return None;
        }
        if radix == 10 {
            return Self::from_decimal(false, digits);
        }
        // Little-endian limbs of nine decimal digits.
        const LIMB: u64 = 1_000_000_000;
        let mut limbs: Vec<u64> = vec![0];
        for c in digits.chars() {
            let d = u64::from(c.to_digit(radix)?);
            let mut carry = d;
            for limb in &mut limbs {
                let v = *limb * u64::from(radix) + carry;
                *limb = v % LIMB;
                carry = v / LIMB;
            }
            while carry > 0 {
                limbs.push(carry % LIMB);
                carry /= LIMB;
            }
        }
        let mut text = String::with_capacity(limbs.len() * 9);
        for (i, limb) in limbs.iter().rev().enumerate() {
            if i == 0 {
                let _ = write!(text, "{limb}");
            } else {
                let _ = write!(text, "{limb:09}");
            }
        }
        Self::from_decimal(false, &text)
    }

    /// The number of decimal digits of the absolute value (`len(str(abs(n)))`).
    pub fn decimal_len(&self) -> usize {
        match &self.0 {
            IntRepr::Small(n) => n
                .unsigned_abs()
                .checked_ilog10()
                .map_or(1, |l| l as usize + 1),
            IntRepr::Big { digits, .. } => digits.len(),
        }
    }

    /// Python's `float(n)`: the nearest float (ties to even); `None` when
    /// the value is beyond the float range (CPython's `OverflowError: int
    /// too large to convert to float`).
    pub fn to_f64(&self) -> Option<f64> {
        let f = match &self.0 {
            IntRepr::Small(n) => *n as f64,
            // Rust reads decimal text with correct rounding, as CPython
            // converts an int.
            IntRepr::Big { negative, digits } => {
                let magnitude: f64 = digits.parse().ok()?;
                if *negative { -magnitude } else { magnitude }
            }
        };
        f.is_finite().then_some(f)
    }
}

/// `-n`, exact.
impl std::ops::Neg for &PyInt {
    type Output = PyInt;

    fn neg(self) -> PyInt {
        match &self.0 {
            IntRepr::Small(n) => match n.checked_neg() {
                Some(m) => PyInt(IntRepr::Small(m)),
                None => PyInt(IntRepr::Big {
                    negative: false,
                    digits: n.unsigned_abs().to_string().into(),
                }),
            },
            IntRepr::Big { negative, digits } => {
                // A big magnitude can come back into range (2**63 → -2**63).
                Self::Output::from_decimal(!negative, digits).unwrap_or_else(|| self.clone())
            }
        }
    }
}

/// `str(n)`: the decimal digits with a `-` for negative values.
impl fmt::Display for PyInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IntRepr::Small(n) => write!(f, "{n}"),
            IntRepr::Big { negative, digits } => {
                if *negative {
                    f.write_str("-")?;
                }
                f.write_str(digits)
            }
        }
    }
}

impl PyRepr for PyInt {
    fn write_repr(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
    fn class_name(&self) -> &'static str {
        "int"
    }
}

/// Python's `ValueError` from `int(s)`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseIntError {
    message: String,
}

impl ParseIntError {
    /// The `ValueError` text, as `str(e)`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Python's `ValueError` from `float(s)`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseFloatError {
    message: String,
}

impl ParseFloatError {
    /// The `ValueError` text, as `str(e)`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// CPython's text for `int(s)` on a string that is not an integer:
/// `invalid literal for int() with base 10: 'x'`. The value is formatted
/// with `%.200R`: its repr cut to 200 characters, so a long value loses its
/// closing quote.
pub fn invalid_int_literal(s: &str) -> String {
    let r = string_repr(s);
    let cut = r.char_indices().nth(200).map_or(r.len(), |(i, _)| i);
    format!("invalid literal for int() with base 10: {}", &r[..cut])
}

/// Maps a character as CPython does before parsing a number
/// (`_PyUnicode_TransformDecimalAndSpaceToASCII`): ASCII unchanged, other
/// white space to a space, other decimal digits to their ASCII digit,
/// anything else to a byte that no number contains.
fn to_number_ascii(c: char) -> u8 {
    if c.is_ascii() {
        return c as u8;
    }
    if is_space(c) {
        return b' ';
    }
    match decimal_value(c) {
        Some(d) => b'0' + d,
        None => b'?',
    }
}

/// C's `isspace` on ASCII, which CPython uses to strip the transformed text
/// (so `\x1c`…`\x1f`, white space for `str.split()`, are not stripped).
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// Python's `int(s)` for a `str` in base 10: surrounding white space, an
/// optional sign, decimal digits of any script with single underscores
/// between them, leading zeros allowed, at most [`INT_MAX_STR_DIGITS`]
/// digits.
pub fn parse_int(s: &str) -> Result<PyInt, ParseIntError> {
    let invalid = || ParseIntError {
        message: invalid_int_literal(s),
    };
    let bytes: Vec<u8>;
    let text: &[u8] = if s.is_ascii() {
        s.as_bytes()
    } else {
        bytes = s.chars().map(to_number_ascii).collect();
        &bytes
    };
    let mut i = 0;
    while i < text.len() && is_c_space(text[i]) {
        i += 1;
    }
    let mut negative = false;
    if let Some(&c @ (b'+' | b'-')) = text.get(i) {
        negative = c == b'-';
        i += 1;
    }
    // Digits, with an underscore allowed only between two digits.
    let start = i;
    let mut n_digits = 0usize;
    let mut small: Option<i64> = Some(0);
    while i < text.len() {
        match text[i] {
            c @ b'0'..=b'9' => {
                n_digits += 1;
                let d = i64::from(c - b'0');
                // Accumulated negatively so that i64::MIN fits.
                small = small
                    .and_then(|v| v.checked_mul(10))
                    .and_then(|v| v.checked_sub(d));
                i += 1;
            }
            b'_' if i > start && text.get(i + 1).is_some_and(u8::is_ascii_digit) => i += 1,
            _ => break,
        }
    }
    // A misplaced underscore ends CPython's scan of the digits with an error;
    // only then does it count them, before it looks at what follows them.
    if n_digits == 0 || text.get(i) == Some(&b'_') {
        return Err(invalid());
    }
    if n_digits > INT_MAX_STR_DIGITS {
        return Err(ParseIntError {
            message: format!(
                "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string \
                 conversion: value has {n_digits} digits; use sys.set_int_max_str_digits() \
                 to increase the limit"
            ),
        });
    }
    let end = i;
    while i < text.len() && is_c_space(text[i]) {
        i += 1;
    }
    if i != text.len() {
        return Err(invalid());
    }
    let value = match small {
        Some(v) if negative => Some(v),
        Some(v) => v.checked_neg(),
        None => None,
    };
    if let Some(v) = value {
        return Ok(PyInt(IntRepr::Small(v)));
    }
    let digits: String = text[start..end]
        .iter()
        .filter(|c| c.is_ascii_digit())
        .map(|&c| c as char)
        .skip_while(|c| *c == '0')
        .collect();
    Ok(PyInt(IntRepr::Big {
        negative,
        digits: digits.into_boxed_str(),
    }))
}

/// Python's `float(s)` for a `str`: surrounding white space, an optional
/// sign, `inf`/`infinity`/`nan` in any case, or decimal digits of any script
/// with an optional point and exponent and single underscores between
/// digits. No hexadecimal forms (that is `float.fromhex`).
pub fn parse_float(s: &str) -> Result<f64, ParseFloatError> {
    let invalid = || ParseFloatError {
        message: format!("could not convert string to float: {}", string_repr(s)),
    };
    let mut text: Vec<u8> = s.chars().map(to_number_ascii).collect();
    let start = text
        .iter()
        .position(|b| !is_c_space(*b))
        .unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|b| !is_c_space(*b))
        .map_or(start, |i| i + 1);
    text.truncate(end);
    let text = &text[start..];
    if text.contains(&b'_') {
        let ok = text.iter().enumerate().all(|(i, &c)| {
            c != b'_'
                || (i > 0
                    && text[i - 1].is_ascii_digit()
                    && text.get(i + 1).is_some_and(u8::is_ascii_digit))
        });
        if !ok {
            return Err(invalid());
        }
    }
    let cleaned: String = text
        .iter()
        .filter(|&&c| c != b'_')
        .map(|&c| c as char)
        .collect();
    if !is_float_syntax(&cleaned) {
        return Err(invalid());
    }
    cleaned.parse::<f64>().map_err(|_| invalid())
}

/// Whether `s` has the syntax CPython's `float()` reads: the grammar Rust's
/// own parser shares, checked first so that no Rust-only form slips in.
fn is_float_syntax(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return true;
    }
    let b = body.as_bytes();
    let mut i = 0;
    let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == b.len()
}

#[cfg(test)]
mod tests;
