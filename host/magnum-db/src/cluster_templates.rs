//! `cluster_template` (formerly `baymodel`): CRUD with Magnum's visibility
//! rules (own, public, hidden), lookups and the in-use check.

pub use magnum_domain::query::TemplateScope;
use std::collections::HashMap;

use magnum_domain::models::ClusterTemplate;

use super::Result;
use super::columns::table;
use super::queries::{Columns, Cond, ListOptions, Queries, default_bool, scope_condition};

table! {
    /// The `cluster_template` table.
    static TABLE: ClusterTemplate = "cluster_template", marker "uuid" {
        created_at: time,
        updated_at: opt_time,
        uuid: string,
        name: string,
        flavor_id: text,
        keypair_id: text,
        image_id: text,
        external_network_id: text,
        dns_nameserver: text,
        apiserver_port: int,
        project_id: string,
        user_id: string,
        docker_volume_size: int,
        fixed_network: text,
        master_flavor_id: text,
        cluster_distro: text,
        coe: text,
        http_proxy: text,
        https_proxy: text,
        no_proxy: text,
        registry_enabled: bool,
        network_driver: text,
        labels: json_map,
        tls_disabled: bool,
        public: bool,
        server_type: text,
        volume_driver: text,
        insecure_registry: text,
        docker_storage_driver: text,
        master_lb_enabled: bool,
        fixed_subnet: text,
        floating_ip_enabled: bool,
        hidden: bool,
        tags: text,
        driver: text,
    }
}

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
        self.get_by(&TABLE, template_cond(scope)?, "id", id).await
    }

    /// The visible template with `uuid`.
    pub async fn get_cluster_template_by_uuid(
        &mut self,
        uuid: &str,
        scope: &TemplateScope,
    ) -> Result<ClusterTemplate> {
        self.get_by(&TABLE, template_cond(scope)?, "uuid", uuid)
            .await
    }

    /// Every visible template whose name matches (case-insensitively, as on
    /// MariaDB), by id; more than one is a 409 for the caller.
    pub async fn get_cluster_templates_by_name(
        &mut self,
        name: &str,
        scope: &TemplateScope,
    ) -> Result<Vec<ClusterTemplate>> {
        self.all_named(&TABLE, template_cond(scope)?, name).await
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
        c.add_in("uuid", uuids);
        let rows = self.all(&TABLE, c, "id ASC", None).await?;
        Ok(rows.into_iter().map(|t| (t.uuid.clone(), t)).collect())
    }

    /// Lists the visible templates with Magnum's pagination.
    pub async fn list_cluster_templates(
        &mut self,
        scope: &TemplateScope,
        o: &ListOptions,
    ) -> Result<Vec<ClusterTemplate>> {
        self.list(&TABLE, Columns::All, template_cond(scope)?, o)
            .await
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
        self.delete_by("cluster_template", "uuid", uuid).await
    }

    /// Whether any cluster (any project, any status) references the
    /// template `uuid`.
    pub async fn cluster_template_in_use(&mut self, uuid: &str) -> Result<bool> {
        let c = Cond::eq("cluster_template_id", uuid);
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
