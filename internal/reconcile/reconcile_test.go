package reconcile_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/reconcile"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type env struct {
	c    *conductor.Conductor
	db   *db.DB
	tmpl *magnum.ClusterTemplate
	now  *atomic.Int64
}

func newEnv(t *testing.T) *env {
	t.Helper()
	d, err := db.Open(t.Context(), db.DialectSQLite, filepath.Join(t.TempDir(), "m.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Upgrade(t.Context()); err != nil {
		t.Fatal(err)
	}
	now := &atomic.Int64{}
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
	clock := func() time.Time { return time.Unix(now.Load(), 0).UTC() }
	fd := fake.New(fake.Options{Clock: clock})
	c := &conductor.Conductor{
		DB: d, Drivers: driver.NewRegistry(driver.Selection{}, fd), OpenStack: openstack.NewStatic(true),
		Settings: conductor.Settings{MaxClustersPerProject: 20}, Log: quiet, Now: clock,
	}
	s := func(v string) *string { return &v }
	no, yes := false, true
	tmpl := &magnum.ClusterTemplate{UUID: conductor.NewUUID(), Name: "t", ProjectID: "p1", UserID: "u1",
		ImageID: s("img"), FlavorID: s("m1.small"), MasterFlavorID: s("m1.small"), COE: s("kubernetes"),
		ServerType: s("vm"), ClusterDistro: s("ubuntu"), Driver: s(fake.Name), Public: &no, Hidden: &no,
		MasterLBEnabled: &yes, FloatingIPEnabled: &yes}
	if err := d.CreateClusterTemplate(t.Context(), tmpl); err != nil {
		t.Fatal(err)
	}
	return &env{c: c, db: d, tmpl: tmpl, now: now}
}

func (e *env) create(t *testing.T, labels map[string]string) *magnum.Cluster {
	t.Helper()
	cl, err := e.c.CreateCluster(t.Context(), &magnum.RequestContext{ProjectID: "p1", UserID: "u1"},
		conductor.ClusterCreate{Template: e.tmpl, MasterCount: 1, NodeCount: 2, Labels: labels, MergeLabels: true})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func (e *env) status(t *testing.T, uuid string) magnum.Status {
	t.Helper()
	cl, err := e.db.GetClusterByUUID(t.Context(), uuid, db.AllProjects)
	if errors.Is(err, db.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return *cl.Status
}

func TestTickCompletesCreateAndDelete(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	r := reconcile.New(reconcile.Options{Conductor: e.c, Interval: time.Second, Log: quiet, Holder: "a"})
	cl := e.create(t, nil)
	if got := e.status(t, cl.UUID); got != magnum.StatusCreateInProgress {
		t.Fatalf("after create: %s", got)
	}
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	row, _ := e.db.GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
	if *row.Status != magnum.StatusCreateComplete || row.APIAddress == nil || row.StackID == nil {
		t.Fatalf("after tick: %+v", row)
	}
	ngs, _ := e.db.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: cl.UUID}, db.ListOptions{})
	for _, ng := range ngs {
		if *ng.Status != magnum.StatusCreateComplete || len(ng.NodeAddresses) != *ng.NodeCount {
			t.Errorf("nodegroup %s: %s %v", ng.Name, *ng.Status, ng.NodeAddresses)
		}
	}
	var deleted []string
	r = reconcile.New(reconcile.Options{Conductor: e.c, Log: quiet, Holder: "a",
		OnDeleted: func(_ context.Context, cl magnum.Cluster) error { deleted = append(deleted, cl.UUID); return nil }})
	if err := e.c.DeleteCluster(ctx, nil, cl.UUID); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, cl.UUID); got != magnum.StatusDeleteInProgress {
		t.Fatalf("after delete: %s", got)
	}
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, cl.UUID); got != "" {
		t.Fatalf("cluster still there: %s", got)
	}
	if n, _ := e.db.CountNodeGroups(ctx, db.NodeGroupFilter{ClusterID: cl.UUID}); n != 0 {
		t.Errorf("%d nodegroups left", n)
	}
	if len(deleted) != 1 || deleted[0] != cl.UUID {
		t.Errorf("delete hook calls: %v", deleted)
	}
}

func TestTickInjectedFailure(t *testing.T) {
	e := newEnv(t)
	r := reconcile.New(reconcile.Options{Conductor: e.c, Log: quiet})
	cl := e.create(t, map[string]string{fake.LabelFail: fake.OpCreate})
	if err := r.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, cl.UUID); got != magnum.StatusCreateFailed {
		t.Fatalf("status %s, want CREATE_FAILED", got)
	}
	// A failed cluster is no longer polled.
	if err := r.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, cl.UUID); got != magnum.StatusCreateFailed {
		t.Fatalf("status %s after a second tick", got)
	}
}

func TestDriverErrorMarksFailed(t *testing.T) {
	e := newEnv(t)
	cl := e.create(t, map[string]string{fake.LabelError: fake.OpCreate})
	row, _ := e.db.GetClusterByUUID(t.Context(), cl.UUID, db.AllProjects)
	if *row.Status != magnum.StatusCreateFailed || row.StatusReason == nil || *row.StatusReason == "" {
		t.Fatalf("got %+v", row)
	}
}

func TestLeaseIsExclusive(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a := reconcile.New(reconcile.Options{Conductor: e.c, Interval: 10 * time.Second, Log: quiet, Holder: "a"})
	b := reconcile.New(reconcile.Options{Conductor: e.c, Interval: 10 * time.Second, Log: quiet, Holder: "b"})
	if err := a.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	cl := e.create(t, nil)
	if err := b.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, cl.UUID); got != magnum.StatusCreateInProgress {
		t.Fatalf("b reconciled while a held the lease: %s", got)
	}
	// a stops renewing: after the lease duration (3 intervals) b takes over.
	e.now.Add(31)
	if err := b.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, cl.UUID); got != magnum.StatusCreateComplete {
		t.Fatalf("b did not take over: %s", got)
	}
	ok, err := e.c.AcquireReconcilerLease(ctx, "a", 30*time.Second)
	if err != nil || ok {
		t.Fatalf("a got the lease back while b holds it: %v %v", ok, err)
	}
	if err := e.c.ReleaseReconcilerLease(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.c.AcquireReconcilerLease(ctx, "a", 30*time.Second); err != nil || !ok {
		t.Fatalf("a cannot take a released lease: %v %v", ok, err)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	r := reconcile.New(reconcile.Options{Conductor: e.c, Interval: time.Hour, Log: quiet, Holder: "a"})
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	if ok, err := e.c.AcquireReconcilerLease(t.Context(), "b", time.Hour); err != nil || !ok {
		t.Fatalf("lease not released: %v %v", ok, err)
	}
}

func TestDeleteHookFailureIsRetried(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	fail := true
	r := reconcile.New(reconcile.Options{Conductor: e.c, Log: quiet, Holder: "a",
		OnDeleted: func(context.Context, magnum.Cluster) error {
			if fail {
				return errors.New("certificate store down")
			}
			return nil
		}})
	cl := e.create(t, nil)
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.c.DeleteCluster(ctx, nil, cl.UUID); err != nil {
		t.Fatal(err)
	}
	if err := r.Tick(ctx); err == nil {
		t.Fatal("want the hook error")
	}
	if got := e.status(t, cl.UUID); got != magnum.StatusDeleteComplete {
		t.Fatalf("status %s, want DELETE_COMPLETE kept", got)
	}
	fail = false
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, cl.UUID); got != "" {
		t.Fatalf("cluster not removed: %s", got)
	}
}
