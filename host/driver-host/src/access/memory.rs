//! In-memory implementations of the host traits, for tests, the SDK's test
//! kit and `all-in-one --kube memory`: a Kubernetes API server with
//! server-side apply ([`kube::ApiServer`]), an OpenStack cloud of fixed
//! answers, a certificate store, and the cloud's configuration.

pub mod kube;

use std::collections::BTreeMap;
use std::sync::Mutex;

use magnum_domain::models::Cluster;

use super::{
    ApplicationCredential, CloudAccess, CloudInfo, ClusterCas, Credentials, Flavor, HostError,
    HostFuture, Image, LoadBalancer, OpenStackAccess, Reply, SecretsAccess, ShareType, VolumeType,
};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave the maps in a
    // state worse than a test failure.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An OpenStack cloud with fixed answers. Names and ids resolve through the
/// maps; an unknown reference is a `NotFound`. Every call is recorded with
/// whether it acted as the service (`admin`).
#[derive(Default)]
pub struct MemoryOpenStack {
    /// Flavor reference → flavor name.
    pub flavors: BTreeMap<String, String>,
    /// Image reference → image.
    pub images: BTreeMap<String, Image>,
    /// Network reference → network id.
    pub networks: BTreeMap<String, String>,
    /// Subnet reference → subnet id.
    pub subnets: BTreeMap<String, String>,
    /// `None`: the cloud has no load-balancer service.
    pub load_balancers: Option<Vec<LoadBalancer>>,
    /// `None`: the cloud has no block-storage service.
    pub volume_types: Option<Vec<VolumeType>>,
    /// Flavor reference → flavor with its extra specs.
    pub flavor_details: BTreeMap<String, Flavor>,
    /// `None`: the cloud has no shared-file-system service.
    pub share_types: Option<Vec<ShareType>>,
    server_groups: Mutex<BTreeMap<String, String>>,
    credentials: Mutex<BTreeMap<String, ApplicationCredential>>,
    calls: Mutex<Vec<(String, bool)>>,
}

impl MemoryOpenStack {
    /// A cloud that knows nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// The calls made: (function, acted as the service).
    pub fn calls(&self) -> Vec<(String, bool)> {
        lock(&self.calls).clone()
    }

    /// The server groups, by name → id.
    pub fn server_groups(&self) -> BTreeMap<String, String> {
        lock(&self.server_groups).clone()
    }

    /// The application credentials, by id.
    pub fn application_credentials(&self) -> BTreeMap<String, ApplicationCredential> {
        lock(&self.credentials).clone()
    }

    fn record(&self, call: &str, cred: Option<&Credentials>) {
        lock(&self.calls).push((call.to_string(), cred.is_none_or(|c| c.admin)));
    }
}

fn resolve<T: Clone>(
    map: &BTreeMap<String, T>,
    what: &str,
    reference: &str,
) -> Result<T, HostError> {
    map.get(reference)
        .cloned()
        .ok_or_else(|| HostError::NotFound(format!("{what} {reference}")))
}

/// Calls of a [`MemoryOpenStack`] answered from its fields, each recorded:
/// `resolve method -> T = map["what"];` finds a reference in a map (an
/// unknown one is a `NotFound` of `what`), `list method -> T = field;`
/// answers a list the cloud may not have.
macro_rules! memory_answers {
    (resolve $($method:ident -> $t:ty = $map:ident[$what:literal];)+) => {$(
        fn $method<'a>(&'a self, cred: &'a Credentials, reference: &'a str) -> Reply<'a, $t> {
            Box::pin(async move {
                self.record(stringify!($method), Some(cred));
                resolve(&self.$map, $what, reference)
            })
        }
    )+};
    (list $($method:ident -> $t:ty = $field:ident;)+) => {$(
        fn $method<'a>(&'a self, cred: &'a Credentials) -> Reply<'a, Option<Vec<$t>>> {
            Box::pin(async move {
                self.record(stringify!($method), Some(cred));
                Ok(self.$field.clone())
            })
        }
    )+};
}

impl OpenStackAccess for MemoryOpenStack {
    memory_answers!(resolve
        flavor_name -> String = flavors["flavor"];
        image -> Image = images["image"];
        network_id -> String = networks["network"];
        subnet_id -> String = subnets["subnet"];
        flavor -> Flavor = flavor_details["flavor"];
    );

    memory_answers!(list
        volume_types -> VolumeType = volume_types;
        share_types -> ShareType = share_types;
    );

    fn ensure_server_group<'a>(
        &'a self,
        cred: &'a Credentials,
        name: &'a str,
        policy: &'a str,
    ) -> Reply<'a, String> {
        Box::pin(async move {
            self.record("ensure_server_group", Some(cred));
            let mut groups = lock(&self.server_groups);
            let n = groups.len();
            Ok(groups
                .entry(name.to_string())
                .or_insert_with(|| format!("sg-{n}-{policy}"))
                .clone())
        })
    }

    fn delete_server_group<'a>(&'a self, cred: &'a Credentials, name: &'a str) -> Reply<'a, ()> {
        Box::pin(async move {
            self.record("delete_server_group", Some(cred));
            lock(&self.server_groups).remove(name);
            Ok(())
        })
    }

    fn create_application_credential<'a>(
        &'a self,
        cred: &'a Credentials,
        name: &'a str,
        _description: &'a str,
    ) -> Reply<'a, ApplicationCredential> {
        Box::pin(async move {
            self.record("create_application_credential", Some(cred));
            let mut creds = lock(&self.credentials);
            let ac = ApplicationCredential {
                id: format!("ac-{}", creds.len()),
                secret: format!("secret-{}", creds.len()),
                name: name.to_string(),
                user_id: cred.user_id.clone(),
            };
            creds.insert(ac.id.clone(), ac.clone());
            Ok(ac)
        })
    }

    fn delete_application_credential<'a>(
        &'a self,
        _user_id: &'a str,
        id: &'a str,
    ) -> Reply<'a, ()> {
        Box::pin(async move {
            self.record("delete_application_credential", None);
            lock(&self.credentials).remove(id);
            Ok(())
        })
    }

    fn load_balancers<'a>(
        &'a self,
        cred: &'a Credentials,
        project_id: &'a str,
    ) -> Reply<'a, Option<Vec<LoadBalancer>>> {
        Box::pin(async move {
            self.record("load_balancers", Some(cred));
            Ok(self.load_balancers.as_ref().map(|lbs| {
                lbs.iter()
                    .filter(|lb| lb.project_id == project_id)
                    .cloned()
                    .collect()
            }))
        })
    }

    fn delete_load_balancer<'a>(
        &'a self,
        cred: &'a Credentials,
        _lb: &'a LoadBalancer,
    ) -> Reply<'a, ()> {
        Box::pin(async move {
            self.record("delete_load_balancer", Some(cred));
            Ok(())
        })
    }
}

/// Certificates by cluster uuid.
#[derive(Default)]
pub struct MemorySecrets {
    pub cas: BTreeMap<String, ClusterCas>,
}

impl SecretsAccess for MemorySecrets {
    fn cluster_cas<'a>(&'a self, cluster: &'a Cluster) -> Reply<'a, ClusterCas> {
        Box::pin(async move {
            self.cas.get(&cluster.uuid).cloned().ok_or_else(|| {
                HostError::NotFound(format!("certificates of cluster {}", cluster.uuid))
            })
        })
    }
}

/// The cloud's configuration, changed by [`MemoryCloud::set`] as an
/// operator changes a file: the next call sees the change.
#[derive(Default)]
pub struct MemoryCloud {
    info: Mutex<CloudInfo>,
}

impl MemoryCloud {
    /// A cloud configured as `info`.
    pub fn new(info: CloudInfo) -> Self {
        MemoryCloud {
            info: Mutex::new(info),
        }
    }

    /// Configures the cloud as `info` from now on.
    pub fn set(&self, info: CloudInfo) {
        *lock(&self.info) = info;
    }
}

impl CloudAccess for MemoryCloud {
    fn info(&self) -> HostFuture<'_, CloudInfo> {
        let info = lock(&self.info).clone();
        Box::pin(async move { info })
    }
}
