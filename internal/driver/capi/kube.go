package capi

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AddToScheme registers every typed kind the driver reads or writes: the
// client-go kinds and the Cluster API v1beta2 core, bootstrap,
// control-plane and add-on kinds. CAPO kinds are unstructured and need no scheme.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, controlplanev1.AddToScheme,
		addonsv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// NewScheme returns a scheme with AddToScheme applied.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}

// apply server-side applies obj (typed or unstructured) as FieldManager,
// forcing ownership: the driver is the only writer of the fields it sets,
// and adopted clusters still carry fields owned by magnum-cluster-api's
// manager (§ 1).
func (d *Driver) apply(ctx context.Context, obj client.Object) error {
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	err = d.opts.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(FieldManager), client.ForceOwnership)
	if err != nil {
		return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// toUnstructured converts a built object; its TypeMeta must be set.
func toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	// Fields the API server owns are never applied.
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		return nil, fmt.Errorf("convert %T: TypeMeta is not set", obj)
	}
	return u, nil
}

// deleteIgnoringNotFound deletes an object, treating NotFound (and a kind
// the server does not serve) as already deleted.
func (d *Driver) deleteIgnoringNotFound(ctx context.Context, obj client.Object) error {
	err := d.opts.Client.Delete(ctx, obj, client.PropagationPolicy("Background"))
	if err == nil || apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	return fmt.Errorf("delete %s: %w", obj.GetName(), err)
}

// objectRef builds an unstructured reference for Get and Delete.
func objectRef(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// getCluster reads the CAPI Cluster (nil when it does not exist).
func (d *Driver) getCluster(ctx context.Context, stackID string) (*clusterv1.Cluster, error) {
	var c clusterv1.Cluster
	err := d.opts.Client.Get(ctx, client.ObjectKey{Namespace: d.opts.Namespace, Name: stackID}, &c)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get cluster %s: %w", stackID, err)
	}
	return &c, nil
}

// getSecret reads a Secret (nil when it does not exist).
func (d *Driver) getSecret(ctx context.Context, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	err := d.opts.Client.Get(ctx, client.ObjectKey{Namespace: d.opts.Namespace, Name: name}, &s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get secret %s: %w", name, err)
	}
	return &s, nil
}

// listUnstructured lists CAPO objects of a kind with the cluster label. A
// kind the server does not serve lists as empty.
func (d *Driver) listUnstructured(ctx context.Context, kind string, sel client.MatchingLabels) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: groupInfra, Version: "v1beta1", Kind: kind + "List"})
	err := d.opts.Client.List(ctx, l, client.InNamespace(d.opts.Namespace), sel)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	return l.Items, nil
}

// liveInfra reads the immutable fields of the cluster's OpenStackCluster.
func (d *Driver) liveInfra(ctx context.Context, stackID string) (*LiveInfra, error) {
	items, err := d.listUnstructured(ctx, kindOpenStackCluster, client.MatchingLabels{labelClusterName: stackID})
	if err != nil || len(items) == 0 {
		return nil, err
	}
	return liveInfraOf(&items[0]), nil
}

func liveInfraOf(u *unstructured.Unstructured) *LiveInfra {
	var li LiveInfra
	li.LBProvider, _, _ = unstructured.NestedString(u.Object, "spec", "apiServerLoadBalancer", "provider")
	li.LBFlavor, _, _ = unstructured.NestedString(u.Object, "spec", "apiServerLoadBalancer", "flavor")
	li.LBAvailabilityZone, _, _ = unstructured.NestedString(u.Object, "spec", "apiServerLoadBalancer", "availabilityZone")
	li.DisableFloatingIP, li.HasDisableFloatingIP, _ = unstructured.NestedBool(u.Object, "spec", "disableAPIServerFloatingIP")
	return &li
}

// errNoCAs is returned when the driver was built without a CA source.
var errNoCAs = errors.New("capi driver: no CA source configured")
