package conductor_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
)

// ngcEnv is a conductor over a migrated SQLite database with the fake
// driver (enabled as a beta driver, so that templates without a stored
// driver resolve to it by their (vm, ubuntu, kubernetes) tuple).
type ngcEnv struct {
	c    *conductor.Conductor
	fake *fake.Driver
}

func ngcPtr[T any](v T) *T { return &v }

func ngcNew(t *testing.T, templateDriver *string) (*ngcEnv, *magnum.Cluster) {
	t.Helper()
	ctx := t.Context()
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	d, err := db.Open(ctx, db.DialectSQLite, filepath.Join(t.TempDir(), "magnum.db"), db.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	f := fake.New(fake.Options{Clock: clock})
	c := &conductor.Conductor{
		DB:        d,
		Drivers:   driver.NewRegistry(driver.Selection{EnabledBeta: []string{fake.Name}}, f),
		OpenStack: openstack.NewStatic(false),
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:       clock,
	}
	tmpl := &magnum.ClusterTemplate{UUID: "7e57a000-0000-4000-8000-000000000001", Name: "t", ProjectID: "p1", UserID: "u1",
		ImageID: ngcPtr("img"), COE: ngcPtr("kubernetes"), ServerType: ngcPtr("vm"), ClusterDistro: ngcPtr("ubuntu"),
		Driver: templateDriver}
	if err := d.CreateClusterTemplate(ctx, tmpl); err != nil {
		t.Fatal(err)
	}
	cl := &magnum.Cluster{UUID: "c1000000-0000-4000-8000-000000000001", Name: "c1", ProjectID: "p1", UserID: "u1",
		ClusterTemplateID: tmpl.UUID, Status: ngcPtr(magnum.StatusCreateComplete), APIAddress: ngcPtr("https://x")}
	if err := d.CreateCluster(ctx, cl); err != nil {
		t.Fatal(err)
	}
	for _, ng := range []magnum.NodeGroup{
		{UUID: "a1000000-0000-4000-8000-000000000001", Name: "default-worker", Role: ngcPtr("worker"), NodeCount: ngcPtr(3), IsDefault: ngcPtr(true)},
		{UUID: "a1000000-0000-4000-8000-000000000002", Name: "1234", Role: ngcPtr("worker"), NodeCount: ngcPtr(1), IsDefault: ngcPtr(false)},
	} {
		ng.ClusterID, ng.ProjectID, ng.Status = cl.UUID, "p1", ngcPtr(magnum.StatusCreateComplete)
		if err := d.CreateNodeGroup(ctx, &ng); err != nil {
			t.Fatal(err)
		}
	}
	return &ngcEnv{c: c, fake: f}, cl
}

// ngcStatus returns the HTTP status of a client error (0 for others).
func ngcStatus(err error) int {
	var me *magnum.Error
	if errors.As(err, &me) {
		return me.Status
	}
	return 0
}

func TestGetNodeGroup(t *testing.T) {
	e, cl := ngcNew(t, ngcPtr(fake.Name))
	ctx := t.Context()
	for ident, want := range map[string]string{
		"1": "default-worker", "a1000000-0000-4000-8000-000000000002": "1234", "default-worker": "default-worker",
	} {
		ng, err := e.c.GetNodeGroup(ctx, cl.UUID, ident, db.ProjectScope("p1"))
		if err != nil || ng.Name != want {
			t.Errorf("%s: %v %v", ident, ng, err)
		}
	}
	// Magnum: an integer-like ident is an id, so a nodegroup named "1234"
	// cannot be reached by name.
	if _, err := e.c.GetNodeGroup(ctx, cl.UUID, "1234", db.ProjectScope("p1")); ngcStatus(err) != http.StatusNotFound {
		t.Errorf("by integer name: %v", err)
	}
	if _, err := e.c.GetNodeGroup(ctx, cl.UUID, "default-worker", db.ProjectScope("p2")); ngcStatus(err) != http.StatusNotFound {
		t.Errorf("other project: %v", err)
	}
	if _, err := e.c.GetNodeGroup(ctx, cl.UUID, "default-worker", conductor.NodeGroupScopeFor(&magnum.RequestContext{})); ngcStatus(err) != http.StatusNotFound {
		t.Errorf("no project: %v", err)
	}
}

func TestCreateNodeGroupResolvesDriverByTuple(t *testing.T) {
	e, cl := ngcNew(t, nil)
	ctx := t.Context()
	ng := &magnum.NodeGroup{UUID: "0e000000-0000-4000-8000-000000000001", Name: "new", ClusterID: cl.UUID, ProjectID: "p1",
		Role: ngcPtr("worker"), NodeCount: ngcPtr(2), MinNodeCount: ngcPtr(0)}
	if err := e.c.CreateNodeGroup(ctx, &magnum.RequestContext{ProjectID: "p1"}, cl, ng); err != nil {
		t.Fatal(err)
	}
	if ng.ID == 0 || ng.CreatedAt.IsZero() {
		t.Errorf("id %d created %v", ng.ID, ng.CreatedAt)
	}
	row, err := e.c.GetNodeGroup(ctx, cl.UUID, ng.UUID, db.AllProjects)
	if err != nil {
		t.Fatal(err)
	}
	if *row.Status != magnum.StatusCreateInProgress || row.StackID == nil {
		t.Errorf("row status %s stack %v: the fake driver was not called", *row.Status, row.StackID)
	}
	dup := &magnum.NodeGroup{UUID: "0e000000-0000-4000-8000-000000000002", Name: "new", ClusterID: cl.UUID, ProjectID: "p1"}
	if err := e.c.CreateNodeGroup(ctx, &magnum.RequestContext{}, cl, dup); ngcStatus(err) != http.StatusConflict {
		t.Errorf("duplicate: %v", err)
	}
	refused := &magnum.NodeGroup{UUID: "0e000000-0000-4000-8000-000000000003", Name: "x", ClusterID: cl.UUID,
		Status: ngcPtr(magnum.StatusDeleteFailed)}
	if err := e.c.CreateNodeGroup(ctx, &magnum.RequestContext{}, cl, refused); ngcStatus(err) != http.StatusConflict {
		t.Errorf("state guard: %v", err)
	}
}

func TestUpdateAndDeleteNodeGroup(t *testing.T) {
	e, cl := ngcNew(t, ngcPtr(fake.Name))
	ctx := t.Context()
	rc := &magnum.RequestContext{ProjectID: "p1"}
	ng, err := e.c.GetNodeGroup(ctx, cl.UUID, "2", db.AllProjects)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.UpdateNodeGroup(ctx, rc, cl, ng, []string{"node_count"}); err == nil {
		t.Error("node_count is not patchable")
	}
	ng.MaxNodeCount = ngcPtr(4)
	if err := e.c.UpdateNodeGroup(ctx, rc, cl, ng, []string{"max_node_count"}); err != nil {
		t.Fatal(err)
	}
	row, _ := e.c.GetNodeGroup(ctx, cl.UUID, "2", db.AllProjects)
	if *row.MaxNodeCount != 4 || *row.Status != magnum.StatusUpdateInProgress {
		t.Errorf("after update: max %v status %s", row.MaxNodeCount, *row.Status)
	}
	def, _ := e.c.GetNodeGroup(ctx, cl.UUID, "1", db.AllProjects)
	if err := e.c.DeleteNodeGroup(ctx, rc, cl, def); ngcStatus(err) != http.StatusBadRequest {
		t.Errorf("default delete: %v", err)
	}
	if err := e.c.DeleteNodeGroup(ctx, rc, cl, row); err != nil {
		t.Fatal(err)
	}
	row, _ = e.c.GetNodeGroup(ctx, cl.UUID, "2", db.AllProjects)
	if *row.Status != magnum.StatusDeleteInProgress {
		t.Errorf("after delete: %s", *row.Status)
	}
}

func TestRotateCredential(t *testing.T) {
	e, cl := ngcNew(t, ngcPtr(fake.Name))
	ctx := t.Context()
	if err := e.c.RotateCredential(ctx, &magnum.RequestContext{}, cl); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.CredentialRotations(cl.UUID); n != 1 {
		t.Errorf("rotations %d", n)
	}
	cl.Status = ngcPtr(magnum.StatusDeleteInProgress)
	if err := e.c.RotateCredential(ctx, &magnum.RequestContext{}, cl); ngcStatus(err) != http.StatusBadRequest {
		t.Errorf("guard: %v", err)
	}
}

func TestQuotaUseCases(t *testing.T) {
	e, _ := ngcNew(t, nil)
	ctx := t.Context()
	q := &magnum.Quota{ProjectID: "p1", Resource: magnum.QuotaResourceCluster, HardLimit: 3}
	if err := e.c.CreateQuota(ctx, q); err != nil || q.ID == 0 {
		t.Fatalf("create: %v %d", err, q.ID)
	}
	if err := e.c.CreateQuota(ctx, &magnum.Quota{ProjectID: "p1", Resource: magnum.QuotaResourceCluster}); ngcStatus(err) != http.StatusConflict {
		t.Errorf("duplicate: %v", err)
	}
	if got, err := e.c.UpdateQuota(ctx, "p1", "Cluster", 9); err != nil || got.HardLimit != 9 {
		t.Errorf("update: %v %v", got, err)
	}
	if _, err := e.c.UpdateQuota(ctx, "p2", "Cluster", 9); ngcStatus(err) != http.StatusNotFound {
		t.Errorf("update missing: %v", err)
	}
	if _, err := e.c.ListQuotas(ctx, "", conductor.ListParams{Marker: "77"}); ngcStatus(err) != http.StatusNotFound {
		t.Errorf("marker: %v", err)
	}
	if got, _ := e.c.GetQuota(ctx, "p2", "Cluster"); got != nil {
		t.Errorf("no quota: %v", got)
	}
	if e.c.DefaultClusterQuota() != 20 {
		t.Errorf("default %d", e.c.DefaultClusterQuota())
	}
	if err := e.c.DeleteQuota(ctx, "p1", "Cluster"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.DeleteQuota(ctx, "p1", "Cluster"); ngcStatus(err) != http.StatusNotFound {
		t.Errorf("second delete: %v", err)
	}
}

func TestFederationUseCases(t *testing.T) {
	e, _ := ngcNew(t, nil)
	ctx := t.Context()
	f := &magnum.Federation{UUID: "f0000000-0000-4000-8000-000000000001", ProjectID: "p1", HostClusterID: ngcPtr("c1"),
		Properties: map[string]string{"dns-zone": "z."}}
	if err := e.c.CreateFederation(ctx, f); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[a-z]+-([1-9]|1[0-9]|2[0-4])-federation$`).MatchString(f.Name) {
		t.Errorf("generated name %q", f.Name)
	}
	if *f.Status != magnum.StatusCreateInProgress {
		t.Errorf("status %s", *f.Status)
	}
	got, err := e.c.GetFederation(ctx, f.Name, db.ProjectScope("p1"))
	if err != nil || got.UUID != f.UUID {
		t.Fatalf("by name: %v %v", got, err)
	}
	if _, err := e.c.GetFederation(ctx, f.UUID, db.ProjectScope("p2")); ngcStatus(err) != http.StatusNotFound {
		t.Errorf("other project: %v", err)
	}
	got.MemberIDs = []string{"m1"}
	if err := e.c.UpdateFederation(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := e.c.DeleteFederation(ctx, f.UUID); err != nil {
		t.Fatal(err)
	}
	if err := e.c.DeleteFederation(ctx, f.UUID); ngcStatus(err) != http.StatusNotFound {
		t.Errorf("second delete: %v", err)
	}
}

func TestClusterStats(t *testing.T) {
	e, _ := ngcNew(t, nil)
	for project, want := range map[string]conductor.Stats{"p1": {Clusters: 1, Nodes: 4}, "": {Clusters: 1, Nodes: 4}, "p2": {}} {
		got, err := e.c.ClusterStats(t.Context(), project)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", project, got, err, want)
		}
	}
}

// TestNodeGroupLifecycleWithPoll follows a nodegroup through the fake
// driver: created, completed by the poll, deleted, removed by the poll.
func TestNodeGroupLifecycleWithPoll(t *testing.T) {
	e, cl := ngcNew(t, ngcPtr(fake.Name))
	ctx := t.Context()
	rc := &magnum.RequestContext{ProjectID: "p1"}
	ng := &magnum.NodeGroup{UUID: "0e000000-0000-4000-8000-000000000009", Name: "life", ClusterID: cl.UUID, ProjectID: "p1",
		Role: ngcPtr("worker"), NodeCount: ngcPtr(2), MinNodeCount: ngcPtr(0)}
	if err := e.c.CreateNodeGroup(ctx, rc, cl, ng); err != nil {
		t.Fatal(err)
	}
	polled, err := e.c.PollCluster(ctx, cl.UUID)
	if err != nil {
		t.Fatal(err)
	}
	row, err := e.c.GetNodeGroup(ctx, cl.UUID, ng.UUID, db.AllProjects)
	if err != nil {
		t.Fatal(err)
	}
	if *row.Status != magnum.StatusCreateComplete || *polled.Status != magnum.StatusUpdateComplete {
		t.Fatalf("after poll: nodegroup %s cluster %s", *row.Status, *polled.Status)
	}
	if err := e.c.DeleteNodeGroup(ctx, rc, polled, row); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.PollCluster(ctx, cl.UUID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.GetNodeGroup(ctx, cl.UUID, ng.UUID, db.AllProjects); ngcStatus(err) != http.StatusNotFound {
		t.Errorf("after delete poll: %v", err)
	}
}
