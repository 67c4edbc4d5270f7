//! The drivers' `openstack` import ([`DriverCloud`]) against the double:
//! every call as the caller and as the service, what an admin call may
//! reach, and how failures reach the driver.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use driver_host::{
    Credentials, Flavor as DriverFlavor, HostError, Image as DriverImage,
    LoadBalancer as DriverLoadBalancer, OpenStackAccess, ShareType as DriverShareType,
    VolumeType as DriverVolumeType,
};
use http::Method;
use magnum_domain::MagnumError;
use openkeel_magnum_osfake::{
    self as osfake, Fault, OsFake, SERVICE_TOKEN, Service, ShareType as FakeShareType, UserToken,
    VolumeType as FakeVolumeType,
};

use super::testing::{
    IMAGE_NO_DISTRO, IMAGE_UBUNTU, NET_PRIVATE, NET_PUBLIC, SUB_PRIVATE, USER_TOKEN, clients,
    session_for, start_fake, test_seed,
};
use super::{
    AppCredentialSettings, ClientsSettings, DriverCloud, DriverCloudSettings, Lookup, Session,
    SessionSettings,
};

/// A token of u1 in p1 that may not get an application credential.
const READER_TOKEN: &str = "gAAAAA-reader-token";

/// The double with the Go tests' seed, the caller's token known to
/// Keystone, an image with a disk bus, a flavor with extra specs, and the
/// [`DriverCloud`] wired to it with the service credentials.
struct Harness {
    fake: OsFake,
    cloud: DriverCloud,
}

fn seed() -> osfake::Seed {
    let mut seed = test_seed();
    if let Some(ubuntu) = seed.images.iter_mut().find(|i| i.id == IMAGE_UBUNTU) {
        ubuntu
            .properties
            .insert("hw_disk_bus".into(), "scsi".into());
    }
    seed.flavor_extra_specs.insert(
        "2".into(),
        BTreeMap::from([
            ("resources:VGPU".into(), "1".into()),
            ("hw:cpu_policy".into(), "dedicated".into()),
        ]),
    );
    let user = |roles: &[&str]| UserToken {
        user_id: "u1".into(),
        project_id: "p1".into(),
        roles: roles.iter().map(|r| (*r).to_owned()).collect(),
        ..Default::default()
    };
    seed.user_tokens.insert(
        USER_TOKEN.into(),
        user(&["member", "load-balancer_member", "reader"]),
    );
    seed.user_tokens
        .insert(READER_TOKEN.into(), user(&["reader"]));
    seed
}

fn driver_cloud(session: Session, keystone: String) -> DriverCloud {
    let lookup: Arc<dyn Lookup> = Arc::new(clients(session.clone(), ClientsSettings::default()));
    let settings = DriverCloudSettings {
        app_credentials: AppCredentialSettings {
            auth_url: keystone,
            roles: Vec::new(),
        },
        ..Default::default()
    };
    match DriverCloud::new(lookup, session, settings) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

impl Harness {
    async fn new() -> Self {
        Self::with_timeout(Duration::from_secs(5)).await
    }

    async fn with_timeout(timeout: Duration) -> Self {
        let fake = start_fake(seed()).await;
        let cloud = driver_cloud(session_for(&fake, timeout), fake.identity_endpoint());
        Self { fake, cloud }
    }

    /// The caller u1 of project p1 with its token and the double's
    /// catalog.
    fn user(&self) -> Credentials {
        Credentials {
            auth_token: Some(USER_TOKEN.into()),
            user_id: "u1".into(),
            project_id: "p1".into(),
            service_catalog: Some(self.fake.catalog()),
            admin: false,
        }
    }

    /// [`Harness::user`] with a catalog without `services`.
    fn user_without(&self, services: &[Service]) -> Credentials {
        Credentials {
            service_catalog: Some(self.fake.catalog_without(services)),
            ..self.user()
        }
    }

    /// The service in `project`, as the driver host sets it for an admin
    /// call about a cluster of that project.
    fn admin(project: &str) -> Credentials {
        Credentials {
            project_id: project.into(),
            ..Credentials::admin()
        }
    }

    /// The recorded calls as `GET compute /v2.1/flavors/2`, with the token
    /// each one carried.
    fn calls(&self) -> Vec<(String, Option<String>)> {
        self.fake
            .calls()
            .iter()
            .map(|c| (c.to_string(), c.token.clone()))
            .collect()
    }

    /// Checks that every call so far carried `token`, and forgets them.
    #[track_caller]
    fn all_with(&self, token: &str) {
        let calls = self.calls();
        assert!(!calls.is_empty(), "no call was made");
        for (call, t) in calls {
            assert_eq!(t.as_deref(), Some(token), "{call}");
        }
        self.fake.reset();
    }

    /// Checks that no call was made.
    #[track_caller]
    fn none(&self) {
        assert_eq!(self.calls(), [], "calls");
    }
}

fn ok<T, E: std::fmt::Debug>(r: Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{e:?}"),
    }
}

/// Checks that `r` is `want`, one of Magnum's client errors, as it is.
#[track_caller]
fn want_client<T: std::fmt::Debug>(r: Result<T, HostError>, want: MagnumError) {
    match r {
        Err(HostError::Client(e)) => assert_eq!(e, want),
        other => panic!("got {other:?}, want the client error {want:?}"),
    }
}

#[tokio::test]
async fn resolves_act_as_the_caller_with_magnums_errors() {
    let h = Harness::new().await;
    let user = h.user();
    let os = &h.cloud;

    assert_eq!(ok(os.flavor_name(&user, "2").await), "m1.medium");
    assert_eq!(ok(os.flavor_name(&user, "m1.large").await), "m1.large");
    want_client(
        os.flavor_name(&user, "m9.huge").await,
        MagnumError::flavor_not_found("m9.huge"),
    );
    assert_eq!(
        ok(os.image(&user, "ubuntu-jammy").await),
        DriverImage {
            id: IMAGE_UBUNTU.into(),
            disk_bus: Some("scsi".into()),
        }
    );
    assert_eq!(
        ok(os.image(&user, IMAGE_NO_DISTRO).await),
        DriverImage {
            id: IMAGE_NO_DISTRO.into(),
            disk_bus: None,
        }
    );
    want_client(
        os.image(&user, "no-such-image").await,
        MagnumError::image_not_found("no-such-image"),
    );
    want_client(
        os.image(&user, "dup").await,
        MagnumError::multiple_openstack_resources("images", "dup", "image"),
    );
    assert_eq!(ok(os.network_id(&user, "private").await), NET_PRIVATE);
    // External networks are networks too.
    assert_eq!(ok(os.network_id(&user, "public").await), NET_PUBLIC);
    want_client(
        os.network_id(&user, "nowhere").await,
        MagnumError::fixed_network_not_found("nowhere"),
    );
    assert_eq!(ok(os.subnet_id(&user, "private-subnet").await), SUB_PRIVATE);
    assert_eq!(ok(os.subnet_id(&user, SUB_PRIVATE).await), SUB_PRIVATE);
    want_client(
        os.subnet_id(&user, "nosubnet").await,
        MagnumError::fixed_subnet_not_found("nosubnet"),
    );
    h.all_with(USER_TOKEN);

    // A catalog without the service: Magnum's 403.
    let no_glance = h.user_without(&[Service::Image]);
    want_client(
        os.image(&no_glance, "ubuntu-jammy").await,
        MagnumError::authorization_failure(
            "glance",
            "unexpected client error occurred: publicURL endpoint for image service not found",
        ),
    );
    h.none();
}

#[tokio::test]
async fn resolves_that_only_the_caller_can_make_are_refused_to_the_service() {
    let h = Harness::new().await;
    let admin = Harness::admin("p1");
    let os = &h.cloud;
    for r in [
        os.image(&admin, "ubuntu-jammy").await.map(|_| ()),
        os.network_id(&admin, "private").await.map(|_| ()),
        os.subnet_id(&admin, "private-subnet").await.map(|_| ()),
    ] {
        assert!(
            matches!(&r, Err(HostError::Invalid(m)) if m.contains("service's credentials")),
            "{r:?}"
        );
    }
    h.none();
    // Flavors are the cloud's: the service names them.
    assert_eq!(ok(os.flavor_name(&admin, "m1.small").await), "m1.small");
    want_client(
        os.flavor_name(&admin, "m9.huge").await,
        MagnumError::flavor_not_found("m9.huge"),
    );
    h.all_with(SERVICE_TOKEN);

    // A request without a token (the API without Keystone) never falls
    // back on the service's credentials.
    let anonymous = Credentials {
        auth_token: None,
        ..h.user()
    };
    assert!(matches!(
        os.flavor_name(&anonymous, "m1.small").await,
        Err(HostError::Invalid(_))
    ));
    assert!(matches!(
        os.volume_types(&anonymous).await,
        Err(HostError::Invalid(_))
    ));
    h.none();
}

#[tokio::test]
async fn failures_reach_the_driver_as_host_errors_without_the_token() {
    let h = Harness::with_timeout(Duration::from_millis(300)).await;
    let user = h.user();
    let os = &h.cloud;
    let fault = |service, status| Fault {
        service: Some(service),
        status,
        times: 1,
        ..Default::default()
    };
    let mut shown = Vec::new();

    h.fake.inject(fault(Service::Image, 503));
    let e = os.image(&user, "ubuntu-jammy").await;
    assert!(matches!(&e, Err(HostError::Unavailable(_))), "{e:?}");
    shown.push(format!("{e:?}"));

    h.fake.inject(fault(Service::Network, 500));
    let e = os.network_id(&user, "private").await;
    assert!(matches!(&e, Err(HostError::Other(_))), "{e:?}");
    shown.push(format!("{e:?}"));

    h.fake.inject(Fault {
        hang: true,
        ..fault(Service::Compute, 0)
    });
    let e = os.flavor(&user, "2").await;
    assert!(
        matches!(&e, Err(HostError::Unavailable(m)) if m.contains("no answer within")),
        "{e:?}"
    );
    shown.push(format!("{e:?}"));

    // The flavor went away between the lookup and its extra specs.
    h.fake.inject(Fault {
        path: Some("/v2.1/flavors/2/os-extra_specs".into()),
        ..fault(Service::Compute, 404)
    });
    let e = os.flavor(&user, "2").await;
    assert!(matches!(&e, Err(HostError::NotFound(_))), "{e:?}");
    shown.push(format!("{e:?}"));

    h.fake.inject(fault(Service::Compute, 409));
    let e = os
        .ensure_server_group(&user, "kube-x", "anti-affinity")
        .await;
    assert!(matches!(&e, Err(HostError::Conflict(_))), "{e:?}");
    shown.push(format!("{e:?}"));

    // Refused by Octavia: another project's load balancers.
    let e = os.load_balancers(&user, "p2").await;
    assert!(
        matches!(&e, Err(HostError::Other(m)) if m.contains("HTTP 403")),
        "{e:?}"
    );
    shown.push(format!("{e:?}"));

    // No service credentials are configured.
    let unconfigured = driver_cloud(
        match Session::new(SessionSettings::default(), None) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        },
        String::new(),
    );
    let e = unconfigured
        .delete_server_group(&Harness::admin("p1"), "kube-x")
        .await;
    assert!(
        matches!(&e, Err(HostError::Unavailable(m)) if m.contains("no service credentials")),
        "{e:?}"
    );
    for text in shown {
        assert!(!text.contains(USER_TOKEN), "the token shows in {text}");
    }
}

#[tokio::test]
async fn flavor_details_carry_the_extra_specs() {
    let h = Harness::new().await;
    let os = &h.cloud;
    let medium = DriverFlavor {
        id: "2".into(),
        name: "m1.medium".into(),
        vcpus: 2,
        ram_mb: 4096,
        disk_gb: 40,
        extra_specs: vec![
            ("hw:cpu_policy".into(), "dedicated".into()),
            ("resources:VGPU".into(), "1".into()),
        ],
    };
    assert_eq!(ok(os.flavor(&h.user(), "m1.medium").await), medium);
    assert_eq!(
        h.calls().into_iter().map(|(c, _)| c).collect::<Vec<_>>(),
        [
            "GET compute /v2.1/flavors/m1.medium",
            "GET compute /v2.1/flavors/detail",
            "GET compute /v2.1/flavors/2/os-extra_specs",
        ]
    );
    h.all_with(USER_TOKEN);
    // By id, as the service.
    assert_eq!(ok(os.flavor(&Harness::admin("p1"), "2").await), medium);
    h.all_with(SERVICE_TOKEN);
    let small = ok(os.flavor(&h.user(), "m1.small").await);
    assert!(
        small.extra_specs.is_empty() && small.ram_mb == 2048,
        "{small:?}"
    );
    want_client(
        os.flavor(&h.user(), "m9.huge").await,
        MagnumError::flavor_not_found("m9.huge"),
    );
}

fn group(id: &str, name: &str, project: &str) -> osfake::ServerGroup {
    osfake::ServerGroup {
        id: id.into(),
        name: name.into(),
        policy: "anti-affinity".into(),
        project_id: project.into(),
    }
}

fn groups(fake: &OsFake) -> Vec<(String, String)> {
    fake.server_groups()
        .into_iter()
        .map(|g| (g.id, g.project_id))
        .collect()
}

#[tokio::test]
async fn server_groups_as_the_caller_and_as_the_service() {
    let h = Harness::new().await;
    let os = &h.cloud;
    let user = h.user();
    let id = ok(os
        .ensure_server_group(&user, "kube-abcde", "soft-anti-affinity")
        .await);
    assert_eq!(
        ok(os
            .ensure_server_group(&user, "kube-abcde", "soft-anti-affinity")
            .await),
        id,
        "ensure is idempotent"
    );
    assert_eq!(groups(&h.fake), [(id.clone(), "p1".to_owned())]);
    h.all_with(USER_TOKEN);
    ok(os.delete_server_group(&user, "kube-abcde").await);
    assert!(h.fake.server_groups().is_empty());
    h.all_with(USER_TOKEN);

    // The service would make the group in its own project.
    let admin = Harness::admin("p1");
    let e = os.ensure_server_group(&admin, "kube-x", "affinity").await;
    assert!(matches!(&e, Err(HostError::Invalid(_))), "{e:?}");
    h.none();
}

#[tokio::test]
async fn an_admin_server_group_delete_touches_only_the_clusters_project() {
    let h = Harness::new().await;
    let os = &h.cloud;
    // Same name in another project, listed first.
    h.fake.add_server_group(group("g-p2", "kube-x", "p2"));
    h.fake.add_server_group(group("g-p1", "kube-x", "p1"));

    ok(os
        .delete_server_group(&Harness::admin("p1"), "kube-x")
        .await);
    assert_eq!(groups(&h.fake), [("g-p2".to_owned(), "p2".to_owned())]);
    let deletes: Vec<String> = h
        .fake
        .calls()
        .iter()
        .filter(|c| c.method == Method::DELETE)
        .map(|c| c.path.clone())
        .collect();
    assert_eq!(deletes, ["/v2.1/os-server-groups/g-p1"]);
    h.all_with(SERVICE_TOKEN);

    // Gone from the cluster's project: nothing to do, even though another
    // project has one of that name.
    ok(os
        .delete_server_group(&Harness::admin("p1"), "kube-x")
        .await);
    ok(os
        .delete_server_group(&Harness::admin("p3"), "kube-x")
        .await);
    assert_eq!(groups(&h.fake), [("g-p2".to_owned(), "p2".to_owned())]);
    assert!(
        h.fake.calls().iter().all(|c| c.method == Method::GET),
        "{:?}",
        h.calls()
    );
    h.fake.reset();

    // An admin call that names no project acts nowhere.
    let e = os
        .delete_server_group(&Credentials::admin(), "kube-x")
        .await;
    assert!(matches!(&e, Err(HostError::Invalid(_))), "{e:?}");
    h.none();
    assert_eq!(groups(&h.fake), [("g-p2".to_owned(), "p2".to_owned())]);
}

#[tokio::test]
async fn application_credentials_are_made_by_the_user_and_deleted_by_the_service() {
    let h = Harness::new().await;
    let os = &h.cloud;
    let ac = ok(os
        .create_application_credential(&h.user(), "magnum-abcde", "Magnum cluster abcde")
        .await);
    assert!(
        ac.id.starts_with("ac")
            && !ac.secret.is_empty()
            && ac.name == "magnum-abcde"
            && ac.user_id == "u1",
        "{ac:?}"
    );
    let held = h.fake.application_credentials();
    assert_eq!(held.len(), 1);
    assert_eq!(
        (
            held[0].project_id.as_str(),
            held[0].roles.clone(),
            held[0].unrestricted,
            held[0].description.as_str()
        ),
        (
            "p1",
            vec!["member".to_owned(), "load-balancer_member".to_owned()],
            false,
            "Magnum cluster abcde"
        ),
        "the configured roles the user has, never unrestricted"
    );
    h.all_with(USER_TOKEN);

    // The same name again: Keystone's conflict.
    let e = os
        .create_application_credential(&h.user(), "magnum-abcde", "again")
        .await;
    assert!(matches!(&e, Err(HostError::Conflict(_))), "{e:?}");
    // A user with none of the roles a credential may get.
    let reader = Credentials {
        auth_token: Some(READER_TOKEN.into()),
        ..h.user()
    };
    let e = os
        .create_application_credential(&reader, "magnum-fghij", "d")
        .await;
    assert!(
        matches!(&e, Err(HostError::Other(m)) if m.contains("none of the roles")),
        "{e:?}"
    );
    h.fake.reset();

    ok(os.delete_application_credential("u1", &ac.id).await);
    assert!(h.fake.application_credentials().is_empty());
    // Already gone: not an error.
    ok(os.delete_application_credential("u1", &ac.id).await);
    h.all_with(SERVICE_TOKEN);

    // Only the user makes a credential of the user.
    let e = os
        .create_application_credential(&Harness::admin("p1"), "magnum-x", "d")
        .await;
    assert!(matches!(&e, Err(HostError::Invalid(_))), "{e:?}");
    h.none();

    // Without a Keystone URL there is no application credential to make.
    let none = driver_cloud(session_for(&h.fake, Duration::from_secs(2)), String::new());
    let e = none
        .create_application_credential(&h.user(), "magnum-y", "d")
        .await;
    assert!(matches!(&e, Err(HostError::Unavailable(_))), "{e:?}");
    let e = none.delete_application_credential("u1", "id").await;
    assert!(matches!(&e, Err(HostError::Unavailable(_))), "{e:?}");
    h.none();
    let shown = format!("{ac:?}");
    assert!(!shown.contains(&ac.secret), "{shown}");
}

fn lb(id: &str, project: &str, port: &str) -> osfake::LoadBalancer {
    osfake::LoadBalancer {
        id: id.into(),
        name: format!("kube_service_{id}"),
        project_id: project.into(),
        vip_port_id: port.into(),
        listeners: vec![format!("listener-{id}")],
        ..Default::default()
    }
}

fn fip(id: &str, port: &str, project: &str) -> osfake::FloatingIp {
    osfake::FloatingIp {
        id: id.into(),
        address: format!("203.0.113.{}", id.len()),
        port_id: port.into(),
        project_id: project.into(),
        description: String::new(),
    }
}

fn driver_lb(id: &str, project: &str, port: &str) -> DriverLoadBalancer {
    DriverLoadBalancer {
        id: id.into(),
        name: format!("kube_service_{id}"),
        description: String::new(),
        project_id: project.into(),
        provisioning_status: "ACTIVE".into(),
        vip_port_id: port.into(),
    }
}

fn lb_ids(fake: &OsFake) -> Vec<String> {
    fake.load_balancers().into_iter().map(|l| l.id).collect()
}

fn fip_ids(fake: &OsFake) -> Vec<String> {
    fake.floating_ips().into_iter().map(|f| f.id).collect()
}

#[tokio::test]
async fn load_balancers_of_the_clusters_project() {
    let h = Harness::new().await;
    let os = &h.cloud;
    h.fake.add_load_balancer(lb("lb-1", "p1", "port-1"));
    h.fake.add_load_balancer(lb("lb-2", "p2", "port-2"));

    let mine = Some(vec![driver_lb("lb-1", "p1", "port-1")]);
    assert_eq!(ok(os.load_balancers(&h.user(), "p1").await), mine);
    h.all_with(USER_TOKEN);
    let admin = Harness::admin("p1");
    assert_eq!(ok(os.load_balancers(&admin, "p1").await), mine);
    h.all_with(SERVICE_TOKEN);
    // The service sees every project, but acts in the cluster's only.
    let e = os.load_balancers(&admin, "p2").await;
    assert!(matches!(&e, Err(HostError::AccessDenied(_))), "{e:?}");
    h.none();
    // No Octavia in the catalog: no load balancers.
    let no_octavia = h.user_without(&[Service::LoadBalancer]);
    assert_eq!(ok(os.load_balancers(&no_octavia, "p1").await), None);
    h.none();
    h.fake.inject(Fault {
        service: Some(Service::LoadBalancer),
        status: 503,
        times: 1,
        ..Default::default()
    });
    let e = os.load_balancers(&h.user(), "p1").await;
    assert!(matches!(&e, Err(HostError::Unavailable(_))), "{e:?}");
}

#[tokio::test]
async fn load_balancers_are_deleted_with_their_floating_ips() {
    let h = Harness::new().await;
    let os = &h.cloud;
    for (id, project, port) in [
        ("lb-1", "p1", "port-1"),
        ("lb-2", "p2", "port-2"),
        ("lb-3", "p1", "port-3"),
    ] {
        h.fake.add_load_balancer(lb(id, project, port));
    }
    h.fake.add_floating_ip(fip("fip-1", "port-1", "p1"));
    h.fake.add_floating_ip(fip("fip-2", "port-2", "p2"));
    h.fake.add_floating_ip(fip("fip-3", "port-3", "p1"));
    let admin = Harness::admin("p1");

    // The service never acts on a load balancer of another project, even
    // one the driver claims is the cluster's…
    let e = os
        .delete_load_balancer(&admin, &driver_lb("lb-2", "p2", "port-2"))
        .await;
    assert!(matches!(&e, Err(HostError::AccessDenied(_))), "{e:?}");
    h.none();
    ok(os
        .delete_load_balancer(&admin, &driver_lb("lb-2", "p1", "port-2"))
        .await);
    assert_eq!(lb_ids(&h.fake), ["lb-1", "lb-2", "lb-3"]);
    assert_eq!(fip_ids(&h.fake), ["fip-1", "fip-2", "fip-3"]);
    h.fake.reset();

    // …and frees the VIP port Octavia names, not the one it is told.
    ok(os
        .delete_load_balancer(&admin, &driver_lb("lb-1", "p1", "port-2"))
        .await);
    assert_eq!(lb_ids(&h.fake), ["lb-2", "lb-3"]);
    assert_eq!(fip_ids(&h.fake), ["fip-2", "fip-3"]);
    let calls: Vec<String> = h.calls().into_iter().map(|(c, _)| c).collect();
    assert_eq!(
        calls,
        [
            "GET load-balancer /v2/lbaas/loadbalancers?project_id=p1",
            "GET network /v2.0/floatingips?port_id=port-1",
            "DELETE network /v2.0/floatingips/fip-1",
            "DELETE load-balancer /v2/lbaas/loadbalancers/lb-1?cascade=true",
        ]
    );
    h.all_with(SERVICE_TOKEN);

    // As the caller: the floating IPs of the VIP port, then the load
    // balancer with its listener.
    ok(os
        .delete_load_balancer(&h.user(), &driver_lb("lb-3", "p1", "port-3"))
        .await);
    assert_eq!(lb_ids(&h.fake), ["lb-2"]);
    assert_eq!(fip_ids(&h.fake), ["fip-2"]);
    h.all_with(USER_TOKEN);
    // Gone already: not an error.
    ok(os
        .delete_load_balancer(&h.user(), &driver_lb("lb-3", "p1", "port-3"))
        .await);
    // No Octavia: nothing to delete.
    ok(os
        .delete_load_balancer(
            &Credentials {
                service_catalog: Some(h.fake.catalog_without(&[Service::LoadBalancer])),
                ..h.user()
            },
            &driver_lb("lb-9", "p1", ""),
        )
        .await);
    assert_eq!(lb_ids(&h.fake), ["lb-2"]);
}

#[tokio::test]
async fn volume_types_and_share_types() {
    let h = Harness::new().await;
    let os = &h.cloud;
    for (id, name) in [("1", "__DEFAULT__"), ("2", "ssd")] {
        h.fake.add_volume_type(FakeVolumeType {
            id: id.into(),
            name: name.into(),
        });
    }
    h.fake.set_default_volume_type(Some("ssd"));
    let volumes = Some(vec![
        DriverVolumeType {
            name: "__DEFAULT__".into(),
            is_default: false,
        },
        DriverVolumeType {
            name: "ssd".into(),
            is_default: true,
        },
    ]);
    assert_eq!(ok(os.volume_types(&h.user()).await), volumes);
    h.all_with(USER_TOKEN);
    assert_eq!(ok(os.volume_types(&Harness::admin("p1")).await), volumes);
    h.all_with(SERVICE_TOKEN);
    let no_cinder = h.user_without(&[Service::BlockStorage]);
    assert_eq!(ok(os.volume_types(&no_cinder).await), None);

    for (id, name, dhss) in [
        ("st-1", "default", Some(false)),
        ("st-2", "cephfs", None),
        ("st-3", "generic", Some(true)),
    ] {
        h.fake.add_share_type(FakeShareType {
            id: id.into(),
            name: name.into(),
            driver_handles_share_servers: dhss,
        });
    }
    h.fake.set_default_share_type(Some("default"));
    let shares = Some(vec![
        DriverShareType {
            id: "st-1".into(),
            name: "default".into(),
            is_default: true,
            driver_handles_share_servers: Some(false),
        },
        DriverShareType {
            id: "st-2".into(),
            name: "cephfs".into(),
            is_default: false,
            driver_handles_share_servers: None,
        },
        DriverShareType {
            id: "st-3".into(),
            name: "generic".into(),
            is_default: false,
            driver_handles_share_servers: Some(true),
        },
    ]);
    h.fake.reset();
    assert_eq!(ok(os.share_types(&h.user()).await), shares);
    let calls: Vec<String> = h.calls().into_iter().map(|(c, _)| c).collect();
    assert_eq!(
        calls,
        ["GET sharev2 /v2/types", "GET sharev2 /v2/types/default"]
    );
    h.all_with(USER_TOKEN);
    assert_eq!(ok(os.share_types(&Harness::admin("p1")).await), shares);
    h.all_with(SERVICE_TOKEN);
    // Manila under the service-types authority's name, with a project in
    // its URL.
    let catalog = format!(
        r#"[{{"type":"shared-file-system","endpoints":[{{"interface":"public","region":"RegionOne","url":"{}/p1"}}]}}]"#,
        h.fake.endpoint(Service::SharedFileSystem, "public")
    );
    let official = Credentials {
        service_catalog: Some(catalog.into_bytes()),
        ..h.user()
    };
    assert_eq!(ok(os.share_types(&official).await), shares);
    h.fake.reset();
    // No Manila in the catalog.
    let no_manila = h.user_without(&[Service::SharedFileSystem]);
    assert_eq!(ok(os.share_types(&no_manila).await), None);
    h.none();
    // No default share type: none is marked.
    h.fake.set_default_share_type(None);
    match ok(os.share_types(&h.user()).await) {
        Some(types) => assert!(types.iter().all(|t| !t.is_default), "{types:?}"),
        None => panic!("no share types"),
    }
}
