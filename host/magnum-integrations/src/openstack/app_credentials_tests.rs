//! Application credentials: the role rule, refusals without a call, the
//! timeout, and the real Keystone of scripts/ci/keystone.sh.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use serde_json::json;

use super::app_credentials::grantable;
use super::{
    AppCredential, AppCredentialSettings, AppCredentials, Caller, DEFAULT_APP_CREDENTIAL_ROLES,
    ErrorKind, ServiceCredentials, Session, SessionSettings,
};
use crate::auth::keystonetest::Identity;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn defaults() -> Vec<String> {
    strings(&DEFAULT_APP_CREDENTIAL_ROLES)
}

fn store(
    auth_url: &str,
    roles: &[&str],
    timeout: Duration,
    service: Option<ServiceCredentials>,
) -> AppCredentials {
    let session = Session::new(
        SessionSettings {
            timeout: Some(timeout),
            ..Default::default()
        },
        service,
    );
    let session = match session {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    match AppCredentials::new(
        session,
        AppCredentialSettings {
            auth_url: auth_url.to_owned(),
            roles: strings(roles),
        },
    ) {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    }
}

/// Serves `router` on loopback; the URL.
async fn serve(router: Router) -> String {
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    };
    let url = match listener.local_addr() {
        Ok(a) => format!("http://{a}"),
        Err(e) => panic!("{e}"),
    };
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    url
}

fn caller(roles: &[&str]) -> Caller {
    Caller {
        token: Some("t".into()),
        user_id: "u".into(),
        roles: Some(strings(roles)),
        ..Default::default()
    }
}

// Go: TestGrantable.
#[test]
fn grantable_roles_are_the_wanted_ones_the_caller_has_but_admin() {
    for (want, have, got) in [
        (
            defaults(),
            strings(&["reader", "member"]),
            strings(&["member"]),
        ),
        (
            defaults(),
            strings(&["Member", "load-balancer_member", "admin"]),
            defaults(),
        ),
        (
            strings(&["admin", "member"]),
            strings(&["admin", "member"]),
            strings(&["member"]),
        ),
        (defaults(), strings(&["reader"]), vec![]),
    ] {
        assert_eq!(
            grantable(&want, &have),
            got,
            "grantable({want:?}, {have:?})"
        );
    }
}

// Go: TestAppCredentialsRefuseWithoutGrantableRole.
#[tokio::test]
async fn no_grantable_role_is_refused_without_calling_keystone() {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let url = serve(Router::new().fallback(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async { "" }
    }))
    .await;
    let a = store(&format!("{url}/v3"), &[], Duration::from_secs(5), None);
    let e = a.create(&caller(&["reader"]), "magnum-x-abcde", "d").await;
    assert!(
        matches!(&e, Err(e) if *e.kind() == ErrorKind::NoGrantableRole),
        "create = {e:?}, want NoGrantableRole"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "Keystone was called");
    // Without a token or a user, nothing is sent either.
    for c in [
        Caller {
            token: None,
            ..caller(&["member"])
        },
        Caller {
            user_id: String::new(),
            ..caller(&["member"])
        },
    ] {
        assert!(a.create(&c, "magnum-x-abcde", "d").await.is_err());
    }
    assert!(a.delete("", "id").await.is_err());
    assert_eq!(hits.load(Ordering::SeqCst), 0, "Keystone was called");
    // And an empty Keystone URL is refused at construction.
    let session = Session::new(SessionSettings::default(), None);
    let built = session.map(|s| AppCredentials::new(s, AppCredentialSettings::default()));
    assert!(matches!(built, Ok(Err(_))), "no Keystone URL");
}

// Go: TestAppCredentialsTimeout.
#[tokio::test]
async fn a_hanging_keystone_is_bounded_by_the_timeout() {
    let url = serve(Router::new().fallback(std::future::pending::<&'static str>)).await;
    let a = store(&format!("{url}/v3"), &[], Duration::from_millis(300), None);
    let e = match a.create(&caller(&["member"]), "magnum-x-abcde", "d").await {
        Ok(ac) => panic!("create against a hanging Keystone succeeded: {ac:?}"),
        Err(e) => e,
    };
    assert!(e.is_timeout(), "{e}");
    assert!(
        !e.to_string().contains("\"t\""),
        "the error shows the token: {e}"
    );
}

/// A project-scoped login of `user`: the caller with its token, ids and
/// role names.
async fn login(k: &Identity, user: &str, project: &str) -> Caller {
    let body = json!({"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"id": "default"}, "password": k.password(user)}}},
        "scope": {"project": {"name": project, "domain": {"id": "default"}}},
    }});
    let (status, headers, body) = k
        .send(reqwest::Method::POST, "/auth/tokens", None, Some(body))
        .await;
    assert_eq!(status, 201, "login {user}");
    let t = &body["token"];
    Caller {
        token: headers
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        user_id: t["user"]["id"].as_str().unwrap_or_default().to_owned(),
        project_id: t["project"]["id"].as_str().unwrap_or_default().to_owned(),
        service_catalog: None,
        roles: Some(
            t["roles"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["name"].as_str().map(str::to_owned))
                .collect(),
        ),
        service: false,
    }
}

/// Whether the application credential gets a token.
async fn authenticates(k: &Identity, ac: &AppCredential) -> bool {
    let body = json!({"auth": {"identity": {
        "methods": ["application_credential"],
        "application_credential": {"id": ac.id, "secret": ac.secret},
    }}});
    let (status, _, _) = k
        .send(reqwest::Method::POST, "/auth/tokens", None, Some(body))
        .await;
    status == 201
}

fn admin_service(k: &Identity) -> ServiceCredentials {
    ServiceCredentials {
        auth_url: k.url.clone(),
        username: "admin".into(),
        password: k.password("admin").to_owned(),
        user_domain_name: Some("Default".into()),
        project_name: Some("admin".into()),
        project_domain_name: Some("Default".into()),
        ..Default::default()
    }
}

fn unique(suffix: &str) -> String {
    format!("magnum-{}-{suffix}", uuid::Uuid::new_v4().simple())
}

// Go: TestAppCredentialsKeystone: a credential created as the demo user with
// the demo user's token (its roles read from Keystone) authenticates and
// carries only the configured roles; the service credentials delete it, and
// delete it again.
#[tokio::test]
async fn keystone_creates_and_deletes_for_real() {
    let Some(k) = Identity::new("keystone_creates_and_deletes_for_real") else {
        return;
    };
    let a = store(
        &k.url,
        &[],
        Duration::from_secs(20),
        Some(admin_service(&k)),
    );
    let mut demo = login(&k, "demo", "demo").await;
    let have = demo.roles.take().unwrap_or_default();

    let name = unique("abcde");
    let ac = match a.create(&demo, &name, "Magnum cluster (test)").await {
        Ok(ac) => ac,
        Err(e) => panic!("{e}"),
    };
    assert!(
        !ac.id.is_empty()
            && !ac.secret.is_empty()
            && ac.name == name
            && ac.user_id == demo.user_id
            && ac.project_id == demo.project_id,
        "created {ac:?}, want {name} of user {} in {}",
        demo.user_id,
        demo.project_id
    );
    // Keystone lists the granted roles with the roles they imply (member
    // implies reader).
    let want = grantable(&defaults(), &have);
    assert!(!want.is_empty(), "the demo user has {have:?}");
    for r in &want {
        assert!(
            ac.roles.contains(r),
            "roles = {:?}, want {want:?}",
            ac.roles
        );
    }
    assert!(!ac.roles.iter().any(|r| r == "admin"), "{:?}", ac.roles);
    let authenticated = authenticates(&k, &ac).await;

    let deleted = a.delete(&ac.user_id, &ac.id).await;
    let still = authenticates(&k, &ac).await;
    let again = a.delete(&ac.user_id, &ac.id).await;
    assert!(
        authenticated,
        "the new application credential does not authenticate"
    );
    assert_eq!(deleted, Ok(()), "delete with the service credentials");
    assert!(
        !still,
        "the deleted application credential still authenticates"
    );
    assert_eq!(again, Ok(()), "second delete");
}

// Go: TestAppCredentialsKeystoneNeverAdmin: admin among the configured roles
// of an admin caller is not granted; a wrong token is refused by Keystone,
// and the error does not echo it.
#[tokio::test]
async fn keystone_never_grants_admin() {
    let Some(k) = Identity::new("keystone_never_grants_admin") else {
        return;
    };
    let a = store(
        &k.url,
        &["admin", "member", "reader"],
        Duration::from_secs(20),
        Some(admin_service(&k)),
    );
    let admin = login(&k, "admin", "admin").await;
    let roles = admin.roles.clone().unwrap_or_default();
    assert!(
        roles.iter().any(|r| r == "admin"),
        "the admin token has {roles:?}"
    );
    let created = a.create(&admin, &unique("adm01"), "never admin").await;
    let cleanup = match &created {
        Ok(ac) => a.delete(&ac.user_id, &ac.id).await,
        Err(_) => Ok(()),
    };
    match &created {
        Ok(ac) => assert!(
            !ac.roles.is_empty() && !ac.roles.iter().any(|r| r == "admin"),
            "roles = {:?}, want the configured ones but admin",
            ac.roles
        ),
        Err(e) => panic!("{e}"),
    }
    assert_eq!(cleanup, Ok(()));

    let bad = Caller {
        token: Some("gAAAA-not-a-token".into()),
        user_id: admin.user_id.clone(),
        roles: Some(strings(&["member"])),
        ..Default::default()
    };
    match a.create(&bad, "magnum-bad-00000", "bad").await {
        Ok(ac) => panic!("created with a bad token: {ac:?}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains("HTTP 401") && !msg.contains("gAAAA-not-a-token"),
                "create with a bad token: {msg}, want HTTP 401 without the token"
            );
        }
    }
}
