package jsonpatch

import (
	"errors"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func clusterDoc() map[string]any {
	return map[string]any{
		"uuid":                 "5d12f6fd-a196-4bf0-ae4c-1f639a523a52",
		"name":                 "cluster1",
		"cluster_template_id":  "e74c40e0-d825-11e2-a28f-0800200c9a66",
		"node_count":           int64(1),
		"master_count":         int64(1),
		"labels":               map[string]any{"kube_tag": "v1.30"},
		"health_status":        nil,
		"health_status_reason": map[string]any{},
		"keypair":              nil,
		"docker_volume_size":   int64(20),
	}
}

func nodegroupDoc() map[string]any {
	return map[string]any{
		"uuid":           "483203a3-dbee-4a9c-9d65-9820512f4df8",
		"name":           "nodegroup1",
		"node_count":     int64(2),
		"min_node_count": int64(0),
		"max_node_count": nil,
		"node_labels":    map[string]any{},
		"node_taints":    []any{},
		"role":           "worker",
	}
}

// errText returns the message and status of a *magnum.Error.
func errText(t *testing.T, err error) (int, string) {
	t.Helper()
	var me *magnum.Error
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T) is not a *magnum.Error", err, err)
	}
	return me.Status, me.Message
}

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   []Operation
		status int
		msg    string
	}{
		{name: "replace with a string", body: `[{"op":"replace","path":"/name","value":"x"}]`,
			want: []Operation{{Op: "replace", Path: "/name", Value: "x"}}},
		{name: "integer, boolean and huge integer values", body: `[{"op":"replace","path":"/node_count","value":3},{"op":"add","path":"/a","value":true},{"op":"add","path":"/b","value":123456789012345678901234567890}]`,
			want: []Operation{{Op: "replace", Path: "/node_count", Value: int64(3)}, {Op: "add", Path: "/a", Value: true},
				{Op: "add", Path: "/b", Value: mustBig("123456789012345678901234567890")}}},
		{name: "remove without value", body: `[{"path":"/x","op":"remove"}]`, want: []Operation{{Op: "remove", Path: "/x"}}},
		{name: "null value is absent", body: `[{"path":"/x","op":"remove","value":null}]`, want: []Operation{{Op: "remove", Path: "/x"}}},
		{name: "empty list", body: `[]`, want: []Operation{}},
		{name: "unicode path", body: `[{"path":"/labels/clé","op":"remove"}]`, want: []Operation{{Op: "remove", Path: "/labels/clé"}}},
		{name: "not json", body: `{`, status: 400, msg: "Request is not in valid JSON format"},
		{name: "empty body", body: ``, status: 400, msg: `Missing argument: "patch"`},
		{name: "object instead of list", body: `{"op":"add"}`, status: 400,
			msg: `Invalid input for field/attribute patch. Value: '{'op': 'add'}'. Value not a valid list: {'op': 'add'}`},
		{name: "bad op", body: `[{"op":"invalid","path":"/name","value":"x"}]`, status: 400,
			msg: "Invalid input for field/attribute op. Value: 'invalid'. Value should be one of: add, remove, replace"},
		{name: "bad path", body: `[{"op":"add","path":"invalid-path","value":"x"}]`, status: 400,
			msg: `Invalid input for field/attribute path. Value: 'invalid-path'. Value should match the pattern ^(/[\w-]+)+$`},
		{name: "dotted label key path", body: `[{"op":"add","path":"/labels/a.b","value":"x"}]`, status: 400,
			msg: `Invalid input for field/attribute path. Value: '/labels/a.b'. Value should match the pattern ^(/[\w-]+)+$`},
		{name: "missing path", body: `[{"op":"add","value":"x"}]`, status: 400,
			msg: "Invalid input for field/attribute path. Value: 'None'. Mandatory field missing."},
		{name: "missing op", body: `[{"path":"/a","value":"x"}]`, status: 400,
			msg: "Invalid input for field/attribute op. Value: 'None'. Mandatory field missing."},
		{name: "float value", body: `[{"op":"replace","path":"/node_count","value":1.5}]`, status: 400,
			msg: "Invalid input for field/attribute value. Value: '1.5'. Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '<class 'float'>'"},
		{name: "object value", body: `[{"op":"replace","path":"/labels","value":{"b":"1","a":"2"}}]`, status: 400,
			msg: "Invalid input for field/attribute value. Value: '{'b': '1', 'a': '2'}'. Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '<class 'dict'>'"},
		{name: "array value", body: `[{"op":"replace","path":"/node_taints","value":[]}]`, status: 400,
			msg: "Invalid input for field/attribute value. Value: '[]'. Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '<class 'list'>'"},
		{name: "extra key", body: `[{"op":"add","path":"/a","value":"x","from":"/b"}]`, status: 400,
			msg: "Unknown attribute for argument patch: from"},
		{name: "non-object element", body: `["x"]`, status: 400, msg: "'str' object has no attribute 'keys'"},
		{name: "path not a string", body: `[{"op":"add","path":5,"value":"x"}]`, status: 400,
			msg: "Invalid input for field/attribute path. Value: '5'. Value should be string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.body))
			if tt.msg != "" {
				if err == nil {
					t.Fatalf("Parse = %v, want error %q", got, tt.msg)
				}
				status, msg := errText(t, err)
				if status != tt.status || msg != tt.msg {
					t.Fatalf("error = %d %q\nwant    %d %q", status, msg, tt.status, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b *big.Int) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func mustBig(s string) *big.Int {
	b, _ := new(big.Int).SetString(s, 10)
	return b
}

func TestParseAndCheckOrder(t *testing.T) {
	// The first element's attribute rule fails before the second element's
	// type check, as WSME validates element by element.
	_, err := ParseAndCheck([]byte(`[{"op":"replace","path":"/uuid","value":"x"},{"op":"bogus","path":"/a"}]`), ClusterRules)
	if _, msg := errText(t, err); msg != "'/uuid' is an internal attribute and can not be updated" {
		t.Fatalf("got %q", msg)
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name   string
		doc    func() map[string]any
		rules  Rules
		ops    string
		check  func(t *testing.T, out map[string]any)
		status int
		msg    string
	}{
		{name: "replace node_count", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"replace","path":"/node_count","value":3}]`,
			check: func(t *testing.T, out map[string]any) {
				if out["node_count"] != int64(3) {
					t.Errorf("node_count = %v", out["node_count"])
				}
			}},
		{name: "remove resets to null", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"remove","path":"/node_count"}]`,
			check: func(t *testing.T, out map[string]any) {
				if _, ok := out["node_count"]; ok {
					t.Errorf("node_count still present: %v", out["node_count"])
				}
			}},
		{name: "internal attribute", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"replace","path":"/uuid","value":"x"}]`, status: 400,
			msg: "'/uuid' is an internal attribute and can not be updated"},
		{name: "internal nodegroup attribute", doc: nodegroupDoc, rules: NodeGroupRules,
			ops: `[{"op":"replace","path":"/node_count","value":3}]`, status: 400,
			msg: "'/node_count' is an internal attribute and can not be updated"},
		{name: "mandatory attribute", doc: clusterDoc, rules: ClusterTemplateRules,
			ops: `[{"op":"remove","path":"/image_id"}]`, status: 400,
			msg: "'/image_id' is a mandatory attribute and can not be removed"},
		{name: "add needs value", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"add","path":"/keypair"}]`, status: 400, msg: "'add' and 'replace' operations needs value"},
		{name: "add of unknown top-level attribute", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"add","path":"/foo","value":"x"}]`, status: 400,
			msg: "Adding a new attribute /foo to the root of the resource is not allowed."},
		{name: "add of a set attribute", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"add","path":"/docker_volume_size","value":3}]`, status: 400,
			msg: "The attribute /docker_volume_size has existed, please use 'replace' operation instead."},
		{name: "add of an unset attribute", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"add","path":"/keypair","value":"kp"}]`,
			check: func(t *testing.T, out map[string]any) {
				if out["keypair"] != "kp" {
					t.Errorf("keypair = %v", out["keypair"])
				}
			}},
		{name: "add on labels always fails", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"add","path":"/labels","value":"{}"}]`, status: 400,
			msg: "The attribute /labels has existed, please use 'replace' operation instead."},
		{name: "nested add creates a key", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"add","path":"/labels/new","value":"v"}]`,
			check: func(t *testing.T, out map[string]any) {
				want := map[string]any{"kube_tag": "v1.30", "new": "v"}
				if diff := cmp.Diff(want, out["labels"]); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "replace of a missing attribute", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"path":"/foo","op":"replace","value":"x"}]`, status: 400,
			msg: "Couldn't apply patch '[{'path': '/foo', 'op': 'replace', 'value': 'x'}]'. Reason: can't replace a non-existent object 'foo'"},
		{name: "remove of a missing attribute", doc: nodegroupDoc, rules: NodeGroupRules,
			ops: `[{"path":"/not_there","op":"remove"}]`, status: 400,
			msg: "Couldn't apply patch '[{'path': '/not_there', 'op': 'remove'}]'. Reason: can't remove a non-existent object 'not_there'"},
		{name: "deep path into a missing key", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"path":"/health_status_reason/a/b","op":"add","value":"x"}]`, status: 400,
			msg: "Couldn't apply patch '[{'path': '/health_status_reason/a/b', 'op': 'add', 'value': 'x'}]'. Reason: member 'a' not found in {}"},
		{name: "labels from a python literal", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"replace","path":"/labels","value":"{'a': 'b', \"c\": 'd'}"}]`,
			check: func(t *testing.T, out map[string]any) {
				got, err := StringMap("labels", out["labels"])
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(map[string]string{"a": "b", "c": "d"}, got); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "bad literal", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"path":"/labels","op":"replace","value":"{bad"}]`, status: 400,
			msg: "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': '{bad'}]'. Reason: '{' was never closed (<unknown>, line 1)"},
		{name: "integer literal value", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"path":"/labels","op":"replace","value":5}]`, status: 400,
			msg: "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': 5}]'. Reason: malformed node or string: 5"},
		{name: "earlier parsed values show in the message", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"path":"/labels","op":"replace","value":"{'a': 1}"},{"path":"/nope","op":"remove"}]`, status: 400,
			msg: "Couldn't apply patch '[{'path': '/labels', 'op': 'replace', 'value': {'a': 1}}, {'path': '/nope', 'op': 'remove'}]'. Reason: can't remove a non-existent object 'nope'"},
		{name: "unhashable key is a client error", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"path":"/labels","op":"replace","value":"{[1]: 2}"}]`, status: 400, msg: "unhashable type: 'list'"},
		{name: "taints from a python literal", doc: nodegroupDoc, rules: NodeGroupRules,
			ops: `[{"op":"replace","path":"/node_taints","value":"[{'key': 'k', 'effect': 'NoSchedule'}]"}]`,
			check: func(t *testing.T, out map[string]any) {
				got, err := Taints("node_taints", out["node_taints"])
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]map[string]string{{"key": "k", "effect": "NoSchedule"}}, got); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "nodegroup min count removal", doc: nodegroupDoc, rules: NodeGroupRules,
			ops: `[{"op":"remove","path":"/min_node_count"},{"op":"add","path":"/max_node_count","value":5}]`,
			check: func(t *testing.T, out map[string]any) {
				if _, ok := out["min_node_count"]; ok || out["max_node_count"] != int64(5) {
					t.Errorf("got %v", out)
				}
			}},
		{name: "list append and insert", doc: nodegroupDoc, rules: NodeGroupRules,
			ops: `[{"op":"add","path":"/node_taints/-","value":"a"},{"op":"add","path":"/node_taints/0","value":"b"}]`,
			check: func(t *testing.T, out map[string]any) {
				if diff := cmp.Diff([]any{"b", "a"}, out["node_taints"]); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "list insert out of range", doc: nodegroupDoc, rules: NodeGroupRules,
			ops: `[{"op":"add","path":"/node_taints/3","value":"a"}]`, status: 400,
			msg: "Couldn't apply patch '[{'path': '/node_taints/3', 'op': 'add', 'value': 'a'}]'. Reason: can't insert outside of list"},
		{name: "bad sequence index", doc: nodegroupDoc, rules: NodeGroupRules,
			ops: `[{"op":"remove","path":"/node_taints/x"}]`, status: 400,
			msg: "Couldn't apply patch '[{'path': '/node_taints/x', 'op': 'remove'}]'. Reason: 'x' is not a valid sequence index"},
		{name: "walking into null", doc: clusterDoc, rules: ClusterRules,
			ops: `[{"op":"add","path":"/keypair/a","value":"x"}]`, status: 400,
			msg: "Couldn't apply patch '[{'path': '/keypair/a', 'op': 'add', 'value': 'x'}]'. Reason: Document '<class 'NoneType'>' does not support indexing, must be mapping/sequence or support __getitem__"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := Parse([]byte(tt.ops))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			doc := tt.doc()
			before := deepCopy(doc)
			out, err := Apply(doc, ops, tt.rules)
			if diff := cmp.Diff(before, any(doc)); diff != "" {
				t.Errorf("Apply modified its input (-before +after)\n%s", diff)
			}
			if tt.msg != "" {
				if err == nil {
					t.Fatalf("Apply = %v, want error %q", out, tt.msg)
				}
				status, msg := errText(t, err)
				if status != tt.status || msg != tt.msg {
					t.Fatalf("error = %d %q\nwant    %d %q", status, msg, tt.status, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, out)
		})
	}
}

func TestValueCheckers(t *testing.T) {
	d := &Dict{Keys: []any{int64(1)}, Values: []any{"a"}}
	if _, err := StringMap("node_labels", d); err == nil || err.Error() != "Invalid input for field/attribute node_labels. Value: '{1: 'a'}'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'" {
		t.Errorf("StringMap: %v", err)
	}
	if _, err := StringMap("node_labels", map[string]any{"a": int64(1)}); err == nil || err.Error() != "Invalid input for field/attribute node_labels. Value: '{'a': 1}'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'" {
		t.Errorf("StringMap: %v", err)
	}
	got, err := Labels("labels", &Dict{Keys: []any{"a", "b", "c"}, Values: []any{int64(1), true, 1.5}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a": "1", "b": "True", "c": "1.5"}, got); diff != "" {
		t.Errorf("Labels (-want +got)\n%s", diff)
	}
	if _, err := Labels("labels", &Dict{Keys: []any{"a"}, Values: []any{&Dict{Keys: []any{"b"}, Values: []any{int64(1)}}}}); err == nil ||
		err.Error() != "Invalid input for field/attribute labels. Value: '{'a': {'b': 1}}'. Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '<class 'dict'>'" {
		t.Errorf("Labels: %v", err)
	}
	if order := StringMapOrder(&Dict{Keys: []any{"z", "a"}, Values: []any{"1", "2"}}); !cmp.Equal(order, []string{"z", "a"}) {
		t.Errorf("StringMapOrder = %v", order)
	}
	if v, _, ok := ToJSON(Tuple{int64(1), &Dict{Keys: []any{"a"}, Values: []any{nil}}}); !ok || !cmp.Equal(v, any([]any{int64(1), map[string]any{"a": nil}})) {
		t.Errorf("ToJSON = %v %v", v, ok)
	}
	if _, bad, ok := ToJSON(Set{int64(1)}); ok || bad != "set" {
		t.Errorf("ToJSON(set) = %v %v", bad, ok)
	}
}

func BenchmarkApply(b *testing.B) {
	ops, err := Parse([]byte(`[{"op":"replace","path":"/node_count","value":3},{"op":"replace","path":"/health_status","value":"HEALTHY"},` +
		`{"op":"replace","path":"/health_status_reason","value":"{'api': 'ok', 'node-0.Ready': 'True', 'node-1.Ready': 'True'}"},` +
		`{"op":"add","path":"/labels/extra","value":"x"}]`))
	if err != nil {
		b.Fatal(err)
	}
	doc := clusterDoc()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Apply(doc, ops, ClusterRules); err != nil {
			b.Fatal(err)
		}
	}
}
