//! What the per-cluster builders read: the cluster's rows, where its
//! objects go, and what the driver looked up in OpenStack for it.
//!
//! The builders stay pure: the code that calls the host (Nova, Glance,
//! Neutron, the live OpenStackCluster, the configuration) fills these
//! structs first, and tests give them literally.

use std::collections::BTreeMap;

use openkeel_magnum_driver::ClusterState;

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
