//! Magnum 23.0.0's 66 default rules (`magnum/common/policies`): 15 base
//! rules, some replacing a deprecated alternative, and 51 API rules, 32 of
//! them scoped to project tokens. A test compares them with the spec's
//! `policies.yaml` (the output of `oslopolicy-sample-generator`).
//!
//! The deprecated names carry a `rule:` prefix (`rule:admin_or_owner`):
//! Magnum declares them that way, so only a policy-file key spelled with the
//! prefix counts as an override of the deprecated name.

use oslo_policy::{DeprecatedRule, Operation, Rule};

/// Magnum: magnum/common/policies/base.py — the release the base rules
/// were deprecated in, and why.
const DEPRECATED_SINCE: &str = "OpenStack 2023.2(Magnum 17.0.0)";
const DEPRECATED_REASON: &str =
    "The Magnum API now enforces scoped tokens and default reader and member roles.";

/// One default, as data.
struct Default {
    name: &'static str,
    check: &'static str,
    description: &'static str,
    operations: &'static [(&'static str, &'static str)],
    scope_types: &'static [&'static str],
    /// The deprecated rule's name and check string.
    deprecated: Option<(&'static str, &'static str)>,
}

/// Magnum's default rules, in registration order.
pub fn magnum_defaults() -> Vec<Rule> {
    DEFAULTS
        .iter()
        .map(|d| Rule {
            name: d.name.to_owned(),
            check_string: d.check.to_owned(),
            description: d.description.to_owned(),
            operations: d
                .operations
                .iter()
                .map(|(method, path)| Operation {
                    method: (*method).to_owned(),
                    path: (*path).to_owned(),
                })
                .collect(),
            scope_types: d.scope_types.iter().map(|s| (*s).to_owned()).collect(),
            deprecated: d.deprecated.map(|(name, check)| DeprecatedRule {
                name: name.to_owned(),
                check_string: check.to_owned(),
                reason: DEPRECATED_REASON.to_owned(),
                since: DEPRECATED_SINCE.to_owned(),
            }),
        })
        .collect()
}

const DEFAULTS: &[Default] = &[
    Default {
        name: "context_is_admin",
        check: "role:admin",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "admin_or_owner",
        check: "is_admin:True or project_id:%(project_id)s",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "admin_or_user",
        check: "is_admin:True or user_id:%(user_id)s",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "is_user",
        check: "user_id:%(user_id)s",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "project_member",
        check: "role:member and project_id:%(project_id)s",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "project_reader",
        check: "role:reader and project_id:%(project_id)s",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "admin_or_project_reader",
        check: "(rule:context_is_admin) or (rule:project_reader)",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: Some((
            "rule:admin_or_owner",
            "is_admin:True or project_id:%(project_id)s",
        )),
    },
    Default {
        name: "admin_or_project_member",
        check: "(rule:context_is_admin) or (rule:project_member)",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: Some((
            "rule:admin_or_owner",
            "is_admin:True or project_id:%(project_id)s",
        )),
    },
    Default {
        name: "admin_or_project_member_user",
        check: "(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: Some((
            "rule:admin_or_user",
            "((rule:context_is_admin) or (rule:is_user))",
        )),
    },
    Default {
        name: "admin_or_project_member_user_or_cluster_user",
        check: "(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: Some((
            "rule:admin_or_user",
            "((rule:context_is_admin) or (rule:is_user))",
        )),
    },
    Default {
        name: "project_member_deny_cluster_user",
        check: "(rule:project_member)",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: Some((
            "rule:admin_or_owner",
            "is_admin:True or project_id:%(project_id)s",
        )),
    },
    Default {
        name: "admin_or_project_member_deny_cluster_user",
        check: "(rule:context_is_admin) or (rule:project_member)",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: Some((
            "rule:admin_or_owner",
            "is_admin:True or project_id:%(project_id)s",
        )),
    },
    Default {
        name: "project_reader_deny_cluster_user",
        check: "(rule:project_reader)",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: Some((
            "rule:admin_or_owner",
            "is_admin:True or project_id:%(project_id)s",
        )),
    },
    Default {
        name: "admin_or_project_reader_deny_cluster_user",
        check: "(rule:context_is_admin) or (rule:project_reader)",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: Some((
            "rule:admin_or_owner",
            "is_admin:True or project_id:%(project_id)s",
        )),
    },
    Default {
        name: "admin_or_project_reader_user",
        check: "(rule:context_is_admin) or ((rule:project_reader) and (rule:is_user))",
        description: "",
        operations: &[],
        scope_types: &[],
        deprecated: Some((
            "rule:admin_or_user",
            "((rule:context_is_admin) or (rule:is_user))",
        )),
    },
    Default {
        name: "certificate:create",
        check: "rule:admin_or_project_member_user",
        description: "Sign a new certificate by the CA.",
        operations: &[("POST", "/v1/certificates")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "certificate:get",
        check: "rule:admin_or_project_reader_user",
        description: "Retrieve CA information about the given cluster.",
        operations: &[("GET", "/v1/certificates/{cluster_uuid}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "certificate:rotate_ca",
        check: "rule:admin_or_project_member",
        description: "Rotate the CA certificate on the given cluster.",
        operations: &[("PATCH", "/v1/certificates/{cluster_uuid}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:create",
        check: "rule:admin_or_project_member_deny_cluster_user",
        description: "Create a new cluster.",
        operations: &[("POST", "/v1/clusters")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:delete",
        check: "rule:admin_or_project_member_deny_cluster_user",
        description: "Delete a cluster.",
        operations: &[("DELETE", "/v1/clusters/{cluster_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:delete_all_projects",
        check: "rule:context_is_admin",
        description: "Delete a cluster from any project.",
        operations: &[("DELETE", "/v1/clusters/{cluster_ident}")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "cluster:detail",
        check: "rule:admin_or_project_reader_deny_cluster_user",
        description: "Retrieve a list of clusters with detail.",
        operations: &[("GET", "/v1/clusters")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:detail_all_projects",
        check: "rule:context_is_admin",
        description: "Retrieve a list of clusters with detail across projects.",
        operations: &[("GET", "/v1/clusters")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "cluster:get",
        check: "rule:admin_or_project_reader_deny_cluster_user",
        description: "Retrieve information about the given cluster.",
        operations: &[("GET", "/v1/clusters/{cluster_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:get_one_all_projects",
        check: "rule:context_is_admin",
        description: "Retrieve information about the given cluster across projects.",
        operations: &[("GET", "/v1/clusters/{cluster_ident}")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "cluster:get_all",
        check: "rule:admin_or_project_reader_deny_cluster_user",
        description: "Retrieve a list of clusters.",
        operations: &[("GET", "/v1/clusters/")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:get_all_all_projects",
        check: "rule:context_is_admin",
        description: "Retrieve a list of all clusters across projects.",
        operations: &[("GET", "/v1/clusters/")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "cluster:update",
        check: "rule:admin_or_project_member_deny_cluster_user",
        description: "Update an existing cluster.",
        operations: &[("PATCH", "/v1/clusters/{cluster_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:update_health_status",
        check: "rule:admin_or_project_member_user_or_cluster_user",
        description: "Update the health status of an existing cluster.",
        operations: &[("PATCH", "/v1/clusters/{cluster_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:update_all_projects",
        check: "rule:context_is_admin",
        description: "Update an existing cluster.",
        operations: &[("PATCH", "/v1/clusters/{cluster_ident}")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "cluster:resize",
        check: "rule:admin_or_project_member_deny_cluster_user",
        description: "Resize an existing cluster.",
        operations: &[("POST", "/v1/clusters/{cluster_ident}/actions/resize")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:upgrade",
        check: "rule:admin_or_project_member_deny_cluster_user",
        description: "Upgrade an existing cluster.",
        operations: &[("POST", "/v1/clusters/{cluster_ident}/actions/upgrade")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "cluster:upgrade_all_projects",
        check: "rule:context_is_admin",
        description: "Upgrade an existing cluster across all projects.",
        operations: &[("POST", "/v1/clusters/{cluster_ident}/actions/upgrade")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:create",
        check: "rule:admin_or_project_member_deny_cluster_user",
        description: "Create a new cluster template.",
        operations: &[("POST", "/v1/clustertemplates")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:delete",
        check: "rule:admin_or_project_member",
        description: "Delete a cluster template.",
        operations: &[("DELETE", "/v1/clustertemplate/{clustertemplate_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:delete_all_projects",
        check: "rule:context_is_admin",
        description: "Delete a cluster template from any project.",
        operations: &[("DELETE", "/v1/clustertemplate/{clustertemplate_ident}")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:detail_all_projects",
        check: "rule:context_is_admin",
        description: "Retrieve a list of cluster templates with detail across projects.",
        operations: &[("GET", "/v1/clustertemplates")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:detail",
        check: "rule:admin_or_project_reader_deny_cluster_user",
        description: "Retrieve a list of cluster templates with detail.",
        operations: &[("GET", "/v1/clustertemplates")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:get",
        check: "rule:admin_or_project_reader_deny_cluster_user",
        description: "Retrieve information about the given cluster template.",
        operations: &[("GET", "/v1/clustertemplate/{clustertemplate_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:get_one_all_projects",
        check: "rule:context_is_admin",
        description: "Retrieve information about the given cluster template across project.",
        operations: &[("GET", "/v1/clustertemplate/{clustertemplate_ident}")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:get_all",
        check: "rule:admin_or_project_reader_deny_cluster_user",
        description: "Retrieve a list of cluster templates.",
        operations: &[("GET", "/v1/clustertemplates")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:get_all_all_projects",
        check: "rule:context_is_admin",
        description: "Retrieve a list of cluster templates across projects.",
        operations: &[("GET", "/v1/clustertemplates")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:update",
        check: "rule:admin_or_project_member",
        description: "Update an existing cluster template.",
        operations: &[("PATCH", "/v1/clustertemplate/{clustertemplate_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:update_all_projects",
        check: "rule:context_is_admin",
        description: "Update an existing cluster template.",
        operations: &[("PATCH", "/v1/clustertemplate/{clustertemplate_ident}")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "clustertemplate:publish",
        check: "rule:context_is_admin",
        description: "Publish or hide an existing cluster template (set public or hidden flags).",
        operations: &[
            ("POST", "/v1/clustertemplates"),
            ("PATCH", "/v1/clustertemplates"),
        ],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "credential:rotate",
        check: "rule:project_member_deny_cluster_user",
        description: "Rotate the credential of a cluster.",
        operations: &[("PATCH", "/v1/credentials/{cluster_uuid}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "federation:create",
        check: "rule:admin_or_project_member_deny_cluster_user",
        description: "Create a new federation.",
        operations: &[("POST", "/v1/federations")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "federation:delete",
        check: "rule:admin_or_project_member_deny_cluster_user",
        description: "Delete a federation.",
        operations: &[("DELETE", "/v1/federations/{federation_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "federation:detail",
        check: "rule:admin_or_project_reader_deny_cluster_user",
        description: "Retrieve a list of federations with detail.",
        operations: &[("GET", "/v1/federations")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "federation:get",
        check: "rule:admin_or_project_reader_deny_cluster_user",
        description: "Retrieve information about the given federation.",
        operations: &[("GET", "/v1/federations/{federation_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "federation:get_all",
        check: "rule:admin_or_project_reader_deny_cluster_user",
        description: "Retrieve a list of federations.",
        operations: &[("GET", "/v1/federations/")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "federation:update",
        check: "rule:admin_or_project_member_deny_cluster_user",
        description: "Update an existing federation.",
        operations: &[("PATCH", "/v1/federations/{federation_ident}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "magnum-service:get_all",
        check: "rule:context_is_admin",
        description: "Retrieve a list of magnum-services.",
        operations: &[("GET", "/v1/mservices")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "quota:create",
        check: "rule:context_is_admin",
        description: "Create quota.",
        operations: &[("POST", "/v1/quotas")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "quota:delete",
        check: "rule:context_is_admin",
        description: "Delete quota for a given project_id and resource.",
        operations: &[("DELETE", "/v1/quotas/{project_id}/{resource}")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "quota:get",
        check: "rule:admin_or_project_reader",
        description: "Retrieve Quota information for the given project_id.",
        operations: &[("GET", "/v1/quotas/{project_id}/{resource}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "quota:get_all",
        check: "rule:context_is_admin",
        description: "Retrieve a list of quotas.",
        operations: &[("GET", "/v1/quotas")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "quota:update",
        check: "rule:context_is_admin",
        description: "Update quota for a given project_id.",
        operations: &[("PATCH", "/v1/quotas/{project_id}/{resource}")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "stats:get_all",
        check: "rule:admin_or_project_reader",
        description: "Retrieve magnum stats.",
        operations: &[("GET", "/v1/stats")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "nodegroup:get",
        check: "rule:admin_or_project_reader",
        description: "Retrieve information about the given nodegroup.",
        operations: &[("GET", "/v1/clusters/{cluster_id}/nodegroup/{nodegroup}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "nodegroup:get_all",
        check: "rule:admin_or_project_reader",
        description: "Retrieve a list of nodegroups that belong to a cluster.",
        operations: &[("GET", "/v1/clusters/{cluster_id}/nodegroups/")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "nodegroup:get_all_all_projects",
        check: "rule:context_is_admin",
        description: "Retrieve a list of nodegroups across projects.",
        operations: &[("GET", "/v1/clusters/{cluster_id}/nodegroups/")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "nodegroup:get_one_all_projects",
        check: "rule:context_is_admin",
        description: "Retrieve infornation for a given nodegroup.",
        operations: &[("GET", "/v1/clusters/{cluster_id}/nodegroups/{nodegroup}")],
        scope_types: &[],
        deprecated: None,
    },
    Default {
        name: "nodegroup:create",
        check: "rule:admin_or_project_member",
        description: "Create a new nodegroup.",
        operations: &[("POST", "/v1/clusters/{cluster_id}/nodegroups/")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "nodegroup:delete",
        check: "rule:admin_or_project_member",
        description: "Delete a nodegroup.",
        operations: &[("DELETE", "/v1/clusters/{cluster_id}/nodegroups/{nodegroup}")],
        scope_types: &["project"],
        deprecated: None,
    },
    Default {
        name: "nodegroup:update",
        check: "rule:admin_or_project_member",
        description: "Update an existing nodegroup.",
        operations: &[("PATCH", "/v1/clusters/{cluster_id}/nodegroups/{nodegroup}")],
        scope_types: &["project"],
        deprecated: None,
    },
];

#[cfg(test)]
mod tests {

    use super::*;

    use test_support::{repo_root, spec_file};

    /// The spec's policies.yaml, or `None` (with a message) when the spec
    /// is not there; under CI it must be.
    fn spec_policies() -> Option<String> {
        spec_file("api/policies.yaml")
    }

    /// Reads the rules of an oslopolicy-sample-generator file: each rule is
    /// a block of comment lines (description, operations, intended scopes)
    /// ending with the commented-out rule, optionally followed by a
    /// "# DEPRECATED" block naming the deprecated rule.
    fn parse_sample(text: &str) -> Vec<Rule> {
        let quoted_pair = |line: &str, prefix: &str, sep: &str| -> Option<(String, String)> {
            let rest = line.strip_prefix(prefix)?;
            let (name, check) = rest.split_once(sep)?;
            let check = check.strip_suffix('"')?;
            Some((name.to_owned(), check.to_owned()))
        };
        let mut rules: Vec<Rule> = Vec::new();
        for block in text.trim_matches('\n').split("\n\n") {
            let lines: Vec<&str> = block.lines().collect();
            if lines[0] == "# DEPRECATED" {
                let Some((name, check)) = quoted_pair(lines[1], "# \"", "\":\"") else {
                    panic!("unexpected deprecation block {block:?}");
                };
                let Some(last) = rules.last_mut() else {
                    panic!("deprecation block first");
                };
                last.deprecated = Some(DeprecatedRule {
                    name,
                    check_string: check,
                    reason: DEPRECATED_REASON.to_owned(),
                    since: DEPRECATED_SINCE.to_owned(),
                });
                assert!(
                    block.contains(&format!("since {DEPRECATED_SINCE} in favor")),
                    "{block}"
                );
                continue;
            }
            let Some((name, check)) = lines.last().and_then(|l| quoted_pair(l, "#\"", "\": \""))
            else {
                panic!("unexpected block {block:?}");
            };
            let mut rule = Rule::new(name, check);
            let mut description = Vec::new();
            for line in &lines[..lines.len() - 1] {
                let op = line
                    .strip_prefix("# ")
                    .and_then(|l| l.split_once("  "))
                    .filter(|(m, p)| {
                        ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"].contains(m)
                            && !p.contains(' ')
                    });
                if let Some((method, path)) = op {
                    rule.operations.push(Operation {
                        method: method.to_owned(),
                        path: path.to_owned(),
                    });
                } else if let Some(scopes) = line.strip_prefix("# Intended scope(s): ") {
                    rule.scope_types = scopes.split(',').map(|s| s.trim().to_owned()).collect();
                } else {
                    description.push(line.strip_prefix("# ").unwrap_or(line));
                }
            }
            rule.description = description.join(" ");
            rules.push(rule);
        }
        rules
    }

    // Port of TestMagnumDefaultsMatchSpec (Go).
    #[test]
    fn defaults_match_the_spec() {
        let Some(text) = spec_policies() else { return };
        let want = parse_sample(&text);
        assert_eq!(want.len(), 66, "the spec lists {} rules", want.len());
        let got = magnum_defaults();
        for (w, g) in want.iter().zip(&got) {
            assert_eq!(w, g);
        }
        assert_eq!(want, got);
    }

    /// oslopolicy-sample-generator's output for these defaults is the
    /// spec's policies.yaml, byte for byte.
    #[test]
    fn sample_is_the_generator_output() {
        let Some(text) = spec_policies() else { return };
        assert_eq!(oslo_policy::sample::render(&magnum_defaults()), text);
    }

    /// config/policy.yaml.sample is up to date (`OKM_UPDATE_SAMPLES=1`
    /// rewrites it).
    #[test]
    fn checked_in_sample_is_fresh() {
        let path = repo_root().join("config/policy.yaml.sample");
        let want = oslo_policy::sample::render(&magnum_defaults());
        if std::env::var("OKM_UPDATE_SAMPLES").as_deref() == Ok("1") {
            if let Err(e) = std::fs::write(&path, &want) {
                panic!("write {}: {e}", path.display());
            }
            return;
        }
        let got = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            got == want,
            "{} is stale; run OKM_UPDATE_SAMPLES=1 cargo test -p openkeel-magnum --lib policy",
            path.display()
        );
    }
}
