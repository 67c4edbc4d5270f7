package db

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func newTemplate(i int, project string, public, hidden bool) magnum.ClusterTemplate {
	return magnum.ClusterTemplate{
		UUID:      fmt.Sprintf("10000000-0000-4000-8000-%012d", i),
		Name:      fmt.Sprintf("tmpl-%d", i),
		ProjectID: project,
		UserID:    "user-" + project,
		COE:       ptr("kubernetes"),
		ImageID:   ptr("ubuntu"),
		Public:    ptr(public),
		Hidden:    ptr(hidden),
	}
}

func TestClusterTemplates(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		own := newTemplate(1, "p1", false, false)
		ownHidden := newTemplate(2, "p1", false, true)
		public := newTemplate(3, "admin", true, false)
		publicHidden := newTemplate(4, "admin", true, true)
		foreign := newTemplate(5, "p2", false, false)
		for _, tm := range []*magnum.ClusterTemplate{&own, &ownHidden, &public, &publicHidden, &foreign} {
			if err := db.CreateClusterTemplate(ctx, tm); err != nil {
				t.Fatal(err)
			}
		}
		if *own.ServerType != "vm" || *own.FloatingIPEnabled != true || *own.TLSDisabled || own.Labels == nil {
			t.Errorf("client-side defaults not applied: %+v", own)
		}
		got, err := db.GetClusterTemplateByUUID(ctx, own.UUID, TemplateScope{Scope: ProjectScope("p1")})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&own, got); diff != "" {
			t.Errorf("read back (-written +read):\n%s", diff)
		}

		names := func(ts []magnum.ClusterTemplate) []string {
			var out []string
			for _, x := range ts {
				out = append(out, x.Name)
			}
			return out
		}
		for _, tc := range []struct {
			name  string
			scope TemplateScope
			want  []string
		}{
			{"member: own and public-not-hidden", TemplateScope{Scope: ProjectScope("p1")}, []string{"tmpl-1", "tmpl-2", "tmpl-3"}},
			{"admin without all-projects: also public hidden", TemplateScope{Scope: ProjectScope("p1"), PublicHidden: true}, []string{"tmpl-1", "tmpl-2", "tmpl-3", "tmpl-4"}},
			{"admin with all-projects", TemplateScope{Scope: AllProjects}, []string{"tmpl-1", "tmpl-2", "tmpl-3", "tmpl-4", "tmpl-5"}},
			{"no project: by user", TemplateScope{Scope: Scope{UserID: "user-p2"}}, []string{"tmpl-3", "tmpl-5"}},
		} {
			rows, err := db.ListClusterTemplates(ctx, tc.scope, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, names(rows)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
		if _, err := db.GetClusterTemplateByUUID(ctx, foreign.UUID, TemplateScope{Scope: ProjectScope("p1")}); !errors.Is(err, ErrNotFound) {
			t.Errorf("foreign private template: %v", err)
		}
		if got, err := db.GetClusterTemplateByID(ctx, public.ID, TemplateScope{Scope: ProjectScope("p2")}); err != nil || got.UUID != public.UUID {
			t.Errorf("public template by id: %v, %v", got, err)
		}

		// The templates of a page of clusters, in one query.
		m, err := db.GetClusterTemplatesByUUIDs(ctx, []string{own.UUID, public.UUID, foreign.UUID, "missing"}, TemplateScope{Scope: ProjectScope("p1")})
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if diff := cmp.Diff([]string{own.UUID, public.UUID}, keys); diff != "" {
			t.Errorf("GetClusterTemplatesByUUIDs (-want +got):\n%s", diff)
		}

		inUse, err := db.ClusterTemplateInUse(ctx, own.UUID)
		if err != nil || inUse {
			t.Fatalf("in use before any cluster: %v, %v", inUse, err)
		}
		c := newCluster(1, "p1")
		c.ClusterTemplateID = own.UUID
		if err := db.CreateCluster(ctx, &c); err != nil {
			t.Fatal(err)
		}
		if inUse, _ := db.ClusterTemplateInUse(ctx, own.UUID); !inUse {
			t.Error("template referenced by a cluster is not in use")
		}

		own.Labels = map[string]string{"kube_tag": "v1.31.0"}
		own.Public = ptr(true)
		if err := db.UpdateClusterTemplate(ctx, &own, "labels", "public"); err != nil {
			t.Fatal(err)
		}
		got, _ = db.GetClusterTemplateByUUID(ctx, own.UUID, TemplateScope{Scope: AllProjects})
		if got.Labels["kube_tag"] != "v1.31.0" || !*got.Public || got.UpdatedAt == nil {
			t.Errorf("after update: %+v", got)
		}
		if err := db.DeleteClusterTemplate(ctx, foreign.UUID); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteClusterTemplate(ctx, foreign.UUID); !errors.Is(err, ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
		if _, err := db.ListClusterTemplates(ctx, TemplateScope{Scope: AllProjects}, ListOptions{SortKey: "labels", SortDir: "desc"}); err != nil {
			t.Errorf("sort by a JSON column: %v", err)
		}
	})
}
