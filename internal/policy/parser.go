package policy

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// The rule language, as oslo.policy parses it (oslo_policy/_parser.py):
//
//   - the text is split on runs of whitespace (Python's "\s");
//   - leading "(" and trailing ")" of each piece are separate tokens;
//   - "and", "or", "not" (any case) are operators;
//   - a piece that starts and ends with the same quote is a string token,
//     which no grammar rule consumes, so the whole rule fails to parse;
//   - anything else is a check: "@", "!", or "kind:match" split on the first
//     ":" (no ":" → a check that is always false);
//   - tokens are shifted onto a stack and reduced greedily after each shift
//     ("( check )" → check, "check and check" → and-expression, "or"
//     likewise, "or-expression and check" re-associates the last operand so
//     that "and" binds tighter, "not check" → check).
//
// A rule that does not reduce to a single check is logged and becomes a
// check that is always false: a malformed rule denies, it does not error.
// The empty rule is always true.

// node is a compiled check.
type node interface {
	eval(s *evalState) (bool, error)
	String() string
}

type trueCheck struct{}

type falseCheck struct{}

type notCheck struct{ rule node }

type andCheck struct{ rules []node }

type orCheck struct{ rules []node }

// ruleCheck is "rule:<name>": the named rule (or the default rule).
type ruleCheck struct{ match string }

// roleCheck is "role:<match>": the formatted match, lower-cased, is one of
// the lower-cased credential roles.
type roleCheck struct {
	match string
	fmt   matchFormat
}

// genericCheck is "<kind>:<match>": a literal or a credential path on the
// left, the formatted match on the right, compared as Python strings.
type genericCheck struct {
	kind, match string
	fmt         matchFormat
	info        kindInfo
}

// httpCheck is "http:<url>" or "https:<url>": oslo POSTs the target and the
// credentials to a remote server.
//
// Deviation: remote checks are not supported; they are always false (fail
// closed) and New logs a warning for every rule that uses one.
type httpCheck struct{ kind, match string }

func (trueCheck) String() string    { return "@" }
func (falseCheck) String() string   { return "!" }
func (c *notCheck) String() string  { return "not " + c.rule.String() }
func (c *andCheck) String() string  { return joinChecks(c.rules, " and ") }
func (c *orCheck) String() string   { return joinChecks(c.rules, " or ") }
func (c *ruleCheck) String() string { return "rule:" + c.match }
func (c *roleCheck) String() string { return "role:" + c.match }
func (c *genericCheck) String() string {
	return c.kind + ":" + c.match
}
func (c *httpCheck) String() string { return c.kind + ":" + c.match }

func joinChecks(rules []node, sep string) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = r.String()
	}
	return "(" + strings.Join(parts, sep) + ")"
}

// checksEqual is oslo's structural equality of check trees (BaseCheck.__eq__).
func checksEqual(a, b node) bool {
	switch x := a.(type) {
	case trueCheck:
		_, ok := b.(trueCheck)
		return ok
	case falseCheck:
		_, ok := b.(falseCheck)
		return ok
	case *notCheck:
		y, ok := b.(*notCheck)
		return ok && checksEqual(x.rule, y.rule)
	case *andCheck:
		y, ok := b.(*andCheck)
		return ok && listEqual(x.rules, y.rules)
	case *orCheck:
		y, ok := b.(*orCheck)
		return ok && listEqual(x.rules, y.rules)
	case *ruleCheck:
		y, ok := b.(*ruleCheck)
		return ok && x.match == y.match
	case *roleCheck:
		y, ok := b.(*roleCheck)
		return ok && x.match == y.match
	case *genericCheck:
		y, ok := b.(*genericCheck)
		return ok && x.kind == y.kind && x.match == y.match
	case *httpCheck:
		y, ok := b.(*httpCheck)
		return ok && x.kind == y.kind && x.match == y.match
	}
	return false
}

func listEqual(a, b []node) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !checksEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

type tokenKind uint8

const (
	tokCheck tokenKind = iota + 1
	tokAndExpr
	tokOrExpr
	tokAnd
	tokOr
	tokNot
	tokLParen
	tokRParen
	tokString
)

type token struct {
	kind tokenKind
	node node // tokCheck, tokAndExpr (*andCheck), tokOrExpr (*orCheck)
}

// ParseError describes a rule that oslo.policy fails to parse. Such a rule
// is not an error for the enforcer: it denies (see ParseRule).
type ParseError struct {
	Rule string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("failed to understand rule %q", e.Rule)
}

// ParseRule parses a rule in the policy language and returns it in
// oslo.policy's canonical form (str() of the check tree; "@" for the empty
// rule). It never fails hard: like oslo.policy, a rule it cannot parse
// becomes "!" (always false), returned with a *ParseError describing it.
// A single check without ":" also reports a *ParseError (it is "!" inside
// an otherwise valid rule).
func ParseRule(rule string) (string, error) {
	n, err := parseText(rule)
	return n.String(), err
}

// parseText parses the text rule language (oslo _parse_text_rule).
func parseText(rule string) (node, error) {
	if rule == "" {
		return trueCheck{}, nil
	}
	var firstErr error
	stack := make([]token, 0, 8)
	shift := func(t token) {
		stack = append(stack, t)
		stack = reduce(stack)
	}
	for _, piece := range splitPySpace(rule) {
		clean := strings.TrimLeft(piece, "(")
		for range len(piece) - len(clean) {
			shift(token{kind: tokLParen})
		}
		if clean == "" {
			continue
		}
		tok := clean
		clean = strings.TrimRight(tok, ")")
		trail := len(tok) - len(clean)
		switch {
		case strings.EqualFold(clean, "and") && isASCII(clean):
			shift(token{kind: tokAnd})
		case strings.EqualFold(clean, "or") && isASCII(clean):
			shift(token{kind: tokOr})
		case strings.EqualFold(clean, "not") && isASCII(clean):
			shift(token{kind: tokNot})
		case clean != "":
			// The quote test looks at the token before its trailing
			// parentheses were removed, as oslo does.
			if len(tok) >= 2 && (tok[0] == '"' || tok[0] == '\'') && tok[len(tok)-1] == tok[0] && quotedLen(tok) {
				shift(token{kind: tokString})
			} else {
				n, err := parseCheck(clean)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				shift(token{kind: tokCheck, node: n})
			}
		}
		for range trail {
			shift(token{kind: tokRParen})
		}
	}
	if len(stack) != 1 || !isCheckToken(stack[0].kind) {
		return falseCheck{}, &ParseError{Rule: rule}
	}
	return stack[0].node, firstErr
}

// quotedLen reports whether a token that starts and ends with a quote has at
// least two characters (Python compares characters, not bytes; a lone
// multi-byte quote is impossible, so the byte test suffices).
func quotedLen(tok string) bool { return utf8.RuneCountInString(tok) >= 2 }

func isCheckToken(k tokenKind) bool {
	return k == tokCheck || k == tokAndExpr || k == tokOrExpr
}

// reduce applies oslo's greedy reductions until none matches.
func reduce(st []token) []token {
	for {
		n := len(st)
		if n >= 3 {
			a, b, c := st[n-3], st[n-2], st[n-1]
			switch {
			case a.kind == tokLParen && isCheckToken(b.kind) && c.kind == tokRParen:
				st = append(st[:n-3], token{kind: tokCheck, node: b.node})
				continue
			case a.kind == tokCheck && b.kind == tokAnd && c.kind == tokCheck:
				st = append(st[:n-3], token{kind: tokAndExpr, node: &andCheck{rules: []node{a.node, c.node}}})
				continue
			case a.kind == tokAndExpr && b.kind == tokAnd && c.kind == tokCheck:
				and := a.node.(*andCheck)
				and.rules = append(and.rules, c.node)
				st = append(st[:n-3], token{kind: tokAndExpr, node: and})
				continue
			case a.kind == tokOrExpr && b.kind == tokAnd && c.kind == tokCheck:
				// "A or B and C": pop B from the or-expression and and it
				// with C (extending B in place when it already is an and).
				or := a.node.(*orCheck)
				last := or.rules[len(or.rules)-1]
				or.rules = or.rules[:len(or.rules)-1]
				if and, ok := last.(*andCheck); ok {
					and.rules = append(and.rules, c.node)
					last = and
				} else {
					last = &andCheck{rules: []node{last, c.node}}
				}
				or.rules = append(or.rules, last)
				st = append(st[:n-3], token{kind: tokOrExpr, node: or})
				continue
			case (a.kind == tokCheck || a.kind == tokAndExpr) && b.kind == tokOr && c.kind == tokCheck:
				st = append(st[:n-3], token{kind: tokOrExpr, node: &orCheck{rules: []node{a.node, c.node}}})
				continue
			case a.kind == tokOrExpr && b.kind == tokOr && c.kind == tokCheck:
				or := a.node.(*orCheck)
				or.rules = append(or.rules, c.node)
				st = append(st[:n-3], token{kind: tokOrExpr, node: or})
				continue
			}
		}
		if n >= 2 && st[n-2].kind == tokNot && st[n-1].kind == tokCheck {
			st = append(st[:n-2], token{kind: tokCheck, node: &notCheck{rule: st[n-1].node}})
			continue
		}
		return st
	}
}

// splitPySpace splits on runs of Python whitespace, dropping empty pieces.
func splitPySpace(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		if pyIsSpace(r) {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// parseCheck parses one base check (oslo _parse_check).
func parseCheck(s string) (node, error) {
	switch s {
	case "!":
		return falseCheck{}, nil
	case "@":
		return trueCheck{}, nil
	}
	kind, match, ok := strings.Cut(s, ":")
	if !ok {
		return falseCheck{}, &ParseError{Rule: s}
	}
	switch kind {
	case "http", "https":
		return &httpCheck{kind: kind, match: match}, nil
	case "rule":
		return &ruleCheck{match: match}, nil
	case "role":
		return &roleCheck{match: match, fmt: compileFormat(match)}, nil
	}
	return &genericCheck{kind: kind, match: match, fmt: compileFormat(match), info: classifyKind(kind)}, nil
}

// parseValue parses a rule value read from a policy file: a string in the
// policy language, or oslo's legacy list-of-lists form (outer list "or",
// inner lists "and", each element a single check). Python's falsy values
// (null, false, 0, empty) are the empty rule: always true.
func parseValue(v any) (node, error) {
	switch x := v.(type) {
	case string:
		return parseText(x)
	case nil:
		return trueCheck{}, nil
	case bool:
		if !x {
			return trueCheck{}, nil
		}
	case float64:
		if x == 0 {
			return trueCheck{}, nil
		}
	case int:
		if x == 0 {
			return trueCheck{}, nil
		}
	case map[string]any:
		// Python iterates a dict's keys: each key is one check.
		return parseList(mapKeys(x))
	case []any:
		return parseList(x)
	}
	return nil, fmt.Errorf("%s is not a rule (want a string or a list)", pyRepr(v))
}

func parseList(outer []any) (node, error) {
	if len(outer) == 0 {
		return trueCheck{}, nil
	}
	var ors []node
	for _, inner := range outer {
		var items []any
		switch x := inner.(type) {
		case nil:
			continue
		case bool:
			if x {
				return nil, fmt.Errorf("True is not a list of checks")
			}
			continue
		case float64:
			if x != 0 {
				return nil, fmt.Errorf("%s is not a list of checks", pyRepr(x))
			}
			continue
		case string:
			if x == "" {
				continue
			}
			items = []any{x}
		case []any:
			if len(x) == 0 {
				continue
			}
			items = x
		case map[string]any:
			if len(x) == 0 {
				continue
			}
			items = mapKeys(x)
		default:
			return nil, fmt.Errorf("%s is not a list of checks", pyRepr(x))
		}
		ands := make([]node, 0, len(items))
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				// oslo logs and fails closed on a check it cannot split.
				ands = append(ands, falseCheck{})
				continue
			}
			n, _ := parseCheck(s)
			ands = append(ands, n)
		}
		if len(ands) == 1 {
			ors = append(ors, ands[0])
		} else {
			ors = append(ors, &andCheck{rules: ands})
		}
	}
	switch len(ors) {
	case 0:
		return falseCheck{}, nil
	case 1:
		return ors[0], nil
	}
	return &orCheck{rules: ors}, nil
}

// mapKeys returns the keys of m, sorted.
//
// Deviation: Python keeps the file's order; the order only matters for
// which of two failing checks raises first.
func mapKeys(m map[string]any) []any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}
