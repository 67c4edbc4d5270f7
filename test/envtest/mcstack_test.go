package envtest

import (
	"bytes"
	"context"
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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/testutil/keystonetest"
	"github.com/openkeel/openkeel-magnum/internal/testutil/kubetest"
	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

// The stack of TestMagnumClientCAPI: the openkeel-magnum binary (api and
// reconciler) behind the real Keystone of scripts/ci/keystone.sh, with the
// Cluster API driver on a real kube-apiserver and a Glance/Nova/Neutron
// double. Its catalog lives in a region of its own.

// mcRegion is the Keystone region whose endpoints point at this stack.
const mcRegion = "okm-envtest-capi"

// Names seeded into the OpenStack double.
const (
	mcImageID     = "3f0c1c52-6a8e-4a0a-9a55-1d1f0b6f7a01"
	mcImageName   = "ubuntu-2204-kube"
	mcFlavor      = "m1.small"
	mcKeypair     = "kp1"
	mcExtNetName  = "public"
	mcExtNetID    = "5e1d0c1f-2a36-4ad5-8f8e-0b5d6f3f2a10"
	mcFixedNetID  = "9a7c1c3e-51b3-4f6c-9d0e-3c2b1a0f9e21"
	mcFixedSubnet = "0c4e2b7a-7f3d-4a1b-8c6d-5e4f3a2b1c09"
)

var (
	mcBuildOnce sync.Once
	mcBinary    string
	mcBuildErr  error
)

// mcOpenkeelBinary builds cmd/openkeel-magnum once per test process.
func mcOpenkeelBinary(t *testing.T) string {
	t.Helper()
	mcBuildOnce.Do(func() {
		root, err := kubetest.RepoRoot()
		if err != nil {
			mcBuildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "okm-envtest-bin")
		if err != nil {
			mcBuildErr = err
			return
		}
		mcBinary = filepath.Join(dir, "openkeel-magnum")
		cmd := exec.Command("go", "build", "-o", mcBinary, "./cmd/openkeel-magnum")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			mcBuildErr = fmt.Errorf("build openkeel-magnum: %v\n%s", err, out)
		}
	})
	if mcBuildErr != nil {
		t.Fatal(mcBuildErr)
	}
	return mcBinary
}

// --------------------------------------------------- OpenStack double

// mcOpenStack serves the Glance/Nova/Neutron double and Nova's
// os-server-groups (which the double lacks) for any token: the tokens
// are real Keystone tokens the double cannot check.
type mcOpenStack struct {
	URL  string
	fake *osfake.Server

	mu     sync.Mutex
	seq    int
	groups []mcServerGroup
}

type mcServerGroup struct{ ID, Name, Policy string }

func newMCOpenStack(t *testing.T) *mcOpenStack {
	t.Helper()
	seed := osfake.Seed{
		Images: []osfake.Image{{ID: mcImageID, Name: mcImageName, OSDistro: "ubuntu", Properties: map[string]string{"kube_version": "v1.30.2"}}},
		Flavors: []osfake.Flavor{
			{ID: "1", Name: mcFlavor, VCPUs: 1, RAM: 2048, Disk: 20},
			{ID: "2", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40},
		},
		Keypairs: []osfake.Keypair{{Name: mcKeypair, PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOkm okm@test"}},
		Networks: []osfake.Network{
			{ID: mcExtNetID, Name: mcExtNetName, External: true},
			{ID: mcFixedNetID, Name: "private"},
		},
		Subnets: []osfake.Subnet{{ID: mcFixedSubnet, Name: "private-subnet", NetworkID: mcFixedNetID, CIDR: "10.0.0.0/24"}},
	}
	f := &mcOpenStack{fake: osfake.New(t, seed)}
	target, _ := url.Parse(f.fake.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/compute/v2.1/os-server-groups"); ok {
			f.serveGroups(w, r, strings.Trim(rest, "/"))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// endpoint is the catalog URL of service ("image", "compute", "network").
func (f *mcOpenStack) endpoint(service string) string {
	return f.URL + strings.TrimPrefix(f.fake.Endpoint(service, "public"), f.fake.URL)
}

// groupsByName returns the server groups held, name -> id.
func (f *mcOpenStack) groupsByName() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for _, g := range f.groups {
		out[g.Name] = g.ID
	}
	return out
}

func (f *mcOpenStack) serveGroups(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("X-Auth-Token") == "" {
		mcWriteJSON(w, 401, map[string]any{"error": map[string]any{"code": 401, "message": "no token"}})
		return
	}
	body := func(g mcServerGroup) map[string]any {
		return map[string]any{"id": g.ID, "name": g.Name, "policies": []string{g.Policy}, "members": []string{}, "metadata": map[string]any{}}
	}
	switch {
	case id == "" && r.Method == http.MethodGet:
		out := []map[string]any{}
		for _, g := range f.groups {
			out = append(out, body(g))
		}
		mcWriteJSON(w, 200, map[string]any{"server_groups": out})
	case id == "" && r.Method == http.MethodPost:
		var in struct {
			SG struct {
				Name     string   `json:"name"`
				Policies []string `json:"policies"`
			} `json:"server_group"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.SG.Name == "" || len(in.SG.Policies) != 1 {
			mcWriteJSON(w, 400, map[string]any{"badRequest": map[string]any{"code": 400, "message": "Invalid input for field/attribute server_group."}})
			return
		}
		f.seq++
		g := mcServerGroup{ID: fmt.Sprintf("5e0c0000-0000-4000-8000-%012d", f.seq), Name: in.SG.Name, Policy: in.SG.Policies[0]}
		f.groups = append(f.groups, g)
		mcWriteJSON(w, 200, map[string]any{"server_group": body(g)})
	case id != "" && r.Method == http.MethodDelete:
		i := slices.IndexFunc(f.groups, func(g mcServerGroup) bool { return g.ID == id })
		if i < 0 {
			mcWriteJSON(w, 404, map[string]any{"itemNotFound": map[string]any{"code": 404, "message": "Instance group " + id + " could not be found."}})
			return
		}
		f.groups = slices.Delete(f.groups, i, i+1)
		w.WriteHeader(http.StatusNoContent)
	default:
		mcWriteJSON(w, 405, map[string]any{"error": map[string]any{"code": 405, "message": "not supported by the double"}})
	}
}

func mcWriteJSON(w http.ResponseWriter, status int, body any) {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ------------------------------------------------------------ processes

// mcLockedBuffer is a bytes.Buffer safe for concurrent writers.
type mcLockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *mcLockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *mcLockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func mcFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// mcStart runs `openkeel-magnum <args> --config-file conf` in dir until the
// test ends; with serveURL it waits until the process answers there.
func mcStart(t *testing.T, bin, conf, dir string, out io.Writer, serveURL string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, append(slices.Clone(args), "--config-file", conf)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if serveURL == "" {
		return
	}
	deadline := time.Now().Add(60 * time.Second)
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		resp, err := client.Get(serveURL + "/")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("openkeel-magnum %s exited", args[0])
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("openkeel-magnum %s did not answer: %v", args[0], err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mcRun runs a command and returns its combined output.
func mcRun(bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return exec.CommandContext(ctx, bin, args...).CombinedOutput()
}

// ------------------------------------------------------------- the CLI

// mcOSC runs `openstack` as a Keystone user with a clean environment (no
// OS_* variables from the caller, an empty HOME so that no clouds.yaml is
// read), in region mcRegion.
type mcOSC struct {
	bin, home string
	id        *keystonetest.Identity
}

type mcResult struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r mcResult) String() string {
	return "openstack " + strings.Join(r.args, " ") + fmt.Sprintf("\nexit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, mcTail(r.stderr, 4000))
}

func mcTail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func (o *mcOSC) as(t *testing.T, user string, args ...string) mcResult {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OS_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+o.home, "PYTHONWARNINGS=ignore",
		"OS_AUTH_TYPE=password", "OS_AUTH_URL="+o.id.URL, "OS_IDENTITY_API_VERSION=3",
		"OS_USERNAME="+user, "OS_PASSWORD="+o.id.Passwords[user], "OS_PROJECT_NAME="+user,
		"OS_USER_DOMAIN_NAME=Default", "OS_PROJECT_DOMAIN_NAME=Default", "OS_REGION_NAME="+mcRegion)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.bin, args...)
	cmd.Env, cmd.Dir = env, o.home
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := mcResult{args: args, stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run openstack: %v", err)
		}
		r.code = ee.ExitCode()
	}
	return r
}

// mustOK fails t unless r exited 0 with every want in its stdout.
func mcMustOK(t *testing.T, r mcResult, want ...string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("stdout lacks %q:\n%s", w, r)
		}
	}
}
