//! Go: internal/conductor/templates_test.go, case for case.

use std::sync::{Arc, Mutex};

use magnum_domain::RequestContext;
use magnum_domain::models::ClusterTemplate;

use super::*;
use crate::openstack::{STATIC_IMAGE_NAME, Static};
use crate::testing::TestConductor;

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
    let template = base_template();
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

fn base_template() -> ClusterTemplate {
    ClusterTemplate {
        coe: Some("kubernetes".into()),
        image_id: Some(STATIC_IMAGE_NAME.into()),
        server_type: Some("vm".into()),
        public: Some(false),
        hidden: Some(false),
        ..ClusterTemplate::default()
    }
}

async fn try_create(c: &Conductor, t: ClusterTemplate) -> Result<ClusterTemplate> {
    let allow = || Ok(());
    c.create_cluster_template(
        &ctx("p1", "u1", false),
        TemplateCreate {
            template: t,
            present: vec!["coe", "image_id", "cluster_distro", "driver"],
            authorize: &allow,
            publish: &allow,
        },
    )
    .await
}

fn message<T: std::fmt::Debug>(r: Result<T>) -> (u16, String) {
    match r {
        Err(Error::Client(e)) => (e.status, e.message),
        other => panic!("not a client error: {other:?}"),
    }
}

/// Driver resolution (spec `api/logic.md` §2, `enforce_driver_supported`):
/// with no driver at all the tuple must be provided by an enabled driver.
#[tokio::test]
async fn no_enabled_driver_for_the_tuple() {
    let t = conductor().await;
    let host = driver_host::DriverHost::start(
        driver_host::DriverSettings {
            disabled_drivers: driver_host::BUILTIN_ENTRY_POINTS
                .iter()
                .map(|d| d.to_string())
                .collect(),
            precompiled_cache_dir: test_support::compiled_drivers_dir(),
            ..driver_host::DriverSettings::default()
        },
        driver_host::HostServices::default(),
    )
    .await
    .expect("driver host");
    let c = t.conductor.with_drivers(Arc::new(host));
    assert_eq!(
        message(try_create(&c, base_template()).await),
        (
            400,
            "Cluster type (vm, ubuntu, kubernetes) is not supported by any loaded cluster \
             driver. Loaded drivers support: none (no cluster drivers are loaded)."
                .into()
        )
    );
    // A named driver is only loaded: a disabled one is still found.
    let named = ClusterTemplate {
        driver: Some("fake".into()),
        ..base_template()
    };
    let got = try_create(&c, named).await.expect("named driver");
    assert_eq!(got.driver.as_deref(), Some("fake"));
    assert!(
        snapshot_len(&t).await == 1,
        "only the named create was written"
    );
}

async fn snapshot_len(t: &TestConductor) -> usize {
    t.db.q()
        .list_cluster_templates(
            &TemplateScope::new(Scope::ALL_PROJECTS),
            &ListOptions::default(),
        )
        .await
        .map(|r| r.len())
        .unwrap_or(usize::MAX)
}

/// The image's `magnum_driver` property and `os_distro`, and Glance errors
/// `enforce_driver_supported` swallows.
#[tokio::test]
async fn distro_and_driver_from_the_image() {
    let t = TestConductor::new().await;
    let mut stat = Static::new(false);
    let img = stat.images[0].clone();
    stat.images.push(crate::openstack::Image {
        id: "img-driver".into(),
        name: "with-driver".into(),
        magnum_driver: Some("nope".into()),
        ..img.clone()
    });
    stat.images.push(crate::openstack::Image {
        id: "img-plain".into(),
        name: "no-distro".into(),
        os_distro: None,
        ..img.clone()
    });
    stat.images.push(crate::openstack::Image {
        id: "img-twin".into(),
        ..img.clone()
    });
    let c = t.conductor.with_lookup(Arc::new(stat));
    let with = |image: &str| ClusterTemplate {
        image_id: Some(image.into()),
        ..base_template()
    };
    assert_eq!(
        message(try_create(&c, with("with-driver")).await),
        (400, "Cluster driver (nope) not supported.".into()),
        "the image's magnum_driver is the driver"
    );
    assert_eq!(
        message(try_create(&c, with("no-distro")).await),
        (
            400,
            "Image no-distro doesn't contain os_distro field.".into()
        )
    );
    // Two images with the name: the decorator swallows the 409 and keeps
    // the body's distro; validate_os_resources answers it.
    let twin = ClusterTemplate {
        cluster_distro: Some("ubuntu".into()),
        ..with(STATIC_IMAGE_NAME)
    };
    let (status, msg) = message(try_create(&c, twin).await);
    assert_eq!(status, 409, "{msg}");
    let twin_no_distro = with(STATIC_IMAGE_NAME);
    assert_eq!(
        message(try_create(&c, twin_no_distro).await),
        (
            400,
            format!("Image {STATIC_IMAGE_NAME} doesn't contain os_distro field.")
        ),
        "no distro once the lookup failed"
    );
    assert_eq!(
        message(try_create(&c, with("missing")).await),
        (400, "Image missing could not be found.".into()),
        "not found is not swallowed"
    );
    let ok = ClusterTemplate {
        image_id: Some("img-plain".into()),
        cluster_distro: Some("ubuntu".into()),
        driver: Some("fake".into()),
        ..base_template()
    };
    assert_eq!(
        message(try_create(&c, ok).await),
        (
            400,
            "Image img-plain doesn't contain os_distro field.".into()
        ),
        "with distro and driver given, validate_image still needs os_distro"
    );
    assert_eq!(snapshot_len(&t).await, 0);
}
