package config

// none marks an option whose default is none ("<None>" in the sample).
const none = "\x00<None>"

// optDef describes one modelled option: where it lives, its oslo.config
// type and constraints, its default written the way the sample writes it,
// and the Options field it fills.
type optDef struct {
	group, name string
	kind        optKind
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

func opt(group, name string, kind optKind, def string, target any) *optDef {
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
		opt(group, "auth_url", kindString, none, &c.AuthURL),
		opt(group, "user_id", kindString, none, &c.UserID),
		opt(group, "username", kindString, none, &c.Username).withDeprecated("user_name"),
		opt(group, "password", kindString, none, &c.Password).asSecret(),
		opt(group, "user_domain_id", kindString, none, &c.UserDomainID),
		opt(group, "user_domain_name", kindString, none, &c.UserDomainName),
		opt(group, "project_id", kindString, none, &c.ProjectID).withDeprecated("tenant_id"),
		opt(group, "project_name", kindString, none, &c.ProjectName).withDeprecated("tenant_name"),
		opt(group, "project_domain_id", kindString, none, &c.ProjectDomainID),
		opt(group, "project_domain_name", kindString, none, &c.ProjectDomainName),
		opt(group, "domain_id", kindString, none, &c.DomainID),
		opt(group, "domain_name", kindString, none, &c.DomainName),
		opt(group, "system_scope", kindString, none, &c.SystemScope),
		opt(group, "trust_id", kindString, none, &c.TrustID),
		opt(group, "default_domain_id", kindString, none, &c.DefaultDomainID),
		opt(group, "default_domain_name", kindString, none, &c.DefaultDomainName),
	}
}

func clientDefs(group string, c *ClientOptions, tls bool) []*optDef {
	defs := []*optDef{
		opt(group, "region_name", kindString, none, &c.RegionName),
		opt(group, "endpoint_type", kindString, "publicURL", &c.EndpointType),
	}
	if tls {
		defs = append(defs,
			opt(group, "ca_file", kindString, none, &c.CAFile),
			opt(group, "cert_file", kindString, none, &c.CertFile),
			opt(group, "key_file", kindString, none, &c.KeyFile),
			opt(group, "insecure", kindBool, "false", &c.Insecure),
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
		opt("DEFAULT", "debug", kindBool, "false", &d.Debug),
		opt("DEFAULT", "host", kindHostAddress, none, &d.Host),
		opt("DEFAULT", "transport_url", kindString, "rabbit://", &d.TransportURL).asSecret(),
		// Magnum: magnum/common/rpc.py set_defaults(control_exchange='magnum').
		opt("DEFAULT", "control_exchange", kindString, "magnum", &d.ControlExchange),
		opt("DEFAULT", "rpc_response_timeout", kindInt, "60", &d.RPCResponseTimeout),
		opt("DEFAULT", "service_down_time", kindInt, "180", &d.ServiceDownTime),
		opt("DEFAULT", "periodic_enable", kindBool, "true", &d.PeriodicEnable),
		opt("DEFAULT", "periodic_interval_max", kindInt, "60", &d.PeriodicIntervalMax),
		opt("DEFAULT", "log_file", kindString, none, &d.LogFile).withDeprecated("logfile"),
		opt("DEFAULT", "log_dir", kindString, none, &d.LogDir).withDeprecated("logdir"),
		opt("DEFAULT", "use_json", kindBool, "false", &d.UseJSON),
		opt("DEFAULT", "use_stderr", kindBool, "false", &d.UseStderr),
		opt("DEFAULT", "auth_strategy", kindString, "keystone", &d.AuthStrategy).withChoices("keystone", "noauth"),

		opt("api", "port", kindPort, "9511", &a.Port),
		opt("api", "host", kindIP, "127.0.0.1", &a.Host),
		opt("api", "max_limit", kindInt, "1000", &a.MaxLimit),
		opt("api", "api_paste_config", kindString, "api-paste.ini", &a.APIPasteConfig).
			asIgnored("the middleware pipeline is built in; the paste file is not read"),
		opt("api", "ssl_cert_file", kindString, none, &a.SSLCertFile),
		opt("api", "ssl_key_file", kindString, none, &a.SSLKeyFile),
		opt("api", "enabled_ssl", kindBool, "false", &a.EnabledSSL),
		opt("api", "workers", kindInt, none, &a.Workers),

		opt("database", "connection", kindString, none, &db.Connection).asSecret(),
		opt("database", "mysql_engine", kindString, "InnoDB", &db.MySQLEngine),
		opt("database", "mysql_sql_mode", kindString, "TRADITIONAL", &db.MySQLSQLMode),
		opt("database", "sqlite_synchronous", kindBool, "true", &db.SQLiteSynchronous),
		opt("database", "connection_recycle_time", kindInt, "3600", &db.ConnectionRecycleTime),
		opt("database", "max_pool_size", kindInt, "5", &db.MaxPoolSize),
		opt("database", "max_overflow", kindInt, "50", &db.MaxOverflow),
		opt("database", "pool_timeout", kindInt, none, &db.PoolTimeout),
		opt("database", "max_retries", kindInt, "10", &db.MaxRetries),
		opt("database", "retry_interval", kindInt, "10", &db.RetryInterval),
		opt("database", "connection_debug", kindInt, "0", &db.ConnectionDebug).withMin(0).withMax(100),
		opt("database", "db_retry_interval", kindInt, "1", &db.DBRetryInterval),
		opt("database", "db_inc_retry_interval", kindBool, "true", &db.DBIncRetryInterval),
		opt("database", "db_max_retry_interval", kindInt, "10", &db.DBMaxRetryInterval),
		opt("database", "db_max_retries", kindInt, "20", &db.DBMaxRetries),
		opt("database", "connection_parameters", kindString, "", &db.ConnectionParameters),

		opt("keystone_authtoken", "www_authenticate_uri", kindString, none, &ka.WWWAuthenticateURI),
		opt("keystone_authtoken", "auth_version", kindString, none, &ka.AuthVersion),
		opt("keystone_authtoken", "interface", kindString, "internal", &ka.Interface),
		opt("keystone_authtoken", "delay_auth_decision", kindBool, "false", &ka.DelayAuthDecision),
		opt("keystone_authtoken", "http_connect_timeout", kindInt, none, &ka.HTTPConnectTimeout),
		opt("keystone_authtoken", "http_request_max_retries", kindInt, "3", &ka.HTTPRequestMaxRetries),
		opt("keystone_authtoken", "certfile", kindString, none, &ka.CertFile),
		opt("keystone_authtoken", "keyfile", kindString, none, &ka.KeyFile),
		opt("keystone_authtoken", "cafile", kindString, none, &ka.CAFile),
		opt("keystone_authtoken", "insecure", kindBool, "false", &ka.Insecure),
		opt("keystone_authtoken", "region_name", kindString, none, &ka.RegionName),
		opt("keystone_authtoken", "memcached_servers", kindList, none, &ka.MemcachedServers).
			withDeprecated("memcache_servers").
			asIgnored("tokens are cached in-process; memcached is not used"),
		opt("keystone_authtoken", "token_cache_time", kindInt, "300", &ka.TokenCacheTime),
		opt("keystone_authtoken", "include_service_catalog", kindBool, "true", &ka.IncludeServiceCatalog),
		opt("keystone_authtoken", "enforce_token_bind", kindString, "permissive", &ka.EnforceTokenBind),
		opt("keystone_authtoken", "service_token_roles", kindList, "service", &ka.ServiceTokenRoles),
		opt("keystone_authtoken", "service_token_roles_required", kindBool, "true", &ka.ServiceTokenRolesRequired),
		opt("keystone_authtoken", "service_type", kindString, none, &ka.ServiceType),
		opt("keystone_authtoken", "auth_type", kindString, none, &ka.AuthType).withDeprecated("auth_plugin"),
		opt("keystone_authtoken", "auth_section", kindString, none, &ka.AuthSection),

		// Magnum: magnum/conf/keystone.py forces auth_type's default to "password".
		opt("keystone_auth", "auth_type", kindString, "password", &kc.AuthType).withDeprecated("auth_plugin"),
		opt("keystone_auth", "auth_section", kindString, none, &kc.AuthSection),
		// keystoneauth1 session options: registered by Magnum, not in the sample.
		opt("keystone_auth", "cafile", kindString, none, &kc.CAFile),
		opt("keystone_auth", "certfile", kindString, none, &kc.CertFile),
		opt("keystone_auth", "keyfile", kindString, none, &kc.KeyFile),
		opt("keystone_auth", "insecure", kindBool, "false", &kc.Insecure),
		opt("keystone_auth", "timeout", kindInt, none, &kc.Timeout),

		opt("oslo_policy", "enforce_new_defaults", kindBool, "true", &o.OsloPolicy.EnforceNewDefaults),
		opt("oslo_policy", "policy_file", kindString, "policy.yaml", &o.OsloPolicy.PolicyFile),
		opt("oslo_policy", "policy_default_rule", kindString, "default", &o.OsloPolicy.PolicyDefaultRule),
		opt("oslo_policy", "policy_dirs", kindMulti, "policy.d", &o.OsloPolicy.PolicyDirs),
		opt("oslo_policy", "remote_timeout", kindFloat, "60", &o.OsloPolicy.RemoteTimeout).withMin(0),
		// oslo.policy 6.x has no enforce_scope (and Magnum's scope checks never
		// fail: it passes no system scope); accepted with a warning, readable
		// through Lookup.
		opt("oslo_policy", "enforce_scope", kindBool, "true", nil).
			asIgnored("oslo.policy 6.x has no such option"),

		opt("oslo_middleware", "enable_proxy_headers_parsing", kindBool, "false",
			&o.OsloMiddleware.EnableProxyHeadersParsing),

		opt("oslo_messaging_notifications", "driver", kindMulti, "", &o.OsloMessagingNotifications.Driver),
		opt("oslo_messaging_notifications", "transport_url", kindString, none,
			&o.OsloMessagingNotifications.TransportURL).asSecret(),
		opt("oslo_messaging_notifications", "topics", kindList, "notifications", &o.OsloMessagingNotifications.Topics),
		opt("oslo_messaging_notifications", "retry", kindInt, "-1", &o.OsloMessagingNotifications.Retry),

		opt("cors", "allowed_origin", kindList, none, &o.CORS.AllowedOrigin),
		opt("cors", "allow_credentials", kindBool, "true", &o.CORS.AllowCredentials),
		// Magnum: magnum/common/config.py set_cors_middleware_defaults.
		opt("cors", "expose_headers", kindList,
			"X-Auth-Token,X-Subject-Token,X-Service-Token,X-OpenStack-Request-ID,X-Server-Management-Url",
			&o.CORS.ExposeHeaders),
		opt("cors", "max_age", kindInt, "3600", &o.CORS.MaxAge),
		opt("cors", "allow_methods", kindList, "GET,PUT,POST,DELETE,PATCH", &o.CORS.AllowMethods),
		opt("cors", "allow_headers", kindList,
			"X-Auth-Token,X-Identity-Status,X-Roles,X-Service-Catalog,X-User-Id,X-Tenant-Id,X-OpenStack-Request-ID,X-Server-Management-Url",
			&o.CORS.AllowHeaders),

		opt("quotas", "max_clusters_per_project", kindInt, "20", &o.Quotas.MaxClustersPerProject),

		opt("drivers", "verify_ca", kindBool, "true", &o.Drivers.VerifyCA),
		opt("drivers", "openstack_ca_file", kindString, "", &o.Drivers.OpenstackCAFile),
		opt("drivers", "disabled_drivers", kindList, "", &o.Drivers.DisabledDrivers),
		opt("drivers", "enabled_beta_drivers", kindList, "", &o.Drivers.EnabledBetaDrivers),
		opt("drivers", "default_driver", kindString, none, &o.Drivers.DefaultDriver),

		opt("certificates", "cert_manager_type", kindString, "barbican", &o.Certificates.CertManagerType),
		opt("certificates", "storage_path", kindString, "/var/lib/magnum/certificates/", &o.Certificates.StoragePath),

		opt("x509", "allow_ca", kindBool, "false", &o.X509.AllowCA),
		opt("x509", "allowed_extensions", kindList,
			"keyUsage,extendedKeyUsage,subjectAltName,basicConstraints,subjectKeyIdentifier",
			&o.X509.AllowedExtensions).withChoices(x509Extensions...),
		opt("x509", "allowed_key_usage", kindList, "Digital Signature,Key Encipherment,Non Repudiation",
			&o.X509.AllowedKeyUsage).withChoices(x509KeyUsages...),
		opt("x509", "term_of_validity", kindInt, "1825", &o.X509.TermOfValidity),
		opt("x509", "rsa_key_size", kindInt, "2048", &o.X509.RSAKeySize),

		opt("cluster", "etcd_discovery_service_endpoint_format", kindString,
			"https://discovery.etcd.io/new?size=%(size)d", &o.Cluster.EtcdDiscoveryServiceEndpointFormat),
		opt("cluster", "nodes_affinity_policy", kindString, "soft-anti-affinity", &o.Cluster.NodesAffinityPolicy),
		opt("cluster", "temp_cache_dir", kindString, "/var/lib/magnum/certificate-cache", &o.Cluster.TempCacheDir),
		opt("cluster", "pre_delete_lb_timeout", kindInt, "60", &o.Cluster.PreDeleteLBTimeout),

		opt("cluster_template", "kubernetes_allowed_network_drivers", kindList, "flannel,calico",
			&o.ClusterTemplate.KubernetesAllowedNetworkDrivers),
		opt("cluster_template", "kubernetes_default_network_driver", kindString, "flannel",
			&o.ClusterTemplate.KubernetesDefaultNetworkDriver),

		opt("kubernetes", "keystone_auth_default_policy", kindString,
			"/etc/magnum/keystone_auth_default_policy.json", &o.Kubernetes.KeystoneAuthDefaultPolicy),
		opt("kubernetes", "post_install_manifest_url", kindString, "", &o.Kubernetes.PostInstallManifestURL),
		opt("kubernetes", "health_polling_interval", kindInt, "60", &o.Kubernetes.HealthPollingInterval),

		opt("cinder", "default_docker_volume_type", kindString, "", &o.Cinder.DefaultDockerVolumeType),
		opt("cinder", "default_etcd_volume_type", kindString, "", &o.Cinder.DefaultEtcdVolumeType),
		opt("cinder", "default_boot_volume_type", kindString, "", &o.Cinder.DefaultBootVolumeType),
		opt("cinder", "default_boot_volume_size", kindInt, "0", &o.Cinder.DefaultBootVolumeSize),

		opt("conductor", "topic", kindString, "magnum-conductor", &o.Conductor.Topic),
		opt("conductor", "workers", kindInt, none, &o.Conductor.Workers),

		opt("profiler", "enabled", kindBool, "false", &o.Profiler.Enabled).withDeprecated("profiler_enabled"),

		// Ours: the Cluster API management cluster.
		opt("capi", "kubeconfig", kindString, "", &o.CAPI.Kubeconfig),
		opt("capi", "namespace", kindString, "magnum-system", &o.CAPI.Namespace),
		opt("capi", "enabled", kindBool, "false", &o.CAPI.Enabled),
		opt("capi", "lease_namespace", kindString, "", &o.CAPI.LeaseNamespace),
		opt("capi", "lease_duration", kindInt, "15", &o.CAPI.LeaseDuration).withMin(1),
		opt("capi", "renew_deadline", kindInt, "10", &o.CAPI.RenewDeadline).withMin(1),
		opt("capi", "retry_period", kindInt, "2", &o.CAPI.RetryPeriod).withMin(1),
		opt("capi", "resync_interval", kindInt, "10", &o.CAPI.ResyncInterval).withMin(1),
		opt("capi", "request_timeout", kindInt, "30", &o.CAPI.RequestTimeout).withMin(1),
		opt("capi", "update_grace", kindInt, "600", &o.CAPI.UpdateGrace).withMin(1),
		opt("capi", "delete_timeout", kindInt, "3600", &o.CAPI.DeleteTimeout).withMin(1),
		opt("capi", "app_credential_roles", kindList, "member,load-balancer_member", &o.CAPI.AppCredentialRoles),
		opt("capi", "addons_manifests_dir", kindString, "", &o.CAPI.AddonsManifestsDir),
		// Magnum: etc/magnum/api-paste.ini [app:healthcheck].
		opt("healthcheck", "backends", kindList, "disable_by_file", &o.Healthcheck.Backends),
		opt("healthcheck", "detailed", kindBool, "false", &o.Healthcheck.Detailed),
		opt("healthcheck", "disable_by_file_path", kindString, "/etc/magnum/healthcheck_disable",
			&o.Healthcheck.DisableByFilePath),
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
