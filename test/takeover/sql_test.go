package takeover

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/openkeel/openkeel-magnum/internal/db"
)

// splitStatements splits an SQL script into statements at the semicolons
// that are outside quoted strings ('…', "…", `…`, with backslash escapes in
// '…' and "…" as MariaDB reads them) and outside comments. "-- " line
// comments and plain /* */ comments are dropped; MariaDB's executable
// comments (/*!NNNNN … */) are kept, since they are statements.
func splitStatements(script string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(script) {
				if script[j] == '\\' && c != '`' {
					j += 2
					continue
				}
				if script[j] == c {
					if j+1 < len(script) && script[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(script) {
				j = len(script) - 1
			}
			cur.WriteString(script[i : j+1])
			i = j
		case c == '-' && strings.HasPrefix(script[i:], "--") &&
			(i+2 == len(script) || script[i+2] == ' ' || script[i+2] == '\t' || script[i+2] == '\n' || script[i+2] == '\r'):
			j := strings.IndexByte(script[i:], '\n')
			if j < 0 {
				i = len(script)
			} else {
				i += j
				cur.WriteByte('\n')
			}
		case c == '/' && strings.HasPrefix(script[i:], "/*"):
			j := strings.Index(script[i+2:], "*/")
			end := len(script)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			if strings.HasPrefix(script[i:], "/*!") {
				cur.WriteString(script[i:end])
			} else {
				cur.WriteByte(' ')
			}
			i = end - 1
		case c == ';':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

func TestSplitStatements(t *testing.T) {
	script := "-- comment; not a statement\n" +
		"/*!40101 SET NAMES utf8mb4 */;\n" +
		"/* plain; comment */ CREATE TABLE `a;b` (x int);\n" +
		"INSERT INTO `t` VALUES ('it''s; fine','back\\'slash;',\"dq;\");\n" +
		"SELECT 1--2\n;\n" +
		"SELECT 'trailing'"
	got := splitStatements(script)
	want := []string{
		"/*!40101 SET NAMES utf8mb4 */",
		"CREATE TABLE `a;b` (x int)",
		"INSERT INTO `t` VALUES ('it''s; fine','back\\'slash;',\"dq;\")",
		"SELECT 1--2",
		"SELECT 'trailing'",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("splitStatements (-want +got):\n%s", diff)
	}
}

func TestSplitSpecFiles(t *testing.T) {
	for name, want := range map[string]int{"sample-data-mariadb.sql": 28} {
		n := 0
		for _, s := range splitStatements(readSpec(t, name)) {
			if strings.HasPrefix(s, "INSERT INTO") {
				n++
			}
		}
		if n != want {
			t.Errorf("%s: %d INSERT statements, want %d", name, n, want)
		}
	}
	n := 0
	for _, s := range splitStatements(readSpec(t, "schema-mariadb.sql")) {
		if strings.HasPrefix(s, "CREATE TABLE") {
			n++
		}
	}
	if n != 8 {
		t.Errorf("schema-mariadb.sql: %d CREATE TABLE, want 8", n)
	}
}

func randomName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "okm_takeover_" + hex.EncodeToString(b)
}

// freshMySQL creates an empty database on the MariaDB of
// OPENKEEL_TEST_MYSQL_DSN, dropped when the test ends. It returns a
// connection to it and the SQLAlchemy URL Magnum's configuration would
// name it with.
func freshMySQL(t *testing.T) (*sql.DB, string) {
	t.Helper()
	cfg, err := mysql.ParseDSN(needEnv(t, "OPENKEEL_TEST_MYSQL_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	name := randomName()
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
		admin.Close()
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		admin.Close()
	})
	cfg.DBName = name
	conn, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	u := url.URL{Scheme: "mysql+pymysql", Host: cfg.Addr, Path: "/" + name, RawQuery: "charset=utf8mb4"}
	if cfg.Passwd != "" {
		u.User = url.UserPassword(cfg.User, cfg.Passwd)
	} else {
		u.User = url.User(cfg.User)
	}
	return conn, u.String()
}

// freshPostgres creates an empty database on the PostgreSQL of
// OPENKEEL_TEST_POSTGRES_DSN, dropped when the test ends, and returns a
// connection and its SQLAlchemy URL.
func freshPostgres(t *testing.T) (*sql.DB, string) {
	t.Helper()
	base := needEnv(t, "OPENKEEL_TEST_POSTGRES_DSN")
	name := randomName()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	conn, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	u.Scheme = "postgresql+psycopg2"
	return conn, u.String()
}

// execScript runs every statement of script on one connection (so that
// the dump's session settings hold); skip drops statements.
func execScript(t *testing.T, d *sql.DB, script string, skip func(string) bool) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := d.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := 0
	for _, s := range splitStatements(script) {
		if skip != nil && skip(s) {
			continue
		}
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("exec %.200s: %v", s, err)
		}
		n++
	}
	return n
}

var insertStmt = regexp.MustCompile("(?s)^INSERT INTO `(\\w+)` \\(([^)]*)\\) VALUES \\((.*)\\)$")

// loadSampleRowsPostgres inserts the rows of sample-data-mariadb.sql into
// a PostgreSQL database through parameterized statements, booleans and
// integers converted from MariaDB's notation, then moves the id sequences
// past the rows as Magnum's own inserts would have.
func loadSampleRowsPostgres(t *testing.T, d *sql.DB) {
	t.Helper()
	expected, err := db.ExpectedColumns()
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{"alembic_version.version_num": "varchar(32)"}
	for tbl, cols := range expected {
		for _, c := range cols {
			types[tbl+"."+c.Name] = c.Type
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := 0
	for _, s := range splitStatements(readSpec(t, "sample-data-mariadb.sql")) {
		m := insertStmt.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		tbl := m[1]
		cols := strings.Split(strings.ReplaceAll(m[2], "`", ""), ", ")
		vals, err := parseValues(m[3])
		if err != nil {
			t.Fatalf("parse a %s row: %v", tbl, err)
		}
		if len(vals) != len(cols) {
			t.Fatalf("%s: %d columns, %d values", tbl, len(cols), len(vals))
		}
		ph := make([]string, len(cols))
		for i, c := range cols {
			ph[i] = "$" + strconv.Itoa(i+1)
			if vals[i] == nil {
				continue
			}
			switch types[tbl+"."+c] {
			case "bool":
				vals[i] = vals[i] != "0"
			case "int":
				if vals[i], err = strconv.ParseInt(vals[i].(string), 10, 64); err != nil {
					t.Fatalf("%s.%s: %v", tbl, c, err)
				}
			}
		}
		q := fmt.Sprintf(`INSERT INTO %q (%s) VALUES (%s)`, tbl, `"`+strings.Join(cols, `", "`)+`"`, strings.Join(ph, ", "))
		if _, err := d.ExecContext(ctx, q, vals...); err != nil {
			t.Fatalf("insert into %s: %v", tbl, err)
		}
		n++
	}
	if n != 28 {
		t.Fatalf("loaded %d sample rows, want 28", n)
	}
	for _, tbl := range db.MagnumTables {
		q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', 'id'), COALESCE((SELECT MAX(id) FROM %q), 0) + 1, false)", tbl, tbl)
		if _, err := d.ExecContext(ctx, q); err != nil {
			t.Fatalf("setval %s: %v", tbl, err)
		}
	}
}

// parseValues parses the value list of a mysqldump INSERT: NULL, numbers
// (kept as strings) and quoted strings with MariaDB's backslash escapes.
func parseValues(s string) ([]any, error) {
	var out []any
	i := 0
	for i < len(s) {
		switch {
		case strings.HasPrefix(s[i:], "NULL"):
			out = append(out, nil)
			i += 4
		case s[i] == '\'':
			var b strings.Builder
			for i++; i < len(s); i++ {
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						b.WriteByte('\'')
						i++
						continue
					}
					break
				}
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
					case 'b':
						b.WriteByte('\b')
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
			j := strings.IndexByte(s[i:], ',')
			if j < 0 {
				j = len(s) - i
			}
			out = append(out, strings.TrimSpace(s[i:i+j]))
			i += j
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

// tableState is what a table holds: its definition and its rows, rendered
// as text.
type tableState struct {
	DDL  string
	Rows string
	Sum  string
}

// snapshot captures the named tables (or every table when names is nil):
// the DDL as the server prints it, every row rendered byte for byte in a
// total order, a SHA-256 over both and, on MariaDB, CHECKSUM TABLE.
func snapshot(t *testing.T, d *sql.DB, dialect string, names []string) map[string]tableState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if names == nil {
		q := "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1"
		if dialect == "postgresql" {
			q = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
		}
		rows, err := d.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]tableState{}
	for _, tbl := range names {
		var st tableState
		quoted := "`" + tbl + "`"
		switch dialect {
		case "mysql":
			var name, ddl, sum string
			if err := d.QueryRowContext(ctx, "SHOW CREATE TABLE "+quoted).Scan(&name, &ddl); err != nil {
				t.Fatalf("show create table %s: %v", tbl, err)
			}
			var ck sql.NullString
			if err := d.QueryRowContext(ctx, "CHECKSUM TABLE "+quoted+" EXTENDED").Scan(&name, &ck); err != nil {
				t.Fatalf("checksum table %s: %v", tbl, err)
			}
			sum = ck.String
			// AUTO_INCREMENT=N in the DDL is the next id, part of the state.
			st.DDL = ddl + "\nCHECKSUM " + sum
		case "postgresql":
			quoted = `"` + tbl + `"`
			rows, err := d.QueryContext(ctx, `SELECT column_name, data_type, COALESCE(character_maximum_length, 0),
				is_nullable, COALESCE(column_default, '') FROM information_schema.columns
				WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`, tbl)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for rows.Next() {
				var name, typ, null, def string
				var n int
				if err := rows.Scan(&name, &typ, &n, &null, &def); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "%s %s(%d) null=%s default=%s\n", name, typ, n, null, def)
			}
			rows.Close()
			irows, err := d.QueryContext(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1 ORDER BY indexname`, tbl)
			if err != nil {
				t.Fatal(err)
			}
			for irows.Next() {
				var def string
				if err := irows.Scan(&def); err != nil {
					t.Fatal(err)
				}
				b.WriteString(def + "\n")
			}
			irows.Close()
			st.DDL = b.String()
		}
		rows, err := d.QueryContext(ctx, "SELECT * FROM "+quoted)
		if err != nil {
			t.Fatalf("read %s: %v", tbl, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%s=%#v|", cols[i], v)
			}
			lines = append(lines, b.String())
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		slices.Sort(lines)
		st.Rows = strings.Join(lines, "\n")
		st.Sum = stateSum(st)
		out[tbl] = st
	}
	return out
}

// stateSum is the SHA-256 over a table's definition and rows.
func stateSum(st tableState) string {
	h := sha256.Sum256([]byte(st.DDL + "\x00" + st.Rows))
	return hex.EncodeToString(h[:])
}

// ourIndexes are the indexes openkeel-magnum adds to Magnum's schema
// (migrations after version 1, docs/compatibility.md), by table.
var ourIndexes = map[string]string{"cluster": "okm_cluster0project_id"}

// withoutOurIndexes is a snapshot as it would read without ourIndexes: it
// fails the test when one of them is missing, and drops their lines from
// the definitions (SHOW CREATE TABLE's, or pg_indexes').
func withoutOurIndexes(t *testing.T, snap map[string]tableState) map[string]tableState {
	t.Helper()
	out := map[string]tableState{}
	for tbl, st := range snap {
		if idx, ok := ourIndexes[tbl]; ok {
			if !strings.Contains(st.DDL, idx) {
				t.Errorf("table %s has no index %s:\n%s", tbl, idx, st.DDL)
			}
			var keep []string
			for _, line := range strings.Split(st.DDL, "\n") {
				if !strings.Contains(line, idx) {
					keep = append(keep, line)
				}
			}
			// MariaDB: the key list's last line loses its comma.
			st.DDL = strings.ReplaceAll(strings.Join(keep, "\n"), ",\n)", "\n)")
			st.Sum = stateSum(st)
		}
		out[tbl] = st
	}
	return out
}

// compareSnapshots reports every table of before whose state changed in
// after.
func compareSnapshots(t *testing.T, what string, before, after map[string]tableState) {
	t.Helper()
	for tbl, b := range before {
		a, ok := after[tbl]
		if !ok {
			t.Errorf("%s: table %s disappeared", what, tbl)
			continue
		}
		if a.Sum != b.Sum {
			t.Errorf("%s: table %s changed (sha256 %s -> %s):\n%s", what, tbl, b.Sum, a.Sum, cmp.Diff(b, a))
		}
	}
}
