package db

import (
	"context"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var federationTable = &table[magnum.Federation]{
	name: "federation",
	cols: []string{"created_at", "updated_at", "project_id", "uuid", "name", "hostcluster_id", "member_ids",
		"status", "status_reason", "properties"},
	markerCol: "uuid",
	id:        func(v *magnum.Federation) *int64 { return &v.ID },
	created:   func(v *magnum.Federation) *time.Time { return &v.CreatedAt },
	updated:   func(v *magnum.Federation) **time.Time { return &v.UpdatedAt },
	binds: func(q *Queries, v *magnum.Federation) []any {
		return []any{ts{&v.CreatedAt, q.d}, nts{&v.UpdatedAt, q.d}, str{&v.ProjectID}, str{&v.UUID}, str{&v.Name},
			&v.HostClusterID, jsonList{&v.MemberIDs}, &v.Status, &v.StatusReason, jsonMap{&v.Properties}}
	},
}

func federationCond(s Scope) (cond, error) {
	var c cond
	w, args, err := s.where(false)
	if err != nil {
		return c, err
	}
	c.add(w, args...)
	return c, nil
}

// GetFederationByUUID returns the federation with uuid.
func (q *Queries) GetFederationByUUID(ctx context.Context, uuid string, s Scope) (*magnum.Federation, error) {
	c, err := federationCond(s)
	if err != nil {
		return nil, err
	}
	c.add("uuid = ?", uuid)
	return getOne(ctx, q, federationTable, c)
}

// GetFederationsByName returns the federations in scope whose name matches
// (case-insensitively, as on MariaDB).
func (q *Queries) GetFederationsByName(ctx context.Context, name string, s Scope) ([]magnum.Federation, error) {
	c, err := federationCond(s)
	if err != nil {
		return nil, err
	}
	c.add(q.d.nameEquals("name"), name)
	return all(ctx, q, federationTable, c, "id ASC", 0)
}

// ListFederations lists federations with Magnum's pagination.
func (q *Queries) ListFederations(ctx context.Context, s Scope, o ListOptions) ([]magnum.Federation, error) {
	c, err := federationCond(s)
	if err != nil {
		return nil, err
	}
	return list(ctx, q, federationTable, c, o)
}

// CreateFederation inserts v (member_ids [] and properties {} when unset)
// and sets v.ID and v.CreatedAt.
func (q *Queries) CreateFederation(ctx context.Context, v *magnum.Federation) error {
	if v.MemberIDs == nil {
		v.MemberIDs = []string{}
	}
	if v.Properties == nil {
		v.Properties = map[string]string{}
	}
	return insert(ctx, q, federationTable, v)
}

// UpdateFederation writes the named columns of v and sets updated_at.
func (q *Queries) UpdateFederation(ctx context.Context, v *magnum.Federation, cols ...string) error {
	return update(ctx, q, federationTable, v, cols)
}

// DeleteFederation deletes the federation with uuid.
func (q *Queries) DeleteFederation(ctx context.Context, uuid string) error {
	var c cond
	c.add("uuid = ?", uuid)
	return deleteOne(ctx, q, "federation", c)
}
