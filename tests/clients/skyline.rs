//! Skyline, the OpenStack dashboard, in a real browser: its Container Infra
//! pages against the binary under test, clicked through as a user does.
//!
//! Brought up on 127.0.0.1 beside the stack of [`Stack::start`] (Keystone,
//! `api` + `reconciler` with the fake driver, the OpenStack double):
//! skyline-apiserver under gunicorn on a Unix socket, with its own SQLite
//! database migrated by its alembic scripts; nginx with the configuration
//! Skyline's `skyline-nginx-generator` writes from the Keystone catalog
//! (serving the skyline-console bundle and proxying each catalog endpoint
//! under `/api/openstack/<region>/<service>/`), with only its file paths moved
//! into the suite's directory; and headless Chromium (Debian) driven by
//! Playwright for Python through `tests/clients/skyline/journey.py`, which
//! clicks the journey, checks what each page shows and what the service
//! stored, and saves a screenshot of each page.
//!
//! Needs `OKM_SKYLINE_PYTHON`, `OKM_NGINX` and `OKM_CHROMIUM`
//! (`scripts/ci/skyline.sh`) besides Keystone. Screenshots go to
//! `$CARGO_TARGET_TMPDIR/skyline-journey/<journey>/`; `OKM_SKYLINE_KEEP=<seconds>`
//! keeps everything up that long after each journey, with the dashboard's
//! address printed, to look around by hand; `OKM_SKYLINE_ONLY=full` or
//! `resize-allowed` runs one journey (ignored in CI).

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{
    REGION, Stack, StackOptions, Suite, exclusive, free_port, keystone, need_env, run_command,
    selected, tail,
};

/// The user who clicks through the dashboard (member of project `demo`).
const USER: &str = "demo";

/// The image the journey's template uses.
const IMAGE_ID: &str = "6c1f3b0e-8d4a-4f5e-9a7b-2c3d4e5f6a70";
const IMAGE_NAME: &str = "fedora-coreos-40";

/// How long the journey may take in all.
const JOURNEY_TIMEOUT: Duration = Duration::from_secs(600);

/// The two journeys: the whole one on a service configured as Magnum is,
/// then Resize again with `[api]/unversioned_at_route_minimum` on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Journey {
    Full,
    ResizeAllowed,
}

impl Journey {
    /// The value of `SKYLINE_JOURNEY` for journey.py.
    fn name(self) -> &'static str {
        match self {
            Journey::Full => "full",
            Journey::ResizeAllowed => "resize-allowed",
        }
    }
}

/// The names journey.py expects the suite to have created for
/// [`Journey::ResizeAllowed`].
const PREPARED_TEMPLATE: &str = "tpl-skyline";
const PREPARED_CLUSTER: &str = "cl-skyline";

#[test]
fn skyline_console() {
    if !selected() {
        return;
    }
    let (Some(python), Some(nginx), Some(chromium)) = (
        need_env("OKM_SKYLINE_PYTHON"),
        need_env("OKM_NGINX"),
        need_env("OKM_CHROMIUM"),
    ) else {
        return;
    };
    let _one = exclusive();
    let tools = Tools {
        python: PathBuf::from(python),
        nginx: PathBuf::from(nginx),
        chromium,
    };
    let mut note = String::new();
    // OKM_SKYLINE_ONLY=<name> runs one journey (while developing; not in CI).
    let only = std::env::var("OKM_SKYLINE_ONLY")
        .ok()
        .filter(|o| !o.is_empty() && !crate::harness::in_ci());
    for journey in [Journey::Full, Journey::ResizeAllowed] {
        if only.as_deref().is_some_and(|o| o != journey.name()) {
            continue;
        }
        if !run(&tools, journey, &mut note) {
            return;
        }
    }
}

/// What the suite runs besides the binary.
struct Tools {
    python: PathBuf,
    nginx: PathBuf,
    chromium: String,
}

/// One journey on a stack of its own; its checks are counted in the suite's
/// report row and `note` gathers the times. `false` when Keystone is
/// missing outside CI.
fn run(tools: &Tools, journey: Journey, note: &mut String) -> bool {
    let Some(keystone) = keystone() else {
        return false;
    };
    let started = Instant::now();
    // The console offers a Kubernetes template only the images of the
    // user's own project whose os_distro is fedora or coreos.
    let Some(owner) = keystone.1.projects.get("demo").cloned() else {
        panic!("Keystone has no project demo (scripts/ci/keystone.sh creates it)");
    };
    let opts = StackOptions {
        images: vec![json!({
            "id": IMAGE_ID, "name": IMAGE_NAME, "os_distro": "fedora",
            "visibility": "private", "owner": owner,
        })],
        conf: match journey {
            Journey::Full => String::new(),
            Journey::ResizeAllowed => "[api]\nunversioned_at_route_minimum = true\n".to_owned(),
        },
        ..StackOptions::default()
    };
    let s = Stack::start_with(keystone, &opts);
    let mut suite = Suite::new("TestSkylineConsole", Some(&s));
    let mut groups = Vec::new();
    let prepared = match journey {
        Journey::Full => Ok(()),
        Journey::ResizeAllowed => prepare_cluster(&s),
    };
    match prepared.and_then(|()| bring_up(&s, &tools.python, &tools.nginx, &mut groups)) {
        Ok(dashboard) => {
            let up = started.elapsed();
            let browser = Instant::now();
            if let Err(e) = run_journey(&s, tools, journey, &dashboard, &mut suite) {
                suite.fail(e);
            }
            let times = format!(
                "{}: bring-up {:.1} s, browser {:.1} s",
                journey.name(),
                up.as_secs_f64(),
                browser.elapsed().as_secs_f64()
            );
            eprintln!(
                "Skyline journey {times} (total {:.1} s)",
                started.elapsed().as_secs_f64()
            );
            if !note.is_empty() {
                note.push_str("; ");
            }
            note.push_str(&times);
            suite.note(note.clone());
            keep(&dashboard);
        }
        Err(e) => suite.fail(e),
    }
    // Every process the suite started is gone once stopped: the groups are
    // empty (the browser and the servers' workers included).
    for g in groups.iter_mut().rev() {
        g.stop();
    }
    for g in &groups {
        if g.alive() || g.killed {
            suite.fail(format!(
                "{} did not stop on SIGTERM (group {})",
                g.name, g.pgid
            ));
        }
    }
    suite.finish();
    true
}

/// The template and the built cluster the resize journey starts from,
/// created through the API as the demo user (what the full journey's
/// wizards create).
fn prepare_cluster(s: &Stack) -> Result<(), String> {
    let token = s.token(USER, "demo");
    let (code, t) = s.api(
        &token,
        "POST",
        "/v1/clustertemplates",
        "",
        Some(&json!({
            "name": PREPARED_TEMPLATE, "coe": "kubernetes", "image_id": IMAGE_ID,
            "external_network_id": crate::harness::EXT_NET_ID, "flavor_id": "1",
            "master_flavor_id": "2", "network_driver": "flannel",
        })),
    )?;
    if code != 201 {
        return Err(format!("create the template: HTTP {code}: {t}"));
    }
    let (code, c) = s.api(
        &token,
        "POST",
        "/v1/clusters",
        "",
        Some(&json!({
            "name": PREPARED_CLUSTER, "cluster_template_id": t["uuid"], "keypair": "kp1",
            "master_count": 1, "node_count": 2,
        })),
    )?;
    if code != 202 {
        return Err(format!("create the cluster: HTTP {code}: {c}"));
    }
    let uuid = c["uuid"].as_str().unwrap_or_default().to_owned();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, c) = s.api(&token, "GET", &format!("/v1/clusters/{uuid}"), "", None)?;
        match c["status"].as_str() {
            Some("CREATE_COMPLETE") => break,
            Some(st) if st.ends_with("_FAILED") => return Err(format!("the cluster is {st}")),
            st if Instant::now() > deadline => {
                return Err(format!("the cluster is still {st:?} after 120 s"));
            }
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    }
    Ok(())
}

/// With `OKM_SKYLINE_KEEP=<seconds>`, waits that long with everything up.
fn keep(dashboard: &str) {
    let secs: u64 = std::env::var("OKM_SKYLINE_KEEP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if secs > 0 {
        eprintln!("Skyline stays up at {dashboard} for {secs} s (OKM_SKYLINE_KEEP)");
        std::thread::sleep(Duration::from_secs(secs));
    }
}

/// A server the suite started, in a process group of its own so that its
/// workers stop with it; stopped (SIGTERM, then SIGKILL after 10 s) on drop.
struct Group {
    name: &'static str,
    pgid: u32,
    child: Child,
    /// Whether it had to be killed (it did not stop within 10 s).
    killed: bool,
}

impl Group {
    fn spawn(name: &'static str, cmd: &mut Command) -> Result<Group, String> {
        let child = cmd
            .process_group(0)
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("start {name}: {e}"))?;
        Ok(Group {
            name,
            pgid: child.id(),
            child,
            killed: false,
        })
    }

    fn signal(&self, sig: &str) {
        let _ = Command::new("kill")
            .args([sig, "--", &format!("-{}", self.pgid)])
            .stderr(Stdio::null())
            .status();
    }

    /// Whether a process of the group is still running.
    fn alive(&self) -> bool {
        Command::new("kill")
            .args(["-0", "--", &format!("-{}", self.pgid)])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn stop(&mut self) {
        self.signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let _ = self.child.try_wait();
            if !self.alive() {
                return;
            }
            if Instant::now() > deadline {
                eprintln!("{} did not stop within 10 s: killed", self.name);
                self.killed = true;
                self.signal("-KILL");
                let _ = self.child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.alive() {
            self.stop();
        }
    }
}

/// Starts skyline-apiserver and nginx; returns the dashboard's address.
fn bring_up(
    s: &Stack,
    python: &Path,
    nginx: &Path,
    groups: &mut Vec<Group>,
) -> Result<String, String> {
    let id = s.identity();
    let dir = s.dir.path().join("skyline");
    std::fs::create_dir_all(dir.join("policy")).map_err(|e| format!("{}: {e}", dir.display()))?;
    let bin = python.parent().unwrap_or(Path::new("."));
    // skyline.yaml: the service's own database, logs and policy in the
    // suite's directory; the system user (which lists the catalog for the
    // nginx generator) is Keystone's admin; the default region is the one
    // the stack publishes; plain HTTP.
    let yaml = format!(
        "default:\n  debug: true\n  log_dir: {d}\n  log_file: skyline.log\n  \
         access_log_file: nginx-access.log\n  error_log_file: nginx-error.log\n  \
         database_url: sqlite:///{d}/skyline.db\n  ssl_enabled: false\n  \
         policy_file_path: {d}/policy\n\
         openstack:\n  keystone_url: {ks}\n  default_region: {REGION}\n  \
         interface_type: public\n  system_user_name: admin\n  system_user_password: {pw}\n  \
         system_project: admin\n  system_user_domain: Default\n  system_project_domain: Default\n  \
         user_default_domain: Default\n",
        d = dir.display(),
        ks = id.url.trim_end_matches('/'),
        pw = id.password("admin"),
    );
    std::fs::write(dir.join("skyline.yaml"), yaml).map_err(|e| format!("skyline.yaml: {e}"))?;
    let skyline_cmd = |program: &Path| {
        let mut cmd = Command::new(program);
        cmd.current_dir(&dir)
            .env("OS_CONFIG_DIR", &dir)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("LANG", "C.UTF-8");
        cmd
    };

    // The database, by Skyline's own migrations.
    let package = run_command(
        skyline_cmd(python).args([
            "-c",
            "import os, skyline_apiserver; print(os.path.dirname(skyline_apiserver.__file__))",
        ]),
        Duration::from_secs(60),
    )?;
    let ini = PathBuf::from(package.stdout.trim()).join("db/alembic/alembic.ini");
    let migrate = run_command(
        skyline_cmd(python)
            .args(["-m", "alembic", "-c"])
            .arg(&ini)
            .args(["upgrade", "head"]),
        Duration::from_secs(120),
    )?;
    if migrate.code != 0 {
        return Err(format!(
            "skyline-apiserver's migrations: exit {}\n{}",
            migrate.code,
            tail(&migrate.stderr, 4000)
        ));
    }

    // The API server, as Skyline's packaging runs it: gunicorn with
    // uvicorn's worker on a Unix socket.
    let socket = dir.join("skyline.sock");
    let log = std::fs::File::create(dir.join("gunicorn.log"))
        .map_err(|e| format!("gunicorn.log: {e}"))?;
    groups.push(Group::spawn(
        "skyline-apiserver",
        skyline_cmd(&bin.join("gunicorn"))
            .args([
                "--workers",
                "1",
                "--worker-class",
                "uvicorn.workers.UvicornWorker",
                "--timeout",
                "300",
                "--bind",
            ])
            .arg(format!("unix:{}", socket.display()))
            .arg("skyline_apiserver.main:app")
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log),
    )?);

    // nginx, configured by Skyline's generator from the catalog (read
    // again while the service's entry is not in it yet).
    let port = free_port();
    let conf = dir.join("nginx.conf");
    let magnum_location = format!("location /api/openstack/{REGION}/magnum/ ");
    let mut attempts = 0;
    let generated = loop {
        attempts += 1;
        let generate = run_command(
            skyline_cmd(&bin.join("skyline-nginx-generator"))
                .arg("--output-file")
                .arg(&conf)
                .args(["--listen-address", &format!("127.0.0.1:{port}")])
                .arg("--log-dir")
                .arg(&dir),
            Duration::from_secs(120),
        )?;
        if generate.code != 0 {
            return Err(format!(
                "skyline-nginx-generator: exit {}\n{}{}",
                generate.code,
                generate.stdout,
                tail(&generate.stderr, 4000)
            ));
        }
        let generated = std::fs::read_to_string(&conf).map_err(|e| format!("nginx.conf: {e}"))?;
        if generated.contains(&magnum_location) {
            break generated;
        }
        if attempts == 5 {
            return Err(format!(
                "the generated nginx.conf has no `{magnum_location}` after {attempts} attempts:\n{generated}"
            ));
        }
        eprintln!("the catalog has no {REGION} container-infra entry yet: generating again");
        std::thread::sleep(Duration::from_secs(1));
    };
    std::fs::write(&conf, relocate(&generated, &dir, &socket))
        .map_err(|e| format!("nginx.conf: {e}"))?;
    groups.push(Group::spawn(
        "nginx",
        Command::new(nginx)
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(dir.join("nginx-error.log"))
            .args(["-g", "daemon off;"]),
    )?);

    let dashboard = format!("http://127.0.0.1:{port}");
    wait_ready(&dashboard, groups)?;
    Ok(dashboard)
}

/// The generated configuration with its fixed paths (pid file, the API
/// server's socket) in `dir`, and its temporary files there too, so that the
/// suite writes nothing outside its directory; nothing else changes.
fn relocate(conf: &str, dir: &Path, socket: &Path) -> String {
    let temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
        .map(|t| format!("    {t}_temp_path {}/nginx-{t};\n", dir.display()))
        .concat();
    conf.replace(
        "pid /run/nginx.pid;",
        &format!("pid {}/nginx.pid;", dir.display()),
    )
    .replace(
        "server unix:/var/lib/skyline/skyline.sock",
        &format!("server unix:{}", socket.display()),
    )
    .replacen("http {\n", &format!("http {{\n{temp}"), 1)
}

/// Waits until nginx serves the console and skyline-apiserver answers
/// through it.
fn wait_ready(dashboard: &str, groups: &mut [Group]) -> Result<(), String> {
    let http = crate::harness::blocking_client(Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let console = http.get(format!("{dashboard}/")).send();
        let api = http
            .get(format!(
                "{dashboard}/api/openstack/skyline/api/v1/contrib/regions"
            ))
            .send();
        match (console, api) {
            (Ok(c), Ok(a)) if c.status() == 200 && a.status() == 200 => return Ok(()),
            (c, a) => {
                let last = format!(
                    "console: {:?}, regions: {:?}",
                    c.map(|r| r.status()),
                    a.map(|r| r.status())
                );
                if Instant::now() > deadline {
                    return Err(format!("Skyline did not answer within 90 s ({last})"));
                }
            }
        }
        for g in groups.iter_mut() {
            if let Ok(Some(status)) = g.child.try_wait() {
                return Err(format!("{} exited with {status}", g.name));
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs the journey; each step it reports becomes a check of the suite.
fn run_journey(
    s: &Stack,
    tools: &Tools,
    journey: Journey,
    dashboard: &str,
    suite: &mut Suite<'_>,
) -> Result<(), String> {
    let id = s.identity();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("skyline-journey")
        .join(journey.name());
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).map_err(|e| format!("{}: {e}", shots.display()))?;
    let script = crate::harness::repo_root().join("tests/clients/skyline/journey.py");
    let mark = s.rec.mark();
    let mut cmd = Command::new(&tools.python);
    cmd.arg(&script)
        .env_clear()
        .env("SKYLINE_JOURNEY", journey.name())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .env("HOME", s.dir.path())
        .env("SKYLINE_URL", dashboard)
        .env("SKYLINE_REGION", REGION)
        .env("SKYLINE_USER", USER)
        .env("SKYLINE_PASSWORD", id.password(USER))
        .env("SKYLINE_PROJECT", "demo")
        .env("KEYSTONE_URL", &id.url)
        .env("MAGNUM_URL", &s.endpoint)
        .env("CHROMIUM", &tools.chromium)
        .env("SCREENSHOTS", &shots)
        .env("SKYLINE_IMAGE_ID", IMAGE_ID)
        .env("SKYLINE_EXT_NET_ID", crate::harness::EXT_NET_ID)
        .env("SKYLINE_FIXED_NET_ID", crate::harness::FIXED_NET_ID)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut journey = Group::spawn("the journey (Playwright and Chromium)", &mut cmd)?;
    let stdout = journey.child.stdout.take().ok_or("the journey's stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + JOURNEY_TIMEOUT;
    let mut steps = 0;
    let mut planned = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(n) = line.strip_prefix("PLAN ") {
                    planned = n.trim().parse::<usize>().ok();
                    continue;
                }
                let Some(json) = line.strip_prefix("STEP ") else {
                    eprintln!("journey: {line}");
                    continue;
                };
                steps += 1;
                let step: Value = serde_json::from_str(json)
                    .map_err(|e| format!("the journey printed {json:?}: {e}"))?;
                record(suite, &step);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                journey.stop();
                return Err(format!(
                    "the journey did not finish within {JOURNEY_TIMEOUT:?}"
                ));
            }
        }
    }
    let status = journey
        .child
        .wait()
        .map_err(|e| format!("wait for the journey: {e}"))?;
    // The browser and Playwright's driver are in the journey's group: once
    // the journey has ended, none of them may be left.
    journey.stop();
    if journey.alive() || journey.killed {
        return Err(format!(
            "the journey's processes (group {}) did not end with it",
            journey.pgid
        ));
    }
    if !status.success() || Some(steps) != planned {
        eprintln!(
            "HTTP exchanges with the service during the journey:\n{}",
            tail(&s.rec.since(mark), 30000)
        );
        let planned = planned.map_or("?".to_owned(), |n| n.to_string());
        return Err(format!(
            "the journey exited with {status} after {steps} of {planned} steps"
        ));
    }
    Ok(())
}

/// One step the journey reported: `{"page", "action", "expected", "ok",
/// "errors", "screenshot"}`.
fn record(suite: &mut Suite<'_>, step: &Value) {
    let text = |k: &str| step[k].as_str().unwrap_or_default().to_owned();
    let name = format!("{}: {}", text("page"), text("action"));
    if !text("screenshot").is_empty() {
        eprintln!("screenshot of {name}: {}", text("screenshot"));
    }
    suite.step(&name, |c| {
        if step["ok"] != Value::Bool(true) {
            c.error(format!("expected: {}", text("expected")));
            for e in step["errors"].as_array().into_iter().flatten() {
                c.error(e.as_str().unwrap_or_default());
            }
            c.error(format!("screenshot kept: {}", text("screenshot")));
        }
    });
}
