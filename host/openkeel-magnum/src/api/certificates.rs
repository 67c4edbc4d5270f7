//! `/v1/certificates` (magnum/api/controllers/v1/certificate.py): the CA of
//! a cluster (#27), the signing of a CSR with it (#28) and the rotation of
//! the cluster's CAs (#29).

use http::StatusCode;
use magnum_domain::MagnumError;
use magnum_domain::models::Cluster;
use magnum_jsonpatch::decode::decode_ordered;
use magnum_jsonpatch::python::str_of;
use magnum_jsonpatch::value::PyValue;
use serde_json::{Map, Value, json};

use super::errors::json_response;
use super::versions::Link;
use super::{ApiError, Call, Handlers, Services};
use crate::policy::Target;

/// The attributes of the `Certificate` body type in WSME's order: the
/// class's declarations, then those of `APIBase`.
const ATTRIBUTES: [&str; 7] = [
    "cluster_uuid",
    "links",
    "csr",
    "pem",
    "ca_cert_type",
    "created_at",
    "updated_at",
];

/// Registers the three handlers.
pub fn register(h: &mut Handlers, services: &Services) {
    let s = services.clone();
    h.register("certificate.get_one", move |call: Call| {
        let s = s.clone();
        async move { get_one(&s, call).await }
    });
    let s = services.clone();
    h.register("certificate.post", move |call: Call| {
        let s = s.clone();
        async move { post(&s, call).await }
    });
    let s = services.clone();
    h.register("certificate.patch", move |call: Call| {
        let s = s.clone();
        async move { patch(&s, call).await }
    });
}

/// The policy target Magnum passes for certificates: the cluster's
/// `as_dict()` (the default rules read `project_id` and `user_id`).
pub(crate) fn cluster_target(c: &Cluster) -> Target {
    let text = |v: &Option<String>| v.as_ref().map_or(Value::Null, |s| json!(s));
    let mut t = Target::new();
    t.insert("id".into(), json!(c.id));
    t.insert("uuid".into(), json!(c.uuid));
    t.insert("name".into(), json!(c.name));
    t.insert("project_id".into(), json!(c.project_id));
    t.insert("user_id".into(), json!(c.user_id));
    t.insert("cluster_template_id".into(), json!(c.cluster_template_id));
    t.insert("keypair".into(), text(&c.keypair));
    t.insert("stack_id".into(), text(&c.stack_id));
    t.insert("api_address".into(), text(&c.api_address));
    t.insert(
        "status".into(),
        c.status.map_or(Value::Null, |s| json!(s.as_str())),
    );
    t.insert("status_reason".into(), text(&c.status_reason));
    t.insert("coe_version".into(), text(&c.coe_version));
    t.insert("container_version".into(), text(&c.container_version));
    t.insert("master_flavor_id".into(), text(&c.master_flavor_id));
    t.insert("flavor_id".into(), text(&c.flavor_id));
    t.insert("fixed_network".into(), text(&c.fixed_network));
    t.insert("fixed_subnet".into(), text(&c.fixed_subnet));
    t.insert("discovery_url".into(), text(&c.discovery_url));
    t.insert(
        "labels".into(),
        c.labels.as_ref().map_or(Value::Null, |l| json!(l)),
    );
    t
}

/// The `self` and `bookmark` links of a cluster's certificate.
fn links(base: &str, cluster_uuid: &str) -> Value {
    json!(Link::pair(base, "certificates", cluster_uuid))
}

/// GET /v1/certificates/{cluster_ident} (#27): the lookup in the caller's
/// project (404/409; no all-projects rule, so admins get 404 for other
/// projects), `certificate:get` on the cluster, then the CA PEM that
/// `ca_cert_type` chooses.
async fn get_one(s: &Services, call: Call) -> Result<axum::response::Response, ApiError> {
    let ident = call
        .params
        .get("cluster_ident")
        .cloned()
        .unwrap_or_default();
    let cluster = s.conductor.find_cluster(&call.ctx, &ident).await?;
    super::policy::enforce(
        &s.enforcer,
        &call.ctx,
        "certificate:get",
        Some(&cluster_target(&cluster)),
    )?;
    let pem = s
        .conductor
        .get_ca_certificate(&cluster, call.query.text("ca_cert_type"))
        .await?;
    // WSME writes the attributes sorted by name.
    let body = json!({
        "cluster_uuid": cluster.uuid,
        "links": links(&call.base_url, &cluster.uuid),
        "pem": pem,
    });
    Ok(json_response(StatusCode::OK, &body))
}

/// A parsed POST body.
struct SignRequest {
    cluster: Option<Cluster>,
    csr: Option<String>,
    /// The string `ca_cert_type`, when it is one.
    ca_cert_type: Option<String>,
    /// The attribute as it is answered: absent, `null` or the string.
    ca_cert_type_answer: Option<Value>,
}

/// The `Certificate` body built as WSME builds it: unknown attributes
/// first, then each attribute in declaration order, the cluster being looked
/// up while `cluster_uuid` is set (not found → 400).
async fn parse_body(s: &Services, call: &Call) -> Result<SignRequest, ApiError> {
    let raw = call.require_body()?;
    let doc = decode_ordered(raw).map_err(|_| MagnumError::invalid_json_body())?;
    let PyValue::Dict(obj) = doc else {
        return Err(MagnumError::request_not_a_dict().into());
    };
    let mut unknown: Vec<String> = Vec::new();
    for k in obj.keys() {
        let name = str_of(k);
        if !ATTRIBUTES.contains(&name.as_str()) && !unknown.contains(&name) {
            unknown.push(name);
        }
    }
    if !unknown.is_empty() {
        let names: Vec<&str> = unknown.iter().map(String::as_str).collect();
        return Err(MagnumError::unknown_attribute("certificate", &names).into());
    }
    let mut req = SignRequest {
        cluster: None,
        csr: None,
        ca_cert_type: None,
        ca_cert_type_answer: None,
    };
    for attr in ATTRIBUTES {
        let Some(v) = obj.get(attr) else { continue };
        if v.is_none() {
            if attr == "ca_cert_type" {
                req.ca_cert_type_answer = Some(Value::Null);
            }
            continue;
        }
        match attr {
            "cluster_uuid" => {
                // Magnum: certificate.py:61 — the setter looks the cluster
                // up; WSME hands it whatever the body holds.
                let ident = match v.as_str() {
                    Some("") => continue, // falsy: the attribute stays unset
                    Some(s) => s.to_owned(),
                    None => str_of(v),
                };
                let cluster =
                    s.conductor
                        .find_cluster(&call.ctx, &ident)
                        .await
                        .map_err(|e| match e {
                            crate::conductor::Error::Client(m) if m.kind == "ClusterNotFound" => {
                                ApiError::Magnum(m.with_status(400))
                            }
                            other => other.into(),
                        })?;
                req.cluster = Some(cluster);
            }
            "links" | "created_at" | "updated_at" => {
                return Err(MagnumError::read_only_field(attr, v).into());
            }
            "csr" => match v.as_str() {
                Some("") => return Err(MagnumError::too_short(attr, "", 1).into()),
                Some(csr) => req.csr = Some(csr.to_owned()),
                None => return Err(MagnumError::not_a_string(attr, v).into()),
            },
            "pem" => {
                if v.as_str().is_none() {
                    return Err(MagnumError::not_a_string(attr, v).into());
                }
            }
            "ca_cert_type" => match v.as_str() {
                Some(t) => {
                    req.ca_cert_type = Some(t.to_owned());
                    req.ca_cert_type_answer = Some(json!(t));
                }
                None => return Err(MagnumError::not_a_string(attr, v).into()),
            },
            _ => {}
        }
    }
    Ok(req)
}

/// POST /v1/certificates (#28): the body (with the cluster lookup),
/// `certificate:create` on the cluster, then the CSR signed by the CA
/// `ca_cert_type` chooses; 201.
async fn post(s: &Services, call: Call) -> Result<axum::response::Response, ApiError> {
    let req = parse_body(s, &call).await?;
    let Some(cluster) = req.cluster else {
        // Deviation: Magnum answers a body without cluster_uuid with a 500
        // (the lookup of an unset value fails); we answer 400.
        return Err(MagnumError::mandatory_field_missing("cluster_uuid").into());
    };
    super::policy::enforce(
        &s.enforcer,
        &call.ctx,
        "certificate:create",
        Some(&cluster_target(&cluster)),
    )?;
    let Some(csr) = req.csr else {
        // Deviation: without csr Magnum's conductor fails with a 500 (the
        // object field is unset); we answer 400.
        return Err(MagnumError::mandatory_field_missing("csr").into());
    };
    let pem = s
        .conductor
        .sign_certificate(&cluster, &csr, req.ca_cert_type.as_deref())
        .await?;
    // WSME writes the attributes sorted by name.
    let mut body = Map::new();
    if let Some(t) = req.ca_cert_type_answer {
        body.insert("ca_cert_type".into(), t);
    }
    body.insert("cluster_uuid".into(), json!(cluster.uuid));
    body.insert("csr".into(), json!(csr));
    body.insert("links".into(), links(&call.base_url, &cluster.uuid));
    body.insert("pem".into(), json!(pem));
    Ok(json_response(StatusCode::CREATED, &body))
}

/// PATCH /v1/certificates/{cluster_ident} (#29): the lookup,
/// `certificate:rotate_ca` on the cluster, then the CA rotation; 202 with
/// the cluster's UUID.
async fn patch(s: &Services, call: Call) -> Result<axum::response::Response, ApiError> {
    let ident = call
        .params
        .get("cluster_ident")
        .cloned()
        .unwrap_or_default();
    let cluster = s.conductor.find_cluster(&call.ctx, &ident).await?;
    super::policy::enforce(
        &s.enforcer,
        &call.ctx,
        "certificate:rotate_ca",
        Some(&cluster_target(&cluster)),
    )?;
    let rotated = s.conductor.rotate_ca(&call.ctx, &cluster).await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &json!({"uuid": rotated.uuid}),
    ))
}
