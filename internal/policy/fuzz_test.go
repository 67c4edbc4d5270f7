package policy

import (
	"testing"
)

// FuzzParseRule checks that no rule text makes the parser or the evaluator
// panic, that parsing is deterministic, and that a rule which parses
// without error evaluates to the same result as its canonical form.
func FuzzParseRule(f *testing.F) {
	for _, r := range MagnumDefaults() {
		f.Add(r.CheckString)
	}
	for _, s := range []string{"", "@", "!", "not (role:a or role:b) and role:c", "'x'", "(((", ")))",
		"role:%(x)s", "%(a)d:%(b)r", "'a':%(x)5.2s", "0x:1", "http://x", "a.b.c:%(d.e)s", "role:İΣ"} {
		f.Add(s)
	}
	e, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	creds := Credentials{"user_id": "u1", "project_id": "p1", "roles": []string{"admin", "member"},
		"is_admin": true, "groups": []any{"g", map[string]any{"x": 1}}, "a": map[string]any{"b": "c"}}
	target := Target{"project_id": "p1", "user_id": "u1", "x": "admin", "a": 1, "b": nil, "d.e": "c"}
	f.Fuzz(func(t *testing.T, rule string) {
		canon, err := ParseRule(rule)
		again, err2 := ParseRule(rule)
		if canon != again || (err == nil) != (err2 == nil) {
			t.Fatalf("non-deterministic parse of %q", rule)
		}
		ok, evalErr := e.Check(rule, target, creds)
		if err != nil {
			return
		}
		// The canonical form of a cleanly parsed rule means the same.
		ok2, evalErr2 := e.Check(canon, target, creds)
		if evalErr == nil && evalErr2 == nil && ok != ok2 {
			t.Fatalf("%q → %v but its canonical form %q → %v", rule, ok, canon, ok2)
		}
	})
}
