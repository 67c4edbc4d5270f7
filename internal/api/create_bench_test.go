package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/auth"
	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/policy"
)

// createBenchClients is the number of concurrent clients of the create
// benchmarks.
const createBenchClients = 8

// putCounter counts the certificates stored.
type putCounter struct {
	certs.Store
	n atomic.Int64
}

func (s *putCounter) Put(ctx context.Context, kp certs.KeyPair, name string) (string, error) {
	s.n.Add(1)
	return s.Store.Put(ctx, kp, name)
}

// cpuTime is the CPU time (user + system) of the process so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClusterCreate drives POST /v1/clusters (and, in the "pairs"
// variants, DELETE right after each 202) through the handler with the fake
// driver and 2048-bit keys, from createBenchClients concurrent clients.
// "inline" is a conductor without the create-job pool (the certificates
// and the driver call within the request); "pool" runs them on the pool.
// The timed part ends when every job has finished. It reports
// creates/s (202s per second of wall time until the last 202),
// cpu-ms/create (process CPU including the jobs) and certs/create (the
// certificates generated per create: 4, or fewer when a delete overtook a
// queued job).
func BenchmarkClusterCreate(b *testing.B) {
	for _, dialect := range []string{db.DialectSQLite, db.DialectMySQL} {
		for _, pairs := range []bool{false, true} {
			for _, pool := range []bool{false, true} {
				name := dialect + "/"
				if pairs {
					name += "create+delete/"
				} else {
					name += "create/"
				}
				if pool {
					name += "pool"
				} else {
					name += "inline"
				}
				b.Run(name, func(b *testing.B) {
					dsn, ok := benchDSN(b, dialect)
					if !ok {
						b.Skip("OPENKEEL_TEST_MYSQL_DSN not set")
					}
					benchCreate(b, dialect, dsn, pairs, pool)
				})
			}
		}
	}
}

func benchCreate(b *testing.B, dialect, dsn string, pairs, pool bool) {
	ctx := b.Context()
	d, err := db.Open(ctx, dialect, dsn, db.Options{MaxAttempts: 50})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	if err := d.Upgrade(ctx); err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := &putCounter{Store: certs.NewX509KeyPairStore(conductor.CertRows{DB: d}, conductor.NewUUID)}
	c := &conductor.Conductor{
		DB: d, Drivers: driver.NewRegistry(driver.Selection{EnabledBeta: []string{fake.Name}}, fake.New(fake.Options{})),
		OpenStack: openstack.NewStatic(false), Settings: conductor.Settings{MaxClustersPerProject: 1 << 30}, Log: quiet,
		Certs: store,
	}
	if pool {
		c.StartCreateJobs(0)
	}
	pol, err := policy.New(policy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h := New(Options{Auth: auth.NewNoAuth(), Policy: pol, Conductor: c, Logger: quiet})
	s := func(v string) *string { return &v }
	no, yes := false, true
	tmpl := &magnum.ClusterTemplate{UUID: conductor.NewUUID(), Name: "k8s", ProjectID: "p1", UserID: "u1",
		ImageID: s(openstack.StaticImageName), FlavorID: s("m1.small"), MasterFlavorID: s("m1.medium"),
		ExternalNetworkID: s("public"), COE: s("kubernetes"), ServerType: s("vm"), ClusterDistro: s("ubuntu"),
		Driver: s(fake.Name), NetworkDriver: s("flannel"), Labels: map[string]string{"kube_tag": "v1.30.0"},
		Public: &no, Hidden: &no, MasterLBEnabled: &yes, FloatingIPEnabled: &yes, TLSDisabled: &no, RegistryEnabled: &no}
	if err := d.CreateClusterTemplate(ctx, tmpl); err != nil {
		b.Fatal(err)
	}
	do := func(method, target, body string) *httptest.ResponseRecorder {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		r := httptest.NewRequestWithContext(context.Background(), method, target, rd)
		r.Header.Set("X-Project-Id", "p1")
		r.Header.Set("X-User-Id", "u1")
		r.Header.Set("X-Roles", "member")
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("OpenStack-API-Version", "container-infra latest")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	body := `{"name":"bench","cluster_template_id":"` + tmpl.UUID + `","master_count":1,"node_count":1,"create_timeout":60}`

	var next atomic.Int64
	var lastAccepted atomic.Int64
	b.ResetTimer()
	start := time.Now()
	cpu0 := cpuTime(b)
	var wg sync.WaitGroup
	for range createBenchClients {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				w := do(http.MethodPost, "/v1/clusters", body)
				if w.Code != http.StatusAccepted {
					b.Errorf("create: %d %s", w.Code, w.Body.String())
					return
				}
				lastAccepted.Store(int64(time.Since(start)))
				if !pairs {
					continue
				}
				var out struct {
					UUID string `json:"uuid"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
					b.Error(err)
					return
				}
				if w := do(http.MethodDelete, "/v1/clusters/"+out.UUID, ""); w.Code != http.StatusNoContent {
					b.Errorf("delete: %d %s", w.Code, w.Body.String())
					return
				}
			}
		})
	}
	wg.Wait()
	if err := c.StopCreateJobs(context.Background()); err != nil {
		b.Fatal(err)
	}
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Duration(lastAccepted.Load()).Seconds(), "creates/s")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/create")
	b.ReportMetric(float64(store.n.Load())/float64(b.N), "certs/create")
}
