//! The bit of Keystone the services need: a password authentication of any
//! user answered with [`crate::SERVICE_TOKEN`] and a catalog of the double,
//! the validation of the user tokens of the seed (`GET /v3/auth/tokens`, as
//! keystonemiddleware asks), and the v3 version document.

use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method};
use serde_json::{Value, json};

use crate::{
    SERVICE_PROJECT, SERVICE_TOKEN, Service, State, TIMESTAMP, UserToken, catalog_of, json_response,
};

/// When every token of the double expires.
const EXPIRES_AT: &str = "2099-01-01T00:00:00.000000Z";

/// `url` is the double's base URL; `rest` the path below `/identity`.
pub(crate) fn serve(
    st: &State,
    url: &str,
    method: &Method,
    rest: &str,
    headers: &HeaderMap,
) -> Response {
    match (method, rest.trim_end_matches('/')) {
        (&Method::POST, "/v3/auth/tokens") => {
            let body = json!({"token": {
                "methods": ["password"],
                "expires_at": EXPIRES_AT,
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
        (&Method::GET | &Method::HEAD, "/v3/auth/tokens") => validate(st, url, headers),
        (&Method::GET, "/v3") => {
            json_response(200, json!({"version": {"id": "v3.14", "status": "stable"}}))
        }
        _ => error(404, "Not Found", "The resource could not be found."),
    }
}

fn error(code: u16, title: &str, message: &str) -> Response {
    json_response(
        code,
        json!({"error": {"code": code, "title": title, "message": message}}),
    )
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
}

/// Keystone's token validation: the caller's own token (`X-Auth-Token`) must
/// be the service token or a user token of the seed, the validated one
/// (`X-Subject-Token`) a user token of the seed (404 otherwise, as Keystone
/// answers a token it does not know).
fn validate(st: &State, url: &str, headers: &HeaderMap) -> Response {
    let known = |t: &str| t == SERVICE_TOKEN || st.seed.user_tokens.contains_key(t);
    if !header(headers, "x-auth-token").is_some_and(known) {
        return error(
            401,
            "Unauthorized",
            "The request you have made requires authentication.",
        );
    }
    let Some(user) = header(headers, "x-subject-token").and_then(|t| st.seed.user_tokens.get(t))
    else {
        return error(
            404,
            "Not Found",
            "Failed to validate token (Disable debug mode to suppress these details.)",
        );
    };
    json_response(200, token_body(url, user))
}

/// The body Keystone answers for a project-scoped token of `user`.
fn token_body(url: &str, user: &UserToken) -> Value {
    let or = |s: &str, default: &str| {
        if s.is_empty() {
            default.to_owned()
        } else {
            s.to_owned()
        }
    };
    let domain = json!({"id": "default", "name": "Default"});
    let roles: Vec<Value> = user
        .roles
        .iter()
        .map(|r| json!({"id": format!("role-{r}"), "name": r}))
        .collect();
    json!({"token": {
        "methods": ["token"],
        "expires_at": EXPIRES_AT,
        "issued_at": TIMESTAMP,
        "audit_ids": ["osfake"],
        "is_domain": false,
        "user": {"id": user.user_id, "name": or(&user.user_name, &user.user_id),
            "domain": domain, "password_expires_at": null},
        "project": {"id": user.project_id, "name": or(&user.project_name, &user.project_id),
            "domain": domain},
        "roles": roles,
        "catalog": catalog_of(url, &["RegionOne"], &Service::ALL),
    }})
}
