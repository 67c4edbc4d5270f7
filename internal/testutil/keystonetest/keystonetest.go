// Package keystonetest is the test side of the real Keystone that
// scripts/ci/keystone.sh starts: its URL and users from the environment,
// project-scoped tokens, admin calls to the identity API, and catalog
// regions published for the duration of a test.
package keystonetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// Users are the users keystone.sh creates (each with a project of the same
// name, except magnum, which lives in project service).
var Users = []string{"admin", "magnum", "demo", "alt"}

// Identity holds what a test knows about the Keystone of keystone.sh.
type Identity struct {
	// URL is the identity v3 URL, e.g. http://127.0.0.1:15000/v3.
	URL string
	// Passwords are the users' passwords, by user name.
	Passwords map[string]string
	// Projects are the ids of the projects admin, demo, alt and service.
	Projects map[string]string
	// Admin is a token of admin in project admin.
	Admin string
}

// Env returns the environment variable name, skipping the test when it is
// unset (failing it instead when CI=true).
func Env(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set (required when CI=true)", name)
		}
		t.Skipf("%s is not set", name)
	}
	return v
}

// New reads OPENKEEL_TEST_KEYSTONE_URL and the users' passwords
// (OPENKEEL_TEST_KEYSTONE_<USER>_PASSWORD), takes an admin token and looks
// up the projects' ids.
func New(t testing.TB) *Identity {
	t.Helper()
	id := &Identity{
		URL:       strings.TrimRight(Env(t, "OPENKEEL_TEST_KEYSTONE_URL"), "/"),
		Passwords: map[string]string{},
		Projects:  map[string]string{},
	}
	for _, u := range Users {
		id.Passwords[u] = Env(t, "OPENKEEL_TEST_KEYSTONE_"+strings.ToUpper(u)+"_PASSWORD")
	}
	id.Admin = id.Token(t, "admin", "admin")
	for _, p := range []string{"admin", "demo", "alt", "service"} {
		var out struct {
			Projects []struct{ ID string } `json:"projects"`
		}
		id.Call(t, "", http.MethodGet, "/projects?domain_id=default&name="+p, nil, &out, 200)
		if len(out.Projects) != 1 {
			t.Fatalf("keystone: project %s not found (run scripts/ci/keystone.sh)", p)
		}
		id.Projects[p] = out.Projects[0].ID
	}
	return id
}

// Token issues a token of user scoped to project.
func (id *Identity) Token(t testing.TB, user, project string) string {
	t.Helper()
	body := fmt.Sprintf(`{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":%q,"domain":{"id":"default"},"password":%q}}},"scope":{"project":{"name":%q,"domain":{"id":"default"}}}}}`,
		user, id.Passwords[user], project)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Post(id.URL+"/auth/tokens", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("keystone: token for %s: status %d: %s", user, resp.StatusCode, b)
	}
	return resp.Header.Get("X-Subject-Token")
}

// Call sends a request to Keystone with token (the admin token when "")
// and decodes the answer into out; it fails t unless the status is in
// want, and returns the status.
func (id *Identity) Call(t testing.TB, token, method, path string, in, out any, want ...int) int {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, id.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if token == "" {
		token = id.Admin
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Auth-Token", token)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if !slices.Contains(want, resp.StatusCode) {
		t.Fatalf("keystone: %s %s: status %d: %s", method, path, resp.StatusCode, raw)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("keystone: %s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// UserID returns the id of the user named name in the default domain.
func (id *Identity) UserID(t testing.TB, name string) string {
	t.Helper()
	var out struct {
		Users []struct{ ID string } `json:"users"`
	}
	id.Call(t, "", http.MethodGet, "/users?domain_id=default&name="+name, nil, &out, 200)
	if len(out.Users) != 1 {
		t.Fatalf("keystone: user %s not found (run scripts/ci/keystone.sh)", name)
	}
	return out.Users[0].ID
}

// ServiceID returns the id of the first service of type typ, creating it
// (named name) when there is none.
func (id *Identity) ServiceID(t testing.TB, typ, name string) string {
	t.Helper()
	var out struct {
		Services []struct{ ID string } `json:"services"`
	}
	id.Call(t, "", http.MethodGet, "/services?type="+typ, nil, &out, 200)
	if len(out.Services) > 0 {
		return out.Services[0].ID
	}
	var created struct {
		Service struct{ ID string } `json:"service"`
	}
	id.Call(t, "", http.MethodPost, "/services", map[string]any{"service": map[string]any{
		"type": typ, "name": name, "enabled": true,
	}}, &created, 201)
	return created.Service.ID
}

// PublishCatalog points the catalog of region at a test's services: urls
// maps {type, name} to a URL. It creates the region if needed, removes the
// endpoints an earlier run left in it, creates one public, internal and
// admin endpoint per service, and removes them when the test ends. Tests
// running at the same time must use different regions.
func (id *Identity) PublishCatalog(t testing.TB, region, description string, urls map[[2]string]string) {
	t.Helper()
	if id.Call(t, "", http.MethodGet, "/regions/"+region, nil, nil, 200, 404) == 404 {
		id.Call(t, "", http.MethodPost, "/regions", map[string]any{"region": map[string]any{
			"id": region, "description": description,
		}}, nil, 201, 409)
	}
	clear := func() {
		var out struct {
			Endpoints []struct{ ID string } `json:"endpoints"`
		}
		id.Call(t, "", http.MethodGet, "/endpoints?region_id="+region, nil, &out, 200)
		for _, ep := range out.Endpoints {
			id.Call(t, "", http.MethodDelete, "/endpoints/"+ep.ID, nil, nil, 204, 404)
		}
	}
	clear()
	t.Cleanup(clear)
	for key, u := range urls {
		svc := id.ServiceID(t, key[0], key[1])
		for _, iface := range []string{"public", "internal", "admin"} {
			id.Call(t, "", http.MethodPost, "/endpoints", map[string]any{"endpoint": map[string]any{
				"service_id": svc, "interface": iface, "url": u, "region_id": region, "enabled": true,
			}}, nil, 201)
		}
	}
}
