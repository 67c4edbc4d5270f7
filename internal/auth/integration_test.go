package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests run against a real Keystone (scripts/ci/keystone.sh), named by
// OPENKEEL_TEST_KEYSTONE_URL. They skip when it is unset, and fail when
// CI=true.

type realKeystone struct {
	url           string
	adminPassword string
	demoPassword  string
	// service user for the Keystone under test: magnum/service when its
	// password is known, else admin/admin.
	svcUser, svcPassword, svcProject string
}

func keystoneUnderTest(t *testing.T) *realKeystone {
	t.Helper()
	url := os.Getenv("OPENKEEL_TEST_KEYSTONE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("OPENKEEL_TEST_KEYSTONE_URL is not set (CI=true): run scripts/ci/keystone.sh")
		}
		t.Skip("OPENKEEL_TEST_KEYSTONE_URL is not set: eval \"$(scripts/ci/keystone.sh)\" to run against a real Keystone")
	}
	rk := &realKeystone{
		url:           strings.TrimRight(url, "/"),
		adminPassword: os.Getenv("OPENKEEL_TEST_KEYSTONE_ADMIN_PASSWORD"),
		demoPassword:  os.Getenv("OPENKEEL_TEST_KEYSTONE_DEMO_PASSWORD"),
		svcUser:       "admin", svcProject: "admin",
	}
	if rk.adminPassword == "" {
		t.Fatal("OPENKEEL_TEST_KEYSTONE_ADMIN_PASSWORD is not set")
	}
	rk.svcPassword = rk.adminPassword
	if pw := os.Getenv("OPENKEEL_TEST_KEYSTONE_MAGNUM_PASSWORD"); pw != "" {
		rk.svcUser, rk.svcPassword, rk.svcProject = "magnum", pw, "service"
	}
	return rk
}

// authenticator returns a Keystone for the service user.
func (rk *realKeystone) authenticator(t *testing.T, cacheTime time.Duration, now func() time.Time) *Keystone {
	t.Helper()
	k, err := NewKeystone(KeystoneOptions{
		AuthURL:           rk.url,
		Username:          rk.svcUser,
		Password:          rk.svcPassword,
		ProjectName:       rk.svcProject,
		UserDomainName:    "Default",
		ProjectDomainName: "Default",
		TokenCacheTime:    cacheTime,
		Timeout:           20 * time.Second,
		Now:               now,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	return k
}

// issued is a token issued by the real Keystone.
type issued struct {
	token     string
	expiresAt time.Time
	projectID string
	userID    string
}

// issue obtains a token for user with the given scope ({"project": ...},
// {"domain": ...}, {"system": {"all": true}}).
func (rk *realKeystone) issue(t *testing.T, user, password string, scope map[string]any) issued {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{"user": map[string]any{
			"name": user, "domain": map[string]string{"id": "default"}, "password": password}}},
		"scope": scope,
	}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, rk.url+"/auth/tokens", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("issue token for %s: HTTP %d", user, resp.StatusCode)
	}
	var b struct {
		Token struct {
			ExpiresAt string `json:"expires_at"`
			User      struct {
				ID string `json:"id"`
			} `json:"user"`
			Project struct {
				ID string `json:"id"`
			} `json:"project"`
		} `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		t.Fatal(err)
	}
	exp, err := parseExpiry(b.Token.ExpiresAt)
	if err != nil {
		t.Fatal(err)
	}
	return issued{token: resp.Header.Get("X-Subject-Token"), expiresAt: exp, projectID: b.Token.Project.ID, userID: b.Token.User.ID}
}

// revoke revokes token (DELETE /v3/auth/tokens) with the admin's token.
func (rk *realKeystone) revoke(t *testing.T, token string) {
	t.Helper()
	admin := rk.issue(t, "admin", rk.adminPassword, projectScope("admin"))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, rk.url+"/auth/tokens", nil)
	req.Header.Set("X-Auth-Token", admin.token)
	req.Header.Set("X-Subject-Token", token)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke: HTTP %d", resp.StatusCode)
	}
}

// appCredentialToken creates an application credential for the owner of
// tok (deleted at the end of the test) and returns a token obtained with it.
func (rk *realKeystone) appCredentialToken(t *testing.T, tok issued, accessRules []map[string]string) string {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	send := func(method, path, token string, body any) (*http.Response, []byte) {
		t.Helper()
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequestWithContext(t.Context(), method, rk.url+path, rd)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return resp, buf.Bytes()
	}
	ac := map[string]any{"name": "okm-auth-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	if accessRules != nil {
		ac["access_rules"] = accessRules
	}
	resp, body := send(http.MethodPost, "/users/"+tok.userID+"/application_credentials", tok.token,
		map[string]any{"application_credential": ac})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create application credential: HTTP %d", resp.StatusCode)
	}
	var created struct {
		ApplicationCredential struct {
			ID     string `json:"id"`
			Secret string `json:"secret"`
		} `json:"application_credential"`
	}
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	id := created.ApplicationCredential.ID
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, rk.url+"/users/"+tok.userID+"/application_credentials/"+id, nil)
		req.Header.Set("X-Auth-Token", tok.token)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	resp, _ = send(http.MethodPost, "/auth/tokens", "", map[string]any{"auth": map[string]any{"identity": map[string]any{
		"methods":                []string{"application_credential"},
		"application_credential": map[string]string{"id": id, "secret": created.ApplicationCredential.Secret},
	}}})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("application credential token: HTTP %d", resp.StatusCode)
	}
	return resp.Header.Get("X-Subject-Token")
}

func projectScope(name string) map[string]any {
	return map[string]any{"project": map[string]any{"name": name, "domain": map[string]string{"id": "default"}}}
}

func TestKeystoneIntegration(t *testing.T) {
	rk := keystoneUnderTest(t)
	k := rk.authenticator(t, -1, nil)

	t.Run("a member token carries its project and roles", func(t *testing.T) {
		if rk.demoPassword == "" {
			t.Skip("OPENKEEL_TEST_KEYSTONE_DEMO_PASSWORD is not set")
		}
		tok := rk.issue(t, "demo", rk.demoPassword, projectScope("demo"))
		r := requestWithToken(t, tok.token)
		r.Header.Set(RequestIDHeader, "req-integration")
		rc, err := k.Authenticate(r)
		if err != nil {
			t.Fatal(err)
		}
		if rc.ProjectID != tok.projectID || rc.ProjectName != "demo" || rc.ProjectDomainID != "default" ||
			rc.UserID != tok.userID || rc.UserName != "demo" || rc.UserDomainName != "Default" {
			t.Errorf("identity: %+v", rc)
		}
		if !rc.HasRole("member") || !rc.HasRole("reader") || rc.HasRole("admin") || rc.IsAdmin {
			t.Errorf("roles %v, IsAdmin %v; want member and reader, not admin", rc.Roles, rc.IsAdmin)
		}
		if rc.RequestID != "req-integration" || rc.AuthToken != tok.token || rc.TokenExpiresUnix != tok.expiresAt.Unix() {
			t.Errorf("request fields: %q, token ok %v, expires %d", rc.RequestID, rc.AuthToken == tok.token, rc.TokenExpiresUnix)
		}
		if !bytes.Contains(rc.ServiceCatalog, []byte(`"container-infra"`)) {
			t.Errorf("catalog lacks container-infra: %.200s", rc.ServiceCatalog)
		}
	})

	t.Run("an admin project token is admin", func(t *testing.T) {
		tok := rk.issue(t, "admin", rk.adminPassword, projectScope("admin"))
		rc, err := k.Authenticate(requestWithToken(t, tok.token))
		if err != nil {
			t.Fatal(err)
		}
		if !rc.IsAdmin || rc.ProjectName != "admin" || rc.SystemScope != "" || rc.DomainID != "" {
			t.Errorf("context: %+v", rc)
		}
	})

	t.Run("a system-scoped token has system scope all", func(t *testing.T) {
		tok := rk.issue(t, "admin", rk.adminPassword, map[string]any{"system": map[string]bool{"all": true}})
		rc, err := k.Authenticate(requestWithToken(t, tok.token))
		if err != nil {
			t.Fatal(err)
		}
		if rc.SystemScope != "all" || rc.ProjectID != "" || !rc.IsAdmin {
			t.Errorf("context: %+v", rc)
		}
	})

	t.Run("a domain-scoped token names its domain", func(t *testing.T) {
		tok := rk.issue(t, "admin", rk.adminPassword, map[string]any{"domain": map[string]string{"id": "default"}})
		rc, err := k.Authenticate(requestWithToken(t, tok.token))
		if err != nil {
			t.Fatal(err)
		}
		if rc.DomainID != "default" || rc.DomainName != "Default" || rc.ProjectID != "" || rc.SystemScope != "" {
			t.Errorf("context: %+v", rc)
		}
	})

	t.Run("a missing token is refused", func(t *testing.T) {
		if _, err := k.Authenticate(requestWithToken(t, "")); !errors.Is(err, ErrMissingToken) {
			t.Fatalf("err = %v, want ErrMissingToken", err)
		}
	})

	t.Run("a malformed token is refused", func(t *testing.T) {
		for _, bad := range []string{"garbage", "gAAAAABpbm90LWEtZmVybmV0LXRva2Vu", strings.Repeat("x", 300)} {
			if _, err := k.Authenticate(requestWithToken(t, bad)); !errors.Is(err, ErrInvalidToken) {
				t.Errorf("%.20s: err = %v, want ErrInvalidToken", bad, err)
			}
		}
	})

	t.Run("an expired token is refused", func(t *testing.T) {
		// Keystone issues tokens for [token]/expiration; the clock of the
		// authenticator is moved past expires_at instead of waiting.
		tok := rk.issue(t, "admin", rk.adminPassword, projectScope("admin"))
		later := rk.authenticator(t, -1, func() time.Time { return tok.expiresAt.Add(time.Second) })
		_, err := later.Authenticate(requestWithToken(t, tok.token))
		if !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("err = %v, want an expired ErrInvalidToken", err)
		}
	})

	t.Run("a revoked token is refused once the cache no longer holds it", func(t *testing.T) {
		tok := rk.issue(t, "admin", rk.adminPassword, projectScope("admin"))
		cached := rk.authenticator(t, 0, nil)
		for _, a := range []*Keystone{k, cached} {
			if _, err := a.Authenticate(requestWithToken(t, tok.token)); err != nil {
				t.Fatal(err)
			}
		}
		rk.revoke(t, tok.token)
		if _, err := k.Authenticate(requestWithToken(t, tok.token)); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("without cache: err = %v, want ErrInvalidToken", err)
		}
		// Like keystonemiddleware: the cached validation stays good for
		// TokenCacheTime.
		if _, err := cached.Authenticate(requestWithToken(t, tok.token)); err != nil {
			t.Errorf("with cache: %v, want the cached identity", err)
		}
	})

	t.Run("a revoked service token is replaced", func(t *testing.T) {
		a := rk.authenticator(t, -1, nil)
		tok := rk.issue(t, "admin", rk.adminPassword, projectScope("admin"))
		a.mu.Lock()
		svc := a.svcToken
		a.mu.Unlock()
		rk.revoke(t, svc)
		if _, err := a.Authenticate(requestWithToken(t, tok.token)); err != nil {
			t.Fatal(err)
		}
		a.mu.Lock()
		renewed := a.svcToken != svc
		a.mu.Unlock()
		if !renewed {
			t.Error("the service token was not replaced")
		}
	})

	t.Run("application credential tokens are accepted unless restricted by access rules", func(t *testing.T) {
		if rk.demoPassword == "" {
			t.Skip("OPENKEEL_TEST_KEYSTONE_DEMO_PASSWORD is not set")
		}
		demo := rk.issue(t, "demo", rk.demoPassword, projectScope("demo"))
		plain := rk.appCredentialToken(t, demo, nil)
		rc, err := k.Authenticate(requestWithToken(t, plain))
		if err != nil {
			t.Fatalf("plain application credential: %v", err)
		}
		if rc.ProjectID != demo.projectID || !rc.HasRole("member") {
			t.Errorf("context: %+v", rc)
		}
		restricted := rk.appCredentialToken(t, demo, []map[string]string{
			{"service": "container-infra", "path": "/v1/clusters", "method": "GET"}})
		// Refused by the check of the token body, not by Keystone.
		if _, err := k.Authenticate(requestWithToken(t, restricted)); !errors.Is(err, ErrInvalidToken) ||
			!strings.Contains(err.Error(), "access rules") {
			t.Errorf("restricted application credential: %v, want ErrInvalidToken for access rules", err)
		}
	})

	t.Run("wrong service credentials fail the start-up check", func(t *testing.T) {
		bad, err := NewKeystone(KeystoneOptions{AuthURL: rk.url, Username: rk.svcUser, Password: "not-the-password",
			ProjectName: rk.svcProject, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		err = bad.Check(t.Context())
		if !errors.Is(err, ErrKeystoneUnavailable) || !strings.Contains(err.Error(), rk.url) ||
			strings.Contains(err.Error(), "not-the-password") {
			t.Errorf("Check = %v", err)
		}
	})
}
