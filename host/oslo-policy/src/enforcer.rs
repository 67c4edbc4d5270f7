//! The enforcer: registered defaults, policy files, deprecated rules, scope
//! types and the default rule, as oslo.policy's `Enforcer` combines them.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::check::{Check, ParseError, Slot, parse_text};
use crate::eval::{CompiledRule, Eval};
use crate::file::{Document, DocumentError, parse_document, parse_value};
use crate::python::PyError;
use crate::{Credentials, Target};

/// The rule oslo.policy falls back to for an unknown rule name
/// (`[oslo_policy]/policy_default_rule`).
pub const DEFAULT_RULE_NAME: &str = "default";

/// An API operation documented for a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    pub method: String,
    pub path: String,
}

/// The rule a registered default replaces (oslo's `DeprecatedRule`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeprecatedRule {
    pub name: String,
    pub check_string: String,
    /// Why it was deprecated (for the sample file).
    pub reason: String,
    /// The release it was deprecated in (for the sample file).
    pub since: String,
}

impl DeprecatedRule {
    /// The rule `name` with `check_string`, without a reason or a release.
    pub fn new(name: impl Into<String>, check_string: impl Into<String>) -> Self {
        DeprecatedRule {
            name: name.into(),
            check_string: check_string.into(),
            reason: String::new(),
            since: String::new(),
        }
    }
}

/// A registered default: a name and a check string, with the metadata of an
/// oslo.policy `RuleDefault`/`DocumentedRuleDefault`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub name: String,
    pub check_string: String,
    /// Empty for none.
    pub description: String,
    pub operations: Vec<Operation>,
    /// The token scopes allowed to use the rule (empty: any).
    pub scope_types: Vec<String>,
    pub deprecated: Option<DeprecatedRule>,
}

impl Rule {
    /// A rule with no metadata.
    pub fn new(name: impl Into<String>, check_string: impl Into<String>) -> Self {
        Rule {
            name: name.into(),
            check_string: check_string.into(),
            description: String::new(),
            operations: Vec::new(),
            scope_types: Vec::new(),
            deprecated: None,
        }
    }

    /// The rule as the replacement of `old`.
    pub fn replacing(mut self, old: DeprecatedRule) -> Self {
        self.deprecated = Some(old);
        self
    }
}

/// What an [`Enforcer`] is built from.
#[derive(Debug, Clone)]
pub struct Options {
    /// The registered defaults, in registration order.
    pub defaults: Vec<Rule>,
    /// A YAML or JSON file of rule overrides (`"name": "check"`).
    pub policy_file: Option<PathBuf>,
    /// A missing `policy_file` means "no overrides" (the default file name
    /// that nobody created) instead of an error.
    pub policy_file_optional: bool,
    /// Directories of further override files, applied in order after
    /// `policy_file`, each directory's files in name order (names starting
    /// with `.` are skipped). Missing directories are ignored, as in
    /// oslo.policy.
    pub policy_dirs: Vec<PathBuf>,
    /// Refuse a rule whose scope types do not include the caller's token
    /// scope with [`InvalidScope`]. oslo.policy 6.0.1 always does this;
    /// `false` reproduces older releases, which only warned.
    pub enforce_scope: bool,
    /// Ignore the deprecated check strings. When false, a rule that is not
    /// overridden and replaces a deprecated rule with a different check
    /// string allows what either allows.
    pub enforce_new_defaults: bool,
    /// The rule an unknown name falls back to; empty for none.
    pub default_rule: String,
}

impl Default for Options {
    /// oslo.policy's defaults, without any registered rule or file.
    fn default() -> Self {
        Options {
            defaults: Vec::new(),
            policy_file: None,
            policy_file_optional: false,
            policy_dirs: Vec::new(),
            enforce_scope: true,
            enforce_new_defaults: true,
            default_rule: DEFAULT_RULE_NAME.to_owned(),
        }
    }
}

/// Why an [`Enforcer`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("policy {0} is already registered")]
    DuplicateRule(String),
    #[error("policy {0}: scope_types must be a list of unique strings")]
    DuplicateScopeType(String),
    #[error("read policy file {}: {source}", path.display())]
    ReadFile { path: PathBuf, source: io::Error },
    #[error("parse policy file {}: {message}", path.display())]
    ParseFile { path: PathBuf, message: String },
    #[error("parse policy file {}: the top level is not a mapping of rule names to check strings", path.display())]
    NotAMapping { path: PathBuf },
    #[error("policy file {}: rule {name:?}: {message}", path.display())]
    BadRule {
        path: PathBuf,
        name: String,
        message: String,
    },
    #[error("read policy directory {}: {source}", path.display())]
    ReadDirectory { path: PathBuf, source: io::Error },
}

impl LoadError {
    /// Whether the error is a policy file that does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, LoadError::ReadFile { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// Something oslo.policy logs while it loads the rules. The rules still
/// load; [`Enforcer::warnings`] lists these for `policy check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// A rule (or one check of it) does not parse: it (that check) denies.
    Unparsable { policy: String, error: ParseError },
    /// A rule uses an `http:`/`https:` check, which always denies here.
    RemoteCheck { policy: String },
    /// A policy file overrides the deprecated name of a registered rule.
    DeprecatedOverride {
        deprecated: String,
        replacement: String,
    },
    /// Rules that reference a rule that is not defined.
    Undefined { policies: Vec<String> },
    /// Rules that are part of (or lead to) a cycle of references.
    Cyclic { policies: Vec<String> },
    /// Policy-file rules that say the same as the registered default.
    Redundant { policies: Vec<String> },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Unparsable { policy, error } => write!(
                f,
                "policy {policy:?}: failed to understand rule {:?}; it always denies",
                error.rule
            ),
            Warning::RemoteCheck { policy } => write!(
                f,
                "policy {policy:?}: remote http checks are not supported; they always deny"
            ),
            Warning::DeprecatedOverride {
                deprecated,
                replacement,
            } => write!(
                f,
                "deprecated policy name {deprecated:?} is overridden; its replacement is {replacement:?}"
            ),
            Warning::Undefined { policies } => {
                write!(
                    f,
                    "policies {policies:?} reference a rule that is not defined"
                )
            }
            Warning::Cyclic { policies } => {
                write!(f, "policies {policies:?} are part of a cyclical reference")
            }
            Warning::Redundant { policies } => write!(
                f,
                "policies {policies:?} in the policy files are the same as the defaults"
            ),
        }
    }
}

/// oslo.policy's `InvalidScope`: the rule's scope types do not include the
/// token's scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidScope {
    pub rule: String,
    pub check_string: String,
    pub scope_types: Vec<String>,
    pub token_scope: &'static str,
}

impl fmt::Display for InvalidScope {
    /// oslo.policy's message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted: Vec<String> = self
            .scope_types
            .iter()
            .map(|s| {
                let mut out = String::new();
                python_semantics::python::write_string_repr(&mut out, s);
                out
            })
            .collect();
        write!(
            f,
            "\"{}\": \"{}\" requires a scope of [{}], request was made with {} scope.",
            self.rule,
            self.check_string,
            quoted.join(", "),
            self.token_scope
        )
    }
}

impl std::error::Error for InvalidScope {}

/// An evaluation that raises an exception in oslo.policy (a malformed
/// format, a Python syntax error in a check, a rule cycle, a credential of
/// the wrong type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalError {
    pub rule: String,
    pub error: PyError,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "evaluate policy {}: {}", self.rule, self.error)
    }
}

impl std::error::Error for EvalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Why [`Enforcer::enforce`] did not return a decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnforceError {
    #[error(transparent)]
    Scope(InvalidScope),
    #[error(transparent)]
    Eval(EvalError),
}

/// Why [`Enforcer::check`] did not return a decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The check string does not parse (oslo: it denies).
    #[error(transparent)]
    Parse(ParseError),
    #[error(transparent)]
    Eval(EvalError),
}

/// A policy denial: Magnum's `PolicyNotAuthorized`, a 403.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub rule: String,
    pub reason: DenyReason,
}

/// What made [`Enforcer::authorize`] deny.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenyReason {
    /// The rule evaluated to false.
    Rule,
    /// The token scope is not one of the rule's scope types (Magnum maps
    /// `InvalidScope` to the same 403).
    Scope(InvalidScope),
    /// The evaluation raised in oslo.policy; it fails closed.
    Error(EvalError),
}

impl fmt::Display for Denied {
    /// Magnum's message for `PolicyNotAuthorized`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Policy doesn't allow {} to be performed.", self.rule)
    }
}

impl std::error::Error for Denied {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.reason {
            DenyReason::Rule => None,
            DenyReason::Scope(s) => Some(s),
            DenyReason::Error(e) => Some(e),
        }
    }
}

/// Evaluates rules. It is immutable once built and safe to share between
/// threads.
#[derive(Debug)]
pub struct Enforcer {
    defaults: Vec<Rule>,
    rules: Vec<CompiledRule>,
    index: HashMap<String, usize>,
    /// Where each policy-file rule came from (the last file that set it).
    origins: BTreeMap<String, PathBuf>,
    default_rule: String,
    default_slot: Option<usize>,
    enforce_scope: bool,
    warnings: Vec<Warning>,
}

/// The rules read from the policy files, in oslo's dict order.
#[derive(Default)]
struct FileRules {
    rules: Vec<(String, Check)>,
    index: HashMap<String, usize>,
    origins: BTreeMap<String, PathBuf>,
}

impl FileRules {
    fn get(&self, name: &str) -> Option<&Check> {
        self.index.get(name).map(|&i| &self.rules[i].1)
    }

    fn insert(&mut self, name: String, check: Check, path: &Path) {
        self.origins.insert(name.clone(), path.to_owned());
        match self.index.get(&name) {
            Some(&i) => self.rules[i].1 = check,
            None => {
                self.index.insert(name.clone(), self.rules.len());
                self.rules.push((name, check));
            }
        }
    }
}

impl Enforcer {
    /// Registers the defaults and loads the policy files.
    pub fn new(opts: Options) -> Result<Enforcer, LoadError> {
        let mut registered: HashMap<&str, usize> = HashMap::with_capacity(opts.defaults.len());
        for (i, d) in opts.defaults.iter().enumerate() {
            if registered.insert(&d.name, i).is_some() {
                return Err(LoadError::DuplicateRule(d.name.clone()));
            }
            for (j, s) in d.scope_types.iter().enumerate() {
                if d.scope_types[..j].contains(s) {
                    return Err(LoadError::DuplicateScopeType(d.name.clone()));
                }
            }
        }

        let mut warnings = Vec::new();
        let mut file = FileRules::default();
        if let Some(path) = &opts.policy_file {
            match load_file(path, &mut file, &mut warnings) {
                Err(e) if opts.policy_file_optional && e.is_not_found() => {
                    tracing::debug!(policy_file = %path.display(), "policy file not found, using the defaults");
                }
                Err(e) => return Err(e),
                Ok(()) => {}
            }
        }
        for dir in &opts.policy_dirs {
            for path in policy_dir_files(dir)? {
                load_file(&path, &mut file, &mut warnings)?;
            }
        }

        let mut rules: Vec<CompiledRule> =
            Vec::with_capacity(file.rules.len() + opts.defaults.len());
        let mut redundant = Vec::new();
        for (name, check) in &file.rules {
            let reg = registered.get(name.as_str()).copied();
            if let Some(r) = reg
                && parse_text(&opts.defaults[r].check_string).0.to_string() == check.to_string()
            {
                redundant.push(name.clone());
            }
            rules.push(CompiledRule {
                name: name.clone(),
                check: check.clone(),
                registered: reg,
            });
        }
        for (i, d) in opts.defaults.iter().enumerate() {
            if file.index.contains_key(&d.name) {
                continue;
            }
            let check = default_check(d, &file, opts.enforce_new_defaults, &mut warnings);
            rules.push(CompiledRule {
                name: d.name.clone(),
                check,
                registered: Some(i),
            });
        }
        let index: HashMap<String, usize> = rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.clone(), i))
            .collect();
        let default_slot = if opts.default_rule.is_empty() {
            None
        } else {
            index.get(&opts.default_rule).copied()
        };
        let lookup = |name: &str| match index.get(name).copied().or(default_slot) {
            Some(i) => Slot::Index(i),
            None => Slot::Missing,
        };
        for r in &mut rules {
            r.check.resolve(&lookup);
        }

        let mut e = Enforcer {
            defaults: opts.defaults,
            rules,
            index,
            origins: file.origins,
            default_rule: opts.default_rule,
            default_slot,
            enforce_scope: opts.enforce_scope,
            warnings,
        };
        if !redundant.is_empty() {
            e.warnings.push(Warning::Redundant {
                policies: redundant,
            });
        }
        e.check_rules();
        for w in &e.warnings {
            tracing::warn!("{w}");
        }
        Ok(e)
    }

    /// Records references to undefined rules and cycles, as oslo logs them
    /// when it loads rules (it does not fail).
    fn check_rules(&mut self) {
        let undefined: Vec<String> = self
            .rules
            .iter()
            .filter(|r| {
                let mut missing = false;
                r.check.for_each_ref(&mut |rr| {
                    missing |= !self.index.contains_key(&rr.name);
                });
                missing
            })
            .map(|r| r.name.clone())
            .collect();
        let cyclic: Vec<String> = self
            .reaching_cycles()
            .into_iter()
            .zip(&self.rules)
            .filter(|(c, _)| *c)
            .map(|(_, r)| r.name.clone())
            .collect();
        if !undefined.is_empty() {
            self.warnings.push(Warning::Undefined {
                policies: undefined,
            });
        }
        if !cyclic.is_empty() {
            self.warnings.push(Warning::Cyclic { policies: cyclic });
        }
    }

    /// For each rule, whether evaluating it can run into a cycle of
    /// `rule:` references defined by exact name (oslo's `_cycle_check`).
    /// Tarjan's strongly connected components, iteratively, so that a long
    /// chain in a policy file cannot exhaust the stack.
    fn reaching_cycles(&self) -> Vec<bool> {
        let n = self.rules.len();
        let edges: Vec<Vec<usize>> = self
            .rules
            .iter()
            .map(|r| {
                let mut out = Vec::new();
                r.check.for_each_ref(&mut |rr| {
                    if let Some(&i) = self.index.get(&rr.name) {
                        out.push(i);
                    }
                });
                out
            })
            .collect();
        const UNSEEN: usize = usize::MAX;
        let mut order = vec![UNSEEN; n];
        let mut low = vec![0; n];
        let mut on_stack = vec![false; n];
        let mut component = vec![UNSEEN; n];
        let mut stack = Vec::new();
        let mut components: Vec<Vec<usize>> = Vec::new();
        let mut counter = 0;
        for root in 0..n {
            if order[root] != UNSEEN {
                continue;
            }
            let mut work = vec![(root, 0usize)];
            order[root] = counter;
            low[root] = counter;
            counter += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (v, ref mut next)) = work.last_mut() {
                if let Some(&w) = edges[v].get(*next) {
                    *next += 1;
                    if order[w] == UNSEEN {
                        order[w] = counter;
                        low[w] = counter;
                        counter += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        work.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(order[w]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == order[v] {
                    let mut members = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component[w] = components.len();
                        members.push(w);
                        if w == v {
                            break;
                        }
                    }
                    components.push(members);
                }
            }
        }
        // Components come out sinks first: a component reaches a cycle when
        // it is one or points at a component that reaches one.
        let mut reaches = vec![false; components.len()];
        for (c, members) in components.iter().enumerate() {
            let cyclic = members.len() > 1 || members.iter().any(|&v| edges[v].contains(&v));
            reaches[c] = cyclic
                || members.iter().any(|&v| {
                    edges[v]
                        .iter()
                        .any(|&w| component[w] != c && reaches[component[w]])
                });
        }
        (0..n).map(|v| reaches[component[v]]).collect()
    }

    /// Evaluates the named rule the way Magnum calls oslo.policy
    /// (`Enforcer.enforce`, not `authorize`): an unknown name is evaluated
    /// with the default rule when one is defined and is otherwise denied,
    /// without error.
    ///
    /// Fails with [`EnforceError::Scope`] when scope enforcement is on and
    /// the rule is registered with scope types that do not include the
    /// caller's token scope, and with [`EnforceError::Eval`] when
    /// oslo.policy would raise an exception.
    pub fn enforce(
        &self,
        rule: &str,
        target: &Target,
        creds: &Credentials,
    ) -> Result<bool, EnforceError> {
        let exact = self.index.get(rule).copied();
        let Some(slot) = exact.or(self.default_slot) else {
            return Ok(false);
        };
        let mut ev = Eval::new(&self.rules, target, creds);
        // oslo checks the scope of registered rules only, not of the
        // default fallback.
        if self.enforce_scope
            && let Some(reg) = exact.and_then(|i| self.rules[i].registered)
            && let Some(reg) = self.defaults.get(reg)
            && !reg.scope_types.is_empty()
        {
            let scope = ev.token_scope();
            if !reg.scope_types.iter().any(|s| s == scope) {
                return Err(EnforceError::Scope(InvalidScope {
                    rule: rule.to_owned(),
                    check_string: reg.check_string.clone(),
                    scope_types: reg.scope_types.clone(),
                    token_scope: scope,
                }));
            }
        }
        ev.rule(slot).map_err(|error| {
            EnforceError::Eval(EvalError {
                rule: rule.to_owned(),
                error,
            })
        })
    }

    /// Magnum's `policy.enforce` with `do_raise`: `Ok` when the rule
    /// allows; [`Denied`] when it denies, when the token scope is invalid or
    /// when oslo.policy would raise (all 403 in Magnum). `None` as target is
    /// the caller's own project and user, as in Magnum
    /// (`magnum/common/policy.py`); pass an empty map for "no target".
    pub fn authorize(
        &self,
        rule: &str,
        target: Option<&Target>,
        creds: &Credentials,
    ) -> Result<(), Denied> {
        let caller;
        let target = match target {
            Some(t) => t,
            None => {
                caller = caller_target(creds);
                &caller
            }
        };
        let reason = match self.enforce(rule, target, creds) {
            Ok(true) => return Ok(()),
            Ok(false) => DenyReason::Rule,
            Err(EnforceError::Scope(s)) => DenyReason::Scope(s),
            Err(EnforceError::Eval(e)) => DenyReason::Error(e),
        };
        Err(Denied {
            rule: rule.to_owned(),
            reason,
        })
    }

    /// Evaluates an ad-hoc check string against the loaded rules; no scope
    /// applies, as when oslo's `enforce` is given a check object. A string
    /// that does not parse denies with [`CheckError::Parse`].
    pub fn check(
        &self,
        check_string: &str,
        target: &Target,
        creds: &Credentials,
    ) -> Result<bool, CheckError> {
        let (mut check, parse_error) = parse_text(check_string);
        let lookup = |name: &str| match self.index.get(name).copied().or(self.default_slot) {
            Some(i) => Slot::Index(i),
            None => Slot::Missing,
        };
        check.resolve(&lookup);
        let mut ev = Eval::new(&self.rules, target, creds);
        let ok = ev.check(&check).map_err(|error| {
            CheckError::Eval(EvalError {
                rule: check_string.to_owned(),
                error,
            })
        })?;
        match parse_error {
            Some(e) if e.rule == check_string => Err(CheckError::Parse(e)),
            _ => Ok(ok),
        }
    }

    /// Magnum's `check_is_admin`: `context_is_admin` with an empty target,
    /// never failing.
    pub fn is_admin(&self, creds: &Credentials) -> bool {
        matches!(
            self.enforce("context_is_admin", &Target::new(), creds),
            Ok(true)
        )
    }

    /// The registered defaults, in registration order.
    pub fn rules(&self) -> &[Rule] {
        &self.defaults
    }

    /// The registered default of that name.
    pub fn registered(&self, name: &str) -> Option<&Rule> {
        self.defaults.iter().find(|r| r.name == name)
    }

    /// The rule names read from the policy files, with the file each came
    /// from.
    pub fn overrides(&self) -> &BTreeMap<String, PathBuf> {
        &self.origins
    }

    /// The check enforced for a rule name, in oslo's canonical form (`""`
    /// for the empty rule), if the name is defined.
    pub fn effective_rule(&self, name: &str) -> Option<String> {
        let r = &self.rules[*self.index.get(name)?];
        Some(match r.check {
            Check::True => String::new(),
            ref c => c.to_string(),
        })
    }

    /// Whether some rule refers to `name` with a `rule:` check.
    pub fn is_referenced(&self, name: &str) -> bool {
        let mut found = false;
        for r in &self.rules {
            r.check.for_each_ref(&mut |rr| found |= rr.name == name);
        }
        found
    }

    /// The name unknown rules fall back to (`policy_default_rule`).
    pub fn default_rule(&self) -> &str {
        &self.default_rule
    }

    /// What oslo.policy would have logged while loading the rules.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

/// The target Magnum uses when a handler passes none:
/// `{"project_id": <caller's project>, "user_id": <caller's user>}`.
pub fn caller_target(creds: &Credentials) -> Target {
    let mut t = Target::new();
    for key in ["project_id", "user_id"] {
        t.insert(
            key.to_owned(),
            creds.get(key).cloned().unwrap_or(Value::Null),
        );
    }
    t
}

/// oslo's `_handle_deprecated_rule`: the check a registered rule gets when
/// the policy files do not override it.
fn default_check(
    d: &Rule,
    file: &FileRules,
    enforce_new_defaults: bool,
    warnings: &mut Vec<Warning>,
) -> Check {
    let (check, err) = parse_text(&d.check_string);
    note_parse(warnings, &d.name, err);
    let Some(dep) = &d.deprecated else {
        return check;
    };
    let (deprecated, err) = parse_text(&dep.check_string);
    note_parse(warnings, &dep.name, err);
    if dep.name != d.name
        && let Some(file_check) = file.get(&dep.name)
    {
        warnings.push(Warning::DeprecatedOverride {
            deprecated: dep.name.clone(),
            replacement: d.name.clone(),
        });
        // An override of the old name that is neither the old default nor
        // an alias of the new name keeps applying to the new name.
        if !file_check.same(&deprecated) && file_check.to_string() != format!("rule:{}", d.name) {
            return file_check.clone();
        }
    }
    if !enforce_new_defaults && dep.check_string != d.check_string {
        return Check::Or(vec![check, deprecated]);
    }
    check
}

fn note_parse(warnings: &mut Vec<Warning>, policy: &str, err: Option<ParseError>) {
    if let Some(error) = err {
        warnings.push(Warning::Unparsable {
            policy: policy.to_owned(),
            error,
        });
    }
}

/// The files of a policy directory, in name order (oslo walks one level,
/// skips sub-directories and names starting with `.`). A missing directory
/// has none.
fn policy_dir_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let read_dir_error = |source| LoadError::ReadDirectory {
        path: dir.to_owned(),
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(read_dir_error(e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(read_dir_error)?;
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let path = entry.path();
        // os.walk follows symbolic links to tell directories from files.
        if std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        files.push((name, path));
    }
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// Reads one policy file on top of the rules read so far.
fn load_file(
    path: &Path,
    file: &mut FileRules,
    warnings: &mut Vec<Warning>,
) -> Result<(), LoadError> {
    let data = std::fs::read(path).map_err(|source| LoadError::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    let text = String::from_utf8(data).map_err(|_| LoadError::ParseFile {
        path: path.to_owned(),
        message: "the file is not UTF-8 text".to_owned(),
    })?;
    let doc = parse_document(&text).map_err(|e| match e {
        DocumentError::Syntax(message) => LoadError::ParseFile {
            path: path.to_owned(),
            message,
        },
        DocumentError::NotAMapping => LoadError::NotAMapping {
            path: path.to_owned(),
        },
    })?;
    let Document::Rules(entries) = doc else {
        return Ok(());
    };
    for (name, value) in entries {
        let (check, err) = parse_value(&value).map_err(|message| LoadError::BadRule {
            path: path.to_owned(),
            name: name.clone(),
            message,
        })?;
        note_parse(warnings, &name, err);
        if check.has_remote() {
            warnings.push(Warning::RemoteCheck {
                policy: name.clone(),
            });
        }
        file.insert(name, check, path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Credentials {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    fn enforcer(opts: Options) -> Enforcer {
        match Enforcer::new(opts) {
            Ok(e) => e,
            Err(e) => panic!("{e}"),
        }
    }

    fn with_defaults(defaults: Vec<Rule>) -> Options {
        Options {
            defaults,
            enforce_scope: false,
            enforce_new_defaults: false,
            ..Options::default()
        }
    }

    fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
        let p = dir.join(name);
        if let Err(e) = std::fs::write(&p, content) {
            panic!("write {}: {e}", p.display());
        }
        p
    }

    fn tempdir() -> tempfile::TempDir {
        match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("tempdir: {e}"),
        }
    }

    // Port of TestEvaluationSemantics (Go).
    #[test]
    fn evaluation_semantics() {
        let e = enforcer(with_defaults(vec![
            Rule::new("loop", "rule:loop"),
            Rule::new("guarded", "role:x and rule:guarded"),
            Rule::new("short", "@ or rule:short"),
            Rule::new("a", "rule:b"),
            Rule::new("b", "role:b"),
        ]));
        let creds = map(json!({
            "user_id": "u1", "project_id": "p1", "roles": ["Admin", "member"], "is_admin": false,
            "groups": ["g1", {"name": "g2"}],
            "auth": {"project": {"id": "p1", "tags": ["t1", "t2"]}},
            "count": 3, "ratio": 1.5, "flag": true, "nothing": null, "str": "abc",
        }));
        let cases: Vec<(&str, Option<Value>, bool, bool)> = vec![
            ("", None, true, false),
            ("@", None, true, false),
            ("!", None, false, false),
            ("role:ADMIN", None, true, false),
            ("role:%(r)s", Some(json!({"r": "MEMBER"})), true, false),
            ("role:%(r)s", Some(json!({})), false, false),
            ("roles:Admin", None, true, false),
            ("roles:admin", None, false, false),
            ("groups:g1", None, true, false),
            // "g1"["name"] raises TypeError.
            ("groups.name:g2", Some(json!({})), false, true),
            (
                "auth.project.id:%(project_id)s",
                Some(json!({"project_id": "p1"})),
                true,
                false,
            ),
            ("auth.project.tags:t2", None, true, false),
            ("auth.missing.id:x", None, false, false),
            ("str.x:y", None, false, true),
            ("count:3", None, true, false),
            ("ratio:1.5", None, true, false),
            ("flag:True", None, true, false),
            ("nothing:None", None, true, false),
            ("is_admin:False", None, true, false),
            ("True:%(v)s", Some(json!({"v": true})), true, false),
            ("True:%(v)s", Some(json!({"v": "True"})), true, false),
            ("'abc':%(v)s", Some(json!({"v": "abc"})), true, false),
            ("0x10:%(v)s", Some(json!({"v": 16})), true, false),
            ("1e3:%(v)s", Some(json!({"v": "1000.0"})), true, false),
            ("-5:%(v)s", Some(json!({"v": -5})), true, false),
            ("None:%(v)s", Some(json!({"v": null})), true, false),
            (
                "user_id:%(target.user.id)s",
                Some(json!({"target.user.id": "u1"})),
                true,
                false,
            ),
            ("user_id:%(v)s", Some(json!({"v": ["u1"]})), false, false),
            ("str:%(v)s%%", Some(json!({"v": "abc"})), false, false),
            ("str:%(v)s", Some(json!({"v": "abc"})), true, false),
            ("str:%(v)5s", Some(json!({"v": "abc"})), false, false),
            ("count:%(v)d", Some(json!({"v": 3.9})), true, false),
            ("count:%(v)d", Some(json!({"v": "3"})), false, true),
            ("str:%(v)-", Some(json!({"v": "abc"})), false, true),
            ("str:%(missing)-", Some(json!({})), false, false),
            // Go failed closed here; Python formats the whole target:
            // "%s" % {} is "{}", which is not "abc".
            ("str:%s", Some(json!({})), false, false),
            ("str:%s", Some(json!({"x": 1})), false, false),
            ("str:%s%s", Some(json!({})), false, true),
            ("01:x", None, false, true),
            ("if:x", None, false, true),
            ("rule:loop", None, false, true),
            ("rule:guarded", None, false, false),
            ("rule:short", None, true, false),
            ("rule:a", None, false, false),
            ("rule:undefined", None, false, false),
            ("http://example.com", None, false, false),
            ("not http://example.com", None, true, false),
        ];
        for (check, target, want, want_err) in cases {
            let target = target.map(map).unwrap_or_default();
            let got = e.check(check, &target, &creds);
            match got {
                Ok(ok) if !want_err => assert_eq!(ok, want, "check({check:?})"),
                Err(CheckError::Eval(_)) if want_err => {}
                other => panic!("check({check:?}) = {other:?}, want error {want_err}"),
            }
        }
    }

    // Port of TestRolesShapes (Go).
    #[test]
    fn roles_shapes() {
        let e = enforcer(with_defaults(vec![]));
        let cases = [
            ("list of strings", json!(["a", "Admin"]), true, false),
            (
                "non-string element raises even after a match",
                json!(["admin", 1]),
                false,
                true,
            ),
            (
                "a string is iterated by character",
                json!("admin"),
                false,
                false,
            ),
            ("a string of one role character", json!("xad"), false, false),
            ("None raises", json!(null), false, true),
            (
                "a mapping is iterated by key",
                json!({"Admin": 1}),
                true,
                false,
            ),
            ("full Unicode lower-casing", json!(["AD", "İ"]), true, false),
        ];
        for (name, roles, want, want_err) in cases {
            let mut creds = Credentials::new();
            creds.insert("roles".into(), roles);
            match e.check("role:admin or role:ad", &Target::new(), &creds) {
                Ok(ok) if !want_err => assert_eq!(ok, want, "{name}"),
                Err(CheckError::Eval(_)) if want_err => {}
                other => panic!("{name}: {other:?}"),
            }
        }
        let mut creds = Credentials::new();
        creds.insert("roles".into(), json!("xai"));
        assert_eq!(e.check("role:A", &Target::new(), &creds), Ok(true));
    }

    // Port of TestPolicyDirs (Go).
    #[test]
    fn policy_dirs_apply_in_name_order() {
        let dir = tempdir();
        let d = dir.path().join("policy.d");
        if let Err(e) = std::fs::create_dir(&d) {
            panic!("{e}");
        }
        let main = write(
            dir.path(),
            "policy.yaml",
            r#"{"a": "role:x", "b": "role:x"}"#,
        );
        write(&d, "10-first.yaml", r#"{"b": "role:y", "c": "role:y"}"#);
        write(&d, "20-second.json", r#"{"c": "role:z"}"#);
        write(&d, ".hidden.yaml", r#"{"a": "@"}"#);
        if let Err(e) = std::fs::create_dir(d.join("00-subdir")) {
            panic!("{e}");
        }
        let e = enforcer(Options {
            policy_file: Some(main),
            policy_dirs: vec![d.clone(), dir.path().join("absent")],
            ..with_defaults(vec![])
        });
        for (name, want) in [("a", "role:x"), ("b", "role:y"), ("c", "role:z")] {
            assert_eq!(e.effective_rule(name).as_deref(), Some(want), "{name}");
        }
        assert_eq!(e.overrides().get("c"), Some(&d.join("20-second.json")));
    }

    // Port of TestNewRejectsBadDefaults (Go).
    #[test]
    fn bad_defaults_are_refused() {
        let dup = Enforcer::new(with_defaults(vec![Rule::new("a", ""), Rule::new("a", "")]));
        assert_eq!(
            dup.err().map(|e| e.to_string()).as_deref(),
            Some("policy a is already registered")
        );
        let mut r = Rule::new("a", "");
        r.scope_types = vec!["project".into(), "project".into()];
        let scopes = Enforcer::new(with_defaults(vec![r]));
        assert_eq!(
            scopes.err().map(|e| e.to_string()).as_deref(),
            Some("policy a: scope_types must be a list of unique strings")
        );
    }

    // Port of TestHugeFormatWidth (Go).
    #[test]
    fn huge_format_widths_fail_closed() {
        let e = enforcer(with_defaults(vec![]));
        let target = map(json!({"x": 1}));
        let creds = map(json!({"x": "1"}));
        for check in [
            "x:%(x)99999999999999999999999s",
            "x:%(x).99999999999d",
            "x:%(x)5000s",
        ] {
            assert!(
                matches!(e.check(check, &target, &creds), Err(CheckError::Eval(_))),
                "{check}"
            );
        }
    }

    fn scoped(name: &str, check: &str, scopes: &[&str]) -> Rule {
        let mut r = Rule::new(name, check);
        r.scope_types = scopes.iter().map(|s| (*s).to_owned()).collect();
        r
    }

    #[test]
    fn scope_types() {
        let defaults = vec![
            scoped("p", "@", &["project"]),
            scoped("any", "@", &[]),
            scoped("s", "@", &["system", "domain"]),
        ];
        let on = enforcer(Options {
            enforce_scope: true,
            ..with_defaults(defaults.clone())
        });
        let off = enforcer(with_defaults(defaults));
        let system = map(json!({"system_scope": "all"}));
        let system_key = map(json!({"system": "all"}));
        let domain = map(json!({"domain_id": "d1"}));
        let project = map(json!({"system_scope": "", "domain_id": null}));
        let t = Target::new();
        let err = on.enforce("p", &t, &system);
        assert_eq!(
            err.map_err(|e| e.to_string()),
            Err(
                "\"p\": \"@\" requires a scope of ['project'], request was made with system scope."
                    .to_owned()
            )
        );
        assert!(
            matches!(on.enforce("p", &t, &system_key), Err(EnforceError::Scope(s)) if s.token_scope == "system")
        );
        assert!(
            matches!(on.enforce("p", &t, &domain), Err(EnforceError::Scope(s)) if s.token_scope == "domain")
        );
        assert_eq!(on.enforce("p", &t, &project), Ok(true));
        assert_eq!(on.enforce("any", &t, &system), Ok(true));
        assert_eq!(on.enforce("s", &t, &domain), Ok(true));
        assert!(matches!(
            on.enforce("s", &t, &project),
            Err(EnforceError::Scope(_))
        ));
        assert_eq!(off.enforce("p", &t, &system), Ok(true));
        // authorize maps a scope failure to the same denial.
        let denied = on.authorize("p", None, &system);
        assert!(matches!(
            &denied,
            Err(Denied {
                reason: DenyReason::Scope(_),
                ..
            })
        ));
        assert_eq!(
            denied.map_err(|e| e.to_string()),
            Err("Policy doesn't allow p to be performed.".to_owned())
        );
        // An ad-hoc check has no scope.
        assert_eq!(on.check("rule:p", &t, &system), Ok(true));
    }

    #[test]
    fn system_scope_is_copied_into_system() {
        let e = enforcer(with_defaults(vec![]));
        let creds = map(json!({"system_scope": "all", "system": "other"}));
        assert_eq!(e.check("system:all", &Target::new(), &creds), Ok(true));
        let creds = map(json!({"system_scope": "", "system": "other"}));
        assert_eq!(e.check("system:other", &Target::new(), &creds), Ok(true));
    }

    fn deprecating(name: &str, check: &str, old: &str, old_check: &str) -> Rule {
        Rule::new(name, check).replacing(DeprecatedRule::new(old, old_check))
    }

    #[test]
    fn deprecated_rules() {
        let defaults = vec![
            deprecating("new", "role:new", "old", "role:old"),
            deprecating("same_name", "role:new", "same_name", "role:old"),
            deprecating("unchanged", "role:x", "old_unchanged", "role:x"),
        ];
        let both = enforcer(with_defaults(defaults.clone()));
        let new_only = enforcer(Options {
            enforce_new_defaults: true,
            ..with_defaults(defaults.clone())
        });
        assert_eq!(
            both.effective_rule("new").as_deref(),
            Some("(role:new or role:old)")
        );
        assert_eq!(
            both.effective_rule("same_name").as_deref(),
            Some("(role:new or role:old)")
        );
        assert_eq!(both.effective_rule("unchanged").as_deref(), Some("role:x"));
        assert_eq!(new_only.effective_rule("new").as_deref(), Some("role:new"));

        let dir = tempdir();
        // An override of the old name replaces the new rule, unless it is
        // the old default or an alias of the new name.
        for (content, want_new) in [
            (r#"{"old": "role:legacy"}"#, "role:legacy"),
            (r#"{"old": "role:old"}"#, "(role:new or role:old)"),
            (r#"{"old": "rule:new"}"#, "(role:new or role:old)"),
            (r#"{"old": "role:legacy", "new": "role:mine"}"#, "role:mine"),
        ] {
            let p = write(dir.path(), "deprecated.yaml", content);
            let e = enforcer(Options {
                policy_file: Some(p),
                ..with_defaults(defaults.clone())
            });
            assert_eq!(
                e.effective_rule("new").as_deref(),
                Some(want_new),
                "{content}"
            );
            // oslo warns only when it builds the default (not overridden).
            let warned = e.warnings().contains(&Warning::DeprecatedOverride {
                deprecated: "old".into(),
                replacement: "new".into(),
            });
            assert_eq!(warned, !content.contains("\"new\""), "{content}");
        }
    }

    // The file-handling parts of TestPolicyFile (Go) that need no Magnum
    // rule.
    #[test]
    fn policy_files() {
        let dir = tempdir();
        let p = write(
            dir.path(),
            "policy.yaml",
            "\"a\": \"role:auditor\"\n\"default\": \"role:member\"\n\"custom\": \"rule:a or @\"\n",
        );
        let e = enforcer(Options {
            policy_file: Some(p.clone()),
            ..with_defaults(vec![Rule::new("a", "role:admin")])
        });
        let auditor = map(json!({"roles": ["auditor"]}));
        let member = map(json!({"roles": ["member"]}));
        let t = Target::new();
        assert_eq!(e.enforce("a", &t, &auditor), Ok(true));
        assert_eq!(e.enforce("no:such:rule", &t, &member), Ok(true));
        assert_eq!(e.enforce("no:such:rule", &t, &auditor), Ok(false));
        assert_eq!(e.enforce("custom", &t, &Credentials::new()), Ok(true));
        assert_eq!(e.overrides().len(), 3);
        assert_eq!(e.overrides().get("a"), Some(&p));

        // Without a default rule, unknown names deny.
        let e = enforcer(Options {
            policy_file: Some(p.clone()),
            default_rule: String::new(),
            ..with_defaults(vec![])
        });
        assert_eq!(e.enforce("no:such:rule", &t, &member), Ok(false));

        for (i, content) in ["# nothing\n", "[]\n", "{}\n", "false\n", "0\n"]
            .iter()
            .enumerate()
        {
            let p = write(dir.path(), &format!("empty-{i}.yaml"), content);
            let e = enforcer(Options {
                policy_file: Some(p),
                ..with_defaults(vec![])
            });
            assert!(e.overrides().is_empty(), "{content:?}");
        }

        let p = write(
            dir.path(),
            "malformed-rule.yaml",
            "\"a\": \"role:admin and\"",
        );
        let e = enforcer(Options {
            policy_file: Some(p),
            ..with_defaults(vec![Rule::new("a", "@")])
        });
        assert_eq!(
            e.enforce("a", &t, &map(json!({"roles": ["admin"]}))),
            Ok(false)
        );
        assert!(matches!(e.warnings(), [Warning::Unparsable { policy, .. }] if policy == "a"));

        for (name, content, want) in [
            ("malformed yaml", "\"a\": [\n", "malformed yaml.yaml"),
            ("not a mapping", "- a\n- b\n", "not a mapping"),
            (
                "a rule that is a number",
                "\"cluster:get\": 3\n",
                "rule \"cluster:get\"",
            ),
        ] {
            let p = write(dir.path(), &format!("{name}.yaml"), content);
            let err = Enforcer::new(Options {
                policy_file: Some(p.clone()),
                ..with_defaults(vec![])
            });
            let msg = err.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                msg.contains(&p.display().to_string()) && msg.contains(want),
                "{name}: {msg}"
            );
        }

        let missing = dir.path().join("missing.yaml");
        let err = Enforcer::new(Options {
            policy_file: Some(missing.clone()),
            ..with_defaults(vec![])
        });
        assert!(err.as_ref().is_err_and(
            |e| e.is_not_found() && e.to_string().contains(&missing.display().to_string())
        ));
        assert!(
            Enforcer::new(Options {
                policy_file: Some(missing),
                policy_file_optional: true,
                ..with_defaults(vec![])
            })
            .is_ok()
        );
    }

    #[test]
    fn load_warnings() {
        let dir = tempdir();
        let p = write(
            dir.path(),
            "p.yaml",
            "a: rule:b\nb: rule:a\nc: rule:nowhere\nd: http://x\ne: rule:a\nf: admin or role:x\ng: role:same\n",
        );
        let e = enforcer(Options {
            policy_file: Some(p),
            ..with_defaults(vec![Rule::new("g", "role:same")])
        });
        let w = e.warnings();
        assert!(w.contains(&Warning::RemoteCheck { policy: "d".into() }));
        assert!(w.contains(&Warning::Undefined {
            policies: vec!["c".into()]
        }));
        assert!(w.contains(&Warning::Cyclic {
            policies: vec!["a".into(), "b".into(), "e".into()]
        }));
        assert!(w.contains(&Warning::Redundant {
            policies: vec!["g".into()]
        }));
        assert!(w.iter().any(|w| matches!(w, Warning::Unparsable { policy, error } if policy == "f" && error.rule == "admin")));
        assert!(e.is_referenced("b") && !e.is_referenced("g"));
    }

    #[test]
    fn long_reference_chains_do_not_exhaust_the_stack() {
        let defaults: Vec<Rule> = (0..5000)
            .map(|i| Rule::new(format!("r{i}"), format!("rule:r{}", i + 1)))
            .chain([Rule::new("r5000", "rule:r0")])
            .collect();
        let e = enforcer(with_defaults(defaults));
        assert!(matches!(e.warnings(), [Warning::Cyclic { policies }] if policies.len() == 5001));
        assert!(matches!(
            e.enforce("r0", &Target::new(), &Credentials::new()),
            Err(EnforceError::Eval(_))
        ));
    }

    #[test]
    fn caller_target_and_is_admin() {
        let e = enforcer(with_defaults(vec![Rule::new(
            "context_is_admin",
            "role:admin",
        )]));
        assert!(e.is_admin(&map(json!({"roles": ["Admin"]}))));
        assert!(!e.is_admin(&map(json!({"roles": null}))));
        assert_eq!(
            Value::Object(caller_target(&map(json!({"project_id": "p", "roles": []})))),
            json!({"project_id": "p", "user_id": null})
        );
    }
}

#[cfg(test)]
mod depth_tests {
    use super::*;

    /// The deepest rule that parses evaluates on a test thread's stack
    /// (2 MiB) without overflowing; deeper evaluations raise.
    #[test]
    fn deep_rules_stay_on_the_stack() {
        let e = match Enforcer::new(Options {
            defaults: vec![Rule::new("a", "rule:b"), Rule::new("b", "@")],
            ..Options::default()
        }) {
            Ok(e) => e,
            Err(e) => panic!("{e}"),
        };
        let t = Target::new();
        let c = Credentials::new();
        let nots = format!("{}rule:a", "not ".repeat(990));
        assert_eq!(e.check(&nots, &t, &c), Ok(true));
        // Each level adds an and and an or.
        let nest = |levels: u32| {
            let mut nested = "rule:a".to_owned();
            for _ in 0..levels {
                nested = format!("(! or ({nested} and @))");
            }
            nested
        };
        let fits = nest(crate::check::MAX_NESTING / 2 - 10);
        assert_eq!(crate::check::parse_rule(&fits).error, None);
        assert_eq!(e.check(&fits, &t, &c), Ok(true));
        let deeper = nest(crate::check::MAX_NESTING / 2 + 1);
        assert_eq!(crate::check::parse_rule(&deeper).canonical, "!");
        assert!(matches!(
            e.check(&deeper, &t, &c),
            Err(CheckError::Parse(_))
        ));
        let too_deep = format!("{}@", "not ".repeat(1000));
        assert!(matches!(
            e.check(&too_deep, &t, &c),
            Err(CheckError::Eval(_))
        ));
    }
}
