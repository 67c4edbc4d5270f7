//! Port of internal/config/oracle_test.go (TestOracleOsloConfig): generated
//! multi-file configurations are loaded by oslo.config 10.7.0
//! (`OPENKEEL_TEST_PYTHON`) and by our reader, and every option's value or
//! error must agree. `OPENKEEL_ORACLE_CASES` (default 300) and
//! `OPENKEEL_ORACLE_SEED` (default 1) change the number of cases and the
//! generator's seed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oslo_config::{Config, Opt, OptType, Schema, Value, ini};
use serde_json::{Value as Json, json};
use test_support::rng::Rng;

use super::schema;

/// Test-only options in an [oracle] group covering the types and
/// constraints no Magnum option uses (dict, float max, URI, deprecated names
/// of a multi-valued option and in another group).
fn extra_opts() -> Vec<Opt> {
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    vec![
        Opt::new("oracle", "dict", OptType::Dict).default("a:1,b:2"),
        Opt::new(
            "oracle",
            "float",
            OptType::Float {
                min: Some(0.0),
                max: Some(10.0),
            },
        )
        .default("0.5"),
        Opt::new(
            "oracle",
            "int",
            OptType::Integer {
                min: Some(-5),
                max: Some(5),
            },
        ),
        Opt::new(
            "oracle",
            "choice",
            OptType::String {
                choices: s(&["a", "b", "c"]),
            },
        )
        .default("b"),
        Opt::new(
            "oracle",
            "list",
            OptType::List {
                choices: s(&["a", "b", "c d"]),
            },
        )
        .default("a"),
        Opt::new("oracle", "multi", OptType::MultiString)
            .default("")
            .deprecated_name("multi_old")
            .deprecated_in("api", "oracle_multi"),
        Opt::new("oracle", "str", OptType::string())
            .default("$dict/$multi")
            .deprecated_in("cors", "oracle_str"),
        Opt::new("oracle", "ip", OptType::IpAddress),
        Opt::new("oracle", "host", OptType::HostAddress),
        Opt::new(
            "oracle",
            "uri",
            OptType::Uri {
                schemes: Vec::new(),
                max_length: None,
            },
        ),
    ]
}

/// Every option of the Magnum table plus the extra ones, all unchecked so
/// that each one's value or error can be read.
fn oracle_schema() -> Schema {
    let mut out = Schema::new();
    for mut o in schema::schema().opts().iter().cloned().chain(extra_opts()) {
        o.checked = false;
        if let Err(e) = out.register(o) {
            panic!("{e}");
        }
    }
    out
}

/// The schema as the Python side reads it.
fn schema_json(schema: &Schema) -> Json {
    let opts: Vec<Json> = schema
        .opts()
        .iter()
        .map(|o| {
            let (kind, min, max, choices): (&str, Json, Json, Vec<String>) = match &o.ty {
                OptType::String { choices } => ("string", Json::Null, Json::Null, choices.clone()),
                OptType::Integer { min, max } => ("int", json!(min), json!(max), Vec::new()),
                OptType::Float { min, max } => ("float", json!(min), json!(max), Vec::new()),
                OptType::Boolean => ("bool", Json::Null, Json::Null, Vec::new()),
                OptType::List { choices } => ("list", Json::Null, Json::Null, choices.clone()),
                OptType::MultiString => ("multi", Json::Null, Json::Null, Vec::new()),
                OptType::Dict => ("dict", Json::Null, Json::Null, Vec::new()),
                OptType::Port => ("port", Json::Null, Json::Null, Vec::new()),
                OptType::IpAddress => ("ip", Json::Null, Json::Null, Vec::new()),
                OptType::HostAddress => ("host", Json::Null, Json::Null, Vec::new()),
                OptType::Uri { .. } => ("uri", Json::Null, Json::Null, Vec::new()),
            };
            let deprecated: Vec<Json> = o
                .deprecated
                .iter()
                .map(|k| json!([k.group, k.name]))
                .collect();
            json!({
                "group": o.group,
                "name": o.name,
                "kind": kind,
                "default": o.default,
                "min": min,
                "max": max,
                "choices": choices,
                "deprecated": deprecated,
            })
        })
        .collect();
    Json::Array(opts)
}

const SECTIONS: &[&str] = &[
    "DEFAULT",
    "api",
    "API",
    "database",
    "x509",
    "oslo_policy",
    "keystone_auth",
    "drivers",
    "nosuch",
    "cors",
    "oracle",
    "Oracle",
    "keystone_authtoken",
];

fn keys_of(section: &str) -> &'static [&'static str] {
    match section.to_lowercase().as_str() {
        _ if section == "DEFAULT" => &[
            "debug",
            "host",
            "transport_url",
            "log_dir",
            "log_file",
            "logfile",
            "state_path",
            "pybasedir",
            "bogus",
            "control_exchange",
        ],
        "api" => &[
            "port",
            "host",
            "max_limit",
            "workers",
            "enabled_ssl",
            "ssl_cert_file",
            "api_paste_config",
            "oracle_multi",
        ],
        "database" => &[
            "connection",
            "connection_debug",
            "max_retries",
            "sqlite_synchronous",
        ],
        "x509" => &[
            "allowed_extensions",
            "allowed_key_usage",
            "term_of_validity",
            "allow_ca",
        ],
        "oslo_policy" => &[
            "policy_dirs",
            "remote_timeout",
            "policy_file",
            "enforce_new_defaults",
            "enforce_scope",
        ],
        "keystone_auth" => &[
            "auth_url",
            "tenant_name",
            "project_name",
            "username",
            "user_name",
            "auth_plugin",
        ],
        "keystone_authtoken" => &[
            "memcached_servers",
            "memcache_servers",
            "password",
            "token_cache_time",
        ],
        "drivers" => &[
            "enabled_beta_drivers",
            "disabled_drivers",
            "default_driver",
            "verify_ca",
        ],
        "nosuch" => &["a", "b"],
        "cors" => &["allowed_origin", "max_age", "allow_methods", "oracle_str"],
        "oracle" => &[
            "dict",
            "float",
            "int",
            "choice",
            "list",
            "multi",
            "multi_old",
            "str",
            "ip",
            "host",
            "uri",
        ],
        _ => &["a"],
    }
}

const VALUES: &[&str] = &[
    "9511",
    "abc",
    " 12 ",
    "-1",
    "1_000",
    "1__0",
    "+7",
    "70000",
    "0",
    "1e3",
    "2.5",
    "-0.5",
    "true",
    "Yes",
    "on",
    "OFF",
    "0",
    "1",
    "t",
    "",
    r#""quoted""#,
    "'single'",
    r#""mismatch'"#,
    "\"",
    "a,b, c,",
    " , ",
    "keyUsage, subjectAltName",
    "Digital Signature,CRL Sign",
    "bogus,keyUsage",
    "$host",
    "${api.port}",
    "$$x",
    r"\$y",
    "$nope",
    "${api.nope}",
    "${nosuch.a}",
    "$ x",
    "${unclosed",
    "$port/$max_limit",
    "${x509.allow_ca}",
    "$allowed_key_usage",
    "$state_path/x",
    "$policy_dirs",
    "127.0.0.1",
    "::1",
    "10.0.0.300",
    "node-1",
    "node_1",
    "-bad-",
    "example.com.",
    "123",
    "x # y",
    "a:b",
    "k1:v1,k2:v2",
    "http://h:5000/v3",
    "mysql+pymysql://u:p@h/db",
    "k1:v1, k2 : v2 ,",
    "k:v:w",
    "novalue",
    "a,b",
    "c d",
    "a, c d",
    "inf",
    "nan",
    "1e-3",
    "10.5",
    "${oracle.dict}",
    "$multi",
    "${oracle.list}",
    "$float",
    "fe80::1%eth0",
    "1.2.3.4",
    // Beyond the Go grammar.
    "b:2,a:1",
    "1e400",
    "-inf",
    "1_0.5",
    "0x10",
    "٣",
    "2e16",
    "1.5e-7",
    "https://[::1]:8080/x",
    "ftp://h",
    "h/v3",
    "http://",
    "http://h:x/",
    "${oracle.uri}",
    "$interface",
    "it's",
    "${oracle.float}",
    "$pybasedir",
    "a\u{a0}",
    "\u{212a}x",
    "$\u{17f}",
    "${API.port}",
    "${oracle.str}",
    "fe80::1",
    "::ffff:1.2.3.4",
    "01.2.3.4",
    "a.b-c.d",
];

const SEPARATORS: &[&str] = &[" = ", "=", ": ", ":", " =", "= "];

/// One configuration file from a small grammar biased towards the parser's
/// and the types' corner cases.
fn case(rng: &mut Rng) -> String {
    let mut b = String::new();
    if rng.below(40) == 0 {
        b.push_str("early = 1\n");
    }
    for _ in 0..1 + rng.below(4) {
        let section = *rng.pick(SECTIONS);
        b.push_str(&format!("[{section}]\n"));
        let keys = keys_of(section);
        let mut after_value = false;
        for _ in 0..rng.below(6) {
            match rng.below(12) {
                0 => {
                    b.push_str("# comment = 1\n");
                    after_value = false;
                }
                1 => {
                    b.push('\n');
                    after_value = false;
                }
                2 => {
                    // A stray continuation (no value pending) is rare.
                    if after_value || rng.below(10) == 0 {
                        b.push_str("  continued $$ line\n");
                    }
                }
                3 if rng.below(10) == 0 => b.push_str("not an assignment\n"),
                _ => {
                    let key = keys[rng.below(keys.len())];
                    let sep = *rng.pick(SEPARATORS);
                    let value = *rng.pick(VALUES);
                    b.push_str(&format!("{key}{sep}{value}\n"));
                    after_value = true;
                }
            }
        }
    }
    b
}

/// A value as the oracle's JSON shows it.
fn json_of(v: &Value) -> Json {
    match v {
        Value::None => Json::Null,
        Value::String(s) => json!(s),
        Value::Integer(n) => json!(n),
        Value::Float(f) if !f.is_finite() => json!({"nonfinite": v.python_str()}),
        Value::Float(f) => json!(f),
        Value::Boolean(b) => json!(b),
        Value::List(items) => json!(items),
        Value::Dict(pairs) => {
            Json::Object(pairs.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
        }
    }
}

/// A generated case: its files and environment variables.
type Case = (Vec<PathBuf>, Vec<(String, String)>);

/// Each option (`group/name`) with its value or error.
type Answers = Vec<(String, Result<Json, String>)>;

/// Environment variables for a case: usually none, else one to three
/// `OS_<GROUP>__<NAME>` of the grammar's keys (multi-valued options
/// excepted: oslo.config splits their variable into characters).
fn environment(rng: &mut Rng) -> Vec<(String, String)> {
    if rng.below(3) > 0 {
        return Vec::new();
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let section = *rng.pick(SECTIONS);
        let key = *rng.pick(keys_of(section));
        if matches!(key, "policy_dirs" | "multi" | "multi_old" | "oracle_multi") {
            continue;
        }
        let var = oslo_config::environment_variable(section, key);
        if !out.iter().any(|(v, _)| *v == var) {
            out.push((var, rng.pick(VALUES).to_string()));
        }
    }
    out
}

/// Our answer for one case: a parse error, or each option's value or error.
fn ours(
    schema: &Arc<Schema>,
    paths: &[PathBuf],
    env: &[(String, String)],
) -> Result<Answers, String> {
    let mut files = Vec::new();
    for p in paths {
        let data = std::fs::read(p).map_err(|e| e.to_string())?;
        files.push(ini::parse(&p.display().to_string(), &data).map_err(|e| e.to_string())?);
    }
    let (config, _) = Config::from_sources(Arc::clone(schema), files, env.iter().cloned())
        .map_err(|e| format!("{}", e[0]))?;
    Ok(schema
        .opts()
        .iter()
        .map(|o| {
            let key = format!("{}/{}", o.group, o.name);
            let value = match config.get(&o.group, &o.name) {
                Some(Ok(v)) => Ok(json_of(v)),
                Some(Err(e)) => Err(e.to_string()),
                None => Err("not registered".to_owned()),
            };
            (key, value)
        })
        .collect())
}

/// The Python oracle, or `None` (skip) when `OPENKEEL_TEST_PYTHON` is unset
/// outside CI.
pub(super) fn python() -> Option<String> {
    test_support::oracle::python()
}

fn oracle_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../oslo-config/testdata/oracle/oslo_config_oracle.py")
}

fn run_oracle(python: &str, input: &Json) -> Json {
    let script = oracle_script();
    let out =
        test_support::oracle::run(python, &[script.as_os_str()], input.to_string().as_bytes());
    serde_json::from_slice(&out).unwrap_or_else(|e| panic!("oracle output: {e}"))
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(default)
}

#[test]
fn oslo_config_agrees() {
    let Some(python) = python() else { return };
    let n = env_number("OPENKEEL_ORACLE_CASES", 300) as usize;
    let mut rng = Rng(env_number("OPENKEEL_ORACLE_SEED", 1));
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut cases: Vec<Case> = Vec::with_capacity(n);
    for i in 0..n {
        let mut files = Vec::new();
        for j in 0..1 + rng.below(2) {
            let p = tmp.path().join(format!("case{i:03}-{j}.conf"));
            std::fs::write(&p, case(&mut rng)).unwrap_or_else(|e| panic!("write: {e}"));
            files.push(p);
        }
        cases.push((files, environment(&mut rng)));
    }
    let schema = Arc::new(oracle_schema());
    let input = json!({
        "opts": schema_json(&schema),
        "cases": cases
            .iter()
            .map(|(f, env)| json!({"files": f, "env": env.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>()}))
            .collect::<Vec<_>>(),
    });
    let results = run_oracle(&python, &input);
    let results = results
        .as_array()
        .unwrap_or_else(|| panic!("oracle answered {results}"));
    assert_eq!(results.len(), n, "oracle answered {} cases", results.len());

    let (mut failures, mut compared, mut parse_errors, mut value_errors) = (Vec::new(), 0, 0, 0);
    for (i, (res, (files, env))) in results.iter().zip(&cases).enumerate() {
        let mut content: String = files
            .iter()
            .map(|p| {
                format!(
                    "--- {}\n{}",
                    p.display(),
                    std::fs::read_to_string(p).unwrap_or_default()
                )
            })
            .collect();
        content.push_str(&format!("--- environment {env:?}\n"));
        let mut report = |what: String| {
            if failures.len() < 20 {
                failures.push(format!("case {i}: {what}\n{content}"));
            } else {
                failures.push(String::new());
            }
        };
        let oslo_parse = res.get("parse_error").and_then(Json::as_str);
        let got = ours(&schema, files, env);
        match (oslo_parse, &got) {
            (Some(_), Err(_)) => {
                parse_errors += 1;
                continue;
            }
            (Some(e), Ok(_)) => {
                report(format!("oslo fails to load ({e}), ours loads"));
                continue;
            }
            (None, Err(e)) => {
                report(format!("oslo loads, ours fails ({e})"));
                continue;
            }
            (None, Ok(_)) => {}
        }
        let Ok(values) = got else { continue };
        let Some(want) = res.get("values").and_then(Json::as_object) else {
            report(format!("oracle answer without values: {res}"));
            continue;
        };
        for (key, ours) in &values {
            let key = key.as_str();
            let Some(oslo) = want.get(key) else {
                report(format!("{key}: missing from the oracle's answer"));
                continue;
            };
            compared += 1;
            match (oslo.get("error").and_then(Json::as_str), ours) {
                (Some(_), Err(_)) => value_errors += 1,
                (Some(e), Ok(v)) => report(format!("{key}: oslo fails ({e}), ours gives {v}")),
                (None, Err(e)) => report(format!(
                    "{key}: oslo gives {}, ours fails ({e})",
                    oslo["value"]
                )),
                (None, Ok(v)) => {
                    if oslo["value"] != *v {
                        report(format!("{key}: oslo gives {}, ours {v}", oslo["value"]));
                    }
                }
            }
        }
    }
    // Past the 20th, a difference is counted with an empty entry.
    let total = failures.len();
    failures.retain(|f| !f.is_empty());
    openkeel_magnum_exchanges::figures::report(&format!(
        "configuration oracle: {n} cases: {parse_errors} rejected by both parsers, {compared} option values \
         compared, {value_errors} of them errors in both; {total} differences"
    ));
    assert!(
        failures.is_empty(),
        "{total} differences:\n{}",
        failures.join("\n")
    );
}
