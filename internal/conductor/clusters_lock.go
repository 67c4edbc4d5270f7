package conductor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// The lock row: one magnum_service row, created on first use, that
// serialises the cluster quota check with the insert and holds the
// reconciler's lease. Its report_count goes up with every create and
// every lease renewal (clusters_quota.go). No migration is needed and the
// row is the same on every dialect. Its disabled_reason holds the lease holder and
// last_seen_up the last renewal, so GET /v1/mservices shows the reconciler
// "up" while a leader holds the lease.
const (
	// LockServiceHost is the host column of the lock row.
	LockServiceHost = "openkeel-magnum"
	// LockServiceBinary is the binary column of the lock row.
	LockServiceBinary = "openkeel-reconciler"
)

// clEnsureLockRow makes sure the lock row exists (outside any transaction;
// a concurrent creation is fine).
func (c *Conductor) clEnsureLockRow(ctx context.Context) error {
	if c.lockRowSeen.Load() {
		return nil
	}
	_, err := c.DB.GetMagnumService(ctx, LockServiceHost, LockServiceBinary)
	if err == nil {
		c.lockRowSeen.Store(true)
		return nil
	}
	if !errors.Is(err, db.ErrNotFound) {
		return fmt.Errorf("read lock row: %w", err)
	}
	f := false
	row := &magnum.MagnumService{Host: LockServiceHost, Binary: LockServiceBinary, Disabled: &f, ForcedDown: &f}
	if err := c.DB.CreateMagnumService(ctx, row); err != nil && !errors.Is(err, db.ErrDuplicate) {
		return fmt.Errorf("create lock row: %w", err)
	}
	return nil
}

// clLock takes the lock row FOR UPDATE in tx (MariaDB, PostgreSQL) and
// returns it. On SQLite every write transaction already holds the
// database's write lock (BEGIN IMMEDIATE), so the read is a plain one.
// Two transactions that take it run one after the other: the count of the
// second sees the insert of the first.
func (c *Conductor) clLock(ctx context.Context, tx *db.Tx) (*magnum.MagnumService, error) {
	row, err := tx.ForUpdate().GetMagnumService(ctx, LockServiceHost, LockServiceBinary)
	if err != nil {
		if errors.Is(err, db.ErrNotFound) {
			// Removed since it was seen (a magnum-service row deleted by
			// hand): the next clEnsureLockRow creates it again.
			c.lockRowSeen.Store(false)
		}
		return nil, fmt.Errorf("lock cluster row: %w", err)
	}
	return row, nil
}

// AcquireReconcilerLease takes or renews the reconciler lease for holder:
// it succeeds when the lease is free, expired (last renewal older than
// ttl) or already held by holder. Only the holder reconciles, so two
// reconcilers never race on a cluster's deletion.
func (c *Conductor) AcquireReconcilerLease(ctx context.Context, holder string, ttl time.Duration) (bool, error) {
	if err := c.clEnsureLockRow(ctx); err != nil {
		return false, err
	}
	now := c.now()
	got := false
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		got = false
		row, err := tx.ForUpdate().GetMagnumService(ctx, LockServiceHost, LockServiceBinary)
		if err != nil {
			return fmt.Errorf("lock lease row: %w", err)
		}
		cur := ""
		if row.DisabledReason != nil {
			cur = *row.DisabledReason
		}
		expired := row.LastSeenUp == nil || now.Sub(*row.LastSeenUp) > ttl
		if cur != "" && cur != holder && !expired {
			return nil
		}
		h := holder
		row.DisabledReason = &h
		row.LastSeenUp = &now
		row.ReportCount++
		got = true
		return tx.UpdateMagnumService(ctx, row, "disabled_reason", "last_seen_up", "report_count")
	})
	return got, err
}

// ReleaseReconcilerLease gives the lease up if holder has it.
func (c *Conductor) ReleaseReconcilerLease(ctx context.Context, holder string) error {
	return c.DB.InTx(ctx, func(tx *db.Tx) error {
		row, err := tx.ForUpdate().GetMagnumService(ctx, LockServiceHost, LockServiceBinary)
		if errors.Is(err, db.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if row.DisabledReason == nil || *row.DisabledReason != holder {
			return nil
		}
		row.DisabledReason = nil
		row.LastSeenUp = nil
		return tx.UpdateMagnumService(ctx, row, "disabled_reason", "last_seen_up")
	})
}
