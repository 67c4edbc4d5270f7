//! `driver.toml`: a driver package's manifest (parsed with `toml` and
//! serde, unknown fields refused).
//!
//! ```toml
//! manifest-version = 1
//! [driver]
//! name = "capi"                 # the package; [driver:capi] in magnum.conf
//! version = "1.0.0"             # the driver's own semver
//! wit = "^1.0"                  # the openkeel:magnum-driver versions it needs
//! description = "…"
//! component = "capi.wasm"       # beside the manifest (default <name>.wasm)
//! sha256 = "…"                  # optional: checked against the component
//! [[entry-points]]              # the names templates store
//! name = "k8s_cluster_api_ubuntu"
//! beta = false
//! description = "…"
//! provides = [{ server-type = "vm", os = "ubuntu", coe = "kubernetes" }]
//! [capabilities]                # what it asks for (see capabilities.rs)
//! kube = [{ api-version = "v1", kinds = ["Secret"], verbs = ["get", "apply"], namespaces = ["magnum-system"] }]
//! openstack = ["resolve"]
//! cluster-secrets = true
//! files = false
//! [limits]                      # what it needs; the operator's values win
//! memory-mb = 128
//! call-timeout-seconds = 60
//! output-kb = 4096
//! [options]                     # defaults of its own options
//! key = "value"
//! ```

use std::collections::BTreeMap;

use semver::{Version, VersionReq};
use serde::Deserialize;

use crate::capabilities::Capabilities;
use crate::error::LoadError;
use crate::types::Target;

/// The manifest versions this host reads.
pub const MANIFEST_VERSIONS: [i64; 1] = [1];

/// A parsed `driver.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Manifest {
    pub manifest_version: i64,
    pub driver: DriverSection,
    #[serde(default)]
    pub entry_points: Vec<EntryPointSection>,
    #[serde(default)]
    pub capabilities: Capabilities,
    #[serde(default)]
    pub limits: LimitsSection,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

/// `[driver]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DriverSection {
    pub name: String,
    pub version: Version,
    pub wit: VersionReq,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub component: Option<String>,
    #[serde(default)]
    pub sha256: Option<String>,
}

/// One `[[entry-points]]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EntryPointSection {
    pub name: String,
    #[serde(default)]
    pub beta: bool,
    #[serde(default)]
    pub description: String,
    pub provides: Vec<TargetSection>,
}

/// One `provides` tuple.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TargetSection {
    pub server_type: String,
    pub os: String,
    pub coe: String,
}

impl From<&TargetSection> for Target {
    fn from(t: &TargetSection) -> Self {
        Target::new(&t.server_type, &t.os, &t.coe)
    }
}

/// `[limits]`: what the driver needs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LimitsSection {
    pub memory_mb: Option<u64>,
    pub call_timeout_seconds: Option<u64>,
    pub output_kb: Option<u64>,
}

impl Manifest {
    /// Parses a manifest: `manifest-version` first, so that a newer format
    /// is refused by its version rather than by its fields; then the whole
    /// document, refusing unknown fields.
    pub fn parse(text: &str) -> Result<Manifest, LoadError> {
        let probe: toml::Table = toml::from_str(text)
            .map_err(|e| LoadError::new(format!("driver.toml: {}", toml_error(text, &e))))?;
        match probe.get("manifest-version") {
            None => return Err(LoadError::new("driver.toml: missing manifest-version")),
            Some(toml::Value::Integer(v)) if MANIFEST_VERSIONS.contains(v) => {}
            Some(v) => {
                return Err(LoadError::new(format!(
                    "driver.toml: manifest-version {v} is not supported by this host (supported: {})",
                    MANIFEST_VERSIONS.map(|v| v.to_string()).join(", ")
                )));
            }
        }
        let m: Manifest = toml::from_str(text)
            .map_err(|e| LoadError::new(format!("driver.toml: {}", toml_error(text, &e))))?;
        m.check()?;
        Ok(m)
    }

    fn check(&self) -> Result<(), LoadError> {
        let name = &self.driver.name;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(LoadError::new(format!(
                "driver.toml: driver name {name:?} must be letters, digits, '_' or '-'"
            )));
        }
        if self.entry_points.is_empty() {
            return Err(LoadError::new(format!(
                "driver.toml of {name}: no [[entry-points]]"
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for ep in &self.entry_points {
            if ep.name.is_empty() || !seen.insert(ep.name.as_str()) {
                return Err(LoadError::new(format!(
                    "driver.toml of {name}: entry point {:?} is empty or listed twice",
                    ep.name
                )));
            }
        }
        if let Some(sum) = &self.driver.sha256
            && (sum.len() != 64 || !sum.chars().all(|c| c.is_ascii_hexdigit()))
        {
            return Err(LoadError::new(format!(
                "driver.toml of {name}: sha256 must be 64 hexadecimal digits"
            )));
        }
        self.capabilities
            .check()
            .map_err(|e| LoadError::new(format!("driver.toml of {name}: {e}")))?;
        Ok(())
    }

    /// The component's file name, relative to the manifest.
    pub fn component_file(&self) -> String {
        self.driver
            .component
            .clone()
            .unwrap_or_else(|| format!("{}.wasm", self.driver.name))
    }
}

/// A TOML error in one line: its message and where.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {msg}")
        }
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
manifest-version = 1
[driver]
name = "demo"
version = "0.3.1"
wit = "^1.0"
[[entry-points]]
name = "demo"
provides = [{ server-type = "vm", os = "ubuntu", coe = "kubernetes" }]
"#;

    #[test]
    fn a_minimal_manifest_parses() {
        let m = Manifest::parse(MINIMAL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.driver.name, "demo");
        assert_eq!(m.driver.version, Version::new(0, 3, 1));
        assert!(m.driver.wit.matches(&Version::new(1, 0, 0)));
        assert_eq!(m.component_file(), "demo.wasm");
        assert!(!m.entry_points[0].beta);
        assert_eq!(m.capabilities, Capabilities::default());
    }

    #[test]
    fn the_built_in_fake_manifest_parses() {
        let m = Manifest::parse(include_str!("../../../guest/drivers/fake/driver.toml"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.entry_points[0].name, "fake");
        assert_eq!(m.entry_points[0].provides.len(), 8);
        assert_eq!(
            m.options.get("delay_seconds").map(String::as_str),
            Some("0")
        );
    }

    #[test]
    fn unknown_fields_are_refused_in_one_line() {
        let text = MINIMAL.replace("wit = \"^1.0\"", "wit = \"^1.0\"\ncolour = \"blue\"");
        let e = Manifest::parse(&text).unwrap_err();
        assert!(e.0.contains("unknown field `colour`"), "{e}");
        assert!(e.0.contains("line 7"), "{e}");
        assert!(!e.0.contains('\n'), "{e}");
    }

    #[test]
    fn the_manifest_version_is_probed_first() {
        let text = MINIMAL.replace(
            "manifest-version = 1",
            "manifest-version = 2\nnew-thing = 1",
        );
        assert_eq!(
            Manifest::parse(&text).unwrap_err().0,
            "driver.toml: manifest-version 2 is not supported by this host (supported: 1)"
        );
        let text = MINIMAL.replace("manifest-version = 1", "");
        assert_eq!(
            Manifest::parse(&text).unwrap_err().0,
            "driver.toml: missing manifest-version"
        );
    }

    #[test]
    fn bad_values_are_refused() {
        for (from, to) in [
            ("version = \"0.3.1\"", "version = \"three\""),
            ("wit = \"^1.0\"", "wit = \"one\""),
            ("name = \"demo\"\nversion", "name = \"de mo\"\nversion"),
        ] {
            assert!(
                Manifest::parse(&MINIMAL.replacen(from, to, 1)).is_err(),
                "{to}"
            );
        }
        let no_entry = MINIMAL.split("[[entry-points]]").next().unwrap_or_default();
        assert!(Manifest::parse(no_entry).is_err());
        let bad_sum = MINIMAL.replace("wit = \"^1.0\"", "wit = \"^1.0\"\nsha256 = \"abc\"");
        assert!(Manifest::parse(&bad_sum).is_err());
    }
}
