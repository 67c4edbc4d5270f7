package policy

import (
	"errors"
	"testing"
)

// The expected canonical forms are str() of the tree oslo.policy 6.0.1
// builds for each rule.
func TestParseRule(t *testing.T) {
	tests := []struct {
		rule, want string
	}{
		{"", "@"},
		{"@", "@"},
		{"!", "!"},
		{"role:admin", "role:admin"},
		{"rule:context_is_admin", "rule:context_is_admin"},
		{"role:admin or role:member", "(role:admin or role:member)"},
		{"role:a and role:b and role:c", "(role:a and role:b and role:c)"},
		{"role:a or role:b and role:c", "(role:a or (role:b and role:c))"},
		{"role:a and role:b or role:c", "((role:a and role:b) or role:c)"},
		{"role:a or role:b and role:c or role:d and not role:e", "(role:a or (role:b and role:c) or (role:d and not role:e))"},
		{"not role:a and role:b", "(not role:a and role:b)"},
		{"not (role:a or role:b)", "not (role:a or role:b)"},
		{"not not role:a", "not not role:a"},
		{"(role:a or role:b) and role:c", "((role:a or role:b) and role:c)"},
		{"role:x or (role:a and role:b) and role:c", "(role:x or (role:a and role:b and role:c))"},
		{"((role:a))", "role:a"},
		{"role:a OR role:b AND NOT role:c", "(role:a or (role:b and not role:c))"},
		{"  role:a\tor\n role:b ", "(role:a or role:b)"},
		{"role:a and", "!"},
		{"(role:a", "!"},
		{"role:a)", "!"},
		{"and role:a", "!"},
		{"role:a role:b", "!"},
		{"role:a not", "!"},
		{"'role:a'", "!"},
		{"role:a or 'x'", "!"},
		{"('role:a')", "'role:a'"},
		{"admin or role:a", "(! or role:a)"},
		{"admin", "!"},
		{":x or role:a", "(:x or role:a)"},
		{"project_id:%(project_id)s", "project_id:%(project_id)s"},
		{"is_admin:True or project_id:%(project_id)s", "(is_admin:True or project_id:%(project_id)s)"},
		{"(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))", "(rule:context_is_admin or (rule:project_member and rule:is_user))"},
		{"http://example.com/%(x)s", "http://example.com/%(x)s"},
		{"role:a\u00a0or\u2003role:b", "(role:a or role:b)"},
		{"role:a\u001cor role:b", "(role:a or role:b)"},
		{"role:a:b", "role:a:b"},
		{"()", "!"},
		{"(", "!"},
		{")", "!"},
		{"not", "!"},
		{"role:a and (role:b or role:c) and role:d", "(role:a and (role:b or role:c) and role:d)"}}
	for _, tt := range tests {
		got, _ := ParseRule(tt.rule)
		if got != tt.want {
			t.Errorf("ParseRule(%q) = %q, want %q", tt.rule, got, tt.want)
		}
	}
}

func TestParseRuleReportsMalformedRules(t *testing.T) {
	for _, rule := range []string{"role:a and", "(role:a", "'x'", "admin", "role:a role:b"} {
		_, err := ParseRule(rule)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseRule(%q) error = %v, want a *ParseError", rule, err)
		}
	}
	for _, rule := range []string{"", "@", "role:a or (role:b and not role:c)"} {
		if _, err := ParseRule(rule); err != nil {
			t.Errorf("ParseRule(%q) error = %v, want nil", rule, err)
		}
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		name    string
		value   any
		want    string
		wantErr bool
	}{
		{"string", "role:a or role:b", "(role:a or role:b)", false},
		{"null is the empty rule", nil, "@", false},
		{"false is the empty rule", false, "@", false},
		{"empty list", []any{}, "@", false},
		{"legacy list of lists", []any{[]any{"role:a"}, []any{"role:b", "project_id:%(project_id)s"}}, "(role:a or (role:b and project_id:%(project_id)s))", false},
		{"legacy elements are single checks", []any{"role:a or role:b"}, "role:a or role:b", false},
		{"legacy inner lists that are all empty", []any{[]any{}, nil}, "!", false},
		{"legacy non-string check", []any{[]any{float64(1), "role:a"}}, "(! and role:a)", false},
		{"number", float64(3), "", true},
		{"true", true, "", true},
		{"empty mapping", map[string]any{}, "@", false},
		{"a mapping is a list of its keys", map[string]any{"role:b": 1, "role:a": nil}, "(role:a or role:b)", false},
		{"legacy empty mapping is skipped", []any{map[string]any{}, "role:a"}, "role:a", false},
		{"legacy nested number", []any{[]any{"role:a"}, float64(5)}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := parseValue(tt.value)
			var pe *ParseError
			if err != nil && errors.As(err, &pe) {
				err = nil
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && n.String() != tt.want {
				t.Errorf("got %q, want %q", n.String(), tt.want)
			}
		})
	}
}
