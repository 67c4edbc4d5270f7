package reconcile_test

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/openkeel/openkeel-magnum/internal/reconcile"
)

// TestNewCAPIRequiresWiring checks the configuration errors of NewCAPI;
// the reconciler itself runs against a real API server in test/envtest.
func TestNewCAPIRequiresWiring(t *testing.T) {
	e := newEnv(t)
	for name, o := range map[string]reconcile.CAPIOptions{
		"no conductor": {Config: &rest.Config{Host: "https://127.0.0.1:1"}},
		"no config":    {Conductor: e.c},
	} {
		if _, err := reconcile.NewCAPI(o); err == nil || !strings.Contains(err.Error(), "required") {
			t.Errorf("%s: NewCAPI = %v, want a configuration error", name, err)
		}
	}
}
