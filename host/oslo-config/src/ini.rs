//! The file syntax: a line-for-line port of oslo.config's `iniparser` and
//! `ConfigParser` (oslo_config/iniparser.py, cfg.py).
//!
//! - lines are split on `\n`, `\r\n` and a lone `\r` (Python's universal
//!   newlines) and right-trimmed; a blank line ends a multi-line value;
//! - a line starting with a space or a tab continues the previous value (the
//!   continuation is left-trimmed and joined with `"\n"`); with no value
//!   pending it is an error;
//! - `[name]` opens a section (`[]` and a missing `]` are errors; the name is
//!   not trimmed);
//! - a line starting with `#` or `;` is a comment; there are **no inline
//!   comments** (`a = b # c` sets `a` to `b # c`);
//! - anything else is `key = value` or `key: value`, split at whichever of
//!   `=` and `:` comes first; key and value are trimmed and one pair of
//!   outer quotes is removed when the first and last characters are the same
//!   quote (`"` or `'`);
//! - an assignment before the first section is an error;
//! - a key given several times keeps every value, in order.

use std::fmt;

use crate::python;

/// One assignment read from a file. `value` is what oslo.config hands to an
/// option's type: trimmed, unquoted, continuation lines joined with `"\n"`,
/// not yet substituted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The section name as written.
    pub section: String,
    /// The section name normalised: see [`normalize_group`].
    pub group: String,
    /// The key, trimmed; never empty.
    pub key: String,
    /// The value.
    pub value: String,
    /// The 1-based line number of the key.
    pub line: usize,
}

/// A parsed file: its assignments in file order and the sections it opened
/// (including empty ones), as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct File {
    /// The name given to [`parse`], used in messages.
    pub name: String,
    /// The assignments, in file order.
    pub entries: Vec<Entry>,
    /// The sections opened, in file order, as written.
    pub sections: Vec<String>,
}

/// What is wrong with a malformed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// The file is not UTF-8.
    InvalidUtf8,
    /// An indented line with no value to continue.
    UnexpectedContinuation,
    /// An assignment before the first section header.
    NoSection,
    /// A line starting with `[` that does not end with `]`.
    UnclosedSection,
    /// `[]`.
    EmptySectionName,
    /// A line with neither `=` nor `:`.
    NoSeparator,
    /// `= value` at the start of a line.
    EmptyKey,
}

impl ParseErrorKind {
    fn message(self) -> &'static str {
        match self {
            ParseErrorKind::InvalidUtf8 => "invalid UTF-8",
            ParseErrorKind::UnexpectedContinuation => {
                "unexpected continuation line (an indented line must continue a value)"
            }
            ParseErrorKind::NoSection => "section must be started before assignment",
            ParseErrorKind::UnclosedSection => "invalid section (must end with ])",
            ParseErrorKind::EmptySectionName => "empty section name",
            ParseErrorKind::NoSeparator => "no ':' or '=' found in assignment",
            ParseErrorKind::EmptyKey => "key cannot be empty",
        }
    }
}

/// A malformed line. Its message names the file and line and never repeats
/// any part of the line, which may be part of a secret (`password hunter2`,
/// a continued PEM block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The file name given to [`parse`].
    pub file: String,
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub kind: ParseErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.kind.message())
    }
}

impl std::error::Error for ParseError {}

/// The group name oslo.config uses for a section header: `DEFAULT` is kept,
/// every other name is lower-cased (`[Default]` is the group `default`, not
/// `DEFAULT`).
pub fn normalize_group(section: &str) -> String {
    if section == "DEFAULT" {
        section.to_owned()
    } else {
        section.to_lowercase()
    }
}

/// Splits like Python's text-mode `readlines()` with universal newlines:
/// `\n`, `\r\n` and a lone `\r` each end a line; the terminators are dropped.
fn lines(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match rest.find(['\r', '\n']) {
            None => Some(std::mem::take(&mut rest)),
            Some(i) => {
                let line = &rest[..i];
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[i + skip..];
                Some(line)
            }
        }
    })
}

/// The assignment being read: its key, line and value lines.
struct Pending {
    key: String,
    line: usize,
    value: Vec<String>,
}

/// Parses one configuration file; `name` is used in error messages and
/// recorded in the [`File`].
pub fn parse(name: &str, data: &[u8]) -> Result<File, ParseError> {
    let error = |line: usize, kind: ParseErrorKind| ParseError {
        file: name.to_owned(),
        line,
        kind,
    };
    let text = match std::str::from_utf8(data) {
        Ok(text) => text,
        Err(e) => {
            let before = &data[..e.valid_up_to()];
            let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
            return Err(error(line, ParseErrorKind::InvalidUtf8));
        }
    };
    let mut file = File {
        name: name.to_owned(),
        ..File::default()
    };
    let mut section: Option<String> = None;
    let mut pending: Option<Pending> = None;
    let flush = |pending: &mut Option<Pending>, section: &Option<String>, file: &mut File| {
        let Some(p) = pending.take() else {
            return Ok(());
        };
        let Some(section) = section else {
            return Err(error(p.line, ParseErrorKind::NoSection));
        };
        file.entries.push(Entry {
            section: section.clone(),
            group: normalize_group(section),
            key: p.key,
            value: p.value.join("\n"),
            line: p.line,
        });
        Ok(())
    };
    for (index, raw) in lines(text).enumerate() {
        let lineno = index + 1;
        let line = python::rstrip(raw);
        if line.is_empty() {
            flush(&mut pending, &section, &mut file)?;
            continue;
        }
        if line.starts_with([' ', '\t']) {
            match pending.as_mut() {
                Some(p) => p.value.push(python::lstrip(line).to_owned()),
                None => return Err(error(lineno, ParseErrorKind::UnexpectedContinuation)),
            }
            continue;
        }
        flush(&mut pending, &section, &mut file)?;
        if line.starts_with('[') {
            if !line.ends_with(']') {
                return Err(error(lineno, ParseErrorKind::UnclosedSection));
            }
            // Python's len() counts characters: "[]" is the only header
            // this short, as the line starts with '[' and ends with ']'.
            if line.len() <= 2 {
                return Err(error(lineno, ParseErrorKind::EmptySectionName));
            }
            let name = &line[1..line.len() - 1];
            file.sections.push(name.to_owned());
            section = Some(name.to_owned());
        } else if line.starts_with(['#', ';']) {
            // A comment.
        } else {
            let Some((key, value)) = split_key_value(line) else {
                return Err(error(lineno, ParseErrorKind::NoSeparator));
            };
            if key.is_empty() {
                return Err(error(lineno, ParseErrorKind::EmptyKey));
            }
            pending = Some(Pending {
                key: key.to_owned(),
                line: lineno,
                value: vec![value.to_owned()],
            });
        }
    }
    flush(&mut pending, &section, &mut file)?;
    Ok(file)
}

/// Splits at the first `=` or `:`, trims both sides and removes one pair of
/// outer quotes when the value's first and last characters are the same
/// quote.
fn split_key_value(line: &str) -> Option<(&str, &str)> {
    let i = line.find(['=', ':'])?;
    let key = python::strip(&line[..i]);
    let mut value = python::strip(&line[i + 1..]);
    if let Some(q @ ('"' | '\'')) = value.chars().next()
        && value.ends_with(q)
    {
        // A lone quote is both first and last: Python's value[1:-1] of a
        // one-character string is empty.
        value = if value.len() == 1 {
            ""
        } else {
            &value[1..value.len() - 1]
        };
    }
    Some((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(f: &File) -> Vec<(&str, &str, &str)> {
        f.entries
            .iter()
            .map(|e| (e.group.as_str(), e.key.as_str(), e.value.as_str()))
            .collect()
    }

    // Port of TestParseINI.
    #[test]
    fn parse_table() {
        type Want = &'static [(&'static str, &'static str, &'static str)];
        let ok: &[(&str, &str, Want)] = &[
            (
                "equals and colon separators",
                "[api]\nport = 9511\nhost: 0.0.0.0\n",
                &[("api", "port", "9511"), ("api", "host", "0.0.0.0")],
            ),
            (
                "the first of '=' and ':' separates",
                "[a]\nurl = http://x:1/y\nk: v = w\nk2=a:b\n",
                &[
                    ("a", "url", "http://x:1/y"),
                    ("a", "k", "v = w"),
                    ("a", "k2", "a:b"),
                ],
            ),
            (
                "comments with # and ; and no inline comments",
                "# top\n[a]\n; semicolon\n#x = 1\nb = c # d\ne = f ; g\n",
                &[("a", "b", "c # d"), ("a", "e", "f ; g")],
            ),
            (
                "empty value",
                "[a]\nb =\nc:\n",
                &[("a", "b", ""), ("a", "c", "")],
            ),
            (
                "one pair of matching outer quotes is removed",
                "[a]\nb = \"x y\"\nc = 'z'\nd = \"e'\ne = \"\nf = \"\"g\"\"\n",
                &[
                    ("a", "b", "x y"),
                    ("a", "c", "z"),
                    ("a", "d", "\"e'"),
                    ("a", "e", ""),
                    ("a", "f", "\"g\""),
                ],
            ),
            (
                "continuation lines join with newlines",
                "[a]\nb = one\n  two\n\tthree\nc = d\n",
                &[("a", "b", "one\ntwo\nthree"), ("a", "c", "d")],
            ),
            (
                "an indented option after a key is a continuation",
                "[a]\nb = 1\n  c = 2\n",
                &[("a", "b", "1\nc = 2")],
            ),
            (
                "a blank line ends a continued value",
                "[a]\nb = one\n\nc = two\n",
                &[("a", "b", "one"), ("a", "c", "two")],
            ),
            (
                "repeated keys are all kept in order",
                "[a]\nb = 1\nb = 2\n[a]\nb = 3\n",
                &[("a", "b", "1"), ("a", "b", "2"), ("a", "b", "3")],
            ),
            (
                "group names are lower-cased except DEFAULT",
                "[DEFAULT]\na = 1\n[API]\nb = 2\n[default]\nc = 3\n[ x ]\nd = 4\n",
                &[
                    ("DEFAULT", "a", "1"),
                    ("api", "b", "2"),
                    ("default", "c", "3"),
                    (" x ", "d", "4"),
                ],
            ),
            (
                "CRLF and CR line endings",
                "[a]\r\nb = 1\r\nc = 2\rd = 3",
                &[("a", "b", "1"), ("a", "c", "2"), ("a", "d", "3")],
            ),
        ];
        for (name, input, want) in ok {
            let f = parse("f.conf", input.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(entries(&f), want.to_vec(), "{name}");
        }
        let bad = [
            (
                "an indented first key is a stray continuation",
                "[a]\n b_not_continuation_at_start = 1\n",
                "f.conf:2: unexpected continuation line",
            ),
            (
                "key before any section",
                "# c\nb = 1\n",
                "f.conf:2: section must be started before assignment",
            ),
            (
                "section without closing bracket",
                "[a\nb = 1\n",
                "f.conf:1: invalid section (must end with ])",
            ),
            (
                "empty section name",
                "[a]\n[]\n",
                "f.conf:2: empty section name",
            ),
            (
                "line without separator",
                "[a]\njust words\n",
                "f.conf:2: no ':' or '=' found in assignment",
            ),
            (
                "empty key",
                "[a]\n = v\n",
                "f.conf:2: unexpected continuation line",
            ),
            (
                "empty key at column one",
                "[a]\n= v\n",
                "f.conf:2: key cannot be empty",
            ),
            (
                "continuation after a comment",
                "[a]\nb = 1\n# c\n  d\n",
                "f.conf:4: unexpected continuation line",
            ),
            (
                "continuation after a section header",
                "[a]\n  d\n",
                "f.conf:2: unexpected continuation line",
            ),
        ];
        for (name, input, want) in bad {
            let err = parse("f.conf", input.as_bytes()).expect_err(name);
            assert!(err.to_string().starts_with(want), "{name}: {err}");
        }
        let err = parse("f.conf", b"[a]\nb = \xff\n").expect_err("invalid UTF-8");
        assert!(
            err.to_string().starts_with("f.conf:2: invalid UTF-8"),
            "{err}"
        );
    }

    // Port of TestParseINILineNumbers.
    #[test]
    fn line_numbers() {
        let f = parse("f.conf", b"[a]\n\n# x\nb = 1\n  2\nc = 3\n").expect("parse");
        let got: Vec<usize> = f.entries.iter().map(|e| e.line).collect();
        assert_eq!(got, [4, 6]);
    }

    #[test]
    fn errors_never_repeat_a_value_line() {
        for input in [
            "[a]\npassword hunter2\n",
            "[a]\n  hunter2\n",
            "[a]\n= hunter2\n",
            "[a]\npassword = x\n",
        ] {
            if let Err(e) = parse("f.conf", input.as_bytes()) {
                assert!(!e.to_string().contains("hunter2"), "{e}");
            }
        }
        let e = parse("f.conf", b"[hunter").expect_err("unclosed");
        assert_eq!(e.to_string(), "f.conf:1: invalid section (must end with ])");
        let e = parse("f.conf", b"hunter2 = x\n").expect_err("no section");
        assert_eq!(
            e.to_string(),
            "f.conf:1: section must be started before assignment"
        );
    }

    #[test]
    fn sections_are_recorded_even_when_empty() {
        let f = parse("f.conf", b"[Empty]\n[a]\nk=v\n[Empty]\n").expect("parse");
        assert_eq!(f.sections, ["Empty", "a", "Empty"]);
    }

    #[test]
    fn multibyte_values_and_headers() {
        let f = parse("f.conf", "[é]\nk = «v»\nq = 'é'\n".as_bytes()).expect("parse");
        assert_eq!(entries(&f), [("é", "k", "«v»"), ("é", "q", "é")]);
        let f = parse("f.conf", "[\u{e9}\u{301}]\nk=v\n".as_bytes()).expect("parse");
        assert_eq!(f.sections, ["\u{e9}\u{301}"]);
    }
}

/// Port of TestOracleOsloConfigParser: [`parse`] against oslo.config's own
/// parser (`OPENKEEL_TEST_PYTHON`, oslo.config 10.7.0) on random lines drawn
/// from the characters the grammar cares about.
#[cfg(test)]
mod oracle {
    use std::collections::BTreeMap;
    use std::path::Path;

    use super::*;

    /// A small deterministic generator (SplitMix64).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
    }

    const PIECES: &[&str] = &[
        "[", "]", "=", ":", " ", "\t", "#", ";", "\"", "'", "k", "v", "$", "x y", "\u{c}",
        "\u{a0}", "\u{2003}", "é", "K", "\u{1c}", "\u{85}", "\u{b}", "\u{2028}", "[]", "\\",
    ];
    const EOLS: &[&str] = &["\n", "\n", "\n", "\r\n", "\r", " \n", "\t\n", "\u{c}\n"];

    fn file(rng: &mut Rng) -> String {
        let word = |rng: &mut Rng| {
            let mut w = String::new();
            for _ in 0..rng.below(4) {
                w.push_str(PIECES[rng.below(PIECES.len())]);
            }
            w
        };
        let mut b = String::new();
        if rng.below(3) > 0 {
            b.push_str("[s]\n");
        }
        for _ in 0..rng.below(8) {
            match rng.below(8) {
                0 => b.push_str(&format!("[{}]", word(rng))),
                1 => b.push_str(&format!("{}{}", ["#", ";"][rng.below(2)], word(rng))),
                2 => b.push_str(&format!("{}{}", [" ", "\t", "  "][rng.below(3)], word(rng))),
                3 => b.push_str(&word(rng)),
                4 => {}
                _ => {
                    let sep = ["=", ":", " = ", ": "][rng.below(4)];
                    b.push_str(&format!("k{}{sep}{}", word(rng), word(rng)));
                }
            }
            b.push_str(EOLS[rng.below(EOLS.len())]);
        }
        b
    }

    #[test]
    fn oslo_config_parser_agrees() {
        let Some(python) = test_support::oracle::python() else {
            return;
        };
        let seed = std::env::var("OPENKEEL_ORACLE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3);
        let n = 1000;
        let mut rng = Rng(seed);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let paths: Vec<String> = (0..n)
            .map(|i| {
                let p = dir.path().join(format!("p{i:04}.conf"));
                std::fs::write(&p, file(&mut rng)).unwrap_or_else(|e| panic!("write: {e}"));
                p.display().to_string()
            })
            .collect();
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/oracle/oslo_config_oracle.py");
        let input = serde_json::json!({ "parse": paths }).to_string();
        let out = test_support::oracle::run(&python, &[script.as_os_str()], input.as_bytes());
        let results: Vec<serde_json::Value> =
            serde_json::from_slice(&out).unwrap_or_else(|e| panic!("oracle output: {e}"));
        assert_eq!(results.len(), n);
        let (mut failures, mut accepted) = (Vec::new(), 0);
        for (path, res) in paths.iter().zip(&results) {
            let data = std::fs::read(path).unwrap_or_default();
            let ours = parse(path, &data);
            let oslo_error = res.get("parse_error").and_then(serde_json::Value::as_str);
            match (&ours, oslo_error) {
                (Err(_), Some(_)) => continue,
                (Ok(_), Some(e)) => {
                    failures.push(format!(
                        "{:?}: oslo fails ({e}), ours parses",
                        String::from_utf8_lossy(&data)
                    ));
                    continue;
                }
                (Err(e), None) => {
                    failures.push(format!(
                        "{:?}: oslo parses, ours fails ({e})",
                        String::from_utf8_lossy(&data)
                    ));
                    continue;
                }
                (Ok(_), None) => {}
            }
            let Ok(f) = ours else { continue };
            accepted += 1;
            let mut got: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
            for s in &f.sections {
                got.entry(normalize_group(s)).or_default();
            }
            for e in &f.entries {
                got.entry(e.group.clone())
                    .or_default()
                    .entry(e.key.clone())
                    .or_default()
                    .push(e.value.clone());
            }
            let want: BTreeMap<String, BTreeMap<String, Vec<String>>> =
                serde_json::from_value(res["sections"].clone()).unwrap_or_default();
            if got != want {
                failures.push(format!(
                    "{:?}: oslo {want:?}, ours {got:?}",
                    String::from_utf8_lossy(&data)
                ));
            }
        }
        eprintln!("{n} files, {accepted} accepted by both parsers");
        failures.truncate(20);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
