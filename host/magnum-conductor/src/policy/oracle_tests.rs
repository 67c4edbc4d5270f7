//! The differential test against oslo.policy 6.0.1 (port of Go's
//! test/oracle/policy_test.go): generated cases — the 66 Magnum rules and
//! the rules of two override files (testdata/policy/policy-language.yaml
//! exercises the rule language, policy-compat.json the default rule and
//! overrides of deprecated names) plus a policy directory, for every
//! combination of enforce_scope and enforce_new_defaults, with credentials
//! drawn from personas and targets from owned, foreign, incomplete and oddly
//! typed resources, and random expressions, most of them malformed.
//!
//! It needs a Python with oslo.policy in `OPENKEEL_TEST_PYTHON`
//! (`scripts/ci/python-oracle.sh`); without it the test skips, except when
//! `CI=true`. `OKM_POLICY_ORACLE_SEED` changes the seed of the generator,
//! `OKM_POLICY_ORACLE_SCALE` multiplies the number of cases.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use oslo_policy::{CheckError, EnforceError, Enforcer, Options, Rule};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use test_support::rng::Rng;

use super::magnum_defaults;

const DEFAULT_SEED: u64 = 20_261_130;
const RULE_CASES: usize = 8_000;
const EXPRESSION_CASES: usize = 12_000;

#[derive(Serialize, Clone)]
struct Config {
    policy_file: String,
    policy_dirs: Vec<String>,
    enforce_scope: bool,
    enforce_new_defaults: bool,
}

#[derive(Serialize)]
struct WireDefault<'a> {
    name: &'a str,
    check_string: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    scope_types: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecated_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deprecated_check_string: Option<&'a str>,
}

#[derive(Serialize, Deserialize)]
struct Case {
    config: usize,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    rule: String,
    /// An ad-hoc check string, evaluated instead of a named rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    check: Option<String>,
    creds: Map<String, Value>,
    target: Map<String, Value>,
}

#[derive(Serialize)]
struct Input<'a> {
    defaults: Vec<WireDefault<'a>>,
    configs: &'a [Config],
    cases: &'a [Case],
}

#[derive(Deserialize)]
struct DecodedInput {
    cases: Vec<Case>,
}

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/policy")
}

fn enforcer(c: &Config) -> Enforcer {
    let opts = Options {
        defaults: magnum_defaults(),
        policy_file: (!c.policy_file.is_empty()).then(|| PathBuf::from(&c.policy_file)),
        policy_dirs: c.policy_dirs.iter().map(PathBuf::from).collect(),
        enforce_scope: c.enforce_scope,
        enforce_new_defaults: c.enforce_new_defaults,
        ..Options::default()
    };
    match Enforcer::new(opts) {
        Ok(e) => e,
        Err(e) => panic!("{e}"),
    }
}

fn outcome(e: &Enforcer, c: &Case) -> &'static str {
    let result = match &c.check {
        Some(check) => match e.check(check, &c.target, &c.creds) {
            Ok(ok) => Ok(ok),
            Err(CheckError::Parse(_)) => Ok(false),
            Err(CheckError::Eval(_)) => Err("error"),
        },
        None => match e.enforce(&c.rule, &c.target, &c.creds) {
            Ok(ok) => Ok(ok),
            Err(EnforceError::Scope(_)) => Err("scope"),
            Err(EnforceError::Eval(_)) => Err("error"),
        },
    };
    match result {
        Ok(true) => "allow",
        Ok(false) => "deny",
        Err(kind) => kind,
    }
}

#[test]
fn policy_oracle() {
    let Some(python) = std::env::var_os("OPENKEEL_TEST_PYTHON") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "OPENKEEL_TEST_PYTHON is not set (run scripts/ci/python-oracle.sh)"
        );
        eprintln!(
            "skipped: OPENKEEL_TEST_PYTHON is not set; run: eval \"$(scripts/ci/python-oracle.sh)\""
        );
        return;
    };
    let seed = match std::env::var("OKM_POLICY_ORACLE_SEED") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|e| panic!("OKM_POLICY_ORACLE_SEED={s}: {e}")),
        Err(_) => DEFAULT_SEED,
    };
    let scale: usize = match std::env::var("OKM_POLICY_ORACLE_SCALE") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|e| panic!("OKM_POLICY_ORACLE_SCALE={s}: {e}")),
        Err(_) => 1,
    };
    let data = testdata();
    let path = |p: &str| data.join(p).display().to_string();
    let files = [
        "".to_owned(),
        path("policy-language.yaml"),
        path("policy-compat.json"),
    ];
    let mut configs = Vec::new();
    for f in &files {
        for enforce_scope in [true, false] {
            for enforce_new_defaults in [true, false] {
                configs.push(Config {
                    policy_file: f.clone(),
                    policy_dirs: vec![],
                    enforce_scope,
                    enforce_new_defaults,
                });
            }
        }
    }
    // Policy directories: on top of the language file, files in name
    // order, dot files skipped.
    for enforce_scope in [true, false] {
        configs.push(Config {
            policy_file: files[1].clone(),
            policy_dirs: vec![path("policy.d")],
            enforce_scope,
            enforce_new_defaults: !enforce_scope,
        });
    }
    let enforcers: Vec<Enforcer> = configs.iter().map(enforcer).collect();

    let defaults = magnum_defaults();
    let mut names = rule_names(
        &defaults,
        &[
            data.join("policy-language.yaml"),
            data.join("policy-compat.json"),
        ],
    );
    names.push("t:dir_only".to_owned());
    let mut rng = Rng(seed);
    let mut cases = generate_cases(&mut rng, configs.len(), &names, RULE_CASES * scale);
    cases.extend(generate_expressions(
        &mut rng,
        configs.len(),
        EXPRESSION_CASES * scale,
    ));

    // Both sides read the same JSON, so numbers, nulls and lists are the
    // same values in Rust and in Python.
    let input = Input {
        defaults: defaults
            .iter()
            .map(|d| WireDefault {
                name: &d.name,
                check_string: &d.check_string,
                scope_types: &d.scope_types,
                deprecated_name: d.deprecated.as_ref().map(|x| x.name.as_str()),
                deprecated_check_string: d.deprecated.as_ref().map(|x| x.check_string.as_str()),
            })
            .collect(),
        configs: &configs,
        cases: &cases,
    };
    let input = match serde_json::to_vec(&input) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    };
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    let (cases_file, results_file) = (
        dir.path().join("cases.json"),
        dir.path().join("results.json"),
    );
    if let Err(e) = std::fs::write(&cases_file, &input) {
        panic!("{e}");
    }
    let run = Command::new(&python)
        .arg(data.join("policy_oracle.py"))
        .arg(&cases_file)
        .arg(&results_file)
        .output();
    match run {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "oracle: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("oracle: {e}"),
    }
    let want: Vec<String> =
        match std::fs::read(&results_file).map(|raw| serde_json::from_slice(&raw)) {
            Ok(Ok(w)) => w,
            Ok(Err(e)) => panic!("oracle results: {e}"),
            Err(e) => panic!("oracle results: {e}"),
        };
    let decoded: DecodedInput = match serde_json::from_slice(&input) {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(
        want.len(),
        decoded.cases.len(),
        "oracle returned {} results",
        want.len()
    );

    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut diffs = Vec::new();
    for (i, (c, want)) in decoded.cases.iter().zip(&want).enumerate() {
        let got = outcome(&enforcers[c.config], c);
        *counts.entry(want.as_str()).or_default() += 1;
        if got != want {
            let cfg = &configs[c.config];
            let rule = match &c.check {
                Some(check) => format!("check {check:?}"),
                None => format!("rule {:?}", c.rule),
            };
            diffs.push(format!(
                "case {i}: {rule} file={:?} dirs={} scope={} new_defaults={}\n  creds  {}\n  target {}\n  oslo.policy: {want}, ours: {got}",
                Path::new(&cfg.policy_file).file_name().unwrap_or_default(),
                !cfg.policy_dirs.is_empty(),
                cfg.enforce_scope,
                cfg.enforce_new_defaults,
                Value::Object(c.creds.clone()),
                Value::Object(c.target.clone()),
            ));
        }
    }
    let summary = format!(
        "policy oracle: {} cases ({} configurations, {} rule names, seed {seed}): outcomes {counts:?}; {} differences",
        decoded.cases.len(),
        configs.len(),
        names.len(),
        diffs.len()
    );
    openkeel_magnum_exchanges::figures::report(&summary);
    assert!(
        diffs.is_empty(),
        "{summary}\n{}",
        diffs
            .iter()
            .take(100)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The 66 defaults, every rule of the override files, the deprecated names
/// and a few unknown names.
fn rule_names(defaults: &[Rule], files: &[PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_owned());
        }
    };
    for d in defaults {
        add(&d.name);
    }
    for f in files {
        let e = match Enforcer::new(Options {
            policy_file: Some(f.clone()),
            ..Options::default()
        }) {
            Ok(e) => e,
            Err(e) => panic!("{e}"),
        };
        for k in e.overrides().keys() {
            add(k);
        }
    }
    for n in ["rule:admin_or_owner", "no_such_rule", "cluster:nope", ""] {
        add(n);
    }
    names
}

/// Draws `n` cases: every rule name in turn, with a random configuration,
/// persona and target.
fn generate_cases(rng: &mut Rng, n_configs: usize, names: &[String], n: usize) -> Vec<Case> {
    (0..n)
        .map(|i| {
            let creds = persona(rng);
            let config = rng.below(n_configs);
            let target = make_target(rng, &creds);
            Case {
                config,
                rule: names[i % names.len()].clone(),
                check: None,
                creds,
                target,
            }
        })
        .collect()
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn project_creds(user: &str, project: &str, roles: &[&str]) -> Map<String, Value> {
    obj(json!({
        "user_id": user, "project_id": project, "roles": roles, "is_admin": false,
        "user_domain_id": "default", "project_domain_id": "default", "domain_id": null,
        "system_scope": null,
    }))
}

fn with(mut m: Map<String, Value>, kv: Value) -> Map<String, Value> {
    m.extend(obj(kv));
    m
}

const PERSONAS: usize = 28;

fn persona(rng: &mut Rng) -> Map<String, Value> {
    let p = project_creds;
    match rng.below(PERSONAS) {
        0 => with(
            p("u1", "p1", &["admin", "member", "reader"]),
            json!({"is_admin": true}),
        ),
        1 => p("u1", "p1", &["member", "reader"]),
        2 => p("u2", "p1", &["member", "reader"]),
        3 => p("u3", "p1", &["reader"]),
        4 => p("u3", "p1", &["member"]),
        5 => p("u4", "p2", &["member", "reader"]),
        6 => with(
            p("u5", "", &["admin", "reader"]),
            json!({"project_id": null, "system_scope": "all", "is_admin": true}),
        ),
        7 => with(
            p("u6", "", &["admin"]),
            json!({"project_id": null, "domain_id": "d1"}),
        ),
        8 => with(p("u7", "p1", &["reader"]), json!({"system_scope": ""})),
        9 => p("u8", "p1", &[]),
        10 => {
            let mut m = p("u8", "p1", &[]);
            m.remove("roles");
            m
        }
        11 => p("u1", "p1", &["ADMIN", "Member", "READER"]),
        12 => with(p("u1", "p1", &["member"]), json!({"is_admin": true})),
        13 => p("u1", "p1", &["admin"]),
        14 => p("u9", "p1", &["cloud_admin", "legacy"]),
        15 => with(p("u1", "p1", &[]), json!({"roles": "admin"})),
        16 => with(p("u1", "p1", &[]), json!({"roles": [1, "admin"]})),
        17 => with(p("u1", "p1", &[]), json!({"roles": null})),
        18 => p("u1", "p1", &["i\u{307}", "\u{3bf}\u{3b4}\u{3bf}\u{3c2}"]),
        19 => p("u1", "p1", &["İ", "i"]),
        20 => p("u1", "p1", &["οδοσ"]),
        21 => with(
            p("u1", "p1", &["member", "reader"]),
            json!({"auth": {"project": {"id": "p1"}}, "groups": ["g1", "g2", {"name": "g3"}]}),
        ),
        22 => with(
            p("u2", "p2", &["reader"]),
            json!({"auth": "flat", "groups": [{"name": "g1"}, "g2"]}),
        ),
        23 => with(
            p("u1", "p1", &["member"]),
            json!({"project_id": 1, "user_id": 2}),
        ),
        24 => with(
            p("u1", "p1", &["a", "b", "c", "member"]),
            json!({"True": {"x": "abc"}}),
        ),
        25 => with(
            p("u1", "p1", &["admin"]),
            json!({"system_scope": "all", "domain_id": "d1", "system": "x"}),
        ),
        26 => with(p("u1", "p1", &["reader"]), json!({"system": "all"})),
        _ => with(
            p("u1", "p1", &["member", "y"]),
            json!({"is_admin": "True", "name": "abc"}),
        ),
    }
}

/// Values for the extra target keys, in key order.
fn extra_values() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "count",
            vec![
                json!(42),
                json!(31),
                json!(1000),
                json!(-5),
                json!("42"),
                json!(1),
                json!(42.0),
                json!(true),
                Value::Null,
            ],
        ),
        ("domain_id", vec![json!("d1"), json!("d2"), Value::Null]),
        (
            "enabled",
            vec![
                json!(true),
                json!(false),
                json!("True"),
                json!("true"),
                Value::Null,
                json!(1),
            ],
        ),
        (
            "group",
            vec![json!("g1"), json!("g2"), json!("g3"), json!("g4")],
        ),
        ("maybe", vec![Value::Null, json!("None"), json!("x")]),
        (
            "name",
            vec![
                json!("abc"),
                json!("ab"),
                json!("  abc"),
                json!("abc|"),
                json!("'abc'"),
                json!("x-abc-42"),
                json!("it's"),
                Value::Null,
                json!(7),
            ],
        ),
        (
            "ratio",
            vec![
                json!(1.5),
                json!(1000.0),
                json!(1e20),
                json!("1.5"),
                json!(1000),
            ],
        ),
        (
            "required_role",
            vec![
                json!("admin"),
                json!("Member"),
                json!("READER"),
                json!("nope"),
                Value::Null,
                json!(3),
            ],
        ),
        (
            "role_name",
            vec![json!("member"), json!("Member"), json!("abc"), Value::Null],
        ),
        (
            "target.user.id",
            vec![json!("u1"), json!("u2"), Value::Null],
        ),
        ("x", vec![json!("abc"), json!("y")]),
    ]
}

fn make_target(rng: &mut Rng, creds: &Map<String, Value>) -> Map<String, Value> {
    let get = |k: &str| creds.get(k).cloned().unwrap_or(Value::Null);
    let mut t = match rng.below(7) {
        // The caller's own project and user, as Magnum passes when it has
        // no resource.
        0 | 1 => obj(json!({"project_id": get("project_id"), "user_id": get("user_id")})),
        2 => obj(json!({"project_id": "p1", "user_id": "u1"})),
        3 => obj(json!({"project_id": "p2", "user_id": "u9"})),
        4 => Map::new(),
        5 => obj(json!({"project_id": null, "user_id": null})),
        _ => obj(json!({"project_id": 1, "user_id": 2})),
    };
    if rng.below(3) > 0 {
        for (k, values) in extra_values() {
            if rng.below(2) == 0 {
                t.insert(k.to_owned(), rng.pick(&values).clone());
            }
        }
    }
    t
}

/// The checks random expressions are built from.
const EXPR_ATOMS: &[&str] = &[
    "role:admin",
    "role:Member",
    "role:reader",
    "role:%(required_role)s",
    "role:nope",
    "project_id:%(project_id)s",
    "user_id:%(user_id)s",
    "is_admin:True",
    "is_admin:False",
    "@",
    "!",
    "rule:context_is_admin",
    "rule:project_member",
    "rule:t:never",
    "rule:missing",
    "'quoted'",
    "nocolon",
    "True:%(enabled)s",
    "groups:%(group)s",
    "auth.project.id:%(project_id)s",
    "'member':%(role_name)s",
    "42:%(count)s",
    "name:%(name)s",
    "system:all",
    "domain_id:%(domain_id)s",
    "project_id:%(nonexistent)s",
    "if:%(x)s",
    "x:%(name)d",
    "x:%s",
    "name:%(name)a",
];

/// Generic check kinds covering the Python literal forms and name paths
/// the engine reproduces.
const GENERIC_KINDS: &[&str] = &[
    "name",
    "user.id",
    "auth.project.id",
    "groups.name",
    "True",
    "False",
    "None",
    "...",
    "42",
    "-5",
    "+7",
    "0x1F",
    "0o17",
    "0b11",
    "1_000",
    "1.5",
    "1.",
    ".5",
    "1e3",
    "1E-3",
    "1e400",
    "00",
    "01",
    "1__0",
    "1e",
    "'abc'",
    "\"abc\"",
    "u'abc'",
    r"r'a\tb'",
    r"'a\tb'",
    "'ab''c'",
    "'''abc'''",
    "'open",
    "if",
    "lambda",
    "x.if",
    "True.x",
    "-x",
    "-True",
    "_",
    "é",
    "x.None",
    r"'\x41b'",
    r"'\u00e9'",
    "-0",
    "-0.0",
    "1e16",
    "1e-5",
    "0.0001",
    "123456789012345678901234",
    "--5",
    "-'abc'",
    "0xffffffffffffffffffff",
];

const GENERIC_MATCHES: &[&str] = &[
    "%(name)s",
    "%(count)s",
    "%(ratio)s",
    "abc",
    "42",
    "True",
    "None",
    "1000.0",
    "inf",
    "%(enabled)s",
    "%(maybe)s",
    "Ab",
    "%(name)r",
    "%(count)d",
    r"a\tb",
    "\tb",
    "é",
    "-5",
    "7",
    "31",
    "15",
    "3",
    "1000",
    "1.5",
    "1.0",
    "0.5",
    "0.001",
    "0",
    "-0.0",
    "1e+16",
    "1e-05",
    "0.0001",
    "123456789012345678901234",
    "%(ratio)d",
    "%(count)+05d",
    "%(name).1s",
    "%(name)a",
    "1208925819614629174706175",
];

fn generic_atom(rng: &mut Rng) -> String {
    format!("{}:{}", rng.pick(GENERIC_KINDS), rng.pick(GENERIC_MATCHES))
}

const EXPR_SPACES: &[&str] = &[" ", "  ", "\t", "\n ", " \u{a0}", "\u{1c}"];

/// Draws ad-hoc check strings, half of them built from a grammar (well
/// formed) and half from random token sequences (mostly malformed), to
/// compare the parsers, precedence and error handling.
fn generate_expressions(rng: &mut Rng, n_configs: usize, n: usize) -> Vec<Case> {
    (0..n)
        .map(|_| {
            let expr = if rng.below(2) == 0 {
                grammar_expr(rng, 3)
            } else {
                token_soup(rng)
            };
            let mut creds = persona(rng);
            if rng.below(2) == 0 {
                // Values for the generic-kind paths.
                let name = rng
                    .pick(&[
                        json!("abc"),
                        json!("Ab"),
                        json!(42),
                        Value::Null,
                        json!(true),
                        json!("1.5"),
                    ])
                    .clone();
                let user_id = rng.pick(&[json!("abc"), json!("42"), Value::Null]).clone();
                creds.insert("name".into(), name);
                creds.insert("user".into(), json!({"id": user_id}));
                creds.insert("_".into(), json!("abc"));
                creds.insert("-x".into(), json!("abc"));
                creds.insert("--5".into(), json!("abc"));
                creds.insert("é".into(), json!("Ab"));
            }
            let config = rng.below(n_configs);
            let target = make_target(rng, &creds);
            Case {
                config,
                rule: String::new(),
                check: Some(expr),
                creds,
                target,
            }
        })
        .collect()
}

fn op(rng: &mut Rng, o: &str) -> String {
    match rng.below(4) {
        0 => o.to_uppercase(),
        1 => {
            let mut c = o.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or_default()
        }
        _ => o.to_owned(),
    }
}

fn grammar_expr(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 || rng.below(3) == 0 {
        if rng.below(3) == 0 {
            return generic_atom(rng);
        }
        return (*rng.pick(EXPR_ATOMS)).to_owned();
    }
    let sp = if rng.below(5) == 0 { "  " } else { " " };
    match rng.below(5) {
        0 => {
            let (a, o, b) = (
                grammar_expr(rng, depth - 1),
                op(rng, "and"),
                grammar_expr(rng, depth - 1),
            );
            format!("{a}{sp}{o}{sp}{b}")
        }
        1 => {
            let (a, o, b) = (
                grammar_expr(rng, depth - 1),
                op(rng, "or"),
                grammar_expr(rng, depth - 1),
            );
            format!("{a}{sp}{o}{sp}{b}")
        }
        2 => {
            let o = op(rng, "not");
            format!("{o}{sp}{}", grammar_expr(rng, depth - 1))
        }
        3 => format!("({})", grammar_expr(rng, depth - 1)),
        _ => format!("( {} )", grammar_expr(rng, depth - 1)),
    }
}

fn token_soup(rng: &mut Rng) -> String {
    let mut out = String::new();
    for i in 0..1 + rng.below(7) {
        if i > 0 {
            out.push_str(rng.pick::<&str>(EXPR_SPACES));
        }
        match rng.below(8) {
            0 => out.push_str(&op(rng, "and")),
            1 => out.push_str(&op(rng, "or")),
            2 => out.push_str(&op(rng, "not")),
            3 => {
                out.push_str(&"(".repeat(1 + rng.below(2)));
                out.push_str(rng.pick::<&str>(EXPR_ATOMS));
            }
            4 => {
                out.push_str(rng.pick::<&str>(EXPR_ATOMS));
                out.push_str(&")".repeat(1 + rng.below(2)));
            }
            _ => out.push_str(rng.pick::<&str>(EXPR_ATOMS)),
        }
    }
    out
}
