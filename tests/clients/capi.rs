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
    exclusive, keystone, need_env, selected,
};
use crate::kube::{CapiApiServer, capi_api_server};
use crate::osc::{Osc, fails, json_out, ok};

const NS: &str = "magnum-system";

#[test]
fn cluster_api_driver_lifecycle() {
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
        conf: format!(
            "[capi]\nkubeconfig = {}\nresync_interval = 1\n",
            mgmt.server.kubeconfig_path().display()
        ),
        without_fake: true,
        default_project: Some(demo),
        volume_types: vec!["standard", "ssd"],
    };
    let s = Stack::start_with(ks, &opts);
    let sim = Sim::new(mgmt.client.clone(), NS);
    let running = {
        let _in = krt.enter();
        sim.run(Duration::from_millis(200))
    };
    let o = Osc::new(cli, &s);
    let mut suite = Suite::new("TestClusterAPILifecycle", Some(&s));
    let k = Kube {
        rt: &krt,
        mgmt: &mgmt,
    };
    lifecycle(&s, &o, &k, &sim, &mut suite);
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
                let (code, body) = s
                    .api(
                        &token(),
                        "GET",
                        &format!("/v1/clustertemplates/{id}"),
                        "latest",
                        None,
                    )
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

    suite.step("simulated progress reaches CREATE_COMPLETE", |c| {
        sim.mark_ready(stack);
        s.wait_status(c, &token(), uuid, wait, &["CREATE_COMPLETE"]);
        let (_, body) = s
            .api(
                &token(),
                "GET",
                &format!("/v1/clusters/{uuid}"),
                "latest",
                None,
            )
            .unwrap_or_else(|e| c.fatal(e));
        if body["api_address"] != "https://203.0.113.10:6443" {
            c.error(format!("api_address {}", body["api_address"]));
        }
        if body["health_status"] != "HEALTHY" {
            c.error(format!("health {}", body["health_status"]));
        }
        let (_, ngs) = s
            .api(
                &token(),
                "GET",
                &format!("/v1/clusters/{uuid}/nodegroups/default-worker"),
                "latest",
                None,
            )
            .unwrap_or_else(|e| c.fatal(e));
        let addresses = ngs["node_addresses"].as_array().map_or(0, Vec::len);
        if ngs["status"] != "CREATE_COMPLETE" || addresses != 2 {
            c.error(format!("default-worker: {ngs}"));
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
        let (_, body) = s
            .api(&token(), "GET", &format!("/v1/clusters/{uuid}"), "latest", None)
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
            let (_, body) = s
                .api(
                    &token(),
                    "GET",
                    &format!("/v1/clusters/{uuid}"),
                    "latest",
                    None,
                )
                .unwrap_or_else(|e| c.fatal(e));
            if body["status"] != "UPDATE_COMPLETE" {
                c.error(format!(
                    "a refused upgrade moved the cluster to {}",
                    body["status"]
                ));
            }
        },
    );

    suite.step("upgrade one minor version up", |c| {
        let r = o.run_as(c, "demo", "coe cluster upgrade capi-c capi-ct2 --max-batch-size 2");
        ok(c, &r, &["Request to upgrade cluster"]);
        s.wait_status(c, &token(), uuid, Duration::from_secs(120), &["UPDATE_COMPLETE"]);
        let (_, body) = s
            .api(&token(), "GET", &format!("/v1/clusters/{uuid}"), "latest", None)
            .unwrap_or_else(|e| c.fatal(e));
        if body["coe_version"] != "v1.32.0" {
            c.error(format!("coe_version {}", body["coe_version"]));
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

    suite.step("nodegroup create", |c| {
        let r = o.run_as(c, "demo", "coe nodegroup create capi-c ng1 --node-count 1");
        ok(c, &r, &["Request to create nodegroup"]);
        until(c, "ng1 CREATE_COMPLETE", wait, || {
            let (_, ng) = s
                .api(
                    &token(),
                    "GET",
                    &format!("/v1/clusters/{uuid}/nodegroups/ng1"),
                    "latest",
                    None,
                )
                .ok()?;
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
            let (code, _) = s
                .api(
                    &token(),
                    "GET",
                    &format!("/v1/clusters/{uuid}/nodegroups/ng1"),
                    "latest",
                    None,
                )
                .ok()?;
            (code == 404).then_some(())
        });
        until(
            c,
            "the server group of ng1 gone",
            Duration::from_secs(30),
            || (!server_groups(s, &token()).contains(&format!("{stack}-ng1"))).then_some(()),
        );
    });

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
