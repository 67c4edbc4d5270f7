//! Go `TestGetNodeGroup`, `TestCreateNodeGroupResolvesDriverByTuple` and
//! `TestUpdateAndDeleteNodeGroup` (their row changes; the driver calls are
//! not made yet).

use magnum_domain::models::{Cluster, NodeGroup};
use magnum_domain::{RequestContext, Status};

use crate::conductor::testing::TestConductor;
use crate::db::{ListOptions, Scope};

const CLUSTER: &str = "c1000000-0000-4000-8000-000000000001";

fn member(project: &str) -> RequestContext {
    RequestContext {
        project_id: project.into(),
        user_id: "u1".into(),
        ..RequestContext::default()
    }
}

fn status<T: std::fmt::Debug>(r: super::Result<T>) -> u16 {
    match r {
        Err(super::Error::Client(e)) => e.status,
        other => panic!("want a client error, got {other:?}"),
    }
}

/// Cluster c1 of p1 with a default worker (id 1) and a nodegroup named
/// "1234" (id 2).
async fn fixture() -> (TestConductor, Cluster) {
    let t = TestConductor::new().await;
    let mut cl = Cluster {
        uuid: CLUSTER.into(),
        name: "c1".into(),
        project_id: "p1".into(),
        user_id: "u1".into(),
        status: Some(Status::CreateComplete),
        ..Cluster::default()
    };
    t.db.q().create_cluster(&mut cl).await.unwrap();
    for (uuid, name, default) in [
        (
            "a1000000-0000-4000-8000-000000000001",
            "default-worker",
            true,
        ),
        ("a1000000-0000-4000-8000-000000000002", "1234", false),
    ] {
        let mut ng = NodeGroup {
            uuid: uuid.into(),
            name: name.into(),
            cluster_id: CLUSTER.into(),
            project_id: "p1".into(),
            role: Some("worker".into()),
            node_count: Some(1),
            is_default: Some(default),
            status: Some(Status::CreateComplete),
            ..NodeGroup::default()
        };
        t.db.q().create_nodegroup(&mut ng).await.unwrap();
    }
    (t, cl)
}

#[tokio::test]
async fn nodegroups_are_found_by_id_uuid_or_name_in_the_callers_scope() {
    let (t, _) = fixture().await;
    let c = &t.conductor;
    let p1 = member("p1");
    for (ident, want) in [
        ("1", "default-worker"),
        ("a1000000-0000-4000-8000-000000000002", "1234"),
        ("default-worker", "default-worker"),
    ] {
        let ng = c.get_nodegroup(&p1, CLUSTER, ident).await.unwrap();
        assert_eq!(ng.name, want, "{ident}");
    }
    // Magnum: an integer-like ident is an id, so a nodegroup named "1234"
    // cannot be reached by name.
    assert_eq!(status(c.get_nodegroup(&p1, CLUSTER, "1234").await), 404);
    assert_eq!(
        status(
            c.get_nodegroup(&member("p2"), CLUSTER, "default-worker")
                .await
        ),
        404,
        "another project"
    );
    assert_eq!(
        status(
            c.get_nodegroup(&member(""), CLUSTER, "default-worker")
                .await
        ),
        404,
        "no project"
    );
    let admin = RequestContext {
        is_admin: true,
        ..member("p9")
    };
    assert_eq!(
        c.get_nodegroup(&admin, CLUSTER, "1").await.unwrap().name,
        "default-worker",
        "admins see every project's nodegroups"
    );
    let rows = c
        .list_nodegroups(&p1, CLUSTER, Some("worker"), &ListOptions::default())
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        c.list_nodegroups(&member(""), CLUSTER, None, &ListOptions::default())
            .await
            .unwrap()
            .is_empty()
    );
    let unknown = ListOptions {
        marker: Some("a1000000-0000-4000-8000-0000000000ff".into()),
        ..ListOptions::default()
    };
    assert_eq!(
        status(c.list_nodegroups(&p1, CLUSTER, None, &unknown).await),
        404
    );
    assert!(c.nodegroup_name_used(CLUSTER, "1234").await.unwrap());
    assert!(!c.nodegroup_name_used(CLUSTER, "12345").await.unwrap());
}

#[tokio::test]
async fn create_stores_the_row_in_progress_and_guards_names_and_states() {
    let (t, cl) = fixture().await;
    let c = &t.conductor;
    let ng = NodeGroup {
        uuid: "0e000000-0000-4000-8000-000000000001".into(),
        name: "new".into(),
        cluster_id: CLUSTER.into(),
        project_id: "p1".into(),
        role: Some("worker".into()),
        node_count: Some(2),
        min_node_count: Some(0),
        ..NodeGroup::default()
    };
    let row = c.create_nodegroup(&cl, ng.clone()).await.unwrap();
    assert!(row.id > 0);
    assert_eq!(row.created_at, t.now());
    assert_eq!(row.status, Some(Status::CreateInProgress));
    let stored = c
        .get_nodegroup(&member("p1"), CLUSTER, &ng.uuid)
        .await
        .unwrap();
    assert_eq!(stored.status, Some(Status::CreateInProgress));
    let cluster =
        t.db.q()
            .get_cluster_by_uuid(CLUSTER, &Scope::ALL_PROJECTS)
            .await
            .unwrap();
    assert_eq!(cluster.status, Some(Status::UpdateInProgress));
    let dup = NodeGroup {
        uuid: "0e000000-0000-4000-8000-000000000002".into(),
        ..ng.clone()
    };
    assert_eq!(status(c.create_nodegroup(&cl, dup).await), 409);
    let refused = NodeGroup {
        uuid: "0e000000-0000-4000-8000-000000000003".into(),
        name: "x".into(),
        status: Some(Status::DeleteFailed),
        ..ng
    };
    match c.create_nodegroup(&cl, refused).await {
        Err(super::Error::Client(e)) => {
            assert_eq!(e.status, 409);
            assert_eq!(
                e.message,
                "nodegroup_create when nodegroup status is \"DELETE_FAILED\" is not supported."
            );
        }
        other => panic!("state guard: {other:?}"),
    }
}

#[tokio::test]
async fn update_writes_patchable_columns_and_delete_spares_defaults() {
    let (t, cl) = fixture().await;
    let c = &t.conductor;
    let p1 = member("p1");
    let mut ng = c.get_nodegroup(&p1, CLUSTER, "2").await.unwrap();
    assert!(
        c.update_nodegroup(&cl, &ng, &["node_count"]).await.is_err(),
        "node_count is not patchable"
    );
    ng.max_node_count = Some(4);
    let saved = c
        .update_nodegroup(&cl, &ng, &["max_node_count"])
        .await
        .unwrap();
    assert_eq!(saved.updated_at, Some(t.now()));
    let row = c.get_nodegroup(&p1, CLUSTER, "2").await.unwrap();
    assert_eq!(
        (row.max_node_count, row.status),
        (Some(4), Some(Status::UpdateInProgress))
    );
    let def = c.get_nodegroup(&p1, CLUSTER, "1").await.unwrap();
    assert_eq!(status(c.delete_nodegroup(&cl, &def).await), 400);
    c.delete_nodegroup(&cl, &row).await.unwrap();
    let row = c.get_nodegroup(&p1, CLUSTER, "2").await.unwrap();
    assert_eq!(row.status, Some(Status::DeleteInProgress));
    // The state guard of updates reads the stored status.
    match c.update_nodegroup(&cl, &row, &["max_node_count"]).await {
        Err(super::Error::Client(e)) => assert_eq!(
            e.message,
            "nodegroup_update when nodegroup status is \"DELETE_IN_PROGRESS\" is not supported."
        ),
        other => panic!("state guard: {other:?}"),
    }
}

#[tokio::test]
async fn the_template_and_the_flavor_are_checked() {
    let (t, cl) = fixture().await;
    let c = &t.conductor;
    assert_eq!(status(c.template_of(&cl).await), 404);
    let none = Default::default();
    let p1 = member("p1");
    c.check_flavor_root_volume(&p1, Some("m1.small"), &none)
        .await
        .unwrap();
    let boot: magnum_domain::models::StringMap =
        [("boot_volume_size".to_string(), "10".to_string())].into();
    c.check_flavor_root_volume(&p1, Some("nope"), &boot)
        .await
        .unwrap();
    let bad: magnum_domain::models::StringMap =
        [("boot_volume_size".to_string(), "ten".to_string())].into();
    assert_eq!(
        status(c.check_flavor_root_volume(&p1, None, &bad).await),
        400
    );
}
