//! The hub's parts that need no API server; the watches themselves are
//! tested against a real kube-apiserver in `tests/e2e/watch.rs`.

use super::*;

#[test]
fn the_backoff_doubles_up_to_its_bound_and_starts_over() {
    let mut b = Backoff::default();
    let waits: Vec<u64> = (0..7)
        .filter_map(|_| Iterator::next(&mut b))
        .map(|d| d.as_millis() as u64)
        .collect();
    assert_eq!(waits, [500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    kube::runtime::utils::Backoff::reset(&mut b);
    assert_eq!(Iterator::next(&mut b), Some(Duration::from_millis(500)));
}

#[test]
fn keys_name_the_kind_and_namespace() {
    let s = Selector {
        api_version: "cluster.x-k8s.io/v1beta2".into(),
        kind: "Machine".into(),
        namespace: Some("magnum-system".into()),
        labels: Vec::new(),
    };
    assert_eq!(
        Key::of(&s).to_string(),
        "cluster.x-k8s.io/v1beta2/Machine in magnum-system"
    );
    let cluster_scoped = Key {
        namespace: None,
        ..Key::of(&s)
    };
    assert_eq!(
        cluster_scoped.to_string(),
        "cluster.x-k8s.io/v1beta2/Machine"
    );
}
