//! The cluster routes (magnum/api/controllers/v1/cluster.py, cluster_actions.py):
//! `GET /v1/clusters` (summary), `GET /v1/clusters/detail`,
//! `GET /v1/clusters/{ident}` (detail with `faults`), `POST /v1/clusters`,
//! `PATCH /v1/clusters/{ident}` (node count and health),
//! `DELETE /v1/clusters/{ident}` and the resize and upgrade actions; the
//! views of both forms for the negotiated microversion (`stack_id` becomes
//! `cluster_id` at 1.13).

use axum::response::Response;
use http::StatusCode;
use magnum_domain::microversion::Version;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use magnum_domain::validation::{
    CLUSTER_NAME, RANGE_CREATE_TIMEOUT, RANGE_DOCKER_VOLUME_SIZE, RANGE_MASTER_COUNT,
    RANGE_MAX_BATCH_SIZE, RANGE_NODE_COUNT, RANGE_RESIZE_NODE_COUNT, ROLE_MASTER, STRING_FIELD,
    validate_cluster_patch_delta,
};
use magnum_domain::{MagnumError, RequestContext, Status, catalogue};
use python_semantics::{Dict, PyValue};
use serde_json::{Map, Value, json};

use super::body::{Const, Schema, Type, attr};
use super::errors::{json_body, json_bytes_response, json_response, no_content};
use super::paging::{Collection, Page};
use super::patch;
use super::versions::Link;
use super::views::{Form, isoformat, labels_diff};
use super::{ApiError, Call, Services};
use crate::conductor::{ClusterCreate, ClusterPage, ClusterResize, ClusterUpdate, ClusterUpgrade};
use bytes::Bytes;
use magnum_conductor::policy::{Enforcer, Target};
use magnum_domain::query::ClusterView;

/// The cluster statuses, in Magnum's order (`ClusterStatus.ALL`).
const STATUS_NAMES: &[&str] = &[
    "CREATE_IN_PROGRESS",
    "CREATE_FAILED",
    "CREATE_COMPLETE",
    "UPDATE_IN_PROGRESS",
    "UPDATE_FAILED",
    "UPDATE_COMPLETE",
    "DELETE_IN_PROGRESS",
    "DELETE_FAILED",
    "DELETE_COMPLETE",
    "RESUME_COMPLETE",
    "RESUME_FAILED",
    "RESTORE_COMPLETE",
    "ROLLBACK_IN_PROGRESS",
    "ROLLBACK_FAILED",
    "ROLLBACK_COMPLETE",
    "SNAPSHOT_COMPLETE",
    "CHECK_COMPLETE",
    "ADOPT_COMPLETE",
];

/// The `Cluster` API type (magnum/api/controllers/v1/cluster.py:64-191).
pub(crate) static CLUSTER: Schema = Schema {
    arg: "cluster",
    attrs: &[
        attr("uuid", Type::Uuid),
        attr("name", Type::String(CLUSTER_NAME)),
        attr("cluster_template_id", Type::Text).mandatory(),
        attr("keypair", Type::String(STRING_FIELD)),
        attr("node_count", Type::Integer(RANGE_NODE_COUNT)).default(Const::Int(1)),
        attr("master_count", Type::Integer(RANGE_MASTER_COUNT)).default(Const::Int(1)),
        attr(
            "docker_volume_size",
            Type::Integer(RANGE_DOCKER_VOLUME_SIZE),
        ),
        attr("labels", Type::Labels),
        attr("master_flavor_id", Type::String(STRING_FIELD)),
        attr("flavor_id", Type::String(STRING_FIELD)),
        attr("create_timeout", Type::Integer(RANGE_CREATE_TIMEOUT)).default(Const::Int(60)),
        attr("links", Type::Links).readonly(),
        attr("stack_id", Type::Text).readonly(),
        attr("cluster_id", Type::Text).readonly(),
        attr("status", Type::Enum(STATUS_NAMES)),
        attr("status_reason", Type::Text),
        attr(
            "health_status",
            Type::Enum(&["HEALTHY", "UNHEALTHY", "UNKNOWN"]),
        ),
        attr("health_status_reason", Type::StringDict),
        attr("discovery_url", Type::Text),
        attr("api_address", Type::Text).readonly(),
        attr("coe_version", Type::Text).readonly(),
        attr("container_version", Type::Text).readonly(),
        attr("project_id", Type::Text).readonly(),
        attr("user_id", Type::Text).readonly(),
        attr("node_addresses", Type::TextList).readonly(),
        attr("master_addresses", Type::TextList).readonly(),
        attr("faults", Type::StringDict),
        attr("fixed_network", Type::String(STRING_FIELD)),
        attr("fixed_subnet", Type::String(STRING_FIELD)),
        attr("floating_ip_enabled", Type::Boolean),
        attr("merge_labels", Type::Boolean).default(Const::Bool(false)),
        attr("labels_overridden", Type::Labels),
        attr("labels_added", Type::Labels),
        attr("labels_skipped", Type::Labels),
        attr("master_lb_enabled", Type::Boolean),
        attr("created_at", Type::Datetime).readonly(),
        attr("updated_at", Type::Datetime).readonly(),
    ],
};

/// `POST /v1/clusters`, in Magnum's order: the body's types, the template
/// (404 ClusterTemplateNotFound, 400 below 1.10), the driver, the
/// devicemapper volume, the master size, the policy, then the conductor
/// (quota, hidden template, inheritance, OpenStack resources,
/// master_lb_enabled). 202 with the new uuid.
pub(crate) async fn create(s: Services, call: Call) -> Result<Response, ApiError> {
    let raw = call.require_body()?;
    let b = CLUSTER.decode(raw)?;
    let old = !call.version.at_least(Version::new(1, 10));
    let template_404_is_400 = |e: crate::conductor::Error| -> ApiError {
        match e {
            crate::conductor::Error::Client(m)
                if old && m.is(&catalogue::CLUSTER_TEMPLATE_NOT_FOUND) =>
            {
                m.with_status(400).into()
            }
            e => e.into(),
        }
    };
    let ctx = &call.ctx;
    let c = &s.conductor;
    // Magnum: a null reference is looked up as "None".
    let reference = b.text("cluster_template_id").unwrap_or("None").to_string();
    let template = c
        .get_cluster_template_by_ref(ctx, &reference)
        .await
        .map_err(template_404_is_400)?;
    let int = |name: &str| -> i32 {
        match b.int(name) {
            Some(n) => i32::try_from(n).unwrap_or(i32::MAX),
            // A null count is 0, as Magnum stores None.
            None => 0,
        }
    };
    let input = ClusterCreate {
        name: b.text("name").map(str::to_string),
        keypair: b.text("keypair").map(str::to_string),
        labels: b.string_map("labels"),
        merge_labels: b.boolean("merge_labels").unwrap_or(false),
        docker_volume_size: b
            .int("docker_volume_size")
            .map(|n| i32::try_from(n).unwrap_or(i32::MAX)),
        master_flavor_id: b.text("master_flavor_id").map(str::to_string),
        flavor_id: b.text("flavor_id").map(str::to_string),
        fixed_network: b.text("fixed_network").map(str::to_string),
        fixed_subnet: b.text("fixed_subnet").map(str::to_string),
        floating_ip_enabled: b.boolean("floating_ip_enabled"),
        master_lb_enabled: b.boolean("master_lb_enabled"),
        create_timeout: b
            .int("create_timeout")
            .map_or(60, |n| i32::try_from(n).unwrap_or(i32::MAX)),
        master_count: int("master_count"),
        node_count: int("node_count"),
        health_status: b.text("health_status").map(str::to_string),
        health_status_reason: b.string_map("health_status_reason"),
        discovery_url: b.text("discovery_url").map(str::to_string),
        template,
    };
    c.check_cluster_create(
        &input.template,
        input.master_count,
        input.docker_volume_size,
    )
    .await
    .map_err(template_404_is_400)?;
    // Deviation: Magnum refuses node_count 0 below 1.10 here; the zero-node
    // cluster is created at every microversion, because clients create one
    // without sending any (magnum-tempest-plugin).
    super::policy::enforce(&s.enforcer, ctx, "cluster:create", None)?;
    let cl = c
        .create_cluster(ctx, input)
        .await
        .map_err(template_404_is_400)?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &json!({"uuid": cl.uuid}),
    ))
}

/// `PATCH /v1/clusters/{ident}` (spec `api/patch.md` §3), in Magnum's
/// order: the operations against the cluster rules, the admin's
/// all-projects rule, the lookup, `cluster:update` on the cluster and
/// `cluster:update_health_status` on the caller, the patch applied to the
/// cluster's dictionary and rebuilt with WSME's checks, the root-disk check
/// of the flavors, the delta (only `node_count`, `health_status` and
/// `health_status_reason` may change), the node count resolution and its
/// zero gate below 1.10, then the conductor (409 state guard, health-only
/// save, or the driver's update). 202 with the cluster's uuid.
pub(crate) async fn update(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let ops = patch::parse(call.require_body()?, &patch::CLUSTER)?;
    let mut ctx = call.ctx.clone();
    all_projects(&s.enforcer, &mut ctx, "cluster:update_all_projects")?;
    let c = &s.conductor;
    let cl = authorized_cluster(&s, &ctx, &call.path, "cluster:update").await?;
    super::policy::enforce(&s.enforcer, &ctx, "cluster:update_health_status", None)?;
    let ngs = c.cluster_nodegroups(&cl.uuid).await?;
    let doc = patch_doc(&cl, &ngs);
    let patched = patch::apply(&doc, &ops, &patch::CLUSTER)?;
    let b = CLUSTER.rebuild(&patched)?;
    c.check_cluster_update_flavors(
        &ctx,
        &b.string_map("labels"),
        &b.text("flavor_id").map(str::to_string),
        &b.text("master_flavor_id").map(str::to_string),
    )
    .await?;
    let changed = patch::changed(&doc, &patched);
    let delta: Vec<&str> = PATCH_FIELDS
        .iter()
        .copied()
        .filter(|f| changed.iter().any(|c| c == f))
        .collect();
    validate_cluster_patch_delta(&delta)?;
    // The patched count: WSME's default 1 when removed or null.
    let patched_count = b
        .int("node_count")
        .map_or(1, |n| i32::try_from(n).unwrap_or(i32::MAX));
    let mut node_count = ngs
        .iter()
        .find(|ng| ng.is_default == Some(true) && ng.role.as_deref() != Some(ROLE_MASTER))
        .and_then(|ng| ng.node_count)
        .unwrap_or(0);
    for op in ops.iter().filter(|op| op.path == "/node_count") {
        // Magnum: `op.get('value') or new_cluster.node_count`.
        let sent = match &op.value {
            Some(PyValue::Int(n)) => n.to_i64(),
            Some(PyValue::Bool(b)) => Some(i64::from(*b)),
            _ => None,
        };
        node_count = match sent {
            Some(n) if n != 0 => i32::try_from(n).unwrap_or(i32::MAX),
            _ => patched_count,
        };
    }
    if !call.version.at_least(Version::new(1, 10)) && node_count == 0 {
        return Err(MagnumError::zero_node_count_not_supported().into());
    }
    // Magnum forwards `rollback` (from 1.3; the pipeline checked it is a
    // boolean) to the driver's update only: the driver interface has no
    // rollback, so it changes nothing here.
    let _rollback = call.query.bool("rollback").unwrap_or(false);
    c.update_cluster(
        &ctx,
        &cl.uuid,
        ClusterUpdate {
            node_count,
            health_status: b.text("health_status").map(str::to_string),
            health_status_reason: b.string_map("health_status_reason"),
        },
    )
    .await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &json!({"uuid": cl.uuid}),
    ))
}

/// The API fields a cluster PATCH compares, in the order its 400 names
/// them: the object's fields the API type shows, then the ones derived
/// from the nodegroups.
const PATCH_FIELDS: &[&str] = &[
    "uuid",
    "name",
    "project_id",
    "user_id",
    "cluster_template_id",
    "keypair",
    "docker_volume_size",
    "labels",
    "master_flavor_id",
    "flavor_id",
    "stack_id",
    "api_address",
    "status",
    "status_reason",
    "health_status",
    "health_status_reason",
    "create_timeout",
    "discovery_url",
    "coe_version",
    "container_version",
    "fixed_network",
    "fixed_subnet",
    "floating_ip_enabled",
    "master_lb_enabled",
    "created_at",
    "updated_at",
    "node_count",
    "master_count",
    "node_addresses",
    "master_addresses",
];

/// The cluster's `as_dict()`: the fields of the cluster object (without
/// the trust credentials), then those Magnum derives from its nodegroups
/// (counts and addresses). It is the document a PATCH applies to.
fn patch_doc(cl: &Cluster, ngs: &[NodeGroup]) -> Dict {
    let (nodes, masters) = counts(ngs);
    let (node_addrs, master_addrs) = addresses(ngs);
    let list = |l: &[&str]| PyValue::List(l.iter().map(|s| PyValue::from(*s)).collect());
    let mut doc = cluster_fields(cl);
    doc.insert("node_count", nodes);
    doc.insert("master_count", masters);
    doc.insert("node_addresses", list(&node_addrs));
    doc.insert("master_addresses", list(&master_addrs));
    doc
}

/// The fields of the cluster object in `as_dict()`, in field order,
/// without the trust credentials and the nodegroup-derived ones.
fn cluster_fields(cl: &Cluster) -> Dict {
    let text = |s: &Option<String>| PyValue::from(s.clone());
    let int = |n: Option<i32>| PyValue::from(n.map(i64::from));
    let map = |m: &Option<StringMap>| {
        PyValue::Dict(
            m.iter()
                .flatten()
                .map(|(k, v)| (k.as_str(), PyValue::from(v.as_str())))
                .collect(),
        )
    };
    [
        ("id", PyValue::from(cl.id)),
        ("uuid", PyValue::from(cl.uuid.as_str())),
        ("name", PyValue::from(cl.name.as_str())),
        ("project_id", PyValue::from(cl.project_id.as_str())),
        ("user_id", PyValue::from(cl.user_id.as_str())),
        (
            "cluster_template_id",
            PyValue::from(cl.cluster_template_id.as_str()),
        ),
        ("keypair", text(&cl.keypair)),
        ("docker_volume_size", int(cl.docker_volume_size)),
        ("labels", map(&cl.labels)),
        ("master_flavor_id", text(&cl.master_flavor_id)),
        ("flavor_id", text(&cl.flavor_id)),
        ("stack_id", text(&cl.stack_id)),
        ("status", PyValue::from(cl.status.map(Status::as_str))),
        ("status_reason", text(&cl.status_reason)),
        ("health_status", text(&cl.health_status)),
        ("health_status_reason", map(&cl.health_status_reason)),
        ("create_timeout", int(cl.create_timeout)),
        ("api_address", text(&cl.api_address)),
        ("discovery_url", text(&cl.discovery_url)),
        ("ca_cert_ref", text(&cl.ca_cert_ref)),
        ("magnum_cert_ref", text(&cl.magnum_cert_ref)),
        ("coe_version", text(&cl.coe_version)),
        ("container_version", text(&cl.container_version)),
        ("etcd_ca_cert_ref", text(&cl.etcd_ca_cert_ref)),
        ("front_proxy_ca_cert_ref", text(&cl.front_proxy_ca_cert_ref)),
        ("fixed_network", text(&cl.fixed_network)),
        ("fixed_subnet", text(&cl.fixed_subnet)),
        ("floating_ip_enabled", PyValue::from(cl.floating_ip_enabled)),
        ("master_lb_enabled", PyValue::from(cl.master_lb_enabled)),
        ("created_at", PyValue::from(isoformat(cl.created_at))),
        ("updated_at", PyValue::from(cl.updated_at.map(isoformat))),
    ]
    .into_iter()
    .collect()
}

/// `ClusterResizeRequest` (magnum/api/controllers/v1/cluster_actions.py:42-56).
static RESIZE: Schema = Schema {
    arg: "cluster_resize_req",
    attrs: &[
        attr("node_count", Type::Integer(RANGE_RESIZE_NODE_COUNT)).mandatory(),
        attr("nodes_to_remove", Type::TextList),
        attr("nodegroup", Type::String(STRING_FIELD)),
        attr("created_at", Type::Datetime).readonly(),
        attr("updated_at", Type::Datetime).readonly(),
    ],
};

/// `ClusterUpgradeRequest` (cluster_actions.py:59-72).
static UPGRADE: Schema = Schema {
    arg: "cluster_upgrade_req",
    attrs: &[
        attr("max_batch_size", Type::Integer(RANGE_MAX_BATCH_SIZE)),
        attr("nodegroup", Type::String(STRING_FIELD)),
        attr("cluster_template", Type::String(STRING_FIELD)),
        attr("created_at", Type::Datetime).readonly(),
        attr("updated_at", Type::Datetime).readonly(),
    ],
};

/// `POST /v1/clusters/{ident}/actions/resize`: the body, a zero node count
/// below 1.10 (400), the lookup in the caller's own scope (no
/// all-projects rule, admins included), `cluster:resize` on the cluster,
/// then the conductor (nodegroup, bounds, master rule, state guard).
pub(crate) async fn resize(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let b = RESIZE.decode(call.require_body()?)?;
    let node_count = b
        .int("node_count")
        .map_or(0, |n| i32::try_from(n).unwrap_or(i32::MAX));
    if !call.version.at_least(Version::new(1, 10)) && node_count == 0 {
        return Err(MagnumError::zero_node_count_not_supported().into());
    }
    let input = ClusterResize {
        nodegroup: b.text("nodegroup").map(str::to_string),
        node_count,
        nodes_to_remove: b
            .list("nodes_to_remove")
            .map(<[String]>::to_vec)
            .unwrap_or_default(),
    };
    let mut ctx = call.ctx.clone();
    ctx.all_projects = false;
    let cl = authorized_cluster(&s, &ctx, &call.path, "cluster:resize").await?;
    s.conductor.resize_cluster(&ctx, &cl, input).await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &json!({"uuid": cl.uuid}),
    ))
}

/// `POST /v1/clusters/{ident}/actions/upgrade` at 1.7: Magnum parses the
/// body, then refuses.
pub(crate) async fn upgrade_refused(_: Services, call: Call<String>) -> Result<Response, ApiError> {
    UPGRADE.decode(call.require_body()?)?;
    Err(MagnumError::cluster_upgrade_not_supported().into())
}

/// `POST /v1/clusters/{ident}/actions/upgrade` from 1.8: the body, the
/// admin's all-projects rule, the lookup, `cluster:upgrade`, the template
/// with the caller's visibility (404/409), then the conductor (nodegroup,
/// template rule, the status guard as a 400, the driver).
pub(crate) async fn upgrade(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let b = UPGRADE.decode(call.require_body()?)?;
    let mut ctx = call.ctx.clone();
    all_projects(&s.enforcer, &mut ctx, "cluster:upgrade_all_projects")?;
    let cl = authorized_cluster(&s, &ctx, &call.path, "cluster:upgrade").await?;
    let Some(reference) = b.text("cluster_template") else {
        // Magnum looks the template up with an unset value and fails with
        // an unhandled error.
        return Err(
            MagnumError::server_error("'UnsetType' object has no attribute 'replace'").into(),
        );
    };
    let template = s
        .conductor
        .get_cluster_template(&ctx, reference, ctx.all_projects)
        .await?;
    let input = ClusterUpgrade {
        template,
        max_batch_size: b
            .int("max_batch_size")
            .map_or(0, |n| i32::try_from(n).unwrap_or(i32::MAX)),
        nodegroup: b.text("nodegroup").map(str::to_string),
    };
    s.conductor.upgrade_cluster(&ctx, &cl, input).await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &json!({"uuid": cl.uuid}),
    ))
}

/// Evaluates an `*_all_projects` rule for an admin (a denial is the 403 of
/// the whole request) and marks the context: its lookups then ignore the
/// project.
pub(crate) fn all_projects(
    enforcer: &Enforcer,
    ctx: &mut RequestContext,
    rule: &str,
) -> Result<(), MagnumError> {
    if ctx.is_admin {
        super::policy::enforce(enforcer, ctx, rule, None)?;
        ctx.all_projects = true;
    }
    Ok(())
}

/// The policy target of a cluster, for the cluster and certificate rules:
/// its `as_dict()` as Magnum passes it, without the fields derived from the
/// nodegroups, which are not read to check a rule (the default rules read
/// `project_id` and `user_id`).
pub(crate) fn cluster_target(cl: &Cluster) -> Target {
    super::policy::dict_target(cluster_fields(cl))
}

/// The cluster `ident` in the scope of `ctx`, then `rule` on it: how the
/// handlers of a cluster (and of its certificates) begin.
pub(crate) async fn authorized_cluster(
    s: &Services,
    ctx: &RequestContext,
    ident: &str,
    rule: &str,
) -> Result<Cluster, ApiError> {
    let cl = s.conductor.get_cluster(ctx, ident).await?;
    super::policy::enforce(&s.enforcer, ctx, rule, Some(&cluster_target(&cl)))?;
    Ok(cl)
}

/// `GET /v1/clusters` and `GET /v1/clusters/detail`: the rule of the
/// form, the marker-in-path 404, the admin's all-projects rule, then the
/// page (kept in the list cache while no write commits).
pub(crate) async fn list(s: Services, call: Call, form: Form) -> Result<Response, ApiError> {
    let (rule, all_rule, resource) = match form {
        Form::Summary => (
            "cluster:get_all",
            "cluster:get_all_all_projects",
            "clusters",
        ),
        Form::Detail => (
            "cluster:detail",
            "cluster:detail_all_projects",
            "clusters/detail",
        ),
    };
    let mut ctx = call.ctx.clone();
    super::policy::enforce(&s.enforcer, &ctx, rule, None)?;
    if call.marker_in_path {
        // Magnum: cluster.py:426 — only /v1/clusters/detail lists.
        return Err(MagnumError::http_not_found_unformatted().into());
    }
    all_projects(&s.enforcer, &mut ctx, all_rule)?;
    let page = Page::from_query(&call.query, s.conductor.settings().max_limit)?;
    // The answer depends on the request's form, scope, page and link base,
    // and on the rows: the stamp stands for the rows (conductor::list_cache).
    let key = format!(
        "clusters|{form:?}|{}|{}|{}|{}|{}|{}|{:?}|{}|{}|{}",
        call.base_url,
        call.version,
        ctx.is_admin,
        ctx.all_projects,
        ctx.project_id,
        ctx.user_id,
        page.marker,
        page.limit,
        page.sort_key,
        page.sort_dir,
    );
    let cache = s.conductor.list_cache();
    let kept = |stamp: Option<i64>| stamp.and_then(|st| cache.get(&key, st));
    let mut stamp = s.conductor.change_stamp().await;
    if let Some(body) = kept(stamp) {
        return Ok(json_bytes_response(StatusCode::OK, body));
    }
    // A turn to read the page. A request that had to wait for its turn
    // looks again: whoever held it may have stored the answer meanwhile.
    let _turn = match cache.try_build_permit() {
        Some(turn) => Some(turn),
        None => {
            let turn = cache.build_permit().await;
            stamp = s.conductor.change_stamp().await;
            if let Some(body) = kept(stamp) {
                return Ok(json_bytes_response(StatusCode::OK, body));
            }
            turn
        }
    };
    let view = match form {
        Form::Summary => ClusterView::Summary,
        Form::Detail => ClusterView::Detail,
    };
    let p = s
        .conductor
        .list_clusters(&ctx, &page.list_options(), Some(view))
        .await?;
    let next = page.next(&call.base_url, resource, p.clusters.len(), || {
        p.clusters
            .last()
            .map(|c| c.uuid.clone())
            .unwrap_or_default()
    });
    let (status, body) = list_body(&call.base_url, call.version, &p, form, next);
    // Kept only when no write committed while the page was read.
    if let Some(stamp) = stamp
        && status == StatusCode::OK
        && s.conductor.change_stamp().await == Some(stamp)
    {
        cache.put(key, stamp, body.clone());
    }
    Ok(json_bytes_response(status, body))
}

/// The answer to a list of clusters (`GET /v1/clusters[/detail]`): each
/// cluster of the page in `form`, with its nodegroups and template from
/// the page, and the `next` link. Public for the list benchmark.
pub fn render_list(
    base_url: &str,
    version: Version,
    p: &ClusterPage,
    form: Form,
    next: Option<String>,
) -> http::Response<axum::body::Body> {
    let (status, body) = list_body(base_url, version, p, form, next);
    json_bytes_response(status, body)
}

/// The status and body of [`render_list`].
pub fn list_body(
    base_url: &str,
    version: Version,
    p: &ClusterPage,
    form: Form,
    next: Option<String>,
) -> (StatusCode, Bytes) {
    let empty = Vec::new();
    let items: Vec<ClusterDoc> = p
        .clusters
        .iter()
        .map(|cl| {
            let ngs = p.nodegroups.get(&cl.uuid).unwrap_or(&empty);
            let t = p.templates.get(&cl.cluster_template_id);
            ClusterDoc {
                base: base_url,
                v: version,
                cl,
                ngs,
                template: t,
                form,
                faults: None,
            }
        })
        .collect();
    json_body(StatusCode::OK, &Collection::new("clusters", items, next))
}

/// `GET /v1/clusters/{ident}`: the admin's all-projects rule, the lookup,
/// `cluster:get` on the cluster, then its detail with `faults`.
pub(crate) async fn get_one(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let mut ctx = call.ctx.clone();
    all_projects(&s.enforcer, &mut ctx, "cluster:get_one_all_projects")?;
    // the cluster, its nodegroups and its template on one connection
    let mut rd = s.conductor.reader().await?;
    let cl = s
        .conductor
        .get_cluster_on(&mut rd, &ctx, &call.path)
        .await?;
    super::policy::enforce(&s.enforcer, &ctx, "cluster:get", Some(&cluster_target(&cl)))?;
    let d = s.conductor.cluster_details(&mut rd, &ctx, cl).await?;
    drop(rd);
    let faults = faults(&d.cluster, &d.nodegroups);
    Ok(json_response(
        StatusCode::OK,
        &ClusterDoc {
            base: &call.base_url,
            v: call.version,
            cl: &d.cluster,
            ngs: &d.nodegroups,
            template: Some(&d.template),
            form: Form::Detail,
            faults,
        },
    ))
}

/// `DELETE /v1/clusters/{ident}`: the admin's all-projects rule, the
/// lookup, `cluster:delete` on the cluster, then the deletion; 204.
pub(crate) async fn delete(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let mut ctx = call.ctx.clone();
    all_projects(&s.enforcer, &mut ctx, "cluster:delete_all_projects")?;
    let cl = authorized_cluster(&s, &ctx, &call.path, "cluster:delete").await?;
    s.conductor.delete_cluster(&ctx, &cl).await?;
    Ok(no_content())
}

/// The node counts and addresses of a cluster, from its nodegroups:
/// (workers, masters, worker addresses, master addresses).
fn counts(ngs: &[NodeGroup]) -> (i64, i64) {
    let (mut nodes, mut masters) = (0, 0);
    for ng in ngs {
        let n = i64::from(ng.node_count.unwrap_or(0));
        if ng.role.as_deref() == Some(ROLE_MASTER) {
            masters += n;
        } else {
            nodes += n;
        }
    }
    (nodes, masters)
}

/// The node addresses of the workers' and the masters' groups.
fn addresses(ngs: &[NodeGroup]) -> (Vec<&str>, Vec<&str>) {
    let (mut nodes, mut masters) = (Vec::new(), Vec::new());
    for ng in ngs {
        let addrs = ng.node_addresses.iter().flatten().map(String::as_str);
        if ng.role.as_deref() == Some(ROLE_MASTER) {
            masters.extend(addrs);
        } else {
            nodes.extend(addrs);
        }
    }
    (nodes, masters)
}

/// The `faults` of `GET /v1/clusters/{ident}` for a cluster in a failed
/// status: nodegroup name → status reason of its failed nodegroups (a
/// NULL reason stays null); `None` otherwise.
fn faults(cl: &Cluster, ngs: &[NodeGroup]) -> Option<Map<String, Value>> {
    let failed = cl.status.is_some_and(|s| Status::FAULT.contains(&s));
    if !failed {
        return None;
    }
    Some(
        ngs.iter()
            .filter(|ng| ng.status.is_some_and(Status::is_failed))
            .map(|ng| {
                (
                    ng.name.clone(),
                    ng.status_reason.clone().map_or(Value::Null, Value::String),
                )
            })
            .collect(),
    )
}

/// A cluster as the API shows it (`Cluster.convert_with_links`), in
/// Magnum's field order: the summary of lists, or the detail of lists and
/// `GET /v1/clusters/{ident}` (with `faults` there). It borrows the rows and
/// serialises straight into the response body.
pub(crate) struct ClusterDoc<'a> {
    /// The application URL of the links.
    base: &'a str,
    /// The microversion (`stack_id` becomes `cluster_id` at 1.13).
    v: Version,
    cl: &'a Cluster,
    /// The cluster's nodegroups (counts, addresses, flavors).
    ngs: &'a [NodeGroup],
    template: Option<&'a ClusterTemplate>,
    form: Form,
    faults: Option<Map<String, Value>>,
}

impl serde::Serialize for ClusterDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let cl = self.cl;
        let (nodes, masters) = counts(self.ngs);
        let empty = StringMap::new();
        let labels = cl.labels.as_ref().unwrap_or(&empty);
        let stack_key = if self.v.minor() >= 13 {
            "cluster_id"
        } else {
            "stack_id"
        };
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("uuid", &cl.uuid)?;
        o.serialize_entry("name", &cl.name)?;
        o.serialize_entry("cluster_template_id", &cl.cluster_template_id)?;
        o.serialize_entry("keypair", &cl.keypair)?;
        o.serialize_entry("node_count", &nodes)?;
        o.serialize_entry("master_count", &masters)?;
        o.serialize_entry("docker_volume_size", &cl.docker_volume_size)?;
        o.serialize_entry("labels", labels)?;
        o.serialize_entry("master_flavor_id", &cl.master_flavor_id)?;
        o.serialize_entry("flavor_id", &cl.flavor_id)?;
        o.serialize_entry("create_timeout", &cl.create_timeout)?;
        o.serialize_entry("links", &Link::pair(self.base, "clusters", &cl.uuid))?;
        o.serialize_entry(stack_key, &cl.stack_id)?;
        o.serialize_entry("status", &cl.status.map(Status::as_str))?;
        if self.form == Form::Summary {
            o.serialize_entry("health_status", &cl.health_status)?;
            o.serialize_entry("merge_labels", &false)?;
            return o.end();
        }
        let parent = self
            .template
            .and_then(|t| t.labels.as_ref())
            .unwrap_or(&empty);
        let (overridden, added, skipped) = labels_diff(parent, labels);
        let (node_addrs, master_addrs) = addresses(self.ngs);
        o.serialize_entry("status_reason", &cl.status_reason)?;
        o.serialize_entry("health_status", &cl.health_status)?;
        o.serialize_entry(
            "health_status_reason",
            cl.health_status_reason.as_ref().unwrap_or(&empty),
        )?;
        o.serialize_entry("discovery_url", &cl.discovery_url)?;
        o.serialize_entry("api_address", &cl.api_address)?;
        o.serialize_entry("coe_version", &cl.coe_version)?;
        o.serialize_entry("container_version", &cl.container_version)?;
        o.serialize_entry("project_id", &cl.project_id)?;
        o.serialize_entry("user_id", &cl.user_id)?;
        o.serialize_entry("node_addresses", &node_addrs)?;
        o.serialize_entry("master_addresses", &master_addrs)?;
        if let Some(f) = &self.faults {
            o.serialize_entry("faults", f)?;
        }
        o.serialize_entry("fixed_network", &cl.fixed_network)?;
        o.serialize_entry("fixed_subnet", &cl.fixed_subnet)?;
        o.serialize_entry("floating_ip_enabled", &cl.floating_ip_enabled)?;
        o.serialize_entry("merge_labels", &false)?;
        o.serialize_entry("labels_overridden", &overridden)?;
        o.serialize_entry("labels_added", &added)?;
        o.serialize_entry("labels_skipped", &skipped)?;
        o.serialize_entry("master_lb_enabled", &cl.master_lb_enabled)?;
        o.serialize_entry("created_at", &isoformat(cl.created_at))?;
        o.serialize_entry("updated_at", &cl.updated_at.map(isoformat))?;
        o.end()
    }
}

#[cfg(test)]
mod tests;
