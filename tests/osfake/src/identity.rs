//! The bit of Keystone service credentials need: a password authentication
//! of any user answered with [`crate::SERVICE_TOKEN`] and a catalog of the
//! double, and the v3 version document.

use axum::response::Response;
use http::{HeaderValue, Method};
use serde_json::json;

use crate::{SERVICE_PROJECT, SERVICE_TOKEN, Service, TIMESTAMP, catalog_of, json_response};

/// `url` is the double's base URL; `rest` the path below `/identity`.
pub(crate) fn serve(url: &str, method: &Method, rest: &str) -> Response {
    match (method, rest.trim_end_matches('/')) {
        (&Method::POST, "/v3/auth/tokens") => {
            let body = json!({"token": {
                "methods": ["password"],
                "expires_at": "2099-01-01T00:00:00.000000Z",
                "issued_at": TIMESTAMP,
                "user": {"id": "service-user", "name": "magnum",
                    "domain": {"id": "default", "name": "Default"}},
                "project": {"id": SERVICE_PROJECT, "name": SERVICE_PROJECT,
                    "domain": {"id": "default", "name": "Default"}},
                "roles": [{"id": "r-admin", "name": "admin"}],
                "catalog": catalog_of(url, &["RegionOne"], &Service::ALL),
            }});
            let mut resp = json_response(201, body);
            resp.headers_mut()
                .insert("x-subject-token", HeaderValue::from_static(SERVICE_TOKEN));
            resp
        }
        (&Method::GET, "/v3") => {
            json_response(200, json!({"version": {"id": "v3.14", "status": "stable"}}))
        }
        _ => json_response(
            404,
            json!({"error": {"code": 404, "title": "Not Found",
                "message": "The resource could not be found."}}),
        ),
    }
}
