//! The conformance replay: the HTTP exchanges recorded from Magnum's own API
//! unit tests (spec/exchanges/exchanges.json) sent to the binary under test,
//! and its answers compared with Magnum's (status, the headers that matter,
//! the bodies), as spec/exchanges/README.md ("How to compare") describes.
//!
//! The corpus is `$OKM_EXCHANGES`, else
//! `${OKM_SPEC_DIR:-../shared/spec}/exchanges/exchanges.json`; a missing
//! corpus skips (fails under `CI=true`). The test prints one line
//! `N passed, M failed (…)` for the whole corpus; `OKM_CONFORMANCE_REPORT`
//! names a file that receives every mismatch and the count per Magnum test
//! module.
//!
//! Each record (except app `wsme-test-app`, a toy application of Magnum's
//! type tests) is served by its own `openkeel-magnum api` process, started
//! as an operator would start it, in the recording environment (README "The
//! test environment"):
//!
//! - database: a SQLite file migrated by `db upgrade` (once per run, then
//!   copied), with db_before inserted table by table with the recorded ids
//!   and columns (JSON columns in Python's json.dumps format and recorded key
//!   order, None as "{}" / "[]", booleans, naive UTC datetimes in
//!   SQLAlchemy's text form);
//! - configuration: every conf_override `group/option` in the configuration
//!   file (`[api] api_paste_config` names a paste file holding the recorded
//!   paste file's public routes); `[oslo_policy] enforce_new_defaults` and
//!   `enforce_scope` on; policy_overrides in a policy file; a mocked
//!   `policy.enforce` becomes a policy file allowing every rule of
//!   config/policy.yaml.sample, `clustertemplate:publish` as the mock
//!   returns;
//! - caller: `[keystone_authtoken]` points at the OpenStack double
//!   (tests/crates/osfake); each record's caller is a user token of the double with
//!   the identity Magnum's test built (X-Project-Id / X-User-Id / X-Roles, or
//!   the context the test injected; `fake_project` / `fake_user` when the
//!   headers name none). paste records send no token;
//! - OpenStack: the token's catalog leads the service's Glance, Nova and
//!   Neutron lookups to the double, seeded with every image, flavor,
//!   keypair, network and subnet the record's templates, clusters and body
//!   name — except the one a mock makes raise NotFound;
//! - drivers: none unless the test mocked `Driver.get_driver`, then the
//!   fake driver (`[drivers] enabled_beta_drivers = fake`).
//!
//! Request bodies are sent as recorded, except that when the recorded answer
//! quotes the whole body (a WSME "Value: '{...}'" error), its keys are sent
//! in the quoted order, the order the test sent.
//!
//! The record model (corpus reader, comparison, recorded rows, the known
//! failures) is the `openkeel-magnum-exchanges` crate, shared with the
//! in-process replay of the library (`api::conformance`, run by `cargo test
//! -p openkeel-magnum --lib api::conformance`), which builds the API in the
//! test with stand-ins for what each test mocked and passes the records of
//! [`known_failures::BLACK_BOX`] too.
//!
//! Every record must pass except those of [`known::KNOWN`] and
//! [`known_failures::BLACK_BOX`] (each with a one-line reason; FINDINGS.md
//! has the diagnosis). A listed record that
//! passes, or a listed id missing from the corpus, fails the test (for the
//! published corpus only).

mod known_failures;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use openkeel_magnum_osfake::{Flavor, Image, Keypair, Network, OsFake, Seed, Subnet, UserToken};
use serde_json::Value;

use crate::harness::{Server, in_ci};
use openkeel_magnum_exchanges::seed;
use openkeel_magnum_exchanges::{
    Record, RecordFilter, Response, Tally, compare, known, uses_default_corpus,
};

/// The corpus: `$OKM_EXCHANGES`, else the shared spec's.
fn exchanges_path() -> PathBuf {
    openkeel_magnum_exchanges::corpus_path(&test_support::repo_root())
}

/// The rule names of Magnum's policy (config/policy.yaml.sample).
fn policy_rule_names() -> Vec<String> {
    let sample = test_support::repo_root().join("config/policy.yaml.sample");
    let text =
        std::fs::read_to_string(&sample).unwrap_or_else(|e| panic!("{}: {e}", sample.display()));
    text.lines()
        .filter_map(|l| l.strip_prefix("#\""))
        .filter_map(|l| l.split_once("\":"))
        .map(|(name, _)| name.to_string())
        .collect()
}

/// The public routes of the recorded paste files (acl_public_routes).
fn paste_public_routes(app: &str) -> &'static str {
    match app {
        "paste:auth-root-access.ini" => "/",
        "paste:auth-v1-access.ini" => "/v1",
        "paste:noauth-paste.ini" | "paste:api-paste.ini-default" => "/, /v1",
        _ => "",
    }
}

/// The caller Magnum's test application built: the identity headers (a
/// missing project or user is the unit tests' fake_project / fake_user;
/// roles split on ","), replaced by the context the test injected.
fn caller(rec: &Record) -> UserToken {
    let q = &rec.request;
    let mut user = UserToken {
        project_id: q
            .header("X-Project-Id")
            .filter(|v| !v.is_empty())
            .unwrap_or("fake_project")
            .to_string(),
        user_id: q
            .header("X-User-Id")
            .filter(|v| !v.is_empty())
            .unwrap_or("fake_user")
            .to_string(),
        roles: q
            .header("X-Roles")
            .unwrap_or("")
            .split(',')
            .filter(|r| !r.is_empty())
            .map(str::to_string)
            .collect(),
        ..UserToken::default()
    };
    if let Some(c) = &rec.context {
        let real = |v: &Value| {
            v.as_str()
                .filter(|s| !s.is_empty() && *s != "<MagicMock>")
                .map(str::to_string)
        };
        if let Some(p) = real(&c.project_id) {
            user.project_id = p;
        }
        if let Some(u) = real(&c.user_id) {
            user.user_id = u;
        }
        if let Some(l) = c.roles.as_array() {
            user.roles = l
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
        }
        // An admin context (or a MagicMock one, which is truthy): the
        // service derives is_admin from the admin role.
        let admin =
            c.is_admin == Value::Bool(true) || c.is_admin == Value::String("<MagicMock>".into());
        if admin && !user.roles.iter().any(|r| r == "admin") {
            user.roles.push("admin".to_string());
        }
    }
    user
}

/// The exception a mock's side effect raises ("raise ImageNotFound(…)").
fn raised(rec: &Record, target: &str) -> Option<String> {
    let m = rec.mock(target)?;
    let s = m.side_effect.as_deref()?.strip_prefix("raise ")?;
    Some(s.split('(').next().unwrap_or_default().to_string())
}

/// The values of `keys` in the record's templates, clusters, nodegroups and
/// body (a JSON Patch contributes the values of the paths it sets).
fn named(rec: &Record, keys: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |v: &Value| {
        if let Some(s) = v.as_str()
            && !s.is_empty()
            && !out.iter().any(|x| x == s)
        {
            out.push(s.to_string());
        }
    };
    for table in ["cluster_template", "cluster", "nodegroup"] {
        for row in rec.db_before.get(table).into_iter().flatten() {
            for k in keys {
                if let Some(v) = row.get(*k) {
                    add(v);
                }
            }
        }
    }
    match &rec.request.body {
        Value::Object(m) => {
            for k in keys {
                if let Some(v) = m.get(*k) {
                    add(v);
                }
            }
        }
        Value::Array(ops) => {
            for op in ops {
                let path = op["path"].as_str().unwrap_or("").trim_start_matches('/');
                if keys.contains(&path) {
                    add(&op["value"]);
                }
            }
        }
        _ => {}
    }
    out
}

/// The double's content for a record: the caller's token and the resources
/// the record names, except the ones its mocks make missing.
fn openstack_seed(rec: &Record, token: &str) -> Seed {
    let osres = raised(rec, "magnum.api.attr_validator.validate_os_resources");
    let image_err = raised(rec, "magnum.api.attr_validator.validate_image");
    let missing = |kind: &str| osres.as_deref() == Some(kind) || image_err.as_deref() == Some(kind);
    let mut seed = Seed::default();
    let image_mock = rec
        .mock("magnum.api.attr_validator.validate_image")
        .map(|m| m.return_value.clone())
        .unwrap_or(Value::Null);
    if !missing("ImageNotFound") {
        for img in named(rec, &["image_id"]) {
            seed.images.push(Image {
                id: img.clone(),
                // Looked up by name when the identifier is no UUID.
                name: img.clone(),
                os_distro: if missing("OSDistroFieldNotFound") {
                    String::new()
                } else {
                    image_mock["os_distro"]
                        .as_str()
                        .unwrap_or("ubuntu")
                        .to_string()
                },
                magnum_driver: image_mock["magnum_driver"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                ..Image::default()
            });
        }
    }
    let root_raises = rec
        .mock("magnum.api.attr_validator.validate_flavor_root_volume_size")
        .and_then(|m| m.side_effect.as_ref())
        .is_some();
    if !missing("FlavorNotFound") {
        let mut flavors = named(rec, &["flavor_id", "master_flavor_id"]);
        // A mocked root-volume check passes whatever flavor it is given,
        // the None of a nodegroup without flavor included.
        if rec
            .mock("magnum.api.attr_validator.validate_flavor_root_volume_size")
            .is_some_and(|m| m.side_effect.is_none())
        {
            flavors.push("None".to_string());
        }
        for f in flavors {
            seed.flavors.push(Flavor {
                id: f.clone(),
                name: f,
                vcpus: 1,
                ram: 2048,
                disk: if root_raises { 0 } else { 20 },
            });
        }
    }
    if !missing("KeyPairNotFound") {
        for k in named(rec, &["keypair_id", "keypair"]) {
            seed.keypairs.push(Keypair {
                name: k,
                ..Keypair::default()
            });
        }
    }
    if !missing("ExternalNetworkNotFound") {
        for n in named(rec, &["external_network_id"]) {
            seed.networks.push(Network {
                id: n.clone(),
                name: n,
                external: true,
                shared: false,
            });
        }
    }
    if !missing("FixedNetworkNotFound") {
        for n in named(rec, &["fixed_network"]) {
            seed.networks.push(Network {
                id: n.clone(),
                name: n,
                ..Network::default()
            });
        }
    }
    if !missing("FixedSubnetNotFound") {
        for n in named(rec, &["fixed_subnet"]) {
            seed.subnets.push(Subnet {
                id: n.clone(),
                name: n,
                network_id: String::new(),
                cidr: "10.0.0.0/24".to_string(),
            });
        }
    }
    seed.user_tokens.insert(token.to_string(), caller(rec));
    seed
}

/// `[group] option = value` lines of the record's configuration.
fn conf_text(rec: &Record, dir: &Path, db: &Path, identity: &str) -> (String, String) {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut set = |g: &str, line: String| groups.entry(g.to_string()).or_default().push(line);
    set("DEFAULT", "auth_strategy = keystone".into());
    set(
        "database",
        format!("connection = sqlite:///{}", db.display()),
    );
    for line in [
        "www_authenticate_uri = http://localhost:5000".to_string(),
        format!("auth_url = {identity}"),
        "auth_type = password".into(),
        "username = magnum".into(),
        "password = conformance".into(),
        "project_name = service".into(),
        "user_domain_name = Default".into(),
        "project_domain_name = Default".into(),
    ] {
        set("keystone_authtoken", line);
    }
    set("oslo_policy", "enforce_new_defaults = true".into());
    set("oslo_policy", "enforce_scope = true".into());
    let disable = dir.join("healthcheck_disable");
    if rec.test_id.contains("disable_file") {
        std::fs::write(&disable, "").expect("healthcheck file");
    }
    set(
        "healthcheck",
        format!("disable_by_file_path = {}", disable.display()),
    );
    for (key, v) in rec.conf_overrides.iter().flatten() {
        let Some((g, o)) = key.split_once('/') else {
            continue;
        };
        let value = match (o, v) {
            ("api_paste_config", _) => {
                let paste = dir.join("api-paste.ini");
                let public = paste_public_routes(&rec.app);
                std::fs::write(
                    &paste,
                    format!("[filter:authtoken]\nacl_public_routes = {public}\npaste.filter_factory = magnum.api.middleware.auth_token:AuthTokenMiddleware.factory\n"),
                )
                .expect("paste file");
                paste.display().to_string()
            }
            (_, Value::Array(l)) => l
                .iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(","),
            (_, Value::String(s)) => s.clone(),
            (_, Value::Bool(b)) => (if *b { "True" } else { "False" }).to_string(),
            (_, other) => other.to_string(),
        };
        set(g, format!("{o} = {value}"));
    }
    if let Some(m) = rec.mock("magnum.common.policy.enforce") {
        let publish = if m.return_value == Value::Bool(true) {
            ""
        } else {
            "!"
        };
        let rules: serde_json::Map<String, Value> = policy_rule_names()
            .into_iter()
            .map(|r| {
                let v = if r == "clustertemplate:publish" {
                    publish
                } else {
                    ""
                };
                (r, Value::String(v.to_string()))
            })
            .collect();
        let f = dir.join("policy.json");
        std::fs::write(&f, Value::Object(rules).to_string()).expect("policy file");
        set("oslo_policy", format!("policy_file = {}", f.display()));
    } else if let Some(o) = rec.policy_overrides.as_ref().filter(|o| !o.is_empty()) {
        // Magnum's policy fixture replaces the whole rule set: every rule
        // the test does not set is undefined, and denies.
        let mut rules: serde_json::Map<String, Value> = policy_rule_names()
            .into_iter()
            .map(|r| (r, Value::String("!".to_string())))
            .collect();
        for (k, v) in o {
            rules.insert(k.clone(), Value::String(v.clone()));
        }
        let f = dir.join("policy.json");
        std::fs::write(&f, Value::Object(rules).to_string()).expect("policy file");
        set("oslo_policy", format!("policy_file = {}", f.display()));
    }
    // A mocked get_driver finds a driver for any cluster: the fake one. The
    // template use case would resolve and store that driver's name where the
    // mocked get_driver leaves the template's driver unset, so template
    // requests get it only when get_default_driver is mocked.
    let template = rec.request.path.starts_with("/v1/clustertemplates");
    if (!template
        && rec
            .mock("magnum.drivers.common.driver.Driver.get_driver")
            .is_some())
        || rec
            .mock("magnum.drivers.common.driver.Driver.get_default_driver")
            .is_some()
    {
        set("drivers", "enabled_beta_drivers = fake".into());
    } else if !template {
        // No driver is installed in the recording environment: every
        // built-in driver is disabled. (Template requests keep them, neither
        // enabled nor disabled: without any driver the binary refuses every
        // template.)
        set(
            "drivers",
            "disabled_drivers = fake, k8s_cluster_api, k8s_cluster_api_debian, \
             k8s_cluster_api_flatcar, k8s_cluster_api_rockylinux, k8s_cluster_api_ubuntu, \
             k8s_cluster_api_ubuntu_focal"
                .into(),
        );
    }
    let api = groups.remove("api").unwrap_or_default().join("\n");
    let text = groups
        .into_iter()
        .map(|(g, lines)| format!("[{g}]\n{}\n", lines.join("\n")))
        .collect::<Vec<_>>()
        .join("\n");
    (api, text)
}

/// The records replayed at once: `$OKM_CONFORMANCE_JOBS`, else 4 (most of
/// a record's time is the service starting and the request waiting on it).
fn jobs() -> usize {
    std::env::var("OKM_CONFORMANCE_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(4)
}

/// The shared parts of a run: one double per worker (a double holds one
/// record's content at a time), and a database migrated once.
struct Run {
    rt: tokio::runtime::Runtime,
    osfakes: Vec<Mutex<OsFake>>,
    template_db: PathBuf,
    _dir: tempfile::TempDir,
    seq: AtomicUsize,
}

impl Run {
    fn new(workers: usize) -> Run {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let osfakes = (0..workers)
            .map(|_| {
                rt.block_on(OsFake::start(Seed::default()))
                    .map(Mutex::new)
                    .expect("OpenStack double")
            })
            .collect();
        let dir = tempfile::tempdir().expect("tempdir");
        let template_db = dir.path().join("template.db");
        let conf = dir.path().join("db.conf");
        std::fs::write(
            &conf,
            format!(
                "[database]\nconnection = sqlite:///{}\n",
                template_db.display()
            ),
        )
        .expect("conf");
        crate::harness::db_upgrade(&conf);
        Run {
            rt,
            osfakes,
            template_db,
            _dir: dir,
            seq: AtomicUsize::new(0),
        }
    }

    /// Serves `rec` with a fresh service, on worker `worker`'s double, and
    /// returns its answer.
    fn replay(&self, rec: &Record, worker: usize) -> Result<Response, String> {
        let osfake = self.osfakes[worker]
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let db = dir.path().join("magnum.db");
        std::fs::copy(&self.template_db, &db).map_err(|e| e.to_string())?;
        self.rt.block_on(seed::seed_db(
            &format!("sqlite://{}", db.display()),
            &rec.db_before,
        ))?;
        let token = format!("conformance-token-{n}");
        osfake.set_seed(openstack_seed(rec, &token));
        let (api, text) = conf_text(rec, dir.path(), &db, &osfake.identity_endpoint());
        let server = Server::start_with(&api, &text, &["api"]);
        let q = &rec.request;
        let mut url = format!("{}{}", server.url, q.path);
        if !q.query.is_empty() {
            url.push('?');
            url.push_str(&q.query);
        }
        let mut headers: Vec<(String, String)> = q
            .headers
            .iter()
            .filter(|(k, _)| {
                !k.eq_ignore_ascii_case("host") && !k.eq_ignore_ascii_case("content-length")
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !rec.app.starts_with("paste:") {
            headers.push(("X-Auth-Token".to_string(), token));
        }
        let body = seed::replay_body(&q.body, q.body_text.as_deref(), &rec.response.body);
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let a = crate::harness::request(&q.method, &url, &h, body.as_deref()).map_err(|e| {
            format!(
                "request: {}\n  server output:\n{}",
                crate::harness::error_chain(&e),
                server.output()
            )
        })?;
        drop(server);
        Ok(Response {
            status: a.status,
            headers: a
                .headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_string(),
                        v.to_str().unwrap_or_default().to_string(),
                    )
                })
                .collect(),
            body: a.body,
        })
    }
}

#[test]
fn exchanges_replay() {
    let path = exchanges_path();
    if !path.exists() {
        assert!(!in_ci(), "exchanges not found at {}", path.display());
        eprintln!(
            "skipped: exchanges not found at {} (set OKM_SPEC_DIR or OKM_EXCHANGES)",
            path.display()
        );
        return;
    }
    let records = openkeel_magnum_exchanges::load(&path).expect("corpus");
    let selection = RecordFilter::from_env();
    let selected: Vec<&Record> = records.iter().filter(|r| selection.serves(r)).collect();
    let workers = jobs().min(selected.len()).max(1);
    let run = Run::new(workers);
    // The records are served `workers` at a time; their answers are judged
    // below in corpus order.
    let next = AtomicUsize::new(0);
    let answers: Mutex<BTreeMap<String, Result<Response, String>>> = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for w in 0..workers {
            let (run, next, answers, selected) = (&run, &next, &answers, &selected);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(rec) = selected.get(i) else { break };
                    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run.replay(rec, w)
                    }))
                    .unwrap_or_else(|_| Err("the replay panicked (see above)".to_string()));
                    answers
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(rec.id.clone(), got);
                }
            });
        }
    });
    let mut answers = answers.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut tally = Tally::new(uses_default_corpus());
    for rec in &records {
        if !tally.takes(rec, &selection) {
            continue;
        }
        let diffs = match answers
            .remove(&rec.id)
            .unwrap_or_else(|| Err("not replayed".to_string()))
        {
            Ok(got) => compare(rec, &got),
            Err(e) => vec![e],
        };
        let listed = known::known(&rec.id).or_else(|| known_failures::black_box(&rec.id));
        tally.record(rec, &diffs, listed);
    }
    if selection.whole() {
        tally.check_whole_corpus(
            known::KNOWN
                .iter()
                .chain(known_failures::BLACK_BOX)
                .map(|(id, _)| *id),
        );
    }
    tally.finish("black-box", "known failures or not replayable black-box");
}

/// Every listed record is in the corpus, and no record is on two lists.
#[test]
fn the_lists_are_consistent() {
    let path = exchanges_path();
    let Ok(records) = openkeel_magnum_exchanges::load(&path) else {
        assert!(!in_ci(), "exchanges not found at {}", path.display());
        eprintln!("skipped: exchanges not found at {}", path.display());
        return;
    };
    for (id, _) in known::KNOWN.iter().chain(known_failures::BLACK_BOX) {
        assert!(
            records.iter().any(|r| r.id == *id),
            "{id} is listed but not in the corpus"
        );
    }
    for (id, _) in known_failures::BLACK_BOX {
        assert!(known::known(id).is_none(), "{id} is on two lists");
    }
}

/// GET /v1/mservices (admin-only by default) through the real policy with
/// Magnum's default rules, the identity from the noauth headers.
#[test]
fn default_policy_guards_mservices() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("magnum.db");
    let conf = format!(
        "[DEFAULT]\nauth_strategy = noauth\n\n[database]\nconnection = sqlite:///{}\n\n[oslo_policy]\nenforce_new_defaults = true\nenforce_scope = true\n",
        db.display()
    );
    let conf_file = dir.path().join("db.conf");
    std::fs::write(&conf_file, &conf).expect("conf");
    crate::harness::db_upgrade(&conf_file);
    let s = Server::start(&conf, &["api"]);
    for (roles, want) in [("admin", 200), ("reader,member", 403), ("", 403)] {
        let a = crate::harness::get(&format!("{}/v1/mservices", s.url), &[("X-Roles", roles)])
            .expect("GET");
        assert_eq!(
            a.status,
            want,
            "roles {roles:?}: {}",
            String::from_utf8_lossy(&a.body)
        );
    }
}
