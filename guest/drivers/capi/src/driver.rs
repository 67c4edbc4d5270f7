//! The driver the host loads: its entry points, the synchronous checks,
//! the operations of [`crate::ops`] and the status of [`crate::watch`],
//! over the host's imports.

use openkeel_magnum_driver::prelude::*;
use openkeel_magnum_driver::{ca_rotation_not_supported, validate_master_size};

use crate::ops::{Ops, validate_create, validate_nodegroup_name};
use crate::options::Options;
use crate::services::{Host, Services};

/// The entry point that provides every supported distro.
pub const ENTRY_POINT: &str = "k8s_cluster_api";

/// The entry points of one distro each, as the Go driver registered them
/// (magnum-cluster-api's names), with their `os`.
pub const DISTRO_ENTRY_POINTS: [(&str, &str); 5] = [
    ("k8s_cluster_api_debian", "debian"),
    ("k8s_cluster_api_flatcar", "flatcar"),
    ("k8s_cluster_api_rockylinux", "rockylinux"),
    ("k8s_cluster_api_ubuntu", "ubuntu"),
    ("k8s_cluster_api_ubuntu_focal", "ubuntu-focal"),
];

/// The description `driver list` shows.
pub const DESCRIPTION: &str = "Kubernetes on OpenStack with Cluster API";

fn target(os: &str) -> Target {
    Target::new("vm", os, "kubernetes")
}

/// Every entry point with the cluster types it provides.
pub fn entry_points() -> Vec<EntryPoint> {
    let all = DISTRO_ENTRY_POINTS
        .iter()
        .map(|(_, os)| target(os))
        .collect();
    let mut out = vec![EntryPoint::new(ENTRY_POINT, DESCRIPTION, all)];
    for (name, os) in DISTRO_ENTRY_POINTS {
        out.push(EntryPoint::new(
            name,
            &format!("{DESCRIPTION} ({os})"),
            vec![target(os)],
        ));
    }
    out
}

/// The Cluster API driver over some [`Services`] (the host's in the
/// component).
#[derive(Default)]
pub struct Capi<S: Services = Host> {
    pub svc: S,
}

impl<S: Services> Capi<S> {
    fn with<T>(
        &self,
        f: impl FnOnce(&Ops<'_, S>) -> Result<T, DriverError>,
    ) -> Result<T, DriverError> {
        let opts = Options::read()?;
        f(&Ops {
            svc: &self.svc,
            opts: &opts,
        })
    }
}

impl<S: Services> Driver for Capi<S> {
    fn describe(&self) -> Vec<EntryPoint> {
        entry_points()
    }

    fn validate_master_resize(&self, _entry_point: &str, count: i32) -> Result<(), DriverError> {
        // Cluster API resizes the control plane: the base rule for the
        // count is the only check.
        validate_master_size(count)
    }

    fn validate_create(&self, _ctx: &CallContext, st: &ClusterState) -> Result<(), DriverError> {
        validate_create(st)?;
        // The CNI manifest the create will install: a cilium cluster whose
        // manifest the operator has not placed is a 400 now.
        let driver = st.template.network_driver.as_deref().unwrap_or("");
        let labels = st.cluster.labels();
        let file = crate::addons::cni_manifest_file(driver, labels)?;
        let operator = openkeel_magnum_driver::config::read_file(&file).ok();
        crate::addons::cni_manifest(driver, labels, operator.as_deref()).map(drop)
    }

    fn validate_upgrade(
        &self,
        _ctx: &CallContext,
        st: &ClusterState,
        template: &ClusterTemplate,
    ) -> Result<(), DriverError> {
        let target = template
            .labels
            .as_ref()
            .and_then(|l| l.0.get(crate::labels::KUBE_TAG))
            .map_or("", String::as_str);
        crate::labels::validate_upgrade(
            st.cluster.label(crate::labels::KUBE_TAG).unwrap_or(""),
            target,
        )
    }

    fn validate_nodegroup(
        &self,
        _ctx: &CallContext,
        _st: &ClusterState,
        ng: &NodeGroup,
    ) -> Result<(), DriverError> {
        validate_nodegroup_name(&ng.name)?;
        crate::cluster::validate_taints(ng)
    }

    fn can_rotate_ca(&self, _ctx: &CallContext, _st: &ClusterState) -> Result<(), DriverError> {
        // The cluster's kubeadm CAs are Magnum's: rotating them in Magnum
        // alone would make `coe cluster config` write credentials the
        // cluster refuses, and Cluster API has no trust-bundle rollout.
        Err(ca_rotation_not_supported())
    }

    fn create_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        _timeout: u32,
    ) -> Result<Update, DriverError> {
        self.with(|o| o.create_cluster(st))
    }

    fn update_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        self.with(|o| o.update_cluster(st))
    }

    fn delete_cluster(&self, _ctx: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        self.with(|o| o.delete_cluster(st))
    }

    fn resize_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        req: Resize,
    ) -> Result<Update, DriverError> {
        self.with(|o| o.resize_cluster(st, req))
    }

    fn upgrade_cluster(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        req: Upgrade,
    ) -> Result<Update, DriverError> {
        self.with(|o| o.upgrade_cluster(st, req))
    }

    fn create_nodegroup(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        self.with(|o| o.create_nodegroup(st, ng))
    }

    fn update_nodegroup(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        self.with(|o| o.update_nodegroup(st, ng))
    }

    fn delete_nodegroup(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
        ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        self.with(|o| o.delete_nodegroup(st, ng))
    }

    fn rotate_credential(
        &self,
        _ctx: &CallContext,
        st: ClusterState,
    ) -> Result<Update, DriverError> {
        self.with(|o| o.rotate_credential(st))
    }

    fn watches(&self, _ctx: &CallContext, st: &ClusterState) -> Vec<Selector> {
        Options::read()
            .map(|opts| crate::watch::watches(&opts, st))
            .unwrap_or_default()
    }

    fn derive(
        &self,
        ctx: &CallContext,
        st: ClusterState,
        snapshot: Vec<Observation>,
    ) -> Result<StatusAnswer, DriverError> {
        let opts = Options::read()?;
        let now = ctx
            .now
            .ok_or_else(|| DriverError::failed("the host gave no time to derive-status"))?;
        let ca = crate::secrets::ca_digest(self.svc.cloud().ca_bundle.as_deref());
        crate::watch::derive(&opts, now, &st, &snapshot, &ca)
    }

    fn poll(&self, ctx: &CallContext, st: ClusterState) -> Result<StatusAnswer, DriverError> {
        // Polled only while the cluster has no stack_id (it has nothing to
        // watch yet), or by a host without watches: read what a watch would
        // hold.
        let opts = Options::read()?;
        let selectors = crate::watch::watches(&opts, &st);
        let mut snapshot = Vec::with_capacity(selectors.len());
        for sel in selectors {
            let objects = openkeel_magnum_driver::kube::list(&sel)?;
            snapshot.push(Observation {
                selector: sel,
                served: true,
                synced: true,
                objects,
            });
        }
        let now = ctx.now.unwrap_or_default();
        let ca = crate::secrets::ca_digest(self.svc.cloud().ca_bundle.as_deref());
        crate::watch::derive(&opts, now, &st, &snapshot, &ca)
    }

    fn apply_effects(
        &self,
        _ctx: &CallContext,
        st: &ClusterState,
        effects: Vec<Effect>,
    ) -> Result<(), DriverError> {
        let opts = Options::read()?;
        crate::watch::apply_effects(&self.svc, &opts, st, effects)
    }
}

#[cfg(target_family = "wasm")]
openkeel_magnum_driver::register_driver!(Capi);
