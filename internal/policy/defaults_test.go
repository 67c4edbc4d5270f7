package policy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// specDir is ${OKM_SPEC_DIR:-<repo>/../shared/spec}.
func specDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("OKM_SPEC_DIR"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "spec")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

var (
	sampleRule      = regexp.MustCompile(`^#"([^"]+)": "(.*)"$`)
	sampleOperation = regexp.MustCompile(`^# (GET|POST|PUT|PATCH|DELETE|HEAD)  (\S+)$`)
	sampleScope     = regexp.MustCompile(`^# Intended scope\(s\): (.*)$`)
	sampleDeprecate = regexp.MustCompile(`^# "([^"]+)":"(.*)"$`)
)

// parseSample reads the rules of an oslopolicy-sample-generator file: each
// rule is a block of comment lines (description, operations, intended
// scopes) ending with the commented-out rule, optionally followed by a
// "# DEPRECATED" block naming the deprecated rule.
func parseSample(t *testing.T, text string) []Rule {
	t.Helper()
	var rules []Rule
	for _, block := range strings.Split(strings.Trim(text, "\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		if lines[0] == "# DEPRECATED" {
			m := sampleDeprecate.FindStringSubmatch(lines[1])
			if m == nil || len(rules) == 0 {
				t.Fatalf("unexpected deprecation block %q", block)
			}
			rules[len(rules)-1].DeprecatedName = m[1]
			rules[len(rules)-1].DeprecatedCheckString = m[2]
			continue
		}
		m := sampleRule.FindStringSubmatch(lines[len(lines)-1])
		if m == nil {
			t.Fatalf("unexpected block %q", block)
		}
		r := Rule{Name: m[1], CheckString: m[2]}
		var desc []string
		for _, l := range lines[:len(lines)-1] {
			if om := sampleOperation.FindStringSubmatch(l); om != nil {
				r.Operations = append(r.Operations, Operation{Method: om[1], Path: om[2]})
			} else if sm := sampleScope.FindStringSubmatch(l); sm != nil {
				for _, s := range strings.Split(sm[1], ",") {
					r.ScopeTypes = append(r.ScopeTypes, strings.TrimSpace(s))
				}
			} else {
				desc = append(desc, strings.TrimPrefix(l, "# "))
			}
		}
		r.Description = strings.Join(desc, " ")
		rules = append(rules, r)
	}
	return rules
}

func TestMagnumDefaultsMatchSpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(specDir(t), "api", "policies.yaml"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("spec not available: %v", err)
	}
	want := parseSample(t, string(data))
	if len(want) != 66 {
		t.Fatalf("the spec lists %d rules, want 66", len(want))
	}
	got := MagnumDefaults()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MagnumDefaults() differ from policies.yaml (-want +got):\n%s", diff)
	}
}

func TestMagnumDefaultsParse(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range e.Rules() {
		if _, err := ParseRule(r.CheckString); err != nil {
			t.Errorf("%s: %v", r.Name, err)
		}
		if e.undefined(e.rules[r.Name].check) || e.reachesCycle(r.Name, map[string]int8{}, map[string]bool{}) {
			t.Errorf("%s refers to an undefined rule or is cyclic", r.Name)
		}
	}
	if n := len(e.Rules()); n != 66 {
		t.Errorf("%d rules, want 66", n)
	}
}
