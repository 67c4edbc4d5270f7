package conductor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// The create job is what a cluster create does after its rows are written:
// generate the cluster's CAs and client certificate, save their references,
// then call the driver's CreateCluster and save its update. Once
// StartCreateJobs has run, the job runs on a bounded pool of workers after
// POST /v1/clusters has answered, as Magnum's conductor does after the
// API's RPC cast; before (and after StopCreateJobs), it runs within the
// request.
//
// A job does its work only if, when it starts, the cluster is still
// CREATE_IN_PROGRESS without certificates; the save of the certificate
// references is a compare-and-swap on that state, so a delete arriving
// meanwhile, or a second job for the same cluster (a picked-up create, see
// ResumeCreate), leaves no certificates behind and calls no driver. The
// driver calls of a job and of the delete path hold a per-cluster mutex,
// and the job re-reads the status under it: the driver's CreateCluster
// never follows its DeleteCluster, and a delete never waits for the
// certificates of the cluster it removes.

// clCreateOrphanAge is how long a cluster that still waits for its create
// job (CREATE_IN_PROGRESS, no certificates, no driver id) is left to the
// process that accepted it. Past it, the status loop presumes that process
// gone and runs the job itself (ResumeCreate).
const clCreateOrphanAge = 2 * clDriverTimeout

// clCreateQueuePerWorker sizes the queue of the pool; a create that finds
// it full runs its job within the request (back-pressure). At about a
// quarter of a second of CPU per job (four RSA-2048 keys), a full queue
// drains in about a minute, well within clCreateOrphanAge.
const clCreateQueuePerWorker = 256

// createJobs is the Conductor's create-job pool and per-cluster mutexes.
// The zero value runs jobs inline.
type createJobs struct {
	mu      sync.RWMutex
	queue   chan createJob
	started bool
	closed  bool
	// drop makes the workers discard what is still queued (StopCreateJobs
	// ran out of time); dropped counts those jobs.
	drop    atomic.Bool
	dropped atomic.Int64
	wg      sync.WaitGroup

	lockMu sync.Mutex
	locks  map[string]*clMutex
	// generating cancels the certificate generation of a running job, by
	// cluster (guarded by lockMu).
	generating map[string]context.CancelFunc

	hooks createJobHooks
}

// createJobHooks let tests observe and hold the job at fixed points.
type createJobHooks struct {
	// beforeJob runs when a worker takes the job, before the per-cluster
	// mutex.
	beforeJob func(uuid string)
	// beforeCertificates runs when the job is about to generate the
	// certificates (their generation can already be stopped).
	beforeCertificates func(uuid string)
	// beforeSave runs after the certificates are generated and stored,
	// before their references are saved.
	beforeSave func(uuid string)
	// afterJob runs when the job has ended (done or skipped).
	afterJob func(uuid string)
	// lockWaits runs when clLockCluster finds the cluster's mutex held or
	// awaited, before it waits.
	lockWaits func(uuid string)
}

// clMutex is one cluster's mutex and the number of its holders and
// waiters.
type clMutex struct {
	mu   sync.Mutex
	refs int
}

// createJob is one queued create.
type createJob struct {
	// ctx carries the request's values (request id, caller), not its
	// cancellation.
	ctx  context.Context
	rc   *magnum.RequestContext
	uuid string
}

// StartCreateJobs starts the create-job pool: workers goroutines and a
// bounded queue. 0 means one less than GOMAXPROCS (at least one): key
// generation is CPU-bound, and a pool that took every core would starve
// the API of the one it needs to answer while creates are being worked
// on. From then on CreateCluster answers once the rows are written and the
// certificates and the driver call follow in the background. Calling it
// again does nothing.
func (c *Conductor) StartCreateJobs(workers int) {
	j := &c.jobs
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.started {
		return
	}
	if workers <= 0 {
		workers = max(1, runtime.GOMAXPROCS(0)-1)
	}
	j.started = true
	j.queue = make(chan createJob, workers*clCreateQueuePerWorker)
	for range workers {
		j.wg.Go(func() { c.createWorker(j.queue) })
	}
}

// StopCreateJobs stops taking new jobs (later creates run theirs within
// the request), lets the workers finish the queue and waits for them. When
// ctx ends first, the jobs still queued are dropped: their clusters stay
// CREATE_IN_PROGRESS without certificates and the status loop picks them
// up after clCreateOrphanAge (ResumeCreate). Running jobs are always
// waited for; each is bounded by the driver timeout. It returns an error
// wrapping ctx's when jobs were dropped.
func (c *Conductor) StopCreateJobs(ctx context.Context) error {
	j := &c.jobs
	j.mu.Lock()
	if !j.started || j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	close(j.queue)
	j.mu.Unlock()
	done := make(chan struct{})
	go func() {
		j.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	j.drop.Store(true)
	<-done
	if n := j.dropped.Load(); n > 0 {
		return fmt.Errorf("%d cluster create jobs left to the status loop: %w", n, ctx.Err())
	}
	return nil
}

// createWorker runs jobs until the queue is closed and empty.
func (c *Conductor) createWorker(queue <-chan createJob) {
	for job := range queue {
		if c.jobs.drop.Load() {
			c.log().WarnContext(job.ctx, "create job dropped at shutdown", "cluster_uuid", job.uuid)
			c.jobs.dropped.Add(1)
			c.busy.Delete(job.uuid)
			continue
		}
		if h := c.jobs.hooks.beforeJob; h != nil {
			h(job.uuid)
		}
		c.runCreateJob(job.ctx, job.rc, job.uuid)
	}
}

// clStartCreate runs or queues the create job of a cluster just inserted
// and already marked busy; the job clears the mark when it ends.
func (c *Conductor) clStartCreate(ctx context.Context, rc *magnum.RequestContext, uuid string) {
	job := createJob{ctx: context.WithoutCancel(ctx), rc: rc, uuid: uuid}
	j := &c.jobs
	j.mu.RLock()
	queued := false
	if j.started && !j.closed {
		select {
		case j.queue <- job:
			queued = true
		default:
		}
	}
	j.mu.RUnlock()
	if !queued {
		c.runCreateJob(job.ctx, rc, uuid)
	}
}

// runCreateJob is the create job of cluster uuid; it clears the busy mark
// when it ends. Failures are recorded on the cluster (CREATE_FAILED with the
// reason) and logged, never returned.
func (c *Conductor) runCreateJob(ctx context.Context, rc *magnum.RequestContext, uuid string) {
	defer func() {
		if h := c.jobs.hooks.afterJob; h != nil {
			h(uuid)
		}
	}()
	defer c.busy.Delete(uuid)
	ctx, cancel := context.WithTimeout(ctx, clDriverTimeout)
	defer cancel()
	cl, err := c.DB.GetClusterByUUID(ctx, uuid, db.AllProjects)
	if errors.Is(err, db.ErrNotFound) {
		return
	}
	if err != nil {
		c.log().ErrorContext(ctx, "read cluster for create", "cluster_uuid", uuid, "error", err)
		return
	}
	if !clCreatePending(cl) {
		c.log().InfoContext(ctx, "create job skipped: cluster changed", "cluster_uuid", uuid, "status", string(clStatus(cl.Status)))
		return
	}
	// Magnum's conductor generates the cluster's CAs and client
	// certificate before it calls the driver (cluster_conductor.py
	// cluster_create).
	claimed, err := c.clClaimWithCertificates(ctx, cl)
	if err != nil {
		c.log().ErrorContext(ctx, "generate cluster certificates", "cluster_uuid", uuid, "error", err)
		c.clMarkCreateFailed(ctx, uuid, err.Error())
		return
	}
	if !claimed {
		c.log().InfoContext(ctx, "create job skipped: cluster changed", "cluster_uuid", uuid)
		return
	}
	// Only the driver call is serialised with the delete path: a delete
	// never waits for the certificates of a cluster it removes, and
	// clCallCreate re-reads the status under the mutex.
	unlock := c.clLockCluster(uuid)
	defer unlock()
	c.clCallCreate(ctx, rc, uuid)
}

// clCreatePending reports whether a cluster still waits for its create
// job: CREATE_IN_PROGRESS, no certificate reference and no driver id.
func clCreatePending(cl *magnum.Cluster) bool {
	return clStatus(cl.Status) == magnum.StatusCreateInProgress && clStr(cl.CACertRef) == "" &&
		clStr(cl.MagnumCertRef) == "" && clStr(cl.EtcdCACertRef) == "" && clStr(cl.FrontProxyCACertRef) == "" &&
		clStr(cl.StackID) == ""
}

// clClaimWithCertificates generates and stores the cluster's certificates,
// then saves their references if the cluster still waits for its create
// job (true). Otherwise (deleted, changed, or claimed by another job) the
// certificates just stored are removed again and it returns false.
func (c *Conductor) clClaimWithCertificates(ctx context.Context, cl *magnum.Cluster) (bool, error) {
	gen := *cl
	genCtx, cancel := context.WithCancel(ctx)
	c.jobs.setGenerating(cl.UUID, cancel)
	if h := c.jobs.hooks.beforeCertificates; h != nil {
		h(cl.UUID)
	}
	err := c.GenerateClusterCertificates(genCtx, &gen)
	c.jobs.setGenerating(cl.UUID, nil)
	cancel()
	if err != nil && ctx.Err() == nil && errors.Is(err, context.Canceled) {
		// A delete stopped the generation: nothing was stored.
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if h := c.jobs.hooks.beforeSave; h != nil {
		h(cl.UUID)
	}
	claimed := false
	err = c.DB.InTx(ctx, func(tx *db.Tx) error {
		claimed = false
		row, err := tx.ForUpdate().GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
		if errors.Is(err, db.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if !clCreatePending(row) {
			return nil
		}
		row.CACertRef, row.MagnumCertRef = gen.CACertRef, gen.MagnumCertRef
		row.EtcdCACertRef, row.FrontProxyCACertRef = gen.EtcdCACertRef, gen.FrontProxyCACertRef
		if err := tx.UpdateCluster(ctx, row, "ca_cert_ref", "magnum_cert_ref", "etcd_ca_cert_ref", "front_proxy_ca_cert_ref"); err != nil {
			return err
		}
		claimed = true
		return nil
	})
	if err != nil || !claimed {
		if derr := c.DeleteClusterCertificates(ctx, &gen); derr != nil {
			c.log().WarnContext(ctx, "remove unused cluster certificates", "cluster_uuid", cl.UUID, "error", derr)
		}
	}
	if err != nil {
		return false, fmt.Errorf("save certificate references of cluster %s: %w", cl.UUID, err)
	}
	return claimed, nil
}

// clCallCreate calls the driver's CreateCluster on the current rows and
// saves its update, unless the cluster left CREATE_IN_PROGRESS meanwhile.
// rc nil means the service's credentials (a picked-up create).
func (c *Conductor) clCallCreate(ctx context.Context, rc *magnum.RequestContext, uuid string) {
	st, err := c.clState(ctx, &c.DB.Queries, uuid)
	if err != nil {
		c.log().ErrorContext(ctx, "read cluster state", "cluster_uuid", uuid, "error", err)
		return
	}
	if clStatus(st.Cluster.Status) != magnum.StatusCreateInProgress {
		c.log().InfoContext(ctx, "create job skipped: cluster changed", "cluster_uuid", uuid, "status", string(clStatus(st.Cluster.Status)))
		return
	}
	cred := driver.AdminCredentials()
	if rc != nil {
		cred = driver.CredentialsFrom(rc)
	}
	timeout := time.Duration(clInt(st.Cluster.CreateTimeout)) * time.Minute
	drv, err := c.clDriverOf(&st.Template)
	var upd driver.Update
	if err == nil {
		upd, err = drv.CreateCluster(ctx, cred, st, timeout)
	}
	if err != nil {
		c.log().ErrorContext(ctx, "driver operation failed", "cluster_uuid", uuid, "status", string(magnum.StatusCreateFailed), "error", err)
		c.clMarkCreateFailed(ctx, uuid, err.Error())
		return
	}
	// A delete (or a poll of another process) may have moved the cluster
	// on meanwhile: then only the driver's id is kept, so that the delete
	// reaches what the driver created.
	before := clStatus(st.Cluster.Status)
	if err := c.clSave(ctx, upd, &before); err != nil {
		if errors.Is(err, errStaleUpdate) {
			c.clSaveStackID(ctx, upd)
			return
		}
		c.log().ErrorContext(ctx, "save driver update", "cluster_uuid", uuid, "error", err)
	}
}

// clMarkCreateFailed sets the cluster CREATE_FAILED with reason, as
// clMarkFailed does, unless it left CREATE_IN_PROGRESS meanwhile (a delete
// must stay a delete).
func (c *Conductor) clMarkCreateFailed(ctx context.Context, uuid, reason string) {
	cl, err := c.DB.GetClusterByUUID(ctx, uuid, db.AllProjects)
	if err != nil || clStatus(cl.Status) != magnum.StatusCreateInProgress {
		return
	}
	c.clMarkFailed(ctx, uuid, magnum.StatusCreateFailed, reason)
}

// setGenerating records (cancel non-nil) or forgets the cancellation of
// the certificate generation of cluster uuid.
func (j *createJobs) setGenerating(uuid string, cancel context.CancelFunc) {
	j.lockMu.Lock()
	defer j.lockMu.Unlock()
	if cancel == nil {
		delete(j.generating, uuid)
		return
	}
	if j.generating == nil {
		j.generating = map[string]context.CancelFunc{}
	}
	j.generating[uuid] = cancel
}

// clStopCertificates stops the certificate generation of this process's
// create job for cluster uuid, if one is running: the cluster is being
// deleted, so its keys would be thrown away.
func (c *Conductor) clStopCertificates(uuid string) {
	j := &c.jobs
	j.lockMu.Lock()
	cancel := j.generating[uuid]
	j.lockMu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// clLockCluster takes the in-process mutex of a cluster; the returned
// function releases it.
func (c *Conductor) clLockCluster(uuid string) (unlock func()) {
	j := &c.jobs
	j.lockMu.Lock()
	if j.locks == nil {
		j.locks = map[string]*clMutex{}
	}
	m := j.locks[uuid]
	if m == nil {
		m = &clMutex{}
		j.locks[uuid] = m
	}
	m.refs++
	contended := m.refs > 1
	j.lockMu.Unlock()
	if h := j.hooks.lockWaits; h != nil && contended {
		h(uuid)
	}
	m.mu.Lock()
	return func() {
		m.mu.Unlock()
		j.lockMu.Lock()
		m.refs--
		if m.refs == 0 {
			delete(j.locks, uuid)
		}
		j.lockMu.Unlock()
	}
}

// ResumeCreate is the status loop's part in cluster creation: given a
// cluster row it listed, it reports whether the loop must leave the
// cluster alone this time (true) rather than poll it. That is so while a
// create job of this process is queued or running, and for a cluster that
// still waits for its create job (see clCreatePending): polling it would
// let a driver report on what was never created. Once such a cluster is
// older than clCreateOrphanAge, the process that accepted it is presumed
// gone and the job runs here, now, with the service's credentials and the
// cluster's project and user as the owners of the certificates; the job
// re-reads the row, so a row read a little earlier is fine.
func (c *Conductor) ResumeCreate(ctx context.Context, cl *magnum.Cluster) bool {
	if _, busy := c.busy.Load(cl.UUID); busy {
		return true
	}
	if !clCreatePending(cl) {
		return false
	}
	if c.now().Sub(cl.CreatedAt) < clCreateOrphanAge {
		return true
	}
	if _, already := c.busy.LoadOrStore(cl.UUID, struct{}{}); already {
		return true
	}
	c.log().WarnContext(ctx, "resuming a create whose job never ran", "cluster_uuid", cl.UUID)
	owner := &magnum.RequestContext{ProjectID: cl.ProjectID, UserID: cl.UserID}
	c.runCreateJob(magnum.WithRequestContext(context.WithoutCancel(ctx), owner), nil, cl.UUID)
	return true
}

// onLowPriorityThread runs fn on a new OS thread whose scheduling priority
// is lower than the rest of the process's, and waits for it: generating
// RSA keys (about a quarter of a second of CPU per cluster) then uses the
// cores that requests leave idle instead of taking turns with them. The
// thread ends with fn. Where the priority cannot be lowered, fn runs at
// the normal one.
func (c *Conductor) onLowPriorityThread(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := lowerThreadPriority(); err != nil {
			c.log().Debug("key generation keeps the normal thread priority", "error", err)
		}
		fn()
	}()
	<-done
}
