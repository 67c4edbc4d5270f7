package capi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// fakeBlockStorage is a Cinder with two volume types.
type fakeBlockStorage struct {
	types     []VolumeType
	available bool
}

func (f fakeBlockStorage) VolumeTypes(context.Context, driver.Credentials) ([]VolumeType, bool, error) {
	return f.types, f.available, nil
}

var testVolumeTypes = []VolumeType{{Name: "__DEFAULT__"}, {Name: "SSD_fast", Default: true}, {Name: "standard"}}

func testAddonInput() AddonInput {
	st := testState()
	return AddonInput{
		Namespace: DefaultNamespace, StackID: testStackID, ClusterUUID: testUUID, ProjectID: "p1",
		Labels: st.Cluster.Labels, NetworkDriver: "calico",
		Cloud:      CloudConfig{AuthURL: "https://keystone.example.com/v3", RegionName: "RegionOne"},
		Addons:     AddonConfig{CACert: "-----OPENSTACK CA-----\n"},
		Credential: AppCredential{ID: "ac-1", Secret: "s3cr;et"},
		Cinder:     true, VolumeTypes: testVolumeTypes,
	}
}

// streamObjects checks that raw is a YAML stream of Kubernetes objects
// with no empty document, and returns them.
func streamObjects(t *testing.T, key string, raw []byte) []map[string]any {
	t.Helper()
	if len(bytes.TrimSpace(raw)) == 0 {
		t.Fatalf("%s is empty", key)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []map[string]any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatalf("%s document %d: %v", key, len(out)+1, err)
		}
		if len(m) == 0 {
			t.Fatalf("%s has an empty document after %d objects", key, len(out))
		}
		meta, _ := m["metadata"].(map[string]any)
		if str(m["apiVersion"]) == "" || str(m["kind"]) == "" || str(meta["name"]) == "" {
			t.Fatalf("%s document %d is not a Kubernetes object: %.200v", key, len(out)+1, m)
		}
		out = append(out, m)
	}
	return out
}

// images lists the container images of objs.
func images(objs []map[string]any) []string {
	var out []string
	for _, o := range objs {
		forEachContainer(o, func(c map[string]any) { out = append(out, str(c["image"])) })
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func find(objs []map[string]any, kindAndName string) map[string]any {
	for _, o := range objs {
		if kindName(o) == kindAndName {
			return o
		}
	}
	return nil
}

func container(t *testing.T, o map[string]any, name string) map[string]any {
	t.Helper()
	var found map[string]any
	forEachContainer(o, func(c map[string]any) {
		if c["name"] == name {
			found = c
		}
	})
	if found == nil {
		t.Fatalf("%s has no container %s", kindName(o), name)
	}
	return found
}

func envValue(c map[string]any, name string) string {
	env, _ := c["env"].([]any)
	for _, e := range env {
		if m, _ := e.(map[string]any); str(m["name"]) == name {
			return str(m["value"])
		}
	}
	return ""
}

func keys(s *corev1.Secret) []string {
	var out []string
	for k := range s.Data {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestClusterResourceSets(t *testing.T) {
	sets := ClusterResourceSets(DefaultNamespace, testStackID, testUUID)
	want := []struct{ name, strategy string }{{testUUID, ""}, {testStackID + "-cloud-provider", "Reconcile"}}
	if len(sets) != len(want) {
		t.Fatalf("%d sets", len(sets))
	}
	for i, w := range want {
		s := sets[i]
		if s.Name != w.name || s.Namespace != DefaultNamespace || s.Spec.Strategy != w.strategy {
			t.Errorf("set %d: %s/%s strategy %q, want %s strategy %q", i, s.Namespace, s.Name, s.Spec.Strategy, w.name, w.strategy)
		}
		if diff := cmp.Diff(map[string]string{"cluster-uuid": testUUID}, s.Spec.ClusterSelector.MatchLabels); diff != "" {
			t.Errorf("%s selector (-want +got):\n%s", s.Name, diff)
		}
		if diff := cmp.Diff([]addonsv1.ResourceRef{{Kind: "Secret", Name: w.name}}, s.Spec.Resources); diff != "" {
			t.Errorf("%s resources (-want +got):\n%s", s.Name, diff)
		}
		if s.APIVersion != "addons.cluster.x-k8s.io/v1beta2" || s.Kind != "ClusterResourceSet" {
			t.Errorf("%s type %s %s", s.Name, s.APIVersion, s.Kind)
		}
	}
}

func TestRewriteImage(t *testing.T) {
	calico := func(path []string) string {
		if path[len(path)-2] == "calico" {
			return "v3.31.3"
		}
		return ""
	}
	for _, tc := range []struct {
		image, prefix string
		tagFor        func([]string) string
		want          string
	}{
		{"docker.io/calico/node:v3.28.5", "", calico, "docker.io/calico/node:v3.31.3"},
		{"docker.io/calico/node:v3.28.5", "registry.example.com/k8s/", calico, "registry.example.com/k8s/calico/node:v3.31.3"},
		{"quay.io/cilium/operator-generic:v1.15.3@sha256:abc", "mirror", nil, "mirror/cilium-operator-generic:v1.15.3@sha256:abc"},
		{"quay.io/cilium/cilium:v1.15.3", "mirror", nil, "mirror/cilium:v1.15.3"},
		{"registry.k8s.io/sig-storage/livenessprobe:v2.17.0", "mirror", nil, "mirror/csi-livenessprobe:v2.17.0"},
		{"registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.36.0", "mirror", nil, "mirror/openstack-cloud-controller-manager:v1.36.0"},
		{"quay.io/cilium/cilium:v1.15.3@sha256:abc", "", func([]string) string { return "v1.16.0" }, "quay.io/cilium/cilium:v1.16.0"},
		{"localhost:5000/pause", "", nil, "localhost:5000/pause"},
	} {
		if got := rewriteImage(tc.image, tc.prefix, tc.tagFor); got != tc.want {
			t.Errorf("rewriteImage(%q, %q) = %q, want %q", tc.image, tc.prefix, got, tc.want)
		}
	}
}

func TestCNIManifest(t *testing.T) {
	t.Run("embedded calico takes calico_tag, the pool and the mirror", func(t *testing.T) {
		lbls := map[string]string{"calico_tag": "v3.31.3", "calico_ipv4pool": "10.200.0.0/16", "container_infra_prefix": "registry.example.com/k8s"}
		raw, err := CNIManifest(AddonConfig{}, "calico", lbls)
		if err != nil {
			t.Fatal(err)
		}
		objs := streamObjects(t, AddonKeyCalico, raw)
		want := []string{
			"registry.example.com/k8s/calico/cni:v3.31.3", "registry.example.com/k8s/calico/kube-controllers:v3.31.3",
			"registry.example.com/k8s/calico/node:v3.31.3",
		}
		if diff := cmp.Diff(want, images(objs)); diff != "" {
			t.Errorf("images (-want +got):\n%s", diff)
		}
		ds := find(objs, "DaemonSet/calico-node")
		if ds == nil {
			t.Fatal("no DaemonSet calico-node")
		}
		if got := envValue(container(t, ds, "calico-node"), "CALICO_IPV4POOL_CIDR"); got != "10.200.0.0/16" {
			t.Errorf("CALICO_IPV4POOL_CIDR = %q", got)
		}
		if find(objs, "CustomResourceDefinition/ippools.crd.projectcalico.org") == nil {
			t.Error("the calico CRDs are missing")
		}
	})
	t.Run("defaults: 10.100.0.0/16 and upstream images", func(t *testing.T) {
		raw, err := CNIManifest(AddonConfig{}, "calico", map[string]string{})
		if err != nil {
			t.Fatal(err)
		}
		objs := streamObjects(t, AddonKeyCalico, raw)
		if got := envValue(container(t, find(objs, "DaemonSet/calico-node"), "calico-node"), "CALICO_IPV4POOL_CIDR"); got != "10.100.0.0/16" {
			t.Errorf("CALICO_IPV4POOL_CIDR = %q", got)
		}
		if got := images(objs); !slices.Contains(got, "docker.io/calico/node:"+defaultCalicoTag) {
			t.Errorf("images %v, want calico/node at %s", got, defaultCalicoTag)
		}
	})
	dir := t.TempDir()
	for name, body := range map[string]string{
		"calico/v3.99.0.yaml": "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: calico-node, namespace: kube-system}\n" +
			"spec:\n  template:\n    spec:\n      containers:\n      - name: calico-node\n        image: docker.io/calico/node:v3.99.0\n---\n",
		"cilium/v1.16.1.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cilium-config, namespace: kube-system}\n" +
			"data: {cluster-pool-ipv4-cidr: 10.0.0.0/8}\n---\n---\napiVersion: apps/v1\nkind: DaemonSet\n" +
			"metadata: {name: cilium, namespace: kube-system}\nspec:\n  template:\n    spec:\n      containers:\n" +
			"      - name: cilium-agent\n        image: quay.io/cilium/cilium:v1.16.1\n      initContainers:\n" +
			"      - name: init\n        image: quay.io/cilium/operator-generic:v1.16.1\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := AddonConfig{ManifestsDir: dir}
	t.Run("an operator calico manifest wins", func(t *testing.T) {
		raw, err := CNIManifest(cfg, "calico", map[string]string{"calico_tag": "v3.99.0"})
		if err != nil {
			t.Fatal(err)
		}
		objs := streamObjects(t, AddonKeyCalico, raw)
		if len(objs) != 1 || envValue(container(t, objs[0], "calico-node"), "CALICO_IPV4POOL_CIDR") != "10.100.0.0/16" {
			t.Errorf("objects %v", objs)
		}
	})
	t.Run("cilium from the manifests directory", func(t *testing.T) {
		raw, err := CNIManifest(cfg, "cilium", map[string]string{"cilium_tag": "v1.16.1", "cilium_ipv4pool": "10.77.0.0/16", "container_infra_prefix": "mirror"})
		if err != nil {
			t.Fatal(err)
		}
		objs := streamObjects(t, AddonKeyCilium, raw)
		if diff := cmp.Diff([]string{"mirror/cilium-operator-generic:v1.16.1", "mirror/cilium:v1.16.1"}, images(objs)); diff != "" {
			t.Errorf("images (-want +got):\n%s", diff)
		}
		if got := nested(find(objs, "ConfigMap/cilium-config"), "data")["cluster-pool-ipv4-cidr"]; got != "10.77.0.0/16" {
			t.Errorf("cluster-pool-ipv4-cidr = %v", got)
		}
	})
	for name, tc := range map[string]struct {
		cfg    AddonConfig
		labels map[string]string
	}{
		"cilium without a manifests directory": {AddonConfig{}, map[string]string{}},
		"cilium tag without a manifest":        {cfg, map[string]string{"cilium_tag": "v1.15.3"}},
		"a tag that is a path":                 {cfg, map[string]string{"cilium_tag": "../calico/v3.99.0"}},
	} {
		t.Run(name+" fails with a clear reason", func(t *testing.T) {
			_, err := CNIManifest(tc.cfg, "cilium", tc.labels)
			var me *magnum.Error
			if !errors.As(err, &me) || me.Status != 400 || !strings.Contains(err.Error(), "cilium") {
				t.Errorf("err = %v, want a 400 naming cilium", err)
			}
		})
	}
}

func TestCloudConf(t *testing.T) {
	in := testAddonInput()
	got, err := CloudConf(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "[Global]\nauth-url=https://keystone.example.com/v3\nregion=RegionOne\napplication-credential-id=ac-1\n" +
		"application-credential-secret=\"s3cr;et\"\ntls-insecure=false\nca-file=/etc/config/ca.crt\n\n" +
		"[LoadBalancer]\nlb-provider=amphorav2\nlb-method=ROUND_ROBIN\ncreate-monitor=true\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cloud.conf (-want +got):\n%s", diff)
	}
	t.Run("ovn defaults to SOURCE_IP_PORT and refuses other methods", func(t *testing.T) {
		in := testAddonInput()
		in.Labels = map[string]string{"octavia_provider": "ovn", "octavia_lb_healthcheck": "false"}
		in.Addons = AddonConfig{InsecureTLS: true}
		got, err := CloudConf(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{"lb-provider=ovn\n", "lb-method=SOURCE_IP_PORT\n", "create-monitor=false\n", "tls-insecure=true\n"} {
			if !strings.Contains(got, line) {
				t.Errorf("cloud.conf lacks %q:\n%s", line, got)
			}
		}
		if strings.Contains(got, "ca-file") {
			t.Errorf("ca-file without a CA:\n%s", got)
		}
		in.Labels["octavia_lb_algorithm"] = "ROUND_ROBIN"
		var me *magnum.Error
		if _, err := CloudConf(in); !errors.As(err, &me) || me.Status != 400 {
			t.Errorf("ovn with ROUND_ROBIN: err = %v, want 400", err)
		}
	})
}

func TestAddonSecrets(t *testing.T) {
	in := testAddonInput()
	cni, err := CNIManifest(in.Addons, "calico", in.Labels)
	if err != nil {
		t.Fatal(err)
	}
	apply, err := ClusterAddonsSecret(in, cni)
	if err != nil {
		t.Fatal(err)
	}
	provider, err := CloudProviderSecret(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("names, type and keys", func(t *testing.T) {
		for _, tc := range []struct {
			s          *corev1.Secret
			name       string
			keys       []string
			noLabelsOn bool
		}{
			{apply, testUUID, []string{"calico.yml", "cloud-config-secret.yaml", "keystone-auth.yaml"}, true},
			{provider, testStackID + "-cloud-provider", []string{
				"cinder-csi.yaml", "cloud-config-secret.yaml", "cloud-controller-manager.yaml",
				"storageclass-block-ssd-fast.yaml", "storageclass-block-standard.yaml",
			}, true},
		} {
			if tc.s.Name != tc.name || tc.s.Namespace != DefaultNamespace || tc.s.Type != "addons.cluster.x-k8s.io/resource-set" || len(tc.s.Labels) != 0 {
				t.Errorf("secret %s/%s type %s labels %v", tc.s.Namespace, tc.s.Name, tc.s.Type, tc.s.Labels)
			}
			if diff := cmp.Diff(tc.keys, keys(tc.s)); diff != "" {
				t.Errorf("%s keys (-want +got):\n%s", tc.name, diff)
			}
			for k, v := range tc.s.Data {
				streamObjects(t, tc.name+"/"+k, v)
			}
		}
	})
	t.Run("the workload cloud-config Secret", func(t *testing.T) {
		objs := streamObjects(t, AddonKeyCloudConfig, provider.Data[AddonKeyCloudConfig])
		s := find(objs, "Secret/cloud-config")
		conf, _ := CloudConf(in)
		want := map[string]any{"cloud.conf": conf, "ca.crt": "-----OPENSTACK CA-----\n"}
		if s == nil || nested(s, "metadata")["namespace"] != "kube-system" || !cmp.Equal(want, s["stringData"]) {
			t.Errorf("cloud-config Secret = %v", s)
		}
		if !bytes.Equal(apply.Data[AddonKeyCloudConfig], provider.Data[AddonKeyCloudConfig]) {
			t.Error("the two sets carry different cloud-config Secrets")
		}
	})
	t.Run("cloud controller manager: cluster name, tag by kube minor, mirror", func(t *testing.T) {
		objs := streamObjects(t, AddonKeyCCM, provider.Data[AddonKeyCCM])
		ds := find(objs, "DaemonSet/openstack-cloud-controller-manager")
		if ds == nil {
			t.Fatal("no CCM DaemonSet")
		}
		c := container(t, ds, "openstack-cloud-controller-manager")
		if args, _ := c["args"].([]any); !slices.Contains(args, any("--cluster-name="+testUUID)) {
			t.Errorf("args %v lack --cluster-name=%s", args, testUUID)
		}
		if got := c["image"]; got != "registry.example.com/k8s/openstack-cloud-controller-manager:v1.31.0" {
			t.Errorf("image %v", got)
		}
		if find(objs, "ClusterRoleBinding/system:cloud-controller-manager") == nil {
			t.Error("the List of role bindings was not flattened")
		}
	})
	t.Run("cinder CSI: cluster ID, images", func(t *testing.T) {
		objs := streamObjects(t, AddonKeyCinderCSI, provider.Data[AddonKeyCinderCSI])
		ctl := find(objs, "Deployment/csi-cinder-controllerplugin")
		if got := envValue(container(t, ctl, "cinder-csi-plugin"), "CLUSTER_NAME"); got != testUUID {
			t.Errorf("CLUSTER_NAME = %q", got)
		}
		want := []string{
			"registry.example.com/k8s/cinder-csi-plugin:v1.31.0", "registry.example.com/k8s/csi-attacher:v4.10.0",
			"registry.example.com/k8s/csi-livenessprobe:v2.17.0", "registry.example.com/k8s/csi-node-driver-registrar:v2.15.0",
			"registry.example.com/k8s/csi-provisioner:v5.3.0", "registry.example.com/k8s/csi-resizer:v1.14.0",
			"registry.example.com/k8s/csi-snapshotter:v8.4.0",
		}
		if diff := cmp.Diff(want, images(objs)); diff != "" {
			t.Errorf("images (-want +got):\n%s", diff)
		}
	})
	t.Run("storage classes", func(t *testing.T) {
		sc := streamObjects(t, "ssd", provider.Data["storageclass-block-ssd-fast.yaml"])[0]
		want := map[string]any{
			"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
			"metadata":    map[string]any{"name": "block-ssd-fast", "annotations": map[string]any{"storageclass.kubernetes.io/is-default-class": "true"}},
			"provisioner": "cinder.csi.openstack.org", "parameters": map[string]any{"type": "SSD_fast"},
			"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "allowVolumeExpansion": true,
		}
		if diff := cmp.Diff(want, sc); diff != "" {
			t.Errorf("StorageClass (-want +got):\n%s", diff)
		}
		std := streamObjects(t, "standard", provider.Data["storageclass-block-standard.yaml"])[0]
		if _, ok := nested(std, "metadata")["annotations"]; ok {
			t.Errorf("standard is annotated as default: %v", std)
		}
	})
	t.Run("keystone auth: URL, policy, image", func(t *testing.T) {
		objs := streamObjects(t, AddonKeyKeystoneAuth, apply.Data[AddonKeyKeystoneAuth])
		ds := find(objs, "DaemonSet/k8s-keystone-auth")
		c := container(t, ds, "k8s-keystone-auth")
		args, _ := c["args"].([]any)
		i := slices.Index(args, any("--keystone-url"))
		if i < 0 || args[i+1] != "https://keystone.example.com/v3" || !slices.Contains(args, any("--keystone-ca-file")) {
			t.Errorf("args %v", args)
		}
		if c["image"] != "registry.example.com/k8s/k8s-keystone-auth:v1.31.0" {
			t.Errorf("image %v", c["image"])
		}
		policy := str(nested(find(objs, "ConfigMap/k8s-auth-policy"), "data")["policies"])
		if !strings.Contains(policy, `"values":["p1"]`) || !strings.Contains(policy, `"member"`) {
			t.Errorf("policy %s", policy)
		}
		for _, k := range []string{"ServiceAccount/k8s-keystone", "ClusterRole/k8s-keystone-auth", "ClusterRoleBinding/k8s-keystone-auth"} {
			if find(objs, k) == nil {
				t.Errorf("no %s", k)
			}
		}
	})
	t.Run("labels turn add-ons off and pick tags", func(t *testing.T) {
		in := testAddonInput()
		in.Labels = map[string]string{
			"kube_tag": "v1.30.2", "keystone_auth_enabled": "false", "cloud_provider_tag": "v1.30.9",
			"cinder_csi_plugin_tag": "v1.29.0", "csi_attacher_tag": "v4.7.0",
		}
		in.Addons.KeystoneAuthPolicy = `[{"match":[{"type":"project","values":["$PROJECT_ID"]}]}]`
		in.Cinder, in.VolumeTypes = false, nil
		apply, err := ClusterAddonsSecret(in, cni)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"calico.yml", "cloud-config-secret.yaml"}, keys(apply)); diff != "" {
			t.Errorf("keys (-want +got):\n%s", diff)
		}
		provider, err := CloudProviderSecret(in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"cloud-config-secret.yaml", "cloud-controller-manager.yaml"}, keys(provider)); diff != "" {
			t.Errorf("keys without Cinder (-want +got):\n%s", diff)
		}
		if got := images(streamObjects(t, AddonKeyCCM, provider.Data[AddonKeyCCM])); !cmp.Equal(got, []string{"registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.30.9"}) {
			t.Errorf("CCM images %v", got)
		}
		csi, err := cinderCSIManifest(in)
		if err != nil {
			t.Fatal(err)
		}
		got := images(streamObjects(t, AddonKeyCinderCSI, csi))
		if !slices.Contains(got, "registry.k8s.io/provider-os/cinder-csi-plugin:v1.29.0") || !slices.Contains(got, "registry.k8s.io/sig-storage/csi-attacher:v4.7.0") {
			t.Errorf("CSI images %v", got)
		}
		in.Labels["keystone_auth_enabled"] = "true"
		ka, err := keystoneAuthManifest(in)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(ka), `[{"match":[{"type":"project","values":["p1"]}]}]`) {
			t.Errorf("configured policy not used:\n%s", ka)
		}
	})
}

func TestCloudProviderTag(t *testing.T) {
	for kube, want := range map[string]string{
		"v1.31.1": "v1.31.0", "1.24.0": "v1.24.0", "v1.20.4": "v1.22.0", "v1.40.0": "v1.36.0", "": "v1.36.0",
	} {
		if got := CloudProviderTag(map[string]string{"kube_tag": kube}); got != want {
			t.Errorf("kube_tag %q: %s, want %s", kube, got, want)
		}
	}
}

func TestCreateClusterAddons(t *testing.T) {
	d, c, _ := newTestDriver(t)
	d.opts.BlockStorage = fakeBlockStorage{types: testVolumeTypes, available: true}
	st := testState()
	upd, err := d.CreateCluster(t.Context(), userCred, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	st = applyUpdate(st, upd)
	get := func(name string) *corev1.Secret {
		var s corev1.Secret
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: name}, &s); err != nil {
			t.Fatalf("secret %s: %v", name, err)
		}
		return &s
	}
	t.Run("both sets and their Secrets are applied", func(t *testing.T) {
		for _, want := range ClusterResourceSets(DefaultNamespace, testStackID, testUUID) {
			var got addonsv1.ClusterResourceSet
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(want), &got); err != nil {
				t.Fatalf("set %s: %v", want.Name, err)
			}
			if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
				t.Errorf("set %s (-built +applied):\n%s", want.Name, diff)
			}
		}
		if got := keys(get(testUUID)); !cmp.Equal(got, []string{"calico.yml", "cloud-config-secret.yaml", "keystone-auth.yaml"}) {
			t.Errorf("%s keys %v", testUUID, got)
		}
		if got := keys(get(testStackID + SuffixCloudProvider)); !slices.Contains(got, "cinder-csi.yaml") || !slices.Contains(got, "storageclass-block-standard.yaml") {
			t.Errorf("cloud-provider keys %v", got)
		}
	})
	t.Run("cloud.conf carries the cluster's application credential", func(t *testing.T) {
		objs := streamObjects(t, AddonKeyCloudConfig, get(testUUID).Data[AddonKeyCloudConfig])
		conf := str(nested(objs[0], "stringData")["cloud.conf"])
		if !strings.Contains(conf, "application-credential-id=ac-1\n") || !strings.Contains(conf, "application-credential-secret=secret-1\n") {
			t.Errorf("cloud.conf:\n%s", conf)
		}
	})
	t.Run("upgrade re-renders the cloud provider for the new minor", func(t *testing.T) {
		before := get(testUUID)
		tpl := st.Template
		tpl.UUID = "tpl-2"
		tpl.Labels = map[string]string{"kube_tag": "v1.32.0"}
		if _, err := d.UpgradeCluster(t.Context(), userCred, st, driver.Upgrade{Template: tpl}); err != nil {
			t.Fatal(err)
		}
		ccm := streamObjects(t, AddonKeyCCM, get(testStackID + SuffixCloudProvider).Data[AddonKeyCCM])
		if got := images(ccm); !cmp.Equal(got, []string{"registry.example.com/k8s/openstack-cloud-controller-manager:v1.32.0"}) {
			t.Errorf("CCM images after upgrade %v", got)
		}
		if after := get(testUUID); after.ResourceVersion != before.ResourceVersion {
			t.Error("the apply-once Secret was rewritten by the upgrade")
		}
	})
	t.Run("a cilium cluster without a manifest fails before writing", func(t *testing.T) {
		d, c, osf := newTestDriver(t)
		st := testState()
		st.Template.NetworkDriver = ptr("cilium")
		_, err := d.CreateCluster(t.Context(), userCred, st, 0)
		var me *magnum.Error
		if !errors.As(err, &me) || !strings.Contains(err.Error(), "addons_manifests_dir") {
			t.Fatalf("err = %v", err)
		}
		var sets addonsv1.ClusterResourceSetList
		if err := c.List(t.Context(), &sets); err != nil || len(sets.Items) != 0 || len(osf.appCreds) != 0 {
			t.Errorf("written before failing: %d sets, %d credentials, %v", len(sets.Items), len(osf.appCreds), err)
		}
	})
}
