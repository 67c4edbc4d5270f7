//! JSON request bodies read as WSME reads them, with Python's `json.loads`:
//! objects keep their order (a repeated key keeps its first place and takes
//! its last value), integers are exact whatever their size, floats beyond
//! the range are infinite.

use crate::python::{INT_MAX_STR_DIGITS, PyInt};
use crate::value::{Dict, PyValue};

/// How deep arrays and objects may nest: CPython's recursion limit, which
/// its JSON decoder meets at about this depth.
pub const MAX_DEPTH: usize = 1000;

/// Why a body is not a Python JSON document.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not JSON as Python reads it (WSME: `Request is not in valid JSON
    /// format`).
    #[error("not a valid JSON document")]
    Invalid,
    /// Nested deeper than [`MAX_DEPTH`]: CPython's `RecursionError`, which
    /// escapes WSME (a 500 in Magnum); the message is its `str()`.
    #[error("{0}")]
    TooDeep(String),
}

/// Decodes a JSON document as Python's `json.loads` does.
///
/// Deviation: Python also reads `NaN`, `Infinity` and `-Infinity`, which no
/// JSON client sends; they are refused as invalid JSON.
pub fn decode_ordered(data: &[u8]) -> Result<PyValue, DecodeError> {
    let text = std::str::from_utf8(data).map_err(|_| DecodeError::Invalid)?;
    let mut r = Reader {
        b: text.as_bytes(),
        src: text,
        i: 0,
    };
    let v = r.document()?;
    r.ws();
    if r.i != r.b.len() {
        return Err(DecodeError::Invalid);
    }
    Ok(v)
}

enum Frame {
    List(Vec<PyValue>),
    Dict(Vec<(PyValue, PyValue)>, Option<String>),
}

struct Reader<'a> {
    b: &'a [u8],
    src: &'a str,
    i: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self
            .b
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            return true;
        }
        false
    }

    /// The document, without recursion: containers wait on a stack.
    fn document(&mut self) -> Result<PyValue, DecodeError> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            self.ws();
            // A value starts here.
            let mut value = match self.peek() {
                Some(b'[') => {
                    check_depth(&stack, "array")?;
                    self.i += 1;
                    self.ws();
                    if self.eat(b']') {
                        PyValue::List(Vec::new())
                    } else {
                        stack.push(Frame::List(Vec::new()));
                        continue;
                    }
                }
                Some(b'{') => {
                    check_depth(&stack, "object")?;
                    self.i += 1;
                    self.ws();
                    if self.eat(b'}') {
                        PyValue::Dict(Dict::new())
                    } else {
                        let key = self.key()?;
                        stack.push(Frame::Dict(Vec::new(), Some(key)));
                        continue;
                    }
                }
                _ => self.scalar()?,
            };
            // Hand the value to the containers it completes.
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(value);
                };
                self.ws();
                match top {
                    Frame::List(items) => {
                        items.push(value);
                        if self.eat(b',') {
                            break;
                        }
                        if !self.eat(b']') {
                            return Err(DecodeError::Invalid);
                        }
                        let Some(Frame::List(items)) = stack.pop() else {
                            return Err(DecodeError::Invalid);
                        };
                        value = PyValue::List(items);
                    }
                    Frame::Dict(entries, key) => {
                        let k = key.take().unwrap_or_default();
                        entries.push((PyValue::Str(k), value));
                        if self.eat(b',') {
                            self.ws();
                            *key = Some(self.key()?);
                            break;
                        }
                        if !self.eat(b'}') {
                            return Err(DecodeError::Invalid);
                        }
                        let Some(Frame::Dict(entries, _)) = stack.pop() else {
                            return Err(DecodeError::Invalid);
                        };
                        // dict(pairs): the last value at the first place.
                        value = PyValue::Dict(entries.into_iter().collect());
                    }
                }
            }
        }
    }

    /// An object key and its colon.
    fn key(&mut self) -> Result<String, DecodeError> {
        if self.peek() != Some(b'"') {
            return Err(DecodeError::Invalid);
        }
        let k = self.string()?;
        self.ws();
        if !self.eat(b':') {
            return Err(DecodeError::Invalid);
        }
        Ok(k)
    }

    fn scalar(&mut self) -> Result<PyValue, DecodeError> {
        let rest = &self.b[self.i..];
        for (word, value) in [
            (&b"true"[..], PyValue::Bool(true)),
            (b"false", PyValue::Bool(false)),
            (b"null", PyValue::None),
        ] {
            if rest.starts_with(word) {
                self.i += word.len();
                return Ok(value);
            }
        }
        match self.peek() {
            Some(b'"') => Ok(PyValue::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(DecodeError::Invalid),
        }
    }

    /// A number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`.
    fn number(&mut self) -> Result<PyValue, DecodeError> {
        let start = self.i;
        self.eat(b'-');
        let digits = |r: &mut Self| {
            let s = r.i;
            while r.peek().is_some_and(|c| c.is_ascii_digit()) {
                r.i += 1;
            }
            r.i - s
        };
        let int_start = self.i;
        if self.eat(b'0') {
            // Python's scanner stops after a leading 0: "01" is extra data.
        } else if digits(self) == 0 {
            return Err(DecodeError::Invalid);
        }
        let int_end = self.i;
        let mut float = false;
        if self.peek() == Some(b'.') && self.b.get(self.i + 1).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
            digits(self);
            float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let save = self.i;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                // Not an exponent: the number ends before the "e".
                self.i = save;
            } else {
                float = true;
            }
        }
        let text = &self.src[start..self.i];
        if float {
            return text
                .parse::<f64>()
                .map(PyValue::Float)
                .map_err(|_| DecodeError::Invalid);
        }
        let magnitude = &self.src[int_start..int_end];
        // int() of more digits raises ValueError, which WSME reports as
        // invalid JSON.
        if magnitude.len() > INT_MAX_STR_DIGITS {
            return Err(DecodeError::Invalid);
        }
        PyInt::from_decimal(start != int_start, magnitude)
            .map(PyValue::Int)
            .ok_or(DecodeError::Invalid)
    }

    /// A string (the opening quote at the current position). Control
    /// characters are refused, as Python's strict decoder does.
    fn string(&mut self) -> Result<String, DecodeError> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while self
                .peek()
                .is_some_and(|c| c != b'"' && c != b'\\' && c >= 0x20)
            {
                self.i += 1;
            }
            out.push_str(&self.src[start..self.i]);
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let Some(e) = self.peek() else {
                        return Err(DecodeError::Invalid);
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\x08'),
                        b'f' => out.push('\x0c'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xd800..0xdc00).contains(&hi)
                                && self.b.get(self.i..self.i + 2) == Some(b"\\u")
                            {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xdc00..0xe000).contains(&lo) {
                                    0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                                } else {
                                    self.i = save;
                                    hi
                                }
                            } else {
                                hi
                            };
                            // Deviation: Python keeps a lone surrogate; a
                            // Rust string cannot hold one (U+FFFD instead).
                            out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(DecodeError::Invalid),
                    }
                }
                _ => return Err(DecodeError::Invalid),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, DecodeError> {
        let digits = self
            .src
            .get(self.i..self.i + 4)
            .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
            .ok_or(DecodeError::Invalid)?;
        self.i += 4;
        u32::from_str_radix(digits, 16).map_err(|_| DecodeError::Invalid)
    }
}

/// Refuses a container that would nest deeper than [`MAX_DEPTH`].
fn check_depth(stack: &[Frame], what: &str) -> Result<(), DecodeError> {
    if stack.len() >= MAX_DEPTH {
        return Err(DecodeError::TooDeep(format!(
            "maximum recursion depth exceeded while decoding a JSON {what} from a unicode string"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::repr;

    fn dec(s: &str) -> Result<String, DecodeError> {
        decode_ordered(s.as_bytes()).map(|v| repr(&v))
    }

    #[test]
    fn documents() {
        let ok = [
            (
                r#"[{"op":"replace","path":"/a","value":3}]"#,
                "[{'op': 'replace', 'path': '/a', 'value': 3}]",
            ),
            (r#"{"b": 1, "a": 2, "b": 3}"#, "{'b': 3, 'a': 2}"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
            ("-0", "0"),
            ("1.5e3", "1500.0"),
            ("1e400", "inf"),
            ("-1E-2", "-0.01"),
            (" [ 1 , [ ] , { } , \"x\" ] ", "[1, [], {}, 'x']"),
            (r#""\u00e9\ud83d\ude00\n\/""#, "'é😀\\n/'"),
            (r#""\ud800x""#, "'\u{fffd}x'"),
            ("true", "True"),
            ("null", "None"),
        ];
        for (input, want) in ok {
            assert_eq!(dec(input).as_deref(), Ok(want), "{input}");
        }
        let bad = [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            ".5",
            "NaN",
            "Infinity",
            "-",
            "\"a\nb\"",
            "\"\\x\"",
            "[1] 2",
            "{1: 2}",
            "\u{feff}1",
            "tru",
            "\"\\u12\"",
        ];
        for input in bad {
            assert_eq!(dec(input), Err(DecodeError::Invalid), "{input:?}");
        }
        assert_eq!(decode_ordered(b"\"\xff\""), Err(DecodeError::Invalid));
        assert_eq!(
            dec(&("1".repeat(4301))),
            Err(DecodeError::Invalid),
            "int() refuses more than 4300 digits"
        );
    }

    #[test]
    fn depth_is_bounded() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(dec(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(
            dec(&deep),
            Err(DecodeError::TooDeep(
                "maximum recursion depth exceeded while decoding a JSON array from a unicode \
                 string"
                    .into()
            ))
        );
        // Far deeper input fails the same way without exhausting the stack.
        let huge = "{\"a\":".repeat(100_000);
        assert!(matches!(dec(&huge), Err(DecodeError::TooDeep(_))));
    }
}
