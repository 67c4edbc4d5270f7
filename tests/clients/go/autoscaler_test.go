package clients

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/clusters"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/clustertemplates"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/nodegroups"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// autoscalerNodeGroup is the nodegroup as the cluster-autoscaler's Magnum
// provider decodes it (strict Go types: an integer id, string labels,
// a nullable max_node_count that says whether the group autoscales).
type autoscalerNodeGroup struct {
	ID            int               `json:"id"`
	UUID          string            `json:"uuid"`
	Name          string            `json:"name"`
	Role          string            `json:"role"`
	NodeCount     int               `json:"node_count"`
	MinNodeCount  int               `json:"min_node_count"`
	MaxNodeCount  *int              `json:"max_node_count"`
	FlavorID      string            `json:"flavor_id"`
	Labels        map[string]string `json:"labels"`
	StackID       string            `json:"stack_id"`
	Status        string            `json:"status"`
	NodeAddresses []string          `json:"node_addresses"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
}

// TestAutoscalerSequence replays the Magnum-facing calls of the Kubernetes
// cluster-autoscaler's Magnum provider (clients.md § 5) with gophercloud at
// microversion latest: the catalog entry found by exact type and name, the
// cluster looked up once by name, the nodegroup list (following next) and a
// GET of each non-master group, scale up by nodegroup UUID, scale down with
// nodes_to_remove, and polling until the group is back to UPDATE_COMPLETE.
// Its Heat half (node listing through the group's stack) has no equivalent
// without Heat and is not exercised (docs/compatibility.md).
func TestAutoscalerSequence(t *testing.T) {
	needEnv(t, "OPENKEEL_TEST_GOPHERCLOUD")
	s := newStack(t)
	// The provider finds the endpoint by type container-infra AND name magnum.
	magnumClient, err := openstack.NewContainerInfraV1(gcProvider(t, s, "demo"),
		gophercloud.EndpointOpts{Region: s.Region, Type: "container-infra", Name: "magnum"})
	if err != nil {
		t.Fatalf("catalog lookup by type and name: %v", err)
	}
	magnumClient.Microversion = "latest"

	var clusterUUID, asGroup string
	step(t, s, "a cluster with an autoscaled nodegroup", func(t *testing.T) {
		f := false
		ct, err := clustertemplates.Create(ctx(t), magnumClient, clustertemplates.CreateOpts{
			Name: "as-ct", COE: "kubernetes", ImageID: s.ImageID, ExternalNetworkID: s.ExtNetID,
			FlavorID: s.FlavorSmall, MasterFlavorID: s.FlavorSmall, KeyPairID: s.Keypair,
			FloatingIPEnabled: &f, MasterLBEnabled: &f, Labels: map[string]string{"kube_tag": "v1.31.1"},
		}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		one := 1
		id, err := clusters.Create(ctx(t), magnumClient, clusters.CreateOpts{ClusterTemplateID: ct.UUID, Name: "as-c", NodeCount: &one, Keypair: s.Keypair}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), id, 2*time.Minute, "CREATE_COMPLETE")
		maxNodes := 4
		ng, err := nodegroups.Create(ctx(t), magnumClient, id, nodegroups.CreateOpts{
			Name: "as-ng", NodeCount: &one, MinNodeCount: 1, MaxNodeCount: &maxNodes, FlavorID: s.FlavorMedium,
		}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		waitNodeGroup(t, magnumClient, id, ng.UUID, "CREATE_COMPLETE")
	})

	step(t, s, "the cluster is looked up once by name", func(t *testing.T) {
		cl, err := clusters.Get(ctx(t), magnumClient, "as-c").Extract()
		if err != nil {
			t.Fatal(err)
		}
		clusterUUID = cl.UUID
	})
	if clusterUUID == "" {
		t.Fatal("no cluster")
	}

	groups := map[string]autoscalerNodeGroup{}
	step(t, s, "nodegroup list (following next) then a GET of each non-master group", func(t *testing.T) {
		var listed []nodegroups.NodeGroup
		err := nodegroups.List(magnumClient, clusterUUID, nodegroups.ListOpts{Limit: 1}).EachPage(ctx(t), func(_ context.Context, p pagination.Page) (bool, error) {
			l, err := nodegroups.ExtractNodeGroups(p)
			listed = append(listed, l...)
			return true, err
		})
		if err != nil || len(listed) != 3 {
			t.Fatalf("list with limit 1: %d groups, %v", len(listed), err)
		}
		for _, ng := range listed {
			if ng.Role == "master" {
				continue
			}
			var got autoscalerNodeGroup
			res := nodegroups.Get(ctx(t), magnumClient, clusterUUID, ng.UUID)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			raw, _ := json.Marshal(res.Body)
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("strict decoding of nodegroup %s: %v\n%s", ng.Name, err, raw)
			}
			if got.ID == 0 || got.UUID != ng.UUID || got.StackID == "" || got.CreatedAt.IsZero() || got.FlavorID == "" {
				t.Errorf("nodegroup %s at latest: %+v", ng.Name, got)
			}
			groups[got.Name] = got
		}
		if g := groups["default-worker"]; g.MaxNodeCount != nil {
			t.Errorf("default-worker max_node_count = %d, want null (not autoscaled)", *g.MaxNodeCount)
		}
		if g := groups["as-ng"]; g.MaxNodeCount == nil || *g.MaxNodeCount != 4 || g.MinNodeCount != 1 || g.NodeCount != 1 {
			t.Errorf("as-ng: %+v", g)
		}
		asGroup = groups["as-ng"].UUID
	})
	if asGroup == "" {
		t.Fatal("no autoscaled nodegroup")
	}

	resize := func(t *testing.T, count int, remove []string) {
		t.Helper()
		res := clusters.Resize(ctx(t), magnumClient, clusterUUID, clusters.ResizeOpts{NodeCount: &count, NodeGroup: asGroup, NodesToRemove: remove})
		if _, err := res.Extract(); err != nil {
			t.Fatalf("resize to %d: %v", count, err)
		}
		if st := getNodeGroup(t, magnumClient, clusterUUID, asGroup).Status; st != "UPDATE_IN_PROGRESS" && st != "UPDATE_COMPLETE" {
			t.Errorf("nodegroup right after the resize: %s", st)
		}
	}
	step(t, s, "scale up by nodegroup UUID, then poll to UPDATE_COMPLETE", func(t *testing.T) {
		resize(t, 3, nil)
		ng := waitNodeGroup(t, magnumClient, clusterUUID, asGroup, "UPDATE_COMPLETE")
		if ng.NodeCount != 3 || len(ng.NodeAddresses) != 3 {
			t.Errorf("after scale up: %+v", ng)
		}
	})
	step(t, s, "a second resize is accepted while the cluster is UPDATE_IN_PROGRESS", func(t *testing.T) {
		resize(t, 3, nil)
		cl, err := clusters.Get(ctx(t), magnumClient, clusterUUID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if cl.Status == "UPDATE_IN_PROGRESS" {
			resize(t, 3, nil)
		}
		waitNodeGroup(t, magnumClient, clusterUUID, asGroup, "UPDATE_COMPLETE")
	})
	step(t, s, "scale down with nodes_to_remove (the node's server UUID)", func(t *testing.T) {
		ng := getNodeGroup(t, magnumClient, clusterUUID, asGroup)
		victim := nodeOf(clusterUUID, ng.Name, 1)
		if !slices.Contains(ng.NodeAddresses, victim.Address) {
			t.Fatalf("node %s (%s) not in %v", victim.Name, victim.Address, ng.NodeAddresses)
		}
		resize(t, 2, []string{victim.ServerID})
		after := waitNodeGroup(t, magnumClient, clusterUUID, asGroup, "UPDATE_COMPLETE")
		if after.NodeCount != 2 || len(after.NodeAddresses) != 2 || slices.Contains(after.NodeAddresses, victim.Address) {
			t.Errorf("after removing %s: %+v", victim.Address, after)
		}
	})
	step(t, s, "resize below min_node_count is refused with 400", func(t *testing.T) {
		zero := 0
		_, err := clusters.Resize(ctx(t), magnumClient, clusterUUID, clusters.ResizeOpts{NodeCount: &zero, NodeGroup: asGroup}).Extract()
		if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
			t.Errorf("resize to 0 with min 1: %v", err)
		}
	})
}

func getNodeGroup(t *testing.T, c *gophercloud.ServiceClient, cluster, ng string) *nodegroups.NodeGroup {
	t.Helper()
	got, err := nodegroups.Get(ctx(t), c, cluster, ng).Extract()
	if err != nil {
		t.Fatalf("nodegroup %s: %v", ng, err)
	}
	return got
}

// waitNodeGroup polls a nodegroup every 200 ms until its status is want.
func waitNodeGroup(t *testing.T, c *gophercloud.ServiceClient, cluster, ng, want string) *nodegroups.NodeGroup {
	t.Helper()
	var got *nodegroups.NodeGroup
	waitGC(t, "nodegroup "+ng, 2*time.Minute, func() (string, error) {
		g, err := nodegroups.Get(ctx(t), c, cluster, ng).Extract()
		if err != nil {
			return "", err
		}
		got = g
		return g.Status, nil
	}, want)
	return got
}
