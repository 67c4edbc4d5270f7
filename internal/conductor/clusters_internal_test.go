package conductor

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
)

// clCountingStore counts the reads of a cluster list.
type clCountingStore struct {
	clListStore
	calls int
	views int // reads through the narrower list-view queries
}

func (s *clCountingStore) ListClusters(ctx context.Context, f db.ClusterFilter, o db.ListOptions) ([]magnum.Cluster, error) {
	s.calls++
	return s.clListStore.ListClusters(ctx, f, o)
}

func (s *clCountingStore) ListNodeGroupsOfClusters(ctx context.Context, ids []string) (map[string][]magnum.NodeGroup, error) {
	s.calls++
	return s.clListStore.ListNodeGroupsOfClusters(ctx, ids)
}

func (s *clCountingStore) GetClusterTemplatesByUUIDs(ctx context.Context, uuids []string, sc db.TemplateScope) (map[string]*magnum.ClusterTemplate, error) {
	s.calls++
	return s.clListStore.GetClusterTemplatesByUUIDs(ctx, uuids, sc)
}

func (s *clCountingStore) ListClustersView(ctx context.Context, f db.ClusterFilter, o db.ListOptions, view db.ClusterView) ([]magnum.Cluster, error) {
	s.calls++
	s.views++
	return s.clListStore.(clListViewStore).ListClustersView(ctx, f, o, view)
}

func (s *clCountingStore) ListNodeGroupSizesOfClusters(ctx context.Context, ids []string, withAddresses bool) (map[string][]magnum.NodeGroup, error) {
	s.calls++
	s.views++
	return s.clListStore.(clListViewStore).ListNodeGroupSizesOfClusters(ctx, ids, withAddresses)
}

// TestClusterListQueryCount checks that a list page costs three reads
// (clusters, their nodegroups, their templates) whatever its size, with
// full rows and with the narrower reads of the list views.
func TestClusterListQueryCount(t *testing.T) {
	ctx := t.Context()
	d, err := db.Open(ctx, db.DialectSQLite, filepath.Join(t.TempDir(), "m.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	c := &Conductor{DB: d, Drivers: driver.NewRegistry(driver.Selection{}, fake.New(fake.Options{})),
		OpenStack: openstack.NewStatic(true), Settings: Settings{MaxClustersPerProject: 100},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	rc := &magnum.RequestContext{ProjectID: "p1", UserID: "u1"}
	var tmpls []*magnum.ClusterTemplate
	for i := 0; i < 3; i++ {
		s := func(v string) *string { return &v }
		no := false
		tm := &magnum.ClusterTemplate{UUID: NewUUID(), Name: "t", ProjectID: "p1", UserID: "u1", ImageID: s("img"),
			FlavorID: s("f"), MasterFlavorID: s("f"), COE: s("kubernetes"), ServerType: s("vm"),
			ClusterDistro: s("ubuntu"), Driver: s(fake.Name), Public: &no, Hidden: &no}
		if err := d.CreateClusterTemplate(ctx, tm); err != nil {
			t.Fatal(err)
		}
		tmpls = append(tmpls, tm)
	}
	for i := 0; i < 12; i++ {
		if _, err := c.CreateCluster(ctx, rc, ClusterCreate{Template: tmpls[i%3], MasterCount: 1, NodeCount: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		limit     int
		view      db.ClusterView
		viewReads int
	}{
		{1, 0, 0}, {5, 0, 0}, {12, 0, 0}, {100, 0, 0},
		{1, db.ClusterViewSummary, 2}, {12, db.ClusterViewSummary, 2}, {100, db.ClusterViewDetail, 2},
	} {
		limit := tc.limit
		store := &clCountingStore{clListStore: d}
		page, err := c.listClusterPageView(ctx, store, rc, false, ListParams{Limit: limit, SortKey: "id", SortDir: "asc"}, tc.view)
		if err != nil {
			t.Fatal(err)
		}
		if store.views != tc.viewReads {
			t.Errorf("limit %d view %d: %d list-view reads, want %d", limit, tc.view, store.views, tc.viewReads)
		}
		if want := min(limit, 12); len(page.Clusters) != want {
			t.Errorf("limit %d: %d clusters, want %d", limit, len(page.Clusters), want)
		}
		if store.calls != 3 {
			t.Errorf("limit %d: %d reads, want 3", limit, store.calls)
		}
		for _, cl := range page.Clusters {
			if len(page.NodeGroups[cl.UUID]) != 2 {
				t.Errorf("cluster %s: %d nodegroups", cl.UUID, len(page.NodeGroups[cl.UUID]))
			}
			if _, ok := page.Templates[cl.ClusterTemplateID]; !ok {
				t.Errorf("cluster %s: template missing", cl.UUID)
			}
		}
	}
}
