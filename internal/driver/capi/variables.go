package capi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Resolved holds what the builders need from OpenStack: Nova flavor names,
// Glance image IDs, Neutron IDs and Nova server group IDs. The Driver fills
// it through its Resolver and ServerGroups; tests give it literally.
type Resolved struct {
	// ControlPlaneFlavor is the flavor name of master_flavor_id.
	ControlPlaneFlavor string
	// ControlPlaneImage is the image of the master nodegroup.
	ControlPlaneImage Image
	// ExternalNetworkID, FixedNetworkID and FixedSubnetID are Neutron IDs
	// ("" when not set).
	ExternalNetworkID string
	FixedNetworkID    string
	FixedSubnetID     string
	// ServerGroups maps a server group name to its Nova ID.
	ServerGroups map[string]string
	// NodeGroups holds the per-nodegroup lookups, by nodegroup name.
	NodeGroups map[string]ResolvedNodeGroup
}

// Image is a resolved Glance image.
type Image struct {
	// ID is the Glance image ID.
	ID string
	// DiskBus is the image property hw_disk_bus ("" when unset).
	DiskBus string
}

// ResolvedNodeGroup is the OpenStack side of one worker nodegroup.
type ResolvedNodeGroup struct {
	// Flavor is the flavor name of the nodegroup's flavor_id.
	Flavor string
	// Image is the nodegroup's image.
	Image Image
}

// LiveInfra is what the driver reads back from an existing OpenStackCluster,
// whose load-balancer fields and disableAPIServerFloatingIP CAPO treats as
// immutable (driver-capi.md § 4.1, immutable_fields).
type LiveInfra struct {
	LBProvider         string
	LBFlavor           string
	LBAvailabilityZone string
	// HasDisableFloatingIP is true when the live spec has the field at all.
	HasDisableFloatingIP bool
	DisableFloatingIP    bool
}

// Input is everything the pure builders read.
type Input struct {
	// State is the cluster, its template and its nodegroups.
	State driver.ClusterState
	// StackID is the CAPI Cluster name.
	StackID string
	// Namespace of every object.
	Namespace string
	// ClassVersion picks the ClusterClass "magnum-v<ClassVersion>".
	ClassVersion string
	// Resolved are the OpenStack lookups.
	Resolved Resolved
	// Live is the existing OpenStackCluster's immutable fields (nil when
	// there is none yet).
	Live *LiveInfra
	// DefaultBootVolumeSize and DefaultBootVolumeType are [cinder]
	// default_boot_volume_size and default_boot_volume_type; DefaultVolumeType
	// is Cinder's default volume type.
	DefaultBootVolumeSize int64
	DefaultBootVolumeType string
	DefaultVolumeType     string
}

// VariableNames are the 39 variables of the ClusterClass, sorted. Every one
// is required, so a Cluster sets all of them (§ 4.1).
var VariableNames = []string{
	"admissionControlList", "apiServerFloatingIP", "apiServerLoadBalancer", "apiServerSANs",
	"apiServerTLSCipherSuites", "aptProxyConfig", "auditLog", "availabilityZone", "bootVolume",
	"bootVolumeAvailabilityZone", "clusterIdentityRefName", "containerdConfig",
	"controlPlaneAvailabilityZones", "controlPlaneFlavor", "disableAPIServerFloatingIP",
	"disableAPIServerFloatingIPManaged", "dnsNameservers", "dockerVolumeSize", "dockerVolumeType",
	"enableDockerVolume", "enableEtcdVolume", "enableKeystoneAuth", "etcdVolumeSize", "etcdVolumeType",
	"externalNetworkId", "fixedNetworkId", "fixedSubnetId", "flavor", "hardwareDiskBus",
	"imageRepository", "imageUUID", "isServerGroupDiffFailureDomain", "kubeletTLSCipherSuites",
	"nodeCidr", "openidConnect", "operatingSystem", "serverGroupId", "sshKeyName",
	"systemdProxyConfig",
}

// apiServerLoadBalancer is the apiServerLoadBalancer variable.
type apiServerLoadBalancer struct {
	Enabled          bool   `json:"enabled"`
	Provider         string `json:"provider,omitempty"`
	Flavor           string `json:"flavor,omitempty"`
	AvailabilityZone string `json:"availabilityZone,omitempty"`
}

// auditLog is the auditLog variable; the sizes are strings because they
// become kube-apiserver arguments.
type auditLog struct {
	Enabled   bool   `json:"enabled"`
	MaxAge    string `json:"maxAge"`
	MaxBackup string `json:"maxBackup"`
	MaxSize   string `json:"maxSize"`
}

// bootVolume is the bootVolume variable.
type bootVolume struct {
	Type string `json:"type"`
	Size int64  `json:"size"`
}

// openIDConnect is the openidConnect variable.
type openIDConnect struct {
	IssuerURL      string `json:"issuerUrl"`
	ClientID       string `json:"clientId"`
	UsernameClaim  string `json:"usernameClaim"`
	UsernamePrefix string `json:"usernamePrefix"`
	GroupsClaim    string `json:"groupsClaim"`
	GroupsPrefix   string `json:"groupsPrefix"`
}

// ClusterVariables returns the 39 topology variables of the cluster, sorted
// by name (driver-capi.md § 4.1).
func ClusterVariables(in Input) ([]clusterv1.ClusterVariable, error) {
	cl, tpl := in.State.Cluster, in.State.Template
	l := labels(cl.Labels)
	vars := map[string]any{}

	admission := "NodeRestriction"
	if v := l.str(LabelAdmissionControlList, ""); v != "" {
		admission += "," + v
	}
	vars["admissionControlList"] = admission
	vars["apiServerFloatingIP"] = l.str(LabelAPIServerFloatingIP, "")

	lb := apiServerLoadBalancer{
		Enabled:          boolValue(cl.MasterLBEnabled, boolValue(tpl.MasterLBEnabled, false)),
		Provider:         l.str(LabelOctaviaProvider, ""),
		Flavor:           l.str(LabelAPIServerLBFlavor, ""),
		AvailabilityZone: l.str(LabelAPIServerLBAvailabilityZone, ""),
	}
	if in.Live != nil {
		lb.Provider, lb.Flavor, lb.AvailabilityZone = in.Live.LBProvider, in.Live.LBFlavor, in.Live.LBAvailabilityZone
	}
	vars["apiServerLoadBalancer"] = lb

	var sans strings.Builder
	for _, s := range splitList(l.str(LabelAPIServerCertSANs, "")) {
		fmt.Fprintf(&sans, "- %s\n", s)
	}
	vars["apiServerSANs"] = sans.String()
	vars["apiServerTLSCipherSuites"] = l.str(LabelAPIServerTLSCipherSuites, defaultAPIServerCipherSuites)
	vars["kubeletTLSCipherSuites"] = l.str(LabelKubeletTLSCipherSuites, defaultKubeletCipherSuites)

	httpProxy, httpsProxy, noProxy := value(tpl.HTTPProxy), value(tpl.HTTPSProxy), value(tpl.NoProxy)
	vars["aptProxyConfig"] = aptProxyConfig(httpProxy, httpsProxy)
	vars["systemdProxyConfig"] = systemdProxyConfig(httpProxy, httpsProxy, noProxy)

	audit := auditLog{}
	var err error
	if audit.Enabled, err = l.boolean(LabelAuditLogEnabled, false); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		dst *string
		key string
		def int64
	}{{&audit.MaxAge, LabelAuditLogMaxAge, 30}, {&audit.MaxBackup, LabelAuditLogMaxBackup, 10}, {&audit.MaxSize, LabelAuditLogMaxSize, 100}} {
		n, err := l.integer(f.key, f.def)
		if err != nil {
			return nil, err
		}
		*f.dst = fmt.Sprint(n)
	}
	vars["auditLog"] = audit

	az := l.str(LabelAvailabilityZone, "")
	vars["availabilityZone"] = az
	bootAZ := l.str(LabelBootVolumeAvailabilityZone, az)
	vars["bootVolumeAvailabilityZone"] = bootAZ
	bv, err := bootVolumeOf(l, in)
	if err != nil {
		return nil, err
	}
	vars["bootVolume"] = bv
	vars["clusterIdentityRefName"] = in.StackID + SuffixCloudConfig
	vars["containerdConfig"] = containerdConfig(l.str(LabelContainerInfraPrefix, ""))

	cpAZs := strings.Split(l.str(LabelControlPlaneAvailabilityZones, ""), ",")
	for i := range cpAZs {
		cpAZs[i] = strings.TrimSpace(cpAZs[i])
	}
	vars["controlPlaneAvailabilityZones"] = cpAZs
	vars["controlPlaneFlavor"] = in.Resolved.ControlPlaneFlavor

	fipEnabled, err := l.boolean(LabelMasterLBFloatingIPEnabled, true)
	if err != nil {
		return nil, err
	}
	disableFIP, managed := !fipEnabled, !fipEnabled
	if in.Live != nil && in.Live.HasDisableFloatingIP {
		disableFIP, managed = in.Live.DisableFloatingIP, true
	}
	vars["disableAPIServerFloatingIP"] = disableFIP
	vars["disableAPIServerFloatingIPManaged"] = managed

	// Deviation from magnum-cluster-api, which fails when dns_nameserver is
	// NULL: an unset field gives an empty list (§ 7.1).
	dns := splitList(value(tpl.DNSNameserver))
	if dns == nil {
		dns = []string{}
	}
	vars["dnsNameservers"] = dns

	dockerSize := cl.DockerVolumeSize
	if dockerSize == nil {
		dockerSize = tpl.DockerVolumeSize
	}
	vars["dockerVolumeSize"] = int64(intValue(dockerSize))
	vars["enableDockerVolume"] = dockerSize != nil
	vars["dockerVolumeType"] = l.str(LabelDockerVolumeType, in.DefaultVolumeType)
	etcdSize, err := l.integer(LabelEtcdVolumeSize, 0)
	if err != nil {
		return nil, err
	}
	vars["etcdVolumeSize"] = etcdSize
	vars["enableEtcdVolume"] = etcdSize > 0
	vars["etcdVolumeType"] = l.str(LabelEtcdVolumeType, in.DefaultVolumeType)
	keystone, err := l.boolean(LabelKeystoneAuthEnabled, true)
	if err != nil {
		return nil, err
	}
	vars["enableKeystoneAuth"] = keystone

	vars["externalNetworkId"] = in.Resolved.ExternalNetworkID
	vars["fixedNetworkId"] = in.Resolved.FixedNetworkID
	vars["fixedSubnetId"] = in.Resolved.FixedSubnetID

	worker, _ := defaultWorker(in.State.NodeGroups)
	vars["flavor"] = in.Resolved.NodeGroups[worker.Name].Flavor
	vars["hardwareDiskBus"] = in.Resolved.ControlPlaneImage.DiskBus
	vars["imageRepository"] = l.str(LabelContainerInfraPrefix, "")
	vars["imageUUID"] = in.Resolved.ControlPlaneImage.ID
	diff, err := l.boolean(LabelDifferentFailureDomain, false)
	if err != nil {
		return nil, err
	}
	vars["isServerGroupDiffFailureDomain"] = diff
	vars["nodeCidr"] = l.str(LabelFixedSubnetCIDR, defaultNodeCIDR)
	vars["openidConnect"] = openIDConnect{
		IssuerURL:      l.str(LabelOIDCIssuerURL, ""),
		ClientID:       l.str(LabelOIDCClientID, ""),
		UsernameClaim:  l.str(LabelOIDCUsernameClaim, "sub"),
		UsernamePrefix: l.str(LabelOIDCUsernamePrefix, "-"),
		GroupsClaim:    l.str(LabelOIDCGroupsClaim, ""),
		GroupsPrefix:   l.str(LabelOIDCGroupsPrefix, ""),
	}
	osName, err := operatingSystem(value(tpl.ClusterDistro))
	if err != nil {
		return nil, err
	}
	vars["operatingSystem"] = osName
	vars["serverGroupId"] = in.Resolved.ServerGroups[serverGroupName(in.StackID, "")]
	keypair := value(cl.Keypair)
	if keypair == "" {
		keypair = value(tpl.KeypairID)
	}
	vars["sshKeyName"] = keypair

	return toVariables(vars)
}

// NodeGroupOverrides returns the per-MachineDeployment variable overrides
// of a worker nodegroup, sorted by name (§ 3.4).
func NodeGroupOverrides(in Input, ng magnum.NodeGroup) ([]clusterv1.ClusterVariable, error) {
	cl := labels(in.State.Cluster.Labels)
	nl := labels(ng.Labels)
	vars := map[string]any{}
	bv, err := bootVolumeOf(nl, in)
	if err != nil {
		return nil, err
	}
	vars["bootVolume"] = bv
	r := in.Resolved.NodeGroups[ng.Name]
	vars["flavor"] = r.Flavor
	vars["hardwareDiskBus"] = r.Image.DiskBus
	vars["imageRepository"] = nl.str(LabelContainerInfraPrefix, "")
	vars["imageUUID"] = r.Image.ID
	vars["serverGroupId"] = in.Resolved.ServerGroups[serverGroupName(in.StackID, ng.Name)]
	ngDiff, err := nl.boolean(LabelDifferentFailureDomain, false)
	if err != nil {
		return nil, err
	}
	clDiff, err := cl.boolean(LabelDifferentFailureDomain, false)
	if err != nil {
		return nil, err
	}
	vars["isServerGroupDiffFailureDomain"] = ngDiff || clDiff
	return toVariables(vars)
}

func bootVolumeOf(l labels, in Input) (bootVolume, error) {
	size, err := l.integer(LabelBootVolumeSize, in.DefaultBootVolumeSize)
	if err != nil {
		return bootVolume{}, err
	}
	typ := in.DefaultBootVolumeType
	if typ == "" {
		typ = in.DefaultVolumeType
	}
	return bootVolume{Type: l.str(LabelBootVolumeType, typ), Size: size}, nil
}

// toVariables marshals the values and sorts the variables by name.
func toVariables(vars map[string]any) ([]clusterv1.ClusterVariable, error) {
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]clusterv1.ClusterVariable, 0, len(names))
	for _, n := range names {
		raw, err := canonicalJSON(vars[n])
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", n, err)
		}
		out = append(out, clusterv1.ClusterVariable{Name: n, Value: apiextensionsv1.JSON{Raw: raw}})
	}
	return out, nil
}

// canonicalJSON marshals v with object keys sorted, the form the API
// server returns, so that an applied value compares equal to a built one.
func canonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}

// containerdConfig renders the containerd configuration (base64): config
// version 2, the pause image mirrored to the prefix, the systemd cgroup
// driver and the drop-in directory.
func containerdConfig(prefix string) string {
	pause := "registry.k8s.io/pause:3.9"
	if prefix != "" {
		pause = strings.TrimSuffix(prefix, "/") + "/pause:3.9"
	}
	cfg := "version = 2\n" +
		"imports = [\"/etc/containerd/conf.d/*.toml\"]\n\n" +
		"[plugins]\n" +
		"  [plugins.\"io.containerd.grpc.v1.cri\"]\n" +
		"    sandbox_image = \"" + pause + "\"\n" +
		"  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n" +
		"    runtime_type = \"io.containerd.runc.v2\"\n" +
		"  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n" +
		"    SystemdCgroup = true\n"
	return base64.StdEncoding.EncodeToString([]byte(cfg))
}

// systemdProxyConfig renders the containerd proxy drop-in (base64), or ""
// without a proxy.
func systemdProxyConfig(httpProxy, httpsProxy, noProxy string) string {
	if httpProxy == "" && httpsProxy == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("[Service]\n")
	for _, kv := range [][2]string{{"http_proxy", httpProxy}, {"https_proxy", httpsProxy}, {"no_proxy", noProxy}} {
		if kv[1] == "" {
			continue
		}
		fmt.Fprintf(&b, "Environment=\"%s=%s\"\n", kv[0], kv[1])
		fmt.Fprintf(&b, "Environment=\"%s=%s\"\n", strings.ToUpper(kv[0]), kv[1])
	}
	return base64.StdEncoding.EncodeToString([]byte(b.String()))
}

// aptProxyConfig renders the apt proxy configuration (base64), or "".
func aptProxyConfig(httpProxy, httpsProxy string) string {
	if httpProxy == "" && httpsProxy == "" {
		return ""
	}
	var b strings.Builder
	if httpProxy != "" {
		fmt.Fprintf(&b, "Acquire::http::Proxy \"%s\";\n", httpProxy)
	}
	if httpsProxy != "" {
		fmt.Fprintf(&b, "Acquire::https::Proxy \"%s\";\n", httpsProxy)
	}
	return base64.StdEncoding.EncodeToString([]byte(b.String()))
}

func value(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func intValue(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func boolValue(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

func ptr[T any](v T) *T { return &v }

func isMaster(ng magnum.NodeGroup) bool { return ng.Role != nil && *ng.Role == magnum.RoleMaster }

func isDefault(ng magnum.NodeGroup) bool { return ng.IsDefault != nil && *ng.IsDefault }

// defaultWorker is the default non-master nodegroup.
func defaultWorker(ngs []magnum.NodeGroup) (magnum.NodeGroup, bool) {
	for _, ng := range ngs {
		if isDefault(ng) && !isMaster(ng) {
			return ng, true
		}
	}
	return magnum.NodeGroup{}, false
}

// masterNodeGroup is the default master nodegroup.
func masterNodeGroup(ngs []magnum.NodeGroup) (magnum.NodeGroup, bool) {
	for _, ng := range ngs {
		if isMaster(ng) {
			return ng, true
		}
	}
	return magnum.NodeGroup{}, false
}
