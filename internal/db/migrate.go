package db

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// AlembicHead is the Alembic revision of Magnum 23.0.0 whose schema is our
// version 1.
const AlembicHead = "b3e1cf4a2d5e"

// versionTable records our migrations; alembic_version stays Magnum's.
const versionTable = "openkeel_schema_version"

// MagnumTables are the tables of Magnum's schema (alembic_version aside).
var MagnumTables = []string{"cluster", "cluster_template", "federation", "magnum_service", "nodegroup", "quotas", "x509keypair"}

//go:embed migrations
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	stmts   []string
}

var migrationName = regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.sql$`)

// migrations returns the embedded migrations of a dialect, in order.
func migrations(dialectName string) ([]migration, error) {
	dir := "migrations/" + dialectName
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(migrationFS, dir+"/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		out = append(out, migration{version: v, name: e.Name(), stmts: splitSQL(string(body))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// splitSQL splits a migration file into statements: a statement ends with a
// ";" at the end of a line; "--" comment lines are dropped.
func splitSQL(s string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(t, ";") {
			stmt := strings.TrimSpace(cur.String())
			out = append(out, strings.TrimSuffix(stmt, ";"))
			cur.Reset()
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		out = append(out, rest)
	}
	return out
}

// LatestVersion is the highest migration version this build knows.
func LatestVersion() int {
	ms, _ := migrations(DialectSQLite)
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

func (db *DB) tableExists(ctx context.Context, name string) (bool, error) {
	q := db.d.tableExistsSQL()
	var n int
	if err := db.read.QueryRowContext(ctx, db.d.rebind(q), name).Scan(&n); err != nil {
		return false, fmt.Errorf("look for table %s: %w", name, err)
	}
	return n > 0, nil
}

// Version returns our schema version (0 when the database has none) and
// Magnum's Alembic revision ("" when there is no alembic_version table).
func (db *DB) Version(ctx context.Context) (ours int, alembic string, err error) {
	ok, err := db.tableExists(ctx, versionTable)
	if err != nil {
		return 0, "", err
	}
	if ok {
		var v *int
		if err := db.read.QueryRowContext(ctx, "SELECT MAX(version) FROM "+versionTable).Scan(&v); err != nil {
			return 0, "", fmt.Errorf("read schema version: %w", err)
		}
		if v != nil {
			ours = *v
		}
	}
	alembic, err = db.alembicRevision(ctx)
	return ours, alembic, err
}

func (db *DB) alembicRevision(ctx context.Context) (string, error) {
	ok, err := db.tableExists(ctx, "alembic_version")
	if err != nil || !ok {
		return "", err
	}
	rows, err := db.read.QueryContext(ctx, "SELECT version_num FROM alembic_version")
	if err != nil {
		return "", fmt.Errorf("read alembic_version: %w", err)
	}
	defer rows.Close()
	var revs []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return "", fmt.Errorf("read alembic_version: %w", err)
		}
		revs = append(revs, r)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read alembic_version: %w", err)
	}
	// Several rows mean several heads (a branched history): report them all.
	return strings.Join(revs, ","), nil
}

func (db *DB) hasMagnumTables(ctx context.Context) (bool, error) {
	for _, t := range append([]string{"alembic_version"}, MagnumTables...) {
		ok, err := db.tableExists(ctx, t)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// Upgrade creates the schema on an empty database, or applies the
// migrations newer than the recorded version. A Magnum database that was
// never adopted is refused (run Adopt first).
func (db *DB) Upgrade(ctx context.Context) error {
	ours, alembic, err := db.Version(ctx)
	if err != nil {
		return err
	}
	if ours == 0 {
		magnum, err := db.hasMagnumTables(ctx)
		if err != nil {
			return err
		}
		if magnum {
			rev := alembic
			if rev == "" {
				rev = "none"
			}
			return fmt.Errorf("the database already holds a Magnum schema (Alembic revision %s): take it over with db adopt instead of db upgrade", rev)
		}
	}
	ms, err := migrations(db.d.name)
	if err != nil {
		return err
	}
	if len(ms) > 0 && ours > ms[len(ms)-1].version {
		return fmt.Errorf("database schema version %d is newer than this build knows (%d): upgrade openkeel-magnum", ours, ms[len(ms)-1].version)
	}
	if _, err := db.write.ExecContext(ctx, db.d.versionTableDDL()); err != nil {
		return fmt.Errorf("create %s: %w", versionTable, err)
	}
	for _, m := range ms {
		if m.version <= ours {
			continue
		}
		if err := db.apply(ctx, m.version, m.name, m.stmts); err != nil {
			return err
		}
	}
	return nil
}

// apply runs statements and records version. PostgreSQL and SQLite run
// DDL in the transaction; MariaDB commits each DDL statement implicitly, so
// a failure there leaves the statements before it applied (the error says
// which one failed).
func (db *DB) apply(ctx context.Context, version int, name string, stmts []string) error {
	return db.InTx(ctx, func(tx *Tx) error {
		for i, s := range stmts {
			if _, err := tx.tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("migration %s, statement %d: %w", name, i+1, err)
			}
		}
		_, err := tx.tx.ExecContext(ctx, db.d.rebind("INSERT INTO "+versionTable+" (version, applied_at) VALUES (?, ?)"),
			version, db.d.timeValue(db.now()))
		if err != nil {
			return fmt.Errorf("record schema version %d: %w", version, err)
		}
		return nil
	})
}

// ErrAlembicRevision is wrapped by Adopt when the database is not at
// AlembicHead.
var ErrAlembicRevision = errors.New("unexpected Alembic revision")

// Adopt takes over a database created and migrated by Python Magnum: it
// checks that alembic_version is AlembicHead and that every Magnum table
// has the columns we expect, records our version 1 (Magnum's schema), then
// applies our later migrations, which only add indexes. It changes no row
// of Magnum's tables. Adopting an adopted database applies what is missing
// of our migrations, if anything.
func (db *DB) Adopt(ctx context.Context) error {
	ours, alembic, err := db.Version(ctx)
	if err != nil {
		return err
	}
	if ours >= 1 {
		return db.Upgrade(ctx)
	}
	if alembic == "" {
		magnum, err := db.hasMagnumTables(ctx)
		if err != nil {
			return err
		}
		if !magnum {
			return errors.New("the database is empty: there is no Magnum schema to adopt, create one with db upgrade")
		}
		return errors.New("the database has Magnum tables but no Alembic revision: upgrade it with magnum-db-manage upgrade (Magnum 23.0.0) first, then run db adopt")
	}
	if alembic != AlembicHead {
		return fmt.Errorf("%w: database is at Alembic revision %s, expected %s: upgrade it with magnum-db-manage upgrade (Magnum 23.0.0) first, then run db adopt",
			ErrAlembicRevision, alembic, AlembicHead)
	}
	if err := db.checkColumns(ctx); err != nil {
		return err
	}
	if _, err := db.write.ExecContext(ctx, db.d.versionTableDDL()); err != nil {
		return fmt.Errorf("create %s: %w", versionTable, err)
	}
	if err := db.apply(ctx, 1, "adopt", nil); err != nil {
		return err
	}
	return db.Upgrade(ctx)
}

// Column is one column of a table in a dialect-neutral form.
type Column struct {
	Name string
	// Type is "int", "varchar(N)", "text", "bool" or "datetime"; anything
	// else is the database's own type name.
	Type     string
	Nullable bool
}

var ddlColumn = regexp.MustCompile("^\\s*`(\\w+)` (\\w+(?:\\(\\d+\\))?)(.*?),?$")

// ExpectedColumns returns the columns of Magnum's tables at AlembicHead,
// read from our MariaDB migration (the same DDL as the reference dump).
func ExpectedColumns() (map[string][]Column, error) {
	ms, err := migrations(DialectMySQL)
	if err != nil || len(ms) == 0 {
		return nil, fmt.Errorf("read mysql migrations: %v", err)
	}
	out := map[string][]Column{}
	for _, s := range ms[0].stmts {
		if !strings.HasPrefix(s, "CREATE TABLE") {
			continue
		}
		name := strings.Trim(strings.Fields(s)[2], "`")
		for _, line := range strings.Split(s, "\n")[1:] {
			m := ddlColumn.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			out[name] = append(out[name], Column{Name: m[1], Type: canonicalType(m[2]), Nullable: !strings.Contains(m[3], "NOT NULL")})
		}
	}
	return out, nil
}

var varcharType = regexp.MustCompile(`^(?i)(?:varchar|character varying)\((\d+)\)$`)

// canonicalType maps a column type of any dialect to the neutral form.
func canonicalType(t string) string {
	l := strings.ToLower(strings.TrimSpace(t))
	switch l {
	case "int", "int(11)", "integer":
		return "int"
	case "tinyint(1)", "boolean", "bool":
		return "bool"
	case "text":
		return "text"
	case "datetime", "timestamp without time zone", "timestamp":
		return "datetime"
	}
	if m := varcharType.FindStringSubmatch(l); m != nil {
		return "varchar(" + m[1] + ")"
	}
	return l
}

// LiveColumns reads the columns of a table from the database's catalogue.
func (db *DB) LiveColumns(ctx context.Context, table string) ([]Column, error) {
	q := db.d.columnsSQL()
	rows, err := db.read.QueryContext(ctx, db.d.rebind(q), table)
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	defer rows.Close()
	var out []Column
	for rows.Next() {
		var c Column
		if err := rows.Scan(&c.Name, &c.Type, &c.Nullable); err != nil {
			return nil, fmt.Errorf("read columns of %s: %w", table, err)
		}
		c.Type = canonicalType(c.Type)
		out = append(out, c)
	}
	return out, rows.Err()
}

// checkColumns compares the live columns of Magnum's tables with
// ExpectedColumns. Column names and base types must match. Varchar lengths
// and nullability may differ: databases built from Magnum's models (create_all
// + stamp, as on PostgreSQL) differ from the migrated schema there
// (docker_storage_driver varchar(255), nullable nodegroup keys and
// quotas.hard_limit) and Magnum itself runs on both.
func (db *DB) checkColumns(ctx context.Context) error {
	want, err := ExpectedColumns()
	if err != nil {
		return err
	}
	var problems []string
	for _, table := range MagnumTables {
		live, err := db.LiveColumns(ctx, table)
		if err != nil {
			return err
		}
		if len(live) == 0 {
			problems = append(problems, "table "+table+" is missing")
			continue
		}
		got := map[string]Column{}
		for _, c := range live {
			got[c.Name] = c
		}
		for _, w := range want[table] {
			g, ok := got[w.Name]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s.%s is missing", table, w.Name))
				continue
			}
			delete(got, w.Name)
			if baseType(g.Type) != baseType(w.Type) {
				problems = append(problems, fmt.Sprintf("%s.%s is %s, expected %s", table, w.Name, g.Type, w.Type))
			}
		}
		extra := make([]string, 0, len(got))
		for n := range got {
			extra = append(extra, n)
		}
		slices.Sort(extra)
		for _, n := range extra {
			problems = append(problems, fmt.Sprintf("%s.%s is not a column of Magnum %s", table, n, AlembicHead))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the database is stamped %s but its tables differ from Magnum's schema: %s", AlembicHead, strings.Join(problems, "; "))
	}
	return nil
}

func baseType(t string) string {
	if i := strings.IndexByte(t, '('); i >= 0 {
		return t[:i]
	}
	return t
}
