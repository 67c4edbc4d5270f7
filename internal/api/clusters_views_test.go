package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/api/microversion"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// clusterPageBodyByObjects is the list body as it was rendered before
// clusterPageJSON: a clObject per cluster (clusterView) marshalled
// through encoding/json. It is the reference the new rendering must match
// byte for byte.
func clusterPageBodyByObjects(t testing.TB, r *http.Request, page *conductor.ClusterPage, detail bool, next string) []byte {
	t.Helper()
	items := make([]clObject, 0, len(page.Clusters))
	for i := range page.Clusters {
		cl := &page.Clusters[i]
		var tm *magnum.ClusterTemplate
		if tt, ok := page.Templates[cl.ClusterTemplateID]; ok {
			tm = &tt
		}
		items = append(items, clusterView(r, cl, page.NodeGroups[cl.UUID], tm, detail, nil))
	}
	body := clObject{{"clusters", items}}
	if next != "" {
		body = append(body, clKV{"next", next})
	}
	b, err := marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clusterPageJSON renders a whole list page body (see appendClusterPage).
func clusterPageJSON(r *http.Request, page *conductor.ClusterPage, detail bool, next string) []byte {
	return appendClusterPage(nil, r, page, detail, next, nil)
}

// viewRequest is a request as the pipeline hands it to a handler.
func viewRequest(base string, minor int) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
	return r.WithContext(context.WithValue(r.Context(), infoKey{}, &reqInfo{
		baseURL: base, version: microversion.Version{Major: 1, Minor: minor}}))
}

// viewStrings are strings that exercise every escaping rule.
var viewStrings = []string{
	"", "plain", `quo"te`, `back\slash`, "ctl\x00\x01\x1f\x7f", "\b\f\n\r\t", "<html>&amp;",
	"unicodé ✓ 日本語", "emoji 🚀", "bad \xff utf8 \xc3", "sep \u2028 \u2029", "trunc \xe2\x80",
	"/slash/", "\u00a0nbsp", "\ufffd",
}

func viewPtr[T any](v T) *T { return &v }

// viewPage builds a page whose clusters cover nulls, empty and nil maps,
// escaping, extreme integers, master and worker nodegroups with and
// without addresses, and templates with and without labels.
func viewPage() *conductor.ClusterPage {
	page := &conductor.ClusterPage{NodeGroups: map[string][]magnum.NodeGroup{}, Templates: map[string]magnum.ClusterTemplate{
		"t1": {UUID: "t1", Labels: map[string]string{"kube_tag": "v1", "same": "x", "only_t": "tv", "é": "ü"}},
		"t2": {UUID: "t2"},
		"t3": {UUID: "t3", Labels: map[string]string{}},
	}}
	ints := []*int{nil, viewPtr(0), viewPtr(-1), viewPtr(60), viewPtr(math.MaxInt), viewPtr(math.MinInt)}
	bools := []*bool{nil, viewPtr(true), viewPtr(false)}
	statuses := []*magnum.Status{nil, viewPtr(magnum.Status("CREATE_COMPLETE")), viewPtr(magnum.Status("CREATE_FAILED"))}
	updated := time.Date(2026, 1, 2, 3, 4, 5, 600000000, time.UTC)
	for i := range 40 {
		str := func(k int) *string {
			if (i+k)%4 == 0 {
				return nil
			}
			return viewPtr(viewStrings[(i+k)%len(viewStrings)])
		}
		var labels map[string]string
		switch i % 5 {
		case 1:
			labels = map[string]string{}
		case 2:
			labels = map[string]string{"kube_tag": "v2", "same": "x", "new": "n"}
		case 3:
			labels = map[string]string{}
			for j, s := range viewStrings {
				labels[s] = viewStrings[(j+i)%len(viewStrings)]
			}
		case 4:
			labels = map[string]string{"é": "ü", "b": "", "a": "1", "Z": "upper"}
		}
		var hsr map[string]string
		if i%3 == 1 {
			hsr = map[string]string{"api": "ok", "node.Ready": "True", "<&>": "\u2028"}
		} else if i%3 == 2 {
			hsr = map[string]string{}
		}
		cl := magnum.Cluster{
			ID: int64(i + 1), UUID: fmt.Sprintf("uuid-%02d-%s", i, viewStrings[i%len(viewStrings)]),
			Name: viewStrings[(i+3)%len(viewStrings)], ProjectID: viewStrings[(i+5)%len(viewStrings)],
			UserID: "u1", ClusterTemplateID: []string{"t1", "t2", "t3"}[i%3], Keypair: str(1),
			DockerVolumeSize: ints[i%len(ints)], Labels: labels, MasterFlavorID: str(2), FlavorID: str(3),
			StackID: str(4), APIAddress: str(5), Status: statuses[i%len(statuses)], StatusReason: str(6),
			HealthStatus: str(7), HealthStatusReason: hsr, CreateTimeout: ints[(i+2)%len(ints)],
			DiscoveryURL: str(8), COEVersion: str(9), ContainerVersion: str(10), FixedNetwork: str(11),
			FixedSubnet: str(12), FloatingIPEnabled: bools[i%3], MasterLBEnabled: bools[(i+1)%3],
		}
		if i%4 != 0 {
			cl.CreatedAt = time.Date(2026, 11, 30, 5, 0, i, i*1000, time.UTC)
		}
		if i%2 == 0 {
			cl.UpdatedAt = &updated
		}
		page.Clusters = append(page.Clusters, cl)
		var ngs []magnum.NodeGroup
		switch i % 4 {
		case 1:
			ngs = []magnum.NodeGroup{
				{Role: viewPtr("master"), NodeCount: viewPtr(3), NodeAddresses: []string{"10.0.0.1", "10.0.0.2", "fe80::1"}},
				{Role: viewPtr("worker"), NodeCount: viewPtr(5), NodeAddresses: []string{"10.1.0.1", viewStrings[i%len(viewStrings)]}},
				{Role: nil, NodeCount: nil, NodeAddresses: nil},
				{Role: viewPtr("worker"), NodeCount: viewPtr(2), NodeAddresses: []string{}},
			}
		case 2:
			ngs = []magnum.NodeGroup{{Role: viewPtr("master"), NodeCount: viewPtr(1)}}
		case 3:
			ngs = []magnum.NodeGroup{{Role: viewPtr("worker"), NodeCount: viewPtr(math.MaxInt32), NodeAddresses: []string{"a"}},
				{Role: viewPtr("master"), NodeCount: viewPtr(0), NodeAddresses: []string{"m"}}}
		}
		if ngs != nil {
			page.NodeGroups[cl.UUID] = ngs
		}
	}
	return page
}

// TestClusterPageJSONMatchesObjectRendering compares clusterPageJSON with
// the clObject rendering on varied rows, for the summary and the detail
// view, below and from 1.13 (stack_id / cluster_id), with and without a
// next link, and for base URLs that need escaping.
func TestClusterPageJSONMatchesObjectRendering(t *testing.T) {
	page := viewPage()
	empty := &conductor.ClusterPage{NodeGroups: map[string][]magnum.NodeGroup{}, Templates: map[string]magnum.ClusterTemplate{}}
	one := &conductor.ClusterPage{Clusters: page.Clusters[3:4], NodeGroups: page.NodeGroups, Templates: page.Templates}
	for _, base := range []string{"http://localhost:9511", "https://api.example.com/prefix", "http://h\xff\u2028<&>\"q"} {
		for _, minor := range []int{1, 12, 13, 14} {
			for _, detail := range []bool{false, true} {
				for _, next := range []string{"", base + "/v1/clusters?sort_key=id&sort_dir=asc&limit=40&marker=uuid-39-\u2028"} {
					for name, pg := range map[string]*conductor.ClusterPage{"varied": page, "empty": empty, "one": one} {
						r := viewRequest(base, minor)
						want := clusterPageBodyByObjects(t, r, pg, detail, next)
						got := clusterPageJSON(r, pg, detail, next)
						if string(got) != string(want) {
							t.Errorf("%s page, base %q, 1.%d, detail %v, next %v:\n got %s\nwant %s",
								name, base, minor, detail, next != "", clFirstDiff(got, want), clFirstDiff(want, got))
						}
					}
				}
			}
		}
	}
}

// clFirstDiff shows a at the first byte where it differs from b.
func clFirstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-60)
	return fmt.Sprintf("…%q… (byte %d)", a[lo:min(len(a), i+60)], i)
}

// TestAppendJSONString checks the string escaper against encoding/json
// (HTML escaping off) on fixed and pseudo-random strings.
func TestAppendJSONString(t *testing.T) {
	inputs := append([]string{}, viewStrings...)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\"", "\\", "\x00", "\x1f", "\x7f", "\xff", "\xc3", "\xa9", "\xe2", "\x80", "\xa8",
		"é", "\u2028", "\u2029", "🚀", "<", ">", "&", "\n", "\t", "\ufffd", "\xed\xa0\x80"}
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(12) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		inputs = append(inputs, sb.String())
	}
	for _, s := range inputs {
		want, err := marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestClusterListBodyFromDatabase writes clusters with awkward column
// contents straight into the database (JSON text in other spellings,
// non-string label values, NULL columns, escapes, duplicate keys) and
// checks that the list endpoints answer exactly what the clObject
// rendering of the full rows gives.
func TestClusterListBodyFromDatabase(t *testing.T) {
	h := newClusterHarness(t)
	ctx := t.Context()
	for i := range 3 {
		w := h.Do(t, "POST /v1/clusters", "", fmt.Sprintf(`{"name": "c%d", "cluster_template_id": %q, "labels": {"kube_tag": "v%d", "t": "1", "x": "é"}}`, i, h.tmpl.UUID, i))
		clusterExpect(t, w, 202)
	}
	h.tick(t)
	cls, err := h.db.ListClusters(ctx, db.ClusterFilter{Scope: db.AllProjects}, db.ListOptions{})
	if err != nil || len(cls) != 3 {
		t.Fatalf("clusters %v, %v", cls, err)
	}
	labels := []string{
		`{"a": 1, "b": true, "c": null, "d": 1.5e3, "e": [1, "x"], "f": {"g": "h"}}`,
		`{"k": "first", "k": "second", "\u00e9": "\ud83d\ude80", "tab": "a\tb"}`,
		` { "spaced" :  "v" ,"x":"y" } `,
	}
	for i, cl := range cls {
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := h.db.SQL().ExecContext(ctx, q, args...); err != nil {
				t.Fatal(err)
			}
		}
		exec(`UPDATE cluster SET labels = ?, health_status_reason = ? WHERE uuid = ?`, labels[i],
			[]string{`null`, `{"api": "ok"}`, `{}`}[i], cl.UUID)
		exec(`UPDATE nodegroup SET node_addresses = ? WHERE cluster_id = ? AND role = 'master'`,
			[]string{`["10.0.0.1", "10.0.0.2"]`, `["\u00e9", 1, null]`, `[ ]`}[i], cl.UUID)
		if i == 2 {
			exec(`UPDATE cluster SET keypair = NULL, docker_volume_size = NULL, labels = NULL, status = NULL, updated_at = NULL WHERE uuid = ?`, cl.UUID)
			exec(`UPDATE nodegroup SET node_addresses = NULL, node_count = NULL WHERE cluster_id = ? AND role <> 'master'`, cl.UUID)
		}
	}
	rc := &magnum.RequestContext{ProjectID: "p1", UserID: "u1"}
	for _, minor := range []int{1, 12, 13, 14} {
		for _, detail := range []bool{false, true} {
			for _, limit := range []int{2, 3, 50} {
				path := "/v1/clusters"
				if detail {
					path += "/detail"
				}
				target := fmt.Sprintf("%s?limit=%d", path, limit)
				w := h.Do(t, "GET "+target, fmt.Sprintf("1.%d", minor), "")
				if w.Code != 200 {
					t.Fatalf("GET %s: %d %s", target, w.Code, w.Body.String())
				}
				if w.Header().Get("Content-Length") != fmt.Sprint(w.Body.Len()) || w.Header().Get("Content-Type") != "application/json" {
					t.Errorf("headers %v", w.Header())
				}
				page, err := h.c.ListClusters(ctx, rc, false, conductor.ListParams{Limit: limit, SortKey: "id", SortDir: "asc"})
				if err != nil {
					t.Fatal(err)
				}
				next := ""
				if len(page.Clusters) == limit {
					next = fmt.Sprintf("http://example.com/v1/%s?sort_key=id&sort_dir=asc&limit=%d&marker=%s",
						strings.TrimPrefix(path, "/v1/"), limit, page.Clusters[limit-1].UUID)
				}
				want := clusterPageBodyByObjects(t, viewRequest("http://example.com", minor), page, detail, next)
				if w.Body.String() != string(want) {
					t.Errorf("GET %s at 1.%d:\n got %s\nwant %s", target, minor,
						clFirstDiff(w.Body.Bytes(), want), clFirstDiff(want, w.Body.Bytes()))
				}
				var doc map[string]any
				if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// clCountingWriter records the pieces a handler writes and fails every
// write after the first failAfter (0: never).
type clCountingWriter struct {
	httptest.ResponseRecorder
	writes, failAfter int
}

func (w *clCountingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.failAfter > 0 && w.writes > w.failAfter {
		return 0, fmt.Errorf("connection reset")
	}
	return w.ResponseRecorder.Write(p)
}

// TestWriteClusterPage checks how a page goes out: in one piece with a
// Content-Length up to clStreamThreshold, in pieces without one beyond,
// with the same body either way, and that rendering stops writing once
// the client is gone.
func TestWriteClusterPage(t *testing.T) {
	small := viewPage()
	big := &conductor.ClusterPage{NodeGroups: small.NodeGroups, Templates: small.Templates}
	for len(clusterPageJSON(viewRequest("http://h", 14), big, false, "")) < 3*clStreamThreshold {
		big.Clusters = append(big.Clusters, small.Clusters...)
	}
	for _, tc := range []struct {
		name   string
		page   *conductor.ClusterPage
		stream bool
	}{{"small", small, false}, {"big", big, true}} {
		for _, detail := range []bool{false, true} {
			r := viewRequest("http://h", 14)
			w := &clCountingWriter{ResponseRecorder: *httptest.NewRecorder()}
			if err := writeClusterPage(w, r, tc.page, detail, "http://h/next"); err != nil {
				t.Fatal(err)
			}
			want := clusterPageBodyByObjects(t, r, tc.page, detail, "http://h/next")
			if w.Body.String() != string(want) {
				t.Errorf("%s detail %v: body differs: %s", tc.name, detail, clFirstDiff(w.Body.Bytes(), want))
			}
			if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("%s detail %v: %d %v", tc.name, detail, w.Code, w.Header())
			}
			cl := w.Header().Get("Content-Length")
			switch {
			case !tc.stream && (cl != fmt.Sprint(len(want)) || w.writes != 1):
				t.Errorf("%s detail %v: Content-Length %q for %d bytes in %d writes", tc.name, detail, cl, len(want), w.writes)
			case tc.stream && (cl != "" || w.writes < 3):
				t.Errorf("%s detail %v: Content-Length %q, %d writes", tc.name, detail, cl, w.writes)
			}
		}
	}
	w := &clCountingWriter{ResponseRecorder: *httptest.NewRecorder(), failAfter: 1}
	if err := writeClusterPage(w, viewRequest("http://h", 14), big, true, ""); err != nil {
		t.Errorf("error after the status line: %v", err)
	}
	if w.writes != 2 || w.Body.Len() > 2*clStreamThreshold {
		t.Errorf("%d writes (%d bytes) after the client went away, want 2", w.writes, w.Body.Len())
	}
}
