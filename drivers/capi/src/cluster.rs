//! The Cluster API Cluster of a Magnum cluster (driver-capi.md § 3.4), in
//! v1beta2 (§ 4.3): a topology of the class `magnum-v<version>` with the
//! control plane, one MachineDeployment per worker nodegroup and every
//! class variable; and the autoscaler's sizing of the MachineDeployments
//! (§ 8.5).

use openkeel_magnum_driver::{Cluster, ClusterState, DriverError, NodeGroup, Status};
use serde_json::{Map, Value, json};

use crate::classes::NODE_VOLUME_DETACH_TIMEOUT_SECONDS;
use crate::cluster_variables::{cluster_variables, node_group_overrides, variable_list};
use crate::input::Input;
use crate::labels::{
    AUTO_HEALING_ENABLED, AUTO_SCALING_ENABLED, AVAILABILITY_ZONE, CALICO_IPV4POOL, CALICO_TAG,
    CILIUM_IPV4POOL, DEFAULT_CALICO_TAG, DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR,
    DEFAULT_SERVICE_DOMAIN, DNS_CLUSTER_DOMAIN, KubeVersion, MAX_NODE_COUNT, MIN_NODE_COUNT,
    SERVICE_CLUSTER_IP_RANGE,
};
use crate::names::{
    ANNOTATION_AUTOSCALER_MAX, ANNOTATION_AUTOSCALER_MIN, API_VERSION_CLUSTER, LABEL_CLUSTER_UUID,
    LABEL_CNI, LABEL_NODE_GROUP, LABEL_NODE_ROLE_PREFIX, WORKER_CLASS, class_name,
};

/// Magnum's role of the control-plane nodegroups.
const ROLE_MASTER: &str = "master";
/// Magnum's role of a nodegroup created without one.
const ROLE_WORKER: &str = "worker";

/// The prefixes of the node labels Cluster API copies from a
/// MachineDeployment's metadata to its Nodes. A nodegroup's other
/// `node_labels` would stop at the Machines, so they are not mapped.
pub const NODE_LABEL_PREFIXES: [&str; 3] = [
    "node-role.kubernetes.io/",
    "node-restriction.kubernetes.io/",
    "node.cluster.x-k8s.io/",
];

/// The min and max sizes the cluster autoscaler keeps a worker nodegroup
/// within.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoscalerBounds {
    /// The minimum size; 0 lets the group scale from zero.
    pub min: i64,
    /// The maximum size.
    pub max: i64,
}

impl AutoscalerBounds {
    /// `count` brought into `[min, max]` (to `max` when the bounds are
    /// crossed, as the Go driver did).
    pub fn clamp(self, count: i64) -> i64 {
        count.max(self.min).min(self.max)
    }
}

/// The topology Cluster of `input`'s cluster: named `stack_id`, of class
/// `magnum-v<class_version>`, with a MachineDeployment for every worker
/// nodegroup that is not being deleted and all the class variables.
///
/// A missing or malformed `kube_tag`, a malformed label and an
/// unsupported `cluster_distro` are Magnum's 400s.
pub fn build_cluster(input: &Input) -> Result<Value, DriverError> {
    let state = &input.state;
    let labels = state.cluster.labels();
    let version = KubeVersion::from_labels(labels)?;
    let healing = labels.bool(AUTO_HEALING_ENABLED, true)?;
    let variables = cluster_variables(input)?;
    let (cni, pod_cidr) = pod_network(state);

    let mut metadata_labels = Map::new();
    metadata_labels.insert(LABEL_CLUSTER_UUID.into(), json!(state.cluster.uuid));
    if let Some(cni) = cni {
        metadata_labels.insert(LABEL_CNI.into(), json!(cni));
    }
    let mut topology = json!({
        "classRef": { "name": class_name(&input.class_version) },
        "version": version.as_str(),
        "controlPlane": control_plane_topology(state, healing),
        "variables": variable_list(&variables),
    });
    let workers = machine_deployments(input, healing)?;
    if !workers.is_empty() {
        topology["workers"] = json!({ "machineDeployments": workers });
    }
    Ok(json!({
        "apiVersion": API_VERSION_CLUSTER,
        "kind": "Cluster",
        "metadata": {
            "name": input.stack_id,
            "namespace": input.namespace,
            "labels": metadata_labels,
        },
        "spec": {
            "clusterNetwork": cluster_network(state, &pod_cidr),
            "topology": topology,
        },
    }))
}

/// Whether the cluster autoscaler owns the worker replicas (label
/// `auto_scaling_enabled`, default false).
pub fn autoscaling(cluster: &Cluster) -> Result<bool, DriverError> {
    cluster.labels().bool(AUTO_SCALING_ENABLED, false)
}

/// The autoscaler's bounds of a worker nodegroup (§ 8.5). The minimum is
/// `min_node_count`; for a default nodegroup whose column is unset, the
/// cluster label `min_node_count`; else 0. The maximum is
/// `max_node_count`, else the nodegroup's label `max_node_count`, else
/// the minimum plus one.
pub fn autoscaler_bounds(
    cluster: &Cluster,
    ng: &NodeGroup,
) -> Result<AutoscalerBounds, DriverError> {
    let min = match ng.min_node_count {
        Some(n) => i64::from(n),
        None if ng.is_default() => cluster.labels().int(MIN_NODE_COUNT, 0)?,
        None => 0,
    };
    let max = match ng.max_node_count {
        Some(n) => i64::from(n),
        None => ng.labels().int(MAX_NODE_COUNT, min.saturating_add(1))?,
    };
    Ok(AutoscalerBounds { min, max })
}

/// The topology entry of a worker nodegroup (§ 3.4, § 8.5): its node
/// labels, failure domain, taints, variable overrides and, unless the
/// autoscaler owns them, its replicas. `healing` turns its machine health
/// check on.
pub fn machine_deployment_topology(
    input: &Input,
    ng: &NodeGroup,
    healing: bool,
) -> Result<Value, DriverError> {
    let overrides = node_group_overrides(input, ng)?;
    let mut md = json!({
        "class": WORKER_CLASS,
        "name": ng.name,
        "metadata": { "labels": node_labels(ng) },
        "healthCheck": { "enabled": healing },
        "deletion": { "nodeVolumeDetachTimeoutSeconds": NODE_VOLUME_DETACH_TIMEOUT_SECONDS },
        "variables": { "overrides": variable_list(&overrides) },
    });
    let zone = ng.labels().str_or(AVAILABILITY_ZONE, "");
    if !zone.is_empty() {
        md["failureDomain"] = json!(zone);
    }
    let taints = taints(ng);
    if !taints.is_empty() {
        md["taints"] = Value::Array(taints);
    }
    size(&input.state.cluster, ng, &mut md)?;
    Ok(md)
}

/// The `cni` label of the Cluster (calico only) and the pods' CIDR, by
/// the template's network driver.
fn pod_network(state: &ClusterState) -> (Option<String>, String) {
    let labels = state.cluster.labels();
    match state.template.network_driver.as_deref() {
        Some("calico") => (
            Some(format!(
                "calico-{}",
                labels.str_or(CALICO_TAG, DEFAULT_CALICO_TAG)
            )),
            labels.str_or(CALICO_IPV4POOL, DEFAULT_POD_CIDR).to_string(),
        ),
        Some("cilium") => (
            None,
            labels.str_or(CILIUM_IPV4POOL, DEFAULT_POD_CIDR).to_string(),
        ),
        _ => (None, DEFAULT_POD_CIDR.to_string()),
    }
}

/// `spec.clusterNetwork`: the DNS domain and the pods' and Services'
/// CIDRs.
fn cluster_network(state: &ClusterState, pod_cidr: &str) -> Value {
    let labels = state.cluster.labels();
    json!({
        "serviceDomain": labels.str_or(DNS_CLUSTER_DOMAIN, DEFAULT_SERVICE_DOMAIN),
        "pods": { "cidrBlocks": [pod_cidr] },
        "services": {
            "cidrBlocks": [labels.str_or(SERVICE_CLUSTER_IP_RANGE, DEFAULT_SERVICE_CIDR)],
        },
    })
}

/// The control plane of the topology: the master role label, the
/// master count (the first master nodegroup's `node_count`, else 1) and
/// the health check.
fn control_plane_topology(state: &ClusterState, healing: bool) -> Value {
    let replicas = state
        .nodegroups
        .iter()
        .find(|ng| ng.is_master())
        .and_then(|ng| ng.node_count)
        .unwrap_or(1);
    json!({
        "metadata": { "labels": { role_label(ROLE_MASTER): "" } },
        "replicas": replicas,
        "healthCheck": { "enabled": healing },
    })
}

/// The entries of the worker nodegroups that are not being deleted: the
/// default worker first, then by name, so that the applied list does not
/// depend on the order of the rows.
fn machine_deployments(input: &Input, healing: bool) -> Result<Vec<Value>, DriverError> {
    let mut workers: Vec<&NodeGroup> = input
        .state
        .nodegroups
        .iter()
        .filter(|ng| !ng.is_master() && !is_deleting(ng))
        .collect();
    workers.sort_by(|a, b| {
        b.is_default()
            .cmp(&a.is_default())
            .then_with(|| a.name.cmp(&b.name))
    });
    workers
        .into_iter()
        .map(|ng| machine_deployment_topology(input, ng, healing))
        .collect()
}

/// Whether a nodegroup's status is one of the `DELETE_*`.
fn is_deleting(ng: &NodeGroup) -> bool {
    ng.status
        .is_some_and(|status| status.as_str().starts_with("DELETE"))
}

/// The node role label of `role`.
fn role_label(role: &str) -> String {
    format!("{LABEL_NODE_ROLE_PREFIX}{role}")
}

/// The labels of a worker nodegroup's nodes: its role (`worker` when it
/// has none), its name, and those of its `node_labels` that Cluster API
/// carries to the Nodes.
fn node_labels(ng: &NodeGroup) -> Map<String, Value> {
    let role = ng
        .role
        .as_deref()
        .filter(|r| !r.is_empty())
        .unwrap_or(ROLE_WORKER);
    let mut labels = Map::new();
    labels.insert(role_label(role), json!(""));
    labels.insert(LABEL_NODE_GROUP.into(), json!(ng.name));
    let propagated = ng
        .node_labels
        .iter()
        .flat_map(|l| l.iter())
        .filter(|(key, _)| NODE_LABEL_PREFIXES.iter().any(|p| key.starts_with(p)));
    for (key, value) in propagated {
        labels.insert(key.clone(), json!(value));
    }
    labels
}

/// The nodegroup's `node_taints` as Machine taints that Cluster API keeps
/// on the Nodes; each field is left out when empty.
fn taints(ng: &NodeGroup) -> Vec<Value> {
    let Some(taints) = &ng.node_taints else {
        return Vec::new();
    };
    taints
        .iter()
        .map(|taint| {
            let mut t = Map::new();
            for field in ["key", "value", "effect"] {
                if let Some(v) = taint.get(field).filter(|v| !v.is_empty()) {
                    t.insert(field.into(), json!(v));
                }
            }
            t.insert("propagation".into(), json!("Always"));
            Value::Object(t)
        })
        .collect()
}

/// Sets the size of a MachineDeployment entry: `replicas` = `node_count`,
/// or, when the autoscaler owns the replicas, its bounds as annotations.
/// A new autoscaled group still gets `replicas`, its `node_count` brought
/// into the bounds: without it Cluster API's webhook would start it at
/// the minimum (0 by default) whatever size was asked for (§ 8.5).
fn size(cluster: &Cluster, ng: &NodeGroup, md: &mut Value) -> Result<(), DriverError> {
    let count = i64::from(ng.node_count.unwrap_or(0));
    if !autoscaling(cluster)? {
        md["replicas"] = json!(count);
        return Ok(());
    }
    let bounds = autoscaler_bounds(cluster, ng)?;
    md["metadata"]["annotations"] = json!({
        ANNOTATION_AUTOSCALER_MIN: bounds.min.to_string(),
        ANNOTATION_AUTOSCALER_MAX: bounds.max.to_string(),
    });
    if ng.status == Some(Status::CreateInProgress) {
        md["replicas"] = json!(bounds.clamp(count));
    }
    Ok(())
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;
