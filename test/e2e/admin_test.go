package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAdminCommands runs the database, driver and status commands the way
// an operator would, on a SQLite database.
func TestAdminCommands(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "magnum.conf")
	text := "[database]\nconnection = sqlite:///" + filepath.Join(dir, "m.db") + "\n" +
		"[drivers]\nenabled_beta_drivers = fake\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := func(args ...string) (string, string, int) {
		t.Helper()
		return run(t, time.Minute, nil, binary, append(args, "--config-file", conf)...)
	}

	// Before the schema exists, the upgrade check fails and says why.
	stdout, _, code := cmd("status", "upgrade-check")
	if code != 2 || !strings.Contains(stdout, "Result: Failure") || !strings.Contains(stdout, "db upgrade") {
		t.Errorf("upgrade-check on an empty database: exit %d\n%s", code, stdout)
	}

	if stdout, stderr, code := cmd("db", "upgrade"); code != 0 || !strings.Contains(stdout, "version 2") {
		t.Fatalf("db upgrade: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, code = cmd("db", "version")
	if code != 0 || !strings.Contains(stdout, "Current DB revision is b3e1cf4a2d5e") {
		t.Errorf("db version: exit %d\n%s", code, stdout)
	}
	// A second upgrade is a no-op.
	if _, stderr, code := cmd("db", "upgrade"); code != 0 {
		t.Errorf("second db upgrade: exit %d: %s", code, stderr)
	}

	stdout, _, code = cmd("status", "upgrade-check")
	if code != 0 || strings.Contains(stdout, "Failure") || !strings.Contains(stdout, "| Check: Database Schema") {
		t.Errorf("upgrade-check: exit %d\n%s", code, stdout)
	}

	stdout, _, code = cmd("driver", "list")
	if code != 0 || !strings.Contains(stdout, "| Name |") || !strings.Contains(stdout, "| fake |") {
		t.Errorf("driver list: exit %d\n%s", code, stdout)
	}
	stdout, _, code = cmd("driver", "list", "--details")
	if code != 0 || !strings.Contains(stdout, "| Server_Type | OS") ||
		!strings.Contains(stdout, "| fake | vm          | ubuntu") {
		t.Errorf("driver list --details: exit %d\n%s", code, stdout)
	}

	// Our own schema is Magnum's at b3e1cf4a2d5e: adopting it again is a
	// no-op that succeeds.
	if stdout, stderr, code := cmd("db", "adopt"); code != 0 || !strings.Contains(stdout, "adopted") {
		t.Errorf("db adopt on an openkeel database: exit %d\n%s%s", code, stdout, stderr)
	}

	// Another Alembic head is refused with a one-line message naming it.
	other := filepath.Join(dir, "other.conf")
	if err := os.WriteFile(other, []byte("[database]\nconnection = sqlite:///"+filepath.Join(dir, "m.db")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sqlite := func(q string) {
		t.Helper()
		if _, stderr, code := run(t, time.Minute, nil, "python3", "-c",
			"import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()",
			filepath.Join(dir, "m.db"), q); code != 0 {
			t.Fatalf("sqlite3: %s", stderr)
		}
	}
	sqlite("DELETE FROM openkeel_schema_version")
	sqlite("UPDATE alembic_version SET version_num = 'abc123'")
	_, stderr, code := run(t, time.Minute, nil, binary, "db", "adopt", "--config-file", other)
	if code == 0 || !strings.Contains(stderr, "abc123") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("db adopt at another head: exit %d, stderr %q", code, stderr)
	}
}
