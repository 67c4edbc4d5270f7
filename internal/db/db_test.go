package db

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestOpenUnreachable(t *testing.T) {
	for _, tc := range []struct {
		dialect, dsn string
		want         []string
	}{
		{DialectMySQL, "magnum:s3cr3t-pw@tcp(127.0.0.1:1)/magnum", []string{"mysql", "127.0.0.1:1", "refused"}},
		{DialectPostgres, "postgres://magnum:s3cr3t-pw@127.0.0.1:1/magnum", []string{"postgres", "127.0.0.1:1", "refused"}},
		{DialectSQLite, "/nonexistent-dir/x/magnum.db", []string{"sqlite", "/nonexistent-dir/x/magnum.db"}},
		{"oracle", "x", []string{"unsupported database dialect"}},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			db, err := Open(ctx, tc.dialect, tc.dsn, Options{ConnectTimeout: 3 * time.Second})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			t.Logf("Open error: %s", msg)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "s3cr3t") {
				t.Errorf("error %q leaks the password", msg)
			}
			if len(msg) > 300 {
				t.Errorf("error is %d characters long: %q", len(msg), msg)
			}
		})
	}
}

func TestRebind(t *testing.T) {
	q := `SELECT "binary" FROM t WHERE a = ? AND b IN (?, ?)`
	for _, tc := range []struct{ dialect, want string }{
		{DialectMySQL, "SELECT `binary` FROM t WHERE a = ? AND b IN (?, ?)"},
		{DialectPostgres, `SELECT "binary" FROM t WHERE a = $1 AND b IN ($2, $3)`},
		{DialectSQLite, q},
	} {
		if got := (&dialect{name: tc.dialect}).rebind(q); got != tc.want {
			t.Errorf("%s: rebind = %s, want %s", tc.dialect, got, tc.want)
		}
	}
}

func TestSQLiteDSN(t *testing.T) {
	o := Options{}
	o.setDefaults()
	for _, tc := range []struct{ in, txlock, want string }{
		{"/var/lib/magnum.db", "immediate", "file:/var/lib/magnum.db?_pragma=busy_timeout%285000%29&_pragma=journal_mode%28WAL%29&_pragma=synchronous%28NORMAL%29&_txlock=immediate"},
		{"rel.db?_pragma=busy_timeout(1000)&_pragma=foreign_keys(1)&_txlock=immediate", "deferred",
			"file:rel.db?_pragma=busy_timeout%281000%29&_pragma=foreign_keys%281%29&_pragma=journal_mode%28WAL%29&_pragma=synchronous%28NORMAL%29&_txlock=deferred"},
		{":memory:?_pragma=foreign_keys(1)", "immediate", "file::memory:?_pragma=foreign_keys%281%29&_pragma=busy_timeout%285000%29&_txlock=immediate"},
	} {
		if got := sqliteDSN(tc.in, o, tc.txlock); got != tc.want {
			t.Errorf("sqliteDSN(%q) =\n %s\nwant\n %s", tc.in, got, tc.want)
		}
	}
	if !isSQLiteMemory(":memory:?_pragma=foreign_keys(1)") || isSQLiteMemory("/tmp/x.db?_txlock=immediate") {
		t.Error("isSQLiteMemory misclassifies")
	}
}

func TestOpenSQLiteMemory(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, DialectSQLite, ":memory:?_pragma=foreign_keys(1)", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	err = db.InTx(ctx, func(tx *Tx) error {
		c := newCluster(1, "p")
		return tx.CreateCluster(ctx, &c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := db.CountClusters(ctx, ClusterFilter{Scope: AllProjects}); err != nil || n != 1 {
		t.Fatalf("CountClusters = %d, %v", n, err)
	}
}
