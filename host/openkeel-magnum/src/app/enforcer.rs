//! The policy enforcer: its settings from `[oslo_policy]` and the loaded rules.

use super::*;

/// The `[oslo_policy]` options, with the configuration files' directories
/// searched first for relative policy files.
pub fn policy_settings(options: &Options) -> PolicySettings {
    let p = &options.oslo_policy;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for f in options.files() {
        if let Some(parent) = f.parent()
            && !dirs.iter().any(|d| d == parent)
        {
            dirs.push(parent.to_path_buf());
        }
    }
    PolicySettings {
        policy_file: p.policy_file.clone(),
        policy_dirs: p.policy_dirs.clone(),
        enforce_scope: options
            .lookup("oslo_policy", "enforce_scope")
            .is_some_and(|v| {
                matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "true" | "1" | "on" | "yes"
                )
            }),
        enforce_new_defaults: p.enforce_new_defaults,
        policy_default_rule: p.policy_default_rule.clone(),
        config_dirs_for_search: dirs,
    }
}

/// Loads Magnum's default rules and the configured overrides.
pub fn load_policy(options: &Options) -> Result<Enforcer, StartError> {
    policy::load(&policy_settings(options)).map_err(|e| StartError::new(format!("policy: {e}")))
}
