//! Borrowed mirrors of the WIT records a call passes to a driver, so that
//! lowering the rows into the guest copies each string once (from the row
//! into guest memory) instead of cloning it first. wasmtime type-checks
//! them against the component's types when the function is looked up.

use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use wasmtime::component::{ComponentType, Lower};

use crate::bindings::v1_1::openkeel::magnum_driver::types as w;
use crate::convert::{status_to, to_micros};
use crate::types::ClusterState;

fn pairs(m: &StringMap) -> Vec<(&str, &str)> {
    m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn map_ref(m: &Option<StringMap>) -> Option<Vec<(&str, &str)>> {
    m.as_ref().map(pairs)
}

/// `cluster-template`, borrowed.
#[derive(ComponentType, Lower)]
#[component(record)]
pub(crate) struct TemplateRef<'a> {
    id: i64,
    uuid: &'a str,
    name: &'a str,
    #[component(name = "project-id")]
    project_id: &'a str,
    #[component(name = "user-id")]
    user_id: &'a str,
    #[component(name = "flavor-id")]
    flavor_id: Option<&'a str>,
    #[component(name = "master-flavor-id")]
    master_flavor_id: Option<&'a str>,
    #[component(name = "keypair-id")]
    keypair_id: Option<&'a str>,
    #[component(name = "image-id")]
    image_id: Option<&'a str>,
    #[component(name = "external-network-id")]
    external_network_id: Option<&'a str>,
    #[component(name = "fixed-network")]
    fixed_network: Option<&'a str>,
    #[component(name = "fixed-subnet")]
    fixed_subnet: Option<&'a str>,
    #[component(name = "network-driver")]
    network_driver: Option<&'a str>,
    #[component(name = "volume-driver")]
    volume_driver: Option<&'a str>,
    #[component(name = "dns-nameserver")]
    dns_nameserver: Option<&'a str>,
    #[component(name = "apiserver-port")]
    apiserver_port: Option<i32>,
    #[component(name = "docker-volume-size")]
    docker_volume_size: Option<i32>,
    #[component(name = "docker-storage-driver")]
    docker_storage_driver: Option<&'a str>,
    #[component(name = "cluster-distro")]
    cluster_distro: Option<&'a str>,
    coe: Option<&'a str>,
    #[component(name = "http-proxy")]
    http_proxy: Option<&'a str>,
    #[component(name = "https-proxy")]
    https_proxy: Option<&'a str>,
    #[component(name = "no-proxy")]
    no_proxy: Option<&'a str>,
    #[component(name = "registry-enabled")]
    registry_enabled: Option<bool>,
    labels: Option<Vec<(&'a str, &'a str)>>,
    #[component(name = "tls-disabled")]
    tls_disabled: Option<bool>,
    public: Option<bool>,
    #[component(name = "server-type")]
    server_type: Option<&'a str>,
    #[component(name = "insecure-registry")]
    insecure_registry: Option<&'a str>,
    #[component(name = "master-lb-enabled")]
    master_lb_enabled: Option<bool>,
    #[component(name = "floating-ip-enabled")]
    floating_ip_enabled: Option<bool>,
    hidden: Option<bool>,
    tags: Option<&'a str>,
    driver: Option<&'a str>,
    #[component(name = "created-at")]
    created_at: i64,
    #[component(name = "updated-at")]
    updated_at: Option<i64>,
}

pub(crate) fn template_ref(x: &ClusterTemplate) -> TemplateRef<'_> {
    TemplateRef {
        id: x.id,
        uuid: &x.uuid,
        name: &x.name,
        project_id: &x.project_id,
        user_id: &x.user_id,
        flavor_id: x.flavor_id.as_deref(),
        master_flavor_id: x.master_flavor_id.as_deref(),
        keypair_id: x.keypair_id.as_deref(),
        image_id: x.image_id.as_deref(),
        external_network_id: x.external_network_id.as_deref(),
        fixed_network: x.fixed_network.as_deref(),
        fixed_subnet: x.fixed_subnet.as_deref(),
        network_driver: x.network_driver.as_deref(),
        volume_driver: x.volume_driver.as_deref(),
        dns_nameserver: x.dns_nameserver.as_deref(),
        apiserver_port: x.apiserver_port,
        docker_volume_size: x.docker_volume_size,
        docker_storage_driver: x.docker_storage_driver.as_deref(),
        cluster_distro: x.cluster_distro.as_deref(),
        coe: x.coe.as_deref(),
        http_proxy: x.http_proxy.as_deref(),
        https_proxy: x.https_proxy.as_deref(),
        no_proxy: x.no_proxy.as_deref(),
        registry_enabled: x.registry_enabled,
        labels: map_ref(&x.labels),
        tls_disabled: x.tls_disabled,
        public: x.public,
        server_type: x.server_type.as_deref(),
        insecure_registry: x.insecure_registry.as_deref(),
        master_lb_enabled: x.master_lb_enabled,
        floating_ip_enabled: x.floating_ip_enabled,
        hidden: x.hidden,
        tags: x.tags.as_deref(),
        driver: x.driver.as_deref(),
        created_at: to_micros(x.created_at),
        updated_at: x.updated_at.map(to_micros),
    }
}

/// `cluster`, borrowed.
#[derive(ComponentType, Lower)]
#[component(record)]
pub(crate) struct ClusterRef<'a> {
    id: i64,
    uuid: &'a str,
    name: &'a str,
    #[component(name = "project-id")]
    project_id: &'a str,
    #[component(name = "user-id")]
    user_id: &'a str,
    #[component(name = "cluster-template-id")]
    cluster_template_id: &'a str,
    keypair: Option<&'a str>,
    #[component(name = "docker-volume-size")]
    docker_volume_size: Option<i32>,
    labels: Option<Vec<(&'a str, &'a str)>>,
    #[component(name = "master-flavor-id")]
    master_flavor_id: Option<&'a str>,
    #[component(name = "flavor-id")]
    flavor_id: Option<&'a str>,
    #[component(name = "stack-id")]
    stack_id: Option<&'a str>,
    #[component(name = "api-address")]
    api_address: Option<&'a str>,
    status: Option<w::Status>,
    #[component(name = "status-reason")]
    status_reason: Option<&'a str>,
    #[component(name = "health-status")]
    health_status: Option<&'a str>,
    #[component(name = "health-status-reason")]
    health_status_reason: Option<Vec<(&'a str, &'a str)>>,
    #[component(name = "create-timeout")]
    create_timeout: Option<i32>,
    #[component(name = "discovery-url")]
    discovery_url: Option<&'a str>,
    #[component(name = "coe-version")]
    coe_version: Option<&'a str>,
    #[component(name = "container-version")]
    container_version: Option<&'a str>,
    #[component(name = "ca-cert-ref")]
    ca_cert_ref: Option<&'a str>,
    #[component(name = "magnum-cert-ref")]
    magnum_cert_ref: Option<&'a str>,
    #[component(name = "etcd-ca-cert-ref")]
    etcd_ca_cert_ref: Option<&'a str>,
    #[component(name = "front-proxy-ca-cert-ref")]
    front_proxy_ca_cert_ref: Option<&'a str>,
    #[component(name = "fixed-network")]
    fixed_network: Option<&'a str>,
    #[component(name = "fixed-subnet")]
    fixed_subnet: Option<&'a str>,
    #[component(name = "floating-ip-enabled")]
    floating_ip_enabled: Option<bool>,
    #[component(name = "master-lb-enabled")]
    master_lb_enabled: Option<bool>,
    #[component(name = "created-at")]
    created_at: i64,
    #[component(name = "updated-at")]
    updated_at: Option<i64>,
}

pub(crate) fn cluster_ref(x: &Cluster) -> ClusterRef<'_> {
    ClusterRef {
        id: x.id,
        uuid: &x.uuid,
        name: &x.name,
        project_id: &x.project_id,
        user_id: &x.user_id,
        cluster_template_id: &x.cluster_template_id,
        keypair: x.keypair.as_deref(),
        docker_volume_size: x.docker_volume_size,
        labels: map_ref(&x.labels),
        master_flavor_id: x.master_flavor_id.as_deref(),
        flavor_id: x.flavor_id.as_deref(),
        stack_id: x.stack_id.as_deref(),
        api_address: x.api_address.as_deref(),
        status: x.status.map(status_to),
        status_reason: x.status_reason.as_deref(),
        health_status: x.health_status.as_deref(),
        health_status_reason: map_ref(&x.health_status_reason),
        create_timeout: x.create_timeout,
        discovery_url: x.discovery_url.as_deref(),
        coe_version: x.coe_version.as_deref(),
        container_version: x.container_version.as_deref(),
        ca_cert_ref: x.ca_cert_ref.as_deref(),
        magnum_cert_ref: x.magnum_cert_ref.as_deref(),
        etcd_ca_cert_ref: x.etcd_ca_cert_ref.as_deref(),
        front_proxy_ca_cert_ref: x.front_proxy_ca_cert_ref.as_deref(),
        fixed_network: x.fixed_network.as_deref(),
        fixed_subnet: x.fixed_subnet.as_deref(),
        floating_ip_enabled: x.floating_ip_enabled,
        master_lb_enabled: x.master_lb_enabled,
        created_at: to_micros(x.created_at),
        updated_at: x.updated_at.map(to_micros),
    }
}

/// `nodegroup`, borrowed.
#[derive(ComponentType, Lower)]
#[component(record)]
pub(crate) struct NodegroupRef<'a> {
    id: i64,
    uuid: &'a str,
    name: &'a str,
    #[component(name = "cluster-id")]
    cluster_id: &'a str,
    #[component(name = "project-id")]
    project_id: &'a str,
    #[component(name = "docker-volume-size")]
    docker_volume_size: Option<i32>,
    labels: Option<Vec<(&'a str, &'a str)>>,
    #[component(name = "flavor-id")]
    flavor_id: Option<&'a str>,
    #[component(name = "image-id")]
    image_id: Option<&'a str>,
    #[component(name = "node-addresses")]
    node_addresses: Option<&'a [String]>,
    #[component(name = "node-count")]
    node_count: Option<i32>,
    #[component(name = "max-node-count")]
    max_node_count: Option<i32>,
    #[component(name = "min-node-count")]
    min_node_count: Option<i32>,
    role: Option<&'a str>,
    #[component(name = "is-default")]
    is_default: Option<bool>,
    #[component(name = "stack-id")]
    stack_id: Option<&'a str>,
    status: Option<w::Status>,
    #[component(name = "status-reason")]
    status_reason: Option<&'a str>,
    version: Option<&'a str>,
    #[component(name = "node-labels")]
    node_labels: Option<Vec<(&'a str, &'a str)>>,
    #[component(name = "node-taints")]
    node_taints: Option<Vec<Vec<(&'a str, &'a str)>>>,
    #[component(name = "created-at")]
    created_at: i64,
    #[component(name = "updated-at")]
    updated_at: Option<i64>,
}

pub(crate) fn nodegroup_ref(x: &NodeGroup) -> NodegroupRef<'_> {
    NodegroupRef {
        id: x.id,
        uuid: &x.uuid,
        name: &x.name,
        cluster_id: &x.cluster_id,
        project_id: &x.project_id,
        docker_volume_size: x.docker_volume_size,
        labels: map_ref(&x.labels),
        flavor_id: x.flavor_id.as_deref(),
        image_id: x.image_id.as_deref(),
        node_addresses: x.node_addresses.as_deref(),
        node_count: x.node_count,
        max_node_count: x.max_node_count,
        min_node_count: x.min_node_count,
        role: x.role.as_deref(),
        is_default: x.is_default,
        stack_id: x.stack_id.as_deref(),
        status: x.status.map(status_to),
        status_reason: x.status_reason.as_deref(),
        version: x.version.as_deref(),
        node_labels: map_ref(&x.node_labels),
        node_taints: x
            .node_taints
            .as_ref()
            .map(|ts| ts.iter().map(pairs).collect()),
        created_at: to_micros(x.created_at),
        updated_at: x.updated_at.map(to_micros),
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
