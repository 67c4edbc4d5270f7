use super::*;

use std::path::PathBuf;

fn parse_one(value: &[u8]) -> Result<RequestedVersion, HeaderError> {
    parse([value])
}

/// Go: `TestParse`. `want` is the version text or `!service` / `!value`;
/// `check` is "", "major" or "minor".
#[test]
fn parse_cases() {
    let cases: &[(&str, &[&[u8]], &str, &str)] = &[
        ("absent header is 1.1", &[], "1.1", ""),
        ("short service name", &[b"container-infra 1.5"], "1.5", ""),
        (
            "middle service name",
            &[b"container-infrastructure 1.9"],
            "1.9",
            "",
        ),
        (
            "long service name",
            &[b"container-infrastructure-management 1.14"],
            "1.14",
            "",
        ),
        ("latest", &[b"container-infra latest"], "1.14", ""),
        (
            "latest in capitals",
            &[b"container-infra LATEST"],
            "1.14",
            "",
        ),
        ("latest ignores the service", &[b"foo latest"], "1.14", ""),
        (
            "surrounding whitespace",
            &[b"  container-infra\t 1.2  "],
            "1.2",
            "",
        ),
        (
            "non-breaking space separates",
            &[b"container-infra\xa01.3"],
            "1.3",
            "",
        ),
        ("leading zeros", &[b"container-infra 01.04"], "1.4", ""),
        ("plus sign", &[b"container-infra +1.5"], "1.5", ""),
        (
            "underscore between digits",
            &[b"container-infra 1.1_0"],
            "1.10",
            "",
        ),
        (
            "negative minor",
            &[b"container-infra 1.-1"],
            "1.-1",
            "minor",
        ),
        (
            "minor above range",
            &[b"container-infra 1.15"],
            "1.15",
            "minor",
        ),
        (
            "minor far above range",
            &[b"container-infra 1.999"],
            "1.999",
            "minor",
        ),
        ("minor zero", &[b"container-infra 1.0"], "1.0", "minor"),
        ("major two", &[b"container-infra 2.11"], "2.11", "major"),
        (
            "huge minor echoed",
            &[b"container-infra 1.000123456789012345678901234567890"],
            "1.123456789012345678901234567890",
            "minor",
        ),
        ("empty value", &[b""], "!service", ""),
        ("only latest", &[b"latest"], "!service", ""),
        ("only service", &[b"container-infra"], "!service", ""),
        (
            "three tokens",
            &[b"container-infra latest extra"],
            "!service",
            "",
        ),
        (
            "comma list",
            &[b"container-infra 1.5,compute 2.1"],
            "!service",
            "",
        ),
        (
            "repeated header",
            &[b"container-infra 1.5", b"container-infra 1.5"],
            "!service",
            "",
        ),
        (
            "service is case-sensitive",
            &[b"Container-Infra 1.2"],
            "!service",
            "",
        ),
        ("other service", &[b"compute 1.2"], "!service", ""),
        ("letters", &[b"container-infra abc"], "!value", ""),
        ("one component", &[b"container-infra 1"], "!value", ""),
        (
            "three components",
            &[b"container-infra 1.2.3"],
            "!value",
            "",
        ),
        ("trailing dot", &[b"container-infra 1."], "!value", ""),
        (
            "double underscore",
            &[b"container-infra 1.1__0"],
            "!value",
            "",
        ),
        (
            "trailing underscore",
            &[b"container-infra 1.1_"],
            "!value",
            "",
        ),
        ("double sign", &[b"container-infra 1.+-1"], "!value", ""),
        // Beyond the Go table.
        (
            "huge major",
            &[b"container-infra 99999999999999999999.1"],
            "99999999999999999999.1",
            "major",
        ),
        (
            "minor above u16",
            &[b"container-infra 1.70000"],
            "1.70000",
            "minor",
        ),
        (
            "superscript digit",
            &[b"container-infra 1.\xb2"],
            "!value",
            "",
        ),
        (
            "too many digits",
            &[b"container-infra 1.0000000000"],
            "1.0",
            "minor",
        ),
    ];
    for (name, values, want, check) in cases {
        let got = parse(values.iter().copied());
        match *want {
            "!service" | "!value" => {
                let want = if *want == "!service" {
                    HeaderError::InvalidService
                } else {
                    HeaderError::InvalidValue
                };
                assert_eq!(got, Err(want), "{name}");
                assert_eq!(
                    negotiate(values.iter().copied()),
                    Err(NegotiationError::Header(want)),
                    "{name}"
                );
            }
            _ => {
                let v = got.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(v.to_string(), *want, "{name}");
                match (*check, v.check()) {
                    ("", Ok(negotiated)) => {
                        assert_eq!(negotiated.to_string(), *want, "{name}");
                        assert_eq!(negotiate(values.iter().copied()), Ok(negotiated), "{name}");
                    }
                    ("", Err(e)) => panic!("{name}: check: {e}"),
                    (_, Ok(v)) => panic!("{name}: check accepted {v}"),
                    (kind, Err(e)) => {
                        assert_eq!(e.major_mismatch(), kind == "major", "{name}");
                        assert_eq!(e.requested(), &v, "{name}");
                    }
                }
            }
        }
    }
    // A header of 4301 digits is not an int for CPython.
    let long = format!("container-infra 1.{}", "1".repeat(4301));
    assert_eq!(parse_one(long.as_bytes()), Err(HeaderError::InvalidValue));
}

/// Go: `TestRangeErrorMessage`.
#[test]
fn range_error_messages() {
    let v = parse_one(b"container-infra 2.11").expect("well-formed");
    let e = v.check().expect_err("out of range");
    assert_eq!(
        e.message(),
        "Mutually exclusive versions requested. Version 2.11 requested but not supported by \
         this service.The supported version range is: [container-infrastructure-management \
         1.1, container-infrastructure-management 1.14]."
    );
    let v = parse_one(b"container-infra 1.15").expect("well-formed");
    let e = v.check().expect_err("out of range");
    assert_eq!(
        e.message(),
        "Version 1.15 was requested but the minor version is not supported by this service. \
         The supported version range is: [container-infrastructure-management 1.1, \
         container-infrastructure-management 1.14]."
    );
    assert_eq!(e.to_string(), e.message());
    assert_eq!(v.header_value(), "container-infrastructure-management 1.15");
    assert_eq!(
        e.requested_header_value(),
        "container-infrastructure-management 1.15"
    );
    let e = parse_one(b"container-infra 01.-01").map(|v| v.check());
    assert_eq!(
        e.map(|r| r.map_err(|e| e.requested_header_value())),
        Ok(Err("container-infrastructure-management 1.-1".to_string()))
    );
}

/// Go: `TestCompare`.
#[test]
fn compare() {
    assert!(Version::new(1, 10).at_least(Version::new(1, 9)));
    assert!(!Version::new(1, 9).at_least(Version::new(1, 10)));
    assert!(Version::new(1, 9).between(Some(Version::new(1, 9)), Some(Version::new(1, 14))));
    assert!(!Version::new(1, 8).between(Some(Version::new(1, 9)), Some(Version::new(1, 14))));
    assert!(Version::new(1, 3).between(None, None));
    assert!(Version::new(2, 0) > Version::new(1, 14));
}

#[test]
fn header_values() {
    assert_eq!(Version::MIN.header_value(), MIN_HEADER_VALUE);
    assert_eq!(Version::MAX.header_value(), MAX_HEADER_VALUE);
    for minor in 0..=15 {
        let v = Version::new(1, minor);
        assert_eq!(v.header_value(), format!("{SERVICE_NAME} 1.{minor}"));
    }
    assert_eq!(
        Version::new(2, 3).header_value(),
        format!("{SERVICE_NAME} 2.3")
    );
    assert_eq!(Version::DEFAULT, Version::new(1, 1));
    assert_eq!(
        HeaderError::InvalidService.to_string(),
        HeaderError::InvalidService.detail()
    );
    assert_eq!(
        HeaderError::InvalidValue.to_string(),
        HeaderError::InvalidValue.detail()
    );
    assert_eq!(
        method_not_supported_message(Version::new(1, 8), "delete"),
        "Version 1.8 was requested but the requested API delete is not supported for this \
         version."
    );
}

/// The checks the fuzz target makes, run on every seed: a parsed version
/// round-trips through its own header value, and negotiation is parse then
/// check.
pub(crate) fn check_input(data: &[u8]) {
    let values: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    let parsed = parse(values.iter().copied());
    let negotiated = negotiate(values.iter().copied());
    match parsed {
        Err(e) => assert_eq!(negotiated, Err(NegotiationError::Header(e))),
        Ok(v) => {
            let again = parse_one(v.header_value().as_bytes());
            assert_eq!(again.as_ref(), Ok(&v), "round trip of {data:?}");
            match v.check() {
                Ok(n) => {
                    assert_eq!(negotiated, Ok(n));
                    assert_eq!(
                        parse_one(n.header_value().as_bytes()).map(|r| r.check()),
                        Ok(Ok(n))
                    );
                }
                Err(e) => {
                    assert!(!e.message().is_empty());
                    assert_eq!(negotiated, Err(NegotiationError::Range(e)));
                }
            }
        }
    }
}

/// The seed corpus of the fuzz target (the Go seeds, decoded to raw input).
#[test]
fn fuzz_seeds() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/seed-microversion");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut n = 0;
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_input(&data);
        n += 1;
    }
    assert!(n >= 13, "only {n} seeds in {}", dir.display());
}

/// Go: `TestParseMatchesReference`: answers of Magnum's own
/// `Version.parse_headers` on generated header values, recorded from Magnum
/// 23.0.0. Header bytes reach Python as Latin-1, so each code point of the
/// recorded string is one byte.
#[test]
fn parse_matches_reference() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/microversion/reference_headers.json");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cases: Vec<serde_json::Value> = serde_json::from_slice(&data).expect("a JSON list");
    let mut failures = Vec::new();
    for case in &cases {
        let header = case["header"].as_str().expect("header");
        let bytes: Vec<u8> = header
            .chars()
            .map(|c| u8::try_from(u32::from(c)).expect("a Latin-1 character"))
            .collect();
        let got = match parse_one(&bytes) {
            Ok(v) => format!("ok {v}"),
            Err(e) => format!("err {e}"),
        };
        let want = format!(
            "{} {}",
            case["result"].as_str().expect("result"),
            case["value"].as_str().expect("value")
        );
        if got != want {
            failures.push(format!("{header:?}: got {got:?}, want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(cases.len() >= 100, "only {} cases", cases.len());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// No header value panics, and every accepted one round-trips.
        #[test]
        fn no_header_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            check_input(&data);
        }

        /// Values shaped like real headers.
        #[test]
        fn header_shaped_values(
            service in "(container-infra|container-infrastructure|container-infrastructure-management|compute|)",
            sep in "[ \t\u{a0}]{1,2}",
            version in "[+-]?[0-9_]{0,4}(\\.[+-]?[0-9_]{0,4}){0,2}|latest|LaTeSt",
        ) {
            let value: Vec<u8> = format!("{service}{sep}{version}")
                .chars()
                .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
                .collect();
            check_input(&value);
        }
    }
}
