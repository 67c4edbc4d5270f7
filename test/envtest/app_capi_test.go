package envtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openkeel/openkeel-magnum/internal/app"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/config"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/testutil/kubetest"
)

// TestAppCAPI wires the service as `openkeel-magnum reconciler` does with
// [capi]/enabled = true: the conductor from app.NewConductor creates a
// cluster on a template of the k8s_cluster_api_ubuntu entry point, the
// Cluster API objects appear in the namespace, and the watch reconciler
// from app.NewCAPIReconciler brings the cluster to CREATE_COMPLETE while
// Sim plays the controllers. Keystone and Nova are a local fake.
func TestAppCAPI(t *testing.T) {
	env := kubetest.Start(t)
	w := newWorld(t, env)
	fos := newFakeKeystoneNova(t)

	tmpl := *w.tmpl
	tmpl.ID, tmpl.UUID, tmpl.Name = 0, conductor.NewUUID(), "capi-ubuntu"
	ep := "k8s_cluster_api_ubuntu"
	tmpl.Driver = &ep
	if err := w.db.CreateClusterTemplate(t.Context(), &tmpl); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := config.Defaults()
	opts.CAPI.Enabled = true
	opts.CAPI.Kubeconfig = kubeconfig
	opts.CAPI.Namespace = w.ns
	opts.CAPI.ResyncInterval = 1
	opts.KeystoneAuthtoken.AuthURL = fos.URL + "/v3"
	opts.KeystoneAuthtoken.Username = "magnum"
	opts.KeystoneAuthtoken.Password = "secret"
	opts.KeystoneAuthtoken.ProjectName = "service"
	opts.KeystoneAuthtoken.RegionName = "RegionOne"
	opts.X509.RSAKeySize = 1024

	cond, err := app.NewConductor(opts, app.ModeAllInOne, w.db, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cond.Drivers.Lookup(ep); err != nil {
		t.Fatalf("driver registry: %v", err)
	}

	catalog := fmt.Sprintf(`[{"type":"compute","name":"nova","endpoints":[{"interface":"public","region":"RegionOne","url":%q}]}]`,
		fos.URL+"/compute/v2.1")
	user := &magnum.RequestContext{ProjectID: "p1", UserID: "u1", AuthToken: "user-token",
		Roles: []string{"member"}, ServiceCatalog: []byte(catalog)}
	cl, err := cond.CreateCluster(magnum.WithRequestContext(t.Context(), user), user, conductor.ClusterCreate{
		Template: &tmpl, MasterCount: 1, NodeCount: 1, MergeLabels: true, CreateTimeout: 60,
	})
	if err != nil {
		t.Fatalf("create cluster: %v (Keystone/Nova requests: %v)", err, fos.requests())
	}
	got := w.cluster(t, cl.UUID)
	if got == nil || got.StackID == nil || *got.StackID == "" || str((*string)(got.Status)) != string(magnum.StatusCreateInProgress) {
		t.Fatalf("after create: %+v (reason %q)", got, str(got.StatusReason))
	}
	stack := *got.StackID

	var capiCluster clusterv1.Cluster
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: stack}, &capiCluster); err != nil {
		t.Fatalf("CAPI Cluster %s/%s: %v", w.ns, stack, err)
	}
	if capiCluster.Spec.Topology.ClassRef.Name == "" {
		t.Errorf("CAPI Cluster %s has no ClusterClass", stack)
	}
	if !fos.created() {
		t.Errorf("no application credential was created in Keystone (requests: %v)", fos.requests())
	}

	r, err := app.NewCAPIReconciler(opts, cond, quietLog)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("reconciler: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("reconciler did not stop")
		}
	}()
	w.sim.MarkReady(stack)
	w.waitFor(t, "CREATE_COMPLETE", converge, w.statusIs(t, cl.UUID, magnum.StatusCreateComplete))
}

// fakeKeystoneNova answers what the application-credential and
// server-group stores ask: the user's token roles, credential creation
// and server groups.
type fakeKeystoneNova struct {
	*httptest.Server
	mu     sync.Mutex
	log    []string
	creds  int
	groups []map[string]any
}

func newFakeKeystoneNova(t *testing.T) *fakeKeystoneNova {
	f := &fakeKeystoneNova{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeKeystoneNova) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func (f *fakeKeystoneNova) created() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.creds > 0
}

func (f *fakeKeystoneNova) serve(rw http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, r.Method+" "+r.URL.Path)
	reply := func(status int, body any) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(status)
		_ = json.NewEncoder(rw).Encode(body)
	}
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && p == "/v3/auth/tokens":
		reply(http.StatusOK, map[string]any{"token": map[string]any{
			"roles": []map[string]string{{"id": "r1", "name": "member"}},
			"user":  map[string]string{"id": "u1"}, "project": map[string]string{"id": "p1"},
		}})
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/v3/users/") && strings.HasSuffix(p, "/application_credentials"):
		var body struct {
			AC struct {
				Name  string           `json:"name"`
				Roles []map[string]any `json:"roles"`
			} `json:"application_credential"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.creds++
		reply(http.StatusCreated, map[string]any{"application_credential": map[string]any{
			"id": fmt.Sprintf("ac-%d", f.creds), "secret": "s3cr3t", "name": body.AC.Name,
			"project_id": "p1", "roles": body.AC.Roles, "unrestricted": false,
		}})
	case r.Method == http.MethodGet && p == "/compute/v2.1/os-server-groups":
		reply(http.StatusOK, map[string]any{"server_groups": f.groups})
	case r.Method == http.MethodPost && p == "/compute/v2.1/os-server-groups":
		var body struct {
			SG map[string]any `json:"server_group"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		g := body.SG
		g["id"] = fmt.Sprintf("sg-%d", len(f.groups)+1)
		g["project_id"] = "p1"
		f.groups = append(f.groups, g)
		reply(http.StatusOK, map[string]any{"server_group": g})
	default:
		reply(http.StatusNotFound, map[string]any{"error": map[string]any{"code": 404, "message": "not faked"}})
	}
}
