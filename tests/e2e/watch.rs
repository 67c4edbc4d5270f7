//! The watch reconciler through the binary, on a real kube-apiserver and
//! etcd: a contract 1.1 driver (the watcher test component, one ConfigMap
//! per cluster) whose status arrives by watch — how fast, what idle
//! clusters cost the API server (counted in its audit log), an API server
//! restarted mid-run; a driver whose watches its grants do not cover,
//! polled instead; and the driver state's promise across two processes.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{ProjectApi, Server, free_port, metric_value, metrics_text, okm_with_conf};
use crate::kube::{ApiServer, api_server};

const NS: &str = "magnum-system";

/// The watcher test component as two packages: `watcher`, granted what it
/// declares, and `watcher-nolist`, whose grants do not let it list (so it
/// cannot be watched).
fn install(dir: &Path) {
    let component = driver_host::test_components::WATCHER;
    let manifest = driver_host::test_components::WATCHER_MANIFEST;
    for (name, m) in [
        ("watcher", manifest.to_string()),
        (
            "watcher-nolist",
            manifest
                .replace("name = \"watcher\"", "name = \"watcher-nolist\"")
                .replace("\"get\", \"list\", ", "\"get\", ")
                .replace("os = \"watcher\"", "os = \"watcher-nolist\"")
                + "\n[options]\nentry_point = \"watcher-nolist\"\nos = \"watcher-nolist\"\n",
        ),
    ] {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::copy(component, d.join(format!("{name}.wasm"))).expect("copy the component");
        std::fs::write(d.join("driver.toml"), m).expect("write the manifest");
    }
}

/// The CA bundle the cloud's configuration names, in `[capi_client]`.
const KEYSTONE: &str = "https://keystone.example.test:5000/v3";

fn conf(db: &Path, drivers: &Path, ca: &Path, kube: &ApiServer) -> String {
    format!(
        "[DEFAULT]\nauth_strategy = noauth\n\n[database]\nconnection = sqlite:///{db}\n\n\
         [keystone_authtoken]\nwww_authenticate_uri = {KEYSTONE}\n\n\
         [capi_client]\nendpoint_type = internalURL\nca_file = {ca}\n\n\
         [drivers]\ndrivers_path = {drivers}\n\n\
         [capi]\nkubeconfig = {kubeconfig}\nnamespace = {NS}\n\n\
         [x509]\nrsa_key_size = 1024\n\n[quotas]\nmax_clusters_per_project = 1000\n\n\
         [driver:watcher]\ngrant_requested = true\n\n\
         [driver:watcher-nolist]\ngrant_requested = true\n",
        db = db.display(),
        drivers = drivers.display(),
        ca = ca.display(),
        kubeconfig = kube.kubeconfig_path().display(),
    )
}

fn cm_path(uuid: &str) -> String {
    format!("/api/v1/namespaces/{NS}/configmaps/watch-{uuid}")
}

/// Sets what the test's controller says of a cluster in its ConfigMap.
fn say(kube: &ApiServer, uuid: &str, data: Value) {
    let status = kube.merge_patch(&cm_path(uuid), &json!({ "data": data }));
    assert_eq!(status, 200, "patch the ConfigMap of {uuid}");
}

fn uuid_of(v: &Value) -> String {
    v["uuid"].as_str().expect("uuid").to_string()
}

/// Waits until the cluster's ConfigMap exists.
fn wait_config_map(kube: &ApiServer, uuid: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while kube.get(&cm_path(uuid)).is_none() {
        assert!(Instant::now() < deadline, "no ConfigMap for {uuid}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every cluster of the project by uuid: its status and health.
fn statuses(api: &ProjectApi) -> Vec<(String, String, String)> {
    let list = api.ok("GET", "/v1/clusters?limit=1000", None);
    list["clusters"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        uuid_of(c),
                        c["status"].as_str().unwrap_or_default().to_string(),
                        c["health_status"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How long the row of `uuid` takes to show `field` = `want` (at most
/// `limit`).
fn time_until(api: &ProjectApi, uuid: &str, field: &str, want: &str, limit: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let c = api
            .cluster(uuid)
            .unwrap_or_else(|| panic!("cluster {uuid} vanished"));
        if c[field] == want {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "cluster {uuid}: {field} still {} after {limit:?}",
            c[field]
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The requests of the service in the audit log from `from` on, besides
/// its Lease renewals and its watches: (those, Lease requests, watches).
fn service_requests(kube: &ApiServer, from: usize) -> (Vec<String>, usize, usize) {
    let ours: Vec<_> = kube
        .audited()
        .into_iter()
        .skip(from)
        .filter(|a| a.user_agent.starts_with("openkeel-magnum/"))
        .collect();
    let leases = ours.iter().filter(|a| a.resource == "leases").count();
    let watches = ours.iter().filter(|a| a.verb == "watch").count();
    let others = ours
        .iter()
        .filter(|a| a.resource != "leases" && a.verb != "watch")
        .map(|a| format!("{} {}", a.verb, a.uri))
        .collect();
    (others, leases, watches)
}

#[test]
fn status_arrives_by_watch_costs_nothing_idle_and_survives_an_apiserver_restart() {
    let Some(mut kube) = api_server() else {
        return;
    };
    kube.create_namespace(NS);
    let dir = tempfile::tempdir().expect("tempdir");
    let drivers = dir.path().join("drivers");
    install(&drivers);
    let ca = dir.path().join("cloud-ca.pem");
    std::fs::write(
        &ca,
        "-----BEGIN CERTIFICATE-----\nMIIBone\n-----END CERTIFICATE-----\n",
    )
    .expect("write the CA");
    let metrics_port = free_port();
    let conf = format!(
        "{}\n[metrics]\nenabled = true\nport = {metrics_port}\n",
        conf(&dir.path().join("okm.sqlite"), &drivers, &ca, &kube)
    );

    // The refusal of a driver whose grants do not cover its watches is in
    // `driver list`.
    let list = okm_with_conf(&conf, &["driver", "list"]);
    assert!(
        list.stdout
            .contains("which its grants do not let it list (its clusters are polled)"),
        "{}{}",
        list.stdout,
        list.stderr
    );

    let s = Server::start(&conf, &["all-in-one"]);
    let api = ProjectApi {
        url: &s.url,
        project: "p-watch",
    };
    let tpl = api.template("watch-tpl", "watcher");

    // A watched object's change reaches the row in under 2 s.
    const FAST: usize = 5;
    let first: Vec<String> = (0..FAST)
        .map(|i| {
            let a = api.create(&format!("w-{i}"), &tpl, json!({}));
            assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
            uuid_of(&a.json())
        })
        .collect();
    for u in &first {
        wait_config_map(&kube, u);
    }
    // The passes register the clusters and the reflector lists.
    std::thread::sleep(Duration::from_secs(3));
    let mut took = Vec::new();
    for u in &first {
        say(&kube, u, json!({"status": "CREATE_COMPLETE"}));
        took.push(time_until(
            &api,
            u,
            "status",
            "CREATE_COMPLETE",
            Duration::from_secs(10),
        ));
    }
    took.sort();
    let slowest = took[FAST - 1];
    assert!(slowest < Duration::from_secs(2), "{took:?}\n{}", s.output());
    // The transition's side effect ran with the driver's imports.
    let effects = kube
        .get(&format!("{}-effects", cm_path(&first[0])))
        .expect("the effect's ConfigMap");
    assert_eq!(effects["data"]["last"], "CREATE_COMPLETE");
    // The driver read the cloud as configured: Keystone's URL, and the CA
    // file, read again at every call.
    let cm = kube.get(&cm_path(&first[0])).expect("the ConfigMap");
    assert_eq!(cm["data"]["keystone"], KEYSTONE);
    let ca_before = cm["data"]["ca"].as_str().unwrap_or_default().to_string();
    assert!(ca_before.len() == 8 && ca_before != "none", "{cm}");
    std::fs::write(
        &ca,
        "-----BEGIN CERTIFICATE-----\nMIIBtwo\n-----END CERTIFICATE-----\n",
    )
    .expect("replace the CA");
    let a = api.create("w-new-ca", &tpl, json!({}));
    assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
    let new_ca = uuid_of(&a.json());
    wait_config_map(&kube, &new_ca);
    let cm = kube.get(&cm_path(&new_ca)).expect("the ConfigMap");
    let ca_after = cm["data"]["ca"].as_str().unwrap_or_default().to_string();
    assert!(
        ca_after.len() == 8 && ca_after != ca_before,
        "{ca_before} then {ca_after}"
    );
    api.ok("DELETE", &format!("/v1/clusters/{new_ca}"), None);

    // The driver's nodegroup check is the caller's 400, and no row is
    // written.
    let refused = api.call(
        "POST",
        &format!("/v1/clusters/{}/nodegroups", first[0]),
        Some(json!({"name": "refused-ng", "node_count": 1, "labels": {"refused": "yes"}})),
    );
    assert_eq!(
        refused.status,
        400,
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    assert!(
        String::from_utf8_lossy(&refused.body).contains("the label refused (yes) is refused"),
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    let ngs = api.ok(
        "GET",
        &format!("/v1/clusters/{}/nodegroups", first[0]),
        None,
    );
    assert!(
        !ngs.to_string().contains("refused-ng"),
        "a refused nodegroup was written: {ngs}"
    );

    // Health arrives by watch too.
    say(&kube, &first[1], json!({"health": "UNHEALTHY"}));
    let health = time_until(
        &api,
        &first[1],
        "health_status",
        "UNHEALTHY",
        Duration::from_secs(10),
    );
    assert!(health < Duration::from_secs(2), "{health:?}");

    // A driver that cannot be watched is polled: its status still arrives.
    let tpl_nolist = api.template("nolist-tpl", "watcher-nolist");
    let a = api.create("polled", &tpl_nolist, json!({}));
    assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
    let polled = uuid_of(&a.json());
    wait_config_map(&kube, &polled);
    say(&kube, &polled, json!({"status": "CREATE_COMPLETE"}));
    time_until(
        &api,
        &polled,
        "status",
        "CREATE_COMPLETE",
        Duration::from_secs(20),
    );
    api.ok("DELETE", &format!("/v1/clusters/{polled}"), None);

    // 200 clusters, idle for 60 s, cost the API server nothing but the
    // Lease's renewals and the watches themselves.
    const IDLE: usize = 200;
    let rest: Vec<String> = (FAST..IDLE)
        .map(|i| {
            let a = api.create(&format!("w-{i}"), &tpl, json!({}));
            assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
            uuid_of(&a.json())
        })
        .collect();
    for u in &rest {
        wait_config_map(&kube, u);
        say(
            &kube,
            u,
            json!({"status": "CREATE_COMPLETE", "health": "HEALTHY"}),
        );
    }
    let ours: std::collections::HashSet<&String> = first.iter().chain(&rest).collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let all = statuses(&api);
        let done = all
            .iter()
            .filter(|(u, st, _)| ours.contains(u) && st == "CREATE_COMPLETE")
            .count();
        // The other clusters (deleted above) are gone too.
        if all.len() == IDLE && done == IDLE {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{done} of {IDLE} clusters complete after 120 s, {} listed\n{}",
            all.len(),
            s.output()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    // The effects of the last transitions settle.
    std::thread::sleep(Duration::from_secs(3));
    let mark = kube.audited().len();
    std::thread::sleep(Duration::from_secs(60));
    let (others, leases, watches) = service_requests(&kube, mark);
    assert!(
        others.is_empty(),
        "{IDLE} idle clusters made {} requests in 60 s: {others:?}",
        others.len()
    );
    assert!(leases > 0, "no Lease renewal in 60 s");

    // The API server restarts mid-run: a change made just before it went
    // down and changes made once it is back all reach their rows.
    let moving = &first[2..5];
    for u in moving {
        // The controller forgets the create it reported.
        say(&kube, u, json!({"status": ""}));
        api.ok(
            "PATCH",
            &format!("/v1/clusters/{u}"),
            Some(json!([{"op": "replace", "path": "/node_count", "value": 2}])),
        );
        time_until(
            &api,
            u,
            "status",
            "UPDATE_IN_PROGRESS",
            Duration::from_secs(10),
        );
    }
    say(&kube, &moving[0], json!({"status": "UPDATE_COMPLETE"}));
    let down = Instant::now();
    kube.restart(Duration::from_secs(3));
    for u in &moving[1..] {
        say(&kube, u, json!({"status": "UPDATE_COMPLETE"}));
    }
    for u in moving {
        time_until(
            &api,
            u,
            "status",
            "UPDATE_COMPLETE",
            Duration::from_secs(60),
        );
    }
    let resumed = down.elapsed();

    // A delete ends by watch too: the ConfigMap goes, the rows follow.
    api.ok("DELETE", &format!("/v1/clusters/{}", first[0]), None);
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.cluster(&first[0]).is_some() {
        assert!(Instant::now() < deadline, "the watched delete did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        kube.get(&format!("{}-effects", cm_path(&first[0])))
            .is_none(),
        "the delete's side effect did not run"
    );

    // The metrics count the derivations and the time each change waited.
    let text = metrics_text(metrics_port);
    let series = |name: &str| -> f64 {
        metric_value(&text, name).unwrap_or_else(|| panic!("{name} is not served:\n{text}"))
    };
    let derived = series("openkeel_magnum_watch_status_derivations_total");
    let lag = series("openkeel_magnum_watch_lag_seconds_total");
    assert!(derived >= FAST as f64, "{derived} derivations counted");
    assert!(
        lag > 0.0 && lag / derived < 10.0,
        "{lag} s of lag over {derived} derivations"
    );

    openkeel_magnum_exchanges::figures::report(&format!(
        "watch: an object's change reached the row in {:.2} s at most ({:.2} s median) over {FAST} clusters; \
         {IDLE} idle clusters for 60 s: {} requests besides {leases} Lease requests and {watches} watches; \
         an API server restarted with 3 s down: {} transitions resumed {:.1} s after it went down",
        slowest.as_secs_f64(),
        took[FAST / 2].as_secs_f64(),
        others.len(),
        moving.len(),
        resumed.as_secs_f64()
    ));
}

/// The driver state is a cache of one process: a cluster created through
/// one process (here all-in-one, whose own status loop never gets the
/// lease) is followed by the `reconciler` process, whose fake driver
/// finds nothing in its state and recovers what it needs from the rows.
#[test]
fn api_and_reconciler_as_two_processes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("okm.sqlite");
    let conf = format!(
        "[DEFAULT]\nauth_strategy = noauth\n\n[database]\nconnection = sqlite:///{db}\n\n\
         [drivers]\nenabled_beta_drivers = fake\n\n[capi]\nresync_interval = 1\n",
        db = db.display()
    );
    let o = okm_with_conf(&conf, &["db", "upgrade"]);
    assert_eq!(o.code, 0, "db upgrade:\n{}{}", o.stdout, o.stderr);
    let reconciler = Server::start_process(&conf, &["reconciler"], "reconciler started");
    // Its first pass takes the lease before the API process starts.
    std::thread::sleep(Duration::from_secs(2));
    let s = Server::start(&conf, &["all-in-one"]);
    let api = ProjectApi {
        url: &s.url,
        project: "p-two",
    };
    let tpl = api.template("two-tpl", "fake");
    let a = api.create("two", &tpl, json!({}));
    assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
    let uuid = uuid_of(&a.json());
    api.wait(&uuid, Duration::from_secs(30), |st| st == "CREATE_COMPLETE");
    // A resize the API process started: the reconciler's driver has no
    // record of it and completes it from the rows.
    let worker = api.ok(
        "GET",
        &format!("/v1/clusters/{uuid}/nodegroups/default-worker"),
        None,
    );
    assert_eq!(worker["node_count"], 1);
    api.ok(
        "POST",
        &format!("/v1/clusters/{uuid}/actions/resize"),
        Some(json!({"node_count": 3})),
    );
    api.wait(&uuid, Duration::from_secs(30), |st| st == "UPDATE_COMPLETE");
    let worker = api.ok(
        "GET",
        &format!("/v1/clusters/{uuid}/nodegroups/default-worker"),
        None,
    );
    assert_eq!(worker["node_count"], 3);
    assert_eq!(
        worker["node_addresses"].as_array().map(Vec::len),
        Some(3),
        "{worker}"
    );
    api.ok("DELETE", &format!("/v1/clusters/{uuid}"), None);
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.cluster(&uuid).is_some() {
        assert!(Instant::now() < deadline, "the delete did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Every transition was the reconciler's: the API process's status loop
    // never held the lease.
    let theirs = reconciler.output();
    assert!(
        theirs.matches("cluster status changed").count() >= 2,
        "{theirs}"
    );
    assert!(
        !s.output().contains("cluster status changed"),
        "{}",
        s.output()
    );
}

/// The holder of the reconciler's Lease, as the API server has it.
fn lease_holder(kube: &ApiServer) -> String {
    kube.get(&format!(
        "/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/openkeel-magnum-reconciler"
    ))
    .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
    .unwrap_or_default()
}

/// The holder named in a reconciler's output, once it took the Lease.
fn holder_in(output: &str) -> Option<String> {
    output
        .lines()
        .filter(|l| l.contains("reconciler Lease taken"))
        .find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            v["holder"].as_str().map(str::to_string)
        })
}

/// Two reconcilers on one management cluster: one holds the Lease; a
/// stopped holder hands it over at once, a crashed one after the Lease's
/// duration, and the other never wrote meanwhile.
#[test]
fn one_reconciler_holds_the_lease_and_hands_it_over() {
    let Some(kube) = api_server() else {
        return;
    };
    kube.create_namespace(NS);
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = format!(
        "[DEFAULT]\nauth_strategy = noauth\n\n[database]\nconnection = sqlite:///{db}\n\n\
         [capi]\nkubeconfig = {kubeconfig}\nnamespace = {NS}\nlease_duration = 6\n\
         renew_deadline = 4\nretry_period = 1\nresync_interval = 1\n",
        db = dir.path().join("okm.sqlite").display(),
        kubeconfig = kube.kubeconfig_path().display(),
    );
    let o = okm_with_conf(&conf, &["db", "upgrade"]);
    assert_eq!(o.code, 0, "db upgrade:\n{}{}", o.stdout, o.stderr);
    let a = Server::start_process(&conf, &["reconciler"], "reconciler Lease taken");
    let a_id = holder_in(&a.output()).expect("a's identity");
    assert_eq!(lease_holder(&kube), a_id);
    let mut b = Server::start_process(&conf, &["reconciler"], "reconciler started");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(lease_holder(&kube), a_id, "b took a held Lease");
    // A stopped holder releases the Lease: b takes it within a retry.
    drop(a);
    let deadline = Instant::now() + Duration::from_secs(10);
    let b_id = loop {
        if let Some(id) = holder_in(&b.output()) {
            break id;
        }
        assert!(
            Instant::now() < deadline,
            "b did not take the released Lease:\n{}",
            b.output()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(lease_holder(&kube), b_id);
    // A crashed holder keeps it for its duration, then the other takes it.
    let c = Server::start_process(&conf, &["reconciler"], "reconciler started");
    std::thread::sleep(Duration::from_secs(2));
    b.kill();
    let killed = Instant::now();
    let deadline = killed + Duration::from_secs(20);
    let c_id = loop {
        if let Some(id) = holder_in(&c.output()) {
            break id;
        }
        assert!(
            Instant::now() < deadline,
            "c did not take the expired Lease:\n{}",
            c.output()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let after = killed.elapsed();
    assert_eq!(lease_holder(&kube), c_id);
    // Not before the record stood still for the Lease's duration (6 s) as
    // c saw it: a holder that only paused cannot have two writers.
    assert!(after > Duration::from_secs(4), "taken over after {after:?}");
    openkeel_magnum_exchanges::figures::report(&format!(
        "watch: the reconciler's Lease changed holder within a retry when its holder stopped, and {:.1} s \
         after its holder crashed (lease_duration 6 s)",
        after.as_secs_f64()
    ));
}
