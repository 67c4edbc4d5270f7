//! Go: internal/conductor/templates_test.go, case for case.

use std::sync::{Arc, Mutex};

use magnum_domain::RequestContext;
use magnum_domain::models::ClusterTemplate;

use super::*;
use crate::conductor::testing::TestConductor;
use crate::openstack::{STATIC_IMAGE_NAME, Static};

fn ctx(project: &str, user: &str, admin: bool) -> RequestContext {
    RequestContext {
        project_id: project.into(),
        user_id: user.into(),
        is_admin: admin,
        ..RequestContext::default()
    }
}

/// A conductor over the built-in OpenStack data, unknown names refused.
async fn conductor() -> TestConductor {
    let mut t = TestConductor::new().await;
    t.conductor = t.conductor.with_lookup(Arc::new(Static::new(false)));
    t
}

async fn insert(
    t: &TestConductor,
    uuid: &str,
    name: &str,
    project: &str,
    public: bool,
    hidden: bool,
) {
    let mut tpl = ClusterTemplate {
        uuid: uuid.into(),
        name: name.into(),
        project_id: project.into(),
        user_id: format!("user-{project}"),
        coe: Some("kubernetes".into()),
        public: Some(public),
        hidden: Some(hidden),
        ..ClusterTemplate::default()
    };
    t.db.q()
        .create_cluster_template(&mut tpl)
        .await
        .expect("insert template");
}

/// Go `TestTemplateScopeFor`.
#[test]
fn template_scope_for() {
    let member = ctx("p1", "u1", false);
    let admin = ctx("p1", "u1", true);
    let no_project = ctx("", "u1", false);
    let own = |p: &str, hidden: bool| TemplateScope {
        scope: Scope::project(p),
        public_hidden: hidden,
    };
    for (name, c, all, want) in [
        ("member", &member, false, own("p1", false)),
        (
            "member asking for all projects",
            &member,
            true,
            own("p1", false),
        ),
        ("admin", &admin, false, own("p1", true)),
        (
            "admin all projects",
            &admin,
            true,
            TemplateScope::new(Scope::ALL_PROJECTS),
        ),
        (
            "token without project",
            &no_project,
            false,
            TemplateScope::new(Scope::user("u1")),
        ),
    ] {
        assert_eq!(template_scope(c, all), want, "{name}");
    }
}

fn status<T: std::fmt::Debug>(r: &Result<T>) -> Option<u16> {
    match r {
        Err(Error::Client(e)) => Some(e.status),
        Err(e) => panic!("not a client error: {e}"),
        Ok(_) => None,
    }
}

/// Go `TestGetClusterTemplate`.
#[tokio::test]
async fn get_cluster_template() {
    let t = conductor().await;
    let u = |n: u32| format!("a0000000-0000-4000-8000-{n:012}");
    insert(&t, &u(1), "own", "p1", false, false).await;
    insert(&t, &u(2), "private", "p2", false, false).await;
    insert(&t, &u(3), "dup", "p1", false, false).await;
    insert(&t, &u(4), "DUP", "p2", true, false).await;
    insert(&t, &u(5), "hidden", "p2", true, true).await;
    insert(&t, &u(6), &u(1), "p1", false, false).await;
    let member = ctx("p1", "u1", false);
    let admin = ctx("p1", "u1", true);
    let c = &t.conductor;
    for (ident, who, all, want) in [
        ("own", &member, false, Ok(u(1))),
        (u(1).as_str(), &member, false, Ok(u(1))),
        ("private", &member, false, Err(404)),
        ("private", &admin, true, Ok(u(2))),
        ("dup", &member, false, Err(409)),
        ("hidden", &member, false, Err(404)),
        ("hidden", &admin, false, Ok(u(5))),
        (
            "A0000000-0000-4000-8000-000000000001",
            &member,
            false,
            Err(404),
        ),
        ("missing", &member, false, Err(404)),
    ] {
        let got = c.get_cluster_template(who, ident, all).await;
        match want {
            Ok(uuid) => assert_eq!(got.map(|t| t.uuid).ok(), Some(uuid), "{ident}"),
            Err(s) => assert_eq!(status(&got), Some(s), "{ident}: {got:?}"),
        }
    }
    let e = c.get_cluster_template(&member, "missing", false).await;
    assert_eq!(
        e.err().map(|e| e.to_string()).as_deref(),
        Some("ClusterTemplate missing could not be found.")
    );
    let e = c.get_cluster_template(&member, "dup", false).await;
    assert_eq!(
        e.err().map(|e| e.to_string()).as_deref(),
        Some(
            "Multiple ClusterTemplates exist with same name. Please use the ClusterTemplate uuid instead."
        )
    );
    let by_id = c.get_cluster_template_by_ref(&member, "1").await;
    assert_eq!(by_id.map(|t| t.name).ok().as_deref(), Some("own"), "by id");
}

fn allow() -> std::result::Result<(), MagnumError> {
    Ok(())
}

/// Go `TestCreateClusterTemplateConductor`.
#[tokio::test]
async fn create_cluster_template() {
    let t = conductor().await;
    let c = &t.conductor;
    let caller = ctx("p1", "u1", false);
    let calls = Mutex::new((0, 0));
    let authorize = || {
        calls.lock().map(|mut n| n.0 += 1).ok();
        allow()
    };
    let publish = || {
        calls.lock().map(|mut n| n.1 += 1).ok();
        allow()
    };
    let template = ClusterTemplate {
        coe: Some("kubernetes".into()),
        image_id: Some(STATIC_IMAGE_NAME.into()),
        server_type: Some("vm".into()),
        public: Some(false),
        hidden: Some(false),
        ..ClusterTemplate::default()
    };
    let input = |template: ClusterTemplate| TemplateCreate {
        template,
        present: vec!["coe", "image_id"],
        authorize: &authorize,
        publish: &publish,
    };
    let got = c
        .create_cluster_template(&caller, input(template.clone()))
        .await
        .expect("create");
    assert_eq!(
        *calls.lock().unwrap(),
        (1, 0),
        "authorized once, not published"
    );
    assert_eq!(
        (got.project_id.as_str(), got.user_id.as_str()),
        ("p1", "u1")
    );
    assert_eq!(got.network_driver.as_deref(), Some("flannel"));
    assert_eq!(got.driver.as_deref(), Some("fake"));
    assert_eq!(got.cluster_distro.as_deref(), Some("ubuntu"));
    assert!(got.name.ends_with("-template"), "{}", got.name);
    assert_eq!(got.uuid, "00000000-0000-4000-8000-000000000001");
    assert_eq!(got.created_at, t.now());
    // The decorators run before the policy check.
    *calls.lock().unwrap() = (0, 0);
    let swarm = ClusterTemplate {
        coe: Some("swarm".into()),
        ..template
    };
    let e = c.create_cluster_template(&caller, input(swarm)).await;
    assert_eq!(
        e.err().map(|e| e.to_string()).as_deref(),
        Some("Requested COE type swarm is not supported.")
    );
    assert_eq!(
        calls.lock().unwrap().0,
        0,
        "no policy check before the COE check"
    );
}

#[test]
fn in_use_changes_that_stay_allowed() {
    let t = ClusterTemplate {
        public: Some(true),
        tags: Some("x".into()),
        ..ClusterTemplate::default()
    };
    let one = |c: &str| vec![c.to_string()];
    assert!(publishing_only(&one("name"), &t));
    assert!(publishing_only(&one("hidden"), &t));
    assert!(publishing_only(&one("public"), &t));
    assert!(publishing_only(&one("tags"), &t));
    let unpublished = ClusterTemplate {
        public: Some(false),
        tags: None,
        ..t.clone()
    };
    assert!(!publishing_only(&one("public"), &unpublished));
    assert!(!publishing_only(&one("tags"), &unpublished));
    assert!(!publishing_only(&one("labels"), &t));
    assert!(!publishing_only(&[], &t));
    assert!(!publishing_only(&["name".into(), "tags".into()], &t));
    let a = ClusterTemplate::default();
    let b = ClusterTemplate {
        labels: Some(StringMap::new()),
        ..a.clone()
    };
    assert!(
        changed_columns(&a, &b).is_empty(),
        "NULL and {{}} labels are equal"
    );
}

#[test]
fn object_coercion_of_patched_values() {
    let doc = |k: &str, v: PyValue| -> Dict { [(k, v)].into_iter().collect() };
    let msg = |d: Dict| coerce_object(&d).err().map(|e| (e.status, e.message));
    assert_eq!(
        msg(doc("coe", PyValue::from("swarm"))),
        Some((400, "Field value swarm is invalid".into()))
    );
    assert_eq!(
        msg(doc("docker_volume_size", PyValue::from("x"))),
        Some((400, "invalid literal for int() with base 10: 'x'".into()))
    );
    assert_eq!(msg(doc("docker_volume_size", PyValue::from("7"))), None);
    assert_eq!(
        msg(doc("labels", PyValue::from(vec![PyValue::from("a")]))),
        Some((400, "A dict is required in field labels, not a list".into()))
    );
    let labels = |v: PyValue| PyValue::Dict([("a", v)].into_iter().collect());
    assert_eq!(
        msg(doc("labels", labels(PyValue::None))),
        Some((400, "Field `labels[a]' cannot be None".into()))
    );
    assert_eq!(
        msg(doc("labels", labels(PyValue::from(vec![])))),
        Some((
            400,
            "A string is required in field labels[a], not a list".into()
        ))
    );
    assert_eq!(msg(doc("labels", labels(PyValue::from(1)))), None);
}
