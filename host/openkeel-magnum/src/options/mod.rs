//! Magnum's configuration: `magnum.conf` read with oslo.config's semantics
//! into typed [`Options`] with Magnum's group names, option names and
//! defaults.
//!
//! [`load`] reads every `--config-file` in order, then each
//! `--config-dir`'s `*.conf` files in sorted order; later files win. It
//! returns the options and warnings (unknown groups and options, deprecated
//! names, options accepted but ignored such as `[api]/api_paste_config`),
//! or a one-line [`ConfigError`] naming the file and line of a malformed
//! line or the option of an invalid value (never a secret's value). Every
//! modelled option is validated at load time, not on first use as in
//! oslo.config.
//!
//! Options that are not modelled as fields are still readable through
//! [`Options::lookup`]; [`Options::effective`] lists the effective
//! configuration with secrets masked (`config check`). The option table
//! also generates `config/magnum.conf.sample` ([`sample`]).
//!
//! # Deviations from oslo.config and Magnum
//!
//! `${DEFAULT.name}` names `[DEFAULT]` (oslo.config has no group called
//! DEFAULT and fails). Unknown options and groups produce warnings, which
//! oslo.config does not emit. Every modelled option is validated at load
//! time. `[database]/connection` has no default (Magnum's is an SQLite file
//! inside its Python package). `[DEFAULT]/auth_strategy` and `[capi]` are
//! ours; `[healthcheck]` carries the settings Magnum puts in api-paste.ini,
//! which is not read. Integers are 64-bit. An integer or float option with a
//! default that a file sets to an empty value (oslo.config's none) reads as
//! 0. Error messages never repeat a malformed line nor a secret option's
//! value.

mod groups;
mod known;
mod schema;

#[cfg(test)]
mod oracle_tests;
#[cfg(test)]
mod sample_tests;
#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use oslo_config::database::{DatabaseUrl, DatabaseUrlError};
use oslo_config::{Config, Key, LoadError, ReadValue, Reader, Registration, Secret};

pub use groups::*;

pub use oslo_config::MASK;

/// The configuration file read when neither `--config-file` nor
/// `--config-dir` is given and it exists, as Magnum's services do.
pub const DEFAULT_CONFIG_FILE: &str = "/etc/magnum/magnum.conf";

/// The configuration directory read when neither `--config-file` nor
/// `--config-dir` is given and it exists (oslo.config's project directory).
pub const DEFAULT_CONFIG_DIR: &str = "/etc/magnum/magnum.conf.d";

/// The SQLite file of all-in-one when no `[database]/connection` is set,
/// in the working directory.
pub const ALL_IN_ONE_DATABASE_FILE: &str = "openkeel-magnum.sqlite";

/// What [`load`] returns: the options and the warnings to log.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The options.
    pub options: Options,
    /// One line each: `file:line: message`.
    pub warnings: Vec<String>,
}

/// A configuration that cannot be used. `Display` is one line naming the
/// cause (the file, line or option); the CLI exits with status 2.
#[derive(Debug)]
pub struct ConfigError(LoadError);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Reads the configuration files (in order) and then, for each directory of
/// `config_dirs`, its `*.conf` files (hidden files excepted) in sorted
/// order, the way oslo.config handles `--config-file` and `--config-dir`.
/// As in oslo.config, an option's `OS_<GROUP>__<NAME>` environment variable
/// (`OS_DATABASE__CONNECTION`) wins over the files.
pub fn load(config_files: &[PathBuf], config_dirs: &[PathBuf]) -> Result<Loaded, ConfigError> {
    load_with_environment(config_files, config_dirs, std::env::vars())
}

/// [`load`] with the given environment instead of the process's.
pub fn load_with_environment(
    config_files: &[PathBuf],
    config_dirs: &[PathBuf],
    environment: impl IntoIterator<Item = (String, String)>,
) -> Result<Loaded, ConfigError> {
    let schema = Arc::new(schema::schema());
    let (config, warnings) =
        oslo_config::load_with_environment(schema, config_files, config_dirs, environment)
            .map_err(ConfigError)?;
    Ok(Loaded {
        options: Options::from_config(Arc::new(config)),
        warnings: warnings.iter().map(ToString::to_string).collect(),
    })
}

/// Loads already parsed files (for tests and tools).
/// The options of one in-memory file, which must load (for the tests of
/// the modules built from options).
#[cfg(test)]
pub(crate) fn from_text(text: &str) -> Options {
    let file = oslo_config::ini::parse("test.conf", text.as_bytes())
        .unwrap_or_else(|e| panic!("parse: {e}"));
    from_files(vec![file])
        .unwrap_or_else(|e| panic!("{e}"))
        .options
}

fn from_files(files: Vec<oslo_config::ini::File>) -> Result<Loaded, ConfigError> {
    let (config, warnings) = Config::from_files(Arc::new(schema::schema()), files)
        .map_err(|errors| ConfigError(LoadError::Invalid(errors)))?;
    Ok(Loaded {
        options: Options::from_config(Arc::new(config)),
        warnings: warnings.iter().map(ToString::to_string).collect(),
    })
}

/// The sample configuration file: every modelled option with its help,
/// type, bounds, deprecated names and default, in oslo-config-generator's
/// layout.
pub fn sample() -> String {
    oslo_config::sample::generate(
        &schema::schema(),
        &[
            "openkeel-magnum configuration (magnum.conf). Generated from the option table;",
            "do not edit.",
            "",
            "Groups, names and defaults are Magnum 23.0.0's. The other options of",
            "Magnum's sample (oslo.log, oslo.messaging, oslo.concurrency, ...) are",
            "accepted without warning and have no effect.",
        ],
        schema::NAMESPACE_ORDER,
    )
}

/// The configuration reference (`docs/configuration.md`), generated from
/// the same option table as [`sample`].
pub fn reference() -> String {
    oslo_config::sample::markdown(
        &schema::schema(),
        &[
            "# Configuration reference",
            "",
            "Every option openkeel-magnum reads from `magnum.conf`, group by group. Generated from the option table",
            "(the tests rewrite it with `OKM_UPDATE_SAMPLES=1`, and fail while it is stale); do not edit.",
            "`config/magnum.conf.sample` is the same table as a sample file, and `openkeel-magnum config check` prints",
            "the values in effect with the file and line each comes from.",
            "",
            "Groups, names and defaults are Magnum 23.0.0's, except the groups and options that are ours (`[capi]`,",
            "`[metrics]`, `[drivers]/drivers_path` and the other options whose help says so). An option marked",
            "*Accepted, no effect* is read without a warning so that an existing `magnum.conf` keeps working; the",
            "options of Magnum's sample that are absent here (oslo.log's, oslo.messaging's, oslo.concurrency's …) are",
            "accepted the same way. Each option can also be given in the environment as `OS_<GROUP>__<OPTION>`",
            "(`OS_DATABASE__CONNECTION`), which wins over the files, as with oslo.config. A driver package's grants",
            "(`[driver:<package>]`) are described in [drivers.md](drivers.md#grants).",
        ],
        schema::NAMESPACE_ORDER,
    )
}

/// How API requests are authenticated (`[DEFAULT]/auth_strategy`, ours).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthStrategy {
    /// Tokens are validated with Keystone (the default).
    Keystone,
    /// The identity headers are trusted: for tests and all-in-one only.
    NoAuth,
}

/// `noauth`, or else Keystone: the option's choices are checked at load.
impl ReadValue for AuthStrategy {
    fn read_value(reader: &Reader<'_>, group: &str, name: &str) -> Self {
        match String::read_value(reader, group, name).as_str() {
            "noauth" => AuthStrategy::NoAuth,
            _ => AuthStrategy::Keystone,
        }
    }
}

impl Registration for AuthStrategy {}

/// Where the values of [`Options`] come from: the files read, the loaded
/// configuration (for lookups and `config check`) and what overrode it.
#[derive(Clone, Debug)]
struct Provenance {
    files: Vec<PathBuf>,
    raw: Arc<Config>,
    overrides: Vec<(Key, String, &'static str)>,
}

/// One key of a `[driver:<package>]` group: its value and where it was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupEntry {
    pub key: String,
    pub value: String,
    /// `file:line`.
    pub source: String,
}

impl Credentials {
    /// The password as the Identity request sends it (empty when unset).
    pub fn password_text(&self) -> String {
        self.password
            .as_ref()
            .map(|p| p.expose().to_owned())
            .unwrap_or_default()
    }
}

impl Capi {
    /// Whether the drivers' Kubernetes is the in-memory cluster of an
    /// all-in-one process (`management_cluster = memory`).
    pub fn in_memory(&self) -> bool {
        self.management_cluster.trim() == "memory"
    }

    /// The namespace of the reconciler's Lease: `lease_namespace`, else
    /// `namespace`.
    pub fn lease_namespace(&self) -> &str {
        match self.lease_namespace.trim() {
            "" => &self.namespace,
            ns => ns,
        }
    }
}

/// One row of [`Options::effective`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveOption {
    /// The group.
    pub group: String,
    /// The option.
    pub name: String,
    /// The value as a file would write it; [`MASK`] for a secret that is
    /// set; `<None>` for none.
    pub value: String,
    /// `default`, `file:line`, or what overrode it (`all-in-one`).
    pub source: String,
}

impl Options {
    /// The options with every default applied and no file read.
    pub fn defaults() -> Options {
        match from_files(Vec::new()) {
            Ok(loaded) => loaded.options,
            // The defaults are constants checked by the tests.
            Err(e) => panic!("invalid built-in default: {e}"),
        }
    }

    fn from_config(raw: Arc<Config>) -> Options {
        let provenance = Provenance {
            files: raw.files().map(PathBuf::from).collect(),
            raw: Arc::clone(&raw),
            overrides: Vec::new(),
        };
        Options::read(&Reader::new(&raw), provenance)
    }

    /// The configuration files read, in load order. oslo.config resolves
    /// relative paths such as `[oslo_policy]/policy_file` against their
    /// directories.
    pub fn files(&self) -> &[PathBuf] {
        &self.provenance.files
    }

    /// The value the files set for `group`/`name` (the last one for an
    /// option given several times; the group is normalised like a section
    /// name), modelled or not, with `$var` substitution applied when it
    /// succeeds. `None` when no file sets it. Deprecated names are
    /// followed.
    pub fn lookup(&self, group: &str, name: &str) -> Option<String> {
        self.provenance.raw.lookup(group, name)
    }

    /// Every value the files set for `group`/`name` across all files in
    /// load order (what a multi-valued option sees), substituted.
    pub fn lookup_all(&self, group: &str, name: &str) -> Vec<String> {
        self.provenance.raw.lookup_all(group, name)
    }

    /// The effective configuration, for `config check`: every modelled
    /// option (and every other option a file sets), in table order, with
    /// its value as a file would write it (secrets masked) and its source.
    pub fn effective(&self) -> Vec<EffectiveOption> {
        let schema = self.provenance.raw.schema();
        self.provenance
            .raw
            .effective()
            .into_iter()
            .filter(|row| {
                let listed = schema
                    .get(&row.key.group, &row.key.name)
                    .is_some_and(|o| o.in_sample);
                listed || row.source != oslo_config::Source::Default
            })
            .map(|row| {
                let overridden = self
                    .provenance
                    .overrides
                    .iter()
                    .rev()
                    .find(|(k, _, _)| *k == row.key);
                let (value, source) = match overridden {
                    Some((_, value, why)) => (value.clone(), (*why).to_owned()),
                    None => (row.value, row.source.to_string()),
                };
                EffectiveOption {
                    group: row.key.group,
                    name: row.key.name,
                    value,
                    source,
                }
            })
            .collect()
    }

    /// `[database]/connection` translated for sqlx, with
    /// `[database]/connection_parameters` appended to its query as oslo.db
    /// does at connect time.
    pub fn database_url(&self) -> Result<DatabaseUrl, DatabaseUrlError> {
        let raw = self
            .database
            .connection
            .as_ref()
            .map_or("", |c| c.expose())
            .trim();
        let params = self.database.connection_parameters.trim();
        if params.is_empty() || raw.is_empty() {
            return DatabaseUrl::parse(raw);
        }
        let sep = if raw.contains('?') { '&' } else { '?' };
        DatabaseUrl::parse(&format!("{raw}{sep}{params}"))
    }

    /// The `[driver:<package>]` groups the files set, by package name.
    pub fn driver_groups(&self) -> std::collections::BTreeMap<String, Vec<GroupEntry>> {
        self.provenance
            .raw
            .open_groups("driver:")
            .into_iter()
            .map(|(group, entries)| {
                let package = group.trim_start_matches("driver:").to_owned();
                let entries = entries
                    .into_iter()
                    .map(|(key, value, source)| GroupEntry { key, value, source })
                    .collect();
                (package, entries)
            })
            .collect()
    }

    /// The Identity endpoint Magnum uses for its own Keystone client:
    /// `[keystone_auth]/auth_url`, or `[keystone_authtoken]/
    /// www_authenticate_uri` when that is unset.
    // Magnum: magnum/common/keystone.py KeystoneClientV3.auth_url.
    pub fn keystone_url(&self) -> Option<&str> {
        self.keystone_auth
            .credentials
            .auth_url
            .as_deref()
            .or(self.keystone_authtoken.www_authenticate_uri.as_deref())
    }

    /// Applies what all-in-one implies on top of the files: an SQLite
    /// database `openkeel-magnum.sqlite` in `working_dir` unless one is
    /// configured, no authentication, and the fake driver enabled and used
    /// by default. [`Options::effective`] shows these as `all-in-one`.
    pub fn apply_all_in_one_defaults(&mut self, working_dir: &Path) {
        const WHY: &str = "all-in-one";
        if self
            .database
            .connection
            .as_ref()
            .is_none_or(Secret::is_empty)
        {
            let path = working_dir.join(ALL_IN_ONE_DATABASE_FILE);
            let url = format!("sqlite:///{}", path.display());
            self.provenance
                .overrides
                .push((Key::new("database", "connection"), url.clone(), WHY));
            self.database.connection = Some(Secret::new(url));
        }
        self.default.auth_strategy = AuthStrategy::NoAuth;
        self.provenance.overrides.push((
            Key::new("DEFAULT", "auth_strategy"),
            "noauth".to_owned(),
            WHY,
        ));
        if !self
            .drivers
            .enabled_beta_drivers
            .iter()
            .any(|d| d == "fake")
        {
            self.drivers.enabled_beta_drivers.push("fake".to_owned());
            let value = self.drivers.enabled_beta_drivers.join(",");
            self.provenance.overrides.push((
                Key::new("drivers", "enabled_beta_drivers"),
                value,
                WHY,
            ));
        }
        if self.drivers.default_driver.is_none() {
            self.drivers.default_driver = Some("fake".to_owned());
            self.provenance.overrides.push((
                Key::new("drivers", "default_driver"),
                "fake".to_owned(),
                WHY,
            ));
        }
    }
}
