//! `driver test`, as a driver's author runs it: the example Rust package
//! (`$OKM_EXAMPLE_DRIVER`, built by `scripts/ci/example-driver.sh`) passes
//! the conformance kit and its lifecycle through the API of the binary
//! started as `all-in-one --kube memory`, its status derived from what its
//! watches select; the conformance test component
//! in its mode `labels-fail` (a bad label answered `failed`, not 400)
//! fails the kit's check and the refused create through the API, exit 1.

use std::path::Path;
use std::time::Duration;

use crate::harness::{Output, binary, driver_cache_conf, run, service_env};

/// `driver test <args…>` with the suite's cache of compiled components,
/// with room for a first compilation.
fn driver_test(args: &[&str]) -> Output {
    let cache = driver_cache_conf()
        .to_str()
        .expect("utf-8 path")
        .to_string();
    let mut all = vec!["driver", "test"];
    all.extend_from_slice(args);
    all.extend(["--config-file", &cache]);
    run(&binary(), &all, Duration::from_secs(600))
}

/// Whether a line of the output starts with `start`.
fn has_line(o: &Output, start: &str) -> bool {
    o.stdout.lines().any(|l| l.starts_with(start))
}

#[test]
fn the_example_package_passes_conformance_and_its_lifecycle() {
    let Some(package) = service_env("OKM_EXAMPLE_DRIVER") else {
        return;
    };
    let o = driver_test(&[&package, "--refuses", "size=11", "--timeout", "60"]);
    assert_eq!(o.code, 0, "{o:?}");
    for check in [
        "describe-matches-manifest",
        "answers-within-the-contract",
        "unsupported-answers-not-supported",
        "create-idempotent",
        "update-idempotent",
        "delete-idempotent",
        "status-pure",
        "granted-kinds-only",
        "bad-labels-are-400s",
    ] {
        assert!(
            has_line(&o, &format!("ok      {check} [hello]")),
            "{check}: {o:?}"
        );
    }
    // Through the API: the refused label is Magnum's 400 with the
    // driver's message; the cluster completes, is resized and goes.
    for step in [
        "ok      server answers",
        "ok      template create",
        "ok      refused size=11 → 400",
        "ok      create → CREATE_COMPLETE",
        "ok      resize → UPDATE_COMPLETE",
        "ok      delete → 404",
    ] {
        assert!(has_line(&o, step), "{step}: {o:?}");
    }
    assert!(
        o.stdout
            .contains("Label size must be between 1 and 10, not 11."),
        "{o:?}"
    );
    // Each status arrived from the objects its watches select.
    for step in ["create → CREATE_COMPLETE", "resize → UPDATE_COMPLETE"] {
        let line = o
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("ok      {step}")))
            .unwrap_or_default();
        assert!(line.ends_with("by derive-status over its watches"), "{o:?}");
    }
    let last = o.stdout.lines().last().unwrap_or_default();
    assert_eq!(
        last, "PASSED  hello 1.0.0: conformance and lifecycle",
        "{o:?}"
    );
}

/// The conformance test component in `mode`, as a package in `dir`.
fn conformance_package(dir: &Path, mode: &str) {
    let manifest = include_str!("../../guest/components/conformance/driver.toml")
        .replace("mode = \"good\"", &format!("mode = \"{mode}\""));
    std::fs::write(dir.join("driver.toml"), manifest).expect("write the manifest");
    std::fs::copy(
        driver_host::test_components::CONFORMANCE,
        dir.join("conformance.wasm"),
    )
    .expect("copy the component");
}

#[test]
fn a_driver_failing_a_bad_label_fails_the_kit_and_the_api_exit_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    conformance_package(dir.path(), "labels-fail");
    let package = dir.path().display().to_string();
    let o = driver_test(&[&package, "--refuses", "size=11", "--timeout", "60"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        has_line(
            &o,
            "FAILED  bad-labels-are-400s [conformance]: labels {\"size\": \"11\"}"
        ),
        "{o:?}"
    );
    assert!(
        has_line(&o, "ok      create-idempotent [conformance]"),
        "{o:?}"
    );
    // The same refusal through the API is no 400, and the lifecycle ends
    // there, with the server's last lines.
    assert!(has_line(&o, "FAILED  refused size=11 → 400"), "{o:?}");
    assert!(!o.stdout.contains("create → CREATE_COMPLETE"), "{o:?}");
    assert!(o.stdout.contains("server output (last lines):"), "{o:?}");
    let last = o.stdout.lines().last().unwrap_or_default();
    assert_eq!(
        last, "FAILED  conformance 1.0.0: bad-labels-are-400s, refused size=11 → 400",
        "{o:?}"
    );
}
