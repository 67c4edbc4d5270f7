//! openstacksdk's functional tests for Magnum
//! (`openstack.tests.functional.cloud.test_coe`: cluster template CRUD
//! through the cloud layer, and the magnum services list), unmodified from
//! the installed wheel, with the four clouds they expect pointing at Keystone
//! and the region okm-clients.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::harness::{
    REGION, Stack, Suite, exclusive, keystone, need_env, run_command, selected, tail,
};

/// The tests of the module that must pass.
const TESTS: [&str; 2] = [
    "TestClusterTemplate::test_cluster_templates",
    "TestMagnumServices::test_magnum_services",
];

#[test]
fn openstacksdk_functional() {
    if !selected() {
        return;
    }
    let Some(python) = need_env("OPENKEEL_TEST_SDK_PYTHON") else {
        return;
    };
    let _one = exclusive();
    let Some(keystone) = keystone() else {
        return;
    };
    let s = Stack::start(keystone);
    let mut suite = Suite::new("TestOpenStackSDKFunctional", Some(&s));
    run(&s, Path::new(&python), &mut suite);
    suite.finish();
}

fn run(s: &Stack, python: &Path, suite: &mut Suite<'_>) {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let id = s.identity();
    let cloud = |name: &str, user: &str, project: &str, system: bool| {
        let scope = if system {
            "      system_scope: all\n".to_owned()
        } else {
            format!("      project_name: {project}\n      project_domain_name: Default\n")
        };
        format!(
            "  {name}:\n    auth:\n      auth_url: {url}\n      username: {user}\n      \
             password: {pw}\n      user_domain_name: Default\n{scope}    region_name: {REGION}\n    \
             interface: public\n    identity_api_version: 3\n",
            url = id.url,
            pw = id.password(user),
        )
    };
    let yaml = format!(
        "clouds:\n{}{}{}{}",
        cloud("devstack", "demo", "demo", false),
        cloud("devstack-alt", "alt", "alt", false),
        cloud("devstack-admin", "admin", "admin", false),
        cloud("devstack-system-admin", "admin", "", true)
    );
    let cfg = home.path().join("clouds.yaml");
    if let Err(e) = std::fs::write(&cfg, yaml) {
        suite.fail(format!("write clouds.yaml: {e}"));
        return;
    }
    let mark = s.rec.mark();
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pytest",
        "-v",
        "-p",
        "no:cacheprovider",
        "-rA",
        "--pyargs",
        "openstack.tests.functional.cloud.test_coe",
    ])
    .current_dir(home.path())
    .env_clear()
    .env("HOME", home.path())
    .env("PATH", std::env::var("PATH").unwrap_or_default())
    .env("LANG", "C.UTF-8")
    .env("OS_CLIENT_CONFIG_FILE", &cfg)
    .env("OPENSTACKSDK_FUNC_TEST_TIMEOUT", "120")
    // The base test class fails a test after OS_TEST_TIMEOUT seconds (5
    // when unset): too short for Keystone and the service on a loaded
    // machine, where a request alone can take longer.
    .env("OS_TEST_TIMEOUT", "120");
    let (text, ok) = match run_command(&mut cmd, Duration::from_secs(600)) {
        Ok(o) => (format!("{}{}", o.stdout, o.stderr), o.code == 0),
        Err(e) => (e, false),
    };
    let mut all_passed = true;
    for name in TESTS {
        let passed = text.contains(&format!("{name} PASSED"));
        if !passed {
            suite.fail(format!("{name} did not pass"));
            all_passed = false;
        }
        suite.counts(1, usize::from(passed));
    }
    if !ok || !all_passed {
        eprintln!("pytest (exit ok: {ok}):\n{}", tail(&text, 20000));
        eprintln!(
            "HTTP exchanges with the service:\n{}",
            tail(&s.rec.since(mark), 20000)
        );
        if ok {
            return;
        }
        suite.fail("pytest failed");
    }
}
