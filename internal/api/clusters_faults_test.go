package api

import (
	"encoding/json"
	"testing"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// A failed nodegroup whose status_reason is NULL shows null in faults, as
// Magnum's {ng.name: ng.status_reason} does (Magnum's sample database:
// k8s-failed).
func TestClusterFaultsKeepNullReason(t *testing.T) {
	failed, ok := magnum.StatusCreateFailed, magnum.StatusCreateComplete
	reason := "boom"
	cl := &magnum.Cluster{Status: &failed}
	ngs := []magnum.NodeGroup{
		{Name: "default-master", Status: &failed},
		{Name: "default-worker", Status: &failed, StatusReason: &reason},
		{Name: "extra", Status: &ok},
	}
	b, err := json.Marshal(clusterFaults(cl, ngs))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"default-master":null,"default-worker":"boom"}`; string(b) != want {
		t.Errorf("faults = %s, want %s", b, want)
	}
	cl.Status = &ok
	if f := clusterFaults(cl, ngs); f != nil {
		t.Errorf("faults of a healthy cluster = %v, want nil", f)
	}
}
