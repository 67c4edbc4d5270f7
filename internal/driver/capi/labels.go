package capi

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Label names read by the driver (driver-capi.md § 7.2).
const (
	LabelKubeTag                       = "kube_tag"
	LabelAutoScalingEnabled            = "auto_scaling_enabled"
	LabelAutoHealingEnabled            = "auto_healing_enabled"
	LabelMinNodeCount                  = "min_node_count"
	LabelMaxNodeCount                  = "max_node_count"
	LabelBootVolumeSize                = "boot_volume_size"
	LabelBootVolumeType                = "boot_volume_type"
	LabelBootVolumeAvailabilityZone    = "boot_volume_availability_zone"
	LabelAvailabilityZone              = "availability_zone"
	LabelControlPlaneAvailabilityZones = "control_plane_availability_zones"
	LabelEtcdVolumeSize                = "etcd_volume_size"
	LabelEtcdVolumeType                = "etcd_volume_type"
	LabelDockerVolumeType              = "docker_volume_type"
	LabelContainerInfraPrefix          = "container_infra_prefix"
	LabelDNSClusterDomain              = "dns_cluster_domain"
	LabelServiceClusterIPRange         = "service_cluster_ip_range"
	LabelCalicoIPv4Pool                = "calico_ipv4pool"
	LabelCiliumIPv4Pool                = "cilium_ipv4pool"
	LabelCalicoTag                     = "calico_tag"
	LabelFixedSubnetCIDR               = "fixed_subnet_cidr"
	LabelMasterLBFloatingIPEnabled     = "master_lb_floating_ip_enabled"
	LabelAPIServerFloatingIP           = "api_server_floating_ip"
	LabelOctaviaProvider               = "octavia_provider"
	LabelAPIServerLBFlavor             = "api_server_lb_flavor"
	LabelAPIServerLBAvailabilityZone   = "api_server_lb_availability_zone"
	LabelAPIServerCertSANs             = "api_server_cert_sans"
	LabelAPIServerTLSCipherSuites      = "api_server_tls_cipher_suites"
	LabelKubeletTLSCipherSuites        = "kubelet_tls_cipher_suites"
	LabelAdmissionControlList          = "admission_control_list"
	LabelAuditLogEnabled               = "audit_log_enabled"
	LabelAuditLogMaxAge                = "audit_log_max_age"
	LabelAuditLogMaxBackup             = "audit_log_max_backup"
	LabelAuditLogMaxSize               = "audit_log_max_size"
	LabelOIDCIssuerURL                 = "oidc_issuer_url"
	LabelOIDCClientID                  = "oidc_client_id"
	LabelOIDCUsernameClaim             = "oidc_username_claim"
	LabelOIDCUsernamePrefix            = "oidc_username_prefix"
	LabelOIDCGroupsClaim               = "oidc_groups_claim"
	LabelOIDCGroupsPrefix              = "oidc_groups_prefix"
	LabelKeystoneAuthEnabled           = "keystone_auth_enabled"
	LabelServerGroupPolicies           = "server_group_policies"
	LabelDifferentFailureDomain        = "different_failure_domain"
)

// Defaults of § 7.2.
const (
	defaultAPIServerCipherSuites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256," +
		"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384," +
		"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"
	defaultKubeletCipherSuites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384," +
		"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"
	defaultServiceDomain     = "cluster.local"
	defaultServiceCIDR       = "10.254.0.0/16"
	defaultPodCIDR           = "10.100.0.0/16"
	defaultCalicoTag         = "v3.32.1"
	defaultNodeCIDR          = "10.0.0.0/24"
	defaultServerGroupPolicy = "soft-anti-affinity"
)

// labels reads typed label values. Booleans and integers are parsed
// strictly, as magnum-cluster-api does: a malformed value is an error
// (which fails the operation) rather than a silent default.
type labels map[string]string

// str returns the label or def when it is absent.
func (l labels) str(key, def string) string {
	if v, ok := l[key]; ok {
		return v
	}
	return def
}

// boolean parses a boolean label: true/false, yes/no, on/off, 1/0, t/f,
// y/n in any case (Python's strtobool).
func (l labels) boolean(key string, def bool) (bool, error) {
	v, ok := l[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "t", "yes", "y", "on", "1":
		return true, nil
	case "false", "f", "no", "n", "off", "0":
		return false, nil
	}
	return false, magnum.Invalid("Label %s has an invalid boolean value %q.", key, v)
}

// integer parses an integer label.
func (l labels) integer(key string, def int64) (int64, error) {
	v, ok := l[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, magnum.Invalid("Label %s has an invalid integer value %q.", key, v)
	}
	return n, nil
}

// splitList splits a comma list, trimming blanks and dropping empty items.
func splitList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// KubeVersion returns the Kubernetes version of a kube_tag ("v1.31.1" from
// "1.31.1" or "v1.31.1"), or an error when the tag is missing or is not a
// semantic version (driver-capi.md § 7.2: kube_tag is mandatory).
func KubeVersion(kubeTag string) (string, error) {
	if kubeTag == "" {
		return "", magnum.Invalid("The cluster template has no kube_tag label, which the Cluster API driver requires.")
	}
	v := kubeTag
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if _, err := parseVersion(v); err != nil {
		return "", magnum.InvalidVersion(kubeTag)
	}
	return v, nil
}

// version is a parsed "vMAJOR.MINOR.PATCH[-pre][+build]".
type version struct{ major, minor, patch int }

func parseVersion(v string) (version, error) {
	s := strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return version{}, fmt.Errorf("version %q: want MAJOR.MINOR.PATCH", v)
	}
	var out [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return version{}, fmt.Errorf("version %q: bad number %q", v, p)
		}
		out[i] = n
	}
	return version{out[0], out[1], out[2]}, nil
}

func (v version) less(w version) bool {
	if v.major != w.major {
		return v.major < w.major
	}
	if v.minor != w.minor {
		return v.minor < w.minor
	}
	return v.patch < w.patch
}

// operatingSystem maps a cluster_distro to the operatingSystem variable by
// prefix ("ubuntu-focal" → "ubuntu").
func operatingSystem(distro string) (string, error) {
	for _, os := range []string{"ubuntu", "debian", "flatcar", "rockylinux"} {
		if strings.HasPrefix(strings.ToLower(distro), os) {
			return os, nil
		}
	}
	return "", magnum.Invalid("Cluster distro %q is not supported by the Cluster API driver.", distro)
}
