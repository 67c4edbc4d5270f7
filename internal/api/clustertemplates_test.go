package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/api"
	"github.com/openkeel/openkeel-magnum/internal/auth"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/policy"
)

// ctEnv is an API server over a migrated SQLite database with the fake
// driver, the static OpenStack and the real policy engine.
type ctEnv struct {
	t    *testing.T
	h    http.Handler
	db   *db.DB
	cond *conductor.Conductor
}

func ctNewEnv(t *testing.T) *ctEnv {
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
	// Magnum 23.0.0 runs oslo.policy with the new defaults and scope
	// checks enforced.
	pol, err := policy.New(policy.Options{EnforceNewDefaults: true, EnforceScope: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	c := &conductor.Conductor{
		DB:        d,
		Drivers:   driver.NewRegistry(driver.Selection{}, fake.New(fake.Options{})),
		OpenStack: openstack.NewStatic(false),
		Now:       func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		NewUUID: func() string {
			n++
			return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		},
	}
	h := api.New(api.Options{
		Auth:      auth.NewNoAuth(),
		Policy:    pol,
		Conductor: c,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return &ctEnv{t: t, h: h, db: d, cond: c}
}

// ctCaller is the identity of a request.
type ctCaller struct{ project, user, roles string }

var (
	ctMember = ctCaller{"p1", "u1", "member"}
	ctReader = ctCaller{"p1", "u1", "reader"}
	ctOther  = ctCaller{"p2", "u2", "member"}
	ctAdmin  = ctCaller{"padmin", "uadmin", "admin"}
)

type ctResp struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

func (r ctResp) detail() string {
	errs, _ := r.body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	s, _ := e["detail"].(string)
	return s
}

func (e *ctEnv) do(who ctCaller, method, path string, body any) ctResp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req := httptest.NewRequestWithContext(e.t.Context(), method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Project-Id", who.project)
	req.Header.Set("X-User-Id", who.user)
	req.Header.Set("X-Roles", who.roles)
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	out := ctResp{status: w.Code, header: w.Header(), raw: w.Body.String()}
	if w.Body.Len() > 0 {
		_ = json.Unmarshal(w.Body.Bytes(), &out.body)
	}
	return out
}

// ctBody is a valid create body for the static OpenStack.
func ctBody(extra map[string]any) map[string]any {
	b := map[string]any{
		"name": "k8s", "coe": "kubernetes", "image_id": openstack.StaticImageName,
		"flavor_id": "m1.small", "master_flavor_id": "m1.medium", "external_network_id": "public",
		"keypair_id": "default", "labels": map[string]any{"a": "1", "b": 2, "c": true},
	}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

func (e *ctEnv) create(who ctCaller, extra map[string]any) map[string]any {
	e.t.Helper()
	r := e.do(who, "POST", "/v1/clustertemplates", ctBody(extra))
	if r.status != http.StatusCreated {
		e.t.Fatalf("create: %d %s", r.status, r.raw)
	}
	return r.body
}

// insert writes a template row directly (any project, public/hidden
// without the publish rule).
func (e *ctEnv) insert(uuid, name, project string, public, hidden bool) {
	e.t.Helper()
	coe, img := "kubernetes", "ubuntu"
	tpl := magnum.ClusterTemplate{UUID: uuid, Name: name, ProjectID: project, UserID: "u-" + project,
		COE: &coe, ImageID: &img, Public: &public, Hidden: &hidden}
	if err := e.db.InTx(e.t.Context(), func(tx *db.Tx) error { return tx.CreateClusterTemplate(e.t.Context(), &tpl) }); err != nil {
		e.t.Fatal(err)
	}
}

// useTemplate creates a cluster row referencing the template uuid.
func (e *ctEnv) useTemplate(templateUUID string) {
	e.t.Helper()
	st := magnum.StatusCreateFailed
	cl := magnum.Cluster{UUID: "c0000000-0000-4000-8000-000000000001", Name: "c1", ProjectID: "p9", UserID: "u9",
		ClusterTemplateID: templateUUID, Status: &st}
	if err := e.db.InTx(e.t.Context(), func(tx *db.Tx) error { return tx.CreateCluster(e.t.Context(), &cl) }); err != nil {
		e.t.Fatal(err)
	}
}

// snapshot renders every cluster_template row.
func (e *ctEnv) snapshot() string {
	e.t.Helper()
	rows, err := e.db.SQL().QueryContext(e.t.Context(), "SELECT * FROM cluster_template ORDER BY id")
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			e.t.Fatal(err)
		}
		for i, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprintf(&b, "%s=%v|", cols[i], v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestCreateClusterTemplate(t *testing.T) {
	e := ctNewEnv(t)
	r := e.do(ctMember, "POST", "/v1/clustertemplates", ctBody(map[string]any{"cluster_distro": "fedora"}))
	if r.status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	uuid, _ := r.body["uuid"].(string)
	if got, want := r.header.Get("Location"), "http://example.com/v1/clustertemplates/"+uuid; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	want := map[string]any{
		"name": "k8s", "network_driver": "flannel", "cluster_distro": "ubuntu", "project_id": "p1",
		"user_id": "u1", "server_type": "vm", "public": false, "hidden": false, "floating_ip_enabled": true,
		"tls_disabled": false, "registry_enabled": false, "master_lb_enabled": false, "driver": fake.Name,
		"docker_volume_size": nil, "updated_at": nil, "created_at": "2026-01-02T03:04:05+00:00",
	}
	for k, v := range want {
		if fmt.Sprint(r.body[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, r.body[k], v)
		}
	}
	if got := fmt.Sprint(r.body["labels"]); got != "map[a:1 b:2 c:True]" {
		t.Errorf("labels = %s", got)
	}
	if n := len(r.body); n != 36 {
		t.Errorf("%d fields, want 36: %v", n, r.body)
	}
	links, _ := r.body["links"].([]any)
	if len(links) != 2 {
		t.Errorf("links = %v", r.body["links"])
	}

	t.Run("label values are stored as Python strings", func(t *testing.T) {
		r := e.do(ctMember, "POST", "/v1/clustertemplates", ctBody(map[string]any{"labels": map[string]any{"f": 1.5, "t": false, "n": 10}}))
		if r.status != http.StatusCreated || fmt.Sprint(r.body["labels"]) != "map[f:1.5 n:10 t:False]" {
			t.Errorf("%d %v", r.status, r.body["labels"])
		}
	})
	t.Run("generated name and supplied uuid", func(t *testing.T) {
		r := e.do(ctMember, "POST", "/v1/clustertemplates", ctBody(map[string]any{"name": nil, "uuid": "11111111-2222-4333-8444-555555555555"}))
		if r.status != http.StatusCreated || r.body["uuid"] != "11111111-2222-4333-8444-555555555555" || !strings.HasSuffix(fmt.Sprint(r.body["name"]), "-template") {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		r = e.do(ctMember, "POST", "/v1/clustertemplates", ctBody(map[string]any{"uuid": "11111111-2222-4333-8444-555555555555"}))
		if r.status != http.StatusConflict {
			t.Errorf("duplicate uuid: %d %s", r.status, r.raw)
		}
	})
	t.Run("publish needs the publish rule", func(t *testing.T) {
		for _, f := range []string{"public", "hidden"} {
			r := e.do(ctMember, "POST", "/v1/clustertemplates", ctBody(map[string]any{f: true}))
			if r.status != http.StatusForbidden || r.detail() != "Not authorized to set public or hidden flag for cluster template." {
				t.Errorf("%s: %d %s", f, r.status, r.raw)
			}
		}
		if r := e.do(ctAdmin, "POST", "/v1/clustertemplates", ctBody(map[string]any{"public": true})); r.status != http.StatusCreated {
			t.Errorf("admin public: %d %s", r.status, r.raw)
		}
	})
	t.Run("reader is refused after the decorators", func(t *testing.T) {
		r := e.do(ctReader, "POST", "/v1/clustertemplates", ctBody(nil))
		if r.status != http.StatusForbidden || r.detail() != "Policy doesn't allow clustertemplate:create to be performed." {
			t.Errorf("%d %s", r.status, r.raw)
		}
		r = e.do(ctReader, "POST", "/v1/clustertemplates", ctBody(map[string]any{"coe": "swarm"}))
		if r.status != http.StatusBadRequest {
			t.Errorf("bad coe before policy: %d %s", r.status, r.raw)
		}
	})
}

func TestCreateClusterTemplateValidation(t *testing.T) {
	e := ctNewEnv(t)
	long := strings.Repeat("i", 256)
	tests := []struct {
		name   string
		extra  map[string]any
		status int
		detail string
	}{
		{"unknown attribute", map[string]any{"foo": 1}, 400, "Unknown attribute for argument cluster_template: foo"},
		{"read only", map[string]any{"project_id": "x"}, 400, "Invalid input for field/attribute project_id. Value: 'x'. Cannot set read only field."},
		{"missing image", map[string]any{"image_id": nil}, 400, "Invalid input for field/attribute image_id. Value: 'None'. Mandatory field missing."},
		{"missing coe", map[string]any{"coe": nil}, 400, "Requested COE type Unset is not supported."},
		{"bad coe", map[string]any{"coe": "swarm"}, 400, "Invalid input for field/attribute coe. Value: 'swarm'. Value should be one of: kubernetes"},
		{"long name", map[string]any{"name": long}, 400, "Invalid input for field/attribute name. Value: '" + long + "'. Value should have a maximum character requirement of 255"},
		{"empty name", map[string]any{"name": ""}, 400, "Invalid input for field/attribute name. Value: ''. Value should have a minimum character requirement of 1"},
		{"name not a string", map[string]any{"name": 5}, 400, "Invalid input for field/attribute name. Value: '5'. Value should be string"},
		{"bad uuid", map[string]any{"uuid": "x"}, 400, "Expected a uuid but received x."},
		{"port string", map[string]any{"apiserver_port": "abc"}, 400, ""},
		{"port low", map[string]any{"apiserver_port": 80}, 400, "Invalid input for field/attribute apiserver_port. Value: '80'. Value should be greater or equal to 1024"},
		{"volume zero", map[string]any{"docker_volume_size": 0}, 400, "Invalid input for field/attribute docker_volume_size. Value: '0'. Value should be greater or equal to 1"},
		{"devicemapper", map[string]any{"docker_storage_driver": "devicemapper", "docker_volume_size": 2}, 400, "docker volume size 2 GB is not valid, expecting minimum value 3GB for devicemapper storage driver."},
		{"bad dns", map[string]any{"dns_nameserver": "8.8.8.8,bad"}, 400, "Expected a single dns address or comma separated dns list, but received 8.8.8.8,bad."},
		{"labels not dict", map[string]any{"labels": "x"}, 400, ""},
		{"labels nested", map[string]any{"labels": map[string]any{"a": []any{1}}}, 400, ""},
		{"bad bool", map[string]any{"public": "maybe"}, 400, ""},
		{"bad server type", map[string]any{"server_type": "xx"}, 400, "Invalid input for field/attribute server_type. Value: 'xx'. Value should be one of: vm, bm"},
		{"network driver unsupported", map[string]any{"network_driver": "weave"}, 400, "Network driver type weave is not supported, expecting a flannel/calico/cilium/unspecified network driver."},
		{"network driver not allowed", map[string]any{"network_driver": "cilium"}, 400, "Network driver type cilium is not allowed, expecting a flannel/calico/unspecified network driver. "},
		{"volume driver", map[string]any{"volume_driver": "rexray"}, 400, "Volume driver type rexray is not supported, expecting a cinder/unspecified volume driver."},
		{"unknown image", map[string]any{"image_id": "nope"}, 400, "Image nope could not be found."},
		{"unknown flavor", map[string]any{"flavor_id": "nope"}, 400, "Unable to find flavor nope."},
		{"null flavor", map[string]any{"flavor_id": json.RawMessage("null")}, 400, "Unable to find flavor None."},
		{"unknown external network", map[string]any{"external_network_id": "nope"}, 400, "Unable to find external network nope."},
		{"unknown driver", map[string]any{"driver": "nope"}, 400, "Cluster driver (nope) not supported."},
		{"read only date", map[string]any{"created_at": "2020-01-01T00:00:00"}, 400, "Invalid input for field/attribute created_at. Value: '2020-01-01 00:00:00'. Cannot set read only field."},
		{"bad date", map[string]any{"created_at": "bad"}, 400, ""},
		{"null label", map[string]any{"labels": map[string]any{"a": nil}}, 400, "Field `labels[a]' cannot be None"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(ctMember, "POST", "/v1/clustertemplates", ctBody(tt.extra))
			if r.status != tt.status || (tt.detail != "" && r.detail() != tt.detail) {
				t.Errorf("%d %q, want %d %q", r.status, r.detail(), tt.status, tt.detail)
			}
		})
	}
	if s := e.snapshot(); s != "" {
		t.Errorf("rows written: %s", s)
	}
}

func TestGetClusterTemplateVisibility(t *testing.T) {
	e := ctNewEnv(t)
	e.insert("a0000000-0000-4000-8000-000000000001", "own", "p1", false, false)
	e.insert("a0000000-0000-4000-8000-000000000002", "ownhidden", "p1", false, true)
	e.insert("a0000000-0000-4000-8000-000000000003", "otherprivate", "p2", false, false)
	e.insert("a0000000-0000-4000-8000-000000000004", "otherpublic", "p2", true, false)
	e.insert("a0000000-0000-4000-8000-000000000005", "otherpublichidden", "p2", true, true)
	e.insert("a0000000-0000-4000-8000-000000000006", "dup", "p1", false, false)
	e.insert("a0000000-0000-4000-8000-000000000007", "dup", "p2", true, false)
	tests := []struct {
		who    ctCaller
		ident  string
		status int
	}{
		{ctReader, "own", 200},
		{ctReader, "a0000000-0000-4000-8000-000000000001", 200},
		{ctReader, "ownhidden", 200},
		{ctReader, "otherprivate", 404},
		{ctReader, "a0000000-0000-4000-8000-000000000003", 404},
		{ctReader, "otherpublic", 200},
		{ctReader, "otherpublichidden", 404},
		{ctReader, "dup", 409},
		{ctReader, "A0000000-0000-4000-8000-000000000001", 404},
		{ctReader, "nothing", 404},
		{ctAdmin, "otherprivate", 200},
		{ctAdmin, "otherpublichidden", 200},
	}
	for _, tt := range tests {
		r := e.do(tt.who, "GET", "/v1/clustertemplates/"+tt.ident, nil)
		if r.status != tt.status {
			t.Errorf("%s GET %s: %d, want %d (%s)", tt.who.roles, tt.ident, r.status, tt.status, r.raw)
		}
	}
	if r := e.do(ctReader, "GET", "/v1/clustertemplates/dup", nil); r.detail() != "Multiple ClusterTemplates exist with same name. Please use the ClusterTemplate uuid instead." {
		t.Errorf("409 detail %q", r.detail())
	}
	names := func(r ctResp) string {
		var out []string
		list, _ := r.body["clustertemplates"].([]any)
		for _, x := range list {
			out = append(out, fmt.Sprint(x.(map[string]any)["name"]))
		}
		return strings.Join(out, ",")
	}
	if got := names(e.do(ctReader, "GET", "/v1/clustertemplates", nil)); got != "own,ownhidden,otherpublic,dup,dup" {
		t.Errorf("member list = %s", got)
	}
	if got := names(e.do(ctAdmin, "GET", "/v1/clustertemplates/detail", nil)); got != "own,ownhidden,otherprivate,otherpublic,otherpublichidden,dup,dup" {
		t.Errorf("admin list = %s", got)
	}
	r := e.do(ctReader, "GET", "/v1/clustertemplates?limit=2&sort_key=name&sort_dir=desc", nil)
	if got := names(r); got != "ownhidden,own" {
		t.Errorf("sorted page = %s", got)
	}
	wantNext := "http://example.com/v1/clustertemplates?sort_key=name&sort_dir=desc&limit=2&marker=a0000000-0000-4000-8000-000000000001"
	if r.body["next"] != wantNext {
		t.Errorf("next = %v", r.body["next"])
	}
	r = e.do(ctReader, "GET", "/v1/clustertemplates?limit=2&sort_key=name&sort_dir=desc&marker=a0000000-0000-4000-8000-000000000001", nil)
	if got := names(r); got != "otherpublic,dup" {
		t.Errorf("second page = %s (%s)", got, r.raw)
	}
	for q, want := range map[string]string{
		"limit=0":       "Limit must be positive",
		"sort_dir=up":   "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'",
		"sort_key=nope": "The sort_key value \"nope\" is an invalid field for sorting",
		"marker=a0000000-0000-4000-8000-000000000003": "ClusterTemplate a0000000-0000-4000-8000-000000000003 could not be found.",
	} {
		r := e.do(ctReader, "GET", "/v1/clustertemplates?"+q, nil)
		if r.detail() != want {
			t.Errorf("%s: %d %q", q, r.status, r.detail())
		}
	}
	if r := e.do(ctReader, "GET", "/v1/clustertemplates/a0000000-0000-4000-8000-000000000001/detail", nil); r.status != 404 {
		t.Errorf("detail against single: %d", r.status)
	}
}

func TestPatchClusterTemplate(t *testing.T) {
	e := ctNewEnv(t)
	tpl := e.create(ctMember, nil)
	uuid := tpl["uuid"].(string)
	path := "/v1/clustertemplates/" + uuid
	r := e.do(ctMember, "PATCH", path, []map[string]any{
		{"op": "replace", "path": "/name", "value": "renamed"},
		{"op": "replace", "path": "/labels", "value": "{'x': 'y'}"},
		{"op": "remove", "path": "/keypair_id"},
		{"op": "replace", "path": "/docker_volume_size", "value": 7},
	})
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	if r.body["name"] != "renamed" || fmt.Sprint(r.body["labels"]) != "map[x:y]" || r.body["keypair_id"] != nil ||
		r.body["docker_volume_size"] != float64(7) || r.body["updated_at"] != nil {
		t.Errorf("patched = %s", r.raw)
	}
	// Magnum answers with the saved object without reading it back: the
	// new updated_at shows on the next read.
	if r := e.do(ctReader, "GET", path, nil); r.body["updated_at"] == nil || r.body["name"] != "renamed" {
		t.Errorf("after patch = %s", r.raw)
	}
	tests := []struct {
		name   string
		who    ctCaller
		ops    any
		status int
		detail string
	}{
		{"internal", ctMember, []map[string]any{{"op": "replace", "path": "/uuid", "value": "x"}}, 400, "'/uuid' is an internal attribute and can not be updated"},
		{"mandatory", ctMember, []map[string]any{{"op": "remove", "path": "/image_id"}}, 400, "'/image_id' is a mandatory attribute and can not be removed"},
		{"add existing", ctMember, []map[string]any{{"op": "add", "path": "/name", "value": "x"}}, 400, "The attribute /name has existed, please use 'replace' operation instead."},
		{"add unknown", ctMember, []map[string]any{{"op": "add", "path": "/foo", "value": "x"}}, 400, "Adding a new attribute /foo to the root of the resource is not allowed."},
		{"string for int", ctMember, []map[string]any{{"op": "replace", "path": "/docker_volume_size", "value": "7"}}, 400, "Invalid input for field/attribute docker_volume_size. Value: '7'. '<' not supported between instances of 'str' and 'int'"},
		{"network driver", ctMember, []map[string]any{{"op": "replace", "path": "/network_driver", "value": "weave"}}, 400, "Network driver type weave is not supported, expecting a flannel/calico/cilium/unspecified network driver."},
		{"publish", ctMember, []map[string]any{{"op": "replace", "path": "/public", "value": true}}, 403, "Not authorized to set public or hidden flag for cluster template."},
		{"other project", ctOther, []map[string]any{{"op": "replace", "path": "/name", "value": "x"}}, 404, "ClusterTemplate " + uuid + " could not be found."},
		{"reader", ctReader, []map[string]any{{"op": "replace", "path": "/name", "value": "x"}}, 403, "Policy doesn't allow clustertemplate:update to be performed."},
		{"bad path", ctMember, []map[string]any{{"op": "replace", "path": "/labels/a.b", "value": "x"}}, 400, ""},
		{"not a list", ctMember, map[string]any{"op": "replace"}, 400, ""},
		{"unknown image", ctMember, []map[string]any{{"op": "replace", "path": "/image_id", "value": "nope"}}, 400, "Image nope could not be found."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tt.who, "PATCH", path, tt.ops)
			if r.status != tt.status || (tt.detail != "" && r.detail() != tt.detail) {
				t.Errorf("%d %q, want %d %q", r.status, r.detail(), tt.status, tt.detail)
			}
		})
	}
	t.Run("admin cannot patch another project's private template", func(t *testing.T) {
		r := e.do(ctAdmin, "PATCH", path, []map[string]any{{"op": "replace", "path": "/name", "value": "x"}})
		if r.status != http.StatusNotFound {
			t.Errorf("%d %s", r.status, r.raw)
		}
	})
}

func TestClusterTemplateInUse(t *testing.T) {
	e := ctNewEnv(t)
	tpl := e.create(ctMember, nil)
	uuid := tpl["uuid"].(string)
	path := "/v1/clustertemplates/" + uuid
	e.useTemplate(uuid)
	refused := "ClusterTemplate " + uuid + " is referenced by one or multiple clusters."
	if r := e.do(ctMember, "DELETE", path, nil); r.status != 400 || r.detail() != refused {
		t.Errorf("delete: %d %s", r.status, r.raw)
	}
	tests := []struct {
		name   string
		who    ctCaller
		ops    []map[string]any
		status int
	}{
		{"rename", ctMember, []map[string]any{{"op": "replace", "path": "/name", "value": "n2"}}, 200},
		{"tags", ctMember, []map[string]any{{"op": "replace", "path": "/tags", "value": "t"}}, 200},
		{"two changes", ctMember, []map[string]any{{"op": "replace", "path": "/name", "value": "n3"}, {"op": "replace", "path": "/tags", "value": "u"}}, 400},
		{"labels", ctMember, []map[string]any{{"op": "replace", "path": "/labels", "value": "{}"}}, 400},
		{"empty patch", ctMember, []map[string]any{}, 400},
	}
	for _, tt := range tests {
		r := e.do(tt.who, "PATCH", path, tt.ops)
		if r.status != tt.status {
			t.Errorf("%s: %d %s", tt.name, r.status, r.raw)
		}
		if tt.status == 400 && r.detail() != refused {
			t.Errorf("%s: detail %q", tt.name, r.detail())
		}
	}
}

func TestDeleteClusterTemplate(t *testing.T) {
	e := ctNewEnv(t)
	tpl := e.create(ctMember, map[string]any{"name": "gone"})
	uuid := tpl["uuid"].(string)
	if r := e.do(ctReader, "DELETE", "/v1/clustertemplates/gone", nil); r.status != 403 {
		t.Errorf("reader delete: %d", r.status)
	}
	if r := e.do(ctOther, "DELETE", "/v1/clustertemplates/gone", nil); r.status != 404 {
		t.Errorf("other project delete: %d", r.status)
	}
	if r := e.do(ctMember, "DELETE", "/v1/clustertemplates/gone", nil); r.status != 204 || r.raw != "" {
		t.Errorf("delete: %d %q", r.status, r.raw)
	}
	if r := e.do(ctMember, "GET", "/v1/clustertemplates/"+uuid, nil); r.status != 404 {
		t.Errorf("after delete: %d", r.status)
	}
	e.insert("a0000000-0000-4000-8000-000000000003", "otherprivate", "p2", false, false)
	if r := e.do(ctAdmin, "DELETE", "/v1/clustertemplates/otherprivate", nil); r.status != 204 {
		t.Errorf("admin delete of another project's template: %d %s", r.status, r.raw)
	}
}

// TestClusterTemplateBadInput sends malformed requests and checks that
// each is refused with a 4xx and leaves the cluster_template table as it
// was.
func TestClusterTemplateBadInput(t *testing.T) {
	e := ctNewEnv(t)
	tpl := e.create(ctMember, map[string]any{"name": "keep"})
	e.insert("a0000000-0000-4000-8000-000000000009", "x'; DROP TABLE cluster_template; --", "p1", false, false)
	path := "/v1/clustertemplates/" + tpl["uuid"].(string)
	before := e.snapshot()
	tests := []struct {
		name, method, path string
		body               any
	}{
		{"bad json", "POST", "/v1/clustertemplates", `{"name": "x",`},
		{"json list", "POST", "/v1/clustertemplates", `[1, 2]`},
		{"json null", "POST", "/v1/clustertemplates", `null`},
		{"json string", "POST", "/v1/clustertemplates", `"text"`},
		{"unknown fields", "POST", "/v1/clustertemplates", ctBody(map[string]any{"id": 5, "created": "x"})},
		{"int as object", "POST", "/v1/clustertemplates", ctBody(map[string]any{"docker_volume_size": map[string]any{}})},
		{"int as list", "POST", "/v1/clustertemplates", ctBody(map[string]any{"apiserver_port": []any{1}})},
		{"huge int", "POST", "/v1/clustertemplates", ctBody(map[string]any{"docker_volume_size": json.RawMessage("123456789012345678901234567890")})},
		{"int overflow", "POST", "/v1/clustertemplates", ctBody(map[string]any{"docker_volume_size": json.RawMessage("9999999999")})},
		{"bool as list", "POST", "/v1/clustertemplates", ctBody(map[string]any{"tls_disabled": []any{}})},
		{"string as bool", "POST", "/v1/clustertemplates", ctBody(map[string]any{"image_id": true})},
		{"labels as list", "POST", "/v1/clustertemplates", ctBody(map[string]any{"labels": []any{"a"}})},
		{"dns as int", "POST", "/v1/clustertemplates", ctBody(map[string]any{"dns_nameserver": 5})},
		{"read only links", "POST", "/v1/clustertemplates", ctBody(map[string]any{"links": []any{}})},
		{"read only created_at", "POST", "/v1/clustertemplates", ctBody(map[string]any{"created_at": "2020-01-01T00:00:00"})},
		{"injection in name too long", "POST", "/v1/clustertemplates", ctBody(map[string]any{"name": strings.Repeat("'; DROP TABLE x; --", 20)})},
		{"form body", "POST", "/v1/clustertemplates", nil},
		{"patch bad json", "PATCH", path, `[{"op": "replace"`},
		{"patch object", "PATCH", path, map[string]any{"op": "replace", "path": "/name", "value": "x"}},
		{"patch unknown op", "PATCH", path, []map[string]any{{"op": "move", "path": "/name", "value": "x"}}},
		{"patch from", "PATCH", path, []map[string]any{{"op": "replace", "path": "/name", "value": "x", "from": "/a"}}},
		{"patch bad path", "PATCH", path, []map[string]any{{"op": "replace", "path": "name", "value": "x"}}},
		{"patch traversal", "PATCH", path, []map[string]any{{"op": "replace", "path": "/../../etc", "value": "x"}}},
		{"patch dotted", "PATCH", path, []map[string]any{{"op": "add", "path": "/labels/a.b", "value": "x"}}},
		{"patch missing member", "PATCH", path, []map[string]any{{"op": "remove", "path": "/nothing"}}},
		{"patch float", "PATCH", path, []map[string]any{{"op": "replace", "path": "/docker_volume_size", "value": 1.5}}},
		{"patch nested value", "PATCH", path, []map[string]any{{"op": "replace", "path": "/name", "value": map[string]any{"a": 1}}}},
		{"patch bad literal", "PATCH", path, []map[string]any{{"op": "replace", "path": "/labels", "value": "{'a': "}}},
		{"patch labels list", "PATCH", path, []map[string]any{{"op": "replace", "path": "/labels", "value": "['a']"}}},
		{"patch id", "PATCH", path, []map[string]any{{"op": "replace", "path": "/id", "value": 1}}},
		{"patch project", "PATCH", path, []map[string]any{{"op": "replace", "path": "/project_id", "value": "p2"}}},
		{"patch bool", "PATCH", path, []map[string]any{{"op": "replace", "path": "/tls_disabled", "value": "maybe"}}},
		{"patch second op bad", "PATCH", path, []map[string]any{{"op": "replace", "path": "/name", "value": "ok"}, {"op": "replace", "path": "/apiserver_port", "value": 1}}},
		{"sort key injection", "GET", "/v1/clustertemplates?sort_key=id;DROP%20TABLE%20cluster_template", nil},
		{"sort key quote", "GET", "/v1/clustertemplates?sort_key=name%22%20OR%201=1%20--", nil},
		{"sort dir injection", "GET", "/v1/clustertemplates?sort_dir=asc;DELETE", nil},
		{"marker injection", "GET", "/v1/clustertemplates?marker=x'%20OR%20'1'='1", nil},
		{"limit text", "GET", "/v1/clustertemplates?limit=1;2", nil},
		{"unknown query", "GET", "/v1/clustertemplates?name=x", nil},
		{"name injection lookup", "GET", "/v1/clustertemplates/x'%20OR%20'1'='1", nil},
		{"name injection delete", "DELETE", "/v1/clustertemplates/%25", nil},
		{"name injection patch", "PATCH", "/v1/clustertemplates/x'%20OR%201=1--", []map[string]any{{"op": "replace", "path": "/name", "value": "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ctResp
			if tt.name == "form body" {
				req := httptest.NewRequestWithContext(t.Context(), "POST", "/v1/clustertemplates", strings.NewReader("name=x"))
				req.Header.Set("X-Roles", "member")
				w := httptest.NewRecorder()
				e.h.ServeHTTP(w, req)
				r = ctResp{status: w.Code, raw: w.Body.String()}
			} else {
				r = e.do(ctCaller{"p1", "u1", "reader,member"}, tt.method, tt.path, tt.body)
			}
			if r.status < 400 || r.status > 499 {
				t.Errorf("%d %s", r.status, r.raw)
			}
			if after := e.snapshot(); after != before {
				t.Errorf("table changed:\n%s\nwant\n%s", after, before)
			}
		})
	}
	// The injected name is only data: it can be read back by name.
	if r := e.do(ctReader, "GET", "/v1/clustertemplates/x';%20DROP%20TABLE%20cluster_template;%20--", nil); r.status != 200 {
		t.Errorf("lookup of the odd name: %d %s", r.status, r.raw)
	}
}
