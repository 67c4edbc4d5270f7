package conductor

import (
	"context"
	"errors"
	"fmt"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// ScopeFor returns the database scope of a caller: every project when
// allProjects (the handler evaluated an *_all_projects rule for an admin),
// otherwise the caller's project, or the caller's user when the token has
// no project (Magnum's _add_tenant_filters).
func ScopeFor(rc *magnum.RequestContext, allProjects bool) db.Scope {
	if allProjects {
		return db.AllProjects
	}
	if rc == nil {
		return db.Scope{}
	}
	if rc.ProjectID != "" {
		return db.ProjectScope(rc.ProjectID)
	}
	return db.Scope{UserID: rc.UserID}
}

// GetCluster looks a cluster up by UUID (when ident is UUID-like) or by
// name, within scope: none → 404 ClusterNotFound (a cluster of another
// project is invisible, hence also 404), several names → 409.
//
// Magnum: magnum/api/utils.py:99 (get_resource).
func (c *Conductor) GetCluster(ctx context.Context, ident string, scope db.Scope) (*magnum.Cluster, error) {
	return getCluster(ctx, &c.DB.Queries, ident, scope)
}

func getCluster(ctx context.Context, q *db.Queries, ident string, scope db.Scope) (*magnum.Cluster, error) {
	if magnum.IsUUIDLike(ident) {
		cl, err := q.GetClusterByUUID(ctx, ident, scope)
		if errors.Is(err, db.ErrNotFound) {
			return nil, magnum.ClusterNotFound(ident)
		}
		if err != nil {
			return nil, fmt.Errorf("get cluster %s: %w", ident, err)
		}
		return cl, nil
	}
	rows, err := q.GetClustersByName(ctx, ident, scope)
	if err != nil {
		return nil, fmt.Errorf("get cluster %s: %w", ident, err)
	}
	switch len(rows) {
	case 0:
		return nil, magnum.ClusterNotFound(ident)
	case 1:
		return &rows[0], nil
	}
	return nil, magnum.MultipleClusters()
}
