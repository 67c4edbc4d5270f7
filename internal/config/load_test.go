package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// loadString builds options from one in-memory file named "f.conf".
func loadString(t *testing.T, content string) (*Options, []string, error) {
	t.Helper()
	f, err := ParseINI("f.conf", []byte(content))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return FromFiles([]*File{f})
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	o := Defaults()
	checks := []struct {
		name      string
		got, want any
	}{
		{"[api]/host", o.API.Host, "127.0.0.1"},
		{"[api]/port", o.API.Port, 9511},
		{"[api]/max_limit", o.API.MaxLimit, 1000},
		{"[api]/workers", o.API.Workers, 0},
		{"[DEFAULT]/transport_url", o.Default.TransportURL, "rabbit://"},
		{"[DEFAULT]/auth_strategy", o.Default.AuthStrategy, "keystone"},
		{"[DEFAULT]/control_exchange", o.Default.ControlExchange, "magnum"},
		{"[DEFAULT]/host", o.Default.Host, ""},
		{"[database]/connection", o.Database.Connection, ""},
		{"[database]/max_retries", o.Database.MaxRetries, 10},
		{"[keystone_authtoken]/token_cache_time", o.KeystoneAuthtoken.TokenCacheTime, 300},
		{"[keystone_authtoken]/service_token_roles", o.KeystoneAuthtoken.ServiceTokenRoles, []string{"service"}},
		{"[keystone_auth]/auth_type", o.KeystoneAuth.AuthType, "password"},
		{"[oslo_policy]/policy_file", o.OsloPolicy.PolicyFile, "policy.yaml"},
		{"[oslo_policy]/policy_dirs", o.OsloPolicy.PolicyDirs, []string{"policy.d"}},
		{"[oslo_policy]/enforce_new_defaults", o.OsloPolicy.EnforceNewDefaults, true},
		{"[oslo_messaging_notifications]/driver", o.OsloMessagingNotifications.Driver, []string{}},
		{"[quotas]/max_clusters_per_project", o.Quotas.MaxClustersPerProject, 20},
		{"[drivers]/verify_ca", o.Drivers.VerifyCA, true},
		{"[drivers]/enabled_beta_drivers", o.Drivers.EnabledBetaDrivers, []string{}},
		{"[certificates]/cert_manager_type", o.Certificates.CertManagerType, "barbican"},
		{"[x509]/term_of_validity", o.X509.TermOfValidity, 1825},
		{"[x509]/rsa_key_size", o.X509.RSAKeySize, 2048},
		{"[cors]/allowed_origin", o.CORS.AllowedOrigin, []string(nil)},
		{"[cors]/allow_methods", o.CORS.AllowMethods, []string{"GET", "PUT", "POST", "DELETE", "PATCH"}},
		{"[cluster_template]/kubernetes_allowed_network_drivers", o.ClusterTemplate.KubernetesAllowedNetworkDrivers, []string{"flannel", "calico"}},
		{"[glance_client]/endpoint_type", o.GlanceClient.EndpointType, "publicURL"},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestLoadValues(t *testing.T) {
	o, warnings, err := loadString(t, `
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
`)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"debug", o.Default.Debug, true},
		{"host", o.Default.Host, "node-1.example.com"},
		{"auth_strategy", o.Default.AuthStrategy, "noauth"},
		{"api port", o.API.Port, 8080},
		{"api host", o.API.Host, "::1"},
		{"empty int is unset", o.API.Workers, 0},
		{"python int syntax", o.API.MaxLimit, 1000},
		{"connection", o.Database.Connection, "mysql+pymysql://magnum:secret@db/magnum"},
		{"auth_url", o.KeystoneAuthtoken.AuthURL, "http://keystone:5000"},
		{"password", o.KeystoneAuthtoken.Password, "pw"},
		{"memcached_servers", o.KeystoneAuthtoken.MemcachedServers, []string{"a:11211", "b:11211"}},
		{"multi values accumulate", o.OsloPolicy.PolicyDirs, []string{"a.d", "b.d"}},
		{"list trimmed, trailing comma dropped", o.Drivers.EnabledBetaDrivers, []string{"k8s_capi", "other"}},
		{"list with spaces in items", o.X509.AllowedKeyUsage, []string{"Digital Signature", "CRL Sign"}},
		{"float", o.OsloPolicy.RemoteTimeout, 2.5},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	wantWarn := []string{"f.conf:21: option [keystone_authtoken]/memcached_servers is ignored: tokens are cached in-process; memcached is not used"}
	if diff := cmp.Diff(wantWarn, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func TestBooleans(t *testing.T) {
	for _, v := range []string{"true", "True", "TRUE", "yes", "Yes", "on", "ON", "1"} {
		o, _, err := loadString(t, "[api]\nenabled_ssl = "+v+"\n")
		if err != nil || !o.API.EnabledSSL {
			t.Errorf("%q: got %v, %v; want true", v, o != nil && o.API.EnabledSSL, err)
		}
	}
	for _, v := range []string{"false", "False", "no", "NO", "off", "0"} {
		o, _, err := loadString(t, "[drivers]\nverify_ca = "+v+"\n")
		if err != nil || o.Drivers.VerifyCA {
			t.Errorf("%q: got %v, %v; want false", v, o != nil && o.Drivers.VerifyCA, err)
		}
	}
}

func TestValueErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"port not an integer", "[api]\nport = abc\n", `invalid value for [api]/port: "abc" is not an integer (f.conf:2)`},
		{"port out of range", "[api]\nport = 70000\n", `invalid value for [api]/port: 70000 is greater than the maximum 65535 (f.conf:2)`},
		{"negative port", "[api]\nport = -1\n", `invalid value for [api]/port: -1 is less than the minimum 0 (f.conf:2)`},
		{"int below min", "[database]\nconnection_debug = -1\n", `invalid value for [database]/connection_debug: -1 is less than the minimum 0 (f.conf:2)`},
		{"int above max", "[database]\nconnection_debug = 101\n", `invalid value for [database]/connection_debug: 101 is greater than the maximum 100 (f.conf:2)`},
		{"float below min", "[oslo_policy]\nremote_timeout = -0.5\n", `invalid value for [oslo_policy]/remote_timeout: -0.5 is less than the minimum 0 (f.conf:2)`},
		{"bad float", "[oslo_policy]\nremote_timeout = soon\n", `invalid value for [oslo_policy]/remote_timeout: "soon" is not a number (f.conf:2)`},
		{"bad bool", "[DEFAULT]\ndebug = maybe\n", `invalid value for [DEFAULT]/debug: "maybe" is not a boolean (true/false, yes/no, on/off, 1/0) (f.conf:2)`},
		{"bool with t", "[DEFAULT]\ndebug = t\n", `invalid value for [DEFAULT]/debug: "t" is not a boolean (true/false, yes/no, on/off, 1/0) (f.conf:2)`},
		{"bad IP", "[api]\nhost = localhost\n", `invalid value for [api]/host: "localhost" is not an IPv4 or IPv6 address (f.conf:2)`},
		{"bad host address", "[DEFAULT]\nhost = node_1\n", `invalid value for [DEFAULT]/host: "node_1" is not a valid IP address or host name (f.conf:2)`},
		{"choice", "[DEFAULT]\nauth_strategy = basic\n", `invalid value for [DEFAULT]/auth_strategy: "basic" is not one of: keystone, noauth (f.conf:2)`},
		{"list item choice", "[x509]\nallowed_extensions = keyUsage, bogus\n", `invalid value for [x509]/allowed_extensions: item "bogus" is not one of: authorityKeyIdentifier, subjectKeyIdentifier, authorityInfoAccess, basicConstraints, cRLDistributionPoints, certificatePolicies, extendedKeyUsage, OCSPNoCheck, inhibitAnyPolicy, keyUsage, nameConstraints, subjectAltName, issuerAltName (f.conf:2)`},
		{"last value is the one checked", "[api]\nport = 1\nport = x\n", `invalid value for [api]/port: "x" is not an integer (f.conf:3)`},
		{"unknown substitution", "[api]\nssl_cert_file = $nope\n", `invalid value for [api]/ssl_cert_file: template substitution error: no such option nope in group [api] (f.conf:2)`},
		{"unknown substitution group", "[api]\nssl_cert_file = ${nope.x}\n", `invalid value for [api]/ssl_cert_file: template substitution error: no such group [nope] (f.conf:2)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := loadString(t, tt.in)
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Errorf("%v is not a *ValueError", err)
			}
		})
	}
}

func TestSecretValuesAreNotPrinted(t *testing.T) {
	for _, v := range []string{"${hunter2.x}", "pa$hunter2", "x${hunter2}"} {
		_, _, err := loadString(t, "[keystone_authtoken]\npassword = "+v+"\n")
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error = %v", v, err)
		}
	}
}

func TestSubstitution(t *testing.T) {
	o, _, err := loadString(t, `
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
`)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name, got, want string
	}{
		{"$name from [DEFAULT]", o.Default.TransportURL, "rabbit://u:p@node1:5672/"},
		{"escapes and stray dollars", o.Default.LogDir, "$HOME/$x/$ /$-${notclosed"},
		{"typed values render like Python's str()", o.Default.LogFile, "9511-['GET', 'PUT', 'POST', 'DELETE', 'PATCH']-False"},
		{"same group first", o.API.SSLCertFile, "/etc/10.0.0.1/cert"},
		{"${DEFAULT.name}", o.API.SSLKeyFile, "/etc/node1/key"},
		{"[DEFAULT] fallback", o.KeystoneAuthtoken.WWWAuthenticateURI, "http://node1:5000"},
		{"chained", o.KeystoneAuthtoken.AuthURL, "http://node1:5000/v3"},
		{"known option default, itself substituted", o.Conductor.Topic, "<python site-packages>/magnum"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
	if v, ok := o.Lookup("KEYSTONE_AUTHTOKEN", "auth_url"); !ok || v != "http://node1:5000/v3" {
		t.Errorf("Lookup = %q, %v", v, ok)
	}
}

func TestSubstitutionLoop(t *testing.T) {
	_, _, err := loadString(t, "[api]\nssl_cert_file = $ssl_key_file\nssl_key_file = $ssl_cert_file\n")
	if err == nil || !strings.Contains(err.Error(), "recursive reference") {
		t.Fatalf("error = %v", err)
	}
}

func TestWarnings(t *testing.T) {
	_, warnings, err := loadString(t, `[DEFAULT]
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
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"f.conf:2: option [DEFAULT]/rpc_thread_pool_size is deprecated, use [DEFAULT]/executor_thread_pool_size",
		"f.conf:3: unknown option [DEFAULT]/bogus",
		"f.conf:5: option [keystone_auth]/tenant_name is deprecated, use [keystone_auth]/project_name",
		"f.conf:9: unknown group [nosuch]",
		"f.conf:12: option [api]/api_paste_config is ignored: the middleware pipeline is built in; the paste file is not read",
		"f.conf:13: unknown option [api]/frobnicate",
	}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func TestDeprecatedNameSetsOption(t *testing.T) {
	o, _, err := loadString(t, "[keystone_auth]\ntenant_name = service\nuser_name = magnum\n")
	if err != nil {
		t.Fatal(err)
	}
	if o.KeystoneAuth.ProjectName != "service" || o.KeystoneAuth.Username != "magnum" {
		t.Errorf("got %+v", o.KeystoneAuth.Credentials)
	}
}

func TestLoadFilesAndDirs(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.conf", "[api]\nport = 1\nmax_limit = 10\n[oslo_policy]\npolicy_dirs = one\n")
	b := writeFile(t, dir, "b.conf", "[api]\nport = 2\n[oslo_policy]\npolicy_dirs = two\n")
	d := filepath.Join(dir, "magnum.conf.d")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, d, "20-later.conf", "[api]\nport = 4\n[oslo_policy]\npolicy_dirs = four\n")
	writeFile(t, d, "10-first.conf", "[api]\nport = 3\n[oslo_policy]\npolicy_dirs = three\n")
	writeFile(t, d, ".hidden.conf", "[api]\nport = 99\n")
	writeFile(t, d, "ignored.conf.bak", "[api]\nport = 98\n")
	if err := os.Mkdir(filepath.Join(d, "sub.conf"), 0o700); err != nil {
		t.Fatal(err)
	}

	o, _, err := Load([]string{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.API.Port != 2 || o.API.MaxLimit != 10 {
		t.Errorf("later file should win: port %d max_limit %d", o.API.Port, o.API.MaxLimit)
	}
	if diff := cmp.Diff([]string{"one", "two"}, o.OsloPolicy.PolicyDirs); diff != "" {
		t.Errorf("multi across files (-want +got):\n%s", diff)
	}

	o, _, err = Load([]string{a, b}, []string{d})
	if err != nil {
		t.Fatal(err)
	}
	if o.API.Port != 4 {
		t.Errorf("config dir files in sorted order, after the files: port %d", o.API.Port)
	}
	if diff := cmp.Diff([]string{"one", "two", "three", "four"}, o.OsloPolicy.PolicyDirs); diff != "" {
		t.Errorf("multi across files and dir (-want +got):\n%s", diff)
	}
	if got := o.LookupAll("api", "port"); !cmp.Equal(got, []string{"1", "2", "3", "4"}) {
		t.Errorf("LookupAll = %v", got)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.conf")
	_, _, err := Load([]string{missing}, nil)
	if !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
	_, _, err = Load(nil, []string{filepath.Join(dir, "nodir")})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("missing dir: %v", err)
	}
	bad := writeFile(t, dir, "bad.conf", "[api]\nport = 1\nnot an option\n")
	_, _, err = Load([]string{bad}, nil)
	if err == nil || err.Error() != bad+`:3: no ':' or '=' found in assignment` {
		t.Errorf("malformed: %v", err)
	}
}

func TestLookupUnmodelled(t *testing.T) {
	o, _, err := loadString(t, "[oslo_messaging_rabbit]\nheartbeat_rate = 5\n[custom]\nx = $heartbeat_rate\n")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := o.Lookup("oslo_messaging_rabbit", "heartbeat_rate"); !ok || v != "5" {
		t.Errorf("Lookup = %q, %v", v, ok)
	}
	if v, ok := o.Lookup("custom", "x"); !ok || v != "$heartbeat_rate" {
		t.Errorf("unresolvable substitution keeps the raw value: %q, %v", v, ok)
	}
	if _, ok := o.Lookup("api", "port"); ok {
		t.Error("Lookup of an option no file sets reports ok")
	}
	if _, ok := Defaults().Lookup("api", "port"); ok {
		t.Error("Lookup on defaults reports ok")
	}
}

func TestLookupConcurrent(t *testing.T) {
	o, _, err := loadString(t, "[DEFAULT]\nhost = n1\n[custom]\nx = $host/$transport_url\n")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	for range 8 {
		go func() {
			v, _ := o.Lookup("custom", "x")
			done <- v
		}()
	}
	for range 8 {
		if v := <-done; v != "n1/rabbit://" {
			t.Errorf("Lookup = %q", v)
		}
	}
}

func TestKeystoneURL(t *testing.T) {
	o, _, err := loadString(t, "[keystone_authtoken]\nwww_authenticate_uri = http://ks:5000/v3\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := o.KeystoneURL(); got != "http://ks:5000/v3" {
		t.Errorf("fallback: %q", got)
	}
	o.KeystoneAuth.AuthURL = "http://internal:5000"
	if got := o.KeystoneURL(); got != "http://internal:5000" {
		t.Errorf("auth_url: %q", got)
	}
}
