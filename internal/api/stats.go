package api

import (
	"net/http"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func (s *server) registerStats() {
	s.register("stats.get_all", s.getStats)
}

// getStats is GET /v1/stats (routes.md #31): stats:get_all, the type check,
// then non-admins may only ask for their own project; admins get every
// project unless project_id is given.
func (s *server) getStats(w http.ResponseWriter, r *http.Request) error {
	rc := ngCaller(r)
	if err := s.Enforce(r, "stats:get_all", nil); err != nil {
		return err
	}
	typ, ok := QueryString(r, "type")
	if !ok {
		typ = "cluster"
	}
	if strings.ToLower(typ) != "cluster" {
		return magnum.InvalidStatsType()
	}
	project, given := QueryString(r, "project_id")
	if !rc.IsAdmin {
		if !given || project == "" {
			project = rc.ProjectID
		}
		if project != rc.ProjectID {
			return magnum.NotAuthorizedDefault()
		}
		if project == "" {
			// Magnum filters on project_id = None: nothing is counted.
			return WriteJSON(w, http.StatusOK, map[string]any{"clusters": 0, "nodes": 0})
		}
	}
	st, err := s.opts.Conductor.ClusterStats(r.Context(), project)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"clusters": st.Clusters, "nodes": st.Nodes})
}
