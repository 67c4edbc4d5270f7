package envtest

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/openkeel/openkeel-magnum/internal/testutil/kubetest"
)

// TestSmoke starts one environment and checks what the Cluster API driver
// relies on: every CRD of the shared folders is established and each of its
// served versions can be listed, a v1beta2 Cluster and a v1beta1
// OpenStackCluster round-trip, status can be written, the kubeconfig works,
// and Leases (leader election) work.
func TestSmoke(t *testing.T) {
	env := kubetest.Start(t)
	ns := env.Namespace(t)

	t.Run("CRDsServed", func(t *testing.T) {
		dirs, err := kubetest.CRDDirs()
		if err != nil {
			t.Fatal(err)
		}
		files := readCRDs(t, dirs)
		if len(files) != len(env.CRDs) {
			t.Errorf("installed %d CRDs, the folders hold %d", len(env.CRDs), len(files))
		}
		for _, want := range files {
			var got apiextensionsv1.CustomResourceDefinition
			if err := env.Client.Get(t.Context(), client.ObjectKey{Name: want.Name}, &got); err != nil {
				t.Errorf("get CRD %s: %v", want.Name, err)
				continue
			}
			if !established(&got) {
				t.Errorf("CRD %s is not Established", want.Name)
			}
			for _, v := range want.Spec.Versions {
				if !v.Served {
					continue
				}
				list := &unstructured.UnstructuredList{}
				list.SetGroupVersionKind(schema.GroupVersionKind{
					Group: want.Spec.Group, Version: v.Name, Kind: want.Spec.Names.ListKind,
				})
				var opts []client.ListOption
				if want.Spec.Scope == apiextensionsv1.NamespaceScoped {
					opts = append(opts, client.InNamespace(ns))
				}
				if err := env.Client.List(t.Context(), list, opts...); err != nil {
					t.Errorf("list %s %s/%s: %v", want.Spec.Names.Kind, want.Spec.Group, v.Name, err)
				}
			}
		}
		t.Logf("%d CRDs established and listed", len(files))
	})

	t.Run("ClusterV1beta2", func(t *testing.T) {
		c := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: ns, Labels: map[string]string{"magnum.openstack.org/uuid": "0b3b7e3c"}},
			Spec: clusterv1.ClusterSpec{
				ClusterNetwork: clusterv1.ClusterNetwork{
					Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.100.0.0/16"}},
					Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"10.254.0.0/16"}},
				},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackCluster", Name: "smoke",
				},
			},
		}
		if err := env.Client.Create(t.Context(), c); err != nil {
			t.Fatalf("create Cluster: %v", err)
		}
		var got clusterv1.Cluster
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(c), &got); err != nil {
			t.Fatalf("get Cluster: %v", err)
		}
		if diff := cmp.Diff(c.Spec, got.Spec); diff != "" {
			t.Errorf("Cluster spec (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(c.Labels, got.Labels); diff != "" {
			t.Errorf("Cluster labels (-want +got):\n%s", diff)
		}

		// The test plays the controller: status goes through the subresource.
		got.Status.Phase = string(clusterv1.ClusterPhaseProvisioned)
		if err := env.Client.Status().Update(t.Context(), &got); err != nil {
			t.Fatalf("update Cluster status: %v", err)
		}
		var again clusterv1.Cluster
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(c), &again); err != nil {
			t.Fatalf("get Cluster: %v", err)
		}
		if again.Status.GetTypedPhase() != clusterv1.ClusterPhaseProvisioned {
			t.Errorf("Cluster phase = %q, want Provisioned", again.Status.Phase)
		}
	})

	t.Run("OpenStackClusterV1beta1", func(t *testing.T) {
		gvk := schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackCluster"}
		spec := map[string]any{
			"identityRef":     map[string]any{"cloudName": "openstack", "name": "smoke-cloud-config", "type": "Secret"},
			"managedSubnets":  []any{map[string]any{"cidr": "10.0.0.0/24"}},
			"externalNetwork": map[string]any{"id": "0c3bd8b1-5a7e-4bb6-9d8f-1f0e3a5c2b11"},
			"apiServerLoadBalancer": map[string]any{
				"enabled": true,
			},
		}
		osc := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		osc.SetGroupVersionKind(gvk)
		osc.SetNamespace(ns)
		osc.SetName("smoke")
		if err := env.Client.Create(t.Context(), osc); err != nil {
			t.Fatalf("create OpenStackCluster: %v", err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gvk)
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(osc), got); err != nil {
			t.Fatalf("get OpenStackCluster: %v", err)
		}
		if diff := cmp.Diff(spec, got.Object["spec"]); diff != "" {
			t.Errorf("OpenStackCluster spec (-want +got):\n%s", diff)
		}
		if got.GetAPIVersion() != "infrastructure.cluster.x-k8s.io/v1beta1" {
			t.Errorf("apiVersion = %q", got.GetAPIVersion())
		}

		// A status write, as CAPO would do it, through the subresource.
		if err := unstructured.SetNestedField(got.Object, true, "status", "ready"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Status().Update(t.Context(), got); err != nil {
			t.Fatalf("update OpenStackCluster status: %v", err)
		}
		again := &unstructured.Unstructured{}
		again.SetGroupVersionKind(gvk)
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(osc), again); err != nil {
			t.Fatalf("get OpenStackCluster: %v", err)
		}
		if ready, _, _ := unstructured.NestedBool(again.Object, "status", "ready"); !ready {
			t.Errorf("OpenStackCluster status.ready = false after the status update")
		}
	})

	t.Run("KubeConfig", func(t *testing.T) {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(env.KubeConfig)
		if err != nil {
			t.Fatalf("parse kubeconfig: %v", err)
		}
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		var got corev1.Namespace
		if err := c.Get(t.Context(), client.ObjectKey{Name: ns}, &got); err != nil {
			t.Errorf("get namespace through the kubeconfig: %v", err)
		}
	})

	t.Run("Lease", func(t *testing.T) {
		holder := "smoke-holder"
		seconds := int32(15)
		now := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "openkeel-magnum-reconciler", Namespace: ns},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now,
			},
		}
		if err := env.Client.Create(t.Context(), l); err != nil {
			t.Fatalf("create Lease: %v", err)
		}
		var got coordinationv1.Lease
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(l), &got); err != nil {
			t.Fatalf("get Lease: %v", err)
		}
		if diff := cmp.Diff(l.Spec, got.Spec); diff != "" {
			t.Errorf("Lease spec (-want +got):\n%s", diff)
		}
	})
}

// readCRDs parses every CRD manifest in dirs, sorted by name.
func readCRDs(t *testing.T, dirs []string) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) == 0 {
			t.Fatalf("no CRD manifests in %s", dir)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for doc := range bytes.SplitSeq(data, []byte("\n---")) {
				if len(bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---")))) == 0 {
					continue
				}
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := yaml.UnmarshalStrict(doc, crd); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				if crd.Kind != "CustomResourceDefinition" {
					t.Fatalf("%s: kind %q, want CustomResourceDefinition", p, crd.Kind)
				}
				crds = append(crds, crd)
			}
		}
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
