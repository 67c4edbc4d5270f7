package osfake

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

const timestamp = "2026-01-01T00:00:00Z"

// glanceImage renders an image the way Glance v2 does: custom properties
// at the top level next to the core attributes.
func glanceImage(img Image) map[string]any {
	vis := img.Visibility
	if vis == "" {
		vis = "public"
	}
	m := map[string]any{}
	for k, v := range img.Properties {
		m[k] = v
	}
	if img.OSDistro != "" {
		m["os_distro"] = img.OSDistro
	}
	if img.MagnumDriver != "" {
		m["magnum_driver"] = img.MagnumDriver
	}
	for k, v := range map[string]any{
		"id": img.ID, "name": img.Name, "status": "active", "visibility": vis,
		"os_hidden": img.Hidden, "protected": false, "tags": []string{},
		"container_format": "bare", "disk_format": "qcow2", "min_disk": 0, "min_ram": 0,
		"size": 1073741824, "virtual_size": nil, "checksum": nil, "owner": nil,
		"created_at": timestamp, "updated_at": timestamp,
		"self": "/v2/images/" + img.ID, "file": "/v2/images/" + img.ID + "/file",
		"schema": "/v2/schemas/image",
	} {
		m[k] = v
	}
	return m
}

func serveGlance(w http.ResponseWriter, c Call, seed Seed, pageSize int) {
	switch {
	case c.Path == "/v2/images" || c.Path == "/v2/images/":
		listImages(w, c, seed, pageSize)
	case strings.HasPrefix(c.Path, "/v2/images/") && strings.Count(c.Path, "/") == 3:
		id := strings.TrimPrefix(c.Path, "/v2/images/")
		for _, img := range seed.Images {
			if img.ID == id {
				writeJSON(w, http.StatusOK, glanceImage(img))
				return
			}
		}
		// Glance answers a missing image (and any ID that is not a UUID)
		// with a plain-text 404.
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("404 Not Found\n\nNo image found with ID " + id + "\n\n   "))
	default:
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("404 Not Found\n\nThe resource could not be found.\n\n   "))
	}
}

func listImages(w http.ResponseWriter, c Call, seed Seed, pageSize int) {
	q := c.Query
	limit := 25 // Glance [DEFAULT]/limit_param_default
	if pageSize > 0 {
		limit = pageSize
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "limit param must be an integer"})
			return
		}
		limit = n
	}
	hidden := q.Get("os_hidden") == "true"
	var matched []Image
	for _, img := range seed.Images {
		if img.Hidden != hidden {
			continue
		}
		if q.Has("name") && img.Name != q.Get("name") {
			continue
		}
		if q.Has("id") && img.ID != q.Get("id") {
			continue
		}
		matched = append(matched, img)
	}
	items, full, ok := page(matched, func(i Image) string { return i.ID }, q.Get("marker"), limit)
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("400 Bad Request\n\nmarker not found\n\n   "))
		return
	}
	out := []map[string]any{}
	for _, img := range items {
		out = append(out, glanceImage(img))
	}
	body := map[string]any{"images": out, "schema": "/v2/schemas/images", "first": "/v2/images?" + q.Encode()}
	if full {
		next := url.Values{}
		for k, v := range q {
			if k != "marker" {
				next[k] = v
			}
		}
		next.Set("marker", items[len(items)-1].ID)
		// Glance's next link is a path relative to the service root.
		body["next"] = "/v2/images?" + next.Encode()
	}
	writeJSON(w, http.StatusOK, body)
}
