package conductor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
)

// gatedCloud answers every read only once `want` distinct reads have
// started (so reads made one after the other never finish), counts the
// reads, and fails those named in fail.
type gatedCloud struct {
	want int
	fail map[string]error

	mu      sync.Mutex
	started map[string]int
	open    chan struct{}
}

func newGatedCloud(want int, fail map[string]error) *gatedCloud {
	return &gatedCloud{want: want, fail: fail, started: map[string]int{}, open: make(chan struct{})}
}

func (g *gatedCloud) read(ctx context.Context, kind, ident string) error {
	key := kind + ":" + ident
	g.mu.Lock()
	g.started[key]++
	if len(g.started) == g.want {
		close(g.open)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.fail[key]
}

func (g *gatedCloud) Image(ctx context.Context, id string) (openstack.Image, error) {
	return openstack.Image{ID: id, OSDistro: "ubuntu"}, g.read(ctx, "image", id)
}

func (g *gatedCloud) Flavor(ctx context.Context, id string) (openstack.Flavor, error) {
	return openstack.Flavor{ID: id, Disk: 10}, g.read(ctx, "flavor", id)
}

func (g *gatedCloud) Keypair(ctx context.Context, name string) (openstack.Keypair, error) {
	return openstack.Keypair{Name: name}, g.read(ctx, "keypair", name)
}

func (g *gatedCloud) ExternalNetwork(ctx context.Context, id string) (openstack.Network, error) {
	return openstack.Network{ID: id}, g.read(ctx, "extnet", id)
}

func (g *gatedCloud) FixedNetwork(ctx context.Context, id string) (openstack.Network, error) {
	return openstack.Network{ID: id}, g.read(ctx, "net", id)
}

func (g *gatedCloud) FixedSubnet(ctx context.Context, id string) (openstack.Subnet, error) {
	return openstack.Subnet{ID: id}, g.read(ctx, "subnet", id)
}

// validateCreate runs a create's OpenStack validation as CreateCluster
// does: prefetch, then the checks in Magnum's order.
func validateCreate(ctx context.Context, cloud OpenStack, t *magnum.ClusterTemplate, cl *magnum.Cluster) error {
	l := newLookups(cloud)
	l.prefetch(ctx, clCreateLookups(t, cl))
	if err := clCheckFlavors(ctx, l, cl.Labels, cl.FlavorID, cl.MasterFlavorID); err != nil {
		return err
	}
	return clValidateResources(ctx, l, t, cl)
}

func lookupFixture() (*magnum.ClusterTemplate, *magnum.Cluster) {
	s := func(v string) *string { return &v }
	t := &magnum.ClusterTemplate{ImageID: s("img"), FlavorID: s("small"), MasterFlavorID: s("big"),
		ExternalNetworkID: s("public"), FixedNetwork: s("private"), FixedSubnet: s("private-v4")}
	cl := &magnum.Cluster{FlavorID: s("small"), MasterFlavorID: s("big"), Keypair: s("ops-key"), Labels: map[string]string{}}
	return t, cl
}

// TestCreateLookupsRunTogether: the seven reads of a create's validation
// (the two flavors twice) are six distinct reads, all in flight at once,
// each made once.
func TestCreateLookupsRunTogether(t *testing.T) {
	tmpl, cl := lookupFixture()
	g := newGatedCloud(7, nil) // image, small, big, public, private, private-v4, ops-key
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := validateCreate(ctx, g, tmpl, cl); err != nil {
		t.Fatalf("validation: %v (reads started: %v)", err, g.started)
	}
	for key, n := range g.started {
		if n != 1 {
			t.Errorf("%s read %d times, want once", key, n)
		}
	}
	if len(g.started) != 7 {
		t.Errorf("reads = %v, want 7 distinct", g.started)
	}
}

// TestCreateLookupsKeepMagnumOrder: when several reads fail, the error
// is the one Magnum's sequential validation meets first.
func TestCreateLookupsKeepMagnumOrder(t *testing.T) {
	errFlavor := errors.New("flavor big not found")
	errImage := errors.New("image not found")
	errKey := errors.New("keypair not found")
	cases := []struct {
		name string
		fail map[string]error
		want error
	}{
		{"root-disk flavors first", map[string]error{"flavor:big": errFlavor, "image:img": errImage, "keypair:ops-key": errKey}, errFlavor},
		{"image before keypair", map[string]error{"image:img": errImage, "keypair:ops-key": errKey}, errImage},
		{"keypair last", map[string]error{"keypair:ops-key": errKey}, errKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, cl := lookupFixture()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			err := validateCreate(ctx, newGatedCloud(7, tc.fail), tmpl, cl)
			if !errors.Is(err, tc.want) {
				t.Errorf("error = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestCreateLookupsBootVolume: with a boot volume the root-disk check
// reads nothing, and a null flavor is not looked up as "None".
func TestCreateLookupsBootVolume(t *testing.T) {
	tmpl, cl := lookupFixture()
	cl.Labels["boot_volume_size"] = "20"
	cl.MasterFlavorID, tmpl.MasterFlavorID = nil, nil
	keys := clCreateLookups(tmpl, cl)
	for _, k := range keys {
		if k.ident == "None" {
			t.Errorf("reads %v include the null flavor", keys)
		}
	}
	if got := fmt.Sprint(len(keys)); got != "6" {
		t.Errorf("reads = %v, want 6 (image, flavor, 2 networks, subnet, keypair)", keys)
	}
}
