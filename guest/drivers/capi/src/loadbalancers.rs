//! Which Octavia load balancers belong to a cluster (§ 8.8): the ones
//! Kubernetes' OpenStack cloud provider and its ingress controller made
//! for it, deleted with the cluster so that they do not hold its network.

use openkeel_magnum_driver::openstack::LoadBalancer;

/// Whether `lb` was made for the cluster `uuid` of `project_id`: it is in
/// the cluster's project, and its name is `kube_service_<uuid>_…` or
/// `kube_ingress_<uuid>_…`, or its description `Kubernetes … from cluster
/// <uuid>` (optionally followed by `, …`).
///
/// magnum-cluster-api matches the description alone, in every project the
/// caller sees; the project is required here so that a description written
/// in another project never gets a load balancer deleted
/// (docs/compatibility.md).
pub fn owned(lb: &LoadBalancer, uuid: &str, project_id: &str) -> bool {
    if uuid.is_empty() || project_id.is_empty() || lb.project_id != project_id {
        return false;
    }
    let named = ["kube_service_", "kube_ingress_"].iter().any(|prefix| {
        lb.name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix(uuid))
            .is_some_and(|rest| rest.starts_with('_'))
    });
    named || described(&lb.description, uuid)
}

/// `Kubernetes <something> from cluster <uuid>` at the end, or followed by
/// a comma.
fn described(description: &str, uuid: &str) -> bool {
    let Some(rest) = description.strip_prefix("Kubernetes ") else {
        return false;
    };
    let marker = format!(" from cluster {uuid}");
    rest.match_indices(&marker).any(|(i, _)| {
        let after = &rest[i + marker.len()..];
        i > 0 && (after.is_empty() || after.starts_with(','))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "2c4a9b9e-5d5e-4a52-9e49-0c2f1ac1f0b1";
    const PROJECT: &str = "p1";

    fn lb(name: &str, description: &str, project: &str) -> LoadBalancer {
        LoadBalancer {
            id: "lb".into(),
            name: name.into(),
            description: description.into(),
            project_id: project.into(),
            provisioning_status: "ACTIVE".into(),
            vip_port_id: "port".into(),
        }
    }

    #[test]
    fn the_cloud_providers_names_and_descriptions_are_the_clusters() {
        for (name, description) in [
            (format!("kube_service_{UUID}_default_web"), String::new()),
            (format!("kube_ingress_{UUID}_default_web"), String::new()),
            (
                "x".to_string(),
                format!("Kubernetes external service default/web from cluster {UUID}"),
            ),
            (
                "x".to_string(),
                format!(
                    "Kubernetes Ingress web in namespace default from cluster {UUID}, version: 3"
                ),
            ),
        ] {
            assert!(
                owned(&lb(&name, &description, PROJECT), UUID, PROJECT),
                "{name} {description}"
            );
        }
    }

    #[test]
    fn others_are_not() {
        let other = "5f0e5bd8-1111-2222-3333-444455556666";
        for (name, description, project) in [
            // Another project.
            (
                format!("kube_service_{UUID}_default_web"),
                String::new(),
                "p2",
            ),
            // Another cluster, and a uuid that only starts the same.
            (
                format!("kube_service_{other}_default_web"),
                String::new(),
                PROJECT,
            ),
            (
                format!("kube_service_{UUID}x_default_web"),
                String::new(),
                PROJECT,
            ),
            (
                "x".to_string(),
                format!("Kubernetes service from cluster {UUID}x"),
                PROJECT,
            ),
            (
                "x".to_string(),
                format!("Kubernetes  from cluster {other}"),
                PROJECT,
            ),
            // The description must start the sentence.
            (
                "x".to_string(),
                format!("my Kubernetes service from cluster {UUID}"),
                PROJECT,
            ),
            ("api".to_string(), String::new(), PROJECT),
        ] {
            assert!(
                !owned(&lb(&name, &description, project), UUID, PROJECT),
                "{name} {description}"
            );
        }
        // A cluster without a project owns nothing.
        assert!(!owned(
            &lb(&format!("kube_service_{UUID}_a_b"), "", ""),
            UUID,
            ""
        ));
    }
}
