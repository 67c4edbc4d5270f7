//! Magnum's policy: the 66 default rules, the credentials and targets Magnum
//! hands to oslo.policy, the policy-file search, `is_admin`, the sample
//! policy file and `policy check`. The engine is the `oslo-policy` crate.

mod check;
mod credentials;
mod defaults;

#[cfg(test)]
mod oracle_tests;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use check::check;
pub use credentials::{caller_target, credentials, is_admin, policy_values};
pub use defaults::magnum_defaults;
pub use oslo_policy::{Credentials, Denied, DenyReason, Enforcer, LoadError, Target};

/// The `[oslo_policy]` options an enforcer is built from, and where a
/// relative policy file is looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySettings {
    /// `[oslo_policy]/policy_file` (default `policy.yaml`). A relative name
    /// is searched for; the default names (`policy.yaml`, `policy.json`, or
    /// empty) may be missing, any other file must exist.
    pub policy_file: String,
    /// `[oslo_policy]/policy_dirs` (default `policy.d`). Relative names are
    /// searched for like the policy file; missing directories are ignored.
    pub policy_dirs: Vec<String>,
    /// `[oslo_policy]/enforce_scope`. oslo.policy 6 has no such option (it
    /// always checks scopes); the option is honoured when set and off when
    /// unset. Magnum's credentials never carry a system or domain scope, so
    /// for its contexts the result is the same either way.
    pub enforce_scope: bool,
    /// `[oslo_policy]/enforce_new_defaults` (default true).
    pub enforce_new_defaults: bool,
    /// `[oslo_policy]/policy_default_rule` (default `default`).
    pub policy_default_rule: String,
    /// The directories a relative policy file or directory is searched in
    /// before `.` and `/etc/magnum`: the directories of the configuration
    /// files (and `--config-dir`s), in the order they were given.
    pub config_dirs_for_search: Vec<PathBuf>,
}

impl Default for PolicySettings {
    /// The option defaults, without configuration directories.
    fn default() -> Self {
        PolicySettings {
            policy_file: DEFAULT_POLICY_FILE.to_owned(),
            policy_dirs: vec!["policy.d".to_owned()],
            enforce_scope: false,
            enforce_new_defaults: true,
            policy_default_rule: oslo_policy::DEFAULT_RULE_NAME.to_owned(),
            config_dirs_for_search: Vec::new(),
        }
    }
}

const DEFAULT_POLICY_FILE: &str = "policy.yaml";

/// Where relative policy files are searched after the configuration
/// directories.
const SEARCH_DIRS: [&str; 2] = [".", "/etc/magnum"];

/// The policy file and directories the settings name, found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyPaths {
    pub policy_file: PathBuf,
    /// Whether a missing `policy_file` means "no overrides".
    pub optional: bool,
    pub policy_dirs: Vec<PathBuf>,
}

impl PolicySettings {
    /// Resolves the policy file and directories (Go `app.NewPolicy`,
    /// oslo.config's `find_file`).
    pub fn paths(&self) -> PolicyPaths {
        let optional = matches!(
            self.policy_file.as_str(),
            "" | "policy.yaml" | "policy.json"
        );
        let name = if self.policy_file.is_empty() {
            DEFAULT_POLICY_FILE
        } else {
            &self.policy_file
        };
        PolicyPaths {
            policy_file: find(Path::new(name), &self.config_dirs_for_search, false),
            optional,
            policy_dirs: self
                .policy_dirs
                .iter()
                .filter(|d| !d.is_empty())
                .map(|d| find(Path::new(d), &self.config_dirs_for_search, true))
                .collect(),
        }
    }

    /// The engine's options: Magnum's defaults and the resolved files.
    pub fn options(&self) -> oslo_policy::Options {
        let paths = self.paths();
        oslo_policy::Options {
            defaults: magnum_defaults(),
            policy_file: Some(paths.policy_file),
            policy_file_optional: paths.optional,
            policy_dirs: paths.policy_dirs,
            enforce_scope: self.enforce_scope,
            enforce_new_defaults: self.enforce_new_defaults,
            default_rule: self.policy_default_rule.clone(),
        }
    }
}

/// Loads Magnum's defaults and the configured policy files (Go
/// `app.NewPolicy`). The files are read once.
///
/// Deviation: an explicitly configured policy file that is missing fails
/// (oslo.policy logs it and uses the defaults); a typo in the path must not
/// silently fall back to the defaults.
pub fn load(settings: &PolicySettings) -> Result<Enforcer, LoadError> {
    Enforcer::new(settings.options())
}

/// Finds a relative file (or directory) the way oslo.config finds files:
/// next to each configuration file, then in `.` and `/etc/magnum`. A name
/// found nowhere is returned as given.
fn find(name: &Path, config_dirs: &[PathBuf], dir: bool) -> PathBuf {
    if name.is_absolute() {
        return name.to_owned();
    }
    let candidates = config_dirs
        .iter()
        .map(PathBuf::as_path)
        .chain(SEARCH_DIRS.iter().map(Path::new));
    for base in candidates {
        let p = base.join(name);
        let found = if dir { p.is_dir() } else { p.is_file() };
        if found {
            return p;
        }
    }
    name.to_owned()
}
