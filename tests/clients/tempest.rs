//! magnum-tempest-plugin's API tests (templates, admin templates, services,
//! clusters; the RBAC variants with `[enforce_scope] magnum = true`) with
//! tempest's dynamic credentials, against the stack found through the
//! catalog of region okm-clients.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::harness::{
    EXT_NET_ID, FLAVOR_SMALL, IMAGE_NAME, REGION, Stack, Suite, exclusive, keystone, need_env,
    run_command, selected, tail,
};

/// The plugin tests that cannot pass against a service without real
/// Kubernetes clusters: it builds a kubeconfig from api_address, talks to
/// the cluster's API and sleeps 300 s (spec peer-suites.md § 2).
const EXCLUDED: &str = "test_create_list_sign_delete_clusters";

/// The plugin tests that run in a tempest run of their own. The plugin's
/// test classes create their dynamic credentials in setUpClass but register
/// them for clearing after each test method (BaseTempestTest.ic_method_list),
/// so after a class's first test its project and user are gone; the clients
/// that already hold a token keep working while the service caches it, but a
/// client that authenticates later gets 401 from Keystone (project not
/// found). The zero-node test's certificate client authenticates only at its
/// end, so it fails that way against any server unless it is the first test
/// of its class.
const OWN_RUN: &str = "test_create_cluster_with_zero_nodes";

/// Plugin tests that fail against Magnum 23.0.0 itself, with the reason;
/// they are reported but do not fail the suite. None today: the two
/// zero-node tests that fail against Magnum (no microversion, node_count 0)
/// pass against openkeel-magnum by deviation (docs/compatibility.md,
/// Microversions).
const KNOWN_FAILURES: [(&str, &str); 0] = [];

/// One result line of `tempest run`:
/// `{0} magnum_tempest_plugin.tests.api.v1.….test_x[id-…,api] [1.234s] ... ok`;
/// returns the test name (without its attributes) and the result (`ok`,
/// `FAILED`, `SKIPPED…`).
fn parse_result(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix('{')?;
    let (worker, rest) = rest.split_once("} ")?;
    if worker.is_empty() || !worker.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (token, rest) = rest.split_once(' ')?;
    // The attributes are the last bracketed group of the token.
    let name = match token.rfind('[') {
        Some(i)
            if i > 0 && token.ends_with(']') && !token[i + 1..token.len() - 1].contains(']') =>
        {
            &token[..i]
        }
        _ => token,
    };
    if name.is_empty() {
        return None;
    }
    let rest = rest.strip_prefix('[')?;
    let (secs, rest) = rest.split_once("s] ... ")?;
    if secs.is_empty() || !secs.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let ok = rest == "ok" || rest == "FAILED" || rest == "SKIPPED" || rest.starts_with("SKIPPED: ");
    ok.then_some((name, rest))
}

/// The results of every test named in `out` (the last result of a name
/// wins).
fn results(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .filter_map(parse_result)
        .map(|(n, r)| (n.to_owned(), r.to_owned()))
        .collect()
}

#[test]
fn tempest_plugin() {
    if !selected() {
        return;
    }
    let Some(tempest) = need_env("OPENKEEL_TEST_TEMPEST") else {
        return;
    };
    let _one = exclusive();
    let Some(keystone) = keystone() else {
        return;
    };
    let s = Stack::start(keystone);
    let mut suite = Suite::new("TestTempestPlugin", Some(&s));
    run(&s, Path::new(&tempest), &mut suite);
    suite.finish();
}

fn run(s: &Stack, tempest: &Path, suite: &mut Suite<'_>) {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let ws = home.path().join("ws");
    let path = format!(
        "{}:{}",
        tempest.parent().unwrap_or(Path::new("/")).display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run_tool = |timeout: Duration, dir: &Path, args: &[&str]| {
        let mut cmd = Command::new(tempest);
        cmd.args(args)
            .current_dir(dir)
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", &path)
            .env("LANG", "C.UTF-8");
        match run_command(&mut cmd, timeout) {
            Ok(o) => (format!("{}{}", o.stdout, o.stderr), o.code == 0),
            Err(e) => (e, false),
        }
    };
    let ws_arg = ws.display().to_string();
    let (out, ok) = run_tool(Duration::from_secs(120), home.path(), &["init", &ws_arg]);
    if !ok {
        suite.fail(format!("tempest init:\n{out}"));
        return;
    }
    let id = s.identity();
    let conf = format!(
        "[DEFAULT]\nlog_file = tempest.log\n\n\
         [auth]\nuse_dynamic_credentials = true\nadmin_username = admin\nadmin_password = {admin}\n\
         admin_project_name = admin\nadmin_domain_name = Default\ncreate_isolated_networks = false\n\n\
         [identity]\nuri_v3 = {ks}\nauth_version = v3\nregion = {REGION}\nadmin_role = admin\n\
         v3_endpoint_type = public\n\n\
         [identity-feature-enabled]\napi_v2 = false\napi_v3 = true\n\n\
         [compute]\nregion = {REGION}\nendpoint_type = publicURL\n\n\
         [service_available]\nmagnum = true\nnova = false\nglance = false\nneutron = false\n\
         cinder = false\nswift = false\n\n\
         [magnum]\ncatalog_type = container-infra\nimage_id = {IMAGE_NAME}\nflavor_id = {FLAVOR_SMALL}\n\
         master_flavor_id = {FLAVOR_SMALL}\nnic_id = {EXT_NET_ID}\nkeypair_name = magnum-test\n\
         coe = kubernetes\nnetwork_driver = calico\ndns_nameserver = 8.8.8.8\nlabels = {{}}\n\
         copy_logs = false\ncopy_logs_success = false\ncluster_creation_timeout = 5\n\
         cluster_delete_timeout = 5\n\n\
         [enforce_scope]\nmagnum = true\n",
        admin = id.password("admin"),
        ks = id.url,
    );
    if let Err(e) = std::fs::write(ws.join("etc").join("tempest.conf"), conf) {
        suite.fail(format!("write tempest.conf: {e}"));
        return;
    }
    let mark = s.rec.mark();
    let exclude = format!("{EXCLUDED}|{OWN_RUN}");
    let (mut out, mut ok) = run_tool(
        Duration::from_secs(40 * 60),
        &ws,
        &[
            "run",
            "--concurrency",
            "1",
            "--regex",
            r"^magnum_tempest_plugin\.tests\.api",
            "--exclude-regex",
            &exclude,
        ],
    );
    if ok || !results(&out).is_empty() {
        // The zero-node tests run on their own, each the first test of its
        // class (see OWN_RUN).
        let own = format!(r"^magnum_tempest_plugin\.tests\.api\..*({OWN_RUN})");
        let (more, own_ok) = run_tool(
            Duration::from_secs(20 * 60),
            &ws,
            &["run", "--concurrency", "1", "--regex", &own],
        );
        out.push_str(&more);
        ok = ok && own_ok;
    }
    // Some classes (the RBAC personas) leave their dynamic projects and
    // users behind.
    remove_tempest_identities(s);

    let all = results(&out);
    let known: BTreeMap<&str, &str> = KNOWN_FAILURES.into_iter().collect();
    let (mut passed, mut failed, mut skipped, mut known_failed) = (vec![], vec![], vec![], vec![]);
    for (name, r) in &all {
        let short = name
            .strip_prefix("magnum_tempest_plugin.tests.api.v1.")
            .unwrap_or(name);
        match (r.as_str(), known.get(short)) {
            ("ok", _) => passed.push(short.to_owned()),
            ("FAILED", Some(why)) => known_failed.push(format!("{short} ({why})")),
            ("FAILED", None) => failed.push(short.to_owned()),
            _ => skipped.push(format!("{short} ({r})")),
        }
    }
    eprintln!(
        "tempest: {} passed, {} failed, {} failed as against Magnum 23.0.0, {} skipped",
        passed.len(),
        failed.len(),
        known_failed.len(),
        skipped.len()
    );
    suite.counts(all.len(), passed.len());
    let mut note =
        format!("excluded: {EXCLUDED} and its RBAC twin (they need a live Kubernetes API)");
    if !known_failed.is_empty() {
        note.push_str(&format!(
            "; failing as against Magnum 23.0.0: {}",
            known_failed.join("; ")
        ));
    }
    suite.note(note);
    eprintln!("passed:\n  {}", passed.join("\n  "));
    if !skipped.is_empty() {
        eprintln!("skipped:\n  {}", skipped.join("\n  "));
    }
    if all.is_empty() || !failed.is_empty() || (!ok && known_failed.is_empty()) {
        eprintln!("tempest output (tail):\n{}", tail(&out, 30000));
        eprintln!(
            "failed HTTP exchanges with the service:\n{}",
            tail(&s.rec.failures(mark), 30000)
        );
        suite.fail(format!(
            "tempest run (exit ok: {ok}); failed:\n  {}",
            failed.join("\n  ")
        ));
    }
}

/// Deletes the projects and users whose names start with `tempest-`
/// (tempest's dynamic credentials).
fn remove_tempest_identities(s: &Stack) {
    let id = s.identity();
    for kind in ["users", "projects"] {
        let (_, out) = s.rt.block_on(id.call(
            None,
            reqwest::Method::GET,
            &format!("/{kind}?domain_id=default"),
            None,
            &[200],
        ));
        for item in out[kind].as_array().into_iter().flatten() {
            let (Some(item_id), Some(name)) = (item["id"].as_str(), item["name"].as_str()) else {
                continue;
            };
            if name.starts_with("tempest-") {
                s.rt.block_on(id.call(
                    None,
                    reqwest::Method::DELETE,
                    &format!("/{kind}/{item_id}"),
                    None,
                    &[204, 404],
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines() {
        let cases = [
            (
                "{0} magnum_tempest_plugin.tests.api.v1.test_magnum_service.MagnumServiceTest.test_magnum_service_list_needs_admin[id-1c0b24c4,negative] [0.421s] ... ok",
                Some((
                    "magnum_tempest_plugin.tests.api.v1.test_magnum_service.MagnumServiceTest.test_magnum_service_list_needs_admin",
                    "ok",
                )),
            ),
            (
                "{1} a.b.C.test_x [12.5s] ... FAILED",
                Some(("a.b.C.test_x", "FAILED")),
            ),
            (
                "{0} a.b.C.test_y[id-1] [0.000s] ... SKIPPED: no kube",
                Some(("a.b.C.test_y", "SKIPPED: no kube")),
            ),
            ("{0} setUpClass (a.b.C) ... SKIPPED: x", None),
            ("{x} a.b [1.0s] ... ok", None),
            ("{0} a.b [1.0s] ... okay", None),
            ("a.b [1.0s] ... ok", None),
            ("{0} a.b[x [1.0s] ... ok", Some(("a.b[x", "ok"))),
            ("{0} a.b[x][y] [1.0s] ... ok", Some(("a.b[x]", "ok"))),
            ("{0}  a.b [1.0s] ... ok", None),
        ];
        for (line, want) in cases {
            assert_eq!(parse_result(line), want, "{line}");
        }
        let out = "{0} a.b [1.0s] ... FAILED\nnoise\n{0} a.b [2.0s] ... ok\n";
        assert_eq!(results(out).get("a.b").map(String::as_str), Some("ok"));
    }
}
