//! `openkeel-magnum api` behind the real Keystone that scripts/ci/keystone.sh
//! starts: valid, missing, malformed and revoked tokens through the whole
//! binary.

use std::time::Duration;

use serde_json::json;

use crate::harness::{Answer, Server, get, okm, service_env};

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client")
}

/// A project-scoped token of `user`.
pub(crate) fn issue_token(keystone: &str, user: &str, password: &str, project: &str) -> String {
    let body = json!({"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"id": "default"}, "password": password}}},
        "scope": {"project": {"name": project, "domain": {"id": "default"}}}}});
    let resp = client()
        .post(format!("{}/auth/tokens", keystone.trim_end_matches('/')))
        .json(&body)
        .send()
        .expect("keystone");
    assert_eq!(resp.status().as_u16(), 201, "issue a token for {user}");
    resp.headers()["x-subject-token"]
        .to_str()
        .expect("token")
        .to_string()
}

fn revoke_token(keystone: &str, admin: &str, token: &str) {
    let resp = client()
        .delete(format!("{}/auth/tokens", keystone.trim_end_matches('/')))
        .header("x-auth-token", admin)
        .header("x-subject-token", token)
        .send()
        .expect("keystone");
    assert_eq!(resp.status().as_u16(), 204, "revoke a token");
}

#[test]
fn api_with_keystone() {
    let (Some(keystone), Some(magnum_pass), Some(demo_pass), Some(admin_pass)) = (
        service_env("OPENKEEL_TEST_KEYSTONE_URL"),
        service_env("OPENKEEL_TEST_KEYSTONE_MAGNUM_PASSWORD"),
        service_env("OPENKEEL_TEST_KEYSTONE_DEMO_PASSWORD"),
        service_env("OPENKEEL_TEST_KEYSTONE_ADMIN_PASSWORD"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("magnum.db");
    let conf = format!(
        "[database]\nconnection = sqlite:///{}\n\n[keystone_authtoken]\nwww_authenticate_uri = {keystone}\nauth_url = {keystone}\n\
         auth_type = password\nusername = magnum\npassword = {magnum_pass}\nproject_name = service\nuser_domain_name = Default\n\
         project_domain_name = Default\ntoken_cache_time = -1\n# Keystone is shared with the other suites: allow it to be slow.\n\
         http_connect_timeout = 60\n",
        db.display()
    );
    let conf_file = dir.path().join("db.conf");
    std::fs::write(&conf_file, &conf).expect("write");
    let o = okm(&[
        "db",
        "upgrade",
        "--config-file",
        &conf_file.display().to_string(),
    ]);
    assert_eq!(o.code, 0, "db upgrade: {o:?}");
    let s = Server::start(&conf, &["api"]);
    let url = format!("{}/v1/mservices", s.url);

    let demo = issue_token(&keystone, "demo", &demo_pass, "demo");
    let admin = issue_token(&keystone, "admin", &admin_pass, "admin");

    // magnum-service:get_all needs the admin role: a member is refused by
    // policy, which shows the token's roles reached the policy check.
    let a = get(&url, &[("X-Auth-Token", &demo)]).expect("GET");
    assert_eq!(
        a.status,
        403,
        "member: {}",
        String::from_utf8_lossy(&a.body)
    );
    assert!(
        String::from_utf8_lossy(&a.body)
            .contains("Policy doesn't allow magnum-service:get_all to be performed.")
    );
    assert!(!a.header("openstack-api-version").is_empty());

    let a = get(&url, &[("X-Auth-Token", &admin)]).expect("GET");
    assert_eq!(a.status, 200, "admin: {}", String::from_utf8_lossy(&a.body));
    assert!(a.json()["mservices"].is_array());

    let check_401 = |a: Answer| {
        assert_eq!(a.status, 401, "{}", String::from_utf8_lossy(&a.body));
        assert_eq!(
            a.header("www-authenticate"),
            format!("Keystone uri=\"{keystone}\"")
        );
        let doc = a.json();
        assert_eq!(
            (
                doc["error"]["code"].as_i64(),
                doc["error"]["title"].as_str()
            ),
            (Some(401), Some("Unauthorized"))
        );
    };
    check_401(get(&url, &[]).expect("GET"));
    check_401(get(&url, &[("X-Auth-Token", "not-a-token")]).expect("GET"));
    // A missing token with a bad version header is 401, not 406.
    check_401(get(&url, &[("OpenStack-API-Version", "container-infra 9.99")]).expect("GET"));

    let tok = issue_token(&keystone, "admin", &admin_pass, "admin");
    assert_eq!(
        get(&url, &[("X-Auth-Token", &tok)]).expect("GET").status,
        200,
        "before revocation"
    );
    revoke_token(&keystone, &admin, &tok);
    check_401(get(&url, &[("X-Auth-Token", &tok)]).expect("GET"));

    // The public root needs no token.
    assert_eq!(get(&format!("{}/", s.url), &[]).expect("GET").status, 200);
}
