//! The stack the client suites run against, the checks they count, and the
//! report of those counts.
//!
//! The binary is `$OKM_CLIENTS_BINARY` (a path, or `cargo` for the one
//! cargo built for this test run; unset, every suite skips); the OpenStack
//! double is `$OKM_OSFAKE` when set, else the `okm-osfake` binary cargo
//! builds on first use. No code of the service is linked.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use openkeel_magnum_osfake::keystone::{Identity, PublishedCatalog};
use serde_json::{Value, json};

use crate::proxy::{Front, Recorder, StackInfo, start_control};

/// The Keystone region whose catalog entries point at the stack under test;
/// the entries of RegionOne (keystone.sh) are left untouched.
pub const REGION: &str = "okm-clients";

// Names seeded into the OpenStack double.
pub const IMAGE_ID: &str = "3f0c1c52-6a8e-4a0a-9a55-1d1f0b6f7a01";
pub const IMAGE_NAME: &str = "ubuntu-2204-kube";
pub const FLAVOR_SMALL: &str = "m1.small";
pub const FLAVOR_MEDIUM: &str = "m1.medium";
pub const KEYPAIR: &str = "kp1";
pub const EXT_NET_NAME: &str = "public";
pub const EXT_NET_ID: &str = "5e1d0c1f-2a36-4ad5-8f8e-0b5d6f3f2a10";
pub const FIXED_NET_ID: &str = "9a7c1c3e-51b3-4f6c-9d0e-3c2b1a0f9e21";
pub const FIXED_NET_NAME: &str = "private";
pub const SUBNET_ID: &str = "0c4e2b7a-7f3d-4a1b-8c6d-5e4f3a2b1c09";
const KEYPAIR_PUBLIC_KEY: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOkm okm@test";

/// The suites, by the name of the Go test they come from, with the name the
/// report gives them, in the report's order.
pub const SUITES: [(&str, &str); 13] = [
    (
        "TestOpenStackCoe",
        "openstack coe matrix (Keystone tokens and catalog)",
    ),
    (
        "TestOpenStackCoeWithoutKeystone",
        "openstack coe without Keystone (none, admin_token)",
    ),
    (
        "TestGophercloudAcceptance",
        "gophercloud upstream acceptance tests",
    ),
    (
        "TestGophercloudClusters",
        "gophercloud containerinfra checks",
    ),
    ("TestTempestPlugin", "magnum-tempest-plugin API tests"),
    (
        "TestOpenStackSDKFunctional",
        "openstacksdk functional tests",
    ),
    ("TestAutoHealer", "magnum-auto-healer OpenStack provider"),
    (
        "TestAutoscalerSequence",
        "cluster-autoscaler Magnum provider sequence",
    ),
    (
        "TestSkylineConsole",
        "Skyline dashboard's Container Infra pages (Chromium)",
    ),
    (
        "TestClusterAPILifecycle",
        "Cluster API driver lifecycle (openstack coe, Keystone, simulated CAPI)",
    ),
    (
        "TestClusterAPIAdoption",
        "Cluster API driver adopting magnum-cluster-api clusters",
    ),
    (
        "TestClusterAPIIdle",
        "Cluster API driver: idle clusters cost the API server nothing",
    ),
    (
        "TestFaults",
        "Fault suite (faults injected under load, one at a time)",
    ),
];

/// The report name of suite `key`.
pub fn suite_name(key: &str) -> String {
    SUITES
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, n)| (*n).to_owned())
        .unwrap_or_else(|| key.to_owned())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ------------------------------------------------------------ environment

pub use test_support::{free_port, in_ci, need_env};

/// The variable naming the binary under test: a path, or `cargo` for the
/// `openkeel-magnum` cargo built for this test run.
pub const BINARY_VAR: &str = "OKM_CLIENTS_BINARY";

/// Whether a binary was chosen. Unlike the services (see [`need_env`]), an
/// unset [`BINARY_VAR`] skips the suites even when `CI=true`: they prove a
/// binary that serves the whole API, which is chosen explicitly.
pub fn selected() -> bool {
    let set = std::env::var_os(BINARY_VAR).is_some_and(|v| !v.is_empty());
    if !set {
        eprintln!(
            "skipped: {BINARY_VAR} is not set (a path, or `cargo` for the binary cargo built)"
        );
    }
    set
}

/// The binary under test (see [`BINARY_VAR`]).
pub fn binary() -> PathBuf {
    match std::env::var_os(BINARY_VAR) {
        Some(p) if p != "cargo" && !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_openkeel-magnum")),
    }
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    test_support::repo_root()
}

/// The `okm-osfake` binary: `$OKM_OSFAKE`, else the one `cargo build`
/// produces (once per process).
pub fn osfake_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("OKM_OSFAKE").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args([
                "build",
                "-p",
                "openkeel-magnum-osfake",
                "--bin",
                "okm-osfake",
                "--message-format=json",
            ])
            .current_dir(repo_root());
            let out = run_command(&mut cmd, Duration::from_secs(900))?;
            if out.code != 0 {
                return Err(format!(
                    "cargo build okm-osfake: exit {}\n{}",
                    out.code,
                    tail(&out.stderr, 4000)
                ));
            }
            out.stdout
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "okm-osfake")
                .and_then(|m| m["executable"].as_str().map(PathBuf::from))
                .ok_or_else(|| "cargo build named no okm-osfake executable".to_owned())
        })
        .clone()
}

/// Makes the suites run one at a time: they share the `okm-clients` region
/// of the one Keystone.
pub fn exclusive() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    lock(&ONE)
}

/// The last `n` bytes of `s` (at a character boundary).
pub fn tail(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_owned();
    }
    let mut start = s.len() - n;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &s[start..])
}

// --------------------------------------------------------------- commands

/// What a finished command printed.
#[derive(Debug, Default)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
}

/// Runs `cmd` (stdin closed) and collects its output; kills it after
/// `timeout`.
pub fn run_command(cmd: &mut Command, timeout: Duration) -> Result<Output, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("run {:?}: {e}", cmd.get_program()))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("wait for {:?}: {e}", cmd.get_program())),
        }
    };
    let output = Output {
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        code: status.and_then(|s| s.code()).unwrap_or(-1),
    };
    match status {
        Some(_) => Ok(output),
        None => Err(format!(
            "{:?} did not finish within {timeout:?}\nstdout:\n{}\nstderr:\n{}",
            cmd.get_program(),
            tail(&output.stdout, 8000),
            tail(&output.stderr, 8000)
        )),
    }
}

// ----------------------------------------------------------------- report

struct Row {
    name: String,
    run: usize,
    passed: usize,
    note: String,
}

static REPORT: Mutex<Vec<Row>> = Mutex::new(Vec::new());

/// Adds `run` checks of the suite named `name`, `passed` of them passing,
/// and rewrites `$OKM_CLIENT_REPORT` (one `name\trun\tpassed\tnote` line per
/// suite, in the order of [`SUITES`]) when it is set.
pub fn report(name: &str, run: usize, passed: usize, note: &str) {
    let mut rows = lock(&REPORT);
    match rows.iter_mut().find(|r| r.name == name) {
        Some(r) => {
            r.run += run;
            r.passed += passed;
            if !note.is_empty() {
                r.note = note.to_owned();
            }
        }
        None => rows.push(Row {
            name: name.to_owned(),
            run,
            passed,
            note: note.to_owned(),
        }),
    }
    let Some(path) = std::env::var_os("OKM_CLIENT_REPORT").filter(|p| !p.is_empty()) else {
        return;
    };
    let order = |name: &str| {
        SUITES
            .iter()
            .position(|(_, n)| *n == name)
            .unwrap_or(SUITES.len())
    };
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by_key(|r| order(&r.name));
    let mut text = String::new();
    for r in sorted {
        let _ = writeln!(text, "{}\t{}\t{}\t{}", r.name, r.run, r.passed, r.note);
    }
    if let Err(e) = std::fs::write(&path, text) {
        panic!("client report {}: {e}", Path::new(&path).display());
    }
}

// ------------------------------------------------------------------ steps

/// Unwinds out of a step without the panic hook's message (as `t.Fatal`).
struct Fatal(String);

/// What one step found wrong.
#[derive(Default)]
pub struct Check {
    errors: Vec<String>,
}

impl Check {
    /// Records a failure and carries on (`t.Errorf`).
    pub fn error(&mut self, msg: impl Into<String>) {
        self.errors.push(msg.into());
    }

    /// Records a failure and ends the step (`t.Fatalf`).
    pub fn fatal(&mut self, msg: impl Into<String>) -> ! {
        resume_unwind(Box::new(Fatal(msg.into())))
    }

    /// Whether nothing failed so far.
    pub fn passed(&self) -> bool {
        self.errors.is_empty()
    }
}

fn panic_message(p: Box<dyn Any + Send>) -> String {
    if let Some(Fatal(m)) = p.downcast_ref::<Fatal>() {
        return m.clone();
    }
    if let Some(s) = p.downcast_ref::<String>() {
        return format!("panic: {s}");
    }
    if let Some(s) = p.downcast_ref::<&str>() {
        return format!("panic: {s}");
    }
    "panic".to_owned()
}

/// The checks of one suite: each step runs, is counted, and prints the HTTP
/// exchanges with the service when it fails.
pub struct Suite<'a> {
    key: &'static str,
    stack: Option<&'a Stack>,
    run: usize,
    passed: usize,
    failures: Vec<String>,
    note: String,
}

impl<'a> Suite<'a> {
    /// The suite of Go test `key` over `stack`.
    pub fn new(key: &'static str, stack: Option<&'a Stack>) -> Self {
        Suite {
            key,
            stack,
            run: 0,
            passed: 0,
            failures: Vec::new(),
            note: String::new(),
        }
    }

    /// Runs one named check and counts it; returns whether it passed.
    pub fn step(&mut self, name: &str, f: impl FnOnce(&mut Check)) -> bool {
        let mark = self.stack.map(|s| s.rec.mark());
        let mut c = Check::default();
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(&mut c))) {
            c.errors.push(panic_message(p));
        }
        self.run += 1;
        let ok = c.passed();
        if ok {
            self.passed += 1;
            eprintln!("--- PASS: {}/{name}", self.key);
        } else {
            let mut msg = format!("--- FAIL: {}/{name}\n", self.key);
            for e in &c.errors {
                let _ = writeln!(msg, "    {}", e.replace('\n', "\n    "));
            }
            if let (Some(s), Some(mark)) = (self.stack, mark) {
                let _ = writeln!(
                    msg,
                    "    HTTP exchanges with the service during the step:\n{}",
                    s.rec.since(mark)
                );
            }
            eprintln!("{msg}");
            self.failures.push(name.to_owned());
        }
        ok
    }

    /// Counts `run` checks, `passed` of them passing, that ran outside
    /// [`Suite::step`] (a whole external suite).
    pub fn counts(&mut self, run: usize, passed: usize) {
        self.run += run;
        self.passed += passed;
    }

    /// Fails the suite without a step (`t.Errorf`/`t.Fatal` at its top).
    pub fn fail(&mut self, msg: impl Into<String>) {
        let msg = msg.into();
        eprintln!("--- FAIL: {}: {msg}", self.key);
        self.failures.push(msg);
    }

    /// Attaches a note to the suite's row of the report.
    pub fn note(&mut self, note: impl Into<String>) {
        self.note = note.into();
    }

    /// Records the counts in the report and fails the test when a check
    /// failed.
    pub fn finish(self) {
        let name = suite_name(self.key);
        report(&name, self.run, self.passed, &self.note);
        eprintln!("{name}: {} run, {} passed", self.run, self.passed);
        if self.failures.is_empty() {
            return;
        }
        if let Some(s) = self.stack {
            eprintln!("service output (last 8 KiB):\n{}", tail(&s.output(), 8192));
        }
        panic!(
            "{}: {} of {} checks failed:\n  {}",
            self.key,
            self.failures.len(),
            self.run,
            self.failures.join("\n  ")
        );
    }
}

// ------------------------------------------------------------------ stack

/// A notification the service logged (`[oslo_messaging_notifications]/driver
/// = log`): its message id, event type, CADF outcome and the cluster it is
/// about.
pub struct Logged {
    pub id: String,
    pub event_type: String,
    pub outcome: String,
    pub cluster: String,
}

/// The notifications in `log`, the service's JSON lines, in order.
pub fn logged_notifications(log: &str) -> Vec<Logged> {
    log.lines()
        .filter_map(|line| {
            let event: Value = serde_json::from_str(line).ok()?;
            if event["message"] != "notification" {
                return None;
            }
            let n: Value = serde_json::from_str(event["notification"].as_str()?).ok()?;
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            Some(Logged {
                id: text(&n["message_id"]),
                event_type: text(&n["event_type"]),
                outcome: text(&n["payload"]["outcome"]),
                cluster: text(&n["payload"]["target"]["id"]),
            })
        })
        .collect()
}

/// Stops `child` with `signal` (`-INT`, `-TERM`; std has no signal API, the
/// kill command sends it) and waits `grace` for it to exit; then kills it.
/// Its exit status, `None` when it had to be killed.
pub fn stop_child(child: &mut Child, signal: &str, grace: Duration) -> Option<ExitStatus> {
    if let Ok(Some(status)) = child.try_wait() {
        return Some(status);
    }
    let _ = Command::new("kill")
        .arg(signal)
        .arg(child.id().to_string())
        .status();
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// One process of the stack, stopped (SIGINT, then SIGKILL after 10 s) on
/// drop.
struct Process {
    name: String,
    child: Child,
    /// Held open: the double exits when it closes.
    _stdin: Option<ChildStdin>,
}

impl Process {
    fn stop(&mut self) {
        if stop_child(&mut self.child, "-INT", Duration::from_secs(10)).is_none() {
            eprintln!("{} did not stop within 10 s: killed", self.name);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A running service with everything the clients need around it: the
/// OpenStack double and its front, `api` behind the recording proxy,
/// `reconciler`, and the Keystone catalog of region [`REGION`] (with
/// Keystone) pointing at them.
pub struct Stack {
    pub rt: tokio::runtime::Runtime,
    /// Keystone (`None` on `all-in-one`).
    pub id: Option<Identity>,
    /// The front of the OpenStack double (`None` on `all-in-one`).
    pub front: Option<Front>,
    pub rec: Recorder,
    /// The service itself.
    pub server_url: String,
    /// The recording proxy in front of it (what the catalog names).
    pub url: String,
    /// `url` + `/v1`.
    pub endpoint: String,
    /// The control API (see [`crate::proxy::start_control`]).
    pub control_url: String,
    pub dir: tempfile::TempDir,
    conf: PathBuf,
    log: PathBuf,
    catalog: Option<PublishedCatalog>,
    /// The public endpoints of the OpenStack double (through its front), by
    /// catalog type (`compute`, `load-balancer`…); empty on `all-in-one`.
    pub cloud: BTreeMap<String, String>,
    processes: Vec<Process>,
    /// The `[metrics]` port of `api`, and of each `reconciler` (by pid).
    metrics_port: u16,
    reconciler_metrics: Vec<(u32, u16)>,
}

/// Reads `/metrics` on `port` with the OpenMetrics parser of
/// `prometheus_client` and sums the samples by name, and by name with each
/// label (`name{label=value}`); panics when it cannot.
fn scrape(python: &str, port: u16) -> BTreeMap<String, f64> {
    scrape_quietly(python, port).unwrap_or_else(|| panic!("/metrics on port {port}: no answer"))
}

/// [`scrape`], `None` when nothing answers (a reconciler killed by the
/// suite); a refused exposition still panics.
fn scrape_quietly(python: &str, port: u16) -> Option<BTreeMap<String, f64>> {
    const PARSE: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
sums = {}
for fam in text_string_to_metric_families(sys.stdin.read()):
    for s in fam.samples:
        keys = [s.name] + ["%s{%s=%s}" % (s.name, k, v) for k, v in sorted(s.labels.items())]
        for k in keys:
            sums[k] = sums.get(k, 0.0) + s.value
json.dump(sums, sys.stdout)
"#;
    let text = blocking_client(Duration::from_secs(10))
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .ok()?
        .text()
        .ok()?;
    let mut child = Command::new(python)
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run the OpenMetrics parser: {e}"));
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), text.as_bytes())
        .unwrap_or_else(|e| panic!("write the exposition: {e}"));
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("the parser: {e}"));
    assert!(
        out.status.success(),
        "prometheus_client refused the exposition: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("the parser's JSON: {e}")))
}

/// A multi-threaded runtime for the servers of the stack.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}

/// What a suite changes in the stack [`Stack::start_with`] starts.
#[derive(Default)]
pub struct StackOptions {
    /// Lines added to magnum.conf.
    pub conf: String,
    /// Without the fake driver: templates get the driver that provides
    /// their cluster type (the Cluster API driver).
    pub without_fake: bool,
    /// The project a token the double's read-write services do not know
    /// acts in (the double cannot validate Keystone's tokens).
    pub default_project: Option<String>,
    /// Volume types of the double's Cinder, the first its default.
    pub volume_types: Vec<&'static str>,
    /// Images the double serves besides those of [`seed`].
    pub images: Vec<Value>,
    /// `[database]/connection` (SQLAlchemy's form); a SQLite file in the
    /// stack's directory when `None`.
    pub database: Option<String>,
}

/// What the double serves: the image, flavors and networks the suites name.
fn seed() -> Value {
    json!({
        "images": [
            {"id": IMAGE_ID, "name": IMAGE_NAME, "os_distro": "ubuntu",
             "properties": {"kube_version": "v1.30.2"}},
            {"id": "7d0f0c5b-5a1d-4b8e-9d7e-2f6a8b9c0d11", "name": "no-distro"},
            // The image name openstacksdk's functional test_coe hard-codes.
            {"id": "b1e5c0de-24a4-4e35-8a4f-1d0f0c5b6a02", "name": "ubuntu-24.04-v1.35.4",
             "os_distro": "ubuntu"},
        ],
        "flavors": [
            {"id": "1", "name": FLAVOR_SMALL, "vcpus": 1, "ram": 2048, "disk": 20},
            {"id": "2", "name": FLAVOR_MEDIUM, "vcpus": 2, "ram": 4096, "disk": 40},
            {"id": "3", "name": "m1.large", "vcpus": 4, "ram": 8192, "disk": 80},
        ],
        "networks": [
            {"id": EXT_NET_ID, "name": EXT_NET_NAME, "external": true},
            {"id": FIXED_NET_ID, "name": FIXED_NET_NAME},
        ],
        "subnets": [
            {"id": SUBNET_ID, "name": "private-subnet", "network_id": FIXED_NET_ID,
             "cidr": "10.0.0.0/24"},
        ],
    })
}

impl Stack {
    /// Starts the service behind Keystone with the fake driver and the
    /// reconciler, and publishes it in region [`REGION`].
    pub fn start(keystone: (tokio::runtime::Runtime, Identity)) -> Stack {
        Stack::start_with(keystone, &StackOptions::default())
    }

    /// [`Stack::start`] with what `opts` changes.
    pub fn start_with((rt, id): (tokio::runtime::Runtime, Identity), opts: &StackOptions) -> Stack {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let log = dir.path().join("service.log");
        let mut processes = Vec::new();

        // The OpenStack double, and the front that adds what it lacks.
        let osfake = osfake_binary().unwrap_or_else(|e| panic!("{e}"));
        let seed_file = dir.path().join("seed.json");
        let mut seeded = seed();
        if let Some(p) = &opts.default_project {
            seeded["default_project"] = json!(p);
        }
        if !opts.volume_types.is_empty() {
            let types: Vec<Value> = opts
                .volume_types
                .iter()
                .enumerate()
                .map(|(i, n)| json!({"id": format!("vt-{i}"), "name": n}))
                .collect();
            seeded["volume_types"] = json!(types);
            seeded["default_volume_type"] = json!(opts.volume_types[0]);
        }
        if let Some(images) = seeded["images"].as_array_mut() {
            images.extend(opts.images.iter().cloned());
        }
        std::fs::write(&seed_file, seeded.to_string())
            .unwrap_or_else(|e| panic!("write the seed: {e}"));
        let (fake, description) = start_osfake(&osfake, &seed_file, &log);
        processes.push(fake);
        let fake_url = description["url"].as_str().unwrap_or_default().to_owned();
        let front = Front::start(&rt, &fake_url, KEYPAIR, KEYPAIR_PUBLIC_KEY);
        let endpoint_of = |service: &str| {
            let e = description["endpoints"][service]
                .as_str()
                .unwrap_or_default();
            format!("{}{}", front.url, e.strip_prefix(&fake_url).unwrap_or(e))
        };
        let [image_url, compute_url, network_url, lb_url, block_url] = [
            "image",
            "compute",
            "network",
            "load-balancer",
            "block-storage",
        ]
        .map(endpoint_of);
        let cloud: BTreeMap<String, String> = [
            ("compute", &compute_url),
            ("load-balancer", &lb_url),
            ("block-storage", &block_url),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.clone()))
        .collect();
        let fake = if opts.without_fake {
            ""
        } else {
            "enabled_beta_drivers = fake\ndefault_driver = fake\n"
        };
        let drivers = format!(
            "[drivers]\n{fake}precompiled_cache_dir = {}\n\n",
            compiled_drivers_dir().display()
        );

        let port = free_port();
        let metrics_port = free_port();
        let conf = dir.path().join("magnum.conf");
        let text = format!(
            "[DEFAULT]\nhost = okm-clients-test\nperiodic_interval_max = 1\n\n\
             [api]\nhost = 127.0.0.1\nport = {port}\n\n\
             [metrics]\nenabled = true\nhost = 127.0.0.1\nport = {metrics_port}\n\n\
             [database]\nconnection = {db}\n\n\
             [keystone_authtoken]\nwww_authenticate_uri = {ks}\nauth_url = {ks}\nauth_type = password\n\
             username = magnum\npassword = {pw}\nproject_name = service\nuser_domain_name = Default\n\
             project_domain_name = Default\n\n\
             {drivers}\
             [glance_client]\nregion_name = {REGION}\n\n\
             [nova_client]\nregion_name = {REGION}\n\n\
             [neutron_client]\nregion_name = {REGION}\n\n\
             [cinder_client]\nregion_name = {REGION}\n\n\
             [octavia_client]\nregion_name = {REGION}\n\n\
             [oslo_middleware]\nenable_proxy_headers_parsing = false\n\n{extra}\n",
            db = opts
                .database
                .clone()
                .unwrap_or_else(|| format!("sqlite:///{}", dir.path().join("magnum.db").display())),
            ks = id.url,
            pw = id.password("magnum"),
            extra = opts.conf,
        );
        std::fs::write(&conf, text).unwrap_or_else(|e| panic!("write magnum.conf: {e}"));
        let bin = binary();
        let upgrade = run_command(
            Command::new(&bin)
                .args(["db", "upgrade", "--config-file"])
                .arg(&conf)
                .current_dir(dir.path()),
            Duration::from_secs(120),
        )
        .unwrap_or_else(|e| panic!("db upgrade: {e}"));
        assert_eq!(
            upgrade.code, 0,
            "db upgrade:\n{}{}",
            upgrade.stdout, upgrade.stderr
        );

        let server_url = format!("http://127.0.0.1:{port}");
        let (rec, url) = Recorder::start(&rt, &server_url);
        let control_url = start_control(&rt, &rec, &front);
        let mut stack = Stack {
            rt,
            id: Some(id),
            front: Some(front),
            rec,
            server_url,
            endpoint: format!("{url}/v1"),
            url,
            control_url,
            dir,
            conf,
            log,
            catalog: None,
            cloud,
            processes,
            metrics_port,
            reconciler_metrics: Vec::new(),
        };
        stack.start_process(&bin, "api", true);
        let help = run_command(Command::new(&bin).arg("--help"), Duration::from_secs(60))
            .map(|o| o.stdout + &o.stderr)
            .unwrap_or_default();
        assert!(
            help.contains("\n  reconciler "),
            "openkeel-magnum has no reconciler subcommand:\n{help}"
        );
        // The status loop (clusters reach *_COMPLETE) and the conductor
        // heartbeat (`coe service list`).
        stack.start_process(&bin, "reconciler", false);

        let mut urls = vec![
            ("container-infra", "magnum", stack.endpoint.clone()),
            ("image", "glance", image_url),
            ("compute", "nova", compute_url),
            ("network", "neutron", network_url),
            ("identity", "keystone", stack.identity().url.clone()),
        ];
        if opts.without_fake {
            // What the Cluster API driver calls besides.
            urls.push(("load-balancer", "octavia", lb_url));
            urls.push(("block-storage", "cinderv3", block_url));
        }
        let urls: Vec<(&str, &str, &str)> =
            urls.iter().map(|(t, n, u)| (*t, *n, u.as_str())).collect();
        let catalog = stack.rt.block_on(stack.identity().publish_catalog(
            REGION,
            "openkeel-magnum client tests",
            &urls,
        ));
        stack.catalog = Some(catalog);
        stack
    }

    /// Starts `openkeel-magnum all-in-one` (no Keystone, the built-in
    /// lookups and fake driver) behind the recording proxy.
    pub fn all_in_one() -> Stack {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let port = free_port();
        let conf = dir.path().join("magnum.conf");
        std::fs::write(
            &conf,
            format!(
                "[DEFAULT]\nhost = okm-noauth\n\n[api]\nhost = 127.0.0.1\nport = {port}\n\n\
                 [drivers]\nprecompiled_cache_dir = {}\n",
                compiled_drivers_dir().display()
            ),
        )
        .unwrap_or_else(|e| panic!("write magnum.conf: {e}"));
        let server_url = format!("http://127.0.0.1:{port}");
        let (rec, url) = Recorder::start(&rt, &server_url);
        let mut stack = Stack {
            rt,
            id: None,
            front: None,
            rec,
            server_url,
            endpoint: format!("{url}/v1"),
            url,
            control_url: String::new(),
            log: dir.path().join("service.log"),
            dir,
            conf,
            catalog: None,
            cloud: BTreeMap::new(),
            processes: Vec::new(),
            metrics_port: 0,
            reconciler_metrics: Vec::new(),
        };
        stack.start_process(&binary(), "all-in-one", true);
        stack
    }

    /// Keystone. Panics on an `all-in-one` stack.
    pub fn identity(&self) -> &Identity {
        match &self.id {
            Some(id) => id,
            None => panic!("this stack has no Keystone"),
        }
    }

    /// The id of project `name` (admin, demo, alt, service).
    pub fn project(&self, name: &str) -> String {
        self.identity()
            .projects
            .get(name)
            .cloned()
            .unwrap_or_default()
    }

    /// A token of `user` scoped to `project`.
    pub fn token(&self, user: &str, project: &str) -> String {
        self.rt.block_on(self.identity().token(user, project))
    }

    /// Starts another `reconciler`: a standby while the first holds the
    /// Lease.
    pub fn start_standby_reconciler(&mut self) {
        self.start_process(&binary(), "reconciler", false);
    }

    /// The process ids of the running `reconciler`s, oldest first.
    pub fn reconciler_pids(&self) -> Vec<u32> {
        self.pids("reconciler")
    }

    /// The process ids of the running `openkeel-magnum <sub>` processes,
    /// oldest first.
    pub fn pids(&self, sub: &str) -> Vec<u32> {
        let name = format!("openkeel-magnum {sub}");
        self.processes
            .iter()
            .filter(|p| p.name == name)
            .map(|p| p.child.id())
            .collect()
    }

    /// The `reconciler` holding the Lease, by its `/metrics`
    /// (`openkeel_magnum_reconciler_lease_held 1`).
    pub fn lease_holder_pid(&self) -> Option<u32> {
        let http = blocking_client(Duration::from_secs(5));
        self.reconciler_metrics.iter().find_map(|(pid, port)| {
            let text = http
                .get(format!("http://127.0.0.1:{port}/metrics"))
                .send()
                .ok()?
                .text()
                .ok()?;
            text.lines()
                .any(|l| l.trim() == "openkeel_magnum_reconciler_lease_held 1")
                .then_some(*pid)
        })
    }

    /// Starts one more `api` on `port` (with its metrics on another) and
    /// waits until it answers `GET /`.
    pub fn start_api_on(&mut self, port: u16) {
        let env = [
            ("OS_API__PORT", port.to_string()),
            ("OS_METRICS__PORT", free_port().to_string()),
        ];
        self.spawn(&binary(), "api", &env);
        self.wait_serving("api", &format!("http://127.0.0.1:{port}"));
    }

    /// Kills process `pid` of the stack with SIGKILL, as a crash would, and
    /// forgets it.
    pub fn kill_hard(&mut self, pid: u32) {
        if let Some(i) = self.processes.iter().position(|p| p.child.id() == pid) {
            let mut p = self.processes.remove(i);
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
        self.reconciler_metrics.retain(|(p, _)| *p != pid);
    }

    /// The last step of a suite: `/metrics` of `api` and of the reconciler
    /// holding the lease, read with the OpenMetrics parser of Python's
    /// `prometheus_client` (`OPENKEEL_TEST_PYTHON`); every series a run of
    /// the suite moves is there with a value above zero, the others are
    /// there. Prints what it read.
    pub fn metrics_step(&self, suite: &mut Suite<'_>, watched: bool) {
        let Some(python) = need_env("OPENKEEL_TEST_PYTHON") else {
            return;
        };
        suite.step("metrics after the suite", |c| {
            let api = scrape(&python, self.metrics_port);
            let reconciler = self
                .reconciler_metrics
                .iter()
                .filter_map(|(_, port)| scrape_quietly(&python, *port))
                .find(|m| m.get("openkeel_magnum_reconciler_lease_held") == Some(&1.0));
            let Some(reconciler) = reconciler else {
                c.error("no reconciler answered /metrics holding the lease");
                return;
            };
            let mut positive = vec![
                (&api, "openkeel_magnum_http_requests_total"),
                (&api, "openkeel_magnum_http_request_duration_seconds_count"),
                (&api, "openkeel_magnum_driver_calls_total"),
                (&api, "openkeel_magnum_driver_call_duration_seconds_count"),
                (&api, "openkeel_magnum_db_connection_acquisitions_total"),
                (&api, "openkeel_magnum_db_connections_idle"),
                (&api, "openkeel_magnum_token_cache_lookups_total{result=hit}"),
                (&api, "openkeel_magnum_token_cache_lookups_total{result=miss}"),
                (&reconciler, "openkeel_magnum_driver_calls_total"),
                (&reconciler, "openkeel_magnum_reconciler_lease_held"),
                (&reconciler, "openkeel_magnum_db_connection_acquisitions_total"),
            ];
            // The watches themselves end with the suite's last cluster.
            if watched {
                positive.extend([
                    (&reconciler, "openkeel_magnum_watch_status_derivations_total"),
                    (&reconciler, "openkeel_magnum_watch_lag_seconds_total"),
                ]);
            }
            let present = [
                (&reconciler, "openkeel_magnum_watch_reflectors"),
                (&reconciler, "openkeel_magnum_watch_objects"),
                (&api, "openkeel_magnum_db_connections_in_use"),
                (&api, "openkeel_magnum_db_connection_wait_seconds_total"),
                (&api, "openkeel_magnum_db_transaction_retries_total"),
                (&api, "openkeel_magnum_create_jobs_queued"),
                (&api, "openkeel_magnum_driver_breaker_open"),
                (&api, "openkeel_magnum_notifications_total{outcome=failed}"),
                (&reconciler, "openkeel_magnum_reconciler_clusters_in_progress"),
                (&reconciler, "openkeel_magnum_reconciler_clusters_polling"),
                (&reconciler, "openkeel_magnum_reconciler_clusters_pending"),
            ];
            for (m, name) in positive {
                match m.get(name) {
                    Some(v) if *v > 0.0 => {}
                    other => c.error(format!("{name}: {other:?}, not above zero")),
                }
            }
            for (m, name) in present {
                if !m.contains_key(name) {
                    c.error(format!("{name} is not served"));
                }
            }
            eprintln!(
                "metrics after the suite: api {} series, reconciler {} series; requests {}, driver calls {} + {}, \
                 derivations by watch {}, watch lag {:.2} s in all",
                api.len(),
                reconciler.len(),
                api.get("openkeel_magnum_http_requests_total").unwrap_or(&0.0),
                api.get("openkeel_magnum_driver_calls_total").unwrap_or(&0.0),
                reconciler.get("openkeel_magnum_driver_calls_total").unwrap_or(&0.0),
                reconciler
                    .get("openkeel_magnum_watch_status_derivations_total")
                    .unwrap_or(&0.0),
                reconciler.get("openkeel_magnum_watch_lag_seconds_total").unwrap_or(&0.0),
            );
        });
    }

    /// What the service processes printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// What the Go suites are told about the stack, as JSON.
    pub fn info(&self) -> String {
        let front = self.front.as_ref().map(|f| f.url.as_str()).unwrap_or("");
        serde_json::to_string(&StackInfo {
            region: REGION,
            url: &self.url,
            endpoint: &self.endpoint,
            openstack_url: front,
            control_url: &self.control_url,
            image_id: IMAGE_ID,
            image_name: IMAGE_NAME,
            flavor_small: FLAVOR_SMALL,
            flavor_medium: FLAVOR_MEDIUM,
            keypair: KEYPAIR,
            ext_net_name: EXT_NET_NAME,
            ext_net_id: EXT_NET_ID,
        })
        .unwrap_or_default()
    }

    /// Runs `openkeel-magnum <sub> --config-file conf` until the stack
    /// stops and, when `serving`, waits until it answers `GET /`.
    fn start_process(&mut self, bin: &Path, sub: &str, serving: bool) {
        self.spawn(bin, sub, &[]);
        if serving {
            let url = self.server_url.clone();
            self.wait_serving(sub, &url);
        }
    }

    /// Starts `openkeel-magnum <sub> --config-file conf` with `env` added,
    /// its output appended to the stack's log.
    fn spawn(&mut self, bin: &Path, sub: &str, env: &[(&str, String)]) {
        let log = File::options()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap_or_else(|e| panic!("service log: {e}"));
        let err = log
            .try_clone()
            .unwrap_or_else(|e| panic!("service log: {e}"));
        let mut command = Command::new(bin);
        command.envs(env.iter().map(|(k, v)| (k, v)));
        // Each reconciler serves its metrics on a port of its own.
        let reconciler_port = (sub == "reconciler" && self.metrics_port != 0).then(free_port);
        if let Some(port) = reconciler_port {
            command.env("OS_METRICS__PORT", port.to_string());
        }
        let child = command
            .arg(sub)
            .arg("--config-file")
            .arg(&self.conf)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start openkeel-magnum {sub}: {e}"));
        if let Some(port) = reconciler_port {
            self.reconciler_metrics.push((child.id(), port));
        }
        self.processes.push(Process {
            name: format!("openkeel-magnum {sub}"),
            child,
            _stdin: None,
        });
    }

    /// Waits until the process started last answers `GET {url}/`; panics
    /// with the stack's output when it exits or does not answer in 60 s.
    fn wait_serving(&mut self, sub: &str, url: &str) {
        let http = blocking_client(Duration::from_secs(5));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if http.get(format!("{url}/")).send().is_ok() {
                return;
            }
            if let Some(p) = self.processes.last_mut()
                && let Ok(Some(status)) = p.child.try_wait()
            {
                panic!(
                    "openkeel-magnum {sub} exited with {status}:\n{}",
                    self.output()
                );
            }
            assert!(
                Instant::now() < deadline,
                "openkeel-magnum {sub} did not answer within 60 s:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends a request to the service (through the proxy) with `token`, at
    /// microversion `version` ("" = none); returns the status and the
    /// decoded JSON answer (`Null` when empty).
    pub fn api(
        &self,
        token: &str,
        method: &str,
        path: &str,
        version: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), String> {
        let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
        let mut req = blocking_client(Duration::from_secs(60))
            .request(method.clone(), format!("{}{path}", self.url))
            .header("X-Auth-Token", token)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json");
        if !version.is_empty() {
            req = req.header(
                "OpenStack-API-Version",
                format!("container-infra {version}"),
            );
        }
        if let Some(b) = body {
            req = req.body(b.to_string());
        }
        let resp = req.send().map_err(|e| format!("{method} {path}: {e}"))?;
        let status = resp.status().as_u16();
        let raw = resp.bytes().map_err(|e| format!("{method} {path}: {e}"))?;
        if raw.is_empty() {
            return Ok((status, Value::Null));
        }
        let v = serde_json::from_slice(&raw)
            .map_err(|e| format!("{method} {path}: {e}: {}", String::from_utf8_lossy(&raw)))?;
        Ok((status, v))
    }

    /// Polls the cluster every 200 ms until its status is one of `want`
    /// (with `want` "404", until it is gone) and returns it; ends the step
    /// on a `*_FAILED` status or after `timeout`.
    pub fn wait_status(
        &self,
        c: &mut Check,
        token: &str,
        cluster: &str,
        timeout: Duration,
        want: &[&str],
    ) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let (code, body) = self
                .api(
                    token,
                    "GET",
                    &format!("/v1/clusters/{cluster}"),
                    "latest",
                    None,
                )
                .unwrap_or_else(|e| c.fatal(e));
            let last = if code == 404 {
                "404".to_owned()
            } else {
                body["status"].as_str().unwrap_or_default().to_owned()
            };
            if want.contains(&last.as_str()) {
                return last;
            }
            if last.ends_with("_FAILED") || Instant::now() > deadline {
                c.fatal(format!(
                    "cluster {cluster}: status {last:?} (HTTP {code}), want one of {want:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if let (Some(catalog), Some(id)) = (self.catalog.take(), self.id.as_ref()) {
            let removed = catch_unwind(AssertUnwindSafe(|| {
                self.rt.block_on(catalog.remove(id));
            }));
            if removed.is_err() {
                eprintln!("could not remove the endpoints of region {REGION}");
            }
        }
        // The service first, the double last.
        while let Some(mut p) = self.processes.pop() {
            p.stop();
        }
    }
}

/// Where every service of the run keeps the compiled built-in drivers, so
/// that only the first process compiles them (the Cluster API component
/// takes seconds); keyed by each component's sha256 and the engine's
/// settings, so a rebuilt binary never loads a stale one.
pub fn compiled_drivers_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("okm-driver-cache");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("driver cache: {e}"));
    dir
}

/// Starts `okm-osfake` and reads the line it prints once listening.
fn start_osfake(bin: &Path, seed: &Path, log: &Path) -> (Process, Value) {
    let logfile = File::options()
        .create(true)
        .append(true)
        .open(log)
        .unwrap_or_else(|e| panic!("service log: {e}"));
    let mut child = Command::new(bin)
        .arg("--seed")
        .arg(seed)
        .arg("--exit-on-stdin-eof")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(logfile)
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if let Some(out) = stdout {
            let mut r = BufReader::new(out);
            let _ = r.read_line(&mut line);
            // Keep draining so that the double never blocks on a full pipe.
            let _ = tx.send(line);
            let _ = std::io::copy(&mut r, &mut std::io::sink());
        }
    });
    let mut p = Process {
        name: "okm-osfake".to_owned(),
        child,
        _stdin: stdin,
    };
    let line = match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(l) => l,
        Err(_) => {
            p.stop();
            panic!("okm-osfake printed nothing within 30 s");
        }
    };
    let description: Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("okm-osfake printed {line:?}: {e}"));
    (p, description)
}

/// A blocking HTTP client for loopback calls.
pub fn blocking_client(timeout: Duration) -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(timeout)
        .no_proxy()
        .build()
        .unwrap_or_else(|e| panic!("HTTP client: {e}"))
}

/// The environment of the caller without its `OS_*` settings and `HOME`.
pub fn clean_env() -> BTreeMap<String, String> {
    std::env::vars()
        .filter(|(k, _)| !k.starts_with("OS_") && k != "HOME")
        .collect()
}

/// Keystone as the suites need it, with the runtime its client lives on
/// (the stack's), or `None` (with a message) when the environment names none
/// outside CI.
pub fn keystone() -> Option<(tokio::runtime::Runtime, Identity)> {
    let rt = runtime();
    let id = rt.block_on(Identity::from_env())?;
    Some((rt, id))
}
