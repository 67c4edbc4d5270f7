package clients

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenStackCoeWithoutKeystone drives `openkeel-magnum all-in-one` (no
// Keystone, fake driver, built-in lookups) with the two keystoneauth plugins
// that carry their own endpoint (peer-suites.md § 8b): admin_token and none.
func TestOpenStackCoeWithoutKeystone(t *testing.T) {
	cli := needEnv(t, "OPENKEEL_TEST_OPENSTACK_CLI")
	bin := openkeelBinary(t)
	s := &stack{dir: t.TempDir(), output: &bytes.Buffer{}}
	port := freePort(t)
	s.conf = filepath.Join(s.dir, "magnum.conf")
	if err := os.WriteFile(s.conf, []byte(fmt.Sprintf("[DEFAULT]\nhost = okm-noauth\n\n[api]\nhost = 127.0.0.1\nport = %d\n", port)), 0o600); err != nil {
		t.Fatal(err)
	}
	s.ServerURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	s.startProcess(t, bin, s.output, "api-like", "all-in-one")
	target, _ := url.Parse(s.ServerURL)
	s.rec = &recorder{next: &http.Transport{ResponseHeaderTimeout: 2 * time.Minute}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = s.rec
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)
	s.URL, s.Endpoint = proxy.URL, proxy.URL+"/v1"
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service output (last 8 KiB):\n%s", tail(s.output.String(), 8192))
		}
	})
	o := &osc{bin: cli, home: t.TempDir(), s: s}
	none := []string{"OS_AUTH_TYPE=none", "OS_ENDPOINT=" + s.Endpoint}
	token := []string{"OS_AUTH_TYPE=admin_token", "OS_TOKEN=devtoken", "OS_ENDPOINT=" + s.Endpoint}
	var clusterUUID string

	step(t, s, "template create with auth type none", func(t *testing.T) {
		ok(t, o.withEnv(t, none, "coe", "cluster", "template", "create", "dev-ct", "--image", "fedora-coreos-latest",
			"--external-network", "public", "--coe", "kubernetes", "--master-flavor", "m1.small", "--flavor", "m1.small"),
			"Request to create cluster template dev-ct accepted")
	})
	step(t, s, "cluster create with admin_token", func(t *testing.T) {
		r := o.withEnv(t, token, "coe", "cluster", "create", "dev-c", "--cluster-template", "dev-ct", "--node-count", "2")
		ok(t, r, "Request to create cluster ")
		clusterUUID = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(r.stdout), "Request to create cluster "), " accepted")
	})
	if len(clusterUUID) != 36 {
		t.Fatalf("no cluster uuid %q", clusterUUID)
	}
	step(t, s, "cluster reaches CREATE_COMPLETE", func(t *testing.T) {
		s.waitStatus(t, "devtoken", clusterUUID, time.Minute, "CREATE_COMPLETE")
	})
	step(t, s, "cluster list, show and config", func(t *testing.T) {
		ok(t, o.withEnv(t, none, "coe", "cluster", "list"), "dev-c", "CREATE_COMPLETE")
		ok(t, o.withEnv(t, token, "coe", "cluster", "show", "dev-c"), clusterUUID)
		dir := filepath.Join(o.home, "kube")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		ok(t, o.withEnv(t, none, "coe", "cluster", "config", "dev-c", "--dir", dir), "export KUBECONFIG=")
		if b, err := os.ReadFile(filepath.Join(dir, "config")); err != nil || !strings.Contains(string(b), "server: https://") {
			t.Errorf("kubeconfig: %v\n%s", err, b)
		}
	})
	step(t, s, "service list (the no-auth identity is admin)", func(t *testing.T) {
		ok(t, o.withEnv(t, none, "coe", "service", "list"), "magnum-conductor", "up")
	})
	step(t, s, "unknown cluster is 404", func(t *testing.T) {
		fails(t, o.withEnv(t, none, "coe", "cluster", "show", "nope"), "Cluster nope could not be found (HTTP 404)")
	})
	step(t, s, "cluster delete", func(t *testing.T) {
		ok(t, o.withEnv(t, token, "coe", "cluster", "delete", "dev-c"), "Request to delete cluster dev-c has been accepted.")
		s.waitStatus(t, "devtoken", clusterUUID, time.Minute, "404")
	})
}
