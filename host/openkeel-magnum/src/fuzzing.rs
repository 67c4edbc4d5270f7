//! The body of the `request` fuzz target (`fuzz/fuzz_targets/request.rs`),
//! kept here so that its seed corpus (`fuzz/corpus/seed-request/`) also runs
//! as an ordinary test through the same code.
//!
//! [`request`] builds one HTTP request from the fuzz input and sends it to
//! the whole in-process application (the pipeline and every handler, as
//! [`crate::api::handlers`] binds them) over a conductor on an
//! in-memory SQLite database, without authentication (the caller is given
//! by the `X-Project-Id`, `X-User-Id` and `X-Roles` headers) and without
//! any driver loaded (the driver host starts with no package: the target
//! exercises the API, not the sandbox). The database holds a template, a
//! cluster with its two nodegroups and a quota, put back as they were
//! before every input, so that an input always meets the same rows and a
//! crash replays.
//!
//! The input is read byte by byte, in this order (a byte past the end reads
//! as 0; a *string* is a length byte, modulo 64, then that many bytes):
//!
//! 1. the method ([`METHODS`]);
//! 2. the route: a pattern of the route table ([`crate::api::routes`]);
//!    each `{argument}` takes a choice byte ([`ARGS`]; the last choice is a
//!    string), each `**` a string;
//! 3. a flags byte: bit 0 appends a segment (a string), bit 1 a trailing
//!    slash, bit 2 a query of 1–3 pairs (a key choice byte of
//!    [`QUERY_KEYS`], the last choice a string; the value a string);
//! 4. the caller, the roles, the microversion header, the `Content-Type`
//!    and the `Accept` header: a choice byte each ([`CALLERS`], [`ROLES`],
//!    [`VERSIONS`], [`CONTENT_TYPES`], [`ACCEPTS`]; the last choice of
//!    each is a string);
//! 5. the body: a mode byte (modulo 4): no body; the rest of the input as
//!    it is; or (2, 3) one of the valid bodies [`bodies`] (a choice byte)
//!    after a number (a byte, modulo 4) of mutations, each a node byte (a
//!    value of the document, in depth-first order), an action byte and a
//!    string.
//!
//! Checks (a panic when one breaks): nothing panics (the fuzzer aborts on
//! any panic, even one the pipeline turns into a 500); every 4xx and 5xx
//! answer with a body is Magnum's error envelope, `{"errors": [item]}`
//! with one item whose `status` (when present) is the answer's and whose
//! `title` is not empty (only a WebOb routing error to a client that does
//! not prefer JSON has an empty one, as in Magnum); and a POST, PUT or
//! PATCH whose body is not JSON (Python's `json.loads` refuses it) leaves
//! every row of the database as it was.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Body;
use chrono::{DateTime, NaiveDateTime};
use driver_host::{DriverHost, DriverSettings, HostServices};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::BodyExt;
use magnum_domain::Status;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, Quota};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use python_semantics::decode::decode_ordered;
use serde_json::{Map, Value, json};
use tower::ServiceExt;

use crate::api::accept::Accept;
use crate::api::{Api, ApiOptions, Services, handlers, routes};
use crate::auth::{Authenticator, NoAuth};
use crate::certs::{KeyGenerator, X509KeyPairStore, X509Options};
use crate::conductor::{Certificates, Conductor, Parts, Settings};
use crate::db::{self, Db, DbTarget, Dialect};
use crate::notify::Notifier;
use crate::openstack::Static;
use crate::policy::{self, PolicySettings};

/// The seed template.
pub const TEMPLATE_UUID: &str = "5b793604-fc57-4eb6-b23e-8dbe2ef0b2a0";
pub const TEMPLATE_NAME: &str = "fuzz-template";
/// The seed cluster.
pub const CLUSTER_UUID: &str = "4b2a6c1e-8f0d-4c3b-9a5e-7d6f1e2c3b4a";
pub const CLUSTER_NAME: &str = "fuzz-cluster";
/// The seed cluster's worker nodegroup (its master one is
/// `default-master`).
pub const NODEGROUP_UUID: &str = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b";
pub const NODEGROUP_NAME: &str = "default-worker";
/// The project of the seed rows, and of the member caller.
pub const PROJECT: &str = "p1";

/// The methods, by index.
pub const METHODS: [&str; 7] = ["GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"];

/// The values of a path argument, by index; a string after the last.
pub const ARGS: [&str; 9] = [
    CLUSTER_UUID,
    CLUSTER_NAME,
    TEMPLATE_UUID,
    TEMPLATE_NAME,
    NODEGROUP_UUID,
    NODEGROUP_NAME,
    PROJECT,
    "Cluster",
    "00000000-0000-4000-8000-00000000ffff",
];

/// The query keys, by index; a string after the last.
pub const QUERY_KEYS: [&str; 10] = [
    "limit",
    "marker",
    "sort_key",
    "sort_dir",
    "role",
    "all_tenants",
    "rollback",
    "ca_cert_type",
    "project_id",
    "type",
];

/// The callers (`X-Project-Id`, `X-User-Id`), by index; then none; then a
/// string as the project.
pub const CALLERS: [(&str, &str); 3] = [(PROJECT, "u1"), ("p0", "a1"), ("p2", "u2")];

/// The `X-Roles` values, by index; then none; then a string.
pub const ROLES: [&str; 5] = ["member,reader", "admin", "reader", "member", ""];

/// The microversion headers, by index; then none; then a string as the
/// `OpenStack-API-Version` value.
pub const VERSIONS: [(&str, &str); 8] = [
    ("openstack-api-version", "container-infra latest"),
    ("openstack-api-version", "container-infra 1.1"),
    ("openstack-api-version", "container-infra 1.9"),
    ("openstack-api-version", "container-infra 1.10"),
    ("openstack-api-version", "container-infra 1.14"),
    ("openstack-api-version", "container-infra 1.15"),
    ("x-openstack-magnum-api-version", "1.8"),
    ("x-openstack-magnum-api-version", "latest"),
];

/// The `Content-Type` values, by index; then none; then a string.
pub const CONTENT_TYPES: [&str; 4] = [
    "application/json",
    "text/plain",
    "application/json; charset=UTF-8",
    "application/x-www-form-urlencoded",
];

/// The `Accept` values, by index; then none; then a string.
pub const ACCEPTS: [&str; 3] = ["application/json", "text/html", "*/*"];

/// The valid bodies the mutations start from: a create of each resource,
/// a patch, the cluster actions.
pub fn bodies() -> Vec<Value> {
    vec![
        json!({"name": "c2", "cluster_template_id": TEMPLATE_UUID, "node_count": 1,
            "master_count": 1, "keypair": "kp", "labels": {"kube_tag": "v1.30"}}),
        json!({"name": "t2", "image_id": "ubuntu", "coe": "kubernetes",
            "external_network_id": "public", "flavor_id": "m1.small", "keypair_id": "kp",
            "network_driver": "calico", "labels": {"a": "b"}, "public": false}),
        json!({"name": "ng2", "node_count": 1, "flavor_id": "m1.small", "role": "worker",
            "min_node_count": 1, "max_node_count": 3, "labels": {}}),
        json!([{"op": "replace", "path": "/node_count", "value": 2},
            {"op": "add", "path": "/labels/x", "value": "y"}]),
        json!({"node_count": 2, "nodegroup": NODEGROUP_UUID, "nodes_to_remove": ["n1"]}),
        json!({"cluster_template": TEMPLATE_UUID, "max_batch_size": 1,
            "nodegroup": NODEGROUP_UUID}),
        json!({"project_id": PROJECT, "resource": "Cluster", "hard_limit": 5}),
        json!({"name": "f1", "hostcluster_id": CLUSTER_UUID,
            "properties": {"dns-zone": "example.com."}}),
        json!({"cluster_uuid": CLUSTER_UUID, "csr": "-----BEGIN CERTIFICATE REQUEST-----"}),
    ]
}

/// The input, read from the front.
struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn bytes(&mut self) -> &'a [u8] {
        let n = (usize::from(self.byte()) % 64).min(self.data.len());
        let (s, rest) = self.data.split_at(n);
        self.data = rest;
        s
    }

    fn text(&mut self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }

    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }

    /// An index below `n + extra`, from one byte.
    fn choice(&mut self, n: usize, extra: usize) -> usize {
        usize::from(self.byte()) % (n + extra)
    }
}

/// Everything but the unreserved characters: a fuzz string reaches the
/// router as it is, once decoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn encoded(b: &[u8]) -> String {
    percent_encoding::percent_encode(b, SEGMENT).to_string()
}

/// The distinct patterns of the route table, in its order.
fn patterns() -> &'static [&'static str] {
    static P: OnceLock<Vec<&'static str>> = OnceLock::new();
    P.get_or_init(|| {
        let mut out: Vec<&'static str> = Vec::new();
        for r in routes::table() {
            if !out.contains(&r.route.pattern) {
                out.push(r.route.pattern);
            }
        }
        out
    })
}

/// The request an input describes.
pub struct Built {
    pub request: Request<Body>,
    /// The body sent.
    pub body: Vec<u8>,
}

/// Builds the request of `data`; `None` when its parts make no valid HTTP
/// request (a header value with a newline).
pub fn build(data: &[u8]) -> Option<Built> {
    let mut input = Input { data };
    let method = METHODS[input.choice(METHODS.len(), 0)];
    let pats = patterns();
    let pattern = pats[input.choice(pats.len(), 0)];
    let mut path = String::new();
    for seg in pattern.split('/').skip(1) {
        path.push('/');
        if seg.starts_with('{') {
            match ARGS.get(input.choice(ARGS.len(), 1)) {
                Some(a) => path.push_str(a),
                None => path.push_str(&encoded(input.bytes())),
            }
        } else if seg == "**" {
            path.push_str(&encoded(input.bytes()));
        } else {
            path.push_str(seg);
        }
    }
    let flags = input.byte();
    if flags & 1 != 0 {
        path.push('/');
        path.push_str(&encoded(input.bytes()));
    }
    if flags & 2 != 0 {
        path.push('/');
    }
    if flags & 4 != 0 {
        let pairs = 1 + input.choice(3, 0);
        for i in 0..pairs {
            path.push(if i == 0 { '?' } else { '&' });
            match QUERY_KEYS.get(input.choice(QUERY_KEYS.len(), 1)) {
                Some(k) => path.push_str(k),
                None => path.push_str(&encoded(input.bytes())),
            }
            path.push('=');
            path.push_str(&utf8_percent_encode(&input.text(), SEGMENT).to_string());
        }
    }
    let mut b = Request::builder()
        .method(method)
        .uri(&path)
        .header("host", "localhost");
    let header = |b: http::request::Builder, name: &str, value: &[u8]| match (
        HeaderName::from_bytes(name.as_bytes()),
        HeaderValue::from_bytes(value),
    ) {
        (Ok(n), Ok(v)) => Some(b.header(n, v)),
        _ => None,
    };
    match input.choice(CALLERS.len(), 2) {
        i if i < CALLERS.len() => {
            let (p, u) = CALLERS[i];
            b = header(b, "x-project-id", p.as_bytes())?;
            b = header(b, "x-user-id", u.as_bytes())?;
        }
        i if i == CALLERS.len() => {}
        _ => {
            b = header(b, "x-project-id", input.bytes())?;
            b = header(b, "x-user-id", b"u1")?;
        }
    }
    match input.choice(ROLES.len(), 2) {
        i if i < ROLES.len() => b = header(b, "x-roles", ROLES[i].as_bytes())?,
        i if i == ROLES.len() => {}
        _ => b = header(b, "x-roles", input.bytes())?,
    }
    match input.choice(VERSIONS.len(), 2) {
        i if i < VERSIONS.len() => {
            let (n, v) = VERSIONS[i];
            b = header(b, n, v.as_bytes())?;
        }
        i if i == VERSIONS.len() => {}
        _ => b = header(b, "openstack-api-version", input.bytes())?,
    }
    match input.choice(CONTENT_TYPES.len(), 2) {
        i if i < CONTENT_TYPES.len() => b = header(b, "content-type", CONTENT_TYPES[i].as_bytes())?,
        i if i == CONTENT_TYPES.len() => {}
        _ => b = header(b, "content-type", input.bytes())?,
    }
    match input.choice(ACCEPTS.len(), 2) {
        i if i < ACCEPTS.len() => b = header(b, "accept", ACCEPTS[i].as_bytes())?,
        i if i == ACCEPTS.len() => {}
        _ => b = header(b, "accept", input.bytes())?,
    }
    let body = match input.byte() % 4 {
        0 => Vec::new(),
        1 => input.rest().to_vec(),
        _ => {
            let mut all = bodies();
            let mut doc = all.swap_remove(input.choice(all.len(), 0));
            for _ in 0..input.byte() % 4 {
                mutate(&mut doc, &mut input);
            }
            doc.to_string().into_bytes()
        }
    };
    let request = b.body(Body::from(body.clone())).ok()?;
    Some(Built { request, body })
}

/// The value a mutation writes: a scalar, an empty container or a string
/// from the input.
fn value(action: u8, input: &mut Input) -> Value {
    match action % 8 {
        0 => Value::Null,
        1 => Value::Bool(action & 8 != 0),
        2 => {
            let b = input.bytes();
            let mut n = [0u8; 8];
            for (d, s) in n.iter_mut().zip(b) {
                *d = *s;
            }
            Value::from(i64::from_le_bytes(n))
        }
        3 => Value::from(f64::from(input.byte()) / 7.0 - 3.0),
        4 => Value::Array(Vec::new()),
        5 => Value::Object(Map::new()),
        6 => Value::String(input.text().repeat(1 + usize::from(action >> 4))),
        _ => Value::String(input.text()),
    }
}

/// Replaces, removes or adds a value somewhere in `doc`.
fn mutate(doc: &mut Value, input: &mut Input) {
    fn count(v: &Value) -> usize {
        1 + match v {
            Value::Array(a) => a.iter().map(count).sum(),
            Value::Object(o) => o.values().map(count).sum(),
            _ => 0,
        }
    }
    /// The `n`th value in depth-first order.
    fn nth<'v>(v: &'v mut Value, n: &mut usize) -> Option<&'v mut Value> {
        if *n == 0 {
            return Some(v);
        }
        *n -= 1;
        match v {
            Value::Array(a) => a.iter_mut().find_map(|x| nth(x, n)),
            Value::Object(o) => o.values_mut().find_map(|x| nth(x, n)),
            _ => None,
        }
    }
    let total = count(doc);
    let mut n = usize::from(input.byte()) % total;
    let action = input.byte();
    let Some(target) = nth(doc, &mut n) else {
        return;
    };
    match (action >> 6, target) {
        (0, Value::Object(o)) => {
            let key = input.text();
            o.insert(key, value(action, input));
        }
        (1, Value::Object(o)) if !o.is_empty() => {
            let i = usize::from(input.byte()) % o.len();
            if let Some(k) = o.keys().nth(i).cloned() {
                o.shift_remove(&k);
            }
        }
        (1, Value::Array(a)) if !a.is_empty() => {
            let i = usize::from(input.byte()) % a.len();
            a.remove(i);
        }
        (2, Value::Array(a)) => a.push(value(action, input)),
        (_, t) => *t = value(action, input),
    }
}

/// Every row of every table but the schema versions, each cell the SQL
/// literal that inserts it again.
type Snapshot = test_support::rows::Rows;

/// The application over its database, and the rows every input starts from.
struct Harness {
    rt: tokio::runtime::Runtime,
    app: axum::Router,
    db: Db,
    golden: Snapshot,
    uuids: Arc<AtomicU64>,
    /// Whether the last input may have written (the rows are put back before
    /// the next one).
    dirty: Mutex<bool>,
}

/// 2026-11-30T12:00:00Z: the clock stands still.
const NOW: i64 = 1_796_040_000;

fn now() -> NaiveDateTime {
    DateTime::from_timestamp(NOW, 0)
        .map(|t| t.naive_utc())
        .unwrap_or_default()
}

fn sqlite(db: &Db) -> &sqlx::SqlitePool {
    match db.sqlite_writer() {
        Some(p) => p,
        None => panic!("the fuzz database is SQLite"),
    }
}

async fn snapshot(db: &Db) -> Snapshot {
    let mut c = match sqlite(db).acquire().await {
        Ok(c) => c,
        Err(e) => panic!("a connection to the fuzz database: {e}"),
    };
    test_support::rows::sqlite(&mut c, &["alembic_version", "openkeel_schema_version"]).await
}

/// Puts the rows of `golden` back, in one transaction.
async fn restore(db: &Db, golden: &Snapshot) {
    let mut sql = String::from("BEGIN;");
    for (t, table) in golden.tables() {
        sql.push_str(&format!("DELETE FROM \"{t}\";"));
        let cols: Vec<String> = table.columns.iter().map(|c| format!("\"{c}\"")).collect();
        for r in &table.rows {
            sql.push_str(&format!(
                "INSERT INTO \"{t}\" ({}) VALUES ({});",
                cols.join(", "),
                r.join(", ")
            ));
        }
    }
    sql.push_str("COMMIT;");
    if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(sqlite(db))
        .await
    {
        panic!("restore the seed rows: {e}");
    }
}

fn seed_template() -> ClusterTemplate {
    let labels = [("kube_tag", "v1.30.4"), ("boot_volume_size", "40")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ClusterTemplate {
        uuid: TEMPLATE_UUID.into(),
        name: TEMPLATE_NAME.into(),
        project_id: PROJECT.into(),
        user_id: "u1".into(),
        image_id: Some("ubuntu".into()),
        flavor_id: Some("m1.small".into()),
        master_flavor_id: Some("m1.small".into()),
        external_network_id: Some("public".into()),
        network_driver: Some("calico".into()),
        docker_volume_size: Some(20),
        cluster_distro: Some("ubuntu".into()),
        coe: Some("kubernetes".into()),
        labels: Some(labels),
        tls_disabled: Some(false),
        public: Some(false),
        server_type: Some("vm".into()),
        master_lb_enabled: Some(false),
        floating_ip_enabled: Some(false),
        hidden: Some(false),
        registry_enabled: Some(false),
        driver: Some("fake".into()),
        created_at: now(),
        ..Default::default()
    }
}

fn seed_cluster() -> (Cluster, [NodeGroup; 2]) {
    let c = Cluster {
        uuid: CLUSTER_UUID.into(),
        name: CLUSTER_NAME.into(),
        project_id: PROJECT.into(),
        user_id: "u1".into(),
        cluster_template_id: TEMPLATE_UUID.into(),
        keypair: Some("kp".into()),
        docker_volume_size: Some(20),
        labels: Some(
            [("kube_tag".to_string(), "v1.30.4".to_string())]
                .into_iter()
                .collect(),
        ),
        master_flavor_id: Some("m1.small".into()),
        flavor_id: Some("m1.small".into()),
        stack_id: Some("fuzz-cluster-stack".into()),
        api_address: Some("https://10.0.0.5:6443".into()),
        status: Some(Status::CreateComplete),
        health_status: Some("HEALTHY".into()),
        create_timeout: Some(60),
        coe_version: Some("v1.30.4".into()),
        floating_ip_enabled: Some(false),
        master_lb_enabled: Some(false),
        created_at: now(),
        updated_at: Some(now()),
        ..Default::default()
    };
    let ng = |uuid: &str, role: &str, count: i32| NodeGroup {
        uuid: uuid.into(),
        name: format!("default-{role}"),
        cluster_id: CLUSTER_UUID.into(),
        project_id: PROJECT.into(),
        docker_volume_size: Some(20),
        labels: c.labels.clone(),
        flavor_id: Some("m1.small".into()),
        image_id: Some("ubuntu".into()),
        node_addresses: Some(vec!["10.0.0.10".into()]),
        node_count: Some(count),
        min_node_count: Some(1),
        role: Some(role.into()),
        is_default: Some(true),
        stack_id: c.stack_id.clone(),
        status: Some(Status::CreateComplete),
        version: Some("v1.30.4".into()),
        created_at: now(),
        updated_at: Some(now()),
        ..Default::default()
    };
    let ngs = [
        ng("1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b", "master", 1),
        ng(NODEGROUP_UUID, "worker", 2),
    ];
    (c, ngs)
}

async fn seed(db: &Db) -> Result<(), db::Error> {
    let mut q = db.q();
    q.create_cluster_template(&mut seed_template()).await?;
    let (mut c, ngs) = seed_cluster();
    q.create_cluster(&mut c).await?;
    for mut ng in ngs {
        q.create_nodegroup(&mut ng).await?;
    }
    let mut quota = Quota {
        project_id: PROJECT.into(),
        resource: "Cluster".into(),
        hard_limit: 5,
        created_at: now(),
        ..Default::default()
    };
    q.create_quota(&mut quota).await
}

async fn harness_parts(uuids: Arc<AtomicU64>) -> (axum::Router, Db) {
    let clock: db::Clock = Arc::new(now);
    let hooks = db::Hooks {
        clock: Some(clock.clone()),
        on_retry: None,
    };
    let target = DbTarget::new(Dialect::Sqlite, "sqlite::memory:");
    let db = match Db::open_with(&target, hooks).await {
        Ok(db) => db,
        Err(e) => panic!("open the in-memory database: {e}"),
    };
    if let Err(e) = db::upgrade(&db).await {
        panic!("migrate: {e}");
    }
    if let Err(e) = seed(&db).await {
        panic!("seed rows: {e}");
    }
    // No driver package: the target is the API, not the sandbox.
    let drivers = match DriverHost::start_with(
        DriverSettings {
            pooling_allocator: false,
            ..DriverSettings::default()
        },
        HostServices::default(),
        Vec::new(),
    )
    .await
    {
        Ok(d) => d,
        Err(e) => panic!("driver host: {e}"),
    };
    let keys = match KeyGenerator::start(1) {
        Ok(k) => k,
        Err(e) => panic!("key generator: {e}"),
    };
    let new_uuid: crate::conductor::NewUuid = Arc::new(move || {
        let n = uuids.fetch_add(1, Ordering::SeqCst) + 1;
        format!("00000000-0000-4000-8000-{n:012x}")
    });
    let drivers = Arc::new(drivers);
    let conductor = Conductor::new(Parts {
        db: db.clone(),
        drivers: drivers.clone(),
        template_drivers: drivers,
        lookup: Arc::new(Static::new(true)),
        certificates: Certificates {
            store: Arc::new(X509KeyPairStore::new(Arc::new(db.clone()))),
            keys: Arc::new(keys),
            x509: X509Options::default(),
        },
        notifier: Notifier::disabled(),
        settings: Settings::default(),
        clock,
        new_uuid,
    });
    let enforcer = match policy::load(&PolicySettings::default()) {
        Ok(e) => Arc::new(e),
        Err(e) => panic!("Magnum's default rules: {e}"),
    };
    let e = enforcer.clone();
    let auth = Authenticator::NoAuth(NoAuth::new(Arc::new(move |ctx| policy::is_admin(&e, ctx))));
    let services = Services {
        conductor,
        enforcer,
    };
    let app = Api::new(ApiOptions::default(), Arc::new(auth), handlers(&services)).into_router();
    (app, db)
}

fn harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        let rt = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => panic!("tokio runtime: {e}"),
        };
        let uuids = Arc::new(AtomicU64::new(0));
        let (app, db) = rt.block_on(harness_parts(uuids.clone()));
        let golden = rt.block_on(snapshot(&db));
        Harness {
            rt,
            app,
            db,
            golden,
            uuids,
            dirty: Mutex::new(false),
        }
    })
}

/// An answer: status and body.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub body: Vec<u8>,
}

/// Runs the input `data` and checks the invariants (see the module
/// documentation); panics when one breaks.
pub fn request(data: &[u8]) {
    let _ = run(data);
}

/// [`request`], with the answer (`None` when the input makes no valid
/// HTTP request).
pub fn run(data: &[u8]) -> Option<Answer> {
    let built = build(data)?;
    let h = harness();
    let mut dirty = match h.dirty.lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    };
    let method = built.request.method().clone();
    let accept = Accept::of(built.request.headers());
    let writes_body = [Method::POST, Method::PUT, Method::PATCH].contains(&method);
    let not_json = writes_body && decode_ordered(&built.body).is_err();
    let answer = h.rt.block_on(async {
        if *dirty {
            restore(&h.db, &h.golden).await;
        }
        h.uuids.store(0, Ordering::SeqCst);
        let before = if not_json {
            Some(snapshot(&h.db).await)
        } else {
            None
        };
        let answer = send(&h.app, built.request).await;
        if let Some(before) = before {
            snapshot(&h.db).await.assert_same_as(
                &before,
                format_args!(
                    "{method} with a body that is not JSON ({} {}) changed the rows",
                    answer.status,
                    String::from_utf8_lossy(&answer.body),
                ),
            );
        }
        answer
    });
    *dirty = ![Method::GET, Method::HEAD, Method::OPTIONS].contains(&method);
    check_answer(&method, &accept, &answer);
    Some(answer)
}

async fn send(app: &axum::Router, req: Request<Body>) -> Answer {
    let Ok(resp) = app.clone().oneshot(req).await;
    let status = resp.status();
    let body = match resp.into_body().collect().await {
        Ok(b) => b.to_bytes().to_vec(),
        Err(e) => panic!("reading the answer's body: {e}"),
    };
    Answer { status, body }
}

/// An error answer is Magnum's envelope with one item, its status the
/// answer's, its title not empty (but for a routing error to a client that
/// does not prefer JSON).
pub fn check_answer(method: &Method, accept: &Accept, answer: &Answer) {
    let status = answer.status;
    if !(status.is_client_error() || status.is_server_error()) {
        return;
    }
    if answer.body.is_empty() && method == Method::HEAD {
        return;
    }
    let text = String::from_utf8_lossy(&answer.body);
    let v: Value = match serde_json::from_slice(&answer.body) {
        Ok(v) => v,
        Err(e) => panic!("{status} with a body that is not JSON ({e}): {text}"),
    };
    let item = match v.get("errors").and_then(Value::as_array).map(Vec::as_slice) {
        Some([item]) => item,
        _ => panic!("{status} without Magnum's error envelope: {text}"),
    };
    if let Some(s) = item.get("status") {
        assert_eq!(
            s.as_u64(),
            Some(u64::from(status.as_u16())),
            "{status} whose error item has another status: {text}"
        );
    }
    let title = match item.get("title").and_then(Value::as_str) {
        Some(t) => t,
        None => panic!("{status} whose error item has no title: {text}"),
    };
    let routing = item.get("code").and_then(Value::as_str) == Some("");
    assert!(
        !title.is_empty() || (routing && !accept.prefers_json()),
        "{status} with an empty title: {text}"
    );
}

#[cfg(test)]
mod tests;
