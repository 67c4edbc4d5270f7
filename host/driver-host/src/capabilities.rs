//! Capabilities: what a driver asks for in its manifest, what the operator
//! grants it in magnum.conf, and the checks that compare them, at load and
//! on every import call.
//!
//! A driver is loaded only when everything it requests is granted; its
//! effective capabilities are then what it requested (requested ∩ granted).
//! The coarse check is on the component's imports: a component importing
//! `kube`, `openstack` or `cluster-secrets` must have requested (and been
//! granted) that capability.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A wildcard in a grant: any api version, kind, namespace or verb.
pub const ANY: &str = "*";

/// The Kubernetes verbs a rule may allow.
pub const VERBS: [&str; 4] = ["get", "list", "apply", "delete"];

/// The OpenStack call groups a driver may be granted (the WIT `openstack`
/// interface documents which functions each covers).
pub const OPENSTACK_CALLS: [&str; 6] = [
    "resolve",
    "server-groups",
    "application-credentials",
    "load-balancers",
    "volume-types",
    "share-types",
];

/// One rule of Kubernetes access: these kinds of one api version, with
/// these verbs, in these namespaces (and cluster-scoped objects when
/// `cluster_scoped`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KubeRule {
    pub api_version: String,
    pub kinds: Vec<String>,
    pub verbs: Vec<String>,
    #[serde(default)]
    pub namespaces: Vec<String>,
    #[serde(default)]
    pub cluster_scoped: bool,
}

impl KubeRule {
    /// Parses the magnum.conf spelling of a rule,
    /// `<api-version>/<kind>:<verb>[+<verb>…][@<namespace>]`, where each part
    /// may be `*` and a rule without `@` covers cluster-scoped objects:
    /// `v1/Secret:get+apply+delete@magnum-system`,
    /// `cluster.x-k8s.io/v1beta2/*:*@magnum-system`, `v1/Namespace:get+apply`.
    pub fn parse(s: &str) -> Result<KubeRule, String> {
        let s = s.trim();
        let (rest, namespace) = match s.rsplit_once('@') {
            Some((r, ns)) => (r, Some(ns.trim())),
            None => (s, None),
        };
        let (resource, verbs) = rest.rsplit_once(':').ok_or_else(|| {
            format!("kube grant {s:?} has no verbs (<api-version>/<kind>:<verbs>[@<namespace>])")
        })?;
        let (api_version, kind) = resource.rsplit_once('/').ok_or_else(|| {
            format!("kube grant {s:?} has no kind (<api-version>/<kind>:<verbs>[@<namespace>])")
        })?;
        let verbs: Vec<String> = verbs.split('+').map(|v| v.trim().to_string()).collect();
        let rule = KubeRule {
            api_version: api_version.trim().to_string(),
            kinds: vec![kind.trim().to_string()],
            verbs,
            namespaces: namespace.map(|n| vec![n.to_string()]).unwrap_or_default(),
            cluster_scoped: namespace.is_none(),
        };
        rule.check()?;
        Ok(rule)
    }

    /// Refuses an empty field or an unknown verb.
    pub fn check(&self) -> Result<(), String> {
        if self.api_version.is_empty()
            || self.kinds.iter().any(String::is_empty)
            || self.kinds.is_empty()
        {
            return Err(format!("kube rule {self} names no api version or kind"));
        }
        if self.verbs.is_empty() {
            return Err(format!("kube rule {self} names no verb"));
        }
        for v in &self.verbs {
            if v != ANY && !VERBS.contains(&v.as_str()) {
                return Err(format!(
                    "kube rule {self} has the unknown verb {v:?} (known: {}, or *)",
                    VERBS.join(", ")
                ));
            }
        }
        if self.namespaces.iter().any(String::is_empty) {
            return Err(format!("kube rule {self} has an empty namespace"));
        }
        Ok(())
    }

    fn matches(&self, api_version: &str, kind: &str, verb: &str, namespace: Option<&str>) -> bool {
        covers(&self.api_version, api_version)
            && self.kinds.iter().any(|k| covers(k, kind))
            && self.verbs.iter().any(|v| covers(v, verb))
            && match namespace {
                Some(ns) => self.namespaces.iter().any(|n| covers(n, ns)),
                None => self.cluster_scoped,
            }
    }
}

impl fmt::Display for KubeRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}:{}",
            self.api_version,
            self.kinds.join("|"),
            self.verbs.join("+")
        )?;
        if !self.namespaces.is_empty() {
            write!(f, "@{}", self.namespaces.join("|"))?;
        }
        if self.cluster_scoped && !self.namespaces.is_empty() {
            f.write_str(" (and cluster-scoped)")?;
        }
        Ok(())
    }
}

/// Whether a granted pattern covers a value: `*`, or the same text.
fn covers(pattern: &str, value: &str) -> bool {
    pattern == ANY || pattern == value
}

/// A set of capabilities: requested in a manifest, granted by the operator,
/// or effective.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Capabilities {
    /// Kubernetes access, by rule.
    #[serde(default)]
    pub kube: Vec<KubeRule>,
    /// OpenStack call groups.
    #[serde(default)]
    pub openstack: BTreeSet<String>,
    /// The cluster's certificates.
    #[serde(default)]
    pub cluster_secrets: bool,
    /// Reading files under the directory the operator grants.
    #[serde(default)]
    pub files: bool,
}

impl Capabilities {
    /// Refuses unknown OpenStack calls and malformed rules.
    pub fn check(&self) -> Result<(), String> {
        for rule in &self.kube {
            rule.check()?;
        }
        for call in &self.openstack {
            if call != ANY && !OPENSTACK_CALLS.contains(&call.as_str()) {
                return Err(format!(
                    "unknown openstack capability {call:?} (known: {})",
                    OPENSTACK_CALLS.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Whether Kubernetes access to this object with this verb is allowed.
    pub fn allows_kube(
        &self,
        api_version: &str,
        kind: &str,
        verb: &str,
        namespace: Option<&str>,
    ) -> bool {
        self.kube
            .iter()
            .any(|r| r.matches(api_version, kind, verb, namespace))
    }

    /// Whether any Kubernetes access is allowed at all.
    pub fn has_kube(&self) -> bool {
        !self.kube.is_empty()
    }

    /// Whether the OpenStack call group is allowed.
    pub fn allows_openstack(&self, call: &str) -> bool {
        self.openstack.iter().any(|c| covers(c, call))
    }

    /// The first thing of `self` (requested) that `granted` does not cover,
    /// described in one line; `None` when everything is covered.
    pub fn first_not_covered_by(&self, granted: &Capabilities) -> Option<String> {
        for rule in &self.kube {
            for kind in &rule.kinds {
                for verb in &rule.verbs {
                    let mut scopes: Vec<Option<&str>> =
                        rule.namespaces.iter().map(|n| Some(n.as_str())).collect();
                    if rule.cluster_scoped {
                        scopes.push(None);
                    }
                    for ns in scopes {
                        if !granted.allows_kube(&rule.api_version, kind, verb, ns) {
                            let where_ = match ns {
                                Some(ns) => format!("in namespace {ns}"),
                                None => "cluster-scoped".to_string(),
                            };
                            return Some(format!(
                                "kube {verb} of {}/{kind} {where_}",
                                rule.api_version
                            ));
                        }
                    }
                }
            }
        }
        for call in &self.openstack {
            if !granted.allows_openstack(call) {
                return Some(format!("openstack {call}"));
            }
        }
        if self.cluster_secrets && !granted.cluster_secrets {
            return Some("cluster-secrets".to_string());
        }
        if self.files && !granted.files {
            return Some("files".to_string());
        }
        None
    }

    /// A one-line summary for `driver list` ("none" when empty).
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for r in &self.kube {
            parts.push(format!("kube {r}"));
        }
        if !self.openstack.is_empty() {
            parts.push(format!(
                "openstack {}",
                self.openstack.iter().cloned().collect::<Vec<_>>().join("+")
            ));
        }
        if self.cluster_secrets {
            parts.push("cluster-secrets".to_string());
        }
        if self.files {
            parts.push("files".to_string());
        }
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join("; ")
        }
    }
}

/// The capability an imported interface of the contract needs, by the
/// interface's name (`kube`); `None` for an interface always linked.
pub fn capability_of_interface(interface: &str) -> Option<&'static str> {
    match interface {
        "kube" => Some("kube"),
        "openstack" => Some("openstack"),
        "cluster-secrets" => Some("cluster-secrets"),
        _ => None,
    }
}

/// Whether `caps` grant the coarse capability of an interface.
pub fn grants_interface(caps: &Capabilities, capability: &str) -> bool {
    match capability {
        "kube" => caps.has_kube(),
        "openstack" => !caps.openstack.is_empty(),
        "cluster-secrets" => caps.cluster_secrets,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(s: &str) -> KubeRule {
        KubeRule::parse(s).unwrap_or_default()
    }

    #[test]
    fn grant_spelling_parses() {
        let r = rule("v1/Secret:get+apply+delete@magnum-system");
        assert_eq!(r.api_version, "v1");
        assert_eq!(r.kinds, vec!["Secret"]);
        assert_eq!(r.verbs, vec!["get", "apply", "delete"]);
        assert_eq!(r.namespaces, vec!["magnum-system"]);
        assert!(!r.cluster_scoped);
        let r = rule("cluster.x-k8s.io/v1beta2/*:*@magnum-system");
        assert_eq!(r.api_version, "cluster.x-k8s.io/v1beta2");
        assert_eq!(r.kinds, vec!["*"]);
        let r = rule("v1/Namespace:get+apply");
        assert!(r.cluster_scoped);
        assert!(KubeRule::parse("v1/Secret@ns").is_err());
        assert!(KubeRule::parse("Secret:get@ns").is_err());
        assert!(KubeRule::parse("v1/Secret:patch@ns").is_err());
    }

    #[test]
    fn runtime_checks_follow_kind_verb_and_namespace() {
        let caps = Capabilities {
            kube: vec![rule("v1/ConfigMap:get+apply@magnum-system")],
            ..Default::default()
        };
        assert!(caps.allows_kube("v1", "ConfigMap", "apply", Some("magnum-system")));
        assert!(!caps.allows_kube("v1", "ConfigMap", "delete", Some("magnum-system")));
        assert!(!caps.allows_kube("v1", "ConfigMap", "apply", Some("kube-system")));
        assert!(!caps.allows_kube("v1", "Secret", "apply", Some("magnum-system")));
        assert!(!caps.allows_kube("v1", "ConfigMap", "apply", None));
    }

    #[test]
    fn requested_must_be_covered_by_granted() {
        let requested = Capabilities {
            kube: vec![rule("v1/Secret:get+apply@magnum-system")],
            openstack: ["resolve".to_string()].into(),
            ..Default::default()
        };
        let wide = Capabilities {
            kube: vec![rule("*/*:*@*")],
            openstack: ["*".to_string()].into(),
            ..Default::default()
        };
        assert_eq!(requested.first_not_covered_by(&wide), None);
        let narrow = Capabilities {
            kube: vec![rule("v1/Secret:get@magnum-system")],
            openstack: ["resolve".to_string()].into(),
            ..Default::default()
        };
        assert_eq!(
            requested.first_not_covered_by(&narrow).as_deref(),
            Some("kube apply of v1/Secret in namespace magnum-system")
        );
        let no_openstack = Capabilities {
            kube: vec![rule("v1/Secret:*@magnum-system")],
            ..Default::default()
        };
        assert_eq!(
            requested.first_not_covered_by(&no_openstack).as_deref(),
            Some("openstack resolve")
        );
        let secrets = Capabilities {
            cluster_secrets: true,
            ..Default::default()
        };
        assert_eq!(
            secrets
                .first_not_covered_by(&Capabilities::default())
                .as_deref(),
            Some("cluster-secrets")
        );
    }

    #[test]
    fn a_requested_wildcard_needs_a_granted_wildcard() {
        let requested = Capabilities {
            kube: vec![rule("v1/*:get@magnum-system")],
            ..Default::default()
        };
        let granted = Capabilities {
            kube: vec![rule("v1/Secret:get@magnum-system")],
            ..Default::default()
        };
        assert!(requested.first_not_covered_by(&granted).is_some());
    }

    #[test]
    fn unknown_openstack_calls_are_refused() {
        let caps = Capabilities {
            openstack: ["nova-boot".to_string()].into(),
            ..Default::default()
        };
        assert!(caps.check().is_err());
    }
}
