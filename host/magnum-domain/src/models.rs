//! Row types of a Magnum 23.0.0 database (Alembic head `b3e1cf4a2d5e`),
//! column for column.
//!
//! Conventions:
//! - A nullable column whose NULL Magnum distinguishes from a value (it
//!   renders `null` in the API) is an `Option`.
//! - `uuid`, `name`, `project_id` and `user_id` are plain strings: Magnum
//!   always writes them; NULL (only in hand-made rows) reads as `""`.
//! - JSON columns are typed values; `None` means the column is NULL. The
//!   database layer writes `None` as `{}` or `[]`, as Magnum's JSONEncoded
//!   types do.
//! - Times are naive UTC. `created_at` is set on insert, `updated_at` on
//!   every update (`None` until the first update).

use std::collections::BTreeMap;

use chrono::NaiveDateTime;

use crate::Status;

/// A string-to-string JSON object column (labels and the like), in key
/// order.
pub type StringMap = BTreeMap<String, String>;

/// A row of `cluster_template` (formerly `baymodel`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterTemplate {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub project_id: String,
    pub user_id: String,
    pub flavor_id: Option<String>,
    pub master_flavor_id: Option<String>,
    pub keypair_id: Option<String>,
    pub image_id: Option<String>,
    pub external_network_id: Option<String>,
    pub fixed_network: Option<String>,
    pub fixed_subnet: Option<String>,
    pub network_driver: Option<String>,
    pub volume_driver: Option<String>,
    pub dns_nameserver: Option<String>,
    pub apiserver_port: Option<i32>,
    pub docker_volume_size: Option<i32>,
    pub docker_storage_driver: Option<String>,
    pub cluster_distro: Option<String>,
    pub coe: Option<String>,
    pub http_proxy: Option<String>,
    pub https_proxy: Option<String>,
    pub no_proxy: Option<String>,
    pub registry_enabled: Option<bool>,
    pub labels: Option<StringMap>,
    pub tls_disabled: Option<bool>,
    pub public: Option<bool>,
    pub server_type: Option<String>,
    pub insecure_registry: Option<String>,
    pub master_lb_enabled: Option<bool>,
    pub floating_ip_enabled: Option<bool>,
    pub hidden: Option<bool>,
    pub tags: Option<String>,
    pub driver: Option<String>,
    pub created_at: NaiveDateTime,
    pub updated_at: Option<NaiveDateTime>,
}

/// A row of `cluster` (formerly `bay`). Node counts live in its nodegroups.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cluster {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub project_id: String,
    pub user_id: String,
    pub cluster_template_id: String,
    pub keypair: Option<String>,
    pub docker_volume_size: Option<i32>,
    pub labels: Option<StringMap>,
    pub master_flavor_id: Option<String>,
    pub flavor_id: Option<String>,
    pub stack_id: Option<String>,
    pub api_address: Option<String>,
    pub status: Option<Status>,
    pub status_reason: Option<String>,
    pub health_status: Option<String>,
    pub health_status_reason: Option<StringMap>,
    pub create_timeout: Option<i32>,
    pub discovery_url: Option<String>,
    pub coe_version: Option<String>,
    pub container_version: Option<String>,
    pub ca_cert_ref: Option<String>,
    pub magnum_cert_ref: Option<String>,
    pub etcd_ca_cert_ref: Option<String>,
    pub front_proxy_ca_cert_ref: Option<String>,
    pub fixed_network: Option<String>,
    pub fixed_subnet: Option<String>,
    pub floating_ip_enabled: Option<bool>,
    pub master_lb_enabled: Option<bool>,
    pub created_at: NaiveDateTime,
    pub updated_at: Option<NaiveDateTime>,
}

/// One Kubernetes taint of a nodegroup, stored in `nodegroup.node_taints` as
/// `{"key": …, "value": …, "effect": …}`. Magnum keeps the objects as the
/// client sent them; extra keys survive a round trip.
pub type NodeTaint = StringMap;

/// A row of `nodegroup`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeGroup {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    /// The cluster's uuid.
    pub cluster_id: String,
    pub project_id: String,
    pub docker_volume_size: Option<i32>,
    pub labels: Option<StringMap>,
    pub flavor_id: Option<String>,
    pub image_id: Option<String>,
    pub node_addresses: Option<Vec<String>>,
    pub node_count: Option<i32>,
    pub max_node_count: Option<i32>,
    pub min_node_count: Option<i32>,
    pub role: Option<String>,
    pub is_default: Option<bool>,
    pub stack_id: Option<String>,
    pub status: Option<Status>,
    pub status_reason: Option<String>,
    pub version: Option<String>,
    pub node_labels: Option<StringMap>,
    pub node_taints: Option<Vec<NodeTaint>>,
    pub created_at: NaiveDateTime,
    pub updated_at: Option<NaiveDateTime>,
}

/// A row of `x509keypair`: a certificate and its encrypted PKCS#8 private key
/// with the passphrase (`cert_manager_type = x509keypair`).
#[derive(Clone, Default, PartialEq)]
pub struct X509KeyPair {
    pub id: i64,
    pub uuid: String,
    pub project_id: String,
    pub user_id: String,
    pub certificate: Option<String>,
    pub private_key: Option<String>,
    pub intermediates: Option<String>,
    pub private_key_passphrase: Option<String>,
    pub created_at: NaiveDateTime,
    pub updated_at: Option<NaiveDateTime>,
}

impl std::fmt::Debug for X509KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("X509KeyPair")
            .field("id", &self.id)
            .field("uuid", &self.uuid)
            .field("project_id", &self.project_id)
            .field("user_id", &self.user_id)
            .field("certificate", &self.certificate.as_ref().map(|_| "<pem>"))
            .field(
                "private_key",
                &self.private_key.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "private_key_passphrase",
                &self.private_key_passphrase.as_ref().map(|_| "<redacted>"),
            )
            .finish_non_exhaustive()
    }
}

/// A row of `quotas`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Quota {
    pub id: i64,
    pub project_id: String,
    pub resource: String,
    pub hard_limit: i32,
    pub created_at: NaiveDateTime,
    pub updated_at: Option<NaiveDateTime>,
}

/// A row of `federation`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Federation {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub project_id: String,
    pub hostcluster_id: Option<String>,
    pub member_ids: Option<Vec<String>>,
    pub status: Option<Status>,
    pub status_reason: Option<String>,
    pub properties: Option<StringMap>,
    pub created_at: NaiveDateTime,
    pub updated_at: Option<NaiveDateTime>,
}

/// A row of `magnum_service`: the heartbeat of one conductor (or reconciler)
/// process.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MagnumService {
    pub id: i64,
    pub host: String,
    pub binary: String,
    pub report_count: i32,
    pub disabled: Option<bool>,
    pub disabled_reason: Option<String>,
    pub last_seen_up: Option<NaiveDateTime>,
    pub forced_down: Option<bool>,
    pub created_at: NaiveDateTime,
    pub updated_at: Option<NaiveDateTime>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go: `TestRowTypesZeroValues`. The row types are plain data; this
    /// guards the conventions the database layer relies on: a `None` JSON
    /// column is NULL, an `Option` is a nullable column.
    #[test]
    fn default_rows_have_null_nullable_columns() {
        let c = Cluster::default();
        assert!(
            c.labels.is_none()
                && c.health_status_reason.is_none()
                && c.updated_at.is_none()
                && c.status.is_none(),
            "{c:?}"
        );
        let ng = NodeGroup::default();
        assert!(
            ng.node_addresses.is_none()
                && ng.node_taints.is_none()
                && ng.node_labels.is_none()
                && ng.is_default.is_none(),
            "{ng:?}"
        );
        let taint: NodeTaint = [("key", "k"), ("value", "v"), ("effect", "NoSchedule")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(taint.get("effect").map(String::as_str), Some("NoSchedule"));
        assert_eq!(taint.len(), 3);
    }

    #[test]
    fn debug_of_a_key_pair_redacts_the_key_and_passphrase() {
        let kp = X509KeyPair {
            private_key: Some("-----BEGIN ENCRYPTED PRIVATE KEY-----secret".into()),
            private_key_passphrase: Some("hunter2".into()),
            ..Default::default()
        };
        let shown = format!("{kp:?}");
        assert!(
            !shown.contains("secret") && !shown.contains("hunter2"),
            "{shown}"
        );
    }
}
