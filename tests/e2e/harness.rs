//! Starting the binary as an operator would, and talking to it over HTTP.
//!
//! The binary is `$OKM_BINARY` when set, else the one cargo built for this
//! test run. No test here links the service's code.

use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub fn binary() -> PathBuf {
    match std::env::var_os("OKM_BINARY") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_openkeel-magnum")),
    }
}

pub use test_support::{free_port, in_ci, need_env as service_env, spec_dir};

/// A configuration file naming one `[drivers] precompiled_cache_dir` for
/// every server of the test run, so the built-in driver components are
/// compiled by the first server only (the cache is keyed by the
/// component's hash and the engine's settings). Passed after the test's own
/// file; another implementation ignores the unknown option.
pub fn driver_cache_conf() -> &'static Path {
    static CONF: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CONF.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("okm-driver-cache");
        std::fs::create_dir_all(&dir).expect("driver cache dir");
        let conf = dir.join("drivers.conf");
        std::fs::write(
            &conf,
            format!("[drivers]\nprecompiled_cache_dir = {}\n", dir.display()),
        )
        .expect("driver cache conf");
        conf
    })
}

/// What a finished command printed.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// A command that cannot find a management cluster of the machine's own:
/// the binary infers one from `KUBECONFIG`, `~/.kube/config` or the
/// in-cluster account when `[capi]/kubeconfig` is empty, and a developer's
/// cluster must neither change a test's outcome nor be written to. Tests
/// that want a cluster name it in `[capi]/kubeconfig`.
pub fn hermetic(program: &Path) -> Command {
    let mut c = Command::new(program);
    c.env("KUBECONFIG", "/dev/null")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT");
    c
}

/// Runs `program args…` with a timeout.
pub fn run(program: &Path, args: &[&str], timeout: Duration) -> Output {
    let mut child = hermetic(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {}: {e}", program.display()));
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "{} {args:?} did not finish within {timeout:?}",
                program.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
        code: status.code().unwrap_or(-1),
    }
}

/// Runs the binary under test.
pub fn okm(args: &[&str]) -> Output {
    run(&binary(), args, Duration::from_secs(120))
}

/// Runs the binary under test with the configuration `conf_text` (and the
/// shared cache of compiled drivers).
pub fn okm_with_conf(conf_text: &str, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("magnum.conf");
    std::fs::write(&conf, conf_text).expect("write conf");
    let mut all: Vec<&str> = args.to_vec();
    let (conf, cache) = (
        conf.to_str().expect("utf-8 path").to_string(),
        driver_cache_conf()
            .to_str()
            .expect("utf-8 path")
            .to_string(),
    );
    all.extend(["--config-file", &conf, "--config-file", &cache]);
    okm(&all)
}

/// `db upgrade --config-file <conf>`, which must succeed.
pub fn db_upgrade(conf: &Path) {
    let o = okm(&[
        "db",
        "upgrade",
        "--config-file",
        conf.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(o.code, 0, "db upgrade:\n{}{}", o.stdout, o.stderr);
}

/// One running server process, stopped (SIGTERM, then kill) on drop.
pub struct Server {
    pub url: String,
    /// The working directory, removed with the server.
    _dir: tempfile::TempDir,
    child: Child,
    log: PathBuf,
    /// Released after the process stopped (fields drop after `drop`).
    _share: Share,
}

impl Server {
    /// Runs `openkeel-magnum <args…> --config-file <conf>` in a fresh
    /// directory, where conf holds `conf_text` plus the `[api]` host and
    /// port, and waits until `GET /` answers.
    pub fn start(conf_text: &str, args: &[&str]) -> Server {
        Server::start_with("", conf_text, args)
    }

    /// [`Server::start`] with further `[api]` options (`api_lines`, one
    /// `option = value` a line).
    pub fn start_with(api_lines: &str, conf_text: &str, args: &[&str]) -> Server {
        // A port taken by a process outside the suite between the probe and
        // the server's bind makes the server exit: start it again elsewhere.
        for _ in 0..4 {
            match Server::try_start(api_lines, conf_text, args) {
                Ok(s) => return s,
                Err(output) if output.to_lowercase().contains("address already in use") => {
                    eprintln!("port taken, starting again:\n{output}");
                }
                Err(output) => panic!("server exited:\n{output}"),
            }
        }
        panic!("no free port for the server after 4 attempts");
    }

    /// Runs `openkeel-magnum <args…> --config-file <conf>` (with the shared
    /// cache of compiled drivers) in a fresh directory, its output in a
    /// file there.
    fn spawn(conf_text: &str, args: &[&str]) -> Server {
        let share = Share::take();
        let dir = tempfile::tempdir().expect("tempdir");
        let conf = dir.path().join("magnum.conf");
        std::fs::write(&conf, conf_text).expect("write conf");
        let log = dir.path().join("output.log");
        let logfile = std::fs::File::create(&log).expect("log file");
        let child = hermetic(&binary())
            .args(args)
            .arg("--config-file")
            .arg(&conf)
            .arg("--config-file")
            .arg(driver_cache_conf())
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(logfile.try_clone().expect("log"))
            .stderr(logfile)
            .spawn()
            .expect("start the binary");
        Server {
            url: String::new(),
            _dir: dir,
            child,
            log,
            _share: share,
        }
    }

    /// Starts the server; `Err` with its output when it exits before it
    /// answers.
    fn try_start(api_lines: &str, conf_text: &str, args: &[&str]) -> Result<Server, String> {
        let port = free_port();
        let mut s = Server::spawn(
            &format!("[api]\nhost = 127.0.0.1\nport = {port}\n{api_lines}\n\n{conf_text}\n"),
            args,
        );
        s.url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = s.child.try_wait() {
                return Err(format!("exit {status}\n{}", s.output()));
            }
            if get(&format!("{}/", s.url), &[]).is_ok() {
                return Ok(s);
            }
            assert!(
                Instant::now() < deadline,
                "server did not start:\n{}",
                s.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs `openkeel-magnum <args…> --config-file <conf>` as a process
    /// that serves no API (`reconciler`), and waits until its output
    /// contains `ready`.
    pub fn start_process(conf_text: &str, args: &[&str], ready: &str) -> Server {
        let mut s = Server::spawn(conf_text, args);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !s.output().contains(ready) {
            if let Ok(Some(status)) = s.child.try_wait() {
                panic!("exit {status}\n{}", s.output());
            }
            assert!(
                Instant::now() < deadline,
                "the process did not say {ready:?}:\n{}",
                s.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }

    /// Kills the process at once (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// What the server printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// How many bytes the server has printed so far.
    pub fn output_len(&self) -> u64 {
        std::fs::metadata(&self.log).map_or(0, |m| m.len())
    }

    /// The server's resident set, in bytes (`VmRSS` of /proc).
    pub fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A graceful stop first: std has no signal API, the kill command
        // sends SIGTERM.
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                if std::thread::panicking() {
                    eprintln!("server output:\n{}", self.output());
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// An error with its causes, `outer: inner: …` (reqwest's own text names
/// only the request).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// `GET url` with headers.
pub fn get(url: &str, headers: &[(&str, &str)]) -> reqwest::Result<Answer> {
    request("GET", url, headers, None)
}

/// The `/metrics` exposition of the listener on `port`, as text.
pub fn metrics_text(port: u16) -> String {
    let a = get(&format!("http://127.0.0.1:{port}/metrics"), &[]).expect("GET /metrics");
    String::from_utf8_lossy(&a.body).into_owned()
}

/// The value of the series `name` (with its labels, as the exposition
/// writes them) in `text`, if it is there.
pub fn metric_value(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// Any request.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> reqwest::Result<Answer> {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = client().request(method, url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let resp = req.send()?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.bytes()?.to_vec();
    Ok(Answer {
        status,
        headers,
        body,
    })
}

/// `openstack --os-auth-type none --os-endpoint <url>/v1 coe <args…>`, the
/// real client against a server of the suite.
pub struct Coe {
    pub cli: String,
    pub endpoint: String,
}

impl Coe {
    /// Runs the command with `SHELL=/bin/bash` (python-magnumclient's
    /// `cluster config` reads `$SHELL` to choose the export syntax, and
    /// fails when it is unset, as under CI).
    pub fn run(&self, args: &[&str]) -> Output {
        let mut full = vec![
            "SHELL=/bin/bash",
            self.cli.as_str(),
            "--os-auth-type",
            "none",
            "--os-endpoint",
            &self.endpoint,
            "coe",
        ];
        full.extend_from_slice(args);
        run(Path::new("env"), &full, Duration::from_secs(120))
    }

    /// [`Coe::run`], which must succeed; its standard output.
    pub fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert_eq!(o.code, 0, "openstack coe {}: {o:?}", args.join(" "));
        o.stdout
    }

    /// The cluster as `cluster show` prints it, or `None` once it is gone.
    pub fn cluster(&self, name: &str) -> Option<serde_json::Value> {
        let o = self.run(&["cluster", "show", name, "-f", "json"]);
        if o.code != 0 {
            assert!(
                o.stderr.contains("could not be found"),
                "cluster show {name}: {o:?}"
            );
            return None;
        }
        Some(serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {o:?}")))
    }

    /// The cluster's status; the cluster must exist.
    pub fn status(&self, name: &str) -> String {
        let c = self
            .cluster(name)
            .unwrap_or_else(|| panic!("cluster {name} not found"));
        c["status"].as_str().unwrap_or_default().to_owned()
    }
}

/// The API as one project's member.
pub struct ProjectApi<'a> {
    pub url: &'a str,
    pub project: &'a str,
}

impl ProjectApi<'_> {
    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> Answer {
        let user = format!("u-{}", self.project);
        let headers = [
            ("X-Project-Id", self.project),
            ("X-User-Id", user.as_str()),
            ("X-Roles", "member,reader"),
            ("Content-Type", "application/json"),
            ("OpenStack-API-Version", "container-infra latest"),
        ];
        let body = body.map(|b| b.to_string());
        request(
            method,
            &format!("{}{path}", self.url),
            &headers,
            body.as_deref(),
        )
        .unwrap_or_else(|e| panic!("{method} {path}: {}", error_chain(&e)))
    }

    pub fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let a = self.call(method, path, body);
        assert!(
            (200..300).contains(&a.status),
            "{method} {path}: {} {}",
            a.status,
            String::from_utf8_lossy(&a.body)
        );
        if a.body.is_empty() {
            Value::Null
        } else {
            a.json()
        }
    }

    pub fn template(&self, name: &str, driver: &str) -> String {
        let t = self.ok(
            "POST",
            "/v1/clustertemplates",
            Some(json!({
                "name": name,
                "coe": "kubernetes",
                "image_id": "ubuntu-jammy-kube",
                "external_network_id": "public",
                "flavor_id": "m1.small",
                "master_flavor_id": "m1.medium",
                "driver": driver,
            })),
        );
        t["uuid"].as_str().expect("template uuid").to_string()
    }

    pub fn create(&self, name: &str, template: &str, labels: Value) -> Answer {
        self.call(
            "POST",
            "/v1/clusters",
            Some(json!({
                "name": name,
                "cluster_template_id": template,
                "node_count": 1,
                "master_count": 1,
                "labels": labels,
            })),
        )
    }

    /// Waits until the cluster's certificates exist: its create job has
    /// generated its keys (the legitimate cost of a create, which the
    /// bystander must not be measured against) and calls the driver next.
    pub fn wait_keys(&self, ident: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self
            .call("GET", &format!("/v1/certificates/{ident}"), None)
            .status
            != 200
        {
            assert!(Instant::now() < deadline, "no certificates for {ident}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn cluster(&self, ident: &str) -> Option<Value> {
        let a = self.call("GET", &format!("/v1/clusters/{ident}"), None);
        (a.status == 200).then(|| a.json())
    }

    /// Waits for the cluster to reach a status for which `done` holds;
    /// the cluster as it then is.
    pub fn wait(&self, ident: &str, limit: Duration, done: impl Fn(&str) -> bool) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let c = self
                .cluster(ident)
                .unwrap_or_else(|| panic!("cluster {ident} vanished"));
            let status = c["status"].as_str().unwrap_or_default().to_string();
            if done(&status) {
                return c;
            }
            assert!(
                Instant::now() < deadline,
                "cluster {ident} still {status} after {limit:?}: {c}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Who runs servers now: the number of servers of each test thread, and
/// whether a test that measures latency has the machine to itself.
#[derive(Default)]
struct Gate {
    shares: std::collections::HashMap<std::thread::ThreadId, usize>,
    waiting: usize,
    alone: Option<std::thread::ThreadId>,
}

static GATE: std::sync::Mutex<Option<Gate>> = std::sync::Mutex::new(None);
static GATE_CHANGED: std::sync::Condvar = std::sync::Condvar::new();

fn gate() -> std::sync::MutexGuard<'static, Option<Gate>> {
    GATE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn wait_gate(
    g: std::sync::MutexGuard<'static, Option<Gate>>,
) -> std::sync::MutexGuard<'static, Option<Gate>> {
    GATE_CHANGED
        .wait(g)
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One running server of a test thread. A thread that runs no server yet
/// waits while a measuring test waits for, or has, the machine; one that
/// already runs servers may start more (it could not finish otherwise).
struct Share(std::thread::ThreadId);

impl Share {
    fn take() -> Share {
        let me = std::thread::current().id();
        let mut g = gate();
        loop {
            let s = g.get_or_insert_with(Gate::default);
            let mine = s.shares.get(&me).copied().unwrap_or(0);
            let free = match s.alone {
                Some(t) => t == me,
                None => s.waiting == 0 || mine > 0,
            };
            if free {
                *s.shares.entry(me).or_default() += 1;
                return Share(me);
            }
            g = wait_gate(g);
        }
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut g = gate();
        if let Some(s) = g.as_mut()
            && let Some(n) = s.shares.get_mut(&self.0)
        {
            *n -= 1;
            if *n == 0 {
                s.shares.remove(&self.0);
            }
        }
        GATE_CHANGED.notify_all();
    }
}

/// The machine to this test alone until the guard drops: waits until no
/// other test thread runs a server (its own may keep running), and holds
/// new ones back. For what measures latency on a two-core machine, where
/// another test's start (compiling its components) costs seconds.
pub struct Alone(());

pub fn alone() -> Alone {
    let me = std::thread::current().id();
    let mut g = gate();
    g.get_or_insert_with(Gate::default).waiting += 1;
    loop {
        let s = g.get_or_insert_with(Gate::default);
        if s.alone.is_none() && s.shares.keys().all(|t| *t == me) {
            s.waiting -= 1;
            s.alone = Some(me);
            return Alone(());
        }
        g = wait_gate(g);
    }
}

impl Drop for Alone {
    fn drop(&mut self) {
        if let Some(s) = gate().as_mut() {
            s.alone = None;
        }
        GATE_CHANGED.notify_all();
    }
}
