//! Evaluation of a check tree against a target and credentials, with
//! oslo.policy's semantics.

use serde_json::Value;

use crate::check::{Check, Generic, Matched, Slot};
use crate::literal::KindInfo;
use crate::python::{PyError, lower_equal, py_lower, py_str, py_truthy};
use crate::{Credentials, Target};

/// The deepest chain of nested evaluations (rule references and tree
/// levels together). Python raises `RecursionError` at a similar depth;
/// this bound also keeps the native stack small.
const MAX_EVAL_DEPTH: usize = 1000;

/// The longest chain of `rule:` references (a cycle is detected before).
const MAX_RULE_DEPTH: usize = 200;

/// A compiled rule of the enforcer's rule set.
#[derive(Debug)]
pub(crate) struct CompiledRule {
    pub(crate) name: String,
    pub(crate) check: Check,
    /// The index of the default registered under this name, if any.
    pub(crate) registered: Option<usize>,
}

/// The rules being evaluated, to detect cycles (a cycle is a
/// `RecursionError` in oslo). Short chains stay on the stack.
struct Active {
    inline: [usize; 16],
    len: usize,
    spill: Vec<usize>,
}

impl Active {
    fn contains(&self, slot: usize) -> bool {
        self.inline[..self.len.min(16)].contains(&slot) || self.spill.contains(&slot)
    }

    fn push(&mut self, slot: usize) {
        if self.len < 16 {
            self.inline[self.len] = slot;
        } else {
            self.spill.push(slot);
        }
        self.len += 1;
    }

    fn pop(&mut self) {
        self.len -= 1;
        if self.len >= 16 {
            self.spill.pop();
        }
    }
}

pub(crate) struct Eval<'a> {
    rules: &'a [CompiledRule],
    target: &'a Target,
    creds: &'a Credentials,
    /// `creds["system_scope"]` when truthy: oslo copies it into
    /// `creds["system"]` before it evaluates (without mutating the caller's
    /// map here).
    system: Option<&'a Value>,
    active: Active,
    depth: usize,
}

impl<'a> Eval<'a> {
    pub(crate) fn new(
        rules: &'a [CompiledRule],
        target: &'a Target,
        creds: &'a Credentials,
    ) -> Self {
        Eval {
            rules,
            target,
            creds,
            system: creds.get("system_scope").filter(|v| py_truthy(v)),
            active: Active {
                inline: [0; 16],
                len: 0,
                spill: Vec::new(),
            },
            depth: 0,
        }
    }

    /// `creds[key]` as oslo sees it after its `system` adjustment.
    pub(crate) fn cred(&self, key: &str) -> Option<&'a Value> {
        if key == "system"
            && let Some(v) = self.system
        {
            return Some(v);
        }
        self.creds.get(key)
    }

    /// The token scope of the credentials, as oslo.policy classifies them.
    pub(crate) fn token_scope(&self) -> &'static str {
        if self.cred("system").is_some_and(py_truthy) {
            "system"
        } else if self.creds.get("domain_id").is_some_and(py_truthy) {
            "domain"
        } else {
            "project"
        }
    }

    /// Evaluates the rule in `slot` (the top-level rule of an enforcement).
    pub(crate) fn rule(&mut self, slot: usize) -> Result<bool, PyError> {
        let rules = self.rules;
        let Some(rule) = rules.get(slot) else {
            return Ok(false);
        };
        self.active.push(slot);
        let result = self.check(&rule.check);
        self.active.pop();
        result
    }

    pub(crate) fn check(&mut self, c: &Check) -> Result<bool, PyError> {
        if self.depth >= MAX_EVAL_DEPTH {
            return Err(PyError::new(
                "RecursionError: maximum recursion depth exceeded",
            ));
        }
        self.depth += 1;
        let result = self.check_inner(c);
        self.depth -= 1;
        result
    }

    fn check_inner(&mut self, c: &Check) -> Result<bool, PyError> {
        match c {
            Check::True => Ok(true),
            Check::False | Check::Http { .. } => Ok(false),
            Check::Not(inner) => Ok(!self.check(inner)?),
            Check::And(rules) => {
                for r in rules {
                    if !self.check(r)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Check::Or(rules) => {
                for r in rules {
                    if self.check(r)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Check::Rule(r) => match r.slot {
                // oslo: KeyError → fail closed.
                Slot::Missing | Slot::Unresolved => Ok(false),
                Slot::Index(slot) => {
                    if self.active.contains(slot) || self.active.len >= MAX_RULE_DEPTH {
                        let name = self.rules.get(slot).map_or("", |r| r.name.as_str());
                        return Err(PyError::new(format!(
                            "RecursionError: rule {name:?} refers to itself"
                        )));
                    }
                    self.rule(slot)
                }
            },
            Check::Role(m) => self.role(m),
            Check::Generic(g) => self.generic(g),
        }
    }

    fn role(&self, m: &Matched) -> Result<bool, PyError> {
        let Some(want) = m.format.apply(&m.raw, self.target)? else {
            return Ok(false);
        };
        let Some(roles) = self.creds.get("roles") else {
            return Ok(false);
        };
        match roles {
            Value::Array(items) => {
                // oslo lower-cases every role before it tests membership, so
                // a role that is not a string raises even after a match.
                let mut found = false;
                for r in items {
                    let Value::String(r) = r else {
                        return Err(PyError::new(format!(
                            "AttributeError: role {} is not a string",
                            crate::python::py_repr(r)
                        )));
                    };
                    found = found || lower_equal(&want, r);
                }
                Ok(found)
            }
            // Iterating a str yields its characters.
            Value::String(s) => {
                let want = py_lower(&want);
                let mut buf = [0u8; 4];
                Ok(s.chars().any(|c| py_lower(c.encode_utf8(&mut buf)) == want))
            }
            Value::Object(m) => Ok(m.keys().any(|k| lower_equal(&want, k))),
            other => Err(PyError::new(format!(
                "TypeError: roles of type {} are not iterable",
                type_name(other)
            ))),
        }
    }

    fn generic(&self, g: &Generic) -> Result<bool, PyError> {
        let Some(matched) = g.matched.format.apply(&g.matched.raw, self.target)? else {
            return Ok(false);
        };
        match &g.info {
            KindInfo::Error(e) => Err(e.clone()),
            KindInfo::Literal(value) => Ok(value.as_deref() == Some(&*matched)),
            KindInfo::Path(path) => {
                let Some((first, rest)) = path.split_first() else {
                    return Ok(false);
                };
                match self.cred(first) {
                    Some(v) => find_in(v, rest, &matched),
                    None => Ok(false),
                }
            }
        }
    }
}

/// oslo's `GenericCheck._find_in_dict`: a list at any level matches when any
/// element matches the rest of the path; at the end the value is compared as
/// `str()`.
fn find_in(v: &Value, path: &[String], matched: &str) -> Result<bool, PyError> {
    if let Value::Array(items) = v {
        for item in items {
            if find_leaf(item, path, matched)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    find_leaf(v, path, matched)
}

fn find_leaf(v: &Value, path: &[String], matched: &str) -> Result<bool, PyError> {
    let Some((key, rest)) = path.split_first() else {
        return Ok(py_str(v) == matched);
    };
    match v {
        Value::Object(m) => match m.get(key) {
            Some(next) => find_in(next, rest, matched),
            None => Ok(false),
        },
        other => Err(PyError::new(format!(
            "TypeError: {} is not subscriptable by {key:?}",
            crate::python::py_repr(other)
        ))),
    }
}

fn type_name(v: &Value) -> &'static str {
    python_semantics::python::PyRepr::class_name(v)
}
