package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzPipeline sends arbitrary paths, queries, headers and bodies through the
// whole pipeline: nothing may panic (the recover middleware would turn it
// into a 500) and every answer carries a request ID.
func FuzzPipeline(f *testing.F) {
	f.Add("GET", "/v1/clusters", "limit=1", "container-infra 1.9", "application/json", "", "")
	f.Add("DELETE", "/v1/quotas", "", "container-infra latest", "", `{"project_id":"p"}`, "application/json")
	f.Add("GET", "/v1/clustertemplates/x/detail", "marker=1&marker=2", "", "*/*", "", "")
	f.Add("POST", "/clusters", "", "container-infra 1.-1", "text/html", "a=b&c", "")
	f.Add("OPTIONS", "/v1/", "", "", "", "", "")
	// Resource handlers are replaced by the 501 stub: this fuzzes the
	// pipeline, not the handlers (which need a conductor).
	stubs := map[string]HandlerFunc{}
	for _, rt := range RouteTable() {
		if rt.ID != "v1.get" && rt.ID != "magnum_service.get_all" {
			stubs[rt.ID] = notImplemented
		}
	}
	h := New(Options{Auth: fakeAuth{}, Policy: &rolePolicy{}, MaxBodyBytes: 1 << 10, Extra: stubs})
	f.Fuzz(func(t *testing.T, method, path, query, version, accept, body, ct string) {
		if method == "" || strings.ContainsAny(method, " \t\r\n()<>@,;:\\\"/[]?={}") || !strings.HasPrefix(path, "/") {
			return
		}
		u := &url.URL{Path: path, RawQuery: query}
		r, err := http.NewRequest(method, "http://localhost"+u.EscapedPath(), strings.NewReader(body))
		if err != nil {
			return
		}
		r.URL.RawQuery = query
		r.Header.Set("X-Auth-Token", "admin")
		if version != "" {
			r.Header.Set("OpenStack-API-Version", version)
		}
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s?%s: 500 %s", method, path, query, w.Body.String())
		}
		if w.Header().Get(RequestIDHeader) == "" {
			t.Fatalf("%s %s: no request id", method, path)
		}
	})
}
