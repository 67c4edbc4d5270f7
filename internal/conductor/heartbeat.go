package conductor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// ServiceStore is the part of the database the heartbeat needs.
type ServiceStore interface {
	GetMagnumService(ctx context.Context, host, binary string) (*magnum.MagnumService, error)
	CreateMagnumService(ctx context.Context, s *magnum.MagnumService) error
	UpdateMagnumService(ctx context.Context, s *magnum.MagnumService, cols ...string) error
}

// Heartbeat keeps this process's magnum_service row fresh, as Magnum's
// conductor does (magnum/servicegroup/magnum_service_periodic.py): the row
// for (host, binary) is created on the first report, then report_count is
// incremented and last_seen_up set on every report. GET /v1/mservices
// shows the service "up" while last_seen_up is within service_down_time.
type Heartbeat struct {
	Store    ServiceStore
	Host     string
	Binary   string
	Interval time.Duration
	Now      func() time.Time
	Log      *slog.Logger
}

// Report writes one heartbeat.
func (h *Heartbeat) Report(ctx context.Context) error {
	now := h.now().UTC()
	s, err := h.Store.GetMagnumService(ctx, h.Host, h.Binary)
	switch {
	case errors.Is(err, db.ErrNotFound):
		f := false
		s = &magnum.MagnumService{Host: h.Host, Binary: h.Binary, Disabled: &f, ForcedDown: &f,
			ReportCount: 1, LastSeenUp: &now}
		if err := h.Store.CreateMagnumService(ctx, s); err != nil {
			return fmt.Errorf("register service %s/%s: %w", h.Host, h.Binary, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read service %s/%s: %w", h.Host, h.Binary, err)
	}
	s.ReportCount++
	s.LastSeenUp = &now
	if err := h.Store.UpdateMagnumService(ctx, s, "report_count", "last_seen_up"); err != nil {
		return fmt.Errorf("report service %s/%s: %w", h.Host, h.Binary, err)
	}
	return nil
}

func (h *Heartbeat) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Run reports every Interval (and at once when immediate is true) until ctx
// ends. Failures are
// logged and retried at the next tick: a database hiccup must not stop the
// process.
func (h *Heartbeat) Run(ctx context.Context, immediate bool) {
	interval := h.Interval
	if interval <= 0 {
		interval = 60 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for first := true; ; first = false {
		if first && !immediate {
			goto wait
		}
		if err := h.Report(ctx); err != nil && ctx.Err() == nil && h.Log != nil {
			h.Log.Warn("service heartbeat failed", "error", err)
		}
	wait:
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
