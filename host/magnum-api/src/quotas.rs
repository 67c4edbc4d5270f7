//! `/v1/quotas` (magnum/api/controllers/v1/quota.py): admins create,
//! change and delete the hard limit of a (project, resource); callers read
//! their own project's quotas, admins any.

use axum::response::Response;
use http::StatusCode;
use magnum_domain::MagnumError;
use magnum_domain::models::Quota;
use magnum_domain::validation::{QUOTA_RESOURCE_CLUSTER, QUOTA_RESOURCES, RANGE_HARD_LIMIT};
use magnum_domain::validation::{RANGE_ID, STRING_FIELD};
use serde::Serialize;

use super::body::{Attr, Body, Const, Schema, Type, attr};
use super::errors::{json_response, no_content};
use super::paging::{Collection, Page};
use super::views::isoformat;
use super::{ApiError, Call, Services};

/// The attributes of WSME's `Quota` type, in declaration order.
const ATTRS: &[Attr] = &[
    attr("id", Type::Integer(RANGE_ID)),
    attr("hard_limit", Type::Integer(RANGE_HARD_LIMIT)).default(Const::Int(1)),
    attr("project_id", Type::String(STRING_FIELD)),
    attr("resource", Type::Enum(QUOTA_RESOURCES)).default(Const::Str(QUOTA_RESOURCE_CLUSTER)),
    attr("created_at", Type::Datetime).readonly(),
    attr("updated_at", Type::Datetime).readonly(),
];

/// The body of `POST /v1/quotas`.
const CREATE: Schema = Schema {
    arg: "quota",
    attrs: ATTRS,
};

/// The body of `PATCH /v1/quotas/{project_id}/{resource}`: the same type.
const UPDATE: Schema = Schema {
    arg: "quotapatch",
    attrs: ATTRS,
};

/// `Quota.convert` of a row (keys in the order Magnum's JSON has them).
#[derive(Serialize)]
struct View {
    created_at: String,
    hard_limit: i32,
    id: i64,
    project_id: String,
    resource: String,
    updated_at: Option<String>,
}

impl From<&Quota> for View {
    fn from(q: &Quota) -> View {
        View {
            created_at: isoformat(q.created_at),
            hard_limit: q.hard_limit,
            id: q.id,
            project_id: q.project_id.clone(),
            resource: q.resource.clone(),
            updated_at: q.updated_at.map(isoformat),
        }
    }
}

/// The object Magnum shows for a (project, resource) without a row.
#[derive(Serialize)]
struct DefaultView<'a> {
    hard_limit: i64,
    project_id: &'a str,
    resource: &'a str,
}

/// The hard limit a body sets: the one sent, else WSME's default 1.
fn hard_limit(b: &Body<'_>) -> Result<i32, MagnumError> {
    let n = b.int("hard_limit").unwrap_or(1);
    // The type's bound keeps it ≥ 0; a value beyond the column's range is
    // refused as the bound's error would be.
    i32::try_from(n).map_err(|_| MagnumError::server_error("hard_limit is out of range"))
}

/// routes.md #22: `quota:get_all`; the caller's project, or every project
/// for an admin with `all_tenants`; a caller without a project sees none.
pub(crate) async fn get_all(s: Services, call: Call) -> Result<Response, ApiError> {
    let ctx = &call.ctx;
    super::policy::enforce(&s.enforcer, ctx, "quota:get_all", None)?;
    let all_tenants = call.query.bool("all_tenants").unwrap_or(false);
    let project = if ctx.is_admin && all_tenants {
        None
    } else if ctx.project_id.is_empty() {
        // Magnum filters on project_id = None: no row matches.
        let none: Collection<'_, View> = Collection::new("quotas", Vec::new(), None);
        return Ok(json_response(StatusCode::OK, &none));
    } else {
        Some(ctx.project_id.as_str())
    };
    let page = Page::from_query(&call.query, s.conductor.settings().max_limit)?;
    let rows = s
        .conductor
        .list_quotas(project, &page.list_options())
        .await?;
    let next = page.next(&call.base_url, "quotas", rows.len(), || {
        rows.last().map(|q| q.id.to_string()).unwrap_or_default()
    });
    let items = rows.iter().map(View::from).collect();
    Ok(json_response(
        StatusCode::OK,
        &Collection::new("quotas", items, next),
    ))
}

/// routes.md #23: `quota:get`; non-admins only of their own project; the
/// stored quota, or the configured default.
pub(crate) async fn get_one(
    s: Services,
    call: Call<(String, String)>,
) -> Result<Response, ApiError> {
    let ctx = &call.ctx;
    super::policy::enforce(&s.enforcer, ctx, "quota:get", None)?;
    let (project, resource) = (call.path.0.as_str(), call.path.1.as_str());
    if !ctx.is_admin && project != ctx.project_id {
        return Err(MagnumError::not_authorized_default().into());
    }
    match s.conductor.get_quota(project, resource).await? {
        Some(q) => Ok(json_response(StatusCode::OK, &View::from(&q))),
        // Magnum: the default object always names the Cluster resource.
        None => Ok(json_response(
            StatusCode::OK,
            &DefaultView {
                hard_limit: s.conductor.default_cluster_quota(),
                project_id: project,
                resource: QUOTA_RESOURCE_CLUSTER,
            },
        )),
    }
}

/// routes.md #24: the body first, then `quota:create`, then a project is
/// required; 201 with the row.
///
/// Magnum checks that `project_id` names a Keystone project (404 `The
/// project_id <id> could not be found.`) before the policy
/// ([`crate::openstack::Lookup::project_exists`]).
///
/// Deviation: no lookup back end of this build asks Keystone, so every
/// project is found.
pub(crate) async fn post(s: Services, call: Call) -> Result<Response, ApiError> {
    let b = CREATE.decode(call.require_body()?)?;
    if let Some(project) = b.text("project_id") {
        s.conductor.check_project(&call.ctx, project).await?;
    }
    super::policy::enforce(&s.enforcer, &call.ctx, "quota:create", None)?;
    let project = b.text("project_id").unwrap_or("");
    if project.is_empty() {
        return Err(MagnumError::quota_project_missing().into());
    }
    let quota = Quota {
        // Magnum honours a client-supplied id.
        id: b.int("id").unwrap_or(0),
        project_id: project.to_string(),
        resource: b
            .text("resource")
            .unwrap_or(QUOTA_RESOURCE_CLUSTER)
            .to_string(),
        hard_limit: hard_limit(&b)?,
        ..Quota::default()
    };
    let q = s.conductor.create_quota(quota).await?;
    Ok(json_response(StatusCode::CREATED, &View::from(&q)))
}

/// routes.md #25: a plain `Quota` body whose `hard_limit` (default 1) is
/// written to the quota of the path (which the body may give, as in
/// pecan); 202 with the row.
///
/// Deviation: Magnum also writes a client-sent `id` into the row's primary
/// key; we ignore it.
pub(crate) async fn patch(s: Services, call: Call<(String, String)>) -> Result<Response, ApiError> {
    let b = UPDATE.decode(call.require_body()?)?;
    super::policy::enforce(&s.enforcer, &call.ctx, "quota:update", None)?;
    let limit = hard_limit(&b)?;
    let q = s
        .conductor
        .update_quota(&call.path.0, &call.path.1, limit)
        .await?;
    Ok(json_response(StatusCode::ACCEPTED, &View::from(&q)))
}

/// routes.md #26: `quota:delete`, then the row; 204.
pub(crate) async fn delete(
    s: Services,
    call: Call<(String, String)>,
) -> Result<Response, ApiError> {
    super::policy::enforce(&s.enforcer, &call.ctx, "quota:delete", None)?;
    let (project, resource) = &call.path;
    s.conductor.delete_quota(project, resource).await?;
    Ok(no_content())
}

#[cfg(test)]
mod tests;
