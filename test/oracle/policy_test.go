package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/policy"
)

// TestPolicyOracle compares internal/policy with oslo.policy on generated
// cases: the 66 Magnum rules and two override files (policy-language.yaml
// exercises the rule language, policy-compat.json the "default" rule and
// overrides of deprecated names) plus a policy directory, for every
// combination of enforce_scope and enforce_new_defaults, with credentials drawn from personas and targets
// from owned, foreign, incomplete and oddly typed resources.
func TestPolicyOracle(t *testing.T) {
	py := os.Getenv("OPENKEEL_TEST_PYTHON")
	if py == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("OPENKEEL_TEST_PYTHON is not set (run scripts/ci/python-oracle.sh)")
		}
		t.Skip("OPENKEEL_TEST_PYTHON is not set; run: eval \"$(scripts/ci/python-oracle.sh)\"")
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}

	files := []string{"", filepath.Join(testdata, "policy-language.yaml"), filepath.Join(testdata, "policy-compat.json")}
	var configs []oracleConfig
	for _, f := range files {
		for _, scope := range []bool{true, false} {
			for _, newDefaults := range []bool{true, false} {
				configs = append(configs, oracleConfig{PolicyFile: f, EnforceScope: scope, EnforceNewDefaults: newDefaults})
			}
		}
	}
	// Policy directories: on top of the language file, files in name order,
	// dot files skipped.
	for _, scope := range []bool{true, false} {
		configs = append(configs, oracleConfig{
			PolicyFile: files[1], PolicyDirs: []string{filepath.Join(testdata, "policy.d")},
			EnforceScope: scope, EnforceNewDefaults: !scope,
		})
	}
	enforcers := make([]*policy.Enforcer, len(configs))
	for i, c := range configs {
		e, err := policy.New(policy.Options{
			PolicyFile:         c.PolicyFile,
			PolicyDirs:         c.PolicyDirs,
			EnforceScope:       c.EnforceScope,
			EnforceNewDefaults: c.EnforceNewDefaults,
		})
		if err != nil {
			t.Fatalf("config %d: %v", i, err)
		}
		enforcers[i] = e
	}

	defaults := policy.MagnumDefaults()
	names := ruleNames(defaults, files[1:])
	names = append(names, "t:dir_only")
	cases := generateCases(len(configs), names, 8000)
	cases = append(cases, generateExpressions(len(configs), 12000)...)

	// Both sides read the same JSON, so numbers, nulls and lists are the
	// same values in Go and in Python.
	input, err := json.Marshal(oracleInput{Defaults: wireDefaults(defaults), Configs: configs, Cases: cases})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "cases.json"), filepath.Join(dir, "results.json")
	if err := os.WriteFile(in, input, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join(testdata, "policy_oracle.py"), in, out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	t.Logf("oslo.policy evaluated the cases in %v", time.Since(start).Round(time.Millisecond))
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	var decoded oracleInput
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(decoded.Cases) {
		t.Fatalf("oracle returned %d results for %d cases", len(want), len(decoded.Cases))
	}

	counts := map[string]int{}
	diffs := 0
	for i, c := range decoded.Cases {
		got := outcome(enforcers[c.Config], c)
		counts[want[i]]++
		if got != want[i] {
			diffs++
			if diffs <= 200 {
				cfg := configs[c.Config]
				cj, _ := json.Marshal(c.Creds)
				tj, _ := json.Marshal(c.Target)
				rule := c.Rule
				if c.Check != nil {
					rule = "check " + *c.Check
				}
				t.Errorf("case %d: rule %q file=%q dirs=%v scope=%v new_defaults=%v\n  creds  %s\n  target %s\n  oslo.policy: %s, ours: %s",
					i, rule, filepath.Base(cfg.PolicyFile), len(cfg.PolicyDirs) > 0, cfg.EnforceScope, cfg.EnforceNewDefaults, cj, tj, want[i], got)
			}
		}
	}
	t.Logf("%d cases (%d configurations, %d rule names): outcomes %v; %d differences",
		len(decoded.Cases), len(configs), len(names), counts, diffs)
}

type oracleConfig struct {
	PolicyFile         string   `json:"policy_file"`
	PolicyDirs         []string `json:"policy_dirs"`
	EnforceScope       bool     `json:"enforce_scope"`
	EnforceNewDefaults bool     `json:"enforce_new_defaults"`
}

type wireDefault struct {
	Name                  string   `json:"name"`
	CheckString           string   `json:"check_string"`
	ScopeTypes            []string `json:"scope_types,omitempty"`
	DeprecatedName        string   `json:"deprecated_name,omitempty"`
	DeprecatedCheckString string   `json:"deprecated_check_string,omitempty"`
}

type oracleCase struct {
	Config int    `json:"config"`
	Rule   string `json:"rule,omitempty"`
	// Check is an ad-hoc check string, evaluated instead of a named rule.
	Check  *string        `json:"check,omitempty"`
	Creds  map[string]any `json:"creds"`
	Target map[string]any `json:"target"`
}

type oracleInput struct {
	Defaults []wireDefault  `json:"defaults"`
	Configs  []oracleConfig `json:"configs"`
	Cases    []oracleCase   `json:"cases"`
}

func wireDefaults(rules []policy.Rule) []wireDefault {
	out := make([]wireDefault, len(rules))
	for i, r := range rules {
		out[i] = wireDefault{r.Name, r.CheckString, r.ScopeTypes, r.DeprecatedName, r.DeprecatedCheckString}
	}
	return out
}

func outcome(e *policy.Enforcer, c oracleCase) string {
	var ok bool
	var err error
	if c.Check != nil {
		ok, err = e.Check(*c.Check, c.Target, c.Creds)
	} else {
		ok, err = e.Enforce(c.Rule, c.Target, c.Creds)
	}
	var scope *policy.InvalidScopeError
	var parse *policy.ParseError
	switch {
	case errors.As(err, &scope):
		return "scope"
	case errors.As(err, &parse):
		return "deny"
	case err != nil:
		return "error"
	case ok:
		return "allow"
	}
	return "deny"
}

// ruleNames lists the 66 defaults, every rule of the override files, the
// deprecated names and a few unknown names.
func ruleNames(defaults []policy.Rule, files []string) []string {
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, d := range defaults {
		add(d.Name)
	}
	for _, f := range files {
		e, err := policy.New(policy.Options{PolicyFile: f, Defaults: []policy.Rule{}})
		if err != nil {
			panic(err)
		}
		keys := make([]string, 0)
		for k := range e.Overrides() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(k)
		}
	}
	for _, n := range []string{"rule:admin_or_owner", "no_such_rule", "cluster:nope", ""} {
		add(n)
	}
	return names
}

// generateCases draws n cases deterministically: every rule name in turn,
// with a random configuration, persona and target.
func generateCases(nConfigs int, names []string, n int) []oracleCase {
	r := rand.New(rand.NewPCG(20261130, 66))
	cases := make([]oracleCase, 0, n)
	for i := range n {
		creds := personas[r.IntN(len(personas))]()
		cases = append(cases, oracleCase{
			Config: r.IntN(nConfigs),
			Rule:   names[i%len(names)],
			Creds:  creds,
			Target: makeTarget(r, creds),
		})
	}
	return cases
}

func projectCreds(user, project string, roles ...string) map[string]any {
	rs := make([]any, len(roles))
	for i, x := range roles {
		rs[i] = x
	}
	return map[string]any{
		"user_id": user, "project_id": project, "roles": rs, "is_admin": false,
		"user_domain_id": "default", "project_domain_id": "default", "domain_id": nil,
		"system_scope": nil,
	}
}

func with(m map[string]any, kv ...any) map[string]any {
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

var personas = []func() map[string]any{
	func() map[string]any {
		return with(projectCreds("u1", "p1", "admin", "member", "reader"), "is_admin", true)
	},
	func() map[string]any { return projectCreds("u1", "p1", "member", "reader") },
	func() map[string]any { return projectCreds("u2", "p1", "member", "reader") },
	func() map[string]any { return projectCreds("u3", "p1", "reader") },
	func() map[string]any { return projectCreds("u3", "p1", "member") },
	func() map[string]any { return projectCreds("u4", "p2", "member", "reader") },
	func() map[string]any {
		return with(projectCreds("u5", "", "admin", "reader"), "project_id", nil, "system_scope", "all", "is_admin", true)
	},
	func() map[string]any {
		return with(projectCreds("u6", "", "admin"), "project_id", nil, "domain_id", "d1")
	},
	func() map[string]any { return with(projectCreds("u7", "p1", "reader"), "system_scope", "") },
	func() map[string]any { return projectCreds("u8", "p1") },
	func() map[string]any { m := projectCreds("u8", "p1"); delete(m, "roles"); return m },
	func() map[string]any { return projectCreds("u1", "p1", "ADMIN", "Member", "READER") },
	func() map[string]any { return with(projectCreds("u1", "p1", "member"), "is_admin", true) },
	func() map[string]any { return projectCreds("u1", "p1", "admin") },
	func() map[string]any { return projectCreds("u9", "p1", "cloud_admin", "legacy") },
	func() map[string]any { return with(projectCreds("u1", "p1"), "roles", "admin") },
	func() map[string]any { return with(projectCreds("u1", "p1"), "roles", []any{float64(1), "admin"}) },
	func() map[string]any { return with(projectCreds("u1", "p1"), "roles", nil) },
	func() map[string]any { return projectCreds("u1", "p1", "i\u0307", "\u03bf\u03b4\u03bf\u03c2") },
	func() map[string]any { return projectCreds("u1", "p1", "İ", "i") },
	func() map[string]any { return projectCreds("u1", "p1", "οδοσ") },
	func() map[string]any {
		return with(projectCreds("u1", "p1", "member", "reader"),
			"auth", map[string]any{"project": map[string]any{"id": "p1"}},
			"groups", []any{"g1", "g2", map[string]any{"name": "g3"}})
	},
	func() map[string]any {
		return with(projectCreds("u2", "p2", "reader"), "auth", "flat", "groups", []any{map[string]any{"name": "g1"}, "g2"})
	},
	func() map[string]any {
		return with(projectCreds("u1", "p1", "member"), "project_id", float64(1), "user_id", float64(2))
	},
	func() map[string]any {
		return with(projectCreds("u1", "p1", "a", "b", "c", "member"), "True", map[string]any{"x": "abc"})
	},
	func() map[string]any {
		return with(projectCreds("u1", "p1", "admin"), "system_scope", "all", "domain_id", "d1", "system", "x")
	},
	func() map[string]any { return with(projectCreds("u1", "p1", "reader"), "system", "all") },
	func() map[string]any {
		return with(projectCreds("u1", "p1", "member", "y"), "is_admin", "True", "name", "abc")
	},
}

var extraValues = map[string][]any{
	"required_role":  {"admin", "Member", "READER", "nope", nil, float64(3)},
	"role_name":      {"member", "Member", "abc", nil},
	"name":           {"abc", "ab", "  abc", "abc|", "'abc'", "x-abc-42", "it's", nil, float64(7)},
	"enabled":        {true, false, "True", "true", nil, float64(1)},
	"maybe":          {nil, "None", "x"},
	"count":          {float64(42), float64(31), float64(1000), float64(-5), "42", float64(1), json.Number("42.0"), true, nil},
	"ratio":          {float64(1.5), json.Number("1000.0"), json.Number("1e20"), "1.5", float64(1000)},
	"target.user.id": {"u1", "u2", nil},
	"group":          {"g1", "g2", "g3", "g4"},
	"domain_id":      {"d1", "d2", nil},
	"x":              {"abc", "y"},
}

var extraKeys = func() []string {
	keys := make([]string, 0, len(extraValues))
	for k := range extraValues {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}()

func makeTarget(r *rand.Rand, creds map[string]any) map[string]any {
	var t map[string]any
	switch r.IntN(7) {
	case 0, 1: // the caller's own project and user, as Magnum passes when it has no resource
		t = map[string]any{"project_id": creds["project_id"], "user_id": creds["user_id"]}
	case 2:
		t = map[string]any{"project_id": "p1", "user_id": "u1"}
	case 3:
		t = map[string]any{"project_id": "p2", "user_id": "u9"}
	case 4:
		t = map[string]any{}
	case 5:
		t = map[string]any{"project_id": nil, "user_id": nil}
	case 6:
		t = map[string]any{"project_id": float64(1), "user_id": float64(2)}
	}
	if r.IntN(3) > 0 {
		for _, k := range extraKeys {
			if r.IntN(2) == 0 {
				vals := extraValues[k]
				t[k] = vals[r.IntN(len(vals))]
			}
		}
	}
	return t
}

// exprAtoms are the checks random expressions are built from.
var exprAtoms = []string{
	"role:admin", "role:Member", "role:reader", "role:%(required_role)s", "role:nope",
	"project_id:%(project_id)s", "user_id:%(user_id)s", "is_admin:True", "is_admin:False",
	"@", "!", "rule:context_is_admin", "rule:project_member", "rule:t:never", "rule:missing",
	"'quoted'", "nocolon", "True:%(enabled)s", "groups:%(group)s", "auth.project.id:%(project_id)s",
	"'member':%(role_name)s", "42:%(count)s", "name:%(name)s", "system:all", "domain_id:%(domain_id)s",
	"project_id:%(nonexistent)s", "if:%(x)s", "x:%(name)d",
}

// Generic check kinds and matches covering the Python literal forms and
// name paths the engine reproduces.
var (
	genericKinds = []string{
		"name", "user.id", "auth.project.id", "groups.name", "True", "False", "None", "...",
		"42", "-5", "+7", "0x1F", "0o17", "0b11", "1_000", "1.5", "1.", ".5", "1e3", "1E-3", "1e400",
		"00", "01", "1__0", "1e", "'abc'", `"abc"`, "u'abc'", `r'a\tb'`, `'a\tb'`, "'ab''c'",
		"'''abc'''", "'open", "if", "lambda", "x.if", "True.x", "-x", "-True", "_", "é", "x.None",
		`'\x41b'`, `'\u00e9'`, "-0", "-0.0", "1e16", "1e-5", "0.0001", "123456789012345678901234",
	}
	genericMatches = []string{
		"%(name)s", "%(count)s", "%(ratio)s", "abc", "42", "True", "None", "1000.0", "inf",
		"%(enabled)s", "%(maybe)s", "Ab", "%(name)r", "%(count)d", `a\tb`, "\tb", "é", "-5", "7",
		"31", "15", "3", "1000", "1.5", "1.0", "0.5", "0.001", "0", "-0.0", "1e+16", "1e-05", "0.0001",
		"123456789012345678901234",
	}
)

func genericAtom(r *rand.Rand) string {
	return genericKinds[r.IntN(len(genericKinds))] + ":" + genericMatches[r.IntN(len(genericMatches))]
}

var exprSpaces = []string{" ", "  ", "\t", "\n ", " \u00a0", "\u001c"}

// generateExpressions draws ad-hoc check strings, half of them built from
// a grammar (well formed) and half from random token sequences (mostly
// malformed), to compare the parsers, precedence and error handling.
func generateExpressions(nConfigs, n int) []oracleCase {
	r := rand.New(rand.NewPCG(7, 42))
	cases := make([]oracleCase, 0, n)
	for range n {
		var expr string
		if r.IntN(2) == 0 {
			expr = grammarExpr(r, 3)
		} else {
			expr = tokenSoup(r)
		}
		creds := personas[r.IntN(len(personas))]()
		if r.IntN(2) == 0 {
			// Values for the generic-kind paths.
			creds["name"] = []any{"abc", "Ab", 42.0, nil, true, "1.5"}[r.IntN(6)]
			creds["user"] = map[string]any{"id": []any{"abc", "42", nil}[r.IntN(3)]}
			creds["_"] = "abc"
			creds["-x"] = "abc"
			creds["é"] = "Ab"
		}
		cases = append(cases, oracleCase{
			Config: r.IntN(nConfigs),
			Check:  &expr,
			Creds:  creds,
			Target: makeTarget(r, creds),
		})
	}
	return cases
}

func op(r *rand.Rand, o string) string {
	switch r.IntN(4) {
	case 0:
		return strings.ToUpper(o)
	case 1:
		return strings.ToUpper(o[:1]) + o[1:]
	}
	return o
}

func grammarExpr(r *rand.Rand, depth int) string {
	if depth == 0 || r.IntN(3) == 0 {
		if r.IntN(3) == 0 {
			return genericAtom(r)
		}
		return exprAtoms[r.IntN(len(exprAtoms))]
	}
	sp := " "
	if r.IntN(5) == 0 {
		sp = "  "
	}
	switch r.IntN(5) {
	case 0:
		return grammarExpr(r, depth-1) + sp + op(r, "and") + sp + grammarExpr(r, depth-1)
	case 1:
		return grammarExpr(r, depth-1) + sp + op(r, "or") + sp + grammarExpr(r, depth-1)
	case 2:
		return op(r, "not") + sp + grammarExpr(r, depth-1)
	case 3:
		return "(" + grammarExpr(r, depth-1) + ")"
	}
	return "( " + grammarExpr(r, depth-1) + " )"
}

func tokenSoup(r *rand.Rand) string {
	var b strings.Builder
	for i := range 1 + r.IntN(7) {
		if i > 0 {
			b.WriteString(exprSpaces[r.IntN(len(exprSpaces))])
		}
		switch r.IntN(8) {
		case 0:
			b.WriteString(op(r, "and"))
		case 1:
			b.WriteString(op(r, "or"))
		case 2:
			b.WriteString(op(r, "not"))
		case 3:
			b.WriteString(strings.Repeat("(", 1+r.IntN(2)) + exprAtoms[r.IntN(len(exprAtoms))])
		case 4:
			b.WriteString(exprAtoms[r.IntN(len(exprAtoms))] + strings.Repeat(")", 1+r.IntN(2)))
		default:
			b.WriteString(exprAtoms[r.IntN(len(exprAtoms))])
		}
	}
	return b.String()
}
