package conductor

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Projects is implemented by an OpenStack back end that can tell whether a
// Keystone project exists (quota create checks it). When Conductor.OpenStack
// does not implement it, every project is accepted.
type Projects interface {
	// ProjectExists reports whether the project is known to Keystone.
	ProjectExists(ctx context.Context, projectID string) (bool, error)
}

// ListQuotas lists quota rows with Magnum's pagination; the marker is a
// quota id (unknown → 404 "Quota could not be found: quota id <n> .").
// projectID "" lists every project.
func (c *Conductor) ListQuotas(ctx context.Context, projectID string, p ListParams) ([]magnum.Quota, error) {
	o := p.options()
	if o.Marker != "" {
		// Magnum: Quota.get_by_id runs before the list, whatever the filter.
		id, perr := strconv.ParseInt(o.Marker, 10, 64)
		if perr != nil {
			return nil, magnum.QuotaNotFoundByID(o.Marker)
		}
		if _, err := c.DB.GetQuotaByID(ctx, id); errors.Is(err, db.ErrNotFound) {
			return nil, magnum.QuotaNotFoundByID(o.Marker)
		} else if err != nil {
			return nil, fmt.Errorf("get quota %s: %w", o.Marker, err)
		}
	}
	rows, err := c.DB.ListQuotas(ctx, db.QuotaFilter{ProjectID: projectID}, o)
	if err != nil {
		return nil, ngListError(err, func(m string) error { return magnum.QuotaNotFoundByID(m) }, o)
	}
	return rows, nil
}

// GetQuota returns the stored quota of (project, resource), or nil when
// there is none (the API then shows the configured default).
func (c *Conductor) GetQuota(ctx context.Context, projectID, resource string) (*magnum.Quota, error) {
	q, err := c.DB.GetQuota(ctx, projectID, resource)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get quota %s/%s: %w", projectID, resource, err)
	}
	return q, nil
}

// DefaultClusterQuota is [quotas]/max_clusters_per_project (Magnum's
// default 20 when the setting is zero, i.e. not configured).
func (c *Conductor) DefaultClusterQuota() int {
	if c.Settings.MaxClustersPerProject > 0 {
		return c.Settings.MaxClustersPerProject
	}
	return 20
}

// CheckProject is Magnum's enforce_valid_project_id_on_create: the project
// must exist in Keystone (404 ProjectNotFound). It is a no-op when the
// OpenStack back end cannot look projects up.
//
// Magnum: magnum/api/validation.py:134-151.
func (c *Conductor) CheckProject(ctx context.Context, projectID string) error {
	p, ok := c.OpenStack.(Projects)
	if !ok || p == nil {
		return nil
	}
	found, err := p.ProjectExists(ctx, projectID)
	if err != nil {
		return err
	}
	if !found {
		return magnum.ProjectNotFound(projectID)
	}
	return nil
}

// CreateQuota inserts a quota (a second one for the same project and
// resource → 409 QuotaAlreadyExists) and sets its ID and CreatedAt.
func (c *Conductor) CreateQuota(ctx context.Context, q *magnum.Quota) error {
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		if _, err := tx.GetQuota(ctx, q.ProjectID, q.Resource); err == nil {
			return magnum.QuotaAlreadyExists(q.ProjectID, q.Resource)
		} else if !errors.Is(err, db.ErrNotFound) {
			return fmt.Errorf("get quota: %w", err)
		}
		if err := tx.CreateQuota(ctx, q); err != nil {
			if errors.Is(err, db.ErrDuplicate) {
				return magnum.QuotaAlreadyExists(q.ProjectID, q.Resource)
			}
			return fmt.Errorf("insert quota: %w", err)
		}
		return nil
	})
	return err
}

// UpdateQuota sets the hard limit of an existing quota (no row → 404
// QuotaNotFound) and returns the saved row.
//
// Magnum: magnum/db/sqlalchemy/api.py update_quota (SELECT … FOR UPDATE).
func (c *Conductor) UpdateQuota(ctx context.Context, projectID, resource string, hardLimit int) (*magnum.Quota, error) {
	var out *magnum.Quota
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		q := tx.ForUpdate()
		row, err := q.GetQuota(ctx, projectID, resource)
		if errors.Is(err, db.ErrNotFound) {
			return magnum.QuotaNotFound(projectID, resource)
		}
		if err != nil {
			return fmt.Errorf("get quota: %w", err)
		}
		row.HardLimit = hardLimit
		if err := q.UpdateQuota(ctx, row, "hard_limit"); err != nil {
			return fmt.Errorf("update quota: %w", err)
		}
		out = row
		return nil
	})
	return out, err
}

// DeleteQuota deletes the quota of (project, resource); none → 404.
func (c *Conductor) DeleteQuota(ctx context.Context, projectID, resource string) error {
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		return tx.DeleteQuota(ctx, projectID, resource)
	})
	if errors.Is(err, db.ErrNotFound) {
		return magnum.QuotaNotFound(projectID, resource)
	}
	if err != nil {
		return fmt.Errorf("delete quota: %w", err)
	}
	return nil
}
