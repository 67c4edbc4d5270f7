//! `cluster` (formerly `bay`): CRUD, scoped lookups, lists, counts and
//! stats, and the cascade delete with the cluster's nodegroups.

use magnum_domain::Status;
use magnum_domain::models::Cluster;

use super::Result;
use super::columns::{self as c, table};
use super::exec::{Arg, Kind};
use super::queries::{Columns, Cond, ListOptions, Queries, Scope, default_bool, quote};

table! {
    /// The `cluster` table.
    pub(crate) static TABLE: Cluster = "cluster", marker "uuid" {
        created_at: time,
        updated_at: opt_time,
        uuid: string,
        name: string,
        cluster_template_id: string,
        api_address: text,
        stack_id: text,
        project_id: string,
        user_id: string,
        status: status,
        discovery_url: text,
        status_reason: text,
        ca_cert_ref: text,
        magnum_cert_ref: text,
        create_timeout: int,
        coe_version: text,
        container_version: text,
        keypair: text,
        docker_volume_size: int,
        labels: json_map,
        master_flavor_id: text,
        flavor_id: text,
        health_status: text,
        health_status_reason: json_map,
        fixed_network: text,
        fixed_subnet: text,
        floating_ip_enabled: bool,
        master_lb_enabled: bool,
        etcd_ca_cert_ref: text,
        front_proxy_ca_cert_ref: text,
    }
}

/// Selects clusters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterFilter {
    /// The rows the caller may see.
    pub scope: Scope,
    /// Keeps clusters whose status is one of these (empty: any).
    pub statuses: Vec<Status>,
    /// Keeps clusters of this template uuid.
    pub cluster_template_id: Option<String>,
    /// Keeps the clusters with one of these uuids (empty: any).
    pub uuids: Vec<String>,
}

impl ClusterFilter {
    /// Every cluster the scope sees.
    pub fn scope(scope: Scope) -> ClusterFilter {
        ClusterFilter {
            scope,
            ..ClusterFilter::default()
        }
    }

    pub(crate) fn cond(&self) -> Result<Cond> {
        let mut c = Cond::of_scope(&self.scope, true)?;
        if !self.statuses.is_empty() {
            let names: Vec<&str> = self.statuses.iter().map(|s| s.as_str()).collect();
            c.add_in("status", &names);
        }
        if let Some(t) = &self.cluster_template_id {
            c.add_eq("cluster_template_id", t);
        }
        if !self.uuids.is_empty() {
            c.add_in("uuid", &self.uuids);
        }
        Ok(c)
    }
}

impl Queries<'_> {
    /// The cluster with the database id.
    pub async fn get_cluster_by_id(&mut self, id: i64, scope: &Scope) -> Result<Cluster> {
        let c = ClusterFilter::scope(scope.clone()).cond()?;
        self.get_by(&TABLE, c, "id", id).await
    }

    /// The cluster with `uuid`.
    pub async fn get_cluster_by_uuid(&mut self, uuid: &str, scope: &Scope) -> Result<Cluster> {
        let c = ClusterFilter::scope(scope.clone()).cond()?;
        self.get_by(&TABLE, c, "uuid", uuid).await
    }

    /// Every cluster in scope whose name matches (case-insensitively and
    /// ignoring trailing spaces, as on MariaDB), by id; more than one is a
    /// 409 for the caller.
    pub async fn get_clusters_by_name(
        &mut self,
        name: &str,
        scope: &Scope,
    ) -> Result<Vec<Cluster>> {
        let c = ClusterFilter::scope(scope.clone()).cond()?;
        self.all_named(&TABLE, c, name).await
    }

    /// Lists clusters with Magnum's pagination.
    pub async fn list_clusters(
        &mut self,
        f: &ClusterFilter,
        o: &ListOptions,
    ) -> Result<Vec<Cluster>> {
        self.list(&TABLE, Columns::All, f.cond()?, o).await
    }

    /// Counts the clusters of the filter (quota: the caller's scope, every
    /// status).
    pub async fn count_clusters(&mut self, f: &ClusterFilter) -> Result<i64> {
        let c = f.cond()?;
        self.count("cluster", c).await
    }

    /// The number of clusters and the sum of `node_count` over the
    /// nodegroups (masters included) of one project, or of every project
    /// when `project_id` is `None` (`GET /v1/stats`).
    pub async fn cluster_stats(&mut self, project_id: Option<&str>) -> Result<(i64, i64)> {
        let mut c = Cond::default();
        if let Some(p) = project_id {
            c.add_eq("project_id", p);
        }
        let clusters = self.count("cluster", c.clone()).await?;
        let sum = (self.dialect().sql().sum)("node_count");
        let sql = format!("SELECT {sum} FROM {}{}", quote("nodegroup"), c.sql());
        let nodes = self.scalar("nodegroup", &sql, c.args).await?;
        Ok((clusters, nodes))
    }

    /// Inserts `v` with Magnum's client-side defaults (`floating_ip_enabled`
    /// true, `master_lb_enabled` false, `labels` and `health_status_reason`
    /// `{}`) and sets its id and `created_at`. A duplicate uuid →
    /// [`super::Error::Duplicate`].
    pub async fn create_cluster(&mut self, v: &mut Cluster) -> Result<()> {
        default_bool(&mut v.floating_ip_enabled, true);
        default_bool(&mut v.master_lb_enabled, false);
        v.labels.get_or_insert_with(Default::default);
        v.health_status_reason.get_or_insert_with(Default::default);
        self.insert(&TABLE, v).await
    }

    /// Writes the named columns of `v` and sets `updated_at`.
    pub async fn update_cluster(&mut self, v: &mut Cluster, cols: &[&str]) -> Result<()> {
        self.update(&TABLE, v, cols).await
    }

    /// Sets the status, `status_reason` and `updated_at` of the cluster
    /// with `uuid` in one statement (no read before it);
    /// [`super::Error::NotFound`] when there is no such cluster.
    pub async fn set_cluster_status(
        &mut self,
        uuid: &str,
        status: Status,
        reason: Option<&str>,
    ) -> Result<()> {
        let now = self.now();
        let sql = format!(
            "UPDATE {} SET {} = ?, {} = ?, {} = ? WHERE uuid = ?",
            quote("cluster"),
            quote("status"),
            quote("status_reason"),
            quote("updated_at")
        );
        let args = vec![
            Arg::from(status.as_str()),
            reason.map_or(Arg::Null(Kind::Text), Arg::from),
            Arg::Time(now),
            Arg::from(uuid),
        ];
        let done = self.write("update cluster".into(), &sql, args).await?;
        if done.rows_affected == 0 {
            return Err(super::Error::NotFound("update cluster".into()));
        }
        Ok(())
    }

    /// Sets the health of the cluster with `uuid` while its status is
    /// `status`, in one statement, and nothing else (not `updated_at`):
    /// whether a row was changed.
    pub async fn set_cluster_health(
        &mut self,
        uuid: &str,
        status: Status,
        health: Option<&str>,
        reason: &Option<magnum_domain::models::StringMap>,
    ) -> Result<bool> {
        let sql = format!(
            "UPDATE {} SET {} = ?, {} = ? WHERE uuid = ? AND {} = ?",
            quote("cluster"),
            quote("health_status"),
            quote("health_status_reason"),
            quote("status")
        );
        let args = vec![
            health.map_or(Arg::Null(Kind::Text), Arg::from),
            c::json_map(reason),
            Arg::from(uuid),
            Arg::from(status.as_str()),
        ];
        let done = self
            .write("update cluster health".into(), &sql, args)
            .await?;
        Ok(done.rows_affected > 0)
    }

    /// Deletes the cluster with `uuid` (its nodegroups stay; see
    /// [`Queries::delete_cluster_cascade`]).
    pub async fn delete_cluster(&mut self, uuid: &str) -> Result<()> {
        self.delete_by("cluster", "uuid", uuid).await
    }

    /// Deletes the clusters with these uuids and their nodegroups in two
    /// statements (none: nothing). Call it inside [`super::Db::in_tx`].
    pub async fn delete_clusters_cascade(&mut self, uuids: &[String]) -> Result<()> {
        if uuids.is_empty() {
            return Ok(());
        }
        let mut ng = Cond::default();
        ng.add_in("cluster_id", uuids);
        self.delete_where("nodegroup", ng).await?;
        let mut cl = Cond::default();
        cl.add_in("uuid", uuids);
        self.delete_where("cluster", cl).await?;
        Ok(())
    }

    /// Deletes the cluster with `uuid` and its nodegroups, as Magnum's
    /// `destroy_cluster` does. Call it inside [`super::Db::in_tx`] so both go
    /// together.
    pub async fn delete_cluster_cascade(&mut self, uuid: &str) -> Result<()> {
        self.delete_nodegroups_of_cluster(uuid).await?;
        self.delete_cluster(uuid).await
    }
}

#[cfg(test)]
mod tests {
    use magnum_domain::Status;
    use magnum_domain::models::{Cluster, Federation};

    use crate::exec::{Arg, Kind};
    use crate::testing::{
        Check, dialect_tests, fresh_clocked, migrated, new_cluster, new_nodegroup, new_template,
        string_map, ticking_clock,
    };
    use crate::{
        ClusterFilter, Dialect, Error, ListOptions, NodeGroupFilter, Scope, TemplateScope,
        latest_version, upgrade,
    };

    dialect_tests!(
        cluster_crud,
        name_lookup_ignores_case,
        cluster_list_filters_and_pagination,
        cluster_stats,
        set_cluster_status,
        awkward_strings_round_trip,
    );

    /// Go `TestClusterCRUD`.
    async fn cluster_crud(d: Dialect) {
        let db = fresh_clocked(d, ticking_clock()).await;
        upgrade(&db).await.check("upgrade");
        let mut c = new_cluster(1, "p1");
        c.name = "K8s-Prod-1".into();
        c.health_status_reason = Some(string_map(&[("api", "ok"), ("node-1.Ready", "True")]));
        db.q().create_cluster(&mut c).await.check("create");
        assert!(
            c.id != 0 && c.created_at != Default::default() && c.updated_at.is_none(),
            "{c:?}"
        );
        assert_eq!(
            (c.floating_ip_enabled, c.master_lb_enabled),
            (Some(true), Some(false))
        );

        // The row is written as Magnum writes it.
        let created = if d == Dialect::Sqlite {
            // The raw text, not a parsed time.
            "CAST(created_at AS TEXT)"
        } else {
            "created_at"
        };
        let created_kind = if d == Dialect::Sqlite {
            Kind::Text
        } else {
            Kind::Time
        };
        let sql =
            format!("SELECT labels, health_status_reason, {created} FROM cluster WHERE id = ?");
        let mut r = db
            .q()
            .rows(
                "raw",
                &sql,
                vec![Arg::Int(c.id)],
                &[Kind::Text, Kind::Text, created_kind],
            )
            .await
            .check("raw row");
        assert_eq!(
            r.string().check("labels"),
            r#"{"boot_volume_size": "40", "kube_tag": "v1.30.4"}"#
        );
        assert_eq!(
            r.string().check("reason"),
            r#"{"api": "ok", "node-1.Ready": "True"}"#
        );
        // The clock ticked once per migration record, then for the create.
        let ticks = latest_version() + 1;
        let second = 7 + ticks;
        let stored = match d {
            Dialect::Sqlite => r.string().check("created_at"),
            _ => format!("{:?}", r.opt_time().check("created_at")),
        };
        let want = match d {
            Dialect::MySql => format!("Some(2026-11-30T01:48:{second:02})"),
            Dialect::Postgres => format!("Some(2026-11-30T01:48:{second:02}.123456)"),
            Dialect::Sqlite => format!("2026-11-30 01:48:{second:02}.123456"),
        };
        assert_eq!(stored, want);

        let p1 = Scope::project("p1");
        let got = db.q().get_cluster_by_uuid(&c.uuid, &p1).await.check("get");
        assert_eq!(got, c, "read back differs");
        let other = db
            .q()
            .get_cluster_by_uuid(&c.uuid, &Scope::project("p2"))
            .await;
        assert!(
            matches!(other, Err(Error::NotFound(_))),
            "other project's cluster: {other:?}"
        );
        let empty = db.q().get_cluster_by_uuid(&c.uuid, &Scope::default()).await;
        assert!(
            matches!(empty, Err(Error::EmptyScope)),
            "empty scope: {empty:?}"
        );
        let by_id = db
            .q()
            .get_cluster_by_id(c.id, &Scope::ALL_PROJECTS)
            .await
            .check("by id");
        assert_eq!(by_id.uuid, c.uuid);

        // Partial update: only the named columns and updated_at change.
        c.status = Some(Status::CreateComplete);
        c.name = "ignored because not listed".into();
        db.q()
            .update_cluster(&mut c, &["status"])
            .await
            .check("update");
        let got = db
            .q()
            .get_cluster_by_uuid(&c.uuid, &Scope::ALL_PROJECTS)
            .await
            .check("get");
        assert_eq!(got.status, Some(Status::CreateComplete));
        assert_eq!(got.name, "K8s-Prod-1");
        assert!(
            got.updated_at.is_some() && got.updated_at == c.updated_at,
            "{got:?} vs {c:?}"
        );
        let unknown = db.q().update_cluster(&mut c, &["no_such_column"]).await;
        assert!(
            matches!(unknown, Err(Error::UnknownColumn { .. })),
            "{unknown:?}"
        );
        let mut gone = c.clone();
        gone.id = 9999;
        let missing = db.q().update_cluster(&mut gone, &["status"]).await;
        assert!(
            matches!(missing, Err(Error::NotFound(_))),
            "update of a missing row: {missing:?}"
        );
        let mut dup = new_cluster(1, "p1");
        let dup = db.q().create_cluster(&mut dup).await;
        assert!(
            matches!(dup, Err(Error::Duplicate { .. })),
            "duplicate uuid: {dup:?}"
        );

        // Delete with its nodegroups, atomically.
        let mut ng = new_nodegroup(&c.uuid, "default-worker", "p1");
        db.q().create_nodegroup(&mut ng).await.check("nodegroup");
        let uuid = &c.uuid;
        db.in_tx(|tx| Box::pin(async move { tx.q().delete_cluster_cascade(uuid).await }))
            .await
            .check("cascade");
        let left = db
            .q()
            .count_nodegroups(&NodeGroupFilter::cluster(&c.uuid))
            .await
            .check("count");
        assert_eq!(left, 0, "nodegroups left after cascade");
        let again = db.q().delete_cluster(&c.uuid).await;
        assert!(
            matches!(again, Err(Error::NotFound(_))),
            "second delete: {again:?}"
        );
        // The batch cascade deletes several clusters and their nodegroups.
        let mut uuids = Vec::new();
        for i in 10..13 {
            let mut c = new_cluster(i, "p1");
            db.q().create_cluster(&mut c).await.check("create");
            let mut ng = new_nodegroup(&c.uuid, "default-worker", "p1");
            db.q().create_nodegroup(&mut ng).await.check("nodegroup");
            uuids.push(c.uuid);
        }
        let uuids = &uuids[..2];
        db.in_tx(|tx| Box::pin(async move { tx.q().delete_clusters_cascade(uuids).await }))
            .await
            .check("batch cascade");
        let all = ClusterFilter::scope(Scope::ALL_PROJECTS);
        assert_eq!(db.q().count_clusters(&all).await.check("count"), 1);
        db.q()
            .delete_clusters_cascade(&[])
            .await
            .check("empty batch");
    }

    /// Go `TestNameLookupIgnoresCase`: MariaDB's behaviour on every dialect,
    /// name matches ignore case and trailing spaces.
    async fn name_lookup_ignores_case(d: Dialect) {
        let db = migrated(d).await;
        let (mut a, mut b, mut other) = (
            new_cluster(1, "p1"),
            new_cluster(2, "p1"),
            new_cluster(3, "p2"),
        );
        a.name = "k8s-prod-1".into();
        b.name = "K8S-PROD-1".into();
        other.name = "k8s-prod-1".into();
        for c in [&mut a, &mut b, &mut other] {
            db.q().create_cluster(c).await.check("create");
        }
        for (name, scope, want) in [
            ("k8s-prod-1", Scope::project("p1"), 2),
            ("K8s-PROD-1", Scope::project("p1"), 2),
            ("k8s-prod-1 ", Scope::project("p1"), 2),
            ("k8s-prod-1", Scope::ALL_PROJECTS, 3),
            ("k8s-prod", Scope::project("p1"), 0),
            ("k8s-prod-1", Scope::project("p3"), 0),
        ] {
            let got = db
                .q()
                .get_clusters_by_name(name, &scope)
                .await
                .check("by name");
            assert_eq!(got.len(), want, "get_clusters_by_name({name:?}, {scope:?})");
        }
        let mut t = new_template(1, "p1", false, false);
        t.name = "Ubuntu-K8s".into();
        db.q()
            .create_cluster_template(&mut t)
            .await
            .check("template");
        let got = db
            .q()
            .get_cluster_templates_by_name("ubuntu-k8s", &TemplateScope::new(Scope::project("p1")))
            .await
            .check("template by name");
        assert_eq!(got.len(), 1);
        let mut f = Federation {
            uuid: "fed-1".into(),
            name: "Fed-EU".into(),
            project_id: "p1".into(),
            ..Federation::default()
        };
        db.q().create_federation(&mut f).await.check("federation");
        let got = db
            .q()
            .get_federations_by_name("fed-eu", &Scope::project("p1"))
            .await
            .check("federation by name");
        assert_eq!(got.len(), 1);
    }

    fn names(cs: &[Cluster]) -> Vec<String> {
        cs.iter()
            .map(|c| format!("{}#{}", c.name, c.uuid[24..].trim_start_matches('0')))
            .collect()
    }

    /// Go `TestClusterListFiltersAndPagination`.
    async fn cluster_list_filters_and_pagination(d: Dialect) {
        let db = migrated(d).await;
        // Seven clusters in p1 with names out of id order, some api_address
        // NULL, one in p2.
        let given = [
            "delta", "alpha", "echo", "bravo", "alpha", "golf", "charlie",
        ];
        for (i, n) in given.iter().enumerate() {
            let mut c = new_cluster(i as u32 + 1, "p1");
            c.name = n.to_string();
            if i % 3 != 0 {
                c.api_address = Some(format!("https://10.0.0.{}:6443", 9 - i));
            }
            if i == 2 {
                c.status = Some(Status::CreateFailed);
            }
            db.q().create_cluster(&mut c).await.check("create");
        }
        let mut o = new_cluster(100, "p2");
        db.q().create_cluster(&mut o).await.check("create");

        let p1 = ClusterFilter::scope(Scope::project("p1"));
        for (key, dir, want) in [
            (
                "",
                "",
                vec![
                    "delta#1",
                    "alpha#2",
                    "echo#3",
                    "bravo#4",
                    "alpha#5",
                    "golf#6",
                    "charlie#7",
                ],
            ),
            (
                "id",
                "desc",
                vec![
                    "charlie#7",
                    "golf#6",
                    "alpha#5",
                    "bravo#4",
                    "echo#3",
                    "alpha#2",
                    "delta#1",
                ],
            ),
            (
                "name",
                "asc",
                vec![
                    "alpha#2",
                    "alpha#5",
                    "bravo#4",
                    "charlie#7",
                    "delta#1",
                    "echo#3",
                    "golf#6",
                ],
            ),
            (
                "name",
                "desc",
                vec![
                    "golf#6",
                    "echo#3",
                    "delta#1",
                    "charlie#7",
                    "bravo#4",
                    "alpha#5",
                    "alpha#2",
                ],
            ),
            // NULLs sort first ascending (MariaDB), last descending.
            (
                "api_address",
                "asc",
                vec![
                    "delta#1",
                    "bravo#4",
                    "charlie#7",
                    "golf#6",
                    "alpha#5",
                    "echo#3",
                    "alpha#2",
                ],
            ),
            (
                "api_address",
                "desc",
                vec![
                    "alpha#2",
                    "echo#3",
                    "alpha#5",
                    "golf#6",
                    "charlie#7",
                    "bravo#4",
                    "delta#1",
                ],
            ),
        ] {
            let opts = |marker: Option<String>, limit: Option<u64>| ListOptions {
                marker,
                limit,
                sort_key: (!key.is_empty()).then(|| key.to_string()),
                sort_dir: (!dir.is_empty()).then(|| dir.to_string()),
            };
            let full = db
                .q()
                .list_clusters(&p1, &opts(None, None))
                .await
                .check("list");
            assert_eq!(names(&full), want, "full list by {key:?} {dir:?}");
            // Walking pages of two with markers gives the same order.
            let mut paged = Vec::new();
            let mut marker = None;
            for _ in 0..10 {
                let rows = db
                    .q()
                    .list_clusters(&p1, &opts(marker.clone(), Some(2)))
                    .await
                    .check("page");
                let n = rows.len();
                marker = rows.last().map(|c| c.uuid.clone());
                paged.extend(rows);
                if n < 2 {
                    break;
                }
            }
            assert_eq!(names(&paged), want, "paged list by {key:?} {dir:?}");
        }

        let all = ClusterFilter::scope(Scope::ALL_PROJECTS);
        let by = |key: &str| ListOptions {
            sort_key: Some(key.into()),
            ..ListOptions::default()
        };
        let r = db.q().list_clusters(&all, &by("node_count")).await;
        assert!(
            matches!(&r, Err(Error::InvalidSortKey(k)) if k == "node_count"),
            "{r:?}"
        );
        let r = db
            .q()
            .list_clusters(
                &all,
                &ListOptions {
                    sort_dir: Some("ASC".into()),
                    ..ListOptions::default()
                },
            )
            .await;
        assert!(matches!(r, Err(Error::InvalidSortDir(_))), "{r:?}");
        let r = db
            .q()
            .list_clusters(
                &all,
                &ListOptions {
                    marker: Some("no-such-uuid".into()),
                    ..ListOptions::default()
                },
            )
            .await;
        assert!(matches!(r, Err(Error::NotFound(_))), "{r:?}");

        for (name, f, want) in [
            ("all projects", ClusterFilter::scope(Scope::ALL_PROJECTS), 8),
            ("one project", ClusterFilter::scope(Scope::project("p1")), 7),
            (
                "by user when there is no project",
                ClusterFilter::scope(Scope::user("user-p2")),
                1,
            ),
            (
                "statuses",
                ClusterFilter {
                    statuses: vec![Status::CreateFailed, Status::DeleteFailed],
                    ..ClusterFilter::scope(Scope::ALL_PROJECTS)
                },
                1,
            ),
            (
                "template",
                ClusterFilter {
                    cluster_template_id: Some("tmpl-uuid".into()),
                    ..ClusterFilter::scope(Scope::ALL_PROJECTS)
                },
                8,
            ),
            (
                "uuids",
                ClusterFilter {
                    uuids: vec![
                        new_cluster(1, "").uuid,
                        new_cluster(100, "").uuid,
                        "none".into(),
                    ],
                    ..ClusterFilter::scope(Scope::ALL_PROJECTS)
                },
                2,
            ),
        ] {
            assert_eq!(
                db.q().count_clusters(&f).await.check(name),
                want,
                "count {name}"
            );
            let rows = db
                .q()
                .list_clusters(&f, &ListOptions::default())
                .await
                .check(name);
            assert_eq!(rows.len() as i64, want, "list {name}");
        }
    }

    /// Go `TestClusterStats`.
    async fn cluster_stats(d: Dialect) {
        let db = migrated(d).await;
        assert_eq!(
            db.q().cluster_stats(None).await.check("empty stats"),
            (0, 0)
        );
        for (i, p) in ["p1", "p1", "p2"].iter().enumerate() {
            let mut c = new_cluster(i as u32 + 1, p);
            db.q().create_cluster(&mut c).await.check("create");
            for (role, count) in [("master", 1), ("worker", 3)] {
                let mut ng = new_nodegroup(&c.uuid, &format!("default-{role}"), p);
                ng.role = Some(role.into());
                ng.node_count = Some(count);
                db.q().create_nodegroup(&mut ng).await.check("nodegroup");
            }
        }
        for (project, want) in [
            (Some("p1"), (2, 8)),
            (Some("p2"), (1, 4)),
            (None, (3, 12)),
            (Some("p9"), (0, 0)),
        ] {
            assert_eq!(
                db.q().cluster_stats(project).await.check("stats"),
                want,
                "{project:?}"
            );
        }
    }

    /// Go `TestSetClusterStatus`: one statement sets status, reason and
    /// updated_at; setting the same values again still finds the row; an
    /// unknown uuid is NotFound and writes nothing.
    async fn set_cluster_status(d: Dialect) {
        let db = migrated(d).await;
        let mut c = new_cluster(1, "p1");
        c.status_reason = Some("Stack CREATE completed successfully".into());
        db.q().create_cluster(&mut c).await.check("create");
        for _ in 0..2 {
            db.q()
                .set_cluster_status(&c.uuid, Status::DeleteInProgress, None)
                .await
                .check("set status");
        }
        let got = db
            .q()
            .get_cluster_by_uuid(&c.uuid, &Scope::ALL_PROJECTS)
            .await
            .check("get");
        assert_eq!(got.status, Some(Status::DeleteInProgress));
        assert_eq!(got.status_reason, None);
        assert!(got.updated_at.is_some());
        assert_eq!(
            (got.name, got.labels),
            (c.name.clone(), c.labels.clone()),
            "other columns changed"
        );
        let r = db
            .q()
            .set_cluster_status(
                "00000000-0000-4000-8000-999999999999",
                Status::DeleteInProgress,
                Some("x"),
            )
            .await;
        assert!(matches!(r, Err(Error::NotFound(_))), "unknown uuid: {r:?}");
    }

    /// Go `TestMySQLInterpolatedStatements` (its string half, on every
    /// dialect): awkward strings survive a write and a name lookup. The Go
    /// test also counted server-side prepares, which go-sql-driver avoided
    /// by interpolating; sqlx prepares each statement once per connection,
    /// which `prepared_statements_are_reused` checks on MariaDB.
    async fn awkward_strings_round_trip(d: Dialect) {
        let db = migrated(d).await;
        // PostgreSQL text cannot hold NUL.
        let nul = if d == Dialect::Postgres { "" } else { "\0 nul" };
        let awkward = format!(
            "it's a \"name\" with \\ back\\\\slashes, ? marks, -- dashes, /* c */, é, ✓, {nul}"
        );
        let mut c = new_cluster(1, "p'1");
        c.name = awkward.clone();
        c.labels = Some(string_map(&[(&awkward, &awkward)]));
        db.q().create_cluster(&mut c).await.check("create");
        let got = db
            .q()
            .get_clusters_by_name(&awkward, &Scope::project("p'1"))
            .await
            .check("by name");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].name, awkward);
        assert_eq!(
            got[0].labels.as_ref().and_then(|l| l.get(&awkward)),
            Some(&awkward)
        );
    }

    /// sqlx prepares a statement once per connection and reuses it (the
    /// per-query cost the Go driver saved by interpolating).
    #[tokio::test]
    async fn prepared_statements_are_reused() {
        if !crate::testing::available(Dialect::MySql) {
            return;
        }
        let db = crate::testing::fresh_with(Dialect::MySql, Default::default(), |t| {
            t.max_connections = 1
        })
        .await;
        upgrade(&db).await.check("upgrade");
        let mut c = new_cluster(1, "p1");
        db.q().create_cluster(&mut c).await.check("create");
        let prepares = async || {
            let mut r = db
                .q()
                .rows(
                    "status",
                    "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'",
                    vec![],
                    &[Kind::Text, Kind::Text],
                )
                .await
                .check("status");
            r.string().check("name");
            r.string().check("value").parse::<i64>().check("count")
        };
        prepares().await;
        let before = prepares().await;
        for _ in 0..5 {
            db.q()
                .get_cluster_by_uuid(&c.uuid, &Scope::project("p1"))
                .await
                .check("get");
        }
        let after = prepares().await;
        assert_eq!(
            after - before,
            1,
            "five reads of one statement prepared it {} times",
            after - before
        );
    }
}
