//! Go `TestGetNodeGroup`, `TestCreateNodeGroupResolvesDriverByTuple` and
//! `TestUpdateAndDeleteNodeGroup`, with the fake driver.

use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup};
use magnum_domain::{RequestContext, Status};

use crate::db::{ListOptions, Scope};
use crate::testing::TestConductor;

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

/// Cluster c1 of p1 (template of the fake driver, found by `driver` or,
/// without it, by its (server type, distro, COE)) with a default worker
/// (id 1) and a nodegroup named "1234" (id 2).
async fn fixture_with(driver: Option<&str>) -> (TestConductor, Cluster) {
    let t = TestConductor::new().await;
    let mut tmpl = ClusterTemplate {
        uuid: "7e57a000-0000-4000-8000-000000000001".into(),
        name: "t1".into(),
        project_id: "p1".into(),
        user_id: "u1".into(),
        coe: Some("kubernetes".into()),
        server_type: Some("vm".into()),
        cluster_distro: Some("ubuntu".into()),
        driver: driver.map(str::to_owned),
        ..ClusterTemplate::default()
    };
    t.db.q().create_cluster_template(&mut tmpl).await.unwrap();
    let mut cl = Cluster {
        uuid: CLUSTER.into(),
        name: "c1".into(),
        project_id: "p1".into(),
        user_id: "u1".into(),
        cluster_template_id: tmpl.uuid.clone(),
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
            is_default: Some(default),
            status: Some(Status::CreateComplete),
            ..worker(uuid, name, 1)
        };
        t.db.q().create_nodegroup(&mut ng).await.unwrap();
    }
    (t, cl)
}

async fn fixture() -> (TestConductor, Cluster) {
    fixture_with(Some("fake")).await
}

/// A worker nodegroup of p1 in cluster c1.
fn worker(uuid: &str, name: &str, node_count: i32) -> NodeGroup {
    NodeGroup {
        uuid: uuid.into(),
        name: name.into(),
        cluster_id: CLUSTER.into(),
        project_id: "p1".into(),
        role: Some("worker".into()),
        node_count: Some(node_count),
        ..NodeGroup::default()
    }
}

/// Cluster c1 as stored.
async fn stored_cluster(t: &TestConductor) -> Cluster {
    t.db.q()
        .get_cluster_by_uuid(CLUSTER, &Scope::ALL_PROJECTS)
        .await
        .unwrap()
}

async fn cluster_status(t: &TestConductor) -> Option<Status> {
    stored_cluster(t).await.status
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
    // The template names no driver: the fake driver provides its tuple.
    let (t, cl) = fixture_with(None).await;
    let c = &t.conductor;
    let ng = NodeGroup {
        min_node_count: Some(0),
        ..worker("0e000000-0000-4000-8000-000000000001", "new", 2)
    };
    let row = c
        .create_nodegroup(&member("p1"), &cl, ng.clone())
        .await
        .unwrap();
    assert!(row.id > 0);
    assert_eq!(row.created_at, t.now());
    assert_eq!(row.status, Some(Status::CreateInProgress));
    let stored = c
        .get_nodegroup(&member("p1"), CLUSTER, &ng.uuid)
        .await
        .unwrap();
    assert_eq!(stored.status, Some(Status::CreateInProgress));
    assert_eq!(cluster_status(&t).await, Some(Status::UpdateInProgress));
    let dup = NodeGroup {
        uuid: "0e000000-0000-4000-8000-000000000002".into(),
        ..ng.clone()
    };
    assert_eq!(
        status(c.create_nodegroup(&member("p1"), &cl, dup).await),
        409
    );
    let refused = NodeGroup {
        uuid: "0e000000-0000-4000-8000-000000000003".into(),
        name: "x".into(),
        status: Some(Status::DeleteFailed),
        ..ng
    };
    match c.create_nodegroup(&member("p1"), &cl, refused).await {
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
        c.update_nodegroup(&member("p1"), &cl, &ng, &["node_count"])
            .await
            .is_err(),
        "node_count is not patchable"
    );
    ng.max_node_count = Some(4);
    let saved = c
        .update_nodegroup(&member("p1"), &cl, &ng, &["max_node_count"])
        .await
        .unwrap();
    assert_eq!(saved.updated_at, Some(t.now()));
    let row = c.get_nodegroup(&p1, CLUSTER, "2").await.unwrap();
    assert_eq!(
        (row.max_node_count, row.status),
        (Some(4), Some(Status::UpdateInProgress))
    );
    let def = c.get_nodegroup(&p1, CLUSTER, "1").await.unwrap();
    assert_eq!(
        status(c.delete_nodegroup(&member("p1"), &cl, &def).await),
        400
    );
    c.delete_nodegroup(&member("p1"), &cl, &row).await.unwrap();
    let row = c.get_nodegroup(&p1, CLUSTER, "2").await.unwrap();
    assert_eq!(row.status, Some(Status::DeleteInProgress));
    // The state guard of updates reads the stored status.
    match c
        .update_nodegroup(&member("p1"), &cl, &row, &["max_node_count"])
        .await
    {
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
    let orphan = Cluster {
        cluster_template_id: "7e57a000-0000-4000-8000-0000000000ff".into(),
        ..cl
    };
    assert_eq!(status(c.template_of(&orphan).await), 404);
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

#[tokio::test]
async fn a_driver_failure_leaves_the_nodegroup_failed_and_the_cluster_update_failed() {
    let (t, cl) = fixture().await;
    let c = &t.conductor;
    let ng = NodeGroup {
        labels: Some([("fake_error".to_string(), "nodegroup_create".to_string())].into()),
        ..worker("0e000000-0000-4000-8000-000000000001", "bad", 1)
    };
    c.create_nodegroup(&member("p1"), &cl, ng.clone())
        .await
        .unwrap();
    let row = c
        .get_nodegroup(&member("p1"), CLUSTER, &ng.uuid)
        .await
        .unwrap();
    assert_eq!(row.status, Some(Status::CreateFailed));
    assert!(
        row.status_reason.as_deref().is_some_and(|r| !r.is_empty()),
        "{row:?}"
    );
    assert_eq!(cluster_status(&t).await, Some(Status::UpdateFailed));
    // A cluster whose template is gone fails the same way.
    let (t, cl) = fixture().await;
    t.db.q()
        .delete_cluster_template("7e57a000-0000-4000-8000-000000000001")
        .await
        .unwrap();
    let c = &t.conductor;
    let mut x = c.get_nodegroup(&member("p1"), CLUSTER, "2").await.unwrap();
    x.max_node_count = Some(3);
    c.update_nodegroup(&member("p1"), &cl, &x, &["max_node_count"])
        .await
        .unwrap();
    let row = c.get_nodegroup(&member("p1"), CLUSTER, "2").await.unwrap();
    assert_eq!(row.status, Some(Status::UpdateFailed));
    assert_eq!(row.max_node_count, Some(3));
}

/// Go `TestNodeGroupLifecycleWithPoll`: the status poller ends the
/// operations the driver started.
#[tokio::test]
async fn the_poller_completes_a_create_and_removes_a_deleted_nodegroup() {
    let (t, cl) = fixture().await;
    let c = &t.conductor;
    let p1 = member("p1");
    let ng = NodeGroup {
        min_node_count: Some(0),
        ..worker("0e000000-0000-4000-8000-000000000009", "life", 2)
    };
    c.create_nodegroup(&p1, &cl, ng.clone()).await.unwrap();
    c.poll_cluster(CLUSTER).await.unwrap();
    let row = c.get_nodegroup(&p1, CLUSTER, &ng.uuid).await.unwrap();
    assert_eq!(row.status, Some(Status::CreateComplete));
    assert_eq!(cluster_status(&t).await, Some(Status::UpdateComplete));
    let polled = stored_cluster(&t).await;
    c.delete_nodegroup(&p1, &polled, &row).await.unwrap();
    c.poll_cluster(CLUSTER).await.unwrap();
    assert_eq!(status(c.get_nodegroup(&p1, CLUSTER, &ng.uuid).await), 404);
}
