//! The Cluster API driver: Magnum clusters built as Cluster API (CAPI)
//! topology clusters on a management Kubernetes cluster, with the
//! OpenStack infrastructure provider (CAPO), following the contract of
//! magnum-cluster-api (`driver-capi.md`) so that its clusters can be
//! adopted. Built for contract 1.1 and embedded in the host, which chooses
//! it for the cluster types it provides (the fake driver, a beta driver,
//! only when it is enabled).
//!
//! A port of the first implementation, in Go (retired at commit 0798596,
//! `internal/driver/capi`). The builders are pure; the operations and the
//! status call the host through the SDK:
//!
//! - [`driver`]: the entry points and the contract's functions, over the
//!   host's imports ([`services`] for OpenStack and the certificates,
//!   the SDK's `kube` for the management cluster, [`options`] for the
//!   driver's options);
//! - [`ops`]: what each operation writes and the rows it moves;
//! - [`watch`]: the objects the host watches for a cluster, the rows'
//!   state from its copy of them, and the side effects (clean-up,
//!   retired credentials, server groups of nodegroups gone);
//! - [`names`]: the namespace, the class name and the names and keys of
//!   what the driver writes and looks up;
//! - [`labels`]: the labels the driver reads, their defaults, the
//!   Kubernetes version of `kube_tag` and the operating system of
//!   `cluster_distro`;
//! - [`classes`]: the ClusterClass `magnum-v<version>` and its four
//!   templates, as JSON objects, with the class variables of
//!   [`variables`] and the patches of [`patches`];
//! - [`cluster`]: the topology Cluster of one cluster and the autoscaler's
//!   sizing of its MachineDeployments (bounds, and the capacity of a node
//!   of an empty group), from an [`input::Input`] (the cluster's rows and
//!   what the driver looked up in OpenStack), with the values of the class
//!   variables of [`cluster_variables`] and the node configuration files
//!   of [`node_config`] (containerd's registry mirrors and insecure
//!   registries from [`registries`]);
//! - [`autoscaler`]: the cluster autoscaler of an autoscaled cluster, its
//!   Deployment and RBAC as plain manifests for the management cluster's
//!   namespace, and what to delete when autoscaling ends;
//! - [`secrets`]: the four CA Secrets of a cluster and its identity Secret
//!   `<stack_id>-cloud-config` with the application credential, its name
//!   and description, and the credential read back from a Secret;
//! - [`addons`]: the two ClusterResourceSets of a cluster and the add-on
//!   Secrets they apply (CNI, cloud-config, k8s-keystone-auth, cloud
//!   controller manager, Cinder CSI and StorageClasses), from the embedded
//!   manifests of `addons/` or the operator's, parsed and rewritten by the
//!   private `manifests` and `images` modules; [`manila`] writes the
//!   objects of Manila CSI;
//! - [`loadbalancers`]: the Octavia load balancers that belong to a
//!   cluster;
//! - [`status`]: the status rules, Magnum's rows from the Cluster API
//!   objects of one cluster (pure, for `derive-status`), with the API
//!   server's timestamps read by [`time`].
//!
//! The objects are written in Cluster API's v1beta2 and CAPO's v1beta1
//! (§ 9.1). They are checked against the Go driver's goldens, compared as
//! values, in this crate's tests; so are the class templates after the
//! class patches, which a test-only stand-in for Cluster API's topology
//! patch engine (`patch_eval`) applies for a built Cluster.

pub mod addons;
pub mod autoscaler;
pub mod classes;
pub mod cluster;
pub mod cluster_variables;
pub mod driver;
mod images;
pub mod input;
pub mod labels;
pub mod loadbalancers;
mod manifests;
pub mod manila;
pub mod names;
pub mod node_config;
pub mod ops;
pub mod options;
pub mod patches;
pub mod registries;
pub mod secrets;
pub mod services;
pub mod status;
pub mod time;
pub mod variables;
pub mod watch;

#[cfg(test)]
mod driver_tests;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod golden;
#[cfg(test)]
mod patch_eval;
#[cfg(test)]
mod patched_tests;
