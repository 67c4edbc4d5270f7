// Package policy is an oslo.policy-compatible policy engine and Magnum's
// default rules.
//
// It reproduces oslo.policy 6.0.1, the release Magnum 23.0.0 runs with:
// the rule language and its parser (greedy shift-reduce; a rule that does
// not parse denies), role checks (case-insensitive), generic checks
// ("project_id:%(project_id)s", "is_admin:True", "'literal':%(key)s",
// "user.id:..."), lists in credentials, the "default" fallback for unknown
// rule names, deprecated check strings when enforce_new_defaults is off, and
// scope types. Python semantics that matter (str() of values, str.lower(),
// %-formatting with a mapping, ast.literal_eval of the check kind) are
// reimplemented in python.go, format.go and literal.go. A differential test
// in test/oracle compares the engine with oslo.policy itself.
//
// Known differences, all failing closed: "http:"/"https:" remote checks are
// never true; exotic Python forms (container or complex literals as check
// kinds, "%x"-style conversions, un-keyed "%s" in a match) are evaluation
// errors here; str() of a multi-key dict sorts the keys.
package policy
