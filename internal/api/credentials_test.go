package api_test

import (
	"testing"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func TestCredentialRotation(t *testing.T) {
	e := ngNewEnv(t)
	e.seed()
	path := "/v1/credentials/" + ngClusterUUID
	t.Run("needs 1.12", func(t *testing.T) {
		e.expect(e.do(ngMember, "1.11", "PATCH", path, nil), 406, "")
	})
	t.Run("202 with the cluster uuid", func(t *testing.T) {
		r := e.do(ngMember, "1.12", "PATCH", "/v1/credentials/c1", nil)
		e.expect(r, 202, "")
		if r.body["uuid"] != ngClusterUUID {
			t.Errorf("body %s", r.raw)
		}
	})
	t.Run("no admin bypass", func(t *testing.T) {
		e.expect(e.do(ngCaller{"p1", "u9", "admin"}, "1.12", "PATCH", path, nil), 403,
			"Policy doesn't allow credential:rotate to be performed.")
	})
	t.Run("another project's cluster is not found", func(t *testing.T) {
		e.expect(e.do(ngOther, "1.12", "PATCH", path, nil), 404, "Cluster "+ngClusterUUID+" could not be found.")
	})
	t.Run("status guard", func(t *testing.T) {
		cl, _ := e.db.GetClusterByUUID(t.Context(), ngClusterUUID, db.AllProjects)
		cl.Status = ngPtr(magnum.StatusCreateInProgress)
		if err := e.db.UpdateCluster(t.Context(), cl, "status"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.do(ngMember, "1.12", "PATCH", path, nil), 400,
			`magnum.conductor.handlers.credential_conductor when cluster status is "CREATE_IN_PROGRESS" is not supported.`)
	})
	t.Run("driver without rotation", func(t *testing.T) {
		cl, _ := e.db.GetClusterByUUID(t.Context(), ngClusterUUID, db.AllProjects)
		cl.Status = ngPtr(magnum.StatusUpdateFailed)
		cl.Labels = map[string]string{"fake_no_credential_rotation": "true"}
		if err := e.db.UpdateCluster(t.Context(), cl, "status", "labels"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.do(ngMember, "1.12", "PATCH", path, nil), 400, "Credential rotation is not supported by driver.")
	})
	t.Run("other methods are not allowed", func(t *testing.T) {
		e.expect(e.do(ngMember, "1.12", "GET", path, nil), 405, "")
	})
}
