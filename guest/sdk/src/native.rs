//! Outside WebAssembly (a driver's native tests), the imports the
//! [`testing`](crate::testing) world answers, with the signatures of the
//! generated bindings, so that `host` and `logging` read the same either
//! way. OpenStack and the cluster's certificates exist only in the host:
//! natively their imports answer `unavailable`, as a host without them does.

use crate::bindings::openkeel::magnum_driver as b;
use crate::testing as t;

pub mod kube {
    use super::*;
    use b::types::{HostError, K8sObject, ObjectRef, Selector};

    pub fn apply(obj: &K8sObject) -> Result<K8sObject, HostError> {
        Ok(t::apply(obj.clone().into()).into())
    }

    pub fn get(r: &ObjectRef) -> Result<Option<K8sObject>, HostError> {
        Ok(t::get(&r.clone().into()).map(Into::into))
    }

    pub fn list_by_label(sel: &Selector) -> Result<Vec<K8sObject>, HostError> {
        Ok(t::list(
            &sel.api_version,
            &sel.kind,
            sel.namespace.as_deref(),
            &sel.labels,
        )
        .into_iter()
        .map(Into::into)
        .collect())
    }

    pub fn delete(r: &ObjectRef) -> Result<bool, HostError> {
        Ok(t::delete(&r.clone().into()))
    }

    #[cfg(feature = "contract-1-1")]
    pub fn served(api_version: &str, kind: &str) -> Result<bool, HostError> {
        Ok(t::served(api_version, kind))
    }
}

pub mod config {
    use super::*;
    use b::types::HostError;

    pub fn get(key: &str) -> Option<String> {
        t::option(key)
    }

    pub fn all() -> Vec<(String, String)> {
        t::options()
    }

    pub fn read_file(path: &str) -> Result<String, HostError> {
        t::file(path).ok_or_else(|| HostError::NotFound(format!("file {path}")))
    }
}

pub mod state {
    use super::*;
    use b::types::HostError;

    pub fn get(key: &str) -> Option<String> {
        t::state_get(key)
    }

    pub fn set(key: &str, value: &str) -> Result<(), HostError> {
        t::state_set(key, value);
        Ok(())
    }

    pub fn remove(key: &str) {
        t::state_remove(key)
    }

    pub fn clear() {
        t::state_clear()
    }
}

pub mod log {
    use super::*;
    pub use b::log::Level;

    pub fn write(level: Level, message: &str, fields: &[(String, String)]) {
        t::log(level.into(), message, fields.to_vec());
    }

    pub fn max_level() -> Level {
        t::max_level().into()
    }
}

/// What the host answers a driver that calls a service it does not have:
/// natively there is no OpenStack and no cluster certificate.
fn unavailable(what: &str) -> b::types::HostError {
    b::types::HostError::Unavailable(format!("no {what} is configured on this host"))
}

pub mod openstack {
    use super::*;
    pub use b::openstack::{ApplicationCredential, Image, LoadBalancer, VolumeType};
    use b::types::HostError;

    type R<T> = Result<T, HostError>;

    fn none<T>() -> R<T> {
        Err(unavailable("OpenStack"))
    }

    pub fn resolve_flavor_name(_reference: &str) -> R<String> {
        none()
    }

    pub fn resolve_image(_reference: &str) -> R<Image> {
        none()
    }

    pub fn resolve_network_id(_reference: &str) -> R<String> {
        none()
    }

    pub fn resolve_subnet_id(_reference: &str) -> R<String> {
        none()
    }

    pub fn ensure_server_group(_name: &str, _policy: &str) -> R<String> {
        none()
    }

    pub fn delete_server_group(_name: &str) -> R<()> {
        none()
    }

    pub fn create_application_credential(
        _name: &str,
        _description: &str,
    ) -> R<ApplicationCredential> {
        none()
    }

    pub fn delete_application_credential(_user_id: &str, _id: &str) -> R<()> {
        none()
    }

    pub fn load_balancers(_project_id: &str) -> R<Option<Vec<LoadBalancer>>> {
        none()
    }

    pub fn delete_load_balancer(_lb: &LoadBalancer) -> R<()> {
        none()
    }

    pub fn volume_types() -> R<Option<Vec<VolumeType>>> {
        none()
    }

    #[cfg(feature = "contract-1-1")]
    pub fn flavor_details(_reference: &str) -> R<b::openstack::Flavor> {
        none()
    }

    #[cfg(feature = "contract-1-1")]
    pub fn share_types() -> R<Option<Vec<b::openstack::ShareType>>> {
        none()
    }
}

#[cfg(feature = "contract-1-1")]
pub mod cloud {
    use super::*;

    pub fn info() -> b::cloud::CloudInfo {
        let c = t::cloud();
        b::cloud::CloudInfo {
            keystone_url: c.keystone_url,
            region: c.region,
            endpoint_interface: c.endpoint_interface,
            ca_bundle: c.ca_bundle,
            verify: c.verify,
            cluster_ca_bundle: c.cluster_ca_bundle,
            cluster_verify_ca: c.cluster_verify_ca,
        }
    }
}

pub mod cluster_secrets {
    use super::*;
    pub use b::cluster_secrets::{ClusterCas, KeyPair};
    use b::types::HostError;

    pub fn cas() -> Result<ClusterCas, HostError> {
        Err(unavailable("cluster certificate store"))
    }
}
