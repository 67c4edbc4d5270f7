package openstack

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

func TestFlavor(t *testing.T) {
	t.Run("found by id with one GET", func(t *testing.T) {
		h := newHarness(t, nil)
		f, err := h.lookup.Flavor(h.ctx, "2")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Flavor{ID: "2", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40}, f); diff != "" {
			t.Errorf("flavor (-want +got):\n%s", diff)
		}
		h.checkCalls(t, []string{"GET compute /v2.1/flavors/2"})
	})

	t.Run("found by name", func(t *testing.T) {
		h := newHarness(t, nil)
		f, err := h.lookup.Flavor(h.ctx, "m1.large")
		if err != nil {
			t.Fatal(err)
		}
		if f.ID != "3" || f.Disk != 80 {
			t.Errorf("flavor = %+v", f)
		}
		h.checkCalls(t, []string{"GET compute /v2.1/flavors/m1.large", "GET compute /v2.1/flavors/detail"})
	})

	t.Run("listing stops at the first match", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.SetPageSize(2)
		if _, err := h.lookup.Flavor(h.ctx, "m1.large"); err != nil {
			t.Fatal(err)
		}
		h.checkCalls(t, []string{
			"GET compute /v2.1/flavors/m1.large",
			"GET compute /v2.1/flavors/detail",
			"GET compute /v2.1/flavors/detail?marker=2",
		})
	})

	t.Run("zero root disk is reported", func(t *testing.T) {
		h := newHarness(t, nil)
		f, err := h.lookup.Flavor(h.ctx, "boot.from.volume")
		if err != nil {
			t.Fatal(err)
		}
		if f.Disk != 0 || f.ID != "bfv" {
			t.Errorf("flavor = %+v", f)
		}
	})

	t.Run("name with a slash", func(t *testing.T) {
		h := newHarness(t, nil)
		f, err := h.lookup.Flavor(h.ctx, "odd name/with slash")
		if err != nil {
			t.Fatal(err)
		}
		if f.ID != "c0ffee" {
			t.Errorf("flavor = %+v", f)
		}
	})

	t.Run("the word detail is a name, not a listing", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.Flavor(h.ctx, "detail")
		wantError(t, err, 400, "FlavorNotFound", "Unable to find flavor detail.")
	})

	t.Run("not found after every page", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.SetPageSize(3)
		_, err := h.lookup.Flavor(h.ctx, "m9.huge")
		wantError(t, err, 400, "FlavorNotFound", "Unable to find flavor m9.huge.")
		h.checkCalls(t, []string{
			"GET compute /v2.1/flavors/m9.huge",
			"GET compute /v2.1/flavors/detail",
			"GET compute /v2.1/flavors/detail?marker=3",
		})
	})

	t.Run("nova failure is a 500", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.Inject(osfake.Fault{Service: osfake.ServiceCompute, Path: "/v2.1/flavors/detail", Status: http.StatusServiceUnavailable})
		_, err := h.lookup.Flavor(h.ctx, "m1.small")
		wantPlainError(t, err)
	})
}

func TestKeypair(t *testing.T) {
	t.Run("found", func(t *testing.T) {
		h := newHarness(t, nil)
		k, err := h.lookup.Keypair(h.ctx, "mykey")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Keypair{Name: "mykey", Type: "ssh", Fingerprint: "aa:bb"}, k); diff != "" {
			t.Errorf("keypair (-want +got):\n%s", diff)
		}
		h.checkCalls(t, []string{"GET compute /v2.1/os-keypairs/mykey"})
	})

	t.Run("not found is a 404", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.Keypair(h.ctx, "other")
		wantError(t, err, 404, "KeyPairNotFound", "Unable to find keypair other.")
		h.checkCalls(t, []string{"GET compute /v2.1/os-keypairs/other"})
	})

	t.Run("dot names never reach the path", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.Keypair(h.ctx, "..")
		wantError(t, err, 404, "KeyPairNotFound", "Unable to find keypair ...")
		h.checkCalls(t, nil)
	})

	t.Run("nova failure is a 500", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.Inject(osfake.Fault{Service: osfake.ServiceCompute, Status: http.StatusInternalServerError})
		_, err := h.lookup.Keypair(h.ctx, "mykey")
		wantPlainError(t, err)
	})
}
