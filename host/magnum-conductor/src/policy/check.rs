//! `openkeel-magnum policy check`: loads the configured policy files and
//! reports what is wrong with them, as `oslopolicy-validator` does.

use std::collections::BTreeMap;
use std::io::{self, Write};

use oslo_policy::{Enforcer, Warning};

use super::PolicySettings;

/// Loads the policy files the settings name and writes one line per
/// problem (a file that cannot be read, rules that do not parse, unknown
/// rule names, overrides of deprecated rules, undefined or cyclic
/// references, remote checks), then a summary line. Returns the exit
/// status: 0 when there is no problem, 1 otherwise.
pub fn check(settings: &PolicySettings, out: &mut dyn Write) -> io::Result<u8> {
    let paths = settings.paths();
    let enforcer = match super::load(settings) {
        Ok(e) => e,
        Err(e) if e.is_not_found() => {
            writeln!(
                out,
                "Configured policy file \"{}\" not found",
                paths.policy_file.display()
            )?;
            return Ok(1);
        }
        Err(e) => {
            writeln!(out, "Invalid policy file: {e}")?;
            return Ok(1);
        }
    };
    let problems = problems(&enforcer);
    for line in &problems {
        writeln!(out, "{line}")?;
    }
    for w in enforcer.warnings() {
        if let Warning::Redundant { policies } = w {
            writeln!(
                out,
                "Note: rules that repeat the default and can be removed: {}",
                policies.join(", ")
            )?;
        }
    }
    let mut files: Vec<String> = enforcer
        .overrides()
        .values()
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files.dedup();
    let source = if files.is_empty() {
        "no policy file".to_owned()
    } else {
        files.join(", ")
    };
    if problems.is_empty() {
        writeln!(
            out,
            "{} default rules, {} overridden ({source}): no problems",
            enforcer.rules().len(),
            enforcer.overrides().len()
        )?;
        Ok(0)
    } else {
        writeln!(
            out,
            "{} default rules, {} overridden ({source}): {} problem(s)",
            enforcer.rules().len(),
            enforcer.overrides().len(),
            problems.len()
        )?;
        Ok(1)
    }
}

fn problems(e: &Enforcer) -> Vec<String> {
    let mut lines = Vec::new();
    for w in e.warnings() {
        match w {
            Warning::Unparsable { policy, error } => lines.push(format!(
                "Failed to parse rule \"{policy}\": {:?} (it always denies)",
                error.rule
            )),
            Warning::RemoteCheck { policy } => lines.push(format!(
                "Rule \"{policy}\" uses an http check, which always denies"
            )),
            // Reported below for every override of a deprecated name.
            Warning::DeprecatedOverride { .. } => {}
            Warning::Undefined { policies } => lines.push(format!(
                "Invalid rules found: {} reference a rule that is not defined",
                policies.join(", ")
            )),
            Warning::Cyclic { policies } => lines.push(format!(
                "Invalid rules found: {} are part of a cyclical reference",
                policies.join(", ")
            )),
            Warning::Redundant { .. } => {}
        }
    }
    // The registered rules each deprecated name was replaced by.
    let mut deprecated: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for r in e.rules() {
        if let Some(d) = &r.deprecated
            && d.name != r.name
        {
            deprecated.entry(&d.name).or_default().push(&r.name);
        }
    }
    for name in e.overrides().keys() {
        if let Some(replacements) = deprecated.get(name.as_str()) {
            let replacements: Vec<String> =
                replacements.iter().map(|r| format!("\"{r}\"")).collect();
            lines.push(format!(
                "Deprecated rule found in policy file: \"{name}\" (replaced by {})",
                replacements.join(", ")
            ));
            continue;
        }
        let known =
            e.registered(name).is_some() || name == e.default_rule() || e.is_referenced(name);
        if !known {
            lines.push(format!("Unknown rule found in policy file: {name}"));
        }
    }
    lines
}
