//! The labels the driver reads (driver-capi.md § 7.2), their defaults, and
//! the two values it derives from a cluster's labels and template before
//! anything else: the Kubernetes version of `kube_tag` and the operating
//! system of `cluster_distro`.
//!
//! Typed reading (booleans, integers, lists) is the SDK's [`Labels`]; a
//! malformed value is a 400 with Magnum's wording, never a silent default.

use std::fmt;

use openkeel_magnum_driver::{DriverError, Labels};

/// The Kubernetes version of the cluster; mandatory (§ 7.2).
pub const KUBE_TAG: &str = "kube_tag";
/// Whether the cluster autoscaler manages the worker nodegroups.
pub const AUTO_SCALING_ENABLED: &str = "auto_scaling_enabled";
/// Whether machine health checks remediate unhealthy machines.
pub const AUTO_HEALING_ENABLED: &str = "auto_healing_enabled";
/// The cluster autoscaler's image tag; by default the autoscaler release
/// of the cluster's Kubernetes minor.
pub const AUTOSCALER_TAG: &str = "autoscaler_tag";
/// The autoscaler's minimum size of a nodegroup.
pub const MIN_NODE_COUNT: &str = "min_node_count";
/// The autoscaler's maximum size of a nodegroup.
pub const MAX_NODE_COUNT: &str = "max_node_count";
/// The size (GiB) of the nodes' boot volume; 0 boots from the image.
pub const BOOT_VOLUME_SIZE: &str = "boot_volume_size";
/// The Cinder type of the boot volume.
pub const BOOT_VOLUME_TYPE: &str = "boot_volume_type";
/// The availability zone of the boot volume.
pub const BOOT_VOLUME_AVAILABILITY_ZONE: &str = "boot_volume_availability_zone";
/// The Nova availability zone of the nodes.
pub const AVAILABILITY_ZONE: &str = "availability_zone";
/// The availability zones the control plane is spread over.
pub const CONTROL_PLANE_AVAILABILITY_ZONES: &str = "control_plane_availability_zones";
/// The size (GiB) of the masters' etcd volume; 0 keeps etcd on the root
/// disk.
pub const ETCD_VOLUME_SIZE: &str = "etcd_volume_size";
/// The Cinder type of the etcd volume.
pub const ETCD_VOLUME_TYPE: &str = "etcd_volume_type";
/// The Cinder type of the container runtime volume.
pub const DOCKER_VOLUME_TYPE: &str = "docker_volume_type";
/// The registry mirroring every image the cluster pulls.
pub const CONTAINER_INFRA_PREFIX: &str = "container_infra_prefix";
/// The cluster's DNS domain.
pub const DNS_CLUSTER_DOMAIN: &str = "dns_cluster_domain";
/// The CIDR of the Services.
pub const SERVICE_CLUSTER_IP_RANGE: &str = "service_cluster_ip_range";
/// The pod CIDR with calico.
pub const CALICO_IPV4POOL: &str = "calico_ipv4pool";
/// The pod CIDR with cilium.
pub const CILIUM_IPV4POOL: &str = "cilium_ipv4pool";
/// The calico release installed.
pub const CALICO_TAG: &str = "calico_tag";
/// The CIDR of the subnet the driver creates for the nodes.
pub const FIXED_SUBNET_CIDR: &str = "fixed_subnet_cidr";
/// Whether the API load balancer gets a floating IP.
pub const MASTER_LB_FLOATING_IP_ENABLED: &str = "master_lb_floating_ip_enabled";
/// A floating IP address to give the API load balancer.
pub const API_SERVER_FLOATING_IP: &str = "api_server_floating_ip";
/// The Octavia provider of the API load balancer.
pub const OCTAVIA_PROVIDER: &str = "octavia_provider";
/// The Octavia flavor of the API load balancer.
pub const API_SERVER_LB_FLAVOR: &str = "api_server_lb_flavor";
/// The availability zone of the API load balancer.
pub const API_SERVER_LB_AVAILABILITY_ZONE: &str = "api_server_lb_availability_zone";
/// The CIDRs allowed to reach the API load balancer (magnum-capi-helm's
/// label); unset allows every address.
pub const API_MASTER_LB_ALLOWED_CIDRS: &str = "api_master_lb_allowed_cidrs";
/// Extra subject alternative names of the API server certificate.
pub const API_SERVER_CERT_SANS: &str = "api_server_cert_sans";
/// The TLS cipher suites of the API server.
pub const API_SERVER_TLS_CIPHER_SUITES: &str = "api_server_tls_cipher_suites";
/// The TLS cipher suites of the kubelets.
pub const KUBELET_TLS_CIPHER_SUITES: &str = "kubelet_tls_cipher_suites";
/// Admission plugins enabled beside NodeRestriction.
pub const ADMISSION_CONTROL_LIST: &str = "admission_control_list";
/// Whether the API server writes an audit log.
pub const AUDIT_LOG_ENABLED: &str = "audit_log_enabled";
/// Days an audit log file is kept. The code's spelling: the documentation
/// of magnum-cluster-api says `audit_log_maxage` (§ 12, question 10).
pub const AUDIT_LOG_MAX_AGE: &str = "audit_log_max_age";
/// Audit log files kept.
pub const AUDIT_LOG_MAX_BACKUP: &str = "audit_log_max_backup";
/// Size (MB) at which an audit log file is rotated.
pub const AUDIT_LOG_MAX_SIZE: &str = "audit_log_max_size";
/// The OpenID Connect issuer of the API server; unset disables OIDC.
pub const OIDC_ISSUER_URL: &str = "oidc_issuer_url";
/// The OpenID Connect client ID.
pub const OIDC_CLIENT_ID: &str = "oidc_client_id";
/// The claim naming the user.
pub const OIDC_USERNAME_CLAIM: &str = "oidc_username_claim";
/// The prefix of OIDC user names.
pub const OIDC_USERNAME_PREFIX: &str = "oidc_username_prefix";
/// The claim listing the user's groups.
pub const OIDC_GROUPS_CLAIM: &str = "oidc_groups_claim";
/// The prefix of OIDC group names.
pub const OIDC_GROUPS_PREFIX: &str = "oidc_groups_prefix";
/// Whether the API server authenticates and authorises through Keystone.
pub const KEYSTONE_AUTH_ENABLED: &str = "keystone_auth_enabled";
/// The policies of the nodegroups' Nova server groups.
pub const SERVER_GROUP_POLICIES: &str = "server_group_policies";
/// Whether a server group's members go to different failure domains.
pub const DIFFERENT_FAILURE_DOMAIN: &str = "different_failure_domain";

/// The cilium release whose operator manifest is installed.
pub const CILIUM_TAG: &str = "cilium_tag";
/// The image tag of the cloud controller manager (and, by default, of
/// Cinder CSI, Manila CSI and k8s-keystone-auth).
pub const CLOUD_PROVIDER_TAG: &str = "cloud_provider_tag";
/// Whether Cinder CSI is installed (when the cloud has Cinder).
pub const CINDER_CSI_ENABLED: &str = "cinder_csi_enabled";
/// The image tag of the Cinder CSI plugin.
pub const CINDER_CSI_PLUGIN_TAG: &str = "cinder_csi_plugin_tag";
/// Whether Manila CSI is installed (when the cloud has Manila).
pub const MANILA_CSI_ENABLED: &str = "manila_csi_enabled";
/// The image tag of the Manila CSI plugin.
pub const MANILA_CSI_PLUGIN_TAG: &str = "manila_csi_plugin_tag";
/// The Manila share network of the StorageClasses of share types that
/// handle share servers.
pub const MANILA_CSI_SHARE_NETWORK_ID: &str = "manila_csi_share_network_id";
/// The image tag of the CSI attacher sidecar.
pub const CSI_ATTACHER_TAG: &str = "csi_attacher_tag";
/// The image tag of the CSI liveness probe sidecar.
pub const CSI_LIVENESS_PROBE_TAG: &str = "csi_liveness_probe_tag";
/// The image tag of the CSI node driver registrar sidecar.
pub const CSI_NODE_DRIVER_REGISTRAR_TAG: &str = "csi_node_driver_registrar_tag";
/// The image tag of the CSI provisioner sidecar.
pub const CSI_PROVISIONER_TAG: &str = "csi_provisioner_tag";
/// The image tag of the CSI resizer sidecar.
pub const CSI_RESIZER_TAG: &str = "csi_resizer_tag";
/// The image tag of the CSI snapshotter sidecar.
pub const CSI_SNAPSHOTTER_TAG: &str = "csi_snapshotter_tag";
/// The algorithm of the load balancers of the cloud controller manager.
pub const OCTAVIA_LB_ALGORITHM: &str = "octavia_lb_algorithm";
/// Whether the cloud controller manager's load balancers get a health
/// monitor.
pub const OCTAVIA_LB_HEALTHCHECK: &str = "octavia_lb_healthcheck";

/// The API server's TLS cipher suites without `api_server_tls_cipher_suites`.
pub const DEFAULT_API_SERVER_CIPHER_SUITES: &str = concat!(
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
);
/// The kubelets' TLS cipher suites without `kubelet_tls_cipher_suites`.
pub const DEFAULT_KUBELET_CIPHER_SUITES: &str = concat!(
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
);
/// The cluster's DNS domain without `dns_cluster_domain`.
pub const DEFAULT_SERVICE_DOMAIN: &str = "cluster.local";
/// The Service CIDR without `service_cluster_ip_range`.
pub const DEFAULT_SERVICE_CIDR: &str = "10.254.0.0/16";
/// The pod CIDR without `calico_ipv4pool` or `cilium_ipv4pool`.
pub const DEFAULT_POD_CIDR: &str = "10.100.0.0/16";
/// The calico release without `calico_tag`.
pub const DEFAULT_CALICO_TAG: &str = "v3.32.1";
/// The cilium release without `cilium_tag`.
pub const DEFAULT_CILIUM_TAG: &str = "v1.15.3";
/// The nodes' subnet without `fixed_subnet_cidr`.
pub const DEFAULT_NODE_CIDR: &str = "10.0.0.0/24";
/// The server group policy without `server_group_policies`.
pub const DEFAULT_SERVER_GROUP_POLICY: &str = "soft-anti-affinity";

/// The longest image tag a registry takes (the distribution reference
/// grammar's).
const MAX_TAG_LEN: usize = 128;
/// The longest image name a registry takes.
const MAX_NAME_LEN: usize = 255;

/// The registry of `container_infra_prefix`, without a trailing `/`; None
/// when the label is unset or blank. A value that is not a registry host
/// (with an optional port) followed by an optional path is a 400, so that
/// an image reference built from it is always one a runtime can pull.
pub fn image_registry(labels: &Labels) -> Result<Option<&str>, DriverError> {
    let Some(value) = labels.get_str(CONTAINER_INFRA_PREFIX) else {
        return Ok(None);
    };
    let prefix = value.trim().trim_end_matches('/');
    if prefix.is_empty() {
        return Ok(None);
    }
    if prefix.len() > MAX_NAME_LEN || !is_registry_prefix(prefix) {
        return Err(DriverError::invalid(format!(
            "Label {CONTAINER_INFRA_PREFIX} has an invalid value {value:?}: expected a \
             registry host with an optional port and path, such as registry.example.com/k8s."
        )));
    }
    Ok(Some(prefix))
}

/// An image tag label: None when unset or blank; a value outside the tag
/// grammar (`[A-Za-z0-9_][A-Za-z0-9_.-]*`, at most 128 characters) is a
/// 400.
pub fn image_tag<'a>(labels: &'a Labels, key: &str) -> Result<Option<&'a str>, DriverError> {
    let Some(value) = labels.get_str(key) else {
        return Ok(None);
    };
    let tag = value.trim();
    if tag.is_empty() {
        return Ok(None);
    }
    if !is_tag(tag) {
        return Err(DriverError::invalid(format!(
            "Label {key} has an invalid value {value:?}: expected an image tag, such as v1.32.0."
        )));
    }
    Ok(Some(tag))
}

/// Whether `tag` is an image tag.
fn is_tag(tag: &str) -> bool {
    let mut bytes = tag.bytes();
    tag.len() <= MAX_TAG_LEN
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Whether `prefix` is `host[:port][/path…]`: the host is dot-separated
/// alphanumeric components with inner hyphens, the port digits, and each
/// path component lower-case alphanumerics joined by `.`, `_`, `__` or
/// hyphens.
fn is_registry_prefix(prefix: &str) -> bool {
    let mut parts = prefix.split('/');
    let host = parts.next().unwrap_or("");
    let (name, port) = match host.split_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    port_ok
        && !name.is_empty()
        && name.split('.').all(is_host_component)
        && parts.all(is_path_component)
}

/// A component of a registry host name.
fn is_host_component(c: &str) -> bool {
    let b = c.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter().all(|x| x.is_ascii_alphanumeric() || *x == b'-')
        }
        _ => false,
    }
}

/// A component of an image path.
fn is_path_component(c: &str) -> bool {
    let alnum = |x: &u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    let b = c.as_bytes();
    if !b.first().is_some_and(alnum) || !b.last().is_some_and(alnum) {
        return false;
    }
    // Between runs of alphanumerics: one `.`, one or two `_`, or hyphens.
    let mut i = 0;
    while i < b.len() {
        if alnum(&b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !alnum(&b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-');
        if !ok {
            return false;
        }
    }
    true
}

/// The CIDRs of `api_master_lb_allowed_cidrs`, separated by commas,
/// semicolons or spaces, each an IPv4 or IPv6 address with a prefix
/// length (`192.0.2.0/24`, `2001:db8::/32`); a bare address is taken as a
/// single host. Empty when the label is unset or blank; anything else is
/// a 400 naming the entry, and so is a list of both families (Octavia
/// refuses CIDRs of another family than the load balancer's address, so
/// such a cluster could never get its API listener).
pub fn allowed_cidrs(labels: &Labels) -> Result<Vec<String>, DriverError> {
    let value = labels.str_or(API_MASTER_LB_ALLOWED_CIDRS, "");
    let mut cidrs: Vec<String> = Vec::new();
    for entry in value
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|e| !e.is_empty())
    {
        let cidr = cidr(entry).ok_or_else(|| {
            DriverError::invalid(format!(
                "Label {API_MASTER_LB_ALLOWED_CIDRS} has an invalid entry {entry:?}: expected \
                 IPv4 or IPv6 CIDRs separated by commas, such as 192.0.2.0/24,2001:db8::/32."
            ))
        })?;
        if !cidrs.contains(&cidr) {
            cidrs.push(cidr);
        }
    }
    let v6 = cidrs.iter().filter(|c| c.contains(':')).count();
    if v6 > 0 && v6 < cidrs.len() {
        return Err(DriverError::invalid(format!(
            "Label {API_MASTER_LB_ALLOWED_CIDRS} mixes IPv4 and IPv6 CIDRs: the API load \
             balancer's address has one family, and Octavia refuses CIDRs of the other."
        )));
    }
    Ok(cidrs)
}

/// `entry` as a CIDR (`<address>/<prefix>`, the prefix at most 32 for
/// IPv4 and 128 for IPv6; a bare address gets the full length).
fn cidr(entry: &str) -> Option<String> {
    let (address, prefix) = match entry.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (entry, None),
    };
    let address: std::net::IpAddr = address.parse().ok()?;
    let max = if address.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        Some(p) if !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()) => {
            p.parse::<u8>().ok().filter(|n| *n <= max)?
        }
        Some(_) => return None,
        None => max,
    };
    Some(format!("{address}/{prefix}"))
}

/// The Services' CIDR: `service_cluster_ip_range`, else
/// [`DEFAULT_SERVICE_CIDR`]; an IPv4 or IPv6 address with its prefix
/// length. Anything else, blank included, is a 400: the Cluster's
/// `services.cidrBlocks` refuses an empty entry or one longer than 43
/// characters, and the API server would refuse any other.
pub fn service_cidr(labels: &Labels) -> Result<&str, DriverError> {
    let value = labels.str_or(SERVICE_CLUSTER_IP_RANGE, DEFAULT_SERVICE_CIDR);
    if value.contains('/') && cidr(value).is_some() {
        return Ok(value);
    }
    Err(crate::images::invalid_label(
        SERVICE_CLUSTER_IP_RANGE,
        value,
        "an IPv4 or IPv6 CIDR such as 10.254.0.0/16",
    ))
}

/// The cluster's DNS domain: `dns_cluster_domain`, else
/// [`DEFAULT_SERVICE_DOMAIN`]; a lower-case DNS name of at most 253
/// characters (the Cluster's `serviceDomain` refuses an empty or a longer
/// one, and the kubelets a name that is not a DNS subdomain). Anything
/// else is a 400.
pub fn service_domain(labels: &Labels) -> Result<&str, DriverError> {
    let value = labels.str_or(DNS_CLUSTER_DOMAIN, DEFAULT_SERVICE_DOMAIN);
    if is_dns_subdomain(value) {
        return Ok(value);
    }
    Err(crate::images::invalid_label(
        DNS_CLUSTER_DOMAIN,
        value,
        "a lower-case DNS domain such as cluster.local",
    ))
}

/// Whether `s` is an RFC 1123 subdomain: at most 253 characters, dot-
/// separated labels of at most 63 lower-case letters, digits and inner
/// hyphens.
pub fn is_dns_subdomain(s: &str) -> bool {
    let label = |l: &str| {
        let b = l.as_bytes();
        let alnum = |x: &u8| x.is_ascii_lowercase() || x.is_ascii_digit();
        !b.is_empty()
            && b.len() <= 63
            && b.first().is_some_and(alnum)
            && b.last().is_some_and(alnum)
            && b.iter().all(|x| alnum(x) || *x == b'-')
    };
    !s.is_empty() && s.len() <= 253 && s.split('.').all(label)
}

/// A semantic version's `MAJOR.MINOR.PATCH`. Pre-release and build parts
/// are accepted and ignored, so they take no part in the ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// The major version.
    pub major: u64,
    /// The minor version.
    pub minor: u64,
    /// The patch version.
    pub patch: u64,
}

impl Version {
    /// Parses `[v]MAJOR.MINOR.PATCH[-pre][+build]`; None for anything
    /// else.
    pub fn parse(text: &str) -> Option<Version> {
        let s = text.strip_prefix('v').unwrap_or(text);
        let core = s.split(['-', '+']).next().unwrap_or(s);
        let parts: Vec<&str> = core.split('.').collect();
        let [major, minor, patch] = parts.as_slice() else {
            return None;
        };
        Some(Version {
            major: number(major)?,
            minor: number(minor)?,
            patch: number(patch)?,
        })
    }
}

/// A version number: decimal digits only (Rust's integer parser would
/// also take a sign).
fn number(part: &str) -> Option<u64> {
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The Kubernetes version of a cluster: its `kube_tag` with a leading `v`
/// (`v1.31.1` from `1.31.1` or `v1.31.1`), checked to be a semantic
/// version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeVersion {
    tag: String,
    version: Version,
}

impl KubeVersion {
    /// The version of a `kube_tag`. An empty tag is refused (the driver
    /// requires one, § 7.2), and so is one that is not a semantic version,
    /// with Magnum's `InvalidVersion`.
    pub fn from_tag(kube_tag: &str) -> Result<KubeVersion, DriverError> {
        if kube_tag.is_empty() {
            return Err(DriverError::invalid(
                "The cluster template has no kube_tag label, which the Cluster API driver requires.",
            ));
        }
        let tag = if kube_tag.starts_with('v') {
            kube_tag.to_string()
        } else {
            format!("v{kube_tag}")
        };
        // The version becomes the tag of the control plane's images (and
        // the Cluster's `topology.version`, at most 256 characters).
        if tag.len() > MAX_TAG_LEN {
            return Err(invalid_version(kube_tag));
        }
        match Version::parse(&tag) {
            Some(version) => Ok(KubeVersion { tag, version }),
            None => Err(invalid_version(kube_tag)),
        }
    }

    /// The version of the `kube_tag` label of `labels`.
    pub fn from_labels(labels: &Labels) -> Result<KubeVersion, DriverError> {
        KubeVersion::from_tag(labels.str_or(KUBE_TAG, ""))
    }

    /// The tag as Cluster API takes it, `v1.31.1`.
    pub fn as_str(&self) -> &str {
        &self.tag
    }

    /// The parsed version.
    pub fn version(&self) -> Version {
        self.version
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tag)
    }
}

/// Magnum's 400 `InvalidVersion`: `Received invalid tag for <tag>.`
fn invalid_version(tag: &str) -> DriverError {
    DriverError::client(
        400,
        "InvalidVersion",
        format!("Received invalid tag for {tag}."),
    )
}

/// Checks an upgrade from the `kube_tag` `current` to `target`: the target
/// is set, valid, not lower, and skips no minor version. Cluster API
/// refuses a skip only asynchronously, which left magnum-cluster-api
/// clusters in UPDATE_FAILED; here it is a 400 before anything changes.
/// An unset or unparsable `current` constrains nothing.
pub fn validate_upgrade(current: &str, target: &str) -> Result<(), DriverError> {
    if target.is_empty() {
        return Err(DriverError::invalid(
            "Cluster template for upgrade has no kube_tag label.",
        ));
    }
    let target = KubeVersion::from_tag(target)?;
    if current.is_empty() {
        return Ok(());
    }
    let Ok(current) = KubeVersion::from_tag(current) else {
        return Ok(());
    };
    let (c, t) = (current.version(), target.version());
    if t < c {
        return Err(DriverError::invalid(format!(
            "Cannot upgrade from Kubernetes {current} to the lower version {target}."
        )));
    }
    if t.major != c.major || t.minor > c.minor + 1 {
        return Err(DriverError::invalid(format!(
            "Cannot upgrade from Kubernetes {current} to {target}: upgrade one minor version at a time."
        )));
    }
    Ok(())
}

/// The operating systems the ClusterClass knows (its `operatingSystem`
/// variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperatingSystem {
    /// Ubuntu, also `ubuntu-focal` and the like.
    Ubuntu,
    /// Debian.
    Debian,
    /// Flatcar Container Linux, bootstrapped with Ignition.
    Flatcar,
    /// Rocky Linux.
    RockyLinux,
}

impl OperatingSystem {
    /// Every operating system, in the order of the class variable's enum.
    pub const ALL: [OperatingSystem; 4] = [
        OperatingSystem::Ubuntu,
        OperatingSystem::Debian,
        OperatingSystem::Flatcar,
        OperatingSystem::RockyLinux,
    ];

    /// The value of the `operatingSystem` variable.
    pub fn as_str(self) -> &'static str {
        match self {
            OperatingSystem::Ubuntu => "ubuntu",
            OperatingSystem::Debian => "debian",
            OperatingSystem::Flatcar => "flatcar",
            OperatingSystem::RockyLinux => "rockylinux",
        }
    }

    /// The operating system of a template's `cluster_distro`, by prefix
    /// in any case (`ubuntu-focal` is Ubuntu); anything else is a 400.
    pub fn from_distro(distro: &str) -> Result<OperatingSystem, DriverError> {
        let lower = distro.to_lowercase();
        OperatingSystem::ALL
            .into_iter()
            .find(|os| lower.starts_with(os.as_str()))
            .ok_or_else(|| {
                DriverError::invalid(format!(
                    "Cluster distro {distro:?} is not supported by the Cluster API driver."
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_cidrs_are_checked_and_normalised() {
        let l = Labels::from([(
            API_MASTER_LB_ALLOWED_CIDRS,
            " 192.0.2.0/24,10.1.0.0/16; 198.51.100.7  192.0.2.0/24 0.0.0.0/0",
        )]);
        assert_eq!(
            allowed_cidrs(&l).unwrap(),
            [
                "192.0.2.0/24",
                "10.1.0.0/16",
                "198.51.100.7/32",
                "0.0.0.0/0"
            ]
        );
        let l = Labels::from([(API_MASTER_LB_ALLOWED_CIDRS, "2001:DB8::/32 ::/0")]);
        assert_eq!(allowed_cidrs(&l).unwrap(), ["2001:db8::/32", "::/0"]);
        let mixed = Labels::from([(API_MASTER_LB_ALLOWED_CIDRS, "192.0.2.0/24,2001:db8::/32")]);
        let e = allowed_cidrs(&mixed).expect_err("mixed families");
        assert!(e.to_string().contains("mixes IPv4 and IPv6"), "{e}");
        assert!(allowed_cidrs(&Labels::new()).unwrap().is_empty());
        for bad in [
            "192.0.2.0/33",
            "2001:db8::/129",
            "192.0.2.0/",
            "192.0.2.0/+8",
            "192.0.2/24",
            "10.0.0.0/8/8",
            "example.com/32",
            "192.0.2.0/24\"",
        ] {
            let e =
                allowed_cidrs(&Labels::from([(API_MASTER_LB_ALLOWED_CIDRS, bad)])).expect_err(bad);
            assert!(
                e.to_string()
                    .contains("api_master_lb_allowed_cidrs has an invalid entry"),
                "{bad}: {e}"
            );
        }
    }

    fn message(e: DriverError) -> (u16, String, String) {
        match e {
            DriverError::Client(m) => (m.status, m.kind, m.message),
            other => panic!("not a client error: {other}"),
        }
    }

    #[test]
    fn kube_tag_gets_a_leading_v() {
        for tag in ["1.31.1", "v1.31.1"] {
            let v = KubeVersion::from_tag(tag).unwrap();
            assert_eq!(v.as_str(), "v1.31.1");
            assert_eq!(
                v.version(),
                Version {
                    major: 1,
                    minor: 31,
                    patch: 1
                }
            );
        }
        let pre = KubeVersion::from_tag("v1.32.0-rc.1+build.5").unwrap();
        assert_eq!(pre.as_str(), "v1.32.0-rc.1+build.5");
        assert_eq!(pre.version().to_string(), "1.32.0");
    }

    #[test]
    fn kube_tag_is_mandatory_and_semantic() {
        let (status, kind, msg) = message(KubeVersion::from_tag("").unwrap_err());
        assert_eq!((status, kind.as_str()), (400, "Invalid"));
        assert_eq!(
            msg,
            "The cluster template has no kube_tag label, which the Cluster API driver requires."
        );
        for bad in [
            "latest", "v1.31", "1.31.1.0", "vv1.31.1", "v1.-1.0", "v1.+1.0", "v1..1",
        ] {
            let (status, kind, msg) = message(KubeVersion::from_tag(bad).unwrap_err());
            assert_eq!((status, kind.as_str()), (400, "InvalidVersion"), "{bad}");
            assert_eq!(msg, format!("Received invalid tag for {bad}."));
        }
        let labels = Labels::from([(KUBE_TAG, "1.30.2")]);
        assert_eq!(
            KubeVersion::from_labels(&labels).unwrap().as_str(),
            "v1.30.2"
        );
        assert!(KubeVersion::from_labels(&Labels::new()).is_err());
    }

    #[test]
    fn versions_are_ordered_by_number() {
        let v = |s| Version::parse(s).unwrap();
        assert!(v("v1.9.0") < v("v1.10.0"));
        assert!(v("1.31.1") < v("1.31.2"));
        assert!(v("v1.31.9") < v("v2.0.0"));
        assert_eq!(v("v1.31.1-rc.0"), v("v1.31.1"));
    }

    /// Go: TestVersionRules (the upgrade half).
    #[test]
    fn upgrades_go_one_minor_version_at_a_time() {
        for (current, target, err) in [
            ("v1.30.4", "v1.31.1", ""),
            ("v1.31.1", "v1.31.1", ""),
            ("1.31.0", "v1.31.2", ""),
            ("", "v1.31.2", ""),
            ("garbage", "v1.31.2", ""),
            ("v1.30.4", "v1.32.0", "one minor version at a time"),
            ("v1.31.1", "v2.0.0", "one minor version at a time"),
            ("v1.31.1", "v1.30.9", "lower version"),
            ("v1.31.1", "", "no kube_tag"),
            ("v1.31.1", "latest", "invalid tag"),
        ] {
            match validate_upgrade(current, target) {
                Ok(()) => assert_eq!(err, "", "{current} -> {target} accepted"),
                Err(e) => {
                    let (status, _, msg) = message(e);
                    assert_eq!(status, 400);
                    assert!(
                        !err.is_empty() && msg.contains(err),
                        "{current} -> {target}: {msg}"
                    );
                }
            }
        }
        let (_, _, msg) = message(validate_upgrade("v1.31.1", "v1.30.9").unwrap_err());
        assert_eq!(
            msg,
            "Cannot upgrade from Kubernetes v1.31.1 to the lower version v1.30.9."
        );
    }

    /// Go: TestVariableMapping ("ubuntu-focal is ubuntu", "an unsupported
    /// distro fails").
    #[test]
    fn operating_system_by_prefix() {
        for (distro, os) in [
            ("ubuntu", OperatingSystem::Ubuntu),
            ("ubuntu-focal", OperatingSystem::Ubuntu),
            ("Ubuntu-22.04", OperatingSystem::Ubuntu),
            ("debian-12", OperatingSystem::Debian),
            ("flatcar", OperatingSystem::Flatcar),
            ("rockylinux-9", OperatingSystem::RockyLinux),
        ] {
            assert_eq!(OperatingSystem::from_distro(distro), Ok(os), "{distro}");
        }
        let (status, kind, msg) =
            message(OperatingSystem::from_distro("fedora-coreos").unwrap_err());
        assert_eq!((status, kind.as_str()), (400, "Invalid"));
        assert_eq!(
            msg,
            "Cluster distro \"fedora-coreos\" is not supported by the Cluster API driver."
        );
    }

    /// Go: TestVariableMapping's malformed labels fail; the parsing is the
    /// SDK's, this checks the driver's labels reach it with their names.
    #[test]
    fn malformed_labels_name_the_label() {
        let l = Labels::from([(AUDIT_LOG_ENABLED, "maybe"), (ETCD_VOLUME_SIZE, "ten")]);
        let (_, _, msg) = message(l.bool(AUDIT_LOG_ENABLED, false).unwrap_err());
        assert!(msg.contains(AUDIT_LOG_ENABLED), "{msg}");
        let (_, _, msg) = message(l.int(ETCD_VOLUME_SIZE, 0).unwrap_err());
        assert!(msg.contains(ETCD_VOLUME_SIZE), "{msg}");
    }
}
