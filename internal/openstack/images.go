package openstack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// glanceImage decodes a Glance v2 image, whose custom properties are
// top-level keys.
type glanceImage map[string]any

func (g glanceImage) str(key string) string {
	switch v := g[key].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}

func (g glanceImage) image() Image {
	img := Image{
		ID: g.str("id"), Name: g.str("name"),
		OSDistro: g.str("os_distro"), MagnumDriver: g.str("magnum_driver"),
		Properties: map[string]string{},
	}
	for k, v := range g {
		if s, ok := v.(string); ok {
			img.Properties[k] = s
		}
	}
	return img
}

// Image finds an image by ID or name, as openstacksdk's
// find_image(ident, ignore_missing=False) does for Magnum: a direct GET,
// then a name-filtered list matched on ID or name. Glance image IDs are
// UUIDs, so the direct GET, which could only answer 404, is skipped for
// anything else.
//
// Errors: 400 ImageNotFound, 409 Conflict when several images match,
// 403 ImageNotAuthorized when Glance refuses the list, 403
// AuthorizationFailure when no Glance endpoint is available.
func (l *Lookup) Image(ctx context.Context, ident string) (Image, error) {
	sc, err := l.clients.Image(ctx)
	if err != nil {
		return Image{}, err
	}
	if uuidLike(ident) {
		var g glanceImage
		err := l.clients.get(ctx, sc, sc.ServiceURL("images", url.PathEscape(ident)), &g)
		switch st := statusOf(err); {
		case err == nil && g.str("id") != "":
			// openstacksdk returns what the GET found without comparing IDs.
			return g.image(), nil
		case err == nil:
			// Not an image body; go on by name.
		case st == http.StatusNotFound || st == http.StatusBadRequest || st == http.StatusForbidden:
			// openstacksdk's Resource.find falls back to the list on these.
		default:
			return Image{}, fmt.Errorf("glance: show image: %w", err)
		}
	}

	collection := sc.ServiceURL("images")
	next := collection + "?" + url.Values{"name": {ident}}.Encode()
	var found []Image
	for range maxPages {
		var body struct {
			Images []glanceImage `json:"images"`
			Next   string        `json:"next"`
		}
		err := l.clients.get(ctx, sc, next, &body)
		switch statusOf(err) {
		case 0:
			if err != nil {
				return Image{}, fmt.Errorf("glance: list images: %w", err)
			}
		case http.StatusNotFound:
			return Image{}, ImageNotFound(ident)
		case http.StatusForbidden:
			return Image{}, ImageNotAuthorized(ident)
		default:
			return Image{}, fmt.Errorf("glance: list images: %w", err)
		}
		for _, g := range body.Images {
			if g.str("id") == ident || g.str("name") == ident {
				found = append(found, g.image())
			}
		}
		if len(found) > 1 {
			return Image{}, imageConflict(ident)
		}
		if body.Next == "" || len(body.Images) == 0 {
			break
		}
		if next, err = nextURL(collection, body.Next); err != nil {
			return Image{}, fmt.Errorf("glance: list images: %w", err)
		}
	}
	if len(found) == 0 {
		return Image{}, ImageNotFound(ident)
	}
	return found[0], nil
}

// ValidateImage is Magnum's validate_image: Image, then 400
// OSDistroFieldNotFound when the image has no os_distro.
func (l *Lookup) ValidateImage(ctx context.Context, ident string) (Image, error) {
	img, err := l.Image(ctx, ident)
	if err != nil {
		return Image{}, err
	}
	if img.OSDistro == "" {
		return Image{}, OSDistroFieldNotFound(ident)
	}
	return img, nil
}
