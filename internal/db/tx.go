package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Tx is a transaction handed to the function given to InTx. Its Queries
// methods run inside the transaction.
type Tx struct {
	Queries
	tx *sql.Tx
}

// ForUpdate returns the transaction's Queries with row locks: reads add
// FOR UPDATE on MariaDB and PostgreSQL. On SQLite the transaction already
// holds the database's write lock (BEGIN IMMEDIATE), so reads are plain.
func (t *Tx) ForUpdate() *Queries {
	q := t.Queries
	q.lock = true
	return &q
}

// InTx runs fn in a transaction and commits it. When fn or the commit fails
// with a deadlock, a lock wait timeout, a serialization failure or a busy
// SQLite database, the transaction is rolled back and fn runs again from
// the start, at most Options.MaxAttempts times with a growing, jittered
// backoff. fn must therefore have no effects outside the transaction.
// This is the only place that retries database errors.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	backoff := db.opts.RetryBackoff
	for attempt := 1; ; attempt++ {
		err := db.runTx(ctx, fn)
		if err == nil || !db.d.isRetryable(err) || attempt >= db.opts.MaxAttempts || ctx.Err() != nil {
			return err
		}
		if db.opts.OnRetry != nil {
			db.opts.OnRetry(attempt, err)
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		backoff *= 2
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%w (retry aborted: %w)", err, ctx.Err())
		case <-timer.C:
		}
	}
}

func (db *DB) runTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{Queries: Queries{ex: sqlTx, d: db.d, now: db.now}, tx: sqlTx}
	defer func() {
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		if rbErr := sqlTx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
			return errors.Join(err, fmt.Errorf("rollback: %w", rbErr))
		}
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
