package envtest

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/capi"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/reconcile"
	"github.com/openkeel/openkeel-magnum/internal/testutil/kubetest"
)

// Environment variables of the idle measurement.
const (
	// envIdleClusters overrides the number of idle clusters (200).
	envIdleClusters = "OKM_IDLE_CLUSTERS"
	// envIdleWindow overrides the counting window (60s), as a Go duration.
	envIdleWindow = "OKM_IDLE_WINDOW"
)

// Bounds of the idle measurement. They only keep a broken run short; the
// assertions are on request counts.
const (
	idleCreateWorkers = 4
	idleConverge      = 240 * time.Second // all clusters CREATE_COMPLETE
	idleQuiet         = 3 * time.Second   // no request for this long: settled
	idleSettle        = 60 * time.Second
	// idleRetryPeriod is the reconciler's default leader-election retry
	// period ([capi]/retry_period), the interval of the Lease renewals.
	idleRetryPeriod = 2 * time.Second
)

// TestIdleClustersMakeNoRequests brings OKM_IDLE_CLUSTERS (200) Cluster
// API clusters to CREATE_COMPLETE through the conductor, the capi driver
// and the watch reconciler (with app wiring's defaults), stops the
// simulated controllers, and counts every request the service sends over
// OKM_IDLE_WINDOW (60 s): none to OpenStack, none to Kubernetes except the
// renewals of the leader-election Lease (bounded by the window and the
// retry period, whatever the number of clusters), and no watch reopened.
func TestIdleClustersMakeNoRequests(t *testing.T) {
	env := kubetest.Start(t)
	n, window := idleClusters(t), idleWindow(t)
	w := newIdleWorld(t, env, n)
	w.checkCounted(t)
	res := w.measure(t, window)
	t.Logf("idle clusters: N=%d, window=%v, reconciler defaults (resync %v, lease retry %v)\n%s",
		n, window, 10*time.Second, idleRetryPeriod, res.table())

	if res.polls != 0 {
		t.Errorf("the reconciler polled %d clusters during the window, want 0", res.polls)
	}
	if res.other != 0 {
		t.Errorf("%d Kubernetes requests other than watches and the Lease during the window, want 0", res.other)
	}
	if res.watches != 0 {
		t.Errorf("%d watches opened during the window, want 0 (the open ones stay open)", res.watches)
	}
	// A watch the API server ended at the timeoutSeconds client-go asked
	// for (5 to 10 minutes) is reopened: at most once per watched kind per
	// 5 minutes, whatever the number of clusters.
	if limit := res.watched * (int(window/(5*time.Minute)) + 1); res.renewed > limit {
		t.Errorf("%d watches renewed during the window, want at most %d (%d kinds watched)", res.renewed, limit, res.watched)
	}
	if res.openstack != 0 {
		t.Errorf("%d OpenStack calls during the window, want 0", res.openstack)
	}
	// Leader election renews the Lease about once per retry period: one
	// update (a get and an update when the optimistic update fails). The
	// bound does not depend on N.
	bound := 2*int(window/idleRetryPeriod) + 4
	if res.lease == 0 || res.lease > bound {
		t.Errorf("%d Lease requests during the window, want between 1 and %d (2 × window/retry period + 4)", res.lease, bound)
	}
	if len(res.leaseNames) != 1 || !res.leaseNames[reconcile.LeaseName] {
		t.Errorf("Lease requests named %v, want only %s", slices.Sorted(maps.Keys(res.leaseNames)), reconcile.LeaseName)
	}
}

// BenchmarkIdleClusters reports what TestIdleClustersMakeNoRequests
// measures, per minute of idleness: Kubernetes requests (all but the
// Lease, split into watches and the rest), Lease requests and OpenStack
// calls. Run it with -benchtime=1x; one window is one operation.
func BenchmarkIdleClusters(b *testing.B) {
	env := kubetest.Start(b)
	n, window := idleClusters(b), idleWindow(b)
	w := newIdleWorld(b, env, n)
	var res idleResult
	for b.Loop() {
		res = w.measure(b, window)
	}
	b.Logf("N=%d, window=%v\n%s", n, window, res.table())
	perMin := func(v int) float64 { return float64(v) * float64(time.Minute) / float64(window) }
	b.ReportMetric(float64(n), "clusters")
	b.ReportMetric(perMin(res.other), "k8s-req/min")
	b.ReportMetric(perMin(res.watches), "watches-opened/min")
	b.ReportMetric(perMin(res.renewed), "watches-renewed/min")
	b.ReportMetric(perMin(res.lease), "lease-req/min")
	b.ReportMetric(perMin(res.openstack), "openstack-calls/min")
	b.ReportMetric(perMin(int(res.polls)), "polls/min")
}

func idleClusters(tb testing.TB) int {
	v := os.Getenv(envIdleClusters)
	if v == "" {
		return 200
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q: want a positive integer", envIdleClusters, v)
	}
	return n
}

func idleWindow(tb testing.TB) time.Duration {
	v := os.Getenv(envIdleWindow)
	if v == "" {
		return time.Minute
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		tb.Fatalf("%s=%q: want a positive duration such as 10s", envIdleWindow, v)
	}
	return d
}

// idleWorld is N clusters at rest: a namespace, a database, a conductor
// with the capi driver and a watch reconciler, each sending its requests
// through counters.
type idleWorld struct {
	db   *db.DB
	n    int
	kube *kubeCounter
	os   *osCounter
	rec  *reconcile.CAPI
}

// newIdleWorld creates n clusters and returns once they are all
// CREATE_COMPLETE, the simulator is stopped and the service is quiet.
func newIdleWorld(tb testing.TB, env *kubetest.Env, n int) *idleWorld {
	tb.Helper()
	ns := env.Namespace(tb)
	d, err := db.Open(tb.Context(), db.DialectSQLite, filepath.Join(tb.TempDir(), "m.db"), db.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	if err := d.Upgrade(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	tmpl := idleTemplate()
	if err := d.CreateClusterTemplate(tb.Context(), tmpl); err != nil {
		tb.Fatal(err)
	}
	w := &idleWorld{db: d, n: n, kube: newKubeCounter(), os: &osCounter{counts: map[string]int{}}}

	// The driver's client, as app.KubeClient builds it, on a counted
	// connection.
	scheme, err := capi.NewScheme()
	if err != nil {
		tb.Fatal(err)
	}
	kc, err := client.New(w.kube.wrap(env.Config, "driver"), client.Options{Scheme: scheme})
	if err != nil {
		tb.Fatal(err)
	}
	fos := newFakeOpenStack()
	c := &conductor.Conductor{
		DB: d, OpenStack: countedLookup{openstack.NewStatic(true), w.os},
		Settings: conductor.Settings{MaxClustersPerProject: n + 1, X509: &certs.X509Options{RSAKeySize: 1024, TermOfValidity: 30}},
		Log:      quietLog,
	}
	drv := capi.New(capi.Options{
		Client: kc, Namespace: ns,
		// As app wiring does: the CAs come from the conductor's store.
		CAs: func(ctx context.Context, cl magnum.Cluster) (map[string]certs.KeyPair, error) {
			cc, err := c.ClusterKeyPairs(ctx, &cl)
			if err != nil {
				return nil, err
			}
			return map[string]certs.KeyPair{
				capi.CAKeyKubernetes: *cc.Kubernetes, capi.CAKeyEtcd: *cc.Etcd,
				capi.CAKeyFrontProxy: *cc.FrontProxy, capi.CAKeyAdmin: *cc.Client,
			}, nil
		},
		AppCredentials: countedCreds{fos, w.os}, ServerGroups: countedGroups{fakeGroups{fos}, w.os},
		Cloud:   capi.CloudConfig{AuthURL: "https://keystone.example.com/v3", RegionName: "RegionOne"},
		Timeout: 10 * time.Second,
	})
	c.Drivers = driver.NewRegistry(driver.Selection{}, drv)

	// The watch reconciler with app wiring's defaults (zero options).
	r, err := reconcile.NewCAPI(reconcile.CAPIOptions{
		Conductor: c, Config: w.kube.wrap(env.Config, "reconciler"), Namespace: ns, Log: quietLog,
		OnDeleted: func(ctx context.Context, cl magnum.Cluster) error { return c.DeleteClusterCertificates(ctx, &cl) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	w.rec = r
	rctx, rcancel := context.WithCancel(context.Background())
	rdone := make(chan error, 1)
	go func() { rdone <- r.Start(rctx) }()
	tb.Cleanup(func() {
		rcancel()
		select {
		case err := <-rdone:
			if err != nil {
				tb.Errorf("reconciler: %v", err)
			}
		case <-time.After(30 * time.Second):
			tb.Error("reconciler did not stop")
		}
	})

	sim := NewSim(env.Client, ns)
	sctx, scancel := context.WithCancel(context.Background())
	sdone := make(chan struct{})
	go func() { defer close(sdone); sim.Run(sctx, 50*time.Millisecond) }()
	stopSim := sync.OnceFunc(func() { scancel(); <-sdone })
	tb.Cleanup(stopSim)

	start := time.Now()
	w.createAll(tb, c, tmpl, sim)
	created := time.Since(start)
	w.waitAll(tb, sim, start.Add(idleConverge))
	tb.Logf("%d clusters: created (stack ids saved) in %v, CREATE_COMPLETE in %v", n, created.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond))
	if !r.Leader() {
		tb.Fatal("the reconciler is not the leader")
	}
	stopSim()
	w.settle(tb)
	return w
}

func idleTemplate() *magnum.ClusterTemplate {
	s := func(v string) *string { return &v }
	no, yes := false, true
	return &magnum.ClusterTemplate{UUID: conductor.NewUUID(), Name: "capi", ProjectID: "p1", UserID: "u1",
		ImageID: s("ubuntu-2204-kube-v1.31.1"), FlavorID: s("m1.medium"), MasterFlavorID: s("m1.medium"),
		COE: s("kubernetes"), ServerType: s("vm"), ClusterDistro: s("ubuntu"), Driver: s(capi.Name),
		NetworkDriver: s("calico"), ExternalNetworkID: s("public"), DNSNameserver: s("8.8.8.8"),
		Labels: map[string]string{"kube_tag": "v1.31.1"},
		Public: &no, Hidden: &no, MasterLBEnabled: &yes, FloatingIPEnabled: &no}
}

// createAll creates the clusters on a few workers. The conductor may
// answer before the certificates and the driver call are done (a create
// job), so each worker waits for the stack_id before marking the cluster
// ready in the simulator.
func (w *idleWorld) createAll(tb testing.TB, c *conductor.Conductor, tmpl *magnum.ClusterTemplate, sim *Sim) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), idleConverge)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, idleCreateWorkers)
	var wg sync.WaitGroup
	for range idleCreateWorkers {
		wg.Go(func() {
			for i := range next {
				if err := w.createOne(ctx, c, tmpl, sim, i); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		})
	}
feed:
	for i := range w.n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatalf("%v (simulator errors: %v)", err, sim.Errors())
	}
	if ctx.Err() != nil {
		tb.Fatalf("creating %d clusters: %v", w.n, ctx.Err())
	}
}

func (w *idleWorld) createOne(ctx context.Context, c *conductor.Conductor, tmpl *magnum.ClusterTemplate, sim *Sim, i int) error {
	cl, err := c.CreateCluster(ctx, rc, conductor.ClusterCreate{
		Template: tmpl, Name: fmt.Sprintf("idle-%04d", i), MasterCount: 1, NodeCount: 1, MergeLabels: true, CreateTimeout: 60,
	})
	if err != nil {
		return fmt.Errorf("create cluster %d: %w", i, err)
	}
	for {
		got, err := w.db.GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
		if err != nil {
			return fmt.Errorf("read cluster %d: %w", i, err)
		}
		if got.StackID != nil && *got.StackID != "" {
			sim.MarkReady(*got.StackID)
			return nil
		}
		if got.Status != nil && *got.Status != magnum.StatusCreateInProgress {
			return fmt.Errorf("cluster %d: %s (%s) without a stack_id", i, *got.Status, str(got.StatusReason))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster %d has no stack_id: %w", i, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitAll waits until every cluster is CREATE_COMPLETE.
func (w *idleWorld) waitAll(tb testing.TB, sim *Sim, deadline time.Time) {
	tb.Helper()
	for {
		cls, err := w.db.ListClusters(context.Background(), db.ClusterFilter{Scope: db.AllProjects}, db.ListOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		by := map[string]int{}
		for _, cl := range cls {
			by[str((*string)(cl.Status))]++
		}
		if len(cls) == w.n && by[string(magnum.StatusCreateComplete)] == w.n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: %d clusters by status %v (simulator errors: %v)", idleConverge, len(cls), by, sim.Errors())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// settle waits until neither the reconciler nor the driver has sent a
// request (the Lease's aside) or polled a cluster for idleQuiet.
func (w *idleWorld) settle(tb testing.TB) {
	tb.Helper()
	activity := func() string {
		s := w.kube.snapshot()
		busy := 0
		for k, v := range s.counts {
			if !k.lease() {
				busy += v
			}
		}
		return fmt.Sprintf("%d %d %d", busy, w.rec.Polls(), w.os.total())
	}
	deadline := time.Now().Add(idleSettle)
	last, since := activity(), time.Now()
	for time.Since(since) < idleQuiet {
		if time.Now().After(deadline) {
			tb.Fatalf("the service did not settle within %v after the clusters completed", idleSettle)
		}
		time.Sleep(100 * time.Millisecond)
		if now := activity(); now != last {
			last, since = now, time.Now()
		}
	}
}

// checkCounted fails when the counters saw nothing of the clusters'
// creation: the driver's writes, the reconciler's watches and the
// application credentials must all have gone through them.
func (w *idleWorld) checkCounted(tb testing.TB) {
	tb.Helper()
	by := map[string]int{}
	for k, v := range w.kube.snapshot().counts {
		switch {
		case k.Source == "driver" && (k.Verb == "patch" || k.Verb == "create"):
			by["driver writes"] += v
		case k.Source == "reconciler" && k.Verb == "watch":
			by["reconciler watches"] += v
		case k.Source == "reconciler" && k.lease():
			by["reconciler lease"] += v
		}
	}
	by["application credentials"] = w.os.snapshot()["keystone application_credentials create"]
	for _, what := range []string{"driver writes", "reconciler watches", "reconciler lease"} {
		if by[what] == 0 {
			tb.Errorf("no %s counted while creating the clusters", what)
		}
	}
	if by["application credentials"] != w.n {
		tb.Errorf("%d application credentials created, want %d", by["application credentials"], w.n)
	}
	tb.Logf("counted while creating: %v", by)
}

// idleResult is what one window counted.
type idleResult struct {
	window     time.Duration
	n          int
	diff       map[reqKey]int
	os         map[string]int
	lease      int // Lease requests
	watches    int // watches opened
	renewed    int // watches reopened at the end of their timeoutSeconds
	watched    int // kinds watched (source and resource)
	other      int // every other Kubernetes request
	openstack  int
	polls      int64
	leaseNames map[string]bool
}

// measure counts the requests of one window.
func (w *idleWorld) measure(tb testing.TB, window time.Duration) idleResult {
	tb.Helper()
	k0, os0, p0 := w.kube.snapshot(), w.os.snapshot(), w.rec.Polls()
	watched := map[reqKey]bool{}
	for k := range k0.counts {
		if k.Verb == "watch" || k.Verb == verbWatchRenewed {
			watched[reqKey{Source: k.Source, Resource: k.Resource}] = true
		}
	}
	time.Sleep(window)
	k1, os1, p1 := w.kube.snapshot(), w.os.snapshot(), w.rec.Polls()
	if !w.rec.Leader() {
		tb.Error("the reconciler lost the Lease during the window")
	}
	res := idleResult{window: window, n: w.n, diff: map[reqKey]int{}, os: map[string]int{}, polls: p1 - p0,
		leaseNames: map[string]bool{}, watched: len(watched)}
	for k, v := range k1.counts {
		d := v - k0.counts[k]
		if d == 0 {
			continue
		}
		res.diff[k] = d
		switch {
		case k.lease():
			res.lease += d
		case k.Verb == "watch":
			res.watches += d
		case k.Verb == verbWatchRenewed:
			res.renewed += d
		default:
			res.other += d
		}
	}
	for name, v := range k1.leaseNames {
		if v != k0.leaseNames[name] {
			res.leaseNames[name] = true
		}
	}
	for k, v := range os1 {
		if d := v - os0[k]; d != 0 {
			res.os[k] = d
			res.openstack += d
		}
	}
	return res
}

// table lays the window's counts out, one row per kind of request.
func (r idleResult) table() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "N\twindow\tsource\tverb\tresource\trequests\n")
	keys := slices.SortedFunc(maps.Keys(r.diff), func(a, b reqKey) int {
		return strings.Compare(a.Source+a.Verb+a.Resource, b.Source+b.Verb+b.Resource)
	})
	for _, k := range keys {
		fmt.Fprintf(tw, "%d\t%v\t%s\t%s\t%s\t%d\n", r.n, r.window, k.Source, k.Verb, k.Resource, r.diff[k])
	}
	for _, k := range slices.Sorted(maps.Keys(r.os)) {
		fmt.Fprintf(tw, "%d\t%v\topenstack\tcall\t%s\t%d\n", r.n, r.window, k, r.os[k])
	}
	fmt.Fprintf(tw, "%d\t%v\ttotal\tlease\tcoordination.k8s.io/leases\t%d\n", r.n, r.window, r.lease)
	fmt.Fprintf(tw, "%d\t%v\ttotal\twatch (opened)\t*\t%d\n", r.n, r.window, r.watches)
	fmt.Fprintf(tw, "%d\t%v\ttotal\twatch (renewed at its timeout)\t%d kinds watched\t%d\n", r.n, r.window, r.watched, r.renewed)
	fmt.Fprintf(tw, "%d\t%v\ttotal\tother Kubernetes\t*\t%d\n", r.n, r.window, r.other)
	fmt.Fprintf(tw, "%d\t%v\ttotal\tOpenStack\t*\t%d\n", r.n, r.window, r.openstack)
	fmt.Fprintf(tw, "%d\t%v\ttotal\tcluster polls\t*\t%d\n", r.n, r.window, r.polls)
	_ = tw.Flush()
	return b.String()
}

// reqKey classifies a Kubernetes request: who sent it, its verb (get,
// list, watch, create, update, patch, delete, deletecollection,
// discovery) and its group/resource[/subresource] ("core" for the legacy
// group).
type reqKey struct {
	Source, Verb, Resource string
}

func (k reqKey) lease() bool { return k.Resource == "coordination.k8s.io/leases" }

// verbWatchRenewed counts a watch reopened after the API server ended the
// previous one of the same source and resource at the timeoutSeconds it
// was asked for (client-go asks for 5 to 10 minutes): the normal life of
// an open watch, not a new one.
const verbWatchRenewed = "watch (renewed at its timeout)"

// kubeCounter counts the requests sent through the configs it wraps.
type kubeCounter struct {
	mu         sync.Mutex
	counts     map[reqKey]int
	leaseNames map[string]int
	// watches holds when the last watch of each source and resource
	// was opened and for how long it asked to stay open.
	watches map[reqKey]openWatch
}

type openWatch struct {
	opened  time.Time
	timeout time.Duration
}

type kubeCounts struct {
	counts     map[reqKey]int
	leaseNames map[string]int
}

func newKubeCounter() *kubeCounter {
	return &kubeCounter{counts: map[reqKey]int{}, leaseNames: map[string]int{}, watches: map[reqKey]openWatch{}}
}

// wrap returns a copy of cfg whose requests are counted as source's.
func (k *kubeCounter) wrap(cfg *rest.Config, source string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			k.add(source, r)
			return rt.RoundTrip(r)
		})
	})
	return c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (k *kubeCounter) add(source string, r *http.Request) {
	key, name := classify(r)
	key.Source = source
	k.mu.Lock()
	defer k.mu.Unlock()
	if key.Verb == "watch" {
		now := time.Now()
		secs, _ := strconv.Atoi(r.URL.Query().Get("timeoutSeconds"))
		prev, seen := k.watches[key]
		k.watches[key] = openWatch{opened: now, timeout: time.Duration(secs) * time.Second}
		if seen && prev.timeout > 0 && now.Sub(prev.opened) >= prev.timeout-time.Second {
			key.Verb = verbWatchRenewed
		}
	}
	k.counts[key]++
	if key.lease() {
		k.leaseNames[name]++
	}
}

func (k *kubeCounter) snapshot() kubeCounts {
	k.mu.Lock()
	defer k.mu.Unlock()
	return kubeCounts{counts: maps.Clone(k.counts), leaseNames: maps.Clone(k.leaseNames)}
}

// classify maps a request to the API server to its verb and resource,
// and returns the object's name ("" for collections).
func classify(r *http.Request) (reqKey, string) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var group string
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		group, rest = "core", parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, rest = parts[1], parts[3:]
	}
	if len(rest) == 0 {
		return reqKey{Verb: "discovery", Resource: r.URL.Path}, ""
	}
	watch := r.URL.Query().Get("watch")
	isWatch := watch == "true" || watch == "1"
	if rest[0] == "watch" { // the deprecated watch prefix
		isWatch, rest = true, rest[1:]
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	resource, name := group+"/"+rest[0], ""
	if len(rest) >= 2 {
		name = rest[1]
	}
	if len(rest) >= 3 {
		resource += "/" + rest[2]
	}
	var verb string
	switch r.Method {
	case http.MethodGet:
		switch {
		case isWatch:
			verb = "watch"
		case name != "":
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if name == "" {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(r.Method)
	}
	return reqKey{Verb: verb, Resource: resource}, name
}

// osCounter counts the calls to OpenStack of the conductor and the driver.
type osCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *osCounter) add(call string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[call]++
}

func (c *osCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

func (c *osCounter) total() int {
	n := 0
	for _, v := range c.snapshot() {
		n += v
	}
	return n
}

// countedCreds counts the driver's Keystone application-credential calls.
type countedCreds struct {
	s capi.AppCredentialStore
	c *osCounter
}

func (a countedCreds) Create(ctx context.Context, cred driver.Credentials, name, description string) (capi.AppCredential, error) {
	a.c.add("keystone application_credentials create")
	return a.s.Create(ctx, cred, name, description)
}

func (a countedCreds) Delete(ctx context.Context, userID, id string) error {
	a.c.add("keystone application_credentials delete")
	return a.s.Delete(ctx, userID, id)
}

// countedGroups counts the driver's Nova server-group calls.
type countedGroups struct {
	g capi.ServerGroups
	c *osCounter
}

func (g countedGroups) Ensure(ctx context.Context, cred driver.Credentials, name, policy string) (string, error) {
	g.c.add("nova os-server-groups ensure")
	return g.g.Ensure(ctx, cred, name, policy)
}

func (g countedGroups) Delete(ctx context.Context, cred driver.Credentials, name string) error {
	g.c.add("nova os-server-groups delete")
	return g.g.Delete(ctx, cred, name)
}

// countedLookup counts the conductor's Glance, Nova and Neutron look-ups.
type countedLookup struct {
	l conductor.OpenStack
	c *osCounter
}

func (l countedLookup) Image(ctx context.Context, ident string) (openstack.Image, error) {
	l.c.add("glance image")
	return l.l.Image(ctx, ident)
}

func (l countedLookup) Flavor(ctx context.Context, ident string) (openstack.Flavor, error) {
	l.c.add("nova flavor")
	return l.l.Flavor(ctx, ident)
}

func (l countedLookup) Keypair(ctx context.Context, name string) (openstack.Keypair, error) {
	l.c.add("nova keypair")
	return l.l.Keypair(ctx, name)
}

func (l countedLookup) ExternalNetwork(ctx context.Context, ident string) (openstack.Network, error) {
	l.c.add("neutron external network")
	return l.l.ExternalNetwork(ctx, ident)
}

func (l countedLookup) FixedNetwork(ctx context.Context, ident string) (openstack.Network, error) {
	l.c.add("neutron fixed network")
	return l.l.FixedNetwork(ctx, ident)
}

func (l countedLookup) FixedSubnet(ctx context.Context, ident string) (openstack.Subnet, error) {
	l.c.add("neutron fixed subnet")
	return l.l.FixedSubnet(ctx, ident)
}

var (
	_ capi.AppCredentialStore = countedCreds{}
	_ capi.ServerGroups       = countedGroups{}
	_ conductor.OpenStack     = countedLookup{}
)
