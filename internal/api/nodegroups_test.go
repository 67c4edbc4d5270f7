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

	"github.com/google/go-cmp/cmp"

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

// ngEnv is an API server over a migrated SQLite database with the fake
// driver, the static OpenStack, the real policy engine and no-auth
// identities, shared by the nodegroup, quota, stats, federation and
// credential tests.
type ngEnv struct {
	t    *testing.T
	h    http.Handler
	db   *db.DB
	cond *conductor.Conductor
}

// ngCaller is the identity of a request.
type ngCaller struct{ project, user, roles string }

var (
	ngMember = ngCaller{"p1", "u1", "member,reader"}
	ngReader = ngCaller{"p1", "u1", "reader"}
	ngOther  = ngCaller{"p2", "u2", "member,reader"}
	ngAdmin  = ngCaller{"padmin", "uadmin", "admin,member,reader"}
)

// Fixed identifiers of the seeded rows.
const (
	ngTemplateUUID = "7e57a000-0000-4000-8000-000000000001"
	ngClusterUUID  = "c1000000-0000-4000-8000-000000000001"
	ngMasterUUID   = "a1000000-0000-4000-8000-000000000001"
	ngWorkerUUID   = "a1000000-0000-4000-8000-000000000002"
	ngExtraUUID    = "a1000000-0000-4000-8000-000000000003"
)

func ngNewEnv(t *testing.T) *ngEnv {
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
	pol, err := policy.New(policy.Options{EnforceNewDefaults: true, EnforceScope: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	c := &conductor.Conductor{
		DB:        d,
		Drivers:   driver.NewRegistry(driver.Selection{EnabledBeta: []string{fake.Name}}, fake.New(fake.Options{Clock: clock})),
		OpenStack: openstack.NewStatic(false),
		Settings:  conductor.Settings{MaxClustersPerProject: 20},
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:       clock,
		NewUUID: func() string {
			n++
			return fmt.Sprintf("0e000000-0000-4000-8000-%012d", n)
		},
	}
	h := api.New(api.Options{
		Auth:      auth.NewNoAuth(),
		Policy:    pol,
		Conductor: c,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:       clock,
	})
	return &ngEnv{t: t, h: h, db: d, cond: c}
}

func ngPtr[T any](v T) *T { return &v }

// seed writes a template of p1 (fake driver), cluster c1 of p1
// (CREATE_COMPLETE, labels {"a": "1"}, an API address) with its default
// master and worker, and a non-default worker "extra" (node_count 2, min 1,
// max 5).
func (e *ngEnv) seed() {
	e.t.Helper()
	ctx := e.t.Context()
	tmpl := &magnum.ClusterTemplate{
		UUID: ngTemplateUUID, Name: "t1", ProjectID: "p1", UserID: "u1", ImageID: ngPtr(openstack.StaticImageName),
		FlavorID: ngPtr("m1.small"), MasterFlavorID: ngPtr("m1.small"), COE: ngPtr("kubernetes"),
		ServerType: ngPtr("vm"), ClusterDistro: ngPtr("ubuntu"), Driver: ngPtr(fake.Name),
		Public: ngPtr(false), Hidden: ngPtr(false), TLSDisabled: ngPtr(false), RegistryEnabled: ngPtr(false),
		Labels: map[string]string{},
	}
	if err := e.db.CreateClusterTemplate(ctx, tmpl); err != nil {
		e.t.Fatal(err)
	}
	cl := &magnum.Cluster{
		UUID: ngClusterUUID, Name: "c1", ProjectID: "p1", UserID: "u1", ClusterTemplateID: ngTemplateUUID,
		Labels: map[string]string{"a": "1"}, FlavorID: ngPtr("m1.small"), MasterFlavorID: ngPtr("m1.small"),
		APIAddress: ngPtr("https://10.0.0.1:6443"), Status: ngPtr(magnum.StatusCreateComplete),
		StackID: ngPtr("stack-1"),
	}
	if err := e.db.CreateCluster(ctx, cl); err != nil {
		e.t.Fatal(err)
	}
	for _, ng := range []magnum.NodeGroup{
		{UUID: ngMasterUUID, Name: "default-master", Role: ngPtr("master"), NodeCount: ngPtr(1), MinNodeCount: ngPtr(0), IsDefault: ngPtr(true)},
		{UUID: ngWorkerUUID, Name: "default-worker", Role: ngPtr("worker"), NodeCount: ngPtr(3), MinNodeCount: ngPtr(0), IsDefault: ngPtr(true)},
		{UUID: ngExtraUUID, Name: "extra", Role: ngPtr("worker"), NodeCount: ngPtr(2), MinNodeCount: ngPtr(1), MaxNodeCount: ngPtr(5), IsDefault: ngPtr(false)},
	} {
		ng.ClusterID, ng.ProjectID = ngClusterUUID, "p1"
		ng.Status = ngPtr(magnum.StatusCreateComplete)
		ng.FlavorID, ng.ImageID = ngPtr("m1.small"), ngPtr(openstack.StaticImageName)
		ng.Labels = map[string]string{"a": "1"}
		if err := e.db.CreateNodeGroup(ctx, &ng); err != nil {
			e.t.Fatal(err)
		}
	}
}

// ngResp is a decoded answer.
type ngResp struct {
	status int
	raw    string
	body   map[string]any
}

func (r ngResp) detail() string {
	errs, _ := r.body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	s, _ := e["detail"].(string)
	return s
}

// do sends a request as who at the given microversion ("" = none).
func (e *ngEnv) do(who ngCaller, version, method, path string, body any) ngResp {
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
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "container-infra "+version)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	out := ngResp{status: w.Code, raw: w.Body.String()}
	if w.Body.Len() > 0 {
		_ = json.Unmarshal(w.Body.Bytes(), &out.body)
	}
	return out
}

// expect checks the status and, when detail is not empty, the error detail.
func (e *ngEnv) expect(r ngResp, status int, detail string) {
	e.t.Helper()
	if r.status != status {
		// Errorf, not Fatalf: subtests share e.t.
		e.t.Errorf("status %d, want %d: %s", r.status, status, r.raw)
		return
	}
	if detail != "" && r.detail() != detail {
		e.t.Errorf("detail %q, want %q", r.detail(), detail)
	}
}

// nodeGroup reads a nodegroup row.
func (e *ngEnv) nodeGroup(uuid string) *magnum.NodeGroup {
	e.t.Helper()
	ng, err := e.db.GetNodeGroupByUUID(e.t.Context(), ngClusterUUID, uuid, db.AllProjects)
	if err != nil {
		e.t.Fatalf("nodegroup %s: %v", uuid, err)
	}
	return ng
}

func (e *ngEnv) clusterStatus() magnum.Status {
	e.t.Helper()
	cl, err := e.db.GetClusterByUUID(e.t.Context(), ngClusterUUID, db.AllProjects)
	if err != nil {
		e.t.Fatal(err)
	}
	return *cl.Status
}

// snapshot renders every row of every Magnum table.
func (e *ngEnv) snapshot() map[string][]string {
	e.t.Helper()
	out := map[string][]string{}
	for _, table := range db.MagnumTables {
		rows, err := e.db.SQL().QueryContext(e.t.Context(), `SELECT * FROM "`+table+`" ORDER BY id`)
		if err != nil {
			e.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				e.t.Fatal(err)
			}
			var b strings.Builder
			for i, c := range cols {
				v := vals[i]
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%s=%v;", c, v)
			}
			out[table] = append(out[table], b.String())
		}
		if err := rows.Close(); err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

const ngBase = "/v1/clusters/" + ngClusterUUID + "/nodegroups"

func TestNodeGroupList(t *testing.T) {
	e := ngNewEnv(t)
	e.seed()

	t.Run("below 1.9 the resource does not exist", func(t *testing.T) {
		e.expect(e.do(ngReader, "1.8", "GET", ngBase, nil), 406, "")
		e.expect(e.do(ngReader, "", "GET", ngBase, nil), 406, "")
	})
	t.Run("summaries carry WSME defaults, not stored counts", func(t *testing.T) {
		r := e.do(ngReader, "1.9", "GET", ngBase, nil)
		e.expect(r, 200, "")
		items, _ := r.body["nodegroups"].([]any)
		if len(items) != 3 {
			t.Fatalf("%d nodegroups: %s", len(items), r.raw)
		}
		want := map[string]any{
			"uuid": ngExtraUUID, "name": "extra", "flavor_id": "m1.small", "image_id": openstack.StaticImageName,
			"node_count": 2.0, "role": "worker", "min_node_count": 0.0, "max_node_count": nil, "is_default": false,
			"stack_id": nil, "status": "CREATE_COMPLETE", "merge_labels": false,
		}
		if d := cmp.Diff(want, items[2]); d != "" {
			t.Errorf("summary (-want +got):\n%s", d)
		}
		if _, ok := r.body["next"]; ok {
			t.Errorf("unexpected next: %s", r.raw)
		}
	})
	t.Run("role filters exactly", func(t *testing.T) {
		r := e.do(ngReader, "1.9", "GET", ngBase+"?role=master", nil)
		e.expect(r, 200, "")
		if items, _ := r.body["nodegroups"].([]any); len(items) != 1 {
			t.Fatalf("role=master: %s", r.raw)
		}
		r = e.do(ngReader, "1.9", "GET", ngBase+"?role=mast", nil)
		if items, _ := r.body["nodegroups"].([]any); len(items) != 0 {
			t.Fatalf("role=mast: %s", r.raw)
		}
	})
	t.Run("a full page links to the next one", func(t *testing.T) {
		r := e.do(ngReader, "1.9", "GET", "/v1/clusters/c1/nodegroups?limit=2", nil)
		e.expect(r, 200, "")
		want := "http://example.com/v1/clusters/" + ngClusterUUID + "/nodegroups?sort_key=id&sort_dir=asc&limit=2&marker=" + ngWorkerUUID
		if r.body["next"] != want {
			t.Fatalf("next %v, want %s", r.body["next"], want)
		}
		r = e.do(ngReader, "1.9", "GET", ngBase+"?limit=2&marker="+ngWorkerUUID, nil)
		if items, _ := r.body["nodegroups"].([]any); len(items) != 1 {
			t.Fatalf("second page: %s", r.raw)
		}
	})
	t.Run("bad paging parameters", func(t *testing.T) {
		e.expect(e.do(ngReader, "1.9", "GET", ngBase+"?limit=0", nil), 400, "Limit must be positive")
		e.expect(e.do(ngReader, "1.9", "GET", ngBase+"?sort_dir=up", nil), 400,
			"Invalid sort direction: up. Acceptable values are 'asc' or 'desc'")
		e.expect(e.do(ngReader, "1.9", "GET", ngBase+"?sort_key=bogus", nil), 400,
			`The sort_key value "bogus" is an invalid field for sorting`)
		e.expect(e.do(ngReader, "1.9", "GET", ngBase+"?marker=0e000000-0000-4000-8000-00000000ffff", nil), 404,
			"Nodegroup 0e000000-0000-4000-8000-00000000ffff could not be found.")
	})
	t.Run("another project's cluster is not found", func(t *testing.T) {
		e.expect(e.do(ngOther, "1.9", "GET", ngBase, nil), 404, "Cluster "+ngClusterUUID+" could not be found.")
	})
	t.Run("admins see every project", func(t *testing.T) {
		r := e.do(ngAdmin, "1.9", "GET", ngBase, nil)
		e.expect(r, 200, "")
		if items, _ := r.body["nodegroups"].([]any); len(items) != 3 {
			t.Fatalf("admin list: %s", r.raw)
		}
	})
	t.Run("policy is checked before the lookup", func(t *testing.T) {
		e.expect(e.do(ngCaller{"p1", "u1", "foo"}, "1.9", "GET", "/v1/clusters/nope/nodegroups", nil), 403,
			"Policy doesn't allow nodegroup:get_all to be performed.")
	})
}

func TestNodeGroupGet(t *testing.T) {
	e := ngNewEnv(t)
	e.seed()
	for _, ident := range []string{ngExtraUUID, "extra", "3"} {
		t.Run("by "+ident, func(t *testing.T) {
			r := e.do(ngReader, "1.14", "GET", ngBase+"/"+ident, nil)
			e.expect(r, 200, "")
			want := map[string]any{
				"id": 3.0, "uuid": ngExtraUUID, "name": "extra", "cluster_id": ngClusterUUID, "project_id": "p1",
				"docker_volume_size": nil, "labels": map[string]any{"a": "1"}, "flavor_id": "m1.small",
				"image_id": openstack.StaticImageName, "node_addresses": []any{}, "node_count": 2.0, "role": "worker",
				"min_node_count": 1.0, "max_node_count": 5.0, "is_default": false, "stack_id": nil,
				"status": "CREATE_COMPLETE", "status_reason": nil, "version": nil, "merge_labels": false,
				"labels_overridden": map[string]any{}, "labels_added": map[string]any{}, "labels_skipped": map[string]any{},
				"node_labels": map[string]any{}, "node_taints": []any{},
				"created_at": "2026-01-02T03:04:05+00:00", "updated_at": nil,
				"links": []any{
					map[string]any{"href": "http://example.com/v1/clusters/" + ngClusterUUID + "/nodegroups/" + ngExtraUUID, "rel": "self"},
					map[string]any{"href": "http://example.com/clusters/" + ngClusterUUID + "/nodegroups/" + ngExtraUUID, "rel": "bookmark"},
				},
			}
			if d := cmp.Diff(want, r.body); d != "" {
				t.Errorf("detail (-want +got):\n%s", d)
			}
		})
	}
	t.Run("unknown nodegroup", func(t *testing.T) {
		e.expect(e.do(ngReader, "1.9", "GET", ngBase+"/nope", nil), 404, "Nodegroup nope could not be found.")
		e.expect(e.do(ngReader, "1.9", "GET", ngBase+"/99", nil), 404, "Nodegroup 99 could not be found.")
	})
	t.Run("overridden policy refuses", func(t *testing.T) {
		e.expect(e.do(ngCaller{"p1", "u1", "foo"}, "1.9", "GET", ngBase+"/extra", nil), 403,
			"Policy doesn't allow nodegroup:get to be performed.")
	})
}

func TestNodeGroupCreate(t *testing.T) {
	t.Run("202 with the object as built; rows in progress", func(t *testing.T) {
		e := ngNewEnv(t)
		e.seed()
		r := e.do(ngMember, "1.9", "POST", ngBase, map[string]any{
			"name": "gpu", "node_count": 2, "max_node_count": 4, "labels": map[string]any{"b": 2}, "merge_labels": true,
			"node_labels": map[string]any{"workload": "gpu"},
			"node_taints": []any{map[string]any{"key": "gpu", "value": "true", "effect": "NoSchedule"}},
		})
		e.expect(r, 202, "")
		want := map[string]any{
			"id": 4.0, "uuid": "0e000000-0000-4000-8000-000000000001", "name": "gpu", "cluster_id": ngClusterUUID,
			"project_id": "p1", "docker_volume_size": nil, "labels": map[string]any{"a": "1", "b": "2"},
			"flavor_id": "m1.small", "image_id": openstack.StaticImageName, "node_addresses": nil, "node_count": 2.0,
			"role": "worker", "min_node_count": 0.0, "max_node_count": 4.0, "is_default": false, "stack_id": nil,
			"status": nil, "status_reason": nil, "version": nil, "merge_labels": false,
			"labels_overridden": map[string]any{}, "labels_added": map[string]any{"b": "2"}, "labels_skipped": map[string]any{},
			"node_labels": map[string]any{"workload": "gpu"},
			"node_taints": []any{map[string]any{"key": "gpu", "value": "true", "effect": "NoSchedule"}},
			"created_at":  "2026-01-02T03:04:05+00:00", "updated_at": nil,
			"links": []any{
				map[string]any{"href": "http://example.com/v1/clusters/" + ngClusterUUID + "/nodegroups/0e000000-0000-4000-8000-000000000001", "rel": "self"},
				map[string]any{"href": "http://example.com/clusters/" + ngClusterUUID + "/nodegroups/0e000000-0000-4000-8000-000000000001", "rel": "bookmark"},
			},
		}
		if d := cmp.Diff(want, r.body); d != "" {
			t.Errorf("response (-want +got):\n%s", d)
		}
		ng := e.nodeGroup("0e000000-0000-4000-8000-000000000001")
		if *ng.Status != magnum.StatusCreateInProgress || ng.StackID == nil {
			t.Errorf("stored nodegroup status %v stack %v", *ng.Status, ng.StackID)
		}
		if got := e.clusterStatus(); got != magnum.StatusUpdateInProgress {
			t.Errorf("cluster status %s", got)
		}
	})
	t.Run("only a name: defaults from the cluster and template", func(t *testing.T) {
		e := ngNewEnv(t)
		e.seed()
		r := e.do(ngMember, "1.9", "POST", ngBase, map[string]any{"name": "n"})
		e.expect(r, 202, "")
		if r.body["node_count"] != 1.0 || r.body["role"] != "worker" || r.body["flavor_id"] != "m1.small" {
			t.Errorf("defaults: %s", r.raw)
		}
		if d := cmp.Diff(map[string]any{"a": "1"}, r.body["labels"]); d != "" {
			t.Errorf("labels (-want +got):\n%s", d)
		}
	})
	for _, tc := range []struct {
		name   string
		body   any
		status int
		detail string
	}{
		{"duplicate name", map[string]any{"name": "extra"}, 409, "A node group with name extra already exists in the cluster c1."},
		{"count above max", map[string]any{"name": "x", "node_count": 7, "max_node_count": 5}, 409,
			"max_node_count for x is invalid (node_count (7) should be less or equal to max_node_count (5))."},
		{"min above count", map[string]any{"name": "x", "node_count": 2, "min_node_count": 3}, 409,
			"min_node_count for x is invalid (min_node_count (3) should be less or equal to node_count (2))."},
		{"labels on master", map[string]any{"name": "x", "role": "master", "node_labels": map[string]any{"a": "b"}}, 409,
			"node_labels for x is invalid (node_labels may not be set on master nodegroups)."},
		{"restricted label", map[string]any{"name": "x", "node_labels": map[string]any{"node-role.kubernetes.io/x": ""}}, 409, ""},
		{"taint without key", map[string]any{"name": "x", "node_taints": []any{map[string]any{"effect": "NoSchedule"}}}, 409,
			"node_taints for x is invalid (node_taints[0].key is required)."},
		{"master", map[string]any{"name": "x", "role": "master"}, 400, "Creating master nodegroups is currently not supported."},
		{"unknown attribute", map[string]any{"name": "x", "foo": 1}, 400, "Unknown attribute for argument nodegroup: foo"},
		{"read-only attribute", map[string]any{"name": "x", "project_id": "p9"}, 400,
			"Invalid input for field/attribute project_id. Value: 'p9'. Cannot set read only field."},
		{"negative count", map[string]any{"name": "x", "node_count": -1}, 400,
			"Invalid input for field/attribute node_count. Value: '-1'. Value should be greater or equal to 0"},
		{"status the conductor refuses", map[string]any{"name": "x", "status": "CREATE_FAILED"}, 409,
			`nodegroup_create when nodegroup status is "CREATE_FAILED" is not supported.`},
		{"no body", nil, 400, `Missing argument: "nodegroup"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ngNewEnv(t)
			e.seed()
			before := e.snapshot()
			e.expect(e.do(ngMember, "1.9", "POST", ngBase, tc.body), tc.status, tc.detail)
			if d := cmp.Diff(before, e.snapshot()); d != "" {
				t.Errorf("tables changed (-before +after):\n%s", d)
			}
		})
	}
	t.Run("cluster without API address", func(t *testing.T) {
		e := ngNewEnv(t)
		e.seed()
		cl, _ := e.db.GetClusterByUUID(t.Context(), ngClusterUUID, db.AllProjects)
		cl.APIAddress = nil
		if err := e.db.UpdateCluster(t.Context(), cl, "api_address"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.do(ngMember, "1.9", "POST", ngBase, map[string]any{"name": "x"}), 409, "Cluster API address is not available yet")
	})
	t.Run("driver failure leaves the rows failed after the 202", func(t *testing.T) {
		e := ngNewEnv(t)
		e.seed()
		r := e.do(ngMember, "1.9", "POST", ngBase, map[string]any{"name": "bad", "labels": map[string]any{"fake_error": "nodegroup_create"}})
		e.expect(r, 202, "")
		ng := e.nodeGroup("0e000000-0000-4000-8000-000000000001")
		if *ng.Status != magnum.StatusCreateFailed || ng.StatusReason == nil {
			t.Errorf("nodegroup %v %v", *ng.Status, ng.StatusReason)
		}
		if got := e.clusterStatus(); got != magnum.StatusUpdateFailed {
			t.Errorf("cluster status %s", got)
		}
	})
}

func TestNodeGroupPatch(t *testing.T) {
	t.Run("max_node_count replaced; 202 shows the patched object", func(t *testing.T) {
		e := ngNewEnv(t)
		e.seed()
		r := e.do(ngMember, "1.9", "PATCH", ngBase+"/extra", []any{map[string]any{"op": "replace", "path": "/max_node_count", "value": 4}})
		e.expect(r, 202, "")
		if r.body["max_node_count"] != 4.0 || r.body["status"] != "CREATE_COMPLETE" || r.body["updated_at"] != nil {
			t.Errorf("response: %s", r.raw)
		}
		ng := e.nodeGroup(ngExtraUUID)
		if *ng.MaxNodeCount != 4 || *ng.Status != magnum.StatusUpdateInProgress {
			t.Errorf("stored max %d status %s", *ng.MaxNodeCount, *ng.Status)
		}
	})
	t.Run("remove min_node_count sets the default 0", func(t *testing.T) {
		e := ngNewEnv(t)
		e.seed()
		e.expect(e.do(ngMember, "1.9", "PATCH", ngBase+"/extra", []any{map[string]any{"op": "remove", "path": "/min_node_count"}}), 202, "")
		if ng := e.nodeGroup(ngExtraUUID); *ng.MinNodeCount != 0 {
			t.Errorf("min %d", *ng.MinNodeCount)
		}
	})
	t.Run("node labels from a Python literal", func(t *testing.T) {
		e := ngNewEnv(t)
		e.seed()
		e.expect(e.do(ngMember, "1.9", "PATCH", ngBase+"/extra",
			[]any{map[string]any{"op": "replace", "path": "/node_labels", "value": "{'workload': 'gpu'}"}}), 202, "")
		if ng := e.nodeGroup(ngExtraUUID); ng.NodeLabels["workload"] != "gpu" {
			t.Errorf("labels %v", ng.NodeLabels)
		}
	})
	for _, tc := range []struct {
		name   string
		ident  string
		ops    any
		status int
		detail string
	}{
		{"internal attribute", "extra", []any{map[string]any{"op": "replace", "path": "/node_count", "value": 3}}, 400,
			"'/node_count' is an internal attribute and can not be updated"},
		{"max below count", "extra", []any{map[string]any{"op": "replace", "path": "/max_node_count", "value": 1}}, 409,
			"max_node_count for extra is invalid (node_count (2) should be less or equal to max_node_count (1))."},
		{"taints on master", "default-master", []any{map[string]any{"op": "replace", "path": "/node_taints",
			"value": "[{'key': 'a', 'effect': 'NoSchedule'}]"}}, 409,
			"node_taints for default-master is invalid (node_taints may not be set on master nodegroups)."},
		{"non-existent attribute", "extra", []any{map[string]any{"op": "remove", "path": "/nope"}}, 400,
			"Couldn't apply patch '[{'path': '/nope', 'op': 'remove'}]'. Reason: can't remove a non-existent object 'nope'"},
		{"nested change of an internal field", "extra", []any{map[string]any{"op": "add", "path": "/labels/x", "value": "y"}}, 400,
			"'/labels' is an internal attribute and can not be updated"},
		{"unknown nodegroup", "nope", []any{map[string]any{"op": "replace", "path": "/max_node_count", "value": 4}}, 404,
			"Nodegroup nope could not be found."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ngNewEnv(t)
			e.seed()
			before := e.snapshot()
			e.expect(e.do(ngMember, "1.9", "PATCH", ngBase+"/"+tc.ident, tc.ops), tc.status, tc.detail)
			if d := cmp.Diff(before, e.snapshot()); d != "" {
				t.Errorf("tables changed (-before +after):\n%s", d)
			}
		})
	}
	t.Run("cluster lookup comes before the policy", func(t *testing.T) {
		e := ngNewEnv(t)
		e.seed()
		e.expect(e.do(ngCaller{"p1", "u1", "foo"}, "1.9", "PATCH", "/v1/clusters/nope/nodegroups/extra",
			[]any{map[string]any{"op": "replace", "path": "/max_node_count", "value": 4}}), 404, "Cluster nope could not be found.")
		e.expect(e.do(ngCaller{"p1", "u1", "foo"}, "1.9", "PATCH", ngBase+"/extra",
			[]any{map[string]any{"op": "replace", "path": "/max_node_count", "value": 4}}), 403,
			"Policy doesn't allow nodegroup:update to be performed.")
	})
	t.Run("state guard is a synchronous 409", func(t *testing.T) {
		e := ngNewEnv(t)
		e.seed()
		ng := e.nodeGroup(ngExtraUUID)
		ng.Status = ngPtr(magnum.StatusDeleteInProgress)
		if err := e.db.UpdateNodeGroup(t.Context(), ng, "status"); err != nil {
			t.Fatal(err)
		}
		before := e.snapshot()
		e.expect(e.do(ngMember, "1.9", "PATCH", ngBase+"/extra", []any{map[string]any{"op": "replace", "path": "/max_node_count", "value": 4}}),
			409, `nodegroup_update when nodegroup status is "DELETE_IN_PROGRESS" is not supported.`)
		if d := cmp.Diff(before, e.snapshot()); d != "" {
			t.Errorf("tables changed (-before +after):\n%s", d)
		}
	})
}

func TestNodeGroupDelete(t *testing.T) {
	e := ngNewEnv(t)
	e.seed()
	t.Run("default nodegroups cannot be deleted", func(t *testing.T) {
		e.expect(e.do(ngMember, "1.9", "DELETE", ngBase+"/default-worker", nil), 400, "Deleting a default nodegroup is not supported.")
	})
	t.Run("unknown nodegroup", func(t *testing.T) {
		e.expect(e.do(ngMember, "1.9", "DELETE", ngBase+"/nope", nil), 404, "Nodegroup nope could not be found.")
	})
	t.Run("another project", func(t *testing.T) {
		e.expect(e.do(ngOther, "1.9", "DELETE", ngBase+"/extra", nil), 404, "Cluster "+ngClusterUUID+" could not be found.")
	})
	t.Run("204 and the nodegroup goes DELETE_IN_PROGRESS", func(t *testing.T) {
		r := e.do(ngMember, "1.9", "DELETE", ngBase+"/extra", nil)
		e.expect(r, 204, "")
		if r.raw != "" {
			t.Errorf("body %q", r.raw)
		}
		if ng := e.nodeGroup(ngExtraUUID); *ng.Status != magnum.StatusDeleteInProgress {
			t.Errorf("status %s", *ng.Status)
		}
	})
}
