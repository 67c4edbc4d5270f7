//! The test side of the real Keystone that `scripts/ci/keystone.sh` starts:
//! its URL and users from the environment, tokens of any scope, revocation,
//! application credentials and admin calls to the identity API.
//!
//! A test that needs it calls [`Identity::new`], which gives `None` (the
//! test then returns, having printed why it skipped) when the environment
//! does not name a Keystone, and fails the test when `CI=true`.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::token::parse_expiry;

/// The users keystone.sh creates: admin (project admin, and admin of the
/// default domain and the system), magnum (admin of project service), demo
/// (member and reader of project demo), alt (member of project alt).
pub(crate) const USERS: [&str; 4] = ["admin", "magnum", "demo", "alt"];

/// The value of environment variable `name`; `None` (with a message) when it
/// is unset, a panic when it is unset and `CI=true`.
pub(crate) fn env(test: &str, name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!(
                    "{test}: {name} is not set (required when CI=true): run scripts/ci/keystone.sh"
                );
            }
            eprintln!(
                "{test}: skipped: {name} is not set (eval \"$(scripts/ci/keystone.sh)\" to run against a real Keystone)"
            );
            None
        }
    }
}

/// What a test knows about the Keystone of keystone.sh.
pub(crate) struct Identity {
    /// The identity v3 URL, e.g. `http://127.0.0.1:15000/v3`.
    pub(crate) url: String,
    /// The users' passwords, by user name.
    pub(crate) passwords: HashMap<&'static str, String>,
    client: reqwest::Client,
}

/// A token Keystone issued.
pub(crate) struct Issued {
    pub(crate) token: String,
    pub(crate) expires_at: DateTime<Utc>,
    pub(crate) project_id: String,
    pub(crate) user_id: String,
}

impl Identity {
    /// Reads `OPENKEEL_TEST_KEYSTONE_URL` and the users' passwords
    /// (`OPENKEEL_TEST_KEYSTONE_<USER>_PASSWORD`).
    pub(crate) fn new(test: &str) -> Option<Self> {
        let url = env(test, "OPENKEEL_TEST_KEYSTONE_URL")?
            .trim_end_matches('/')
            .to_owned();
        let mut passwords = HashMap::new();
        for user in USERS {
            let pw = env(
                test,
                &format!("OPENKEEL_TEST_KEYSTONE_{}_PASSWORD", user.to_uppercase()),
            )?;
            passwords.insert(user, pw);
        }
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap_or_else(|e| panic!("HTTP client: {e}"));
        Some(Self {
            url,
            passwords,
            client,
        })
    }

    /// The origin of the Keystone URL (`http://127.0.0.1:15000`).
    pub(crate) fn origin(&self) -> String {
        self.url.strip_suffix("/v3").unwrap_or(&self.url).to_owned()
    }

    pub(crate) fn password(&self, user: &str) -> &str {
        self.passwords
            .get(user)
            .map(String::as_str)
            .unwrap_or_default()
    }

    /// Sends a request to Keystone and returns the status, the headers and
    /// the decoded body (`Null` when empty).
    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut req = self
            .client
            .request(method.clone(), format!("{}{path}", self.url));
        if let Some(t) = token {
            req = req.header("x-auth-token", t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => panic!("keystone: {method} {path}: {e}"),
        };
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let raw = resp.bytes().await.unwrap_or_default();
        let value = if raw.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&raw).unwrap_or(Value::Null)
        };
        (status, headers, value)
    }

    /// A token of `user` with `scope` (`{"project": …}`, `{"domain": …}`,
    /// `{"system": {"all": true}}`).
    pub(crate) async fn issue(&self, user: &str, scope: Value) -> Issued {
        let body = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": user, "domain": {"id": "default"}, "password": self.password(user)}}},
            "scope": scope,
        }});
        let (status, headers, body) = self
            .send(reqwest::Method::POST, "/auth/tokens", None, Some(body))
            .await;
        assert_eq!(status, 201, "issue a token for {user}");
        let token = headers
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let t = &body["token"];
        Issued {
            token,
            expires_at: parse_expiry(t["expires_at"].as_str().unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}")),
            project_id: t["project"]["id"].as_str().unwrap_or_default().to_owned(),
            user_id: t["user"]["id"].as_str().unwrap_or_default().to_owned(),
        }
    }

    /// A token of `user` in its project (magnum's is service).
    pub(crate) async fn project_token(&self, user: &str, project: &str) -> Issued {
        self.issue(user, project_scope(project)).await
    }

    /// Revokes `token` (`DELETE /v3/auth/tokens`) with an admin token.
    pub(crate) async fn revoke(&self, token: &str) {
        let admin = self.project_token("admin", "admin").await;
        let resp = self
            .client
            .delete(format!("{}/auth/tokens", self.url))
            .header("x-auth-token", admin.token)
            .header("x-subject-token", token)
            .send()
            .await;
        match resp {
            Ok(r) => assert_eq!(r.status().as_u16(), 204, "revoke"),
            Err(e) => panic!("revoke: {e}"),
        }
    }

    /// Creates an application credential for the owner of `owner` (with
    /// `access_rules` when given), returns a token obtained with it and the
    /// credential's id (remove it with [`Identity::delete_app_credential`]).
    pub(crate) async fn app_credential_token(
        &self,
        owner: &Issued,
        access_rules: Option<Value>,
    ) -> (String, String) {
        let name = format!("okm-auth-test-{}", uuid::Uuid::new_v4().simple());
        let mut ac = json!({ "name": name });
        if let (Some(rules), Some(obj)) = (access_rules, ac.as_object_mut()) {
            obj.insert("access_rules".to_owned(), rules);
        }
        let (status, _, body) = self
            .send(
                reqwest::Method::POST,
                &format!("/users/{}/application_credentials", owner.user_id),
                Some(&owner.token),
                Some(json!({ "application_credential": ac })),
            )
            .await;
        assert_eq!(status, 201, "create an application credential: {body}");
        let id = body["application_credential"]["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let secret = body["application_credential"]["secret"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let (status, headers, _) = self
            .send(
                reqwest::Method::POST,
                "/auth/tokens",
                None,
                Some(json!({"auth": {"identity": {
                    "methods": ["application_credential"],
                    "application_credential": {"id": id, "secret": secret},
                }}})),
            )
            .await;
        assert_eq!(status, 201, "application credential token");
        let token = headers
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        (token, id)
    }

    /// Deletes an application credential of `owner` (cleanup; errors ignored).
    pub(crate) async fn delete_app_credential(&self, owner: &Issued, id: &str) {
        let _ = self
            .client
            .delete(format!(
                "{}/users/{}/application_credentials/{id}",
                self.url, owner.user_id
            ))
            .header("x-auth-token", &owner.token)
            .send()
            .await;
    }
}

/// The scope of a project of the default domain.
pub(crate) fn project_scope(name: &str) -> Value {
    json!({"project": {"name": name, "domain": {"id": "default"}}})
}
