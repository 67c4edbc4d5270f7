//! The names the driver writes and looks up: its namespace, the class
//! name of a class version, Cluster API's label and annotation keys, the
//! API versions of the objects and the names of Secrets, server groups and
//! application credentials (driver-capi.md § 1, § 3.2).
//!
//! They are a contract: clusters created by magnum-cluster-api are adopted
//! under the same names.

/// The namespace of every object of every cluster.
pub const NAMESPACE: &str = "magnum-system";

/// The server-side apply field manager of every object the driver writes.
pub const FIELD_MANAGER: &str = "openkeel-magnum";

/// The version part of the ClusterClass this driver writes,
/// `magnum-v<version>`. A class and its templates are never changed in
/// place (§ 3.1): any change to them needs a new version.
pub const CLASS_VERSION: &str = "0.38.2-openkeel.1";

/// The only MachineDeployment class of the ClusterClass.
pub const WORKER_CLASS: &str = "default-worker";

/// Carries the Magnum cluster UUID on the Cluster and the cloud-config
/// Secret.
pub const LABEL_CLUSTER_UUID: &str = "cluster-uuid";

/// Set on the Cluster to `calico-<calico_tag>` for calico.
pub const LABEL_CNI: &str = "cni";

/// The node label naming a worker's nodegroup.
pub const LABEL_NODE_GROUP: &str = "node.cluster.x-k8s.io/nodegroup";

/// The prefix of the node role label.
pub const LABEL_NODE_ROLE_PREFIX: &str = "node-role.kubernetes.io/";

/// Cluster API's label naming the Cluster an object belongs to.
pub const LABEL_CLUSTER_NAME: &str = "cluster.x-k8s.io/cluster-name";

/// Cluster API's label naming the topology MachineDeployment of an object.
pub const LABEL_DEPLOYMENT_NAME: &str = "topology.cluster.x-k8s.io/deployment-name";

/// Cluster API's label on control-plane Machines.
pub const LABEL_CONTROL_PLANE: &str = "cluster.x-k8s.io/control-plane";

/// Cluster API's annotation marking a Machine to remove first on a scale
/// down.
pub const ANNOTATION_DELETE_MACHINE: &str = "cluster.x-k8s.io/delete-machine";

/// The cluster autoscaler's minimum size of a MachineDeployment.
pub const ANNOTATION_AUTOSCALER_MIN: &str =
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size";

/// The cluster autoscaler's maximum size of a MachineDeployment.
pub const ANNOTATION_AUTOSCALER_MAX: &str =
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size";

/// The cluster autoscaler's vCPUs of a node of an empty group (scale from
/// zero), a quantity.
pub const ANNOTATION_CAPACITY_CPU: &str = "capacity.cluster-autoscaler.kubernetes.io/cpu";
/// The cluster autoscaler's memory of a node of an empty group, a
/// quantity (`4096Mi`).
pub const ANNOTATION_CAPACITY_MEMORY: &str = "capacity.cluster-autoscaler.kubernetes.io/memory";
/// The cluster autoscaler's ephemeral storage of a node of an empty group,
/// a quantity (`40Gi`).
pub const ANNOTATION_CAPACITY_EPHEMERAL_DISK: &str =
    "capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk";
/// The cluster autoscaler's GPU count of a node of an empty group, an
/// integer.
pub const ANNOTATION_CAPACITY_GPU_COUNT: &str =
    "capacity.cluster-autoscaler.kubernetes.io/gpu-count";
/// The extended resource the GPUs of a node of an empty group are counted
/// in.
pub const ANNOTATION_CAPACITY_GPU_TYPE: &str = "capacity.cluster-autoscaler.kubernetes.io/gpu-type";
/// The labels of a node of an empty group, `key=value[,key=value…]`.
pub const ANNOTATION_CAPACITY_LABELS: &str = "capacity.cluster-autoscaler.kubernetes.io/labels";
/// The taints of a node of an empty group,
/// `key=value:Effect[,key=value:Effect…]`.
pub const ANNOTATION_CAPACITY_TAINTS: &str = "capacity.cluster-autoscaler.kubernetes.io/taints";

/// The type of Cluster API's cluster certificate Secrets.
pub const SECRET_TYPE_CLUSTER: &str = "cluster.x-k8s.io/secret";

/// The type of the Secrets a ClusterResourceSet applies.
pub const SECRET_TYPE_ADDONS: &str = "addons.cluster.x-k8s.io/resource-set";

/// Records, on the cloud-config Secret, the ID of the application
/// credential a rotation replaced; removed once the cluster has been seen
/// working with the new one.
pub const ANNOTATION_PREVIOUS_APP_CRED: &str =
    "magnum.openstack.org/previous-application-credential-id";

/// Records, on the cloud-config Secret, the owner of the application
/// credential.
pub const ANNOTATION_APP_CRED_USER: &str = "magnum.openstack.org/application-credential-user-id";

/// Records, on the cloud-config Secret, a digest of the cloud CA bundle
/// its `cacert` holds (`none` without one), so that a status pass sees a
/// changed bundle without reading the Secret's data.
pub const ANNOTATION_CLOUD_CA: &str = "magnum.openstack.org/cloud-ca-digest";

/// Cluster API's core API group.
pub const GROUP_CLUSTER: &str = "cluster.x-k8s.io";
/// Cluster API's control-plane API group.
pub const GROUP_CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io";
/// Cluster API's bootstrap API group.
pub const GROUP_BOOTSTRAP: &str = "bootstrap.cluster.x-k8s.io";
/// The infrastructure providers' API group (CAPO's here).
pub const GROUP_INFRASTRUCTURE: &str = "infrastructure.cluster.x-k8s.io";
/// Cluster API's add-ons API group (ClusterResourceSets).
pub const GROUP_ADDONS: &str = "addons.cluster.x-k8s.io";

/// The apiVersion of Cluster API's core objects (§ 9.1: v1beta2).
pub const API_VERSION_CLUSTER: &str = "cluster.x-k8s.io/v1beta2";
/// The apiVersion of the kubeadm control-plane objects.
pub const API_VERSION_CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io/v1beta2";
/// The apiVersion of the kubeadm bootstrap objects.
pub const API_VERSION_BOOTSTRAP: &str = "bootstrap.cluster.x-k8s.io/v1beta2";
/// The apiVersion of the ClusterResourceSets (§ 9.1: v1beta2).
pub const API_VERSION_ADDONS: &str = "addons.cluster.x-k8s.io/v1beta2";
/// The apiVersion of CAPO's objects: v1beta1 while CAPO v0.14 is the
/// release (§ 12, question 1).
pub const API_VERSION_INFRASTRUCTURE: &str = "infrastructure.cluster.x-k8s.io/v1beta1";

/// CAPO's template of the OpenStackCluster.
pub const KIND_OPENSTACK_CLUSTER_TEMPLATE: &str = "OpenStackClusterTemplate";
/// CAPO's template of the OpenStackMachines.
pub const KIND_OPENSTACK_MACHINE_TEMPLATE: &str = "OpenStackMachineTemplate";
/// CAPO's per-cluster infrastructure object.
pub const KIND_OPENSTACK_CLUSTER: &str = "OpenStackCluster";
/// CAPO's per-machine infrastructure object.
pub const KIND_OPENSTACK_MACHINE: &str = "OpenStackMachine";
/// The template of the kubeadm control plane.
pub const KIND_KUBEADM_CONTROL_PLANE_TEMPLATE: &str = "KubeadmControlPlaneTemplate";
/// The template of the workers' kubeadm bootstrap configuration.
pub const KIND_KUBEADM_CONFIG_TEMPLATE: &str = "KubeadmConfigTemplate";
/// The class every cluster's topology names.
pub const KIND_CLUSTER_CLASS: &str = "ClusterClass";

/// The suffix of the cluster CA Secret.
pub const SUFFIX_CA: &str = "-ca";
/// The suffix of the etcd CA Secret.
pub const SUFFIX_ETCD: &str = "-etcd";
/// The suffix of the front-proxy CA Secret.
pub const SUFFIX_FRONT_PROXY: &str = "-proxy";
/// The suffix of the service-account key pair Secret.
pub const SUFFIX_SA: &str = "-sa";
/// The suffix of the admin kubeconfig Secret Cluster API writes.
pub const SUFFIX_KUBECONFIG: &str = "-kubeconfig";
/// The suffix of the identity Secret CAPO reads.
pub const SUFFIX_CLOUD_CONFIG: &str = "-cloud-config";
/// The suffix of the cluster autoscaler's Deployment, ServiceAccount, Role
/// and RoleBinding (magnum-cluster-api's Helm release `<stack_id>` named
/// them so too).
pub const SUFFIX_AUTOSCALER: &str = "-autoscaler";
/// The suffix of the reconciled add-on set.
pub const SUFFIX_CLOUD_PROVIDER: &str = "-cloud-provider";

/// The cluster's Kubernetes CA, among the CAs the driver is given.
pub const CA_KEY_KUBERNETES: &str = "kubernetes";
/// The cluster's etcd CA.
pub const CA_KEY_ETCD: &str = "etcd";
/// The cluster's front-proxy CA.
pub const CA_KEY_FRONT_PROXY: &str = "front-proxy";
/// Magnum's admin client certificate (`magnum_cert_ref`), which becomes
/// the service-account key pair (§ 6.1).
pub const CA_KEY_ADMIN: &str = "admin";

/// The name of the ClusterClass of a class version, which is also the
/// name of each of its templates: `magnum-v<version>`.
pub fn class_name(version: &str) -> String {
    format!("magnum-v{version}")
}

/// The Nova server group of the control plane (`nodegroup` None) or of a
/// worker nodegroup: `<stack_id>` or `<stack_id>-<nodegroup>`.
pub fn server_group_name(stack_id: &str, nodegroup: Option<&str>) -> String {
    match nodegroup {
        None => stack_id.to_string(),
        Some(ng) => format!("{stack_id}-{ng}"),
    }
}

/// The name of the application credential of a cluster,
/// `magnum-<uuid>-<suffix>` (§ 6.2): the suffix lets a rotated credential
/// coexist with the one it replaces.
pub fn app_credential_name(cluster_uuid: &str, suffix: &str) -> String {
    format!("magnum-{cluster_uuid}-{suffix}")
}

/// Whether `name` is an application credential of the cluster: the
/// driver's own `magnum-<uuid>-…`, or magnum-cluster-api's `<uuid>`.
pub fn is_own_app_credential_name(cluster_uuid: &str, name: &str) -> bool {
    name == cluster_uuid
        || name
            .strip_prefix("magnum-")
            .and_then(|rest| rest.strip_prefix(cluster_uuid))
            .is_some_and(|rest| rest.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "2c4a9b9e-5d5e-4a52-9e49-0c2f1ac1f0b1";

    #[test]
    fn class_and_server_group_names() {
        assert_eq!(class_name(CLASS_VERSION), "magnum-v0.38.2-openkeel.1");
        assert_eq!(server_group_name("kube-abcde", None), "kube-abcde");
        assert_eq!(
            server_group_name("kube-abcde", Some("gpu")),
            "kube-abcde-gpu"
        );
    }

    #[test]
    fn api_versions_are_in_their_groups() {
        for (version, group) in [
            (API_VERSION_CLUSTER, GROUP_CLUSTER),
            (API_VERSION_CONTROL_PLANE, GROUP_CONTROL_PLANE),
            (API_VERSION_BOOTSTRAP, GROUP_BOOTSTRAP),
            (API_VERSION_INFRASTRUCTURE, GROUP_INFRASTRUCTURE),
            (API_VERSION_ADDONS, GROUP_ADDONS),
        ] {
            assert_eq!(version.rsplit_once('/').map(|(g, _)| g), Some(group));
        }
    }

    #[test]
    fn own_application_credentials_are_recognised() {
        let own = app_credential_name(UUID, "abcde");
        assert_eq!(own, format!("magnum-{UUID}-abcde"));
        assert!(is_own_app_credential_name(UUID, &own));
        // magnum-cluster-api named the credential after the cluster.
        assert!(is_own_app_credential_name(UUID, UUID));
        assert!(!is_own_app_credential_name(UUID, &format!("magnum-{UUID}")));
        assert!(!is_own_app_credential_name(UUID, "magnum-other-abcde"));
    }
}
