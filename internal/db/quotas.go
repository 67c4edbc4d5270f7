package db

import (
	"context"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var quotaTable = &table[magnum.Quota]{
	name:      "quotas",
	cols:      []string{"created_at", "updated_at", "project_id", "resource", "hard_limit"},
	markerCol: "id",
	id:        func(v *magnum.Quota) *int64 { return &v.ID },
	created:   func(v *magnum.Quota) *time.Time { return &v.CreatedAt },
	updated:   func(v *magnum.Quota) **time.Time { return &v.UpdatedAt },
	binds: func(q *Queries, v *magnum.Quota) []any {
		return []any{ts{&v.CreatedAt, q.d}, nts{&v.UpdatedAt, q.d}, str{&v.ProjectID}, str{&v.Resource}, &v.HardLimit}
	},
}

// QuotaFilter selects quota rows; an empty ProjectID lists every project
// (admin with all_tenants).
type QuotaFilter struct {
	ProjectID string
}

// GetQuota returns the quota of (project, resource).
func (q *Queries) GetQuota(ctx context.Context, projectID, resource string) (*magnum.Quota, error) {
	var c cond
	c.add("project_id = ? AND resource = ?", projectID, resource)
	return getOne(ctx, q, quotaTable, c)
}

// GetQuotaByID returns the quota with id.
func (q *Queries) GetQuotaByID(ctx context.Context, id int64) (*magnum.Quota, error) {
	var c cond
	c.add("id = ?", id)
	return getOne(ctx, q, quotaTable, c)
}

// ListQuotas lists quotas; the marker is a quota id in decimal.
func (q *Queries) ListQuotas(ctx context.Context, f QuotaFilter, o ListOptions) ([]magnum.Quota, error) {
	var c cond
	if f.ProjectID != "" {
		c.add("project_id = ?", f.ProjectID)
	}
	return list(ctx, q, quotaTable, c, o)
}

// CreateQuota inserts v; a second quota for (project, resource) →
// ErrDuplicate.
func (q *Queries) CreateQuota(ctx context.Context, v *magnum.Quota) error {
	return insert(ctx, q, quotaTable, v)
}

// UpdateQuota writes the named columns of v (normally "hard_limit").
func (q *Queries) UpdateQuota(ctx context.Context, v *magnum.Quota, cols ...string) error {
	return update(ctx, q, quotaTable, v, cols)
}

// DeleteQuota deletes the quota of (project, resource).
func (q *Queries) DeleteQuota(ctx context.Context, projectID, resource string) error {
	var c cond
	c.add("project_id = ? AND resource = ?", projectID, resource)
	return deleteOne(ctx, q, "quotas", c)
}
