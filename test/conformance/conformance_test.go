package conformance

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/api"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/policy"
)

var (
	exchangesFlag = flag.String("exchanges", "", "exchanges file (default $OKM_EXCHANGES or $OKM_SPEC_DIR/exchanges/exchanges.json)")
	reportFlag    = flag.String("report", "", "write the full mismatch report to this file")
)

// exchangesPath resolves the corpus: -exchanges, $OKM_EXCHANGES, then
// ${OKM_SPEC_DIR:-../shared/spec}/exchanges/exchanges.json relative to the
// repository root.
func exchangesPath() string {
	if *exchangesFlag != "" {
		return *exchangesFlag
	}
	if p := os.Getenv("OKM_EXCHANGES"); p != "" {
		return p
	}
	spec := os.Getenv("OKM_SPEC_DIR")
	if spec == "" {
		spec = "../shared/spec"
	}
	if !filepath.IsAbs(spec) {
		spec = filepath.Join("..", "..", spec) // test/conformance → repository root
	}
	return filepath.Join(spec, "exchanges", "exchanges.json")
}

// paste public routes per recorded paste file (acl_public_routes).
var pastePublic = map[string][]string{
	"paste:auth-paste.ini":        {},
	"paste:paste.ini":             {},
	"paste:auth-root-access.ini":  {"/"},
	"paste:auth-v1-access.ini":    {"/v1"},
	"paste:noauth-paste.ini":      {"/", "/v1"},
	"paste:api-paste.ini-default": {"/", "/v1"},
}

// buildHandler reproduces the record's environment (spec/exchanges/
// README.md "The test environment"): a fresh migrated SQLite database
// holding db_before, the configuration and policy overrides, the caller,
// and a real conductor over fakes that answer as the record's mocks.
func buildHandler(t *testing.T, rec Record) http.Handler {
	t.Helper()
	ctx := t.Context()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := db.Open(ctx, db.DialectSQLite, ":memory:", db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	seedDB(t, d, rec.DBBeforeRaw)

	now := time.Date(2026, 11, 30, 1, 33, 0, 0, time.UTC)
	if _, ok := rec.HasMock("oslo_utils.timeutils.utcnow"); ok {
		now = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	o := api.Options{
		WWWAuthenticateURI: "http://localhost:5000",
		Logger:             quiet,
		Now:                func() time.Time { return now },
		MServices:          mservices{d},
	}
	if strings.HasPrefix(rec.App, "paste:") {
		o.Auth = keystoneLikeAuth{}
		o.PublicRoutes = pastePublic[rec.App]
		if o.PublicRoutes == nil {
			o.PublicRoutes = []string{}
		}
	} else {
		o.Auth = testAppAuth{ctx: rec.Context}
	}
	if strings.Contains(rec.TestID, "disable_file") {
		f := filepath.Join(t.TempDir(), "healthcheck_disable")
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		o.HealthcheckDisableFile = f
	}
	settings := conductor.Settings{MaxClustersPerProject: 20, ServiceDownTime: 180 * time.Second}
	for key, v := range rec.ConfOverrides {
		switch key {
		case "api/max_limit":
			if n, ok := v.(float64); ok {
				o.MaxLimit = int(n)
			}
		case "quotas/max_clusters_per_project":
			if n, ok := v.(float64); ok {
				settings.MaxClustersPerProject = int(n)
			}
		case "cluster_template/kubernetes_allowed_network_drivers":
			l, _ := v.([]any)
			for _, x := range l {
				settings.KubernetesAllowedNetworkDrivers = append(settings.KubernetesAllowedNetworkDrivers, fmt.Sprint(x))
			}
		case "cluster_template/kubernetes_default_network_driver":
			settings.KubernetesDefaultNetworkDriver = fmt.Sprint(v)
		}
	}
	o.Policy = buildPolicy(t, rec)
	c := &conductor.Conductor{
		DB:        d,
		Drivers:   buildDrivers(rec),
		OpenStack: buildOpenStack(rec),
		Settings:  settings,
		Log:       quiet,
		Now:       func() time.Time { return now },
	}
	o.Conductor = c
	return api.New(o)
}

// mservices serves the magnum_service table.
type mservices struct{ d *db.DB }

func (m mservices) ListServices(ctx context.Context) ([]magnum.MagnumService, error) {
	return m.d.ListMagnumServices(ctx)
}

// isTemplateRequest reports whether the record calls the cluster template
// API.
func isTemplateRequest(rec Record) bool {
	return strings.HasPrefix(rec.Request.Path, "/v1/clustertemplates")
}

// buildDrivers is the driver registry of the recording environment: no
// driver installed (Driver.get_default_driver finds none), and, where the
// test mocked Driver.get_driver, a driver for any cluster type. Template
// requests get no registry at all unless get_default_driver is mocked:
// the template use case would otherwise resolve and store the permissive
// driver's name, where the mocked get_driver leaves the driver unset.
func buildDrivers(rec Record) *driver.Registry {
	if m, ok := rec.HasMock("magnum.drivers.common.driver.Driver.get_default_driver"); ok {
		if name, ok := m.ReturnValue.(string); ok {
			return driver.NewRegistry(driver.Selection{Default: name}, permissiveDriver{name: name, targets: driverTargets(rec)})
		}
	}
	if isTemplateRequest(rec) {
		return nil
	}
	if _, ok := rec.HasMock("magnum.drivers.common.driver.Driver.get_driver"); !ok {
		return driver.NewRegistry(driver.Selection{})
	}
	// The mocked get_driver answers for any name too: the permissive
	// driver is installed under every driver name the record's templates
	// and body mention.
	targets := driverTargets(rec)
	names := map[string]bool{"mocked": true}
	rows := append([]any(nil), rec.DBBefore["cluster_template"]...)
	var body map[string]any
	if json.Unmarshal(rec.Request.Body, &body) == nil && body != nil {
		rows = append(rows, body)
	}
	for _, row := range rows {
		m, _ := row.(map[string]any)
		if n, ok := m["driver"].(string); ok && n != "" {
			names[n] = true
		}
	}
	var drivers []driver.Driver
	for _, n := range sortedKeys(names) {
		drivers = append(drivers, permissiveDriver{name: n, targets: targets})
	}
	return driver.NewRegistry(driver.Selection{}, drivers...)
}

// buildOpenStack configures the OpenStack fake from the record's mocks.
func buildOpenStack(rec Record) *fakeOpenStack {
	o := &fakeOpenStack{template: isTemplateRequest(rec), image: openstack.Image{Name: "mock_name", OSDistro: "ubuntu"}}
	var body map[string]any
	_ = json.Unmarshal(rec.Request.Body, &body)
	if o.template {
		distro, _ := body["cluster_distro"].(string)
		drv, _ := body["driver"].(string)
		o.decoratorPending = rec.Request.Method == http.MethodPost && (distro == "" || drv == "")
		img, has := body["image_id"]
		o.osresImage = (has && img != nil) || rec.Request.Method == http.MethodPatch
	}
	for _, m := range rec.Mocks {
		switch m.Target {
		case "magnum.api.attr_validator.validate_os_resources":
			o.osresErr = mockError(m.SideEffect)
		case "magnum.api.attr_validator.validate_image":
			o.imageErr = mockError(m.SideEffect)
			if rv, ok := m.ReturnValue.(map[string]any); ok {
				o.image.Name, _ = rv["name"].(string)
				o.image.OSDistro, _ = rv["os_distro"].(string)
				o.image.MagnumDriver, _ = rv["magnum_driver"].(string)
			}
		case "magnum.api.attr_validator.validate_flavor_root_volume_size":
			o.rootErr = mockError(m.SideEffect)
		case "magnum.common.clients.OpenStackClients.keystone":
			// The tests configure the returned client so that the
			// project lookup fails.
			o.missingProjects = m.ReturnValue == "<MagicMock>" && rec.Request.Method == http.MethodPost
		}
	}
	return o
}

// buildPolicy returns the real policy engine with Magnum's defaults, or,
// when the test replaced rules, only the replaced rules: Magnum's policy
// fixture calls set_rules, which overwrites the whole rule set, so every
// other rule is undefined and denies. A mocked enforce never raises.
func buildPolicy(t *testing.T, rec Record) api.Policy {
	t.Helper()
	if m, ok := rec.HasMock("magnum.common.policy.enforce"); ok {
		return mockedPolicy{returns: m.ReturnValue == true}
	}
	opts := policy.Options{EnforceNewDefaults: true, EnforceScope: true}
	if len(rec.PolicyOverrides) > 0 {
		f := filepath.Join(t.TempDir(), "policy.json")
		data, _ := json.Marshal(rec.PolicyOverrides)
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
		opts.PolicyFile = f
		opts.Defaults = []policy.Rule{}
	}
	e, err := policy.New(opts)
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	return e
}

// module is the Magnum test module of a record ("test_cluster").
func module(rec Record) string {
	parts := strings.Split(rec.TestID, ".")
	if len(parts) >= 3 {
		return parts[len(parts)-3]
	}
	return rec.TestID
}

func TestExchanges(t *testing.T) {
	path := exchangesPath()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("exchanges not found at %s: %v", path, err)
		}
		t.Skipf("exchanges not found at %s (set OKM_SPEC_DIR or OKM_EXCHANGES)", path)
	}
	recs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	passed, failed, known, skipped := 0, 0, 0, 0
	perModule := map[string][2]int{}
	seen := map[string]bool{}
	for _, rec := range recs {
		if rec.App == "wsme-test-app" {
			skipped++
			continue
		}
		seen[rec.ID] = true
		var diffs []string
		t.Run(rec.ID, func(t *testing.T) {
			req, err := replayRequest(rec)
			if err != nil {
				t.Fatalf("%s: %v", rec.ID, err)
			}
			req = req.WithContext(t.Context())
			w := httptest.NewRecorder()
			buildHandler(t, rec).ServeHTTP(w, req)
			diffs = Compare(rec, Response{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()})
		})
		mod := module(rec)
		n := perModule[mod]
		reason, isKnown := knownFailures[rec.ID]
		if len(diffs) == 0 {
			passed++
			n[0]++
			perModule[mod] = n
			if isKnown && usesDefaultCorpus() {
				t.Errorf("%s passes but is listed in knownFailures (%s): remove it", rec.ID, reason)
			}
			continue
		}
		failed++
		n[1]++
		perModule[mod] = n
		tag := "FAIL"
		if isKnown {
			tag = "KNOWN"
			known++
		}
		fmt.Fprintf(&report, "%s %s %s %s?%s\n", tag, rec.ID, rec.Request.Method, rec.Request.Path, rec.Request.Query)
		if isKnown {
			fmt.Fprintf(&report, "    reason: %s\n", reason)
		}
		for _, d := range diffs {
			fmt.Fprintf(&report, "    %s\n", d)
		}
		if !isKnown {
			t.Errorf("record %s (%s %s):\n  %s", rec.ID, rec.Request.Method, rec.Request.Path, strings.Join(diffs, "\n  "))
		}
	}
	mods := sortedKeys(perModule)
	for _, m := range mods {
		fmt.Fprintf(&report, "%s: %d passed, %d failed\n", m, perModule[m][0], perModule[m][1])
	}
	summary := fmt.Sprintf("%d passed, %d failed (%d known failures, %d unexpected; %d wsme-test-app records skipped)",
		passed, failed, known, failed-known, skipped)
	fmt.Fprintln(&report, summary)
	if *reportFlag != "" {
		if err := os.WriteFile(*reportFlag, []byte(report.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	if testing.Verbose() {
		t.Log("\n" + report.String())
	}
	t.Log(summary)
	if passed == 0 {
		t.Error("no record passed: wrong exchanges file?")
	}
	if usesDefaultCorpus() {
		for _, id := range sortedKeys(knownFailures) {
			if !seen[id] {
				t.Errorf("knownFailures lists %s, which is not in the corpus", id)
			}
		}
	}
}

// usesDefaultCorpus reports whether the corpus is the published one, for
// which knownFailures is maintained.
func usesDefaultCorpus() bool {
	return *exchangesFlag == "" && os.Getenv("OKM_EXCHANGES") == ""
}

func TestCompareDetectsDifferences(t *testing.T) {
	rec := Record{Response: RecordedResponse{Status: 200, Headers: map[string]string{"Content-Type": "application/json", "vary": "OpenStack-API-Version",
		"OpenStack-API-Version": "container-infrastructure-management 1.1"},
		Body: json.RawMessage(`{"a":[{"href":"http://localhost/v1/x/","rel":"self"}],"created_at":"x"}`)}}
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("Vary", "OpenStack-API-Version")
	h.Set("OpenStack-API-Version", "container-infrastructure-management 1.1")
	if d := Compare(rec, Response{Status: 200, Header: h, Body: []byte(`{"a":[{"href":"https://other:9511/v1/x/","rel":"self"}],"created_at":"y"}`)}); len(d) != 0 {
		t.Errorf("unexpected differences: %v", d)
	}
	if d := Compare(rec, Response{Status: 200, Header: h, Body: []byte(`{"a":[{"href":"http://localhost/v1/y/","rel":"self"}],"created_at":null}`)}); len(d) != 2 {
		t.Errorf("want 2 differences, got %v", d)
	}
	h.Del("Vary")
	if d := Compare(rec, Response{Status: 201, Header: h, Body: []byte(`{}`)}); len(d) < 3 {
		t.Errorf("want status, vary and body differences, got %v", d)
	}
}

// TestDefaultPolicy runs GET /v1/mservices (admin-only by default) through
// the real policy engine with Magnum's default rules.
func TestDefaultPolicy(t *testing.T) {
	e, err := policy.New(policy.Options{EnforceNewDefaults: true, EnforceScope: true})
	if err != nil {
		t.Fatal(err)
	}
	h := api.New(api.Options{Auth: testAppAuth{}, Policy: e, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for roles, want := range map[string]int{"admin": 200, "reader,member": 403, "": 403} {
		r := httptest.NewRequestWithContext(t.Context(), "GET", "/v1/mservices", nil)
		r.Header.Set("X-Roles", roles)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("roles %q: %d, want %d (%s)", roles, w.Code, want, w.Body.String())
		}
	}
}
