package capi

import (
	"fmt"
	"strings"
)

// Names shared with magnum-cluster-api (driver-capi.md § 1, § 3.2). They are
// a contract: clusters created by magnum-cluster-api are adopted under the
// same names.
const (
	// DefaultNamespace is the namespace of every object of every cluster.
	DefaultNamespace = "magnum-system"
	// FieldManager is the server-side apply field manager.
	FieldManager = "openkeel-magnum"
	// DefaultClassVersion is the version part of the ClusterClass written by
	// this driver, "magnum-v<version>". A new version is needed whenever the
	// class or its templates change (§ 3.1: classes are never changed in
	// place).
	DefaultClassVersion = "0.38.2-openkeel.1"
	// WorkerClass is the only MachineDeployment class of the ClusterClass.
	WorkerClass = "default-worker"

	// LabelClusterUUID carries the Magnum cluster UUID on the Cluster and
	// the cloud-config Secret.
	LabelClusterUUID = "cluster-uuid"
	// LabelCNI is set on the Cluster to "calico-<calico_tag>" for calico.
	LabelCNI = "cni"
	// LabelNodeGroup is the node label naming a worker's nodegroup.
	LabelNodeGroup = "node.cluster.x-k8s.io/nodegroup"
	// labelNodeRolePrefix prefixes the node role label.
	labelNodeRolePrefix = "node-role.kubernetes.io/"

	// Cluster API labels and annotations (sigs.k8s.io/cluster-api/api/core/v1beta2).
	labelClusterName        = "cluster.x-k8s.io/cluster-name"
	labelDeploymentName     = "topology.cluster.x-k8s.io/deployment-name"
	labelControlPlane       = "cluster.x-k8s.io/control-plane"
	annotationDeleteMachine = "cluster.x-k8s.io/delete-machine"
	annotationAutoscalerMin = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	annotationAutoscalerMax = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"

	// secretTypeCluster is the type of the CAPI cluster certificate Secrets.
	secretTypeCluster = "cluster.x-k8s.io/secret"

	// annotationPreviousAppCred records, on the cloud-config Secret, the ID
	// of the application credential a rotation replaced; it is deleted once
	// the cluster has been seen working with the new one.
	annotationPreviousAppCred = "magnum.openstack.org/previous-application-credential-id"
	// annotationAppCredUser records the owner of the application credential.
	annotationAppCredUser = "magnum.openstack.org/application-credential-user-id"
)

// API groups and versions written by the driver (§ 9.1).
const (
	groupCluster      = "cluster.x-k8s.io"
	groupControlPlane = "controlplane.cluster.x-k8s.io"
	groupBootstrap    = "bootstrap.cluster.x-k8s.io"
	groupInfra        = "infrastructure.cluster.x-k8s.io"
	groupAddons       = "addons.cluster.x-k8s.io"

	apiVersionCluster      = groupCluster + "/v1beta2"
	apiVersionControlPlane = groupControlPlane + "/v1beta2"
	apiVersionBootstrap    = groupBootstrap + "/v1beta2"
	// apiVersionInfra is CAPO's: v1beta1 while CAPO v0.14 is the release.
	apiVersionInfra = groupInfra + "/v1beta1"

	kindOpenStackClusterTemplate = "OpenStackClusterTemplate"
	kindOpenStackMachineTemplate = "OpenStackMachineTemplate"
	kindOpenStackCluster         = "OpenStackCluster"
	kindOpenStackMachine         = "OpenStackMachine"
)

// Suffixes of the CAPI cluster certificate Secrets (capi:util/secret/consts.go).
const (
	SuffixCA         = "-ca"
	SuffixEtcd       = "-etcd"
	SuffixFrontProxy = "-proxy"
	SuffixSA         = "-sa"
	SuffixKubeconfig = "-kubeconfig"
	// SuffixCloudConfig names the identity Secret CAPO reads.
	SuffixCloudConfig = "-cloud-config"
	// SuffixCloudProvider names the reconciled add-on set.
	SuffixCloudProvider = "-cloud-provider"
)

// Keys of the map returned by Options.CAs: the three cluster CAs (the
// values of certs.CAKind) and the admin client certificate.
const (
	CAKeyKubernetes = "kubernetes"
	CAKeyEtcd       = "etcd"
	CAKeyFrontProxy = "front-proxy"
	// CAKeyAdmin is Magnum's admin client certificate (magnum_cert_ref),
	// which becomes the service-account key pair (§ 6.1).
	CAKeyAdmin = "admin"
)

// ClassName is the name of the ClusterClass (and of its templates) of a
// class version: "magnum-v<version>".
func ClassName(version string) string { return "magnum-v" + version }

// serverGroupName is the Nova server group of the control plane ("") or of
// a worker nodegroup.
func serverGroupName(stackID, nodegroup string) string {
	if nodegroup == "" {
		return stackID
	}
	return stackID + "-" + nodegroup
}

// AppCredentialName is the name of the application credential of a
// cluster: "magnum-<uuid>-<suffix>" (§ 6.2), so that a rotation can coexist
// with the credential it replaces.
func AppCredentialName(clusterUUID, suffix string) string {
	return fmt.Sprintf("magnum-%s-%s", clusterUUID, suffix)
}

// isOwnAppCredentialName reports whether name is an application credential
// of the cluster: the driver's own "magnum-<uuid>-…" or magnum-cluster-api's
// legacy "<uuid>".
func isOwnAppCredentialName(clusterUUID, name string) bool {
	return name == clusterUUID || strings.HasPrefix(name, "magnum-"+clusterUUID+"-")
}
