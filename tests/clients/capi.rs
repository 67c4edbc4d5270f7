//! The Cluster API driver, embedded in the binary, through `openstack coe`
//! and Keystone: the stack of the other suites without the fake driver,
//! with a kube-apiserver holding the Cluster API and CAPO CRDs as its
//! management cluster and the simulator of `tests/e2e/capi_sim.rs` playing
//! the controllers. A cluster goes create → objects → simulated progress →
//! `CREATE_COMPLETE` → resize with `nodes_to_remove` → upgrade → nodegroup
//! create and delete → delete with its clean-up (the application
//! credential gone from Keystone, the server groups from the Nova double,
//! the load balancer from the Octavia double).
//!
//! Needs, besides the other suites' Keystone and CLI,
//! `TEST_ASSET_KUBE_APISERVER`, `TEST_ASSET_ETCD` and `TEST_ASSET_CAPI_CRDS`
//! (`scripts/ci/kube-apiserver.sh`).

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, ListParams};
use serde_json::{Value, json};

use crate::capi_sim::{Kind, Sim, server_id};
use crate::harness::{
    Check, EXT_NET_NAME, FLAVOR_SMALL, IMAGE_NAME, Stack, StackOptions, Suite, blocking_client,
    exclusive, keystone, logged_notifications, need_env, selected,
};
use crate::kube::{CapiApiServer, capi_api_server};
use crate::osc::{Osc, fails, json_out, ok};

const NS: &str = "magnum-system";
/// `[capi]/lease_duration` of the stack.
const LEASE_SECONDS: u64 = 4;
/// The driver's `update_grace` in the stack.
const UPDATE_GRACE_SECONDS: u64 = 6;

/// How many times a reconciler of the stack took the Lease.
fn leases_taken(s: &Stack) -> usize {
    s.output().matches("reconciler Lease taken").count()
}

#[test]
fn cluster_api_driver_lifecycle() {
    with_stack("TestClusterAPILifecycle", lifecycle);
}

#[test]
fn cluster_api_driver_adopts_magnum_cluster_api_clusters() {
    with_stack("TestClusterAPIAdoption", adoption);
}

#[test]
fn cluster_api_driver_idle_clusters_cost_nothing() {
    with_stack("TestClusterAPIIdle", idle);
}

/// What a suite's steps reach.
type Steps = fn(&Stack, &Osc<'_>, &Kube<'_>, &Sim, &mut Suite<'_>);

/// Runs `steps` as the suite `key` on a stack of its own: Keystone, the
/// OpenStack double, the binary with the Cluster API driver, and a
/// management cluster whose controllers the simulator plays.
fn with_stack(key: &'static str, steps: Steps) {
    if !selected() {
        return;
    }
    let Some(cli) = need_env("OPENKEEL_TEST_OPENSTACK_CLI") else {
        return;
    };
    let Some(ks) = keystone() else {
        return;
    };
    let _one = exclusive();
    // The management cluster, on a runtime of its own (the simulator's
    // loop runs there).
    let krt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
    let Some(mgmt) = krt.block_on(capi_api_server()) else {
        return;
    };
    krt.block_on(mgmt.create_namespace(NS));
    let demo = ks.1.projects.get("demo").cloned().unwrap_or_default();
    let opts = StackOptions {
        // A short Lease, so that a standby takes over in seconds; a short
        // grace for a topology that does not reconcile; the notifications
        // in the service's log, where the suites count them.
        conf: format!(
            "[capi]\nkubeconfig = {}\nresync_interval = 1\nlease_duration = {LEASE_SECONDS}\n\
             renew_deadline = 3\nretry_period = 1\n\n[quotas]\nmax_clusters_per_project = 1000\n\n\
             [driver:capi]\noptions = update_grace:{UPDATE_GRACE_SECONDS}\n\n\
             [oslo_messaging_notifications]\ndriver = log\n",
            mgmt.server.kubeconfig_path().display()
        ),
        without_fake: true,
        default_project: Some(demo),
        volume_types: vec!["standard", "ssd"],
        ..StackOptions::default()
    };
    let mut s = Stack::start_with(ks, &opts);
    // A standby reconciler, once the first holds the Lease.
    let deadline = Instant::now() + Duration::from_secs(30);
    while leases_taken(&s) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    s.start_standby_reconciler();
    let sim = Sim::new(mgmt.client.clone(), NS);
    let running = {
        let _in = krt.enter();
        sim.run(Duration::from_millis(200))
    };
    let o = Osc::new(cli, &s);
    let mut suite = Suite::new(key, Some(&s));
    let k = Kube {
        rt: &krt,
        mgmt: &mgmt,
    };
    steps(&s, &o, &k, &sim, &mut suite);
    s.metrics_step(&mut suite, key == "TestClusterAPILifecycle");
    krt.block_on(running.stop());
    let errors = sim.errors();
    if !errors.is_empty() {
        suite.fail(format!("the simulator failed: {errors:?}"));
    }
    suite.finish();
}

/// The management cluster, read from the test.
struct Kube<'a> {
    rt: &'a tokio::runtime::Runtime,
    mgmt: &'a CapiApiServer,
}

impl Kube<'_> {
    fn list(&self, kind: Kind, labels: &str) -> Vec<DynamicObject> {
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.mgmt.client.clone(), NS, &kind.resource());
        self.rt
            .block_on(api.list(&ListParams::default().labels(labels)))
            .map(|l| l.items)
            .unwrap_or_else(|e| panic!("list {kind:?}: {e}"))
    }

    /// The names of the objects the API path `path` lists.
    fn names(&self, path: &str) -> Vec<String> {
        let body = self
            .mgmt
            .server
            .get(path)
            .unwrap_or_else(|| panic!("GET {path}"));
        body["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_owned))
            .collect()
    }
}

fn secrets(k: &Kube<'_>) -> Vec<String> {
    k.names(&format!("/api/v1/namespaces/{NS}/secrets"))
}

/// The uuid in `Request to create cluster <uuid> accepted`.
/// SIGKILLs the reconciler `pid`, which holds the Lease, runs `then`, and
/// answers how long the standby took to take the Lease over.
fn kill_active_reconciler(c: &mut Check, s: &Stack, pid: u32, then: impl FnOnce()) -> Duration {
    let taken = leases_taken(s);
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .is_ok_and(|st| st.success());
    if !killed {
        c.fatal(format!("could not kill reconciler {pid}"));
    }
    let died = Instant::now();
    then();
    until(
        c,
        "the standby takes the Lease",
        Duration::from_secs(60),
        || (leases_taken(s) > taken).then_some(()),
    );
    died.elapsed()
}

fn accepted_uuid(stdout: &str) -> String {
    stdout
        .split_whitespace()
        .find(|w| w.len() == 36 && w.matches('-').count() == 4)
        .unwrap_or_default()
        .to_owned()
}

/// GETs `url` with `token`; the status and the JSON body.
fn get(url: &str, token: &str) -> (u16, Value) {
    let resp = blocking_client(Duration::from_secs(30))
        .get(url)
        .header("X-Auth-Token", token)
        .send()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = resp.status().as_u16();
    (status, resp.json().unwrap_or(Value::Null))
}

/// The names of the caller's server groups in the Nova double.
fn server_groups(s: &Stack, token: &str) -> Vec<String> {
    let (code, body) = get(&format!("{}/os-server-groups", s.cloud["compute"]), token);
    assert_eq!(code, 200, "{body}");
    body["server_groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["name"].as_str().map(str::to_owned))
        .collect()
}

/// The names of the application credentials of `user` in Keystone.
fn app_credentials(s: &Stack, token: &str, user_id: &str) -> Vec<String> {
    let url = format!(
        "{}/users/{user_id}/application_credentials",
        s.identity().url.trim_end_matches('/')
    );
    let (code, body) = get(&url, token);
    assert_eq!(code, 200, "{body}");
    body["application_credentials"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_owned))
        .collect()
}

/// GETs `path` of the service as `token` at the latest microversion.
fn api_get(s: &Stack, token: &str, path: &str) -> Result<(u16, Value), String> {
    s.api(token, "GET", path, "latest", None)
}

/// Polls `f` every 200 ms until it answers `Some`, for at most `limit`.
fn until<T>(c: &mut Check, what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() > deadline {
            c.fatal(format!("{what}: not within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn lifecycle(s: &Stack, o: &Osc<'_>, k: &Kube<'_>, sim: &Sim, suite: &mut Suite<'_>) {
    let token = || s.token("demo", "demo");
    let wait = Duration::from_secs(90);
    let mut uuid = String::new();
    let mut stack = String::new();
    let mut user_id = String::new();

    suite.step(
        "a template of an ubuntu image stores the Cluster API driver",
        |c| {
            for (name, tag) in [
                ("capi-ct", "v1.31.1"),
                ("capi-ct2", "v1.32.0"),
                ("capi-ct4", "v1.34.0"),
            ] {
                let r = o.run_as(
                    c,
                    "demo",
                    &format!(
                        "coe cluster template create {name} --image {IMAGE_NAME} \
                     --external-network {EXT_NET_NAME} --coe kubernetes --flavor {FLAVOR_SMALL} \
                     --master-flavor {FLAVOR_SMALL} --network-driver calico \
                     --labels kube_tag={tag} -f json"
                    ),
                );
                let Some(ct) = json_out(c, &r) else { return };
                let id = ct["uuid"].as_str().unwrap_or_default();
                let (code, body) = api_get(s, &token(), &format!("/v1/clustertemplates/{id}"))
                    .unwrap_or_else(|e| c.fatal(e));
                if code != 200 || body["driver"] != "k8s_cluster_api" {
                    c.error(format!("{name}: driver {} (HTTP {code})", body["driver"]));
                }
            }
        },
    );

    suite.step(
        "a label the driver cannot use is a 400 and writes nothing",
        |c| {
            let r = o.run_as(
                c,
                "demo",
                "coe cluster create capi-bad --cluster-template capi-ct --labels \
             kube_tag=v1.31.1,calico_ipv4pool=10.0.0.0/99",
            );
            fails(c, &r, &["calico_ipv4pool", "(HTTP 400)"]);
            let r = o.run_as(c, "demo", "coe cluster list -f json");
            if r.stdout.contains("capi-bad") {
                c.error(format!("a refused cluster was written:\n{r}"));
            }
            let r = o.run_as(
                c,
                "demo",
                "coe cluster create capi-bad --cluster-template capi-ct --labels kube_tag=latest",
            );
            fails(c, &r, &["(HTTP 400)"]);
            if !k.list(Kind::Cluster, "").is_empty() {
                c.error("a refused create wrote a Cluster");
            }
        },
    );

    suite.step("cluster create writes the driver's objects", |c| {
        let r = o.run_as(
            c,
            "demo",
            "coe cluster create capi-c --cluster-template capi-ct --node-count 2 --master-count 1",
        );
        ok(c, &r, &["Request to create cluster"]);
        uuid = accepted_uuid(&r.stdout);
        if uuid.is_empty() {
            c.fatal(format!("no uuid:\n{r}"));
        }
        let clusters = until(c, "the Cluster", Duration::from_secs(60), || {
            let l = k.list(Kind::Cluster, &format!("cluster-uuid={uuid}"));
            (!l.is_empty()).then_some(l)
        });
        stack = clusters[0].metadata.name.clone().unwrap_or_default();
        let (_, body) = s
            .api(
                &token(),
                "GET",
                &format!("/v1/clusters/{uuid}"),
                "1.12",
                None,
            )
            .unwrap_or_else(|e| c.fatal(e));
        if body["stack_id"] != stack.as_str() {
            c.error(format!(
                "stack_id {} is not the Cluster {stack}",
                body["stack_id"]
            ));
        }
        if body["status"] != "CREATE_IN_PROGRESS" {
            c.error(format!("status {}", body["status"]));
        }
        let have = secrets(k);
        for suffix in [
            "-cloud-config",
            "-ca",
            "-etcd",
            "-proxy",
            "-sa",
            "-cloud-provider",
        ] {
            if !have.contains(&format!("{stack}{suffix}")) {
                c.error(format!("no Secret {stack}{suffix} in {have:?}"));
            }
        }
        let sets = k.names(&format!(
            "/apis/addons.cluster.x-k8s.io/v1beta2/namespaces/{NS}/clusterresourcesets"
        ));
        for name in [uuid.clone(), format!("{stack}-cloud-provider")] {
            if !sets.contains(&name) {
                c.error(format!("no ClusterResourceSet {name} in {sets:?}"));
            }
        }
        let classes = k.names(&format!(
            "/apis/cluster.x-k8s.io/v1beta2/namespaces/{NS}/clusterclasses"
        ));
        if classes != ["magnum-v0.38.2-openkeel.1"] {
            c.error(format!("classes {classes:?}"));
        }
        let groups = server_groups(s, &token());
        for name in [stack.clone(), format!("{stack}-default-worker")] {
            if !groups.contains(&name) {
                c.error(format!("no server group {name} in {groups:?}"));
            }
        }
        user_id = body["user_id"].as_str().unwrap_or_default().to_owned();
        let creds = app_credentials(s, &token(), &user_id);
        if !creds
            .iter()
            .any(|n| n.starts_with(&format!("magnum-{uuid}-")))
        {
            c.error(format!(
                "no application credential of the cluster in {creds:?}"
            ));
        }
    });
    if stack.is_empty() {
        suite.fail("no cluster was created");
        return;
    }
    let uuid = uuid.as_str();
    let stack = stack.as_str();

    // A cluster whose Cluster API cluster never becomes ready: checked at
    // the end, past its create_timeout of one minute.
    let mut stuck = String::new();
    suite.step("a cluster with a create timeout of one minute", |c| {
        let r = o.run_as(
            c,
            "demo",
            "coe cluster create capi-stuck --cluster-template capi-ct --node-count 1 --timeout 1",
        );
        ok(c, &r, &["Request to create cluster"]);
        stuck = accepted_uuid(&r.stdout);
        if stuck.is_empty() {
            c.error(format!("no uuid:\n{r}"));
        }
    });
    let stuck_since = Instant::now();

    suite.step("simulated progress reaches CREATE_COMPLETE", |c| {
        sim.mark_ready(stack);
        s.wait_status(c, &token(), uuid, wait, &["CREATE_COMPLETE"]);
        let (_, body) =
            api_get(s, &token(), &format!("/v1/clusters/{uuid}")).unwrap_or_else(|e| c.fatal(e));
        if body["api_address"] != "https://203.0.113.10:6443" {
            c.error(format!("api_address {}", body["api_address"]));
        }
        if body["health_status"] != "HEALTHY" {
            c.error(format!("health {}", body["health_status"]));
        }
        let (_, ngs) = api_get(
            s,
            &token(),
            &format!("/v1/clusters/{uuid}/nodegroups/default-worker"),
        )
        .unwrap_or_else(|e| c.fatal(e));
        let addresses = ngs["node_addresses"].as_array().map_or(0, Vec::len);
        if ngs["status"] != "CREATE_COMPLETE" || addresses != 2 {
            c.error(format!("default-worker: {ngs}"));
        }
        // A change of the Cluster API objects reaches the row by watch.
        let health = || {
            api_get(s, &token(), &format!("/v1/clusters/{uuid}"))
                .map(|(_, b)| b["health_status"].as_str().unwrap_or_default().to_owned())
                .unwrap_or_default()
        };
        for (mark, want) in [(true, "UNHEALTHY"), (false, "HEALTHY")] {
            if mark {
                sim.mark_failed(stack, "Quota exceeded for instances");
            } else {
                sim.mark_ready(stack);
            }
            let changed = Instant::now();
            until(c, want, Duration::from_secs(30), || {
                (health() == want).then_some(())
            });
            let took = changed.elapsed();
            eprintln!(
                "cluster api status change to the row ({want}): {} ms",
                took.as_millis()
            );
            // The simulator writes at its next pass (200 ms), then the
            // watch carries the change.
            if took > Duration::from_secs(2) {
                c.error(format!("{want} reached the row after {took:?}"));
            }
        }
    });

    suite.step("resize with nodes_to_remove removes that server", |c| {
        let machines = k.list(
            Kind::Machine,
            &format!(
                "cluster.x-k8s.io/cluster-name={stack},topology.cluster.x-k8s.io/deployment-name=default-worker"
            ),
        );
        let Some(server) = machines.iter().rev().find_map(|m| server_id(m).map(str::to_owned)) else {
            c.fatal(format!("no worker Machine with a server: {} Machines", machines.len()));
        };
        let r = o.run_as(
            c,
            "demo",
            &format!("coe cluster resize capi-c 1 --nodes-to-remove {server}"),
        );
        ok(c, &r, &["Request to resize cluster"]);
        s.wait_status(c, &token(), uuid, wait, &["UPDATE_COMPLETE"]);
        let left = k.list(
            Kind::Machine,
            &format!(
                "cluster.x-k8s.io/cluster-name={stack},topology.cluster.x-k8s.io/deployment-name=default-worker"
            ),
        );
        let servers: Vec<&str> = left.iter().filter_map(server_id).collect();
        if servers.len() != 1 || servers.contains(&server.as_str()) {
            c.error(format!("removed {server}, left {servers:?}"));
        }
        let (_, body) = api_get(s, &token(), &format!("/v1/clusters/{uuid}"))
            .unwrap_or_else(|e| c.fatal(e));
        if body["node_count"] != 1 {
            c.error(format!("node_count {}", body["node_count"]));
        }
    });

    suite.step(
        "an upgrade two minor versions up is refused with a 400",
        |c| {
            let r = o.run_as(c, "demo", "coe cluster upgrade capi-c capi-ct4");
            fails(c, &r, &["(HTTP 400)"]);
            let (_, body) = api_get(s, &token(), &format!("/v1/clusters/{uuid}"))
                .unwrap_or_else(|e| c.fatal(e));
            if body["status"] != "UPDATE_COMPLETE" {
                c.error(format!(
                    "a refused upgrade moved the cluster to {}",
                    body["status"]
                ));
            }
        },
    );

    suite.step(
        "an upgrade whose topology does not reconcile is UPDATE_FAILED with the reason",
        |c| {
            let refusal = "admission webhook denied the request: test refusal";
            sim.mark_topology_failed(stack, refusal);
            let r = o.run_as(
                c,
                "demo",
                "coe cluster upgrade capi-c capi-ct2 --max-batch-size 2",
            );
            ok(c, &r, &["Request to upgrade cluster"]);
            let body = until(c, "UPDATE_FAILED", Duration::from_secs(60), || {
                let (_, b) = api_get(s, &token(), &format!("/v1/clusters/{uuid}")).ok()?;
                (b["status"] != "UPDATE_IN_PROGRESS").then_some(b)
            });
            let reason = body["status_reason"].as_str().unwrap_or_default();
            if body["status"] != "UPDATE_FAILED"
                || !reason.contains("ReconcileFailed")
                || !reason.contains(refusal)
            {
                c.error(format!("{}: {reason:?}", body["status"]));
            }
            // Nothing of the new version reached a Machine.
            let machines = k.list(
                Kind::Machine,
                &format!("cluster.x-k8s.io/cluster-name={stack}"),
            );
            if machines
                .iter()
                .any(|m| m.data["spec"]["version"] == "v1.32.0")
            {
                c.error("a Machine of the refused version");
            }
        },
    );

    suite.step("the upgrade retried from UPDATE_FAILED completes", |c| {
        // The retry is applied while the Cluster still reports the failure
        // of the same spec, older than the grace (its cause fixed since,
        // the controller not yet back): the retry gets its own grace
        // rather than failing on that old condition at once.
        sim.pause(true);
        let r = o.run_as(c, "demo", "coe cluster upgrade capi-c capi-ct2 --max-batch-size 2");
        ok(c, &r, &["Request to upgrade cluster"]);
        let deadline = Instant::now() + Duration::from_secs(UPDATE_GRACE_SECONDS - 2);
        while Instant::now() < deadline {
            let (_, body) = api_get(s, &token(), &format!("/v1/clusters/{uuid}"))
                .unwrap_or_else(|e| c.fatal(e));
            if body["status"] != "UPDATE_IN_PROGRESS" {
                c.error(format!(
                    "the retry is {} within its grace: {}",
                    body["status"], body["status_reason"]
                ));
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        sim.mark_ready(stack);
        sim.pause(false);
        s.wait_status(c, &token(), uuid, Duration::from_secs(120), &["UPDATE_COMPLETE"]);
        let (_, body) = api_get(s, &token(), &format!("/v1/clusters/{uuid}"))
            .unwrap_or_else(|e| c.fatal(e));
        if body["coe_version"] != "v1.32.0" {
            c.error(format!("coe_version {}", body["coe_version"]));
        }
        let r = o.run_as(c, "demo", "coe cluster template show capi-ct2 -f value -c uuid");
        if body["cluster_template_id"] != r.stdout.trim() {
            c.error(format!("template {} after the upgrade to capi-ct2", body["cluster_template_id"]));
        }
        let machines = k.list(Kind::Machine, &format!("cluster.x-k8s.io/cluster-name={stack}"));
        let old: Vec<&str> = machines
            .iter()
            .filter_map(|m| m.data["spec"]["version"].as_str())
            .filter(|v| *v != "v1.32.0")
            .collect();
        if machines.is_empty() || !old.is_empty() {
            c.error(format!("{} Machines, of other versions: {old:?}", machines.len()));
        }
        let cluster = &k.list(Kind::Cluster, &format!("cluster-uuid={uuid}"))[0];
        let topology = &cluster.data["spec"]["topology"];
        if topology["version"] != "v1.32.0" {
            c.error(format!("topology version {}", topology["version"]));
        }
        let surge = &topology["workers"]["machineDeployments"][0]["rollout"]["strategy"]["rollingUpdate"]["maxSurge"];
        if surge != 2 {
            c.error(format!("maxSurge {surge}"));
        }
    });

    suite.step(
        "the standby reconciler takes over when the active one dies mid-operation",
        |c| {
            let pids = s.reconciler_pids();
            if pids.len() != 2 {
                c.fatal(format!(
                    "want an active and a standby reconciler, have {pids:?}"
                ));
            }
            sim.pause(true);
            let logged = s.output().len();
            let r = o.run_as(c, "demo", "coe cluster resize capi-c 2");
            ok(c, &r, &["Request to resize cluster"]);
            // The first reconciler took the Lease: it dies without releasing
            // it.
            let took = kill_active_reconciler(c, s, pids[0], || sim.pause(false));
            eprintln!("cluster api reconciler takeover: {} ms", took.as_millis());
            if took > Duration::from_secs(LEASE_SECONDS + 5) {
                c.error(format!("the standby took over after {took:?}"));
            }
            s.wait_status(c, &token(), uuid, wait, &["UPDATE_COMPLETE"]);
            let (_, body) = api_get(s, &token(), &format!("/v1/clusters/{uuid}"))
                .unwrap_or_else(|e| c.fatal(e));
            if body["node_count"] != 2 {
                c.error(format!("node_count {}", body["node_count"]));
            }
            // The transition, once: the API's pending and one success,
            // however many reconcilers saw it (a second application would
            // show within a resync).
            std::thread::sleep(Duration::from_secs(2));
            let events: Vec<String> = logged_notifications(&s.output()[logged..])
                .into_iter()
                .filter(|n| n.cluster == uuid)
                .map(|n| format!("{} {}", n.event_type, n.outcome))
                .collect();
            if events
                != [
                    "magnum.cluster.update pending",
                    "magnum.cluster.update success",
                ]
            {
                c.error(format!("the cluster's notifications: {events:?}"));
            }
        },
    );

    suite.step("nodegroup create", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup create capi-c ng1 --node-count 1");
        ok(c, &r, &["Request to create nodegroup"]);
        until(c, "ng1 CREATE_COMPLETE", wait, || {
            let (_, ng) =
                api_get(s, &token(), &format!("/v1/clusters/{uuid}/nodegroups/ng1")).ok()?;
            (ng["status"] == "CREATE_COMPLETE").then_some(())
        });
        if !server_groups(s, &token()).contains(&format!("{stack}-ng1")) {
            c.error("no server group of ng1");
        }
    });

    suite.step("nodegroup delete takes its server group", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup delete capi-c ng1");
        ok(c, &r, &["Request to delete nodegroup"]);
        until(c, "ng1 gone", wait, || {
            let (code, _) =
                api_get(s, &token(), &format!("/v1/clusters/{uuid}/nodegroups/ng1")).ok()?;
            (code == 404).then_some(())
        });
        until(
            c,
            "the server group of ng1 gone",
            Duration::from_secs(30),
            || (!server_groups(s, &token()).contains(&format!("{stack}-ng1"))).then_some(()),
        );
    });

    suite.step("an autoscaled cluster with the other options is accepted by the API server", |c| {
        let labels = "kube_tag=v1.31.1,auto_scaling_enabled=true,min_node_count=1,max_node_count=3,\
                      boot_volume_size=20,boot_volume_type=ssd,etcd_volume_size=10,availability_zone=nova,\
                      container_infra_prefix=registry.example.com/k8s,api_server_cert_sans=*.example.com,\
                      audit_log_enabled=true,oidc_issuer_url=https://idp.example.com,oidc_client_id=k8s,\
                      keystone_auth_enabled=false,master_lb_floating_ip_enabled=true,\
                      server_group_policies=anti-affinity";
        let r = o.run_as(
            c,
            "demo",
            &format!(
                "coe cluster create capi-x --cluster-template capi-ct --node-count 2 --master-count 3 \
                 --master-lb-enabled --labels {labels}"
            ),
        );
        ok(c, &r, &["Request to create cluster"]);
        let x = accepted_uuid(&r.stdout);
        let clusters = until(c, "the Cluster", Duration::from_secs(60), || {
            let l = k.list(Kind::Cluster, &format!("cluster-uuid={x}"));
            (!l.is_empty()).then_some(l)
        });
        let stack_x = clusters[0].metadata.name.clone().unwrap_or_default();
        let deployments = k.names(&format!("/apis/apps/v1/namespaces/{NS}/deployments"));
        if !deployments.contains(&format!("{stack_x}-autoscaler")) {
            c.error(format!("no autoscaler Deployment in {deployments:?}"));
        }
        let md = &clusters[0].data["spec"]["topology"]["workers"]["machineDeployments"][0];
        let annotations = md["metadata"]["annotations"].to_string();
        for key in [
            "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size",
            "capacity.cluster-autoscaler.kubernetes.io/memory",
        ] {
            if !annotations.contains(key) {
                c.error(format!("no {key} in {annotations}"));
            }
        }
        // A new autoscaled group starts at its node count (within the
        // bounds); the autoscaler owns the size afterwards.
        if md["replicas"] != 2 {
            c.error(format!("a new autoscaled group has replicas {}", md["replicas"]));
        }
        let r = o.run_as(c, "demo", &format!("coe cluster delete {x}"));
        ok(c, &r, &["Request to delete cluster"]);
        s.wait_status(c, &token(), &x, Duration::from_secs(120), &["404"]);
        let deployments = k.names(&format!("/apis/apps/v1/namespaces/{NS}/deployments"));
        if deployments.contains(&format!("{stack_x}-autoscaler")) {
            c.error("the autoscaler is left");
        }
    });

    suite.step(
        "a cluster stuck past its create_timeout is CREATE_FAILED with what blocks it",
        |c| {
            let left = Duration::from_secs(75).saturating_sub(stuck_since.elapsed());
            s.wait_status(
                c,
                &token(),
                &stuck,
                left + Duration::from_secs(30),
                &["CREATE_FAILED"],
            );
            let (_, body) = api_get(s, &token(), &format!("/v1/clusters/{stuck}"))
                .unwrap_or_else(|e| c.fatal(e));
            let reason = body["status_reason"].as_str().unwrap_or_default();
            if body["status"] != "CREATE_FAILED"
                || !reason.starts_with("Timed out waiting for the cluster: CAPI Cluster ")
            {
                c.error(format!("{}: {reason:?}", body["status"]));
            }
            let r = o.run_as(c, "demo", &format!("coe cluster delete {stuck}"));
            ok(c, &r, &["Request to delete cluster"]);
            s.wait_status(c, &token(), &stuck, Duration::from_secs(120), &["404"]);
        },
    );

    suite.step("delete cleans up Keystone, Nova, Octavia and the management cluster", |c| {
        // A load balancer the cloud provider would have made for a Service.
        let lb_url = format!("{}/v2/lbaas/loadbalancers", s.cloud["load-balancer"]);
        let resp = blocking_client(Duration::from_secs(30))
            .post(&lb_url)
            .header("X-Auth-Token", token())
            .json(&json!({"loadbalancer": {
                "name": format!("kube_service_{uuid}_default_web"),
                "description": format!("Kubernetes external service default/web from cluster {uuid}"),
                "vip_subnet_id": crate::harness::SUBNET_ID,
            }}))
            .send()
            .unwrap_or_else(|e| c.fatal(e.to_string()));
        if resp.status().as_u16() != 201 {
            c.fatal(format!("create a load balancer: {}", resp.status()));
        }
        let r = o.run_as(c, "demo", "coe cluster delete capi-c");
        ok(c, &r, &["Request to delete cluster"]);
        s.wait_status(c, &token(), uuid, Duration::from_secs(120), &["404"]);
        let (_, lbs) = get(&lb_url, &token());
        if lbs["loadbalancers"].as_array().is_some_and(|l| !l.is_empty()) {
            c.error(format!("load balancers left: {lbs}"));
        }
        let groups = server_groups(s, &token());
        if groups.iter().any(|g| g.starts_with(stack)) {
            c.error(format!("server groups left: {groups:?}"));
        }
        let creds = app_credentials(s, &token(), &user_id);
        if creds.iter().any(|n| n.starts_with(&format!("magnum-{uuid}-"))) {
            c.error(format!("application credentials left: {creds:?}"));
        }
        let left: Vec<String> = secrets(k).into_iter().filter(|n| n.starts_with(stack)).collect();
        if !left.is_empty() {
            c.error(format!("Secrets left: {left:?}"));
        }
        if !k.list(Kind::Cluster, &format!("cluster-uuid={uuid}")).is_empty() {
            c.error("the Cluster is left");
        }
    });
}

// ------------------------------------------------------------- adoption

/// The class magnum-cluster-api 0.38 wrote, as the test writes it: the
/// driver's class under mcapi's name, without variables that mcapi's does
/// not declare (so that an adopted cluster must get exactly its class's
/// set).
const MCAPI_CLASS: &str = "magnum-v0.38.2";
const MCAPI_MANAGER: &str = "atmosphere-operator";
const NOT_IN_MCAPI: [&str; 3] = [
    "apiServerLoadBalancerAllowedCIDRs",
    "bootVolumeAvailabilityZone",
    "disableAPIServerFloatingIPManaged",
];

impl Kube<'_> {
    fn resource(kind: &str) -> kube::api::ApiResource {
        let (group, version, plural) = match kind {
            "ClusterClass" => ("cluster.x-k8s.io", "v1beta2", "clusterclasses"),
            "Cluster" => ("cluster.x-k8s.io", "v1beta2", "clusters"),
            "Secret" => ("", "v1", "secrets"),
            other => panic!("no API for {other}"),
        };
        let gvk = kube::api::GroupVersionKind::gvk(group, version, kind);
        kube::api::ApiResource::from_gvk_with_plural(&gvk, plural)
    }

    fn api(&self, kind: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.mgmt.client.clone(), NS, &Self::resource(kind))
    }

    fn get(&self, kind: &str, name: &str) -> DynamicObject {
        self.rt
            .block_on(self.api(kind).get(name))
            .unwrap_or_else(|e| panic!("get {kind} {name}: {e}"))
    }

    /// Replaces the object as magnum-cluster-api does (GET, then PUT).
    fn replace_as_mcapi(&self, kind: &str, obj: &DynamicObject) {
        let name = obj.metadata.name.clone().unwrap_or_default();
        let pp = kube::api::PostParams {
            field_manager: Some(MCAPI_MANAGER.to_owned()),
            ..Default::default()
        };
        self.rt
            .block_on(self.api(kind).replace(&name, &pp, obj))
            .unwrap_or_else(|e| panic!("replace {kind} {name}: {e}"));
    }

    fn create_as_mcapi(&self, kind: &str, obj: &DynamicObject) {
        let pp = kube::api::PostParams {
            field_manager: Some(MCAPI_MANAGER.to_owned()),
            ..Default::default()
        };
        self.rt
            .block_on(self.api(kind).create(&pp, obj))
            .unwrap_or_else(|e| panic!("create {kind}: {e}"));
    }
}

/// Writes mcapi's class: the driver's under [`MCAPI_CLASS`], without what
/// mcapi's does not declare.
fn create_mcapi_class(k: &Kube<'_>, c: &mut Check) {
    let ours = k.get("ClusterClass", "magnum-v0.38.2-openkeel.1");
    let mut class = DynamicObject::new(MCAPI_CLASS, &Kube::resource("ClusterClass")).within(NS);
    let mut spec = ours.data["spec"].clone();
    let declared: Vec<Value> = spec["variables"].as_array().cloned().unwrap_or_default();
    for v in NOT_IN_MCAPI {
        if !declared.iter().any(|d| d["name"] == v) {
            c.fatal(format!("the driver's class has no variable {v}"));
        }
    }
    spec["variables"] = Value::Array(
        declared
            .into_iter()
            .filter(|d| !NOT_IN_MCAPI.iter().any(|v| d["name"] == *v))
            .collect(),
    );
    if let Some(patches) = spec["patches"].as_array_mut() {
        patches.retain(|p| !NOT_IN_MCAPI.iter().any(|v| p.to_string().contains(v)));
    }
    class.data = json!({ "spec": spec });
    k.create_as_mcapi("ClusterClass", &class);
}

/// Puts `cluster` on mcapi's class with exactly that class's variables.
fn pin_to_mcapi_class(cluster: &mut DynamicObject) {
    cluster.data["spec"]["topology"]["classRef"] = json!({ "name": MCAPI_CLASS });
    if let Some(vars) = cluster.data["spec"]["topology"]["variables"].as_array_mut() {
        vars.retain(|d| !NOT_IN_MCAPI.iter().any(|v| d["name"] == *v));
    }
}

/// The names of the variables of a Cluster's topology.
fn variable_names(cluster: &DynamicObject) -> Vec<String> {
    cluster.data["spec"]["topology"]["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str().map(str::to_owned))
        .collect()
}

fn class_of(cluster: &DynamicObject) -> String {
    cluster.data["spec"]["topology"]["classRef"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Sets `key: value` on the line of clouds.yaml that holds `key`.
fn set_yaml_value(text: &str, key: &str, value: &str) -> String {
    text.lines()
        .map(|l| match l.find(&format!("{key}:")) {
            Some(i) => format!("{}{key}: {value}", &l[..i]),
            None => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// POSTs `body` to Keystone as `token`.
fn keystone_post(s: &Stack, token: &str, path: &str, body: &Value) -> Value {
    let url = format!("{}{path}", s.identity().url.trim_end_matches('/'));
    let resp = blocking_client(Duration::from_secs(30))
        .post(&url)
        .header("X-Auth-Token", token)
        .json(body)
        .send()
        .unwrap_or_else(|e| panic!("POST {url}: {e}"));
    assert_eq!(resp.status().as_u16(), 201, "POST {url}");
    resp.json().unwrap_or(Value::Null)
}

fn adoption(s: &Stack, o: &Osc<'_>, k: &Kube<'_>, sim: &Sim, suite: &mut Suite<'_>) {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let token = || s.token("demo", "demo");
    let wait = Duration::from_secs(90);
    let mut uuid = String::new();
    let mut stack = String::new();
    let mut user_id = String::new();

    suite.step("a cluster as magnum-cluster-api 0.38 left it", |c| {
        for (name, tag) in [("adopt-ct", "v1.31.1"), ("adopt-ct2", "v1.32.0")] {
            let r = o.run_as(
                c,
                "demo",
                &format!(
                    "coe cluster template create {name} --image {IMAGE_NAME} \
                     --external-network {EXT_NET_NAME} --coe kubernetes --flavor {FLAVOR_SMALL} \
                     --master-flavor {FLAVOR_SMALL} --network-driver calico --labels kube_tag={tag}"
                ),
            );
            ok(c, &r, &["accepted"]);
        }
        let r = o.run_as(
            c,
            "demo",
            "coe cluster create adopt-c --cluster-template adopt-ct --node-count 1",
        );
        ok(c, &r, &["Request to create cluster"]);
        uuid = accepted_uuid(&r.stdout);
        let clusters = until(c, "the Cluster", Duration::from_secs(60), || {
            let l = k.list(Kind::Cluster, &format!("cluster-uuid={uuid}"));
            (!l.is_empty()).then_some(l)
        });
        stack = clusters[0].metadata.name.clone().unwrap_or_default();
        sim.mark_ready(&stack);
        s.wait_status(c, &token(), &uuid, wait, &["CREATE_COMPLETE"]);
        let (_, body) =
            api_get(s, &token(), &format!("/v1/clusters/{uuid}")).unwrap_or_else(|e| c.fatal(e));
        user_id = body["user_id"].as_str().unwrap_or_default().to_owned();

        create_mcapi_class(k, c);
        // The Cluster on that class with exactly its variables, written by
        // mcapi's manager.
        let mut cluster = k.get("Cluster", &stack);
        pin_to_mcapi_class(&mut cluster);
        k.replace_as_mcapi("Cluster", &cluster);

        // mcapi's credential: named after the cluster, its Secret without
        // an owner; the driver's own goes.
        let made = keystone_post(
            s,
            &token(),
            &format!("/users/{user_id}/application_credentials"),
            &json!({"application_credential": {
                "name": uuid, "description": format!("Magnum cluster ({uuid})")}}),
        );
        let (id, secret) = (
            made["application_credential"]["id"]
                .as_str()
                .unwrap_or_default(),
            made["application_credential"]["secret"]
                .as_str()
                .unwrap_or_default(),
        );
        let mut config = k.get("Secret", &format!("{stack}-cloud-config"));
        let clouds = config.data["data"]["clouds.yaml"]
            .as_str()
            .unwrap_or_default();
        let clouds = String::from_utf8(b64.decode(clouds).unwrap_or_default()).unwrap_or_default();
        let clouds = set_yaml_value(&clouds, "application_credential_id", id);
        let clouds = set_yaml_value(&clouds, "application_credential_secret", secret);
        config.data["data"]["clouds.yaml"] = json!(b64.encode(clouds));
        config.metadata.annotations = None;
        k.replace_as_mcapi("Secret", &config);
        let url = format!(
            "{}/users/{user_id}/application_credentials",
            s.identity().url.trim_end_matches('/')
        );
        let (_, list) = get(&url, &token());
        for cred in list["application_credentials"]
            .as_array()
            .into_iter()
            .flatten()
        {
            // Only this cluster's: Keystone is shared with other runs.
            if cred["name"]
                .as_str()
                .is_some_and(|n| n.starts_with(&format!("magnum-{uuid}-")))
            {
                let resp = blocking_client(Duration::from_secs(30))
                    .delete(format!("{url}/{}", cred["id"].as_str().unwrap_or_default()))
                    .header("X-Auth-Token", token())
                    .send()
                    .unwrap_or_else(|e| c.fatal(e.to_string()));
                assert_eq!(resp.status().as_u16(), 204);
            }
        }
    });
    if stack.is_empty() {
        suite.fail("no cluster to adopt");
        return;
    }
    let uuid = uuid.as_str();
    let stack = stack.as_str();
    let pinned = |c: &mut Check, when: &str| {
        let cluster = k.get("Cluster", stack);
        if class_of(&cluster) != MCAPI_CLASS {
            c.error(format!("{when}: the class is {}", class_of(&cluster)));
        }
        let names = variable_names(&cluster);
        if names.iter().any(|n| NOT_IN_MCAPI.contains(&n.as_str())) || names.len() < 30 {
            c.error(format!("{when}: variables {names:?}"));
        }
    };

    suite.step("its status is derived from its objects", |c| {
        sim.mark_failed(
            stack,
            "Quota exceeded for instances: Requested 1, but already used 10 of 10 instances",
        );
        until(c, "health UNHEALTHY", Duration::from_secs(30), || {
            let (_, b) = api_get(s, &token(), &format!("/v1/clusters/{uuid}")).ok()?;
            (b["health_status"] == "UNHEALTHY").then_some(())
        });
        sim.mark_ready(stack);
        until(c, "health HEALTHY", Duration::from_secs(30), || {
            let (_, b) = api_get(s, &token(), &format!("/v1/clusters/{uuid}")).ok()?;
            (b["health_status"] == "HEALTHY" && b["status"] == "CREATE_COMPLETE").then_some(())
        });
        pinned(c, "untouched");
    });

    suite.step("resize keeps its class and the class's variables", |c| {
        let r = o.run_as(c, "demo", "coe cluster resize adopt-c 2");
        ok(c, &r, &["Request to resize cluster"]);
        s.wait_status(c, &token(), uuid, wait, &["UPDATE_COMPLETE"]);
        pinned(c, "after the resize");
        let md =
            &k.get("Cluster", stack).data["spec"]["topology"]["workers"]["machineDeployments"][0];
        if md["replicas"] != 2 {
            c.error(format!("replicas {}", md["replicas"]));
        }
    });

    suite.step("a nodegroup comes and goes on the pinned class", |c| {
        let r = o.run_as(
            c,
            "demo",
            "coe nodegroup create adopt-c ng-a --node-count 1",
        );
        ok(c, &r, &["Request to create nodegroup"]);
        until(c, "ng-a CREATE_COMPLETE", wait, || {
            let (_, ng) =
                api_get(s, &token(), &format!("/v1/clusters/{uuid}/nodegroups/ng-a")).ok()?;
            (ng["status"] == "CREATE_COMPLETE").then_some(())
        });
        pinned(c, "after the nodegroup create");
        let r = o.run_as(c, "demo", "coe nodegroup delete adopt-c ng-a");
        ok(c, &r, &["Request to delete nodegroup"]);
        until(c, "ng-a gone", wait, || {
            let (code, _) =
                api_get(s, &token(), &format!("/v1/clusters/{uuid}/nodegroups/ng-a")).ok()?;
            (code == 404).then_some(())
        });
        pinned(c, "after the nodegroup delete");
    });

    suite.step("an upgrade moves it to the driver's class", |c| {
        let r = o.run_as(c, "demo", "coe cluster upgrade adopt-c adopt-ct2");
        ok(c, &r, &["Request to upgrade cluster"]);
        s.wait_status(
            c,
            &token(),
            uuid,
            Duration::from_secs(120),
            &["UPDATE_COMPLETE"],
        );
        let cluster = k.get("Cluster", stack);
        if class_of(&cluster) != "magnum-v0.38.2-openkeel.1" {
            c.error(format!("the class is {}", class_of(&cluster)));
        }
        let names = variable_names(&cluster);
        for v in NOT_IN_MCAPI {
            if !names.iter().any(|n| n == v) {
                c.error(format!("the driver's class variable {v} is not set"));
            }
        }
    });

    suite.step(
        "delete removes the credential magnum-cluster-api made",
        |c| {
            let r = o.run_as(c, "demo", "coe cluster delete adopt-c");
            ok(c, &r, &["Request to delete cluster"]);
            s.wait_status(c, &token(), uuid, Duration::from_secs(120), &["404"]);
            let creds = app_credentials(s, &token(), &user_id);
            if creds
                .iter()
                .any(|n| n == uuid || n.starts_with(&format!("magnum-{uuid}")))
            {
                c.error(format!("credentials left: {creds:?}"));
            }
            let left: Vec<String> = secrets(k)
                .into_iter()
                .filter(|n| n.starts_with(stack))
                .collect();
            if !left.is_empty() {
                c.error(format!("Secrets left: {left:?}"));
            }
        },
    );
    // The Go envtest goldens, on the same stack.
    crate::capi_goldens::steps(s, o, k.mgmt, sim, suite);
}

// ----------------------------------------------------------------- idle

/// Idle clusters, watched by the reconciler.
const IDLE: usize = 200;
/// Of them, created through the API: a create costs seconds (certificates
/// and a Keystone application credential), so the others are written as a
/// migration from magnum-cluster-api leaves them: Python Magnum's rows and
/// mcapi's Cluster API objects.
const IDLE_API: usize = 5;

/// `v` as an SQL string literal.
fn sql_text(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// Writes `n` clusters into the service's database as Python Magnum left
/// the rows of magnum-cluster-api clusters being created: each a copy of
/// the rows of cluster `source` (the cluster, its nodegroups, its four
/// certificates under new references) with its own uuid, name and
/// `stack_id`, `CREATE_IN_PROGRESS`, no address nor health yet. The
/// (uuid, stack) of each.
fn write_magnum_rows(
    k: &Kube<'_>,
    db: &std::path::Path,
    source: &str,
    n: usize,
) -> Result<Vec<(String, String)>, sqlx::Error> {
    use sqlx::{Connection, Row};
    k.rt.block_on(async {
        let opts = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(db)
            .busy_timeout(Duration::from_secs(30));
        let mut conn = sqlx::SqliteConnection::connect_with(&opts).await?;
        let columns = |table: &'static str| {
            let q = format!("SELECT name FROM pragma_table_info('{table}') WHERE name != 'id'");
            sqlx::query(sqlx::AssertSqlSafe(q))
        };
        let cluster_cols: Vec<String> = columns("cluster")
            .fetch_all(&mut conn)
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let ng_cols: Vec<String> = columns("nodegroup")
            .fetch_all(&mut conn)
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let src = sqlx::query(
            "SELECT stack_id, ca_cert_ref, magnum_cert_ref, etcd_ca_cert_ref, \
             front_proxy_ca_cert_ref FROM cluster WHERE uuid = ?",
        )
        .bind(source)
        .fetch_one(&mut conn)
        .await?;
        let src_stack: String = src.get(0);
        let refs: Vec<(&str, Option<String>)> = [
            "ca_cert_ref",
            "magnum_cert_ref",
            "etcd_ca_cert_ref",
            "front_proxy_ca_cert_ref",
        ]
        .into_iter()
        .enumerate()
        .map(|(i, col)| (col, src.get(i + 1)))
        .collect();
        let now = chrono::Utc::now()
            .naive_utc()
            .format("%Y-%m-%d %H:%M:%S%.6f")
            .to_string();
        let mut made = Vec::with_capacity(n);
        let mut tx = conn.begin().await?;
        for i in 0..n {
            let uuid = uuid::Uuid::new_v4().to_string();
            let name = format!("mig-{i}");
            // mcapi's stack ids: the name and a random suffix.
            let stack = format!("{name}-{}", &uuid::Uuid::new_v4().simple().to_string()[..6]);
            let mut set: Vec<(&str, String)> = vec![
                ("uuid", sql_text(&uuid)),
                ("name", sql_text(&name)),
                ("stack_id", sql_text(&stack)),
                ("status", sql_text("CREATE_IN_PROGRESS")),
                ("status_reason", "NULL".into()),
                ("api_address", "NULL".into()),
                ("health_status", "NULL".into()),
                ("health_status_reason", sql_text("{}")),
                ("created_at", sql_text(&now)),
                ("updated_at", "NULL".into()),
            ];
            for (col, reference) in &refs {
                let Some(reference) = reference else { continue };
                let copy = uuid::Uuid::new_v4().to_string();
                sqlx::query(
                    "INSERT INTO x509keypair (created_at, uuid, certificate, private_key, \
                     project_id, user_id, intermediates, private_key_passphrase) \
                     SELECT ?, ?, certificate, private_key, project_id, user_id, intermediates, \
                     private_key_passphrase FROM x509keypair WHERE uuid = ?",
                )
                .bind(&now)
                .bind(&copy)
                .bind(reference)
                .execute(&mut *tx)
                .await?;
                set.push((col, sql_text(&copy)));
            }
            let exprs: Vec<String> = cluster_cols
                .iter()
                .map(|c| {
                    set.iter()
                        .find(|(k, _)| k == c)
                        .map_or_else(|| format!("\"{c}\""), |(_, v)| v.clone())
                })
                .collect();
            let q = format!(
                "INSERT INTO cluster ({}) SELECT {} FROM cluster WHERE uuid = ?",
                cluster_cols.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", "),
                exprs.join(", ")
            );
            sqlx::query(sqlx::AssertSqlSafe(q)).bind(source).execute(&mut *tx).await?;
            let ng_exprs: Vec<String> = ng_cols
                .iter()
                .map(|c| match c.as_str() {
                    "uuid" => "lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || \
                               substr(lower(hex(randomblob(2))), 2) || '-a' || \
                               substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))"
                        .to_owned(),
                    "cluster_id" => sql_text(&uuid),
                    "stack_id" => format!("replace(stack_id, {}, {})", sql_text(&src_stack), sql_text(&stack)),
                    "status" => sql_text("CREATE_IN_PROGRESS"),
                    "status_reason" => "NULL".into(),
                    "node_addresses" => sql_text("[]"),
                    "created_at" => sql_text(&now),
                    "updated_at" => "NULL".into(),
                    other => format!("\"{other}\""),
                })
                .collect();
            let q = format!(
                "INSERT INTO nodegroup ({}) SELECT {} FROM nodegroup WHERE cluster_id = ?",
                ng_cols.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", "),
                ng_exprs.join(", ")
            );
            sqlx::query(sqlx::AssertSqlSafe(q)).bind(source).execute(&mut *tx).await?;
            made.push((uuid, stack));
        }
        tx.commit().await?;
        Ok(made)
    })
}

/// The Cluster of each of `clusters` as mcapi wrote it: the Cluster of
/// `source` (uuid, stack) on mcapi's class, under the cluster's own name,
/// uuid and stack, by mcapi's field manager.
fn write_mcapi_clusters(k: &Kube<'_>, source: (&str, &str), clusters: &[(String, String)]) {
    let mut template = k.get("Cluster", source.1);
    pin_to_mcapi_class(&mut template);
    let text = serde_json::to_string(&json!({
        "labels": template.metadata.labels,
        "annotations": template.metadata.annotations,
        "spec": template.data["spec"],
    }))
    .unwrap_or_default();
    for (uuid, stack) in clusters {
        let own: Value =
            serde_json::from_str(&text.replace(source.0, uuid).replace(source.1, stack))
                .unwrap_or_default();
        let mut cluster = DynamicObject::new(stack, &Kube::resource("Cluster")).within(NS);
        cluster.metadata.labels = serde_json::from_value(own["labels"].clone()).ok();
        cluster.metadata.annotations = serde_json::from_value(own["annotations"].clone()).ok();
        cluster.data = json!({ "spec": own["spec"] });
        k.create_as_mcapi("Cluster", &cluster);
    }
}

fn idle(s: &Stack, o: &Osc<'_>, k: &Kube<'_>, sim: &Sim, suite: &mut Suite<'_>) {
    let token = s.token("demo", "demo");
    let mut template = String::new();
    let mut created: Vec<(String, String)> = Vec::new();
    suite.step("clusters created through the API, complete", |c| {
        let r = o.run_as(
            c,
            "demo",
            &format!(
                "coe cluster template create idle-ct --image {IMAGE_NAME} \
                 --external-network {EXT_NET_NAME} --coe kubernetes --flavor {FLAVOR_SMALL} \
                 --master-flavor {FLAVOR_SMALL} --network-driver calico --labels kube_tag=v1.31.1 -f json"
            ),
        );
        let Some(ct) = json_out(c, &r) else { return };
        template = ct["uuid"].as_str().unwrap_or_default().to_owned();
        let started = Instant::now();
        let mut uuids = Vec::new();
        for i in 0..IDLE_API {
            let body = json!({"name": format!("idle-{i}"), "cluster_template_id": template,
                "node_count": 1, "master_count": 1});
            let (code, answer) = s
                .api(&token, "POST", "/v1/clusters", "latest", Some(&body))
                .unwrap_or_else(|e| c.fatal(e));
            if code != 202 {
                c.fatal(format!("create idle-{i}: HTTP {code} {answer}"));
            }
            uuids.push(answer["uuid"].as_str().unwrap_or_default().to_owned());
        }
        let accepted = started.elapsed();
        created = until(c, "the Clusters", Duration::from_secs(120), || {
            let mut found = Vec::new();
            for u in &uuids {
                let l = k.list(Kind::Cluster, &format!("cluster-uuid={u}"));
                found.push((u.clone(), l.first()?.metadata.name.clone()?));
            }
            Some(found)
        });
        let applied = started.elapsed();
        for (_, stack) in &created {
            sim.mark_ready(stack);
        }
        until(c, "complete clusters", Duration::from_secs(120), || {
            let (_, list) = api_get(s, &token, "/v1/clusters?limit=1000").ok()?;
            let complete = list["clusters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|cl| cl["status"] == "CREATE_COMPLETE")
                .count();
            (complete == IDLE_API).then_some(())
        });
        eprintln!(
            "cluster api idle: {IDLE_API} clusters created through the API: accepted in {} ms, \
             their Clusters applied in {} ms ({} ms a cluster), complete in {} ms",
            accepted.as_millis(),
            applied.as_millis(),
            applied.as_millis() / IDLE_API as u128,
            started.elapsed().as_millis()
        );
    });
    if created.is_empty() {
        suite.fail("no cluster was created");
        return;
    }
    let mut migrated: Vec<(String, String)> = Vec::new();
    suite.step(
        "clusters as a migration from magnum-cluster-api leaves them: Magnum's rows, mcapi's objects",
        |c| {
            let started = Instant::now();
            let (source, source_stack) = (&created[0].0, &created[0].1);
            create_mcapi_class(k, c);
            migrated = write_magnum_rows(k, &s.dir.path().join("magnum.db"), source, IDLE - IDLE_API)
                .unwrap_or_else(|e| c.fatal(format!("write the rows: {e}")));
            let rows = started.elapsed();
            for (_, stack) in &migrated {
                sim.mark_ready(stack);
            }
            write_mcapi_clusters(k, (source, source_stack), &migrated);
            eprintln!(
                "cluster api idle: {} clusters migrated: rows in {} ms, Clusters in {} ms",
                migrated.len(),
                rows.as_millis(),
                (started.elapsed() - rows).as_millis()
            );
        },
    );
    suite.step(
        "every cluster is derived from its objects; the active reconciler killed meanwhile, \
         each transition happens once",
        |c| {
            let started = Instant::now();
            let pids = s.reconciler_pids();
            if pids.len() != 2 {
                c.fatal(format!(
                    "want an active and a standby reconciler, have {pids:?}"
                ));
            }
            let complete = || {
                let (_, list) = api_get(s, &token, "/v1/clusters/detail?limit=1000").ok()?;
                let done = list["clusters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|cl| {
                        cl["status"] == "CREATE_COMPLETE"
                            && cl["health_status"] == "HEALTHY"
                            && cl["api_address"].is_string()
                    })
                    .count();
                Some(done)
            };
            // Kill the active reconciler once a quarter of the migrated
            // clusters are complete: the others' transitions are in flight.
            let at_kill = until(c, "a quarter complete", Duration::from_secs(180), || {
                let n = complete()?;
                (n >= IDLE_API + (IDLE - IDLE_API) / 4).then_some(n)
            });
            let took = kill_active_reconciler(c, s, pids[0], || {});
            until(
                c,
                "every cluster complete",
                Duration::from_secs(300),
                || (complete()? == IDLE).then_some(()),
            );
            eprintln!(
                "cluster api idle: {IDLE} clusters complete in {} ms; the active reconciler killed \
                 with {} transitions in flight, the standby took over in {} ms",
                started.elapsed().as_millis(),
                IDLE - at_kill,
                took.as_millis()
            );
            if at_kill >= IDLE {
                c.error("no transition was in flight when the reconciler died");
            }
            if took > Duration::from_secs(LEASE_SECONDS + 5) {
                c.error(format!("the standby took over after {took:?}"));
            }
            // Each create ends once: one success per cluster, whichever
            // reconciler saved it (a second application would show within
            // a resync).
            std::thread::sleep(Duration::from_secs(2));
            let logged = logged_notifications(&s.output());
            let mut wrong = Vec::new();
            for (uuid, _) in created.iter().chain(&migrated) {
                let ends: Vec<&str> = logged
                    .iter()
                    .filter(|n| n.cluster == *uuid && n.event_type == "magnum.cluster.create")
                    .map(|n| n.outcome.as_str())
                    .filter(|o| *o != "pending")
                    .collect();
                if ends != ["success"] {
                    wrong.push(format!("{uuid}: {ends:?}"));
                }
            }
            if !wrong.is_empty() {
                c.error(format!(
                    "{} clusters without exactly one create success, the first: {:?}",
                    wrong.len(),
                    &wrong[..wrong.len().min(5)]
                ));
            }
        },
    );
    suite.step("60 s idle: no request besides Lease renewals and watches", |c| {
        // The last transitions' effects settle.
        std::thread::sleep(Duration::from_secs(3));
        let mark = k.mgmt.server.audited().len();
        std::thread::sleep(Duration::from_secs(60));
        let ours: Vec<_> = k
            .mgmt
            .server
            .audited()
            .into_iter()
            .skip(mark)
            .filter(|a| a.user_agent.starts_with("openkeel-magnum/"))
            .collect();
        let leases = ours.iter().filter(|a| a.resource == "leases").count();
        let watches = ours.iter().filter(|a| a.verb == "watch").count();
        let others: Vec<String> = ours
            .iter()
            .filter(|a| a.resource != "leases" && a.verb != "watch")
            .map(|a| format!("{} {}", a.verb, a.uri))
            .collect();
        eprintln!(
            "cluster api idle: {IDLE} idle clusters for 60 s: {} requests besides {leases} Lease requests and {watches} watches",
            others.len()
        );
        if !others.is_empty() || leases == 0 {
            let first: Vec<&String> = others.iter().take(20).collect();
            c.error(format!(
                "{} requests, the first: {first:?}; {leases} Lease requests",
                others.len()
            ));
        }
    });
    // The clusters' credentials leave the shared Keystone with them.
    suite.step("the clusters' credentials are removed from Keystone", |c| {
        let (_, b) = api_get(s, &token, "/v1/clusters?limit=1").unwrap_or_else(|e| c.fatal(e));
        let one = b["clusters"][0]["uuid"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let (_, b) =
            api_get(s, &token, &format!("/v1/clusters/{one}")).unwrap_or_else(|e| c.fatal(e));
        let user = b["user_id"].as_str().unwrap_or_default().to_owned();
        let url = format!(
            "{}/users/{user}/application_credentials",
            s.identity().url.trim_end_matches('/')
        );
        let (_, list) = get(&url, &token);
        let mut removed = 0;
        for cred in list["application_credentials"]
            .as_array()
            .into_iter()
            .flatten()
        {
            // Only the suite's clusters': Keystone is shared with other
            // runs.
            if cred["name"].as_str().is_some_and(|n| {
                created
                    .iter()
                    .any(|(uuid, _)| n.starts_with(&format!("magnum-{uuid}-")))
            }) {
                let resp = blocking_client(Duration::from_secs(30))
                    .delete(format!("{url}/{}", cred["id"].as_str().unwrap_or_default()))
                    .header("X-Auth-Token", &token)
                    .send()
                    .unwrap_or_else(|e| c.fatal(e.to_string()));
                removed += usize::from(resp.status().as_u16() == 204);
            }
        }
        if removed < IDLE_API {
            c.error(format!("{removed} credentials of {IDLE_API} clusters"));
        }
    });
}
