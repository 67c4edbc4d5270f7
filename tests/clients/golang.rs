//! The Go clients: gophercloud's upstream acceptance tests, run from the Go
//! module cache at the version `tests/clients/go/go.mod` requires, and the
//! tests of that module (gophercloud's containerinfra packages, the
//! auto-healer's OpenStack provider, the autoscaler's call sequence).
//!
//! The harness starts the stack and runs the Go tests against it (one fresh
//! stack per Go test, as each Go test had its own): they learn it from
//! `OKM_CLIENTS_STACK` and read what the recording proxy and the Nova front
//! saw through the control API. The Go module is compiled once per process
//! (`go test -c`); its per-suite counts come back through its own
//! `OKM_CLIENT_REPORT`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use crate::harness::{
    EXT_NET_ID, EXT_NET_NAME, FLAVOR_MEDIUM, FLAVOR_SMALL, IMAGE_ID, KEYPAIR, REGION, Stack, Suite,
    clean_env, exclusive, keystone, need_env, repo_root, run_command, selected, suite_name, tail,
};

/// gophercloud's acceptance tests for container-infra.
const ACCEPTANCE_PKG: &str =
    "github.com/gophercloud/gophercloud/v2/internal/acceptance/openstack/containerinfra/v1";
/// The two of them that run upstream (the others skip themselves).
const ACCEPTANCE_TESTS: [&str; 2] = ["TestClusterTemplatesCRUD", "TestQuotasCRUD"];

/// The Go module of the Go clients.
fn module_dir() -> PathBuf {
    repo_root().join("tests/clients/go")
}

/// The test binary of the Go module, built once per process (and its
/// `TestNodeOf` run once).
fn go_tests() -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("clients-go");
            std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
            let bin = out_dir.join("clients.test");
            let mut cmd = Command::new("go");
            cmd.args(["test", "-c", "-o"])
                .arg(&bin)
                .arg(".")
                .current_dir(module_dir());
            let out = run_command(&mut cmd, Duration::from_secs(30 * 60))?;
            if out.code != 0 {
                return Err(format!(
                    "go test -c in tests/clients/go: exit {}\n{}{}",
                    out.code,
                    out.stdout,
                    tail(&out.stderr, 8000)
                ));
            }
            // The fake driver's node derivation the Go tests rely on, pinned
            // to independently computed values.
            let mut check = Command::new(&bin);
            check
                .args(["-test.run", "^TestNodeOf$", "-test.count=1", "-test.v"])
                .current_dir(module_dir());
            let out = run_command(&mut check, Duration::from_secs(60))?;
            if out.code != 0 || !out.stdout.contains("--- PASS: TestNodeOf ") {
                return Err(format!(
                    "TestNodeOf of tests/clients/go: exit {}\n{}{}",
                    out.code, out.stdout, out.stderr
                ));
            }
            Ok(bin)
        })
        .clone()
}

#[test]
fn gophercloud_acceptance() {
    if !selected() {
        return;
    }
    if need_env("OPENKEEL_TEST_GOPHERCLOUD").is_none() {
        return;
    }
    let _one = exclusive();
    let Some(keystone) = keystone() else {
        return;
    };
    let s = Stack::start(keystone);
    let mut suite = Suite::new("TestGophercloudAcceptance", Some(&s));
    acceptance(&s, &mut suite);
    suite.finish();
}

/// Runs TestClusterTemplatesCRUD and TestQuotasCRUD, unmodified, from the
/// module cache (Keystone password auth as admin, catalog lookup in region
/// okm-clients).
fn acceptance(s: &Stack, suite: &mut Suite<'_>) {
    let id = s.identity();
    let mark = s.rec.mark();
    let run = format!("^({})$", ACCEPTANCE_TESTS.join("|"));
    let mut cmd = Command::new("go");
    cmd.args([
        "test",
        "-count=1",
        "-v",
        "-timeout",
        "9m",
        "-tags",
        "acceptance",
        ACCEPTANCE_PKG,
        "-run",
        &run,
    ])
    .current_dir(module_dir())
    .env_clear()
    .envs(clean_env())
    .envs([
        ("OS_AUTH_URL", id.url.as_str()),
        ("OS_USERNAME", "admin"),
        ("OS_PASSWORD", id.password("admin")),
        ("OS_PROJECT_NAME", "admin"),
        ("OS_DOMAIN_ID", "default"),
        ("OS_REGION_NAME", REGION),
        ("OS_IMAGE_ID", IMAGE_ID),
        ("OS_MAGNUM_IMAGE_ID", IMAGE_ID),
        ("OS_FLAVOR_ID", FLAVOR_SMALL),
        ("OS_FLAVOR_ID_RESIZE", FLAVOR_MEDIUM),
        ("OS_POOL_NAME", EXT_NET_NAME),
        ("OS_EXTGW_ID", EXT_NET_ID),
        ("OS_MAGNUM_KEYPAIR", KEYPAIR),
    ]);
    // Inherited from the caller's environment (HOME is left out of
    // clean_env): the go command needs it for its caches.
    if let Some(home) = std::env::var_os("HOME") {
        cmd.env("HOME", home);
    }
    let (text, ok) = match run_command(&mut cmd, Duration::from_secs(10 * 60)) {
        Ok(o) => (format!("{}{}", o.stdout, o.stderr), o.code == 0),
        Err(e) => (e, false),
    };
    let mut all_passed = true;
    for name in ACCEPTANCE_TESTS {
        let passed = text.contains(&format!("--- PASS: {name} "));
        if !passed {
            suite.fail(format!("{name} did not pass"));
            all_passed = false;
        }
        suite.counts(1, usize::from(passed));
    }
    if !ok || !all_passed {
        eprintln!("go test {ACCEPTANCE_PKG}:\n{}", tail(&text, 12000));
        eprintln!("HTTP exchanges with the service:\n{}", s.rec.since(mark));
        if ok {
            return;
        }
        suite.fail(format!("go test {ACCEPTANCE_PKG} failed"));
    }
}

/// Runs the Go test `key` of tests/clients/go against a fresh stack.
fn go_suite(key: &'static str) {
    if !selected() {
        return;
    }
    if need_env("OPENKEEL_TEST_GOPHERCLOUD").is_none() {
        return;
    }
    let _one = exclusive();
    let Some(keystone) = keystone() else {
        return;
    };
    let bin = match go_tests() {
        Ok(b) => b,
        Err(e) => {
            let mut suite = Suite::new(key, None);
            suite.fail(e);
            suite.finish();
            return;
        }
    };
    let s = Stack::start(keystone);
    let mut suite = Suite::new(key, Some(&s));
    let report = s.dir.path().join("go-report.tsv");
    let mut cmd = Command::new(&bin);
    cmd.args([
        "-test.run",
        &format!("^{key}$"),
        "-test.v",
        "-test.count=1",
        "-test.timeout",
        "15m",
    ])
    .current_dir(module_dir())
    .env("OKM_CLIENTS_STACK", s.info())
    .env("OKM_CLIENT_REPORT", &report);
    let (text, ok) = match run_command(&mut cmd, Duration::from_secs(16 * 60)) {
        Ok(o) => (format!("{}{}", o.stdout, o.stderr), o.code == 0),
        Err(e) => (e, false),
    };
    eprintln!("{text}");
    let name = suite_name(key);
    let rows = std::fs::read_to_string(&report).unwrap_or_default();
    let mut counted = false;
    for line in rows.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if let [n, run, passed, ..] = cols.as_slice()
            && *n == name
            && let (Ok(run), Ok(passed)) = (run.parse(), passed.parse())
        {
            suite.counts(run, passed);
            counted = true;
        }
    }
    if !counted {
        suite.fail(format!("the Go test wrote no counts for {name:?}"));
    }
    if !ok {
        suite.fail(format!("{key} failed"));
    }
    suite.finish();
}

#[test]
fn gophercloud_clusters() {
    go_suite("TestGophercloudClusters");
}

#[test]
fn auto_healer() {
    go_suite("TestAutoHealer");
}

#[test]
fn autoscaler_sequence() {
    go_suite("TestAutoscalerSequence");
}
