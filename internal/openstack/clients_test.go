package openstack

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

func TestClientsEndpointSelection(t *testing.T) {
	t.Run("publicURL by default", func(t *testing.T) {
		h := newHarness(t, nil)
		if _, err := h.lookup.Keypair(h.ctx, "mykey"); err != nil {
			t.Fatal(err)
		}
		c := h.fake.Calls()[0]
		if c.Interface != "public" {
			t.Errorf("interface = %q, want public", c.Interface)
		}
		if got := c.Header.Get("X-OpenStack-Request-ID"); got != requestID {
			t.Errorf("global request ID = %q, want %q", got, requestID)
		}
		if got := c.Header.Get("User-Agent"); !strings.HasPrefix(got, "openkeel-magnum") {
			t.Errorf("User-Agent = %q", got)
		}
	})

	t.Run("a request ID of another form is not forwarded", func(t *testing.T) {
		h := newHarness(t, nil)
		magnum.FromContext(h.ctx).RequestID = "not-a-request-id"
		if _, err := h.lookup.Keypair(h.ctx, "mykey"); err != nil {
			t.Fatal(err)
		}
		if got := h.fake.Calls()[0].Header.Get("X-OpenStack-Request-ID"); got != "" {
			t.Errorf("global request ID = %q", got)
		}
	})

	t.Run("endpoint_type per service", func(t *testing.T) {
		h := newHarness(t, func(o *Options) {
			o.Glance.EndpointType = "internalURL"
			o.Nova.EndpointType = "admin"
		})
		if _, err := h.lookup.Image(h.ctx, imageUbuntu); err != nil {
			t.Fatal(err)
		}
		if _, err := h.lookup.Keypair(h.ctx, "mykey"); err != nil {
			t.Fatal(err)
		}
		if _, err := h.lookup.FixedSubnet(h.ctx, "private-subnet"); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range h.fake.Calls() {
			got = append(got, c.Service+" "+c.Interface)
		}
		want := []string{"image internal", "compute admin", "network public"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("interfaces (-want +got):\n%s", diff)
		}
	})

	t.Run("region_name picks the region's endpoint", func(t *testing.T) {
		fake := osfake.New(t, testSeed())
		clients, err := NewClients(Options{Nova: ServiceOptions{RegionName: "RegionOne"}})
		if err != nil {
			t.Fatal(err)
		}
		// RegionTwo is listed first; its URLs are not served by the double.
		rc := &magnum.RequestContext{AuthToken: userToken, ServiceCatalog: fake.CatalogForRegions("RegionTwo", "RegionOne")}
		ctx := magnum.WithRequestContext(t.Context(), rc)
		if _, err := NewLookup(clients).Keypair(ctx, "mykey"); err != nil {
			t.Fatal(err)
		}
		_, err = NewLookup(clients).FixedSubnet(ctx, "private-subnet")
		wantPlainError(t, err) // no region for Neutron: the first endpoint, in RegionTwo
	})

	t.Run("unknown region", func(t *testing.T) {
		h := newHarness(t, func(o *Options) { o.Neutron.RegionName = "RegionNine" })
		_, err := h.lookup.ExternalNetwork(h.ctx, "public")
		wantError(t, err, 403, "AuthorizationFailure",
			"neutron connection failed. unexpected client error occurred: publicURL endpoint for network service in RegionNine region not found")
	})

	t.Run("service missing from the catalog", func(t *testing.T) {
		h := newHarness(t, func(o *Options) { o.Glance.EndpointType = "internalURL" })
		rc := magnum.FromContext(h.ctx)
		rc.ServiceCatalog = []byte(`[{"type":"compute","endpoints":[]}]`)
		_, err := h.lookup.Image(h.ctx, "x")
		wantError(t, err, 403, "AuthorizationFailure",
			"glance connection failed. unexpected client error occurred: internalURL endpoint for image service not found")
	})

	t.Run("empty catalog", func(t *testing.T) {
		h := newHarness(t, nil)
		magnum.FromContext(h.ctx).ServiceCatalog = nil
		_, err := h.lookup.Flavor(h.ctx, "m1.small")
		wantError(t, err, 403, "AuthorizationFailure",
			"nova connection failed. unexpected client error occurred: The service catalog is empty.")
	})

	t.Run("no token", func(t *testing.T) {
		h := newHarness(t, nil)
		magnum.FromContext(h.ctx).AuthToken = ""
		_, err := h.lookup.Keypair(h.ctx, "mykey")
		wantError(t, err, 403, "AuthorizationFailure",
			"keystone connection failed. reason Keystone API connection failed: no password or token found.")
		if n := len(h.fake.Calls()); n != 0 {
			t.Errorf("%d requests made without a token", n)
		}
	})

	t.Run("no request context", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.Keypair(t.Context(), "mykey")
		wantError(t, err, 403, "AuthorizationFailure",
			"keystone connection failed. reason Keystone API connection failed: no password or token found.")
	})

	t.Run("fixed endpoints replace the catalog", func(t *testing.T) {
		fake := osfake.New(t, testSeed())
		clients, err := NewClients(Options{
			Glance:  ServiceOptions{Endpoint: fake.Endpoint("image", "internal") + "/v2"},
			Nova:    ServiceOptions{Endpoint: fake.Endpoint("compute", "admin")},
			Neutron: ServiceOptions{Endpoint: fake.Endpoint("network", "public")},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := magnum.WithRequestContext(t.Context(), &magnum.RequestContext{AuthToken: userToken})
		l := NewLookup(clients)
		if _, err := l.Image(ctx, "ubuntu-jammy"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Flavor(ctx, "m1.small"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.FixedNetwork(ctx, "private"); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range fake.Calls() {
			got = append(got, c.Interface+" "+c.String())
		}
		want := []string{
			"internal GET image /v2/images?name=ubuntu-jammy",
			"admin GET compute /v2.1/flavors/m1.small",
			"admin GET compute /v2.1/flavors/detail",
			"public GET network /v2.0/networks?name=private",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
	})

	t.Run("the caller's token is sent", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.RequireToken("someone-else")
		_, err := h.lookup.Keypair(h.ctx, "mykey")
		wantPlainError(t, err) // a 401 from Nova is unexpected, as in Magnum
	})
}

func TestClientsTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		service string
		call    func(h *harness) error
	}{
		{"image", osfake.ServiceImage, func(h *harness) error { _, err := h.lookup.Image(h.ctx, "ubuntu-jammy"); return err }},
		{"flavor", osfake.ServiceCompute, func(h *harness) error { _, err := h.lookup.Flavor(h.ctx, "m1.small"); return err }},
		{"keypair", osfake.ServiceCompute, func(h *harness) error { _, err := h.lookup.Keypair(h.ctx, "mykey"); return err }},
		{"external network", osfake.ServiceNetwork, func(h *harness) error { _, err := h.lookup.ExternalNetwork(h.ctx, "public"); return err }},
		{"fixed network", osfake.ServiceNetwork, func(h *harness) error { _, err := h.lookup.FixedNetwork(h.ctx, "private"); return err }},
		{"fixed subnet", osfake.ServiceNetwork, func(h *harness) error { _, err := h.lookup.FixedSubnet(h.ctx, "private-subnet"); return err }},
	} {
		t.Run(tc.name+" lookup gives up after the timeout", func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(o *Options) { o.Timeout = 100 * time.Millisecond })
			h.fake.Inject(osfake.Fault{Service: tc.service, Hang: true})
			start := time.Now()
			err := tc.call(h)
			wantPlainError(t, err)
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("lookup took %v with a 100ms timeout", d)
			}
		})
	}
}

func TestNewClients(t *testing.T) {
	t.Run("default timeout", func(t *testing.T) {
		c, err := NewClients(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.timeout != DefaultTimeout || c.http.Timeout != DefaultTimeout {
			t.Errorf("timeout = %v / %v", c.timeout, c.http.Timeout)
		}
	})
	t.Run("bad endpoint", func(t *testing.T) {
		if _, err := NewClients(Options{Nova: ServiceOptions{Endpoint: "nova:8774"}}); err == nil {
			t.Error("no error for an endpoint without scheme")
		}
	})
	t.Run("missing CA file", func(t *testing.T) {
		if _, err := NewClients(Options{CAFile: filepath.Join(t.TempDir(), "none.pem")}); err == nil {
			t.Error("no error for a missing CA file")
		}
	})
	t.Run("CA file without certificates", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "empty.pem")
		if err := os.WriteFile(p, []byte("not a certificate\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := NewClients(Options{CAFile: p}); err == nil {
			t.Error("no error for a CA file without certificates")
		}
	})
	t.Run("insecure", func(t *testing.T) {
		c, err := NewClients(Options{Insecure: true})
		if err != nil {
			t.Fatal(err)
		}
		if !c.http.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify {
			t.Error("insecure not applied")
		}
	})
}
