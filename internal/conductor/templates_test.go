package conductor_test

import (
	"errors"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
)

func templatesConductor(t *testing.T) *conductor.Conductor {
	t.Helper()
	ctx := t.Context()
	d, err := db.Open(ctx, db.DialectSQLite, filepath.Join(t.TempDir(), "magnum.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	return &conductor.Conductor{
		DB:        d,
		Drivers:   driver.NewRegistry(driver.Selection{}, fake.New(fake.Options{})),
		OpenStack: openstack.NewStatic(false),
	}
}

func templatesInsert(t *testing.T, c *conductor.Conductor, uuid, name, project string, public, hidden bool) {
	t.Helper()
	coe := "kubernetes"
	tpl := magnum.ClusterTemplate{UUID: uuid, Name: name, ProjectID: project, UserID: "user-" + project,
		COE: &coe, Public: &public, Hidden: &hidden}
	if err := c.DB.InTx(t.Context(), func(tx *db.Tx) error { return tx.CreateClusterTemplate(t.Context(), &tpl) }); err != nil {
		t.Fatal(err)
	}
}

func TestTemplateScopeFor(t *testing.T) {
	c := &conductor.Conductor{}
	member := &magnum.RequestContext{ProjectID: "p1", UserID: "u1"}
	admin := &magnum.RequestContext{ProjectID: "p1", UserID: "u1", IsAdmin: true}
	noProject := &magnum.RequestContext{UserID: "u1"}
	tests := []struct {
		name string
		rc   *magnum.RequestContext
		all  bool
		want db.TemplateScope
	}{
		{"member", member, false, db.TemplateScope{Scope: db.Scope{ProjectID: "p1"}}},
		{"member asking for all projects", member, true, db.TemplateScope{Scope: db.Scope{ProjectID: "p1"}}},
		{"admin", admin, false, db.TemplateScope{Scope: db.Scope{ProjectID: "p1"}, PublicHidden: true}},
		{"admin all projects", admin, true, db.TemplateScope{Scope: db.AllProjects}},
		{"token without project", noProject, false, db.TemplateScope{Scope: db.Scope{UserID: "u1"}}},
	}
	for _, tt := range tests {
		if got := c.TemplateScopeFor(tt.rc, tt.all); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestGetClusterTemplate(t *testing.T) {
	c := templatesConductor(t)
	templatesInsert(t, c, "a0000000-0000-4000-8000-000000000001", "own", "p1", false, false)
	templatesInsert(t, c, "a0000000-0000-4000-8000-000000000002", "private", "p2", false, false)
	templatesInsert(t, c, "a0000000-0000-4000-8000-000000000003", "dup", "p1", false, false)
	templatesInsert(t, c, "a0000000-0000-4000-8000-000000000004", "DUP", "p2", true, false)
	templatesInsert(t, c, "a0000000-0000-4000-8000-000000000005", "hidden", "p2", true, true)
	templatesInsert(t, c, "a0000000-0000-4000-8000-000000000006", "a0000000-0000-4000-8000-000000000001", "p1", false, false)
	member := c.TemplateScopeFor(&magnum.RequestContext{ProjectID: "p1", UserID: "u1"}, false)
	admin := c.TemplateScopeFor(&magnum.RequestContext{ProjectID: "p1", UserID: "u1", IsAdmin: true}, false)
	all := c.TemplateScopeFor(&magnum.RequestContext{ProjectID: "p1", UserID: "u1", IsAdmin: true}, true)
	tests := []struct {
		ident    string
		scope    db.TemplateScope
		wantUUID string
		status   int
	}{
		{"own", member, "a0000000-0000-4000-8000-000000000001", 0},
		{"a0000000-0000-4000-8000-000000000001", member, "a0000000-0000-4000-8000-000000000001", 0},
		{"private", member, "", http.StatusNotFound},
		{"private", all, "a0000000-0000-4000-8000-000000000002", 0},
		{"dup", member, "", http.StatusConflict},
		{"hidden", member, "", http.StatusNotFound},
		{"hidden", admin, "a0000000-0000-4000-8000-000000000005", 0},
		{"A0000000-0000-4000-8000-000000000001", member, "", http.StatusNotFound},
		{"missing", member, "", http.StatusNotFound},
	}
	for _, tt := range tests {
		got, err := c.GetClusterTemplate(t.Context(), tt.ident, tt.scope)
		var me *magnum.Error
		switch {
		case tt.status == 0 && err != nil:
			t.Errorf("%s: %v", tt.ident, err)
		case tt.status == 0 && got.UUID != tt.wantUUID:
			t.Errorf("%s: got %s, want %s", tt.ident, got.UUID, tt.wantUUID)
		case tt.status != 0 && (!errors.As(err, &me) || me.Status != tt.status):
			t.Errorf("%s: err %v, want status %d", tt.ident, err, tt.status)
		}
	}
	_, err := c.GetClusterTemplate(t.Context(), "missing", member)
	if err == nil || err.Error() != "ClusterTemplate missing could not be found." {
		t.Errorf("not found message: %v", err)
	}
	_, err = c.GetClusterTemplate(t.Context(), "dup", member)
	if err == nil || err.Error() != "Multiple ClusterTemplates exist with same name. Please use the ClusterTemplate uuid instead." {
		t.Errorf("conflict message: %v", err)
	}
	if got, err := c.GetClusterTemplateByRef(t.Context(), "1", member); err != nil || got.Name != "own" {
		t.Errorf("by id: %v %v", got, err)
	}
}

func TestCreateClusterTemplateConductor(t *testing.T) {
	c := templatesConductor(t)
	rc := &magnum.RequestContext{ProjectID: "p1", UserID: "u1"}
	img, coe, vm, f := openstack.StaticImageName, "kubernetes", "vm", false
	authorized, published := 0, 0
	in := conductor.TemplateCreate{
		Template:  magnum.ClusterTemplate{COE: &coe, ImageID: &img, ServerType: &vm, Public: &f, Hidden: &f},
		Has:       map[string]bool{"coe": true, "image_id": true},
		Authorize: func() error { authorized++; return nil },
		Publish:   func() error { published++; return nil },
	}
	got, err := c.CreateClusterTemplate(t.Context(), rc, in)
	if err != nil {
		t.Fatal(err)
	}
	if authorized != 1 || published != 0 || got.ProjectID != "p1" || got.UserID != "u1" || *got.NetworkDriver != "flannel" ||
		*got.Driver != fake.Name || *got.ClusterDistro != "ubuntu" || got.Name == "" || got.UUID == "" {
		t.Errorf("created %+v (authorized %d, published %d)", got, authorized, published)
	}
	// The decorators run before the policy check.
	authorized = 0
	bad := "swarm"
	in.Template.COE = &bad
	if _, err := c.CreateClusterTemplate(t.Context(), rc, in); err == nil || authorized != 0 {
		t.Errorf("coe swarm: %v (authorized %d)", err, authorized)
	}
}
