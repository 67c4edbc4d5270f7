package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// specDir finds ${OKM_SPEC_DIR:-../shared/spec}, relative to the repository
// root. A test needing it skips when it is absent, and fails under CI.
func specDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatal("repository root (go.mod) not found")
		}
		root = parent
	}
	dir := os.Getenv("OKM_SPEC_DIR")
	if dir == "" {
		dir = "../shared/spec"
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("spec directory %s: %v", dir, err)
		}
		t.Skipf("spec directory %s not found (set OKM_SPEC_DIR)", dir)
	}
	return dir
}

type sampleOption struct{ group, name, def string }

// sampleOptions reads the "#name = default" lines of the sample
// configuration, section by section.
func sampleOptions(t *testing.T, path string) []sampleOption {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile(`^\[([^\]]+)\]$`)
	option := regexp.MustCompile(`^#([a-z0-9_]+) = ?(.*)$`)
	var out []sampleOption
	group := ""
	for _, line := range strings.Split(string(data), "\n") {
		if m := section.FindStringSubmatch(line); m != nil {
			group = m[1]
			continue
		}
		if m := option.FindStringSubmatch(line); m != nil {
			out = append(out, sampleOption{group, m[1], m[2]})
		}
	}
	if len(out) < 200 {
		t.Fatalf("only %d options found in %s", len(out), path)
	}
	return out
}

// runtimeDefaults are the options whose default at run time differs from
// the generated sample, because Magnum changes it when it starts.
var runtimeDefaults = map[string]string{
	"[DEFAULT]/control_exchange": "magnum/common/rpc.py set_defaults(control_exchange='magnum')",
	"[keystone_auth]/auth_type":  "magnum/conf/keystone.py set_default('auth_type', 'password')",
	"[cors]/allow_headers":       "magnum/common/config.py set_cors_middleware_defaults",
	"[cors]/expose_headers":      "magnum/common/config.py set_cors_middleware_defaults",
	"[cors]/allow_methods":       "magnum/common/config.py set_cors_middleware_defaults",
}

// notInSample are modelled options the sample does not list, with why.
var notInSample = map[string]string{
	"[DEFAULT]/auth_strategy":                        "ours",
	"[capi]/kubeconfig":                              "ours: the Cluster API management cluster",
	"[capi]/namespace":                               "ours: the Cluster API management cluster",
	"[capi]/enabled":                                 "ours: the Cluster API management cluster",
	"[capi]/lease_namespace":                         "ours: the Cluster API management cluster",
	"[capi]/lease_duration":                          "ours: the Cluster API management cluster",
	"[capi]/renew_deadline":                          "ours: the Cluster API management cluster",
	"[capi]/retry_period":                            "ours: the Cluster API management cluster",
	"[capi]/resync_interval":                         "ours: the Cluster API management cluster",
	"[capi]/request_timeout":                         "ours: the Cluster API management cluster",
	"[capi]/update_grace":                            "ours: the Cluster API management cluster",
	"[capi]/delete_timeout":                          "ours: the Cluster API management cluster",
	"[capi]/app_credential_roles":                    "ours: the Cluster API management cluster",
	"[capi]/addons_manifests_dir":                    "ours: the Cluster API management cluster",
	"[oslo_middleware]/enable_proxy_headers_parsing": "http_proxy_to_wsgi namespace is not in Magnum's generator",
	"[oslo_policy]/enforce_scope":                    "removed in oslo.policy 6; accepted with a warning",
	"[healthcheck]/backends":                         "set in Magnum's api-paste.ini",
	"[healthcheck]/detailed":                         "set in Magnum's api-paste.ini",
	"[healthcheck]/disable_by_file_path":             "set in Magnum's api-paste.ini",
	"[keystone_auth]/cafile":                         "keystoneauth1 session option registered by Magnum",
	"[keystone_auth]/certfile":                       "keystoneauth1 session option registered by Magnum",
	"[keystone_auth]/keyfile":                        "keystoneauth1 session option registered by Magnum",
	"[keystone_auth]/insecure":                       "keystoneauth1 session option registered by Magnum",
	"[keystone_auth]/timeout":                        "keystoneauth1 session option registered by Magnum",
}

func TestSampleDefaults(t *testing.T) {
	path := filepath.Join(specDir(t), "api", "config.conf")
	samples := sampleOptions(t, path)

	// The sample itself loads cleanly: every line is a comment or a header.
	o, warnings, err := Load([]string{path}, nil)
	if err != nil {
		t.Fatalf("loading the sample: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings loading the sample: %v", warnings)
	}
	if diff := cmp.Diff([]string{path}, o.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	o.Files = nil
	if diff := cmp.Diff(Defaults(), o, cmp.AllowUnexported(Options{}), cmp.Comparer(func(a, b *resolver) bool { return true })); diff != "" {
		t.Errorf("sample-loaded options differ from Defaults() (-want +got):\n%s", diff)
	}

	defs := map[optKey]*optDef{}
	for _, d := range (&Options{}).defs() {
		defs[optKey{d.group, d.name}] = d
	}
	known := map[optKey]knownOption{}
	for _, k := range knownOptions {
		known[optKey{k.group, k.name}] = k
	}
	r := newResolver((&Options{}).defs())

	inSample := map[optKey]bool{}
	modelled := 0
	for _, s := range samples {
		k := optKey{s.group, s.name}
		inSample[k] = true
		if kn, ok := known[k]; !ok || kn.def != s.def {
			t.Errorf("%s: known table has %q (present %v), sample has %q", k, kn.def, ok, s.def)
		}
		d := defs[k]
		if d == nil {
			continue
		}
		modelled++
		if _, ok := runtimeDefaults[k.String()]; ok {
			continue
		}
		got, err := r.typed(k)
		if err != nil {
			t.Errorf("%s: default: %v", k, err)
			continue
		}
		var want any
		switch {
		case s.def == "<None>":
			want = nil
		case d.kind == kindMulti && s.def == "":
			want = []string{}
		default:
			want, err = convert(d, s.def)
			if err != nil {
				t.Errorf("%s: sample default %q: %v", k, s.def, err)
				continue
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s default (-sample +ours):\n%s", k, diff)
		}
	}
	for k := range known {
		if !inSample[k] {
			t.Errorf("%s is in the known table but not in the sample", k)
		}
	}
	for k := range defs {
		if inSample[k] || strings.HasPrefix(k.group, "keystone_auth") && isCredential(k.name) {
			continue
		}
		if _, ok := notInSample[k.String()]; !ok {
			t.Errorf("%s is modelled but not in the sample; list it in notInSample with a reason", k)
		}
	}
	for k := range runtimeDefaults {
		found := false
		for d := range defs {
			found = found || d.String() == k
		}
		if !found {
			t.Errorf("runtimeDefaults lists %s, which is not modelled", k)
		}
	}
	t.Logf("%d sample options, %d modelled with their sample default checked", len(samples), modelled)
}

// isCredential reports whether name is a keystoneauth1 password plugin
// option, which keystonemiddleware registers only once it loads the plugin
// (so [keystone_authtoken] in the sample lacks them).
func isCredential(name string) bool {
	for _, d := range credentialDefs("x", &Credentials{}) {
		if d.name == name {
			return true
		}
	}
	return false
}
