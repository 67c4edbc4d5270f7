//! The bit of Keystone the services need: a password authentication of any
//! user answered with [`crate::SERVICE_TOKEN`] and a catalog of the double,
//! the validation of the user tokens of the seed (`GET /v3/auth/tokens`, as
//! keystonemiddleware asks), the v3 version document, and the application
//! credentials of the users of the seed (created by their owner, deleted by
//! their owner or an admin).

use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    ApplicationCredential, Call, SERVICE_PROJECT, SERVICE_TOKEN, Service, State, TIMESTAMP,
    UserToken, catalog_of, json_response, no_content,
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

/// Whether `rest` (the path below `/identity`) names application
/// credentials, which the double records and can fail like the other
/// services' calls.
pub(crate) fn is_application_credentials(rest: &str) -> bool {
    rest.strip_prefix("/v3/users/")
        .is_some_and(|r| r.contains("/application_credentials"))
}

#[derive(Deserialize)]
struct CreateBody {
    application_credential: CreateCredential,
}

#[derive(Deserialize)]
struct CreateCredential {
    #[serde(default)]
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    unrestricted: bool,
    #[serde(default)]
    roles: Option<Vec<RoleRef>>,
}

#[derive(Deserialize)]
struct RoleRef {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

fn credential_body(url: &str, ac: &ApplicationCredential, secret: Option<&str>) -> Value {
    let roles: Vec<Value> = ac
        .roles
        .iter()
        .map(|r| json!({"id": format!("role-{r}"), "name": r, "domain_id": null}))
        .collect();
    let mut body = json!({
        "id": ac.id, "name": ac.name, "description": ac.description,
        "user_id": ac.user_id, "project_id": ac.project_id, "roles": roles,
        "unrestricted": ac.unrestricted, "expires_at": null, "access_rules": [],
        "links": {"self": format!(
            "{url}/identity/v3/users/{}/application_credentials/{}", ac.user_id, ac.id)},
    });
    if let (Some(secret), Value::Object(m)) = (secret, &mut body) {
        m.insert("secret".to_owned(), Value::String(secret.to_owned()));
    }
    body
}

/// `POST /v3/users/{user}/application_credentials` with the token of that
/// user (its project and, unless the body names some, all its roles; a
/// role it does not have is Keystone's 404), `GET` and `DELETE
/// …/application_credentials/{id}` with the owner's token or an admin's.
pub(crate) fn serve_application_credentials(
    st: &mut State,
    url: &str,
    call: &Call,
    raw: &[u8],
) -> Response {
    let Some(rest) = call.path.strip_prefix("/v3/users/") else {
        return error(404, "Not Found", "The resource could not be found.");
    };
    let (user, id) = match rest.split_once("/application_credentials") {
        Some((user, tail)) => (user, tail.trim_start_matches('/')),
        None => return error(404, "Not Found", "The resource could not be found."),
    };
    let token = call.token.as_deref().unwrap_or_default();
    let admin = token == SERVICE_TOKEN;
    let Some(owner) = st.seed.user_tokens.get(token).cloned().or_else(|| {
        admin.then(|| UserToken {
            user_id: "service-user".to_owned(),
            project_id: SERVICE_PROJECT.to_owned(),
            ..UserToken::default()
        })
    }) else {
        return error(
            401,
            "Unauthorized",
            "The request you have made requires authentication.",
        );
    };
    let forbidden = |action: &str| {
        error(
            403,
            "Forbidden",
            &format!(
                "You are not authorized to perform the requested action: identity:{action}_application_credential."
            ),
        )
    };
    let action = match call.method {
        Method::POST => "create",
        Method::DELETE => "delete",
        _ => "get",
    };
    if !admin && owner.user_id != user {
        return forbidden(action);
    }
    let missing = |id: &str| {
        error(
            404,
            "Not Found",
            &format!("Could not find application credential: {id}."),
        )
    };
    match (&call.method, id.is_empty()) {
        (&Method::POST, true) => {
            let Some(CreateBody {
                application_credential: req,
            }) = serde_json::from_slice::<CreateBody>(raw)
                .ok()
                .filter(|b| !b.application_credential.name.is_empty())
            else {
                return error(
                    400,
                    "Bad Request",
                    "Invalid input for field 'application_credential'.",
                );
            };
            if admin {
                // The service user of the double has no user of the seed
                // to create credentials for.
                return forbidden(action);
            }
            let mut roles = Vec::new();
            for r in req.roles.unwrap_or_default() {
                let name = r
                    .name
                    .or_else(|| {
                        r.id.and_then(|id| id.strip_prefix("role-").map(str::to_owned))
                    })
                    .unwrap_or_default();
                if !owner.roles.contains(&name) {
                    return error(
                        404,
                        "Not Found",
                        &format!(
                            "Could not find role assignment with role: role-{name}, user or group: {}, project, domain, or system: {}.",
                            owner.user_id, owner.project_id
                        ),
                    );
                }
                roles.push(name);
            }
            if roles.is_empty() {
                roles = owner.roles.clone();
            }
            if st
                .seed
                .application_credentials
                .iter()
                .any(|a| a.user_id == owner.user_id && a.name == req.name)
            {
                return error(
                    409,
                    "Conflict",
                    "Conflict occurred attempting to store application_credential - Duplicate entry.",
                );
            }
            st.credential_seq += 1;
            let ac = ApplicationCredential {
                id: format!("ac{:030}", st.credential_seq),
                name: req.name,
                description: req.description.unwrap_or_default(),
                user_id: owner.user_id.clone(),
                project_id: owner.project_id.clone(),
                roles,
                unrestricted: req.unrestricted,
            };
            let secret = format!("secret-{}", st.credential_seq);
            let body = credential_body(url, &ac, Some(&secret));
            st.seed.application_credentials.push(ac);
            json_response(201, json!({"application_credential": body}))
        }
        (&Method::GET, false) => match st
            .seed
            .application_credentials
            .iter()
            .find(|a| a.id == id && a.user_id == user)
        {
            Some(ac) => json_response(
                200,
                json!({"application_credential": credential_body(url, ac, None)}),
            ),
            None => missing(id),
        },
        (&Method::DELETE, false) => {
            let Some(i) = st
                .seed
                .application_credentials
                .iter()
                .position(|a| a.id == id && a.user_id == user)
            else {
                return missing(id);
            };
            st.seed.application_credentials.remove(i);
            no_content()
        }
        _ => error(405, "Method Not Allowed", "The method is not allowed."),
    }
}
