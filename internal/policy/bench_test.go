package policy

import "testing"

// BenchmarkEnforce evaluates a typical API rule (three rule: hops, a role
// check and a target substitution) for a member of the resource's project.
func BenchmarkEnforce(b *testing.B) {
	e, err := New(Options{EnforceScope: true, EnforceNewDefaults: true})
	if err != nil {
		b.Fatal(err)
	}
	creds := Credentials{"user_id": "u1", "project_id": "p1", "roles": []string{"member", "reader"}, "is_admin": false}
	target := Target{"project_id": "p1", "user_id": "u1"}
	b.ReportAllocs()
	for b.Loop() {
		ok, err := e.Enforce("certificate:create", target, creds)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkEnforceDenied is the slowest common path: every branch of the
// rule is evaluated before it denies.
func BenchmarkEnforceDenied(b *testing.B) {
	e, err := New(Options{EnforceScope: true, EnforceNewDefaults: false})
	if err != nil {
		b.Fatal(err)
	}
	creds := Credentials{"user_id": "u2", "project_id": "p2", "roles": []any{"Reader"}, "is_admin": false}
	target := Target{"project_id": "p1", "user_id": "u1"}
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := e.Enforce("cluster:delete", target, creds); ok {
			b.Fatal("allowed")
		}
	}
}
