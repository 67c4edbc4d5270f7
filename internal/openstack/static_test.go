package openstack

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatic(t *testing.T) {
	strict := NewStatic(false)
	ctx := t.Context()

	t.Run("built-in resources by name and id", func(t *testing.T) {
		img, err := strict.ValidateImage(ctx, StaticImageName)
		if err != nil || img.ID != StaticImageID || img.OSDistro != "ubuntu" {
			t.Errorf("image = %+v, %v", img, err)
		}
		if img, err := strict.Image(ctx, StaticImageID); err != nil || img.Name != StaticImageName {
			t.Errorf("image by id = %+v, %v", img, err)
		}
		for _, ident := range []string{"m1.medium", "2"} {
			f, err := strict.Flavor(ctx, ident)
			if diff := cmp.Diff(Flavor{ID: "2", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40}, f); diff != "" || err != nil {
				t.Errorf("flavor %s: %v (-want +got):\n%s", ident, err, diff)
			}
		}
		if k, err := strict.Keypair(ctx, "default"); err != nil || k.Name != "default" {
			t.Errorf("keypair = %+v, %v", k, err)
		}
		if n, err := strict.ExternalNetwork(ctx, "public"); err != nil || n.ID != StaticPublicNetworkID || !n.External {
			t.Errorf("external network = %+v, %v", n, err)
		}
		if n, err := strict.FixedNetwork(ctx, StaticPrivateNetwork); err != nil || n.Name != "private" {
			t.Errorf("fixed network = %+v, %v", n, err)
		}
		if s, err := strict.FixedSubnet(ctx, "private-subnet"); err != nil || s.NetworkID != StaticPrivateNetwork {
			t.Errorf("subnet = %+v, %v", s, err)
		}
	})

	t.Run("strict mode refuses unknown names with Magnum's errors", func(t *testing.T) {
		_, err := strict.Image(ctx, "centos")
		wantError(t, err, 400, "ImageNotFound", "Image centos could not be found.")
		_, err = strict.Flavor(ctx, "m9.huge")
		wantError(t, err, 400, "FlavorNotFound", "Unable to find flavor m9.huge.")
		_, err = strict.Keypair(ctx, "other")
		wantError(t, err, 404, "KeyPairNotFound", "Unable to find keypair other.")
		_, err = strict.ExternalNetwork(ctx, "private")
		wantError(t, err, 400, "ExternalNetworkNotFound", "Unable to find external network private.")
		_, err = strict.FixedNetwork(ctx, "nope")
		wantError(t, err, 400, "FixedNetworkNotFound", "Unable to find fixed network nope.")
		_, err = strict.FixedSubnet(ctx, "nope")
		wantError(t, err, 400, "FixedSubnetNotFound", "Unable to find fixed subnet nope.")
	})

	t.Run("permissive mode accepts anything, stably", func(t *testing.T) {
		p := NewStatic(true)
		a, err := p.ValidateImage(ctx, "fedora-coreos-40")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := p.Image(ctx, "fedora-coreos-40")
		if a.ID != b.ID || !canonicalUUID.MatchString(a.ID) || a.OSDistro != "ubuntu" {
			t.Errorf("made-up images = %+v / %+v", a, b)
		}
		if f, err := p.Flavor(ctx, "m9.huge"); err != nil || f.Disk == 0 {
			t.Errorf("flavor = %+v, %v", f, err)
		}
		if n, err := p.ExternalNetwork(ctx, "ext-net"); err != nil || !n.External {
			t.Errorf("external network = %+v, %v", n, err)
		}
		const id = "0e5a4c3b-2a19-4f08-8e7d-6c5b4a392817"
		if n, err := p.FixedNetwork(ctx, id); err != nil || n.ID != id {
			t.Errorf("fixed network = %+v, %v", n, err)
		}
		if _, err := p.Keypair(ctx, "anything"); err != nil {
			t.Error(err)
		}
		if _, err := p.FixedSubnet(ctx, "anything"); err != nil {
			t.Error(err)
		}
		// Built-in names still resolve to the built-in resources.
		if n, _ := p.ExternalNetwork(ctx, "public"); n.ID != StaticPublicNetworkID {
			t.Errorf("public = %+v", n)
		}
	})

	t.Run("ambiguous added data", func(t *testing.T) {
		s := NewStatic(true)
		s.Networks = append(s.Networks, Network{ID: "x", Name: "public", External: true})
		_, err := s.ExternalNetwork(ctx, "public")
		wantError(t, err, 409, "Conflict",
			"Multiple external networks exist with same name 'public'. Please use the external network ID instead.")
	})

	t.Run("returned properties are copies", func(t *testing.T) {
		img, _ := strict.Image(ctx, StaticImageName)
		img.Properties["os_distro"] = "changed"
		again, _ := strict.Image(ctx, StaticImageName)
		if again.Properties["os_distro"] != "ubuntu" {
			t.Error("caller changed the built-in image")
		}
	})
}
