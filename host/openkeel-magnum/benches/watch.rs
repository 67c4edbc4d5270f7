//! What the watches cost: the memory a reflector's store holds per 1,000
//! watched objects of a Cluster API cluster's size (about 4.6 KB of JSON
//! each), measured as the allocator's committed memory before and after
//! 10,000 of them, and the time to apply one change and to take a
//! cluster's snapshot (13 objects) out of a store of 10,000.

use std::collections::BTreeMap;

use criterion::{Criterion, criterion_group, criterion_main};
use driver_host::KubeObject;
use openkeel_magnum::watch::Store;

const OBJECTS: usize = 10_000;
/// Objects per cluster: a 3-master, 2-nodegroup cluster's.
const PER_CLUSTER: usize = 13;

fn object(i: usize) -> KubeObject {
    let cluster = format!("cluster-{:05}", i / PER_CLUSTER);
    let name = format!("{cluster}-object-{i:06}");
    let conditions: Vec<serde_json::Value> = (0..19)
        .map(|c| {
            serde_json::json!({
                "type": format!("Condition{c}Ready"),
                "status": "True",
                "reason": "AsExpected",
                "message": "the component is up and reconciled as its spec says",
                "lastTransitionTime": "2026-11-30T14:27:03Z",
                "observedGeneration": 4,
            })
        })
        .collect();
    let v = serde_json::json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Machine",
        "metadata": {
            "name": name,
            "namespace": "magnum-system",
            "uid": format!("6f1d2c3b-4a59-4e8d-9c7b-{i:012}"),
            "resourceVersion": "123456",
            "generation": 4,
            "creationTimestamp": "2026-11-30T14:27:03Z",
            "labels": {
                "cluster.x-k8s.io/cluster-name": cluster,
                "topology.cluster.x-k8s.io/owned": "",
                "cluster.x-k8s.io/deployment-name": format!("{cluster}-default-worker"),
            },
            "annotations": {
                "cluster.x-k8s.io/cloned-from-name": "magnum-v0-13-0-worker",
                "machine.cluster.x-k8s.io/certificates-expiry": "2027-11-30T14:27:03Z",
            },
        },
        "spec": {
            "clusterName": cluster,
            "version": "v1.30.4",
            "providerID": "openstack:///4b7c9d2e-1f3a-4c5b-8d6e-7f8a9b0c1d2e",
            "bootstrap": {"dataSecretName": format!("{name}-bootstrap")},
        },
        "status": {
            "phase": "Running",
            "addresses": [{"type": "InternalIP", "address": "10.0.0.17"}],
            "conditions": conditions,
        },
    });
    KubeObject {
        api_version: "cluster.x-k8s.io/v1beta2".into(),
        kind: "Machine".into(),
        namespace: Some("magnum-system".into()),
        name,
        json: v.to_string(),
    }
}

fn selector(cluster: usize) -> BTreeMap<String, String> {
    [(
        "cluster.x-k8s.io/cluster-name".to_string(),
        format!("cluster-{cluster:05}"),
    )]
    .into()
}

/// The allocator's committed memory, in bytes, after giving back what it
/// does not use.
fn committed() -> usize {
    openkeel_magnum::memory::release_free_memory();
    let (mut elapsed, mut user, mut system, mut rss, mut peak_rss) = (0, 0, 0, 0, 0);
    let (mut commit, mut peak_commit, mut faults) = (0, 0, 0);
    // SAFETY: every pointer is to a local that outlives the call.
    unsafe {
        libmimalloc_sys::mi_process_info(
            &mut elapsed,
            &mut user,
            &mut system,
            &mut rss,
            &mut peak_rss,
            &mut commit,
            &mut peak_commit,
            &mut faults,
        );
    }
    commit
}

/// A store of `OBJECTS` objects, watched by every cluster's selector.
fn filled(objects: Vec<KubeObject>) -> Store {
    let mut s = Store::default();
    for c in 0..OBJECTS.div_ceil(PER_CLUSTER) {
        s.watch(&format!("uuid-{c}"), vec![selector(c)]);
    }
    s.set_served(true);
    s.replace(objects);
    s
}

fn watch(c: &mut Criterion) {
    let objects: Vec<KubeObject> = (0..OBJECTS).map(object).collect();
    let json: usize = objects.iter().map(|o| o.json.len()).sum();
    let before = committed();
    let store = filled(objects.clone());
    let after = committed();
    let per_1000 = after.saturating_sub(before) as f64 / (OBJECTS as f64 / 1000.0);
    println!(
        "reflector memory per 1,000 watched objects: {:.1} MiB committed for {:.1} MiB of JSON \
         ({OBJECTS} objects of {} bytes on average)",
        per_1000 / (1 << 20) as f64,
        (json as f64 / (OBJECTS as f64 / 1000.0)) / (1 << 20) as f64,
        json / OBJECTS
    );
    assert_eq!(store.size().0, OBJECTS);
    assert_eq!(store.observe(&selector(7)).objects.len(), PER_CLUSTER);

    c.bench_function(
        "snapshot of one cluster (13 objects) from a store of 10,000",
        |b| b.iter(|| store.observe(&selector(421)).objects.len()),
    );
    let mut store = store;
    let changed = object(5_000);
    c.bench_function("one watched object changed, in a store of 10,000", |b| {
        b.iter(|| store.apply(changed.clone()).len())
    });
}

criterion_group!(benches, watch);
criterion_main!(benches);
