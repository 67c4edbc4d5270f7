package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
)

// The stand-ins for what Magnum's API tests mock (spec/exchanges/README.md,
// "The test environment"): Glance/Nova/Neutron validation, the cluster
// drivers, the policy engine when enforce itself is mocked, and the
// certificate conductor.

// testAppAuth mimics Magnum's unit-test application: no Keystone, the
// identity comes from X-Roles / X-Project-Id / X-User-Id, and is_admin is
// false unless the test injected an admin context. When the test injected
// a real context (the recorded context differs from the headers), its
// project, user and roles are used; a MagicMock context is an admin.
type testAppAuth struct{ ctx *RecordedContext }

func (a testAppAuth) Authenticate(r *http.Request) (*magnum.RequestContext, error) {
	rc := &magnum.RequestContext{ProjectID: "fake_project", UserID: "fake_user"}
	if v := r.Header.Get("X-Project-Id"); v != "" {
		rc.ProjectID = v
	}
	if v := r.Header.Get("X-User-Id"); v != "" {
		rc.UserID = v
	}
	// Split on "," without stripping, as Magnum's ContextHook does.
	rc.Roles = strings.Split(r.Header.Get("X-Roles"), ",")
	if c := a.ctx; c != nil {
		rc.IsAdmin = c.IsAdmin == true || c.IsAdmin == "<MagicMock>"
		if s, ok := c.ProjectID.(string); ok && s != "" && s != "<MagicMock>" {
			rc.ProjectID = s
		}
		if s, ok := c.UserID.(string); ok && s != "" && s != "<MagicMock>" {
			rc.UserID = s
		}
		if l, ok := c.Roles.([]any); ok {
			rc.Roles = make([]string, 0, len(l))
			for _, x := range l {
				if s, ok := x.(string); ok {
					rc.Roles = append(rc.Roles, s)
				}
			}
		}
	}
	return rc, nil
}

// keystoneLikeAuth stands in for keystonemiddleware in the paste records:
// the recorded requests carry no token, so they must be refused.
type keystoneLikeAuth struct{}

var errMissingToken = errors.New("missing token")

func (keystoneLikeAuth) Authenticate(r *http.Request) (*magnum.RequestContext, error) {
	if r.Header.Get("X-Auth-Token") == "" {
		return nil, errMissingToken
	}
	return &magnum.RequestContext{UserID: "u", ProjectID: "p", Roles: []string{"reader"}}, nil
}

// mockedPolicy stands for a mocked magnum.common.policy.enforce: the
// raising checks never raise; the one non-raising check Magnum makes
// (clustertemplate:publish) sees the mock's return value.
type mockedPolicy struct{ returns bool }

func (p mockedPolicy) Enforce(rule string, _, _ map[string]any) (bool, error) {
	if rule == "clustertemplate:publish" {
		return p.returns, nil
	}
	return true, nil
}

// permissiveDriver is what a mocked Driver.get_driver returns: a driver
// for any cluster type whose calls all succeed and change nothing (the
// RPC that would call it is itself mocked in the tests).
type permissiveDriver struct {
	name    string
	targets []driver.Target
}

func (d permissiveDriver) Name() string                   { return d.name }
func (d permissiveDriver) Beta() bool                     { return false }
func (d permissiveDriver) Provides() []driver.Target      { return d.targets }
func (d permissiveDriver) Description() string            { return "conformance stand-in for a mocked driver" }
func (d permissiveDriver) ValidateMasterResize(int) error { return nil }

// ValidateMasterSize is the base driver's rule: the tests that mock
// get_driver and post an even master count make the mock raise
// MasterNGSizeInvalid (a side effect the corpus does not record).
func (d permissiveDriver) ValidateMasterSize(n int) error { return driver.ValidateMasterSize(n) }
func (d permissiveDriver) CreateCluster(context.Context, driver.Credentials, driver.ClusterState, time.Duration) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) UpdateCluster(context.Context, driver.Credentials, driver.ClusterState) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) DeleteCluster(context.Context, driver.Credentials, driver.ClusterState) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) ResizeCluster(context.Context, driver.Credentials, driver.ClusterState, driver.Resize) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) UpgradeCluster(context.Context, driver.Credentials, driver.ClusterState, driver.Upgrade) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) CreateNodeGroup(context.Context, driver.Credentials, driver.ClusterState, magnum.NodeGroup) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) UpdateNodeGroup(context.Context, driver.Credentials, driver.ClusterState, magnum.NodeGroup) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) DeleteNodeGroup(context.Context, driver.Credentials, driver.ClusterState, magnum.NodeGroup) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) PollStatus(context.Context, driver.Credentials, driver.ClusterState) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) CanRotateCA(driver.ClusterState) error { return nil }
func (d permissiveDriver) RotateCA(context.Context, driver.Credentials, driver.ClusterState) (driver.Update, error) {
	return driver.Update{}, nil
}
func (d permissiveDriver) RotateCredential(context.Context, driver.Credentials, driver.ClusterState) (driver.Update, error) {
	return driver.Update{}, nil
}

// driverTargets are the cluster types the permissive driver claims: the
// common ones and every type named by the record's templates and body.
func driverTargets(rec Record) []driver.Target {
	var out []driver.Target
	add := func(t driver.Target) {
		for _, x := range out {
			if x == t {
				return
			}
		}
		out = append(out, t)
	}
	for _, st := range []string{"vm", "bm"} {
		for _, os := range []string{"ubuntu", "fedora-atomic", "fedora-coreos", "coreos", "centos", "mock_os"} {
			for _, coe := range []string{"kubernetes", "swarm", "swarm-mode", "mesos", "dcos"} {
				add(driver.Target{ServerType: st, OS: os, COE: coe})
			}
		}
	}
	rows := append([]any(nil), rec.DBBefore["cluster_template"]...)
	var body map[string]any
	if json.Unmarshal(rec.Request.Body, &body) == nil && body != nil {
		rows = append(rows, body)
	}
	for _, row := range rows {
		m, _ := row.(map[string]any)
		s := func(k, def string) string {
			if v, ok := m[k].(string); ok {
				return v
			}
			return def
		}
		add(driver.Target{ServerType: s("server_type", "vm"), OS: s("cluster_distro", "ubuntu"), COE: s("coe", "kubernetes")})
	}
	return out
}

var raiseRe = regexp.MustCompile(`^raise (\w+)\((.*)\)$`)

// mockErrors are the catalogue constructors of the exceptions the tests'
// mocks raise, by Magnum exception name.
var mockErrors = map[string]func(string) *magnum.Error{
	"ImageNotFound":                    magnum.ImageNotFound,
	"ImageNotAuthorized":               magnum.ImageNotAuthorized,
	"OSDistroFieldNotFound":            magnum.OSDistroFieldNotFound,
	"FlavorNotFound":                   magnum.FlavorNotFound,
	"KeyPairNotFound":                  magnum.KeyPairNotFound,
	"ExternalNetworkNotFound":          magnum.ExternalNetworkNotFound,
	"FixedNetworkNotFound":             magnum.FixedNetworkNotFound,
	"FixedSubnetNotFound":              magnum.FixedSubnetNotFound,
	"Conflict":                         magnum.Conflict,
	"InvalidParameterValue":            magnum.InvalidParameterValue,
	"FlavorZeroRootVolumeNotSupported": func(string) *magnum.Error { return magnum.FlavorZeroRootVolumeNotSupported() },
}

// mockError is the exception a mock's side_effect raises: the test passes
// the message positionally, so the message is the argument; the status is
// the catalogue's. An exception outside the catalogue is a plain error (a
// 500).
func mockError(side string) error {
	m := raiseRe.FindStringSubmatch(side)
	if m == nil {
		return nil
	}
	mk, ok := mockErrors[m[1]]
	if !ok {
		return errors.New(side)
	}
	e := *mk(m[2])
	e.Message = m[2]
	return &e
}

// osresMethod is the lookup a validate_os_resources exception comes from.
func osresMethod(err error) string {
	switch kindOf(err) {
	case "FlavorNotFound":
		return "flavor"
	case "KeyPairNotFound":
		return "keypair"
	case "ExternalNetworkNotFound":
		return "external"
	case "FixedNetworkNotFound":
		return "fixed"
	case "FixedSubnetNotFound":
		return "subnet"
	}
	return "image"
}

// errUnmockedGlance is what an unmocked Glance call meets in the unit
// tests (no Keystone): a generic failure, not a NotFound.
var errUnmockedGlance = errors.New("glance is not reachable in the unit tests")

// fakeOpenStack answers the lookups the way the record's mocks of
// magnum.api.attr_validator make them answer. Our conductor makes the
// same calls in the same order as Magnum's validators:
//
//   - template POST: enforce_driver_supported's own Glance call (unmocked:
//     a generic error, swallowed) when the body lacks cluster_distro or
//     driver; then validate_os_resources (image, flavors, networks);
//     then validate_image; then validate_flavor_root_volume_size;
//   - template PATCH: validate_os_resources, then the root-disk check;
//   - cluster POST: the root-disk check and validate_os_resources (image,
//     flavors, networks, keypair), in either order;
//   - nodegroup and cluster PATCH: the root-disk check.
//
// A mocked validate_os_resources that raises fails its first lookup; one
// that passes makes every lookup succeed (image os_distro "ubuntu").
// validate_image answers the mock's image or raises. A raising
// validate_flavor_root_volume_size fails the root-disk check.
type fakeOpenStack struct {
	template bool // the request is a /v1/clustertemplates one

	decoratorPending bool  // the next Image call is the unmocked decorator's
	osresImage       bool  // the next Image call is validate_os_resources'
	osresErr         error // validate_os_resources raises this
	osresDone        bool
	phaseImageDone   bool // validate_image has run
	image            openstack.Image
	imageErr         error
	rootErr          error // validate_flavor_root_volume_size raises this

	missingProjects bool // Keystone does not know the project
}

// osres delivers the validate_os_resources error once, on the first call
// it covers.
func (o *fakeOpenStack) osres() error {
	if o.phaseImageDone || o.osresDone {
		return nil
	}
	o.osresDone = true
	return o.osresErr
}

func (o *fakeOpenStack) Image(_ context.Context, ident string) (openstack.Image, error) {
	ok := openstack.Image{ID: ident, Name: "mock_name", OSDistro: "ubuntu"}
	if !o.template {
		if osresMethod(o.osresErr) == "image" {
			if err := o.osres(); err != nil {
				return openstack.Image{}, err
			}
		}
		return ok, nil
	}
	if o.decoratorPending {
		o.decoratorPending = false
		return openstack.Image{}, errUnmockedGlance
	}
	if o.osresImage {
		o.osresImage = false
		if err := o.osres(); err != nil {
			return openstack.Image{}, err
		}
		return ok, nil
	}
	o.phaseImageDone = true
	if o.imageErr != nil {
		return openstack.Image{}, o.imageErr
	}
	img := o.image
	img.ID = ident
	return img, nil
}

func (o *fakeOpenStack) Flavor(_ context.Context, ident string) (openstack.Flavor, error) {
	ok := openstack.Flavor{ID: ident, Name: ident, VCPUs: 1, RAM: 2048, Disk: 20}
	if !o.template {
		if osresMethod(o.osresErr) == "flavor" {
			if err := o.osres(); err != nil {
				return openstack.Flavor{}, err
			}
		}
		if o.rootErr != nil {
			ok.Disk = 0
		}
		return ok, nil
	}
	if err := o.osres(); err != nil {
		return openstack.Flavor{}, err
	}
	if o.phaseImageDone && o.rootErr != nil {
		return openstack.Flavor{}, o.rootErr
	}
	if o.rootErr != nil {
		ok.Disk = 0
	}
	return ok, nil
}

func kindOf(err error) string {
	var me *magnum.Error
	if errors.As(err, &me) {
		return me.Kind
	}
	return ""
}

func (o *fakeOpenStack) Keypair(_ context.Context, name string) (openstack.Keypair, error) {
	if !o.template && osresMethod(o.osresErr) == "keypair" {
		if err := o.osres(); err != nil {
			return openstack.Keypair{}, err
		}
	}
	return openstack.Keypair{Name: name, Type: "ssh"}, nil
}

func (o *fakeOpenStack) network(ident, method string) (openstack.Network, error) {
	n := openstack.Network{ID: ident, Name: ident, External: method == "external"}
	if !o.template && osresMethod(o.osresErr) != method {
		return n, nil
	}
	return n, o.osres()
}

func (o *fakeOpenStack) ExternalNetwork(_ context.Context, ident string) (openstack.Network, error) {
	return o.network(ident, "external")
}

func (o *fakeOpenStack) FixedNetwork(_ context.Context, ident string) (openstack.Network, error) {
	return o.network(ident, "fixed")
}

func (o *fakeOpenStack) FixedSubnet(_ context.Context, ident string) (openstack.Subnet, error) {
	n, err := o.network(ident, "subnet")
	return openstack.Subnet{ID: n.ID, Name: n.Name}, err
}

// ProjectExists is the Keystone project lookup of quota creation.
func (o *fakeOpenStack) ProjectExists(context.Context, string) (bool, error) {
	return !o.missingProjects, nil
}
