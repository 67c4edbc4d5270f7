//! Helpers of the openstack tests: the seed of the double, a harness wiring
//! [`Clients`] to it through the token's catalog, and assertions on errors
//! and on the requests made.

use std::collections::BTreeMap;
use std::time::Duration;

use magnum_domain::RequestContext;
use openkeel_magnum_osfake as osfake;
use osfake::OsFake;

use super::{Clients, ClientsSettings, LookupError, ServiceCredentials, Session, SessionSettings};

pub(crate) const USER_TOKEN: &str = "gAAAAA-user-token";
pub(crate) const REQUEST_ID: &str = "req-0b8c4a9e-2f1d-4e3c-9a7b-6c5d4e3f2a10";

pub(crate) const IMAGE_UBUNTU: &str = "11111111-1111-4111-8111-111111111111";
pub(crate) const IMAGE_NO_DISTRO: &str = "22222222-2222-4222-8222-222222222222";
pub(crate) const IMAGE_DUP_A: &str = "33333333-3333-4333-8333-333333333331";
pub(crate) const IMAGE_DUP_B: &str = "33333333-3333-4333-8333-333333333332";
pub(crate) const IMAGE_HIDDEN: &str = "44444444-4444-4444-8444-444444444444";
pub(crate) const IMAGE_NAMED_ID: &str = "55555555-5555-4555-8555-555555555555";

pub(crate) const NET_PUBLIC: &str = "aaaaaaaa-0000-4000-8000-000000000001";
pub(crate) const NET_PRIVATE: &str = "aaaaaaaa-0000-4000-8000-000000000002";
pub(crate) const NET_EXT_DUP_A: &str = "aaaaaaaa-0000-4000-8000-000000000003";
pub(crate) const NET_EXT_DUP_B: &str = "aaaaaaaa-0000-4000-8000-000000000004";
pub(crate) const NET_DUP_A: &str = "aaaaaaaa-0000-4000-8000-000000000005";
pub(crate) const NET_DUP_B: &str = "aaaaaaaa-0000-4000-8000-000000000006";
pub(crate) const SUB_PRIVATE: &str = "bbbbbbbb-0000-4000-8000-000000000001";
pub(crate) const SUB_DUP_A: &str = "bbbbbbbb-0000-4000-8000-000000000002";
pub(crate) const SUB_DUP_B: &str = "bbbbbbbb-0000-4000-8000-000000000003";
pub(crate) const NET_UUID_NAME: &str = "aaaaaaaa-0000-4000-8000-000000000007";

/// The service credentials the double knows (user `magnum` of project
/// `service`).
pub(crate) fn service_credentials(fake: &OsFake) -> ServiceCredentials {
    ServiceCredentials {
        auth_url: fake.identity_endpoint(),
        username: "magnum".into(),
        password: "pw".into(),
        user_domain_name: Some("Default".into()),
        project_name: Some("service".into()),
        project_domain_name: Some("Default".into()),
        ..Default::default()
    }
}

/// A session with the service credentials of the double and `timeout`.
pub(crate) fn session_for(fake: &OsFake, timeout: Duration) -> Session {
    let settings = SessionSettings {
        timeout: Some(timeout),
        ..Default::default()
    };
    match Session::new(settings, Some(service_credentials(fake))) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

fn image(id: &str, name: &str, os_distro: &str) -> osfake::Image {
    osfake::Image {
        id: id.into(),
        name: name.into(),
        os_distro: os_distro.into(),
        ..Default::default()
    }
}

fn flavor(id: &str, name: &str, vcpus: i64, ram: i64, disk: i64) -> osfake::Flavor {
    osfake::Flavor {
        id: id.into(),
        name: name.into(),
        vcpus,
        ram,
        disk,
    }
}

fn network(id: &str, name: &str, external: bool) -> osfake::Network {
    osfake::Network {
        id: id.into(),
        name: name.into(),
        external,
        shared: false,
    }
}

fn subnet(id: &str, name: &str, cidr: &str) -> osfake::Subnet {
    osfake::Subnet {
        id: id.into(),
        name: name.into(),
        network_id: NET_PRIVATE.into(),
        cidr: cidr.into(),
    }
}

/// The Go tests' seed.
pub(crate) fn test_seed() -> osfake::Seed {
    osfake::Seed {
        images: vec![
            osfake::Image {
                magnum_driver: "k8s_capi_helm_v1".into(),
                properties: BTreeMap::from([("kube_version".into(), "v1.30.2".into())]),
                ..image(IMAGE_UBUNTU, "ubuntu-jammy", "ubuntu")
            },
            image(IMAGE_NO_DISTRO, "plain", ""),
            image(IMAGE_DUP_A, "dup", ""),
            image(IMAGE_DUP_B, "dup", ""),
            osfake::Image {
                hidden: true,
                ..image(IMAGE_HIDDEN, "hidden", "flatcar")
            },
            // An image whose name is another image's id.
            image(IMAGE_NAMED_ID, IMAGE_UBUNTU, "debian"),
        ],
        flavors: vec![
            flavor("1", "m1.small", 1, 2048, 20),
            flavor("2", "m1.medium", 2, 4096, 40),
            flavor("3", "m1.large", 4, 8192, 80),
            flavor("bfv", "boot.from.volume", 2, 4096, 0),
            flavor("c0ffee", "odd name/with slash", 1, 512, 1),
        ],
        keypairs: vec![osfake::Keypair {
            name: "mykey".into(),
            public_key: "ssh-ed25519 AAAA test".into(),
            fingerprint: "aa:bb".into(),
            ..Default::default()
        }],
        networks: vec![
            network(NET_PUBLIC, "public", true),
            network(NET_PRIVATE, "private", false),
            network(NET_EXT_DUP_A, "ext-dup", true),
            network(NET_EXT_DUP_B, "ext-dup", true),
            network(NET_DUP_A, "dup", false),
            network(NET_DUP_B, "dup", true),
            // A network named like another network's id.
            network(NET_UUID_NAME, NET_PRIVATE, false),
        ],
        subnets: vec![
            subnet(SUB_PRIVATE, "private-subnet", "10.0.0.0/24"),
            subnet(SUB_DUP_A, "dup", "10.0.1.0/24"),
            subnet(SUB_DUP_B, "dup", "10.0.2.0/24"),
        ],
        ..Default::default()
    }
}

pub(crate) async fn start_fake(seed: osfake::Seed) -> OsFake {
    match OsFake::start(seed).await {
        Ok(f) => f,
        Err(e) => panic!("start the OpenStack double: {e}"),
    }
}

pub(crate) fn session(settings: SessionSettings) -> Session {
    match Session::new(settings, None) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

pub(crate) fn clients(session: Session, settings: ClientsSettings) -> Clients {
    match Clients::new(session, settings) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

/// A request context of the user with `catalog`.
pub(crate) fn ctx_with(catalog: Option<Vec<u8>>) -> RequestContext {
    RequestContext {
        request_id: REQUEST_ID.to_owned(),
        auth_token: Some(USER_TOKEN.to_owned()),
        user_id: "u1".to_owned(),
        project_id: "p1".to_owned(),
        service_catalog: catalog,
        ..Default::default()
    }
}

/// A request context without a catalog.
pub(crate) fn ctx() -> RequestContext {
    ctx_with(None)
}

/// [`Clients`] wired to a fresh double through the token's catalog.
pub(crate) struct Harness {
    pub(crate) fake: OsFake,
    pub(crate) clients: Clients,
    pub(crate) ctx: RequestContext,
}

impl Harness {
    pub(crate) async fn new() -> Self {
        Self::with(|_, _| {}).await
    }

    /// With the settings changed by `mutate` (the timeout is 5 s unless it
    /// changes it).
    pub(crate) async fn with(
        mutate: impl FnOnce(&mut ClientsSettings, &mut SessionSettings),
    ) -> Self {
        let fake = start_fake(test_seed()).await;
        fake.require_token(Some(USER_TOKEN));
        let mut cs = ClientsSettings::default();
        let mut ss = SessionSettings {
            timeout: Some(Duration::from_secs(5)),
            ..Default::default()
        };
        mutate(&mut cs, &mut ss);
        let clients = clients(session(ss), cs);
        let ctx = ctx_with(Some(fake.catalog()));
        Self { fake, clients, ctx }
    }

    /// The recorded calls as `GET image /v2/images?name=x`.
    pub(crate) fn paths(&self) -> Vec<String> {
        self.fake.calls().iter().map(ToString::to_string).collect()
    }

    /// Compares the requests made with `want`, and checks that every request
    /// carried the caller's token and that no list went unfiltered (but the
    /// flavor listing, which Nova cannot filter by name).
    #[track_caller]
    pub(crate) fn check_calls(&self, want: &[&str]) {
        assert_eq!(self.paths(), want, "requests");
        for c in self.fake.calls() {
            assert_eq!(
                c.token.as_deref(),
                Some(USER_TOKEN),
                "{c}: the caller's token"
            );
            assert!(
                !(c.is_list() && !c.filtered() && c.path != "/v2.1/flavors/detail"),
                "unfiltered list: {c}"
            );
        }
    }
}

/// Checks that `res` is Magnum's client error with exactly this status, kind
/// and message.
#[track_caller]
pub(crate) fn want_client_error<T: std::fmt::Debug>(
    res: Result<T, LookupError>,
    status: u16,
    kind: &str,
    message: &str,
) {
    match res {
        Err(LookupError::Client(e)) => assert_eq!(
            (e.status, e.kind, e.message.as_str()),
            (status, kind, message),
            "client error"
        ),
        other => panic!("got {other:?}, want the client error {status} {message:?}"),
    }
}

/// Checks that `res` is a failure Magnum answers with a 500 (not a client
/// error), and returns it.
#[track_caller]
pub(crate) fn want_failed<T: std::fmt::Debug>(
    res: Result<T, LookupError>,
) -> super::OpenStackError {
    match res {
        Err(LookupError::Failed(e)) => e,
        other => panic!("got {other:?}, want an unexpected (500) failure"),
    }
}
