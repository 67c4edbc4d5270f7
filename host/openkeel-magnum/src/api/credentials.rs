//! `PATCH /v1/credentials/{cluster_ident}` (#30, 1.12+;
//! magnum/api/controllers/v1/credential.py): the rotation of a cluster's
//! cloud credential.

use http::StatusCode;
use serde_json::json;

use super::errors::json_response;
use super::{ApiError, Call, Handlers, Services};

/// Registers the handler.
pub fn register(h: &mut Handlers, services: &Services) {
    let s = services.clone();
    h.register("credential.patch", move |call: Call| {
        let s = s.clone();
        async move { patch(&s, call).await }
    });
}

/// `credential:rotate` with the caller as target (no admin bypass: the
/// default rule wants the member role), then the lookup in the caller's
/// project (no all-projects rule), then the driver's rotation,
/// synchronously; 202 `{"uuid"}`.
async fn patch(s: &Services, call: Call) -> Result<axum::response::Response, ApiError> {
    super::policy::enforce(&s.enforcer, &call.ctx, "credential:rotate", None)?;
    let ident = call
        .params
        .get("cluster_ident")
        .cloned()
        .unwrap_or_default();
    let cluster = s.conductor.find_cluster(&call.ctx, &ident).await?;
    s.conductor.rotate_credential(&call.ctx, &cluster).await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &json!({"uuid": cluster.uuid}),
    ))
}
