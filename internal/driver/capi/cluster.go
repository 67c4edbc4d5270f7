package capi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// nodeLabelPrefixes are the label prefixes CAPI propagates from a
// MachineDeployment's metadata to its Nodes; other node_labels would stay
// on the Machine and are not mapped.
var nodeLabelPrefixes = []string{"node-role.kubernetes.io/", "node-restriction.kubernetes.io/", "node.cluster.x-k8s.io/"}

// BuildCluster returns the topology Cluster of driver-capi.md § 3.4 in its
// v1beta2 form (§ 4.3): class, version, control plane, one
// MachineDeployment per worker nodegroup that is not being deleted, and
// all the class variables.
func BuildCluster(in Input) (*clusterv1.Cluster, error) {
	st := in.State
	cl := st.Cluster
	l := labels(cl.Labels)

	version, err := KubeVersion(l.str(LabelKubeTag, ""))
	if err != nil {
		return nil, err
	}
	healing, err := l.boolean(LabelAutoHealingEnabled, true)
	if err != nil {
		return nil, err
	}
	vars, err := ClusterVariables(in)
	if err != nil {
		return nil, err
	}

	meta := map[string]string{LabelClusterUUID: cl.UUID}
	podCIDR := defaultPodCIDR
	switch value(st.Template.NetworkDriver) {
	case "calico":
		meta[LabelCNI] = "calico-" + l.str(LabelCalicoTag, defaultCalicoTag)
		podCIDR = l.str(LabelCalicoIPv4Pool, defaultPodCIDR)
	case "cilium":
		podCIDR = l.str(LabelCiliumIPv4Pool, defaultPodCIDR)
	}

	masterCount := int32(1)
	if m, ok := masterNodeGroup(st.NodeGroups); ok && m.NodeCount != nil {
		masterCount = int32(*m.NodeCount)
	}

	out := &clusterv1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersionCluster, Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: in.StackID, Namespace: in.Namespace, Labels: meta},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				ServiceDomain: l.str(LabelDNSClusterDomain, defaultServiceDomain),
				Pods:          clusterv1.NetworkRanges{CIDRBlocks: []string{podCIDR}},
				Services:      clusterv1.NetworkRanges{CIDRBlocks: []string{l.str(LabelServiceClusterIPRange, defaultServiceCIDR)}},
			},
			Topology: clusterv1.Topology{
				ClassRef: clusterv1.ClusterClassRef{Name: ClassName(in.ClassVersion)},
				Version:  version,
				ControlPlane: clusterv1.ControlPlaneTopology{
					Metadata:    clusterv1.ObjectMeta{Labels: map[string]string{labelNodeRolePrefix + magnum.RoleMaster: ""}},
					Replicas:    ptr(masterCount),
					HealthCheck: clusterv1.ControlPlaneTopologyHealthCheck{Enabled: ptr(healing)},
				},
				Variables: vars,
			},
		},
	}

	workers := make([]magnum.NodeGroup, 0, len(st.NodeGroups))
	for _, ng := range st.NodeGroups {
		if isMaster(ng) || strings.HasPrefix(string(statusOf(ng.Status)), "DELETE") {
			continue
		}
		workers = append(workers, ng)
	}
	// The default worker first, then by name: the order is part of the
	// applied object, so it must not depend on the row order.
	slices.SortStableFunc(workers, func(a, b magnum.NodeGroup) int {
		if isDefault(a) != isDefault(b) {
			if isDefault(a) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, ng := range workers {
		md, err := MachineDeploymentTopology(in, ng, healing)
		if err != nil {
			return nil, fmt.Errorf("nodegroup %s: %w", ng.Name, err)
		}
		out.Spec.Topology.Workers.MachineDeployments = append(out.Spec.Topology.Workers.MachineDeployments, md)
	}
	return out, nil
}

// Autoscaling reports whether the cluster's autoscaler owns the worker
// replicas (label auto_scaling_enabled).
func Autoscaling(cl magnum.Cluster) (bool, error) {
	return labels(cl.Labels).boolean(LabelAutoScalingEnabled, false)
}

// AutoscalerBounds returns the min and max sizes of a worker nodegroup
// (§ 8.5): min_node_count (the default worker's comes from the cluster
// label when the column is unset), max_node_count, else the nodegroup label
// max_node_count, else min + 1.
func AutoscalerBounds(cl magnum.Cluster, ng magnum.NodeGroup) (minSize, maxSize int, err error) {
	if ng.MinNodeCount != nil {
		minSize = *ng.MinNodeCount
	} else if isDefault(ng) {
		n, err := labels(cl.Labels).integer(LabelMinNodeCount, 0)
		if err != nil {
			return 0, 0, err
		}
		minSize = int(n)
	}
	switch {
	case ng.MaxNodeCount != nil:
		maxSize = *ng.MaxNodeCount
	default:
		n, err := labels(ng.Labels).integer(LabelMaxNodeCount, int64(minSize+1))
		if err != nil {
			return 0, 0, err
		}
		maxSize = int(n)
	}
	return minSize, maxSize, nil
}

// MachineDeploymentTopology returns the topology entry of a worker
// nodegroup (§ 3.4, § 8.5).
func MachineDeploymentTopology(in Input, ng magnum.NodeGroup, healing bool) (clusterv1.MachineDeploymentTopology, error) {
	cl := in.State.Cluster
	role := value(ng.Role)
	if role == "" {
		role = magnum.RoleWorker
	}
	nodeLabels := map[string]string{labelNodeRolePrefix + role: "", LabelNodeGroup: ng.Name}
	for k, v := range ng.NodeLabels {
		for _, p := range nodeLabelPrefixes {
			if strings.HasPrefix(k, p) {
				nodeLabels[k] = v
			}
		}
	}
	overrides, err := NodeGroupOverrides(in, ng)
	if err != nil {
		return clusterv1.MachineDeploymentTopology{}, err
	}
	md := clusterv1.MachineDeploymentTopology{
		Metadata:      clusterv1.ObjectMeta{Labels: nodeLabels},
		Class:         WorkerClass,
		Name:          ng.Name,
		FailureDomain: labels(ng.Labels).str(LabelAvailabilityZone, ""),
		HealthCheck:   clusterv1.MachineDeploymentTopologyHealthCheck{Enabled: ptr(healing)},
		Deletion:      clusterv1.MachineDeploymentTopologyMachineDeletionSpec{NodeVolumeDetachTimeoutSeconds: ptr(nodeVolumeDetachTimeout)},
		Variables:     clusterv1.MachineDeploymentVariables{Overrides: overrides},
	}
	for _, t := range ng.NodeTaints {
		md.Taints = append(md.Taints, clusterv1.MachineTaint{
			Key: t["key"], Value: t["value"], Effect: corev1.TaintEffect(t["effect"]),
			Propagation: clusterv1.MachineTaintPropagationAlways,
		})
	}

	count := int32(intValue(ng.NodeCount))
	auto, err := Autoscaling(cl)
	if err != nil {
		return clusterv1.MachineDeploymentTopology{}, err
	}
	if !auto {
		md.Replicas = ptr(count)
		return md, nil
	}
	minSize, maxSize, err := AutoscalerBounds(cl, ng)
	if err != nil {
		return clusterv1.MachineDeploymentTopology{}, err
	}
	md.Metadata.Annotations = map[string]string{
		annotationAutoscalerMin: strconv.Itoa(minSize),
		annotationAutoscalerMax: strconv.Itoa(maxSize),
	}
	// The autoscaler owns replicas. A new MachineDeployment starts at
	// node_count clamped to [min, max]; without it CAPI's webhook would
	// start it at min (0 by default) whatever the user asked for (§ 8.5).
	if statusOf(ng.Status) == magnum.StatusCreateInProgress {
		start := min(max(int(count), minSize), maxSize)
		md.Replicas = ptr(int32(start))
	}
	return md, nil
}

func statusOf(p *magnum.Status) magnum.Status {
	if p == nil {
		return ""
	}
	return *p
}
