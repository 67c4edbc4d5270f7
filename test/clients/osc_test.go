package clients

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// osc runs `openstack` with a clean environment (no OS_* variables from the
// caller, an empty HOME so that no clouds.yaml is read).
type osc struct {
	bin  string
	home string
	s    *stack
}

func newOSC(t *testing.T, s *stack) *osc {
	t.Helper()
	return &osc{bin: needEnv(t, "OPENKEEL_TEST_OPENSTACK_CLI"), home: t.TempDir(), s: s}
}

// result is what one command produced.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	args := append([]string{}, r.args...)
	for i := range args {
		if i > 0 && args[i-1] == "--os-token" {
			args[i] = "***" // never print a token
		}
	}
	return "openstack " + strings.Join(args, " ") + "\nexit " + strconv.Itoa(r.code) +
		"\nstdout:\n" + r.stdout + "\nstderr:\n" + tail(r.stderr, 4000)
}

// baseEnv is the environment without the caller's OS_* settings.
func (o *osc) baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OS_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+o.home, "SHELL=/bin/bash", "PYTHONWARNINGS=ignore")
}

// as runs a command as user (password auth against Keystone, project named
// like the user, region okm-clients).
func (o *osc) as(t *testing.T, user string, args ...string) result {
	t.Helper()
	env := append(o.baseEnv(),
		"OS_AUTH_TYPE=password",
		"OS_AUTH_URL="+o.s.id.URL,
		"OS_IDENTITY_API_VERSION=3",
		"OS_USERNAME="+user,
		"OS_PASSWORD="+o.s.id.Passwords[user],
		"OS_PROJECT_NAME="+user,
		"OS_USER_DOMAIN_NAME=Default",
		"OS_PROJECT_DOMAIN_NAME=Default",
		"OS_REGION_NAME="+region,
	)
	return o.run(t, env, args...)
}

// withEnv runs a command with exactly the OS_* variables given.
func (o *osc) withEnv(t *testing.T, osEnv []string, args ...string) result {
	t.Helper()
	return o.run(t, append(o.baseEnv(), osEnv...), args...)
}

func (o *osc) run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.bin, args...)
	cmd.Env = env
	cmd.Dir = o.home
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run openstack: %v", err)
		}
		r.code = ee.ExitCode()
	}
	return r
}

// ok checks a zero exit code and that stdout contains every want.
func ok(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.code != 0 {
		t.Errorf("want exit 0:\n%s", r)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r)
		}
	}
}

// fails checks a non-zero exit code and that stderr contains every want.
func fails(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.code == 0 {
		t.Errorf("want a failure:\n%s", r)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r)
		}
	}
}

// jsonOut decodes the -f json output of a successful command.
func jsonOut(t *testing.T, r result, out any) bool {
	t.Helper()
	if r.code != 0 {
		t.Errorf("want exit 0:\n%s", r)
		return false
	}
	// Create commands print "Request to create ... accepted" first.
	text := r.stdout
	if i := strings.IndexAny(text, "{["); i > 0 {
		text = text[i:]
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Errorf("-f json output: %v\n%s", err, r)
		return false
	}
	return true
}

// step runs one named check of the matrix as a subtest that prints the
// HTTP exchanges when it fails, and counts it.
func step(t *testing.T, s *stack, name string, f func(t *testing.T)) {
	t.Helper()
	ok := t.Run(name, func(t *testing.T) {
		s.watch(t)
		f(t)
	})
	tally(t, 1, ok)
}

func writeCSR(t *testing.T, path string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "okm-client", Organization: []string{"system:masters"}},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOpenStackCoe runs the `openstack coe` command matrix of clients.md
// § 1.2 (python-openstackclient + python-magnumclient 5.0.0) with Keystone
// password authentication and the catalog, at the client's default
// microversion (latest), plus explicit microversions, error paths and the
// admin_token and none auth types.
func TestOpenStackCoe(t *testing.T) {
	s := newStack(t)
	o := newOSC(t, s)
	demoID := s.id.Projects["demo"]
	var ctUUID, clusterUUID string

	// ------------------------------------------------ cluster templates
	step(t, s, "cluster template create", func(t *testing.T) {
		r := o.as(t, "demo", "coe", "cluster", "template", "create", "okm-ct",
			"--image", imageName, "--external-network", extNetName, "--coe", "kubernetes",
			"--keypair", keypairName, "--flavor", flavorSmall, "--master-flavor", flavorSmall,
			"--network-driver", "calico", "--labels", "kube_tag=v1.30.2,okm=yes", "-f", "json")
		var ct map[string]any
		if !jsonOut(t, r, &ct) {
			return
		}
		ctUUID, _ = ct["uuid"].(string)
		want := map[string]any{"name": "okm-ct", "coe": "kubernetes", "image_id": imageName,
			"keypair_id": keypairName, "flavor_id": flavorSmall, "network_driver": "calico",
			"dns_nameserver": "8.8.8.8", "docker_storage_driver": "overlay2", "server_type": "vm",
			"public": false, "external_network_id": extNetName, "project_id": demoID}
		for k, v := range want {
			if ct[k] != v {
				t.Errorf("%s = %#v, want %#v", k, ct[k], v)
			}
		}
		if labels, _ := ct["labels"].(map[string]any); labels["kube_tag"] != "v1.30.2" || labels["okm"] != "yes" {
			t.Errorf("labels = %#v", ct["labels"])
		}
		if ctUUID == "" {
			t.Errorf("no uuid: %s", r.stdout)
		}
	})
	step(t, s, "cluster template create (plain output)", func(t *testing.T) {
		r := o.as(t, "demo", "coe", "cluster", "template", "create", "okm-ct2",
			"--image", imageID, "--external-network", extNetID, "--coe", "kubernetes",
			"--flavor", flavorMedium, "--master-flavor", flavorMedium, "--labels", "kube_tag=v1.31.1")
		ok(t, r, "Request to create cluster template okm-ct2 accepted")
	})
	step(t, s, "cluster template create with an unknown image is 400", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "template", "create", "okm-bad",
			"--image", "nope", "--external-network", extNetName, "--coe", "kubernetes", "--master-flavor", flavorSmall),
			"Image nope could not be found (HTTP 400)")
	})
	step(t, s, "cluster template create with an image without os_distro is 400", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "template", "create", "okm-bad",
			"--image", "no-distro", "--external-network", extNetName, "--coe", "kubernetes", "--master-flavor", flavorSmall),
			"Image no-distro doesn't contain os_distro field (HTTP 400)")
	})
	step(t, s, "cluster template create with an unknown flavor is 400", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "template", "create", "okm-bad",
			"--image", imageName, "--external-network", extNetName, "--coe", "kubernetes", "--flavor", "nope", "--master-flavor", flavorSmall),
			"Unable to find flavor nope (HTTP 400)")
	})
	step(t, s, "cluster template create without a master flavor is 400 (default_boot_volume_size 0)", func(t *testing.T) {
		// Magnum 23 checks the root volume of master_flavor_id even when the
		// client sends null, as OSC does when --master-flavor is not given.
		fails(t, o.as(t, "demo", "coe", "cluster", "template", "create", "okm-bad",
			"--image", imageName, "--external-network", extNetName, "--coe", "kubernetes"),
			"Unable to find flavor None (HTTP 400)")
	})
	step(t, s, "cluster template create with an unknown keypair is accepted", func(t *testing.T) {
		// Templates do not validate keypair_id (tempest: "missing keypair" → 201).
		ok(t, o.as(t, "demo", "coe", "cluster", "template", "create", "okm-kp",
			"--image", imageName, "--external-network", extNetName, "--coe", "kubernetes",
			"--keypair", "nope", "--master-flavor", flavorSmall), "Request to create cluster template okm-kp accepted")
		ok(t, o.as(t, "demo", "coe", "cluster", "template", "delete", "okm-kp"),
			"Request to delete cluster template okm-kp has been accepted.")
	})
	step(t, s, "cluster template create --public as a member is 403", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "template", "create", "okm-bad",
			"--image", imageName, "--external-network", extNetName, "--coe", "kubernetes", "--public", "--master-flavor", flavorSmall),
			"Not authorized to set public or hidden flag for cluster template (HTTP 403)")
	})
	step(t, s, "cluster template create --public as admin", func(t *testing.T) {
		var ct map[string]any
		if jsonOut(t, o.as(t, "admin", "coe", "cluster", "template", "create", "okm-public",
			"--image", imageName, "--external-network", extNetName, "--coe", "kubernetes", "--public",
			"--master-flavor", flavorSmall, "-f", "json"), &ct) && ct["public"] != true {
			t.Errorf("public = %v", ct["public"])
		}
		var rows []map[string]any
		if jsonOut(t, o.as(t, "alt", "coe", "cluster", "template", "list", "-f", "json"), &rows) && (len(rows) != 1 || rows[0]["name"] != "okm-public") {
			t.Errorf("another project sees %v", rows)
		}
		ok(t, o.as(t, "admin", "coe", "cluster", "template", "delete", "okm-public"),
			"Request to delete cluster template okm-public has been accepted.")
	})
	step(t, s, "cluster template list", func(t *testing.T) {
		var rows []map[string]any
		if !jsonOut(t, o.as(t, "demo", "coe", "cluster", "template", "list", "-f", "json"), &rows) {
			return
		}
		names := map[any]bool{}
		for _, row := range rows {
			names[row["name"]] = true
			if _, ok := row["uuid"]; !ok {
				t.Errorf("row without uuid: %v", row)
			}
		}
		if !names["okm-ct"] || !names["okm-ct2"] || len(rows) != 2 {
			t.Errorf("rows %v", rows)
		}
	})
	step(t, s, "cluster template list --limit 1 --sort-key name", func(t *testing.T) {
		var rows []map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "cluster", "template", "list", "--limit", "1", "--sort-key", "name", "--sort-dir", "desc", "-f", "json"), &rows) {
			if len(rows) != 1 || rows[0]["name"] != "okm-ct2" {
				t.Errorf("rows %v", rows)
			}
		}
	})
	step(t, s, "cluster template show by name", func(t *testing.T) {
		var ct map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "cluster", "template", "show", "okm-ct", "-f", "json"), &ct) {
			if ct["uuid"] != ctUUID || ct["name"] != "okm-ct" {
				t.Errorf("show: %v", ct)
			}
		}
	})
	step(t, s, "cluster template show unknown is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "template", "show", "nope"),
			"ClusterTemplate nope could not be found (HTTP 404)")
	})
	step(t, s, "cluster template update", func(t *testing.T) {
		var ct map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "cluster", "template", "update", "okm-ct2",
			"--docker-volume-size", "20", "--label", "extra=1", "--master-lb-enabled", "-f", "json"), &ct) {
			if ct["docker_volume_size"] != float64(20) || ct["master_lb_enabled"] != true {
				t.Errorf("update: %v", ct)
			}
			if labels, _ := ct["labels"].(map[string]any); labels["extra"] != "1" || labels["kube_tag"] != "v1.31.1" {
				t.Errorf("labels = %#v", ct["labels"])
			}
		}
	})
	step(t, s, "cluster template update --public as a member is 403", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "template", "update", "okm-ct2", "--public"),
			"Not authorized to set public or hidden flag for cluster template (HTTP 403)")
	})
	step(t, s, "cluster template update unknown is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "template", "update", "nope", "--name", "x"),
			"ClusterTemplate nope could not be found (HTTP 404)")
	})

	// ------------------------------------------------------- clusters
	step(t, s, "cluster create", func(t *testing.T) {
		r := o.as(t, "demo", "coe", "cluster", "create", "okm-c", "--cluster-template", "okm-ct",
			"--node-count", "1", "--master-count", "1", "--labels", "kube_tag=v1.30.2", "--merge-labels")
		ok(t, r, "Request to create cluster ")
		clusterUUID = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.stdout), "Request to create cluster ")), " accepted")
		if len(clusterUUID) != 36 {
			t.Errorf("no uuid in %q", r.stdout)
		}
	})
	step(t, s, "cluster create with an unknown template is 404 at latest", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "create", "okm-x", "--cluster-template", "nope"),
			"ClusterTemplate nope could not be found (HTTP 404)")
	})
	step(t, s, "cluster create with an unknown template is 400 at 1.9", func(t *testing.T) {
		fails(t, o.as(t, "demo", "--os-container-infra-api-version", "1.9", "coe", "cluster", "create", "okm-x", "--cluster-template", "nope"),
			"ClusterTemplate nope could not be found (HTTP 400)")
	})
	step(t, s, "cluster create with an unknown keypair is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "create", "okm-x", "--cluster-template", "okm-ct", "--keypair", "nope"),
			"Unable to find keypair nope (HTTP 404)")
	})
	step(t, s, "cluster create with an even master count is 400", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "create", "okm-x", "--cluster-template", "okm-ct", "--master-count", "2", "--master-lb-enabled"),
			"(HTTP 400)")
	})
	step(t, s, "cluster list", func(t *testing.T) {
		var rows []map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "cluster", "list", "-f", "json"), &rows) {
			if len(rows) != 1 || rows[0]["name"] != "okm-c" || rows[0]["uuid"] != clusterUUID {
				t.Errorf("rows %v", rows)
			}
			for _, k := range []string{"keypair", "node_count", "master_count", "status", "health_status"} {
				if _, ok := rows[0][k]; !ok && len(rows) == 1 {
					t.Errorf("row lacks %s: %v", k, rows[0])
				}
			}
		}
	})
	if clusterUUID == "" {
		t.Fatal("no cluster: the rest of the matrix needs one")
	}
	step(t, s, "cluster reaches CREATE_COMPLETE", func(t *testing.T) {
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "CREATE_COMPLETE")
	})
	step(t, s, "cluster show (latest: cluster_id)", func(t *testing.T) {
		var c map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "cluster", "show", "okm-c", "-f", "json"), &c) {
			if c["uuid"] != clusterUUID || c["status"] != "CREATE_COMPLETE" || c["cluster_template_id"] != ctUUID {
				t.Errorf("show: %v", c)
			}
			if id, _ := c["cluster_id"].(string); id == "" {
				t.Errorf("cluster_id empty at latest: %v", c)
			}
			if api, _ := c["api_address"].(string); !strings.HasPrefix(api, "https://") {
				t.Errorf("api_address %q", c["api_address"])
			}
		}
	})
	step(t, s, "cluster show at 1.12 has an empty cluster_id", func(t *testing.T) {
		var c map[string]any
		if jsonOut(t, o.as(t, "demo", "--os-container-infra-api-version", "1.12", "coe", "cluster", "show", clusterUUID, "-f", "json"), &c) {
			if id, _ := c["cluster_id"].(string); id != "" {
				t.Errorf("cluster_id %q below 1.13", id)
			}
		}
	})
	step(t, s, "cluster show unknown is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "show", "nope"), "Cluster nope could not be found (HTTP 404)")
	})
	step(t, s, "cluster show of another project's cluster is 404", func(t *testing.T) {
		fails(t, o.as(t, "alt", "coe", "cluster", "show", clusterUUID), "could not be found (HTTP 404)")
	})
	step(t, s, "cluster update --node-count", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "cluster", "update", "okm-c", "--node-count", "2"),
			"Request to update cluster okm-c has been accepted.")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "UPDATE_COMPLETE")
	})
	step(t, s, "cluster update --name is 400", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "update", "okm-c", "--name", "renamed"),
			"cannot change cluster property(ies) name (HTTP 400)")
	})
	step(t, s, "cluster update --rollback", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "cluster", "update", "okm-c", "--node-count", "1", "--rollback"),
			"Request to update cluster okm-c has been accepted.")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "UPDATE_COMPLETE")
	})
	step(t, s, "cluster update with nothing to update", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "update", "okm-c"), "Nothing to update.")
	})
	step(t, s, "cluster resize", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "cluster", "resize", "okm-c", "3"),
			"Request to resize cluster okm-c has been accepted.")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "UPDATE_COMPLETE")
		var c map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "cluster", "show", "okm-c", "-f", "json"), &c) && c["node_count"] != float64(3) {
			t.Errorf("node_count after resize: %v", c["node_count"])
		}
	})
	step(t, s, "cluster resize of an unknown cluster is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "resize", "nope", "3"), "Cluster nope could not be found (HTTP 404)")
	})
	step(t, s, "cluster resize of an unknown nodegroup is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "resize", "okm-c", "2", "--nodegroup", "nope"), "(HTTP 404)")
	})
	step(t, s, "cluster upgrade", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "cluster", "upgrade", "okm-c", "okm-ct2"),
			"Request to upgrade cluster okm-c has been accepted.")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "UPDATE_COMPLETE")
		var c map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "cluster", "show", "okm-c", "-f", "json"), &c) && c["cluster_template_id"] == ctUUID {
			t.Errorf("cluster_template_id unchanged after upgrade: %v", c["cluster_template_id"])
		}
	})
	step(t, s, "cluster upgrade to an unknown template is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "upgrade", "okm-c", "nope"), "ClusterTemplate nope could not be found (HTTP 404)")
	})

	// ------------------------------------------- config and certificates
	cfgDir := filepath.Join(o.home, "kube")
	step(t, s, "cluster config writes a kubeconfig", func(t *testing.T) {
		if err := os.MkdirAll(cfgDir, 0o700); err != nil {
			t.Fatal(err)
		}
		r := o.as(t, "demo", "coe", "cluster", "config", "okm-c", "--dir", cfgDir)
		ok(t, r, "export KUBECONFIG="+filepath.Join(cfgDir, "config"))
		b, err := os.ReadFile(filepath.Join(cfgDir, "config"))
		if err != nil {
			t.Fatalf("kubeconfig: %v\n%s", err, r)
		}
		for _, w := range []string{"server: https://", "certificate-authority-data: ", "client-certificate-data: ", "client-key-data: ", "name: okm-c", "user: admin"} {
			if !strings.Contains(string(b), w) {
				t.Errorf("kubeconfig lacks %q:\n%s", w, b)
			}
		}
	})
	step(t, s, "cluster config refuses to overwrite without --force", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "config", "okm-c", "--dir", cfgDir), "exists, aborting")
		ok(t, o.as(t, "demo", "coe", "cluster", "config", "okm-c", "--dir", cfgDir, "--force", "--output-certs"), "export KUBECONFIG=")
		for _, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
			if _, err := os.Stat(filepath.Join(cfgDir, f)); err != nil {
				t.Errorf("--output-certs: %v", err)
			}
		}
	})
	step(t, s, "ca show", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "ca", "show", "okm-c"), "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----")
	})
	step(t, s, "ca sign", func(t *testing.T) {
		csr := filepath.Join(o.home, "client.csr")
		writeCSR(t, csr)
		ok(t, o.as(t, "demo", "coe", "ca", "sign", "okm-c", csr), "-----BEGIN CERTIFICATE-----")
	})
	step(t, s, "ca show of an unknown cluster is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "ca", "show", "nope"), "Cluster nope could not be found (HTTP 404)")
	})
	step(t, s, "ca rotate", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "ca", "rotate", "okm-c"),
			"Request to rotate the CA certificate for cluster "+clusterUUID+" has been accepted.")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "UPDATE_COMPLETE")
	})
	step(t, s, "credential rotate", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "credential", "rotate", "okm-c"),
			"Request to rotate credentials for cluster "+clusterUUID+" accepted.")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "UPDATE_COMPLETE", "CREATE_COMPLETE")
	})

	// ----------------------------------------------------- nodegroups
	step(t, s, "nodegroup create", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "nodegroup", "create", "okm-c", "ng1", "--node-count", "1",
			"--min-nodes", "1", "--max-nodes", "3", "--flavor", flavorMedium, "--labels", "a=b",
			"--node-labels", "tier=web", "--node-taints", "dedicated=okm:NoSchedule"), "Request to create nodegroup ")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "UPDATE_COMPLETE")
	})
	step(t, s, "nodegroup create with a duplicate name is 409", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "nodegroup", "create", "okm-c", "ng1"), "(HTTP 409)")
	})
	step(t, s, "nodegroup list", func(t *testing.T) {
		var rows []map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "nodegroup", "list", "okm-c", "-f", "json"), &rows) {
			roles := map[any]int{}
			for _, r := range rows {
				roles[r["role"]]++
			}
			if len(rows) != 3 || roles["master"] != 1 || roles["worker"] != 2 {
				t.Errorf("rows %v", rows)
			}
		}
	})
	step(t, s, "nodegroup list --role master", func(t *testing.T) {
		var rows []map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "nodegroup", "list", "okm-c", "--role", "master", "-f", "json"), &rows) {
			if len(rows) != 1 || rows[0]["role"] != "master" {
				t.Errorf("rows %v", rows)
			}
		}
	})
	step(t, s, "nodegroup show", func(t *testing.T) {
		var ng map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "nodegroup", "show", "okm-c", "ng1", "-f", "json"), &ng) {
			if ng["name"] != "ng1" || ng["flavor_id"] != flavorMedium || ng["min_node_count"] != float64(1) || ng["max_node_count"] != float64(3) {
				t.Errorf("show: %v", ng)
			}
			if nl, _ := ng["node_labels"].(map[string]any); nl["tier"] != "web" {
				t.Errorf("node_labels %#v", ng["node_labels"])
			}
		}
	})
	step(t, s, "nodegroup show unknown is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "nodegroup", "show", "okm-c", "nope"), "Nodegroup nope could not be found (HTTP 404)")
	})
	step(t, s, "nodegroup update (Python-literal node_labels and node_taints)", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "nodegroup", "update", "okm-c", "ng1", "--min-nodes", "0", "--max-nodes", "5",
			"--node-labels", "tier=db", "--node-taints", "gpu=:NoExecute"), "Request to update nodegroup ng1 has been accepted.")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "UPDATE_COMPLETE")
		var ng map[string]any
		if jsonOut(t, o.as(t, "demo", "coe", "nodegroup", "show", "okm-c", "ng1", "-f", "json"), &ng) {
			if ng["min_node_count"] != float64(0) || ng["max_node_count"] != float64(5) {
				t.Errorf("counts: %v", ng)
			}
			if nl, _ := ng["node_labels"].(map[string]any); nl["tier"] != "db" {
				t.Errorf("node_labels %#v", ng["node_labels"])
			}
			b, _ := json.Marshal(ng["node_taints"])
			if string(b) != `[{"effect":"NoExecute","key":"gpu","value":""}]` {
				t.Errorf("node_taints %s", b)
			}
		}
	})
	step(t, s, "nodegroup update max below min is 409", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "nodegroup", "update", "okm-c", "ng1", "--min-nodes", "4", "--max-nodes", "2"),
			"max_node_count for ng1 is invalid (min_node_count (4) should be less or equal to max_node_count (2)) (HTTP 409)")
	})
	step(t, s, "cluster resize of a named nodegroup", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "cluster", "resize", "okm-c", "2", "--nodegroup", "ng1"),
			"Request to resize cluster okm-c has been accepted.")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "UPDATE_COMPLETE")
	})
	step(t, s, "nodegroup delete", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "nodegroup", "delete", "okm-c", "ng1"), "Request to delete nodegroup ng1 has been accepted.")
		deadline := time.Now().Add(2 * time.Minute)
		tok := s.id.Token(t, "demo", "demo")
		for {
			code, _ := s.api(t, tok, "GET", "/v1/clusters/"+clusterUUID+"/nodegroups/ng1", "latest", nil, nil)
			if code == 404 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("nodegroup still there (HTTP %d)", code)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	step(t, s, "nodegroup delete of a default nodegroup is 400", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "nodegroup", "delete", "okm-c", "default-worker"), "(HTTP 400)")
	})

	// ----------------------------------------------- quotas, stats, services
	step(t, s, "quotas create", func(t *testing.T) {
		r := o.as(t, "admin", "coe", "quotas", "create", "--project-id", demoID, "--resource", "Cluster", "--hard-limit", "10")
		ok(t, r, demoID, "hard_limit", "10")
	})
	step(t, s, "quotas create twice reports the conflict", func(t *testing.T) {
		ok(t, o.as(t, "admin", "coe", "quotas", "create", "--project-id", demoID, "--resource", "Cluster", "--hard-limit", "10"),
			"Create quota for project_id "+demoID+" resource Cluster failed:", "(HTTP 409)")
	})
	step(t, s, "quotas create as a member reports 403", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "quotas", "create", "--project-id", demoID, "--resource", "Cluster", "--hard-limit", "10"),
			"failed:", "(HTTP 403)")
	})
	step(t, s, "quotas update", func(t *testing.T) {
		ok(t, o.as(t, "admin", "coe", "quotas", "update", "--project-id", demoID, "--resource", "Cluster", "--hard-limit", "20"), "20")
	})
	step(t, s, "quotas show", func(t *testing.T) {
		ok(t, o.as(t, "admin", "coe", "quotas", "show", "--project-id", demoID, "--resource", "Cluster"), "20", demoID)
	})
	step(t, s, "quotas list", func(t *testing.T) {
		// `quotas list` has no -f option: a table. Without --all-tenants an
		// admin sees only the quotas of its own project.
		ok(t, o.as(t, "admin", "coe", "quotas", "list", "--all-tenants"), demoID, "Cluster", "20")
		if r := o.as(t, "admin", "coe", "quotas", "list"); r.code != 0 || strings.Contains(r.stdout, demoID) {
			t.Errorf("without --all-tenants:\n%s", r)
		}
	})
	step(t, s, "quotas delete", func(t *testing.T) {
		ok(t, o.as(t, "admin", "coe", "quotas", "delete", "--project-id", demoID, "--resource", "Cluster"),
			"Request to delete quota for project id "+demoID+" and resource Cluster has been accepted.")
		ok(t, o.as(t, "admin", "coe", "quotas", "delete", "--project-id", demoID, "--resource", "Cluster"),
			"Quota delete failed", "(HTTP 404)")
	})
	step(t, s, "stats list", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "stats", "list", demoID), "clusters", "nodes")
	})
	step(t, s, "service list as admin", func(t *testing.T) {
		var rows []map[string]any
		if jsonOut(t, o.as(t, "admin", "coe", "service", "list", "-f", "json"), &rows) {
			if len(rows) != 1 || rows[0]["binary"] != "magnum-conductor" || rows[0]["state"] != "up" {
				t.Errorf("rows %v", rows)
			}
		}
	})
	step(t, s, "service list as a member is 403", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "service", "list"), "Policy doesn't allow magnum-service:get_all to be performed (HTTP 403)")
	})

	// --------------------------------------------------------- auth types
	step(t, s, "admin_token auth with --os-endpoint", func(t *testing.T) {
		tok := s.id.Token(t, "demo", "demo")
		var rows []map[string]any
		if jsonOut(t, o.withEnv(t, nil, "--os-auth-type", "admin_token", "--os-token", tok, "--os-endpoint", s.Endpoint,
			"coe", "cluster", "list", "-f", "json"), &rows) && len(rows) != 1 {
			t.Errorf("rows %v", rows)
		}
	})
	step(t, s, "an endpoint without /v1 sends unprefixed paths", func(t *testing.T) {
		tok := s.id.Token(t, "demo", "demo")
		mark := s.rec.mark()
		ok(t, o.withEnv(t, nil, "--os-auth-type", "admin_token", "--os-token", tok, "--os-endpoint", s.URL,
			"coe", "cluster", "show", "okm-c"), clusterUUID)
		if got := s.rec.since(mark); !strings.Contains(got, "GET /clusters/okm-c") {
			t.Errorf("the client did not send the unprefixed path:\n%s", got)
		}
	})
	step(t, s, "token auth through the catalog", func(t *testing.T) {
		tok := s.id.Token(t, "demo", "demo")
		ok(t, o.withEnv(t, []string{"OS_AUTH_TYPE=v3token", "OS_AUTH_URL=" + s.id.URL, "OS_TOKEN=" + tok,
			"OS_PROJECT_NAME=demo", "OS_PROJECT_DOMAIN_NAME=Default", "OS_REGION_NAME=" + region},
			"coe", "cluster", "template", "list"), "okm-ct")
	})
	step(t, s, "none auth is refused with 401", func(t *testing.T) {
		fails(t, o.withEnv(t, nil, "--os-auth-type", "none", "--os-endpoint", s.Endpoint, "coe", "cluster", "list"), "(HTTP 401)")
	})
	step(t, s, "a revoked-looking token is refused with 401", func(t *testing.T) {
		fails(t, o.withEnv(t, nil, "--os-auth-type", "admin_token", "--os-token", "gAAAAAnotatoken", "--os-endpoint", s.Endpoint,
			"coe", "cluster", "template", "list"), "(HTTP 401)")
	})

	// ------------------------------------------------------- deletions
	step(t, s, "cluster template delete in use is 400", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "cluster", "template", "delete", "okm-ct2"),
			"Delete for cluster template okm-ct2 failed:", "(HTTP 400)")
	})
	step(t, s, "cluster delete", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "cluster", "delete", "okm-c"), "Request to delete cluster okm-c has been accepted.")
		s.waitStatus(t, s.id.Token(t, "demo", "demo"), clusterUUID, 2*time.Minute, "404")
	})
	step(t, s, "cluster delete unknown is 404", func(t *testing.T) {
		fails(t, o.as(t, "demo", "coe", "cluster", "delete", "nope"), "Cluster nope could not be found (HTTP 404)")
	})
	step(t, s, "cluster template delete", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "cluster", "template", "delete", "okm-ct", "okm-ct2"),
			"Request to delete cluster template okm-ct has been accepted.",
			"Request to delete cluster template okm-ct2 has been accepted.")
	})
	step(t, s, "cluster template delete unknown reports 404", func(t *testing.T) {
		ok(t, o.as(t, "demo", "coe", "cluster", "template", "delete", "nope"),
			"Delete for cluster template nope failed: ClusterTemplate nope could not be found (HTTP 404)")
	})
}
