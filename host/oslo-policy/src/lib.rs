//! An oslo.policy-compatible rule engine: the rule language, policy files and
//! the enforcer's scope and deprecation semantics.
//!
//! It knows nothing of Magnum: the default rules of a service are given to it.
//! It reproduces oslo.policy 6.0.1: the rule language and its parser (greedy
//! shift-reduce; a rule that does not parse denies), role checks
//! (case-insensitive), generic checks (`project_id:%(project_id)s`,
//! `is_admin:True`, `'literal':%(key)s`, `user.id:...`), lists in
//! credentials, the default rule for unknown names, deprecated check strings
//! when `enforce_new_defaults` is off, and scope types. The Python semantics
//! that matter (`str()` of values, `str.lower()`, `%`-formatting with a
//! mapping, `ast.literal_eval` of the check kind) live in `python`, `format`
//! and `literal`.
//!
//! Known differences, all failing closed: `http:`/`https:` remote checks are
//! never true; exotic Python forms (container, bytes or complex literals as
//! check kinds, `%x`-style conversions) are evaluation errors here.

mod check;
mod enforcer;
mod eval;
mod file;
mod format;
#[doc(hidden)]
pub mod fuzzing;
mod literal;
mod python;
pub mod sample;

pub use check::{ParseError, ParsedRule, parse_rule};
pub use enforcer::{
    CheckError, DEFAULT_RULE_NAME, Denied, DenyReason, DeprecatedRule, EnforceError, Enforcer,
    EvalError, InvalidScope, LoadError, Operation, Options, Rule, Warning, caller_target,
};
pub use python::PyError;

/// The caller, as oslo.policy's creds dict: `user_id`, `project_id`, `roles`
/// (a list of strings), `is_admin`, `system_scope`, `domain_id`, ... Values
/// are any JSON value, with Python's meaning (`null` is `None`); objects keep
/// their insertion order, as a Python dict does.
pub type Credentials = serde_json::Map<String, serde_json::Value>;

/// The object of the operation, as oslo.policy's target dict
/// (`%(project_id)s` reads `target["project_id"]`; `%(target.x)s` reads the
/// key `target.x` literally).
pub type Target = serde_json::Map<String, serde_json::Value>;
