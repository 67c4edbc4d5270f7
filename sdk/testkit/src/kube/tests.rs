use serde_json::json;

use super::*;

fn cm(name: &str, body: Value) -> KubeObject {
    KubeObject {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some("ns".into()),
        name: name.into(),
        json: body.to_string(),
    }
}

fn r(name: &str) -> ObjectRef {
    cm(name, json!({})).reference()
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt.block_on(f),
        Err(e) => panic!("runtime: {e}"),
    }
}

#[test]
fn apply_sets_the_server_metadata_and_a_no_op_apply_changes_nothing() {
    let s = ApiServer::new();
    let body = json!({"metadata": {"name": "a", "uid": "client-made"}, "data": {"k": "v"}});
    let got = block_on(s.apply(cm("a", body.clone()), "m1")).unwrap_or_else(|e| panic!("{e}"));
    let v: Value = serde_json::from_str(&got.json).unwrap_or_default();
    assert_eq!(v["metadata"]["uid"], "00000000-0000-4000-8000-000000000001");
    assert_eq!(v["metadata"]["generation"], 1);
    assert_eq!(v["metadata"]["resourceVersion"], "1");
    assert_eq!(v["metadata"]["managedFields"][0]["manager"], "m1");
    assert_eq!(v["data"]["k"], "v");
    let again = block_on(s.apply(cm("a", body), "m1")).unwrap_or_else(|e| panic!("{e}"));
    let v2: Value = serde_json::from_str(&again.json).unwrap_or_default();
    assert_eq!(v2["metadata"]["resourceVersion"], "1");
    assert_eq!(v2["metadata"]["generation"], 1);
}

#[test]
fn each_manager_owns_what_it_last_applied() {
    let s = ApiServer::new();
    let a = |body: Value, m: &str| {
        block_on(s.apply(cm("a", body), m)).unwrap_or_else(|e| panic!("{e}"));
    };
    a(json!({"data": {"x": "1", "y": "1"}}), "m1");
    a(json!({"data": {"z": "2"}}), "m2");
    // m1 stops setting y: it goes; m2's z stays.
    a(json!({"data": {"x": "3"}}), "m1");
    let v = s.object(&r("a")).unwrap_or_default();
    assert_eq!(v["data"], json!({"x": "3", "z": "2"}));
    assert_eq!(v["metadata"]["generation"], 3);
    assert_eq!(s.managers(&r("a")), ["m1", "m2"]);
}

#[test]
fn status_from_a_controller_does_not_bump_the_generation() {
    let s = ApiServer::new();
    block_on(s.apply(cm("a", json!({"data": {}})), "m1")).unwrap_or_else(|e| panic!("{e}"));
    assert!(s.set_status(&r("a"), json!({"ready": true})));
    assert!(!s.set_status(&r("missing"), json!({})));
    let v = s.object(&r("a")).unwrap_or_default();
    assert_eq!(v["status"]["ready"], true);
    assert_eq!(v["metadata"]["generation"], 1);
    assert_eq!(v["metadata"]["resourceVersion"], "2");
    // Status does not count in a snapshot's spec part.
    assert!(s.snapshot()[&r("a")].get("status").is_none());
}

#[test]
fn list_filters_by_kind_namespace_and_every_label() {
    let s = ApiServer::new();
    let put = |name: &str, labels: Value| {
        block_on(s.apply(cm(name, json!({"metadata": {"labels": labels}})), "m"))
            .unwrap_or_else(|e| panic!("{e}"));
    };
    put("a", json!({"c": "1", "role": "x"}));
    put("b", json!({"c": "2"}));
    let sel = |labels: &[(&str, &str)]| Selector {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some("ns".into()),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    let names = |sel: Selector| -> Vec<String> {
        block_on(s.list(sel))
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|o| o.name)
            .collect()
    };
    assert_eq!(names(sel(&[])), ["a", "b"]);
    assert_eq!(names(sel(&[("c", "1")])), ["a"]);
    assert!(names(sel(&[("c", "1"), ("role", "y")])).is_empty());
    let mut other_ns = sel(&[]);
    other_ns.namespace = Some("other".into());
    assert!(names(other_ns).is_empty());
}

#[test]
fn delete_waits_for_finalizers() {
    let s = ApiServer::new();
    let body = json!({"metadata": {"finalizers": ["x/y"]}});
    block_on(s.apply(cm("a", body), "m")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(block_on(s.delete(r("a"))).ok(), Some(true));
    let v = s.object(&r("a")).unwrap_or_default();
    assert_eq!(v["metadata"]["deletionTimestamp"], SERVER_TIME);
    s.finalize(&r("a"));
    assert!(s.object(&r("a")).is_none());
    assert_eq!(block_on(s.delete(r("a"))).ok(), Some(false));
}

#[test]
fn a_body_that_is_not_an_object_is_invalid() {
    let s = ApiServer::new();
    let mut o = cm("a", json!({}));
    o.json = "[1]".into();
    assert!(matches!(
        block_on(s.apply(o, "m")),
        Err(HostError::Invalid(_))
    ));
    assert!(s.objects().is_empty());
}
