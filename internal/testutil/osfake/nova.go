package osfake

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

func novaFlavor(f Flavor, detail bool, base string) map[string]any {
	m := map[string]any{
		"id": f.ID, "name": f.Name,
		"links": []map[string]string{{"rel": "self", "href": base + "/v2.1/flavors/" + f.ID}},
	}
	if detail {
		for k, v := range map[string]any{
			"vcpus": f.VCPUs, "ram": f.RAM, "disk": f.Disk, "swap": "",
			"OS-FLV-EXT-DATA:ephemeral": 0, "OS-FLV-DISABLED:disabled": false,
			"os-flavor-access:is_public": true, "rxtx_factor": 1.0,
		} {
			m[k] = v
		}
	}
	return m
}

func novaNotFound(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"itemNotFound": map[string]any{"code": 404, "message": msg}})
}

func serveNova(w http.ResponseWriter, c Call, seed Seed, pageSize int, base string) {
	switch {
	case c.Path == "/v2.1/flavors" || c.Path == "/v2.1/flavors/detail":
		listFlavors(w, c, seed, pageSize, base)
	case strings.HasPrefix(c.Path, "/v2.1/flavors/") && strings.Count(c.Path, "/") == 3:
		id := strings.TrimPrefix(c.Path, "/v2.1/flavors/")
		for _, f := range seed.Flavors {
			if f.ID == id {
				writeJSON(w, http.StatusOK, map[string]any{"flavor": novaFlavor(f, true, base)})
				return
			}
		}
		novaNotFound(w, "Flavor "+id+" could not be found.")
	case strings.HasPrefix(c.Path, "/v2.1/os-keypairs/") && strings.Count(c.Path, "/") == 3:
		name := strings.TrimPrefix(c.Path, "/v2.1/os-keypairs/")
		for _, k := range seed.Keypairs {
			if k.Name == name {
				typ := k.Type
				if typ == "" {
					typ = "ssh"
				}
				writeJSON(w, http.StatusOK, map[string]any{"keypair": map[string]any{
					"name": k.Name, "type": typ, "public_key": k.PublicKey, "fingerprint": k.Fingerprint,
					"user_id": "fake-user", "id": 1, "created_at": timestamp, "deleted": false,
					"deleted_at": nil, "updated_at": nil,
				}})
				return
			}
		}
		novaNotFound(w, "Keypair "+name+" not found for user fake-user")
	default:
		novaNotFound(w, "The resource could not be found.")
	}
}

func listFlavors(w http.ResponseWriter, c Call, seed Seed, pageSize int, base string) {
	q := c.Query
	limit := 1000 // Nova [api]/max_limit
	if pageSize > 0 {
		limit = pageSize
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"badRequest": map[string]any{"code": 400, "message": "limit must be an integer"}})
			return
		}
		limit = min(n, limit)
	}
	items, full, ok := page(seed.Flavors, func(f Flavor) string { return f.ID }, q.Get("marker"), limit)
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]any{"badRequest": map[string]any{
			"code": 400, "message": "marker [" + q.Get("marker") + "] not found"}})
		return
	}
	detail := strings.HasSuffix(c.Path, "/detail")
	out := []map[string]any{}
	for _, f := range items {
		out = append(out, novaFlavor(f, detail, base))
	}
	body := map[string]any{"flavors": out}
	if full {
		next := url.Values{}
		for k, v := range q {
			if k != "marker" {
				next[k] = v
			}
		}
		next.Set("marker", items[len(items)-1].ID)
		// Nova's next link is absolute.
		body["flavors_links"] = []map[string]string{{"rel": "next", "href": base + c.Path + "?" + next.Encode()}}
	}
	writeJSON(w, http.StatusOK, body)
}
