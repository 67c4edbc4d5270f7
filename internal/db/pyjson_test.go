package db

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Expected strings are what Python's json.dumps writes for the same value
// (with keys in sorted order).
func TestPyJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"empty object", map[string]string{}, `{}`},
		{"separators", map[string]string{"b": "2", "a": "1"}, `{"a": "1", "b": "2"}`},
		{"empty list", []string{}, `[]`},
		{"list", []string{"10.0.0.21", "10.0.0.22"}, `["10.0.0.21", "10.0.0.22"]`},
		{"escapes", map[string]string{"k": "a\"b\\c\nd\te/f<g>&"}, `{"k": "a\"b\\c\nd\te/f<g>&"}`},
		{"control", []string{"\x01\x7f"}, `["\u0001\u007f"]`},
		{"non-ASCII", []string{"café ☃"}, `["caf\u00e9 \u2603"]`},
		{"astral", []string{"😀"}, `["\ud83d\ude00"]`},
		{"taints keep key, value, effect order", []map[string]string{{"effect": "NoSchedule", "value": "true", "key": "nvidia.com/gpu"}},
			`[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]`},
		{"taint without value", []map[string]string{{"effect": "NoExecute", "key": "k", "x": "y"}},
			`[{"key": "k", "effect": "NoExecute", "x": "y"}]`},
		{"nested any", map[string]any{"n": nil, "b": true, "l": []any{"x", false}}, `{"b": true, "l": ["x", false], "n": null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pyJSON(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("pyJSON(%#v) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestJSONColumnsDecode(t *testing.T) {
	var m map[string]string
	if err := (jsonMap{&m}).Scan([]byte(`{"api": "ok", "n": 3, "ready": true, "x": null}`)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"api": "ok", "n": "3", "ready": "True", "x": "None"}, m); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := (jsonMap{&m}).Scan(nil); err != nil || m != nil {
		t.Errorf("NULL decoded as %#v, %v", m, err)
	}
	var taints []magnum.NodeTaint
	src := `[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]`
	if err := (jsonTaints{&taints}).Scan(src); err != nil {
		t.Fatal(err)
	}
	back, err := (jsonTaints{&taints}).Value()
	if err != nil || back != src {
		t.Errorf("taints round trip = %v, %v; want %s", back, err, src)
	}
	var nilList []string
	if v, _ := (jsonList{&nilList}).Value(); v != "[]" {
		t.Errorf("nil list writes %v, want []", v)
	}
}
