package capi

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// fakeLoadBalancers is an in-memory Octavia: a deleted load balancer is
// PENDING_DELETE for `lists` further lists (forever when negative).
type fakeLoadBalancers struct {
	mu      sync.Mutex
	lbs     []LoadBalancer
	pending map[string]int
	lists   int
	noLB    bool
	failDel error
	// deleted records the IDs deleted, in order; creds the credentials
	// of every call.
	deleted []string
	creds   []driver.Credentials
	// onDelete runs before each delete (to check what still exists).
	onDelete func(LoadBalancer)
}

func newFakeLoadBalancers(lbs ...LoadBalancer) *fakeLoadBalancers {
	for i := range lbs {
		if lbs[i].ProvisioningStatus == "" {
			lbs[i].ProvisioningStatus = "ACTIVE"
		}
	}
	return &fakeLoadBalancers{lbs: lbs, pending: map[string]int{}}
}

func (f *fakeLoadBalancers) List(_ context.Context, cred driver.Credentials, projectID string) ([]LoadBalancer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creds = append(f.creds, cred)
	if f.noLB {
		return nil, ErrNoLoadBalancerService
	}
	for id, n := range f.pending {
		switch {
		case n == 0:
			delete(f.pending, id)
			f.lbs = slices.DeleteFunc(f.lbs, func(lb LoadBalancer) bool { return lb.ID == id })
		case n > 0:
			f.pending[id] = n - 1
		}
	}
	// The fake ignores projectID on purpose (an admin token sees every
	// project): the driver must filter.
	_ = projectID
	return slices.Clone(f.lbs), nil
}

func (f *fakeLoadBalancers) Delete(_ context.Context, cred driver.Credentials, lb LoadBalancer) error {
	if f.onDelete != nil {
		f.onDelete(lb)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creds = append(f.creds, cred)
	if f.failDel != nil {
		return f.failDel
	}
	f.deleted = append(f.deleted, lb.ID)
	i := slices.IndexFunc(f.lbs, func(x LoadBalancer) bool { return x.ID == lb.ID })
	if i < 0 {
		return nil
	}
	f.lbs[i].ProvisioningStatus = provisioningPendingDelete
	f.pending[lb.ID] = f.lists
	return nil
}

func (f *fakeLoadBalancers) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{}
	for _, lb := range f.lbs {
		out = append(out, lb.ID)
	}
	return out
}

// mixedLoadBalancers are load balancers of testUUID's cluster (project
// p1), and others that must stay.
func mixedLoadBalancers() []LoadBalancer {
	return []LoadBalancer{
		{ID: "lb-svc", Name: "kube_service_" + testUUID + "_default_web", ProjectID: "p1",
			Description: "Kubernetes external service default/web from cluster " + testUUID, VIPPortID: "port-1"},
		{ID: "lb-legacy", Name: "a0123456789abcdef", ProjectID: "p1",
			Description: "Kubernetes external service default/legacy from cluster " + testUUID},
		{ID: "lb-ingress", Name: "kube_ingress_" + testUUID + "_default_web", ProjectID: "p1",
			Description: "Kubernetes Ingress web in namespace default from cluster " + testUUID + ", version: 7"},
		{ID: "lb-other-cluster", Name: "kube_service_0f0e0d0c-0000-4000-8000-000000000000_default_web", ProjectID: "p1",
			Description: "Kubernetes external service default/web from cluster 0f0e0d0c-0000-4000-8000-000000000000"},
		{ID: "lb-other-project", Name: "kube_service_" + testUUID + "_default_web", ProjectID: "p2",
			Description: "Kubernetes external service default/web from cluster " + testUUID},
		{ID: "lb-user", Name: "my-lb", ProjectID: "p1", Description: "hand-made"},
		{ID: "lb-longer-uuid", Name: "x", ProjectID: "p1",
			Description: "Kubernetes external service default/web from cluster " + testUUID + "-2"},
	}
}

func TestClusterLoadBalancer(t *testing.T) {
	cl := testState().Cluster
	var got []string
	for _, lb := range mixedLoadBalancers() {
		if clusterLoadBalancer(lb, cl) {
			got = append(got, lb.ID)
		}
	}
	if diff := cmp.Diff([]string{"lb-svc", "lb-legacy", "lb-ingress"}, got); diff != "" {
		t.Errorf("load balancers of the cluster (-want +got):\n%s", diff)
	}
	// A load balancer that only shares the cluster's service tag is not
	// the cluster's.
	if clusterLoadBalancer(LoadBalancer{ID: "shared", Name: "user-lb", ProjectID: "p1"}, cl) {
		t.Error("a load balancer without the cluster's name or description matched")
	}
	cl.ProjectID = ""
	if clusterLoadBalancer(mixedLoadBalancers()[0], cl) {
		t.Error("a cluster without a project matched a load balancer")
	}
}

func TestDeleteClusterLoadBalancers(t *testing.T) {
	t.Run("only the cluster's load balancers of its project go, before the Cluster", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d, c, _, st := created(t)
			lbs := newFakeLoadBalancers(mixedLoadBalancers()...)
			lbs.lists = 2 // PENDING_DELETE in the next two lists, gone in the third
			lbs.onDelete = func(LoadBalancer) {
				if getCAPICluster(t, c).DeletionTimestamp != nil {
					t.Error("a load balancer was deleted after the Cluster")
				}
			}
			d.opts.LoadBalancers = lbs
			start := time.Now()
			upd, err := d.DeleteCluster(t.Context(), userCred, st)
			if err != nil {
				t.Fatal(err)
			}
			if statusOf(upd.Cluster.Status) != magnum.StatusDeleteInProgress {
				t.Errorf("status %v", upd.Cluster.Status)
			}
			if diff := cmp.Diff([]string{"lb-svc", "lb-legacy", "lb-ingress"}, lbs.deleted); diff != "" {
				t.Errorf("deleted, each once (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"lb-other-cluster", "lb-other-project", "lb-user", "lb-longer-uuid"}, lbs.ids()); diff != "" {
				t.Errorf("left (-want +got):\n%s", diff)
			}
			if took := time.Since(start); took != 3*DefaultLBPollInterval {
				t.Errorf("waited %v, want three poll intervals", took)
			}
			for _, cred := range lbs.creds {
				if cred.AuthToken != userCred.AuthToken {
					t.Errorf("a call used %v, want the caller's credentials", cred)
				}
			}
			var cl clusterv1.Cluster
			err = c.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: testStackID}, &cl)
			if !apierrors.IsNotFound(err) && cl.DeletionTimestamp == nil {
				t.Errorf("the Cluster was not deleted: %v", err)
			}
		})
	})

	t.Run("timeout names the load balancers left and keeps the Cluster; a new DELETE carries on", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d, c, _, st := created(t)
			lbs := newFakeLoadBalancers(mixedLoadBalancers()[:2]...)
			lbs.lists = -1 // stuck in PENDING_DELETE
			d.opts.LoadBalancers = lbs
			d.opts.PreDeleteLBTimeout = 10 * time.Second
			start := time.Now()
			_, err := d.DeleteCluster(t.Context(), userCred, st)
			if err == nil {
				t.Fatal("DeleteCluster succeeded with load balancers left")
			}
			want := "Failed to pre-delete resources for cluster " + testUUID + ", error: load balancers still exist after 10s: kube_service_" +
				testUUID + "_default_web (lb-svc), a0123456789abcdef (lb-legacy)."
			if err.Error() != want {
				t.Errorf("error:\n%s\nwant:\n%s", err, want)
			}
			if took := time.Since(start); took != 10*time.Second {
				t.Errorf("gave up after %v, want the 10 s timeout", took)
			}
			if getCAPICluster(t, c).DeletionTimestamp != nil {
				t.Error("the Cluster was deleted although load balancers are left")
			}

			// Octavia finishes; the next DELETE does not delete again.
			lbs.mu.Lock()
			for id := range lbs.pending {
				lbs.pending[id] = 0
			}
			lbs.mu.Unlock()
			if _, err := d.DeleteCluster(t.Context(), userCred, st); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"lb-svc", "lb-legacy"}, lbs.deleted); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
			var cl clusterv1.Cluster
			err = c.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: testStackID}, &cl)
			if !apierrors.IsNotFound(err) && cl.DeletionTimestamp == nil {
				t.Errorf("the Cluster was not deleted: %v", err)
			}
		})
	})

	t.Run("a cloud without Octavia: nothing to do", func(t *testing.T) {
		d, c, _, st := created(t)
		lbs := newFakeLoadBalancers(mixedLoadBalancers()...)
		lbs.noLB = true
		d.opts.LoadBalancers = lbs
		if _, err := d.DeleteCluster(t.Context(), userCred, st); err != nil {
			t.Fatal(err)
		}
		if len(lbs.deleted) != 0 {
			t.Errorf("deleted %v", lbs.deleted)
		}
		var cl clusterv1.Cluster
		err := c.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: testStackID}, &cl)
		if !apierrors.IsNotFound(err) && cl.DeletionTimestamp == nil {
			t.Errorf("the Cluster was not deleted: %v", err)
		}
	})

	t.Run("an Octavia error fails the delete before the Cluster", func(t *testing.T) {
		d, c, _, st := created(t)
		lbs := newFakeLoadBalancers(mixedLoadBalancers()...)
		refused := errors.New("HTTP 403: forbidden")
		lbs.failDel = refused
		d.opts.LoadBalancers = lbs
		_, err := d.DeleteCluster(t.Context(), userCred, st)
		want := "Failed to pre-delete resources for cluster " + testUUID + ", error: delete load balancer kube_service_" +
			testUUID + "_default_web (lb-svc): HTTP 403: forbidden."
		if !errors.Is(err, &magnum.Error{Kind: "PreDeletionFailed"}) || err.Error() != want {
			t.Errorf("DeleteCluster: %v\nwant Magnum's PreDeletionFailed: %s", err, want)
		}
		if getCAPICluster(t, c).DeletionTimestamp != nil {
			t.Error("the Cluster was deleted after a failed load-balancer step")
		}
	})

	t.Run("no stack id: nothing listed", func(t *testing.T) {
		d, _, _ := newTestDriver(t)
		lbs := newFakeLoadBalancers(mixedLoadBalancers()...)
		d.opts.LoadBalancers = lbs
		if _, err := d.DeleteCluster(t.Context(), userCred, testState()); err != nil {
			t.Fatal(err)
		}
		if len(lbs.creds) != 0 {
			t.Errorf("%d load-balancer calls for a cluster that never got objects", len(lbs.creds))
		}
	})
}
