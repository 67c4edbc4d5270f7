package db

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// TestReadMagnumRows reads the rows Magnum 23.0.0 wrote (the spec's sample
// data) through the repositories, after adopt, on every dialect.
func TestReadMagnumRows(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := loadMagnumDB(t, dialect)
		if err := db.Adopt(ctx); err != nil {
			t.Fatal(err)
		}
		const tenant = "8c1f4b2ba1c94e5c9a5d1f0e3b7a6d21"
		clusters, err := db.GetClustersByName(ctx, "K8S-PROD-1", ProjectScope(tenant))
		if err != nil || len(clusters) != 1 {
			t.Fatalf("GetClustersByName = %d rows, %v", len(clusters), err)
		}
		c := clusters[0]
		if c.ID != 1 || c.UUID != "8a09e93b-302c-4cc5-98c3-e24c1da2f172" || *c.Status != magnum.StatusUpdateComplete ||
			*c.FloatingIPEnabled || !*c.MasterLBEnabled || *c.CreateTimeout != 60 || c.ContainerVersion != nil {
			t.Errorf("cluster k8s-prod-1 = %+v", c)
		}
		if want := time.Date(2026, 11, 30, 1, 48, 7, 0, time.UTC); !c.CreatedAt.Equal(want) || c.CreatedAt.Location() != time.UTC {
			t.Errorf("created_at = %v, want %v", c.CreatedAt, want)
		}
		if diff := cmp.Diff(map[string]string{
			"kube_tag": "v1.30.4", "cinder_csi_enabled": "true", "auto_healing_enabled": "true",
			"auto_healing_controller": "magnum-auto-healer", "boot_volume_size": "40", "min_node_count": "1", "max_node_count": "5",
		}, c.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if c.HealthStatusReason["api"] != "ok" || c.HealthStatusReason["kube-8a09e-control-plane-x2bz9.Ready"] != "True" {
			t.Errorf("health_status_reason = %v", c.HealthStatusReason)
		}

		all, err := db.ListClusters(ctx, ClusterFilter{Scope: ProjectScope(tenant)}, ListOptions{})
		if err != nil || len(all) != 3 {
			t.Fatalf("ListClusters = %d, %v", len(all), err)
		}
		var tmplIDs []string
		for _, c := range all {
			tmplIDs = append(tmplIDs, c.ClusterTemplateID)
		}
		tmpls, err := db.GetClusterTemplatesByUUIDs(ctx, tmplIDs, TemplateScope{Scope: ProjectScope(tenant)})
		if err != nil || len(tmpls) != 2 {
			t.Fatalf("templates of the clusters = %d, %v", len(tmpls), err)
		}
		if pub := tmpls["78579b4d-8f4c-4006-a2a9-411bdeaeffe9"]; pub == nil || !*pub.Public || *pub.Driver != "k8s_cluster_api_ubuntu" || *pub.ServerType != "vm" {
			t.Errorf("public template = %+v", pub)
		}

		gpu, err := db.GetNodeGroupsByName(ctx, c.UUID, "gpu-pool", ProjectScope(tenant))
		if err != nil || len(gpu) != 1 {
			t.Fatalf("gpu-pool = %v, %v", gpu, err)
		}
		if diff := cmp.Diff([]magnum.NodeTaint{{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}}, gpu[0].NodeTaints); diff != "" {
			t.Errorf("node_taints (-want +got):\n%s", diff)
		}
		if *gpu[0].MinNodeCount != 0 || *gpu[0].MaxNodeCount != 3 || *gpu[0].IsDefault || gpu[0].NodeLabels["nvidia.com/gpu.present"] != "true" {
			t.Errorf("gpu-pool = %+v", gpu[0])
		}
		masters, _ := db.ListNodeGroups(ctx, NodeGroupFilter{ClusterID: c.UUID, Role: "master"}, ListOptions{})
		if len(masters) != 1 || masters[0].NodeAddresses[0] != "10.0.0.11" {
			t.Errorf("masters = %+v", masters)
		}
		clustersN, nodes, err := db.ClusterStats(ctx, tenant)
		if err != nil || clustersN != 3 || nodes != 8 {
			t.Errorf("stats = %d clusters, %d nodes, %v; want 3, 8", clustersN, nodes, err)
		}

		svcs, err := db.ListMagnumServices(ctx)
		if err != nil || len(svcs) != 1 || svcs[0].ReportCount != 3 || svcs[0].Binary != "magnum-conductor" || svcs[0].LastSeenUp == nil {
			t.Fatalf("services = %+v, %v", svcs, err)
		}
		feds, err := db.ListFederations(ctx, ProjectScope(tenant), ListOptions{})
		if err != nil || len(feds) != 1 || feds[0].Properties["dns-zone"] != "example.com." || len(feds[0].MemberIDs) != 0 || feds[0].MemberIDs == nil {
			t.Fatalf("federations = %+v, %v", feds, err)
		}
		q, err := db.GetQuota(ctx, tenant, "Cluster")
		if err != nil || q.HardLimit != 10 {
			t.Fatalf("quota = %+v, %v", q, err)
		}
		ca, err := db.GetX509KeyPairByUUID(ctx, *c.CACertRef, ProjectScope(tenant))
		if err != nil || ca.Certificate == nil || ca.PrivateKeyPassphrase == nil || ca.Intermediates != nil {
			t.Fatalf("CA key pair = %+v, %v", ca, err)
		}
		kps, err := db.ListX509KeyPairs(ctx, ProjectScope(tenant), ListOptions{})
		if err != nil || len(kps) != 12 {
			t.Fatalf("ListX509KeyPairs = %d, %v", len(kps), err)
		}
	})
}
