package driver

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// registered holds every driver linked into the binary. It is the only
// package-level mutable state: it is written by Register from init functions
// and read when the application builds its Registry.
var (
	registeredMu sync.RWMutex
	registered   = map[string]Driver{}
)

// Register installs a driver under its Name, the way a Python entry point of
// the group "magnum.drivers" installs a Magnum driver. It is meant to be
// called from an init function and panics on an empty or duplicate name
// (a programmer error).
func Register(d Driver) {
	registeredMu.Lock()
	defer registeredMu.Unlock()
	name := d.Name()
	if name == "" {
		panic("driver: Register with an empty driver name")
	}
	if _, dup := registered[name]; dup {
		panic(fmt.Sprintf("driver: Register called twice for driver %q", name))
	}
	registered[name] = d
}

// Registered returns every driver installed with Register, sorted by name.
func Registered() []Driver {
	registeredMu.RLock()
	defer registeredMu.RUnlock()
	out := make([]Driver, 0, len(registered))
	for _, d := range registered {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Driver) int { return cmp.Compare(a.Name(), b.Name()) })
	return out
}

// Selection carries the [drivers] options that choose among the installed
// drivers.
type Selection struct {
	// Disabled is [drivers]/disabled_drivers: entry-point names that are not
	// loaded when Magnum lists its drivers (by tuple, for the default and
	// for `driver list`).
	Disabled []string
	// EnabledBeta is [drivers]/enabled_beta_drivers: beta drivers that may
	// be chosen by (server_type, os, coe).
	EnabledBeta []string
	// Default is [drivers]/default_driver ("" when unset).
	Default string
}

// Registry is the set of installed drivers seen through one Selection. It is
// immutable and safe for concurrent use.
type Registry struct {
	all map[string]Driver
	sel Selection
}

// NewRegistry returns a Registry of the given drivers. It panics on a
// duplicate or empty name. Tests use it; the application uses Installed.
func NewRegistry(sel Selection, drivers ...Driver) *Registry {
	r := &Registry{all: make(map[string]Driver, len(drivers)), sel: sel}
	for _, d := range drivers {
		name := d.Name()
		if name == "" {
			panic("driver: NewRegistry with an empty driver name")
		}
		if _, dup := r.all[name]; dup {
			panic(fmt.Sprintf("driver: NewRegistry with driver %q twice", name))
		}
		r.all[name] = d
	}
	return r
}

// Installed returns a Registry of every driver installed with Register.
func Installed(sel Selection) *Registry {
	return NewRegistry(sel, Registered()...)
}

// Selection returns the [drivers] options the registry applies.
func (r *Registry) Selection() Selection { return r.sel }

// Names returns the names of the enabled (installed and not disabled)
// drivers, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.all))
	for name := range r.all {
		if !slices.Contains(r.sel.Disabled, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Enabled returns the enabled drivers, sorted by name.
func (r *Registry) Enabled() []Driver {
	names := r.Names()
	out := make([]Driver, len(names))
	for i, n := range names {
		out[i] = r.all[n]
	}
	return out
}

// Lookup loads a driver by name, as Magnum loads the template's stored
// driver. An unknown name is 400 ClusterDriverNotSupported.
//
// Magnum: magnum/drivers/common/driver.py:128 loads a named driver with
// stevedore's DriverManager, which does not consult
// [drivers]/disabled_drivers, so a disabled driver named by a template is
// still loaded; Lookup keeps that. Beta drivers are not checked here either.
func (r *Registry) Lookup(name string) (Driver, error) {
	if d, ok := r.all[name]; ok && name != "" {
		return d, nil
	}
	return nil, magnum.ClusterDriverNotSupported(name)
}

// Targets returns every (server_type, os, coe) tuple provided by an enabled
// driver, sorted and without duplicates.
func (r *Registry) Targets() []Target {
	var out []Target
	for _, d := range r.Enabled() {
		for _, t := range d.Provides() {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.SortFunc(out, Target.compare)
	return out
}

// ForTarget returns the enabled driver that provides (serverType, os, coe),
// as Magnum's get_driver does without a driver name: 400
// ClusterTypeNotSupported when no enabled driver provides the tuple, 400
// ClusterTypeBetaNotEnabled when its driver is beta and not listed in
// [drivers]/enabled_beta_drivers.
//
// When several enabled drivers provide the same tuple, Magnum keeps the one
// whose entry point it loaded last, an order that depends on the Python
// installation; here the alphabetically first name wins, so the choice is
// stable. Templates store the driver name, so this only matters for
// templates without one.
func (r *Registry) ForTarget(serverType, os, coe string) (Driver, error) {
	t := Target{ServerType: serverType, OS: os, COE: coe}
	for _, d := range r.Enabled() {
		if !slices.Contains(d.Provides(), t) {
			continue
		}
		if d.Beta() && !slices.Contains(r.sel.EnabledBeta, d.Name()) {
			return nil, magnum.ClusterTypeBetaNotEnabled(serverType, os, coe, d.Name())
		}
		return d, nil
	}
	supported := make([]string, 0, len(r.Targets()))
	for _, s := range r.Targets() {
		supported = append(supported, s.String())
	}
	return nil, magnum.ClusterTypeNotSupported(serverType, os, coe, supported)
}

// Get is Magnum's Driver.get_driver(server_type, os, coe, driver_name): with
// a name, the driver is loaded by name (Lookup); without one, it is chosen by
// tuple (ForTarget). The conductor calls it with the template's stored
// fields to find the driver of a cluster.
func (r *Registry) Get(serverType, os, coe, name string) (Driver, error) {
	if name != "" {
		return r.Lookup(name)
	}
	return r.ForTarget(serverType, os, coe)
}

// DefaultName is Magnum's get_default_driver: [drivers]/default_driver when
// set (it must name an enabled driver, else 400 ClusterDriverNotSupported),
// otherwise the alphabetically first enabled driver, otherwise "" (no driver
// is installed or all are disabled).
func (r *Registry) DefaultName() (string, error) {
	names := r.Names()
	if r.sel.Default != "" {
		if !slices.Contains(names, r.sel.Default) {
			return "", magnum.ClusterDriverNotSupported(r.sel.Default)
		}
		return r.sel.Default, nil
	}
	if len(names) == 0 {
		return "", nil
	}
	return names[0], nil
}

// ListRow is one row of `driver list`: the entry-point name and, with
// --details, one provided cluster type (one row per tuple). Path is the
// Heat template path column of magnum-driver-manage, always "n/a" here.
type ListRow struct {
	Name       string `json:"name"`
	ServerType string `json:"server_type,omitempty"`
	OS         string `json:"os,omitempty"`
	COE        string `json:"coe,omitempty"`
	Path       string `json:"path"`
}

// List returns the rows of `driver list [--details]` for the enabled
// drivers, as magnum-driver-manage list-drivers prints them.
func (r *Registry) List(details bool) []ListRow {
	var rows []ListRow
	for _, d := range r.Enabled() {
		if !details {
			rows = append(rows, ListRow{Name: d.Name(), Path: "n/a"})
			continue
		}
		for _, t := range d.Provides() {
			rows = append(rows, ListRow{Name: d.Name(), ServerType: t.ServerType, OS: t.OS, COE: t.COE, Path: "n/a"})
		}
	}
	return rows
}
