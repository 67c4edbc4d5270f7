package db

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMigrationVersionsMatchAcrossDialects(t *testing.T) {
	var want []int
	for i, d := range []string{DialectMySQL, DialectPostgres, DialectSQLite} {
		ms, err := migrations(d)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, m := range ms {
			got = append(got, m.version)
		}
		if i == 0 {
			want = got
			if len(want) == 0 || want[0] != 1 {
				t.Fatalf("mysql migrations start at %v, want version 1", want)
			}
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s migration versions differ from mysql (-mysql +%s):\n%s", d, d, diff)
		}
	}
}

// TestUpgradeCreatesSpecSchema runs our migrations on an empty database and
// compares the result with the schema Magnum's own migrations produce (the
// spec dumps): for MariaDB SHOW CREATE TABLE of both, for PostgreSQL the
// catalogue (columns, defaults, constraints, sequences, types), for SQLite
// the columns and unique keys of the MariaDB dump. The spec's schema gets
// our later migrations (indexes only) applied the same way before the
// comparison.
func TestUpgradeCreatesSpecSchema(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		ours, alembic, err := db.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ours != LatestVersion() || alembic != AlembicHead {
			t.Fatalf("Version() = %d, %q; want %d, %q", ours, alembic, LatestVersion(), AlembicHead)
		}
		// A second upgrade is a no-op.
		if err := db.Upgrade(ctx); err != nil {
			t.Fatalf("second upgrade: %v", err)
		}
		switch dialect {
		case DialectMySQL:
			ref := openFresh(t, dialect, Options{})
			execScript(t, ref, readSpec(t, "schema-mariadb.sql"), nil)
			applyAdditions(t, ref, dialect)
			for _, tbl := range append([]string{"alembic_version"}, MagnumTables...) {
				if diff := cmp.Diff(showCreate(t, ref, tbl), showCreate(t, db, tbl)); diff != "" {
					t.Errorf("table %s differs from the spec (-spec +ours):\n%s", tbl, diff)
				}
			}
		case DialectPostgres:
			ref := openFresh(t, dialect, Options{})
			execScript(t, ref, readSpec(t, "schema-postgresql.sql"), pgSpecSkip)
			applyAdditions(t, ref, dialect)
			spec := pgCatalog(t, ref)
			if len(spec) < 130 {
				t.Fatalf("spec catalogue has only %d entries:\n%s", len(spec), strings.Join(spec, "\n"))
			}
			if diff := cmp.Diff(spec, pgCatalog(t, db)); diff != "" {
				t.Errorf("schema differs from the spec (-spec +ours):\n%s", diff)
			}
		case DialectSQLite:
			want, err := ExpectedColumns()
			if err != nil {
				t.Fatal(err)
			}
			specUniques := mysqlUniqueKeys(readSpec(t, "schema-mariadb.sql"))
			for _, tbl := range MagnumTables {
				got, err := db.LiveColumns(ctx, tbl)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want[tbl], got); diff != "" {
					t.Errorf("columns of %s differ from the spec (-spec +sqlite):\n%s", tbl, diff)
				}
				if diff := cmp.Diff(specUniques[tbl], sqliteUniqueKeys(t, db, tbl)); diff != "" {
					t.Errorf("unique keys of %s differ from the spec (-spec +sqlite):\n%s", tbl, diff)
				}
			}
		}
	})
}

func showCreate(t *testing.T, db *DB, tbl string) string {
	t.Helper()
	var name, ddl string
	if err := db.SQL().QueryRowContext(t.Context(), "SHOW CREATE TABLE `"+tbl+"`").Scan(&name, &ddl); err != nil {
		t.Fatalf("show create table %s: %v", tbl, err)
	}
	return regexp.MustCompile(` AUTO_INCREMENT=\d+`).ReplaceAllString(ddl, "")
}

// pgCatalog lists what defines the schema in PostgreSQL, one line each.
func pgCatalog(t *testing.T, db *DB) []string {
	t.Helper()
	queries := []string{
		`SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || COALESCE('(' || character_maximum_length || ')', '') ||
			' nullable=' || is_nullable || ' default=' || COALESCE(column_default, '-')
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> 'openkeel_schema_version'`,
		`SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
			FROM pg_constraint WHERE connamespace = current_schema()::regnamespace AND conrelid::regclass::text <> 'openkeel_schema_version'`,
		`SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename <> 'openkeel_schema_version'`,
		`SELECT 'sequence ' || sequence_name || ' ' || data_type || ' ' || start_value || ' ' || increment
			FROM information_schema.sequences WHERE sequence_schema = current_schema()`,
		`SELECT 'type ' || t.typname || ' ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
			FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname`,
	}
	var out []string
	for _, q := range queries {
		rows, err := db.SQL().QueryContext(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		rows.Close()
	}
	slices.Sort(out)
	return out
}

// mysqlUniqueKeys returns the unique keys of each table of a MariaDB dump
// as "name(col,col)".
func mysqlUniqueKeys(dump string) map[string][]string {
	out := map[string][]string{}
	var tbl string
	for _, line := range strings.Split(dump, "\n") {
		if m := regexp.MustCompile("^CREATE TABLE `(\\w+)`").FindStringSubmatch(line); m != nil {
			tbl = m[1]
		}
		if m := regexp.MustCompile("UNIQUE KEY `(\\w+)` \\((.*)\\)").FindStringSubmatch(line); m != nil {
			out[tbl] = append(out[tbl], m[1]+"("+strings.ReplaceAll(m[2], "`", "")+")")
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

func sqliteUniqueKeys(t *testing.T, db *DB, tbl string) []string {
	t.Helper()
	rows, err := db.SQL().QueryContext(t.Context(),
		`SELECT il.name, ii.name FROM pragma_index_list(?) il, pragma_index_info(il.name) ii
		 WHERE il."unique" = 1 AND il.origin = 'u' ORDER BY il.name, ii.seqno`, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols := map[string][]string{}
	var names []string
	for rows.Next() {
		var idx, col string
		if err := rows.Scan(&idx, &col); err != nil {
			t.Fatal(err)
		}
		if _, ok := cols[idx]; !ok {
			names = append(names, idx)
		}
		cols[idx] = append(cols[idx], col)
	}
	// SQLite names constraint indexes sqlite_autoindex_<table>_<n>; map
	// them back to the constraint names declared in the migration.
	ddl := ""
	if err := db.SQL().QueryRowContext(t.Context(), "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", tbl).Scan(&ddl); err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{}
	for _, m := range regexp.MustCompile(`CONSTRAINT (\w+) UNIQUE \(([^)]*)\)`).FindAllStringSubmatch(ddl, -1) {
		declared[strings.ReplaceAll(strings.ReplaceAll(m[2], `"`, ""), " ", "")] = m[1]
	}
	var out []string
	for _, n := range names {
		key := strings.Join(cols[n], ",")
		out = append(out, declared[key]+"("+key+")")
	}
	slices.Sort(out)
	return out
}

func TestUpgradeRefusesMagnumDatabase(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		db := loadMagnumDB(t, dialect)
		err := db.Upgrade(t.Context())
		if err == nil || !strings.Contains(err.Error(), "db adopt") || !strings.Contains(err.Error(), AlembicHead) {
			t.Fatalf("Upgrade on a Magnum database = %v, want a refusal naming db adopt and %s", err, AlembicHead)
		}
	})
}

// loadMagnumDB returns a database as Python Magnum leaves it: the spec
// schema and the sample rows, without our version table.
func loadMagnumDB(t *testing.T, dialect string) *DB {
	t.Helper()
	db := openFresh(t, dialect, Options{})
	switch dialect {
	case DialectMySQL:
		// The dumps themselves, byte for byte.
		execScript(t, db, readSpec(t, "schema-mariadb.sql"), nil)
		execScript(t, db, readSpec(t, "sample-data-mariadb.sql"), nil)
		return db
	case DialectPostgres:
		execScript(t, db, readSpec(t, "schema-postgresql.sql"), pgSpecSkip)
	case DialectSQLite:
		ms, err := migrations(DialectSQLite)
		if err != nil {
			t.Fatal(err)
		}
		execScript(t, db, strings.Join(ms[0].stmts, ";\n")+";\n", func(s string) bool {
			return strings.HasPrefix(s, "INSERT INTO alembic_version")
		})
	}
	loadSampleRows(t, db)
	return db
}

func TestAdopt(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		t.Run("takes over a Magnum database without changing a row", func(t *testing.T) {
			db := loadMagnumDB(t, dialect)
			before := tableDigest(t, db)
			var checksums map[string]string
			if dialect == DialectMySQL {
				checksums = mysqlChecksums(t, db)
			}
			if hasIndex(t, db, dialect, "cluster", "okm_cluster0project_id") {
				t.Fatal("Magnum's schema already has our index")
			}
			if err := db.Adopt(ctx); err != nil {
				t.Fatalf("Adopt: %v", err)
			}
			ours, alembic, err := db.Version(ctx)
			if err != nil || ours != LatestVersion() || alembic != AlembicHead {
				t.Fatalf("Version() after adopt = %d, %q, %v; want %d", ours, alembic, err, LatestVersion())
			}
			// Our later migrations (indexes only) are applied by adopt.
			if !hasIndex(t, db, dialect, "cluster", "okm_cluster0project_id") {
				t.Error("adopt did not add the cluster.project_id index")
			}
			if diff := cmp.Diff(before, tableDigest(t, db)); diff != "" {
				t.Fatalf("adopt changed rows (-before +after):\n%s", diff)
			}
			if dialect == DialectMySQL {
				if diff := cmp.Diff(checksums, mysqlChecksums(t, db)); diff != "" {
					t.Fatalf("CHECKSUM TABLE changed (-before +after):\n%s", diff)
				}
			}
			// Adopting again is a no-op; upgrading an adopted database too.
			if err := db.Adopt(ctx); err != nil {
				t.Fatalf("second Adopt: %v", err)
			}
			if err := db.Upgrade(ctx); err != nil {
				t.Fatalf("Upgrade after adopt: %v", err)
			}
			// New rows get ids above the existing ones.
			qt := sampleQuota()
			if err := db.CreateQuota(ctx, &qt); err != nil {
				t.Fatalf("insert after adopt: %v", err)
			}
			if qt.ID != 2 {
				t.Errorf("new quota id = %d, want 2", qt.ID)
			}
		})
		t.Run("refuses another Alembic revision", func(t *testing.T) {
			db := loadMagnumDB(t, dialect)
			if _, err := db.SQL().ExecContext(ctx, "UPDATE alembic_version SET version_num = 'abc123'"); err != nil {
				t.Fatal(err)
			}
			before := tableDigest(t, db)
			err := db.Adopt(ctx)
			if !errors.Is(err, ErrAlembicRevision) || !strings.Contains(err.Error(), "abc123") ||
				!strings.Contains(err.Error(), "magnum-db-manage upgrade") {
				t.Fatalf("Adopt = %v, want an error naming abc123 and magnum-db-manage upgrade", err)
			}
			if diff := cmp.Diff(before, tableDigest(t, db)); diff != "" {
				t.Fatalf("refused adopt changed rows:\n%s", diff)
			}
			if ours, _, _ := db.Version(ctx); ours != 0 {
				t.Fatalf("refused adopt recorded version %d", ours)
			}
		})
		t.Run("refuses tables that differ", func(t *testing.T) {
			db := loadMagnumDB(t, dialect)
			if _, err := db.SQL().ExecContext(ctx, "ALTER TABLE nodegroup ADD COLUMN extra_col INTEGER"); err != nil {
				t.Fatal(err)
			}
			err := db.Adopt(ctx)
			if err == nil || !strings.Contains(err.Error(), "nodegroup.extra_col") {
				t.Fatalf("Adopt = %v, want an error naming nodegroup.extra_col", err)
			}
		})
		t.Run("sends an empty database to db upgrade", func(t *testing.T) {
			db := openFresh(t, dialect, Options{})
			err := db.Adopt(ctx)
			if err == nil || !strings.Contains(err.Error(), "db upgrade") {
				t.Fatalf("Adopt on an empty database = %v, want a pointer to db upgrade", err)
			}
		})
	})
}

// hasIndex reports whether table has an index named name.
func hasIndex(t *testing.T, db *DB, dialect, table, name string) bool {
	t.Helper()
	q := map[string]string{
		DialectMySQL:    "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?",
		DialectPostgres: "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ? AND indexname = ?",
		DialectSQLite:   "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name = ?",
	}[dialect]
	var n int
	if err := db.SQL().QueryRowContext(t.Context(), db.d.rebind(q), table, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestLaterMigrationsOnlyAddIndexes: version 1 is Magnum's schema; what we
// add after it are indexes only, so that Python Magnum still runs on the
// database (docs/compatibility.md).
func TestLaterMigrationsOnlyAddIndexes(t *testing.T) {
	for _, dialect := range []string{DialectMySQL, DialectPostgres, DialectSQLite} {
		for _, m := range laterMigrations(t, dialect) {
			for i, stmt := range m.stmts {
				if !strings.HasPrefix(stmt, "CREATE INDEX ") {
					t.Errorf("%s %s statement %d is not a CREATE INDEX: %s", dialect, m.name, i+1, stmt)
				}
			}
		}
	}
}

// laterMigrations are a dialect's migrations after version 1 (Magnum's
// schema): our additions to it.
func laterMigrations(t *testing.T, dialect string) []migration {
	t.Helper()
	ms, err := migrations(dialect)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(ms, func(m migration) bool { return m.version == 1 })
}

// applyAdditions runs our migrations after version 1 on db (a database
// loaded from the spec's schema).
func applyAdditions(t *testing.T, db *DB, dialect string) {
	t.Helper()
	for _, m := range laterMigrations(t, dialect) {
		for _, stmt := range m.stmts {
			if _, err := db.SQL().ExecContext(t.Context(), stmt); err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
		}
	}
}

func mysqlChecksums(t *testing.T, db *DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tbl := range append([]string{"alembic_version"}, MagnumTables...) {
		var name, sum string
		if err := db.SQL().QueryRowContext(t.Context(), "CHECKSUM TABLE `"+tbl+"`").Scan(&name, &sum); err != nil {
			t.Fatal(err)
		}
		out[tbl] = sum
	}
	return out
}
