package app

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/config"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/capi"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

// unreachableKubeconfig names an API server nothing listens on: building
// the driver must not contact it.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: mgmt
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
contexts:
- name: mgmt
  context: {cluster: mgmt, user: magnum}
current-context: mgmt
users:
- name: magnum
  user: {token: not-a-real-token}
`

// capiOptions returns the defaults with [capi] enabled over a kubeconfig
// file and the Keystone URL set.
func capiOptions(t *testing.T) *config.Options {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	o := config.Defaults()
	o.CAPI.Enabled = true
	o.CAPI.Kubeconfig = kc
	o.KeystoneAuthtoken.AuthURL = "https://keystone.example.com/v3"
	o.KeystoneAuthtoken.Username = "magnum"
	o.KeystoneAuthtoken.Password = "secret"
	o.KeystoneAuthtoken.ProjectName = "service"
	return o
}

func testConductorDB(t *testing.T) *db.DB {
	t.Helper()
	d, err := db.Open(t.Context(), db.DialectSQLite, filepath.Join(t.TempDir(), "m.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Upgrade(t.Context()); err != nil {
		t.Fatal(err)
	}
	return d
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func entryPointNames() []string {
	var out []string
	for name := range capi.EntryPointOS {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func TestCAPIDefaultsDisabled(t *testing.T) {
	o := config.Defaults()
	if o.CAPI.Enabled {
		t.Error("[capi]/enabled defaults to true")
	}
	c := o.CAPI
	got := []int{c.LeaseDuration, c.RenewDeadline, c.RetryPeriod, c.ResyncInterval, c.RequestTimeout, c.UpdateGrace}
	if want := []int{15, 10, 2, 10, 30, 600}; !slices.Equal(got, want) {
		t.Errorf("[capi] durations = %v, want %v", got, want)
	}
	if want := []string{"member", "load-balancer_member"}; !slices.Equal(c.AppCredentialRoles, want) {
		t.Errorf("[capi]/app_credential_roles = %v, want %v", c.AppCredentialRoles, want)
	}
	if c.Namespace != "magnum-system" {
		t.Errorf("[capi]/namespace = %q", c.Namespace)
	}
}

func TestCAPIDriversRegistry(t *testing.T) {
	registered := func() []string {
		var out []string
		for _, d := range driver.Registered() {
			out = append(out, d.Name())
		}
		return out
	}()
	for _, enabled := range []bool{false, true} {
		t.Run(map[bool]string{false: "disabled", true: "enabled"}[enabled], func(t *testing.T) {
			o := capiOptions(t)
			o.CAPI.Enabled = enabled
			cond, err := NewConductor(o, ModeAllInOne, testConductorDB(t), discard)
			if err != nil {
				t.Fatalf("NewConductor: %v", err)
			}
			names := cond.Drivers.Names()
			for _, n := range registered {
				if !slices.Contains(names, n) {
					t.Errorf("registered driver %s missing from %v", n, names)
				}
			}
			for _, ep := range entryPointNames() {
				d, err := cond.Drivers.Lookup(ep)
				if enabled != (err == nil) {
					t.Errorf("Lookup(%s) error = %v with [capi]/enabled = %t", ep, err, enabled)
					continue
				}
				if enabled && d.Provides()[0].OS != capi.EntryPointOS[ep] {
					t.Errorf("%s provides %v", ep, d.Provides())
				}
			}
			drivers, err := CAPIDrivers(t.Context(), o, cond)
			if err != nil || len(drivers) != map[bool]int{false: 0, true: len(capi.EntryPointOS)}[enabled] {
				t.Errorf("CAPIDrivers = %d drivers, %v", len(drivers), err)
			}
		})
	}
}

func TestCAPIDriversConfigErrors(t *testing.T) {
	cases := []struct {
		name   string
		change func(o *config.Options)
		want   string
	}{
		{"missing kubeconfig", func(o *config.Options) { o.CAPI.Kubeconfig = "/nonexistent/kubeconfig" }, "[capi]/kubeconfig"},
		{"kubeconfig not YAML", func(o *config.Options) {
			if err := os.WriteFile(o.CAPI.Kubeconfig, []byte("{{{\n:\n"), 0o600); err != nil {
				panic(err)
			}
		}, "[capi]/kubeconfig"},
		{"no Keystone URL", func(o *config.Options) { o.KeystoneAuthtoken.AuthURL = "" }, "[keystone_authtoken]"},
		{"bad Keystone URL", func(o *config.Options) { o.KeystoneAuthtoken.AuthURL = "keystone:5000" }, "[capi]"},
		{"missing CA file", func(o *config.Options) { o.KeystoneAuthtoken.CAFile = "/nonexistent/ca.pem" }, "[keystone_authtoken]/cafile"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := capiOptions(t)
			tc.change(o)
			_, err := NewConductor(o, ModeAllInOne, testConductorDB(t), discard)
			if err == nil {
				t.Fatal("NewConductor succeeded")
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q: want one line naming %s", msg, tc.want)
			}
		})
	}
}

func TestCAPIConductorCAs(t *testing.T) {
	o := capiOptions(t)
	cond, err := NewConductor(o, ModeAllInOne, testConductorDB(t), discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx := magnum.WithRequestContext(t.Context(), &magnum.RequestContext{ProjectID: "p1", UserID: "u1"})
	cl := &magnum.Cluster{UUID: "5d1f0f0e-2c4b-4d8e-9a31-6b7c8d9e0f12", Name: "k1", ProjectID: "p1", UserID: "u1"}
	load := conductorCAs(cond)
	if _, err := load(ctx, *cl); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("CAs of a cluster without certificates: %v", err)
	}
	if err := cond.GenerateClusterCertificates(ctx, cl); err != nil {
		t.Fatal(err)
	}
	got, err := load(ctx, *cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{capi.CAKeyKubernetes, capi.CAKeyEtcd, capi.CAKeyFrontProxy, capi.CAKeyAdmin} {
		kp, ok := got[key]
		if !ok || len(kp.CertPEM) == 0 || len(kp.KeyPEM) == 0 {
			t.Errorf("%s: missing certificate or key", key)
			continue
		}
		if _, err := kp.PrivateKey(); err != nil {
			t.Errorf("%s: private key: %v", key, err)
		}
	}
}

func TestCAPICaller(t *testing.T) {
	user := caller(driver.Credentials{AuthToken: "tok", UserID: "u", ProjectID: "p", ServiceCatalog: []byte("[]")})
	if user.Service || user.Token != "tok" || user.UserID != "u" || user.ProjectID != "p" || string(user.ServiceCatalog) != "[]" {
		t.Errorf("user caller = %v", user)
	}
	if admin := caller(driver.AdminCredentials()); !admin.Service || admin.Token != "" {
		t.Errorf("admin caller = %v", admin)
	}
}

// TestCAPILoadBalancers drives the driver's load-balancer adapter over the
// Octavia double: a load balancer's floating IP is deleted before the load
// balancer (after it the IP could no longer be found by its port), and a
// cloud without Octavia is the driver's "nothing to clean".
func TestCAPILoadBalancers(t *testing.T) {
	fake := osfake.NewOctavia(t)
	fake.AddToken("user-token", "p1")
	fake.AddLoadBalancer(osfake.LoadBalancer{ID: "lb-1", Name: "kube_service_c_default_web", ProjectID: "p1",
		VIPPortID: "port-1", Listeners: []string{"l1"}})
	fake.AddFloatingIP(osfake.FloatingIP{ID: "fip-1", Address: "203.0.113.10", PortID: "port-1", ProjectID: "p1"})
	l, err := openstack.NewLoadBalancers(openstack.LoadBalancerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := loadBalancers{l}
	cred := driver.Credentials{AuthToken: "user-token", UserID: "u1", ProjectID: "p1", ServiceCatalog: fake.Catalog()}

	got, err := a.List(t.Context(), cred, "p1")
	if err != nil {
		t.Fatal(err)
	}
	want := []capi.LoadBalancer{{ID: "lb-1", Name: "kube_service_c_default_web", ProjectID: "p1",
		ProvisioningStatus: "ACTIVE", VIPPortID: "port-1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if err := a.Delete(t.Context(), cred, got[0]); err != nil {
		t.Fatal(err)
	}
	if lbs, fips := fake.LoadBalancers(), fake.FloatingIPs(); len(lbs) != 0 || len(fips) != 0 {
		t.Errorf("left: load balancers %+v, floating IPs %+v", lbs, fips)
	}

	cred.ServiceCatalog = fake.CatalogWithoutLoadBalancer()
	if _, err := a.List(t.Context(), cred, "p1"); !errors.Is(err, capi.ErrNoLoadBalancerService) {
		t.Errorf("List without Octavia: %v, want capi.ErrNoLoadBalancerService", err)
	}
}
