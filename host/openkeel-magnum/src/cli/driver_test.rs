//! `driver test PACKAGE`: a driver package tested with the binary its
//! author already has, in two parts.
//!
//! 1. Conformance: the test kit (openkeel-magnum-driver-testkit) loads the
//!    package in the real driver host, with in-memory Kubernetes and
//!    OpenStack, and runs its conformance checks; `--refuses` adds the
//!    label sets the driver must refuse. Its report is printed as is.
//! 2. Lifecycle: this binary started again as `all-in-one --kube memory`
//!    (the in-process Kubernetes API) on a SQLite file in a temporary
//!    directory, the package installed from `[drivers]/drivers_path`,
//!    granted what it requests and its beta entry points enabled; then the
//!    API called over HTTP as `openstack coe` calls it: a cluster template
//!    for the entry point, one cluster create per refused label (a 400 with
//!    Magnum's error body, and no cluster row), a create until
//!    CREATE_COMPLETE, a resize until UPDATE_COMPLETE, a delete until the
//!    cluster is gone. Each step is printed with the time it took.
//!
//! The component is compiled once for both parts: both use
//! `[drivers]/precompiled_cache_dir`, else `~/.cache/openkeel-magnum/drivers`
//! (`$XDG_CACHE_HOME`), else a cache in the temporary directory. Exit 0 when both parts pass, 1 otherwise; the last line is
//! the verdict.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use driver_host::manifest::Manifest;
use openkeel_magnum_driver_testkit::conformance::{self, Check, Outcome, Report};
use openkeel_magnum_driver_testkit::{Kit, Package, fixtures};
use reqwest::Method;
use serde_json::{Value, json};

use super::Failure;
use crate::options::Options;

/// What `driver test` was asked.
#[derive(Debug)]
pub(super) struct Args {
    pub package: PathBuf,
    /// Label sets (one label each) the driver must refuse with a 400.
    pub refuses: Vec<(String, String)>,
    pub entry_point: Option<String>,
    /// The bound of every wait: the server's start, each status.
    pub timeout: Duration,
    pub skip_lifecycle: bool,
    /// The configuration the command read, passed on to the server.
    pub config_files: Vec<PathBuf>,
    pub config_dirs: Vec<PathBuf>,
}

/// `--refuses LABEL=VALUE`.
pub(super) fn parse_label(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("{s:?} is not LABEL=VALUE")),
    }
}

/// The project, user and roles of the API calls (`all-in-one` takes the
/// identity from these headers, as Magnum's noauth does).
const IDENTITY: [(&str, &str); 3] = [
    ("X-Project-Id", "driver-test"),
    ("X-User-Id", "driver-test-user"),
    ("X-Roles", "member,reader"),
];

/// The bound of one HTTP call.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How many lines of the server's output a failure shows.
const LOG_TAIL: usize = 40;

pub(super) async fn run(options: &Options, args: Args, out: &mut dyn Write) -> Result<(), Failure> {
    let pkg = match Package::from_dir(&args.package) {
        Ok(p) => p,
        Err(e) => return Err(Failure::new(format!("{}: {e}", args.package.display()))),
    };
    let manifest = pkg.parsed().map_err(Failure::new)?;
    let entry_point = match &args.entry_point {
        Some(e) if manifest.entry_points.iter().any(|m| &m.name == e) => e.clone(),
        Some(e) => {
            return Err(Failure::new(format!(
                "the package has no entry point {e} (it has: {})",
                entry_names(&manifest).join(", ")
            )));
        }
        None => match manifest.entry_points.first() {
            Some(e) => e.name.clone(),
            None => return Err(Failure::new("the package has no entry point")),
        },
    };
    let settings = crate::app::driver_settings(options).map_err(Failure::new)?;
    let work = tempfile::Builder::new()
        .prefix("okm-driver-test-")
        .tempdir()
        .map_err(|e| Failure::new(format!("a temporary directory: {e}")))?;
    let cache = settings
        .precompiled_cache_dir
        .clone()
        .or_else(user_cache_dir)
        .unwrap_or_else(|| work.path().join("precompiled"));
    let name = manifest.driver.name.clone();
    let mut p = Printer {
        out,
        failed: vec![],
    };

    // 1. Conformance.
    p.line(&format!(
        "conformance: {name} {} ({})",
        manifest.driver.version,
        args.package.display()
    ))?;
    let started = Instant::now();
    let kit_options = openkeel_magnum_driver_testkit::Options {
        driver_options: settings
            .drivers
            .get(&name)
            .map(|c| c.options.clone())
            .unwrap_or_default(),
        precompiled_cache_dir: Some(cache.clone()),
        ..Default::default()
    };
    let mut watches = false;
    let (report, loads) = match Kit::load_with(pkg.clone(), kit_options).await {
        Ok(kit) => {
            let opts = conformance::Options {
                bad_labels: args
                    .refuses
                    .iter()
                    .map(|(k, v)| BTreeMap::from([(k.clone(), v.clone())]))
                    .collect(),
                ..Default::default()
            };
            watches = declares_watches(&kit, &entry_point).await;
            (conformance::run(&kit, &opts).await, true)
        }
        Err(reason) => (not_loaded(&name, &reason), false),
    };
    write!(p.out, "{report}").map_err(Failure::new)?;
    p.failed
        .extend(report.failed_names().iter().map(|n| n.to_string()));
    p.line(&format!(
        "conformance: {} checks, {} failed ({})",
        report.checks.len(),
        report.failures().len(),
        secs(started.elapsed())
    ))?;

    // 2. The lifecycle through the API.
    if args.skip_lifecycle {
        p.line("lifecycle: not run (--skip-lifecycle)")?;
    } else if !loads {
        p.line("lifecycle: not run: the host refuses the package")?;
        p.failed.push("lifecycle".into());
    } else {
        let plan = Plan {
            manifest: &manifest,
            watches,
            pkg: &pkg,
            entry_point: &entry_point,
            args: &args,
            work: work.path(),
            cache: &cache,
        };
        lifecycle(&plan, &mut p).await?;
    }

    let verdict = if p.failed.is_empty() {
        format!(
            "PASSED  {name} {}: conformance{}",
            manifest.driver.version,
            if args.skip_lifecycle {
                ""
            } else {
                " and lifecycle"
            }
        )
    } else {
        format!(
            "FAILED  {name} {}: {}",
            manifest.driver.version,
            p.failed.join(", ")
        )
    };
    p.line(&verdict)?;
    if p.failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::status(1))
    }
}

/// `$XDG_CACHE_HOME/openkeel-magnum/drivers` (else under `~/.cache`), when
/// it can be created: the compiled components (keyed by their hash and the
/// engine's settings) kept between runs, the built-in drivers' included.
fn user_cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?).join(".cache"),
    };
    let dir = base.join("openkeel-magnum").join("drivers");
    std::fs::create_dir_all(&dir).ok().map(|()| dir)
}

fn entry_names(m: &Manifest) -> Vec<String> {
    m.entry_points.iter().map(|e| e.name.clone()).collect()
}

/// The report of a package the host refuses: the kit's first check fails.
fn not_loaded(name: &str, reason: &str) -> Report {
    Report {
        checks: vec![Check {
            name: "describe-matches-manifest",
            entry_point: name.to_string(),
            outcome: Outcome::Failed(format!("the host refuses the package: {reason}")),
        }],
    }
}

/// `1.2 s`.
fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// The output, and the names of what failed (for the verdict).
struct Printer<'a> {
    out: &'a mut dyn Write,
    failed: Vec<String>,
}

impl Printer<'_> {
    fn line(&mut self, s: &str) -> Result<(), Failure> {
        writeln!(self.out, "{s}").map_err(Failure::new)
    }

    fn step(&mut self, step: &Step) -> Result<(), Failure> {
        if let StepOutcome::Failed(_) = step.outcome {
            self.failed.push(step.name.clone());
        }
        self.line(&step.to_string())
    }
}

/// One step of the lifecycle, as printed.
#[derive(Debug, PartialEq)]
struct Step {
    name: String,
    outcome: StepOutcome,
    took: Duration,
}

#[derive(Debug, PartialEq)]
enum StepOutcome {
    /// With what to show after the name (may be empty).
    Passed(String),
    Skipped(String),
    Failed(String),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let took = secs(self.took);
        match &self.outcome {
            StepOutcome::Passed(note) if note.is_empty() => {
                write!(f, "ok      {:<34} {took:>8}", self.name)
            }
            StepOutcome::Passed(note) => {
                write!(f, "ok      {:<34} {took:>8}  {note}", self.name)
            }
            StepOutcome::Skipped(why) => write!(f, "skipped {}: {why}", self.name),
            StepOutcome::Failed(why) => write!(f, "FAILED  {} ({took}): {why}", self.name),
        }
    }
}

/// What the lifecycle runs.
struct Plan<'a> {
    manifest: &'a Manifest,
    /// Whether the entry point declares watches for a new cluster: then
    /// its statuses must arrive by derive-status.
    watches: bool,
    pkg: &'a Package,
    entry_point: &'a str,
    args: &'a Args,
    work: &'a Path,
    cache: &'a Path,
}

/// The server's configuration (after the author's own files): the
/// database, the API's address, the package, its grant, the in-process
/// Kubernetes API.
fn server_conf(work: &Path, port: u16, cache: &Path, manifest: &Manifest) -> String {
    let beta: Vec<&str> = manifest
        .entry_points
        .iter()
        .filter(|e| e.beta)
        .map(|e| e.name.as_str())
        .chain(["fake"])
        .collect();
    let mut s = String::new();
    let _ = write!(
        s,
        "[database]\nconnection = sqlite:///{db}\n\n\
         [api]\nhost = 127.0.0.1\nport = {port}\n\n\
         [drivers]\ndrivers_path = {drivers}\nprecompiled_cache_dir = {cache}\n\
         enabled_beta_drivers = {beta}\n\n\
         [capi]\nmanagement_cluster = memory\n\n\
         [certificates]\ncert_manager_type = x509keypair\n\n\
         [driver:{name}]\ngrant_requested = true\n",
        db = work.join("magnum.sqlite").display(),
        drivers = work.join("drivers").display(),
        cache = cache.display(),
        beta = beta.join(","),
        name = manifest.driver.name,
    );
    s
}

/// The running server, killed when the lifecycle ends (and on drop).
struct Server {
    child: tokio::process::Child,
    log: PathBuf,
}

impl Server {
    fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(format!("the server exited ({status})")),
            _ => None,
        }
    }

    async fn stop(&mut self) {
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }

    /// The driver call whose answer moved the cluster to `status`, from the
    /// server's log line `cluster status changed` (`derive-status` when it
    /// came from the objects its watches select, `poll-status` otherwise).
    async fn moved_by(&self, uuid: &str, status: &str) -> Option<String> {
        // The line follows the row's write by a moment.
        for _ in 0..20 {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            if let Some(call) = status_call(&text, uuid, status) {
                return Some(call);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }

    /// The last lines the server printed.
    fn tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(LOG_TAIL)..].join("\n")
    }
}

async fn lifecycle(plan: &Plan<'_>, p: &mut Printer<'_>) -> Result<(), Failure> {
    let started = Instant::now();
    let name = &plan.manifest.driver.name;
    let failed_before = p.failed.len();
    // The package, installed as an operator installs it.
    let installed = plan.work.join("drivers").join(name);
    let install = std::fs::create_dir_all(&installed)
        .and_then(|()| std::fs::write(installed.join("driver.toml"), &plan.pkg.manifest))
        .and_then(|()| {
            std::fs::write(
                installed.join(plan.manifest.component_file()),
                &plan.pkg.component,
            )
        });
    install.map_err(|e| Failure::new(format!("install the package: {e}")))?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Failure::new(format!("a free port: {e}")))?;
    // The server's own settings are read last (a directory's files come
    // after every file), so that none of the author's files moves its
    // port, database, drivers or Kubernetes.
    let conf_dir = plan.work.join("conf.d");
    let conf = conf_dir.join("driver-test.conf");
    std::fs::create_dir_all(&conf_dir)
        .map_err(|e| Failure::new(format!("{}: {e}", conf_dir.display())))?;
    std::fs::write(
        &conf,
        server_conf(plan.work, port, plan.cache, plan.manifest),
    )
    .map_err(|e| Failure::new(format!("{}: {e}", conf.display())))?;
    let log = plan.work.join("server.log");
    let logfile = std::fs::File::create(&log).map_err(Failure::new)?;
    let exe = std::env::current_exe().map_err(|e| Failure::new(format!("this binary: {e}")))?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.args(["all-in-one", "--kube", "memory"]);
    for f in &plan.args.config_files {
        cmd.arg("--config-file")
            .arg(std::path::absolute(f).unwrap_or_else(|_| f.clone()));
    }
    for d in &plan.args.config_dirs {
        cmd.arg("--config-dir")
            .arg(std::path::absolute(d).unwrap_or_else(|_| d.clone()));
    }
    cmd.arg("--config-dir")
        .arg(&conf_dir)
        .current_dir(plan.work)
        .stdin(Stdio::null())
        .stdout(logfile.try_clone().map_err(Failure::new)?)
        .stderr(logfile)
        .kill_on_drop(true);
    // Its info lines say how each status arrived.
    if std::env::var_os("RUST_LOG").is_none() {
        cmd.env("RUST_LOG", "info");
    }
    let child = cmd
        .spawn()
        .map_err(|e| Failure::new(format!("start all-in-one: {e}")))?;
    let mut server = Server { child, log };
    p.line(&format!(
        "lifecycle: {name} [{}] through all-in-one --kube memory on 127.0.0.1:{port}",
        plan.entry_point
    ))?;
    let api = Api {
        http: reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .build()
            .map_err(|e| Failure::new(format!("the HTTP client: {e}")))?,
        url: format!("http://127.0.0.1:{port}"),
    };
    let steps = steps(plan, &api, &mut server, p);
    let ended = tokio::select! {
        r = steps => r,
        _ = tokio::signal::ctrl_c() => {
            p.failed.push("interrupted".into());
            p.line("interrupted")
        }
    };
    server.stop().await;
    if p.failed.len() > failed_before {
        p.line("server output (last lines):")?;
        p.line(&server.tail())?;
    } else {
        p.line(&format!("lifecycle: passed ({})", secs(started.elapsed())))?;
    }
    ended
}

/// The steps, in order; the first failure ends them.
async fn steps(
    plan: &Plan<'_>,
    api: &Api,
    server: &mut Server,
    p: &mut Printer<'_>,
) -> Result<(), Failure> {
    let timeout = plan.args.timeout;
    macro_rules! step {
        ($name:expr, $body:expr) => {{
            let t = Instant::now();
            let r: Result<StepOutcome, String> = $body;
            let outcome = match r {
                Ok(o) => o,
                Err(why) => StepOutcome::Failed(why),
            };
            let failed = matches!(outcome, StepOutcome::Failed(_));
            p.step(&Step {
                name: $name.to_string(),
                outcome,
                took: t.elapsed(),
            })?;
            if failed {
                return Ok(());
            }
        }};
    }
    step!("server answers", wait_ready(api, server, timeout).await);

    let target = plan
        .manifest
        .entry_points
        .iter()
        .find(|e| e.name == plan.entry_point)
        .and_then(|e| e.provides.first());
    let (coe, server_type) = target
        .map(|t| (t.coe.as_str(), t.server_type.as_str()))
        .unwrap_or(("kubernetes", "vm"));
    let mut template = String::new();
    step!(
        "template create",
        async {
            let answer = api
                .call(
                    Method::POST,
                    "/v1/clustertemplates",
                    Some(json!({
                        "name": "driver-test",
                        "coe": coe,
                        "server_type": server_type,
                        "image_id": "driver-test-image",
                        "external_network_id": "public",
                        "flavor_id": "m1.small",
                        "master_flavor_id": "m1.medium",
                        "driver": plan.entry_point,
                    })),
                )
                .await?;
            let v = expect("the template create", answer, 201)?;
            template = v["uuid"].as_str().unwrap_or_default().to_string();
            Ok(StepOutcome::Passed(String::new()))
        }
        .await
    );

    for (k, v) in &plan.args.refuses {
        let cluster = format!("refused-{}", sanitize(k));
        step!(
            format!("refused {k}={v} → 400"),
            refused(api, &template, &cluster, k, v).await
        );
    }

    let mut uuid = String::new();
    step!(
        "create → CREATE_COMPLETE",
        async {
            let answer = api
                .call(
                    Method::POST,
                    "/v1/clusters",
                    Some(json!({
                        "name": "driver-test",
                        "cluster_template_id": template,
                        "master_count": 1,
                        "node_count": 1,
                    })),
                )
                .await?;
            let v = expect("the create", answer, 202)?;
            uuid = v["uuid"].as_str().unwrap_or_default().to_string();
            let (_, outcome) =
                settled(api, server, &uuid, "CREATE_COMPLETE", timeout, plan.watches).await?;
            Ok(outcome)
        }
        .await
    );

    step!(
        "resize → UPDATE_COMPLETE",
        async {
            let (code, v) = api
                .call(
                    Method::POST,
                    &format!("/v1/clusters/{uuid}/actions/resize"),
                    Some(json!({ "node_count": 2 })),
                )
                .await?;
            if code == 400 && error_text(&v).to_lowercase().contains("not supported") {
                return Ok(StepOutcome::Skipped(format!(
                    "the driver does not support it (400: {})",
                    error_text(&v)
                )));
            }
            expect("the resize", (code, v), 202)?;
            let (c, outcome) =
                settled(api, server, &uuid, "UPDATE_COMPLETE", timeout, plan.watches).await?;
            if c["node_count"] != 2 {
                return Err(format!(
                    "UPDATE_COMPLETE with node_count {}, not 2",
                    c["node_count"]
                ));
            }
            Ok(outcome)
        }
        .await
    );

    step!(
        "delete → 404",
        async {
            let path = format!("/v1/clusters/{uuid}");
            expect(
                "the delete",
                api.call(Method::DELETE, &path, None).await?,
                204,
            )?;
            wait_gone(api, server, &uuid, timeout).await?;
            Ok(StepOutcome::Passed(String::new()))
        }
        .await
    );
    Ok(())
}

/// The `call` of the last JSON log line saying that the cluster moved to
/// `status`.
fn status_call(log: &str, uuid: &str, status: &str) -> Option<String> {
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| {
            v["message"] == "cluster status changed"
                && v["cluster_uuid"] == uuid
                && v["to"] == status
        })
        .filter_map(|v| v["call"].as_str().map(str::to_string))
        .next_back()
}

/// Whether the entry point's `watches` select anything for a new
/// cluster of its first cluster type.
async fn declares_watches(kit: &Kit, entry_point: &str) -> bool {
    let Ok(d) = kit.driver(entry_point) else {
        return false;
    };
    let Some(target) = d.provides().first().cloned() else {
        return false;
    };
    let st = fixtures::new_cluster(entry_point, &target, &BTreeMap::new());
    d.watches(&fixtures::admin(), &st)
        .await
        .is_ok_and(|w| !w.is_empty())
}

/// Waits for the cluster to reach `status`: the cluster then, and the
/// step's outcome from how the status arrived.
async fn settled(
    api: &Api,
    server: &mut Server,
    uuid: &str,
    status: &str,
    timeout: Duration,
    watches: bool,
) -> Result<(Value, StepOutcome), String> {
    let c = wait_status(api, server, uuid, status, timeout).await?;
    let outcome = arrived(watches, server.moved_by(uuid, status).await)?;
    Ok((c, outcome))
}

/// A step's outcome from how its status arrived (the driver call the
/// server's log names): a driver declaring watches must get it from
/// derive-status.
fn arrived(watches: bool, call: Option<String>) -> Result<StepOutcome, String> {
    match call.as_deref() {
        Some("derive-status") => Ok(StepOutcome::Passed(
            "by derive-status over its watches".into(),
        )),
        other if watches => Err(format!(
            "the driver declares watches, but the status arrived {}: are its watches granted \
             `list`? (`openkeel-magnum driver list --details` names a refused watch)",
            other.map_or("without a logged driver call".to_string(), |c| format!(
                "by {c}"
            ))
        )),
        Some(c) => Ok(StepOutcome::Passed(format!("by {c}"))),
        None => Ok(StepOutcome::Passed(String::new())),
    }
}

/// The body of an answer with the status `want`, else the step's failure:
/// `what` answered another status, with Magnum's error text.
fn expect(what: &str, (code, v): (u16, Value), want: u16) -> Result<Value, String> {
    if code == want {
        Ok(v)
    } else {
        Err(format!("{what} answered {code}: {}", error_text(&v)))
    }
}

/// A name usable as a cluster's.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A cluster create with the label `k=v`: a 400 with Magnum's error body,
/// and no cluster row.
async fn refused(
    api: &Api,
    template: &str,
    cluster: &str,
    k: &str,
    v: &str,
) -> Result<StepOutcome, String> {
    let (code, body) = api
        .call(
            Method::POST,
            "/v1/clusters",
            Some(json!({
                "name": cluster,
                "cluster_template_id": template,
                "master_count": 1,
                "node_count": 1,
                "labels": { k: v },
            })),
        )
        .await?;
    let detail = magnum_error(&body, 400);
    let outcome = match (code, detail) {
        (400, Some(d)) => StepOutcome::Passed(d),
        (400, None) => return Err(format!("a 400 without Magnum's error body: {body}")),
        (c, _) => return Err(format!("answered {c}, not 400: {}", error_text(&body))),
    };
    let (code, list) = api
        .call(Method::GET, "/v1/clusters?limit=1000", None)
        .await?;
    let rows = list["clusters"].as_array().cloned().unwrap_or_default();
    if code != 200 {
        return Err(format!("the cluster list answered {code}"));
    }
    if rows.iter().any(|r| r["name"] == cluster) {
        return Err(format!("refused, but the cluster {cluster} is listed"));
    }
    Ok(outcome)
}

/// The `detail` of Magnum's `{"errors": [{"status": <status>, "title":
/// …, "detail": …}]}`, when the body is one.
fn magnum_error(body: &Value, status: u16) -> Option<String> {
    let e = body["errors"].get(0)?;
    let ok = e["status"] == status && e["title"].as_str().is_some_and(|t| !t.is_empty());
    let detail = e["detail"].as_str()?;
    (ok && !detail.is_empty()).then(|| detail.to_string())
}

/// An error answer in one line.
fn error_text(body: &Value) -> String {
    match body["errors"].get(0) {
        Some(e) => e["detail"]
            .as_str()
            .or(e["title"].as_str())
            .unwrap_or_default()
            .to_string(),
        None => super::one_line(&body.to_string()),
    }
}

/// The API as one project's member.
struct Api {
    http: reqwest::Client,
    url: String,
}

impl Api {
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), String> {
        let mut rq = self
            .http
            .request(method.clone(), format!("{}{path}", self.url))
            .header("OpenStack-API-Version", "container-infra latest")
            .header("Accept", "application/json");
        for (k, v) in IDENTITY {
            rq = rq.header(k, v);
        }
        if let Some(b) = body {
            rq = rq.json(&b);
        }
        let what = |e: reqwest::Error| format!("{method} {path}: {}", error_chain(&e));
        let resp = rq.send().await.map_err(what)?;
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await.map_err(what)?;
        let v = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        };
        Ok((status, v))
    }

    /// The cluster, `None` once it is gone.
    async fn cluster(&self, uuid: &str) -> Result<Option<Value>, String> {
        let (code, v) = self
            .call(Method::GET, &format!("/v1/clusters/{uuid}"), None)
            .await?;
        match code {
            200 => Ok(Some(v)),
            404 => Ok(None),
            c => Err(format!("GET the cluster answered {c}: {}", error_text(&v))),
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s += &format!(": {c}");
        cur = c.source();
    }
    s
}

const POLL: Duration = Duration::from_millis(100);

/// Until `GET /` answers.
async fn wait_ready(
    api: &Api,
    server: &mut Server,
    timeout: Duration,
) -> Result<StepOutcome, String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(e) = server.exited() {
            return Err(e);
        }
        if let Ok((200, _)) = api.call(Method::GET, "/", None).await {
            return Ok(StepOutcome::Passed(String::new()));
        }
        if Instant::now() > deadline {
            return Err(format!("no answer within {}", secs(timeout)));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Until the cluster's status is `want`; a `*_FAILED` ends it with its
/// reason.
async fn wait_status(
    api: &Api,
    server: &mut Server,
    uuid: &str,
    want: &str,
    timeout: Duration,
) -> Result<Value, String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(e) = server.exited() {
            return Err(e);
        }
        let Some(c) = api.cluster(uuid).await? else {
            return Err(format!("the cluster {uuid} is gone"));
        };
        let status = c["status"].as_str().unwrap_or_default();
        let reason = c["status_reason"].as_str().unwrap_or_default();
        if status == want {
            return Ok(c);
        }
        if status.ends_with("_FAILED") {
            return Err(format!("{status}: {reason}"));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "still {status} after {} (status_reason: {reason:?})",
                secs(timeout)
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Until the cluster answers 404; a `DELETE_FAILED` ends it.
async fn wait_gone(
    api: &Api,
    server: &mut Server,
    uuid: &str,
    timeout: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(e) = server.exited() {
            return Err(e);
        }
        let Some(c) = api.cluster(uuid).await? else {
            return Ok(());
        };
        let status = c["status"].as_str().unwrap_or_default();
        let reason = c["status_reason"].as_str().unwrap_or_default();
        if status.ends_with("_FAILED") {
            return Err(format!("{status}: {reason}"));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "still {status} after {} (status_reason: {reason:?})",
                secs(timeout)
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest::parse(
            "manifest-version = 1\n\
             [driver]\nname = \"hello\"\nversion = \"1.0.0\"\nwit = \"^1.0\"\n\
             description = \"d\"\ncomponent = \"hello.wasm\"\n\
             [[entry-points]]\nname = \"hello\"\nbeta = true\ndescription = \"d\"\n\
             provides = [{ server-type = \"vm\", os = \"fedora-coreos\", coe = \"kubernetes\" }]\n\
             [[entry-points]]\nname = \"hello_ga\"\ndescription = \"d\"\n\
             provides = [{ server-type = \"vm\", os = \"ubuntu\", coe = \"kubernetes\" }]\n",
        )
        .expect("manifest")
    }

    #[test]
    fn a_refused_label_is_label_equals_value() {
        assert_eq!(parse_label("size=11"), Ok(("size".into(), "11".into())));
        assert_eq!(parse_label("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert_eq!(parse_label("empty="), Ok(("empty".into(), String::new())));
        assert!(parse_label("size").is_err());
        assert!(parse_label("=11").is_err());
    }

    #[test]
    fn the_server_gets_the_package_granted_its_beta_entry_points_and_memory_kubernetes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let conf = dir.path().join("magnum.conf");
        let text = server_conf(dir.path(), 4242, Path::new("/cache"), &manifest());
        std::fs::write(&conf, &text).expect("write");
        // Options this binary knows, every one (no warning).
        let loaded = crate::options::load(&[conf], &[]).expect("loads");
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let o = loaded.options;
        let db = dir.path().join("magnum.sqlite");
        assert_eq!(
            o.database
                .connection
                .as_ref()
                .map(|c| c.expose().to_string()),
            Some(format!("sqlite:///{}", db.display()))
        );
        assert_eq!((o.api.host.as_str(), o.api.port), ("127.0.0.1", 4242));
        assert_eq!(
            o.drivers.drivers_path,
            [dir.path().join("drivers").display().to_string()]
        );
        assert_eq!(o.drivers.precompiled_cache_dir, "/cache");
        // The beta entry point only (the other is not beta), and the
        // fake driver all-in-one adds anyway.
        assert_eq!(o.drivers.enabled_beta_drivers, ["hello", "fake"]);
        assert!(
            text.contains("[capi]\nmanagement_cluster = memory\n"),
            "{text}"
        );
        let settings = crate::app::driver_settings(&o).expect("driver settings");
        assert_eq!(settings.drivers["hello"].grant_requested, Some(true));
    }

    #[test]
    fn magnums_error_body_is_recognised_with_its_status() {
        let body = json!({"errors": [{"request_id": "", "code": "400", "status": 400,
            "title": "Bad Request", "detail": "Label size must be between 1 and 10, not 11.",
            "links": []}]});
        assert_eq!(
            magnum_error(&body, 400).as_deref(),
            Some("Label size must be between 1 and 10, not 11.")
        );
        assert_eq!(magnum_error(&body, 409), None);
        assert_eq!(magnum_error(&json!({"message": "no"}), 400), None);
        assert_eq!(
            magnum_error(
                &json!({"errors": [{"status": 400, "title": "", "detail": "x"}]}),
                400
            ),
            None
        );
        assert_eq!(
            error_text(&body),
            "Label size must be between 1 and 10, not 11."
        );
        assert_eq!(error_text(&json!("plain")), "\"plain\"");
    }

    #[test]
    fn a_step_prints_its_outcome_and_time() {
        let step = |outcome| Step {
            name: "create → CREATE_COMPLETE".into(),
            outcome,
            took: Duration::from_millis(1234),
        };
        assert_eq!(
            step(StepOutcome::Passed(String::new())).to_string(),
            format!("ok      {:<34} {:>8}", "create → CREATE_COMPLETE", "1.2 s")
        );
        assert!(
            step(StepOutcome::Passed("why".into()))
                .to_string()
                .ends_with("1.2 s  why")
        );
        assert_eq!(
            step(StepOutcome::Failed("CREATE_FAILED: boom".into())).to_string(),
            "FAILED  create → CREATE_COMPLETE (1.2 s): CREATE_FAILED: boom"
        );
        assert_eq!(
            step(StepOutcome::Skipped("not supported".into())).to_string(),
            "skipped create → CREATE_COMPLETE: not supported"
        );
    }

    #[test]
    fn a_package_the_host_refuses_fails_the_first_check() {
        let r = not_loaded("hello", "not granted: kube v1/Secret");
        assert!(!r.passed());
        assert_eq!(r.failed_names(), ["describe-matches-manifest"]);
        assert!(
            r.to_string()
                .contains("the host refuses the package: not granted")
        );
    }

    #[test]
    fn how_a_status_arrived_is_read_from_the_servers_log() {
        let log = [
            r#"{"level":"INFO","message":"cluster status changed","cluster_uuid":"u1","from":"CREATE_IN_PROGRESS","to":"CREATE_COMPLETE","call":"poll-status"}"#,
            "not JSON",
            r#"{"level":"INFO","message":"cluster status changed","cluster_uuid":"u2","from":"CREATE_IN_PROGRESS","to":"CREATE_COMPLETE","call":"derive-status"}"#,
            r#"{"level":"INFO","message":"cluster status changed","cluster_uuid":"u1","from":"UPDATE_IN_PROGRESS","to":"UPDATE_COMPLETE","call":"derive-status"}"#,
        ]
        .join("\n");
        assert_eq!(
            status_call(&log, "u1", "CREATE_COMPLETE").as_deref(),
            Some("poll-status")
        );
        assert_eq!(
            status_call(&log, "u2", "CREATE_COMPLETE").as_deref(),
            Some("derive-status")
        );
        assert_eq!(status_call(&log, "u2", "UPDATE_COMPLETE"), None);
        let passed = |r: Result<StepOutcome, String>| match r {
            Ok(StepOutcome::Passed(note)) => Some(note),
            _ => None,
        };
        for watches in [false, true] {
            assert_eq!(
                passed(arrived(watches, Some("derive-status".into()))).as_deref(),
                Some("by derive-status over its watches")
            );
        }
        // Without watches, polling is the driver's design.
        assert_eq!(
            passed(arrived(false, Some("poll-status".into()))).as_deref(),
            Some("by poll-status")
        );
        assert_eq!(passed(arrived(false, None)).as_deref(), Some(""));
        // With watches, a status that did not come from them fails the step.
        let why = arrived(true, Some("poll-status".into()))
            .err()
            .unwrap_or_default();
        assert!(
            why.contains("declares watches, but the status arrived by poll-status"),
            "{why}"
        );
        assert!(arrived(true, None).is_err());
    }

    #[test]
    fn label_names_become_cluster_names() {
        assert_eq!(sanitize("kube_tag"), "kube-tag");
        assert_eq!(sanitize("size"), "size");
    }
}
