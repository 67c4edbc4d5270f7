package driver_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// stub is a driver with a name, a beta flag and a provides list; the
// embedded interface is nil, so only those methods may be called.
type stub struct {
	driver.Driver
	name     string
	beta     bool
	provides []driver.Target
}

func (s stub) Name() string              { return s.name }
func (s stub) Beta() bool                { return s.beta }
func (s stub) Provides() []driver.Target { return s.provides }
func (s stub) Description() string       { return "stub " + s.name }

func vm(os string) driver.Target { return driver.Target{ServerType: "vm", OS: os, COE: "kubernetes"} }

var (
	capiUbuntu = stub{name: "k8s_cluster_api_ubuntu", provides: []driver.Target{vm("ubuntu")}}
	capiFlat   = stub{name: "k8s_cluster_api_flatcar", provides: []driver.Target{vm("flatcar")}}
	helm       = stub{name: "k8s_capi_helm_v1", provides: []driver.Target{vm("ubuntu"), vm("flatcar")}}
	betaDrv    = stub{name: "k8s_beta", beta: true, provides: []driver.Target{vm("rockylinux")}}
)

// wantErr checks that err is a *magnum.Error with the given status and
// message.
func wantErr(t *testing.T, err error, status int, msg string) {
	t.Helper()
	var me *magnum.Error
	if !errors.As(err, &me) {
		t.Fatalf("error = %v (%T), want *magnum.Error", err, err)
	}
	if me.Status != status || me.Message != msg {
		t.Fatalf("error = %d %q\nwant   %d %q", me.Status, me.Message, status, msg)
	}
}

func TestRegistryNames(t *testing.T) {
	reg := driver.NewRegistry(driver.Selection{Disabled: []string{"k8s_capi_helm_v1"}}, capiUbuntu, helm, capiFlat, betaDrv)
	want := []string{"k8s_beta", "k8s_cluster_api_flatcar", "k8s_cluster_api_ubuntu"}
	if diff := cmp.Diff(want, reg.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	t.Run("lookup finds a disabled driver by name, as stevedore does", func(t *testing.T) {
		d, err := reg.Lookup("k8s_capi_helm_v1")
		if err != nil || d.Name() != "k8s_capi_helm_v1" {
			t.Fatalf("Lookup = %v, %v", d, err)
		}
	})
	t.Run("lookup of an unknown name", func(t *testing.T) {
		_, err := reg.Lookup("nope")
		wantErr(t, err, http.StatusBadRequest, "Cluster driver (nope) not supported.")
		if !errors.Is(err, &magnum.Error{Kind: "ClusterDriverNotSupported"}) {
			t.Errorf("error kind is not ClusterDriverNotSupported: %v", err)
		}
	})
	t.Run("lookup of the empty name", func(t *testing.T) {
		_, err := reg.Lookup("")
		wantErr(t, err, http.StatusBadRequest, "Cluster driver () not supported.")
	})
}

func TestRegistryPanicsOnDuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewRegistry with a duplicate name did not panic")
		}
	}()
	driver.NewRegistry(driver.Selection{}, capiUbuntu, capiUbuntu)
}

func TestForTarget(t *testing.T) {
	tests := []struct {
		name    string
		sel     driver.Selection
		drivers []driver.Driver
		target  driver.Target
		want    string
		status  int
		msg     string
	}{
		{
			name: "provided tuple", drivers: []driver.Driver{capiUbuntu, capiFlat},
			target: vm("flatcar"), want: "k8s_cluster_api_flatcar",
		},
		{
			name: "two drivers provide the tuple: the alphabetically first wins", drivers: []driver.Driver{capiUbuntu, helm},
			target: vm("ubuntu"), want: "k8s_capi_helm_v1",
		},
		{
			name: "disabled driver does not provide", sel: driver.Selection{Disabled: []string{"k8s_capi_helm_v1"}},
			drivers: []driver.Driver{capiUbuntu, helm}, target: vm("ubuntu"), want: "k8s_cluster_api_ubuntu",
		},
		{
			name: "unknown tuple lists the sorted supported tuples", drivers: []driver.Driver{capiUbuntu, helm, capiFlat},
			target: vm("debian"), status: 400,
			msg: "Cluster type (vm, debian, kubernetes) is not supported by any loaded cluster driver. " +
				"Loaded drivers support: (vm, flatcar, kubernetes), (vm, ubuntu, kubernetes).",
		},
		{
			name: "disabled drivers' tuples are not listed", sel: driver.Selection{Disabled: []string{"k8s_capi_helm_v1", "k8s_cluster_api_flatcar"}},
			drivers: []driver.Driver{capiUbuntu, helm, capiFlat}, target: vm("flatcar"), status: 400,
			msg: "Cluster type (vm, flatcar, kubernetes) is not supported by any loaded cluster driver. " +
				"Loaded drivers support: (vm, ubuntu, kubernetes).",
		},
		{
			name: "no driver loaded", target: vm("ubuntu"), status: 400,
			msg: "Cluster type (vm, ubuntu, kubernetes) is not supported by any loaded cluster driver. " +
				"Loaded drivers support: none (no cluster drivers are loaded).",
		},
		{
			name: "every driver disabled", sel: driver.Selection{Disabled: []string{"k8s_cluster_api_ubuntu"}},
			drivers: []driver.Driver{capiUbuntu}, target: vm("ubuntu"), status: 400,
			msg: "Cluster type (vm, ubuntu, kubernetes) is not supported by any loaded cluster driver. " +
				"Loaded drivers support: none (no cluster drivers are loaded).",
		},
		{
			name: "beta driver not enabled", drivers: []driver.Driver{betaDrv}, target: vm("rockylinux"), status: 400,
			msg: "Cluster type (vm, rockylinux, kubernetes) is provided by the 'k8s_beta' driver, which is a beta driver and is not enabled. " +
				"Add 'k8s_beta' to the [drivers]/enabled_beta_drivers configuration option to use it.",
		},
		{
			name: "beta driver enabled", sel: driver.Selection{EnabledBeta: []string{"k8s_beta"}},
			drivers: []driver.Driver{betaDrv}, target: vm("rockylinux"), want: "k8s_beta",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := driver.NewRegistry(tc.sel, tc.drivers...)
			d, err := reg.ForTarget(tc.target.ServerType, tc.target.OS, tc.target.COE)
			if tc.msg != "" {
				wantErr(t, err, tc.status, tc.msg)
				return
			}
			if err != nil {
				t.Fatalf("ForTarget: %v", err)
			}
			if d.Name() != tc.want {
				t.Errorf("ForTarget = %s, want %s", d.Name(), tc.want)
			}
			if err := driver.CheckClusterType(reg, tc.target.ServerType, tc.target.OS, tc.target.COE); err != nil {
				t.Errorf("CheckClusterType: %v", err)
			}
		})
	}
}

func TestResolveTemplateDriver(t *testing.T) {
	all := []driver.Driver{capiUbuntu, capiFlat, helm, betaDrv}
	tests := []struct {
		name    string
		sel     driver.Selection
		drivers []driver.Driver
		in      driver.TemplateDriverInput
		want    string
		msg     string
	}{
		{
			name: "request driver wins over image and default", sel: driver.Selection{Default: "k8s_capi_helm_v1"},
			in:   driver.TemplateDriverInput{RequestDriver: "k8s_cluster_api_flatcar", ImageDriver: "k8s_cluster_api_ubuntu"},
			want: "k8s_cluster_api_flatcar",
		},
		{
			name: "request driver not installed",
			in:   driver.TemplateDriverInput{RequestDriver: "heat_k8s", ImageDriver: "k8s_cluster_api_ubuntu"},
			msg:  "Cluster driver (heat_k8s) not supported.",
		},
		{
			name: "request driver is not checked against the tuple",
			in:   driver.TemplateDriverInput{RequestDriver: "k8s_cluster_api_flatcar", ClusterDistro: "ubuntu"},
			want: "k8s_cluster_api_flatcar",
		},
		{
			name: "request driver that is beta and not enabled is accepted",
			in:   driver.TemplateDriverInput{RequestDriver: "k8s_beta"},
			want: "k8s_beta",
		},
		{
			name: "request driver that is disabled is still loaded", sel: driver.Selection{Disabled: []string{"k8s_cluster_api_flatcar"}},
			in:   driver.TemplateDriverInput{RequestDriver: "k8s_cluster_api_flatcar"},
			want: "k8s_cluster_api_flatcar",
		},
		{
			name: "image magnum_driver when the request has none", sel: driver.Selection{Default: "k8s_capi_helm_v1"},
			in:   driver.TemplateDriverInput{ImageDriver: "k8s_cluster_api_ubuntu"},
			want: "k8s_cluster_api_ubuntu",
		},
		{
			name: "image magnum_driver not installed",
			in:   driver.TemplateDriverInput{ImageDriver: "magnum_old"},
			msg:  "Cluster driver (magnum_old) not supported.",
		},
		{
			name: "configured default driver", sel: driver.Selection{Default: "k8s_cluster_api_ubuntu"},
			want: "k8s_cluster_api_ubuntu",
		},
		{
			name: "configured default driver not installed", sel: driver.Selection{Default: "k8s_missing"},
			msg: "Cluster driver (k8s_missing) not supported.",
		},
		{
			name: "configured default driver disabled", sel: driver.Selection{Default: "k8s_cluster_api_ubuntu", Disabled: []string{"k8s_cluster_api_ubuntu"}},
			msg: "Cluster driver (k8s_cluster_api_ubuntu) not supported.",
		},
		{
			name: "configured default driver that is beta and not enabled is accepted", sel: driver.Selection{Default: "k8s_beta"},
			want: "k8s_beta",
		},
		{
			name: "alphabetically first installed driver",
			want: "k8s_beta",
		},
		{
			name: "alphabetically first skips disabled drivers", sel: driver.Selection{Disabled: []string{"k8s_beta", "k8s_capi_helm_v1"}},
			want: "k8s_cluster_api_flatcar",
		},
		{
			name: "no driver installed", drivers: []driver.Driver{},
			in:  driver.TemplateDriverInput{ServerType: "vm", ClusterDistro: "ubuntu", COE: "kubernetes"},
			msg: "Cluster type (vm, ubuntu, kubernetes) is not supported by any loaded cluster driver. Loaded drivers support: none (no cluster drivers are loaded).",
		},
		{
			name: "every driver disabled", sel: driver.Selection{Disabled: []string{"k8s_beta", "k8s_capi_helm_v1", "k8s_cluster_api_flatcar", "k8s_cluster_api_ubuntu"}},
			in:  driver.TemplateDriverInput{ServerType: "vm", ClusterDistro: "ubuntu", COE: "kubernetes"},
			msg: "Cluster type (vm, ubuntu, kubernetes) is not supported by any loaded cluster driver. Loaded drivers support: none (no cluster drivers are loaded).",
		},
		{
			name: "configured default driver set while no driver is installed", drivers: []driver.Driver{}, sel: driver.Selection{Default: "k8s_cluster_api_ubuntu"},
			msg: "Cluster driver (k8s_cluster_api_ubuntu) not supported.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			drivers := tc.drivers
			if drivers == nil {
				drivers = all
			}
			reg := driver.NewRegistry(tc.sel, drivers...)
			got, err := driver.ResolveTemplateDriver(reg, tc.in)
			if tc.msg != "" {
				wantErr(t, err, http.StatusBadRequest, tc.msg)
				return
			}
			if err != nil {
				t.Fatalf("ResolveTemplateDriver: %v", err)
			}
			if got != tc.want {
				t.Errorf("ResolveTemplateDriver = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestGet(t *testing.T) {
	reg := driver.NewRegistry(driver.Selection{}, capiUbuntu, helm)
	t.Run("stored name wins over the tuple", func(t *testing.T) {
		d, err := reg.Get("vm", "flatcar", "kubernetes", "k8s_cluster_api_ubuntu")
		if err != nil || d.Name() != "k8s_cluster_api_ubuntu" {
			t.Fatalf("Get = %v, %v", d, err)
		}
	})
	t.Run("no stored name falls back to the tuple", func(t *testing.T) {
		d, err := reg.Get("vm", "flatcar", "kubernetes", "")
		if err != nil || d.Name() != "k8s_capi_helm_v1" {
			t.Fatalf("Get = %v, %v", d, err)
		}
	})
}

func TestList(t *testing.T) {
	reg := driver.NewRegistry(driver.Selection{Disabled: []string{"k8s_beta"}}, capiUbuntu, helm, betaDrv)
	want := []driver.ListRow{
		{Name: "k8s_capi_helm_v1", Path: "n/a"},
		{Name: "k8s_cluster_api_ubuntu", Path: "n/a"},
	}
	if diff := cmp.Diff(want, reg.List(false)); diff != "" {
		t.Errorf("List(false) (-want +got):\n%s", diff)
	}
	want = []driver.ListRow{
		{Name: "k8s_capi_helm_v1", ServerType: "vm", OS: "ubuntu", COE: "kubernetes", Path: "n/a"},
		{Name: "k8s_capi_helm_v1", ServerType: "vm", OS: "flatcar", COE: "kubernetes", Path: "n/a"},
		{Name: "k8s_cluster_api_ubuntu", ServerType: "vm", OS: "ubuntu", COE: "kubernetes", Path: "n/a"},
	}
	if diff := cmp.Diff(want, reg.List(true)); diff != "" {
		t.Errorf("List(true) (-want +got):\n%s", diff)
	}
}

func TestValidateMasterSize(t *testing.T) {
	for _, n := range []int{1, 3, 5} {
		if err := driver.ValidateMasterSize(n); err != nil {
			t.Errorf("ValidateMasterSize(%d) = %v", n, err)
		}
	}
	for _, n := range []int{0, 2, 4, -1} {
		wantErr(t, driver.ValidateMasterSize(n), 400,
			"master nodegroup size of "+strconv.Itoa(n)+" is invalid, size cannot be an even number.")
	}
}

func TestCredentialsRedactToken(t *testing.T) {
	c := driver.Credentials{AuthToken: "gAAAAsecret", UserID: "u", ProjectID: "p"}
	for _, s := range []string{c.String(), c.GoString(), c.LogValue().String()} {
		if strings.Contains(s, "gAAAAsecret") {
			t.Errorf("token leaked in %q", s)
		}
	}
}
