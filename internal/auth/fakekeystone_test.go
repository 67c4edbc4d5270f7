package auth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fakeClock is an injected clock that only moves when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fakeKeystone answers POST and GET /v3/auth/tokens like Keystone, from an
// in-memory set of user tokens.
type fakeKeystone struct {
	srv   *httptest.Server
	clock *fakeClock

	mu sync.Mutex
	// user tokens: token -> {"token": {...}} body
	tokens map[string]string
	// service tokens that GET accepts
	serviceTokens map[string]bool
	// service token lifetime
	serviceTTL time.Duration
	// password the service user must present
	password string
	// lastAuthBody is the last POST body (to check the scope sent).
	lastAuthBody map[string]any
	// status forced on every GET, when not 0
	forceStatus int

	issued      int // service tokens issued
	validations int // GET /v3/auth/tokens calls
}

func newFakeKeystone(t testing.TB, clock *fakeClock) *fakeKeystone {
	f := &fakeKeystone{
		clock:         clock,
		tokens:        map[string]string{},
		serviceTokens: map[string]bool{},
		serviceTTL:    time.Hour,
		password:      "svc-secret",
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeKeystone) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/v3/auth/tokens" {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.lastAuthBody = body
		pw, _ := dig(body, "auth", "identity", "password", "user", "password").(string)
		if pw != f.password {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}}`))
			return
		}
		f.issued++
		tok := fmt.Sprintf("svc-%d", f.issued)
		f.serviceTokens[tok] = true
		w.Header().Set("X-Subject-Token", tok)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"token": {"expires_at": %q}}`, keystoneTime(f.clock.Now().Add(f.serviceTTL)))
	case http.MethodGet:
		f.validations++
		if f.forceStatus != 0 {
			w.WriteHeader(f.forceStatus)
			return
		}
		if !f.serviceTokens[r.Header.Get("X-Auth-Token")] {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		body, ok := f.tokens[r.Header.Get("X-Subject-Token")]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error": {"code": 404, "message": "Could not find token.", "title": "Not Found"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (f *fakeKeystone) addToken(token, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[token] = body
}

func (f *fakeKeystone) revoke(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.tokens, token)
}

func (f *fakeKeystone) revokeServiceTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.serviceTokens = map[string]bool{}
}

func (f *fakeKeystone) setPassword(pw string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.password = pw
}

func (f *fakeKeystone) setForceStatus(s int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forceStatus = s
}

func (f *fakeKeystone) counts() (issued, validations int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issued, f.validations
}

func dig(m any, keys ...string) any {
	for _, k := range keys {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[k]
	}
	return m
}

func keystoneTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// projectTokenBody is a project-scoped token body as Keystone 30 returns it
// (trimmed catalog).
func projectTokenBody(expires time.Time, roles ...string) string {
	var rs []map[string]string
	for i, r := range roles {
		rs = append(rs, map[string]string{"id": fmt.Sprintf("role%d", i), "name": r})
	}
	rj, _ := json.Marshal(rs)
	return `{"token": {"methods": ["password"], "user": {"domain": {"id": "default", "name": "Default"},
  "id": "a0e636a8193048bea3f51a47d9cee816", "name": "demo", "password_expires_at": null},
  "audit_ids": ["6iU3AHxqTyWqEihG6gNNig"], "expires_at": "` + keystoneTime(expires) + `",
  "issued_at": "2026-11-30T03:31:08.000000Z",
  "project": {"domain": {"id": "default", "name": "Default"}, "id": "8585326e93214d8094c1e0729223f18c", "name": "demo"},
  "is_domain": false, "roles": ` + string(rj) + `,
  "catalog": [{"endpoints": [{"id": "5aa6", "interface": "public", "region_id": "RegionOne",
    "url": "http://127.0.0.1:9511/v1", "region": "RegionOne"}], "id": "c1", "type": "container-infra", "name": "magnum"}]}}`
}

func newTestKeystone(t *testing.T, f *fakeKeystone, clock *fakeClock, cacheTime time.Duration) *Keystone {
	t.Helper()
	k, err := NewKeystone(KeystoneOptions{
		AuthURL:        f.srv.URL + "/v3/",
		Username:       "magnum",
		Password:       "svc-secret",
		ProjectName:    "service",
		UserDomainName: "Default",
		TokenCacheTime: cacheTime,
		Timeout:        5 * time.Second,
		Now:            clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func requestWithToken(t testing.TB, token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
	if token != "" {
		r.Header.Set("X-Auth-Token", token)
	}
	return r
}
