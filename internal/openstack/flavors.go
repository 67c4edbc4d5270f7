package openstack

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

type novaFlavor struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	VCPUs int    `json:"vcpus"`
	RAM   int    `json:"ram"`
	Disk  int    `json:"disk"`
}

func (f novaFlavor) flavor() Flavor {
	return Flavor{ID: f.ID, Name: f.Name, VCPUs: f.VCPUs, RAM: f.RAM, Disk: f.Disk}
}

type novaLink struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// Flavor finds a flavor whose ID or name is ident (Magnum's validate_flavor
// and the root-disk check match `name == x or id == x`). It tries the ID
// first with a direct GET; only a name costs a listing, because Nova's flavor
// list has no name filter. The listing stops at the first match.
//
// Deviation: Magnum takes the first flavor in list order whose name or ID
// matches; here a flavor whose ID is ident wins over another named ident,
// and an admin can name a private flavor by ID (Nova's list shows admins
// only public flavors by default).
//
// Errors: 400 FlavorNotFound, 403 AuthorizationFailure when no Nova endpoint
// is available.
func (l *Lookup) Flavor(ctx context.Context, ident string) (Flavor, error) {
	sc, err := l.clients.Compute(ctx)
	if err != nil {
		return Flavor{}, err
	}
	if pathSafe(ident) {
		var body struct {
			Flavor *novaFlavor `json:"flavor"`
		}
		err := l.clients.get(ctx, sc, sc.ServiceURL("flavors", url.PathEscape(ident)), &body)
		switch st := statusOf(err); {
		case err == nil && body.Flavor != nil && body.Flavor.ID == ident:
			return body.Flavor.flavor(), nil
		case err == nil:
			// "detail" and the like name a collection, not a flavor.
		case st == http.StatusNotFound || st == http.StatusBadRequest:
		default:
			return Flavor{}, fmt.Errorf("nova: show flavor: %w", err)
		}
	}

	collection := sc.ServiceURL("flavors", "detail")
	next := collection
	for range maxPages {
		var body struct {
			Flavors []novaFlavor `json:"flavors"`
			Links   []novaLink   `json:"flavors_links"`
		}
		if err := l.clients.get(ctx, sc, next, &body); err != nil {
			return Flavor{}, fmt.Errorf("nova: list flavors: %w", err)
		}
		for _, f := range body.Flavors {
			if f.Name == ident || f.ID == ident {
				return f.flavor(), nil
			}
		}
		link := ""
		for _, ln := range body.Links {
			if ln.Rel == "next" {
				link = ln.Href
			}
		}
		if link == "" || len(body.Flavors) == 0 {
			break
		}
		if next, err = nextURL(collection, link); err != nil {
			return Flavor{}, fmt.Errorf("nova: list flavors: %w", err)
		}
	}
	return Flavor{}, FlavorNotFound(ident)
}

// Keypair reads the caller's keypair named name (Magnum's
// validate_keypair).
//
// Errors: 404 KeyPairNotFound, 403 AuthorizationFailure when no Nova
// endpoint is available.
func (l *Lookup) Keypair(ctx context.Context, name string) (Keypair, error) {
	sc, err := l.clients.Compute(ctx)
	if err != nil {
		return Keypair{}, err
	}
	if !pathSafe(name) {
		return Keypair{}, KeyPairNotFound(name)
	}
	var body struct {
		Keypair *struct {
			Name        string `json:"name"`
			Type        string `json:"type"`
			Fingerprint string `json:"fingerprint"`
		} `json:"keypair"`
	}
	err = l.clients.get(ctx, sc, sc.ServiceURL("os-keypairs", url.PathEscape(name)), &body)
	switch {
	case statusOf(err) == http.StatusNotFound:
		return Keypair{}, KeyPairNotFound(name)
	case err != nil:
		return Keypair{}, fmt.Errorf("nova: show keypair: %w", err)
	case body.Keypair == nil || body.Keypair.Name != name:
		return Keypair{}, KeyPairNotFound(name)
	}
	return Keypair{Name: body.Keypair.Name, Type: body.Keypair.Type, Fingerprint: body.Keypair.Fingerprint}, nil
}
