//! CADF notifications of `all-in-one` over a real RabbitMQ
//! (`OKM_TEST_RABBITMQ_URL`, scripts/ci/rabbitmq.sh), received by a real
//! oslo.messaging notification listener (the crate's
//! `host/magnum-integrations/testdata/notify/listener.py` run by `OKM_TEST_NOTIFY_PYTHON`,
//! scripts/ci/notify-listener.sh), which rebuilds every payload with
//! pycadf. A cluster goes through create → update (resize) → delete over
//! the API; the listener must get Magnum's six events of it, in order, each
//! a valid CADF event about the cluster.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Answer, Server, request, service_env};

const WAIT: Duration = Duration::from_secs(120);
const HOST: &str = "okm-e2e-notify";
const PROJECT: &str = "3c1f7a2e9b8d4c6fa5e0d1b2c3a4f5e6";
const USER: &str = "7d2e8f3a0c1b4d5e9f6a7b8c9d0e1f2a";

/// The Python listener, its stdout lines coming through a channel.
struct Listener {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Listener {
    fn start(python: &str, url: &str, topic: &str) -> Listener {
        let script =
            test_support::repo_root().join("host/magnum-integrations/testdata/notify/listener.py");
        let mut child = Command::new(python)
            .arg(script)
            .args(["--url", url, "--exchange", "magnum", "--topic", topic])
            .args(["--priority", "info,error"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {python}: {e}"));
        let stdin = child.stdin.take();
        let out = child.stdout.take().expect("listener stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut l = Listener {
            child,
            stdin,
            lines,
        };
        let ready = l.next();
        assert_eq!(ready["ready"], true, "{ready}");
        l
    }

    /// The next line, as JSON.
    fn next(&mut self) -> Value {
        match self.lines.recv_timeout(WAIT) {
            Ok(line) => serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")),
            Err(e) => panic!("no line from the listener within {WAIT:?}: {e}"),
        }
    }

    /// What else arrives within `quiet`.
    fn more(&mut self, quiet: Duration) -> Vec<String> {
        let mut got = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(quiet) {
            got.push(line);
        }
        got
    }
}

impl Drop for Listener {
    /// Closing stdin stops the listener; it is killed if it does not.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Deletes the listener's two queues from the broker.
fn delete_queues(amqp_url: &str, topic: &str) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("queues of {topic} left on the broker: {e}");
            return;
        }
    };
    rt.block_on(async {
        let conn = match lapin::Connection::connect(
            amqp_url,
            lapin::ConnectionProperties::default(),
        )
        .await
        {
            Ok(c) => c,
            Err(e) => {
                eprintln!("queues of {topic} left on the broker: {e}");
                return;
            }
        };
        for p in ["info", "error"] {
            if let Ok(ch) = conn.create_channel().await {
                let _ = ch
                    .queue_delete(
                        format!("{topic}.{p}").as_str().into(),
                        lapin::options::QueueDeleteOptions::default(),
                    )
                    .await;
            }
        }
        let _ = conn.close(200, "OK".into()).await;
    });
}

/// A request of the test's user, at microversion 1.10.
fn call(s: &Server, method: &str, path: &str, body: Option<&Value>) -> Answer {
    let body = body.map(Value::to_string);
    let headers = [
        ("X-Project-Id", PROJECT),
        ("X-User-Id", USER),
        ("X-Roles", "member,reader"),
        ("Content-Type", "application/json"),
        ("OpenStack-API-Version", "container-infra 1.10"),
    ];
    request(
        method,
        &format!("{}{path}", s.url),
        &headers,
        body.as_deref(),
    )
    .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}

/// Waits until the cluster reads `want` (`None`: until it is gone).
fn wait_for(s: &Server, uuid: &str, want: Option<&str>) {
    let deadline = Instant::now() + WAIT;
    loop {
        let a = call(s, "GET", &format!("/v1/clusters/{uuid}"), None);
        let status = match a.status {
            200 => a.json()["status"].as_str().unwrap_or_default().to_owned(),
            404 => String::new(),
            other => panic!("GET cluster: {other}"),
        };
        if want.map_or(status.is_empty(), |w| status == w) {
            return;
        }
        assert!(
            !status.ends_with("FAILED") && Instant::now() < deadline,
            "cluster {uuid} is {status:?}, waiting for {want:?}\n{}",
            s.output()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Checks one event the listener got: the event type and priority, a
/// payload pycadf accepts as an Event, about the cluster in `status`, with
/// the initiator of the user's request or of the status sync.
fn check(got: &Value, uuid: &str, action: &str, outcome: &str, status: &str, by_user: bool) {
    let what = format!("{action} {outcome}: {got}");
    assert_eq!(
        got["event_type"],
        format!("magnum.cluster.{action}"),
        "{what}"
    );
    assert_eq!(got["priority"], "info", "{what}");
    assert_eq!(
        got["publisher_id"],
        format!("container-infra.{HOST}"),
        "{what}"
    );
    assert_eq!(got["cadf"], "ok", "pycadf refused the payload: {what}");
    let p = &got["payload"];
    assert_eq!(
        p["typeURI"], "http://schemas.dmtf.org/cloud/audit/1.0/event",
        "{what}"
    );
    assert_eq!(p["eventType"], "activity", "{what}");
    assert_eq!(p["action"], action, "{what}");
    assert_eq!(p["outcome"], outcome, "{what}");
    assert_eq!(p["target"]["id"], uuid, "{what}");
    assert_eq!(
        p["target"]["attachments"][0]["content"]["status"], status,
        "{what}"
    );
    assert_eq!(p["observer"]["typeURI"], "service/magnum/cluster", "{what}");
    assert_eq!(got["ctxt"]["auth_token"], Value::Null, "{what}");
    if by_user {
        assert_eq!(p["initiator"]["user_id"], USER, "{what}");
        assert_eq!(p["initiator"]["project_id"], PROJECT, "{what}");
    } else {
        assert!(p["initiator"].get("user_id").is_none(), "{what}");
        assert_eq!(got["ctxt"]["is_admin"], true, "{what}");
    }
    let id = got["metadata"]["message_id"].as_str().unwrap_or_default();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{what}");
}

#[test]
fn a_cluster_life_reaches_the_oslo_listener_in_order_as_cadf() {
    let Some(amqp_url) = service_env("OKM_TEST_RABBITMQ_URL") else {
        return;
    };
    let Some(python) = service_env("OKM_TEST_NOTIFY_PYTHON") else {
        return;
    };
    let transport_url = match amqp_url.strip_prefix("amqp://") {
        Some(rest) => format!("rabbit://{rest}"),
        None => panic!("OKM_TEST_RABBITMQ_URL must be an amqp:// URL"),
    };
    let topic = format!("okm-e2e-{}", uuid::Uuid::new_v4().simple());
    let mut listener = Listener::start(&python, &transport_url, &topic);
    let s = Server::start(
        &format!(
            "[DEFAULT]\nhost = {HOST}\ntransport_url = {transport_url}\n\
             [oslo_messaging_notifications]\ndriver = messagingv2\ntopics = {topic}\n"
        ),
        &["all-in-one"],
    );
    let a = call(
        &s,
        "POST",
        "/v1/clustertemplates",
        Some(&json!({
            "name": "tpl1",
            "coe": "kubernetes",
            "image_id": "ubuntu-jammy-kube",
            "external_network_id": "public",
            "flavor_id": "m1.small",
            "master_flavor_id": "m1.medium",
        })),
    );
    assert_eq!(a.status, 201, "{}", String::from_utf8_lossy(&a.body));
    let a = call(
        &s,
        "POST",
        "/v1/clusters",
        Some(&json!({"name": "c1", "cluster_template_id": "tpl1", "node_count": 1})),
    );
    assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
    let uuid = a.json()["uuid"].as_str().unwrap_or_default().to_owned();
    wait_for(&s, &uuid, Some("CREATE_COMPLETE"));
    let a = call(
        &s,
        "POST",
        &format!("/v1/clusters/{uuid}/actions/resize"),
        Some(&json!({"node_count": 2})),
    );
    assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
    wait_for(&s, &uuid, Some("UPDATE_COMPLETE"));
    let a = call(&s, "DELETE", &format!("/v1/clusters/{uuid}"), None);
    assert_eq!(a.status, 204, "{}", String::from_utf8_lossy(&a.body));
    wait_for(&s, &uuid, None);

    // Magnum's events of the cycle: each operation's start by the user's
    // request (pending, with the status the driver was called on) and its
    // end seen by the status sync (success).
    let want = [
        ("create", "pending", "CREATE_IN_PROGRESS", true),
        ("create", "success", "CREATE_COMPLETE", false),
        ("update", "pending", "CREATE_COMPLETE", true),
        ("update", "success", "UPDATE_COMPLETE", false),
        ("delete", "pending", "DELETE_IN_PROGRESS", true),
        ("delete", "success", "DELETE_COMPLETE", false),
    ];
    for (action, outcome, status, by_user) in want {
        let got = listener.next();
        check(&got, &uuid, action, outcome, status, by_user);
    }
    let extra = listener.more(Duration::from_secs(2));
    assert!(extra.is_empty(), "events after the delete: {extra:?}");
    drop(listener);
    drop(s);
    delete_queues(&amqp_url, &topic);
}
