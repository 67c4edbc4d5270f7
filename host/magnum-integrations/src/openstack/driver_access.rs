//! The OpenStack calls of drivers (the `openstack` import of the driver
//! contract): [`DriverCloud`] implements [`driver_host::OpenStackAccess`]
//! over the lookups and the stores of this module.
//!
//! A call acts with the driver call's [`Credentials`]: the caller's token
//! and catalog, or, for an `admin` call (the status poll, resumed work),
//! the service's own credentials in the project of the call's cluster,
//! which the driver host sets. What the service does in an admin call never
//! reaches another project's resources: server groups are matched in the
//! cluster's project only, and load balancers are listed and deleted in it
//! only. What only the caller can do (resolving the names of the caller's
//! project, creating a server group or an application credential in it)
//! is refused in an admin call rather than done as the service, in the
//! service's project.
//!
//! Errors reach the driver as [`HostError`]s: the client errors of the
//! lookups (`FlavorNotFound`, `ImageNotFound`, `AuthorizationFailure` when
//! the caller's catalog lacks the service…) as [`HostError::Client`] with
//! Magnum's status and message; for the other calls a 404 as
//! [`HostError::NotFound`], a 409 as [`HostError::Conflict`], and a service
//! that is not in the catalog, not configured or not answering as
//! [`HostError::Unavailable`]. No token, password or secret is in any of
//! them.

use std::fmt;
use std::sync::Arc;

use driver_host::{
    ApplicationCredential, Credentials, Flavor as DriverFlavor, HostError, Image as DriverImage,
    LoadBalancer as DriverLoadBalancer, OpenStackAccess, Reply, ShareType as DriverShareType,
    VolumeType as DriverVolumeType,
};
use magnum_domain::{MagnumError, RequestContext};

use super::app_credentials::{AppCredentialSettings, AppCredentials};
use super::clients::EndpointSettings;
use super::error::{ErrorKind, LookupError, OpenStackError, SettingsError};
use super::flavor_details::{FlavorDetail, FlavorDetails};
use super::load_balancers::LoadBalancers;
use super::server_groups::ServerGroups;
use super::session::{Caller, Session};
use super::share_types::ShareTypes;
use super::volume_types::VolumeTypes;
use super::{Found, Image, Lookup};

/// The Glance image property drivers read the disk bus from.
const HW_DISK_BUS: &str = "hw_disk_bus";

/// The settings of [`DriverCloud`]: the Keystone URL and roles of
/// application credentials, and the `[<service>_client]` groups.
#[derive(Clone, Debug, Default)]
pub struct DriverCloudSettings {
    /// Where application credentials are made and the roles they get
    /// (`[capi]/app_credential_roles`). An empty Keystone URL leaves the
    /// calls on application credentials `unavailable`.
    pub app_credentials: AppCredentialSettings,
    /// `[nova_client]`: flavors and server groups.
    pub nova: EndpointSettings,
    /// `[neutron_client]`: the floating IPs of load balancers.
    pub neutron: EndpointSettings,
    /// `[octavia_client]`.
    pub octavia: EndpointSettings,
    /// `[cinder_client]`.
    pub cinder: EndpointSettings,
    /// magnum-cluster-api's `[manila_client]`.
    pub manila: EndpointSettings,
}

/// The OpenStack cloud as drivers reach it: the resolves go through a
/// [`Lookup`] (Magnum's matching rules and errors), the rest through the
/// stores, all sharing one [`Session`] whose service credentials serve the
/// admin calls. Cheap to clone.
#[derive(Clone)]
pub struct DriverCloud {
    inner: Arc<Inner>,
}

struct Inner {
    lookup: Arc<dyn Lookup>,
    app_credentials: Option<AppCredentials>,
    server_groups: ServerGroups,
    load_balancers: LoadBalancers,
    volume_types: VolumeTypes,
    flavors: FlavorDetails,
    share_types: ShareTypes,
}

impl fmt::Debug for DriverCloud {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DriverCloud")
            .field("app_credentials", &self.inner.app_credentials.is_some())
            .finish_non_exhaustive()
    }
}

impl DriverCloud {
    /// The cloud of `lookup` and `session`; checks the fixed endpoints and
    /// the Keystone URL, contacts nothing.
    pub fn new(
        lookup: Arc<dyn Lookup>,
        session: Session,
        settings: DriverCloudSettings,
    ) -> Result<Self, SettingsError> {
        let DriverCloudSettings {
            app_credentials,
            nova,
            neutron,
            octavia,
            cinder,
            manila,
        } = settings;
        let app_credentials = if app_credentials.auth_url.trim().is_empty() {
            None
        } else {
            Some(AppCredentials::new(session.clone(), app_credentials)?)
        };
        Ok(Self {
            inner: Arc::new(Inner {
                lookup,
                app_credentials,
                server_groups: ServerGroups::new(session.clone(), nova.clone())?,
                load_balancers: LoadBalancers::new(session.clone(), octavia, neutron)?,
                volume_types: VolumeTypes::new(session.clone(), cinder)?,
                flavors: FlavorDetails::new(session.clone(), nova)?,
                share_types: ShareTypes::new(session, manila)?,
            }),
        })
    }
}

/// Who a call of the stores acts as: the caller with its token, or the
/// service in the project of the call's cluster. A call that is not admin
/// and carries no token is refused: it must not fall back on the service's
/// credentials.
fn caller(cred: &Credentials) -> Result<Caller, HostError> {
    if cred.admin {
        return Ok(Caller {
            token: None,
            user_id: cred.user_id.clone(),
            project_id: cred.project_id.clone(),
            service_catalog: None,
            roles: None,
            service: true,
        });
    }
    let Some(token) = cred.auth_token.as_deref().filter(|t| !t.is_empty()) else {
        return Err(HostError::Invalid(
            "this call carries no user token (the API runs without Keystone)".to_owned(),
        ));
    };
    Ok(Caller {
        token: Some(token.to_owned()),
        user_id: cred.user_id.clone(),
        project_id: cred.project_id.clone(),
        service_catalog: cred.service_catalog.clone(),
        // Read from Keystone when an application credential is made.
        roles: None,
        service: false,
    })
}

/// [`caller`] for a call that reaches a project's resources: an admin call
/// must name the project it acts in.
fn project_caller(cred: &Credentials) -> Result<Caller, HostError> {
    if cred.admin && cred.project_id.is_empty() {
        return Err(HostError::Invalid(
            "this call acts with the service's credentials and names no project".to_owned(),
        ));
    }
    caller(cred)
}

/// [`caller`] for what only the caller can do: `what` is refused in an
/// admin call.
fn user_caller(cred: &Credentials, what: &str) -> Result<Caller, HostError> {
    if cred.admin {
        return Err(HostError::Invalid(format!(
            "{what} acts as the caller, and this call acts with the service's credentials"
        )));
    }
    caller(cred)
}

/// The request context the lookups take for the caller of `cred`.
fn request_context(cred: &Credentials, what: &str) -> Result<RequestContext, HostError> {
    let c = user_caller(cred, what)?;
    Ok(RequestContext {
        auth_token: c.token,
        user_id: c.user_id,
        project_id: c.project_id,
        service_catalog: c.service_catalog,
        ..RequestContext::default()
    })
}

/// An OpenStack failure as the driver sees it. The error's text never holds
/// a token, a password, a secret or an answer's body.
fn host_error(e: OpenStackError) -> HostError {
    let text = e.to_string();
    match e.kind() {
        ErrorKind::Status(404) => HostError::NotFound(text),
        ErrorKind::Status(409) => HostError::Conflict(text),
        ErrorKind::Status(400) | ErrorKind::Invalid(_) => HostError::Invalid(text),
        ErrorKind::Status(502..=504)
        | ErrorKind::Timeout(_)
        | ErrorKind::Transport(_)
        | ErrorKind::Endpoint(_)
        | ErrorKind::NoServiceCredentials
        | ErrorKind::NoLoadBalancerService => HostError::Unavailable(text),
        ErrorKind::Status(_) | ErrorKind::Decode(_) | ErrorKind::NoGrantableRole => {
            HostError::Other(text)
        }
    }
}

/// A lookup's failure: Magnum's client error as it is, else
/// [`host_error`].
fn lookup_error(e: LookupError) -> HostError {
    match e {
        LookupError::Client(m) => HostError::Client(m),
        LookupError::Failed(e) => host_error(e),
    }
}

/// A flavor with its extra specs in the driver's terms; sizes beyond the
/// contract's `u32` saturate (no flavor comes near).
fn driver_flavor(d: FlavorDetail) -> DriverFlavor {
    let size = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
    DriverFlavor {
        vcpus: size(d.flavor.vcpus),
        ram_mb: size(d.flavor.ram),
        disk_gb: size(d.flavor.disk),
        id: d.flavor.id,
        name: d.flavor.name,
        extra_specs: d.extra_specs.into_iter().collect(),
    }
}

fn driver_image(i: Image) -> DriverImage {
    DriverImage {
        disk_bus: i
            .properties
            .get(HW_DISK_BUS)
            .filter(|b| !b.is_empty())
            .cloned(),
        id: i.id,
    }
}

impl DriverCloud {
    fn app_credentials(&self) -> Result<&AppCredentials, HostError> {
        self.inner.app_credentials.as_ref().ok_or_else(|| {
            HostError::Unavailable(
                "application credentials: no Keystone URL is configured".to_owned(),
            )
        })
    }

    /// What the lookup `find` answers for `reference` as the caller of
    /// `cred`; `what` names the call, which is refused in an admin call.
    async fn resolve<'a, T>(
        &'a self,
        cred: &'a Credentials,
        what: &str,
        reference: &'a str,
        find: for<'x> fn(&'x (dyn Lookup + 'static), &'x RequestContext, &'x str) -> Found<'x, T>,
    ) -> Result<T, HostError> {
        let ctx = request_context(cred, what)?;
        find(&*self.inner.lookup, &ctx, reference)
            .await
            .map_err(lookup_error)
    }

    /// The flavor `reference` with its extra specs as `caller` sees it;
    /// an unknown one is Magnum's 400 `FlavorNotFound`.
    async fn flavor_detail(
        &self,
        caller: &Caller,
        reference: &str,
    ) -> Result<FlavorDetail, HostError> {
        self.inner
            .flavors
            .get(caller, reference)
            .await
            .map_err(host_error)?
            .ok_or_else(|| HostError::Client(MagnumError::flavor_not_found(reference)))
    }
}

impl OpenStackAccess for DriverCloud {
    fn flavor_name<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, String> {
        Box::pin(async move {
            // Flavors are the cloud's, not a project's: the service can
            // name them too.
            if cred.admin {
                let c = caller(cred)?;
                return Ok(self.flavor_detail(&c, reference).await?.flavor.name);
            }
            let flavor = self.resolve(cred, "resolve-flavor-name", reference, Lookup::flavor);
            flavor.await.map(|f| f.name)
        })
    }

    fn image<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, DriverImage> {
        let image = self.resolve(cred, "resolve-image", reference, Lookup::image);
        Box::pin(async move { image.await.map(driver_image) })
    }

    fn network_id<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, String> {
        let network = self.resolve(cred, "resolve-network-id", reference, Lookup::fixed_network);
        Box::pin(async move { network.await.map(|n| n.id) })
    }

    fn subnet_id<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, String> {
        let subnet = self.resolve(cred, "resolve-subnet-id", reference, Lookup::fixed_subnet);
        Box::pin(async move { subnet.await.map(|s| s.id) })
    }

    fn ensure_server_group<'a>(
        &'a self,
        cred: &'a Credentials,
        name: &'a str,
        policy: &'a str,
    ) -> Reply<'a, String> {
        Box::pin(async move {
            // Nova makes a group in the project of the token: the
            // service's would be of no use to the cluster's servers.
            let c = user_caller(cred, "ensure-server-group")?;
            self.inner
                .server_groups
                .ensure(&c, name, policy)
                .await
                .map_err(host_error)
        })
    }

    fn delete_server_group<'a>(&'a self, cred: &'a Credentials, name: &'a str) -> Reply<'a, ()> {
        Box::pin(async move {
            // Deviation: magnum-cluster-api's admin context deletes the
            // first group of that name in any project; here only the
            // cluster's project's (the caller's project_id filters the
            // service's all-projects listing).
            let c = project_caller(cred)?;
            self.inner
                .server_groups
                .delete(&c, name)
                .await
                .map_err(host_error)
        })
    }

    fn create_application_credential<'a>(
        &'a self,
        cred: &'a Credentials,
        name: &'a str,
        description: &'a str,
    ) -> Reply<'a, ApplicationCredential> {
        Box::pin(async move {
            let c = user_caller(cred, "create-application-credential")?;
            let ac = self
                .app_credentials()?
                .create(&c, name, description)
                .await
                .map_err(host_error)?;
            Ok(ApplicationCredential {
                id: ac.id,
                secret: ac.secret,
                name: ac.name,
                user_id: ac.user_id,
            })
        })
    }

    fn delete_application_credential<'a>(&'a self, user_id: &'a str, id: &'a str) -> Reply<'a, ()> {
        Box::pin(async move {
            self.app_credentials()?
                .delete(user_id, id)
                .await
                .map_err(host_error)
        })
    }

    fn load_balancers<'a>(
        &'a self,
        cred: &'a Credentials,
        project_id: &'a str,
    ) -> Reply<'a, Option<Vec<DriverLoadBalancer>>> {
        Box::pin(async move {
            let c = project_caller(cred)?;
            if cred.admin && project_id != cred.project_id {
                return Err(HostError::AccessDenied(format!(
                    "the service's credentials act in project {}, not {project_id}",
                    cred.project_id
                )));
            }
            match self.inner.load_balancers.list(&c, project_id).await {
                Ok(lbs) => Ok(Some(
                    lbs.into_iter()
                        .map(|lb| DriverLoadBalancer {
                            id: lb.id,
                            name: lb.name,
                            description: lb.description,
                            project_id: lb.project_id,
                            provisioning_status: lb.provisioning_status,
                            vip_port_id: lb.vip_port_id,
                        })
                        .collect(),
                )),
                Err(e) if *e.kind() == ErrorKind::NoLoadBalancerService => Ok(None),
                Err(e) => Err(host_error(e)),
            }
        })
    }

    fn delete_load_balancer<'a>(
        &'a self,
        cred: &'a Credentials,
        lb: &'a DriverLoadBalancer,
    ) -> Reply<'a, ()> {
        Box::pin(async move {
            let c = project_caller(cred)?;
            let lbs = &self.inner.load_balancers;
            let port = if cred.admin {
                // The service sees every project: act on the load balancer
                // only as Octavia lists it in the cluster's project, and on
                // its own VIP port rather than the one the driver names.
                if lb.project_id != cred.project_id {
                    return Err(HostError::AccessDenied(format!(
                        "the service's credentials act in project {}, not {}",
                        cred.project_id, lb.project_id
                    )));
                }
                let listed = match lbs.list(&c, &cred.project_id).await {
                    Ok(l) => l,
                    // No Octavia, no load balancer to delete.
                    Err(e) if *e.kind() == ErrorKind::NoLoadBalancerService => return Ok(()),
                    Err(e) => return Err(host_error(e)),
                };
                match listed.into_iter().find(|l| l.id == lb.id) {
                    Some(found) => found.vip_port_id,
                    None => return Ok(()),
                }
            } else {
                lb.vip_port_id.clone()
            };
            // magnum-cluster-api: the floating IPs first, then the load
            // balancer with everything it holds.
            lbs.delete_floating_ips(&c, &port)
                .await
                .map_err(host_error)?;
            match lbs.delete(&c, &lb.id).await {
                Err(e) if *e.kind() == ErrorKind::NoLoadBalancerService => Ok(()),
                other => other.map_err(host_error),
            }
        })
    }

    fn volume_types<'a>(
        &'a self,
        cred: &'a Credentials,
    ) -> Reply<'a, Option<Vec<DriverVolumeType>>> {
        Box::pin(async move {
            let c = caller(cred)?;
            let types = self.inner.volume_types.list(&c).await.map_err(host_error)?;
            Ok(types.map(|types| {
                types
                    .into_iter()
                    .map(|t| DriverVolumeType {
                        name: t.name,
                        is_default: t.default,
                    })
                    .collect()
            }))
        })
    }

    fn flavor<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, DriverFlavor> {
        Box::pin(async move {
            let c = caller(cred)?;
            self.flavor_detail(&c, reference).await.map(driver_flavor)
        })
    }

    fn share_types<'a>(&'a self, cred: &'a Credentials) -> Reply<'a, Option<Vec<DriverShareType>>> {
        Box::pin(async move {
            let c = caller(cred)?;
            let types = self.inner.share_types.list(&c).await.map_err(host_error)?;
            Ok(types.map(|types| {
                types
                    .into_iter()
                    .map(|t| DriverShareType {
                        id: t.id,
                        name: t.name,
                        is_default: t.default,
                        driver_handles_share_servers: t.driver_handles_share_servers,
                    })
                    .collect()
            }))
        })
    }
}
