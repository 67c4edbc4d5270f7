package auth

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Defaults of KeystoneOptions.
const (
	// DefaultTokenCacheTime is keystonemiddleware's token_cache_time.
	DefaultTokenCacheTime = 300 * time.Second
	// DefaultTimeout bounds every call to Keystone.
	DefaultTimeout = 10 * time.Second
	// negativeCacheTime bounds how long a rejected token stays rejected
	// without asking Keystone again.
	negativeCacheTime = 10 * time.Second
	// serviceTokenMargin renews the service token this long before it
	// expires, so that a validation never goes out with an expired one.
	serviceTokenMargin = 30 * time.Second
	// maxCacheEntries bounds the token cache.
	maxCacheEntries = 10000
	// maxTokenLength rejects absurd tokens without calling Keystone (fernet
	// tokens are under 300 bytes, JWS tokens under 1 KiB).
	maxTokenLength = 8192
	// maxBodySize bounds what is read from Keystone (a token body with a
	// large catalog is a few tens of KiB).
	maxBodySize = 8 << 20
)

// KeystoneOptions configures Keystone, from [keystone_authtoken].
type KeystoneOptions struct {
	// AuthURL is Keystone's identity endpoint ([keystone_authtoken]/auth_url),
	// with or without the /v3 suffix.
	AuthURL string
	// WWWAuthenticateURI goes into the WWW-Authenticate header of a 401
	// ([keystone_authtoken]/www_authenticate_uri). Default: AuthURL, as
	// keystonemiddleware falls back to the auth plugin's endpoint.
	WWWAuthenticateURI string
	// Username and Password are the service user's credentials.
	Username string
	Password string
	// ProjectName or ProjectID scope the service token (usually "service").
	ProjectName string
	ProjectID   string
	// UserDomainName or UserDomainID qualify Username; default domain id
	// "default".
	UserDomainName string
	UserDomainID   string
	// ProjectDomainName or ProjectDomainID qualify ProjectName; default
	// domain id "default".
	ProjectDomainName string
	ProjectDomainID   string
	// CAFile is a PEM bundle to verify Keystone's certificate ([keystone_authtoken]/cafile).
	CAFile string
	// Insecure skips the verification of Keystone's certificate.
	Insecure bool
	// TokenCacheTime is how long a validated token is trusted without asking
	// Keystone again (never beyond its expiry). 0 means
	// DefaultTokenCacheTime; a negative value disables the cache.
	TokenCacheTime time.Duration
	// Timeout bounds each call to Keystone; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Keystone is the Authenticator that validates tokens with Keystone. It is
// safe for concurrent use.
type Keystone struct {
	opts     KeystoneOptions
	baseURL  string // AuthURL ending in /v3, without a trailing slash
	wwwURI   string
	client   *http.Client
	timeout  time.Duration
	cacheTTL time.Duration // 0: cache disabled
	now      func() time.Time
	cache    *tokenCache
	flight   flight

	mu         sync.Mutex // serialises service authentication; guards svcToken, svcExpires
	svcToken   string
	svcExpires time.Time
}

var _ Authenticator = (*Keystone)(nil)

// NewKeystone checks opts and returns a Keystone. It does not contact
// Keystone: call Check at start-up for that.
func NewKeystone(opts KeystoneOptions) (*Keystone, error) {
	if opts.AuthURL == "" {
		return nil, errors.New("keystone: auth_url is not set")
	}
	if !strings.HasPrefix(opts.AuthURL, "http://") && !strings.HasPrefix(opts.AuthURL, "https://") {
		return nil, fmt.Errorf("keystone: auth_url %q is not an http(s) URL", opts.AuthURL)
	}
	if opts.Username == "" || opts.Password == "" {
		return nil, fmt.Errorf("keystone %s: the service username and password are required", opts.AuthURL)
	}
	base := strings.TrimRight(opts.AuthURL, "/")
	if !strings.HasSuffix(base, "/v3") {
		base += "/v3"
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.Insecure} //nolint:gosec // operator's choice ([keystone_authtoken]/insecure)
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("keystone: read cafile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("keystone: cafile %s holds no PEM certificate", opts.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	tr.MaxIdleConnsPerHost = 16
	k := &Keystone{
		opts:    opts,
		baseURL: base,
		wwwURI:  opts.WWWAuthenticateURI,
		timeout: opts.Timeout,
		now:     opts.Now,
		cache:   newTokenCache(maxCacheEntries),
	}
	if k.wwwURI == "" {
		k.wwwURI = opts.AuthURL
	}
	if k.timeout <= 0 {
		k.timeout = DefaultTimeout
	}
	if k.now == nil {
		k.now = time.Now
	}
	switch {
	case opts.TokenCacheTime == 0:
		k.cacheTTL = DefaultTokenCacheTime
	case opts.TokenCacheTime > 0:
		k.cacheTTL = opts.TokenCacheTime
	}
	k.client = &http.Client{
		Transport: tr,
		Timeout:   k.timeout,
		// Keystone answers token calls directly; a redirect would resend the
		// tokens somewhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return k, nil
}

// WWWAuthenticateURI returns the URI to put in the WWW-Authenticate header
// of a 401 (see WriteUnauthorized).
func (k *Keystone) WWWAuthenticateURI() string { return k.wwwURI }

// Check authenticates the service user once, so that an unreachable or
// misconfigured Keystone is reported at start-up. The error is one line
// naming the URL and the cause; it never contains the password or a token.
func (k *Keystone) Check(ctx context.Context) error {
	if _, err := k.serviceToken(ctx, true, ""); err != nil {
		return fmt.Errorf("keystone %s: %w", k.baseURL, err)
	}
	return nil
}

// Authenticate validates the request's X-Auth-Token (or X-Storage-Token) and
// returns the caller's context.
func (k *Keystone) Authenticate(r *http.Request) (*magnum.RequestContext, error) {
	token, err := requestToken(r)
	if err != nil {
		return nil, err
	}
	now := k.now()
	key := keyOf(token)
	if k.cacheTTL > 0 {
		if e, ok := k.cache.get(key, now); ok {
			if e.err != nil {
				return nil, e.err
			}
			return k.finish(e.rc, r, token), nil
		}
	}
	rc, _, err := k.flight.do(key, func() (*magnum.RequestContext, time.Time, error) {
		// The validation must not fail for everyone waiting on it because
		// the first caller went away.
		ctx := context.WithoutCancel(r.Context())
		rc, exp, err := k.validate(ctx, token)
		k.remember(key, rc, exp, err)
		return rc, exp, err
	})
	if err != nil {
		return nil, err
	}
	return k.finish(rc, r, token), nil
}

// requestToken extracts the user token as keystonemiddleware does: the
// X-Auth-Token header, else X-Storage-Token, stripped of white space.
func requestToken(r *http.Request) (string, error) {
	vals, ok := r.Header["X-Auth-Token"]
	if !ok {
		vals = r.Header["X-Storage-Token"]
	}
	token := ""
	if len(vals) > 0 {
		token = strings.TrimSpace(vals[0])
	}
	if token == "" {
		return "", &Error{Kind: ErrMissingToken}
	}
	if len(token) > maxTokenLength {
		return "", invalidToken("token too long", nil)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c < 0x21 || c > 0x7e {
			// Keystone would answer 404; a header with such bytes cannot
			// even be sent on.
			return "", invalidToken("token has characters outside printable ASCII", nil)
		}
	}
	return token, nil
}

// finish returns a copy of the cached identity with the per-request fields.
func (k *Keystone) finish(cached *magnum.RequestContext, r *http.Request, token string) *magnum.RequestContext {
	rc := *cached
	rc.Roles = slices.Clone(cached.Roles)
	rc.RequestID = requestID(r)
	rc.AuthToken = token
	return &rc
}

// remember caches a validation result: identities until the cache time or
// the token's expiry, whichever comes first; rejections briefly; nothing
// when Keystone could not answer.
func (k *Keystone) remember(key tokenKey, rc *magnum.RequestContext, exp time.Time, err error) {
	if k.cacheTTL <= 0 {
		return
	}
	now := k.now()
	switch {
	case err == nil:
		until := now.Add(k.cacheTTL)
		if exp.Before(until) {
			until = exp
		}
		k.cache.put(&cacheEntry{key: key, rc: rc, until: until, expires: exp})
	case errors.Is(err, ErrInvalidToken):
		k.cache.put(&cacheEntry{key: key, err: err, until: now.Add(min(negativeCacheTime, k.cacheTTL))})
	}
}

// validate asks Keystone about token (GET /v3/auth/tokens), retrying once
// with a new service token when Keystone rejects the current one.
func (k *Keystone) validate(ctx context.Context, token string) (*magnum.RequestContext, time.Time, error) {
	stale := ""
	for attempt := 0; ; attempt++ {
		svc, err := k.serviceToken(ctx, attempt > 0, stale)
		if err != nil {
			return nil, time.Time{}, err
		}
		status, body, err := k.do(ctx, http.MethodGet, "/auth/tokens", nil, map[string]string{
			"X-Auth-Token":    svc,
			"X-Subject-Token": token,
			// Tells Keystone that access rules are understood (refused
			// below), as keystonemiddleware does.
			"OpenStack-Identity-Access-Rules": "1",
		})
		if err != nil {
			return nil, time.Time{}, unavailable("validate token", err)
		}
		switch {
		case status == http.StatusOK:
			rc, exp, err := contextFromToken(body)
			if err != nil {
				return nil, time.Time{}, invalidToken("invalid token contents", err)
			}
			// keystonemiddleware: auth_token/__init__.py:436 — a token with
			// no validity left is rejected (will_expire_soon(0)).
			if exp.Before(k.now()) {
				return nil, time.Time{}, invalidToken("token expired", nil)
			}
			return rc, exp, nil
		case status == http.StatusNotFound:
			return nil, time.Time{}, invalidToken("token authorization failed (Keystone: not found)", nil)
		case status == http.StatusUnauthorized && attempt == 0:
			stale = svc
			continue
		case status == http.StatusUnauthorized:
			return nil, time.Time{}, unavailable("identity server rejected the service token twice", nil)
		default:
			return nil, time.Time{}, unavailable(fmt.Sprintf("bad response code %d while validating token", status), nil)
		}
	}
}

// serviceToken returns the service user's token, authenticating when there
// is none, when it expires within serviceTokenMargin, or when force is set
// and the current token is still stale (another caller may already have
// replaced it).
func (k *Keystone) serviceToken(ctx context.Context, force bool, stale string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.svcToken != "" && k.now().Add(serviceTokenMargin).Before(k.svcExpires) &&
		(!force || (stale != "" && k.svcToken != stale)) {
		return k.svcToken, nil
	}
	k.svcToken = ""
	body, err := json.Marshal(k.passwordAuth())
	if err != nil {
		return "", err
	}
	status, respBody, hdr, err := k.doWithHeader(ctx, http.MethodPost, "/auth/tokens", body, nil)
	if err != nil {
		return "", unavailable("authenticate service user "+k.opts.Username, err)
	}
	if status != http.StatusCreated && status != http.StatusOK {
		return "", unavailable(fmt.Sprintf("authenticate service user %s: Keystone answered %d %s",
			k.opts.Username, status, http.StatusText(status)), nil)
	}
	tok := hdr.Get("X-Subject-Token")
	var b struct {
		Token struct {
			ExpiresAt string `json:"expires_at"`
		} `json:"token"`
	}
	if tok == "" || json.Unmarshal(respBody, &b) != nil {
		return "", unavailable("authenticate service user "+k.opts.Username+": malformed Keystone answer", nil)
	}
	exp, err := parseExpiry(b.Token.ExpiresAt)
	if err != nil {
		return "", unavailable("authenticate service user "+k.opts.Username, err)
	}
	k.svcToken, k.svcExpires = tok, exp
	return tok, nil
}

// passwordAuth is the body of the service user's POST /v3/auth/tokens.
func (k *Keystone) passwordAuth() map[string]any {
	o := &k.opts
	domain := func(id, name string) map[string]string {
		switch {
		case id != "":
			return map[string]string{"id": id}
		case name != "":
			return map[string]string{"name": name}
		default:
			return map[string]string{"id": "default"}
		}
	}
	auth := map[string]any{
		"identity": map[string]any{
			"methods": []string{"password"},
			"password": map[string]any{"user": map[string]any{
				"name":     o.Username,
				"domain":   domain(o.UserDomainID, o.UserDomainName),
				"password": o.Password,
			}},
		},
	}
	switch {
	case o.ProjectID != "":
		auth["scope"] = map[string]any{"project": map[string]any{"id": o.ProjectID}}
	case o.ProjectName != "":
		auth["scope"] = map[string]any{"project": map[string]any{
			"name":   o.ProjectName,
			"domain": domain(o.ProjectDomainID, o.ProjectDomainName),
		}}
	}
	return map[string]any{"auth": auth}
}

func (k *Keystone) do(ctx context.Context, method, path string, body []byte, headers map[string]string) (int, []byte, error) {
	status, b, _, err := k.doWithHeader(ctx, method, path, body, headers)
	return status, b, err
}

// doWithHeader makes one bounded call to Keystone. Errors carry the method
// and URL (which never hold a token) and the transport error.
func (k *Keystone) doWithHeader(ctx context.Context, method, path string, body []byte, headers map[string]string) (int, []byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.baseURL+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "openkeel-magnum")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for h, v := range headers {
		req.Header.Set(h, v)
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBodySize))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: read answer: %w", method, k.baseURL+path, err)
	}
	return resp.StatusCode, b, resp.Header, nil
}
