//! The real OpenStack CLI against `all-in-one`.

use std::time::Duration;

use crate::harness::{Server, run, service_env};

#[test]
fn openstack_coe_service_list_on_all_in_one() {
    let Some(cli) = service_env("OPENKEEL_TEST_OPENSTACK_CLI") else {
        return;
    };
    let s = Server::start("", &["all-in-one"]);
    let endpoint = format!("{}/v1", s.url);
    let o = run(
        std::path::Path::new(&cli),
        &[
            "--os-auth-type",
            "none",
            "--os-endpoint",
            &endpoint,
            "coe",
            "service",
            "list",
            "-f",
            "json",
        ],
        Duration::from_secs(120),
    );
    assert_eq!(o.code, 0, "openstack coe service list: {o:?}");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", o.stdout));
    assert!(
        rows.iter()
            .any(|r| r["binary"] == "magnum-conductor" && r["state"] == "up"),
        "no magnum-conductor in state up: {}",
        o.stdout
    );
}
