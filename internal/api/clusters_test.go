package api

import (
	"context"
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

	"github.com/openkeel/openkeel-magnum/internal/auth"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/policy"
	"github.com/openkeel/openkeel-magnum/internal/reconcile"
)

// clusterHarness is the API over a migrated SQLite database, the fake
// driver, the static OpenStack, the real policy engine and no-auth
// identities (X-Project-Id, X-User-Id, X-Roles).
type clusterHarness struct {
	h     http.Handler
	db    *db.DB
	c     *conductor.Conductor
	rec   *reconcile.Reconciler
	tmpl  *magnum.ClusterTemplate
	tmpl2 *magnum.ClusterTemplate
}

func newClusterHarness(t *testing.T) *clusterHarness {
	t.Helper()
	ctx := t.Context()
	d, err := db.Open(ctx, db.DialectSQLite, filepath.Join(t.TempDir(), "magnum.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := &conductor.Conductor{
		DB: d, Drivers: driver.NewRegistry(driver.Selection{EnabledBeta: []string{fake.Name}}, fake.New(fake.Options{})),
		OpenStack: openstack.NewStatic(false), Settings: conductor.Settings{MaxClustersPerProject: 20}, Log: quiet,
	}
	pol, err := policy.New(policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{Auth: auth.NewNoAuth(), Policy: pol, Conductor: c, Logger: quiet})
	ch := &clusterHarness{h: h, db: d, c: c, rec: reconcile.New(reconcile.Options{Conductor: c, Log: quiet})}
	s := func(v string) *string { return &v }
	no, yes := false, true
	mk := func(name, kubeTag string) *magnum.ClusterTemplate {
		tm := &magnum.ClusterTemplate{UUID: conductor.NewUUID(), Name: name, ProjectID: "p1", UserID: "u1",
			ImageID: s(openstack.StaticImageName), FlavorID: s("m1.small"), MasterFlavorID: s("m1.medium"),
			ExternalNetworkID: s("public"), COE: s("kubernetes"), ServerType: s("vm"), ClusterDistro: s("ubuntu"),
			Driver: s(fake.Name), NetworkDriver: s("flannel"), Labels: map[string]string{"kube_tag": kubeTag, "t": "1"},
			Public: &no, Hidden: &no, MasterLBEnabled: &yes, FloatingIPEnabled: &yes, TLSDisabled: &no, RegistryEnabled: &no,
			DockerVolumeSize: func() *int { n := 10; return &n }()}
		if err := d.CreateClusterTemplate(ctx, tm); err != nil {
			t.Fatal(err)
		}
		return tm
	}
	ch.tmpl = mk("k8s-130", "v1.30.0")
	ch.tmpl2 = mk("k8s-131", "v1.31.0")
	return ch
}

// Do sends a request as a member of project p1 (extra "Name: value"
// headers override) with the microversion given ("" = none).
func (h *clusterHarness) Do(t *testing.T, req, version, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	method, target, _ := strings.Cut(req, " ")
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequestWithContext(t.Context(), method, target, rd)
	r.Header.Set("X-Project-Id", "p1")
	r.Header.Set("X-User-Id", "u1")
	r.Header.Set("X-Roles", "member,reader")
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if version != "" {
		r.Header.Set("OpenStack-API-Version", "container-infra "+version)
	}
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ": ")
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.h.ServeHTTP(w, r)
	return w
}

func clusterJSON(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	return m
}

func clusterExpect(t *testing.T, w *httptest.ResponseRecorder, status int) map[string]any {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body.String())
	}
	if status == http.StatusNoContent {
		return nil
	}
	return clusterJSON(t, w)
}

func clusterErrorDetail(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	m := clusterJSON(t, w)
	errs, _ := m["errors"].([]any)
	if len(errs) != 1 {
		t.Fatalf("no error body: %s", w.Body.String())
	}
	d, _ := errs[0].(map[string]any)["detail"].(string)
	return d
}

func (h *clusterHarness) tick(t *testing.T) {
	t.Helper()
	if err := h.rec.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// snapshot renders every cluster and nodegroup row, for "nothing changed"
// checks.
func (h *clusterHarness) snapshot(t *testing.T) string {
	t.Helper()
	cls, err := h.db.ListClusters(t.Context(), db.ClusterFilter{Scope: db.AllProjects}, db.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cls {
		ids = append(ids, c.UUID)
	}
	ngs, err := h.db.ListNodeGroupsOfClusters(t.Context(), ids)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"clusters": cls, "nodegroups": ngs})
	return string(b)
}

func TestClusterLifecycle(t *testing.T) {
	h := newClusterHarness(t)
	w := h.Do(t, "POST /v1/clusters", "1.10", fmt.Sprintf(`{"name": "c1", "cluster_template_id": %q, "node_count": 2,
		"labels": {"extra": 1}, "merge_labels": true}`, h.tmpl.Name))
	uuid, _ := clusterExpect(t, w, 202)["uuid"].(string)
	if !magnum.IsUUIDLike(uuid) {
		t.Fatalf("uuid %q", uuid)
	}

	got := clusterExpect(t, h.Do(t, "GET /v1/clusters/c1", "1.12", ""), 200)
	if got["status"] != "CREATE_IN_PROGRESS" || got["node_count"] != 2.0 || got["master_count"] != 1.0 {
		t.Errorf("after create: %v", got)
	}
	if _, ok := got["stack_id"]; !ok {
		t.Errorf("stack_id missing below 1.13: %v", got)
	}
	labels := got["labels"].(map[string]any)
	if labels["extra"] != "1" || labels["kube_tag"] != "v1.30.0" {
		t.Errorf("labels %v", labels)
	}
	if added := got["labels_added"].(map[string]any); added["extra"] != "1" {
		t.Errorf("labels_added %v", added)
	}

	h.tick(t)
	got = clusterExpect(t, h.Do(t, "GET /v1/clusters/"+uuid, "1.13", ""), 200)
	if got["status"] != "CREATE_COMPLETE" || got["api_address"] == nil || len(got["node_addresses"].([]any)) != 2 {
		t.Errorf("after tick: %v", got)
	}
	if _, ok := got["stack_id"]; ok {
		t.Errorf("stack_id at 1.13: %v", got)
	}
	if got["cluster_id"] == nil {
		t.Errorf("cluster_id missing at 1.13: %v", got)
	}

	// PATCH node_count.
	clusterExpect(t, h.Do(t, "PATCH /v1/clusters/c1", "1.10", `[{"op": "replace", "path": "/node_count", "value": 3}]`), 202)
	// A second update while in progress is refused synchronously.
	w = h.Do(t, "PATCH /v1/clusters/c1", "1.10", `[{"op": "replace", "path": "/node_count", "value": 4}]`)
	clusterExpect(t, w, 409)
	h.tick(t)
	got = clusterExpect(t, h.Do(t, "GET /v1/clusters/c1", "", ""), 200)
	if got["status"] != "UPDATE_COMPLETE" || got["node_count"] != 3.0 {
		t.Errorf("after patch: %v", got)
	}

	// Health only: no driver call, status unchanged.
	clusterExpect(t, h.Do(t, "PATCH /v1/clusters/c1", "1.10", `[{"op": "replace", "path": "/health_status", "value": "UNHEALTHY"},
		{"op": "replace", "path": "/health_status_reason", "value": "{'api': 'down'}"}]`), 202)
	got = clusterExpect(t, h.Do(t, "GET /v1/clusters/c1", "", ""), 200)
	if got["health_status"] != "UNHEALTHY" || got["status"] != "UPDATE_COMPLETE" {
		t.Errorf("after health patch: %v", got)
	}

	// Resize.
	clusterExpect(t, h.Do(t, "POST /v1/clusters/c1/actions/resize", "1.7", `{"node_count": 0}`), 400)
	clusterExpect(t, h.Do(t, "POST /v1/clusters/c1/actions/resize", "1.10", `{"node_count": 1, "nodes_to_remove": []}`), 202)
	h.tick(t)
	got = clusterExpect(t, h.Do(t, "GET /v1/clusters/c1", "", ""), 200)
	if got["status"] != "UPDATE_COMPLETE" || got["node_count"] != 1.0 {
		t.Errorf("after resize: %v", got)
	}
	w = h.Do(t, "POST /v1/clusters/c1/actions/resize", "1.10", `{"node_count": 1, "nodegroup": "default-master"}`)
	clusterExpect(t, w, 202)
	h.tick(t)

	// Upgrade: 1.7 always 400; 1.8+ to another template.
	w = h.Do(t, "POST /v1/clusters/c1/actions/upgrade", "1.7", fmt.Sprintf(`{"cluster_template": %q}`, h.tmpl2.UUID))
	clusterExpect(t, w, 400)
	if d := clusterErrorDetail(t, w); d != "Cluster upgrade is not supported in the provided microversion." {
		t.Errorf("detail %q", d)
	}
	clusterExpect(t, h.Do(t, "POST /v1/clusters/c1/actions/upgrade", "1.8", fmt.Sprintf(`{"cluster_template": %q, "max_batch_size": 1}`, h.tmpl2.Name)), 202)
	w = h.Do(t, "POST /v1/clusters/c1/actions/upgrade", "1.8", fmt.Sprintf(`{"cluster_template": %q}`, h.tmpl2.Name))
	clusterExpect(t, w, 400)
	if d := clusterErrorDetail(t, w); d != `Upgrading a cluster when status is "UPDATE_IN_PROGRESS" is not supported.` {
		t.Errorf("detail %q", d)
	}
	h.tick(t)
	got = clusterExpect(t, h.Do(t, "GET /v1/clusters/c1", "", ""), 200)
	if got["status"] != "UPDATE_COMPLETE" || got["cluster_template_id"] != h.tmpl2.UUID || got["coe_version"] != "v1.31.0" {
		t.Errorf("after upgrade: %v", got)
	}

	// Delete.
	clusterExpect(t, h.Do(t, "DELETE /v1/clusters/c1", "", ""), 204)
	got = clusterExpect(t, h.Do(t, "GET /v1/clusters/c1", "", ""), 200)
	if got["status"] != "DELETE_IN_PROGRESS" {
		t.Errorf("after delete: %v", got)
	}
	h.tick(t)
	w = h.Do(t, "GET /v1/clusters/c1", "", "")
	clusterExpect(t, w, 404)
	if d := clusterErrorDetail(t, w); d != "Cluster c1 could not be found." {
		t.Errorf("detail %q", d)
	}
	if s := h.snapshot(t); s != `{"clusters":null,"nodegroups":{}}` {
		t.Errorf("rows left: %s", s)
	}
}

func TestClusterFailureLabel(t *testing.T) {
	h := newClusterHarness(t)
	w := h.Do(t, "POST /v1/clusters", "", fmt.Sprintf(`{"name": "bad", "cluster_template_id": %q,
		"labels": {"fake_fail": "create", "fake_fail_reason": "boom"}}`, h.tmpl.UUID))
	clusterExpect(t, w, 202)
	h.tick(t)
	got := clusterExpect(t, h.Do(t, "GET /v1/clusters/bad", "", ""), 200)
	if got["status"] != "CREATE_FAILED" || got["status_reason"] != "boom" {
		t.Errorf("got %v", got)
	}
	faults, ok := got["faults"].(map[string]any)
	if !ok || faults["default-worker"] != "boom" {
		t.Errorf("faults %v", got["faults"])
	}
	// Lists never carry faults.
	list := clusterExpect(t, h.Do(t, "GET /v1/clusters/detail", "", ""), 200)
	if _, ok := list["clusters"].([]any)[0].(map[string]any)["faults"]; ok {
		t.Errorf("faults in a list: %v", list)
	}
}

func TestClusterCreateBadInputLeavesTablesUnchanged(t *testing.T) {
	h := newClusterHarness(t)
	clusterExpect(t, h.Do(t, "POST /v1/clusters", "", fmt.Sprintf(`{"name": "keep", "cluster_template_id": %q}`, h.tmpl.UUID)), 202)
	before := h.snapshot(t)
	tid := h.tmpl.UUID
	for _, tc := range []struct {
		name, version, body string
		status              int
		detail              string
	}{
		{"unknown attribute", "", `{"cluster_template_id": "x", "bogus": 1}`, 400, "Unknown attribute for argument cluster: bogus"},
		{"read-only attribute", "", fmt.Sprintf(`{"cluster_template_id": %q, "api_address": "1.2.3.4"}`, tid), 400,
			"Invalid input for field/attribute api_address. Value: '1.2.3.4'. Cannot set read only field."},
		{"missing template", "", `{"name": "x"}`, 400, "Invalid input for field/attribute cluster_template_id. Value: 'None'. Mandatory field missing."},
		{"unknown template below 1.10", "1.9", `{"cluster_template_id": "nope"}`, 400, "ClusterTemplate nope could not be found."},
		{"unknown template from 1.10", "1.10", `{"cluster_template_id": "nope"}`, 404, "ClusterTemplate nope could not be found."},
		{"bad name", "", fmt.Sprintf(`{"cluster_template_id": %q, "name": "1abc"}`, tid), 400,
			"Invalid input for field/attribute name. Value: '1abc'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$"},
		{"negative node count", "", fmt.Sprintf(`{"cluster_template_id": %q, "node_count": -1}`, tid), 400,
			"Invalid input for field/attribute node_count. Value: '-1'. Value should be greater or equal to 0"},
		{"even master count", "", fmt.Sprintf(`{"cluster_template_id": %q, "master_count": 2}`, tid), 400,
			"master nodegroup size of 2 is invalid, size cannot be an even number."},
		{"unknown flavor", "", fmt.Sprintf(`{"cluster_template_id": %q, "flavor_id": "huge"}`, tid), 400, "Unable to find flavor huge."},
		{"unknown keypair", "", fmt.Sprintf(`{"cluster_template_id": %q, "keypair": "nokey"}`, tid), 404, "Unable to find keypair nokey."},
		{"masters without load balancer", "", fmt.Sprintf(`{"cluster_template_id": %q, "master_count": 3, "master_lb_enabled": false}`, tid), 400,
			"master_count must be 1 when master_lb_enabled is False"},
		{"not JSON", "", `{`, 400, "Request is not in valid JSON format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := h.Do(t, "POST /v1/clusters", tc.version, tc.body)
			clusterExpect(t, w, tc.status)
			if d := clusterErrorDetail(t, w); d != tc.detail {
				t.Errorf("detail %q, want %q", d, tc.detail)
			}
			if after := h.snapshot(t); after != before {
				t.Errorf("tables changed:\n%s\n%s", before, after)
			}
		})
	}
}

// Deviation: a zero-node cluster is created at every microversion
// (magnum-tempest-plugin creates one without sending any); Magnum refuses
// it below 1.10. PATCH and resize keep the 1.10 gate.
func TestClusterCreateZeroNodesAtEveryMicroversion(t *testing.T) {
	h := newClusterHarness(t)
	for i, version := range []string{"", "1.9", "1.10", "latest"} {
		body := fmt.Sprintf(`{"name": "zero%d", "cluster_template_id": %q, "node_count": 0}`, i, h.tmpl.UUID)
		id := clusterExpect(t, h.Do(t, "POST /v1/clusters", version, body), 202)["uuid"].(string)
		if got := clusterExpect(t, h.Do(t, "GET /v1/clusters/"+id, "latest", ""), 200); got["node_count"] != 0.0 {
			t.Errorf("at %q: node_count %v", version, got["node_count"])
		}
	}
}

func TestClusterQuotaThroughAPI(t *testing.T) {
	h := newClusterHarness(t)
	if err := h.db.CreateQuota(t.Context(), &magnum.Quota{ProjectID: "p1", Resource: "Cluster", HardLimit: 1}); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"cluster_template_id": %q}`, h.tmpl.UUID)
	clusterExpect(t, h.Do(t, "POST /v1/clusters", "", body), 202)
	w := h.Do(t, "POST /v1/clusters", "", body)
	clusterExpect(t, w, 403)
	want := "Resource limit exceeded: You have reached the maximum clusters per project, 1. You may delete a cluster to make room for a new one."
	if d := clusterErrorDetail(t, w); d != want {
		t.Errorf("detail %q", d)
	}
	// Another project cannot see the private template (400 below 1.10).
	clusterExpect(t, h.Do(t, "POST /v1/clusters", "", body, "X-Project-Id: p2"), 400)
}

func TestClusterListAndPagination(t *testing.T) {
	h := newClusterHarness(t)
	var uuids []string
	for i := 0; i < 3; i++ {
		tm := h.tmpl
		if i == 1 {
			tm = h.tmpl2
		}
		w := h.Do(t, "POST /v1/clusters", "", fmt.Sprintf(`{"name": "c%d", "cluster_template_id": %q}`, i, tm.UUID))
		uuids = append(uuids, clusterExpect(t, w, 202)["uuid"].(string))
	}
	got := clusterExpect(t, h.Do(t, "GET /v1/clusters?limit=2", "1.13", ""), 200)
	list := got["clusters"].([]any)
	if len(list) != 2 {
		t.Fatalf("got %v", got)
	}
	first := list[0].(map[string]any)
	var keys []string
	for k := range first {
		keys = append(keys, k)
	}
	if len(keys) != 16 || first["merge_labels"] != false || first["cluster_id"] == nil {
		t.Errorf("summary fields %v", first)
	}
	if _, ok := first["status_reason"]; ok {
		t.Errorf("status_reason in summary")
	}
	next, _ := got["next"].(string)
	if !strings.HasSuffix(next, "/v1/clusters?sort_key=id&sort_dir=asc&limit=2&marker="+uuids[1]) {
		t.Errorf("next %q", next)
	}
	got = clusterExpect(t, h.Do(t, "GET /v1/clusters/detail?limit=2&marker="+uuids[1], "", ""), 200)
	if l := got["clusters"].([]any); len(l) != 1 || l[0].(map[string]any)["uuid"] != uuids[2] || got["next"] != nil {
		t.Errorf("second page %v", got)
	}
	// Another project sees nothing; an admin with the all-projects rule sees all.
	got = clusterExpect(t, h.Do(t, "GET /v1/clusters", "", "", "X-Project-Id: p2"), 200)
	if l := got["clusters"].([]any); len(l) != 0 {
		t.Errorf("p2 sees %v", l)
	}
	clusterExpect(t, h.Do(t, "GET /v1/clusters/c0", "", "", "X-Project-Id: p2"), 404)
	clusterExpect(t, h.Do(t, "GET /v1/clusters?limit=0", "", ""), 400)
	clusterExpect(t, h.Do(t, "GET /v1/clusters?sort_dir=up", "", ""), 400)
	clusterExpect(t, h.Do(t, "GET /v1/clusters?sort_key=node_count", "", ""), 400)
	clusterExpect(t, h.Do(t, "GET /v1/clusters?marker="+conductor.NewUUID(), "", ""), 404)
}

func TestClusterPatchRules(t *testing.T) {
	h := newClusterHarness(t)
	clusterExpect(t, h.Do(t, "POST /v1/clusters", "", fmt.Sprintf(`{"name": "c1", "cluster_template_id": %q}`, h.tmpl.UUID)), 202)
	h.tick(t)
	before := h.snapshot(t)
	for _, tc := range []struct {
		name, body string
		status     int
		detail     string
	}{
		{"internal attribute", `[{"op": "replace", "path": "/api_address", "value": "x"}]`, 400,
			"'/api_address' is an internal attribute and can not be updated"},
		{"other property", `[{"op": "replace", "path": "/name", "value": "other"}]`, 400, "cannot change cluster property(ies) name."},
		{"remove mandatory", `[{"op": "remove", "path": "/cluster_template_id"}]`, 400,
			"'/cluster_template_id' is a mandatory attribute and can not be removed"},
		{"zero below 1.10", `[{"op": "replace", "path": "/node_count", "value": 0}]`, 400,
			"Resizing a nodegroup to zero is not supported in the provided microversion."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := h.Do(t, "PATCH /v1/clusters/c1", "1.9", tc.body)
			clusterExpect(t, w, tc.status)
			if d := clusterErrorDetail(t, w); d != tc.detail {
				t.Errorf("detail %q, want %q", d, tc.detail)
			}
			if after := h.snapshot(t); after != before {
				t.Errorf("tables changed")
			}
		})
	}
	w := h.Do(t, "POST /v1/clusters/c1/actions/resize", "1.10", `{"node_count": 2, "nodegroup": "nope"}`)
	clusterExpect(t, w, 404)
	clusterExpect(t, h.Do(t, "DELETE /v1/clusters/c1", "", "", "X-Project-Id: p2"), 404)
	clusterExpect(t, h.Do(t, "DELETE /v1/clusters/c1", "", "", "X-Project-Id: p2", "X-Roles: admin"), 204)
}

// TestClusterListPagesWaitTheirTurn: large cluster list pages are read and
// rendered a few at a time. With every turn taken, a page of 1000 waits
// (here until its request gives up) and a page of 10 does not; once a turn
// is free the large page is served.
func TestClusterListPagesWaitTheirTurn(t *testing.T) {
	h := newClusterHarness(t)
	s := h.h.(*server)
	if cap(s.pages) < 2 {
		t.Fatalf("%d turns, want at least 2", cap(s.pages))
	}
	for range cap(s.pages) {
		s.pages <- struct{}{}
	}
	list := func(ctx context.Context, target string) (int, bool) {
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		r.Header.Set("X-Project-Id", "p1")
		r.Header.Set("X-User-Id", "u1")
		r.Header.Set("X-Roles", "member,reader")
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { h.h.ServeHTTP(w, r); close(done) }()
		select {
		case <-done:
			return w.Code, true
		case <-time.After(300 * time.Millisecond):
			return 0, false
		}
	}
	if code, served := list(t.Context(), "/v1/clusters?limit=10"); !served || code != http.StatusOK {
		t.Fatalf("small page: served %v, status %d", served, code)
	}
	ctx, cancel := context.WithCancel(t.Context())
	if _, served := list(ctx, "/v1/clusters?limit=1000"); served {
		t.Fatal("a page of 1000 was served with every turn taken")
	}
	cancel()
	<-s.pages
	if code, served := list(t.Context(), "/v1/clusters/detail"); !served || code != http.StatusOK {
		t.Fatalf("large page with a free turn: served %v, status %d", served, code)
	}
}
