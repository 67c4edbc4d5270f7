//! `/v1/clustertemplates` (magnum/api/controllers/v1/cluster_template.py,
//! routes.md #16–#21): the WSME `ClusterTemplate` type, its view, and the
//! six handlers with their policy checks in Magnum's order. Templates have
//! no summary form and no microversion differences: every answer is the
//! full object.

use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use magnum_domain::models::{ClusterTemplate, StringMap};
use magnum_domain::validation::{
    COES, RANGE_API_SERVER_PORT, RANGE_DOCKER_VOLUME_SIZE, SERVER_TYPES, STRING_FIELD, TAGS,
};
use magnum_domain::{MagnumError, RequestContext};
use python_semantics::Dict;
use serde::Serialize;

use super::body::{self, Attr, Const, Schema, Type, attr};
use super::errors::{json_response, no_content};
use super::paging::{Collection, Page};
use super::patch;
use super::policy::enforce;
use super::versions::Link;
use super::views::isoformat;
use super::{ApiError, Call, Services};
use crate::conductor::cluster_templates::{TemplateCreate, TemplateUpdate, template_target};

/// The attributes of Magnum's `ClusterTemplate` API type in declaration
/// order (cluster_template.py:45-167, then `created_at`, `updated_at`),
/// the order WSME converts and checks them.
const ATTRS: &[Attr] = &[
    attr("uuid", Type::Uuid),
    attr("name", Type::String(STRING_FIELD)),
    attr("coe", Type::Enum(COES)),
    attr("image_id", Type::String(STRING_FIELD)).mandatory(),
    attr("flavor_id", Type::String(STRING_FIELD)),
    attr("master_flavor_id", Type::String(STRING_FIELD)),
    attr("dns_nameserver", Type::Dns),
    attr("keypair_id", Type::String(STRING_FIELD)),
    attr("external_network_id", Type::String(STRING_FIELD)),
    attr("fixed_network", Type::String(STRING_FIELD)),
    attr("fixed_subnet", Type::String(STRING_FIELD)),
    attr("network_driver", Type::String(STRING_FIELD)),
    attr("apiserver_port", Type::Integer(RANGE_API_SERVER_PORT)),
    attr(
        "docker_volume_size",
        Type::Integer(RANGE_DOCKER_VOLUME_SIZE),
    ),
    attr("cluster_distro", Type::String(STRING_FIELD)),
    attr("links", Type::Links).readonly(),
    attr("http_proxy", Type::String(STRING_FIELD)),
    attr("https_proxy", Type::String(STRING_FIELD)),
    attr("no_proxy", Type::String(STRING_FIELD)),
    attr("volume_driver", Type::String(STRING_FIELD)),
    attr("registry_enabled", Type::Boolean).default(Const::Bool(false)),
    attr("labels", Type::Labels),
    attr("tls_disabled", Type::Boolean).default(Const::Bool(false)),
    attr("public", Type::Boolean).default(Const::Bool(false)),
    attr("server_type", Type::Enum(SERVER_TYPES)).default(Const::Str("vm")),
    attr("insecure_registry", Type::String(STRING_FIELD)),
    attr("docker_storage_driver", Type::String(STRING_FIELD)),
    attr("master_lb_enabled", Type::Boolean).default(Const::Bool(false)),
    attr("floating_ip_enabled", Type::Boolean).default(Const::Bool(true)),
    attr("project_id", Type::Text).readonly(),
    attr("user_id", Type::Text).readonly(),
    attr("hidden", Type::Boolean).default(Const::Bool(false)),
    attr("tags", Type::String(TAGS)),
    attr("driver", Type::String(STRING_FIELD)),
    attr("created_at", Type::Datetime).readonly(),
    attr("updated_at", Type::Datetime).readonly(),
];

/// The WSME `ClusterTemplate` type (body argument `cluster_template`).
pub static SCHEMA: Schema = Schema {
    arg: "cluster_template",
    attrs: ATTRS,
};

/// The template values of a decoded body (or of a type rebuilt from a
/// patched dictionary): absent attributes read as the type's defaults.
fn template_of(b: &body::Body<'_>) -> ClusterTemplate {
    let s = |n: &str| b.text(n).map(str::to_string);
    // The integers are within the 32-bit columns (checked by the type).
    let i = |n: &str| b.int(n).and_then(|v| i32::try_from(v).ok());
    ClusterTemplate {
        uuid: s("uuid").unwrap_or_default(),
        name: s("name").unwrap_or_default(),
        coe: s("coe"),
        image_id: s("image_id"),
        flavor_id: s("flavor_id"),
        master_flavor_id: s("master_flavor_id"),
        dns_nameserver: s("dns_nameserver"),
        keypair_id: s("keypair_id"),
        external_network_id: s("external_network_id"),
        fixed_network: s("fixed_network"),
        fixed_subnet: s("fixed_subnet"),
        network_driver: s("network_driver"),
        apiserver_port: i("apiserver_port"),
        docker_volume_size: i("docker_volume_size"),
        cluster_distro: s("cluster_distro"),
        http_proxy: s("http_proxy"),
        https_proxy: s("https_proxy"),
        no_proxy: s("no_proxy"),
        volume_driver: s("volume_driver"),
        registry_enabled: b.boolean("registry_enabled"),
        labels: b.string_map("labels"),
        tls_disabled: b.boolean("tls_disabled"),
        public: b.boolean("public"),
        server_type: s("server_type"),
        insecure_registry: s("insecure_registry"),
        docker_storage_driver: s("docker_storage_driver"),
        master_lb_enabled: b.boolean("master_lb_enabled"),
        floating_ip_enabled: b.boolean("floating_ip_enabled"),
        hidden: b.boolean("hidden"),
        tags: s("tags"),
        driver: s("driver"),
        ..ClusterTemplate::default()
    }
}

/// `ClusterTemplate(**doc)` of a patched dictionary.
fn rebuild(doc: &Dict) -> Result<ClusterTemplate, MagnumError> {
    Ok(template_of(&SCHEMA.rebuild(doc)?))
}

/// The wire form of a template: every attribute, nulls included.
#[derive(Serialize)]
pub struct View {
    apiserver_port: Option<i32>,
    cluster_distro: Option<String>,
    coe: Option<String>,
    created_at: String,
    dns_nameserver: Option<String>,
    docker_storage_driver: Option<String>,
    docker_volume_size: Option<i32>,
    driver: Option<String>,
    external_network_id: Option<String>,
    fixed_network: Option<String>,
    fixed_subnet: Option<String>,
    flavor_id: Option<String>,
    floating_ip_enabled: Option<bool>,
    hidden: Option<bool>,
    http_proxy: Option<String>,
    https_proxy: Option<String>,
    image_id: Option<String>,
    insecure_registry: Option<String>,
    keypair_id: Option<String>,
    labels: StringMap,
    links: [Link; 2],
    master_flavor_id: Option<String>,
    master_lb_enabled: Option<bool>,
    name: Option<String>,
    network_driver: Option<String>,
    no_proxy: Option<String>,
    project_id: Option<String>,
    public: Option<bool>,
    registry_enabled: Option<bool>,
    server_type: Option<String>,
    tags: Option<String>,
    tls_disabled: Option<bool>,
    updated_at: Option<String>,
    user_id: Option<String>,
    uuid: String,
    volume_driver: Option<String>,
}

fn nullable(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

impl View {
    /// The view of `t` for the application URL `base`.
    pub fn of(base: &str, t: ClusterTemplate) -> View {
        View {
            links: Link::pair(base, "clustertemplates", &t.uuid),
            apiserver_port: t.apiserver_port,
            cluster_distro: t.cluster_distro,
            coe: t.coe,
            created_at: isoformat(t.created_at),
            dns_nameserver: t.dns_nameserver,
            docker_storage_driver: t.docker_storage_driver,
            docker_volume_size: t.docker_volume_size,
            driver: t.driver,
            external_network_id: t.external_network_id,
            fixed_network: t.fixed_network,
            fixed_subnet: t.fixed_subnet,
            flavor_id: t.flavor_id,
            floating_ip_enabled: t.floating_ip_enabled,
            hidden: t.hidden,
            http_proxy: t.http_proxy,
            https_proxy: t.https_proxy,
            image_id: t.image_id,
            insecure_registry: t.insecure_registry,
            keypair_id: t.keypair_id,
            labels: t.labels.unwrap_or_default(),
            master_flavor_id: t.master_flavor_id,
            master_lb_enabled: t.master_lb_enabled,
            name: nullable(t.name),
            network_driver: t.network_driver,
            no_proxy: t.no_proxy,
            project_id: nullable(t.project_id),
            public: t.public,
            registry_enabled: t.registry_enabled,
            server_type: t.server_type,
            tags: t.tags,
            tls_disabled: t.tls_disabled,
            updated_at: t.updated_at.map(isoformat),
            user_id: nullable(t.user_id),
            uuid: t.uuid,
            volume_driver: t.volume_driver,
        }
    }
}

/// #16: `clustertemplate:get_all`, then the list.
pub(crate) async fn get_all(s: Services, call: Call) -> Result<Response, ApiError> {
    enforce(&s.enforcer, &call.ctx, "clustertemplate:get_all", None)?;
    collection(
        &s,
        &call,
        "clustertemplates",
        "clustertemplate:get_all_all_projects",
    )
    .await
}

/// #17: `clustertemplate:detail`, the marker-in-path 404, then the list.
pub(crate) async fn detail(s: Services, call: Call) -> Result<Response, ApiError> {
    enforce(&s.enforcer, &call.ctx, "clustertemplate:detail", None)?;
    // Magnum: /detail only answers on the collection.
    if call.marker_in_path {
        return Err(MagnumError::http_not_found_unformatted().into());
    }
    collection(
        &s,
        &call,
        "clustertemplates/detail",
        "clustertemplate:detail_all_projects",
    )
    .await
}

/// #16 and #17 after their own rule: the admin all-projects rule, the
/// page, the list, the `next` link.
async fn collection(
    s: &Services,
    call: &Call,
    resource: &str,
    all_rule: &str,
) -> Result<Response, ApiError> {
    let all = call.ctx.is_admin;
    if all {
        enforce(&s.enforcer, &call.ctx, all_rule, None)?;
    }
    let page = Page::from_query(&call.query, s.conductor.settings().max_limit)?;
    let rows = s
        .conductor
        .list_cluster_templates(&call.ctx, all, &page.list_options())
        .await?;
    let last = rows.last().map(|t| t.uuid.clone()).unwrap_or_default();
    let next = page.next(&call.base_url, resource, rows.len(), || last);
    let items = rows
        .into_iter()
        .map(|t| View::of(&call.base_url, t))
        .collect();
    Ok(json_response(
        StatusCode::OK,
        &Collection::new("clustertemplates", items, next),
    ))
}

/// #18: admin rule → lookup → another project's hidden template is
/// invisible to non-admins → `clustertemplate:get` only when not public.
pub(crate) async fn get_one(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let ctx = &call.ctx;
    let id = &call.path;
    let t = lookup(&s, ctx, id, "clustertemplate:get_one_all_projects").await?;
    if t.hidden == Some(true) && !ctx.is_admin && t.project_id != ctx.project_id {
        return Err(MagnumError::cluster_template_not_found(id).into());
    }
    if t.public != Some(true) {
        enforce(
            &s.enforcer,
            ctx,
            "clustertemplate:get",
            Some(&template_target(&t)),
        )?;
    }
    Ok(json_response(StatusCode::OK, &View::of(&call.base_url, t)))
}

/// The template `id`, after the admin's all-projects rule `all_rule` (an
/// admin's lookup then sees every project's templates).
async fn lookup(
    s: &Services,
    ctx: &RequestContext,
    id: &str,
    all_rule: &str,
) -> Result<ClusterTemplate, ApiError> {
    let admin = ctx.is_admin;
    if admin {
        enforce(&s.enforcer, ctx, all_rule, None)?;
    }
    Ok(s.conductor.get_cluster_template(ctx, id, admin).await?)
}

/// `clustertemplate:publish` with the caller's target; a denial is
/// Magnum's 403 `ClusterTemplatePublishDenied`.
fn publish_check(s: &Services, ctx: &RequestContext) -> Result<(), MagnumError> {
    enforce(&s.enforcer, ctx, "clustertemplate:publish", None)
        .map_err(|_| MagnumError::cluster_template_publish_denied())
}

/// #19: 201 with a `Location` header.
pub(crate) async fn post(s: Services, call: Call) -> Result<Response, ApiError> {
    let b = SCHEMA.decode(call.require_body()?)?;
    let authorize = || enforce(&s.enforcer, &call.ctx, "clustertemplate:create", None);
    let publish = || publish_check(&s, &call.ctx);
    let created = s
        .conductor
        .create_cluster_template(
            &call.ctx,
            TemplateCreate {
                template: template_of(&b),
                present: b.present().collect(),
                authorize: &authorize,
                publish: &publish,
            },
        )
        .await?;
    let location = format!("{}/v1/clustertemplates/{}", call.base_url, created.uuid);
    let mut resp = json_response(StatusCode::CREATED, &View::of(&call.base_url, created));
    if let Ok(v) = HeaderValue::from_str(&location) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    Ok(resp)
}

/// #20: 200 with the template as saved.
pub(crate) async fn patch(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let ops = patch::parse(call.require_body()?, &patch::CLUSTER_TEMPLATE)?;
    let ctx = &call.ctx;
    let all_projects = || {
        if !ctx.is_admin {
            return Ok(false);
        }
        enforce(
            &s.enforcer,
            ctx,
            "clustertemplate:update_all_projects",
            None,
        )?;
        Ok(true)
    };
    let authorize = |t: &ClusterTemplate| {
        enforce(
            &s.enforcer,
            ctx,
            "clustertemplate:update",
            Some(&template_target(t)),
        )
    };
    let publish = || publish_check(&s, ctx);
    let updated = s
        .conductor
        .update_cluster_template(
            ctx,
            TemplateUpdate {
                ident: &call.path,
                ops: &ops,
                build: &rebuild,
                all_projects: &all_projects,
                authorize: &authorize,
                publish: &publish,
            },
        )
        .await?;
    Ok(json_response(
        StatusCode::OK,
        &View::of(&call.base_url, updated),
    ))
}

/// #21: admin rule → lookup → `clustertemplate:delete` → delete → 204.
pub(crate) async fn delete(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let ctx = &call.ctx;
    let id = &call.path;
    let t = lookup(&s, ctx, id, "clustertemplate:delete_all_projects").await?;
    enforce(
        &s.enforcer,
        ctx,
        "clustertemplate:delete",
        Some(&template_target(&t)),
    )?;
    s.conductor.delete_cluster_template(id, &t).await?;
    Ok(no_content())
}

#[cfg(test)]
mod tests;
