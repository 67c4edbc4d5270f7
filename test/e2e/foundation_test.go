package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// referenceDocument returns the body Magnum 23.0.0 answered for method+path
// in the recorded exchanges, with its host rewritten to base.
func referenceDocument(t *testing.T, path, base string) any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(specDir(t), "exchanges", "exchanges.json"))
	if err != nil {
		t.Fatal(err)
	}
	var records []struct {
		App     string `json:"app"`
		Request struct {
			Method string `json:"method"`
			Path   string `json:"path"`
		} `json:"request"`
		Response struct {
			Status int             `json:"status"`
			Body   json.RawMessage `json:"body"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &records); err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		if r.App == "magnum-app" && r.Request.Method == "GET" && r.Request.Path == path && r.Response.Status == 200 {
			text := strings.ReplaceAll(string(r.Response.Body), "http://localhost", base)
			var doc any
			if err := json.Unmarshal([]byte(text), &doc); err != nil {
				t.Fatal(err)
			}
			return doc
		}
	}
	t.Fatalf("no reference exchange for GET %s", path)
	return nil
}

func TestAllInOneServesRootAndVersionDocuments(t *testing.T) {
	s := startServer(t, "", "all-in-one")
	for _, tc := range []struct{ path, refPath string }{
		{"/", "/"},
		{"/v1", "/v1/"},
		{"/v1/", "/v1/"},
	} {
		status, header, body := get(t, s.URL+tc.path, nil)
		if status != 200 {
			t.Fatalf("GET %s: status %d: %s", tc.path, status, body)
		}
		if header.Get("X-Openstack-Request-Id") == "" {
			t.Errorf("GET %s: no x-openstack-request-id", tc.path)
		}
		var got any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("GET %s: %v: %s", tc.path, err, body)
		}
		want := referenceDocument(t, tc.refPath, s.URL)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GET %s differs from the reference:\n got %s\nwant %s", tc.path, body, mustJSON(want))
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestOpenStackCLIServiceListOnAllInOne(t *testing.T) {
	cli := needEnv(t, "OPENKEEL_TEST_OPENSTACK_CLI")
	s := startServer(t, "", "all-in-one")
	stdout, stderr, code := run(t, 2*time.Minute, nil, cli,
		"--os-auth-type", "none", "--os-endpoint", s.URL+"/v1", "coe", "service", "list", "-f", "json")
	if code != 0 {
		t.Fatalf("openstack coe service list: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	found := false
	for _, r := range rows {
		if r["binary"] == "magnum-conductor" && r["state"] == "up" {
			found = true
		}
	}
	if !found {
		t.Errorf("no magnum-conductor in state up in %s", stdout)
	}
}

func TestStartupErrorsAreOneLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		conf string
		args []string
		want string
	}{
		{
			name: "malformed config file",
			conf: write("bad.conf", "[api]\nport = 9511\nthis line is not an option\n"),
			args: []string{"api"},
			want: "bad.conf:3",
		},
		{
			name: "wrong option value",
			conf: write("badvalue.conf", "[api]\nport = abc\n"),
			args: []string{"api"},
			want: "[api]/port",
		},
		{
			name: "unreachable database",
			conf: write("nodb.conf", "[DEFAULT]\nauth_strategy = noauth\n[database]\nconnection = mysql+pymysql://magnum:secretpw@127.0.0.1:1/magnum\n"),
			args: []string{"api"},
			want: "127.0.0.1:1",
		},
		{
			name: "unreachable keystone",
			conf: write("noks.conf", "[database]\nconnection = sqlite:///"+filepath.Join(dir, "ks.db")+"\n"+
				"[keystone_authtoken]\nauth_url = http://127.0.0.1:1/v3\nwww_authenticate_uri = http://127.0.0.1:1/v3\n"+
				"auth_type = password\nusername = magnum\npassword = secretpw\nproject_name = service\n"+
				"user_domain_name = Default\nproject_domain_name = Default\n"),
			args: []string{"api"},
			want: "127.0.0.1:1",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "unreachable keystone" {
				// The schema must exist so that the failure is Keystone's.
				_, stderr, code := run(t, time.Minute, nil, binary, "db", "upgrade", "--config-file", tc.conf)
				if code != 0 {
					t.Fatalf("db upgrade: %s", stderr)
				}
			}
			args := append(append([]string{}, tc.args...), "--config-file", tc.conf)
			stdout, stderr, code := run(t, time.Minute, nil, binary, args...)
			if code == 0 {
				t.Fatalf("exit 0, want failure; stdout %s", stdout)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, tc.want) {
				t.Errorf("last stderr line %q does not name %q (stderr: %s)", last, tc.want, stderr)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace in stderr: %s", stderr)
			}
			if strings.Contains(stderr, "secretpw") {
				t.Errorf("password leaked in stderr: %s", stderr)
			}
		})
	}
}
