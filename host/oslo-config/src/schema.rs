//! The option registry: what a service registers with oslo.config.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use crate::types::OptType;

/// A `(group, name)` pair; the group is normalised (`DEFAULT` or lower
/// case).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// The group.
    pub group: String,
    /// The option name.
    pub name: String,
}

impl Key {
    /// The key of `name` in `group`.
    pub fn new(group: impl Into<String>, name: impl Into<String>) -> Self {
        Key {
            group: group.into(),
            name: name.into(),
        }
    }
}

/// `[group]/name`.
impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]/{}", self.group, self.name)
    }
}

/// One option: where it lives, its type, its default written the way a
/// configuration file writes it, and how it is documented.
#[derive(Clone, Debug, PartialEq)]
pub struct Opt {
    /// The group (`DEFAULT` for the default group).
    pub group: String,
    /// The name.
    pub name: String,
    /// The type and its constraints.
    pub ty: OptType,
    /// The default as text (substituted and converted like a value read
    /// from a file); `None` for no default (`<None>` in the sample).
    pub default: Option<String>,
    /// Older names, in order of preference, each in this group or another.
    pub deprecated: Vec<Key>,
    /// Whether the value is secret: never shown in errors or listings.
    pub secret: bool,
    /// When set, the reason a file setting the option gets a warning: the
    /// option is accepted for compatibility but has no effect.
    pub ignored: Option<String>,
    /// Whether a bad value fails loading. Options that only exist to be
    /// accepted, listed and substituted are not checked: their errors are
    /// reported only when they are read.
    pub checked: bool,
    /// The help text (plain sentences; the sample generator wraps it).
    pub help: String,
    /// The library or service that defines the option (`magnum.conf`,
    /// `oslo.db`, …), shown as "From …" in the sample.
    pub namespace: String,
    /// Whether the sample configuration lists the option.
    pub in_sample: bool,
}

impl Opt {
    /// A checked option with no default, no help and the namespace `""`.
    pub fn new(group: impl Into<String>, name: impl Into<String>, ty: OptType) -> Self {
        Opt {
            group: group.into(),
            name: name.into(),
            ty,
            default: None,
            deprecated: Vec::new(),
            secret: false,
            ignored: None,
            checked: true,
            help: String::new(),
            namespace: String::new(),
            in_sample: true,
        }
    }

    /// An option of type `ty` not yet placed in a group: the start of a
    /// declaration in [`group!`](crate::group), which places it with
    /// [`Opt::at`].
    pub fn of(ty: OptType) -> Self {
        Opt::new("", "", ty)
    }

    /// The option placed as `[group]/name`; deprecated names declared
    /// without a group ([`Opt::deprecated_name`] before placing) are in
    /// `group`.
    pub fn at(mut self, group: &str, name: &str) -> Self {
        self.group = group.to_owned();
        self.name = name.to_owned();
        for old in &mut self.deprecated {
            if old.group.is_empty() {
                old.group = group.to_owned();
            }
        }
        self
    }

    /// Sets the default (as a file would write it).
    pub fn default(mut self, default: impl Into<String>) -> Self {
        self.default = Some(default.into());
        self
    }

    /// Adds a deprecated name in the same group.
    pub fn deprecated_name(mut self, name: impl Into<String>) -> Self {
        let key = Key::new(self.group.clone(), name);
        self.deprecated.push(key);
        self
    }

    /// Adds a deprecated name in another group.
    pub fn deprecated_in(mut self, group: impl Into<String>, name: impl Into<String>) -> Self {
        self.deprecated.push(Key::new(group, name));
        self
    }

    /// Marks the option secret.
    pub fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    /// Marks the option accepted but without effect, with the reason.
    pub fn ignored(mut self, reason: impl Into<String>) -> Self {
        self.ignored = Some(reason.into());
        self
    }

    /// Marks the option as not validated at load time.
    pub fn unchecked(mut self) -> Self {
        self.checked = false;
        self
    }

    /// Sets the help text.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = help.into();
        self
    }

    /// Sets the namespace.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Leaves the option out of the sample configuration.
    pub fn hidden(mut self) -> Self {
        self.in_sample = false;
        self
    }

    /// The option's key.
    pub fn key(&self) -> Key {
        Key::new(self.group.clone(), self.name.clone())
    }
}

/// A registration refused by [`Schema::register`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateOpt(pub Key);

impl fmt::Display for DuplicateOpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "option {} is registered twice", self.0)
    }
}

impl std::error::Error for DuplicateOpt {}

/// The options of a service, in registration order.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    opts: Vec<Opt>,
    index: HashMap<Key, usize>,
    /// Deprecated name → (option index, rank: 1 for the first deprecated
    /// name).
    aliases: HashMap<Key, (usize, usize)>,
    groups: BTreeSet<String>,
    /// Prefixes of groups whose options the service reads itself
    /// ([`crate::Config::open_groups`]): no warning for their keys.
    open_prefixes: Vec<String>,
}

impl Schema {
    /// An empty schema.
    pub fn new() -> Self {
        Schema::default()
    }

    /// Registers an option. A deprecated name already taken (as an option
    /// or as another option's deprecated name) keeps its first meaning.
    pub fn register(&mut self, opt: Opt) -> Result<(), DuplicateOpt> {
        let key = opt.key();
        if self.index.contains_key(&key) {
            return Err(DuplicateOpt(key));
        }
        let i = self.opts.len();
        for (rank, old) in opt.deprecated.iter().enumerate() {
            if !self.index.contains_key(old) {
                self.aliases.entry(old.clone()).or_insert((i, rank + 1));
            }
        }
        // A name that was some option's deprecated name is now an option.
        self.aliases.remove(&key);
        self.groups.insert(opt.group.clone());
        self.index.insert(key, i);
        self.opts.push(opt);
        Ok(())
    }

    /// Every option, in registration order.
    pub fn opts(&self) -> &[Opt] {
        &self.opts
    }

    /// The option registered as `group`/`name`.
    pub fn get(&self, group: &str, name: &str) -> Option<&Opt> {
        self.position(&Key::new(group, name)).map(|i| &self.opts[i])
    }

    /// Whether a group has at least one option.
    pub fn has_group(&self, group: &str) -> bool {
        self.groups.contains(group)
    }

    /// Declares the groups named `<prefix><anything>` (`driver:` for
    /// `[driver:acme]`) as open: their keys are not options of the schema
    /// and raise no warning; the service reads them with
    /// [`crate::Config::open_groups`].
    pub fn open_group_prefix(&mut self, prefix: impl Into<String>) {
        self.open_prefixes.push(prefix.into());
    }

    /// Whether `group` is an open group.
    pub fn is_open_group(&self, group: &str) -> bool {
        self.open_prefixes
            .iter()
            .any(|p| group.len() > p.len() && group.starts_with(p.as_str()))
    }

    /// The groups, sorted.
    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.groups.iter().map(String::as_str)
    }

    pub(crate) fn position(&self, key: &Key) -> Option<usize> {
        self.index.get(key).copied()
    }

    /// The option a deprecated name stands for, and the name's rank.
    pub(crate) fn alias(&self, key: &Key) -> Option<(usize, usize)> {
        self.aliases.get(key).copied()
    }

    /// The option a name means: itself, or the option it is a deprecated
    /// name of; with the rank of the name (0 for a current name).
    pub(crate) fn resolve(&self, key: &Key) -> Option<(usize, usize)> {
        self.position(key)
            .map(|i| (i, 0))
            .or_else(|| self.alias(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_and_aliases() {
        let mut s = Schema::new();
        s.register(
            Opt::new("g", "a", OptType::string())
                .deprecated_name("old")
                .deprecated_in("h", "older"),
        )
        .expect("a");
        assert_eq!(
            s.register(Opt::new("g", "a", OptType::string())),
            Err(DuplicateOpt(Key::new("g", "a")))
        );
        s.register(Opt::new("g", "b", OptType::string()).deprecated_name("old"))
            .expect("b");
        assert_eq!(s.resolve(&Key::new("g", "old")), Some((0, 1)));
        assert_eq!(s.resolve(&Key::new("h", "older")), Some((0, 2)));
        assert_eq!(s.resolve(&Key::new("g", "b")), Some((1, 0)));
        s.register(Opt::new("h", "older", OptType::string()))
            .expect("older");
        assert_eq!(s.resolve(&Key::new("h", "older")), Some((2, 0)));
        assert!(s.has_group("h") && !s.has_group("x"));
        assert_eq!(s.get("g", "b").map(|o| o.name.as_str()), Some("b"));
        assert_eq!(Key::new("DEFAULT", "host").to_string(), "[DEFAULT]/host");
    }
}
