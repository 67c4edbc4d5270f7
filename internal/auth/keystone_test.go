package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func TestAuthenticateBuildsContext(t *testing.T) {
	clock := newFakeClock()
	f := newFakeKeystone(t, clock)
	k := newTestKeystone(t, f, clock, 0)
	exp := clock.Now().Add(time.Hour)
	f.addToken("user-token", projectTokenBody(exp, "reader", "member"))

	r := requestWithToken(t, " user-token ")
	r.Header.Set(RequestIDHeader, "req-4b2b0d6e-1c3e-4d7a-9f61-3f1e2f6c1a11")
	rc, err := k.Authenticate(r)
	if err != nil {
		t.Fatal(err)
	}
	want := &magnum.RequestContext{
		RequestID:        "req-4b2b0d6e-1c3e-4d7a-9f61-3f1e2f6c1a11",
		AuthToken:        "user-token",
		UserID:           "a0e636a8193048bea3f51a47d9cee816",
		UserName:         "demo",
		UserDomainID:     "default",
		UserDomainName:   "Default",
		ProjectID:        "8585326e93214d8094c1e0729223f18c",
		ProjectName:      "demo",
		ProjectDomainID:  "default",
		Roles:            []string{"reader", "member"},
		TokenExpiresUnix: exp.Unix(),
	}
	got := *rc
	if !strings.Contains(string(got.ServiceCatalog), `"type": "container-infra"`) {
		t.Errorf("ServiceCatalog = %s, want the token's catalog", got.ServiceCatalog)
	}
	got.ServiceCatalog = nil
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}

	// The service user authenticated with the configured scope.
	if d := dig(f.lastAuthBody, "auth", "scope", "project", "name"); d != "service" {
		t.Errorf("service scope project name = %v", d)
	}
	if d := dig(f.lastAuthBody, "auth", "identity", "password", "user", "domain", "name"); d != "Default" {
		t.Errorf("service user domain = %v", d)
	}
}

func TestContextFromToken(t *testing.T) {
	exp := "2026-11-30T13:00:00.000000Z"
	tests := []struct {
		name string
		body string
		want magnum.RequestContext
	}{
		{
			name: "admin role is matched without regard to case",
			body: `{"token": {"expires_at": "` + exp + `", "user": {"id": "u1", "name": "boss", "domain": {"id": "d1", "name": "D1"}},
			  "project": {"id": "p1", "name": "proj", "domain": {"id": "d2", "name": "D2"}}, "roles": [{"id": "r", "name": "Admin"}]}}`,
			want: magnum.RequestContext{UserID: "u1", UserName: "boss", UserDomainID: "d1", UserDomainName: "D1",
				ProjectID: "p1", ProjectName: "proj", ProjectDomainID: "d2", Roles: []string{"Admin"}, IsAdmin: true},
		},
		{
			name: "domain-scoped token fills the domain and no project",
			body: `{"token": {"expires_at": "` + exp + `", "user": {"id": "u1", "name": "admin", "domain": {"id": "default", "name": "Default"}},
			  "domain": {"id": "default", "name": "Default"}, "roles": [{"id": "r", "name": "admin"}]}}`,
			want: magnum.RequestContext{UserID: "u1", UserName: "admin", UserDomainID: "default", UserDomainName: "Default",
				DomainID: "default", DomainName: "Default", Roles: []string{"admin"}, IsAdmin: true},
		},
		{
			name: "system-scoped token has system scope all",
			body: `{"token": {"expires_at": "` + exp + `", "user": {"id": "u1", "name": "admin", "domain": {"id": "default", "name": "Default"}},
			  "system": {"all": true}, "roles": [{"id": "r", "name": "reader"}]}}`,
			want: magnum.RequestContext{UserID: "u1", UserName: "admin", UserDomainID: "default", UserDomainName: "Default",
				SystemScope: "all", Roles: []string{"reader"}},
		},
		{
			name: "application credential without access rules is accepted",
			body: `{"token": {"expires_at": "` + exp + `", "user": {"id": "u1", "name": "x", "domain": {"id": "default", "name": "Default"}},
			  "application_credential": {"id": "ac", "name": "n", "restricted": true}, "roles": [{"id": "r", "name": "member"}]}}`,
			want: magnum.RequestContext{UserID: "u1", UserName: "x", UserDomainID: "default", UserDomainName: "Default", Roles: []string{"member"}},
		},
		{
			name: "unscoped token has no roles",
			body: `{"token": {"expires_at": "2026-11-30T13:00:00Z", "user": {"id": "u1", "name": "x", "domain": {"id": "default", "name": "Default"}}}}`,
			want: magnum.RequestContext{UserID: "u1", UserName: "x", UserDomainID: "default", UserDomainName: "Default", Roles: []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, expires, err := contextFromToken([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.TokenExpiresUnix = time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC).Unix()
			if diff := cmp.Diff(&want, rc); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
			if expires.Unix() != want.TokenExpiresUnix {
				t.Errorf("expires = %v", expires)
			}
		})
	}

	for name, body := range map[string]string{
		"not JSON":       `{"token": `,
		"no expires_at":  `{"token": {"user": {"id": "u"}}}`,
		"bad expires_at": `{"token": {"expires_at": "tomorrow", "user": {"id": "u"}}}`,
		"no user":        `{"token": {"expires_at": "` + exp + `"}}`,
		"access rules": `{"token": {"expires_at": "` + exp + `", "user": {"id": "u"}, "application_credential": {"id": "a",
		  "restricted": true, "access_rules": [{"id": "r", "service": "container-infra", "path": "/v1/clusters", "method": "GET"}]}}}`,
	} {
		t.Run("refuses a body with "+name, func(t *testing.T) {
			if _, _, err := contextFromToken([]byte(body)); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestTokenCache(t *testing.T) {
	t.Run("a cached token is not validated again", func(t *testing.T) {
		clock := newFakeClock()
		f := newFakeKeystone(t, clock)
		k := newTestKeystone(t, f, clock, 0)
		f.addToken("tok", projectTokenBody(clock.Now().Add(time.Hour), "member"))
		for i := 0; i < 3; i++ {
			r := requestWithToken(t, "tok")
			r.Header.Set(RequestIDHeader, "req-"+string(rune('a'+i)))
			rc, err := k.Authenticate(r)
			if err != nil {
				t.Fatal(err)
			}
			if rc.RequestID != "req-"+string(rune('a'+i)) || rc.AuthToken != "tok" {
				t.Errorf("per-request fields not refreshed: %q %q", rc.RequestID, rc.AuthToken)
			}
			rc.Roles[0] = "mutated" // must not leak into the cache
		}
		if issued, validations := f.counts(); issued != 1 || validations != 1 {
			t.Errorf("issued=%d validations=%d, want 1 and 1", issued, validations)
		}
		rc, _ := k.Authenticate(requestWithToken(t, "tok"))
		if rc.Roles[0] != "member" {
			t.Errorf("cached roles were modified by a caller: %v", rc.Roles)
		}
	})

	t.Run("a revoked token stays valid until its cache entry ends", func(t *testing.T) {
		clock := newFakeClock()
		f := newFakeKeystone(t, clock)
		k := newTestKeystone(t, f, clock, 0)
		f.addToken("tok", projectTokenBody(clock.Now().Add(time.Hour), "member"))
		if _, err := k.Authenticate(requestWithToken(t, "tok")); err != nil {
			t.Fatal(err)
		}
		f.revoke("tok")
		clock.Advance(DefaultTokenCacheTime - time.Second)
		if _, err := k.Authenticate(requestWithToken(t, "tok")); err != nil {
			t.Fatalf("within the cache time: %v", err)
		}
		clock.Advance(time.Second)
		_, err := k.Authenticate(requestWithToken(t, "tok"))
		if !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("after the cache time: %v, want ErrInvalidToken", err)
		}
		if _, validations := f.counts(); validations != 2 {
			t.Errorf("validations=%d, want 2", validations)
		}
	})

	t.Run("a cache entry never outlives the token", func(t *testing.T) {
		clock := newFakeClock()
		f := newFakeKeystone(t, clock)
		k := newTestKeystone(t, f, clock, 0)
		f.addToken("tok", projectTokenBody(clock.Now().Add(time.Minute), "member"))
		if _, err := k.Authenticate(requestWithToken(t, "tok")); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute + time.Second)
		_, err := k.Authenticate(requestWithToken(t, "tok"))
		if !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("err = %v, want an expired ErrInvalidToken", err)
		}
	})

	t.Run("a negative cache time disables the cache", func(t *testing.T) {
		clock := newFakeClock()
		f := newFakeKeystone(t, clock)
		k := newTestKeystone(t, f, clock, -1)
		f.addToken("tok", projectTokenBody(clock.Now().Add(time.Hour), "member"))
		for i := 0; i < 3; i++ {
			if _, err := k.Authenticate(requestWithToken(t, "tok")); err != nil {
				t.Fatal(err)
			}
		}
		if _, validations := f.counts(); validations != 3 {
			t.Errorf("validations=%d, want 3", validations)
		}
		if k.cache.len() != 0 {
			t.Errorf("cache holds %d entries", k.cache.len())
		}
	})

	t.Run("a rejection is cached for a few seconds only", func(t *testing.T) {
		clock := newFakeClock()
		f := newFakeKeystone(t, clock)
		k := newTestKeystone(t, f, clock, 0)
		for i := 0; i < 2; i++ {
			if _, err := k.Authenticate(requestWithToken(t, "bogus")); !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("err = %v, want ErrInvalidToken", err)
			}
		}
		if _, validations := f.counts(); validations != 1 {
			t.Errorf("validations=%d, want 1", validations)
		}
		clock.Advance(negativeCacheTime)
		f.addToken("bogus", projectTokenBody(clock.Now().Add(time.Hour), "member"))
		if _, err := k.Authenticate(requestWithToken(t, "bogus")); err != nil {
			t.Fatalf("after the negative cache time: %v", err)
		}
	})

	t.Run("the cache keeps the most recently used tokens", func(t *testing.T) {
		c := newTokenCache(2)
		now := newFakeClock().Now()
		for _, tok := range []string{"a", "b"} {
			c.put(&cacheEntry{key: keyOf(tok), rc: &magnum.RequestContext{UserID: tok}, until: now.Add(time.Minute)})
		}
		if _, ok := c.get(keyOf("a"), now); !ok {
			t.Fatal("a missing")
		}
		c.put(&cacheEntry{key: keyOf("c"), rc: &magnum.RequestContext{UserID: "c"}, until: now.Add(time.Minute)})
		if _, ok := c.get(keyOf("b"), now); ok {
			t.Error("b, the least recently used, was not evicted")
		}
		for _, tok := range []string{"a", "c"} {
			if _, ok := c.get(keyOf(tok), now); !ok {
				t.Errorf("%s evicted", tok)
			}
		}
		if c.len() != 2 {
			t.Errorf("len = %d", c.len())
		}
	})
}

func TestServiceToken(t *testing.T) {
	t.Run("is renewed before it expires", func(t *testing.T) {
		clock := newFakeClock()
		f := newFakeKeystone(t, clock)
		k := newTestKeystone(t, f, clock, -1)
		f.addToken("tok", projectTokenBody(clock.Now().Add(24*time.Hour), "member"))
		if _, err := k.Authenticate(requestWithToken(t, "tok")); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Hour - serviceTokenMargin + time.Second)
		if _, err := k.Authenticate(requestWithToken(t, "tok")); err != nil {
			t.Fatal(err)
		}
		if issued, _ := f.counts(); issued != 2 {
			t.Errorf("issued=%d, want 2", issued)
		}
	})

	t.Run("is replaced once when Keystone answers 401", func(t *testing.T) {
		clock := newFakeClock()
		f := newFakeKeystone(t, clock)
		k := newTestKeystone(t, f, clock, -1)
		f.addToken("tok", projectTokenBody(clock.Now().Add(time.Hour), "member"))
		if _, err := k.Authenticate(requestWithToken(t, "tok")); err != nil {
			t.Fatal(err)
		}
		f.revokeServiceTokens()
		if _, err := k.Authenticate(requestWithToken(t, "tok")); err != nil {
			t.Fatal(err)
		}
		if issued, validations := f.counts(); issued != 2 || validations != 3 {
			t.Errorf("issued=%d validations=%d, want 2 and 3", issued, validations)
		}
	})

	t.Run("a persistent 401 makes Keystone unavailable", func(t *testing.T) {
		clock := newFakeClock()
		f := newFakeKeystone(t, clock)
		k := newTestKeystone(t, f, clock, 0)
		f.setForceStatus(http.StatusUnauthorized)
		_, err := k.Authenticate(requestWithToken(t, "tok"))
		if !errors.Is(err, ErrKeystoneUnavailable) {
			t.Fatalf("err = %v, want ErrKeystoneUnavailable", err)
		}
		if issued, validations := f.counts(); issued != 2 || validations != 2 {
			t.Errorf("issued=%d validations=%d, want 2 and 2", issued, validations)
		}
	})

	t.Run("rejected service credentials make Keystone unavailable", func(t *testing.T) {
		clock := newFakeClock()
		f := newFakeKeystone(t, clock)
		f.setPassword("something else")
		k := newTestKeystone(t, f, clock, 0)
		_, err := k.Authenticate(requestWithToken(t, "tok"))
		if !errors.Is(err, ErrKeystoneUnavailable) {
			t.Fatalf("err = %v, want ErrKeystoneUnavailable", err)
		}
	})
}

func TestAuthenticateErrors(t *testing.T) {
	clock := newFakeClock()
	f := newFakeKeystone(t, clock)
	k := newTestKeystone(t, f, clock, 0)

	tests := []struct {
		name   string
		header http.Header
		want   error
	}{
		{"no token", http.Header{}, ErrMissingToken},
		{"blank token", http.Header{"X-Auth-Token": {"  "}}, ErrMissingToken},
		{"unknown token", http.Header{"X-Auth-Token": {"gAAAAABnope"}}, ErrInvalidToken},
		{"unknown X-Storage-Token", http.Header{"X-Storage-Token": {"gAAAAABnope2"}}, ErrInvalidToken},
		{"token with non-ASCII bytes", http.Header{"X-Auth-Token": {"caf\xc3\xa9"}}, ErrInvalidToken},
		{"token too long", http.Header{"X-Auth-Token": {strings.Repeat("a", maxTokenLength+1)}}, ErrInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
			r.Header = tt.header
			rc, err := k.Authenticate(r)
			if !errors.Is(err, tt.want) || rc != nil {
				t.Fatalf("Authenticate = %v, %v; want %v", rc, err, tt.want)
			}
			var ae *Error
			if !errors.As(err, &ae) {
				t.Errorf("%T is not an *auth.Error", err)
			}
			for _, v := range tt.header {
				if tok := strings.TrimSpace(v[0]); tok != "" && strings.Contains(err.Error(), tok) {
					t.Errorf("error %q contains the token", err)
				}
			}
		})
	}
	if _, validations := f.counts(); validations != 2 {
		t.Errorf("validations=%d, want 2 (only well-formed tokens reach Keystone)", validations)
	}

	t.Run("X-Storage-Token is accepted", func(t *testing.T) {
		f.addToken("storage", projectTokenBody(clock.Now().Add(time.Hour), "member"))
		r := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
		r.Header.Set("X-Storage-Token", "storage")
		if _, err := k.Authenticate(r); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Keystone errors other than 404 make it unavailable and are not cached", func(t *testing.T) {
		f.addToken("good", projectTokenBody(clock.Now().Add(time.Hour), "member"))
		f.setForceStatus(http.StatusInternalServerError)
		if _, err := k.Authenticate(requestWithToken(t, "good")); !errors.Is(err, ErrKeystoneUnavailable) {
			t.Fatalf("err = %v, want ErrKeystoneUnavailable", err)
		}
		f.setForceStatus(0)
		if _, err := k.Authenticate(requestWithToken(t, "good")); err != nil {
			t.Fatalf("after recovery: %v", err)
		}
	})

	t.Run("a token body Keystone should never send is invalid", func(t *testing.T) {
		f.addToken("weird", `{"token": {"user": {"id": "u"}}}`)
		if _, err := k.Authenticate(requestWithToken(t, "weird")); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("err = %v, want ErrInvalidToken", err)
		}
	})
}

func TestKeystoneUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	clock := newFakeClock()
	k, err := NewKeystone(KeystoneOptions{AuthURL: url, Username: "magnum", Password: "pw-do-not-print",
		ProjectName: "service", Timeout: 2 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.Authenticate(requestWithToken(t, "tok"))
	if !errors.Is(err, ErrKeystoneUnavailable) {
		t.Fatalf("Authenticate: %v, want ErrKeystoneUnavailable", err)
	}
	var hs interface{ HTTPStatus() int }
	if !errors.As(err, &hs) || hs.HTTPStatus() != http.StatusServiceUnavailable {
		t.Errorf("an unreachable Keystone must map to 503, got %v", err)
	}
	_, err = k.Authenticate(requestWithToken(t, ""))
	if !errors.As(err, &hs) || hs.HTTPStatus() != http.StatusUnauthorized {
		t.Errorf("a missing token must map to 401, got %v", err)
	}
	err = k.Check(t.Context())
	if err == nil {
		t.Fatal("Check succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, url+"/v3") || !strings.Contains(msg, "connection refused") ||
		strings.Contains(msg, "pw-do-not-print") || strings.Contains(msg, "\n") {
		t.Errorf("Check error %q should be one line naming the URL and the cause, without the password", msg)
	}
}

func TestCheck(t *testing.T) {
	clock := newFakeClock()
	f := newFakeKeystone(t, clock)
	k := newTestKeystone(t, f, clock, 0)
	if err := k.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.setPassword("rotated")
	err := k.Check(t.Context())
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "svc-secret") {
		t.Errorf("Check = %v, want a 401 without the password", err)
	}
}

func TestNewKeystone(t *testing.T) {
	for name, opts := range map[string]KeystoneOptions{
		"no auth_url":    {Username: "u", Password: "p"},
		"not http":       {AuthURL: "ftp://x", Username: "u", Password: "p"},
		"no password":    {AuthURL: "http://127.0.0.1:5000", Username: "u"},
		"missing cafile": {AuthURL: "https://127.0.0.1:5000", Username: "u", Password: "p", CAFile: "/nonexistent/ca.pem"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := NewKeystone(opts); err == nil {
				t.Error("no error")
			}
		})
	}
	k, err := NewKeystone(KeystoneOptions{AuthURL: "http://127.0.0.1:5000", Username: "u", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if k.baseURL != "http://127.0.0.1:5000/v3" || k.WWWAuthenticateURI() != "http://127.0.0.1:5000" {
		t.Errorf("baseURL %q, www %q", k.baseURL, k.WWWAuthenticateURI())
	}
	k, _ = NewKeystone(KeystoneOptions{AuthURL: "http://127.0.0.1:5000/v3/", WWWAuthenticateURI: "https://keystone.example/v3",
		Username: "u", Password: "p"})
	if k.baseURL != "http://127.0.0.1:5000/v3" || k.WWWAuthenticateURI() != "https://keystone.example/v3" {
		t.Errorf("baseURL %q, www %q", k.baseURL, k.WWWAuthenticateURI())
	}
}

func TestFlightSharesOneValidation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f flight
		release := make(chan struct{})
		var mu sync.Mutex
		calls := 0
		var wg sync.WaitGroup
		results := make([]string, 5)
		for i := range results {
			wg.Go(func() {
				rc, _, err := f.do(keyOf("tok"), func() (*magnum.RequestContext, time.Time, error) {
					mu.Lock()
					calls++
					mu.Unlock()
					<-release
					return &magnum.RequestContext{UserID: "u"}, time.Time{}, nil
				})
				if err == nil {
					results[i] = rc.UserID
				}
			})
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		if calls != 1 {
			t.Errorf("calls = %d, want 1", calls)
		}
		for i, r := range results {
			if r != "u" {
				t.Errorf("caller %d got %q", i, r)
			}
		}
	})
}

func BenchmarkCacheHit(b *testing.B) {
	clock := newFakeClock()
	f := newFakeKeystone(b, clock)
	k, err := NewKeystone(KeystoneOptions{AuthURL: f.srv.URL, Username: "magnum", Password: "svc-secret",
		ProjectName: "service", Now: clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	f.addToken("tok", projectTokenBody(clock.Now().Add(time.Hour), "reader", "member"))
	r := requestWithToken(b, "tok")
	if _, err := k.Authenticate(r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := k.Authenticate(r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
