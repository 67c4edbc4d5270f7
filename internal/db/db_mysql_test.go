package db

import (
	"os"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestMySQLInterpolationSafe(t *testing.T) {
	for dsn, want := range map[string]bool{
		"u:p@tcp(h:3306)/magnum?charset=utf8mb4&parseTime=true&loc=UTC&timeout=10s": true,
		"u:p@tcp(h:3306)/magnum":                                         true,
		"u:p@tcp(h:3306)/magnum?charset=utf8":                            true,
		"u:p@tcp(h:3306)/magnum?charset=latin1":                          true,
		"u:p@tcp(h:3306)/magnum?charset=utf8mb4,utf8":                    true,
		"u:p@tcp(h:3306)/magnum?charset=gbk":                             false,
		"u:p@tcp(h:3306)/magnum?charset=utf8mb4,big5":                    false,
		"u:p@tcp(h:3306)/magnum?charset=sjis":                            false,
		"u:p@tcp(h:3306)/magnum?charset=cp932":                           false,
		"u:p@tcp(h:3306)/magnum?collation=utf8mb4_unicode_ci":            true,
		"u:p@tcp(h:3306)/magnum?collation=gb18030_chinese_ci":            false,
		"u:p@tcp(h:3306)/magnum?charset=utf8mb4&interpolateParams=false": false,
		"u:p?charset=gbk@tcp(h:3306)/magnum?charset=utf8mb4":             true,
		"u:p@unix(/run/mysqld/mysqld.sock)/magnum?charset=utf8mb4":       true,
	} {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if got := mysqlInterpolationSafe(dsn, cfg); got != want {
			t.Errorf("mysqlInterpolationSafe(%q) = %v, want %v", dsn, got, want)
		}
	}
}

// TestMySQLInterpolatedStatements checks on MariaDB that statements with
// arguments are sent without a server-side prepare, and that awkward
// strings survive the client-side escaping.
func TestMySQLInterpolatedStatements(t *testing.T) {
	requireDialect(t, DialectMySQL)
	ctx := t.Context()
	db := openFresh(t, DialectMySQL, Options{MaxOpenConns: 1})
	if err := db.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	prepares := func() int {
		t.Helper()
		var name string
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	awkward := "it's a \"name\" with \\ back\\\\slashes, ? marks, -- dashes, /* c */, é, ✓, \x00 nul"
	c := newCluster(1, "p'1")
	c.Name = awkward
	c.Labels = map[string]string{awkward: awkward}
	before := prepares()
	if err := db.CreateCluster(ctx, &c); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetClustersByName(ctx, awkward, ProjectScope("p'1"))
	if err != nil || len(got) != 1 || got[0].Name != awkward || got[0].Labels[awkward] != awkward {
		t.Fatalf("by name: %+v, %v", got, err)
	}
	if n := prepares(); n != before {
		t.Errorf("%d server-side prepares for two statements with arguments, want 0", n-before)
	}
}

// BenchmarkMySQLGetClusterByUUID reads one cluster by uuid on MariaDB
// with the driver filling in the placeholders (the default) and with
// server-side prepared statements (interpolateParams=false in the DSN).
func BenchmarkMySQLGetClusterByUUID(b *testing.B) {
	if os.Getenv("OPENKEEL_TEST_MYSQL_DSN") == "" {
		b.Skip("OPENKEEL_TEST_MYSQL_DSN not set")
	}
	for _, mode := range []string{"interpolated", "prepared"} {
		b.Run(mode, func(b *testing.B) {
			dsn := mysqlBenchDSN(b)
			if mode == "prepared" {
				dsn += "&interpolateParams=false"
			}
			db, err := Open(b.Context(), DialectMySQL, dsn, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if err := db.Upgrade(b.Context()); err != nil {
				b.Fatal(err)
			}
			c := newCluster(1, "p1")
			if err := db.CreateCluster(b.Context(), &c); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := db.GetClusterByUUID(b.Context(), c.UUID, ProjectScope("p1")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// mysqlBenchDSN creates an empty MariaDB database for a benchmark and
// returns its DSN (with a query part); it is dropped at the end.
func mysqlBenchDSN(b *testing.B) string {
	dsn := freshDSN(b, DialectMySQL)
	if !strings.Contains(dsn, "?") {
		dsn += "?charset=utf8mb4"
	}
	return dsn
}
