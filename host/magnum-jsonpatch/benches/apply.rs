//! A typical PATCH applied to a cluster document: the health report of
//! magnum-auto-healer (a Python-literal reason), a node count and a label
//! (Go: `BenchmarkApply`, 11.8 µs and 84 allocations there).

use criterion::{Criterion, criterion_group, criterion_main};
use magnum_jsonpatch::patch::{self, CLUSTER};
use python_semantics::{Dict, PyValue};
use std::hint::black_box;

fn cluster() -> Dict {
    let labels: Dict = [("kube_tag", PyValue::from("v1.30"))].into_iter().collect();
    [
        (
            "cluster_template_id",
            PyValue::from("e74c40e0-d825-11e2-a28f-0800200c9a66"),
        ),
        ("docker_volume_size", PyValue::from(20)),
        ("health_status", PyValue::None),
        ("health_status_reason", PyValue::Dict(Dict::new())),
        ("keypair", PyValue::None),
        ("labels", PyValue::Dict(labels)),
        ("master_count", PyValue::from(1)),
        ("name", PyValue::from("cluster1")),
        ("node_count", PyValue::from(1)),
        (
            "uuid",
            PyValue::from("5d12f6fd-a196-4bf0-ae4c-1f639a523a52"),
        ),
    ]
    .into_iter()
    .collect()
}

fn apply(c: &mut Criterion) {
    let body = br#"[{"op":"replace","path":"/node_count","value":3},{"op":"replace","path":"/health_status","value":"HEALTHY"},{"op":"replace","path":"/health_status_reason","value":"{'api': 'ok', 'node-0.Ready': 'True', 'node-1.Ready': 'True'}"},{"op":"add","path":"/labels/extra","value":"x"}]"#;
    let ops = patch::parse(body).expect("a valid patch");
    let doc = cluster();
    c.bench_function("apply cluster health patch", |b| {
        b.iter(|| patch::apply(black_box(&doc), black_box(&ops), &CLUSTER).is_ok())
    });
    c.bench_function("parse_and_check cluster health patch", |b| {
        b.iter(|| patch::parse_and_check(black_box(body), &CLUSTER).is_ok())
    });
    c.bench_function("parse_literal health reason", |b| {
        b.iter(|| {
            python_semantics::parse_literal(black_box(
                "{'api': 'ok', 'node-0.Ready': 'True', 'node-1.Ready': 'True'}",
            ))
            .is_ok()
        })
    });
}

criterion_group!(benches, apply);
criterion_main!(benches);
