//! Go `TestQuotas`, as transcripts over the whole pipeline.

use serde_json::json;

use crate::fixture::{NOW, READER, detail, expect};
use crate::testing::{ADMIN, MEMBER, TestApp};

async fn quota_rows(app: &TestApp) -> Vec<(String, i32)> {
    let rows = app
        .t
        .db
        .q()
        .list_quotas(&Default::default(), &Default::default())
        .await
        .unwrap();
    rows.into_iter()
        .map(|q| (q.project_id, q.hard_limit))
        .collect()
}

#[tokio::test]
async fn quotas_are_created_read_patched_listed_and_deleted_by_admins() {
    let app = TestApp::new().await;

    // admins create quotas; 201 with the row
    let a = app
        .call(
            "POST /v1/quotas",
            r#"{"project_id": "p1", "resource": "Cluster", "hard_limit": 10}"#,
            ADMIN,
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    assert_eq!(
        a.json(),
        json!({"id": 1, "project_id": "p1", "resource": "Cluster", "hard_limit": 10,
               "created_at": NOW, "updated_at": null})
    );
    assert_eq!(
        a.text(),
        format!(
            r#"{{"created_at": "{NOW}", "hard_limit": 10, "id": 1, "project_id": "p1", "resource": "Cluster", "updated_at": null}}"#
        ),
        "Magnum's key order"
    );

    // a second quota for the same project and resource is a conflict
    let a = app
        .call(
            "POST /v1/quotas",
            r#"{"project_id": "p1", "hard_limit": 3}"#,
            ADMIN,
        )
        .await;
    expect(
        &a,
        409,
        "Quota for project p1 already exists for resource Cluster.",
    );

    // create errors
    for (name, who, body, status, want) in [
        (
            "a member",
            MEMBER,
            r#"{"project_id": "p1", "hard_limit": 3}"#,
            403,
            "Policy doesn't allow quota:create to be performed.",
        ),
        (
            "no project",
            ADMIN,
            r#"{"hard_limit": 3}"#,
            400,
            "Must provide a valid project ID.",
        ),
        (
            "unknown resource",
            ADMIN,
            r#"{"project_id": "p3", "resource": "Pod"}"#,
            400,
            "Invalid input for field/attribute resource. Value: 'Pod'. Value should be one of: Cluster",
        ),
        (
            "negative limit",
            ADMIN,
            r#"{"project_id": "p3", "hard_limit": -1}"#,
            400,
            "Invalid input for field/attribute hard_limit. Value: '-1'. Value should be greater or equal to 0",
        ),
        (
            "unknown attribute",
            ADMIN,
            r#"{"project_id": "p3", "x": 1}"#,
            400,
            "Unknown attribute for argument quota: x",
        ),
        (
            "read-only attribute",
            ADMIN,
            r#"{"project_id": "p3", "created_at": "2026-01-01T00:00:00"}"#,
            400,
            "Cannot set read only field.",
        ),
        (
            "not JSON",
            ADMIN,
            r#"{"project_id": "#,
            400,
            "Request is not in valid JSON format",
        ),
    ] {
        let a = app.call("POST /v1/quotas", body, who).await;
        assert_eq!(a.status, status, "{name}: {}", a.text());
        let d = detail(&a);
        assert!(d.contains(want), "{name}: {d}");
    }
    assert_eq!(
        quota_rows(&app).await,
        [("p1".to_string(), 10)],
        "bad input changes no row"
    );

    // get one: stored, default, or refused
    let a = app.call("GET /v1/quotas/p1/Cluster", "", READER).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        (a.json()["hard_limit"].clone(), a.json()["id"].clone()),
        (json!(10), json!(1))
    );
    let a = app.call("GET /v1/quotas/p7/Whatever", "", ADMIN).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        a.json(),
        json!({"hard_limit": 20, "project_id": "p7", "resource": "Cluster"})
    );
    let a = app.call("GET /v1/quotas/p2/Cluster", "", READER).await;
    expect(&a, 403, "Not authorized.");

    // patch writes hard_limit with its default
    app.t.advance(60);
    let a = app
        .call("PATCH /v1/quotas/p1/Cluster", r#"{"hard_limit": 7}"#, ADMIN)
        .await;
    assert_eq!(a.status, 202, "{}", a.text());
    assert_eq!(a.json()["hard_limit"], 7);
    assert_eq!(a.json()["updated_at"], "2026-11-30T12:01:00+00:00");
    let a = app.call("PATCH /v1/quotas/p1/Cluster", "{}", ADMIN).await;
    assert_eq!(a.status, 202, "{}", a.text());
    assert_eq!(a.json()["hard_limit"], 1);
    let a = app
        .call("PATCH /v1/quotas/p9/Cluster", r#"{"hard_limit": 2}"#, ADMIN)
        .await;
    expect(
        &a,
        404,
        "Quota could not be found: project_id p9 resource Cluster.",
    );
    let a = app
        .call(
            "PATCH /v1/quotas/p1/Cluster",
            r#"{"hard_limit": -2}"#,
            ADMIN,
        )
        .await;
    assert_eq!(a.status, 400);
    let a = app
        .call(
            "PATCH /v1/quotas/p1/Cluster",
            r#"{"hard_limit": 2}"#,
            MEMBER,
        )
        .await;
    expect(
        &a,
        403,
        "Policy doesn't allow quota:update to be performed.",
    );
    assert_eq!(quota_rows(&app).await, [("p1".to_string(), 1)]);

    // list: own project unless admin with all_tenants
    let a = app
        .call(
            "POST /v1/quotas",
            r#"{"project_id": "p2", "hard_limit": 5}"#,
            ADMIN,
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = app.call("GET /v1/quotas", "", ADMIN).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.json(), json!({"quotas": []}), "admin's own project");
    let a = app.call("GET /v1/quotas", "", READER).await;
    assert_eq!(a.status, 403, "{}", a.text());
    let a = app
        .call("GET /v1/quotas?all_tenants=True&limit=1", "", ADMIN)
        .await;
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["quotas"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        a.json()["next"],
        "http://localhost/v1/quotas?sort_key=id&sort_dir=asc&limit=1&marker=1"
    );
    let a = app
        .call("GET /v1/quotas?all_tenants=1&marker=1", "", ADMIN)
        .await;
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["quotas"][0]["project_id"], "p2");
    assert_eq!(a.json()["quotas"].as_array().map(Vec::len), Some(1));
    let a = app.call("GET /v1/quotas?marker=42", "", ADMIN).await;
    expect(&a, 404, "Quota could not be found: quota id 42 .");
    let a = app
        .call("GET /v1/quotas?all_tenants=1&sort_key=bogus", "", ADMIN)
        .await;
    assert_eq!(a.status, 400, "{}", a.text());
    let a = app.call("GET /v1/quotas?limit=0", "", ADMIN).await;
    assert_eq!(a.status, 400, "{}", a.text());
    let a = app.call("GET /v1/quotas", "", MEMBER).await;
    expect(
        &a,
        403,
        "Policy doesn't allow quota:get_all to be performed.",
    );

    // routing quirks
    let a = app.call("GET /v1/quotas/detail", "", ADMIN).await;
    expect(&a, 400, r#"Missing argument: "resource""#);
    let a = app
        .call(
            "PATCH /v1/quotas",
            r#"{"project_id": "p1", "resource": "Cluster", "hard_limit": 4}"#,
            ADMIN,
        )
        .await;
    assert_eq!(a.status, 202, "{}", a.text());
    assert_eq!(a.json()["hard_limit"], 4, "path arguments from the body");

    // delete
    let a = app.call("DELETE /v1/quotas/p2/Cluster", "", ADMIN).await;
    assert_eq!(a.status, 204, "{}", a.text());
    assert!(a.body.is_empty());
    let a = app.call("DELETE /v1/quotas/p2/Cluster", "", ADMIN).await;
    expect(
        &a,
        404,
        "Quota could not be found: project_id p2 resource Cluster.",
    );
    let a = app.call("DELETE /v1/quotas/p1/Cluster", "", MEMBER).await;
    expect(
        &a,
        403,
        "Policy doesn't allow quota:delete to be performed.",
    );
    assert_eq!(quota_rows(&app).await, [("p1".to_string(), 4)]);
}

#[tokio::test]
async fn a_client_id_is_kept_and_a_caller_without_project_lists_nothing() {
    let app = TestApp::new().await;
    let a = app
        .call(
            "POST /v1/quotas",
            r#"{"id": 42, "project_id": "p1"}"#,
            ADMIN,
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    assert_eq!(
        (a.json()["id"].clone(), a.json()["hard_limit"].clone()),
        (json!(42), json!(1))
    );
    let a = app
        .call("POST /v1/quotas", r#"{"id": 0, "project_id": "p1"}"#, ADMIN)
        .await;
    assert_eq!(a.status, 400, "{}", a.text());
    let no_project: &[&str] = &["X-User-Id: a9", "X-Roles: admin"];
    let a = app.call("GET /v1/quotas", "", no_project).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json(), json!({"quotas": []}));
}
