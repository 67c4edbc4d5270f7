package api

import (
	"net/http"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
)

func (s *server) registerCredentials() {
	s.register("credential.patch", s.rotateCredential)
}

// rotateCredential is PATCH /v1/credentials/{cluster_ident} (routes.md
// #30, 1.12+): credential:rotate with the caller's target (no admin
// bypass, no all-projects lookup), then the driver's rotation,
// synchronously; 202 {"uuid"}.
func (s *server) rotateCredential(w http.ResponseWriter, r *http.Request) error {
	rc := ngCaller(r)
	if err := s.Enforce(r, "credential:rotate", nil); err != nil {
		return err
	}
	c := s.opts.Conductor
	cl, err := c.GetCluster(r.Context(), r.PathValue("cluster_ident"), conductor.ScopeFor(rc, false))
	if err != nil {
		return err
	}
	if err := c.RotateCredential(r.Context(), rc, cl); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, map[string]any{"uuid": cl.UUID})
}
