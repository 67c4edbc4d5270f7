//! [`Static`]: lookups answered from built-in data, for the all-in-one mode
//! where no OpenStack cloud exists.

use magnum_domain::{MagnumError, RequestContext};
use sha1::{Digest, Sha1};

use super::clients::is_canonical_uuid;
use super::error::LookupError;
use super::{Flavor, Found, Image, Keypair, Lookup, Network, Subnet};

/// The built-in image's id. The ids are fixed so that templates created in
/// one all-in-one run keep working in the next.
pub const STATIC_IMAGE_ID: &str = "2f6e1b0c-8f4e-4c41-9d3a-7a0c2c1f5e01";
/// The built-in image's name.
pub const STATIC_IMAGE_NAME: &str = "ubuntu-jammy-kube";
/// The built-in keypair.
pub const STATIC_KEYPAIR_NAME: &str = "default";
/// The id of the external network `public`.
pub const STATIC_PUBLIC_NETWORK_ID: &str = "6b1d8a2e-3c4f-4e5a-9b6c-7d8e9f0a1b01";
/// The id of the network `private`.
pub const STATIC_PRIVATE_NETWORK_ID: &str = "6b1d8a2e-3c4f-4e5a-9b6c-7d8e9f0a1b02";
/// The id of the subnet `private-subnet` of `private`.
pub const STATIC_PRIVATE_SUBNET_ID: &str = "9c2e7f4a-1b3d-4c5e-8f6a-0b1c2d3e4f01";

/// Lookups from built-in data: one image (`ubuntu-jammy-kube`, `os_distro`
/// ubuntu), the flavors `m1.small`, `m1.medium` and `m1.large` (ids 1, 2,
/// 3), the keypair `default`, the external network `public`, the network
/// `private` and its subnet `private-subnet`, each by name or id.
///
/// With `permissive` set, a name or id that is not built in is accepted too
/// and described by an invented resource with a stable id (an ubuntu image,
/// a 2 vCPU / 4 GiB / 40 GB flavor, an external network for
/// [`Lookup::external_network`]…), so that any client script runs
/// unchanged; without it, unknown names fail with Magnum's errors, which is
/// what API tests want.
///
/// The fields may be changed before the first use.
#[derive(Clone, Debug)]
pub struct Static {
    pub permissive: bool,
    pub images: Vec<Image>,
    pub flavors: Vec<Flavor>,
    pub keypairs: Vec<Keypair>,
    pub networks: Vec<Network>,
    pub subnets: Vec<Subnet>,
}

fn flavor(id: &str, name: &str, vcpus: i64, ram: i64, disk: i64) -> Flavor {
    Flavor {
        id: id.to_owned(),
        name: name.to_owned(),
        vcpus,
        ram,
        disk,
    }
}

fn ubuntu_image(id: &str, name: &str) -> Image {
    Image {
        id: id.to_owned(),
        name: name.to_owned(),
        os_distro: Some("ubuntu".to_owned()),
        magnum_driver: None,
        properties: [("id", id), ("name", name), ("os_distro", "ubuntu")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    }
}

impl Static {
    /// The built-in resources.
    pub fn new(permissive: bool) -> Self {
        Self {
            permissive,
            images: vec![ubuntu_image(STATIC_IMAGE_ID, STATIC_IMAGE_NAME)],
            flavors: vec![
                flavor("1", "m1.small", 1, 2048, 20),
                flavor("2", "m1.medium", 2, 4096, 40),
                flavor("3", "m1.large", 4, 8192, 80),
            ],
            keypairs: vec![Keypair {
                name: STATIC_KEYPAIR_NAME.to_owned(),
                key_type: "ssh".to_owned(),
                fingerprint: String::new(),
            }],
            networks: vec![
                Network {
                    id: STATIC_PUBLIC_NETWORK_ID.to_owned(),
                    name: "public".to_owned(),
                    external: true,
                },
                Network {
                    id: STATIC_PRIVATE_NETWORK_ID.to_owned(),
                    name: "private".to_owned(),
                    external: false,
                },
            ],
            subnets: vec![Subnet {
                id: STATIC_PRIVATE_SUBNET_ID.to_owned(),
                name: "private-subnet".to_owned(),
                network_id: STATIC_PRIVATE_NETWORK_ID.to_owned(),
            }],
        }
    }

    fn find_image(&self, ident: &str) -> Result<Image, LookupError> {
        let mut found = self
            .images
            .iter()
            .filter(|i| i.id == ident || i.name == ident);
        match (found.next(), found.next()) {
            (Some(img), None) => Ok(img.clone()),
            (Some(_), Some(_)) => {
                Err(MagnumError::multiple_openstack_resources("images", ident, "image").into())
            }
            _ if self.permissive => Ok(ubuntu_image(&invented_id("image", ident), ident)),
            _ => Err(MagnumError::image_not_found(ident).into()),
        }
    }

    fn find_flavor(&self, ident: &str) -> Result<Flavor, LookupError> {
        match self
            .flavors
            .iter()
            .find(|f| f.id == ident || f.name == ident)
        {
            Some(f) => Ok(f.clone()),
            None if self.permissive => Ok(flavor(ident, ident, 2, 4096, 40)),
            None => Err(MagnumError::flavor_not_found(ident).into()),
        }
    }

    fn find_keypair(&self, name: &str) -> Result<Keypair, LookupError> {
        match self.keypairs.iter().find(|k| k.name == name) {
            Some(k) => Ok(k.clone()),
            None if self.permissive => Ok(Keypair {
                name: name.to_owned(),
                key_type: "ssh".to_owned(),
                fingerprint: String::new(),
            }),
            None => Err(MagnumError::key_pair_not_found(name).into()),
        }
    }

    fn find_network(&self, ident: &str, external: bool) -> Result<Network, LookupError> {
        let mut found = self
            .networks
            .iter()
            .filter(|n| (!external || n.external) && (n.id == ident || n.name == ident));
        match (found.next(), found.next(), external) {
            (Some(n), None, _) => Ok(n.clone()),
            (Some(_), Some(_), true) => Err(MagnumError::multiple_openstack_resources(
                "external networks",
                ident,
                "external network",
            )
            .into()),
            (Some(_), Some(_), false) => {
                Err(MagnumError::multiple_openstack_resources("networks", ident, "network").into())
            }
            _ if self.permissive => Ok(Network {
                id: invented_id("network", ident),
                name: ident.to_owned(),
                external,
            }),
            (_, _, true) => Err(MagnumError::external_network_not_found(ident).into()),
            (_, _, false) => Err(MagnumError::fixed_network_not_found(ident).into()),
        }
    }

    fn find_subnet(&self, ident: &str) -> Result<Subnet, LookupError> {
        let mut found = self
            .subnets
            .iter()
            .filter(|s| s.id == ident || s.name == ident);
        match (found.next(), found.next()) {
            (Some(s), None) => Ok(s.clone()),
            (Some(_), Some(_)) => {
                Err(MagnumError::multiple_openstack_resources("subnets", ident, "subnet").into())
            }
            _ if self.permissive => Ok(Subnet {
                id: invented_id("subnet", ident),
                name: ident.to_owned(),
                network_id: STATIC_PRIVATE_NETWORK_ID.to_owned(),
            }),
            _ => Err(MagnumError::fixed_subnet_not_found(ident).into()),
        }
    }
}

/// A stable UUID (version 5 layout) derived from `kind` and `name`: the
/// first 16 bytes of SHA-1(`openkeel-magnum/<kind>/<name>`), the same ids the
/// Go implementation invented.
pub(crate) fn name_uuid(kind: &str, name: &str) -> String {
    let sum = Sha1::digest(format!("openkeel-magnum/{kind}/{name}").as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&sum[..16]);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The id of an invented resource: `ident` itself when it is a UUID, else
/// one derived from it.
fn invented_id(kind: &str, ident: &str) -> String {
    if is_canonical_uuid(ident) {
        ident.to_owned()
    } else {
        name_uuid(kind, ident)
    }
}

// Deviation: all-in-one has no Glance, Nova or Neutron; lookups are answered
// from built-in data and any other name is accepted as an invented resource.
impl Lookup for Static {
    fn image<'a>(&'a self, _ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Image> {
        Box::pin(std::future::ready(self.find_image(ident)))
    }

    fn flavor<'a>(&'a self, _ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Flavor> {
        Box::pin(std::future::ready(self.find_flavor(ident)))
    }

    fn keypair<'a>(&'a self, _ctx: &'a RequestContext, name: &'a str) -> Found<'a, Keypair> {
        Box::pin(std::future::ready(self.find_keypair(name)))
    }

    fn external_network<'a>(
        &'a self,
        _ctx: &'a RequestContext,
        ident: &'a str,
    ) -> Found<'a, Network> {
        Box::pin(std::future::ready(self.find_network(ident, true)))
    }

    fn fixed_network<'a>(&'a self, _ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Network> {
        Box::pin(std::future::ready(self.find_network(ident, false)))
    }

    fn fixed_subnet<'a>(&'a self, _ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Subnet> {
        Box::pin(std::future::ready(self.find_subnet(ident)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openstack::testing::{ctx, want_client_error};

    /// The Go implementation's ids for the same names.
    #[test]
    fn invented_ids_match_the_go_implementation() {
        assert_eq!(
            name_uuid("image", "fedora-coreos-40"),
            "4eb83ab4-27f7-517e-ad9b-2e0123f5a8c8"
        );
        assert_eq!(
            name_uuid("network", "ext-net"),
            "ed3e6870-df96-578c-bc41-b1cb8d2ba92c"
        );
        assert_eq!(
            name_uuid("subnet", "anything"),
            "2725d92d-a32a-5892-b18e-1a1cb7680f89"
        );
    }

    // Go: TestStatic.
    #[tokio::test]
    async fn built_in_resources_and_magnums_errors() {
        let strict = Static::new(false);
        let c = ctx();

        // built-in resources by name and id
        let img = strict.validate_image(&c, STATIC_IMAGE_NAME).await;
        assert!(
            matches!(&img, Ok(i) if i.id == STATIC_IMAGE_ID && i.os_distro.as_deref() == Some("ubuntu")),
            "{img:?}"
        );
        let img = strict.image(&c, STATIC_IMAGE_ID).await;
        assert!(
            matches!(&img, Ok(i) if i.name == STATIC_IMAGE_NAME),
            "{img:?}"
        );
        for ident in ["m1.medium", "2"] {
            assert_eq!(
                strict.flavor(&c, ident).await,
                Ok(flavor("2", "m1.medium", 2, 4096, 40)),
                "flavor {ident}"
            );
        }
        let k = strict.keypair(&c, "default").await;
        assert!(matches!(&k, Ok(k) if k.name == "default"), "{k:?}");
        let n = strict.external_network(&c, "public").await;
        assert!(
            matches!(&n, Ok(n) if n.id == STATIC_PUBLIC_NETWORK_ID && n.external),
            "{n:?}"
        );
        let n = strict.fixed_network(&c, STATIC_PRIVATE_NETWORK_ID).await;
        assert!(matches!(&n, Ok(n) if n.name == "private"), "{n:?}");
        let s = strict.fixed_subnet(&c, "private-subnet").await;
        assert!(
            matches!(&s, Ok(s) if s.network_id == STATIC_PRIVATE_NETWORK_ID),
            "{s:?}"
        );

        // strict mode refuses unknown names with Magnum's errors
        want_client_error(
            strict.image(&c, "centos").await,
            400,
            "ImageNotFound",
            "Image centos could not be found.",
        );
        want_client_error(
            strict.flavor(&c, "m9.huge").await,
            400,
            "FlavorNotFound",
            "Unable to find flavor m9.huge.",
        );
        want_client_error(
            strict.keypair(&c, "other").await,
            404,
            "KeyPairNotFound",
            "Unable to find keypair other.",
        );
        want_client_error(
            strict.external_network(&c, "private").await,
            400,
            "ExternalNetworkNotFound",
            "Unable to find external network private.",
        );
        want_client_error(
            strict.fixed_network(&c, "nope").await,
            400,
            "FixedNetworkNotFound",
            "Unable to find fixed network nope.",
        );
        want_client_error(
            strict.fixed_subnet(&c, "nope").await,
            400,
            "FixedSubnetNotFound",
            "Unable to find fixed subnet nope.",
        );

        // permissive mode accepts anything, stably
        let p = Static::new(true);
        let a = p.validate_image(&c, "fedora-coreos-40").await;
        let b = p.image(&c, "fedora-coreos-40").await;
        match (&a, &b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.id, b.id);
                assert!(is_canonical_uuid(&a.id), "{}", a.id);
                assert_eq!(a.os_distro.as_deref(), Some("ubuntu"));
            }
            _ => panic!("made-up images = {a:?} / {b:?}"),
        }
        let f = p.flavor(&c, "m9.huge").await;
        assert!(matches!(&f, Ok(f) if f.disk != 0), "{f:?}");
        let n = p.external_network(&c, "ext-net").await;
        assert!(matches!(&n, Ok(n) if n.external), "{n:?}");
        let id = "0e5a4c3b-2a19-4f08-8e7d-6c5b4a392817";
        let n = p.fixed_network(&c, id).await;
        assert!(matches!(&n, Ok(n) if n.id == id), "{n:?}");
        assert!(p.keypair(&c, "anything").await.is_ok());
        assert!(p.fixed_subnet(&c, "anything").await.is_ok());
        // Built-in names still resolve to the built-in resources.
        let n = p.external_network(&c, "public").await;
        assert!(
            matches!(&n, Ok(n) if n.id == STATIC_PUBLIC_NETWORK_ID),
            "{n:?}"
        );

        // ambiguous added data
        let mut s = Static::new(true);
        s.networks.push(Network {
            id: "x".into(),
            name: "public".into(),
            external: true,
        });
        want_client_error(
            s.external_network(&c, "public").await,
            409,
            "Conflict",
            "Multiple external networks exist with same name 'public'. Please use the external \
             network ID instead.",
        );

        // returned properties are copies
        if let Ok(mut img) = strict.image(&c, STATIC_IMAGE_NAME).await {
            img.properties.insert("os_distro".into(), "changed".into());
        }
        let again = strict.image(&c, STATIC_IMAGE_NAME).await;
        assert!(
            matches!(&again, Ok(i) if i.properties.get("os_distro").map(String::as_str) == Some("ubuntu")),
            "the caller changed the built-in image: {again:?}"
        );
    }
}
