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

fn kinds(s: &ApiServer, since: u64) -> Vec<(u64, &'static str, String)> {
    s.changes_since(since)
        .unwrap_or_else(|e| panic!("{e:?}"))
        .into_iter()
        .map(|c| {
            let rv = c.object["metadata"]["resourceVersion"]
                .as_str()
                .map(str::to_owned);
            // Every change carries the object at the change's version.
            assert_eq!(rv, Some(c.revision.to_string()));
            (c.revision, c.kind.as_str(), c.reference.name)
        })
        .collect()
}

#[test]
fn every_write_is_a_change_a_watch_can_resume_from() {
    let s = ApiServer::new();
    let revisions = s.revisions();
    block_on(s.apply(cm("a", json!({"data": {"k": "1"}})), "m")).unwrap_or_else(|e| panic!("{e}"));
    block_on(s.apply(cm("a", json!({"data": {"k": "2"}})), "m")).unwrap_or_else(|e| panic!("{e}"));
    // A no-op apply is no change.
    block_on(s.apply(cm("a", json!({"data": {"k": "2"}})), "m")).unwrap_or_else(|e| panic!("{e}"));
    block_on(s.apply(cm("b", json!({"metadata": {"finalizers": ["x/y"]}})), "m"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(block_on(s.delete(r("a"))).unwrap_or(false));
    assert!(block_on(s.delete(r("b"))).unwrap_or(false));
    s.finalize(&r("b"));
    assert_eq!(
        kinds(&s, 0),
        [
            (1, "ADDED", "a".to_owned()),
            (2, "MODIFIED", "a".to_owned()),
            (3, "ADDED", "b".to_owned()),
            (4, "DELETED", "a".to_owned()),
            (5, "MODIFIED", "b".to_owned()),
            (6, "DELETED", "b".to_owned()),
        ]
    );
    assert_eq!(kinds(&s, 4).len(), 2);
    assert_eq!(*revisions.borrow(), 6);
    let (items, at) = s.list_where(|_, _| true);
    assert_eq!((items.len(), at), (0, 6));
}

#[test]
fn create_and_replace_keep_their_preconditions() {
    let s = ApiServer::new();
    let lease = cm("lease", json!({"spec": {"holderIdentity": "one"}}));
    let made = s.create(&lease, "c").unwrap_or_else(|e| panic!("{e}"));
    assert!(made.json.contains("\"resourceVersion\":\"1\""));
    assert!(matches!(s.create(&lease, "c"), Err(HostError::Conflict(_))));
    let two = cm("lease", json!({"spec": {"holderIdentity": "two"}}));
    // Another writer moved it on: a stale version is refused.
    assert!(matches!(
        s.replace(&two, "c", Some(0)),
        Err(HostError::Conflict(_))
    ));
    let v = s
        .replace(&two, "c", Some(1))
        .unwrap_or_else(|e| panic!("{e}"));
    let v: Value = serde_json::from_str(&v.json).unwrap_or_default();
    assert_eq!(v["spec"]["holderIdentity"], "two");
    assert_eq!(v["metadata"]["generation"], 2);
    assert!(matches!(
        s.replace(&cm("none", json!({})), "c", None),
        Err(HostError::NotFound(_))
    ));
}

#[test]
fn a_watch_from_before_the_kept_changes_is_too_old() {
    let s = ApiServer::new();
    for i in 0..=KEPT_CHANGES {
        block_on(s.apply(cm("a", json!({"data": {"i": i.to_string()}})), "m"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(s.changes_since(0).err(), Some(TooOld { oldest: 1 }));
    assert_eq!(s.changes_since(1).map(|c| c.len()), Ok(KEPT_CHANGES));
}

#[test]
fn a_replace_dropping_the_last_finalizer_of_a_deleting_object_lets_it_go() {
    let s = ApiServer::new();
    let held = cm("a", json!({"metadata": {"finalizers": ["x/y"]}}));
    s.create(&held, "c").unwrap_or_else(|e| panic!("{e}"));
    assert!(block_on(s.delete(r("a"))).unwrap_or(false));
    assert!(s.object(&r("a")).is_some());
    s.replace(&cm("a", json!({"metadata": {}})), "c", None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(s.object(&r("a")).is_none());
    assert_eq!(kinds(&s, 2).last().map(|k| k.1), Some("DELETED"));
}
