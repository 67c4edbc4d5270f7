//! The add-ons of a cluster (driver-capi.md § 3.2, § 3.5): the two
//! ClusterResourceSets that install them in the workload cluster, and the
//! two Secrets they apply.
//!
//! - `<uuid>` (applied once): the CNI, the workload cluster's
//!   `kube-system/cloud-config` Secret and k8s-keystone-auth;
//! - `<stack_id>-cloud-provider` (reconciled, rewritten on upgrade): the
//!   OpenStack cloud controller manager, the same `cloud-config`, Cinder
//!   CSI with one StorageClass per volume type and Manila CSI with one
//!   StorageClass per share type ([`crate::manila`]).
//!
//! The manifests are upstream files embedded in the driver (`addons/`,
//! see its NOTICE), or the operator's for the CNI, changed structurally:
//! image tags and mirror, the pod CIDR, the cluster's name. Every label
//! that reaches a manifest is checked first; a bad one is Magnum's 400
//! ([`validate_labels`] checks them all at once, for `validate-create`).
//!
//! Everything here is pure: the caller reads the operator's manifest
//! ([`cni_manifest_file`] names it) and looks up Cinder's volume types and
//! Manila's share types.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use openkeel_magnum_driver::{DriverError, Labels};
use serde_json::{Value, json};

use crate::images::{self, TagFor, invalid_label, prefix_label, tag_label};
use crate::labels::{
    CALICO_IPV4POOL, CALICO_TAG, CILIUM_IPV4POOL, CILIUM_TAG, CINDER_CSI_ENABLED,
    CINDER_CSI_PLUGIN_TAG, CLOUD_PROVIDER_TAG, CSI_ATTACHER_TAG, CSI_LIVENESS_PROBE_TAG,
    CSI_NODE_DRIVER_REGISTRAR_TAG, CSI_PROVISIONER_TAG, CSI_RESIZER_TAG, CSI_SNAPSHOTTER_TAG,
    DEFAULT_CALICO_TAG, DEFAULT_CILIUM_TAG, DEFAULT_POD_CIDR, KEYSTONE_AUTH_ENABLED, KubeVersion,
    MANILA_CSI_PLUGIN_TAG, OCTAVIA_LB_ALGORITHM, OCTAVIA_LB_HEALTHCHECK, OCTAVIA_PROVIDER,
};
use crate::manifests::{self, Object, for_each_container, has_env, kind_name, set_env, text_of};
use crate::manila::{
    self, KEY_CSI_NFS, KEY_MANILA_CSI, KEY_MANILA_CSI_SECRET, KEY_SHARE_CLASS_PREFIX, ShareType,
    manila_csi_enabled,
};
use crate::names::{
    API_VERSION_ADDONS, LABEL_CLUSTER_UUID, SECRET_TYPE_ADDONS, SUFFIX_CLOUD_PROVIDER,
};
use crate::secrets::{AppCredential, CloudInfo};

/// The key of the calico manifest in the `<uuid>` Secret.
pub const KEY_CALICO: &str = "calico.yml";
/// The key of the cilium manifest in the `<uuid>` Secret.
pub const KEY_CILIUM: &str = "cilium.yaml";
/// The key of the workload `cloud-config` Secret, in both Secrets.
pub const KEY_CLOUD_CONFIG: &str = "cloud-config-secret.yaml";
/// The key of k8s-keystone-auth in the `<uuid>` Secret.
pub const KEY_KEYSTONE_AUTH: &str = "keystone-auth.yaml";
/// The key of the cloud controller manager in the `-cloud-provider`
/// Secret.
pub const KEY_CLOUD_CONTROLLER_MANAGER: &str = "cloud-controller-manager.yaml";
/// The key of Cinder CSI in the `-cloud-provider` Secret.
pub const KEY_CINDER_CSI: &str = "cinder-csi.yaml";
/// The prefix of the key of a volume type's StorageClass:
/// `storageclass-block-<type>.yaml`.
pub const KEY_STORAGE_CLASS_PREFIX: &str = "storageclass-block-";

/// The network drivers the driver installs.
pub const SUPPORTED_CNIS: [&str; 2] = ["calico", "cilium"];
/// The calico release of the embedded manifest. Another `calico_tag`
/// runs its own images with this manifest unless the operator places
/// `calico/<tag>.yaml` in `[capi]/addons_manifests_dir`.
pub const EMBEDDED_CALICO_TAG: &str = "v3.28.5";
/// The cloud-provider-openstack release of the embedded manifests.
pub const EMBEDDED_CLOUD_PROVIDER_TAG: &str = "v1.36.0";
/// The Octavia provider of the cloud controller manager's load balancers
/// without `octavia_provider`.
pub const DEFAULT_OCTAVIA_PROVIDER: &str = "amphorav2";
/// The Cinder volume type that stands for "Cinder's default" and gets no
/// StorageClass of its own.
pub const CINDER_DEFAULT_TYPE_NAME: &str = "__DEFAULT__";
/// Kubernetes' annotation of the default StorageClass.
pub const ANNOTATION_DEFAULT_STORAGE_CLASS: &str = "storageclass.kubernetes.io/is-default-class";

/// The cloud provider images follow the Kubernetes minor version,
/// `v1.<minor>.0`, within these bounds.
const MIN_CLOUD_PROVIDER_MINOR: u64 = 22;
const MAX_CLOUD_PROVIDER_MINOR: u64 = 36;
/// The Octavia load-balancing algorithms the cloud controller manager
/// accepts as `lb-method`.
const LB_ALGORITHMS: [&str; 4] = [
    "ROUND_ROBIN",
    "LEAST_CONNECTIONS",
    "SOURCE_IP",
    "SOURCE_IP_PORT",
];
/// The one algorithm of the ovn Octavia provider.
const OVN_LB_ALGORITHM: &str = "SOURCE_IP_PORT";
/// The Secret of the workload cluster that the cloud controller manager,
/// Cinder CSI and k8s-keystone-auth read.
const WORKLOAD_CLOUD_CONFIG: &str = "cloud-config";
/// Where the workload pods mount that Secret's `ca.crt`.
const WORKLOAD_CA_FILE: &str = "/etc/config/ca.crt";
/// The ConfigMap of k8s-keystone-auth's policy.
const KEYSTONE_AUTH_POLICY_CONFIG_MAP: &str = "k8s-auth-policy";
/// What the configured keystone-auth policy says for the cluster's
/// project.
const PROJECT_ID_PLACEHOLDER: &str = "$PROJECT_ID";
/// The provisioner of the Cinder StorageClasses.
const CINDER_PROVISIONER: &str = "cinder.csi.openstack.org";
/// A StorageClass name is `block-<type>`, the type cut to this length.
const MAX_STORAGE_CLASS_TYPE_LEN: usize = 50;

/// The embedded calico manifest.
const CALICO_MANIFEST: &str = include_str!("../addons/calico/v3.28.5.yaml");
/// The cloud controller manager: its roles, their bindings (a `List`)
/// and its DaemonSet.
const CLOUD_CONTROLLER_MANAGER_MANIFESTS: [(&str, &str); 3] = [
    (
        "cloud-controller-manager-roles.yaml",
        include_str!("../addons/cloud-provider-openstack/cloud-controller-manager-roles.yaml"),
    ),
    (
        "cloud-controller-manager-role-bindings.yaml",
        include_str!(
            "../addons/cloud-provider-openstack/cloud-controller-manager-role-bindings.yaml"
        ),
    ),
    (
        "openstack-cloud-controller-manager-ds.yaml",
        include_str!(
            "../addons/cloud-provider-openstack/openstack-cloud-controller-manager-ds.yaml"
        ),
    ),
];
/// Cinder CSI: RBAC, the controller Deployment, the node DaemonSet and
/// the CSIDriver.
const CINDER_CSI_MANIFESTS: [(&str, &str); 5] = [
    (
        "cinder-csi-controllerplugin-rbac.yaml",
        include_str!("../addons/cloud-provider-openstack/cinder-csi-controllerplugin-rbac.yaml"),
    ),
    (
        "cinder-csi-controllerplugin.yaml",
        include_str!("../addons/cloud-provider-openstack/cinder-csi-controllerplugin.yaml"),
    ),
    (
        "cinder-csi-nodeplugin-rbac.yaml",
        include_str!("../addons/cloud-provider-openstack/cinder-csi-nodeplugin-rbac.yaml"),
    ),
    (
        "cinder-csi-nodeplugin.yaml",
        include_str!("../addons/cloud-provider-openstack/cinder-csi-nodeplugin.yaml"),
    ),
    (
        "csi-cinder-driver.yaml",
        include_str!("../addons/cloud-provider-openstack/csi-cinder-driver.yaml"),
    ),
];
/// The RBAC of k8s-keystone-auth (its DaemonSet and policy are built
/// here).
const KEYSTONE_AUTH_RBAC: (&str, &str) = (
    "keystone-rbac.yaml",
    include_str!("../addons/cloud-provider-openstack/keystone-rbac.yaml"),
);

/// The CSI sidecar images (their last path element) and the labels that
/// set their tags; without the label the embedded manifest's tag stays.
const CSI_SIDECARS: [(&str, &str); 6] = [
    ("csi-attacher", CSI_ATTACHER_TAG),
    ("livenessprobe", CSI_LIVENESS_PROBE_TAG),
    ("csi-node-driver-registrar", CSI_NODE_DRIVER_REGISTRAR_TAG),
    ("csi-provisioner", CSI_PROVISIONER_TAG),
    ("csi-resizer", CSI_RESIZER_TAG),
    ("csi-snapshotter", CSI_SNAPSHOTTER_TAG),
];

/// A Cinder volume type, as the cluster's project sees it: the SDK's
/// record (`volume-types` of the contract).
pub use openkeel_magnum_driver::openstack::VolumeType;

/// What the add-on Secrets of one cluster are built from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddonInput {
    /// The namespace of the Secrets and ClusterResourceSets.
    pub namespace: String,
    /// The cluster's `stack_id`.
    pub stack_id: String,
    /// The cluster's UUID: the cloud controller manager's cluster name
    /// and Cinder CSI's cluster ID.
    pub cluster_uuid: String,
    /// The cluster's project, which the keystone-auth policy names.
    pub project_id: String,
    /// The cluster's labels.
    pub labels: Labels,
    /// The cloud.
    pub cloud: CloudInfo,
    /// The cluster's application credential (from its cloud-config
    /// Secret), written into the workload cluster's `cloud.conf`.
    pub credential: AppCredential,
    /// `[kubernetes]/keystone_auth_default_policy`'s content: a JSON
    /// k8s-keystone-auth policy in which `$PROJECT_ID` stands for the
    /// cluster's project. None (or blank) for the built-in policy.
    pub keystone_auth_policy: Option<String>,
    /// Cinder's volume types; None when the cloud has no block storage
    /// service. Cinder CSI is installed when this is set and the label
    /// `cinder_csi_enabled` (default true) allows it.
    pub volume_types: Option<Vec<VolumeType>>,
    /// Manila's share types; None when the cloud has no shared-file-system
    /// service. Manila CSI is installed when this is set and the label
    /// `manila_csi_enabled` (default true) allows it.
    pub share_types: Option<Vec<ShareType>>,
}

/// A rendered CNI manifest and its key in the `<uuid>` Secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CniManifest {
    /// `calico.yml` or `cilium.yaml`.
    pub key: &'static str,
    /// The stream of objects.
    pub text: String,
}

/// The cluster's CNI and what its labels say of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cni<'a> {
    /// Calico at a release, with the pod CIDR `calico_ipv4pool`.
    Calico { tag: &'a str, pool: &'a str },
    /// Cilium at a release, with the pod CIDR `cilium_ipv4pool`.
    Cilium { tag: &'a str, pool: &'a str },
}

impl<'a> Cni<'a> {
    /// The CNI of the template's network driver, its tag and pool checked.
    fn parse(network_driver: &str, labels: &'a Labels) -> Result<Cni<'a>, DriverError> {
        let (tag_key, default_tag, pool_key) = match network_driver {
            "calico" => (CALICO_TAG, DEFAULT_CALICO_TAG, CALICO_IPV4POOL),
            "cilium" => (CILIUM_TAG, DEFAULT_CILIUM_TAG, CILIUM_IPV4POOL),
            _ => return Err(network_driver_not_supported(network_driver)),
        };
        // The tag names a file of the operator's directory: it is checked
        // even when empty (the Go driver refused an empty tag too).
        // Deviation: the Go driver's pattern also took `+`, which no image
        // tag holds, and it used the pools unchecked.
        let tag = labels.str_or(tag_key, default_tag);
        if !images::is_tag(tag) {
            return Err(invalid_label(tag_key, tag, "an image tag"));
        }
        let pool = labels.str_or(pool_key, DEFAULT_POD_CIDR);
        if !is_ipv4_cidr(pool) {
            return Err(invalid_label(
                pool_key,
                pool,
                "an IPv4 CIDR such as 10.100.0.0/16",
            ));
        }
        Ok(if network_driver == "calico" {
            Cni::Calico { tag, pool }
        } else {
            Cni::Cilium { tag, pool }
        })
    }

    /// The operator's manifest file, relative to the manifests directory.
    fn file(self) -> String {
        match self {
            Cni::Calico { tag, .. } => format!("calico/{tag}.yaml"),
            Cni::Cilium { tag, .. } => format!("cilium/{tag}.yaml"),
        }
    }
}

/// Magnum's 400 for a network driver the driver does not install.
fn network_driver_not_supported(driver: &str) -> DriverError {
    DriverError::invalid_parameter_value(format!(
        "Network driver type {driver} is not supported, expecting a {}/unspecified network driver.",
        SUPPORTED_CNIS.join("/")
    ))
}

/// Whether `s` is an IPv4 CIDR, `a.b.c.d/n`.
fn is_ipv4_cidr(s: &str) -> bool {
    let Some((address, bits)) = s.split_once('/') else {
        return false;
    };
    address.parse::<Ipv4Addr>().is_ok()
        && !bits.is_empty()
        && bits.len() <= 2
        && bits.bytes().all(|b| b.is_ascii_digit())
        && bits.parse::<u8>().is_ok_and(|n| n <= 32)
}

/// Checks every label the add-ons read, for the template's network
/// driver, without building anything: a bad one is the 400 the builders
/// would return later.
pub fn validate_labels(network_driver: &str, labels: &Labels) -> Result<(), DriverError> {
    Cni::parse(network_driver, labels)?;
    ProviderLabels::parse(labels)?;
    LoadBalancing::parse(labels)?;
    labels.bool(KEYSTONE_AUTH_ENABLED, true)?;
    cinder_csi_enabled(labels)?;
    manila::validate_labels(labels)?;
    Ok(())
}

/// Whether Cinder CSI may be installed (label `cinder_csi_enabled`,
/// default true): the caller looks up the volume types only then.
pub fn cinder_csi_enabled(labels: &Labels) -> Result<bool, DriverError> {
    labels.bool(CINDER_CSI_ENABLED, true)
}

/// The two ClusterResourceSets of a cluster (§ 3.2): `<uuid>`, applied
/// once (no strategy), and `<stack_id>-cloud-provider`, reconciled; each
/// applies the Secret of its name to the Cluster labelled with the
/// cluster's UUID. A set may exist before its Secret: Cluster API applies
/// it once the Secret appears (§ 8.1).
pub fn cluster_resource_sets(namespace: &str, stack_id: &str, cluster_uuid: &str) -> Vec<Value> {
    let set = |name: &str, strategy: Option<&str>| {
        let mut spec = json!({
            "clusterSelector": { "matchLabels": { LABEL_CLUSTER_UUID: cluster_uuid } },
            "resources": [{ "kind": "Secret", "name": name }],
        });
        if let Some(strategy) = strategy {
            spec["strategy"] = json!(strategy);
        }
        json!({
            "apiVersion": API_VERSION_ADDONS,
            "kind": "ClusterResourceSet",
            "metadata": { "name": name, "namespace": namespace },
            "spec": spec,
        })
    };
    vec![
        set(cluster_uuid, None),
        set(&cloud_provider_name(stack_id), Some("Reconcile")),
    ]
}

/// The name of the reconciled set and its Secret.
fn cloud_provider_name(stack_id: &str) -> String {
    format!("{stack_id}{SUFFIX_CLOUD_PROVIDER}")
}

/// The file of `[capi]/addons_manifests_dir` that holds the operator's
/// manifest of the cluster's CNI: `calico/<calico_tag>.yaml` (optional:
/// the embedded manifest serves without it) or `cilium/<cilium_tag>.yaml`
/// (required). The tag is checked to be an image tag first, so the path
/// never leaves its directory.
pub fn cni_manifest_file(network_driver: &str, labels: &Labels) -> Result<String, DriverError> {
    Ok(Cni::parse(network_driver, labels)?.file())
}

/// The CNI manifest of a cluster, from `operator_manifest` (the content of
/// [`cni_manifest_file`], None when the operator has none):
///
/// - calico: the operator's manifest, else the embedded v3.28.5 one with
///   its images at `calico_tag`; calico-node gets `CALICO_IPV4POOL_CIDR`
///   = `calico_ipv4pool`;
/// - cilium: the operator's manifest, which must exist (no cilium
///   manifest is embedded: 400 naming the file); the ConfigMap
///   `cilium-config` gets `cluster-pool-ipv4-cidr` = `cilium_ipv4pool`
///   when it has that key.
///
/// Images are mirrored to `container_infra_prefix` in both cases. An
/// operator manifest that is not a stream of Kubernetes objects fails the
/// operation.
pub fn cni_manifest(
    network_driver: &str,
    labels: &Labels,
    operator_manifest: Option<&str>,
) -> Result<CniManifest, DriverError> {
    let cni = Cni::parse(network_driver, labels)?;
    let prefix = prefix_label(labels)?;
    match cni {
        Cni::Calico { tag, pool } => {
            let mut objects = match operator_manifest {
                Some(text) => operator_objects(&cni.file(), text)?,
                None => embedded_objects(&[("calico", CALICO_MANIFEST)])?,
            };
            let retag = |path: &[&str]| {
                (path.len() >= 2 && path[path.len() - 2] == "calico").then(|| tag.to_string())
            };
            for o in &mut objects {
                let calico_node = kind_name(o) == "DaemonSet/calico-node";
                for_each_container(o, |c| {
                    rewrite_image(c, prefix, &retag);
                    if calico_node && text_of(c, "name") == "calico-node" {
                        set_env(c, "CALICO_IPV4POOL_CIDR", pool);
                    }
                });
            }
            Ok(CniManifest {
                key: KEY_CALICO,
                text: manifests::render(&objects),
            })
        }
        Cni::Cilium { tag, pool } => {
            let Some(text) = operator_manifest else {
                return Err(DriverError::invalid(format!(
                    "No cilium manifest for cilium_tag {tag}: the operator must place {} in [capi]/addons_manifests_dir.",
                    cni.file()
                )));
            };
            let mut objects = operator_objects(&cni.file(), text)?;
            for o in &mut objects {
                for_each_container(o, |c| rewrite_image(c, prefix, &|_: &[&str]| None));
                if kind_name(o) == "ConfigMap/cilium-config"
                    && let Some(Value::Object(data)) = o.get_mut("data")
                    && data.contains_key("cluster-pool-ipv4-cidr")
                {
                    data.insert("cluster-pool-ipv4-cidr".into(), json!(pool));
                }
            }
            Ok(CniManifest {
                key: KEY_CILIUM,
                text: manifests::render(&objects),
            })
        }
    }
}

/// The objects of an operator's manifest; a malformed one fails the
/// operation with the file's name.
fn operator_objects(file: &str, text: &str) -> Result<Vec<Object>, DriverError> {
    manifests::parse(text)
        .map_err(|e| DriverError::failed(format!("The add-on manifest {file} is not valid: {e}")))
}

/// The objects of embedded manifests, in order.
fn embedded_objects(files: &[(&str, &str)]) -> Result<Vec<Object>, DriverError> {
    let mut out = Vec::new();
    for (name, text) in files {
        let objects = manifests::parse(text).map_err(|e| {
            DriverError::failed(format!(
                "The embedded add-on manifest {name} is not valid: {e}"
            ))
        })?;
        out.extend(objects);
    }
    Ok(out)
}

/// Sets a container's image to its [`images::rewrite`].
fn rewrite_image(c: &mut Object, prefix: &str, tag_for: TagFor<'_>) {
    if let Some(Value::String(image)) = c.get_mut("image") {
        *image = images::rewrite(image, prefix, tag_for);
    }
}

/// The apply-once Secret `<uuid>`: the CNI (`cni`, see [`cni_manifest`]),
/// the workload cloud-config Secret and, unless `keystone_auth_enabled` is
/// false, k8s-keystone-auth.
pub fn cluster_addons_secret(input: &AddonInput, cni: &CniManifest) -> Result<Value, DriverError> {
    let mut data = BTreeMap::new();
    data.insert(cni.key.to_string(), cni.text.clone());
    data.insert(KEY_CLOUD_CONFIG.to_string(), cloud_config_manifest(input)?);
    if input.labels.bool(KEYSTONE_AUTH_ENABLED, true)? {
        data.insert(
            KEY_KEYSTONE_AUTH.to_string(),
            keystone_auth_manifest(input)?,
        );
    }
    Ok(addon_secret(&input.namespace, &input.cluster_uuid, &data))
}

/// The reconciled Secret `<stack_id>-cloud-provider`: the workload
/// cloud-config Secret, the OpenStack cloud controller manager and, when
/// Cinder CSI is installed, Cinder CSI and one StorageClass per volume
/// type, and, when Manila CSI is installed, Manila CSI, its credential
/// Secret, the CSI NFS node plugin and one StorageClass per share type.
/// Cinder's default type's class is the cluster's default StorageClass
/// (see `storage_classes`); without Cinder CSI, Manila's default type's.
pub fn cloud_provider_secret(input: &AddonInput) -> Result<Value, DriverError> {
    let mut data = BTreeMap::new();
    data.insert(KEY_CLOUD_CONFIG.to_string(), cloud_config_manifest(input)?);
    data.insert(
        KEY_CLOUD_CONTROLLER_MANAGER.to_string(),
        cloud_controller_manager_manifest(input)?,
    );
    if let Some(types) = &input.volume_types
        && cinder_csi_enabled(&input.labels)?
    {
        data.insert(KEY_CINDER_CSI.to_string(), cinder_csi_manifest(input)?);
        for (type_name, class) in storage_classes(types) {
            let key = format!("{KEY_STORAGE_CLASS_PREFIX}{type_name}.yaml");
            data.insert(key, manifests::render(&[class]));
        }
    }
    if let Some(types) = &input.share_types
        && manila_csi_enabled(&input.labels)?
    {
        let cinder = data.contains_key(KEY_CINDER_CSI);
        let share_network = manila::share_network_id(&input.labels)?;
        let ca = input.cloud.cluster_ca_bundle.is_some();
        let provider = ProviderLabels::parse(&input.labels)?;
        let mut csi = manila::csi_objects(&input.cluster_uuid, ca);
        provider.apply(&mut csi);
        data.insert(KEY_MANILA_CSI.to_string(), manifests::render(&csi));
        let mut nfs = manila::nfs_objects();
        provider.apply(&mut nfs);
        data.insert(KEY_CSI_NFS.to_string(), manifests::render(&nfs));
        let secret = manila::secret_object(
            &input.cloud.keystone_url,
            crate::secrets::region(&input.cloud),
            &input.credential.id,
            &input.credential.secret,
            ca,
            input.cloud.cluster_verify_ca,
        );
        data.insert(
            KEY_MANILA_CSI_SECRET.to_string(),
            manifests::render(&[secret]),
        );
        for (type_name, class) in manila::storage_classes(types, share_network, !cinder) {
            let key = format!("{KEY_SHARE_CLASS_PREFIX}{type_name}.yaml");
            data.insert(key, manifests::render(&[class]));
        }
    }
    Ok(addon_secret(
        &input.namespace,
        &cloud_provider_name(&input.stack_id),
        &data,
    ))
}

/// A Secret a ClusterResourceSet applies: `data` is the streams of objects
/// by key.
fn addon_secret(namespace: &str, name: &str, data: &BTreeMap<String, String>) -> Value {
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(k, v)| (k.clone(), json!(BASE64.encode(v))))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": { "name": name, "namespace": namespace },
        "type": SECRET_TYPE_ADDONS,
        "data": data,
    })
}

/// The load balancers of the cloud controller manager, from the labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LoadBalancing<'a> {
    provider: &'a str,
    method: &'a str,
    monitor: bool,
}

impl<'a> LoadBalancing<'a> {
    /// `octavia_provider` (default amphorav2, a provider name),
    /// `octavia_lb_algorithm` (ROUND_ROBIN by default, SOURCE_IP_PORT and
    /// only that with ovn) and `octavia_lb_healthcheck` (default true). An
    /// empty provider or algorithm is the default.
    // Deviation: the Go driver wrote any provider and any algorithm but
    // ovn's into cloud.conf; here they are checked.
    fn parse(labels: &'a Labels) -> Result<LoadBalancing<'a>, DriverError> {
        let provider = match labels.str_or(OCTAVIA_PROVIDER, "") {
            "" => DEFAULT_OCTAVIA_PROVIDER,
            p if p
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) =>
            {
                p
            }
            p => {
                return Err(invalid_label(
                    OCTAVIA_PROVIDER,
                    p,
                    "an Octavia provider name",
                ));
            }
        };
        let method = labels.str_or(OCTAVIA_LB_ALGORITHM, "");
        let method = if provider == "ovn" {
            match method {
                "" | OVN_LB_ALGORITHM => OVN_LB_ALGORITHM,
                other => {
                    return Err(DriverError::invalid(format!(
                        "Label {OCTAVIA_LB_ALGORITHM} {other:?} is not supported by the ovn Octavia provider, which only supports {OVN_LB_ALGORITHM}."
                    )));
                }
            }
        } else if method.is_empty() {
            LB_ALGORITHMS[0]
        } else {
            labels.one_of(OCTAVIA_LB_ALGORITHM, &LB_ALGORITHMS, LB_ALGORITHMS[0])?
        };
        Ok(LoadBalancing {
            provider,
            method,
            monitor: labels.bool(OCTAVIA_LB_HEALTHCHECK, true)?,
        })
    }
}

/// The `cloud.conf` of the workload cluster's `kube-system/cloud-config`
/// Secret (§ 6.3), read by the cloud controller manager and Cinder CSI:
/// Keystone, the region, the cluster's application credential, TLS
/// (`tls-insecure` unless `[drivers]/verify_ca`, the cluster CA bundle as
/// `ca-file`), and the load balancers' provider, method and monitor.
pub fn cloud_conf(input: &AddonInput) -> Result<String, DriverError> {
    let lb = LoadBalancing::parse(&input.labels)?;
    let cloud = &input.cloud;
    let mut lines = vec!["[Global]".to_string(), ini("auth-url", &cloud.keystone_url)];
    if let Some(region) = crate::secrets::region(cloud) {
        lines.push(ini("region", region));
    }
    lines.push(ini("application-credential-id", &input.credential.id));
    lines.push(ini(
        "application-credential-secret",
        &input.credential.secret,
    ));
    lines.push(ini("tls-insecure", &(!cloud.cluster_verify_ca).to_string()));
    if cloud.cluster_ca_bundle.is_some() {
        lines.push(ini("ca-file", WORKLOAD_CA_FILE));
    }
    lines.push(String::new());
    lines.push("[LoadBalancer]".to_string());
    lines.push(ini("lb-provider", lb.provider));
    lines.push(ini("lb-method", lb.method));
    lines.push(ini("create-monitor", &lb.monitor.to_string()));
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// A `key=value` line of `cloud.conf`. gcfg cuts a value at `;` or `#`
/// and drops its surrounding blanks, so such a value is double-quoted,
/// with `\`, `"` and newlines escaped.
fn ini(key: &str, value: &str) -> String {
    let plain = value == value.trim() && !value.contains([';', '#', '"', '\\', '\n']);
    if plain {
        return format!("{key}={value}");
    }
    let escaped = value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("{key}=\"{escaped}\"")
}

/// The workload cluster's Secret `kube-system/cloud-config`: `cloud.conf`
/// and, when the deployment has one, the cluster CA bundle as `ca.crt`.
fn cloud_config_manifest(input: &AddonInput) -> Result<String, DriverError> {
    let mut string_data = serde_json::Map::new();
    string_data.insert("cloud.conf".into(), json!(cloud_conf(input)?));
    if let Some(bundle) = &input.cloud.cluster_ca_bundle {
        string_data.insert("ca.crt".into(), json!(bundle));
    }
    let secret = object(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": { "name": WORKLOAD_CLOUD_CONFIG, "namespace": "kube-system" },
        "type": "Opaque",
        "stringData": string_data,
    }));
    Ok(manifests::render(&[secret]))
}

/// A `json!` object as an [`Object`].
fn object(v: Value) -> Object {
    match v {
        Value::Object(o) => o,
        _ => Object::new(),
    }
}

/// The image tag of the cloud controller manager (and, by default, of
/// Cinder CSI and k8s-keystone-auth): the label `cloud_provider_tag`,
/// else `v1.<minor>.0` of the cluster's Kubernetes minor kept within
/// v1.22.0 and v1.36.0 (v1.36.0 without a usable `kube_tag`).
pub fn cloud_provider_tag(labels: &Labels) -> Result<String, DriverError> {
    if let Some(tag) = tag_label(labels, CLOUD_PROVIDER_TAG)? {
        return Ok(tag.to_string());
    }
    let minor = KubeVersion::from_labels(labels)
        .ok()
        .map(|v| v.version())
        .filter(|v| v.major == 1)
        .map_or(MAX_CLOUD_PROVIDER_MINOR, |v| {
            v.minor
                .clamp(MIN_CLOUD_PROVIDER_MINOR, MAX_CLOUD_PROVIDER_MINOR)
        });
    Ok(format!("v1.{minor}.0"))
}

/// The image labels of the cloud provider's add-ons, read and checked
/// once.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ProviderLabels<'a> {
    /// The mirror, "" for none.
    prefix: &'a str,
    /// The cloud controller manager's tag.
    cloud_provider: String,
    /// The Cinder CSI plugin's tag.
    cinder_csi: String,
    /// The Manila CSI plugin's tag.
    manila_csi: String,
    /// The sidecar tags the labels set, by image name.
    sidecars: Vec<(&'static str, &'a str)>,
}

impl<'a> ProviderLabels<'a> {
    fn parse(labels: &'a Labels) -> Result<ProviderLabels<'a>, DriverError> {
        let cloud_provider = cloud_provider_tag(labels)?;
        // An empty `cinder_csi_plugin_tag` is unset: the plugin follows the
        // cloud controller manager (the Go driver kept the manifest's tag).
        let cinder_csi = tag_label(labels, CINDER_CSI_PLUGIN_TAG)?
            .map_or_else(|| cloud_provider.clone(), str::to_string);
        let manila_csi = tag_label(labels, MANILA_CSI_PLUGIN_TAG)?
            .map_or_else(|| cloud_provider.clone(), str::to_string);
        let mut sidecars = Vec::new();
        for (image, key) in CSI_SIDECARS {
            if let Some(tag) = tag_label(labels, key)? {
                sidecars.push((image, tag));
            }
        }
        Ok(ProviderLabels {
            prefix: prefix_label(labels)?,
            cloud_provider,
            cinder_csi,
            manila_csi,
            sidecars,
        })
    }

    /// Retags the cloud-provider-openstack images and the CSI sidecars of
    /// `objects` and mirrors every image.
    fn apply(&self, objects: &mut [Object]) {
        let tag_for = |path: &[&str]| -> Option<String> {
            let last = path.last().copied().unwrap_or_default();
            if last == "cinder-csi-plugin" {
                return Some(self.cinder_csi.clone());
            }
            if last == "manila-csi-plugin" {
                return Some(self.manila_csi.clone());
            }
            if path.len() >= 2 && path[path.len() - 2] == "provider-os" {
                return Some(self.cloud_provider.clone());
            }
            self.sidecars
                .iter()
                .find(|(image, _)| *image == last)
                .map(|(_, tag)| tag.to_string())
        };
        for o in objects {
            for_each_container(o, |c| rewrite_image(c, self.prefix, &tag_for));
        }
    }
}

/// The OpenStack cloud controller manager: its RBAC and its DaemonSet on
/// the control-plane nodes, named after the cluster UUID
/// (`--cluster-name`), so that its load balancers are described "…
/// from cluster <uuid>" (§ 8.8 finds them by that).
fn cloud_controller_manager_manifest(input: &AddonInput) -> Result<String, DriverError> {
    let mut objects = embedded_objects(&CLOUD_CONTROLLER_MANAGER_MANIFESTS)?;
    ProviderLabels::parse(&input.labels)?.apply(&mut objects);
    let uuid = &input.cluster_uuid;
    for o in &mut objects {
        for_each_container(o, |c| {
            if text_of(c, "name") != "openstack-cloud-controller-manager" {
                return;
            }
            set_env(c, "CLUSTER_NAME", uuid);
            if let Some(Value::Array(args)) = c.get_mut("args") {
                for arg in args.iter_mut() {
                    if arg
                        .as_str()
                        .is_some_and(|a| a.starts_with("--cluster-name="))
                    {
                        *arg = json!(format!("--cluster-name={uuid}"));
                    }
                }
            }
        });
    }
    Ok(manifests::render(&objects))
}

/// Cinder CSI: RBAC, the controller Deployment, the node DaemonSet and
/// the CSIDriver, with the cluster UUID as the plugin's cluster ID.
fn cinder_csi_manifest(input: &AddonInput) -> Result<String, DriverError> {
    let mut objects = embedded_objects(&CINDER_CSI_MANIFESTS)?;
    ProviderLabels::parse(&input.labels)?.apply(&mut objects);
    for o in &mut objects {
        for_each_container(o, |c| {
            if text_of(c, "name") == "cinder-csi-plugin" && has_env(c, "CLUSTER_NAME") {
                set_env(c, "CLUSTER_NAME", &input.cluster_uuid);
            }
        });
    }
    Ok(manifests::render(&objects))
}

/// The StorageClasses of Cinder's volume types, by the type's name as a
/// DNS label: `block-<type>` (lowercased, what a DNS label cannot hold
/// replaced by `-`, cut to 50 characters), provisioned by Cinder CSI with
/// the type's name, deleted with their claims, bound at once, expandable.
/// `__DEFAULT__` and a type with nothing left of its name get none; of
/// two types with the same class name the first wins, unless the second
/// is Cinder's default.
///
/// Cinder's default type's class is the cluster's default StorageClass
/// (annotation `storageclass.kubernetes.io/is-default-class: "true"`),
/// so that a claim without a class gets a Cinder volume, as with
/// magnum-cluster-api; the Go driver did the same. Only one class is
/// marked, should Cinder report several defaults.
fn storage_classes(types: &[VolumeType]) -> BTreeMap<String, Object> {
    let mut chosen: BTreeMap<String, &VolumeType> = BTreeMap::new();
    for vt in types {
        if vt.name == CINDER_DEFAULT_TYPE_NAME {
            continue;
        }
        let name = dns_label(&vt.name);
        if name.is_empty() {
            continue;
        }
        // Deviation: in the Go driver the last type of a name won.
        let taken = chosen
            .get(&name)
            .is_some_and(|first| first.is_default || !vt.is_default);
        if !taken {
            chosen.insert(name, vt);
        }
    }
    let mut marked = false;
    chosen
        .into_iter()
        .map(|(name, vt)| {
            let mut metadata = json!({ "name": format!("block-{name}") });
            if vt.is_default && !marked {
                marked = true;
                metadata["annotations"] = json!({ ANNOTATION_DEFAULT_STORAGE_CLASS: "true" });
            }
            let class = object(json!({
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": metadata,
                "provisioner": CINDER_PROVISIONER,
                "parameters": { "type": vt.name },
                "reclaimPolicy": "Delete",
                "volumeBindingMode": "Immediate",
                "allowVolumeExpansion": true,
            }));
            (name, class)
        })
        .collect()
}

/// `s` lowercased, each run of what a DNS label cannot hold replaced by
/// `-`, without leading or trailing `-`, cut to 50 characters; "" when
/// nothing is left.
pub(crate) fn dns_label(s: &str) -> String {
    let mut out = String::new();
    let mut pending_dash = false;
    for c in s.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
            if pending_dash {
                out.push('-');
                pending_dash = false;
            }
            out.push(c);
        } else {
            pending_dash = true;
        }
    }
    let trimmed = out.trim_matches('-');
    let cut = &trimmed[..trimmed.len().min(MAX_STORAGE_CLASS_TYPE_LEN)];
    cut.trim_end_matches('-').to_string()
}

/// The k8s-keystone-auth policy: the configured one with `$PROJECT_ID`
/// replaced by the cluster's project in every string, else the built-in
/// one, which lets the members of the cluster's project list pods,
/// services, deployments and claims of `default`. A configured policy
/// that is not JSON fails the operation.
// Deviation: the Go driver replaced `$PROJECT_ID` in the policy's text;
// here it is replaced inside the parsed JSON strings, so the project ID
// cannot change the policy's structure.
fn keystone_auth_policy(configured: Option<&str>, project_id: &str) -> Result<String, DriverError> {
    let policy = match configured.filter(|p| !p.trim().is_empty()) {
        None => json!([{
            "resource": {
                "verbs": ["list"],
                "resources": ["pods", "services", "deployments", "pvc"],
                "version": "*",
                "namespace": "default",
            },
            "match": [
                { "type": "role", "values": ["member"] },
                { "type": "project", "values": [project_id] },
            ],
        }]),
        Some(text) => {
            let mut policy: Value = serde_json::from_str(text).map_err(|e| {
                DriverError::failed(format!(
                    "[kubernetes]/keystone_auth_default_policy is not valid JSON: {e}"
                ))
            })?;
            substitute(&mut policy, project_id);
            policy
        }
    };
    Ok(policy.to_string())
}

/// Replaces the project placeholder in every string of `v`.
fn substitute(v: &mut Value, project_id: &str) {
    match v {
        Value::String(s) if s.contains(PROJECT_ID_PLACEHOLDER) => {
            *s = s.replace(PROJECT_ID_PLACEHOLDER, project_id);
        }
        Value::Array(items) => items.iter_mut().for_each(|i| substitute(i, project_id)),
        Value::Object(map) => map.values_mut().for_each(|i| substitute(i, project_id)),
        _ => {}
    }
}

/// k8s-keystone-auth: its RBAC, the policy ConfigMap, and a DaemonSet on
/// the control-plane nodes listening on the host's port 8443, where the
/// API server's webhook kubeconfig points (`https://127.0.0.1:8443/webhook`).
/// It serves with the node's API server certificate, and checks tokens at
/// Keystone's `/v3`, trusting the cluster CA bundle when there is one.
fn keystone_auth_manifest(input: &AddonInput) -> Result<String, DriverError> {
    let mut objects = embedded_objects(&[KEYSTONE_AUTH_RBAC])?;
    let policy = keystone_auth_policy(input.keystone_auth_policy.as_deref(), &input.project_id)?;
    let base = input.cloud.keystone_url.trim_end_matches('/');
    let keystone_url = format!("{}/v3", base.strip_suffix("/v3").unwrap_or(base));
    let mut args = vec![
        "./bin/k8s-keystone-auth",
        "--tls-cert-file",
        "/etc/kubernetes/pki/apiserver.crt",
        "--tls-private-key-file",
        "/etc/kubernetes/pki/apiserver.key",
        "--policy-configmap-name",
        KEYSTONE_AUTH_POLICY_CONFIG_MAP,
        "--keystone-url",
        &keystone_url,
    ];
    let mut mounts =
        vec![json!({ "name": "k8s-certs", "mountPath": "/etc/kubernetes/pki", "readOnly": true })];
    let mut volumes = vec![json!({
        "name": "k8s-certs",
        "hostPath": { "path": "/etc/kubernetes/pki", "type": "Directory" },
    })];
    if input.cloud.cluster_ca_bundle.is_some() {
        args.extend(["--keystone-ca-file", WORKLOAD_CA_FILE]);
        mounts
            .push(json!({ "name": "cloud-config", "mountPath": "/etc/config", "readOnly": true }));
        volumes.push(
            json!({ "name": "cloud-config", "secret": { "secretName": WORKLOAD_CLOUD_CONFIG } }),
        );
    }
    let app = json!({ "app": "k8s-keystone-auth" });
    objects.push(object(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": KEYSTONE_AUTH_POLICY_CONFIG_MAP, "namespace": "kube-system" },
        "data": { "policies": policy },
    })));
    objects.push(object(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "name": "k8s-keystone-auth", "namespace": "kube-system", "labels": app },
        "spec": {
            "selector": { "matchLabels": app },
            "template": {
                "metadata": { "labels": app },
                "spec": {
                    "serviceAccountName": "k8s-keystone",
                    "hostNetwork": true,
                    "dnsPolicy": "ClusterFirstWithHostNet",
                    "nodeSelector": { "node-role.kubernetes.io/control-plane": "" },
                    "tolerations": [
                        { "key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule" },
                        { "key": "node-role.kubernetes.io/master", "effect": "NoSchedule" },
                        {
                            "key": "node.cloudprovider.kubernetes.io/uninitialized",
                            "value": "true",
                            "effect": "NoSchedule",
                        },
                    ],
                    "containers": [{
                        "name": "k8s-keystone-auth",
                        "image": format!(
                            "registry.k8s.io/provider-os/k8s-keystone-auth:{EMBEDDED_CLOUD_PROVIDER_TAG}"
                        ),
                        "args": args,
                        "volumeMounts": mounts,
                        "ports": [{ "containerPort": 8443, "hostPort": 8443 }],
                    }],
                    "volumes": volumes,
                },
            },
        },
    })));
    ProviderLabels::parse(&input.labels)?.apply(&mut objects);
    Ok(manifests::render(&objects))
}

#[cfg(test)]
#[path = "addons_tests.rs"]
mod tests;
