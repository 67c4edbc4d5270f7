package db

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func TestRetryableErrors(t *testing.T) {
	d := &dialect{name: DialectMySQL}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1213}, true},
		{&mysql.MySQLError{Number: 1205}, true},
		{&mysql.MySQLError{Number: 1062}, false},
		{&pgconn.PgError{Code: "40001"}, true},
		{&pgconn.PgError{Code: "40P01"}, true},
		{&pgconn.PgError{Code: "23505"}, false},
		{errors.New("other"), false},
	} {
		if got := d.isRetryable(tc.err); got != tc.want {
			t.Errorf("isRetryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if !d.isDuplicate(&mysql.MySQLError{Number: 1062}) || !d.isDuplicate(&pgconn.PgError{Code: "23505"}) {
		t.Error("duplicate errors not recognised")
	}
}

func TestInTxRollsBackOnError(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		boom := errors.New("boom")
		err := db.InTx(ctx, func(tx *Tx) error {
			q := magnum.Quota{ProjectID: "p", Resource: "Cluster", HardLimit: 1}
			if err := tx.CreateQuota(ctx, &q); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v, want boom", err)
		}
		if _, err := db.GetQuota(ctx, "p", "Cluster"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("row of a rolled back transaction: %v", err)
		}
	})
}

// TestInTxRetriesDeadlock provokes a real deadlock: two transactions lock
// two rows in opposite order. The database kills one; InTx runs it again
// and both transactions' writes end up committed.
func TestInTxRetriesDeadlock(t *testing.T) {
	for _, dialect := range []string{DialectMySQL, DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			requireDialect(t, dialect)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			var retries atomic.Int32
			var lastErr atomic.Value
			db := openFresh(t, dialect, Options{
				RetryBackoff: 5 * time.Millisecond,
				OnRetry: func(attempt int, err error) {
					retries.Add(1)
					lastErr.Store(err.Error())
				},
			})
			if err := db.Upgrade(ctx); err != nil {
				t.Fatal(err)
			}
			a, b := newCluster(1, "p"), newCluster(2, "p")
			for _, c := range []*magnum.Cluster{&a, &b} {
				if err := db.CreateCluster(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			// Each transaction locks its first row, waits until the other
			// has locked its own (first attempt only), then takes the other.
			firstLocked := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
			var once [2]sync.Once
			run := func(me int, first, second *magnum.Cluster, status magnum.Status) error {
				return db.InTx(ctx, func(tx *Tx) error {
					q := tx.ForUpdate()
					c1, err := q.GetClusterByUUID(ctx, first.UUID, AllProjects)
					if err != nil {
						return err
					}
					c1.StatusReason = ptr("locked by " + string(status))
					if err := tx.UpdateCluster(ctx, c1, "status_reason"); err != nil {
						return err
					}
					once[me].Do(func() { close(firstLocked[me]) })
					select {
					case <-firstLocked[1-me]:
					case <-ctx.Done():
						return ctx.Err()
					}
					c2, err := q.GetClusterByUUID(ctx, second.UUID, AllProjects)
					if err != nil {
						return err
					}
					c2.Status = ptr(status)
					return tx.UpdateCluster(ctx, c2, "status")
				})
			}
			errs := make(chan error, 2)
			go func() { errs <- run(0, &a, &b, magnum.StatusUpdateComplete) }()
			go func() { errs <- run(1, &b, &a, magnum.StatusUpdateFailed) }()
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatalf("InTx: %v", err)
				}
			}
			if retries.Load() < 1 {
				t.Fatal("no transaction was retried: the deadlock did not happen")
			}
			msg, _ := lastErr.Load().(string)
			if !strings.Contains(msg, "1213") && !strings.Contains(msg, "40P01") {
				t.Errorf("retried error = %q, want a deadlock", msg)
			}
			ga, _ := db.GetClusterByUUID(ctx, a.UUID, AllProjects)
			gb, _ := db.GetClusterByUUID(ctx, b.UUID, AllProjects)
			if *ga.Status != magnum.StatusUpdateFailed || *gb.Status != magnum.StatusUpdateComplete {
				t.Errorf("final statuses %s / %s", *ga.Status, *gb.Status)
			}
		})
	}
}

func TestInTxGivesUpAfterMaxAttempts(t *testing.T) {
	db := openFresh(t, DialectSQLite, Options{MaxAttempts: 3, RetryBackoff: time.Millisecond})
	calls := 0
	deadlock := &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}
	// The SQLite dialect only classifies SQLite errors; use a MySQL
	// dialect for the classification of this synthetic error.
	db.d = &dialect{name: DialectMySQL}
	err := db.InTx(t.Context(), func(tx *Tx) error {
		calls++
		return deadlock
	})
	if !errors.Is(err, deadlock) || calls != 3 {
		t.Fatalf("InTx = %v after %d calls, want the deadlock after 3", err, calls)
	}
}

// TestSQLiteConcurrentWriters: many goroutines write at once; the single
// writer connection and BEGIN IMMEDIATE serialize them without errors.
func TestSQLiteConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	db := openMigrated(t, DialectSQLite)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- db.InTx(ctx, func(tx *Tx) error {
				n, err := tx.CountClusters(ctx, ClusterFilter{Scope: AllProjects})
				if err != nil {
					return err
				}
				c := newCluster(i+1, "p")
				c.CreateTimeout = ptr(n)
				return tx.CreateCluster(ctx, &c)
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := db.CountClusters(ctx, ClusterFilter{Scope: AllProjects}); n != 20 {
		t.Fatalf("%d clusters, want 20", n)
	}
}
