package config

// none marks an option whose default is none ("<None>" in the sample).
const none = "\x00<None>"

// optDef describes one modelled option: where it lives, its oslo.config
// type and constraints, its default written the way the sample writes it,
// and the Options field it fills.
type optDef struct {
	group, name string
	kind        Kind
	def         string // none, or the default as text
	min, max    *int64
	choices     []string // allowed values (string) or allowed items (list)
	deprecated  []string // older names in the same group
	secret      bool
	// ignored, when set, is the reason logged as a warning when a file sets
	// the option: it is accepted for compatibility but has no effect.
	ignored string
	// target is a pointer to the Options field: *string, *int, *float64,
	// *bool, *[]string or *map[string]string; nil for accepted-only options.
	target any
}

// knownOption is an option of the reference sample configuration.
type knownOption struct {
	group, name, def string
	deprecated       []string // "group/name"
}

func i64(v int64) *int64 { return &v }

func (d *optDef) withMin(v int64) *optDef            { d.min = i64(v); return d }
func (d *optDef) withMax(v int64) *optDef            { d.max = i64(v); return d }
func (d *optDef) withChoices(c ...string) *optDef    { d.choices = c; return d }
func (d *optDef) withDeprecated(n ...string) *optDef { d.deprecated = n; return d }
func (d *optDef) asSecret() *optDef                  { d.secret = true; return d }
func (d *optDef) asIgnored(reason string) *optDef    { d.ignored = reason; return d }

func opt(group, name string, kind Kind, def string, target any) *optDef {
	return &optDef{group: group, name: name, kind: kind, def: def, target: target}
}

// Magnum's allowed x509 extension and key usage names
// (magnum/common/x509/extensions.py).
var (
	x509Extensions = []string{
		"authorityKeyIdentifier", "subjectKeyIdentifier", "authorityInfoAccess",
		"basicConstraints", "cRLDistributionPoints", "certificatePolicies",
		"extendedKeyUsage", "OCSPNoCheck", "inhibitAnyPolicy", "keyUsage",
		"nameConstraints", "subjectAltName", "issuerAltName",
	}
	x509KeyUsages = []string{
		"Digital Signature", "Non Repudiation", "Key Encipherment",
		"Data Encipherment", "Key Agreement", "Certificate Sign", "CRL Sign",
		"Encipher Only", "Decipher Only",
	}
)

// credentialDefs are the keystoneauth1 password plugin options of group.
func credentialDefs(group string, c *Credentials) []*optDef {
	return []*optDef{
		opt(group, "auth_url", KindString, none, &c.AuthURL),
		opt(group, "user_id", KindString, none, &c.UserID),
		opt(group, "username", KindString, none, &c.Username).withDeprecated("user_name"),
		opt(group, "password", KindString, none, &c.Password).asSecret(),
		opt(group, "user_domain_id", KindString, none, &c.UserDomainID),
		opt(group, "user_domain_name", KindString, none, &c.UserDomainName),
		opt(group, "project_id", KindString, none, &c.ProjectID).withDeprecated("tenant_id"),
		opt(group, "project_name", KindString, none, &c.ProjectName).withDeprecated("tenant_name"),
		opt(group, "project_domain_id", KindString, none, &c.ProjectDomainID),
		opt(group, "project_domain_name", KindString, none, &c.ProjectDomainName),
		opt(group, "domain_id", KindString, none, &c.DomainID),
		opt(group, "domain_name", KindString, none, &c.DomainName),
		opt(group, "system_scope", KindString, none, &c.SystemScope),
		opt(group, "trust_id", KindString, none, &c.TrustID),
		opt(group, "default_domain_id", KindString, none, &c.DefaultDomainID),
		opt(group, "default_domain_name", KindString, none, &c.DefaultDomainName),
	}
}

func clientDefs(group string, c *ClientOptions, tls bool) []*optDef {
	defs := []*optDef{
		opt(group, "region_name", KindString, none, &c.RegionName),
		opt(group, "endpoint_type", KindString, "publicURL", &c.EndpointType),
	}
	if tls {
		defs = append(defs,
			opt(group, "ca_file", KindString, none, &c.CAFile),
			opt(group, "cert_file", KindString, none, &c.CertFile),
			opt(group, "key_file", KindString, none, &c.KeyFile),
			opt(group, "insecure", KindBool, "false", &c.Insecure),
		)
	}
	return defs
}

// defs returns the modelled options of o, each bound to its field.
func (o *Options) defs() []*optDef {
	d := &o.Default
	a := &o.API
	db := &o.Database
	ka := &o.KeystoneAuthtoken
	kc := &o.KeystoneAuth
	defs := []*optDef{
		opt("DEFAULT", "debug", KindBool, "false", &d.Debug),
		opt("DEFAULT", "host", KindHostAddress, none, &d.Host),
		opt("DEFAULT", "transport_url", KindString, "rabbit://", &d.TransportURL).asSecret(),
		// Magnum: magnum/common/rpc.py set_defaults(control_exchange='magnum').
		opt("DEFAULT", "control_exchange", KindString, "magnum", &d.ControlExchange),
		opt("DEFAULT", "rpc_response_timeout", KindInt, "60", &d.RPCResponseTimeout),
		opt("DEFAULT", "service_down_time", KindInt, "180", &d.ServiceDownTime),
		opt("DEFAULT", "periodic_enable", KindBool, "true", &d.PeriodicEnable),
		opt("DEFAULT", "periodic_interval_max", KindInt, "60", &d.PeriodicIntervalMax),
		opt("DEFAULT", "log_file", KindString, none, &d.LogFile).withDeprecated("logfile"),
		opt("DEFAULT", "log_dir", KindString, none, &d.LogDir).withDeprecated("logdir"),
		opt("DEFAULT", "use_json", KindBool, "false", &d.UseJSON),
		opt("DEFAULT", "use_stderr", KindBool, "false", &d.UseStderr),
		opt("DEFAULT", "auth_strategy", KindString, "keystone", &d.AuthStrategy).withChoices("keystone", "noauth"),

		opt("api", "port", KindPort, "9511", &a.Port),
		opt("api", "host", KindIP, "127.0.0.1", &a.Host),
		opt("api", "max_limit", KindInt, "1000", &a.MaxLimit),
		opt("api", "api_paste_config", KindString, "api-paste.ini", &a.APIPasteConfig).
			asIgnored("the middleware pipeline is built in; the paste file is not read"),
		opt("api", "ssl_cert_file", KindString, none, &a.SSLCertFile),
		opt("api", "ssl_key_file", KindString, none, &a.SSLKeyFile),
		opt("api", "enabled_ssl", KindBool, "false", &a.EnabledSSL),
		opt("api", "workers", KindInt, none, &a.Workers),

		opt("database", "connection", KindString, none, &db.Connection).asSecret(),
		opt("database", "mysql_engine", KindString, "InnoDB", &db.MySQLEngine),
		opt("database", "mysql_sql_mode", KindString, "TRADITIONAL", &db.MySQLSQLMode),
		opt("database", "sqlite_synchronous", KindBool, "true", &db.SQLiteSynchronous),
		opt("database", "connection_recycle_time", KindInt, "3600", &db.ConnectionRecycleTime),
		opt("database", "max_pool_size", KindInt, "5", &db.MaxPoolSize),
		opt("database", "max_overflow", KindInt, "50", &db.MaxOverflow),
		opt("database", "pool_timeout", KindInt, none, &db.PoolTimeout),
		opt("database", "max_retries", KindInt, "10", &db.MaxRetries),
		opt("database", "retry_interval", KindInt, "10", &db.RetryInterval),
		opt("database", "connection_debug", KindInt, "0", &db.ConnectionDebug).withMin(0).withMax(100),
		opt("database", "db_retry_interval", KindInt, "1", &db.DBRetryInterval),
		opt("database", "db_inc_retry_interval", KindBool, "true", &db.DBIncRetryInterval),
		opt("database", "db_max_retry_interval", KindInt, "10", &db.DBMaxRetryInterval),
		opt("database", "db_max_retries", KindInt, "20", &db.DBMaxRetries),
		opt("database", "connection_parameters", KindString, "", &db.ConnectionParameters),

		opt("keystone_authtoken", "www_authenticate_uri", KindString, none, &ka.WWWAuthenticateURI),
		opt("keystone_authtoken", "auth_version", KindString, none, &ka.AuthVersion),
		opt("keystone_authtoken", "interface", KindString, "internal", &ka.Interface),
		opt("keystone_authtoken", "delay_auth_decision", KindBool, "false", &ka.DelayAuthDecision),
		opt("keystone_authtoken", "http_connect_timeout", KindInt, none, &ka.HTTPConnectTimeout),
		opt("keystone_authtoken", "http_request_max_retries", KindInt, "3", &ka.HTTPRequestMaxRetries),
		opt("keystone_authtoken", "certfile", KindString, none, &ka.CertFile),
		opt("keystone_authtoken", "keyfile", KindString, none, &ka.KeyFile),
		opt("keystone_authtoken", "cafile", KindString, none, &ka.CAFile),
		opt("keystone_authtoken", "insecure", KindBool, "false", &ka.Insecure),
		opt("keystone_authtoken", "region_name", KindString, none, &ka.RegionName),
		opt("keystone_authtoken", "memcached_servers", KindList, none, &ka.MemcachedServers).
			withDeprecated("memcache_servers").
			asIgnored("tokens are cached in-process; memcached is not used"),
		opt("keystone_authtoken", "token_cache_time", KindInt, "300", &ka.TokenCacheTime),
		opt("keystone_authtoken", "include_service_catalog", KindBool, "true", &ka.IncludeServiceCatalog),
		opt("keystone_authtoken", "enforce_token_bind", KindString, "permissive", &ka.EnforceTokenBind),
		opt("keystone_authtoken", "service_token_roles", KindList, "service", &ka.ServiceTokenRoles),
		opt("keystone_authtoken", "service_token_roles_required", KindBool, "true", &ka.ServiceTokenRolesRequired),
		opt("keystone_authtoken", "service_type", KindString, none, &ka.ServiceType),
		opt("keystone_authtoken", "auth_type", KindString, none, &ka.AuthType).withDeprecated("auth_plugin"),
		opt("keystone_authtoken", "auth_section", KindString, none, &ka.AuthSection),

		// Magnum: magnum/conf/keystone.py forces auth_type's default to "password".
		opt("keystone_auth", "auth_type", KindString, "password", &kc.AuthType).withDeprecated("auth_plugin"),
		opt("keystone_auth", "auth_section", KindString, none, &kc.AuthSection),
		// keystoneauth1 session options: registered by Magnum, not in the sample.
		opt("keystone_auth", "cafile", KindString, none, &kc.CAFile),
		opt("keystone_auth", "certfile", KindString, none, &kc.CertFile),
		opt("keystone_auth", "keyfile", KindString, none, &kc.KeyFile),
		opt("keystone_auth", "insecure", KindBool, "false", &kc.Insecure),
		opt("keystone_auth", "timeout", KindInt, none, &kc.Timeout),

		opt("oslo_policy", "enforce_new_defaults", KindBool, "true", &o.OsloPolicy.EnforceNewDefaults),
		opt("oslo_policy", "policy_file", KindString, "policy.yaml", &o.OsloPolicy.PolicyFile),
		opt("oslo_policy", "policy_default_rule", KindString, "default", &o.OsloPolicy.PolicyDefaultRule),
		opt("oslo_policy", "policy_dirs", KindMulti, "policy.d", &o.OsloPolicy.PolicyDirs),
		opt("oslo_policy", "remote_timeout", KindFloat, "60", &o.OsloPolicy.RemoteTimeout).withMin(0),
		// oslo.policy 6.x has no enforce_scope: scope is always enforced.
		opt("oslo_policy", "enforce_scope", KindBool, "true", nil).
			asIgnored("oslo.policy 6.x has no such option; scope is always enforced"),

		opt("oslo_middleware", "enable_proxy_headers_parsing", KindBool, "false",
			&o.OsloMiddleware.EnableProxyHeadersParsing),

		opt("oslo_messaging_notifications", "driver", KindMulti, "", &o.OsloMessagingNotifications.Driver),
		opt("oslo_messaging_notifications", "transport_url", KindString, none,
			&o.OsloMessagingNotifications.TransportURL).asSecret(),
		opt("oslo_messaging_notifications", "topics", KindList, "notifications", &o.OsloMessagingNotifications.Topics),
		opt("oslo_messaging_notifications", "retry", KindInt, "-1", &o.OsloMessagingNotifications.Retry),

		opt("cors", "allowed_origin", KindList, none, &o.CORS.AllowedOrigin),
		opt("cors", "allow_credentials", KindBool, "true", &o.CORS.AllowCredentials),
		// Magnum: magnum/common/config.py set_cors_middleware_defaults.
		opt("cors", "expose_headers", KindList,
			"X-Auth-Token,X-Subject-Token,X-Service-Token,X-OpenStack-Request-ID,X-Server-Management-Url",
			&o.CORS.ExposeHeaders),
		opt("cors", "max_age", KindInt, "3600", &o.CORS.MaxAge),
		opt("cors", "allow_methods", KindList, "GET,PUT,POST,DELETE,PATCH", &o.CORS.AllowMethods),
		opt("cors", "allow_headers", KindList,
			"X-Auth-Token,X-Identity-Status,X-Roles,X-Service-Catalog,X-User-Id,X-Tenant-Id,X-OpenStack-Request-ID,X-Server-Management-Url",
			&o.CORS.AllowHeaders),

		opt("quotas", "max_clusters_per_project", KindInt, "20", &o.Quotas.MaxClustersPerProject),

		opt("drivers", "verify_ca", KindBool, "true", &o.Drivers.VerifyCA),
		opt("drivers", "openstack_ca_file", KindString, "", &o.Drivers.OpenstackCAFile),
		opt("drivers", "disabled_drivers", KindList, "", &o.Drivers.DisabledDrivers),
		opt("drivers", "enabled_beta_drivers", KindList, "", &o.Drivers.EnabledBetaDrivers),
		opt("drivers", "default_driver", KindString, none, &o.Drivers.DefaultDriver),

		opt("certificates", "cert_manager_type", KindString, "barbican", &o.Certificates.CertManagerType),
		opt("certificates", "storage_path", KindString, "/var/lib/magnum/certificates/", &o.Certificates.StoragePath),

		opt("x509", "allow_ca", KindBool, "false", &o.X509.AllowCA),
		opt("x509", "allowed_extensions", KindList,
			"keyUsage,extendedKeyUsage,subjectAltName,basicConstraints,subjectKeyIdentifier",
			&o.X509.AllowedExtensions).withChoices(x509Extensions...),
		opt("x509", "allowed_key_usage", KindList, "Digital Signature,Key Encipherment,Non Repudiation",
			&o.X509.AllowedKeyUsage).withChoices(x509KeyUsages...),
		opt("x509", "term_of_validity", KindInt, "1825", &o.X509.TermOfValidity),
		opt("x509", "rsa_key_size", KindInt, "2048", &o.X509.RSAKeySize),

		opt("cluster", "etcd_discovery_service_endpoint_format", KindString,
			"https://discovery.etcd.io/new?size=%(size)d", &o.Cluster.EtcdDiscoveryServiceEndpointFormat),
		opt("cluster", "nodes_affinity_policy", KindString, "soft-anti-affinity", &o.Cluster.NodesAffinityPolicy),
		opt("cluster", "temp_cache_dir", KindString, "/var/lib/magnum/certificate-cache", &o.Cluster.TempCacheDir),
		opt("cluster", "pre_delete_lb_timeout", KindInt, "60", &o.Cluster.PreDeleteLBTimeout),

		opt("cluster_template", "kubernetes_allowed_network_drivers", KindList, "flannel,calico",
			&o.ClusterTemplate.KubernetesAllowedNetworkDrivers),
		opt("cluster_template", "kubernetes_default_network_driver", KindString, "flannel",
			&o.ClusterTemplate.KubernetesDefaultNetworkDriver),

		opt("kubernetes", "keystone_auth_default_policy", KindString,
			"/etc/magnum/keystone_auth_default_policy.json", &o.Kubernetes.KeystoneAuthDefaultPolicy),
		opt("kubernetes", "post_install_manifest_url", KindString, "", &o.Kubernetes.PostInstallManifestURL),
		opt("kubernetes", "health_polling_interval", KindInt, "60", &o.Kubernetes.HealthPollingInterval),

		opt("cinder", "default_docker_volume_type", KindString, "", &o.Cinder.DefaultDockerVolumeType),
		opt("cinder", "default_etcd_volume_type", KindString, "", &o.Cinder.DefaultEtcdVolumeType),
		opt("cinder", "default_boot_volume_type", KindString, "", &o.Cinder.DefaultBootVolumeType),
		opt("cinder", "default_boot_volume_size", KindInt, "0", &o.Cinder.DefaultBootVolumeSize),

		opt("conductor", "topic", KindString, "magnum-conductor", &o.Conductor.Topic),
		opt("conductor", "workers", KindInt, none, &o.Conductor.Workers),

		opt("profiler", "enabled", KindBool, "false", &o.Profiler.Enabled).withDeprecated("profiler_enabled"),
	}
	defs = append(defs, credentialDefs("keystone_authtoken", &ka.Credentials)...)
	defs = append(defs, credentialDefs("keystone_auth", &kc.Credentials)...)
	defs = append(defs, clientDefs("glance_client", &o.GlanceClient, false)...)
	defs = append(defs, clientDefs("nova_client", &o.NovaClient, false)...)
	defs = append(defs, clientDefs("neutron_client", &o.NeutronClient, false)...)
	defs = append(defs, clientDefs("cinder_client", &o.CinderClient, false)...)
	defs = append(defs, clientDefs("barbican_client", &o.BarbicanClient, false)...)
	defs = append(defs, clientDefs("magnum_client", &o.MagnumClient, false)...)
	defs = append(defs, clientDefs("octavia_client", &o.OctaviaClient, true)...)
	return defs
}
