//! Hostile drivers through the binary: a driver package for each way an
//! author could try to reach beyond their own clusters or exhaust the host
//! (the sandbox test component, `guest/components/sandbox`, with one mode a
//! package), installed in `[drivers]/drivers_path` of an `all-in-one`
//! beside the clusters of other projects on the fake driver. Each case runs
//! its attack as a user would meet it (a cluster create, a status poll, a
//! CA rotation through the API) and checks that the attacked operation
//! ends `*_FAILED` or answers Magnum's error body naming the driver's
//! fault; that a fake cluster of another project completes within 3 s
//! during the attack; and, once every case ran, that the victim project's
//! rows (clusters, nodegroups, templates, certificates) are as they were,
//! byte for byte, and its certificates still served. The memory case
//! checks the host's resident set after ten calls that fill their memory,
//! the log cases how much the log grew. Each case reports one line
//! (`hostile driver: <case>: …`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::harness::{Answer, ProjectApi as Api, Server};

const ATTACKER: &str = "p-attacker";
const VICTIM: &str = "p-victim";
const BYSTANDER: &str = "p-bystander";
/// How long another project's create may take while a hostile driver
/// runs: less than a poll deadline (3 s), so that a poll the attacker
/// blocks would show; or, on a machine slow enough that the create takes
/// more than a second without an attacker, that time and two seconds.
const BYSTANDER_BOUND: Duration = Duration::from_secs(3);
const BYSTANDER_SLACK: Duration = Duration::from_secs(2);

/// The operator's bounds the suite runs under. A call's deadline leaves
/// room for the drivers that log to their bound on a machine busy with the
/// other suites (3 s was missed there by a call writing its log).
const MAX_CALL_SECONDS: u64 = 6;
const LOG_KB_PER_CALL: u64 = 16;
const STATUS_FAULT_LIMIT: u32 = 3;
const MEMORY_MB: u64 = 256;

/// One hostile driver package: its name (also its entry point) and the
/// options of the sandbox component.
struct Package {
    name: &'static str,
    mode: &'static str,
    mode_in: &'static str,
    /// Extra `[limits]` and `[options]` lines of its manifest.
    limits: &'static str,
    options: &'static str,
}

const PACKAGES: &[Package] = &[
    pkg("h-other-cluster", "other-cluster", "create-cluster"),
    pkg("h-other-nodegroup", "other-nodegroup", "create-cluster"),
    pkg(
        "h-delete-other-ng",
        "delete-other-nodegroup",
        "create-cluster",
    ),
    pkg("h-insert-into-other", "insert-into-other", "create-cluster"),
    pkg("h-switch-template", "switch-template", "create-cluster"),
    pkg("h-adopt", "adopt", "create-cluster"),
    pkg("h-steal-ca", "steal-ca", "poll-status"),
    pkg("h-early-delete", "early-delete", "poll-status"),
    pkg("h-many-deletes", "many-deletes", "poll-status"),
    pkg("h-poll-trap", "panic", "poll-status"),
    Package {
        limits: "call-timeout-seconds = 4000000000\n",
        ..pkg("h-poll-loop", "loop", "poll-status")
    },
    pkg("h-sync-trap", "panic", "validate-master-size"),
    pkg("h-sync-bomb", "alloc", "validate-master-size"),
    Package {
        options: "big_bytes = \"8388608\"\n",
        ..pkg("h-sync-big-error", "big-error", "validate-master-size")
    },
    pkg("h-sync-loop", "loop", "can-rotate-ca"),
    pkg("h-refuse", "refuse", "validate-create,validate-upgrade"),
    Package {
        limits: "memory-mb = 1024\n",
        ..pkg("h-memory", "alloc-max", "validate-master-size")
    },
    // One line of 8 MiB, 512 times the call's log bound: what is written
    // beyond the bound only costs the guest's time, which a loaded machine
    // stretched past the deadline with 50 MB.
    Package {
        options: "big_bytes = \"8388608\"\n",
        ..pkg("h-log-line", "log-line", "validate-master-size")
    },
    Package {
        options: "lines = \"20000\"\n",
        ..pkg("h-log-flood", "log-flood", "validate-master-size")
    },
];

const fn pkg(name: &'static str, mode: &'static str, mode_in: &'static str) -> Package {
    Package {
        name,
        mode,
        mode_in,
        limits: "",
        options: "",
    }
}

/// What the sandbox component imports, which its manifest must request and
/// the operator grant (`grants`).
const CAPABILITIES: &str = r#"[capabilities]
kube = [{ api-version = "v1", kinds = ["ConfigMap"], verbs = ["get", "apply"], namespaces = ["magnum-system"] }]
openstack = ["resolve"]
cluster-secrets = true
"#;

/// The `[driver:<name>]` groups granting every package what it requests.
fn grants() -> String {
    PACKAGES
        .iter()
        .map(|p| format!("[driver:{}]\ngrant_requested = true\n", p.name))
        .collect()
}

/// Writes the package directories into `dir`: each its manifest and the
/// same component (compiled once: the cache is keyed by its hash).
fn install(dir: &Path) {
    let component = driver_host::test_components::SANDBOX;
    for p in PACKAGES {
        let d = dir.join(p.name);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::copy(component, d.join("sandbox.wasm")).expect("copy the component");
        let manifest = format!(
            "manifest-version = 1\n\n[driver]\nname = \"{name}\"\nversion = \"1.0.0\"\nwit = \"^1.0\"\n\
             component = \"sandbox.wasm\"\n\n[[entry-points]]\nname = \"{name}\"\nbeta = false\n\
             description = \"hostile\"\nprovides = [{{ server-type = \"vm\", os = \"sandbox\", coe = \"kubernetes\" }}]\n\n\
             [limits]\n{limits}\n[options]\nentry_point = \"{name}\"\nmode = \"{mode}\"\nmode_in = \"{mode_in}\"\n{options}\n\
             {CAPABILITIES}",
            name = p.name,
            limits = p.limits,
            mode = p.mode,
            mode_in = p.mode_in,
            options = p.options,
        );
        std::fs::write(d.join("driver.toml"), manifest).expect("write the manifest");
    }
}

/// Creates a fake cluster as a project that has nothing to do with the
/// attack and returns how long it took to reach CREATE_COMPLETE.
fn bystander(url: &str, template: &str, n: usize) -> Duration {
    let api = Api {
        url,
        project: BYSTANDER,
    };
    let name = format!("bystander-{n}");
    let started = Instant::now();
    let a = api.create(&name, template, json!({}));
    assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
    let uuid = a.json()["uuid"].as_str().expect("uuid").to_string();
    api.wait(&uuid, Duration::from_secs(30), |s| {
        s != "CREATE_IN_PROGRESS"
    });
    let took = started.elapsed();
    let c = api.cluster(&uuid).expect("the bystander's cluster");
    assert_eq!(c["status"], "CREATE_COMPLETE", "{c}");
    api.ok("DELETE", &format!("/v1/clusters/{uuid}"), None);
    took
}

/// Every row of the victim project, as SQLite quotes it, by table.
fn victim_rows(db: &Path) -> Vec<(String, Vec<String>)> {
    let rt = crate::sql::runtime();
    rt.block_on(async {
        let url = format!("sqlite://{}?mode=ro", db.display());
        let pool = sqlx::SqlitePool::connect(&url)
            .await
            .expect("open the database");
        let mut out = Vec::new();
        for table in ["cluster", "nodegroup", "cluster_template", "x509keypair"] {
            let columns: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT name FROM pragma_table_info('{table}')"
            )))
            .fetch_all(&pool)
            .await
            .expect("columns");
            let row = columns
                .iter()
                .map(|c| format!("quote(\"{c}\")"))
                .collect::<Vec<_>>()
                .join(" || '|' || ");
            // The table and column names are this test's own.
            let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT {row} FROM \"{table}\" WHERE project_id = ? ORDER BY id"
            )))
            .bind(VICTIM)
            .fetch_all(&pool)
            .await
            .expect("rows");
            out.push((table.to_string(), rows));
        }
        pool.close().await;
        out
    })
}

fn digest(rows: &[(String, Vec<String>)]) -> String {
    let mut h = Sha256::new();
    for (t, rs) in rows {
        h.update(t.as_bytes());
        for r in rs {
            h.update(r.as_bytes());
            h.update(b"\n");
        }
    }
    hex::encode(h.finalize())
}

/// One column of the victim's cluster row.
fn victim_column(db: &Path, uuid: &str, column: &str) -> String {
    let rt = crate::sql::runtime();
    rt.block_on(async {
        let url = format!("sqlite://{}?mode=ro", db.display());
        let pool = sqlx::SqlitePool::connect(&url)
            .await
            .expect("open the database");
        let v: String = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT CAST(\"{column}\" AS TEXT) FROM cluster WHERE uuid = ?"
        )))
        .bind(uuid)
        .fetch_one(&pool)
        .await
        .expect("the victim's row");
        pool.close().await;
        v
    })
}

/// What one case found.
struct Report {
    case: &'static str,
    outcome: String,
    bystander: Option<Duration>,
}

#[test]
fn hostile_drivers_reach_nothing_beyond_their_own_clusters() {
    let dir = tempfile::tempdir().expect("tempdir");
    let drivers = dir.path().join("drivers");
    install(&drivers);
    let db = dir.path().join("okm.sqlite");
    let conf = format!(
        "[DEFAULT]\nauth_strategy = noauth\n\n[database]\nconnection = sqlite:///{db}\n\n\
         [drivers]\ndrivers_path = {drivers}\nenabled_beta_drivers = fake\n\
         max_call_timeout = {MAX_CALL_SECONDS}\nmax_memory_mb = {MEMORY_MB}\n\
         log_kb_per_call = {LOG_KB_PER_CALL}\nlog_lines_per_call = 50\n\
         status_fault_limit = {STATUS_FAULT_LIMIT}\nbreaker_threshold = 3\nbreaker_cooldown = 2\n\n{grants}",
        db = db.display(),
        drivers = drivers.display(),
        grants = grants(),
    );
    let s = Server::start(&conf, &["all-in-one"]);
    let url = s.url.as_str();
    let attacker = Api {
        url,
        project: ATTACKER,
    };
    let victim = Api {
        url,
        project: VICTIM,
    };

    // The victim: a cluster with a second nodegroup, and a template no
    // cluster uses.
    let fake = victim.template("victim-tpl", "fake");
    victim.template("victim-unused", "fake");
    let v = victim.create("victim", &fake, json!({}));
    assert_eq!(v.status, 202, "{}", String::from_utf8_lossy(&v.body));
    let v_uuid = v.json()["uuid"].as_str().expect("uuid").to_string();
    victim.wait(&v_uuid, Duration::from_secs(60), |s| s == "CREATE_COMPLETE");
    victim.ok(
        "POST",
        &format!("/v1/clusters/{v_uuid}/nodegroups"),
        Some(json!({"name": "victim-ng", "node_count": 2})),
    );
    victim.wait(&v_uuid, Duration::from_secs(60), |s| s == "UPDATE_COMPLETE");
    let ng = victim.ok(
        "GET",
        &format!("/v1/clusters/{v_uuid}/nodegroups/victim-ng"),
        None,
    );
    let ng_uuid = ng["uuid"].as_str().expect("nodegroup uuid").to_string();
    let bystander_tpl = Api {
        url,
        project: BYSTANDER,
    }
    .template("bystander-tpl", "fake");
    let before = victim_rows(&db);
    let victim_labels = json!({
        "victim_uuid": v_uuid,
        "victim_id": victim_column(&db, &v_uuid, "id"),
        "victim_ng_uuid": ng_uuid,
        "victim_ng_id": crate::sql::runtime().block_on(async {
            let url = format!("sqlite://{}?mode=ro", db.display());
            let pool = sqlx::SqlitePool::connect(&url).await.expect("open");
            let id: i64 = sqlx::query_scalar("SELECT id FROM nodegroup WHERE uuid = ?")
                .bind(&ng_uuid)
                .fetch_one(&pool)
                .await
                .expect("the victim's nodegroup");
            id.to_string()
        }),
        "victim_project": VICTIM,
        "victim_ca_ref": victim_column(&db, &v_uuid, "ca_cert_ref"),
        "victim_template": fake,
    });

    let mut reports: Vec<Report> = Vec::new();
    let mut n = 0;
    let mut probe = || {
        n += 1;
        bystander(url, &bystander_tpl, n)
    };
    // What another project's create takes with no attacker around (the
    // fake driver's delay and the reconciler's ticks). Measured with no
    // other test's server running: another test starting (compiling its
    // components) costs seconds on two cores.
    let quiet = crate::harness::alone();
    let baseline = probe();
    let bystander_bound = BYSTANDER_BOUND.max(baseline + BYSTANDER_SLACK);

    // Answers that name the victim's rows, or lie about the attacker's
    // own: the attacked create or delete fails, naming the rule.
    let refused: &[(&str, &str, &str)] = &[
        ("h-other-cluster", "CREATE_FAILED", "another cluster"),
        (
            "h-other-nodegroup",
            "CREATE_FAILED",
            "not one of the cluster's",
        ),
        (
            "h-delete-other-ng",
            "CREATE_FAILED",
            "not one of the cluster's",
        ),
        ("h-insert-into-other", "CREATE_FAILED", "another cluster"),
        ("h-switch-template", "CREATE_FAILED", "cluster_template_id"),
        ("h-adopt", "CREATE_FAILED", "to ADOPT_COMPLETE"),
        ("h-early-delete", "CREATE_FAILED", "to DELETE_COMPLETE"),
        (
            "h-many-deletes",
            "CREATE_FAILED",
            "not one of the cluster's",
        ),
        ("h-poll-trap", "CREATE_FAILED", "trapped"),
        ("h-poll-loop", "CREATE_FAILED", "deadline of 6 s"),
    ];
    for (case, want, rule) in refused {
        let tpl = attacker.template(&format!("tpl-{case}"), case);
        let a = attacker.create(case, &tpl, victim_labels.clone());
        assert_eq!(
            a.status,
            202,
            "{case}: {}",
            String::from_utf8_lossy(&a.body)
        );
        let uuid = a.json()["uuid"].as_str().expect("uuid").to_string();
        attacker.wait_keys(&uuid);
        let took = probe();
        let c = attacker.wait(&uuid, Duration::from_secs(60), |s| {
            !s.ends_with("IN_PROGRESS")
        });
        let reason = c["status_reason"].as_str().unwrap_or_default();
        assert_eq!(c["status"], *want, "{case}: {c}\n{}", s.output());
        assert!(
            reason.contains(case) && reason.contains(rule),
            "{case}: the reason does not name the driver and `{rule}`: {reason}"
        );
        reports.push(Report {
            case,
            outcome: format!("{want}: {}", gist(reason)),
            bystander: Some(took),
        });
    }

    // A driver that answers its delete's status poll with the victim's
    // certificate references: the delete fails, and nobody's certificates
    // go (the attacker's own stay too).
    {
        let case = "h-steal-ca";
        let tpl = attacker.template("tpl-steal-ca", case);
        let a = attacker.create(case, &tpl, victim_labels.clone());
        assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
        let uuid = a.json()["uuid"].as_str().expect("uuid").to_string();
        attacker.wait(&uuid, Duration::from_secs(60), |s| s == "CREATE_FAILED");
        // The create's polls opened the driver's breaker: the delete is
        // its probe once the cooldown is over.
        std::thread::sleep(Duration::from_millis(2500));
        attacker.ok("DELETE", &format!("/v1/clusters/{uuid}"), None);
        let took = probe();
        let c = attacker.wait(&uuid, Duration::from_secs(60), |s| {
            s != "DELETE_IN_PROGRESS"
        });
        let reason = c["status_reason"].as_str().unwrap_or_default();
        assert_eq!(c["status"], "DELETE_FAILED", "{c}\n{}", s.output());
        assert!(
            reason.contains(case)
                && reason.contains("poll-status")
                && reason.contains("ca_cert_ref"),
            "{reason}"
        );
        let own = attacker.call("GET", &format!("/v1/certificates/{uuid}"), None);
        assert_eq!(own.status, 200, "the attacker's own CA went");
        reports.push(Report {
            case,
            outcome: format!("DELETE_FAILED: {}", gist(reason)),
            bystander: Some(took),
        });
    }
    drop(quiet);

    // Synchronous calls that fault: Magnum's error body, a title naming
    // the driver, the call and the fault, and no cluster written.
    let sync: &[(&str, u16, &str)] = &[
        ("h-sync-trap", 500, "(trap)"),
        ("h-sync-bomb", 500, "(trap)"),
        ("h-sync-big-error", 500, "(oversized)"),
    ];
    for (case, status, fault) in sync {
        let tpl = attacker.template(&format!("tpl-{case}"), case);
        let before = attacker.ok("GET", "/v1/clusters", None)["clusters"]
            .as_array()
            .map_or(0, Vec::len);
        let a = attacker.create(case, &tpl, json!({}));
        let title = error_title(&a);
        assert_eq!(
            a.status,
            *status,
            "{case}: {}",
            String::from_utf8_lossy(&a.body)
        );
        assert!(
            title.starts_with(&format!(
                "Cluster driver {case} failed in validate-master-size"
            )) && title.contains(fault),
            "{case}: title {title:?}"
        );
        let after = attacker.ok("GET", "/v1/clusters", None)["clusters"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(before, after, "{case}: a cluster was written");
        reports.push(Report {
            case,
            outcome: format!("{} {title}", a.status),
            bystander: None,
        });
    }
    {
        // The CA rotation's check loops: cut at the operator's maximum.
        let case = "h-sync-loop";
        let tpl = attacker.template("tpl-sync-loop", case);
        let a = attacker.create(case, &tpl, json!({}));
        assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
        let uuid = a.json()["uuid"].as_str().expect("uuid").to_string();
        attacker.wait(&uuid, Duration::from_secs(60), |s| s == "CREATE_COMPLETE");
        let started = Instant::now();
        let a = attacker.call(
            "PATCH",
            &format!("/v1/certificates/{uuid}"),
            Some(json!({})),
        );
        let took = started.elapsed();
        let title = error_title(&a);
        assert_eq!(a.status, 503, "{}", String::from_utf8_lossy(&a.body));
        assert!(
            title.starts_with("Cluster driver h-sync-loop failed in can-rotate-ca (timeout)"),
            "{title:?}"
        );
        assert!(took < Duration::from_secs(MAX_CALL_SECONDS + 5), "{took:?}");
        reports.push(Report {
            case,
            outcome: format!("503 after {:.1} s: {title}", took.as_secs_f64()),
            bystander: None,
        });
    }

    // A driver's own refusal of a create or an upgrade is the caller's
    // 400, and nothing is written.
    {
        let case = "h-refuse";
        let tpl = attacker.template("tpl-refuse", case);
        let count = || {
            attacker.ok("GET", "/v1/clusters", None)["clusters"]
                .as_array()
                .map_or(0, Vec::len)
        };
        let before = count();
        let a = attacker.create(case, &tpl, json!({"refused": "yes"}));
        assert_eq!(a.status, 400, "{}", String::from_utf8_lossy(&a.body));
        assert_eq!(
            error_title(&a),
            "sandbox component refuses the label refused=yes"
        );
        assert_eq!(count(), before, "a refused create wrote a cluster");
        // Upgrading a cluster the driver accepted: refused, unchanged.
        let a = attacker.create("h-refuse-ok", &tpl, json!({}));
        assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
        let uuid = a.json()["uuid"].as_str().expect("uuid").to_string();
        attacker.wait(&uuid, Duration::from_secs(60), |s| s == "CREATE_COMPLETE");
        let row = attacker.cluster(&uuid).expect("the cluster");
        let a = attacker.call(
            "POST",
            &format!("/v1/clusters/{uuid}/actions/upgrade"),
            Some(json!({"cluster_template": tpl})),
        );
        assert_eq!(a.status, 400, "{}", String::from_utf8_lossy(&a.body));
        assert_eq!(error_title(&a), "sandbox component refuses every upgrade");
        assert_eq!(
            attacker.cluster(&uuid),
            Some(row),
            "a refused upgrade changed the cluster"
        );
        reports.push(Report {
            case,
            outcome: "create and upgrade refused with the driver's 400, nothing written".into(),
            bystander: None,
        });
    }

    // Ten calls that fill their memory: the host gives it back.
    {
        let case = "h-memory";
        let tpl = attacker.template("tpl-memory", case);
        let call = || {
            let a = attacker.create(case, &tpl, json!({}));
            assert_eq!(a.status, 400, "{}", String::from_utf8_lossy(&a.body));
            assert!(
                error_title(&a).contains("filled"),
                "{}",
                String::from_utf8_lossy(&a.body)
            );
        };
        call();
        let before = s.rss();
        for _ in 0..10 {
            call();
        }
        let after = s.rss();
        let grew = after.saturating_sub(before);
        assert!(
            grew <= 64 << 20,
            "the resident set grew by {} MiB after ten calls of {MEMORY_MB} MiB",
            grew >> 20
        );
        reports.push(Report {
            case,
            outcome: format!(
                "resident set {} MiB before, {} MiB after ten calls filling {MEMORY_MB} MiB",
                before >> 20,
                after >> 20
            ),
            bystander: None,
        });
    }

    // What a call logs is bounded, whatever it writes.
    for case in ["h-log-line", "h-log-flood"] {
        let tpl = attacker.template(&format!("tpl-{case}"), case);
        let before = s.output_len();
        let a = attacker.create(case, &tpl, json!({}));
        assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
        let grew = s.output_len() - before;
        // The call's own bound, and room for what the host logs of the
        // request itself.
        let bound = (LOG_KB_PER_CALL + 16) << 10;
        assert!(grew <= bound, "{case}: the log grew by {grew} bytes");
        assert!(
            s.output().contains("driver log beyond"),
            "{case}: no note of what was dropped"
        );
        reports.push(Report {
            case,
            outcome: format!(
                "log grew by {grew} bytes (bound {} KiB a call)",
                LOG_KB_PER_CALL
            ),
            bystander: None,
        });
    }

    // The breaker of the trapping driver opened, once, in the log.
    assert!(
        s.output()
            .lines()
            .any(|l| l.contains("driver shut off") && l.contains("h-poll-trap")),
        "the breaker of h-poll-trap did not open:\n{}",
        s.output()
    );

    // Nothing of the victim changed, and its certificates and unused
    // template are its own still.
    let after = victim_rows(&db);
    for ((t, b), (_, a)) in before.iter().zip(&after) {
        assert_eq!(b, a, "the victim's {t} rows changed");
    }
    let ca = victim.call("GET", &format!("/v1/certificates/{v_uuid}"), None);
    assert_eq!(ca.status, 200, "the victim's CA is gone");
    victim.ok("GET", "/v1/clusters", None);
    victim.ok("DELETE", "/v1/clustertemplates/victim-unused", None);

    for r in &reports {
        let by = r
            .bystander
            .map(|d| {
                assert!(
                    d < bystander_bound,
                    "{}: another project's cluster took {d:?}, {baseline:?} without an attacker",
                    r.case
                );
                format!(
                    "; another project's cluster completed in {:.2} s",
                    d.as_secs_f64()
                )
            })
            .unwrap_or_default();
        openkeel_magnum_exchanges::figures::report(&format!(
            "hostile driver: {}: {}{by}",
            r.case, r.outcome
        ));
    }
    openkeel_magnum_exchanges::figures::report(&format!(
        "hostile driver: {} cases; the victim's rows unchanged (sha256 {}); another project's cluster completed in {:.2} s without an attacker",
        reports.len(),
        &digest(&after)[..16],
        baseline.as_secs_f64()
    ));
}

/// The `title` of Magnum's error body.
fn error_title(a: &Answer) -> String {
    let v: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
    v["errors"][0]["title"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// What a failure reason says the driver did: the rule its answer broke,
/// or the fault, in at most 120 characters.
fn gist(reason: &str) -> String {
    let said = reason
        .split_once("was refused: ")
        .or_else(|| reason.split_once(" failed in "))
        .map_or(reason, |(_, r)| r);
    said.chars().take(120).collect()
}
