//! Shared helpers: starting hosts, rows, and the fake driver's derived
//! names, recomputed here as the fake driver documents them.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use chrono::NaiveDate;
use driver_host::clock::ManualClock;
use driver_host::{
    CallContext, ClusterState, Credentials, DriverConfig, DriverHost, DriverSettings, HostServices,
    PackageSource, Update,
};
use magnum_domain::Status;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use sha1::{Digest, Sha1};

/// One precompiled cache for every host the tests start, so that each
/// component is compiled once per test run.
pub fn cache_dir() -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("tempdir: {e}"),
    })
    .path()
    .to_path_buf()
}

pub fn settings() -> DriverSettings {
    DriverSettings {
        precompiled_cache_dir: Some(cache_dir()),
        enabled_beta_drivers: vec!["fake".into()],
        ..Default::default()
    }
}

/// A host with the built-in drivers, the fake's `delay_seconds` and a
/// manual clock.
pub async fn fake_host(clock: &Arc<ManualClock>, delay_seconds: u64) -> DriverHost {
    let mut s = settings();
    s.drivers.insert(
        "fake".into(),
        DriverConfig {
            options: [("delay_seconds".to_string(), delay_seconds.to_string())].into(),
            ..Default::default()
        },
    );
    let services = HostServices {
        clock: clock.clone(),
        ..Default::default()
    };
    match DriverHost::start(s, services).await {
        Ok(h) => h,
        Err(e) => panic!("start: {e}"),
    }
}

/// A host with exactly these packages.
pub async fn host_with(
    settings: DriverSettings,
    services: HostServices,
    sources: Vec<PackageSource>,
) -> DriverHost {
    match DriverHost::start_with(settings, services, sources).await {
        Ok(h) => h,
        Err(e) => panic!("start: {e}"),
    }
}

pub fn start_time() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_323_045) // 2026-01-02T03:04:05Z
}

pub fn user() -> CallContext {
    CallContext {
        credentials: Credentials {
            auth_token: Some("tok".into()),
            user_id: "u1".into(),
            project_id: "p1".into(),
            service_catalog: None,
            admin: false,
        },
        request_id: "req-1".into(),
        now: None,
    }
}

pub fn labels(pairs: &[(&str, &str)]) -> Option<StringMap> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

pub fn created() -> chrono::NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 1, 2)
        .and_then(|d| d.and_hms_micro_opt(3, 4, 5, 123_456))
        .unwrap_or_default()
}

pub const CLUSTER_UUID: &str = "5d12f6fd-a196-4bf0-ae4c-1f639a523a52";
pub const MASTER_UUID: &str = "a1c0d8c3-4f8e-4d0c-9d0b-6a3e6a0b9f01";
pub const WORKER_UUID: &str = "b2d1e9d4-5a9f-4e1d-8e1c-7b4f7b1ca012";

/// The rows of a new cluster: the Go tests' world.
pub fn state(c_uuid: &str, m_uuid: &str, w_uuid: &str, l: Option<StringMap>) -> ClusterState {
    let template = ClusterTemplate {
        uuid: "tmpl-1".into(),
        name: "k8s".into(),
        image_id: Some("img-1".into()),
        coe: Some("kubernetes".into()),
        cluster_distro: Some("ubuntu".into()),
        server_type: Some("vm".into()),
        driver: Some("fake".into()),
        labels: labels(&[("kube_tag", "v1.30.4")]),
        created_at: created(),
        ..Default::default()
    };
    let cluster = Cluster {
        uuid: c_uuid.into(),
        name: "c1".into(),
        project_id: "p1".into(),
        cluster_template_id: template.uuid.clone(),
        labels: l.clone(),
        status: Some(Status::CreateInProgress),
        created_at: created(),
        updated_at: Some(created()),
        ..Default::default()
    };
    let ng = |uuid: &str, name: &str, role: &str, count: i32| NodeGroup {
        uuid: uuid.into(),
        name: name.into(),
        cluster_id: c_uuid.into(),
        project_id: "p1".into(),
        role: Some(role.into()),
        is_default: Some(true),
        node_count: Some(count),
        min_node_count: Some(0),
        image_id: Some("img-1".into()),
        labels: l.clone(),
        status: Some(Status::CreateInProgress),
        created_at: created(),
        ..Default::default()
    };
    ClusterState {
        cluster,
        template,
        nodegroups: vec![
            ng(m_uuid, "default-master", "master", 1),
            ng(w_uuid, "default-worker", "worker", 2),
        ],
    }
}

/// Saves an update into the rows, as the conductor does.
pub fn apply(st: &mut ClusterState, upd: &Update) {
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

fn sha1(data: &[u8]) -> [u8; 20] {
    Sha1::digest(data).into()
}

/// The fake stack_id: "kube-" and five base-36 digits of SHA-1("stack/"+uuid).
pub fn stack_id(cluster_uuid: &str) -> String {
    let sum = sha1(format!("stack/{cluster_uuid}").as_bytes());
    let mut n = u64::from_be_bytes([
        sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6], sum[7],
    ]);
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut s = String::from("kube-");
    for _ in 0..5 {
        s.push(digits[(n % 36) as usize] as char);
        n /= 36;
    }
    s
}

fn fake_ip(key: &str) -> String {
    let sum = sha1(format!("ip/{key}").as_bytes());
    format!("10.{}.{}.{}", sum[0], sum[1], 1 + u32::from(sum[2]) % 254)
}

/// A simulated node, as the Go fake driver's NodeOf.
pub struct Node {
    pub name: String,
    pub server_id: String,
    pub address: String,
}

pub fn node_of(cl: &Cluster, ng: &NodeGroup, index: i32) -> Node {
    let key = format!("{}/{}/{index}", cl.uuid, ng.name);
    let ns = uuid::Uuid::parse_str("6f3e4b0a-5c1d-4e58-9a57-0b7f7e1d9c42").unwrap_or_default();
    Node {
        name: format!("{}-{}-{index}", stack_id(&cl.uuid), ng.name),
        server_id: uuid::Uuid::new_v5(&ns, key.as_bytes()).to_string(),
        address: fake_ip(&key),
    }
}

pub fn api_address(cluster_uuid: &str) -> String {
    format!("https://{}:6443", fake_ip(&format!("{cluster_uuid}/api")))
}
