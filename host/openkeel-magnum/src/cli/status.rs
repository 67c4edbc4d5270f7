//! `status upgrade-check` (magnum-status upgrade check): oslo.upgradecheck's
//! checks and table.

use std::io::Write;

use super::Failure;
use crate::app;
use crate::options::Options;

/// An oslo.upgradecheck result code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Success = 0,
    Warning = 1,
    Failure = 2,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Success => "Success",
            Outcome::Warning => "Warning",
            Outcome::Failure => "Failure",
        }
    }
}

pub(super) async fn upgrade_check(options: &Options, out: &mut dyn Write) -> Result<(), Failure> {
    let checks = [
        ("Policy File JSON to YAML Migration", policy_json(options)),
        ("Database Schema", database(options).await),
        ("Cluster Drivers", drivers(options).await),
    ];
    let worst = checks
        .iter()
        .map(|(_, (o, _))| *o)
        .max()
        .unwrap_or(Outcome::Success);
    let blocks: Vec<Vec<String>> = checks
        .iter()
        .map(|(name, (outcome, details))| {
            vec![
                format!("Check: {name}"),
                format!("Result: {}", outcome.name()),
                format!("Details: {}", details.as_deref().unwrap_or("None")),
            ]
        })
        .collect();
    print(out, &blocks).map_err(Failure::new)?;
    match worst {
        Outcome::Success => Ok(()),
        o => Err(Failure::status(o as u8)),
    }
}

/// oslo.upgradecheck's layout: a title row and one block per check.
fn print(out: &mut dyn Write, blocks: &[Vec<String>]) -> std::io::Result<()> {
    const TITLE: &str = "Upgrade Check Results";
    let width = blocks
        .iter()
        .flatten()
        .map(|l| l.chars().count())
        .chain([TITLE.len()])
        .max()
        .unwrap_or(0);
    let sep = format!("+{}+", "-".repeat(width + 2));
    let row = |s: &str| format!("| {s}{} |", " ".repeat(width - s.chars().count()));
    writeln!(out, "{sep}\n{}\n{sep}", row(TITLE))?;
    for b in blocks {
        for l in b {
            writeln!(out, "{}", row(l))?;
        }
        writeln!(out, "{sep}")?;
    }
    Ok(())
}

/// oslo.upgradecheck's common policy check: a JSON policy file still in use
/// is a warning.
fn policy_json(options: &Options) -> (Outcome, Option<String>) {
    let settings = app::policy_settings(options);
    if !settings.policy_file.to_ascii_lowercase().ends_with(".json") {
        return (Outcome::Success, None);
    }
    if settings.paths().policy_file.is_file() {
        return (
            Outcome::Warning,
            Some(
                "Your policy file is JSON-formatted which is deprecated. Convert it to YAML and set \
                 [oslo_policy]/policy_file to the new file."
                    .into(),
            ),
        );
    }
    (Outcome::Success, None)
}

async fn database(options: &Options) -> (Outcome, Option<String>) {
    let d = match app::open_database(options).await {
        Ok(d) => d,
        Err(e) => return (Outcome::Failure, Some(e.to_string())),
    };
    let checked = crate::db::check_schema(&d).await;
    d.close().await;
    match checked {
        Ok(()) => (Outcome::Success, None),
        Err(e) => (Outcome::Failure, Some(super::one_line(&e.to_string()))),
    }
}

/// The drivers load, the default driver exists, and at least one is enabled.
async fn drivers(options: &Options) -> (Outcome, Option<String>) {
    let host = match app::start_drivers(options).await {
        Ok(h) => h,
        Err(e) => return (Outcome::Failure, Some(e.to_string())),
    };
    let registry = host.registry();
    if let Err(e) = registry.default_name() {
        return (Outcome::Failure, Some(e.message));
    }
    let names = registry.names();
    if names.is_empty() {
        return (
            Outcome::Warning,
            Some("No cluster driver is enabled: cluster template creation will fail.".into()),
        );
    }
    let refused: Vec<String> = host
        .refused()
        .iter()
        .map(|r| format!("{}: {}", r.name, r.reason))
        .collect();
    if !refused.is_empty() {
        return (
            Outcome::Warning,
            Some(format!("Refused driver packages: {}", refused.join("; "))),
        );
    }
    (
        Outcome::Success,
        Some(format!("Installed drivers: {}", names.join(", "))),
    )
}
