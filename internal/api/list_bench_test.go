package api

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/openkeel/openkeel-magnum/internal/auth"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/policy"
)

// listBenchSize is the page size of the list benchmarks (the bench/
// campaign's N=1000 page).
const listBenchSize = 1000

// benchDSN returns a fresh database of dialect for a benchmark; ok is
// false when the dialect's test server is not configured.
func benchDSN(tb testing.TB, dialect string) (string, bool) {
	tb.Helper()
	switch dialect {
	case db.DialectSQLite:
		return filepath.Join(tb.TempDir(), "bench.db"), true
	case db.DialectMySQL:
		base := os.Getenv("OPENKEEL_TEST_MYSQL_DSN")
		if base == "" {
			return "", false
		}
		cfg, err := mysql.ParseDSN(base)
		if err != nil {
			tb.Fatal(err)
		}
		admin, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			tb.Fatal(err)
		}
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		name := "okm_bench_" + hex.EncodeToString(b)
		if _, err := admin.ExecContext(tb.Context(), "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
			tb.Fatalf("create database: %v", err)
		}
		tb.Cleanup(func() {
			_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name)
			admin.Close()
		})
		cfg.DBName = name
		return cfg.FormatDSN(), true
	}
	return "", false
}

// listBenchLabels are ~15 labels as a Kubernetes cluster of the bench/
// seed carries them.
func listBenchLabels(i int) map[string]string {
	return map[string]string{
		"kube_tag": "v1.30.4", "container_runtime": "containerd", "containerd_version": "1.7.20",
		"cloud_provider_enabled": "true", "cinder_csi_enabled": "true", "auto_healing_enabled": "false",
		"auto_scaling_enabled": "false", "monitoring_enabled": "false", "ingress_controller": "octavia",
		"master_lb_floating_ip_enabled": "true", "boot_volume_size": "40", "boot_volume_type": "ssd",
		"etcd_volume_size": "10", "availability_zone": fmt.Sprintf("az-%d", i%3),
		"octavia_provider": "amphora",
	}
}

// seedListBench writes n clusters of project p1 with their two default
// nodegroups (a master with one address, workers with three) in one
// transaction, and returns the template.
func seedListBench(tb testing.TB, d *db.DB, n int) *magnum.ClusterTemplate {
	tb.Helper()
	ctx := tb.Context()
	s := func(v string) *string { return &v }
	ip := func(p *int) *int { return p }
	no, yes := false, true
	tm := &magnum.ClusterTemplate{UUID: conductor.NewUUID(), Name: "k8s", ProjectID: "p1", UserID: "u1",
		ImageID: s(openstack.StaticImageName), FlavorID: s("m1.small"), MasterFlavorID: s("m1.medium"),
		ExternalNetworkID: s("public"), COE: s("kubernetes"), ServerType: s("vm"), ClusterDistro: s("ubuntu"),
		Driver: s(fake.Name), NetworkDriver: s("flannel"), Labels: map[string]string{"kube_tag": "v1.29.0", "boot_volume_size": "40", "t": "1"},
		Public: &no, Hidden: &no, MasterLBEnabled: &yes, FloatingIPEnabled: &yes, TLSDisabled: &no, RegistryEnabled: &no}
	if err := d.CreateClusterTemplate(ctx, tm); err != nil {
		tb.Fatal(err)
	}
	created := time.Date(2026, 11, 30, 5, 0, 0, 123456000, time.UTC)
	err := d.InTx(ctx, func(tx *db.Tx) error {
		for i := range n {
			one, three, sixty, ten := 1, 3, 60, 10
			st := magnum.Status("CREATE_COMPLETE")
			cl := &magnum.Cluster{UUID: conductor.NewUUID(), Name: fmt.Sprintf("bench-%05d", i), ProjectID: "p1",
				UserID: "u1", ClusterTemplateID: tm.UUID, Keypair: s("bench-key"), DockerVolumeSize: ip(&ten),
				Labels: listBenchLabels(i), MasterFlavorID: s("m1.medium"), FlavorID: s("m1.small"),
				StackID: s(conductor.NewUUID()), APIAddress: s(fmt.Sprintf("https://10.0.%d.%d:6443", i/250, i%250)),
				Status: &st, StatusReason: s("Stack CREATE completed successfully"), HealthStatus: s("HEALTHY"),
				HealthStatusReason: map[string]string{"api": "ok", "bench-node-0.Ready": "True"},
				CreateTimeout:      &sixty, DiscoveryURL: s("https://discovery.etcd.io/" + fmt.Sprint(i)),
				COEVersion: s("v1.30.4"), ContainerVersion: s("1.7.20"), FixedNetwork: s("private"),
				FixedSubnet: s("private-subnet"), FloatingIPEnabled: &yes, MasterLBEnabled: &yes, CreatedAt: created}
			if err := tx.CreateCluster(ctx, cl); err != nil {
				return err
			}
			for _, g := range []struct {
				name, role string
				count      *int
				addrs      []string
			}{
				{"default-master", magnum.RoleMaster, &one, []string{fmt.Sprintf("10.1.%d.%d", i/250, i%250)}},
				{"default-worker", "worker", &three, []string{"10.2.0.1", "10.2.0.2", fmt.Sprintf("10.2.%d.%d", i/250, i%250)}},
			} {
				ng := &magnum.NodeGroup{UUID: conductor.NewUUID(), Name: g.name, ClusterID: cl.UUID, ProjectID: "p1",
					DockerVolumeSize: ip(&ten), Labels: listBenchLabels(i), FlavorID: s("m1.small"),
					ImageID: s(openstack.StaticImageName), NodeAddresses: g.addrs, NodeCount: g.count,
					MinNodeCount: &one, Role: s(g.role), IsDefault: &yes, StackID: cl.StackID, Status: &st,
					Version: s("v1.30.4"), NodeLabels: map[string]string{"pool": g.name},
					NodeTaints: []magnum.NodeTaint{}, CreatedAt: created}
				if err := tx.CreateNodeGroup(ctx, ng); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return tm
}

// newListBench returns the API and its conductor over a seeded database
// of dialect, or nils when the dialect is not configured.
func newListBench(tb testing.TB, dialect string, n int) (http.Handler, *conductor.Conductor) {
	tb.Helper()
	dsn, ok := benchDSN(tb, dialect)
	if !ok {
		return nil, nil
	}
	ctx := tb.Context()
	d, err := db.Open(ctx, dialect, dsn, db.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	if err := d.Upgrade(ctx); err != nil {
		tb.Fatal(err)
	}
	seedListBench(tb, d, n)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := &conductor.Conductor{
		DB: d, Drivers: driver.NewRegistry(driver.Selection{EnabledBeta: []string{fake.Name}}, fake.New(fake.Options{})),
		OpenStack: openstack.NewStatic(false), Log: quiet,
	}
	pol, err := policy.New(policy.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return New(Options{Auth: auth.NewNoAuth(), Policy: pol, Conductor: c, Logger: quiet}), c
}

// discardWriter is a ResponseWriter that keeps the status and counts the
// body, as a socket would take it.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(p)
	return len(p), nil
}

// listBenchCPU returns the CPU time (user and system, all threads, the
// collector's included) the process has used so far, in nanoseconds.
func listBenchCPU(tb testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func listBenchRequest(ctx context.Context, target string) *http.Request {
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	r.Header.Set("X-Project-Id", "p1")
	r.Header.Set("X-User-Id", "u1")
	r.Header.Set("X-Roles", "member,reader")
	r.Header.Set("OpenStack-API-Version", "container-infra latest")
	return r
}

// BenchmarkClusterList serves GET /v1/clusters?limit=1000 and
// /v1/clusters/detail?limit=1000 (microversion latest) over a database of
// 1000 clusters with two nodegroups each, on SQLite and, when
// OPENKEEL_TEST_MYSQL_DSN is set, on MariaDB. cpu-ms/op is the CPU time of
// this process per request (the MariaDB server's is not counted; SQLite
// runs in the process).
func BenchmarkClusterList(b *testing.B) {
	for _, dialect := range []string{db.DialectSQLite, db.DialectMySQL} {
		b.Run(dialect, func(b *testing.B) {
			h, _ := newListBench(b, dialect, listBenchSize)
			if h == nil {
				b.Skipf("%s: OPENKEEL_TEST_MYSQL_DSN not set", dialect)
			}
			for _, path := range []string{"/v1/clusters", "/v1/clusters/detail"} {
				name := "summary"
				if path == "/v1/clusters/detail" {
					name = "detail"
				}
				b.Run(name, func(b *testing.B) {
					target := fmt.Sprintf("%s?limit=%d", path, listBenchSize)
					w := &discardWriter{h: http.Header{}}
					h.ServeHTTP(w, listBenchRequest(b.Context(), target))
					if w.status != http.StatusOK {
						b.Fatalf("status %d", w.status)
					}
					b.SetBytes(int64(w.n))
					b.ReportAllocs()
					cpu0 := listBenchCPU(b)
					n := 0
					for b.Loop() {
						w := &discardWriter{h: http.Header{}}
						h.ServeHTTP(w, listBenchRequest(b.Context(), target))
						if w.status != http.StatusOK {
							b.Fatalf("status %d", w.status)
						}
						n++
					}
					b.ReportMetric(float64(listBenchCPU(b)-cpu0)/float64(n)/1e6, "cpu-ms/op")
				})
			}
		})
	}
}

// BenchmarkClusterListPage reads and renders a 1000-cluster page without
// the HTTP pipeline, the way the list handler did before ("objects": full
// rows, a clObject per cluster, encoding/json) and the way it does now
// ("direct": the view's columns, writeClusterPage into a discarding
// writer), on SQLite. Besides ns/op and B/op it reports live-B/page: the
// heap still reachable once the page is read and its body rendered (the
// page, and the whole body for "objects"), measured after a forced
// collection.
func BenchmarkClusterListPage(b *testing.B) {
	_, c := newListBench(b, db.DialectSQLite, listBenchSize)
	rc := &magnum.RequestContext{ProjectID: "p1", UserID: "u1"}
	p := conductor.ListParams{Limit: listBenchSize, SortKey: "id", SortDir: "asc"}
	for _, detail := range []bool{false, true} {
		view := "summary"
		if detail {
			view = "detail"
		}
		r := viewRequest("http://localhost:9511", 14)
		for _, path := range []struct {
			name   string
			render func() (any, []byte)
		}{
			{"objects", func() (any, []byte) {
				page, err := c.ListClusters(b.Context(), rc, false, p)
				if err != nil {
					b.Fatal(err)
				}
				return page, clusterPageBodyByObjects(b, r, page, detail, "")
			}},
			{"direct", func() (any, []byte) {
				page, err := c.ListClusterView(b.Context(), rc, false, p, detail)
				if err != nil {
					b.Fatal(err)
				}
				w := &discardWriter{h: http.Header{}}
				if err := writeClusterPage(w, r, page, detail, ""); err != nil {
					b.Fatal(err)
				}
				return page, nil
			}},
		} {
			b.Run(view+"/"+path.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					path.render()
				}
				b.StopTimer()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				page, body := path.render()
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(page)
				runtime.KeepAlive(body)
				b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "live-B/page")
			})
		}
	}
}
