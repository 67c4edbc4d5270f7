package conformance

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHarness checks the pieces of the replay environment that do not come
// from the project's packages.
func TestHarness(t *testing.T) {
	t.Run("JSON columns are written as Python's json.dumps writes them", func(t *testing.T) {
		got, err := pyJSON([]byte(`{"b":"é😀","a":[1,{"x":"a,b:c"}],"q":"\"\\"}`))
		if err != nil {
			t.Fatal(err)
		}
		want := `{"b": "\u00e9\ud83d\ude00", "a": [1, {"x": "a,b:c"}], "q": "\"\\"}`
		if got != want {
			t.Errorf("pyJSON:\n got %s\nwant %s", got, want)
		}
	})

	t.Run("recorded values become the stored column values", func(t *testing.T) {
		for _, tc := range []struct {
			table, col, raw string
			want            any
		}{
			{"nodegroup", "labels", `null`, "{}"},
			{"nodegroup", "node_addresses", `null`, "[]"},
			{"cluster", "discovery_url", `null`, nil},
			{"cluster", "master_lb_enabled", `true`, true},
			{"cluster", "created_at", `"2026-11-30T01:33:02.123456"`, "2026-11-30 01:33:02.123456"},
			{"cluster", "created_at", `"2026-11-30T01:33:02"`, "2026-11-30 01:33:02.000000"},
			{"cluster", "id", `42`, int64(42)},
			{"cluster", "labels", `{"k":"v"}`, `{"k": "v"}`},
			{"cluster", "name", `"x"`, "x"},
		} {
			got, err := columnValue(tc.table, tc.col, json.RawMessage(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s.%s = %s (-want +got):\n%s", tc.table, tc.col, tc.raw, diff)
			}
		}
	})

	t.Run("a quoted body is sent in the quoted key order", func(t *testing.T) {
		rec := Record{
			Request: RecordedRequest{Method: "POST", Path: "/v1/clusters",
				Body: json.RawMessage(`{"a": 1, "labels": {"z": "1"}, "name": "n", "zz": null}`)},
			Response: RecordedResponse{Status: 400,
				Body: json.RawMessage(`{"errors": [{"detail": "Invalid input for field/attribute cluster. Value: '{'name': 'n', 'labels': {'z': '1'}, 'a': 1}'. x"}]}`)},
		}
		req, err := replayRequest(rec)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(req.Body)
		want := `{"name": "n", "labels": {"z": "1"}, "a": 1, "zz": null}`
		if string(body) != want || req.ContentLength != int64(len(want)) {
			t.Errorf("body %s (length %d), want %s", body, req.ContentLength, want)
		}
	})

	t.Run("policy overrides replace the whole rule set", func(t *testing.T) {
		rec := Record{PolicyOverrides: map[string]string{"cluster:get_all": "project_id:fake_project"}}
		p := buildPolicy(t, rec)
		creds := map[string]any{"project_id": "fake_project", "roles": []string{"admin"}}
		target := map[string]any{"project_id": "fake_project"}
		if ok, err := p.Enforce("cluster:get_all", target, creds); !ok || err != nil {
			t.Errorf("overridden rule: %v, %v; want allowed", ok, err)
		}
		if ok, _ := p.Enforce("cluster:get", target, creds); ok {
			t.Error("a rule that is not overridden is allowed; want undefined (denied)")
		}
	})

	t.Run("a mocked enforce answers its return value only to the publish check", func(t *testing.T) {
		p := buildPolicy(t, Record{Mocks: []Mock{{Target: "magnum.common.policy.enforce", ReturnValue: false}}})
		if ok, _ := p.Enforce("cluster:create", nil, nil); !ok {
			t.Error("raising check denied")
		}
		if ok, _ := p.Enforce("clustertemplate:publish", nil, nil); ok {
			t.Error("publish allowed with return_value false")
		}
	})
}
