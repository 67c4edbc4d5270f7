//! Every object variation the Cluster API driver builds, applied to a real
//! kube-apiserver with the Cluster API v1.14 and CAPO v0.14.7 CRDs and
//! sent again as a server-side apply dry run (`?dryRun=All`).
//!
//! The driver runs in the real driver host (its built-in component, its
//! grants) with in-memory OpenStack, certificates and cloud
//! configuration; its `kube` import is [`ServerApply`], which does what
//! the binary's management-cluster access does (server-side apply with the
//! driver's field manager, forced) against the test server, counting the
//! applies and the refusals. A matrix of clusters ([`variations`]) switches
//! every label, template field, driver option and cloud service that
//! changes an object at least once; each is validated, created, and, where
//! it matters, resized, upgraded, given a nodegroup or a new credential.
//! Every object written is then read back and applied again as a dry run,
//! so that what is stored validates as it is. A refused apply is a driver
//! bug. See docs/testing.md.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use driver_host::access::memory::{MemoryCloud, MemoryOpenStack, MemorySecrets};
use driver_host::{
    CallContext, CallError, CloudInfo, ClusterCas, ClusterState, Credentials, Driver, DriverConfig,
    DriverHost, DriverSettings, Flavor, HostError, HostFuture, HostServices, Image, KeyPair,
    KubeAccess, KubeObject, ObjectRef, Resize, Selector, ShareType, Update, Upgrade, VolumeType,
};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Scope};
use kube::{Client, ResourceExt};
use magnum_domain::Status;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use serde_json::{Value, json};

use crate::kube::capi_api_server;

/// The driver's namespace (its manifest's default).
const NS: &str = "magnum-system";
/// The entry point every variation is created with.
const ENTRY_POINT: &str = "k8s_cluster_api";
const PROJECT_ID: &str = "0d6f1e7a2b3c4d5e8f9a0b1c2d3e4f50";
const USER_ID: &str = "9a8b7c6d5e4f40312a1b0c9d8e7f6a5b";
/// The Manila share network of the share type that handles share servers.
const SHARE_NETWORK: &str = "6c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f";

/// A kind as the server serves it.
#[derive(Clone)]
struct Served {
    resource: ApiResource,
    namespaced: bool,
}

/// The management cluster of the driver: the test server, reached as the
/// binary reaches it (discovery by api version and kind, server-side apply
/// with the driver's field manager and `force`). Records every object
/// written and every refusal.
struct ServerApply {
    client: Client,
    kinds: Mutex<HashMap<(String, String), Option<Served>>>,
    /// Every object applied, with the field manager of its last apply.
    written: Mutex<BTreeMap<ObjectRef, String>>,
    applies: AtomicUsize,
    refusals: Mutex<Vec<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ServerApply {
    fn new(client: Client) -> ServerApply {
        ServerApply {
            client,
            kinds: Mutex::new(HashMap::new()),
            written: Mutex::new(BTreeMap::new()),
            applies: AtomicUsize::new(0),
            refusals: Mutex::new(Vec::new()),
        }
    }

    async fn discover(&self, api_version: &str, kind: &str) -> Result<Option<Served>, HostError> {
        let key = (api_version.to_owned(), kind.to_owned());
        if let Some(s) = lock(&self.kinds).get(&key) {
            return Ok(s.clone());
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let served = match kube::discovery::pinned_kind(&self.client, &gvk).await {
            Ok((resource, caps)) => Some(Served {
                resource,
                namespaced: caps.scope == Scope::Namespaced,
            }),
            Err(kube::Error::Api(s)) if s.is_not_found() => None,
            Err(kube::Error::Discovery(_)) => None,
            Err(e) => return Err(HostError::Unavailable(format!("discover {gvk:?}: {e}"))),
        };
        lock(&self.kinds).insert(key, served.clone());
        Ok(served)
    }

    async fn api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Option<Api<DynamicObject>>, HostError> {
        let Some(s) = self.discover(api_version, kind).await? else {
            return Ok(None);
        };
        Ok(Some(match (s.namespaced, namespace) {
            (true, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, &s.resource),
            (false, None) => Api::all_with(self.client.clone(), &s.resource),
            _ => {
                return Err(HostError::Invalid(format!(
                    "{api_version}/{kind}: the namespace does not fit the kind's scope"
                )));
            }
        }))
    }

    /// The object as the host hands it to the driver.
    fn object(api_version: &str, kind: &str, mut obj: DynamicObject) -> KubeObject {
        let (namespace, name) = (obj.namespace(), obj.name_any());
        obj.types = Some(kube::core::TypeMeta {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        });
        KubeObject {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace,
            name,
            json: serde_json::to_string(&obj).expect("encode an object"),
        }
    }

    fn refuse(&self, what: String) -> HostError {
        lock(&self.refusals).push(what.clone());
        HostError::Invalid(what)
    }
}

/// The server's answer as the binary maps it (host/openkeel-magnum's
/// management cluster).
fn host_error(what: &str, e: kube::Error) -> HostError {
    match e {
        kube::Error::Api(s) => match s.code {
            404 => HostError::NotFound(format!("{what}: {}", s.message)),
            409 => HostError::Conflict(format!("{what}: {}", s.message)),
            400 | 422 => HostError::Invalid(format!("{what}: {}", s.message)),
            _ => HostError::Other(format!("{what}: {} ({})", s.message, s.code)),
        },
        e => HostError::Unavailable(format!("{what}: {e}")),
    }
}

impl KubeAccess for ServerApply {
    fn apply<'a>(
        &'a self,
        obj: KubeObject,
        field_manager: &'a str,
    ) -> HostFuture<'a, Result<KubeObject, HostError>> {
        Box::pin(async move {
            self.applies.fetch_add(1, Ordering::Relaxed);
            let what = format!("apply {} {}/{}", obj.kind, NS, obj.name);
            let Some(api) = self
                .api(&obj.api_version, &obj.kind, obj.namespace.as_deref())
                .await?
            else {
                return Err(self.refuse(format!("{what}: the kind is not served")));
            };
            let body: Value =
                serde_json::from_str(&obj.json).map_err(|e| self.refuse(format!("{what}: {e}")))?;
            let params = PatchParams::apply(field_manager).force();
            match api.patch(&obj.name, &params, &Patch::Apply(&body)).await {
                Ok(stored) => {
                    lock(&self.written).insert(obj.reference(), field_manager.to_owned());
                    Ok(Self::object(&obj.api_version, &obj.kind, stored))
                }
                Err(e) => {
                    let e = host_error(&what, e);
                    lock(&self.refusals).push(e.to_string());
                    Err(e)
                }
            }
        })
    }

    fn get(&self, r: ObjectRef) -> HostFuture<'_, Result<Option<KubeObject>, HostError>> {
        Box::pin(async move {
            let Some(api) = self
                .api(&r.api_version, &r.kind, r.namespace.as_deref())
                .await?
            else {
                return Ok(None);
            };
            match api.get_opt(&r.name).await {
                Ok(o) => Ok(o.map(|o| Self::object(&r.api_version, &r.kind, o))),
                Err(e) => Err(host_error(&format!("get {} {}", r.kind, r.name), e)),
            }
        })
    }

    fn list(&self, s: Selector) -> HostFuture<'_, Result<Vec<KubeObject>, HostError>> {
        Box::pin(async move {
            let Some(api) = self
                .api(&s.api_version, &s.kind, s.namespace.as_deref())
                .await?
            else {
                return Ok(Vec::new());
            };
            let labels = s
                .labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",");
            let list = api
                .list(&ListParams::default().labels(&labels))
                .await
                .map_err(|e| host_error(&format!("list {}", s.kind), e))?;
            Ok(list
                .items
                .into_iter()
                .map(|o| Self::object(&s.api_version, &s.kind, o))
                .collect())
        })
    }

    fn delete(&self, r: ObjectRef) -> HostFuture<'_, Result<bool, HostError>> {
        Box::pin(async move {
            let Some(api) = self
                .api(&r.api_version, &r.kind, r.namespace.as_deref())
                .await?
            else {
                return Ok(false);
            };
            match api.delete(&r.name, &DeleteParams::background()).await {
                Ok(_) => {
                    lock(&self.written).remove(&r);
                    Ok(true)
                }
                Err(kube::Error::Api(s)) if s.is_not_found() => Ok(false),
                Err(e) => Err(host_error(&format!("delete {} {}", r.kind, r.name), e)),
            }
        })
    }

    fn served<'a>(
        &'a self,
        api_version: &'a str,
        kind: &'a str,
    ) -> HostFuture<'a, Result<bool, HostError>> {
        Box::pin(async move { Ok(self.discover(api_version, kind).await?.is_some()) })
    }
}

/// A DNS domain of 253 characters, the most `serviceDomain` takes.
const LONGEST_DOMAIN: &str = concat!(
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.",
    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.",
    "ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc.",
    "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
);
/// A taint key with a prefix and a name of 63 characters.
const LONGEST_TAINT_KEY: &str =
    "example.com/kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk";
/// A taint value of 63 characters.
const LONGEST_TAINT_VALUE: &str = "v_v.v-vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv9";

/// A cloud: Nova flavors (one with GPUs), Glance images (one on a SCSI
/// bus), Neutron networks and a subnet, and, unless `bare`, Octavia,
/// Cinder with two volume types and Manila with a share type that handles
/// share servers and one that does not.
fn cloud(bare: bool) -> MemoryOpenStack {
    let mut c = MemoryOpenStack::new();
    for (name, vcpus, ram_mb, disk_gb, specs) in [
        ("m1.small", 2, 4096, 20, vec![]),
        ("m1.medium", 4, 8192, 40, vec![]),
        ("m1.large", 8, 16384, 0, vec![]),
        (
            "g1.gpu",
            8,
            32768,
            80,
            vec![("resources:VGPU", "1"), ("pci_passthrough:alias", "a100:2")],
        ),
    ] {
        c.flavors.insert(name.into(), name.into());
        c.flavor_details.insert(
            name.into(),
            Flavor {
                id: format!("flavor-{name}"),
                name: name.into(),
                vcpus,
                ram_mb,
                disk_gb,
                extra_specs: specs
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            },
        );
    }
    for (name, id, bus) in [
        (
            "ubuntu-2204-kube",
            "3e2b6a1c-9d8f-4e7a-b6c5-d4e3f2a1b0c9",
            None,
        ),
        (
            "ubuntu-2404-kube",
            "4f3c7b2d-0e9a-4f8b-a7d6-e5f4a3b2c1d0",
            None,
        ),
        ("flatcar-kube", "5a4d8c3e-1f0b-4a9c-b8e7-f6a5b4c3d2e1", None),
        (
            "rocky-9-kube",
            "6b5e9d4f-2a1c-4bad-89f8-a7b6c5d4e3f2",
            Some("scsi"),
        ),
        (
            "debian-12-kube",
            "7c6fae50-3b2d-4cbe-9a09-b8c7d6e5f4a3",
            None,
        ),
    ] {
        c.images.insert(
            name.into(),
            Image {
                id: id.into(),
                disk_bus: bus.map(str::to_string),
            },
        );
    }
    c.networks.insert(
        "public".into(),
        "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d".into(),
    );
    c.networks.insert(
        "private".into(),
        "8b7c6d5e-4f3a-4b2c-8d9e-0f1a2b3c4d5e".into(),
    );
    c.subnets.insert(
        "private-subnet".into(),
        "9c8d7e6f-5a4b-4c3d-9e0f-1a2b3c4d5e6f".into(),
    );
    if !bare {
        c.load_balancers = Some(Vec::new());
        c.volume_types = Some(vec![
            VolumeType {
                name: "__DEFAULT__".into(),
                is_default: false,
            },
            VolumeType {
                name: "ssd".into(),
                is_default: true,
            },
            VolumeType {
                name: "hdd".into(),
                is_default: false,
            },
        ]);
        c.share_types = Some(vec![
            ShareType {
                id: "st-default".into(),
                name: "default".into(),
                is_default: true,
                driver_handles_share_servers: Some(false),
            },
            ShareType {
                id: "st-dhss".into(),
                name: "cephfs-dhss".into(),
                is_default: false,
                driver_handles_share_servers: Some(true),
            },
        ]);
    }
    c
}

/// The cluster CAs Magnum keeps, generated once for every cluster.
fn cas() -> ClusterCas {
    let opts = magnum_x509::X509Options::default();
    let pair = |kp: magnum_x509::KeyPair| KeyPair {
        cert_pem: kp.certificate,
        key_pem: kp.private_key,
        passphrase: kp.passphrase,
    };
    let ca = |name: &str| magnum_x509::generate_ca(name, &opts).expect("generate a CA");
    let kubernetes = ca("kubernetes");
    let admin = magnum_x509::generate_client_cert(
        &kubernetes,
        magnum_x509::ADMIN_COMMON_NAME,
        magnum_x509::ADMIN_ORGANIZATION,
        &opts,
    )
    .expect("generate the admin certificate");
    ClusterCas {
        kubernetes: pair(kubernetes),
        etcd: pair(ca("etcd")),
        front_proxy: pair(ca("front-proxy")),
        admin: pair(admin),
    }
}

/// A small cilium manifest the operator places (no cilium manifest is
/// embedded): a ConfigMap with the pool key and a DaemonSet.
const CILIUM_MANIFEST: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: cilium-config
  namespace: kube-system
data:
  cluster-pool-ipv4-cidr: 10.0.0.0/8
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cilium
  namespace: kube-system
spec:
  selector:
    matchLabels: {k8s-app: cilium}
  template:
    metadata:
      labels: {k8s-app: cilium}
    spec:
      containers:
      - name: cilium-agent
        image: quay.io/cilium/cilium:v1.15.3
"#;

/// The driver host with the built-in Cluster API driver only, these
/// services and the operator's files and options.
async fn start_host(
    kube: Arc<ServerApply>,
    openstack: MemoryOpenStack,
    secrets: MemorySecrets,
    files_dir: &std::path::Path,
    options: &[(&str, &str)],
) -> DriverHost {
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("okm-driver-cache");
    std::fs::create_dir_all(&cache).expect("driver cache dir");
    let mut settings = DriverSettings {
        precompiled_cache_dir: Some(cache),
        ..Default::default()
    };
    settings.drivers.insert(
        "capi".into(),
        DriverConfig {
            files_dir: Some(files_dir.to_path_buf()),
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        },
    );
    let sources = driver_host::builtin_sources()
        .into_iter()
        .filter(|s| s.manifest.contains("name = \"capi\""))
        .collect::<Vec<_>>();
    assert_eq!(sources.len(), 1, "the built-in Cluster API driver");
    let services = HostServices {
        cloud: Some(Arc::new(MemoryCloud::new(CloudInfo {
            keystone_url: "https://keystone.example.test:5000/v3".into(),
            region: Some("RegionOne".into()),
            endpoint_interface: "public".into(),
            ca_bundle: Some("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----".into()),
            verify: true,
            cluster_ca_bundle: None,
            cluster_verify_ca: true,
        }))),
        kube: Some(kube),
        openstack: Some(Arc::new(openstack)),
        secrets: Some(Arc::new(secrets)),
        ..HostServices::default()
    };
    let host = DriverHost::start_with(settings, services, sources)
        .await
        .unwrap_or_else(|e| panic!("start the driver host: {e}"));
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    host
}

/// A user's request.
fn user() -> CallContext {
    CallContext {
        credentials: Credentials {
            auth_token: Some("matrix-token".into()),
            user_id: USER_ID.into(),
            project_id: PROJECT_ID.into(),
            service_catalog: None,
            admin: false,
        },
        request_id: "req-matrix".into(),
        now: None,
    }
}

fn string_map(pairs: &[(&str, &str)]) -> StringMap {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// What one variation does after its create.
enum Step {
    /// Resizes the nodegroup to the count, removing the Machine of the
    /// nodegroup created first when `remove` (its delete annotation is
    /// applied).
    Resize {
        nodegroup: &'static str,
        count: i32,
        remove: bool,
    },
    /// Upgrades the cluster (or one nodegroup) to a template of this
    /// `kube_tag` and image.
    Upgrade {
        kube_tag: &'static str,
        image: &'static str,
        nodegroup: Option<&'static str>,
        max_batch_size: i32,
    },
    /// Creates a nodegroup.
    CreateNodegroup(Box<NodeGroup>),
    /// Changes a nodegroup's bounds, labels and taints.
    UpdateNodegroup {
        nodegroup: &'static str,
        min: i32,
        max: i32,
        taint: (&'static str, &'static str, &'static str),
    },
    /// Replaces the cluster's cloud credential.
    RotateCredential,
}

/// One cluster of the matrix.
struct Variation {
    name: &'static str,
    /// Created on the cloud without Octavia, Cinder or Manila.
    bare: bool,
    state: ClusterState,
    steps: Vec<Step>,
}

/// A worker nodegroup of the cluster `uuid`.
fn worker(
    uuid: &str,
    n: i64,
    name: &str,
    count: i32,
    flavor: &str,
    image: &str,
    labels: &StringMap,
) -> NodeGroup {
    NodeGroup {
        id: n,
        uuid: format!("a1c0d8c3-4f8e-4d0c-{}-{n:012}", &uuid[uuid.len() - 4..]),
        name: name.into(),
        cluster_id: uuid.into(),
        project_id: PROJECT_ID.into(),
        role: Some("worker".into()),
        is_default: Some(false),
        node_count: Some(count),
        min_node_count: Some(0),
        flavor_id: Some(flavor.into()),
        image_id: Some(image.into()),
        labels: Some(labels.clone()),
        status: Some(Status::CreateInProgress),
        ..Default::default()
    }
}

/// The rows of a new cluster as the conductor writes them: the template's
/// labels copied to the cluster and its nodegroups, one master nodegroup
/// of `masters` and a default worker of two nodes.
fn new_cluster(
    n: u32,
    distro: &str,
    network_driver: &str,
    image: &str,
    masters: i32,
    labels: &[(&str, &str)],
) -> ClusterState {
    let uuid = format!("5d12f6fd-a196-4bf0-ae4c-{n:012}");
    let labels = string_map(labels);
    let template = ClusterTemplate {
        id: i64::from(n),
        uuid: format!("0b6c3a9e-2f41-4d57-9a0e-{n:012}"),
        name: format!("matrix-{n}"),
        project_id: PROJECT_ID.into(),
        user_id: USER_ID.into(),
        image_id: Some(image.into()),
        flavor_id: Some("m1.small".into()),
        master_flavor_id: Some("m1.medium".into()),
        external_network_id: Some("public".into()),
        coe: Some("kubernetes".into()),
        cluster_distro: Some(distro.into()),
        server_type: Some("vm".into()),
        network_driver: Some(network_driver.into()),
        driver: Some(ENTRY_POINT.into()),
        labels: Some(labels.clone()),
        tls_disabled: Some(false),
        master_lb_enabled: Some(true),
        floating_ip_enabled: Some(true),
        ..Default::default()
    };
    let cluster = Cluster {
        id: i64::from(n),
        uuid: uuid.clone(),
        name: format!("matrix-{n}"),
        project_id: PROJECT_ID.into(),
        user_id: USER_ID.into(),
        cluster_template_id: template.uuid.clone(),
        labels: Some(labels.clone()),
        flavor_id: Some("m1.small".into()),
        master_flavor_id: Some("m1.medium".into()),
        status: Some(Status::CreateInProgress),
        create_timeout: Some(60),
        master_lb_enabled: Some(true),
        floating_ip_enabled: Some(true),
        ..Default::default()
    };
    let mut master = worker(
        &uuid,
        1,
        "default-master",
        masters,
        "m1.medium",
        image,
        &labels,
    );
    master.role = Some("master".into());
    master.is_default = Some(true);
    master.min_node_count = Some(1);
    let mut default_worker = worker(&uuid, 2, "default-worker", 2, "m1.small", image, &labels);
    default_worker.is_default = Some(true);
    ClusterState {
        cluster,
        template,
        nodegroups: vec![master, default_worker],
    }
}

/// `labels` over the cluster's own labels, as Magnum merges a nodegroup's.
fn with_labels(st: &ClusterState, labels: &[(&str, &str)]) -> StringMap {
    let mut l = st.cluster.labels.clone().unwrap_or_default();
    l.extend(string_map(labels));
    l
}

/// The matrix: together, the variations switch every label, template
/// field, driver option and cloud service that changes an object (see
/// docs/testing.md for the list).
#[allow(clippy::too_many_lines)]
fn variations() -> Vec<Variation> {
    let mut out = Vec::new();

    // 1. The defaults: calico embedded, ubuntu, one master, Cinder and
    // Manila in the catalog; resized, given a nodegroup, upgraded.
    let mut st = new_cluster(
        1,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[("kube_tag", "v1.31.4")],
    );
    let extra = worker(
        &st.cluster.uuid,
        3,
        "extra",
        1,
        "m1.large",
        "ubuntu-2204-kube",
        &with_labels(&st, &[("availability_zone", "az-2")]),
    );
    st.cluster.keypair = Some("matrix-key".into());
    out.push(Variation {
        name: "defaults",
        bare: false,
        state: st,
        steps: vec![
            Step::Resize {
                nodegroup: "default-worker",
                count: 4,
                remove: false,
            },
            Step::CreateNodegroup(Box::new(extra)),
            Step::Upgrade {
                kube_tag: "v1.32.1",
                image: "ubuntu-2404-kube",
                nodegroup: None,
                max_batch_size: 2,
            },
            Step::RotateCredential,
        ],
    });

    // 2. Cilium (the operator's manifest), its pool, rocky linux on a SCSI
    // image, three masters spread over zones.
    let st = new_cluster(
        2,
        "rockylinux",
        "cilium",
        "rocky-9-kube",
        3,
        &[
            ("kube_tag", "v1.30.8"),
            ("cilium_tag", "v1.15.3"),
            ("cilium_ipv4pool", "10.200.0.0/16"),
            ("control_plane_availability_zones", "az-1,az-2,az-3"),
            ("availability_zone", "az-1"),
        ],
    );
    out.push(Variation {
        name: "cilium-rocky-three-masters",
        bare: false,
        state: st,
        steps: vec![Step::Resize {
            nodegroup: "default-master",
            count: 5,
            remove: false,
        }],
    });

    // 3. Boot, etcd and container volumes, the Cinder types; flatcar.
    let mut st = new_cluster(
        3,
        "flatcar",
        "calico",
        "flatcar-kube",
        1,
        &[
            ("kube_tag", "v1.33.2"),
            ("boot_volume_size", "40"),
            ("boot_volume_type", "ssd"),
            ("boot_volume_availability_zone", "nova-vol"),
            ("etcd_volume_size", "10"),
            ("etcd_volume_type", "hdd"),
            ("docker_volume_type", "ssd"),
        ],
    );
    st.cluster.docker_volume_size = Some(50);
    st.template.docker_volume_size = Some(50);
    out.push(Variation {
        name: "volumes-flatcar",
        bare: false,
        state: st,
        steps: vec![Step::Upgrade {
            kube_tag: "v1.34.0",
            image: "flatcar-kube",
            nodegroup: None,
            max_batch_size: 0,
        }],
    });

    // 4. OIDC, audit logging, admission plugins, SANs, cipher suites.
    let st = new_cluster(
        4,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[
            ("kube_tag", "v1.32.3"),
            ("oidc_issuer_url", "https://id.example.com/realms/k8s"),
            ("oidc_client_id", "kubernetes"),
            ("oidc_username_claim", "preferred_username"),
            ("oidc_username_prefix", "oidc:"),
            ("oidc_groups_claim", "groups"),
            ("oidc_groups_prefix", "oidc-group:"),
            ("audit_log_enabled", "true"),
            ("audit_log_max_age", "7"),
            ("audit_log_max_backup", "3"),
            ("audit_log_max_size", "50"),
            ("admission_control_list", "PodSecurity,AlwaysPullImages"),
            (
                "api_server_cert_sans",
                "k8s.example.com,*.apps.example.com,192.0.2.10",
            ),
            (
                "api_server_tls_cipher_suites",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            ),
            (
                "kubelet_tls_cipher_suites",
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            ),
        ],
    );
    out.push(Variation {
        name: "oidc-audit-apiserver",
        bare: false,
        state: st,
        steps: vec![],
    });

    // 5. A mirror of every image, registry mirrors and insecure
    // registries (labels and the template's), proxies.
    let mut st = new_cluster(
        5,
        "debian",
        "calico",
        "debian-12-kube",
        1,
        &[
            ("kube_tag", "v1.31.4"),
            ("container_infra_prefix", "registry.example.com:5000/mirror"),
            (
                "registry_mirrors",
                "docker.io=https://mirror.example.com,quay.io=http://10.0.0.5:5000/quay",
            ),
            ("insecure_registries", "registry.internal:5000"),
            ("calico_tag", "v3.29.1"),
            ("cloud_provider_tag", "v1.31.2"),
            ("cinder_csi_plugin_tag", "v1.31.1"),
            ("manila_csi_plugin_tag", "v1.31.0"),
            ("csi_attacher_tag", "v4.7.0"),
            ("csi_provisioner_tag", "v5.1.0"),
            ("csi_snapshotter_tag", "v8.1.0"),
            ("csi_resizer_tag", "v1.12.0"),
            ("csi_liveness_probe_tag", "v2.14.0"),
            ("csi_node_driver_registrar_tag", "v2.12.0"),
            ("auto_scaling_enabled", "true"),
            ("autoscaler_tag", "v1.31.1"),
        ],
    );
    st.template.insecure_registry = Some("10.0.0.9:5000".into());
    st.template.http_proxy = Some("http://proxy.example.com:3128".into());
    st.template.https_proxy = Some("http://proxy.example.com:3128".into());
    st.template.no_proxy = Some("localhost,10.0.0.0/8,.example.com".into());
    out.push(Variation {
        name: "registries-proxies-tags",
        bare: false,
        state: st,
        steps: vec![],
    });

    // 6. The API load balancer: allowed CIDRs, provider, flavor, zone, a
    // floating IP address; the service load balancers' algorithm and
    // health monitor.
    let st = new_cluster(
        6,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[
            ("kube_tag", "v1.32.3"),
            (
                "api_master_lb_allowed_cidrs",
                "192.0.2.0/24,10.1.0.0/16 198.51.100.7",
            ),
            ("octavia_provider", "amphora"),
            ("api_server_lb_flavor", "lb-small"),
            ("api_server_lb_availability_zone", "lb-az"),
            ("api_server_floating_ip", "203.0.113.7"),
            ("octavia_lb_algorithm", "SOURCE_IP_PORT"),
            ("octavia_lb_healthcheck", "false"),
        ],
    );
    out.push(Variation {
        name: "api-load-balancer",
        bare: false,
        state: st,
        steps: vec![],
    });

    // 7. No API load balancer, no floating IP (master_lb_floating_ip off);
    // the allowed CIDRs then have no load balancer to go to.
    let mut st = new_cluster(
        7,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[
            ("kube_tag", "v1.31.4"),
            ("master_lb_floating_ip_enabled", "false"),
            ("api_master_lb_allowed_cidrs", "10.0.0.0/8"),
        ],
    );
    st.cluster.master_lb_enabled = Some(false);
    st.template.master_lb_enabled = Some(false);
    st.cluster.floating_ip_enabled = Some(false);
    st.template.floating_ip_enabled = Some(false);
    out.push(Variation {
        name: "no-load-balancer-no-floating-ip",
        bare: false,
        state: st,
        steps: vec![],
    });

    // 8. A load balancer without a floating IP.
    let mut st = new_cluster(
        8,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[
            ("kube_tag", "v1.31.4"),
            ("master_lb_floating_ip_enabled", "false"),
        ],
    );
    st.cluster.floating_ip_enabled = Some(false);
    out.push(Variation {
        name: "load-balancer-private",
        bare: false,
        state: st,
        steps: vec![],
    });

    // 9. The autoscaler with min/max on the cluster and on nodegroups, a
    // GPU flavor (scale from zero), node labels and taints; a nodegroup
    // whose bounds change; a resize removing a named Machine.
    let mut st = new_cluster(
        9,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[
            ("kube_tag", "v1.32.3"),
            ("auto_scaling_enabled", "true"),
            ("min_node_count", "1"),
            ("max_node_count", "6"),
            ("auto_healing_enabled", "false"),
        ],
    );
    let uuid = st.cluster.uuid.clone();
    let mut gpu = worker(
        &uuid,
        3,
        "gpu",
        0,
        "g1.gpu",
        "ubuntu-2204-kube",
        &with_labels(&st, &[("max_node_count", "4")]),
    );
    gpu.max_node_count = Some(4);
    gpu.node_labels = Some(string_map(&[
        ("node-role.kubernetes.io/gpu", ""),
        ("node.cluster.x-k8s.io/accelerator", "a100"),
        ("team", "ml"),
    ]));
    gpu.node_taints = Some(vec![string_map(&[
        ("key", "nvidia.com/gpu"),
        ("value", "present"),
        ("effect", "NoSchedule"),
    ])]);
    st.nodegroups.push(gpu);
    let mut batch = worker(
        &uuid,
        4,
        "batch",
        2,
        "m1.large",
        "ubuntu-2204-kube",
        &with_labels(&st, &[("server_group_policies", "anti-affinity")]),
    );
    batch.min_node_count = Some(1);
    batch.max_node_count = Some(5);
    out.push(Variation {
        name: "autoscaler-gpu-taints",
        bare: false,
        state: st,
        steps: vec![
            Step::CreateNodegroup(Box::new(batch)),
            Step::UpdateNodegroup {
                nodegroup: "batch",
                min: 0,
                max: 8,
                taint: ("dedicated", "batch", "PreferNoSchedule"),
            },
            Step::Resize {
                nodegroup: "default-worker",
                count: 3,
                remove: true,
            },
        ],
    });

    // 10. Several nodegroups with their own flavor, image, zone, labels,
    // taints, server group policy and failure domain spread; a fixed
    // network and subnet, a DNS nameserver; the nodegroup upgraded alone.
    let mut st = new_cluster(
        10,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[
            ("kube_tag", "v1.31.4"),
            ("fixed_subnet_cidr", "10.20.0.0/22"),
            ("server_group_policies", "affinity"),
            ("different_failure_domain", "true"),
            ("dns_cluster_domain", LONGEST_DOMAIN),
            ("service_cluster_ip_range", "10.96.0.0/12"),
            ("calico_ipv4pool", "10.128.0.0/14"),
        ],
    );
    st.cluster.fixed_network = Some("private".into());
    st.cluster.fixed_subnet = Some("private-subnet".into());
    st.template.fixed_network = Some("private".into());
    st.template.fixed_subnet = Some("private-subnet".into());
    st.template.dns_nameserver = Some("192.0.2.53".into());
    let uuid = st.cluster.uuid.clone();
    let mut edge = worker(
        &uuid,
        3,
        "edge",
        1,
        "m1.medium",
        "ubuntu-2404-kube",
        &with_labels(
            &st,
            &[
                ("availability_zone", "edge-az"),
                ("server_group_policies", "soft-affinity"),
                ("different_failure_domain", "false"),
                ("boot_volume_size", "30"),
                ("container_infra_prefix", "edge-registry.example.com"),
            ],
        ),
    );
    edge.node_labels = Some(string_map(&[(
        "node-restriction.kubernetes.io/edge",
        "true",
    )]));
    edge.node_taints = Some(vec![
        string_map(&[("key", "edge"), ("effect", "NoExecute")]),
        string_map(&[("key", "zone"), ("value", "far"), ("effect", "NoSchedule")]),
        string_map(&[
            ("key", LONGEST_TAINT_KEY),
            ("value", LONGEST_TAINT_VALUE),
            ("effect", "NoSchedule"),
        ]),
    ]);
    st.nodegroups.push(edge);
    out.push(Variation {
        name: "nodegroups-fixed-network",
        bare: false,
        state: st,
        steps: vec![Step::Upgrade {
            kube_tag: "v1.32.0",
            image: "ubuntu-2404-kube",
            nodegroup: Some("edge"),
            max_batch_size: 1,
        }],
    });

    // 11. Keystone authentication off, Cinder and Manila CSI off by label.
    let st = new_cluster(
        11,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[
            ("kube_tag", "v1.32.3"),
            ("keystone_auth_enabled", "false"),
            ("cinder_csi_enabled", "false"),
            ("manila_csi_enabled", "false"),
        ],
    );
    out.push(Variation {
        name: "no-keystone-no-csi",
        bare: false,
        state: st,
        steps: vec![],
    });

    // 12. Manila with a share network for the type that handles share
    // servers.
    let st = new_cluster(
        12,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[
            ("kube_tag", "v1.33.2"),
            ("manila_csi_share_network_id", SHARE_NETWORK),
        ],
    );
    out.push(Variation {
        name: "manila-share-network",
        bare: false,
        state: st,
        steps: vec![],
    });

    // 13. The lowest supported Kubernetes (the cloud provider's and the
    // autoscaler's first releases), autoscaled.
    let st = new_cluster(
        13,
        "ubuntu-focal",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[("kube_tag", "1.22.17"), ("auto_scaling_enabled", "true")],
    );
    out.push(Variation {
        name: "kubernetes-1.22",
        bare: false,
        state: st,
        steps: vec![Step::Upgrade {
            kube_tag: "v1.23.17",
            image: "ubuntu-2204-kube",
            nodegroup: None,
            max_batch_size: 0,
        }],
    });

    // 14. The highest, and one beyond the cloud provider's last release.
    let st = new_cluster(
        14,
        "ubuntu",
        "cilium",
        "ubuntu-2404-kube",
        1,
        &[
            ("kube_tag", "v1.36.1"),
            ("auto_scaling_enabled", "true"),
            ("cilium_tag", "v1.15.3"),
        ],
    );
    out.push(Variation {
        name: "kubernetes-1.36",
        bare: false,
        state: st,
        steps: vec![Step::Upgrade {
            kube_tag: "v1.37.0",
            image: "ubuntu-2404-kube",
            nodegroup: None,
            max_batch_size: 3,
        }],
    });

    // 15. A cloud without Octavia, Cinder or Manila, with the operator's
    // keystone policy, boot volumes from the driver options.
    let st = new_cluster(
        15,
        "ubuntu",
        "calico",
        "ubuntu-2204-kube",
        1,
        &[("kube_tag", "v1.32.3"), ("autoscaler_tag", "v1.32.1")],
    );
    out.push(Variation {
        name: "bare-cloud",
        bare: true,
        state: st,
        steps: vec![Step::Resize {
            nodegroup: "default-worker",
            count: 0,
            remove: false,
        }],
    });

    // 16. The bare cloud, autoscaled, with a pre-release tag, a cluster
    // label mirror overriding the option's, and flatcar.
    let st = new_cluster(
        16,
        "flatcar",
        "calico",
        "flatcar-kube",
        1,
        &[
            ("kube_tag", "v1.34.0-rc.1"),
            ("auto_scaling_enabled", "true"),
            (
                "registry_mirrors",
                "docker.io=https://other-mirror.example.com",
            ),
            ("container_infra_prefix", "registry.example.com"),
            ("boot_volume_size", "0"),
        ],
    );
    out.push(Variation {
        name: "bare-cloud-autoscaled-flatcar",
        bare: true,
        state: st,
        steps: vec![Step::RotateCredential],
    });
    out
}

/// Inputs Magnum's API takes that the Cluster CRD would refuse: each is
/// the driver's 400 at `validate_create` (or, for a nodegroup's taints,
/// `validate_nodegroup`), before anything is written. Answers how many.
async fn refused_inputs(driver: &Driver) -> usize {
    let ctx = user();
    let base = || {
        new_cluster(
            90,
            "ubuntu",
            "calico",
            "ubuntu-2204-kube",
            1,
            &[("kube_tag", "v1.32.3")],
        )
    };
    let too_long_domain = format!("{LONGEST_DOMAIN}x");
    // Beyond the 256 characters of `topology.version` and `failureDomain`.
    let too_long_tag = format!("v1.32.3-{}", "r".repeat(250));
    let too_long_zone = "z".repeat(257);
    let labels: [(&str, &str); 5] = [
        ("dns_cluster_domain", ""),
        ("dns_cluster_domain", &too_long_domain),
        ("service_cluster_ip_range", ""),
        ("kube_tag", &too_long_tag),
        ("availability_zone", &too_long_zone),
    ];
    let mut n = 0;
    for (key, value) in labels {
        let mut st = base();
        st.cluster
            .labels
            .get_or_insert_default()
            .insert(key.into(), value.into());
        for ng in &mut st.nodegroups {
            ng.labels
                .get_or_insert_default()
                .insert(key.into(), value.into());
        }
        match driver.validate_create(&ctx, &st).await {
            Err(CallError::Client(e))
                if e.status == 400 && (e.message.contains(key) || e.kind == "InvalidVersion") =>
            {
                n += 1;
            }
            other => panic!("{key}={value:?}: not refused with a 400 naming it: {other:?}"),
        }
    }
    let st = base();
    let taint = |key: &str, value: &str, effect: &str| {
        string_map(&[("key", key), ("value", value), ("effect", effect)])
    };
    for taints in [
        vec![taint("bad key", "", "NoSchedule")],
        vec![taint("k", "not a value", "NoSchedule")],
        vec![taint("k", "a", "NoExecute"), taint("k", "b", "NoExecute")],
        (0..65)
            .map(|i| taint(&format!("k{i}"), "", "NoSchedule"))
            .collect(),
    ] {
        let mut ng = worker(
            &st.cluster.uuid,
            9,
            "tainted",
            1,
            "m1.small",
            "ubuntu-2204-kube",
            &with_labels(&st, &[]),
        );
        ng.node_taints = Some(taints);
        match driver.validate_nodegroup(&ctx, &st, &ng).await {
            Err(CallError::Client(e))
                if e.status == 400 && e.message.contains("has invalid node_taints") =>
            {
                n += 1;
            }
            other => panic!("taints not refused with a 400: {other:?}"),
        }
        let mut with = st.clone();
        with.nodegroups.push(ng);
        match driver.validate_create(&ctx, &with).await {
            Err(CallError::Client(e))
                if e.status == 400 && e.message.contains("has invalid node_taints") =>
            {
                n += 1;
            }
            other => panic!("taints at create not refused with a 400: {other:?}"),
        }
    }
    n
}

/// Saves an update into the rows, as the conductor does.
fn save(st: &mut ClusterState, upd: &Update) {
    if let Some(c) = &upd.cluster {
        st.cluster = c.clone();
    }
    for ng in &upd.nodegroups {
        match st.nodegroups.iter_mut().find(|x| x.uuid == ng.uuid) {
            Some(x) => *x = ng.clone(),
            None => st.nodegroups.push(ng.clone()),
        }
    }
    st.nodegroups
        .retain(|x| !upd.deleted_nodegroups.contains(&x.uuid));
}

/// The uuid of the nodegroup `name`.
fn nodegroup_uuid(st: &ClusterState, name: &str) -> String {
    st.nodegroups
        .iter()
        .find(|ng| ng.name == name)
        .map(|ng| ng.uuid.clone())
        .unwrap_or_else(|| panic!("no nodegroup {name}"))
}

/// A Machine of a nodegroup, as Cluster API would have made it.
async fn machine(client: &Client, stack: &str, nodegroup: &str) -> String {
    let name = format!("{stack}-{nodegroup}-abcde-x1y2z");
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "cluster.x-k8s.io",
        "v1beta2",
        "Machine",
    ));
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NS, &resource);
    let obj = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Machine",
        "metadata": {
            "name": name,
            "labels": {
                "cluster.x-k8s.io/cluster-name": stack,
                "topology.cluster.x-k8s.io/deployment-name": nodegroup,
            },
        },
        "spec": {
            "clusterName": stack,
            "bootstrap": { "dataSecretName": format!("{name}-bootstrap") },
            "infrastructureRef": {
                "apiGroup": "infrastructure.cluster.x-k8s.io",
                "kind": "OpenStackMachine",
                "name": name,
            },
        },
    });
    api.patch(
        &name,
        &PatchParams::apply("matrix-test").force(),
        &Patch::Apply(&obj),
    )
    .await
    .unwrap_or_else(|e| panic!("create the Machine {name}: {e}"));
    name
}

/// Runs one variation: validate, create, then its steps.
async fn run(driver: &Driver, client: &Client, v: Variation) {
    let ctx = user();
    let mut st = v.state;
    let name = v.name;
    driver
        .validate_create(&ctx, &st)
        .await
        .unwrap_or_else(|e| panic!("{name}: validate_create: {e}"));
    let upd = driver
        .create_cluster(&ctx, &st, 60)
        .await
        .unwrap_or_else(|e| panic!("{name}: create_cluster: {e}"));
    save(&mut st, &upd);
    let stack = st.cluster.stack_id.clone().expect("a stack_id");
    for step in v.steps {
        let upd = match step {
            Step::Resize {
                nodegroup,
                count,
                remove,
            } => {
                let uuid = nodegroup_uuid(&st, nodegroup);
                let mut nodes_to_remove = Vec::new();
                if remove {
                    nodes_to_remove.push(machine(client, &stack, nodegroup).await);
                }
                if let Some(ng) = st.nodegroups.iter_mut().find(|ng| ng.uuid == uuid) {
                    ng.node_count = Some(count);
                }
                let req = Resize {
                    nodegroup_uuid: uuid,
                    node_count: count,
                    nodes_to_remove,
                };
                driver.resize_cluster(&ctx, &st, &req).await
            }
            Step::Upgrade {
                kube_tag,
                image,
                nodegroup,
                max_batch_size,
            } => {
                let mut template = st.template.clone();
                template.uuid = format!("1{}", &template.uuid[1..]);
                template.image_id = Some(image.into());
                let mut labels = template.labels.clone().unwrap_or_default();
                labels.insert("kube_tag".into(), kube_tag.into());
                template.labels = Some(labels);
                driver
                    .validate_upgrade(&ctx, &st, &template)
                    .await
                    .unwrap_or_else(|e| panic!("{name}: validate_upgrade: {e}"));
                let req = Upgrade {
                    template,
                    max_batch_size,
                    nodegroup_uuid: nodegroup.map(|n| nodegroup_uuid(&st, n)),
                };
                driver.upgrade_cluster(&ctx, &st, &req).await
            }
            Step::CreateNodegroup(ng) => {
                driver
                    .validate_nodegroup(&ctx, &st, &ng)
                    .await
                    .unwrap_or_else(|e| panic!("{name}: validate_nodegroup {}: {e}", ng.name));
                driver.create_nodegroup(&ctx, &st, &ng).await
            }
            Step::UpdateNodegroup {
                nodegroup,
                min,
                max,
                taint: (key, value, effect),
            } => {
                let uuid = nodegroup_uuid(&st, nodegroup);
                let mut ng = st.nodegroup(&uuid).cloned().expect("nodegroup");
                ng.min_node_count = Some(min);
                ng.max_node_count = Some(max);
                ng.node_taints = Some(vec![string_map(&[
                    ("key", key),
                    ("value", value),
                    ("effect", effect),
                ])]);
                driver.update_nodegroup(&ctx, &st, &ng).await
            }
            Step::RotateCredential => driver.rotate_credential(&ctx, &st).await,
        }
        .unwrap_or_else(|e| panic!("{name}: a step after the create: {e}"));
        save(&mut st, &upd);
    }
}

/// `obj` as read back, ready to be applied again: without what the server
/// manages itself.
fn as_stored(mut obj: Value) -> Value {
    if let Some(m) = obj["metadata"].as_object_mut() {
        for field in [
            "managedFields",
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
        ] {
            m.remove(field);
        }
    }
    if let Some(o) = obj.as_object_mut() {
        o.remove("status");
    }
    obj
}

/// Reads back every object written and applies it again with
/// `?dryRun=All`, as the field manager that wrote it; the refusals.
async fn dry_run_all(kube: &ServerApply) -> (usize, Vec<String>) {
    let written = lock(&kube.written).clone();
    let mut refused = Vec::new();
    for (r, manager) in &written {
        let api = kube
            .api(&r.api_version, &r.kind, r.namespace.as_deref())
            .await
            .expect("discover")
            .expect("a served kind");
        let stored = api
            .get(&r.name)
            .await
            .unwrap_or_else(|e| panic!("read back {} {}: {e}", r.kind, r.name));
        let mut body = as_stored(serde_json::to_value(&stored).expect("encode"));
        body["apiVersion"] = json!(r.api_version);
        body["kind"] = json!(r.kind);
        let params = PatchParams::apply(manager).force().dry_run();
        if let Err(e) = api.patch(&r.name, &params, &Patch::Apply(&body)).await {
            refused.push(format!("dry run {} {}: {e}", r.kind, r.name));
        }
    }
    (written.len(), refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capi_objects_of_every_variation_pass_a_server_side_dry_run() {
    let Some(env) = capi_api_server().await else {
        return;
    };
    let started = Instant::now();
    env.create_namespace(NS).await;
    env.create_namespace("kube-system").await;
    let kube = Arc::new(ServerApply::new(env.client.clone()));
    let files = tempfile::tempdir().expect("files dir");
    std::fs::create_dir_all(files.path().join("cilium")).expect("cilium dir");
    std::fs::write(files.path().join("cilium/v1.15.3.yaml"), CILIUM_MANIFEST)
        .expect("cilium manifest");
    let all = variations();
    let cas = cas();
    let secrets = || MemorySecrets {
        cas: all
            .iter()
            .map(|v| (v.state.cluster.uuid.clone(), cas.clone()))
            .collect(),
    };
    let full = start_host(
        kube.clone(),
        cloud(false),
        secrets(),
        files.path(),
        &[
            (
                "registry_mirrors",
                "docker.io=https://mirror.example.com:5000",
            ),
            ("insecure_registries", "registry.internal:5000"),
            (
                "autoscaler_image_repository",
                "registry.example.com/autoscaling",
            ),
        ],
    )
    .await;
    let bare = start_host(
        kube.clone(),
        cloud(true),
        secrets(),
        files.path(),
        &[
            ("default_boot_volume_size", "25"),
            ("default_boot_volume_type", "standard"),
            ("registry_mirrors", "docker.io=https://mirror.example.com:5000"),
            (
                "keystone_auth_default_policy",
                r#"[{"resource": {"verbs": ["get", "list"], "resources": ["*"], "version": "*", "namespace": "*"},
                     "match": [{"type": "role", "values": ["reader"]}, {"type": "project", "values": ["$PROJECT_ID"]}]}]"#,
            ),
        ],
    )
    .await;
    let lookup = |host: &DriverHost| {
        host.registry()
            .lookup(ENTRY_POINT)
            .cloned()
            .unwrap_or_else(|e| panic!("{ENTRY_POINT}: {e}"))
    };
    let (full, bare) = (lookup(&full), lookup(&bare));
    let count = all.len();
    for v in all {
        let driver = if v.bare { &bare } else { &full };
        run(driver, &env.client, v).await;
    }
    let applies = kube.applies.load(Ordering::Relaxed);
    let refused_inputs = refused_inputs(&full).await;
    assert_eq!(
        kube.applies.load(Ordering::Relaxed),
        applies,
        "an input refused at validation wrote something"
    );
    let refusals = lock(&kube.refusals).clone();
    assert!(refusals.is_empty(), "applies refused: {refusals:#?}");
    let (objects, refused) = dry_run_all(&kube).await;
    assert!(refused.is_empty(), "dry runs refused: {refused:#?}");
    let mut kinds = BTreeMap::<String, usize>::new();
    for r in lock(&kube.written).keys() {
        *kinds.entry(r.kind.clone()).or_default() += 1;
    }
    // Every kind the driver writes was written (the Machine by the resize
    // that names one).
    for kind in [
        "ClusterClass",
        "KubeadmControlPlaneTemplate",
        "KubeadmConfigTemplate",
        "OpenStackClusterTemplate",
        "OpenStackMachineTemplate",
        "Cluster",
        "Machine",
        "Secret",
        "ClusterResourceSet",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Deployment",
    ] {
        assert!(kinds.contains_key(kind), "no {kind} written: {kinds:?}");
    }
    println!(
        "{count} variations, {applies} applies, {objects} objects applied and accepted by a dry run \
         ({kinds:?}); {refused_inputs} inputs the CRDs would refuse answered 400 before any write; \
         in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
