//! What the host gives drivers, as traits the binary implements
//! ([`KubeAccess`], [`OpenStackAccess`], [`SecretsAccess`]), the records
//! they exchange, and in-memory implementations for tests ([`memory`]).
//!
//! The driver host checks a driver's grants before it calls any of these;
//! an implementation only does the work. A refusal or failure is a
//! [`HostError`], which reaches the driver as a typed error, never a trap.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use magnum_domain::models::Cluster;
use magnum_domain::{MagnumError, RequestContext};

pub mod memory;

/// The future a host import returns.
pub type HostFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The future of a host call that can fail: its answer, or why the host
/// refused or could not do it.
pub type Reply<'a, T> = HostFuture<'a, Result<T, HostError>>;

/// Why the host refused or could not do what a driver asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// Not granted to the driver (capability, kind, verb, namespace, call,
    /// file).
    #[error("access denied: {0}")]
    AccessDenied(String),
    /// The request is malformed.
    #[error("invalid: {0}")]
    Invalid(String),
    /// What was named does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The object changed or exists already.
    #[error("conflict: {0}")]
    Conflict(String),
    /// An argument or answer is larger than the host allows.
    #[error("too large: {0}")]
    TooLarge(String),
    /// The service is not configured or cannot be reached.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// An error Magnum shows the caller as it is.
    #[error("{0}")]
    Client(MagnumError),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// The identity a driver call acts with: the caller's token and catalog, or
/// none (`admin`) for the periodic poll and resumed work, which use the
/// service's own credentials. The host holds it; the driver sees only the
/// user and project ids.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    /// The caller's Keystone token; never logged (`Debug` redacts it).
    pub auth_token: Option<String>,
    pub user_id: String,
    pub project_id: String,
    /// The token's service catalog (JSON).
    pub service_catalog: Option<Vec<u8>>,
    /// True for an admin context without a token: the service's own
    /// credentials, acting in `project_id`, which the host sets to the
    /// project of the call's cluster.
    pub admin: bool,
}

impl Credentials {
    /// The credentials of an API request.
    pub fn from_request(rc: &RequestContext) -> Self {
        Credentials {
            auth_token: rc.auth_token.clone(),
            user_id: rc.user_id.clone(),
            project_id: rc.project_id.clone(),
            service_catalog: rc.service_catalog.clone(),
            admin: false,
        }
    }

    /// The credentials of the periodic poll: no token, the service's own.
    pub fn admin() -> Self {
        Credentials {
            admin: true,
            ..Default::default()
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user_id", &self.user_id)
            .field("project_id", &self.project_id)
            .field("admin", &self.admin)
            .field(
                "auth_token",
                &self.auth_token.as_ref().map(|_| "<redacted>"),
            )
            .finish_non_exhaustive()
    }
}

/// A Kubernetes object reference; `namespace` is `None` for a
/// cluster-scoped kind.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

/// A Kubernetes object: its envelope and the whole object as JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeObject {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub json: String,
}

impl KubeObject {
    /// The object's reference.
    pub fn reference(&self) -> ObjectRef {
        ObjectRef {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    /// The labels of its `metadata`, with string values; none when the
    /// JSON does not parse.
    pub fn labels(&self) -> std::collections::BTreeMap<String, String> {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&self.json) else {
            return Default::default();
        };
        v.pointer("/metadata/labels")
            .and_then(serde_json::Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Objects of one kind in one namespace carrying every label of `labels`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub labels: Vec<(String, String)>,
}

/// The management cluster. The host has already checked the grants, the
/// envelope against the body and the sizes.
pub trait KubeAccess: Send + Sync {
    /// Server-side apply with `field_manager`, forcing ownership; the
    /// object as stored.
    fn apply<'a>(&'a self, obj: KubeObject, field_manager: &'a str) -> Reply<'a, KubeObject>;
    /// The object, or `None`.
    fn get(&self, reference: ObjectRef) -> Reply<'_, Option<KubeObject>>;
    /// The objects matching `selector`; a kind the server does not serve
    /// lists as empty.
    fn list(&self, selector: Selector) -> Reply<'_, Vec<KubeObject>>;
    /// Deletes with background propagation; `false` when already gone or
    /// when the kind is not served.
    fn delete(&self, reference: ObjectRef) -> Reply<'_, bool>;
    /// Whether the server serves `kind` of `api_version`.
    fn served<'a>(&'a self, api_version: &'a str, kind: &'a str) -> Reply<'a, bool>;
}

/// A Glance image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub id: String,
    /// `hw_disk_bus`, when set.
    pub disk_bus: Option<String>,
}

/// A Keystone application credential.
#[derive(Clone, PartialEq, Eq)]
pub struct ApplicationCredential {
    pub id: String,
    /// Never logged (`Debug` redacts it).
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolumeType {
    pub name: String,
    pub is_default: bool,
}

/// A Nova flavor with its extra specs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flavor {
    pub id: String,
    pub name: String,
    pub vcpus: u32,
    pub ram_mb: u32,
    pub disk_gb: u32,
    pub extra_specs: Vec<(String, String)>,
}

/// A Manila share type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShareType {
    pub id: String,
    pub name: String,
    pub is_default: bool,
    pub driver_handles_share_servers: Option<bool>,
}

/// The cloud the host works in, as its operator configured it (contract
/// 1.1's `cloud-info`). Holds no secret.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CloudInfo {
    pub keystone_url: String,
    pub region: Option<String>,
    pub endpoint_interface: String,
    pub ca_bundle: Option<String>,
    pub verify: bool,
    pub cluster_ca_bundle: Option<String>,
    pub cluster_verify_ca: bool,
}

/// Where the cloud's configuration comes from: read at every call, so
/// that a changed CA file reaches drivers at their next call.
pub trait CloudAccess: Send + Sync {
    /// The cloud as configured now.
    fn info(&self) -> HostFuture<'_, CloudInfo>;
}

/// The OpenStack calls a driver may be granted. Each acts with `cred`: the
/// caller's token, or the service's credentials when `cred.admin`.
pub trait OpenStackAccess: Send + Sync {
    /// The Nova flavor name of a flavor name or id.
    fn flavor_name<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, String>;
    /// The Glance image of a name or id.
    fn image<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, Image>;
    /// The Neutron network id of a name or id.
    fn network_id<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, String>;
    /// The Neutron subnet id of a name or id.
    fn subnet_id<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, String>;
    /// The id of the server group `name`, created with `policy` if missing.
    fn ensure_server_group<'a>(
        &'a self,
        cred: &'a Credentials,
        name: &'a str,
        policy: &'a str,
    ) -> Reply<'a, String>;
    /// Deletes the server group `name`; a missing one is not an error.
    fn delete_server_group<'a>(&'a self, cred: &'a Credentials, name: &'a str) -> Reply<'a, ()>;
    /// A new application credential owned by the caller.
    fn create_application_credential<'a>(
        &'a self,
        cred: &'a Credentials,
        name: &'a str,
        description: &'a str,
    ) -> Reply<'a, ApplicationCredential>;
    /// Deletes an application credential with the service's credentials;
    /// a missing one is not an error.
    fn delete_application_credential<'a>(&'a self, user_id: &'a str, id: &'a str) -> Reply<'a, ()>;
    /// The load balancers of a project; `None` without Octavia.
    fn load_balancers<'a>(
        &'a self,
        cred: &'a Credentials,
        project_id: &'a str,
    ) -> Reply<'a, Option<Vec<LoadBalancer>>>;
    /// Deletes the floating IPs of the VIP, then the load balancer
    /// (cascade).
    fn delete_load_balancer<'a>(
        &'a self,
        cred: &'a Credentials,
        lb: &'a LoadBalancer,
    ) -> Reply<'a, ()>;
    /// The volume types the caller sees; `None` without Cinder.
    fn volume_types<'a>(&'a self, cred: &'a Credentials) -> Reply<'a, Option<Vec<VolumeType>>>;
    /// The Nova flavor of a name or id, with its extra specs.
    fn flavor<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, Flavor>;
    /// The Manila share types the caller sees; `None` without Manila in
    /// the catalog.
    fn share_types<'a>(&'a self, cred: &'a Credentials) -> Reply<'a, Option<Vec<ShareType>>>;
}

/// A certificate and its encrypted private key.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct KeyPair {
    pub cert_pem: String,
    /// PKCS#8 PEM encrypted with `passphrase`; never logged.
    pub key_pem: String,
    /// Never logged.
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

/// A cluster's three CAs and its admin client certificate.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ClusterCas {
    pub kubernetes: KeyPair,
    pub etcd: KeyPair,
    pub front_proxy: KeyPair,
    pub admin: KeyPair,
}

/// The certificates Magnum keeps for a cluster.
pub trait SecretsAccess: Send + Sync {
    /// The CAs and admin certificate of `cluster`.
    fn cluster_cas<'a>(&'a self, cluster: &'a Cluster) -> Reply<'a, ClusterCas>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_secret() {
        // Go: TestCredentialsRedactToken.
        let c = Credentials {
            auth_token: Some("gAAAAsecret".into()),
            user_id: "u".into(),
            project_id: "p".into(),
            ..Default::default()
        };
        let ac = ApplicationCredential {
            id: "id".into(),
            secret: "s3cr3t".into(),
            name: "n".into(),
            user_id: "u".into(),
        };
        let kp = KeyPair {
            cert_pem: "CERT".into(),
            key_pem: "PRIVATEKEY".into(),
            passphrase: "hunter2".into(),
        };
        let shown = format!("{c:?} {ac:?} {kp:?} {:?}", ClusterCas::default());
        for secret in ["gAAAAsecret", "s3cr3t", "PRIVATEKEY", "hunter2"] {
            assert!(!shown.contains(secret), "{secret} leaked in {shown}");
        }
        assert!(shown.contains("user_id: \"u\""));
    }

    #[test]
    fn admin_credentials_carry_no_token() {
        let c = Credentials::admin();
        assert!(c.admin && c.auth_token.is_none());
        let rc = RequestContext {
            auth_token: Some("t".into()),
            user_id: "u".into(),
            project_id: "p".into(),
            ..Default::default()
        };
        let c = Credentials::from_request(&rc);
        assert!(!c.admin);
        assert_eq!(c.auth_token.as_deref(), Some("t"));
    }
}
