//! A driver that misbehaves on purpose, for the driver host's sandbox
//! tests and the hostile-driver suite. The option `mode` chooses what every
//! export but `describe` does; with the option `mode_in` (a comma-separated
//! list of function names, `poll-status,create-cluster`) only those
//! functions misbehave and the others behave as a plain driver would
//! (a create moves nothing, a status poll completes what is in progress).
//!
//! - `ok`: answers at once (an empty update, `Ok`);
//! - `loop`: never returns;
//! - `alloc`: allocates 1 GiB;
//! - `alloc-max`: fills its memory up to its limit, 16 MiB at a time, then
//!   answers a client error saying how much it filled;
//! - `panic`: panics (`panic-describe` panics in `describe` too);
//! - `big`: answers a `status_reason` of `big_bytes` bytes (default 8 MiB);
//! - `big-error`: answers a client error of `big_bytes` bytes;
//! - `refuse`: answers a 400 naming the cluster's label `refused` when it
//!   has one, refuses every `validate-upgrade`, and answers nothing
//!   otherwise;
//! - `kube`: applies the object the cluster's labels describe (`kind`,
//!   `api_version`, `namespace`, `name`, `body_name`) and answers the
//!   host's refusal as `failed`;
//! - `openstack`: resolves the flavor named by the label `flavor`;
//! - `secrets`: reads the cluster's CAs;
//! - `log`: logs (through the import, the `log` crate and `tracing`),
//!   prints to stdout and stderr, then answers;
//! - `log-line`: logs one line of `big_bytes` bytes, and prints one;
//! - `log-flood`: logs `lines` lines (100,000) and prints as many;
//! - answers that reach beyond the call's cluster, naming the victim the
//!   cluster's labels give (`victim_uuid`, `victim_id`, `victim_ng_uuid`,
//!   `victim_ng_id`, `victim_project`, `victim_ca_ref`, `victim_template`):
//!   `other-cluster` (the victim's cluster row), `other-nodegroup` (the
//!   victim's nodegroup), `delete-other-nodegroup`, `insert-into-other` (a
//!   new nodegroup of the victim), `steal-ca` (its own cluster
//!   `DELETE_COMPLETE` with the victim's certificate references),
//!   `switch-template` (its own cluster on the victim's template);
//! - answers that lie about its own cluster: `early-delete`
//!   (`DELETE_COMPLETE` whatever the status), `adopt` (`ADOPT_COMPLETE`),
//!   `many-deletes` (100,000 nodegroups deleted).

use openkeel_magnum_driver::prelude::*;
use openkeel_magnum_driver::{config, kube, logging, openstack, secrets};

#[derive(Default)]
struct Sandbox;

register_driver!(Sandbox);

fn mode() -> String {
    config::get("mode").unwrap_or_else(|| "ok".to_string())
}

/// Whether `function` misbehaves (every function without `mode_in`).
fn misbehaves(function: &str) -> bool {
    match config::get("mode_in") {
        None => true,
        Some(list) => list.split(',').any(|f| f.trim() == function),
    }
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

fn big_bytes() -> usize {
    config::get("big_bytes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(8usize << 20)
}

/// What `function` does on `st`: the configured misbehaviour, or a plain
/// driver's answer.
fn call(function: &str, st: Option<&ClusterState>) -> Result<Update, DriverError> {
    if misbehaves(function) {
        behave(function, st)
    } else {
        Ok(st.map(|st| plain(function, st)).unwrap_or_else(empty))
    }
}

/// A plain driver's answer: an operation moves nothing (the host has moved
/// the rows it starts), a status poll completes what is in progress.
fn plain(function: &str, st: &ClusterState) -> Update {
    if function != "poll-status" {
        return empty();
    }
    let done = |s: Option<Status>| match s {
        Some(Status::CreateInProgress) => Some(Status::CreateComplete),
        Some(Status::UpdateInProgress) => Some(Status::UpdateComplete),
        Some(Status::DeleteInProgress) => Some(Status::DeleteComplete),
        other => other,
    };
    let mut upd = empty();
    let mut cl = st.cluster.clone();
    if done(cl.status) != cl.status {
        cl.status = done(cl.status);
        upd.cluster = Some(cl);
    }
    for ng in &st.nodegroups {
        if ng.status == Some(Status::DeleteInProgress) && !ng.is_default() {
            upd.deleted_nodegroups.push(ng.uuid.clone());
        } else if done(ng.status) != ng.status {
            let mut ng = ng.clone();
            ng.status = done(ng.status);
            upd.nodegroups.push(ng);
        }
    }
    upd
}

/// The victim named by the cluster's label `key`.
fn victim(cl: &Cluster, key: &str) -> String {
    cl.label(key).unwrap_or_default().to_string()
}

/// Runs the misbehaviour of the configured mode; `Ok(update)` when the mode
/// answers.
fn behave(function: &str, st: Option<&ClusterState>) -> Result<Update, DriverError> {
    let cluster = st.map(|s| &s.cluster);
    let own = || cluster.cloned().unwrap_or_default();
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
        "alloc-max" => {
            let mut chunks: Vec<Vec<u8>> = Vec::new();
            loop {
                let mut c: Vec<u8> = Vec::new();
                if c.try_reserve_exact(16 << 20).is_err() {
                    break;
                }
                c.resize(16 << 20, 1);
                chunks.push(std::hint::black_box(c));
            }
            let mib = chunks.len() * 16;
            drop(chunks);
            Err(DriverError::client(
                400,
                "Invalid",
                format!("sandbox component filled {mib} MiB"),
            ))
        }
        "panic" | "panic-describe" => panic!("sandbox component: panic on purpose"),
        "big" => {
            let mut cl = own();
            cl.status_reason = Some("x".repeat(big_bytes()));
            Ok(Update {
                cluster: Some(cl),
                ..empty()
            })
        }
        "big-error" => Err(DriverError::client(400, "Invalid", "x".repeat(big_bytes()))),
        "refuse" => match cluster.and_then(|c| c.label("refused")) {
            Some(v) => Err(DriverError::client(
                400,
                "InvalidParameterValue",
                format!("sandbox component refuses the label refused={v}"),
            )),
            None if function == "validate-upgrade" => Err(DriverError::client(
                400,
                "InvalidParameterValue",
                "sandbox component refuses every upgrade",
            )),
            None => Ok(empty()),
        },
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
        "log-line" => {
            let line = "y".repeat(big_bytes());
            logging::write(logging::Level::Warn, &line, &[("field", &line)]);
            println!("{line}");
            Ok(empty())
        }
        "log-flood" => {
            let lines: u32 = config::get("lines")
                .and_then(|v| v.parse().ok())
                .unwrap_or(100_000);
            for i in 0..lines {
                logging::write(
                    logging::Level::Warn,
                    "sandbox component: flooding the log",
                    &[("i", &i.to_string())],
                );
                println!("sandbox component: flooding stdout {i}");
            }
            Ok(empty())
        }
        "other-cluster" => {
            let mut cl = own();
            cl.uuid = victim(&cl, "victim_uuid");
            cl.id = victim(&cl, "victim_id").parse().unwrap_or(0);
            cl.status_reason = Some("taken over".to_string());
            cl.api_address = Some("https://203.0.113.66:6443".to_string());
            Ok(Update::cluster(cl))
        }
        "other-nodegroup" => {
            let cl = own();
            let mut ng = st
                .and_then(|s| s.nodegroups.first().cloned())
                .unwrap_or_default();
            ng.uuid = victim(&cl, "victim_ng_uuid");
            ng.id = victim(&cl, "victim_ng_id").parse().unwrap_or(0);
            ng.cluster_id = victim(&cl, "victim_uuid");
            ng.node_count = Some(99);
            ng.node_addresses = Some(vec!["203.0.113.66".to_string()]);
            Ok(empty_with_nodegroup(ng))
        }
        "delete-other-nodegroup" => Ok(Update {
            deleted_nodegroups: vec![victim(&own(), "victim_ng_uuid")],
            ..empty()
        }),
        "insert-into-other" => {
            let cl = own();
            let ng = NodeGroup {
                id: 0,
                uuid: "00000000-0000-4000-8000-00000000beef".to_string(),
                name: "intruder".to_string(),
                cluster_id: victim(&cl, "victim_uuid"),
                project_id: victim(&cl, "victim_project"),
                node_count: Some(1),
                role: Some("worker".to_string()),
                status: Some(Status::CreateComplete),
                ..NodeGroup::default()
            };
            Ok(empty_with_nodegroup(ng))
        }
        "steal-ca" => {
            let mut cl = own();
            let r = victim(&cl, "victim_ca_ref");
            cl.ca_cert_ref = Some(r.clone());
            cl.magnum_cert_ref = Some(r.clone());
            cl.etcd_ca_cert_ref = Some(r.clone());
            cl.front_proxy_ca_cert_ref = Some(r);
            cl.status = Some(Status::DeleteComplete);
            Ok(Update::cluster(cl))
        }
        "switch-template" => {
            let mut cl = own();
            cl.cluster_template_id = victim(&cl, "victim_template");
            Ok(Update::cluster(cl))
        }
        "early-delete" => {
            let mut cl = own();
            cl.status = Some(Status::DeleteComplete);
            Ok(Update::cluster(cl))
        }
        "adopt" => {
            let mut cl = own();
            cl.status = Some(Status::AdoptComplete);
            Ok(Update::cluster(cl))
        }
        "many-deletes" => Ok(Update {
            deleted_nodegroups: (0..100_000u32)
                .map(|i| format!("00000000-0000-4000-8000-{i:012}"))
                .collect(),
            ..empty()
        }),
        _ => Ok(empty()),
    }
}

fn empty_with_nodegroup(ng: NodeGroup) -> Update {
    Update {
        nodegroups: vec![ng],
        ..empty()
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
        unit(call("validate-master-size", None))
    }

    fn validate_master_resize(&self, _e: &str, _count: i32) -> Result<(), DriverError> {
        unit(call("validate-master-resize", None))
    }

    fn validate_create(&self, _ctx: &CallContext, st: &ClusterState) -> Result<(), DriverError> {
        unit(call("validate-create", Some(st)))
    }

    fn validate_upgrade(
        &self,
        _ctx: &CallContext,
        st: &ClusterState,
        _t: &ClusterTemplate,
    ) -> Result<(), DriverError> {
        unit(call("validate-upgrade", Some(st)))
    }

    fn can_rotate_ca(&self, _ctx: &CallContext, st: &ClusterState) -> Result<(), DriverError> {
        unit(call("can-rotate-ca", Some(st)))
    }

    fn create_cluster(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _t: u32,
    ) -> Result<Update, DriverError> {
        call("create-cluster", Some(&st))
    }
    fn update_cluster(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        call("update-cluster", Some(&st))
    }
    fn delete_cluster(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        call("delete-cluster", Some(&st))
    }
    fn resize_cluster(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _r: Resize,
    ) -> Result<Update, DriverError> {
        call("resize-cluster", Some(&st))
    }
    fn upgrade_cluster(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _u: Upgrade,
    ) -> Result<Update, DriverError> {
        call("upgrade-cluster", Some(&st))
    }
    fn create_nodegroup(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _n: NodeGroup,
    ) -> Result<Update, DriverError> {
        call("create-nodegroup", Some(&st))
    }
    fn update_nodegroup(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _n: NodeGroup,
    ) -> Result<Update, DriverError> {
        call("update-nodegroup", Some(&st))
    }
    fn delete_nodegroup(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _n: NodeGroup,
    ) -> Result<Update, DriverError> {
        call("delete-nodegroup", Some(&st))
    }
    fn rotate_ca(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        call("rotate-ca", Some(&st))
    }
    fn rotate_credential(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        call("rotate-credential", Some(&st))
    }

    fn watches(&self, _c: &CallContext, st: &ClusterState) -> Vec<Selector> {
        match call("watches", Some(st)) {
            Ok(_) | Err(_) => Vec::new(),
        }
    }
    fn derive_status(
        &self,
        _c: &CallContext,
        st: ClusterState,
        _o: Vec<K8sObject>,
    ) -> Result<Update, DriverError> {
        call("derive-status", Some(&st))
    }
    fn poll_status(&self, _c: &CallContext, st: ClusterState) -> Result<Update, DriverError> {
        call("poll-status", Some(&st))
    }
}
