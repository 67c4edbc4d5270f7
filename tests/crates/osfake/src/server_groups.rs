//! Nova's os-server-groups (microversion 2.1: one policy in `policies`),
//! read-write, per project; an admin sees every project with
//! `all_projects=true`.

use axum::response::Response;
use http::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{Call, Caller, ServerGroup, State, json_response, no_content, nova};

fn body(g: &ServerGroup) -> Value {
    json!({
        "id": g.id, "name": g.name, "policies": [g.policy], "members": [],
        "metadata": {}, "project_id": g.project_id, "user_id": "fake-user",
    })
}

#[derive(Deserialize)]
struct CreateBody {
    server_group: CreateGroup,
}

#[derive(Deserialize)]
struct CreateGroup {
    #[serde(default)]
    name: String,
    #[serde(default)]
    policies: Vec<String>,
}

pub(crate) fn serve(st: &mut State, call: &Call, caller: &Caller, raw: &[u8]) -> Response {
    let id = call
        .path
        .strip_prefix("/v2.1/os-server-groups")
        .unwrap_or_default()
        .trim_start_matches('/');
    match (&call.method, id.is_empty()) {
        (&Method::GET, true) => {
            let all = caller.admin && call.query.get("all_projects") == Some("true");
            let out: Vec<Value> = st
                .seed
                .server_groups
                .iter()
                .filter(|g| all || g.project_id == caller.project)
                .map(body)
                .collect();
            json_response(200, json!({"server_groups": out}))
        }
        (&Method::POST, true) => {
            let parsed = serde_json::from_slice::<CreateBody>(raw)
                .ok()
                .filter(|b| !b.server_group.name.is_empty() && b.server_group.policies.len() == 1);
            let Some(CreateBody {
                server_group: CreateGroup { name, mut policies },
            }) = parsed
            else {
                return json_response(
                    400,
                    json!({"badRequest": {"code": 400,
                        "message": "Invalid input for field/attribute server_group."}}),
                );
            };
            st.seq += 1;
            let g = ServerGroup {
                id: format!("5e0c0000-0000-4000-8000-{:012}", st.seq),
                name,
                policy: policies.remove(0),
                project_id: caller.project.clone(),
            };
            let out = body(&g);
            st.seed.server_groups.push(g);
            json_response(200, json!({"server_group": out}))
        }
        (&Method::DELETE, false) => {
            let Some(i) = st
                .seed
                .server_groups
                .iter()
                .position(|g| g.id == id && (caller.admin || g.project_id == caller.project))
            else {
                return nova::not_found(&format!("Instance group {id} could not be found."));
            };
            st.seed.server_groups.remove(i);
            no_content()
        }
        _ => json_response(
            405,
            json!({"error": {"code": 405, "message": "not supported by the double"}}),
        ),
    }
}
