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
//! - `log`: logs, prints to stdout and stderr, then answers.

use openkeel_magnum_driver::{
    CallContext, Cluster, ClusterState, ClusterTemplate, DriverError, DriverGuest, EntryPoint,
    K8sObject, LifecycleGuest, Nodegroup, Resize, Selector, StatusGuest, Target, Update, Upgrade,
    cluster_secrets, config, kube, label, log, openstack, register_driver,
};

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
            let mut cl = cluster.cloned().unwrap_or_else(blank_cluster);
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
            let get = |k: &str, d: &str| label(&cl.labels, k).unwrap_or(d).to_string();
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
                .and_then(|c| label(&c.labels, "flavor").map(str::to_string))
                .unwrap_or_default();
            match openstack::resolve_flavor_name(&flavor) {
                Ok(name) => Ok(Update {
                    deleted_nodegroups: vec![name],
                    ..empty()
                }),
                Err(e) => Err(DriverError::Failed(format!("{e:?}"))),
            }
        }
        "secrets" => match cluster_secrets::cas() {
            Ok(cas) => Ok(Update {
                deleted_nodegroups: vec![cas.kubernetes.cert_pem],
                ..empty()
            }),
            Err(e) => Err(DriverError::Failed(format!("{e:?}"))),
        },
        "log" => {
            log::write(
                log::Level::Info,
                "sandbox component: hello",
                &[("k".to_string(), "v".to_string())],
            );
            println!("sandbox component: stdout line");
            eprintln!("sandbox component: stderr line");
            Ok(empty())
        }
        _ => Ok(empty()),
    }
}

fn blank_cluster() -> Cluster {
    Cluster {
        id: 0,
        uuid: String::new(),
        name: String::new(),
        project_id: String::new(),
        user_id: String::new(),
        cluster_template_id: String::new(),
        keypair: None,
        docker_volume_size: None,
        labels: None,
        master_flavor_id: None,
        flavor_id: None,
        stack_id: None,
        api_address: None,
        status: None,
        status_reason: None,
        health_status: None,
        health_status_reason: None,
        create_timeout: None,
        discovery_url: None,
        coe_version: None,
        container_version: None,
        ca_cert_ref: None,
        magnum_cert_ref: None,
        etcd_ca_cert_ref: None,
        front_proxy_ca_cert_ref: None,
        fixed_network: None,
        fixed_subnet: None,
        floating_ip_enabled: None,
        master_lb_enabled: None,
        created_at: 0,
        updated_at: None,
    }
}

fn unit(r: Result<Update, DriverError>) -> Result<(), DriverError> {
    r.map(|_| ())
}

impl DriverGuest for Sandbox {
    fn describe() -> Vec<EntryPoint> {
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

    fn validate_master_size(_e: String, _count: i32) -> Result<(), DriverError> {
        unit(behave(None))
    }

    fn validate_master_resize(_e: String, _count: i32) -> Result<(), DriverError> {
        unit(behave(None))
    }

    fn validate_create(_ctx: CallContext, st: ClusterState) -> Result<(), DriverError> {
        unit(behave(Some(&st.cluster)))
    }

    fn validate_upgrade(
        _ctx: CallContext,
        st: ClusterState,
        _t: ClusterTemplate,
    ) -> Result<(), DriverError> {
        unit(behave(Some(&st.cluster)))
    }

    fn can_rotate_ca(_ctx: CallContext, st: ClusterState) -> Result<(), DriverError> {
        unit(behave(Some(&st.cluster)))
    }
}

impl LifecycleGuest for Sandbox {
    fn create_cluster(_c: CallContext, st: ClusterState, _t: u32) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn update_cluster(_c: CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn delete_cluster(_c: CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn resize_cluster(
        _c: CallContext,
        st: ClusterState,
        _r: Resize,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn upgrade_cluster(
        _c: CallContext,
        st: ClusterState,
        _u: Upgrade,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn create_nodegroup(
        _c: CallContext,
        st: ClusterState,
        _n: Nodegroup,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn update_nodegroup(
        _c: CallContext,
        st: ClusterState,
        _n: Nodegroup,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn delete_nodegroup(
        _c: CallContext,
        st: ClusterState,
        _n: Nodegroup,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn rotate_ca(_c: CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn rotate_credential(_c: CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
}

impl StatusGuest for Sandbox {
    fn watches(_c: CallContext, st: ClusterState) -> Vec<Selector> {
        match behave(Some(&st.cluster)) {
            Ok(_) | Err(_) => Vec::new(),
        }
    }
    fn derive_status(
        _c: CallContext,
        st: ClusterState,
        _o: Vec<K8sObject>,
    ) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
    fn poll_status(_c: CallContext, st: ClusterState) -> Result<Update, DriverError> {
        behave(Some(&st.cluster))
    }
}
