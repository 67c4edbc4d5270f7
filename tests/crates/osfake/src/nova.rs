//! Nova v2.1: flavor show and list, flavor extra specs, keypair show, a
//! project's quota details.

use axum::response::Response;
use serde_json::{Value, json};

use crate::{Call, Flavor, State, TIMESTAMP, json_response, page};

/// Nova's `[api]/max_limit`.
const MAX_LIMIT: usize = 1000;

fn flavor_body(f: &Flavor, detail: bool, base: &str) -> Value {
    let mut m = json!({
        "id": f.id, "name": f.name,
        "links": [{"rel": "self", "href": format!("{base}/v2.1/flavors/{}", f.id)}],
    });
    if detail {
        let extra = json!({
            "vcpus": f.vcpus, "ram": f.ram, "disk": f.disk, "swap": "",
            "OS-FLV-EXT-DATA:ephemeral": 0, "OS-FLV-DISABLED:disabled": false,
            "os-flavor-access:is_public": true, "rxtx_factor": 1.0,
        });
        if let (Value::Object(m), Value::Object(extra)) = (&mut m, extra) {
            m.extend(extra);
        }
    }
    m
}

pub(crate) fn not_found(msg: &str) -> Response {
    json_response(404, json!({"itemNotFound": {"code": 404, "message": msg}}))
}

fn bad_request(msg: &str) -> Response {
    json_response(400, json!({"badRequest": {"code": 400, "message": msg}}))
}

/// `base` is the compute prefix the request came in on
/// (`http://…/compute`), for the links.
pub(crate) fn serve(st: &State, call: &Call, base: &str) -> Response {
    let path = call.path.as_str();
    if path == "/v2.1/flavors" || path == "/v2.1/flavors/detail" {
        return list_flavors(st, call, base);
    }
    let slashes = path.matches('/').count();
    if let Some(id) = path
        .strip_prefix("/v2.1/flavors/")
        .and_then(|rest| rest.strip_suffix("/os-extra_specs"))
        && slashes == 4
    {
        return match st.seed.flavors.iter().find(|f| f.id == id) {
            Some(f) => json_response(
                200,
                json!({"extra_specs": st.seed.flavor_extra_specs.get(&f.id).cloned().unwrap_or_default()}),
            ),
            None => not_found(&format!("Flavor {id} could not be found.")),
        };
    }
    if let Some(id) = path.strip_prefix("/v2.1/flavors/")
        && slashes == 3
    {
        return match st.seed.flavors.iter().find(|f| f.id == id) {
            Some(f) => json_response(200, json!({"flavor": flavor_body(f, true, base)})),
            None => not_found(&format!("Flavor {id} could not be found.")),
        };
    }
    if let Some(name) = path.strip_prefix("/v2.1/os-keypairs/")
        && slashes == 3
    {
        return match st.seed.keypairs.iter().find(|k| k.name == name) {
            Some(k) => {
                let key_type = if k.key_type.is_empty() {
                    "ssh"
                } else {
                    k.key_type.as_str()
                };
                json_response(
                    200,
                    json!({"keypair": {
                        "name": k.name, "type": key_type, "public_key": k.public_key,
                        "fingerprint": k.fingerprint, "user_id": "fake-user", "id": 1,
                        "created_at": TIMESTAMP, "deleted": false, "deleted_at": null,
                        "updated_at": null,
                    }}),
                )
            }
            None => not_found(&format!("Keypair {name} not found for user fake-user")),
        };
    }
    if let Some(project) = path
        .strip_prefix("/v2.1/os-quota-sets/")
        .and_then(|rest| rest.strip_suffix("/detail"))
        && slashes == 4
    {
        return json_response(200, json!({"quota_set": quota_set(project)}));
    }
    not_found("The resource could not be found.")
}

/// A project's quotas with their usage (`os-quota-sets/{id}/detail`): Nova's
/// defaults, nothing in use (the double runs no server).
fn quota_set(project: &str) -> Value {
    let mut set = serde_json::Map::new();
    set.insert("id".into(), json!(project));
    for (name, limit) in [
        ("instances", 10),
        ("cores", 20),
        ("ram", 51_200),
        ("key_pairs", 100),
        ("metadata_items", 128),
        ("server_groups", 10),
        ("server_group_members", 10),
    ] {
        set.insert(
            name.into(),
            json!({"in_use": 0, "limit": limit, "reserved": 0}),
        );
    }
    Value::Object(set)
}

fn list_flavors(st: &State, call: &Call, base: &str) -> Response {
    let q = &call.query;
    let mut limit = if st.page_size > 0 {
        st.page_size
    } else {
        MAX_LIMIT
    };
    if let Some(v) = q.get("limit").filter(|v| !v.is_empty()) {
        match v.parse::<usize>() {
            Ok(n) => limit = limit.min(n),
            Err(_) => return bad_request("limit must be an integer"),
        }
    }
    let Some((items, full)) = page(&st.seed.flavors, |f| f.id.as_str(), q.get("marker"), limit)
    else {
        return bad_request(&format!(
            "marker [{}] not found",
            q.get("marker").unwrap_or_default()
        ));
    };
    let detail = call.path.ends_with("/detail");
    let mut out = json!({
        "flavors": items.iter().map(|f| flavor_body(f, detail, base)).collect::<Vec<_>>(),
    });
    if full && let Some(last) = items.last() {
        let mut next = q.clone();
        next.set("marker", last.id.clone());
        // Nova's next link is absolute.
        out["flavors_links"] = json!([{
            "rel": "next",
            "href": format!("{base}{}?{}", call.path, next.encode()),
        }]);
    }
    json_response(200, out)
}
