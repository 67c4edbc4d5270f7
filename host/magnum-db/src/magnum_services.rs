//! `magnum_service`: the heartbeat rows of conductor (and reconciler)
//! processes, one per (host, binary).

use magnum_domain::models::MagnumService;

use super::Result;
use super::columns::table;
use super::exec::Arg;
use super::queries::{Cond, Queries, default_bool};

table! {
    /// The `magnum_service` table.
    static TABLE: MagnumService = "magnum_service", marker "id" {
        created_at: time,
        updated_at: opt_time,
        report_count: int_or_zero,
        host: string,
        binary: string,
        disabled: bool,
        disabled_reason: text,
        last_seen_up: opt_time,
        forced_down: bool,
    }
}

impl Queries<'_> {
    /// Every `magnum_service` row by id, as `GET /v1/mservices` lists them.
    pub async fn list_magnum_services(&mut self) -> Result<Vec<MagnumService>> {
        self.all(&TABLE, Cond::default(), "id ASC", None).await
    }

    /// The row of one (host, binary) pair.
    pub async fn get_magnum_service(&mut self, host: &str, binary: &str) -> Result<MagnumService> {
        let mut c = Cond::default();
        c.add(
            r#"host = ? AND "binary" = ?"#,
            [Arg::from(host), Arg::from(binary)],
        );
        self.get_one(&TABLE, c).await
    }

    /// Inserts `v` with Magnum's client-side defaults (`disabled` and
    /// `forced_down` false when unset) and sets its id and `created_at`. A
    /// second row for the same (host, binary) → [`super::Error::Duplicate`].
    pub async fn create_magnum_service(&mut self, v: &mut MagnumService) -> Result<()> {
        default_bool(&mut v.disabled, false);
        default_bool(&mut v.forced_down, false);
        self.insert(&TABLE, v).await
    }

    /// Writes the named columns of `v` (e.g. `report_count`,
    /// `last_seen_up`) and sets `updated_at`.
    pub async fn update_magnum_service(
        &mut self,
        v: &mut MagnumService,
        cols: &[&str],
    ) -> Result<()> {
        self.update(&TABLE, v, cols).await
    }

    /// Deletes the row with `id`.
    pub async fn delete_magnum_service(&mut self, id: i64) -> Result<()> {
        self.delete_by("magnum_service", "id", id).await
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;
    use magnum_domain::models::MagnumService;

    use crate::testing::{Check, dialect_tests, migrated};
    use crate::{Dialect, Error};

    dialect_tests!(magnum_services);

    fn service(host: &str) -> MagnumService {
        MagnumService {
            host: host.into(),
            binary: "magnum-conductor".into(),
            ..MagnumService::default()
        }
    }

    /// Go `TestMagnumServices`.
    async fn magnum_services(d: Dialect) {
        let db = migrated(d).await;
        let mut s = service("ctl-0");
        db.q().create_magnum_service(&mut s).await.check("create");
        assert_eq!(
            (s.disabled, s.forced_down, s.report_count),
            (Some(false), Some(false), 0)
        );
        let r = db.q().create_magnum_service(&mut service("ctl-0")).await;
        assert!(
            matches!(r, Err(Error::Duplicate { .. })),
            "duplicate host/binary: {r:?}"
        );
        s.report_count += 1;
        s.last_seen_up = NaiveDate::from_ymd_opt(2026, 11, 30).and_then(|d| d.and_hms_opt(2, 0, 0));
        db.q()
            .update_magnum_service(&mut s, &["report_count", "last_seen_up"])
            .await
            .check("update");
        let got = db
            .q()
            .get_magnum_service("ctl-0", "magnum-conductor")
            .await
            .check("get");
        assert_eq!(got, s, "read back differs");
        db.q()
            .create_magnum_service(&mut service("ctl-1"))
            .await
            .check("create");
        let list = db.q().list_magnum_services().await.check("list");
        let hosts: Vec<&str> = list.iter().map(|s| s.host.as_str()).collect();
        assert_eq!(hosts, ["ctl-0", "ctl-1"]);
        db.q().delete_magnum_service(s.id).await.check("delete");
        let r = db.q().get_magnum_service("ctl-0", "magnum-conductor").await;
        assert!(matches!(r, Err(Error::NotFound(_))), "after delete: {r:?}");
    }
}
