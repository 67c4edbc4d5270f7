package api

import (
	"net/http"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func (s *server) registerClusterActions() {
	s.register("cluster_actions.resize@1.7", s.resizeCluster)
	s.register("cluster_actions.resize@1.10", s.resizeCluster)
	s.register("cluster_actions.upgrade@1.7", s.upgradeClusterUnsupported)
	s.register("cluster_actions.upgrade@1.8", s.upgradeCluster)
}

// resizeCluster is POST /v1/clusters/{ident}/actions/resize (#9, #9'):
// body, zero node count below 1.10 (400), lookup in the caller's own scope
// (no all-projects rule, admins included), cluster:resize with the cluster
// as target, then the conductor (nodegroup, bounds, master rule, guard).
func (s *server) resizeCluster(w http.ResponseWriter, r *http.Request) error {
	raw, err := RequireBody(r)
	if err != nil {
		return err
	}
	b, err := clDecodeBody(raw, "cluster_resize_req", resizeBodyAttrs)
	if err != nil {
		return err
	}
	in := conductor.ClusterResize{}
	if v := b.integer("node_count"); v != nil {
		in.NodeCount = *v
	}
	if l, ok := b["nodes_to_remove"].([]string); ok {
		in.NodesToRemove = l
	}
	if v := b.str("nodegroup"); v != nil {
		in.NodeGroup = *v
	}
	if APIVersion(r).Minor < 10 && in.NodeCount == 0 {
		return magnum.ZeroNodeCountNotSupported()
	}
	rc := clCaller(r)
	c := s.opts.Conductor
	cl, err := c.GetCluster(r.Context(), r.PathValue("cluster_ident"), conductor.ScopeFor(rc, false))
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "cluster:resize", clusterTarget(cl)); err != nil {
		return err
	}
	if err := c.ResizeCluster(r.Context(), rc, cl, in); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, clObject{{"uuid", cl.UUID}})
}

// upgradeClusterUnsupported is the 1.7 upgrade: always 400 after the body
// is parsed.
func (s *server) upgradeClusterUnsupported(w http.ResponseWriter, r *http.Request) error {
	raw, err := RequireBody(r)
	if err != nil {
		return err
	}
	if _, err := clDecodeBody(raw, "cluster_upgrade_req", upgradeBodyAttrs); err != nil {
		return err
	}
	return magnum.ClusterUpgradeNotSupported()
}

// upgradeCluster is POST /v1/clusters/{ident}/actions/upgrade from 1.8
// (#10'): body, admin all-projects rule, lookup, cluster:upgrade, the
// template lookup with the caller's visibility (404/409), then the
// conductor (nodegroup, template rule, status guard as a 400, driver).
func (s *server) upgradeCluster(w http.ResponseWriter, r *http.Request) error {
	raw, err := RequireBody(r)
	if err != nil {
		return err
	}
	b, err := clDecodeBody(raw, "cluster_upgrade_req", upgradeBodyAttrs)
	if err != nil {
		return err
	}
	all, err := s.clAllProjects(r, "cluster:upgrade_all_projects")
	if err != nil {
		return err
	}
	rc := clCaller(r)
	c := s.opts.Conductor
	ctx := r.Context()
	cl, err := c.GetCluster(ctx, r.PathValue("cluster_ident"), conductor.ScopeFor(rc, all))
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "cluster:upgrade", clusterTarget(cl)); err != nil {
		return err
	}
	ref := b.str("cluster_template")
	if ref == nil {
		// Magnum looks the template up with an unset value and fails with
		// an unhandled error.
		return magnum.ServerError("'UnsetType' object has no attribute 'replace'")
	}
	t, err := c.GetClusterTemplate(ctx, *ref, c.TemplateScopeFor(rc, all))
	if err != nil {
		return err
	}
	in := conductor.ClusterUpgrade{Template: t}
	if v := b.integer("max_batch_size"); v != nil {
		in.MaxBatchSize = *v
	}
	if v := b.str("nodegroup"); v != nil {
		in.NodeGroup = *v
	}
	if err := c.UpgradeCluster(ctx, rc, cl, in); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, clObject{{"uuid", cl.UUID}})
}
