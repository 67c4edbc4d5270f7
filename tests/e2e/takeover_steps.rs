//! The step-by-step takeover of docs/operators.md ("Taking over a running
//! Python Magnum"), executed as written: every `sh takeover` block of the
//! guide, in order, in one shell, on MariaDB loaded with the rows Magnum
//! 23.0.0 wrote (spec/db), with the real `mysql`, `mysqldump`, `openstack`
//! and Keystone. Magnum's side is played by its recorded answers for those
//! rows (spec/db/sample-data-expected-responses.json, which the takeover
//! test holds our answers to), served at `OLD_URL`; the catalog's
//! `container-infra` endpoints of a region of the test's own name at first
//! point there.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{binary, free_port, service_env};
use crate::sql::{changed_tables, runtime, snapshot};
use crate::takeover::{load_records, mariadb_samples, without_our_indexes};

/// The blocks of the guide's takeover, by their first line.
const STEPS: usize = 6;

/// The `sh takeover` blocks of docs/operators.md, in order.
fn guide_steps() -> Vec<String> {
    let path = test_support::repo_root().join("docs/operators.md");
    let text = std::fs::read_to_string(&path).expect("docs/operators.md");
    let mut steps = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_end() == "```sh takeover" => current = Some(String::new()),
            None => {}
            Some(_) if line.starts_with("```") => steps.push(current.take().expect("block")),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    assert!(current.is_none(), "an unterminated takeover block");
    steps
}

#[test]
fn the_guide_has_the_takeover_steps() {
    let steps = guide_steps();
    assert_eq!(steps.len(), STEPS, "takeover blocks: {steps:#?}");
    assert!(steps[2].contains("db adopt"), "step 3 adopts: {}", steps[2]);
}

/// A recorded answer of Magnum: status and body.
type Recorded = (u16, Value);

/// The path and User-Agent of every request the recorded Magnum received.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// Serves Magnum's recorded answers by path (the answer at 1.14 when one
/// was recorded), and remembers the path and User-Agent of every request.
fn recorded_magnum(records: &[Value]) -> (String, Seen) {
    let mut answers: BTreeMap<String, Recorded> = BTreeMap::new();
    for r in records {
        let q = &r["request"];
        let url = q["url"].as_str().unwrap_or("/").to_string();
        let at_latest =
            q["headers"]["OpenStack-API-Version"].as_str() == Some("container-infra 1.14");
        if at_latest || !answers.contains_key(&url) {
            let status = r["response"]["status"].as_u64().unwrap_or(500) as u16;
            answers.insert(url, (status, r["response"]["body"].clone()));
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let mut agent = String::new();
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':')
                    && k.eq_ignore_ascii_case("user-agent")
                {
                    agent = v.trim().to_string();
                }
            }
            log.lock().expect("log").push((path.clone(), agent));
            let (status, body) = answers
                .get(&path)
                .cloned()
                .unwrap_or((404, Value::String("not recorded".into())));
            let body = body.to_string();
            let _ = write!(
                &stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

/// `openstack ARGS…` with `env` (the test's administrator).
fn openstack(cli: &Path, env: &[(String, String)], args: &[&str]) -> String {
    let out = Command::new(cli)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .expect("openstack");
    assert!(
        out.status.success(),
        "openstack {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn takeover_steps_of_the_operators_guide() {
    let (Some(server), Some(keystone), Some(admin_pass), Some(magnum_pass), Some(cli)) = (
        service_env("OKM_TEST_MYSQL_URL"),
        service_env("OPENKEEL_TEST_KEYSTONE_URL"),
        service_env("OPENKEEL_TEST_KEYSTONE_ADMIN_PASSWORD"),
        service_env("OPENKEEL_TEST_KEYSTONE_MAGNUM_PASSWORD"),
        service_env("OPENKEEL_TEST_OPENSTACK_CLI"),
    ) else {
        return;
    };
    let steps = guide_steps();
    assert_eq!(steps.len(), STEPS);
    let rt = runtime();
    let (Some(records), Some((db, mut conn))) = (load_records(), mariadb_samples(&rt, &server))
    else {
        return;
    };
    let before = snapshot(&rt, &mut conn, db.dialect, None);
    let names: Vec<String> = before.keys().cloned().collect();

    let dir = tempfile::tempdir().expect("tempdir");
    let work = dir.path();
    // The guide runs compare.py from the source tree.
    std::os::unix::fs::symlink(
        test_support::repo_root().join("deploy"),
        work.join("deploy"),
    )
    .expect("symlink deploy");
    // mysql and mysqldump read their credentials from ~/.my.cnf.
    let u = url::Url::parse(&server).expect("OKM_TEST_MYSQL_URL");
    std::fs::write(
        work.join(".my.cnf"),
        format!(
            "[client]\nuser = {}\npassword = {}\nhost = {}\nport = {}\n",
            u.username(),
            u.password().unwrap_or(""),
            u.host_str().unwrap_or("127.0.0.1"),
            u.port().unwrap_or(3306)
        ),
    )
    .expect("my.cnf");
    let magnum_conf = work.join("magnum.conf");
    std::fs::write(
        &magnum_conf,
        format!(
            "[DEFAULT]\nauth_strategy = keystone\n\n[database]\nconnection = {}\n\n\
             [keystone_authtoken]\nwww_authenticate_uri = {keystone}\nauth_url = {keystone}\nauth_type = password\n\
             username = magnum\npassword = {magnum_pass}\nproject_name = service\nuser_domain_name = Default\n\
             project_domain_name = Default\nhttp_connect_timeout = 60\n",
            db.sqlalchemy_url
        ),
    )
    .expect("magnum.conf");

    let (old_url, seen) = recorded_magnum(&records);
    let region = format!("okm-takeover-{}", &db.name[db.name.len() - 8..]);
    let cli = PathBuf::from(cli);
    let mut env: Vec<(String, String)> = [
        ("OS_AUTH_URL", keystone.as_str()),
        ("OS_USERNAME", "admin"),
        ("OS_PASSWORD", admin_pass.as_str()),
        ("OS_PROJECT_NAME", "admin"),
        ("OS_USER_DOMAIN_NAME", "Default"),
        ("OS_PROJECT_DOMAIN_NAME", "Default"),
        ("OS_IDENTITY_API_VERSION", "3"),
        ("OS_INTERFACE", "public"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    // The cloud before the takeover: Magnum's endpoints in the region.
    openstack(&cli, &env, &["region", "create", &region]);
    for interface in ["public", "internal"] {
        openstack(
            &cli,
            &env,
            &[
                "endpoint",
                "create",
                "--region",
                &region,
                "container-infra",
                interface,
                &format!("{old_url}/v1"),
            ],
        );
    }
    let cleanup = Cleanup {
        cli: cli.clone(),
        env: env.clone(),
        region: region.clone(),
    };
    env.push(("REGION".into(), region.clone()));

    let new_url = format!("http://127.0.0.1:{}", free_port());
    let copy_url = format!("http://127.0.0.1:{}", free_port());
    let copy_db = format!("{}_copy", db.name);
    let copy_connection = db.sqlalchemy_url.replace(&db.name, &copy_db);
    let mut script =
        String::from("set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n");
    for (i, step) in steps.iter().enumerate() {
        script.push_str(&format!(
            "echo \"=== step {} at $SECONDS s\"\n{step}",
            i + 1
        ));
    }
    script.push_str("echo \"=== done at $SECONDS s\"\n");
    let bin_dir = binary().parent().expect("binary dir").to_path_buf();
    let cli_dir = cli.parent().expect("cli dir").to_path_buf();
    let path = format!(
        "{}:{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default(),
        cli_dir.display()
    );
    let started = Instant::now();
    let mut child = crate::harness::hermetic(Path::new("bash"))
        .args(["-c", &script])
        .current_dir(work)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("HOME", work)
        .env("PATH", path)
        .env("MAGNUM_CONF", &magnum_conf)
        .env("MAGNUM_DB", &db.name)
        .env("COPY_DB", &copy_db)
        .env("COPY_CONNECTION", &copy_connection)
        .env("OLD_URL", &old_url)
        .env("NEW_URL", &new_url)
        .env("COPY_URL", &copy_url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash");
    let deadline = started + Duration::from_secs(300);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the takeover steps did not finish within 300 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = child.wait_with_output().expect("output");
    // Step 2 drops its copy; a failed step may leave it.
    let _ = conn.exec(&rt, &format!("DROP DATABASE IF EXISTS {copy_db}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        status.success(),
        "the takeover steps failed ({status}):\n{stdout}\n{stderr}"
    );
    for i in 1..=STEPS {
        assert!(
            stdout.contains(&format!("=== step {i} at")),
            "step {i} did not run:\n{stdout}"
        );
    }
    // Both comparisons ran, every request the same.
    assert_eq!(
        stdout
            .matches("GET /v1/clusters: same (200, 3 items)")
            .count(),
        2,
        "the comparisons of steps 2 and 4:\n{stdout}"
    );
    assert!(!stdout.contains("DIFFERENT"), "{stdout}");
    // After the switch, the catalog led the client to openkeel-magnum: the
    // recorded Magnum only ever saw compare.py.
    let seen = seen.lock().expect("log").clone();
    assert!(
        seen.iter()
            .all(|(_, agent)| agent.starts_with("Python-urllib")),
        "requests other than compare.py's reached the recorded Magnum: {seen:?}"
    );
    // Rolled back: the catalog names Magnum again.
    let urls = openstack(
        &cli,
        &env,
        &[
            "endpoint",
            "list",
            "--service",
            "container-infra",
            "--region",
            &region,
            "-f",
            "value",
            "-c",
            "URL",
        ],
    );
    let old_v1 = format!("{old_url}/v1");
    let urls: Vec<&str> = urls.lines().collect();
    assert_eq!(urls, [old_v1.as_str(); 2], "the catalog after the rollback");
    // Magnum's tables are as Magnum left them, but for the background work
    // the reconciler took over: the heartbeat it records in magnum_service
    // (as magnum-conductor does), and the statuses of the clusters that were
    // in progress (the sample's stale create is past its timeout).
    let mut after = without_our_indexes(snapshot(&rt, &mut conn, db.dialect, Some(&names)));
    let mut before = before;
    let service_rows = after.remove("magnum_service").expect("magnum_service").rows;
    before.remove("magnum_service");
    assert!(
        service_rows.iter().any(|r| r.contains("magnum-conductor")),
        "no heartbeat of the reconciler: {service_rows:?}"
    );
    let mut progressed = 0;
    for table in ["cluster", "nodegroup"] {
        let (b, a) = (
            before.remove(table).expect(table),
            after.remove(table).expect(table),
        );
        let by_id = |rows: &[String]| -> BTreeMap<String, String> {
            rows.iter()
                .map(|r| {
                    let id = r.split('|').find(|f| f.starts_with("id=")).unwrap_or(r);
                    (id.to_string(), r.clone())
                })
                .collect()
        };
        let (b, a) = (by_id(&b.rows), by_id(&a.rows));
        assert_eq!(
            b.keys().collect::<Vec<_>>(),
            a.keys().collect::<Vec<_>>(),
            "{table}: rows added or removed"
        );
        for (old, new) in b.values().zip(a.values()) {
            if old != new {
                assert!(
                    old.contains("_IN_PROGRESS\")"),
                    "{table}: a row not in progress changed:\n- {old}\n+ {new}"
                );
                assert_eq!(
                    without_status(old),
                    without_status(new),
                    "{table}: more than the status changed"
                );
                progressed += 1;
            }
        }
    }
    let changed = changed_tables(&before, &after);
    assert!(
        changed.is_empty(),
        "the takeover changed:\n{}",
        changed.join("\n")
    );
    println!(
        "takeover steps: {STEPS} steps in {:.1} s; {progressed} rows in progress given a status by the reconciler",
        started.elapsed().as_secs_f64()
    );
    drop(cleanup);
}

/// A snapshot row without the fields the status loop writes.
fn without_status(row: &str) -> String {
    row.split('|')
        .filter(|f| {
            ![
                "status=",
                "status_reason=",
                "updated_at=",
                "health_status=",
                "health_status_reason=",
            ]
            .iter()
            .any(|p| f.starts_with(p))
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// Removes the test's region and its endpoints from the shared Keystone.
struct Cleanup {
    cli: PathBuf,
    env: Vec<(String, String)>,
    region: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let list = Command::new(&self.cli)
            .args([
                "endpoint",
                "list",
                "--region",
                &self.region,
                "-f",
                "value",
                "-c",
                "ID",
            ])
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output();
        if let Ok(out) = list {
            for id in String::from_utf8_lossy(&out.stdout).lines() {
                let _ = Command::new(&self.cli)
                    .args(["endpoint", "delete", id])
                    .envs(self.env.iter().map(|(k, v)| (k, v)))
                    .output();
            }
        }
        let _ = Command::new(&self.cli)
            .args(["region", "delete", &self.region])
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output();
    }
}
