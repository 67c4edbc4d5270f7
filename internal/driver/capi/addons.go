package capi

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// The add-on manifests are upstream files (see addons/NOTICE), parsed and
// changed structurally: images, the pod CIDR and the cluster name.
//
//go:embed addons/calico/v3.28.5.yaml addons/cloud-provider-openstack/*.yaml
var addonFiles embed.FS

// Keys of the two add-on Secrets (driver-capi.md § 3.5).
const (
	AddonKeyCalico       = "calico.yml"
	AddonKeyCilium       = "cilium.yaml"
	AddonKeyCloudConfig  = "cloud-config-secret.yaml"
	AddonKeyKeystoneAuth = "keystone-auth.yaml"
	AddonKeyCCM          = "cloud-controller-manager.yaml"
	AddonKeyCinderCSI    = "cinder-csi.yaml"
	// addonKeyStorageClassPrefix + <rfc1123 type> + ".yaml" holds one
	// StorageClass per Cinder volume type.
	addonKeyStorageClassPrefix = "storageclass-block-"
)

// Labels read for the add-ons (§ 7.2).
const (
	LabelCiliumTag               = "cilium_tag"
	LabelCloudProviderTag        = "cloud_provider_tag"
	LabelCinderCSIEnabled        = "cinder_csi_enabled"
	LabelCinderCSIPluginTag      = "cinder_csi_plugin_tag"
	LabelCSIAttacherTag          = "csi_attacher_tag"
	LabelCSILivenessProbeTag     = "csi_liveness_probe_tag"
	LabelCSINodeDriverRegistrar  = "csi_node_driver_registrar_tag"
	LabelCSIProvisionerTag       = "csi_provisioner_tag"
	LabelCSIResizerTag           = "csi_resizer_tag"
	LabelCSISnapshotterTag       = "csi_snapshotter_tag"
	LabelOctaviaLBAlgorithm      = "octavia_lb_algorithm"
	LabelOctaviaLBHealthcheck    = "octavia_lb_healthcheck"
	defaultCiliumTag             = "v1.15.3"
	defaultOCCMProvider          = "amphorav2"
	secretTypeAddons             = "addons.cluster.x-k8s.io/resource-set"
	apiVersionAddons             = groupAddons + "/v1beta2"
	cinderProvisioner            = "cinder.csi.openstack.org"
	annotationDefaultStorageCls  = "storageclass.kubernetes.io/is-default-class"
	workloadCloudConfigSecret    = "cloud-config"
	workloadCACertPath           = "/etc/config/ca.crt"
	keystoneAuthPolicyConfigMap  = "k8s-auth-policy"
	keystoneAuthProjectIDPattern = "$PROJECT_ID"
)

// embeddedCalicoTag is the calico release of addons/calico. Other
// calico_tag values use its manifest with their own image tags unless
// [capi]/addons_manifests_dir has calico/<tag>.yaml.
const embeddedCalicoTag = "v3.28.5"

// Cloud provider images (CCM, Cinder CSI, k8s-keystone-auth) follow the
// Kubernetes minor version: v1.<minor>.0 between these bounds.
const (
	minCloudProviderMinor = 22
	maxCloudProviderMinor = 36
)

// csiSidecarLabels maps a CSI sidecar image (its last path element) to
// the label that overrides its tag; without the label the tag of the
// embedded manifest stays.
var csiSidecarLabels = map[string]string{
	"csi-attacher":              LabelCSIAttacherTag,
	"livenessprobe":             LabelCSILivenessProbeTag,
	"csi-node-driver-registrar": LabelCSINodeDriverRegistrar,
	"csi-provisioner":           LabelCSIProvisionerTag,
	"csi-resizer":               LabelCSIResizerTag,
	"csi-snapshotter":           LabelCSISnapshotterTag,
}

// AddonConfig is the deployment's part of the add-on Secrets.
type AddonConfig struct {
	// ManifestsDir is [capi]/addons_manifests_dir: operator manifests
	// cilium/<cilium_tag>.yaml and calico/<calico_tag>.yaml ("" for none).
	ManifestsDir string
	// CACert is the content of [drivers]/openstack_ca_file, written to the
	// workload cluster as ca.crt ("" for none).
	CACert string
	// InsecureTLS is the negation of [drivers]/verify_ca (cloud.conf
	// tls-insecure).
	InsecureTLS bool
	// KeystoneAuthPolicy is the content of
	// [kubernetes]/keystone_auth_default_policy, a JSON policy in which
	// $PROJECT_ID is replaced by the cluster's project ("" for the
	// built-in policy).
	KeystoneAuthPolicy string
}

// VolumeType is a Cinder volume type.
type VolumeType struct {
	Name string
	// Default marks Cinder's default type, whose StorageClass becomes the
	// cluster's default.
	Default bool
}

// AddonInput is what the add-on Secrets of one cluster are rendered from.
type AddonInput struct {
	Namespace, StackID, ClusterUUID, ProjectID string
	// Labels are the cluster's labels.
	Labels map[string]string
	// NetworkDriver is the template's CNI (calico or cilium).
	NetworkDriver string
	// Cloud gives the Keystone URL and region; Addons the rest.
	Cloud  CloudConfig
	Addons AddonConfig
	// Credential is the cluster's application credential.
	Credential AppCredential
	// Cinder is true when Cinder CSI is installed, with VolumeTypes.
	Cinder      bool
	VolumeTypes []VolumeType
}

// ClusterResourceSets returns the two add-on sets of a cluster (§ 3.2):
// "<uuid>" (ApplyOnce: strategy unset) and "<stack_id>-cloud-provider"
// (Reconcile), both selecting the Cluster by its cluster-uuid label.
func ClusterResourceSets(namespace, stackID, clusterUUID string) []*addonsv1.ClusterResourceSet {
	crs := func(name, strategy string) *addonsv1.ClusterResourceSet {
		return &addonsv1.ClusterResourceSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: apiVersionAddons, Kind: "ClusterResourceSet"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: addonsv1.ClusterResourceSetSpec{
				ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelClusterUUID: clusterUUID}},
				Resources:       []addonsv1.ResourceRef{{Kind: string(addonsv1.SecretClusterResourceSetResourceKind), Name: name}},
				Strategy:        strategy,
			},
		}
	}
	return []*addonsv1.ClusterResourceSet{
		crs(clusterUUID, ""),
		crs(stackID+SuffixCloudProvider, string(addonsv1.ClusterResourceSetStrategyReconcile)),
	}
}

// ClusterAddonsSecret is the apply-once Secret "<uuid>": the CNI (cni is
// its rendered manifest, see CNIManifest), the workload cloud-config
// Secret and, unless keystone_auth_enabled is false, k8s-keystone-auth.
func ClusterAddonsSecret(in AddonInput, cni []byte) (*corev1.Secret, error) {
	l := labels(in.Labels)
	data := map[string][]byte{}
	switch in.NetworkDriver {
	case "calico":
		data[AddonKeyCalico] = cni
	case "cilium":
		data[AddonKeyCilium] = cni
	default:
		return nil, magnum.NetworkDriverNotSupported(in.NetworkDriver, supportedCNIs)
	}
	cc, err := cloudConfigSecretManifest(in)
	if err != nil {
		return nil, err
	}
	data[AddonKeyCloudConfig] = cc
	keystone, err := l.boolean(LabelKeystoneAuthEnabled, true)
	if err != nil {
		return nil, err
	}
	if keystone {
		if data[AddonKeyKeystoneAuth], err = keystoneAuthManifest(in); err != nil {
			return nil, err
		}
	}
	return addonSecret(in.Namespace, in.ClusterUUID, data), nil
}

// CloudProviderSecret is the reconciled Secret "<stack_id>-cloud-provider":
// the OpenStack cloud controller manager, the workload cloud-config Secret
// and, when in.Cinder, Cinder CSI with one StorageClass per volume type.
func CloudProviderSecret(in AddonInput) (*corev1.Secret, error) {
	data := map[string][]byte{}
	var err error
	if data[AddonKeyCloudConfig], err = cloudConfigSecretManifest(in); err != nil {
		return nil, err
	}
	if data[AddonKeyCCM], err = ccmManifest(in); err != nil {
		return nil, err
	}
	if in.Cinder {
		if data[AddonKeyCinderCSI], err = cinderCSIManifest(in); err != nil {
			return nil, err
		}
		for _, vt := range in.VolumeTypes {
			if vt.Name == "__DEFAULT__" || rfc1123Name(vt.Name) == "" {
				continue
			}
			sc, err := renderObjects([]map[string]any{storageClass(vt)})
			if err != nil {
				return nil, err
			}
			data[addonKeyStorageClassPrefix+rfc1123Name(vt.Name)+".yaml"] = sc
		}
	}
	return addonSecret(in.Namespace, in.StackID+SuffixCloudProvider, data), nil
}

func addonSecret(namespace, name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Type:       secretTypeAddons,
		Data:       data,
	}
}

// ------------------------------------------------------------ cloud.conf

// CloudConf renders the cloud.conf of the workload cluster's
// kube-system/cloud-config Secret (§ 6.3), read by the cloud controller
// manager and Cinder CSI.
func CloudConf(in AddonInput) (string, error) {
	l := labels(in.Labels)
	provider := l.str(LabelOctaviaProvider, defaultOCCMProvider)
	method := l.str(LabelOctaviaLBAlgorithm, "")
	if provider == "ovn" {
		if method == "" {
			method = "SOURCE_IP_PORT"
		}
		if method != "SOURCE_IP_PORT" {
			return "", magnum.Invalid("Label %s %q is not supported by the ovn Octavia provider, which only supports SOURCE_IP_PORT.", LabelOctaviaLBAlgorithm, method)
		}
	} else if method == "" {
		method = "ROUND_ROBIN"
	}
	monitor, err := l.boolean(LabelOctaviaLBHealthcheck, true)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, iniValue(v)) }
	b.WriteString("[Global]\n")
	line("auth-url", in.Cloud.AuthURL)
	if in.Cloud.RegionName != "" {
		line("region", in.Cloud.RegionName)
	}
	line("application-credential-id", in.Credential.ID)
	line("application-credential-secret", in.Credential.Secret)
	line("tls-insecure", fmt.Sprint(in.Addons.InsecureTLS))
	if in.Addons.CACert != "" {
		line("ca-file", workloadCACertPath)
	}
	b.WriteString("\n[LoadBalancer]\n")
	line("lb-provider", provider)
	line("lb-method", method)
	line("create-monitor", fmt.Sprint(monitor))
	return b.String(), nil
}

// iniValue quotes a gcfg value that would otherwise be cut at a comment
// character or lose its surrounding blanks.
func iniValue(v string) string {
	if v == strings.TrimSpace(v) && !strings.ContainsAny(v, ";#\"\\\n") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}

// cloudConfigSecretManifest is the Secret kube-system/cloud-config of the
// workload cluster: cloud.conf and, when configured, ca.crt.
func cloudConfigSecretManifest(in AddonInput) ([]byte, error) {
	conf, err := CloudConf(in)
	if err != nil {
		return nil, err
	}
	data := map[string]any{"cloud.conf": conf}
	if in.Addons.CACert != "" {
		data["ca.crt"] = in.Addons.CACert
	}
	return renderObjects([]map[string]any{{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": workloadCloudConfigSecret, "namespace": "kube-system"},
		"type":       "Opaque",
		"stringData": data,
	}})
}

// ------------------------------------------------------------ CNI

// addonTagPattern is what a calico_tag or cilium_tag may be to name a file
// of [capi]/addons_manifests_dir.
var addonTagPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// CNIManifest renders the CNI add-on of a cluster:
//
//   - calico: calico/<calico_tag>.yaml of cfg.ManifestsDir, else the
//     embedded calico v3.28.5 manifest with its images at calico_tag;
//     calico-node gets CALICO_IPV4POOL_CIDR = calico_ipv4pool;
//   - cilium: cilium/<cilium_tag>.yaml of cfg.ManifestsDir, which must
//     exist (no cilium manifest is embedded); the ConfigMap cilium-config
//     gets cluster-pool-ipv4-cidr = cilium_ipv4pool when it has that key.
//
// Images are mirrored to container_infra_prefix in both cases.
func CNIManifest(cfg AddonConfig, networkDriver string, clusterLabels map[string]string) ([]byte, error) {
	l := labels(clusterLabels)
	prefix := l.str(LabelContainerInfraPrefix, "")
	switch networkDriver {
	case "calico":
		tag := l.str(LabelCalicoTag, defaultCalicoTag)
		raw, err := operatorManifest(cfg, "calico", LabelCalicoTag, tag)
		if err != nil {
			return nil, err
		}
		if raw == nil {
			if raw, err = addonFiles.ReadFile("addons/calico/" + embeddedCalicoTag + ".yaml"); err != nil {
				return nil, err
			}
		}
		objs, err := parseObjects(raw)
		if err != nil {
			return nil, fmt.Errorf("calico manifest: %w", err)
		}
		pool := l.str(LabelCalicoIPv4Pool, defaultPodCIDR)
		for _, o := range objs {
			forEachContainer(o, func(c map[string]any) {
				c["image"] = rewriteImage(str(c["image"]), prefix, func(path []string) string {
					if len(path) >= 2 && path[len(path)-2] == "calico" {
						return tag
					}
					return ""
				})
				if kindName(o) == "DaemonSet/calico-node" && c["name"] == "calico-node" {
					setEnv(c, "CALICO_IPV4POOL_CIDR", pool)
				}
			})
		}
		return renderObjects(objs)
	case "cilium":
		tag := l.str(LabelCiliumTag, defaultCiliumTag)
		raw, err := operatorManifest(cfg, "cilium", LabelCiliumTag, tag)
		if err != nil {
			return nil, err
		}
		if raw == nil {
			return nil, magnum.Invalid("No cilium manifest for cilium_tag %s: the operator must place cilium/%s.yaml in [capi]/addons_manifests_dir.", tag, tag)
		}
		objs, err := parseObjects(raw)
		if err != nil {
			return nil, fmt.Errorf("cilium manifest cilium/%s.yaml: %w", tag, err)
		}
		pool := l.str(LabelCiliumIPv4Pool, defaultPodCIDR)
		for _, o := range objs {
			forEachContainer(o, func(c map[string]any) {
				c["image"] = rewriteImage(str(c["image"]), prefix, nil)
			})
			if kindName(o) == "ConfigMap/cilium-config" {
				if data, ok := o["data"].(map[string]any); ok {
					if _, ok := data["cluster-pool-ipv4-cidr"]; ok {
						data["cluster-pool-ipv4-cidr"] = pool
					}
				}
			}
		}
		return renderObjects(objs)
	}
	return nil, magnum.NetworkDriverNotSupported(networkDriver, supportedCNIs)
}

// operatorManifest reads <kind>/<tag>.yaml of the manifests directory;
// nil when there is no directory or no such file.
func operatorManifest(cfg AddonConfig, kind, label, tag string) ([]byte, error) {
	if !addonTagPattern.MatchString(tag) {
		return nil, magnum.Invalid("Label %s has an invalid value %q.", label, tag)
	}
	if cfg.ManifestsDir == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(filepath.Join(cfg.ManifestsDir, kind, tag+".yaml"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s manifest: %w", kind, err)
	}
	return raw, nil
}

// ------------------------------------------------------------ cloud provider

// CloudProviderTag is the image tag of the cloud controller manager (and,
// by default, of Cinder CSI and k8s-keystone-auth): the label
// cloud_provider_tag, else v1.<minor>.0 of the cluster's Kubernetes minor,
// kept between v1.22.0 and v1.36.0.
func CloudProviderTag(clusterLabels map[string]string) string {
	l := labels(clusterLabels)
	if t := l.str(LabelCloudProviderTag, ""); t != "" {
		return t
	}
	minor := maxCloudProviderMinor
	if kv, err := KubeVersion(l.str(LabelKubeTag, "")); err == nil {
		if v, err := parseVersion(kv); err == nil && v.major == 1 {
			minor = min(max(v.minor, minCloudProviderMinor), maxCloudProviderMinor)
		}
	}
	return fmt.Sprintf("v1.%d.0", minor)
}

// providerImages retags the cloud-provider-openstack images and the CSI
// sidecars of a manifest and mirrors them to container_infra_prefix.
func providerImages(objs []map[string]any, clusterLabels map[string]string) {
	l := labels(clusterLabels)
	ccm := CloudProviderTag(clusterLabels)
	csi := l.str(LabelCinderCSIPluginTag, ccm)
	prefix := l.str(LabelContainerInfraPrefix, "")
	tagFor := func(path []string) string {
		last := path[len(path)-1]
		switch {
		case last == "cinder-csi-plugin":
			return csi
		case len(path) >= 2 && path[len(path)-2] == "provider-os":
			return ccm
		case csiSidecarLabels[last] != "":
			return l.str(csiSidecarLabels[last], "")
		}
		return ""
	}
	for _, o := range objs {
		forEachContainer(o, func(c map[string]any) {
			c["image"] = rewriteImage(str(c["image"]), prefix, tagFor)
		})
	}
}

// embeddedObjects parses embedded cloud-provider-openstack files.
func embeddedObjects(files ...string) ([]map[string]any, error) {
	var out []map[string]any
	for _, f := range files {
		raw, err := addonFiles.ReadFile("addons/cloud-provider-openstack/" + f)
		if err != nil {
			return nil, err
		}
		objs, err := parseObjects(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// ccmManifest is the OpenStack cloud controller manager: its RBAC and the
// DaemonSet on control-plane nodes, named after the cluster UUID
// (--cluster-name), so that its load balancers say "from cluster <uuid>".
func ccmManifest(in AddonInput) ([]byte, error) {
	objs, err := embeddedObjects("cloud-controller-manager-roles.yaml",
		"cloud-controller-manager-role-bindings.yaml", "openstack-cloud-controller-manager-ds.yaml")
	if err != nil {
		return nil, err
	}
	providerImages(objs, in.Labels)
	for _, o := range objs {
		forEachContainer(o, func(c map[string]any) {
			if c["name"] != "openstack-cloud-controller-manager" {
				return
			}
			setEnv(c, "CLUSTER_NAME", in.ClusterUUID)
			args, _ := c["args"].([]any)
			for i, a := range args {
				if s := str(a); strings.HasPrefix(s, "--cluster-name=") {
					args[i] = "--cluster-name=" + in.ClusterUUID
				}
			}
		})
	}
	return renderObjects(objs)
}

// cinderCSIManifest is Cinder CSI: RBAC, the controller Deployment, the
// node DaemonSet and the CSIDriver, with the cluster UUID as cluster ID.
func cinderCSIManifest(in AddonInput) ([]byte, error) {
	objs, err := embeddedObjects("cinder-csi-controllerplugin-rbac.yaml", "cinder-csi-controllerplugin.yaml",
		"cinder-csi-nodeplugin-rbac.yaml", "cinder-csi-nodeplugin.yaml", "csi-cinder-driver.yaml")
	if err != nil {
		return nil, err
	}
	providerImages(objs, in.Labels)
	for _, o := range objs {
		forEachContainer(o, func(c map[string]any) {
			if c["name"] == "cinder-csi-plugin" && hasEnv(c, "CLUSTER_NAME") {
				setEnv(c, "CLUSTER_NAME", in.ClusterUUID)
			}
		})
	}
	return renderObjects(objs)
}

// storageClass is the StorageClass "block-<type>" of a Cinder volume type.
func storageClass(vt VolumeType) map[string]any {
	meta := map[string]any{"name": "block-" + rfc1123Name(vt.Name)}
	if vt.Default {
		meta["annotations"] = map[string]any{annotationDefaultStorageCls: "true"}
	}
	return map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
		"provisioner":          cinderProvisioner,
		"parameters":           map[string]any{"type": vt.Name},
		"reclaimPolicy":        "Delete",
		"volumeBindingMode":    "Immediate",
		"allowVolumeExpansion": true,
	}
}

var notRFC1123 = regexp.MustCompile(`[^a-z0-9-]+`)

// rfc1123Name lowercases s and replaces what a DNS label cannot hold by
// "-" ("" when nothing is left).
func rfc1123Name(s string) string {
	n := strings.Trim(notRFC1123.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(n) > 50 {
		n = strings.TrimRight(n[:50], "-")
	}
	return n
}

// ------------------------------------------------------------ keystone auth

// defaultKeystoneAuthPolicy lets the members of the cluster's project read
// pods, services, deployments and persistent volume claims of "default"
// (k8s-keystone-auth policy format of examples/webhook/policy.json).
func defaultKeystoneAuthPolicy(projectID string) ([]byte, error) {
	return json.Marshal([]map[string]any{{
		"resource": map[string]any{
			"verbs": []string{"list"}, "resources": []string{"pods", "services", "deployments", "pvc"},
			"version": "*", "namespace": "default",
		},
		"match": []map[string]any{
			{"type": "role", "values": []string{"member"}},
			{"type": "project", "values": []string{projectID}},
		},
	}})
}

// keystoneAuthManifest is k8s-keystone-auth: its RBAC, the policy
// ConfigMap, and a DaemonSet on the control-plane nodes listening on the
// host's port 8443, where the API server's webhook kubeconfig points
// (https://127.0.0.1:8443/webhook). It serves with the node's API server
// certificate; the webhook kubeconfig skips verification.
func keystoneAuthManifest(in AddonInput) ([]byte, error) {
	objs, err := embeddedObjects("keystone-rbac.yaml")
	if err != nil {
		return nil, err
	}
	policy := []byte(strings.ReplaceAll(in.Addons.KeystoneAuthPolicy, keystoneAuthProjectIDPattern, in.ProjectID))
	if strings.TrimSpace(in.Addons.KeystoneAuthPolicy) == "" {
		if policy, err = defaultKeystoneAuthPolicy(in.ProjectID); err != nil {
			return nil, err
		}
	} else if !json.Valid(policy) {
		return nil, errors.New("capi driver: [kubernetes]/keystone_auth_default_policy is not valid JSON")
	}
	authURL := strings.TrimSuffix(strings.TrimRight(in.Cloud.AuthURL, "/"), "/v3") + "/v3"
	args := []any{
		"./bin/k8s-keystone-auth",
		"--tls-cert-file", "/etc/kubernetes/pki/apiserver.crt",
		"--tls-private-key-file", "/etc/kubernetes/pki/apiserver.key",
		"--policy-configmap-name", keystoneAuthPolicyConfigMap,
		"--keystone-url", authURL,
	}
	mounts := []any{map[string]any{"name": "k8s-certs", "mountPath": "/etc/kubernetes/pki", "readOnly": true}}
	volumes := []any{map[string]any{"name": "k8s-certs", "hostPath": map[string]any{"path": "/etc/kubernetes/pki", "type": "Directory"}}}
	if in.Addons.CACert != "" {
		args = append(args, "--keystone-ca-file", workloadCACertPath)
		mounts = append(mounts, map[string]any{"name": "cloud-config", "mountPath": "/etc/config", "readOnly": true})
		volumes = append(volumes, map[string]any{"name": "cloud-config", "secret": map[string]any{"secretName": workloadCloudConfigSecret}})
	}
	appLabels := map[string]any{"app": "k8s-keystone-auth"}
	objs = append(objs,
		map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": keystoneAuthPolicyConfigMap, "namespace": "kube-system"},
			"data":     map[string]any{"policies": string(policy)},
		},
		map[string]any{
			"apiVersion": "apps/v1", "kind": "DaemonSet",
			"metadata": map[string]any{"name": "k8s-keystone-auth", "namespace": "kube-system", "labels": appLabels},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": appLabels},
				"template": map[string]any{
					"metadata": map[string]any{"labels": appLabels},
					"spec": map[string]any{
						"serviceAccountName": "k8s-keystone",
						"hostNetwork":        true,
						"dnsPolicy":          "ClusterFirstWithHostNet",
						"nodeSelector":       map[string]any{"node-role.kubernetes.io/control-plane": ""},
						"tolerations": []any{
							map[string]any{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
							map[string]any{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"},
							map[string]any{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"},
						},
						"containers": []any{map[string]any{
							"name":         "k8s-keystone-auth",
							"image":        "registry.k8s.io/provider-os/k8s-keystone-auth:" + embeddedCloudProviderTag,
							"args":         args,
							"volumeMounts": mounts,
							"ports":        []any{map[string]any{"containerPort": 8443, "hostPort": 8443}},
						}},
						"volumes": volumes,
					},
				},
			},
		})
	providerImages(objs, in.Labels)
	return renderObjects(objs)
}

// embeddedCloudProviderTag is the release of addons/cloud-provider-openstack.
const embeddedCloudProviderTag = "v1.36.0"

// ------------------------------------------------------------ YAML objects

// parseObjects reads a multi-document manifest into objects. Empty
// documents are dropped, "List" objects are flattened, and every object
// must have an apiVersion and a kind.
func parseObjects(raw []byte) ([]map[string]any, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []map[string]any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("document %d: %w", len(out)+1, err)
		}
		if len(m) == 0 {
			continue
		}
		items := []map[string]any{m}
		if m["kind"] == "List" {
			items = items[:0]
			list, _ := m["items"].([]any)
			for _, it := range list {
				if im, ok := it.(map[string]any); ok && len(im) > 0 {
					items = append(items, im)
				}
			}
		}
		for _, it := range items {
			if str(it["apiVersion"]) == "" || str(it["kind"]) == "" {
				return nil, fmt.Errorf("document %d has no apiVersion or kind", len(out)+1)
			}
			out = append(out, it)
		}
	}
	return out, nil
}

// renderObjects writes objects as a YAML stream, one document each.
func renderObjects(objs []map[string]any) ([]byte, error) {
	var b bytes.Buffer
	for i, o := range objs {
		raw, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", kindName(o), err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(raw)
	}
	return b.Bytes(), nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// kindName is "<kind>/<name>" of an object.
func kindName(o map[string]any) string {
	meta, _ := o["metadata"].(map[string]any)
	return str(o["kind"]) + "/" + str(meta["name"])
}

// forEachContainer calls f on every container and init container of a
// workload (Pod, Deployment, DaemonSet, StatefulSet, ReplicaSet, Job,
// CronJob).
func forEachContainer(o map[string]any, f func(map[string]any)) {
	var pod map[string]any
	switch str(o["kind"]) {
	case "Pod":
		pod, _ = o["spec"].(map[string]any)
	case "CronJob":
		pod = nested(o, "spec", "jobTemplate", "spec", "template", "spec")
	default:
		pod = nested(o, "spec", "template", "spec")
	}
	if pod == nil {
		return
	}
	for _, key := range []string{"initContainers", "containers"} {
		list, _ := pod[key].([]any)
		for _, c := range list {
			if cm, ok := c.(map[string]any); ok {
				f(cm)
			}
		}
	}
}

func nested(o map[string]any, path ...string) map[string]any {
	cur := o
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

func hasEnv(c map[string]any, name string) bool {
	env, _ := c["env"].([]any)
	return slices.ContainsFunc(env, func(e any) bool {
		m, _ := e.(map[string]any)
		return str(m["name"]) == name
	})
}

// setEnv sets a container's environment variable, replacing its value (or
// valueFrom) when it exists.
func setEnv(c map[string]any, name, value string) {
	env, _ := c["env"].([]any)
	for _, e := range env {
		if m, ok := e.(map[string]any); ok && str(m["name"]) == name {
			delete(m, "valueFrom")
			m["value"] = value
			return
		}
	}
	c["env"] = append(env, map[string]any{"name": name, "value": value})
}

// rewriteImage sets the tag that tagFor returns for the image's path
// elements ("" keeps the tag; a digest is dropped with a new tag), then
// mirrors the image to prefix (§ 3.5): calico images become
// <prefix>/calico/<component>, cilium images <prefix>/cilium-<component>
// (the agent image "cilium" stays <prefix>/cilium), livenessprobe becomes
// <prefix>/csi-livenessprobe and every other image <prefix>/<component>.
func rewriteImage(image, prefix string, tagFor func(path []string) string) string {
	if image == "" {
		return image
	}
	name, digest, _ := strings.Cut(image, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	path := strings.Split(name, "/")
	if tagFor != nil {
		if t := tagFor(path); t != "" && t != tag {
			tag, digest = t, ""
		}
	}
	prefix = strings.TrimRight(prefix, "/")
	if prefix != "" {
		last := path[len(path)-1]
		parent := ""
		if len(path) >= 2 {
			parent = path[len(path)-2]
		}
		switch {
		case parent == "calico":
			name = prefix + "/calico/" + last
		case parent == "cilium" && !strings.HasPrefix(last, "cilium"):
			name = prefix + "/cilium-" + last
		case last == "livenessprobe":
			name = prefix + "/csi-livenessprobe"
		default:
			name = prefix + "/" + last
		}
	}
	out := name
	if tag != "" {
		out += ":" + tag
	}
	if digest != "" {
		out += "@" + digest
	}
	return out
}
