//! `/v1/clusters/{cluster_id}/nodegroups` (magnum/api/controllers/v1/
//! nodegroup.py), from microversion 1.9 (the pipeline answers 406 below):
//! lists (summaries), reads (detail), creates, patches and deletes the
//! nodegroups of a cluster, with WSME's input rules, Magnum's 409 rules on
//! counts, roles, labels and taints, and default nodegroups protected.

use std::collections::BTreeMap;

use axum::response::Response;
use http::StatusCode;
use magnum_domain::models::{Cluster, NodeGroup, StringMap};
use magnum_domain::validation::{
    NodeGroupInput, RANGE_DOCKER_VOLUME_SIZE, RANGE_ID, RANGE_MAX_NODE_COUNT, RANGE_MIN_NODE_COUNT,
    RANGE_NODE_COUNT, ROLE_MASTER, ROLE_WORKER, STRING_FIELD, validate_node_group_input,
};
use magnum_domain::{MagnumError, RequestContext, Status};
use python_semantics::{Dict, PyValue};
use serde_json::{Value as Json, json};

use super::body::{Body, Const, Schema, Type, attr};
use super::errors::{json_response, no_content};
use super::paging::{Collection, Page};
use super::patch;
use super::versions::Link;
use super::views::{isoformat, labels_diff};
use super::{ApiError, Call, Services};

/// The status values the `status` enum accepts.
const STATUSES: &[&str] = Status::NAMES;

/// WSME's `NodeGroup` type, in declaration order, with its defaults.
const SCHEMA: Schema = Schema {
    arg: "nodegroup",
    attrs: &[
        attr("id", Type::Integer(RANGE_ID)),
        attr("uuid", Type::Uuid),
        attr("name", Type::String(STRING_FIELD)),
        attr("cluster_id", Type::Uuid),
        attr("project_id", Type::Text).readonly(),
        attr(
            "docker_volume_size",
            Type::Integer(RANGE_DOCKER_VOLUME_SIZE),
        ),
        attr("labels", Type::Labels),
        attr("links", Type::Links).readonly(),
        attr("flavor_id", Type::String(STRING_FIELD)),
        attr("image_id", Type::String(STRING_FIELD)),
        attr("node_addresses", Type::TextList).readonly(),
        attr("node_count", Type::Integer(RANGE_NODE_COUNT)).default(Const::Int(1)),
        attr("role", Type::String(STRING_FIELD)).default(Const::Str(ROLE_WORKER)),
        attr("min_node_count", Type::Integer(RANGE_MIN_NODE_COUNT)).default(Const::Int(0)),
        attr("max_node_count", Type::Integer(RANGE_MAX_NODE_COUNT)),
        attr("is_default", Type::Boolean),
        attr("stack_id", Type::Text).readonly(),
        attr("status", Type::Enum(STATUSES)),
        attr("status_reason", Type::Text),
        attr("version", Type::Text),
        attr("merge_labels", Type::Boolean).default(Const::Bool(false)),
        attr("labels_overridden", Type::Labels),
        attr("labels_added", Type::Labels),
        attr("labels_skipped", Type::Labels),
        attr("node_labels", Type::StringDict),
        attr("node_taints", Type::Taints),
        attr("created_at", Type::Datetime).readonly(),
        attr("updated_at", Type::Datetime).readonly(),
    ],
};

/// Which stored JSON columns a detail shows when unset: a stored
/// nodegroup shows them as stored (`{}` / `[]`), one built from a POST
/// shows `null` for what the client did not send.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fields {
    Stored,
    Sent,
}

fn opt<T: serde::Serialize>(v: &Option<T>) -> Json {
    serde_json::to_value(v).unwrap_or(Json::Null)
}

/// `NodeGroup.convert(expand=True)`: every field, the links and the
/// labels diff against the cluster's labels (keys in Magnum's order).
fn detail(base: &str, ng: &NodeGroup, cluster_labels: &StringMap, fields: Fields) -> Json {
    let stored = fields == Fields::Stored;
    let labels = match (&ng.labels, stored) {
        (None, true) => Some(StringMap::new()),
        (l, _) => l.clone(),
    };
    let none = StringMap::new();
    let (over, added, skipped) = labels_diff(cluster_labels, labels.as_ref().unwrap_or(&none));
    let or_empty = |v: Json, empty: Json| if v.is_null() && stored { empty } else { v };
    let args = format!("nodegroups/{}", ng.uuid);
    let resource = format!("clusters/{}", ng.cluster_id);
    let mut m: BTreeMap<&str, Json> = BTreeMap::new();
    m.insert("id", if ng.id == 0 { Json::Null } else { json!(ng.id) });
    m.insert("uuid", json!(ng.uuid));
    m.insert("name", json!(ng.name));
    m.insert("cluster_id", json!(ng.cluster_id));
    m.insert("project_id", json!(ng.project_id));
    m.insert("docker_volume_size", opt(&ng.docker_volume_size));
    m.insert("labels", opt(&labels));
    m.insert("links", json!(Link::pair(base, &resource, &args)));
    m.insert("flavor_id", opt(&ng.flavor_id));
    m.insert("image_id", opt(&ng.image_id));
    m.insert(
        "node_addresses",
        or_empty(opt(&ng.node_addresses), json!([])),
    );
    m.insert("node_count", opt(&ng.node_count));
    m.insert("role", opt(&ng.role));
    m.insert("min_node_count", opt(&ng.min_node_count));
    m.insert("max_node_count", opt(&ng.max_node_count));
    m.insert("is_default", opt(&ng.is_default));
    m.insert("stack_id", opt(&ng.stack_id));
    m.insert("status", opt(&ng.status.map(Status::as_str)));
    m.insert("status_reason", opt(&ng.status_reason));
    m.insert("version", opt(&ng.version));
    m.insert("merge_labels", json!(false));
    m.insert("labels_overridden", json!(over));
    m.insert("labels_added", json!(added));
    m.insert("labels_skipped", json!(skipped));
    m.insert("node_labels", or_empty(opt(&ng.node_labels), json!({})));
    m.insert("node_taints", or_empty(opt(&ng.node_taints), json!([])));
    m.insert("created_at", json!(isoformat(ng.created_at)));
    m.insert("updated_at", opt(&ng.updated_at.map(isoformat)));
    json!(m)
}

/// `NodeGroup.convert(expand=False)`: the summary fields, with
/// `min_node_count`, `max_node_count` and `merge_labels` at their WSME
/// defaults (0, null, false) whatever is stored, as Magnum shows them.
fn summary(ng: &NodeGroup) -> Json {
    json!({
        "flavor_id": ng.flavor_id,
        "image_id": ng.image_id,
        "is_default": ng.is_default,
        "max_node_count": null,
        "merge_labels": false,
        "min_node_count": 0,
        "name": ng.name,
        "node_count": ng.node_count,
        "role": ng.role,
        "stack_id": ng.stack_id,
        "status": ng.status.map(Status::as_str),
        "uuid": ng.uuid,
    })
}

/// The nodegroup's `as_dict()`, which a patch applies to.
fn doc_of(ng: &NodeGroup) -> Dict {
    let text = |s: &Option<String>| PyValue::from(s.clone());
    let int = |n: Option<i32>| PyValue::from(n.map(i64::from));
    let map = |m: &Option<StringMap>| match m {
        None => PyValue::None,
        Some(m) => PyValue::Dict(
            m.iter()
                .map(|(k, v)| (k.as_str(), PyValue::from(v.as_str())))
                .collect(),
        ),
    };
    let list = |l: &[String]| PyValue::List(l.iter().map(|s| PyValue::from(s.as_str())).collect());
    let taints = PyValue::List(
        ng.node_taints
            .iter()
            .flatten()
            .map(|t| map(&Some(t.clone())))
            .collect(),
    );
    [
        ("id", PyValue::from(ng.id)),
        ("uuid", PyValue::from(ng.uuid.as_str())),
        ("name", PyValue::from(ng.name.as_str())),
        ("cluster_id", PyValue::from(ng.cluster_id.as_str())),
        ("project_id", PyValue::from(ng.project_id.as_str())),
        ("docker_volume_size", int(ng.docker_volume_size)),
        ("labels", map(&ng.labels)),
        ("flavor_id", text(&ng.flavor_id)),
        ("image_id", text(&ng.image_id)),
        (
            "node_addresses",
            list(ng.node_addresses.as_deref().unwrap_or_default()),
        ),
        ("node_count", int(ng.node_count)),
        ("role", text(&ng.role)),
        ("max_node_count", int(ng.max_node_count)),
        ("min_node_count", int(ng.min_node_count)),
        ("is_default", PyValue::from(ng.is_default)),
        ("stack_id", text(&ng.stack_id)),
        ("status", PyValue::from(ng.status.map(Status::as_str))),
        ("status_reason", text(&ng.status_reason)),
        ("version", text(&ng.version)),
        ("node_labels", map(&ng.node_labels)),
        ("node_taints", taints),
        ("created_at", PyValue::from(isoformat(ng.created_at))),
        ("updated_at", PyValue::from(ng.updated_at.map(isoformat))),
    ]
    .into_iter()
    .collect()
}

/// A count of a body as the row's column.
fn count(b: &Body<'_>, name: &str) -> Result<Option<i32>, MagnumError> {
    b.int(name)
        .map(|n| {
            i32::try_from(n)
                .map_err(|_| MagnumError::server_error(format!("{name} is out of range")))
        })
        .transpose()
}

/// logic.md §8 rules 1-4 (409) on a nodegroup; `name` as Magnum prints it
/// (`None` when unset); `label_keys` in the client's order.
fn check_rules(ng: &NodeGroup, name: &str, label_keys: Vec<&str>) -> Result<(), MagnumError> {
    let taints = ng.node_taints.clone().unwrap_or_default();
    validate_node_group_input(&NodeGroupInput {
        name,
        role: ng.role.as_deref().unwrap_or(""),
        node_count: ng.node_count.map(i64::from).unwrap_or(0),
        min_node_count: ng.min_node_count.map(i64::from).unwrap_or(0),
        max_node_count: ng.max_node_count.map(i64::from),
        node_label_keys: label_keys,
        node_taints: &taints,
    })
}

/// The caller's context with the all-projects flag of the cluster lookup.
fn scoped(ctx: &RequestContext, all_projects: bool) -> RequestContext {
    RequestContext {
        all_projects,
        ..ctx.clone()
    }
}

/// The read rules: the route's rule, then, for admins, its all-projects
/// rule (which lets the cluster lookup see every project).
fn read_policy(
    s: &Services,
    ctx: &RequestContext,
    rule: &str,
    all_rule: &str,
) -> Result<RequestContext, MagnumError> {
    super::policy::enforce(&s.enforcer, ctx, rule, None)?;
    if ctx.is_admin {
        super::policy::enforce(&s.enforcer, ctx, all_rule, None)?;
    }
    Ok(scoped(ctx, ctx.is_admin))
}

fn labels_of(cl: &Cluster) -> StringMap {
    cl.labels.clone().unwrap_or_default()
}

/// routes.md #11: `nodegroup:get_all` (and its all-projects rule for
/// admins), the cluster, the page; summaries.
pub(crate) async fn get_all(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let ctx = read_policy(
        &s,
        &call.ctx,
        "nodegroup:get_all",
        "nodegroup:get_all_all_projects",
    )?;
    // the cluster and its nodegroups on one connection
    let mut rd = s.conductor.reader().await?;
    let cl = s
        .conductor
        .get_cluster_on(&mut rd, &ctx, &call.path)
        .await?;
    let page = Page::from_query(&call.query, s.conductor.settings().max_limit)?;
    let role = call.query.text("role");
    let rows = s
        .conductor
        .list_nodegroups_on(&mut rd, &call.ctx, &cl.uuid, role, &page.list_options())
        .await?;
    drop(rd);
    let resource = format!("clusters/{}/nodegroups", cl.uuid);
    let next = page.next(&call.base_url, &resource, rows.len(), || {
        rows.last().map(|n| n.uuid.clone()).unwrap_or_default()
    });
    let items = rows.iter().map(summary).collect();
    Ok(json_response(
        StatusCode::OK,
        &Collection::new("nodegroups", items, next),
    ))
}

/// routes.md #12: `nodegroup:get` (and its all-projects rule for admins),
/// the cluster, the nodegroup; the detail.
pub(crate) async fn get_one(
    s: Services,
    call: Call<(String, String)>,
) -> Result<Response, ApiError> {
    let ctx = read_policy(
        &s,
        &call.ctx,
        "nodegroup:get",
        "nodegroup:get_one_all_projects",
    )?;
    let (cluster, nodegroup) = &call.path;
    let cl = s.conductor.get_cluster(&ctx, cluster).await?;
    let ng = s
        .conductor
        .get_nodegroup(&call.ctx, &cl.uuid, nodegroup)
        .await?;
    Ok(json_response(
        StatusCode::OK,
        &detail(&call.base_url, &ng, &labels_of(&cl), Fields::Stored),
    ))
}

/// routes.md #13: the body, `nodegroup:create`, the caller's cluster (it
/// must have an API address), the name (unused in the cluster), the 409
/// rules, no master role, then the defaults of the cluster and its
/// template (image, flavor, labels, merged with `merge_labels`), the
/// flavor's root disk; 202 with the nodegroup as built.
pub(crate) async fn post(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let b = SCHEMA.decode(call.require_body()?)?;
    super::policy::enforce(&s.enforcer, &call.ctx, "nodegroup:create", None)?;
    let c = &s.conductor;
    let cl = c.get_cluster(&scoped(&call.ctx, false), &call.path).await?;
    if cl.api_address.as_deref().unwrap_or("").is_empty() {
        return Err(MagnumError::cluster_api_address_unavailable().into());
    }
    let name = b.text("name");
    if let Some(n) = name
        && c.nodegroup_name_used(&cl.uuid, n).await?
    {
        return Err(MagnumError::node_group_already_exists(n, &cl.name).into());
    }
    let status = match b.text("status") {
        Some(v) => Some(
            v.parse::<Status>()
                .map_err(|_| MagnumError::server_error(format!("unknown status {v}")))?,
        ),
        None => None,
    };
    let mut ng = NodeGroup {
        id: b.int("id").unwrap_or(0),
        name: name.unwrap_or("").to_string(),
        docker_volume_size: count(&b, "docker_volume_size")?,
        labels: b.string_map("labels"),
        flavor_id: b.text("flavor_id").map(str::to_owned),
        image_id: b.text("image_id").map(str::to_owned),
        node_count: count(&b, "node_count")?,
        role: b.text("role").map(str::to_owned),
        min_node_count: count(&b, "min_node_count")?,
        max_node_count: count(&b, "max_node_count")?,
        is_default: b.boolean("is_default"),
        status,
        status_reason: b.text("status_reason").map(str::to_owned),
        version: b.text("version").map(str::to_owned),
        node_labels: b.string_map("node_labels"),
        node_taints: b
            .maps("node_taints")
            .map(|ts| ts.iter().map(|t| t.iter().cloned().collect()).collect()),
        ..NodeGroup::default()
    };
    let label_keys: Vec<&str> = b
        .entries("node_labels")
        .map(|e| e.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    check_rules(&ng, name.unwrap_or("None"), label_keys)?;
    if ng.role.as_deref() == Some(ROLE_MASTER) {
        return Err(MagnumError::create_master_node_group().into());
    }
    if ng.image_id.is_none() {
        ng.image_id = c.template_of(&cl).await?.image_id;
    }
    if ng.flavor_id.is_none() {
        ng.flavor_id = cl.flavor_id.clone();
    }
    let cluster_labels = labels_of(&cl);
    ng.labels = match ng.labels.take() {
        None => Some(cluster_labels.clone()),
        Some(own) if b.boolean("merge_labels") == Some(true) => {
            let mut merged = cluster_labels.clone();
            merged.extend(own);
            Some(merged)
        }
        own => own,
    };
    c.check_flavor_root_volume(&call.ctx, ng.flavor_id.as_deref(), &cluster_labels)
        .await?;
    if name.is_none() {
        // Magnum: the NodeGroup object refuses a None name (an unhandled
        // 500).
        return Err(MagnumError::server_error("Field `name' cannot be None").into());
    }
    ng.cluster_id = cl.uuid.clone();
    ng.project_id = call.ctx.project_id.clone();
    ng.uuid = c.new_uuid();
    ng.is_default.get_or_insert(false);
    let sent = ng.clone();
    let row = c.create_nodegroup(&call.ctx, &cl, ng).await?;
    // Deviation: Magnum answers with the unsaved object (no id or
    // created_at unless the client sent them); we store the row first and
    // show its id and created_at.
    let shown = NodeGroup {
        id: row.id,
        created_at: row.created_at,
        ..sent
    };
    Ok(json_response(
        StatusCode::ACCEPTED,
        &detail(&call.base_url, &shown, &cluster_labels, Fields::Sent),
    ))
}

/// routes.md #14: the operations, the caller's cluster, `nodegroup:update`,
/// the nodegroup; the patched object is rebuilt with WSME's checks, then
/// only `min_node_count`, `max_node_count`, `node_labels` and
/// `node_taints` may have changed; the flavor and the 409 rules are
/// checked; 202 with the patched object.
pub(crate) async fn patch_one(
    s: Services,
    call: Call<(String, String)>,
) -> Result<Response, ApiError> {
    let ops = patch::parse(call.require_body()?, &patch::NODE_GROUP)?;
    let c = &s.conductor;
    let (cluster, nodegroup) = &call.path;
    let cl = c.get_cluster(&scoped(&call.ctx, false), cluster).await?;
    super::policy::enforce(&s.enforcer, &call.ctx, "nodegroup:update", None)?;
    let ng = c.get_nodegroup(&call.ctx, &cl.uuid, nodegroup).await?;
    let doc = doc_of(&ng);
    let patched = patch::apply(&doc, &ops, &patch::NODE_GROUP)?;
    let b = SCHEMA.rebuild(&patched)?;
    let mut updated = ng.clone();
    let mut cols: Vec<&str> = Vec::new();
    let mut label_keys: Vec<&str> = Vec::new();
    let changed = patch::changed(&doc, &patched);
    for k in [
        "min_node_count",
        "max_node_count",
        "node_labels",
        "node_taints",
    ] {
        if !changed.iter().any(|c| c == k) {
            continue;
        }
        match k {
            // A removed attribute takes its default (0, or None).
            "min_node_count" => updated.min_node_count = count(&b, k)?,
            "max_node_count" => updated.max_node_count = count(&b, k)?,
            "node_labels" => {
                updated.node_labels = b.string_map(k);
                label_keys = b
                    .entries(k)
                    .map(|e| e.iter().map(|(k, _)| k.as_str()).collect())
                    .unwrap_or_default();
            }
            _ => {
                updated.node_taints = b
                    .maps(k)
                    .map(|ts| ts.iter().map(|t| t.iter().cloned().collect()).collect());
            }
        }
        cols.push(k);
    }
    if let Some(k) = changed.iter().find(|k| !cols.contains(&k.as_str())) {
        // Nested paths (/labels/x, /node_addresses/0) escape the
        // internal-attribute list in Magnum and would be saved.
        // Deviation: we refuse them instead of writing internal fields.
        return Err(MagnumError::patch_internal_attribute(&format!("/{k}")).into());
    }
    let cluster_labels = labels_of(&cl);
    c.check_flavor_root_volume(&call.ctx, updated.flavor_id.as_deref(), &cluster_labels)
        .await?;
    check_rules(&updated, &updated.name, label_keys)?;
    c.update_nodegroup(&call.ctx, &cl, &updated, &cols).await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &detail(&call.base_url, &updated, &cluster_labels, Fields::Stored),
    ))
}

/// routes.md #15: `nodegroup:delete`, the caller's cluster, the nodegroup
/// (a default one is 400); 204.
pub(crate) async fn delete(
    s: Services,
    call: Call<(String, String)>,
) -> Result<Response, ApiError> {
    super::policy::enforce(&s.enforcer, &call.ctx, "nodegroup:delete", None)?;
    let c = &s.conductor;
    let (cluster, nodegroup) = &call.path;
    let cl = c.get_cluster(&scoped(&call.ctx, false), cluster).await?;
    let ng = c.get_nodegroup(&call.ctx, &cl.uuid, nodegroup).await?;
    c.delete_nodegroup(&call.ctx, &cl, &ng).await?;
    Ok(no_content())
}

#[cfg(test)]
mod tests;
