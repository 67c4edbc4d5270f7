//! A driver that misbehaves on purpose, for the driver host's sandbox
//! tests. The option `mode` chooses what every export but `describe` does:
//!
//! - `ok`: answers at once (an empty update, `Ok`);
//! - `loop`: never returns;
//! - `alloc`: allocates 1 GiB;
//! - `panic`: panics (`panic-describe` panics in `describe` too);
//! - `big`: answers a `status_reason` of `big_bytes` bytes (default 8 MiB);
//! - `kube`: applies the object the cluster's labels describe (`kind`,
//!   `api_version`, `namespace`, `name`, `body_name`) and answers the
//!   host's refusal as `failed`;
//! - `openstack`: resolves the flavor named by the label `flavor`;
//! - `secrets`: reads the cluster's CAs;
//! - `log`: logs (through the import, the `log` crate and `tracing`),
//!   prints to stdout and stderr, then answers.

use openkeel_magnum_driver::prelude::*;
use openkeel_magnum_driver::{config, kube, logging, openstack, secrets};

#[derive(Default)]
struct Sandbox;

register_driver!(Sandbox);

fn mode() -> String {
    config::get("mode").unwrap_or_else(|| "ok".to_string())
}

fn empty() -> Update {
    Update {
        cluster: None,
        nodegroups: vec![],
        deleted_nodegroups: vec![],
    }
}

#[inline(never)]
fn spin() -> ! {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

/// Runs the misbehaviour of the configured mode; `Ok(update)` when the mode
/// answers normally.
fn behave(cluster: Option<&Cluster>) -> Result<Update, DriverError> {
    match mode().as_str() {
        "loop" => spin(),
        "alloc" => {
            let mut v: Vec<u8> = Vec::with_capacity(1 << 30);
            v.resize(1 << 30, 1);
            Ok(Update {
                deleted_nodegroups: vec![format!("{}", v[v.len() / 2])],
                ..empty()
            })
        }
        "panic" | "panic-describe" => panic!("sandbox component: panic on purpose"),
        "big" => {
            let n = config::get("big_bytes")
                .and_then(|v| v.parse().ok())
                .unwrap_or(8usize << 20);
            let mut cl = cluster.cloned().unwrap_or_default();
            cl.status_reason = Some("x".repeat(n));
            Ok(Update {
                cluster: Some(cl),
                ..empty()
            })
        }
        "kube" => {
            let Some(cl) = cluster else {
                return Ok(empty());
            };
            let get = |k: &str, d: &str| cl.label(k).unwrap_or(d).to_string();
            let namespace = get("namespace", "magnum-system");
            let name = get("name", "obj");
            let body_name = get("body_name", &name);
            let api_version = get("api_version", "v1");
            let kind = get("kind", "ConfigMap");
            let obj = K8sObject {
                api_version: api_version.clone(),
                kind: kind.clone(),
                namespace: Some(namespace.clone()),
                name,
                json: format!(
                    r#"{{"apiVersion":"{api_version}","kind":"{kind}","metadata":{{"name":"{body_name}","namespace":"{namespace}"}},"data":{{"k":"v"}}}}"#
                ),
            };
            match kube::apply(&obj) {
                Ok(live) => Ok(Update {
                    deleted_nodegroups: vec![live.name],
                    ..empty()
                }),
                Err(e) => Err(DriverError::Failed(format!("{e:?}"))),
            }
        }
        "openstack" => {
            let flavor = cluster
                .and_then(|c| c.label("flavor").map(str::to_string))
                .unwrap_or_default();
            match openstack::resolve_flavor_name(&flavor) {
                Ok(name) => Ok(Update {
                    deleted_nodegroups: vec![name],
                    ..empty()
                }),
                Err(e) => Err(DriverError::Failed(format!("{e:?}"))),
            }
        }
        "secrets" => match secrets::cas() {
            Ok(cas) => Ok(Update {
                deleted_nodegroups: vec![cas.kubernetes.cert_pem],
                ..empty()
            }),
            Err(e) => Err(DriverError::Failed(format!("{e:?}"))),
        },
        "log" => {
            logging::write(
                logging::Level::Info,
                "sandbox component: hello",
                &[("k", "v")],
            );
            openkeel_magnum_driver::log::info!("sandbox component: through log");
            let _span =
                openkeel_magnum_driver::tracing::info_span!("phase", step = "one").entered();
            openkeel_magnum_driver::tracing::warn!(k2 = "v2", "sandbox component: through tracing");
            println!("sandbox component: stdout line");
            eprintln!("sandbox component: stderr line");
            Ok(empty())
        }
        _ => Ok(empty()),
    }
}

fn unit(r: Result<Update, DriverError>) -> Result<(), DriverError> {
    r.map(|_| ())
}

impl Driver for Sandbox {
    fn describe(&self) -> Vec<EntryPoint> {
        if mode() == "panic-describe" {
            panic!("sandbox component: panic in describe");
        }
        let name = config::get("entry_point").unwrap_or_else(|| "sandbox".to_string());
        vec![EntryPoint {
            name,
            beta: false,
            provides: vec![Target {
                server_type: "vm".to_string(),
                os: "sandbox".to_string(),
                coe: "kubernetes".to_string(),
            }],
            description: "Misbehaves on purpose".to_string(),
        }]
    }

    fn validate_master_size(&self, _e: &str, _count: i32) -> Result<(), DriverError> {
        unit(behave(None))
    }

    fn validate_master_resize(&self, _e: &str, _count: i32) -> Result<(), DriverError> {
        unit(behave(None))
    }

    fn validate_create(&self, _ctx: &CallContext, st: &ClusterState) -> Result<(), DriverError> {
        unit(behave(Some(&st.cluster)))
    }

    fn validate_upgrade(
        &self,
        _ctx: &CallContext,
        st: &ClusterState,
        _t: &ClusterTemplate,
    ) -> Result<(), DriverError> {
        unit(behave(Some(&st.cluster)))
    }

    fn can_rotate_ca(&self, _ctx: &CallContext, st: &ClusterState) -> Result<(), DriverError> {
        unit(behave(Some(&st.cluster)))
    }

    fn create_cluster(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _t: u32,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn update_cluster(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn delete_cluster(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn resize_cluster(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _r: Resize,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn upgrade_cluster(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _u: Upgrade,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn create_nodegroup(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _n: NodeGroup,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn update_nodegroup(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _n: NodeGroup,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn delete_nodegroup(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _n: NodeGroup,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn rotate_ca(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn rotate_credential(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }

    fn watches(&self, _c: &CallContext, st: &ClusterState) -> Vec<Selector> {
        match behave(Some(&st.cluster)) {
            Ok(_) | Err(_) => Vec::new(),
        }
    }
    fn derive_status(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _o: Vec<K8sObject>,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn poll_status(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
}
