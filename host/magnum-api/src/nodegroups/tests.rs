//! Go `TestNodeGroupList`, `TestNodeGroupGet`, `TestNodeGroupCreate`,
//! `TestNodeGroupPatch`, `TestNodeGroupDelete` and
//! `TestSecondaryResourcesBadInput`, as transcripts over the pipeline.

use magnum_domain::Status;
use serde_json::{Value, json};

use crate::fixture::{
    ADMIN, CLUSTER_UUID, EXTRA_UUID, MEMBER, NOW, OTHER, READER, WORKER_UUID, detail, expect,
    seeded, snapshot,
};
use crate::openstack::STATIC_IMAGE_NAME;
use crate::testing::{Answer, TestApp};
use magnum_domain::query::Scope;

const NONE: &[&str] = &["X-Project-Id: p1", "X-User-Id: u1", "X-Roles: foo"];
const NEW: &str = "00000000-0000-4000-8000-000000000001";

fn base() -> String {
    format!("/v1/clusters/{CLUSTER_UUID}/nodegroups")
}

async fn nodegroup(app: &TestApp, uuid: &str) -> magnum_domain::models::NodeGroup {
    app.t
        .db
        .q()
        .get_nodegroup_by_uuid(CLUSTER_UUID, uuid, &Scope::ALL_PROJECTS)
        .await
        .unwrap()
}

async fn cluster_status(app: &TestApp) -> Option<Status> {
    app.t
        .db
        .q()
        .get_cluster_by_uuid(CLUSTER_UUID, &Scope::ALL_PROJECTS)
        .await
        .unwrap()
        .status
}

fn items(a: &Answer) -> Vec<Value> {
    a.json()["nodegroups"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn lists() {
    let app = seeded().await;
    let b = base();
    // below 1.9 the resource does not exist
    expect(
        &app.call_at("1.8", &format!("GET {b}"), "", READER).await,
        406,
        "",
    );
    expect(
        &app.call_at("", &format!("GET {b}"), "", READER).await,
        406,
        "",
    );

    // summaries carry WSME defaults, not stored counts
    let a = app.call_at("1.9", &format!("GET {b}"), "", READER).await;
    expect(&a, 200, "");
    let list = items(&a);
    assert_eq!(list.len(), 3, "{}", a.text());
    assert_eq!(
        list[2],
        json!({"uuid": EXTRA_UUID, "name": "extra", "flavor_id": "m1.small", "image_id": STATIC_IMAGE_NAME,
               "node_count": 2, "role": "worker", "min_node_count": 0, "max_node_count": null,
               "is_default": false, "stack_id": null, "status": "CREATE_COMPLETE", "merge_labels": false})
    );
    assert!(a.json().get("next").is_none(), "{}", a.text());

    // role filters exactly
    let a = app
        .call_at("1.9", &format!("GET {b}?role=master"), "", READER)
        .await;
    assert_eq!(items(&a).len(), 1, "{}", a.text());
    let a = app
        .call_at("1.9", &format!("GET {b}?role=mast"), "", READER)
        .await;
    assert_eq!(items(&a).len(), 0, "{}", a.text());

    // a full page links to the next one (the cluster named by name)
    let a = app
        .call_at("1.9", "GET /v1/clusters/c1/nodegroups?limit=2", "", READER)
        .await;
    expect(&a, 200, "");
    assert_eq!(
        a.json()["next"],
        format!(
            "http://localhost/v1/clusters/{CLUSTER_UUID}/nodegroups?sort_key=id&sort_dir=asc&limit=2&marker={WORKER_UUID}"
        )
    );
    let a = app
        .call_at(
            "1.9",
            &format!("GET {b}?limit=2&marker={WORKER_UUID}"),
            "",
            READER,
        )
        .await;
    assert_eq!(items(&a).len(), 1, "{}", a.text());

    // bad paging parameters
    for (q, status, want) in [
        ("limit=0", 400, "Limit must be positive"),
        (
            "sort_dir=up",
            400,
            "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'",
        ),
        (
            "sort_key=bogus",
            400,
            r#"The sort_key value "bogus" is an invalid field for sorting"#,
        ),
        (
            "marker=0e000000-0000-4000-8000-00000000ffff",
            404,
            "Nodegroup 0e000000-0000-4000-8000-00000000ffff could not be found.",
        ),
    ] {
        expect(
            &app.call_at("1.9", &format!("GET {b}?{q}"), "", READER)
                .await,
            status,
            want,
        );
    }

    // another project's cluster is not found
    let a = app.call_at("1.9", &format!("GET {b}"), "", OTHER).await;
    expect(
        &a,
        404,
        &format!("Cluster {CLUSTER_UUID} could not be found."),
    );
    // admins see every project
    let a = app.call_at("1.9", &format!("GET {b}"), "", ADMIN).await;
    expect(&a, 200, "");
    assert_eq!(items(&a).len(), 3, "{}", a.text());
    // policy is checked before the lookup
    let a = app
        .call_at("1.9", "GET /v1/clusters/nope/nodegroups", "", NONE)
        .await;
    expect(
        &a,
        403,
        "Policy doesn't allow nodegroup:get_all to be performed.",
    );
}

#[tokio::test]
async fn get_by_uuid_name_or_id() {
    let app = seeded().await;
    let b = base();
    for ident in [EXTRA_UUID, "extra", "3"] {
        let a = app
            .call_at("1.14", &format!("GET {b}/{ident}"), "", READER)
            .await;
        expect(&a, 200, "");
        assert_eq!(
            a.json(),
            json!({
                "id": 3, "uuid": EXTRA_UUID, "name": "extra", "cluster_id": CLUSTER_UUID, "project_id": "p1",
                "docker_volume_size": null, "labels": {"a": "1"}, "flavor_id": "m1.small",
                "image_id": STATIC_IMAGE_NAME, "node_addresses": [], "node_count": 2, "role": "worker",
                "min_node_count": 1, "max_node_count": 5, "is_default": false, "stack_id": null,
                "status": "CREATE_COMPLETE", "status_reason": null, "version": null, "merge_labels": false,
                "labels_overridden": {}, "labels_added": {}, "labels_skipped": {},
                "node_labels": {}, "node_taints": [],
                "created_at": NOW, "updated_at": null,
                "links": [
                    {"href": format!("http://localhost/v1/clusters/{CLUSTER_UUID}/nodegroups/{EXTRA_UUID}"), "rel": "self"},
                    {"href": format!("http://localhost/clusters/{CLUSTER_UUID}/nodegroups/{EXTRA_UUID}"), "rel": "bookmark"},
                ],
            }),
            "by {ident}"
        );
    }
    // unknown nodegroup
    expect(
        &app.call_at("1.9", &format!("GET {b}/nope"), "", READER)
            .await,
        404,
        "Nodegroup nope could not be found.",
    );
    expect(
        &app.call_at("1.9", &format!("GET {b}/99"), "", READER).await,
        404,
        "Nodegroup 99 could not be found.",
    );
    // overridden policy refuses
    expect(
        &app.call_at("1.9", &format!("GET {b}/extra"), "", NONE)
            .await,
        403,
        "Policy doesn't allow nodegroup:get to be performed.",
    );
    let a = app
        .call_at("1.9", &format!("GET {b}/extra"), "", ADMIN)
        .await;
    expect(&a, 200, "");
}

#[tokio::test]
async fn create_answers_202_with_the_object_as_built() {
    let app = seeded().await;
    let b = base();
    let body = json!({
        "name": "gpu", "node_count": 2, "max_node_count": 4, "labels": {"b": 2}, "merge_labels": true,
        "node_labels": {"workload": "gpu"},
        "node_taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
    });
    let a = app
        .call_at("1.9", &format!("POST {b}"), &body.to_string(), MEMBER)
        .await;
    expect(&a, 202, "");
    assert_eq!(
        a.json(),
        json!({
            "id": 4, "uuid": NEW, "name": "gpu", "cluster_id": CLUSTER_UUID,
            "project_id": "p1", "docker_volume_size": null, "labels": {"a": "1", "b": "2"},
            "flavor_id": "m1.small", "image_id": STATIC_IMAGE_NAME, "node_addresses": null, "node_count": 2,
            "role": "worker", "min_node_count": 0, "max_node_count": 4, "is_default": false, "stack_id": null,
            "status": null, "status_reason": null, "version": null, "merge_labels": false,
            "labels_overridden": {}, "labels_added": {"b": "2"}, "labels_skipped": {},
            "node_labels": {"workload": "gpu"},
            "node_taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
            "created_at": NOW, "updated_at": null,
            "links": [
                {"href": format!("http://localhost/v1/clusters/{CLUSTER_UUID}/nodegroups/{NEW}"), "rel": "self"},
                {"href": format!("http://localhost/clusters/{CLUSTER_UUID}/nodegroups/{NEW}"), "rel": "bookmark"},
            ],
        })
    );
    let ng = nodegroup(&app, NEW).await;
    assert_eq!(ng.status, Some(Status::CreateInProgress));
    assert!(ng.stack_id.is_some(), "the driver was called: {ng:?}");
    assert_eq!(cluster_status(&app).await, Some(Status::UpdateInProgress));
}

#[tokio::test]
async fn a_driver_failure_leaves_the_rows_failed_after_the_202() {
    let app = seeded().await;
    let a = app
        .call_at(
            "1.9",
            &format!("POST {}", base()),
            r#"{"name": "bad", "labels": {"fake_error": "nodegroup_create"}}"#,
            MEMBER,
        )
        .await;
    expect(&a, 202, "");
    let ng = nodegroup(&app, NEW).await;
    assert_eq!(ng.status, Some(Status::CreateFailed));
    assert!(ng.status_reason.is_some(), "{ng:?}");
    assert_eq!(cluster_status(&app).await, Some(Status::UpdateFailed));
}

#[tokio::test]
async fn create_with_only_a_name_takes_the_cluster_and_template_defaults() {
    let app = seeded().await;
    let a = app
        .call_at(
            "1.9",
            &format!("POST {}", base()),
            r#"{"name": "n"}"#,
            MEMBER,
        )
        .await;
    expect(&a, 202, "");
    let j = a.json();
    assert_eq!(
        (
            &j["node_count"],
            &j["role"],
            &j["flavor_id"],
            &j["image_id"]
        ),
        (
            &json!(1),
            &json!("worker"),
            &json!("m1.small"),
            &json!(STATIC_IMAGE_NAME)
        )
    );
    assert_eq!(j["labels"], json!({"a": "1"}));
    // Without merge_labels the sent labels replace the cluster's.
    let a = app
        .call_at(
            "1.9",
            &format!("POST {}", base()),
            r#"{"name": "m", "labels": {"b": "2"}}"#,
            MEMBER,
        )
        .await;
    expect(&a, 202, "");
    assert_eq!(a.json()["labels"], json!({"b": "2"}));
    assert_eq!(a.json()["labels_skipped"], json!({"a": "1"}));
}

#[tokio::test]
async fn refused_creates_change_no_row() {
    let app = seeded().await;
    for (name, body, status, want) in [
        (
            "duplicate name",
            r#"{"name": "extra"}"#,
            409,
            "A node group with name extra already exists in the cluster c1.",
        ),
        (
            "count above max",
            r#"{"name": "x", "node_count": 7, "max_node_count": 5}"#,
            409,
            "max_node_count for x is invalid (node_count (7) should be less or equal to max_node_count (5)).",
        ),
        (
            "min above count",
            r#"{"name": "x", "node_count": 2, "min_node_count": 3}"#,
            409,
            "min_node_count for x is invalid (min_node_count (3) should be less or equal to node_count (2)).",
        ),
        (
            "labels on master",
            r#"{"name": "x", "role": "master", "node_labels": {"a": "b"}}"#,
            409,
            "node_labels for x is invalid (node_labels may not be set on master nodegroups).",
        ),
        (
            "restricted label",
            r#"{"name": "x", "node_labels": {"node-role.kubernetes.io/x": ""}}"#,
            409,
            "",
        ),
        (
            "taint without key",
            r#"{"name": "x", "node_taints": [{"effect": "NoSchedule"}]}"#,
            409,
            "node_taints for x is invalid (node_taints[0].key is required).",
        ),
        (
            "master",
            r#"{"name": "x", "role": "master"}"#,
            400,
            "Creating master nodegroups is currently not supported.",
        ),
        (
            "unknown attribute",
            r#"{"name": "x", "foo": 1}"#,
            400,
            "Unknown attribute for argument nodegroup: foo",
        ),
        (
            "read-only attribute",
            r#"{"name": "x", "project_id": "p9"}"#,
            400,
            "Invalid input for field/attribute project_id. Value: 'p9'. Cannot set read only field.",
        ),
        (
            "negative count",
            r#"{"name": "x", "node_count": -1}"#,
            400,
            "Invalid input for field/attribute node_count. Value: '-1'. Value should be greater or equal to 0",
        ),
        (
            "status the conductor refuses",
            r#"{"name": "x", "status": "CREATE_FAILED"}"#,
            409,
            r#"nodegroup_create when nodegroup status is "CREATE_FAILED" is not supported."#,
        ),
        ("no body", "", 400, r#"Missing argument: "nodegroup""#),
        (
            "no name",
            r#"{"node_count": 1}"#,
            400,
            "Field `name' cannot be None",
        ),
    ] {
        let before = snapshot(&app).await;
        let a = app
            .call_at("1.9", &format!("POST {}", base()), body, MEMBER)
            .await;
        assert_eq!(a.status.as_u16(), status, "{name}: {}", a.text());
        if !want.is_empty() {
            assert_eq!(detail(&a), want, "{name}");
        }
        snapshot(&app)
            .await
            .assert_same_as(&before, format_args!("{name}: tables changed"));
    }
}

#[tokio::test]
async fn a_cluster_without_api_address_refuses_nodegroups() {
    let app = seeded().await;
    let mut cl = app
        .t
        .db
        .q()
        .get_cluster_by_uuid(CLUSTER_UUID, &Scope::ALL_PROJECTS)
        .await
        .unwrap();
    cl.api_address = None;
    app.t
        .db
        .q()
        .update_cluster(&mut cl, &["api_address"])
        .await
        .unwrap();
    let a = app
        .call_at(
            "1.9",
            &format!("POST {}", base()),
            r#"{"name": "x"}"#,
            MEMBER,
        )
        .await;
    expect(&a, 409, "Cluster API address is not available yet");
}

fn op(op: &str, path: &str, value: Value) -> String {
    json!([{"op": op, "path": path, "value": value}]).to_string()
}

#[tokio::test]
async fn patch_replaces_max_node_count_and_answers_the_patched_object() {
    let app = seeded().await;
    let a = app
        .call_at(
            "1.9",
            &format!("PATCH {}/extra", base()),
            &op("replace", "/max_node_count", json!(4)),
            MEMBER,
        )
        .await;
    expect(&a, 202, "");
    let j = a.json();
    assert_eq!(
        (&j["max_node_count"], &j["status"], &j["updated_at"]),
        (&json!(4), &json!("CREATE_COMPLETE"), &json!(null))
    );
    let ng = nodegroup(&app, EXTRA_UUID).await;
    assert_eq!(
        (ng.max_node_count, ng.status),
        (Some(4), Some(Status::UpdateInProgress))
    );
    assert_eq!(cluster_status(&app).await, Some(Status::UpdateInProgress));
}

#[tokio::test]
async fn patch_remove_min_node_count_sets_the_default() {
    let app = seeded().await;
    let a = app
        .call_at(
            "1.9",
            &format!("PATCH {}/extra", base()),
            r#"[{"op": "remove", "path": "/min_node_count"}]"#,
            MEMBER,
        )
        .await;
    expect(&a, 202, "");
    assert_eq!(nodegroup(&app, EXTRA_UUID).await.min_node_count, Some(0));
}

#[tokio::test]
async fn patch_node_labels_from_a_python_literal() {
    let app = seeded().await;
    let a = app
        .call_at(
            "1.9",
            &format!("PATCH {}/extra", base()),
            &op("replace", "/node_labels", json!("{'workload': 'gpu'}")),
            MEMBER,
        )
        .await;
    expect(&a, 202, "");
    let ng = nodegroup(&app, EXTRA_UUID).await;
    assert_eq!(
        ng.node_labels
            .unwrap_or_default()
            .get("workload")
            .map(String::as_str),
        Some("gpu")
    );
}

#[tokio::test]
async fn refused_patches_change_no_row() {
    let app = seeded().await;
    for (name, ident, ops, status, want) in [
        (
            "internal attribute",
            "extra",
            op("replace", "/node_count", json!(3)),
            400,
            "'/node_count' is an internal attribute and can not be updated",
        ),
        (
            "max below count",
            "extra",
            op("replace", "/max_node_count", json!(1)),
            409,
            "max_node_count for extra is invalid (node_count (2) should be less or equal to max_node_count (1)).",
        ),
        (
            "taints on master",
            "default-master",
            op(
                "replace",
                "/node_taints",
                json!("[{'key': 'a', 'effect': 'NoSchedule'}]"),
            ),
            409,
            "node_taints for default-master is invalid (node_taints may not be set on master nodegroups).",
        ),
        (
            "non-existent attribute",
            "extra",
            r#"[{"op": "remove", "path": "/nope"}]"#.to_string(),
            400,
            "Couldn't apply patch '[{'path': '/nope', 'op': 'remove'}]'. Reason: can't remove a non-existent object 'nope'",
        ),
        (
            "nested change of an internal field",
            "extra",
            op("add", "/labels/x", json!("y")),
            400,
            "'/labels' is an internal attribute and can not be updated",
        ),
        (
            "unknown nodegroup",
            "nope",
            op("replace", "/max_node_count", json!(4)),
            404,
            "Nodegroup nope could not be found.",
        ),
    ] {
        let before = snapshot(&app).await;
        let a = app
            .call_at("1.9", &format!("PATCH {}/{ident}", base()), &ops, MEMBER)
            .await;
        assert_eq!(a.status.as_u16(), status, "{name}: {}", a.text());
        assert_eq!(detail(&a), want, "{name}");
        snapshot(&app)
            .await
            .assert_same_as(&before, format_args!("{name}: tables changed"));
    }
}

#[tokio::test]
async fn patch_looks_the_cluster_up_before_the_policy() {
    let app = seeded().await;
    let ops = op("replace", "/max_node_count", json!(4));
    let a = app
        .call_at(
            "1.9",
            "PATCH /v1/clusters/nope/nodegroups/extra",
            &ops,
            NONE,
        )
        .await;
    expect(&a, 404, "Cluster nope could not be found.");
    let a = app
        .call_at("1.9", &format!("PATCH {}/extra", base()), &ops, NONE)
        .await;
    expect(
        &a,
        403,
        "Policy doesn't allow nodegroup:update to be performed.",
    );
}

#[tokio::test]
async fn the_state_guard_of_patch_is_a_synchronous_409() {
    let app = seeded().await;
    let mut ng = nodegroup(&app, EXTRA_UUID).await;
    ng.status = Some(Status::DeleteInProgress);
    app.t
        .db
        .q()
        .update_nodegroup(&mut ng, &["status"])
        .await
        .unwrap();
    let before = snapshot(&app).await;
    let a = app
        .call_at(
            "1.9",
            &format!("PATCH {}/extra", base()),
            &op("replace", "/max_node_count", json!(4)),
            MEMBER,
        )
        .await;
    expect(
        &a,
        409,
        r#"nodegroup_update when nodegroup status is "DELETE_IN_PROGRESS" is not supported."#,
    );
    snapshot(&app)
        .await
        .assert_same_as(&before, "tables changed");
}

#[tokio::test]
async fn delete() {
    let app = seeded().await;
    let b = base();
    // default nodegroups cannot be deleted
    expect(
        &app.call_at("1.9", &format!("DELETE {b}/default-worker"), "", MEMBER)
            .await,
        400,
        "Deleting a default nodegroup is not supported.",
    );
    expect(
        &app.call_at("1.9", &format!("DELETE {b}/nope"), "", MEMBER)
            .await,
        404,
        "Nodegroup nope could not be found.",
    );
    expect(
        &app.call_at("1.9", &format!("DELETE {b}/extra"), "", OTHER)
            .await,
        404,
        &format!("Cluster {CLUSTER_UUID} could not be found."),
    );
    let a = app
        .call_at("1.9", &format!("DELETE {b}/extra"), "", MEMBER)
        .await;
    expect(&a, 204, "");
    assert!(a.body.is_empty());
    assert_eq!(
        nodegroup(&app, EXTRA_UUID).await.status,
        Some(Status::DeleteInProgress)
    );
}

/// Go `TestSecondaryResourcesBadInput`: malformed and refused requests to
/// every nodegroup, quota, stats and federation route get a 4xx and change
/// no table (the credential routes belong to the certificates module).
#[tokio::test]
async fn bad_input_on_every_secondary_route_is_a_4xx_and_changes_nothing() {
    let app = seeded().await;
    let a = app
        .call(
            "POST /v1/quotas",
            r#"{"project_id": "p1", "hard_limit": 3}"#,
            ADMIN,
        )
        .await;
    expect(&a, 201, "");
    let a = app
        .call(
            "POST /v1/federations",
            r#"{"name": "f1", "hostcluster_id": "c1", "properties": {"dns-zone": "z."}}"#,
            MEMBER,
        )
        .await;
    expect(&a, 202, "");
    let before = snapshot(&app).await;
    let b = base();
    let ng = format!("{b}/extra");
    let cases: Vec<(&[&str], &str, String, String)> = vec![
        (MEMBER, "1.9", format!("POST {b}"), "{not json".into()),
        (MEMBER, "1.9", format!("POST {b}"), "[1, 2]".into()),
        (MEMBER, "1.9", format!("POST {b}"), r#"{"name": 5}"#.into()),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "node_count": "many"}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "node_count": 99999999999999999999999}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "labels": [1]}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "labels": {"a": {"b": 1}}}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "node_labels": {"a": 1}}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "node_taints": "NoSchedule"}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "node_taints": [{"key": "k", "effect": "Bogus"}]}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "node_taints": [{"key": "k", "effect": "NoSchedule", "vaule": "v"}]}"#
                .into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "is_default": "maybe"}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "uuid": "not-a-uuid"}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "docker_volume_size": 0}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x", "min_node_count": 2, "node_count": 1}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("POST {b}"),
            r#"{"node_count": 1}"#.into(),
        ),
        (MEMBER, "1.9", format!("POST {b}"), r#"{"name": ""}"#.into()),
        (
            MEMBER,
            "1.9",
            "POST /v1/clusters/nope/nodegroups".into(),
            r#"{"name": "x"}"#.into(),
        ),
        (
            READER,
            "1.9",
            format!("POST {b}"),
            r#"{"name": "x"}"#.into(),
        ),
        (
            MEMBER,
            "1.8",
            format!("POST {b}"),
            r#"{"name": "x"}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            r#"{"op": "replace"}"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            r#"[{"op": "move", "path": "/max_node_count", "value": 1}]"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            r#"[{"op": "replace", "path": "/max_node_count"}]"#.into(),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op("replace", "/max_node_count", json!("7")),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op("replace", "/max_node_count", json!(-1)),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op("replace", "/max_node_count", json!(1.5)),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op("replace", "/node_labels", json!("{'a': ")),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op("replace", "/node_labels", json!("[1, 2]")),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op(
                "replace",
                "/node_labels",
                json!("{'kubernetes.io/role': 'x'}"),
            ),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op(
                "replace",
                "/node_taints",
                json!("[{'effect': 'NoSchedule'}]"),
            ),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op("replace", "/node_taints", json!("{'a': 'b'}")),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op("add", "/min_node_count", json!(1)),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op("add", "/node_addresses/0", json!("x")),
        ),
        (
            MEMBER,
            "1.9",
            format!("PATCH {ng}"),
            op("replace", "/min_node_count", json!(9)),
        ),
        (
            OTHER,
            "1.9",
            format!("PATCH {ng}"),
            op("replace", "/max_node_count", json!(4)),
        ),
        (
            MEMBER,
            "1.9",
            format!("DELETE {b}/default-master"),
            String::new(),
        ),
        (READER, "1.9", format!("DELETE {ng}"), String::new()),
        (
            ADMIN,
            "",
            "POST /v1/quotas".into(),
            r#"{"project_id": "p1"}"#.into(),
        ),
        (
            ADMIN,
            "",
            "POST /v1/quotas".into(),
            r#"{"project_id": "p5", "hard_limit": "x"}"#.into(),
        ),
        (
            ADMIN,
            "",
            "POST /v1/quotas".into(),
            r#"{"project_id": "", "hard_limit": 1}"#.into(),
        ),
        (
            ADMIN,
            "",
            "POST /v1/quotas".into(),
            r#"{"project_id": "p5", "created_at": "now"}"#.into(),
        ),
        (
            ADMIN,
            "",
            "PATCH /v1/quotas/p1/Cluster".into(),
            r#"[{"op": "replace", "path": "/hard_limit", "value": 2}]"#.into(),
        ),
        (
            ADMIN,
            "",
            "PATCH /v1/quotas/p1/Cluster".into(),
            r#"{"hard_limit": -5}"#.into(),
        ),
        (
            ADMIN,
            "",
            "PATCH /v1/quotas/p1/Cluster".into(),
            r#"{"resource": "Pod"}"#.into(),
        ),
        (
            MEMBER,
            "",
            "PATCH /v1/quotas/p1/Cluster".into(),
            r#"{"hard_limit": 5}"#.into(),
        ),
        (ADMIN, "", "DELETE /v1/quotas/p1/Pod".into(), String::new()),
        (
            ADMIN,
            "",
            "GET /v1/quotas?all_tenants=maybe".into(),
            String::new(),
        ),
        (ADMIN, "", "GET /v1/quotas?marker=x".into(), String::new()),
        (READER, "", "GET /v1/stats?type=node".into(), String::new()),
        (
            READER,
            "",
            "GET /v1/stats?project_id=p2".into(),
            String::new(),
        ),
        (
            MEMBER,
            "",
            "POST /v1/federations".into(),
            r#"{"hostcluster_id": "c1", "properties": {"dns-zone": 1}}"#.into(),
        ),
        (
            MEMBER,
            "",
            "POST /v1/federations".into(),
            r#"{"hostcluster_id": "c1", "member_ids": "a", "properties": {"dns-zone": "z."}}"#
                .into(),
        ),
        (
            MEMBER,
            "",
            "POST /v1/federations".into(),
            r#"{"hostcluster_id": "c1", "properties": {"dns-zone": "z."}, "links": []}"#.into(),
        ),
        (MEMBER, "", "PATCH /v1/federations/f1".into(), "[]".into()),
        (
            MEMBER,
            "",
            "PATCH /v1/federations/f1".into(),
            op("replace", "/properties", json!("{'a': 'b'}")),
        ),
        (
            MEMBER,
            "",
            "PATCH /v1/federations/f1".into(),
            op("replace", "/member_ids", json!("x")),
        ),
        (
            MEMBER,
            "",
            "PATCH /v1/federations/f1".into(),
            op("replace", "/status", json!("CREATE_FAILED")),
        ),
        (
            MEMBER,
            "",
            "PATCH /v1/federations/f1?rollback=maybe".into(),
            op("add", "/properties/x", json!("y")),
        ),
        (OTHER, "", "DELETE /v1/federations/f1".into(), String::new()),
    ];
    for (who, version, req, body) in &cases {
        let a = app.call_at(version, req, body, who).await;
        assert!(
            a.status.is_client_error(),
            "{req} {body}: status {}: {}",
            a.status,
            a.text()
        );
    }
    snapshot(&app)
        .await
        .assert_same_as(&before, "tables changed");
}

/// microversions.md 1.10: the zero-node gate is the clusters'; a
/// nodegroup POST with `node_count` 0 is accepted at 1.9 (probed).
#[tokio::test]
async fn zero_nodes_are_accepted_from_1_9() {
    let app = seeded().await;
    let a = app
        .call_at(
            "1.9",
            &format!("POST {}", base()),
            r#"{"name": "z", "node_count": 0}"#,
            MEMBER,
        )
        .await;
    expect(&a, 202, "");
    assert_eq!(a.json()["node_count"], 0);
}
