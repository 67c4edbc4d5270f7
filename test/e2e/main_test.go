package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "okm-e2e-bin")
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

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// server is one running openkeel-magnum process.
type server struct {
	URL    string
	cmd    *exec.Cmd
	output *bytes.Buffer
}

// startServer runs `openkeel-magnum <args...> --config-file <conf>` where
// conf holds confText plus the [api] port, and waits for GET / to answer.
func startServer(t *testing.T, confText string, args ...string) *server {
	t.Helper()
	port := freePort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "magnum.conf")
	text := fmt.Sprintf("[api]\nhost = 127.0.0.1\nport = %d\n\n%s\n", port, confText)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	full := append([]string{}, args...)
	full = append(full, "--config-file", conf)
	cmd := exec.Command(binary, full...)
	cmd.Dir = dir
	out := &bytes.Buffer{}
	cmd.Stdout = out
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, output: out}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/")
		if err == nil {
			resp.Body.Close()
			return s
		}
		if cmd.ProcessState != nil || time.Now().After(deadline) {
			t.Fatalf("server did not start: %v\n%s", err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// run executes a command with a timeout and returns stdout, stderr and the
// exit code.
func run(t *testing.T, timeout time.Duration, env []string, name string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			t.Fatalf("run %s: %v", name, err)
		}
	}
	return stdout.String(), stderr.String(), code
}

func get(t *testing.T, url string, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

func specDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("OKM_SPEC_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "spec")
}

func oneLineCount(s string) int { return len(strings.Split(strings.TrimSpace(s), "\n")) }
