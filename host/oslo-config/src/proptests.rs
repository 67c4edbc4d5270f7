//! Property tests: lexer round trips, the fuzz targets' invariants on
//! grammar-biased inputs, Python number formats, substitution escapes and
//! password redaction.

use std::sync::Arc;

use proptest::prelude::*;

use crate::database::DatabaseUrl;
use crate::{Config, Opt, OptType, Schema, Value, fuzzing, ini, python};

fn key() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_.-]{0,12}"
}

/// A value as a file may hold it on one line: no line break, no surrounding
/// whitespace, and not wrapped in a pair of identical quotes (which the
/// lexer would remove).
fn value() -> impl Strategy<Value = String> {
    "[ -~é«»\u{a0}]{0,24}"
        .prop_map(|s| python::strip(&s).to_owned())
        .prop_filter("quoted", |s| {
            !(s.len() >= 2 && (s.starts_with('"') || s.starts_with('\'')) && s.ends_with(&s[..1]))
                && s != "\""
                && s != "'"
        })
}

fn section() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_ ]{0,10}".prop_map(|s| s.trim_end().to_owned())
}

/// A section and its assignments (key and value lines).
type Section = (String, Vec<(String, Vec<String>)>);

/// A file's sections, each with assignments; a value may have continuation
/// lines.
fn document() -> impl Strategy<Value = Vec<Section>> {
    prop::collection::vec(
        (
            section(),
            prop::collection::vec((key(), prop::collection::vec(value(), 1..3)), 0..5),
        ),
        1..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Rendering entries as `key = value` (continuations indented, joined
    /// with "\n") and parsing them back gives the entries.
    #[test]
    fn lexer_round_trip(doc in document(), sep in prop::sample::select(vec![" = ", "=", ": ", ":"]),
                        eol in prop::sample::select(vec!["\n", "\r\n", "\r"])) {
        let mut text = String::new();
        let mut want = Vec::new();
        for (section, entries) in &doc {
            text.push_str(&format!("[{section}]{eol}"));
            for (k, lines) in entries {
                // A continuation line must not be blank (a blank line ends
                // the value).
                let lines: Vec<&String> = lines.iter().enumerate()
                    .filter(|(i, l)| *i == 0 || !l.is_empty()).map(|(_, l)| l).collect();
                // The separator is the first '=' or ':': a key containing
                // neither keeps its value intact.
                let first = lines[0];
                text.push_str(&format!("{k}{sep}{first}{eol}"));
                for l in &lines[1..] {
                    text.push_str(&format!("\t{l}{eol}"));
                }
                let joined: Vec<&str> = lines.iter().map(|s| s.as_str()).collect();
                want.push((ini::normalize_group(section), k.clone(), joined.join("\n")));
            }
        }
        let f = ini::parse("p.conf", text.as_bytes());
        prop_assert!(f.is_ok(), "{:?}: {:?}", text, f.err());
        let f = f.unwrap_or_default();
        let got: Vec<(String, String, String)> =
            f.entries.into_iter().map(|e| (e.group, e.key, e.value)).collect();
        prop_assert_eq!(got, want);
    }

    /// One pair of identical outer quotes is removed, and only one.
    #[test]
    fn quotes_are_removed_once(v in value(), q in prop::sample::select(vec!['"', '\''])) {
        let text = format!("[s]\nk = {q}{v}{q}\n");
        let f = ini::parse("p.conf", text.as_bytes()).unwrap_or_default();
        prop_assert_eq!(f.entries.len(), 1);
        prop_assert_eq!(&f.entries[0].value, &v);
    }

    /// The fuzz targets' invariants (Go's FuzzParseINI) on inputs biased to
    /// the grammar's characters.
    #[test]
    fn ini_invariants(text in "([\\[\\]=:#; \t\r\n$.{}\"'a-z_0-9\\\\]|api|port|DEFAULT|keystone_auth|password|\\$\\{api\\.port\\}){0,80}") {
        fuzzing::ini(text.as_bytes());
    }

    /// The same on arbitrary bytes.
    #[test]
    fn ini_invariants_on_bytes(data in prop::collection::vec(any::<u8>(), 0..200)) {
        fuzzing::ini(&data);
    }

    /// Python's int() of a plain decimal is Rust's parse.
    #[test]
    fn int_matches_plain_parse(n in any::<i64>(), pad in "[ \t]{0,2}") {
        prop_assert_eq!(python::int(&format!("{pad}{n}{pad}")), Some(python::PyInt::Small(n)));
        let grouped: String = n.unsigned_abs().to_string().chars().flat_map(|c| [c, '_']).collect();
        let grouped = format!("{}{}", if n < 0 { "-" } else { "" }, grouped.trim_end_matches('_'));
        prop_assert_eq!(python::int(&grouped), Some(python::PyInt::Small(n)));
    }

    /// Python's float repr reads back to the same float.
    #[test]
    fn float_str_round_trips(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        let s = python::float_str(f);
        prop_assert_eq!(python::float(&s), Some(f), "{}", s);
        prop_assert!(s.contains('.') || s.contains('e') || s.contains("inf"), "{}", s);
    }

    /// `$$` is a literal dollar and text without `$` is kept.
    #[test]
    fn dollar_escapes(a in "[^$\r\n]{0,12}", b in "[^$\r\n]{0,12}") {
        // "\$$" would be "$$$": a literal dollar, then a placeholder.
        prop_assume!(!a.ends_with('\\'));
        let mut schema = Schema::new();
        let _ = schema.register(Opt::new("g", "v", OptType::string()));
        let value = python::strip(&format!("{a}$${b}")).to_owned();
        let text = format!("[g]\nv = {value}\n");
        let Ok(file) = ini::parse("p.conf", text.as_bytes()) else { return Ok(()) };
        let raw = file.entries.first().map(|e| e.value.clone()).unwrap_or_default();
        let result = Config::from_files(Arc::new(schema), vec![file]);
        prop_assert!(result.is_ok());
        if let Ok((config, _)) = result {
            let want = raw.replace("$$", "$");
            prop_assert_eq!(config.get("g", "v").and_then(Result::ok), Some(&Value::String(want)));
        }
    }

    /// A password with any characters, %-encoded in the URL, is what sqlx
    /// gets, and the redacted URL and errors never show it.
    #[test]
    fn database_passwords(user in "[a-z][a-z0-9_]{0,8}", pw in "[ -~]{4,16}", host in "[a-z][a-z0-9.-]{0,10}",
                          db in "[a-z_]{1,8}", scheme in prop::sample::select(vec!["mysql+pymysql", "postgresql", "mariadb"])) {
        let encoded: String = pw.bytes().map(|b| format!("%{b:02X}")).collect();
        let raw = format!("{scheme}://{user}:{encoded}@{host}/{db}");
        fuzzing::database_url(raw.as_bytes());
        let raw_plain = format!("{scheme}://{user}:{}@{host}/{db}", pw.replace(['@', '/', '?', '%'], "x"));
        fuzzing::database_url(raw_plain.as_bytes());
        match DatabaseUrl::parse(&raw) {
            Ok(url) => {
                prop_assert!(!url.redacted().contains(&encoded));
                let debug = format!("{:?}", url);
                prop_assert!(!debug.contains(&encoded));
            }
            Err(e) => prop_assert!(!e.to_string().contains(&encoded)),
        }
    }

    /// Translation of URL-like strings never panics.
    #[test]
    fn database_url_never_panics(raw in "(mysql|postgresql|sqlite|x)?(\\+[a-z]+)?(://)?[a-z:@/?=&%\\[\\]0-9.]{0,40}") {
        fuzzing::database_url(raw.as_bytes());
    }
}
