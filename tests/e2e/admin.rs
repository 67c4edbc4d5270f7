//! The database, status and check commands run as an operator would, on a
//! SQLite database.

use crate::harness::okm;

#[test]
fn admin_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db_file = dir.path().join("m.db");
    let conf = dir.path().join("magnum.conf");
    std::fs::write(
        &conf,
        format!(
            "[database]\nconnection = sqlite:///{}\n[drivers]\nenabled_beta_drivers = fake\n",
            db_file.display()
        ),
    )
    .expect("write");
    let conf = conf.display().to_string();
    let cmd = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--config-file", conf.as_str()]);
        okm(&all)
    };

    // Before the schema exists, the upgrade check fails and says why.
    let o = cmd(&["status", "upgrade-check"]);
    assert!(
        o.code == 2 && o.stdout.contains("Result: Failure") && o.stdout.contains("db upgrade"),
        "{o:?}"
    );

    let o = cmd(&["db", "upgrade"]);
    assert!(o.code == 0 && o.stdout.contains("version 3"), "{o:?}");
    let o = cmd(&["db", "version"]);
    assert!(
        o.code == 0 && o.stdout.contains("Current DB revision is b3e1cf4a2d5e"),
        "{o:?}"
    );
    // A second upgrade is a no-op.
    assert_eq!(cmd(&["db", "upgrade"]).code, 0);

    // The schema is current; what is left are warnings (no reconciler
    // holds the lease yet): exit 1, as magnum-status.
    let o = cmd(&["status", "upgrade-check"]);
    assert!(
        o.code == 1
            && !o.stdout.contains("Failure")
            && o.stdout.contains("| Check: Database Schema"),
        "{o:?}"
    );

    let o = cmd(&["status", "upgrade-check"]);
    assert!(
        o.stdout.contains("| Check: Cluster Drivers")
            && o.stdout.contains("Installed drivers: fake"),
        "{o:?}"
    );
    let o = cmd(&["driver", "list"]);
    assert!(
        o.code == 0
            && o.stdout.contains("| Name ")
            && o.stdout.contains("| fake ")
            && o.stdout.contains("built-in"),
        "{o:?}"
    );
    let o = cmd(&["driver", "list", "--details"]);
    // The cells of a row, without their padding.
    let rows: Vec<Vec<&str>> = o
        .stdout
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    let row = |name: &str, os: &str| {
        rows.iter()
            .find(|r| r.first() == Some(&name) && r.get(2) == Some(&os))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        o.code == 0
            && rows
                .first()
                .is_some_and(|h| h[..3] == ["Name", "Server_Type", "OS"])
            && row("fake", "ubuntu").get(1) == Some(&"vm"),
        "{o:?}"
    );
    // The Cluster API driver, embedded: every entry point with its grants.
    for (name, os) in [
        ("k8s_cluster_api", "ubuntu"),
        ("k8s_cluster_api", "flatcar"),
        ("k8s_cluster_api_debian", "debian"),
        ("k8s_cluster_api_flatcar", "flatcar"),
        ("k8s_cluster_api_rockylinux", "rockylinux"),
        ("k8s_cluster_api_ubuntu", "ubuntu"),
        ("k8s_cluster_api_ubuntu_focal", "ubuntu-focal"),
    ] {
        let r = row(name, os);
        let text = r.join(" | ");
        assert!(
            text.contains("built-in")
                && text.contains("1.1.0")
                && text.contains("cluster.x-k8s.io/v1beta2/Cluster")
                && text.contains("application-credentials")
                && text.contains("cluster-secrets"),
            "{name} {os}: {text}\n{o:?}"
        );
    }

    // A file that is no component is refused with its reason, exit 1.
    let junk = dir.path().join("junk.wasm");
    std::fs::write(&junk, b"\0asm junk").expect("write");
    let o = cmd(&["driver", "validate", &junk.display().to_string()]);
    assert!(o.code == 1 && o.stdout.contains("refused"), "{o:?}");

    // Our own schema is Magnum's at b3e1cf4a2d5e: adopting it again is a
    // no-op that succeeds.
    let o = cmd(&["db", "adopt"]);
    assert!(o.code == 0 && o.stdout.contains("adopted"), "{o:?}");

    // The effective configuration shows where values come from and masks
    // secrets.
    let o = cmd(&["config", "check"]);
    assert!(
        o.code == 0 && o.stdout.contains("| database") && o.stdout.contains("magnum.conf:2"),
        "{o:?}"
    );
    let o = cmd(&["policy", "check"]);
    assert!(
        o.code == 0 && o.stdout.contains("66 default rules"),
        "{o:?}"
    );

    // Another Alembic head is refused with a one-line message naming it.
    let conn = sqlite_exec(
        &db_file,
        &[
            "DELETE FROM openkeel_schema_version",
            "UPDATE alembic_version SET version_num = 'abc123'",
        ],
    );
    assert!(conn, "could not edit the database");
    let o = cmd(&["db", "adopt"]);
    assert!(
        o.code != 0 && o.stderr.contains("abc123") && o.stderr.trim().lines().count() == 1,
        "{o:?}"
    );
}

/// Runs SQL statements on a SQLite file with the `sqlite3` module of
/// Python (no SQLite client is needed on the machine).
fn sqlite_exec(db: &std::path::Path, statements: &[&str]) -> bool {
    let script = "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nfor s in sys.argv[2:]: c.execute(s)\nc.commit()\n";
    let mut args = vec!["-c", script];
    let path = db.display().to_string();
    args.push(&path);
    args.extend_from_slice(statements);
    let o = crate::harness::run(
        std::path::Path::new("python3"),
        &args,
        std::time::Duration::from_secs(60),
    );
    o.code == 0
}

#[test]
fn a_policy_file_with_problems_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("policy.yaml"),
        "\"cluster:bogus\": \"role:admin\"\n\"cluster:create\": \"role:admin and (\"\n",
    )
    .expect("write");
    let conf = dir.path().join("magnum.conf");
    std::fs::write(&conf, "[oslo_policy]\npolicy_file = policy.yaml\n").expect("write");
    let o = okm(&[
        "policy",
        "check",
        "--config-file",
        &conf.display().to_string(),
    ]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stdout.contains("cluster:bogus") || o.stdout.contains("cluster:create"),
        "{o:?}"
    );
}
