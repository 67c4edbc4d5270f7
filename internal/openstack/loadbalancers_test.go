package openstack

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

func newLoadBalancersHarness(t *testing.T) (*LoadBalancers, *osfake.OctaviaServer, Caller) {
	t.Helper()
	fake := osfake.NewOctavia(t)
	fake.AddToken("user-token", "p1")
	l, err := NewLoadBalancers(LoadBalancerOptions{
		Service: &ServiceAuth{AuthURL: fake.IdentityEndpoint(), Username: "magnum", Password: "pw",
			UserDomainName: "Default", ProjectName: "service", ProjectDomainName: "Default"},
		SessionOptions: SessionOptions{Timeout: 2 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	return l, fake, Caller{Token: "user-token", UserID: "u1", ProjectID: "p1", ServiceCatalog: fake.Catalog()}
}

func lbIDs(lbs []LoadBalancer) []string {
	out := []string{}
	for _, lb := range lbs {
		out = append(out, lb.ID)
	}
	return out
}

func TestLoadBalancersList(t *testing.T) {
	l, fake, caller := newLoadBalancersHarness(t)
	for _, lb := range []osfake.LoadBalancer{
		{ID: "lb-1", Name: "kube_service_c1_default_web", ProjectID: "p1", VIPPortID: "port-1", Tags: []string{"kube_service_c1_default_web"}},
		{ID: "lb-2", Name: "other", ProjectID: "p2"},
		{ID: "lb-3", Name: "kube_service_c1_default_api", ProjectID: "p1", ProvisioningStatus: "PENDING_UPDATE"},
		{ID: "lb-4", Name: "mine-too", ProjectID: "p1"},
	} {
		fake.AddLoadBalancer(lb)
	}
	fake.SetPageSize(1)

	got, err := l.List(t.Context(), caller, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"lb-1", "lb-3", "lb-4"}, lbIDs(got)); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	want := LoadBalancer{ID: "lb-1", Name: "kube_service_c1_default_web", ProjectID: "p1", ProvisioningStatus: "ACTIVE",
		OperatingStatus: "ONLINE", VIPPortID: "port-1", Tags: []string{"kube_service_c1_default_web"}}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("first load balancer (-want +got):\n%s", diff)
	}
	calls := fake.Calls()
	// One page per load balancer, and the last (empty) page.
	if len(calls) != 4 {
		t.Errorf("%d calls, want 4 pages: %v", len(calls), calls)
	}
	for _, c := range calls {
		if c.Method != http.MethodGet || c.Path != "/v2/lbaas/loadbalancers" || c.Query.Get("project_id") != "p1" {
			t.Errorf("unexpected call %s", c)
		}
		if c.Token != "user-token" {
			t.Errorf("%s used token %q, want the user's", c, c.Token)
		}
	}

	t.Run("with the service credentials, another project", func(t *testing.T) {
		got, err := l.List(t.Context(), Caller{Service: true}, "p2")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"lb-2"}, lbIDs(got)); diff != "" {
			t.Errorf("listed (-want +got):\n%s", diff)
		}
	})
	t.Run("a user asking for another project is refused", func(t *testing.T) {
		_, err := l.List(t.Context(), caller, "p2")
		if !errors.Is(err, ErrForbidden) {
			t.Errorf("List of p2 as a p1 user: %v, want ErrForbidden", err)
		}
	})
}

func TestLoadBalancersDelete(t *testing.T) {
	l, fake, caller := newLoadBalancersHarness(t)
	fake.AddLoadBalancer(osfake.LoadBalancer{ID: "lb-1", ProjectID: "p1", Listeners: []string{"listener-1"}, VIPPortID: "port-1"})
	fake.AddLoadBalancer(osfake.LoadBalancer{ID: "lb-2", ProjectID: "p1"})
	fake.SetDeleteDelay(1)

	// The load balancer has a listener: only a cascading delete works.
	if err := l.Delete(t.Context(), caller, "lb-1"); err != nil {
		t.Fatal(err)
	}
	calls := fake.Calls()
	if last := calls[len(calls)-1]; last.Method != http.MethodDelete || last.Query.Get("cascade") != "true" {
		t.Errorf("last call %s, want a cascading DELETE", last)
	}
	got, err := l.List(t.Context(), caller, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ProvisioningStatus != "PENDING_DELETE" {
		t.Fatalf("after the delete: %+v, want lb-1 PENDING_DELETE", got)
	}
	// Deleting it again while Octavia is busy with it (409) is fine.
	if err := l.Delete(t.Context(), caller, "lb-1"); err != nil {
		t.Errorf("delete of a PENDING_DELETE load balancer: %v", err)
	}
	got, err = l.List(t.Context(), caller, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"lb-2"}, lbIDs(got)); diff != "" {
		t.Errorf("after the delay (-want +got):\n%s", diff)
	}
	// And once it is gone (404) too.
	if err := l.Delete(t.Context(), caller, "lb-1"); err != nil {
		t.Errorf("delete of a deleted load balancer: %v", err)
	}

	t.Run("errors", func(t *testing.T) {
		fake.Inject(osfake.Fault{Service: osfake.ServiceLoadBalancer, Status: http.StatusForbidden, Times: 1})
		if err := l.Delete(t.Context(), caller, "lb-2"); !errors.Is(err, ErrForbidden) {
			t.Errorf("Delete on 403: %v, want ErrForbidden", err)
		}
		fake.Inject(osfake.Fault{Service: osfake.ServiceLoadBalancer, Status: http.StatusInternalServerError, Times: 1})
		if err := l.Delete(t.Context(), caller, "lb-2"); err == nil {
			t.Error("Delete on 500 succeeded")
		}
		fake.Inject(osfake.Fault{Service: osfake.ServiceLoadBalancer, Status: http.StatusServiceUnavailable, Times: 1})
		if _, err := l.List(t.Context(), caller, "p1"); err == nil {
			t.Error("List on 503 succeeded")
		}
		if _, err := l.List(t.Context(), Caller{Token: "unknown", ServiceCatalog: caller.ServiceCatalog}, "p1"); err == nil {
			t.Error("List with an unknown token succeeded")
		}
		if len(fake.LoadBalancers()) != 1 {
			t.Errorf("load balancers left: %+v", fake.LoadBalancers())
		}
	})
	t.Run("a hanging Octavia is bounded by the timeout", func(t *testing.T) {
		fake.Inject(osfake.Fault{Service: osfake.ServiceLoadBalancer, Hang: true, Times: 1})
		start := time.Now()
		if _, err := l.List(t.Context(), caller, "p1"); err == nil {
			t.Error("List against a hanging Octavia succeeded")
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("List took %v, want about the 2 s timeout", took)
		}
	})
}

func TestLoadBalancersFloatingIPs(t *testing.T) {
	l, fake, caller := newLoadBalancersHarness(t)
	fake.AddFloatingIP(osfake.FloatingIP{ID: "fip-1", Address: "203.0.113.10", PortID: "port-1", ProjectID: "p1"})
	fake.AddFloatingIP(osfake.FloatingIP{ID: "fip-2", Address: "203.0.113.11", PortID: "port-2", ProjectID: "p1"})
	fake.AddFloatingIP(osfake.FloatingIP{ID: "fip-3", Address: "203.0.113.12", ProjectID: "p1"})

	got, err := l.DeleteFloatingIPs(t.Context(), caller, "port-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"203.0.113.10"}, got); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	var left []string
	for _, f := range fake.FloatingIPs() {
		left = append(left, f.ID)
	}
	if diff := cmp.Diff([]string{"fip-2", "fip-3"}, left); diff != "" {
		t.Errorf("floating IPs left (-want +got):\n%s", diff)
	}
	if !slices.ContainsFunc(fake.Calls(), func(c osfake.Call) bool {
		return c.Service == osfake.ServiceNetwork && c.Path == "/v2.0/floatingips" && c.Query.Get("port_id") == "port-1"
	}) {
		t.Error("the floating IPs were not listed by port")
	}
	// Nothing on the port any more: nothing to do.
	if got, err := l.DeleteFloatingIPs(t.Context(), caller, "port-1"); err != nil || len(got) != 0 {
		t.Errorf("second call: %v, %v", got, err)
	}

	fake.Inject(osfake.Fault{Service: osfake.ServiceNetwork, Path: "/v2.0/floatingips/", Status: http.StatusForbidden, Times: 1})
	if _, err := l.DeleteFloatingIPs(t.Context(), caller, "port-2"); !errors.Is(err, ErrForbidden) {
		t.Errorf("delete refused: %v, want ErrForbidden", err)
	}
	if len(fake.FloatingIPs()) != 2 {
		t.Errorf("a refused delete removed the floating IP: %+v", fake.FloatingIPs())
	}
}

func TestLoadBalancersWithoutOctavia(t *testing.T) {
	l, fake, caller := newLoadBalancersHarness(t)
	caller.ServiceCatalog = fake.CatalogWithoutLoadBalancer()
	if _, err := l.List(t.Context(), caller, "p1"); !errors.Is(err, ErrNoLoadBalancerService) {
		t.Errorf("List: %v, want ErrNoLoadBalancerService", err)
	}
	if err := l.Delete(t.Context(), caller, "lb-1"); !errors.Is(err, ErrNoLoadBalancerService) {
		t.Errorf("Delete: %v, want ErrNoLoadBalancerService", err)
	}
	if n := len(fake.Calls()); n != 0 {
		t.Errorf("%d calls to a cloud without a load-balancer endpoint", n)
	}
	if _, err := NewLoadBalancers(LoadBalancerOptions{Octavia: ServiceOptions{Endpoint: "ftp://octavia"}}); err == nil {
		t.Error("an ftp endpoint was accepted")
	}
}
