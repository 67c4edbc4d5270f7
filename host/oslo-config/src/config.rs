//! A loaded configuration: the files merged the way oslo.config merges
//! them, every registered option converted, `$name` substitution applied.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use crate::ini;
use crate::schema::{Key, Opt, Schema};
use crate::types::Value;

/// A value that does not fit its option's type or constraints, or whose
/// substitution fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError {
    /// The option.
    pub key: Key,
    /// What is wrong; it quotes the value unless the option is secret.
    pub reason: String,
    /// Where the value comes from; `None` for a default.
    pub location: Option<Source>,
}

/// `invalid value for [group]/name: reason (file:line)`.
impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid value for {}: {}", self.key, self.reason)?;
        match &self.location {
            None | Some(Source::Default) => Ok(()),
            Some(Source::Environment { variable }) => {
                write!(f, " (environment variable {variable})")
            }
            Some(source) => write!(f, " ({source})"),
        }
    }
}

impl std::error::Error for ValueError {}

/// Something in a file that is accepted but deserves the operator's
/// attention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The file.
    pub file: String,
    /// The 1-based line.
    pub line: usize,
    /// What it is.
    pub kind: WarningKind,
}

/// The kinds of [`Warning`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WarningKind {
    /// A group no option is registered in (reported once per group).
    UnknownGroup(String),
    /// An option not registered in a known group.
    UnknownOption(Key),
    /// A deprecated name, and the current one.
    Deprecated {
        /// The name used.
        old: Key,
        /// The name to use.
        new: Key,
    },
    /// An option accepted without effect, and why.
    Ignored {
        /// The option.
        key: Key,
        /// Why it has no effect.
        reason: String,
    },
}

/// `file:line: message`.
impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.file, self.line)?;
        match &self.kind {
            WarningKind::UnknownGroup(g) => write!(f, "unknown group [{g}]"),
            WarningKind::UnknownOption(k) => write!(f, "unknown option {k}"),
            WarningKind::Deprecated { old, new } => {
                write!(f, "option {old} is deprecated, use {new}")
            }
            WarningKind::Ignored { key, reason } => write!(f, "option {key} is ignored: {reason}"),
        }
    }
}

/// Where an option's value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The option's default.
    Default,
    /// A file (the last assignment that counts).
    File {
        /// The file.
        file: String,
        /// The 1-based line.
        line: usize,
    },
    /// An environment variable (`OS_<GROUP>__<NAME>`), which oslo.config
    /// reads before the files.
    Environment {
        /// The variable.
        variable: String,
    },
}

/// `default`, `file:line` or `OS_GROUP__NAME`.
impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File { file, line } => write!(f, "{file}:{line}"),
            Source::Environment { variable } => f.write_str(variable),
        }
    }
}

/// The environment variable oslo.config reads for an option:
/// `OS_<GROUP>__<NAME>`, upper-cased.
pub fn environment_variable(group: &str, name: &str) -> String {
    format!("OS_{}__{}", group.to_uppercase(), name.to_uppercase())
}

/// One assignment kept for resolution.
#[derive(Clone, Debug)]
struct Assigned {
    value: String,
    line: usize,
}

/// A file's assignments, by normalised group and key, in file order.
#[derive(Clone, Debug)]
struct Parsed {
    name: String,
    values: HashMap<Key, Vec<Assigned>>,
}

/// The result of resolving one option.
#[derive(Clone, Debug)]
struct Resolved {
    value: Result<Value, ValueError>,
    source: Source,
    /// Whether the value came from or through a secret option.
    secret: bool,
}

/// A configuration: every registered option's value (or error) and the
/// files it was read from. Immutable; share it behind an `Arc`. `Debug`
/// shows no value (values may be secrets).
#[derive(Clone)]
pub struct Config {
    schema: Arc<Schema>,
    files: Vec<Parsed>,
    /// By option index: the environment variable that sets it, and its value.
    env: HashMap<usize, (String, String)>,
    resolved: Vec<Resolved>,
}

/// The longest value after substitution, so that options referencing each
/// other several times cannot grow without limit.
const MAX_VALUE_LEN: usize = 1 << 16;

impl Config {
    /// Merges parsed files (in load order: later files win) into a
    /// configuration of `schema`, returning the warnings too. It fails with
    /// every invalid value of a checked option.
    pub fn from_files(
        schema: Arc<Schema>,
        files: Vec<ini::File>,
    ) -> Result<(Config, Vec<Warning>), Vec<ValueError>> {
        Config::from_sources(schema, files, std::iter::empty())
    }

    /// Like [`Config::from_files`], with environment variables: an
    /// option's `OS_<GROUP>__<NAME>` variable (its current name only) wins
    /// over the files, as in oslo.config. Other variables are ignored.
    pub fn from_sources(
        schema: Arc<Schema>,
        files: Vec<ini::File>,
        environment: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(Config, Vec<Warning>), Vec<ValueError>> {
        let vars: HashMap<String, String> = environment
            .into_iter()
            .filter(|(k, _)| k.starts_with("OS_"))
            .collect();
        let mut env = HashMap::new();
        if !vars.is_empty() {
            for (i, o) in schema.opts().iter().enumerate() {
                let variable = environment_variable(&o.group, &o.name);
                if let Some(v) = vars.get(&variable) {
                    env.insert(i, (variable, v.clone()));
                }
            }
        }
        let mut warnings = Vec::new();
        let mut seen_groups = HashSet::new();
        let mut parsed = Vec::with_capacity(files.len());
        for file in files {
            let mut values: HashMap<Key, Vec<Assigned>> = HashMap::new();
            for e in file.entries {
                let key = Key::new(e.group, e.key);
                warnings.extend(warning_for(
                    &schema,
                    &file.name,
                    e.line,
                    &key,
                    &mut seen_groups,
                ));
                values.entry(key).or_default().push(Assigned {
                    value: e.value,
                    line: e.line,
                });
            }
            parsed.push(Parsed {
                name: file.name,
                values,
            });
        }
        let mut resolver = Resolver {
            schema: &schema,
            files: &parsed,
            env: &env,
            done: vec![None; schema.opts().len()],
            busy: vec![false; schema.opts().len()],
        };
        for i in 0..schema.opts().len() {
            resolver.resolve(i);
        }
        let resolved: Vec<Resolved> = resolver
            .done
            .into_iter()
            .map(|r| {
                r.unwrap_or(Resolved {
                    value: Ok(Value::None),
                    source: Source::Default,
                    secret: false,
                })
            })
            .collect();
        let mut errors: Vec<ValueError> = Vec::new();
        for (opt, r) in schema.opts().iter().zip(&resolved) {
            if let (true, Err(e)) = (opt.checked, &r.value)
                && !errors.contains(e)
            {
                errors.push(e.clone());
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok((
            Config {
                schema,
                files: parsed,
                env,
                resolved,
            },
            warnings,
        ))
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The files read, in load order.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| f.name.as_str())
    }

    /// The value of a registered option, or why it is invalid (only an
    /// unchecked option can be invalid in a loaded configuration); `None`
    /// when no such option is registered.
    pub fn get(&self, group: &str, name: &str) -> Option<Result<&Value, &ValueError>> {
        let i = self.schema.position(&Key::new(group, name))?;
        Some(self.resolved[i].value.as_ref())
    }

    /// Where the value of a registered option comes from.
    pub fn source(&self, group: &str, name: &str) -> Option<&Source> {
        let i = self.schema.position(&Key::new(group, name))?;
        Some(&self.resolved[i].source)
    }

    /// The last value the files set for `group`/`name` (the group is
    /// normalised like a section name), registered or not, with `$name`
    /// substitution applied when it succeeds and the raw text otherwise.
    /// Deprecated names are followed. `None` when no file sets it.
    pub fn lookup(&self, group: &str, name: &str) -> Option<String> {
        let group = ini::normalize_group(group);
        let key = Key::new(group.clone(), name);
        if let Some((_, v)) = self.env_of(&key) {
            return Some(self.substituted(&group, v));
        }
        let (raw, _) = last_value(&self.files, &self.names_of(&key))?;
        Some(self.substituted(&group, &raw.value))
    }

    /// `raw` with `$name` substitution applied in `group`, or as it is when
    /// the substitution fails (what a lookup of an unchecked value shows).
    fn substituted(&self, group: &str, raw: &str) -> String {
        Substitution {
            config: self,
            group,
        }
        .apply(raw)
        .unwrap_or_else(|| raw.to_owned())
    }

    /// The open groups whose name starts with `prefix` (see
    /// [`Schema::open_group_prefix`]), by group: each key the files set, in
    /// key order, with its last value (substituted like
    /// [`Config::lookup`]) and where it was set (`file:line`).
    pub fn open_groups(&self, prefix: &str) -> BTreeMap<String, Vec<(String, String, String)>> {
        let mut keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in &self.files {
            for k in f.values.keys() {
                if k.group.len() > prefix.len()
                    && k.group.starts_with(prefix)
                    && self.schema.is_open_group(&k.group)
                {
                    keys.entry(k.group.clone())
                        .or_default()
                        .insert(k.name.clone());
                }
            }
        }
        keys.into_iter()
            .map(|(group, names)| {
                let entries = names
                    .into_iter()
                    .filter_map(|name| {
                        let key = Key::new(group.clone(), name.clone());
                        let (raw, file) = last_value(&self.files, std::slice::from_ref(&key))?;
                        let value = self.substituted(&group, &raw.value);
                        Some((name, value, format!("{file}:{}", raw.line)))
                    })
                    .collect();
                (group, entries)
            })
            .collect()
    }

    /// The environment variable setting the option `key` names, if any.
    fn env_of(&self, key: &Key) -> Option<&(String, String)> {
        let (i, _) = self.schema.resolve(key)?;
        self.env.get(&i)
    }

    /// Every value the files set for `group`/`name`, in the order a
    /// multi-valued option sees them, substituted like [`Config::lookup`].
    pub fn lookup_all(&self, group: &str, name: &str) -> Vec<String> {
        let group = ini::normalize_group(group);
        let key = Key::new(group.clone(), name);
        if let Some((_, v)) = self.env_of(&key) {
            return vec![self.substituted(&group, v)];
        }
        all_values(&self.files, &self.names_of(&key))
            .into_iter()
            .map(|(a, _)| self.substituted(&group, &a.value))
            .collect()
    }

    /// Every registered option in registration order with its value as a
    /// file would write it (`<None>` for none, `****` for a secret that is
    /// set, the error for an invalid unchecked option) and its source.
    pub fn effective(&self) -> Vec<EffectiveOption> {
        self.schema
            .opts()
            .iter()
            .zip(&self.resolved)
            .map(|(opt, r)| {
                let value = match &r.value {
                    Ok(Value::None) => Value::None.to_string(),
                    Ok(_) if opt.secret || r.secret => MASK.to_owned(),
                    Ok(v) => v.to_string(),
                    Err(e) => format!("<invalid: {}>", e.reason),
                };
                EffectiveOption {
                    key: opt.key(),
                    value,
                    source: r.source.clone(),
                }
            })
            .collect()
    }

    fn names_of(&self, key: &Key) -> Vec<Key> {
        match self.schema.resolve(key) {
            Some((i, _)) => names(&self.schema.opts()[i]),
            None => vec![key.clone()],
        }
    }

    /// The substitution text of a registered option, and whether it is
    /// secret.
    fn text_of(&self, i: usize) -> Result<(String, bool), Failure> {
        let r = &self.resolved[i];
        match &r.value {
            Ok(v) => Ok((v.python_str(), r.secret || self.schema.opts()[i].secret)),
            Err(e) => Err(Failure::Value(e.clone())),
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files: Vec<&str> = self.files().collect();
        f.debug_struct("Config")
            .field("files", &files)
            .field("options", &self.resolved.len())
            .finish_non_exhaustive()
    }
}

/// What [`Config::effective`] shows for a secret that is set.
pub const MASK: &str = "****";

/// One row of [`Config::effective`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveOption {
    /// The option.
    pub key: Key,
    /// The value as a file would write it, or [`MASK`].
    pub value: String,
    /// Where it comes from.
    pub source: Source,
}

/// The warning for an assignment, if any.
fn warning_for(
    schema: &Schema,
    file: &str,
    line: usize,
    key: &Key,
    seen_groups: &mut HashSet<String>,
) -> Option<Warning> {
    let warn = |kind| {
        Some(Warning {
            file: file.to_owned(),
            line,
            kind,
        })
    };
    if schema.is_open_group(&key.group) {
        return None;
    }
    match schema.resolve(key) {
        Some((i, rank)) => {
            let opt = &schema.opts()[i];
            if rank > 0 {
                return warn(WarningKind::Deprecated {
                    old: key.clone(),
                    new: opt.key(),
                });
            }
            match &opt.ignored {
                Some(reason) => warn(WarningKind::Ignored {
                    key: opt.key(),
                    reason: reason.clone(),
                }),
                None => None,
            }
        }
        None if !schema.has_group(&key.group) => {
            if seen_groups.insert(key.group.clone()) {
                warn(WarningKind::UnknownGroup(key.group.clone()))
            } else {
                None
            }
        }
        None => warn(WarningKind::UnknownOption(key.clone())),
    }
}

/// The names an option is read under: its own, then its deprecated ones.
fn names(opt: &Opt) -> Vec<Key> {
    let mut out = vec![opt.key()];
    out.extend(opt.deprecated.iter().cloned());
    out
}

/// The value a single-valued option sees: in the last file setting any of
/// its names, the last value of the first name (current before deprecated)
/// that file sets — oslo.config's `_Namespace._get_file_value`.
fn last_value<'a>(files: &'a [Parsed], names: &[Key]) -> Option<(&'a Assigned, &'a str)> {
    files.iter().rev().find_map(|f| {
        names
            .iter()
            .find_map(|n| f.values.get(n))
            .and_then(|values| values.last())
            .map(|a| (a, f.name.as_str()))
    })
}

/// The values a multi-valued option sees: every file in load order; within
/// a file, the values of its deprecated names (last name first) before
/// those of its current name, as oslo.config prepends them.
fn all_values<'a>(files: &'a [Parsed], names: &[Key]) -> Vec<(&'a Assigned, &'a str)> {
    let mut out = Vec::new();
    for f in files {
        for n in names.iter().rev() {
            if let Some(values) = f.values.get(n) {
                out.extend(values.iter().map(|a| (a, f.name.as_str())));
            }
        }
    }
    out
}

/// Why a substitution failed.
#[derive(Clone, Debug)]
enum Failure {
    /// A referenced option is itself invalid: its error is reported.
    Value(ValueError),
    /// The template is wrong (unknown name, loop, too long).
    Template(String),
}

/// Where substitutions look names up: the resolver while loading, the
/// loaded configuration afterwards.
trait Texts {
    fn schema(&self) -> &Schema;
    fn text(&mut self, i: usize) -> Result<(String, bool), Failure>;
}

impl Texts for &Config {
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn text(&mut self, i: usize) -> Result<(String, bool), Failure> {
        self.text_of(i)
    }
}

/// Resolves options on demand, with loops detected and results memoised.
struct Resolver<'a> {
    schema: &'a Schema,
    files: &'a [Parsed],
    env: &'a HashMap<usize, (String, String)>,
    done: Vec<Option<Resolved>>,
    busy: Vec<bool>,
}

impl Texts for Resolver<'_> {
    fn schema(&self) -> &Schema {
        self.schema
    }
    fn text(&mut self, i: usize) -> Result<(String, bool), Failure> {
        let opt_secret = self.schema.opts()[i].secret;
        let r = self.resolve(i);
        let secret = r.secret || opt_secret;
        match &r.value {
            Ok(v) => Ok((v.python_str(), secret)),
            Err(e) => Err(Failure::Value(e.clone())),
        }
    }
}

impl<'a> Resolver<'a> {
    fn resolve(&mut self, i: usize) -> &Resolved {
        if self.done[i].is_none() {
            let r = self.compute(i);
            self.done[i] = Some(r);
        }
        match &self.done[i] {
            Some(r) => r,
            None => unreachable!("resolved just above"),
        }
    }

    fn compute(&mut self, i: usize) -> Resolved {
        let schema: &'a Schema = self.schema;
        let opt = &schema.opts()[i];
        let key = opt.key();
        if self.busy[i] {
            return Resolved {
                value: Err(ValueError {
                    key,
                    reason: "template substitution error: recursive reference".to_owned(),
                    location: None,
                }),
                source: Source::Default,
                secret: opt.secret,
            };
        }
        self.busy[i] = true;
        let r = match self.env.get(&i) {
            Some((variable, value)) => self.environment_value(opt, key, variable, value),
            None => self.compute_unguarded(opt, key),
        };
        self.busy[i] = false;
        r
    }

    fn compute_unguarded(&mut self, opt: &'a Opt, key: Key) -> Resolved {
        let names = names(opt);
        let group = opt.group.clone();
        if opt.ty.is_multi() {
            let values = all_values(self.files, &names);
            if values.is_empty() {
                return self.default_value(opt, key);
            }
            let source = values
                .last()
                .map_or(Source::Default, |(a, f)| Source::File {
                    file: (*f).to_owned(),
                    line: a.line,
                });
            let mut items = Vec::with_capacity(values.len());
            let mut secret = false;
            for (a, file) in values {
                match substitute(self, &a.value, &group) {
                    Ok((s, tainted)) => {
                        secret |= tainted;
                        items.push(s);
                    }
                    Err(f) => {
                        return Resolved {
                            value: Err(substitution_error(
                                opt,
                                key,
                                f,
                                Some(Source::File {
                                    file: file.to_owned(),
                                    line: a.line,
                                }),
                            )),
                            source,
                            secret,
                        };
                    }
                }
            }
            return Resolved {
                value: Ok(Value::List(items)),
                source,
                secret,
            };
        }
        let Some((a, file)) = last_value(self.files, &names) else {
            return self.default_value(opt, key);
        };
        let source = Source::File {
            file: file.to_owned(),
            line: a.line,
        };
        self.converted(opt, key, &a.value, source)
    }

    /// A value set in a file or the environment, at `source`: substituted,
    /// then converted to the option's type. Errors name `source`.
    fn converted(&mut self, opt: &Opt, key: Key, raw: &str, source: Source) -> Resolved {
        let location = Some(source.clone());
        let (text, secret) = match substitute(self, raw, &opt.group) {
            Ok(t) => t,
            Err(f) => {
                return Resolved {
                    value: Err(substitution_error(opt, key, f, location)),
                    source,
                    secret: opt.secret,
                };
            }
        };
        let value = opt
            .ty
            .convert(&text, opt.secret || secret)
            .map_err(|reason| ValueError {
                key,
                reason,
                location,
            });
        Resolved {
            value,
            source,
            secret,
        }
    }

    /// The value of an environment variable, substituted and converted like
    /// a file value.
    // Deviation: oslo.config turns a multi-valued option's variable into
    // one item per character (it iterates the string); here it is one item.
    fn environment_value(
        &mut self,
        opt: &'a Opt,
        key: Key,
        variable: &str,
        value: &str,
    ) -> Resolved {
        let source = Source::Environment {
            variable: variable.to_owned(),
        };
        self.converted(opt, key, value, source)
    }

    /// The option's default, substituted and converted like a file value.
    fn default_value(&mut self, opt: &Opt, key: Key) -> Resolved {
        let value = match &opt.default {
            None => Ok(Value::None),
            Some(d) if d.is_empty() && opt.ty.is_multi() => Ok(Value::List(Vec::new())),
            Some(d) => match substitute(self, d, &opt.group) {
                // A multi-valued option's default is one item.
                Ok((text, secret)) => {
                    opt.ty
                        .convert(&text, opt.secret || secret)
                        .map_err(|reason| ValueError {
                            key,
                            reason: format!("bad default: {reason}"),
                            location: None,
                        })
                }
                Err(Failure::Value(e)) => Err(e),
                Err(Failure::Template(reason)) => Err(ValueError {
                    key,
                    reason: format!("default: {reason}"),
                    location: None,
                }),
            },
        };
        Resolved {
            value,
            source: Source::Default,
            secret: false,
        }
    }
}

/// The error of an option whose value fails to substitute: a referenced
/// option's own error as is, else the template error — without the
/// template when the option is secret, since the template is part of the
/// secret.
fn substitution_error(opt: &Opt, key: Key, failure: Failure, at: Option<Source>) -> ValueError {
    match failure {
        Failure::Value(e) => e,
        Failure::Template(reason) => ValueError {
            key,
            reason: if opt.secret {
                "template substitution error in a secret value (write $$ for a literal $)"
                    .to_owned()
            } else {
                reason
            },
            location: at,
        },
    }
}

/// Substitution against a loaded configuration (for lookups).
struct Substitution<'a> {
    config: &'a Config,
    group: &'a str,
}

impl Substitution<'_> {
    fn apply(&self, s: &str) -> Option<String> {
        let mut texts = self.config;
        substitute(&mut texts, s, self.group).ok().map(|(s, _)| s)
    }
}

/// Whether `c` may start a placeholder name: oslo.config's `[_a-z]`,
/// compiled case-insensitively by Python, which also matches the four
/// non-ASCII letters whose simple case mapping is an ASCII letter.
fn is_ident_start(c: char) -> bool {
    c == '_'
        || c.is_ascii_alphabetic()
        || matches!(c, '\u{130}' | '\u{131}' | '\u{17f}' | '\u{212a}')
}

fn is_ident_char(c: char) -> bool {
    is_ident_start(c) || c == '.' || c.is_ascii_digit()
}

/// The length in bytes of the placeholder name at the start of `s` (0 for
/// none).
fn ident_len(s: &str) -> usize {
    let mut chars = s.char_indices();
    match chars.next() {
        Some((_, c)) if is_ident_start(c) => {}
        _ => return 0,
    }
    chars
        .find(|&(_, c)| !is_ident_char(c))
        .map_or(s.len(), |(i, _)| i)
}

/// Applies Python's `string.Template.safe_substitute` with oslo.config's
/// identifier pattern (`[_a-z][._a-z0-9]*`, any case) and its `\$` escape:
/// `$$` and `\$` are a literal `$`, `$name` and `${name}` are replaced, a
/// `$` starting neither is kept. An unknown name is an error, as in
/// oslo.config. Returns the text and whether a secret went into it.
fn substitute<T: Texts>(texts: &mut T, s: &str, group: &str) -> Result<(String, bool), Failure> {
    if !s.contains('$') {
        return Ok((s.to_owned(), false));
    }
    let s = s.replace("\\$", "$$");
    let too_long = || {
        Failure::Template(format!(
            "template substitution error: value longer than {MAX_VALUE_LEN} bytes after substitution"
        ))
    };
    let mut out = String::new();
    let mut secret = false;
    let mut rest = s.as_str();
    loop {
        let Some(i) = rest.find('$') else {
            if out.len() + rest.len() > MAX_VALUE_LEN {
                return Err(too_long());
            }
            out.push_str(rest);
            return Ok((out, secret));
        };
        if out.len() + i > MAX_VALUE_LEN {
            return Err(too_long());
        }
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(after) = rest.strip_prefix('$') {
            out.push('$');
            rest = after;
        } else if let n @ 1.. = ident_len(rest) {
            let (text, tainted) = reference(texts, &rest[..n], group)?;
            secret |= tainted;
            out.push_str(&text);
            rest = &rest[n..];
        } else if let Some(braced) = rest.strip_prefix('{') {
            let n = ident_len(braced);
            match braced[n..].strip_prefix('}') {
                Some(after) if n > 0 => {
                    let (text, tainted) = reference(texts, &braced[..n], group)?;
                    secret |= tainted;
                    out.push_str(&text);
                    rest = after;
                }
                _ => out.push('$'),
            }
        } else {
            out.push('$');
        }
        if out.len() > MAX_VALUE_LEN {
            return Err(too_long());
        }
    }
}

/// Resolves a placeholder's name seen in `group`, as oslo.config's
/// `StrSubWrapper` does: `group.option` names an option of another group; a
/// plain name is looked up in the current group, then in `[DEFAULT]`.
fn reference<T: Texts>(texts: &mut T, name: &str, group: &str) -> Result<(String, bool), Failure> {
    let lookup = |texts: &T, g: &str, n: &str| texts.schema().position(&Key::new(g, n));
    if let Some((g, o)) = name.split_once('.') {
        // Deviation: oslo.config has no group named "DEFAULT" for
        // "${DEFAULT.x}" and fails; here it names [DEFAULT].
        if !texts.schema().has_group(g) {
            return Err(Failure::Template(format!(
                "template substitution error: no such group [{g}]"
            )));
        }
        if let Some(i) = lookup(texts, g, o).or_else(|| lookup(texts, "DEFAULT", name)) {
            return texts.text(i);
        }
        return Err(Failure::Template(format!(
            "template substitution error: no such option {o} in group [{g}]"
        )));
    }
    if let Some(i) = lookup(texts, group, name).or_else(|| lookup(texts, "DEFAULT", name)) {
        return texts.text(i);
    }
    Err(Failure::Template(format!(
        "template substitution error: no such option {name} in group [{group}]"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::OptType;

    fn schema() -> Arc<Schema> {
        let mut s = Schema::new();
        let opts = [
            Opt::new("DEFAULT", "host", OptType::HostAddress),
            Opt::new("DEFAULT", "state_path", OptType::string())
                .default("/var/lib/$host")
                .unchecked(),
            Opt::new("DEFAULT", "log_file", OptType::string()).deprecated_name("logfile"),
            Opt::new("api", "port", OptType::Port).default("9511"),
            Opt::new("api", "ssl_cert_file", OptType::string()),
            Opt::new("api", "ssl_key_file", OptType::string()),
            Opt::new("api", "paste", OptType::string()).ignored("not read"),
            Opt::new("g", "dirs", OptType::MultiString)
                .default("")
                .deprecated_name("old_dirs")
                .deprecated_in("other", "dirs"),
            Opt::new("g", "one", OptType::string())
                .deprecated_name("old_one")
                .deprecated_in("other", "one"),
            Opt::new("g", "password", OptType::string()).secret(),
            Opt::new(
                "g",
                "echo",
                OptType::String {
                    choices: vec!["a".into()],
                },
            ),
            Opt::new("g", "n", OptType::integer()).unchecked(),
            Opt::new("g", "list", OptType::list()).default("a,b"),
            Opt::new("other", "x", OptType::string()).unchecked(),
        ];
        for o in opts {
            s.register(o).expect("register");
        }
        Arc::new(s)
    }

    /// Loads in-memory files; test failures never print a Config (it may be
    /// huge).
    fn load(files: &[(&str, &str)]) -> Result<(Config, Vec<Warning>), Vec<ValueError>> {
        let files = files
            .iter()
            .map(|(name, text)| ini::parse(name, text.as_bytes()).expect("parse"))
            .collect();
        Config::from_files(schema(), files)
    }

    fn ok(files: &[(&str, &str)]) -> (Config, Vec<String>) {
        let (c, w) = load(files).unwrap_or_else(|e| panic!("{}", e[0]));
        (c, w.iter().map(ToString::to_string).collect())
    }

    fn string(c: &Config, g: &str, n: &str) -> String {
        match c.get(g, n) {
            Some(Ok(v)) => v.python_str(),
            other => panic!("{g}/{n}: {other:?}"),
        }
    }

    #[test]
    fn open_groups_are_read_raw_without_warnings() {
        let mut s = (*schema()).clone();
        s.open_group_prefix("driver:");
        let files = vec![
            ini::parse(
                "a.conf",
                b"[driver:acme]\nmemory_mb = 64\nkube = v1/ConfigMap:get\n[driver:]\nx = 1\n",
            )
            .expect("parse"),
            ini::parse(
                "b.conf",
                b"[DEFAULT]\nhost = h1\n[driver:acme]\nmemory_mb = 128\noptions = name:$host\n",
            )
            .expect("parse"),
        ];
        let (c, w) = Config::from_files(Arc::new(s), files).expect("load");
        let w: Vec<String> = w.iter().map(ToString::to_string).collect();
        assert_eq!(
            w,
            vec!["a.conf:5: unknown group [driver:]"],
            "only the prefix alone is unknown"
        );
        let groups = c.open_groups("driver:");
        assert_eq!(groups.len(), 1);
        assert_eq!(
            groups["driver:acme"],
            vec![
                (
                    "kube".to_string(),
                    "v1/ConfigMap:get".to_string(),
                    "a.conf:3".to_string()
                ),
                (
                    "memory_mb".to_string(),
                    "128".to_string(),
                    "b.conf:4".to_string()
                ),
                (
                    "options".to_string(),
                    "name:h1".to_string(),
                    "b.conf:5".to_string()
                ),
            ]
        );
    }

    #[test]
    fn multi_values_and_deprecated_names() {
        let (c, _) = ok(&[
            (
                "a.conf",
                "[g]\ndirs = a1\nold_dirs = a0\n[other]\ndirs = a-1\n[g]\ndirs = a2\n",
            ),
            ("b.conf", "[g]\ndirs = b1\n"),
        ]);
        // Within a file, the deprecated names' values (last name first)
        // come before the current name's, as oslo.config prepends them.
        assert_eq!(
            c.get("g", "dirs"),
            Some(Ok(&Value::List(vec![
                "a-1".into(),
                "a0".into(),
                "a1".into(),
                "a2".into(),
                "b1".into()
            ])))
        );
        assert_eq!(
            c.lookup_all("g", "old_dirs"),
            ["a-1", "a0", "a1", "a2", "b1"]
        );
        let (c, _) = ok(&[]);
        assert_eq!(c.get("g", "dirs"), Some(Ok(&Value::List(vec![]))));
    }

    #[test]
    fn single_values_and_deprecated_names() {
        // The current name wins within a file; the last file wins across.
        let (c, w) = ok(&[("a.conf", "[g]\none = cur\nold_one = dep\n")]);
        assert_eq!(string(&c, "g", "one"), "cur");
        assert_eq!(
            w,
            ["a.conf:3: option [g]/old_one is deprecated, use [g]/one"]
        );
        let (c, _) = ok(&[
            ("a.conf", "[g]\none = cur\n"),
            ("b.conf", "[other]\none = dep\n"),
        ]);
        assert_eq!(string(&c, "g", "one"), "dep");
        assert_eq!(
            c.source("g", "one"),
            Some(&Source::File {
                file: "b.conf".into(),
                line: 2
            })
        );
        assert_eq!(c.lookup("g", "one").as_deref(), Some("dep"));
        assert_eq!(c.lookup("other", "one").as_deref(), Some("dep"));
    }

    #[test]
    fn warnings() {
        let (_, w) = ok(&[(
            "f.conf",
            "[DEFAULT]\nlogfile = x\nbogus = 1\n[nosuch]\na = 1\nb = 2\n[NoSuch]\nc = 3\n[api]\npaste = p\nfrob = 1\n[default]\nhost = h\n",
        )]);
        assert_eq!(
            w,
            [
                "f.conf:2: option [DEFAULT]/logfile is deprecated, use [DEFAULT]/log_file",
                "f.conf:3: unknown option [DEFAULT]/bogus",
                "f.conf:5: unknown group [nosuch]",
                "f.conf:10: option [api]/paste is ignored: not read",
                "f.conf:11: unknown option [api]/frob",
                "f.conf:13: unknown group [default]",
            ]
        );
    }

    #[test]
    fn no_default_group_fallback() {
        let (c, _) = ok(&[("f.conf", "[DEFAULT]\nport = 1\nssl_cert_file = x\n")]);
        assert_eq!(c.get("api", "port"), Some(Ok(&Value::Integer(9511))));
        assert_eq!(c.get("api", "ssl_cert_file"), Some(Ok(&Value::None)));
    }

    #[test]
    fn substitution() {
        let (c, _) = ok(&[(
            "f.conf",
            "[DEFAULT]\nhost = n1\nlog_file = $$HOME/\\$x/$ /$-${notclosed\n\
             [api]\nssl_cert_file = ${g.list}-$port-${DEFAULT.host}-$state_path\n\
             [custom]\nx = $host/${api.port}\ny = $nope\n",
        )]);
        assert_eq!(
            string(&c, "DEFAULT", "log_file"),
            "$HOME/$x/$ /$-${notclosed"
        );
        assert_eq!(
            string(&c, "api", "ssl_cert_file"),
            "['a', 'b']-9511-n1-/var/lib/n1"
        );
        assert_eq!(c.lookup("custom", "x").as_deref(), Some("n1/9511"));
        assert_eq!(c.lookup("custom", "y").as_deref(), Some("$nope"));
        assert_eq!(c.lookup("custom", "z"), None);
        assert_eq!(
            c.lookup("API", "ssl_cert_file").as_deref(),
            Some("['a', 'b']-9511-n1-/var/lib/n1")
        );
    }

    #[test]
    fn value_errors() {
        let err = |text: &str| match load(&[("f.conf", text)]) {
            Ok(_) => panic!("{text}: no error"),
            Err(e) => e.iter().map(ToString::to_string).collect::<Vec<_>>(),
        };
        assert_eq!(
            err("[api]\nport = x\n"),
            ["invalid value for [api]/port: \"x\" is not an integer (f.conf:2)"]
        );
        assert_eq!(
            err("[api]\nssl_cert_file = $ssl_key_file\nssl_key_file = $ssl_cert_file\n"),
            [
                "invalid value for [api]/ssl_cert_file: template substitution error: recursive reference"
            ]
        );
        assert_eq!(
            err("[g]\necho = ${api.nope}\n"),
            [
                "invalid value for [g]/echo: template substitution error: no such option nope in group [api] (f.conf:2)"
            ]
        );
        // A reference to an invalid option reports that option.
        assert_eq!(
            err("[api]\nport = x\nssl_cert_file = $port\n"),
            ["invalid value for [api]/port: \"x\" is not an integer (f.conf:2)"]
        );
        // Unchecked options fail only when read.
        let (c, _) = ok(&[("f.conf", "[g]\nn = x\n[other]\nx = $nope\n")]);
        assert!(matches!(c.get("g", "n"), Some(Err(_))));
        assert!(matches!(c.get("other", "x"), Some(Err(_))));
        assert_eq!(c.get("nope", "x"), None);
    }

    #[test]
    fn secrets_stay_out_of_errors_and_listings() {
        for v in ["${hunter2.x}", "pa$hunter2", "x${hunter2}"] {
            let Err(e) = load(&[("f.conf", &format!("[g]\npassword = {v}\n"))]) else {
                panic!("{v}: no error");
            };
            assert!(!e[0].to_string().contains("hunter2"), "{}", e[0]);
        }
        // A value built from a secret is secret too.
        let Err(e) = load(&[("f.conf", "[g]\npassword = hunter2\necho = $password\n")]) else {
            panic!("no error");
        };
        assert_eq!(
            e[0].to_string(),
            "invalid value for [g]/echo: the value is not one of: a (f.conf:3)"
        );
        let (c, _) = ok(&[(
            "f.conf",
            "[g]\npassword = hunter2\n[api]\nssl_key_file = ${g.password}\n",
        )]);
        let rows = c.effective();
        let row = |g: &str, n: &str| {
            rows.iter()
                .find(|r| r.key == Key::new(g, n))
                .expect("row")
                .clone()
        };
        assert_eq!(row("g", "password").value, MASK);
        assert_eq!(row("api", "ssl_key_file").value, MASK);
        assert_eq!(row("api", "ssl_cert_file").value, "<None>");
        assert_eq!(row("api", "port").value, "9511");
        assert_eq!(row("api", "port").source, Source::Default);
        assert_eq!(row("g", "list").value, "a,b");
        assert_eq!(row("g", "password").source.to_string(), "f.conf:2");
    }

    #[test]
    fn substitution_growth_is_bounded() {
        let mut text = String::from("[DEFAULT]\nhost = abcdefghij\n[api]\n");
        text.push_str(&format!("ssl_key_file = {}\n", "$host".repeat(7000)));
        let Err(e) = load(&[("f.conf", &text)]) else {
            panic!("no error");
        };
        assert!(
            e[0].to_string().contains("value longer than 65536 bytes"),
            "{}",
            e[0]
        );
    }

    #[test]
    fn python_case_insensitive_identifiers() {
        // Python's re matches [a-z] case-insensitively against these four
        // letters: oslo.config looks the name up, and fails.
        for c in ['\u{212a}', '\u{17f}', '\u{130}', '\u{131}'] {
            let text = format!("[g]\necho = ${c}x\n");
            assert!(load(&[("f.conf", &text)]).is_err(), "{c}");
        }
        let (c, _) = ok(&[("f.conf", "[other]\nx = $é\n")]);
        assert_eq!(string(&c, "other", "x"), "$é");
    }
}
