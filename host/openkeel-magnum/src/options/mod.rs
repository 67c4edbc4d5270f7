//! Magnum's configuration: `magnum.conf` read with oslo.config's semantics
//! into typed [`Options`] with Magnum's group names, option names and
//! defaults.
//!
//! [`load`] reads every `--config-file` in order, then each
//! `--config-dir`'s `*.conf` files in sorted order; later files win. It
//! returns the options and warnings (unknown groups and options, deprecated
//! names, options accepted but ignored such as `[api]/api_paste_config`),
//! or a one-line [`ConfigError`] naming the file and line of a malformed
//! line or the option of an invalid value (never a secret's value). Every
//! modelled option is validated at load time, not on first use as in
//! oslo.config.
//!
//! Options that are not modelled as fields are still readable through
//! [`Options::lookup`]; [`Options::effective`] lists the effective
//! configuration with secrets masked (`config check`). The option table
//! also generates `config/magnum.conf.sample` ([`sample`]).
//!
//! # Deviations from oslo.config and Magnum
//!
//! `${DEFAULT.name}` names `[DEFAULT]` (oslo.config has no group called
//! DEFAULT and fails). Unknown options and groups produce warnings, which
//! oslo.config does not emit. Every modelled option is validated at load
//! time. `[database]/connection` has no default (Magnum's is an SQLite file
//! inside its Python package). `[DEFAULT]/auth_strategy` and `[capi]` are
//! ours; `[healthcheck]` carries the settings Magnum puts in api-paste.ini,
//! which is not read. Integers are 64-bit. An integer or float option with a
//! default that a file sets to an empty value (oslo.config's none) reads as
//! 0. Error messages never repeat a malformed line nor a secret option's
//! value.

mod known;
mod schema;

#[cfg(test)]
mod oracle_tests;
#[cfg(test)]
mod sample_tests;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use oslo_config::database::{DatabaseUrl, DatabaseUrlError};
use oslo_config::{Config, Key, LoadError, Secret, Value};

pub use oslo_config::MASK;

/// The configuration file read when neither `--config-file` nor
/// `--config-dir` is given and it exists, as Magnum's services do.
pub const DEFAULT_CONFIG_FILE: &str = "/etc/magnum/magnum.conf";

/// The configuration directory read when neither `--config-file` nor
/// `--config-dir` is given and it exists (oslo.config's project directory).
pub const DEFAULT_CONFIG_DIR: &str = "/etc/magnum/magnum.conf.d";

/// The SQLite file of all-in-one when no `[database]/connection` is set,
/// in the working directory.
pub const ALL_IN_ONE_DATABASE_FILE: &str = "openkeel-magnum.sqlite";

/// What [`load`] returns: the options and the warnings to log.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The options.
    pub options: Options,
    /// One line each: `file:line: message`.
    pub warnings: Vec<String>,
}

/// A configuration that cannot be used. `Display` is one line naming the
/// cause (the file, line or option); the CLI exits with status 2.
#[derive(Debug)]
pub struct ConfigError(LoadError);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Reads the configuration files (in order) and then, for each directory of
/// `config_dirs`, its `*.conf` files (hidden files excepted) in sorted
/// order, the way oslo.config handles `--config-file` and `--config-dir`.
/// As in oslo.config, an option's `OS_<GROUP>__<NAME>` environment variable
/// (`OS_DATABASE__CONNECTION`) wins over the files.
pub fn load(config_files: &[PathBuf], config_dirs: &[PathBuf]) -> Result<Loaded, ConfigError> {
    load_with_environment(config_files, config_dirs, std::env::vars())
}

/// [`load`] with the given environment instead of the process's.
pub fn load_with_environment(
    config_files: &[PathBuf],
    config_dirs: &[PathBuf],
    environment: impl IntoIterator<Item = (String, String)>,
) -> Result<Loaded, ConfigError> {
    let schema = Arc::new(schema::schema());
    let (config, warnings) =
        oslo_config::load_with_environment(schema, config_files, config_dirs, environment)
            .map_err(ConfigError)?;
    Ok(Loaded {
        options: Options::from_config(Arc::new(config)),
        warnings: warnings.iter().map(ToString::to_string).collect(),
    })
}

/// Loads already parsed files (for tests and tools).
/// The options of one in-memory file, which must load (for the tests of
/// the modules built from options).
#[cfg(test)]
pub(crate) fn from_text(text: &str) -> Options {
    let file = oslo_config::ini::parse("test.conf", text.as_bytes())
        .unwrap_or_else(|e| panic!("parse: {e}"));
    from_files(vec![file])
        .unwrap_or_else(|e| panic!("{e}"))
        .options
}

fn from_files(files: Vec<oslo_config::ini::File>) -> Result<Loaded, ConfigError> {
    let (config, warnings) = Config::from_files(Arc::new(schema::schema()), files)
        .map_err(|errors| ConfigError(LoadError::Invalid(errors)))?;
    Ok(Loaded {
        options: Options::from_config(Arc::new(config)),
        warnings: warnings.iter().map(ToString::to_string).collect(),
    })
}

/// The sample configuration file: every modelled option with its help,
/// type, bounds, deprecated names and default, in oslo-config-generator's
/// layout.
pub fn sample() -> String {
    oslo_config::sample::generate(
        &schema::schema(),
        &[
            "openkeel-magnum configuration (magnum.conf). Generated from the option table;",
            "do not edit.",
            "",
            "Groups, names and defaults are Magnum 23.0.0's. The other options of",
            "Magnum's sample (oslo.log, oslo.messaging, oslo.concurrency, ...) are",
            "accepted without warning and have no effect.",
        ],
        schema::NAMESPACE_ORDER,
    )
}

/// The configuration reference (`docs/configuration.md`), generated from
/// the same option table as [`sample`].
pub fn reference() -> String {
    oslo_config::sample::markdown(
        &schema::schema(),
        &[
            "# Configuration reference",
            "",
            "Every option openkeel-magnum reads from `magnum.conf`, group by group. Generated from the option table",
            "(the tests rewrite it with `OKM_UPDATE_SAMPLES=1`, and fail while it is stale); do not edit.",
            "`config/magnum.conf.sample` is the same table as a sample file, and `openkeel-magnum config check` prints",
            "the values in effect with the file and line each comes from.",
            "",
            "Groups, names and defaults are Magnum 23.0.0's, except the groups and options that are ours (`[capi]`,",
            "`[metrics]`, `[drivers]/drivers_path` and the other options whose help says so). An option marked",
            "*Accepted, no effect* is read without a warning so that an existing `magnum.conf` keeps working; the",
            "options of Magnum's sample that are absent here (oslo.log's, oslo.messaging's, oslo.concurrency's …) are",
            "accepted the same way. Each option can also be given in the environment as `OS_<GROUP>__<OPTION>`",
            "(`OS_DATABASE__CONNECTION`), which wins over the files, as with oslo.config. A driver package's grants",
            "(`[driver:<package>]`) are described in [drivers.md](drivers.md#grants).",
        ],
        schema::NAMESPACE_ORDER,
    )
}

/// How API requests are authenticated (`[DEFAULT]/auth_strategy`, ours).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthStrategy {
    /// Tokens are validated with Keystone (the default).
    Keystone,
    /// The identity headers are trusted: for tests and all-in-one only.
    NoAuth,
}

/// The typed configuration. Groups and options are Magnum's (each field is
/// named after its INI option); defaults are those the running reference
/// uses, which are the sample's except where noted.
///
/// An option whose default is none is an `Option`; a list without default
/// is empty; an integer with a default that a file sets to an empty value
/// (oslo.config's none) is 0.
#[derive(Clone, Debug)]
pub struct Options {
    /// `[DEFAULT]`.
    pub default: DefaultGroup,
    /// `[api]`.
    pub api: Api,
    /// `[database]`.
    pub database: Database,
    /// `[keystone_authtoken]`.
    pub keystone_authtoken: KeystoneAuthtoken,
    /// `[keystone_auth]`.
    pub keystone_auth: KeystoneAuth,
    /// `[oslo_policy]`.
    pub oslo_policy: OsloPolicy,
    /// `[oslo_middleware]`.
    pub oslo_middleware: OsloMiddleware,
    /// `[oslo_messaging_notifications]`.
    pub oslo_messaging_notifications: OsloMessagingNotifications,
    /// `[oslo_messaging_rabbit]`.
    pub oslo_messaging_rabbit: OsloMessagingRabbit,
    /// `[cors]`.
    pub cors: Cors,
    /// `[quotas]`.
    pub quotas: Quotas,
    /// `[drivers]`.
    pub drivers: Drivers,
    /// `[certificates]`.
    pub certificates: Certificates,
    /// `[x509]`.
    pub x509: X509,
    /// `[cluster]`.
    pub cluster: Cluster,
    /// `[cluster_template]`.
    pub cluster_template: ClusterTemplate,
    /// `[kubernetes]`.
    pub kubernetes: Kubernetes,
    /// `[cinder]`.
    pub cinder: Cinder,
    /// `[conductor]`.
    pub conductor: Conductor,
    /// `[profiler]`.
    pub profiler: Profiler,
    /// `[healthcheck]`.
    pub healthcheck: Healthcheck,
    /// `[capi]` (ours).
    pub capi: Capi,
    /// `[metrics]` (ours).
    pub metrics: Metrics,
    /// `[tracing]` (ours).
    pub tracing: Tracing,
    /// `[glance_client]`.
    pub glance_client: Client,
    /// `[nova_client]`.
    pub nova_client: Client,
    /// `[neutron_client]`.
    pub neutron_client: Client,
    /// `[cinder_client]`.
    pub cinder_client: Client,
    /// `[barbican_client]`.
    pub barbican_client: Client,
    /// `[magnum_client]`.
    pub magnum_client: Client,
    /// `[octavia_client]`, the only client group of Magnum with TLS options.
    pub octavia_client: Client,
    /// `[capi_client]` (magnum-cluster-api's): the endpoint interface and
    /// TLS trust with which a cluster reaches the cloud's APIs, given to
    /// drivers as the `cloud` import.
    pub capi_client: Client,
    /// `[manila_client]` (magnum-cluster-api's): how drivers reach Manila
    /// (`share-types`).
    pub manila_client: Client,
    /// The configuration files read, in load order. oslo.config resolves
    /// relative paths such as `[oslo_policy]/policy_file` against their
    /// directories.
    pub files: Vec<PathBuf>,
    raw: Arc<Config>,
    overrides: Vec<(Key, String, &'static str)>,
}

/// `[DEFAULT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultGroup {
    /// `debug` (oslo.log).
    pub debug: bool,
    /// `host`: the node name; `None` means the machine's host name, as
    /// Magnum does.
    pub host: Option<String>,
    /// `transport_url` (oslo.messaging).
    pub transport_url: Secret,
    /// `control_exchange`; Magnum sets it to "magnum" at start-up although
    /// the sample shows oslo.messaging's "openstack".
    pub control_exchange: String,
    /// `rpc_response_timeout`, seconds.
    pub rpc_response_timeout: i64,
    /// `service_down_time`, seconds: mservices up/down.
    pub service_down_time: i64,
    /// `periodic_enable`.
    pub periodic_enable: bool,
    /// `periodic_interval_max`, seconds.
    pub periodic_interval_max: i64,
    /// `log_file`.
    pub log_file: Option<String>,
    /// `log_dir`.
    pub log_dir: Option<String>,
    /// `use_json`.
    pub use_json: bool,
    /// `use_stderr`.
    pub use_stderr: bool,
    /// `auth_strategy` (ours): `keystone` or `noauth`.
    pub auth_strategy: AuthStrategy,
}

/// `[api]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Api {
    /// `host`: the listen address (an IP address).
    pub host: String,
    /// `port`.
    pub port: u16,
    /// `max_limit`: default and cap of `limit` on collections.
    pub max_limit: i64,
    /// `api_paste_config`: accepted and ignored (the middleware chain is
    /// built in), with a warning when set.
    pub api_paste_config: String,
    /// `ssl_cert_file`.
    pub ssl_cert_file: Option<String>,
    /// `ssl_key_file`.
    pub ssl_key_file: Option<String>,
    /// `enabled_ssl`.
    pub enabled_ssl: bool,
    /// `workers`; `None` means the number of CPUs.
    pub workers: Option<i64>,
    /// `unversioned_at_route_minimum` (ours): see
    /// [`crate::api::ApiOptions::unversioned_at_route_minimum`].
    pub unversioned_at_route_minimum: bool,
}

/// `[database]` (oslo.db plus Magnum's own).
#[derive(Clone, Debug, PartialEq)]
pub struct Database {
    /// `connection`: the SQLAlchemy URL; see [`Options::database_url`].
    // Deviation: Magnum defaults it to an SQLite file under its Python
    // package directory; here it is unset and the caller must supply one.
    pub connection: Option<Secret>,
    /// `mysql_engine`.
    pub mysql_engine: String,
    /// `mysql_sql_mode`.
    pub mysql_sql_mode: String,
    /// `sqlite_synchronous`.
    pub sqlite_synchronous: bool,
    /// `connection_recycle_time`, seconds.
    pub connection_recycle_time: i64,
    /// `max_pool_size`; 0 means no limit.
    pub max_pool_size: i64,
    /// `max_overflow`; -1 means no limit.
    pub max_overflow: i64,
    /// `pool_timeout`, seconds.
    pub pool_timeout: Option<i64>,
    /// `max_retries` at start-up; -1 means forever.
    pub max_retries: i64,
    /// `retry_interval`, seconds.
    pub retry_interval: i64,
    /// `connection_debug`, 0–100.
    pub connection_debug: i64,
    /// `db_retry_interval`, seconds.
    pub db_retry_interval: i64,
    /// `db_inc_retry_interval`.
    pub db_inc_retry_interval: bool,
    /// `db_max_retry_interval`, seconds.
    pub db_max_retry_interval: i64,
    /// `db_max_retries`; -1 means forever.
    pub db_max_retries: i64,
    /// `connection_parameters`, appended to the URL's query.
    pub connection_parameters: String,
}

/// The keystoneauth1 "password" plugin options, shared by
/// `[keystone_authtoken]` and `[keystone_auth]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Credentials {
    /// `auth_url`.
    pub auth_url: Option<String>,
    /// `system_scope`.
    pub system_scope: Option<String>,
    /// `domain_id`.
    pub domain_id: Option<String>,
    /// `domain_name`.
    pub domain_name: Option<String>,
    /// `project_id` (deprecated name `tenant_id`).
    pub project_id: Option<String>,
    /// `project_name` (deprecated name `tenant_name`).
    pub project_name: Option<String>,
    /// `project_domain_id`.
    pub project_domain_id: Option<String>,
    /// `project_domain_name`.
    pub project_domain_name: Option<String>,
    /// `trust_id`.
    pub trust_id: Option<String>,
    /// `default_domain_id`.
    pub default_domain_id: Option<String>,
    /// `default_domain_name`.
    pub default_domain_name: Option<String>,
    /// `user_id`.
    pub user_id: Option<String>,
    /// `username` (deprecated name `user_name`).
    pub username: Option<String>,
    /// `user_domain_id`.
    pub user_domain_id: Option<String>,
    /// `user_domain_name`.
    pub user_domain_name: Option<String>,
    /// `password`.
    pub password: Option<Secret>,
}

/// `[keystone_authtoken]`: keystonemiddleware's auth_token plus the auth
/// plugin options.
#[derive(Clone, Debug, PartialEq)]
pub struct KeystoneAuthtoken {
    /// The password plugin options (`auth_url`, `username`, `password`…).
    pub credentials: Credentials,
    /// `www_authenticate_uri`: sent in `WWW-Authenticate` on 401 and copied
    /// into the request context as `auth_url`.
    pub www_authenticate_uri: Option<String>,
    /// `auth_version`.
    pub auth_version: Option<String>,
    /// `interface`.
    pub interface: String,
    /// `delay_auth_decision`.
    pub delay_auth_decision: bool,
    /// `http_connect_timeout`, seconds.
    pub http_connect_timeout: Option<i64>,
    /// `http_request_max_retries`.
    pub http_request_max_retries: i64,
    /// `certfile`.
    pub certfile: Option<String>,
    /// `keyfile`.
    pub keyfile: Option<String>,
    /// `cafile`.
    pub cafile: Option<String>,
    /// `insecure`.
    pub insecure: bool,
    /// `region_name`.
    pub region_name: Option<String>,
    /// `memcached_servers`: accepted and ignored with a warning (tokens are
    /// cached in-process).
    pub memcached_servers: Vec<String>,
    /// `token_cache_time`, seconds; -1 disables the cache.
    pub token_cache_time: i64,
    /// `include_service_catalog`.
    pub include_service_catalog: bool,
    /// `enforce_token_bind`.
    pub enforce_token_bind: String,
    /// `service_token_roles`.
    pub service_token_roles: Vec<String>,
    /// `service_token_roles_required`.
    pub service_token_roles_required: bool,
    /// `service_type`.
    pub service_type: Option<String>,
    /// `auth_type` (deprecated name `auth_plugin`).
    pub auth_type: Option<String>,
    /// `auth_section`.
    pub auth_section: Option<String>,
}

/// `[keystone_auth]`: Magnum's own service credentials (auth plugin and
/// session options).
#[derive(Clone, Debug, PartialEq)]
pub struct KeystoneAuth {
    /// The password plugin options.
    pub credentials: Credentials,
    /// `auth_type`; Magnum forces the default to "password" at
    /// registration although the sample shows none.
    pub auth_type: String,
    /// `auth_section`.
    pub auth_section: Option<String>,
    /// `cafile`.
    pub cafile: Option<String>,
    /// `certfile`.
    pub certfile: Option<String>,
    /// `keyfile`.
    pub keyfile: Option<String>,
    /// `insecure`.
    pub insecure: bool,
    /// `timeout`, seconds.
    pub timeout: Option<i64>,
}

/// `[oslo_policy]`.
#[derive(Clone, Debug, PartialEq)]
pub struct OsloPolicy {
    /// `enforce_new_defaults`.
    pub enforce_new_defaults: bool,
    /// `policy_file`.
    pub policy_file: String,
    /// `policy_default_rule`.
    pub policy_default_rule: String,
    /// `policy_dirs` (multi valued).
    pub policy_dirs: Vec<String>,
    /// `remote_timeout`, seconds.
    pub remote_timeout: f64,
}

/// `[oslo_middleware]` (not in the sample: the http_proxy_to_wsgi namespace
/// is not part of Magnum's generator).
#[derive(Clone, Debug, PartialEq)]
pub struct OsloMiddleware {
    /// `enable_proxy_headers_parsing`.
    pub enable_proxy_headers_parsing: bool,
}

/// `[oslo_messaging_notifications]`.
#[derive(Clone, Debug, PartialEq)]
pub struct OsloMessagingNotifications {
    /// `driver` (multi valued); empty means notifications are off.
    pub driver: Vec<String>,
    /// `transport_url`; `None` means `[DEFAULT]/transport_url`.
    pub transport_url: Option<Secret>,
    /// `topics`.
    pub topics: Vec<String>,
    /// `retry`; -1 means forever.
    pub retry: i64,
}

/// `[oslo_messaging_rabbit]`: what the notification publisher honours.
#[derive(Clone, Debug, PartialEq)]
pub struct OsloMessagingRabbit {
    pub amqp_durable_queues: bool,
    pub amqp_auto_delete: bool,
    /// Seconds.
    pub rabbit_retry_interval: i64,
    pub rabbit_retry_backoff: i64,
    pub rabbit_interval_max: i64,
    pub heartbeat_timeout_threshold: i64,
    pub rabbit_ha_queues: bool,
    pub rabbit_quorum_queue: bool,
    pub rabbit_quorum_delivery_limit: i64,
    pub rabbit_quorum_max_memory_length: i64,
    pub rabbit_quorum_max_memory_bytes: i64,
    pub ssl: bool,
    /// `None` when empty.
    pub ssl_ca_file: Option<String>,
    pub ssl_cert_file: Option<String>,
    pub ssl_key_file: Option<String>,
}

/// `[cors]`. Magnum replaces oslo.middleware's defaults of the three
/// header and method lists at start-up; those are the defaults here.
#[derive(Clone, Debug, PartialEq)]
pub struct Cors {
    /// `allowed_origin`; empty disables CORS.
    pub allowed_origin: Vec<String>,
    /// `allow_credentials`.
    pub allow_credentials: bool,
    /// `expose_headers`.
    pub expose_headers: Vec<String>,
    /// `max_age`, seconds.
    pub max_age: i64,
    /// `allow_methods`.
    pub allow_methods: Vec<String>,
    /// `allow_headers`.
    pub allow_headers: Vec<String>,
}

/// `[quotas]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Quotas {
    /// `max_clusters_per_project`.
    pub max_clusters_per_project: i64,
}

/// `[drivers]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Drivers {
    /// `verify_ca`.
    pub verify_ca: bool,
    /// `openstack_ca_file`.
    pub openstack_ca_file: String,
    /// `disabled_drivers`.
    pub disabled_drivers: Vec<String>,
    /// `enabled_beta_drivers`.
    pub enabled_beta_drivers: Vec<String>,
    /// `default_driver`; `None` means the first available.
    pub default_driver: Option<String>,
    /// `drivers_path` (ours): directories of driver packages.
    pub drivers_path: Vec<String>,
    /// `precompiled_cache_dir` (ours); empty: compile at every start.
    pub precompiled_cache_dir: String,
    /// `pooling_allocator` (ours).
    pub pooling_allocator: bool,
    /// `breaker_threshold` (ours).
    pub breaker_threshold: i64,
    /// `breaker_window` (ours), seconds.
    pub breaker_window: i64,
    /// `breaker_cooldown` (ours), seconds.
    pub breaker_cooldown: i64,
    /// `max_call_timeout` (ours), seconds.
    pub max_call_timeout: i64,
    /// `max_memory_mb` (ours).
    pub max_memory_mb: i64,
    /// `max_output_kb` (ours).
    pub max_output_kb: i64,
    /// `log_kb_per_call` (ours).
    pub log_kb_per_call: i64,
    /// `log_lines_per_call` (ours).
    pub log_lines_per_call: i64,
    /// `max_state_kb` (ours).
    pub max_state_kb: i64,
    /// `status_concurrency` (ours): status polls of one driver at a time.
    pub status_concurrency: i64,
    /// `status_fault_limit` (ours).
    pub status_fault_limit: i64,
    /// `max_snapshot_kb` (ours): the largest snapshot `derive-status` is
    /// given.
    pub max_snapshot_kb: i64,
}

/// One key of a `[driver:<package>]` group: its value and where it was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupEntry {
    pub key: String,
    pub value: String,
    /// `file:line`.
    pub source: String,
}

/// `[certificates]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Certificates {
    /// `cert_manager_type`: Magnum's barbican, x509keypair or local; served:
    /// x509keypair and kubernetes (see `certs::StoreType`).
    pub cert_manager_type: String,
    /// `storage_path` (local cert manager).
    pub storage_path: String,
}

/// `[x509]`.
#[derive(Clone, Debug, PartialEq)]
pub struct X509 {
    /// `allow_ca`.
    pub allow_ca: bool,
    /// `allowed_extensions`.
    pub allowed_extensions: Vec<String>,
    /// `allowed_key_usage`.
    pub allowed_key_usage: Vec<String>,
    /// `term_of_validity`, days.
    pub term_of_validity: i64,
    /// `rsa_key_size`, bits.
    pub rsa_key_size: i64,
}

/// `[cluster]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// `etcd_discovery_service_endpoint_format`.
    pub etcd_discovery_service_endpoint_format: String,
    /// `nodes_affinity_policy`.
    pub nodes_affinity_policy: String,
    /// `temp_cache_dir`.
    pub temp_cache_dir: String,
    /// `pre_delete_lb_timeout`, seconds.
    pub pre_delete_lb_timeout: i64,
}

/// `[cluster_template]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterTemplate {
    /// `kubernetes_allowed_network_drivers`.
    pub kubernetes_allowed_network_drivers: Vec<String>,
    /// `kubernetes_default_network_driver`.
    pub kubernetes_default_network_driver: String,
}

/// `[kubernetes]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Kubernetes {
    /// `keystone_auth_default_policy`.
    pub keystone_auth_default_policy: String,
    /// `post_install_manifest_url`.
    pub post_install_manifest_url: String,
    /// `health_polling_interval`, seconds; negative disables.
    pub health_polling_interval: i64,
}

/// `[cinder]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cinder {
    /// `default_docker_volume_type`.
    pub default_docker_volume_type: String,
    /// `default_etcd_volume_type`.
    pub default_etcd_volume_type: String,
    /// `default_boot_volume_type`.
    pub default_boot_volume_type: String,
    /// `default_boot_volume_size`, GiB.
    pub default_boot_volume_size: i64,
}

/// `[conductor]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Conductor {
    /// `topic`.
    pub topic: String,
    /// `workers`; `None` means the number of CPUs.
    pub workers: Option<i64>,
}

/// `[profiler]` (only the switch is modelled).
#[derive(Clone, Debug, PartialEq)]
pub struct Profiler {
    /// `enabled` (deprecated name `profiler_enabled`).
    pub enabled: bool,
}

/// `[healthcheck]`: oslo.middleware's healthcheck app. Magnum configures it
/// in api-paste.ini, which is not read, so the defaults are the values
/// Magnum's paste file sets and the group lets operators change them.
#[derive(Clone, Debug, PartialEq)]
pub struct Healthcheck {
    /// `backends`; "disable_by_file" is supported.
    pub backends: Vec<String>,
    /// `detailed`.
    pub detailed: bool,
    /// `disable_by_file_path`: 503 while this file exists.
    pub disable_by_file_path: String,
}

/// `[capi]`, openkeel-magnum's own: how the service reaches its Cluster API
/// management cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Capi {
    /// `kubeconfig`: a kubeconfig file; empty means the in-cluster service
    /// account.
    pub kubeconfig: String,
    /// `management_cluster`: `kubeconfig` (the cluster of `kubeconfig`) or
    /// `memory` (an in-memory Kubernetes API inside an all-in-one process).
    pub management_cluster: String,
    /// `namespace`: the management namespace of clusters' objects and, with
    /// `[certificates]/cert_manager_type = kubernetes`, of their
    /// certificates.
    pub namespace: String,
    /// `enabled`: the Cluster API driver is on and `reconciler` watches the
    /// management cluster.
    pub enabled: bool,
    /// `lease_namespace`: the reconciler's leader-election Lease (empty:
    /// `namespace`).
    pub lease_namespace: String,
    /// `lease_duration`, seconds.
    pub lease_duration: i64,
    /// `renew_deadline`, seconds.
    pub renew_deadline: i64,
    /// `retry_period`, seconds.
    pub retry_period: i64,
    /// `resync_interval`, seconds: the pass over the clusters in progress.
    pub resync_interval: i64,
    /// `request_timeout`, seconds: each call to the management cluster.
    pub request_timeout: i64,
    /// `update_grace`, seconds a topology may fail to reconcile before an
    /// update is UPDATE_FAILED.
    pub update_grace: i64,
    /// `delete_timeout`, seconds a deletion may make no progress before the
    /// cluster is DELETE_FAILED.
    pub delete_timeout: i64,
    /// `app_credential_roles`: the roles of a cluster's application
    /// credential, among those the user has.
    pub app_credential_roles: Vec<String>,
    /// `addons_manifests_dir`: operator CNI manifests (empty for none).
    pub addons_manifests_dir: String,
}

impl Capi {
    /// Whether the drivers' Kubernetes is the in-memory cluster of an
    /// all-in-one process (`management_cluster = memory`).
    pub fn in_memory(&self) -> bool {
        self.management_cluster.trim() == "memory"
    }

    /// The namespace of the reconciler's Lease: `lease_namespace`, else
    /// `namespace`.
    pub fn lease_namespace(&self) -> &str {
        match self.lease_namespace.trim() {
            "" => &self.namespace,
            ns => ns,
        }
    }
}

/// `[metrics]`, openkeel-magnum's own: the Prometheus listener.
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// `enabled`: serve `GET /metrics` (off by default).
    pub enabled: bool,
    /// `host`: the listen address (an IP address).
    pub host: String,
    /// `port`.
    pub port: u16,
}

/// `[tracing]`, openkeel-magnum's own: OpenTelemetry traces over
/// OTLP/HTTP.
#[derive(Clone, Debug, PartialEq)]
pub struct Tracing {
    /// `otlp_endpoint`: the collector's base URL (empty: off).
    pub otlp_endpoint: String,
    /// `service_name`.
    pub service_name: String,
    /// `sample_ratio`, 0 to 1.
    pub sample_ratio: f64,
    /// `export_timeout`, in seconds.
    pub export_timeout: i64,
}

/// One `[<service>_client]` group: how the service reaches another
/// OpenStack service with the caller's token. Magnum 23.0.0 registers only
/// `region_name` and `endpoint_type` for every client group, plus the TLS
/// options for `[octavia_client]`; the TLS fields stay unset for the others.
#[derive(Clone, Debug, PartialEq)]
pub struct Client {
    /// `region_name`.
    pub region_name: Option<String>,
    /// `endpoint_type`: publicURL, internalURL or adminURL.
    pub endpoint_type: String,
    /// `ca_file`.
    pub ca_file: Option<String>,
    /// `cert_file`.
    pub cert_file: Option<String>,
    /// `key_file`.
    pub key_file: Option<String>,
    /// `insecure`.
    pub insecure: bool,
}

/// One row of [`Options::effective`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveOption {
    /// The group.
    pub group: String,
    /// The option.
    pub name: String,
    /// The value as a file would write it; [`MASK`] for a secret that is
    /// set; `<None>` for none.
    pub value: String,
    /// `default`, `file:line`, or what overrode it (`all-in-one`).
    pub source: String,
}

impl Options {
    /// The options with every default applied and no file read.
    pub fn defaults() -> Options {
        match from_files(Vec::new()) {
            Ok(loaded) => loaded.options,
            // The defaults are constants checked by the tests.
            Err(e) => panic!("invalid built-in default: {e}"),
        }
    }

    fn from_config(raw: Arc<Config>) -> Options {
        Reader::new(&raw).options(Arc::clone(&raw))
    }

    /// The value the files set for `group`/`name` (the last one for an
    /// option given several times; the group is normalised like a section
    /// name), modelled or not, with `$var` substitution applied when it
    /// succeeds. `None` when no file sets it. Deprecated names are
    /// followed.
    pub fn lookup(&self, group: &str, name: &str) -> Option<String> {
        self.raw.lookup(group, name)
    }

    /// Every value the files set for `group`/`name` across all files in
    /// load order (what a multi-valued option sees), substituted.
    pub fn lookup_all(&self, group: &str, name: &str) -> Vec<String> {
        self.raw.lookup_all(group, name)
    }

    /// The effective configuration, for `config check`: every modelled
    /// option (and every other option a file sets), in table order, with
    /// its value as a file would write it (secrets masked) and its source.
    pub fn effective(&self) -> Vec<EffectiveOption> {
        let schema = self.raw.schema();
        self.raw
            .effective()
            .into_iter()
            .filter(|row| {
                let listed = schema
                    .get(&row.key.group, &row.key.name)
                    .is_some_and(|o| o.in_sample);
                listed || row.source != oslo_config::Source::Default
            })
            .map(|row| {
                let overridden = self.overrides.iter().rev().find(|(k, _, _)| *k == row.key);
                let (value, source) = match overridden {
                    Some((_, value, why)) => (value.clone(), (*why).to_owned()),
                    None => (row.value, row.source.to_string()),
                };
                EffectiveOption {
                    group: row.key.group,
                    name: row.key.name,
                    value,
                    source,
                }
            })
            .collect()
    }

    /// `[database]/connection` translated for sqlx, with
    /// `[database]/connection_parameters` appended to its query as oslo.db
    /// does at connect time.
    pub fn database_url(&self) -> Result<DatabaseUrl, DatabaseUrlError> {
        let raw = self
            .database
            .connection
            .as_ref()
            .map_or("", |c| c.expose())
            .trim();
        let params = self.database.connection_parameters.trim();
        if params.is_empty() || raw.is_empty() {
            return DatabaseUrl::parse(raw);
        }
        let sep = if raw.contains('?') { '&' } else { '?' };
        DatabaseUrl::parse(&format!("{raw}{sep}{params}"))
    }

    /// The `[driver:<package>]` groups the files set, by package name.
    pub fn driver_groups(&self) -> std::collections::BTreeMap<String, Vec<GroupEntry>> {
        self.raw
            .open_groups("driver:")
            .into_iter()
            .map(|(group, entries)| {
                let package = group.trim_start_matches("driver:").to_owned();
                let entries = entries
                    .into_iter()
                    .map(|(key, value, source)| GroupEntry { key, value, source })
                    .collect();
                (package, entries)
            })
            .collect()
    }

    /// The Identity endpoint Magnum uses for its own Keystone client:
    /// `[keystone_auth]/auth_url`, or `[keystone_authtoken]/
    /// www_authenticate_uri` when that is unset.
    // Magnum: magnum/common/keystone.py KeystoneClientV3.auth_url.
    pub fn keystone_url(&self) -> Option<&str> {
        self.keystone_auth
            .credentials
            .auth_url
            .as_deref()
            .or(self.keystone_authtoken.www_authenticate_uri.as_deref())
    }

    /// Applies what all-in-one implies on top of the files: an SQLite
    /// database `openkeel-magnum.sqlite` in `working_dir` unless one is
    /// configured, no authentication, and the fake driver enabled and used
    /// by default. [`Options::effective`] shows these as `all-in-one`.
    pub fn apply_all_in_one_defaults(&mut self, working_dir: &Path) {
        const WHY: &str = "all-in-one";
        if self
            .database
            .connection
            .as_ref()
            .is_none_or(Secret::is_empty)
        {
            let path = working_dir.join(ALL_IN_ONE_DATABASE_FILE);
            let url = format!("sqlite:///{}", path.display());
            self.overrides
                .push((Key::new("database", "connection"), url.clone(), WHY));
            self.database.connection = Some(Secret::new(url));
        }
        self.default.auth_strategy = AuthStrategy::NoAuth;
        self.overrides.push((
            Key::new("DEFAULT", "auth_strategy"),
            "noauth".to_owned(),
            WHY,
        ));
        if !self
            .drivers
            .enabled_beta_drivers
            .iter()
            .any(|d| d == "fake")
        {
            self.drivers.enabled_beta_drivers.push("fake".to_owned());
            let value = self.drivers.enabled_beta_drivers.join(",");
            self.overrides
                .push((Key::new("drivers", "enabled_beta_drivers"), value, WHY));
        }
        if self.drivers.default_driver.is_none() {
            self.drivers.default_driver = Some("fake".to_owned());
            self.overrides.push((
                Key::new("drivers", "default_driver"),
                "fake".to_owned(),
                WHY,
            ));
        }
    }
}

/// Reads typed values from a loaded configuration, recording what it reads
/// so that the tests can check every modelled option is read exactly once,
/// with its type.
struct Reader<'a> {
    config: &'a Config,
    read: RefCell<Vec<Key>>,
    mismatches: RefCell<Vec<String>>,
}

impl<'a> Reader<'a> {
    fn new(config: &'a Config) -> Self {
        Reader {
            config,
            read: RefCell::new(Vec::new()),
            mismatches: RefCell::new(Vec::new()),
        }
    }

    /// The value of a modelled option. A checked option always has a valid
    /// value in a loaded configuration; anything else is a mistake in the
    /// table, recorded for the tests, and reads as none.
    fn value(&self, group: &str, name: &str) -> &'a Value {
        self.read.borrow_mut().push(Key::new(group, name));
        match self.config.get(group, name) {
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                self.mismatch(format!("{e}"));
                &Value::None
            }
            None => {
                self.mismatch(format!("[{group}]/{name} is not registered"));
                &Value::None
            }
        }
    }

    fn mismatch(&self, what: String) {
        self.mismatches.borrow_mut().push(what);
    }

    fn typed<T>(
        &self,
        group: &str,
        name: &str,
        kind: &str,
        get: impl Fn(&'a Value) -> Option<T>,
    ) -> Option<T> {
        let v = self.value(group, name);
        if *v == Value::None {
            return None;
        }
        let got = get(v);
        if got.is_none() {
            self.mismatch(format!("[{group}]/{name} is not {kind}: {v:?}"));
        }
        got
    }

    fn opt_string(&self, g: &str, n: &str) -> Option<String> {
        self.typed(g, n, "a string", |v| v.as_str().map(str::to_owned))
    }

    fn string(&self, g: &str, n: &str) -> String {
        self.opt_string(g, n).unwrap_or_default()
    }

    fn opt_secret(&self, g: &str, n: &str) -> Option<Secret> {
        self.opt_string(g, n).map(Secret::new)
    }

    fn secret(&self, g: &str, n: &str) -> Secret {
        self.opt_secret(g, n).unwrap_or_default()
    }

    fn opt_int(&self, g: &str, n: &str) -> Option<i64> {
        self.typed(g, n, "an integer", Value::as_int)
    }

    fn int(&self, g: &str, n: &str) -> i64 {
        self.opt_int(g, n).unwrap_or(0)
    }

    fn port(&self, g: &str, n: &str) -> u16 {
        self.typed(g, n, "a port", |v| {
            v.as_int().and_then(|p| u16::try_from(p).ok())
        })
        .unwrap_or(0)
    }

    fn float(&self, g: &str, n: &str) -> f64 {
        self.typed(g, n, "a float", Value::as_float).unwrap_or(0.0)
    }

    fn bool(&self, g: &str, n: &str) -> bool {
        self.typed(g, n, "a boolean", Value::as_bool)
            .unwrap_or(false)
    }

    fn list(&self, g: &str, n: &str) -> Vec<String> {
        self.typed(g, n, "a list", |v| v.as_list().map(<[String]>::to_vec))
            .unwrap_or_default()
    }

    fn credentials(&self, g: &str) -> Credentials {
        Credentials {
            auth_url: self.opt_string(g, "auth_url"),
            system_scope: self.opt_string(g, "system_scope"),
            domain_id: self.opt_string(g, "domain_id"),
            domain_name: self.opt_string(g, "domain_name"),
            project_id: self.opt_string(g, "project_id"),
            project_name: self.opt_string(g, "project_name"),
            project_domain_id: self.opt_string(g, "project_domain_id"),
            project_domain_name: self.opt_string(g, "project_domain_name"),
            trust_id: self.opt_string(g, "trust_id"),
            default_domain_id: self.opt_string(g, "default_domain_id"),
            default_domain_name: self.opt_string(g, "default_domain_name"),
            user_id: self.opt_string(g, "user_id"),
            username: self.opt_string(g, "username"),
            user_domain_id: self.opt_string(g, "user_domain_id"),
            user_domain_name: self.opt_string(g, "user_domain_name"),
            password: self.opt_secret(g, "password"),
        }
    }

    fn client(&self, g: &str) -> Client {
        let tls = schema::CLIENT_GROUPS
            .iter()
            .any(|&(group, tls)| group == g && tls);
        let (ca_file, cert_file, key_file, insecure) = if tls {
            (
                self.opt_string(g, "ca_file"),
                self.opt_string(g, "cert_file"),
                self.opt_string(g, "key_file"),
                self.bool(g, "insecure"),
            )
        } else {
            (None, None, None, false)
        };
        Client {
            region_name: self.opt_string(g, "region_name"),
            endpoint_type: self.string(g, "endpoint_type"),
            ca_file,
            cert_file,
            key_file,
            insecure,
        }
    }

    fn auth_strategy(&self) -> AuthStrategy {
        match self.string("DEFAULT", "auth_strategy").as_str() {
            "noauth" => AuthStrategy::NoAuth,
            _ => AuthStrategy::Keystone,
        }
    }

    fn options(&self, raw: Arc<Config>) -> Options {
        Options {
            default: DefaultGroup {
                debug: self.bool("DEFAULT", "debug"),
                host: self.opt_string("DEFAULT", "host"),
                transport_url: self.secret("DEFAULT", "transport_url"),
                control_exchange: self.string("DEFAULT", "control_exchange"),
                rpc_response_timeout: self.int("DEFAULT", "rpc_response_timeout"),
                service_down_time: self.int("DEFAULT", "service_down_time"),
                periodic_enable: self.bool("DEFAULT", "periodic_enable"),
                periodic_interval_max: self.int("DEFAULT", "periodic_interval_max"),
                log_file: self.opt_string("DEFAULT", "log_file"),
                log_dir: self.opt_string("DEFAULT", "log_dir"),
                use_json: self.bool("DEFAULT", "use_json"),
                use_stderr: self.bool("DEFAULT", "use_stderr"),
                auth_strategy: self.auth_strategy(),
            },
            api: Api {
                host: self.string("api", "host"),
                port: self.port("api", "port"),
                max_limit: self.int("api", "max_limit"),
                api_paste_config: self.string("api", "api_paste_config"),
                ssl_cert_file: self.opt_string("api", "ssl_cert_file"),
                ssl_key_file: self.opt_string("api", "ssl_key_file"),
                enabled_ssl: self.bool("api", "enabled_ssl"),
                workers: self.opt_int("api", "workers"),
                unversioned_at_route_minimum: self.bool("api", "unversioned_at_route_minimum"),
            },
            database: Database {
                connection: self.opt_secret("database", "connection"),
                mysql_engine: self.string("database", "mysql_engine"),
                mysql_sql_mode: self.string("database", "mysql_sql_mode"),
                sqlite_synchronous: self.bool("database", "sqlite_synchronous"),
                connection_recycle_time: self.int("database", "connection_recycle_time"),
                max_pool_size: self.int("database", "max_pool_size"),
                max_overflow: self.int("database", "max_overflow"),
                pool_timeout: self.opt_int("database", "pool_timeout"),
                max_retries: self.int("database", "max_retries"),
                retry_interval: self.int("database", "retry_interval"),
                connection_debug: self.int("database", "connection_debug"),
                db_retry_interval: self.int("database", "db_retry_interval"),
                db_inc_retry_interval: self.bool("database", "db_inc_retry_interval"),
                db_max_retry_interval: self.int("database", "db_max_retry_interval"),
                db_max_retries: self.int("database", "db_max_retries"),
                connection_parameters: self.string("database", "connection_parameters"),
            },
            keystone_authtoken: {
                let g = "keystone_authtoken";
                KeystoneAuthtoken {
                    credentials: self.credentials(g),
                    www_authenticate_uri: self.opt_string(g, "www_authenticate_uri"),
                    auth_version: self.opt_string(g, "auth_version"),
                    interface: self.string(g, "interface"),
                    delay_auth_decision: self.bool(g, "delay_auth_decision"),
                    http_connect_timeout: self.opt_int(g, "http_connect_timeout"),
                    http_request_max_retries: self.int(g, "http_request_max_retries"),
                    certfile: self.opt_string(g, "certfile"),
                    keyfile: self.opt_string(g, "keyfile"),
                    cafile: self.opt_string(g, "cafile"),
                    insecure: self.bool(g, "insecure"),
                    region_name: self.opt_string(g, "region_name"),
                    memcached_servers: self.list(g, "memcached_servers"),
                    token_cache_time: self.int(g, "token_cache_time"),
                    include_service_catalog: self.bool(g, "include_service_catalog"),
                    enforce_token_bind: self.string(g, "enforce_token_bind"),
                    service_token_roles: self.list(g, "service_token_roles"),
                    service_token_roles_required: self.bool(g, "service_token_roles_required"),
                    service_type: self.opt_string(g, "service_type"),
                    auth_type: self.opt_string(g, "auth_type"),
                    auth_section: self.opt_string(g, "auth_section"),
                }
            },
            keystone_auth: {
                let g = "keystone_auth";
                KeystoneAuth {
                    credentials: self.credentials(g),
                    auth_type: self.string(g, "auth_type"),
                    auth_section: self.opt_string(g, "auth_section"),
                    cafile: self.opt_string(g, "cafile"),
                    certfile: self.opt_string(g, "certfile"),
                    keyfile: self.opt_string(g, "keyfile"),
                    insecure: self.bool(g, "insecure"),
                    timeout: self.opt_int(g, "timeout"),
                }
            },
            oslo_policy: OsloPolicy {
                enforce_new_defaults: self.bool("oslo_policy", "enforce_new_defaults"),
                policy_file: self.string("oslo_policy", "policy_file"),
                policy_default_rule: self.string("oslo_policy", "policy_default_rule"),
                policy_dirs: self.list("oslo_policy", "policy_dirs"),
                remote_timeout: self.float("oslo_policy", "remote_timeout"),
            },
            oslo_middleware: OsloMiddleware {
                enable_proxy_headers_parsing: self
                    .bool("oslo_middleware", "enable_proxy_headers_parsing"),
            },
            oslo_messaging_notifications: {
                let g = "oslo_messaging_notifications";
                OsloMessagingNotifications {
                    driver: self.list(g, "driver"),
                    transport_url: self.opt_secret(g, "transport_url"),
                    topics: self.list(g, "topics"),
                    retry: self.int(g, "retry"),
                }
            },
            oslo_messaging_rabbit: {
                let g = "oslo_messaging_rabbit";
                let file = |n: &str| self.opt_string(g, n).filter(|f| !f.is_empty());
                OsloMessagingRabbit {
                    amqp_durable_queues: self.bool(g, "amqp_durable_queues"),
                    amqp_auto_delete: self.bool(g, "amqp_auto_delete"),
                    rabbit_retry_interval: self.int(g, "rabbit_retry_interval"),
                    rabbit_retry_backoff: self.int(g, "rabbit_retry_backoff"),
                    rabbit_interval_max: self.int(g, "rabbit_interval_max"),
                    heartbeat_timeout_threshold: self.int(g, "heartbeat_timeout_threshold"),
                    rabbit_ha_queues: self.bool(g, "rabbit_ha_queues"),
                    rabbit_quorum_queue: self.bool(g, "rabbit_quorum_queue"),
                    rabbit_quorum_delivery_limit: self.int(g, "rabbit_quorum_delivery_limit"),
                    rabbit_quorum_max_memory_length: self.int(g, "rabbit_quorum_max_memory_length"),
                    rabbit_quorum_max_memory_bytes: self.int(g, "rabbit_quorum_max_memory_bytes"),
                    ssl: self.bool(g, "ssl"),
                    ssl_ca_file: file("ssl_ca_file"),
                    ssl_cert_file: file("ssl_cert_file"),
                    ssl_key_file: file("ssl_key_file"),
                }
            },
            cors: Cors {
                allowed_origin: self.list("cors", "allowed_origin"),
                allow_credentials: self.bool("cors", "allow_credentials"),
                expose_headers: self.list("cors", "expose_headers"),
                max_age: self.int("cors", "max_age"),
                allow_methods: self.list("cors", "allow_methods"),
                allow_headers: self.list("cors", "allow_headers"),
            },
            quotas: Quotas {
                max_clusters_per_project: self.int("quotas", "max_clusters_per_project"),
            },
            drivers: Drivers {
                verify_ca: self.bool("drivers", "verify_ca"),
                openstack_ca_file: self.string("drivers", "openstack_ca_file"),
                disabled_drivers: self.list("drivers", "disabled_drivers"),
                enabled_beta_drivers: self.list("drivers", "enabled_beta_drivers"),
                default_driver: self.opt_string("drivers", "default_driver"),
                drivers_path: self.list("drivers", "drivers_path"),
                precompiled_cache_dir: self.string("drivers", "precompiled_cache_dir"),
                pooling_allocator: self.bool("drivers", "pooling_allocator"),
                breaker_threshold: self.int("drivers", "breaker_threshold"),
                breaker_window: self.int("drivers", "breaker_window"),
                breaker_cooldown: self.int("drivers", "breaker_cooldown"),
                max_call_timeout: self.int("drivers", "max_call_timeout"),
                max_memory_mb: self.int("drivers", "max_memory_mb"),
                max_output_kb: self.int("drivers", "max_output_kb"),
                log_kb_per_call: self.int("drivers", "log_kb_per_call"),
                log_lines_per_call: self.int("drivers", "log_lines_per_call"),
                max_state_kb: self.int("drivers", "max_state_kb"),
                status_concurrency: self.int("drivers", "status_concurrency"),
                status_fault_limit: self.int("drivers", "status_fault_limit"),
                max_snapshot_kb: self.int("drivers", "max_snapshot_kb"),
            },
            certificates: Certificates {
                cert_manager_type: self.string("certificates", "cert_manager_type"),
                storage_path: self.string("certificates", "storage_path"),
            },
            x509: X509 {
                allow_ca: self.bool("x509", "allow_ca"),
                allowed_extensions: self.list("x509", "allowed_extensions"),
                allowed_key_usage: self.list("x509", "allowed_key_usage"),
                term_of_validity: self.int("x509", "term_of_validity"),
                rsa_key_size: self.int("x509", "rsa_key_size"),
            },
            cluster: Cluster {
                etcd_discovery_service_endpoint_format: self
                    .string("cluster", "etcd_discovery_service_endpoint_format"),
                nodes_affinity_policy: self.string("cluster", "nodes_affinity_policy"),
                temp_cache_dir: self.string("cluster", "temp_cache_dir"),
                pre_delete_lb_timeout: self.int("cluster", "pre_delete_lb_timeout"),
            },
            cluster_template: ClusterTemplate {
                kubernetes_allowed_network_drivers: self
                    .list("cluster_template", "kubernetes_allowed_network_drivers"),
                kubernetes_default_network_driver: self
                    .string("cluster_template", "kubernetes_default_network_driver"),
            },
            kubernetes: Kubernetes {
                keystone_auth_default_policy: self
                    .string("kubernetes", "keystone_auth_default_policy"),
                post_install_manifest_url: self.string("kubernetes", "post_install_manifest_url"),
                health_polling_interval: self.int("kubernetes", "health_polling_interval"),
            },
            cinder: Cinder {
                default_docker_volume_type: self.string("cinder", "default_docker_volume_type"),
                default_etcd_volume_type: self.string("cinder", "default_etcd_volume_type"),
                default_boot_volume_type: self.string("cinder", "default_boot_volume_type"),
                default_boot_volume_size: self.int("cinder", "default_boot_volume_size"),
            },
            conductor: Conductor {
                topic: self.string("conductor", "topic"),
                workers: self.opt_int("conductor", "workers"),
            },
            profiler: Profiler {
                enabled: self.bool("profiler", "enabled"),
            },
            healthcheck: Healthcheck {
                backends: self.list("healthcheck", "backends"),
                detailed: self.bool("healthcheck", "detailed"),
                disable_by_file_path: self.string("healthcheck", "disable_by_file_path"),
            },
            capi: Capi {
                kubeconfig: self.string("capi", "kubeconfig"),
                management_cluster: self.string("capi", "management_cluster"),
                namespace: self.string("capi", "namespace"),
                enabled: self.bool("capi", "enabled"),
                lease_namespace: self.string("capi", "lease_namespace"),
                lease_duration: self.int("capi", "lease_duration"),
                renew_deadline: self.int("capi", "renew_deadline"),
                retry_period: self.int("capi", "retry_period"),
                resync_interval: self.int("capi", "resync_interval"),
                request_timeout: self.int("capi", "request_timeout"),
                update_grace: self.int("capi", "update_grace"),
                delete_timeout: self.int("capi", "delete_timeout"),
                app_credential_roles: self.list("capi", "app_credential_roles"),
                addons_manifests_dir: self.string("capi", "addons_manifests_dir"),
            },
            metrics: Metrics {
                enabled: self.bool("metrics", "enabled"),
                host: self.string("metrics", "host"),
                port: self.port("metrics", "port"),
            },
            tracing: Tracing {
                otlp_endpoint: self.string("tracing", "otlp_endpoint"),
                service_name: self.string("tracing", "service_name"),
                sample_ratio: self.float("tracing", "sample_ratio"),
                export_timeout: self.int("tracing", "export_timeout"),
            },
            glance_client: self.client("glance_client"),
            nova_client: self.client("nova_client"),
            neutron_client: self.client("neutron_client"),
            cinder_client: self.client("cinder_client"),
            barbican_client: self.client("barbican_client"),
            magnum_client: self.client("magnum_client"),
            octavia_client: self.client("octavia_client"),
            capi_client: self.client("capi_client"),
            manila_client: self.client("manila_client"),
            files: raw.files().map(PathBuf::from).collect(),
            raw,
            overrides: Vec::new(),
        }
    }

    /// What the reader saw: the keys read and the mistakes found.
    #[cfg(test)]
    fn report(&self) -> (std::collections::BTreeSet<Key>, Vec<Key>, Vec<String>) {
        let read = self.read.borrow();
        let set = read.iter().cloned().collect();
        let mut dup = read.clone();
        dup.sort();
        let twice: Vec<Key> = dup
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0].clone())
            .collect();
        (set, twice, self.mismatches.borrow().clone())
    }
}
