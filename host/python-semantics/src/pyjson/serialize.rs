//! `json.dumps` for anything `serde` serialises, streamed: the API's bodies
//! (WSME and pecan render them with it, and Magnum's `Content-Length`
//! values depend on it) and the notifications' payloads.

use std::{fmt, io};

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};

use super::escape;

/// A `serde_json` formatter writing what `json.dumps` writes with its
/// defaults: `", "` and `": "` separators, `ensure_ascii`. Keys come in the
/// order the value serialises them.
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

    /// The characters `serde_json` leaves unescaped: printable ASCII as it
    /// is, the rest as Python escapes it.
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        Sink::run(w, |out| escape(out, fragment))
    }

    /// The characters `serde_json` escapes (quote, backslash, control
    /// characters), as Python escapes them.
    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        let c = match char_escape {
            CharEscape::Quote => '"',
            CharEscape::ReverseSolidus => '\\',
            CharEscape::Solidus => '/',
            CharEscape::Backspace => '\u{8}',
            CharEscape::FormFeed => '\u{c}',
            CharEscape::LineFeed => '\n',
            CharEscape::CarriageReturn => '\r',
            CharEscape::Tab => '\t',
            CharEscape::AsciiControl(byte) => char::from(byte),
        };
        Sink::run(w, |out| escape(out, c.encode_utf8(&mut [0; 4])))
    }
}

/// An `io::Write` seen as a `fmt::Write`, keeping the I/O error.
struct Sink<'a, W: ?Sized> {
    w: &'a mut W,
    error: Option<io::Error>,
}

impl<'a, W: ?Sized + io::Write> Sink<'a, W> {
    fn run(w: &'a mut W, write: impl FnOnce(&mut Self) -> fmt::Result) -> io::Result<()> {
        let mut sink = Sink { w, error: None };
        match (write(&mut sink), sink.error) {
            (_, Some(e)) => Err(e),
            (Ok(()), None) => Ok(()),
            (Err(_), None) => Err(io::Error::other("formatting failed")),
        }
    }
}

impl<W: ?Sized + io::Write> fmt::Write for Sink<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.w.write_all(s.as_bytes()).map_err(|e| {
            self.error = Some(e);
            fmt::Error
        })
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
    use serde_json::json;

    use super::*;

    #[test]
    fn separators_and_escapes_are_pythons() {
        let v = json!({"a": [1, 2.5, null, true], "b": "é\u{7f}\u{1F600}\"\\\n\u{1}/", "c": {}});
        let got = to_vec(&v).map(String::from_utf8);
        assert_eq!(
            got.ok().and_then(Result::ok).as_deref(),
            Some(
                r#"{"a": [1, 2.5, null, true], "b": "\u00e9\u007f\ud83d\ude00\"\\\n\u0001/", "c": {}}"#
            )
        );
    }

    #[test]
    fn empty_containers() {
        assert_eq!(
            to_vec(&json!({"x": [], "y": {}})).ok().as_deref(),
            Some(&br#"{"x": [], "y": {}}"#[..])
        );
    }
}
