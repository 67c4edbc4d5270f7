package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Options configure a Reconciler.
type Options struct {
	// Conductor performs the state changes. Required.
	Conductor *conductor.Conductor
	// Interval between ticks (default 10 s, Magnum's periodic interval).
	Interval time.Duration
	// LeaseDuration is how long a lease stays valid without renewal
	// (default 3 × Interval).
	LeaseDuration time.Duration
	// Holder identifies this instance in the lease (default random).
	Holder string
	// PollTimeout bounds the work on one cluster in a tick (default 1 min).
	PollTimeout time.Duration
	// Log receives state changes and errors (default slog.Default()).
	Log *slog.Logger
	// OnDeleted, when set, runs for a cluster that reached DELETE_COMPLETE
	// before its rows are removed: the place to delete its certificates.
	// An error keeps the rows for the next tick.
	OnDeleted func(ctx context.Context, cl magnum.Cluster) error
}

// Reconciler is the background status loop.
type Reconciler struct {
	opts Options
}

// New returns a Reconciler; it panics when Options.Conductor is nil (a
// wiring error).
func New(o Options) *Reconciler {
	if o.Conductor == nil {
		panic("reconcile: Options.Conductor is required")
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 3 * o.Interval
	}
	if o.Holder == "" {
		o.Holder = "reconciler-" + conductor.NewUUID()
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = time.Minute
	}
	return &Reconciler{opts: o}
}

// Run ticks every Interval until ctx is cancelled, then gives the lease
// up. Tick errors are logged; Run returns nil on cancellation.
func (r *Reconciler) Run(ctx context.Context) error {
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := r.opts.Conductor.ReleaseReconcilerLease(rctx, r.opts.Holder); err != nil {
			r.opts.Log.Warn("release reconciler lease", "error", err)
		}
	}()
	for {
		if err := r.Tick(ctx); err != nil && ctx.Err() == nil {
			r.opts.Log.Error("reconcile tick", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick runs one pass: take or renew the lease (without it, nothing
// happens), then poll every cluster in progress. It returns the errors of
// the pass joined; one cluster's failure does not stop the others.
func (r *Reconciler) Tick(ctx context.Context) error {
	c := r.opts.Conductor
	ok, err := c.AcquireReconcilerLease(ctx, r.opts.Holder, r.opts.LeaseDuration)
	if err != nil {
		return fmt.Errorf("acquire lease: %w", err)
	}
	if !ok {
		return nil
	}
	pass, err := c.StartPollPass(ctx)
	if err != nil {
		return err
	}
	var errs []error
	// The clusters whose deletion completed are removed in batches, each
	// in one transaction.
	var deleted []magnum.Cluster
	finish := func() {
		if len(deleted) == 0 {
			return
		}
		fctx, cancel := context.WithTimeout(ctx, r.opts.PollTimeout)
		defer cancel()
		if err := c.FinishDeletes(fctx, deleted, r.opts.OnDeleted); err != nil {
			r.opts.Log.Error("finish cluster deletions", "error", err)
			errs = append(errs, err)
		}
		deleted = deleted[:0]
	}
	renewed := time.Now()
	for _, cl := range pass.Clusters {
		if ctx.Err() != nil {
			return errors.Join(append(errs, ctx.Err())...)
		}
		// A long pass renews the lease as it goes, and stops if another
		// instance took it meanwhile.
		if time.Since(renewed) > r.opts.LeaseDuration/3 {
			ok, err := c.AcquireReconcilerLease(ctx, r.opts.Holder, r.opts.LeaseDuration)
			if err != nil || !ok {
				return errors.Join(append(errs, fmt.Errorf("lease lost: %v", err))...)
			}
			renewed = time.Now()
		}
		// A create whose job has not run yet is not polled; an orphaned one
		// is finished here (ResumeCreate).
		if c.ResumeCreate(ctx, &cl) {
			continue
		}
		done, err := r.reconcile(ctx, pass, &cl)
		if err != nil {
			r.opts.Log.Error("reconcile cluster", "cluster_uuid", cl.UUID, "error", err)
			errs = append(errs, fmt.Errorf("cluster %s: %w", cl.UUID, err))
		}
		if done != nil {
			if deleted = append(deleted, *done); len(deleted) == finishBatch {
				finish()
			}
		}
	}
	finish()
	return errors.Join(errs...)
}

// finishBatch is how many deleted clusters one transaction removes.
const finishBatch = 100

// reconcile polls one cluster of the pass; it returns the cluster when its
// deletion has completed (to be removed, conductor.FinishDeletes).
func (r *Reconciler) reconcile(ctx context.Context, pass *conductor.PollPass, listed *magnum.Cluster) (*magnum.Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.PollTimeout)
	defer cancel()
	cl, err := r.opts.Conductor.PollInPass(ctx, pass, listed)
	if err != nil {
		var me *magnum.Error
		if errors.As(err, &me) && me.Status == 404 {
			return nil, nil // deleted meanwhile
		}
		return nil, err
	}
	if cl == nil || cl.Status == nil || *cl.Status != magnum.StatusDeleteComplete {
		return nil, nil // busy, or not deleted
	}
	return cl, nil
}
