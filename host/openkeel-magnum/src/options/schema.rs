//! Magnum's option table: every option openkeel-magnum models, with the
//! group, name, type, default and help Magnum 23.0.0 (and the oslo
//! libraries and keystonemiddleware it ships) give it, plus openkeel-magnum's
//! own; and every other option of the reference sample configuration,
//! accepted without effect.

use oslo_config::{Opt, OptType, Schema};

use super::known::KNOWN;

/// The namespaces the reference sample groups options under.
const MAGNUM: &str = "magnum.conf";
const OSLO_LOG: &str = "oslo.log";
const OSLO_MESSAGING: &str = "oslo.messaging";
const OSLO_CORS: &str = "oslo.middleware.cors";
const OSLO_DB: &str = "oslo.db";
const OSLO_POLICY: &str = "oslo.policy";
const AUTH_TOKEN: &str = "keystonemiddleware.auth_token";
/// Not in Magnum's sample generator, but read by the middleware Magnum's
/// paste pipeline loads.
const PROXY_HEADERS: &str = "oslo.middleware.http_proxy_to_wsgi";
/// Set in Magnum's api-paste.ini, which openkeel-magnum does not read.
const HEALTHCHECK: &str = "oslo.middleware.healthcheck";
/// The keystoneauth1 password plugin, which keystonemiddleware registers
/// in [keystone_authtoken] once it loads the plugin.
const KEYSTONEAUTH: &str = "keystoneauth1";
/// openkeel-magnum's own options.
const OURS: &str = "openkeel-magnum";

/// The order of the namespaces within a group of the sample, as Magnum's
/// generator configuration lists them.
pub(super) const NAMESPACE_ORDER: &[&str] = &[
    MAGNUM,
    OSLO_DB,
    OSLO_LOG,
    OSLO_MESSAGING,
    OSLO_CORS,
    PROXY_HEADERS,
    HEALTHCHECK,
    OSLO_POLICY,
    AUTH_TOKEN,
    KEYSTONEAUTH,
    OURS,
];

/// Magnum's allowed x509 extension names (magnum/common/x509/extensions.py).
pub(super) const X509_EXTENSIONS: &[&str] = &[
    "authorityKeyIdentifier",
    "subjectKeyIdentifier",
    "authorityInfoAccess",
    "basicConstraints",
    "cRLDistributionPoints",
    "certificatePolicies",
    "extendedKeyUsage",
    "OCSPNoCheck",
    "inhibitAnyPolicy",
    "keyUsage",
    "nameConstraints",
    "subjectAltName",
    "issuerAltName",
];

/// Magnum's allowed key usage names (magnum/common/x509/extensions.py).
pub(super) const X509_KEY_USAGES: &[&str] = &[
    "Digital Signature",
    "Non Repudiation",
    "Key Encipherment",
    "Data Encipherment",
    "Key Agreement",
    "Certificate Sign",
    "CRL Sign",
    "Encipher Only",
    "Decipher Only",
];

fn int(min: Option<i64>, max: Option<i64>) -> OptType {
    OptType::Integer { min, max }
}

fn choices(values: &[&str]) -> OptType {
    OptType::String {
        choices: values.iter().map(|s| (*s).to_owned()).collect(),
    }
}

fn list_of(values: &[&str]) -> OptType {
    OptType::List {
        choices: values.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// The keystoneauth1 "password" plugin options of `group`, in the order
/// keystoneauth1 lists them.
pub(super) fn credentials(group: &str, namespace: &str) -> Vec<Opt> {
    let s = OptType::string;
    vec![
        Opt::new(group, "auth_url", s()).help("Authentication URL"),
        Opt::new(group, "system_scope", s()).help("Scope for system operations"),
        Opt::new(group, "domain_id", s()).help("Domain ID to scope to"),
        Opt::new(group, "domain_name", s()).help("Domain name to scope to"),
        Opt::new(group, "project_id", s()).deprecated_name("tenant_id").help("Project ID to scope to"),
        Opt::new(group, "project_name", s()).deprecated_name("tenant_name").help("Project name to scope to"),
        Opt::new(group, "project_domain_id", s()).help("Domain ID containing project"),
        Opt::new(group, "project_domain_name", s()).help("Domain name containing project"),
        Opt::new(group, "trust_id", s()).help("ID of the trust to use as a trustee use"),
        Opt::new(group, "default_domain_id", s()).help(
            "Optional domain ID to use with v3 and v2 parameters. It will be used for both the user and \
             project domain in v3 and ignored in v2 authentication.",
        ),
        Opt::new(group, "default_domain_name", s()).help(
            "Optional domain name to use with v3 API and v2 parameters. It will be used for both the user \
             and project domain in v3 and ignored in v2 authentication.",
        ),
        Opt::new(group, "user_id", s()).help("User id"),
        Opt::new(group, "username", s()).deprecated_name("user_name").help("Username"),
        Opt::new(group, "user_domain_id", s()).help("User's domain id"),
        Opt::new(group, "user_domain_name", s()).help("User's domain name"),
        Opt::new(group, "password", s()).secret().help("User's password"),
    ]
    .into_iter()
    .map(|o| o.namespace(namespace))
    .collect()
}

/// The client groups, and whether the group has the TLS options (Magnum
/// 23.0.0 registers them for [octavia_client] only; [capi_client] and
/// [manila_client] are magnum-cluster-api's: how a cluster reaches the
/// cloud's APIs, and how drivers reach Manila).
pub(super) const CLIENT_GROUPS: [(&str, bool); 9] = [
    ("glance_client", false),
    ("nova_client", false),
    ("neutron_client", false),
    ("cinder_client", false),
    ("barbican_client", false),
    ("magnum_client", false),
    ("octavia_client", true),
    ("capi_client", true),
    ("manila_client", true),
];

/// The options of one [<service>_client] group.
fn client(group: &str, tls: bool) -> Vec<Opt> {
    let mut opts = vec![
        Opt::new(group, "region_name", OptType::string()).help(
            "Region in Identity service catalog to use for communication with the OpenStack service.",
        ),
        Opt::new(group, "endpoint_type", OptType::string()).default("publicURL").help(
            "Type of endpoint in Identity service catalog to use for communication with the OpenStack \
             service.",
        ),
    ];
    if tls {
        opts.extend([
            Opt::new(group, "ca_file", OptType::string())
                .help("Optional CA cert file to use in SSL connections."),
            Opt::new(group, "cert_file", OptType::string())
                .help("Optional PEM-formatted certificate chain file."),
            Opt::new(group, "key_file", OptType::string())
                .help("Optional PEM-formatted file that contains the private key."),
            Opt::new(group, "insecure", OptType::Boolean)
                .default("false")
                .help("If set, then the server's certificate will not be verified."),
        ]);
    }
    opts.into_iter().map(|o| o.namespace(MAGNUM)).collect()
}

/// The options openkeel-magnum models, in registration order.
pub(super) fn modelled() -> Vec<Opt> {
    let mut opts = vec![
        Opt::new("DEFAULT", "debug", OptType::Boolean)
            .default("false")
            .namespace(OSLO_LOG)
            .help("If set to true, the logging level will be set to DEBUG instead of the default INFO level."),
        Opt::new("DEFAULT", "host", OptType::HostAddress)
            .namespace(MAGNUM)
            .help("Name of this node. This can be an opaque identifier. It is not necessarily a hostname, FQDN, or IP address. However, the node name must be valid within an AMQP key."),
        Opt::new("DEFAULT", "transport_url", OptType::string())
            .default("rabbit://")
            .secret()
            .namespace(OSLO_MESSAGING)
            .help("The network address and optional user credentials for connecting to the messaging backend, in URL format. The expected format is:\ndriver://[user:pass@]host:port[,[userN:passN@]hostN:portN]/virtual_host?query\nExample: rabbit://rabbitmq:password@127.0.0.1:5672//\nFor full details on the fields in the URL see the documentation of oslo_messaging.TransportURL at https://docs.openstack.org/oslo.messaging/latest/reference/transport.html"),
        // Magnum: magnum/common/rpc.py set_defaults(control_exchange='magnum').
        Opt::new("DEFAULT", "control_exchange", OptType::string())
            .default("magnum")
            .namespace(OSLO_MESSAGING)
            .help("The default exchange under which topics are scoped. May be overridden by an exchange name specified in the transport_url option."),
        Opt::new("DEFAULT", "rpc_response_timeout", int(None, None))
            .default("60")
            .namespace(OSLO_MESSAGING)
            .help("Seconds to wait for a response from a call."),
        Opt::new("DEFAULT", "service_down_time", int(None, None))
            .default("180")
            .namespace(MAGNUM)
            .help("Max interval size between periodic tasks execution in seconds."),
        Opt::new("DEFAULT", "periodic_enable", OptType::Boolean)
            .default("true")
            .namespace(MAGNUM)
            .help("Enable periodic tasks."),
        Opt::new("DEFAULT", "periodic_interval_max", int(None, None))
            .default("60")
            .namespace(MAGNUM)
            .help("Max interval size between periodic tasks execution in seconds."),
        Opt::new("DEFAULT", "log_file", OptType::string())
            .deprecated_name("logfile")
            .namespace(OSLO_LOG)
            .help("(Optional) Name of log file to send logging output to. If no default is set, logging will go to stderr as defined by use_stderr. This option is ignored if log_config_append is set."),
        Opt::new("DEFAULT", "log_dir", OptType::string())
            .deprecated_name("logdir")
            .namespace(OSLO_LOG)
            .help("(Optional) The base directory used for relative log_file  paths. This option is ignored if log_config_append is set."),
        Opt::new("DEFAULT", "use_json", OptType::Boolean)
            .default("false")
            .namespace(OSLO_LOG)
            .help("Use JSON formatting for logging. This option is ignored if log_config_append is set."),
        Opt::new("DEFAULT", "use_stderr", OptType::Boolean)
            .default("false")
            .namespace(OSLO_LOG)
            .help("Log output to standard error. This option is ignored if log_config_append is set."),
        Opt::new("DEFAULT", "auth_strategy", choices(&["keystone", "noauth"]))
            .default("keystone")
            .namespace(OURS)
            .help("How API requests are authenticated: \"keystone\" validates tokens with Keystone; \"noauth\" trusts the identity headers of the request and is for tests and all-in-one only."),
        Opt::new("api", "port", OptType::Port)
            .default("9511")
            .namespace(MAGNUM)
            .help("The port for the Magnum API server."),
        Opt::new("api", "host", OptType::IpAddress)
            .default("127.0.0.1")
            .namespace(MAGNUM)
            .help("The listen IP for the Magnum API server."),
        Opt::new("api", "max_limit", int(None, None))
            .default("1000")
            .namespace(MAGNUM)
            .help("The maximum number of items returned in a single response from a collection resource."),
        Opt::new("api", "api_paste_config", OptType::string())
            .default("api-paste.ini")
            .ignored("the middleware pipeline is built in; the paste file is not read")
            .namespace(MAGNUM)
            .help("Configuration file for WSGI definition of API."),
        Opt::new("api", "ssl_cert_file", OptType::string())
            .namespace(MAGNUM)
            .help("This option allows setting path to the SSL certificate of API server."),
        Opt::new("api", "ssl_key_file", OptType::string())
            .namespace(MAGNUM)
            .help("This option specifies the path to the file where SSL private key of API server is stored when SSL is in effect."),
        Opt::new("api", "enabled_ssl", OptType::Boolean)
            .default("false")
            .namespace(MAGNUM)
            .help("Enable SSL Magnum API service"),
        Opt::new("api", "workers", int(None, None))
            .namespace(MAGNUM)
            .help("The maximum number of magnum-api processes to fork and run. Default to number of CPUs on the host."),
        Opt::new("database", "connection", OptType::string())
            .secret()
            .namespace(OSLO_DB)
            .help("The SQLAlchemy connection string to use to connect to the database."),
        Opt::new("database", "mysql_engine", OptType::string())
            .default("InnoDB")
            .namespace(MAGNUM)
            .help("MySQL engine to use."),
        Opt::new("database", "mysql_sql_mode", OptType::string())
            .default("TRADITIONAL")
            .namespace(OSLO_DB)
            .help("The SQL mode to be used for MySQL sessions. This option, including the default, overrides any server-set SQL mode. To use whatever SQL mode is set by the server configuration, set this to no value. Example: mysql_sql_mode="),
        Opt::new("database", "sqlite_synchronous", OptType::Boolean)
            .default("true")
            .namespace(OSLO_DB)
            .help("If True, SQLite uses synchronous mode."),
        Opt::new("database", "connection_recycle_time", int(None, None))
            .default("3600")
            .namespace(OSLO_DB)
            .help("Connections which have been present in the connection pool longer than this number of seconds will be replaced with a new one the next time they are checked out from the pool."),
        Opt::new("database", "max_pool_size", int(None, None))
            .default("5")
            .namespace(OSLO_DB)
            .help("Maximum number of SQL connections to keep open in a pool. Setting a value of 0 indicates no limit."),
        Opt::new("database", "max_overflow", int(None, None))
            .default("50")
            .namespace(OSLO_DB)
            .help("If set, use this value for max_overflow with SQLAlchemy."),
        Opt::new("database", "pool_timeout", int(None, None))
            .namespace(OSLO_DB)
            .help("If set, use this value for pool_timeout with SQLAlchemy."),
        Opt::new("database", "max_retries", int(None, None))
            .default("10")
            .namespace(OSLO_DB)
            .help("Maximum number of database connection retries during startup. Set to -1 to specify an infinite retry count."),
        Opt::new("database", "retry_interval", int(None, None))
            .default("10")
            .namespace(OSLO_DB)
            .help("Interval between retries of opening a SQL connection."),
        Opt::new("database", "connection_debug", int(Some(0), Some(100)))
            .default("0")
            .namespace(OSLO_DB)
            .help("Verbosity of SQL debugging information: 0=None, 100=Everything."),
        Opt::new("database", "db_retry_interval", int(None, None))
            .default("1")
            .namespace(OSLO_DB)
            .help("Seconds between retries of a database transaction."),
        Opt::new("database", "db_inc_retry_interval", OptType::Boolean)
            .default("true")
            .namespace(OSLO_DB)
            .help("If True, increases the interval between retries of a database operation up to db_max_retry_interval."),
        Opt::new("database", "db_max_retry_interval", int(None, None))
            .default("10")
            .namespace(OSLO_DB)
            .help("If db_inc_retry_interval is set, the maximum seconds between retries of a database operation."),
        Opt::new("database", "db_max_retries", int(None, None))
            .default("20")
            .namespace(OSLO_DB)
            .help("Maximum retries in case of connection error or deadlock error before error is raised. Set to -1 to specify an infinite retry count."),
        Opt::new("database", "connection_parameters", OptType::string())
            .default("")
            .namespace(OSLO_DB)
            .help("Optional URL parameters to append onto the connection URL at connect time; specify as param1=value1&param2=value2&..."),
        Opt::new("keystone_authtoken", "www_authenticate_uri", OptType::string())
            .namespace(AUTH_TOKEN)
            .help("Complete \"public\" Identity API endpoint. This endpoint should not be an \"admin\" endpoint, as it should be accessible by all end users. Unauthenticated clients are redirected to this endpoint to authenticate. Although this endpoint should ideally be unversioned, client support in the wild varies."),
        Opt::new("keystone_authtoken", "auth_version", OptType::string())
            .namespace(AUTH_TOKEN)
            .help("API version of the Identity API endpoint."),
        Opt::new("keystone_authtoken", "interface", OptType::string())
            .default("internal")
            .namespace(AUTH_TOKEN)
            .help("Interface to use for the Identity API endpoint. Valid values are \"public\", \"internal\" (default) or \"admin\"."),
        Opt::new("keystone_authtoken", "delay_auth_decision", OptType::Boolean)
            .default("false")
            .namespace(AUTH_TOKEN)
            .help("Do not handle authorization requests within the middleware, but delegate the authorization decision to downstream WSGI components."),
        Opt::new("keystone_authtoken", "http_connect_timeout", int(None, None))
            .namespace(AUTH_TOKEN)
            .help("Request timeout value for communicating with Identity API server."),
        Opt::new("keystone_authtoken", "http_request_max_retries", int(None, None))
            .default("3")
            .namespace(AUTH_TOKEN)
            .help("How many times are we trying to reconnect when communicating with Identity API Server."),
        Opt::new("keystone_authtoken", "certfile", OptType::string())
            .namespace(AUTH_TOKEN)
            .help("Required if identity server requires client certificate"),
        Opt::new("keystone_authtoken", "keyfile", OptType::string())
            .namespace(AUTH_TOKEN)
            .help("Required if identity server requires client certificate"),
        Opt::new("keystone_authtoken", "cafile", OptType::string())
            .namespace(AUTH_TOKEN)
            .help("A PEM encoded Certificate Authority to use when verifying HTTPs connections. Defaults to system CAs."),
        Opt::new("keystone_authtoken", "insecure", OptType::Boolean)
            .default("false")
            .namespace(AUTH_TOKEN)
            .help("Verify HTTPS connections."),
        Opt::new("keystone_authtoken", "region_name", OptType::string())
            .namespace(AUTH_TOKEN)
            .help("The region in which the identity server can be found."),
        Opt::new("keystone_authtoken", "memcached_servers", OptType::list())
            .deprecated_name("memcache_servers")
            .ignored("tokens are cached in-process; memcached is not used")
            .namespace(AUTH_TOKEN)
            .help("Optionally specify a list of memcached server(s) to use for caching. If left undefined, tokens will instead be cached in-process."),
        Opt::new("keystone_authtoken", "token_cache_time", int(None, None))
            .default("300")
            .namespace(AUTH_TOKEN)
            .help("In order to prevent excessive effort spent validating tokens, the middleware caches previously-seen tokens for a configurable duration (in seconds). Set to -1 to disable caching completely."),
        Opt::new("keystone_authtoken", "include_service_catalog", OptType::Boolean)
            .default("true")
            .namespace(AUTH_TOKEN)
            .help("(Optional) Indicate whether to set the X-Service-Catalog header. If False, middleware will not ask for service catalog on token validation and will not set the X-Service-Catalog header."),
        Opt::new("keystone_authtoken", "enforce_token_bind", OptType::string())
            .default("permissive")
            .namespace(AUTH_TOKEN)
            .help("Used to control the use and type of token binding. Can be set to: \"disabled\" to not check token binding. \"permissive\" (default) to validate binding information if the bind type is of a form known to the server and ignore it if not. \"strict\" like \"permissive\" but if the bind type is unknown the token will be rejected. \"required\" any form of token binding is needed to be allowed. Finally the name of a binding method that must be present in tokens."),
        Opt::new("keystone_authtoken", "service_token_roles", OptType::list())
            .default("service")
            .namespace(AUTH_TOKEN)
            .help("A choice of roles that must be present in a service token. Service tokens are allowed to request that an expired token can be used and so this check should tightly control that only actual services should be sending this token. Roles here are applied as an ANY check so any role in this list must be present. For backwards compatibility reasons this currently only affects the allow_expired check."),
        Opt::new("keystone_authtoken", "service_token_roles_required", OptType::Boolean)
            .default("true")
            .namespace(AUTH_TOKEN)
            .help("When set to True, service tokens must contain a role from the service_token_roles list to be considered valid. This prevents end-user tokens from being used as service tokens and ensures proper service-to- service authentication. Setting this to False is NOT RECOMMENDED as it allows any valid token to be used as a service token, which can bypass access-rule checks and weaken composite-auth protections."),
        Opt::new("keystone_authtoken", "service_type", OptType::string())
            .namespace(AUTH_TOKEN)
            .help("The name or type of the service as it appears in the service catalog. This is used to validate tokens that have restricted access rules."),
        Opt::new("keystone_authtoken", "auth_type", OptType::string())
            .deprecated_name("auth_plugin")
            .namespace(AUTH_TOKEN)
            .help("Authentication type to load"),
        Opt::new("keystone_authtoken", "auth_section", OptType::string())
            .namespace(AUTH_TOKEN)
            .help("Config Section from which to load plugin specific options"),
        // Magnum: magnum/conf/keystone.py forces auth_type's default to "password".
        Opt::new("keystone_auth", "auth_type", OptType::string())
            .default("password")
            .deprecated_name("auth_plugin")
            .namespace(MAGNUM)
            .help("Authentication type to load"),
        Opt::new("keystone_auth", "auth_section", OptType::string())
            .namespace(MAGNUM)
            .help("Config Section from which to load plugin specific options"),
        // keystoneauth1 session options: registered by Magnum, not in the sample.
        Opt::new("keystone_auth", "cafile", OptType::string())
            .namespace(MAGNUM)
            .help("PEM encoded Certificate Authority to use when verifying HTTPs connections."),
        Opt::new("keystone_auth", "certfile", OptType::string())
            .namespace(MAGNUM)
            .help("PEM encoded client certificate cert file."),
        Opt::new("keystone_auth", "keyfile", OptType::string())
            .namespace(MAGNUM)
            .help("PEM encoded client certificate key file."),
        Opt::new("keystone_auth", "insecure", OptType::Boolean)
            .default("false")
            .namespace(MAGNUM)
            .help("Verify HTTPS connections."),
        Opt::new("keystone_auth", "timeout", int(None, None))
            .namespace(MAGNUM)
            .help("Timeout value for http requests."),
        Opt::new("oslo_policy", "enforce_new_defaults", OptType::Boolean)
            .default("true")
            .namespace(OSLO_POLICY)
            .help("This option controls whether or not to use old deprecated defaults when evaluating policies. If ``True``, the old deprecated defaults are not going to be evaluated. This means if any existing token is allowed for old defaults but is disallowed for new defaults, it will be disallowed. If ``False``, the deprecated policy check string is logically OR'd with the new policy check string, allowing for a graceful upgrade experience between releases with new policies, which is the default behavior."),
        Opt::new("oslo_policy", "policy_file", OptType::string())
            .default("policy.yaml")
            .namespace(OSLO_POLICY)
            .help("The relative or absolute path of a file that maps roles to permissions for a given service. Relative paths must be specified in relation to the configuration file setting this option."),
        Opt::new("oslo_policy", "policy_default_rule", OptType::string())
            .default("default")
            .namespace(OSLO_POLICY)
            .help("Default rule. Enforced when a requested rule is not found."),
        Opt::new("oslo_policy", "policy_dirs", OptType::MultiString)
            .default("policy.d")
            .namespace(OSLO_POLICY)
            .help("Directories where policy configuration files are stored. They can be relative to any directory in the search path defined by the config_dir option, or absolute paths. The file defined by policy_file must exist for these directories to be searched.  Missing or empty directories are ignored."),
        Opt::new("oslo_policy", "remote_timeout", OptType::Float { min: Some(0.0), max: None })
            .default("60")
            .namespace(OSLO_POLICY)
            .help("Timeout in seconds for REST based policy check"),
        // oslo.policy 6.x has no enforce_scope (and Magnum's scope checks never
        // fail: it passes no system scope); accepted with a warning, readable
        // through Lookup.
        Opt::new("oslo_policy", "enforce_scope", OptType::Boolean)
            .default("true")
            .ignored("oslo.policy 6.x has no such option")
            .unchecked()
            .namespace(OSLO_POLICY)
            .help("Whether to enforce scope when evaluating policies; oslo.policy 6 removed it, and Magnum never fails a scope check."),
        Opt::new("oslo_middleware", "enable_proxy_headers_parsing", OptType::Boolean)
            .default("false")
            .namespace(PROXY_HEADERS)
            .help("Whether the application is behind a proxy or not. This determines if the middleware should parse the headers or not."),
        Opt::new("oslo_messaging_notifications", "driver", OptType::MultiString)
            .default("")
            .namespace(OSLO_MESSAGING)
            .help("The Drivers(s) to handle sending notifications. Possible values are messaging, messagingv2, routing, log, test, noop"),
        Opt::new("oslo_messaging_notifications", "transport_url", OptType::string())
            .secret()
            .namespace(OSLO_MESSAGING)
            .help("A URL representing the messaging driver to use for notifications. If not set, we fall back to the same configuration used for RPC."),
        Opt::new("oslo_messaging_notifications", "topics", OptType::list())
            .default("notifications")
            .namespace(OSLO_MESSAGING)
            .help("AMQP topic used for OpenStack notifications."),
        Opt::new("oslo_messaging_notifications", "retry", int(None, None))
            .default("-1")
            .namespace(OSLO_MESSAGING)
            .help("The maximum number of attempts to re-send a notification message which failed to be delivered due to a recoverable error. 0 - No retry, -1 - indefinite"),
        Opt::new("oslo_messaging_rabbit", "amqp_durable_queues", OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Declare the notification exchange and queues durable, so that they and the persistent messages they hold survive a broker restart."),
        Opt::new("oslo_messaging_rabbit", "amqp_auto_delete", OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Declare the notification exchange and queues auto-deleted."),
        Opt::new("oslo_messaging_rabbit", "rabbit_retry_interval", int(None, None))
            .default("1")
            .namespace(OSLO_MESSAGING)
            .help("Seconds before the first retry of a notification the broker did not take."),
        Opt::new("oslo_messaging_rabbit", "rabbit_retry_backoff", int(None, None))
            .default("2")
            .namespace(OSLO_MESSAGING)
            .help("Seconds added to the wait at every further retry."),
        Opt::new("oslo_messaging_rabbit", "rabbit_interval_max", int(None, None))
            .default("30")
            .namespace(OSLO_MESSAGING)
            .help("The longest wait between two retries, in seconds."),
        Opt::new("oslo_messaging_rabbit", "heartbeat_timeout_threshold", int(None, None))
            .default("60")
            .namespace(OSLO_MESSAGING)
            .help("Seconds without a heartbeat after which the broker connection counts as lost; 0 turns heartbeats off."),
        Opt::new("oslo_messaging_rabbit", "rabbit_ha_queues", OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Declare the queues mirrored on every node (x-ha-policy: all)."),
        Opt::new("oslo_messaging_rabbit", "rabbit_quorum_queue", OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Declare the queues as quorum queues (durable)."),
        Opt::new("oslo_messaging_rabbit", "rabbit_quorum_delivery_limit", int(None, None))
            .default("0")
            .namespace(OSLO_MESSAGING)
            .help("x-delivery-limit of a quorum queue; 0 leaves it unset."),
        Opt::new("oslo_messaging_rabbit", "rabbit_quorum_max_memory_length", int(None, None))
            .default("0")
            .namespace(OSLO_MESSAGING)
            .help("x-max-in-memory-length of a quorum queue; 0 leaves it unset."),
        Opt::new("oslo_messaging_rabbit", "rabbit_quorum_max_memory_bytes", int(None, None))
            .default("0")
            .namespace(OSLO_MESSAGING)
            .help("x-max-in-memory-bytes of a quorum queue; 0 leaves it unset."),
        Opt::new("oslo_messaging_rabbit", "ssl", OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Connect to the broker over TLS."),
        Opt::new("oslo_messaging_rabbit", "ssl_ca_file", OptType::string())
            .default("")
            .namespace(OSLO_MESSAGING)
            .help("PEM file of the CAs that sign the broker's certificate."),
        Opt::new("oslo_messaging_rabbit", "ssl_cert_file", OptType::string())
            .default("")
            .namespace(OSLO_MESSAGING)
            .help("PEM client certificate presented to the broker."),
        Opt::new("oslo_messaging_rabbit", "ssl_key_file", OptType::string())
            .default("")
            .namespace(OSLO_MESSAGING)
            .help("PEM (PKCS#8) key of the client certificate."),
        Opt::new("cors", "allowed_origin", OptType::list())
            .namespace(OSLO_CORS)
            .help("Indicate whether this resource may be shared with the domain received in the requests \"origin\" header. Format: \"<protocol>://<host>[:<port>]\", no trailing slash. Example: https://horizon.example.com"),
        Opt::new("cors", "allow_credentials", OptType::Boolean)
            .default("true")
            .namespace(OSLO_CORS)
            .help("Indicate that the actual request can include user credentials"),
        // Magnum: magnum/common/config.py set_cors_middleware_defaults.
        Opt::new("cors", "expose_headers", OptType::list())
            .default("X-Auth-Token,X-Subject-Token,X-Service-Token,X-OpenStack-Request-ID,X-Server-Management-Url")
            .namespace(OSLO_CORS)
            .help("Indicate which headers are safe to expose to the API. Defaults to HTTP Simple Headers."),
        Opt::new("cors", "max_age", int(None, None))
            .default("3600")
            .namespace(OSLO_CORS)
            .help("Maximum cache age of CORS preflight requests."),
        Opt::new("cors", "allow_methods", OptType::list())
            .default("GET,PUT,POST,DELETE,PATCH")
            .namespace(OSLO_CORS)
            .help("Indicate which methods can be used during the actual request."),
        Opt::new("cors", "allow_headers", OptType::list())
            .default("X-Auth-Token,X-Identity-Status,X-Roles,X-Service-Catalog,X-User-Id,X-Tenant-Id,X-OpenStack-Request-ID,X-Server-Management-Url")
            .namespace(OSLO_CORS)
            .help("Indicate which header field names may be used during the actual request."),
        Opt::new("quotas", "max_clusters_per_project", int(None, None))
            .default("20")
            .namespace(MAGNUM)
            .help("Max number of clusters allowed per project. Admin can override this default quota for a project by setting explicit limit in quotas DB table (using /quotas REST API endpoint)."),
        Opt::new("drivers", "verify_ca", OptType::Boolean)
            .default("true")
            .namespace(MAGNUM)
            .help("Indicates whether the cluster nodes validate the Certificate Authority when making requests to the OpenStack APIs (Keystone, Magnum, Heat). If you have self-signed certificates for the OpenStack APIs or you have your own Certificate Authority and you have not installed the Certificate Authority to all nodes, you may need to disable CA validation by setting this flag to False."),
        Opt::new("drivers", "openstack_ca_file", OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("Path to the OpenStack CA-bundle file to pass and install in all cluster nodes."),
        Opt::new("drivers", "disabled_drivers", OptType::list())
            .default("")
            .namespace(MAGNUM)
            .help("Disabled driver entry points. If empty, then all available drivers are enabled."),
        Opt::new("drivers", "enabled_beta_drivers", OptType::list())
            .default("")
            .namespace(MAGNUM)
            .help("List of beta drivers to enable. Beta drivers are not intended for production."),
        Opt::new("drivers", "default_driver", OptType::string())
            .namespace(MAGNUM)
            .help("Default driver to use for cluster templates when no driver is specified by the user or image metadata. If not set, defaults to the first alphabetically sorted available driver."),
        Opt::new("drivers", "drivers_path", OptType::list())
            .default("")
            .namespace(OURS)
            .help("Directories of driver packages (<dir>/<package>/driver.toml and its component), loaded at start besides the built-in drivers."),
        Opt::new("drivers", "precompiled_cache_dir", OptType::string())
            .default("")
            .namespace(OURS)
            .help("Where compiled driver components are kept between starts, by their SHA-256 and the engine's version. Empty: compile at every start."),
        Opt::new("drivers", "pooling_allocator", OptType::Boolean)
            .default("true")
            .namespace(OURS)
            .help("Reserve instance slots for driver calls at start (fast instantiation); the host falls back to on-demand allocation when the reservation fails."),
        Opt::new("drivers", "breaker_threshold", int(Some(1), None))
            .default("5")
            .namespace(OURS)
            .help("Faults (traps, timeouts, oversized answers) of one driver within breaker_window that open its breaker."),
        Opt::new("drivers", "breaker_window", int(Some(1), None))
            .default("60")
            .namespace(OURS)
            .help("Seconds over which a driver's faults are counted."),
        Opt::new("drivers", "breaker_cooldown", int(Some(1), None))
            .default("30")
            .namespace(OURS)
            .help("Seconds an open breaker first refuses a driver's calls; then one call probes the driver, and each failed probe doubles the time, up to 16 times this."),
        Opt::new("drivers", "max_call_timeout", int(Some(1), None))
            .default("300")
            .namespace(OURS)
            .help("The longest deadline of one driver call, in seconds, whatever a driver's manifest or [driver:<name>] group asks."),
        Opt::new("drivers", "max_memory_mb", int(Some(1), Some(1024)))
            .default("512")
            .namespace(OURS)
            .help("The largest memory of one driver instance, in MiB, whatever a driver's manifest or [driver:<name>] group asks."),
        Opt::new("drivers", "max_output_kb", int(Some(1), None))
            .default("16384")
            .namespace(OURS)
            .help("The largest answer of one driver call, in KiB, whatever a driver's manifest or [driver:<name>] group asks."),
        Opt::new("drivers", "log_kb_per_call", int(Some(1), None))
            .default("64")
            .namespace(OURS)
            .help("What one driver call may log (through the log import, stdout and stderr together), in KiB; the rest is dropped and counted in one line."),
        Opt::new("drivers", "log_lines_per_call", int(Some(1), None))
            .default("200")
            .namespace(OURS)
            .help("The log lines one driver call may write; the rest is dropped and counted in one line. Each line is cut at 4 KiB."),
        Opt::new("drivers", "max_state_kb", int(Some(1), None))
            .default("64")
            .namespace(OURS)
            .help("What a driver may keep per cluster in its state store, in KiB."),
        Opt::new("drivers", "status_concurrency", int(Some(1), None))
            .default("4")
            .namespace(OURS)
            .help("Status polls of one driver's clusters that run at a time; a slow or looping driver holds only these."),
        Opt::new("drivers", "status_fault_limit", int(Some(1), None))
            .default("5")
            .namespace(OURS)
            .help("Status polls of a cluster in progress that may fault in a row (the driver trapped, ran out of time, answered what the host refuses, or is shut off) before the operation is failed with the last fault as its reason."),
        Opt::new("drivers", "max_snapshot_kb", int(Some(1), None))
            .default("4096")
            .namespace(OURS)
            .help("The largest snapshot of watched objects handed to a driver's derive-status, in KiB; a cluster whose snapshot is larger is polled instead, and the driver's fault counted."),
        Opt::new("certificates", "cert_manager_type", OptType::string())
            .default("barbican")
            .namespace(MAGNUM)
            .help("Certificate Manager plugin."),
        Opt::new("certificates", "storage_path", OptType::string())
            .default("/var/lib/magnum/certificates/")
            .namespace(MAGNUM)
            .help("Absolute path of the certificate storage directory."),
        Opt::new("x509", "allow_ca", OptType::Boolean)
            .default("false")
            .namespace(MAGNUM)
            .help("Certificate can get the CA flag in x509 extensions."),
        Opt::new("x509", "allowed_extensions", list_of(X509_EXTENSIONS))
            .default("keyUsage,extendedKeyUsage,subjectAltName,basicConstraints,subjectKeyIdentifier")
            .namespace(MAGNUM)
            .help("List of allowed x509 extensions. Available values: \"authorityKeyIdentifier\", \"subjectKeyIdentifier\", \"authorityInfoAccess\", \"basicConstraints\", \"cRLDistributionPoints\", \"certificatePolicies\", \"extendedKeyUsage\", \"OCSPNoCheck\", \"inhibitAnyPolicy\", \"keyUsage\", \"nameConstraints\", \"subjectAltName\", \"issuerAltName\""),
        Opt::new("x509", "allowed_key_usage", list_of(X509_KEY_USAGES))
            .default("Digital Signature,Key Encipherment,Non Repudiation")
            .namespace(MAGNUM)
            .help("List of allowed x509 key usage. Available values: \"Digital Signature\", \"Non Repudiation\", \"Key Encipherment\", \"Data Encipherment\", \"Key Agreement\", \"Certificate Sign\", \"CRL Sign\", \"Encipher Only\", \"Decipher Only\""),
        Opt::new("x509", "term_of_validity", int(None, None))
            .default("1825")
            .namespace(MAGNUM)
            .help("Number of days for which a certificate is valid."),
        Opt::new("x509", "rsa_key_size", int(None, None))
            .default("2048")
            .namespace(MAGNUM)
            .help("Size of generated private key."),
        Opt::new("cluster", "etcd_discovery_service_endpoint_format", OptType::string())
            .default("https://discovery.etcd.io/new?size=%(size)d")
            .namespace(MAGNUM)
            .help("Url for etcd public discovery endpoint."),
        Opt::new("cluster", "nodes_affinity_policy", OptType::string())
            .default("soft-anti-affinity")
            .namespace(MAGNUM)
            .help("Affinity policy for server group of cluster nodes. Possible values include \"affinity\", \"anti-affinity\", \"soft-affinity\" and \"soft-anti-affinity\"."),
        Opt::new("cluster", "temp_cache_dir", OptType::string())
            .default("/var/lib/magnum/certificate-cache")
            .namespace(MAGNUM)
            .help("Explicitly specify the temporary directory to hold cached TLS certs."),
        Opt::new("cluster", "pre_delete_lb_timeout", int(None, None))
            .default("60")
            .namespace(MAGNUM)
            .help("The timeout in seconds to wait for the load balancers to be deleted."),
        Opt::new("cluster_template", "kubernetes_allowed_network_drivers", OptType::list())
            .default("flannel,calico")
            .namespace(MAGNUM)
            .help("Allowed network drivers for kubernetes."),
        Opt::new("cluster_template", "kubernetes_default_network_driver", OptType::string())
            .default("flannel")
            .namespace(MAGNUM)
            .help("Default network driver for kubernetes cluster-templates."),
        Opt::new("kubernetes", "keystone_auth_default_policy", OptType::string())
            .default("/etc/magnum/keystone_auth_default_policy.json")
            .namespace(MAGNUM)
            .help("Explicitly specify the path to the file defined default Keystone auth policy for Kubernetes cluster when the Keystone auth is enabled. Vendors can put their specific default policy here"),
        Opt::new("kubernetes", "post_install_manifest_url", OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("An URL of the manifest file will be installed after the Kubernetes cluster created. For exmaple, this could be a file including the vendor specific storage class."),
        Opt::new("kubernetes", "health_polling_interval", int(None, None))
            .default("60")
            .namespace(MAGNUM)
            .help("The default polling interval for Kubernetes cluster health. If this number is negative the periodic task will be disabled."),
        Opt::new("cinder", "default_docker_volume_type", OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("The default docker volume_type to use for volumes used for docker storage. To use the cinder volumes for docker storage, you need to select a default value. Otherwise, Magnum will select random one from Cinder volume type list."),
        Opt::new("cinder", "default_etcd_volume_type", OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("The default etcd volume_type to use for volumes used for etcd storage. To use the cinder volumes for etcd storage, you need to select a default value. Otherwise, Magnum will select random one from Cinder volume type list."),
        Opt::new("cinder", "default_boot_volume_type", OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("The default boot volume_type to use for volumes used for VM of COE. To use the cinder volumes for VM of COE, you need to select a default value. Otherwise, Magnum will select random one from Cinder volume type list."),
        Opt::new("cinder", "default_boot_volume_size", int(None, None))
            .default("0")
            .namespace(MAGNUM)
            .help("The default volume size to use for volumes used for VM of COE."),
        Opt::new("conductor", "topic", OptType::string())
            .default("magnum-conductor")
            .namespace(MAGNUM)
            .help("The queue to add conductor tasks to."),
        Opt::new("conductor", "workers", int(None, None))
            .namespace(MAGNUM)
            .help("Number of magnum-conductor processes to fork and run. Default to number of CPUs on the host."),
        Opt::new("profiler", "enabled", OptType::Boolean)
            .default("false")
            .deprecated_name("profiler_enabled")
            .namespace(MAGNUM)
            .help("Enable the profiling for all services on this node.\nDefault value is False (fully disable the profiling feature).\n* True: Enables the feature * False: Disables the feature. The profiling cannot be started via this project   operations. If the profiling is triggered by another project, this project   part will be empty."),
        // Ours: the Cluster API management cluster.
        Opt::new("capi", "kubeconfig", OptType::string())
            .default("")
            .namespace(OURS)
            .help("Path of the kubeconfig file of the Cluster API management cluster; empty for the in-cluster service account."),
        Opt::new("capi", "management_cluster", choices(&["kubeconfig", "memory"]))
            .default("kubeconfig")
            .namespace(OURS)
            .help("Where the drivers' Kubernetes is: kubeconfig, the cluster of [capi]/kubeconfig; memory, an in-memory Kubernetes API inside the process, for trying a driver with all-in-one (all-in-one only; its objects are lost when the process ends)."),
        Opt::new("capi", "namespace", OptType::string())
            .default("magnum-system")
            .namespace(OURS)
            .help("Namespace of the clusters' objects in the management cluster and, with [certificates]/cert_manager_type = kubernetes, of their certificates."),
        Opt::new("capi", "enabled", OptType::Boolean)
            .default("false")
            .namespace(OURS)
            .help("Enable the Cluster API driver (its k8s_cluster_api_<os> entry points) and make the reconciler watch the management cluster."),
        Opt::new("capi", "lease_namespace", OptType::string())
            .default("")
            .namespace(OURS)
            .help("Namespace of the reconciler's leader-election Lease; empty for [capi]/namespace."),
        Opt::new("capi", "lease_duration", int(Some(1), None))
            .default("15")
            .namespace(OURS)
            .help("Leader-election lease duration, in seconds."),
        Opt::new("capi", "renew_deadline", int(Some(1), None))
            .default("10")
            .namespace(OURS)
            .help("Leader-election renew deadline, in seconds."),
        Opt::new("capi", "retry_period", int(Some(1), None))
            .default("2")
            .namespace(OURS)
            .help("Leader-election retry period, in seconds."),
        Opt::new("capi", "resync_interval", int(Some(1), None))
            .default("10")
            .namespace(OURS)
            .help("Period, in seconds, of the pass over the clusters in progress in the database."),
        Opt::new("capi", "request_timeout", int(Some(1), None))
            .default("30")
            .namespace(OURS)
            .help("Timeout, in seconds, of each call to the management cluster."),
        Opt::new("capi", "update_grace", int(Some(1), None))
            .default("600")
            .namespace(OURS)
            .help("How long, in seconds, a topology may fail to reconcile before an update is UPDATE_FAILED."),
        Opt::new("capi", "delete_timeout", int(Some(1), None))
            .default("3600")
            .namespace(OURS)
            .help("How long, in seconds, a deletion may make no progress before the cluster is DELETE_FAILED."),
        Opt::new("capi", "app_credential_roles", OptType::list())
            .default("member,load-balancer_member")
            .namespace(OURS)
            .help("Roles of a cluster's application credential, among those the user has."),
        Opt::new("capi", "addons_manifests_dir", OptType::string())
            .default("")
            .namespace(OURS)
            .help("Directory of operator CNI manifests, cilium/<cilium_tag>.yaml and calico/<calico_tag>.yaml; empty for none."),
        // Ours: for dashboards that send no microversion header.
        Opt::new("api", "unversioned_at_route_minimum", OptType::Boolean)
            .default("false")
            .namespace(OURS)
            .help("Serve a request that carries no OpenStack-API-Version header, to a route that microversion 1.1 does not have (cluster resize 1.7, upgrade 1.8, node groups 1.9, credentials 1.12), at the lowest microversion where that route does its work instead of answering 406 as Magnum does. For dashboards that send no header, such as Skyline's Resize. Requests Magnum serves are answered as before."),
        // Ours: the Prometheus listener.
        Opt::new("metrics", "enabled", OptType::Boolean)
            .default("false")
            .namespace(OURS)
            .help("Serve Prometheus metrics (GET /metrics, in the OpenMetrics text format) on a listener of their own, [metrics]/host and [metrics]/port; served by api, all-in-one and reconciler."),
        Opt::new("metrics", "host", OptType::IpAddress)
            .default("127.0.0.1")
            .namespace(OURS)
            .help("The IP address the metrics listener binds."),
        Opt::new("metrics", "port", OptType::Port)
            .default("9513")
            .namespace(OURS)
            .help("The port of the metrics listener."),
        // Ours: OpenTelemetry traces.
        Opt::new("tracing", "otlp_endpoint", OptType::string())
            .default("")
            .namespace(OURS)
            .help("The http(s) URL of an OTLP/HTTP collector (http://collector:4318): spans of the API requests, driver calls and status-loop passes are posted to <otlp_endpoint>/v1/traces (protobuf). Empty (the default): no traces, unless OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set."),
        Opt::new("tracing", "service_name", OptType::string())
            .default("openkeel-magnum")
            .namespace(OURS)
            .help("The service.name of the spans."),
        Opt::new("tracing", "sample_ratio", OptType::Float { min: Some(0.0), max: Some(1.0) })
            .default("1.0")
            .namespace(OURS)
            .help("The share of traces recorded (a span whose parent was recorded is recorded)."),
        Opt::new("tracing", "export_timeout", int(Some(1), None))
            .default("10")
            .namespace(OURS)
            .help("Timeout, in seconds, of each post to the collector; spans are exported in the background and dropped when the collector does not keep up."),
        // Magnum: etc/magnum/api-paste.ini [app:healthcheck].
        Opt::new("healthcheck", "backends", OptType::list())
            .default("disable_by_file")
            .namespace(HEALTHCHECK)
            .help("Additional backends that can perform health checks and report that information back as part of a request; \"disable_by_file\" is supported."),
        Opt::new("healthcheck", "detailed", OptType::Boolean)
            .default("false")
            .namespace(HEALTHCHECK)
            .help("Show more detailed information as part of the response."),
        Opt::new("healthcheck", "disable_by_file_path", OptType::string())
            .default("/etc/magnum/healthcheck_disable")
            .namespace(HEALTHCHECK)
            .help("While this file exists, /healthcheck answers 503."),
    ];
    opts.extend(credentials("keystone_authtoken", KEYSTONEAUTH));
    opts.extend(credentials("keystone_auth", MAGNUM));
    for (group, tls) in CLIENT_GROUPS {
        opts.extend(client(group, tls));
    }
    opts
}

/// The schema: the modelled options, then every other option of the
/// reference sample as an unchecked string (accepted, readable through
/// `lookup` and usable in `$name` substitutions, left out of our sample).
pub(super) fn schema() -> Schema {
    let mut schema = Schema::new();
    // [driver:<package>]: the grants, limits and options of one driver,
    // read by `Options::driver_groups`.
    schema.open_group_prefix("driver:");
    for opt in modelled() {
        if let Err(e) = schema.register(opt) {
            // The table is a constant: a duplicate is a programmer error,
            // caught by the tests.
            panic!("Magnum option table: {e}");
        }
    }
    for &(group, name, default, deprecated) in KNOWN {
        if schema.get(group, name).is_some() {
            continue;
        }
        let mut opt = Opt::new(group, name, OptType::string())
            .unchecked()
            .hidden();
        if default != "<None>" {
            opt = opt.default(default);
        }
        for old in deprecated {
            if let Some((g, n)) = old.split_once('/') {
                opt = opt.deprecated_in(g, n);
            }
        }
        if schema.register(opt).is_err() {
            panic!("Magnum option table: [{group}]/{name} is listed twice");
        }
    }
    schema
}
