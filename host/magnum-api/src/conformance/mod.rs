//! The in-process conformance replay: the HTTP exchanges recorded from
//! Magnum's own API unit tests (spec/exchanges/exchanges.json) served by the
//! API built in this process, and its answers compared with Magnum's
//! (status, the headers that matter, the bodies) as spec/exchanges/README.md
//! ("How to compare") describes. The record model is the
//! `openkeel-magnum-exchanges` crate, which the black-box replay of tests/e2e
//! shares.
//!
//! The corpus is `$OKM_EXCHANGES`, else
//! `${OKM_SPEC_DIR:-../shared/spec}/exchanges/exchanges.json` beside the
//! repository; a missing corpus skips (fails under `CI=true`). The test
//! prints one line `N passed, M failed (…)` for the whole corpus;
//! `OKM_CONFORMANCE_REPORT` names a file that receives every mismatch and
//! the count per Magnum test module, `OKM_CONFORMANCE_ONLY` (`a|b`) replays
//! only the records whose id contains one of its parts.
//!
//! Each record (except app `wsme-test-app`, a toy application of Magnum's
//! type tests) is served by its own API, built as in the recording
//! environment (README "The test environment"):
//!
//! - database: a SQLite file migrated once per run and copied, db_before
//!   inserted table by table with the recorded ids and columns (JSON
//!   columns in Python's json.dumps format and recorded key order, None as
//!   "{}" / "[]", booleans, naive UTC datetimes in SQLAlchemy's text form);
//! - clock: 2026-11-30 01:33:00, or 2000-01-01 when the test mocked
//!   `timeutils.utcnow`;
//! - configuration: conf_overrides api/max_limit, quotas/
//!   max_clusters_per_project, cluster_template/kubernetes_allowed_
//!   network_drivers and kubernetes_default_network_driver become the API
//!   options and the conductor's settings; Magnum's defaults otherwise;
//! - policy: Magnum's in-code defaults through the real engine;
//!   policy_overrides replace the whole rule set, as Magnum's policy fixture
//!   (set_rules with overwrite) does: other rules are undefined and deny. A
//!   mocked `policy.enforce` allows every rule, and answers its return value
//!   to the one non-raising check (clustertemplate:publish);
//! - caller: X-Project-Id / X-User-Id / X-Roles (roles split on ",", a
//!   missing header is [""]), is_admin the recorded context.is_admin (a
//!   MagicMock context counts as admin); a context the test injected
//!   replaces project, user and roles;
//! - paste:* records: a keystonemiddleware stand-in that refuses the
//!   token-less requests, with the recorded paste file's public routes;
//! - conductor: a real conductor over that database, with lookups that
//!   answer as the record's attr_validator mocks (image os_distro "ubuntu",
//!   name "mock_name", magnum_driver when the mock returns one; the
//!   exception a mock raises, with its own message, from the lookup it
//!   stands for; unmocked Glance calls fail as in the unit tests) and the
//!   driver host without drivers unless the test mocked `Driver.get_driver`
//!   (then the built-in fake driver, which claims the recorded templates'
//!   cluster type and whose operations succeed). A new template's driver
//!   selection is the mocked one: any cluster type is accepted and the
//!   template keeps the driver it names (or none), unless
//!   `get_default_driver` is mocked (then a driver of that name claims every
//!   cluster type and is the default). The RPC stand-ins of the tests are
//!   replaced by our conductor's own work; where that makes the answer
//!   differ, the record is a known failure. A mocked Keystone client makes
//!   the project lookup of a quota POST fail.
//!
//! Request bodies are sent as recorded, except that when the recorded answer
//! quotes the whole body (a WSME "Value: '{...}'" error), its keys are sent
//! in the quoted order, the order the test sent.
//!
//! Every record must pass except those of
//! [`openkeel_magnum_exchanges::known::KNOWN`], each with a one-line reason
//! (tests/e2e/conformance/FINDINGS.md and the Go replay's FINDINGS.md have
//! the diagnosis). A listed record that passes, or a listed id missing from
//! the corpus, fails the test (for the published corpus only).

mod fakes;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use chrono::{NaiveDate, NaiveDateTime};
use driver_host::{DriverHost, DriverSettings, HostServices, Registry, Selection};
use http::{HeaderValue, Request};
use http_body_util::BodyExt;
use openkeel_magnum_exchanges::{
    Record, RecordFilter, Response, Tally, compare, known, seed, uses_default_corpus,
};
use serde_json::Value;
use tower::ServiceExt;

use super::{Api, ApiOptions, Authenticator, Services, handlers};
use crate::certs::{KeyGenerator, X509KeyPairStore, X509Options};
use crate::conductor::{Certificates, Clock, Conductor, Parts, Settings, TemplateDrivers};
use crate::db::{self, Db, DbTarget, Dialect, Hooks};
use crate::notify::{Notifier, Sources};
use crate::openstack::Image;
use fakes::{
    FakeOpenStack, FakeSetup, KeystoneLikeAuth, MockedGetDriver, PermissiveEntry, TestAppAuth,
};
use magnum_conductor::policy::Enforcer;

const GET_DRIVER: &str = "magnum.drivers.common.driver.Driver.get_driver";
const GET_DEFAULT_DRIVER: &str = "magnum.drivers.common.driver.Driver.get_default_driver";
const ENFORCE: &str = "magnum.common.policy.enforce";

use test_support::{in_ci, repo_root};

/// The public routes of the recorded paste files (acl_public_routes).
fn paste_public_routes(app: &str) -> Vec<String> {
    let routes: &[&str] = match app {
        "paste:auth-root-access.ini" => &["/"],
        "paste:auth-v1-access.ini" => &["/v1"],
        "paste:noauth-paste.ini" | "paste:api-paste.ini-default" => &["/", "/v1"],
        _ => &[],
    };
    routes.iter().map(|r| r.to_string()).collect()
}

fn is_template_request(rec: &Record) -> bool {
    rec.request.path.starts_with("/v1/clustertemplates")
}

/// The record's templates and the request body: what names the cluster
/// types and drivers a mocked driver lookup must answer for.
fn template_rows(rec: &Record) -> Vec<&serde_json::Map<String, Value>> {
    let mut rows: Vec<&serde_json::Map<String, Value>> = rec
        .db_before
        .get("cluster_template")
        .into_iter()
        .flatten()
        .collect();
    if let Some(body) = rec.request.body.as_object() {
        rows.push(body);
    }
    rows
}

/// The driver selection of a new template: a mocked get_default_driver
/// makes a driver of that name, claiming every cluster type, the default;
/// otherwise get_driver is mocked (or no driver is installed, which the
/// template requests of the corpus treat the same way).
fn template_drivers(rec: &Record) -> Arc<dyn TemplateDrivers> {
    if let Some(name) = rec
        .mock(GET_DEFAULT_DRIVER)
        .and_then(|m| m.return_value.as_str())
    {
        let entry = PermissiveEntry {
            name: name.to_string(),
            provides: fakes::driver_targets(&template_rows(rec)),
        };
        let sel = Selection {
            default: Some(name.to_string()),
            ..Selection::default()
        };
        if let Ok(r) = Registry::new(sel, [entry]) {
            return Arc::new(r);
        }
    }
    Arc::new(MockedGetDriver)
}

/// The lookups as the record's attr_validator mocks make them answer.
fn fake_openstack(rec: &Record) -> FakeOpenStack {
    let q = &rec.request;
    let body = q.body.as_object();
    let s = |k: &str| body.and_then(|b| b.get(k)).and_then(Value::as_str);
    let template = is_template_request(rec);
    let mut setup = FakeSetup {
        template,
        image: Image {
            name: "mock_name".into(),
            os_distro: Some("ubuntu".into()),
            ..Image::default()
        },
        ..FakeSetup::default()
    };
    if template {
        setup.decorator_pending = q.method == "POST"
            && (s("cluster_distro").is_none_or(str::is_empty)
                || s("driver").is_none_or(str::is_empty));
        let has_image = body
            .and_then(|b| b.get("image_id"))
            .is_some_and(|v| !v.is_null());
        setup.osres_image = has_image || q.method == "PATCH";
    }
    for m in rec.mocks.iter().flatten() {
        match m.target.as_str() {
            "magnum.api.attr_validator.validate_os_resources" => {
                setup.osres_err = fakes::mock_error(m);
            }
            "magnum.api.attr_validator.validate_image" => {
                setup.image_err = fakes::mock_error(m);
                if let Some(rv) = m.return_value.as_object() {
                    let get = |k: &str| {
                        rv.get(k)
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                    };
                    setup.image.name = get("name").unwrap_or_default();
                    setup.image.os_distro = get("os_distro");
                    setup.image.magnum_driver = get("magnum_driver");
                }
            }
            "magnum.api.attr_validator.validate_flavor_root_volume_size" => {
                setup.root_err = fakes::mock_error(m);
            }
            "magnum.common.clients.OpenStackClients.keystone" => {
                setup.missing_projects =
                    m.return_value.as_str() == Some("<MagicMock>") && q.method == "POST";
            }
            _ => {}
        }
    }
    FakeOpenStack::new(setup)
}

/// Magnum's defaults through the real engine; the policy overrides alone
/// when the test set rules (every other rule undefined, hence denied); a
/// mocked enforce allows every rule but `clustertemplate:publish`, which
/// answers the mock's return value.
fn policy(rec: &Record, dir: &Path) -> Result<Enforcer, String> {
    let mut opts = magnum_conductor::policy::PolicySettings {
        enforce_scope: true,
        enforce_new_defaults: true,
        ..magnum_conductor::policy::PolicySettings::default()
    }
    .options();
    opts.policy_file = None;
    opts.policy_dirs = Vec::new();
    let rules: Option<serde_json::Map<String, Value>> = if let Some(m) = rec.mock(ENFORCE) {
        let publish = if m.return_value == Value::Bool(true) {
            ""
        } else {
            "!"
        };
        Some(
            magnum_conductor::policy::magnum_defaults()
                .into_iter()
                .map(|r| {
                    let check = if r.name == "clustertemplate:publish" {
                        publish
                    } else {
                        ""
                    };
                    (r.name, Value::String(check.to_string()))
                })
                .collect(),
        )
    } else {
        rec.policy_overrides
            .as_ref()
            .filter(|o| !o.is_empty())
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect()
            })
    };
    if let Some(rules) = rules {
        let f = dir.join("policy.json");
        std::fs::write(&f, Value::Object(rules).to_string()).map_err(|e| e.to_string())?;
        opts.policy_file = Some(f);
        opts.policy_file_optional = false;
        opts.defaults = Vec::new();
    }
    Enforcer::new(opts).map_err(|e| format!("policy: {e}"))
}

/// The conf_overrides the API and the conductor read.
fn settings(rec: &Record) -> (ApiOptions, Settings) {
    let mut api = ApiOptions::default();
    let mut s = Settings::default();
    for (key, v) in rec.conf_overrides.iter().flatten() {
        match key.as_str() {
            "api/max_limit" => {
                if let Some(n) = v.as_i64() {
                    api.max_limit = n;
                    s.max_limit = n;
                }
            }
            "quotas/max_clusters_per_project" => {
                if let Some(n) = v.as_i64() {
                    s.max_clusters_per_project = n;
                }
            }
            "cluster_template/kubernetes_allowed_network_drivers" => {
                s.kubernetes_allowed_network_drivers = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                    .collect();
            }
            "cluster_template/kubernetes_default_network_driver" => {
                s.kubernetes_default_network_driver =
                    v.as_str().map_or_else(|| v.to_string(), str::to_string);
            }
            _ => {}
        }
    }
    (api, s)
}

/// What every record of a run shares: the migrated database it copies (in
/// a directory kept as long as the run), the key generator.
struct Run {
    _dir: tempfile::TempDir,
    template_db: PathBuf,
    keys: Arc<KeyGenerator>,
}

impl Run {
    async fn new() -> Result<Run, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let template_db = dir.path().join("template.db");
        std::fs::write(&template_db, "").map_err(|e| e.to_string())?;
        let target = DbTarget::new(
            Dialect::Sqlite,
            format!("sqlite://{}", template_db.display()),
        );
        let d = Db::open(&target).await.map_err(|e| e.to_string())?;
        db::upgrade(&d).await.map_err(|e| e.to_string())?;
        d.close().await;
        let keys = Arc::new(KeyGenerator::start(1).map_err(|e| e.to_string())?);
        Ok(Run {
            _dir: dir,
            template_db,
            keys,
        })
    }

    /// Serves `rec` with its own API and returns the answer.
    async fn replay(&self, rec: &Record) -> Result<Response, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let file = dir.path().join("magnum.db");
        std::fs::copy(&self.template_db, &file).map_err(|e| e.to_string())?;
        let url = format!("sqlite://{}", file.display());
        seed::seed_db(&url, &rec.db_before).await?;

        let now = if rec.mock("oslo_utils.timeutils.utcnow").is_some() {
            at(2000, 1, 1, 0, 0)
        } else {
            at(2026, 11, 30, 1, 33)
        };
        let clock: Clock = Arc::new(move || now);
        let hooks = Hooks {
            clock: Some(clock.clone()),
            on_retry: None,
        };
        let db = Db::open_with(&DbTarget::new(Dialect::Sqlite, url), hooks)
            .await
            .map_err(|e| e.to_string())?;

        // No driver is installed in the recording environment (every
        // built-in one is disabled); a mocked get_driver finds one for any
        // cluster: the fake driver, which provides the recorded templates'
        // (vm, ubuntu, kubernetes) and comes first.
        let mut drivers = DriverSettings {
            precompiled_cache_dir: test_support::compiled_drivers_dir(),
            ..DriverSettings::default()
        };
        if rec.mock(GET_DRIVER).is_some() && !is_template_request(rec) {
            drivers.enabled_beta_drivers = vec!["fake".into()];
        } else {
            drivers.disabled_drivers = driver_host::BUILTIN_ENTRY_POINTS
                .iter()
                .map(|d| d.to_string())
                .collect();
        }
        let drivers = Arc::new(
            DriverHost::start(drivers, HostServices::default())
                .await
                .map_err(|e| format!("drivers: {e}"))?,
        );
        let (api_options, conductor_settings) = settings(rec);
        let (notifier, _) = Notifier::recording("container-infra.test", Sources::default());
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let conductor = Conductor::new(Parts {
            db: db.clone(),
            drivers,
            template_drivers: template_drivers(rec),
            lookup: Arc::new(fake_openstack(rec)),
            certificates: Certificates {
                store: Arc::new(X509KeyPairStore::new(Arc::new(db.clone()))),
                keys: self.keys.clone(),
                x509: X509Options::default(),
            },
            notifier,
            settings: conductor_settings,
            clock,
            new_uuid: Arc::new(move || {
                let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                format!("00000000-0000-4000-8000-{n:012x}")
            }),
        });
        let services = Services {
            conductor,
            enforcer: Arc::new(policy(rec, dir.path())?),
        };
        let mut options = api_options;
        let auth: Arc<dyn Authenticator> = if rec.app.starts_with("paste:") {
            options.public_routes = paste_public_routes(&rec.app);
            Arc::new(KeystoneLikeAuth)
        } else {
            Arc::new(TestAppAuth {
                ctx: rec.context.clone(),
            })
        };
        let disable = dir.path().join("healthcheck_disable");
        if rec.test_id.contains("disable_file") {
            std::fs::write(&disable, "").map_err(|e| e.to_string())?;
        }
        options.healthcheck_disable_file = Some(disable);
        let app = Api::new(options, auth, handlers(&services)).into_router();

        let resp = app
            .oneshot(request(rec)?)
            .await
            .map_err(|e| format!("serve: {e}"))?;
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes()
            .to_vec();
        db.close().await;
        Ok(Response {
            status,
            headers,
            body,
        })
    }
}

fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(y, mo, d)
        .and_then(|d| d.and_hms_opt(h, mi, 0))
        .unwrap_or_default()
}

/// The characters of a recorded path or query sent as they are; others are
/// percent-encoded (as Go's url.URL does when the replay builds a request).
const URI_UNSAFE: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'|')
    .add(b'\\')
    .add(b'^')
    .add(b'#');

/// The request the test sent: method, path and query, the recorded headers
/// (but Content-Length), and the body in the order the test sent its keys.
fn request(rec: &Record) -> Result<Request<Body>, String> {
    let q = &rec.request;
    let mut target = percent_encoding::utf8_percent_encode(&q.path, URI_UNSAFE).to_string();
    if !q.query.is_empty() {
        target.push('?');
        target.push_str(&percent_encoding::utf8_percent_encode(&q.query, URI_UNSAFE).to_string());
    }
    let mut b = Request::builder().method(q.method.as_str()).uri(target);
    let mut has_host = false;
    for (k, v) in &q.headers {
        if k.eq_ignore_ascii_case("content-length") {
            continue;
        }
        has_host |= k.eq_ignore_ascii_case("host");
        let v = HeaderValue::from_bytes(v.as_bytes()).map_err(|e| format!("header {k}: {e}"))?;
        b = b.header(k.as_str(), v);
    }
    if !has_host {
        b = b.header("host", "localhost");
    }
    let body = seed::replay_body(&q.body, q.body_text.as_deref(), &rec.response.body);
    b.body(body.map_or_else(Body::empty, Body::from))
        .map_err(|e| format!("request: {e}"))
}

#[test]
fn exchanges_replay() {
    let path = openkeel_magnum_exchanges::corpus_path(&repo_root());
    if !path.exists() {
        assert!(!in_ci(), "exchanges not found at {}", path.display());
        eprintln!(
            "skipped: exchanges not found at {} (set OKM_SPEC_DIR or OKM_EXCHANGES)",
            path.display()
        );
        return;
    }
    let records = openkeel_magnum_exchanges::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let selection = RecordFilter::from_env();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let run = rt
        .block_on(Run::new())
        .unwrap_or_else(|e| panic!("the run's database: {e}"));
    let mut tally = Tally::new(uses_default_corpus());
    for rec in &records {
        if !tally.takes(rec, &selection) {
            continue;
        }
        let diffs = match rt.block_on(run.replay(rec)) {
            Ok(got) => compare(rec, &got),
            Err(e) => vec![e],
        };
        tally.record(rec, &diffs, known::known(&rec.id));
    }
    if selection.whole() {
        tally.check_whole_corpus(known::KNOWN.iter().map(|(id, _)| *id));
    }
    tally.finish("in-process", "known failures");
}

#[cfg(test)]
mod tests {
    //! Go: test/conformance/harness_test.go (TestHarness: the policy
    //! cases; the JSON-column, column-value and quoted-body cases are the
    //! `openkeel-magnum-exchanges` crate's tests) and TestDefaultPolicy of
    //! conformance_test.go.

    use super::*;
    use magnum_conductor::policy::{caller_target, credentials};
    use magnum_domain::RequestContext;
    use openkeel_magnum_exchanges::Mock;

    fn caller(project: &str, roles: &[&str]) -> RequestContext {
        RequestContext {
            project_id: project.into(),
            user_id: "fake_user".into(),
            roles: roles.iter().map(|r| r.to_string()).collect(),
            ..RequestContext::default()
        }
    }

    fn allowed(e: &Enforcer, rule: &str, ctx: &RequestContext) -> bool {
        let target = caller_target(ctx);
        e.enforce(rule, &target, &credentials(ctx)).unwrap_or(false)
    }

    #[test]
    fn policy_overrides_replace_the_whole_rule_set() {
        let dir = tempfile::tempdir().unwrap();
        let rec = Record {
            policy_overrides: Some(BTreeMap::from([(
                "cluster:get_all".to_string(),
                "project_id:fake_project".to_string(),
            )])),
            ..Record::default()
        };
        let e = policy(&rec, dir.path()).unwrap();
        let ctx = caller("fake_project", &["admin"]);
        assert!(allowed(&e, "cluster:get_all", &ctx), "the overridden rule");
        assert!(
            !allowed(&e, "cluster:get", &ctx),
            "a rule that is not overridden is allowed; want undefined (denied)"
        );
    }

    #[test]
    fn a_mocked_enforce_answers_its_return_value_only_to_the_publish_check() {
        let dir = tempfile::tempdir().unwrap();
        let rec = Record {
            mocks: Some(vec![Mock {
                target: ENFORCE.into(),
                return_value: Value::Bool(false),
                side_effect: None,
            }]),
            ..Record::default()
        };
        let e = policy(&rec, dir.path()).unwrap();
        let ctx = caller("p", &[]);
        assert!(allowed(&e, "cluster:create", &ctx), "raising check denied");
        assert!(
            !allowed(&e, "clustertemplate:publish", &ctx),
            "publish allowed with return_value false"
        );
    }

    #[test]
    fn a_mocked_exception_keeps_its_message_and_the_catalogue_status() {
        let m = |side: &str| Mock {
            target: "x".into(),
            return_value: Value::Null,
            side_effect: Some(side.into()),
        };
        match fakes::mock_error(&m("raise ImageNotFound(test-img)")) {
            Some(crate::openstack::LookupError::Client(e)) => {
                assert_eq!(
                    (e.status, e.kind, e.message.as_str()),
                    (400, "ImageNotFound", "test-img")
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            fakes::mock_error(&m("raise RuntimeError(boom)")),
            Some(crate::openstack::LookupError::Failed(_))
        ));
        assert!(fakes::mock_error(&m("call something")).is_none());
    }

    #[test]
    fn the_template_driver_selection_is_the_mocked_one() {
        let input = |request: &str, image: &str| driver_host::TemplateDriverInput {
            server_type: "vm".into(),
            cluster_distro: "storm-os".into(),
            coe: "kubernetes".into(),
            request_driver: request.into(),
            image_driver: image.into(),
        };
        // get_driver mocked (or no driver installed): any cluster type, the
        // template keeps the driver it names, else none.
        let d = template_drivers(&Record::default());
        assert_eq!(d.resolve_template_driver(&input("", "")).unwrap(), "");
        assert_eq!(d.resolve_template_driver(&input("u", "i")).unwrap(), "u");
        assert_eq!(d.resolve_template_driver(&input("", "i")).unwrap(), "i");
        assert_eq!(d.default_name().unwrap(), None);
        // get_default_driver mocked: that driver is the default, and the
        // only one.
        let rec = Record {
            mocks: Some(vec![Mock {
                target: GET_DEFAULT_DRIVER.into(),
                return_value: Value::String("conf_driver".into()),
                side_effect: None,
            }]),
            ..Record::default()
        };
        let d = template_drivers(&rec);
        assert_eq!(d.default_name().unwrap().as_deref(), Some("conf_driver"));
        let plain = driver_host::TemplateDriverInput {
            cluster_distro: "ubuntu".into(),
            ..input("", "")
        };
        assert_eq!(d.resolve_template_driver(&plain).unwrap(), "conf_driver");
        assert_eq!(
            d.resolve_template_driver(&input("other", ""))
                .unwrap_err()
                .status,
            400
        );
    }

    /// Go: TestDefaultPolicy. GET /v1/mservices (admin-only by default)
    /// through the real policy engine with Magnum's default rules.
    #[tokio::test]
    async fn default_policy_guards_mservices() {
        let t = crate::testing::TestApp::new().await;
        for (roles, want) in [("admin", 200), ("reader,member", 403), ("", 403)] {
            let a = t
                .call("GET /v1/mservices", "", &[&format!("X-Roles: {roles}")])
                .await;
            assert_eq!(a.status.as_u16(), want, "roles {roles:?}: {}", a.text());
        }
    }
}
