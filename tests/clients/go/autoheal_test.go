package clients

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/clusters"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/clustertemplates"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/nodegroups"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	ahopenstack "k8s.io/cloud-provider-openstack/pkg/autohealing/cloudprovider/openstack"
	ahconfig "k8s.io/cloud-provider-openstack/pkg/autohealing/config"
	"k8s.io/cloud-provider-openstack/pkg/autohealing/healthcheck"
)

// TestAutoHealer drives magnum-auto-healer's OpenStack provider
// (cloud-provider-openstack's pkg/autohealing, imported unmodified) against
// the service: Enabled at microversion latest, the health status update
// with its Python-literal reason, and the two-step repair of a worker
// (soft reboot first, then a resize with nodes_to_remove), with a fake
// Kubernetes API for the node and the Nova double for the server (the
// harness answers the server calls in front of the OpenStack double).
func TestAutoHealer(t *testing.T) {
	needEnv(t, "OPENKEEL_TEST_GOPHERCLOUD")
	s := newStack(t)
	c11 := gcClient(t, s, "demo", "")
	var clusterID string

	step(t, s, "cluster with auto_healing_enabled reaches CREATE_COMPLETE", func(t *testing.T) {
		f := false
		ct, err := clustertemplates.Create(ctx(t), c11, clustertemplates.CreateOpts{
			Name: "ah-ct", COE: "kubernetes", ImageID: s.ImageID, ExternalNetworkID: s.ExtNetID,
			FlavorID: s.FlavorSmall, MasterFlavorID: s.FlavorSmall, KeyPairID: s.Keypair,
			FloatingIPEnabled: &f, MasterLBEnabled: &f,
			Labels: map[string]string{"kube_tag": "v1.31.1", "auto_healing_enabled": "true", "auto_healing_controller": "magnum-auto-healer"},
		}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		two := 2
		id, err := clusters.Create(ctx(t), c11, clusters.CreateOpts{ClusterTemplateID: ct.UUID, Name: "ah-c", NodeCount: &two, Keypair: s.Keypair}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		clusterID = id
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), id, 2*time.Minute, "CREATE_COMPLETE")
	})
	if clusterID == "" {
		t.Fatal("no cluster")
	}

	// The provider as NewOpenStackCloudProvider builds it: Magnum at
	// "latest"; Nova and a Heat client from the same Keystone session (the
	// catalog of this stack has no Heat, so its client points at a path
	// the double does not serve, as a cloud without Heat would answer).
	provider := gcProvider(t, s, "demo")
	magnumClient := gcClient(t, s, "demo", "latest")
	nova, err := openstack.NewComputeV2(provider, gophercloud.EndpointOpts{Region: s.Region})
	if err != nil {
		t.Fatalf("compute endpoint: %v", err)
	}
	heat := &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: s.OpenStackURL + "/orchestration/v1/" + s.id.Projects["demo"] + "/"}

	worker, err := nodegroups.Get(ctx(t), magnumClient, clusterID, "default-worker").Extract()
	if err != nil || len(worker.NodeAddresses) != 2 {
		t.Fatalf("default-worker: %v %+v", err, worker)
	}
	// The server of the first worker, as the fake driver names it.
	broken := nodeOf(clusterID, worker.Name, 0)
	if !slices.Contains(worker.NodeAddresses, broken.Address) {
		t.Fatalf("node %s (%s) is not in default-worker %v", broken.Name, broken.Address, worker.NodeAddresses)
	}
	node := &apiv1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: broken.Name},
		Spec:       apiv1.NodeSpec{Unschedulable: true},
		Status: apiv1.NodeStatus{
			// A machine-id is the server UUID without dashes.
			NodeInfo:   apiv1.NodeSystemInfo{MachineID: strings.ReplaceAll(broken.ServerID, "-", "")},
			Addresses:  []apiv1.NodeAddress{{Type: apiv1.NodeInternalIP, Address: broken.Address}},
			Conditions: []apiv1.NodeCondition{{Type: apiv1.NodeReady, Status: apiv1.ConditionFalse}},
		},
	}
	kube := kubefake.NewSimpleClientset(node)
	healer := ahopenstack.CloudProvider{
		KubeClient: kube, Nova: nova, Heat: heat, Magnum: magnumClient,
		Config: ahconfig.Config{ClusterName: clusterID, RebuildDelayAfterReboot: time.Millisecond},
	}

	step(t, s, "Enabled is false at latest: the 1.13 rename hides stack_id (clients.md § 11.1)", func(t *testing.T) {
		if healer.Enabled(ctx(t)) {
			t.Error("Enabled() = true, want false (no stack_id at 1.13+)")
		}
		var raw map[string]any
		s.api(t, s.id.Token(t, "demo", "demo"), http.MethodGet, "/v1/clusters/"+clusterID, "latest", nil, &raw)
		if _, has := raw["stack_id"]; has || raw["cluster_id"] == nil {
			t.Errorf("cluster at latest: stack_id present or cluster_id missing: %v", raw)
		}
		if raw["labels"].(map[string]any)["auto_healing_enabled"] != "true" {
			t.Errorf("labels: %v", raw["labels"])
		}
	})
	step(t, s, "UpdateHealthStatus: HEALTHY with a Python-literal reason, status stays *_COMPLETE", func(t *testing.T) {
		if err := healer.UpdateHealthStatus(ctx(t), nil, nil); err != nil {
			t.Fatal(err)
		}
		cl, err := clusters.Get(ctx(t), magnumClient, clusterID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if cl.HealthStatus != "HEALTHY" || cl.HealthStatusReason["api"] != "ok" || cl.HealthStatusReason["nodes"] != "ok" ||
			cl.HealthStatusReason["updated_at"] == nil || cl.Status != "CREATE_COMPLETE" {
			t.Errorf("after a healthy report: %s %v %s", cl.HealthStatus, cl.HealthStatusReason, cl.Status)
		}
	})
	unhealthy := []healthcheck.NodeInfo{{KubeNode: *node, IsWorker: true, FailedCheck: "NodeConditionCheck", FoundAt: time.Now()}}
	step(t, s, "first Repair: UNHEALTHY reason per node, soft reboot, no resize", func(t *testing.T) {
		mark := s.mark(t)
		if err := healer.Repair(ctx(t), unhealthy); err != nil {
			t.Fatal(err)
		}
		cl, err := clusters.Get(ctx(t), magnumClient, clusterID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if cl.HealthStatus != "UNHEALTHY" || cl.HealthStatusReason[broken.Name+".NodeConditionCheck"] != "error" {
			t.Errorf("after the first repair: %s %v", cl.HealthStatus, cl.HealthStatusReason)
		}
		if got := s.novaActions(t); !slices.Equal(got, []string{broken.ServerID + " reboot"}) {
			t.Errorf("Nova actions: %v, want one reboot", got)
		}
		if strings.Contains(s.since(t, mark), "/actions/resize") {
			t.Error("the first repair resized the cluster")
		}
	})
	step(t, s, "second Repair: stop, then resize default-worker with nodes_to_remove, node deleted", func(t *testing.T) {
		time.Sleep(5 * time.Millisecond) // past RebuildDelayAfterReboot
		mark := s.mark(t)
		if err := healer.Repair(ctx(t), unhealthy); err != nil {
			t.Fatal(err)
		}
		if got := s.novaActions(t); !slices.Equal(got, []string{broken.ServerID + " reboot", broken.ServerID + " os-stop"}) {
			t.Errorf("Nova actions: %v, want reboot then os-stop", got)
		}
		var resize *exchange
		for _, ex := range s.exchanges(t, mark) {
			if ex.Method == http.MethodPost && strings.HasSuffix(ex.URL, "/actions/resize") {
				resize = &ex
			}
		}
		if resize == nil {
			t.Fatalf("no resize reached the service:\n%s", s.since(t, mark))
		}
		var body struct {
			NodeCount     int      `json:"node_count"`
			NodeGroup     string   `json:"nodegroup"`
			NodesToRemove []string `json:"nodes_to_remove"`
		}
		if err := json.Unmarshal([]byte(resize.ReqBody), &body); err != nil {
			t.Fatal(err)
		}
		if resize.Status != http.StatusAccepted || body.NodeGroup != "default-worker" || body.NodeCount != 2 ||
			!slices.Equal(body.NodesToRemove, []string{broken.ServerID}) {
			t.Errorf("resize: %d %+v", resize.Status, body)
		}
		if _, err := kube.CoreV1().Nodes().Get(ctx(t), broken.Name, metav1.GetOptions{}); err == nil {
			t.Error("the repaired node is still registered in Kubernetes")
		}
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterID, 2*time.Minute, "UPDATE_COMPLETE")
		ng, err := nodegroups.Get(ctx(t), magnumClient, clusterID, "default-worker").Extract()
		if err != nil {
			t.Fatal(err)
		}
		if ng.NodeCount != 2 || len(ng.NodeAddresses) != 2 || slices.Contains(ng.NodeAddresses, broken.Address) || ng.Status != "UPDATE_COMPLETE" {
			t.Errorf("default-worker after the repair: %d %v %s (replaced %s)", ng.NodeCount, ng.NodeAddresses, ng.Status, broken.Address)
		}
	})
}
