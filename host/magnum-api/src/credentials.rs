//! `PATCH /v1/credentials/{cluster_ident}` (#30, 1.12+;
//! magnum/api/controllers/v1/credential.py): the rotation of a cluster's
//! cloud credential.

use http::StatusCode;
use serde_json::json;

use super::errors::json_response;
use super::{ApiError, Call, Services};

/// `credential:rotate` with the caller as target (no admin bypass: the
/// default rule wants the member role), then the lookup in the caller's
/// project (no all-projects rule), then the driver's rotation,
/// synchronously; 202 `{"uuid"}`.
pub(crate) async fn patch(
    s: Services,
    call: Call<String>,
) -> Result<axum::response::Response, ApiError> {
    super::policy::enforce(&s.enforcer, &call.ctx, "credential:rotate", None)?;
    let cluster = s.conductor.get_cluster(&call.ctx, &call.path).await?;
    s.conductor.rotate_credential(&call.ctx, &cluster).await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &json!({"uuid": cluster.uuid}),
    ))
}

/// Every case of the Go `TestCredentialRotation`.
#[cfg(test)]
mod tests {
    use magnum_domain::Status;

    use crate::conductor::certificate_test_support::*;
    use crate::fixture::expect;
    use crate::testing::{MEMBER, TestApp};

    #[tokio::test]
    async fn credential_rotation() {
        let app = TestApp::new().await;
        let c = &app.t.conductor;
        let cl = insert_cluster(c, "c1", Status::CreateComplete, false, None).await;
        let path = format!("PATCH /v1/credentials/{}", cl.uuid);
        // Needs 1.12.
        expect(&app.call_at("1.11", &path, "", MEMBER).await, 406, "");
        // 202 with the cluster uuid, by name too.
        let a = app
            .call_at("1.12", "PATCH /v1/credentials/c1", "", MEMBER)
            .await;
        expect(&a, 202, "");
        assert_eq!(a.json(), serde_json::json!({"uuid": cl.uuid}));
        assert_eq!(
            reload(c, &cl.uuid).await.status,
            Some(Status::CreateComplete),
            "no status change"
        );
        // No admin bypass.
        let admin = ["X-Project-Id: p1", "X-User-Id: u9", "X-Roles: admin"];
        expect(
            &app.call_at("1.12", &path, "", &admin).await,
            403,
            "Policy doesn't allow credential:rotate to be performed.",
        );
        // Another project's cluster is not found.
        let stranger = ["X-Project-Id: p2", "X-User-Id: u2", "X-Roles: member"];
        expect(
            &app.call_at("1.12", &path, "", &stranger).await,
            404,
            &format!("Cluster {} could not be found.", cl.uuid),
        );
        // Status guard.
        let mut row = reload(c, &cl.uuid).await;
        row.status = Some(Status::CreateInProgress);
        c.db()
            .q()
            .update_cluster(&mut row, &["status"])
            .await
            .expect("status");
        expect(
            &app.call_at("1.12", &path, "", MEMBER).await,
            400,
            "magnum.conductor.handlers.credential_conductor when cluster status is \"CREATE_IN_PROGRESS\" is not supported.",
        );
        // A driver without rotation.
        row.status = Some(Status::UpdateFailed);
        row.labels = labels(&[("fake_no_credential_rotation", "true")]);
        c.db()
            .q()
            .update_cluster(&mut row, &["status", "labels"])
            .await
            .expect("status and labels");
        expect(
            &app.call_at("1.12", &path, "", MEMBER).await,
            400,
            "Credential rotation is not supported by driver.",
        );
        // Other methods are not allowed.
        let get = format!("GET /v1/credentials/{}", cl.uuid);
        expect(&app.call_at("1.12", &get, "", MEMBER).await, 405, "");
    }
}
