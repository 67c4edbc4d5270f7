//! Ports of internal/config/load_test.go and the Options half of
//! database_test.go, plus the checks of the option table itself.

use std::path::{Path, PathBuf};

use oslo_config::{Secret, ini};

use super::*;

/// Builds options from one in-memory file named "f.conf".
fn load_str(content: &str) -> Result<Loaded, ConfigError> {
    let file = match ini::parse("f.conf", content.as_bytes()) {
        Ok(f) => f,
        Err(e) => panic!("parse: {e}"),
    };
    from_files(vec![file])
}

fn ok(content: &str) -> Loaded {
    load_str(content).unwrap_or_else(|e| panic!("{e}"))
}

fn err(content: &str) -> String {
    match load_str(content) {
        Ok(_) => panic!("no error for {content:?}"),
        Err(e) => e.to_string(),
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn secret(s: &Option<Secret>) -> Option<&str> {
    s.as_ref().map(Secret::expose)
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    if let Err(e) = std::fs::write(&p, content) {
        panic!("write {}: {e}", p.display());
    }
    p
}

// Port of TestDefaults.
#[test]
fn defaults() {
    let o = Options::defaults();
    assert_eq!(o.api.host, "127.0.0.1");
    assert_eq!(o.api.port, 9511);
    assert_eq!(o.api.max_limit, 1000);
    assert_eq!(o.api.workers, None);
    assert_eq!(o.default.transport_url.expose(), "rabbit://");
    assert_eq!(o.default.auth_strategy, AuthStrategy::Keystone);
    assert_eq!(o.default.control_exchange, "magnum");
    assert_eq!(o.default.host, None);
    assert_eq!(secret(&o.database.connection), None);
    assert_eq!(o.database.max_retries, 10);
    assert_eq!(o.keystone_authtoken.token_cache_time, 300);
    assert_eq!(
        o.keystone_authtoken.service_token_roles,
        strings(&["service"])
    );
    assert_eq!(o.keystone_auth.auth_type, "password");
    assert_eq!(o.oslo_policy.policy_file, "policy.yaml");
    assert_eq!(o.oslo_policy.policy_dirs, strings(&["policy.d"]));
    assert!(o.oslo_policy.enforce_new_defaults);
    assert_eq!(o.oslo_messaging_notifications.driver, Vec::<String>::new());
    assert_eq!(o.quotas.max_clusters_per_project, 20);
    assert!(o.drivers.verify_ca);
    assert_eq!(o.drivers.enabled_beta_drivers, Vec::<String>::new());
    assert_eq!(o.certificates.cert_manager_type, "barbican");
    assert_eq!(o.x509.term_of_validity, 1825);
    assert_eq!(o.x509.rsa_key_size, 2048);
    assert_eq!(o.cors.allowed_origin, Vec::<String>::new());
    assert_eq!(
        o.cors.allow_methods,
        strings(&["GET", "PUT", "POST", "DELETE", "PATCH"])
    );
    assert_eq!(
        o.cluster_template.kubernetes_allowed_network_drivers,
        strings(&["flannel", "calico"])
    );
    assert_eq!(o.glance_client.endpoint_type, "publicURL");
    assert!(o.files().is_empty());
}

// Port of TestLoadValues.
#[test]
fn values() {
    let loaded = ok("
[DEFAULT]
debug = Yes
host = node-1.example.com
auth_strategy = noauth

[api]
port = 8080
host = ::1
workers =
max_limit = 1_000

[database]
connection = mysql+pymysql://magnum:secret@db/magnum

[keystone_authtoken]
www_authenticate_uri = http://keystone:5000/v3
auth_url = http://keystone:5000
username = magnum
password = pw
memcached_servers = a:11211, b:11211

[oslo_policy]
policy_dirs = a.d
policy_dirs = b.d

[drivers]
enabled_beta_drivers = k8s_capi , other,

[x509]
allowed_key_usage = Digital Signature, CRL Sign

[oslo_policy]
remote_timeout = 2.5
");
    let o = &loaded.options;
    assert!(o.default.debug);
    assert_eq!(o.default.host.as_deref(), Some("node-1.example.com"));
    assert_eq!(o.default.auth_strategy, AuthStrategy::NoAuth);
    assert_eq!(o.api.port, 8080);
    assert_eq!(o.api.host, "::1");
    assert_eq!(o.api.workers, None, "an empty int is unset");
    assert_eq!(o.api.max_limit, 1000, "Python int syntax");
    assert_eq!(
        secret(&o.database.connection),
        Some("mysql+pymysql://magnum:secret@db/magnum")
    );
    let ka = &o.keystone_authtoken;
    assert_eq!(
        ka.credentials.auth_url.as_deref(),
        Some("http://keystone:5000")
    );
    assert_eq!(secret(&ka.credentials.password), Some("pw"));
    assert_eq!(ka.memcached_servers, strings(&["a:11211", "b:11211"]));
    assert_eq!(
        o.oslo_policy.policy_dirs,
        strings(&["a.d", "b.d"]),
        "multi values accumulate"
    );
    assert_eq!(
        o.drivers.enabled_beta_drivers,
        strings(&["k8s_capi", "other"])
    );
    assert_eq!(
        o.x509.allowed_key_usage,
        strings(&["Digital Signature", "CRL Sign"])
    );
    assert!((o.oslo_policy.remote_timeout - 2.5).abs() < f64::EPSILON);
    assert_eq!(
        loaded.warnings,
        [
            "f.conf:21: option [keystone_authtoken]/memcached_servers is ignored: tokens are cached in-process; memcached is not used"
        ]
    );
}

// Port of TestBooleans.
#[test]
fn booleans() {
    for v in ["true", "True", "TRUE", "yes", "Yes", "on", "ON", "1"] {
        assert!(
            ok(&format!("[api]\nenabled_ssl = {v}\n"))
                .options
                .api
                .enabled_ssl,
            "{v}"
        );
    }
    for v in ["false", "False", "no", "NO", "off", "0"] {
        assert!(
            !ok(&format!("[drivers]\nverify_ca = {v}\n"))
                .options
                .drivers
                .verify_ca,
            "{v}"
        );
    }
}

// Port of TestValueErrors.
#[test]
fn value_errors() {
    let cases = [
        (
            "port not an integer",
            "[api]\nport = abc\n",
            r#"invalid value for [api]/port: "abc" is not an integer (f.conf:2)"#,
        ),
        (
            "port out of range",
            "[api]\nport = 70000\n",
            "invalid value for [api]/port: 70000 is greater than the maximum 65535 (f.conf:2)",
        ),
        (
            "negative port",
            "[api]\nport = -1\n",
            "invalid value for [api]/port: -1 is less than the minimum 0 (f.conf:2)",
        ),
        (
            "int below min",
            "[database]\nconnection_debug = -1\n",
            "invalid value for [database]/connection_debug: -1 is less than the minimum 0 (f.conf:2)",
        ),
        (
            "int above max",
            "[database]\nconnection_debug = 101\n",
            "invalid value for [database]/connection_debug: 101 is greater than the maximum 100 (f.conf:2)",
        ),
        (
            "float below min",
            "[oslo_policy]\nremote_timeout = -0.5\n",
            "invalid value for [oslo_policy]/remote_timeout: -0.5 is less than the minimum 0 (f.conf:2)",
        ),
        (
            "bad float",
            "[oslo_policy]\nremote_timeout = soon\n",
            r#"invalid value for [oslo_policy]/remote_timeout: "soon" is not a number (f.conf:2)"#,
        ),
        (
            "bad bool",
            "[DEFAULT]\ndebug = maybe\n",
            r#"invalid value for [DEFAULT]/debug: "maybe" is not a boolean (true/false, yes/no, on/off, 1/0) (f.conf:2)"#,
        ),
        (
            "bool with t",
            "[DEFAULT]\ndebug = t\n",
            r#"invalid value for [DEFAULT]/debug: "t" is not a boolean (true/false, yes/no, on/off, 1/0) (f.conf:2)"#,
        ),
        (
            "bad IP",
            "[api]\nhost = localhost\n",
            r#"invalid value for [api]/host: "localhost" is not an IPv4 or IPv6 address (f.conf:2)"#,
        ),
        (
            "bad host address",
            "[DEFAULT]\nhost = node_1\n",
            r#"invalid value for [DEFAULT]/host: "node_1" is not a valid IP address or host name (f.conf:2)"#,
        ),
        (
            "choice",
            "[DEFAULT]\nauth_strategy = basic\n",
            r#"invalid value for [DEFAULT]/auth_strategy: "basic" is not one of: keystone, noauth (f.conf:2)"#,
        ),
        (
            "list item choice",
            "[x509]\nallowed_extensions = keyUsage, bogus\n",
            r#"invalid value for [x509]/allowed_extensions: item "bogus" is not one of: authorityKeyIdentifier, subjectKeyIdentifier, authorityInfoAccess, basicConstraints, cRLDistributionPoints, certificatePolicies, extendedKeyUsage, OCSPNoCheck, inhibitAnyPolicy, keyUsage, nameConstraints, subjectAltName, issuerAltName (f.conf:2)"#,
        ),
        (
            "last value is the one checked",
            "[api]\nport = 1\nport = x\n",
            r#"invalid value for [api]/port: "x" is not an integer (f.conf:3)"#,
        ),
        (
            "unknown substitution",
            "[api]\nssl_cert_file = $nope\n",
            "invalid value for [api]/ssl_cert_file: template substitution error: no such option nope in group [api] (f.conf:2)",
        ),
        (
            "unknown substitution group",
            "[api]\nssl_cert_file = ${nope.x}\n",
            "invalid value for [api]/ssl_cert_file: template substitution error: no such group [nope] (f.conf:2)",
        ),
    ];
    for (name, input, want) in cases {
        let got = err(input);
        assert_eq!(got, want, "{name}");
        assert!(!got.contains('\n'), "{name}: one line");
    }
}

#[test]
fn several_errors_are_one_line() {
    let got = err("[api]\nport = x\nhost = y\n");
    assert_eq!(
        got,
        "invalid value for [api]/port: \"x\" is not an integer (f.conf:2); \
         invalid value for [api]/host: \"y\" is not an IPv4 or IPv6 address (f.conf:3)"
    );
}

// Port of TestSecretValuesAreNotPrinted.
#[test]
fn secret_values_are_not_printed() {
    for v in ["${hunter2.x}", "pa$hunter2", "x${hunter2}"] {
        for group in ["keystone_authtoken", "keystone_auth"] {
            let got = err(&format!("[{group}]\npassword = {v}\n"));
            assert!(!got.contains("hunter2"), "{v}: {got}");
        }
        let got = err(&format!("[database]\nconnection = {v}\n"));
        assert!(!got.contains("hunter2"), "{v}: {got}");
    }
    let o = ok("[keystone_authtoken]\npassword = hunter2\n[database]\nconnection = mysql://u:hunter2@h/db\n").options;
    let debug = format!("{o:?}");
    assert!(!debug.contains("hunter2"), "Debug shows a secret");
}

// Port of TestSubstitution.
#[test]
fn substitution() {
    let o = ok(r"
[DEFAULT]
host = node1
transport_url = rabbit://u:p@$host:5672/
log_dir = $$HOME/\$x/$ /$-${notclosed
log_file = ${api.port}-${cors.allow_methods}-$debug

[api]
host = 10.0.0.1
ssl_cert_file = /etc/$host/cert
ssl_key_file = /etc/${DEFAULT.host}/key

[keystone_authtoken]
www_authenticate_uri = http://$host:5000
auth_url = ${www_authenticate_uri}/v3
[conductor]
topic = $state_path
")
    .options;
    assert_eq!(
        o.default.transport_url.expose(),
        "rabbit://u:p@node1:5672/",
        "$name from [DEFAULT]"
    );
    assert_eq!(
        o.default.log_dir.as_deref(),
        Some("$HOME/$x/$ /$-${notclosed"),
        "escapes and stray dollars"
    );
    assert_eq!(
        o.default.log_file.as_deref(),
        Some("9511-['GET', 'PUT', 'POST', 'DELETE', 'PATCH']-False"),
        "typed values render like Python's str()"
    );
    assert_eq!(
        o.api.ssl_cert_file.as_deref(),
        Some("/etc/10.0.0.1/cert"),
        "same group first"
    );
    assert_eq!(
        o.api.ssl_key_file.as_deref(),
        Some("/etc/node1/key"),
        "${{DEFAULT.name}}"
    );
    assert_eq!(
        o.keystone_authtoken.www_authenticate_uri.as_deref(),
        Some("http://node1:5000"),
        "[DEFAULT] fallback"
    );
    assert_eq!(
        o.keystone_authtoken.credentials.auth_url.as_deref(),
        Some("http://node1:5000/v3"),
        "chained"
    );
    assert_eq!(
        o.conductor.topic, "<python site-packages>/magnum",
        "known option default, itself substituted"
    );
    assert_eq!(
        o.lookup("KEYSTONE_AUTHTOKEN", "auth_url").as_deref(),
        Some("http://node1:5000/v3")
    );
}

// Port of TestSubstitutionLoop.
#[test]
fn substitution_loop() {
    let got = err("[api]\nssl_cert_file = $ssl_key_file\nssl_key_file = $ssl_cert_file\n");
    assert!(got.contains("recursive reference"), "{got}");
}

// Port of TestWarnings.
#[test]
fn warnings() {
    let loaded = ok("[DEFAULT]
rpc_thread_pool_size = 4
bogus = 1
[keystone_auth]
tenant_name = service
[oslo_messaging_rabbit]
heartbeat_rate = 2
[nosuch]
a = 1
b = 2
[api]
api_paste_config = /etc/magnum/api-paste.ini
frobnicate = yes
");
    assert_eq!(
        loaded.warnings,
        [
            "f.conf:2: option [DEFAULT]/rpc_thread_pool_size is deprecated, use [DEFAULT]/executor_thread_pool_size",
            "f.conf:3: unknown option [DEFAULT]/bogus",
            "f.conf:5: option [keystone_auth]/tenant_name is deprecated, use [keystone_auth]/project_name",
            "f.conf:9: unknown group [nosuch]",
            "f.conf:12: option [api]/api_paste_config is ignored: the middleware pipeline is built in; the paste file is not read",
            "f.conf:13: unknown option [api]/frobnicate",
        ]
    );
}

// Port of TestDeprecatedNameSetsOption.
#[test]
fn deprecated_name_sets_option() {
    let o = ok("[keystone_auth]\ntenant_name = service\nuser_name = magnum\n").options;
    assert_eq!(
        o.keystone_auth.credentials.project_name.as_deref(),
        Some("service")
    );
    assert_eq!(
        o.keystone_auth.credentials.username.as_deref(),
        Some("magnum")
    );
}

// Port of TestLoadFilesAndDirs.
#[test]
fn files_and_dirs() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let dir = tmp.path();
    let a = write(
        dir,
        "a.conf",
        "[api]\nport = 1\nmax_limit = 10\n[oslo_policy]\npolicy_dirs = one\n",
    );
    let b = write(
        dir,
        "b.conf",
        "[api]\nport = 2\n[oslo_policy]\npolicy_dirs = two\n",
    );
    let d = dir.join("magnum.conf.d");
    std::fs::create_dir(&d).unwrap_or_else(|e| panic!("mkdir: {e}"));
    write(
        &d,
        "20-later.conf",
        "[api]\nport = 4\n[oslo_policy]\npolicy_dirs = four\n",
    );
    write(
        &d,
        "10-first.conf",
        "[api]\nport = 3\n[oslo_policy]\npolicy_dirs = three\n",
    );
    write(&d, ".hidden.conf", "[api]\nport = 99\n");
    write(&d, "ignored.conf.bak", "[api]\nport = 98\n");
    std::fs::create_dir(d.join("sub.conf")).unwrap_or_else(|e| panic!("mkdir: {e}"));

    let o = load_with_environment(&[a.clone(), b.clone()], &[], [])
        .unwrap_or_else(|e| panic!("{e}"))
        .options;
    assert_eq!(
        (o.api.port, o.api.max_limit),
        (2, 10),
        "later file should win"
    );
    assert_eq!(
        o.oslo_policy.policy_dirs,
        strings(&["one", "two"]),
        "multi across files"
    );
    assert_eq!(o.files(), [a.clone(), b.clone()]);

    let o = load_with_environment(&[a, b], std::slice::from_ref(&d), [])
        .unwrap_or_else(|e| panic!("{e}"))
        .options;
    assert_eq!(
        o.api.port, 4,
        "config dir files in sorted order, after the files"
    );
    assert_eq!(
        o.oslo_policy.policy_dirs,
        strings(&["one", "two", "three", "four"])
    );
    assert_eq!(o.lookup_all("api", "port"), ["1", "2", "3", "4"]);
    assert_eq!(o.files().last(), Some(&d.join("20-later.conf")));
}

// Port of TestLoadErrors.
#[test]
fn load_errors() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let dir = tmp.path();
    let missing = dir.join("missing.conf");
    let e = load_with_environment(std::slice::from_ref(&missing), &[], [])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_eq!(e, format!("config file {}: not found", missing.display()));
    let nodir = dir.join("nodir");
    let e = load_with_environment(&[], std::slice::from_ref(&nodir), [])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_eq!(e, format!("config dir {}: not found", nodir.display()));
    let bad = write(dir, "bad.conf", "[api]\nport = 1\nnot an option\n");
    let e = load_with_environment(std::slice::from_ref(&bad), &[], [])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_eq!(
        e,
        format!("{}:3: no ':' or '=' found in assignment", bad.display())
    );
    let secret = write(dir, "secret.conf", "[keystone_auth]\npassword hunter2\n");
    let e = load_with_environment(&[secret], &[], [])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.ends_with(":2: no ':' or '=' found in assignment") && !e.contains("hunter2"),
        "{e}"
    );
}

// Port of TestLookupUnmodelled.
#[test]
fn lookup_unmodelled() {
    let o =
        ok("[oslo_messaging_rabbit]\nheartbeat_rate = 5\n[custom]\nx = $heartbeat_rate\n").options;
    assert_eq!(
        o.lookup("oslo_messaging_rabbit", "heartbeat_rate")
            .as_deref(),
        Some("5")
    );
    assert_eq!(
        o.lookup("custom", "x").as_deref(),
        Some("$heartbeat_rate"),
        "unresolvable substitution keeps the raw value"
    );
    assert_eq!(o.lookup("api", "port"), None, "an option no file sets");
    assert_eq!(Options::defaults().lookup("api", "port"), None);
}

// Port of TestLookupConcurrent: Options are shared by concurrent requests.
#[test]
fn lookup_concurrent() {
    let o = Arc::new(ok("[DEFAULT]\nhost = n1\n[custom]\nx = $host/$transport_url\n").options);
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let o = Arc::clone(&o);
            std::thread::spawn(move || o.lookup("custom", "x"))
        })
        .collect();
    for h in handles {
        let got = h.join().unwrap_or_else(|_| panic!("lookup panicked"));
        assert_eq!(got.as_deref(), Some("n1/rabbit://"));
    }
}

// Port of TestKeystoneURL.
#[test]
fn keystone_url() {
    let mut o = ok("[keystone_authtoken]\nwww_authenticate_uri = http://ks:5000/v3\n").options;
    assert_eq!(o.keystone_url(), Some("http://ks:5000/v3"), "fallback");
    o.keystone_auth.credentials.auth_url = Some("http://internal:5000".to_owned());
    assert_eq!(o.keystone_url(), Some("http://internal:5000"));
    assert_eq!(Options::defaults().keystone_url(), None);
}

// Port of TestOptionsDatabaseTarget.
#[test]
fn database_url() {
    let o = ok("[database]\nconnection = mysql+pymysql://m:pw@db/magnum\nconnection_parameters = charset=latin1\n").options;
    let url = o.database_url().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.sqlx_url(), "mysql://m:pw@db:3306/magnum?charset=latin1");
    assert_eq!(
        url.to_string(),
        "mysql+pymysql://m:***@db/magnum?charset=latin1"
    );
    let o = ok("[database]\nconnection = postgresql://m:pw@db/magnum?sslmode=require\nconnection_parameters = application_name=x\n").options;
    let url = o.database_url().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        url.sqlx_url(),
        "postgres://m:pw@db/magnum?sslmode=require&application_name=x"
    );
    let e = Options::defaults()
        .database_url()
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        e.as_deref(),
        Some("invalid database connection URL: [database]/connection is not set")
    );
}

/// The sqlx URLs parse with sqlx's own parsers into what the SQLAlchemy URL
/// says.
#[test]
fn database_urls_parse_with_sqlx() {
    use std::str::FromStr;
    let parse = |raw: &str| DatabaseUrl::parse(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));

    let u = parse(
        "mysql+pymysql://magnum:p%40ss%3Aw%2Frd@db.example:3307/magnum?charset=utf8&unix_socket=/run/m.sock",
    );
    let opts =
        sqlx::mysql::MySqlConnectOptions::from_str(u.sqlx_url()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(opts.get_host(), "db.example");
    assert_eq!(opts.get_port(), 3307);
    assert_eq!(opts.get_username(), "magnum");
    assert_eq!(opts.get_database(), Some("magnum"));
    assert_eq!(opts.get_charset(), "utf8");
    assert_eq!(opts.get_socket(), Some(&PathBuf::from("/run/m.sock")));

    let u = parse(
        "postgresql+psycopg2://magnum:p%2Fw%40@pg:5433/magnum?sslmode=require&application_name=okm",
    );
    let opts =
        sqlx::postgres::PgConnectOptions::from_str(u.sqlx_url()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((opts.get_host(), opts.get_port()), ("pg", 5433));
    assert_eq!(opts.get_username(), "magnum");
    assert_eq!(opts.get_database(), Some("magnum"));
    assert_eq!(opts.get_application_name(), Some("okm"));

    let u = parse("postgresql://magnum:pw@/magnum?host=/var/run/postgresql");
    let opts =
        sqlx::postgres::PgConnectOptions::from_str(u.sqlx_url()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(opts.get_username(), "magnum");
    assert_eq!(
        opts.get_socket(),
        Some(&PathBuf::from("/var/run/postgresql"))
    );

    let u = parse("sqlite:////var/lib/magnum/magnum%20x.sqlite");
    let opts = sqlx::sqlite::SqliteConnectOptions::from_str(u.sqlx_url())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        opts.get_filename(),
        Path::new("/var/lib/magnum/magnum%20x.sqlite")
    );
    let u = parse("sqlite:///relative.db");
    let opts = sqlx::sqlite::SqliteConnectOptions::from_str(u.sqlx_url())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(opts.get_filename(), Path::new("relative.db"));
    let u = parse("sqlite://");
    assert!(sqlx::sqlite::SqliteConnectOptions::from_str(u.sqlx_url()).is_ok());
}

/// Port of ApplyAllInOneDefaults (internal/app/app.go).
#[test]
fn all_in_one_defaults() {
    let mut o = Options::defaults();
    o.apply_all_in_one_defaults(Path::new("/srv/okm"));
    assert_eq!(
        secret(&o.database.connection),
        Some("sqlite:////srv/okm/openkeel-magnum.sqlite")
    );
    assert_eq!(o.default.auth_strategy, AuthStrategy::NoAuth);
    assert_eq!(o.drivers.enabled_beta_drivers, strings(&["fake"]));
    assert_eq!(o.drivers.default_driver.as_deref(), Some("fake"));
    let url = o.database_url().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(url.sqlite_path(), Some("/srv/okm/openkeel-magnum.sqlite"));
    let rows = o.effective();
    let row = |g: &str, n: &str| rows.iter().find(|r| r.group == g && r.name == n).cloned();
    assert_eq!(
        row("drivers", "default_driver").map(|r| (r.value, r.source)),
        Some(("fake".into(), "all-in-one".into()))
    );

    // What the files set is kept.
    let mut o = ok("[database]\nconnection = mysql://u:p@h/db\n[drivers]\nenabled_beta_drivers = a, fake\ndefault_driver = a\n").options;
    o.apply_all_in_one_defaults(Path::new("/srv/okm"));
    assert_eq!(secret(&o.database.connection), Some("mysql://u:p@h/db"));
    assert_eq!(o.drivers.enabled_beta_drivers, strings(&["a", "fake"]));
    assert_eq!(o.drivers.default_driver.as_deref(), Some("a"));
    let mut o = ok("[drivers]\nenabled_beta_drivers = a\n").options;
    o.apply_all_in_one_defaults(Path::new("/srv/okm"));
    assert_eq!(o.drivers.enabled_beta_drivers, strings(&["a", "fake"]));
}

#[test]
fn effective_rows_mask_secrets() {
    let o = ok("[database]\nconnection = mysql://u:hunter2@h/db\n[keystone_authtoken]\npassword = hunter2\n\
                [oslo_messaging_rabbit]\nheartbeat_rate = 5\n[api]\nport = 80\n")
        .options;
    let rows = o.effective();
    assert!(rows.iter().all(|r| !r.value.contains("hunter2")));
    let row = |g: &str, n: &str| rows.iter().find(|r| r.group == g && r.name == n).cloned();
    assert_eq!(
        row("database", "connection").map(|r| r.value),
        Some(MASK.to_owned())
    );
    assert_eq!(
        row("keystone_authtoken", "password").map(|r| (r.value, r.source)),
        Some((MASK.to_owned(), "f.conf:4".to_owned()))
    );
    assert_eq!(
        row("api", "port").map(|r| (r.value, r.source)),
        Some(("80".to_owned(), "f.conf:8".to_owned()))
    );
    assert_eq!(
        row("api", "host").map(|r| (r.value, r.source)),
        Some(("127.0.0.1".to_owned(), "default".to_owned()))
    );
    assert_eq!(
        row("DEFAULT", "host").map(|r| r.value),
        Some("<None>".to_owned())
    );
    assert_eq!(
        row("cors", "allow_methods").map(|r| r.value),
        Some("GET,PUT,POST,DELETE,PATCH".to_owned())
    );
    // An unmodelled option appears when a file sets it.
    assert_eq!(
        row("oslo_messaging_rabbit", "heartbeat_rate").map(|r| r.value),
        Some("5".to_owned())
    );
    assert_eq!(row("oslo_messaging_rabbit", "kombu_reconnect_delay"), None);
}

/// Every modelled option is read into a field exactly once, with its type,
/// and nothing else is read.
#[test]
fn every_modelled_option_is_a_field() {
    let (config, _) = Config::from_files(Arc::new(schema::schema()), Vec::new())
        .unwrap_or_else(|e| panic!("{}", e[0]));
    let reader = Reader::new(&config);
    let provenance = Provenance {
        files: Vec::new(),
        raw: Arc::new(config.clone()),
        overrides: Vec::new(),
    };
    let _ = Options::read(&reader, provenance);
    let mut keys = reader.keys_read();
    let read: std::collections::BTreeSet<Key> = keys.iter().cloned().collect();
    keys.sort();
    let twice: Vec<&Key> = keys
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| &w[0])
        .collect();
    let mismatches = reader.mismatches();
    assert!(twice.is_empty(), "read twice: {twice:?}");
    assert!(mismatches.is_empty(), "{mismatches:?}");
    let modelled: std::collections::BTreeSet<Key> = schema::modelled()
        .iter()
        .filter(|o| o.checked)
        .map(|o| o.key())
        .collect();
    let missing: Vec<_> = modelled.difference(&read).collect();
    let extra: Vec<_> = read.difference(&modelled).collect();
    assert!(missing.is_empty(), "modelled but not read: {missing:?}");
    assert!(extra.is_empty(), "read but not modelled: {extra:?}");
    // Port of the Go table's size: 126 options plus the two credential and
    // seven client templates, and the driver host's six; then the driver
    // host's maxima and status-loop bounds (eight), magnum-cluster-api's
    // [capi_client] and [manila_client] (client groups with the TLS
    // options, six each), the bound of a watched cluster's snapshot, and
    // [capi]/management_cluster; then [metrics] (three), [tracing] (four)
    // and [api]/unversioned_at_route_minimum; then the notification
    // publisher's fifteen of [oslo_messaging_rabbit].
    assert_eq!(
        schema::modelled().len(),
        126 + 2 * 16 + 6 * 2 + 6 + 6 + 8 + 6 + 6 + 1 + 1 + 3 + 4 + 1 + 15
    );
}

#[test]
fn metrics_are_off_on_the_loopback_by_default_and_checked() {
    let o = ok("").options;
    assert_eq!(
        o.metrics,
        super::Metrics {
            enabled: false,
            host: "127.0.0.1".into(),
            port: 9513,
        }
    );
    let o = ok("[metrics]\nenabled = true\nhost = ::\nport = 9100\n").options;
    assert!(o.metrics.enabled);
    assert_eq!((o.metrics.host.as_str(), o.metrics.port), ("::", 9100));
    assert!(err("[metrics]\nport = 70000\n").starts_with("invalid value for [metrics]/port"));
    assert!(
        err("[metrics]\nhost = metrics.example\n").starts_with("invalid value for [metrics]/host")
    );
}

#[test]
fn tracing_is_off_by_default_and_checked() {
    let o = ok("").options;
    assert_eq!(
        o.tracing,
        super::Tracing {
            otlp_endpoint: String::new(),
            service_name: "openkeel-magnum".into(),
            sample_ratio: 1.0,
            export_timeout: 10,
        }
    );
    let o = ok("[tracing]\notlp_endpoint = http://collector:4318\nsample_ratio = 0.25\n").options;
    assert_eq!(o.tracing.otlp_endpoint, "http://collector:4318");
    assert!((o.tracing.sample_ratio - 0.25).abs() < f64::EPSILON);
    assert!(
        err("[tracing]\nsample_ratio = 1.5\n")
            .starts_with("invalid value for [tracing]/sample_ratio")
    );
    assert!(
        err("[tracing]\nexport_timeout = 0\n")
            .starts_with("invalid value for [tracing]/export_timeout")
    );
}

#[test]
fn values_of_every_type_in_every_group() {
    let o = ok("[DEFAULT]\nservice_down_time = 30\nuse_json = true\n\
                [octavia_client]\nca_file = /ca\ninsecure = yes\nregion_name = r1\n\
                [nova_client]\nendpoint_type = internalURL\n\
                [capi]\nenabled = true\nlease_duration = 30\napp_credential_roles = member\n\
                [healthcheck]\nbackends =\n\
                [oslo_messaging_notifications]\ndriver = messagingv2\ndriver = log\ntransport_url = rabbit://u:p@h//\n\
                [oslo_messaging_rabbit]\namqp_durable_queues = true\nrabbit_interval_max = 5\nssl_ca_file =\n\
                [profiler]\nprofiler_enabled = true\n")
    .options;
    // The notification publisher gets the [oslo_messaging_rabbit] options.
    let rabbit = crate::app::notifier_settings(&o).rabbit;
    assert!(rabbit.durable_queues);
    assert_eq!(rabbit.interval_max, std::time::Duration::from_secs(5));
    assert_eq!(rabbit.retry_backoff, std::time::Duration::from_secs(2));
    assert_eq!(rabbit.ssl_ca_file, None);
    assert_eq!(o.default.service_down_time, 30);
    assert!(o.default.use_json);
    assert_eq!(o.octavia_client.tls.ca_file.as_deref(), Some("/ca"));
    assert!(o.octavia_client.tls.insecure);
    assert_eq!(o.octavia_client.client.region_name.as_deref(), Some("r1"));
    assert_eq!(o.nova_client.endpoint_type, "internalURL");
    assert!(o.capi.enabled);
    assert_eq!(o.capi.lease_duration, 30);
    assert_eq!(o.capi.namespace, "magnum-system");
    assert_eq!(o.capi.app_credential_roles, strings(&["member"]));
    assert_eq!(o.healthcheck.backends, Vec::<String>::new());
    assert_eq!(
        o.oslo_messaging_notifications.driver,
        strings(&["messagingv2", "log"])
    );
    assert_eq!(
        secret(&o.oslo_messaging_notifications.transport_url),
        Some("rabbit://u:p@h//")
    );
    assert!(o.profiler.enabled);
    let e = err("[capi]\nlease_duration = 0\n");
    assert_eq!(
        e,
        "invalid value for [capi]/lease_duration: 0 is less than the minimum 1 (f.conf:2)"
    );
    // [oslo_policy]/enforce_scope is accepted, unchecked, readable raw.
    let loaded = ok("[oslo_policy]\nenforce_scope = maybe\n");
    assert_eq!(
        loaded
            .options
            .lookup("oslo_policy", "enforce_scope")
            .as_deref(),
        Some("maybe")
    );
    assert_eq!(
        loaded.warnings,
        [
            "f.conf:2: option [oslo_policy]/enforce_scope is ignored: oslo.policy 6.x has no such option"
        ]
    );
}

/// An empty integer with a default is none in oslo.config: 0 here.
#[test]
fn empty_integer_with_default_is_zero() {
    let o = ok("[api]\nmax_limit =\n[oslo_policy]\nremote_timeout =\n").options;
    assert_eq!(o.api.max_limit, 0);
    assert_eq!(o.oslo_policy.remote_timeout, 0.0);
}

/// oslo.config reads `OS_<GROUP>__<NAME>` before the files.
#[test]
fn environment_variables_win_over_files() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let conf = write(
        tmp.path(),
        "m.conf",
        "[api]\nport = 1\n[database]\nconnection = sqlite://\n",
    );
    let env = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<Vec<_>>()
    };
    let loaded = load_with_environment(
        std::slice::from_ref(&conf),
        &[],
        env(&[
            ("OS_API__PORT", "8080"),
            ("OS_DATABASE__CONNECTION", "mysql://u:hunter2@h/db"),
            ("OS_DEFAULT__HOST", "node-${api.max_limit}"),
            (
                "OS_KEYSTONE_AUTH__TENANT_NAME",
                "deprecated names are not read",
            ),
            ("OS_NOSUCH__X", "ignored"),
            ("PATH", "/bin"),
        ]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = &loaded.options;
    assert_eq!(o.api.port, 8080);
    assert_eq!(
        secret(&o.database.connection),
        Some("mysql://u:hunter2@h/db")
    );
    assert_eq!(
        o.default.host.as_deref(),
        Some("node-1000"),
        "substituted like a file value"
    );
    assert_eq!(o.keystone_auth.credentials.project_name, None);
    assert!(loaded.warnings.is_empty());
    assert_eq!(o.lookup("api", "port").as_deref(), Some("8080"));
    let rows = o.effective();
    let row = rows
        .iter()
        .find(|r| r.group == "api" && r.name == "port")
        .cloned();
    assert_eq!(row.map(|r| r.source), Some("OS_API__PORT".to_owned()));
    let e = load_with_environment(
        &[],
        &[],
        env(&[
            ("OS_API__PORT", "x"),
            ("OS_KEYSTONE_AUTH__PASSWORD", "${hunter2}"),
        ]),
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert_eq!(
        e,
        "invalid value for [api]/port: \"x\" is not an integer (environment variable OS_API__PORT); \
         invalid value for [keystone_auth]/password: template substitution error in a secret value \
         (write $$ for a literal $) (environment variable OS_KEYSTONE_AUTH__PASSWORD)"
    );
}
