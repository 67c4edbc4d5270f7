//! The patches of the ClusterClass (driver-capi.md § 4.2) in their v1beta2
//! form (§ 4.3): they bring each cluster's variables into the class
//! templates. kubeadm `extraArgs` are lists in v1beta2, so arguments are
//! appended as `{name, value}` entries.
//!
//! Order matters: `addEmptyLists` comes first, before every patch that
//! appends to the lists it creates.

use serde_json::{Value, json};

use crate::classes::{AUDIT_POLICY_FILE, KEYSTONE_WEBHOOK_CONFIG};
use crate::names::{
    API_VERSION_BOOTSTRAP, API_VERSION_CONTROL_PLANE, API_VERSION_INFRASTRUCTURE,
    KIND_KUBEADM_CONFIG_TEMPLATE, KIND_KUBEADM_CONTROL_PLANE_TEMPLATE,
    KIND_OPENSTACK_CLUSTER_TEMPLATE, KIND_OPENSTACK_MACHINE_TEMPLATE, WORKER_CLASS,
};

/// The spec of every template.
const SPEC: &str = "/spec/template/spec";
/// The kubeadm configuration inside the control-plane template.
const KCS: &str = "/spec/template/spec/kubeadmConfigSpec";
/// The API server's configuration inside the control-plane template.
const API_SERVER: &str = "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/apiServer";

/// The Ignition configuration Flatcar nodes boot with.
const FLATCAR_IGNITION: &str = include_str!("files/flatcar-ignition.yaml");
/// The node name kubeadm is given on Flatcar, replaced on the node.
const FLATCAR_NODE_NAME: &str = "__REPLACE_NODE_NAME__";
/// Puts the node's short hostname in place of [`FLATCAR_NODE_NAME`].
const FLATCAR_SET_NODE_NAME: &str =
    r#"sed -i "s/__REPLACE_NODE_NAME__/$(hostname -s)/g" /etc/kubeadm.yml"#;

/// Enables a patch only when a volume is added to the machines.
const VOLUMES_ENABLED: &str = "{{ if or .enableEtcdVolume .enableDockerVolume }}true{{ end }}";

/// The templates a patch definition applies to. A selector's apiVersion is
/// that of the template the class references: Cluster API silently skips
/// a selector that does not match (§ 4.3).
#[derive(Clone, Copy)]
enum Target {
    /// The KubeadmControlPlaneTemplate.
    ControlPlane,
    /// The workers' KubeadmConfigTemplate.
    WorkerBootstrap,
    /// The OpenStackMachineTemplate of the control plane.
    ControlPlaneMachines,
    /// The OpenStackMachineTemplate of the workers.
    WorkerMachines,
    /// The OpenStackMachineTemplate of the control plane and the workers.
    AllMachines,
    /// The OpenStackClusterTemplate.
    InfrastructureCluster,
}

impl Target {
    /// The patch selector of the target.
    fn selector(self) -> Value {
        let workers = json!({ "names": [WORKER_CLASS] });
        let (api_version, kind, match_resources) = match self {
            Target::ControlPlane => (
                API_VERSION_CONTROL_PLANE,
                KIND_KUBEADM_CONTROL_PLANE_TEMPLATE,
                json!({ "controlPlane": true }),
            ),
            Target::WorkerBootstrap => (
                API_VERSION_BOOTSTRAP,
                KIND_KUBEADM_CONFIG_TEMPLATE,
                json!({ "machineDeploymentClass": workers }),
            ),
            Target::ControlPlaneMachines => (
                API_VERSION_INFRASTRUCTURE,
                KIND_OPENSTACK_MACHINE_TEMPLATE,
                json!({ "controlPlane": true }),
            ),
            Target::WorkerMachines => (
                API_VERSION_INFRASTRUCTURE,
                KIND_OPENSTACK_MACHINE_TEMPLATE,
                json!({ "machineDeploymentClass": workers }),
            ),
            Target::AllMachines => (
                API_VERSION_INFRASTRUCTURE,
                KIND_OPENSTACK_MACHINE_TEMPLATE,
                json!({ "controlPlane": true, "machineDeploymentClass": workers }),
            ),
            Target::InfrastructureCluster => (
                API_VERSION_INFRASTRUCTURE,
                KIND_OPENSTACK_CLUSTER_TEMPLATE,
                json!({ "infrastructureCluster": true }),
            ),
        };
        json!({ "apiVersion": api_version, "kind": kind, "matchResources": match_resources })
    }
}

/// A JSON patch operation with a literal value.
fn set(op: &str, path: &str, value: Value) -> Value {
    json!({ "op": op, "path": path, "value": value })
}

/// A JSON patch operation whose value is a variable's.
fn from_variable(op: &str, path: &str, variable: &str) -> Value {
    json!({ "op": op, "path": path, "valueFrom": { "variable": variable } })
}

/// A JSON patch operation whose value is a template rendered with the
/// variables (Go templates with sprig functions, evaluated by Cluster API).
fn from_template(op: &str, path: &str, template: &str) -> Value {
    json!({ "op": op, "path": path, "valueFrom": { "template": template } })
}

/// Appends a `{name, value}` entry to the `extraArgs` list at `path`; the
/// value is a template.
fn add_arg(path: &str, name: &str, value_template: &str) -> Value {
    from_template(
        "add",
        &format!("{path}/-"),
        &format!("name: {name}\nvalue: {value_template}"),
    )
}

/// Appends, to the `files` list at `files`, a file whose base64 content is
/// a variable's.
fn add_file_from_variable(files: &str, path: &str, variable: &str) -> Value {
    from_template(
        "add",
        &format!("{files}/-"),
        &format!(
            "path: {path}\nowner: root:root\npermissions: \"0644\"\nencoding: base64\ncontent: {{{{ .{variable} | quote }}}}"
        ),
    )
}

/// One definition of a patch: operations on the templates of a target.
fn definition(target: Target, operations: Vec<Value>) -> Value {
    json!({ "selector": target.selector(), "jsonPatches": operations })
}

/// A patch, applied when `enabled_if` renders to `true` (always when
/// None).
fn patch(name: &str, enabled_if: Option<&str>, definitions: Vec<Value>) -> Value {
    let mut p = json!({ "name": name, "definitions": definitions });
    if let Some(condition) = enabled_if {
        p["enabledIf"] = json!(condition);
    }
    p
}

/// The condition "the variable is set" (not empty, false or zero).
fn if_set(variable: &str) -> String {
    format!("{{{{ if .{variable} }}}}true{{{{ end }}}}")
}

/// The device of the disk with `letter` (`b`, `c`): SCSI or virtio names,
/// by the image's `hw_disk_bus`.
fn disk(letter: char) -> String {
    format!(
        r#"{{{{ if eq .hardwareDiskBus "scsi" }}}}/dev/sd{letter}{{{{ else }}}}/dev/vd{letter}{{{{ end }}}}"#
    )
}

/// A cloud-init GPT partition spanning `device`.
fn partition(device: &str) -> String {
    format!("device: {device}\nlayout: true\noverwrite: false\ntableType: gpt")
}

/// A cloud-init ext4 filesystem labelled `label` on `device`.
fn filesystem(device: &str, label: &str) -> String {
    format!("device: {device}\nfilesystem: ext4\nlabel: {label}\npartition: auto")
}

/// An additional Cinder volume of the machines, `name`, sized and typed by
/// the variables `<name>VolumeSize` and `<name>VolumeType`, in the
/// machines' availability zone when there is one.
fn block_device(name: &str) -> String {
    format!(
        "name: {name}\nsizeGiB: {{{{ .{name}VolumeSize }}}}\nstorage:\n  type: Volume\n  volume:\n    type: {{{{ .{name}VolumeType | quote }}}}\n\
         {{{{ if .availabilityZone }}}}    availabilityZone:\n      from: Name\n      name: {{{{ .availabilityZone | quote }}}}\n{{{{ end }}}}"
    )
}

/// The patches of the class, in order.
pub fn class_patches() -> Value {
    Value::Array(vec![
        add_empty_lists(),
        admission_control_list(),
        api_server_floating_ip(),
        api_server_load_balancer(),
        api_server_load_balancer_allowed_cidrs(),
        audit_log(),
        boot_volume(),
        cloud_provider(),
        cluster_identity_ref_name(),
        containerd_config(),
        systemd_proxy_config(),
        control_plane_availability_zones(),
        disable_api_server_floating_ip(),
        external_network_id(),
        flavors(),
        image_repository(),
        images(),
        keystone_auth(),
        new_network_config(),
        existing_fixed_network_id_config(),
        existing_fixed_subnet_id_config(),
        openid_connect(),
        apt_proxy_config(),
        flatcar(),
        server_group_id(),
        scheduler_hints(),
        ssh_key_name(),
        tls_cipher_suites(),
        etcd_volume(),
        docker_volume(),
        etcd_and_docker_volume_for_control_plane(),
        only_docker_volume_for_control_plane(),
    ])
}

/// The empty `mounts` and `diskSetup` of a kubeadm configuration at
/// `base`, for the volume patches to append to.
fn empty_disk_lists(base: &str) -> Vec<Value> {
    vec![
        set("add", &format!("{base}/mounts"), json!([])),
        set(
            "add",
            &format!("{base}/diskSetup"),
            json!({ "filesystems": [], "partitions": [] }),
        ),
    ]
}

/// Creates the lists the volume patches append to.
fn add_empty_lists() -> Value {
    patch(
        "addEmptyLists",
        Some(VOLUMES_ENABLED),
        vec![
            definition(
                Target::AllMachines,
                vec![set(
                    "add",
                    &format!("{SPEC}/additionalBlockDevices"),
                    json!([]),
                )],
            ),
            definition(Target::ControlPlane, empty_disk_lists(KCS)),
            definition(Target::WorkerBootstrap, empty_disk_lists(SPEC)),
        ],
    )
}

/// Admission plugins enabled beside NodeRestriction.
fn admission_control_list() -> Value {
    patch(
        "admissionControlList",
        Some(&if_set("admissionControlList")),
        vec![definition(
            Target::ControlPlane,
            vec![add_arg(
                &format!("{API_SERVER}/extraArgs"),
                "enable-admission-plugins",
                "{{ .admissionControlList | quote }}",
            )],
        )],
    )
}

/// A given floating IP of the API load balancer.
fn api_server_floating_ip() -> Value {
    patch(
        "apiServerFloatingIP",
        Some(&if_set("apiServerFloatingIP")),
        vec![definition(
            Target::InfrastructureCluster,
            vec![from_variable(
                "add",
                &format!("{SPEC}/apiServerFloatingIP"),
                "apiServerFloatingIP",
            )],
        )],
    )
}

/// The API load balancer: whether there is one, its provider, flavor and
/// zone.
fn api_server_load_balancer() -> Value {
    patch(
        "apiServerLoadBalancer",
        None,
        vec![definition(
            Target::InfrastructureCluster,
            vec![from_variable(
                "add",
                &format!("{SPEC}/apiServerLoadBalancer"),
                "apiServerLoadBalancer",
            )],
        )],
    )
}

/// The CIDRs allowed to reach the API load balancer, when any is given
/// (after the load balancer's own patch, which adds the object).
fn api_server_load_balancer_allowed_cidrs() -> Value {
    patch(
        "apiServerLoadBalancerAllowedCIDRs",
        Some(&if_set("apiServerLoadBalancerAllowedCIDRs")),
        vec![definition(
            Target::InfrastructureCluster,
            vec![from_variable(
                "add",
                &format!("{SPEC}/apiServerLoadBalancer/allowedCIDRs"),
                "apiServerLoadBalancerAllowedCIDRs",
            )],
        )],
    )
}

/// The API server's audit log, its rotation and policy, and the host
/// paths it needs.
fn audit_log() -> Value {
    let args = format!("{API_SERVER}/extraArgs");
    let volumes = format!("{API_SERVER}/extraVolumes/-");
    patch(
        "auditLog",
        Some("{{ if .auditLog.enabled }}true{{ end }}"),
        vec![definition(
            Target::ControlPlane,
            vec![
                add_arg(
                    &args,
                    "audit-log-path",
                    "/var/log/audit/kube-apiserver-audit.log",
                ),
                add_arg(&args, "audit-log-maxage", "{{ .auditLog.maxAge | quote }}"),
                add_arg(
                    &args,
                    "audit-log-maxbackup",
                    "{{ .auditLog.maxBackup | quote }}",
                ),
                add_arg(
                    &args,
                    "audit-log-maxsize",
                    "{{ .auditLog.maxSize | quote }}",
                ),
                add_arg(&args, "audit-policy-file", AUDIT_POLICY_FILE),
                set(
                    "add",
                    &volumes,
                    json!({
                        "name": "audit-policy",
                        "hostPath": "/etc/kubernetes/audit-policy",
                        "mountPath": "/etc/kubernetes/audit-policy",
                    }),
                ),
                set(
                    "add",
                    &volumes,
                    json!({
                        "name": "audit-logs",
                        "hostPath": "/var/log/kubernetes/audit",
                        "mountPath": "/var/log/audit",
                    }),
                ),
            ],
        )],
    )
}

/// Machines boot from a Cinder volume when its size is above 0.
fn boot_volume() -> Value {
    patch(
        "bootVolume",
        Some("{{ if gt (int .bootVolume.size) 0 }}true{{ end }}"),
        vec![definition(
            Target::AllMachines,
            vec![from_template(
                "add",
                &format!("{SPEC}/rootVolume"),
                "type: {{ .bootVolume.type | quote }}\nsizeGiB: {{ .bootVolume.size }}\n\
                 {{ if .bootVolumeAvailabilityZone }}availabilityZone:\n  from: Name\n  name: {{ .bootVolumeAvailabilityZone | quote }}\n{{ end }}",
            )],
        )],
    )
}

/// The API server's `cloud-provider=external`, which Kubernetes 1.33
/// removed.
fn cloud_provider() -> Value {
    patch(
        "cloudProvider",
        Some(r#"{{ semverCompare "<1.33.0" .builtin.controlPlane.version }}"#),
        vec![definition(
            Target::ControlPlane,
            vec![set(
                "add",
                &format!("{API_SERVER}/extraArgs/-"),
                json!({ "name": "cloud-provider", "value": "external" }),
            )],
        )],
    )
}

/// The cluster's cloud-config Secret as the identity of its OpenStack
/// objects.
fn cluster_identity_ref_name() -> Value {
    let identity = || {
        vec![from_variable(
            "replace",
            &format!("{SPEC}/identityRef/name"),
            "clusterIdentityRefName",
        )]
    };
    patch(
        "clusterIdentityRefName",
        None,
        vec![
            definition(Target::AllMachines, identity()),
            definition(Target::InfrastructureCluster, identity()),
        ],
    )
}

/// containerd's configuration, and its restart before kubeadm runs.
fn containerd_config() -> Value {
    let config = "/etc/containerd/config.toml";
    patch(
        "containerdConfig",
        None,
        vec![
            definition(
                Target::ControlPlane,
                vec![
                    add_file_from_variable(&format!("{KCS}/files"), config, "containerdConfig"),
                    set(
                        "add",
                        &format!("{KCS}/preKubeadmCommands/-"),
                        json!("systemctl daemon-reload && systemctl restart containerd"),
                    ),
                ],
            ),
            definition(
                Target::WorkerBootstrap,
                vec![
                    add_file_from_variable(&format!("{SPEC}/files"), config, "containerdConfig"),
                    set(
                        "add",
                        &format!("{SPEC}/preKubeadmCommands"),
                        json!(["systemctl daemon-reload", "systemctl restart containerd"]),
                    ),
                ],
            ),
        ],
    )
}

/// containerd's proxy settings, when the template has a proxy.
fn systemd_proxy_config() -> Value {
    let drop_in = "/etc/systemd/system/containerd.service.d/proxy.conf";
    patch(
        "systemdProxyConfig",
        Some(&if_set("systemdProxyConfig")),
        vec![
            definition(
                Target::ControlPlane,
                vec![add_file_from_variable(
                    &format!("{KCS}/files"),
                    drop_in,
                    "systemdProxyConfig",
                )],
            ),
            definition(
                Target::WorkerBootstrap,
                vec![add_file_from_variable(
                    &format!("{SPEC}/files"),
                    drop_in,
                    "systemdProxyConfig",
                )],
            ),
        ],
    )
}

/// The zones the control plane is spread over, when the first is named.
fn control_plane_availability_zones() -> Value {
    patch(
        "controlPlaneAvailabilityZones",
        Some("{{ if index .controlPlaneAvailabilityZones 0 }}true{{ end }}"),
        vec![definition(
            Target::InfrastructureCluster,
            vec![from_variable(
                "add",
                &format!("{SPEC}/controlPlaneAvailabilityZones"),
                "controlPlaneAvailabilityZones",
            )],
        )],
    )
}

/// Whether the API load balancer has no floating IP, when the driver
/// manages the field (CAPO treats it as immutable).
fn disable_api_server_floating_ip() -> Value {
    patch(
        "disableAPIServerFloatingIP",
        Some(&if_set("disableAPIServerFloatingIPManaged")),
        vec![definition(
            Target::InfrastructureCluster,
            vec![from_variable(
                "add",
                &format!("{SPEC}/disableAPIServerFloatingIP"),
                "disableAPIServerFloatingIP",
            )],
        )],
    )
}

/// The external network of the cluster.
fn external_network_id() -> Value {
    patch(
        "externalNetworkId",
        Some(&if_set("externalNetworkId")),
        vec![definition(
            Target::InfrastructureCluster,
            vec![from_template(
                "add",
                &format!("{SPEC}/externalNetwork"),
                "id: {{ .externalNetworkId | quote }}",
            )],
        )],
    )
}

/// The flavors of the control plane and of the workers.
fn flavors() -> Value {
    let flavor = format!("{SPEC}/flavor");
    patch(
        "flavors",
        None,
        vec![
            definition(
                Target::ControlPlaneMachines,
                vec![from_variable("replace", &flavor, "controlPlaneFlavor")],
            ),
            definition(
                Target::WorkerMachines,
                vec![from_variable("replace", &flavor, "flavor")],
            ),
        ],
    )
}

/// The registry of the Kubernetes images, when `container_infra_prefix`
/// sets one: the control plane's `clusterConfiguration`. The workers'
/// KubeadmConfigTemplate has no `clusterConfiguration` (kubeadm join reads
/// the cluster's), and the Go class's patch of a path it lacks failed every
/// worker of such a cluster.
fn image_repository() -> Value {
    patch(
        "imageRepository",
        Some(&if_set("imageRepository")),
        vec![definition(
            Target::ControlPlane,
            vec![from_variable(
                "add",
                &format!("{KCS}/clusterConfiguration/imageRepository"),
                "imageRepository",
            )],
        )],
    )
}

/// The Glance image of the machines.
fn images() -> Value {
    patch(
        "images",
        None,
        vec![definition(
            Target::AllMachines,
            vec![from_variable(
                "replace",
                &format!("{SPEC}/image/id"),
                "imageUUID",
            )],
        )],
    )
}

/// Keystone authentication and authorisation through the webhook.
fn keystone_auth() -> Value {
    let args = format!("{API_SERVER}/extraArgs");
    // Deviation: magnum-cluster-api patches the kube-apiserver static pod
    // with a kustomization after kubeadm; the webhook flags are set here
    // as apiserver arguments, with Node and RBAC evaluated first so the
    // control plane works before the webhook runs.
    patch(
        "keystoneAuth",
        Some(&if_set("enableKeystoneAuth")),
        vec![definition(
            Target::ControlPlane,
            vec![
                add_arg(
                    &args,
                    "authentication-token-webhook-config-file",
                    KEYSTONE_WEBHOOK_CONFIG,
                ),
                add_arg(
                    &args,
                    "authorization-webhook-config-file",
                    KEYSTONE_WEBHOOK_CONFIG,
                ),
                add_arg(&args, "authorization-mode", "Node,RBAC,Webhook"),
            ],
        )],
    )
}

/// A subnet CAPO creates for the nodes, without a fixed network.
fn new_network_config() -> Value {
    patch(
        "newNetworkConfig",
        Some("{{ if not .fixedNetworkId }}true{{ end }}"),
        vec![definition(
            Target::InfrastructureCluster,
            vec![from_template(
                "add",
                &format!("{SPEC}/managedSubnets"),
                "- cidr: {{ .nodeCidr | quote }}\n  dnsNameservers: {{ .dnsNameservers | toJson }}",
            )],
        )],
    )
}

/// The template's fixed network.
fn existing_fixed_network_id_config() -> Value {
    patch(
        "existingFixedNetworkIdConfig",
        Some(&if_set("fixedNetworkId")),
        vec![definition(
            Target::InfrastructureCluster,
            vec![from_template(
                "add",
                &format!("{SPEC}/network"),
                "id: {{ .fixedNetworkId | quote }}",
            )],
        )],
    )
}

/// The template's fixed subnet.
fn existing_fixed_subnet_id_config() -> Value {
    patch(
        "existingFixedSubnetIdConfig",
        Some(&if_set("fixedSubnetId")),
        vec![definition(
            Target::InfrastructureCluster,
            vec![from_template(
                "add",
                &format!("{SPEC}/subnets"),
                "- id: {{ .fixedSubnetId | quote }}",
            )],
        )],
    )
}

/// OpenID Connect authentication of the API server.
fn openid_connect() -> Value {
    let args = format!("{API_SERVER}/extraArgs");
    let operations: Vec<Value> = [
        ("oidc-issuer-url", "issuerUrl"),
        ("oidc-client-id", "clientId"),
        ("oidc-username-claim", "usernameClaim"),
        ("oidc-username-prefix", "usernamePrefix"),
        ("oidc-groups-claim", "groupsClaim"),
        ("oidc-groups-prefix", "groupsPrefix"),
    ]
    .iter()
    .map(|(arg, field)| {
        add_arg(
            &args,
            arg,
            &format!("{{{{ .openidConnect.{field} | quote }}}}"),
        )
    })
    .collect();
    patch(
        "openidConnect",
        Some("{{ if .openidConnect.issuerUrl }}true{{ end }}"),
        vec![definition(Target::ControlPlane, operations)],
    )
}

/// apt's proxy, on the Debian family only.
fn apt_proxy_config() -> Value {
    let file = "/etc/apt/apt.conf.d/90proxy";
    patch(
        "aptProxyConfig",
        Some(
            r#"{{ if and .aptProxyConfig (or (eq .operatingSystem "ubuntu") (eq .operatingSystem "debian")) }}true{{ end }}"#,
        ),
        vec![
            definition(
                Target::ControlPlane,
                vec![add_file_from_variable(
                    &format!("{KCS}/files"),
                    file,
                    "aptProxyConfig",
                )],
            ),
            definition(
                Target::WorkerBootstrap,
                vec![add_file_from_variable(
                    &format!("{SPEC}/files"),
                    file,
                    "aptProxyConfig",
                )],
            ),
        ],
    )
}

/// The Ignition format and configuration of a kubeadm configuration at
/// `base` on Flatcar.
fn flatcar_ignition(base: &str) -> Vec<Value> {
    vec![
        set("replace", &format!("{base}/format"), json!("ignition")),
        set(
            "add",
            &format!("{base}/ignition"),
            json!({ "containerLinuxConfig": { "additionalConfig": FLATCAR_IGNITION } }),
        ),
    ]
}

/// Flatcar nodes: Ignition instead of cloud-init, and the node name set
/// on the node, where Ignition knows the hostname.
fn flatcar() -> Value {
    let node_name = json!(FLATCAR_NODE_NAME);
    let mut control_plane = flatcar_ignition(KCS);
    control_plane.extend([
        set(
            "replace",
            &format!("{KCS}/initConfiguration/nodeRegistration/name"),
            node_name.clone(),
        ),
        set(
            "replace",
            &format!("{KCS}/joinConfiguration/nodeRegistration/name"),
            node_name.clone(),
        ),
        set(
            "add",
            &format!("{KCS}/preKubeadmCommands/-"),
            json!(FLATCAR_SET_NODE_NAME),
        ),
    ]);
    let mut workers = flatcar_ignition(SPEC);
    workers.extend([
        set(
            "replace",
            &format!("{SPEC}/joinConfiguration/nodeRegistration/name"),
            node_name,
        ),
        set(
            "add",
            &format!("{SPEC}/preKubeadmCommands/-"),
            json!(FLATCAR_SET_NODE_NAME),
        ),
    ]);
    patch(
        "flatcar",
        Some(r#"{{ if eq .operatingSystem "flatcar" }}true{{ end }}"#),
        vec![
            definition(Target::ControlPlane, control_plane),
            definition(Target::WorkerBootstrap, workers),
        ],
    )
}

/// The Nova server group of the machines. CAPO requires a UUID: without a
/// server group the field is left out rather than set to "".
fn server_group_id() -> Value {
    patch(
        "serverGroupId",
        Some(&if_set("serverGroupId")),
        vec![definition(
            Target::AllMachines,
            vec![from_template(
                "add",
                &format!("{SPEC}/serverGroup"),
                "id: {{ .serverGroupId | quote }}",
            )],
        )],
    )
}

/// The scheduler hint spreading a server group over failure domains.
fn scheduler_hints() -> Value {
    patch(
        "schedulerHints",
        None,
        vec![definition(
            Target::AllMachines,
            vec![from_template(
                "add",
                &format!("{SPEC}/schedulerHintAdditionalProperties"),
                "- name: different_failure_domain\n  value:\n    type: Bool\n    bool: {{ .isServerGroupDiffFailureDomain }}",
            )],
        )],
    )
}

/// The Nova keypair of the machines.
fn ssh_key_name() -> Value {
    patch(
        "sshKeyName",
        None,
        vec![definition(
            Target::AllMachines,
            vec![from_variable(
                "add",
                &format!("{SPEC}/sshKeyName"),
                "sshKeyName",
            )],
        )],
    )
}

/// The TLS cipher suites of the API server and the kubelets, and the API
/// server certificate's names: the cluster's Service names in the
/// management cluster (for magnum-cluster-api's proxy) and the extra SANs.
fn tls_cipher_suites() -> Value {
    let kubelet = "{{ .kubeletTLSCipherSuites | quote }}";
    patch(
        "TLSCipherSuites",
        None,
        vec![
            definition(
                Target::ControlPlane,
                vec![
                    add_arg(
                        &format!("{API_SERVER}/extraArgs"),
                        "tls-cipher-suites",
                        "{{ .apiServerTLSCipherSuites | quote }}",
                    ),
                    add_arg(
                        &format!("{KCS}/initConfiguration/nodeRegistration/kubeletExtraArgs"),
                        "tls-cipher-suites",
                        kubelet,
                    ),
                    add_arg(
                        &format!("{KCS}/joinConfiguration/nodeRegistration/kubeletExtraArgs"),
                        "tls-cipher-suites",
                        kubelet,
                    ),
                    from_template(
                        "add",
                        &format!("{API_SERVER}/certSANs"),
                        "- {{ .builtin.cluster.name }}\n\
                         - {{ .builtin.cluster.name }}.{{ .builtin.cluster.namespace }}\n\
                         - {{ .builtin.cluster.name }}.{{ .builtin.cluster.namespace }}.svc\n\
                         - {{ .builtin.cluster.name }}.{{ .builtin.cluster.namespace }}.svc.cluster.local\n\
                         {{ .apiServerSANs }}",
                    ),
                ],
            ),
            definition(
                Target::WorkerBootstrap,
                vec![add_arg(
                    &format!("{SPEC}/joinConfiguration/nodeRegistration/kubeletExtraArgs"),
                    "tls-cipher-suites",
                    kubelet,
                )],
            ),
        ],
    )
}

/// Partitions and formats the disk with `letter` as `label` in the
/// kubeadm configuration at `base`.
fn format_disk(base: &str, letter: char, label: &str) -> Vec<Value> {
    let device = disk(letter);
    vec![
        from_template(
            "add",
            &format!("{base}/diskSetup/partitions/-"),
            &partition(&device),
        ),
        from_template(
            "add",
            &format!("{base}/diskSetup/filesystems/-"),
            &filesystem(&device, label),
        ),
    ]
}

/// Mounts the filesystem labelled `label` on `path` in the kubeadm
/// configuration at `base`.
fn mount(base: &str, label: &str, path: &str) -> Value {
    set(
        "add",
        &format!("{base}/mounts/-"),
        json!([format!("LABEL={label}"), path]),
    )
}

/// etcd on a volume of its own on the masters, the second disk.
fn etcd_volume() -> Value {
    let mut control_plane = format_disk(KCS, 'b', "etcd_disk");
    control_plane.push(mount(KCS, "etcd_disk", "/var/lib/etcd"));
    patch(
        "etcdVolume",
        Some(&if_set("enableEtcdVolume")),
        vec![
            definition(
                Target::ControlPlaneMachines,
                vec![from_template(
                    "add",
                    &format!("{SPEC}/additionalBlockDevices/-"),
                    &block_device("etcd"),
                )],
            ),
            definition(Target::ControlPlane, control_plane),
        ],
    )
}

/// containerd's storage on a volume of its own on every node. On the
/// workers it is the second disk; on the masters its disk depends on the
/// etcd volume, see the next two patches.
fn docker_volume() -> Value {
    let mut workers = format_disk(SPEC, 'b', "docker_disk");
    workers.push(mount(SPEC, "docker_disk", "/var/lib/containerd"));
    patch(
        "dockerVolume",
        Some(&if_set("enableDockerVolume")),
        vec![
            definition(
                Target::AllMachines,
                vec![from_template(
                    "add",
                    &format!("{SPEC}/additionalBlockDevices/-"),
                    &block_device("docker"),
                )],
            ),
            definition(
                Target::ControlPlane,
                vec![mount(KCS, "docker_disk", "/var/lib/containerd")],
            ),
            definition(Target::WorkerBootstrap, workers),
        ],
    )
}

/// containerd's volume is the masters' third disk beside etcd's.
fn etcd_and_docker_volume_for_control_plane() -> Value {
    patch(
        "etcdAndDockerVolumeForControlPlane",
        Some("{{ if and .enableEtcdVolume .enableDockerVolume }}true{{ end }}"),
        vec![definition(
            Target::ControlPlane,
            format_disk(KCS, 'c', "docker_disk"),
        )],
    )
}

/// containerd's volume is the masters' second disk without etcd's.
fn only_docker_volume_for_control_plane() -> Value {
    patch(
        "onlyDockerVolumeForControlPlane",
        Some("{{ if and (not .enableEtcdVolume) .enableDockerVolume }}true{{ end }}"),
        vec![definition(
            Target::ControlPlane,
            format_disk(KCS, 'b', "docker_disk"),
        )],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go: TestPatchOrder.
    #[test]
    fn add_empty_lists_comes_first_and_names_are_unique() {
        let patches = class_patches();
        let patches = patches.as_array().unwrap();
        assert_eq!(patches[0]["name"], "addEmptyLists");
        let mut names: Vec<&str> = patches
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "duplicate patch names");
        for p in patches {
            for d in p["definitions"].as_array().unwrap() {
                let s = &d["selector"];
                assert!(
                    s["apiVersion"].is_string() && s["kind"].is_string(),
                    "patch {} has an incomplete selector",
                    p["name"]
                );
            }
        }
    }

    /// Go: TestClusterClassDeclaresEveryVariable — v1beta2 `extraArgs` are
    /// lists, so a patch appends to them and never names a key.
    #[test]
    fn extra_args_are_appended() {
        for p in class_patches().as_array().unwrap() {
            for d in p["definitions"].as_array().unwrap() {
                for op in d["jsonPatches"].as_array().unwrap() {
                    let path = op["path"].as_str().unwrap();
                    if let Some((_, rest)) = path.split_once("xtraArgs/") {
                        assert_eq!(rest, "-", "patch {} writes {path}", p["name"]);
                    }
                }
            }
        }
    }
}
