//! The fault suite: a small deployment under a steady load while its
//! dependencies and its own processes fail, one fault at a time.
//!
//! The deployment, everything on 127.0.0.1: three `api` processes behind
//! nginx, two `reconciler`s (one holds the Lease, the other stands by), the
//! Cluster API driver on a kube-apiserver + etcd with the Cluster API CRDs
//! and the simulated controllers of `tests/e2e/capi_sim.rs`, MariaDB,
//! Keystone, RabbitMQ (notifications to a topic of the suite's own, also
//! logged) and the OpenStack double. Three clients create, resize, delete,
//! read and list clusters through nginx ([`load`]) while one fault is
//! injected; after each fault every accepted cluster must reach a final
//! state, every answer must have been Magnum's (a server error only where
//! Magnum gives one), no cluster may have two terminal notifications for one
//! transition, and every notification logged must reach the broker exactly
//! once (beyond what a killed process had not sent yet). A PostgreSQL
//! restart runs on a second deployment of one `api`; a full disk and slow
//! and idle clients run apart ([`edge`]).
//!
//! Each fault prints one line: the requests sent, the answers by status, the
//! refusals' titles, the clusters accepted and their final states, the
//! slowest answer and the time to recover. Needs Keystone
//! (`scripts/ci/keystone.sh`), the kube-apiserver, etcd and CRDs of
//! `scripts/ci/kube-apiserver.sh`, `OKM_TEST_MYSQL_URL`, `OKM_TEST_POSTGRES_URL`,
//! `OKM_TEST_RABBITMQ_URL`, `OKM_TEST_RABBITMQ_CTL` and `OKM_NGINX`; it
//! stops and restarts the machine's MariaDB, PostgreSQL, Keystone and
//! RabbitMQ, so `.ci/run` runs it alone, after the other suites.

mod edge;
mod load;
mod outage;
pub mod tally;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use self::load::{Load, Target, create_body, is_final, send};
use self::outage::{Started, find, signal};
use self::tally::Tally;
use crate::capi_sim::{Running, Sim};
use crate::harness::{
    EXT_NET_NAME, FLAVOR_SMALL, IMAGE_NAME, Stack, StackOptions, Suite, blocking_client, exclusive,
    free_port, keystone, logged_notifications, need_env, selected, stop_child,
};
use crate::kube::{CapiApiServer, capi_api_server};
use crate::sql::FreshDb;

const NS: &str = "magnum-system";
/// `[capi]/lease_duration`: a standby takes over within it.
const LEASE_SECONDS: u64 = 4;
/// How long a dependency stays down.
const OUTAGE: Duration = Duration::from_secs(30);
/// The load before a fault, and after it is healed.
const BEFORE: Duration = Duration::from_secs(4);
const AFTER: Duration = Duration::from_secs(6);
/// The longest an answer may take while nothing it needs is blocked, and
/// while the database is (MariaDB's lock wait is 50 s).
const QUICK: Duration = Duration::from_secs(5);
const SLOW: Duration = Duration::from_secs(55);
/// While the management cluster is away: its calls' timeout
/// (`[capi]/request_timeout`, 30 s) and a margin.
const KUBE_WAIT: Duration = Duration::from_secs(35);
/// How long the suite watches the creates a killed `api` accepted before
/// it leaves them to the reconciler (see [`Deployment::orphans_step`]), and
/// the age at which the reconciler resumes one (the service's constant).
const ORPHANS_SEEN: Duration = Duration::from_secs(20);
const CREATE_ORPHAN_AGE: Duration = Duration::from_secs(240);
/// Every accepted cluster is in a final state within this after a fault.
const SETTLE: Duration = Duration::from_secs(150);

/// nginx in front of the `api` processes, stopped on drop.
struct Balancer {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Balancer {
    /// nginx on a free port, balancing over `ports` (round robin; a
    /// request that could not reach one `api` is tried on the next, as an
    /// operator's configuration would).
    fn start(nginx: &str, ports: &[u16]) -> Balancer {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let port = free_port();
        let servers: String = ports
            .iter()
            .map(|p| format!("    server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;\n"))
            .collect();
        let d = dir.path().display();
        let conf = format!(
            "daemon off;\nworker_processes 1;\nuser root;\npid {d}/nginx.pid;\n\
             error_log {d}/error.log;\nevents {{ worker_connections 4096; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n\
             proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n\
             uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
             upstream magnum {{\n{servers}    keepalive 16;\n  }}\n\
             server {{\n    listen 127.0.0.1:{port};\n    location / {{\n\
             proxy_pass http://magnum;\n      proxy_http_version 1.1;\n\
             proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n\
             proxy_connect_timeout 2s;\n      proxy_read_timeout 120s;\n\
             proxy_next_upstream error timeout;\n    }}\n  }}\n}}\n"
        );
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, conf).unwrap_or_else(|e| panic!("nginx.conf: {e}"));
        let child = Command::new(nginx)
            .arg("-c")
            .arg(&path)
            .arg("-p")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {nginx}: {e}"));
        let url = format!("http://127.0.0.1:{port}");
        let http = blocking_client(Duration::from_secs(5));
        let deadline = Instant::now() + Duration::from_secs(30);
        while http.get(format!("{url}/")).send().is_err() {
            assert!(Instant::now() < deadline, "nginx did not answer on {url}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Balancer {
            child,
            url,
            _dir: dir,
        }
    }
}

impl Drop for Balancer {
    /// nginx's fast shutdown (SIGTERM), which ends its workers too; a
    /// SIGKILL would leave them running.
    fn drop(&mut self) {
        stop_child(&mut self.child, "-TERM", Duration::from_secs(10));
    }
}

/// The notifications the broker delivered to the suite's topic.
struct Broker {
    url: String,
    ctl: String,
    topic: String,
    /// Message ids drained from the topic's queues, with how many times.
    delivered: BTreeMap<String, usize>,
}

impl Broker {
    /// Takes every message now in the topic's queues.
    fn drain(&mut self, rt: &tokio::runtime::Runtime) {
        use lapin::options::BasicGetOptions;
        let queues = [
            format!("{}.info", self.topic),
            format!("{}.error", self.topic),
        ];
        let ids: Vec<String> = rt.block_on(async {
            let conn =
                lapin::Connection::connect(&self.url, lapin::ConnectionProperties::default())
                    .await
                    .unwrap_or_else(|e| panic!("RabbitMQ: {e}"));
            let ch = conn
                .create_channel()
                .await
                .unwrap_or_else(|e| panic!("RabbitMQ channel: {e}"));
            let mut ids = Vec::new();
            for q in &queues {
                // A queue not declared yet holds nothing.
                while let Ok(Some(m)) = ch
                    .basic_get(q.as_str().into(), BasicGetOptions { no_ack: true })
                    .await
                {
                    let envelope: Value =
                        serde_json::from_slice(&m.delivery.data).unwrap_or_default();
                    let message: Value =
                        serde_json::from_str(envelope["oslo.message"].as_str().unwrap_or("null"))
                            .unwrap_or_default();
                    ids.push(message["message_id"].as_str().unwrap_or("?").to_owned());
                }
            }
            let _ = conn.close(0, "drained".into()).await;
            ids
        });
        for id in ids {
            *self.delivered.entry(id).or_default() += 1;
        }
    }

    /// Deletes the suite's queues and exchange.
    fn remove(&self, rt: &tokio::runtime::Runtime) {
        use lapin::options::{ExchangeDeleteOptions, QueueDeleteOptions};
        rt.block_on(async {
            let Ok(conn) =
                lapin::Connection::connect(&self.url, lapin::ConnectionProperties::default()).await
            else {
                return;
            };
            if let Ok(ch) = conn.create_channel().await {
                for q in [
                    format!("{}.info", self.topic),
                    format!("{}.error", self.topic),
                ] {
                    let _ = ch
                        .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                        .await;
                }
                let _ = ch
                    .exchange_delete(self.topic.as_str().into(), ExchangeDeleteOptions::default())
                    .await;
            }
            let _ = conn.close(0, "done".into()).await;
        });
    }

    /// Runs `rabbitmqctl <args>` against the test node.
    fn ctl(&self, args: &[&str]) {
        let status = Command::new(&self.ctl)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("{}: {e}", self.ctl));
        assert!(status.success(), "rabbitmqctl {args:?}: {status}");
    }
}

/// What one fault admits.
struct Fault {
    name: &'static str,
    /// The server errors Magnum gives during this fault too (each still
    /// with Magnum's body).
    server_errors: &'static [u16],
    /// Whether the load balancer's own 502 is admitted (an `api` killed
    /// under a request it was serving).
    lb_errors: bool,
    /// The longest any answer may take.
    slowest: Duration,
    /// Whether clusters may be left in progress for the reconciler to
    /// resume later (an `api` killed with creates it had accepted): those
    /// not final within [`ORPHANS_SEEN`] are checked at the end.
    orphans: bool,
}

impl Fault {
    /// A fault during which every answer is Magnum's and none is a server
    /// error.
    fn new(name: &'static str, slowest: Duration) -> Fault {
        Fault {
            name,
            server_errors: &[],
            lb_errors: false,
            slowest,
            orphans: false,
        }
    }
}

/// The deployment under test.
struct Deployment {
    /// The runtime of the management cluster and its simulator.
    krt: tokio::runtime::Runtime,
    mgmt: CapiApiServer,
    running: Option<Running>,
    sim: Sim,
    stack: Stack,
    /// Serves `target.url` while the deployment lives.
    _lb: Balancer,
    /// The `api` processes' ports, the first the stack's own.
    api_ports: Vec<u16>,
    target: Target,
    db: FreshDb,
    broker: Broker,
    /// The clusters of the load, with their last status.
    live: BTreeMap<String, String>,
    /// Notifications a killed process had logged but may not have sent.
    lost_allowance: usize,
    /// Clusters a killed `api` left in progress, with when it was killed.
    orphaned: Vec<(String, Instant)>,
    /// The changes accepted so far, per cluster and action.
    changes: BTreeMap<(String, String), usize>,
    /// Where the service's log is kept when the deployment stops.
    name: &'static str,
}

/// What a deployment is made of.
struct Shape {
    name: &'static str,
    /// A `mysql://` or `postgres://` URL naming the server.
    database: String,
    apis: usize,
    reconcilers: usize,
}

impl Deployment {
    fn start(shape: &Shape, nginx: &str, amqp: (&str, &str)) -> Option<Deployment> {
        let ks = keystone()?;
        let krt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
        let mgmt = krt.block_on(capi_api_server())?;
        krt.block_on(mgmt.create_namespace(NS));
        let db = FreshDb::create(&krt, &shape.database, "okm_faults_");
        // A topic and an exchange of the suite's own: an exchange another
        // test declared non-durable would make the queues non-durable too
        // (as oslo.messaging does), and their messages lost on a restart.
        let topic = format!("okm_faults_{}_{}", std::process::id(), shape.name);
        let demo = ks.1.projects.get("demo").cloned().unwrap_or_default();
        // oslo.messaging's scheme for the broker the test reaches over AMQP.
        let transport = amqp.0.replacen("amqp://", "rabbit://", 1);
        let opts = StackOptions {
            conf: format!(
                "[capi]\nkubeconfig = {}\nresync_interval = 1\nlease_duration = {LEASE_SECONDS}\n\
                 renew_deadline = 3\nretry_period = 1\n\n[quotas]\nmax_clusters_per_project = 1000\n\n\
                 [driver:capi]\noptions = update_grace:6\n\n\
                 [DEFAULT]\ncontrol_exchange = {topic}\n\n\
                 [oslo_messaging_notifications]\ndriver = messagingv2\ndriver = log\n\
                 transport_url = {transport}\ntopics = {topic}\n\n\
                 [oslo_messaging_rabbit]\namqp_durable_queues = true\n",
                mgmt.server.kubeconfig_path().display(),
            ),
            without_fake: true,
            default_project: Some(demo),
            volume_types: vec!["standard"],
            database: Some(db.sqlalchemy_url.clone()),
            ..StackOptions::default()
        };
        let mut stack = Stack::start_with(ks, &opts);
        let first: u16 = stack
            .server_url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the port of {}", stack.server_url));
        let mut api_ports = vec![first];
        for _ in 1..shape.apis {
            let port = free_port();
            stack.start_api_on(port);
            api_ports.push(port);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while stack.lease_holder_pid().is_none() {
            assert!(
                Instant::now() < deadline,
                "no reconciler took the Lease in 30 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        for _ in 1..shape.reconcilers {
            stack.start_standby_reconciler();
        }
        let sim = Sim::new(mgmt.client.clone(), NS);
        sim.ready_by_default();
        let running = {
            let _in = krt.enter();
            sim.run(Duration::from_millis(200))
        };
        let lb = Balancer::start(nginx, &api_ports);
        let token = stack.token("demo", "demo");
        let mut target = Target {
            url: lb.url.clone(),
            token,
            template: String::new(),
        };
        let http = blocking_client(Duration::from_secs(60));
        let body = json!({"name": "faults-ct", "image_id": IMAGE_NAME, "coe": "kubernetes",
            "external_network_id": EXT_NET_NAME, "flavor_id": FLAVOR_SMALL,
            "master_flavor_id": FLAVOR_SMALL, "network_driver": "calico",
            "labels": {"kube_tag": "v1.31.1"}});
        let (status, raw) = send(&http, &target, "POST", "/v1/clustertemplates", Some(&body));
        assert_eq!(status, 201, "template: {}", String::from_utf8_lossy(&raw));
        let v: Value = serde_json::from_slice(&raw).unwrap_or_default();
        target.template = v["uuid"].as_str().unwrap_or_default().to_owned();
        Some(Deployment {
            krt,
            mgmt,
            running: Some(running),
            sim,
            stack,
            _lb: lb,
            api_ports,
            target,
            db,
            broker: Broker {
                url: amqp.0.to_owned(),
                ctl: amqp.1.to_owned(),
                topic,
                delivered: BTreeMap::new(),
            },
            live: BTreeMap::new(),
            lost_allowance: 0,
            orphaned: Vec::new(),
            changes: BTreeMap::new(),
            name: shape.name,
        })
    }

    /// The status of cluster `uuid` (`404` once it is gone), read through
    /// the load balancer; `None` when no answer came.
    fn status(&self, http: &reqwest::blocking::Client, uuid: &str) -> Option<String> {
        let (code, raw) = send(
            http,
            &self.target,
            "GET",
            &format!("/v1/clusters/{uuid}"),
            None,
        );
        match code {
            404 => Some("404".to_owned()),
            200 => {
                let v: Value = serde_json::from_slice(&raw).ok()?;
                v["status"].as_str().map(str::to_owned)
            }
            _ => None,
        }
    }

    /// Runs one fault: the load for [`BEFORE`], `inject` (which returns
    /// once the fault is healed), the load for [`AFTER`], then waits until
    /// every cluster accepted is in a final state and checks the
    /// notifications.
    fn fault(
        &mut self,
        suite: &mut Suite<'_>,
        f: Fault,
        inject: impl FnOnce(&mut Deployment, &mut Tally),
    ) {
        let name = f.name;
        suite.step(name, |c| {
            let live = std::mem::take(&mut self.live);
            let load = Load::start(&self.target, live, f.server_errors, f.lb_errors);
            std::thread::sleep(BEFORE);
            let mut extra = Tally::default();
            let injected = Instant::now();
            inject(self, &mut extra);
            let healed = Instant::now();
            std::thread::sleep(AFTER);
            let (mut tally, live, last_failure) = load.stop();
            let stopped = Instant::now();
            tally.merge(extra);
            // Creates stored whose request got no answer count as accepted.
            for uuid in std::mem::take(&mut tally.stored) {
                let create = (uuid.clone(), "create".to_owned());
                if !tally.changes.contains_key(&create) && !self.changes.contains_key(&create) {
                    tally.changes.insert(create, 1);
                    tally.accepted.push(uuid);
                }
            }
            for (k, n) in &tally.changes {
                *self.changes.entry(k.clone()).or_default() += n;
            }
            let within = if f.orphans { ORPHANS_SEEN } else { SETTLE };
            let (settled, pending) = self.settle(&mut tally, live, within);
            if f.orphans {
                self.orphaned
                    .extend(pending.into_iter().map(|uuid| (uuid, healed)));
            } else {
                for uuid in pending {
                    tally.broken.push(format!(
                        "cluster {uuid} still in progress {SETTLE:?} after the fault"
                    ));
                }
            }
            tally.recovery = last_failure
                .filter(|t| *t >= injected)
                .map(|t| t.saturating_duration_since(healed));
            tally.settled = settled.map(|t| t.saturating_duration_since(stopped));
            if tally.slowest > f.slowest {
                tally.broken.push(format!(
                    "an answer took {:.1} s (at most {:?} during this fault)",
                    tally.slowest.as_secs_f64(),
                    f.slowest
                ));
            }
            self.check_notifications(&mut tally);
            eprintln!("{}", tally.line(name));
            for b in &tally.broken {
                c.error(b.clone());
            }
        });
    }

    /// Waits until every cluster the load accepted or left is in a final
    /// state, at most `within`; records the final states; returns when the
    /// last got there (`None` when one did not) and those still pending.
    fn settle(
        &mut self,
        tally: &mut Tally,
        live: BTreeMap<String, String>,
        within: Duration,
    ) -> (Option<Instant>, BTreeSet<String>) {
        let http = blocking_client(Duration::from_secs(30));
        let mut pending: BTreeSet<String> = live.keys().cloned().collect();
        pending.extend(tally.accepted.iter().cloned());
        let deadline = Instant::now() + within;
        let mut states: BTreeMap<String, String> = BTreeMap::new();
        while !pending.is_empty() && Instant::now() < deadline {
            for uuid in pending.clone() {
                if let Some(st) = self.status(&http, &uuid) {
                    if is_final(&st) {
                        pending.remove(&uuid);
                    }
                    states.insert(uuid, st);
                }
            }
            if !pending.is_empty() {
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        let done = Instant::now();
        for uuid in &tally.accepted {
            let st = states.get(uuid).cloned().unwrap_or_else(|| "?".to_owned());
            *tally.finals.entry(st).or_default() += 1;
        }
        self.live = states
            .into_iter()
            .filter(|(uuid, st)| st != "404" && !pending.contains(uuid))
            .collect();
        (pending.is_empty().then_some(done), pending)
    }

    /// The last step of a deployment that had an `api` killed: every create
    /// it left in progress is finished or failed by the reconciler, which
    /// resumes a create whose job never ran [`CREATE_ORPHAN_AGE`] after it
    /// was accepted, and fails one whose job died in the driver's create at
    /// its create timeout (4 minutes here). Prints how long each took and
    /// why it failed.
    fn orphans_step(&mut self, suite: &mut Suite<'_>) {
        let orphaned = std::mem::take(&mut self.orphaned);
        suite.step("creates left by the killed api are finished", |c| {
            let http = blocking_client(Duration::from_secs(30));
            let mut took = Vec::new();
            for (uuid, killed) in &orphaned {
                let deadline = *killed + CREATE_ORPHAN_AGE + SETTLE;
                loop {
                    let st = self.status(&http, uuid).unwrap_or_default();
                    if is_final(&st) {
                        let (_, raw) = send(
                            &http,
                            &self.target,
                            "GET",
                            &format!("/v1/clusters/{uuid}"),
                            None,
                        );
                        let v: Value = serde_json::from_slice(&raw).unwrap_or_default();
                        took.push(format!(
                            "{st} after {:.0} s ({})",
                            killed.elapsed().as_secs_f64(),
                            v["status_reason"].as_str().unwrap_or_default()
                        ));
                        break;
                    }
                    if Instant::now() > deadline {
                        c.error(format!(
                            "cluster {uuid} still {st:?} {:?} after the kill",
                            killed.elapsed()
                        ));
                        break;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
            eprintln!(
                "fault an api process killed: {} creates left in progress, then {}",
                orphaned.len(),
                if took.is_empty() {
                    "none".to_owned()
                } else {
                    took.join(", ")
                }
            );
        });
    }

    /// No cluster has more terminal notifications (success or failure) of
    /// an action than requests for it were accepted (two processes finishing
    /// one transition); every notification logged reaches the broker once,
    /// but those a killed process had not sent yet.
    fn check_notifications(&mut self, tally: &mut Tally) {
        let logs = logged_notifications(&self.stack.output());
        let mut terminal: BTreeMap<(String, String), usize> = BTreeMap::new();
        for n in logs.iter().filter(|n| n.outcome != "pending") {
            if let Some(action) = n.event_type.strip_prefix("magnum.cluster.") {
                *terminal
                    .entry((n.cluster.clone(), action.to_owned()))
                    .or_default() += 1;
            }
        }
        for ((cluster, action), n) in terminal {
            let accepted = self
                .changes
                .get(&(cluster.clone(), action.clone()))
                .copied()
                .unwrap_or(0);
            if n > accepted {
                tally.broken.push(format!(
                    "cluster {cluster}: {n} terminal {action} notifications for {accepted} accepted requests"
                ));
            }
        }
        // Messages still being retried arrive within seconds. The log is
        // read after each drain: a message is logged before it is sent.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut ids: BTreeSet<String>;
        loop {
            self.broker.drain(&self.krt);
            let logs = logged_notifications(&self.stack.output());
            ids = logs.iter().map(|n| n.id.clone()).collect();
            let missing = ids
                .iter()
                .filter(|id| !self.broker.delivered.contains_key(*id))
                .count();
            if missing <= self.lost_allowance || Instant::now() > deadline {
                if missing > self.lost_allowance {
                    let some: Vec<String> = logs
                        .iter()
                        .filter(|n| !self.broker.delivered.contains_key(&n.id))
                        .take(5)
                        .map(|n| format!("{} {} {} {}", n.id, n.event_type, n.outcome, n.cluster))
                        .collect();
                    tally.broken.push(format!(
                        "{missing} of {} notifications logged never reached the broker \
                         (a killed process may have lost {}), among them {some:?}",
                        ids.len(),
                        self.lost_allowance
                    ));
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        for (id, n) in &self.broker.delivered {
            if *n > 1 {
                tally
                    .broken
                    .push(format!("notification {id} delivered {n} times"));
            }
            if !ids.contains(id) {
                tally
                    .broken
                    .push(format!("notification {id} delivered but never logged"));
            }
        }
    }

    /// The notifications a process logged so far that are not delivered:
    /// what killing it may lose.
    fn undelivered(&mut self) -> usize {
        self.broker.drain(&self.krt);
        logged_notifications(&self.stack.output())
            .iter()
            .filter(|n| !self.broker.delivered.contains_key(&n.id))
            .count()
    }
}

impl Drop for Deployment {
    /// Keeps the service's log in `target/tmp/faults/<name>-service.log`.
    fn drop(&mut self) {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faults");
        let kept = std::fs::create_dir_all(&dir).and_then(|()| {
            std::fs::write(
                dir.join(format!("{}-service.log", self.name)),
                self.stack.output(),
            )
        });
        if let Err(e) = kept {
            eprintln!("keep the service log: {e}");
        }
        if let Some(r) = self.running.take() {
            let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.krt.block_on(r.stop());
            }));
            if stopped.is_err() {
                eprintln!("the simulator's loop panicked");
            }
        }
        self.broker.remove(&self.krt);
        let errors = self.sim.errors();
        if !errors.is_empty() {
            eprintln!("the simulator failed: {errors:?}");
        }
        let _ = &self.db;
    }
}

/// A database server of the machine: its process, found by the port of
/// its URL.
fn database_server(url: &str) -> Started {
    let port = url::Url::parse(url)
        .ok()
        .and_then(|u| u.port())
        .unwrap_or_else(|| panic!("no port in {url}"));
    let postgres = url.starts_with("postgres");
    let pid = find(|argv| {
        let Some(program) = argv.first() else {
            return false;
        };
        let named = if postgres {
            program.ends_with("/postgres") || program == "postgres"
        } else {
            program.ends_with("mariadbd") || program.ends_with("mysqld")
        };
        named
            && argv.iter().any(|a| {
                a == &format!("--port={port}")
                    || a == &port.to_string()
                    || a.ends_with(&format!(" -p {port}"))
            })
    })
    .unwrap_or_else(|| panic!("no database server listening on port {port} found in /proc"));
    Started::of(pid)
}

/// Waits until a connection to `url` succeeds (at most 120 s).
fn wait_database(rt: &tokio::runtime::Runtime, url: &str) {
    use sqlx::Connection;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let up = rt.block_on(async {
            if url.starts_with("postgres") {
                sqlx::PgConnection::connect(url).await.is_ok()
            } else {
                sqlx::MySqlConnection::connect(url).await.is_ok()
            }
        });
        if up {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the database did not come back in 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The Keystone of the suites, found by the port of its URL: the gunicorn
/// master.
fn keystone_server(url: &str) -> Started {
    let port = url::Url::parse(url)
        .ok()
        .and_then(|u| u.port())
        .unwrap_or_else(|| panic!("no port in {url}"));
    let bind = format!("127.0.0.1:{port}");
    let pid = find(|argv| argv.iter().any(|a| a.contains("gunicorn")) && argv.contains(&bind))
        .unwrap_or_else(|| panic!("no gunicorn bound to {bind} found in /proc"));
    Started::of(pid)
}

/// Restarts a database server under load: stopped (MariaDB's normal
/// shutdown, PostgreSQL's fast one: both end every session), down for two
/// seconds, started again as it was.
fn restart_database(d: &mut Deployment, url: &str) {
    let sig = if url.starts_with("postgres") {
        "-INT"
    } else {
        "-TERM"
    };
    let down = database_server(url).stop_for_now(sig);
    std::thread::sleep(Duration::from_secs(2));
    down.start();
    wait_database(&d.krt, url);
}

#[test]
fn faults_under_load() {
    if !selected() {
        return;
    }
    let (Some(mysql), Some(postgres), Some(amqp), Some(ctl), Some(nginx)) = (
        need_env("OKM_TEST_MYSQL_URL"),
        need_env("OKM_TEST_POSTGRES_URL"),
        need_env("OKM_TEST_RABBITMQ_URL"),
        need_env("OKM_TEST_RABBITMQ_CTL"),
        need_env("OKM_NGINX"),
    ) else {
        return;
    };
    let _one = exclusive();
    let shape = Shape {
        name: "mariadb",
        database: mysql.clone(),
        apis: 3,
        reconcilers: 2,
    };
    let Some(mut d) = Deployment::start(&shape, &nginx, (&amqp, &ctl)) else {
        return;
    };
    let mut suite = Suite::new("TestFaults", None);
    let started = Instant::now();

    // First, so that the reconciler's resuming of the creates the killed
    // api left is checked at the end, without waiting for it.
    let api_killed = Fault {
        lb_errors: true,
        orphans: true,
        ..Fault::new("an api process killed (SIGKILL) mid-create", QUICK)
    };
    d.fault(&mut suite, api_killed, |d, extra| {
        let port = d.api_ports[1];
        let pid = d.stack.pids("api")[1];
        // Creates sent to that api alone, killed as soon as it accepted the
        // second: its create jobs are queued or running.
        let direct = Target {
            url: format!("http://127.0.0.1:{port}"),
            ..d.target.clone()
        };
        let (accepted_tx, accepted_rx) = std::sync::mpsc::channel();
        let burst = std::thread::spawn(move || {
            let http = blocking_client(Duration::from_secs(30));
            let mut answers = Vec::new();
            for n in 0..6 {
                let body = create_body(&format!("doomed-{n}"), &direct.template);
                let (status, raw) = send(&http, &direct, "POST", "/v1/clusters", Some(&body));
                let v: Value = serde_json::from_slice(&raw).unwrap_or_default();
                if let Some(uuid) = v["uuid"].as_str().filter(|_| status == 202) {
                    let _ = accepted_tx.send(uuid.to_owned());
                }
                answers.push((status, v["uuid"].as_str().map(str::to_owned)));
                if answers.iter().filter(|(s, _)| *s == 202).count() == 2 {
                    break;
                }
            }
            answers
        });
        let _ = accepted_rx.recv_timeout(Duration::from_secs(30));
        let _ = accepted_rx.recv_timeout(Duration::from_secs(30));
        d.stack.kill_hard(pid);
        // What the killed process logged and never sent is lost, as with
        // oslo.messaging; the other processes' messages arrive meanwhile.
        std::thread::sleep(Duration::from_secs(3));
        d.lost_allowance += d.undelivered();
        for (status, uuid) in burst.join().unwrap_or_default() {
            // The requests after the kill find no process: no answer.
            extra.record("create on the killed api", status);
            if let Some(uuid) = uuid.filter(|_| status == 202) {
                extra.changes.insert((uuid.clone(), "create".to_owned()), 1);
                extra.accepted.push(uuid);
            }
        }
        std::thread::sleep(Duration::from_secs(2));
        d.stack.start_api_on(port);
        // A create the killed api stored before it could answer (the load
        // balancer answered 502): known by its name.
        let http = blocking_client(Duration::from_secs(30));
        let (_, raw) = send(&http, &d.target, "GET", "/v1/clusters", None);
        let listed: Value = serde_json::from_slice(&raw).unwrap_or_default();
        for c in listed["clusters"].as_array().into_iter().flatten() {
            let (Some(uuid), Some(name)) = (c["uuid"].as_str(), c["name"].as_str()) else {
                continue;
            };
            if name.starts_with("doomed-") || name.starts_with("fault-") {
                extra.stored.push(uuid.to_owned());
            }
        }
    });
    // Magnum answers 500 while its database is unreachable (oslo.db's
    // DBConnectionError), and keystonemiddleware 503 while Keystone is.
    let db_down = Fault {
        server_errors: &[500, 503],
        ..Fault::new("MariaDB restarted", SLOW)
    };
    d.fault(&mut suite, db_down, |d, _| {
        restart_database(d, &mysql);
    });
    // A session holding the table (a stuck migration, an operator's
    // LOCK TABLES): every request that reads or writes clusters waits.
    let lock = Fault::new("a lock held on the cluster table for 20 s", SLOW);
    d.fault(&mut suite, lock, |d, _| {
        use sqlx::{Connection, Executor};
        let url = d.db.url.clone();
        d.krt.block_on(async {
            let mut conn = sqlx::MySqlConnection::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("MariaDB: {e}"));
            conn.execute("LOCK TABLES cluster WRITE")
                .await
                .unwrap_or_else(|e| panic!("lock: {e}"));
            tokio::time::sleep(Duration::from_secs(20)).await;
            let _ = conn.execute("UNLOCK TABLES").await;
        });
    });
    let keystone_down = Fault {
        server_errors: &[503],
        ..Fault::new("Keystone down for 30 s", QUICK)
    };
    d.fault(&mut suite, keystone_down, |d, extra| {
        let url = d.stack.identity().url.clone();
        // Tokens the service has not seen: keystonemiddleware cannot
        // validate them while Keystone is down.
        let fresh: Vec<String> = (0..3).map(|_| d.stack.token("alt", "alt")).collect();
        let keystone = keystone_server(&url).stop_for_now("-INT");
        let http = blocking_client(Duration::from_secs(60));
        let down = Instant::now();
        for token in &fresh {
            let t = Target {
                token: token.clone(),
                ..d.target.clone()
            };
            let (status, raw) = send(&http, &t, "GET", "/v1/clusters", None);
            extra.record("list with a new token", status);
            if status != 503 {
                extra.broken.push(format!(
                    "a new token while Keystone is down: {status}, want 503: {}",
                    String::from_utf8_lossy(&raw)
                ));
            } else {
                extra.refused(status, &raw);
            }
        }
        std::thread::sleep(OUTAGE.saturating_sub(down.elapsed()));
        keystone.start();
        let deadline = Instant::now() + Duration::from_secs(90);
        let t = Target {
            token: fresh[0].clone(),
            ..d.target.clone()
        };
        loop {
            let (status, raw) = send(&http, &t, "GET", "/v1/clusters", None);
            extra.record("list with a new token", status);
            if status == 200 {
                break;
            }
            if status != 503 {
                extra.broken.push(format!(
                    "a new token after Keystone came back: {status}: {}",
                    String::from_utf8_lossy(&raw)
                ));
                break;
            }
            if Instant::now() > deadline {
                extra
                    .broken
                    .push("a new token refused 90 s after Keystone came back".into());
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    // No request waits on the broker.
    let broker_down = Fault::new("RabbitMQ down for 30 s", QUICK);
    d.fault(&mut suite, broker_down, |d, _| {
        /// Starts the broker's application again however the fault ends.
        struct BrokerDown<'a>(&'a Broker);
        impl Drop for BrokerDown<'_> {
            fn drop(&mut self) {
                self.0.ctl(&["start_app"]);
            }
        }
        d.broker.ctl(&["stop_app"]);
        let _down = BrokerDown(&d.broker);
        std::thread::sleep(OUTAGE);
    });
    // A delete waits for the driver's delete, which waits for the
    // management cluster ([capi]/request_timeout).
    let kube_restart = Fault::new("kube-apiserver restarted", KUBE_WAIT);
    d.fault(&mut suite, kube_restart, |d, _| {
        d.mgmt.server.restart(Duration::from_secs(5));
    });
    let etcd_paused = Fault::new("etcd paused for 15 s", KUBE_WAIT);
    d.fault(&mut suite, etcd_paused, |d, _| {
        /// Resumes etcd however the fault ends.
        struct Paused(u32);
        impl Drop for Paused {
            fn drop(&mut self) {
                signal(self.0, "-CONT");
            }
        }
        let etcd = Paused(d.mgmt.server.etcd_pid());
        signal(etcd.0, "-STOP");
        std::thread::sleep(Duration::from_secs(15));
    });
    let reconciler_killed = Fault::new("the active reconciler killed (SIGKILL)", QUICK);
    d.fault(&mut suite, reconciler_killed, |d, _| {
        let Some(pid) = d.stack.lease_holder_pid() else {
            panic!("no reconciler holds the Lease");
        };
        d.stack.kill_hard(pid);
        std::thread::sleep(Duration::from_secs(3));
        d.lost_allowance += d.undelivered();
        // The standby takes over within the Lease's duration; a new
        // standby takes its place.
        let deadline = Instant::now() + Duration::from_secs(LEASE_SECONDS * 4);
        while d.stack.lease_holder_pid().is_none() {
            assert!(
                Instant::now() < deadline,
                "the standby did not take the Lease"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        d.stack.start_standby_reconciler();
    });
    d.orphans_step(&mut suite);
    let mariadb_part = started.elapsed();
    drop(d);

    // PostgreSQL: a deployment of one api and one reconciler.
    let shape = Shape {
        name: "postgres",
        database: postgres.clone(),
        apis: 1,
        reconcilers: 1,
    };
    if let Some(mut d) = Deployment::start(&shape, &nginx, (&amqp, &ctl)) {
        let db_down = Fault {
            server_errors: &[500, 503],
            ..Fault::new("PostgreSQL restarted", SLOW)
        };
        d.fault(&mut suite, db_down, |d, _| {
            restart_database(d, &postgres);
        });
    }
    suite.note(format!(
        "{:.0} s ({:.0} s on MariaDB)",
        started.elapsed().as_secs_f64(),
        mariadb_part.as_secs_f64()
    ));
    suite.finish();
}
