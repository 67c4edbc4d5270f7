//! What the double serves: the resources a test seeds, as plain structs that
//! a seed file (JSON) can also describe.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A Glance v2 image.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Image {
    pub id: String,
    pub name: String,
    /// The `os_distro` property; left out of the body when empty.
    pub os_distro: String,
    /// The `magnum_driver` property; left out of the body when empty.
    pub magnum_driver: String,
    /// Further properties, which Glance v2 puts at the top level of the
    /// image object.
    pub properties: BTreeMap<String, String>,
    /// `public` when empty.
    pub visibility: String,
    /// The owning project's id; `null` when empty.
    pub owner: String,
    /// `os_hidden`: Glance leaves hidden images out of lists unless the query
    /// asks for `os_hidden=true`, but shows them by id.
    pub hidden: bool,
}

/// A Nova flavor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Flavor {
    pub id: String,
    pub name: String,
    pub vcpus: i64,
    /// MiB.
    pub ram: i64,
    /// GiB; 0 means "boot from volume only".
    pub disk: i64,
}

/// A Nova keypair of the calling user.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Keypair {
    pub name: String,
    /// `ssh` when empty.
    #[serde(rename = "type")]
    pub key_type: String,
    pub public_key: String,
    pub fingerprint: String,
}

/// A Neutron network.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Network {
    pub id: String,
    pub name: String,
    /// `router:external`.
    pub external: bool,
    pub shared: bool,
}

/// A Neutron subnet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Subnet {
    pub id: String,
    pub name: String,
    pub network_id: String,
    pub cidr: String,
}

/// An Octavia v2 load balancer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoadBalancer {
    pub id: String,
    pub name: String,
    pub description: String,
    pub project_id: String,
    /// `ACTIVE` when empty.
    pub provisioning_status: String,
    pub vip_port_id: String,
    pub vip_address: String,
    /// Listener ids: Octavia refuses to delete a load balancer with children
    /// unless the delete cascades.
    pub listeners: Vec<String>,
    pub tags: Vec<String>,
}

/// A Neutron floating IP.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FloatingIp {
    pub id: String,
    pub address: String,
    /// Empty when not associated.
    pub port_id: String,
    pub project_id: String,
    pub description: String,
}

/// A Nova server group (one policy, microversion 2.1 shapes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerGroup {
    pub id: String,
    pub name: String,
    pub policy: String,
    pub project_id: String,
}

/// A Cinder volume type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VolumeType {
    pub id: String,
    pub name: String,
}

/// A Manila share type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShareType {
    pub id: String,
    pub name: String,
    /// The `driver_handles_share_servers` extra spec (`"True"` or
    /// `"False"` in the body); left out when `None`.
    pub driver_handles_share_servers: Option<bool>,
}

/// A Keystone application credential. The secret is never served again
/// after its creation, as in Keystone.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApplicationCredential {
    pub id: String,
    pub name: String,
    pub description: String,
    pub user_id: String,
    pub project_id: String,
    /// The role names granted.
    pub roles: Vec<String>,
    pub unrestricted: bool,
}

/// The identity behind a user token that the Keystone part validates
/// (`GET /v3/auth/tokens`): a project-scoped token of `user_id` in
/// `project_id` with `roles`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UserToken {
    pub user_id: String,
    /// `user_id` when empty.
    pub user_name: String,
    pub project_id: String,
    /// `project_id` when empty.
    pub project_name: String,
    /// The role names, in order (may be empty).
    pub roles: Vec<String>,
}

/// Everything the double serves. Collections are served in vector order.
///
/// A seed file is this structure in JSON; every field may be left out:
///
/// ```json
/// {"images": [{"id": "…", "name": "ubuntu", "os_distro": "ubuntu"}],
///  "flavors": [{"id": "1", "name": "m1.small", "vcpus": 1, "ram": 2048, "disk": 20}],
///  "tokens": {"user-token": "project-1"},
///  "user_tokens": {"t-1": {"user_id": "u", "project_id": "p", "roles": ["member"]}}}
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Seed {
    pub images: Vec<Image>,
    pub flavors: Vec<Flavor>,
    pub keypairs: Vec<Keypair>,
    pub networks: Vec<Network>,
    pub subnets: Vec<Subnet>,
    pub load_balancers: Vec<LoadBalancer>,
    pub floating_ips: Vec<FloatingIp>,
    pub server_groups: Vec<ServerGroup>,
    pub volume_types: Vec<VolumeType>,
    /// The name of Cinder's default volume type (`GET /types/default`
    /// answers 404 when unset).
    pub default_volume_type: Option<String>,
    /// The extra specs of flavors, by flavor id (`GET
    /// /flavors/{id}/os-extra_specs`; a flavor without an entry has none).
    pub flavor_extra_specs: BTreeMap<String, BTreeMap<String, String>>,
    pub share_types: Vec<ShareType>,
    /// The name of Manila's default share type (`GET /types/default`
    /// answers 404 when unset).
    pub default_share_type: Option<String>,
    /// The application credentials Keystone holds.
    pub application_credentials: Vec<ApplicationCredential>,
    /// User tokens of the read-write services (server groups, load
    /// balancers, floating IPs), mapped to their project.
    pub tokens: BTreeMap<String, String>,
    /// When set, a token the read-write services do not know acts as a user
    /// token of this project instead of being refused (401); for suites
    /// whose tokens come from a real Keystone.
    pub default_project: Option<String>,
    /// User tokens the Keystone part validates, with their identity; they
    /// also act as tokens of their project on the read-write services.
    pub user_tokens: BTreeMap<String, UserToken>,
}
