//! Quotas: one hard limit per (project, resource), listed, read, created,
//! changed and deleted by admins (magnum/api/controllers/v1/quota.py,
//! magnum/db/sqlalchemy/api.py). The limit itself is applied by cluster
//! create.

use magnum_domain::models::Quota;
use magnum_domain::{MagnumError, RequestContext};

use super::Conductor;
use super::error::{Error, Result};
use super::lookup::{self, Kind};
use crate::db::{self, ListOptions, QuotaFilter};

impl Conductor {
    /// Magnum's `enforce_valid_project_id_on_create`: the project of a new
    /// quota must be known to Keystone, else 404 `ProjectNotFound`.
    ///
    /// Magnum: magnum/api/validation.py:134-151.
    pub async fn check_project(&self, ctx: &RequestContext, project_id: &str) -> Result<()> {
        if self.lookup().project_exists(ctx, project_id).await? {
            Ok(())
        } else {
            Err(MagnumError::project_not_found(project_id).into())
        }
    }

    /// The quotas of `project_id` (every project when `None`) with Magnum's
    /// pagination; the marker is a quota id, looked up first whatever the
    /// filter (unknown → 404 `Quota could not be found: quota id <n> .`).
    pub async fn list_quotas(
        &self,
        project_id: Option<&str>,
        page: &ListOptions,
    ) -> Result<Vec<Quota>> {
        let mut q = self.db().q();
        if let Some(m) = page.marker.as_deref() {
            // Magnum: Quota.get_by_id runs before the list, whatever the
            // filter.
            let id = m.parse::<i64>().map_err(|_| Kind::Quota.not_found(m))?;
            lookup::found(Kind::Quota, m, q.get_quota_by_id(id).await)?;
        }
        let filter = QuotaFilter {
            project_id: project_id.map(str::to_owned),
        };
        lookup::page(Kind::Quota, page, q.list_quotas(&filter, page).await)
    }

    /// The stored quota of (project, resource), or `None` when there is none
    /// (the API then shows the configured default).
    pub async fn get_quota(&self, project_id: &str, resource: &str) -> Result<Option<Quota>> {
        match self.db().q().get_quota(project_id, resource).await {
            Ok(q) => Ok(Some(q)),
            Err(db::Error::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Inserts `quota` (its `id` when non-zero is the row's primary key, as
    /// Magnum honours a client's id) and returns the stored row. A second
    /// quota of the same project and resource → 409 `QuotaAlreadyExists`.
    pub async fn create_quota(&self, quota: Quota) -> Result<Quota> {
        self.db()
            .in_tx(|tx| {
                let mut row = quota.clone();
                Box::pin(async move {
                    let mut q = tx.for_update();
                    let exists =
                        |r: &Quota| MagnumError::quota_already_exists(&r.project_id, &r.resource);
                    match q.get_quota(&row.project_id, &row.resource).await {
                        Ok(_) => return Err(exists(&row).into()),
                        Err(db::Error::NotFound(_)) => {}
                        Err(e) => return Err(Error::from(e)),
                    }
                    match q.create_quota(&mut row).await {
                        Ok(()) => Ok(row),
                        // Magnum: DBDuplicateEntry (also a taken id) is
                        // QuotaAlreadyExists.
                        Err(db::Error::Duplicate { .. }) => Err(exists(&row).into()),
                        Err(e) => Err(e.into()),
                    }
                })
            })
            .await
    }

    /// Sets the hard limit of the quota of (project, resource) and returns
    /// the saved row; none → 404 `QuotaNotFound`.
    ///
    /// Magnum: magnum/db/sqlalchemy/api.py `update_quota` (the row read
    /// with a lock, then written).
    pub async fn update_quota(
        &self,
        project_id: &str,
        resource: &str,
        hard_limit: i32,
    ) -> Result<Quota> {
        self.db()
            .in_tx(|tx| {
                Box::pin(async move {
                    let mut q = tx.for_update();
                    let mut row = match q.get_quota(project_id, resource).await {
                        Ok(r) => r,
                        Err(db::Error::NotFound(_)) => {
                            return Err(MagnumError::quota_not_found(project_id, resource).into());
                        }
                        Err(e) => return Err(Error::from(e)),
                    };
                    row.hard_limit = hard_limit;
                    q.update_quota(&mut row, &["hard_limit"]).await?;
                    Ok(row)
                })
            })
            .await
    }

    /// Deletes the quota of (project, resource); none → 404
    /// `QuotaNotFound`.
    pub async fn delete_quota(&self, project_id: &str, resource: &str) -> Result<()> {
        match self.db().q().delete_quota(project_id, resource).await {
            Ok(()) => Ok(()),
            Err(db::Error::NotFound(_)) => {
                Err(MagnumError::quota_not_found(project_id, resource).into())
            }
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use magnum_domain::models::Quota;

    use crate::Settings;
    use crate::db::ListOptions;
    use crate::db::testing::new_quota;
    use crate::testing::TestConductor;

    fn status<T: std::fmt::Debug>(r: super::Result<T>) -> u16 {
        match r {
            Err(super::Error::Client(e)) => e.status,
            other => panic!("want a client error, got {other:?}"),
        }
    }

    /// Go `TestQuotaUseCases`.
    #[tokio::test]
    async fn quotas_are_created_updated_listed_and_deleted() {
        let t = TestConductor::new().await;
        let c = &t.conductor;
        let q = c.create_quota(new_quota("p1", 3)).await.unwrap();
        assert!(q.id > 0, "{q:?}");
        assert_eq!(q.created_at, t.now());
        let dup = c.create_quota(new_quota("p1", 1)).await;
        assert_eq!(status(dup), 409);
        let got = c.update_quota("p1", "Cluster", 9).await.unwrap();
        assert_eq!((got.id, got.hard_limit), (q.id, 9));
        assert_eq!(got.updated_at, Some(t.now()));
        let stored = c.get_quota("p1", "Cluster").await.unwrap();
        assert_eq!(stored.map(|s| s.hard_limit), Some(9));
        assert_eq!(status(c.update_quota("p2", "Cluster", 9).await), 404);
        let m = ListOptions {
            marker: Some("77".into()),
            ..ListOptions::default()
        };
        match c.list_quotas(None, &m).await {
            Err(super::Error::Client(e)) => {
                assert_eq!(e.message, "Quota could not be found: quota id 77 .")
            }
            other => panic!("marker: {other:?}"),
        }
        assert!(c.get_quota("p2", "Cluster").await.unwrap().is_none());
        assert_eq!(c.default_cluster_quota(), 20);
        c.delete_quota("p1", "Cluster").await.unwrap();
        match c.delete_quota("p1", "Cluster").await {
            Err(super::Error::Client(e)) => assert_eq!(
                e.message,
                "Quota could not be found: project_id p1 resource Cluster."
            ),
            other => panic!("second delete: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_client_id_is_the_primary_key_and_a_taken_one_a_conflict() {
        let t = TestConductor::new().await;
        let c = &t.conductor;
        let q = c
            .create_quota(Quota {
                id: 42,
                ..new_quota("p1", 1)
            })
            .await
            .unwrap();
        assert_eq!(q.id, 42);
        let taken = c
            .create_quota(Quota {
                id: 42,
                ..new_quota("p2", 1)
            })
            .await;
        assert_eq!(status(taken), 409);
    }

    #[tokio::test]
    async fn lists_filter_on_the_project_and_page_after_the_marker() {
        let t = TestConductor::new().await;
        let c = &t.conductor;
        for p in ["p1", "p2", "p3"] {
            c.create_quota(new_quota(p, 1)).await.unwrap();
        }
        let own = c
            .list_quotas(Some("p2"), &ListOptions::default())
            .await
            .unwrap();
        assert_eq!(
            own.iter()
                .map(|q| q.project_id.as_str())
                .collect::<Vec<_>>(),
            ["p2"]
        );
        let page = ListOptions {
            marker: Some("1".into()),
            limit: Some(1),
            ..ListOptions::default()
        };
        let rows = c.list_quotas(None, &page).await.unwrap();
        assert_eq!(
            rows.iter()
                .map(|q| q.project_id.as_str())
                .collect::<Vec<_>>(),
            ["p2"]
        );
        let bad = ListOptions {
            sort_key: Some("bogus".into()),
            ..ListOptions::default()
        };
        assert_eq!(status(c.list_quotas(None, &bad).await), 400);
    }

    #[tokio::test]
    async fn the_default_quota_is_the_setting() {
        let t = TestConductor::with_settings(Settings {
            max_clusters_per_project: 7,
            ..Settings::default()
        })
        .await;
        assert_eq!(t.conductor.default_cluster_quota(), 7);
        let t = TestConductor::with_settings(Settings {
            max_clusters_per_project: 0,
            ..Settings::default()
        })
        .await;
        assert_eq!(t.conductor.default_cluster_quota(), 20);
    }
}
