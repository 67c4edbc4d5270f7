//! The development mode of `all-in-one` (`[DEFAULT]/auth_strategy = noauth`):
//! the identity is read from the headers keystonemiddleware would have set.
//!
//! Magnum has no such mode; this one reuses the header names that
//! keystonemiddleware sets and Magnum's `ContextHook` reads: `X-User-Id`,
//! `X-User-Name`, `X-User-Domain-Id`, `X-User-Domain-Name`, `X-Project-Id`,
//! `X-Project-Name`, `X-Project-Domain-Id`, `X-Domain-Id`, `X-Domain-Name`,
//! `X-Roles` (comma-separated) and `X-System-Scope`. Absent headers take the
//! `NOAUTH_*` defaults. The roles default to admin so that an unmodified
//! `openstack coe` session can use every API call, quotas and all-tenants
//! listings included; a caller that wants to see the API as a plain member
//! sends `X-Roles: member,reader`. Never to be used where the port is
//! reachable by untrusted clients.

use std::fmt;

use http::HeaderMap;
use magnum_domain::RequestContext;

use super::{IsAdmin, request_id};

pub const NOAUTH_PROJECT_ID: &str = "openkeel-project";
pub const NOAUTH_PROJECT_NAME: &str = "openkeel";
pub const NOAUTH_USER_ID: &str = "openkeel-user";
pub const NOAUTH_USER_NAME: &str = "openkeel";
pub const NOAUTH_DOMAIN_ID: &str = "default";
pub const NOAUTH_DOMAIN_NAME: &str = "Default";
/// The roles of a request without `X-Roles`.
pub const NOAUTH_ROLES: &str = "admin,member,reader";

/// The development authenticator: it trusts the identity headers of the
/// request and never fails.
#[derive(Clone)]
pub struct NoAuth {
    is_admin: IsAdmin,
}

impl fmt::Debug for NoAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NoAuth").finish_non_exhaustive()
    }
}

impl NoAuth {
    /// `is_admin` is the `context_is_admin` rule.
    pub fn new(is_admin: IsAdmin) -> Self {
        Self { is_admin }
    }

    /// The caller's context, from the request's headers and the defaults.
    pub fn authenticate(&self, headers: &HeaderMap) -> RequestContext {
        let get = |name: &str, default: &str| match header(headers, name) {
            Some(v) if !v.is_empty() => v,
            _ => default.to_owned(),
        };
        let token = header(headers, "x-auth-token").filter(|t| !t.is_empty());
        let roles = match headers.get("x-roles") {
            Some(v) => String::from_utf8_lossy(v.as_bytes()).into_owned(),
            None => NOAUTH_ROLES.to_owned(),
        };
        let mut ctx = RequestContext {
            request_id: request_id(headers),
            auth_token: token,
            user_id: get("x-user-id", NOAUTH_USER_ID),
            user_name: get("x-user-name", NOAUTH_USER_NAME),
            user_domain_id: get("x-user-domain-id", NOAUTH_DOMAIN_ID),
            user_domain_name: get("x-user-domain-name", NOAUTH_DOMAIN_NAME),
            project_id: get("x-project-id", NOAUTH_PROJECT_ID),
            project_name: get("x-project-name", NOAUTH_PROJECT_NAME),
            project_domain_id: get("x-project-domain-id", NOAUTH_DOMAIN_ID),
            domain_id: get("x-domain-id", ""),
            domain_name: get("x-domain-name", ""),
            system_scope: get("x-system-scope", ""),
            // Magnum: magnum/api/hooks.py splits X-Roles on commas.
            // Deviation: blank role names are dropped (Magnum keeps "").
            roles: roles
                .split(',')
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect(),
            ..RequestContext::default()
        };
        ctx.is_admin = (self.is_admin)(&ctx);
        ctx
    }
}

/// The first value of header `name`, trimmed.
fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::REQUEST_ID_HEADER;
    use crate::auth::testing::{admin_role, fields, headers};

    fn defaults() -> RequestContext {
        RequestContext {
            user_id: NOAUTH_USER_ID.into(),
            user_name: NOAUTH_USER_NAME.into(),
            user_domain_id: "default".into(),
            user_domain_name: "Default".into(),
            project_id: NOAUTH_PROJECT_ID.into(),
            project_name: NOAUTH_PROJECT_NAME.into(),
            project_domain_id: "default".into(),
            ..Default::default()
        }
    }

    // Go: TestNoAuth.
    #[test]
    fn identity_from_headers_and_defaults() {
        let cases = vec![
            (
                "defaults make an admin of the development project",
                headers(&[]),
                RequestContext {
                    roles: vec!["admin".into(), "member".into(), "reader".into()],
                    is_admin: true,
                    ..defaults()
                },
            ),
            (
                "headers set by keystonemiddleware name the caller",
                headers(&[
                    ("X-User-Id", "u1"),
                    ("X-User-Name", "alice"),
                    ("X-Project-Id", "p1"),
                    ("X-Project-Name", "proj"),
                    ("X-User-Domain-Id", "d1"),
                    ("X-User-Domain-Name", "D1"),
                    ("X-Project-Domain-Id", "d2"),
                    ("X-Roles", "member, reader,"),
                    ("X-Auth-Token", "anything"),
                    (REQUEST_ID_HEADER, "req-1"),
                ]),
                RequestContext {
                    request_id: "req-1".into(),
                    auth_token: Some("anything".into()),
                    user_id: "u1".into(),
                    user_name: "alice".into(),
                    user_domain_id: "d1".into(),
                    user_domain_name: "D1".into(),
                    project_id: "p1".into(),
                    project_name: "proj".into(),
                    project_domain_id: "d2".into(),
                    roles: vec!["member".into(), "reader".into()],
                    ..Default::default()
                },
            ),
            (
                "an empty X-Roles means no role",
                headers(&[("X-Roles", "")]),
                defaults(),
            ),
            (
                "system and domain scope come from headers",
                headers(&[
                    ("X-System-Scope", "all"),
                    ("X-Domain-Id", "default"),
                    ("X-Domain-Name", "Default"),
                    ("X-Roles", "Admin"),
                ]),
                RequestContext {
                    domain_id: "default".into(),
                    domain_name: "Default".into(),
                    system_scope: "all".into(),
                    roles: vec!["Admin".into()],
                    is_admin: true,
                    ..defaults()
                },
            ),
        ];
        let na = NoAuth::new(admin_role());
        for (name, h, want) in cases {
            assert_eq!(fields(&na.authenticate(&h)), fields(&want), "{name}");
        }
    }

    // Go: TestRequestIDFromContext. The request id comes from the header the
    // request-id layer sets before authentication (there is no earlier
    // context to take it from here).
    #[test]
    fn request_id_comes_from_the_pipeline_header() {
        let na = NoAuth::new(admin_role());
        let ctx = na.authenticate(&headers(&[(REQUEST_ID_HEADER, "req-header")]));
        assert_eq!(ctx.request_id, "req-header");
        assert_eq!(na.authenticate(&headers(&[])).request_id, "");
    }

    #[test]
    fn is_admin_is_the_rule_passed_in() {
        let never: IsAdmin = std::sync::Arc::new(|_| false);
        assert!(!NoAuth::new(never).authenticate(&headers(&[])).is_admin);
    }
}
