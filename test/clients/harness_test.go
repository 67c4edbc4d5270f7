package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/testutil/keystonetest"
	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

// region is the Keystone region whose catalog entries point at the stack
// under test; the entries of RegionOne (keystone.sh) are left untouched.
const region = "okm-clients"

// Names seeded into the OpenStack double.
const (
	imageID      = "3f0c1c52-6a8e-4a0a-9a55-1d1f0b6f7a01"
	imageName    = "ubuntu-2204-kube"
	flavorSmall  = "m1.small"
	flavorMedium = "m1.medium"
	keypairName  = "kp1"
	extNetName   = "public"
	extNetID     = "5e1d0c1f-2a36-4ad5-8f8e-0b5d6f3f2a10"
	fixedNetID   = "9a7c1c3e-51b3-4f6c-9d0e-3c2b1a0f9e21"
	fixedNetName = "private"
	subnetID     = "0c4e2b7a-7f3d-4a1b-8c6d-5e4f3a2b1c09"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// openkeelBinary builds cmd/openkeel-magnum once per test process.
func openkeelBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "okm-clients-bin")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "openkeel-magnum")
		cmd := exec.Command("go", "build", "-o", binary, "./cmd/openkeel-magnum")
		cmd.Dir = repoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build openkeel-magnum: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// needEnv returns an environment variable naming an external service or
// tool; the test skips when it is unset, except in CI where it fails.
func needEnv(t *testing.T, name string) string {
	t.Helper()
	return keystonetest.Env(t, name)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ------------------------------------------------------- recording proxy

// exchange is one request and response seen by the proxy.
type exchange struct {
	Method, URL     string
	ReqHeader       http.Header
	ReqBody         []byte
	Status          int
	RespHeader      http.Header
	RespBody        []byte
	Err             error
	Started, Finish time.Time
}

// recorder is a reverse proxy in front of the service that keeps every
// exchange, so that a failing client check can show what it sent and got.
type recorder struct {
	mu   sync.Mutex
	log  []exchange
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := exchange{Method: req.Method, URL: req.URL.RequestURI(), ReqHeader: req.Header.Clone(), Started: time.Now()}
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		ex.ReqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := r.next.RoundTrip(req)
	ex.Finish = time.Now()
	if err != nil {
		ex.Err = err
		r.add(ex)
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		ex.Err = err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	ex.Status, ex.RespHeader, ex.RespBody = resp.StatusCode, resp.Header.Clone(), b
	r.add(ex)
	return resp, nil
}

func (r *recorder) add(ex exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, ex)
}

// mark returns a position in the log.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.log)
}

// exchanges returns a copy of the exchanges recorded after mark.
func (r *recorder) exchanges(mark int) []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	if mark >= len(r.log) {
		return nil
	}
	return slices.Clone(r.log[mark:])
}

// since renders the exchanges recorded after mark. Tokens are never shown.
func (r *recorder) since(mark int) string { return r.render(mark, false) }

// failures renders the exchanges after mark that got a 4xx/5xx answer or
// none at all (for suites whose runs are too long to print in full).
func (r *recorder) failures(mark int) string { return r.render(mark, true) }

func (r *recorder) render(mark int, onlyFailures bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	if mark >= len(r.log) {
		return "(no request reached the service)\n"
	}
	for i, ex := range r.log[mark:] {
		if onlyFailures && ex.Err == nil && ex.Status < 400 {
			continue
		}
		fmt.Fprintf(&b, "--- #%d %s %s\n", mark+i, ex.Method, ex.URL)
		writeHeaders(&b, ex.ReqHeader)
		if len(ex.ReqBody) > 0 {
			fmt.Fprintf(&b, "%s\n", clip(ex.ReqBody))
		}
		if ex.Err != nil {
			fmt.Fprintf(&b, "<<< transport error: %v\n", ex.Err)
			continue
		}
		fmt.Fprintf(&b, "<<< %d (%s)\n", ex.Status, ex.Finish.Sub(ex.Started).Round(time.Millisecond))
		writeHeaders(&b, ex.RespHeader)
		if len(ex.RespBody) > 0 {
			fmt.Fprintf(&b, "%s\n", clip(ex.RespBody))
		}
	}
	return b.String()
}

func writeHeaders(b *strings.Builder, h http.Header) {
	for _, k := range []string{"Content-Type", "Openstack-Api-Version", "X-Openstack-Request-Id", "Location", "Www-Authenticate"} {
		if v := h.Get(k); v != "" {
			fmt.Fprintf(b, "    %s: %s\n", k, v)
		}
	}
}

func clip(b []byte) string {
	const max = 3000
	if len(b) > max {
		return string(b[:max]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return string(b)
}

// --------------------------------------------------- OpenStack double

// openstackFront serves the Glance/Nova/Neutron double and adds the Nova
// keypair writes (POST/DELETE /os-keypairs) that tempest needs and the
// read-only double lacks.
type openstackFront struct {
	URL  string
	fake *osfake.Server

	mu       sync.Mutex
	keypairs map[string]string // name -> public key
	servers  map[string]string // server id -> status (ACTIVE, SHUTOFF), for the auto-healer
	actions  []string          // "<server id> <action>" in the order Nova received them
}

func newOpenStackFront(t *testing.T) *openstackFront {
	t.Helper()
	seed := osfake.Seed{
		Images: []osfake.Image{
			{ID: imageID, Name: imageName, OSDistro: "ubuntu", Properties: map[string]string{"kube_version": "v1.30.2"}},
			{ID: "7d0f0c5b-5a1d-4b8e-9d7e-2f6a8b9c0d11", Name: "no-distro"},
			// The image name openstacksdk's functional test_coe hard-codes.
			{ID: "b1e5c0de-24a4-4e35-8a4f-1d0f0c5b6a02", Name: "ubuntu-24.04-v1.35.4", OSDistro: "ubuntu"},
		},
		Flavors: []osfake.Flavor{
			{ID: "1", Name: flavorSmall, VCPUs: 1, RAM: 2048, Disk: 20},
			{ID: "2", Name: flavorMedium, VCPUs: 2, RAM: 4096, Disk: 40},
			{ID: "3", Name: "m1.large", VCPUs: 4, RAM: 8192, Disk: 80},
		},
		Networks: []osfake.Network{
			{ID: extNetID, Name: extNetName, External: true},
			{ID: fixedNetID, Name: fixedNetName},
		},
		Subnets: []osfake.Subnet{{ID: subnetID, Name: "private-subnet", NetworkID: fixedNetID, CIDR: "10.0.0.0/24"}},
	}
	f := &openstackFront{fake: osfake.New(t, seed), servers: map[string]string{}, keypairs: map[string]string{
		keypairName: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOkm okm@test",
	}}
	target, _ := url.Parse(f.fake.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/compute/v2.1/os-keypairs"); ok {
			f.serveKeypairs(w, r, strings.Trim(rest, "/"))
			return
		}
		if rest, ok := strings.CutPrefix(r.URL.Path, "/compute/v2.1/servers/"); ok {
			f.serveServer(w, r, strings.Trim(rest, "/"))
			return
		}
		if f.serveVersions(w, r) {
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// endpoint is the catalog URL of service ("image", "compute", "network").
func (f *openstackFront) endpoint(service string) string {
	return f.URL + strings.TrimPrefix(f.fake.Endpoint(service, "public"), f.fake.URL)
}

// serveVersions answers the version discovery keystoneauth does on the
// catalog URLs (openstacksdk): the unversioned Glance and Neutron roots and
// the Nova v2.1 root.
func (f *openstackFront) serveVersions(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	link := func(p string) []any { return []any{map[string]any{"rel": "self", "href": f.URL + p}} }
	switch strings.TrimRight(r.URL.Path, "/") {
	case "/image":
		writeJSONResponse(w, 300, map[string]any{"versions": []any{
			map[string]any{"id": "v2.16", "status": "CURRENT", "links": link("/image/v2/")}}})
	case "/network":
		writeJSONResponse(w, 200, map[string]any{"versions": []any{
			map[string]any{"id": "v2.0", "status": "CURRENT", "links": link("/network/v2.0/")}}})
	case "/compute/v2.1":
		writeJSONResponse(w, 200, map[string]any{"version": map[string]any{
			"id": "v2.1", "status": "CURRENT", "version": "2.96", "min_version": "2.1",
			"updated": "2013-07-23T11:33:21Z", "links": link("/compute/v2.1/")}})
	default:
		return false
	}
	return true
}

func (f *openstackFront) serveKeypairs(w http.ResponseWriter, r *http.Request, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	view := func(n string) map[string]any {
		return map[string]any{"name": n, "type": "ssh", "public_key": f.keypairs[n],
			"fingerprint": "3f:4e:okm:" + n, "user_id": "fake-user", "id": 1,
			"created_at": "2026-01-01T00:00:00.000000", "deleted": false, "deleted_at": nil, "updated_at": nil}
	}
	notFound := func() {
		writeJSONResponse(w, 404, map[string]any{"itemNotFound": map[string]any{"code": 404, "message": "Keypair " + name + " not found for user fake-user"}})
	}
	// Nova keypairs belong to a user; the double treats every writer as a
	// new user (as tempest's dynamic credentials are): DELETE finds nothing
	// and POST always creates. Reads see every keypair created so far.
	switch {
	case r.Method == http.MethodGet && name == "":
		var list []any
		for n := range f.keypairs {
			list = append(list, map[string]any{"keypair": map[string]any{"name": n, "type": "ssh", "public_key": f.keypairs[n], "fingerprint": "3f:4e:okm:" + n}})
		}
		writeJSONResponse(w, 200, map[string]any{"keypairs": list})
	case r.Method == http.MethodGet:
		if _, ok := f.keypairs[name]; !ok {
			notFound()
			return
		}
		writeJSONResponse(w, 200, map[string]any{"keypair": view(name)})
	case r.Method == http.MethodPost && name == "":
		var in struct {
			Keypair struct {
				Name      string `json:"name"`
				PublicKey string `json:"public_key"`
			} `json:"keypair"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Keypair.Name == "" {
			writeJSONResponse(w, 400, map[string]any{"badRequest": map[string]any{"code": 400, "message": "Invalid input"}})
			return
		}
		pk := in.Keypair.PublicKey
		if pk == "" {
			pk = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ generated"
		}
		f.keypairs[in.Keypair.Name] = pk
		out := map[string]any{"name": in.Keypair.Name, "public_key": pk, "fingerprint": "3f:4e:okm:" + in.Keypair.Name, "user_id": "fake-user"}
		if in.Keypair.PublicKey == "" {
			out["private_key"] = "-----BEGIN RSA PRIVATE KEY-----\nMIIEfake\n-----END RSA PRIVATE KEY-----\n"
		}
		writeJSONResponse(w, 200, map[string]any{"keypair": out})
	case r.Method == http.MethodDelete && name != "":
		notFound()
	default:
		writeJSONResponse(w, 405, map[string]any{"error": "method not allowed"})
	}
}

func writeJSONResponse(w http.ResponseWriter, status int, body any) {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ------------------------------------------------------------------ stack

// stack is one running service with everything the clients need around it.
type stack struct {
	id        *keystonetest.Identity
	os        *openstackFront
	rec       *recorder
	ServerURL string // the service itself
	URL       string // the recording proxy in front of it (what the catalog names)
	Endpoint  string // URL + "/v1"
	conf      string
	dir       string
	output    *bytes.Buffer
}

// newStack starts the service behind Keystone with the fake driver and the
// background status loop, and publishes it in the okm-clients region.
func newStack(t *testing.T) *stack {
	t.Helper()
	id := keystonetest.New(t)
	bin := openkeelBinary(t)
	s := &stack{id: id, os: newOpenStackFront(t), dir: t.TempDir()}

	port := freePort(t)
	s.conf = filepath.Join(s.dir, "magnum.conf")
	conf := fmt.Sprintf(`[DEFAULT]
host = okm-clients-test
periodic_interval_max = 1

[api]
host = 127.0.0.1
port = %d

[database]
connection = sqlite:///%s

[keystone_authtoken]
www_authenticate_uri = %s
auth_url = %s
auth_type = password
username = magnum
password = %s
project_name = service
user_domain_name = Default
project_domain_name = Default

[drivers]
enabled_beta_drivers = fake
default_driver = fake

[glance_client]
region_name = %s

[nova_client]
region_name = %s

[neutron_client]
region_name = %s

[oslo_middleware]
enable_proxy_headers_parsing = false
`, port, filepath.Join(s.dir, "magnum.db"), id.URL, id.URL, id.Passwords["magnum"], region, region, region)
	if err := os.WriteFile(s.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "db", "upgrade", "--config-file", s.conf).CombinedOutput(); err != nil {
		t.Fatalf("db upgrade: %v\n%s", err, out)
	}
	s.ServerURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	s.output = &bytes.Buffer{}
	s.startProcess(t, bin, s.output, "api")

	// The recording proxy keeps the client's Host header, so the links the
	// service builds (next, self) point back at the proxy.
	target, _ := url.Parse(s.ServerURL)
	s.rec = &recorder{next: &http.Transport{ResponseHeaderTimeout: 2 * time.Minute}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = s.rec
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)
	s.URL = proxy.URL
	s.Endpoint = proxy.URL + "/v1"

	s.startBackground(t, bin)
	id.PublishCatalog(t, region, "openkeel-magnum client tests", map[[2]string]string{
		{"container-infra", "magnum"}: s.Endpoint,
		{"image", "glance"}:           s.os.endpoint(osfake.ServiceImage),
		{"compute", "nova"}:           s.os.endpoint(osfake.ServiceCompute),
		{"network", "neutron"}:        s.os.endpoint(osfake.ServiceNetwork),
		{"identity", "keystone"}:      id.URL,
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service output (last 8 KiB):\n%s", tail(s.output.String(), 8192))
		}
	})
	return s
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// startProcess runs `openkeel-magnum <args> --config-file conf` until the
// test ends and, for the api, waits until it answers.
func (s *stack) startProcess(t *testing.T, bin string, out *bytes.Buffer, args ...string) {
	t.Helper()
	// A first argument "api-like" marks a serving subcommand other than
	// api (all-in-one): wait for it to answer too.
	serving := args[0] == "api"
	if args[0] == "api-like" {
		serving, args = true, args[1:]
	}
	full := append(append([]string{}, args...), "--config-file", s.conf)
	cmd := exec.Command(bin, full...)
	cmd.Dir = s.dir
	w := &lockedBuffer{b: out}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if !serving {
		return
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.ServerURL + "/")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("openkeel-magnum %s exited:\n%s", args[0], w.b.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("openkeel-magnum %s did not answer: %v\n%s", args[0], err, w.b.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startBackground runs `openkeel-magnum reconciler` next to `api` over the
// same database: the status loop (clusters reach *_COMPLETE) and the
// conductor heartbeat (`coe service list`).
func (s *stack) startBackground(t *testing.T, bin string) {
	t.Helper()
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	if !strings.Contains(string(help), "\n  reconciler ") {
		t.Fatalf("openkeel-magnum has no reconciler subcommand:\n%s", help)
	}
	s.startProcess(t, bin, s.output, "reconciler")
}

// watch prints the exchanges of the current (sub)test when it fails.
func (s *stack) watch(t *testing.T) {
	t.Helper()
	mark := s.rec.mark()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("HTTP exchanges with the service during %s:\n%s", t.Name(), s.rec.since(mark))
		}
	})
}

// api sends a request to the service (through the proxy) as user, at
// microversion version ("" = none), and decodes a JSON answer into out.
func (s *stack) api(t *testing.T, token, method, path, version string, in, out any) (int, http.Header) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "container-infra "+version)
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, resp.Header
}

// waitStatus polls the cluster until its status is one of want (or, with
// want "404", until it is gone) and returns the last status seen.
func (s *stack) waitStatus(t *testing.T, token, cluster string, timeout time.Duration, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		var c struct {
			Status string `json:"status"`
		}
		code, _ := s.api(t, token, http.MethodGet, "/v1/clusters/"+cluster, "latest", nil, &c)
		last = c.Status
		if code == 404 {
			last = "404"
		}
		for _, w := range want {
			if w == last {
				return last
			}
		}
		if strings.HasSuffix(last, "_FAILED") || time.Now().After(deadline) {
			t.Fatalf("cluster %s: status %q (HTTP %d), want one of %v", cluster, last, code, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
