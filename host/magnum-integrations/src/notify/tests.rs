//! Tests of the notifier without a broker: the bytes of every message
//! against golden bodies, driver selection, the queue and its retries.
//!
//! The golden bodies under `testdata/notify/` were written by
//! oslo.messaging 18.3.1's rabbit driver with pycadf 4.1.0 building the
//! event as Magnum 23.0.0's `notify_about_cluster_operation` does, from the
//! inputs of [`fixture`] (the same random UUIDs and clock), and read back
//! from the broker.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{NaiveDate, TimeZone, Utc};
use magnum_domain::models::{Cluster, NodeGroup};
use magnum_domain::{RequestContext, Status};
use serde_json::{Value, json};
use uuid::Uuid;

use super::amqp::{Outgoing, PublishError, Sink};
use super::*;

/// UUIDs `00000000-0000-4000-8000-00000000000N`, N = 1, 2, …
pub(crate) fn counting_uuids() -> Arc<dyn Fn() -> Uuid + Send + Sync> {
    let n = Arc::new(AtomicU64::new(0));
    Arc::new(move || {
        let i = n.fetch_add(1, Ordering::SeqCst) + 1;
        Uuid::from_u128((0x4000u128 << 64) | (0x8000u128 << 48) | u128::from(i))
    })
}

pub(crate) fn fixed_sources() -> Sources {
    Sources {
        now: Arc::new(|| {
            Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 5).unwrap()
                + chrono::Duration::microseconds(123_456)
        }),
        uuid4: counting_uuids(),
    }
}

pub(crate) fn user_context() -> RequestContext {
    RequestContext {
        request_id: "req-11111111-2222-4333-8444-555555555555".into(),
        auth_token: Some("gAAAA-secret-token".into()),
        user_id: "5f1e0c7a9d2b4e3f8a6b1c0d2e3f4a5b".into(),
        user_name: "demo".into(),
        user_domain_id: "default".into(),
        user_domain_name: "Default".into(),
        project_id: "9a8b7c6d5e4f40312a1b0c9d8e7f6a5b".into(),
        project_name: "demo".into(),
        project_domain_id: "default".into(),
        domain_id: String::new(),
        roles: vec!["member".into(), "reader".into()],
        ..Default::default()
    }
}

/// The context of Magnum's periodic status sync.
pub(crate) fn admin_context() -> RequestContext {
    RequestContext {
        request_id: "req-66666666-7777-4888-8999-000000000000".into(),
        is_admin: true,
        all_projects: true,
        ..Default::default()
    }
}

/// The cluster of the golden bodies: `pending` is the row when the create
/// starts, otherwise the row when the sync sees CREATE_COMPLETE.
pub(crate) fn fixture(pending: bool) -> (Cluster, Vec<NodeGroup>) {
    let at = |month, day, h, m, s, us| {
        NaiveDate::from_ymd_opt(2026, month, day)
            .unwrap()
            .and_hms_micro_opt(h, m, s, us)
            .unwrap()
    };
    let labels = [
        ("kube_tag", "v1.33.1"),
        ("auto_healing_enabled", "true"),
        ("caf\u{e9}", "\u{e9}t\u{e9} \"q\""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let cluster = Cluster {
        id: 7,
        uuid: "e1f2a3b4-c5d6-47e8-9f0a-1b2c3d4e5f60".into(),
        name: "k8s-1".into(),
        project_id: "9a8b7c6d5e4f40312a1b0c9d8e7f6a5b".into(),
        user_id: "5f1e0c7a9d2b4e3f8a6b1c0d2e3f4a5b".into(),
        cluster_template_id: "0c1d2e3f-4a5b-4c6d-8e7f-8a9b0c1d2e3f".into(),
        keypair: Some("mykey".into()),
        docker_volume_size: pending.then_some(20),
        labels: Some(labels),
        master_flavor_id: Some("m1.medium".into()),
        flavor_id: Some("m1.small".into()),
        stack_id: None,
        api_address: (!pending).then(|| "https://10.0.0.5:6443".into()),
        status: Some(if pending {
            Status::CreateInProgress
        } else {
            Status::CreateComplete
        }),
        status_reason: (!pending).then(|| "Stack CREATE completed successfully".into()),
        health_status: (!pending).then(|| "HEALTHY".into()),
        create_timeout: Some(60),
        created_at: at(11, 30, 7, 59, 0, 0),
        updated_at: (!pending).then(|| at(12, 1, 8, 0, 4, 500_000)),
        ..Default::default()
    };
    let ng = |id, role: &str, count, addrs: &[&str]| NodeGroup {
        id,
        uuid: format!("ng-{id}"),
        cluster_id: cluster.uuid.clone(),
        role: Some(role.into()),
        node_count: Some(count),
        node_addresses: Some(if pending {
            Vec::new()
        } else {
            addrs.iter().map(|a| a.to_string()).collect()
        }),
        ..Default::default()
    };
    let groups = vec![
        ng(2, "worker", 2, &["10.0.0.7", "10.0.0.8"]),
        ng(1, "master", 1, &["10.0.0.6"]),
    ];
    (cluster, groups)
}

fn golden(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/notify")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// One published message: exchange, routing key, body.
type Published = (String, String, Vec<u8>);

/// The messages handed to the broker side.
#[derive(Clone, Default)]
struct MemorySink(Arc<Mutex<Vec<Published>>>);

impl MemorySink {
    fn sent(&self) -> Vec<Published> {
        self.0.lock().unwrap().clone()
    }
}

impl Sink for MemorySink {
    async fn publish(&mut self, msg: &Outgoing) -> Result<(), PublishError> {
        self.0.lock().unwrap().push((
            msg.exchange.clone(),
            msg.routing_key.clone(),
            msg.body.clone(),
        ));
        Ok(())
    }

    fn peer(&self) -> String {
        "memory".into()
    }
}

fn settings(drivers: &[&str]) -> NotifierSettings {
    NotifierSettings {
        drivers: drivers.iter().map(|d| d.to_string()).collect(),
        publisher_id: publisher_id("node-1"),
        ..NotifierSettings::default()
    }
}

/// The body the notifier sends for one event, with `drivers`.
async fn one_body(
    drivers: &[&str],
    ctx: &RequestContext,
    pending: bool,
    action: Action,
    outcome: Outcome,
) -> (String, String, String) {
    let sink = MemorySink::default();
    let n = Notifier::with_sink(settings(drivers), fixed_sources(), sink.clone());
    let (cluster, groups) = fixture(pending);
    n.cluster_event(ctx, &cluster, &groups, action, outcome);
    assert!(n.flush(Duration::from_secs(5)).await);
    let sent = sink.sent();
    assert_eq!(sent.len(), 1);
    let (exchange, key, body) = sent.into_iter().next().unwrap();
    (exchange, key, String::from_utf8(body).unwrap())
}

#[tokio::test]
async fn create_pending_v2_is_byte_for_byte_oslos() {
    let (exchange, key, body) = one_body(
        &["messagingv2"],
        &user_context(),
        true,
        Action::Create,
        Outcome::Pending,
    )
    .await;
    assert_eq!(exchange, "magnum");
    assert_eq!(key, "notifications.info");
    assert_eq!(body, golden("create-pending-v2.json"));
}

#[tokio::test]
async fn create_pending_v1_is_byte_for_byte_oslos() {
    let (_, key, body) = one_body(
        &["messaging"],
        &user_context(),
        true,
        Action::Create,
        Outcome::Pending,
    )
    .await;
    assert_eq!(key, "notifications.info");
    assert_eq!(body, golden("create-pending-v1.json"));
}

#[tokio::test]
async fn status_sync_success_by_the_admin_context_is_byte_for_byte_oslos() {
    let (_, key, body) = one_body(
        &["messagingv2"],
        &admin_context(),
        false,
        Action::Create,
        Outcome::Success,
    )
    .await;
    assert_eq!(key, "notifications.info");
    assert_eq!(body, golden("create-success-admin-v2.json"));
}

#[tokio::test]
async fn failures_go_to_the_error_queue_byte_for_byte() {
    let (_, key, body) = one_body(
        &["messagingv2"],
        &user_context(),
        true,
        Action::Delete,
        Outcome::Failure,
    )
    .await;
    assert_eq!(key, "notifications.error");
    assert_eq!(body, golden("delete-failure-v2.json"));
    let inner: Value = serde_json::from_str(
        serde_json::from_str::<Value>(&body).unwrap()["oslo.message"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(inner["priority"], "ERROR");
    assert_eq!(inner["event_type"], "magnum.cluster.delete");
    assert_eq!(inner["payload"]["outcome"], "failure");
}

#[tokio::test]
async fn no_message_carries_the_token() {
    let (_, _, body) = one_body(
        &["messagingv2"],
        &user_context(),
        true,
        Action::Create,
        Outcome::Pending,
    )
    .await;
    assert!(!body.contains("secret-token"), "{body}");
    assert!(body.contains(r#"\"_context_auth_token\": null"#));
}

#[tokio::test]
async fn every_driver_and_topic_gets_its_own_publish() {
    let sink = MemorySink::default();
    let mut s = settings(&["messagingv2", "messaging", "test"]);
    s.topics = vec!["notifications".into(), "audit".into()];
    s.exchange = "openstack".into();
    let n = Notifier::with_sink(s, fixed_sources(), sink.clone());
    let (cluster, groups) = fixture(true);
    n.cluster_event(
        &user_context(),
        &cluster,
        &groups,
        Action::Update,
        Outcome::Pending,
    );
    assert!(n.flush(Duration::from_secs(5)).await);
    let sent = sink.sent();
    let keys: Vec<_> = sent.iter().map(|(e, k, _)| format!("{e}/{k}")).collect();
    assert_eq!(
        keys,
        [
            "openstack/notifications.info",
            "openstack/audit.info",
            "openstack/notifications.info",
            "openstack/audit.info"
        ]
    );
    let messages: Vec<Value> = sent
        .iter()
        .map(|(_, _, b)| {
            let v: Value = serde_json::from_slice(b).unwrap();
            match v.get("oslo.message").and_then(Value::as_str) {
                Some(inner) => serde_json::from_str(inner).unwrap(),
                None => v,
            }
        })
        .collect();
    // Two 2.0 bodies, then two 1.0 bodies.
    assert!(String::from_utf8_lossy(&sent[0].2).starts_with(r#"{"oslo.version": "2.0""#));
    assert!(String::from_utf8_lossy(&sent[2].2).starts_with(r#"{"message_id": "#));
    // One message id; a fresh _unique_id per publish.
    let ids: HashSet<&str> = messages
        .iter()
        .map(|m| m["message_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 1);
    let unique: HashSet<&str> = messages
        .iter()
        .map(|m| m["_unique_id"].as_str().unwrap())
        .collect();
    assert_eq!(unique.len(), 4);
    // The test driver kept the notification once.
    let kept = n.recorder().unwrap().take();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].event_type, "magnum.cluster.update");
    assert_eq!(kept[0].priority, Priority::Info);
    assert_eq!(kept[0].publisher_id, "container-infra.node-1");
    assert_eq!(kept[0].payload["outcome"], "pending");
    assert_eq!(
        n.stats(),
        NotifierStats {
            queued: 4,
            delivered: 4,
            failed: 0,
            dropped: 0
        }
    );
}

#[test]
fn driver_names_select_drivers_in_order_once() {
    let names: Vec<String> = [
        "messagingv2",
        "log",
        "routing",
        "messagingv2",
        " noop",
        "bogus",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (drivers, unknown) = select_drivers(&names);
    assert_eq!(
        drivers,
        [DriverKind::MessagingV2, DriverKind::Log, DriverKind::Noop]
    );
    assert_eq!(unknown, ["routing", "bogus"]);
    assert_eq!(DriverKind::parse("messaging"), Some(DriverKind::Messaging));
    assert_eq!(DriverKind::parse("test"), Some(DriverKind::Test));
}

#[tokio::test]
async fn no_driver_means_off_whatever_the_url() {
    let mut s = settings(&[]);
    s.transport_url = Secret::new("not a url");
    let n = Notifier::new(s).unwrap();
    assert!(!n.is_enabled());
    let (cluster, groups) = fixture(true);
    n.cluster_event(
        &user_context(),
        &cluster,
        &groups,
        Action::Create,
        Outcome::Pending,
    );
    assert_eq!(n.stats(), NotifierStats::default());
    assert!(n.recorder().is_none());
    for drivers in [&["noop"][..], &["routing"][..]] {
        let n = Notifier::new(settings(drivers)).unwrap();
        assert!(!n.is_enabled(), "{drivers:?}");
    }
    assert!(!Notifier::disabled().is_enabled());
}

#[tokio::test]
async fn the_amqp_drivers_refuse_a_bad_transport_url_without_quoting_it() {
    for (url, want) in [
        ("kafka://u:hunter2@h:9092", "not supported"),
        ("rabbit://u:hunter2@h:nope/", "port"),
        ("hunter2", "no scheme"),
    ] {
        let mut s = settings(&["messagingv2"]);
        s.transport_url = Secret::new(url);
        let e = Notifier::new(s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(want), "{url}: {e}");
        assert!(!e.contains("hunter2"), "{e}");
    }
    // The log and test drivers need no transport.
    let mut s = settings(&["log", "test"]);
    s.transport_url = Secret::new("kafka://h");
    assert!(Notifier::new(s).unwrap().is_enabled());
}

#[tokio::test]
async fn the_test_driver_and_recording_keep_what_a_listener_would_get() {
    let (n, kept) = Notifier::recording("container-infra.node-1", fixed_sources());
    let (cluster, groups) = fixture(false);
    n.cluster_event(
        &admin_context(),
        &cluster,
        &groups,
        Action::Create,
        Outcome::Success,
    );
    let all = kept.take();
    assert_eq!(all.len(), 1);
    let got = &all[0];
    assert_eq!(got.message_id, "00000000-0000-4000-8000-000000000004");
    assert_eq!(got.timestamp, "2026-12-01 08:00:05.123456");
    assert_eq!(got.context["is_admin"], true);
    assert_eq!(got.payload["target"]["id"], cluster.uuid);
    assert_eq!(
        got.payload["initiator"],
        json!({
            "id": "020ff9a6-a5e2-5d17-9d45-b71133343510",
            "typeURI": "service/security/account/user"
        })
    );
    assert!(kept.take().is_empty());
}

/// A broker that never answers.
struct StuckSink;

impl Sink for StuckSink {
    async fn publish(&mut self, _: &Outgoing) -> Result<(), PublishError> {
        std::future::pending().await
    }

    fn peer(&self) -> String {
        "stuck".into()
    }
}

#[tokio::test]
async fn a_full_queue_drops_new_notifications_without_blocking() {
    let mut s = settings(&["messagingv2"]);
    s.queue_capacity = 2;
    let n = Notifier::with_sink(s, fixed_sources(), StuckSink);
    let (cluster, groups) = fixture(true);
    // On this single-threaded runtime the draining task has not run yet:
    // the queue takes two messages and the other three are dropped, each
    // call returning at once.
    for _ in 0..5 {
        n.cluster_event(
            &user_context(),
            &cluster,
            &groups,
            Action::Create,
            Outcome::Pending,
        );
    }
    assert_eq!(
        n.stats(),
        NotifierStats {
            queued: 2,
            delivered: 0,
            failed: 0,
            dropped: 3
        }
    );
    // The task takes one and hangs on it; one place frees up.
    tokio::task::yield_now().await;
    n.cluster_event(
        &user_context(),
        &cluster,
        &groups,
        Action::Create,
        Outcome::Pending,
    );
    n.cluster_event(
        &user_context(),
        &cluster,
        &groups,
        Action::Create,
        Outcome::Pending,
    );
    assert_eq!(
        n.stats(),
        NotifierStats {
            queued: 3,
            delivered: 0,
            failed: 0,
            dropped: 4
        }
    );
    assert!(!n.flush(Duration::from_millis(1)).await);
}

/// A broker that fails the first `failures` attempts.
#[derive(Clone)]
struct FlakySink {
    failures: u32,
    attempts: Arc<AtomicU32>,
}

impl Sink for FlakySink {
    async fn publish(&mut self, _: &Outgoing) -> Result<(), PublishError> {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst);
        if n < self.failures {
            Err(PublishError::Nacked)
        } else {
            Ok(())
        }
    }

    fn peer(&self) -> String {
        "flaky".into()
    }
}

async fn retried(retry: i64, failures: u32) -> (NotifierStats, u32, Duration) {
    let mut s = settings(&["messagingv2"]);
    s.retry = retry;
    let attempts = Arc::new(AtomicU32::new(0));
    let sink = FlakySink {
        failures,
        attempts: attempts.clone(),
    };
    let n = Notifier::with_sink(s, fixed_sources(), sink);
    let (cluster, groups) = fixture(true);
    let start = tokio::time::Instant::now();
    n.cluster_event(
        &user_context(),
        &cluster,
        &groups,
        Action::Create,
        Outcome::Pending,
    );
    assert!(n.flush(Duration::from_secs(3600)).await);
    (n.stats(), attempts.load(Ordering::SeqCst), start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn retry_bounds_the_attempts_of_a_message() {
    // retry = 0: one attempt, then the message is given up.
    let (stats, attempts, waited) = retried(0, 10).await;
    assert_eq!((stats.delivered, stats.failed, attempts), (0, 1, 1));
    assert_eq!(waited, Duration::ZERO);
    // retry = 2: three attempts, waiting 1 s then 3 s.
    let (stats, attempts, waited) = retried(2, 10).await;
    assert_eq!((stats.delivered, stats.failed, attempts), (0, 1, 3));
    assert_eq!(waited, Duration::from_secs(4));
    // Success within the retries.
    let (stats, attempts, _) = retried(2, 2).await;
    assert_eq!((stats.delivered, stats.failed, attempts), (1, 0, 3));
    // retry = -1: until it goes through (1+3+5+…+29+30+30 s for 17 failures).
    let (stats, attempts, waited) = retried(-1, 17).await;
    assert_eq!((stats.delivered, stats.failed, attempts), (1, 0, 18));
    assert_eq!(waited, Duration::from_secs(225 + 60));
}

#[tokio::test]
async fn a_broker_that_is_down_never_holds_up_the_caller() {
    // A loopback port nobody listens on: connections are refused at once.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut s = settings(&["messagingv2"]);
    s.transport_url = Secret::new(format!("rabbit://u:hunter2@127.0.0.1:{port}/"));
    s.retry = 0;
    s.queue_capacity = 3;
    let n = Notifier::new(s).unwrap();
    let (cluster, groups) = fixture(true);
    for _ in 0..5 {
        n.cluster_event(
            &user_context(),
            &cluster,
            &groups,
            Action::Create,
            Outcome::Pending,
        );
    }
    let st = n.stats();
    assert_eq!(st.queued + st.dropped, 5, "{st:?}");
    assert!(st.dropped >= 2, "{st:?}");
    assert!(n.flush(Duration::from_secs(30)).await);
    let st = n.stats();
    assert_eq!((st.delivered, st.failed), (0, st.queued), "{st:?}");
}

#[test]
fn the_log_driver_logs_the_message_under_oslos_logger_name() {
    let out = test_support::logs::capture_json(tracing::Level::INFO);
    let n = {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let n = Notifier::with_sources(settings(&["log"]), fixed_sources()).unwrap();
            let (cluster, groups) = fixture(true);
            n.cluster_event(
                &user_context(),
                &cluster,
                &groups,
                Action::Delete,
                Outcome::Failure,
            );
            n
        })
    };
    assert!(n.is_enabled());
    let text = out.text();
    let line: Value = serde_json::from_str(text.lines().next().unwrap_or("{}")).unwrap();
    assert_eq!(line["level"], "ERROR", "{text}");
    assert_eq!(
        line["fields"]["logger"],
        "oslo.messaging.notification.magnum.cluster.delete"
    );
    let message: Value =
        serde_json::from_str(line["fields"]["notification"].as_str().unwrap()).unwrap();
    assert_eq!(message["event_type"], "magnum.cluster.delete");
    assert_eq!(message["priority"], "ERROR");
    assert_eq!(message["payload"]["outcome"], "failure");
    // The log line is the message alone: no context, no token.
    assert!(message.get("_context_user").is_none());
    assert!(!text.contains("secret-token"));
}

#[test]
fn the_status_sync_event_follows_the_status_reached() {
    let (n, kept) = Notifier::recording("container-infra.node-1", fixed_sources());
    let (mut cluster, groups) = fixture(false);
    for status in [
        Status::DeleteComplete,
        Status::RollbackFailed,
        Status::CreateInProgress,
        Status::CheckComplete,
    ] {
        cluster.status = Some(status);
        n.cluster_status_event(&admin_context(), &cluster, &groups);
    }
    cluster.status = None;
    n.cluster_status_event(&admin_context(), &cluster, &groups);
    let got: Vec<(String, Priority, Value)> = kept
        .take()
        .into_iter()
        .map(|n| (n.event_type, n.priority, n.payload["outcome"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "magnum.cluster.delete".to_owned(),
                Priority::Info,
                json!("success")
            ),
            (
                "magnum.cluster.update".to_owned(),
                Priority::Error,
                json!("failure")
            ),
        ]
    );
}
