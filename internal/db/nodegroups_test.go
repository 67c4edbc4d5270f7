package db

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func newNodeGroup(clusterID, name, project string) magnum.NodeGroup {
	return magnum.NodeGroup{
		UUID:      uuid.NewString(),
		Name:      name,
		ClusterID: clusterID,
		ProjectID: project,
		Role:      ptr("worker"),
		NodeCount: ptr(1),
	}
}

func TestNodeGroups(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		master := newNodeGroup("c1", "default-master", "p1")
		master.Role, master.IsDefault = ptr("master"), ptr(true)
		worker := newNodeGroup("c1", "default-worker", "p1")
		worker.IsDefault = ptr(true)
		worker.NodeAddresses = []string{"10.0.0.21", "10.0.0.22"}
		gpu := newNodeGroup("c1", "gpu-pool", "p1")
		gpu.Role = ptr("gpu")
		gpu.NodeLabels = map[string]string{"nvidia.com/gpu.present": "true"}
		gpu.NodeTaints = []magnum.NodeTaint{{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}}
		elsewhere := newNodeGroup("c2", "default-worker", "p2")
		for _, ng := range []*magnum.NodeGroup{&master, &worker, &gpu, &elsewhere} {
			if err := db.CreateNodeGroup(ctx, ng); err != nil {
				t.Fatal(err)
			}
		}
		var taints, addrs, labels string
		err := db.SQL().QueryRowContext(ctx, db.d.rebind("SELECT node_taints, node_addresses, labels FROM nodegroup WHERE id = ?"), gpu.ID).Scan(&taints, &addrs, &labels)
		if err != nil {
			t.Fatal(err)
		}
		if taints != `[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]` || addrs != `[]` || labels != `{}` {
			t.Errorf("stored JSON: taints %s addresses %s labels %s", taints, addrs, labels)
		}
		got, err := db.GetNodeGroupByUUID(ctx, "c1", gpu.UUID, ProjectScope("p1"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&gpu, got); diff != "" {
			t.Errorf("read back (-written +read):\n%s", diff)
		}
		if _, err := db.GetNodeGroupByUUID(ctx, "c2", gpu.UUID, AllProjects); !errors.Is(err, ErrNotFound) {
			t.Errorf("nodegroup of another cluster: %v", err)
		}
		if _, err := db.GetNodeGroupByUUID(ctx, "c1", gpu.UUID, ProjectScope("p2")); !errors.Is(err, ErrNotFound) {
			t.Errorf("nodegroup of another project: %v", err)
		}
		if _, err := db.GetNodeGroupByUUID(ctx, "c1", gpu.UUID, Scope{UserID: "u"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("nodegroup for a caller without project: %v", err)
		}
		if got, err := db.GetNodeGroupByID(ctx, "c1", worker.ID, AllProjects); err != nil || got.Name != "default-worker" {
			t.Errorf("GetNodeGroupByID = %v, %v", got, err)
		}
		if got, _ := db.GetNodeGroupsByName(ctx, "c1", "GPU-Pool", ProjectScope("p1")); len(got) != 1 {
			t.Errorf("name lookup found %d", len(got))
		}
		if got, _ := db.GetNodeGroupsByName(ctx, "c1", "gpu-pool", ProjectScope("p2")); len(got) != 0 {
			t.Errorf("other project's name lookup found %d", len(got))
		}

		for _, tc := range []struct {
			name string
			f    NodeGroupFilter
			want []string
		}{
			{"cluster", NodeGroupFilter{ClusterID: "c1"}, []string{"default-master", "default-worker", "gpu-pool"}},
			{"role", NodeGroupFilter{ClusterID: "c1", Role: "master"}, []string{"default-master"}},
			{"project", NodeGroupFilter{ClusterID: "c1", ProjectID: "p2"}, nil},
			{"non-default", NodeGroupFilter{ClusterID: "c1", IsDefault: ptr(false)}, []string{"gpu-pool"}},
			{"default", NodeGroupFilter{ClusterID: "c1", IsDefault: ptr(true)}, []string{"default-master", "default-worker"}},
		} {
			rows, err := db.ListNodeGroups(ctx, tc.f, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range rows {
				names = append(names, r.Name)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
		rows, err := db.ListNodeGroups(ctx, NodeGroupFilter{ClusterID: "c1"}, ListOptions{SortKey: "role", SortDir: "desc", Limit: 1, Marker: worker.UUID})
		if err != nil || len(rows) != 1 || rows[0].Name != "default-master" {
			t.Errorf("page after worker by role desc = %+v, %v", rows, err)
		}
		byCluster, err := db.ListNodeGroupsOfClusters(ctx, []string{"c1", "c2", "c3"})
		if err != nil || len(byCluster["c1"]) != 3 || len(byCluster["c2"]) != 1 {
			t.Errorf("ListNodeGroupsOfClusters = %v, %v", byCluster, err)
		}

		// (cluster_id, name) is unique; MariaDB and SQLite compare names
		// without case, PostgreSQL (Magnum's migrated schema) with case.
		dup := newNodeGroup("c1", "gpu-pool", "p1")
		if err := db.CreateNodeGroup(ctx, &dup); !errors.Is(err, ErrDuplicate) {
			t.Errorf("duplicate name: %v, want ErrDuplicate", err)
		}
		dupCase := newNodeGroup("c1", "GPU-POOL", "p1")
		err = db.CreateNodeGroup(ctx, &dupCase)
		if dialect == DialectPostgres {
			if err != nil {
				t.Errorf("PostgreSQL refused a name differing in case: %v", err)
			}
		} else if !errors.Is(err, ErrDuplicate) {
			t.Errorf("name differing in case: %v, want ErrDuplicate", err)
		}

		gpu.NodeCount = ptr(3)
		gpu.Status = ptr(magnum.StatusUpdateInProgress)
		if err := db.UpdateNodeGroup(ctx, &gpu, "node_count", "status"); err != nil {
			t.Fatal(err)
		}
		got, _ = db.GetNodeGroupByUUID(ctx, "c1", gpu.UUID, ProjectScope("p1"))
		if *got.NodeCount != 3 || *got.Status != magnum.StatusUpdateInProgress || got.UpdatedAt == nil {
			t.Errorf("after update: %+v", got)
		}
		if err := db.DeleteNodeGroup(ctx, gpu.UUID); err != nil {
			t.Fatal(err)
		}
		if n, err := db.DeleteNodeGroupsOfCluster(ctx, "c1"); err != nil || n < 2 {
			t.Errorf("DeleteNodeGroupsOfCluster = %d, %v", n, err)
		}
	})
}
