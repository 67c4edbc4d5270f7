package openstack

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

func TestImage(t *testing.T) {
	t.Run("found by id with one GET", func(t *testing.T) {
		h := newHarness(t, nil)
		img, err := h.lookup.Image(h.ctx, imageUbuntu)
		if err != nil {
			t.Fatal(err)
		}
		want := Image{ID: imageUbuntu, Name: "ubuntu-jammy", OSDistro: "ubuntu", MagnumDriver: "k8s_capi_helm_v1"}
		if diff := cmp.Diff(want, img, cmpopts.IgnoreFields(Image{}, "Properties")); diff != "" {
			t.Errorf("image (-want +got):\n%s", diff)
		}
		if got := img.Properties["kube_version"]; got != "v1.30.2" {
			t.Errorf("kube_version property = %q", got)
		}
		h.checkCalls(t, []string{"GET image /v2/images/" + imageUbuntu})
	})

	t.Run("found by name with a name filter", func(t *testing.T) {
		h := newHarness(t, nil)
		img, err := h.lookup.Image(h.ctx, "ubuntu-jammy")
		if err != nil {
			t.Fatal(err)
		}
		if img.ID != imageUbuntu || img.OSDistro != "ubuntu" {
			t.Errorf("image = %+v", img)
		}
		h.checkCalls(t, []string{"GET image /v2/images?name=ubuntu-jammy"})
	})

	t.Run("hidden image by id", func(t *testing.T) {
		h := newHarness(t, nil)
		img, err := h.lookup.Image(h.ctx, imageHidden)
		if err != nil {
			t.Fatal(err)
		}
		if img.OSDistro != "flatcar" {
			t.Errorf("os_distro = %q", img.OSDistro)
		}
	})

	t.Run("id wins over a name equal to it", func(t *testing.T) {
		// openstacksdk returns the direct GET's image and never lists.
		h := newHarness(t, nil)
		img, err := h.lookup.Image(h.ctx, imageUbuntu)
		if err != nil || img.ID != imageUbuntu {
			t.Fatalf("image = %+v, %v", img, err)
		}
		h.checkCalls(t, []string{"GET image /v2/images/" + imageUbuntu})
	})

	t.Run("not found", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.Image(h.ctx, "nope")
		wantError(t, err, 400, "ImageNotFound", "Image nope could not be found.")
		h.checkCalls(t, []string{"GET image /v2/images?name=nope"})
	})

	t.Run("missing id", func(t *testing.T) {
		h := newHarness(t, nil)
		id := "99999999-9999-4999-8999-999999999999"
		_, err := h.lookup.Image(h.ctx, id)
		wantError(t, err, 400, "ImageNotFound", "Image "+id+" could not be found.")
		h.checkCalls(t, []string{"GET image /v2/images/" + id, "GET image /v2/images?name=" + id})
	})

	t.Run("several images with the name", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.Image(h.ctx, "dup")
		wantError(t, err, 409, "Conflict", "Multiple images exist with same name 'dup'. Please use the image ID instead.")
	})

	t.Run("duplicates on different pages", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.SetPageSize(1)
		_, err := h.lookup.Image(h.ctx, "dup")
		wantError(t, err, 409, "Conflict", "Multiple images exist with same name 'dup'. Please use the image ID instead.")
		h.checkCalls(t, []string{
			"GET image /v2/images?name=dup",
			"GET image /v2/images?marker=" + imageDupA + "&name=dup",
		})
	})

	t.Run("list forbidden", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.Inject(osfake.Fault{Service: osfake.ServiceImage, Status: http.StatusForbidden})
		_, err := h.lookup.Image(h.ctx, "ubuntu-jammy")
		wantError(t, err, 403, "ImageNotAuthorized", "Not authorized for image ubuntu-jammy.")
	})

	t.Run("glance failure is a 500", func(t *testing.T) {
		h := newHarness(t, nil)
		h.fake.Inject(osfake.Fault{Service: osfake.ServiceImage, Status: http.StatusInternalServerError})
		_, err := h.lookup.Image(h.ctx, imageUbuntu)
		wantPlainError(t, err)
	})

	t.Run("name with reserved characters", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.Image(h.ctx, "a b/c?d&name=ubuntu-jammy")
		wantError(t, err, 400, "ImageNotFound", "Image a b/c?d&name=ubuntu-jammy could not be found.")
		calls := h.fake.Calls()
		if len(calls) != 1 || calls[0].Query.Get("name") != "a b/c?d&name=ubuntu-jammy" || len(calls[0].Query) != 1 {
			t.Errorf("requests = %v", h.paths())
		}
	})
}

func TestValidateImage(t *testing.T) {
	t.Run("image with os_distro", func(t *testing.T) {
		h := newHarness(t, nil)
		if _, err := h.lookup.ValidateImage(h.ctx, "ubuntu-jammy"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("image without os_distro", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.ValidateImage(h.ctx, "plain")
		wantError(t, err, 400, "OSDistroFieldNotFound", "Image plain doesn't contain os_distro field.")
	})
	t.Run("missing image", func(t *testing.T) {
		h := newHarness(t, nil)
		_, err := h.lookup.ValidateImage(h.ctx, imageDupA[:35]+"9")
		wantError(t, err, 400, "ImageNotFound", "Image "+imageDupA[:35]+"9 could not be found.")
	})
}

func TestUUIDLike(t *testing.T) {
	for s, want := range map[string]bool{
		imageUbuntu:                                     true,
		"11111111111141118111111111111111":              true,
		"{11111111-1111-4111-8111-111111111111}":        true,
		"urn:uuid:11111111-1111-4111-8111-111111111111": true,
		"11111111-1111-4111-8111-11111111111G":          false,
		"ubuntu":                                        false,
		"":                                              false,
	} {
		if got := uuidLike(s); got != want {
			t.Errorf("uuidLike(%q) = %v", s, got)
		}
	}
}
