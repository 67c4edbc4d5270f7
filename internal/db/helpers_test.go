package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// dialects returns the dialects to test: SQLite always, MariaDB and
// PostgreSQL when their DSN variable is set.
func dialects(t *testing.T) []string {
	out := []string{DialectSQLite}
	for _, d := range []struct{ name, env string }{
		{DialectMySQL, "OPENKEEL_TEST_MYSQL_DSN"},
		{DialectPostgres, "OPENKEEL_TEST_POSTGRES_DSN"},
	} {
		if os.Getenv(d.env) != "" {
			out = append(out, d.name)
		} else if os.Getenv("CI") == "true" {
			t.Errorf("%s is not set (required when CI=true)", d.env)
		} else {
			t.Logf("%s not set: skipping %s", d.env, d.name)
		}
	}
	return out
}

// forEachDialect runs fn as a parallel subtest per dialect.
func forEachDialect(t *testing.T, fn func(t *testing.T, dialect string)) {
	t.Helper()
	for _, d := range dialects(t) {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			fn(t, d)
		})
	}
}

// requireDialect skips (or fails on CI) unless dialect is available.
func requireDialect(t *testing.T, dialect string) {
	t.Helper()
	env := map[string]string{DialectMySQL: "OPENKEEL_TEST_MYSQL_DSN", DialectPostgres: "OPENKEEL_TEST_POSTGRES_DSN"}[dialect]
	if env != "" && os.Getenv(env) == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set (required when CI=true)", env)
		}
		t.Skipf("%s not set", env)
	}
}

func randomName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "okm_test_" + hex.EncodeToString(b)
}

// freshDSN creates an empty database for the test and returns its DSN; the
// database is dropped when the test ends.
func freshDSN(t testing.TB, dialect string) string {
	t.Helper()
	ctx := context.Background()
	name := randomName()
	switch dialect {
	case DialectSQLite:
		return filepath.Join(t.TempDir(), name+".db")
	case DialectMySQL:
		cfg, err := mysql.ParseDSN(os.Getenv("OPENKEEL_TEST_MYSQL_DSN"))
		if err != nil {
			t.Fatal(err)
		}
		admin, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
			t.Fatalf("create database: %v", err)
		}
		t.Cleanup(func() {
			if _, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name); err != nil {
				t.Errorf("drop database %s: %v", name, err)
			}
			admin.Close()
		})
		cfg.DBName = name
		return cfg.FormatDSN()
	case DialectPostgres:
		base := os.Getenv("OPENKEEL_TEST_POSTGRES_DSN")
		admin, err := sql.Open("pgx", base)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatalf("create database: %v", err)
		}
		t.Cleanup(func() {
			if _, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
				t.Errorf("drop database %s: %v", name, err)
			}
			admin.Close()
		})
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		return u.String()
	}
	t.Fatalf("unknown dialect %s", dialect)
	return ""
}

// openFresh opens an empty database of the dialect.
func openFresh(t *testing.T, dialect string, opts Options) *DB {
	t.Helper()
	db, err := Open(t.Context(), dialect, freshDSN(t, dialect), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openMigrated opens an empty database and upgrades it to our schema.
func openMigrated(t *testing.T, dialect string) *DB {
	t.Helper()
	db := openFresh(t, dialect, Options{})
	if err := db.Upgrade(t.Context()); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	return db
}

// specDir is ${OKM_SPEC_DIR:-../shared/spec}, relative to the repository
// root.
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
	if _, err := os.Stat(filepath.Join(dir, "db")); err != nil {
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

// execScript runs a dump file statement by statement (a statement ends with
// ";" at the end of a line; dumps write one INSERT per line). All statements
// run on one connection so that session settings hold.
func execScript(t *testing.T, db *DB, script string, skip func(stmt string) bool) {
	t.Helper()
	ctx := t.Context()
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range splitSQL(script) {
		if skip != nil && skip(s) {
			continue
		}
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("exec %.200s: %v", s, err)
		}
	}
}

// pgSpecSkip drops the statements of a pg_dump that need psql or a role we
// do not have.
func pgSpecSkip(s string) bool {
	return strings.HasPrefix(s, "SET ") || strings.HasPrefix(s, "SELECT pg_catalog.set_config") || strings.Contains(s, "OWNER TO")
}

var insertLine = regexp.MustCompile("^INSERT INTO `(\\w+)` \\(([^)]*)\\) VALUES \\((.*)\\);$")

// loadSampleRows inserts the rows of sample-data-mariadb.sql through
// parameterized statements, so that they load into any dialect (booleans
// and timestamps converted to the dialect's types).
func loadSampleRows(t *testing.T, db *DB) {
	t.Helper()
	expected, err := ExpectedColumns()
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for tbl, cols := range expected {
		for _, c := range cols {
			types[tbl+"."+c.Name] = c.Type
		}
	}
	types["alembic_version.version_num"] = "varchar(32)"
	n := 0
	for _, line := range strings.Split(readSpec(t, "sample-data-mariadb.sql"), "\n") {
		m := insertLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		tbl := m[1]
		cols := strings.Split(strings.ReplaceAll(m[2], "`", ""), ", ")
		vals, err := parseMySQLValues(m[3])
		if err != nil {
			t.Fatalf("parse %s row: %v", tbl, err)
		}
		if len(vals) != len(cols) {
			t.Fatalf("%s: %d columns, %d values", tbl, len(cols), len(vals))
		}
		for i, c := range cols {
			if vals[i] == nil {
				continue
			}
			switch types[tbl+"."+c] {
			case "bool":
				vals[i] = vals[i] != "0"
			case "int":
				vals[i], _ = strconv.ParseInt(vals[i].(string), 10, 64)
			case "datetime":
				tm, err := time.Parse("2006-01-02 15:04:05", vals[i].(string))
				if err != nil {
					t.Fatal(err)
				}
				vals[i] = db.d.timeValue(tm)
			}
		}
		q := "INSERT INTO " + quote(tbl) + " (" + strings.Join(quoteAll(cols), ", ") + ") VALUES (" +
			strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
		if _, err := db.SQL().ExecContext(t.Context(), db.d.rebind(q), vals...); err != nil {
			t.Fatalf("insert %s: %v", tbl, err)
		}
		n++
	}
	if n != 28 {
		t.Fatalf("loaded %d sample rows, want 28", n)
	}
	if db.d.name == DialectPostgres {
		// Explicit ids do not move the sequences; Magnum's own inserts did.
		for _, tbl := range MagnumTables {
			q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', 'id'), COALESCE((SELECT MAX(id) FROM %s), 0) + 1, false)", tbl, tbl)
			if _, err := db.SQL().ExecContext(t.Context(), q); err != nil {
				t.Fatalf("setval %s: %v", tbl, err)
			}
		}
	}
}

// parseMySQLValues parses the value list of a mysqldump INSERT: NULL,
// numbers (returned as strings) and quoted strings with backslash escapes.
func parseMySQLValues(s string) ([]any, error) {
	var out []any
	i := 0
	for i < len(s) {
		switch {
		case strings.HasPrefix(s[i:], "NULL"):
			out = append(out, nil)
			i += 4
		case s[i] == '\'':
			var b strings.Builder
			i++
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
					case 'Z':
						b.WriteByte(26)
					default:
						b.WriteByte(s[i])
					}
					continue
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated string")
			}
			i++
			out = append(out, b.String())
		default:
			j := i
			for j < len(s) && s[j] != ',' {
				j++
			}
			out = append(out, strings.TrimSpace(s[i:j]))
			i = j
		}
		if i < len(s) {
			if s[i] != ',' {
				return nil, fmt.Errorf("expected ',' at %d in %.40q", i, s[i:])
			}
			i++
		}
	}
	return out, nil
}

// tableDigest returns every row of every Magnum table (and
// alembic_version) rendered as text, ordered by id: equal digests mean
// byte-identical rows.
func tableDigest(t *testing.T, db *DB) map[string]string {
	t.Helper()
	expected, err := ExpectedColumns()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tbl := range append([]string{"alembic_version"}, MagnumTables...) {
		cols := []string{"version_num"}
		order := "version_num"
		if tbl != "alembic_version" {
			cols = nil
			for _, c := range expected[tbl] {
				cols = append(cols, c.Name)
			}
			order = "id"
		}
		rows, err := db.SQL().QueryContext(t.Context(), db.d.rebind("SELECT "+strings.Join(quoteAll(cols), ", ")+" FROM "+quote(tbl)+" ORDER BY "+order))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%#v|", v)
			}
			b.WriteByte('\n')
		}
		rows.Close()
		out[tbl] = b.String()
	}
	return out
}
