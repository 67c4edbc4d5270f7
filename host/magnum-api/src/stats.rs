//! `GET /v1/stats` (magnum/api/controllers/v1/stats.py): the number of
//! clusters and nodes of the caller's project, or, for admins, of any
//! project or of all of them.

use http::StatusCode;
use magnum_domain::MagnumError;
use serde::Serialize;

use super::errors::json_response;
use super::{ApiError, Call, Services};

/// Magnum's `Stats` type.
#[derive(Serialize)]
struct View {
    clusters: i64,
    nodes: i64,
}

/// routes.md #31: `stats:get_all`, the type check, then non-admins may only
/// ask for their own project; admins get every project unless `project_id`
/// is given.
pub(crate) async fn get_all(s: Services, call: Call) -> Result<axum::response::Response, ApiError> {
    let ctx = &call.ctx;
    super::policy::enforce(&s.enforcer, ctx, "stats:get_all", None)?;
    let kind = call.query.text("type").unwrap_or("cluster");
    if kind.to_lowercase() != "cluster" {
        return Err(MagnumError::invalid_stats_type().into());
    }
    let asked = call.query.text("project_id").filter(|p| !p.is_empty());
    let project = if ctx.is_admin {
        asked
    } else {
        let own = ctx.project_id.as_str();
        if asked.is_some_and(|p| p != own) {
            return Err(MagnumError::not_authorized_default().into());
        }
        if own.is_empty() {
            // Magnum filters on project_id = None: nothing is counted.
            return Ok(json_response(
                StatusCode::OK,
                &View {
                    clusters: 0,
                    nodes: 0,
                },
            ));
        }
        Some(own)
    };
    let st = s.conductor.cluster_stats(project).await?;
    Ok(json_response(
        StatusCode::OK,
        &View {
            clusters: st.clusters,
            nodes: st.nodes,
        },
    ))
}

#[cfg(test)]
mod tests {
    use magnum_domain::models::{Cluster, NodeGroup};
    use serde_json::json;

    use crate::testing::{ADMIN, MEMBER, TestApp};

    const READER: &[&str] = &["X-Project-Id: p1", "X-User-Id: u1", "X-Roles: reader"];
    const OTHER: &[&str] = &[
        "X-Project-Id: p2",
        "X-User-Id: u2",
        "X-Roles: member,reader",
    ];

    /// One cluster of p1 with nodegroups of 1, 3 and 2 nodes.
    async fn seeded() -> TestApp {
        let app = TestApp::new().await;
        let mut q = app.t.db.q();
        let mut cl = Cluster {
            uuid: "c1000000-0000-4000-8000-000000000001".into(),
            name: "c1".into(),
            project_id: "p1".into(),
            user_id: "u1".into(),
            ..Cluster::default()
        };
        q.create_cluster(&mut cl).await.unwrap();
        for (i, n) in [1, 3, 2].into_iter().enumerate() {
            let mut ng = NodeGroup {
                uuid: format!("a1000000-0000-4000-8000-00000000000{i}"),
                name: format!("ng{i}"),
                cluster_id: cl.uuid.clone(),
                project_id: "p1".into(),
                node_count: Some(n),
                ..NodeGroup::default()
            };
            q.create_nodegroup(&mut ng).await.unwrap();
        }
        app
    }

    /// Go `TestStats`.
    #[tokio::test]
    async fn stats_of_own_project_or_for_admins_of_any() {
        let app = seeded().await;
        let no_project: &[&str] = &["X-User-Id: u9", "X-Roles: reader"];
        for (name, who, query, status, want) in [
            (
                "own project by default",
                READER,
                "",
                200,
                json!({"clusters": 1, "nodes": 6}),
            ),
            (
                "own project named",
                READER,
                "?project_id=p1",
                200,
                json!({"clusters": 1, "nodes": 6}),
            ),
            (
                "another project",
                READER,
                "?project_id=p2",
                403,
                json!("Not authorized."),
            ),
            (
                "unknown type",
                READER,
                "?type=pods",
                400,
                json!("Invalid stats type. Allowed values are 'cluster'"),
            ),
            (
                "type is case-insensitive",
                READER,
                "?type=Cluster",
                200,
                json!({"clusters": 1, "nodes": 6}),
            ),
            (
                "empty project of another caller",
                OTHER,
                "",
                200,
                json!({"clusters": 0, "nodes": 0}),
            ),
            (
                "a caller without a project",
                no_project,
                "",
                200,
                json!({"clusters": 0, "nodes": 0}),
            ),
            (
                "admin: every project",
                ADMIN,
                "",
                200,
                json!({"clusters": 1, "nodes": 6}),
            ),
            (
                "admin: one project",
                ADMIN,
                "?project_id=p2",
                200,
                json!({"clusters": 0, "nodes": 0}),
            ),
            (
                "unknown argument",
                READER,
                "?foo=1",
                400,
                json!("Unknown argument: \"foo\""),
            ),
            (
                "a member reads too",
                MEMBER,
                "",
                200,
                json!({"clusters": 1, "nodes": 6}),
            ),
        ] {
            let a = app.call(&format!("GET /v1/stats{query}"), "", who).await;
            assert_eq!(a.status, status, "{name}: {}", a.text());
            if status == 200 {
                assert_eq!(a.json(), want, "{name}");
            } else {
                assert_eq!(a.json()["errors"][0]["detail"], want, "{name}");
            }
        }
    }

    #[tokio::test]
    async fn the_policy_comes_first_and_members_of_stats_are_405() {
        let app = seeded().await;
        let none: &[&str] = &["X-Project-Id: p1", "X-User-Id: u1", "X-Roles: foo"];
        let a = app.call("GET /v1/stats?type=pods", "", none).await;
        assert_eq!(a.status, 403, "{}", a.text());
        assert_eq!(
            a.json()["errors"][0]["detail"],
            "Policy doesn't allow stats:get_all to be performed."
        );
        let a = app.call("GET /v1/stats/x", "", READER).await;
        assert_eq!(a.status, 405, "{}", a.text());
        assert_eq!(a.header("allow"), "GET");
        let a = app.call("GET /v1/stats", "", READER).await;
        assert_eq!(
            a.text(),
            r#"{"clusters": 1, "nodes": 6}"#,
            "Python's json.dumps form"
        );
    }
}
