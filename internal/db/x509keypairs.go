package db

import (
	"context"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var x509KeyPairTable = &table[magnum.X509KeyPair]{
	name: "x509keypair",
	cols: []string{"created_at", "updated_at", "uuid", "certificate", "private_key", "project_id", "user_id",
		"intermediates", "private_key_passphrase"},
	markerCol: "uuid",
	id:        func(v *magnum.X509KeyPair) *int64 { return &v.ID },
	created:   func(v *magnum.X509KeyPair) *time.Time { return &v.CreatedAt },
	updated:   func(v *magnum.X509KeyPair) **time.Time { return &v.UpdatedAt },
	binds: func(q *Queries, v *magnum.X509KeyPair) []any {
		return []any{ts{&v.CreatedAt, q.d}, nts{&v.UpdatedAt, q.d}, str{&v.UUID}, &v.Certificate, &v.PrivateKey,
			str{&v.ProjectID}, str{&v.UserID}, &v.Intermediates, &v.PrivateKeyPassphrase}
	},
}

// GetX509KeyPairByUUID returns the key pair with uuid.
func (q *Queries) GetX509KeyPairByUUID(ctx context.Context, uuid string, s Scope) (*magnum.X509KeyPair, error) {
	var c cond
	w, args, err := s.where(true)
	if err != nil {
		return nil, err
	}
	c.add(w, args...)
	c.add("uuid = ?", uuid)
	return getOne(ctx, q, x509KeyPairTable, c)
}

// ListX509KeyPairs lists key pairs with Magnum's pagination.
func (q *Queries) ListX509KeyPairs(ctx context.Context, s Scope, o ListOptions) ([]magnum.X509KeyPair, error) {
	var c cond
	w, args, err := s.where(true)
	if err != nil {
		return nil, err
	}
	c.add(w, args...)
	return list(ctx, q, x509KeyPairTable, c, o)
}

// CreateX509KeyPair inserts v and sets v.ID and v.CreatedAt.
func (q *Queries) CreateX509KeyPair(ctx context.Context, v *magnum.X509KeyPair) error {
	return insert(ctx, q, x509KeyPairTable, v)
}

// UpdateX509KeyPair writes the named columns of v and sets updated_at.
func (q *Queries) UpdateX509KeyPair(ctx context.Context, v *magnum.X509KeyPair, cols ...string) error {
	return update(ctx, q, x509KeyPairTable, v, cols)
}

// DeleteX509KeyPair deletes the key pair with uuid.
func (q *Queries) DeleteX509KeyPair(ctx context.Context, uuid string) error {
	var c cond
	c.add("uuid = ?", uuid)
	return deleteOne(ctx, q, "x509keypair", c)
}
