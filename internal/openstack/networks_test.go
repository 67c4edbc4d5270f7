package openstack

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

func TestExternalNetwork(t *testing.T) {
	t.Run("found by name", func(t *testing.T) {
		h := newHarness(t, nil)
		n, err := h.lookup.ExternalNetwork(h.ctx, "public")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Network{ID: netPublic, Name: "public", External: true}, n); diff != "" {
			t.Errorf("network (-want +got):\n%s", diff)
		}
		h.checkCalls(t, []string{"GET network /v2.0/networks?name=public&router%3Aexternal=true"})
	})

	t.Run("found by id", func(t *testing.T) {
		h := newHarness(t, nil)
		n, err := h.lookup.ExternalNetwork(h.ctx, netPublic)
		if err != nil {
			t.Fatal(err)
		}
		if n.Name != "public" {
			t.Errorf("network = %+v", n)
		}
		h.checkCalls(t, []string{
			"GET network /v2.0/networks?name=" + netPublic + "&router%3Aexternal=true",
			"GET network /v2.0/networks?id=" + netPublic + "&router%3Aexternal=true",
		})
	})

	t.Run("a private network is not found", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.ExternalNetwork(h.ctx, "private")
		wantError(t, err, 400, "ExternalNetworkNotFound", "Unable to find external network private.")
	})

	t.Run("not found", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.ExternalNetwork(h.ctx, "nope")
		wantError(t, err, 400, "ExternalNetworkNotFound", "Unable to find external network nope.")
	})

	t.Run("ambiguous name", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.ExternalNetwork(h.ctx, "ext-dup")
		wantError(t, err, 409, "Conflict",
			"Multiple external networks exist with same name 'ext-dup'. Please use the external network ID instead.")
	})

	t.Run("only the external one of two homonyms counts", func(t *testing.T) {
		h := newHarness(t, nil)
		n, err := h.lookup.ExternalNetwork(h.ctx, "dup")
		if err != nil {
			t.Fatal(err)
		}
		if n.ID != netDupB {
			t.Errorf("network = %+v", n)
		}
	})

	t.Run("upper-case id is not sent as an id filter", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.ExternalNetwork(h.ctx, strings.ToUpper(netPublic))
		wantError(t, err, 400, "ExternalNetworkNotFound", "Unable to find external network "+strings.ToUpper(netPublic)+".")
		if got := len(h.fake.Calls()); got != 1 {
			t.Errorf("requests = %v", h.paths())
		}
	})

	t.Run("neutron failure is a 500", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.Inject(osfake.Fault{Service: osfake.ServiceNetwork, Status: http.StatusInternalServerError})
		_, err := h.lookup.ExternalNetwork(h.ctx, "public")
		wantPlainError(t, err)
	})
}

func TestFixedNetwork(t *testing.T) {
	t.Run("found by name", func(t *testing.T) {
		h := newHarness(t, nil)
		n, err := h.lookup.FixedNetwork(h.ctx, "private")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Network{ID: netPrivate, Name: "private"}, n); diff != "" {
			t.Errorf("network (-want +got):\n%s", diff)
		}
		h.checkCalls(t, []string{"GET network /v2.0/networks?name=private"})
	})

	t.Run("external networks count too", func(t *testing.T) {
		h := newHarness(t, nil)
		if _, err := h.lookup.FixedNetwork(h.ctx, "public"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("found by id", func(t *testing.T) {
		h := newHarness(t, nil)
		n, err := h.lookup.FixedNetwork(h.ctx, netPublic)
		if err != nil {
			t.Fatal(err)
		}
		if n.ID != netPublic {
			t.Errorf("network = %+v", n)
		}
		h.checkCalls(t, []string{"GET network /v2.0/networks?name=" + netPublic, "GET network /v2.0/networks?id=" + netPublic})
	})

	t.Run("an id that is also another network's name is ambiguous", func(t *testing.T) {
		// Magnum counts every network whose name or ID equals the value.
		h := newHarness(t, nil)
		_, err := h.lookup.FixedNetwork(h.ctx, netPrivate)
		wantError(t, err, 409, "Conflict",
			"Multiple networks exist with same name '"+netPrivate+"'. Please use the network ID instead.")
	})

	t.Run("ambiguous name", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.FixedNetwork(h.ctx, "dup")
		wantError(t, err, 409, "Conflict", "Multiple networks exist with same name 'dup'. Please use the network ID instead.")
	})

	t.Run("not found", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.FixedNetwork(h.ctx, "nope")
		wantError(t, err, 400, "FixedNetworkNotFound", "Unable to find fixed network nope.")
	})
}

func TestFixedSubnet(t *testing.T) {
	t.Run("found by name", func(t *testing.T) {
		h := newHarness(t, nil)
		s, err := h.lookup.FixedSubnet(h.ctx, "private-subnet")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Subnet{ID: subPrivate, Name: "private-subnet", NetworkID: netPrivate}, s); diff != "" {
			t.Errorf("subnet (-want +got):\n%s", diff)
		}
		h.checkCalls(t, []string{"GET network /v2.0/subnets?name=private-subnet"})
	})

	t.Run("found by id", func(t *testing.T) {
		h := newHarness(t, nil)
		s, err := h.lookup.FixedSubnet(h.ctx, subDupA)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != "dup" {
			t.Errorf("subnet = %+v", s)
		}
		h.checkCalls(t, []string{"GET network /v2.0/subnets?name=" + subDupA, "GET network /v2.0/subnets?id=" + subDupA})
	})

	t.Run("ambiguous name", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.FixedSubnet(h.ctx, "dup")
		wantError(t, err, 409, "Conflict", "Multiple subnets exist with same name 'dup'. Please use the subnet ID instead.")
	})

	t.Run("not found", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.FixedSubnet(h.ctx, "nope")
		wantError(t, err, 400, "FixedSubnetNotFound", "Unable to find fixed subnet nope.")
	})

	t.Run("a transient failure is a 500, not a miss", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.Inject(osfake.Fault{Service: osfake.ServiceNetwork, Status: http.StatusBadGateway, Times: 1})
		_, err := h.lookup.FixedSubnet(h.ctx, "dup")
		wantPlainError(t, err)
		_, err = h.lookup.FixedSubnet(h.ctx, "dup")
		wantError(t, err, 409, "Conflict", "Multiple subnets exist with same name 'dup'. Please use the subnet ID instead.")
	})

	t.Run("pages are followed", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.SetPageSize(1)
		_, err := h.lookup.FixedSubnet(h.ctx, "dup")
		wantError(t, err, 409, "Conflict", "Multiple subnets exist with same name 'dup'. Please use the subnet ID instead.")
		h.checkCalls(t, []string{
			"GET network /v2.0/subnets?name=dup",
			"GET network /v2.0/subnets?limit=1&marker=" + subDupA + "&name=dup",
			"GET network /v2.0/subnets?limit=1&marker=" + subDupB + "&name=dup",
		})
	})
}
