//! Every option openkeel-magnum models, declared once: each field of a
//! group struct is one option, with the group, name, type, default and help
//! Magnum 23.0.0 (and the oslo libraries and keystonemiddleware it ships)
//! give it, or openkeel-magnum's own. The registration ([`Options::opts`],
//! hence the schema, the sample and the configuration reference) and the
//! typed read ([`Options::read`]) both come from these declarations.
//!
//! Adding an option is adding one field to its group below, then using it;
//! see docs/architecture.md, "Adding a configuration option".

use oslo_config::{Accepted, Opt, OptType, Secret};

use super::schema::{
    AUTH_TOKEN, HEALTHCHECK, KEYSTONEAUTH, MAGNUM, OSLO_CORS, OSLO_DB, OSLO_LOG, OSLO_MESSAGING,
    OSLO_POLICY, OURS, PROXY_HEADERS, X509_EXTENSIONS, X509_KEY_USAGES, choices, int, list_of,
};
use super::{AuthStrategy, Provenance};

oslo_config::group! {
    /// `[DEFAULT]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DefaultGroup {
        /// `debug` (oslo.log).
        pub debug: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OSLO_LOG)
            .help("If set to true, the logging level will be set to DEBUG instead of the default INFO level."),
        /// `host`: the node name; `None` means the machine's host name, as
        /// Magnum does.
        pub host: Option<String> = Opt::of(OptType::HostAddress)
            .namespace(MAGNUM)
            .help("Name of this node. This can be an opaque identifier. It is not necessarily a hostname, FQDN, or IP address. However, the node name must be valid within an AMQP key."),
        /// `transport_url` (oslo.messaging).
        pub transport_url: Secret = Opt::of(OptType::string())
            .default("rabbit://")
            .secret()
            .namespace(OSLO_MESSAGING)
            .help("The network address and optional user credentials for connecting to the messaging backend, in URL format. The expected format is:\ndriver://[user:pass@]host:port[,[userN:passN@]hostN:portN]/virtual_host?query\nExample: rabbit://rabbitmq:password@127.0.0.1:5672//\nFor full details on the fields in the URL see the documentation of oslo_messaging.TransportURL at https://docs.openstack.org/oslo.messaging/latest/reference/transport.html"),
        // Magnum: magnum/common/rpc.py set_defaults(control_exchange='magnum').
        /// `control_exchange`; Magnum sets it to "magnum" at start-up although
        /// the sample shows oslo.messaging's "openstack".
        pub control_exchange: String = Opt::of(OptType::string())
            .default("magnum")
            .namespace(OSLO_MESSAGING)
            .help("The default exchange under which topics are scoped. May be overridden by an exchange name specified in the transport_url option."),
        /// `rpc_response_timeout`, seconds.
        pub rpc_response_timeout: i64 = Opt::of(int(None, None))
            .default("60")
            .namespace(OSLO_MESSAGING)
            .help("Seconds to wait for a response from a call."),
        /// `service_down_time`, seconds: mservices up/down.
        pub service_down_time: i64 = Opt::of(int(None, None))
            .default("180")
            .namespace(MAGNUM)
            .help("Max interval size between periodic tasks execution in seconds."),
        /// `periodic_enable`.
        pub periodic_enable: bool = Opt::of(OptType::Boolean)
            .default("true")
            .namespace(MAGNUM)
            .help("Enable periodic tasks."),
        /// `periodic_interval_max`, seconds.
        pub periodic_interval_max: i64 = Opt::of(int(None, None))
            .default("60")
            .namespace(MAGNUM)
            .help("Max interval size between periodic tasks execution in seconds."),
        /// `log_file`.
        pub log_file: Option<String> = Opt::of(OptType::string())
            .deprecated_name("logfile")
            .namespace(OSLO_LOG)
            .help("(Optional) Name of log file to send logging output to. If no default is set, logging will go to stderr as defined by use_stderr. This option is ignored if log_config_append is set."),
        /// `log_dir`.
        pub log_dir: Option<String> = Opt::of(OptType::string())
            .deprecated_name("logdir")
            .namespace(OSLO_LOG)
            .help("(Optional) The base directory used for relative log_file  paths. This option is ignored if log_config_append is set."),
        /// `use_json`.
        pub use_json: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OSLO_LOG)
            .help("Use JSON formatting for logging. This option is ignored if log_config_append is set."),
        /// `use_stderr`.
        pub use_stderr: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OSLO_LOG)
            .help("Log output to standard error. This option is ignored if log_config_append is set."),
        /// `auth_strategy` (ours): `keystone` or `noauth`.
        pub auth_strategy: AuthStrategy = Opt::of(choices(&["keystone", "noauth"]))
            .default("keystone")
            .namespace(OURS)
            .help("How API requests are authenticated: \"keystone\" validates tokens with Keystone; \"noauth\" trusts the identity headers of the request and is for tests and all-in-one only."),
    }
}

oslo_config::group! {
    /// `[api]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Api {
        /// `port`.
        pub port: u16 = Opt::of(OptType::Port)
            .default("9511")
            .namespace(MAGNUM)
            .help("The port for the Magnum API server."),
        /// `host`: the listen address (an IP address).
        pub host: String = Opt::of(OptType::IpAddress)
            .default("127.0.0.1")
            .namespace(MAGNUM)
            .help("The listen IP for the Magnum API server."),
        /// `max_limit`: default and cap of `limit` on collections.
        pub max_limit: i64 = Opt::of(int(None, None))
            .default("1000")
            .namespace(MAGNUM)
            .help("The maximum number of items returned in a single response from a collection resource."),
        /// `api_paste_config`: accepted and ignored (the middleware chain is
        /// built in), with a warning when set.
        pub api_paste_config: String = Opt::of(OptType::string())
            .default("api-paste.ini")
            .ignored("the middleware pipeline is built in; the paste file is not read")
            .namespace(MAGNUM)
            .help("Configuration file for WSGI definition of API."),
        /// `ssl_cert_file`.
        pub ssl_cert_file: Option<String> = Opt::of(OptType::string())
            .namespace(MAGNUM)
            .help("This option allows setting path to the SSL certificate of API server."),
        /// `ssl_key_file`.
        pub ssl_key_file: Option<String> = Opt::of(OptType::string())
            .namespace(MAGNUM)
            .help("This option specifies the path to the file where SSL private key of API server is stored when SSL is in effect."),
        /// `enabled_ssl`.
        pub enabled_ssl: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(MAGNUM)
            .help("Enable SSL Magnum API service"),
        /// `workers`; `None` means the number of CPUs.
        pub workers: Option<i64> = Opt::of(int(None, None))
            .namespace(MAGNUM)
            .help("The maximum number of magnum-api processes to fork and run. Default to number of CPUs on the host."),
        // Ours: for dashboards that send no microversion header.
        /// `unversioned_at_route_minimum` (ours): see
        /// [`crate::api::ApiOptions::unversioned_at_route_minimum`].
        pub unversioned_at_route_minimum: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OURS)
            .help("Serve a request that carries no OpenStack-API-Version header, to a route that microversion 1.1 does not have (cluster resize 1.7, upgrade 1.8, node groups 1.9, credentials 1.12), at the lowest microversion where that route does its work instead of answering 406 as Magnum does. For dashboards that send no header, such as Skyline's Resize. Requests Magnum serves are answered as before."),
    }
}

oslo_config::group! {
    /// `[database]` (oslo.db plus Magnum's own).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Database {
        /// `connection`: the SQLAlchemy URL; see [`Options::database_url`].
        // Deviation: Magnum defaults it to an SQLite file under its Python
        // package directory; here it is unset and the caller must supply one.
        pub connection: Option<Secret> = Opt::of(OptType::string())
            .secret()
            .namespace(OSLO_DB)
            .help("The SQLAlchemy connection string to use to connect to the database."),
        /// `mysql_engine`.
        pub mysql_engine: String = Opt::of(OptType::string())
            .default("InnoDB")
            .namespace(MAGNUM)
            .help("MySQL engine to use."),
        /// `mysql_sql_mode`.
        pub mysql_sql_mode: String = Opt::of(OptType::string())
            .default("TRADITIONAL")
            .namespace(OSLO_DB)
            .help("The SQL mode to be used for MySQL sessions. This option, including the default, overrides any server-set SQL mode. To use whatever SQL mode is set by the server configuration, set this to no value. Example: mysql_sql_mode="),
        /// `sqlite_synchronous`.
        pub sqlite_synchronous: bool = Opt::of(OptType::Boolean)
            .default("true")
            .namespace(OSLO_DB)
            .help("If True, SQLite uses synchronous mode."),
        /// `connection_recycle_time`, seconds.
        pub connection_recycle_time: i64 = Opt::of(int(None, None))
            .default("3600")
            .namespace(OSLO_DB)
            .help("Connections which have been present in the connection pool longer than this number of seconds will be replaced with a new one the next time they are checked out from the pool."),
        /// `max_pool_size`; 0 means no limit.
        pub max_pool_size: i64 = Opt::of(int(None, None))
            .default("5")
            .namespace(OSLO_DB)
            .help("Maximum number of SQL connections to keep open in a pool. Setting a value of 0 indicates no limit."),
        /// `max_overflow`; -1 means no limit.
        pub max_overflow: i64 = Opt::of(int(None, None))
            .default("50")
            .namespace(OSLO_DB)
            .help("If set, use this value for max_overflow with SQLAlchemy."),
        /// `pool_timeout`, seconds.
        pub pool_timeout: Option<i64> = Opt::of(int(None, None))
            .namespace(OSLO_DB)
            .help("If set, use this value for pool_timeout with SQLAlchemy."),
        /// `max_retries` at start-up; -1 means forever.
        pub max_retries: i64 = Opt::of(int(None, None))
            .default("10")
            .namespace(OSLO_DB)
            .help("Maximum number of database connection retries during startup. Set to -1 to specify an infinite retry count."),
        /// `retry_interval`, seconds.
        pub retry_interval: i64 = Opt::of(int(None, None))
            .default("10")
            .namespace(OSLO_DB)
            .help("Interval between retries of opening a SQL connection."),
        /// `connection_debug`, 0–100.
        pub connection_debug: i64 = Opt::of(int(Some(0), Some(100)))
            .default("0")
            .namespace(OSLO_DB)
            .help("Verbosity of SQL debugging information: 0=None, 100=Everything."),
        /// `db_retry_interval`, seconds.
        pub db_retry_interval: i64 = Opt::of(int(None, None))
            .default("1")
            .namespace(OSLO_DB)
            .help("Seconds between retries of a database transaction."),
        /// `db_inc_retry_interval`.
        pub db_inc_retry_interval: bool = Opt::of(OptType::Boolean)
            .default("true")
            .namespace(OSLO_DB)
            .help("If True, increases the interval between retries of a database operation up to db_max_retry_interval."),
        /// `db_max_retry_interval`, seconds.
        pub db_max_retry_interval: i64 = Opt::of(int(None, None))
            .default("10")
            .namespace(OSLO_DB)
            .help("If db_inc_retry_interval is set, the maximum seconds between retries of a database operation."),
        /// `db_max_retries`; -1 means forever.
        pub db_max_retries: i64 = Opt::of(int(None, None))
            .default("20")
            .namespace(OSLO_DB)
            .help("Maximum retries in case of connection error or deadlock error before error is raised. Set to -1 to specify an infinite retry count."),
        /// `connection_parameters`, appended to the URL's query.
        pub connection_parameters: String = Opt::of(OptType::string())
            .default("")
            .namespace(OSLO_DB)
            .help("Optional URL parameters to append onto the connection URL at connect time; specify as param1=value1&param2=value2&..."),
    }
}

oslo_config::group! {
    /// `[keystone_authtoken]`: keystonemiddleware's auth_token plus the auth
    /// plugin options.
    #[derive(Clone, Debug, PartialEq)]
    pub struct KeystoneAuthtoken {
        /// `www_authenticate_uri`: sent in `WWW-Authenticate` on 401 and copied
        /// into the request context as `auth_url`.
        pub www_authenticate_uri: Option<String> = Opt::of(OptType::string())
            .namespace(AUTH_TOKEN)
            .help("Complete \"public\" Identity API endpoint. This endpoint should not be an \"admin\" endpoint, as it should be accessible by all end users. Unauthenticated clients are redirected to this endpoint to authenticate. Although this endpoint should ideally be unversioned, client support in the wild varies."),
        /// `auth_version`.
        pub auth_version: Option<String> = Opt::of(OptType::string())
            .namespace(AUTH_TOKEN)
            .help("API version of the Identity API endpoint."),
        /// `interface`.
        pub interface: String = Opt::of(OptType::string())
            .default("internal")
            .namespace(AUTH_TOKEN)
            .help("Interface to use for the Identity API endpoint. Valid values are \"public\", \"internal\" (default) or \"admin\"."),
        /// `delay_auth_decision`.
        pub delay_auth_decision: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(AUTH_TOKEN)
            .help("Do not handle authorization requests within the middleware, but delegate the authorization decision to downstream WSGI components."),
        /// `http_connect_timeout`, seconds.
        pub http_connect_timeout: Option<i64> = Opt::of(int(None, None))
            .namespace(AUTH_TOKEN)
            .help("Request timeout value for communicating with Identity API server."),
        /// `http_request_max_retries`.
        pub http_request_max_retries: i64 = Opt::of(int(None, None))
            .default("3")
            .namespace(AUTH_TOKEN)
            .help("How many times are we trying to reconnect when communicating with Identity API Server."),
        /// `certfile`.
        pub certfile: Option<String> = Opt::of(OptType::string())
            .namespace(AUTH_TOKEN)
            .help("Required if identity server requires client certificate"),
        /// `keyfile`.
        pub keyfile: Option<String> = Opt::of(OptType::string())
            .namespace(AUTH_TOKEN)
            .help("Required if identity server requires client certificate"),
        /// `cafile`.
        pub cafile: Option<String> = Opt::of(OptType::string())
            .namespace(AUTH_TOKEN)
            .help("A PEM encoded Certificate Authority to use when verifying HTTPs connections. Defaults to system CAs."),
        /// `insecure`.
        pub insecure: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(AUTH_TOKEN)
            .help("Verify HTTPS connections."),
        /// `region_name`.
        pub region_name: Option<String> = Opt::of(OptType::string())
            .namespace(AUTH_TOKEN)
            .help("The region in which the identity server can be found."),
        /// `memcached_servers`: accepted and ignored with a warning (tokens are
        /// cached in-process).
        pub memcached_servers: Vec<String> = Opt::of(OptType::list())
            .deprecated_name("memcache_servers")
            .ignored("tokens are cached in-process; memcached is not used")
            .namespace(AUTH_TOKEN)
            .help("Optionally specify a list of memcached server(s) to use for caching. If left undefined, tokens will instead be cached in-process."),
        /// `token_cache_time`, seconds; -1 disables the cache.
        pub token_cache_time: i64 = Opt::of(int(None, None))
            .default("300")
            .namespace(AUTH_TOKEN)
            .help("In order to prevent excessive effort spent validating tokens, the middleware caches previously-seen tokens for a configurable duration (in seconds). Set to -1 to disable caching completely."),
        /// `include_service_catalog`.
        pub include_service_catalog: bool = Opt::of(OptType::Boolean)
            .default("true")
            .namespace(AUTH_TOKEN)
            .help("(Optional) Indicate whether to set the X-Service-Catalog header. If False, middleware will not ask for service catalog on token validation and will not set the X-Service-Catalog header."),
        /// `enforce_token_bind`.
        pub enforce_token_bind: String = Opt::of(OptType::string())
            .default("permissive")
            .namespace(AUTH_TOKEN)
            .help("Used to control the use and type of token binding. Can be set to: \"disabled\" to not check token binding. \"permissive\" (default) to validate binding information if the bind type is of a form known to the server and ignore it if not. \"strict\" like \"permissive\" but if the bind type is unknown the token will be rejected. \"required\" any form of token binding is needed to be allowed. Finally the name of a binding method that must be present in tokens."),
        /// `service_token_roles`.
        pub service_token_roles: Vec<String> = Opt::of(OptType::list())
            .default("service")
            .namespace(AUTH_TOKEN)
            .help("A choice of roles that must be present in a service token. Service tokens are allowed to request that an expired token can be used and so this check should tightly control that only actual services should be sending this token. Roles here are applied as an ANY check so any role in this list must be present. For backwards compatibility reasons this currently only affects the allow_expired check."),
        /// `service_token_roles_required`.
        pub service_token_roles_required: bool = Opt::of(OptType::Boolean)
            .default("true")
            .namespace(AUTH_TOKEN)
            .help("When set to True, service tokens must contain a role from the service_token_roles list to be considered valid. This prevents end-user tokens from being used as service tokens and ensures proper service-to- service authentication. Setting this to False is NOT RECOMMENDED as it allows any valid token to be used as a service token, which can bypass access-rule checks and weaken composite-auth protections."),
        /// `service_type`.
        pub service_type: Option<String> = Opt::of(OptType::string())
            .namespace(AUTH_TOKEN)
            .help("The name or type of the service as it appears in the service catalog. This is used to validate tokens that have restricted access rules."),
        /// `auth_type` (deprecated name `auth_plugin`).
        pub auth_type: Option<String> = Opt::of(OptType::string())
            .deprecated_name("auth_plugin")
            .namespace(AUTH_TOKEN)
            .help("Authentication type to load"),
        /// `auth_section`.
        pub auth_section: Option<String> = Opt::of(OptType::string())
            .namespace(AUTH_TOKEN)
            .help("Config Section from which to load plugin specific options"),
    }
    flatten {
        /// The password plugin options (`auth_url`, `username`, `password`…).
        pub credentials: Credentials = namespace(KEYSTONEAUTH),
    }
}

oslo_config::group! {
    /// `[keystone_auth]`: Magnum's own service credentials (auth plugin and
    /// session options).
    #[derive(Clone, Debug, PartialEq)]
    pub struct KeystoneAuth {
        // Magnum: magnum/conf/keystone.py forces auth_type's default to "password".
        /// `auth_type`; Magnum forces the default to "password" at
        /// registration although the sample shows none.
        pub auth_type: String = Opt::of(OptType::string())
            .default("password")
            .deprecated_name("auth_plugin")
            .namespace(MAGNUM)
            .help("Authentication type to load"),
        /// `auth_section`.
        pub auth_section: Option<String> = Opt::of(OptType::string())
            .namespace(MAGNUM)
            .help("Config Section from which to load plugin specific options"),
        // keystoneauth1 session options: registered by Magnum, not in the sample.
        /// `cafile`.
        pub cafile: Option<String> = Opt::of(OptType::string())
            .namespace(MAGNUM)
            .help("PEM encoded Certificate Authority to use when verifying HTTPs connections."),
        /// `certfile`.
        pub certfile: Option<String> = Opt::of(OptType::string())
            .namespace(MAGNUM)
            .help("PEM encoded client certificate cert file."),
        /// `keyfile`.
        pub keyfile: Option<String> = Opt::of(OptType::string())
            .namespace(MAGNUM)
            .help("PEM encoded client certificate key file."),
        /// `insecure`.
        pub insecure: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(MAGNUM)
            .help("Verify HTTPS connections."),
        /// `timeout`, seconds.
        pub timeout: Option<i64> = Opt::of(int(None, None))
            .namespace(MAGNUM)
            .help("Timeout value for http requests."),
    }
    flatten {
        /// The password plugin options.
        pub credentials: Credentials = namespace(MAGNUM),
    }
}

oslo_config::group! {
    /// `[oslo_policy]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct OsloPolicy {
        /// `enforce_new_defaults`.
        pub enforce_new_defaults: bool = Opt::of(OptType::Boolean)
            .default("true")
            .namespace(OSLO_POLICY)
            .help("This option controls whether or not to use old deprecated defaults when evaluating policies. If ``True``, the old deprecated defaults are not going to be evaluated. This means if any existing token is allowed for old defaults but is disallowed for new defaults, it will be disallowed. If ``False``, the deprecated policy check string is logically OR'd with the new policy check string, allowing for a graceful upgrade experience between releases with new policies, which is the default behavior."),
        /// `policy_file`.
        pub policy_file: String = Opt::of(OptType::string())
            .default("policy.yaml")
            .namespace(OSLO_POLICY)
            .help("The relative or absolute path of a file that maps roles to permissions for a given service. Relative paths must be specified in relation to the configuration file setting this option."),
        /// `policy_default_rule`.
        pub policy_default_rule: String = Opt::of(OptType::string())
            .default("default")
            .namespace(OSLO_POLICY)
            .help("Default rule. Enforced when a requested rule is not found."),
        /// `policy_dirs` (multi valued).
        pub policy_dirs: Vec<String> = Opt::of(OptType::MultiString)
            .default("policy.d")
            .namespace(OSLO_POLICY)
            .help("Directories where policy configuration files are stored. They can be relative to any directory in the search path defined by the config_dir option, or absolute paths. The file defined by policy_file must exist for these directories to be searched.  Missing or empty directories are ignored."),
        /// `remote_timeout`, seconds.
        pub remote_timeout: f64 = Opt::of(OptType::Float { min: Some(0.0), max: None })
            .default("60")
            .namespace(OSLO_POLICY)
            .help("Timeout in seconds for REST based policy check"),
        // oslo.policy 6.x has no enforce_scope (and Magnum's scope checks never
        // fail: it passes no system scope); accepted with a warning, readable
        // through Lookup.
        /// `enforce_scope`: accepted, no effect.
        pub enforce_scope: Accepted = Opt::of(OptType::Boolean)
            .default("true")
            .ignored("oslo.policy 6.x has no such option")
            .namespace(OSLO_POLICY)
            .help("Whether to enforce scope when evaluating policies; oslo.policy 6 removed it, and Magnum never fails a scope check."),
    }
}

oslo_config::group! {
    /// `[oslo_middleware]` (not in the sample: the http_proxy_to_wsgi namespace
    /// is not part of Magnum's generator).
    #[derive(Clone, Debug, PartialEq)]
    pub struct OsloMiddleware {
        /// `enable_proxy_headers_parsing`.
        pub enable_proxy_headers_parsing: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(PROXY_HEADERS)
            .help("Whether the application is behind a proxy or not. This determines if the middleware should parse the headers or not."),
    }
}

oslo_config::group! {
    /// `[oslo_messaging_notifications]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct OsloMessagingNotifications {
        /// `driver` (multi valued); empty means notifications are off.
        pub driver: Vec<String> = Opt::of(OptType::MultiString)
            .default("")
            .namespace(OSLO_MESSAGING)
            .help("The Drivers(s) to handle sending notifications. Possible values are messaging, messagingv2, routing, log, test, noop"),
        /// `transport_url`; `None` means `[DEFAULT]/transport_url`.
        pub transport_url: Option<Secret> = Opt::of(OptType::string())
            .secret()
            .namespace(OSLO_MESSAGING)
            .help("A URL representing the messaging driver to use for notifications. If not set, we fall back to the same configuration used for RPC."),
        /// `topics`.
        pub topics: Vec<String> = Opt::of(OptType::list())
            .default("notifications")
            .namespace(OSLO_MESSAGING)
            .help("AMQP topic used for OpenStack notifications."),
        /// `retry`; -1 means forever.
        pub retry: i64 = Opt::of(int(None, None))
            .default("-1")
            .namespace(OSLO_MESSAGING)
            .help("The maximum number of attempts to re-send a notification message which failed to be delivered due to a recoverable error. 0 - No retry, -1 - indefinite"),
    }
}

oslo_config::group! {
    /// `[oslo_messaging_rabbit]`: what the notification publisher honours.
    #[derive(Clone, Debug, PartialEq)]
    pub struct OsloMessagingRabbit {
        pub amqp_durable_queues: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Declare the notification exchange and queues durable, so that they and the persistent messages they hold survive a broker restart."),
        pub amqp_auto_delete: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Declare the notification exchange and queues auto-deleted."),
        /// Seconds.
        pub rabbit_retry_interval: i64 = Opt::of(int(None, None))
            .default("1")
            .namespace(OSLO_MESSAGING)
            .help("Seconds before the first retry of a notification the broker did not take."),
        pub rabbit_retry_backoff: i64 = Opt::of(int(None, None))
            .default("2")
            .namespace(OSLO_MESSAGING)
            .help("Seconds added to the wait at every further retry."),
        pub rabbit_interval_max: i64 = Opt::of(int(None, None))
            .default("30")
            .namespace(OSLO_MESSAGING)
            .help("The longest wait between two retries, in seconds."),
        pub heartbeat_timeout_threshold: i64 = Opt::of(int(None, None))
            .default("60")
            .namespace(OSLO_MESSAGING)
            .help("Seconds without a heartbeat after which the broker connection counts as lost; 0 turns heartbeats off."),
        pub rabbit_ha_queues: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Declare the queues mirrored on every node (x-ha-policy: all)."),
        pub rabbit_quorum_queue: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Declare the queues as quorum queues (durable)."),
        pub rabbit_quorum_delivery_limit: i64 = Opt::of(int(None, None))
            .default("0")
            .namespace(OSLO_MESSAGING)
            .help("x-delivery-limit of a quorum queue; 0 leaves it unset."),
        pub rabbit_quorum_max_memory_length: i64 = Opt::of(int(None, None))
            .default("0")
            .namespace(OSLO_MESSAGING)
            .help("x-max-in-memory-length of a quorum queue; 0 leaves it unset."),
        pub rabbit_quorum_max_memory_bytes: i64 = Opt::of(int(None, None))
            .default("0")
            .namespace(OSLO_MESSAGING)
            .help("x-max-in-memory-bytes of a quorum queue; 0 leaves it unset."),
        pub ssl: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OSLO_MESSAGING)
            .help("Connect to the broker over TLS."),
        /// `ssl_ca_file`; set empty, none (see `app::rabbit_settings`).
        pub ssl_ca_file: Option<String> = Opt::of(OptType::string())
            .default("")
            .namespace(OSLO_MESSAGING)
            .help("PEM file of the CAs that sign the broker's certificate."),
        pub ssl_cert_file: Option<String> = Opt::of(OptType::string())
            .default("")
            .namespace(OSLO_MESSAGING)
            .help("PEM client certificate presented to the broker."),
        pub ssl_key_file: Option<String> = Opt::of(OptType::string())
            .default("")
            .namespace(OSLO_MESSAGING)
            .help("PEM (PKCS#8) key of the client certificate."),
    }
}

oslo_config::group! {
    /// `[cors]`. Magnum replaces oslo.middleware's defaults of the three
    /// header and method lists at start-up; those are the defaults here.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Cors {
        /// `allowed_origin`; empty disables CORS.
        pub allowed_origin: Vec<String> = Opt::of(OptType::list())
            .namespace(OSLO_CORS)
            .help("Indicate whether this resource may be shared with the domain received in the requests \"origin\" header. Format: \"<protocol>://<host>[:<port>]\", no trailing slash. Example: https://horizon.example.com"),
        /// `allow_credentials`.
        pub allow_credentials: bool = Opt::of(OptType::Boolean)
            .default("true")
            .namespace(OSLO_CORS)
            .help("Indicate that the actual request can include user credentials"),
        // Magnum: magnum/common/config.py set_cors_middleware_defaults.
        /// `expose_headers`.
        pub expose_headers: Vec<String> = Opt::of(OptType::list())
            .default("X-Auth-Token,X-Subject-Token,X-Service-Token,X-OpenStack-Request-ID,X-Server-Management-Url")
            .namespace(OSLO_CORS)
            .help("Indicate which headers are safe to expose to the API. Defaults to HTTP Simple Headers."),
        /// `max_age`, seconds.
        pub max_age: i64 = Opt::of(int(None, None))
            .default("3600")
            .namespace(OSLO_CORS)
            .help("Maximum cache age of CORS preflight requests."),
        /// `allow_methods`.
        pub allow_methods: Vec<String> = Opt::of(OptType::list())
            .default("GET,PUT,POST,DELETE,PATCH")
            .namespace(OSLO_CORS)
            .help("Indicate which methods can be used during the actual request."),
        /// `allow_headers`.
        pub allow_headers: Vec<String> = Opt::of(OptType::list())
            .default("X-Auth-Token,X-Identity-Status,X-Roles,X-Service-Catalog,X-User-Id,X-Tenant-Id,X-OpenStack-Request-ID,X-Server-Management-Url")
            .namespace(OSLO_CORS)
            .help("Indicate which header field names may be used during the actual request."),
    }
}

oslo_config::group! {
    /// `[quotas]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Quotas {
        /// `max_clusters_per_project`.
        pub max_clusters_per_project: i64 = Opt::of(int(None, None))
            .default("20")
            .namespace(MAGNUM)
            .help("Max number of clusters allowed per project. Admin can override this default quota for a project by setting explicit limit in quotas DB table (using /quotas REST API endpoint)."),
    }
}

oslo_config::group! {
    /// `[drivers]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Drivers {
        /// `verify_ca`.
        pub verify_ca: bool = Opt::of(OptType::Boolean)
            .default("true")
            .namespace(MAGNUM)
            .help("Indicates whether the cluster nodes validate the Certificate Authority when making requests to the OpenStack APIs (Keystone, Magnum, Heat). If you have self-signed certificates for the OpenStack APIs or you have your own Certificate Authority and you have not installed the Certificate Authority to all nodes, you may need to disable CA validation by setting this flag to False."),
        /// `openstack_ca_file`.
        pub openstack_ca_file: String = Opt::of(OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("Path to the OpenStack CA-bundle file to pass and install in all cluster nodes."),
        /// `disabled_drivers`.
        pub disabled_drivers: Vec<String> = Opt::of(OptType::list())
            .default("")
            .namespace(MAGNUM)
            .help("Disabled driver entry points. If empty, then all available drivers are enabled."),
        /// `enabled_beta_drivers`.
        pub enabled_beta_drivers: Vec<String> = Opt::of(OptType::list())
            .default("")
            .namespace(MAGNUM)
            .help("List of beta drivers to enable. Beta drivers are not intended for production."),
        /// `default_driver`; `None` means the first available.
        pub default_driver: Option<String> = Opt::of(OptType::string())
            .namespace(MAGNUM)
            .help("Default driver to use for cluster templates when no driver is specified by the user or image metadata. If not set, defaults to the first alphabetically sorted available driver."),
        /// `drivers_path` (ours): directories of driver packages.
        pub drivers_path: Vec<String> = Opt::of(OptType::list())
            .default("")
            .namespace(OURS)
            .help("Directories of driver packages (<dir>/<package>/driver.toml and its component), loaded at start besides the built-in drivers."),
        /// `precompiled_cache_dir` (ours); empty: compile at every start.
        pub precompiled_cache_dir: String = Opt::of(OptType::string())
            .default("")
            .namespace(OURS)
            .help("Where compiled driver components are kept between starts, by their SHA-256 and the engine's version. Empty: compile at every start."),
        /// `pooling_allocator` (ours).
        pub pooling_allocator: bool = Opt::of(OptType::Boolean)
            .default("true")
            .namespace(OURS)
            .help("Reserve instance slots for driver calls at start (fast instantiation); the host falls back to on-demand allocation when the reservation fails."),
        /// `breaker_threshold` (ours).
        pub breaker_threshold: i64 = Opt::of(int(Some(1), None))
            .default("5")
            .namespace(OURS)
            .help("Faults (traps, timeouts, oversized answers) of one driver within breaker_window that open its breaker."),
        /// `breaker_window` (ours), seconds.
        pub breaker_window: i64 = Opt::of(int(Some(1), None))
            .default("60")
            .namespace(OURS)
            .help("Seconds over which a driver's faults are counted."),
        /// `breaker_cooldown` (ours), seconds.
        pub breaker_cooldown: i64 = Opt::of(int(Some(1), None))
            .default("30")
            .namespace(OURS)
            .help("Seconds an open breaker first refuses a driver's calls; then one call probes the driver, and each failed probe doubles the time, up to 16 times this."),
        /// `max_call_timeout` (ours), seconds.
        pub max_call_timeout: i64 = Opt::of(int(Some(1), None))
            .default("300")
            .namespace(OURS)
            .help("The longest deadline of one driver call, in seconds, whatever a driver's manifest or [driver:<name>] group asks."),
        /// `max_memory_mb` (ours).
        pub max_memory_mb: i64 = Opt::of(int(Some(1), Some(1024)))
            .default("512")
            .namespace(OURS)
            .help("The largest memory of one driver instance, in MiB, whatever a driver's manifest or [driver:<name>] group asks."),
        /// `max_output_kb` (ours).
        pub max_output_kb: i64 = Opt::of(int(Some(1), None))
            .default("16384")
            .namespace(OURS)
            .help("The largest answer of one driver call, in KiB, whatever a driver's manifest or [driver:<name>] group asks."),
        /// `log_kb_per_call` (ours).
        pub log_kb_per_call: i64 = Opt::of(int(Some(1), None))
            .default("64")
            .namespace(OURS)
            .help("What one driver call may log (through the log import, stdout and stderr together), in KiB; the rest is dropped and counted in one line."),
        /// `log_lines_per_call` (ours).
        pub log_lines_per_call: i64 = Opt::of(int(Some(1), None))
            .default("200")
            .namespace(OURS)
            .help("The log lines one driver call may write; the rest is dropped and counted in one line. Each line is cut at 4 KiB."),
        /// `max_state_kb` (ours).
        pub max_state_kb: i64 = Opt::of(int(Some(1), None))
            .default("64")
            .namespace(OURS)
            .help("What a driver may keep per cluster in its state store, in KiB."),
        /// `status_concurrency` (ours): status polls of one driver at a time.
        pub status_concurrency: i64 = Opt::of(int(Some(1), None))
            .default("4")
            .namespace(OURS)
            .help("Status polls of one driver's clusters that run at a time; a slow or looping driver holds only these."),
        /// `status_fault_limit` (ours).
        pub status_fault_limit: i64 = Opt::of(int(Some(1), None))
            .default("5")
            .namespace(OURS)
            .help("Status polls of a cluster in progress that may fault in a row (the driver trapped, ran out of time, answered what the host refuses, or is shut off) before the operation is failed with the last fault as its reason."),
        /// `max_snapshot_kb` (ours): the largest snapshot `derive-status` is
        /// given.
        pub max_snapshot_kb: i64 = Opt::of(int(Some(1), None))
            .default("4096")
            .namespace(OURS)
            .help("The largest snapshot of watched objects handed to a driver's derive-status, in KiB; a cluster whose snapshot is larger is polled instead, and the driver's fault counted."),
    }
}

oslo_config::group! {
    /// `[certificates]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Certificates {
        /// `cert_manager_type`: Magnum's barbican, x509keypair or local; served:
        /// x509keypair and kubernetes (see `certs::StoreType`).
        pub cert_manager_type: String = Opt::of(OptType::string())
            .default("barbican")
            .namespace(MAGNUM)
            .help("Certificate Manager plugin."),
        /// `storage_path` (local cert manager).
        pub storage_path: String = Opt::of(OptType::string())
            .default("/var/lib/magnum/certificates/")
            .namespace(MAGNUM)
            .help("Absolute path of the certificate storage directory."),
    }
}

oslo_config::group! {
    /// `[x509]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct X509 {
        /// `allow_ca`.
        pub allow_ca: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(MAGNUM)
            .help("Certificate can get the CA flag in x509 extensions."),
        /// `allowed_extensions`.
        pub allowed_extensions: Vec<String> = Opt::of(list_of(X509_EXTENSIONS))
            .default("keyUsage,extendedKeyUsage,subjectAltName,basicConstraints,subjectKeyIdentifier")
            .namespace(MAGNUM)
            .help("List of allowed x509 extensions. Available values: \"authorityKeyIdentifier\", \"subjectKeyIdentifier\", \"authorityInfoAccess\", \"basicConstraints\", \"cRLDistributionPoints\", \"certificatePolicies\", \"extendedKeyUsage\", \"OCSPNoCheck\", \"inhibitAnyPolicy\", \"keyUsage\", \"nameConstraints\", \"subjectAltName\", \"issuerAltName\""),
        /// `allowed_key_usage`.
        pub allowed_key_usage: Vec<String> = Opt::of(list_of(X509_KEY_USAGES))
            .default("Digital Signature,Key Encipherment,Non Repudiation")
            .namespace(MAGNUM)
            .help("List of allowed x509 key usage. Available values: \"Digital Signature\", \"Non Repudiation\", \"Key Encipherment\", \"Data Encipherment\", \"Key Agreement\", \"Certificate Sign\", \"CRL Sign\", \"Encipher Only\", \"Decipher Only\""),
        /// `term_of_validity`, days.
        pub term_of_validity: i64 = Opt::of(int(None, None))
            .default("1825")
            .namespace(MAGNUM)
            .help("Number of days for which a certificate is valid."),
        /// `rsa_key_size`, bits.
        pub rsa_key_size: i64 = Opt::of(int(None, None))
            .default("2048")
            .namespace(MAGNUM)
            .help("Size of generated private key."),
    }
}

oslo_config::group! {
    /// `[cluster]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Cluster {
        /// `etcd_discovery_service_endpoint_format`.
        pub etcd_discovery_service_endpoint_format: String = Opt::of(OptType::string())
            .default("https://discovery.etcd.io/new?size=%(size)d")
            .namespace(MAGNUM)
            .help("Url for etcd public discovery endpoint."),
        /// `nodes_affinity_policy`.
        pub nodes_affinity_policy: String = Opt::of(OptType::string())
            .default("soft-anti-affinity")
            .namespace(MAGNUM)
            .help("Affinity policy for server group of cluster nodes. Possible values include \"affinity\", \"anti-affinity\", \"soft-affinity\" and \"soft-anti-affinity\"."),
        /// `temp_cache_dir`.
        pub temp_cache_dir: String = Opt::of(OptType::string())
            .default("/var/lib/magnum/certificate-cache")
            .namespace(MAGNUM)
            .help("Explicitly specify the temporary directory to hold cached TLS certs."),
        /// `pre_delete_lb_timeout`, seconds.
        pub pre_delete_lb_timeout: i64 = Opt::of(int(None, None))
            .default("60")
            .namespace(MAGNUM)
            .help("The timeout in seconds to wait for the load balancers to be deleted."),
    }
}

oslo_config::group! {
    /// `[cluster_template]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ClusterTemplate {
        /// `kubernetes_allowed_network_drivers`.
        pub kubernetes_allowed_network_drivers: Vec<String> = Opt::of(OptType::list())
            .default("flannel,calico")
            .namespace(MAGNUM)
            .help("Allowed network drivers for kubernetes."),
        /// `kubernetes_default_network_driver`.
        pub kubernetes_default_network_driver: String = Opt::of(OptType::string())
            .default("flannel")
            .namespace(MAGNUM)
            .help("Default network driver for kubernetes cluster-templates."),
    }
}

oslo_config::group! {
    /// `[kubernetes]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Kubernetes {
        /// `keystone_auth_default_policy`.
        pub keystone_auth_default_policy: String = Opt::of(OptType::string())
            .default("/etc/magnum/keystone_auth_default_policy.json")
            .namespace(MAGNUM)
            .help("Explicitly specify the path to the file defined default Keystone auth policy for Kubernetes cluster when the Keystone auth is enabled. Vendors can put their specific default policy here"),
        /// `post_install_manifest_url`.
        pub post_install_manifest_url: String = Opt::of(OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("An URL of the manifest file will be installed after the Kubernetes cluster created. For exmaple, this could be a file including the vendor specific storage class."),
        /// `health_polling_interval`, seconds; negative disables.
        pub health_polling_interval: i64 = Opt::of(int(None, None))
            .default("60")
            .namespace(MAGNUM)
            .help("The default polling interval for Kubernetes cluster health. If this number is negative the periodic task will be disabled."),
    }
}

oslo_config::group! {
    /// `[cinder]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Cinder {
        /// `default_docker_volume_type`.
        pub default_docker_volume_type: String = Opt::of(OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("The default docker volume_type to use for volumes used for docker storage. To use the cinder volumes for docker storage, you need to select a default value. Otherwise, Magnum will select random one from Cinder volume type list."),
        /// `default_etcd_volume_type`.
        pub default_etcd_volume_type: String = Opt::of(OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("The default etcd volume_type to use for volumes used for etcd storage. To use the cinder volumes for etcd storage, you need to select a default value. Otherwise, Magnum will select random one from Cinder volume type list."),
        /// `default_boot_volume_type`.
        pub default_boot_volume_type: String = Opt::of(OptType::string())
            .default("")
            .namespace(MAGNUM)
            .help("The default boot volume_type to use for volumes used for VM of COE. To use the cinder volumes for VM of COE, you need to select a default value. Otherwise, Magnum will select random one from Cinder volume type list."),
        /// `default_boot_volume_size`, GiB.
        pub default_boot_volume_size: i64 = Opt::of(int(None, None))
            .default("0")
            .namespace(MAGNUM)
            .help("The default volume size to use for volumes used for VM of COE."),
    }
}

oslo_config::group! {
    /// `[conductor]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Conductor {
        /// `topic`.
        pub topic: String = Opt::of(OptType::string())
            .default("magnum-conductor")
            .namespace(MAGNUM)
            .help("The queue to add conductor tasks to."),
        /// `workers`; `None` means the number of CPUs.
        pub workers: Option<i64> = Opt::of(int(None, None))
            .namespace(MAGNUM)
            .help("Number of magnum-conductor processes to fork and run. Default to number of CPUs on the host."),
    }
}

oslo_config::group! {
    /// `[profiler]` (only the switch is modelled).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Profiler {
        /// `enabled` (deprecated name `profiler_enabled`).
        pub enabled: bool = Opt::of(OptType::Boolean)
            .default("false")
            .deprecated_name("profiler_enabled")
            .namespace(MAGNUM)
            .help("Enable the profiling for all services on this node.\nDefault value is False (fully disable the profiling feature).\n* True: Enables the feature * False: Disables the feature. The profiling cannot be started via this project   operations. If the profiling is triggered by another project, this project   part will be empty."),
    }
}

oslo_config::group! {
    /// `[healthcheck]`: oslo.middleware's healthcheck app. Magnum configures it
    /// in api-paste.ini, which is not read, so the defaults are the values
    /// Magnum's paste file sets and the group lets operators change them.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Healthcheck {
        // Magnum: etc/magnum/api-paste.ini [app:healthcheck].
        /// `backends`; "disable_by_file" is supported.
        pub backends: Vec<String> = Opt::of(OptType::list())
            .default("disable_by_file")
            .namespace(HEALTHCHECK)
            .help("Additional backends that can perform health checks and report that information back as part of a request; \"disable_by_file\" is supported."),
        /// `detailed`.
        pub detailed: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(HEALTHCHECK)
            .help("Show more detailed information as part of the response."),
        /// `disable_by_file_path`: 503 while this file exists.
        pub disable_by_file_path: String = Opt::of(OptType::string())
            .default("/etc/magnum/healthcheck_disable")
            .namespace(HEALTHCHECK)
            .help("While this file exists, /healthcheck answers 503."),
    }
}

oslo_config::group! {
    /// `[capi]`, openkeel-magnum's own: how the service reaches its Cluster API
    /// management cluster.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Capi {
        // Ours: the Cluster API management cluster.
        /// `kubeconfig`: a kubeconfig file; empty means the in-cluster service
        /// account.
        pub kubeconfig: String = Opt::of(OptType::string())
            .default("")
            .namespace(OURS)
            .help("Path of the kubeconfig file of the Cluster API management cluster; empty for the in-cluster service account."),
        /// `management_cluster`: `kubeconfig` (the cluster of `kubeconfig`) or
        /// `memory` (an in-memory Kubernetes API inside an all-in-one process).
        pub management_cluster: String = Opt::of(choices(&["kubeconfig", "memory"]))
            .default("kubeconfig")
            .namespace(OURS)
            .help("Where the drivers' Kubernetes is: kubeconfig, the cluster of [capi]/kubeconfig; memory, an in-memory Kubernetes API inside the process, for trying a driver with all-in-one (all-in-one only; its objects are lost when the process ends)."),
        /// `namespace`: the management namespace of clusters' objects and, with
        /// `[certificates]/cert_manager_type = kubernetes`, of their
        /// certificates.
        pub namespace: String = Opt::of(OptType::string())
            .default("magnum-system")
            .namespace(OURS)
            .help("Namespace of the clusters' objects in the management cluster and, with [certificates]/cert_manager_type = kubernetes, of their certificates."),
        /// `enabled`: the Cluster API driver is on and `reconciler` watches the
        /// management cluster.
        pub enabled: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OURS)
            .help("Enable the Cluster API driver (its k8s_cluster_api_<os> entry points) and make the reconciler watch the management cluster."),
        /// `lease_namespace`: the reconciler's leader-election Lease (empty:
        /// `namespace`).
        pub lease_namespace: String = Opt::of(OptType::string())
            .default("")
            .namespace(OURS)
            .help("Namespace of the reconciler's leader-election Lease; empty for [capi]/namespace."),
        /// `lease_duration`, seconds.
        pub lease_duration: i64 = Opt::of(int(Some(1), None))
            .default("15")
            .namespace(OURS)
            .help("Leader-election lease duration, in seconds."),
        /// `renew_deadline`, seconds.
        pub renew_deadline: i64 = Opt::of(int(Some(1), None))
            .default("10")
            .namespace(OURS)
            .help("Leader-election renew deadline, in seconds."),
        /// `retry_period`, seconds.
        pub retry_period: i64 = Opt::of(int(Some(1), None))
            .default("2")
            .namespace(OURS)
            .help("Leader-election retry period, in seconds."),
        /// `resync_interval`, seconds: the pass over the clusters in progress.
        pub resync_interval: i64 = Opt::of(int(Some(1), None))
            .default("10")
            .namespace(OURS)
            .help("Period, in seconds, of the pass over the clusters in progress in the database."),
        /// `request_timeout`, seconds: each call to the management cluster.
        pub request_timeout: i64 = Opt::of(int(Some(1), None))
            .default("30")
            .namespace(OURS)
            .help("Timeout, in seconds, of each call to the management cluster."),
        /// `update_grace`, seconds a topology may fail to reconcile before an
        /// update is UPDATE_FAILED.
        pub update_grace: i64 = Opt::of(int(Some(1), None))
            .default("600")
            .namespace(OURS)
            .help("How long, in seconds, a topology may fail to reconcile before an update is UPDATE_FAILED."),
        /// `delete_timeout`, seconds a deletion may make no progress before the
        /// cluster is DELETE_FAILED.
        pub delete_timeout: i64 = Opt::of(int(Some(1), None))
            .default("3600")
            .namespace(OURS)
            .help("How long, in seconds, a deletion may make no progress before the cluster is DELETE_FAILED."),
        /// `app_credential_roles`: the roles of a cluster's application
        /// credential, among those the user has.
        pub app_credential_roles: Vec<String> = Opt::of(OptType::list())
            .default("member,load-balancer_member")
            .namespace(OURS)
            .help("Roles of a cluster's application credential, among those the user has."),
        /// `addons_manifests_dir`: operator CNI manifests (empty for none).
        pub addons_manifests_dir: String = Opt::of(OptType::string())
            .default("")
            .namespace(OURS)
            .help("Directory of operator CNI manifests, cilium/<cilium_tag>.yaml and calico/<calico_tag>.yaml; empty for none."),
    }
}

oslo_config::group! {
    /// `[metrics]`, openkeel-magnum's own: the Prometheus listener.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Metrics {
        // Ours: the Prometheus listener.
        /// `enabled`: serve `GET /metrics` (off by default).
        pub enabled: bool = Opt::of(OptType::Boolean)
            .default("false")
            .namespace(OURS)
            .help("Serve Prometheus metrics (GET /metrics, in the OpenMetrics text format) on a listener of their own, [metrics]/host and [metrics]/port; served by api, all-in-one and reconciler."),
        /// `host`: the listen address (an IP address).
        pub host: String = Opt::of(OptType::IpAddress)
            .default("127.0.0.1")
            .namespace(OURS)
            .help("The IP address the metrics listener binds."),
        /// `port`.
        pub port: u16 = Opt::of(OptType::Port)
            .default("9513")
            .namespace(OURS)
            .help("The port of the metrics listener."),
    }
}

oslo_config::group! {
    /// `[tracing]`, openkeel-magnum's own: OpenTelemetry traces over
    /// OTLP/HTTP.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Tracing {
        // Ours: OpenTelemetry traces.
        /// `otlp_endpoint`: the collector's base URL (empty: off).
        pub otlp_endpoint: String = Opt::of(OptType::string())
            .default("")
            .namespace(OURS)
            .help("The http(s) URL of an OTLP/HTTP collector (http://collector:4318): spans of the API requests, driver calls and status-loop passes are posted to <otlp_endpoint>/v1/traces (protobuf). Empty (the default): no traces, unless OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set."),
        /// `service_name`.
        pub service_name: String = Opt::of(OptType::string())
            .default("openkeel-magnum")
            .namespace(OURS)
            .help("The service.name of the spans."),
        /// `sample_ratio`, 0 to 1.
        pub sample_ratio: f64 = Opt::of(OptType::Float { min: Some(0.0), max: Some(1.0) })
            .default("1.0")
            .namespace(OURS)
            .help("The share of traces recorded (a span whose parent was recorded is recorded)."),
        /// `export_timeout`, in seconds.
        pub export_timeout: i64 = Opt::of(int(Some(1), None))
            .default("10")
            .namespace(OURS)
            .help("Timeout, in seconds, of each post to the collector; spans are exported in the background and dropped when the collector does not keep up."),
    }
}

oslo_config::group! {
    /// The keystoneauth1 "password" plugin options, shared by
    /// `[keystone_authtoken]` and `[keystone_auth]`, in the order
    /// keystoneauth1 lists them.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Credentials {
        /// `auth_url`.
        pub auth_url: Option<String> = Opt::of(OptType::string()).help("Authentication URL"),
        /// `system_scope`.
        pub system_scope: Option<String> = Opt::of(OptType::string()).help("Scope for system operations"),
        /// `domain_id`.
        pub domain_id: Option<String> = Opt::of(OptType::string()).help("Domain ID to scope to"),
        /// `domain_name`.
        pub domain_name: Option<String> = Opt::of(OptType::string()).help("Domain name to scope to"),
        /// `project_id` (deprecated name `tenant_id`).
        pub project_id: Option<String> = Opt::of(OptType::string())
            .deprecated_name("tenant_id")
            .help("Project ID to scope to"),
        /// `project_name` (deprecated name `tenant_name`).
        pub project_name: Option<String> = Opt::of(OptType::string())
            .deprecated_name("tenant_name")
            .help("Project name to scope to"),
        /// `project_domain_id`.
        pub project_domain_id: Option<String> = Opt::of(OptType::string()).help("Domain ID containing project"),
        /// `project_domain_name`.
        pub project_domain_name: Option<String> = Opt::of(OptType::string()).help("Domain name containing project"),
        /// `trust_id`.
        pub trust_id: Option<String> = Opt::of(OptType::string()).help("ID of the trust to use as a trustee use"),
        /// `default_domain_id`.
        pub default_domain_id: Option<String> = Opt::of(OptType::string()).help(
            "Optional domain ID to use with v3 and v2 parameters. It will be used for both the user and \
             project domain in v3 and ignored in v2 authentication.",
        ),
        /// `default_domain_name`.
        pub default_domain_name: Option<String> = Opt::of(OptType::string()).help(
            "Optional domain name to use with v3 API and v2 parameters. It will be used for both the user \
             and project domain in v3 and ignored in v2 authentication.",
        ),
        /// `user_id`.
        pub user_id: Option<String> = Opt::of(OptType::string()).help("User id"),
        /// `username` (deprecated name `user_name`).
        pub username: Option<String> = Opt::of(OptType::string())
            .deprecated_name("user_name")
            .help("Username"),
        /// `user_domain_id`.
        pub user_domain_id: Option<String> = Opt::of(OptType::string()).help("User's domain id"),
        /// `user_domain_name`.
        pub user_domain_name: Option<String> = Opt::of(OptType::string()).help("User's domain name"),
        /// `password`.
        pub password: Option<Secret> = Opt::of(OptType::string()).secret().help("User's password"),
    }
}

oslo_config::group! {
    /// One `[<service>_client]` group: how the service reaches another
    /// OpenStack service with the caller's token. Magnum 23.0.0 registers
    /// these two options for every client group.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Client {
        /// `region_name`.
        pub region_name: Option<String> = Opt::of(OptType::string())
            .namespace(MAGNUM)
            .help("Region in Identity service catalog to use for communication with the OpenStack service."),
        /// `endpoint_type`: publicURL, internalURL or adminURL.
        pub endpoint_type: String = Opt::of(OptType::string())
            .default("publicURL")
            .namespace(MAGNUM)
            .help("Type of endpoint in Identity service catalog to use for communication with the OpenStack service."),
    }
}

oslo_config::group! {
    /// The TLS options of a client group.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ClientTls {
        /// `ca_file`.
        pub ca_file: Option<String> = Opt::of(OptType::string())
            .help("Optional CA cert file to use in SSL connections."),
        /// `cert_file`.
        pub cert_file: Option<String> = Opt::of(OptType::string())
            .help("Optional PEM-formatted certificate chain file."),
        /// `key_file`.
        pub key_file: Option<String> = Opt::of(OptType::string())
            .help("Optional PEM-formatted file that contains the private key."),
        /// `insecure`.
        pub insecure: bool = Opt::of(OptType::Boolean)
            .default("false")
            .help("If set, then the server's certificate will not be verified."),
    }
}

oslo_config::group! {
    /// A client group with the TLS options: `[octavia_client]` (the only
    /// one in Magnum 23.0.0), and magnum-cluster-api's `[capi_client]` and
    /// `[manila_client]`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct TlsClient {}
    flatten {
        /// `region_name` and `endpoint_type`.
        pub client: Client = namespace(MAGNUM),
        /// `ca_file`, `cert_file`, `key_file`, `insecure`.
        pub tls: ClientTls = namespace(MAGNUM),
    }
}

oslo_config::groups! {
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
        pub default: DefaultGroup = "DEFAULT",
        /// `[api]`.
        pub api: Api = "api",
        /// `[database]`.
        pub database: Database = "database",
        /// `[keystone_authtoken]`.
        pub keystone_authtoken: KeystoneAuthtoken = "keystone_authtoken",
        /// `[keystone_auth]`.
        pub keystone_auth: KeystoneAuth = "keystone_auth",
        /// `[oslo_policy]`.
        pub oslo_policy: OsloPolicy = "oslo_policy",
        /// `[oslo_middleware]`.
        pub oslo_middleware: OsloMiddleware = "oslo_middleware",
        /// `[oslo_messaging_notifications]`.
        pub oslo_messaging_notifications: OsloMessagingNotifications = "oslo_messaging_notifications",
        /// `[oslo_messaging_rabbit]`.
        pub oslo_messaging_rabbit: OsloMessagingRabbit = "oslo_messaging_rabbit",
        /// `[cors]`.
        pub cors: Cors = "cors",
        /// `[quotas]`.
        pub quotas: Quotas = "quotas",
        /// `[drivers]`.
        pub drivers: Drivers = "drivers",
        /// `[certificates]`.
        pub certificates: Certificates = "certificates",
        /// `[x509]`.
        pub x509: X509 = "x509",
        /// `[cluster]`.
        pub cluster: Cluster = "cluster",
        /// `[cluster_template]`.
        pub cluster_template: ClusterTemplate = "cluster_template",
        /// `[kubernetes]`.
        pub kubernetes: Kubernetes = "kubernetes",
        /// `[cinder]`.
        pub cinder: Cinder = "cinder",
        /// `[conductor]`.
        pub conductor: Conductor = "conductor",
        /// `[profiler]`.
        pub profiler: Profiler = "profiler",
        /// `[capi]` (ours).
        pub capi: Capi = "capi",
        /// `[metrics]` (ours).
        pub metrics: Metrics = "metrics",
        /// `[tracing]` (ours).
        pub tracing: Tracing = "tracing",
        /// `[healthcheck]`.
        pub healthcheck: Healthcheck = "healthcheck",
        /// `[glance_client]`.
        pub glance_client: Client = "glance_client",
        /// `[nova_client]`.
        pub nova_client: Client = "nova_client",
        /// `[neutron_client]`.
        pub neutron_client: Client = "neutron_client",
        /// `[cinder_client]`.
        pub cinder_client: Client = "cinder_client",
        /// `[barbican_client]`.
        pub barbican_client: Client = "barbican_client",
        /// `[magnum_client]`.
        pub magnum_client: Client = "magnum_client",
        /// `[octavia_client]`, the only client group of Magnum with TLS options.
        pub octavia_client: TlsClient = "octavia_client",
        /// `[capi_client]` (magnum-cluster-api's): the endpoint interface and
        /// TLS trust with which a cluster reaches the cloud's APIs, given to
        /// drivers as the `cloud` import.
        pub capi_client: TlsClient = "capi_client",
        /// `[manila_client]` (magnum-cluster-api's): how drivers reach Manila
        /// (`share-types`).
        pub manila_client: TlsClient = "manila_client",
    }
    /// Where the values come from: the files read and what overrode them.
    pub(super) provenance: Provenance
}
