//! Manila CSI (driver-capi.md § 3.5): the objects that let a workload
//! cluster claim NFS shares of the cloud's Manila, written here field by
//! field, for the reconciled `-cloud-provider` add-on Secret of
//! [`crate::addons`].
//!
//! - cloud-provider-openstack's Manila CSI plugin, as a controller
//!   Deployment (with the CSI provisioner and resizer) and a node
//!   DaemonSet (with the node driver registrar), serving NFS shares only
//!   and forwarding the node's mount calls to
//! - the CSI NFS node plugin, a DaemonSet on every node, which does the
//!   mounts; it is not registered with the kubelet itself;
//! - the controller's RBAC, the `CSIDriver` of the Manila plugin;
//! - the Secret `kube-system/csi-manila-secrets`, the cluster's
//!   application credential in the plugin's own key names, which every
//!   StorageClass names for each of the plugin's calls;
//! - one StorageClass `share-<type>` per usable share type.
//!
//! The images are pinned in [`IMAGES`]; the add-ons' label rules retag
//! and mirror them like Cinder CSI's (`manila_csi_plugin_tag`, else the
//! cloud provider's tag; the `csi_*_tag` sidecar labels;
//! `container_infra_prefix`).

use std::collections::BTreeMap;

use openkeel_magnum_driver::{DriverError, Labels};
use serde_json::{Value, json};

use crate::images::invalid_label;
use crate::labels::{MANILA_CSI_ENABLED, MANILA_CSI_SHARE_NETWORK_ID};
use crate::manifests::Object;

/// A Manila share type, as the cluster's project sees it: the SDK's
/// record (`share-types` of contract 1.1).
pub use openkeel_magnum_driver::openstack::ShareType;

/// The key of the Manila CSI plugin's objects in the `-cloud-provider`
/// Secret.
pub const KEY_MANILA_CSI: &str = "manila-csi.yaml";
/// The key of the plugin's credential Secret.
pub const KEY_MANILA_CSI_SECRET: &str = "manila-csi-secret.yaml";
/// The key of the CSI NFS node plugin.
pub const KEY_CSI_NFS: &str = "csi-nfs.yaml";
/// The prefix of the key of a share type's StorageClass:
/// `storageclass-share-<type>.yaml`.
pub const KEY_SHARE_CLASS_PREFIX: &str = "storageclass-share-";

/// The name of the Manila CSI driver, its provisioner.
pub const MANILA_PROVISIONER: &str = "manila.csi.openstack.org";
/// The workload cluster's Secret with the plugin's credential.
pub const MANILA_SECRET: &str = "csi-manila-secrets";
/// The region the plugin is given when the host names none: the plugin
/// requires one, and this is Keystone's default.
pub const FALLBACK_REGION: &str = "RegionOne";

/// The images, as written into the objects before the label rules: the
/// Manila plugin at the release of the embedded cloud-provider-openstack
/// manifests, the sidecars at the tags of its Cinder CSI manifests, and
/// the NFS plugin at a release of kubernetes-csi's csi-driver-nfs.
pub const IMAGES: Images = Images {
    manila: "registry.k8s.io/provider-os/manila-csi-plugin:v1.36.0",
    nfs: "registry.k8s.io/sig-storage/nfsplugin:v4.11.0",
    provisioner: "registry.k8s.io/sig-storage/csi-provisioner:v5.3.0",
    resizer: "registry.k8s.io/sig-storage/csi-resizer:v1.14.0",
    registrar: "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.15.0",
};

/// The images of Manila CSI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Images {
    pub manila: &'static str,
    pub nfs: &'static str,
    pub provisioner: &'static str,
    pub resizer: &'static str,
    pub registrar: &'static str,
}

/// The one share protocol served.
const PROTOCOL: &str = "NFS";
/// Where the kubelet keeps the plugins' sockets.
const KUBELET_PLUGINS: &str = "/var/lib/kubelet/plugins";
/// The NFS plugin's socket directory on the node, where the Manila plugin
/// forwards to.
const NFS_PLUGIN_DIR: &str = "/var/lib/kubelet/plugins/csi-nfsplugin";
/// The controller's socket directory in its pod.
const CONTROLLER_SOCKET_DIR: &str = "/var/lib/csi/sockets/pluginproxy";
/// Where the plugins mount the workload `cloud-config` Secret (for the
/// cloud's CA bundle, `ca.crt`), as Cinder CSI does.
const CLOUD_CONFIG_DIR: &str = "/etc/config";
/// The controller's ServiceAccount and the name of its RBAC.
const CONTROLLER: &str = "manila-csi-controller";
/// The node plugin's ServiceAccount and DaemonSet.
const NODE: &str = "manila-csi-node";
/// The NFS node plugin's DaemonSet.
const NFS_NODE: &str = "csi-nfs-node";

/// Whether Manila CSI may be installed (label `manila_csi_enabled`,
/// default true): the caller looks up the share types only then.
pub fn manila_csi_enabled(labels: &Labels) -> Result<bool, DriverError> {
    labels.bool(MANILA_CSI_ENABLED, true)
}

/// The label `manila_csi_share_network_id`: None when absent or empty,
/// else a Manila ID (a UUID), else 400.
pub fn share_network_id(labels: &Labels) -> Result<Option<&str>, DriverError> {
    match labels.str_or(MANILA_CSI_SHARE_NETWORK_ID, "") {
        "" => Ok(None),
        id if is_uuid(id) => Ok(Some(id)),
        id => Err(invalid_label(
            MANILA_CSI_SHARE_NETWORK_ID,
            id,
            "a Manila share network ID",
        )),
    }
}

/// Checks the Manila labels (the plugin's tag is checked with the other
/// image labels).
pub fn validate_labels(labels: &Labels) -> Result<(), DriverError> {
    manila_csi_enabled(labels)?;
    share_network_id(labels)?;
    Ok(())
}

/// Whether `s` is a UUID, with or without its dashes.
fn is_uuid(s: &str) -> bool {
    let hex: Vec<u8> = s.bytes().filter(|b| *b != b'-').collect();
    let dashed = s.len() == 36
        && s.bytes()
            .enumerate()
            .all(|(i, b)| (b == b'-') == matches!(i, 8 | 13 | 18 | 23));
    (dashed || s.len() == 32) && hex.len() == 32 && hex.iter().all(u8::is_ascii_hexdigit)
}

/// A `json!` object as an [`Object`].
fn object(v: Value) -> Object {
    match v {
        Value::Object(o) => o,
        _ => Object::new(),
    }
}

/// An environment variable from the pod's node name.
fn node_name_env(name: &str) -> Value {
    json!({ "name": name, "valueFrom": { "fieldRef": { "fieldPath": "spec.nodeName" } } })
}

/// A hostPath volume.
fn host_path(name: &str, path: &str, kind: &str) -> Value {
    json!({ "name": name, "hostPath": { "path": path, "type": kind } })
}

/// The Manila plugin's container: NFS shares only, its node calls
/// forwarded to the NFS plugin's socket, the shares it creates tagged with
/// the cluster's UUID. With a CA bundle, the workload `cloud-config`
/// Secret is mounted for its `ca.crt`.
fn manila_container(endpoint: &str, cluster_uuid: &str, ca: bool, mounts: Vec<Value>) -> Value {
    let mut mounts = mounts;
    if ca {
        mounts.push(
            json!({ "name": "cloud-config", "mountPath": CLOUD_CONFIG_DIR, "readOnly": true }),
        );
    }
    json!({
        "name": "manila-csi-plugin",
        "image": IMAGES.manila,
        "args": [
            "--v=2",
            "--nodeid=$(NODE_ID)",
            format!("--endpoint={endpoint}"),
            format!("--drivername={MANILA_PROVISIONER}"),
            format!("--share-protocol-selector={PROTOCOL}"),
            format!("--fwdendpoint=unix://{NFS_PLUGIN_DIR}/csi.sock"),
            format!("--cluster-id={cluster_uuid}"),
        ],
        "env": [node_name_env("NODE_ID")],
        "volumeMounts": mounts,
    })
}

/// The workload `cloud-config` Secret as a volume, when mounted.
fn cloud_config_volume(ca: bool) -> Option<Value> {
    ca.then(|| json!({ "name": "cloud-config", "secret": { "secretName": "cloud-config" } }))
}

/// The Manila plugin's objects: the controller's ServiceAccount, its
/// ClusterRole and Role (leader election) with their bindings, the node
/// plugin's ServiceAccount, the `CSIDriver`, the controller Deployment and
/// the node DaemonSet, all in `kube-system`. `ca`: the cluster has a CA
/// bundle in its workload `cloud-config` Secret.
pub(crate) fn csi_objects(cluster_uuid: &str, ca: bool) -> Vec<Object> {
    let ns = "kube-system";
    let rule = |groups: &[&str], resources: &[&str], verbs: &[&str]| json!({ "apiGroups": groups, "resources": resources, "verbs": verbs });
    let watch = ["get", "list", "watch"];
    let subject = json!([{ "kind": "ServiceAccount", "name": CONTROLLER, "namespace": ns }]);
    let mut out = vec![
        json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": { "name": CONTROLLER, "namespace": ns },
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": { "name": CONTROLLER },
            "rules": [
                rule(&[""], &["persistentvolumes"], &["get", "list", "watch", "create", "delete", "patch", "update"]),
                rule(&[""], &["persistentvolumeclaims"], &["get", "list", "watch", "update"]),
                rule(&[""], &["persistentvolumeclaims/status"], &["patch", "update"]),
                rule(&[""], &["events"], &["list", "watch", "create", "update", "patch"]),
                rule(&[""], &["secrets"], &["get", "list"]),
                rule(&[""], &["nodes", "pods"], &watch),
                rule(&["storage.k8s.io"], &["storageclasses", "csinodes", "volumeattachments"], &watch),
                rule(&["snapshot.storage.k8s.io"], &["volumesnapshots", "volumesnapshotcontents"], &["get", "list"]),
            ],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": { "name": CONTROLLER },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": CONTROLLER },
            "subjects": subject,
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": { "name": CONTROLLER, "namespace": ns },
            "rules": [rule(
                &["coordination.k8s.io"],
                &["leases"],
                &["get", "list", "watch", "create", "update", "patch", "delete"],
            )],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": { "name": CONTROLLER, "namespace": ns },
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": CONTROLLER },
            "subjects": subject,
        }),
        json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": { "name": NODE, "namespace": ns },
        }),
        json!({
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": { "name": MANILA_PROVISIONER },
            "spec": {
                "attachRequired": false,
                "podInfoOnMount": false,
                "volumeLifecycleModes": ["Persistent"],
            },
        }),
    ];

    let controller_labels = json!({ "app": CONTROLLER });
    let socket = format!("{CONTROLLER_SOCKET_DIR}/csi.sock");
    let socket_mount = json!({ "name": "socket-dir", "mountPath": CONTROLLER_SOCKET_DIR });
    let sidecar = |name: &str, image: &str, extra: &[&str]| {
        let mut args = vec!["--v=2".to_string(), "--csi-address=$(ADDRESS)".to_string()];
        args.extend(extra.iter().map(|a| a.to_string()));
        args.push("--leader-election=true".into());
        json!({
            "name": name,
            "image": image,
            "args": args,
            "env": [{ "name": "ADDRESS", "value": socket }],
            "volumeMounts": [socket_mount],
        })
    };
    let mut volumes = vec![
        json!({ "name": "socket-dir", "emptyDir": {} }),
        host_path("nfs-plugin-dir", NFS_PLUGIN_DIR, "DirectoryOrCreate"),
    ];
    volumes.extend(cloud_config_volume(ca));
    let nfs_mount = json!({ "name": "nfs-plugin-dir", "mountPath": NFS_PLUGIN_DIR });
    out.push(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": CONTROLLER, "namespace": ns, "labels": controller_labels },
        "spec": {
            "replicas": 1,
            "selector": { "matchLabels": controller_labels },
            "template": {
                "metadata": { "labels": controller_labels },
                "spec": {
                    "serviceAccountName": CONTROLLER,
                    "containers": [
                        sidecar("csi-provisioner", IMAGES.provisioner, &["--timeout=3m", "--extra-create-metadata"]),
                        sidecar("csi-resizer", IMAGES.resizer, &["--timeout=3m", "--handle-volume-inuse-error=false"]),
                        manila_container(
                            &format!("unix://{socket}"),
                            cluster_uuid,
                            ca,
                            vec![socket_mount.clone(), nfs_mount.clone()],
                        ),
                    ],
                    "volumes": volumes,
                },
            },
        },
    }));

    let node_labels = json!({ "app": NODE });
    let plugin_dir = format!("{KUBELET_PLUGINS}/{MANILA_PROVISIONER}");
    let mut volumes = vec![
        host_path(
            "registration-dir",
            "/var/lib/kubelet/plugins_registry",
            "Directory",
        ),
        host_path("plugin-dir", &plugin_dir, "DirectoryOrCreate"),
        host_path("nfs-plugin-dir", NFS_PLUGIN_DIR, "DirectoryOrCreate"),
    ];
    volumes.extend(cloud_config_volume(ca));
    let plugin_mount = json!({ "name": "plugin-dir", "mountPath": plugin_dir });
    out.push(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "name": NODE, "namespace": ns, "labels": node_labels },
        "spec": {
            "selector": { "matchLabels": node_labels },
            "template": {
                "metadata": { "labels": node_labels },
                "spec": {
                    "serviceAccountName": NODE,
                    "hostNetwork": true,
                    "dnsPolicy": "ClusterFirstWithHostNet",
                    "tolerations": [{ "operator": "Exists" }],
                    "containers": [
                        {
                            "name": "csi-node-driver-registrar",
                            "image": IMAGES.registrar,
                            "args": [
                                "--v=2",
                                format!("--csi-address={plugin_dir}/csi.sock"),
                                format!("--kubelet-registration-path={plugin_dir}/csi.sock"),
                            ],
                            "volumeMounts": [
                                plugin_mount,
                                { "name": "registration-dir", "mountPath": "/registration" },
                            ],
                        },
                        manila_container(
                            &format!("unix://{plugin_dir}/csi.sock"),
                            cluster_uuid,
                            ca,
                            vec![plugin_mount.clone(), nfs_mount],
                        ),
                    ],
                    "volumes": volumes,
                },
            },
        },
    }));
    out.into_iter().map(object).collect()
}

/// The CSI NFS node plugin, which mounts the shares the Manila plugin
/// forwards: a privileged DaemonSet on every node, in the host's network
/// (the mounts are the node's), its socket in the directory the Manila
/// plugin forwards to, the pods' directory shared both ways.
pub(crate) fn nfs_objects() -> Vec<Object> {
    let labels = json!({ "app": NFS_NODE });
    vec![object(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "name": NFS_NODE, "namespace": "kube-system", "labels": labels },
        "spec": {
            "selector": { "matchLabels": labels },
            "template": {
                "metadata": { "labels": labels },
                "spec": {
                    "hostNetwork": true,
                    "dnsPolicy": "ClusterFirstWithHostNet",
                    "tolerations": [{ "operator": "Exists" }],
                    "containers": [{
                        "name": "nfs",
                        "image": IMAGES.nfs,
                        "args": [
                            "--v=2",
                            "--nodeid=$(NODE_ID)",
                            "--endpoint=unix:///csi/csi.sock",
                        ],
                        "env": [node_name_env("NODE_ID")],
                        "securityContext": { "privileged": true },
                        "volumeMounts": [
                            { "name": "socket-dir", "mountPath": "/csi" },
                            {
                                "name": "pods-mount-dir",
                                "mountPath": "/var/lib/kubelet/pods",
                                "mountPropagation": "Bidirectional",
                            },
                        ],
                    }],
                    "volumes": [
                        host_path("socket-dir", NFS_PLUGIN_DIR, "DirectoryOrCreate"),
                        host_path("pods-mount-dir", "/var/lib/kubelet/pods", "Directory"),
                    ],
                },
            },
        },
    }))]
}

/// The Secret `kube-system/csi-manila-secrets`: Keystone, the region
/// ([`FALLBACK_REGION`] when the cloud names none), the application
/// credential and, with a CA bundle, its path in the plugin's pods and
/// whether to skip verification (`os-TLSInsecure`, which the plugin
/// accepts only beside a CA).
pub(crate) fn secret_object(
    keystone_url: &str,
    region: Option<&str>,
    credential_id: &str,
    credential_secret: &str,
    ca: bool,
    verify_ca: bool,
) -> Object {
    let mut data = json!({
        "os-authURL": keystone_url,
        "os-region": region.unwrap_or(FALLBACK_REGION),
        "os-applicationCredentialID": credential_id,
        "os-applicationCredentialSecret": credential_secret,
    });
    if ca {
        data["os-certAuthorityPath"] = json!(format!("{CLOUD_CONFIG_DIR}/ca.crt"));
        data["os-TLSInsecure"] = json!((!verify_ca).to_string());
    }
    object(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": { "name": MANILA_SECRET, "namespace": "kube-system" },
        "type": "Opaque",
        "stringData": data,
    }))
}

/// The StorageClasses of Manila's share types, by the type's name as a
/// DNS label (as a volume type's, cut to 50 characters): `share-<type>`, provisioned by Manila CSI with
/// the type's name and the credential Secret for each of its calls,
/// deleted with their claims, bound at once, expandable.
///
/// A type that handles share servers needs a share network: it gets a
/// class only with the label `manila_csi_share_network_id`, whose ID its
/// class passes (the other types get none: Manila refuses a share network
/// for them). Of two types with the same class name the first wins,
/// unless the second is the default. With `mark_default` (no Cinder CSI,
/// whose default type's class is the cluster's default otherwise), the
/// default share type's class is the cluster's default StorageClass.
pub(crate) fn storage_classes(
    types: &[ShareType],
    share_network: Option<&str>,
    mark_default: bool,
) -> BTreeMap<String, Object> {
    let mut chosen: BTreeMap<String, &ShareType> = BTreeMap::new();
    for st in types {
        let dhss = st.driver_handles_share_servers == Some(true);
        if dhss && share_network.is_none() {
            continue;
        }
        let name = crate::addons::dns_label(&st.name);
        if name.is_empty() {
            continue;
        }
        let taken = chosen
            .get(&name)
            .is_some_and(|first| first.is_default || !st.is_default);
        if !taken {
            chosen.insert(name, st);
        }
    }
    let mut marked = !mark_default;
    chosen
        .into_iter()
        .map(|(name, st)| {
            let mut metadata = json!({ "name": format!("share-{name}") });
            if st.is_default && !marked {
                marked = true;
                metadata["annotations"] =
                    json!({ crate::addons::ANNOTATION_DEFAULT_STORAGE_CLASS: "true" });
            }
            let mut parameters = json!({ "type": st.name });
            for call in [
                "provisioner",
                "controller-expand",
                "node-stage",
                "node-publish",
            ] {
                parameters[format!("csi.storage.k8s.io/{call}-secret-name")] = json!(MANILA_SECRET);
                parameters[format!("csi.storage.k8s.io/{call}-secret-namespace")] =
                    json!("kube-system");
            }
            if st.driver_handles_share_servers == Some(true)
                && let Some(id) = share_network
            {
                parameters["shareNetworkID"] = json!(id);
            }
            let class = object(json!({
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": metadata,
                "provisioner": MANILA_PROVISIONER,
                "parameters": parameters,
                "reclaimPolicy": "Delete",
                "volumeBindingMode": "Immediate",
                "allowVolumeExpansion": true,
            }));
            (name, class)
        })
        .collect()
}
