package conductor_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
)

// clusterDialects returns the dialects to test: SQLite always, MariaDB and
// PostgreSQL when their DSN is set (required when CI=true).
func clusterDialects(t *testing.T) []string {
	out := []string{db.DialectSQLite}
	for _, d := range []struct{ name, env string }{
		{db.DialectMySQL, "OPENKEEL_TEST_MYSQL_DSN"},
		{db.DialectPostgres, "OPENKEEL_TEST_POSTGRES_DSN"},
	} {
		switch {
		case os.Getenv(d.env) != "":
			out = append(out, d.name)
		case os.Getenv("CI") == "true":
			t.Errorf("%s is not set (required when CI=true)", d.env)
		default:
			t.Logf("%s not set: skipping %s", d.env, d.name)
		}
	}
	return out
}

// clusterFreshDSN creates an empty database for the test.
func clusterFreshDSN(t *testing.T, dialect string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "okm_cl_" + hex.EncodeToString(b)
	ctx := context.Background()
	switch dialect {
	case db.DialectMySQL:
		cfg, err := mysql.ParseDSN(os.Getenv("OPENKEEL_TEST_MYSQL_DSN"))
		if err != nil {
			t.Fatal(err)
		}
		admin, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
			t.Fatalf("create database: %v", err)
		}
		t.Cleanup(func() {
			_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name)
			admin.Close()
		})
		cfg.DBName = name
		return cfg.FormatDSN()
	case db.DialectPostgres:
		base := os.Getenv("OPENKEEL_TEST_POSTGRES_DSN")
		admin, err := sql.Open("pgx", base)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatalf("create database: %v", err)
		}
		t.Cleanup(func() {
			_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			admin.Close()
		})
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		return u.String()
	}
	return filepath.Join(t.TempDir(), name+".db")
}

// clusterEnv is a conductor over a migrated database and the fake driver.
type clusterEnv struct {
	c    *conductor.Conductor
	db   *db.DB
	fake *fake.Driver
	tmpl *magnum.ClusterTemplate
}

func newClusterEnv(t *testing.T, dialect string) *clusterEnv {
	t.Helper()
	d, err := db.Open(t.Context(), dialect, clusterFreshDSN(t, dialect), db.Options{MaxAttempts: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Upgrade(t.Context()); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	fd := fake.New(fake.Options{})
	c := &conductor.Conductor{
		DB:        d,
		Drivers:   driver.NewRegistry(driver.Selection{EnabledBeta: []string{fake.Name}}, fd),
		OpenStack: openstack.NewStatic(true),
		Settings:  conductor.Settings{MaxClustersPerProject: 20},
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	s := func(v string) *string { return &v }
	yes, no := true, false
	tmpl := &magnum.ClusterTemplate{
		UUID: "e74c40e0-d825-11e2-a28f-0800200c9a66", Name: "tmpl", ProjectID: "p1", UserID: "u1",
		ImageID: s(openstack.StaticImageName), FlavorID: s("m1.small"), MasterFlavorID: s("m1.small"),
		ExternalNetworkID: s("public"), COE: s("kubernetes"), ServerType: s("vm"), ClusterDistro: s("ubuntu"),
		Driver: s(fake.Name), NetworkDriver: s("flannel"), Labels: map[string]string{"kube_tag": "v1.30.0"},
		Public: &no, Hidden: &no, MasterLBEnabled: &yes, FloatingIPEnabled: &yes, TLSDisabled: &no,
		RegistryEnabled: &no,
	}
	if err := d.CreateClusterTemplate(t.Context(), tmpl); err != nil {
		t.Fatal(err)
	}
	return &clusterEnv{c: c, db: d, fake: fd, tmpl: tmpl}
}

func clusterCaller(project string) *magnum.RequestContext {
	return &magnum.RequestContext{ProjectID: project, UserID: "u-" + project, Roles: []string{"member"}}
}

// create makes a cluster of env's template for project through c (a
// conductor on env's database).
func (env *clusterEnv) create(ctx context.Context, c *conductor.Conductor, project string) (*magnum.Cluster, error) {
	return c.CreateCluster(ctx, clusterCaller(project), conductor.ClusterCreate{
		Template: env.tmpl, MasterCount: 1, NodeCount: 1, CreateTimeout: 60,
	})
}

// deletedAndPolled creates a cluster of project p1, deletes it and polls
// it: the cluster as the poll returns it (DELETE_COMPLETE, not written).
func (env *clusterEnv) deletedAndPolled(t *testing.T) magnum.Cluster {
	t.Helper()
	ctx := t.Context()
	cl, err := env.create(ctx, env.c, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.c.DeleteCluster(ctx, clusterCaller("p1"), cl.UUID); err != nil {
		t.Fatal(err)
	}
	polled, err := env.c.PollCluster(ctx, cl.UUID)
	if err != nil || polled == nil || *polled.Status != magnum.StatusDeleteComplete {
		t.Fatalf("poll: %+v, %v; want DELETE_COMPLETE", polled, err)
	}
	return *polled
}

// TestClusterQuotaIsAtomic runs 64 concurrent creates against a limit of
// 10: exactly 10 succeed, 54 get 403 ResourceLimitExceeded, and exactly 10
// rows exist.
func TestClusterQuotaIsAtomic(t *testing.T) {
	for _, dialect := range clusterDialects(t) {
		t.Run(dialect, func(t *testing.T) {
			env := newClusterEnv(t, dialect)
			if err := env.db.CreateQuota(t.Context(), &magnum.Quota{ProjectID: "p1", Resource: magnum.QuotaResourceCluster, HardLimit: 10}); err != nil {
				t.Fatal(err)
			}
			const n = 64
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				ok, deny int
				other    []error
			)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := env.create(t.Context(), env.c, "p1")
					mu.Lock()
					defer mu.Unlock()
					var me *magnum.Error
					switch {
					case err == nil:
						ok++
					case errors.As(err, &me) && me.Status == 403 && me.Message == magnum.ResourceLimitExceeded(10).Message:
						deny++
					default:
						other = append(other, err)
					}
				}()
			}
			wg.Wait()
			if ok != 10 || deny != 54 || len(other) != 0 {
				t.Fatalf("created %d, refused %d, other errors %v; want 10 and 54", ok, deny, other)
			}
			count, err := env.db.CountClusters(t.Context(), db.ClusterFilter{Scope: db.ProjectScope("p1")})
			if err != nil {
				t.Fatal(err)
			}
			if count != 10 {
				t.Fatalf("%d cluster rows, want 10", count)
			}
		})
	}
}

// TestClusterQuotaAcrossProcesses: two conductors on one database, as two
// API processes. A process that skips the count because it knows its
// project is below the limit must notice the other's creates, and a
// deletion makes room again.
func TestClusterQuotaAcrossProcesses(t *testing.T) {
	for _, dialect := range clusterDialects(t) {
		t.Run(dialect, func(t *testing.T) {
			env := newClusterEnv(t, dialect)
			ctx := t.Context()
			a := env.c
			b := &conductor.Conductor{DB: env.db, Drivers: a.Drivers, OpenStack: a.OpenStack, Settings: a.Settings, Log: a.Log}
			if err := env.db.CreateQuota(ctx, &magnum.Quota{ProjectID: "p1", Resource: magnum.QuotaResourceCluster, HardLimit: 3}); err != nil {
				t.Fatal(err)
			}
			var created []string
			create := func(c *conductor.Conductor, project string) error {
				t.Helper()
				cl, err := env.create(ctx, c, project)
				if err == nil && project == "p1" {
					created = append(created, cl.UUID)
				}
				return err
			}
			refused := func(err error) bool {
				var me *magnum.Error
				return errors.As(err, &me) && me.Status == 403 && me.Message == magnum.ResourceLimitExceeded(3).Message
			}
			for i, step := range []struct {
				c       *conductor.Conductor
				project string
				refuse  bool
			}{
				{a, "p1", false}, {a, "p1", false}, // a: p1 has at most 2
				{a, "p2", false}, // another project: p1's bound is kept
				{b, "p1", false}, // b takes the last place
				{a, "p1", true}, {b, "p1", true},
			} {
				err := create(step.c, step.project)
				if step.refuse != refused(err) || (!step.refuse && err != nil) {
					t.Fatalf("create %d (%s): %v, refused = %v", i+1, step.project, err, step.refuse)
				}
			}
			// A cluster goes: there is room for one more, in either process.
			if err := env.db.InTx(ctx, func(tx *db.Tx) error { return tx.DeleteClusterCascade(ctx, created[0]) }); err != nil {
				t.Fatal(err)
			}
			if err := create(a, "p1"); err != nil {
				t.Fatalf("create after a deletion: %v", err)
			}
			if err := create(b, "p1"); !refused(err) {
				t.Fatalf("create over the limit: %v", err)
			}
			n, err := env.db.CountClusters(ctx, db.ClusterFilter{Scope: db.ProjectScope("p1")})
			if err != nil || n != 3 {
				t.Fatalf("p1 has %d clusters (%v), want 3", n, err)
			}
		})
	}
}

// TestClusterQuotaBeforeValidation: the quota is Magnum's first check of
// a create. Over quota, a request that would also fail validation (hidden
// template, master_count 2 without a load balancer, an unknown image) gets
// 403 ResourceLimitExceeded; under quota the same requests get their own
// error, and nothing is written either way.
func TestClusterQuotaBeforeValidation(t *testing.T) {
	env := newClusterEnv(t, db.DialectSQLite)
	env.c.OpenStack = openstack.NewStatic(false) // unknown names fail
	ctx := t.Context()
	no, yes := false, true
	if _, err := env.create(ctx, env.c, "p1"); err != nil {
		t.Fatal(err)
	}
	hidden := *env.tmpl
	hidden.Hidden = &yes
	badImage := *env.tmpl
	img := "no-such-image"
	badImage.ImageID = &img
	bad := []struct {
		name   string
		in     conductor.ClusterCreate
		status int
	}{
		{"hidden template", conductor.ClusterCreate{Template: &hidden, MasterCount: 1, NodeCount: 1}, 403},
		{"two masters without a load balancer", conductor.ClusterCreate{Template: env.tmpl, MasterCount: 2, NodeCount: 1, MasterLBEnabled: &no}, 400},
		{"unknown image", conductor.ClusterCreate{Template: &badImage, MasterCount: 1, NodeCount: 1}, 400},
	}
	check := func(limit int, wantQuota bool) {
		t.Helper()
		if _, err := env.c.UpdateQuota(ctx, "p1", magnum.QuotaResourceCluster, limit); err != nil {
			if err := env.c.CreateQuota(ctx, &magnum.Quota{ProjectID: "p1", Resource: magnum.QuotaResourceCluster, HardLimit: limit}); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range bad {
			_, err := env.c.CreateCluster(ctx, clusterCaller("p1"), tc.in)
			var me *magnum.Error
			if !errors.As(err, &me) {
				t.Fatalf("limit %d, %s: error %v, want a Magnum error", limit, tc.name, err)
			}
			quota := me.Status == 403 && me.Message == magnum.ResourceLimitExceeded(limit).Message
			switch {
			case wantQuota && !quota:
				t.Errorf("limit %d, %s: %d %q, want 403 ResourceLimitExceeded", limit, tc.name, me.Status, me.Message)
			case !wantQuota && (quota || me.Status != tc.status):
				t.Errorf("limit %d, %s: %d %q, want its own %d", limit, tc.name, me.Status, me.Message, tc.status)
			}
		}
		n, err := env.db.CountClusters(ctx, db.ClusterFilter{Scope: db.ProjectScope("p1")})
		if err != nil || n != 1 {
			t.Fatalf("limit %d: %d clusters (%v), want the first one only", limit, n, err)
		}
	}
	check(1, true)
	check(5, false)
}

// TestCreateClusterInheritance checks the values a create derives from
// the template (logic.md §1) and the two default nodegroups.
func TestCreateClusterInheritance(t *testing.T) {
	env := newClusterEnv(t, db.DialectSQLite)
	ctx := t.Context()
	fl := "m1.medium"
	cl, err := env.c.CreateCluster(ctx, clusterCaller("p1"), conductor.ClusterCreate{
		Template: env.tmpl, Name: "c1", FlavorID: &fl, MasterCount: 1, NodeCount: 3, CreateTimeout: 15,
		Labels: map[string]string{"a": "1"}, MergeLabels: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.db.GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterTemplateID != env.tmpl.UUID || *got.FlavorID != "m1.medium" || *got.MasterFlavorID != "m1.small" ||
		got.Labels["kube_tag"] != "v1.30.0" || got.Labels["a"] != "1" || !*got.MasterLBEnabled || *got.CreateTimeout != 15 ||
		*got.Status != magnum.StatusCreateInProgress || got.ProjectID != "p1" {
		t.Errorf("unexpected cluster row: %+v", got)
	}
	ngs, err := env.db.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: cl.UUID}, db.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ngs) != 2 || ngs[0].Name != "default-master" || *ngs[0].NodeCount != 1 || ngs[1].Name != "default-worker" ||
		*ngs[1].NodeCount != 3 || *ngs[1].FlavorID != "m1.medium" || !*ngs[1].IsDefault {
		t.Errorf("unexpected nodegroups: %+v", ngs)
	}

	t.Run("labels replace without merge_labels", func(t *testing.T) {
		cl, err := env.c.CreateCluster(ctx, clusterCaller("p1"), conductor.ClusterCreate{
			Template: env.tmpl, MasterCount: 1, NodeCount: 1, Labels: map[string]string{"a": "1"},
		})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := env.db.GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
		if len(got.Labels) != 1 || got.Labels["a"] != "1" {
			t.Errorf("labels %v", got.Labels)
		}
	})
	t.Run("hidden template refused for non-admins", func(t *testing.T) {
		h := *env.tmpl
		yes := true
		h.Hidden = &yes
		_, err := env.c.CreateCluster(ctx, clusterCaller("p1"), conductor.ClusterCreate{Template: &h, MasterCount: 1, NodeCount: 1})
		var me *magnum.Error
		if !errors.As(err, &me) || me.Status != 403 || me.Message != "Not authorized." {
			t.Errorf("got %v", err)
		}
	})
	t.Run("several masters need a load balancer", func(t *testing.T) {
		no := false
		n, _ := env.db.CountClusters(ctx, db.ClusterFilter{Scope: db.AllProjects})
		_, err := env.c.CreateCluster(ctx, clusterCaller("p1"), conductor.ClusterCreate{Template: env.tmpl, MasterCount: 3, NodeCount: 1, MasterLBEnabled: &no})
		var me *magnum.Error
		if !errors.As(err, &me) || me.Status != 400 {
			t.Errorf("got %v", err)
		}
		m, _ := env.db.CountClusters(ctx, db.ClusterFilter{Scope: db.AllProjects})
		if m != n {
			t.Errorf("a refused create wrote rows: %d → %d", n, m)
		}
	})
}

// TestClusterStateGuards checks the synchronous 409s of update and resize
// and the 400 of upgrade.
func TestClusterStateGuards(t *testing.T) {
	env := newClusterEnv(t, db.DialectSQLite)
	ctx := t.Context()
	rc := clusterCaller("p1")
	cl, err := env.c.CreateCluster(ctx, rc, conductor.ClusterCreate{Template: env.tmpl, MasterCount: 1, NodeCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	var me *magnum.Error
	err = env.c.UpdateCluster(ctx, rc, cl.UUID, conductor.ClusterUpdate{NodeCount: 2})
	if !errors.As(err, &me) || me.Status != 409 || me.Message != `Updating a cluster when status is "CREATE_IN_PROGRESS" is not supported.` {
		t.Errorf("update: %v", err)
	}
	err = env.c.ResizeCluster(ctx, rc, cl, conductor.ClusterResize{NodeCount: 2})
	if !errors.As(err, &me) || me.Status != 409 {
		t.Errorf("resize: %v", err)
	}
	err = env.c.UpgradeCluster(ctx, rc, cl, conductor.ClusterUpgrade{Template: env.tmpl})
	if !errors.As(err, &me) || me.Status != 400 || me.Message != `Upgrading a cluster when status is "CREATE_IN_PROGRESS" is not supported.` {
		t.Errorf("upgrade: %v", err)
	}
}

// TestFinishDeleteOnlyUnchangedRows: a poll that reads DELETE_COMPLETE
// writes nothing; FinishDelete then removes the rows only if the cluster
// is still as the poll read it (here a second DELETE changed it), and the
// next poll finishes it.
func TestFinishDeleteOnlyUnchangedRows(t *testing.T) {
	env := newClusterEnv(t, db.DialectSQLite)
	ctx := t.Context()
	polled := env.deletedAndPolled(t)
	uuid := polled.UUID
	row, err := env.db.GetClusterByUUID(ctx, uuid, db.AllProjects)
	if err != nil || *row.Status != magnum.StatusDeleteInProgress {
		t.Fatalf("row after the poll: %v, %v; want DELETE_IN_PROGRESS unwritten", row, err)
	}
	// A second DELETE meanwhile: the poll's view is stale.
	if err := env.db.SetClusterStatus(ctx, uuid, magnum.StatusDeleteInProgress, nil); err != nil {
		t.Fatal(err)
	}
	hooked := 0
	hook := func(context.Context, magnum.Cluster) error { hooked++; return nil }
	if err := env.c.FinishDelete(ctx, polled, hook); err != nil {
		t.Fatal(err)
	}
	if _, err := env.db.GetClusterByUUID(ctx, uuid, db.AllProjects); err != nil {
		t.Fatalf("a cluster changed since the poll was removed: %v", err)
	}
	again, err := env.c.PollCluster(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.c.FinishDelete(ctx, *again, hook); err != nil {
		t.Fatal(err)
	}
	if _, err := env.db.GetClusterByUUID(ctx, uuid, db.AllProjects); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("cluster still there: %v", err)
	}
	ngs, err := env.db.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: uuid}, db.ListOptions{})
	if err != nil || len(ngs) != 0 {
		t.Fatalf("nodegroups left: %d, %v", len(ngs), err)
	}
	if hooked != 2 {
		t.Errorf("hook ran %d times, want 2 (once per finish)", hooked)
	}
	// Finishing a cluster already gone is not an error.
	if err := env.c.FinishDelete(ctx, *again, hook); err != nil {
		t.Errorf("finish again: %v", err)
	}
}

// TestPollPassKeepsLaterChanges: a pass polls the rows it read at its
// start; a cluster deleted after that is not written back to what the
// driver made of the older row, and the next pass sees the delete.
func TestPollPassKeepsLaterChanges(t *testing.T) {
	env := newClusterEnv(t, db.DialectSQLite)
	ctx := t.Context()
	cl, err := env.create(ctx, env.c, "p1")
	if err != nil {
		t.Fatal(err)
	}
	pass, err := env.c.StartPollPass(ctx)
	if err != nil || len(pass.Clusters) != 1 || pass.Clusters[0].UUID != cl.UUID {
		t.Fatalf("pass: %+v, %v; want the new cluster", pass, err)
	}
	if err := env.c.DeleteCluster(ctx, clusterCaller("p1"), cl.UUID); err != nil {
		t.Fatal(err)
	}
	if _, err := env.c.PollInPass(ctx, pass, &pass.Clusters[0]); err != nil {
		t.Fatal(err)
	}
	row, err := env.db.GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
	if err != nil || *row.Status != magnum.StatusDeleteInProgress {
		t.Fatalf("after the stale poll: %v, %v; want DELETE_IN_PROGRESS kept", row, err)
	}
	pass, err = env.c.StartPollPass(ctx)
	if err != nil || len(pass.Clusters) != 1 {
		t.Fatalf("second pass: %+v, %v", pass, err)
	}
	polled, err := env.c.PollInPass(ctx, pass, &pass.Clusters[0])
	if err != nil || polled == nil || *polled.Status != magnum.StatusDeleteComplete {
		t.Fatalf("second poll: %+v, %v; want DELETE_COMPLETE", polled, err)
	}
}

// TestFinishDeletesBatch: one call for three deleted clusters removes the
// one unchanged since its poll, leaves the one deleted again meanwhile,
// and saves DELETE_COMPLETE on the one whose hook failed.
func TestFinishDeletesBatch(t *testing.T) {
	env := newClusterEnv(t, db.DialectSQLite)
	ctx := t.Context()
	polled := []magnum.Cluster{env.deletedAndPolled(t), env.deletedAndPolled(t), env.deletedAndPolled(t)}
	done, stale, failing := polled[0].UUID, polled[1].UUID, polled[2].UUID
	if err := env.db.SetClusterStatus(ctx, stale, magnum.StatusDeleteInProgress, nil); err != nil {
		t.Fatal(err)
	}
	err := env.c.FinishDeletes(ctx, polled, func(_ context.Context, cl magnum.Cluster) error {
		if cl.UUID == failing {
			return errors.New("certificate store down")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), failing) {
		t.Fatalf("error = %v, want the failing hook's", err)
	}
	want := map[string]magnum.Status{done: "", stale: magnum.StatusDeleteInProgress, failing: magnum.StatusDeleteComplete}
	for uuid, st := range want {
		row, err := env.db.GetClusterByUUID(ctx, uuid, db.AllProjects)
		switch {
		case st == "" && !errors.Is(err, db.ErrNotFound):
			t.Errorf("%s: %v, %v; want removed", uuid, row, err)
		case st != "" && (err != nil || *row.Status != st):
			t.Errorf("%s: %v, %v; want %s", uuid, row, err, st)
		}
		ngs, err := env.db.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: uuid}, db.ListOptions{})
		if err != nil || (st == "") != (len(ngs) == 0) {
			t.Errorf("%s: %d nodegroups (%v)", uuid, len(ngs), err)
		}
	}
}
