package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// needEnv returns an environment variable naming an external service or
// tool; the test skips when it is unset, except in CI where it fails.
func needEnv(t testing.TB, name string) string {
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

// stack is the running service the Rust harness started for this test, as
// OKM_CLIENTS_STACK describes it.
type stack struct {
	Region       string `json:"region"`
	URL          string `json:"url"`      // the recording proxy in front of the service
	Endpoint     string `json:"endpoint"` // URL + "/v1", the catalog's container-infra endpoint
	OpenStackURL string `json:"openstack_url"`
	ControlURL   string `json:"control_url"`
	ImageID      string `json:"image_id"`
	ImageName    string `json:"image_name"`
	FlavorSmall  string `json:"flavor_small"`
	FlavorMedium string `json:"flavor_medium"`
	Keypair      string `json:"keypair"`
	ExtNetName   string `json:"ext_net_name"`
	ExtNetID     string `json:"ext_net_id"`

	id *identity
}

// newStack reads the stack of this test and the Keystone around it.
func newStack(t *testing.T) *stack {
	t.Helper()
	raw := needEnv(t, "OKM_CLIENTS_STACK")
	s := &stack{}
	if err := json.Unmarshal([]byte(raw), s); err != nil {
		t.Fatalf("OKM_CLIENTS_STACK: %v", err)
	}
	s.id = newIdentity(t)
	return s
}

// control reads the control API of the harness (see tests/clients/proxy.rs)
// into out, or returns the text of the answer when out is nil.
func (s *stack) control(t testing.TB, path string, out any) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(s.ControlURL + path)
	if err != nil {
		t.Fatalf("control API: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("control API %s: %d %s", path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("control API %s: %v", path, err)
		}
	}
	return string(raw)
}

// mark returns a position in the log of the recording proxy.
func (s *stack) mark(t testing.TB) int {
	t.Helper()
	var n int
	s.control(t, "/mark", &n)
	return n
}

// exchange is one request and response seen by the recording proxy.
type exchange struct {
	Method   string `json:"method"`
	URL      string `json:"url"`
	ReqBody  string `json:"req_body"`
	Status   int    `json:"status"`
	RespBody string `json:"resp_body"`
}

// exchanges returns the exchanges recorded after mark.
func (s *stack) exchanges(t testing.TB, mark int) []exchange {
	t.Helper()
	var out []exchange
	s.control(t, fmt.Sprintf("/exchanges?since=%d", mark), &out)
	return out
}

// since renders the exchanges recorded after mark. Tokens are never shown.
func (s *stack) since(t testing.TB, mark int) string {
	t.Helper()
	return s.control(t, fmt.Sprintf("/render?since=%d", mark), nil)
}

// novaActions returns the server actions Nova received so far.
func (s *stack) novaActions(t testing.TB) []string {
	t.Helper()
	var out []string
	s.control(t, "/nova/actions", &out)
	return out
}

// watch prints the exchanges of the current (sub)test when it fails.
func (s *stack) watch(t *testing.T) {
	t.Helper()
	mark := s.mark(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("HTTP exchanges with the service during %s:\n%s", t.Name(), s.since(t, mark))
		}
	})
}

// api sends a request to the service (through the proxy) with token, at
// microversion version ("" = none), and decodes a JSON answer into out.
func (s *stack) api(t *testing.T, token, method, path, version string, in, out any) (int, http.Header) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "container-infra "+version)
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, resp.Header
}

// waitStatus polls the cluster until its status is one of want (or, with
// want "404", until it is gone) and returns the last status seen.
func (s *stack) waitStatus(t *testing.T, token, cluster string, timeout time.Duration, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		var c struct {
			Status string `json:"status"`
		}
		code, _ := s.api(t, token, http.MethodGet, "/v1/clusters/"+cluster, "latest", nil, &c)
		last = c.Status
		if code == 404 {
			last = "404"
		}
		for _, w := range want {
			if w == last {
				return last
			}
		}
		if strings.HasSuffix(last, "_FAILED") || time.Now().After(deadline) {
			t.Fatalf("cluster %s: status %q (HTTP %d), want one of %v", cluster, last, code, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// step runs one named check of a suite as a subtest that prints the HTTP
// exchanges when it fails, and counts it.
func step(t *testing.T, s *stack, name string, f func(t *testing.T)) {
	t.Helper()
	ok := t.Run(name, func(t *testing.T) {
		s.watch(t)
		f(t)
	})
	tally(t, 1, ok)
}

// ------------------------------------------------------------- Keystone

// users are the users keystone.sh creates (each with a project of the same
// name, except magnum, which lives in project service).
var users = []string{"admin", "magnum", "demo", "alt"}

// identity is what a test knows about the Keystone of keystone.sh.
type identity struct {
	URL       string            // the identity v3 URL
	Passwords map[string]string // by user name
	Projects  map[string]string // ids of the projects admin, demo, alt and service
	Admin     string            // a token of admin in project admin
}

// newIdentity reads OPENKEEL_TEST_KEYSTONE_URL and the users' passwords
// (OPENKEEL_TEST_KEYSTONE_<USER>_PASSWORD), takes an admin token and looks
// up the projects' ids.
func newIdentity(t testing.TB) *identity {
	t.Helper()
	id := &identity{
		URL:       strings.TrimRight(needEnv(t, "OPENKEEL_TEST_KEYSTONE_URL"), "/"),
		Passwords: map[string]string{},
		Projects:  map[string]string{},
	}
	for _, u := range users {
		id.Passwords[u] = needEnv(t, "OPENKEEL_TEST_KEYSTONE_"+strings.ToUpper(u)+"_PASSWORD")
	}
	id.Admin = id.Token(t, "admin", "admin")
	for _, p := range []string{"admin", "demo", "alt", "service"} {
		var out struct {
			Projects []struct{ ID string } `json:"projects"`
		}
		id.call(t, http.MethodGet, "/projects?domain_id=default&name="+url.QueryEscape(p), &out, 200)
		if len(out.Projects) != 1 {
			t.Fatalf("keystone: project %s not found (run scripts/ci/keystone.sh)", p)
		}
		id.Projects[p] = out.Projects[0].ID
	}
	return id
}

// Token issues a token of user scoped to project.
func (id *identity) Token(t testing.TB, user, project string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{"user": map[string]any{
			"name": user, "domain": map[string]any{"id": "default"}, "password": id.Passwords[user]}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]any{"id": "default"}}},
	}})
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Post(id.URL+"/auth/tokens", "application/json", bytes.NewReader(body))
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

// call sends a request to Keystone with the admin token and decodes the
// answer into out; it fails t unless the status is in want.
func (id *identity) call(t testing.TB, method, path string, out any, want ...int) {
	t.Helper()
	req, err := http.NewRequest(method, id.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", id.Admin)
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
}
