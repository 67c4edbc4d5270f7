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
	"regexp"
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

// The replay of the recorded test_cluster and test_cluster_actions
// exchanges: each record's db_before is seeded into a fresh SQLite
// database, the request is sent through the real handlers, conductor and
// fake driver, and the answer is compared with the recording.

func clusterReplayPath(t *testing.T) string {
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

// clusterReplayAuth is Magnum's unit-test identity: headers, roles split on
// commas, is_admin only when the test injected an admin context.
type clusterReplayAuth struct{ isAdmin bool }

func (a clusterReplayAuth) Authenticate(r *http.Request) (*magnum.RequestContext, error) {
	rc := &magnum.RequestContext{ProjectID: "fake_project", UserID: "fake_user", IsAdmin: a.isAdmin}
	if v := r.Header.Get("X-Project-Id"); v != "" {
		rc.ProjectID = v
	}
	if v := r.Header.Get("X-User-Id"); v != "" {
		rc.UserID = v
	}
	rc.Roles = strings.Split(r.Header.Get("X-Roles"), ",")
	return rc, nil
}

type clusterReplayAllow struct{}

func (clusterReplayAllow) Enforce(string, map[string]any, map[string]any) (bool, error) {
	return true, nil
}

// clusterReplayDriver is the fake driver as the tests' mocked get_driver
// behaves: any cluster type, any master size.
type clusterReplayDriver struct {
	*fake.Driver
	targets []driver.Target
}

func (d clusterReplayDriver) Name() string              { return "replay" }
func (d clusterReplayDriver) Beta() bool                { return false }
func (d clusterReplayDriver) Provides() []driver.Target { return d.targets }
func (d clusterReplayDriver) ValidateMasterSize(n int) error {
	return driver.ValidateMasterSize(n)
}
func (d clusterReplayDriver) ValidateMasterResize(int) error { return nil }

// clusterReplayOpenStack answers every lookup (validate_os_resources and
// the root-disk check are mocked in the records) and raises what a mock
// says.
type clusterReplayOpenStack struct {
	*openstack.Static
	resourceErr error
	zeroDisk    bool
}

func (o *clusterReplayOpenStack) Image(ctx context.Context, ident string) (openstack.Image, error) {
	if o.resourceErr != nil {
		return openstack.Image{}, o.resourceErr
	}
	return o.Static.Image(ctx, ident)
}

func (o *clusterReplayOpenStack) Flavor(ctx context.Context, ident string) (openstack.Flavor, error) {
	f, err := o.Static.Flavor(ctx, ident)
	if o.zeroDisk {
		f.Disk = 0
	}
	return f, err
}

var clusterReplayRaise = regexp.MustCompile(`^raise (\w+)\((.*)\)$`)

func clusterReplayError(side string) error {
	m := clusterReplayRaise.FindStringSubmatch(side)
	if m == nil {
		return nil
	}
	// The tests raise the exception with a positional message: the
	// message is the argument.
	var e *magnum.Error
	switch m[1] {
	case "ImageNotFound":
		e = magnum.ImageNotFound(m[2])
	case "FlavorNotFound":
		e = magnum.FlavorNotFound(m[2])
	case "OSDistroFieldNotFound":
		e = magnum.OSDistroFieldNotFound(m[2])
	case "Conflict":
		e = magnum.Conflict(m[2])
	case "KeyPairNotFound":
		e = magnum.KeyPairNotFound(m[2])
	case "ExternalNetworkNotFound":
		e = magnum.ExternalNetworkNotFound(m[2])
	default:
		return fmt.Errorf("%s", side)
	}
	c := *e
	c.Message = m[2]
	return &c
}

// clusterReplaySeed inserts db_before into d.
func clusterReplaySeed(t *testing.T, d *db.DB, tables map[string][]any) {
	t.Helper()
	names := make([]string, 0, len(tables))
	for k := range tables {
		names = append(names, k)
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
			quoted := make([]string, len(cols))
			for i, c := range cols {
				quoted[i] = `"` + c + `"`
				switch v := m[c].(type) {
				case map[string]any, []any:
					b, _ := json.Marshal(v)
					args[i] = string(b)
				case float64:
					args[i] = int64(v)
				case string:
					if (strings.HasSuffix(c, "_at") || c == "last_seen_up") && len(v) >= 19 && v[10] == 'T' {
						ts, err := time.Parse("2006-01-02T15:04:05.999999", v)
						if err == nil {
							args[i] = ts.Format("2006-01-02 15:04:05.000000")
							continue
						}
					}
					args[i] = v
				default:
					args[i] = v
				}
			}
			q := fmt.Sprintf(`INSERT INTO "%s" (%s) VALUES (%s)`, table, strings.Join(quoted, ", "),
				strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "))
			if _, err := d.SQL().ExecContext(t.Context(), q, args...); err != nil {
				t.Fatalf("seed %s: %v", table, err)
			}
		}
	}
}

func clusterReplayHandler(t *testing.T, rec conformance.Record) http.Handler {
	t.Helper()
	ctx := t.Context()
	d, err := db.Open(ctx, db.DialectSQLite, filepath.Join(t.TempDir(), "m.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	clusterReplaySeed(t, d, rec.DBBefore)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	fd := fake.New(fake.Options{})
	var targets []driver.Target
	for _, row := range rec.DBBefore["cluster_template"] {
		m, _ := row.(map[string]any)
		s := func(k string) string { v, _ := m[k].(string); return v }
		targets = append(targets, driver.Target{ServerType: s("server_type"), OS: s("cluster_distro"), COE: s("coe")})
	}
	targets = append(targets, driver.Target{ServerType: "vm", OS: "ubuntu", COE: "kubernetes"})
	// Without the get_driver mock, the recording environment had no
	// cluster driver installed.
	reg := driver.NewRegistry(driver.Selection{})
	if _, ok := rec.HasMock("magnum.drivers.common.driver.Driver.get_driver"); ok {
		reg = driver.NewRegistry(driver.Selection{}, clusterReplayDriver{Driver: fd, targets: targets})
	}
	osk := &clusterReplayOpenStack{Static: openstack.NewStatic(true)}
	for _, m := range rec.Mocks {
		switch m.Target {
		case "magnum.api.attr_validator.validate_os_resources":
			osk.resourceErr = clusterReplayError(m.SideEffect)
		case "magnum.api.attr_validator.validate_flavor_root_volume_size":
			osk.zeroDisk = strings.Contains(m.SideEffect, "FlavorZeroRootVolumeNotSupported")
		}
	}
	settings := conductor.Settings{MaxClustersPerProject: 20}
	if v, ok := rec.ConfOverrides["quotas/max_clusters_per_project"].(float64); ok {
		settings.MaxClustersPerProject = int(v)
	}
	c := &conductor.Conductor{DB: d, Drivers: reg, OpenStack: osk, Settings: settings, Log: quiet}
	isAdmin := rec.Context != nil && (rec.Context.IsAdmin == true || rec.Context.IsAdmin == "<MagicMock>")
	o := api.Options{Auth: clusterReplayAuth{isAdmin: isAdmin},
		Conductor: c, Logger: quiet}
	if v, ok := rec.ConfOverrides["api/max_limit"].(float64); ok {
		o.MaxLimit = int(v)
	}
	if _, ok := rec.HasMock("magnum.common.policy.enforce"); ok {
		o.Policy = clusterReplayAllow{}
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
		pol, err := policy.New(popts)
		if err != nil {
			t.Fatal(err)
		}
		o.Policy = pol
	}
	return api.New(o)
}

// clusterReplayMinPass is the number of records that must keep passing.
const clusterReplayMinPass = 92

func TestClusterReplay(t *testing.T) {
	path := clusterReplayPath(t)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("exchanges not found at %s: %v", path, err)
		}
		t.Skipf("exchanges not found at %s", path)
	}
	recs, err := conformance.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	passed, failed := 0, 0
	for _, rec := range recs {
		if !strings.Contains(rec.TestID, ".test_cluster.") && !strings.Contains(rec.TestID, ".test_cluster_actions.") {
			continue
		}
		req, err := rec.NewHTTPRequest()
		if err != nil {
			t.Fatalf("%s: %v", rec.ID, err)
		}
		req = req.WithContext(t.Context())
		w := httptest.NewRecorder()
		clusterReplayHandler(t, rec).ServeHTTP(w, req)
		diffs := conformance.Compare(rec, conformance.Response{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()})
		if len(diffs) == 0 {
			passed++
			fmt.Fprintf(&report, "PASS %s\n", rec.ID)
			continue
		}
		failed++
		fmt.Fprintf(&report, "FAIL %s %s %s?%s\n", rec.ID, rec.Request.Method, rec.Request.Path, rec.Request.Query)
		for _, d := range diffs {
			fmt.Fprintf(&report, "    %s\n", d)
		}
	}
	fmt.Fprintf(&report, "cluster records: %d passed, %d failed\n", passed, failed)
	if f := os.Getenv("OKM_CLUSTER_REPLAY_REPORT"); f != "" {
		_ = os.WriteFile(f, []byte(report.String()), 0o644)
	}
	if testing.Verbose() {
		t.Log("\n" + report.String())
	}
	if passed < clusterReplayMinPass {
		t.Errorf("%d cluster records pass, want at least %d", passed, clusterReplayMinPass)
	}
}
