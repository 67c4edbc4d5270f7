package takeover

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "okm-takeover-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "openkeel-magnum")
	build := exec.Command("go", "build", "-o", binary, "../../cmd/openkeel-magnum")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build openkeel-magnum: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needEnv returns the value of an environment variable naming an external
// service; it skips the test when unset, except in CI where it fails.
func needEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set (required when CI=true)", name)
		}
		t.Skipf("%s is not set", name)
	}
	return v
}

// specDir is ${OKM_SPEC_DIR:-../shared/spec}, a relative value being taken
// from the repository root.
func specDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("OKM_SPEC_DIR")
	if dir == "" {
		dir = "../shared/spec"
	}
	if !filepath.IsAbs(dir) {
		root, err := filepath.Abs(".")
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(root)
			if parent == root {
				t.Fatal("go.mod not found above the test directory")
			}
			root = parent
		}
		dir = filepath.Join(root, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "db", "sample-data-expected-responses.json")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("spec directory %s not found (set OKM_SPEC_DIR)", dir)
		}
		t.Skipf("spec directory %s not found (set OKM_SPEC_DIR)", dir)
	}
	return dir
}

func readSpec(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(specDir(t), "db", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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

// runBinary runs `openkeel-magnum <args...> --config-file conf` with a
// timeout and returns its combined output and exit code.
func runBinary(t *testing.T, conf string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append(args, "--config-file", conf)...)
	cmd.Dir = filepath.Dir(conf)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// writeConfig writes magnum.conf with an [api] section on a free port
// followed by text, and returns its path and the server's base URL.
func writeConfig(t *testing.T, text string) (conf, baseURL string) {
	t.Helper()
	port := freePort(t)
	conf = filepath.Join(t.TempDir(), "magnum.conf")
	full := fmt.Sprintf("[api]\nhost = 127.0.0.1\nport = %d\n\n%s\n", port, text)
	if err := os.WriteFile(conf, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf, fmt.Sprintf("http://127.0.0.1:%d", port)
}

// startAPI runs `openkeel-magnum api --config-file conf` until the test
// ends and waits for GET / to answer.
func startAPI(t *testing.T, conf, baseURL string) {
	t.Helper()
	cmd := exec.Command(binary, "api", "--config-file", conf)
	cmd.Dir = filepath.Dir(conf)
	out := &bytes.Buffer{}
	cmd.Stdout = out
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("server output:\n%s", out.String())
		}
	})
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.Get(baseURL + "/")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("server exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
