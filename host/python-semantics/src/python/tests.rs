use super::*;
use crate::testing::{Lcg, oracle_python, run_oracle};

use serde_json::json;

/// `PyRepr` of the Go implementation's table, with one difference: a JSON
/// object keeps its document order, as Python's dict does (Go sorted the
/// keys of its unordered maps).
#[test]
fn repr_of_values() {
    let cases: Vec<(Box<dyn PyRepr>, &str)> = vec![
        (Box::new(PyNone), "None"),
        (Box::new(true), "True"),
        (Box::new(false), "False"),
        (Box::new(-3i64), "-3"),
        (Box::new(1.5f64), "1.5"),
        (Box::new(100.0f64), "100.0"),
        (Box::new(1e16f64), "1e+16"),
        (Box::new(1e15f64), "1000000000000000.0"),
        (Box::new(1e-5f64), "1e-05"),
        (Box::new(0.0001f64), "0.0001"),
        (Box::new(-0.0f64), "-0.0"),
        (Box::new(123456789012345678.0f64), "1.2345678901234568e+17"),
        (Box::new("it's"), r#""it's""#),
        (Box::new(r#"a"b'c"#), r#"'a"b\'c'"#),
        (Box::new("é\n\x01"), r"'é\n\x01'"),
        (Box::new("\u{200b}"), r"'\u200b'"),
        (Box::new(json!([1, "a", null])), "[1, 'a', None]"),
        (Box::new(json!({"b": 1, "a": []})), "{'b': 1, 'a': []}"),
        (Box::new(json!({"a": [], "b": 1})), "{'a': [], 'b': 1}"),
        (Box::new(Complex { re: 1.0, im: 2.0 }), "(1+2j)"),
        (Box::new(Complex { re: 0.0, im: -2.0 }), "-2j"),
        (Box::new(Complex { re: 1.5, im: -0.5 }), "(1.5-0.5j)"),
    ];
    for (v, want) in cases {
        assert_eq!(repr(&*v), want);
    }
    assert_eq!(str_of("x"), "x");
    assert_eq!(str_of(&json!("x")), "x");
    assert_eq!(str_of(&json!(["x"])), "['x']");
    assert_eq!(str_of(&PyNone), "None");
}

#[test]
fn repr_of_strings() {
    let cases = [
        ("", "''"),
        ("plain", "'plain'"),
        ("a'b\"c", r#"'a\'b"c'"#),
        ("'", r#""'""#),
        ("\"", r#"'"'"#),
        ("back\\slash", r"'back\\slash'"),
        ("\t\r\n\x00\x1f\x7f", r"'\t\r\n\x00\x1f\x7f'"),
        ("\u{80}\u{9f}\u{a0}\u{ad}", r"'\x80\x9f\xa0\xad'"),
        ("\u{a1}ÿ", "'\u{a1}ÿ'"),
        ("\u{2028}\u{feff}\u{e000}", r"'\u2028\ufeff\ue000'"),
        (
            "\u{1f600}\u{10ffff}\u{e0001}",
            "'\u{1f600}\\U0010ffff\\U000e0001'",
        ),
        ("日本語", "'日本語'"),
        ("\u{3000}", r"'\u3000'"),
    ];
    for (s, want) in cases {
        assert_eq!(string_repr(s), want, "{s:?}");
    }
}

#[test]
fn repr_of_bytes() {
    assert_eq!(bytes_repr(b""), "b''");
    assert_eq!(bytes_repr(b"abc"), "b'abc'");
    assert_eq!(bytes_repr(b"it's"), r#"b"it's""#);
    assert_eq!(bytes_repr(b"'\""), r#"b'\'"'"#);
    assert_eq!(
        bytes_repr(b"\\\t\n\r\x00\x7f\xff"),
        r"b'\\\t\n\r\x00\x7f\xff'"
    );
    assert_eq!(repr(&Bytes(b"x")), "b'x'");
    assert_eq!(class_of(&Bytes(b"x")), "<class 'bytes'>");
}

#[test]
fn repr_of_floats() {
    let cases = [
        (0.0, "0.0"),
        (1.0, "1.0"),
        (0.1, "0.1"),
        (1.0 / 3.0, "0.3333333333333333"),
        (2.5e-5, "2.5e-05"),
        (1.5e300, "1.5e+300"),
        (5e-324, "5e-324"),
        (f64::MAX, "1.7976931348623157e+308"),
        (9999999999999998.0, "9999999999999998.0"),
        (1e100, "1e+100"),
        (123.456, "123.456"),
        // Two shortest candidates equally close: the even one, as CPython.
        (492_187_841.0 / 4096.0, "120163.04711914062"),
        (681_468_229.0 / 4096.0, "166374.07934570312"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (f64::NAN, "nan"),
    ];
    for (f, want) in cases {
        assert_eq!(float_repr(f), want, "{f:e}");
    }
}

#[test]
fn repr_of_complex() {
    assert_eq!(complex_repr(1.0, -0.0), "(1-0j)");
    assert_eq!(complex_repr(0.0, 0.0), "0j");
    assert_eq!(complex_repr(-0.0, 1.0), "(-0+1j)");
    assert_eq!(complex_repr(f64::NAN, f64::NAN), "(nan+nanj)");
    assert_eq!(complex_repr(1.0, f64::NEG_INFINITY), "(1-infj)");
    assert_eq!(complex_repr(0.0, 1.5), "1.5j");
}

#[test]
fn containers() {
    let empty: Vec<i64> = Vec::new();
    assert_eq!(repr(&empty), "[]");
    assert_eq!(repr(&vec!["a".to_string(), "b".to_string()]), "['a', 'b']");
    assert_eq!(repr(&Tuple(&[1i64])), "(1,)");
    assert_eq!(repr(&Tuple(&[1i64, 2])), "(1, 2)");
    assert_eq!(repr(&Tuple::<i64>(&[])), "()");
    let m: BTreeMap<String, String> = [("b", "2"), ("a", "1")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(repr(&m), "{'a': '1', 'b': '2'}");
    assert_eq!(repr(&Some("x")), "'x'");
    assert_eq!(repr(&None::<&str>), "None");
    let mut out = String::new();
    write_dict(&mut out, [("k", 1i64), ("j", 2)]);
    assert_eq!(out, "{'k': 1, 'j': 2}");
    assert_eq!(
        repr(&json!({"op": "add", "value": {"a": [1.5, true, "x"]}})),
        "{'op': 'add', 'value': {'a': [1.5, True, 'x']}}"
    );
}

#[test]
fn class_names() {
    assert_eq!(class_of(&PyNone), "<class 'NoneType'>");
    assert_eq!(class_of(&true), "<class 'bool'>");
    assert_eq!(class_of(&1i64), "<class 'int'>");
    assert_eq!(class_of(&1.5f64), "<class 'float'>");
    assert_eq!(class_of("s"), "<class 'str'>");
    assert_eq!(class_of(&Complex { re: 1.0, im: 1.0 }), "<class 'complex'>");
    assert_eq!(class_of(&Tuple(&[1i64])), "<class 'tuple'>");
    for (v, name) in [
        (json!(null), "NoneType"),
        (json!(false), "bool"),
        (json!(1), "int"),
        (json!(18446744073709551615u64), "int"),
        (json!(1.0), "float"),
        (json!("x"), "str"),
        (json!([]), "list"),
        (json!({}), "dict"),
    ] {
        assert_eq!(class_of(&v), format!("<class '{name}'>"));
    }
}

#[test]
fn json_numbers_as_python_reads_them() {
    let v: serde_json::Value =
        serde_json::from_str("[1, -1, 1.0, 1e2, 18446744073709551615]").expect("literal JSON");
    assert_eq!(repr(&v), "[1, -1, 1.0, 100.0, 18446744073709551615]");
}

#[test]
fn int_of_strings() {
    let ok: &[(&str, &str)] = &[
        ("0", "0"),
        ("-0", "0"),
        ("00", "0"),
        ("0_0", "0"),
        (" 1_0 ", "10"),
        ("+5", "5"),
        ("-5", "-5"),
        ("\u{85}1", "1"),
        ("1\u{85}", "1"),
        ("1\u{a0}", "1"),
        ("\u{3000}1", "1"),
        ("\u{661}\u{662}", "12"),
        ("\t\n\x0b\x0c\r7\r\n", "7"),
        ("9223372036854775807", "9223372036854775807"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("9223372036854775808", "9223372036854775808"),
        (
            "-000123456789012345678901234567890",
            "-123456789012345678901234567890",
        ),
    ];
    for (s, want) in ok {
        let n = parse_int(s).unwrap_or_else(|e| panic!("int({s:?}): {e}"));
        assert_eq!(n.to_string(), *want, "{s:?}");
        assert_eq!(repr(&n), *want);
    }
    assert_eq!(parse_int("42").ok().and_then(|n| n.to_i64()), Some(42));
    assert_eq!(
        parse_int("99999999999999999999")
            .ok()
            .and_then(|n| n.to_i64()),
        None
    );
    assert!(parse_int("-99999999999999999999").is_ok_and(|n| n.is_negative()));

    for s in [
        "\x1c1", "_1", "1_", "1__0", "+-1", "²", " ", "", "1\x00", "1.5", "1e5", "0x10", "--1",
        "1 2", "١_", "+",
    ] {
        let e = parse_int(s).expect_err(s);
        assert_eq!(e.message(), invalid_int_literal(s));
        assert!(
            e.to_string()
                .starts_with("invalid literal for int() with base 10: ")
        );
    }
    assert_eq!(
        parse_int("two").map_err(|e| e.to_string()),
        Err("invalid literal for int() with base 10: 'two'".to_string())
    );
    // %.200R: the repr is cut to 200 characters.
    let long = "é".repeat(300);
    let msg = invalid_int_literal(&long);
    assert_eq!(
        msg,
        format!(
            "invalid literal for int() with base 10: '{}",
            "é".repeat(199)
        )
    );
}

#[test]
fn int_digit_limit() {
    let limit = "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 \
                 digits; use sys.set_int_max_str_digits() to increase the limit";
    assert!(parse_int(&"0".repeat(4300)).is_ok());
    for s in [
        "0".repeat(4301),
        format!("1{}", "_1".repeat(4300)),
        format!("-{}", "9".repeat(4301)),
    ] {
        assert_eq!(
            parse_int(&s).map_err(|e| e.to_string()),
            Err(limit.to_string())
        );
    }
}

#[test]
fn float_of_strings() {
    let ok: &[(&str, f64)] = &[
        ("1.5", 1.5),
        ("1_0.5", 10.5),
        ("1.e5", 100000.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("inf", f64::INFINITY),
        ("Infinity", f64::INFINITY),
        ("-iNfInItY", f64::NEG_INFINITY),
        ("iNf", f64::INFINITY),
        (" 1.5\n", 1.5),
        ("\u{661}.5", 1.5),
        ("1e400", f64::INFINITY),
        ("1_000.000_1", 1000.0001),
        ("1e1_0", 1e10),
        ("+.5e-3", 0.0005),
        ("1E5", 100000.0),
        ("-0", -0.0),
    ];
    for (s, want) in ok {
        let f = parse_float(s).unwrap_or_else(|e| panic!("float({s:?}): {e}"));
        assert_eq!(f.to_bits(), want.to_bits(), "{s:?}");
    }
    assert!(parse_float("-nan").is_ok_and(f64::is_nan));
    assert!(parse_float("NaN").is_ok_and(f64::is_nan));
    for s in [
        "1._5",
        "infinityx",
        "1e",
        "1e_5",
        "1_e5",
        "0x10",
        "\x1c1.5",
        "nan(1)",
        "in f",
        "",
        "1.5j",
        "1,5",
        ".",
        "e5",
        "_1",
        "1_",
        "+",
        "1e+",
        "inff",
        "++1",
        "1..5",
    ] {
        let e = parse_float(s).expect_err(s);
        assert_eq!(
            e.message(),
            format!("could not convert string to float: {}", string_repr(s))
        );
    }
}

#[test]
fn character_classes() {
    assert!(is_space('\x1c') && is_space('\u{85}') && is_space('\u{3000}'));
    assert!(!is_space('\u{200b}') && !is_space('a') && !is_space('\u{180e}'));
    assert!(is_printable(' ') && is_printable('é') && !is_printable('\u{a0}'));
    assert!(!is_printable('\u{10ffff}') && !is_printable('\u{e000}'));
    assert_eq!(decimal_value('7'), Some(7));
    assert_eq!(decimal_value('\u{669}'), Some(9));
    assert_eq!(decimal_value('\u{1d7ff}'), Some(9));
    assert_eq!(decimal_value('²'), None);
    assert_eq!(decimal_value('a'), None);
    assert_eq!(decimal_value('\u{10ffff}'), None);
}

/// Inputs for the oracle: pieces of numbers glued together at random.
fn oracle_inputs() -> Vec<String> {
    let pieces = [
        "0",
        "1",
        "9",
        "_",
        "__",
        ".",
        "e",
        "E",
        "+",
        "-",
        " ",
        "\t",
        "\x1c",
        "\u{85}",
        "\u{a0}",
        "\u{3000}",
        "\u{661}",
        "\u{ff19}",
        "²",
        "inf",
        "nan",
        "x",
        "é",
        "'",
        "\"",
        "\\",
        "\n",
        "\u{200b}",
        "\u{1f600}",
        "\u{e000}",
        "\x7f",
        "123",
        "4_5",
        "00",
    ];
    let mut rng = Lcg(0x5eed);
    let mut out: Vec<String> = Vec::new();
    for _ in 0..3000 {
        let n = 1 + rng.next() % 6;
        let s: String = (0..n).map(|_| rng.pick(&pieces)).collect();
        out.push(s);
    }
    out.push("1".repeat(4301) + "x");
    out.push("1".repeat(4301) + "_");
    out.push("1".repeat(4300) + "x");
    out.push(" ".to_string() + &"0".repeat(4301));
    out
}

/// `int()`, `float()` and `repr()` agree with CPython on generated strings,
/// and `is_printable`, `is_space` and `decimal_value` agree with it on every
/// code point.
#[test]
fn python_oracle() {
    let Some(python) = oracle_python("the Python oracle") else {
        return;
    };
    const SCRIPT: &str = r#"
import json, sys, unicodedata
cases = json.load(sys.stdin)
def run(f, s):
    try:
        v = f(s)
    except ValueError as e:
        return ["err", str(e)]
    return ["ok", repr(v)]
out = {"cases": [[run(int, s), run(float, s), repr(s)] for s in cases]}
out["unicode"] = unicodedata.unidata_version
out["printable"] = "".join("1" if chr(c).isprintable() else "0" for c in range(0x110000))
out["space"] = "".join("1" if chr(c).isspace() else "0" for c in range(0x110000))
out["decimal"] = "".join(str(unicodedata.decimal(chr(c), "x")) for c in range(0x110000))
floats = [float.fromhex(h) for h in sys.argv[1:]]
out["floats"] = [repr(f) for f in floats]
json.dump(out, sys.stdout)
"#;
    let inputs = oracle_inputs();
    let mut rng = Lcg(7);
    let floats: Vec<f64> = (0..2000)
        .map(|i| match i % 3 {
            0 => f64::from_bits(rng.next() << 32 | rng.next()),
            1 => (rng.next() % 100_000) as f64 / 10f64.powi((rng.next() % 12) as i32),
            _ => 10f64.powi((rng.next() % 40) as i32 - 20) * (1.0 + (rng.next() % 10) as f64),
        })
        .filter(|f| f.is_finite())
        .collect();
    let hex: Vec<String> = floats.iter().map(|f| float_hex(*f)).collect();
    let answer = run_oracle(python, SCRIPT, &hex, &inputs);

    assert_eq!(answer["unicode"], UNICODE_VERSION);
    let mut failures = Vec::new();
    for (s, got) in inputs
        .iter()
        .zip(answer["cases"].as_array().expect("cases"))
    {
        let int = match parse_int(s) {
            Ok(n) => json!(["ok", repr(&n)]),
            Err(e) => json!(["err", e.to_string()]),
        };
        let float = match parse_float(s) {
            Ok(f) => json!(["ok", float_repr(f)]),
            Err(e) => json!(["err", e.to_string()]),
        };
        let want = json!([int, float, string_repr(s)]);
        if &want != got {
            let show = |v: String| v.chars().take(300).collect::<String>();
            failures.push(format!(
                "{}: python {}, ours {}",
                show(format!("{s:?}")),
                show(got.to_string()),
                show(want.to_string())
            ));
        }
    }
    for (f, got) in floats
        .iter()
        .zip(answer["floats"].as_array().expect("floats"))
    {
        if got.as_str() != Some(float_repr(*f).as_str()) {
            failures.push(format!(
                "repr({f:e}): python {got}, ours {}",
                float_repr(*f)
            ));
        }
    }
    let tables = [
        (
            "printable",
            answer["printable"].as_str().expect("printable"),
        ),
        ("space", answer["space"].as_str().expect("space")),
        ("decimal", answer["decimal"].as_str().expect("decimal")),
    ];
    for (name, flags) in tables {
        for (cp, flag) in flags.bytes().enumerate() {
            let Some(c) = char::from_u32(cp as u32) else {
                continue;
            };
            let ours = match name {
                "printable" => {
                    if is_printable(c) {
                        b'1'
                    } else {
                        b'0'
                    }
                }
                "space" => {
                    if is_space(c) {
                        b'1'
                    } else {
                        b'0'
                    }
                }
                _ => decimal_value(c).map_or(b'x', |d| b'0' + d),
            };
            if ours != flag {
                failures.push(format!("{name} of U+{cp:04X}: python {}", flag as char));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures[..failures.len().min(30)].join("\n")
    );
}

/// `float.hex()` form of a finite float, for handing exact values to Python.
fn float_hex(f: f64) -> String {
    let bits = f.to_bits();
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mantissa = bits & ((1 << 52) - 1);
    if exp == 0 {
        format!("{sign}0x0.{mantissa:013x}p-1022")
    } else {
        format!("{sign}0x1.{mantissa:013x}p{}", exp - 1023)
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn no_string_makes_a_helper_panic(s in any::<String>()) {
            let _ = parse_int(&s);
            let _ = parse_float(&s);
            let r = string_repr(&s);
            prop_assert!(r.len() >= 2);
            prop_assert!(!invalid_int_literal(&s).is_empty());
        }

        #[test]
        fn integers_read_back(n in any::<i64>()) {
            prop_assert_eq!(parse_int(&n.to_string()).ok().and_then(|v| v.to_i64()), Some(n));
        }

        #[test]
        fn float_reprs_read_back(bits in any::<u64>()) {
            let f = f64::from_bits(bits);
            prop_assume!(f.is_finite());
            let back = parse_float(&float_repr(f)).map(f64::to_bits);
            prop_assert_eq!(back, Ok(bits));
        }
    }
}
