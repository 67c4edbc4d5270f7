//! What the per-cluster builders read: the cluster's rows, where its
//! objects go, and what the driver looked up in OpenStack for it.
//!
//! The builders stay pure: the code that calls the host (Nova, Glance,
//! Neutron, the live OpenStackCluster, the configuration) fills these
//! structs first, and tests give them literally.

use std::collections::BTreeMap;

use openkeel_magnum_driver::openstack::Flavor;
use openkeel_magnum_driver::{ClusterState, DriverError, StringMap};

/// Everything the per-cluster builders read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Input {
    /// The cluster, its template and its nodegroups.
    pub state: ClusterState,
    /// The cluster's `stack_id`: the name of its Cluster API Cluster and
    /// the prefix of every per-cluster object.
    pub stack_id: String,
    /// The namespace of every object.
    pub namespace: String,
    /// The class version the Cluster names (`magnum-v<class_version>`).
    pub class_version: String,
    /// The OpenStack lookups.
    pub resolved: Resolved,
    /// The fields of the cluster's existing OpenStackCluster that CAPO
    /// does not let change; None before the OpenStackCluster exists.
    pub live: Option<LiveInfra>,
    /// `[cinder] default_boot_volume_size`: the boot volume size (GiB)
    /// without the `boot_volume_size` label; 0 boots from the image.
    pub default_boot_volume_size: i64,
    /// `[cinder] default_boot_volume_type`, when configured.
    pub default_boot_volume_type: Option<String>,
    /// Cinder's default volume type ("" when Cinder has none): the type
    /// of every volume no label or option gives a type.
    pub default_volume_type: String,
    /// The driver option `autoscaler_image_repository` (magnum-cluster-api's
    /// `[auto_scaling] image_repository`): where the cluster autoscaler's
    /// image is pulled from without `container_infra_prefix`; "" for the
    /// upstream registry.
    pub autoscaler_image_repository: String,
    /// The driver options `registry_mirrors` and `insecure_registries`:
    /// the containerd registry configuration the cluster's labels extend.
    pub registries: crate::registries::Registries,
}

/// What the builders need from OpenStack. Each name or ID is "" when the
/// cluster does not set what it is looked up from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resolved {
    /// The Nova flavor name of the control plane (`master_flavor_id`).
    pub control_plane_flavor: String,
    /// The Glance image of the control plane (the master nodegroup's
    /// `image_id`).
    pub control_plane_image: Image,
    /// The Neutron ID of the template's `external_network_id`.
    pub external_network_id: String,
    /// The Neutron ID of the cluster's `fixed_network`.
    pub fixed_network_id: String,
    /// The Neutron ID of the cluster's `fixed_subnet`.
    pub fixed_subnet_id: String,
    /// Nova server group IDs by server group name
    /// ([`server_group_name`](crate::names::server_group_name)).
    pub server_groups: BTreeMap<String, String>,
    /// The lookups of each worker nodegroup, by nodegroup name.
    pub node_groups: BTreeMap<String, ResolvedNodeGroup>,
}

/// A Glance image, looked up by name or ID.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    /// The Glance image ID.
    pub id: String,
    /// The image property `hw_disk_bus` ("" when unset): with `scsi` the
    /// nodes' disks are `/dev/sdX`, otherwise `/dev/vdX`.
    pub disk_bus: String,
}

/// The OpenStack side of one worker nodegroup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolvedNodeGroup {
    /// The Nova flavor name of the nodegroup's `flavor_id`.
    pub flavor: String,
    /// The nodegroup's image.
    pub image: Image,
    /// What a node of the flavor offers, from the flavor's details
    /// (contract 1.1's `flavor-details`); None when they were not looked
    /// up. Without it an autoscaled MachineDeployment carries no capacity
    /// annotations and cannot scale up from zero.
    pub capacity: Option<Capacity>,
}

/// The extra spec of a flavor's virtual GPUs (Placement's `VGPU`
/// resource class, in the unnumbered request group).
pub const EXTRA_SPEC_VGPU: &str = "resources:VGPU";
/// The extra spec of a flavor's PCI devices passed through by alias.
pub const EXTRA_SPEC_PCI_ALIAS: &str = "pci_passthrough:alias";

/// What a node of a Nova flavor offers: the capacity the cluster
/// autoscaler assumes for a node it would add to an empty group (scale
/// from zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capacity {
    /// Virtual CPUs.
    pub vcpus: u32,
    /// Memory, in MiB (Nova's `ram`).
    pub ram_mb: u32,
    /// Root disk, in GiB (Nova's `disk`); 0 when the flavor sizes it from
    /// the image.
    pub disk_gb: u32,
    /// GPUs: see [`Capacity::gpus_of`].
    pub gpus: u32,
}

impl Capacity {
    /// The capacity of `flavor`. A malformed GPU extra spec is a 400
    /// naming the flavor and the spec: Nova validates extra specs when
    /// they are set, so only a flavor Nova could not boot has one.
    pub fn from_flavor(flavor: &Flavor) -> Result<Capacity, DriverError> {
        let gpus = Capacity::gpus_of(&flavor.extra_specs).map_err(|spec| {
            DriverError::invalid(format!(
                "Flavor {} has an invalid extra spec {spec}: {:?}.",
                flavor.name,
                flavor.extra_specs.str_or(spec, "")
            ))
        })?;
        Ok(Capacity {
            vcpus: flavor.vcpus,
            ram_mb: flavor.ram_mb,
            disk_gb: flavor.disk_gb,
            gpus,
        })
    }

    /// The GPUs a flavor's extra specs give a server, the sum of:
    ///
    /// - the virtual GPUs it requests from Placement: the integer value of
    ///   `resources:VGPU` and of every numbered or suffixed request group's
    ///   `resources<group>:VGPU`;
    /// - the PCI devices it passes through: `pci_passthrough:alias` is
    ///   `<alias>:<count>[,<alias>:<count>…]`, and every device counts, so
    ///   a flavor should pass through only GPUs by alias (an alias of a
    ///   NIC or an FPGA would be counted as a GPU too).
    ///
    /// Any other extra spec is ignored. The error is the key of a
    /// malformed value.
    pub fn gpus_of(extra_specs: &StringMap) -> Result<u32, &str> {
        let mut gpus: u32 = 0;
        for (key, value) in extra_specs {
            let count = if is_vgpu_spec(key) {
                count(value)
            } else if key == EXTRA_SPEC_PCI_ALIAS {
                pci_alias_count(value)
            } else {
                continue;
            };
            gpus = count
                .and_then(|n| gpus.checked_add(n))
                .ok_or(key.as_str())?;
        }
        Ok(gpus)
    }
}

/// Whether `key` requests VGPUs: `resources:VGPU`, or the same in a
/// request group, `resources1:VGPU` or `resources_gpu:VGPU`.
fn is_vgpu_spec(key: &str) -> bool {
    key.strip_prefix("resources")
        .and_then(|rest| rest.strip_suffix(":VGPU"))
        .is_some_and(|group| !group.contains(':'))
}

/// The device count of a `pci_passthrough:alias` value; None when an
/// entry is not `<alias>:<count>`.
fn pci_alias_count(value: &str) -> Option<u32> {
    value.split(',').try_fold(0u32, |total, entry| {
        let (alias, n) = entry.trim().rsplit_once(':')?;
        if alias.trim().is_empty() {
            return None;
        }
        total.checked_add(count(n)?)
    })
}

/// A count: decimal digits only.
fn count(value: &str) -> Option<u32> {
    let v = value.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

/// What the driver reads back from an existing OpenStackCluster: its
/// load-balancer fields and `disableAPIServerFloatingIP`, which CAPO's
/// webhook refuses to change (driver-capi.md § 4.1), so the variables keep
/// them whatever the labels say now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveInfra {
    /// The API load balancer's Octavia provider ("" when unset).
    pub lb_provider: String,
    /// The API load balancer's Octavia flavor ("" when unset).
    pub lb_flavor: String,
    /// The API load balancer's availability zone ("" when unset).
    pub lb_availability_zone: String,
    /// `disableAPIServerFloatingIP`, None when the live spec does not have
    /// the field at all.
    pub disable_floating_ip: Option<bool>,
}
