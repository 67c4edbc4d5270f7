//! What the operations ask of OpenStack and of Magnum's certificate
//! store, behind one trait: in the component, the host's imports
//! ([`Host`]); in native tests, a cloud the test describes.
//!
//! The management cluster is not here: the SDK's `kube` import already
//! answers from an in-memory Kubernetes in native tests.

use openkeel_magnum_driver::HostError;
use openkeel_magnum_driver::cloud::{self, CloudInfo};
use openkeel_magnum_driver::openstack::{
    self, ApplicationCredential, Flavor, Image, LoadBalancer, ShareType, VolumeType,
};
use openkeel_magnum_driver::secrets::{self, ClusterCas};

type R<T> = Result<T, HostError>;

/// The OpenStack calls and certificates the driver uses, one method per
/// host call (see the `openstack`, `cluster-secrets` and `cloud`
/// interfaces of the contract for what each answers).
pub trait Services {
    fn flavor_name(&self, reference: &str) -> R<String>;
    fn flavor(&self, reference: &str) -> R<Flavor>;
    fn image(&self, reference: &str) -> R<Image>;
    fn network_id(&self, reference: &str) -> R<String>;
    fn subnet_id(&self, reference: &str) -> R<String>;
    fn ensure_server_group(&self, name: &str, policy: &str) -> R<String>;
    fn delete_server_group(&self, name: &str) -> R<()>;
    fn create_credential(&self, name: &str, description: &str) -> R<ApplicationCredential>;
    fn delete_credential(&self, user_id: &str, id: &str) -> R<()>;
    fn load_balancers(&self, project_id: &str) -> R<Option<Vec<LoadBalancer>>>;
    fn delete_load_balancer(&self, lb: &LoadBalancer) -> R<()>;
    fn volume_types(&self) -> R<Option<Vec<VolumeType>>>;
    fn share_types(&self) -> R<Option<Vec<ShareType>>>;
    fn cas(&self) -> R<ClusterCas>;
    fn cloud(&self) -> CloudInfo;
}

/// The host's imports.
#[derive(Clone, Copy, Debug, Default)]
pub struct Host;

impl Services for Host {
    fn flavor_name(&self, reference: &str) -> R<String> {
        openstack::resolve_flavor_name(reference)
    }
    fn flavor(&self, reference: &str) -> R<Flavor> {
        openstack::flavor_details(reference)
    }
    fn image(&self, reference: &str) -> R<Image> {
        openstack::resolve_image(reference)
    }
    fn network_id(&self, reference: &str) -> R<String> {
        openstack::resolve_network_id(reference)
    }
    fn subnet_id(&self, reference: &str) -> R<String> {
        openstack::resolve_subnet_id(reference)
    }
    fn ensure_server_group(&self, name: &str, policy: &str) -> R<String> {
        openstack::ensure_server_group(name, policy)
    }
    fn delete_server_group(&self, name: &str) -> R<()> {
        openstack::delete_server_group(name)
    }
    fn create_credential(&self, name: &str, description: &str) -> R<ApplicationCredential> {
        openstack::create_application_credential(name, description)
    }
    fn delete_credential(&self, user_id: &str, id: &str) -> R<()> {
        openstack::delete_application_credential(user_id, id)
    }
    fn load_balancers(&self, project_id: &str) -> R<Option<Vec<LoadBalancer>>> {
        openstack::load_balancers(project_id)
    }
    fn delete_load_balancer(&self, lb: &LoadBalancer) -> R<()> {
        openstack::delete_load_balancer(lb)
    }
    fn volume_types(&self) -> R<Option<Vec<VolumeType>>> {
        openstack::volume_types()
    }
    fn share_types(&self) -> R<Option<Vec<ShareType>>> {
        openstack::share_types()
    }
    fn cas(&self) -> R<ClusterCas> {
        secrets::cas()
    }
    fn cloud(&self) -> CloudInfo {
        cloud::info()
    }
}
