//! The in-memory cluster through kube-rs, as the service uses it.

use std::time::Duration;

use driver_host::{KubeAccess, KubeObject, ObjectRef, Selector};
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DynamicObject, PostParams};
use kube::runtime::watcher::{self, Event};
use serde_json::json;

use super::{MemoryCluster, plural};
use crate::management::ManagementCluster;

fn cm(name: &str, data: serde_json::Value) -> KubeObject {
    KubeObject {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some("magnum-system".into()),
        name: name.into(),
        json: json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "magnum-system", "labels": {"cluster": "c1"}},
            "data": data,
        })
        .to_string(),
    }
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn plurals_are_the_resource_names_kubernetes_uses() {
    for (kind, want) in [
        ("ConfigMap", "configmaps"),
        ("OpenStackClusterTemplate", "openstackclustertemplates"),
        ("Ingress", "ingresses"),
        ("NetworkPolicy", "networkpolicies"),
        ("Gateway", "gateways"),
    ] {
        assert_eq!(plural(kind), want);
    }
}

#[tokio::test]
async fn the_management_cluster_reaches_the_store_through_kube_rs() {
    let memory = MemoryCluster::new();
    let mc = ManagementCluster::in_memory(memory.clone());
    let applied = ok(mc
        .apply(cm("a", json!({"k": "1"})), "openkeel-magnum-hello")
        .await);
    let v: serde_json::Value = ok(serde_json::from_str(&applied.json));
    assert_eq!(v["data"]["k"], "1");
    assert_eq!(
        v["metadata"]["managedFields"][0]["manager"],
        "openkeel-magnum-hello"
    );
    let r = ObjectRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some("magnum-system".into()),
        name: "a".into(),
    };
    assert!(ok(mc.get(r.clone()).await).is_some());
    let selector = Selector {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some("magnum-system".into()),
        labels: vec![("cluster".into(), "c1".into())],
    };
    assert_eq!(ok(mc.list(selector.clone()).await).len(), 1);
    let other = Selector {
        labels: vec![("cluster".into(), "c2".into())],
        ..selector
    };
    assert!(ok(mc.list(other).await).is_empty());
    // The envelope is checked as a server does.
    let mut wrong = cm("b", json!({}));
    wrong.name = "c".into();
    assert!(mc.apply(wrong, "m").await.is_err());
    assert!(ok(mc.delete(r.clone()).await));
    assert!(ok(mc.get(r.clone()).await).is_none());
    assert!(!ok(mc.delete(r).await));
    assert!(ok(mc.served("cluster.x-k8s.io/v1beta2", "Cluster").await));
    // A kind the store does not serve is not served.
    memory.store().unserve("example.com/v1", "Widget");
    assert!(!ok(mc.served("example.com/v1", "Widget").await));
}

#[tokio::test]
async fn a_watch_sees_the_list_then_every_change() {
    let memory = MemoryCluster::new();
    let mc = ManagementCluster::in_memory(memory.clone());
    ok(mc.apply(cm("a", json!({"k": "1"})), "m").await);
    let api = ok(mc.watch_api("v1", "ConfigMap", Some("magnum-system")).await)
        .unwrap_or_else(|| panic!("ConfigMaps are served"));
    let events = watcher::watcher::<DynamicObject>(api, watcher::Config::default());
    futures::pin_mut!(events);
    let mut next = async || -> Event<DynamicObject> {
        match tokio::time::timeout(Duration::from_secs(5), events.next()).await {
            Ok(Some(Ok(e))) => e,
            other => panic!("no event: {:?}", other.map(|o| o.map(|r| r.err()))),
        }
    };
    assert!(matches!(next().await, Event::Init));
    assert!(matches!(next().await, Event::InitApply(o) if o.metadata.name.as_deref() == Some("a")));
    assert!(matches!(next().await, Event::InitDone));
    ok(mc.apply(cm("a", json!({"k": "2"})), "m").await);
    match next().await {
        Event::Apply(o) => assert_eq!(o.data["data"]["k"], "2"),
        e => panic!("{e:?}"),
    }
    ok(mc.apply(cm("b", json!({})), "m").await);
    assert!(matches!(next().await, Event::Apply(o) if o.metadata.name.as_deref() == Some("b")));
    let r = ObjectRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some("magnum-system".into()),
        name: "a".into(),
    };
    ok(mc.delete(r).await);
    assert!(matches!(next().await, Event::Delete(o) if o.metadata.name.as_deref() == Some("a")));
}

#[tokio::test]
async fn a_lease_is_created_and_replaced_with_its_version() {
    let memory = MemoryCluster::new();
    let leases: Api<Lease> = Api::namespaced(memory.client(), "magnum-system");
    let mut lease = Lease::default();
    lease.metadata.name = Some("holder".into());
    let made = ok(leases.create(&PostParams::default(), &lease).await);
    assert!(leases.create(&PostParams::default(), &lease).await.is_err());
    let mut stale = made.clone();
    ok(leases
        .replace("holder", &PostParams::default(), &made)
        .await);
    // The version moved on: the old one is a conflict.
    stale.metadata.resource_version = made.metadata.resource_version.clone();
    match leases
        .replace("holder", &PostParams::default(), &stale)
        .await
    {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 409),
        other => panic!("{:?}", other.map(|l| l.metadata.resource_version)),
    }
    assert!(ok(leases.get_opt("holder").await).is_some());
    assert!(ok(leases.get_opt("nobody").await).is_none());
}

#[tokio::test]
async fn a_watch_from_a_forgotten_version_is_told_it_is_gone() {
    use kube::api::WatchParams;
    use kube::core::WatchEvent;
    let memory = MemoryCluster::new();
    let mc = ManagementCluster::in_memory(memory.clone());
    // More changes than the server keeps.
    for i in 0..=driver_host::access::memory::kube::KEPT_CHANGES + 1 {
        ok(memory
            .store()
            .apply(cm("a", json!({"i": i.to_string()})), "m")
            .await);
    }
    let api = ok(mc.watch_api("v1", "ConfigMap", Some("magnum-system")).await)
        .unwrap_or_else(|| panic!("ConfigMaps are served"));
    let events = ok(api.watch(&WatchParams::default().timeout(5), "1").await);
    futures::pin_mut!(events);
    match tokio::time::timeout(Duration::from_secs(5), events.next()).await {
        Ok(Some(Ok(WatchEvent::Error(e)))) => assert_eq!(e.code, 410),
        other => panic!("{:?}", other.map(|o| o.map(|r| r.is_ok()))),
    }
}

#[tokio::test]
async fn a_lease_written_without_its_namespace_is_in_the_requests() {
    let memory = MemoryCluster::new();
    let leases: Api<Lease> = Api::namespaced(memory.client(), "magnum-system");
    let mut lease = Lease::default();
    lease.metadata.name = Some("holder".into());
    ok(leases.create(&PostParams::default(), &lease).await);
    let got = ok(leases.get("holder").await);
    assert_eq!(got.metadata.namespace.as_deref(), Some("magnum-system"));
}
