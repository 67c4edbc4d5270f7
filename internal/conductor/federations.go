package conductor

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Federations are stored and listed per project; no driver implements
// them (Magnum's federation conductor raises NotImplementedError for every
// operation after the API has answered).
//
// Deviation: Magnum never stores a federation (the cast fails in the
// conductor, so a POST answers 202 and nothing is created); we store the
// object the API built, save patches and delete rows synchronously, as the
// reference's own API tests simulate, so that the resource is usable.

// GetFederation resolves a federation by uuid (UUID-like ident) or name
// within scope: none → 404 FederationNotFound(ident), several → 409.
func (c *Conductor) GetFederation(ctx context.Context, ident string, scope db.Scope) (*magnum.Federation, error) {
	if magnum.IsUUIDLike(ident) {
		f, err := c.DB.GetFederationByUUID(ctx, ident, scope)
		if errors.Is(err, db.ErrNotFound) {
			return nil, magnum.FederationNotFound(ident)
		}
		if err != nil {
			return nil, fmt.Errorf("get federation %s: %w", ident, err)
		}
		return f, nil
	}
	rows, err := c.DB.GetFederationsByName(ctx, ident, scope)
	if err != nil {
		return nil, fmt.Errorf("get federation %s: %w", ident, err)
	}
	switch len(rows) {
	case 0:
		return nil, magnum.FederationNotFound(ident)
	case 1:
		return &rows[0], nil
	}
	return nil, magnum.MultipleFederations()
}

// ListFederations lists the federations in scope with Magnum's pagination;
// an unknown marker → 404 FederationNotFound(marker).
func (c *Conductor) ListFederations(ctx context.Context, scope db.Scope, p ListParams) ([]magnum.Federation, error) {
	o := p.options()
	if o.Marker != "" {
		if _, err := c.DB.GetFederationByUUID(ctx, o.Marker, scope); errors.Is(err, db.ErrNotFound) {
			return nil, magnum.FederationNotFound(o.Marker)
		} else if err != nil {
			return nil, fmt.Errorf("get federation %s: %w", o.Marker, err)
		}
	}
	rows, err := c.DB.ListFederations(ctx, scope, o)
	if err != nil {
		return nil, ngListError(err, func(m string) error { return magnum.FederationNotFound(m) }, o)
	}
	return rows, nil
}

// CreateFederation stores a federation built by the API (uuid and project
// set) and sets its ID and CreatedAt. Without a name, one is generated
// ("<greek letter>-<1..24>-federation"); a status the client did not send
// is CREATE_IN_PROGRESS.
func (c *Conductor) CreateFederation(ctx context.Context, f *magnum.Federation) error {
	if f.Name == "" {
		f.Name = fedGenerateName()
	}
	if f.Status == nil {
		f.Status = ngStatusPtr(magnum.StatusCreateInProgress)
	}
	return c.DB.InTx(ctx, func(tx *db.Tx) error {
		if err := tx.CreateFederation(ctx, f); err != nil {
			if errors.Is(err, db.ErrDuplicate) {
				return magnum.FederationAlreadyExists(f.UUID)
			}
			return fmt.Errorf("insert federation: %w", err)
		}
		return nil
	})
}

// FederationPatchColumns are the federation columns a PATCH may change.
var FederationPatchColumns = []string{"member_ids", "properties"}

// UpdateFederation writes the patched member_ids and properties of f.
func (c *Conductor) UpdateFederation(ctx context.Context, f *magnum.Federation) error {
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		q := tx.ForUpdate()
		cur, err := q.GetFederationByUUID(ctx, f.UUID, db.AllProjects)
		if err != nil {
			return err
		}
		cur.MemberIDs, cur.Properties = f.MemberIDs, f.Properties
		return q.UpdateFederation(ctx, cur, FederationPatchColumns...)
	})
	if errors.Is(err, db.ErrNotFound) {
		return magnum.FederationNotFound(f.UUID)
	}
	if err != nil {
		return fmt.Errorf("update federation %s: %w", f.UUID, err)
	}
	return nil
}

// DeleteFederation deletes the federation row.
func (c *Conductor) DeleteFederation(ctx context.Context, uuid string) error {
	err := c.DB.InTx(ctx, func(tx *db.Tx) error { return tx.DeleteFederation(ctx, uuid) })
	if errors.Is(err, db.ErrNotFound) {
		return magnum.FederationNotFound(uuid)
	}
	if err != nil {
		return fmt.Errorf("delete federation %s: %w", uuid, err)
	}
	return nil
}

// GetClusterByUUIDOnly looks a cluster up by its uuid only (federation
// join/unjoin values), within scope: none → 404 ClusterNotFound.
func (c *Conductor) GetClusterByUUIDOnly(ctx context.Context, uuid string, scope db.Scope) (*magnum.Cluster, error) {
	cl, err := c.DB.GetClusterByUUID(ctx, uuid, scope)
	if errors.Is(err, db.ErrNotFound) {
		return nil, magnum.ClusterNotFound(uuid)
	}
	if err != nil {
		return nil, fmt.Errorf("get cluster %s: %w", uuid, err)
	}
	return cl, nil
}

// fedGreekLetters are the words of Magnum's name generator
// (magnum/common/name_generator.py).
var fedGreekLetters = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
	"kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega"}

// fedGenerateName returns "<greek letter>-<1..24>-federation".
func fedGenerateName() string {
	w, _ := rand.Int(rand.Reader, big.NewInt(int64(len(fedGreekLetters))))
	n, _ := rand.Int(rand.Reader, big.NewInt(24))
	return fmt.Sprintf("%s-%d-federation", fedGreekLetters[w.Int64()], n.Int64()+1)
}
