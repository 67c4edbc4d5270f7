//! The SDK's example drivers through the real binary and the real client:
//! the Rust one (`sdk/examples/hello`, `$OKM_EXAMPLE_DRIVER`) and the
//! Python one (`sdk/python/examples/hello_py`, `$OKM_PYTHON_DRIVER`), each
//! a package directory as `scripts/ci/example-driver.sh` and
//! `scripts/ci/python-driver.sh` build it. Each is placed in
//! `[drivers]/drivers_path`, accepted by `driver validate`, shown by
//! `driver list`, and used by a cluster `openstack coe` creates on
//! `all-in-one` and deletes. The drivers keep a ConfigMap per cluster in
//! the management cluster, here a real kube-apiserver.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::{Coe, Output, Server, binary, run, service_env};
use crate::kube::api_server;

/// One of the example drivers.
struct Example {
    /// The environment variable naming its package directory.
    env: &'static str,
    /// The package name (its `[driver:<name>]` group).
    package: &'static str,
    /// The entry point templates name.
    entry_point: &'static str,
}

const RUST: Example = Example {
    env: "OKM_EXAMPLE_DRIVER",
    package: "hello",
    entry_point: "hello",
};

const PYTHON: Example = Example {
    env: "OKM_PYTHON_DRIVER",
    package: "hello-py",
    entry_point: "hello_py",
};

/// Copies the package's `driver.toml` and component into `to`.
fn install(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    let entries = std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    for e in entries.flatten() {
        let name = e.file_name();
        let n = name.to_string_lossy();
        if n == "driver.toml" || n.ends_with(".wasm") {
            std::fs::copy(e.path(), to.join(&name)).expect("copy");
        }
    }
}

/// The binary with room for a first compilation of the component.
fn okm_slow(args: &[&str]) -> Output {
    run(&binary(), args, Duration::from_secs(600))
}

#[test]
fn rust_example_driver_through_the_binary_and_openstack_coe() {
    lifecycle(&RUST);
}

#[test]
fn python_example_driver_through_the_binary_and_openstack_coe() {
    lifecycle(&PYTHON);
}

fn lifecycle(ex: &Example) {
    let Some(package) = service_env(ex.env) else {
        return;
    };
    let Some(cli) = service_env("OPENKEEL_TEST_OPENSTACK_CLI") else {
        return;
    };
    let Some(kube) = api_server() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let drivers = dir.path().join("drivers");
    let installed = drivers.join(ex.package);
    install(Path::new(&package), &installed);
    let installed = installed.display().to_string();
    // The compiled components are kept between the commands and between
    // runs (keyed by the component's sha256 and the engine): a Python
    // component takes minutes to compile on a loaded machine, and the
    // server must answer within the harness's start deadline. The cache is
    // the one every server of the suite is given (the harness passes its
    // file after ours, so it decides), and `driver validate` fills it.
    let cache = crate::harness::driver_cache_conf()
        .parent()
        .expect("the driver cache directory")
        .to_path_buf();
    let base = format!(
        "[drivers]\ndrivers_path = {}\nprecompiled_cache_dir = {}\n[capi]\nkubeconfig = {}\n",
        drivers.display(),
        cache.display(),
        kube.kubeconfig_path().display()
    );
    let grant = format!("[driver:{}]\ngrant_requested = true\n", ex.package);

    // Not granted: refused, with what is missing.
    let ungranted = dir.path().join("ungranted.conf");
    std::fs::write(&ungranted, &base).expect("write");
    let ungranted = ungranted.display().to_string();
    let o = okm_slow(&[
        "driver",
        "validate",
        &installed,
        "--config-file",
        &ungranted,
    ]);
    assert_eq!(o.code, 1, "validate without a grant: {o:?}");
    assert!(o.stdout.contains("not granted"), "{o:?}");

    let conf = dir.path().join("magnum.conf");
    std::fs::write(&conf, format!("{base}{grant}")).expect("write");
    let conf = conf.display().to_string();
    let o = okm_slow(&["driver", "validate", &installed, "--config-file", &conf]);
    assert_eq!(o.code, 0, "driver validate: {o:?}");
    assert_eq!(o.stdout.trim().lines().count(), 1, "one line: {o:?}");
    let o = okm_slow(&["driver", "list", "--config-file", &conf]);
    assert_eq!(o.code, 0, "driver list: {o:?}");
    let row = o
        .stdout
        .lines()
        .find(|l| l.split_whitespace().any(|w| w == ex.entry_point))
        .unwrap_or_else(|| panic!("{} not listed:\n{}", ex.entry_point, o.stdout));
    assert!(row.contains(&installed), "not from drivers_path: {row}");
    assert!(!row.contains("refused"), "{row}");

    kube.create_namespace("magnum-system");
    let s = Server::start(&format!("{base}{grant}"), &["all-in-one"]);
    let c = Coe {
        cli,
        endpoint: format!("{}/v1", s.url),
    };
    c.ok(&[
        "cluster",
        "template",
        "create",
        "--coe",
        "kubernetes",
        "--image",
        "ubuntu-jammy-kube",
        "--external-network",
        "public",
        "--flavor",
        "m1.small",
        "--master-flavor",
        "m1.medium",
        "--driver",
        ex.entry_point,
        "--labels",
        "size=2",
        "tpl1",
    ]);
    let tpl: serde_json::Value =
        serde_json::from_str(&c.ok(&["cluster", "template", "show", "tpl1", "-f", "json"]))
            .expect("template JSON");
    assert_eq!(tpl["driver"], ex.entry_point, "{tpl}");
    c.ok(&[
        "cluster",
        "create",
        "--cluster-template",
        "tpl1",
        "--node-count",
        "1",
        "c1",
    ]);
    let cluster = wait(&c, "c1", "CREATE_COMPLETE");
    let uuid = cluster["uuid"].as_str().expect("uuid").to_owned();
    let cm_path = format!("/api/v1/namespaces/magnum-system/configmaps/cluster-{uuid}");
    let cm = kube
        .get(&cm_path)
        .unwrap_or_else(|| panic!("the driver declared no ConfigMap:\n{}", s.output()));
    assert_eq!(cm["data"]["size"], "2", "{cm}");
    assert_eq!(
        cm["metadata"]["labels"]["magnum.openstack.org/cluster"], uuid,
        "{cm}"
    );
    let managers: Vec<&str> = cm["metadata"]["managedFields"]
        .as_array()
        .map(|m| m.iter().filter_map(|f| f["manager"].as_str()).collect())
        .unwrap_or_default();
    let own = format!("openkeel-magnum-{}", ex.package);
    assert_eq!(managers, [own.as_str()], "{cm}");

    c.ok(&["cluster", "delete", "c1"]);
    let deadline = Instant::now() + Duration::from_secs(120);
    while let Some(v) = c.cluster("c1") {
        let st = v["status"].as_str().unwrap_or_default().to_owned();
        assert!(
            !st.ends_with("FAILED") && Instant::now() < deadline,
            "cluster c1 is {st}:\n{}",
            s.output()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        kube.get(&cm_path).is_none(),
        "the ConfigMap outlived its cluster"
    );
    let list = c.ok(&["cluster", "list", "-f", "json"]);
    assert!(!list.contains("\"c1\""), "{list}");
}

/// Waits (at most 120 s) for `status`; a `*_FAILED` on the way fails.
fn wait(c: &Coe, name: &str, status: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let v = c
            .cluster(name)
            .unwrap_or_else(|| panic!("cluster {name} vanished"));
        let st = v["status"].as_str().unwrap_or_default();
        if st == status {
            return v;
        }
        assert!(
            !st.ends_with("FAILED") && Instant::now() < deadline,
            "cluster {name} is {st}: {v}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}
