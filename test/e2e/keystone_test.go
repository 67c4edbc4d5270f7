package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// issueToken asks Keystone for a project-scoped token.
func issueToken(t *testing.T, keystone, user, password, project string) string {
	t.Helper()
	body := fmt.Sprintf(`{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":%q,"domain":{"id":"default"},"password":%q}}},"scope":{"project":{"name":%q,"domain":{"id":"default"}}}}}`,
		user, password, project)
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Post(strings.TrimRight(keystone, "/")+"/auth/tokens", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("issue token for %s: status %d", user, resp.StatusCode)
	}
	return resp.Header.Get("X-Subject-Token")
}

func revokeToken(t *testing.T, keystone, adminToken, token string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, strings.TrimRight(keystone, "/")+"/auth/tokens", nil)
	req.Header.Set("X-Auth-Token", adminToken)
	req.Header.Set("X-Subject-Token", token)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke token: status %d", resp.StatusCode)
	}
}

// TestAPIWithKeystone runs `openkeel-magnum api` behind the real Keystone
// started by scripts/ci/keystone.sh and checks valid, missing, malformed and
// revoked tokens through the whole binary.
func TestAPIWithKeystone(t *testing.T) {
	keystone := needEnv(t, "OPENKEEL_TEST_KEYSTONE_URL")
	magnumPass := needEnv(t, "OPENKEEL_TEST_KEYSTONE_MAGNUM_PASSWORD")
	demoPass := needEnv(t, "OPENKEEL_TEST_KEYSTONE_DEMO_PASSWORD")
	adminPass := needEnv(t, "OPENKEEL_TEST_KEYSTONE_ADMIN_PASSWORD")

	dir := t.TempDir()
	dbFile := filepath.Join(dir, "magnum.db")
	conf := fmt.Sprintf(`[database]
connection = sqlite:///%s

[keystone_authtoken]
www_authenticate_uri = %s
auth_url = %s
auth_type = password
username = magnum
password = %s
project_name = service
user_domain_name = Default
project_domain_name = Default
token_cache_time = -1
# Keystone is shared with the other suites of the run: allow it to be slow.
http_connect_timeout = 60
`, dbFile, keystone, keystone, magnumPass)
	confFile := filepath.Join(dir, "db.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, time.Minute, nil, binary, "db", "upgrade", "--config-file", confFile); code != 0 {
		t.Fatalf("db upgrade: %s", stderr)
	}
	s := startServer(t, conf, "api")

	demo := issueToken(t, keystone, "demo", demoPass, "demo")
	admin := issueToken(t, keystone, "admin", adminPass, "admin")

	t.Run("valid member token", func(t *testing.T) {
		// magnum-service:get_all needs the admin role: a member is refused
		// by policy, which shows the token's roles reached the policy check.
		status, header, body := get(t, s.URL+"/v1/mservices", map[string]string{"X-Auth-Token": demo})
		if status != http.StatusForbidden {
			t.Fatalf("member GET /v1/mservices: status %d, want 403: %s", status, body)
		}
		if !strings.Contains(string(body), "Policy doesn't allow magnum-service:get_all to be performed.") {
			t.Errorf("403 body %s", body)
		}
		if header.Get("OpenStack-API-Version") == "" {
			t.Error("no OpenStack-API-Version header on an authenticated v1 response")
		}
	})
	t.Run("valid admin token", func(t *testing.T) {
		status, _, body := get(t, s.URL+"/v1/mservices", map[string]string{"X-Auth-Token": admin})
		if status != http.StatusOK {
			t.Fatalf("admin GET /v1/mservices: status %d: %s", status, body)
		}
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil || doc["mservices"] == nil {
			t.Fatalf("body %s", body)
		}
	})
	check401 := func(t *testing.T, header map[string]string) {
		t.Helper()
		status, h, body := get(t, s.URL+"/v1/mservices", header)
		if status != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401: %s", status, body)
		}
		if want := `Keystone uri="` + keystone + `"`; h.Get("WWW-Authenticate") != want {
			t.Errorf("WWW-Authenticate %q, want %q", h.Get("WWW-Authenticate"), want)
		}
		var doc struct {
			Error struct {
				Code  int    `json:"code"`
				Title string `json:"title"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &doc); err != nil || doc.Error.Code != 401 || doc.Error.Title != "Unauthorized" {
			t.Errorf("401 body %s", body)
		}
	}
	t.Run("missing token", func(t *testing.T) { check401(t, nil) })
	t.Run("malformed token", func(t *testing.T) { check401(t, map[string]string{"X-Auth-Token": "not-a-token"}) })
	t.Run("missing token with a bad version header is 401, not 406", func(t *testing.T) {
		check401(t, map[string]string{"OpenStack-API-Version": "container-infra 9.99"})
	})
	t.Run("revoked token", func(t *testing.T) {
		tok := issueToken(t, keystone, "admin", adminPass, "admin")
		if status, _, body := get(t, s.URL+"/v1/mservices", map[string]string{"X-Auth-Token": tok}); status != http.StatusOK {
			t.Fatalf("before revocation: status %d: %s", status, body)
		}
		revokeToken(t, keystone, admin, tok)
		check401(t, map[string]string{"X-Auth-Token": tok})
	})
	t.Run("public root needs no token", func(t *testing.T) {
		if status, _, body := get(t, s.URL+"/", nil); status != http.StatusOK {
			t.Fatalf("GET /: %d %s", status, body)
		}
	})
}
