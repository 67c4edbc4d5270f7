package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStats(t *testing.T) {
	e := ngNewEnv(t)
	e.seed()
	for _, tc := range []struct {
		name   string
		who    ngCaller
		query  string
		status int
		want   map[string]any
		detail string
	}{
		{"own project by default", ngReader, "", 200, map[string]any{"clusters": 1.0, "nodes": 6.0}, ""},
		{"own project named", ngReader, "?project_id=p1", 200, map[string]any{"clusters": 1.0, "nodes": 6.0}, ""},
		{"another project", ngReader, "?project_id=p2", 403, nil, "Not authorized."},
		{"unknown type", ngReader, "?type=pods", 400, nil, "Invalid stats type. Allowed values are 'cluster'"},
		{"type is case-insensitive", ngReader, "?type=Cluster", 200, map[string]any{"clusters": 1.0, "nodes": 6.0}, ""},
		{"empty project of another caller", ngOther, "", 200, map[string]any{"clusters": 0.0, "nodes": 0.0}, ""},
		{"admin: every project", ngAdmin, "", 200, map[string]any{"clusters": 1.0, "nodes": 6.0}, ""},
		{"admin: one project", ngAdmin, "?project_id=p2", 200, map[string]any{"clusters": 0.0, "nodes": 0.0}, ""},
		{"unknown argument", ngReader, "?foo=1", 400, nil, `Unknown argument: "foo"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.who, "", "GET", "/v1/stats"+tc.query, nil)
			e.expect(r, tc.status, tc.detail)
			if tc.want != nil {
				if d := cmp.Diff(tc.want, r.body); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			}
		})
	}
}
