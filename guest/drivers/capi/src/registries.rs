//! The registry mirrors and insecure registries of containerd on the
//! nodes: the driver options `registry_mirrors` and `insecure_registries`
//! (site-wide defaults) and the cluster labels of the same names, merged
//! and rendered into the CRI plugin's registry section of containerd's
//! configuration ([`crate::node_config::containerd_config`]).
//!
//! Every value is checked before it reaches a node: a registry is
//! `host[:port]`, a mirror an `http` or `https` URL of such a host with an
//! optional path, so nothing but those characters is ever written into
//! the TOML.

use std::collections::{BTreeMap, BTreeSet};

use openkeel_magnum_driver::{ClusterTemplate, DriverError, Labels};

/// The label (and driver option) of the mirrors: `<registry>=<url>`
/// entries, separated by spaces, commas or semicolons; a registry given
/// several mirrors tries them in order, then the registry itself.
pub const REGISTRY_MIRRORS: &str = "registry_mirrors";
/// The label (and driver option) of the registries whose TLS certificate
/// containerd does not verify: `host[:port]` entries, separated as the
/// mirrors.
pub const INSECURE_REGISTRIES: &str = "insecure_registries";

/// The longest registry host name (DNS's limit).
const MAX_HOST_LEN: usize = 253;
/// The longest mirror URL taken.
const MAX_URL_LEN: usize = 512;

/// The mirrors of each registry, and the registries not verified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Registries {
    /// The mirror URLs of each registry, in the order they are tried.
    pub mirrors: BTreeMap<String, Vec<String>>,
    /// The registries (`host[:port]`) whose TLS certificate is not
    /// verified.
    pub insecure: BTreeSet<String>,
}

impl Registries {
    /// Whether there is nothing to configure.
    pub fn is_empty(&self) -> bool {
        self.mirrors.is_empty() && self.insecure.is_empty()
    }

    /// Parses the two values (an option's or a label's), `what` naming
    /// them in the error (`"Label"`, `"Driver option"`). The message of a
    /// malformed entry names the key and the entry.
    pub fn parse(what: &str, mirrors: &str, insecure: &str) -> Result<Registries, String> {
        let mut r = Registries::default();
        for entry in entries(mirrors) {
            let (registry, url) = entry
                .split_once('=')
                .filter(|(reg, url)| is_registry(reg) && is_mirror_url(url))
                .ok_or_else(|| {
                    format!(
                        "{what} {REGISTRY_MIRRORS} has an invalid entry {entry:?}: expected \
                         <registry>=<mirror URL>, such as \
                         docker.io=https://mirror.example.com:5000, the registry a host with \
                         an optional port and the mirror an http or https URL."
                    )
                })?;
            let urls = r.mirrors.entry(registry.to_ascii_lowercase()).or_default();
            let url = url.trim_end_matches('/').to_string();
            if !urls.contains(&url) {
                urls.push(url);
            }
        }
        for entry in entries(insecure) {
            if !is_registry(entry) {
                return Err(format!(
                    "{what} {INSECURE_REGISTRIES} has an invalid entry {entry:?}: expected a \
                     registry host with an optional port, such as registry.example.com:5000."
                ));
            }
            r.insecure.insert(entry.to_ascii_lowercase());
        }
        Ok(r)
    }

    /// The registries of a cluster: the site-wide `defaults`, the
    /// template's `insecure_registry` (Magnum's field, a host with an
    /// optional port or a URL), and the labels. A label's mirrors of a
    /// registry replace the defaults' for that registry; the insecure
    /// registries add up. A malformed label or template field is a 400.
    pub fn of_cluster(
        defaults: &Registries,
        template: &ClusterTemplate,
        labels: &Labels,
    ) -> Result<Registries, DriverError> {
        let own = Registries::parse(
            "Label",
            labels.str_or(REGISTRY_MIRRORS, ""),
            labels.str_or(INSECURE_REGISTRIES, ""),
        )
        .map_err(DriverError::invalid)?;
        let mut r = defaults.clone();
        r.mirrors.extend(own.mirrors);
        r.insecure.extend(own.insecure);
        if let Some(field) = template
            .insecure_registry
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            let host = field
                .strip_prefix("https://")
                .or_else(|| field.strip_prefix("http://"))
                .unwrap_or(field)
                .trim_end_matches('/');
            if !is_registry(host) {
                return Err(DriverError::invalid(format!(
                    "The cluster template's insecure_registry {field:?} is not a registry host \
                     with an optional port."
                )));
            }
            r.insecure.insert(host.to_ascii_lowercase());
        }
        Ok(r)
    }

    /// The CRI plugin's registry tables for containerd's configuration
    /// (version 2), indented as the rest of the plugins; "" when there is
    /// nothing to configure.
    pub fn cri_tables(&self) -> String {
        let registry = "plugins.\"io.containerd.grpc.v1.cri\".registry";
        let mut toml = String::new();
        for (host, urls) in &self.mirrors {
            let endpoints: Vec<String> = urls.iter().map(|u| format!("\"{u}\"")).collect();
            toml.push_str(&format!(
                "  [{registry}.mirrors.\"{host}\"]\n    endpoint = [{}]\n",
                endpoints.join(", ")
            ));
        }
        for host in &self.insecure {
            toml.push_str(&format!(
                "  [{registry}.configs.\"{host}\".tls]\n    insecure_skip_verify = true\n"
            ));
        }
        toml
    }
}

/// The entries of a list: separated by whitespace, commas or semicolons
/// (Magnum's client turns semicolons into commas), blanks dropped.
fn entries(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|e| !e.is_empty())
}

/// Whether `s` is `host[:port]`: dot-separated alphanumeric labels with
/// inner hyphens (a name or an IPv4 address), and a port from 1 to
/// 65535.
pub fn is_registry(s: &str) -> bool {
    let (host, port) = match s.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (s, None),
    };
    let port_ok = port.is_none_or(|p| {
        p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|n| n > 0)
    });
    port_ok && !host.is_empty() && host.len() <= MAX_HOST_LEN && host.split('.').all(is_host_label)
}

/// A label of a host name.
fn is_host_label(c: &str) -> bool {
    let b = c.as_bytes();
    matches!((b.first(), b.last()), (Some(f), Some(l)) if f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric())
        && b.len() <= 63
        && b.iter().all(|x| x.is_ascii_alphanumeric() || *x == b'-')
}

/// Whether `url` is `http[s]://host[:port][/path]`, the path made of
/// unreserved characters and `/` only.
pub fn is_mirror_url(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return false;
    };
    let (authority, path) = match rest.split_once('/') {
        Some((a, p)) => (a, p),
        None => (rest, ""),
    };
    url.len() <= MAX_URL_LEN
        && is_registry(authority)
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirrors_and_insecure_registries_are_parsed_in_order() {
        let r = Registries::parse(
            "Label",
            "docker.io=https://m1.example.com:5000/v2/ , quay.io=http://10.0.0.5:8080;\
             docker.io=https://m2.example.com docker.io=https://m1.example.com:5000/v2",
            " Registry.Local:5000,10.0.0.5:8080 ",
        )
        .unwrap();
        assert_eq!(
            r.mirrors["docker.io"],
            ["https://m1.example.com:5000/v2", "https://m2.example.com"]
        );
        assert_eq!(r.mirrors["quay.io"], ["http://10.0.0.5:8080"]);
        assert_eq!(
            r.insecure.iter().collect::<Vec<_>>(),
            ["10.0.0.5:8080", "registry.local:5000"]
        );
        assert!(Registries::parse("Label", "  ", "").unwrap().is_empty());
    }

    #[test]
    fn a_malformed_entry_is_refused() {
        for bad in [
            "docker.io",
            "docker.io=",
            "=https://m.example.com",
            "docker.io=ftp://m.example.com",
            "docker.io=m.example.com",
            "docker.io=https://m.example.com:99999",
            "docker.io=https://m.example.com:0",
            "docker.io=https://m.example.com/a\"b",
            "docker.io=https://m.example.com/a]b",
            "docker.io=https://user@m.example.com",
            "docker.io=https://m.example.com/?q=1",
            "dock\"er.io=https://m.example.com",
            "-docker.io=https://m.example.com",
            "docker..io=https://m.example.com",
            "docker.io=https://m.exa\nmple.com",
        ] {
            let e = Registries::parse("Label", bad, "").unwrap_err();
            assert!(
                e.contains("registry_mirrors has an invalid entry"),
                "{bad}: {e}"
            );
        }
        for bad in [
            "https://r.example.com",
            "r.example.com/path",
            "r:",
            "r:abc",
            "r\"x",
        ] {
            let e = Registries::parse("Driver option", "", bad).unwrap_err();
            assert!(
                e.starts_with("Driver option insecure_registries has an invalid entry"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn labels_replace_the_defaults_of_a_registry_and_add_insecure_ones() {
        let defaults = Registries::parse(
            "Driver option",
            "docker.io=https://site.example.com quay.io=https://site.example.com/quay",
            "site.example.com",
        )
        .unwrap();
        let template = ClusterTemplate {
            insecure_registry: Some("http://old.example.com:5000/".into()),
            ..ClusterTemplate::default()
        };
        let l = Labels::from([
            (REGISTRY_MIRRORS, "docker.io=https://own.example.com"),
            (INSECURE_REGISTRIES, "own.example.com"),
        ]);
        let r = Registries::of_cluster(&defaults, &template, &l).unwrap();
        assert_eq!(r.mirrors["docker.io"], ["https://own.example.com"]);
        assert_eq!(r.mirrors["quay.io"], ["https://site.example.com/quay"]);
        assert_eq!(
            r.insecure.iter().collect::<Vec<_>>(),
            [
                "old.example.com:5000",
                "own.example.com",
                "site.example.com"
            ]
        );

        let e = Registries::of_cluster(
            &defaults,
            &ClusterTemplate::default(),
            &Labels::from([(REGISTRY_MIRRORS, "docker.io=https://a b")]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("invalid entry \"b\""), "{e}");
        let bad_template = ClusterTemplate {
            insecure_registry: Some("a b".into()),
            ..ClusterTemplate::default()
        };
        let e = Registries::of_cluster(&defaults, &bad_template, &Labels::new()).unwrap_err();
        assert!(e.to_string().contains("insecure_registry"), "{e}");
    }

    #[test]
    fn the_cri_tables_name_each_mirror_and_insecure_registry() {
        assert_eq!(Registries::default().cri_tables(), "");
        let r = Registries::parse(
            "Label",
            "docker.io=https://m1.example.com docker.io=http://m2.example.com:80/v2",
            "m1.example.com",
        )
        .unwrap();
        assert_eq!(
            r.cri_tables(),
            "  [plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n    \
             endpoint = [\"https://m1.example.com\", \"http://m2.example.com:80/v2\"]\n  \
             [plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"m1.example.com\".tls]\n    \
             insecure_skip_verify = true\n"
        );
    }
}
