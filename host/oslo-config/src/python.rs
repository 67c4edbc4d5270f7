//! The few Python built-ins whose exact behaviour oslo.config inherits:
//! `str.strip()`, `int(str)`, `float(str)`, `repr(str)` and `str()` of a
//! float.

/// Whether `c` is whitespace for Python's `str.strip()`: Unicode's
/// White_Space characters plus the ASCII information separators
/// U+001C–U+001F.
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `s.strip()`.
pub(crate) fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `s.rstrip()`.
pub(crate) fn rstrip(s: &str) -> &str {
    s.trim_end_matches(is_space)
}

/// Python's `s.lstrip()`.
pub(crate) fn lstrip(s: &str) -> &str {
    s.trim_start_matches(is_space)
}

/// An integer as Python's `int(s)` reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PyInt {
    /// A value that fits in 64 bits.
    Small(i64),
    /// A valid integer beyond 64 bits (Python has no bound), and its sign.
    Huge {
        /// Whether it is negative.
        negative: bool,
    },
}

/// Parses an integer the way Python's `int(s)` does in base 10: surrounding
/// whitespace, an optional sign, single underscores between digits, and any
/// Unicode decimal digit (`int("١٢")` is 12). Returns `None` for anything
/// else.
pub(crate) fn int(s: &str) -> Option<PyInt> {
    let s = ascii_digits(strip(s));
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, &s[..]),
    };
    if !underscores_between_digits(digits) {
        return None;
    }
    let mut value: i64 = 0;
    for b in digits.bytes().filter(|&b| b != b'_') {
        let digit = i64::from(b - b'0');
        let next = value.checked_mul(10).and_then(|v| {
            if negative {
                v.checked_sub(digit)
            } else {
                v.checked_add(digit)
            }
        });
        match next {
            Some(v) => value = v,
            None => return Some(PyInt::Huge { negative }),
        }
    }
    Some(PyInt::Small(value))
}

/// The zero of every run of ten Unicode decimal digits (category Nd) of
/// Unicode 14.0, Python 3.11's.
const DECIMAL_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The value of a Unicode decimal digit.
fn decimal_digit(c: char) -> Option<u8> {
    let n = u32::from(c);
    let i = DECIMAL_ZEROS.partition_point(|&z| z <= n).checked_sub(1)?;
    let d = n - DECIMAL_ZEROS[i];
    u8::try_from(d).ok().filter(|d| *d < 10)
}

/// `s` with every Unicode decimal digit replaced by its ASCII digit, as
/// Python's `int()` and `float()` read numbers.
fn ascii_digits(s: &str) -> std::borrow::Cow<'_, str> {
    if s.is_ascii() {
        return std::borrow::Cow::Borrowed(s);
    }
    s.chars()
        .map(|c| match decimal_digit(c) {
            Some(d) => char::from(b'0' + d),
            None => c,
        })
        .collect::<String>()
        .into()
}

/// Whether `s` is one or more ASCII digits with single underscores between
/// them (Python's grouping syntax for numeric literals).
fn underscores_between_digits(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.first().is_some_and(u8::is_ascii_digit)
        && b.last().is_some_and(u8::is_ascii_digit)
        && b.iter().all(|c| c.is_ascii_digit() || *c == b'_')
        && !s.contains("__")
}

/// Parses a float the way Python's `float(s)` does: surrounding whitespace,
/// decimal and exponent forms, `inf`/`infinity`/`nan` in any case with an
/// optional sign, single underscores between digits. Too large a value is
/// an infinity, as in Python. Unicode decimal digits count, as in Python.
pub(crate) fn float(s: &str) -> Option<f64> {
    let s = ascii_digits(strip(s));
    let s = &s[..];
    if s.is_empty() || !s.is_ascii() {
        return None;
    }
    let unsigned = s.trim_start_matches(['+', '-']);
    if s.len() - unsigned.len() > 1 {
        return None;
    }
    let lower = unsigned.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return s.parse().ok();
    }
    // Rust's parser accepts the same decimal grammar as Python's (digits,
    // optional fraction, optional exponent), minus the underscores and plus
    // "inf"/"nan" forms handled above; refuse anything but that grammar.
    let bytes = s.as_bytes();
    let mut cleaned = String::with_capacity(s.len());
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'_' => {
                let before = i.checked_sub(1).and_then(|j| bytes.get(j));
                let after = bytes.get(i + 1);
                if !before.is_some_and(u8::is_ascii_digit) || !after.is_some_and(u8::is_ascii_digit)
                {
                    return None;
                }
            }
            b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-' => cleaned.push(char::from(c)),
            _ => return None,
        }
    }
    cleaned.parse().ok()
}

/// Python's `str()` (= `repr()`) of a float: the shortest digits that read
/// back to the same value, in fixed notation when the decimal exponent is in
/// -4..16 (with a trailing `.0` for integral values), else in scientific
/// notation with at least two exponent digits (`1e+16`, `1.5e-05`).
pub(crate) fn float_str(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // `{:e}` gives the shortest round-trip digits: "-1.2345e-7".
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        let n = digits.len() as i32;
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point >= n {
            format!("{}{}.0", digits, "0".repeat((point - n) as usize))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{int}.{frac}")
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_owned()
        } else {
            format!("{first}.{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exp_sign}{:02}", exponent.abs())
    }
}

/// Python's `repr()` of a string: single quotes unless the text has a single
/// quote and no double quote; backslash, the quote, `\n`, `\r`, `\t`
/// escaped; other non-printable characters as `\xNN`, `\uNNNN` or
/// `\UNNNNNNNN`.
pub(crate) fn repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let n = u32::from(c);
                if n < 0x100 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable()` for one character, for the characters a
/// configuration file plausibly holds: control characters (Cc), separators
/// other than the ASCII space (Zs, Zl, Zp), the common format characters
/// (Cf), private-use characters (Co) and non-characters are not printable.
/// Unassigned code points (Cn) are treated as printable, unlike Python.
fn is_printable(c: char) -> bool {
    let n = u32::from(c);
    let not_printable = matches!(n,
        0x00..=0x1f | 0x7f..=0xa0 | 0xad
        | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x890..=0x891 | 0x8e2
        | 0x1680 | 0x180e
        | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x2064 | 0x2066..=0x206f
        | 0x3000 | 0xd800..=0xf8ff | 0xfdd0..=0xfdef | 0xfeff | 0xfff9..=0xfffb
        | 0xfffe..=0xffff
        | 0x110bd | 0x110cd | 0x13430..=0x1343f | 0x1bca0..=0x1bca3 | 0x1d173..=0x1d17a
        | 0xe0001 | 0xe0020..=0xe007f | 0xf0000..=0x10ffff);
    !not_printable && (n & 0xfffe) != 0xfffe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_counts_information_separators_as_space() {
        assert_eq!(strip("\u{1c} a b\u{1f}\u{a0}\u{3000}"), "a b");
        assert_eq!(rstrip(" a \n"), " a");
        assert_eq!(lstrip(" a \n"), "a \n");
        assert_eq!(strip("\u{feff}a"), "\u{feff}a");
    }

    #[test]
    fn int_follows_python() {
        let ok = [
            ("9511", 9511),
            (" 12 ", 12),
            ("-1", -1),
            ("+7", 7),
            ("1_000", 1000),
            ("007", 7),
            ("-0", 0),
            ("\t42\u{a0}", 42),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
            ("٣", 3),
            ("\u{ff11}\u{ff12}", 12),
            ("1_\u{1d7d9}", 11),
        ];
        for (s, want) in ok {
            assert_eq!(int(s), Some(PyInt::Small(want)), "{s:?}");
        }
        assert_eq!(
            int("9223372036854775808"),
            Some(PyInt::Huge { negative: false })
        );
        assert_eq!(
            int("-99999999999999999999"),
            Some(PyInt::Huge { negative: true })
        );
        let bad = [
            "",
            " ",
            "abc",
            "1__0",
            "_1",
            "1_",
            "1e3",
            "2.5",
            "+-1",
            "- 1",
            "0x10",
            "1 2",
            "\u{11f50}",
            "²",
        ];
        for s in bad {
            assert_eq!(int(s), None, "{s:?}");
        }
    }

    #[test]
    fn float_follows_python() {
        let ok = [
            ("2.5", 2.5),
            (" -0.5 ", -0.5),
            ("1e3", 1000.0),
            ("1E-3", 0.001),
            (".5", 0.5),
            ("5.", 5.0),
            ("1_0.2_5", 10.25),
            ("+1", 1.0),
            ("1e400", f64::INFINITY),
            ("٣.٥", 3.5),
        ];
        for (s, want) in ok {
            assert_eq!(float(s), Some(want), "{s:?}");
        }
        assert!(float("nan").is_some_and(f64::is_nan));
        assert_eq!(float("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(float("INF"), Some(f64::INFINITY));
        let bad = [
            "", "soon", "1__0", "_1", "1_", "1_.5", "0x1p3", "1e", "--1", "+-1", "inf1", "1,5",
            "nan_", "e3", ". 5",
        ];
        for s in bad {
            assert_eq!(float(s), None, "{s:?}");
        }
    }

    #[test]
    fn float_str_follows_python_repr() {
        let cases = [
            (2.5, "2.5"),
            (-0.5, "-0.5"),
            (60.0, "60.0"),
            (1000.0, "1000.0"),
            (1e6, "1000000.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e300, "1e+300"),
            (0.1, "0.1"),
            (123.456, "123.456"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for (f, want) in cases {
            assert_eq!(float_str(f), want, "{f}");
        }
    }

    #[test]
    fn repr_follows_python() {
        let cases = [
            ("GET", "'GET'"),
            ("it's", "\"it's\""),
            ("a'b\"c", "'a\\'b\"c'"),
            ("back\\slash", "'back\\\\slash'"),
            ("l1\nl2\t\r", "'l1\\nl2\\t\\r'"),
            ("\u{1}\u{7f}", "'\\x01\\x7f'"),
            ("é\u{a0}\u{2003}", "'é\\xa0\\u2003'"),
            ("\u{f0000}", "'\\U000f0000'"),
            ("", "''"),
        ];
        for (s, want) in cases {
            assert_eq!(repr(s), want, "{s:?}");
        }
    }
}
