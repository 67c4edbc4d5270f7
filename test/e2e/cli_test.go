package e2e

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// coe runs `openstack --os-auth-type none --os-endpoint <url>/v1 coe ...`
// against a server and returns stdout, stderr and the exit code.
type coe struct {
	t   *testing.T
	cli string
	url string
}

func (c coe) run(args ...string) (string, string, int) {
	c.t.Helper()
	full := append([]string{"--os-auth-type", "none", "--os-endpoint", c.url + "/v1", "coe"}, args...)
	// python-magnumclient's `cluster config` reads $SHELL to choose the
	// export syntax and fails with KeyError when it is unset (as under CI).
	return run(c.t, 2*time.Minute, []string{"SHELL=/bin/bash"}, c.cli, full...)
}

// ok runs a command that must succeed and returns its stdout.
func (c coe) ok(args ...string) string {
	c.t.Helper()
	stdout, stderr, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("openstack coe %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// fails runs a command that must fail and print want on stderr.
func (c coe) fails(want string, args ...string) {
	c.t.Helper()
	stdout, stderr, code := c.run(args...)
	if code == 0 {
		c.t.Fatalf("openstack coe %s: exit 0, want failure\nstdout: %s", strings.Join(args, " "), stdout)
	}
	if !strings.Contains(stderr, want) {
		c.t.Errorf("openstack coe %s: stderr %q does not contain %q", strings.Join(args, " "), stderr, want)
	}
}

func (c coe) json(args ...string) map[string]any {
	c.t.Helper()
	out := c.ok(append(args, "-f", "json")...)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		c.t.Fatalf("openstack coe %s: not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
	return m
}

func (c coe) list(args ...string) []map[string]any {
	c.t.Helper()
	out := c.ok(append(args, "-f", "json")...)
	var m []map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		c.t.Fatalf("openstack coe %s: not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
	return m
}

// waitStatus polls `cluster show` until the cluster reaches want.
func (c coe) waitStatus(cluster, want string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		m := c.json("cluster", "show", cluster)
		if m["status"] == want {
			return m
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("cluster %s: status %v, want %s", cluster, m["status"], want)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestOpenStackCLILifecycleOnAllInOne drives templates, clusters, actions,
// nodegroups, quotas, stats, services and certificates through the real
// python-openstackclient + python-magnumclient on `all-in-one`.
func TestOpenStackCLILifecycleOnAllInOne(t *testing.T) {
	cli := needEnv(t, "OPENKEEL_TEST_OPENSTACK_CLI")
	s := startServer(t, "", "all-in-one")
	c := coe{t: t, cli: cli, url: s.URL}

	// Templates.
	c.ok("cluster", "template", "create", "--coe", "kubernetes", "--image", "ubuntu-jammy-kube",
		"--external-network", "public", "--flavor", "m1.small", "--master-flavor", "m1.medium",
		"--labels", "kube_tag=v1.31.1", "tpl1")
	c.ok("cluster", "template", "create", "--coe", "kubernetes", "--image", "ubuntu-jammy-kube",
		"--external-network", "public", "--flavor", "m1.small", "--master-flavor", "m1.medium",
		"--labels", "kube_tag=v1.32.0", "tpl2")
	if got := c.list("cluster", "template", "list"); len(got) != 2 {
		t.Fatalf("template list: %v", got)
	}
	tpl := c.json("cluster", "template", "show", "tpl1")
	if tpl["cluster_distro"] != "ubuntu" || tpl["coe"] != "kubernetes" {
		t.Errorf("template show: %v", tpl)
	}
	c.ok("cluster", "template", "update", "tpl1", "--dns-nameserver", "1.1.1.1")
	if got := c.json("cluster", "template", "show", "tpl1")["dns_nameserver"]; got != "1.1.1.1" {
		t.Errorf("dns_nameserver after update = %v", got)
	}
	c.fails("ClusterTemplate nope could not be found (HTTP 404)", "cluster", "template", "show", "nope")

	// Clusters.
	c.ok("cluster", "create", "--cluster-template", "tpl1", "--node-count", "2", "c1")
	cl := c.waitStatus("c1", "CREATE_COMPLETE")
	if cl["api_address"] == nil || cl["node_count"] != float64(2) {
		t.Errorf("cluster show: %v", cl)
	}
	if got := c.list("cluster", "list"); len(got) != 1 || got[0]["name"] != "c1" {
		t.Errorf("cluster list: %v", got)
	}
	c.fails("Cluster nope could not be found (HTTP 404)", "cluster", "show", "nope")
	c.fails("ClusterTemplate nope could not be found", "cluster", "create", "--cluster-template", "nope", "cx")
	// The client reports a failed delete on stdout and exits 0.
	if out := c.ok("cluster", "template", "delete", "tpl1"); !strings.Contains(out,
		"ClusterTemplate tpl1 is referenced by one or multiple clusters (HTTP 400)") {
		t.Errorf("template delete in use: %q", out)
	}

	c.ok("cluster", "update", "c1", "--node-count", "3")
	if got := c.waitStatus("c1", "UPDATE_COMPLETE")["node_count"]; got != float64(3) {
		t.Errorf("node_count after update = %v", got)
	}
	c.ok("cluster", "resize", "c1", "4")
	if got := c.waitStatus("c1", "UPDATE_COMPLETE")["node_count"]; got != float64(4) {
		t.Errorf("node_count after resize = %v", got)
	}
	c.ok("cluster", "upgrade", "c1", "tpl2")
	if got := c.waitStatus("c1", "UPDATE_COMPLETE")["coe_version"]; got != "v1.32.0" {
		t.Errorf("coe_version after upgrade = %v", got)
	}

	// Nodegroups.
	c.ok("nodegroup", "create", "c1", "ng1", "--node-count", "1", "--min-nodes", "1", "--max-nodes", "3")
	if got := c.list("nodegroup", "list", "c1"); len(got) != 3 {
		t.Errorf("nodegroup list: %v", got)
	}
	deadline := time.Now().Add(60 * time.Second)
	for c.json("nodegroup", "show", "c1", "ng1")["status"] != "CREATE_COMPLETE" {
		if time.Now().After(deadline) {
			t.Fatal("nodegroup ng1 never reached CREATE_COMPLETE")
		}
		time.Sleep(500 * time.Millisecond)
	}
	c.ok("nodegroup", "update", "c1", "ng1", "--max-nodes", "5")
	if got := c.json("nodegroup", "show", "c1", "ng1")["max_node_count"]; got != float64(5) {
		t.Errorf("max_node_count after update = %v", got)
	}
	// The client reports a failed delete on stdout or stderr.
	if stdout, stderr, _ := c.run("nodegroup", "delete", "c1", "default-worker"); !strings.Contains(stdout+stderr,
		"Deleting a default nodegroup is not supported (HTTP 400)") {
		t.Errorf("default nodegroup delete: %s %s", stdout, stderr)
	}
	c.ok("nodegroup", "delete", "c1", "ng1")

	// Certificates: cluster config writes a kubeconfig whose client
	// certificate verifies against the CA that `ca show` prints.
	dir := t.TempDir()
	c.ok("cluster", "config", "c1", "--dir", dir, "--force")
	caPEM := c.ok("ca", "show", "c1")
	checkKubeconfig(t, dir, caPEM)

	// Quotas, stats, services.
	c.ok("quotas", "create", "--project-id", "p2", "--resource", "Cluster", "--hard-limit", "5")
	// `quotas show` has no -f option: it prints a table.
	if out := c.ok("quotas", "show", "--project-id", "p2", "--resource", "Cluster"); !strings.Contains(out, "| hard_limit | 5") {
		t.Errorf("quotas show: %s", out)
	}
	if out := c.ok("quotas", "list", "--all-tenants"); !strings.Contains(out, "| p2 ") {
		t.Errorf("quotas list: %s", out)
	}
	c.ok("quotas", "delete", "--project-id", "p2", "--resource", "Cluster")
	// `stats list` has no -f option: it prints a table.
	if out := c.ok("stats", "list", "openkeel-project"); !strings.Contains(out, "| clusters | 1 ") {
		t.Errorf("stats: %s", out)
	}
	if got := c.list("service", "list"); len(got) == 0 {
		t.Error("service list is empty")
	}

	// Delete: the cluster goes away.
	c.ok("cluster", "delete", "c1")
	deadline = time.Now().Add(60 * time.Second)
	for len(c.list("cluster", "list")) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("cluster c1 was not removed after delete")
		}
		time.Sleep(500 * time.Millisecond)
	}
	c.fails("Cluster c1 could not be found (HTTP 404)", "cluster", "show", "c1")
	c.ok("cluster", "template", "delete", "tpl1", "tpl2")
	if got := c.list("cluster", "template", "list"); len(got) != 0 {
		t.Errorf("templates left: %v", got)
	}
}

// checkKubeconfig verifies the client certificate of the kubeconfig in dir
// against caPEM with openssl, and checks its subject.
func checkKubeconfig(t *testing.T, dir, caPEM string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	var certData string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "client-certificate-data:"); ok {
			certData = strings.TrimSpace(v)
		}
	}
	if certData == "" {
		t.Fatalf("no client-certificate-data in kubeconfig:\n%s", raw)
	}
	certPEM, err := base64.StdEncoding.DecodeString(certData)
	if err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(dir, "client.crt")
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, []byte(caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("openssl", "verify", "-CAfile", caFile, certFile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ": OK") {
		t.Fatalf("openssl verify: %v\n%s", err, out)
	}
	out, err = exec.Command("openssl", "x509", "-in", certFile, "-noout", "-subject").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	subject := strings.ReplaceAll(string(out), " ", "")
	if !strings.Contains(subject, "CN=admin") || !strings.Contains(subject, "O=system:masters") {
		t.Errorf("client certificate subject %q, want CN=admin, O=system:masters", out)
	}
	// The client's CSR requests no extension; Magnum's signer then adds only
	// a subjectKeyIdentifier (no key usage, no extended key usage).
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("client certificate is not PEM:\n%s", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.Extensions) != 1 || len(cert.SubjectKeyId) == 0 || cert.KeyUsage != 0 || len(cert.ExtKeyUsage) != 0 {
		t.Errorf("client certificate extensions: %d (key usage %v, ext key usage %v, ski %x), want only a subjectKeyIdentifier",
			len(cert.Extensions), cert.KeyUsage, cert.ExtKeyUsage, cert.SubjectKeyId)
	}
	if days := cert.NotAfter.Sub(cert.NotBefore).Hours() / 24; days < 1825 || days > 1827 {
		t.Errorf("client certificate validity %.1f days, want term_of_validity (1825) + 1", days)
	}
}
