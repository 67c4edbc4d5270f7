//! Magnum's rules evaluated by the engine (ports of Go's
//! internal/policy enforcer and defaults tests, internal/api's
//! TestCredentialsFrom), the policy-file search, `policy check`, and the
//! sample file.

use std::path::{Path, PathBuf};

use magnum_domain::RequestContext;
use oslo_policy::{EnforceError, Enforcer, Options, parse_rule};
use serde_json::{Value, json};

use super::*;

fn map(v: Value) -> Credentials {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn magnum(enforce_scope: bool, enforce_new_defaults: bool) -> Enforcer {
    magnum_with(Options {
        defaults: magnum_defaults(),
        enforce_scope,
        enforce_new_defaults,
        ..Options::default()
    })
}

fn magnum_with(opts: Options) -> Enforcer {
    match Enforcer::new(opts) {
        Ok(e) => e,
        Err(e) => panic!("{e}"),
    }
}

fn file_opts(path: PathBuf, enforce_new_defaults: bool) -> Options {
    Options {
        defaults: magnum_defaults(),
        policy_file: Some(path),
        enforce_scope: false,
        enforce_new_defaults,
        ..Options::default()
    }
}

fn tempdir() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("tempdir: {e}"),
    }
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    if let Err(e) = std::fs::write(&p, content) {
        panic!("write {}: {e}", p.display());
    }
    p
}

struct Personas {
    admin: Credentials,
    /// The member created the resources of p1 in these tests.
    member: Credentials,
    other_member: Credentials,
    reader: Credentials,
    foreign: Credentials,
    admin_only: Credentials,
    system_admin: Credentials,
    domain_admin: Credentials,
    mixed_case: Credentials,
    no_roles: Credentials,
}

fn personas() -> Personas {
    Personas {
        admin: map(
            json!({"user_id": "u1", "project_id": "p1", "roles": ["admin", "member", "reader"], "is_admin": true}),
        ),
        member: map(
            json!({"user_id": "u1", "project_id": "p1", "roles": ["member", "reader"], "is_admin": false}),
        ),
        other_member: map(
            json!({"user_id": "u2", "project_id": "p1", "roles": ["member", "reader"], "is_admin": false}),
        ),
        reader: map(
            json!({"user_id": "u3", "project_id": "p1", "roles": ["reader"], "is_admin": false}),
        ),
        foreign: map(
            json!({"user_id": "u4", "project_id": "p2", "roles": ["member", "reader"], "is_admin": false}),
        ),
        admin_only: map(
            json!({"user_id": "u5", "project_id": "p1", "roles": ["admin"], "is_admin": true}),
        ),
        system_admin: map(
            json!({"user_id": "u6", "project_id": null, "roles": ["admin"], "is_admin": true, "system_scope": "all"}),
        ),
        domain_admin: map(
            json!({"user_id": "u7", "project_id": null, "roles": ["admin"], "domain_id": "d1"}),
        ),
        mixed_case: map(
            json!({"user_id": "u1", "project_id": "p1", "roles": ["MEMBER", "Reader"]}),
        ),
        no_roles: map(json!({"user_id": "u1", "project_id": "p1"})),
    }
}

fn resource() -> Target {
    map(json!({"project_id": "p1", "user_id": "u1"}))
}

// Port of TestEnforceMagnumDefaults (Go).
#[test]
fn magnum_defaults_decide_like_magnum() {
    let e = magnum(true, true);
    let p = personas();
    let cases: Vec<(&str, &str, Credentials, Option<Target>, bool)> = vec![
        (
            "admin reads any project",
            "cluster:get",
            p.admin.clone(),
            Some(map(json!({"project_id": "p9"}))),
            true,
        ),
        (
            "reader reads own project",
            "cluster:get",
            p.reader.clone(),
            Some(resource()),
            true,
        ),
        (
            "foreign member cannot read",
            "cluster:get",
            p.foreign.clone(),
            Some(resource()),
            false,
        ),
        (
            "reader cannot delete",
            "cluster:delete",
            p.reader.clone(),
            Some(resource()),
            false,
        ),
        (
            "member deletes",
            "cluster:delete",
            p.other_member.clone(),
            Some(resource()),
            true,
        ),
        (
            "roles are case-insensitive",
            "cluster:delete",
            p.mixed_case.clone(),
            Some(resource()),
            true,
        ),
        (
            "no roles",
            "cluster:get",
            p.no_roles.clone(),
            Some(resource()),
            false,
        ),
        (
            "certificate:create needs the creator",
            "certificate:create",
            p.other_member.clone(),
            Some(resource()),
            false,
        ),
        (
            "certificate:create by the creator",
            "certificate:create",
            p.member.clone(),
            Some(resource()),
            true,
        ),
        (
            "credential:rotate has no admin bypass",
            "credential:rotate",
            p.admin_only.clone(),
            Some(resource()),
            false,
        ),
        (
            "publish is admin only",
            "clustertemplate:publish",
            p.member.clone(),
            Some(resource()),
            false,
        ),
        (
            "is_admin alone is not the admin role",
            "quota:get_all",
            map(json!({"roles": ["member"], "is_admin": true})),
            None,
            false,
        ),
        (
            "unscoped rule for a system token",
            "quota:get_all",
            p.system_admin.clone(),
            Some(Target::new()),
            true,
        ),
        (
            "unknown rule denies",
            "cluster:nope",
            p.admin.clone(),
            Some(resource()),
            false,
        ),
        (
            "missing target key denies",
            "cluster:delete",
            p.member.clone(),
            Some(Target::new()),
            false,
        ),
        (
            "None project",
            "cluster:get",
            p.reader.clone(),
            Some(map(json!({"project_id": null}))),
            false,
        ),
        (
            "integer project",
            "cluster:get",
            map(json!({"project_id": 7, "roles": ["reader"]})),
            Some(map(json!({"project_id": "7"}))),
            true,
        ),
    ];
    for (name, rule, creds, target, want) in cases {
        let target = target.unwrap_or_else(|| oslo_policy::caller_target(&creds));
        assert_eq!(e.enforce(rule, &target, &creds), Ok(want), "{name}");
    }
}

// Port of TestEnforceScope (Go).
#[test]
fn scope_enforcement() {
    let on = magnum(true, true);
    let off = magnum(false, true);
    let p = personas();
    for creds in [&p.system_admin, &p.domain_admin] {
        let err = on.enforce("cluster:get", &resource(), creds);
        let Err(EnforceError::Scope(scope)) = err else {
            panic!("enforce with {creds:?}: {err:?}, want InvalidScope");
        };
        assert_eq!(scope.scope_types, ["project"]);
        let denied = on.authorize("cluster:get", Some(&resource()), creds);
        let Err(denied) = denied else {
            panic!("authorize allowed");
        };
        assert!(matches!(denied.reason, DenyReason::Scope(_)), "{denied:?}");
        assert_eq!(
            denied.to_string(),
            "Policy doesn't allow cluster:get to be performed."
        );
        // Without scope enforcement the admin role allows it.
        assert_eq!(off.enforce("cluster:get", &resource(), creds), Ok(true));
    }
    let want = "\"cluster:get\": \"rule:admin_or_project_reader_deny_cluster_user\" requires a scope of ['project'], request was made with system scope.";
    assert_eq!(
        on.enforce("cluster:get", &resource(), &p.system_admin)
            .map_err(|e| e.to_string()),
        Err(want.to_owned())
    );
    // A falsy system_scope is a project token.
    let creds = map(json!({"system_scope": "", "project_id": "p1", "roles": ["reader"]}));
    assert_eq!(on.enforce("cluster:get", &resource(), &creds), Ok(true));
}

// Port of TestAuthorize (Go).
#[test]
fn authorize() {
    let e = magnum(true, true);
    let p = personas();
    // Without a target, Magnum checks against the caller's own project.
    assert_eq!(e.authorize("cluster:create", None, &p.member), Ok(()));
    assert!(e.authorize("cluster:create", None, &p.reader).is_err());
    let target = map(json!({"project_id": "p1", "user_id": "u3"}));
    let Err(denied) = e.authorize("cluster:create", Some(&target), &p.reader) else {
        panic!("reader allowed");
    };
    assert_eq!(denied.rule, "cluster:create");
    assert_eq!(denied.reason, DenyReason::Rule);
    assert_eq!(
        denied.to_string(),
        "Policy doesn't allow cluster:create to be performed."
    );
    assert!(e.is_admin(&p.admin));
    assert!(!e.is_admin(&p.member));
}

// Port of TestDeprecatedDefaults (Go).
#[test]
fn deprecated_defaults() {
    let legacy =
        map(json!({"user_id": "u9", "project_id": "p1", "roles": ["_member_"], "is_admin": false}));
    let new_only = magnum(false, true);
    let both = magnum(false, false);
    // admin_or_project_member was "is_admin:True or project_id:%(project_id)s".
    assert_eq!(
        new_only.enforce("admin_or_project_member", &resource(), &legacy),
        Ok(false)
    );
    assert_eq!(
        both.enforce("admin_or_project_member", &resource(), &legacy),
        Ok(true)
    );
    assert_eq!(
        both.effective_rule("admin_or_project_member").as_deref(),
        Some(
            "((rule:context_is_admin or rule:project_member) or (is_admin:True or project_id:%(project_id)s))"
        )
    );
    // Rules without a deprecated alternative are unchanged.
    assert_eq!(
        both.effective_rule("cluster:get").as_deref(),
        Some("rule:admin_or_project_reader_deny_cluster_user")
    );
}

// Port of TestPolicyFile (Go), the cases on Magnum's rules.
#[test]
fn policy_file_overrides() {
    let dir = tempdir();
    let p = personas();

    // Overrides, new rules and the default rule.
    let path = write(
        dir.path(),
        "policy.yaml",
        "\n\"cluster:get\": \"role:auditor\"\n\"default\": \"role:member\"\n\"custom\": \"rule:cluster:get or @\"\n",
    );
    let e = magnum_with(file_opts(path.clone(), true));
    let auditor = map(json!({"project_id": "p1", "roles": ["auditor"]}));
    assert_eq!(e.enforce("cluster:get", &resource(), &auditor), Ok(true));
    assert_eq!(e.enforce("cluster:get", &resource(), &p.admin), Ok(false));
    assert_eq!(e.authorize("no:such:rule", None, &p.member), Ok(()));
    assert_eq!(e.authorize("custom", None, &p.no_roles), Ok(()));
    assert_eq!(e.overrides().get("cluster:get"), Some(&path));
    assert_eq!(e.overrides().len(), 3);

    // JSON.
    let path = write(
        dir.path(),
        "policy.json",
        r#"{"cluster:get": "!", "context_is_admin": "role:root"}"#,
    );
    let e = magnum_with(file_opts(path, false));
    assert_eq!(e.enforce("cluster:get", &resource(), &p.admin), Ok(false));
    assert!(e.is_admin(&map(json!({"roles": ["ROOT"]}))));

    // A deprecated name keeps applying to the new rules.
    let path = write(
        dir.path(),
        "deprecated.yaml",
        r#""rule:admin_or_owner": "role:legacy""#,
    );
    let e = magnum_with(file_opts(path, true));
    for name in [
        "admin_or_project_member",
        "admin_or_project_reader",
        "project_member_deny_cluster_user",
    ] {
        assert_eq!(
            e.effective_rule(name).as_deref(),
            Some("role:legacy"),
            "{name}"
        );
    }
    assert_eq!(
        e.effective_rule("admin_or_project_reader_user").as_deref(),
        Some("(rule:context_is_admin or (rule:project_reader and rule:is_user))")
    );

    // Malformed rules deny.
    let path = write(
        dir.path(),
        "malformed-rule.yaml",
        r#""cluster:get": "role:admin and""#,
    );
    let e = magnum_with(file_opts(path, false));
    assert_eq!(e.enforce("cluster:get", &resource(), &p.admin), Ok(false));
}

// Port of TestMagnumDefaultsParse (Go).
#[test]
fn magnum_defaults_parse_and_are_closed() {
    let e = magnum(false, true);
    assert_eq!(e.rules().len(), 66);
    for r in e.rules() {
        assert_eq!(parse_rule(&r.check_string).error, None, "{}", r.name);
        if let Some(d) = &r.deprecated {
            assert_eq!(parse_rule(&d.check_string).error, None, "{}", d.name);
        }
    }
    // No undefined reference, no cycle, nothing unparsable.
    assert_eq!(e.warnings(), []);
    assert_eq!(
        e.rules()
            .iter()
            .filter(|r| !r.scope_types.is_empty())
            .count(),
        32
    );
}

// Port of TestCredentialsFrom (Go internal/api).
#[test]
fn credentials_from_a_context() {
    let ctx = RequestContext {
        user_id: "u".into(),
        project_id: "p".into(),
        roles: vec!["member".into()],
        is_admin: false,
        user_domain_id: "d".into(),
        system_scope: "all".into(),
        domain_id: "dom".into(),
        project_domain_id: "pd".into(),
        auth_token: Some("secret-token".into()),
        ..Default::default()
    };
    let c = credentials(&ctx);
    for (k, want) in [
        ("user_id", json!("u")),
        ("project_id", json!("p")),
        ("is_admin", json!(false)),
        ("user_domain_id", json!("d")),
        ("system_scope", Value::Null),
        ("domain_id", Value::Null),
        ("project_domain_id", Value::Null),
        ("user", json!("u")),
        ("project", json!("p")),
        ("roles", json!(["member"])),
        ("user_name", Value::Null),
        ("all_tenants", json!(false)),
    ] {
        assert_eq!(c.get(k), Some(&want), "{k}");
    }
    let shown = serde_json::to_string(&c).unwrap_or_default();
    assert!(!shown.contains("secret-token"), "{shown}");
    assert_eq!(c.len(), 21);
    let v = policy_values(&ctx);
    assert_eq!(v.get("roles"), Some(&json!(["member"])));
    assert_eq!(v.get("is_admin"), None);
    assert_eq!(
        Value::Object(caller_target(&ctx)),
        json!({"project_id": "p", "user_id": "u"})
    );
    assert_eq!(
        Value::Object(caller_target(&RequestContext::default())),
        json!({"project_id": null, "user_id": null})
    );
}

#[test]
fn is_admin_follows_context_is_admin() {
    let e = magnum(false, true);
    let mut ctx = RequestContext {
        roles: vec!["Admin".into()],
        ..Default::default()
    };
    assert!(is_admin(&e, &ctx));
    ctx.roles = vec!["member".into()];
    assert!(!is_admin(&e, &ctx));
    // An override of context_is_admin is honoured.
    let dir = tempdir();
    let path = write(
        dir.path(),
        "policy.yaml",
        "context_is_admin: role:cloud_admin or role:admin\n",
    );
    let e = magnum_with(file_opts(path, true));
    ctx.roles = vec!["cloud_admin".into()];
    assert!(is_admin(&e, &ctx));
    // is_admin is not a policy value: "is_admin:True" cannot make itself true.
    let path = write(dir.path(), "self.yaml", "context_is_admin: is_admin:True\n");
    let e = magnum_with(file_opts(path, true));
    ctx.is_admin = true;
    assert!(!is_admin(&e, &ctx));
}

#[test]
fn policy_file_search() {
    let dir = tempdir();
    let conf = dir.path().join("conf");
    let other = dir.path().join("other");
    for d in [&conf, &other, &conf.join("policy.d")] {
        if let Err(e) = std::fs::create_dir_all(d) {
            panic!("{e}");
        }
    }
    write(&conf, "policy.yaml", "{}\n");
    write(&other, "mine.yaml", "{}\n");
    let settings = PolicySettings {
        config_dirs_for_search: vec![other.clone(), conf.clone()],
        ..PolicySettings::default()
    };
    let paths = settings.paths();
    assert_eq!(paths.policy_file, conf.join("policy.yaml"));
    assert!(paths.optional);
    assert_eq!(paths.policy_dirs, [conf.join("policy.d")]);

    let explicit = PolicySettings {
        policy_file: "mine.yaml".into(),
        ..settings.clone()
    };
    let paths = explicit.paths();
    assert_eq!(paths.policy_file, other.join("mine.yaml"));
    assert!(!paths.optional);

    // Not found anywhere: the name as given; the default name may be
    // missing, another name may not.
    let missing_default = PolicySettings {
        policy_file: "policy.json".into(),
        config_dirs_for_search: vec![other.clone()],
        ..PolicySettings::default()
    };
    assert_eq!(
        missing_default.paths().policy_file,
        Path::new("policy.json")
    );
    assert!(load(&missing_default).is_ok());
    let missing = PolicySettings {
        policy_file: "absent-policy.yaml".into(),
        ..missing_default.clone()
    };
    let err = load(&missing).map(|_| ());
    assert!(err.as_ref().is_err_and(|e| e.is_not_found()), "{err:?}");
    let absolute = conf.join("policy.yaml");
    let abs = PolicySettings {
        policy_file: absolute.display().to_string(),
        ..PolicySettings::default()
    };
    assert_eq!(abs.paths().policy_file, absolute);
}

fn run_check(settings: &PolicySettings) -> (u8, String) {
    let mut out = Vec::new();
    let status = match check(settings, &mut out) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    (status, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn policy_check_reports_problems() {
    let dir = tempdir();
    let settings = |file: &Path| PolicySettings {
        policy_file: file.display().to_string(),
        policy_dirs: vec![],
        ..PolicySettings::default()
    };

    let good = write(
        dir.path(),
        "good.yaml",
        "cluster:get: role:admin\ndefault: '!'\ncluster:create: rule:my_alias\nmy_alias: role:member\n",
    );
    let (status, out) = run_check(&settings(&good));
    assert_eq!(status, 0, "{out}");
    let want = format!(
        "66 default rules, 4 overridden ({}): no problems\n",
        good.display()
    );
    assert!(out.ends_with(&want), "{out}");

    let bad = write(
        dir.path(),
        "bad.yaml",
        concat!(
            "cluster:get: role:admin and\n",
            "clustr:create: role:member\n",
            "rule:admin_or_owner: role:legacy\n",
            "quota:get: rule:nowhere\n",
            "a: rule:b\nb: rule:a\n",
            "stats:get_all: http://example.com\n",
            "quota:create: rule:context_is_admin\n",
        ),
    );
    let (status, out) = run_check(&settings(&bad));
    assert_eq!(status, 1, "{out}");
    for want in [
        "Failed to parse rule \"cluster:get\": \"role:admin and\" (it always denies)",
        "Unknown rule found in policy file: clustr:create",
        "Deprecated rule found in policy file: \"rule:admin_or_owner\" (replaced by \"admin_or_project_reader\", \"admin_or_project_member\", \"project_member_deny_cluster_user\", \"admin_or_project_member_deny_cluster_user\", \"project_reader_deny_cluster_user\", \"admin_or_project_reader_deny_cluster_user\")",
        "Invalid rules found: quota:get reference a rule that is not defined",
        "Invalid rules found: a, b are part of a cyclical reference",
        "Rule \"stats:get_all\" uses an http check, which always denies",
        "Note: rules that repeat the default and can be removed: quota:create",
    ] {
        assert!(
            out.lines().any(|l| l == want),
            "missing {want:?} in:\n{out}"
        );
    }
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.ends_with("): 6 problem(s)")),
        "{out}"
    );

    let (status, out) = run_check(&settings(&dir.path().join("absent.yaml")));
    assert_eq!(status, 1);
    assert!(out.starts_with("Configured policy file \""), "{out}");

    let broken = write(dir.path(), "broken.yaml", "- a\n");
    let (status, out) = run_check(&settings(&broken));
    assert_eq!(status, 1);
    assert!(
        out.starts_with("Invalid policy file: parse policy file"),
        "{out}"
    );

    // The default file name missing is fine.
    let (status, out) = run_check(&PolicySettings {
        config_dirs_for_search: vec![dir.path().join("nowhere")],
        policy_dirs: vec![],
        ..PolicySettings::default()
    });
    assert_eq!(
        (status, out.trim_end()),
        (
            0,
            "66 default rules, 0 overridden (no policy file): no problems"
        )
    );
}
