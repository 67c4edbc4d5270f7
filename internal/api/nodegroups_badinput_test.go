package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSecondaryResourcesBadInput sends malformed and refused requests to
// every nodegroup, quota, stats, federation and credential route and checks
// that each is answered with a 4xx and that no table changed.
func TestSecondaryResourcesBadInput(t *testing.T) {
	e := ngNewEnv(t)
	e.seed()
	e.expect(e.do(ngAdmin, "", "POST", "/v1/quotas", map[string]any{"project_id": "p1", "hard_limit": 3}), 201, "")
	e.expect(e.do(ngMember, "", "POST", "/v1/federations", map[string]any{
		"name": "f1", "hostcluster_id": "c1", "properties": map[string]any{"dns-zone": "z."}}), 202, "")
	before := e.snapshot()

	ng := ngBase + "/extra"
	for _, tc := range []struct {
		who    ngCaller
		ver    string
		method string
		path   string
		body   any
	}{
		{ngMember, "1.9", "POST", ngBase, "{not json"},
		{ngMember, "1.9", "POST", ngBase, "[1, 2]"},
		{ngMember, "1.9", "POST", ngBase, `{"name": 5}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "node_count": "many"}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "node_count": 99999999999999999999999}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "labels": [1]}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "labels": {"a": {"b": 1}}}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "node_labels": {"a": 1}}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "node_taints": "NoSchedule"}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "node_taints": [{"key": "k", "effect": "Bogus"}]}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "node_taints": [{"key": "k", "effect": "NoSchedule", "vaule": "v"}]}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "is_default": "maybe"}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "uuid": "not-a-uuid"}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "docker_volume_size": 0}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": "x", "min_node_count": 2, "node_count": 1}`},
		{ngMember, "1.9", "POST", ngBase, `{"node_count": 1}`},
		{ngMember, "1.9", "POST", ngBase, `{"name": ""}`},
		{ngMember, "1.9", "POST", "/v1/clusters/nope/nodegroups", map[string]any{"name": "x"}},
		{ngReader, "1.9", "POST", ngBase, map[string]any{"name": "x"}},
		{ngMember, "1.8", "POST", ngBase, map[string]any{"name": "x"}},
		{ngMember, "1.9", "PATCH", ng, `{"op": "replace"}`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "move", "path": "/max_node_count", "value": 1}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/max_node_count"}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/max_node_count", "value": "7"}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/max_node_count", "value": -1}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/max_node_count", "value": 1.5}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/node_labels", "value": "{'a': "}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/node_labels", "value": "[1, 2]"}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/node_labels", "value": "{'kubernetes.io/role': 'x'}"}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/node_taints", "value": "[{'effect': 'NoSchedule'}]"}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/node_taints", "value": "{'a': 'b'}"}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "add", "path": "/min_node_count", "value": 1}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "add", "path": "/node_addresses/0", "value": "x"}]`},
		{ngMember, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/min_node_count", "value": 9}]`},
		{ngOther, "1.9", "PATCH", ng, `[{"op": "replace", "path": "/max_node_count", "value": 4}]`},
		{ngMember, "1.9", "DELETE", ngBase + "/default-master", nil},
		{ngReader, "1.9", "DELETE", ng, nil},
		{ngAdmin, "", "POST", "/v1/quotas", `{"project_id": "p1"}`},
		{ngAdmin, "", "POST", "/v1/quotas", `{"project_id": "p5", "hard_limit": "x"}`},
		{ngAdmin, "", "POST", "/v1/quotas", `{"project_id": "", "hard_limit": 1}`},
		{ngAdmin, "", "POST", "/v1/quotas", `{"project_id": "p5", "created_at": "now"}`},
		{ngAdmin, "", "PATCH", "/v1/quotas/p1/Cluster", `[{"op": "replace", "path": "/hard_limit", "value": 2}]`},
		{ngAdmin, "", "PATCH", "/v1/quotas/p1/Cluster", `{"hard_limit": -5}`},
		{ngAdmin, "", "PATCH", "/v1/quotas/p1/Cluster", `{"resource": "Pod"}`},
		{ngMember, "", "PATCH", "/v1/quotas/p1/Cluster", `{"hard_limit": 5}`},
		{ngAdmin, "", "DELETE", "/v1/quotas/p1/Pod", nil},
		{ngAdmin, "", "GET", "/v1/quotas?all_tenants=maybe", nil},
		{ngAdmin, "", "GET", "/v1/quotas?marker=x", nil},
		{ngReader, "", "GET", "/v1/stats?type=node", nil},
		{ngReader, "", "GET", "/v1/stats?project_id=p2", nil},
		{ngMember, "", "POST", "/v1/federations", `{"hostcluster_id": "c1", "properties": {"dns-zone": 1}}`},
		{ngMember, "", "POST", "/v1/federations", `{"hostcluster_id": "c1", "member_ids": "a", "properties": {"dns-zone": "z."}}`},
		{ngMember, "", "POST", "/v1/federations", `{"hostcluster_id": "c1", "properties": {"dns-zone": "z."}, "links": []}`},
		{ngMember, "", "PATCH", "/v1/federations/f1", `[]`},
		{ngMember, "", "PATCH", "/v1/federations/f1", `[{"op": "replace", "path": "/properties", "value": "{'a': 'b'}"}]`},
		{ngMember, "", "PATCH", "/v1/federations/f1", `[{"op": "replace", "path": "/member_ids", "value": "x"}]`},
		{ngMember, "", "PATCH", "/v1/federations/f1", `[{"op": "replace", "path": "/status", "value": "CREATE_FAILED"}]`},
		{ngMember, "", "PATCH", "/v1/federations/f1?rollback=maybe", `[{"op": "add", "path": "/properties/x", "value": "y"}]`},
		{ngOther, "", "DELETE", "/v1/federations/f1", nil},
		{ngMember, "1.12", "PATCH", "/v1/credentials/nope", nil},
		{ngMember, "1.12", "PATCH", "/v1/credentials/c1", `{"x": 1}`},
		{ngMember, "1.11", "PATCH", "/v1/credentials/c1", nil},
	} {
		r := e.do(tc.who, tc.ver, tc.method, tc.path, tc.body)
		if r.status < 400 || r.status >= 500 {
			t.Errorf("%s %s %v: status %d, want a 4xx: %s", tc.method, tc.path, tc.body, r.status, r.raw)
		}
	}
	if d := cmp.Diff(before, e.snapshot()); d != "" {
		t.Errorf("tables changed (-before +after):\n%s", d)
	}
}
