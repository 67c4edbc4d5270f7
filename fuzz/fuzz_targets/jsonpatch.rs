//! Magnum's JSON Patch: a PATCH body applied to a cluster or a nodegroup
//! document. The first byte picks the document (even: cluster, odd:
//! nodegroup), the rest is the body. Checks: nothing panics, the document is
//! left unchanged, and the patched structured values go through WSME's type
//! checks and the JSON conversion without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use magnum_jsonpatch::patch::{self, CLUSTER, NODE_GROUP};
use python_semantics::{Dict, PyValue, python};

fn dict(entries: Vec<(&str, PyValue)>) -> PyValue {
    PyValue::Dict(entries.into_iter().collect())
}

fn cluster() -> Dict {
    vec![
        (
            "cluster_template_id",
            "e74c40e0-d825-11e2-a28f-0800200c9a66".into(),
        ),
        ("docker_volume_size", PyValue::from(20)),
        ("health_status", PyValue::None),
        ("health_status_reason", dict(vec![])),
        ("keypair", PyValue::None),
        ("labels", dict(vec![("kube_tag", "v1.30".into())])),
        ("master_count", PyValue::from(1)),
        ("name", "cluster1".into()),
        ("node_count", PyValue::from(1)),
        ("uuid", "5d12f6fd-a196-4bf0-ae4c-1f639a523a52".into()),
    ]
    .into_iter()
    .collect()
}

fn nodegroup() -> Dict {
    vec![
        ("max_node_count", PyValue::None),
        ("min_node_count", PyValue::from(0)),
        ("name", "nodegroup1".into()),
        ("node_count", PyValue::from(2)),
        ("node_labels", dict(vec![])),
        ("node_taints", PyValue::List(vec![])),
        ("role", "worker".into()),
        ("uuid", "483203a3-dbee-4a9c-9d65-9820512f4df8".into()),
    ]
    .into_iter()
    .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    let (doc, rules) = if which % 2 == 1 {
        (nodegroup(), NODE_GROUP)
    } else {
        (cluster(), CLUSTER)
    };
    let Ok(ops) = patch::parse_and_check(body, &rules) else {
        return;
    };
    let before = python::repr(&doc);
    let result = patch::apply(&doc, &ops, &rules);
    assert_eq!(python::repr(&doc), before, "apply changed its input");
    let Ok(out) = result else {
        return;
    };
    for key in ["labels", "node_labels"] {
        if let Some(v) = out.get(key) {
            let _ = patch::labels(key, v);
            let _ = patch::string_map(key, v);
            let _ = patch::string_map_order(v);
        }
    }
    if let Some(v) = out.get("health_status_reason") {
        let _ = patch::string_map("health_status_reason", v);
    }
    if let Some(v) = out.get("node_taints") {
        let _ = patch::taints("node_taints", v);
    }
    let _ = PyValue::Dict(out).to_json();
});
