//! The simulator on a real kube-apiserver with the Cluster API and CAPO
//! CRDs installed: every CRD is served, and a hand-written topology
//! Cluster is taken to ready, resized, failed, upgraded, loses a nodegroup
//! and is deleted, driven step by step and in the background.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::runtime::wait::await_condition;
use serde_json::{Value, json};

use crate::capi_sim::{
    ANNOTATION_DELETE_MACHINE, ENDPOINT_HOST, ENDPOINT_PORT, Kind, LABEL_CLUSTER_NAME,
    LABEL_CONTROL_PLANE, LABEL_DEPLOYMENT, Sim, machine_address, server_id,
};
use crate::kube::{CapiApiServer, capi_api_server, crd_manifests};

const NS: &str = "magnum-system";
const QUOTA: &str =
    "Quota exceeded for instances: Requested 1, but already used 10 of 10 instances";
/// How long the background loop may take to converge (it steps every
/// 50 ms; a few passes suffice).
const CONVERGE: Duration = Duration::from_secs(60);

/// The API server with the CRDs and the namespace, and a simulator of it.
async fn world() -> Option<(CapiApiServer, Sim)> {
    let env = capi_api_server().await?;
    env.create_namespace(NS).await;
    let sim = Sim::new(env.client.clone(), NS);
    Some((env, sim))
}

/// A minimal topology Cluster as the CRD's schema accepts it: a class
/// reference (no ClusterClass exists: no webhook checks it), a version,
/// the control plane's replicas and the workers' MachineDeployments.
fn topology_cluster(
    stack: &str,
    version: &str,
    control_plane: i64,
    workers: &[(&str, i64)],
) -> DynamicObject {
    DynamicObject::new(stack, &Kind::Cluster.resource())
        .within(NS)
        .data(json!({ "spec": { "topology": {
            "classRef": { "name": "magnum-v0.38.2-openkeel.1" },
            "version": version,
            "controlPlane": { "replicas": control_plane },
            "workers": { "machineDeployments": machine_deployments(workers) },
        }}}))
}

fn machine_deployments(workers: &[(&str, i64)]) -> Value {
    workers
        .iter()
        .map(|(name, replicas)| {
            json!({ "class": "default-worker", "name": name, "replicas": replicas })
        })
        .collect()
}

/// The topology's workers, for a merge patch.
fn workers_patch(workers: &[(&str, i64)]) -> Value {
    json!({ "workers": { "machineDeployments": machine_deployments(workers) } })
}

/// A merge patch of the Cluster's topology.
async fn patch_topology(sim: &Sim, stack: &str, topology: Value) {
    sim.api(Kind::Cluster)
        .patch(
            stack,
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "topology": topology } })),
        )
        .await
        .unwrap_or_else(|e| panic!("patch the topology of {stack}: {e}"));
}

/// The objects of `kind` of a cluster, by name.
async fn objects(sim: &Sim, kind: Kind, stack: &str) -> Vec<DynamicObject> {
    let lp = match kind {
        Kind::Cluster => ListParams::default().fields(&format!("metadata.name={stack}")),
        _ => ListParams::default().labels(&format!("{LABEL_CLUSTER_NAME}={stack}")),
    };
    let mut items = sim
        .api(kind)
        .list(&lp)
        .await
        .unwrap_or_else(|e| panic!("list {kind:?}: {e}"))
        .items;
    items.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    items
}

fn names(objects: &[DynamicObject]) -> Vec<String> {
    objects
        .iter()
        .map(|o| o.metadata.name.clone().unwrap_or_default())
        .collect()
}

/// The Machines of the control plane (`None`) or of a nodegroup.
async fn machines(sim: &Sim, stack: &str, nodegroup: Option<&str>) -> Vec<DynamicObject> {
    objects(sim, Kind::Machine, stack)
        .await
        .into_iter()
        .filter(|m| {
            let labels = m.metadata.labels.clone().unwrap_or_default();
            match nodegroup {
                None => labels.contains_key(LABEL_CONTROL_PLANE),
                Some(ng) => labels.get(LABEL_DEPLOYMENT).map(String::as_str) == Some(ng),
            }
        })
        .collect()
}

/// `(status, reason, message)` of a condition, empty strings when absent.
fn condition<'a>(o: &'a DynamicObject, kind: &str) -> (&'a str, &'a str, &'a str) {
    let found = o.data["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind));
    let field = |f: &str| found.and_then(|c| c[f].as_str()).unwrap_or_default();
    (field("status"), field("reason"), field("message"))
}

fn generation(o: &DynamicObject) -> i64 {
    o.metadata.generation.unwrap_or(0)
}

/// Asserts that everything of the cluster reports ready at `version`, with
/// `control_plane` control-plane Machines and the workers' sizes.
async fn assert_ready(
    sim: &Sim,
    stack: &str,
    version: &str,
    control_plane: i64,
    workers: &[(&str, i64)],
) {
    let cluster = &objects(sim, Kind::Cluster, stack).await[0];
    for kind in [
        "InfrastructureReady",
        "ControlPlaneAvailable",
        "WorkersAvailable",
        "TopologyReconciled",
    ] {
        assert_eq!(
            condition(cluster, kind).0,
            "True",
            "{stack}: Cluster {kind}: {}",
            cluster.data["status"]
        );
    }
    assert_eq!(
        cluster.data["status"]["observedGeneration"],
        generation(cluster),
        "{stack}: Cluster"
    );
    assert_eq!(cluster.data["status"]["phase"], "Provisioned");
    assert_eq!(
        cluster.data["spec"]["controlPlaneEndpoint"],
        json!({ "host": ENDPOINT_HOST, "port": ENDPOINT_PORT })
    );

    let kcps = objects(sim, Kind::KubeadmControlPlane, stack).await;
    assert_eq!(names(&kcps), [format!("{stack}-control-plane")]);
    let kcp = &kcps[0];
    assert_eq!(kcp.data["spec"]["replicas"], control_plane);
    assert_eq!(kcp.data["spec"]["version"], version);
    let st = &kcp.data["status"];
    assert_eq!(st["version"], version, "{stack}: KubeadmControlPlane {st}");
    assert_eq!(st["initialization"]["controlPlaneInitialized"], true);
    for field in [
        "replicas",
        "readyReplicas",
        "availableReplicas",
        "upToDateReplicas",
    ] {
        assert_eq!(
            st[field], control_plane,
            "{stack}: KubeadmControlPlane {field}"
        );
    }
    assert_eq!(st["observedGeneration"], generation(kcp));
    assert_eq!(condition(kcp, "Available").0, "True");

    let mds = objects(sim, Kind::MachineDeployment, stack).await;
    let mut want: Vec<String> = workers
        .iter()
        .map(|(ng, _)| format!("{stack}-{ng}"))
        .collect();
    want.sort();
    assert_eq!(names(&mds), want, "{stack}: MachineDeployments");
    for (ng, replicas) in workers {
        let md = mds
            .iter()
            .find(|m| m.metadata.name.as_deref() == Some(&format!("{stack}-{ng}")))
            .expect("the MachineDeployment");
        let labels = md.metadata.labels.clone().unwrap_or_default();
        assert_eq!(
            labels.get(LABEL_CLUSTER_NAME).map(String::as_str),
            Some(stack)
        );
        assert_eq!(labels.get(LABEL_DEPLOYMENT).map(String::as_str), Some(*ng));
        assert_eq!(md.data["spec"]["replicas"], *replicas);
        assert_eq!(md.data["spec"]["template"]["spec"]["version"], version);
        let st = &md.data["status"];
        assert_eq!(
            st["phase"], "Running",
            "{stack}: MachineDeployment {ng} {st}"
        );
        for field in [
            "replicas",
            "readyReplicas",
            "availableReplicas",
            "upToDateReplicas",
        ] {
            assert_eq!(
                st[field], *replicas,
                "{stack}: MachineDeployment {ng} {field}"
            );
        }
        assert_eq!(st["observedGeneration"], generation(md));
        assert_eq!(condition(md, "Available").0, "True");
    }

    let mut counts = vec![(None, control_plane)];
    counts.extend(workers.iter().map(|(ng, n)| (Some(*ng), *n)));
    let mut ids = BTreeSet::new();
    for (group, n) in counts {
        let ms = machines(sim, stack, group).await;
        assert_eq!(
            ms.len() as i64,
            n,
            "{stack}: Machines of {group:?}: {:?}",
            names(&ms)
        );
        for m in &ms {
            let name = m.metadata.name.clone().unwrap_or_default();
            let st = &m.data["status"];
            assert_eq!(m.data["spec"]["version"], version, "{name}");
            let id = server_id(m).unwrap_or_else(|| panic!("{name}: no server ID"));
            assert!(ids.insert(id.to_string()), "{name}: server ID {id} twice");
            assert_eq!(st["nodeRef"]["name"], name.as_str());
            let address = machine_address(m).expect("an address");
            assert_eq!(
                st["addresses"],
                json!([{ "type": "InternalIP", "address": address }]),
                "{name}"
            );
            assert_eq!(st["phase"], "Running", "{name}");
            assert_eq!(condition(m, "InfrastructureReady").0, "True", "{name}");
            assert_eq!(condition(m, "NodeHealthy").0, "True", "{name}");
        }
    }

    let oscs = objects(sim, Kind::OpenStackCluster, stack).await;
    assert_eq!(names(&oscs), [stack]);
    assert_eq!(oscs[0].data["status"]["ready"], true);
    assert!(oscs[0].data["status"].get("failureMessage").is_none());
}

/// Every CRD of the folder is installed, Established, and each of its
/// served versions can be listed; the kinds the simulator writes are
/// stored in the version it writes them in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_are_established_and_listable() {
    let Some((env, _)) = world().await else {
        return;
    };
    let manifests = crd_manifests(&env.crds_dir);
    let folders: BTreeSet<String> = manifests
        .iter()
        .filter_map(|(p, _)| Some(p.parent()?.file_name()?.to_string_lossy().into_owned()))
        .collect();
    assert_eq!(
        folders,
        BTreeSet::from([
            "cluster-api-provider-openstack-v0.14.7".to_string(),
            "cluster-api-v1.14.0".to_string()
        ])
    );
    let want: BTreeSet<String> = manifests
        .iter()
        .map(|(_, m)| {
            m["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(want.len(), manifests.len(), "one CRD per file, each named");
    let installed: BTreeSet<String> = env
        .crds
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    assert_eq!(installed, want);
    // Each was applied once, by server-side apply.
    let applies = env
        .server
        .audited()
        .iter()
        .filter(|a| a.resource == "customresourcedefinitions" && a.verb == "patch")
        .count();
    assert_eq!(applies, want.len());

    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let mut listed = 0;
    for name in &want {
        let crd = crds
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("get the CRD {name}: {e}"));
        let established = crd
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            });
        assert!(established, "the CRD {name} is not Established");
        let spec = &crd.spec;
        for v in spec.versions.iter().filter(|v| v.served) {
            let gvk = GroupVersionKind::gvk(&spec.group, &v.name, &spec.names.kind);
            let ar = ApiResource::from_gvk_with_plural(&gvk, &spec.names.plural);
            let api: Api<DynamicObject> = if spec.scope == "Namespaced" {
                Api::namespaced_with(env.client.clone(), NS, &ar)
            } else {
                Api::all_with(env.client.clone(), &ar)
            };
            let list = api.list(&ListParams::default()).await.unwrap_or_else(|e| {
                panic!("list {}/{} {}: {e}", spec.group, v.name, spec.names.kind)
            });
            assert!(list.items.is_empty(), "{name} {} holds objects", v.name);
            listed += 1;
        }
    }
    for kind in [
        Kind::Cluster,
        Kind::KubeadmControlPlane,
        Kind::MachineDeployment,
        Kind::Machine,
        Kind::OpenStackCluster,
    ] {
        let ar = kind.resource();
        let crd = env
            .crds
            .iter()
            .find(|c| c.spec.group == ar.group && c.spec.names.plural == ar.plural)
            .unwrap_or_else(|| panic!("no CRD for {kind:?}"));
        assert!(
            crd.spec
                .versions
                .iter()
                .any(|v| v.name == ar.version && v.served && v.storage),
            "{kind:?} is not stored in {}",
            ar.version
        );
    }
    eprintln!(
        "capi_sim: {} CRDs Established, {listed} served versions listed",
        want.len()
    );
}

/// A topology Cluster is taken to ready by explicit steps; a resize
/// removes the Machine annotated delete-machine; deletion removes every
/// object through the finalizers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topology_cluster_is_taken_to_ready_resized_and_deleted() {
    let Some((_env, sim)) = world().await else {
        return;
    };
    let stack = "k8s-a";
    sim.api(Kind::Cluster)
        .create(
            &PostParams::default(),
            &topology_cluster(stack, "v1.31.1", 1, &[("default-worker", 2)]),
        )
        .await
        .expect("create the Cluster");

    // One pass creates the objects; nothing reports ready while the
    // cluster is provisioning.
    assert!(
        sim.step().await.expect("step") > 0,
        "the first pass wrote nothing"
    );
    let cluster = &objects(&sim, Kind::Cluster, stack).await[0];
    assert_eq!(
        cluster.metadata.finalizers.as_deref(),
        Some(&["cluster.cluster.x-k8s.io".to_string()][..])
    );
    assert!(
        cluster.data["status"]["conditions"].is_null(),
        "{}",
        cluster.data["status"]
    );
    assert_eq!(
        names(&objects(&sim, Kind::KubeadmControlPlane, stack).await),
        [format!("{stack}-control-plane")]
    );
    assert_eq!(
        names(&objects(&sim, Kind::MachineDeployment, stack).await),
        [format!("{stack}-default-worker")]
    );
    assert_eq!(
        names(&objects(&sim, Kind::OpenStackCluster, stack).await),
        [stack]
    );
    assert_eq!(machines(&sim, stack, None).await.len(), 1);
    let workers = machines(&sim, stack, Some("default-worker")).await;
    assert_eq!(workers.len(), 2);
    assert!(workers.iter().all(|m| m.data["status"].is_null()));

    sim.mark_ready(stack);
    assert_eq!(
        sim.last_write(stack),
        None,
        "mark_ready resets the last write"
    );
    let passes = sim.settle().await.expect("settle");
    assert_ready(&sim, stack, "v1.31.1", 1, &[("default-worker", 2)]).await;
    assert!(sim.last_write(stack).is_some());
    assert_eq!(
        sim.step().await.expect("step"),
        0,
        "a settled namespace costs no write"
    );

    // Scale down to one worker, removing the oldest one, which the
    // default order (the newest first) would keep.
    let (victim, keep) = (names(&workers)[0].clone(), names(&workers)[1].clone());
    sim.api(Kind::Machine)
        .patch(
            &victim,
            &PatchParams::default(),
            &Patch::Merge(
                json!({ "metadata": { "annotations": { ANNOTATION_DELETE_MACHINE: "" } } }),
            ),
        )
        .await
        .expect("annotate the Machine");
    patch_topology(&sim, stack, workers_patch(&[("default-worker", 1)])).await;
    sim.settle().await.expect("settle");
    assert_eq!(
        names(&machines(&sim, stack, Some("default-worker")).await),
        [keep]
    );
    assert_ready(&sim, stack, "v1.31.1", 1, &[("default-worker", 1)]).await;

    // Deletion: the finalizer keeps the Cluster until its children are
    // gone, which takes several passes.
    sim.api(Kind::Cluster)
        .delete(stack, &Default::default())
        .await
        .expect("delete the Cluster");
    let cluster = &objects(&sim, Kind::Cluster, stack).await[0];
    assert!(cluster.metadata.deletion_timestamp.is_some());
    let deletion = sim.settle().await.expect("settle");
    assert!(deletion > 2, "the deletion took {deletion} passes");
    for kind in [
        Kind::Cluster,
        Kind::KubeadmControlPlane,
        Kind::MachineDeployment,
        Kind::Machine,
        Kind::OpenStackCluster,
    ] {
        let left = sim
            .api(kind)
            .list(&ListParams::default())
            .await
            .expect("list")
            .items;
        assert!(left.is_empty(), "{kind:?} left: {:?}", names(&left));
    }
    eprintln!("capi_sim: ready in {passes} passes, deleted in {deletion}");
}

/// A failing cluster shows Nova's error where CAPO puts it; once ready,
/// an upgrade rolls out one Machine per pass, a nodegroup removed from the
/// topology goes, a topology that fails to reconcile shows
/// ReconcileFailed and reaches no object, and the background loop
/// converges by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_upgrade_nodegroup_removal_and_background_mode() {
    let Some((_env, sim)) = world().await else {
        return;
    };
    let stack = "k8s-b";
    let both = [("default-worker", 1), ("ng-2", 1)];
    sim.api(Kind::Cluster)
        .create(
            &PostParams::default(),
            &topology_cluster(stack, "v1.31.1", 3, &both),
        )
        .await
        .expect("create the Cluster");

    // Nova refuses the servers.
    sim.mark_failed(stack, QUOTA);
    sim.settle().await.expect("settle");
    let all = objects(&sim, Kind::Machine, stack).await;
    assert_eq!(all.len(), 5);
    for m in &all {
        assert_eq!(
            condition(m, "InfrastructureReady"),
            ("False", "InstanceCreateFailed", QUOTA)
        );
        assert_eq!(condition(m, "NodeHealthy").0, "False");
        assert_eq!(m.data["status"]["phase"], "Failed");
    }
    for md in &objects(&sim, Kind::MachineDeployment, stack).await {
        assert_eq!(md.data["status"]["phase"], "Failed");
        assert_eq!(condition(md, "Available"), ("False", "NotAvailable", QUOTA));
    }
    let osc = &objects(&sim, Kind::OpenStackCluster, stack).await[0];
    assert_eq!(osc.data["status"]["failureMessage"], QUOTA);
    assert_eq!(osc.data["status"]["ready"], false);
    let cluster = &objects(&sim, Kind::Cluster, stack).await[0];
    assert_eq!(
        condition(cluster, "InfrastructureReady"),
        ("False", "InstanceCreateFailed", QUOTA)
    );
    assert_eq!(condition(cluster, "ControlPlaneAvailable").0, "False");
    assert_eq!(condition(cluster, "TopologyReconciled").0, "True");

    sim.mark_ready(stack);
    sim.settle().await.expect("settle");
    assert_ready(&sim, stack, "v1.31.1", 3, &both).await;
    let before: BTreeSet<String> = names(&objects(&sim, Kind::Machine, stack).await)
        .into_iter()
        .collect();

    // An upgrade: one pass replaces one control-plane Machine; the control
    // plane reports the oldest version its Machines run until the last is
    // replaced.
    patch_topology(&sim, stack, json!({ "version": "v1.32.0" })).await;
    sim.step().await.expect("step");
    let kcp = &objects(&sim, Kind::KubeadmControlPlane, stack).await[0];
    assert_eq!(kcp.data["spec"]["version"], "v1.32.0");
    assert_eq!(kcp.data["status"]["version"], "v1.31.1");
    assert_eq!(kcp.data["status"]["upToDateReplicas"], 1);
    let cluster = &objects(&sim, Kind::Cluster, stack).await[0];
    assert_eq!(
        condition(cluster, "TopologyReconciled"),
        ("False", "ClusterUpgrading", "")
    );
    sim.settle().await.expect("settle");
    assert_ready(&sim, stack, "v1.32.0", 3, &both).await;
    let after: BTreeSet<String> = names(&objects(&sim, Kind::Machine, stack).await)
        .into_iter()
        .collect();
    assert!(
        before.is_disjoint(&after),
        "Machines not replaced: {:?}",
        before.intersection(&after).collect::<Vec<_>>()
    );

    // A nodegroup removed from the topology goes with its Machines; not
    // while the simulator is paused.
    patch_topology(&sim, stack, workers_patch(&[("default-worker", 1)])).await;
    sim.pause(true);
    assert_eq!(sim.step().await.expect("step"), 0);
    assert_eq!(machines(&sim, stack, Some("ng-2")).await.len(), 1);
    sim.pause(false);
    sim.settle().await.expect("settle");
    assert!(machines(&sim, stack, Some("ng-2")).await.is_empty());
    assert_ready(&sim, stack, "v1.32.0", 3, &[("default-worker", 1)]).await;

    // A topology the webhooks refuse: ReconcileFailed, and the resize
    // reaches no MachineDeployment.
    const REFUSED: &str = "admission webhook denied the request";
    sim.mark_topology_failed(stack, REFUSED);
    patch_topology(&sim, stack, workers_patch(&[("default-worker", 2)])).await;
    sim.settle().await.expect("settle");
    let cluster = &objects(&sim, Kind::Cluster, stack).await[0];
    assert_eq!(
        condition(cluster, "TopologyReconciled"),
        ("False", "ReconcileFailed", REFUSED)
    );
    assert_eq!(
        cluster.data["status"]["observedGeneration"],
        generation(cluster)
    );
    let md = &objects(&sim, Kind::MachineDeployment, stack).await[0];
    assert_eq!(md.data["spec"]["replicas"], 1);
    assert_eq!(machines(&sim, stack, Some("default-worker")).await.len(), 1);

    // The background loop applies the resize once the topology reconciles.
    sim.mark_ready(stack);
    let running = sim.run(Duration::from_millis(50));
    let md_name = format!("{stack}-default-worker");
    let resized = await_condition(
        sim.api(Kind::MachineDeployment),
        &md_name,
        |o: Option<&DynamicObject>| {
            o.is_some_and(|md| {
                md.data["spec"]["replicas"] == 2
                    && md.data["status"]["availableReplicas"] == 2
                    && md.data["status"]["observedGeneration"] == generation(md)
            })
        },
    );
    tokio::time::timeout(CONVERGE, resized)
        .await
        .expect("the background loop did not resize in time")
        .expect("watch the MachineDeployment");
    let reconciled = await_condition(
        sim.api(Kind::Cluster),
        stack,
        |o: Option<&DynamicObject>| {
            o.is_some_and(|c| condition(c, "TopologyReconciled").0 == "True")
        },
    );
    tokio::time::timeout(CONVERGE, reconciled)
        .await
        .expect("the background loop did not reconcile the topology in time")
        .expect("watch the Cluster");
    running.stop().await;
    assert_eq!(sim.errors(), Vec::<String>::new());
    assert_ready(&sim, stack, "v1.32.0", 3, &[("default-worker", 2)]).await;
}
