//! Faults that need no deployment: a full disk under the SQLite
//! `all-in-one`, slow and idle clients against one `api`.
//!
//! Each fault starts an `all-in-one` of its own (no Keystone, the built-in
//! lookups, the fake driver) and drives a load through it with a plain HTTP
//! client; every answer is counted in a [`Tally`], and whatever breaks a
//! promise (no answer, a refusal without Magnum's error body, a lost or
//! half-written row, a slow answer, unbounded memory) fails the step.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::tally::{Tally, magnum_error};
use crate::harness::{
    Check, Suite, binary, blocking_client, compiled_drivers_dir, free_port, in_ci, run_command,
    selected, stop_child, tail,
};

const DISK_FULL: &str = "disk full under the SQLite all-in-one";
const SLOW_CLIENTS: &str = "slow and idle clients against one api";

/// The two faults, each against an `all-in-one` of its own.
#[test]
fn faults_standalone() {
    if !selected() {
        return;
    }
    let mut suite = Suite::new("TestFaults", None);
    suite.step(DISK_FULL, disk_full);
    suite.step(SLOW_CLIENTS, slow_and_idle);
    suite.finish();
}

// ---------------------------------------------------------------- service

/// An `openkeel-magnum all-in-one` on a port of its own, stopped (SIGINT,
/// then SIGKILL after 10 s) when dropped.
struct AllInOne {
    child: Child,
    addr: SocketAddr,
    url: String,
    log: PathBuf,
    http: reqwest::blocking::Client,
}

impl AllInOne {
    /// Starts `all-in-one` in `dir` (its configuration and log there) with
    /// its SQLite database at `db`, and waits until `GET /` answers 200.
    fn start(dir: &Path, db: &Path) -> AllInOne {
        let port = free_port();
        let conf = dir.join("magnum.conf");
        std::fs::write(
            &conf,
            format!(
                "[DEFAULT]\nhost = okm-faults\n\n[api]\nhost = 127.0.0.1\nport = {port}\n\n\
                 [database]\nconnection = sqlite:///{}\n\n\
                 [drivers]\nprecompiled_cache_dir = {}\n",
                db.display(),
                compiled_drivers_dir().display()
            ),
        )
        .unwrap_or_else(|e| panic!("write magnum.conf: {e}"));
        let log = dir.join("service.log");
        let out = File::create(&log).unwrap_or_else(|e| panic!("service log: {e}"));
        let err = out
            .try_clone()
            .unwrap_or_else(|e| panic!("service log: {e}"));
        let child = Command::new(binary())
            .arg("all-in-one")
            .arg("--config-file")
            .arg(&conf)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start openkeel-magnum all-in-one: {e}"));
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let mut svc = AllInOne {
            child,
            addr,
            url: format!("http://{addr}"),
            log,
            http: blocking_client(Duration::from_secs(30)),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while svc.call("GET", "/", None).status != 200 {
            if let Some(how) = svc.exited() {
                panic!("all-in-one exited ({how}):\n{}", svc.output());
            }
            assert!(
                Instant::now() < deadline,
                "all-in-one did not answer GET / within 60 s:\n{}",
                svc.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        svc
    }

    /// How the process ended; `None` while it runs.
    fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("wait: {e}")),
        }
    }

    /// The process's resident memory (`VmRSS`), in KiB; 0 once it is gone.
    fn rss_kib(&self) -> u64 {
        rss_kib(self.child.id())
    }

    /// The last 8 KiB the process printed.
    fn output(&self) -> String {
        tail(
            &std::fs::read_to_string(&self.log).unwrap_or_default(),
            8192,
        )
    }

    /// Sends `method path` (with the JSON `body`) at the latest
    /// microversion, as the no-auth identity, with a 30 s timeout.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Answer {
        let started = Instant::now();
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or_default();
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.url))
            .header("Accept", "application/json")
            .header("OpenStack-API-Version", "container-infra latest");
        if let Some(b) = body {
            req = req
                .header("Content-Type", "application/json")
                .body(b.to_string());
        }
        let answer = req.send().and_then(|r| {
            let status = r.status().as_u16();
            r.bytes().map(|b| (status, b.to_vec()))
        });
        match answer {
            Ok((status, body)) => Answer {
                status,
                body,
                took: started.elapsed(),
                error: String::new(),
            },
            Err(e) => Answer {
                status: 0,
                body: Vec::new(),
                took: started.elapsed(),
                error: e.to_string(),
            },
        }
    }

    /// Stops the process (SIGINT, SIGKILL after 10 s); how it exited.
    fn stop(&mut self) -> String {
        if let Some(how) = self.exited() {
            return how;
        }
        match stop_child(&mut self.child, "-INT", Duration::from_secs(10)) {
            Some(status) => status.to_string(),
            None => "killed: it did not stop within 10 s of SIGINT".to_owned(),
        }
    }
}

impl Drop for AllInOne {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The resident memory (`VmRSS` of `/proc/<pid>/status`) of process `pid`,
/// in KiB; 0 when it cannot be read.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// `kib` in MiB, one decimal.
fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

/// One request's answer (status 0: none), its body and how long it took.
struct Answer {
    status: u16,
    body: Vec<u8>,
    took: Duration,
    /// Why there is no answer.
    error: String,
}

impl Answer {
    /// Whether the request succeeded (2xx).
    fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON (`Null` when it is not).
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The status and the start of the body, for a message.
    fn shown(&self) -> String {
        let end = self.body.len().min(300);
        format!(
            "{} {}",
            self.status,
            String::from_utf8_lossy(&self.body[..end])
        )
    }
}

/// Counts `a` as a request of `kind` (its wait, its refusal's title); no
/// answer, or a refusal without Magnum's error body, breaks a promise.
/// Returns whether it succeeded.
fn count(tally: &mut Tally, kind: &str, a: &Answer) -> bool {
    tally.record(kind, a.status);
    tally.slowest = tally.slowest.max(a.took);
    if a.status == 0 {
        tally.broken.push(format!(
            "{kind}: no answer after {:.1} s: {}",
            a.took.as_secs_f64(),
            a.error
        ));
        return false;
    }
    if a.ok() {
        return true;
    }
    tally.refused(a.status, &a.body);
    if let Err(e) = magnum_error(a.status, &a.body) {
        tally.broken.push(format!("{kind}: {e}"));
    }
    false
}

/// Creates cluster template `name` of the built-in image, network, keypair
/// and flavors; its uuid. Ends the step when refused.
fn create_template(c: &mut Check, svc: &AllInOne, name: &str) -> String {
    let a = svc.call("POST", "/v1/clustertemplates", Some(&template_body(name)));
    let uuid = a.json()["uuid"].as_str().unwrap_or_default().to_owned();
    if !a.ok() || uuid.is_empty() {
        c.fatal(format!(
            "create template {name}: {} {}",
            a.status,
            String::from_utf8_lossy(&a.body)
        ));
    }
    uuid
}

/// The body that creates cluster template `name` (see [`create_template`]).
fn template_body(name: &str) -> Value {
    json!({
        "name": name,
        "coe": "kubernetes",
        "image_id": "ubuntu-jammy-kube",
        "keypair_id": "default",
        "external_network_id": "public",
        "master_flavor_id": "m1.small",
        "flavor_id": "m1.small",
    })
}

/// The body that creates cluster `name` of template `template`.
fn cluster_body(name: &str, template: &str) -> Value {
    json!({"name": name, "cluster_template_id": template, "master_count": 1, "node_count": 1})
}

/// Sends the create of cluster `name` and counts it; the uuid of an
/// accepted create (also added to `tally.accepted`).
fn create_cluster(svc: &AllInOne, tally: &mut Tally, name: &str, template: &str) -> Option<String> {
    let a = svc.call("POST", "/v1/clusters", Some(&cluster_body(name, template)));
    if !count(tally, "create", &a) {
        return None;
    }
    let uuid = a.json()["uuid"].as_str().unwrap_or_default().to_owned();
    if uuid.is_empty() {
        tally
            .broken
            .push(format!("create {name}: {} without a uuid", a.status));
        return None;
    }
    tally.accepted.push(uuid.clone());
    Some(uuid)
}

/// Polls each of `uuids` until its status is final (no longer
/// `*_IN_PROGRESS`; `404` once gone), for at most `bound` in all; the last
/// status seen of each, by uuid.
fn settle(svc: &AllInOne, uuids: &[String], bound: Duration) -> BTreeMap<String, String> {
    let deadline = Instant::now() + bound;
    let mut states = BTreeMap::new();
    for uuid in uuids {
        loop {
            let a = svc.call("GET", &format!("/v1/clusters/{uuid}"), None);
            let state = match a.status {
                404 => "404".to_owned(),
                200 => a.json()["status"].as_str().unwrap_or_default().to_owned(),
                s => format!("HTTP {s}"),
            };
            let done = state == "404" || (a.ok() && !state.ends_with("_IN_PROGRESS"));
            states.insert(uuid.clone(), state);
            if done || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    states
}

/// Counts the final states of `states` in `tally.finals`; a state still in
/// progress (or no state) breaks a promise.
fn finals(tally: &mut Tally, states: &BTreeMap<String, String>, bound: Duration) {
    for (uuid, state) in states {
        *tally.finals.entry(state.clone()).or_default() += 1;
        if state.ends_with("_IN_PROGRESS") || state.starts_with("HTTP") {
            tally.broken.push(format!(
                "cluster {uuid}: {state} after {} s, not a final state",
                bound.as_secs()
            ));
        }
    }
}

/// Every cluster stored, by uuid (`GET /v1/clusters/detail`).
fn stored_clusters(svc: &AllInOne) -> Result<BTreeMap<String, Value>, String> {
    let a = svc.call("GET", "/v1/clusters/detail", None);
    if !a.ok() {
        return Err(format!(
            "GET /v1/clusters/detail: {} {}",
            a.status,
            String::from_utf8_lossy(&a.body)
        ));
    }
    Ok(a.json()["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|cl| {
            (
                cl["uuid"].as_str().unwrap_or_default().to_owned(),
                cl.clone(),
            )
        })
        .collect())
}

/// The fields of the JSON objects `was` and `now` that differ, but
/// `updated_at`.
fn changed(was: &Value, now: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let (a, b) = (
        was.as_object().unwrap_or(&empty),
        now.as_object().unwrap_or(&empty),
    );
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| *k != "updated_at" && a.get(*k) != b.get(*k))
        .map(|k| {
            format!(
                "{k}: {} -> {}",
                a.get(k).unwrap_or(&Value::Null),
                b.get(k).unwrap_or(&Value::Null)
            )
        })
        .collect()
}

/// The median and the 99th percentile of `samples`.
fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    if samples.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    samples.sort();
    let at = |p: usize| samples[(samples.len() * p / 100).min(samples.len() - 1)];
    (at(50), at(99))
}

/// Fails the step for each broken promise of `tally`, after printing its
/// line (with `more` appended).
fn conclude(c: &mut Check, tally: &Tally, fault: &str, more: &str) {
    eprintln!("{}{more}", tally.line(fault));
    for b in &tally.broken {
        c.error(b.clone());
    }
}

// -------------------------------------------------------------- disk full

/// How long after space is freed a create must be accepted again.
const RECOVERY: Duration = Duration::from_secs(30);

/// A tmpfs mounted on a directory, unmounted (lazily when busy) on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`mount -o size=`) on `dir`.
    fn mount(dir: &Path, size: &str) -> Result<Tmpfs, String> {
        let out = run_command(
            Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
                .arg(dir),
            Duration::from_secs(30),
        )?;
        if out.code != 0 {
            return Err(format!(
                "mount a tmpfs on {}: exit {}: {}",
                dir.display(),
                out.code,
                out.stderr.trim()
            ));
        }
        Ok(Tmpfs(dir.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let umount = |lazy: bool| {
            let mut cmd = Command::new("umount");
            if lazy {
                cmd.arg("-l");
            }
            run_command(cmd.arg(&self.0), Duration::from_secs(30)).is_ok_and(|o| o.code == 0)
        };
        if !umount(false) && !umount(true) {
            eprintln!("could not unmount {}", self.0.display());
        }
    }
}

/// Whether this process runs as root (the effective uid of
/// `/proc/self/status`).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
        .unwrap_or(false)
}

/// Writes `path` until its filesystem refuses even one byte (ENOSPC), and
/// checks that a new file cannot get a block either; the bytes written.
fn fill(path: &Path) -> Result<u64, String> {
    let full = |e: &std::io::Error| e.kind() == ErrorKind::StorageFull;
    let mut f = File::create(path).map_err(|e| format!("create {}: {e}", path.display()))?;
    let mut written = 0u64;
    for size in [1 << 20, 4096, 1] {
        let chunk = vec![0xa5u8; size];
        loop {
            match f.write(&chunk) {
                Ok(0) => break,
                Ok(n) => written += n as u64,
                Err(e) if full(&e) => break,
                Err(e) => return Err(format!("fill {}: {e}", path.display())),
            }
        }
    }
    let probe = path.with_extension("probe");
    let refused = File::create(&probe).and_then(|mut p| p.write_all(&[0u8; 4096]));
    let _ = std::fs::remove_file(&probe);
    match refused {
        Err(e) if full(&e) => Ok(written),
        other => Err(format!(
            "after {written} bytes the filesystem still took 4 KiB more: {other:?}"
        )),
    }
}

/// `PRAGMA integrity_check` of the SQLite database `db` (the service
/// stopped): its rows, `ok` when the file is sound.
fn integrity(db: &Path) -> Result<String, String> {
    use sqlx::Connection as _;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    rt.block_on(async {
        let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(db);
        let mut conn = sqlx::sqlite::SqliteConnection::connect_with(&opts)
            .await
            .map_err(|e| format!("open {}: {e}", db.display()))?;
        let rows: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_all(&mut conn)
            .await
            .map_err(|e| format!("PRAGMA integrity_check: {e}"))?;
        let _ = conn.close().await;
        Ok(rows.join("; "))
    })
}

/// The SQLite database of an `all-in-one` on a small tmpfs: clusters are
/// stored, the filesystem is filled to the last byte, and a load of creates,
/// template updates, deletes and lists runs for 10 s; every answer is a
/// success or Magnum's error body, and the process lives on. Once space is
/// freed, requests succeed again, every accepted create reaches a final
/// state and is stored, no refused create left a row, nothing stored before
/// changed but by a successful request, and the file passes
/// `PRAGMA integrity_check`.
fn disk_full(c: &mut Check) {
    if !is_root() {
        if in_ci() {
            c.fatal("mounting a tmpfs needs root, and CI runs as root");
        }
        eprintln!("skipped: {DISK_FULL}: mounting a tmpfs needs root");
        return;
    }
    let work = tempfile::tempdir().unwrap_or_else(|e| c.fatal(format!("tempdir: {e}")));
    let mnt = work.path().join("db");
    std::fs::create_dir(&mnt).unwrap_or_else(|e| c.fatal(format!("{}: {e}", mnt.display())));
    // Dropped in reverse order: the service stops before the unmount.
    let _tmpfs = Tmpfs::mount(&mnt, "8m").unwrap_or_else(|e| c.fatal(e));
    let db = mnt.join("magnum.sqlite");
    let mut svc = AllInOne::start(work.path(), &db);
    let mut tally = Tally::default();

    // What is stored before the fault.
    let template = create_template(c, &svc, "disk-ct");
    let spare = create_template(c, &svc, "disk-spare");
    for i in 0..4 {
        if create_cluster(&svc, &mut tally, &format!("before-{i}"), &template).is_none() {
            c.fatal(format!(
                "create before-{i} before the fault: {:?}",
                tally.broken
            ));
        }
    }
    let bound = Duration::from_secs(60);
    for (uuid, state) in settle(&svc, &tally.accepted, bound) {
        if state != "CREATE_COMPLETE" {
            c.fatal(format!("cluster {uuid} before the fault: {state}"));
        }
    }
    let before = stored_clusters(&svc).unwrap_or_else(|e| c.fatal(e));
    let template_before = svc
        .call("GET", &format!("/v1/clustertemplates/{template}"), None)
        .json();
    let spare_dns = svc
        .call("GET", &format!("/v1/clustertemplates/{spare}"), None)
        .json()["dns_nameserver"]
        .clone();
    let victims: Vec<String> = before.keys().take(2).cloned().collect();

    // The fault.
    let filler = mnt.join("filler");
    let filled = fill(&filler).unwrap_or_else(|e| c.fatal(e));
    let sent_before: usize = tally.sent.values().sum();
    let wal = std::fs::metadata(db.with_extension("sqlite-wal")).map_or(0, |m| m.len());
    let mut deleted = BTreeSet::new();
    let mut refused_creates = Vec::new();
    let mut patched: Option<Value> = None;
    let started = Instant::now();
    let mut n = 0u32;
    while started.elapsed() < Duration::from_secs(10) {
        n += 1;
        let (kind, a) = match n % 5 {
            0 => {
                let name = format!("full-{n}");
                let a = svc.call(
                    "POST",
                    "/v1/clusters",
                    Some(&cluster_body(&name, &template)),
                );
                match a.json()["uuid"].as_str() {
                    Some(uuid) if a.ok() => tally.accepted.push(uuid.to_owned()),
                    _ if a.status != 0 => refused_creates.push(name),
                    _ => {}
                }
                ("create", a)
            }
            1 => ("list", svc.call("GET", "/v1/clusters", None)),
            2 => {
                let dns = json!(format!("10.0.{}.{}", n / 250 % 250, n % 250 + 1));
                let patch = json!([{"op": "replace", "path": "/dns_nameserver", "value": dns}]);
                let a = svc.call(
                    "PATCH",
                    &format!("/v1/clustertemplates/{spare}"),
                    Some(&patch),
                );
                if a.ok() {
                    patched = Some(dns);
                }
                ("update template", a)
            }
            3 => match victims.iter().find(|v| !deleted.contains(*v)) {
                Some(v) => {
                    let a = svc.call("DELETE", &format!("/v1/clusters/{v}"), None);
                    if a.ok() {
                        deleted.insert(v.clone());
                    }
                    ("delete", a)
                }
                None => ("list", svc.call("GET", "/v1/clusters/detail", None)),
            },
            _ => ("list", svc.call("GET", "/v1/clustertemplates", None)),
        };
        count(&mut tally, kind, &a);
        if let Some(how) = svc.exited() {
            tally.broken.push(format!(
                "all-in-one exited during the fault ({how}):\n{}",
                svc.output()
            ));
            conclude(c, &tally, DISK_FULL, "");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // What users saw while the disk was full (the tally's line counts the
    // refusals of the whole step).
    let seen: Vec<String> = tally
        .titles
        .iter()
        .map(|(t, n)| format!("{n}x {t:?}"))
        .collect();
    let during = format!(
        "; while full ({filled} bytes filled the disk, the WAL had {wal} bytes): {} requests, refused as {}",
        tally.sent.values().sum::<usize>() - sent_before,
        if seen.is_empty() {
            "nothing".to_owned()
        } else {
            seen.join(", ")
        }
    );

    // Space again: requests succeed within a bound.
    std::fs::remove_file(&filler).unwrap_or_else(|e| c.fatal(format!("remove the filler: {e}")));
    let freed = Instant::now();
    for k in 0.. {
        let name = format!("after-{k}");
        if create_cluster(&svc, &mut tally, &name, &template).is_some() {
            tally.recovery = Some(freed.elapsed());
            break;
        }
        refused_creates.push(name);
        if freed.elapsed() > RECOVERY {
            tally.broken.push(format!(
                "no create was accepted within {} s of freeing the disk; the service's log ends:\n{}",
                RECOVERY.as_secs(),
                tail(&svc.output(), 1500)
            ));
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }

    // Every accepted create and every accepted delete reaches a final state.
    let bound = Duration::from_secs(120);
    let states = settle(&svc, &tally.accepted, bound);
    finals(&mut tally, &states, bound);

    // What is stored: what was, but what successful requests changed.
    match stored_clusters(&svc) {
        Err(e) => tally.broken.push(format!("after the fault: {e}")),
        Ok(after) => {
            for (uuid, was) in &before {
                match after.get(uuid) {
                    Some(_) if deleted.contains(uuid) => tally
                        .broken
                        .push(format!("cluster {uuid}: deleted (204) but still stored")),
                    None if !deleted.contains(uuid) => tally
                        .broken
                        .push(format!("cluster {uuid}: stored before the fault, lost")),
                    Some(now) => {
                        let diff = changed(was, now);
                        if !diff.is_empty() {
                            tally.broken.push(format!(
                                "cluster {uuid}: changed by the fault: {}",
                                diff.join(", ")
                            ));
                        }
                    }
                    None => {}
                }
            }
            for uuid in &tally.accepted {
                let gone = states.get(uuid).is_some_and(|s| s == "404");
                let accounted = after.contains_key(uuid) || (deleted.contains(uuid) && gone);
                if !accounted {
                    tally.broken.push(format!(
                        "cluster {uuid}: its create was accepted (202), not stored"
                    ));
                }
            }
            for name in &refused_creates {
                if let Some(cl) = after.values().find(|cl| cl["name"] == name.as_str()) {
                    tally.broken.push(format!(
                        "create {name} was refused but left cluster {} ({})",
                        cl["uuid"], cl["status"]
                    ));
                }
            }
        }
    }
    let template_now = svc
        .call("GET", &format!("/v1/clustertemplates/{template}"), None)
        .json();
    let diff = changed(&template_before, &template_now);
    if !diff.is_empty() {
        tally.broken.push(format!(
            "template {template}: changed by the fault: {}",
            diff.join(", ")
        ));
    }
    let want = patched.unwrap_or(spare_dns);
    let got = svc
        .call("GET", &format!("/v1/clustertemplates/{spare}"), None)
        .json()["dns_nameserver"]
        .clone();
    if got != want {
        tally.broken.push(format!(
            "template {spare}: dns_nameserver {got}, but the last update that succeeded set {want}"
        ));
    }
    let patch = json!([{"op": "replace", "path": "/dns_nameserver", "value": "9.9.9.9"}]);
    let a = svc.call(
        "PATCH",
        &format!("/v1/clustertemplates/{spare}"),
        Some(&patch),
    );
    if !count(&mut tally, "update template", &a) {
        tally
            .broken
            .push(format!("update template after the fault: {}", a.shown()));
    }

    // The file itself, with the service stopped.
    let how = svc.stop();
    if !how.contains("exit status: 0") {
        tally.broken.push(format!(
            "all-in-one stopped on SIGINT with {how}:\n{}",
            svc.output()
        ));
    }
    let (Ok(check) | Err(check)) = integrity(&db);
    if check != "ok" {
        tally
            .broken
            .push(format!("PRAGMA integrity_check: {check}"));
    }
    let more = format!("{during}; stopped on SIGINT with {how}; PRAGMA integrity_check: {check}");
    conclude(c, &tally, DISK_FULL, &more);
}

// ---------------------------------------------------- slow and idle clients

/// The idle connections, half of them silent, half stopped in the middle
/// of their headers.
const IDLE: usize = 1000;
/// How long the idle connections are held before looking at what became of
/// them (longer than hyper's 30 s header timeout, when one is set).
const IDLE_HOLD: Duration = Duration::from_secs(40);
/// How long the normal client's load lasts.
const LOAD: Duration = Duration::from_secs(20);
/// The slowest answer the normal client accepts.
const SLOWEST: Duration = Duration::from_secs(2);
/// The most the service's resident memory may grow.
const RSS_GROWTH_KIB: u64 = 64 * 1024;

/// What became of a connection the service has not answered: `open`,
/// `closed`, `reset`, or the status line of an answer.
fn connection_state(s: &mut TcpStream) -> String {
    if let Err(e) = s.set_nonblocking(true) {
        return format!("unknown ({e})");
    }
    let mut buf = [0u8; 512];
    match s.read(&mut buf) {
        Ok(0) => "closed".to_owned(),
        Ok(n) => {
            let text = String::from_utf8_lossy(&buf[..n]);
            format!("answered {:?}", text.lines().next().unwrap_or_default())
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => "open".to_owned(),
        Err(_) => "reset".to_owned(),
    }
}

/// Sends `POST /v1/clusters` declaring a 200-byte body, then the body one
/// byte a second until `stop`; what the service did, and when.
fn slow_client(addr: SocketAddr, template: &str, stop: &AtomicBool) -> String {
    let mut body = cluster_body("slow", template).to_string().into_bytes();
    body.resize(200, b' ');
    let head = format!(
        "POST /v1/clusters HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nOpenStack-API-Version: container-infra latest\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    let mut s = match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
        Ok(s) => s,
        Err(e) => return format!("could not connect: {e}"),
    };
    let began = Instant::now();
    if let Err(e) = s.write_all(head.as_bytes()) {
        return format!("could not send the headers: {e}");
    }
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut sent = 0;
    let mut buf = [0u8; 512];
    loop {
        let after = began.elapsed().as_secs_f64();
        if stop.load(Ordering::Relaxed) {
            return format!(
                "no answer after {after:.0} s ({sent} of {} body bytes sent), the connection still open",
                body.len()
            );
        }
        if sent < body.len() {
            if let Err(e) = s.write_all(&body[sent..=sent]) {
                return format!(
                    "the connection was closed after {after:.1} s ({sent} bytes sent): {e}"
                );
            }
            sent += 1;
        }
        match s.read(&mut buf) {
            Ok(0) => {
                return format!(
                    "the service closed the connection after {after:.1} s ({sent} bytes sent)"
                );
            }
            Ok(n) => {
                let text = String::from_utf8_lossy(&buf[..n]);
                return format!(
                    "answered after {after:.1} s ({sent} bytes sent): {:?}",
                    text.lines().next().unwrap_or_default()
                );
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => {
                return format!(
                    "the connection was reset after {after:.1} s ({sent} bytes sent): {e}"
                );
            }
        }
    }
}

/// One `all-in-one` holding 1,000 idle connections (half silent, half
/// stopped in the middle of their headers) and a client sending its body
/// one byte a second, while a normal client's mixed load runs for 20 s:
/// every request of the normal client is answered within 2 s, the resident
/// memory stays within 64 MiB of the start, and the process is healthy
/// once the connections close. What the service did with the idle and
/// slow connections is measured and printed.
fn slow_and_idle(c: &mut Check) {
    let work = tempfile::tempdir().unwrap_or_else(|e| c.fatal(format!("tempdir: {e}")));
    let mut svc = AllInOne::start(work.path(), &work.path().join("magnum.sqlite"));
    let mut tally = Tally::default();
    let template = create_template(c, &svc, "slow-ct");
    let rss_start = svc.rss_kib();
    let peak = Arc::new(AtomicU64::new(rss_start));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, stop, pid) = (peak.clone(), stop.clone(), svc.child.id());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };

    let opened = Instant::now();
    let partial = format!(
        "GET /v1/clusters HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n",
        svc.addr
    );
    let mut idle = Vec::with_capacity(IDLE);
    for i in 0..IDLE {
        match TcpStream::connect_timeout(&svc.addr, Duration::from_secs(5)) {
            Ok(mut s) => {
                if i % 2 == 1
                    && let Err(e) = s.write_all(partial.as_bytes())
                {
                    c.error(format!("idle connection {i}: {e}"));
                }
                idle.push(s);
            }
            Err(e) => {
                c.error(format!("idle connection {i}: {e}"));
                break;
            }
        }
    }
    // Let the service take them all in before measuring what they cost.
    std::thread::sleep(Duration::from_millis(500));
    let rss_idle = svc.rss_kib();
    let slow = {
        let (stop, addr, template) = (stop.clone(), svc.addr, template.clone());
        std::thread::spawn(move || slow_client(addr, &template, &stop))
    };

    // The normal client.
    let mut latencies = Vec::new();
    let mut clusters: Vec<String> = Vec::new();
    let started = Instant::now();
    let mut n = 0u32;
    while started.elapsed() < LOAD {
        n += 1;
        let (kind, a) = if n % 100 == 1 && clusters.len() < 4 {
            let name = format!("steady-{n}");
            let a = svc.call(
                "POST",
                "/v1/clusters",
                Some(&cluster_body(&name, &template)),
            );
            if let Some(uuid) = a.json()["uuid"].as_str().filter(|_| a.ok()) {
                clusters.push(uuid.to_owned());
                tally.accepted.push(uuid.to_owned());
            }
            ("create", a)
        } else if n % 50 == 25 {
            let body = template_body(&format!("steady-ct-{n}"));
            (
                "create template",
                svc.call("POST", "/v1/clustertemplates", Some(&body)),
            )
        } else {
            match (n % 4, clusters.last()) {
                (0, _) => ("list", svc.call("GET", "/v1/clusters", None)),
                (1, _) => (
                    "get",
                    svc.call("GET", &format!("/v1/clustertemplates/{template}"), None),
                ),
                (2, _) => ("list", svc.call("GET", "/v1/clustertemplates", None)),
                (_, Some(uuid)) => (
                    "get",
                    svc.call("GET", &format!("/v1/clusters/{uuid}"), None),
                ),
                (_, None) => ("list", svc.call("GET", "/v1/clusters/detail", None)),
            }
        };
        latencies.push(a.took);
        if !count(&mut tally, kind, &a) && a.status != 0 {
            tally.broken.push(format!("{kind}: refused: {}", a.shown()));
        }
        if a.took > SLOWEST {
            tally.broken.push(format!(
                "{kind}: answered in {:.2} s (more than {} s)",
                a.took.as_secs_f64(),
                SLOWEST.as_secs()
            ));
        }
        if let Some(how) = svc.exited() {
            tally.broken.push(format!(
                "all-in-one exited under the load ({how}):\n{}",
                svc.output()
            ));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }

    // What became of the idle and slow connections.
    std::thread::sleep(IDLE_HOLD.saturating_sub(opened.elapsed()));
    let mut idle_states: [BTreeMap<String, usize>; 2] = Default::default();
    for (i, s) in idle.iter_mut().enumerate() {
        *idle_states[i % 2].entry(connection_state(s)).or_default() += 1;
    }
    let held = opened.elapsed().as_secs();
    stop.store(true, Ordering::Relaxed);
    let slow = slow
        .join()
        .unwrap_or_else(|_| "the slow client panicked".to_owned());
    let _ = sampler.join();
    let rss_end = svc.rss_kib();
    let rss_peak = peak.load(Ordering::Relaxed).max(rss_end);
    if rss_peak.saturating_sub(rss_start) > RSS_GROWTH_KIB {
        tally.broken.push(format!(
            "resident memory grew from {} to {} MiB (more than {} MiB)",
            rss_start / 1024,
            rss_peak / 1024,
            RSS_GROWTH_KIB / 1024
        ));
    }

    // Healthy once the connections are gone.
    drop(idle);
    std::thread::sleep(Duration::from_millis(500));
    let rss_closed = svc.rss_kib();
    let a = svc.call("GET", "/", None);
    if a.status != 200 {
        tally.broken.push(format!(
            "GET / after the idle connections closed: {} {}",
            a.status, a.error
        ));
    }
    if let Some(how) = svc.exited() {
        tally
            .broken
            .push(format!("all-in-one exited ({how}):\n{}", svc.output()));
    }
    let bound = Duration::from_secs(60);
    let states = settle(&svc, &tally.accepted, bound);
    finals(&mut tally, &states, bound);

    let (p50, p99) = percentiles(&mut latencies);
    let shown = |m: &BTreeMap<String, usize>| {
        m.iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let more = format!(
        "; latency p50 {:.1} ms p99 {:.1} ms; RSS {} MiB at the start, {} with the idle \
         connections, {} at the peak, {} after the load, {} once they closed; \
         after {held} s the {} silent connections were {}, the {} with partial headers {}; \
         slow client: {slow}",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        mib(rss_start),
        mib(rss_idle),
        mib(rss_peak),
        mib(rss_end),
        mib(rss_closed),
        idle_states[0].values().sum::<usize>(),
        shown(&idle_states[0]),
        idle_states[1].values().sum::<usize>(),
        shown(&idle_states[1]),
    );
    conclude(c, &tally, SLOW_CLIENTS, &more);
}
