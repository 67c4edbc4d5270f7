//! `/v1/federations` (magnum/api/controllers/v1/federation.py): lists,
//! reads, creates, patches (members joined and unjoined, properties) and
//! deletes the caller's federations. Every lookup is in the caller's own
//! project: federations have no all-projects rule.

use axum::response::Response;
use http::StatusCode;
use magnum_domain::models::Federation;
use magnum_domain::validation::CLUSTER_NAME;
use magnum_domain::{MagnumError, RequestContext, Status};
use magnum_jsonpatch::patch::{Op, Operation, string_map};
use python_semantics::{PyValue, python};
use serde::Serialize;

use super::body::{Attr, Schema, Type, attr};
use super::errors::{json_response, no_content};
use super::paging::{Collection, Page};
use super::patch;
use super::versions::Link;
use super::views::{Form, isoformat};
use super::{ApiError, Call, Services};
use crate::conductor::{FederationCreate, federation_doc};

/// The status values the `status` enum accepts.
const STATUSES: &[&str] = Status::FEDERATION_NAMES;

/// WSME's `Federation` type, in declaration order.
const CREATE: Schema = Schema {
    arg: "federation",
    attrs: &[
        attr("uuid", Type::Uuid),
        attr("name", Type::String(CLUSTER_NAME)),
        attr("hostcluster_id", Type::Text),
        attr("member_ids", Type::TextList),
        attr("status", Type::Enum(STATUSES)),
        attr("status_reason", Type::Text),
        attr("properties", Type::StringDict),
        Attr {
            readonly: true,
            ..attr("links", Type::Links)
        },
        attr("created_at", Type::Datetime).readonly(),
        attr("updated_at", Type::Datetime).readonly(),
    ],
};

/// `Federation.convert_with_links` (keys in Magnum's JSON order); the
/// detail-only fields are `None` in a summary.
#[derive(Serialize)]
struct View {
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<String>,
    hostcluster_id: Option<String>,
    links: [Link; 2],
    member_ids: Vec<String>,
    name: String,
    properties: Option<std::collections::BTreeMap<String, String>>,
    status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_reason: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_at: Option<Option<String>>,
    uuid: String,
}

fn view(base: &str, f: &Federation, form: Form) -> View {
    let detail = form == Form::Detail;
    View {
        created_at: detail.then(|| isoformat(f.created_at)),
        hostcluster_id: f.hostcluster_id.clone(),
        links: Link::pair(base, "federations", &f.uuid),
        member_ids: f.member_ids.clone().unwrap_or_default(),
        name: f.name.clone(),
        properties: f.properties.clone(),
        status: f.status.map(Status::as_str),
        status_reason: detail.then(|| f.status_reason.clone()),
        updated_at: detail.then(|| f.updated_at.map(isoformat)),
        uuid: f.uuid.clone(),
    }
}

/// The federation of the path in the caller's own project (the context
/// of its lookups, returned too), then `rule` on it, its `as_dict()` the
/// target: how the handlers of a federation begin.
async fn authorized(
    s: &Services,
    call: &Call<String>,
    rule: &str,
) -> Result<(RequestContext, Federation), ApiError> {
    let ctx = own_project(&call.ctx);
    let f = s.conductor.get_federation(&ctx, &call.path).await?;
    let target = super::policy::dict_target(federation_doc(&f));
    super::policy::enforce(&s.enforcer, &call.ctx, rule, Some(&target))?;
    Ok((ctx, f))
}

/// The caller's context for federation lookups: never all projects.
fn own_project(ctx: &RequestContext) -> RequestContext {
    RequestContext {
        all_projects: false,
        ..ctx.clone()
    }
}

/// The `202 {"uuid": …}` answer of create and patch.
fn accepted(uuid: &str) -> Response {
    #[derive(Serialize)]
    struct Uuid<'a> {
        uuid: &'a str,
    }
    json_response(StatusCode::ACCEPTED, &Uuid { uuid })
}

/// routes.md #33 and #34: the rule of the form, the page, the caller's
/// federations.
pub(crate) async fn list(s: Services, call: Call, form: Form) -> Result<Response, ApiError> {
    let (rule, resource) = match form {
        Form::Summary => ("federation:get_all", "federations"),
        Form::Detail => ("federation:detail", "federations/detail"),
    };
    super::policy::enforce(&s.enforcer, &call.ctx, rule, None)?;
    if call.marker_in_path {
        return Err(MagnumError::http_not_found_unformatted().into());
    }
    let page = Page::from_query(&call.query, s.conductor.settings().max_limit)?;
    let ctx = own_project(&call.ctx);
    let rows = s
        .conductor
        .list_federations(&ctx, &page.list_options())
        .await?;
    let next = page.next(&call.base_url, resource, rows.len(), || {
        rows.last().map(|f| f.uuid.clone()).unwrap_or_default()
    });
    let items = rows.iter().map(|f| view(&call.base_url, f, form)).collect();
    Ok(json_response(
        StatusCode::OK,
        &Collection::new("federations", items, next),
    ))
}

/// routes.md #35: the lookup (404/409), then `federation:get` on it.
pub(crate) async fn get_one(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let (_, f) = authorized(&s, &call, "federation:get").await?;
    Ok(json_response(
        StatusCode::OK,
        &view(&call.base_url, &f, Form::Detail),
    ))
}

/// routes.md #36: the body, `federation:create`, then the conductor's
/// checks; 202 with the new uuid (a client's `uuid` is checked and
/// ignored, as in Magnum).
pub(crate) async fn post(s: Services, call: Call) -> Result<Response, ApiError> {
    let b = CREATE.decode(call.require_body()?)?;
    super::policy::enforce(&s.enforcer, &call.ctx, "federation:create", None)?;
    let status = match b.text("status") {
        Some(v) => Some(
            v.parse::<Status>()
                .map_err(|_| MagnumError::server_error(format!("unknown status {v}")))?,
        ),
        None => None,
    };
    let req = FederationCreate {
        name: b.text("name").map(str::to_owned),
        hostcluster_id: b.text("hostcluster_id").map(str::to_owned),
        member_ids: b.list("member_ids").map(<[String]>::to_vec),
        status,
        status_reason: b.text("status_reason").map(str::to_owned),
        properties: b.string_map("properties"),
    };
    let ctx = own_project(&call.ctx);
    let f = s.conductor.create_federation(&ctx, req).await?;
    Ok(accepted(&f.uuid))
}

/// The fields of a federation a patch may show as changed, in the
/// object's order; only `member_ids` and `properties` may change.
const PATCH_FIELDS: &[&str] = &[
    "uuid",
    "name",
    "hostcluster_id",
    "member_ids",
    "status",
    "status_reason",
    "properties",
];

/// routes.md #37: the operations are checked, the federation looked up and
/// `federation:update` enforced on it; a first `add`/`remove` of
/// `/member_ids` joins or unjoins one cluster (by uuid) and becomes a
/// replace of the whole list, as in Magnum; then only members and
/// properties may have changed (400 naming the others). 202 with the uuid.
pub(crate) async fn patch_one(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let mut ops = patch::parse(call.require_body()?, &patch::FEDERATION)?;
    let (ctx, f) = authorized(&s, &call, "federation:update").await?;
    let Some(first) = ops.first().cloned() else {
        // Magnum: patch[0] of an empty list escapes as an IndexError.
        return Err(MagnumError::server_error("list index out of range").into());
    };
    let members = f.member_ids.clone().unwrap_or_default();
    if first.path == "/member_ids"
        && matches!(first.op, Op::Add | Op::Remove)
        && let Some(value) = first.value.as_ref().filter(|v| !v.is_none())
    {
        // Magnum: federation.py — only the first operation is rewritten.
        let member = python::str_of(value);
        s.conductor.federation_member(&ctx, &member).await?;
        let is_member = members.contains(&member);
        let list: Vec<String> = match first.op {
            Op::Add if is_member => {
                return Err(MagnumError::member_already_exists(&member, &f.name).into());
            }
            Op::Add => members.iter().cloned().chain([member]).collect(),
            _ if !is_member => {
                return Err(MagnumError::federation_member_not_found(&member, &f.name).into());
            }
            _ => members.iter().filter(|m| **m != member).cloned().collect(),
        };
        let value = PyValue::List(list.into_iter().map(PyValue::from).collect());
        ops[0] = Operation::new(Op::Replace, "/member_ids", Some(value));
    }
    let doc = federation_doc(&f);
    let patched = patch::apply(&doc, &ops, &patch::FEDERATION)?;
    let changed = patch::changed(&doc, &patched);
    let mut member_ids = f.member_ids.clone();
    let mut properties = f.properties.clone();
    let mut refused: Vec<&str> = Vec::new();
    for k in PATCH_FIELDS.iter().copied() {
        if !changed.iter().any(|c| c == k) {
            continue;
        }
        let v = patched.get(k).cloned().unwrap_or(PyValue::None);
        match k {
            "member_ids" => member_ids = member_list(&v)?,
            "properties" => {
                properties = string_map("properties", &v)
                    .map_err(MagnumError::from)?
                    .map(|e| e.into_iter().collect());
            }
            other => refused.push(other),
        }
    }
    if !refused.is_empty() {
        refused.sort_unstable();
        return Err(MagnumError::cannot_change_properties("federation", &refused).into());
    }
    s.conductor
        .update_federation(&ctx, &f.uuid, member_ids, properties)
        .await?;
    Ok(accepted(&f.uuid))
}

/// A patched `member_ids` value, checked as `[text]`.
fn member_list(v: &PyValue) -> Result<Option<Vec<String>>, MagnumError> {
    match v {
        PyValue::None => Ok(None),
        PyValue::List(l) => l
            .iter()
            .map(|e| match e {
                PyValue::Str(s) => Ok(s.clone()),
                other => Err(MagnumError::not_a_string("member_ids", other)),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        other => Err(MagnumError::invalid_input(
            "member_ids",
            other,
            &format!("Value not a valid list: {}", python::str_of(other)),
        )),
    }
}

/// routes.md #38: the lookup, `federation:delete` on it, the row; 204.
pub(crate) async fn delete(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let (ctx, f) = authorized(&s, &call, "federation:delete").await?;
    s.conductor.delete_federation(&ctx, &f.uuid).await?;
    Ok(no_content())
}

#[cfg(test)]
mod tests;
