//! Transcript tests of the cluster routes (ports of
//! internal/api/clusters_test.go, clusters_faults_test.go).

use magnum_domain::Status;
use magnum_domain::models::{Cluster, NodeGroup};
use serde_json::{Value, json};

use super::faults;
use crate::conductor::ClusterCreate;
use crate::conductor::testing::TestConductor;
use crate::conductor::testing::{Env, caller};
use crate::testing::{ADMIN, MEMBER, TestApp};

/// The app over a conductor with a template of p1 and `n` clusters of p1
/// named c0, c1…; their uuids.
async fn app(n: usize) -> (TestApp, Vec<String>) {
    let t = TestConductor::builder()
        .parts(|p| p.certificates.x509.rsa_key_size = 1024)
        .build()
        .await;
    let env = Env::with(t).await;
    let mut uuids = Vec::new();
    for i in 0..n {
        let cl = env
            .c()
            .create_cluster(
                &caller("p1"),
                ClusterCreate {
                    name: Some(format!("c{i}")),
                    ..env.input()
                },
            )
            .await
            .expect("create");
        uuids.push(cl.uuid);
    }
    (TestApp::over(env.t), uuids)
}

fn with(headers: &[&str], more: &[&'static str]) -> Vec<String> {
    headers
        .iter()
        .chain(more.iter())
        .map(|s| s.to_string())
        .collect()
}

async fn get(app: &TestApp, path: &str, headers: &[String]) -> (u16, Value) {
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let a = app.call(&format!("GET {path}"), "", &h).await;
    (a.status.as_u16(), a.json())
}

// Ports TestClusterListAndPagination (its reads; the creates are made
// through the conductor until the create route exists).
#[tokio::test]
async fn lists_page_and_scope() {
    let (app, uuids) = app(3).await;
    let v13 = with(MEMBER, &["OpenStack-API-Version: container-infra 1.13"]);
    let (st, got) = get(&app, "/v1/clusters?limit=2", &v13).await;
    assert_eq!(st, 200, "{got}");
    let list = got["clusters"].as_array().expect("clusters");
    assert_eq!(list.len(), 2);
    let first = list[0].as_object().expect("object");
    let keys: Vec<&str> = first.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        vec![
            "uuid",
            "name",
            "cluster_template_id",
            "keypair",
            "node_count",
            "master_count",
            "docker_volume_size",
            "labels",
            "master_flavor_id",
            "flavor_id",
            "create_timeout",
            "links",
            "cluster_id",
            "status",
            "health_status",
            "merge_labels"
        ],
        "the summary's fields in Magnum's order, cluster_id at 1.13"
    );
    assert_eq!(first["merge_labels"], json!(false));
    assert!(first["cluster_id"].is_string(), "{first:?}");
    let next = got["next"].as_str().expect("next");
    assert!(
        next.ends_with(&format!(
            "/v1/clusters?sort_key=id&sort_dir=asc&limit=2&marker={}",
            uuids[1]
        )),
        "{next}"
    );
    // Before 1.13 the driver's id is stack_id.
    let (_, got) = get(&app, "/v1/clusters", &with(MEMBER, &[])).await;
    assert!(got["clusters"][0].get("stack_id").is_some(), "{got}");
    assert!(got["clusters"][0].get("cluster_id").is_none(), "{got}");
    let (st, got) = get(
        &app,
        &format!("/v1/clusters/detail?limit=2&marker={}", uuids[1]),
        &with(MEMBER, &[]),
    )
    .await;
    assert_eq!(st, 200);
    let list = got["clusters"].as_array().expect("clusters");
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["uuid"], json!(uuids[2]));
    assert!(list[0].get("status_reason").is_some(), "detail fields");
    assert!(got.get("next").is_none());
    // Another project sees nothing; an admin with the all-projects rule
    // sees all.
    let p2 = vec![
        "X-Project-Id: p2".to_string(),
        "X-User-Id: u2".into(),
        "X-Roles: member,reader".into(),
    ];
    let (_, got) = get(&app, "/v1/clusters", &p2).await;
    assert_eq!(got["clusters"], json!([]));
    assert_eq!(get(&app, "/v1/clusters/c0", &p2).await.0, 404);
    let (_, got) = get(&app, "/v1/clusters", &with(ADMIN, &[])).await;
    assert_eq!(got["clusters"].as_array().map(Vec::len), Some(3));
    let m = with(MEMBER, &[]);
    assert_eq!(get(&app, "/v1/clusters?limit=0", &m).await.0, 400);
    assert_eq!(get(&app, "/v1/clusters?sort_dir=up", &m).await.0, 400);
    assert_eq!(
        get(&app, "/v1/clusters?sort_key=node_count", &m).await.0,
        400
    );
    let (st, got) = get(
        &app,
        "/v1/clusters?marker=5d12f6fd-a196-4bf0-ae4c-1f639a523a52",
        &m,
    )
    .await;
    assert_eq!(st, 404, "{got}");
}

// Ports the reads and the delete of TestClusterLifecycle: the detail of
// one cluster by uuid and by name, 404 for an unknown one, a delete (204)
// that the status loop finishes.
#[tokio::test]
async fn one_cluster_and_its_delete() {
    let (app, uuids) = app(1).await;
    let m = with(MEMBER, &[]);
    let (st, by_uuid) = get(&app, &format!("/v1/clusters/{}", uuids[0]), &m).await;
    assert_eq!(st, 200, "{by_uuid}");
    let (_, by_name) = get(&app, "/v1/clusters/c0", &m).await;
    assert_eq!(by_uuid, by_name);
    assert_eq!(by_uuid["node_count"], json!(1));
    assert_eq!(by_uuid["master_count"], json!(1));
    assert_eq!(by_uuid["status"], json!("CREATE_IN_PROGRESS"));
    assert_eq!(by_uuid["project_id"], json!("p1"));
    assert_eq!(by_uuid["labels_added"], json!({}));
    assert!(by_uuid.get("faults").is_none(), "faults only when failed");
    assert_eq!(
        by_uuid["links"][0]["href"],
        json!(format!("http://localhost/v1/clusters/{}", uuids[0]))
    );
    let (st, got) = get(&app, "/v1/clusters/nope", &m).await;
    assert_eq!(st, 404);
    assert_eq!(
        got["errors"][0]["detail"],
        json!("Cluster nope could not be found.")
    );
    // /v1/clusters/<uuid>/detail is Magnum's literal 404.
    let (st, _) = get(&app, &format!("/v1/clusters/{}/detail", uuids[0]), &m).await;
    assert_eq!(st, 404);
    let h: Vec<&str> = MEMBER.to_vec();
    let a = app
        .call(&format!("DELETE /v1/clusters/{}", uuids[0]), "", &h)
        .await;
    assert_eq!(a.status.as_u16(), 204, "{}", a.text());
    assert!(a.body.is_empty());
    let (_, got) = get(&app, "/v1/clusters/c0", &m).await;
    assert_eq!(got["status"], json!("DELETE_IN_PROGRESS"));
    crate::reconcile::Reconciler::new(
        app.t.conductor.clone(),
        crate::reconcile::Settings::new("test"),
    )
    .tick()
    .await
    .expect("tick");
    assert_eq!(get(&app, "/v1/clusters/c0", &m).await.0, 404);
    // Another project's member cannot delete (404 before 403).
    let a = app
        .call(
            "DELETE /v1/clusters/c0",
            "",
            &[
                "X-Project-Id: p2",
                "X-User-Id: u2",
                "X-Roles: member,reader",
            ],
        )
        .await;
    assert_eq!(a.status.as_u16(), 404);
}

// Ports TestClusterFaultsKeepNullReason.
#[test]
fn faults_keep_a_null_reason() {
    let ng = |name: &str, status: Status, reason: Option<&str>| NodeGroup {
        name: name.into(),
        status: Some(status),
        status_reason: reason.map(str::to_string),
        ..NodeGroup::default()
    };
    let mut cl = Cluster {
        status: Some(Status::CreateFailed),
        ..Cluster::default()
    };
    let ngs = vec![
        ng("default-master", Status::CreateFailed, None),
        ng("default-worker", Status::CreateFailed, Some("boom")),
        ng("extra", Status::CreateComplete, None),
    ];
    let f = faults(&cl, &ngs).expect("faults");
    assert_eq!(
        serde_json::to_string(&f).expect("json"),
        r#"{"default-master":null,"default-worker":"boom"}"#
    );
    cl.status = Some(Status::CreateComplete);
    assert!(faults(&cl, &ngs).is_none());
}

/// The app over a conductor whose OpenStack knows only the all-in-one
/// resources (unknown names fail), with a template of p1.
async fn strict_app() -> (TestApp, String) {
    let t = TestConductor::builder()
        .parts(|p| {
            p.certificates.x509.rsa_key_size = 1024;
            p.lookup = std::sync::Arc::new(crate::openstack::Static::new(false));
        })
        .build()
        .await;
    let env = Env::with(t).await;
    let tid = env.tmpl.uuid.clone();
    (TestApp::over(env.t), tid)
}

async fn post(app: &TestApp, version: &str, body: &str, more: &[&str]) -> (u16, Value) {
    let mut h: Vec<String> = MEMBER.iter().map(|s| s.to_string()).collect();
    if !version.is_empty() {
        h.push(format!("OpenStack-API-Version: container-infra {version}"));
    }
    for m in more {
        // A later header of the same name replaces the member's.
        let name = m.split(':').next().unwrap_or("");
        h.retain(|x| !x.starts_with(name));
        h.push(m.to_string());
    }
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let a = app.call("POST /v1/clusters", body, &h).await;
    let v = if a.body.is_empty() {
        Value::Null
    } else {
        a.json()
    };
    (a.status.as_u16(), v)
}

fn detail(v: &Value) -> &str {
    v["errors"][0]["detail"].as_str().unwrap_or("")
}

// Ports TestClusterCreateBadInputLeavesTablesUnchanged: every refused
// create answers Magnum's status and message and changes no row.
#[tokio::test]
async fn bad_creates_leave_the_tables_unchanged() {
    let (app, tid) = strict_app().await;
    let (st, _) = post(
        &app,
        "",
        &format!(r#"{{"name": "keep", "cluster_template_id": "{tid}"}}"#),
        &[],
    )
    .await;
    assert_eq!(st, 202);
    let before = crate::db::testing::table_digest(&app.t.db).await;
    let cases: Vec<(&str, &str, String, u16, &str)> = vec![
        (
            "unknown attribute",
            "",
            r#"{"cluster_template_id": "x", "bogus": 1}"#.into(),
            400,
            "Unknown attribute for argument cluster: bogus",
        ),
        (
            "read-only attribute",
            "",
            format!(r#"{{"cluster_template_id": "{tid}", "api_address": "1.2.3.4"}}"#),
            400,
            "Invalid input for field/attribute api_address. Value: '1.2.3.4'. Cannot set read only field.",
        ),
        (
            "missing template",
            "",
            r#"{"name": "x"}"#.into(),
            400,
            "Invalid input for field/attribute cluster_template_id. Value: 'None'. Mandatory field missing.",
        ),
        (
            "unknown template below 1.10",
            "1.9",
            r#"{"cluster_template_id": "nope"}"#.into(),
            400,
            "ClusterTemplate nope could not be found.",
        ),
        (
            "unknown template from 1.10",
            "1.10",
            r#"{"cluster_template_id": "nope"}"#.into(),
            404,
            "ClusterTemplate nope could not be found.",
        ),
        (
            "bad name",
            "",
            format!(r#"{{"cluster_template_id": "{tid}", "name": "1abc"}}"#),
            400,
            "Invalid input for field/attribute name. Value: '1abc'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$",
        ),
        (
            "negative node count",
            "",
            format!(r#"{{"cluster_template_id": "{tid}", "node_count": -1}}"#),
            400,
            "Invalid input for field/attribute node_count. Value: '-1'. Value should be greater or equal to 0",
        ),
        (
            "even master count",
            "",
            format!(r#"{{"cluster_template_id": "{tid}", "master_count": 2}}"#),
            400,
            "master nodegroup size of 2 is invalid, size cannot be an even number.",
        ),
        (
            "unknown flavor",
            "",
            format!(r#"{{"cluster_template_id": "{tid}", "flavor_id": "huge"}}"#),
            400,
            "Unable to find flavor huge.",
        ),
        (
            "unknown keypair",
            "",
            format!(r#"{{"cluster_template_id": "{tid}", "keypair": "nokey"}}"#),
            404,
            "Unable to find keypair nokey.",
        ),
        (
            "masters without load balancer",
            "",
            format!(
                r#"{{"cluster_template_id": "{tid}", "master_count": 3, "master_lb_enabled": false}}"#
            ),
            400,
            "master_count must be 1 when master_lb_enabled is False",
        ),
        (
            "not JSON",
            "",
            "{".into(),
            400,
            "Request is not in valid JSON format",
        ),
    ];
    for (name, version, body, status, want) in cases {
        let (st, got) = post(&app, version, &body, &[]).await;
        assert_eq!((st, detail(&got)), (status, want), "{name}: {got}");
        crate::db::testing::table_digest(&app.t.db)
            .await
            .assert_same_as(&before, format_args!("{name}: tables changed"));
    }
}

// Ports TestClusterCreateZeroNodesAtEveryMicroversion (a deviation: Magnum
// refuses node_count 0 below 1.10).
#[tokio::test]
async fn zero_node_clusters_at_every_microversion() {
    let (app, tid) = strict_app().await;
    for (i, version) in ["", "1.9", "1.10", "latest"].iter().enumerate() {
        let body =
            format!(r#"{{"name": "zero{i}", "cluster_template_id": "{tid}", "node_count": 0}}"#);
        let (st, got) = post(&app, version, &body, &[]).await;
        assert_eq!(st, 202, "{version}: {got}");
        let id = got["uuid"].as_str().expect("uuid");
        let (_, got) = get(&app, &format!("/v1/clusters/{id}"), &with(MEMBER, &[])).await;
        assert_eq!(got["node_count"], json!(0), "{version}");
    }
}

// Ports TestClusterQuotaThroughAPI.
#[tokio::test]
async fn the_quota_through_the_api() {
    let (app, tid) = strict_app().await;
    let mut q = magnum_domain::models::Quota {
        project_id: "p1".into(),
        resource: "Cluster".into(),
        hard_limit: 1,
        ..Default::default()
    };
    app.t.db.q().create_quota(&mut q).await.expect("quota");
    let body = format!(r#"{{"cluster_template_id": "{tid}"}}"#);
    assert_eq!(post(&app, "", &body, &[]).await.0, 202);
    let (st, got) = post(&app, "", &body, &[]).await;
    assert_eq!(st, 403);
    assert_eq!(
        detail(&got),
        "Resource limit exceeded: You have reached the maximum clusters per project, 1. You may delete a cluster to make room for a new one."
    );
    // Another project cannot see the private template (400 below 1.10).
    let (st, _) = post(&app, "", &body, &["X-Project-Id: p2"]).await;
    assert_eq!(st, 400);
}

// Ports TestClusterFailureLabel: a failure the driver reports shows in
// the detail with its reason and the failed nodegroups' faults; lists
// never carry faults.
#[tokio::test]
async fn a_failed_cluster_shows_its_faults() {
    let (app, tid) = strict_app().await;
    let body = format!(
        r#"{{"name": "bad", "cluster_template_id": "{tid}",
            "labels": {{"fake_fail": "create", "fake_fail_reason": "boom"}}}}"#
    );
    assert_eq!(post(&app, "", &body, &[]).await.0, 202);
    crate::reconcile::Reconciler::new(
        app.t.conductor.clone(),
        crate::reconcile::Settings::new("test"),
    )
    .tick()
    .await
    .expect("tick");
    let m = with(MEMBER, &[]);
    let (_, got) = get(&app, "/v1/clusters/bad", &m).await;
    assert_eq!(got["status"], json!("CREATE_FAILED"), "{got}");
    assert_eq!(got["status_reason"], json!("boom"));
    assert_eq!(got["faults"]["default-worker"], json!("boom"), "{got}");
    let (_, list) = get(&app, "/v1/clusters/detail", &m).await;
    assert!(list["clusters"][0].get("faults").is_none(), "{list}");
}

#[test]
fn the_status_names_are_magnums() {
    let names: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(names, super::STATUS_NAMES);
}

async fn call_v(app: &TestApp, req: &str, version: &str, body: &str) -> (u16, Value) {
    let mut h: Vec<String> = MEMBER.iter().map(|s| s.to_string()).collect();
    if !version.is_empty() {
        h.push(format!("OpenStack-API-Version: container-infra {version}"));
    }
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let a = app.call(req, body, &h).await;
    let v = if a.body.is_empty() {
        Value::Null
    } else {
        a.json()
    };
    (a.status.as_u16(), v)
}

async fn tick(app: &TestApp) {
    crate::reconcile::Reconciler::new(
        app.t.conductor.clone(),
        crate::reconcile::Settings::new("test"),
    )
    .tick()
    .await
    .expect("tick");
}

// Ports TestClusterLifecycle (its PATCH steps are a_cluster_patch_lifecycle):
// create by template name with merged labels, the views below
// and from 1.13, a tick, resize, upgrade at 1.7 and 1.8, delete.
#[tokio::test]
async fn a_cluster_lifecycle() {
    let (app, _) = strict_app().await;
    let mut newer = magnum_domain::models::ClusterTemplate {
        id: 0,
        uuid: "0b1c2d3e-4f01-4c41-9d3a-7a0c2c1f5e02".into(),
        name: "tmpl2".into(),
        labels: Some(
            [("kube_tag".to_string(), "v1.31.0".to_string())]
                .into_iter()
                .collect(),
        ),
        ..app
            .t
            .db
            .q()
            .get_cluster_template_by_uuid(
                crate::conductor::testing::TEMPLATE_UUID,
                &crate::db::TemplateScope::new(crate::db::Scope::ALL_PROJECTS),
            )
            .await
            .expect("template")
    };
    app.t
        .db
        .q()
        .create_cluster_template(&mut newer)
        .await
        .expect("template");
    let (st, got) = call_v(
        &app,
        "POST /v1/clusters",
        "1.10",
        r#"{"name": "c1", "cluster_template_id": "tmpl", "node_count": 2,
            "labels": {"extra": 1}, "merge_labels": true}"#,
    )
    .await;
    assert_eq!(st, 202, "{got}");
    let uuid = got["uuid"].as_str().expect("uuid").to_string();
    assert!(magnum_domain::validation::is_uuid_like(&uuid));
    let (_, got) = call_v(&app, "GET /v1/clusters/c1", "1.12", "").await;
    assert_eq!(got["status"], json!("CREATE_IN_PROGRESS"));
    assert_eq!(
        (got["node_count"].clone(), got["master_count"].clone()),
        (json!(2), json!(1))
    );
    assert!(got.get("stack_id").is_some(), "stack_id below 1.13");
    assert_eq!(got["labels"]["extra"], json!("1"));
    assert_eq!(got["labels"]["kube_tag"], json!("v1.30.0"));
    assert_eq!(got["labels_added"], json!({"extra": "1"}));
    tick(&app).await;
    let (_, got) = call_v(&app, &format!("GET /v1/clusters/{uuid}"), "1.13", "").await;
    assert_eq!(got["status"], json!("CREATE_COMPLETE"), "{got}");
    assert!(got["api_address"].is_string());
    assert_eq!(got["node_addresses"].as_array().map(Vec::len), Some(2));
    assert!(got.get("stack_id").is_none() && got["cluster_id"].is_string());

    // Resize.
    let resize = "POST /v1/clusters/c1/actions/resize";
    assert_eq!(
        call_v(&app, resize, "1.7", r#"{"node_count": 0}"#).await.0,
        400
    );
    let (st, got) = call_v(
        &app,
        resize,
        "1.10",
        r#"{"node_count": 1, "nodes_to_remove": []}"#,
    )
    .await;
    assert_eq!((st, got["uuid"].as_str()), (202, Some(uuid.as_str())));
    tick(&app).await;
    let (_, got) = call_v(&app, "GET /v1/clusters/c1", "", "").await;
    assert_eq!(got["status"], json!("UPDATE_COMPLETE"), "{got}");
    assert_eq!(got["node_count"], json!(1));
    let (st, got) = call_v(
        &app,
        resize,
        "1.10",
        r#"{"node_count": 1, "nodegroup": "default-master"}"#,
    )
    .await;
    assert_eq!(st, 202, "{got}");
    tick(&app).await;

    // Upgrade: 1.7 always 400; from 1.8 to another template.
    let upgrade = "POST /v1/clusters/c1/actions/upgrade";
    let body = format!(r#"{{"cluster_template": "{}"}}"#, newer.uuid);
    let (st, got) = call_v(&app, upgrade, "1.7", &body).await;
    assert_eq!(
        (st, detail(&got)),
        (
            400,
            "Cluster upgrade is not supported in the provided microversion."
        )
    );
    let (st, got) = call_v(
        &app,
        upgrade,
        "1.8",
        r#"{"cluster_template": "tmpl2", "max_batch_size": 1}"#,
    )
    .await;
    assert_eq!(st, 202, "{got}");
    let (st, got) = call_v(&app, upgrade, "1.8", r#"{"cluster_template": "tmpl2"}"#).await;
    assert_eq!(
        (st, detail(&got)),
        (
            400,
            "Upgrading a cluster when status is \"UPDATE_IN_PROGRESS\" is not supported."
        )
    );
    tick(&app).await;
    let (_, got) = call_v(&app, "GET /v1/clusters/c1", "", "").await;
    assert_eq!(got["status"], json!("UPDATE_COMPLETE"), "{got}");
    assert_eq!(got["cluster_template_id"], json!(newer.uuid));
    assert_eq!(got["coe_version"], json!("v1.31.0"));

    // Delete.
    assert_eq!(call_v(&app, "DELETE /v1/clusters/c1", "", "").await.0, 204);
    let (_, got) = call_v(&app, "GET /v1/clusters/c1", "", "").await;
    assert_eq!(got["status"], json!("DELETE_IN_PROGRESS"));
    tick(&app).await;
    let (st, got) = call_v(&app, "GET /v1/clusters/c1", "", "").await;
    assert_eq!((st, detail(&got)), (404, "Cluster c1 could not be found."));
    let ngs = app
        .t
        .db
        .q()
        .list_nodegroups(
            &crate::db::NodeGroupFilter::cluster(&uuid),
            &magnum_domain::query::ListOptions::default(),
        )
        .await
        .expect("nodegroups");
    assert!(ngs.is_empty(), "rows left");
}

// Ports the route steps of TestClusterPatchRules that do not need PATCH:
// an unknown nodegroup of a resize is 404; another project's member gets
// 404 on a delete, an admin of another project deletes (all-projects rule).
#[tokio::test]
async fn resize_and_delete_across_projects() {
    let (app, tid) = strict_app().await;
    let body = format!(r#"{{"name": "c1", "cluster_template_id": "{tid}"}}"#);
    assert_eq!(post(&app, "", &body, &[]).await.0, 202);
    tick(&app).await;
    let (st, got) = call_v(
        &app,
        "POST /v1/clusters/c1/actions/resize",
        "1.10",
        r#"{"node_count": 2, "nodegroup": "nope"}"#,
    )
    .await;
    assert_eq!(
        (st, detail(&got)),
        (404, "Nodegroup nope could not be found.")
    );
    let member = [
        "X-Project-Id: p2",
        "X-User-Id: u2",
        "X-Roles: member,reader",
    ];
    let a = app.call("DELETE /v1/clusters/c1", "", &member).await;
    assert_eq!(a.status.as_u16(), 404);
    let admin = ["X-Project-Id: p2", "X-User-Id: a2", "X-Roles: admin"];
    let a = app.call("DELETE /v1/clusters/c1", "", &admin).await;
    assert_eq!(a.status.as_u16(), 204, "{}", a.text());
}

async fn count(app: &TestApp) -> Value {
    call_v(app, "GET /v1/clusters/c1", "", "").await.1["node_count"].clone()
}

async fn patch_v(app: &TestApp, path: &str, version: &str, body: &str) -> (u16, Value) {
    call_v(app, &format!("PATCH {path}"), version, body).await
}

// Ports the PATCH steps of TestClusterLifecycle: a node count update is
// 202 with the uuid, a second one while it runs is 409, the tick completes
// it; a health-only update keeps the status (no driver call).
#[tokio::test]
async fn a_cluster_patch_lifecycle() {
    let (app, tid) = strict_app().await;
    let body = format!(r#"{{"name": "c1", "cluster_template_id": "{tid}", "node_count": 2}}"#);
    let (st, got) = post(&app, "1.10", &body, &[]).await;
    assert_eq!(st, 202, "{got}");
    let uuid = got["uuid"].as_str().expect("uuid").to_string();
    tick(&app).await;
    app.t.notifications.take();
    let (st, got) = patch_v(
        &app,
        "/v1/clusters/c1",
        "1.10",
        r#"[{"op": "replace", "path": "/node_count", "value": 3}]"#,
    )
    .await;
    assert_eq!((st, got), (202, json!({"uuid": uuid})));
    let sent = app.t.notifications.take();
    assert_eq!(
        sent.iter()
            .map(|n| (n.event_type.as_str(), n.payload["outcome"].as_str()))
            .collect::<Vec<_>>(),
        [("magnum.cluster.update", Some("pending"))]
    );
    // A second update while in progress is refused synchronously.
    let (st, got) = patch_v(
        &app,
        "/v1/clusters/c1",
        "1.10",
        r#"[{"op": "replace", "path": "/node_count", "value": 4}]"#,
    )
    .await;
    assert_eq!(
        (st, detail(&got)),
        (
            409,
            "Updating a cluster when status is \"UPDATE_IN_PROGRESS\" is not supported."
        )
    );
    tick(&app).await;
    let (_, got) = call_v(&app, "GET /v1/clusters/c1", "", "").await;
    assert_eq!(got["status"], json!("UPDATE_COMPLETE"), "{got}");
    assert_eq!(got["node_count"], json!(3));

    // Health only: no driver call, status unchanged.
    app.t.notifications.take();
    let (st, got) = patch_v(
        &app,
        "/v1/clusters/c1",
        "1.10",
        r#"[{"op": "replace", "path": "/health_status", "value": "UNHEALTHY"},
            {"op": "replace", "path": "/health_status_reason", "value": "{'api': 'down'}"}]"#,
    )
    .await;
    assert_eq!(st, 202, "{got}");
    let (_, got) = call_v(&app, "GET /v1/clusters/c1", "", "").await;
    assert_eq!(got["health_status"], json!("UNHEALTHY"), "{got}");
    assert_eq!(got["health_status_reason"], json!({"api": "down"}));
    assert_eq!(got["status"], json!("UPDATE_COMPLETE"));
    assert_eq!(got["node_count"], json!(3));
    assert!(app.t.notifications.take().is_empty());
}

// Ports the four cases of TestClusterPatchRules (at 1.9): each is Magnum's
// 400 and leaves every table unchanged.
#[tokio::test]
async fn cluster_patch_rules() {
    let (app, tid) = strict_app().await;
    let body = format!(r#"{{"name": "c1", "cluster_template_id": "{tid}"}}"#);
    assert_eq!(post(&app, "", &body, &[]).await.0, 202);
    tick(&app).await;
    let before = crate::db::testing::table_digest(&app.t.db).await;
    for (name, body, status, want) in [
        (
            "internal attribute",
            r#"[{"op": "replace", "path": "/api_address", "value": "x"}]"#,
            400,
            "'/api_address' is an internal attribute and can not be updated",
        ),
        (
            "other property",
            r#"[{"op": "replace", "path": "/name", "value": "other"}]"#,
            400,
            "cannot change cluster property(ies) name.",
        ),
        (
            "remove mandatory",
            r#"[{"op": "remove", "path": "/cluster_template_id"}]"#,
            400,
            "'/cluster_template_id' is a mandatory attribute and can not be removed",
        ),
        (
            "zero below 1.10",
            r#"[{"op": "replace", "path": "/node_count", "value": 0}]"#,
            400,
            "Resizing a nodegroup to zero is not supported in the provided microversion.",
        ),
    ] {
        let (st, got) = patch_v(&app, "/v1/clusters/c1", "1.9", body).await;
        assert_eq!((st, detail(&got)), (status, want), "{name}");
        crate::db::testing::table_digest(&app.t.db)
            .await
            .assert_same_as(&before, format_args!("{name}: tables changed"));
    }
}

// The node count resolution of patch.md §3 step 3 and the other refusals:
// `remove /node_count` resizes the default worker to 1, zero is accepted
// from 1.10, the delta names every changed field in order, a nested path
// into an internal list is a changed property, another project's member
// gets 404, a boolean rollback is accepted from 1.3.
#[tokio::test]
async fn cluster_patch_node_count_and_refusals() {
    let (app, tid) = strict_app().await;
    let body = format!(r#"{{"name": "c1", "cluster_template_id": "{tid}", "node_count": 2}}"#);
    assert_eq!(post(&app, "", &body, &[]).await.0, 202);
    tick(&app).await;
    let (st, got) = patch_v(
        &app,
        "/v1/clusters/c1",
        "1.10",
        r#"[{"op": "remove", "path": "/node_count"}]"#,
    )
    .await;
    assert_eq!(st, 202, "{got}");
    tick(&app).await;
    assert_eq!(count(&app).await, json!(1));
    let (st, got) = patch_v(
        &app,
        "/v1/clusters/c1?rollback=True",
        "1.10",
        r#"[{"op": "replace", "path": "/node_count", "value": 0}]"#,
    )
    .await;
    assert_eq!(st, 202, "{got}");
    tick(&app).await;
    assert_eq!(count(&app).await, json!(0));
    let (st, got) = patch_v(
        &app,
        "/v1/clusters/c1?rollback=maybe",
        "1.10",
        r#"[{"op": "replace", "path": "/node_count", "value": 2}]"#,
    )
    .await;
    assert_eq!(st, 400, "{got}");
    let (st, got) = patch_v(
        &app,
        "/v1/clusters/c1",
        "1.10",
        r#"[{"op": "replace", "path": "/create_timeout", "value": 5},
            {"op": "replace", "path": "/keypair", "value": "other"},
            {"op": "replace", "path": "/node_count", "value": 2}]"#,
    )
    .await;
    assert_eq!(
        (st, detail(&got)),
        (
            400,
            "cannot change cluster property(ies) keypair, create_timeout."
        )
    );
    let (st, got) = patch_v(
        &app,
        "/v1/clusters/c1",
        "1.10",
        r#"[{"op": "add", "path": "/node_addresses/0", "value": "10.0.0.9"}]"#,
    )
    .await;
    assert_eq!(
        (st, detail(&got)),
        (400, "cannot change cluster property(ies) node_addresses.")
    );
    let (st, got) = patch_v(
        &app,
        "/v1/clusters/c1",
        "1.10",
        r#"[{"op": "replace", "path": "/health_status", "value": "GOOD"}]"#,
    )
    .await;
    assert_eq!(
        (st, detail(&got)),
        (
            400,
            "Invalid input for field/attribute health_status. Value: 'GOOD'. Value should be one of: HEALTHY, UNHEALTHY, UNKNOWN"
        )
    );
    let other = [
        "X-Project-Id: p2",
        "X-User-Id: u2",
        "X-Roles: member,reader",
    ];
    let a = app
        .call(
            "PATCH /v1/clusters/c1",
            r#"[{"op": "replace", "path": "/node_count", "value": 2}]"#,
            &other,
        )
        .await;
    assert_eq!(a.status.as_u16(), 404, "{}", a.text());
    assert_eq!(count(&app).await, json!(0));
}
