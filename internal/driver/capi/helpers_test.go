package capi

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// IDs the fake OpenStack resolves names to.
const (
	imageUbuntuID = "11111111-1111-4111-8111-111111111111"
	imageGPUID    = "22222222-2222-4222-8222-222222222222"
	extNetID      = "33333333-3333-4333-8333-333333333333"
	sgCPID        = "44444444-4444-4444-8444-444444444444"
	sgWorkerID    = "55555555-5555-4555-8555-555555555555"
	sgGPUID       = "66666666-6666-4666-8666-666666666666"
)

const (
	testStackID = "kube-abcde"
	testUUID    = "2c4a9b9e-5d5e-4a52-9e49-0c2f1ac1f0b1"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testState is a representative cluster: calico, 3 masters, a default
// worker with 2 nodes and a GPU nodegroup with its own labels.
func testState() driver.ClusterState {
	s := func(v string) *string { return &v }
	i := func(v int) *int { return &v }
	b := func(v bool) *bool { return &v }
	st := func(v magnum.Status) *magnum.Status { return &v }
	lbls := map[string]string{
		"kube_tag": "v1.31.1", "calico_tag": "v3.31.3", "availability_zone": "nova",
		"boot_volume_size": "40", "boot_volume_type": "ssd", "etcd_volume_size": "10",
		"api_server_cert_sans": "k8s.example.com, 10.0.0.10", "oidc_issuer_url": "https://idp.example.com",
		"oidc_client_id": "kubernetes", "audit_log_enabled": "true", "admission_control_list": "PodSecurity",
		"master_lb_floating_ip_enabled": "false", "container_infra_prefix": "registry.example.com/k8s",
	}
	return driver.ClusterState{
		Cluster: magnum.Cluster{
			UUID: testUUID, Name: "demo", ProjectID: "p1", UserID: "u1", ClusterTemplateID: "tpl-1",
			Keypair: s("mykey"), DockerVolumeSize: i(20), Labels: lbls,
			MasterFlavorID: s("m1.large"), FlavorID: s("m1.medium"), MasterLBEnabled: b(true),
			CreateTimeout: i(60), Status: st(magnum.StatusCreateInProgress),
			CreatedAt: testNow.Add(-10 * time.Minute),
		},
		Template: magnum.ClusterTemplate{
			UUID: "tpl-1", Name: "k8s-1.31", ImageID: s("img-ubuntu"), ExternalNetworkID: s("public"),
			NetworkDriver: s("calico"), DNSNameserver: s("8.8.8.8,1.1.1.1"), ClusterDistro: s("ubuntu"),
			COE: s("kubernetes"), HTTPProxy: s("http://proxy:3128"), NoProxy: s("localhost,10.0.0.0/8"),
			MasterLBEnabled: b(true), Labels: cloneMap(lbls),
		},
		NodeGroups: []magnum.NodeGroup{
			{UUID: "ng-master", Name: "default-master", ClusterID: testUUID, Role: s("master"), IsDefault: b(true),
				NodeCount: i(3), Labels: cloneMap(lbls), Status: st(magnum.StatusCreateInProgress)},
			{UUID: "ng-worker", Name: "default-worker", ClusterID: testUUID, Role: s("worker"), IsDefault: b(true),
				NodeCount: i(2), Labels: cloneMap(lbls), Status: st(magnum.StatusCreateInProgress)},
			{UUID: "ng-gpu", Name: "gpu", ClusterID: testUUID, Role: s("gpu"), IsDefault: b(false),
				NodeCount: i(1), FlavorID: s("g1.xlarge"), ImageID: s("img-gpu"),
				Labels:     map[string]string{"availability_zone": "az-gpu", "different_failure_domain": "true"},
				NodeLabels: map[string]string{"node-role.kubernetes.io/gpu": "", "team": "ml"},
				NodeTaints: []magnum.NodeTaint{{"key": "gpu", "value": "true", "effect": "NoSchedule"}},
				Status:     st(magnum.StatusCreateInProgress)},
		},
	}
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// testResolved is what the fake OpenStack resolves for testState.
func testResolved() Resolved {
	return Resolved{
		ControlPlaneFlavor: "m1.large",
		ControlPlaneImage:  Image{ID: imageUbuntuID},
		ExternalNetworkID:  extNetID,
		ServerGroups: map[string]string{
			testStackID: sgCPID, testStackID + "-default-worker": sgWorkerID, testStackID + "-gpu": sgGPUID,
		},
		NodeGroups: map[string]ResolvedNodeGroup{
			"default-worker": {Flavor: "m1.medium", Image: Image{ID: imageUbuntuID}},
			"gpu":            {Flavor: "g1.xlarge", Image: Image{ID: imageGPUID, DiskBus: "scsi"}},
		},
	}
}

func testInput() Input {
	return Input{
		State: testState(), StackID: testStackID, Namespace: DefaultNamespace, ClassVersion: DefaultClassVersion,
		Resolved: testResolved(), DefaultVolumeType: "standard",
	}
}

var (
	casOnce sync.Once
	casVal  map[string]certs.KeyPair
	casErr  error
)

// testCAs generates the cluster certificates once per test binary.
func testCAs(t *testing.T) map[string]certs.KeyPair {
	t.Helper()
	casOnce.Do(func() {
		cc, err := certs.GenerateClusterCertificates("demo", certs.X509Options{RSAKeySize: 1024, TermOfValidity: 30})
		if err != nil {
			casErr = err
			return
		}
		casVal = map[string]certs.KeyPair{
			CAKeyKubernetes: *cc.Kubernetes, CAKeyEtcd: *cc.Etcd, CAKeyFrontProxy: *cc.FrontProxy, CAKeyAdmin: *cc.Client,
		}
	})
	if casErr != nil {
		t.Fatalf("generate CAs: %v", casErr)
	}
	return casVal
}

// fakeOpenStack implements AppCredentialStore, ServerGroups and Resolver.
type fakeOpenStack struct {
	mu           sync.Mutex
	next         int
	appCreds     map[string]AppCredential // by ID
	deleted      []string
	serverGroups map[string]string // name → ID
}

func newFakeOpenStack() *fakeOpenStack {
	return &fakeOpenStack{appCreds: map[string]AppCredential{}, serverGroups: map[string]string{}}
}

func (f *fakeOpenStack) Create(_ context.Context, cred driver.Credentials, name, _ string) (AppCredential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	ac := AppCredential{ID: fmt.Sprintf("ac-%d", f.next), Secret: fmt.Sprintf("secret-%d", f.next), Name: name, UserID: cred.UserID}
	f.appCreds[ac.ID] = ac
	return ac, nil
}

func (f *fakeOpenStack) Delete(_ context.Context, _, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.appCreds, id)
	f.deleted = append(f.deleted, id)
	return nil
}

func (f *fakeOpenStack) Ensure(_ context.Context, _ driver.Credentials, name, _ string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.serverGroups[name]; ok {
		return id, nil
	}
	id, ok := map[string]string{
		testStackID: sgCPID, testStackID + "-default-worker": sgWorkerID, testStackID + "-gpu": sgGPUID,
	}[name]
	if !ok {
		id = "sg" + name[len(testStackID):]
	}
	f.serverGroups[name] = id
	return id, nil
}

func (f *fakeOpenStack) ServerGroupNames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for n := range f.serverGroups {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (f *fakeOpenStack) FlavorName(_ context.Context, _ driver.Credentials, ref string) (string, error) {
	return ref, nil
}

func (f *fakeOpenStack) Image(_ context.Context, _ driver.Credentials, ref string) (Image, error) {
	switch ref {
	case "img-gpu":
		return Image{ID: imageGPUID, DiskBus: "scsi"}, nil
	case "img-ubuntu":
		return Image{ID: imageUbuntuID}, nil
	}
	return Image{ID: ref}, nil
}

func (f *fakeOpenStack) NetworkID(_ context.Context, _ driver.Credentials, ref string) (string, error) {
	if ref == "public" {
		return extNetID, nil
	}
	return ref, nil
}

func (f *fakeOpenStack) SubnetID(_ context.Context, _ driver.Credentials, ref string) (string, error) {
	return ref, nil
}

// serverGroupsDelete makes fakeOpenStack a ServerGroups (Delete clashes
// with AppCredentialStore.Delete, so the server group side is a view).
type fakeServerGroups struct{ *fakeOpenStack }

func (f fakeServerGroups) Delete(_ context.Context, _ driver.Credentials, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.serverGroups, name)
	return nil
}

// newTestDriver returns a driver on a fake client holding objs.
func newTestDriver(t *testing.T, objs ...client.Object) (*Driver, client.Client, *fakeOpenStack) {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource().WithReturnManagedFields().Build()
	osf := newFakeOpenStack()
	d := New(Options{
		Client: c,
		CAs: func(context.Context, magnum.Cluster) (map[string]certs.KeyPair, error) {
			return testCAs(t), nil
		},
		AppCredentials:    osf,
		ServerGroups:      fakeServerGroups{osf},
		Resolver:          osf,
		Cloud:             CloudConfig{AuthURL: "https://keystone.example.com/v3", RegionName: "RegionOne", CACert: "-----CA-----\n"},
		DefaultVolumeType: "standard",
		Now:               func() time.Time { return testNow },
		NewSuffix:         func() string { return "abcde" },
	})
	return d, c, osf
}

// golden compares got (marshalled to YAML) with testdata/name, or
// rewrites the file with -update.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	raw, err := yaml.Marshal(got)
	if err != nil {
		t.Fatalf("marshal %s: %v", name, err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if !bytes.Equal(want, raw) {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", name, cmp.Diff(string(want), string(raw)))
	}
}

// stripServerFields removes what the API server (or the fake client) adds,
// so a read-back object compares with a built one.
func stripServerFields(u *unstructured.Unstructured) {
	unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "metadata", "generation")
	unstructured.RemoveNestedField(u.Object, "metadata", "uid")
	unstructured.RemoveNestedField(u.Object, "status")
}

func magnumStatus(s string) magnum.Status { return magnum.Status(s) }
