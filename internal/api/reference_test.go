package api

import (
	"strings"
	"testing"
)

// TestReferenceQuirks replays requests whose answers were observed on the
// reference application (Magnum 23.0.0 under pecan/WSME): routing quirks,
// argument checks and their order. Only the pipeline is involved: the
// resource handlers are not written here, so each request stops before them.
func TestReferenceQuirks(t *testing.T) {
	h := newHarness(t, nil)
	const js = "Content-Type: application/json"
	const latest = "OpenStack-API-Version: container-infra latest"
	cases := []struct {
		req, body string
		headers   []string
		status    int
		allow     string // "-" for no Allow header
		detail    string
		versioned bool
	}{
		{"HEAD /", "", nil, 405, "GET", "", false},
		{"GET /?foo=1", "", nil, 400, "-", `Unknown argument: "foo"`, false},
		{"GET /v1/?foo=1", "", nil, 400, "-", `Unknown argument: "foo"`, true},
		{"POST /v1/clusters/x", "{}", []string{js}, 400, "-", "Invalid input for field/attribute cluster. Value: 'x'. unable to convert to Cluster. Error: Cluster.__init__() takes 1 positional argument but 2 were given", true},
		{"POST /v1/clusters/detail", "{}", []string{js}, 400, "-", "Value: 'detail'. unable to convert to Cluster.", true},
		{"POST /v1/quotas/p", "{}", []string{js}, 400, "-", "unable to convert to Quota. Error: Quota.__init__() takes 1 positional argument but 2 were given", true},
		{"POST /v1/quotas/p/r", "{}", []string{js}, 404, "-", "", false},
		{"POST /v1/clusters/x/nodegroups/y", "{}", []string{js, latest}, 400, "-", "unable to convert to NodeGroup.", true},
		{"POST /v1/clusters/x/actions/resize/y", "{}", []string{js}, 405, "", "", false},
		{"DELETE /v1/clusters", "", nil, 400, "-", `Missing argument: "cluster_ident"`, true},
		{"DELETE /v1/quotas/p", "", nil, 400, "-", `Missing argument: "resource"`, true},
		{"DELETE /v1/clusters?foo=1", "", nil, 400, "-", `Unknown argument: "foo"`, true},
		{"GET /v1/clusters//", "", nil, 400, "-", `Missing argument: "cluster_ident"`, true},
		{"GET /v1/quotas/detail", "", nil, 400, "-", `Missing argument: "resource"`, true},
		{"GET /v1/certificates", "", nil, 405, "GET, PATCH, POST", "", false},
		{"GET /v1/credentials", "", []string{latest}, 405, "PATCH", "", false},
		{"GET /v1/stats/x", "", nil, 405, "GET", "", false},
		{"GET /v1/clusters/x/actions", "", []string{latest}, 405, "", "", false},
		{"GET /v1/clusters/x/y", "", nil, 404, "-", "", false},
		{"GET /v1/clusters/x/nodegroups/y/z", "", []string{latest}, 404, "-", "", false},
		{"PUT /v1/clusters/x", "{}", []string{js}, 405, "DELETE, GET, PATCH, POST", "", false},
		{"OPTIONS /v1/clusters", "", nil, 200, "-", "", false}, // 405 turned into 200 by CORS
		{"GET /v1/.json", "", nil, 404, "-", "", false},
		{"GET /v1/clusters?limit=1&limit=2", "", nil, 400, "-", "Invalid input for field/attribute limit. Value: '['1', '2']'. unable to convert to int. Error: int() argument must be a string, a bytes-like object or a real number, not 'list'", true},
		{"GET /v1/clusters?foo=1&bar=2", "", nil, 400, "-", `Unknown argument: "foo, bar"`, true},
		{"GET /v1/clusters?foo=1&limit=x", "", nil, 400, "-", "Invalid input for field/attribute limit. Value: 'x'. unable to convert to int. Error: invalid literal for int() with base 10: 'x'", true},
		{"GET /v1/clusters?role=a&role=b", "", nil, 400, "-", `Unknown argument: "role"`, true},
		{"GET /v1/clusters?marker=abc&limit=x", "", nil, 400, "-", "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc.", true},
		{"GET /v1/clusters/detail?marker=1", "", nil, 400, "-", "Expected a uuid but received 1.", true},
		{"GET /v1/clusters/abc/detail", "", nil, 400, "-", "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc.", true},
		{"GET /v1/federations/abc/detail", "", nil, 400, "-", "Expected a uuid but received abc.", true},
		{"GET /v1/quotas?marker=abc", "", nil, 400, "-", "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'", true},
		{"GET /v1/stats?foo=1", "", nil, 400, "-", `Unknown argument: "foo"`, true},
		{"GET /v1/clusters?foo=5", "", []string{"Accept: application/xml"}, 406, "-", "", false},
		{"GET /v1/clusters", "", []string{"Accept: */*;q=0"}, 406, "-", "", false},
		{"GET /v1/clusters/x/nodegroups?foo=1", "", []string{"OpenStack-API-Version: container-infra 1.8"}, 406, "-", "", false},
		{"GET /v1/clusters/x/nodegroups/y", "", []string{"OpenStack-API-Version: container-infra 1.8", wantJSON}, 406, "-",
			"Version 1.8 was requested but the requested API get_one is not supported for this version.", false},
		{"PATCH /v1/clusters/x", "a=b", []string{"Content-Type: application/x-www-form-urlencoded"}, 400, "-", `Unknown argument: "a"`, true},
		{"PATCH /v1/certificates/c1", `{"zeta": 1, "alpha": 2}`, []string{js}, 400, "-", `Unknown argument: "zeta, alpha"`, true},
		{"PATCH /v1/certificates/c1", `[]`, []string{js}, 400, "-", "Request must be a JSON dict", true},
		{"GET /v1/mservices", `{"a": 1}`, []string{js}, 400, "-", `Unknown argument: "a"`, true},
		{"GET /v1/mservices", `  `, []string{js}, 400, "-", "Request is not in valid JSON format", true},
		{"POST /v1/clustertemplates", "{}", []string{"Content-Type: Application/JSON"}, 415, "-", "Unknown mimetype: Application/JSON", true},
		{"GET /v1/clusters", "", []string{"OpenStack-API-Version: container-infra 1.1_0"}, 501, "-", "", true},
		{"GET /v1/clusters", "", []string{"OpenStack-API-Version: container-infra\xa01.2"}, 501, "-", "", true},
		{"GET /v1/clusters", "", []string{"OpenStack-API-Version: ", wantJSON}, 406, "-", "Invalid service type for OpenStack-API-Version header", false},
		{"POST /v1/clusters/x/actions", "{}", []string{js}, 406, "-", "", false},
		{"POST /v1/clusters/x/actions", "{}", []string{js, latest}, 405, "", "", false},
		{"GET /v1/clusters/x/actions/resize", "", []string{latest}, 405, "", "", false},
		{"GET /v1/clusters/x/actions/resize", "", []string{"OpenStack-API-Version: container-infra 1.6"}, 406, "-", "", false},
		{"PATCH /v1/clusters/x/actions/resize", "{}", []string{js, latest}, 405, "", "", false},
		{"POST /v1/clusters/x/actions/resize", "{}", []string{js, wantJSON, "OpenStack-API-Version: container-infra 1.6"}, 406, "-",
			"Version 1.6 was requested but the requested API resize is not supported for this version.", false},
		{"DELETE /v1/clusters/x/nodegroups", "", []string{latest}, 400, "-", `Missing argument: "nodegroup_id"`, true},
		{"PATCH /v1/credentials", "", []string{latest}, 400, "-", `Missing argument: "cluster_ident"`, true},
		{"GET /v1/credentials/x", "", nil, 406, "-", "", false},
		{"POST /v1/credentials/x", "{}", []string{js, latest}, 405, "PATCH", "", false},
		{"GET /v1/mservices/x", "", nil, 405, "GET", "", false},
		{"POST /v1/stats", "{}", []string{js}, 405, "GET", "", false},
		{"GET /v1/clustertemplates/x/y", "", nil, 404, "-", "", false},
		{"DELETE /v1/quotas/p/r/x", "", nil, 404, "-", "", false},
		{"GET /v1/quotas/p/r/x", "", nil, 404, "-", "", false},
		{"GET /v1/federations/x/y", "", nil, 404, "-", "", false},
		{"PATCH /v1/certificates", "", nil, 400, "-", `Missing argument: "cluster_ident"`, true},
		{"POST /v1/certificates/x", "{}", []string{js}, 400, "-", "unable to convert to Certificate.", true},
		{"POST /v1/federations/x", "{}", []string{js}, 400, "-", "unable to convert to Federation.", true},
	}
	for _, c := range cases {
		t.Run(c.req, func(t *testing.T) {
			w := h.Do(t, c.req, c.body, append([]string{admin}, c.headers...)...)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
			allow, ok := w.Header()["Allow"]
			switch {
			case c.allow == "-" && ok:
				t.Errorf("unexpected Allow %q", allow)
			case c.allow != "-" && (!ok || allow[0] != c.allow):
				t.Errorf("Allow = %q, want %q", allow, c.allow)
			}
			if c.detail != "" && !strings.Contains(w.Body.String(), strings.ReplaceAll(c.detail, `"`, `\"`)) {
				t.Errorf("body %s\nwant detail containing %s", w.Body.String(), c.detail)
			}
			if got := w.Header().Get("OpenStack-API-Version") != ""; got != c.versioned {
				t.Errorf("version headers present = %v, want %v", got, c.versioned)
			}
		})
	}
}
