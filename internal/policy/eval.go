package policy

import (
	"errors"
	"fmt"
	"sync"
)

// maxDepth bounds rule:-chains. A cycle is detected before this; the bound
// only protects against pathological but acyclic chains (Python would hit
// its recursion limit around the same depth).
const maxDepth = 200

// evalState carries one evaluation. States are pooled: an evaluation then
// allocates nothing in the common case.
type evalState struct {
	rules  map[string]*compiledRule
	target Target
	creds  Credentials
	// systemScope is creds["system_scope"] when truthy: oslo copies it into
	// creds["system"] before evaluating (without mutating the caller's map here).
	systemScope any
	hasSystem   bool
	// active holds the rules being evaluated, to detect cycles (a cycle
	// is a RecursionError in oslo).
	active [16]string
	extra  []string
	depth  int
}

var statePool = sync.Pool{New: func() any { return new(evalState) }}

func newEvalState(rules map[string]*compiledRule, target Target, creds Credentials) *evalState {
	s := statePool.Get().(*evalState)
	s.rules, s.target, s.creds = rules, target, creds
	if v, ok := creds["system_scope"]; ok && pyTruthy(v) {
		s.systemScope, s.hasSystem = v, true
	}
	return s
}

func (s *evalState) release() {
	*s = evalState{extra: s.extra[:0]}
	statePool.Put(s)
}

// cred returns creds[key] as oslo sees it after its "system" adjustment.
func (s *evalState) cred(key string) (any, bool) {
	if key == "system" && s.hasSystem {
		return s.systemScope, true
	}
	v, ok := s.creds[key]
	return v, ok
}

func (trueCheck) eval(*evalState) (bool, error)  { return true, nil }
func (falseCheck) eval(*evalState) (bool, error) { return false, nil }
func (*httpCheck) eval(*evalState) (bool, error) { return false, nil }

func (c *notCheck) eval(s *evalState) (bool, error) {
	ok, err := c.rule.eval(s)
	return !ok, err
}

func (c *andCheck) eval(s *evalState) (bool, error) {
	for _, r := range c.rules {
		ok, err := r.eval(s)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func (c *orCheck) eval(s *evalState) (bool, error) {
	for _, r := range c.rules {
		ok, err := r.eval(s)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func (c *ruleCheck) eval(s *evalState) (bool, error) {
	name, r := s.lookup(c.match)
	if r == nil {
		return false, nil // oslo: KeyError → fail closed
	}
	if s.isActive(name) || s.depth >= maxDepth {
		return false, pyErr("RecursionError: rule %q refers to itself", name)
	}
	s.push(name)
	ok, err := r.check.eval(s)
	s.pop()
	return ok, err
}

// lookup resolves a rule name like oslo's Rules.__missing__: an unknown
// name falls back to the rule named "default" when there is one.
func (s *evalState) lookup(name string) (string, *compiledRule) {
	if r, ok := s.rules[name]; ok {
		return name, r
	}
	if r, ok := s.rules[DefaultRuleName]; ok {
		return DefaultRuleName, r
	}
	return "", nil
}

func (s *evalState) isActive(name string) bool {
	n := s.depth
	if n > len(s.active) {
		n = len(s.active)
	}
	for i := range n {
		if s.active[i] == name {
			return true
		}
	}
	for _, a := range s.extra {
		if a == name {
			return true
		}
	}
	return false
}

func (s *evalState) push(name string) {
	if s.depth < len(s.active) {
		s.active[s.depth] = name
	} else {
		s.extra = append(s.extra, name)
	}
	s.depth++
}

func (s *evalState) pop() {
	s.depth--
	if s.depth >= len(s.active) {
		s.extra = s.extra[:len(s.extra)-1]
	}
}

func (c *roleCheck) eval(s *evalState) (bool, error) {
	match, err := c.fmt.apply(s.target)
	if err != nil {
		return false, ignoreMissing(err)
	}
	roles, ok := s.creds["roles"]
	if !ok {
		return false, nil
	}
	want := match
	// oslo lower-cases every role before testing membership, so a role
	// that is not a string raises even when an earlier one matches.
	switch rs := roles.(type) {
	case []string:
		for _, r := range rs {
			if lowerEqual(want, r) {
				return true, nil
			}
		}
		return false, nil
	case []any:
		found := false
		for _, r := range rs {
			str, ok := r.(string)
			if !ok {
				return false, pyErr("AttributeError: role %s is not a string", pyRepr(r))
			}
			if !found && lowerEqual(want, str) {
				found = true
			}
		}
		return found, nil
	case string:
		// Iterating a str yields its characters.
		for _, r := range rs {
			if lowerEqual(want, string(r)) {
				return true, nil
			}
		}
		return false, nil
	case map[string]any:
		for k := range rs {
			if lowerEqual(want, k) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, pyErr("TypeError: roles of type %T are not iterable", roles)
}

// lowerEqual reports whether pyLower(a) == pyLower(b), without allocating
// for ASCII text.
func lowerEqual(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		if len(a) != len(b) {
			return false
		}
		for i := 0; i < len(a); i++ {
			x, y := a[i], b[i]
			if 'A' <= x && x <= 'Z' {
				x += 'a' - 'A'
			}
			if 'A' <= y && y <= 'Z' {
				y += 'a' - 'A'
			}
			if x != y {
				return false
			}
		}
		return true
	}
	return pyLower(a) == pyLower(b)
}

func (c *genericCheck) eval(s *evalState) (bool, error) {
	match, err := c.fmt.apply(s.target)
	if err != nil {
		return false, ignoreMissing(err)
	}
	if c.info.err != nil {
		return false, c.info.err
	}
	if c.info.literal {
		return match == c.info.value, nil
	}
	v, ok := s.cred(c.info.path[0])
	if !ok {
		return false, nil
	}
	return findIn(v, c.info.path[1:], match)
}

// findIn follows oslo's GenericCheck._find_in_dict: a list at any level
// matches when any element matches the rest of the path; at the end the
// value is compared as str().
func findIn(v any, path []string, match string) (bool, error) {
	if list, ok := asList(v); ok {
		for _, e := range list {
			ok, err := findLeaf(e, path, match)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	}
	return findLeaf(v, path, match)
}

func findLeaf(v any, path []string, match string) (bool, error) {
	if len(path) == 0 {
		if s, ok := v.(string); ok {
			return s == match, nil
		}
		return pyStr(v) == match, nil
	}
	var next any
	switch m := v.(type) {
	case map[string]any:
		x, ok := m[path[0]]
		if !ok {
			return false, nil
		}
		next = x
	case map[string]string:
		x, ok := m[path[0]]
		if !ok {
			return false, nil
		}
		next = x
	default:
		return false, pyErr("TypeError: %s is not subscriptable by %q", pyRepr(v), path[0])
	}
	return findIn(next, path[1:], match)
}

func asList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		l := make([]any, len(x))
		for i, s := range x {
			l[i] = s
		}
		return l, true
	}
	return nil, false
}

func ignoreMissing(err error) error {
	if errors.Is(err, errMissingKey) {
		return nil
	}
	return err
}

// EvalError is an evaluation that raises an exception in oslo.policy
// (a malformed format, a Python syntax error in a check, a rule cycle, a
// credential of the wrong type). Magnum answers 500; callers should too.
type EvalError struct {
	Rule string
	Err  error
}

func (e *EvalError) Error() string {
	return fmt.Sprintf("evaluate policy %s: %v", e.Rule, e.Err)
}

func (e *EvalError) Unwrap() error { return e.Err }
