//! The OpenStack services Magnum calls, with reqwest and typed structs.
//!
//! - [`Lookup`]: the resources a cluster or template names (Glance images,
//!   Nova flavors and keypairs, Neutron networks and subnets), read as the
//!   caller the way Magnum's attribute validators read them
//!   (magnum/api/attr_validator.py), answered with Magnum's errors.
//!   [`Clients`] calls the services with the caller's token against the
//!   endpoints of the token's catalog; [`Static`] answers from built-in
//!   data in the all-in-one mode, where there is no cloud.
//! - The stores of the Cluster API driver: Keystone application credentials
//!   ([`AppCredentials`]: created as the user, deleted as the service, never
//!   with the admin role), Nova server groups ([`ServerGroups`]), Octavia
//!   load balancers and their floating IPs ([`LoadBalancers`]), Cinder
//!   volume types ([`VolumeTypes`]). They act as a [`Caller`]: the user's
//!   token, or the service credentials where no user token exists.
//! - What drivers read besides: Nova flavors with their extra specs
//!   ([`FlavorDetails`]) and Manila share types ([`ShareTypes`]).
//! - [`DriverCloud`]: all of the above as the drivers' `openstack` import
//!   ([`driver_host::OpenStackAccess`]).
//!
//! Every client shares one [`Session`]: the connection pool with the TLS
//! settings, the timeout that bounds every call, and the service
//! credentials' token. Tokens, passwords and application credential secrets
//! are never logged nor put in an error.
//!
//! Unlike Magnum, which lists every flavor, network and subnet for each
//! validated attribute, lookups use direct GETs and filtered lists; the
//! outcome and the error messages are the same.

mod app_credentials;
mod builtin;
mod catalog;
mod clients;
mod driver_access;
mod error;
mod flavor_details;
mod flavors;
mod images;
mod load_balancers;
mod networks;
mod server_groups;
mod session;
mod share_types;
mod volume_types;

#[cfg(test)]
mod app_credentials_tests;
#[cfg(test)]
mod catalog_tests;
#[cfg(test)]
mod clients_tests;
#[cfg(test)]
mod driver_access_tests;
#[cfg(test)]
mod lookup_tests;
#[cfg(test)]
mod stores_tests;
#[cfg(test)]
mod testing;

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use magnum_domain::{MagnumError, RequestContext};

pub use app_credentials::{
    AppCredential, AppCredentialSettings, AppCredentials, DEFAULT_APP_CREDENTIAL_ROLES,
};
pub use builtin::{
    STATIC_IMAGE_ID, STATIC_IMAGE_NAME, STATIC_KEYPAIR_NAME, STATIC_PRIVATE_NETWORK_ID,
    STATIC_PRIVATE_SUBNET_ID, STATIC_PUBLIC_NETWORK_ID, Static,
};
pub use clients::{Clients, ClientsSettings, EndpointSettings};
pub use driver_access::{DriverCloud, DriverCloudSettings};
pub use error::{ErrorKind, LookupError, OpenStackError, SettingsError};
pub use flavor_details::{FlavorDetail, FlavorDetails};
pub use load_balancers::{FloatingIp, LoadBalancer, LoadBalancers};
pub use server_groups::ServerGroups;
pub use session::{
    Caller, DEFAULT_TIMEOUT, DEFAULT_USER_AGENT, ServiceCredentials, Session, SessionSettings,
};
pub use share_types::{ShareType, ShareTypes};
pub use volume_types::{VolumeType, VolumeTypes};

/// What the API needs of a Glance image.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    pub id: String,
    pub name: String,
    /// The `os_distro` property (`None` when absent, null or empty).
    pub os_distro: Option<String>,
    /// The `magnum_driver` property (`None` when absent, null or empty).
    pub magnum_driver: Option<String>,
    /// Every string-valued top-level attribute of the image (Glance v2 puts
    /// custom properties there), `os_distro` included.
    pub properties: BTreeMap<String, String>,
}

/// What the API needs of a Nova flavor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flavor {
    pub id: String,
    pub name: String,
    pub vcpus: i64,
    /// MiB.
    pub ram: i64,
    /// GiB; 0 is refused when `boot_volume_size` is 0.
    pub disk: i64,
}

/// A Nova keypair of the caller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keypair {
    pub name: String,
    /// `ssh` or `x509`.
    pub key_type: String,
    pub fingerprint: String,
}

/// A Neutron network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Network {
    pub id: String,
    pub name: String,
    /// `router:external`.
    pub external: bool,
}

/// A Neutron subnet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subnet {
    pub id: String,
    pub name: String,
    pub network_id: String,
}

/// The future of a [`Lookup`]: the resource found, or why it was not.
pub type Found<'a, T> = BoxFuture<'a, Result<T, LookupError>>;

/// Finds OpenStack resources by name or id as the caller of a request, with
/// Magnum's matching rules and errors: [`LookupError::Client`] carries the
/// error Magnum answers the client with (its status and message),
/// [`LookupError::Failed`] an unexpected failure Magnum answers with a 500.
///
/// Implemented by [`Clients`] (the cloud) and [`Static`] (all-in-one).
/// Object-safe, so the conductor can hold an `Arc<dyn Lookup>`.
pub trait Lookup: Send + Sync {
    /// The image whose id or name is `ident`. Errors: 400 `ImageNotFound`,
    /// 409 `Multiple images exist with same name …`, 403
    /// `ImageNotAuthorized`, 403 `AuthorizationFailure`.
    fn image<'a>(&'a self, ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Image>;

    /// The flavor whose id or name is `ident`. Errors: 400
    /// `FlavorNotFound`, 403 `AuthorizationFailure`.
    fn flavor<'a>(&'a self, ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Flavor>;

    /// The caller's keypair named `name`. Errors: 404 `KeyPairNotFound`, 403
    /// `AuthorizationFailure`.
    fn keypair<'a>(&'a self, ctx: &'a RequestContext, name: &'a str) -> Found<'a, Keypair>;

    /// The external network whose name or id is `ident`. Errors: 400
    /// `ExternalNetworkNotFound`, 409 when several match, 403
    /// `AuthorizationFailure`.
    fn external_network<'a>(
        &'a self,
        ctx: &'a RequestContext,
        ident: &'a str,
    ) -> Found<'a, Network>;

    /// The network (external ones included) whose name or id is `ident`.
    /// Errors: 400 `FixedNetworkNotFound`, 409 when several match, 403
    /// `AuthorizationFailure`.
    fn fixed_network<'a>(&'a self, ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Network>;

    /// The subnet whose name or id is `ident`. Errors: 400
    /// `FixedSubnetNotFound`, 409 when several match, 403
    /// `AuthorizationFailure`.
    fn fixed_subnet<'a>(&'a self, ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Subnet>;

    /// Magnum's `validate_image`: [`Lookup::image`], then 400
    /// `OSDistroFieldNotFound` when the image has no `os_distro`.
    fn validate_image<'a>(&'a self, ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Image> {
        Box::pin(async move {
            let img = self.image(ctx, ident).await?;
            if img.os_distro.is_none() {
                return Err(MagnumError::os_distro_field_not_found(ident).into());
            }
            Ok(img)
        })
    }

    /// Whether Keystone knows the project `project_id` (Magnum's
    /// `enforce_valid_project_id_on_create` of quota creation). A back end
    /// that does not look projects up answers `true`, as every one of this
    /// build does.
    fn project_exists<'a>(
        &'a self,
        _ctx: &'a RequestContext,
        _project_id: &'a str,
    ) -> Found<'a, bool> {
        Box::pin(async { Ok(true) })
    }
}
