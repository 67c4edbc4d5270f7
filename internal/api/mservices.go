package api

import (
	"net/http"
	"sort"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// mservice is the wire form of a magnum_service row (MagnumService in
// magnum/api/controllers/v1/magnum_services.py: only the declared
// attributes, plus state).
type mservice struct {
	Binary         string  `json:"binary"`
	CreatedAt      *string `json:"created_at"`
	Disabled       *bool   `json:"disabled"`
	DisabledReason *string `json:"disabled_reason"`
	Host           string  `json:"host"`
	ID             int64   `json:"id"`
	ReportCount    int     `json:"report_count"`
	State          string  `json:"state"`
	UpdatedAt      *string `json:"updated_at"`
}

func (s *server) registerMServices() {
	s.register("magnum_service.get_all", s.listMServices)
}

// listMServices is GET /v1/mservices: policy magnum-service:get_all with
// the caller's target, then every row by id, never paginated.
func (s *server) listMServices(w http.ResponseWriter, r *http.Request) error {
	if err := s.Enforce(r, "magnum-service:get_all", nil); err != nil {
		return err
	}
	var rows []magnum.MagnumService
	if s.opts.MServices != nil {
		var err error
		if rows, err = s.opts.MServices.ListServices(r.Context()); err != nil {
			return err
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	now := s.opts.Now()
	out := make([]mservice, 0, len(rows))
	for _, row := range rows {
		state := "down"
		if serviceIsUp(row, now, s.opts.ServiceDownTime) {
			state = "up"
		}
		out = append(out, mservice{
			Binary: row.Binary, CreatedAt: FormatTimePtr(nonZero(row.CreatedAt)), Disabled: row.Disabled,
			DisabledReason: row.DisabledReason, Host: row.Host, ID: row.ID, ReportCount: row.ReportCount,
			State: state, UpdatedAt: FormatTimePtr(row.UpdatedAt),
		})
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"mservices": out})
}

// serviceIsUp reproduces magnum/servicegroup: forced down → down; otherwise
// the last heartbeat (last_seen_up, else updated_at, else created_at) must be
// within downTime of now, in either direction.
func serviceIsUp(row magnum.MagnumService, now time.Time, downTime time.Duration) bool {
	if row.ForcedDown != nil && *row.ForcedDown {
		return false
	}
	var last time.Time
	switch {
	case row.LastSeenUp != nil:
		last = *row.LastSeenUp
	case row.UpdatedAt != nil:
		last = *row.UpdatedAt
	default:
		last = row.CreatedAt
	}
	if last.IsZero() {
		return false
	}
	d := now.Sub(last)
	if d < 0 {
		d = -d
	}
	return d <= downTime
}

func nonZero(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// FormatTime renders a time as Magnum does (Python isoformat of an aware UTC
// datetime): "2006-01-02T15:04:05[.ffffff]+00:00".
func FormatTime(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += "." + pad6(us)
	}
	return s + "+00:00"
}

// FormatTimePtr is FormatTime for a nullable time (nil → nil).
func FormatTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := FormatTime(*t)
	return &s
}

func pad6(n int) string {
	b := []byte("000000")
	for i := 5; i >= 0 && n > 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b)
}
