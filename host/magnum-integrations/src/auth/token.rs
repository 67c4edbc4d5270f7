//! Keystone's v3 token body (`{"token": {...}}`) and the caller's identity
//! built from it, as Magnum's `ContextHook` builds its context from the
//! headers keystonemiddleware sets (`X-User-Id`, `X-Project-Id`, `X-Roles`…).

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use magnum_domain::RequestContext;
use serde::Deserialize;

use super::IsAdmin;

/// The part of a token body the context needs. Every field may be absent or
/// null; what must be there is checked by [`identity_from_token`].
#[derive(Deserialize)]
struct TokenBody {
    token: Option<Token>,
}

#[derive(Deserialize, Default)]
struct Token {
    expires_at: Option<String>,
    user: Option<User>,
    project: Option<Project>,
    domain: Option<Named>,
    system: Option<BTreeMap<String, bool>>,
    roles: Option<Vec<Named>>,
    catalog: Option<serde_json::Value>,
    application_credential: Option<ApplicationCredential>,
}

#[derive(Deserialize, Default)]
struct Named {
    id: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize, Default)]
struct User {
    id: Option<String>,
    name: Option<String>,
    domain: Option<Named>,
}

#[derive(Deserialize, Default)]
struct Project {
    id: Option<String>,
    name: Option<String>,
    domain: Option<Named>,
}

#[derive(Deserialize, Default)]
struct ApplicationCredential {
    #[serde(default, deserialize_with = "present")]
    access_rules: Option<serde_json::Value>,
}

/// Deserializes a present field, `null` included, as `Some`: keystonemiddleware
/// refuses a token whose `access_rules` key exists with any value but None.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

/// A validated token's identity: the caller's context without the
/// per-request fields (request id, token), and the token's expiry.
#[derive(Clone, Debug)]
pub(crate) struct Identity {
    pub(crate) context: RequestContext,
    pub(crate) expires: DateTime<Utc>,
}

impl Identity {
    /// The context of one request made with this identity.
    pub(crate) fn context_for(&self, request_id: String, token: String) -> RequestContext {
        let mut ctx = self.context.clone();
        ctx.request_id = request_id;
        ctx.auth_token = Some(token);
        ctx
    }
}

/// Parses Keystone's `expires_at` (`2026-11-30T04:31:08.000000Z`), also
/// accepting other RFC 3339 forms and Keystone's own form without a zone
/// designator (UTC).
pub(crate) fn parse_expiry(s: &str) -> Result<DateTime<Utc>, String> {
    if s.is_empty() {
        return Err("token has no expires_at".to_owned());
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
        .map(|t| t.and_utc())
        .map_err(|e| format!("expires_at {s:?}: {e}"))
}

/// Builds the caller's identity from a validated token body. `is_admin` is
/// the `context_is_admin` rule, evaluated once, as Magnum evaluates it at
/// context creation (magnum/common/context.py).
pub(crate) fn identity_from_token(raw: &[u8], is_admin: &IsAdmin) -> Result<Identity, String> {
    let body: TokenBody =
        serde_json::from_slice(raw).map_err(|e| format!("decode token body: {e}"))?;
    let t = body.token.unwrap_or_default();
    let expires = parse_expiry(t.expires_at.as_deref().unwrap_or(""))?;
    let user = t.user.unwrap_or_default();
    let user_id = user.id.unwrap_or_default();
    if user_id.is_empty() {
        return Err("token has no user".to_owned());
    }
    // keystonemiddleware: auth_token/__init__.py (validate_allowed_request) —
    // a token of an application credential restricted by access rules is
    // refused unless [keystone_authtoken]/service_type is set, which Magnum's
    // configuration does not do.
    if let Some(ac) = &t.application_credential
        && ac.access_rules.as_ref().is_some_and(|r| !r.is_null())
    {
        return Err("application credential with access rules".to_owned());
    }
    let user_domain = user.domain.unwrap_or_default();
    let mut ctx = RequestContext {
        user_id,
        user_name: user.name.unwrap_or_default(),
        user_domain_id: user_domain.id.unwrap_or_default(),
        user_domain_name: user_domain.name.unwrap_or_default(),
        token_expires_unix: expires.timestamp(),
        ..RequestContext::default()
    };
    if let Some(p) = t.project {
        ctx.project_id = p.id.unwrap_or_default();
        ctx.project_name = p.name.unwrap_or_default();
        ctx.project_domain_id = p.domain.and_then(|d| d.id).unwrap_or_default();
    }
    if let Some(d) = t.domain {
        ctx.domain_id = d.id.unwrap_or_default();
        ctx.domain_name = d.name.unwrap_or_default();
    }
    if t.system
        .is_some_and(|s| s.get("all").copied().unwrap_or(false))
    {
        ctx.system_scope = "all".to_owned();
    }
    ctx.roles = t
        .roles
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.name.unwrap_or_default())
        .collect();
    if let Some(catalog) = t.catalog.filter(|c| !c.is_null()) {
        ctx.service_catalog =
            Some(serde_json::to_vec(&catalog).map_err(|e| format!("encode catalog: {e}"))?);
    }
    ctx.is_admin = is_admin(&ctx);
    Ok(Identity {
        context: ctx,
        expires,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::testing::{admin_role, fields};

    const EXP: &str = "2026-11-30T13:00:00.000000Z";

    fn exp_unix() -> i64 {
        chrono::NaiveDate::from_ymd_opt(2026, 11, 30)
            .and_then(|d| d.and_hms_opt(13, 0, 0))
            .map(|t| t.and_utc().timestamp())
            .unwrap_or_default()
    }

    // Go: TestContextFromToken (the five accepted bodies).
    #[test]
    fn contexts_from_token_bodies() {
        let base = |c: RequestContext| RequestContext {
            token_expires_unix: exp_unix(),
            ..c
        };
        let cases: Vec<(&str, String, RequestContext)> = vec![
            (
                "admin role is matched without regard to case",
                format!(
                    r#"{{"token": {{"expires_at": "{EXP}", "user": {{"id": "u1", "name": "boss", "domain": {{"id": "d1", "name": "D1"}}}},
                      "project": {{"id": "p1", "name": "proj", "domain": {{"id": "d2", "name": "D2"}}}}, "roles": [{{"id": "r", "name": "Admin"}}]}}}}"#
                ),
                base(RequestContext {
                    user_id: "u1".into(),
                    user_name: "boss".into(),
                    user_domain_id: "d1".into(),
                    user_domain_name: "D1".into(),
                    project_id: "p1".into(),
                    project_name: "proj".into(),
                    project_domain_id: "d2".into(),
                    roles: vec!["Admin".into()],
                    is_admin: true,
                    ..Default::default()
                }),
            ),
            (
                "domain-scoped token fills the domain and no project",
                format!(
                    r#"{{"token": {{"expires_at": "{EXP}", "user": {{"id": "u1", "name": "admin", "domain": {{"id": "default", "name": "Default"}}}},
                      "domain": {{"id": "default", "name": "Default"}}, "roles": [{{"id": "r", "name": "admin"}}]}}}}"#
                ),
                base(RequestContext {
                    user_id: "u1".into(),
                    user_name: "admin".into(),
                    user_domain_id: "default".into(),
                    user_domain_name: "Default".into(),
                    domain_id: "default".into(),
                    domain_name: "Default".into(),
                    roles: vec!["admin".into()],
                    is_admin: true,
                    ..Default::default()
                }),
            ),
            (
                "system-scoped token has system scope all",
                format!(
                    r#"{{"token": {{"expires_at": "{EXP}", "user": {{"id": "u1", "name": "admin", "domain": {{"id": "default", "name": "Default"}}}},
                      "system": {{"all": true}}, "roles": [{{"id": "r", "name": "reader"}}]}}}}"#
                ),
                base(RequestContext {
                    user_id: "u1".into(),
                    user_name: "admin".into(),
                    user_domain_id: "default".into(),
                    user_domain_name: "Default".into(),
                    system_scope: "all".into(),
                    roles: vec!["reader".into()],
                    ..Default::default()
                }),
            ),
            (
                "application credential without access rules is accepted",
                format!(
                    r#"{{"token": {{"expires_at": "{EXP}", "user": {{"id": "u1", "name": "x", "domain": {{"id": "default", "name": "Default"}}}},
                      "application_credential": {{"id": "ac", "name": "n", "restricted": true}}, "roles": [{{"id": "r", "name": "member"}}]}}}}"#
                ),
                base(RequestContext {
                    user_id: "u1".into(),
                    user_name: "x".into(),
                    user_domain_id: "default".into(),
                    user_domain_name: "Default".into(),
                    roles: vec!["member".into()],
                    ..Default::default()
                }),
            ),
            (
                "unscoped token has no roles",
                r#"{"token": {"expires_at": "2026-11-30T13:00:00Z", "user": {"id": "u1", "name": "x", "domain": {"id": "default", "name": "Default"}}}}"#.to_owned(),
                base(RequestContext {
                    user_id: "u1".into(),
                    user_name: "x".into(),
                    user_domain_id: "default".into(),
                    user_domain_name: "Default".into(),
                    ..Default::default()
                }),
            ),
        ];
        for (name, body, want) in cases {
            let id = identity_from_token(body.as_bytes(), &admin_role())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(fields(&id.context), fields(&want), "{name}");
            assert_eq!(id.expires.timestamp(), exp_unix(), "{name}");
        }
    }

    // Go: TestContextFromToken (the five refused bodies).
    #[test]
    fn refuses_bodies_keystone_should_never_send() {
        let cases = [
            ("not JSON", r#"{"token": "#.to_owned()),
            (
                "no expires_at",
                r#"{"token": {"user": {"id": "u"}}}"#.to_owned(),
            ),
            (
                "bad expires_at",
                r#"{"token": {"expires_at": "tomorrow", "user": {"id": "u"}}}"#.to_owned(),
            ),
            (
                "no user",
                format!(r#"{{"token": {{"expires_at": "{EXP}"}}}}"#),
            ),
            (
                "access rules",
                format!(
                    r#"{{"token": {{"expires_at": "{EXP}", "user": {{"id": "u"}}, "application_credential": {{"id": "a",
                      "restricted": true, "access_rules": [{{"id": "r", "service": "container-infra", "path": "/v1/clusters", "method": "GET"}}]}}}}}}"#
                ),
            ),
        ];
        for (name, body) in cases {
            assert!(
                identity_from_token(body.as_bytes(), &admin_role()).is_err(),
                "refuses a body with {name}"
            );
        }
    }

    #[test]
    fn access_rules_refused_even_empty_but_not_null() {
        let body = |rules: &str| {
            format!(
                r#"{{"token": {{"expires_at": "{EXP}", "user": {{"id": "u"}}, "application_credential": {{"id": "a", "access_rules": {rules}}}}}}}"#
            )
        };
        // keystonemiddleware refuses any access_rules that is not None.
        assert!(identity_from_token(body("[]").as_bytes(), &admin_role()).is_err());
        assert!(identity_from_token(body("null").as_bytes(), &admin_role()).is_ok());
    }

    #[test]
    fn catalog_is_kept_as_json() {
        let body = format!(
            r#"{{"token": {{"expires_at": "{EXP}", "user": {{"id": "u"}}, "catalog": [{{"type": "container-infra", "endpoints": []}}]}}}}"#
        );
        let id =
            identity_from_token(body.as_bytes(), &admin_role()).unwrap_or_else(|e| panic!("{e}"));
        let catalog: serde_json::Value =
            serde_json::from_slice(id.context.service_catalog.as_deref().unwrap_or_default())
                .unwrap_or_default();
        assert_eq!(catalog[0]["type"], "container-infra");
        let body = format!(
            r#"{{"token": {{"expires_at": "{EXP}", "user": {{"id": "u"}}, "catalog": null}}}}"#
        );
        let id =
            identity_from_token(body.as_bytes(), &admin_role()).unwrap_or_else(|e| panic!("{e}"));
        assert!(id.context.service_catalog.is_none());
    }

    #[test]
    fn expiry_forms() {
        let want = exp_unix();
        for s in [
            "2026-11-30T13:00:00.000000Z",
            "2026-11-30T13:00:00Z",
            "2026-11-30T14:00:00+01:00",
            "2026-11-30T13:00:00.000000",
            "2026-11-30T13:00:00",
        ] {
            assert_eq!(parse_expiry(s).map(|t| t.timestamp()), Ok(want), "{s}");
        }
        assert!(parse_expiry("").is_err());
        assert!(parse_expiry("tomorrow").is_err());
    }
}
