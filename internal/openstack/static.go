package openstack

import (
	"context"
	"crypto/sha1" //nolint:gosec // name-based UUIDs (RFC 9562 version 5), not security
	"fmt"
	"maps"
	"slices"
)

// Built-in resources of Static. The IDs are fixed so that templates created
// in one all-in-one run keep working in the next.
const (
	StaticImageID         = "2f6e1b0c-8f4e-4c41-9d3a-7a0c2c1f5e01"
	StaticImageName       = "ubuntu-jammy-kube"
	StaticKeypairName     = "default"
	StaticPublicNetworkID = "6b1d8a2e-3c4f-4e5a-9b6c-7d8e9f0a1b01"
	StaticPrivateNetwork  = "6b1d8a2e-3c4f-4e5a-9b6c-7d8e9f0a1b02"
	StaticPrivateSubnetID = "9c2e7f4a-1b3d-4c5e-8f6a-0b1c2d3e4f01"
)

// Static answers lookups from built-in data, for the all-in-one mode where
// no OpenStack cloud exists. It knows one image (ubuntu-jammy-kube,
// os_distro ubuntu), the flavors m1.small, m1.medium and m1.large (IDs 1, 2,
// 3), the keypair "default", the external network "public", the network
// "private" and its subnet "private-subnet", each by name or ID.
//
// With Permissive set, a name or ID that is not built in is accepted too and
// described by a made-up resource (an ubuntu image, a 2 vCPU / 4 GiB / 40 GB
// flavor, an external network for ExternalNetwork...), so that any client
// script runs unchanged; without it, unknown names fail with Magnum's
// errors, which is what API tests want.
//
// The fields may be changed before first use; Static is then safe for
// concurrent use.
type Static struct {
	Permissive bool
	Images     []Image
	Flavors    []Flavor
	Keypairs   []Keypair
	Networks   []Network
	Subnets    []Subnet
}

// NewStatic returns a Static holding the built-in resources.
func NewStatic(permissive bool) *Static {
	return &Static{
		Permissive: permissive,
		Images: []Image{{
			ID: StaticImageID, Name: StaticImageName, OSDistro: "ubuntu",
			Properties: map[string]string{"id": StaticImageID, "name": StaticImageName, "os_distro": "ubuntu"},
		}},
		Flavors: []Flavor{
			{ID: "1", Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: 20},
			{ID: "2", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40},
			{ID: "3", Name: "m1.large", VCPUs: 4, RAM: 8192, Disk: 80},
		},
		Keypairs: []Keypair{{Name: StaticKeypairName, Type: "ssh"}},
		Networks: []Network{
			{ID: StaticPublicNetworkID, Name: "public", External: true},
			{ID: StaticPrivateNetwork, Name: "private"},
		},
		Subnets: []Subnet{{ID: StaticPrivateSubnetID, Name: "private-subnet", NetworkID: StaticPrivateNetwork}},
	}
}

// nameUUID derives a stable UUID (version 5 layout) from kind and name.
func nameUUID(kind, name string) string {
	sum := sha1.Sum([]byte("openkeel-magnum/" + kind + "/" + name)) //nolint:gosec // see import
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func madeUpID(kind, ident string) string {
	if canonicalUUID.MatchString(ident) {
		return ident
	}
	return nameUUID(kind, ident)
}

// Image finds a built-in image by ID or name (see Lookup.Image).
func (s *Static) Image(_ context.Context, ident string) (Image, error) {
	var found []Image
	for _, img := range s.Images {
		if img.ID == ident || img.Name == ident {
			found = append(found, img)
		}
	}
	switch {
	case len(found) == 1:
		img := found[0]
		img.Properties = maps.Clone(img.Properties)
		return img, nil
	case len(found) > 1:
		return Image{}, imageConflict(ident)
	case s.Permissive:
		id := madeUpID("image", ident)
		return Image{ID: id, Name: ident, OSDistro: "ubuntu",
			Properties: map[string]string{"id": id, "name": ident, "os_distro": "ubuntu"}}, nil
	}
	return Image{}, ImageNotFound(ident)
}

// ValidateImage is Image plus the os_distro check (see Lookup.ValidateImage).
func (s *Static) ValidateImage(ctx context.Context, ident string) (Image, error) {
	img, err := s.Image(ctx, ident)
	if err != nil {
		return Image{}, err
	}
	if img.OSDistro == "" {
		return Image{}, OSDistroFieldNotFound(ident)
	}
	return img, nil
}

// Flavor finds a built-in flavor by ID or name (see Lookup.Flavor).
func (s *Static) Flavor(_ context.Context, ident string) (Flavor, error) {
	for _, f := range s.Flavors {
		if f.ID == ident || f.Name == ident {
			return f, nil
		}
	}
	if s.Permissive {
		return Flavor{ID: ident, Name: ident, VCPUs: 2, RAM: 4096, Disk: 40}, nil
	}
	return Flavor{}, FlavorNotFound(ident)
}

// Keypair finds a built-in keypair by name (see Lookup.Keypair).
func (s *Static) Keypair(_ context.Context, name string) (Keypair, error) {
	for _, k := range s.Keypairs {
		if k.Name == name {
			return k, nil
		}
	}
	if s.Permissive {
		return Keypair{Name: name, Type: "ssh"}, nil
	}
	return Keypair{}, KeyPairNotFound(name)
}

func (s *Static) matchNetworks(ident string, external bool) []Network {
	return slices.DeleteFunc(slices.Clone(s.Networks), func(n Network) bool {
		return (external && !n.External) || (n.ID != ident && n.Name != ident)
	})
}

// ExternalNetwork finds a built-in external network (see
// Lookup.ExternalNetwork).
func (s *Static) ExternalNetwork(_ context.Context, ident string) (Network, error) {
	found := s.matchNetworks(ident, true)
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return Network{}, externalNetworkConflict(ident)
	case s.Permissive:
		return Network{ID: madeUpID("network", ident), Name: ident, External: true}, nil
	}
	return Network{}, ExternalNetworkNotFound(ident)
}

// FixedNetwork finds a built-in network (see Lookup.FixedNetwork).
func (s *Static) FixedNetwork(_ context.Context, ident string) (Network, error) {
	found := s.matchNetworks(ident, false)
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return Network{}, fixedNetworkConflict(ident)
	case s.Permissive:
		return Network{ID: madeUpID("network", ident), Name: ident}, nil
	}
	return Network{}, FixedNetworkNotFound(ident)
}

// FixedSubnet finds a built-in subnet (see Lookup.FixedSubnet).
func (s *Static) FixedSubnet(_ context.Context, ident string) (Subnet, error) {
	var found []Subnet
	for _, sn := range s.Subnets {
		if sn.ID == ident || sn.Name == ident {
			found = append(found, sn)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return Subnet{}, fixedSubnetConflict(ident)
	case s.Permissive:
		return Subnet{ID: madeUpID("subnet", ident), Name: ident, NetworkID: StaticPrivateNetwork}, nil
	}
	return Subnet{}, FixedSubnetNotFound(ident)
}
