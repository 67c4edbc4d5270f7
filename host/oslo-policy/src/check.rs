//! The rule language, as oslo.policy parses it (`oslo_policy/_parser.py`):
//!
//! - the text is split on runs of whitespace (Python's `\s`);
//! - leading `(` and trailing `)` of each piece are separate tokens;
//! - `and`, `or`, `not` (any case) are operators;
//! - a piece that starts and ends with the same quote is a string token,
//!   which no grammar rule consumes, so the whole rule fails to parse;
//! - anything else is a check: `@`, `!`, or `kind:match` split on the first
//!   `:` (no `:` → a check that is always false);
//! - tokens are shifted onto a stack and reduced greedily after each shift
//!   (`( check )` → check, `check and check` → and-expression, `or` likewise,
//!   `or-expression and check` re-associates the last operand so that `and`
//!   binds tighter, `not check` → check).
//!
//! A rule that does not reduce to a single check is logged and becomes a
//! check that is always false: a malformed rule denies, it does not error.
//! The empty rule is always true.

use std::fmt;

use crate::format::MatchFormat;
use crate::literal::{KindInfo, classify_kind};
use crate::python::is_py_space;

/// The deepest nesting of `not`, `and` and `or` a rule may have.
///
/// Deviation: Python has no such bound but raises `RecursionError` while it
/// parses or evaluates a rule nested a few hundred levels deep; here a rule
/// nested deeper than this does not parse (it denies).
pub(crate) const MAX_NESTING: u32 = 1000;

/// A compiled check.
#[derive(Debug, Clone)]
pub(crate) enum Check {
    True,
    False,
    Not(Box<Check>),
    And(Vec<Check>),
    Or(Vec<Check>),
    /// `rule:<name>`: the named rule (or the default rule).
    Rule(RuleRef),
    /// `role:<match>`: the formatted match, lower-cased, is one of the
    /// lower-cased credential roles.
    Role(Matched),
    /// `<kind>:<match>`: a literal or a credential path on the left, the
    /// formatted match on the right, compared as Python strings.
    Generic(Generic),
    /// `http:<url>` or `https:<url>`: oslo POSTs the target and the
    /// credentials to a remote server.
    ///
    /// Deviation: remote checks are not supported; they are always false
    /// (fail closed) and the enforcer warns about every rule that uses one.
    Http {
        kind: String,
        raw: String,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct RuleRef {
    pub(crate) name: String,
    /// What the name resolves to in the enforcer's rule set, filled in once
    /// the set is complete.
    pub(crate) slot: Slot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    Unresolved,
    /// Neither the name nor the default rule exists (oslo: `KeyError`).
    Missing,
    Index(usize),
}

#[derive(Debug, Clone)]
pub(crate) struct Matched {
    pub(crate) raw: String,
    pub(crate) format: MatchFormat,
}

#[derive(Debug, Clone)]
pub(crate) struct Generic {
    pub(crate) kind: String,
    pub(crate) matched: Matched,
    pub(crate) info: KindInfo,
}

impl fmt::Display for Check {
    /// oslo's canonical form (`str()` of the check tree).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Check::True => f.write_str("@"),
            Check::False => f.write_str("!"),
            Check::Not(c) => write!(f, "not {c}"),
            Check::And(rules) => join(f, rules, " and "),
            Check::Or(rules) => join(f, rules, " or "),
            Check::Rule(r) => write!(f, "rule:{}", r.name),
            Check::Role(m) => write!(f, "role:{}", m.raw),
            Check::Generic(g) => write!(f, "{}:{}", g.kind, g.matched.raw),
            Check::Http { kind, raw } => write!(f, "{kind}:{raw}"),
        }
    }
}

fn join(f: &mut fmt::Formatter<'_>, rules: &[Check], sep: &str) -> fmt::Result {
    f.write_str("(")?;
    for (i, r) in rules.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{r}")?;
    }
    f.write_str(")")
}

impl Check {
    /// oslo's structural equality of check trees (`BaseCheck.__eq__`).
    pub(crate) fn same(&self, other: &Check) -> bool {
        match (self, other) {
            (Check::True, Check::True) | (Check::False, Check::False) => true,
            (Check::Not(a), Check::Not(b)) => a.same(b),
            (Check::And(a), Check::And(b)) | (Check::Or(a), Check::Or(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
            }
            (Check::Rule(a), Check::Rule(b)) => a.name == b.name,
            (Check::Role(a), Check::Role(b)) => a.raw == b.raw,
            (Check::Generic(a), Check::Generic(b)) => {
                a.kind == b.kind && a.matched.raw == b.matched.raw
            }
            (Check::Http { kind: k1, raw: r1 }, Check::Http { kind: k2, raw: r2 }) => {
                k1 == k2 && r1 == r2
            }
            _ => false,
        }
    }

    /// Calls `f` on every `rule:` reference of the tree.
    pub(crate) fn for_each_ref<'a>(&'a self, f: &mut impl FnMut(&'a RuleRef)) {
        match self {
            Check::Rule(r) => f(r),
            Check::Not(c) => c.for_each_ref(f),
            Check::And(rules) | Check::Or(rules) => {
                for r in rules {
                    r.for_each_ref(f);
                }
            }
            _ => {}
        }
    }

    /// Sets the slot of every `rule:` reference.
    pub(crate) fn resolve(&mut self, lookup: &impl Fn(&str) -> Slot) {
        match self {
            Check::Rule(r) => r.slot = lookup(&r.name),
            Check::Not(c) => c.resolve(lookup),
            Check::And(rules) | Check::Or(rules) => {
                for r in rules {
                    r.resolve(lookup);
                }
            }
            _ => {}
        }
    }

    /// Whether the tree holds an `http:`/`https:` check.
    pub(crate) fn has_remote(&self) -> bool {
        match self {
            Check::Http { .. } => true,
            Check::Not(c) => c.has_remote(),
            Check::And(rules) | Check::Or(rules) => rules.iter().any(Check::has_remote),
            _ => false,
        }
    }
}

/// A rule that oslo.policy fails to parse (or a single check in it without
/// `:`). Such a rule is not an error for the enforcer: it denies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The text that failed: the whole rule, or the check without `:`.
    pub rule: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "failed to understand rule {:?}", self.rule)
    }
}

impl std::error::Error for ParseError {}

/// A rule in oslo.policy's canonical form, with the problem oslo would log
/// about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedRule {
    /// `str()` of the check tree oslo builds; `@` for the empty rule and `!`
    /// for a rule that does not parse.
    pub canonical: String,
    /// Set when the rule does not parse (it then always denies) or when one
    /// of its checks has no `:` (that check is always false).
    pub error: Option<ParseError>,
}

/// Parses a rule in the policy language and returns oslo.policy's canonical
/// form. It never fails hard: like oslo.policy, a rule it cannot parse
/// becomes `!` (always false).
pub fn parse_rule(rule: &str) -> ParsedRule {
    let (check, error) = parse_text(rule);
    ParsedRule {
        canonical: check.to_string(),
        error,
    }
}

enum Tok {
    LParen,
    RParen,
    And,
    Or,
    Not,
    Str,
    /// A check and the depth of its tree.
    Check(Check, u32),
    /// An and-expression, with the depth of each operand.
    AndExpr(Vec<Check>, Vec<u32>),
    OrExpr(Vec<Check>, Vec<u32>),
}

impl Tok {
    fn depth(&self) -> u32 {
        match self {
            Tok::Check(_, d) => *d,
            Tok::AndExpr(_, depths) | Tok::OrExpr(_, depths) => expr_depth(depths),
            _ => 0,
        }
    }

    fn is_check(&self) -> bool {
        matches!(self, Tok::Check(..) | Tok::AndExpr(..) | Tok::OrExpr(..))
    }
}

fn expr_depth(depths: &[u32]) -> u32 {
    1 + depths.iter().copied().max().unwrap_or(0)
}

/// Parses the text rule language (oslo `_parse_text_rule`).
pub(crate) fn parse_text(rule: &str) -> (Check, Option<ParseError>) {
    if rule.is_empty() {
        return (Check::True, None);
    }
    let mut first_error = None;
    let mut parser = Parser::default();
    for piece in rule.split(is_py_space).filter(|p| !p.is_empty()) {
        let tok = piece.trim_start_matches('(');
        for _ in 0..piece.len() - tok.len() {
            parser.shift(Tok::LParen);
        }
        if tok.is_empty() {
            continue;
        }
        let clean = tok.trim_end_matches(')');
        let trail = tok.len() - clean.len();
        if clean.eq_ignore_ascii_case("and") {
            parser.shift(Tok::And);
        } else if clean.eq_ignore_ascii_case("or") {
            parser.shift(Tok::Or);
        } else if clean.eq_ignore_ascii_case("not") {
            parser.shift(Tok::Not);
        } else if !clean.is_empty() {
            // The quote test looks at the token before its trailing
            // parentheses are removed, as oslo does.
            let quoted = tok.len() >= 2
                && ((tok.starts_with('"') && tok.ends_with('"'))
                    || (tok.starts_with('\'') && tok.ends_with('\'')));
            if quoted {
                parser.shift(Tok::Str);
            } else {
                let (check, err) = parse_check(clean);
                if first_error.is_none() {
                    first_error = err;
                }
                parser.shift(Tok::Check(check, 0));
            }
        }
        for _ in 0..trail {
            parser.shift(Tok::RParen);
        }
    }
    match parser.finish() {
        Some(check) => (check, first_error),
        None => (
            Check::False,
            Some(ParseError {
                rule: rule.to_owned(),
            }),
        ),
    }
}

#[derive(Default)]
struct Parser {
    stack: Vec<Tok>,
    /// Set when a reduction built a tree deeper than `MAX_NESTING`.
    too_deep: bool,
}

impl Parser {
    fn shift(&mut self, t: Tok) {
        if self.too_deep {
            return;
        }
        self.stack.push(t);
        while self.reduce_once() {
            if self.stack.last().is_some_and(|t| t.depth() > MAX_NESTING) {
                self.too_deep = true;
                return;
            }
        }
    }

    fn finish(mut self) -> Option<Check> {
        if self.too_deep || self.stack.len() != 1 {
            return None;
        }
        match self.stack.pop() {
            Some(Tok::Check(c, _)) => Some(c),
            Some(Tok::AndExpr(rules, _)) => Some(Check::And(rules)),
            Some(Tok::OrExpr(rules, _)) => Some(Check::Or(rules)),
            _ => None,
        }
    }

    /// Applies one of oslo's reductions to the top of the stack, if one
    /// matches.
    fn reduce_once(&mut self) -> bool {
        let n = self.stack.len();
        if n >= 3 {
            let (a, b, c) = (&self.stack[n - 3], &self.stack[n - 2], &self.stack[n - 1]);
            let matches = match (a, b, c) {
                (Tok::LParen, m, Tok::RParen) => m.is_check(),
                (
                    Tok::Check(..) | Tok::AndExpr(..) | Tok::OrExpr(..),
                    Tok::And | Tok::Or,
                    Tok::Check(..),
                ) => true,
                _ => false,
            };
            if matches {
                let (Some(c), Some(b), Some(a)) =
                    (self.stack.pop(), self.stack.pop(), self.stack.pop())
                else {
                    return false;
                };
                let reduced = reduce3(a, b, c);
                self.stack.push(reduced);
                return true;
            }
        }
        if n >= 2
            && matches!(self.stack[n - 2], Tok::Not)
            && let Some(Tok::Check(c, d)) = self.stack.pop_if(|t| matches!(t, Tok::Check(..)))
        {
            self.stack.pop();
            self.stack.push(Tok::Check(Check::Not(Box::new(c)), d + 1));
            return true;
        }
        false
    }
}

/// The reduction of three tokens that `reduce_once` matched.
fn reduce3(a: Tok, b: Tok, c: Tok) -> Tok {
    match (a, b, c) {
        // "( check )" → check.
        (Tok::LParen, Tok::AndExpr(rules, depths), _) => {
            let d = expr_depth(&depths);
            Tok::Check(Check::And(rules), d)
        }
        (Tok::LParen, Tok::OrExpr(rules, depths), _) => {
            let d = expr_depth(&depths);
            Tok::Check(Check::Or(rules), d)
        }
        (Tok::LParen, middle, _) => middle,
        (Tok::Check(x, dx), Tok::And, Tok::Check(y, dy)) => Tok::AndExpr(vec![x, y], vec![dx, dy]),
        (Tok::AndExpr(mut rules, mut depths), Tok::And, Tok::Check(y, dy)) => {
            rules.push(y);
            depths.push(dy);
            Tok::AndExpr(rules, depths)
        }
        (Tok::OrExpr(mut rules, mut depths), Tok::And, Tok::Check(y, dy)) => {
            // "A or B and C": pop B from the or-expression and and it with C
            // (extending B in place when it already is an and).
            let (and, depth) = match (rules.pop(), depths.pop()) {
                (Some(Check::And(mut inner)), Some(d)) => {
                    inner.push(y);
                    (Check::And(inner), d.max(dy + 1))
                }
                (Some(last), d) => {
                    let d = d.unwrap_or(0);
                    (Check::And(vec![last, y]), 1 + d.max(dy))
                }
                (None, _) => (Check::And(vec![y]), dy + 1),
            };
            rules.push(and);
            depths.push(depth);
            Tok::OrExpr(rules, depths)
        }
        (Tok::Check(x, dx), Tok::Or, Tok::Check(y, dy)) => Tok::OrExpr(vec![x, y], vec![dx, dy]),
        (Tok::AndExpr(rules, depths), Tok::Or, Tok::Check(y, dy)) => {
            let dx = expr_depth(&depths);
            Tok::OrExpr(vec![Check::And(rules), y], vec![dx, dy])
        }
        (Tok::OrExpr(mut rules, mut depths), Tok::Or, Tok::Check(y, dy)) => {
            rules.push(y);
            depths.push(dy);
            Tok::OrExpr(rules, depths)
        }
        // `reduce_once` only calls this for the shapes above.
        (a, _, _) => a,
    }
}

/// Parses one base check (oslo `_parse_check`).
pub(crate) fn parse_check(s: &str) -> (Check, Option<ParseError>) {
    match s {
        "!" => return (Check::False, None),
        "@" => return (Check::True, None),
        _ => {}
    }
    let Some((kind, raw)) = s.split_once(':') else {
        return (Check::False, Some(ParseError { rule: s.to_owned() }));
    };
    let matched = || Matched {
        raw: raw.to_owned(),
        format: MatchFormat::compile(raw),
    };
    let check = match kind {
        "http" | "https" => Check::Http {
            kind: kind.to_owned(),
            raw: raw.to_owned(),
        },
        "rule" => Check::Rule(RuleRef {
            name: raw.to_owned(),
            slot: Slot::Unresolved,
        }),
        "role" => Check::Role(matched()),
        _ => Check::Generic(Generic {
            kind: kind.to_owned(),
            matched: matched(),
            info: classify_kind(kind),
        }),
    };
    (check, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Port of TestParseRule (Go): str() of the tree oslo.policy 6.0.1
    // builds for each rule.
    #[test]
    fn canonical_forms() {
        let cases = [
            ("", "@"),
            ("@", "@"),
            ("!", "!"),
            ("role:admin", "role:admin"),
            ("rule:context_is_admin", "rule:context_is_admin"),
            ("role:admin or role:member", "(role:admin or role:member)"),
            (
                "role:a and role:b and role:c",
                "(role:a and role:b and role:c)",
            ),
            (
                "role:a or role:b and role:c",
                "(role:a or (role:b and role:c))",
            ),
            (
                "role:a and role:b or role:c",
                "((role:a and role:b) or role:c)",
            ),
            (
                "role:a or role:b and role:c or role:d and not role:e",
                "(role:a or (role:b and role:c) or (role:d and not role:e))",
            ),
            ("not role:a and role:b", "(not role:a and role:b)"),
            ("not (role:a or role:b)", "not (role:a or role:b)"),
            ("not not role:a", "not not role:a"),
            (
                "(role:a or role:b) and role:c",
                "((role:a or role:b) and role:c)",
            ),
            (
                "role:x or (role:a and role:b) and role:c",
                "(role:x or (role:a and role:b and role:c))",
            ),
            ("((role:a))", "role:a"),
            (
                "role:a OR role:b AND NOT role:c",
                "(role:a or (role:b and not role:c))",
            ),
            ("  role:a\tor\n role:b ", "(role:a or role:b)"),
            ("role:a and", "!"),
            ("(role:a", "!"),
            ("role:a)", "!"),
            ("and role:a", "!"),
            ("role:a role:b", "!"),
            ("role:a not", "!"),
            ("'role:a'", "!"),
            ("role:a or 'x'", "!"),
            ("('role:a')", "'role:a'"),
            ("admin or role:a", "(! or role:a)"),
            ("admin", "!"),
            (":x or role:a", "(:x or role:a)"),
            ("project_id:%(project_id)s", "project_id:%(project_id)s"),
            (
                "is_admin:True or project_id:%(project_id)s",
                "(is_admin:True or project_id:%(project_id)s)",
            ),
            (
                "(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))",
                "(rule:context_is_admin or (rule:project_member and rule:is_user))",
            ),
            ("http://example.com/%(x)s", "http://example.com/%(x)s"),
            ("role:a\u{a0}or\u{2003}role:b", "(role:a or role:b)"),
            ("role:a\u{1c}or role:b", "(role:a or role:b)"),
            ("role:a:b", "role:a:b"),
            ("()", "!"),
            ("(", "!"),
            (")", "!"),
            ("not", "!"),
            (
                "role:a and (role:b or role:c) and role:d",
                "(role:a and (role:b or role:c) and role:d)",
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(parse_rule(rule).canonical, want, "parse_rule({rule:?})");
        }
    }

    // Port of TestParseRuleReportsMalformedRules (Go).
    #[test]
    fn malformed_rules_report_an_error() {
        for rule in ["role:a and", "(role:a", "'x'", "admin", "role:a role:b"] {
            assert!(parse_rule(rule).error.is_some(), "{rule:?}");
        }
        for rule in ["", "@", "role:a or (role:b and not role:c)"] {
            assert_eq!(parse_rule(rule).error, None, "{rule:?}");
        }
        assert_eq!(
            parse_rule("role:a and")
                .error
                .map(|e| e.to_string())
                .as_deref(),
            Some("failed to understand rule \"role:a and\"")
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}role:a", "not ".repeat(MAX_NESTING as usize));
        assert_eq!(parse_rule(&deep).error, None);
        let too_deep = format!("{}role:a", "not ".repeat(MAX_NESTING as usize + 1));
        let parsed = parse_rule(&too_deep);
        assert_eq!(parsed.canonical, "!");
        assert!(parsed.error.is_some());
        let mut nested = "role:a".to_owned();
        for _ in 0..=MAX_NESTING {
            nested = format!("(role:b and ({nested} or role:c))");
        }
        assert_eq!(parse_rule(&nested).canonical, "!");
    }

    #[test]
    fn structural_equality() {
        let (a, _) = parse_text("is_admin:True or project_id:%(project_id)s");
        let (b, _) = parse_text("(is_admin:True)  OR  (project_id:%(project_id)s)");
        let (c, _) = parse_text("is_admin:True or project_id:%(user_id)s");
        assert!(a.same(&b));
        assert!(!a.same(&c));
        assert!(Check::True.same(&parse_text("").0));
    }
}
