//! What `openkeel-magnum driver list [--details]`, `driver inspect FILE`
//! and `driver validate FILE` show: the rows and reports, and a table
//! renderer in `magnum-driver-manage`'s style. The binary only prints them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use semver::Version;

use crate::capabilities::Capabilities;
use crate::driver::Driver;
use crate::host::{DriverHost, Refusal, read_package};
use crate::package::{self, EntryPointInfo, Origin, PackageSource, World, supported_wit_range};
use crate::settings::Limits;
use crate::types::Target;

/// One row of `driver list`: an entry point, and with `--details` one row
/// per cluster type it provides.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ListRow {
    pub name: String,
    /// With `--details`.
    pub target: Option<Target>,
    /// magnum-driver-manage's template path column: always "n/a".
    pub path: String,
    pub package: String,
    pub version: String,
    pub wit: String,
    /// "built-in" or the directory it was loaded from.
    pub source: String,
    pub sha256: String,
    /// "enabled", "enabled (beta)", "beta, not enabled", "disabled" or
    /// "refused: <reason>".
    pub state: String,
    pub granted: String,
    pub limits: String,
    pub health: String,
}

/// A table: a header and rows of cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The table drawn as magnum-driver-manage (cliff) draws one.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                if let Some(w) = widths.get_mut(i) {
                    *w = (*w).max(c.chars().count());
                }
            }
        }
        let sep: String = std::iter::once("+".to_string())
            .chain(widths.iter().map(|w| format!("{}+", "-".repeat(w + 2))))
            .collect();
        let line = |cells: &[String]| -> String {
            let mut s = String::from("|");
            for (i, w) in widths.iter().enumerate() {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                s.push_str(&format!(" {c}{} |", " ".repeat(w - c.chars().count())));
            }
            s
        };
        let mut out = vec![sep.clone(), line(&self.header), sep.clone()];
        out.extend(self.rows.iter().map(|r| line(r)));
        out.push(sep);
        out.join("\n") + "\n"
    }
}

impl DriverHost {
    fn state_of(&self, d: &Driver) -> String {
        let r = self.registry();
        if r.is_disabled(d.name()) {
            "disabled".to_string()
        } else if d.beta() && r.is_beta_enabled(d.name()) {
            "enabled (beta)".to_string()
        } else if d.beta() {
            "beta, not enabled".to_string()
        } else {
            "enabled".to_string()
        }
    }

    /// The rows of `driver list [--details]`: every loaded entry point
    /// (disabled ones marked), then the refused packages.
    pub fn list_rows(&self, details: bool) -> Vec<ListRow> {
        let mut rows = Vec::new();
        for d in self.registry().all() {
            let base = ListRow {
                name: d.name().to_string(),
                target: None,
                path: "n/a".to_string(),
                package: d.package().to_string(),
                version: d.version().to_string(),
                wit: d.wit_version().to_string(),
                source: d.origin().to_string(),
                sha256: d.sha256().to_string(),
                state: self.state_of(d),
                granted: d.capabilities().summary(),
                limits: d.limits().summary(),
                health: match d.watch_refusal() {
                    Some(r) => format!("{}; {r} (its clusters are polled)", d.health().summary()),
                    None => d.health().summary(),
                },
            };
            if details {
                for t in d.provides() {
                    rows.push(ListRow {
                        target: Some(t.clone()),
                        ..base.clone()
                    });
                }
            } else {
                rows.push(base);
            }
        }
        for r in self.refused() {
            rows.push(ListRow {
                name: r.name.clone(),
                target: None,
                path: "n/a".to_string(),
                package: r.name.clone(),
                version: String::new(),
                wit: String::new(),
                source: r.origin.to_string(),
                sha256: String::new(),
                state: format!("refused: {}", r.reason),
                granted: String::new(),
                limits: String::new(),
                health: String::new(),
            });
        }
        rows
    }

    /// Asks every driver what it watches for a cluster of each cluster type
    /// it provides, and records the selectors its grants do not cover
    /// (shown by `driver list`): the reconciler would poll its clusters.
    pub async fn probe_watches(&self) {
        for d in self.registry().all() {
            let mut refusal = None;
            for t in d.provides() {
                let st = probe_state(d.name(), t);
                let Ok(selectors) = d.watches(&crate::CallContext::admin(), &st).await else {
                    continue;
                };
                if let Some(r) = selectors.iter().find_map(|s| d.may_watch(s).err()) {
                    refusal = Some(r);
                    break;
                }
            }
            d.note_watch_refusal(refusal);
        }
    }

    /// `driver list [--details]` as a table.
    pub fn list_table(&self, details: bool) -> Table {
        let mut header: Vec<&str> = vec!["Name"];
        if details {
            header.extend(["Server_Type", "OS", "COE"]);
        }
        header.extend(["Version", "WIT", "Source"]);
        if details {
            header.push("SHA256");
        }
        header.push("State");
        if details {
            header.extend(["Granted", "Limits"]);
        }
        header.push("Health");
        let rows = self
            .list_rows(details)
            .into_iter()
            .map(|r| {
                let mut row = vec![r.name];
                if details {
                    let t = r.target.unwrap_or_else(|| Target::new("", "", ""));
                    row.extend([t.server_type, t.os, t.coe]);
                }
                row.extend([r.version, r.wit, r.source]);
                if details {
                    row.push(r.sha256);
                }
                row.push(r.state);
                if details {
                    row.extend([r.granted, r.limits]);
                }
                row.push(r.health);
                row
            })
            .collect();
        Table {
            header: header.into_iter().map(str::to_string).collect(),
            rows,
        }
    }

    /// `driver inspect FILE`: a component (with the `driver.toml` beside
    /// it), a manifest, or a package directory.
    pub async fn inspect(&self, path: &Path) -> Report {
        let mut report = Report::new(path);
        let src = match locate(path) {
            Ok(s) => s,
            Err(LocateError::Refused(r)) => {
                report.verdict = Err(r.reason);
                return report;
            }
            Err(LocateError::NoManifest(bytes)) => {
                // Without a manifest there is still a world to show.
                report.sha256 = Some(crate::sandbox::sha256_hex(&bytes));
                if let Ok(c) = self.sandbox.compile("(no manifest)", &bytes, "") {
                    report.world = Some(package::world_of(&self.sandbox.engine, &c));
                }
                report.verdict = Err(format!(
                    "no driver.toml beside {}: a driver needs its manifest",
                    path.display()
                ));
                return report;
            }
        };
        match package::load(
            &self.sandbox,
            &self.services,
            &self.settings,
            &self.settings.breaker,
            src,
        )
        .await
        {
            Ok(pkg) => {
                report.name = Some(pkg.name().to_string());
                report.version = Some(pkg.manifest.driver.version.clone());
                report.wit_required = Some(pkg.manifest.driver.wit.to_string());
                report.wit_version = Some(pkg.wit_version.clone());
                report.sha256 = Some(pkg.sha256.clone());
                report.world = Some(pkg.world.clone());
                report.entry_points = pkg.entry_points.clone();
                report.requested = Some(pkg.manifest.capabilities.clone());
                report.granted = Some(pkg.ctx.caps.clone());
                report.limits = Some(pkg.ctx.limits.clone());
                report.verdict = self.clash(pkg.name(), &pkg.entry_points);
            }
            Err((e, ex)) => {
                if let Some(ex) = ex {
                    report.name = Some(ex.manifest.driver.name.clone());
                    report.version = Some(ex.manifest.driver.version.clone());
                    report.wit_required = Some(ex.manifest.driver.wit.to_string());
                    report.wit_version = ex.wit_version;
                    report.sha256 = Some(ex.sha256);
                    report.world = ex.world;
                    report.entry_points = EntryPointInfo::declared(&ex.manifest);
                    report.requested = Some(ex.requested);
                    report.granted = Some(ex.granted);
                    report.limits = ex.limits;
                }
                report.verdict = Err(e.0);
            }
        }
        report
    }

    /// `driver validate FILE`: whether this host would load it, and if not,
    /// why. [`Report::exit_code`] is the command's status.
    pub async fn validate(&self, path: &Path) -> Report {
        self.inspect(path).await
    }

    /// A refusal when a loaded driver already has the package's name or
    /// one of its entry points (the file being inspected itself excepted).
    fn clash(&self, name: &str, eps: &[EntryPointInfo]) -> Result<(), String> {
        for d in self.registry().all() {
            if d.package() == name {
                continue;
            }
            if let Some(e) = eps.iter().find(|e| e.name == d.name()) {
                return Err(format!(
                    "driver {name}: entry point {} is already provided by driver {}",
                    e.name,
                    d.package()
                ));
            }
        }
        Ok(())
    }
}

enum LocateError {
    Refused(Refusal),
    NoManifest(Vec<u8>),
}

/// Finds the package a path names.
fn locate(path: &Path) -> Result<PackageSource, LocateError> {
    let refuse = |reason: String| {
        LocateError::Refused(Refusal {
            name: path.display().to_string(),
            origin: Origin::Path(path.to_path_buf()),
            reason,
        })
    };
    let manifest = if path.is_dir() {
        path.join("driver.toml")
    } else if path.extension().is_some_and(|e| e == "toml") {
        path.to_path_buf()
    } else {
        let beside = path.parent().unwrap_or(Path::new(".")).join("driver.toml");
        let bytes = std::fs::read(path)
            .map_err(|e| refuse(format!("cannot read {}: {e}", path.display())))?;
        if !beside.is_file() {
            return Err(LocateError::NoManifest(bytes));
        }
        let text = std::fs::read_to_string(&beside)
            .map_err(|e| refuse(format!("cannot read {}: {e}", beside.display())))?;
        return Ok(PackageSource {
            manifest: text,
            component: Arc::from(bytes),
            origin: Origin::Path(path.to_path_buf()),
        });
    };
    read_package(&manifest).map_err(LocateError::Refused)
}

/// What `driver inspect` and `driver validate` found.
#[derive(Clone, Debug)]
pub struct Report {
    pub path: PathBuf,
    pub name: Option<String>,
    pub version: Option<Version>,
    /// The manifest's `wit` requirement.
    pub wit_required: Option<String>,
    /// The contract version the component is built for.
    pub wit_version: Option<Version>,
    pub sha256: Option<String>,
    pub world: Option<World>,
    pub entry_points: Vec<EntryPointInfo>,
    pub requested: Option<Capabilities>,
    /// What the operator's settings grant it.
    pub granted: Option<Capabilities>,
    pub limits: Option<Limits>,
    /// `Ok` when this host would load it, else the one-line reason.
    pub verdict: Result<(), String>,
}

impl Report {
    fn new(path: &Path) -> Report {
        Report {
            path: path.to_path_buf(),
            name: None,
            version: None,
            wit_required: None,
            wit_version: None,
            sha256: None,
            world: None,
            entry_points: Vec::new(),
            requested: None,
            granted: None,
            limits: None,
            verdict: Ok(()),
        }
    }

    /// 0 when the host would load the driver, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.verdict.is_ok() { 0 } else { 1 }
    }

    /// `driver validate`'s output: one line.
    pub fn render_verdict(&self) -> String {
        match &self.verdict {
            Ok(()) => format!(
                "{}: driver {} {} would be loaded by this host",
                self.path.display(),
                self.name.as_deref().unwrap_or("?"),
                self.version
                    .as_ref()
                    .map(Version::to_string)
                    .unwrap_or_default()
            ),
            Err(r) => format!("{}: would be refused: {r}", self.path.display()),
        }
    }

    /// `driver inspect`'s output.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        out.push(format!("file: {}", self.path.display()));
        if let Some(n) = &self.name {
            out.push(format!(
                "driver: {n} {}",
                self.version
                    .as_ref()
                    .map(Version::to_string)
                    .unwrap_or_default()
            ));
        }
        if let Some(s) = &self.sha256 {
            out.push(format!("sha256: {s}"));
        }
        if let Some(w) = &self.wit_required {
            out.push(format!("requires: {} {w}", package::WIT_PACKAGE));
        }
        if let Some(v) = &self.wit_version {
            out.push(format!("built for: {}@{v}", package::WIT_PACKAGE));
        }
        out.push(format!("host supports: {}", supported_wit_range()));
        if let Some(w) = &self.world {
            out.push("imports:".to_string());
            out.extend(w.imports.iter().map(|i| format!("  {i}")));
            out.push("exports:".to_string());
            out.extend(w.exports.iter().map(|e| format!("  {e}")));
        }
        if !self.entry_points.is_empty() {
            out.push("entry points:".to_string());
            for e in &self.entry_points {
                out.push(format!(
                    "  {}{}: {}",
                    e.name,
                    if e.beta { " (beta)" } else { "" },
                    e.provides
                        .iter()
                        .map(Target::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        if let Some(r) = &self.requested {
            out.push(format!("requests: {}", r.summary()));
        }
        if let Some(g) = &self.granted {
            out.push(format!("granted: {}", g.summary()));
        }
        if let Some(l) = &self.limits {
            out.push(format!("limits: {}", l.summary()));
        }
        out.push(match &self.verdict {
            Ok(()) => "verdict: would be loaded".to_string(),
            Err(r) => format!("verdict: would be refused: {r}"),
        });
        out.join("\n") + "\n"
    }
}

/// The rows of a new cluster of `target` for `driver`, to ask it what it
/// would watch.
fn probe_state(driver: &str, target: &Target) -> crate::ClusterState {
    use magnum_domain::models::{Cluster, ClusterTemplate};
    crate::ClusterState {
        cluster: Cluster {
            uuid: "00000000-0000-4000-8000-000000000001".into(),
            name: "watch-probe".into(),
            ..Cluster::default()
        },
        template: ClusterTemplate {
            uuid: "00000000-0000-4000-8000-000000000002".into(),
            server_type: Some(target.server_type.clone()),
            cluster_distro: Some(target.os.clone()),
            coe: Some(target.coe.clone()),
            driver: Some(driver.to_string()),
            ..ClusterTemplate::default()
        },
        nodegroups: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_drawn_like_cliff() {
        let t = Table {
            header: vec!["Name".into(), "OS".into()],
            rows: vec![vec!["fake".into(), "ubuntu-focal".into()]],
        };
        assert_eq!(
            t.render(),
            "+------+--------------+\n| Name | OS           |\n+------+--------------+\n| fake | ubuntu-focal |\n+------+--------------+\n"
        );
    }
}
