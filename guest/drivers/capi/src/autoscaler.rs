//! The cluster autoscaler of an autoscaled cluster (driver-capi.md § 8.5):
//! plain manifests applied in the management cluster's namespace, where
//! the autoscaler's `clusterapi` provider resizes the cluster's
//! MachineDeployments through their scale subresource and watches the
//! workload cluster through its admin kubeconfig.
//!
//! magnum-cluster-api installs a Helm chart by running the `helm` binary
//! (issue #298); these are the chart's objects written directly, so
//! nothing but the Kubernetes API is needed. The sizing each
//! MachineDeployment carries (its bounds and the capacity of a node of an
//! empty group) is [`cluster`](crate::cluster)'s.
//!
//! Every label that reaches a manifest is checked here, so that building
//! the objects is also the validation a create or an update runs first.

use openkeel_magnum_driver::{DriverError, ObjectRef};
use serde_json::{Value, json};

use crate::input::Input;
use crate::labels::{AUTOSCALER_TAG, KubeVersion, image_registry, image_tag};
use crate::names::{
    FIELD_MANAGER, GROUP_CLUSTER, GROUP_INFRASTRUCTURE, LABEL_CLUSTER_UUID, SUFFIX_AUTOSCALER,
    SUFFIX_KUBECONFIG,
};

/// Where the autoscaler's image is pulled from without
/// `container_infra_prefix` or the driver option.
pub const DEFAULT_IMAGE_REPOSITORY: &str = "registry.k8s.io/autoscaling";
/// The autoscaler's image name, under the repository.
pub const IMAGE_NAME: &str = "cluster-autoscaler";

/// The latest cluster-autoscaler patch release of each Kubernetes 1.x
/// minor, `(minor, patch)`, from the tags `cluster-autoscaler-1.<minor>.<patch>`
/// of kubernetes/autoscaler. A minor that is not listed gets its `.0`.
const RELEASES: [(u64, u64); 15] = [
    (22, 3),
    (23, 1),
    (24, 3),
    (25, 3),
    (26, 8),
    (27, 8),
    (28, 7),
    (29, 5),
    (30, 7),
    (31, 5),
    (32, 7),
    (33, 6),
    (34, 5),
    (35, 2),
    (36, 1),
];

/// The apiVersion of the autoscaler's Deployment.
const API_VERSION_APPS: &str = "apps/v1";
/// The apiVersion of its ServiceAccount.
const API_VERSION_CORE: &str = "v1";
/// The apiVersion of its Role and RoleBinding.
const API_VERSION_RBAC: &str = "rbac.authorization.k8s.io/v1";

/// Where the workload cluster's kubeconfig is mounted.
const KUBECONFIG_DIR: &str = "/etc/kubernetes/workload";
/// The file of the kubeconfig in [`KUBECONFIG_DIR`].
const KUBECONFIG_FILE: &str = "kubeconfig";
/// The key of the kubeconfig in Cluster API's `<stack_id>-kubeconfig`
/// Secret.
const KUBECONFIG_KEY: &str = "value";
/// The port of the autoscaler's metrics and health check (its default
/// `--address`).
const METRICS_PORT: u16 = 8085;
/// The user and group the autoscaler runs as: distroless's `nonroot`,
/// set explicitly because older images do not declare a user.
const NON_ROOT_ID: i64 = 65532;

/// A rule of the autoscaler's Role: verbs on resources of an API group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The API group.
    pub group: &'static str,
    /// The resources (and subresources) of the group.
    pub resources: &'static [&'static str],
    /// The verbs granted.
    pub verbs: &'static [&'static str],
}

/// What the `clusterapi` provider needs in the management cluster's
/// namespace, and nothing more: it watches the scalable resources and
/// the Machines, resizes through the scale subresource (update in older
/// releases, patch in newer ones), marks the Machines it removes first
/// with an update, and reads CAPO's machine templates for a capacity the
/// annotations do not give. MachinePools are watched whenever their CRD
/// is installed, whether or not the cluster has any. Everything in the
/// workload cluster goes through its admin kubeconfig.
pub const RULES: [Rule; 4] = [
    Rule {
        group: GROUP_CLUSTER,
        resources: &[
            "machinedeployments",
            "machinesets",
            "machinepools",
            "machines",
        ],
        verbs: &["get", "list", "watch"],
    },
    Rule {
        group: GROUP_CLUSTER,
        resources: &["machines"],
        verbs: &["update"],
    },
    Rule {
        group: GROUP_CLUSTER,
        resources: &[
            "machinedeployments/scale",
            "machinesets/scale",
            "machinepools/scale",
        ],
        verbs: &["get", "update", "patch"],
    },
    Rule {
        group: GROUP_INFRASTRUCTURE,
        resources: &["openstackmachinetemplates"],
        verbs: &["get", "list", "watch"],
    },
];

/// The scale-down timings, as Magnum's Heat driver ran its autoscaler:
/// a node unneeded for 10 minutes is removed, not sooner than 10 minutes
/// after a scale-up nor 3 minutes after a failed scale-down.
const SCALE_DOWN_ARGS: [&str; 3] = [
    "--scale-down-unneeded-time=10m",
    "--scale-down-delay-after-add=10m",
    "--scale-down-delay-after-failure=3m",
];

/// The name of the autoscaler's Deployment, ServiceAccount, Role and
/// RoleBinding: `<stack_id>-autoscaler`.
pub fn autoscaler_name(stack_id: &str) -> String {
    format!("{stack_id}{SUFFIX_AUTOSCALER}")
}

/// The autoscaler release for a Kubernetes version: the latest patch of
/// its minor, `v1.<minor>.<patch>`, or `v<major>.<minor>.0` for a minor
/// [`RELEASES`] does not list.
pub fn default_tag(version: &KubeVersion) -> String {
    let v = version.version();
    let patch = RELEASES
        .iter()
        .find(|(minor, _)| v.major == 1 && *minor == v.minor)
        .map_or(0, |(_, patch)| *patch);
    format!("v{}.{}.{patch}", v.major, v.minor)
}

/// The autoscaler's image: `<repository>/cluster-autoscaler:<tag>`. The
/// repository is `container_infra_prefix`, else the driver option
/// `autoscaler_image_repository`, else [`DEFAULT_IMAGE_REPOSITORY`]; the
/// tag is `autoscaler_tag`, else [`default_tag`] of `kube_tag`. A
/// malformed label is a 400.
pub fn image(input: &Input) -> Result<String, DriverError> {
    let labels = input.state.cluster.labels();
    let option = input
        .autoscaler_image_repository
        .trim()
        .trim_end_matches('/');
    let repository = match image_registry(labels)? {
        Some(prefix) => prefix,
        None if !option.is_empty() => option,
        None => DEFAULT_IMAGE_REPOSITORY,
    };
    let tag = match image_tag(labels, AUTOSCALER_TAG)? {
        Some(tag) => tag.to_string(),
        None => default_tag(&KubeVersion::from_labels(labels)?),
    };
    Ok(format!("{repository}/{IMAGE_NAME}:{tag}"))
}

/// The autoscaler's arguments: the `clusterapi` provider, in-cluster
/// access to the management cluster (authoritative: no `--cloud-config`
/// is looked for), the workload cluster through its kubeconfig, node
/// groups discovered among the cluster's MachineDeployments in the
/// namespace, the minimum size enforced (a group below it is grown, as
/// magnum-cluster-api has it) and Magnum's scale-down timings.
pub fn args(input: &Input) -> Vec<String> {
    let mut args = vec![
        "--cloud-provider=clusterapi".to_string(),
        format!("--kubeconfig={KUBECONFIG_DIR}/{KUBECONFIG_FILE}"),
        "--clusterapi-cloud-config-authoritative".to_string(),
        format!(
            "--node-group-auto-discovery=clusterapi:namespace={},clusterName={}",
            input.namespace, input.stack_id
        ),
        "--enforce-node-group-min-size=true".to_string(),
    ];
    args.extend(SCALE_DOWN_ARGS.iter().map(|a| a.to_string()));
    args.push("--v=4".to_string());
    args
}

/// The autoscaler of `input`'s cluster, in the order to apply them: its
/// ServiceAccount, Role, RoleBinding and Deployment, all named
/// `<stack_id>-autoscaler` in the driver's namespace.
///
/// A malformed `kube_tag`, `autoscaler_tag` or `container_infra_prefix`
/// is a 400. Whether the cluster is autoscaled at all is the caller's
/// question ([`autoscaling`](crate::cluster::autoscaling)).
pub fn build_autoscaler(input: &Input) -> Result<Vec<Value>, DriverError> {
    let image = image(input)?;
    let name = autoscaler_name(&input.stack_id);
    Ok(vec![
        json!({
            "apiVersion": API_VERSION_CORE,
            "kind": "ServiceAccount",
            "metadata": metadata(input, &name),
        }),
        json!({
            "apiVersion": API_VERSION_RBAC,
            "kind": "Role",
            "metadata": metadata(input, &name),
            "rules": RULES.iter().map(rule).collect::<Vec<_>>(),
        }),
        json!({
            "apiVersion": API_VERSION_RBAC,
            "kind": "RoleBinding",
            "metadata": metadata(input, &name),
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": name,
            },
            "subjects": [{
                "kind": "ServiceAccount",
                "name": name,
                "namespace": input.namespace,
            }],
        }),
        deployment(input, &name, image),
    ])
}

/// What to delete when autoscaling is turned off or the cluster is
/// deleted: the objects of [`build_autoscaler`], the Deployment first so
/// that the autoscaler stops before it loses its rights.
pub fn autoscaler_refs(input: &Input) -> Vec<ObjectRef> {
    let name = autoscaler_name(&input.stack_id);
    [
        (API_VERSION_APPS, "Deployment"),
        (API_VERSION_RBAC, "RoleBinding"),
        (API_VERSION_RBAC, "Role"),
        (API_VERSION_CORE, "ServiceAccount"),
    ]
    .into_iter()
    .map(|(api_version, kind)| ObjectRef {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        namespace: Some(input.namespace.clone()),
        name: name.clone(),
    })
    .collect()
}

/// The labels of every object of the autoscaler, which its Deployment
/// also selects its pods by (the first two; a selector never changes).
fn object_labels(input: &Input) -> Value {
    json!({
        "app.kubernetes.io/name": IMAGE_NAME,
        "app.kubernetes.io/instance": input.stack_id,
        "app.kubernetes.io/managed-by": FIELD_MANAGER,
        LABEL_CLUSTER_UUID: input.state.cluster.uuid,
    })
}

/// The metadata of an object of the autoscaler.
fn metadata(input: &Input, name: &str) -> Value {
    json!({
        "name": name,
        "namespace": input.namespace,
        "labels": object_labels(input),
    })
}

/// A rule of the Role.
fn rule(rule: &Rule) -> Value {
    json!({
        "apiGroups": [rule.group],
        "resources": rule.resources,
        "verbs": rule.verbs,
    })
}

/// The autoscaler's Deployment: one replica under its ServiceAccount,
/// with the workload cluster's kubeconfig mounted from Cluster API's
/// Secret, bounded resources, a health check, and no privilege at all.
fn deployment(input: &Input, name: &str, image: String) -> Value {
    let selector = json!({
        "app.kubernetes.io/name": IMAGE_NAME,
        "app.kubernetes.io/instance": input.stack_id,
    });
    json!({
        "apiVersion": API_VERSION_APPS,
        "kind": "Deployment",
        "metadata": metadata(input, name),
        "spec": {
            "replicas": 1,
            "selector": { "matchLabels": selector },
            "template": {
                "metadata": { "labels": object_labels(input) },
                "spec": {
                    "serviceAccountName": name,
                    "automountServiceAccountToken": true,
                    "securityContext": {
                        "runAsNonRoot": true,
                        "runAsUser": NON_ROOT_ID,
                        "runAsGroup": NON_ROOT_ID,
                        "seccompProfile": { "type": "RuntimeDefault" },
                    },
                    "terminationGracePeriodSeconds": 10,
                    "containers": [{
                        "name": IMAGE_NAME,
                        "image": image,
                        "imagePullPolicy": "IfNotPresent",
                        "command": [format!("/{IMAGE_NAME}")],
                        "args": args(input),
                        "ports": [{
                            "name": "metrics",
                            "containerPort": METRICS_PORT,
                            "protocol": "TCP",
                        }],
                        "livenessProbe": {
                            "httpGet": { "path": "/health-check", "port": "metrics" },
                            "initialDelaySeconds": 30,
                            "periodSeconds": 30,
                        },
                        // Magnum's Heat driver requested 100m and 300Mi.
                        "resources": {
                            "requests": { "cpu": "100m", "memory": "300Mi" },
                            "limits": { "cpu": "1", "memory": "1Gi" },
                        },
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "privileged": false,
                            "readOnlyRootFilesystem": true,
                            "capabilities": { "drop": ["ALL"] },
                        },
                        "volumeMounts": [{
                            "name": "kubeconfig",
                            "mountPath": KUBECONFIG_DIR,
                            "readOnly": true,
                        }],
                    }],
                    "volumes": [{
                        "name": "kubeconfig",
                        "secret": {
                            "secretName": format!("{}{SUFFIX_KUBECONFIG}", input.stack_id),
                            "items": [{ "key": KUBECONFIG_KEY, "path": KUBECONFIG_FILE }],
                        },
                    }],
                },
            },
        },
    })
}

#[cfg(test)]
#[path = "autoscaler_tests.rs"]
mod tests;
