package capi

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// statusReasonMax is the size of the status_reason column.
const statusReasonMax = 255

// defaultCreateTimeout is the API's default create_timeout in minutes.
const defaultCreateTimeout = 60

// Observed is what the status rules read from the management cluster for
// one Magnum cluster. Nil pointers are objects that do not exist.
type Observed struct {
	// Cluster is the CAPI Cluster "<stack_id>".
	Cluster *clusterv1.Cluster
	// ControlPlane is the cluster's KubeadmControlPlane.
	ControlPlane *controlplanev1.KubeadmControlPlane
	// MachineDeployments are keyed by nodegroup name (label
	// topology.cluster.x-k8s.io/deployment-name).
	MachineDeployments map[string]*clusterv1.MachineDeployment
	// Machines are all the cluster's Machines.
	Machines []clusterv1.Machine
	// Infra is the OpenStackCluster (unstructured CAPO v1beta1).
	Infra *unstructured.Unstructured
}

// StatusRules configures ComputeStatus.
type StatusRules struct {
	// Now is the current time.
	Now time.Time
	// UpdateGrace is how long TopologyReconciled may report ReconcileFailed
	// before an update fails.
	UpdateGrace time.Duration
	// DeleteTimeout is how long a deletion may make no progress (no change
	// of the row since the later of the Cluster's deletion and the row's
	// updated_at) before it is DELETE_FAILED; zero never fails.
	DeleteTimeout time.Duration
}

// ComputeStatus applies the status rules of driver-capi.md § 5.2–5.4 to
// the rows in st and the observed objects, and returns the rows that
// changed. It is pure; deletion completion (§ 5.5), which needs cleanup,
// is handled by PollStatus.
func ComputeStatus(st driver.ClusterState, obs Observed, rules StatusRules) driver.Update {
	var upd driver.Update
	cl := st.Cluster
	status := statusOf(cl.Status)
	auto, _ := Autoscaling(cl)

	// Nodegroups first: the cluster completes only when they have.
	ngs := make([]magnum.NodeGroup, 0, len(st.NodeGroups))
	for _, ng := range st.NodeGroups {
		next, destroy := nodeGroupStatus(ng, obs, auto)
		if destroy {
			upd.DeletedNodeGroups = append(upd.DeletedNodeGroups, ng.UUID)
			continue
		}
		ngs = append(ngs, next)
		if !nodeGroupEqual(ng, next) {
			upd.NodeGroups = append(upd.NodeGroups, next)
		}
	}

	next := cl
	next.HealthStatusReason = maps.Clone(cl.HealthStatusReason)
	c := obs.Cluster
	if c != nil {
		if ep := c.Spec.ControlPlaneEndpoint; ep.Host != "" {
			next.APIAddress = ptr(fmt.Sprintf("https://%s:%d", ep.Host, ep.Port))
		}
		if v := coeVersion(obs); v != "" {
			next.COEVersion = ptr(v)
		}
	}
	health, reason, known := Health(obs)
	if known {
		next.HealthStatus = ptr(health)
		next.HealthStatusReason = reason
	}

	switch {
	case status == magnum.StatusCreateInProgress || status == magnum.StatusCreateFailed && c != nil:
		switch {
		case clusterReady(obs, ngs, false):
			next.Status, next.StatusReason = ptr(magnum.StatusCreateComplete), nil
		case createExpired(cl, rules.Now):
			next.Status = ptr(magnum.StatusCreateFailed)
			next.StatusReason = ptr(cut("Timed out waiting for the cluster: " + blockingReason(obs, "the Cluster API cluster does not exist")))
		default:
			next.StatusReason = reasonPtr(obs)
		}
	case status == magnum.StatusUpdateInProgress:
		switch {
		case clusterReady(obs, ngs, true):
			next.Status, next.StatusReason = ptr(magnum.StatusUpdateComplete), nil
		case topologyFailedFor(obs, rules):
			next.Status = ptr(magnum.StatusUpdateFailed)
			next.StatusReason = ptr(cut(conditionText(findCondition(c.Status.Conditions, clusterv1.ClusterTopologyReconciledCondition))))
		case anyFailed(ngs):
			next.Status = ptr(magnum.StatusUpdateFailed)
			next.StatusReason = ptr(cut(firstFailedReason(ngs)))
		default:
			next.StatusReason = reasonPtr(obs)
		}
	case status == magnum.StatusDeleteInProgress && c != nil:
		next.StatusReason = reasonPtr(obs)
		if deleteStuck(cl, c, next, rules) {
			next.Status = ptr(magnum.StatusDeleteFailed)
			next.StatusReason = ptr(cut("Timed out waiting for the deletion: " + blockingReason(obs, "the Cluster API cluster is still there")))
		}
	}
	if !clusterEqual(cl, next) {
		upd.Cluster = &next
	}
	return upd
}

// nodeGroupStatus applies the nodegroup rules; destroy is true for a
// non-default nodegroup whose deletion completed.
func nodeGroupStatus(ng magnum.NodeGroup, obs Observed, auto bool) (magnum.NodeGroup, bool) {
	status := statusOf(ng.Status)
	act, inProgress := strings.CutSuffix(string(status), "_IN_PROGRESS")
	if isMaster(ng) {
		ng.NodeAddresses = addresses(obs.Machines, func(m *clusterv1.Machine) bool {
			_, ok := m.Labels[labelControlPlane]
			return ok
		}, ng.NodeAddresses)
		kcp := obs.ControlPlane
		if kcp == nil || !inProgress || act == "DELETE" {
			return ng, false
		}
		if controlPlaneReady(kcp, intValue(ng.NodeCount)) {
			ng.Status, ng.StatusReason = ptr(magnum.Status(act+"_COMPLETE")), nil
		} else if r := firstFalse(kcp.Status.Conditions); r != "" {
			ng.StatusReason = ptr(cut(r))
		}
		return ng, false
	}

	md := obs.MachineDeployments[ng.Name]
	machinesLeft := slices.ContainsFunc(obs.Machines, func(m clusterv1.Machine) bool {
		return m.Labels[labelDeploymentName] == ng.Name
	})
	if status == magnum.StatusDeleteInProgress {
		if md != nil || machinesLeft {
			return ng, false
		}
		if !isDefault(ng) {
			return ng, true
		}
		ng.Status, ng.StatusReason = ptr(magnum.StatusDeleteComplete), nil
		ng.NodeAddresses = []string{}
		return ng, false
	}
	ng.NodeAddresses = addresses(obs.Machines, func(m *clusterv1.Machine) bool {
		return m.Labels[labelDeploymentName] == ng.Name
	}, ng.NodeAddresses)
	if md == nil {
		return ng, false
	}
	if auto && md.Spec.Replicas != nil && intValue(ng.NodeCount) != int(*md.Spec.Replicas) {
		ng.NodeCount = ptr(int(*md.Spec.Replicas))
	}
	if !inProgress {
		return ng, false
	}
	switch {
	case md.Status.Phase == string(clusterv1.MachineDeploymentPhaseFailed):
		ng.Status = ptr(magnum.Status(act + "_FAILED"))
		ng.StatusReason = ptr(cut(orDefault(firstFalse(md.Status.Conditions), "MachineDeployment "+md.Name+" failed")))
	case machineDeploymentReady(md, ng, auto):
		ng.Status, ng.StatusReason = ptr(magnum.Status(act+"_COMPLETE")), nil
	}
	return ng, false
}

// controlPlaneReady is the master nodegroup rule: initialized, Available,
// current generation, and every replica up to date and ready at the
// requested count.
func controlPlaneReady(kcp *controlplanev1.KubeadmControlPlane, want int) bool {
	if kcp.Status.Initialization.ControlPlaneInitialized == nil || !*kcp.Status.Initialization.ControlPlaneInitialized {
		return false
	}
	if !conditionTrue(kcp.Status.Conditions, clusterv1.AvailableCondition) || kcp.Status.ObservedGeneration != kcp.Generation {
		return false
	}
	spec := int32Value(kcp.Spec.Replicas)
	return int32Value(kcp.Status.UpToDateReplicas) == spec && int32Value(kcp.Status.ReadyReplicas) == spec && int(spec) == want
}

// machineDeploymentReady is the worker rule: current generation, phase
// Running, and up-to-date = available = spec replicas (= node_count unless
// the autoscaler owns the size).
func machineDeploymentReady(md *clusterv1.MachineDeployment, ng magnum.NodeGroup, auto bool) bool {
	if md.Status.ObservedGeneration != md.Generation || md.Status.Phase != string(clusterv1.MachineDeploymentPhaseRunning) {
		return false
	}
	spec := int32Value(md.Spec.Replicas)
	if int32Value(md.Status.UpToDateReplicas) != spec || int32Value(md.Status.AvailableReplicas) != spec {
		return false
	}
	return auto || int(spec) == intValue(ng.NodeCount)
}

// clusterReady is the cluster rule for CREATE/UPDATE_COMPLETE.
func clusterReady(obs Observed, ngs []magnum.NodeGroup, update bool) bool {
	c := obs.Cluster
	if c == nil || c.Status.ObservedGeneration != c.Generation {
		return false
	}
	for _, t := range []string{
		clusterv1.ClusterInfrastructureReadyCondition, clusterv1.ClusterControlPlaneAvailableCondition,
		clusterv1.ClusterWorkersAvailableCondition, clusterv1.ClusterTopologyReconciledCondition,
	} {
		if !conditionTrue(c.Status.Conditions, t) {
			return false
		}
	}
	for _, ng := range ngs {
		if !strings.HasSuffix(string(statusOf(ng.Status)), "_COMPLETE") {
			return false
		}
	}
	if update {
		kcp := obs.ControlPlane
		if kcp == nil || kcp.Status.Version != c.Spec.Topology.Version {
			return false
		}
	}
	return true
}

// coeVersion is the KCP's version once every control-plane machine runs
// it, else the topology version.
func coeVersion(obs Observed) string {
	if kcp := obs.ControlPlane; kcp != nil && kcp.Status.Version != "" &&
		int32Value(kcp.Status.UpToDateReplicas) == int32Value(kcp.Spec.Replicas) {
		return kcp.Status.Version
	}
	if obs.Cluster != nil {
		return obs.Cluster.Spec.Topology.Version
	}
	return ""
}

// Health is the health monitor (§ 5.4): HEALTHY when the control plane is
// Available and every Machine's node is healthy. The reason has one
// "<OpenStackMachine name>.Ready" key per Machine and "api", all strings.
// known is false when there is no CAPI Cluster (health stays UNKNOWN) or
// no control plane yet (the old value is kept).
func Health(obs Observed) (status string, reason map[string]string, known bool) {
	if obs.Cluster == nil {
		return string(magnum.HealthUnknown), map[string]string{}, true
	}
	if obs.ControlPlane == nil {
		return "", nil, false
	}
	healthy := conditionTrue(obs.ControlPlane.Status.Conditions, clusterv1.AvailableCondition)
	reason = map[string]string{"api": "nok"}
	if healthy {
		reason["api"] = "ok"
	}
	for _, m := range obs.Machines {
		ok := conditionTrue(m.Status.Conditions, clusterv1.MachineNodeHealthyCondition)
		healthy = healthy && ok
		name := m.Spec.InfrastructureRef.Name
		if name == "" {
			name = m.Name
		}
		reason[name+".Ready"] = boolString(ok)
	}
	if healthy {
		return string(magnum.HealthHealthy), reason, true
	}
	return string(magnum.HealthUnhealthy), reason, true
}

func boolString(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// addresses returns the addresses of the selected Machines: ExternalIP
// when a Machine has one, else InternalIP, ordered by Machine name. It
// keeps old when no Machine is selected and old is non-nil, so a row is
// not rewritten while machines are still being created.
func addresses(machines []clusterv1.Machine, sel func(*clusterv1.Machine) bool, old []string) []string {
	var picked []*clusterv1.Machine
	for i := range machines {
		if sel(&machines[i]) {
			picked = append(picked, &machines[i])
		}
	}
	slices.SortFunc(picked, func(a, b *clusterv1.Machine) int { return strings.Compare(a.Name, b.Name) })
	out := []string{}
	for _, m := range picked {
		var internal, external string
		for _, a := range m.Status.Addresses {
			switch {
			case a.Type == clusterv1.MachineExternalIP && external == "":
				external = a.Address
			case a.Type == clusterv1.MachineInternalIP && internal == "":
				internal = a.Address
			}
		}
		switch {
		case external != "":
			out = append(out, external)
		case internal != "":
			out = append(out, internal)
		}
	}
	if len(out) == 0 && old != nil {
		return old
	}
	return out
}

// blockingReason builds status_reason from conditions (§ 5.3): the first
// False condition of the Cluster among InfrastructureReady,
// ControlPlaneAvailable and WorkersAvailable, the OpenStackCluster's
// failure message and Ready condition, and the first Machine whose
// infrastructure is not ready (which carries Nova errors).
func blockingReason(obs Observed, none string) string {
	var parts []string
	if c := obs.Cluster; c != nil {
		for _, t := range []string{
			clusterv1.ClusterInfrastructureReadyCondition, clusterv1.ClusterControlPlaneAvailableCondition,
			clusterv1.ClusterWorkersAvailableCondition,
		} {
			if cond := findCondition(c.Status.Conditions, t); cond != nil && cond.Status == metav1.ConditionFalse {
				parts = append(parts, "CAPI Cluster "+conditionText(cond))
				break
			}
		}
	} else {
		return none
	}
	if u := obs.Infra; u != nil {
		if msg, _, _ := unstructured.NestedString(u.Object, "status", "failureMessage"); msg != "" {
			parts = append(parts, "OpenStackCluster: "+msg)
		} else if cond := unstructuredCondition(u, "Ready"); cond != "" {
			parts = append(parts, "OpenStackCluster "+cond)
		}
	}
	machines := slices.Clone(obs.Machines)
	slices.SortFunc(machines, func(a, b clusterv1.Machine) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range machines {
		if cond := findCondition(m.Status.Conditions, clusterv1.MachineInfrastructureReadyCondition); cond != nil &&
			cond.Status == metav1.ConditionFalse && cond.Message != "" {
			parts = append(parts, "Machine "+m.Name+": "+cond.Message)
			break
		}
	}
	return strings.Join(parts, ". ")
}

func reasonPtr(obs Observed) *string {
	r := blockingReason(obs, "")
	if r == "" {
		return nil
	}
	return ptr(cut(r))
}

// unstructuredCondition renders a CAPO v1beta1 condition that is not True.
func unstructuredCondition(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ || m["status"] == "True" {
			continue
		}
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return strings.TrimSuffix(typ+" "+reason+": "+msg, ": ")
	}
	return ""
}

// deleteStuck reports whether a deletion has made no progress for
// rules.DeleteTimeout: the reason is unchanged and neither the row
// (updated_at, bumped by every change and by a new DELETE) nor the
// Cluster's deletion moved since.
func deleteStuck(cl magnum.Cluster, c *clusterv1.Cluster, next magnum.Cluster, rules StatusRules) bool {
	if rules.DeleteTimeout <= 0 || !equalStrPtr(cl.StatusReason, next.StatusReason) {
		return false
	}
	since := cl.CreatedAt
	if cl.UpdatedAt != nil && cl.UpdatedAt.After(since) {
		since = *cl.UpdatedAt
	}
	if c.DeletionTimestamp != nil && c.DeletionTimestamp.After(since) {
		since = c.DeletionTimestamp.Time
	}
	return !since.IsZero() && rules.Now.After(since.Add(rules.DeleteTimeout))
}

func equalStrPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func createExpired(cl magnum.Cluster, now time.Time) bool {
	minutes := defaultCreateTimeout
	if cl.CreateTimeout != nil {
		minutes = *cl.CreateTimeout
	}
	if minutes <= 0 || cl.CreatedAt.IsZero() {
		return false
	}
	return now.After(cl.CreatedAt.Add(time.Duration(minutes) * time.Minute))
}

// topologyFailedFor reports whether TopologyReconciled has been False with
// reason ReconcileFailed (a webhook rejection, for example) for longer than
// the grace period.
func topologyFailedFor(obs Observed, rules StatusRules) bool {
	if obs.Cluster == nil {
		return false
	}
	cond := findCondition(obs.Cluster.Status.Conditions, clusterv1.ClusterTopologyReconciledCondition)
	return cond != nil && cond.Status == metav1.ConditionFalse &&
		cond.Reason == clusterv1.ClusterTopologyReconciledFailedReason &&
		rules.Now.Sub(cond.LastTransitionTime.Time) > rules.UpdateGrace
}

func anyFailed(ngs []magnum.NodeGroup) bool {
	return slices.ContainsFunc(ngs, func(ng magnum.NodeGroup) bool {
		return strings.HasSuffix(string(statusOf(ng.Status)), "_FAILED")
	})
}

func firstFailedReason(ngs []magnum.NodeGroup) string {
	for _, ng := range ngs {
		if strings.HasSuffix(string(statusOf(ng.Status)), "_FAILED") {
			return "Nodegroup " + ng.Name + ": " + value(ng.StatusReason)
		}
	}
	return ""
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	return meta.FindStatusCondition(conds, typ)
}

func conditionTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}

func conditionText(c *metav1.Condition) string {
	if c == nil {
		return ""
	}
	s := c.Type + " " + c.Reason
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// firstFalse renders the first False condition, or "".
func firstFalse(conds []metav1.Condition) string {
	for i := range conds {
		if conds[i].Status == metav1.ConditionFalse {
			return conditionText(&conds[i])
		}
	}
	return ""
}

// cut caps a status_reason at the column size.
func cut(s string) string {
	if len(s) <= statusReasonMax {
		return s
	}
	r := []rune(s)
	for len(string(r)) > statusReasonMax {
		r = r[:len(r)-1]
	}
	return string(r)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func int32Value(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func clusterEqual(a, b magnum.Cluster) bool {
	return statusOf(a.Status) == statusOf(b.Status) && value(a.StatusReason) == value(b.StatusReason) &&
		(a.StatusReason == nil) == (b.StatusReason == nil) &&
		value(a.APIAddress) == value(b.APIAddress) && value(a.COEVersion) == value(b.COEVersion) &&
		value(a.HealthStatus) == value(b.HealthStatus) && maps.Equal(a.HealthStatusReason, b.HealthStatusReason) &&
		(a.HealthStatusReason == nil) == (b.HealthStatusReason == nil)
}

func nodeGroupEqual(a, b magnum.NodeGroup) bool {
	return statusOf(a.Status) == statusOf(b.Status) && value(a.StatusReason) == value(b.StatusReason) &&
		(a.StatusReason == nil) == (b.StatusReason == nil) &&
		intValue(a.NodeCount) == intValue(b.NodeCount) && slices.Equal(a.NodeAddresses, b.NodeAddresses) &&
		(a.NodeAddresses == nil) == (b.NodeAddresses == nil)
}

// observe reads the objects of a cluster.
func (d *Driver) observe(ctx context.Context, stackID string) (Observed, error) {
	var obs Observed
	var err error
	if obs.Cluster, err = d.getCluster(ctx, stackID); err != nil {
		return obs, err
	}
	ns, sel := client.InNamespace(d.opts.Namespace), client.MatchingLabels{labelClusterName: stackID}
	var kcps controlplanev1.KubeadmControlPlaneList
	if err := d.opts.Client.List(ctx, &kcps, ns, sel); err != nil && !meta.IsNoMatchError(err) {
		return obs, fmt.Errorf("list control planes: %w", err)
	}
	if len(kcps.Items) > 0 {
		obs.ControlPlane = &kcps.Items[0]
	}
	var mds clusterv1.MachineDeploymentList
	if err := d.opts.Client.List(ctx, &mds, ns, sel); err != nil && !meta.IsNoMatchError(err) {
		return obs, fmt.Errorf("list machine deployments: %w", err)
	}
	obs.MachineDeployments = map[string]*clusterv1.MachineDeployment{}
	for i := range mds.Items {
		if n := mds.Items[i].Labels[labelDeploymentName]; n != "" {
			obs.MachineDeployments[n] = &mds.Items[i]
		}
	}
	var ms clusterv1.MachineList
	if err := d.opts.Client.List(ctx, &ms, ns, sel); err != nil && !meta.IsNoMatchError(err) {
		return obs, fmt.Errorf("list machines: %w", err)
	}
	obs.Machines = ms.Items
	infra, err := d.listUnstructured(ctx, kindOpenStackCluster, sel)
	if err != nil {
		return obs, err
	}
	if len(infra) > 0 {
		obs.Infra = &infra[0]
	}
	return obs, nil
}

// PollStatus implements driver.Driver: it observes the cluster's objects
// and applies ComputeStatus. For a cluster being deleted whose CAPI
// Cluster has gone, it removes the application credential, the Secrets
// and the server groups, and reports DELETE_COMPLETE (§ 5.5).
func (d *Driver) PollStatus(ctx context.Context, cred driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()
	stackID := value(st.Cluster.StackID)
	status := statusOf(st.Cluster.Status)
	if stackID == "" {
		if status == magnum.StatusDeleteInProgress {
			return d.completeDelete(st), nil
		}
		if value(st.Cluster.HealthStatus) != string(magnum.HealthUnknown) {
			cl := st.Cluster
			cl.HealthStatus, cl.HealthStatusReason = ptr(string(magnum.HealthUnknown)), map[string]string{}
			return driver.Update{Cluster: &cl}, nil
		}
		return driver.Update{}, nil
	}
	obs, err := d.observe(ctx, stackID)
	if err != nil {
		return driver.Update{}, err
	}
	if status == magnum.StatusDeleteInProgress && obs.Cluster == nil {
		if err := d.cleanup(ctx, cred, st, stackID); err != nil {
			return driver.Update{}, err
		}
		return d.completeDelete(st), nil
	}
	if err := d.retirePreviousCredential(ctx, stackID, obs); err != nil {
		return driver.Update{}, err
	}
	return ComputeStatus(st, obs, StatusRules{Now: d.opts.Now(), UpdateGrace: d.opts.UpdateGrace, DeleteTimeout: d.opts.DeleteTimeout}), nil
}

func (d *Driver) completeDelete(st driver.ClusterState) driver.Update {
	cl := st.Cluster
	cl.Status, cl.StatusReason = ptr(magnum.StatusDeleteComplete), nil
	return driver.Update{Cluster: &cl}
}

// cleanup runs once the CAPI Cluster has gone: the application
// credential (by the ID in the cloud-config Secret, with the service's
// credentials), the cloud-config and CA Secrets, and the server groups.
// Every step tolerates what is already gone.
func (d *Driver) cleanup(ctx context.Context, cred driver.Credentials, st driver.ClusterState, stackID string) error {
	s, err := d.getSecret(ctx, stackID+SuffixCloudConfig)
	if err != nil {
		return err
	}
	if s != nil && d.opts.AppCredentials != nil {
		if ac, ok := appCredentialFromSecret(s); ok {
			if err := d.opts.AppCredentials.Delete(ctx, ac.UserID, ac.ID); err != nil {
				return fmt.Errorf("delete application credential: %w", err)
			}
		}
		if prev := s.Annotations[annotationPreviousAppCred]; prev != "" {
			user, id, _ := strings.Cut(prev, "/")
			if err := d.opts.AppCredentials.Delete(ctx, user, id); err != nil {
				return fmt.Errorf("delete previous application credential: %w", err)
			}
		}
	}
	for _, suffix := range []string{SuffixCloudConfig, SuffixCA, SuffixEtcd, SuffixFrontProxy, SuffixSA} {
		sec := &corev1.Secret{}
		sec.Namespace, sec.Name = d.opts.Namespace, stackID+suffix
		if err := d.deleteIgnoringNotFound(ctx, sec); err != nil {
			return err
		}
	}
	d.deleteServerGroup(ctx, cred, serverGroupName(stackID, ""))
	for _, ng := range st.NodeGroups {
		if !isMaster(ng) {
			d.deleteServerGroup(ctx, cred, serverGroupName(stackID, ng.Name))
		}
	}
	return nil
}

// deleteServerGroup removes a server group; a failure leaks the group but
// does not block the deletion (magnum-cluster-api behaves the same).
func (d *Driver) deleteServerGroup(ctx context.Context, cred driver.Credentials, name string) {
	if d.opts.ServerGroups != nil {
		_ = d.opts.ServerGroups.Delete(ctx, cred, name)
	}
}

// retirePreviousCredential deletes the application credential a rotation
// replaced, once the OpenStackCluster is ready again (CAPO works with the
// new one).
func (d *Driver) retirePreviousCredential(ctx context.Context, stackID string, obs Observed) error {
	if d.opts.AppCredentials == nil || obs.Infra == nil {
		return nil
	}
	if ready, _, _ := unstructured.NestedBool(obs.Infra.Object, "status", "ready"); !ready {
		return nil
	}
	s, err := d.getSecret(ctx, stackID+SuffixCloudConfig)
	if err != nil || s == nil {
		return err
	}
	prev := s.Annotations[annotationPreviousAppCred]
	if prev == "" {
		return nil
	}
	user, id, _ := strings.Cut(prev, "/")
	if err := d.opts.AppCredentials.Delete(ctx, user, id); err != nil {
		return fmt.Errorf("delete previous application credential: %w", err)
	}
	cur, _ := appCredentialFromSecret(s)
	next, err := CloudConfigSecret(d.opts.Namespace, stackID, s.Labels[LabelClusterUUID], d.opts.Cloud, cur)
	if err != nil {
		return err
	}
	return d.apply(ctx, next)
}
