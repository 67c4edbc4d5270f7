package openstack

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// randomHex returns 16 random hex digits, to name test credentials.
func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func TestGrantable(t *testing.T) {
	for _, tc := range []struct {
		want, have, got []string
	}{
		{DefaultAppCredentialRoles, []string{"reader", "member"}, []string{"member"}},
		{DefaultAppCredentialRoles, []string{"Member", "load-balancer_member", "admin"}, []string{"member", "load-balancer_member"}},
		{[]string{"admin", "member"}, []string{"admin", "member"}, []string{"member"}},
		{DefaultAppCredentialRoles, []string{"reader"}, nil},
	} {
		if got := grantable(tc.want, tc.have); !slices.Equal(got, tc.got) {
			t.Errorf("grantable(%v, %v) = %v, want %v", tc.want, tc.have, got, tc.got)
		}
	}
}

func TestAppCredentialsRefuseWithoutGrantableRole(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++ }))
	defer srv.Close()
	a, err := NewAppCredentials(AppCredentialOptions{AuthURL: srv.URL + "/v3"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Create(t.Context(), Caller{Token: "t", UserID: "u", Roles: []string{"reader"}}, "magnum-x-abcde", "d")
	if !errors.Is(err, ErrNoGrantableRole) {
		t.Errorf("Create = %v, want ErrNoGrantableRole", err)
	}
	if hits != 0 {
		t.Errorf("Keystone was called %d times", hits)
	}
}

func TestAppCredentialsTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	a, err := NewAppCredentials(AppCredentialOptions{AuthURL: srv.URL + "/v3", SessionOptions: SessionOptions{Timeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = a.Create(t.Context(), Caller{Token: "t", UserID: "u", Roles: []string{"member"}}, "magnum-x-abcde", "d")
	if err == nil {
		t.Fatal("Create against a hanging Keystone succeeded")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Create took %v, want about the 300 ms timeout", took)
	}
	if strings.Contains(err.Error(), "\"t\"") {
		t.Errorf("error shows the token: %v", err)
	}
}

// keystone is the real Keystone of scripts/ci/keystone.sh.
type keystone struct {
	url, adminPassword, demoPassword string
}

func realKeystone(t *testing.T) keystone {
	t.Helper()
	u := os.Getenv("OPENKEEL_TEST_KEYSTONE_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("OPENKEEL_TEST_KEYSTONE_URL is not set (CI=true): run scripts/ci/keystone.sh")
		}
		t.Skip("OPENKEEL_TEST_KEYSTONE_URL is not set: eval \"$(scripts/ci/keystone.sh)\" to run against a real Keystone")
	}
	k := keystone{url: strings.TrimRight(u, "/"), adminPassword: os.Getenv("OPENKEEL_TEST_KEYSTONE_ADMIN_PASSWORD"),
		demoPassword: os.Getenv("OPENKEEL_TEST_KEYSTONE_DEMO_PASSWORD")}
	if k.adminPassword == "" || k.demoPassword == "" {
		t.Fatal("OPENKEEL_TEST_KEYSTONE_ADMIN_PASSWORD and OPENKEEL_TEST_KEYSTONE_DEMO_PASSWORD must be set")
	}
	return k
}

// post sends a JSON body to Keystone and returns the status, the
// X-Subject-Token header and the decoded body.
func (k keystone) post(t *testing.T, path, token string, body any) (int, string, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, k.url+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	return k.do(t, req)
}

func (k keystone) do(t *testing.T, req *http.Request) (int, string, map[string]any) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, resp.Header.Get("X-Subject-Token"), out
}

// login returns a project-scoped token of user with its user and project
// IDs and role names.
func (k keystone) login(t *testing.T, user, password, project string) Caller {
	t.Helper()
	st, tok, body := k.post(t, "/auth/tokens", "", map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{"user": map[string]any{
			"name": user, "domain": map[string]string{"id": "default"}, "password": password}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]string{"id": "default"}}},
	}})
	if st != http.StatusCreated {
		t.Fatalf("login %s: HTTP %d", user, st)
	}
	tb := body["token"].(map[string]any)
	c := Caller{Token: tok, UserID: tb["user"].(map[string]any)["id"].(string),
		ProjectID: tb["project"].(map[string]any)["id"].(string)}
	for _, r := range tb["roles"].([]any) {
		c.Roles = append(c.Roles, r.(map[string]any)["name"].(string))
	}
	return c
}

// authenticates reports whether the application credential gets a token.
func (k keystone) authenticates(t *testing.T, ac AppCredential) bool {
	t.Helper()
	st, _, _ := k.post(t, "/auth/tokens", "", map[string]any{"auth": map[string]any{"identity": map[string]any{
		"methods":                []string{"application_credential"},
		"application_credential": map[string]any{"id": ac.ID, "secret": ac.Secret}}}})
	return st == http.StatusCreated
}

func (k keystone) store(t *testing.T) *AppCredentials {
	t.Helper()
	a, err := NewAppCredentials(AppCredentialOptions{
		AuthURL: k.url,
		Service: &ServiceAuth{AuthURL: k.url, Username: "admin", Password: k.adminPassword,
			UserDomainName: "Default", ProjectName: "admin", ProjectDomainName: "Default"},
		SessionOptions: SessionOptions{Timeout: 20 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAppCredentialsKeystone creates a credential as the demo user with
// the demo user's token (its roles read from Keystone), checks that it
// authenticates and carries only the configured roles, deletes it with the
// service credentials, and deletes it again.
func TestAppCredentialsKeystone(t *testing.T) {
	k := realKeystone(t)
	a := k.store(t)
	demo := k.login(t, "demo", k.demoPassword, "demo")
	have := demo.Roles
	demo.Roles = nil // read from Keystone

	name := "magnum-" + randomHex() + "-abcde"
	ac, err := a.Create(t.Context(), demo, name, "Magnum cluster (envtest)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Delete(t.Context(), demo.UserID, ac.ID) })
	if ac.ID == "" || ac.Secret == "" || ac.Name != name || ac.UserID != demo.UserID || ac.ProjectID != demo.ProjectID {
		t.Errorf("created %v (project %s), want name %s of user %s in %s", ac, ac.ProjectID, name, demo.UserID, demo.ProjectID)
	}
	// Keystone lists the granted roles with the roles they imply (member
	// implies reader).
	want := grantable(DefaultAppCredentialRoles, have)
	for _, r := range want {
		if !slices.Contains(ac.Roles, r) {
			t.Errorf("roles = %v, want %v (the demo user has %v)", ac.Roles, want, have)
		}
	}
	if len(want) == 0 || slices.Contains(ac.Roles, "admin") {
		t.Errorf("roles = %v granted from %v", ac.Roles, have)
	}
	if !k.authenticates(t, ac) {
		t.Fatal("the new application credential does not authenticate")
	}

	if err := a.Delete(t.Context(), ac.UserID, ac.ID); err != nil {
		t.Fatalf("delete with the service credentials: %v", err)
	}
	if k.authenticates(t, ac) {
		t.Error("the deleted application credential still authenticates")
	}
	if err := a.Delete(t.Context(), ac.UserID, ac.ID); err != nil {
		t.Errorf("second delete: %v", err)
	}
}

// TestAppCredentialsKeystoneNeverAdmin creates a credential as admin with
// admin among the configured roles: admin is not granted.
func TestAppCredentialsKeystoneNeverAdmin(t *testing.T) {
	k := realKeystone(t)
	a, err := NewAppCredentials(AppCredentialOptions{AuthURL: k.url, Roles: []string{"admin", "member", "reader"},
		SessionOptions: SessionOptions{Timeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	admin := k.login(t, "admin", k.adminPassword, "admin")
	if !slices.Contains(admin.Roles, "admin") {
		t.Fatalf("the admin token has roles %v", admin.Roles)
	}
	ac, err := a.Create(t.Context(), admin, "magnum-"+randomHex()+"-adm01", "never admin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.store(t).Delete(t.Context(), ac.UserID, ac.ID) })
	if slices.Contains(ac.Roles, "admin") || len(ac.Roles) == 0 {
		t.Errorf("roles = %v, want the configured ones but admin", ac.Roles)
	}

	// A wrong token is refused by Keystone, and the error does not echo it.
	bad := Caller{Token: "gAAAA-not-a-token", UserID: admin.UserID, Roles: []string{"member"}}
	_, err = a.Create(t.Context(), bad, "magnum-bad-00000", "bad")
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), bad.Token) {
		t.Errorf("Create with a bad token: %v, want HTTP 401 without the token", err)
	}
}
