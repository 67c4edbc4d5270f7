package capi

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func cond(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(testNow.Add(-time.Hour))}
}

func setCond(conds *[]metav1.Condition, c metav1.Condition) {
	for i := range *conds {
		if (*conds)[i].Type == c.Type {
			(*conds)[i] = c
			return
		}
	}
	*conds = append(*conds, c)
}

func statusMachine(name, nodegroup, ip string, healthy bool) clusterv1.Machine {
	m := machine(name, nodegroup, "uuid-"+name)
	m.Status.Addresses = clusterv1.MachineAddresses{{Type: clusterv1.MachineInternalIP, Address: ip}}
	h := metav1.ConditionTrue
	if !healthy {
		h = metav1.ConditionFalse
	}
	m.Status.Conditions = []metav1.Condition{
		cond(clusterv1.MachineNodeHealthyCondition, h, "x", ""),
		cond(clusterv1.MachineInfrastructureReadyCondition, metav1.ConditionTrue, "Ready", ""),
	}
	return *m
}

func readyMD(name string, replicas int32) *clusterv1.MachineDeployment {
	return &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: testStackID + "-" + name + "-x1", Generation: 2,
			Labels: map[string]string{labelClusterName: testStackID, labelDeploymentName: name}},
		Spec: clusterv1.MachineDeploymentSpec{Replicas: ptr(replicas)},
		Status: clusterv1.MachineDeploymentStatus{
			ObservedGeneration: 2, Phase: string(clusterv1.MachineDeploymentPhaseRunning),
			Replicas: ptr(replicas), UpToDateReplicas: ptr(replicas), AvailableReplicas: ptr(replicas), ReadyReplicas: ptr(replicas),
		},
	}
}

// readyWorld is the management cluster of testState once everything runs.
func readyWorld() Observed {
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: testStackID, Namespace: DefaultNamespace, Generation: 3},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "203.0.113.10", Port: 6443},
			Topology:             clusterv1.Topology{Version: "v1.31.1"},
		},
		Status: clusterv1.ClusterStatus{ObservedGeneration: 3, Conditions: []metav1.Condition{
			cond(clusterv1.ClusterInfrastructureReadyCondition, metav1.ConditionTrue, "Ready", ""),
			cond(clusterv1.ClusterControlPlaneAvailableCondition, metav1.ConditionTrue, "Available", ""),
			cond(clusterv1.ClusterWorkersAvailableCondition, metav1.ConditionTrue, "Available", ""),
			cond(clusterv1.ClusterTopologyReconciledCondition, metav1.ConditionTrue, "ReconcileSucceeded", ""),
		}},
	}
	kcp := &controlplanev1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: testStackID + "-cp", Generation: 1},
		Spec:       controlplanev1.KubeadmControlPlaneSpec{Replicas: ptr(int32(3)), Version: "v1.31.1"},
		Status: controlplanev1.KubeadmControlPlaneStatus{
			ObservedGeneration: 1, Version: "v1.31.1",
			Initialization: controlplanev1.KubeadmControlPlaneInitializationStatus{ControlPlaneInitialized: ptr(true)},
			Replicas:       ptr(int32(3)), UpToDateReplicas: ptr(int32(3)), ReadyReplicas: ptr(int32(3)), AvailableReplicas: ptr(int32(3)),
			Conditions: []metav1.Condition{cond(clusterv1.AvailableCondition, metav1.ConditionTrue, "Available", "")},
		},
	}
	return Observed{
		Cluster: c, ControlPlane: kcp,
		MachineDeployments: map[string]*clusterv1.MachineDeployment{"default-worker": readyMD("default-worker", 2), "gpu": readyMD("gpu", 1)},
		Machines: []clusterv1.Machine{
			statusMachine("cp-1", "", "10.0.0.11", true), statusMachine("cp-2", "", "10.0.0.12", true),
			statusMachine("cp-3", "", "10.0.0.13", true),
			statusMachine("w-1", "default-worker", "10.0.0.21", true), statusMachine("w-2", "default-worker", "10.0.0.22", true),
			statusMachine("g-1", "gpu", "10.0.0.31", true),
		},
	}
}

func pollState(status magnum.Status) driver.ClusterState {
	st := testState()
	st.Cluster.StackID = ptr(testStackID)
	st.Cluster.Status = ptr(status)
	for i := range st.NodeGroups {
		st.NodeGroups[i].Status = ptr(status)
	}
	return st
}

// result summarises an Update for the table.
type result struct {
	Cluster    string            // status, or "" when unchanged
	Reason     string            // substring of status_reason ("-" = nil)
	NodeGroups map[string]string // name → status for changed rows
	Deleted    []string
	Health     string
}

func summarize(st driver.ClusterState, upd driver.Update) result {
	r := result{NodeGroups: map[string]string{}, Deleted: upd.DeletedNodeGroups}
	if upd.Cluster != nil {
		if statusOf(upd.Cluster.Status) != statusOf(st.Cluster.Status) {
			r.Cluster = string(statusOf(upd.Cluster.Status))
		}
		r.Reason = "-"
		if upd.Cluster.StatusReason != nil {
			r.Reason = *upd.Cluster.StatusReason
		}
		r.Health = value(upd.Cluster.HealthStatus)
	}
	for _, ng := range upd.NodeGroups {
		// Rows rewritten only for their addresses are not status changes.
		if old, ok := st.NodeGroup(ng.UUID); ok && statusOf(old.Status) == statusOf(ng.Status) {
			continue
		}
		r.NodeGroups[ng.Name] = string(statusOf(ng.Status))
	}
	return r
}

// TestComputeStatus is the conditions → statuses table (driver-capi.md § 5.2).
func TestComputeStatus(t *testing.T) {
	rules := StatusRules{Now: testNow, UpdateGrace: 10 * time.Minute}
	tests := []struct {
		name   string
		status magnum.Status
		edit   func(st *driver.ClusterState, obs *Observed)
		want   result
	}{
		{
			name: "create completes when every condition and nodegroup is ready", status: magnum.StatusCreateInProgress,
			want: result{Cluster: "CREATE_COMPLETE", Reason: "-", Health: "HEALTHY", NodeGroups: map[string]string{
				"default-master": "CREATE_COMPLETE", "default-worker": "CREATE_COMPLETE", "gpu": "CREATE_COMPLETE",
			}},
		},
		{
			name: "no CAPI cluster yet: in progress, health UNKNOWN", status: magnum.StatusCreateInProgress,
			edit: func(_ *driver.ClusterState, obs *Observed) { *obs = Observed{} },
			want: result{Reason: "-", Health: "UNKNOWN", NodeGroups: map[string]string{}},
		},
		{
			name: "infrastructure not ready: reason from the conditions and the machine", status: magnum.StatusCreateInProgress,
			edit: func(_ *driver.ClusterState, obs *Observed) {
				setCond(&obs.Cluster.Status.Conditions, cond(clusterv1.ClusterInfrastructureReadyCondition, metav1.ConditionFalse, "NotReady", "OpenStackCluster is not ready"))
				setCond(&obs.Machines[5].Status.Conditions, cond(clusterv1.MachineInfrastructureReadyCondition, metav1.ConditionFalse, "InstanceCreateFailed", "Quota exceeded for instances"))
			},
			want: result{Reason: "CAPI Cluster InfrastructureReady NotReady: OpenStackCluster is not ready. Machine g-1: Quota exceeded for instances", Health: "HEALTHY",
				NodeGroups: map[string]string{"default-master": "CREATE_COMPLETE", "default-worker": "CREATE_COMPLETE", "gpu": "CREATE_COMPLETE"}},
		},
		{
			name: "a stale observed generation keeps the cluster in progress", status: magnum.StatusCreateInProgress,
			edit: func(_ *driver.ClusterState, obs *Observed) { obs.Cluster.Status.ObservedGeneration = 2 },
			want: result{Reason: "-", Health: "HEALTHY",
				NodeGroups: map[string]string{"default-master": "CREATE_COMPLETE", "default-worker": "CREATE_COMPLETE", "gpu": "CREATE_COMPLETE"}},
		},
		{
			name: "the create deadline turns a stuck cluster CREATE_FAILED", status: magnum.StatusCreateInProgress,
			edit: func(st *driver.ClusterState, obs *Observed) {
				st.Cluster.CreatedAt = testNow.Add(-2 * time.Hour)
				setCond(&obs.Cluster.Status.Conditions, cond(clusterv1.ClusterControlPlaneAvailableCondition, metav1.ConditionFalse, "NotAvailable", "0 of 3 available"))
			},
			want: result{Cluster: "CREATE_FAILED", Reason: "Timed out waiting for the cluster: CAPI Cluster ControlPlaneAvailable NotAvailable: 0 of 3 available", Health: "HEALTHY",
				NodeGroups: map[string]string{"default-master": "CREATE_COMPLETE", "default-worker": "CREATE_COMPLETE", "gpu": "CREATE_COMPLETE"}},
		},
		{
			name: "a CREATE_FAILED cluster that converges becomes CREATE_COMPLETE", status: magnum.StatusCreateFailed,
			edit: func(st *driver.ClusterState, _ *Observed) {
				for i := range st.NodeGroups {
					st.NodeGroups[i].Status = ptr(magnum.StatusCreateComplete)
				}
			},
			want: result{Cluster: "CREATE_COMPLETE", Reason: "-", Health: "HEALTHY", NodeGroups: map[string]string{}},
		},
		{
			name: "the master waits for node_count replicas", status: magnum.StatusUpdateInProgress,
			edit: func(st *driver.ClusterState, _ *Observed) { st.NodeGroups[0].NodeCount = ptr(5) },
			want: result{Reason: "-", Health: "HEALTHY", NodeGroups: map[string]string{"default-worker": "UPDATE_COMPLETE", "gpu": "UPDATE_COMPLETE"}},
		},
		{
			name: "an update waits for the control plane version", status: magnum.StatusUpdateInProgress,
			edit: func(_ *driver.ClusterState, obs *Observed) { obs.Cluster.Spec.Topology.Version = "v1.32.0" },
			want: result{Reason: "-", Health: "HEALTHY",
				NodeGroups: map[string]string{"default-master": "UPDATE_COMPLETE", "default-worker": "UPDATE_COMPLETE", "gpu": "UPDATE_COMPLETE"}},
		},
		{
			name: "a topology that keeps failing fails the update", status: magnum.StatusUpdateInProgress,
			edit: func(_ *driver.ClusterState, obs *Observed) {
				setCond(&obs.Cluster.Status.Conditions, cond(clusterv1.ClusterTopologyReconciledCondition, metav1.ConditionFalse,
					clusterv1.ClusterTopologyReconciledFailedReason, "admission webhook denied: version cannot be increased"))
			},
			want: result{Cluster: "UPDATE_FAILED", Reason: "TopologyReconciled ReconcileFailed: admission webhook denied", Health: "HEALTHY",
				NodeGroups: map[string]string{"default-master": "UPDATE_COMPLETE", "default-worker": "UPDATE_COMPLETE", "gpu": "UPDATE_COMPLETE"}},
		},
		{
			name: "a failed MachineDeployment fails its nodegroup and the cluster", status: magnum.StatusUpdateInProgress,
			edit: func(_ *driver.ClusterState, obs *Observed) {
				obs.MachineDeployments["gpu"].Status.Phase = string(clusterv1.MachineDeploymentPhaseFailed)
			},
			want: result{Cluster: "UPDATE_FAILED", Reason: "Nodegroup gpu: MachineDeployment", Health: "HEALTHY",
				NodeGroups: map[string]string{"default-master": "UPDATE_COMPLETE", "default-worker": "UPDATE_COMPLETE", "gpu": "UPDATE_FAILED"}},
		},
		{
			name: "a worker below its replicas stays in progress", status: magnum.StatusUpdateInProgress,
			edit: func(_ *driver.ClusterState, obs *Observed) {
				obs.MachineDeployments["default-worker"].Status.AvailableReplicas = ptr(int32(1))
			},
			want: result{Reason: "-", Health: "HEALTHY", NodeGroups: map[string]string{"default-master": "UPDATE_COMPLETE", "gpu": "UPDATE_COMPLETE"}},
		},
		{
			name: "a deleted nodegroup is destroyed once its machines are gone", status: magnum.StatusUpdateComplete,
			edit: func(st *driver.ClusterState, obs *Observed) {
				st.NodeGroups[2].Status = ptr(magnum.StatusDeleteInProgress)
				delete(obs.MachineDeployments, "gpu")
				obs.Machines = obs.Machines[:5]
			},
			want: result{Deleted: []string{"ng-gpu"}, Reason: "-", Health: "HEALTHY", NodeGroups: map[string]string{}},
		},
		{
			name: "a deleted nodegroup waits for its machines", status: magnum.StatusUpdateComplete,
			edit: func(st *driver.ClusterState, obs *Observed) {
				st.NodeGroups[2].Status = ptr(magnum.StatusDeleteInProgress)
				delete(obs.MachineDeployments, "gpu")
			},
			want: result{Reason: "-", Health: "HEALTHY", NodeGroups: map[string]string{}},
		},
		{
			name: "an unhealthy node makes the cluster UNHEALTHY", status: magnum.StatusCreateComplete,
			edit: func(_ *driver.ClusterState, obs *Observed) {
				setCond(&obs.Machines[3].Status.Conditions, cond(clusterv1.MachineNodeHealthyCondition, metav1.ConditionFalse, "NodeNotReady", ""))
			},
			want: result{Reason: "-", Health: "UNHEALTHY", NodeGroups: map[string]string{}},
		},
		{
			name: "deleting while the Cluster exists refreshes only the reason", status: magnum.StatusDeleteInProgress,
			edit: func(_ *driver.ClusterState, obs *Observed) {
				obs.Infra = &unstructured.Unstructured{Object: map[string]any{
					"status": map[string]any{"failureMessage": "load balancer in use"},
				}}
				setCond(&obs.Cluster.Status.Conditions, cond(clusterv1.ClusterInfrastructureReadyCondition, metav1.ConditionFalse, "Deleting", "deleting"))
			},
			want: result{Reason: "OpenStackCluster: load balancer in use", Health: "HEALTHY", NodeGroups: map[string]string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := pollState(tt.status)
			if tt.status == magnum.StatusCreateComplete || tt.status == magnum.StatusUpdateComplete || tt.status == magnum.StatusDeleteInProgress {
				for i := range st.NodeGroups {
					st.NodeGroups[i].Status = ptr(magnum.StatusCreateComplete)
				}
			}
			obs := readyWorld()
			if tt.edit != nil {
				tt.edit(&st, &obs)
			}
			got := summarize(st, ComputeStatus(st, obs, rules))
			if tt.want.Reason != "-" && got.Reason != "-" && strings.Contains(got.Reason, tt.want.Reason) {
				got.Reason = tt.want.Reason
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeStatusFields(t *testing.T) {
	st := pollState(magnum.StatusCreateInProgress)
	upd := ComputeStatus(st, readyWorld(), StatusRules{Now: testNow})
	cl := upd.Cluster
	if value(cl.APIAddress) != "https://203.0.113.10:6443" || value(cl.COEVersion) != "v1.31.1" {
		t.Errorf("api_address %v coe_version %v", value(cl.APIAddress), value(cl.COEVersion))
	}
	wantReason := map[string]string{
		"api": "ok", "cp-1-osm.Ready": "True", "cp-2-osm.Ready": "True", "cp-3-osm.Ready": "True",
		"w-1-osm.Ready": "True", "w-2-osm.Ready": "True", "g-1-osm.Ready": "True",
	}
	if diff := cmp.Diff(wantReason, cl.HealthStatusReason); diff != "" {
		t.Errorf("health_status_reason (-want +got):\n%s", diff)
	}
	addrs := map[string][]string{}
	for _, ng := range upd.NodeGroups {
		addrs[ng.Name] = ng.NodeAddresses
	}
	want := map[string][]string{
		"default-master": {"10.0.0.11", "10.0.0.12", "10.0.0.13"},
		"default-worker": {"10.0.0.21", "10.0.0.22"},
		"gpu":            {"10.0.0.31"},
	}
	if diff := cmp.Diff(want, addrs); diff != "" {
		t.Errorf("node addresses (-want +got):\n%s", diff)
	}

	t.Run("the API endpoint is reported before the cluster is ready", func(t *testing.T) {
		obs := readyWorld()
		setCond(&obs.Cluster.Status.Conditions, cond(clusterv1.ClusterWorkersAvailableCondition, metav1.ConditionFalse, "NotAvailable", ""))
		upd := ComputeStatus(st, obs, StatusRules{Now: testNow})
		if statusOf(upd.Cluster.Status) != magnum.StatusCreateInProgress || value(upd.Cluster.APIAddress) == "" {
			t.Errorf("status %v api_address %v", upd.Cluster.Status, upd.Cluster.APIAddress)
		}
	})
	t.Run("the autoscaler's size flows back into node_count", func(t *testing.T) {
		st := pollState(magnum.StatusUpdateComplete)
		st.Cluster.Labels["auto_scaling_enabled"] = "true"
		obs := readyWorld()
		obs.MachineDeployments["default-worker"].Spec.Replicas = ptr(int32(5))
		upd := ComputeStatus(st, obs, StatusRules{Now: testNow})
		i := slices.IndexFunc(upd.NodeGroups, func(ng magnum.NodeGroup) bool { return ng.Name == "default-worker" })
		if i < 0 || intValue(upd.NodeGroups[i].NodeCount) != 5 {
			t.Errorf("node groups = %+v", upd.NodeGroups)
		}
	})
	t.Run("nothing changed, nothing written", func(t *testing.T) {
		st := pollState(magnum.StatusCreateInProgress)
		first := ComputeStatus(st, readyWorld(), StatusRules{Now: testNow})
		st = applyUpdate(st, first)
		if again := ComputeStatus(st, readyWorld(), StatusRules{Now: testNow}); again.Changed() {
			t.Errorf("second pass changed %+v", again)
		}
	})
	t.Run("status_reason is capped at the column size", func(t *testing.T) {
		obs := readyWorld()
		setCond(&obs.Cluster.Status.Conditions, cond(clusterv1.ClusterInfrastructureReadyCondition, metav1.ConditionFalse, "X", strings.Repeat("é", 300)))
		upd := ComputeStatus(st, obs, StatusRules{Now: testNow})
		if n := len(value(upd.Cluster.StatusReason)); n > statusReasonMax || n == 0 {
			t.Errorf("status_reason has %d bytes", n)
		}
	})
}

// TestDeleteDeadline: a deletion that makes no progress for DeleteTimeout
// is DELETE_FAILED with what blocks it; progress (a new reason, a newer
// row or a newer deletion) starts the period again.
func TestDeleteDeadline(t *testing.T) {
	base := func(updatedAgo, deletedAgo time.Duration) (driver.ClusterState, Observed) {
		st := pollState(magnum.StatusDeleteInProgress)
		for i := range st.NodeGroups {
			st.NodeGroups[i].Status = ptr(magnum.StatusCreateComplete)
		}
		obs := readyWorld()
		obs.Infra = &unstructured.Unstructured{Object: map[string]any{
			"status": map[string]any{"failureMessage": "load balancer in use"},
		}}
		del := metav1.NewTime(testNow.Add(-deletedAgo))
		obs.Cluster.DeletionTimestamp = &del
		updated := testNow.Add(-updatedAgo)
		st.Cluster.CreatedAt = testNow.Add(-48 * time.Hour)
		st.Cluster.UpdatedAt = &updated
		// The row already carries the reason the poll computes.
		if upd := ComputeStatus(st, obs, StatusRules{Now: testNow}); upd.Cluster != nil {
			st.Cluster.StatusReason = upd.Cluster.StatusReason
		}
		return st, obs
	}
	rules := StatusRules{Now: testNow, UpdateGrace: 10 * time.Minute, DeleteTimeout: time.Hour}
	for _, tt := range []struct {
		name                   string
		updatedAgo, deletedAgo time.Duration
		newReason              bool
		zeroTimeout            bool
		want                   string
	}{
		{name: "no progress for longer than the timeout", updatedAgo: 2 * time.Hour, deletedAgo: 2 * time.Hour, want: "DELETE_FAILED"},
		{name: "row changed recently", updatedAgo: 10 * time.Minute, deletedAgo: 2 * time.Hour},
		{name: "deletion issued again recently", updatedAgo: 2 * time.Hour, deletedAgo: 10 * time.Minute},
		{name: "the reason changes", updatedAgo: 2 * time.Hour, deletedAgo: 2 * time.Hour, newReason: true},
		{name: "no timeout configured", updatedAgo: 2 * time.Hour, deletedAgo: 2 * time.Hour, zeroTimeout: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, obs := base(tt.updatedAgo, tt.deletedAgo)
			if tt.newReason {
				st.Cluster.StatusReason = ptr("an older reason")
			}
			r := rules
			if tt.zeroTimeout {
				r.DeleteTimeout = 0
			}
			upd := ComputeStatus(st, obs, r)
			got := ""
			if upd.Cluster != nil && statusOf(upd.Cluster.Status) != magnum.StatusDeleteInProgress {
				got = string(statusOf(upd.Cluster.Status))
			}
			if got != tt.want {
				t.Fatalf("status %q, want %q", got, tt.want)
			}
			if tt.want != "" && !strings.Contains(value(upd.Cluster.StatusReason), "Timed out waiting for the deletion: OpenStackCluster: load balancer in use") {
				t.Errorf("status_reason %q", value(upd.Cluster.StatusReason))
			}
		})
	}
}
