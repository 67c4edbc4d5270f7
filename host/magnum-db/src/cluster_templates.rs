//! `cluster_template` (formerly `baymodel`): CRUD with Magnum's visibility
//! rules (own, public, hidden), lookups and the in-use check.

pub use magnum_domain::query::TemplateScope;
use std::collections::HashMap;

use magnum_domain::models::ClusterTemplate;

use super::Result;
use super::columns::{self as c, Col, Reader, col};
use super::exec::{Arg, Kind};
use super::queries::{Cond, ListOptions, Queries, Table, default_bool, in_list, scope_condition};

const COLS: &[Col] = &[
    col("created_at", Kind::Time),
    col("updated_at", Kind::Time),
    col("uuid", Kind::Text),
    col("name", Kind::Text),
    col("flavor_id", Kind::Text),
    col("keypair_id", Kind::Text),
    col("image_id", Kind::Text),
    col("external_network_id", Kind::Text),
    col("dns_nameserver", Kind::Text),
    col("apiserver_port", Kind::Int),
    col("project_id", Kind::Text),
    col("user_id", Kind::Text),
    col("docker_volume_size", Kind::Int),
    col("fixed_network", Kind::Text),
    col("master_flavor_id", Kind::Text),
    col("cluster_distro", Kind::Text),
    col("coe", Kind::Text),
    col("http_proxy", Kind::Text),
    col("https_proxy", Kind::Text),
    col("no_proxy", Kind::Text),
    col("registry_enabled", Kind::Bool),
    col("network_driver", Kind::Text),
    col("labels", Kind::Text),
    col("tls_disabled", Kind::Bool),
    col("public", Kind::Bool),
    col("server_type", Kind::Text),
    col("volume_driver", Kind::Text),
    col("insecure_registry", Kind::Text),
    col("docker_storage_driver", Kind::Text),
    col("master_lb_enabled", Kind::Bool),
    col("fixed_subnet", Kind::Text),
    col("floating_ip_enabled", Kind::Bool),
    col("hidden", Kind::Bool),
    col("tags", Kind::Text),
    col("driver", Kind::Text),
];

fn read(r: &mut Reader) -> Result<ClusterTemplate> {
    Ok(ClusterTemplate {
        id: r.id()?,
        created_at: r.time()?,
        updated_at: r.opt_time()?,
        uuid: r.string()?,
        name: r.string()?,
        flavor_id: r.text()?,
        keypair_id: r.text()?,
        image_id: r.text()?,
        external_network_id: r.text()?,
        dns_nameserver: r.text()?,
        apiserver_port: r.int()?,
        project_id: r.string()?,
        user_id: r.string()?,
        docker_volume_size: r.int()?,
        fixed_network: r.text()?,
        master_flavor_id: r.text()?,
        cluster_distro: r.text()?,
        coe: r.text()?,
        http_proxy: r.text()?,
        https_proxy: r.text()?,
        no_proxy: r.text()?,
        registry_enabled: r.bool()?,
        network_driver: r.text()?,
        labels: r.json_map()?,
        tls_disabled: r.bool()?,
        public: r.bool()?,
        server_type: r.text()?,
        volume_driver: r.text()?,
        insecure_registry: r.text()?,
        docker_storage_driver: r.text()?,
        master_lb_enabled: r.bool()?,
        fixed_subnet: r.text()?,
        floating_ip_enabled: r.bool()?,
        hidden: r.bool()?,
        tags: r.text()?,
        driver: r.text()?,
    })
}

fn write(v: &ClusterTemplate) -> Vec<Arg> {
    vec![
        c::time(v.created_at),
        c::opt_time(v.updated_at),
        c::string(&v.uuid),
        c::string(&v.name),
        c::text(&v.flavor_id),
        c::text(&v.keypair_id),
        c::text(&v.image_id),
        c::text(&v.external_network_id),
        c::text(&v.dns_nameserver),
        c::int(v.apiserver_port),
        c::string(&v.project_id),
        c::string(&v.user_id),
        c::int(v.docker_volume_size),
        c::text(&v.fixed_network),
        c::text(&v.master_flavor_id),
        c::text(&v.cluster_distro),
        c::text(&v.coe),
        c::text(&v.http_proxy),
        c::text(&v.https_proxy),
        c::text(&v.no_proxy),
        c::bool(v.registry_enabled),
        c::text(&v.network_driver),
        c::json_map(&v.labels),
        c::bool(v.tls_disabled),
        c::bool(v.public),
        c::text(&v.server_type),
        c::text(&v.volume_driver),
        c::text(&v.insecure_registry),
        c::text(&v.docker_storage_driver),
        c::bool(v.master_lb_enabled),
        c::text(&v.fixed_subnet),
        c::bool(v.floating_ip_enabled),
        c::bool(v.hidden),
        c::text(&v.tags),
        c::text(&v.driver),
    ]
}

static TABLE: Table<ClusterTemplate> = Table {
    name: "cluster_template",
    cols: COLS,
    marker_col: "uuid",
    read,
    write,
    id: |v| &mut v.id,
    created_at: |v| &mut v.created_at,
    updated_at: |v| &mut v.updated_at,
};

/// The condition of the templates `scope` shows.
fn template_cond(scope: &TemplateScope) -> Result<Cond> {
    let mut c = Cond::default();
    let Some((own, args)) = scope_condition(&scope.scope, true)? else {
        return Ok(c);
    };
    let public = if scope.public_hidden {
        "public = TRUE"
    } else {
        "public = TRUE AND hidden = FALSE"
    };
    c.add(format!("{own} OR ({public})"), args);
    Ok(c)
}

impl Queries<'_> {
    /// The visible template with the database id.
    pub async fn get_cluster_template_by_id(
        &mut self,
        id: i64,
        scope: &TemplateScope,
    ) -> Result<ClusterTemplate> {
        let mut c = template_cond(scope)?;
        c.add("id = ?", [Arg::Int(id)]);
        self.get_one(&TABLE, c).await
    }

    /// The visible template with `uuid`.
    pub async fn get_cluster_template_by_uuid(
        &mut self,
        uuid: &str,
        scope: &TemplateScope,
    ) -> Result<ClusterTemplate> {
        let mut c = template_cond(scope)?;
        c.add("uuid = ?", [Arg::from(uuid)]);
        self.get_one(&TABLE, c).await
    }

    /// Every visible template whose name matches (case-insensitively, as on
    /// MariaDB), by id; more than one is a 409 for the caller.
    pub async fn get_cluster_templates_by_name(
        &mut self,
        name: &str,
        scope: &TemplateScope,
    ) -> Result<Vec<ClusterTemplate>> {
        let mut c = template_cond(scope)?;
        c.add(
            (self.dialect().sql().name_equals)("name"),
            [Arg::from(name)],
        );
        self.all(&TABLE, c, "id ASC", None).await
    }

    /// The visible templates among `uuids` in one query, by uuid (the
    /// templates of a page of clusters).
    pub async fn get_cluster_templates_by_uuids(
        &mut self,
        uuids: &[String],
        scope: &TemplateScope,
    ) -> Result<HashMap<String, ClusterTemplate>> {
        if uuids.is_empty() {
            return Ok(HashMap::new());
        }
        let mut c = template_cond(scope)?;
        let (part, args) = in_list("uuid", uuids);
        c.add(part, args);
        let rows = self.all(&TABLE, c, "id ASC", None).await?;
        Ok(rows.into_iter().map(|t| (t.uuid.clone(), t)).collect())
    }

    /// Lists the visible templates with Magnum's pagination.
    pub async fn list_cluster_templates(
        &mut self,
        scope: &TemplateScope,
        o: &ListOptions,
    ) -> Result<Vec<ClusterTemplate>> {
        let c = template_cond(scope)?;
        self.list(&TABLE, &TABLE.all(), c, o).await
    }

    /// Inserts `v` with Magnum's client-side defaults (`registry_enabled`,
    /// `tls_disabled`, `public`, `master_lb_enabled`, `hidden` false;
    /// `floating_ip_enabled` true; `server_type` `vm`; `labels` `{}`) and sets
    /// its id and `created_at`. A duplicate uuid →
    /// [`super::Error::Duplicate`].
    pub async fn create_cluster_template(&mut self, v: &mut ClusterTemplate) -> Result<()> {
        default_bool(&mut v.registry_enabled, false);
        default_bool(&mut v.tls_disabled, false);
        default_bool(&mut v.public, false);
        default_bool(&mut v.master_lb_enabled, false);
        default_bool(&mut v.floating_ip_enabled, true);
        default_bool(&mut v.hidden, false);
        v.server_type.get_or_insert_with(|| "vm".to_string());
        v.labels.get_or_insert_with(Default::default);
        self.insert(&TABLE, v).await
    }

    /// Writes the named columns of `v` and sets `updated_at`.
    pub async fn update_cluster_template(
        &mut self,
        v: &mut ClusterTemplate,
        cols: &[&str],
    ) -> Result<()> {
        self.update(&TABLE, v, cols).await
    }

    /// Deletes the template with `uuid`.
    pub async fn delete_cluster_template(&mut self, uuid: &str) -> Result<()> {
        let mut c = Cond::default();
        c.add("uuid = ?", [Arg::from(uuid)]);
        self.delete_one("cluster_template", c).await
    }

    /// Whether any cluster (any project, any status) references the
    /// template `uuid`.
    pub async fn cluster_template_in_use(&mut self, uuid: &str) -> Result<bool> {
        let mut c = Cond::default();
        c.add("cluster_template_id = ?", [Arg::from(uuid)]);
        Ok(self.count("cluster", c).await? > 0)
    }
}

#[cfg(test)]
mod tests {
    use magnum_domain::models::ClusterTemplate;

    use crate::testing::{Check, dialect_tests, migrated, new_cluster, new_template, string_map};
    use crate::{Dialect, Error, ListOptions, Scope, TemplateScope};

    dialect_tests!(cluster_templates);

    fn names(ts: &[ClusterTemplate]) -> Vec<&str> {
        ts.iter().map(|t| t.name.as_str()).collect()
    }

    /// Go `TestClusterTemplates`.
    async fn cluster_templates(d: Dialect) {
        let db = migrated(d).await;
        let mut own = new_template(1, "p1", false, false);
        let mut own_hidden = new_template(2, "p1", false, true);
        let mut public = new_template(3, "admin", true, false);
        let mut public_hidden = new_template(4, "admin", true, true);
        let mut foreign = new_template(5, "p2", false, false);
        for t in [
            &mut own,
            &mut own_hidden,
            &mut public,
            &mut public_hidden,
            &mut foreign,
        ] {
            db.q().create_cluster_template(t).await.check("create");
        }
        assert_eq!(own.server_type.as_deref(), Some("vm"));
        assert_eq!(
            (own.floating_ip_enabled, own.tls_disabled),
            (Some(true), Some(false))
        );
        assert_eq!(
            (own.registry_enabled, own.master_lb_enabled),
            (Some(false), Some(false))
        );
        assert!(
            own.labels.is_some(),
            "client-side defaults not applied: {own:?}"
        );
        let p1 = TemplateScope::new(Scope::project("p1"));
        let got = db
            .q()
            .get_cluster_template_by_uuid(&own.uuid, &p1)
            .await
            .check("get");
        assert_eq!(got, own, "read back differs");

        for (name, scope, want) in [
            (
                "member: own and public-not-hidden",
                p1.clone(),
                vec!["tmpl-1", "tmpl-2", "tmpl-3"],
            ),
            (
                "admin without all-projects: also public hidden",
                TemplateScope {
                    scope: Scope::project("p1"),
                    public_hidden: true,
                },
                vec!["tmpl-1", "tmpl-2", "tmpl-3", "tmpl-4"],
            ),
            (
                "admin with all-projects",
                TemplateScope::new(Scope::ALL_PROJECTS),
                vec!["tmpl-1", "tmpl-2", "tmpl-3", "tmpl-4", "tmpl-5"],
            ),
            (
                "no project: by user",
                TemplateScope::new(Scope::user("user-p2")),
                vec!["tmpl-3", "tmpl-5"],
            ),
        ] {
            let rows = db
                .q()
                .list_cluster_templates(&scope, &ListOptions::default())
                .await
                .check(name);
            assert_eq!(names(&rows), want, "{name}");
        }
        let r = db
            .q()
            .get_cluster_template_by_uuid(&foreign.uuid, &p1)
            .await;
        assert!(
            matches!(r, Err(Error::NotFound(_))),
            "foreign private template: {r:?}"
        );
        let p2 = TemplateScope::new(Scope::project("p2"));
        let got = db
            .q()
            .get_cluster_template_by_id(public.id, &p2)
            .await
            .check("public by id");
        assert_eq!(got.uuid, public.uuid);

        // The templates of a page of clusters, in one query.
        let wanted = [
            own.uuid.clone(),
            public.uuid.clone(),
            foreign.uuid.clone(),
            "missing".into(),
        ];
        let m = db
            .q()
            .get_cluster_templates_by_uuids(&wanted, &p1)
            .await
            .check("by uuids");
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort();
        assert_eq!(keys, [&own.uuid, &public.uuid]);
        assert!(
            db.q()
                .get_cluster_templates_by_uuids(&[], &p1)
                .await
                .check("none")
                .is_empty()
        );

        assert!(
            !db.q()
                .cluster_template_in_use(&own.uuid)
                .await
                .check("in use")
        );
        let mut c = new_cluster(1, "p1");
        c.cluster_template_id = own.uuid.clone();
        db.q().create_cluster(&mut c).await.check("cluster");
        assert!(
            db.q()
                .cluster_template_in_use(&own.uuid)
                .await
                .check("in use")
        );

        own.labels = Some(string_map(&[("kube_tag", "v1.31.0")]));
        own.public = Some(true);
        db.q()
            .update_cluster_template(&mut own, &["labels", "public"])
            .await
            .check("update");
        let all = TemplateScope::new(Scope::ALL_PROJECTS);
        let got = db
            .q()
            .get_cluster_template_by_uuid(&own.uuid, &all)
            .await
            .check("get");
        assert_eq!(got.labels, own.labels);
        assert_eq!(got.public, Some(true));
        assert!(got.updated_at.is_some());
        db.q()
            .delete_cluster_template(&foreign.uuid)
            .await
            .check("delete");
        let r = db.q().delete_cluster_template(&foreign.uuid).await;
        assert!(matches!(r, Err(Error::NotFound(_))), "second delete: {r:?}");
        let by_labels = ListOptions {
            sort_key: Some("labels".into()),
            sort_dir: Some("desc".into()),
            ..ListOptions::default()
        };
        db.q()
            .list_cluster_templates(&all, &by_labels)
            .await
            .check("sort by a JSON column");
    }
}
