//! Cluster templates: who sees which (spec `api/logic.md` §3), lookups by
//! uuid or name, the list, and the create, update and delete use cases with
//! the checks Magnum's decorators and handlers make
//! (magnum/api/controllers/v1/cluster_template.py, magnum/api/validation.py,
//! magnum/api/attr_validator.py), in their order.
//!
//! The WSME side of a request (decoding the body into the API type,
//! rebuilding the type from a patched dictionary) and the policy belong to
//! the API: the use cases receive the decoded values and call back for the
//! policy checks where Magnum makes them, after its decorators.

use driver_host::TemplateDriverInput;
use magnum_domain::models::{ClusterTemplate, StringMap};
use magnum_domain::{MagnumError, RequestContext, catalogue};
use magnum_jsonpatch::patch::{self as jsonpatch, CLUSTER_TEMPLATE, Operation};
use python_semantics::python;
use python_semantics::{Dict, PyValue};

use super::lookup::{self, Ident, Kind};
use super::{Conductor, Error, Result};
use crate::db::{self, ListOptions, Scope, TemplateScope};
use crate::openstack::{Image, LookupError};
use crate::policy::Target;
use chrono::NaiveDateTime;

/// The network drivers Magnum's Kubernetes validator supports
/// (magnum/api/validation.py `K8sValidator`).
pub const SUPPORTED_NETWORK_DRIVERS: &[&str] = &["flannel", "calico", "cilium"];
/// The volume drivers it supports.
pub const SUPPORTED_VOLUME_DRIVERS: &[&str] = &["cinder"];
/// The server types it supports.
pub const SUPPORTED_SERVER_TYPES: &[&str] = &["vm", "bm"];

/// `[cinder]/default_boot_volume_size`, used when a template has no
/// `boot_volume_size` label.
const DEFAULT_BOOT_VOLUME_SIZE: i64 = 0;

/// The template visibility of a caller (spec `api/logic.md` §3): every
/// template for an admin to whom an `*_all_projects` rule applied
/// (`all_projects`); otherwise the caller's own templates (by project, or by
/// user for a token without a project) plus the public ones that are not
/// hidden, plus the public hidden ones for admins.
pub fn template_scope(ctx: &RequestContext, all_projects: bool) -> TemplateScope {
    if ctx.is_admin && all_projects {
        return TemplateScope::new(Scope::ALL_PROJECTS);
    }
    let scope = if !ctx.project_id.is_empty() {
        Scope::project(&ctx.project_id)
    } else if !ctx.user_id.is_empty() {
        Scope::user(&ctx.user_id)
    } else {
        // Magnum filters on user_id = NULL, which no row matches: only the
        // public templates remain. No Keystone id starts with a space.
        Scope::user(" no user")
    };
    TemplateScope {
        scope,
        public_hidden: ctx.is_admin,
    }
}

/// A policy check the use case calls where Magnum makes it; its error is
/// answered as it is.
pub type Check<'a> = &'a (dyn Fn() -> std::result::Result<(), MagnumError> + Send + Sync);

/// A cluster template POST after WSME decoded the body.
pub struct TemplateCreate<'a> {
    /// The body's values: `None` for absent or null attributes, the API
    /// type's defaults (booleans, `server_type`) applied to absent ones.
    pub template: ClusterTemplate,
    /// The attributes present in the body (a `null` counts).
    pub present: Vec<&'static str>,
    /// `clustertemplate:create`, evaluated after the decorators' checks.
    pub authorize: Check<'a>,
    /// `clustertemplate:publish` (its denial already mapped to Magnum's
    /// 403), evaluated when `public` or `hidden` is true.
    pub publish: Check<'a>,
}

impl TemplateCreate<'_> {
    fn has(&self, name: &str) -> bool {
        self.present.contains(&name)
    }
}

/// A cluster template PATCH after its operations were read and checked.
pub struct TemplateUpdate<'a> {
    /// The template's UUID or name as given in the path.
    pub ident: &'a str,
    pub ops: &'a [Operation],
    /// Rebuilds the API type from a patched dictionary
    /// (`ClusterTemplate(**doc)`, WSME's type checks) and returns its
    /// values; identity and times are taken from the stored row.
    pub build:
        &'a (dyn Fn(&Dict) -> std::result::Result<ClusterTemplate, MagnumError> + Send + Sync),
    /// The admin rule `clustertemplate:update_all_projects`, evaluated after
    /// the decorators; `true` when the lookup spans every project.
    pub all_projects: &'a (dyn Fn() -> std::result::Result<bool, MagnumError> + Send + Sync),
    /// `clustertemplate:update` with the template as target.
    pub authorize:
        &'a (dyn Fn(&ClusterTemplate) -> std::result::Result<(), MagnumError> + Send + Sync),
    /// `clustertemplate:publish`, evaluated when `public` or `hidden`
    /// changes.
    pub publish: Check<'a>,
}

impl Conductor {
    /// The template `ident` (a UUID-like string is a uuid, anything else a
    /// name) among those the caller sees: 404 naming `ident` when none, 409
    /// when the name matches several.
    pub async fn get_cluster_template(
        &self,
        ctx: &RequestContext,
        ident: &str,
        all_projects: bool,
    ) -> Result<ClusterTemplate> {
        let scope = template_scope(ctx, all_projects);
        self.find_template(Ident::uuid_or_name(ident), ident, &scope)
            .await
    }

    /// A template reference as Magnum's `ClusterTemplate.get` resolves it
    /// (a cluster create's `cluster_template_id`): an integer-like string is
    /// a database id, then as [`Conductor::get_cluster_template`], with the
    /// caller's visibility without the all-projects rule.
    pub async fn get_cluster_template_by_ref(
        &self,
        ctx: &RequestContext,
        ident: &str,
    ) -> Result<ClusterTemplate> {
        let scope = template_scope(ctx, false);
        self.find_template(Ident::id_uuid_or_name(ident), ident, &scope)
            .await
    }

    async fn find_template(
        &self,
        how: Ident<'_>,
        ident: &str,
        scope: &TemplateScope,
    ) -> Result<ClusterTemplate> {
        let mut q = self.db().q();
        let k = Kind::ClusterTemplate;
        match how {
            Ident::Id(id) => lookup::found(k, ident, q.get_cluster_template_by_id(id, scope).await),
            Ident::Uuid(u) => {
                lookup::found(k, ident, q.get_cluster_template_by_uuid(u, scope).await)
            }
            Ident::Name(n) => {
                lookup::single(k, ident, q.get_cluster_templates_by_name(n, scope).await)
            }
        }
    }

    /// One page of the templates the caller sees. The marker must be a
    /// template the caller sees (404 naming it otherwise); a sort key that
    /// is not a column is 400.
    pub async fn list_cluster_templates(
        &self,
        ctx: &RequestContext,
        all_projects: bool,
        o: &ListOptions,
    ) -> Result<Vec<ClusterTemplate>> {
        let scope = template_scope(ctx, all_projects);
        let mut q = self.db().q();
        if let Some(m) = o.marker.as_deref() {
            lookup::found(
                Kind::ClusterTemplate,
                m,
                q.get_cluster_template_by_uuid(m, &scope).await,
            )?;
        }
        lookup::page(
            Kind::ClusterTemplate,
            o,
            q.list_cluster_templates(&scope, o).await,
        )
    }

    /// The POST of a cluster template (spec `api/logic.md` §2): Magnum's
    /// decorators (COE and server type, the network driver with its default,
    /// the volume driver, the devicemapper volume size, the distro and
    /// driver resolution), then `clustertemplate:create`, the OpenStack
    /// resource checks, the distro from the image, the driver fallback, the
    /// caller's project and user, `clustertemplate:publish` for public or
    /// hidden templates, the root-disk checks, the generated name and the
    /// insert (a used uuid → 409).
    pub async fn create_cluster_template(
        &self,
        ctx: &RequestContext,
        input: TemplateCreate<'_>,
    ) -> Result<ClusterTemplate> {
        let mut t = input.template.clone();
        // enforce_server_type
        let coe = if input.has("coe") {
            t.coe.as_deref().unwrap_or("None")
        } else {
            "Unset"
        };
        check_coe(coe)?;
        check_server_type(t.server_type.as_deref())?;
        // enforce_network_driver_types_create writes the default driver.
        let nd = self.check_network_driver(t.network_driver.as_deref().unwrap_or(""))?;
        t.network_driver = Some(nd);
        // enforce_volume_driver_types_create
        check_volume_driver(t.volume_driver.as_deref())?;
        // enforce_volume_storage_size_create
        if t.docker_storage_driver.as_deref() == Some("devicemapper")
            && t.docker_volume_size.is_none_or(|n| n < 3)
        {
            return Err(
                MagnumError::devicemapper_volume_size(t.docker_volume_size.map(i64::from)).into(),
            );
        }
        // enforce_driver_supported
        let mut distro = t.cluster_distro.clone().unwrap_or_default();
        let request_driver = t.driver.clone().unwrap_or_default();
        let mut image_driver = String::new();
        if distro.is_empty() || request_driver.is_empty() {
            if let Some(image) = t.image_id.as_deref() {
                match self.lookup().image(ctx, image).await {
                    Ok(img) => {
                        distro = img.os_distro.unwrap_or_default();
                        image_driver = img.magnum_driver.unwrap_or_default();
                    }
                    Err(e) if !image_error_swallowed(&e) => return Err(e.into()),
                    // Magnum: validation.py:82 — any other error leaves the
                    // distro unknown.
                    Err(_) => {}
                }
            }
            if distro.is_empty() {
                return Err(MagnumError::os_distro_field_not_found(
                    t.image_id.as_deref().unwrap_or("None"),
                )
                .into());
            }
        }
        let name = self
            .template_drivers()
            .resolve_template_driver(&TemplateDriverInput {
                server_type: t.server_type.clone().unwrap_or_default(),
                cluster_distro: distro,
                coe: t.coe.clone().unwrap_or_default(),
                request_driver,
                image_driver,
            })?;
        if !name.is_empty() {
            t.driver = Some(name);
        }
        // The handler.
        (input.authorize)()?;
        self.validate_os_resources(ctx, &t).await?;
        let img = self.validate_image(ctx, t.image_id.as_deref()).await?;
        // Magnum: cluster_template.py:425 — the image's distro replaces
        // whatever the client sent.
        t.cluster_distro = img.os_distro.clone();
        if t.driver.as_deref().is_none_or(str::is_empty) {
            let name = match img.magnum_driver.clone() {
                Some(n) => Some(n),
                None => self.template_drivers().default_name()?,
            };
            if name.is_some() {
                t.driver = name;
            }
        }
        t.project_id = ctx.project_id.clone();
        t.user_id = ctx.user_id.clone();
        if t.public == Some(true) || t.hidden == Some(true) {
            (input.publish)()?;
        }
        let labels = t.labels.get_or_insert_with(StringMap::new).clone();
        if input.has("flavor_id") || input.has("master_flavor_id") {
            let size = boot_volume_size(&labels)?;
            if input.has("flavor_id") {
                self.validate_flavor_root_volume(ctx, t.flavor_id.as_deref(), size)
                    .await?;
            }
            if input.has("master_flavor_id") {
                self.validate_flavor_root_volume(ctx, t.master_flavor_id.as_deref(), size)
                    .await?;
            }
        }
        // Magnum: cluster_template.py:453 — the deprecated storage drivers
        // are accepted with a warning in the log.
        if let Some(d @ ("devicemapper" | "overlay")) = t.docker_storage_driver.as_deref() {
            tracing::warn!(
                docker_storage_driver = d,
                "the docker storage driver of the new cluster template is deprecated"
            );
        }
        // Deviation: Magnum answers 500 for a kubernetes template whose
        // distro is coreos (an attribute it lacks, cluster_template.py:460);
        // such a template is created here, and a cluster of it is refused
        // by the driver rules (no driver provides the tuple: 400).
        if t.name.is_empty() {
            t.name = generate_template_name();
        }
        if t.uuid.is_empty() {
            t.uuid = self.new_uuid();
        }
        t.updated_at = None;
        let uuid = t.uuid.clone();
        let row = t;
        let created = self
            .db()
            .in_tx(move |tx| {
                let mut t = row.clone();
                Box::pin(async move {
                    tx.q().create_cluster_template(&mut t).await?;
                    Ok::<_, Error>(t)
                })
            })
            .await;
        match created {
            Err(Error::Db(db::Error::Duplicate { .. })) => {
                Err(MagnumError::cluster_template_already_exists(&uuid).into())
            }
            other => other,
        }
    }

    /// The PATCH of a cluster template (spec `api/patch.md` §4): the
    /// decorators look the template up with the caller's scope without the
    /// all-projects rule, apply the patch, coerce the object's fields and
    /// check the COE, network and volume drivers; then the handler applies
    /// the admin rule, looks the template up again, authorizes, rebuilds the
    /// API type from the patched values, checks the OpenStack resources,
    /// the publish rule and the root disks, and saves the changed columns
    /// unless clusters use the template (400, except for the publishing and
    /// renaming changes). Answers with the object as saved, whose
    /// `updated_at` is the value before this update, as Magnum does.
    pub async fn update_cluster_template(
        &self,
        ctx: &RequestContext,
        u: TemplateUpdate<'_>,
    ) -> Result<ClusterTemplate> {
        // The decorators.
        let cur = self.get_cluster_template(ctx, u.ident, false).await?;
        let doc = jsonpatch::apply(&template_doc(&cur), u.ops, &CLUSTER_TEMPLATE)
            .map_err(MagnumError::from)?;
        coerce_object(&doc)?;
        let coe = match doc.get("coe") {
            Some(v) if !v.is_none() => python::str_of(v),
            _ => "None".to_string(),
        };
        check_coe(&coe)?;
        let nd = doc
            .get("network_driver")
            .and_then(PyValue::as_str)
            .unwrap_or("");
        self.check_network_driver(nd)?;
        check_volume_driver(doc.get("volume_driver").and_then(PyValue::as_str))?;
        // The handler.
        let all = (u.all_projects)()?;
        let old = self.get_cluster_template(ctx, u.ident, all).await?;
        (u.authorize)(&old)?;
        let doc = jsonpatch::apply(&template_doc(&old), u.ops, &CLUSTER_TEMPLATE)
            .map_err(MagnumError::from)?;
        let mut upd = (u.build)(&doc)?;
        upd.id = old.id;
        upd.uuid = old.uuid.clone();
        upd.project_id = old.project_id.clone();
        upd.user_id = old.user_id.clone();
        upd.created_at = old.created_at;
        upd.updated_at = old.updated_at;
        self.validate_os_resources(ctx, &upd).await?;
        if old.public != upd.public || old.hidden != upd.hidden {
            (u.publish)()?;
        }
        let size = boot_volume_size(old.labels.as_ref().unwrap_or(&StringMap::new()))?;
        self.validate_flavor_root_volume(ctx, upd.flavor_id.as_deref(), size)
            .await?;
        self.validate_flavor_root_volume(ctx, upd.master_flavor_id.as_deref(), size)
            .await?;
        let changed = changed_columns(&old, &upd);
        upd.labels.get_or_insert_with(StringMap::new);
        let ident = u.ident.to_string();
        let uuid = old.uuid.clone();
        self.db()
            .in_tx(move |tx| {
                let mut upd = upd.clone();
                let (ident, uuid, changed) = (ident.clone(), uuid.clone(), changed.clone());
                Box::pin(async move {
                    let all = TemplateScope::new(Scope::ALL_PROJECTS);
                    let row = lookup::found(
                        Kind::ClusterTemplate,
                        &ident,
                        tx.for_update()
                            .get_cluster_template_by_uuid(&uuid, &all)
                            .await,
                    )?;
                    let in_use = tx.q().cluster_template_in_use(&row.uuid).await?;
                    if in_use && !publishing_only(&changed, &upd) {
                        return Err(MagnumError::cluster_template_referenced(&ident).into());
                    }
                    if changed.is_empty() {
                        return Ok(row);
                    }
                    let cols: Vec<&str> = changed.iter().map(|c| c.as_str()).collect();
                    tx.q().update_cluster_template(&mut upd, &cols).await?;
                    // Magnum answers with the object it saved, not read
                    // back: updated_at is still the value before.
                    upd.updated_at = row.updated_at;
                    Ok::<_, Error>(upd)
                })
            })
            .await
    }

    /// Deletes `t` (looked up and authorized as `ident`) unless a cluster of
    /// any project uses it: 400 `ClusterTemplateReferenced` naming `ident`.
    pub async fn delete_cluster_template(&self, ident: &str, t: &ClusterTemplate) -> Result<()> {
        let ident = ident.to_string();
        let uuid = t.uuid.clone();
        self.db()
            .in_tx(move |tx| {
                let (ident, uuid) = (ident.clone(), uuid.clone());
                Box::pin(async move {
                    if tx.q().cluster_template_in_use(&uuid).await? {
                        return Err(MagnumError::cluster_template_referenced(&ident).into());
                    }
                    lookup::found(
                        Kind::ClusterTemplate,
                        &ident,
                        tx.q().delete_cluster_template(&uuid).await,
                    )
                })
            })
            .await
    }

    /// `[cluster_template]` network driver rules: the default when unset,
    /// then the supported list, then the allowed list (unless it holds
    /// `all`). Returns the driver in effect.
    fn check_network_driver(&self, driver: &str) -> Result<String, MagnumError> {
        let s = self.settings();
        let driver = if driver.is_empty() {
            s.kubernetes_default_network_driver.as_str()
        } else {
            driver
        };
        if !SUPPORTED_NETWORK_DRIVERS.contains(&driver) {
            return Err(MagnumError::network_driver_not_supported(
                driver,
                SUPPORTED_NETWORK_DRIVERS,
            ));
        }
        let allowed = &s.kubernetes_allowed_network_drivers;
        if !allowed.iter().any(|a| a == "all" || a == driver) {
            let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
            return Err(MagnumError::network_driver_not_allowed(driver, &allowed));
        }
        Ok(driver.to_string())
    }

    /// `attr_validator.validate_image`: the image exists, is unique and has
    /// an `os_distro`; a template without image looks up `None`.
    async fn validate_image(&self, ctx: &RequestContext, image: Option<&str>) -> Result<Image> {
        match image {
            Some(i) => Ok(self.lookup().validate_image(ctx, i).await?),
            None => Err(MagnumError::os_distro_field_not_found("None").into()),
        }
    }

    /// `attr_validator.validate_os_resources` for a template: the image,
    /// the flavors, the external and fixed networks and the fixed subnet
    /// that are set. Keypairs are not checked, as in Magnum.
    async fn validate_os_resources(&self, ctx: &RequestContext, t: &ClusterTemplate) -> Result<()> {
        let l = self.lookup();
        if let Some(i) = t.image_id.as_deref() {
            l.validate_image(ctx, i).await?;
        }
        for f in [t.flavor_id.as_deref(), t.master_flavor_id.as_deref()]
            .into_iter()
            .flatten()
        {
            l.flavor(ctx, f).await?;
        }
        if let Some(n) = t.external_network_id.as_deref() {
            l.external_network(ctx, n).await?;
        }
        if let Some(n) = t.fixed_network.as_deref() {
            l.fixed_network(ctx, n).await?;
        }
        if let Some(s) = t.fixed_subnet.as_deref() {
            l.fixed_subnet(ctx, s).await?;
        }
        Ok(())
    }

    /// `attr_validator.validate_flavor_root_volume_size`: with no boot
    /// volume, the flavor must exist and have a root disk.
    async fn validate_flavor_root_volume(
        &self,
        ctx: &RequestContext,
        flavor: Option<&str>,
        boot_volume_size: i64,
    ) -> Result<()> {
        if boot_volume_size > 0 {
            return Ok(());
        }
        let Some(flavor) = flavor else {
            return Err(MagnumError::flavor_not_found("None").into());
        };
        if self.lookup().flavor(ctx, flavor).await?.disk == 0 {
            return Err(MagnumError::flavor_zero_root_volume_not_supported().into());
        }
        Ok(())
    }

    /// The conductor with another lookup (tests).
    #[cfg(any(test, feature = "testing"))]
    pub fn with_lookup(&self, lookup: std::sync::Arc<dyn crate::openstack::Lookup>) -> Self {
        let mut parts = (*self.parts).clone();
        parts.lookup = lookup;
        Conductor::new(parts)
    }

    /// The conductor with another driver host (tests).
    #[cfg(any(test, feature = "testing"))]
    pub fn with_drivers(&self, drivers: std::sync::Arc<driver_host::DriverHost>) -> Self {
        let mut parts = (*self.parts).clone();
        parts.template_drivers = drivers.clone();
        parts.drivers = drivers;
        Conductor::new(parts)
    }
}

/// Magnum's COE validator lookup: only `kubernetes`. `coe` is the
/// attribute's Python rendering (`Unset`, `None` or the value).
fn check_coe(coe: &str) -> Result<(), MagnumError> {
    if coe == "kubernetes" {
        Ok(())
    } else {
        Err(MagnumError::unsupported_coe(coe))
    }
}

fn check_server_type(st: Option<&str>) -> Result<(), MagnumError> {
    match st {
        Some(s) if SUPPORTED_SERVER_TYPES.contains(&s) => Ok(()),
        other => Err(MagnumError::server_type_not_supported(
            other.unwrap_or("None"),
            SUPPORTED_SERVER_TYPES,
        )),
    }
}

fn check_volume_driver(driver: Option<&str>) -> Result<(), MagnumError> {
    match driver {
        Some(d) if !d.is_empty() && !SUPPORTED_VOLUME_DRIVERS.contains(&d) => Err(
            MagnumError::volume_driver_not_supported(d, SUPPORTED_VOLUME_DRIVERS),
        ),
        _ => Ok(()),
    }
}

/// Whether `enforce_driver_supported` ignores an image lookup error:
/// everything but not found and forbidden.
fn image_error_swallowed(e: &LookupError) -> bool {
    !matches!(e, LookupError::Client(m) if m.is(&catalogue::IMAGE_NOT_FOUND) || m.is(&catalogue::IMAGE_NOT_AUTHORIZED))
}

/// The `boot_volume_size` label as an integer, else the default.
fn boot_volume_size(labels: &StringMap) -> Result<i64, MagnumError> {
    match labels.get("boot_volume_size") {
        None => Ok(DEFAULT_BOOT_VOLUME_SIZE),
        Some(v) => python::parse_int(v)
            .ok()
            .and_then(|n| n.to_i64())
            .ok_or_else(MagnumError::boot_volume_size_not_integer),
    }
}

/// The first halves of generated template names.
const GREEK_LETTERS: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega",
];

/// Magnum's generated name: `<greek letter>-<1..24>-template`.
fn generate_template_name() -> String {
    let b = uuid::Uuid::new_v4().into_bytes();
    format!(
        "{}-{}-template",
        GREEK_LETTERS[usize::from(b[0]) % GREEK_LETTERS.len()],
        usize::from(b[1]) % 24 + 1
    )
}

/// The attribute dictionary of a template as Magnum's `as_dict()` has it:
/// every object field in field order, NULL as `None`, labels as a dict. It
/// is the document a PATCH is applied to.
pub fn template_doc(t: &ClusterTemplate) -> Dict {
    fn s(v: &Option<String>) -> PyValue {
        v.as_deref().map_or(PyValue::None, PyValue::from)
    }
    fn i(v: Option<i32>) -> PyValue {
        v.map_or(PyValue::None, |n| PyValue::from(i64::from(n)))
    }
    fn b(v: Option<bool>) -> PyValue {
        v.map_or(PyValue::None, PyValue::from)
    }
    let labels: Dict = t
        .labels
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), PyValue::from(v.as_str())))
        .collect();
    [
        ("id", PyValue::from(t.id)),
        ("uuid", PyValue::from(t.uuid.as_str())),
        ("project_id", PyValue::from(t.project_id.as_str())),
        ("user_id", PyValue::from(t.user_id.as_str())),
        ("name", PyValue::from(t.name.as_str())),
        ("image_id", s(&t.image_id)),
        ("flavor_id", s(&t.flavor_id)),
        ("master_flavor_id", s(&t.master_flavor_id)),
        ("keypair_id", s(&t.keypair_id)),
        ("dns_nameserver", s(&t.dns_nameserver)),
        ("external_network_id", s(&t.external_network_id)),
        ("fixed_network", s(&t.fixed_network)),
        ("fixed_subnet", s(&t.fixed_subnet)),
        ("network_driver", s(&t.network_driver)),
        ("volume_driver", s(&t.volume_driver)),
        ("apiserver_port", i(t.apiserver_port)),
        ("docker_volume_size", i(t.docker_volume_size)),
        ("docker_storage_driver", s(&t.docker_storage_driver)),
        ("cluster_distro", s(&t.cluster_distro)),
        ("coe", s(&t.coe)),
        ("http_proxy", s(&t.http_proxy)),
        ("https_proxy", s(&t.https_proxy)),
        ("no_proxy", s(&t.no_proxy)),
        ("registry_enabled", b(t.registry_enabled)),
        ("labels", PyValue::Dict(labels)),
        ("tls_disabled", b(t.tls_disabled)),
        ("public", b(t.public)),
        ("server_type", s(&t.server_type)),
        ("insecure_registry", s(&t.insecure_registry)),
        ("master_lb_enabled", b(t.master_lb_enabled)),
        ("floating_ip_enabled", b(t.floating_ip_enabled)),
        ("hidden", b(t.hidden)),
        ("tags", s(&t.tags)),
        ("driver", s(&t.driver)),
        ("created_at", PyValue::from(isoformat(t.created_at))),
        (
            "updated_at",
            t.updated_at
                .map_or(PyValue::None, |u| PyValue::from(isoformat(u))),
        ),
    ]
    .into_iter()
    .collect()
}

/// A time as the object's `as_dict()` shows it to a patch.
fn isoformat(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.f+00:00").to_string()
}

/// The policy target of a template: its attribute dictionary
/// ([`template_doc`]) as JSON.
pub fn template_target(t: &ClusterTemplate) -> Target {
    let mut out = Target::new();
    for (k, v) in template_doc(t).iter() {
        if let (Some(k), Ok(v)) = (k.as_str(), v.to_json()) {
            out.insert(k.to_string(), v);
        }
    }
    out
}

/// The field coercion of the template object Magnum's PATCH decorators
/// build from the patched values (oslo.versionedobjects), before any other
/// check: the `coe` enum, the integer fields given as strings, and the
/// labels dict of strings. Its failures are Magnum's unhandled errors
/// (answered 400 with their text, see `MagnumError::server_error`).
fn coerce_object(doc: &Dict) -> Result<(), MagnumError> {
    if let Some(v) = doc.get("coe")
        && !v.is_none()
        && v.as_str() != Some("kubernetes")
    {
        return Err(MagnumError::object_field_value_invalid(v));
    }
    for f in ["apiserver_port", "docker_volume_size"] {
        if let Some(s) = doc.get(f).and_then(PyValue::as_str)
            && python::parse_int(s).is_err()
        {
            return Err(MagnumError::object_field_int_literal(s));
        }
    }
    let Some(labels) = doc.get("labels").filter(|v| !v.is_none()) else {
        return Ok(());
    };
    let Some(d) = labels.as_dict() else {
        return Err(MagnumError::object_field_dict_required("labels", labels));
    };
    for (k, v) in d.iter() {
        let key = python::str_of(k);
        match v {
            PyValue::Str(_) | PyValue::Int(_) | PyValue::Float(_) | PyValue::Bool(_) => {}
            PyValue::None => return Err(MagnumError::label_value_none(&key)),
            other => {
                return Err(MagnumError::object_field_string_required(
                    "labels", &key, other,
                ));
            }
        }
    }
    Ok(())
}

/// The API-visible columns whose value differs (labels: NULL and `{}` are
/// the same, the column reads back as `{}`).
fn changed_columns(old: &ClusterTemplate, new: &ClusterTemplate) -> Vec<String> {
    let labels = |t: &ClusterTemplate| t.labels.clone().unwrap_or_default();
    let cols: [(&str, bool); 30] = [
        ("name", old.name != new.name),
        ("image_id", old.image_id != new.image_id),
        ("flavor_id", old.flavor_id != new.flavor_id),
        (
            "master_flavor_id",
            old.master_flavor_id != new.master_flavor_id,
        ),
        ("keypair_id", old.keypair_id != new.keypair_id),
        ("dns_nameserver", old.dns_nameserver != new.dns_nameserver),
        (
            "external_network_id",
            old.external_network_id != new.external_network_id,
        ),
        ("fixed_network", old.fixed_network != new.fixed_network),
        ("fixed_subnet", old.fixed_subnet != new.fixed_subnet),
        ("network_driver", old.network_driver != new.network_driver),
        ("volume_driver", old.volume_driver != new.volume_driver),
        ("apiserver_port", old.apiserver_port != new.apiserver_port),
        (
            "docker_volume_size",
            old.docker_volume_size != new.docker_volume_size,
        ),
        (
            "docker_storage_driver",
            old.docker_storage_driver != new.docker_storage_driver,
        ),
        ("cluster_distro", old.cluster_distro != new.cluster_distro),
        ("coe", old.coe != new.coe),
        ("http_proxy", old.http_proxy != new.http_proxy),
        ("https_proxy", old.https_proxy != new.https_proxy),
        ("no_proxy", old.no_proxy != new.no_proxy),
        (
            "registry_enabled",
            old.registry_enabled != new.registry_enabled,
        ),
        ("labels", labels(old) != labels(new)),
        ("tls_disabled", old.tls_disabled != new.tls_disabled),
        ("public", old.public != new.public),
        ("server_type", old.server_type != new.server_type),
        (
            "insecure_registry",
            old.insecure_registry != new.insecure_registry,
        ),
        (
            "master_lb_enabled",
            old.master_lb_enabled != new.master_lb_enabled,
        ),
        (
            "floating_ip_enabled",
            old.floating_ip_enabled != new.floating_ip_enabled,
        ),
        ("hidden", old.hidden != new.hidden),
        ("tags", old.tags != new.tags),
        ("driver", old.driver != new.driver),
    ];
    cols.into_iter()
        .filter(|(_, differs)| *differs)
        .map(|(c, _)| c.to_string())
        .collect()
}

/// Magnum's exception to the in-use rule (spec `api/patch.md` §4): exactly
/// one change, which is `public` set to true, `hidden`, or a non-null
/// `tags`; or exactly the name.
fn publishing_only(changed: &[String], new: &ClusterTemplate) -> bool {
    match changed {
        [c] => match c.as_str() {
            "name" | "hidden" => true,
            "public" => new.public == Some(true),
            "tags" => new.tags.is_some(),
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests;
