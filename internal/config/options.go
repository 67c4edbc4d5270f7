package config

// Options is the typed configuration of the service. Group and option names
// are Magnum's (the INI name is in each field's comment); defaults are those
// the running reference uses, which are the sample's except where noted.
//
// An option whose reference default is none ("<None>") is the zero value
// here: "" for strings, 0 for integers ("unset"), nil for lists.
type Options struct {
	Default                    DefaultOptions
	API                        APIOptions
	Database                   DatabaseOptions
	KeystoneAuthtoken          KeystoneAuthtokenOptions
	KeystoneAuth               KeystoneAuthOptions
	OsloPolicy                 OsloPolicyOptions
	OsloMiddleware             OsloMiddlewareOptions
	OsloMessagingNotifications OsloMessagingNotificationsOptions
	CORS                       CORSOptions
	Quotas                     QuotasOptions
	Drivers                    DriversOptions
	Certificates               CertificatesOptions
	X509                       X509Options
	Cluster                    ClusterOptions
	ClusterTemplate            ClusterTemplateOptions
	Kubernetes                 KubernetesOptions
	Cinder                     CinderOptions
	Conductor                  ConductorOptions
	Profiler                   ProfilerOptions
	Healthcheck                HealthcheckOptions
	CAPI                       CAPIOptions
	GlanceClient               ClientOptions // [glance_client]
	NovaClient                 ClientOptions // [nova_client]
	NeutronClient              ClientOptions // [neutron_client]
	CinderClient               ClientOptions // [cinder_client]
	BarbicanClient             ClientOptions // [barbican_client]
	MagnumClient               ClientOptions // [magnum_client]
	OctaviaClient              ClientOptions // [octavia_client], the only one with TLS options

	// Files are the configuration files read, in load order. oslo.config
	// resolves relative paths such as [oslo_policy]/policy_file against
	// their directories.
	Files []string

	// raw holds every value read from the files, for Lookup.
	raw *resolver
}

// DefaultOptions is the [DEFAULT] group.
type DefaultOptions struct {
	Debug bool // debug (oslo.log)
	// Host is the node name (host, host address value); "" means the
	// caller uses the machine's host name, as Magnum does.
	Host         string
	TransportURL string // transport_url (oslo.messaging), secret
	// ControlExchange is control_exchange; Magnum sets it to "magnum" at
	// start-up although the sample shows oslo.messaging's "openstack".
	ControlExchange     string
	RPCResponseTimeout  int  // rpc_response_timeout, seconds
	ServiceDownTime     int  // service_down_time, seconds: mservices up/down
	PeriodicEnable      bool // periodic_enable
	PeriodicIntervalMax int  // periodic_interval_max, seconds
	LogFile             string
	LogDir              string
	UseJSON             bool
	UseStderr           bool
	// AuthStrategy is not a Magnum option: "keystone" (default) validates
	// tokens with Keystone, "noauth" trusts the identity headers and is for
	// tests and all-in-one only.
	AuthStrategy string
}

// APIOptions is the [api] group.
type APIOptions struct {
	Host string // host (IP address value)
	Port int    // port (0-65535)
	// MaxLimit is max_limit: default and cap of "limit" on collections.
	MaxLimit int
	// APIPasteConfig is api_paste_config; accepted for compatibility and
	// ignored (the middleware chain is built in), with a warning when set.
	APIPasteConfig string
	SSLCertFile    string // ssl_cert_file
	SSLKeyFile     string // ssl_key_file
	EnabledSSL     bool   // enabled_ssl
	Workers        int    // workers; 0 means the number of CPUs
}

// DatabaseOptions is the [database] group (oslo.db plus Magnum's own).
type DatabaseOptions struct {
	// Connection is the SQLAlchemy URL (secret); see ParseDatabaseURL.
	// Deviation: Magnum defaults it to an SQLite file under its Python
	// package directory; here it is unset and the caller must supply one.
	Connection            string
	MySQLEngine           string // mysql_engine
	MySQLSQLMode          string // mysql_sql_mode
	SQLiteSynchronous     bool   // sqlite_synchronous
	ConnectionRecycleTime int    // connection_recycle_time, seconds
	MaxPoolSize           int    // max_pool_size; 0 means no limit
	MaxOverflow           int    // max_overflow
	PoolTimeout           int    // pool_timeout, seconds; 0 = unset
	MaxRetries            int    // max_retries at start-up; -1 = forever
	RetryInterval         int    // retry_interval, seconds
	ConnectionDebug       int    // connection_debug, 0-100
	DBRetryInterval       int    // db_retry_interval, seconds
	DBIncRetryInterval    bool   // db_inc_retry_interval
	DBMaxRetryInterval    int    // db_max_retry_interval, seconds
	DBMaxRetries          int    // db_max_retries; -1 = forever
	ConnectionParameters  string // connection_parameters, appended to the URL query
}

// Credentials are the keystoneauth1 "password" plugin options, shared by
// [keystone_authtoken] and [keystone_auth].
type Credentials struct {
	AuthURL           string // auth_url
	UserID            string // user_id
	Username          string // username
	Password          string // password, secret
	UserDomainID      string // user_domain_id
	UserDomainName    string // user_domain_name
	ProjectID         string // project_id
	ProjectName       string // project_name
	ProjectDomainID   string // project_domain_id
	ProjectDomainName string // project_domain_name
	DomainID          string // domain_id
	DomainName        string // domain_name
	SystemScope       string // system_scope
	TrustID           string // trust_id
	DefaultDomainID   string // default_domain_id
	DefaultDomainName string // default_domain_name
}

// KeystoneAuthtokenOptions is the [keystone_authtoken] group
// (keystonemiddleware's auth_token plus the auth plugin options).
type KeystoneAuthtokenOptions struct {
	Credentials
	// WWWAuthenticateURI is www_authenticate_uri: sent in WWW-Authenticate
	// on 401 and copied into the request context as auth_url.
	WWWAuthenticateURI    string
	AuthVersion           string // auth_version
	Interface             string // interface
	DelayAuthDecision     bool   // delay_auth_decision
	HTTPConnectTimeout    int    // http_connect_timeout, seconds; 0 = unset
	HTTPRequestMaxRetries int    // http_request_max_retries
	CertFile              string // certfile
	KeyFile               string // keyfile
	CAFile                string // cafile
	Insecure              bool   // insecure
	RegionName            string // region_name
	// MemcachedServers is memcached_servers; accepted and ignored with a
	// warning: tokens are cached in-process.
	MemcachedServers          []string
	TokenCacheTime            int      // token_cache_time, seconds; -1 disables
	IncludeServiceCatalog     bool     // include_service_catalog
	EnforceTokenBind          string   // enforce_token_bind
	ServiceTokenRoles         []string // service_token_roles
	ServiceTokenRolesRequired bool     // service_token_roles_required
	ServiceType               string   // service_type
	AuthType                  string   // auth_type
	AuthSection               string   // auth_section
}

// KeystoneAuthOptions is the [keystone_auth] group: Magnum's own service
// credentials (auth plugin and session options).
type KeystoneAuthOptions struct {
	Credentials
	// AuthType is auth_type; Magnum forces the default to "password" at
	// registration although the sample shows none.
	AuthType    string
	AuthSection string // auth_section
	CAFile      string // cafile
	CertFile    string // certfile
	KeyFile     string // keyfile
	Insecure    bool   // insecure
	Timeout     int    // timeout, seconds; 0 = unset
}

// OsloPolicyOptions is the [oslo_policy] group.
type OsloPolicyOptions struct {
	EnforceNewDefaults bool     // enforce_new_defaults
	PolicyFile         string   // policy_file
	PolicyDefaultRule  string   // policy_default_rule
	PolicyDirs         []string // policy_dirs (multi valued)
	RemoteTimeout      float64  // remote_timeout, seconds
}

// OsloMiddlewareOptions is the [oslo_middleware] group (not in the sample:
// the http_proxy_to_wsgi namespace is not part of Magnum's generator).
type OsloMiddlewareOptions struct {
	EnableProxyHeadersParsing bool // enable_proxy_headers_parsing
}

// OsloMessagingNotificationsOptions is the [oslo_messaging_notifications] group.
type OsloMessagingNotificationsOptions struct {
	Driver       []string // driver (multi valued); empty = notifications off
	TransportURL string   // transport_url, secret; "" = [DEFAULT]/transport_url
	Topics       []string // topics
	Retry        int      // retry; -1 = forever
}

// CORSOptions is the [cors] group. Magnum replaces oslo.middleware's
// defaults for the three header/method lists at start-up; those are the
// defaults here.
type CORSOptions struct {
	AllowedOrigin    []string // allowed_origin; empty disables CORS
	AllowCredentials bool     // allow_credentials
	ExposeHeaders    []string // expose_headers
	MaxAge           int      // max_age, seconds
	AllowMethods     []string // allow_methods
	AllowHeaders     []string // allow_headers
}

// QuotasOptions is the [quotas] group.
type QuotasOptions struct {
	MaxClustersPerProject int // max_clusters_per_project
}

// DriversOptions is the [drivers] group.
type DriversOptions struct {
	VerifyCA           bool     // verify_ca
	OpenstackCAFile    string   // openstack_ca_file
	DisabledDrivers    []string // disabled_drivers
	EnabledBetaDrivers []string // enabled_beta_drivers
	DefaultDriver      string   // default_driver; "" = first available
}

// CertificatesOptions is the [certificates] group.
type CertificatesOptions struct {
	CertManagerType string // cert_manager_type: barbican, x509keypair or local
	StoragePath     string // storage_path (local cert manager)
}

// X509Options is the [x509] group.
type X509Options struct {
	AllowCA           bool     // allow_ca
	AllowedExtensions []string // allowed_extensions
	AllowedKeyUsage   []string // allowed_key_usage
	TermOfValidity    int      // term_of_validity, days
	RSAKeySize        int      // rsa_key_size, bits
}

// ClusterOptions is the [cluster] group.
type ClusterOptions struct {
	EtcdDiscoveryServiceEndpointFormat string // etcd_discovery_service_endpoint_format
	NodesAffinityPolicy                string // nodes_affinity_policy
	TempCacheDir                       string // temp_cache_dir
	PreDeleteLBTimeout                 int    // pre_delete_lb_timeout, seconds
}

// ClusterTemplateOptions is the [cluster_template] group.
type ClusterTemplateOptions struct {
	KubernetesAllowedNetworkDrivers []string // kubernetes_allowed_network_drivers
	KubernetesDefaultNetworkDriver  string   // kubernetes_default_network_driver
}

// KubernetesOptions is the [kubernetes] group.
type KubernetesOptions struct {
	KeystoneAuthDefaultPolicy string // keystone_auth_default_policy
	PostInstallManifestURL    string // post_install_manifest_url
	HealthPollingInterval     int    // health_polling_interval, seconds; negative disables
}

// CinderOptions is the [cinder] group.
type CinderOptions struct {
	DefaultDockerVolumeType string // default_docker_volume_type
	DefaultEtcdVolumeType   string // default_etcd_volume_type
	DefaultBootVolumeType   string // default_boot_volume_type
	DefaultBootVolumeSize   int    // default_boot_volume_size, GiB
}

// ConductorOptions is the [conductor] group.
type ConductorOptions struct {
	Topic   string // topic
	Workers int    // workers; 0 = number of CPUs
}

// ProfilerOptions is the [profiler] group (only the switch is modelled).
type ProfilerOptions struct {
	Enabled bool // enabled
}

// HealthcheckOptions is the [healthcheck] group of oslo.middleware's
// healthcheck app. Magnum configures that app in api-paste.ini, which is not
// read here, so the defaults are the values Magnum's paste file sets and
// the group lets operators change them.
type HealthcheckOptions struct {
	Backends          []string // backends; "disable_by_file" is supported
	Detailed          bool     // detailed
	DisableByFilePath string   // disable_by_file_path: 503 while this file exists
}

// CAPIOptions is the [capi] group, openkeel-magnum's own: how the service
// reaches its Cluster API management cluster.
type CAPIOptions struct {
	// Kubeconfig is the path of a kubeconfig file; "" means the in-cluster
	// service account.
	Kubeconfig string
	// Namespace is the management namespace of clusters' objects and, with
	// [certificates]/cert_manager_type = kubernetes, of their certificates.
	Namespace string
	// Enabled turns the Cluster API driver on (its k8s_cluster_api_<os>
	// entry points) and makes `reconciler` watch the management cluster.
	Enabled bool
	// LeaseNamespace holds the reconciler's leader-election Lease
	// (Namespace when empty).
	LeaseNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election,
	// in seconds.
	LeaseDuration int
	RenewDeadline int
	RetryPeriod   int
	// ResyncInterval is the period, in seconds, of the pass over the
	// clusters in progress in the database.
	ResyncInterval int
	// RequestTimeout bounds each call to the management cluster, seconds.
	RequestTimeout int
	// UpdateGrace is how long, in seconds, a topology may fail to
	// reconcile before an update is UPDATE_FAILED.
	UpdateGrace int
	// DeleteTimeout is how long, in seconds, a deletion may make no
	// progress before the cluster is DELETE_FAILED.
	DeleteTimeout int
	// AppCredentialRoles are the roles of a cluster's application
	// credential, among those the user has.
	AppCredentialRoles []string
	// AddonsManifestsDir holds operator CNI manifests,
	// cilium/<cilium_tag>.yaml and calico/<calico_tag>.yaml ("" for none).
	AddonsManifestsDir string
}

// ClientOptions is one [<service>_client] group: how the service reaches
// another OpenStack service with the caller's token. Magnum 23.0.0 registers
// only region_name and endpoint_type for every client group, plus the TLS
// options for [octavia_client]; CAFile, CertFile, KeyFile and Insecure stay
// zero for the others.
type ClientOptions struct {
	RegionName   string // region_name
	EndpointType string // endpoint_type: publicURL, internalURL or adminURL
	CAFile       string // ca_file
	CertFile     string // cert_file
	KeyFile      string // key_file
	Insecure     bool   // insecure
}

// Lookup returns the value set in the configuration files for group/name
// (the last one for an option given several times), with "$var"
// substitution applied when it succeeds. It works for any option, modelled
// or not; ok is false when no file sets it. group is normalised the way
// section names are.
func (o *Options) Lookup(group, name string) (string, bool) {
	if o.raw == nil {
		return "", false
	}
	return o.raw.lookup(NormalizeGroup(group), name)
}

// LookupAll returns every value set for group/name across all files in
// load order (what a multi-valued option sees), substituted.
func (o *Options) LookupAll(group, name string) []string {
	if o.raw == nil {
		return nil
	}
	return o.raw.lookupAll(NormalizeGroup(group), name)
}

// KeystoneURL is the Identity endpoint Magnum uses for its own Keystone
// client: [keystone_auth]/auth_url, or [keystone_authtoken]/
// www_authenticate_uri when that is unset.
// Magnum: magnum/common/keystone.py KeystoneClientV3.auth_url.
func (o *Options) KeystoneURL() string {
	if o.KeystoneAuth.AuthURL != "" {
		return o.KeystoneAuth.AuthURL
	}
	return o.KeystoneAuthtoken.WWWAuthenticateURI
}
