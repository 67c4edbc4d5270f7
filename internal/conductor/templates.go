package conductor

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// TemplateScopeFor returns the template visibility of the caller
// (logic.md §3): every template when the caller is an admin and an
// *_all_projects rule allowed it; otherwise the caller's project (or user,
// for a token without a project) plus public templates that are not
// hidden, plus public hidden templates for admins.
func (c *Conductor) TemplateScopeFor(rc *magnum.RequestContext, allProjects bool) db.TemplateScope {
	if rc == nil {
		return db.TemplateScope{Scope: db.Scope{UserID: "\x00no-caller"}}
	}
	if rc.IsAdmin && allProjects {
		return db.TemplateScope{Scope: db.AllProjects}
	}
	s := db.TemplateScope{PublicHidden: rc.IsAdmin}
	if rc.ProjectID != "" {
		s.ProjectID = rc.ProjectID
	} else {
		// Magnum filters on user_id = NULL when the token carries neither;
		// no row has an empty user, so this matches only public rows.
		s.UserID = rc.UserID
		if s.UserID == "" {
			s.UserID = "\x00no-user"
		}
	}
	return s
}

// GetClusterTemplate resolves ident within scope: a UUID-like ident is
// looked up by uuid, anything else by name (logic.md §13). Not found →
// ClusterTemplateNotFound (404); a name matching several templates → 409.
func (c *Conductor) GetClusterTemplate(ctx context.Context, ident string, scope db.TemplateScope) (*magnum.ClusterTemplate, error) {
	if magnum.IsUUIDLike(ident) {
		t, err := c.DB.GetClusterTemplateByUUID(ctx, ident, scope)
		if errors.Is(err, db.ErrNotFound) {
			return nil, magnum.ClusterTemplateNotFound(ident)
		}
		if err != nil {
			return nil, fmt.Errorf("get cluster template %s: %w", ident, err)
		}
		return t, nil
	}
	return c.getClusterTemplateByName(ctx, ident, scope)
}

// GetClusterTemplateByRef resolves a template reference the way Magnum's
// ClusterTemplate.get does (cluster create): an integer-like ident is a
// database id, a UUID-like ident a uuid, anything else a name.
func (c *Conductor) GetClusterTemplateByRef(ctx context.Context, ident string, scope db.TemplateScope) (*magnum.ClusterTemplate, error) {
	if id, err := strconv.ParseInt(ident, 10, 64); err == nil && strconv.FormatInt(id, 10) == ident {
		t, err := c.DB.GetClusterTemplateByID(ctx, id, scope)
		if errors.Is(err, db.ErrNotFound) {
			return nil, magnum.ClusterTemplateNotFound(ident)
		}
		if err != nil {
			return nil, fmt.Errorf("get cluster template %s: %w", ident, err)
		}
		return t, nil
	}
	return c.GetClusterTemplate(ctx, ident, scope)
}

func (c *Conductor) getClusterTemplateByName(ctx context.Context, name string, scope db.TemplateScope) (*magnum.ClusterTemplate, error) {
	rows, err := c.DB.GetClusterTemplatesByName(ctx, name, scope)
	if err != nil {
		return nil, fmt.Errorf("get cluster template %s: %w", name, err)
	}
	switch len(rows) {
	case 0:
		return nil, magnum.ClusterTemplateNotFound(name)
	case 1:
		return &rows[0], nil
	}
	return nil, magnum.MultipleClusterTemplates()
}
