package envtest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels and annotations the simulator reads and writes (Cluster API's).
const (
	simLabelDeployment   = "topology.cluster.x-k8s.io/deployment-name"
	simLabelControlPlane = "cluster.x-k8s.io/control-plane"
	simAnnotationDelete  = "cluster.x-k8s.io/delete-machine"
	// SimEndpointHost is the control-plane endpoint the simulator reports.
	SimEndpointHost = "203.0.113.10"
)

var gvkOpenStackCluster = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackCluster"}

// simMode is how far the simulator takes a cluster.
type simMode int

const (
	simProvisioning simMode = iota // objects exist, nothing is ready
	simReady                       // every object reports ready
	simFailed                      // the infrastructure reports an error
)

// Sim plays the Cluster API controllers (topology, KubeadmControlPlane,
// MachineDeployment/MachineSet, garbage collection) and CAPO for the
// Clusters of one namespace, on a real API server: it creates the
// KubeadmControlPlane, the MachineDeployments and an OpenStackCluster of
// each topology Cluster, keeps one Machine per replica (removing Machines
// annotated cluster.x-k8s.io/delete-machine first when scaling down), and
// writes statuses when a cluster is marked ready or failed. Objects whose
// Cluster is gone are deleted. Writes happen only when something changes,
// so the simulator causes no watch traffic of its own at rest.
type Sim struct {
	c  client.Client
	ns string

	mu        sync.Mutex
	modes     map[string]simMode
	failure   map[string]string
	lastWrite map[string]time.Time
	seq       int
	errs      []error
	paused    bool
}

// Pause stops (true) or resumes (false) the simulator's steps, so a test
// can look at what the code under test wrote before a controller reacts.
func (s *Sim) Pause(p bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = p
}

// NewSim returns a simulator of namespace ns.
func NewSim(c client.Client, ns string) *Sim {
	return &Sim{c: c, ns: ns, modes: map[string]simMode{}, failure: map[string]string{}, lastWrite: map[string]time.Time{}}
}

// Run steps the simulator every interval until ctx ends.
func (s *Sim) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := s.Step(ctx); err != nil && ctx.Err() == nil {
			s.mu.Lock()
			s.errs = append(s.errs, err)
			s.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Errors returns the step errors seen so far (conflicts are expected and
// retried; tests report the rest when something does not converge).
func (s *Sim) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

// MarkReady makes every object of the cluster report ready, now and after
// later changes (resize).
func (s *Sim) MarkReady(stack string) { s.setMode(stack, simReady, "") }

// MarkFailed makes the cluster's machines fail with message, as CAPO does
// on a Nova error.
func (s *Sim) MarkFailed(stack, message string) { s.setMode(stack, simFailed, message) }

func (s *Sim) setMode(stack string, m simMode, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modes[stack], s.failure[stack] = m, msg
	delete(s.lastWrite, stack)
}

// LastWrite is when the simulator last changed an object of the cluster
// (zero before any change after the last Mark call).
func (s *Sim) LastWrite(stack string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastWrite[stack]
}

func (s *Sim) wrote(stack string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastWrite[stack] = time.Now()
}

func (s *Sim) mode(stack string) (simMode, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modes[stack], s.failure[stack]
}

func (s *Sim) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// Step runs one pass over the namespace.
func (s *Sim) Step(ctx context.Context) error {
	s.mu.Lock()
	paused := s.paused
	s.mu.Unlock()
	if paused {
		return nil
	}
	var clusters clusterv1.ClusterList
	if err := s.c.List(ctx, &clusters, client.InNamespace(s.ns)); err != nil {
		return err
	}
	live := map[string]bool{}
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if c.DeletionTimestamp != nil {
			continue
		}
		live[c.Name] = true
		if err := s.cluster(ctx, c); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	return s.collect(ctx, live)
}

// cluster reconciles the objects of one topology Cluster.
func (s *Sim) cluster(ctx context.Context, c *clusterv1.Cluster) error {
	stack := c.Name
	mode, failure := s.mode(stack)
	topo := c.Spec.Topology
	version := topo.Version

	// Control plane.
	kcp, err := s.ensureKCP(ctx, stack, int32Or(topo.ControlPlane.Replicas, 1), version)
	if err != nil {
		return err
	}
	cpMachines, err := s.ensureMachines(ctx, stack, "", int(*kcp.Spec.Replicas), version)
	if err != nil {
		return err
	}

	// Workers.
	want := map[string]bool{}
	var mds []*clusterv1.MachineDeployment
	workerMachines := map[string][]clusterv1.Machine{}
	for _, t := range topo.Workers.MachineDeployments {
		want[t.Name] = true
		md, err := s.ensureMD(ctx, stack, t.Name, int32Or(t.Replicas, 1), version)
		if err != nil {
			return err
		}
		ms, err := s.ensureMachines(ctx, stack, t.Name, int(*md.Spec.Replicas), version)
		if err != nil {
			return err
		}
		mds = append(mds, md)
		workerMachines[t.Name] = ms
	}
	var all clusterv1.MachineDeploymentList
	if err := s.c.List(ctx, &all, client.InNamespace(s.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: stack}); err != nil {
		return err
	}
	for i := range all.Items {
		if n := all.Items[i].Labels[simLabelDeployment]; !want[n] {
			if err := s.deleteMD(ctx, stack, &all.Items[i]); err != nil {
				return err
			}
		}
	}

	osc, err := s.ensureOSC(ctx, stack)
	if err != nil {
		return err
	}
	if mode == simProvisioning {
		return nil
	}

	// Statuses, leaves first; the Cluster last.
	ready := mode == simReady
	for _, m := range append(slices.Clone(cpMachines), flatten(workerMachines)...) {
		if err := s.machineStatus(ctx, stack, &m, ready, failure); err != nil {
			return err
		}
	}
	if ready {
		if err := s.kcpStatus(ctx, stack, kcp, version); err != nil {
			return err
		}
	}
	for _, md := range mds {
		if err := s.mdStatus(ctx, stack, md, ready, failure); err != nil {
			return err
		}
	}
	if err := s.oscStatus(ctx, stack, osc, ready, failure); err != nil {
		return err
	}
	return s.clusterStatus(ctx, c, ready, failure)
}

func flatten(m map[string][]clusterv1.Machine) []clusterv1.Machine {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []clusterv1.Machine
	for _, k := range keys {
		out = append(out, m[k]...)
	}
	return out
}

func int32Or(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func infraRef(kind, name string) clusterv1.ContractVersionedObjectReference {
	return clusterv1.ContractVersionedObjectReference{APIGroup: gvkOpenStackCluster.Group, Kind: kind, Name: name}
}

func (s *Sim) ensureKCP(ctx context.Context, stack string, replicas int32, version string) (*controlplanev1.KubeadmControlPlane, error) {
	var kcp controlplanev1.KubeadmControlPlane
	key := client.ObjectKey{Namespace: s.ns, Name: stack + "-control-plane"}
	err := s.c.Get(ctx, key, &kcp)
	if apierrors.IsNotFound(err) {
		kcp = controlplanev1.KubeadmControlPlane{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: s.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: stack}},
			Spec: controlplanev1.KubeadmControlPlaneSpec{
				Replicas: &replicas, Version: version,
				MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{
					Spec: controlplanev1.KubeadmControlPlaneMachineTemplateSpec{InfrastructureRef: infraRef("OpenStackMachineTemplate", stack+"-control-plane")},
				},
			},
		}
		if err := s.c.Create(ctx, &kcp); err != nil {
			return nil, fmt.Errorf("create KubeadmControlPlane: %w", err)
		}
		s.wrote(stack)
		return &kcp, nil
	}
	if err != nil {
		return nil, err
	}
	if *kcp.Spec.Replicas != replicas || kcp.Spec.Version != version {
		kcp.Spec.Replicas, kcp.Spec.Version = &replicas, version
		if err := s.c.Update(ctx, &kcp); err != nil {
			return nil, err
		}
		s.wrote(stack)
	}
	return &kcp, nil
}

func (s *Sim) ensureMD(ctx context.Context, stack, name string, replicas int32, version string) (*clusterv1.MachineDeployment, error) {
	var md clusterv1.MachineDeployment
	key := client.ObjectKey{Namespace: s.ns, Name: stack + "-" + name}
	err := s.c.Get(ctx, key, &md)
	if apierrors.IsNotFound(err) {
		lbls := map[string]string{clusterv1.ClusterNameLabel: stack, simLabelDeployment: name}
		secret := stack + "-" + name + "-bootstrap"
		md = clusterv1.MachineDeployment{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: s.ns, Labels: lbls},
			Spec: clusterv1.MachineDeploymentSpec{
				ClusterName: stack, Replicas: &replicas,
				Selector: metav1.LabelSelector{MatchLabels: lbls},
				Template: clusterv1.MachineTemplateSpec{
					ObjectMeta: clusterv1.ObjectMeta{Labels: lbls},
					Spec: clusterv1.MachineSpec{
						ClusterName: stack, Version: version,
						Bootstrap:         clusterv1.Bootstrap{DataSecretName: &secret},
						InfrastructureRef: infraRef("OpenStackMachineTemplate", stack+"-"+name),
					},
				},
			},
		}
		if err := s.c.Create(ctx, &md); err != nil {
			return nil, fmt.Errorf("create MachineDeployment: %w", err)
		}
		s.wrote(stack)
		return &md, nil
	}
	if err != nil {
		return nil, err
	}
	if *md.Spec.Replicas != replicas {
		md.Spec.Replicas = &replicas
		if err := s.c.Update(ctx, &md); err != nil {
			return nil, err
		}
		s.wrote(stack)
	}
	return &md, nil
}

func (s *Sim) deleteMD(ctx context.Context, stack string, md *clusterv1.MachineDeployment) error {
	var ms clusterv1.MachineList
	if err := s.c.List(ctx, &ms, client.InNamespace(s.ns), client.MatchingLabels{
		clusterv1.ClusterNameLabel: stack, simLabelDeployment: md.Labels[simLabelDeployment]}); err != nil {
		return err
	}
	for i := range ms.Items {
		if err := client.IgnoreNotFound(s.c.Delete(ctx, &ms.Items[i])); err != nil {
			return err
		}
	}
	s.wrote(stack)
	return client.IgnoreNotFound(s.c.Delete(ctx, md))
}

// ensureMachines keeps replicas Machines for the control plane (nodegroup
// "") or a worker nodegroup and returns them sorted by name.
func (s *Sim) ensureMachines(ctx context.Context, stack, nodegroup string, replicas int, version string) ([]clusterv1.Machine, error) {
	sel := client.MatchingLabels{clusterv1.ClusterNameLabel: stack}
	if nodegroup == "" {
		sel[simLabelControlPlane] = ""
	} else {
		sel[simLabelDeployment] = nodegroup
	}
	var ms clusterv1.MachineList
	if err := s.c.List(ctx, &ms, client.InNamespace(s.ns), sel); err != nil {
		return nil, err
	}
	items := slices.DeleteFunc(ms.Items, func(m clusterv1.Machine) bool { return m.DeletionTimestamp != nil })
	// Scale down: annotated Machines first, then the newest names.
	sort.SliceStable(items, func(i, j int) bool {
		_, di := items[i].Annotations[simAnnotationDelete]
		_, dj := items[j].Annotations[simAnnotationDelete]
		if di != dj {
			return !di
		}
		return items[i].Name < items[j].Name
	})
	for len(items) > replicas {
		last := items[len(items)-1]
		if err := client.IgnoreNotFound(s.c.Delete(ctx, &last)); err != nil {
			return nil, err
		}
		items = items[:len(items)-1]
		s.wrote(stack)
	}
	for len(items) < replicas {
		n := s.next()
		part := nodegroup
		if part == "" {
			part = "control-plane"
		}
		name := fmt.Sprintf("%s-%s-%04d", stack, part, n)
		secret := name + "-bootstrap"
		m := clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns, Labels: map[string]string(sel)},
			Spec: clusterv1.MachineSpec{
				ClusterName: stack, Version: version,
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: &secret},
				InfrastructureRef: infraRef("OpenStackMachine", name),
				ProviderID:        fmt.Sprintf("openstack:///00000000-0000-4000-8000-%012d", n),
			},
		}
		if err := s.c.Create(ctx, &m); err != nil {
			return nil, fmt.Errorf("create Machine: %w", err)
		}
		s.wrote(stack)
		items = append(items, m)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return items, nil
}

// ServerID returns the Nova server UUID of a Machine, as nodes_to_remove
// names it.
func ServerID(m *clusterv1.Machine) string {
	return m.Spec.ProviderID[len("openstack:///"):]
}

// MachineAddress is the address the simulator gives a Machine.
func MachineAddress(m *clusterv1.Machine) string {
	var n int
	_, _ = fmt.Sscanf(m.Spec.ProviderID, "openstack:///00000000-0000-4000-8000-%012d", &n)
	return fmt.Sprintf("10.0.%d.%d", n/250, n%250+2)
}

func (s *Sim) ensureOSC(ctx context.Context, stack string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkOpenStackCluster)
	err := s.c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: stack}, u)
	if apierrors.IsNotFound(err) {
		u = &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"identityRef":    map[string]any{"cloudName": "default", "name": stack + "-cloud-config", "type": "Secret"},
			"managedSubnets": []any{map[string]any{"cidr": "10.0.0.0/24"}},
		}}}
		u.SetGroupVersionKind(gvkOpenStackCluster)
		u.SetNamespace(s.ns)
		u.SetName(stack)
		u.SetLabels(map[string]string{clusterv1.ClusterNameLabel: stack})
		if err := s.c.Create(ctx, u); err != nil {
			return nil, fmt.Errorf("create OpenStackCluster: %w", err)
		}
		s.wrote(stack)
		return u, nil
	}
	return u, err
}

// setCond sets a condition, keeping its transition time when its status
// does not change.
func setCond(conds *[]metav1.Condition, typ string, ok bool, reason, msg string) {
	st := metav1.ConditionTrue
	if !ok {
		st = metav1.ConditionFalse
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg})
}

func (s *Sim) machineStatus(ctx context.Context, stack string, m *clusterv1.Machine, ready bool, failure string) error {
	next := m.DeepCopy()
	st := &next.Status
	if ready {
		setCond(&st.Conditions, clusterv1.MachineInfrastructureReadyCondition, true, "Ready", "")
		setCond(&st.Conditions, clusterv1.MachineNodeHealthyCondition, true, "NodeHealthy", "")
		st.NodeRef = clusterv1.MachineNodeReference{Name: m.Name}
		st.Addresses = clusterv1.MachineAddresses{{Type: clusterv1.MachineInternalIP, Address: MachineAddress(m)}}
		st.Phase = string(clusterv1.MachinePhaseRunning)
	} else {
		setCond(&st.Conditions, clusterv1.MachineInfrastructureReadyCondition, false, "InstanceCreateFailed", failure)
		setCond(&st.Conditions, clusterv1.MachineNodeHealthyCondition, false, "NodeDoesNotExist", "")
		st.Phase = string(clusterv1.MachinePhaseFailed)
	}
	return s.writeStatus(ctx, stack, m, next, equality.Semantic.DeepEqual(m.Status, next.Status))
}

func (s *Sim) kcpStatus(ctx context.Context, stack string, kcp *controlplanev1.KubeadmControlPlane, version string) error {
	next := kcp.DeepCopy()
	st := &next.Status
	yes := true
	r := *kcp.Spec.Replicas
	st.Initialization.ControlPlaneInitialized = &yes
	setCond(&st.Conditions, clusterv1.AvailableCondition, true, "Available", "")
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpToDateReplicas = &r, &r, &r, &r
	st.Version = version
	st.ObservedGeneration = kcp.Generation
	return s.writeStatus(ctx, stack, kcp, next, equality.Semantic.DeepEqual(kcp.Status, next.Status))
}

func (s *Sim) mdStatus(ctx context.Context, stack string, md *clusterv1.MachineDeployment, ready bool, failure string) error {
	next := md.DeepCopy()
	st := &next.Status
	r := *md.Spec.Replicas
	zero := int32(0)
	st.ObservedGeneration = md.Generation
	st.Replicas = &r
	if ready {
		st.ReadyReplicas, st.AvailableReplicas, st.UpToDateReplicas = &r, &r, &r
		st.Phase = string(clusterv1.MachineDeploymentPhaseRunning)
		setCond(&st.Conditions, clusterv1.AvailableCondition, true, "Available", "")
	} else {
		st.ReadyReplicas, st.AvailableReplicas, st.UpToDateReplicas = &zero, &zero, &r
		st.Phase = string(clusterv1.MachineDeploymentPhaseFailed)
		setCond(&st.Conditions, clusterv1.AvailableCondition, false, "NotAvailable", failure)
	}
	return s.writeStatus(ctx, stack, md, next, equality.Semantic.DeepEqual(md.Status, next.Status))
}

func (s *Sim) oscStatus(ctx context.Context, stack string, osc *unstructured.Unstructured, ready bool, failure string) error {
	next := osc.DeepCopy()
	_ = unstructured.SetNestedField(next.Object, ready, "status", "ready")
	if !ready {
		_ = unstructured.SetNestedField(next.Object, failure, "status", "failureMessage")
	} else {
		unstructured.RemoveNestedField(next.Object, "status", "failureMessage")
	}
	return s.writeStatus(ctx, stack, osc, next, equality.Semantic.DeepEqual(osc.Object["status"], next.Object["status"]))
}

func (s *Sim) clusterStatus(ctx context.Context, c *clusterv1.Cluster, ready bool, failure string) error {
	stack := c.Name
	if ready && c.Spec.ControlPlaneEndpoint.Host == "" {
		patch := client.MergeFrom(c.DeepCopy())
		c.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: SimEndpointHost, Port: 6443}
		if err := s.c.Patch(ctx, c, patch); err != nil {
			return err
		}
		s.wrote(stack)
	}
	next := c.DeepCopy()
	st := &next.Status
	st.ObservedGeneration = c.Generation
	if ready {
		setCond(&st.Conditions, clusterv1.ClusterInfrastructureReadyCondition, true, "Ready", "")
	} else {
		setCond(&st.Conditions, clusterv1.ClusterInfrastructureReadyCondition, false, "InstanceCreateFailed", failure)
	}
	setCond(&st.Conditions, clusterv1.ClusterControlPlaneAvailableCondition, ready, "Available", "")
	setCond(&st.Conditions, clusterv1.ClusterWorkersAvailableCondition, ready, "WorkersAvailable", "")
	setCond(&st.Conditions, clusterv1.ClusterTopologyReconciledCondition, true, "ReconcileSucceeded", "")
	if ready {
		st.Phase = string(clusterv1.ClusterPhaseProvisioned)
	}
	return s.writeStatus(ctx, stack, c, next, equality.Semantic.DeepEqual(c.Status, next.Status))
}

func (s *Sim) writeStatus(ctx context.Context, stack string, _, next client.Object, same bool) error {
	if same {
		return nil
	}
	if err := s.c.Status().Update(ctx, next); err != nil {
		return fmt.Errorf("status of %s: %w", next.GetName(), err)
	}
	s.wrote(stack)
	return nil
}

// collect deletes the objects whose Cluster is gone, as the owner
// references and finalizers of a real management cluster would.
func (s *Sim) collect(ctx context.Context, live map[string]bool) error {
	lists := []client.ObjectList{&clusterv1.MachineList{}, &clusterv1.MachineDeploymentList{}, &controlplanev1.KubeadmControlPlaneList{}}
	osc := &unstructured.UnstructuredList{}
	osc.SetGroupVersionKind(gvkOpenStackCluster.GroupVersion().WithKind("OpenStackClusterList"))
	lists = append(lists, osc)
	for _, l := range lists {
		if err := s.c.List(ctx, l, client.InNamespace(s.ns)); err != nil {
			return err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return err
		}
		for _, it := range items {
			obj := it.(client.Object)
			stack := obj.GetLabels()[clusterv1.ClusterNameLabel]
			if stack == "" || live[stack] || obj.GetDeletionTimestamp() != nil {
				continue
			}
			if err := client.IgnoreNotFound(s.c.Delete(ctx, obj)); err != nil {
				return err
			}
			s.wrote(stack)
		}
	}
	return nil
}
