//! Server groups, load balancers, floating IPs and volume types against the
//! double, as the user and with the service credentials.

use std::time::Duration;

use http::Method;
use openkeel_magnum_osfake::{
    self as osfake, Fault, OsFake, SERVICE_TOKEN, Seed, Service, VolumeType as FakeVolumeType,
};

use super::testing::{session_for, start_fake};
use super::{
    AppCredential, Caller, EndpointSettings, ErrorKind, LoadBalancer, LoadBalancers, ServerGroups,
    ServiceCredentials, VolumeType, VolumeTypes,
};

const USER: &str = "user-token";

fn user(fake: &OsFake) -> Caller {
    Caller {
        token: Some(USER.into()),
        user_id: "u1".into(),
        project_id: "p1".into(),
        service_catalog: Some(fake.catalog()),
        roles: None,
        service: false,
    }
}

async fn server_groups(timeout: Duration) -> (ServerGroups, OsFake, Caller) {
    let fake = start_fake(Seed::default()).await;
    fake.add_token(USER, "p1");
    let g = match ServerGroups::new(session_for(&fake, timeout), EndpointSettings::default()) {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    };
    let caller = user(&fake);
    (g, fake, caller)
}

fn group(id: &str, name: &str, policy: &str, project: &str) -> osfake::ServerGroup {
    osfake::ServerGroup {
        id: id.into(),
        name: name.into(),
        policy: policy.into(),
        project_id: project.into(),
    }
}

// Go: TestServerGroupsEnsureIsIdempotent.
#[tokio::test]
async fn server_groups_ensure_is_idempotent() {
    let (g, fake, caller) = server_groups(Duration::from_secs(2)).await;
    fake.add_server_group(group("other", "kube-abcde", "affinity", "p2"));

    let id = g.ensure(&caller, "kube-abcde", "soft-anti-affinity").await;
    let again = g.ensure(&caller, "kube-abcde", "soft-anti-affinity").await;
    match (&id, &again) {
        (Ok(id), Ok(again)) => assert!(
            !id.is_empty() && id != "other" && again == id,
            "ensure gave {id:?} then {again:?}; want one new group of the caller's project"
        ),
        _ => panic!("{id:?} / {again:?}"),
    }
    let mine: Vec<_> = fake
        .server_groups()
        .into_iter()
        .filter(|sg| sg.project_id == "p1")
        .collect();
    assert!(
        mine.len() == 1 && mine[0].policy == "soft-anti-affinity" && mine[0].name == "kube-abcde",
        "groups of p1 = {mine:?}"
    );
    for c in fake.calls() {
        assert_eq!(c.token.as_deref(), Some(USER), "{c}: the user's token");
        assert_ne!(
            c.query.get("all_projects"),
            Some("true"),
            "{c} lists all projects with a user token"
        );
    }
}

// Go: TestServerGroupsDelete.
#[tokio::test]
async fn server_groups_delete() {
    let (g, fake, caller) = server_groups(Duration::from_secs(2)).await;
    if let Err(e) = g
        .ensure(&caller, "kube-abcde-default-worker", "anti-affinity")
        .await
    {
        panic!("{e}");
    }
    // The background deletion has no user token: service credentials and
    // all_projects.
    if let Err(e) = g
        .delete(&Caller::service(), "kube-abcde-default-worker")
        .await
    {
        panic!("{e}");
    }
    assert!(fake.server_groups().is_empty(), "groups left");
    let calls = fake.calls();
    let last = &calls[calls.len() - 1];
    assert!(
        last.method == Method::DELETE && last.token.as_deref() == Some(SERVICE_TOKEN),
        "last call {last} with token {:?}, want a DELETE with the service token",
        last.token
    );
    assert!(
        calls
            .iter()
            .any(|c| c.query.get("all_projects") == Some("true")),
        "the service listing did not ask for all projects"
    );
    // A group that is already gone is not an error.
    if let Err(e) = g.delete(&caller, "kube-abcde-default-worker").await {
        panic!("delete of a missing group: {e}");
    }
    // One service token served the list and the delete.
    assert_eq!(fake.authentications(), 1);
}

// Go: TestServerGroupsErrors.
#[tokio::test]
async fn server_groups_errors() {
    let (g, fake, caller) = server_groups(Duration::from_millis(300)).await;
    fake.inject(Fault {
        service: Some(Service::Compute),
        status: 403,
        ..Default::default()
    });
    let e = g.ensure(&caller, "kube-abcde", "anti-affinity").await;
    assert!(
        e.as_ref().is_err_and(|e| e.is_forbidden()),
        "ensure on 403: {e:?}"
    );
    fake.reset();

    let unknown = Caller {
        token: Some("unknown".into()),
        ..caller.clone()
    };
    let e = g.ensure(&unknown, "kube-abcde", "anti-affinity").await;
    assert!(
        e.as_ref().is_err_and(|e| e.status() == Some(401)),
        "ensure with an unknown token: {e:?}"
    );

    fake.inject(Fault {
        service: Some(Service::Compute),
        hang: true,
        ..Default::default()
    });
    let e = g.ensure(&caller, "kube-abcde", "anti-affinity").await;
    assert!(
        e.as_ref().is_err_and(|e| e.is_timeout()),
        "ensure against a hanging Nova: {e:?}"
    );

    assert!(
        g.ensure(&caller, "", "anti-affinity").await.is_err(),
        "a group without a name"
    );
}

#[tokio::test]
async fn the_service_token_is_renewed_once_on_a_401() {
    let (g, fake, _) = server_groups(Duration::from_secs(2)).await;
    fake.add_server_group(group("g1", "kube-x", "affinity", "p1"));
    fake.inject(Fault {
        service: Some(Service::Compute),
        status: 401,
        times: 1,
        ..Default::default()
    });
    if let Err(e) = g.delete(&Caller::service(), "kube-x").await {
        panic!("{e}");
    }
    let lists = fake
        .calls()
        .iter()
        .filter(|c| c.method == Method::GET)
        .count();
    assert_eq!(lists, 2, "the list refused once, then sent again");
    assert_eq!(fake.authentications(), 2, "the token was renewed once");
    assert!(fake.server_groups().is_empty());
}

// Go: TestCallerRedactsToken.
#[test]
fn secrets_never_show_in_debug() {
    let c = Caller {
        token: Some("secret-token".into()),
        user_id: "u1".into(),
        ..Default::default()
    };
    let shown = format!("{c:?}");
    assert!(
        !shown.contains("secret-token") && shown.contains("u1"),
        "{shown}"
    );
    let ac = AppCredential {
        id: "id".into(),
        secret: "s3cr3t".into(),
        ..Default::default()
    };
    let shown = format!("{ac:?}");
    assert!(!shown.contains("s3cr3t") && shown.contains("id"), "{shown}");
    let sc = ServiceCredentials {
        password: "pa55word".into(),
        ..Default::default()
    };
    assert!(!format!("{sc:?}").contains("pa55word"));
}

async fn load_balancers(timeout: Duration) -> (LoadBalancers, OsFake, Caller) {
    let fake = start_fake(Seed::default()).await;
    fake.add_token(USER, "p1");
    let l = LoadBalancers::new(
        session_for(&fake, timeout),
        EndpointSettings::default(),
        EndpointSettings::default(),
    );
    let l = match l {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    };
    let caller = user(&fake);
    (l, fake, caller)
}

fn lb(id: &str, name: &str, project: &str) -> osfake::LoadBalancer {
    osfake::LoadBalancer {
        id: id.into(),
        name: name.into(),
        project_id: project.into(),
        ..Default::default()
    }
}

fn ids(lbs: &[LoadBalancer]) -> Vec<&str> {
    lbs.iter().map(|l| l.id.as_str()).collect()
}

// Go: TestLoadBalancersList.
#[tokio::test]
async fn load_balancers_list() {
    let (l, fake, caller) = load_balancers(Duration::from_secs(2)).await;
    for lb in [
        osfake::LoadBalancer {
            vip_port_id: "port-1".into(),
            tags: vec!["kube_service_c1_default_web".into()],
            ..lb("lb-1", "kube_service_c1_default_web", "p1")
        },
        lb("lb-2", "other", "p2"),
        osfake::LoadBalancer {
            provisioning_status: "PENDING_UPDATE".into(),
            ..lb("lb-3", "kube_service_c1_default_api", "p1")
        },
        lb("lb-4", "mine-too", "p1"),
    ] {
        fake.add_load_balancer(lb);
    }
    fake.set_page_size(1);

    let got = match l.list(&caller, "p1").await {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(ids(&got), ["lb-1", "lb-3", "lb-4"]);
    assert_eq!(
        got[0],
        LoadBalancer {
            id: "lb-1".into(),
            name: "kube_service_c1_default_web".into(),
            project_id: "p1".into(),
            provisioning_status: "ACTIVE".into(),
            operating_status: "ONLINE".into(),
            vip_port_id: "port-1".into(),
            tags: vec!["kube_service_c1_default_web".into()],
            ..Default::default()
        }
    );
    let calls = fake.calls();
    // One page per load balancer, and the last (empty) page.
    assert_eq!(calls.len(), 4, "{calls:?}");
    for c in &calls {
        assert!(
            c.method == Method::GET
                && c.path == "/v2/lbaas/loadbalancers"
                && c.query.get("project_id") == Some("p1"),
            "unexpected call {c}"
        );
        assert_eq!(c.token.as_deref(), Some(USER), "{c}: the user's token");
    }

    // with the service credentials, another project
    match l.list(&Caller::service(), "p2").await {
        Ok(got) => assert_eq!(ids(&got), ["lb-2"]),
        Err(e) => panic!("{e}"),
    }
    // a user asking for another project is refused
    let e = l.list(&caller, "p2").await;
    assert!(
        e.as_ref().is_err_and(|e| e.is_forbidden()),
        "list of p2 as a p1 user: {e:?}"
    );
}

// Go: TestLoadBalancersDelete.
#[tokio::test]
async fn load_balancers_delete() {
    let (l, fake, caller) = load_balancers(Duration::from_millis(500)).await;
    fake.add_load_balancer(osfake::LoadBalancer {
        listeners: vec!["listener-1".into()],
        vip_port_id: "port-1".into(),
        ..lb("lb-1", "", "p1")
    });
    fake.add_load_balancer(lb("lb-2", "", "p1"));
    fake.set_delete_delay(1);

    // The load balancer has a listener: only a cascading delete works.
    if let Err(e) = l.delete(&caller, "lb-1").await {
        panic!("{e}");
    }
    let calls = fake.calls();
    let last = &calls[calls.len() - 1];
    assert!(
        last.method == Method::DELETE && last.query.get("cascade") == Some("true"),
        "last call {last}, want a cascading DELETE"
    );
    let got = match l.list(&caller, "p1").await {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    };
    assert!(
        got.len() == 2 && got[0].provisioning_status == "PENDING_DELETE",
        "after the delete: {got:?}, want lb-1 PENDING_DELETE"
    );
    // Deleting it again while Octavia is busy with it (409) is fine.
    if let Err(e) = l.delete(&caller, "lb-1").await {
        panic!("delete of a PENDING_DELETE load balancer: {e}");
    }
    match l.list(&caller, "p1").await {
        Ok(got) => assert_eq!(ids(&got), ["lb-2"], "after the delay"),
        Err(e) => panic!("{e}"),
    }
    // And once it is gone (404) too.
    if let Err(e) = l.delete(&caller, "lb-1").await {
        panic!("delete of a deleted load balancer: {e}");
    }

    // errors
    let once = |status| Fault {
        service: Some(Service::LoadBalancer),
        status,
        times: 1,
        ..Default::default()
    };
    fake.inject(once(403));
    let e = l.delete(&caller, "lb-2").await;
    assert!(
        e.as_ref().is_err_and(|e| e.is_forbidden()),
        "delete on 403: {e:?}"
    );
    fake.inject(once(500));
    assert!(l.delete(&caller, "lb-2").await.is_err(), "delete on 500");
    fake.inject(once(503));
    assert!(l.list(&caller, "p1").await.is_err(), "list on 503");
    let unknown = Caller {
        token: Some("unknown".into()),
        ..caller.clone()
    };
    assert!(
        l.list(&unknown, "p1").await.is_err(),
        "list with an unknown token"
    );
    assert_eq!(
        fake.load_balancers().len(),
        1,
        "{:?}",
        fake.load_balancers()
    );

    // a hanging Octavia is bounded by the timeout
    fake.inject(Fault {
        hang: true,
        ..once(0)
    });
    let e = l.list(&caller, "p1").await;
    assert!(
        e.as_ref().is_err_and(|e| e.is_timeout()),
        "list against a hanging Octavia: {e:?}"
    );
}

fn fip(id: &str, address: &str, port: &str) -> osfake::FloatingIp {
    osfake::FloatingIp {
        id: id.into(),
        address: address.into(),
        port_id: port.into(),
        project_id: "p1".into(),
        description: String::new(),
    }
}

// Go: TestLoadBalancersFloatingIPs.
#[tokio::test]
async fn load_balancers_floating_ips() {
    let (l, fake, caller) = load_balancers(Duration::from_secs(2)).await;
    fake.add_floating_ip(fip("fip-1", "203.0.113.10", "port-1"));
    fake.add_floating_ip(fip("fip-2", "203.0.113.11", "port-2"));
    fake.add_floating_ip(fip("fip-3", "203.0.113.12", ""));

    match l.delete_floating_ips(&caller, "port-1").await {
        Ok(got) => assert_eq!(got, ["203.0.113.10"]),
        Err(e) => panic!("{e}"),
    }
    let left: Vec<String> = fake.floating_ips().into_iter().map(|f| f.id).collect();
    assert_eq!(left, ["fip-2", "fip-3"]);
    assert!(
        fake.calls().iter().any(|c| c.service == Service::Network
            && c.path == "/v2.0/floatingips"
            && c.query.get("port_id") == Some("port-1")),
        "the floating IPs were not listed by port"
    );
    // Nothing on the port any more: nothing to do.
    match l.delete_floating_ips(&caller, "port-1").await {
        Ok(got) => assert!(got.is_empty(), "{got:?}"),
        Err(e) => panic!("{e}"),
    }

    fake.inject(Fault {
        service: Some(Service::Network),
        path: Some("/v2.0/floatingips/".into()),
        status: 403,
        times: 1,
        hang: false,
    });
    let e = l.delete_floating_ips(&caller, "port-2").await;
    assert!(
        e.as_ref().is_err_and(|e| e.is_forbidden()),
        "delete refused: {e:?}"
    );
    assert_eq!(
        fake.floating_ips().len(),
        2,
        "a refused delete removed the floating IP"
    );
}

// Go: TestLoadBalancersWithoutOctavia.
#[tokio::test]
async fn load_balancers_without_octavia() {
    let (l, fake, mut caller) = load_balancers(Duration::from_secs(2)).await;
    caller.service_catalog = Some(fake.catalog_without(&[Service::LoadBalancer]));
    let e = l.list(&caller, "p1").await;
    assert!(
        matches!(&e, Err(e) if *e.kind() == ErrorKind::NoLoadBalancerService),
        "list: {e:?}"
    );
    let e = l.delete(&caller, "lb-1").await;
    assert!(
        matches!(&e, Err(e) if *e.kind() == ErrorKind::NoLoadBalancerService),
        "delete: {e:?}"
    );
    assert!(
        fake.calls().is_empty(),
        "calls to a cloud without a load-balancer endpoint"
    );
    let ftp = LoadBalancers::new(
        session_for(&fake, Duration::from_secs(1)),
        EndpointSettings {
            endpoint: Some("ftp://octavia".into()),
            ..Default::default()
        },
        EndpointSettings::default(),
    );
    assert!(ftp.is_err(), "an ftp endpoint was accepted");
}

// Go: TestVolumeTypesList.
#[tokio::test]
async fn volume_types_list() {
    let fake = start_fake(Seed::default()).await;
    for (id, name) in [("1", "__DEFAULT__"), ("2", "ssd"), ("3", "hdd")] {
        fake.add_volume_type(FakeVolumeType {
            id: id.into(),
            name: name.into(),
        });
    }
    fake.set_default_volume_type(Some("ssd"));
    let v = match VolumeTypes::new(
        session_for(&fake, Duration::from_secs(2)),
        EndpointSettings::default(),
    ) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    };
    let catalog = |typ: &str| {
        format!(
            r#"[{{"type":"{typ}","endpoints":[{{"interface":"public","region":"RegionOne","url":"{}/p1"}}]}}]"#,
            fake.endpoint(Service::BlockStorage, "public")
        )
        .into_bytes()
    };
    for typ in ["volumev3", "block-storage"] {
        fake.reset();
        let caller = Caller {
            token: Some(USER.into()),
            project_id: "p1".into(),
            service_catalog: Some(catalog(typ)),
            ..Default::default()
        };
        let want = vec![
            VolumeType {
                name: "__DEFAULT__".into(),
                default: false,
            },
            VolumeType {
                name: "ssd".into(),
                default: true,
            },
            VolumeType {
                name: "hdd".into(),
                default: false,
            },
        ];
        assert_eq!(v.list(&caller).await, Ok(Some(want)), "catalog type {typ}");
        let calls = fake.calls();
        assert_eq!(calls.len(), 2, "{calls:?}");
        for c in calls {
            assert_eq!(c.token.as_deref(), Some(USER), "{c}: the user's token");
            assert!(c.path.starts_with("/v3/p1/types"), "{c}");
        }
    }
    // no Cinder in the catalog
    let caller = Caller {
        token: Some(USER.into()),
        service_catalog: Some(catalog("compute")),
        ..Default::default()
    };
    assert_eq!(v.list(&caller).await, Ok(None));
    // no default type: none is marked
    fake.set_default_volume_type(None);
    let caller = Caller {
        token: Some(USER.into()),
        service_catalog: Some(fake.catalog()),
        ..Default::default()
    };
    match v.list(&Caller::service()).await {
        Ok(Some(types)) => assert!(types.iter().all(|t| !t.default), "{types:?}"),
        other => panic!("as the service: {other:?}"),
    }
    match v.list(&caller).await {
        Ok(Some(types)) => assert_eq!(types.len(), 3),
        other => panic!("{other:?}"),
    }
}
