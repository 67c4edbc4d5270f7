package osfake

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

func neutronNetwork(n Network, subnets []Subnet) map[string]any {
	ids := []string{}
	for _, s := range subnets {
		if s.NetworkID == n.ID {
			ids = append(ids, s.ID)
		}
	}
	return map[string]any{
		"id": n.ID, "name": n.Name, "router:external": n.External, "shared": n.Shared,
		"status": "ACTIVE", "admin_state_up": true, "subnets": ids, "mtu": 1500,
		"tenant_id": "", "project_id": "", "tags": []string{}, "description": "",
		"created_at": timestamp, "updated_at": timestamp, "revision_number": 1,
	}
}

func neutronSubnet(s Subnet) map[string]any {
	return map[string]any{
		"id": s.ID, "name": s.Name, "network_id": s.NetworkID, "cidr": s.CIDR,
		"ip_version": 4, "enable_dhcp": true, "gateway_ip": nil, "tenant_id": "",
		"project_id": "", "tags": []string{}, "description": "",
		"created_at": timestamp, "updated_at": timestamp, "revision_number": 1,
	}
}

func neutronNotFound(w http.ResponseWriter, typ, msg string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"NeutronError": map[string]any{"type": typ, "message": msg, "detail": ""}})
}

// matches applies Neutron's list filters: every given key must match, and a
// key repeated in the query matches any of its values.
func matches(q url.Values, fields map[string]string) bool {
	for k, want := range q {
		switch k {
		case "limit", "marker", "fields", "sort_key", "sort_dir", "page_reverse":
			continue
		}
		have, known := fields[k]
		if !known {
			// Neutron ignores unknown filters when filter validation is
			// off; the double does the same.
			continue
		}
		if !slices.ContainsFunc(want, func(v string) bool {
			if isBool(have) {
				// Neutron converts boolean filters: True, true, 1...
				return strings.EqualFold(v, have) || (v == "1") == (have == "true") && (v == "1" || v == "0")
			}
			return v == have
		}) {
			return false
		}
	}
	return true
}

func isBool(s string) bool { return s == "true" || s == "false" }

func serveNeutron(w http.ResponseWriter, c Call, seed Seed, pageSize int, base string) {
	switch {
	case c.Path == "/v2.0/networks":
		var out []map[string]any
		var items []Network
		for _, n := range seed.Networks {
			if matches(c.Query, map[string]string{
				"id": n.ID, "name": n.Name, "router:external": strconv.FormatBool(n.External),
				"shared": strconv.FormatBool(n.Shared),
			}) {
				items = append(items, n)
			}
		}
		items, links, ok := neutronPage(items, func(n Network) string { return n.ID }, c, pageSize, base)
		if !ok {
			neutronNotFound(w, "NetworkNotFound", "Network "+c.Query.Get("marker")+" could not be found.")
			return
		}
		for _, n := range items {
			out = append(out, neutronNetwork(n, seed.Subnets))
		}
		writeList(w, "networks", out, links)
	case strings.HasPrefix(c.Path, "/v2.0/networks/") && strings.Count(c.Path, "/") == 3:
		id := strings.TrimPrefix(c.Path, "/v2.0/networks/")
		for _, n := range seed.Networks {
			if n.ID == id {
				writeJSON(w, http.StatusOK, map[string]any{"network": neutronNetwork(n, seed.Subnets)})
				return
			}
		}
		neutronNotFound(w, "NetworkNotFound", "Network "+id+" could not be found.")
	case c.Path == "/v2.0/subnets":
		var out []map[string]any
		var items []Subnet
		for _, s := range seed.Subnets {
			if matches(c.Query, map[string]string{"id": s.ID, "name": s.Name, "network_id": s.NetworkID, "cidr": s.CIDR}) {
				items = append(items, s)
			}
		}
		items, links, ok := neutronPage(items, func(s Subnet) string { return s.ID }, c, pageSize, base)
		if !ok {
			neutronNotFound(w, "SubnetNotFound", "Subnet "+c.Query.Get("marker")+" could not be found.")
			return
		}
		for _, s := range items {
			out = append(out, neutronSubnet(s))
		}
		writeList(w, "subnets", out, links)
	case strings.HasPrefix(c.Path, "/v2.0/subnets/") && strings.Count(c.Path, "/") == 3:
		id := strings.TrimPrefix(c.Path, "/v2.0/subnets/")
		for _, s := range seed.Subnets {
			if s.ID == id {
				writeJSON(w, http.StatusOK, map[string]any{"subnet": neutronSubnet(s)})
				return
			}
		}
		neutronNotFound(w, "SubnetNotFound", "Subnet "+id+" could not be found.")
	default:
		neutronNotFound(w, "HTTPNotFound", "The resource could not be found.")
	}
}

// neutronPage paginates when the client sent limit or when a page size is
// set (Neutron's pagination_max_limit), and returns the <resource>_links
// value; Neutron's next links are absolute and carry the limit.
func neutronPage[T any](items []T, key func(T) string, c Call, pageSize int, base string) ([]T, []map[string]string, bool) {
	limit := pageSize
	if v := c.Query.Get("limit"); v != "" {
		n, _ := strconv.Atoi(v)
		if limit == 0 || n < limit {
			limit = n
		}
	}
	out, full, ok := page(items, key, c.Query.Get("marker"), limit)
	if !ok || !full {
		return out, nil, ok
	}
	next := url.Values{}
	for k, v := range c.Query {
		if k != "marker" {
			next[k] = v
		}
	}
	next.Set("limit", strconv.Itoa(limit))
	next.Set("marker", key(out[len(out)-1]))
	return out, []map[string]string{{"rel": "next", "href": base + c.Path + "?" + next.Encode()}}, true
}

func writeList(w http.ResponseWriter, key string, items []map[string]any, links []map[string]string) {
	if items == nil {
		items = []map[string]any{}
	}
	body := map[string]any{key: items}
	if links != nil {
		body[key+"_links"] = links
	}
	writeJSON(w, http.StatusOK, body)
}
