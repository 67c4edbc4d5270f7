package db

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"context"
	"github.com/google/go-cmp/cmp"
)

// randomText mixes ASCII, escapes, non-ASCII and astral characters.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x7f", "é", "☃", "😀", "<", "&", "'", "\u2028"}
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestPyJSONOracle compares pyJSON with Python's json.dumps (sort_keys, as
// we write keys sorted) on generated values. It needs OPENKEEL_TEST_PYTHON.
func TestPyJSONOracle(t *testing.T) {
	py := os.Getenv("OPENKEEL_TEST_PYTHON")
	if py == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("OPENKEEL_TEST_PYTHON is not set (required when CI=true)")
		}
		t.Skip("OPENKEEL_TEST_PYTHON not set")
	}
	r := rand.New(rand.NewPCG(1, 2))
	var inputs []any
	var want []string
	for i := range 300 {
		var v any
		if i%2 == 0 {
			m := map[string]string{}
			for range r.IntN(4) {
				m[randomText(r)] = randomText(r)
			}
			v = m
		} else {
			l := []string{}
			for range r.IntN(4) {
				l = append(l, randomText(r))
			}
			v = l
		}
		s, err := pyJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, v)
		want = append(want, s)
	}
	in, _ := json.Marshal(inputs)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", `import json, sys
for v in json.load(sys.stdin):
    print(json.dumps(json.dumps(v, sort_keys=True)))`)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var s string
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("pyJSON differs from json.dumps (-python +ours):\n%s", diff)
	}
}

// FuzzPyJSON: the output is ASCII and decodes back to the input.
func FuzzPyJSON(f *testing.F) {
	for _, s := range []string{"", "a\"b", "é☃😀", "\x00\x1f\x7f", "\ufffd"} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			t.Skip()
		}
		m := map[string]string{k: v}
		s, err := pyJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				t.Fatalf("non-ASCII byte in %q", s)
			}
		}
		back, err := decodeStringMap(s)
		if err != nil {
			t.Fatalf("decode %q: %v", s, err)
		}
		if diff := cmp.Diff(m, back); diff != "" {
			t.Fatalf("round trip of %q (-in +out):\n%s", s, diff)
		}
	})
}
