package capi

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var userCred = driver.Credentials{AuthToken: "tok", UserID: "u1", ProjectID: "p1"}

// created runs CreateCluster on a fresh driver and returns the state with
// the update applied.
func created(t *testing.T) (*Driver, client.Client, *fakeOpenStack, driver.ClusterState) {
	t.Helper()
	d, c, osf := newTestDriver(t)
	st := testState()
	upd, err := d.CreateCluster(t.Context(), userCred, st, 0)
	if err != nil {
		t.Fatalf("CreateCluster: %v", err)
	}
	return d, c, osf, applyUpdate(st, upd)
}

// applyUpdate does what the conductor does with an Update.
func applyUpdate(st driver.ClusterState, upd driver.Update) driver.ClusterState {
	if upd.Cluster != nil {
		st.Cluster = *upd.Cluster
	}
	st = withNodeGroups(st, upd.NodeGroups)
	st.NodeGroups = slices.DeleteFunc(st.NodeGroups, func(ng magnum.NodeGroup) bool {
		return slices.Contains(upd.DeletedNodeGroups, ng.UUID)
	})
	return st
}

func getCAPICluster(t *testing.T, c client.Client) *clusterv1.Cluster {
	t.Helper()
	var cl clusterv1.Cluster
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: testStackID}, &cl); err != nil {
		t.Fatalf("get cluster: %v", err)
	}
	return &cl
}

func TestCreateCluster(t *testing.T) {
	d, c, osf, st := created(t)

	t.Run("rows move to CREATE_IN_PROGRESS with the stack id", func(t *testing.T) {
		if value(st.Cluster.StackID) != testStackID || statusOf(st.Cluster.Status) != magnum.StatusCreateInProgress {
			t.Errorf("cluster stack_id %v status %v", st.Cluster.StackID, st.Cluster.Status)
		}
		for _, ng := range st.NodeGroups {
			if value(ng.StackID) != testStackID || statusOf(ng.Status) != magnum.StatusCreateInProgress {
				t.Errorf("nodegroup %s stack_id %v status %v", ng.Name, ng.StackID, ng.Status)
			}
		}
	})
	t.Run("the applied objects are the built ones", func(t *testing.T) {
		for _, want := range ClassObjects(DefaultNamespace, DefaultClassVersion) {
			wu, _ := toUnstructured(want)
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(wu.GroupVersionKind())
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(wu), got); err != nil {
				t.Fatalf("get %s: %v", wu.GetKind(), err)
			}
			stripServerFields(got)
			if diff := cmp.Diff(wu.Object, got.Object); diff != "" {
				t.Errorf("%s (-built +applied):\n%s", wu.GetKind(), diff)
			}
		}
		want, err := BuildCluster(testInput())
		if err != nil {
			t.Fatal(err)
		}
		got := getCAPICluster(t, c)
		if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
			t.Errorf("Cluster spec (-built +applied):\n%s", diff)
		}
		if !slices.ContainsFunc(got.ManagedFields, func(m metav1.ManagedFieldsEntry) bool { return m.Manager == FieldManager }) {
			t.Errorf("Cluster is not managed by %s: %v", FieldManager, got.ManagedFields)
		}
	})
	t.Run("secrets", func(t *testing.T) {
		for _, suffix := range []string{SuffixCA, SuffixEtcd, SuffixFrontProxy, SuffixSA} {
			var s corev1.Secret
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: testStackID + suffix}, &s); err != nil {
				t.Fatalf("secret %s: %v", suffix, err)
			}
			if s.Type != secretTypeCluster || s.Labels[labelClusterName] != testStackID || len(s.Data["tls.key"]) == 0 {
				t.Errorf("secret %s: type %s labels %v", s.Name, s.Type, s.Labels)
			}
		}
		var cc corev1.Secret
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: testStackID + SuffixCloudConfig}, &cc); err != nil {
			t.Fatal(err)
		}
		ac, ok := appCredentialFromSecret(&cc)
		if !ok || ac.ID != "ac-1" || ac.UserID != "u1" {
			t.Errorf("cloud-config credential = %v", ac)
		}
		if !isOwnAppCredentialName(testUUID, osf.appCreds["ac-1"].Name) {
			t.Errorf("credential name %q", osf.appCreds["ac-1"].Name)
		}
	})
	t.Run("server groups", func(t *testing.T) {
		want := []string{testStackID, testStackID + "-default-worker", testStackID + "-gpu"}
		if diff := cmp.Diff(want, osf.ServerGroupNames()); diff != "" {
			t.Errorf("server groups (-want +got):\n%s", diff)
		}
	})
	t.Run("a retry reuses the name and the credential", func(t *testing.T) {
		upd, err := d.CreateCluster(t.Context(), userCred, st, 0)
		if err != nil {
			t.Fatal(err)
		}
		if value(upd.Cluster.StackID) != testStackID || len(osf.appCreds) != 1 {
			t.Errorf("stack id %v, %d credentials", upd.Cluster.StackID, len(osf.appCreds))
		}
	})
	t.Run("synchronous validation", func(t *testing.T) {
		d, _, _ := newTestDriver(t)
		for name, edit := range map[string]func(*driver.ClusterState){
			"no kube_tag":        func(s *driver.ClusterState) { delete(s.Cluster.Labels, "kube_tag") },
			"unsupported CNI":    func(s *driver.ClusterState) { s.Template.NetworkDriver = ptr("flannel") },
			"even master count":  func(s *driver.ClusterState) { s.NodeGroups[0].NodeCount = ptr(2) },
			"bad nodegroup name": func(s *driver.ClusterState) { s.NodeGroups[2].Name = "GPU_nodes" },
		} {
			st := testState()
			edit(&st)
			_, err := d.CreateCluster(t.Context(), userCred, st, 0)
			var me *magnum.Error
			if !errors.As(err, &me) || me.Status != 400 {
				t.Errorf("%s: err = %v, want a 400", name, err)
			}
		}
	})
}

func machine(name, nodegroup, serverUUID string) *clusterv1.Machine {
	lbls := map[string]string{labelClusterName: testStackID}
	if nodegroup == "" {
		lbls[labelControlPlane] = ""
	} else {
		lbls[labelDeploymentName] = nodegroup
	}
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultNamespace, Labels: lbls},
		Spec: clusterv1.MachineSpec{
			ClusterName:       testStackID,
			ProviderID:        "openstack:///" + serverUUID,
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: groupInfra, Kind: kindOpenStackMachine, Name: name + "-osm"},
		},
	}
}

func TestResizeCluster(t *testing.T) {
	d, c, _, st := created(t)
	for _, m := range []*clusterv1.Machine{
		machine("w1", "default-worker", "uuid-1"),
		machine("w2", "default-worker", "uuid-2"),
		machine("w3", "default-worker", "uuid-3"),
		machine("g1", "gpu", "uuid-2"), // same server UUID in another nodegroup: never matched
		machine("cp1", "", "uuid-9"),
	} {
		if err := c.Create(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	annotated := func() []string {
		var ms clusterv1.MachineList
		if err := c.List(t.Context(), &ms); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms.Items {
			if m.Annotations[annotationDeleteMachine] == "yes" {
				out = append(out, m.Name)
			}
		}
		slices.Sort(out)
		return out
	}

	t.Run("nodes_to_remove annotates exactly the chosen machines", func(t *testing.T) {
		upd, err := d.ResizeCluster(t.Context(), userCred, st, driver.Resize{
			NodeGroupUUID: "ng-worker", NodeCount: 1,
			NodesToRemove: []string{"uuid-2", "w3-osm", "uuid-404"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"w2", "w3"}, annotated()); diff != "" {
			t.Errorf("annotated machines (-want +got):\n%s", diff)
		}
		cl := getCAPICluster(t, c)
		if r := cl.Spec.Topology.Workers.MachineDeployments[0].Replicas; r == nil || *r != 1 {
			t.Errorf("default-worker replicas = %v, want 1", r)
		}
		if statusOf(upd.Cluster.Status) != magnum.StatusUpdateInProgress || len(upd.NodeGroups) != 1 ||
			intValue(upd.NodeGroups[0].NodeCount) != 1 || statusOf(upd.NodeGroups[0].Status) != magnum.StatusUpdateInProgress {
			t.Errorf("update = %+v", upd)
		}
		// The annotation does not take the Machine's other fields.
		var w2 clusterv1.Machine
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: "w2"}, &w2); err != nil {
			t.Fatal(err)
		}
		if w2.Spec.ProviderID != "openstack:///uuid-2" {
			t.Errorf("w2 spec changed: %+v", w2.Spec)
		}
	})
	t.Run("the control plane ignores nodes_to_remove", func(t *testing.T) {
		_, err := d.ResizeCluster(t.Context(), userCred, st, driver.Resize{
			NodeGroupUUID: "ng-master", NodeCount: 5, NodesToRemove: []string{"uuid-9", "cp1"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(annotated(), "cp1") {
			t.Error("a control-plane machine was annotated")
		}
		if r := getCAPICluster(t, c).Spec.Topology.ControlPlane.Replicas; *r != 5 {
			t.Errorf("control plane replicas = %d", *r)
		}
	})
	t.Run("PATCH node_count resizes the default worker", func(t *testing.T) {
		next := st
		next.NodeGroups = slices.Clone(st.NodeGroups)
		next.NodeGroups[1].NodeCount = ptr(4)
		if _, err := d.UpdateCluster(t.Context(), userCred, next); err != nil {
			t.Fatal(err)
		}
		if r := getCAPICluster(t, c).Spec.Topology.Workers.MachineDeployments[0].Replicas; *r != 4 {
			t.Errorf("default-worker replicas = %d, want 4", *r)
		}
	})
}

func TestUpgradeCluster(t *testing.T) {
	d, c, _, st := created(t)
	tpl := st.Template
	tpl.UUID, tpl.ImageID = "tpl-2", ptr("img-new")
	tpl.Labels = cloneMap(tpl.Labels)
	tpl.Labels["kube_tag"] = "v1.32.0"

	t.Run("a skipped minor version is refused before any write", func(t *testing.T) {
		bad := tpl
		bad.Labels = map[string]string{"kube_tag": "v1.33.0"}
		_, err := d.UpgradeCluster(t.Context(), userCred, st, driver.Upgrade{Template: bad})
		var me *magnum.Error
		if !errors.As(err, &me) || me.Status != 400 {
			t.Fatalf("err = %v, want 400", err)
		}
		if v := getCAPICluster(t, c).Spec.Topology.Version; v != "v1.31.1" {
			t.Errorf("version changed to %s", v)
		}
	})
	t.Run("upgrade moves version, template and images", func(t *testing.T) {
		upd, err := d.UpgradeCluster(t.Context(), userCred, st, driver.Upgrade{Template: tpl})
		if err != nil {
			t.Fatal(err)
		}
		if upd.Cluster.ClusterTemplateID != "tpl-2" || upd.Cluster.Labels["kube_tag"] != "v1.32.0" || len(upd.NodeGroups) != 3 {
			t.Errorf("update = %+v", upd)
		}
		cl := getCAPICluster(t, c)
		if cl.Spec.Topology.Version != "v1.32.0" || cl.Spec.Topology.ClassRef.Name != ClassName(DefaultClassVersion) {
			t.Errorf("topology %s %s", cl.Spec.Topology.Version, cl.Spec.Topology.ClassRef.Name)
		}
		if got := variable(t, cl.Spec.Topology.Variables, "imageUUID"); got != `"img-new"` {
			t.Errorf("imageUUID = %s", got)
		}
		for _, md := range cl.Spec.Topology.Workers.MachineDeployments {
			if got := variable(t, md.Variables.Overrides, "imageUUID"); got != `"img-new"` {
				t.Errorf("%s imageUUID = %s", md.Name, got)
			}
		}
	})
}

func TestNodeGroupOperations(t *testing.T) {
	d, c, osf, st := created(t)
	batch := magnum.NodeGroup{UUID: "ng-batch", Name: "batch", ClusterID: testUUID, Role: ptr("worker"),
		IsDefault: ptr(false), NodeCount: ptr(2)}
	mdNames := func() []string {
		var out []string
		for _, md := range getCAPICluster(t, c).Spec.Topology.Workers.MachineDeployments {
			out = append(out, md.Name)
		}
		return out
	}

	upd, err := d.CreateNodeGroup(t.Context(), userCred, st, batch)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"default-worker", "batch", "gpu"}, mdNames()); diff != "" {
		t.Errorf("after create (-want +got):\n%s", diff)
	}
	if statusOf(upd.NodeGroups[0].Status) != magnum.StatusCreateInProgress || statusOf(upd.Cluster.Status) != magnum.StatusUpdateInProgress {
		t.Errorf("create update = %+v", upd)
	}
	if !slices.Contains(osf.ServerGroupNames(), testStackID+"-batch") {
		t.Error("no server group for the new nodegroup")
	}
	st = applyUpdate(st, upd)

	if _, err := d.CreateNodeGroup(t.Context(), userCred, st, magnum.NodeGroup{Name: "Bad_Name"}); err == nil {
		t.Error("a nodegroup name that is not a label value was accepted")
	}

	t.Run("update without a change writes nothing", func(t *testing.T) {
		ng, _ := st.NodeGroup("ng-batch")
		upd, err := d.UpdateNodeGroup(t.Context(), userCred, st, ng)
		if err != nil {
			t.Fatal(err)
		}
		if upd.Changed() {
			t.Errorf("update = %+v, want none", upd)
		}
	})
	t.Run("update of taints is applied", func(t *testing.T) {
		ng, _ := st.NodeGroup("ng-batch")
		ng.NodeTaints = []magnum.NodeTaint{{"key": "dedicated", "value": "batch", "effect": "NoExecute"}}
		upd, err := d.UpdateNodeGroup(t.Context(), userCred, st, ng)
		if err != nil {
			t.Fatal(err)
		}
		if len(upd.NodeGroups) != 1 || statusOf(upd.NodeGroups[0].Status) != magnum.StatusUpdateInProgress {
			t.Errorf("update = %+v", upd)
		}
		mds := getCAPICluster(t, c).Spec.Topology.Workers.MachineDeployments
		i := slices.IndexFunc(mds, func(md clusterv1.MachineDeploymentTopology) bool { return md.Name == "batch" })
		if i < 0 || len(mds[i].Taints) != 1 || mds[i].Taints[0].Key != "dedicated" {
			t.Errorf("batch taints = %+v", mds)
		}
	})
	t.Run("delete while machines remain", func(t *testing.T) {
		if err := c.Create(t.Context(), machine("b1", "batch", "uuid-b1")); err != nil {
			t.Fatal(err)
		}
		upd, err := d.DeleteNodeGroup(t.Context(), userCred, st, batch)
		if err != nil {
			t.Fatal(err)
		}
		if len(upd.DeletedNodeGroups) != 0 || statusOf(upd.NodeGroups[0].Status) != magnum.StatusDeleteInProgress {
			t.Errorf("update = %+v", upd)
		}
		if slices.Contains(mdNames(), "batch") {
			t.Error("batch is still in the topology")
		}
	})
	t.Run("delete when everything is gone destroys the row", func(t *testing.T) {
		if err := c.Delete(t.Context(), machine("b1", "batch", "uuid-b1")); err != nil {
			t.Fatal(err)
		}
		upd, err := d.DeleteNodeGroup(t.Context(), userCred, st, batch)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"ng-batch"}, upd.DeletedNodeGroups); diff != "" {
			t.Errorf("deleted (-want +got):\n%s", diff)
		}
		if slices.Contains(osf.ServerGroupNames(), testStackID+"-batch") {
			t.Error("the nodegroup's server group was not deleted")
		}
	})
}

func TestDeleteCluster(t *testing.T) {
	t.Run("objects already gone: the delete still completes", func(t *testing.T) {
		d, _, _ := newTestDriver(t)
		st := testState()
		st.Cluster.StackID = ptr(testStackID)
		upd, err := d.DeleteCluster(t.Context(), userCred, st)
		if err != nil {
			t.Fatal(err)
		}
		st = applyUpdate(st, upd)
		if statusOf(st.Cluster.Status) != magnum.StatusDeleteInProgress {
			t.Fatalf("status %v", st.Cluster.Status)
		}
		upd, err = d.PollStatus(t.Context(), driver.AdminCredentials(), st)
		if err != nil {
			t.Fatal(err)
		}
		if upd.Cluster == nil || statusOf(upd.Cluster.Status) != magnum.StatusDeleteComplete {
			t.Errorf("poll update = %+v", upd)
		}
	})
	t.Run("no stack id", func(t *testing.T) {
		d, _, _ := newTestDriver(t)
		st := testState()
		upd, err := d.DeleteCluster(t.Context(), userCred, st)
		if err != nil {
			t.Fatal(err)
		}
		upd, err = d.PollStatus(t.Context(), driver.AdminCredentials(), applyUpdate(st, upd))
		if err != nil || statusOf(upd.Cluster.Status) != magnum.StatusDeleteComplete {
			t.Errorf("poll = %+v, %v", upd, err)
		}
	})
	t.Run("full delete in order", func(t *testing.T) {
		d, c, osf, st := created(t)
		// The add-on sets and their Secrets exist; a finalizer stands for
		// CAPI's teardown.
		gvkSet := schema.GroupVersionKind{Group: groupAddons, Version: "v1beta2", Kind: "ClusterResourceSet"}
		gvkSec := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
		addons := []*unstructured.Unstructured{
			objectRef(gvkSet, DefaultNamespace, testUUID), objectRef(gvkSet, DefaultNamespace, testStackID+SuffixCloudProvider),
			objectRef(gvkSec, DefaultNamespace, testUUID), objectRef(gvkSec, DefaultNamespace, testStackID+SuffixCloudProvider),
		}
		for _, o := range addons {
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(o), o.DeepCopy()); err != nil {
				t.Fatalf("%s %s after create: %v", o.GetKind(), o.GetName(), err)
			}
		}
		cl := getCAPICluster(t, c)
		cl.Finalizers = []string{"cluster.cluster.x-k8s.io"}
		if err := c.Update(t.Context(), cl); err != nil {
			t.Fatal(err)
		}
		upd, err := d.DeleteCluster(t.Context(), userCred, st)
		if err != nil {
			t.Fatal(err)
		}
		st = applyUpdate(st, upd)
		for _, o := range addons {
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(o), o.DeepCopy()); !apierrors.IsNotFound(err) {
				t.Errorf("%s %s still there: %v", o.GetKind(), o.GetName(), err)
			}
		}
		if getCAPICluster(t, c).DeletionTimestamp == nil {
			t.Fatal("the Cluster was not deleted")
		}

		// While CAPI tears down, the credential and Secrets stay.
		upd, err = d.PollStatus(t.Context(), driver.AdminCredentials(), st)
		if err != nil {
			t.Fatal(err)
		}
		if upd.Cluster != nil && statusOf(upd.Cluster.Status) != magnum.StatusDeleteInProgress {
			t.Fatalf("status moved to %v while the Cluster exists", upd.Cluster.Status)
		}
		if len(osf.appCreds) != 1 {
			t.Fatal("the application credential was deleted before the Cluster was gone")
		}

		cl = getCAPICluster(t, c)
		cl.Finalizers = nil
		if err := c.Update(t.Context(), cl); err != nil {
			t.Fatal(err)
		}
		upd, err = d.PollStatus(t.Context(), driver.AdminCredentials(), st)
		if err != nil {
			t.Fatal(err)
		}
		if upd.Cluster == nil || statusOf(upd.Cluster.Status) != magnum.StatusDeleteComplete || upd.Cluster.StatusReason != nil {
			t.Errorf("poll update = %+v", upd)
		}
		if len(osf.appCreds) != 0 || !slices.Contains(osf.deleted, "ac-1") {
			t.Errorf("credentials left %v, deleted %v", osf.appCreds, osf.deleted)
		}
		if names := osf.ServerGroupNames(); len(names) != 0 {
			t.Errorf("server groups left: %v", names)
		}
		var secrets corev1.SecretList
		if err := c.List(t.Context(), &secrets, client.InNamespace(DefaultNamespace)); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets.Items {
			if strings.HasPrefix(s.Name, testStackID) {
				t.Errorf("secret %s left", s.Name)
			}
		}
	})
}

func TestRotations(t *testing.T) {
	d, c, osf, st := created(t)
	t.Run("CA rotation is refused before anything changes", func(t *testing.T) {
		var me *magnum.Error
		if err := d.CanRotateCA(st); !errors.As(err, &me) || me.Status != 400 {
			t.Errorf("CanRotateCA = %v", err)
		}
		if _, err := d.RotateCA(t.Context(), userCred, st); err == nil {
			t.Error("RotateCA succeeded")
		}
	})
	t.Run("credential rotation moves ownership and retires the old one later", func(t *testing.T) {
		other := driver.Credentials{AuthToken: "tok2", UserID: "u2", ProjectID: "p1"}
		upd, err := d.RotateCredential(t.Context(), other, st)
		if err != nil {
			t.Fatal(err)
		}
		if upd.Cluster == nil || upd.Cluster.UserID != "u2" {
			t.Errorf("update = %+v", upd)
		}
		var s corev1.Secret
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: DefaultNamespace, Name: testStackID + SuffixCloudConfig}, &s); err != nil {
			t.Fatal(err)
		}
		ac, _ := appCredentialFromSecret(&s)
		if ac.ID != "ac-2" || s.Annotations[annotationPreviousAppCred] != "u1/ac-1" {
			t.Errorf("secret credential %v annotations %v", ac, s.Annotations)
		}
		if _, ok := osf.appCreds["ac-1"]; !ok {
			t.Fatal("the old credential was deleted before CAPO used the new one")
		}
		// CAPO reports the OpenStackCluster ready: the old one goes.
		osc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersionInfra, "kind": kindOpenStackCluster,
			"metadata": map[string]any{"name": testStackID + "-x1", "namespace": DefaultNamespace,
				"labels": map[string]any{labelClusterName: testStackID}},
			"status": map[string]any{"ready": true},
		}}
		if err := c.Create(t.Context(), osc); err != nil {
			t.Fatal(err)
		}
		if _, err := d.PollStatus(t.Context(), driver.AdminCredentials(), st); err != nil {
			t.Fatal(err)
		}
		if _, ok := osf.appCreds["ac-1"]; ok {
			t.Error("the old credential was not retired")
		}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(&s), &s); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Annotations[annotationPreviousAppCred]; ok {
			t.Error("the previous-credential annotation is still there")
		}
	})
}

func TestProvides(t *testing.T) {
	d, _, _ := newTestDriver(t)
	var got []string
	for _, tg := range d.Provides() {
		got = append(got, tg.String())
	}
	want := []string{
		"(vm, debian, kubernetes)", "(vm, flatcar, kubernetes)", "(vm, rockylinux, kubernetes)",
		"(vm, ubuntu, kubernetes)", "(vm, ubuntu-focal, kubernetes)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Provides (-want +got):\n%s", diff)
	}
	reg := driver.NewRegistry(driver.Selection{}, d.EntryPoints()...)
	ep, err := reg.ForTarget("vm", "ubuntu-focal", "kubernetes")
	if err != nil || ep.Name() != "k8s_cluster_api_ubuntu_focal" {
		t.Errorf("ForTarget = %v, %v", ep, err)
	}
	if d.Beta() || d.ValidateMasterResize(3) != nil || d.ValidateMasterResize(2) == nil {
		t.Error("beta or master resize rule wrong")
	}
}

func TestAdoptedClusterKeepsItsClass(t *testing.T) {
	d, c, _, st := created(t)
	old := clusterClass(DefaultNamespace, "magnum-v0.38.2")
	old.Spec.Variables = slices.DeleteFunc(old.Spec.Variables, func(v clusterv1.ClusterClassVariable) bool {
		return v.Name == "hardwareDiskBus" || v.Name == "apiServerSANs"
	})
	old.Spec.Patches = nil
	if err := c.Create(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	live := getCAPICluster(t, c)
	live.Spec.Topology.ClassRef.Name = "magnum-v0.38.2"
	if err := c.Update(t.Context(), live); err != nil {
		t.Fatal(err)
	}
	names := func(vars []clusterv1.ClusterVariable) []string {
		var out []string
		for _, v := range vars {
			out = append(out, v.Name)
		}
		return out
	}

	if _, err := d.ResizeCluster(t.Context(), userCred, st, driver.Resize{NodeGroupUUID: "ng-worker", NodeCount: 3}); err != nil {
		t.Fatal(err)
	}
	got := getCAPICluster(t, c)
	if got.Spec.Topology.ClassRef.Name != "magnum-v0.38.2" {
		t.Errorf("class moved to %s without an upgrade", got.Spec.Topology.ClassRef.Name)
	}
	if n := names(got.Spec.Topology.Variables); slices.Contains(n, "hardwareDiskBus") || slices.Contains(n, "apiServerSANs") || len(n) != 37 {
		t.Errorf("variables of the pinned class = %v", n)
	}
	if n := names(got.Spec.Topology.Workers.MachineDeployments[0].Variables.Overrides); slices.Contains(n, "hardwareDiskBus") {
		t.Errorf("overrides of the pinned class = %v", n)
	}

	tpl := st.Template
	if _, err := d.UpgradeCluster(t.Context(), userCred, st, driver.Upgrade{Template: tpl}); err != nil {
		t.Fatal(err)
	}
	got = getCAPICluster(t, c)
	if got.Spec.Topology.ClassRef.Name != ClassName(DefaultClassVersion) || len(got.Spec.Topology.Variables) != 39 {
		t.Errorf("after upgrade: class %s, %d variables", got.Spec.Topology.ClassRef.Name, len(got.Spec.Topology.Variables))
	}
}
