package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// fakeAuth accepts the token "good", answers 503 for "down" and 401 otherwise.
type fakeAuth struct{}

type unavailable struct{}

func (unavailable) Error() string   { return "keystone down" }
func (unavailable) HTTPStatus() int { return http.StatusServiceUnavailable }

func (fakeAuth) Authenticate(r *http.Request) (*magnum.RequestContext, error) {
	switch r.Header.Get("X-Auth-Token") {
	case "good":
		return &magnum.RequestContext{UserID: "u1", ProjectID: "p1", Roles: []string{"reader", "member"}}, nil
	case "admin":
		return &magnum.RequestContext{UserID: "a1", ProjectID: "p0", Roles: []string{"admin"}, IsAdmin: true}, nil
	case "down":
		return nil, unavailable{}
	}
	return nil, errors.New("missing token")
}

// rolePolicy allows a rule when the caller has the "admin" or "reader" role,
// and records what it was asked.
type rolePolicy struct {
	calls []string
	last  map[string]any
	tgt   map[string]any
}

func (p *rolePolicy) Enforce(rule string, target, creds map[string]any) (bool, error) {
	p.calls = append(p.calls, rule)
	p.last, p.tgt = creds, target
	for _, r := range creds["roles"].([]any) {
		if r == "admin" {
			return true, nil
		}
	}
	return false, nil
}

type fakeServices []magnum.MagnumService

func (f fakeServices) ListServices(context.Context) ([]magnum.MagnumService, error) { return f, nil }

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type harness struct {
	h      http.Handler
	policy *rolePolicy
	logs   *bytes.Buffer
}

func newHarness(t *testing.T, mod func(*Options)) *harness {
	t.Helper()
	logs := &bytes.Buffer{}
	p := &rolePolicy{}
	seq := 0
	o := Options{
		Auth:               fakeAuth{},
		Policy:             p,
		WWWAuthenticateURI: "http://keystone:5000",
		Logger:             slog.New(slog.NewJSONHandler(logs, nil)),
		Now:                func() time.Time { return now },
		NewRequestID: func() string {
			seq++
			return "req-00000000-0000-4000-8000-" + strings.Repeat("0", 11) + string(rune('0'+seq%10))
		},
	}
	if mod != nil {
		mod(&o)
	}
	// The pipeline is tested in isolation from the resource handlers: every
	// route but the version document and mservices answers the 501 of an
	// unwritten handler unless the test installs its own.
	extra := map[string]HandlerFunc{}
	for _, rt := range RouteTable() {
		if rt.ID != "v1.get" && rt.ID != "magnum_service.get_all" {
			extra[rt.ID] = notImplemented
		}
	}
	for id, h := range o.Extra {
		extra[id] = h
	}
	o.Extra = extra
	return &harness{h: New(o), policy: p, logs: logs}
}

// Do sends "METHOD /path" with the headers ("Name: value" strings) and body.
func (h *harness) Do(t *testing.T, req string, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	method, target, _ := strings.Cut(req, " ")
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequestWithContext(t.Context(), method, target, rd)
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ": ")
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Add(k, v)
	}
	w := httptest.NewRecorder()
	h.h.ServeHTTP(w, r)
	return w
}

const (
	tok      = "X-Auth-Token: good"
	admin    = "X-Auth-Token: admin"
	wantJSON = "Accept: application/json"
)

var reqIDRe = regexp.MustCompile(`^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func decode(t *testing.T, w *httptest.ResponseRecorder) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	return v
}

func expect(t *testing.T, w *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	if w.Code != status {
		t.Errorf("status = %d, want %d (body %s)", w.Code, status, w.Body.String())
	}
	if body == "" {
		return
	}
	var want any
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatalf("bad want body: %v", err)
	}
	if diff := cmp.Diff(want, decode(t, w)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func expectVersionHeaders(t *testing.T, w *httptest.ResponseRecorder, version string) {
	t.Helper()
	got := []string{w.Header().Get("OpenStack-API-Minimum-Version"), w.Header().Get("OpenStack-API-Maximum-Version"),
		w.Header().Get("OpenStack-API-Version"), w.Header().Get("Vary")}
	want := []string{"", "", "", ""}
	if version != "" {
		want = []string{"container-infrastructure-management 1.1", "container-infrastructure-management 1.14",
			"container-infrastructure-management " + version, "OpenStack-API-Version"}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("version headers (-want +got):\n%s", diff)
	}
}

const emptyErr404 = `{"errors":[{"request_id":"","code":"","status":404,"title":"","detail":"","links":[]}]}`

func TestRequestID(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.NewRequestID = nil })
	for _, req := range []string{"GET /", "GET /v1/clusters", "GET /healthcheck", "GET /a/bogus", "PUT /v1/mservices"} {
		w := h.Do(t, req, "", tok)
		if id := w.Header().Get("X-Openstack-Request-Id"); !reqIDRe.MatchString(id) {
			t.Errorf("%s: request id %q", req, id)
		}
	}
	a := h.Do(t, "GET /", "").Header().Get("X-Openstack-Request-Id")
	b := h.Do(t, "GET /", "").Header().Get("X-Openstack-Request-Id")
	if a == b {
		t.Error("request ids must differ")
	}
}

func TestRootDocuments(t *testing.T) {
	h := newHarness(t, nil)
	root := `{"description":"Magnum is an OpenStack project which aims to provide container cluster management.",
	  "name":"OpenStack Magnum API","versions":[{"id":"v1","links":[{"href":"http://localhost/v1/","rel":"self"}],
	  "max_version":"1.14","min_version":"1.1","status":"CURRENT"}]}`
	t.Run("root needs no token and has no version headers", func(t *testing.T) {
		w := h.Do(t, "GET /", "", "Host: localhost:80")
		expect(t, w, 200, root)
		expectVersionHeaders(t, w, "")
	})
	t.Run("root ignores a bad version header", func(t *testing.T) {
		expect(t, h.Do(t, "GET /", "", "Host: localhost", "OpenStack-API-Version: bogus"), 200, root)
	})
	t.Run("v1 needs no token and has version headers", func(t *testing.T) {
		for _, p := range []string{"/v1", "/v1/"} {
			w := h.Do(t, "GET "+p, "", "OpenStack-API-Version: container-infra latest")
			if w.Code != 200 {
				t.Fatalf("%s: %d", p, w.Code)
			}
			expectVersionHeaders(t, w, "1.14")
			doc := decode(t, w).(map[string]any)
			if got := doc["clusters"].([]any)[1].(map[string]any)["href"]; got != "http://example.com/clusters/" {
				t.Errorf("bookmark = %v", got)
			}
		}
	})
	t.Run("v1.json passes auth but is not found", func(t *testing.T) {
		for _, p := range []string{"/v1.json", "/.json"} {
			w := h.Do(t, "GET "+p, "")
			expect(t, w, 404, emptyErr404)
			expectVersionHeaders(t, w, "")
		}
	})
	t.Run("other paths need a token", func(t *testing.T) {
		for _, p := range []string{"/v1/clusters", "/clusters", "/bogus", "/v1/v1"} {
			w := h.Do(t, "GET "+p, "")
			expect(t, w, 401, `{"error":{"code":401,"title":"Unauthorized","message":"The request you have made requires authentication."}}`)
			if got := w.Header().Get("WWW-Authenticate"); got != `Keystone uri="http://keystone:5000"` {
				t.Errorf("WWW-Authenticate = %q", got)
			}
			expectVersionHeaders(t, w, "")
		}
	})
	t.Run("keystone unavailable is a 503", func(t *testing.T) {
		w := h.Do(t, "GET /v1/clusters", "", "X-Auth-Token: down")
		if w.Code != 503 || w.Header().Get("WWW-Authenticate") != "" {
			t.Errorf("got %d %v", w.Code, w.Header())
		}
	})
	t.Run("POST on the root is a 405", func(t *testing.T) {
		w := h.Do(t, "POST /", "")
		expect(t, w, 405, "")
		if w.Header().Get("Allow") != "GET" {
			t.Errorf("Allow = %q", w.Header().Get("Allow"))
		}
	})
}

func TestAuthBeforeVersion(t *testing.T) {
	h := newHarness(t, nil)
	w := h.Do(t, "GET /v1/clusters", "", "OpenStack-API-Version: bogus")
	expect(t, w, 401, "")
	w = h.Do(t, "GET /v1/clusters", "", tok, "OpenStack-API-Version: bogus")
	expect(t, w, 406, `{"errors":[{"request_id":"","code":"","status":406,"title":"","detail":"","links":[]}]}`)
	expectVersionHeaders(t, w, "")
}

func TestVersionErrors(t *testing.T) {
	h := newHarness(t, nil)
	t.Run("malformed header with JSON accept", func(t *testing.T) {
		w := h.Do(t, "GET /v1/clusters", "", tok, wantJSON, "OpenStack-API-Version: container-infra 1.2.3")
		expect(t, w, 406, `{"errors":[{"request_id":"","code":"","status":406,"title":"Not Acceptable",
		  "detail":"Invalid value for OpenStack-API-Version header","links":[]}]}`)
		expectVersionHeaders(t, w, "")
	})
	t.Run("unknown service", func(t *testing.T) {
		w := h.Do(t, "GET /v1/clusters", "", tok, wantJSON, "OpenStack-API-Version: compute 1.2")
		expect(t, w, 406, `{"errors":[{"request_id":"","code":"","status":406,"title":"Not Acceptable",
		  "detail":"Invalid service type for OpenStack-API-Version header","links":[]}]}`)
	})
	t.Run("out of range keeps the headers and echoes the version", func(t *testing.T) {
		w := h.Do(t, "GET /v1/clusters", "", tok, "OpenStack-API-Version: container-infra 1.999")
		expect(t, w, 406, `{"errors":[{"code":"magnum.microversion-unsupported","links":[{"href":"http://docs.openstack.org/api-guide/compute/microversions.html","rel":"help"}],
		  "max_version":"1.14","min_version":"1.1","title":"Requested microversion is unsupported"}]}`)
		expectVersionHeaders(t, w, "1.999")
	})
	t.Run("out of range with JSON accept has a description", func(t *testing.T) {
		w := h.Do(t, "GET /v1/clusters", "", tok, wantJSON, "OpenStack-API-Version: container-infra 2.11")
		e := decode(t, w).(map[string]any)["errors"].([]any)[0].(map[string]any)
		want := "Mutually exclusive versions requested. Version 2.11 requested but not supported by this service.The supported version range is: [container-infrastructure-management 1.1, container-infrastructure-management 1.14]."
		if e["description"] != want {
			t.Errorf("description = %v", e["description"])
		}
	})
	t.Run("handler below its minimum version", func(t *testing.T) {
		w := h.Do(t, "GET /v1/clusters/c1/nodegroups", "", tok, "OpenStack-API-Version: container-infra 1.8")
		expect(t, w, 406, `{"errors":[{"request_id":"","code":"","status":406,"title":"","detail":"","links":[]}]}`)
		expectVersionHeaders(t, w, "")
		w = h.Do(t, "PATCH /v1/credentials/c1", "", tok, wantJSON, "OpenStack-API-Version: container-infra 1.11")
		expect(t, w, 406, `{"errors":[{"request_id":"","code":"","status":406,"title":"Not Acceptable",
		  "detail":"Version 1.11 was requested but the requested API patch is not supported for this version.","links":[]}]}`)
	})
	t.Run("Accept without JSON", func(t *testing.T) {
		w := h.Do(t, "GET /v1/mservices", "", admin, "Accept: application/xml")
		expect(t, w, 406, `{"errors":[{"request_id":"","code":"","status":406,"title":"","detail":"","links":[]}]}`)
	})
}

func TestRoutingErrors(t *testing.T) {
	h := newHarness(t, nil)
	t.Run("unknown path", func(t *testing.T) {
		w := h.Do(t, "GET /a/bogus/url", "", tok)
		expect(t, w, 404, emptyErr404)
		expectVersionHeaders(t, w, "")
		w = h.Do(t, "GET /v1/bays", "", tok, wantJSON)
		expect(t, w, 404, `{"errors":[{"request_id":"","code":"","status":404,"title":"Not Found","detail":"","links":[]}]}`)
	})
	t.Run("method not allowed lists the controller's methods", func(t *testing.T) {
		cases := map[string]string{
			"PUT /v1/clusters":                  "DELETE, GET, PATCH, POST",
			"GET /v1/certificates":              "GET, PATCH, POST",
			"POST /v1/mservices":                "GET",
			"GET /v1/stats/x":                   "GET",
			"POST /v1/clusters/x/actions/scale": "",
			"HEAD /v1/clusters":                 "DELETE, GET, PATCH, POST",
			"OPTIONS /v1/mservices":             "GET",
		}
		for req, allow := range cases {
			w := h.Do(t, req, "", tok)
			if req[:7] == "OPTIONS" {
				// CORS turns a failed OPTIONS into an empty 200.
				if w.Code != 200 {
					t.Errorf("%s: %d", req, w.Code)
				}
				continue
			}
			if w.Code != 405 {
				t.Errorf("%s: status %d", req, w.Code)
				continue
			}
			if got, ok := w.Header()["Allow"]; !ok || got[0] != allow {
				t.Errorf("%s: Allow = %q, want %q", req, got, allow)
			}
			expectVersionHeaders(t, w, "")
		}
		w := h.Do(t, "PUT /v1/clusters", "", tok, wantJSON)
		expect(t, w, 405, `{"errors":[{"request_id":"","code":"","status":405,"title":"Method Not Allowed","detail":"","links":[]}]}`)
	})
	t.Run("unprefixed paths are v1", func(t *testing.T) {
		w := h.Do(t, "GET /mservices", "", admin)
		expect(t, w, 200, `{"mservices":[]}`)
		expectVersionHeaders(t, w, "1.1")
	})
	t.Run("collection DELETE misses the identifier", func(t *testing.T) {
		w := h.Do(t, "DELETE /v1/clusters", "", tok)
		expect(t, w, 400, `{"errors":[{"request_id":"","code":"client","status":400,"title":"Missing argument: \"cluster_ident\"",
		  "detail":"Missing argument: \"cluster_ident\"","links":[]}]}`)
		expectVersionHeaders(t, w, "1.1")
		w = h.Do(t, "GET /v1/quotas/detail", "", tok)
		expect(t, w, 400, "")
		if !strings.Contains(w.Body.String(), `Missing argument: \"resource\"`) {
			t.Errorf("body %s", w.Body.String())
		}
	})
	t.Run("POST on a member path", func(t *testing.T) {
		w := h.Do(t, "POST /v1/clustertemplates/x", "{}", tok, "Content-Type: application/json")
		expect(t, w, 400, `{"errors":[{"request_id":"","code":"client","status":400,"title":"Invalid input for field/attribute cluster_template",
		  "detail":"Invalid input for field/attribute cluster_template. Value: 'x'. unable to convert to ClusterTemplate. Error: ClusterTemplate.__init__() takes 1 positional argument but 2 were given","links":[]}]}`)
		expectVersionHeaders(t, w, "1.1")
	})
	t.Run("routes without a handler answer 501", func(t *testing.T) {
		s := newServer(Options{Auth: fakeAuth{}})
		delete(s.handlers, "cluster.get_all")
		h := &harness{h: s}
		w := h.Do(t, "GET /v1/clusters/", "", tok)
		expect(t, w, 501, `{"errors":[{"request_id":"","code":"server","status":501,"title":"Not implemented","detail":"Not implemented.","links":[]}]}`)
		expectVersionHeaders(t, w, "1.1")
	})
}

func TestArguments(t *testing.T) {
	h := newHarness(t, nil)
	t.Run("unknown query parameter", func(t *testing.T) {
		w := h.Do(t, "GET /v1/mservices?limit=1", "", admin)
		expect(t, w, 400, `{"errors":[{"request_id":"","code":"client","status":400,"title":"Unknown argument: \"limit\"",
		  "detail":"Unknown argument: \"limit\"","links":[]}]}`)
		expectVersionHeaders(t, w, "1.1")
	})
	t.Run("rollback is unknown before 1.3", func(t *testing.T) {
		w := h.Do(t, "PATCH /v1/clusters/x?rollback=true", "[]", tok, "Content-Type: application/json", "OpenStack-API-Version: container-infra 1.2")
		expect(t, w, 400, "")
		w = h.Do(t, "PATCH /v1/clusters/x?rollback=true", "[]", tok, "Content-Type: application/json", "OpenStack-API-Version: container-infra 1.3")
		expect(t, w, 501, "")
	})
	t.Run("non-JSON body", func(t *testing.T) {
		w := h.Do(t, "POST /v1/clustertemplates", "<x/>", tok, "Content-Type: application/xml")
		expect(t, w, 415, `{"errors":[{"request_id":"","code":"client","status":415,"title":"Unknown mimetype: application/xml",
		  "detail":"Unknown mimetype: application/xml","links":[]}]}`)
	})
	t.Run("invalid JSON", func(t *testing.T) {
		w := h.Do(t, "POST /v1/clustertemplates", "{", tok, "Content-Type: application/json")
		expect(t, w, 400, `{"errors":[{"request_id":"","code":"client","status":400,"title":"Request is not in valid JSON format",
		  "detail":"Request is not in valid JSON format","links":[]}]}`)
	})
	t.Run("body without content type is a form", func(t *testing.T) {
		w := h.Do(t, "POST /v1/clustertemplates", "image_id=x", tok)
		expect(t, w, 400, "")
		if !strings.Contains(w.Body.String(), `Unknown argument: \"image_id\"`) {
			t.Errorf("body %s", w.Body.String())
		}
	})
	t.Run("handler without a body argument", func(t *testing.T) {
		w := h.Do(t, "PATCH /v1/certificates/c1", `{"zeta": 1, "alpha": 2}`, tok, "Content-Type: application/json")
		expect(t, w, 400, `{"errors":[{"request_id":"","code":"client","status":400,"title":"Unknown argument: \"zeta, alpha\"",
		  "detail":"Unknown argument: \"zeta, alpha\"","links":[]}]}`)
		w = h.Do(t, "PATCH /v1/certificates/c1", `[]`, tok, "Content-Type: application/json")
		expect(t, w, 400, "")
		if !strings.Contains(w.Body.String(), "Request must be a JSON dict") {
			t.Errorf("body %s", w.Body.String())
		}
		expect(t, h.Do(t, "PATCH /v1/certificates/c1", `{}`, tok, "Content-Type: application/json"), 501, "")
	})
	t.Run("body too large", func(t *testing.T) {
		h := newHarness(t, func(o *Options) { o.MaxBodyBytes = 10 })
		w := h.Do(t, "POST /v1/clustertemplates", `{"name": "abcdefghijkl"}`, tok, "Content-Type: application/json")
		expect(t, w, 413, `{"errors":[{"request_id":"","code":"client","status":413,"title":"Request is too large",
		  "detail":"Request is too large.","links":[]}]}`)
	})
}

func TestMServices(t *testing.T) {
	recent := now.Add(-time.Minute)
	old := now.Add(-time.Hour)
	yes := true
	reason := "maintenance"
	rows := fakeServices{
		{ID: 2, Host: "h2", Binary: "magnum-conductor", ReportCount: 3, CreatedAt: old, UpdatedAt: &old},
		{ID: 1, Host: "h1", Binary: "magnum-conductor", ReportCount: 13, CreatedAt: old, LastSeenUp: &recent,
			Disabled: &yes, DisabledReason: &reason, UpdatedAt: &recent},
		{ID: 3, Host: "h3", Binary: "magnum-conductor", CreatedAt: recent, LastSeenUp: &recent, ForcedDown: &yes},
	}
	h := newHarness(t, func(o *Options) { o.MServices = rows })
	w := h.Do(t, "GET /v1/mservices", "", admin)
	expect(t, w, 200, `{"mservices":[
	  {"binary":"magnum-conductor","created_at":"2026-11-30T11:00:00+00:00","disabled":true,"disabled_reason":"maintenance",
	   "host":"h1","id":1,"report_count":13,"state":"up","updated_at":"2026-11-30T11:59:00+00:00"},
	  {"binary":"magnum-conductor","created_at":"2026-11-30T11:00:00+00:00","disabled":null,"disabled_reason":null,
	   "host":"h2","id":2,"report_count":3,"state":"down","updated_at":"2026-11-30T11:00:00+00:00"},
	  {"binary":"magnum-conductor","created_at":"2026-11-30T11:59:00+00:00","disabled":null,"disabled_reason":null,
	   "host":"h3","id":3,"report_count":0,"state":"down","updated_at":null}]}`)
	if diff := cmp.Diff([]string{"magnum-service:get_all"}, h.policy.calls); diff != "" {
		t.Errorf("policy calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"project_id": "p0", "user_id": "a1"}, h.policy.tgt); diff != "" {
		t.Errorf("target (-want +got):\n%s", diff)
	}
	w = h.Do(t, "GET /v1/mservices", "", tok)
	expect(t, w, 403, `{"errors":[{"request_id":"","code":"client","status":403,
	  "title":"Policy doesn't allow magnum-service:get_all to be performed",
	  "detail":"Policy doesn't allow magnum-service:get_all to be performed.","links":[]}]}`)
	expectVersionHeaders(t, w, "1.1")
}

func TestCredentialsFrom(t *testing.T) {
	c := CredentialsFrom(&magnum.RequestContext{UserID: "u", ProjectID: "p", Roles: []string{"member"}, IsAdmin: false,
		UserDomainID: "d", SystemScope: "all", DomainID: "dom", ProjectDomainID: "pd"})
	for k, want := range map[string]any{"user_id": "u", "project_id": "p", "is_admin": false, "user_domain_id": "d",
		"system_scope": nil, "domain_id": nil, "project_domain_id": nil, "user": "u", "project": "p"} {
		if got, ok := c[k]; !ok || !cmp.Equal(got, want) {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if diff := cmp.Diff([]any{"member"}, c["roles"]); diff != "" {
		t.Error(diff)
	}
}

func TestHealthcheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "disable")
	h := newHarness(t, func(o *Options) { o.HealthcheckDisableFile = file })
	w := h.Do(t, "GET /healthcheck", "")
	if w.Code != 200 || w.Body.String() != "OK" || w.Header().Get("Content-Type") != "text/plain; charset=UTF-8" {
		t.Errorf("got %d %q %v", w.Code, w.Body.String(), w.Header())
	}
	expectVersionHeaders(t, w, "")
	w = h.Do(t, "GET /healthcheck", "", wantJSON)
	expect(t, w, 200, `{"detailed":false,"reasons":["OK"]}`)
	if w := h.Do(t, "HEAD /healthcheck", ""); w.Code != 204 {
		t.Errorf("HEAD: %d", w.Code)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w = h.Do(t, "GET /healthcheck", "")
	if w.Code != 503 || w.Body.String() != "DISABLED BY FILE" {
		t.Errorf("got %d %q", w.Code, w.Body.String())
	}
}

func TestCORS(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.CORS = DefaultCORSOptions()
		o.CORS.AllowedOrigin = []string{"https://dash.example.com"}
	})
	t.Run("preflight without a token", func(t *testing.T) {
		w := h.Do(t, "OPTIONS /v1/clusters", "", "Origin: https://dash.example.com",
			"Access-Control-Request-Method: PATCH", "Access-Control-Request-Headers: X-Auth-Token, Content-Type")
		if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Type") != "" {
			t.Errorf("got %d %q %v", w.Code, w.Body.String(), w.Header())
		}
		want := map[string]string{
			"Access-Control-Allow-Origin": "https://dash.example.com", "Access-Control-Allow-Credentials": "true",
			"Access-Control-Max-Age": "3600", "Access-Control-Allow-Methods": "PATCH",
			"Access-Control-Allow-Headers": "X-Auth-Token,Content-Type", "Vary": "Origin",
		}
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		if !reqIDRe.MatchString(w.Header().Get("X-Openstack-Request-Id")) && w.Header().Get("X-Openstack-Request-Id") == "" {
			t.Error("missing request id")
		}
	})
	t.Run("preflight with a header not allowed", func(t *testing.T) {
		w := h.Do(t, "OPTIONS /v1/clusters", "", "Origin: https://dash.example.com",
			"Access-Control-Request-Method: GET", "Access-Control-Request-Headers: X-Evil")
		if w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("got %d %v", w.Code, w.Header())
		}
	})
	t.Run("simple request", func(t *testing.T) {
		w := h.Do(t, "GET /v1/mservices", "", admin, "Origin: https://dash.example.com")
		if w.Code != 200 {
			t.Fatalf("status %d", w.Code)
		}
		for k, v := range map[string]string{
			"Access-Control-Allow-Origin":   "https://dash.example.com",
			"Access-Control-Expose-Headers": "X-Auth-Token,X-Subject-Token,X-Service-Token,X-OpenStack-Request-ID,X-Server-Management-Url",
			"Vary":                          "OpenStack-API-Version,Origin",
		} {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
	})
	t.Run("other origin", func(t *testing.T) {
		w := h.Do(t, "GET /", "", "Origin: https://evil.example.com")
		if w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Error("origin must not be allowed")
		}
	})
}

func TestProxyHeaders(t *testing.T) {
	href := func(w *httptest.ResponseRecorder) any {
		return decode(t, w).(map[string]any)["versions"].([]any)[0].(map[string]any)["links"].([]any)[0].(map[string]any)["href"]
	}
	off := newHarness(t, nil)
	if got := href(off.Do(t, "GET /", "", "X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com")); got != "http://example.com/v1/" {
		t.Errorf("proxy headers must be ignored by default: %v", got)
	}
	on := newHarness(t, func(o *Options) { o.ProxyHeaders = true })
	cases := []struct {
		headers []string
		want    string
	}{
		{[]string{"X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com:443"}, "https://api.example.com/v1/"},
		{[]string{"Forwarded: for=1.2.3.4;proto=https;host=magnum.example.org, for=5.6.7.8", "X-Forwarded-Host: ignored"}, "https://magnum.example.org/v1/"},
		{[]string{"X-Forwarded-Prefix: /container-infra"}, "http://example.com/container-infra/v1/"},
	}
	for _, c := range cases {
		if got := href(on.Do(t, "GET /", "", c.headers...)); got != c.want {
			t.Errorf("%v: %v, want %v", c.headers, got, c.want)
		}
	}
}

func TestPanicRecovery(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Extra = map[string]HandlerFunc{
			"cluster.get_all": func(http.ResponseWriter, *http.Request) error { panic("secret internal state") },
			"cluster.detail":  func(http.ResponseWriter, *http.Request) error { return errors.New("db password wrong") },
		}
	})
	for _, req := range []string{"GET /v1/clusters", "GET /v1/clusters/detail"} {
		w := h.Do(t, req, "", tok)
		expect(t, w, 500, `{"errors":[{"request_id":"","code":"server","status":500,"title":"An unknown exception occurred",
		  "detail":"An unknown exception occurred.","links":[]}]}`)
		if w.Header().Get("X-Openstack-Request-Id") == "" {
			t.Error("request id missing on 500")
		}
	}
	logs := h.logs.String()
	if strings.Count(logs, "\n") != 2 || !strings.Contains(logs, "req-") {
		t.Errorf("want one log line per failure with the request id, got:\n%s", logs)
	}
}

func TestRouteTable(t *testing.T) {
	rs := RouteTable()
	routes := map[string]bool{}
	for _, r := range rs {
		routes[r.Method+" "+r.Pattern] = true
	}
	if len(rs) != 43 || len(routes) != 38 {
		t.Errorf("%d handlers on %d routes, want 43 on 38", len(rs), len(routes))
	}
}

func BenchmarkRootDocument(b *testing.B) {
	h := New(Options{Auth: fakeAuth{}, NewRequestID: func() string { return "req-x" }})
	r := httptest.NewRequest("GET", "/", nil)
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

func BenchmarkV1Document(b *testing.B) {
	h := New(Options{Auth: fakeAuth{}, NewRequestID: func() string { return "req-x" }})
	r := httptest.NewRequest("GET", "/v1/", nil)
	r.Header.Set("OpenStack-API-Version", "container-infra latest")
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
