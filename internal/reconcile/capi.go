package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/workqueue"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Names the watch reconciler shares with the Cluster API driver
// (driver-capi.md § 1, § 3.2, § 10).
const (
	// LeaseName is the Lease that elects the active reconciler.
	LeaseName = "openkeel-magnum-reconciler"
	// labelClusterUUID carries the Magnum cluster UUID on the CAPI Cluster
	// (the capi driver's LabelClusterUUID).
	labelClusterUUID = "cluster-uuid"
	// controllerName names the controller in logs and metrics.
	controllerName = "magnum-capi"
)

// gvkOpenStackCluster is CAPO's OpenStackCluster, watched unstructured.
var gvkOpenStackCluster = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackCluster"}

// CAPIOptions configure the watch-based reconciler of Cluster API clusters.
type CAPIOptions struct {
	// Conductor performs the state changes. Required.
	Conductor *conductor.Conductor
	// Config reaches the management cluster. Required.
	Config *rest.Config
	// Namespace holds the CAPI objects ("magnum-system" when empty).
	Namespace string
	// LeaseNamespace holds the Lease LeaseName (Namespace when empty).
	LeaseNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election
	// (15 s, 10 s and 2 s when zero, controller-runtime's defaults). A
	// stopped leader releases the Lease at once; a crashed one loses it
	// after LeaseDuration.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// Holder identifies this instance in the Lease (default: a random id).
	Holder string
	// ResyncPeriod is the interval of the safety-net pass over the clusters
	// in progress in the database, which also turns passed deadlines into
	// *_FAILED and covers clusters of other drivers (default 10 s).
	ResyncPeriod time.Duration
	// BusyRetry is the delay before a cluster with a driver operation in
	// flight is polled again (default 1 s).
	BusyRetry time.Duration
	// PollTimeout bounds the work on one cluster (default 1 min).
	PollTimeout time.Duration
	// Workers is the number of clusters reconciled at once (default 2).
	Workers int
	// Log receives state changes and errors (default slog.Default()).
	Log *slog.Logger
	// OnDeleted, when set, runs for a cluster that reached DELETE_COMPLETE
	// before its rows are removed: the place to delete its certificates.
	// An error keeps the rows for a retry.
	OnDeleted func(ctx context.Context, cl magnum.Cluster) error
}

// CAPI is the watch-based reconciler of driver-capi.md § 10: it watches
// the Cluster API objects of the namespace (Cluster, KubeadmControlPlane,
// MachineDeployment, Machine and CAPO's OpenStackCluster), maps each event
// to its Magnum cluster and polls that cluster through the conductor, so
// statuses change within the latency of a watch event rather than of a
// polling interval. A periodic pass over the clusters in progress in the
// database is the safety net, and enforces the deadlines. Only the holder
// of the Lease LeaseName reconciles.
type CAPI struct {
	opts  CAPIOptions
	mgr   manager.Manager
	queue chan event.TypedGenericEvent[string]

	// stacks maps a CAPI cluster name (stack_id) to the Magnum cluster
	// UUID, learnt from the Clusters' cluster-uuid label, so that events of
	// objects outliving their Cluster still map.
	stacks sync.Map

	polls  atomic.Int64
	leader atomic.Bool
}

// NewCAPI builds the reconciler and its controller-runtime manager; it
// starts nothing. Configuration errors are returned.
func NewCAPI(o CAPIOptions) (*CAPI, error) {
	if o.Conductor == nil {
		return nil, errors.New("reconcile: CAPIOptions.Conductor is required")
	}
	if o.Config == nil {
		return nil, errors.New("reconcile: CAPIOptions.Config is required")
	}
	if o.Namespace == "" {
		o.Namespace = "magnum-system"
	}
	if o.LeaseNamespace == "" {
		o.LeaseNamespace = o.Namespace
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.RenewDeadline <= 0 {
		o.RenewDeadline = min(10*time.Second, o.LeaseDuration*2/3)
	}
	if o.RetryPeriod <= 0 {
		o.RetryPeriod = min(2*time.Second, o.RenewDeadline/4)
	}
	if o.Holder == "" {
		o.Holder = "reconciler-" + conductor.NewUUID()
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = 10 * time.Second
	}
	if o.BusyRetry <= 0 {
		o.BusyRetry = time.Second
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = time.Minute
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, controlplanev1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("reconcile: build scheme: %w", err)
		}
	}
	// The Lease is built here so that the holder identity is Holder.
	cs, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return nil, fmt.Errorf("reconcile: kubernetes client: %w", err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, o.LeaseNamespace, LeaseName,
		cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: o.Holder})
	if err != nil {
		return nil, fmt.Errorf("reconcile: lease lock: %w", err)
	}
	skip := true
	mgr, err := manager.New(watchConfig(o.Config), manager.Options{
		Scheme:                              scheme,
		Logger:                              logr.FromSlogHandler(o.Log.Handler()),
		Cache:                               cache.Options{DefaultNamespaces: map[string]cache.Config{o.Namespace: {}}},
		Metrics:                             metricsserver.Options{BindAddress: "0"},
		LeaderElection:                      true,
		LeaderElectionID:                    LeaseName,
		LeaderElectionNamespace:             o.LeaseNamespace,
		LeaderElectionResourceLockInterface: lock,
		LeaderElectionReleaseOnCancel:       true,
		LeaseDuration:                       &o.LeaseDuration,
		RenewDeadline:                       &o.RenewDeadline,
		RetryPeriod:                         &o.RetryPeriod,
		GracefulShutdownTimeout:             &o.PollTimeout,
		// Several instances may live in one process (tests, all-in-one).
		Controller: config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile: create manager: %w", err)
	}
	r := &CAPI{opts: o, mgr: mgr, queue: make(chan event.TypedGenericEvent[string], 1024)}
	if err := r.setup(); err != nil {
		return nil, err
	}
	return r, nil
}

// setup registers the controller, its watches and the resync pass.
func (r *CAPI) setup() error {
	toCluster := handler.EnqueueRequestsFromMapFunc(r.mapObject)
	b := builder.ControllerManagedBy(r.mgr).
		Named(controllerName).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.Workers}).
		Watches(&clusterv1.Cluster{}, toCluster).
		Watches(&controlplanev1.KubeadmControlPlane{}, toCluster).
		Watches(&clusterv1.MachineDeployment{}, toCluster).
		Watches(&clusterv1.Machine{}, toCluster).
		WatchesRawSource(source.Channel(r.queue, handler.TypedFuncs[string, ctrlreconcile.Request]{
			GenericFunc: func(_ context.Context, e event.TypedGenericEvent[string], q workqueue.TypedRateLimitingInterface[ctrlreconcile.Request]) {
				q.Add(ctrlreconcile.Request{NamespacedName: types.NamespacedName{Name: e.Object}})
			},
		}))
	// CAPO's kinds are optional: a management cluster without CAPO still
	// gets the CAPI watches.
	if _, err := r.mgr.GetRESTMapper().RESTMapping(gvkOpenStackCluster.GroupKind(), gvkOpenStackCluster.Version); err == nil {
		osc := &unstructured.Unstructured{}
		osc.SetGroupVersionKind(gvkOpenStackCluster)
		b = b.Watches(osc, toCluster)
	} else {
		r.opts.Log.Warn("not watching OpenStackClusters", "error", err)
	}
	if err := b.Complete(ctrlreconcile.Func(r.reconcile)); err != nil {
		return fmt.Errorf("reconcile: build controller: %w", err)
	}
	if err := r.mgr.Add(manager.RunnableFunc(r.resync)); err != nil {
		return fmt.Errorf("reconcile: add resync: %w", err)
	}
	return nil
}

// Start runs the reconciler until ctx is cancelled. It campaigns for the
// Lease; while it holds it, it reconciles. On cancellation it finishes the
// clusters in hand, releases the Lease and returns nil. Losing the Lease
// otherwise is an error: the caller should exit (or build a new CAPI).
func (r *CAPI) Start(ctx context.Context) error {
	go func() {
		select {
		case <-r.mgr.Elected():
			r.leader.Store(true)
			r.opts.Log.Info("reconciler elected", "holder", r.opts.Holder, "lease", r.opts.LeaseNamespace+"/"+LeaseName)
		case <-ctx.Done():
		}
	}()
	err := r.mgr.Start(ctx)
	r.leader.Store(false)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	return nil
}

// Leader reports whether this instance holds the Lease.
func (r *CAPI) Leader() bool { return r.leader.Load() }

// Polls returns how many cluster polls this instance has made (metrics,
// tests).
func (r *CAPI) Polls() int64 { return r.polls.Load() }

// Enqueue asks for a cluster to be reconciled soon, for example after an
// API request changed it. It never blocks; before the instance is elected,
// or when the queue is full, the request is dropped and the resync pass
// covers it.
func (r *CAPI) Enqueue(uuid string) {
	select {
	case r.queue <- event.TypedGenericEvent[string]{Object: uuid}:
	default:
	}
}

// mapObject maps a watched object to its Magnum cluster: the Cluster's
// cluster-uuid label, else (for the other kinds) the Cluster named by the
// cluster.x-k8s.io/cluster-name label.
func (r *CAPI) mapObject(ctx context.Context, obj client.Object) []ctrlreconcile.Request {
	lbls := obj.GetLabels()
	if _, isCluster := obj.(*clusterv1.Cluster); isCluster {
		uuid := lbls[labelClusterUUID]
		if uuid == "" {
			return nil // not a Magnum cluster
		}
		r.stacks.Store(obj.GetName(), uuid)
		return request(uuid)
	}
	stack := lbls[clusterv1.ClusterNameLabel]
	if stack == "" {
		return nil
	}
	if uuid, ok := r.stacks.Load(stack); ok {
		return request(uuid.(string))
	}
	var c clusterv1.Cluster
	if err := r.mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: stack}, &c); err == nil {
		if uuid := c.Labels[labelClusterUUID]; uuid != "" {
			r.stacks.Store(stack, uuid)
			return request(uuid)
		}
	}
	// Unknown yet: the Cluster's own event enqueues the cluster.
	return nil
}

func request(uuid string) []ctrlreconcile.Request {
	return []ctrlreconcile.Request{{NamespacedName: types.NamespacedName{Name: uuid}}}
}

// reconcile polls one Magnum cluster through the conductor and finishes
// its deletion once it reads DELETE_COMPLETE.
func (r *CAPI) reconcile(ctx context.Context, req ctrlreconcile.Request) (ctrlreconcile.Result, error) {
	uuid := req.Name
	ctx, cancel := context.WithTimeout(ctx, r.opts.PollTimeout)
	defer cancel()
	c := r.opts.Conductor
	if wait, err := r.createInFlight(ctx, uuid); err != nil || wait > 0 {
		return ctrlreconcile.Result{RequeueAfter: wait}, err
	}
	r.polls.Add(1)
	cl, err := c.PollCluster(ctx, uuid)
	if err != nil {
		var me *magnum.Error
		if errors.As(err, &me) && me.Status == 404 {
			r.forget(uuid)
			return ctrlreconcile.Result{}, nil // not (or no longer) a cluster
		}
		r.opts.Log.Error("reconcile cluster", "cluster_uuid", uuid, "error", err)
		return ctrlreconcile.Result{}, err
	}
	if cl == nil {
		// A driver operation of this process is in flight.
		return ctrlreconcile.Result{RequeueAfter: r.opts.BusyRetry}, nil
	}
	if cl.Status == nil || *cl.Status != magnum.StatusDeleteComplete {
		return ctrlreconcile.Result{}, nil
	}
	if err := c.FinishDelete(ctx, *cl, r.opts.OnDeleted); err != nil {
		return ctrlreconcile.Result{}, fmt.Errorf("finish the deletion of cluster %s: %w", uuid, err)
	}
	r.forget(uuid)
	return ctrlreconcile.Result{}, nil
}

// createInFlight returns how long to wait before polling a cluster whose
// create has not returned from the driver yet, in this or another process
// (CREATE_IN_PROGRESS without a stack_id). The objects the driver applies
// raise watch events before the API process saves the stack_id; a poll of
// the row read then would save it back without the stack_id. After
// 2 × PollTimeout the create is presumed dead and left to the resync pass.
// A create whose job has not stored the certificates yet waits for it, or
// is finished here once orphaned (conductor.ResumeCreate).
func (r *CAPI) createInFlight(ctx context.Context, uuid string) (time.Duration, error) {
	cl, err := r.opts.Conductor.GetClusterByUUIDOnly(ctx, uuid, conductor.ScopeFor(nil, true))
	if err != nil {
		var me *magnum.Error
		if errors.As(err, &me) && me.Status == 404 {
			return 0, nil // PollCluster reports it
		}
		return 0, err
	}
	if r.opts.Conductor.ResumeCreate(ctx, cl) {
		// Its create job has not run yet (or just ran, as an orphan).
		return r.opts.BusyRetry, nil
	}
	if cl.Status == nil || *cl.Status != magnum.StatusCreateInProgress || (cl.StackID != nil && *cl.StackID != "") {
		return 0, nil
	}
	if time.Since(cl.CreatedAt) > 2*r.opts.PollTimeout {
		return 0, nil
	}
	return r.opts.BusyRetry, nil
}

// forget drops the stack index entries of a cluster that is gone.
func (r *CAPI) forget(uuid string) {
	r.stacks.Range(func(k, v any) bool {
		if v.(string) == uuid {
			r.stacks.Delete(k)
		}
		return true
	})
}

// resync enqueues, every ResyncPeriod while elected, the clusters that the
// database lists as in progress. It is the database input of § 10 and the
// clock that turns deadlines into *_FAILED.
func (r *CAPI) resync(ctx context.Context) error {
	t := time.NewTicker(r.opts.ResyncPeriod)
	defer t.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, r.opts.PollTimeout)
		clusters, err := r.opts.Conductor.ClustersInProgress(lctx)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			r.opts.Log.Error("list clusters in progress", "error", err)
		case err == nil:
			for _, cl := range clusters {
				select {
				case r.queue <- event.TypedGenericEvent[string]{Object: cl.UUID}:
				case <-ctx.Done():
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// watchConfig returns the connection of the manager (its informers and
// discovery): cfg without its client-wide Timeout, which client-go applies
// to watches too (it sends timeout=Timeout and the HTTP client cuts the
// stream), so that every watch would be reopened each Timeout whether
// anything changed or not. Requests other than watches keep the timeout,
// per request; a watch lasts until the API server ends it (client-go asks
// for 5 to 10 minutes), and a dead connection is found by client-go's
// HTTP/2 health checks. The Lease's client keeps cfg as it is.
func watchConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	timeout := c.Timeout
	if timeout <= 0 {
		return c
	}
	c.Timeout = 0
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &requestTimeout{rt: rt, timeout: timeout} })
	return c
}

// requestTimeout bounds every request but watches by timeout, from the
// request until its body is closed.
type requestTimeout struct {
	rt      http.RoundTripper
	timeout time.Duration
}

func (t *requestTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
		return t.rt.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases a request's timeout when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// String describes the instance for logs.
func (r *CAPI) String() string {
	return "CAPI reconciler " + r.opts.Holder + " (namespace " + r.opts.Namespace + ", lease " +
		r.opts.LeaseNamespace + "/" + LeaseName + ")"
}
