//! The values of the class variables for one cluster (driver-capi.md
//! § 4.1): all 40 at the cluster level, and the seven each worker
//! MachineDeployment overrides (§ 3.4), from the cluster's rows and labels
//! (§ 7) and the OpenStack lookups of [`Input`].
//!
//! A malformed label is Magnum's 400 (the SDK's [`Labels`] readers), and
//! so are an unsupported `cluster_distro` and, in [`crate::cluster`], a
//! missing or malformed `kube_tag`.

use std::collections::BTreeMap;

use openkeel_magnum_driver::{ClusterTemplate, DriverError, Labels, NodeGroup};
use serde_json::{Map, Value, json};

use crate::input::{Input, ResolvedNodeGroup};
use crate::labels::{
    ADMISSION_CONTROL_LIST, API_SERVER_CERT_SANS, API_SERVER_FLOATING_IP,
    API_SERVER_LB_AVAILABILITY_ZONE, API_SERVER_LB_FLAVOR, API_SERVER_TLS_CIPHER_SUITES,
    AUDIT_LOG_ENABLED, AUDIT_LOG_MAX_AGE, AUDIT_LOG_MAX_BACKUP, AUDIT_LOG_MAX_SIZE,
    AVAILABILITY_ZONE, BOOT_VOLUME_AVAILABILITY_ZONE, BOOT_VOLUME_SIZE, BOOT_VOLUME_TYPE,
    CONTAINER_INFRA_PREFIX, CONTROL_PLANE_AVAILABILITY_ZONES, DEFAULT_API_SERVER_CIPHER_SUITES,
    DEFAULT_KUBELET_CIPHER_SUITES, DEFAULT_NODE_CIDR, DIFFERENT_FAILURE_DOMAIN, DOCKER_VOLUME_TYPE,
    ETCD_VOLUME_SIZE, ETCD_VOLUME_TYPE, FIXED_SUBNET_CIDR, KEYSTONE_AUTH_ENABLED,
    KUBELET_TLS_CIPHER_SUITES, MASTER_LB_FLOATING_IP_ENABLED, OCTAVIA_PROVIDER, OIDC_CLIENT_ID,
    OIDC_GROUPS_CLAIM, OIDC_GROUPS_PREFIX, OIDC_ISSUER_URL, OIDC_USERNAME_CLAIM,
    OIDC_USERNAME_PREFIX, OperatingSystem,
};
use crate::names::{SUFFIX_CLOUD_CONFIG, server_group_name};
use crate::node_config::{apt_proxy_config, containerd_config, systemd_proxy_config};
use crate::registries::Registries;

/// Variable values by variable name; the map's order is the order of the
/// topology's lists, sorted by name as the API server keeps them.
pub type Variables = BTreeMap<&'static str, Value>;

/// The admission plugin always enabled, before `admission_control_list`.
const ADMISSION_ALWAYS: &str = "NodeRestriction";
/// `audit_log_max_age` without the label (days).
const DEFAULT_AUDIT_LOG_MAX_AGE: i64 = 30;
/// `audit_log_max_backup` without the label (files).
const DEFAULT_AUDIT_LOG_MAX_BACKUP: i64 = 10;
/// `audit_log_max_size` without the label (MB).
const DEFAULT_AUDIT_LOG_MAX_SIZE: i64 = 100;
/// `oidc_username_claim` without the label.
const DEFAULT_OIDC_USERNAME_CLAIM: &str = "sub";
/// `oidc_username_prefix` without the label: no prefix.
const DEFAULT_OIDC_USERNAME_PREFIX: &str = "-";

/// The 40 variables of the cluster, every one the class declares
/// ([`crate::variables::VARIABLE_NAMES`]).
pub fn cluster_variables(input: &Input) -> Result<Variables, DriverError> {
    let labels = input.state.cluster.labels();
    let mut vars = Variables::new();
    api_server(input, &mut vars)?;
    proxies(&input.state.template, &mut vars);
    vars.insert("auditLog", audit_log(labels)?);
    let zone = labels.str_or(AVAILABILITY_ZONE, "");
    vars.insert("availabilityZone", json!(zone));
    vars.insert(
        "bootVolumeAvailabilityZone",
        json!(labels.str_or(BOOT_VOLUME_AVAILABILITY_ZONE, zone)),
    );
    vars.insert("bootVolume", boot_volume(labels, input)?);
    vars.insert(
        "clusterIdentityRefName",
        json!(format!("{}{SUFFIX_CLOUD_CONFIG}", input.stack_id)),
    );
    let registries = Registries::of_cluster(&input.registries, &input.state.template, labels)?;
    vars.insert(
        "containerdConfig",
        json!(containerd_config(
            labels.str_or(CONTAINER_INFRA_PREFIX, ""),
            &registries
        )),
    );
    control_plane(input, &mut vars);
    floating_ip(input, &mut vars)?;
    volumes(input, &mut vars)?;
    vars.insert(
        "enableKeystoneAuth",
        json!(labels.bool(KEYSTONE_AUTH_ENABLED, true)?),
    );
    networks(input, &mut vars);
    machines(input, &mut vars)?;
    vars.insert("openidConnect", openid_connect(labels));
    let distro = input.state.template.cluster_distro.as_deref().unwrap_or("");
    vars.insert(
        "operatingSystem",
        json!(OperatingSystem::from_distro(distro)?.as_str()),
    );
    vars.insert("sshKeyName", json!(ssh_key_name(input)));
    Ok(vars)
}

/// The seven variables a worker nodegroup's MachineDeployment overrides,
/// from the nodegroup's own labels and lookups.
pub fn node_group_overrides(input: &Input, ng: &NodeGroup) -> Result<Variables, DriverError> {
    let labels = ng.labels();
    let resolved = resolved_node_group(input, &ng.name);
    let mut vars = Variables::new();
    vars.insert("bootVolume", boot_volume(labels, input)?);
    vars.insert("flavor", json!(resolved.flavor));
    vars.insert("hardwareDiskBus", json!(resolved.image.disk_bus));
    vars.insert(
        "imageRepository",
        json!(labels.str_or(CONTAINER_INFRA_PREFIX, "")),
    );
    vars.insert("imageUUID", json!(resolved.image.id));
    vars.insert(
        "serverGroupId",
        json!(server_group_id(input, Some(ng.name.as_str()))),
    );
    // The nodegroup's label or the cluster's: either spreads the group.
    let own = labels.bool(DIFFERENT_FAILURE_DOMAIN, false)?;
    let cluster = input
        .state
        .cluster
        .labels()
        .bool(DIFFERENT_FAILURE_DOMAIN, false)?;
    vars.insert("isServerGroupDiffFailureDomain", json!(own || cluster));
    Ok(vars)
}

/// The topology's form of `vars`: a list of `{name, value}`.
pub fn variable_list(vars: &Variables) -> Value {
    vars.iter()
        .map(|(name, value)| json!({ "name": name, "value": value }))
        .collect()
}

/// The API server's variables: admission plugins, floating IP address,
/// load balancer, certificate SANs and TLS cipher suites.
fn api_server(input: &Input, vars: &mut Variables) -> Result<(), DriverError> {
    let labels = input.state.cluster.labels();
    let admission = match labels.str_or(ADMISSION_CONTROL_LIST, "") {
        "" => ADMISSION_ALWAYS.to_string(),
        extra => format!("{ADMISSION_ALWAYS},{extra}"),
    };
    vars.insert("admissionControlList", json!(admission));
    vars.insert(
        "apiServerFloatingIP",
        json!(labels.str_or(API_SERVER_FLOATING_IP, "")),
    );
    vars.insert("apiServerLoadBalancer", api_server_load_balancer(input));
    // Only a load balancer has a list of allowed CIDRs.
    let cidrs = crate::labels::allowed_cidrs(labels)?;
    let lb = vars["apiServerLoadBalancer"]["enabled"] == json!(true);
    vars.insert(
        "apiServerLoadBalancerAllowedCIDRs",
        json!(if lb { cidrs } else { Vec::new() }),
    );
    // A YAML list, which the patch splices into the certificate's SANs:
    // a name or address of letters, digits, dots and dashes as it is (as
    // the Go driver wrote every one), anything else (a wildcard, which YAML
    // reads as an alias; a colon; a newline) quoted, so that no SAN changes
    // the list's structure.
    let mut sans = String::new();
    for san in labels.list(API_SERVER_CERT_SANS) {
        let plain = san.starts_with(|c: char| c.is_ascii_alphanumeric())
            && san
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        sans.push_str("- ");
        if plain {
            sans.push_str(san);
        } else {
            sans.push_str(&Value::String(san.to_string()).to_string());
        }
        sans.push('\n');
    }
    vars.insert("apiServerSANs", json!(sans));
    vars.insert(
        "apiServerTLSCipherSuites",
        json!(labels.str_or(
            API_SERVER_TLS_CIPHER_SUITES,
            DEFAULT_API_SERVER_CIPHER_SUITES
        )),
    );
    vars.insert(
        "kubeletTLSCipherSuites",
        json!(labels.str_or(KUBELET_TLS_CIPHER_SUITES, DEFAULT_KUBELET_CIPHER_SUITES)),
    );
    Ok(())
}

/// `apiServerLoadBalancer`: enabled by the cluster's (else the
/// template's) `master_lb_enabled`; provider, flavor and zone from the
/// live OpenStackCluster when there is one (CAPO keeps them immutable),
/// else from the labels, each left out when empty.
fn api_server_load_balancer(input: &Input) -> Value {
    let (cluster, template) = (&input.state.cluster, &input.state.template);
    let labels = cluster.labels();
    let enabled = cluster
        .master_lb_enabled
        .or(template.master_lb_enabled)
        .unwrap_or(false);
    let (provider, flavor, zone) = match &input.live {
        Some(live) => (
            live.lb_provider.as_str(),
            live.lb_flavor.as_str(),
            live.lb_availability_zone.as_str(),
        ),
        None => (
            labels.str_or(OCTAVIA_PROVIDER, ""),
            labels.str_or(API_SERVER_LB_FLAVOR, ""),
            labels.str_or(API_SERVER_LB_AVAILABILITY_ZONE, ""),
        ),
    };
    let mut lb = Map::new();
    lb.insert("enabled".into(), json!(enabled));
    for (key, value) in [
        ("provider", provider),
        ("flavor", flavor),
        ("availabilityZone", zone),
    ] {
        if !value.is_empty() {
            lb.insert(key.into(), json!(value));
        }
    }
    Value::Object(lb)
}

/// The proxy configurations of containerd and apt, from the template.
fn proxies(template: &ClusterTemplate, vars: &mut Variables) {
    let http = template.http_proxy.as_deref().unwrap_or("");
    let https = template.https_proxy.as_deref().unwrap_or("");
    let no_proxy = template.no_proxy.as_deref().unwrap_or("");
    vars.insert("aptProxyConfig", json!(apt_proxy_config(http, https)));
    vars.insert(
        "systemdProxyConfig",
        json!(systemd_proxy_config(http, https, no_proxy)),
    );
}

/// `auditLog`; the sizes are strings because they become kube-apiserver
/// arguments.
fn audit_log(labels: &Labels) -> Result<Value, DriverError> {
    let enabled = labels.bool(AUDIT_LOG_ENABLED, false)?;
    let max_age = labels.int(AUDIT_LOG_MAX_AGE, DEFAULT_AUDIT_LOG_MAX_AGE)?;
    let max_backup = labels.int(AUDIT_LOG_MAX_BACKUP, DEFAULT_AUDIT_LOG_MAX_BACKUP)?;
    let max_size = labels.int(AUDIT_LOG_MAX_SIZE, DEFAULT_AUDIT_LOG_MAX_SIZE)?;
    Ok(json!({
        "enabled": enabled,
        "maxAge": max_age.to_string(),
        "maxBackup": max_backup.to_string(),
        "maxSize": max_size.to_string(),
    }))
}

/// `bootVolume` from `labels` (the cluster's, or a nodegroup's for its
/// override): the size defaults to `[cinder] default_boot_volume_size`,
/// the type to `[cinder] default_boot_volume_type`, else Cinder's default
/// type.
fn boot_volume(labels: &Labels, input: &Input) -> Result<Value, DriverError> {
    let size = boot_volume_size(labels, input)?;
    let default_type = input
        .default_boot_volume_type
        .as_deref()
        .filter(|t| !t.is_empty())
        .unwrap_or(&input.default_volume_type);
    let kind = labels.str_or(BOOT_VOLUME_TYPE, default_type);
    Ok(json!({ "type": kind, "size": size }))
}

/// The boot volume size (GiB) of `labels` (the cluster's, or a
/// nodegroup's): `boot_volume_size`, else `[cinder]
/// default_boot_volume_size`; 0 boots from the image.
pub(crate) fn boot_volume_size(labels: &Labels, input: &Input) -> Result<i64, DriverError> {
    labels.int(BOOT_VOLUME_SIZE, input.default_boot_volume_size)
}

/// The control plane's availability zones and flavor. The zones are the
/// label split on commas, blanks kept: an unset label gives `[""]`.
fn control_plane(input: &Input, vars: &mut Variables) {
    let zones: Vec<&str> = input
        .state
        .cluster
        .labels()
        .str_or(CONTROL_PLANE_AVAILABILITY_ZONES, "")
        .split(',')
        .map(str::trim)
        .collect();
    vars.insert("controlPlaneAvailabilityZones", json!(zones));
    vars.insert(
        "controlPlaneFlavor",
        json!(input.resolved.control_plane_flavor),
    );
}

/// `disableAPIServerFloatingIP` and its `…Managed` twin: the inverse of
/// `master_lb_floating_ip_enabled`, unless the live OpenStackCluster has
/// the field, whose value then stays, marked managed so that CAPO's
/// webhook sees no change.
fn floating_ip(input: &Input, vars: &mut Variables) -> Result<(), DriverError> {
    let enabled = input
        .state
        .cluster
        .labels()
        .bool(MASTER_LB_FLOATING_IP_ENABLED, true)?;
    let live = input.live.as_ref().and_then(|l| l.disable_floating_ip);
    let (disable, managed) = match live {
        Some(disable) => (disable, true),
        None => (!enabled, !enabled),
    };
    vars.insert("disableAPIServerFloatingIP", json!(disable));
    vars.insert("disableAPIServerFloatingIPManaged", json!(managed));
    Ok(())
}

/// The container runtime's and etcd's volumes.
fn volumes(input: &Input, vars: &mut Variables) -> Result<(), DriverError> {
    let (cluster, template) = (&input.state.cluster, &input.state.template);
    let labels = cluster.labels();
    let docker = cluster.docker_volume_size.or(template.docker_volume_size);
    vars.insert("dockerVolumeSize", json!(docker.unwrap_or(0)));
    vars.insert("enableDockerVolume", json!(docker.is_some()));
    let default_type = input.default_volume_type.as_str();
    vars.insert(
        "dockerVolumeType",
        json!(labels.str_or(DOCKER_VOLUME_TYPE, default_type)),
    );
    let etcd = labels.int(ETCD_VOLUME_SIZE, 0)?;
    vars.insert("etcdVolumeSize", json!(etcd));
    vars.insert("enableEtcdVolume", json!(etcd > 0));
    vars.insert(
        "etcdVolumeType",
        json!(labels.str_or(ETCD_VOLUME_TYPE, default_type)),
    );
    Ok(())
}

/// The Neutron IDs of the external network and of the cluster's network
/// and subnet, and the CIDR and DNS servers of the network CAPO creates
/// without one.
fn networks(input: &Input, vars: &mut Variables) {
    // Deviation: magnum-cluster-api fails when `dns_nameserver` is NULL;
    // an unset field gives an empty list (driver-capi.md § 7.1).
    let dns: Vec<&str> = input
        .state
        .template
        .dns_nameserver
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|server| !server.is_empty())
        .collect();
    vars.insert("dnsNameservers", json!(dns));
    let resolved = &input.resolved;
    vars.insert("externalNetworkId", json!(resolved.external_network_id));
    vars.insert("fixedNetworkId", json!(resolved.fixed_network_id));
    vars.insert("fixedSubnetId", json!(resolved.fixed_subnet_id));
    vars.insert(
        "nodeCidr",
        json!(
            input
                .state
                .cluster
                .labels()
                .str_or(FIXED_SUBNET_CIDR, DEFAULT_NODE_CIDR)
        ),
    );
}

/// The machine variables at the cluster level, which the control plane
/// uses and the MachineDeployments override: the default worker's flavor,
/// the control plane's image and server group, the image mirror and the
/// failure-domain hint.
fn machines(input: &Input, vars: &mut Variables) -> Result<(), DriverError> {
    let labels = input.state.cluster.labels();
    let worker = input
        .state
        .default_worker()
        .map(|ng| ng.name.as_str())
        .unwrap_or("");
    vars.insert("flavor", json!(resolved_node_group(input, worker).flavor));
    let image = &input.resolved.control_plane_image;
    vars.insert("hardwareDiskBus", json!(image.disk_bus));
    vars.insert(
        "imageRepository",
        json!(labels.str_or(CONTAINER_INFRA_PREFIX, "")),
    );
    vars.insert("imageUUID", json!(image.id));
    vars.insert(
        "isServerGroupDiffFailureDomain",
        json!(labels.bool(DIFFERENT_FAILURE_DOMAIN, false)?),
    );
    vars.insert("serverGroupId", json!(server_group_id(input, None)));
    Ok(())
}

/// `openidConnect`, from the `oidc_*` labels.
fn openid_connect(labels: &Labels) -> Value {
    json!({
        "issuerUrl": labels.str_or(OIDC_ISSUER_URL, ""),
        "clientId": labels.str_or(OIDC_CLIENT_ID, ""),
        "usernameClaim": labels.str_or(OIDC_USERNAME_CLAIM, DEFAULT_OIDC_USERNAME_CLAIM),
        "usernamePrefix": labels.str_or(OIDC_USERNAME_PREFIX, DEFAULT_OIDC_USERNAME_PREFIX),
        "groupsClaim": labels.str_or(OIDC_GROUPS_CLAIM, ""),
        "groupsPrefix": labels.str_or(OIDC_GROUPS_PREFIX, ""),
    })
}

/// The cluster's key pair, else the template's, else "".
fn ssh_key_name(input: &Input) -> &str {
    let (cluster, template) = (&input.state.cluster, &input.state.template);
    [&cluster.keypair, &template.keypair_id]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .find(|k| !k.is_empty())
        .unwrap_or("")
}

/// The lookups of the worker nodegroup `name`; empty when there are none.
fn resolved_node_group(input: &Input, name: &str) -> ResolvedNodeGroup {
    input
        .resolved
        .node_groups
        .get(name)
        .cloned()
        .unwrap_or_default()
}

/// The Nova ID of the server group of the control plane (`nodegroup`
/// None) or of a worker nodegroup; "" when it was not looked up.
fn server_group_id<'a>(input: &'a Input, nodegroup: Option<&str>) -> &'a str {
    input
        .resolved
        .server_groups
        .get(&server_group_name(&input.stack_id, nodegroup))
        .map(String::as_str)
        .unwrap_or("")
}

#[cfg(test)]
#[path = "cluster_variables_tests.rs"]
mod tests;
