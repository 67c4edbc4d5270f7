package api

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// specDir returns ${OKM_SPEC_DIR:-../shared/spec} relative to the repository
// root.
func specDir() string {
	d := os.Getenv("OKM_SPEC_DIR")
	if d == "" {
		d = "../shared/spec"
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join("..", "..", d) // internal/api → repository root
	}
	return d
}

var (
	rowRe   = regexp.MustCompile("^\\| (\\d+'*) \\| (GET|POST|PATCH|DELETE|PUT) \\| (.*)$")
	paramRe = regexp.MustCompile(`\{[a-z_]+\}`)
	verRe   = regexp.MustCompile(`^(\d+\.\d+)(?:–(\d+\.\d+)| only)$`)
	okRe    = regexp.MustCompile(`^\**(\d{3})\**`)
)

// TestRouteTableMatchesSpec checks the route table against the tables of
// spec/api/routes.md: number, method, path, version range and status.
func TestRouteTableMatchesSpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(specDir(), "api", "routes.md"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("spec not available: %v", err)
	}
	type row struct{ Method, Path, Min, Max, Status string }
	want := map[string]row{}
	lastPath := ""
	for _, line := range strings.Split(string(data), "\n") {
		m := rowRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cells := strings.Split(m[3], " | ")
		p := strings.TrimSpace(cells[0])
		if p == "same" {
			p = lastPath
		} else {
			p = strings.Trim(strings.Fields(p)[0], "`")
		}
		lastPath = p
		r := row{Method: m[2], Path: paramRe.ReplaceAllString(p, "{}")}
		for _, c := range cells[2:] {
			c = strings.TrimSpace(c)
			if v := verRe.FindStringSubmatch(c); v != nil && r.Min == "" {
				r.Min, r.Max = v[1], v[2]
				if r.Max == "" {
					r.Max = v[1]
				}
				continue
			}
			if s := okRe.FindStringSubmatch(c); s != nil && r.Status == "" {
				r.Status = s[1]
				break
			}
		}
		want[m[1]] = r
	}
	got := map[string]row{}
	for _, rt := range RouteTable() {
		r := row{Method: rt.Method, Path: paramRe.ReplaceAllString(rt.Pattern, "{}")}
		if !rt.MinVersion.IsZero() {
			r.Min, r.Max = rt.MinVersion.String(), rt.MaxVersion.String()
		}
		if rt.Number != "10" { // always 400, no success status in the spec
			r.Status = strconv.Itoa(rt.Status)
		}
		got[rt.Number] = r
	}
	if len(want) != 43 {
		t.Fatalf("parsed %d rows from routes.md, want 43", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("route table vs routes.md (-spec +table):\n%s", diff)
	}
}

func TestNextLink(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ProxyHeaders = true
		o.Extra = map[string]HandlerFunc{"cluster.get_all": func(w http.ResponseWriter, r *http.Request) error {
			return WriteJSON(w, 200, map[string]string{"next": NextLink(r, "clusters", [][2]string{{"sort_key", "id"}, {"sort_dir", "asc"}}, 3, "m1")})
		}}
	})
	w := h.Do(t, "GET /v1/clusters", "", tok, "X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com")
	expect(t, w, 200, `{"next":"https://api.example.com/v1/clusters?sort_key=id&sort_dir=asc&limit=3&marker=m1"}`)
}

func TestDetailWithParent(t *testing.T) {
	var marker string
	h := newHarness(t, func(o *Options) {
		o.Extra = map[string]HandlerFunc{"cluster_template.detail": func(w http.ResponseWriter, r *http.Request) error {
			marker, _ = QueryString(r, "marker")
			if !MarkerInPath(r) {
				marker = "not from the path"
			}
			return WriteJSON(w, 200, map[string]any{})
		}}
	})
	const u = "4695611e-3049-49d0-8c7d-af52116c437b"
	expect(t, h.Do(t, "GET /v1/clustertemplates/"+u+"/detail", "", tok), 200, `{}`)
	if marker != u {
		t.Errorf("marker = %q", marker)
	}
	w := h.Do(t, "GET /v1/clustertemplates/abc/detail", "", tok)
	expect(t, w, 400, `{"errors":[{"request_id":"","code":"client","status":400,"title":"Invalid input for field/attribute marker",
	  "detail":"Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc.","links":[]}]}`)
}

func TestQueryConversion(t *testing.T) {
	var got []any
	h := newHarness(t, func(o *Options) {
		o.Extra = map[string]HandlerFunc{
			"cluster.get_all": func(w http.ResponseWriter, r *http.Request) error {
				l, _ := QueryInt(r, "limit")
				k, _ := QueryString(r, "sort_key")
				got = []any{l, k}
				return WriteJSON(w, 200, map[string]any{})
			},
			"quota.get_all": func(w http.ResponseWriter, r *http.Request) error {
				b, ok := QueryBool(r, "all_tenants")
				got = []any{b, ok}
				return WriteJSON(w, 200, map[string]any{})
			},
		}
	})
	detail := func(w *httptest.ResponseRecorder) string {
		return decode(t, w).(map[string]any)["errors"].([]any)[0].(map[string]any)["detail"].(string)
	}
	cases := []struct{ req, want string }{
		{"GET /v1/clusters?limit=abc", "Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int. Error: invalid literal for int() with base 10: 'abc'"},
		{"GET /v1/clusters?limit=1&limit=2", "Invalid input for field/attribute limit. Value: '['1', '2']'. unable to convert to int. Error: int() argument must be a string, a bytes-like object or a real number, not 'list'"},
		{"GET /v1/clusters?marker=abc&limit=x", "Invalid input for field/attribute marker. Value: 'abc'. unable to convert to uuid. Error: Expected a uuid but received abc."},
		{"GET /v1/clusters?foo=1&limit=x", "Invalid input for field/attribute limit. Value: 'x'. unable to convert to int. Error: invalid literal for int() with base 10: 'x'"},
		{"GET /v1/quotas?all_tenants=maybe", "Invalid input for field/attribute all_tenants. Value: 'maybe'. unable to convert to boolean. Error: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"},
	}
	for _, c := range cases {
		w := h.Do(t, c.req, "", tok)
		if w.Code != 400 || detail(w) != c.want {
			t.Errorf("%s: %d %s\nwant %s", c.req, w.Code, w.Body.String(), c.want)
		}
	}
	expect(t, h.Do(t, "GET /v1/clusters?limit=+1_0&sort_key=name", "", tok), 200, `{}`)
	if diff := cmp.Diff([]any{10, "name"}, got); diff != "" {
		t.Error(diff)
	}
	expect(t, h.Do(t, "GET /v1/quotas?all_tenants=Yes", "", tok), 200, `{}`)
	if diff := cmp.Diff([]any{true, true}, got); diff != "" {
		t.Error(diff)
	}
}

func TestIsUUIDLike(t *testing.T) {
	for s, want := range map[string]bool{
		"4695611e-3049-49d0-8c7d-af52116c437b":          true,
		"4695611E304949D08C7DAF52116C437B":              true,
		"{4695611e-3049-49d0-8c7d-af52116c437b}":        true,
		"urn:uuid:4695611e-3049-49d0-8c7d-af52116c437b": true,
		"4695611e-3049-49d0-8c7d-af52116c437":           false,
		"cluster1":                                      false, "1": false,
	} {
		if got := IsUUIDLike(s); got != want {
			t.Errorf("IsUUIDLike(%q) = %v", s, got)
		}
	}
}
