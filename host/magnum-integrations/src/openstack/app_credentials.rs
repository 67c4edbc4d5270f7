//! Keystone application credentials: created as the calling user (with the
//! user's token: since trusts are gone it is the only way to act for the
//! user), deleted by id with the service credentials, never granting admin.

use std::fmt;

use http::Method;
use serde::Deserialize;
use serde_json::json;

use super::catalog::service_roots;
use super::clients::path_segment;
use super::error::{ErrorKind, OpenStackError, SettingsError};
use super::session::{Caller, Session, Who};

/// The roles a cluster's application credential gets when the caller has
/// them: what the cloud provider, the CSI drivers and CAPO need, never admin
/// (driver-capi.md § 6.2).
pub const DEFAULT_APP_CREDENTIAL_ROLES: [&str; 2] = ["member", "load-balancer_member"];

/// The settings of [`AppCredentials`].
#[derive(Clone, Debug, Default)]
pub struct AppCredentialSettings {
    /// The Keystone v3 endpoint user calls go to
    /// (`https://keystone.example.com/v3`). Required.
    pub auth_url: String,
    /// The roles a new credential gets, among those the caller has
    /// (`[capi]/app_credential_roles`; empty:
    /// [`DEFAULT_APP_CREDENTIAL_ROLES`]). admin is never granted.
    pub roles: Vec<String>,
}

/// A Keystone application credential.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AppCredential {
    /// `id` and `secret` authenticate; the secret is never logged (`Debug`
    /// redacts it).
    pub id: String,
    pub secret: String,
    pub name: String,
    /// The owner, and the project the credential is scoped to.
    pub user_id: String,
    pub project_id: String,
    /// The role names granted (Keystone adds the roles they imply).
    pub roles: Vec<String>,
}

impl fmt::Debug for AppCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppCredential")
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .field("name", &self.name)
            .field("user_id", &self.user_id)
            .field("project_id", &self.project_id)
            .field("roles", &self.roles)
            .finish()
    }
}

/// Creates application credentials as the calling user
/// (`POST /v3/users/{user_id}/application_credentials` with the user's
/// token) and deletes them by id with the service credentials. Cheap to
/// clone.
#[derive(Clone, Debug)]
pub struct AppCredentials {
    session: Session,
    /// Keystone's `…/v3/`.
    base: String,
    roles: Vec<String>,
}

#[derive(Deserialize)]
struct Role {
    #[serde(default)]
    name: String,
}

impl AppCredentials {
    /// Checks the Keystone URL; nothing is contacted.
    pub fn new(session: Session, settings: AppCredentialSettings) -> Result<Self, SettingsError> {
        if settings.auth_url.is_empty() {
            return Err(SettingsError(
                "application credentials need the Keystone URL".to_owned(),
            ));
        }
        let (_, base) = service_roots(&settings.auth_url, "v3")
            .map_err(|e| SettingsError(format!("application credentials: Keystone URL: {e}")))?;
        let roles = if settings.roles.is_empty() {
            DEFAULT_APP_CREDENTIAL_ROLES.map(str::to_owned).to_vec()
        } else {
            settings.roles
        };
        Ok(Self {
            session,
            base,
            roles,
        })
    }

    /// Makes an application credential owned by the caller, named `name`,
    /// restricted (it cannot create further credentials or trusts), with the
    /// configured roles the caller actually has (its token's roles, read from
    /// Keystone when the caller does not say), never admin. A caller with
    /// none of them gets [`ErrorKind::NoGrantableRole`] and Keystone is not
    /// called.
    pub async fn create(
        &self,
        caller: &Caller,
        name: &str,
        description: &str,
    ) -> Result<AppCredential, OpenStackError> {
        let context = format!("keystone: create application credential {name}");
        // The user's token even when the caller asks for the service
        // credentials: only the user can create a credential of the user.
        let token = caller.token.as_deref().filter(|t| !t.is_empty());
        let (Some(token), false) = (token, caller.user_id.is_empty()) else {
            return Err(OpenStackError::new(
                context,
                ErrorKind::Invalid(
                    "creating an application credential needs the user's token and id".to_owned(),
                ),
            ));
        };
        let have = match &caller.roles {
            Some(r) => r.clone(),
            None => self.token_roles(token).await?,
        };
        let roles = grantable(&self.roles, &have);
        if roles.is_empty() {
            return Err(OpenStackError::new(context, ErrorKind::NoGrantableRole));
        }
        let body = json!({"application_credential": {
            "name": name,
            "description": description,
            "unrestricted": false,
            "roles": roles.iter().map(|r| json!({"name": r})).collect::<Vec<_>>(),
        }});
        let url = format!(
            "{}users/{}/application_credentials",
            self.base,
            path_segment(&caller.user_id)
        );
        #[derive(Deserialize)]
        struct Created {
            application_credential: Body,
        }
        #[derive(Deserialize)]
        struct Body {
            id: String,
            #[serde(default)]
            name: String,
            secret: String,
            #[serde(default)]
            project_id: Option<String>,
            #[serde(default)]
            roles: Vec<Role>,
        }
        let created: Created = self
            .session
            .send(
                &Who::User(token.to_owned()),
                Method::POST,
                &url,
                Some(&body),
                &context,
            )
            .await?
            .expect(&[201], &context)?
            .json(&context)
            // The decoder's message may quote the answer, which holds the
            // secret.
            .map_err(|_| {
                OpenStackError::new(
                    &context,
                    ErrorKind::Decode("not an application credential".to_owned()),
                )
            })?;
        let ac = created.application_credential;
        Ok(AppCredential {
            id: ac.id,
            secret: ac.secret,
            name: ac.name,
            user_id: caller.user_id.clone(),
            project_id: ac.project_id.unwrap_or_default(),
            roles: ac.roles.into_iter().map(|r| r.name).collect(),
        })
    }

    /// The role names of the caller's own token (`GET /v3/auth/tokens`).
    async fn token_roles(&self, token: &str) -> Result<Vec<String>, OpenStackError> {
        const CONTEXT: &str = "keystone: read the caller's roles";
        let mut headers = http::HeaderMap::new();
        let mut subject = http::HeaderValue::from_str(token).map_err(|_| {
            OpenStackError::new(
                CONTEXT,
                ErrorKind::Invalid("the token cannot be sent in a header".to_owned()),
            )
        })?;
        subject.set_sensitive(true);
        headers.insert("x-subject-token", subject);
        #[derive(Deserialize)]
        struct Validated {
            token: TokenRoles,
        }
        #[derive(Deserialize)]
        struct TokenRoles {
            #[serde(default)]
            roles: Vec<Role>,
        }
        let v: Validated = self
            .session
            .request(
                Method::GET,
                &format!("{}auth/tokens", self.base),
                token,
                None,
                &headers,
                CONTEXT,
            )
            .await?
            .expect(&[200], CONTEXT)?
            .json(CONTEXT)?;
        Ok(v.token.roles.into_iter().map(|r| r.name).collect())
    }

    /// Removes the application credential `id` of `user_id` with the service
    /// credentials. A credential (or user) that no longer exists is not an
    /// error; a refusal is ([`OpenStackError::is_forbidden`]).
    pub async fn delete(&self, user_id: &str, id: &str) -> Result<(), OpenStackError> {
        let context = format!("keystone: delete application credential {id}");
        if user_id.is_empty() || id.is_empty() {
            return Err(OpenStackError::new(
                context,
                ErrorKind::Invalid(
                    "deleting an application credential needs its user and id".to_owned(),
                ),
            ));
        }
        let url = format!(
            "{}users/{}/application_credentials/{}",
            self.base,
            path_segment(user_id),
            path_segment(id)
        );
        self.session
            .send(&Who::Service, Method::DELETE, &url, None, &context)
            .await?
            .expect(&[204, 404], &context)?;
        Ok(())
    }
}

/// `want` ∩ `have` (case-insensitive, in `want`'s order), without admin.
pub(crate) fn grantable(want: &[String], have: &[String]) -> Vec<String> {
    want.iter()
        .filter(|w| !w.eq_ignore_ascii_case("admin"))
        .filter(|w| have.iter().any(|h| h.eq_ignore_ascii_case(w)))
        .cloned()
        .collect()
}
