//! Manila v2 share types: list, show and the default type. The project id
//! after `/v2` is optional, as it is since Manila's microversion 2.60. The
//! bodies are those of microversion 2.0 (no header sent): each type under
//! `share_types` and, for old clients, again under `volume_types`.

use axum::response::Response;
use serde_json::{Map, Value, json};

use crate::{Call, ShareType, State, json_response};

fn body(t: &ShareType) -> Value {
    let mut extra = Map::new();
    let mut required = Map::new();
    if let Some(dhss) = t.driver_handles_share_servers {
        let v = Value::String(if dhss { "True" } else { "False" }.to_owned());
        extra.insert("driver_handles_share_servers".to_owned(), v.clone());
        required.insert("driver_handles_share_servers".to_owned(), v);
    }
    json!({
        "id": t.id, "name": t.name, "description": null,
        "share_type_access:is_public": true,
        "extra_specs": extra, "required_extra_specs": required,
    })
}

fn not_found(msg: &str) -> Response {
    json_response(404, json!({"itemNotFound": {"code": 404, "message": msg}}))
}

fn one(t: &ShareType) -> Response {
    json_response(200, json!({"share_type": body(t), "volume_type": body(t)}))
}

pub(crate) fn serve(st: &State, call: &Call) -> Response {
    let Some(mut rest) = call.path.strip_prefix("/v2") else {
        return not_found("The resource could not be found.");
    };
    // /v2/{project_id}/types…
    if !rest.starts_with("/types") {
        let after = rest.trim_start_matches('/');
        rest = after.find('/').map_or("", |i| &after[i..]);
    }
    match rest {
        "/types" | "/types/" => {
            let all: Vec<Value> = st.seed.share_types.iter().map(body).collect();
            json_response(200, json!({"share_types": all, "volume_types": all}))
        }
        "/types/default" => {
            match st
                .seed
                .default_share_type
                .as_ref()
                .and_then(|name| st.seed.share_types.iter().find(|t| &t.name == name))
            {
                Some(t) => one(t),
                None => not_found("The resource could not be found."),
            }
        }
        other => match other
            .strip_prefix("/types/")
            .and_then(|id| st.seed.share_types.iter().find(|t| t.id == id))
        {
            Some(t) => one(t),
            None => not_found("Share type could not be found."),
        },
    }
}
