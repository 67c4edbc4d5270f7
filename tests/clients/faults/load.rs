//! The steady mixed load a fault is injected under: a few clients creating,
//! resizing, deleting, reading and listing clusters through the load
//! balancer, each answer recorded and checked as it arrives.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::tally::{Tally, magnum_error};
use crate::harness::blocking_client;

/// Clients of the load.
const CLIENTS: usize = 3;
/// The pause of each client between two requests.
const PAUSE: Duration = Duration::from_millis(150);
/// Clusters the load keeps at most (it deletes above).
const MAX_LIVE: usize = 5;
/// How long a client waits for an answer.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the load goes and as whom.
#[derive(Clone)]
pub struct Target {
    /// The load balancer in front of the `api` processes.
    pub url: String,
    pub token: String,
    pub template: String,
}

/// What the clients share while they run.
#[derive(Default)]
struct Shared {
    tally: Tally,
    /// The clusters of the load, by uuid, with the status last read.
    live: BTreeMap<String, String>,
    /// When a server error (or no answer) was last seen.
    last_failure: Option<Instant>,
}

/// A running load; [`Load::stop`] ends it and returns what it saw.
pub struct Load {
    stop: Arc<AtomicBool>,
    shared: Arc<Mutex<Shared>>,
    clients: Vec<JoinHandle<()>>,
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a status is final (nothing more happens without a request).
pub fn is_final(status: &str) -> bool {
    status.ends_with("_COMPLETE") || status.ends_with("_FAILED") || status == "404"
}

/// The body of a create of cluster `name`: one master, one worker, and a
/// create timeout of 4 minutes, the deadline of a create whose `api` died
/// while its job was in the driver's create.
pub fn create_body(name: &str, template: &str) -> Value {
    json!({"name": name, "cluster_template_id": template, "node_count": 1,
           "master_count": 1, "create_timeout": 4})
}

/// One request; `(status, body)`, status 0 when no answer came.
pub fn send(
    http: &reqwest::blocking::Client,
    t: &Target,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Vec<u8>) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut req = http
        .request(method, format!("{}{path}", t.url))
        .header("X-Auth-Token", &t.token)
        .header("OpenStack-API-Version", "container-infra 1.10")
        .header("Accept", "application/json");
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    match req.send() {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.bytes().map(|b| b.to_vec()).unwrap_or_default())
        }
        Err(_) => (0, Vec::new()),
    }
}

impl Load {
    /// Starts the clients on the clusters `live` (those an earlier load
    /// left). A server error whose status is in `allowed`
    /// (where Magnum answers one too) must still carry Magnum's body;
    /// `lb_errors` admits the load balancer's own 502 for a request whose
    /// `api` process was killed under it.
    pub fn start(
        target: &Target,
        live: BTreeMap<String, String>,
        allowed: &'static [u16],
        lb_errors: bool,
    ) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(Shared {
            live,
            ..Shared::default()
        }));
        let seq = Arc::new(AtomicUsize::new(0));
        let clients = (0..CLIENTS)
            .map(|n| {
                let (stop, shared, seq, t) =
                    (stop.clone(), shared.clone(), seq.clone(), target.clone());
                std::thread::spawn(move || {
                    let http = blocking_client(CLIENT_TIMEOUT);
                    let mut step = n;
                    while !stop.load(Ordering::SeqCst) {
                        one(&http, &t, &shared, &seq, step, allowed, lb_errors);
                        step += 1;
                        std::thread::sleep(PAUSE);
                    }
                })
            })
            .collect();
        Load {
            stop,
            shared,
            clients,
        }
    }

    /// Ends the load; returns its tally, the clusters it left and when a
    /// request last failed on the server's side.
    pub fn stop(mut self) -> (Tally, BTreeMap<String, String>, Option<Instant>) {
        self.end();
        let shared = std::mem::take(&mut *lock(&self.shared));
        (shared.tally, shared.live, shared.last_failure)
    }

    fn end(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for c in self.clients.drain(..) {
            let _ = c.join();
        }
    }
}

impl Drop for Load {
    /// A fault that panicked leaves no client running into the next.
    fn drop(&mut self) {
        self.end();
    }
}

/// The request of step `step`: the load cycles through reads, a create
/// (while fewer than [`MAX_LIVE`] clusters exist), a resize of a cluster at
/// rest and, near [`MAX_LIVE`], a delete of one at rest or failed.
fn one(
    http: &reqwest::blocking::Client,
    t: &Target,
    shared: &Mutex<Shared>,
    seq: &AtomicUsize,
    step: usize,
    allowed: &[u16],
    lb_errors: bool,
) {
    // Clusters at rest are resized; those at rest or failed deleted.
    let (live, rest, done) = {
        let s = lock(shared);
        let with = |f: fn(&str) -> bool| -> Vec<String> {
            s.live
                .iter()
                .filter(|(_, st)| f(st))
                .map(|(u, _)| u.clone())
                .collect()
        };
        (
            s.live.len(),
            with(|st| st.ends_with("_COMPLETE")),
            with(is_final),
        )
    };
    let (kind, method, path, body) = match step % 6 {
        0 | 3 => ("list", "GET", "/v1/clusters".to_owned(), None),
        1 if live < MAX_LIVE => {
            let n = seq.fetch_add(1, Ordering::SeqCst);
            let name = format!("fault-{}-{n}", std::process::id());
            let body = create_body(&name, &t.template);
            ("create", "POST", "/v1/clusters".to_owned(), Some(body))
        }
        2 if !rest.is_empty() => {
            let uuid = &rest[step % rest.len()];
            let body = json!({"node_count": 1 + (step % 3)});
            (
                "resize",
                "POST",
                format!("/v1/clusters/{uuid}/actions/resize"),
                Some(body),
            )
        }
        4 if live >= MAX_LIVE - 1 && !done.is_empty() => {
            let uuid = &done[step % done.len()];
            ("delete", "DELETE", format!("/v1/clusters/{uuid}"), None)
        }
        _ => ("detail", "GET", "/v1/clusters/detail".to_owned(), None),
    };
    let sent = Instant::now();
    let (status, raw) = send(http, t, method, &path, body.as_ref());
    let took = sent.elapsed();
    let mut s = lock(shared);
    s.tally.record(kind, status);
    if took > s.tally.slowest {
        s.tally.slowest = took;
        s.tally.slowest_request = format!("{method} {path} {status}");
    }
    if status >= 300 {
        s.tally.refused(status, &raw);
    }
    match status {
        200..=299 => {}
        0 => {
            s.last_failure = Some(Instant::now());
            s.tally.broken.push(format!(
                "{method} {path}: no answer within {CLIENT_TIMEOUT:?}"
            ));
        }
        502 if lb_errors => s.last_failure = Some(Instant::now()),
        _ => {
            if status >= 500 {
                s.last_failure = Some(Instant::now());
                if !allowed.contains(&status) {
                    s.tally.broken.push(format!(
                        "{method} {path}: {status} where Magnum answers none"
                    ));
                }
            }
            if let Err(e) = magnum_error(status, &raw) {
                s.tally.broken.push(format!("{method} {path}: {e}"));
            }
        }
    }
    let v: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let changed = |s: &mut Shared, uuid: &str, action: &str, status: &str| {
        *s.tally
            .changes
            .entry((uuid.to_owned(), action.to_owned()))
            .or_default() += 1;
        s.live.insert(uuid.to_owned(), status.to_owned());
    };
    match (kind, status) {
        ("create", 202) => {
            if let Some(uuid) = v["uuid"].as_str() {
                s.tally.accepted.push(uuid.to_owned());
                changed(&mut s, uuid, "create", "CREATE_IN_PROGRESS");
            }
        }
        ("delete", 204) => {
            if let Some(uuid) = path.rsplit('/').next() {
                changed(&mut s, uuid, "delete", "DELETE_IN_PROGRESS");
            }
        }
        ("resize", 202) => {
            if let Some(uuid) = path.split('/').nth(3) {
                changed(&mut s, uuid, "update", "UPDATE_IN_PROGRESS");
            }
        }
        // Magnum notifies the failure of a resize it refuses for the
        // cluster's status.
        ("resize", 409) => {
            if let Some(uuid) = path.split('/').nth(3) {
                *s.tally
                    .changes
                    .entry((uuid.to_owned(), "update".to_owned()))
                    .or_default() += 1;
            }
        }
        ("list", 200) => {
            // The listed statuses of the load's clusters; one missing from
            // the list was deleted.
            let listed: BTreeMap<String, String> = v["clusters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| {
                    Some((
                        c["uuid"].as_str()?.to_owned(),
                        c["status"].as_str()?.to_owned(),
                    ))
                })
                .collect();
            let mine: Vec<String> = s.live.keys().cloned().collect();
            for uuid in mine {
                match listed.get(&uuid) {
                    Some(st) => {
                        s.live.insert(uuid, st.clone());
                    }
                    None => {
                        s.live.remove(&uuid);
                    }
                }
            }
        }
        _ => {}
    }
}
