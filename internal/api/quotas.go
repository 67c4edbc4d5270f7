package api

import (
	"net/http"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func (s *server) registerQuotas() {
	s.register("quota.get_all", s.listQuotas)
	s.register("quota.get_one", s.getQuota)
	s.register("quota.post", s.createQuota)
	s.register("quota.patch", s.patchQuota)
	s.register("quota.delete", s.deleteQuota)
}

// quotaAttrs are the attributes of WSME's Quota type; created_at and
// updated_at are read-only.
var quotaAttrs = []string{"id", "hard_limit", "project_id", "resource", "created_at", "updated_at"}

// quotaInput is a parsed Quota body with WSME's defaults (hard_limit 1,
// resource Cluster, project_id None).
type quotaInput struct {
	id        *int
	hardLimit int
	projectID *string
	resource  string
}

func parseQuota(r *http.Request, arg string) (*quotaInput, error) {
	b, err := readWSBody(r, arg)
	if err != nil {
		return nil, err
	}
	if err := b.checkAttributes(quotaAttrs); err != nil {
		return nil, err
	}
	in := &quotaInput{hardLimit: 1, resource: magnum.QuotaResourceCluster}
	if in.id, err = b.optInt("id", magnum.RangeID); err != nil {
		return nil, err
	}
	hl, err := b.optInt("hard_limit", magnum.RangeHardLimit)
	if err != nil {
		return nil, err
	}
	if hl != nil {
		in.hardLimit = *hl
	}
	if in.projectID, err = b.optString("project_id", 1, magnum.StringMaxLength, nil, ""); err != nil {
		return nil, err
	}
	res, err := b.optEnum("resource", []string{magnum.QuotaResourceCluster})
	if err != nil {
		return nil, err
	}
	if res != nil {
		in.resource = *res
	}
	if err := b.readonly("created_at", "updated_at"); err != nil {
		return nil, err
	}
	return in, nil
}

// quotaView is Quota.convert of a stored row.
func quotaView(q *magnum.Quota) map[string]any {
	return map[string]any{
		"id": q.ID, "hard_limit": q.HardLimit, "project_id": q.ProjectID, "resource": q.Resource,
		"created_at": FormatTime(q.CreatedAt), "updated_at": ngTime(FormatTimePtr(q.UpdatedAt)),
	}
}

// listQuotas is GET /v1/quotas (routes.md #22).
func (s *server) listQuotas(w http.ResponseWriter, r *http.Request) error {
	rc := ngCaller(r)
	if err := s.Enforce(r, "quota:get_all", nil); err != nil {
		return err
	}
	allTenants, _ := QueryBool(r, "all_tenants")
	project := rc.ProjectID
	if rc.IsAdmin && allTenants {
		project = ""
	} else if project == "" {
		// Magnum filters on project_id = None: no row matches.
		return WriteJSON(w, http.StatusOK, map[string]any{"quotas": []any{}})
	}
	marker, limit, sortKey, sortDir, err := s.ngPageOptions(r)
	if err != nil {
		return err
	}
	rows, err := s.opts.Conductor.ListQuotas(r.Context(), project,
		conductor.ListParams{Marker: marker, Limit: limit, SortKey: sortKey, SortDir: sortDir})
	if err != nil {
		return err
	}
	items := make([]any, 0, len(rows))
	for i := range rows {
		items = append(items, quotaView(&rows[i]))
	}
	out := map[string]any{"quotas": items}
	if len(rows) > 0 && len(rows) == limit {
		out["next"] = NextLink(r, "quotas", [][2]string{{"sort_key", sortKey}, {"sort_dir", sortDir}}, limit,
			ngItoa(rows[len(rows)-1].ID))
	}
	return WriteJSON(w, http.StatusOK, out)
}

// getQuota is GET /v1/quotas/{project_id}/{resource} (routes.md #23): the
// stored quota, or the configured default.
func (s *server) getQuota(w http.ResponseWriter, r *http.Request) error {
	rc := ngCaller(r)
	if err := s.Enforce(r, "quota:get", nil); err != nil {
		return err
	}
	project, resource := r.PathValue("project_id"), r.PathValue("resource")
	if !rc.IsAdmin && project != rc.ProjectID {
		return magnum.NotAuthorizedDefault()
	}
	c := s.opts.Conductor
	q, err := c.GetQuota(r.Context(), project, resource)
	if err != nil {
		return err
	}
	if q == nil {
		// Magnum: the default object always names the Cluster resource.
		return WriteJSON(w, http.StatusOK, map[string]any{
			"hard_limit": c.DefaultClusterQuota(), "project_id": project, "resource": magnum.QuotaResourceCluster,
		})
	}
	return WriteJSON(w, http.StatusOK, quotaView(q))
}

// createQuota is POST /v1/quotas (routes.md #24): 201 with the row.
func (s *server) createQuota(w http.ResponseWriter, r *http.Request) error {
	in, err := parseQuota(r, "quota")
	if err != nil {
		return err
	}
	c := s.opts.Conductor
	if in.projectID != nil {
		// Magnum: the Keystone check is a decorator, before the policy.
		if err := c.CheckProject(r.Context(), *in.projectID); err != nil {
			return err
		}
	}
	if err := s.Enforce(r, "quota:create", nil); err != nil {
		return err
	}
	if in.projectID == nil || *in.projectID == "" {
		return magnum.QuotaProjectMissing()
	}
	q := &magnum.Quota{ProjectID: *in.projectID, Resource: in.resource, HardLimit: in.hardLimit}
	if in.id != nil {
		// Magnum honours a client-supplied id.
		q.ID = int64(*in.id)
	}
	if err := c.CreateQuota(r.Context(), q); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, quotaView(q))
}

// patchQuota is PATCH /v1/quotas/{project_id}/{resource} (routes.md #25):
// a plain Quota body whose hard_limit (default 1) is written.
//
// Deviation: Magnum also writes a client-sent "id" into the row's primary
// key; we ignore it.
func (s *server) patchQuota(w http.ResponseWriter, r *http.Request) error {
	in, err := parseQuota(r, "quotapatch")
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "quota:update", nil); err != nil {
		return err
	}
	q, err := s.opts.Conductor.UpdateQuota(r.Context(), r.PathValue("project_id"), r.PathValue("resource"), in.hardLimit)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, quotaView(q))
}

// deleteQuota is DELETE /v1/quotas/{project_id}/{resource} (routes.md #26).
func (s *server) deleteQuota(w http.ResponseWriter, r *http.Request) error {
	if err := s.Enforce(r, "quota:delete", nil); err != nil {
		return err
	}
	if err := s.opts.Conductor.DeleteQuota(r.Context(), r.PathValue("project_id"), r.PathValue("resource")); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusNoContent, nil)
}

func ngItoa(n int64) string {
	const digits = "0123456789"
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = digits[n%10]
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
