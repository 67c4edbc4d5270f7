//! Tests of the create jobs: the create answers before its job, a delete
//! before or during the job, the quota on the pool, failures, the resume
//! of an orphaned create and the stop of the pool.
//!
//! The Go tests wrapped the driver to record its calls; the driver is a
//! sandboxed component here, so its calls are read from Magnum's
//! notifications, which the conductor sends right before it calls the
//! driver (`create` and `delete` with the outcome `pending`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use chrono::DateTime;
use futures::future::BoxFuture;
use magnum_domain::models::{Cluster, StringMap};
use magnum_domain::{MagnumError, Status};
use tokio::sync::{Semaphore, mpsc};

use crate::certs::{AskHook, KeyGenerator, KeyPair, Owner, Store, StoreError, X509KeyPairStore};
use crate::conductor::testing::TestConductor;
use crate::conductor::testing::{Env, caller};
use crate::conductor::{CREATE_ORPHAN_AGE, ClusterCreate, Conductor, Error};
use crate::conductor::{Hook, JobHooks};
use crate::db::testing::dialect_tests;
use crate::db::{Dialect, ListOptions, Scope};
use crate::reconcile::{Reconciler, Settings as ReconcilerSettings};
use crate::testing::{MEMBER, TestApp};

/// Counts the certificates stored; `fail` makes `put` fail.
struct Counting {
    inner: X509KeyPairStore,
    puts: AtomicU64,
    fail: AtomicBool,
}

impl Store for Counting {
    fn put<'a>(
        &'a self,
        owner: Owner<'a>,
        kp: &'a KeyPair,
        name: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        self.puts.fetch_add(1, Ordering::SeqCst);
        if self.fail.load(Ordering::SeqCst) {
            return Box::pin(async { Err(StoreError::Backend("store unavailable".into())) });
        }
        self.inner.put(owner, kp, name)
    }

    fn get<'a>(&'a self, reference: &'a str) -> BoxFuture<'a, Result<KeyPair, StoreError>> {
        self.inner.get(reference)
    }

    fn delete<'a>(&'a self, reference: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.delete(reference)
    }
}

/// A gate closed until [`Gate::open`].
#[derive(Clone)]
struct Gate(Arc<Semaphore>);

impl Gate {
    fn new() -> Gate {
        Gate(Arc::new(Semaphore::new(0)))
    }

    fn open(&self) {
        self.0.add_permits(Semaphore::MAX_PERMITS / 2);
    }

    async fn pass(&self) {
        // A closed semaphore (never here) lets everyone through.
        let _ = self.0.acquire().await;
    }
}

/// A hook that reports the cluster on `tx`, then waits for `gate` (when
/// given).
fn hook(tx: Option<mpsc::UnboundedSender<String>>, gate: Option<Gate>) -> Option<Hook> {
    Some(Arc::new(move |uuid: String| {
        let (tx, gate) = (tx.clone(), gate.clone());
        Box::pin(async move {
            if let Some(tx) = tx {
                let _ = tx.send(uuid);
            }
            if let Some(g) = gate {
                g.pass().await;
            }
        }) as BoxFuture<'static, ()>
    }))
}

/// An [`Env`] whose conductor runs creates on a pool of two workers, with
/// the counting store and the end of every job signalled on `done`.
struct Jobs {
    env: Env,
    store: Arc<Counting>,
    done: mpsc::UnboundedReceiver<String>,
}

async fn jobs(d: Dialect, hooks: JobHooks) -> Jobs {
    jobs_with_keys(d, hooks, None).await
}

/// [`jobs`] with one cluster created whose create job waits for the
/// returned gate to open.
async fn queued_create(d: Dialect) -> (Gate, Jobs, Cluster) {
    let gate = Gate::new();
    let hooks = JobHooks {
        before_job: hook(None, Some(gate.clone())),
        ..JobHooks::default()
    };
    let e = jobs(d, hooks).await;
    let cl = e.create(&[]).await;
    (gate, e, cl)
}

/// [`jobs`] with `keys` as the key generator (when given).
async fn jobs_with_keys(d: Dialect, mut hooks: JobHooks, keys: Option<KeyGenerator>) -> Jobs {
    let slot: Arc<std::sync::Mutex<Option<Arc<Counting>>>> = Arc::default();
    let s = slot.clone();
    let t = TestConductor::builder()
        .dialect(d)
        .parts(move |p| {
            p.certificates.x509.rsa_key_size = 1024;
            if let Some(k) = keys {
                p.certificates.keys = Arc::new(k);
            }
            let store = Arc::new(Counting {
                inner: X509KeyPairStore::new(Arc::new(p.db.clone())),
                puts: AtomicU64::new(0),
                fail: AtomicBool::new(false),
            });
            p.certificates.store = store.clone();
            if let Ok(mut s) = s.lock() {
                *s = Some(store);
            }
        })
        .build()
        .await;
    let store = slot.lock().expect("lock").clone().expect("store");
    let env = Env::with(t).await;
    let (tx, done) = mpsc::unbounded_channel();
    hooks.after_job = hook(Some(tx), None);
    env.c().set_create_job_hooks(hooks);
    env.c().start_create_jobs(2);
    Jobs { env, store, done }
}

impl Jobs {
    fn c(&self) -> &Conductor {
        self.env.c()
    }

    async fn create(&self, labels: &[(&str, &str)]) -> Cluster {
        let labels: StringMap = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.c()
            .create_cluster(
                &caller("p1"),
                ClusterCreate {
                    labels: Some(labels),
                    merge_labels: true,
                    ..self.env.input()
                },
            )
            .await
            .expect("create")
    }

    async fn row(&self, uuid: &str) -> Option<Cluster> {
        self.env.row(uuid).await
    }

    async fn key_pairs(&self) -> usize {
        self.env
            .db()
            .q()
            .list_x509keypairs(&Scope::ALL_PROJECTS, &ListOptions::default())
            .await
            .expect("key pairs")
            .len()
    }

    async fn done(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(120), self.done.recv())
            .await
            .expect("a job ended")
            .expect("job channel open")
    }

    /// The driver operations started, in order (`create`, `delete`).
    fn calls(&self) -> Vec<String> {
        self.env
            .t
            .notifications
            .all()
            .iter()
            .filter(|n| n.payload["outcome"] == "pending")
            .map(|n| {
                n.event_type
                    .trim_start_matches("magnum.cluster.")
                    .to_string()
            })
            .collect()
    }

    /// One pass of the status loop.
    async fn tick(&self) {
        Reconciler::new(self.c().clone(), ReconcilerSettings::new("test"))
            .tick()
            .await
            .expect("tick");
    }

    async fn stop(&self) {
        self.c()
            .stop_create_jobs(Duration::from_secs(120))
            .await
            .expect("stop create jobs");
    }
}

fn has_certs(cl: &Cluster) -> bool {
    [
        &cl.ca_cert_ref,
        &cl.magnum_cert_ref,
        &cl.etcd_ca_cert_ref,
        &cl.front_proxy_ca_cert_ref,
    ]
    .iter()
    .all(|r| r.as_deref().is_some_and(|s| !s.is_empty()))
}

// Ports TestCreateAnswersBeforeJob: the create returns with the rows
// written and nothing else; the poller leaves the cluster alone while its
// job waits; then the job stores the four certificates and calls the
// driver once.
async fn create_answers_before_its_job(d: Dialect) {
    let (gate, mut e, cl) = queued_create(d).await;
    let row = e.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::CreateInProgress));
    assert!(
        row.ca_cert_ref.is_none() && row.stack_id.is_none(),
        "{row:?}"
    );
    assert_eq!(e.store.puts.load(Ordering::SeqCst), 0);
    assert!(e.calls().is_empty(), "{:?}", e.calls());
    assert!(
        e.c().poll_cluster(&cl.uuid).await.expect("poll").is_none(),
        "a queued create is not polled"
    );
    e.tick().await;
    let row = e.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::CreateInProgress));
    assert!(
        row.stack_id.is_none(),
        "the status loop touched a queued create"
    );
    gate.open();
    assert_eq!(e.done().await, cl.uuid);
    let row = e.row(&cl.uuid).await.expect("row");
    assert!(has_certs(&row) && row.stack_id.is_some(), "{row:?}");
    assert_eq!(row.status, Some(Status::CreateInProgress));
    assert_eq!(e.store.puts.load(Ordering::SeqCst), 4);
    assert_eq!(e.key_pairs().await, 4);
    assert_eq!(e.calls(), vec!["create"]);
    let ca = row.ca_cert_ref.as_deref().expect("CA");
    e.c().certificates().store.get(ca).await.expect("the CA");
    e.tick().await;
    assert_eq!(
        e.row(&cl.uuid).await.and_then(|c| c.status),
        Some(Status::CreateComplete)
    );
    e.stop().await;
}

// Ports TestDeleteBeforeCreateJob: a delete while the job is queued; the
// job then generates nothing and does not call the driver's create, and
// the status loop finishes the delete (rows and certificates gone).
async fn delete_before_the_create_job(d: Dialect) {
    let (gate, mut e, cl) = queued_create(d).await;
    e.c()
        .delete_cluster(&caller("p1"), &cl)
        .await
        .expect("delete");
    gate.open();
    e.done().await;
    assert_eq!(e.store.puts.load(Ordering::SeqCst), 0);
    assert_eq!(e.calls(), vec!["delete"]);
    assert_eq!(
        e.row(&cl.uuid).await.and_then(|c| c.status),
        Some(Status::DeleteInProgress)
    );
    e.tick().await;
    assert!(e.row(&cl.uuid).await.is_none(), "cluster still there");
    assert!(e.env.nodegroups(&cl.uuid).await.is_empty());
    assert_eq!(e.key_pairs().await, 0);
    e.stop().await;
}

// Ports TestDeleteStopsCertificateGeneration: a delete of a cluster whose
// job is generating its certificates stops the generation: no key is
// stored, the driver's create is never called, and the cluster goes.
async fn delete_stops_the_certificate_generation(d: Dialect) {
    delete_held_at(d, |h| JobHooks {
        before_certificates: h,
        ..JobHooks::default()
    })
    .await;
}

// A delete that lands after the job read the cluster's row and before its
// generation started stops the generation all the same: the job registers
// for the stop before it reads, so no key of the deleted cluster is made.
async fn delete_between_the_jobs_read_and_its_generation(d: Dialect) {
    delete_held_at(d, |h| JobHooks {
        after_read: h,
        ..JobHooks::default()
    })
    .await;
}

/// A delete while the create job is held at the hook `at` places: no key
/// is stored, the driver's create is never called, and the cluster goes.
async fn delete_held_at(d: Dialect, at: fn(Option<Hook>) -> JobHooks) {
    let gate = Gate::new();
    let (tx, mut held) = mpsc::unbounded_channel();
    let mut e = jobs(d, at(hook(Some(tx), Some(gate.clone())))).await;
    let cl = e.create(&[]).await;
    held.recv().await.expect("held");
    let r = e.c().delete_cluster(&caller("p1"), &cl).await;
    gate.open();
    r.expect("delete");
    e.done().await;
    assert_eq!(e.store.puts.load(Ordering::SeqCst), 0, "keys generated");
    assert_eq!(e.calls(), vec!["delete"]);
    e.tick().await;
    assert!(e.row(&cl.uuid).await.is_none(), "cluster still there");
    e.stop().await;
}

// Ports TestDeleteWhileCreateJobRuns, "before the certificates are saved":
// the delete does not wait for certificates it makes useless; the job then
// drops them and skips the driver.
async fn delete_before_the_certificates_are_saved(d: Dialect) {
    let gate = Gate::new();
    let (tx, mut saving) = mpsc::unbounded_channel();
    let mut e = jobs(
        d,
        JobHooks {
            before_save: hook(Some(tx), Some(gate.clone())),
            ..JobHooks::default()
        },
    )
    .await;
    let cl = e.create(&[]).await;
    saving.recv().await.expect("saving");
    let r = tokio::time::timeout(
        Duration::from_secs(60),
        e.c().delete_cluster(&caller("p1"), &cl),
    )
    .await;
    gate.open();
    r.expect("the delete waited for the create job's certificates")
        .expect("delete");
    e.done().await;
    assert_eq!(e.calls(), vec!["delete"]);
    assert_eq!(e.key_pairs().await, 0, "certificates left");
    e.tick().await;
    assert!(e.row(&cl.uuid).await.is_none(), "cluster still there");
    e.stop().await;
}

// Ports TestDeleteWhileCreateJobRuns, "inside the driver's create": the
// delete waits for the driver's create, then reaches what it created.
async fn delete_during_the_drivers_create(d: Dialect) {
    let gate = Gate::new();
    let (entered_tx, mut entered) = mpsc::unbounded_channel();
    let (waits_tx, mut waits) = mpsc::unbounded_channel();
    let mut e = jobs(
        d,
        JobHooks {
            before_driver: hook(Some(entered_tx), Some(gate.clone())),
            lock_waits: hook(Some(waits_tx), None),
            ..JobHooks::default()
        },
    )
    .await;
    let cl = e.create(&[]).await;
    entered.recv().await.expect("entered");
    let (c, cl2) = (e.c().clone(), cl.clone());
    let delete = tokio::spawn(async move { c.delete_cluster(&caller("p1"), &cl2).await });
    // The delete waits for the running job, it does not call the driver.
    assert_eq!(waits.recv().await.as_deref(), Some(cl.uuid.as_str()));
    assert_eq!(e.calls(), vec!["create"]);
    gate.open();
    e.done().await;
    delete.await.expect("task").expect("delete");
    assert_eq!(e.calls(), vec!["create", "delete"]);
    let row = e.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::DeleteInProgress));
    assert!(row.stack_id.is_some() && has_certs(&row), "{row:?}");
    e.tick().await;
    assert!(e.row(&cl.uuid).await.is_none(), "cluster still there");
    assert_eq!(e.key_pairs().await, 0);
    e.stop().await;
}

// Ports TestCreateJobsQuota: concurrent creates on the pool at a limit of
// 10 — exactly 10 accepted, each finished by exactly one job.
async fn create_jobs_keep_the_quota(d: Dialect) {
    let e = Arc::new(jobs(d, JobHooks::default()).await);
    e.env.set_quota("p1", 10).await;
    let mut tasks = Vec::new();
    for _ in 0..40 {
        let e = e.clone();
        tasks.push(tokio::spawn(async move {
            e.c().create_cluster(&caller("p1"), e.env.input()).await
        }));
    }
    let (mut ok, mut deny) = (0, 0);
    for t in tasks {
        match t.await.expect("task") {
            Ok(_) => ok += 1,
            Err(Error::Client(m)) if m.status == 403 => deny += 1,
            Err(other) => panic!("create: {other}"),
        }
    }
    e.stop().await;
    assert_eq!((ok, deny), (10, 30));
    let rows = e
        .env
        .db()
        .q()
        .list_clusters(
            &crate::db::ClusterFilter::scope(Scope::project("p1")),
            &ListOptions::default(),
        )
        .await
        .expect("rows");
    assert_eq!(rows.len(), 10);
    for cl in &rows {
        assert!(has_certs(cl) && cl.stack_id.is_some(), "{cl:?}");
    }
    assert_eq!(e.calls().iter().filter(|c| *c == "create").count(), 10);
    assert_eq!(e.key_pairs().await, 40);
}

// A delete of a cluster whose certificate generation is running (the key
// thread made the first key and is held before the second) stops it: the
// thread's next ask is answered "stop" and there is no third ask, nothing
// is stored, the driver's create is never called, and the cluster goes.
async fn delete_stops_a_running_generation(d: Dialect) {
    let (asks_tx, mut asks) = mpsc::unbounded_channel::<usize>();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let release_rx = std::sync::Mutex::new(release_rx);
    let ask: AskHook = Arc::new(move |n| {
        let _ = asks_tx.send(n);
        if n == 2
            && let Ok(rx) = release_rx.lock()
        {
            let _ = rx.recv();
        }
    });
    let keys = KeyGenerator::start_with_ask_hook(1, ask).expect("key generator");
    let mut e = jobs_with_keys(d, JobHooks::default(), Some(keys)).await;
    let cl = e.create(&[]).await;
    assert_eq!(asks.recv().await, Some(1), "the generation started");
    assert_eq!(asks.recv().await, Some(2), "the first key is made");
    assert_eq!(e.store.puts.load(Ordering::SeqCst), 0);
    e.c()
        .delete_cluster(&caller("p1"), &cl)
        .await
        .expect("delete");
    // The job gave up waiting for the generation, which is still held.
    e.done().await;
    release_tx.send(()).expect("release the key thread");
    // One key thread serves jobs in order: once this one answers, the
    // generation has ended.
    e.c()
        .certificates()
        .keys
        .run(|_| ())
        .await
        .expect("the key thread serves on");
    assert!(
        asks.try_recv().is_err(),
        "the generation went on after the delete"
    );
    assert_eq!(e.store.puts.load(Ordering::SeqCst), 0);
    assert_eq!(e.key_pairs().await, 0);
    assert_eq!(e.calls(), vec!["delete"]);
    e.tick().await;
    assert!(e.row(&cl.uuid).await.is_none(), "cluster still there");
    e.stop().await;
}

// POST /v1/clusters answers 202 before the cluster's keys exist: with its
// job held, the cluster reads CREATE_IN_PROGRESS without certificates and
// there is no key pair row; released, the job stores the four and
// references them.
#[tokio::test]
async fn the_create_route_answers_202_before_the_keys_exist() {
    let gate = Gate::new();
    let (tx, mut done) = mpsc::unbounded_channel();
    let t = TestConductor::builder()
        .parts(|p| p.certificates.x509.rsa_key_size = 1024)
        .build()
        .await;
    let env = Env::with(t).await;
    env.c().set_create_job_hooks(JobHooks {
        before_job: hook(None, Some(gate.clone())),
        after_job: hook(Some(tx), None),
        ..JobHooks::default()
    });
    env.c().start_create_jobs(1);
    let app = TestApp::over(env.t);
    let a = app
        .call(
            "POST /v1/clusters",
            r#"{"name": "c1", "cluster_template_id": "tmpl", "node_count": 1}"#,
            MEMBER,
        )
        .await;
    assert_eq!(a.status.as_u16(), 202, "{}", a.text());
    let uuid = a.json()["uuid"].as_str().unwrap_or_default().to_owned();
    let db = app.t.conductor.db();
    let pairs = || async {
        db.q()
            .list_x509keypairs(&Scope::ALL_PROJECTS, &ListOptions::default())
            .await
            .expect("key pairs")
            .len()
    };
    let row = || async {
        db.q()
            .get_cluster_by_uuid(&uuid, &Scope::ALL_PROJECTS)
            .await
            .expect("row")
    };
    assert_eq!(pairs().await, 0, "a key pair exists before the job ran");
    let before = row().await;
    assert_eq!(before.status, Some(Status::CreateInProgress));
    assert!(
        !has_certs(&before) && before.ca_cert_ref.is_none(),
        "{before:?}"
    );
    gate.open();
    let ended = tokio::time::timeout(Duration::from_secs(120), done.recv()).await;
    assert_eq!(ended.ok().flatten().as_deref(), Some(uuid.as_str()));
    assert_eq!(pairs().await, 4);
    assert!(has_certs(&row().await), "the job saved no reference");
    app.t
        .conductor
        .stop_create_jobs(Duration::from_secs(120))
        .await
        .expect("stop create jobs");
}

dialect_tests!(
    create_answers_before_its_job,
    delete_before_the_create_job,
    delete_stops_the_certificate_generation,
    delete_between_the_jobs_read_and_its_generation,
    delete_stops_a_running_generation,
    delete_before_the_certificates_are_saved,
    delete_during_the_drivers_create,
    create_jobs_keep_the_quota,
);

// Ports TestCreateJobFailures, "driver": an error of the driver's create
// leaves the cluster CREATE_FAILED with the driver's reason.
#[tokio::test]
async fn a_driver_error_fails_the_create() {
    let mut e = jobs(Dialect::Sqlite, JobHooks::default()).await;
    let cl = e
        .create(&[
            ("fake_error", "create"),
            ("fake_fail_reason", "no capacity"),
        ])
        .await;
    e.done().await;
    let row = e.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::CreateFailed));
    assert_eq!(row.status_reason.as_deref(), Some("no capacity"));
    // Magnum's create failure follows the pending one.
    let outcomes: Vec<String> = e
        .env
        .t
        .notifications
        .all()
        .iter()
        .map(|n| {
            format!(
                "{} {}",
                n.event_type,
                n.payload["outcome"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            "magnum.cluster.create pending",
            "magnum.cluster.create failure"
        ]
    );
    e.stop().await;
}

// Ports TestCreateJobFailures, "certificates": a certificate store error
// leaves the cluster CREATE_FAILED with Magnum's reason, without a driver
// call.
#[tokio::test]
async fn a_certificate_store_error_fails_the_create() {
    let mut e = jobs(Dialect::Sqlite, JobHooks::default()).await;
    e.store.fail.store(true, Ordering::SeqCst);
    let cl = e.create(&[]).await;
    e.done().await;
    let row = e.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::CreateFailed));
    assert_eq!(
        row.status_reason,
        Some(MagnumError::certificates_to_cluster_failed(&cl.uuid).message)
    );
    assert!(e.calls().is_empty(), "{:?}", e.calls());
    e.stop().await;
}

// Ports TestResumeOrphanedCreate: a create accepted by a process whose job
// never runs is left alone by another process's status loop until
// CREATE_ORPHAN_AGE, then finished by it (once); the late job of the first
// process then does nothing.
#[tokio::test]
async fn an_orphaned_create_is_resumed() {
    let (gate, mut e, cl) = queued_create(Dialect::Sqlite).await;
    // Another process, with its own clock.
    let offset = Arc::new(AtomicI64::new(0));
    let (base, o) = (e.env.t.seconds.clone(), offset.clone());
    let mut parts = e.c().parts();
    parts.clock = Arc::new(move || {
        DateTime::from_timestamp(base.load(Ordering::SeqCst) + o.load(Ordering::SeqCst), 0)
            .map(|t| t.naive_utc())
            .unwrap_or_default()
    });
    let other = Reconciler::new(Conductor::new(parts), ReconcilerSettings::new("other"));
    other.tick().await.expect("tick");
    let row = e.row(&cl.uuid).await.expect("row");
    assert!(
        row.status == Some(Status::CreateInProgress) && !has_certs(&row) && e.calls().is_empty(),
        "a young pending create was touched: {row:?} {:?}",
        e.calls()
    );
    let age = i64::try_from(CREATE_ORPHAN_AGE.as_secs()).unwrap_or(i64::MAX);
    offset.store(age + 60, Ordering::SeqCst);
    other.tick().await.expect("tick");
    let row = e.row(&cl.uuid).await.expect("row");
    assert!(
        has_certs(&row) && row.stack_id.is_some(),
        "not resumed: {row:?}"
    );
    assert_eq!(e.calls(), vec!["create"]);
    let kps = e
        .env
        .db()
        .q()
        .list_x509keypairs(&Scope::ALL_PROJECTS, &ListOptions::default())
        .await
        .expect("key pairs");
    assert_eq!(kps.len(), 4);
    assert_eq!(kps[0].project_id, "p1", "owned by the cluster's project");
    other.tick().await.expect("tick");
    assert_eq!(
        e.row(&cl.uuid).await.and_then(|c| c.status),
        Some(Status::CreateComplete)
    );
    gate.open();
    e.done().await;
    assert_eq!(e.calls(), vec!["create"], "the late job acted");
    assert_eq!(e.key_pairs().await, 4);
    e.stop().await;
}

// Ports TestStopCreateJobsDrains: creates queued before the stop are
// finished; creates after it run within the call.
#[tokio::test]
async fn the_stop_drains_the_queue() {
    let e = jobs(Dialect::Sqlite, JobHooks::default()).await;
    let mut uuids = Vec::new();
    for _ in 0..5 {
        uuids.push(e.create(&[]).await.uuid);
    }
    e.stop().await;
    for u in &uuids {
        let row = e.row(u).await.expect("row");
        assert!(
            has_certs(&row) && row.stack_id.is_some(),
            "{u} not finished"
        );
    }
    let cl = e.create(&[]).await;
    let row = e.row(&cl.uuid).await.expect("row");
    assert!(
        has_certs(&row) && row.stack_id.is_some(),
        "a create after the stop ran its job within the call: {row:?}"
    );
}

// Ports TestStopCreateJobsDropsOnDeadline: when the grace period ends
// first, running jobs still finish and queued ones are dropped, their
// clusters left pending for the status loop (and no longer marked busy).
#[tokio::test]
async fn the_stop_drops_the_queue_after_its_grace_period() {
    let gate = Gate::new();
    let (tx, mut taken) = mpsc::unbounded_channel();
    let e = jobs(
        Dialect::Sqlite,
        JobHooks {
            before_job: hook(Some(tx), Some(gate.clone())),
            ..JobHooks::default()
        },
    )
    .await;
    // Two workers: hold both, then queue a third create.
    let running = [e.create(&[]).await.uuid, e.create(&[]).await.uuid];
    taken.recv().await.expect("taken");
    taken.recv().await.expect("taken");
    let queued = e.create(&[]).await;
    let c = e.c().clone();
    let stop = tokio::spawn(async move { c.stop_create_jobs(Duration::ZERO).await });
    while !e.c().create_jobs_dropping() {
        tokio::task::yield_now().await;
    }
    gate.open();
    let err = stop.await.expect("task").expect_err("one job dropped");
    assert_eq!(err, crate::conductor::JobsDropped(1), "{err}");
    for u in &running {
        let row = e.row(u).await.expect("row");
        assert!(
            has_certs(&row) && row.stack_id.is_some(),
            "{u} did not finish"
        );
    }
    let row = e.row(&queued.uuid).await.expect("row");
    assert!(!has_certs(&row) && row.stack_id.is_none(), "{row:?}");
    assert_eq!(row.status, Some(Status::CreateInProgress));
    assert_eq!(e.calls(), vec!["create", "create"]);
    assert!(
        e.c()
            .poll_cluster(&queued.uuid)
            .await
            .expect("poll")
            .is_some(),
        "the dropped create is still marked busy"
    );
}
