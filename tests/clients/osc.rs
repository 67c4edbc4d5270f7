//! The `openstack coe` command matrix of spec clients.md § 1.2
//! (python-openstackclient + python-magnumclient 5.0.0) with Keystone
//! password authentication and the catalog, at the client's default
//! microversion (latest), plus explicit microversions, error paths and the
//! admin_token and none auth types.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{
    Check, EXT_NET_ID, EXT_NET_NAME, FLAVOR_MEDIUM, FLAVOR_SMALL, IMAGE_ID, IMAGE_NAME, KEYPAIR,
    REGION, Stack, Suite, clean_env, exclusive, keystone, need_env, run_command, selected, tail,
};

/// Runs `openstack` with a clean environment (no `OS_*` variables from the
/// caller, an empty `HOME` so that no clouds.yaml is read).
pub struct Osc<'a> {
    bin: String,
    pub home: tempfile::TempDir,
    s: &'a Stack,
}

/// What one command produced.
pub struct CmdResult {
    args: Vec<String>,
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl fmt::Display for CmdResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut args = self.args.clone();
        for i in 1..args.len() {
            if args[i - 1] == "--os-token" {
                args[i] = "***".to_owned(); // never print a token
            }
        }
        write!(
            f,
            "openstack {}\nexit {}\nstdout:\n{}\nstderr:\n{}",
            args.join(" "),
            self.code,
            self.stdout,
            tail(&self.stderr, 4000)
        )
    }
}

impl<'a> Osc<'a> {
    pub fn new(bin: String, s: &'a Stack) -> Self {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        assert!(
            !home
                .path()
                .display()
                .to_string()
                .contains(char::is_whitespace),
            "the temporary directory {} holds a space: set TMPDIR",
            home.path().display()
        );
        Osc { bin, home, s }
    }

    /// The environment without the caller's `OS_*` settings.
    fn base_env(&self) -> BTreeMap<String, String> {
        let mut env = clean_env();
        env.insert("HOME".into(), self.home.path().display().to_string());
        env.insert("SHELL".into(), "/bin/bash".into());
        env.insert("PYTHONWARNINGS".into(), "ignore".into());
        env
    }

    /// Runs the command whose arguments are the words of `line` as `user`
    /// (password auth against Keystone, project named like the user, region
    /// okm-clients).
    pub fn run_as(&self, c: &mut Check, user: &str, line: &str) -> CmdResult {
        let id = self.s.identity();
        let os_env = [
            "OS_AUTH_TYPE=password".to_owned(),
            format!("OS_AUTH_URL={}", id.url),
            "OS_IDENTITY_API_VERSION=3".to_owned(),
            format!("OS_USERNAME={user}"),
            format!("OS_PASSWORD={}", id.password(user)),
            format!("OS_PROJECT_NAME={user}"),
            "OS_USER_DOMAIN_NAME=Default".to_owned(),
            "OS_PROJECT_DOMAIN_NAME=Default".to_owned(),
            format!("OS_REGION_NAME={REGION}"),
        ];
        self.with_env(c, &os_env, line)
    }

    /// Runs the command whose arguments are the words of `line` with exactly
    /// the `OS_*` variables given. No argument of the suites holds a space
    /// (the temporary directories are checked for one).
    pub fn with_env(&self, c: &mut Check, os_env: &[String], line: &str) -> CmdResult {
        let args: Vec<&str> = line.split_whitespace().collect();
        let mut env = self.base_env();
        for kv in os_env {
            if let Some((k, v)) = kv.split_once('=') {
                env.insert(k.to_owned(), v.to_owned());
            }
        }
        let mut cmd = Command::new(&self.bin);
        cmd.args(&args)
            .env_clear()
            .envs(&env)
            .current_dir(self.home.path());
        let out = run_command(&mut cmd, Duration::from_secs(120))
            .unwrap_or_else(|e| c.fatal(format!("run openstack: {e}")));
        CmdResult {
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            stdout: out.stdout,
            stderr: out.stderr,
            code: out.code,
        }
    }
}

/// Checks a zero exit code and that stdout contains every `want`.
pub fn ok(c: &mut Check, r: &CmdResult, want: &[&str]) {
    if r.code != 0 {
        c.error(format!("want exit 0:\n{r}"));
        return;
    }
    for w in want {
        if !r.stdout.contains(w) {
            c.error(format!("stdout lacks {w:?}:\n{r}"));
        }
    }
}

/// Checks a non-zero exit code and that stderr contains every `want`.
pub fn fails(c: &mut Check, r: &CmdResult, want: &[&str]) {
    if r.code == 0 {
        c.error(format!("want a failure:\n{r}"));
        return;
    }
    for w in want {
        if !r.stderr.contains(w) {
            c.error(format!("stderr lacks {w:?}:\n{r}"));
        }
    }
}

/// Decodes the `-f json` output of a successful command.
pub fn json_out(c: &mut Check, r: &CmdResult) -> Option<Value> {
    if r.code != 0 {
        c.error(format!("want exit 0:\n{r}"));
        return None;
    }
    // Create commands print "Request to create ... accepted" first.
    let mut text = r.stdout.as_str();
    if let Some(i) = text.find(['{', '[']) {
        text = &text[i..];
    }
    match serde_json::from_str(text) {
        Ok(v) => Some(v),
        Err(e) => {
            c.error(format!("-f json output: {e}\n{r}"));
            None
        }
    }
}

/// The rows of a `-f json` list.
fn rows(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// A JSON number as f64 (Go decodes every number so).
fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// Writes a PEM certificate signing request for `CN=okm-client,
/// O=system:masters` with a fresh RSA 2048 key.
pub fn write_csr(c: &mut Check, path: &Path) {
    use openssl::hash::MessageDigest;
    use openssl::pkey::PKey;
    use openssl::rsa::Rsa;
    use openssl::x509::{X509NameBuilder, X509ReqBuilder};
    let pem = (|| -> Result<Vec<u8>, openssl::error::ErrorStack> {
        let key = PKey::from_rsa(Rsa::generate(2048)?)?;
        let mut name = X509NameBuilder::new()?;
        name.append_entry_by_text("O", "system:masters")?;
        name.append_entry_by_text("CN", "okm-client")?;
        let name = name.build();
        let mut req = X509ReqBuilder::new()?;
        req.set_subject_name(&name)?;
        req.set_pubkey(&key)?;
        req.sign(&key, MessageDigest::sha256())?;
        req.build().to_pem()
    })()
    .unwrap_or_else(|e| c.fatal(format!("CSR: {e}")));
    std::fs::write(path, pem).unwrap_or_else(|e| c.fatal(format!("write CSR: {e}")));
}

#[test]
fn openstack_coe() {
    if !selected() {
        return;
    }
    let Some(cli) = need_env("OPENKEEL_TEST_OPENSTACK_CLI") else {
        return;
    };
    let _one = exclusive();
    let Some(keystone) = keystone() else {
        return;
    };
    let s = Stack::start(keystone);
    let o = Osc::new(cli, &s);
    let mut suite = Suite::new("TestOpenStackCoe", Some(&s));
    matrix(&s, &o, &mut suite);
    s.metrics_step(&mut suite, false);
    suite.finish();
}

fn matrix(s: &Stack, o: &Osc<'_>, suite: &mut Suite<'_>) {
    let demo_id = s.project("demo");
    let mut ct_uuid = String::new();
    let mut cluster_uuid = String::new();
    let wait = Duration::from_secs(120);
    let demo_token = || s.token("demo", "demo");
    let (endpoint, url) = (&s.endpoint, &s.url);

    // ------------------------------------------------ cluster templates
    suite.step("cluster template create", |c| {
        let r = o.run_as(
            c,
            "demo",
            &format!(
                "coe cluster template create okm-ct --image {IMAGE_NAME} \
                 --external-network {EXT_NET_NAME} --coe kubernetes --keypair {KEYPAIR} \
                 --flavor {FLAVOR_SMALL} --master-flavor {FLAVOR_SMALL} --network-driver \
                 calico --labels kube_tag=v1.30.2,okm=yes -f json"
            ),
        );
        let Some(ct) = json_out(c, &r) else { return };
        ct_uuid = ct["uuid"].as_str().unwrap_or_default().to_owned();
        let want = json!({"name": "okm-ct", "coe": "kubernetes", "image_id": IMAGE_NAME,
            "keypair_id": KEYPAIR, "flavor_id": FLAVOR_SMALL, "network_driver": "calico",
            "dns_nameserver": "8.8.8.8", "docker_storage_driver": "overlay2", "server_type": "vm",
            "public": false, "external_network_id": EXT_NET_NAME, "project_id": demo_id});
        for (k, v) in want.as_object().into_iter().flatten() {
            if &ct[k] != v {
                c.error(format!("{k} = {}, want {v}", ct[k]));
            }
        }
        let labels = &ct["labels"];
        if labels["kube_tag"] != "v1.30.2" || labels["okm"] != "yes" {
            c.error(format!("labels = {labels}"));
        }
        if ct_uuid.is_empty() {
            c.error(format!("no uuid: {}", r.stdout));
        }
    });
    suite.step("cluster template create (plain output)", |c| {
        let r = o.run_as(
            c,
            "demo",
            &format!(
                "coe cluster template create okm-ct2 --image {IMAGE_ID} \
                 --external-network {EXT_NET_ID} --coe kubernetes --flavor \
                 {FLAVOR_MEDIUM} --master-flavor {FLAVOR_MEDIUM} --labels \
                 kube_tag=v1.31.1"
            ),
        );
        ok(
            c,
            &r,
            &["Request to create cluster template okm-ct2 accepted"],
        );
    });
    suite.step(
        "cluster template create with an unknown image is 400",
        |c| {
            let r = o.run_as(
                c,
                "demo",
                &format!(
                    "coe cluster template create okm-bad --image nope --external-network \
                 {EXT_NET_NAME} --coe kubernetes --master-flavor {FLAVOR_SMALL}"
                ),
            );
            fails(c, &r, &["Image nope could not be found (HTTP 400)"]);
        },
    );
    suite.step(
        "cluster template create with an image without os_distro is 400",
        |c| {
            let r = o.run_as(
                c,
                "demo",
                &format!(
                    "coe cluster template create okm-bad --image no-distro --external-network \
                 {EXT_NET_NAME} --coe kubernetes --master-flavor {FLAVOR_SMALL}"
                ),
            );
            fails(
                c,
                &r,
                &["Image no-distro doesn't contain os_distro field (HTTP 400)"],
            );
        },
    );
    suite.step(
        "cluster template create with an unknown flavor is 400",
        |c| {
            let r = o.run_as(
                c,
                "demo",
                &format!(
                    "coe cluster template create okm-bad --image {IMAGE_NAME} \
                 --external-network {EXT_NET_NAME} --coe kubernetes --flavor nope \
                 --master-flavor {FLAVOR_SMALL}"
                ),
            );
            fails(c, &r, &["Unable to find flavor nope (HTTP 400)"]);
        },
    );
    suite.step(
        "cluster template create without a master flavor is 400 (default_boot_volume_size 0)",
        |c| {
            // Magnum 23 checks the root volume of master_flavor_id even when
            // the client sends null, as OSC does when --master-flavor is not
            // given.
            let r = o.run_as(
                c,
                "demo",
                &format!(
                    "coe cluster template create okm-bad --image {IMAGE_NAME} \
                     --external-network {EXT_NET_NAME} --coe kubernetes"
                ),
            );
            fails(c, &r, &["Unable to find flavor None (HTTP 400)"]);
        },
    );
    suite.step(
        "cluster template create with an unknown keypair is accepted",
        |c| {
            // Templates do not validate keypair_id (tempest: "missing keypair" → 201).
            let r = o.run_as(
                c,
                "demo",
                &format!(
                    "coe cluster template create okm-kp --image {IMAGE_NAME} \
                 --external-network {EXT_NET_NAME} --coe kubernetes --keypair nope \
                 --master-flavor {FLAVOR_SMALL}"
                ),
            );
            ok(
                c,
                &r,
                &["Request to create cluster template okm-kp accepted"],
            );
            let r = o.run_as(c, "demo", "coe cluster template delete okm-kp");
            ok(
                c,
                &r,
                &["Request to delete cluster template okm-kp has been accepted."],
            );
        },
    );
    suite.step("cluster template create --public as a member is 403", |c| {
        let r = o.run_as(
            c,
            "demo",
            &format!(
                "coe cluster template create okm-bad --image {IMAGE_NAME} \
                 --external-network {EXT_NET_NAME} --coe kubernetes --public \
                 --master-flavor {FLAVOR_SMALL}"
            ),
        );
        fails(
            c,
            &r,
            &["Not authorized to set public or hidden flag for cluster template (HTTP 403)"],
        );
    });
    suite.step("cluster template create --public as admin", |c| {
        let r = o.run_as(
            c,
            "admin",
            &format!(
                "coe cluster template create okm-public --image {IMAGE_NAME} \
                 --external-network {EXT_NET_NAME} --coe kubernetes --public \
                 --master-flavor {FLAVOR_SMALL} -f json"
            ),
        );
        if let Some(ct) = json_out(c, &r)
            && ct["public"] != true
        {
            c.error(format!("public = {}", ct["public"]));
        }
        let r = o.run_as(c, "alt", "coe cluster template list -f json");
        if let Some(list) = json_out(c, &r) {
            let l = rows(&list);
            if l.len() != 1 || l[0]["name"] != "okm-public" {
                c.error(format!("another project sees {list}"));
            }
        }
        let r = o.run_as(c, "admin", "coe cluster template delete okm-public");
        ok(
            c,
            &r,
            &["Request to delete cluster template okm-public has been accepted."],
        );
    });
    suite.step("cluster template list", |c| {
        let r = o.run_as(c, "demo", "coe cluster template list -f json");
        let Some(list) = json_out(c, &r) else { return };
        let l = rows(&list);
        let names: Vec<&Value> = l.iter().map(|row| &row["name"]).collect();
        for row in l {
            if row.get("uuid").is_none() {
                c.error(format!("row without uuid: {row}"));
            }
        }
        if !names.iter().any(|n| **n == "okm-ct")
            || !names.iter().any(|n| **n == "okm-ct2")
            || l.len() != 2
        {
            c.error(format!("rows {list}"));
        }
    });
    suite.step("cluster template list --limit 1 --sort-key name", |c| {
        let r = o.run_as(
            c,
            "demo",
            "coe cluster template list --limit 1 --sort-key name --sort-dir desc -f json",
        );
        if let Some(list) = json_out(c, &r) {
            let l = rows(&list);
            if l.len() != 1 || l[0]["name"] != "okm-ct2" {
                c.error(format!("rows {list}"));
            }
        }
    });
    suite.step("cluster template show by name", |c| {
        let r = o.run_as(c, "demo", "coe cluster template show okm-ct -f json");
        if let Some(ct) = json_out(c, &r)
            && (ct["uuid"] != ct_uuid.as_str() || ct["name"] != "okm-ct")
        {
            c.error(format!("show: {ct}"));
        }
    });
    suite.step("cluster template show unknown is 404", |c| {
        let r = o.run_as(c, "demo", "coe cluster template show nope");
        fails(
            c,
            &r,
            &["ClusterTemplate nope could not be found (HTTP 404)"],
        );
    });
    suite.step("cluster template update", |c| {
        let r = o.run_as(
            c,
            "demo",
            "coe cluster template update okm-ct2 --docker-volume-size 20 --label \
             extra=1 --master-lb-enabled -f json",
        );
        if let Some(ct) = json_out(c, &r) {
            if num(&ct["docker_volume_size"]) != Some(20.0) || ct["master_lb_enabled"] != true {
                c.error(format!("update: {ct}"));
            }
            let labels = &ct["labels"];
            if labels["extra"] != "1" || labels["kube_tag"] != "v1.31.1" {
                c.error(format!("labels = {labels}"));
            }
        }
    });
    suite.step("cluster template update --public as a member is 403", |c| {
        let r = o.run_as(c, "demo", "coe cluster template update okm-ct2 --public");
        fails(
            c,
            &r,
            &["Not authorized to set public or hidden flag for cluster template (HTTP 403)"],
        );
    });
    suite.step("cluster template update unknown is 404", |c| {
        let r = o.run_as(c, "demo", "coe cluster template update nope --name x");
        fails(
            c,
            &r,
            &["ClusterTemplate nope could not be found (HTTP 404)"],
        );
    });

    // ------------------------------------------------------- clusters
    suite.step("cluster create", |c| {
        let r = o.run_as(
            c,
            "demo",
            "coe cluster create okm-c --cluster-template okm-ct --node-count 1 \
             --master-count 1 --labels kube_tag=v1.30.2 --merge-labels",
        );
        ok(c, &r, &["Request to create cluster "]);
        let out = r.stdout.trim();
        let out = out
            .strip_prefix("Request to create cluster ")
            .unwrap_or(out)
            .trim();
        cluster_uuid = out.strip_suffix(" accepted").unwrap_or(out).to_owned();
        if cluster_uuid.len() != 36 {
            c.error(format!("no uuid in {:?}", r.stdout));
        }
    });
    suite.step(
        "cluster create with an unknown template is 404 at latest",
        |c| {
            let r = o.run_as(
                c,
                "demo",
                "coe cluster create okm-x --cluster-template nope",
            );
            fails(
                c,
                &r,
                &["ClusterTemplate nope could not be found (HTTP 404)"],
            );
        },
    );
    suite.step(
        "cluster create with an unknown template is 400 at 1.9",
        |c| {
            let r = o.run_as(
                c,
                "demo",
                "--os-container-infra-api-version 1.9 coe cluster create okm-x \
             --cluster-template nope",
            );
            fails(
                c,
                &r,
                &["ClusterTemplate nope could not be found (HTTP 400)"],
            );
        },
    );
    suite.step("cluster create with an unknown keypair is 404", |c| {
        let r = o.run_as(
            c,
            "demo",
            "coe cluster create okm-x --cluster-template okm-ct --keypair nope",
        );
        fails(c, &r, &["Unable to find keypair nope (HTTP 404)"]);
    });
    suite.step("cluster create with an even master count is 400", |c| {
        let r = o.run_as(
            c,
            "demo",
            "coe cluster create okm-x --cluster-template okm-ct --master-count 2 \
             --master-lb-enabled",
        );
        fails(c, &r, &["(HTTP 400)"]);
    });
    suite.step("cluster list", |c| {
        let r = o.run_as(c, "demo", "coe cluster list -f json");
        if let Some(list) = json_out(c, &r) {
            let l = rows(&list);
            if l.len() != 1 || l[0]["name"] != "okm-c" || l[0]["uuid"] != cluster_uuid.as_str() {
                c.error(format!("rows {list}"));
            }
            for k in [
                "keypair",
                "node_count",
                "master_count",
                "status",
                "health_status",
            ] {
                if l.len() == 1 && l[0].get(k).is_none() {
                    c.error(format!("row lacks {k}: {}", l[0]));
                }
            }
        }
    });
    if cluster_uuid.is_empty() {
        suite.fail("no cluster: the rest of the matrix needs one");
        return;
    }
    let cluster_uuid = cluster_uuid.as_str();
    suite.step("cluster reaches CREATE_COMPLETE", |c| {
        s.wait_status(c, &demo_token(), cluster_uuid, wait, &["CREATE_COMPLETE"]);
    });
    suite.step("cluster show (latest: cluster_id)", |c| {
        let r = o.run_as(c, "demo", "coe cluster show okm-c -f json");
        if let Some(cl) = json_out(c, &r) {
            if cl["uuid"] != cluster_uuid
                || cl["status"] != "CREATE_COMPLETE"
                || cl["cluster_template_id"] != ct_uuid.as_str()
            {
                c.error(format!("show: {cl}"));
            }
            if cl["cluster_id"].as_str().unwrap_or_default().is_empty() {
                c.error(format!("cluster_id empty at latest: {cl}"));
            }
            if !cl["api_address"]
                .as_str()
                .unwrap_or_default()
                .starts_with("https://")
            {
                c.error(format!("api_address {}", cl["api_address"]));
            }
        }
    });
    suite.step("cluster show at 1.12 has an empty cluster_id", |c| {
        let r = o.run_as(
            c,
            "demo",
            &format!(
                "--os-container-infra-api-version 1.12 coe cluster show {cluster_uuid} -f json"
            ),
        );
        if let Some(cl) = json_out(c, &r) {
            let id = cl["cluster_id"].as_str().unwrap_or_default();
            if !id.is_empty() {
                c.error(format!("cluster_id {id:?} below 1.13"));
            }
        }
    });
    suite.step("cluster show unknown is 404", |c| {
        let r = o.run_as(c, "demo", "coe cluster show nope");
        fails(c, &r, &["Cluster nope could not be found (HTTP 404)"]);
    });
    suite.step("cluster show of another project's cluster is 404", |c| {
        let r = o.run_as(c, "alt", &format!("coe cluster show {cluster_uuid}"));
        fails(c, &r, &["could not be found (HTTP 404)"]);
    });
    suite.step("cluster update --node-count", |c| {
        let r = o.run_as(c, "demo", "coe cluster update okm-c --node-count 2");
        ok(
            c,
            &r,
            &["Request to update cluster okm-c has been accepted."],
        );
        s.wait_status(c, &demo_token(), cluster_uuid, wait, &["UPDATE_COMPLETE"]);
    });
    suite.step("cluster update --name is 400", |c| {
        let r = o.run_as(c, "demo", "coe cluster update okm-c --name renamed");
        fails(
            c,
            &r,
            &["cannot change cluster property(ies) name (HTTP 400)"],
        );
    });
    suite.step("cluster update --rollback", |c| {
        let r = o.run_as(
            c,
            "demo",
            "coe cluster update okm-c --node-count 1 --rollback",
        );
        ok(
            c,
            &r,
            &["Request to update cluster okm-c has been accepted."],
        );
        s.wait_status(c, &demo_token(), cluster_uuid, wait, &["UPDATE_COMPLETE"]);
    });
    suite.step("cluster update with nothing to update", |c| {
        let r = o.run_as(c, "demo", "coe cluster update okm-c");
        fails(c, &r, &["Nothing to update."]);
    });
    suite.step("cluster resize", |c| {
        let r = o.run_as(c, "demo", "coe cluster resize okm-c 3");
        ok(
            c,
            &r,
            &["Request to resize cluster okm-c has been accepted."],
        );
        s.wait_status(c, &demo_token(), cluster_uuid, wait, &["UPDATE_COMPLETE"]);
        let r = o.run_as(c, "demo", "coe cluster show okm-c -f json");
        if let Some(cl) = json_out(c, &r)
            && num(&cl["node_count"]) != Some(3.0)
        {
            c.error(format!("node_count after resize: {}", cl["node_count"]));
        }
    });
    suite.step("cluster resize of an unknown cluster is 404", |c| {
        let r = o.run_as(c, "demo", "coe cluster resize nope 3");
        fails(c, &r, &["Cluster nope could not be found (HTTP 404)"]);
    });
    suite.step("cluster resize of an unknown nodegroup is 404", |c| {
        let r = o.run_as(c, "demo", "coe cluster resize okm-c 2 --nodegroup nope");
        fails(c, &r, &["(HTTP 404)"]);
    });
    suite.step("cluster upgrade", |c| {
        let r = o.run_as(c, "demo", "coe cluster upgrade okm-c okm-ct2");
        ok(
            c,
            &r,
            &["Request to upgrade cluster okm-c has been accepted."],
        );
        s.wait_status(c, &demo_token(), cluster_uuid, wait, &["UPDATE_COMPLETE"]);
        let r = o.run_as(c, "demo", "coe cluster show okm-c -f json");
        if let Some(cl) = json_out(c, &r)
            && cl["cluster_template_id"] == ct_uuid.as_str()
        {
            c.error(format!(
                "cluster_template_id unchanged after upgrade: {}",
                cl["cluster_template_id"]
            ));
        }
    });
    suite.step("cluster upgrade to an unknown template is 404", |c| {
        let r = o.run_as(c, "demo", "coe cluster upgrade okm-c nope");
        fails(
            c,
            &r,
            &["ClusterTemplate nope could not be found (HTTP 404)"],
        );
    });

    // ------------------------------------------- config and certificates
    let cfg_dir = o.home.path().join("kube");
    let cfg = cfg_dir.display().to_string();
    suite.step("cluster config writes a kubeconfig", |c| {
        std::fs::create_dir_all(&cfg_dir).unwrap_or_else(|e| c.fatal(e.to_string()));
        let r = o.run_as(c, "demo", &format!("coe cluster config okm-c --dir {cfg}"));
        let export = format!("export KUBECONFIG={}", cfg_dir.join("config").display());
        ok(c, &r, &[&export]);
        let b = std::fs::read_to_string(cfg_dir.join("config"))
            .unwrap_or_else(|e| c.fatal(format!("kubeconfig: {e}\n{r}")));
        for w in [
            "server: https://",
            "certificate-authority-data: ",
            "client-certificate-data: ",
            "client-key-data: ",
            "name: okm-c",
            "user: admin",
        ] {
            if !b.contains(w) {
                c.error(format!("kubeconfig lacks {w:?}:\n{b}"));
            }
        }
    });
    suite.step("cluster config refuses to overwrite without --force", |c| {
        let r = o.run_as(c, "demo", &format!("coe cluster config okm-c --dir {cfg}"));
        fails(c, &r, &["exists, aborting"]);
        let r = o.run_as(
            c,
            "demo",
            &format!("coe cluster config okm-c --dir {cfg} --force --output-certs"),
        );
        ok(c, &r, &["export KUBECONFIG="]);
        for f in ["ca.pem", "cert.pem", "key.pem"] {
            if let Err(e) = std::fs::metadata(cfg_dir.join(f)) {
                c.error(format!("--output-certs: {f}: {e}"));
            }
        }
    });
    suite.step("ca show", |c| {
        let r = o.run_as(c, "demo", "coe ca show okm-c");
        ok(
            c,
            &r,
            &["-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"],
        );
    });
    suite.step("ca sign", |c| {
        let csr = o.home.path().join("client.csr");
        write_csr(c, &csr);
        let csr = csr.display().to_string();
        let r = o.run_as(c, "demo", &format!("coe ca sign okm-c {csr}"));
        ok(c, &r, &["-----BEGIN CERTIFICATE-----"]);
    });
    suite.step("ca show of an unknown cluster is 404", |c| {
        let r = o.run_as(c, "demo", "coe ca show nope");
        fails(c, &r, &["Cluster nope could not be found (HTTP 404)"]);
    });
    suite.step("ca rotate", |c| {
        let r = o.run_as(c, "demo", "coe ca rotate okm-c");
        let want = format!(
            "Request to rotate the CA certificate for cluster {cluster_uuid} has been accepted."
        );
        ok(c, &r, &[&want]);
        s.wait_status(c, &demo_token(), cluster_uuid, wait, &["UPDATE_COMPLETE"]);
    });
    suite.step("credential rotate", |c| {
        let r = o.run_as(c, "demo", "coe credential rotate okm-c");
        let want = format!("Request to rotate credentials for cluster {cluster_uuid} accepted.");
        ok(c, &r, &[&want]);
        s.wait_status(
            c,
            &demo_token(),
            cluster_uuid,
            wait,
            &["UPDATE_COMPLETE", "CREATE_COMPLETE"],
        );
    });

    // ----------------------------------------------------- nodegroups
    suite.step("nodegroup create", |c| {
        let r = o.run_as(
            c,
            "demo",
            &format!(
                "coe nodegroup create okm-c ng1 --node-count 1 --min-nodes 1 --max-nodes \
                 3 --flavor {FLAVOR_MEDIUM} --labels a=b --node-labels tier=web \
                 --node-taints dedicated=okm:NoSchedule"
            ),
        );
        ok(c, &r, &["Request to create nodegroup "]);
        s.wait_status(c, &demo_token(), cluster_uuid, wait, &["UPDATE_COMPLETE"]);
    });
    suite.step("nodegroup create with a duplicate name is 409", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup create okm-c ng1");
        fails(c, &r, &["(HTTP 409)"]);
    });
    suite.step("nodegroup list", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup list okm-c -f json");
        if let Some(list) = json_out(c, &r) {
            let l = rows(&list);
            let masters = l.iter().filter(|r| r["role"] == "master").count();
            let workers = l.iter().filter(|r| r["role"] == "worker").count();
            if l.len() != 3 || masters != 1 || workers != 2 {
                c.error(format!("rows {list}"));
            }
        }
    });
    suite.step("nodegroup list --role master", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup list okm-c --role master -f json");
        if let Some(list) = json_out(c, &r) {
            let l = rows(&list);
            if l.len() != 1 || l[0]["role"] != "master" {
                c.error(format!("rows {list}"));
            }
        }
    });
    suite.step("nodegroup show", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup show okm-c ng1 -f json");
        if let Some(ng) = json_out(c, &r) {
            if ng["name"] != "ng1"
                || ng["flavor_id"] != FLAVOR_MEDIUM
                || num(&ng["min_node_count"]) != Some(1.0)
                || num(&ng["max_node_count"]) != Some(3.0)
            {
                c.error(format!("show: {ng}"));
            }
            if ng["node_labels"]["tier"] != "web" {
                c.error(format!("node_labels {}", ng["node_labels"]));
            }
        }
    });
    suite.step("nodegroup show unknown is 404", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup show okm-c nope");
        fails(c, &r, &["Nodegroup nope could not be found (HTTP 404)"]);
    });
    suite.step(
        "nodegroup update (Python-literal node_labels and node_taints)",
        |c| {
            let r = o.run_as(
                c,
                "demo",
                "coe nodegroup update okm-c ng1 --min-nodes 0 --max-nodes 5 --node-labels \
             tier=db --node-taints gpu=:NoExecute",
            );
            ok(
                c,
                &r,
                &["Request to update nodegroup ng1 has been accepted."],
            );
            s.wait_status(c, &demo_token(), cluster_uuid, wait, &["UPDATE_COMPLETE"]);
            let r = o.run_as(c, "demo", "coe nodegroup show okm-c ng1 -f json");
            if let Some(ng) = json_out(c, &r) {
                if num(&ng["min_node_count"]) != Some(0.0)
                    || num(&ng["max_node_count"]) != Some(5.0)
                {
                    c.error(format!("counts: {ng}"));
                }
                if ng["node_labels"]["tier"] != "db" {
                    c.error(format!("node_labels {}", ng["node_labels"]));
                }
                // Go's encoding/json writes object keys sorted.
                let taints = serde_json::to_string(&sorted(&ng["node_taints"])).unwrap_or_default();
                if taints != r#"[{"effect":"NoExecute","key":"gpu","value":""}]"# {
                    c.error(format!("node_taints {taints}"));
                }
            }
        },
    );
    suite.step("nodegroup update max below min is 409", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup update okm-c ng1 --min-nodes 4 --max-nodes 2");
        fails(c, &r, &["max_node_count for ng1 is invalid (min_node_count (4) should be less or equal to max_node_count (2)) (HTTP 409)"]);
    });
    suite.step("cluster resize of a named nodegroup", |c| {
        let r = o.run_as(c, "demo", "coe cluster resize okm-c 2 --nodegroup ng1");
        ok(
            c,
            &r,
            &["Request to resize cluster okm-c has been accepted."],
        );
        s.wait_status(c, &demo_token(), cluster_uuid, wait, &["UPDATE_COMPLETE"]);
    });
    suite.step("nodegroup delete", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup delete okm-c ng1");
        ok(
            c,
            &r,
            &["Request to delete nodegroup ng1 has been accepted."],
        );
        let deadline = std::time::Instant::now() + wait;
        let tok = demo_token();
        loop {
            let (code, _) = s
                .api(
                    &tok,
                    "GET",
                    &format!("/v1/clusters/{cluster_uuid}/nodegroups/ng1"),
                    "latest",
                    None,
                )
                .unwrap_or_else(|e| c.fatal(e));
            if code == 404 {
                break;
            }
            if std::time::Instant::now() > deadline {
                c.fatal(format!("nodegroup still there (HTTP {code})"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    suite.step("nodegroup delete of a default nodegroup is 400", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup delete okm-c default-worker");
        fails(c, &r, &["(HTTP 400)"]);
    });

    // ----------------------------------------------- quotas, stats, services
    suite.step("quotas create", |c| {
        let r = o.run_as(
            c,
            "admin",
            &format!("coe quotas create --project-id {demo_id} --resource Cluster --hard-limit 10"),
        );
        ok(c, &r, &[&demo_id, "hard_limit", "10"]);
    });
    suite.step("quotas create twice reports the conflict", |c| {
        let r = o.run_as(
            c,
            "admin",
            &format!("coe quotas create --project-id {demo_id} --resource Cluster --hard-limit 10"),
        );
        let want = format!("Create quota for project_id {demo_id} resource Cluster failed:");
        ok(c, &r, &[&want, "(HTTP 409)"]);
    });
    suite.step("quotas create as a member reports 403", |c| {
        let r = o.run_as(
            c,
            "demo",
            &format!("coe quotas create --project-id {demo_id} --resource Cluster --hard-limit 10"),
        );
        ok(c, &r, &["failed:", "(HTTP 403)"]);
    });
    suite.step("quotas update", |c| {
        let r = o.run_as(
            c,
            "admin",
            &format!("coe quotas update --project-id {demo_id} --resource Cluster --hard-limit 20"),
        );
        ok(c, &r, &["20"]);
    });
    suite.step("quotas show", |c| {
        let r = o.run_as(
            c,
            "admin",
            &format!("coe quotas show --project-id {demo_id} --resource Cluster"),
        );
        ok(c, &r, &["20", &demo_id]);
    });
    suite.step("quotas list", |c| {
        // `quotas list` has no -f option: a table. Without --all-tenants an
        // admin sees only the quotas of its own project.
        let r = o.run_as(c, "admin", "coe quotas list --all-tenants");
        ok(c, &r, &[&demo_id, "Cluster", "20"]);
        let r = o.run_as(c, "admin", "coe quotas list");
        if r.code != 0 || r.stdout.contains(demo_id.as_str()) {
            c.error(format!("without --all-tenants:\n{r}"));
        }
    });
    suite.step("quotas delete", |c| {
        let r = o.run_as(
            c,
            "admin",
            &format!(
                "coe quotas delete --project-id {demo_id} --resource Cluster"
            ),
        );
        let want = format!(
            "Request to delete quota for project id {demo_id} and resource Cluster has been accepted."
        );
        ok(c, &r, &[&want]);
        let r = o.run_as(
            c,
            "admin",
            &format!(
                "coe quotas delete --project-id {demo_id} --resource Cluster"
            ),
        );
        ok(c, &r, &["Quota delete failed", "(HTTP 404)"]);
    });
    suite.step("stats list", |c| {
        let r = o.run_as(c, "demo", &format!("coe stats list {demo_id}"));
        ok(c, &r, &["clusters", "nodes"]);
    });
    suite.step("service list as admin", |c| {
        let r = o.run_as(c, "admin", "coe service list -f json");
        if let Some(list) = json_out(c, &r) {
            let l = rows(&list);
            if l.len() != 1 || l[0]["binary"] != "magnum-conductor" || l[0]["state"] != "up" {
                c.error(format!("rows {list}"));
            }
        }
    });
    suite.step("service list as a member is 403", |c| {
        let r = o.run_as(c, "demo", "coe service list");
        fails(
            c,
            &r,
            &["Policy doesn't allow magnum-service:get_all to be performed (HTTP 403)"],
        );
    });

    // --------------------------------------------------------- auth types
    suite.step("admin_token auth with --os-endpoint", |c| {
        let tok = demo_token();
        let r = o.with_env(
            c,
            &[],
            &format!(
                "--os-auth-type admin_token --os-token {tok} --os-endpoint {endpoint} coe \
                 cluster list -f json"
            ),
        );
        if let Some(list) = json_out(c, &r)
            && rows(&list).len() != 1
        {
            c.error(format!("rows {list}"));
        }
    });
    suite.step("an endpoint without /v1 sends unprefixed paths", |c| {
        let tok = demo_token();
        let mark = s.rec.mark();
        let r = o.with_env(
            c,
            &[],
            &format!(
                "--os-auth-type admin_token --os-token {tok} --os-endpoint {url} coe \
                 cluster show okm-c"
            ),
        );
        ok(c, &r, &[cluster_uuid]);
        let got = s.rec.since(mark);
        if !got.contains("GET /clusters/okm-c") {
            c.error(format!(
                "the client did not send the unprefixed path:\n{got}"
            ));
        }
    });
    suite.step("token auth through the catalog", |c| {
        let tok = demo_token();
        let env = [
            "OS_AUTH_TYPE=v3token".to_owned(),
            format!("OS_AUTH_URL={}", s.identity().url),
            format!("OS_TOKEN={tok}"),
            "OS_PROJECT_NAME=demo".to_owned(),
            "OS_PROJECT_DOMAIN_NAME=Default".to_owned(),
            format!("OS_REGION_NAME={REGION}"),
        ];
        let r = o.with_env(c, &env, "coe cluster template list");
        ok(c, &r, &["okm-ct"]);
    });
    suite.step("none auth is refused with 401", |c| {
        let r = o.with_env(
            c,
            &[],
            &format!("--os-auth-type none --os-endpoint {endpoint} coe cluster list"),
        );
        fails(c, &r, &["(HTTP 401)"]);
    });
    suite.step("a revoked-looking token is refused with 401", |c| {
        let r = o.with_env(
            c,
            &[],
            &format!(
                "--os-auth-type admin_token --os-token gAAAAAnotatoken --os-endpoint \
                 {endpoint} coe cluster template list"
            ),
        );
        fails(c, &r, &["(HTTP 401)"]);
    });

    // ------------------------------------------------------- deletions
    suite.step("cluster template delete in use is 400", |c| {
        let r = o.run_as(c, "demo", "coe cluster template delete okm-ct2");
        ok(
            c,
            &r,
            &["Delete for cluster template okm-ct2 failed:", "(HTTP 400)"],
        );
    });
    suite.step("cluster delete", |c| {
        let r = o.run_as(c, "demo", "coe cluster delete okm-c");
        ok(
            c,
            &r,
            &["Request to delete cluster okm-c has been accepted."],
        );
        s.wait_status(c, &demo_token(), cluster_uuid, wait, &["404"]);
    });
    suite.step("cluster delete unknown is 404", |c| {
        let r = o.run_as(c, "demo", "coe cluster delete nope");
        fails(c, &r, &["Cluster nope could not be found (HTTP 404)"]);
    });
    suite.step("cluster template delete", |c| {
        let r = o.run_as(c, "demo", "coe cluster template delete okm-ct okm-ct2");
        ok(
            c,
            &r,
            &[
                "Request to delete cluster template okm-ct has been accepted.",
                "Request to delete cluster template okm-ct2 has been accepted.",
            ],
        );
    });
    suite.step("cluster template delete unknown reports 404", |c| {
        let r = o.run_as(c, "demo", "coe cluster template delete nope");
        ok(c, &r, &["Delete for cluster template nope failed: ClusterTemplate nope could not be found (HTTP 404)"]);
    });
}

/// `v` with the keys of every object sorted, as Go's encoding/json writes
/// maps.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let s: BTreeMap<&String, Value> = m.iter().map(|(k, v)| (k, sorted(v))).collect();
            serde_json::to_value(s).unwrap_or(Value::Null)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
