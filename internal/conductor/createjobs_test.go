package conductor_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/reconcile"
)

// recDriver is the fake driver recording the order of its create and
// delete calls; CreateCluster can be held by a gate.
type recDriver struct {
	*fake.Driver
	mu    sync.Mutex
	calls []string
	// entered receives the cluster UUID when CreateCluster starts (if set).
	entered chan string
	// gate, when set, holds CreateCluster until it is closed.
	gate chan struct{}
	// deleting receives the cluster UUID when DeleteCluster starts.
	deleting chan string
}

func (d *recDriver) record(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, s)
}

func (d *recDriver) log() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

func (d *recDriver) count(prefix string) int {
	n := 0
	for _, c := range d.log() {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func (d *recDriver) CreateCluster(ctx context.Context, cred driver.Credentials, st driver.ClusterState, timeout time.Duration) (driver.Update, error) {
	d.record("create-start")
	if d.entered != nil {
		d.entered <- st.Cluster.UUID
	}
	if d.gate != nil {
		<-d.gate
	}
	defer d.record("create-end")
	return d.Driver.CreateCluster(ctx, cred, st, timeout)
}

func (d *recDriver) DeleteCluster(ctx context.Context, cred driver.Credentials, st driver.ClusterState) (driver.Update, error) {
	d.record("delete-start")
	d.deleting <- st.Cluster.UUID
	return d.Driver.DeleteCluster(ctx, cred, st)
}

// countingStore counts the certificates stored; fail makes Put fail.
type countingStore struct {
	certs.Store
	puts atomic.Int64
	fail bool
}

func (s *countingStore) Put(ctx context.Context, kp certs.KeyPair, name string) (string, error) {
	s.puts.Add(1)
	if s.fail {
		return "", errors.New("store unavailable")
	}
	return s.Store.Put(ctx, kp, name)
}

// jobEnv is a clusterEnv whose conductor runs creates on its pool, with
// the recording driver, the counting store and the job's end signalled.
type jobEnv struct {
	*clusterEnv
	drv   *recDriver
	store *countingStore
	done  chan string
}

func newJobEnv(t *testing.T, dialect string, hooks conductor.CreateJobHooks) *jobEnv {
	t.Helper()
	env := newClusterEnv(t, dialect)
	// Small keys: the test is about ordering, not key strength.
	x := certs.DefaultX509Options()
	x.RSAKeySize = 1024
	env.c.Settings.X509 = &x
	rd := &recDriver{Driver: env.fake, deleting: make(chan string, 16)}
	env.c.Drivers = driver.NewRegistry(driver.Selection{EnabledBeta: []string{fake.Name}}, rd)
	st := &countingStore{Store: certs.NewX509KeyPairStore(conductor.CertRows{DB: env.db}, conductor.NewUUID)}
	env.c.Certs = st
	je := &jobEnv{clusterEnv: env, drv: rd, store: st, done: make(chan string, 128)}
	after := hooks.AfterJob
	hooks.AfterJob = func(uuid string) {
		if after != nil {
			after(uuid)
		}
		je.done <- uuid
	}
	env.c.SetCreateJobHooks(hooks)
	env.c.StartCreateJobs(2)
	t.Cleanup(func() {
		if err := env.c.StopCreateJobs(context.Background()); err != nil {
			t.Errorf("stop create jobs: %v", err)
		}
	})
	return je
}

func (e *jobEnv) create(t *testing.T, labels map[string]string) *magnum.Cluster {
	t.Helper()
	cl, err := e.c.CreateCluster(t.Context(), clusterCaller("p1"), conductor.ClusterCreate{
		Template: e.tmpl, MasterCount: 1, NodeCount: 1, CreateTimeout: 60, Labels: labels, MergeLabels: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func (e *jobEnv) row(t *testing.T, uuid string) *magnum.Cluster {
	t.Helper()
	cl, err := e.db.GetClusterByUUID(t.Context(), uuid, db.AllProjects)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func (e *jobEnv) keyPairs(t *testing.T) int {
	t.Helper()
	rows, err := e.db.ListX509KeyPairs(t.Context(), db.AllProjects, db.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// tick runs one pass of the status loop, removing the certificates of
// deleted clusters as the application wiring does.
func (e *jobEnv) tick(t *testing.T) {
	t.Helper()
	r := reconcile.New(reconcile.Options{Conductor: e.c, Log: e.c.Log, Holder: "test",
		OnDeleted: func(ctx context.Context, cl magnum.Cluster) error { return e.c.DeleteClusterCertificates(ctx, &cl) }})
	if err := r.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func hasCerts(cl *magnum.Cluster) bool {
	for _, p := range []*string{cl.CACertRef, cl.MagnumCertRef, cl.EtcdCACertRef, cl.FrontProxyCACertRef} {
		if p == nil || *p == "" {
			return false
		}
	}
	return true
}

// TestCreateAnswersBeforeJob: the create returns with the rows written and
// nothing else; the poller leaves the cluster alone while its job waits;
// then the job stores the four certificates and calls the driver once.
func TestCreateAnswersBeforeJob(t *testing.T) {
	for _, dialect := range clusterDialects(t) {
		t.Run(dialect, func(t *testing.T) {
			gate := make(chan struct{})
			e := newJobEnv(t, dialect, conductor.CreateJobHooks{BeforeJob: func(string) { <-gate }})
			cl := e.create(t, nil)
			row := e.row(t, cl.UUID)
			if *row.Status != magnum.StatusCreateInProgress || row.CACertRef != nil || row.StackID != nil {
				t.Fatalf("after create: status %s, ca %v, stack %v", *row.Status, row.CACertRef, row.StackID)
			}
			if n := e.store.puts.Load(); n != 0 {
				t.Errorf("%d certificates stored before the job ran", n)
			}
			if n := e.drv.count("create"); n != 0 {
				t.Errorf("driver called before the job ran: %v", e.drv.log())
			}
			if got, err := e.c.PollCluster(t.Context(), cl.UUID); err != nil || got != nil {
				t.Errorf("poll of a queued create: %+v, %v; want skipped", got, err)
			}
			e.tick(t)
			if row := e.row(t, cl.UUID); *row.Status != magnum.StatusCreateInProgress || row.StackID != nil {
				t.Errorf("the status loop touched a queued create: %s", *row.Status)
			}
			close(gate)
			if got := <-e.done; got != cl.UUID {
				t.Fatalf("job of %s ended, want %s", got, cl.UUID)
			}
			row = e.row(t, cl.UUID)
			if !hasCerts(row) || row.StackID == nil || *row.Status != magnum.StatusCreateInProgress {
				t.Fatalf("after the job: %+v", row)
			}
			if n := e.store.puts.Load(); n != 4 || e.keyPairs(t) != 4 {
				t.Errorf("%d certificates stored, %d rows; want 4", n, e.keyPairs(t))
			}
			if got := e.drv.log(); !slices.Equal(got, []string{"create-start", "create-end"}) {
				t.Errorf("driver calls %v", got)
			}
			if _, err := e.c.GetCACertificate(t.Context(), row, ""); err != nil {
				t.Errorf("CA: %v", err)
			}
			e.tick(t)
			if row := e.row(t, cl.UUID); *row.Status != magnum.StatusCreateComplete {
				t.Errorf("after a tick: %s", *row.Status)
			}
		})
	}
}

// TestDeleteBeforeCreateJob: a delete while the job is queued; the job
// then generates nothing and does not call the driver's create, and the
// status loop finishes the delete (rows and certificates gone).
func TestDeleteBeforeCreateJob(t *testing.T) {
	for _, dialect := range clusterDialects(t) {
		t.Run(dialect, func(t *testing.T) {
			gate := make(chan struct{})
			e := newJobEnv(t, dialect, conductor.CreateJobHooks{BeforeJob: func(string) { <-gate }})
			cl := e.create(t, nil)
			if err := e.c.DeleteCluster(t.Context(), clusterCaller("p1"), cl.UUID); err != nil {
				t.Fatal(err)
			}
			close(gate)
			<-e.done
			if n := e.store.puts.Load(); n != 0 {
				t.Errorf("%d certificates generated for a deleted cluster", n)
			}
			if got := e.drv.log(); !slices.Equal(got, []string{"delete-start"}) {
				t.Errorf("driver calls %v, want only the delete", got)
			}
			if row := e.row(t, cl.UUID); *row.Status != magnum.StatusDeleteInProgress {
				t.Fatalf("status %s", *row.Status)
			}
			e.tick(t)
			if row := e.row(t, cl.UUID); row != nil {
				t.Fatalf("cluster still there: %s", *row.Status)
			}
			if n, _ := e.db.CountNodeGroups(t.Context(), db.NodeGroupFilter{ClusterID: cl.UUID}); n != 0 {
				t.Errorf("%d nodegroups left", n)
			}
			if n := e.keyPairs(t); n != 0 {
				t.Errorf("%d certificates left", n)
			}
		})
	}
}

// TestDeleteStopsCertificateGeneration: a delete of a cluster whose job is
// generating its certificates stops the generation: no key is stored, the
// driver's create is never called, and the cluster goes.
func TestDeleteStopsCertificateGeneration(t *testing.T) {
	for _, dialect := range clusterDialects(t) {
		t.Run(dialect, func(t *testing.T) {
			generating := make(chan string, 1)
			gate := make(chan struct{})
			e := newJobEnv(t, dialect, conductor.CreateJobHooks{
				BeforeCertificates: func(uuid string) { generating <- uuid; <-gate },
			})
			cl := e.create(t, nil)
			<-generating
			if err := e.c.DeleteCluster(context.Background(), clusterCaller("p1"), cl.UUID); err != nil {
				close(gate)
				t.Fatal(err)
			}
			close(gate)
			<-e.done
			if n := e.store.puts.Load(); n != 0 {
				t.Errorf("%d certificates stored after the delete stopped the generation", n)
			}
			if got := e.drv.log(); !slices.Equal(got, []string{"delete-start"}) {
				t.Errorf("driver calls %v, want only the delete", got)
			}
			e.tick(t)
			if row := e.row(t, cl.UUID); row != nil {
				t.Fatalf("cluster still there: %s", *row.Status)
			}
		})
	}
}

// TestDeleteWhileCreateJobRuns: a delete arriving while the job runs never
// precedes the driver's create: before the certificates are saved, the
// delete completes at once and the job then drops them and skips the
// driver; inside the driver's create, the delete waits for it and then
// reaches what it created.
func TestDeleteWhileCreateJobRuns(t *testing.T) {
	for _, dialect := range clusterDialects(t) {
		t.Run(dialect, func(t *testing.T) {
			t.Run("before the certificates are saved", func(t *testing.T) {
				saving := make(chan string, 1)
				gate := make(chan struct{})
				e := newJobEnv(t, dialect, conductor.CreateJobHooks{
					BeforeSave: func(uuid string) { saving <- uuid; <-gate },
				})
				cl := e.create(t, nil)
				<-saving
				// The delete does not wait for certificates it makes
				// useless: it completes while the job is held.
				errc := make(chan error, 1)
				go func() { errc <- e.c.DeleteCluster(context.Background(), clusterCaller("p1"), cl.UUID) }()
				select {
				case err := <-errc:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(30 * time.Second):
					close(gate)
					t.Fatal("the delete waited for the create job's certificates")
				}
				close(gate)
				<-e.done
				if got := e.drv.log(); !slices.Equal(got, []string{"delete-start"}) {
					t.Errorf("driver calls %v, want only the delete", got)
				}
				if n := e.keyPairs(t); n != 0 {
					t.Errorf("%d certificates left after the job dropped them", n)
				}
				e.tick(t)
				if row := e.row(t, cl.UUID); row != nil {
					t.Fatalf("cluster still there: %s", *row.Status)
				}
			})
			t.Run("inside the driver's create", func(t *testing.T) {
				waits := make(chan string, 1)
				e := newJobEnv(t, dialect, conductor.CreateJobHooks{LockWaits: func(uuid string) { waits <- uuid }})
				e.drv.entered = make(chan string, 1)
				e.drv.gate = make(chan struct{})
				cl := e.create(t, nil)
				<-e.drv.entered
				errc := make(chan error, 1)
				go func() { errc <- e.c.DeleteCluster(context.Background(), clusterCaller("p1"), cl.UUID) }()
				// The delete must wait for the running job, not call the
				// driver.
				select {
				case <-waits:
				case <-e.drv.deleting:
					close(e.drv.gate)
					t.Fatal("the driver's delete was called while the create job ran")
				}
				close(e.drv.gate)
				<-e.done
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
				if got := e.drv.log(); !slices.Equal(got, []string{"create-start", "create-end", "delete-start"}) {
					t.Errorf("driver calls %v", got)
				}
				row := e.row(t, cl.UUID)
				if *row.Status != magnum.StatusDeleteInProgress || row.StackID == nil || !hasCerts(row) {
					t.Fatalf("after both: %+v", row)
				}
				e.tick(t)
				if row := e.row(t, cl.UUID); row != nil {
					t.Fatalf("cluster still there: %s", *row.Status)
				}
				if n := e.keyPairs(t); n != 0 {
					t.Errorf("%d certificates left", n)
				}
			})
		})
	}
}

// TestCreateJobsQuota: concurrent creates on the pool at a limit of 10:
// exactly 10 accepted, each finished by exactly one job.
func TestCreateJobsQuota(t *testing.T) {
	for _, dialect := range clusterDialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newJobEnv(t, dialect, conductor.CreateJobHooks{})
			if err := e.db.CreateQuota(t.Context(), &magnum.Quota{ProjectID: "p1", Resource: magnum.QuotaResourceCluster, HardLimit: 10}); err != nil {
				t.Fatal(err)
			}
			const n = 40
			var ok, deny atomic.Int64
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					_, err := e.c.CreateCluster(context.Background(), clusterCaller("p1"), conductor.ClusterCreate{
						Template: e.tmpl, MasterCount: 1, NodeCount: 1, CreateTimeout: 60,
					})
					var me *magnum.Error
					switch {
					case err == nil:
						ok.Add(1)
					case errors.As(err, &me) && me.Status == 403:
						deny.Add(1)
					default:
						t.Errorf("create: %v", err)
					}
				})
			}
			wg.Wait()
			if err := e.c.StopCreateJobs(context.Background()); err != nil {
				t.Fatal(err)
			}
			if ok.Load() != 10 || deny.Load() != n-10 {
				t.Fatalf("accepted %d, refused %d", ok.Load(), deny.Load())
			}
			rows, err := e.db.ListClusters(t.Context(), db.ClusterFilter{Scope: db.ProjectScope("p1")}, db.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 10 {
				t.Fatalf("%d rows", len(rows))
			}
			for _, cl := range rows {
				if !hasCerts(&cl) || cl.StackID == nil {
					t.Errorf("cluster %s not finished: %+v", cl.UUID, cl)
				}
			}
			if c := e.drv.count("create-start"); c != 10 {
				t.Errorf("%d driver creates", c)
			}
			if n := e.keyPairs(t); n != 40 {
				t.Errorf("%d certificates, want 40", n)
			}
		})
	}
}

// TestCreateJobFailures: a driver error and a certificate store error
// leave the cluster CREATE_FAILED with the reason.
func TestCreateJobFailures(t *testing.T) {
	t.Run("driver", func(t *testing.T) {
		e := newJobEnv(t, db.DialectSQLite, conductor.CreateJobHooks{})
		cl := e.create(t, map[string]string{fake.LabelError: fake.OpCreate, fake.LabelFailReason: "no capacity"})
		<-e.done
		row := e.row(t, cl.UUID)
		if *row.Status != magnum.StatusCreateFailed || row.StatusReason == nil || *row.StatusReason != "no capacity" {
			t.Fatalf("status %s reason %v", *row.Status, row.StatusReason)
		}
	})
	t.Run("certificates", func(t *testing.T) {
		e := newJobEnv(t, db.DialectSQLite, conductor.CreateJobHooks{})
		e.store.fail = true
		cl := e.create(t, nil)
		<-e.done
		row := e.row(t, cl.UUID)
		want := magnum.CertificatesToClusterFailed(cl.UUID).Error()
		if *row.Status != magnum.StatusCreateFailed || row.StatusReason == nil || *row.StatusReason != want {
			t.Fatalf("status %s reason %v, want %q", *row.Status, row.StatusReason, want)
		}
		if n := e.drv.count("create"); n != 0 {
			t.Errorf("driver called without certificates: %v", e.drv.log())
		}
	})
}

// TestResumeOrphanedCreate: a create accepted by a process whose job never
// runs is left alone by another process's status loop until
// CreateOrphanAge, then finished by it (once); the late job of the first
// process then does nothing.
func TestResumeOrphanedCreate(t *testing.T) {
	gate := make(chan struct{})
	e := newJobEnv(t, db.DialectSQLite, conductor.CreateJobHooks{BeforeJob: func(string) { <-gate }})
	cl := e.create(t, nil)

	var offset atomic.Int64
	other := &conductor.Conductor{DB: e.db, Drivers: e.c.Drivers, OpenStack: e.c.OpenStack, Settings: e.c.Settings,
		Log: e.c.Log, Certs: e.store, Now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }}
	r := reconcile.New(reconcile.Options{Conductor: other, Log: e.c.Log, Holder: "other"})
	if err := r.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if row := e.row(t, cl.UUID); *row.Status != magnum.StatusCreateInProgress || hasCerts(row) || e.drv.count("create") != 0 {
		t.Fatalf("a young pending create was touched: %+v %v", row, e.drv.log())
	}
	offset.Store(int64(conductor.CreateOrphanAge + time.Minute))
	if err := r.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	row := e.row(t, cl.UUID)
	if !hasCerts(row) || row.StackID == nil || e.drv.count("create-start") != 1 {
		t.Fatalf("orphan not resumed: %+v %v", row, e.drv.log())
	}
	kps, err := e.db.ListX509KeyPairs(t.Context(), db.AllProjects, db.ListOptions{})
	if err != nil || len(kps) != 4 || kps[0].ProjectID != "p1" {
		t.Fatalf("certificates %+v, %v", kps, err)
	}
	if err := r.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if row := e.row(t, cl.UUID); *row.Status != magnum.StatusCreateComplete {
		t.Fatalf("after the next tick: %s", *row.Status)
	}
	close(gate)
	<-e.done
	if n := e.drv.count("create-start"); n != 1 || e.keyPairs(t) != 4 {
		t.Errorf("the late job acted: %v, %d certificates", e.drv.log(), e.keyPairs(t))
	}
}

// TestStopCreateJobsDrains: creates queued before the stop are finished;
// creates after it run within the call.
func TestStopCreateJobsDrains(t *testing.T) {
	e := newJobEnv(t, db.DialectSQLite, conductor.CreateJobHooks{})
	var uuids []string
	for range 5 {
		uuids = append(uuids, e.create(t, nil).UUID)
	}
	if err := e.c.StopCreateJobs(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, u := range uuids {
		if row := e.row(t, u); !hasCerts(row) || row.StackID == nil {
			t.Errorf("cluster %s not finished at stop", u)
		}
	}
	cl := e.create(t, nil)
	if row := e.row(t, cl.UUID); !hasCerts(row) || row.StackID == nil {
		t.Errorf("create after stop did not run its job: %+v", row)
	}
}

// TestStopCreateJobsDropsOnDeadline: when the stop's context ends first,
// running jobs still finish and queued ones are dropped, their clusters
// left pending for the status loop (and no longer marked busy).
func TestStopCreateJobsDropsOnDeadline(t *testing.T) {
	gate := make(chan struct{})
	taken := make(chan string, 4)
	e := newJobEnv(t, db.DialectSQLite, conductor.CreateJobHooks{BeforeJob: func(uuid string) { taken <- uuid; <-gate }})
	// newJobEnv starts two workers: hold both, then queue a third create.
	running := []string{e.create(t, nil).UUID, e.create(t, nil).UUID}
	<-taken
	<-taken
	queued := e.create(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errc := make(chan error, 1)
	go func() { errc <- e.c.StopCreateJobs(ctx) }()
	for !e.c.CreateJobsDropping() {
		runtime.Gosched()
	}
	close(gate)
	if err := <-errc; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "1 cluster create jobs") {
		t.Fatalf("stop: %v", err)
	}
	for _, u := range running {
		if row := e.row(t, u); !hasCerts(row) || row.StackID == nil {
			t.Errorf("running job of %s did not finish", u)
		}
	}
	row := e.row(t, queued.UUID)
	if hasCerts(row) || row.StackID != nil || *row.Status != magnum.StatusCreateInProgress {
		t.Fatalf("dropped create: %+v", row)
	}
	if e.drv.count("create-start") != 2 {
		t.Errorf("driver calls %v", e.drv.log())
	}
	if got, err := e.c.PollCluster(t.Context(), queued.UUID); err != nil || got == nil {
		t.Errorf("dropped create still marked busy: %v %v", got, err)
	}
}
