//! Glance v2: image show and list.

use axum::response::Response;
use serde_json::{Map, Value, json};

use crate::{Call, Image, Query, State, TIMESTAMP, json_response, page, text_response};

/// Glance's `[DEFAULT]/limit_param_default`.
const DEFAULT_LIMIT: usize = 25;

/// An image as Glance v2 renders it: custom properties at the top level next
/// to the core attributes.
fn body(img: &Image) -> Value {
    let mut m = Map::new();
    for (k, v) in &img.properties {
        m.insert(k.clone(), Value::String(v.clone()));
    }
    if !img.os_distro.is_empty() {
        m.insert("os_distro".into(), Value::String(img.os_distro.clone()));
    }
    if !img.magnum_driver.is_empty() {
        m.insert(
            "magnum_driver".into(),
            Value::String(img.magnum_driver.clone()),
        );
    }
    let visibility = if img.visibility.is_empty() {
        "public"
    } else {
        img.visibility.as_str()
    };
    let core = json!({
        "id": img.id, "name": img.name, "status": "active", "visibility": visibility,
        "os_hidden": img.hidden, "protected": false, "tags": [],
        "container_format": "bare", "disk_format": "qcow2", "min_disk": 0, "min_ram": 0,
        "size": 1_073_741_824_u64, "virtual_size": null, "checksum": null,
        "owner": (!img.owner.is_empty()).then_some(img.owner.as_str()),
        "created_at": TIMESTAMP, "updated_at": TIMESTAMP,
        "self": format!("/v2/images/{}", img.id),
        "file": format!("/v2/images/{}/file", img.id),
        "schema": "/v2/schemas/image",
    });
    if let Value::Object(core) = core {
        m.extend(core);
    }
    Value::Object(m)
}

fn not_found(detail: &str) -> Response {
    text_response(404, &format!("404 Not Found\n\n{detail}\n\n   "))
}

pub(crate) fn serve(st: &State, call: &Call) -> Response {
    let path = call.path.as_str();
    if path == "/v2/images" || path == "/v2/images/" {
        return list(st, call);
    }
    if let Some(id) = path.strip_prefix("/v2/images/")
        && path.matches('/').count() == 3
    {
        return match st.seed.images.iter().find(|i| i.id == id) {
            Some(img) => json_response(200, body(img)),
            // Glance answers a missing image (and any id that is not a
            // UUID) with a plain-text 404.
            None => not_found(&format!("No image found with ID {id}")),
        };
    }
    not_found("The resource could not be found.")
}

fn list(st: &State, call: &Call) -> Response {
    let q = &call.query;
    let mut limit = if st.page_size > 0 {
        st.page_size
    } else {
        DEFAULT_LIMIT
    };
    if let Some(v) = q.get("limit").filter(|v| !v.is_empty()) {
        match v.parse::<usize>() {
            Ok(n) => limit = n,
            Err(_) => {
                return json_response(400, json!({"message": "limit param must be an integer"}));
            }
        }
    }
    let hidden = q.get("os_hidden") == Some("true");
    let matched: Vec<Image> = st
        .seed
        .images
        .iter()
        .filter(|img| img.hidden == hidden)
        .filter(|img| q.get("name").is_none_or(|n| img.name == n))
        .filter(|img| q.get("id").is_none_or(|id| img.id == id))
        .cloned()
        .collect();
    let Some((items, full)) = page(&matched, |i| i.id.as_str(), q.get("marker"), limit) else {
        return text_response(400, "400 Bad Request\n\nmarker not found\n\n   ");
    };
    let mut out = json!({
        "images": items.iter().map(body).collect::<Vec<_>>(),
        "schema": "/v2/schemas/images",
        "first": format!("/v2/images?{}", q.encode()),
    });
    if full && let Some(last) = items.last() {
        let mut next: Query = q.clone();
        next.set("marker", last.id.clone());
        // Glance's next link is a path relative to the service root.
        out["next"] = Value::String(format!("/v2/images?{}", next.encode()));
    }
    json_response(200, out)
}
