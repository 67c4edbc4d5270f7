//! Takeover: a database written by Magnum 23.0.0 (the spec's schema and
//! sample rows) is adopted with `db adopt` without any row changing, then
//! served by `openkeel-magnum api`, which must answer the recorded
//! read-only requests (spec/db/sample-data-expected-responses.json) exactly
//! as Magnum did — and still change nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{Server, binary, request, run, service_env, spec_dir};
use crate::sql::{Conn, FreshDb, TableState, changed_tables, runtime, snapshot, split_statements};

/// The response headers compared with Magnum's: the version negotiation
/// headers and Content-Type. A header Magnum did not send must be absent.
const COMPARED_HEADERS: [&str; 5] = [
    "OpenStack-API-Minimum-Version",
    "OpenStack-API-Maximum-Version",
    "OpenStack-API-Version",
    "Vary",
    "Content-Type",
];

/// The indexes openkeel-magnum adds to Magnum's schema (migrations after
/// the first), by table.
const OUR_INDEXES: [(&str, &str); 1] = [("cluster", "okm_cluster0project_id")];

pub(crate) fn read_spec(name: &str) -> Option<String> {
    let path = spec_dir().join("db").join(name);
    match std::fs::read_to_string(&path) {
        Ok(s) => Some(s),
        Err(e) if !crate::harness::in_ci() => {
            eprintln!(
                "skipped: {} not readable ({e}); set OKM_SPEC_DIR",
                path.display()
            );
            None
        }
        Err(e) => panic!("{}: {e} (set OKM_SPEC_DIR)", path.display()),
    }
}

/// The 29 recorded requests and Magnum's answers.
pub(crate) fn load_records() -> Option<Vec<Value>> {
    let text = read_spec("sample-data-expected-responses.json")?;
    let records: Vec<Value> =
        serde_json::from_str(&text).expect("sample-data-expected-responses.json");
    assert_eq!(records.len(), 29, "recorded requests");
    Some(records)
}

fn count_inserts(script: &str) -> usize {
    split_statements(script)
        .iter()
        .filter(|s| s.starts_with("INSERT INTO"))
        .count()
}

#[test]
fn spec_files_split_into_their_statements() {
    let (Some(data), Some(schema)) = (
        read_spec("sample-data-mariadb.sql"),
        read_spec("schema-mariadb.sql"),
    ) else {
        return;
    };
    assert_eq!(
        count_inserts(&data),
        28,
        "INSERTs of sample-data-mariadb.sql"
    );
    let creates = split_statements(&schema)
        .iter()
        .filter(|s| s.starts_with("CREATE TABLE"))
        .count();
    assert_eq!(creates, 8, "CREATE TABLEs of schema-mariadb.sql");
}

/// Magnum's schema and sample rows on a fresh MariaDB database, adopted and
/// served.
#[test]
fn takeover_mariadb() {
    let Some(server) = service_env("OKM_TEST_MYSQL_URL") else {
        return;
    };
    let rt = runtime();
    let (Some(records), Some((db, mut conn))) = (load_records(), mariadb_samples(&rt, &server))
    else {
        return;
    };
    takeover(&rt, &mut conn, &db, &records);
}

/// A fresh MariaDB database on `server` holding Magnum's schema and sample
/// rows (spec/db); `None` when the spec is not there (outside CI).
pub(crate) fn mariadb_samples(
    rt: &tokio::runtime::Runtime,
    server: &str,
) -> Option<(FreshDb, Conn)> {
    let schema = read_spec("schema-mariadb.sql")?;
    let data = read_spec("sample-data-mariadb.sql")?;
    let db = FreshDb::create(rt, server, "okm_takeover_");
    let mut conn = db.connect(rt);
    let n = conn.exec_script(rt, &schema, |_| false);
    assert!(n >= 8, "schema-mariadb.sql: {n} statements");
    let mut inserts = 0;
    conn.exec_script(rt, &data, |s| {
        if s.starts_with("INSERT INTO") {
            inserts += 1;
        }
        false
    });
    assert_eq!(inserts, 28, "INSERTs of sample-data-mariadb.sql");
    Some((db, conn))
}

/// The same on PostgreSQL: Magnum's schema there with the same sample rows.
#[test]
fn takeover_postgresql() {
    let Some(server) = service_env("OKM_TEST_POSTGRES_URL") else {
        return;
    };
    let (Some(records), Some(schema), Some(data)) = (
        load_records(),
        read_spec("schema-postgresql.sql"),
        read_spec("sample-data-mariadb.sql"),
    ) else {
        return;
    };
    let rt = runtime();
    let db = FreshDb::create(&rt, &server, "okm_takeover_");
    let mut conn = db.connect(&rt);
    // pg_dump's session settings that need psql or a role the tests lack.
    conn.exec_script(&rt, &schema, |s| {
        s.starts_with("SET ")
            || s.starts_with("SELECT pg_catalog.set_config")
            || s.contains("OWNER TO")
    });
    load_sample_rows_postgres(&rt, &mut conn, &data);
    takeover(&rt, &mut conn, &db, &records);
}

/// Inserts the rows of the MariaDB dump into PostgreSQL, booleans and
/// integers converted from MariaDB's notation after the column types the
/// schema declares, then moves the id sequences past the rows as Magnum's
/// own inserts would have.
fn load_sample_rows_postgres(rt: &tokio::runtime::Runtime, conn: &mut Conn, data: &str) {
    let mut types = BTreeMap::new();
    for r in conn.text_rows(
        rt,
        "SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns WHERE table_schema = 'public'",
    ) {
        if let [Some(t), Some(c), Some(ty)] = &r[..] {
            types.insert(format!("{t}.{c}"), ty.clone());
        }
    }
    let mut n = 0;
    let mut tables = Vec::new();
    for s in split_statements(data) {
        let Some((table, cols, vals)) = parse_insert(&s) else {
            continue;
        };
        assert_eq!(cols.len(), vals.len(), "{table}: columns and values");
        let rendered: Vec<String> = cols
            .iter()
            .zip(&vals)
            .map(|(c, v)| match v {
                None => "NULL".to_string(),
                Some(v) => match types.get(&format!("{table}.{c}")).map(String::as_str) {
                    Some("boolean") => (if v == "0" { "false" } else { "true" }).to_string(),
                    Some("integer" | "bigint" | "smallint") => v
                        .parse::<i64>()
                        .unwrap_or_else(|e| panic!("{table}.{c} = {v}: {e}"))
                        .to_string(),
                    _ => format!("'{}'", v.replace('\'', "''")),
                },
            })
            .collect();
        let q = format!(
            "INSERT INTO \"{table}\" (\"{}\") VALUES ({})",
            cols.join("\", \""),
            rendered.join(", ")
        );
        conn.exec(rt, &q)
            .unwrap_or_else(|e| panic!("insert into {table}: {e}"));
        if !tables.contains(&table) {
            tables.push(table);
        }
        n += 1;
    }
    assert_eq!(n, 28, "sample rows loaded");
    for t in tables.iter().filter(|t| t.as_str() != "alembic_version") {
        conn.exec(
            rt,
            &format!(
                "SELECT setval(pg_get_serial_sequence('{t}', 'id'), COALESCE((SELECT MAX(id) FROM \"{t}\"), 0) + 1, false)"
            ),
        )
        .unwrap_or_else(|e| panic!("setval {t}: {e}"));
    }
}

/// The table, columns and values of a mysqldump `INSERT INTO `t` (…) VALUES (…)`.
fn parse_insert(s: &str) -> Option<(String, Vec<String>, Vec<Option<String>>)> {
    let rest = s.strip_prefix("INSERT INTO `")?;
    let (table, rest) = rest.split_once("` (")?;
    let (cols, rest) = rest.split_once(") VALUES (")?;
    let vals = rest.strip_suffix(')')?;
    let cols = cols
        .split(", ")
        .map(|c| c.trim_matches('`').to_string())
        .collect();
    Some((
        table.to_string(),
        cols,
        parse_values(vals).expect("a value list"),
    ))
}

/// The value list of a mysqldump INSERT: NULL, numbers (kept as text) and
/// quoted strings with MariaDB's backslash escapes.
fn parse_values(s: &str) -> Result<Vec<Option<String>>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"NULL") {
            out.push(None);
            i += 4;
        } else if b[i] == b'\'' {
            let mut v: Vec<u8> = Vec::new();
            i += 1;
            loop {
                if i >= b.len() {
                    return Err("unterminated string".into());
                }
                match b[i] {
                    b'\'' if b.get(i + 1) == Some(&b'\'') => {
                        v.push(b'\'');
                        i += 2;
                    }
                    b'\'' => break,
                    b'\\' if i + 1 < b.len() => {
                        v.push(match b[i + 1] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'0' => 0,
                            b'Z' => 26,
                            b'b' => 8,
                            c => c,
                        });
                        i += 2;
                    }
                    c => {
                        v.push(c);
                        i += 1;
                    }
                }
            }
            i += 1;
            out.push(Some(String::from_utf8_lossy(&v).into_owned()));
        } else {
            let j = b[i..]
                .iter()
                .position(|&c| c == b',')
                .unwrap_or(b.len() - i);
            out.push(Some(s[i..i + j].trim().to_string()));
            i += j;
        }
        if i < b.len() {
            if b[i] != b',' {
                return Err(format!("expected ',' at {i}"));
            }
            i += 1;
        }
    }
    Ok(out)
}

#[test]
fn mysqldump_values_are_parsed_with_their_escapes() {
    assert_eq!(
        parse_values("1,NULL,'a''b','c\\'d\\n',2.5").unwrap(),
        vec![
            Some("1".to_string()),
            None,
            Some("a'b".to_string()),
            Some("c'd\n".to_string()),
            Some("2.5".to_string())
        ]
    );
    assert!(parse_values("'open").is_err());
}

/// A snapshot as it would read without our indexes: a missing one is a
/// failure, and their lines leave the definitions.
pub(crate) fn without_our_indexes(
    snap: BTreeMap<String, TableState>,
) -> BTreeMap<String, TableState> {
    snap.into_iter()
        .map(|(tbl, mut st)| {
            if let Some((_, idx)) = OUR_INDEXES.iter().find(|(t, _)| *t == tbl) {
                assert!(
                    st.ddl.contains(idx),
                    "table {tbl} has no index {idx}:\n{}",
                    st.ddl
                );
                let keep: Vec<&str> = st.ddl.split('\n').filter(|l| !l.contains(idx)).collect();
                // MariaDB: the key list's last line loses its comma.
                st.ddl = keep.join("\n").replace(",\n)", "\n)");
            }
            (tbl, st)
        })
        .collect()
}

/// Adopts the loaded database with the binary, checks that no Magnum table
/// changed, serves it and replays the records.
fn takeover(rt: &tokio::runtime::Runtime, conn: &mut Conn, db: &FreshDb, records: &[Value]) {
    let dialect = db.dialect;
    let before = snapshot(rt, conn, dialect, None);
    assert_eq!(
        before.len(),
        8,
        "tables before adopt (Magnum's 7 and alembic_version): {:?}",
        before.keys()
    );
    for (tbl, rows) in [
        ("cluster", 3),
        ("nodegroup", 7),
        ("x509keypair", 12),
        ("alembic_version", 1),
    ] {
        assert_eq!(before[tbl].rows.len(), rows, "{tbl} rows before adopt");
    }
    let names: Vec<String> = before.keys().cloned().collect();
    let conf_text = format!(
        "[DEFAULT]\nauth_strategy = noauth\n\n[database]\nconnection = {}\n\n[certificates]\ncert_manager_type = x509keypair\n",
        db.sqlalchemy_url
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("magnum.conf");
    let port = crate::harness::free_port();
    std::fs::write(
        &conf,
        format!("[api]\nhost = 127.0.0.1\nport = {port}\n\n{conf_text}"),
    )
    .expect("conf");
    let conf_arg = conf.to_str().expect("utf-8 path");
    let okm = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["--config-file", conf_arg]);
        run(&binary(), &a, Duration::from_secs(120))
    };

    // Serving before adopt is refused with the command that fixes it.
    let o = okm(&["api"]);
    assert!(
        o.code != 0 && format!("{}{}", o.stdout, o.stderr).contains("db adopt"),
        "api before adopt: exit {}, output {}{}",
        o.code,
        o.stdout,
        o.stderr
    );
    let o = okm(&["db", "adopt"]);
    assert_eq!(o.code, 0, "db adopt:\n{}{}", o.stdout, o.stderr);
    // Adopt adds our indexes and changes nothing else.
    let after = without_our_indexes(snapshot(rt, conn, dialect, Some(&names)));
    let changed = changed_tables(&before, &after);
    assert!(
        changed.is_empty(),
        "db adopt changed:\n{}",
        changed.join("\n")
    );
    let o = okm(&["db", "adopt"]);
    assert_eq!(o.code, 0, "db adopt again:\n{}{}", o.stdout, o.stderr);

    let server = Server::start(&conf_text, &["api"]);
    let (pass, problems) = replay(&server.url, records);
    openkeel_magnum_exchanges::figures::report(&format!(
        "takeover ({dialect:?}): {pass}/{} recorded requests answered identically",
        records.len()
    ));
    let problems: Vec<String> = problems.into_iter().map(|(_, _, p)| p).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The recorded requests only read.
    let after = without_our_indexes(snapshot(rt, conn, dialect, Some(&names)));
    let changed = changed_tables(&before, &after);
    assert!(
        changed.is_empty(),
        "serving the recorded requests changed:\n{}",
        changed.join("\n")
    );
    drop(server);
}

/// Sends every record to `base` and compares status, the version headers,
/// Content-Type and the body with Magnum's answer (links rebased on base;
/// the time-dependent state of mservices ignored). The number identical
/// and the mismatches (method, URL, what differs).
fn replay(base: &str, records: &[Value]) -> (usize, Vec<(String, String, String)>) {
    let mut pass = 0;
    let mut problems_all = Vec::new();
    for (i, rec) in records.iter().enumerate() {
        let q = &rec["request"];
        let method = q["method"].as_str().unwrap_or("GET");
        let url = q["url"].as_str().unwrap_or("/");
        let headers: Vec<(String, String)> = q["headers"]
            .as_object()
            .map(|h| {
                h.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let mut name = format!("{method} {url}");
        let roles = headers
            .iter()
            .find(|(k, _)| k == "X-Roles")
            .map(|(_, v)| v.as_str())
            .unwrap_or("");
        if format!(",{roles},").contains(",admin,") {
            name.push_str(" (admin)");
        }
        if let Some((_, v)) = headers.iter().find(|(k, _)| k == "OpenStack-API-Version") {
            name.push_str(&format!(" [{v}]"));
        }
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let got = match request(method, &format!("{base}{url}"), &h, None) {
            Ok(a) => a,
            Err(e) => {
                problems_all.push((
                    method.to_string(),
                    url.to_string(),
                    format!("#{i} {name}: {e}"),
                ));
                continue;
            }
        };
        let mut problems = Vec::new();
        let want_status = rec["response"]["status"].as_u64().unwrap_or(0);
        if u64::from(got.status) != want_status {
            problems.push(format!("status: want {want_status}, got {}", got.status));
        }
        let want_headers = rec["response"]["headers"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for hname in COMPARED_HEADERS {
            let w: Vec<String> = want_headers
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case(hname))
                .map(|(_, v)| v.as_str().unwrap_or_default().to_string())
                .collect();
            let g: Vec<String> = got
                .headers
                .get_all(hname)
                .iter()
                .map(|v| v.to_str().unwrap_or_default().to_string())
                .collect();
            if w.join(", ") != g.join(", ") {
                problems.push(format!("header {hname}: want {w:?}, got {g:?}"));
            }
        }
        let want_body = rec["response"]["body"]
            .to_string()
            .replace("http://localhost/", &format!("{base}/"));
        let mut wb: Value = serde_json::from_str(&want_body).expect("recorded body");
        match serde_json::from_slice::<Value>(&got.body) {
            Err(e) => problems.push(format!(
                "body is not JSON ({e}): {:.500}",
                String::from_utf8_lossy(&got.body)
            )),
            Ok(mut gb) => {
                if url.starts_with("/v1/mservices") {
                    drop_service_state(&mut wb);
                    drop_service_state(&mut gb);
                }
                if wb != gb {
                    problems.push(format!("body:\n  magnum    {wb}\n  openkeel  {gb}"));
                }
            }
        }
        if problems.is_empty() {
            pass += 1;
        } else {
            problems_all.push((
                method.to_string(),
                url.to_string(),
                format!("#{i} {name}: {}", problems.join("\n  ")),
            ));
        }
    }
    (pass, problems_all)
}

/// Removes the state of each mservices entry: up or down depends on the
/// time since last_seen_up.
fn drop_service_state(body: &mut Value) {
    if let Some(list) = body.get_mut("mservices").and_then(Value::as_array_mut) {
        for s in list {
            if let Some(o) = s.as_object_mut() {
                o.remove("state");
            }
        }
    }
}
