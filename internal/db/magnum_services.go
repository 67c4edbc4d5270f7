package db

import (
	"context"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var magnumServiceTable = &table[magnum.MagnumService]{
	name:      "magnum_service",
	cols:      []string{"created_at", "updated_at", "report_count", "host", "binary", "disabled", "disabled_reason", "last_seen_up", "forced_down"},
	markerCol: "id",
	id:        func(s *magnum.MagnumService) *int64 { return &s.ID },
	created:   func(s *magnum.MagnumService) *time.Time { return &s.CreatedAt },
	updated:   func(s *magnum.MagnumService) **time.Time { return &s.UpdatedAt },
	binds: func(q *Queries, s *magnum.MagnumService) []any {
		return []any{ts{&s.CreatedAt, q.d}, nts{&s.UpdatedAt, q.d}, &s.ReportCount, str{&s.Host}, str{&s.Binary},
			&s.Disabled, &s.DisabledReason, nts{&s.LastSeenUp, q.d}, &s.ForcedDown}
	},
}

// ListMagnumServices returns every magnum_service row ordered by id, as
// GET /v1/mservices lists them.
func (q *Queries) ListMagnumServices(ctx context.Context) ([]magnum.MagnumService, error) {
	return all(ctx, q, magnumServiceTable, cond{}, "id ASC", 0)
}

// GetMagnumService returns the row of one (host, binary) pair.
func (q *Queries) GetMagnumService(ctx context.Context, host, binary string) (*magnum.MagnumService, error) {
	var c cond
	c.add(`host = ? AND "binary" = ?`, host, binary)
	return getOne(ctx, q, magnumServiceTable, c)
}

// CreateMagnumService inserts s with Magnum's client-side defaults
// (disabled and forced_down false when unset) and sets s.ID and
// s.CreatedAt. A second row for the same (host, binary) → ErrDuplicate.
func (q *Queries) CreateMagnumService(ctx context.Context, s *magnum.MagnumService) error {
	s.Disabled = defaultBool(s.Disabled, false)
	s.ForcedDown = defaultBool(s.ForcedDown, false)
	return insert(ctx, q, magnumServiceTable, s)
}

// UpdateMagnumService writes the named columns of s (e.g. "report_count",
// "last_seen_up") and sets updated_at.
func (q *Queries) UpdateMagnumService(ctx context.Context, s *magnum.MagnumService, cols ...string) error {
	return update(ctx, q, magnumServiceTable, s, cols)
}

// DeleteMagnumService deletes the row with id.
func (q *Queries) DeleteMagnumService(ctx context.Context, id int64) error {
	var c cond
	c.add("id = ?", id)
	return deleteOne(ctx, q, "magnum_service", c)
}

func defaultBool(p *bool, v bool) *bool {
	if p != nil {
		return p
	}
	return &v
}
