//! JSON bodies as Python's `json.dumps` writes them (WSME and pecan render
//! with it): `", "` and `": "` separators, non-ASCII characters and DEL
//! escaped as `\uXXXX`. Magnum's `Content-Length` values depend on it.

use std::io;

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};

/// A `serde_json` formatter producing `json.dumps` output with its default
/// separators and `ensure_ascii=True`.
#[derive(Clone, Copy, Debug, Default)]
pub struct PythonFormatter;

impl Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, ch) in fragment.char_indices() {
            if (ch as u32) < 0x7f {
                continue;
            }
            w.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0u16; 2];
            for unit in ch.encode_utf16(&mut units) {
                write!(w, "\\u{unit:04x}")?;
            }
            start = i + ch.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        let s: &[u8] = match escape {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"\\/",
            CharEscape::Backspace => b"\\b",
            CharEscape::FormFeed => b"\\f",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            CharEscape::AsciiControl(byte) => return write!(w, "\\u{byte:04x}"),
        };
        w.write_all(s)
    }
}

/// `value` as `json.dumps(value)` writes it.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter);
    value.serialize(&mut ser)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn separators_and_escapes_are_pythons() {
        let v = json!({"a": [1, 2.5, null, true], "b": "é\u{7f}\u{1F600}\"\\\n\u{1}", "c": {}});
        let got = String::from_utf8(to_vec(&v).unwrap()).unwrap();
        assert_eq!(
            got,
            r#"{"a": [1, 2.5, null, true], "b": "\u00e9\u007f\ud83d\ude00\"\\\n\u0001", "c": {}}"#
        );
    }

    #[test]
    fn empty_containers() {
        assert_eq!(
            to_vec(&json!({"x": [], "y": {}})).unwrap(),
            br#"{"x": [], "y": {}}"#
        );
    }
}
