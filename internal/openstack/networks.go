package openstack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"
)

type neutronNetwork struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	External bool   `json:"router:external"`
}

type neutronSubnet struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	NetworkID string `json:"network_id"`
}

// ExternalNetwork finds the external network (router:external) whose name
// or ID is ident (Magnum's validate_external_network).
//
// Errors: 400 ExternalNetworkNotFound, 409 Conflict when several match, 403
// AuthorizationFailure when no Neutron endpoint is available.
func (l *Lookup) ExternalNetwork(ctx context.Context, ident string) (Network, error) {
	nets, err := l.networks(ctx, ident, true)
	switch {
	case err != nil:
		return Network{}, err
	case len(nets) == 0:
		return Network{}, ExternalNetworkNotFound(ident)
	case len(nets) > 1:
		return Network{}, externalNetworkConflict(ident)
	}
	return nets[0], nil
}

// FixedNetwork finds the network whose name or ID is ident among all the
// networks the caller sees, external ones included (Magnum's
// validate_fixed_network).
//
// Errors: 400 FixedNetworkNotFound, 409 Conflict when several match, 403
// AuthorizationFailure when no Neutron endpoint is available.
func (l *Lookup) FixedNetwork(ctx context.Context, ident string) (Network, error) {
	nets, err := l.networks(ctx, ident, false)
	switch {
	case err != nil:
		return Network{}, err
	case len(nets) == 0:
		return Network{}, FixedNetworkNotFound(ident)
	case len(nets) > 1:
		return Network{}, fixedNetworkConflict(ident)
	}
	return nets[0], nil
}

// FixedSubnet finds the subnet whose name or ID is ident (Magnum's
// validate_fixed_subnet).
//
// Errors: 400 FixedSubnetNotFound, 409 Conflict when several match, 403
// AuthorizationFailure when no Neutron endpoint is available.
func (l *Lookup) FixedSubnet(ctx context.Context, ident string) (Subnet, error) {
	sc, err := l.clients.Network(ctx)
	if err != nil {
		return Subnet{}, err
	}
	var found []Subnet
	seen := map[string]bool{}
	for _, q := range identQueries(ident, nil) {
		err := neutronList(ctx, l.clients, sc, "subnets", q, func(page []neutronSubnet) {
			for _, s := range page {
				if (s.ID == ident || s.Name == ident) && !seen[s.ID] {
					seen[s.ID] = true
					found = append(found, Subnet(s))
				}
			}
		})
		if err != nil {
			return Subnet{}, err
		}
	}
	switch len(found) {
	case 0:
		return Subnet{}, FixedSubnetNotFound(ident)
	case 1:
		return found[0], nil
	default:
		return Subnet{}, fixedSubnetConflict(ident)
	}
}

// networks returns the networks whose name or ID is exactly ident.
func (l *Lookup) networks(ctx context.Context, ident string, external bool) ([]Network, error) {
	sc, err := l.clients.Network(ctx)
	if err != nil {
		return nil, err
	}
	extra := url.Values{}
	if external {
		extra.Set("router:external", "true")
	}
	var found []Network
	seen := map[string]bool{}
	for _, q := range identQueries(ident, extra) {
		err := neutronList(ctx, l.clients, sc, "networks", q, func(page []neutronNetwork) {
			for _, n := range page {
				if external && !n.External {
					continue
				}
				if (n.ID == ident || n.Name == ident) && !seen[n.ID] {
					seen[n.ID] = true
					found = append(found, Network(n))
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}

// identQueries returns the filtered queries that together find every
// resource whose name or ID is ident: by name, and by ID when ident can be
// an ID. Neutron ANDs filters, so name-or-ID takes two queries.
func identQueries(ident string, extra url.Values) []url.Values {
	mk := func(k string) url.Values {
		q := url.Values{}
		for ek, ev := range extra {
			q[ek] = ev
		}
		q.Set(k, ident)
		return q
	}
	qs := []url.Values{mk("name")}
	if canonicalUUID.MatchString(ident) {
		qs = append(qs, mk("id"))
	}
	return qs
}

// neutronList reads every page of a filtered Neutron list. Neutron
// paginates only when asked (or when configured to), and answers then with
// <resource>_links.
func neutronList[T any](ctx context.Context, c *Clients, sc *gophercloud.ServiceClient, resource string, q url.Values, each func([]T)) error {
	collection := sc.ServiceURL(resource)
	next := collection + "?" + q.Encode()
	for range maxPages {
		var body map[string]jsonRaw
		if err := c.get(ctx, sc, next, &body); err != nil {
			return fmt.Errorf("neutron: list %s: %w", resource, err)
		}
		var items []T
		if err := decodeRaw(body[resource], &items); err != nil {
			return fmt.Errorf("neutron: list %s: %w", resource, err)
		}
		each(items)
		var links []novaLink
		if err := decodeRaw(body[resource+"_links"], &links); err != nil {
			return fmt.Errorf("neutron: list %s: %w", resource, err)
		}
		link := ""
		for _, ln := range links {
			if ln.Rel == "next" {
				link = ln.Href
			}
		}
		if link == "" || len(items) == 0 {
			return nil
		}
		var err error
		if next, err = nextURL(collection, link); err != nil {
			return fmt.Errorf("neutron: list %s: %w", resource, err)
		}
	}
	return nil
}

type jsonRaw = json.RawMessage

// decodeRaw decodes raw into v; a missing value leaves v unchanged.
func decodeRaw(raw jsonRaw, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}
