//! Native tests of a driver: `cargo test` on the build machine, without
//! the host. Outside WebAssembly the `kube`, `config`, `state` and log
//! imports answer from an in-memory world local to the test's thread
//! (each test starts with an empty one); `openstack` and `secrets` answer
//! `unavailable` (test those in the real host, with
//! `openkeel-magnum-driver-testkit`).
//!
//! ```ignore
//! use openkeel_magnum_driver::testing;
//!
//! #[test]
//! fn create_declares_the_config_map() {
//!     testing::set_option("default_cni", "calico");
//!     let upd = MyDriver.create_cluster(&CallContext::default(), state(), 60).unwrap();
//!     assert_eq!(testing::objects().len(), 1);
//! }
//! ```
//!
//! The in-memory Kubernetes stores each applied object whole (no merging
//! by field manager) and lists by the labels of its `metadata.labels`.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::logging::Level;
use crate::types::{K8sObject, ObjectRef};

/// One logged record: level, message and fields.
pub type LogRecord = (Level, String, Vec<(String, String)>);

#[derive(Default)]
struct World {
    options: BTreeMap<String, String>,
    files: BTreeMap<String, String>,
    state: BTreeMap<String, String>,
    objects: BTreeMap<ObjectRef, K8sObject>,
    logs: Vec<LogRecord>,
    max_level: Option<Level>,
    /// Kinds the in-memory Kubernetes does not serve, as
    /// `api-version/kind`.
    unserved: Vec<String>,
    #[cfg(feature = "contract-1-1")]
    cloud: Option<crate::host::cloud::CloudInfo>,
}

thread_local! {
    static WORLD: RefCell<World> = RefCell::new(World::default());
}

fn with<T>(f: impl FnOnce(&mut World) -> T) -> T {
    WORLD.with(|w| f(&mut w.borrow_mut()))
}

/// Empties the world of this thread.
pub fn reset() {
    with(|w| *w = World::default());
}

/// Sets one of the driver's options (what `config::get` answers).
pub fn set_option(key: &str, value: &str) {
    with(|w| w.options.insert(key.to_string(), value.to_string()));
}

/// Makes a granted file readable by `config::read_file`.
pub fn set_file(path: &str, text: &str) {
    with(|w| w.files.insert(path.to_string(), text.to_string()));
}

/// Puts an object in the in-memory Kubernetes, as if someone else had.
pub fn put_object(obj: K8sObject) {
    with(|w| w.objects.insert(obj.reference(), obj));
}

/// The objects in the in-memory Kubernetes, in reference order.
pub fn objects() -> Vec<K8sObject> {
    with(|w| w.objects.values().cloned().collect())
}

/// What the driver keeps with `state::set`.
pub fn state() -> BTreeMap<String, String> {
    with(|w| w.state.clone())
}

/// The records logged so far: level, message and fields.
pub fn logs() -> Vec<LogRecord> {
    with(|w| w.logs.clone())
}

/// Stops serving `kind` of `api_version`, as a management cluster
/// without that provider: `kube::served` answers `false` and
/// [`snapshot`] observes it unserved.
pub fn unserve(api_version: &str, kind: &str) {
    with(|w| w.unserved.push(format!("{api_version}/{kind}")));
}

/// What the host would hand `derive` for `selectors`: each one's objects
/// in the in-memory Kubernetes (sorted by namespace and name), served
/// unless [`unserve`]d, and synced.
pub fn snapshot(selectors: &[crate::types::Selector]) -> Vec<crate::types::Observation> {
    selectors
        .iter()
        .map(|sel| {
            let served = served(&sel.api_version, &sel.kind);
            let labels: Vec<(String, String)> = sel
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let objects = if served {
                list(
                    &sel.api_version,
                    &sel.kind,
                    sel.namespace.as_deref(),
                    &labels,
                )
            } else {
                Vec::new()
            };
            crate::types::Observation {
                selector: sel.clone(),
                served,
                synced: true,
                objects,
            }
        })
        .collect()
}

/// The cloud's configuration `cloud::info` answers (contract 1.1; by
/// default Keystone on an example address, region `RegionOne`, the public
/// interface, TLS verified, no CA bundle).
#[cfg(feature = "contract-1-1")]
pub fn set_cloud(info: crate::host::cloud::CloudInfo) {
    with(|w| w.cloud = Some(info));
}

#[cfg(feature = "contract-1-1")]
pub(crate) fn cloud() -> crate::host::cloud::CloudInfo {
    with(|w| w.cloud.clone()).unwrap_or_else(|| crate::host::cloud::CloudInfo {
        keystone_url: "https://keystone.example.test:5000/v3".into(),
        region: Some("RegionOne".into()),
        endpoint_interface: "public".into(),
        ca_bundle: None,
        verify: true,
        cluster_ca_bundle: None,
        cluster_verify_ca: true,
    })
}

pub(crate) fn served(api_version: &str, kind: &str) -> bool {
    with(|w| !w.unserved.contains(&format!("{api_version}/{kind}")))
}

/// The most verbose level kept (default: every level).
pub fn set_max_level(level: Level) {
    with(|w| w.max_level = Some(level));
}

pub(crate) fn option(key: &str) -> Option<String> {
    with(|w| w.options.get(key).cloned())
}

pub(crate) fn options() -> Vec<(String, String)> {
    with(|w| {
        w.options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    })
}

pub(crate) fn file(path: &str) -> Option<String> {
    with(|w| w.files.get(path).cloned())
}

pub(crate) fn state_get(key: &str) -> Option<String> {
    with(|w| w.state.get(key).cloned())
}

pub(crate) fn state_set(key: &str, value: &str) {
    with(|w| w.state.insert(key.to_string(), value.to_string()));
}

pub(crate) fn state_remove(key: &str) {
    with(|w| w.state.remove(key));
}

pub(crate) fn state_clear() {
    with(|w| w.state.clear());
}

pub(crate) fn apply(obj: K8sObject) -> K8sObject {
    with(|w| w.objects.insert(obj.reference(), obj.clone()));
    obj
}

pub(crate) fn get(r: &ObjectRef) -> Option<K8sObject> {
    with(|w| w.objects.get(r).cloned())
}

pub(crate) fn delete(r: &ObjectRef) -> bool {
    with(|w| w.objects.remove(r).is_some())
}

/// The objects of this kind and namespace carrying every label.
pub(crate) fn list(
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    labels: &[(String, String)],
) -> Vec<K8sObject> {
    with(|w| {
        w.objects
            .values()
            .filter(|o| {
                o.api_version == api_version
                    && o.kind == kind
                    && o.namespace.as_deref() == namespace
            })
            .filter(|o| {
                let v: serde_json::Value = serde_json::from_str(&o.json).unwrap_or_default();
                labels.iter().all(|(k, val)| {
                    v.get("metadata")
                        .and_then(|m| m.get("labels"))
                        .and_then(|l| l.get(k))
                        .and_then(|x| x.as_str())
                        == Some(val.as_str())
                })
            })
            .cloned()
            .collect()
    })
}

pub(crate) fn log(level: Level, message: &str, fields: Vec<(String, String)>) {
    with(|w| w.logs.push((level, message.to_string(), fields)));
}

pub(crate) fn max_level() -> Level {
    with(|w| w.max_level.unwrap_or(Level::Trace))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{config, kube, state as st};
    use crate::types::{Labels, Selector};

    fn cm(name: &str, cluster: &str) -> K8sObject {
        K8sObject {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("ns".into()),
            name: name.into(),
            json: format!(r#"{{"metadata":{{"name":"{name}","labels":{{"c":"{cluster}"}}}}}}"#),
        }
    }

    #[test]
    fn the_imports_answer_from_the_threads_world() {
        reset();
        set_option("k", "v");
        assert_eq!(config::get("k").as_deref(), Some("v"));
        assert_eq!(config::get("missing"), None);
        assert!(config::read_file("f").is_err());
        set_file("f", "text");
        assert_eq!(config::read_file("f").ok().as_deref(), Some("text"));

        assert_eq!(st::set("a", "1"), Ok(()));
        assert_eq!(st::get("a").as_deref(), Some("1"));
        st::remove("a");
        assert!(state().is_empty());

        assert_eq!(
            kube::apply(&cm("x", "1")).map(|o| o.name),
            Ok("x".to_string())
        );
        put_object(cm("y", "2"));
        let sel = Selector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("ns".into()),
            labels: Labels::new().with("c", "2"),
        };
        let names: Vec<String> = kube::list(&sel)
            .unwrap_or_default()
            .into_iter()
            .map(|o| o.name)
            .collect();
        assert_eq!(names, ["y"]);
        assert_eq!(kube::delete(&cm("x", "1").reference()), Ok(true));
        assert_eq!(kube::delete(&cm("x", "1").reference()), Ok(false));
        assert_eq!(objects().len(), 1);

        crate::logging::write(Level::Info, "hello", &[("k", "v")]);
        assert_eq!(
            logs(),
            [(
                Level::Info,
                "hello".to_string(),
                vec![("k".to_string(), "v".to_string())]
            )]
        );
        reset();
        assert!(objects().is_empty() && logs().is_empty());
    }
    /// Natively there is no OpenStack and no certificate store: every call
    /// answers `unavailable` (a driver's error path), never a panic.
    #[test]
    fn openstack_and_secrets_answer_unavailable() {
        use crate::host::{openstack as os, secrets};
        let unavailable = |r: Result<(), crate::HostError>| match r {
            Err(crate::HostError::Unavailable(m)) => m,
            other => panic!("not unavailable: {other:?}"),
        };
        let msg = unavailable(os::resolve_flavor_name("m1.small").map(|_| ()));
        assert_eq!(msg, "no OpenStack is configured on this host");
        unavailable(os::resolve_image("img").map(|_| ()));
        unavailable(os::resolve_network_id("net").map(|_| ()));
        unavailable(os::resolve_subnet_id("sub").map(|_| ()));
        unavailable(os::ensure_server_group("g", "anti-affinity").map(|_| ()));
        unavailable(os::delete_server_group("g"));
        unavailable(os::create_application_credential("n", "d").map(|_| ()));
        unavailable(os::delete_application_credential("u", "i"));
        unavailable(os::load_balancers("p").map(|_| ()));
        let lb = os::LoadBalancer {
            id: "lb".into(),
            name: "n".into(),
            description: String::new(),
            project_id: "p".into(),
            provisioning_status: "ACTIVE".into(),
            vip_port_id: "port".into(),
        };
        unavailable(os::delete_load_balancer(&lb));
        unavailable(os::volume_types().map(|_| ()));
        let msg = unavailable(secrets::cas().map(|_| ()));
        assert_eq!(
            msg,
            "no cluster certificate store is configured on this host"
        );
        // `?` in a driver turns it into a failure with the host's text.
        let e = crate::DriverError::from(crate::HostError::Unavailable(msg));
        assert!(e.to_string().contains("unavailable"), "{e}");
    }

    /// What the host hands `derive`, natively: each selector's objects,
    /// served unless unserved, synced; and the default `derive` waits for
    /// every selector to be synced.
    #[test]
    fn snapshots_and_the_default_derive() {
        use crate::types::{CallContext, ClusterState, Observation, Update};
        use crate::{Driver, DriverError, EntryPoint};

        struct D;
        impl Driver for D {
            fn describe(&self) -> Vec<EntryPoint> {
                Vec::new()
            }
            fn derive_status(
                &self,
                _ctx: &CallContext,
                st: ClusterState,
                observed: Vec<K8sObject>,
            ) -> Result<Update, DriverError> {
                let mut cl = st.cluster;
                cl.status_reason = Some(format!("{} objects", observed.len()));
                Ok(Update::cluster(cl))
            }
        }

        reset();
        put_object(cm("a", "1"));
        put_object(cm("b", "1"));
        put_object(cm("c", "2"));
        let sel = |c: &str| Selector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("ns".into()),
            labels: Labels::new().with("c", c),
        };
        let snap = snapshot(&[sel("1"), sel("2")]);
        let names: Vec<Vec<String>> = snap
            .iter()
            .map(|o| o.objects.iter().map(|o| o.name.clone()).collect())
            .collect();
        assert_eq!(names, [vec!["a", "b"], vec!["c"]]);
        assert!(snap.iter().all(|o| o.served && o.synced));
        unserve("v1", "ConfigMap");
        assert!(
            snapshot(&[sel("1")])
                .iter()
                .all(|o| !o.served && o.objects.is_empty())
        );

        let derived = |snap: Vec<Observation>| {
            D.derive(&CallContext::default(), ClusterState::default(), snap)
                .map(|a| a.update.cluster.and_then(|c| c.status_reason))
        };
        assert_eq!(derived(snap.clone()), Ok(Some("3 objects".to_string())));
        let mut unsynced = snap;
        unsynced[1].synced = false;
        assert_eq!(
            derived(unsynced),
            Ok(None),
            "a copy still filling says nothing"
        );
        reset();
    }

    #[cfg(feature = "contract-1-1")]
    #[test]
    fn the_cloud_and_served_kinds_answer_from_the_threads_world() {
        use crate::host::{cloud, kube};
        reset();
        assert!(cloud::info().verify);
        set_cloud(cloud::CloudInfo {
            keystone_url: "https://keystone.test/v3".into(),
            ..cloud::CloudInfo::default()
        });
        assert_eq!(cloud::info().keystone_url, "https://keystone.test/v3");
        assert_eq!(kube::served("v1", "ConfigMap"), Ok(true));
        unserve("v1", "ConfigMap");
        assert_eq!(kube::served("v1", "ConfigMap"), Ok(false));
        reset();
    }
}
