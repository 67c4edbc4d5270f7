//! The Cluster API driver: Magnum clusters built as Cluster API (CAPI)
//! topology clusters on a management Kubernetes cluster, with the
//! OpenStack infrastructure provider (CAPO), following the contract of
//! magnum-cluster-api (`driver-capi.md`) so that its clusters can be
//! adopted.
//!
//! This is a port of the first implementation, in Go (retired at commit
//! 0798596, `internal/driver/capi`). So far it holds pure code only, the
//! builders of what every cluster of a class version shares, the builder
//! of each cluster's Cluster and the status rules; nothing here calls the
//! host, and the crate is not yet a driver the host loads:
//!
//! - [`names`]: the namespace, the class name and the names and keys of
//!   what the driver writes and looks up;
//! - [`labels`]: the labels the driver reads, their defaults, the
//!   Kubernetes version of `kube_tag` and the operating system of
//!   `cluster_distro`;
//! - [`classes`]: the ClusterClass `magnum-v<version>` and its four
//!   templates, as JSON objects, with the class variables of
//!   [`variables`] and the patches of [`patches`];
//! - [`cluster`]: the topology Cluster of one cluster and the autoscaler's
//!   sizing of its MachineDeployments, from an [`input::Input`] (the
//!   cluster's rows and what the driver looked up in OpenStack), with the
//!   values of the class variables of [`cluster_variables`] and the node
//!   configuration files of [`node_config`];
//! - [`status`]: the status rules, Magnum's rows from the Cluster API
//!   objects of one cluster (pure, for `derive-status`), with the API
//!   server's timestamps read by [`time`].
//!
//! The objects are written in Cluster API's v1beta2 and CAPO's v1beta1
//! (§ 9.1). They are checked against the Go driver's goldens, compared as
//! values, in this crate's tests; so are the class templates after the
//! class patches, which a test-only stand-in for Cluster API's topology
//! patch engine (`patch_eval`) applies for a built Cluster.

pub mod classes;
pub mod cluster;
pub mod cluster_variables;
pub mod input;
pub mod labels;
pub mod names;
pub mod node_config;
pub mod patches;
pub mod status;
pub mod time;
pub mod variables;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod golden;
#[cfg(test)]
mod patch_eval;
#[cfg(test)]
mod patched_tests;
