package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Credentials describe the caller, as oslo.policy's creds dict: user_id,
// project_id, roles ([]string), is_admin (bool), system_scope, domain_id,
// user_domain_id, project_domain_id, ... Values are strings, bools,
// numbers, nil, []string, []any or map[string]any.
type Credentials = map[string]any

// Target describes the object of the operation, as oslo.policy's target
// dict ("%(project_id)s" reads target["project_id"]; a dotted key such as
// "%(target.x)s" reads the key "target.x" literally).
type Target = map[string]any

// DefaultRuleName is the rule oslo.policy falls back to for an unknown rule
// name ([oslo_policy]/policy_default_rule, "default"). Magnum defines no
// such rule, so unknown names deny unless a policy file adds it.
const DefaultRuleName = "default"

// Token scopes, as oslo.policy classifies credentials.
const (
	ScopeSystem  = "system"
	ScopeDomain  = "domain"
	ScopeProject = "project"
)

// Operation is an API operation documented for a rule.
type Operation struct {
	Method string
	Path   string
}

// Rule is a policy rule: a name and a check string, with the metadata of an
// oslo.policy RuleDefault.
type Rule struct {
	Name        string
	CheckString string
	Description string
	Operations  []Operation
	// ScopeTypes lists the token scopes allowed to use the rule (nil: any).
	ScopeTypes []string
	// DeprecatedName and DeprecatedCheckString describe the DeprecatedRule
	// the rule replaces, when it has one.
	DeprecatedName        string
	DeprecatedCheckString string
}

// Options configure an Enforcer.
type Options struct {
	// PolicyFile is a YAML or JSON file of rule overrides ("name": "check").
	// Empty means none.
	PolicyFile string
	// PolicyFileOptional makes a missing PolicyFile mean "no overrides"
	// (the [oslo_policy]/policy_file default that nobody created) instead
	// of an error.
	PolicyFileOptional bool
	// PolicyDirs are directories of further override files, applied in
	// order after PolicyFile, each directory's files in name order (files
	// starting with "." are skipped). Missing directories are ignored, as
	// in oslo.policy.
	PolicyDirs []string
	// EnforceScope rejects a rule whose ScopeTypes do not include the
	// caller's token scope with an *InvalidScopeError. oslo.policy 6.0.1
	// (the version Magnum 23.0.0 runs with) always does this and has no
	// option; false reproduces older oslo.policy releases, which only warned.
	EnforceScope bool
	// EnforceNewDefaults ignores the deprecated check strings. When false,
	// a rule that is not overridden and has a DeprecatedCheckString
	// different from its CheckString allows what either allows
	// (oslo.policy's [oslo_policy]/enforce_new_defaults, default true).
	EnforceNewDefaults bool
	// Defaults are the registered rules; nil means MagnumDefaults().
	Defaults []Rule
	// Logger receives oslo.policy's warnings (rules that fail to parse,
	// undefined or cyclic references, remote checks). Nil discards them.
	Logger *slog.Logger
}

type compiledRule struct {
	check node
	// registered is the default this name was registered with (nil for a
	// rule that only exists in a policy file).
	registered *Rule
}

// Enforcer evaluates the rules. It is immutable after New and safe for
// concurrent use.
type Enforcer struct {
	opts     Options
	defaults []Rule
	rules    map[string]*compiledRule
	// file holds the rules read from the policy files, parsed.
	file map[string]node
	// overridden lists the names found in the policy files.
	overridden map[string]string
}

// New loads the defaults and the policy files.
func New(opts Options) (*Enforcer, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	defaults := opts.Defaults
	if defaults == nil {
		defaults = MagnumDefaults()
	}
	e := &Enforcer{
		opts:       opts,
		defaults:   defaults,
		rules:      make(map[string]*compiledRule, len(defaults)),
		file:       map[string]node{},
		overridden: map[string]string{},
	}
	registered := make(map[string]*Rule, len(defaults))
	for i := range defaults {
		d := &defaults[i]
		if _, dup := registered[d.Name]; dup {
			return nil, fmt.Errorf("policy %s is already registered", d.Name)
		}
		seen := map[string]bool{}
		for _, s := range d.ScopeTypes {
			if seen[s] {
				return nil, fmt.Errorf("policy %s: scope_types must be a list of unique strings", d.Name)
			}
			seen[s] = true
		}
		registered[d.Name] = d
	}

	if opts.PolicyFile != "" {
		if err := e.loadFile(opts.PolicyFile, log); err != nil {
			if !(opts.PolicyFileOptional && errors.Is(err, fs.ErrNotExist)) {
				return nil, err
			}
			log.Debug("policy file not found, using the defaults", "policy_file", opts.PolicyFile)
		}
	}
	for _, dir := range opts.PolicyDirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("read policy directory %s: %w", dir, err)
		}
		names := make([]string, 0, len(entries))
		for _, ent := range entries {
			if ent.IsDir() || strings.HasPrefix(ent.Name(), ".") {
				continue
			}
			names = append(names, ent.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			if err := e.loadFile(filepath.Join(dir, n), log); err != nil {
				return nil, err
			}
		}
	}

	for name, n := range e.file {
		e.rules[name] = &compiledRule{check: n, registered: registered[name]}
	}
	for i := range defaults {
		d := &defaults[i]
		if _, ok := e.rules[d.Name]; ok {
			continue
		}
		check, err := e.defaultCheck(d, log)
		if err != nil {
			return nil, err
		}
		e.rules[d.Name] = &compiledRule{check: check, registered: d}
	}
	e.checkRules(log)
	return e, nil
}

// defaultCheck is oslo's _handle_deprecated_rule: the check a registered
// rule gets when the policy files do not override it.
func (e *Enforcer) defaultCheck(d *Rule, log *slog.Logger) (node, error) {
	check, err := parseText(d.CheckString)
	logParse(log, d.Name, err)
	if d.DeprecatedName == "" {
		return check, nil
	}
	deprecated, err := parseText(d.DeprecatedCheckString)
	logParse(log, d.DeprecatedName, err)
	if d.DeprecatedName != d.Name {
		if fileCheck, ok := e.file[d.DeprecatedName]; ok {
			log.Warn("deprecated policy name is overridden",
				"policy", d.DeprecatedName, "replacement", d.Name)
			// An override of the old name that is neither the old default
			// nor an alias of the new name keeps applying to the new name.
			if !checksEqual(fileCheck, deprecated) && fileCheck.String() != "rule:"+d.Name {
				return fileCheck, nil
			}
		}
	}
	if !e.opts.EnforceNewDefaults && d.DeprecatedCheckString != d.CheckString {
		// Both parsed trees are fresh: sharing them is safe.
		return &orCheck{rules: []node{check, deprecated}}, nil
	}
	return check, nil
}

func logParse(log *slog.Logger, name string, err error) {
	var pe *ParseError
	if errors.As(err, &pe) {
		log.Warn("failed to understand rule; it always denies", "policy", name, "rule", pe.Rule)
	}
}

// loadFile reads one YAML or JSON policy file on top of the rules read so far.
func (e *Enforcer) loadFile(path string, log *slog.Logger) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read policy file %s: %w", path, err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("parse policy file %s: %w", path, err)
	}
	if !pyTruthy(doc) {
		// oslo: "parsed or {}" — an empty document has no rules.
		return nil
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("parse policy file %s: the top level is not a mapping of rule names to check strings", path)
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		n, err := parseValue(m[name])
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			return fmt.Errorf("policy file %s: rule %q: %w", path, name, err)
		}
		logParse(log, name, err)
		if hasHTTP(n) {
			log.Warn("remote http checks are not supported; they always deny", "policy", name)
		}
		e.file[name] = n
		e.overridden[name] = path
	}
	return nil
}

func hasHTTP(n node) bool {
	switch x := n.(type) {
	case *httpCheck:
		return true
	case *notCheck:
		return hasHTTP(x.rule)
	case *andCheck:
		for _, r := range x.rules {
			if hasHTTP(r) {
				return true
			}
		}
	case *orCheck:
		for _, r := range x.rules {
			if hasHTTP(r) {
				return true
			}
		}
	}
	return false
}

// checkRules logs references to undefined rules and cycles, as oslo does
// when it loads rules (it does not fail).
func (e *Enforcer) checkRules(log *slog.Logger) {
	names := make([]string, 0, len(e.rules))
	for n := range e.rules {
		names = append(names, n)
	}
	sort.Strings(names)
	var undefined, cyclic []string
	state, memo := map[string]int8{}, map[string]bool{}
	for _, name := range names {
		if e.undefined(e.rules[name].check) {
			undefined = append(undefined, name)
		}
		if e.reachesCycle(name, state, memo) {
			cyclic = append(cyclic, name)
		}
	}
	if len(undefined) > 0 {
		log.Warn("policies reference a rule that is not defined", "policies", undefined)
	}
	if len(cyclic) > 0 {
		log.Warn("policies are part of a cyclical reference", "policies", cyclic)
	}
}

func (e *Enforcer) undefined(n node) bool {
	for _, ref := range ruleRefs(n, nil) {
		if _, ok := e.rules[ref]; !ok {
			return true
		}
	}
	return false
}

// reachesCycle reports whether evaluating the named rule can run into a
// cycle of rule: references (a RecursionError in oslo). Memoised depth-first
// search, so that a large policy file cannot make start-up exponential.
func (e *Enforcer) reachesCycle(name string, state map[string]int8, memo map[string]bool) bool {
	switch state[name] {
	case 1:
		return true
	case 2:
		return memo[name]
	}
	state[name] = 1
	found := false
	for _, ref := range ruleRefs(e.rules[name].check, nil) {
		if _, ok := e.rules[ref]; ok && e.reachesCycle(ref, state, memo) {
			found = true
			break
		}
	}
	state[name] = 2
	memo[name] = found
	return found
}

// ruleRefs appends the names of the rule: checks in n.
func ruleRefs(n node, out []string) []string {
	switch x := n.(type) {
	case *ruleCheck:
		out = append(out, x.match)
	case *notCheck:
		out = ruleRefs(x.rule, out)
	case *andCheck:
		for _, r := range x.rules {
			out = ruleRefs(r, out)
		}
	case *orCheck:
		for _, r := range x.rules {
			out = ruleRefs(r, out)
		}
	}
	return out
}

// Rules returns the registered defaults, in registration order.
func (e *Enforcer) Rules() []Rule {
	out := make([]Rule, len(e.defaults))
	copy(out, e.defaults)
	return out
}

// Overrides returns the rule names read from the policy files, with the
// file each came from.
func (e *Enforcer) Overrides() map[string]string {
	out := make(map[string]string, len(e.overridden))
	for k, v := range e.overridden {
		out[k] = v
	}
	return out
}

// EffectiveRule returns the check that is enforced for a rule name, in
// oslo's canonical form ("" for the empty rule), and whether it exists.
func (e *Enforcer) EffectiveRule(name string) (string, bool) {
	r, ok := e.rules[name]
	if !ok {
		return "", false
	}
	if _, ok := r.check.(trueCheck); ok {
		return "", true
	}
	return r.check.String(), true
}

// Enforce evaluates the named rule the way Magnum calls oslo.policy
// (Enforcer.enforce, not authorize): an unknown name is evaluated with the
// "default" rule when one is defined and is otherwise denied, without error.
//
// It returns (false, *InvalidScopeError) when EnforceScope is on and the
// rule is registered with ScopeTypes that do not include the caller's token
// scope, and (false, *EvalError) when oslo.policy would raise an exception.
func (e *Enforcer) Enforce(rule string, target Target, creds Credentials) (bool, error) {
	s := newEvalState(e.rules, target, creds)
	defer s.release()
	name, r := s.lookup(rule)
	if r == nil {
		return false, nil
	}
	if reg := e.registeredFor(rule); reg != nil && e.opts.EnforceScope && len(reg.ScopeTypes) > 0 {
		scope := s.tokenScope()
		if !contains(reg.ScopeTypes, scope) {
			return false, &InvalidScopeError{Rule: rule, CheckString: reg.CheckString, ScopeTypes: reg.ScopeTypes, TokenScope: scope}
		}
	}
	s.push(name)
	ok, err := r.check.eval(s)
	if err != nil {
		return false, &EvalError{Rule: rule, Err: err}
	}
	return ok, nil
}

// registeredFor returns the default registered under exactly this name
// (oslo checks the scope of registered rules only, not of the "default"
// fallback).
func (e *Enforcer) registeredFor(rule string) *Rule {
	if r, ok := e.rules[rule]; ok {
		return r.registered
	}
	return nil
}

// tokenScope classifies the credentials as oslo.policy does.
func (s *evalState) tokenScope() string {
	if v, ok := s.cred("system"); ok && pyTruthy(v) {
		return ScopeSystem
	}
	if v, ok := s.creds["domain_id"]; ok && pyTruthy(v) {
		return ScopeDomain
	}
	return ScopeProject
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Authorize is Magnum's policy.enforce with do_raise: nil when the rule
// allows, *NotAllowed when it denies or when the token scope is invalid
// (Magnum maps InvalidScope to the same 403), *EvalError when oslo.policy
// would raise. A nil target is the caller's own project and user, as in
// Magnum (magnum/common/policy.py); pass an empty Target for "no target".
func (e *Enforcer) Authorize(rule string, target Target, creds Credentials) error {
	if target == nil {
		target = CallerTarget(creds)
	}
	ok, err := e.Enforce(rule, target, creds)
	var scope *InvalidScopeError
	switch {
	case errors.As(err, &scope):
		return &NotAllowed{Rule: rule, Scope: scope}
	case err != nil:
		return err
	case !ok:
		return &NotAllowed{Rule: rule}
	}
	return nil
}

// Check evaluates an ad-hoc check string (for example one typed into
// "policy check") against the loaded rules; no scope applies, as when
// oslo's enforce is given a check object. A string that does not parse
// denies and its *ParseError is returned alongside false.
func (e *Enforcer) Check(checkString string, target Target, creds Credentials) (bool, error) {
	n, perr := parseText(checkString)
	s := newEvalState(e.rules, target, creds)
	defer s.release()
	ok, err := n.eval(s)
	if err != nil {
		return false, &EvalError{Rule: checkString, Err: err}
	}
	var pe *ParseError
	if errors.As(perr, &pe) && pe.Rule == checkString {
		return false, perr
	}
	return ok, nil
}

// CallerTarget is the target Magnum uses when a handler passes none:
// {"project_id": <caller's project>, "user_id": <caller's user>}.
func CallerTarget(creds Credentials) Target {
	return Target{"project_id": creds["project_id"], "user_id": creds["user_id"]}
}

// IsAdmin is Magnum's check_is_admin: "context_is_admin" with an empty
// target, never raising.
func (e *Enforcer) IsAdmin(creds Credentials) bool {
	ok, _ := e.Enforce("context_is_admin", Target{}, creds)
	return ok
}

// NotAllowed is a policy denial: Magnum's PolicyNotAuthorized, a 403.
type NotAllowed struct {
	Rule string
	// Scope is set when the denial comes from the token scope.
	Scope *InvalidScopeError
}

// Error returns Magnum's message for PolicyNotAuthorized.
func (e *NotAllowed) Error() string {
	return fmt.Sprintf("Policy doesn't allow %s to be performed.", e.Rule)
}

// Unwrap returns the scope error, if any.
func (e *NotAllowed) Unwrap() error {
	if e.Scope == nil {
		return nil
	}
	return e.Scope
}

// InvalidScopeError is oslo.policy's InvalidScope: the rule's scope types do
// not include the token's scope.
type InvalidScopeError struct {
	Rule        string
	CheckString string
	ScopeTypes  []string
	TokenScope  string
}

// Error returns oslo.policy's message.
func (e *InvalidScopeError) Error() string {
	quoted := make([]string, len(e.ScopeTypes))
	for i, s := range e.ScopeTypes {
		quoted[i] = pyRepr(s)
	}
	return fmt.Sprintf(`"%s": "%s" requires a scope of [%s], request was made with %s scope.`,
		e.Rule, e.CheckString, strings.Join(quoted, ", "), e.TokenScope)
}
