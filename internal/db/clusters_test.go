package db

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func ptr[T any](v T) *T { return &v }

// fixedClock returns a clock that advances one second per call.
func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 30, 1, 48, 7, 123456789, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

func newCluster(i int, project string) magnum.Cluster {
	return magnum.Cluster{
		UUID:              fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
		Name:              fmt.Sprintf("cluster-%d", i),
		ProjectID:         project,
		UserID:            "user-" + project,
		ClusterTemplateID: "tmpl-uuid",
		Status:            ptr(magnum.StatusCreateInProgress),
		Labels:            map[string]string{"kube_tag": "v1.30.4", "boot_volume_size": "40"},
	}
}

func TestClusterCRUD(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openFresh(t, dialect, Options{Now: fixedClock()})
		if err := db.Upgrade(ctx); err != nil {
			t.Fatal(err)
		}
		c := newCluster(1, "p1")
		c.Name = "K8s-Prod-1"
		c.HealthStatusReason = map[string]string{"api": "ok", "node-1.Ready": "True"}
		if err := db.CreateCluster(ctx, &c); err != nil {
			t.Fatal(err)
		}
		if c.ID == 0 || c.CreatedAt.IsZero() || c.UpdatedAt != nil {
			t.Fatalf("after create: id %d created %v updated %v", c.ID, c.CreatedAt, c.UpdatedAt)
		}
		if *c.FloatingIPEnabled != true || *c.MasterLBEnabled != false {
			t.Errorf("client-side defaults not applied: %v %v", *c.FloatingIPEnabled, *c.MasterLBEnabled)
		}
		// The row is written as Magnum writes it.
		var labels, reason string
		var created any
		createdCol := "created_at"
		if dialect == DialectSQLite {
			// The raw text, not the driver's parsed time.
			createdCol = "CAST(created_at AS TEXT)"
		}
		err := db.SQL().QueryRowContext(ctx, db.d.rebind("SELECT labels, health_status_reason, "+createdCol+" FROM cluster WHERE id = ?"), c.ID).
			Scan(&labels, &reason, &created)
		if err != nil {
			t.Fatal(err)
		}
		if labels != `{"boot_volume_size": "40", "kube_tag": "v1.30.4"}` || reason != `{"api": "ok", "node-1.Ready": "True"}` {
			t.Errorf("stored JSON = %s / %s", labels, reason)
		}
		// The clock ticked once per migration record, then for the create.
		at := time.Date(2026, 11, 30, 1, 48, 7+LatestVersion()+1, 123456789, time.UTC)
		wantCreated := map[string]string{
			DialectMySQL:    at.Truncate(time.Second).String(),
			DialectPostgres: at.Truncate(time.Microsecond).String(),
			DialectSQLite:   at.Format("2006-01-02 15:04:05.000000"),
		}[dialect]
		switch v := created.(type) {
		case time.Time:
			created = v.UTC().String()
		case []byte:
			created = string(v)
		case string:
			created = v
		}
		if created != wantCreated {
			t.Errorf("stored created_at = %v, want %s", created, wantCreated)
		}

		got, err := db.GetClusterByUUID(ctx, c.UUID, ProjectScope("p1"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&c, got); diff != "" {
			t.Errorf("read back differs (-written +read):\n%s", diff)
		}
		if _, err := db.GetClusterByUUID(ctx, c.UUID, ProjectScope("p2")); !errors.Is(err, ErrNotFound) {
			t.Errorf("other project's cluster: %v, want ErrNotFound", err)
		}
		if _, err := db.GetClusterByUUID(ctx, c.UUID, Scope{}); !errors.Is(err, ErrEmptyScope) {
			t.Errorf("empty scope: %v, want ErrEmptyScope", err)
		}
		byID, err := db.GetClusterByID(ctx, c.ID, AllProjects)
		if err != nil || byID.UUID != c.UUID {
			t.Errorf("GetClusterByID = %v, %v", byID, err)
		}

		// Partial update: only the named columns and updated_at change.
		c.Status = ptr(magnum.StatusCreateComplete)
		c.Name = "ignored because not listed"
		if err := db.UpdateCluster(ctx, &c, "status"); err != nil {
			t.Fatal(err)
		}
		got, _ = db.GetClusterByUUID(ctx, c.UUID, AllProjects)
		if *got.Status != magnum.StatusCreateComplete || got.Name != "K8s-Prod-1" || got.UpdatedAt == nil || !got.UpdatedAt.Equal(*c.UpdatedAt) {
			t.Errorf("after update: status %v name %q updated %v (want %v)", *got.Status, got.Name, got.UpdatedAt, c.UpdatedAt)
		}
		if err := db.UpdateCluster(ctx, &c, "no_such_column"); err == nil {
			t.Error("update of an unknown column succeeded")
		}
		gone := c
		gone.ID = 9999
		if err := db.UpdateCluster(ctx, &gone, "status"); !errors.Is(err, ErrNotFound) {
			t.Errorf("update of a missing row: %v", err)
		}
		dup := newCluster(1, "p1")
		if err := db.CreateCluster(ctx, &dup); !errors.Is(err, ErrDuplicate) {
			t.Errorf("duplicate uuid: %v, want ErrDuplicate", err)
		}

		// Delete with its nodegroups, atomically.
		ng := newNodeGroup(c.UUID, "default-worker", "p1")
		if err := db.CreateNodeGroup(ctx, &ng); err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *Tx) error { return tx.DeleteClusterCascade(ctx, c.UUID) })
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := db.CountNodeGroups(ctx, NodeGroupFilter{ClusterID: c.UUID}); n != 0 {
			t.Errorf("%d nodegroups left after cascade", n)
		}
		if err := db.DeleteCluster(ctx, c.UUID); !errors.Is(err, ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}

// TestNameLookupIgnoresCase checks MariaDB's behaviour on every dialect:
// name matches ignore case and trailing spaces.
func TestNameLookupIgnoresCase(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		a, b := newCluster(1, "p1"), newCluster(2, "p1")
		a.Name, b.Name = "k8s-prod-1", "K8S-PROD-1"
		other := newCluster(3, "p2")
		other.Name = "k8s-prod-1"
		for _, c := range []*magnum.Cluster{&a, &b, &other} {
			if err := db.CreateCluster(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			name  string
			scope Scope
			want  int
		}{
			{"k8s-prod-1", ProjectScope("p1"), 2},
			{"K8s-PROD-1", ProjectScope("p1"), 2},
			{"k8s-prod-1 ", ProjectScope("p1"), 2},
			{"k8s-prod-1", AllProjects, 3},
			{"k8s-prod", ProjectScope("p1"), 0},
			{"k8s-prod-1", ProjectScope("p3"), 0},
		} {
			got, err := db.GetClustersByName(ctx, tc.name, tc.scope)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Errorf("GetClustersByName(%q, %+v) = %d rows, want %d", tc.name, tc.scope, len(got), tc.want)
			}
		}
		tmpl := newTemplate(1, "p1", false, false)
		tmpl.Name = "Ubuntu-K8s"
		if err := db.CreateClusterTemplate(ctx, &tmpl); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.GetClusterTemplatesByName(ctx, "ubuntu-k8s", TemplateScope{Scope: ProjectScope("p1")}); len(got) != 1 {
			t.Errorf("template name lookup found %d", len(got))
		}
		fed := magnum.Federation{UUID: "fed-1", Name: "Fed-EU", ProjectID: "p1"}
		if err := db.CreateFederation(ctx, &fed); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.GetFederationsByName(ctx, "fed-eu", ProjectScope("p1")); len(got) != 1 {
			t.Errorf("federation name lookup found %d", len(got))
		}
	})
}

func TestClusterListFiltersAndPagination(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		// Seven clusters in p1 with names out of id order, some api_address
		// NULL, one in p2.
		names := []string{"delta", "alpha", "echo", "bravo", "alpha", "golf", "charlie"}
		for i, n := range names {
			c := newCluster(i+1, "p1")
			c.Name = n
			if i%3 != 0 {
				c.APIAddress = ptr(fmt.Sprintf("https://10.0.0.%d:6443", 9-i))
			}
			if i == 2 {
				c.Status = ptr(magnum.StatusCreateFailed)
			}
			if err := db.CreateCluster(ctx, &c); err != nil {
				t.Fatal(err)
			}
		}
		o := newCluster(100, "p2")
		if err := db.CreateCluster(ctx, &o); err != nil {
			t.Fatal(err)
		}

		uuids := func(cs []magnum.Cluster) []string {
			var out []string
			for _, c := range cs {
				out = append(out, c.Name+"#"+strings.TrimLeft(c.UUID[24:], "0"))
			}
			return out
		}
		for _, tc := range []struct {
			key, dir string
			want     []string
		}{
			{"", "", []string{"delta#1", "alpha#2", "echo#3", "bravo#4", "alpha#5", "golf#6", "charlie#7"}},
			{"id", "desc", []string{"charlie#7", "golf#6", "alpha#5", "bravo#4", "echo#3", "alpha#2", "delta#1"}},
			{"name", "asc", []string{"alpha#2", "alpha#5", "bravo#4", "charlie#7", "delta#1", "echo#3", "golf#6"}},
			{"name", "desc", []string{"golf#6", "echo#3", "delta#1", "charlie#7", "bravo#4", "alpha#5", "alpha#2"}},
			// NULLs sort first ascending (MariaDB), last descending.
			{"api_address", "asc", []string{"delta#1", "bravo#4", "charlie#7", "golf#6", "alpha#5", "echo#3", "alpha#2"}},
			{"api_address", "desc", []string{"alpha#2", "echo#3", "alpha#5", "golf#6", "charlie#7", "bravo#4", "delta#1"}},
		} {
			t.Run(tc.key+" "+tc.dir, func(t *testing.T) {
				f := ClusterFilter{Scope: ProjectScope("p1")}
				full, err := db.ListClusters(ctx, f, ListOptions{SortKey: tc.key, SortDir: tc.dir})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, uuids(full)); diff != "" {
					t.Fatalf("full list (-want +got):\n%s", diff)
				}
				// Walking pages of two with markers gives the same order.
				var paged []magnum.Cluster
				marker := ""
				for page := 0; page < 10; page++ {
					rows, err := db.ListClusters(ctx, f, ListOptions{SortKey: tc.key, SortDir: tc.dir, Limit: 2, Marker: marker})
					if err != nil {
						t.Fatal(err)
					}
					paged = append(paged, rows...)
					if len(rows) < 2 {
						break
					}
					marker = rows[len(rows)-1].UUID
				}
				if diff := cmp.Diff(tc.want, uuids(paged)); diff != "" {
					t.Fatalf("paged list (-want +got):\n%s", diff)
				}
			})
		}

		var sortErr *InvalidSortKeyError
		if _, err := db.ListClusters(ctx, ClusterFilter{Scope: AllProjects}, ListOptions{SortKey: "node_count"}); !errors.As(err, &sortErr) || sortErr.Key != "node_count" {
			t.Errorf("sort by node_count: %v, want InvalidSortKeyError", err)
		}
		if _, err := db.ListClusters(ctx, ClusterFilter{Scope: AllProjects}, ListOptions{SortDir: "ASC"}); !errors.Is(err, ErrInvalidSortDir) {
			t.Errorf("sort_dir ASC: %v, want ErrInvalidSortDir", err)
		}
		if _, err := db.ListClusters(ctx, ClusterFilter{Scope: AllProjects}, ListOptions{Marker: "no-such-uuid"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown marker: %v, want ErrNotFound", err)
		}

		for _, tc := range []struct {
			name string
			f    ClusterFilter
			want int
		}{
			{"all projects", ClusterFilter{Scope: AllProjects}, 8},
			{"one project", ClusterFilter{Scope: ProjectScope("p1")}, 7},
			{"by user when there is no project", ClusterFilter{Scope: Scope{UserID: "user-p2"}}, 1},
			{"statuses", ClusterFilter{Scope: AllProjects, Statuses: []magnum.Status{magnum.StatusCreateFailed, magnum.StatusDeleteFailed}}, 1},
			{"template", ClusterFilter{Scope: AllProjects, ClusterTemplateID: "tmpl-uuid"}, 8},
		} {
			n, err := db.CountClusters(ctx, tc.f)
			if err != nil || n != tc.want {
				t.Errorf("CountClusters(%s) = %d, %v; want %d", tc.name, n, err, tc.want)
			}
			rows, err := db.ListClusters(ctx, tc.f, ListOptions{})
			if err != nil || len(rows) != tc.want {
				t.Errorf("ListClusters(%s) = %d rows, %v; want %d", tc.name, len(rows), err, tc.want)
			}
		}
	})
}

func TestClusterStats(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		if c, n, err := db.ClusterStats(ctx, ""); err != nil || c != 0 || n != 0 {
			t.Fatalf("empty stats = %d, %d, %v", c, n, err)
		}
		for i, p := range []string{"p1", "p1", "p2"} {
			c := newCluster(i+1, p)
			if err := db.CreateCluster(ctx, &c); err != nil {
				t.Fatal(err)
			}
			for _, role := range []string{"master", "worker"} {
				ng := newNodeGroup(c.UUID, "default-"+role, p)
				ng.Role = ptr(role)
				ng.NodeCount = ptr(map[string]int{"master": 1, "worker": 3}[role])
				if err := db.CreateNodeGroup(ctx, &ng); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, tc := range []struct {
			project         string
			clusters, nodes int
		}{{"p1", 2, 8}, {"p2", 1, 4}, {"", 3, 12}, {"p9", 0, 0}} {
			c, n, err := db.ClusterStats(ctx, tc.project)
			if err != nil || c != tc.clusters || n != tc.nodes {
				t.Errorf("ClusterStats(%q) = %d, %d, %v; want %d, %d", tc.project, c, n, err, tc.clusters, tc.nodes)
			}
		}
	})
}

// TestSetClusterStatus: one statement sets status, reason and updated_at;
// setting the same values again still finds the row; an unknown uuid is
// ErrNotFound and writes nothing.
func TestSetClusterStatus(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		c := newCluster(1, "p1")
		c.StatusReason = ptr("Stack CREATE completed successfully")
		if err := db.CreateCluster(ctx, &c); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := db.SetClusterStatus(ctx, c.UUID, magnum.StatusDeleteInProgress, nil); err != nil {
				t.Fatal(err)
			}
		}
		got, err := db.GetClusterByUUID(ctx, c.UUID, AllProjects)
		if err != nil {
			t.Fatal(err)
		}
		if *got.Status != magnum.StatusDeleteInProgress || got.StatusReason != nil || got.UpdatedAt == nil {
			t.Errorf("after set: status %v reason %v updated_at %v", *got.Status, got.StatusReason, got.UpdatedAt)
		}
		if got.Name != c.Name || got.Labels["kube_tag"] != "v1.30.4" {
			t.Errorf("other columns changed: %+v", got)
		}
		if err := db.SetClusterStatus(ctx, "00000000-0000-4000-8000-999999999999", magnum.StatusDeleteInProgress, ptr("x")); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown uuid: %v, want ErrNotFound", err)
		}
	})
}
