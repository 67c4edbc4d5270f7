//! The conductor and what it is built from: its settings, the certificate
//! store, the notifier, the OpenStack lookups; and the heartbeat and the
//! reconciler that run beside it.

use super::*;

/// The conductor's settings from the options.
pub fn conductor_settings(options: &Options) -> conductor::Settings {
    conductor::Settings {
        max_clusters_per_project: options.quotas.max_clusters_per_project,
        kubernetes_allowed_network_drivers: options
            .cluster_template
            .kubernetes_allowed_network_drivers
            .clone(),
        kubernetes_default_network_driver: options
            .cluster_template
            .kubernetes_default_network_driver
            .clone(),
        service_down_time: Duration::from_secs(
            options.default.service_down_time.max(1).unsigned_abs(),
        ),
        max_limit: options.api.max_limit,
        status_fault_limit: u32::try_from(options.drivers.status_fault_limit.max(1))
            .unwrap_or(u32::MAX),
        max_snapshot_bytes: usize::try_from(options.drivers.max_snapshot_kb.max(1))
            .unwrap_or(usize::MAX / 1024)
            .saturating_mul(1024),
    }
}

/// `[x509]` as the certificate options.
pub fn x509_options(options: &Options) -> X509Options {
    let x = &options.x509;
    X509Options {
        allow_ca: x.allow_ca,
        allowed_extensions: x.allowed_extensions.clone(),
        allowed_key_usage: x.allowed_key_usage.clone(),
        term_of_validity: x.term_of_validity,
        rsa_key_size: u32::try_from(x.rsa_key_size).unwrap_or(2048),
        ..X509Options::default()
    }
}

/// `[oslo_messaging_notifications]` and the transport as the notifier's
/// settings.
pub fn notifier_settings(options: &Options) -> NotifierSettings {
    let n = &options.oslo_messaging_notifications;
    let host = options.default.host.clone().unwrap_or_else(host_name);
    NotifierSettings {
        drivers: n.driver.clone(),
        transport_url: n
            .transport_url
            .clone()
            .unwrap_or_else(|| options.default.transport_url.clone()),
        topics: n.topics.clone(),
        retry: n.retry,
        exchange: options.default.control_exchange.clone(),
        publisher_id: notify::publisher_id(&host),
        rabbit: rabbit_settings(&options.oslo_messaging_rabbit),
        ..NotifierSettings::default()
    }
}

/// `[oslo_messaging_rabbit]` as the publisher's settings.
pub(super) fn rabbit_settings(r: &crate::options::OsloMessagingRabbit) -> notify::RabbitSettings {
    let secs = |n: i64| Duration::from_secs(u64::try_from(n).unwrap_or(0));
    // Set empty, a file option means none, as in oslo.messaging.
    let file = |f: &Option<String>| f.clone().filter(|f| !f.is_empty());
    notify::RabbitSettings {
        retry_interval: secs(r.rabbit_retry_interval),
        retry_backoff: secs(r.rabbit_retry_backoff),
        interval_max: secs(r.rabbit_interval_max),
        heartbeat_timeout_threshold: u16::try_from(r.heartbeat_timeout_threshold.max(0))
            .unwrap_or(u16::MAX),
        durable_queues: r.amqp_durable_queues,
        auto_delete: r.amqp_auto_delete,
        ha_queues: r.rabbit_ha_queues,
        quorum_queue: r.rabbit_quorum_queue,
        quorum_delivery_limit: r.rabbit_quorum_delivery_limit,
        quorum_max_memory_length: r.rabbit_quorum_max_memory_length,
        quorum_max_memory_bytes: r.rabbit_quorum_max_memory_bytes,
        ssl: r.ssl,
        ssl_ca_file: file(&r.ssl_ca_file),
        ssl_cert_file: file(&r.ssl_cert_file),
        ssl_key_file: file(&r.ssl_key_file),
        ..notify::RabbitSettings::default()
    }
}

/// The OpenStack session's TLS and timeout settings, from `[keystone_auth]`.
pub(super) fn session_settings(options: &Options) -> openstack::SessionSettings {
    let k = &options.keystone_auth;
    openstack::SessionSettings {
        timeout: k
            .timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_secs(t.unsigned_abs())),
        cafile: k.cafile.as_ref().map(PathBuf::from),
        certfile: k.certfile.as_ref().map(PathBuf::from),
        keyfile: k.keyfile.as_ref().map(PathBuf::from),
        insecure: k.insecure,
        user_agent: None,
    }
}

/// Where a `[<service>_client]` group says a service is found in the
/// catalog.
pub(super) fn endpoint(c: &crate::options::Client) -> openstack::EndpointSettings {
    openstack::EndpointSettings {
        region_name: c.region_name.clone(),
        endpoint_type: c.endpoint_type.clone(),
        endpoint: None,
    }
}

/// Glance, Nova and Neutron: the built-in data in all-in-one, else the
/// services of the caller's catalog with the `[*_client]` options.
pub fn lookup(options: &Options, mode: Mode) -> Result<Arc<dyn Lookup>, StartError> {
    if mode == Mode::AllInOne {
        return Ok(Arc::new(openstack::Static::new(true)));
    }
    let session =
        openstack::Session::new(session_settings(options), None).map_err(StartError::new)?;
    let clients = openstack::Clients::new(
        session,
        openstack::ClientsSettings {
            glance: endpoint(&options.glance_client),
            nova: endpoint(&options.nova_client),
            neutron: endpoint(&options.neutron_client),
        },
    )
    .map_err(StartError::new)?;
    Ok(Arc::new(clients))
}

/// Where cluster certificates are kept (`[certificates]/cert_manager_type`):
/// the x509keypair table of `db`, or Secrets of `[capi]/namespace` in the
/// management cluster `[capi]/kubeconfig` names.
pub async fn certificate_store(
    options: &Options,
    db: &Db,
) -> Result<Arc<dyn certs::Store>, StartError> {
    let configured = options.lookup("certificates", "cert_manager_type");
    let (kind, warning) =
        certs::StoreType::resolve(configured.as_deref().map(str::trim)).map_err(StartError::new)?;
    if let Some(w) = warning {
        tracing::warn!("{w}");
    }
    match kind {
        certs::StoreType::X509KeyPair => {
            Ok(Arc::new(certs::X509KeyPairStore::new(Arc::new(db.clone()))))
        }
        certs::StoreType::Kubernetes => {
            let client = if options.capi.in_memory() {
                crate::management::memory::MemoryCluster::shared().client()
            } else {
                certs::management_client(&options.capi.kubeconfig)
                    .await
                    .map_err(|e| {
                        StartError::new(format!(
                            "[certificates]/cert_manager_type = kubernetes: {e}"
                        ))
                    })?
            };
            Ok(Arc::new(certs::KubernetesStore::new(
                client,
                &options.capi.namespace,
            )))
        }
    }
}

/// The conductor of a server process: every part built from the options.
/// The certificate store and the lookups are built once: the conductor
/// keeps the clusters' certificates in the store and drivers read them
/// there; both resolve OpenStack names through the same lookups.
pub async fn conductor(options: &Options, mode: Mode, db: Db) -> Result<Conductor, StartError> {
    let lookup = lookup(options, mode)?;
    let store = certificate_store(options, &db).await?;
    let services = driver_services(options, mode, lookup.clone(), store.clone()).await?;
    let drivers = Arc::new(start_drivers_with(options, services).await?);
    let threads =
        std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1));
    let keys = Arc::new(
        certs::KeyGenerator::start(threads)
            .map_err(|e| StartError::new(format!("start the key generator: {e}")))?,
    );
    let notifier = Notifier::new(notifier_settings(options))
        .map_err(|e| StartError::new(format!("notifications: {e}")))?;
    Ok(Conductor::new(conductor::Parts {
        certificates: conductor::Certificates {
            store,
            keys,
            x509: x509_options(options),
        },
        db,
        template_drivers: drivers.clone(),
        drivers,
        lookup,
        notifier,
        settings: conductor_settings(options),
        clock: conductor::wall_clock(),
        new_uuid: conductor::random_uuids(),
    }))
}

/// The heartbeat of this process's `magnum-conductor` row, every
/// `min(periodic_interval_max, service_down_time / 3)` seconds as Magnum's
/// conductor reports.
pub fn heartbeat(options: &Options, conductor: Conductor) -> Heartbeat {
    let d = &options.default;
    let secs = d.periodic_interval_max.min(d.service_down_time / 3).max(1);
    Heartbeat {
        conductor,
        host: d.host.clone().unwrap_or_else(host_name),
        binary: "magnum-conductor".into(),
        interval: Duration::from_secs(secs.unsigned_abs()),
    }
}

/// The status loop of the process: a tick every `[capi]/resync_interval`
/// seconds (10; every second in all-in-one, where one process does
/// everything), held under a name unique to the process, and
/// `[drivers]/status_concurrency` status calls of one driver at a time.
/// With a management cluster it watches the objects its drivers declare
/// and holds the coordination Lease of `[capi]/lease_namespace`; without
/// one, it polls and holds the database lease (three ticks).
pub async fn reconciler(
    options: &Options,
    mode: Mode,
    conductor: Conductor,
) -> Result<crate::reconcile::Reconciler, StartError> {
    let holder = format!("reconciler-{}", uuid::Uuid::new_v4());
    let mut settings = crate::reconcile::Settings::new(holder.clone());
    let capi = &options.capi;
    let secs = |s: i64| Duration::from_secs(s.max(1).unsigned_abs());
    settings.interval = if mode == Mode::AllInOne {
        Duration::from_secs(1)
    } else {
        secs(capi.resync_interval)
    };
    settings.delete_timeout = secs(capi.delete_timeout);
    settings.per_driver =
        usize::try_from(options.drivers.status_concurrency.max(1)).unwrap_or(usize::MAX);
    // Magnum's health monitor; a negative interval disables it, zero polls
    // the health at every pass.
    let health = options.kubernetes.health_polling_interval;
    settings.health_interval = (health >= 0).then(|| Duration::from_secs(health.unsigned_abs()));
    let Some(management) = management(options, mode).await? else {
        return Ok(crate::reconcile::Reconciler::new(conductor, settings));
    };
    let client = management.client().clone();
    let (hub, changed) = crate::watch::WatchHub::new(management);
    let namespace = capi.lease_namespace().to_owned();
    let lease = crate::watch::lease::KubeLease::new(
        client,
        crate::watch::lease::LeaseSettings {
            holder,
            namespace,
            duration: secs(capi.lease_duration),
            renew_deadline: secs(capi.renew_deadline),
            retry_period: secs(capi.retry_period),
            request_timeout: secs(capi.request_timeout),
        },
    );
    let watching = crate::reconcile::Watching::new(hub, changed, Arc::new(lease));
    Ok(crate::reconcile::Reconciler::watching(
        conductor, settings, watching,
    ))
}

/// The workers of the cluster create jobs: one less than the cores (at
/// least one), so that requests keep a core.
pub fn create_job_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get().saturating_sub(1))
        .unwrap_or(1)
        .max(1)
}
