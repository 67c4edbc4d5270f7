//! `quotas`: one hard limit per (project, resource).

use magnum_domain::models::Quota;

use super::Result;
use super::columns::table;
use super::exec::Arg;
use super::queries::{Columns, Cond, ListOptions, Queries};

table! {
    /// The `quotas` table.
    static TABLE: Quota = "quotas", marker "id" {
        created_at: time,
        updated_at: opt_time,
        project_id: string,
        resource: string,
        hard_limit: int_or_zero,
    }
}

/// Selects quota rows; no project lists every project (admin with
/// `all_tenants`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuotaFilter {
    /// Keeps the quotas of this project.
    pub project_id: Option<String>,
}

fn project_resource(project_id: &str, resource: &str) -> Cond {
    let mut c = Cond::default();
    c.add(
        "project_id = ? AND resource = ?",
        [Arg::from(project_id), Arg::from(resource)],
    );
    c
}

impl Queries<'_> {
    /// The quota of (project, resource).
    pub async fn get_quota(&mut self, project_id: &str, resource: &str) -> Result<Quota> {
        self.get_one(&TABLE, project_resource(project_id, resource))
            .await
    }

    /// The quota with `id`.
    pub async fn get_quota_by_id(&mut self, id: i64) -> Result<Quota> {
        self.get_by(&TABLE, Cond::default(), "id", id).await
    }

    /// Lists quotas; the marker is a quota id in decimal.
    pub async fn list_quotas(&mut self, f: &QuotaFilter, o: &ListOptions) -> Result<Vec<Quota>> {
        let mut c = Cond::default();
        if let Some(p) = &f.project_id {
            c.add_eq("project_id", p);
        }
        self.list(&TABLE, Columns::All, c, o).await
    }

    /// Inserts `v` and sets its id and `created_at`; a second quota for
    /// (project, resource) → [`super::Error::Duplicate`].
    pub async fn create_quota(&mut self, v: &mut Quota) -> Result<()> {
        self.insert(&TABLE, v).await
    }

    /// Writes the named columns of `v` (normally `hard_limit`) and sets
    /// `updated_at`.
    pub async fn update_quota(&mut self, v: &mut Quota, cols: &[&str]) -> Result<()> {
        self.update(&TABLE, v, cols).await
    }

    /// Deletes the quota of (project, resource).
    pub async fn delete_quota(&mut self, project_id: &str, resource: &str) -> Result<()> {
        self.delete_one("quotas", project_resource(project_id, resource))
            .await
    }
}

#[cfg(test)]
mod tests {
    use magnum_domain::models::Quota;

    use crate::testing::{Check, dialect_tests, migrated, new_quota};
    use crate::{Dialect, Error, ListOptions, QuotaFilter};

    dialect_tests!(quotas, create_with_preset_id);

    /// Go `TestQuotas`.
    async fn quotas(d: Dialect) {
        let db = migrated(d).await;
        for p in ["p1", "p2", "p3"] {
            db.q()
                .create_quota(&mut new_quota(p, 10))
                .await
                .check("create");
        }
        let r = db.q().create_quota(&mut new_quota("p1", 1)).await;
        assert!(
            matches!(r, Err(Error::Duplicate { .. })),
            "duplicate quota: {r:?}"
        );
        let mut q = db.q().get_quota("p2", "Cluster").await.check("get");
        assert_eq!(q.hard_limit, 10);
        assert!(
            q.updated_at.is_none() && q.created_at != Default::default(),
            "{q:?}"
        );
        q.hard_limit = 3;
        db.q()
            .update_quota(&mut q, &["hard_limit"])
            .await
            .check("update");
        let got = db.q().get_quota_by_id(q.id).await.check("by id");
        assert_eq!(got.hard_limit, 3);
        assert!(got.updated_at.is_some());
        let after_1 = ListOptions {
            marker: Some("1".into()),
            limit: Some(1),
            ..ListOptions::default()
        };
        let page = db
            .q()
            .list_quotas(&QuotaFilter::default(), &after_1)
            .await
            .check("list");
        assert_eq!(page.len(), 1);
        assert_eq!(page[0].project_id, "p2");
        for marker in ["99", "not-a-number"] {
            let o = ListOptions {
                marker: Some(marker.into()),
                ..ListOptions::default()
            };
            let r = db.q().list_quotas(&QuotaFilter::default(), &o).await;
            assert!(
                matches!(r, Err(Error::NotFound(_))),
                "marker {marker}: {r:?}"
            );
        }
        let own = QuotaFilter {
            project_id: Some("p3".into()),
        };
        let rows = db
            .q()
            .list_quotas(&own, &ListOptions::default())
            .await
            .check("own");
        assert_eq!(rows.len(), 1);
        db.q().delete_quota("p3", "Cluster").await.check("delete");
        let r = db.q().delete_quota("p3", "Cluster").await;
        assert!(matches!(r, Err(Error::NotFound(_))), "second delete: {r:?}");
    }

    /// Go `TestCreateWithPresetID`: an id given in a create body is the
    /// row's primary key, and later generated ids do not collide with it.
    async fn create_with_preset_id(d: Dialect) {
        let db = migrated(d).await;
        let mut q = Quota {
            id: 42,
            ..new_quota("p1", 10)
        };
        db.q().create_quota(&mut q).await.check("create");
        let got = db.q().get_quota_by_id(42).await.check("by id");
        assert_eq!(got.project_id, "p1");
        let mut next = new_quota("p2", 1);
        db.q().create_quota(&mut next).await.check("next");
        assert!(
            next.id > 42,
            "generated id {} after a preset id of 42",
            next.id
        );
    }
}
