//! Cinder v3 volume types: list, show and the default type. The project id
//! after `/v3` is optional, as it is since Cinder's microversion 3.67.

use axum::response::Response;
use serde_json::{Value, json};

use crate::{Call, State, VolumeType, json_response};

fn body(t: &VolumeType) -> Value {
    json!({
        "id": t.id, "name": t.name, "description": null, "is_public": true,
        "os-volume-type-access:is_public": true, "extra_specs": {}, "qos_specs_id": null,
    })
}

fn not_found(msg: &str) -> Response {
    json_response(404, json!({"itemNotFound": {"code": 404, "message": msg}}))
}

pub(crate) fn serve(st: &State, call: &Call) -> Response {
    let Some(mut rest) = call.path.strip_prefix("/v3") else {
        return not_found("The resource could not be found.");
    };
    // /v3/{project_id}/types…
    if !rest.starts_with("/types") {
        let after = rest.trim_start_matches('/');
        rest = after.find('/').map_or("", |i| &after[i..]);
    }
    match rest {
        "/types" | "/types/" => json_response(
            200,
            json!({"volume_types": st.seed.volume_types.iter().map(body).collect::<Vec<_>>()}),
        ),
        "/types/default" => {
            let default = st
                .seed
                .default_volume_type
                .as_ref()
                .and_then(|name| st.seed.volume_types.iter().find(|t| &t.name == name));
            match default {
                Some(t) => json_response(200, json!({"volume_type": body(t)})),
                None => not_found("Default volume type can not be found."),
            }
        }
        other => match other
            .strip_prefix("/types/")
            .and_then(|id| st.seed.volume_types.iter().find(|t| t.id == id))
        {
            Some(t) => json_response(200, json!({"volume_type": body(t)})),
            None => not_found("Volume type could not be found."),
        },
    }
}
