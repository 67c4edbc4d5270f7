//! `openkeel-magnum all-in-one` (no Keystone, fake driver, built-in lookups)
//! driven by `openstack coe` with the two keystoneauth plugins that carry
//! their own endpoint (spec peer-suites.md § 8b): admin_token and none.

use std::time::Duration;

use crate::harness::{Stack, Suite, exclusive, need_env, selected};
use crate::osc::{Osc, fails, ok};

#[test]
fn openstack_coe_without_keystone() {
    if !selected() {
        return;
    }
    let Some(cli) = need_env("OPENKEEL_TEST_OPENSTACK_CLI") else {
        return;
    };
    let _one = exclusive();
    let s = Stack::all_in_one();
    let o = Osc::new(cli, &s);
    let mut suite = Suite::new("TestOpenStackCoeWithoutKeystone", Some(&s));
    steps(&s, &o, &mut suite);
    suite.finish();
}

fn steps(s: &Stack, o: &Osc<'_>, suite: &mut Suite<'_>) {
    let none = [
        "OS_AUTH_TYPE=none".to_owned(),
        format!("OS_ENDPOINT={}", s.endpoint),
    ];
    let token = [
        "OS_AUTH_TYPE=admin_token".to_owned(),
        "OS_TOKEN=devtoken".to_owned(),
        format!("OS_ENDPOINT={}", s.endpoint),
    ];
    let wait = Duration::from_secs(60);
    let mut cluster_uuid = String::new();

    suite.step("template create with auth type none", |c| {
        let r = o.with_env(
            c,
            &none,
            "coe cluster template create dev-ct --image fedora-coreos-latest \
             --external-network public --coe kubernetes --master-flavor m1.small \
             --flavor m1.small",
        );
        ok(
            c,
            &r,
            &["Request to create cluster template dev-ct accepted"],
        );
    });
    suite.step("cluster create with admin_token", |c| {
        let r = o.with_env(
            c,
            &token,
            "coe cluster create dev-c --cluster-template dev-ct --node-count 2",
        );
        ok(c, &r, &["Request to create cluster "]);
        let out = r.stdout.trim();
        let out = out
            .strip_prefix("Request to create cluster ")
            .unwrap_or(out);
        cluster_uuid = out.strip_suffix(" accepted").unwrap_or(out).to_owned();
    });
    if cluster_uuid.len() != 36 {
        suite.fail(format!("no cluster uuid {cluster_uuid:?}"));
        return;
    }
    let cluster_uuid = cluster_uuid.as_str();
    suite.step("cluster reaches CREATE_COMPLETE", |c| {
        s.wait_status(c, "devtoken", cluster_uuid, wait, &["CREATE_COMPLETE"]);
    });
    suite.step("cluster list, show and config", |c| {
        let r = o.with_env(c, &none, "coe cluster list");
        ok(c, &r, &["dev-c", "CREATE_COMPLETE"]);
        let r = o.with_env(c, &token, "coe cluster show dev-c");
        ok(c, &r, &[cluster_uuid]);
        let dir = o.home.path().join("kube");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| c.fatal(e.to_string()));
        let r = o.with_env(
            c,
            &none,
            &format!("coe cluster config dev-c --dir {}", dir.display()),
        );
        ok(c, &r, &["export KUBECONFIG="]);
        match std::fs::read_to_string(dir.join("config")) {
            Ok(b) if b.contains("server: https://") => {}
            Ok(b) => c.error(format!("kubeconfig:\n{b}")),
            Err(e) => c.error(format!("kubeconfig: {e}")),
        }
    });
    suite.step("service list (the no-auth identity is admin)", |c| {
        let r = o.with_env(c, &none, "coe service list");
        ok(c, &r, &["magnum-conductor", "up"]);
    });
    suite.step("unknown cluster is 404", |c| {
        let r = o.with_env(c, &none, "coe cluster show nope");
        fails(c, &r, &["Cluster nope could not be found (HTTP 404)"]);
    });
    suite.step("cluster delete", |c| {
        let r = o.with_env(c, &token, "coe cluster delete dev-c");
        ok(
            c,
            &r,
            &["Request to delete cluster dev-c has been accepted."],
        );
        s.wait_status(c, "devtoken", cluster_uuid, wait, &["404"]);
    });
}
