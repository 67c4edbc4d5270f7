//! Tests against a real RabbitMQ (`scripts/ci/rabbitmq.sh`, named by
//! `OKM_TEST_RABBITMQ_URL`) and a real oslo.messaging notification listener
//! (`testdata/notify/listener.py` run by the Python of
//! `scripts/ci/notify-listener.sh`, `OKM_TEST_NOTIFY_PYTHON`), which checks
//! every payload with pycadf. The reconnect test restarts the broker with
//! `OKM_TEST_RABBITMQ_CTL`. They skip when a variable is unset, and fail
//! when `CI=true`.
//!
//! The tests share the broker (one restarts it), so they run one at a time;
//! each uses its own topic and deletes its queues.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, ExchangeDeclareOptions, QueueBindOptions,
    QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::FieldTable;
use lapin::{Connection, ConnectionProperties, ExchangeKind};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use uuid::Uuid;

use super::tests::{admin_context, fixture, user_context};
use super::*;
use test_support::in_ci;

/// One test at a time on the shared broker.
static BROKER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const WAIT: Duration = Duration::from_secs(60);

struct Env {
    /// `amqp://user:pass@host:port/vhost`, for lapin.
    amqp_url: String,
    /// The same broker as an oslo.messaging transport URL.
    transport_url: String,
    python: String,
    ctl: Option<String>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The services, or `None` (with a message) outside CI.
fn env(need_ctl: bool) -> Option<Env> {
    let mut missing = Vec::new();
    let amqp_url = var("OKM_TEST_RABBITMQ_URL");
    let python = var("OKM_TEST_NOTIFY_PYTHON");
    let ctl = var("OKM_TEST_RABBITMQ_CTL");
    if amqp_url.is_none() {
        missing.push("OKM_TEST_RABBITMQ_URL (scripts/ci/rabbitmq.sh)");
    }
    if python.is_none() {
        missing.push("OKM_TEST_NOTIFY_PYTHON (scripts/ci/notify-listener.sh)");
    }
    if need_ctl && ctl.is_none() {
        missing.push("OKM_TEST_RABBITMQ_CTL (scripts/ci/rabbitmq.sh)");
    }
    if !missing.is_empty() {
        assert!(!in_ci(), "CI=true but {} unset", missing.join(", "));
        eprintln!("skipped: {} unset", missing.join(", "));
        return None;
    }
    let amqp_url = amqp_url?;
    let transport_url = match amqp_url.strip_prefix("amqp://") {
        Some(rest) => format!("rabbit://{rest}"),
        None => panic!("OKM_TEST_RABBITMQ_URL must be an amqp:// URL"),
    };
    Some(Env {
        amqp_url,
        transport_url,
        python: python?,
        ctl,
    })
}

/// The Python listener, consuming `<topic>.info` and `<topic>.error` of
/// `exchange`.
struct Listener {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<String>>,
}

impl Listener {
    async fn start(env: &Env, exchange: &str, topic: &str) -> Listener {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/notify/listener.py");
        let mut child = Command::new(&env.python)
            .arg(script)
            .args([
                "--url",
                &env.transport_url,
                "--exchange",
                exchange,
                "--topic",
                topic,
            ])
            .args(["--priority", "info,error"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", env.python));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut err) = child.stderr.take() {
            let keep = stderr.clone();
            tokio::spawn(async move {
                let mut buf = String::new();
                let _ = err.read_to_string(&mut buf).await;
                keep.lock().unwrap().push_str(&buf);
            });
        }
        let mut l = Listener {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            stderr,
        };
        let ready = l.next().await;
        assert_eq!(ready["ready"], true, "{ready}");
        l
    }

    /// The next line, as JSON.
    async fn next(&mut self) -> Value {
        match tokio::time::timeout(WAIT, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => {
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
            }
            Ok(Ok(None)) => panic!("the listener exited; stderr:\n{}", self.stderr()),
            Ok(Err(e)) => panic!("reading the listener: {e}"),
            Err(_) => panic!(
                "no notification within {WAIT:?}; listener stderr:\n{}",
                self.stderr()
            ),
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Closes its stdin (it stops and exits) and waits for it.
    async fn stop(mut self) {
        drop(self.stdin.take());
        if tokio::time::timeout(WAIT, self.child.wait()).await.is_err() {
            let _ = self.child.kill().await;
        }
    }
}

fn settings(env: &Env, topic: &str) -> NotifierSettings {
    NotifierSettings {
        drivers: vec!["messagingv2".into()],
        transport_url: Secret::new(env.transport_url.clone()),
        topics: vec![topic.to_owned()],
        retry: -1,
        exchange: "magnum".into(),
        publisher_id: publisher_id("okm-test-host"),
        queue_capacity: 100,
        rabbit: RabbitSettings {
            retry_interval: Duration::from_millis(200),
            retry_backoff: Duration::from_millis(200),
            interval_max: Duration::from_secs(1),
            attempt_timeout: Duration::from_secs(10),
            ..RabbitSettings::default()
        },
    }
}

async fn connect(env: &Env) -> Connection {
    Connection::connect(&env.amqp_url, ConnectionProperties::default())
        .await
        .unwrap_or_else(|e| panic!("connecting to the test broker: {e}"))
}

/// Deletes the queues the test's topic made.
async fn delete_queues(env: &Env, topic: &str) {
    let conn = connect(env).await;
    for p in ["info", "error"] {
        if let Ok(ch) = conn.create_channel().await {
            let _ = ch
                .queue_delete(
                    format!("{topic}.{p}").as_str().into(),
                    QueueDeleteOptions::default(),
                )
                .await;
        }
    }
    let _ = conn.close(200, "OK".into()).await;
}

/// One step of a cluster's life as Magnum notifies it.
struct Step {
    action: Action,
    outcome: Outcome,
    /// By the caller (the API request) or by the status sync (admin).
    by_user: bool,
    status: Status,
}

use magnum_domain::Status;

/// create → update → delete, each started by the user and finished by the
/// status sync, plus an update refused for the cluster's status (ERROR).
fn life() -> Vec<Step> {
    let s = |action, outcome, by_user, status| Step {
        action,
        outcome,
        by_user,
        status,
    };
    vec![
        s(
            Action::Create,
            Outcome::Pending,
            true,
            Status::CreateInProgress,
        ),
        s(
            Action::Create,
            Outcome::Success,
            false,
            Status::CreateComplete,
        ),
        s(
            Action::Update,
            Outcome::Pending,
            true,
            Status::CreateComplete,
        ),
        s(
            Action::Update,
            Outcome::Success,
            false,
            Status::UpdateComplete,
        ),
        s(
            Action::Update,
            Outcome::Failure,
            true,
            Status::DeleteInProgress,
        ),
        s(
            Action::Delete,
            Outcome::Pending,
            true,
            Status::UpdateComplete,
        ),
        s(
            Action::Delete,
            Outcome::Success,
            false,
            Status::DeleteComplete,
        ),
    ]
}

fn send(n: &Notifier, step: &Step) {
    let (mut cluster, groups) = fixture(step.by_user);
    cluster.status = Some(step.status);
    let ctx = if step.by_user {
        user_context()
    } else {
        admin_context()
    };
    n.cluster_event(&ctx, &cluster, &groups, step.action, step.outcome);
}

/// Checks what the listener got for `step`.
fn check(got: &Value, step: &Step) {
    let want_priority = step.outcome.priority().routing();
    assert_eq!(got["priority"], want_priority, "{got}");
    assert_eq!(got["event_type"], step.action.event_type(), "{got}");
    assert_eq!(
        got["publisher_id"], "container-infra.okm-test-host",
        "{got}"
    );
    assert_eq!(got["cadf"], "ok", "pycadf refused the payload: {got}");
    let p = &got["payload"];
    assert_eq!(
        p["typeURI"],
        "http://schemas.dmtf.org/cloud/audit/1.0/event"
    );
    assert_eq!(p["eventType"], "activity");
    assert_eq!(p["action"], step.action.as_str());
    assert_eq!(p["outcome"], step.outcome.as_str());
    assert_eq!(p["target"]["id"], "e1f2a3b4-c5d6-47e8-9f0a-1b2c3d4e5f60");
    assert_eq!(
        p["target"]["attachments"][0]["content"]["status"],
        step.status.as_str()
    );
    assert_eq!(p["observer"]["typeURI"], "service/magnum/cluster");
    let ctxt = &got["ctxt"];
    assert_eq!(ctxt["auth_token"], Value::Null, "{ctxt}");
    if step.by_user {
        assert_eq!(
            p["initiator"]["user_id"],
            "5f1e0c7a9d2b4e3f8a6b1c0d2e3f4a5b"
        );
        assert_eq!(
            p["initiator"]["project_id"],
            "9a8b7c6d5e4f40312a1b0c9d8e7f6a5b"
        );
        assert_eq!(
            ctxt["request_id"],
            "req-11111111-2222-4333-8444-555555555555"
        );
        assert_eq!(ctxt["user_name"], "demo");
    } else {
        assert!(p["initiator"].get("user_id").is_none(), "{p}");
        assert_eq!(ctxt["is_admin"], true);
    }
    let meta = &got["metadata"];
    let id = meta["message_id"].as_str().unwrap_or("");
    assert!(Uuid::parse_str(id).is_ok(), "{meta}");
    let ts = meta["timestamp"].as_str().unwrap_or("");
    assert!(
        chrono::NaiveDateTime::parse_from_str(ts, "%Y-%m-%d %H:%M:%S%.f").is_ok(),
        "{meta}"
    );
}

#[tokio::test]
async fn a_cluster_life_reaches_a_real_oslo_listener_in_order() {
    let Some(env) = env(false) else { return };
    let _one = BROKER.lock().await;
    let topic = format!("okm-notify-{}", Uuid::new_v4().simple());
    let mut listener = Listener::start(&env, "magnum", &topic).await;

    // A raw consumer beside the listener, to see the AMQP message itself.
    let raw = connect(&env).await;
    let ch = raw.create_channel().await.unwrap_or_else(|e| panic!("{e}"));
    ch.exchange_declare(
        "magnum".into(),
        ExchangeKind::Topic,
        ExchangeDeclareOptions::default(),
        FieldTable::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let q = ch
        .queue_declare(
            "".into(),
            QueueDeclareOptions {
                exclusive: true,
                auto_delete: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ch.queue_bind(
        q.name().clone(),
        "magnum".into(),
        format!("{topic}.*").as_str().into(),
        QueueBindOptions::default(),
        FieldTable::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let mut consumer = ch
        .basic_consume(
            q.name().clone(),
            "raw".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let n = Notifier::new(settings(&env, &topic)).unwrap_or_else(|e| panic!("{e}"));
    let steps = life();
    for step in &steps {
        send(&n, step);
    }
    assert!(n.flush(WAIT).await, "{:?}", n.stats());
    assert_eq!(
        n.stats(),
        NotifierStats {
            queued: 7,
            delivered: 7,
            failed: 0,
            dropped: 0
        }
    );

    // The listener consumes the info and error queues side by side: the
    // order holds within each.
    let mut got = Vec::new();
    for _ in &steps {
        got.push(listener.next().await);
    }
    for priority in [Priority::Info, Priority::Error] {
        let want: Vec<&Step> = steps
            .iter()
            .filter(|s| s.outcome.priority() == priority)
            .collect();
        let have: Vec<&Value> = got
            .iter()
            .filter(|g| g["priority"] == priority.routing())
            .collect();
        assert_eq!(have.len(), want.len(), "{priority:?}: {got:?}");
        for (g, s) in have.iter().zip(&want) {
            check(g, s);
        }
    }

    // On the wire: kombu's properties and the 2.0 envelope, in order.
    for step in &steps {
        let d = match tokio::time::timeout(WAIT, consumer.next()).await {
            Ok(Some(Ok(d))) => d,
            other => panic!("raw consumer: {other:?}"),
        };
        let _ = d.ack(BasicAckOptions::default()).await;
        assert_eq!(
            d.routing_key.as_str(),
            format!("{topic}.{}", step.outcome.priority().routing())
        );
        let p = &d.properties;
        assert_eq!(
            p.content_type().as_ref().map(|s| s.as_str()),
            Some("application/json")
        );
        assert_eq!(
            p.content_encoding().as_ref().map(|s| s.as_str()),
            Some("utf-8")
        );
        assert_eq!(*p.delivery_mode(), Some(2));
        let body: Value = serde_json::from_slice(&d.data).unwrap_or_else(|e| panic!("{e}"));
        let keys: Vec<&String> = body
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["oslo.version", "oslo.message"]);
        assert_eq!(body["oslo.version"], "2.0");
        let inner: Value = serde_json::from_str(body["oslo.message"].as_str().unwrap_or(""))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(inner["event_type"], step.action.event_type());
        assert_eq!(inner["priority"], step.outcome.priority().as_str());
        let unique = inner["_unique_id"].as_str().unwrap_or("");
        assert!(
            unique.len() == 32 && unique.bytes().all(|b| b.is_ascii_hexdigit()),
            "{unique}"
        );
    }
    let _ = raw.close(200, "OK".into()).await;
    listener.stop().await;
    delete_queues(&env, &topic).await;
}

#[tokio::test]
async fn notifications_wait_in_the_queue_for_a_listener_that_comes_later() {
    let Some(env) = env(false) else { return };
    let _one = BROKER.lock().await;
    let topic = format!("okm-notify-{}", Uuid::new_v4().simple());
    // Published before anybody listens: oslo's default queue keeps it.
    let n = Notifier::new(settings(&env, &topic)).unwrap_or_else(|e| panic!("{e}"));
    let step = &life()[0];
    send(&n, step);
    assert!(n.flush(WAIT).await, "{:?}", n.stats());
    let mut listener = Listener::start(&env, "magnum", &topic).await;
    check(&listener.next().await, step);
    listener.stop().await;
    delete_queues(&env, &topic).await;
}

/// Runs the test broker's rabbitmqctl.
fn ctl(path: &str, args: &[&str]) {
    let out = std::process::Command::new(path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(
        out.status.success(),
        "rabbitmqctl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Starts the broker's application again, even when the test fails.
struct Restart<'a>(&'a str);

impl Drop for Restart<'_> {
    fn drop(&mut self) {
        let _ = std::process::Command::new(self.0).arg("start_app").output();
    }
}

#[tokio::test]
async fn the_publisher_reconnects_after_a_broker_restart() {
    let Some(env) = env(true) else { return };
    let Some(ctl_path) = env.ctl.clone() else {
        return;
    };
    let _one = BROKER.lock().await;
    let topic = format!("okm-notify-{}", Uuid::new_v4().simple());
    let mut listener = Listener::start(&env, "magnum", &topic).await;
    let n = Notifier::new(settings(&env, &topic)).unwrap_or_else(|e| panic!("{e}"));
    let steps = life();

    send(&n, &steps[0]);
    check(&listener.next().await, &steps[0]);

    // The broker goes away with the publisher's connection; what is sent
    // meanwhile waits in the notifier's queue, retried.
    let restart = Restart(&ctl_path);
    let path = ctl_path.clone();
    tokio::task::spawn_blocking(move || ctl(&path, &["stop_app"]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    send(&n, &steps[1]);
    // The caller never waits for the broker.
    assert_eq!(n.stats().dropped, 0);
    assert!(
        !n.flush(Duration::from_secs(2)).await,
        "delivered while the broker is down: {:?}",
        n.stats()
    );
    let path = ctl_path.clone();
    tokio::task::spawn_blocking(move || ctl(&path, &["start_app"]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    drop(restart);

    assert!(n.flush(WAIT).await, "{:?}", n.stats());
    send(&n, &steps[2]);
    assert!(n.flush(WAIT).await, "{:?}", n.stats());
    assert_eq!(
        n.stats(),
        NotifierStats {
            queued: 3,
            delivered: 3,
            failed: 0,
            dropped: 0
        }
    );
    // The listener (kombu) reconnects too and gets both, in order.
    check(&listener.next().await, &steps[1]);
    check(&listener.next().await, &steps[2]);
    listener.stop().await;
    delete_queues(&env, &topic).await;
}
