package clients

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenStackSDKFunctional runs openstacksdk's functional tests for
// Magnum (openstack.tests.functional.cloud.test_coe: cluster template CRUD
// through the cloud layer, and the magnum services list), unmodified from
// the installed wheel, with the four clouds they expect pointing at Keystone
// and the region okm-clients.
func TestOpenStackSDKFunctional(t *testing.T) {
	python := needEnv(t, "OPENKEEL_TEST_SDK_PYTHON")
	s := newStack(t)
	home := t.TempDir()
	cloud := func(name, user, project string, system bool) string {
		scope := fmt.Sprintf("      project_name: %s\n      project_domain_name: Default\n", project)
		if system {
			scope = "      system_scope: all\n"
		}
		return fmt.Sprintf(`  %s:
    auth:
      auth_url: %s
      username: %s
      password: %s
      user_domain_name: Default
%s    region_name: %s
    interface: public
    identity_api_version: 3
`, name, s.id.URL, user, s.id.Passwords[user], scope, region)
	}
	yaml := "clouds:\n" + cloud("devstack", "demo", "demo", false) + cloud("devstack-alt", "alt", "alt", false) +
		cloud("devstack-admin", "admin", "admin", false) + cloud("devstack-system-admin", "admin", "", true)
	cfg := filepath.Join(home, "clouds.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	mark := s.rec.mark()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-rA",
		"--pyargs", "openstack.tests.functional.cloud.test_coe")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"OS_CLIENT_CONFIG_FILE=" + cfg, "OPENSTACKSDK_FUNC_TEST_TIMEOUT=120"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	for _, name := range []string{"TestClusterTemplate::test_cluster_templates", "TestMagnumServices::test_magnum_services"} {
		ok := strings.Contains(text, name+" PASSED")
		if !ok {
			t.Errorf("%s did not pass", name)
		}
		tally(t, 1, ok)
	}
	if err != nil || t.Failed() {
		t.Errorf("pytest: %v\n%s", err, tail(text, 20000))
		t.Logf("HTTP exchanges with the service:\n%s", tail(s.rec.since(mark), 20000))
	}
}
