//! The Cluster API Cluster of a Magnum cluster (driver-capi.md § 3.4), in
//! v1beta2 (§ 4.3): a topology of the class `magnum-v<version>` with the
//! control plane, one MachineDeployment per worker nodegroup and every
//! class variable; and the autoscaler's sizing of the MachineDeployments
//! (§ 8.5): their bounds and, for scale from zero, the capacity of a node.

use openkeel_magnum_driver::{Cluster, ClusterState, DriverError, NodeGroup, Status};
use serde_json::{Map, Value, json};

use crate::classes::NODE_VOLUME_DETACH_TIMEOUT_SECONDS;
use crate::cluster_variables::{
    boot_volume_size, cluster_variables, node_group_overrides, variable_list,
};
use crate::input::{Capacity, Input};
use crate::labels::{
    AUTO_HEALING_ENABLED, AUTO_SCALING_ENABLED, AVAILABILITY_ZONE, CALICO_IPV4POOL, CALICO_TAG,
    CILIUM_IPV4POOL, DEFAULT_CALICO_TAG, DEFAULT_POD_CIDR, KubeVersion, MAX_NODE_COUNT,
    MIN_NODE_COUNT, is_dns_subdomain, service_cidr, service_domain,
};
use crate::names::{
    ANNOTATION_AUTOSCALER_MAX, ANNOTATION_AUTOSCALER_MIN, ANNOTATION_CAPACITY_CPU,
    ANNOTATION_CAPACITY_EPHEMERAL_DISK, ANNOTATION_CAPACITY_GPU_COUNT,
    ANNOTATION_CAPACITY_GPU_TYPE, ANNOTATION_CAPACITY_LABELS, ANNOTATION_CAPACITY_MEMORY,
    ANNOTATION_CAPACITY_TAINTS, API_VERSION_CLUSTER, LABEL_CLUSTER_UUID, LABEL_CNI,
    LABEL_NODE_GROUP, LABEL_NODE_ROLE_PREFIX, WORKER_CLASS, class_name,
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
            "clusterNetwork": cluster_network(state, &pod_cidr)?,
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
/// the larger of the minimum plus one and `node_count`; a maximum of 0 is
/// unset, as in Magnum's API.
///
/// A negative label, or a maximum below the minimum, is a 400.
pub fn autoscaler_bounds(
    cluster: &Cluster,
    ng: &NodeGroup,
) -> Result<AutoscalerBounds, DriverError> {
    let min = match ng.min_node_count {
        Some(n) => i64::from(n),
        None if ng.is_default() => {
            cluster
                .labels()
                .int_in(MIN_NODE_COUNT, 0, 0, i64::from(i32::MAX))?
        }
        None => 0,
    };
    // Magnum: magnum/api/controllers/v1/nodegroup.py:157 — a
    // max_node_count of 0 means no maximum.
    let max = match ng.max_node_count.filter(|n| *n != 0) {
        Some(n) => i64::from(n),
        None => match ng
            .labels()
            .int_in(MAX_NODE_COUNT, 0, 0, i64::from(i32::MAX))?
        {
            // Deviation: magnum-cluster-api's default is min + 1 alone,
            // so a group asked for more nodes than that was cut down to
            // min + 1 (§ 8.5, issue #309); the requested size is kept.
            0 => min
                .saturating_add(1)
                .max(i64::from(ng.node_count.unwrap_or(0))),
            n => n,
        },
    };
    if min < 0 || max < min {
        return Err(DriverError::invalid(format!(
            "The autoscaler bounds of nodegroup {} are invalid: min_node_count ({min}) \
             should be less or equal to max_node_count ({max}).",
            ng.name
        )));
    }
    Ok(AutoscalerBounds { min, max })
}

/// The row of an autoscaled worker nodegroup with its bounds saved in
/// `min_node_count` and `max_node_count`; None when autoscaling is off or
/// the row already holds them. Save it with a nodegroup being created:
/// the default maximum follows `node_count`, which the autoscaler changes
/// afterwards, and a saved maximum stays where the group started.
pub fn settle_autoscaler_bounds(
    cluster: &Cluster,
    ng: &NodeGroup,
) -> Result<Option<NodeGroup>, DriverError> {
    if !autoscaling(cluster)? {
        return Ok(None);
    }
    let bounds = autoscaler_bounds(cluster, ng)?;
    let (Ok(min), Ok(max)) = (i32::try_from(bounds.min), i32::try_from(bounds.max)) else {
        return Err(DriverError::invalid(format!(
            "The autoscaler bounds of nodegroup {} are out of range.",
            ng.name
        )));
    };
    if ng.min_node_count == Some(min) && ng.max_node_count == Some(max) {
        return Ok(None);
    }
    let mut settled = ng.clone();
    settled.min_node_count = Some(min);
    settled.max_node_count = Some(max);
    Ok(Some(settled))
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
    if zone.len() > MAX_ZONE_LEN {
        return Err(crate::images::invalid_label(
            AVAILABILITY_ZONE,
            zone,
            "a Nova availability zone (at most 255 characters)",
        ));
    }
    if !zone.is_empty() {
        md["failureDomain"] = json!(zone);
    }
    validate_taints(ng)?;
    let taints = taints(ng);
    if !taints.is_empty() {
        md["taints"] = Value::Array(taints);
    }
    size(input, ng, &mut md)?;
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
fn cluster_network(state: &ClusterState, pod_cidr: &str) -> Result<Value, DriverError> {
    let labels = state.cluster.labels();
    Ok(json!({
        "serviceDomain": service_domain(labels)?,
        "pods": { "cidrBlocks": [pod_cidr] },
        "services": { "cidrBlocks": [service_cidr(labels)?] },
    }))
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

/// The longest Nova availability zone name (the column's size; the
/// MachineDeployment's `failureDomain` takes at most 256 characters).
const MAX_ZONE_LEN: usize = 255;
/// The most taints a MachineDeployment of the topology takes.
const MAX_TAINTS: usize = 64;
/// The effects of a Kubernetes taint.
const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// Checks a nodegroup's `node_taints` against what the Cluster takes (a
/// 400 naming the nodegroup and the taint rather than a Cluster the API
/// server refuses): at most 64; each key a qualified name (an optional
/// DNS subdomain prefix and `/`, then at most 63 letters, digits, `-`,
/// `_` and `.`, starting and ending alphanumeric), each value empty or a
/// label value of the same form, each effect one of Kubernetes'; no two
/// with the same key and effect. Magnum's API checks only that a taint
/// has a key and a known effect.
pub fn validate_taints(ng: &NodeGroup) -> Result<(), DriverError> {
    let Some(taints) = &ng.node_taints else {
        return Ok(());
    };
    let invalid = |what: String| {
        DriverError::invalid(format!(
            "Nodegroup {} has invalid node_taints: {what}.",
            ng.name
        ))
    };
    if taints.len() > MAX_TAINTS {
        return Err(invalid(format!(
            "{} taints, at most {MAX_TAINTS} are allowed",
            taints.len()
        )));
    }
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, taint) in taints.iter().enumerate() {
        let field = |f: &str| taint.get(f).map_or("", String::as_str);
        let (key, value, effect) = (field("key"), field("value"), field("effect"));
        if !is_qualified_name(key) {
            return Err(invalid(format!(
                "node_taints[{i}].key {key:?} is not a qualified name such as \
                 example.com/dedicated"
            )));
        }
        if !value.is_empty() && !is_label_name(value) {
            return Err(invalid(format!(
                "node_taints[{i}].value {value:?} is not a label value (at most 63 letters, \
                 digits, '-', '_' and '.', starting and ending with a letter or digit)"
            )));
        }
        if !TAINT_EFFECTS.contains(&effect) {
            return Err(invalid(format!(
                "node_taints[{i}].effect {effect:?} is not one of {}",
                TAINT_EFFECTS.join(", ")
            )));
        }
        if seen.contains(&(key, effect)) {
            return Err(invalid(format!(
                "node_taints[{i}] repeats the key {key:?} with the effect {effect}"
            )));
        }
        seen.push((key, effect));
    }
    Ok(())
}

/// Whether `s` is a Kubernetes qualified name: `[prefix/]name`, the prefix
/// a DNS subdomain, the name a [label name](is_label_name).
fn is_qualified_name(s: &str) -> bool {
    match s.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_label_name(name),
        None => is_label_name(s),
    }
}

/// Whether `s` is at most 63 letters, digits, `-`, `_` and `.`, starting
/// and ending with a letter or digit.
fn is_label_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter()
            .all(|x| x.is_ascii_alphanumeric() || matches!(x, b'-' | b'_' | b'.'))
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
/// or, when the autoscaler owns the replicas, its bounds and, when the
/// flavor's capacity is known, what a node of the group offers, as
/// annotations. A new autoscaled group still gets `replicas`, its
/// `node_count` brought into the bounds: without it Cluster API's webhook
/// would start it at the minimum (0 by default) whatever size was asked
/// for (§ 8.5).
fn size(input: &Input, ng: &NodeGroup, md: &mut Value) -> Result<(), DriverError> {
    let cluster = &input.state.cluster;
    let count = i64::from(ng.node_count.unwrap_or(0));
    if !autoscaling(cluster)? {
        md["replicas"] = json!(count);
        return Ok(());
    }
    let bounds = autoscaler_bounds(cluster, ng)?;
    let mut annotations = Map::new();
    annotations.insert(
        ANNOTATION_AUTOSCALER_MIN.into(),
        json!(bounds.min.to_string()),
    );
    annotations.insert(
        ANNOTATION_AUTOSCALER_MAX.into(),
        json!(bounds.max.to_string()),
    );
    let capacity = input
        .resolved
        .node_groups
        .get(&ng.name)
        .and_then(|resolved| resolved.capacity);
    if let Some(capacity) = capacity {
        capacity_annotations(input, ng, capacity, &mut annotations)?;
    }
    md["metadata"]["annotations"] = Value::Object(annotations);
    if ng.status == Some(Status::CreateInProgress) {
        md["replicas"] = json!(bounds.clamp(count));
    }
    Ok(())
}

/// The extended resource the cluster autoscaler counts a scaled-from-zero
/// node's GPUs in: NVIDIA's device plugin's, for passed-through GPUs and
/// NVIDIA vGPUs alike.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Adds the cluster autoscaler's capacity annotations of a node of `ng`
/// (§ 8.5), which let it scale the group up from zero: vCPUs, memory in
/// MiB, the root disk in GiB (the nodegroup's boot volume, else the
/// flavor's disk), the GPUs when there are any, and the node labels and
/// taints the MachineDeployment gives its nodes. A zero (unknown) size is
/// left out.
fn capacity_annotations(
    input: &Input,
    ng: &NodeGroup,
    capacity: Capacity,
    annotations: &mut Map<String, Value>,
) -> Result<(), DriverError> {
    if capacity.vcpus > 0 {
        annotations.insert(
            ANNOTATION_CAPACITY_CPU.into(),
            json!(capacity.vcpus.to_string()),
        );
    }
    // Deviation: magnum-cluster-api writes the memory as `ceil(MiB / 1024)`
    // decimal gigabytes (`G`) and the disk without a unit, which the
    // autoscaler reads as bytes; these quantities are exact.
    if capacity.ram_mb > 0 {
        annotations.insert(
            ANNOTATION_CAPACITY_MEMORY.into(),
            json!(format!("{}Mi", capacity.ram_mb)),
        );
    }
    let boot_volume = boot_volume_size(ng.labels(), input)?;
    let root_gb = if boot_volume > 0 {
        boot_volume
    } else {
        i64::from(capacity.disk_gb)
    };
    if root_gb > 0 {
        annotations.insert(
            ANNOTATION_CAPACITY_EPHEMERAL_DISK.into(),
            json!(format!("{root_gb}Gi")),
        );
    }
    if capacity.gpus > 0 {
        annotations.insert(
            ANNOTATION_CAPACITY_GPU_COUNT.into(),
            json!(capacity.gpus.to_string()),
        );
        annotations.insert(ANNOTATION_CAPACITY_GPU_TYPE.into(), json!(GPU_RESOURCE));
    }
    // The autoscaler does not read the node labels of a MachineDeployment's
    // template, so they are given again (magnum-cluster-api #909).
    let labels: Vec<String> = node_labels(ng)
        .iter()
        .map(|(key, value)| format!("{key}={}", value.as_str().unwrap_or("")))
        .collect();
    annotations.insert(ANNOTATION_CAPACITY_LABELS.into(), json!(labels.join(",")));
    let taints: Vec<String> = taints(ng).iter().filter_map(taint_annotation).collect();
    if !taints.is_empty() {
        annotations.insert(ANNOTATION_CAPACITY_TAINTS.into(), json!(taints.join(",")));
    }
    Ok(())
}

/// A Machine taint as the autoscaler's annotation writes it,
/// `key[=value]:Effect`; None without a key or an effect.
fn taint_annotation(taint: &Value) -> Option<String> {
    let key = taint.get("key")?.as_str()?;
    let effect = taint.get("effect")?.as_str()?;
    Some(match taint.get("value").and_then(Value::as_str) {
        Some(value) => format!("{key}={value}:{effect}"),
        None => format!("{key}:{effect}"),
    })
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;
