//! Borrowed mirrors of the WIT records a call passes to a driver, so that
//! lowering the rows into the guest copies each string once (from the row
//! into guest memory) instead of cloning it first. wasmtime type-checks
//! them against the component's types when the function is looked up.

use chrono::NaiveDateTime;
use magnum_domain::Status;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use wasmtime::component::{ComponentType, Lower};

use crate::bindings::v1_1::openkeel::magnum_driver::types as w;
use crate::convert::{status_to, to_micros};
use crate::types::ClusterState;

/// A column of a row lent to a borrowed record as `T`: strings as `&str`,
/// string maps as lists of pairs, times as UTC microseconds.
trait LendAs<'a, T> {
    fn lend(&'a self) -> T;
}

/// Plain values are copied.
macro_rules! lend_copies {
    ($($t:ty),+) => {$(
        impl LendAs<'_, $t> for $t {
            fn lend(&self) -> $t {
                *self
            }
        }
    )+};
}

lend_copies!(i64, i32, bool);

impl<'a> LendAs<'a, &'a str> for String {
    fn lend(&'a self) -> &'a str {
        self
    }
}

impl<'a> LendAs<'a, &'a [String]> for Vec<String> {
    fn lend(&'a self) -> &'a [String] {
        self
    }
}

impl<'a> LendAs<'a, Vec<(&'a str, &'a str)>> for StringMap {
    fn lend(&'a self) -> Vec<(&'a str, &'a str)> {
        self.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }
}

impl LendAs<'_, w::Status> for Status {
    fn lend(&self) -> w::Status {
        status_to(*self)
    }
}

impl LendAs<'_, i64> for NaiveDateTime {
    fn lend(&self) -> i64 {
        to_micros(*self)
    }
}

impl<'a, T: LendAs<'a, U>, U> LendAs<'a, Option<U>> for Option<T> {
    fn lend(&'a self) -> Option<U> {
        self.as_ref().map(T::lend)
    }
}

impl<'a, T: LendAs<'a, U>, U> LendAs<'a, Vec<U>> for Vec<T> {
    fn lend(&'a self) -> Vec<U> {
        self.iter().map(T::lend).collect()
    }
}

/// Declares a borrowed record and the function that lends a row to it:
/// each field is `"wit-name" field: Type` (the WIT name where it is not
/// the field's), filled from the row's column of the same name.
macro_rules! borrowed_record {
    (
        $(#[$doc:meta])*
        $name:ident of $row:ty, by $lend:ident {
            $($($wit:literal)? $field:ident: $ty:ty,)+
        }
    ) => {
        $(#[$doc])*
        #[derive(ComponentType, Lower)]
        #[component(record)]
        pub(crate) struct $name<'a> {
            $($(#[component(name = $wit)])? $field: $ty,)+
        }

        pub(crate) fn $lend(x: &$row) -> $name<'_> {
            $name {
                $($field: LendAs::lend(&x.$field),)+
            }
        }
    };
}

borrowed_record! {
    /// `cluster-template`, borrowed.
    TemplateRef of ClusterTemplate, by template_ref {
        id: i64,
        uuid: &'a str,
        name: &'a str,
        "project-id" project_id: &'a str,
        "user-id" user_id: &'a str,
        "flavor-id" flavor_id: Option<&'a str>,
        "master-flavor-id" master_flavor_id: Option<&'a str>,
        "keypair-id" keypair_id: Option<&'a str>,
        "image-id" image_id: Option<&'a str>,
        "external-network-id" external_network_id: Option<&'a str>,
        "fixed-network" fixed_network: Option<&'a str>,
        "fixed-subnet" fixed_subnet: Option<&'a str>,
        "network-driver" network_driver: Option<&'a str>,
        "volume-driver" volume_driver: Option<&'a str>,
        "dns-nameserver" dns_nameserver: Option<&'a str>,
        "apiserver-port" apiserver_port: Option<i32>,
        "docker-volume-size" docker_volume_size: Option<i32>,
        "docker-storage-driver" docker_storage_driver: Option<&'a str>,
        "cluster-distro" cluster_distro: Option<&'a str>,
        coe: Option<&'a str>,
        "http-proxy" http_proxy: Option<&'a str>,
        "https-proxy" https_proxy: Option<&'a str>,
        "no-proxy" no_proxy: Option<&'a str>,
        "registry-enabled" registry_enabled: Option<bool>,
        labels: Option<Vec<(&'a str, &'a str)>>,
        "tls-disabled" tls_disabled: Option<bool>,
        public: Option<bool>,
        "server-type" server_type: Option<&'a str>,
        "insecure-registry" insecure_registry: Option<&'a str>,
        "master-lb-enabled" master_lb_enabled: Option<bool>,
        "floating-ip-enabled" floating_ip_enabled: Option<bool>,
        hidden: Option<bool>,
        tags: Option<&'a str>,
        driver: Option<&'a str>,
        "created-at" created_at: i64,
        "updated-at" updated_at: Option<i64>,
    }
}

borrowed_record! {
    /// `cluster`, borrowed.
    ClusterRef of Cluster, by cluster_ref {
        id: i64,
        uuid: &'a str,
        name: &'a str,
        "project-id" project_id: &'a str,
        "user-id" user_id: &'a str,
        "cluster-template-id" cluster_template_id: &'a str,
        keypair: Option<&'a str>,
        "docker-volume-size" docker_volume_size: Option<i32>,
        labels: Option<Vec<(&'a str, &'a str)>>,
        "master-flavor-id" master_flavor_id: Option<&'a str>,
        "flavor-id" flavor_id: Option<&'a str>,
        "stack-id" stack_id: Option<&'a str>,
        "api-address" api_address: Option<&'a str>,
        status: Option<w::Status>,
        "status-reason" status_reason: Option<&'a str>,
        "health-status" health_status: Option<&'a str>,
        "health-status-reason" health_status_reason: Option<Vec<(&'a str, &'a str)>>,
        "create-timeout" create_timeout: Option<i32>,
        "discovery-url" discovery_url: Option<&'a str>,
        "coe-version" coe_version: Option<&'a str>,
        "container-version" container_version: Option<&'a str>,
        "ca-cert-ref" ca_cert_ref: Option<&'a str>,
        "magnum-cert-ref" magnum_cert_ref: Option<&'a str>,
        "etcd-ca-cert-ref" etcd_ca_cert_ref: Option<&'a str>,
        "front-proxy-ca-cert-ref" front_proxy_ca_cert_ref: Option<&'a str>,
        "fixed-network" fixed_network: Option<&'a str>,
        "fixed-subnet" fixed_subnet: Option<&'a str>,
        "floating-ip-enabled" floating_ip_enabled: Option<bool>,
        "master-lb-enabled" master_lb_enabled: Option<bool>,
        "created-at" created_at: i64,
        "updated-at" updated_at: Option<i64>,
    }
}

borrowed_record! {
    /// `nodegroup`, borrowed.
    NodegroupRef of NodeGroup, by nodegroup_ref {
        id: i64,
        uuid: &'a str,
        name: &'a str,
        "cluster-id" cluster_id: &'a str,
        "project-id" project_id: &'a str,
        "docker-volume-size" docker_volume_size: Option<i32>,
        labels: Option<Vec<(&'a str, &'a str)>>,
        "flavor-id" flavor_id: Option<&'a str>,
        "image-id" image_id: Option<&'a str>,
        "node-addresses" node_addresses: Option<&'a [String]>,
        "node-count" node_count: Option<i32>,
        "max-node-count" max_node_count: Option<i32>,
        "min-node-count" min_node_count: Option<i32>,
        role: Option<&'a str>,
        "is-default" is_default: Option<bool>,
        "stack-id" stack_id: Option<&'a str>,
        status: Option<w::Status>,
        "status-reason" status_reason: Option<&'a str>,
        version: Option<&'a str>,
        "node-labels" node_labels: Option<Vec<(&'a str, &'a str)>>,
        "node-taints" node_taints: Option<Vec<Vec<(&'a str, &'a str)>>>,
        "created-at" created_at: i64,
        "updated-at" updated_at: Option<i64>,
    }
}

/// `cluster-state`, borrowed.
#[derive(ComponentType, Lower)]
#[component(record)]
pub(crate) struct StateRef<'a> {
    cluster: ClusterRef<'a>,
    template: TemplateRef<'a>,
    nodegroups: Vec<NodegroupRef<'a>>,
}

pub(crate) fn state_ref(st: &ClusterState) -> StateRef<'_> {
    StateRef {
        cluster: cluster_ref(&st.cluster),
        template: template_ref(&st.template),
        nodegroups: st.nodegroups.iter().map(nodegroup_ref).collect(),
    }
}
