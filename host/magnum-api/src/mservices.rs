//! `GET /v1/mservices` (magnum/api/controllers/v1/magnum_services.py): the
//! declared attributes of every `magnum_service` row, plus its state.

use axum::response::Response;
use chrono::NaiveDateTime;
use http::StatusCode;
use magnum_domain::models::MagnumService;
use serde::Serialize;

use super::errors::json_response;
use super::views::isoformat;
use super::{ApiError, Call, Services};

#[derive(Serialize)]
struct View {
    binary: String,
    created_at: String,
    disabled: Option<bool>,
    disabled_reason: Option<String>,
    host: String,
    id: i64,
    report_count: i32,
    state: &'static str,
    updated_at: Option<String>,
}

#[derive(Serialize)]
struct List {
    mservices: Vec<View>,
}

/// routes.md #32: `magnum-service:get_all`, then every row with its state.
pub(crate) async fn get_all(s: Services, call: Call) -> Result<Response, ApiError> {
    let Services {
        conductor,
        enforcer,
    } = s;
    super::policy::enforce(&enforcer, &call.ctx, "magnum-service:get_all", None)?;
    // `[DEFAULT]/service_down_time`.
    let down_time = chrono::Duration::from_std(conductor.settings().service_down_time)
        .unwrap_or_else(|_| chrono::Duration::seconds(180));
    let rows = conductor
        .list_services()
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    let now = conductor.now();
    let mservices = rows
        .into_iter()
        .map(|r| View {
            state: if is_up(&r, now, down_time) {
                "up"
            } else {
                "down"
            },
            binary: r.binary,
            created_at: isoformat(r.created_at),
            disabled: r.disabled,
            disabled_reason: r.disabled_reason,
            host: r.host,
            id: r.id,
            report_count: r.report_count,
            updated_at: r.updated_at.map(isoformat),
        })
        .collect();
    Ok(json_response(StatusCode::OK, &List { mservices }))
}

/// magnum/servicegroup: forced down is down; otherwise the last heartbeat
/// (`last_seen_up`, else `updated_at`, else `created_at`) must be within
/// `down_time` of now, in either direction.
fn is_up(row: &MagnumService, now: NaiveDateTime, down_time: chrono::Duration) -> bool {
    if row.forced_down == Some(true) {
        return false;
    }
    let last = row
        .last_seen_up
        .or(row.updated_at)
        .unwrap_or(row.created_at);
    (now - last).abs() <= down_time
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn at(h: u32, m: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 11, 30)
            .unwrap()
            .and_hms_opt(h, m, 0)
            .unwrap()
    }

    #[test]
    fn state_follows_the_last_heartbeat() {
        let down = chrono::Duration::seconds(180);
        let now = at(12, 0);
        let recent = MagnumService {
            created_at: at(11, 0),
            last_seen_up: Some(at(11, 59)),
            ..Default::default()
        };
        let old = MagnumService {
            created_at: at(11, 0),
            updated_at: Some(at(11, 0)),
            ..Default::default()
        };
        let forced = MagnumService {
            forced_down: Some(true),
            ..recent.clone()
        };
        let future = MagnumService {
            created_at: at(12, 2),
            ..Default::default()
        };
        assert!(is_up(&recent, now, down));
        assert!(!is_up(&old, now, down));
        assert!(!is_up(&forced, now, down));
        assert!(is_up(&future, now, down), "either direction");
    }
}

#[cfg(test)]
mod app_tests {
    use magnum_domain::models::MagnumService;

    use crate::testing::{ADMIN, MEMBER, TestApp};

    #[tokio::test]
    async fn services_are_listed_with_their_state_to_admins_only() {
        let app = TestApp::new().await;
        let now = app.t.now();
        let mut q = app.t.db.q();
        let mut recent = MagnumService {
            host: "h1".into(),
            binary: "magnum-conductor".into(),
            report_count: 13,
            disabled: Some(true),
            disabled_reason: Some("maintenance".into()),
            last_seen_up: Some(now - chrono::Duration::minutes(1)),
            ..Default::default()
        };
        q.create_magnum_service(&mut recent).await.unwrap();
        let mut old = MagnumService {
            host: "h2".into(),
            binary: "magnum-conductor".into(),
            report_count: 3,
            last_seen_up: Some(now - chrono::Duration::hours(1)),
            ..Default::default()
        };
        q.create_magnum_service(&mut old).await.unwrap();
        let a = app.call("GET /v1/mservices", "", ADMIN).await;
        assert_eq!(a.status, 200, "{}", a.text());
        let rows = a.json()["mservices"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let states: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r["host"].as_str().unwrap_or(""),
                    r["state"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(states, vec![("h1", "up"), ("h2", "down")]);
        assert_eq!(rows[0]["disabled_reason"], "maintenance");
        assert_eq!(rows[0]["created_at"], "2026-11-30T12:00:00+00:00");
        assert_eq!(
            rows[1]["disabled"], false,
            "Magnum's default written on insert"
        );
        let a = app.call("GET /v1/mservices", "", MEMBER).await;
        assert_eq!(a.status, 403);
        assert_eq!(
            a.json()["errors"][0]["detail"],
            "Policy doesn't allow magnum-service:get_all to be performed."
        );
        assert_eq!(
            a.header("openstack-api-version"),
            "container-infrastructure-management 1.1"
        );
    }
}
