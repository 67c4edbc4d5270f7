//! The driver host: its settings from `[drivers]` and the `[driver:<name>]`
//! groups, the services it offers the drivers, and the management cluster.

use super::*;

/// The Cluster API driver's option holding the k8s-keystone-auth policy.
pub(super) const KEYSTONE_AUTH_POLICY: &str = "keystone_auth_default_policy";

/// `[drivers]` and the `[driver:<package>]` groups as the driver host's
/// settings. A group with a key the host does not know fails, naming it.
pub fn driver_settings(options: &Options) -> Result<DriverSettings, StartError> {
    let d = &options.drivers;
    let secs = |n: i64| Duration::from_secs(n.max(1).unsigned_abs());
    let kib = |n: i64| {
        usize::try_from(n.max(1).unsigned_abs().saturating_mul(1024)).unwrap_or(usize::MAX)
    };
    let mut drivers = std::collections::BTreeMap::new();
    for (package, entries) in options.driver_groups() {
        let pairs = entries.iter().map(|e| (e.key.as_str(), e.value.as_str()));
        let config = DriverConfig::from_group(pairs)
            .map_err(|e| StartError::new(format!("[driver:{package}]: {e}")))?;
        drivers.insert(package, config);
    }
    // The Cluster API driver reads the operator's add-on manifests
    // (`calico/<tag>.yaml`, `cilium/<tag>.yaml`) from `[capi]/
    // addons_manifests_dir`, as magnum-cluster-api's operators set it,
    // unless its own group names a `files_dir`.
    let addons = options.capi.addons_manifests_dir.trim();
    if !addons.is_empty() {
        let capi = drivers.entry("capi".to_string()).or_default();
        if capi.files_dir.is_none() {
            capi.files_dir = Some(PathBuf::from(addons));
        }
    }
    // And the k8s-keystone-auth policy it installs from `[kubernetes]/
    // keystone_auth_default_policy`, read here once: a missing file keeps
    // the driver's built-in policy, as magnum-cluster-api's does.
    let policy = options.kubernetes.keystone_auth_default_policy.trim();
    if !policy.is_empty() {
        match std::fs::read_to_string(policy) {
            Ok(text) => {
                if let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
                    return Err(StartError::new(format!(
                        "[kubernetes]/keystone_auth_default_policy {policy}: not JSON: {e}"
                    )));
                }
                let capi = drivers.entry("capi".to_string()).or_default();
                capi.options
                    .entry(KEYSTONE_AUTH_POLICY.to_string())
                    .or_insert(text);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(StartError::new(format!(
                    "[kubernetes]/keystone_auth_default_policy {policy}: {e}"
                )));
            }
        }
    }
    Ok(DriverSettings {
        default_driver: d.default_driver.clone(),
        enabled_beta_drivers: d.enabled_beta_drivers.clone(),
        disabled_drivers: d.disabled_drivers.clone(),
        drivers_path: d.drivers_path.iter().map(PathBuf::from).collect(),
        precompiled_cache_dir: (!d.precompiled_cache_dir.is_empty())
            .then(|| PathBuf::from(&d.precompiled_cache_dir)),
        pooling_allocator: d.pooling_allocator,
        drivers,
        breaker: driver_host::BreakerSettings {
            threshold: u32::try_from(d.breaker_threshold.max(1)).unwrap_or(u32::MAX),
            window: secs(d.breaker_window),
            cooldown: secs(d.breaker_cooldown),
        },
        maxima: driver_host::Maxima {
            call_timeout: secs(d.max_call_timeout),
            memory_bytes: d
                .max_memory_mb
                .max(1)
                .unsigned_abs()
                .saturating_mul(1 << 20),
            output_bytes: kib(d.max_output_kb),
            log_bytes: kib(d.log_kb_per_call),
            log_lines: usize::try_from(d.log_lines_per_call.max(1)).unwrap_or(usize::MAX),
            state_bytes: kib(d.max_state_kb),
        },
    })
}

/// Loads the built-in drivers and those of `[drivers]/drivers_path`,
/// compiled off the request path before the first request.
pub async fn start_drivers(options: &Options) -> Result<DriverHost, StartError> {
    start_drivers_with(options, HostServices::default()).await
}

/// [`start_drivers`] with the services a serving process gives drivers.
pub async fn start_drivers_with(
    options: &Options,
    services: HostServices,
) -> Result<DriverHost, StartError> {
    let settings = driver_settings(options)?;
    let host = DriverHost::start(settings, services)
        .await
        .map_err(|e| StartError::new(format!("drivers: {e}")))?;
    // What compiling the components allocated is garbage now.
    crate::memory::release_free_memory();
    Ok(host)
}

/// What a serving process gives drivers. Their `kube` import reaches the
/// management cluster of `[capi]/kubeconfig`; with the option empty, `api`
/// infers it (in-cluster service account, `KUBECONFIG`) and goes without
/// one when there is none, and all-in-one goes without. Without a
/// management cluster a driver's Kubernetes calls answer `unavailable`.
///
/// Their `cluster-secrets` import reads `certificates`, the conductor's
/// certificate store. Their `openstack` import resolves names through
/// `lookup` and makes its other calls with the `[*_client]` options (and
/// magnum-cluster-api's `[manila_client]`) in a session whose service
/// credentials are `[keystone_auth]`'s, else `[keystone_authtoken]`'s;
/// application credentials are made at the Keystone users authenticate
/// with (`[keystone_authtoken]/www_authenticate_uri`, else its `auth_url`)
/// with the roles of `[capi]/app_credential_roles`. All-in-one has no
/// cloud: its drivers' OpenStack calls answer `unavailable`.
pub async fn driver_services(
    options: &Options,
    mode: Mode,
    lookup: Arc<dyn Lookup>,
    certificates: Arc<dyn certs::Store>,
) -> Result<HostServices, StartError> {
    let management = management(options, mode).await?;
    let openstack = if mode == Mode::AllInOne {
        None
    } else {
        let k = &options.keystone_auth;
        let authtoken = &options.keystone_authtoken;
        // Magnum: magnum/common/keystone.py falls back on the
        // [keystone_authtoken] credentials when [keystone_auth] has none.
        let c = if k.credentials.auth_url.is_some() {
            &k.credentials
        } else {
            &authtoken.credentials
        };
        let service = c
            .auth_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(|auth_url| openstack::ServiceCredentials {
                auth_url: auth_url.to_owned(),
                username: c.username.clone().unwrap_or_default(),
                password: c.password_text(),
                user_domain_id: c.user_domain_id.clone(),
                user_domain_name: c.user_domain_name.clone(),
                project_id: c.project_id.clone(),
                project_name: c.project_name.clone(),
                project_domain_id: c.project_domain_id.clone(),
                project_domain_name: c.project_domain_name.clone(),
                system_scope: c.system_scope.clone(),
                region_name: authtoken.region_name.clone().filter(|r| !r.is_empty()),
                interface: None,
            });
        let session = openstack::Session::new(session_settings(options), service)
            .map_err(|e| StartError::new(format!("drivers: {e}")))?;
        let manila = endpoint(&options.manila_client.client);
        let cloud = openstack::DriverCloud::new(
            lookup,
            session,
            openstack::DriverCloudSettings {
                app_credentials: openstack::AppCredentialSettings {
                    auth_url: authtoken
                        .www_authenticate_uri
                        .clone()
                        .or_else(|| authtoken.credentials.auth_url.clone())
                        .unwrap_or_default(),
                    roles: options.capi.app_credential_roles.clone(),
                },
                nova: endpoint(&options.nova_client),
                neutron: endpoint(&options.neutron_client),
                octavia: endpoint(&options.octavia_client.client),
                cinder: endpoint(&options.cinder_client),
                manila,
            },
        )
        .map_err(|e| StartError::new(format!("drivers: {e}")))?;
        Some(Arc::new(cloud) as Arc<dyn driver_host::OpenStackAccess>)
    };
    Ok(HostServices {
        cloud: Some(Arc::new(crate::cloud::ConfiguredCloud::from_options(
            options,
        ))),
        kube: management.map(|m| m as Arc<dyn driver_host::KubeAccess>),
        openstack,
        secrets: Some(Arc::new(certs::DriverSecrets::new(certificates))),
        ..HostServices::default()
    })
}

/// The management cluster: `[capi]/kubeconfig`; with the option empty,
/// `api` and `reconciler` infer it (in-cluster service account,
/// `KUBECONFIG`) and go without one when there is none, and all-in-one
/// goes without. With `[capi]/management_cluster = memory` (all-in-one
/// only) it is the process's in-memory cluster.
pub async fn management(
    options: &Options,
    mode: Mode,
) -> Result<Option<Arc<crate::management::ManagementCluster>>, StartError> {
    use crate::management::{ManagementCluster, memory::MemoryCluster};
    if options.capi.in_memory() {
        if mode != Mode::AllInOne {
            return Err(StartError::new(
                "[capi]/management_cluster = memory is for all-in-one only: the in-memory \
                 cluster lives in one process",
            ));
        }
        return Ok(Some(ManagementCluster::in_memory(MemoryCluster::shared())));
    }
    let kubeconfig = options.capi.kubeconfig.trim();
    if !kubeconfig.is_empty() {
        return certs::management_client(kubeconfig)
            .await
            .map(|c| Some(ManagementCluster::new(c)))
            .map_err(|e| StartError::new(format!("management cluster: {e}")));
    }
    if mode == Mode::AllInOne {
        return Ok(None);
    }
    match certs::management_client("").await {
        Ok(c) => Ok(Some(ManagementCluster::new(c))),
        Err(e) => {
            tracing::info!("no management cluster: {e}");
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{KEYSTONE_AUTH_POLICY, driver_settings};
    use crate::options::from_text;

    fn with_policy(path: &std::path::Path) -> crate::options::Options {
        from_text(&format!(
            "[kubernetes]\nkeystone_auth_default_policy = {}\n",
            path.display()
        ))
    }

    #[test]
    fn the_keystone_auth_policy_file_reaches_the_cluster_api_driver() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("policy.json");
        std::fs::write(&file, r#"[{"match": []}]"#).expect("write");
        let s = driver_settings(&with_policy(&file)).expect("settings");
        assert_eq!(
            s.drivers["capi"]
                .options
                .get(KEYSTONE_AUTH_POLICY)
                .map(String::as_str),
            Some(r#"[{"match": []}]"#)
        );
        // Missing (the default path on most hosts): the built-in policy.
        let s = driver_settings(&with_policy(&dir.path().join("none.json"))).expect("settings");
        assert!(s.drivers.get("capi").is_none_or(|c| c.options.is_empty()));
        // Not JSON: the service does not start, naming the option.
        std::fs::write(&file, "{not json").expect("write");
        let e = driver_settings(&with_policy(&file)).expect_err("not JSON");
        assert!(
            e.to_string()
                .contains("[kubernetes]/keystone_auth_default_policy"),
            "{e}"
        );
    }
}
