//! The host's imports with the SDK's types: the management cluster
//! ([`kube`]), OpenStack ([`openstack`]), the cluster's certificates
//! ([`secrets`]), the driver's options ([`config`]), its per-cluster
//! cache ([`state`]) and, in contract 1.1, the cloud's configuration
//! ([`cloud`]). Every call may be refused with a [`HostError`]
//! (never a trap); `?` turns it into a [`DriverError`](crate::DriverError).

#[cfg(target_family = "wasm")]
use crate::bindings::openkeel::magnum_driver as w;
use crate::error::HostError;
#[cfg(not(target_family = "wasm"))]
use crate::native as w;

/// The management cluster. Each call is checked against the driver's
/// grants (api version, kind, verb, namespace) before it reaches
/// Kubernetes; the host applies with its own field manager.
pub mod kube {
    use super::*;
    use crate::types::{K8sObject, ObjectRef, Selector};

    /// Server-side apply (forcing ownership of the fields `obj` sets); the
    /// object as stored.
    pub fn apply(obj: &K8sObject) -> Result<K8sObject, HostError> {
        w::kube::apply(&obj.clone().into())
            .map(K8sObject::from)
            .map_err(HostError::from)
    }

    /// The object, or `None` when it does not exist.
    pub fn get(r: &ObjectRef) -> Result<Option<K8sObject>, HostError> {
        w::kube::get(&r.clone().into())
            .map(|o| o.map(K8sObject::from))
            .map_err(HostError::from)
    }

    /// The objects matching `sel` (a kind the server does not serve lists
    /// as empty).
    pub fn list(sel: &Selector) -> Result<Vec<K8sObject>, HostError> {
        w::kube::list_by_label(&sel.clone().into())
            .map(|l| l.into_iter().map(K8sObject::from).collect())
            .map_err(HostError::from)
    }

    /// Deletes the object (background propagation); `false` when it was
    /// already gone.
    pub fn delete(r: &ObjectRef) -> Result<bool, HostError> {
        w::kube::delete(&r.clone().into()).map_err(HostError::from)
    }

    /// Whether the management cluster serves `kind` of `api_version`
    /// (contract 1.1): an older provider, or one not installed, does not.
    #[cfg(feature = "contract-1-1")]
    pub fn served(api_version: &str, kind: &str) -> Result<bool, HostError> {
        w::kube::served(api_version, kind).map_err(HostError::from)
    }
}

/// The driver's options (manifest defaults overridden by the operator's
/// `[driver:<name>]/options`) and the files it was granted.
pub mod config {
    use std::collections::BTreeMap;
    use std::str::FromStr;

    use super::*;
    use crate::error::DriverError;

    /// One option, or `None` when unset.
    pub fn get(key: &str) -> Option<String> {
        w::config::get(key)
    }

    /// One option parsed as `T`; `default` when unset. A value that does
    /// not parse fails the call: `option <key> has an invalid value "<v>"`.
    pub fn parse_or<T: FromStr>(key: &str, default: T) -> Result<T, DriverError> {
        match get(key) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| {
                DriverError::failed(format!("option {key} has an invalid value {v:?}"))
            }),
        }
    }

    /// Every option.
    pub fn all() -> BTreeMap<String, String> {
        w::config::all().into_iter().collect()
    }

    /// A UTF-8 file under the directory the operator granted (`files`),
    /// by a relative path without `..`.
    pub fn read_file(path: &str) -> Result<String, HostError> {
        w::config::read_file(path).map_err(HostError::from)
    }
}

/// A small key-value cache the host keeps for the driver and the call's
/// cluster. It lives in one host process: it is lost on a restart and not
/// shared between the processes of a deployment (what a create wrote in
/// `api` is not there when `reconciler` polls), so a driver keeps what must
/// last in the rows or the objects it manages, and recovers from them when
/// a key is missing. Calls about no cluster see it empty and may not write.
pub mod state {
    use super::*;

    /// The value of `key`.
    pub fn get(key: &str) -> Option<String> {
        w::state::get(key)
    }

    /// Sets `key`; refused when the cluster's store would exceed the host's
    /// limit.
    pub fn set(key: &str, value: &str) -> Result<(), HostError> {
        w::state::set(key, value).map_err(HostError::from)
    }

    /// Removes `key`.
    pub fn remove(key: &str) {
        w::state::remove(key)
    }

    /// Removes everything kept for the cluster.
    pub fn clear() {
        w::state::clear()
    }
}

/// The certificates Magnum keeps for the call's cluster (grant
/// `cluster-secrets`).
pub mod secrets {
    use std::fmt;

    use super::*;

    /// A certificate and its private key: PKCS#8 PEM encrypted with
    /// `passphrase` in a driver built for contract 1.0; decrypted, with an
    /// empty `passphrase`, in one built for 1.1. `Debug` never shows the key
    /// or the passphrase.
    #[derive(Clone, PartialEq, Eq, Default)]
    pub struct KeyPair {
        pub cert_pem: String,
        pub key_pem: String,
        pub passphrase: String,
    }

    impl fmt::Debug for KeyPair {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("KeyPair")
                .field("cert_pem", &"<pem>")
                .field("key_pem", &"<redacted>")
                .field("passphrase", &"<redacted>")
                .finish()
        }
    }

    /// The cluster's three CAs and its admin client certificate.
    #[derive(Clone, Debug, PartialEq, Eq, Default)]
    pub struct ClusterCas {
        pub kubernetes: KeyPair,
        pub etcd: KeyPair,
        pub front_proxy: KeyPair,
        pub admin: KeyPair,
    }

    fn kp(k: w::cluster_secrets::KeyPair) -> KeyPair {
        KeyPair {
            cert_pem: k.cert_pem,
            key_pem: k.key_pem,
            #[cfg(not(feature = "contract-1-1"))]
            passphrase: k.passphrase,
            #[cfg(feature = "contract-1-1")]
            passphrase: String::new(),
        }
    }

    /// The certificates of the call's cluster.
    pub fn cas() -> Result<ClusterCas, HostError> {
        w::cluster_secrets::cas()
            .map(|c| ClusterCas {
                kubernetes: kp(c.kubernetes),
                etcd: kp(c.etcd),
                front_proxy: kp(c.front_proxy),
                admin: kp(c.admin),
            })
            .map_err(HostError::from)
    }
}

/// The OpenStack calls a driver may be granted, by group. The host acts
/// with the caller's token (the service's for background work); the
/// driver never sees either.
pub mod openstack {
    use std::fmt;

    use super::*;

    /// A Glance image.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Image {
        pub id: String,
        /// The image property `hw_disk_bus`.
        pub disk_bus: Option<String>,
    }

    /// A Keystone application credential. `Debug` never shows the
    /// secret; write it only where the cluster needs it.
    #[derive(Clone, Default, PartialEq, Eq)]
    pub struct ApplicationCredential {
        pub id: String,
        pub secret: String,
        pub name: String,
        pub user_id: String,
    }

    impl fmt::Debug for ApplicationCredential {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("ApplicationCredential")
                .field("id", &self.id)
                .field("name", &self.name)
                .field("user_id", &self.user_id)
                .field("secret", &"<redacted>")
                .finish()
        }
    }

    /// An Octavia load balancer.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct LoadBalancer {
        pub id: String,
        pub name: String,
        pub description: String,
        pub project_id: String,
        pub provisioning_status: String,
        pub vip_port_id: String,
    }

    /// A Cinder volume type.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VolumeType {
        pub name: String,
        pub is_default: bool,
    }

    /// A Nova flavor with its extra specs (contract 1.1).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Flavor {
        pub id: String,
        pub name: String,
        pub vcpus: u32,
        pub ram_mb: u32,
        pub disk_gb: u32,
        /// As Nova keeps them (`resources:VGPU`, `pci_passthrough:alias`…).
        pub extra_specs: crate::Labels,
    }

    /// A Manila share type (contract 1.1).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ShareType {
        pub id: String,
        pub name: String,
        pub is_default: bool,
        pub driver_handles_share_servers: Option<bool>,
    }

    type R<T> = Result<T, HostError>;

    /// Grant `resolve`: the Nova flavor name of a flavor name or id.
    pub fn resolve_flavor_name(reference: &str) -> R<String> {
        w::openstack::resolve_flavor_name(reference).map_err(HostError::from)
    }

    /// Grant `resolve`: the Glance image of a name or id.
    pub fn resolve_image(reference: &str) -> R<Image> {
        w::openstack::resolve_image(reference)
            .map(|i| Image {
                id: i.id,
                disk_bus: i.disk_bus,
            })
            .map_err(HostError::from)
    }

    /// Grant `resolve`: the Neutron network id of a name or id.
    pub fn resolve_network_id(reference: &str) -> R<String> {
        w::openstack::resolve_network_id(reference).map_err(HostError::from)
    }

    /// Grant `resolve`: the Neutron subnet id of a name or id.
    pub fn resolve_subnet_id(reference: &str) -> R<String> {
        w::openstack::resolve_subnet_id(reference).map_err(HostError::from)
    }

    /// Grant `server-groups`: the id of the group `name`, created with
    /// `policy` when missing.
    pub fn ensure_server_group(name: &str, policy: &str) -> R<String> {
        w::openstack::ensure_server_group(name, policy).map_err(HostError::from)
    }

    /// Grant `server-groups`: deletes the group (a missing one is fine).
    pub fn delete_server_group(name: &str) -> R<()> {
        w::openstack::delete_server_group(name).map_err(HostError::from)
    }

    /// Grant `application-credentials`: a new credential owned by the
    /// caller.
    pub fn create_application_credential(
        name: &str,
        description: &str,
    ) -> R<ApplicationCredential> {
        w::openstack::create_application_credential(name, description)
            .map(|a| ApplicationCredential {
                id: a.id,
                secret: a.secret,
                name: a.name,
                user_id: a.user_id,
            })
            .map_err(HostError::from)
    }

    /// Grant `application-credentials`: deletes one (a missing one is
    /// fine).
    pub fn delete_application_credential(user_id: &str, id: &str) -> R<()> {
        w::openstack::delete_application_credential(user_id, id).map_err(HostError::from)
    }

    fn lb_from(lb: w::openstack::LoadBalancer) -> LoadBalancer {
        LoadBalancer {
            id: lb.id,
            name: lb.name,
            description: lb.description,
            project_id: lb.project_id,
            provisioning_status: lb.provisioning_status,
            vip_port_id: lb.vip_port_id,
        }
    }

    /// Grant `load-balancers`: the project's load balancers; `None`
    /// without Octavia.
    pub fn load_balancers(project_id: &str) -> R<Option<Vec<LoadBalancer>>> {
        w::openstack::load_balancers(project_id)
            .map(|l| l.map(|l| l.into_iter().map(lb_from).collect()))
            .map_err(HostError::from)
    }

    /// Grant `load-balancers`: deletes the VIP's floating IPs, then the
    /// load balancer with everything it holds.
    pub fn delete_load_balancer(lb: &LoadBalancer) -> R<()> {
        let lb = w::openstack::LoadBalancer {
            id: lb.id.clone(),
            name: lb.name.clone(),
            description: lb.description.clone(),
            project_id: lb.project_id.clone(),
            provisioning_status: lb.provisioning_status.clone(),
            vip_port_id: lb.vip_port_id.clone(),
        };
        w::openstack::delete_load_balancer(&lb).map_err(HostError::from)
    }

    /// Grant `volume-types`: the caller's volume types; `None` without
    /// Cinder.
    pub fn volume_types() -> R<Option<Vec<VolumeType>>> {
        w::openstack::volume_types()
            .map(|l| {
                l.map(|l| {
                    l.into_iter()
                        .map(|t| VolumeType {
                            name: t.name,
                            is_default: t.is_default,
                        })
                        .collect()
                })
            })
            .map_err(HostError::from)
    }

    /// Grant `resolve`: the Nova flavor of a name or id, with its extra
    /// specs (contract 1.1).
    #[cfg(feature = "contract-1-1")]
    pub fn flavor_details(reference: &str) -> R<Flavor> {
        w::openstack::flavor_details(reference)
            .map(|f| Flavor {
                id: f.id,
                name: f.name,
                vcpus: f.vcpus,
                ram_mb: f.ram_mb,
                disk_gb: f.disk_gb,
                extra_specs: f.extra_specs.into_iter().collect(),
            })
            .map_err(HostError::from)
    }

    /// Grant `share-types`: the Manila share types the caller sees; `None`
    /// when the cloud has no shared-file-system service (contract 1.1).
    #[cfg(feature = "contract-1-1")]
    pub fn share_types() -> R<Option<Vec<ShareType>>> {
        w::openstack::share_types()
            .map(|l| {
                l.map(|l| {
                    l.into_iter()
                        .map(|t| ShareType {
                            id: t.id,
                            name: t.name,
                            is_default: t.is_default,
                            driver_handles_share_servers: t.driver_handles_share_servers,
                        })
                        .collect()
                })
            })
            .map_err(HostError::from)
    }
}

/// The cloud the host works in, as its operator configured it (contract
/// 1.1): what a driver writes into a cluster's `clouds.yaml` or cloud
/// provider configuration. Read at every call, so that a CA file the
/// operator replaced reaches the next call.
#[cfg(feature = "contract-1-1")]
pub mod cloud {
    use super::*;

    /// The cloud's endpoints and trust.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct CloudInfo {
        /// Keystone's public URL.
        pub keystone_url: String,
        pub region: Option<String>,
        /// The endpoint interface a cluster uses (`public`, `internal`).
        pub endpoint_interface: String,
        /// The CA bundle (PEM) that verifies the cloud's APIs.
        pub ca_bundle: Option<String>,
        /// Whether the cloud's certificates are verified.
        pub verify: bool,
        /// The CA bundle (PEM) installed in every cluster's nodes.
        pub cluster_ca_bundle: Option<String>,
        /// Whether the cluster's nodes verify the cloud's certificates.
        pub cluster_verify_ca: bool,
    }

    /// The cloud, as configured now.
    pub fn info() -> CloudInfo {
        let c = w::cloud::info();
        CloudInfo {
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
