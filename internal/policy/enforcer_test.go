package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	admin = Credentials{"user_id": "u1", "project_id": "p1", "roles": []string{"admin", "member", "reader"}, "is_admin": true}
	// member created the resources of p1 in these tests.
	member      = Credentials{"user_id": "u1", "project_id": "p1", "roles": []string{"member", "reader"}, "is_admin": false}
	otherMember = Credentials{"user_id": "u2", "project_id": "p1", "roles": []string{"member", "reader"}, "is_admin": false}
	reader      = Credentials{"user_id": "u3", "project_id": "p1", "roles": []string{"reader"}, "is_admin": false}
	foreign     = Credentials{"user_id": "u4", "project_id": "p2", "roles": []string{"member", "reader"}, "is_admin": false}
	adminOnly   = Credentials{"user_id": "u5", "project_id": "p1", "roles": []string{"admin"}, "is_admin": true}
	systemAdmin = Credentials{"user_id": "u6", "project_id": nil, "roles": []string{"admin"}, "is_admin": true, "system_scope": "all"}
	domainAdmin = Credentials{"user_id": "u7", "project_id": nil, "roles": []string{"admin"}, "domain_id": "d1"}
	mixedCase   = Credentials{"user_id": "u1", "project_id": "p1", "roles": []any{"MEMBER", "Reader"}}
	noRoles     = Credentials{"user_id": "u1", "project_id": "p1"}

	resource = Target{"project_id": "p1", "user_id": "u1"}
)

func newMagnum(t *testing.T, opts Options) *Enforcer {
	t.Helper()
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEnforceMagnumDefaults(t *testing.T) {
	e := newMagnum(t, Options{EnforceScope: true, EnforceNewDefaults: true})
	tests := []struct {
		name   string
		rule   string
		creds  Credentials
		target Target
		want   bool
	}{
		{"admin reads any project", "cluster:get", admin, Target{"project_id": "p9"}, true},
		{"reader reads own project", "cluster:get", reader, resource, true},
		{"foreign member cannot read", "cluster:get", foreign, resource, false},
		{"reader cannot delete", "cluster:delete", reader, resource, false},
		{"member deletes", "cluster:delete", otherMember, resource, true},
		{"roles are case-insensitive", "cluster:delete", mixedCase, resource, true},
		{"no roles", "cluster:get", noRoles, resource, false},
		{"certificate:create needs the creator", "certificate:create", otherMember, resource, false},
		{"certificate:create by the creator", "certificate:create", member, resource, true},
		{"credential:rotate has no admin bypass", "credential:rotate", adminOnly, resource, false},
		{"publish is admin only", "clustertemplate:publish", member, resource, false},
		{"is_admin alone is not the admin role", "quota:get_all", Credentials{"roles": []string{"member"}, "is_admin": true}, nil, false},
		{"unscoped rule for a system token", "quota:get_all", systemAdmin, Target{}, true},
		{"unknown rule denies", "cluster:nope", admin, resource, false},
		{"missing target key denies", "cluster:delete", member, Target{}, false},
		{"None project", "cluster:get", reader, Target{"project_id": nil}, false},
		{"integer project", "cluster:get", Credentials{"project_id": 7, "roles": []string{"reader"}}, Target{"project_id": "7"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Enforce(tt.rule, tt.target, tt.creds)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Enforce(%s) = %v, want %v", tt.rule, got, tt.want)
			}
		})
	}
}

func TestEnforceScope(t *testing.T) {
	on := newMagnum(t, Options{EnforceScope: true, EnforceNewDefaults: true})
	off := newMagnum(t, Options{EnforceScope: false, EnforceNewDefaults: true})

	for _, creds := range []Credentials{systemAdmin, domainAdmin} {
		_, err := on.Enforce("cluster:get", resource, creds)
		var se *InvalidScopeError
		if !errors.As(err, &se) {
			t.Fatalf("Enforce with %v: error = %v, want *InvalidScopeError", creds, err)
		}
		if want := []string{"project"}; se.ScopeTypes[0] != want[0] {
			t.Errorf("scope types = %v", se.ScopeTypes)
		}
		err = on.Authorize("cluster:get", resource, creds)
		var na *NotAllowed
		if !errors.As(err, &na) || na.Scope == nil || !errors.As(err, &se) {
			t.Errorf("Authorize error = %#v, want *NotAllowed wrapping the scope error", err)
		}
		if err.Error() != "Policy doesn't allow cluster:get to be performed." {
			t.Errorf("message = %q", err.Error())
		}
		// Without scope enforcement the admin role allows it.
		if ok, err := off.Enforce("cluster:get", resource, creds); err != nil || !ok {
			t.Errorf("enforce_scope=false: got %v, %v", ok, err)
		}
	}
	want := `"cluster:get": "rule:admin_or_project_reader_deny_cluster_user" requires a scope of ['project'], request was made with system scope.`
	_, err := on.Enforce("cluster:get", resource, systemAdmin)
	if err.Error() != want {
		t.Errorf("InvalidScope message:\n got %s\nwant %s", err, want)
	}
	// A falsy system_scope is a project token.
	if ok, err := on.Enforce("cluster:get", resource, Credentials{"system_scope": "", "project_id": "p1", "roles": []string{"reader"}}); err != nil || !ok {
		t.Errorf("empty system_scope: %v, %v", ok, err)
	}
}

func TestAuthorize(t *testing.T) {
	e := newMagnum(t, Options{EnforceScope: true, EnforceNewDefaults: true})
	// Without a target, Magnum checks against the caller's own project.
	if err := e.Authorize("cluster:create", nil, member); err != nil {
		t.Errorf("member cluster:create: %v", err)
	}
	if err := e.Authorize("cluster:create", nil, reader); err == nil {
		t.Errorf("reader cluster:create allowed")
	}
	err := e.Authorize("cluster:create", Target{"project_id": "p1", "user_id": "u3"}, reader)
	var na *NotAllowed
	if !errors.As(err, &na) || na.Rule != "cluster:create" || na.Scope != nil {
		t.Fatalf("error = %#v", err)
	}
	if got, want := err.Error(), "Policy doesn't allow cluster:create to be performed."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if !e.IsAdmin(admin) || e.IsAdmin(member) {
		t.Error("IsAdmin")
	}
}

func TestDeprecatedDefaults(t *testing.T) {
	legacy := Credentials{"user_id": "u9", "project_id": "p1", "roles": []string{"_member_"}, "is_admin": false}
	newOnly := newMagnum(t, Options{EnforceNewDefaults: true})
	both := newMagnum(t, Options{EnforceNewDefaults: false})

	// admin_or_project_member was "is_admin:True or project_id:%(project_id)s".
	if ok, _ := newOnly.Enforce("admin_or_project_member", resource, legacy); ok {
		t.Error("enforce_new_defaults=true allowed the deprecated check")
	}
	if ok, _ := both.Enforce("admin_or_project_member", resource, legacy); !ok {
		t.Error("enforce_new_defaults=false did not OR the deprecated check")
	}
	if got, _ := both.EffectiveRule("admin_or_project_member"); got != "((rule:context_is_admin or rule:project_member) or (is_admin:True or project_id:%(project_id)s))" {
		t.Errorf("effective rule %q", got)
	}
	// Rules without a deprecated alternative are unchanged.
	if got, _ := both.EffectiveRule("cluster:get"); got != "rule:admin_or_project_reader_deny_cluster_user" {
		t.Errorf("effective rule %q", got)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPolicyFile(t *testing.T) {
	dir := t.TempDir()

	t.Run("overrides, new rules and the default rule", func(t *testing.T) {
		p := writeFile(t, dir, "policy.yaml", `
"cluster:get": "role:auditor"
"default": "role:member"
"custom": "rule:cluster:get or @"
`)
		e := newMagnum(t, Options{PolicyFile: p, EnforceNewDefaults: true})
		auditor := Credentials{"project_id": "p1", "roles": []string{"auditor"}}
		if ok, _ := e.Enforce("cluster:get", resource, auditor); !ok {
			t.Error("override not applied")
		}
		if ok, _ := e.Enforce("cluster:get", resource, admin); ok {
			t.Error("override did not replace the default")
		}
		if ok, _ := e.Enforce("no:such:rule", nil, member); !ok {
			t.Error("unknown rule did not fall back to the default rule")
		}
		if ok, _ := e.Enforce("custom", nil, noRoles); !ok {
			t.Error("custom rule")
		}
		if got := e.Overrides(); got["cluster:get"] != p || len(got) != 3 {
			t.Errorf("Overrides() = %v", got)
		}
	})

	t.Run("json", func(t *testing.T) {
		p := writeFile(t, dir, "policy.json", `{"cluster:get": "!", "context_is_admin": "role:root"}`)
		e := newMagnum(t, Options{PolicyFile: p})
		if ok, _ := e.Enforce("cluster:get", resource, admin); ok {
			t.Error("json override not applied")
		}
		if !e.IsAdmin(Credentials{"roles": []string{"ROOT"}}) {
			t.Error("context_is_admin override")
		}
	})

	t.Run("a deprecated name keeps applying to the new rules", func(t *testing.T) {
		p := writeFile(t, dir, "deprecated.yaml", `"rule:admin_or_owner": "role:legacy"`)
		e := newMagnum(t, Options{PolicyFile: p, EnforceNewDefaults: true})
		for _, name := range []string{"admin_or_project_member", "admin_or_project_reader", "project_member_deny_cluster_user"} {
			if got, _ := e.EffectiveRule(name); got != "role:legacy" {
				t.Errorf("%s = %q, want role:legacy", name, got)
			}
		}
		if got, _ := e.EffectiveRule("admin_or_project_reader_user"); got != "(rule:context_is_admin or (rule:project_reader and rule:is_user))" {
			t.Errorf("admin_or_project_reader_user = %q", got)
		}
	})

	t.Run("malformed rules deny", func(t *testing.T) {
		p := writeFile(t, dir, "malformed-rule.yaml", `"cluster:get": "role:admin and"`)
		e := newMagnum(t, Options{PolicyFile: p})
		if ok, err := e.Enforce("cluster:get", resource, admin); ok || err != nil {
			t.Errorf("got %v, %v; want false, nil", ok, err)
		}
	})

	t.Run("empty documents", func(t *testing.T) {
		for i, content := range []string{"# nothing\n", "[]\n", "{}\n", "false\n", "0\n"} {
			p := writeFile(t, dir, fmt.Sprintf("empty-%d.yaml", i), content)
			e := newMagnum(t, Options{PolicyFile: p})
			if len(e.Overrides()) != 0 {
				t.Errorf("%q: overrides %v", content, e.Overrides())
			}
		}
	})

	errorCases := []struct {
		name, content, want string
	}{
		{"malformed yaml", "\"a\": [\n", "malformed yaml.yaml"},
		{"not a mapping", "- a\n- b\n", "not a mapping"},
		{"a rule that is a number", "\"cluster:get\": 3\n", `rule "cluster:get"`},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, dir, tt.name+".yaml", tt.content)
			_, err := New(Options{PolicyFile: p})
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one naming %s and %q", err, p, tt.want)
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		missing := filepath.Join(dir, "missing.yaml")
		if _, err := New(Options{PolicyFile: missing}); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("explicit missing file: error = %v", err)
		}
		if _, err := New(Options{PolicyFile: missing, PolicyFileOptional: true}); err != nil {
			t.Errorf("optional missing file: %v", err)
		}
	})
}

func TestPolicyDirs(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "policy.d")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	main := writeFile(t, dir, "policy.yaml", `{"a": "role:x", "b": "role:x"}`)
	writeFile(t, d, "10-first.yaml", `{"b": "role:y", "c": "role:y"}`)
	writeFile(t, d, "20-second.json", `{"c": "role:z"}`)
	writeFile(t, d, ".hidden.yaml", `{"a": "@"}`)
	e := newMagnum(t, Options{PolicyFile: main, PolicyDirs: []string{d, filepath.Join(dir, "absent")}, Defaults: []Rule{}})
	for name, want := range map[string]string{"a": "role:x", "b": "role:y", "c": "role:z"} {
		if got, _ := e.EffectiveRule(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestEvaluationSemantics(t *testing.T) {
	e := newMagnum(t, Options{Defaults: []Rule{
		{Name: "loop", CheckString: "rule:loop"},
		{Name: "guarded", CheckString: "role:x and rule:guarded"},
		{Name: "short", CheckString: "@ or rule:short"},
		{Name: "a", CheckString: "rule:b"},
		{Name: "b", CheckString: "role:b"},
	}})
	creds := Credentials{
		"user_id": "u1", "project_id": "p1", "roles": []any{"Admin", "member"}, "is_admin": false,
		"groups": []any{"g1", map[string]any{"name": "g2"}},
		"auth":   map[string]any{"project": map[string]any{"id": "p1", "tags": []any{"t1", "t2"}}},
		"count":  3, "ratio": 1.5, "flag": true, "nothing": nil, "str": "abc",
	}
	tests := []struct {
		check   string
		target  Target
		want    bool
		wantErr bool
	}{
		{"", nil, true, false},
		{"@", nil, true, false},
		{"!", nil, false, false},
		{"role:ADMIN", nil, true, false},
		{"role:%(r)s", Target{"r": "MEMBER"}, true, false},
		{"role:%(r)s", Target{}, false, false},
		{"roles:Admin", nil, true, false},
		{"roles:admin", nil, false, false},
		{"groups:g1", nil, true, false},
		{"groups.name:g2", Target{}, false, true}, // "g1"["name"] raises TypeError
		{"auth.project.id:%(project_id)s", Target{"project_id": "p1"}, true, false},
		{"auth.project.tags:t2", nil, true, false},
		{"auth.missing.id:x", nil, false, false},
		{"str.x:y", nil, false, true},
		{"count:3", nil, true, false},
		{"ratio:1.5", nil, true, false},
		{"flag:True", nil, true, false},
		{"nothing:None", nil, true, false},
		{"is_admin:False", nil, true, false},
		{"True:%(v)s", Target{"v": true}, true, false},
		{"True:%(v)s", Target{"v": "True"}, true, false},
		{"'abc':%(v)s", Target{"v": "abc"}, true, false},
		{"0x10:%(v)s", Target{"v": 16}, true, false},
		{"1e3:%(v)s", Target{"v": "1000.0"}, true, false},
		{"-5:%(v)s", Target{"v": -5}, true, false},
		{"None:%(v)s", Target{"v": nil}, true, false},
		{"user_id:%(target.user.id)s", Target{"target.user.id": "u1"}, true, false},
		{"user_id:%(v)s", Target{"v": []any{"u1"}}, false, false},
		{"str:%(v)s%%", Target{"v": "abc"}, false, false},
		{"str:%(v)s", Target{"v": "abc"}, true, false},
		{"str:%(v)5s", Target{"v": "abc"}, false, false},
		{"count:%(v)d", Target{"v": 3.9}, true, false},
		{"count:%(v)d", Target{"v": "3"}, false, true},
		{"str:%(v)-", Target{"v": "abc"}, false, true},
		{"str:%(missing)-", Target{}, false, false},
		{"str:%s", Target{}, false, true},
		{"01:x", nil, false, true},
		{"if:x", nil, false, true},
		{"rule:loop", nil, false, true},
		{"rule:guarded", nil, false, false},
		{"rule:short", nil, true, false},
		{"rule:a", nil, false, false},
		{"rule:undefined", nil, false, false},
		{"http://example.com", nil, false, false},
		{"not http://example.com", nil, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.check, func(t *testing.T) {
			got, err := e.Check(tt.check, tt.target, creds)
			var ee *EvalError
			if (err != nil) != tt.wantErr || (err != nil && !errors.As(err, &ee)) {
				t.Fatalf("Check(%q) error = %v, want error %v", tt.check, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Check(%q) = %v, want %v", tt.check, got, tt.want)
			}
		})
	}
}

func TestRolesShapes(t *testing.T) {
	e := newMagnum(t, Options{Defaults: []Rule{}})
	tests := []struct {
		name    string
		roles   any
		want    bool
		wantErr bool
	}{
		{"[]string", []string{"a", "Admin"}, true, false},
		{"[]any", []any{"Admin"}, true, false},
		{"non-string element raises even after a match", []any{"admin", 1}, false, true},
		{"a string is iterated by character", "admin", false, false},
		{"None raises", nil, false, true},
		{"full Unicode lower-casing", []string{"AD", "İ"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Check("role:admin or role:ad", nil, Credentials{"roles": tt.roles})
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPythonValues(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "None"}, {true, "True"}, {false, "False"}, {3, "3"}, {int64(-2), "-2"},
		{1.5, "1.5"}, {1000.0, "1000.0"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {math.Copysign(0, -1), "-0.0"}, {1.0 / 3, "0.3333333333333333"},
		{json.Number("12345678901234567890123"), "12345678901234567890123"}, {json.Number("1e20"), "1e+20"},
		{[]any{"a", 1.0, nil, true}, "['a', 1.0, None, True]"},
		{[]string{"it's", `a"b`, "x\ny"}, `["it's", 'a"b', 'x\ny']`},
		{map[string]any{"b": 1, "a": "x"}, "{'a': 'x', 'b': 1}"},
	}
	for _, tt := range tests {
		if got := pyStr(tt.v); got != tt.want {
			t.Errorf("pyStr(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
	lower := map[string]string{"ADMIN": "admin", "İ": "i\u0307", "ΟΔΟΣ": "οδος", "ΣΑ": "σα", "Σ": "σ", "Straße": "straße"}
	for in, want := range lower {
		if got := pyLower(in); got != want {
			t.Errorf("pyLower(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClassifyKind(t *testing.T) {
	tests := []struct {
		kind    string
		literal string
		path    string
		err     bool
	}{
		{kind: "True", literal: "True"},
		{kind: "None", literal: "None"},
		{kind: "...", literal: "Ellipsis"},
		{kind: "'Member'", literal: "Member"},
		{kind: `"a\tb"`, literal: "a\tb"},
		{kind: `r'a\tb'`, literal: `a\tb`},
		{kind: "'a''b'", literal: "ab"},
		{kind: "42", literal: "42"},
		{kind: "1_000", literal: "1000"},
		{kind: "0o17", literal: "15"},
		{kind: "0b101", literal: "5"},
		{kind: "00", literal: "0"},
		{kind: "-0", literal: "0"},
		{kind: "+7", literal: "7"},
		{kind: "1.", literal: "1.0"},
		{kind: ".5", literal: "0.5"},
		{kind: "1e400", literal: "inf"},
		{kind: "project_id", path: "project_id"},
		{kind: "user.domain.id", path: "user.domain.id"},
		{kind: "True.x", path: "True.x"},
		{kind: "-x", path: "-x"},
		{kind: "", err: true},
		{kind: "01", err: true},
		{kind: "1__0", err: true},
		{kind: "if", err: true},
		{kind: "a.if", err: true},
		{kind: "x.None", err: true},
		{kind: "'open", err: true},
		{kind: "1j", err: true},
		{kind: "[1]", err: true},
	}
	for _, tt := range tests {
		k := classifyKind(tt.kind)
		switch {
		case tt.err:
			if k.err == nil {
				t.Errorf("classifyKind(%q) = %+v, want an error", tt.kind, k)
			}
		case tt.path != "":
			if k.err != nil || k.literal || strings.Join(k.path, ".") != tt.path {
				t.Errorf("classifyKind(%q) = %+v, want path %q", tt.kind, k, tt.path)
			}
		default:
			if k.err != nil || !k.literal || k.value != tt.literal {
				t.Errorf("classifyKind(%q) = %+v, want literal %q", tt.kind, k, tt.literal)
			}
		}
	}
}

func TestNewRejectsBadDefaults(t *testing.T) {
	if _, err := New(Options{Defaults: []Rule{{Name: "a"}, {Name: "a"}}}); err == nil {
		t.Error("duplicate default accepted")
	}
	if _, err := New(Options{Defaults: []Rule{{Name: "a", ScopeTypes: []string{"project", "project"}}}}); err == nil {
		t.Error("duplicate scope type accepted")
	}
}

func TestHugeFormatWidth(t *testing.T) {
	e := newMagnum(t, Options{Defaults: []Rule{}})
	for _, check := range []string{"x:%(x)99999999999999999999999s", "x:%(x).99999999999d", "x:%(x)5000s"} {
		if _, err := e.Check(check, Target{"x": 1}, Credentials{"x": "1"}); err == nil {
			t.Errorf("Check(%q) did not report an error", check)
		}
	}
}
