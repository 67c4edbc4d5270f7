// Package capi is the Cluster API driver: it builds Magnum clusters as
// Cluster API (CAPI) topology clusters on a management Kubernetes cluster,
// with the OpenStack infrastructure provider (CAPO), following the
// magnum-cluster-api contract (driver-capi.md).
//
// The package has two layers:
//
//   - pure builders (classes.go, patches.go, variables.go, labels.go,
//     cluster.go, secrets.go) that turn a driver.ClusterState, the
//     cluster's CAs and its application credential into the exact
//     Kubernetes objects of driver-capi.md §§ 3–4: the shared ClusterClass
//     "magnum-v<version>" and its templates, the per-cluster Cluster, CA
//     Secrets and cloud-config Secret, and (addons.go) the two add-on
//     ClusterResourceSets with their Secrets, rendered from the manifests
//     embedded in addons/. Output is deterministic;
//   - the Driver (driver.go, kube.go, operations.go, status.go), which
//     applies those objects with server-side apply (field manager
//     "openkeel-magnum"),
//     annotates Machines for removal, deletes in the order of § 8.8 and maps
//     the observed CAPI objects back to Magnum statuses (§ 5).
//
// CAPI objects are written in v1beta2 with the typed Go API of
// sigs.k8s.io/cluster-api/api; CAPO objects are unstructured v1beta1 (the
// CAPO module cannot be imported next to cluster-api/api v1.14, § 9.2).
//
// The driver is not registered in init: it needs a configured Kubernetes
// client, so the application builds it with New and registers it.
package capi
