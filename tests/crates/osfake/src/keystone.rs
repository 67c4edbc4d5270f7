//! The test side of the real Keystone that `scripts/ci/keystone.sh` starts:
//! its URL and users from the environment, project-scoped tokens, admin
//! calls to the identity API, and catalog regions published for a test
//! (pointing Keystone's catalog at a double).
//!
//! A suite that needs it calls [`Identity::from_env`], which gives `None`
//! (after printing why the test skips) when the environment names no
//! Keystone, and panics when `CI=true`. The helpers panic on unexpected
//! answers, as test code does.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

/// The users keystone.sh creates (each with a project of the same name,
/// except magnum, which lives in project service).
pub const USERS: [&str; 4] = ["admin", "magnum", "demo", "alt"];
/// The projects whose ids [`Identity::from_env`] looks up.
pub const PROJECTS: [&str; 4] = ["admin", "demo", "alt", "service"];

/// The value of environment variable `name`; `None` (with a message) when it
/// is unset, a panic when it is unset and `CI=true`.
pub fn env(name: &str) -> Option<String> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("{name} is not set (required when CI=true): run scripts/ci/keystone.sh");
            }
            eprintln!(
                "skipped: {name} is not set (eval \"$(scripts/ci/keystone.sh)\" to run against a real Keystone)"
            );
            None
        }
    }
}

/// What a test knows about the Keystone of keystone.sh.
pub struct Identity {
    /// The identity v3 URL, e.g. `http://127.0.0.1:15000/v3`.
    pub url: String,
    /// The users' passwords, by user name.
    pub passwords: BTreeMap<String, String>,
    /// The ids of the projects admin, demo, alt and service.
    pub projects: BTreeMap<String, String>,
    /// A token of admin in project admin (never printed by this module).
    pub admin: String,
    client: reqwest::Client,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("url", &self.url)
            .field("projects", &self.projects)
            .finish_non_exhaustive()
    }
}

/// A catalog region published by [`Identity::publish_catalog`]; remove its
/// endpoints with [`PublishedCatalog::remove`] when the test ends.
#[derive(Debug)]
#[must_use = "remove the endpoints when the test ends"]
pub struct PublishedCatalog {
    /// The region.
    pub region: String,
}

impl Identity {
    /// Reads `OPENKEEL_TEST_KEYSTONE_URL` and the users' passwords
    /// (`OPENKEEL_TEST_KEYSTONE_<USER>_PASSWORD`), takes an admin token and
    /// looks up the projects' ids.
    pub async fn from_env() -> Option<Self> {
        let url = env("OPENKEEL_TEST_KEYSTONE_URL")?
            .trim_end_matches('/')
            .to_owned();
        let mut passwords = BTreeMap::new();
        for user in USERS {
            let pw = env(&format!(
                "OPENKEEL_TEST_KEYSTONE_{}_PASSWORD",
                user.to_uppercase()
            ))?;
            passwords.insert(user.to_owned(), pw);
        }
        let client = match reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
        {
            Ok(c) => c,
            Err(e) => panic!("HTTP client: {e}"),
        };
        let mut id = Self {
            url,
            passwords,
            projects: BTreeMap::new(),
            admin: String::new(),
            client,
        };
        id.admin = id.token("admin", "admin").await;
        for p in PROJECTS {
            let (_, out) = id
                .call(
                    None,
                    reqwest::Method::GET,
                    &format!("/projects?domain_id=default&name={p}"),
                    None,
                    &[200],
                )
                .await;
            let Some(pid) = out["projects"][0]["id"].as_str() else {
                panic!("keystone: project {p} not found (run scripts/ci/keystone.sh)");
            };
            id.projects.insert(p.to_owned(), pid.to_owned());
        }
        Some(id)
    }

    /// The password of `user` ("" when unknown).
    pub fn password(&self, user: &str) -> &str {
        self.passwords
            .get(user)
            .map(String::as_str)
            .unwrap_or_default()
    }

    /// A token of `user` scoped to `project`.
    pub async fn token(&self, user: &str, project: &str) -> String {
        let body = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": user, "domain": {"id": "default"}, "password": self.password(user)}}},
            "scope": {"project": {"name": project, "domain": {"id": "default"}}},
        }});
        let resp = self
            .client
            .post(format!("{}/auth/tokens", self.url))
            .json(&body)
            .send()
            .await;
        let resp = match resp {
            Ok(r) => r,
            Err(e) => panic!("keystone: token for {user}: {e}"),
        };
        let status = resp.status().as_u16();
        assert_eq!(status, 201, "keystone: token for {user}");
        match resp
            .headers()
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok())
        {
            Some(t) => t.to_owned(),
            None => panic!("keystone: token for {user}: no X-Subject-Token"),
        }
    }

    /// Sends a request to Keystone with `token` (the admin token when
    /// `None`) and returns the status and the decoded body (`Null` when
    /// empty); panics unless the status is in `want`.
    pub async fn call(
        &self,
        token: Option<&str>,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        want: &[u16],
    ) -> (u16, Value) {
        let mut req = self
            .client
            .request(method.clone(), format!("{}{path}", self.url))
            .header("x-auth-token", token.unwrap_or(&self.admin));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => panic!("keystone: {method} {path}: {e}"),
        };
        let status = resp.status().as_u16();
        let raw = resp.bytes().await.unwrap_or_default();
        assert!(
            want.contains(&status),
            "keystone: {method} {path}: status {status}: {}",
            String::from_utf8_lossy(&raw)
        );
        let value = if raw.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&raw).unwrap_or(Value::Null)
        };
        (status, value)
    }

    /// The id of the user named `name` in the default domain.
    pub async fn user_id(&self, name: &str) -> String {
        let (_, out) = self
            .call(
                None,
                reqwest::Method::GET,
                &format!("/users?domain_id=default&name={name}"),
                None,
                &[200],
            )
            .await;
        match out["users"][0]["id"].as_str() {
            Some(id) => id.to_owned(),
            None => panic!("keystone: user {name} not found (run scripts/ci/keystone.sh)"),
        }
    }

    /// The id of the first service of type `service_type`, created (named
    /// `name`) when there is none.
    pub async fn service_id(&self, service_type: &str, name: &str) -> String {
        let (_, out) = self
            .call(
                None,
                reqwest::Method::GET,
                &format!("/services?type={service_type}"),
                None,
                &[200],
            )
            .await;
        if let Some(id) = out["services"][0]["id"].as_str() {
            return id.to_owned();
        }
        let (_, created) = self
            .call(
                None,
                reqwest::Method::POST,
                "/services",
                Some(json!({"service": {"type": service_type, "name": name, "enabled": true}})),
                &[201],
            )
            .await;
        match created["service"]["id"].as_str() {
            Some(id) => id.to_owned(),
            None => panic!("keystone: create service {service_type}: no id"),
        }
    }

    /// Points the catalog of `region` at a test's services: `urls` holds
    /// `(type, name, url)`. Creates the region if needed, removes the
    /// endpoints an earlier run left in it, and creates one public, internal
    /// and admin endpoint per service. Tests running at the same time must
    /// use different regions.
    pub async fn publish_catalog(
        &self,
        region: &str,
        description: &str,
        urls: &[(&str, &str, &str)],
    ) -> PublishedCatalog {
        let (status, _) = self
            .call(
                None,
                reqwest::Method::GET,
                &format!("/regions/{region}"),
                None,
                &[200, 404],
            )
            .await;
        if status == 404 {
            self.call(
                None,
                reqwest::Method::POST,
                "/regions",
                Some(json!({"region": {"id": region, "description": description}})),
                &[201, 409],
            )
            .await;
        }
        self.clear_region(region).await;
        for (service_type, name, url) in urls {
            let service = self.service_id(service_type, name).await;
            for iface in ["public", "internal", "admin"] {
                self.call(
                    None,
                    reqwest::Method::POST,
                    "/endpoints",
                    Some(
                        json!({"endpoint": {"service_id": service, "interface": iface,
                        "url": url, "region_id": region, "enabled": true}}),
                    ),
                    &[201],
                )
                .await;
            }
        }
        PublishedCatalog {
            region: region.to_owned(),
        }
    }

    /// Removes every endpoint of `region`.
    pub async fn clear_region(&self, region: &str) {
        let (_, out) = self
            .call(
                None,
                reqwest::Method::GET,
                &format!("/endpoints?region_id={region}"),
                None,
                &[200],
            )
            .await;
        for ep in out["endpoints"].as_array().into_iter().flatten() {
            if let Some(id) = ep["id"].as_str() {
                self.call(
                    None,
                    reqwest::Method::DELETE,
                    &format!("/endpoints/{id}"),
                    None,
                    &[204, 404],
                )
                .await;
            }
        }
    }
}

impl PublishedCatalog {
    /// Removes the endpoints published.
    pub async fn remove(self, identity: &Identity) {
        identity.clear_region(&self.region).await;
    }
}
