package certs

import (
	"bytes"
	"crypto/x509"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// specDir finds ${OKM_SPEC_DIR:-../shared/spec}, relative to the repository
// root. A test needing it skips when it is absent, and fails under CI.
func specDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatal("repository root (go.mod) not found")
		}
		root = parent
	}
	dir := os.Getenv("OKM_SPEC_DIR")
	if dir == "" {
		dir = "../shared/spec"
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("spec directory %s: %v", dir, err)
		}
		t.Skipf("spec directory %s not found (set OKM_SPEC_DIR)", dir)
	}
	return dir
}

// sampleKeyPair is one x509keypair row of the sample database.
type sampleKeyPair struct {
	ID         string
	UUID       string
	Cert       string
	Key        string
	Passphrase string
}

// sampleKeyPairs parses the x509keypair INSERTs of sample-data-mariadb.sql.
func sampleKeyPairs(t *testing.T) []sampleKeyPair {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(specDir(t), "db", "sample-data-mariadb.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var out []sampleKeyPair
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "INSERT INTO `x509keypair`") {
			continue
		}
		cols, vals, err := parseInsert(line)
		if err != nil {
			t.Fatalf("parse %.60s: %v", line, err)
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = vals[i]
		}
		out = append(out, sampleKeyPair{
			ID: row["id"], UUID: row["uuid"], Cert: row["certificate"],
			Key: row["private_key"], Passphrase: row["private_key_passphrase"],
		})
	}
	if len(out) == 0 {
		t.Fatal("no x509keypair rows in the sample data")
	}
	return out
}

// parseInsert splits a single-row MariaDB INSERT into column names and
// values (NULL becomes "", strings are unescaped).
func parseInsert(line string) (cols, vals []string, err error) {
	open := strings.Index(line, "(")
	closeCols := strings.Index(line, ") VALUES (")
	if open < 0 || closeCols < 0 {
		return nil, nil, errors.New("not a single-row INSERT")
	}
	for _, c := range strings.Split(line[open+1:closeCols], ",") {
		cols = append(cols, strings.Trim(strings.TrimSpace(c), "`"))
	}
	s := line[closeCols+len(") VALUES ("):]
	for len(s) > 0 {
		switch {
		case s[0] == '\'':
			var b strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '\''; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					switch s[i] {
					case 'n':
						b.WriteByte('\n')
					case 'r':
						b.WriteByte('\r')
					case 't':
						b.WriteByte('\t')
					case '0':
						b.WriteByte(0)
					default:
						b.WriteByte(s[i])
					}
					continue
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, nil, errors.New("unterminated string")
			}
			vals = append(vals, b.String())
			s = s[i+1:]
		default:
			end := strings.IndexAny(s, ",)")
			if end < 0 {
				return nil, nil, errors.New("unterminated value")
			}
			v := strings.TrimSpace(s[:end])
			if v == "NULL" {
				v = ""
			}
			vals = append(vals, v)
			s = s[end:]
		}
		if len(s) > 0 && s[0] == ',' {
			s = s[1:]
			continue
		}
		break
	}
	if len(cols) != len(vals) {
		return nil, nil, errors.New("column and value counts differ")
	}
	return cols, vals, nil
}

// fixedClock is a deterministic clock for certificate validity.
func fixedClock() time.Time { return time.Date(2026, 11, 30, 1, 48, 7, 500, time.UTC) }

func testOptions() X509Options {
	o := DefaultX509Options()
	o.Now = fixedClock
	return o
}

func mustCert(t testing.TB, p []byte) *x509.Certificate {
	t.Helper()
	kp := KeyPair{CertPEM: p}
	c, err := kp.Certificate()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// oraclePython returns a python with the cryptography package:
// $OPENKEEL_TEST_PYTHON, else the shared oracle venv. It skips when there is
// none, and fails under CI.
func oraclePython(t *testing.T) string {
	t.Helper()
	var candidates []string
	if p := os.Getenv("OPENKEEL_TEST_PYTHON"); p != "" {
		candidates = append(candidates, p)
	}
	cache := os.Getenv("OKM_CACHE")
	if cache == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(home, ".cache", "openkeel-magnum")
		}
	}
	if cache != "" {
		candidates = append(candidates, filepath.Join(cache, "venv-oracle", "bin", "python"))
	}
	for _, p := range candidates {
		cmd := exec.CommandContext(t.Context(), p, "-c", "import cryptography")
		if err := cmd.Run(); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no python with the cryptography package (set OPENKEEL_TEST_PYTHON)")
	}
	t.Skip("no python with the cryptography package (set OPENKEEL_TEST_PYTHON)")
	return ""
}

// runPython runs script with stdin and returns its stdout.
func runPython(t *testing.T, python, script string, stdin []byte) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), python, "-c", script)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	return out
}
