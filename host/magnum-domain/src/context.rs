//! The identity and metadata of one API call.

use std::fmt;

/// The identity and request metadata of one API call, built by the auth
/// layer the way Magnum's `ContextHook` builds its `RequestContext` from
/// keystonemiddleware's headers.
#[derive(Clone, Default)]
pub struct RequestContext {
    pub request_id: String,
    /// The caller's token; never logged (`Debug` redacts it).
    pub auth_token: Option<String>,
    pub user_id: String,
    pub user_name: String,
    pub user_domain_id: String,
    pub user_domain_name: String,
    pub project_id: String,
    pub project_name: String,
    pub project_domain_id: String,
    pub domain_id: String,
    pub domain_name: String,
    pub roles: Vec<String>,
    /// `"all"` for a system-scoped token, empty otherwise.
    pub system_scope: String,
    /// Computed once at context creation from the `context_is_admin` rule, as
    /// `magnum/common/context.py` does.
    pub is_admin: bool,
    /// Set when an `*_all_projects` rule let the caller see every project.
    pub all_projects: bool,
    /// The token's expiry, Unix seconds (0 in no-auth mode).
    pub token_expires_unix: i64,
    /// The token's service catalog (JSON), to call other services as the
    /// caller; `None` in no-auth mode.
    pub service_catalog: Option<Vec<u8>>,
}

impl RequestContext {
    /// Whether the caller holds `role`, compared case-insensitively as
    /// oslo.policy compares roles.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r.eq_ignore_ascii_case(role))
    }
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("request_id", &self.request_id)
            .field(
                "auth_token",
                &self.auth_token.as_ref().map(|_| "<redacted>"),
            )
            .field("user_id", &self.user_id)
            .field("project_id", &self.project_id)
            .field("roles", &self.roles)
            .field("system_scope", &self.system_scope)
            .field("is_admin", &self.is_admin)
            .field("all_projects", &self.all_projects)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_compare_case_insensitively() {
        let c = RequestContext {
            roles: vec!["Admin".into(), "member".into()],
            ..Default::default()
        };
        assert!(c.has_role("admin"));
        assert!(c.has_role("MEMBER"));
        assert!(!c.has_role("reader"));
    }

    #[test]
    fn debug_never_shows_the_token() {
        let c = RequestContext {
            auth_token: Some("gAAAAA-secret".into()),
            ..Default::default()
        };
        let shown = format!("{c:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("<redacted>"));
    }
}
