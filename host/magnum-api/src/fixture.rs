//! The rows the nodegroup, federation and quota transcripts start from
//! (the Go API tests' `seed`), the callers they use and a snapshot of every
//! table to prove that refused requests change nothing.

use magnum_domain::Status;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup};

use super::testing::{Answer, TestApp};
use crate::openstack::STATIC_IMAGE_NAME;

pub const MEMBER: &[&str] = &[
    "X-Project-Id: p1",
    "X-User-Id: u1",
    "X-Roles: member,reader",
];
pub const READER: &[&str] = &["X-Project-Id: p1", "X-User-Id: u1", "X-Roles: reader"];
pub const OTHER: &[&str] = &[
    "X-Project-Id: p2",
    "X-User-Id: u2",
    "X-Roles: member,reader",
];
pub const ADMIN: &[&str] = &[
    "X-Project-Id: padmin",
    "X-User-Id: uadmin",
    "X-Roles: admin,member,reader",
];

pub const TEMPLATE_UUID: &str = "7e57a000-0000-4000-8000-000000000001";
pub const CLUSTER_UUID: &str = "c1000000-0000-4000-8000-000000000001";
pub const MASTER_UUID: &str = "a1000000-0000-4000-8000-000000000001";
pub const WORKER_UUID: &str = "a1000000-0000-4000-8000-000000000002";
pub const EXTRA_UUID: &str = "a1000000-0000-4000-8000-000000000003";

/// The time of the fixture's clock as Magnum renders it.
pub const NOW: &str = "2026-11-30T12:00:00+00:00";

/// The application with a template of p1 (fake driver), cluster `c1` of p1
/// (`CREATE_COMPLETE`, labels `{"a": "1"}`, an API address) with its
/// default master and worker, and a non-default worker `extra`
/// (node_count 2, min 1, max 5).
pub async fn seeded() -> TestApp {
    let app = TestApp::new().await;
    let mut q = app.t.db.q();
    let s = |v: &str| Some(v.to_string());
    let labels = || Some([("a".to_string(), "1".to_string())].into());
    let mut t = ClusterTemplate {
        tls_disabled: Some(false),
        registry_enabled: Some(false),
        labels: Some(Default::default()),
        ..crate::conductor::testing::fake_template(TEMPLATE_UUID, "t1")
    };
    q.create_cluster_template(&mut t).await.expect("template");
    let mut cl = Cluster {
        uuid: CLUSTER_UUID.into(),
        name: "c1".into(),
        project_id: "p1".into(),
        user_id: "u1".into(),
        cluster_template_id: TEMPLATE_UUID.into(),
        labels: labels(),
        flavor_id: s("m1.small"),
        master_flavor_id: s("m1.small"),
        api_address: s("https://10.0.0.1:6443"),
        status: Some(Status::CreateComplete),
        stack_id: s("stack-1"),
        ..Cluster::default()
    };
    q.create_cluster(&mut cl).await.expect("cluster");
    for (uuid, name, role, count, min, max, default) in [
        (MASTER_UUID, "default-master", "master", 1, 0, None, true),
        (WORKER_UUID, "default-worker", "worker", 3, 0, None, true),
        (EXTRA_UUID, "extra", "worker", 2, 1, Some(5), false),
    ] {
        let mut ng = NodeGroup {
            uuid: uuid.into(),
            name: name.into(),
            cluster_id: CLUSTER_UUID.into(),
            project_id: "p1".into(),
            role: s(role),
            node_count: Some(count),
            min_node_count: Some(min),
            max_node_count: max,
            is_default: Some(default),
            status: Some(Status::CreateComplete),
            flavor_id: s("m1.small"),
            image_id: s(STATIC_IMAGE_NAME),
            labels: labels(),
            ..NodeGroup::default()
        };
        q.create_nodegroup(&mut ng).await.expect("nodegroup");
    }
    app
}

/// Every row of every table.
pub async fn snapshot(app: &TestApp) -> crate::db::testing::Rows {
    crate::db::testing::table_digest(&app.t.db).await
}

/// The `detail` of an error answer (`""` for any other).
pub fn detail(a: &Answer) -> String {
    serde_json::from_slice::<serde_json::Value>(&a.body)
        .ok()
        .and_then(|v| v["errors"][0]["detail"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Checks the status and, when `want` is not empty, the error detail.
#[track_caller]
pub fn expect(a: &Answer, status: u16, want: &str) {
    assert_eq!(a.status.as_u16(), status, "{}", a.text());
    if !want.is_empty() {
        assert_eq!(detail(a), want, "{}", a.text());
    }
}
