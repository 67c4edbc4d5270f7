//! The rows of a new cluster as the conductor writes them before it calls
//! `create-cluster`, the callers, a small cloud, and how the conductor
//! saves an update.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, NaiveDateTime};
use driver_host::access::memory::MemoryOpenStack;
use driver_host::{CallContext, CloudInfo, ClusterState, Credentials, Image, Target, Update};
use magnum_domain::Status;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup};

/// The cluster of the fixtures.
pub const CLUSTER_UUID: &str = "5d12f6fd-a196-4bf0-ae4c-1f639a523a52";
/// Its default master and worker nodegroups.
pub const MASTER_UUID: &str = "a1c0d8c3-4f8e-4d0c-9d0b-6a3e6a0b9f01";
pub const WORKER_UUID: &str = "b2d1e9d4-5a9f-4e1d-8e1c-7b4f7b1ca012";
/// Its template.
pub const TEMPLATE_UUID: &str = "0b6c3a9e-2f41-4d57-9a0e-3c8d5e7f1a24";
/// The caller's project and user.
pub const PROJECT_ID: &str = "c1a5e0b8f9d24a3b8e6f7d1c2b3a4f50";
pub const USER_ID: &str = "e9b8a7c6d5f44e3d9c2b1a0f9e8d7c61";

/// The clock of the kit at its start: 2026-01-02T03:04:05Z.
pub fn start_time() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_323_045)
}

fn created() -> NaiveDateTime {
    DateTime::from_timestamp(1_767_323_045, 123_456_000)
        .map(|d| d.naive_utc())
        .unwrap_or_default()
}

/// A user's API request.
pub fn user() -> CallContext {
    CallContext {
        credentials: Credentials {
            auth_token: Some("testkit-token".into()),
            user_id: USER_ID.into(),
            project_id: PROJECT_ID.into(),
            service_catalog: None,
            admin: false,
        },
        request_id: "req-5e0c6d1a-8f7b-4c3d-9e2a-1b0f4d6c8a9e".into(),
        now: None,
    }
}

/// Background work (the status poll): the service's credentials.
pub fn admin() -> CallContext {
    CallContext {
        credentials: Credentials::admin(),
        request_id: String::new(),
        now: None,
    }
}

/// A cloud that knows the fixtures' image, flavors and network.
/// The cloud's configuration a kit's drivers see, unless its options say
/// otherwise: Keystone on the documentation's address, region `RegionOne`,
/// the public interface, TLS verified, and no CA bundle.
pub fn cloud_info() -> CloudInfo {
    CloudInfo {
        keystone_url: "https://keystone.example.test:5000/v3".into(),
        region: Some("RegionOne".into()),
        endpoint_interface: "public".into(),
        ca_bundle: None,
        verify: true,
        cluster_ca_bundle: None,
        cluster_verify_ca: true,
    }
}

pub fn cloud() -> MemoryOpenStack {
    let mut c = MemoryOpenStack::new();
    for f in ["m1.small", "m1.medium"] {
        c.flavors.insert(f.into(), f.into());
    }
    c.images.insert(
        "fedora-coreos".into(),
        Image {
            id: "3e2b6a1c-9d8f-4e7a-b6c5-d4e3f2a1b0c9".into(),
            disk_bus: None,
        },
    );
    c.networks.insert(
        "public".into(),
        "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d".into(),
    );
    c.load_balancers = Some(Vec::new());
    c.volume_types = Some(Vec::new());
    c
}

/// The rows of a new cluster of `target` using entry point `driver`, with
/// these labels on the template, the cluster and its nodegroups (as
/// Magnum copies them): one master, two workers, `CREATE_IN_PROGRESS`.
pub fn new_cluster(
    driver: &str,
    target: &Target,
    labels: &BTreeMap<String, String>,
) -> ClusterState {
    let labels = Some(labels.clone());
    let template = ClusterTemplate {
        id: 1,
        uuid: TEMPLATE_UUID.into(),
        name: "k8s-template".into(),
        project_id: PROJECT_ID.into(),
        user_id: USER_ID.into(),
        image_id: Some("fedora-coreos".into()),
        flavor_id: Some("m1.small".into()),
        master_flavor_id: Some("m1.medium".into()),
        external_network_id: Some("public".into()),
        coe: Some(target.coe.clone()),
        cluster_distro: Some(target.os.clone()),
        server_type: Some(target.server_type.clone()),
        network_driver: Some("calico".into()),
        driver: Some(driver.into()),
        labels: labels.clone(),
        tls_disabled: Some(false),
        public: Some(false),
        created_at: created(),
        ..Default::default()
    };
    let cluster = Cluster {
        id: 1,
        uuid: CLUSTER_UUID.into(),
        name: "testkit-cluster".into(),
        project_id: PROJECT_ID.into(),
        user_id: USER_ID.into(),
        cluster_template_id: TEMPLATE_UUID.into(),
        labels: labels.clone(),
        flavor_id: Some("m1.small".into()),
        master_flavor_id: Some("m1.medium".into()),
        status: Some(Status::CreateInProgress),
        create_timeout: Some(60),
        created_at: created(),
        updated_at: Some(created()),
        ..Default::default()
    };
    let ng = |id: i64, uuid: &str, name: &str, role: &str, count: i32, flavor: &str| NodeGroup {
        id,
        uuid: uuid.into(),
        name: name.into(),
        cluster_id: CLUSTER_UUID.into(),
        project_id: PROJECT_ID.into(),
        role: Some(role.into()),
        is_default: Some(true),
        node_count: Some(count),
        min_node_count: Some(if role == "master" { 1 } else { 0 }),
        flavor_id: Some(flavor.into()),
        image_id: Some("fedora-coreos".into()),
        labels: labels.clone(),
        status: Some(Status::CreateInProgress),
        created_at: created(),
        ..Default::default()
    };
    ClusterState {
        cluster,
        template,
        nodegroups: vec![
            ng(1, MASTER_UUID, "default-master", "master", 1, "m1.medium"),
            ng(2, WORKER_UUID, "default-worker", "worker", 2, "m1.small"),
        ],
    }
}

/// Saves an update into the rows, as the conductor does: full rows
/// replace (or, when new, join) the state, deleted nodegroups go.
pub fn save(st: &mut ClusterState, upd: &Update) {
    if let Some(c) = &upd.cluster {
        st.cluster = c.clone();
    }
    for ng in &upd.nodegroups {
        match st.nodegroups.iter_mut().find(|x| x.uuid == ng.uuid) {
            Some(x) => *x = ng.clone(),
            None => st.nodegroups.push(ng.clone()),
        }
    }
    st.nodegroups
        .retain(|x| !upd.deleted_nodegroups.contains(&x.uuid));
}

/// Moves every row of the state to `status`, as the conductor does before
/// an operation (`UPDATE_IN_PROGRESS` before an update, say).
pub fn set_status(st: &mut ClusterState, status: Status) {
    st.cluster.status = Some(status);
    for ng in &mut st.nodegroups {
        ng.status = Some(status);
    }
}
