package envtest

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/openkeel/openkeel-magnum/internal/testutil/keystonetest"
	"github.com/openkeel/openkeel-magnum/internal/testutil/kubetest"
	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

var mcUpdate = flag.Bool("update", false, "rewrite the goldens of testdata/golden")

// mcNamespace is [capi]/namespace of the stack: the default, so that the
// goldens show the namespace of driver-capi.md § 3.
const mcNamespace = "magnum-system"

// mcFieldManager is the server-side apply field manager of the driver.
const mcFieldManager = "openkeel-magnum"

// TestMagnumClientCAPI creates a cluster with python-magnumclient
// (`openstack coe`) as the demo user of the real Keystone, on the
// openkeel-magnum binary (api and reconciler processes) with the Cluster
// API driver and a real kube-apiserver, and checks:
//
//   - the objects the driver created in the namespace are exactly those of
//     the goldens in testdata/golden (one file per kind; generated names,
//     uids, key material and credentials masked; add-on manifests listed
//     as their objects and images; -update rewrites them);
//   - the two add-on ClusterResourceSets select the cluster, and their
//     Secrets have the expected keys, each a stream of Kubernetes objects;
//   - the CA Secrets hold the cluster's CAs as the API serves them;
//   - the cloud-config Secret holds an application credential that exists
//     in Keystone, and that credential and the objects are gone after
//     `openstack coe cluster delete`.
//
// Sim plays the Cluster API controllers once the objects are compared.
func TestMagnumClientCAPI(t *testing.T) {
	cli := keystonetest.Env(t, "OPENKEEL_TEST_OPENSTACK_CLI")
	id := keystonetest.New(t)
	env := kubetest.Start(t)
	ctx := t.Context()

	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mcNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	ostack := newMCOpenStack(t)
	bin := mcOpenkeelBinary(t)

	port := mcFreePort(t)
	conf := filepath.Join(dir, "magnum.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`[DEFAULT]
host = okm-envtest-capi
periodic_interval_max = 1

[api]
host = 127.0.0.1
port = %d

[database]
connection = sqlite:///%s

[keystone_authtoken]
www_authenticate_uri = %s
auth_url = %s
auth_type = password
username = magnum
password = %s
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = %s

[drivers]
default_driver = k8s_cluster_api_ubuntu

[certificates]
cert_manager_type = x509keypair

[x509]
rsa_key_size = 1024

[capi]
enabled = true
kubeconfig = %s
namespace = %s
resync_interval = 1

[glance_client]
region_name = %s

[nova_client]
region_name = %s

[neutron_client]
region_name = %s
`, port, filepath.Join(dir, "magnum.db"), id.URL, id.URL, id.Passwords["magnum"], mcRegion,
		kubeconfig, mcNamespace, mcRegion, mcRegion, mcRegion)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := mcRun(bin, "db", "upgrade", "--config-file", conf); err != nil {
		t.Fatalf("db upgrade: %v\n%s", err, out)
	}
	output := &mcLockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service output (last 12 KiB):\n%s", mcTail(output.String(), 12288))
		}
	})
	serverURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	mcStart(t, bin, conf, dir, output, serverURL, "api")
	mcStart(t, bin, conf, dir, output, "", "reconciler")
	id.PublishCatalog(t, mcRegion, "openkeel-magnum Cluster API tests", map[[2]string]string{
		{"container-infra", "magnum"}: serverURL + "/v1",
		{"image", "glance"}:           ostack.endpoint(osfake.ServiceImage),
		{"compute", "nova"}:           ostack.endpoint(osfake.ServiceCompute),
		{"network", "neutron"}:        ostack.endpoint(osfake.ServiceNetwork),
		{"identity", "keystone"}:      id.URL,
	})
	o := &mcOSC{bin: cli, home: t.TempDir(), id: id}
	demoID := id.UserID(t, "demo")

	// Template and cluster, through python-magnumclient.
	mcMustOK(t, o.as(t, "demo", "coe", "cluster", "template", "create", "okm-capi-ct",
		"--image", mcImageName, "--external-network", mcExtNetName, "--coe", "kubernetes",
		"--keypair", mcKeypair, "--flavor", mcFlavor, "--master-flavor", mcFlavor,
		"--network-driver", "calico", "--dns-nameserver", "8.8.8.8",
		"--labels", "kube_tag=v1.30.2", "-f", "json"), `"okm-capi-ct"`)
	r := o.as(t, "demo", "coe", "cluster", "create", "okm-capi", "--cluster-template", "okm-capi-ct",
		"--master-count", "1", "--node-count", "1")
	mcMustOK(t, r, "Request to create cluster ")
	clusterUUID := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.stdout), "Request to create cluster ")), " accepted")
	if len(clusterUUID) != 36 {
		t.Fatalf("no uuid in %q", r.stdout)
	}
	demoToken := id.Token(t, "demo", "demo")

	// The create answers before the driver runs (a background job): wait
	// for the Cluster, which the driver applies last.
	stack := mcWaitStackID(t, serverURL, demoToken, clusterUUID)
	mcWaitFor(t, "the Cluster "+stack, 2*time.Minute, func() bool {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"})
		return env.Client.Get(ctx, client.ObjectKey{Namespace: mcNamespace, Name: stack}, u) == nil
	})
	// The stack_id is saved when the driver's CreateCluster has returned:
	// every object of the create is in place.
	objs := mcListNamespace(t, env)
	cloud := mcFind(objs, "Secret", stack+"-cloud-config")
	if cloud == nil {
		t.Fatalf("no Secret %s-cloud-config; objects: %v", stack, mcKeys(objs))
	}
	acID, acSecret := mcAppCredential(t, cloud)
	acPath := "/users/" + demoID + "/application_credentials/" + acID
	t.Cleanup(func() {
		// A failed run leaves no credential behind in the shared Keystone.
		id.Call(t, "", http.MethodDelete, acPath, nil, nil, 204, 404)
	})

	t.Run("ObjectsMatchGoldens", func(t *testing.T) {
		m := mcMasker{replace: [][2]string{
			{clusterUUID, "<cluster-uuid>"},
			{stack, "<stack-id>"},
			{acID, "<application-credential-id>"},
			{acSecret, "<application-credential-secret>"},
			{demoID, "<demo-user-id>"},
			{strings.TrimSuffix(id.URL, "/v3"), "<keystone-url>"},
		}}
		for name, gid := range ostack.groupsByName() {
			m.replace = append(m.replace, [2]string{gid, "<server-group-id:" + strings.ReplaceAll(name, stack, "<stack-id>") + ">"})
		}
		mcCompareGoldens(t, objs, m)
	})

	t.Run("ObjectsOfTheSpec", func(t *testing.T) {
		mcCheckSpecObjects(t, objs, stack, clusterUUID, ostack.groupsByName())
	})

	t.Run("AddonSetsAndSecrets", func(t *testing.T) {
		mcCheckAddons(t, objs, stack, clusterUUID)
		// cloud.conf holds the same application credential as clouds.yaml.
		if s := mcFind(objs, "Secret", clusterUUID); s != nil {
			if cc := mcSecretData(t, s, "cloud-config-secret.yaml"); !strings.Contains(cc, "application-credential-id="+acID) {
				t.Errorf("cloud-config-secret.yaml of %s does not hold the cluster's application credential", clusterUUID)
			}
		}
	})

	t.Run("CASecretsHoldTheClusterCAs", func(t *testing.T) {
		ca := mcFind(objs, "Secret", stack+"-ca")
		if ca == nil {
			t.Fatalf("no Secret %s-ca", stack)
		}
		show := o.as(t, "demo", "coe", "ca", "show", "okm-capi")
		mcMustOK(t, show, "-----BEGIN CERTIFICATE-----")
		if got, want := strings.TrimSpace(mcSecretData(t, ca, "tls.crt")), strings.TrimSpace(show.stdout); got != want {
			t.Errorf("%s-ca tls.crt differs from `openstack coe ca show`:\nsecret:\n%s\nca show:\n%s", stack, got, want)
		}
		for suffix, typ := range map[string]string{"-etcd": "etcd", "-proxy": "front_proxy"} {
			s := mcFind(objs, "Secret", stack+suffix)
			if s == nil {
				t.Errorf("no Secret %s%s", stack, suffix)
				continue
			}
			var out struct {
				PEM string `json:"pem"`
			}
			code := mcAPI(t, serverURL, demoToken, http.MethodGet, "/v1/certificates/"+clusterUUID+"?ca_cert_type="+typ, &out)
			if code != 200 || out.PEM == "" {
				t.Errorf("GET certificates ca_cert_type=%s: HTTP %d, pem %q", typ, code, out.PEM)
				continue
			}
			if got := strings.TrimSpace(mcSecretData(t, s, "tls.crt")); got != strings.TrimSpace(out.PEM) {
				t.Errorf("%s%s tls.crt differs from the %s CA the API serves", stack, suffix, typ)
			}
		}
		// Every CA Secret's key belongs to its certificate; -sa holds the
		// admin client certificate, signed by the Kubernetes CA.
		caCert := mcParseCert(t, mcSecretData(t, ca, "tls.crt"))
		for _, suffix := range []string{"-ca", "-etcd", "-proxy", "-sa"} {
			s := mcFind(objs, "Secret", stack+suffix)
			if s == nil {
				t.Errorf("no Secret %s%s", stack, suffix)
				continue
			}
			if s.Object["type"] != "cluster.x-k8s.io/secret" {
				t.Errorf("%s%s: type %v", stack, suffix, s.Object["type"])
			}
			crt := mcParseCert(t, mcSecretData(t, s, "tls.crt"))
			blk, _ := pem.Decode([]byte(mcSecretData(t, s, "tls.key")))
			if blk == nil || blk.Type != "PRIVATE KEY" {
				t.Errorf("%s%s tls.key is not a PKCS#8 PEM key", stack, suffix)
				continue
			}
			key, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
			if err != nil {
				t.Errorf("%s%s tls.key: %v", stack, suffix, err)
				continue
			}
			if signer, ok := key.(crypto.Signer); !ok || !mcSamePublic(signer.Public(), crt.PublicKey) {
				t.Errorf("%s%s: tls.key does not match tls.crt", stack, suffix)
			}
			if suffix == "-sa" {
				if crt.Subject.CommonName != "admin" || !slices.Contains(crt.Subject.Organization, "system:masters") {
					t.Errorf("%s-sa subject %s, want CN=admin O=system:masters", stack, crt.Subject)
				}
				if err := crt.CheckSignatureFrom(caCert); err != nil {
					t.Errorf("%s-sa is not signed by the cluster CA: %v", stack, err)
				}
			} else if !crt.IsCA {
				t.Errorf("%s%s tls.crt is not a CA certificate", stack, suffix)
			}
		}
	})

	t.Run("ApplicationCredentialInKeystone", func(t *testing.T) {
		var out struct {
			AC struct {
				ID, Name string
				Roles    []struct{ Name string }
			} `json:"application_credential"`
		}
		id.Call(t, demoToken, http.MethodGet, acPath, nil, &out, 200)
		if out.AC.ID != acID || !strings.Contains(out.AC.Name, clusterUUID) {
			t.Errorf("application credential %s: %+v, want its id and a name with the cluster uuid", acID, out.AC)
		}
		for _, r := range out.AC.Roles {
			if r.Name == "admin" {
				t.Errorf("application credential %s has role admin", acID)
			}
		}
		// It authenticates.
		body := fmt.Sprintf(`{"auth":{"identity":{"methods":["application_credential"],"application_credential":{"id":%q,"secret":%q}}}}`, acID, acSecret)
		resp, err := (&http.Client{Timeout: 60 * time.Second}).Post(id.URL+"/auth/tokens", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("application credential login: HTTP %d", resp.StatusCode)
		}
	})

	// The controllers run from here on: the cluster completes, then goes.
	sim := NewSim(env.Client, mcNamespace)
	simCtx, stopSim := context.WithCancel(context.Background())
	simDone := make(chan struct{})
	go func() { defer close(simDone); sim.Run(simCtx, 100*time.Millisecond) }()
	t.Cleanup(func() { stopSim(); <-simDone })
	sim.MarkReady(stack)
	if st := mcWaitStatus(t, serverURL, id, clusterUUID, 2*time.Minute, "CREATE_COMPLETE"); st != "CREATE_COMPLETE" {
		t.Fatalf("cluster status %s (simulator errors: %v)", st, sim.Errors())
	}

	t.Run("DeleteRemovesCredentialAndObjects", func(t *testing.T) {
		mcMustOK(t, o.as(t, "demo", "coe", "cluster", "delete", "okm-capi"), "Request to delete cluster okm-capi has been accepted.")
		if st := mcWaitStatus(t, serverURL, id, clusterUUID, 2*time.Minute, "404"); st != "404" {
			t.Fatalf("cluster status %s after delete (simulator errors: %v)", st, sim.Errors())
		}
		id.Call(t, "", http.MethodGet, acPath, nil, nil, 404)
		// Only the shared class objects stay (driver-capi.md § 3.1).
		var left []string
		for _, k := range mcKeys(mcListNamespace(t, env)) {
			if !strings.Contains(k, "/magnum-v") {
				left = append(left, k)
			}
		}
		if len(left) > 0 {
			t.Errorf("objects left in %s after the delete: %v", mcNamespace, left)
		}
		if g := ostack.groupsByName(); len(g) > 0 {
			t.Errorf("server groups left after the delete: %v", g)
		}
	})
}

// mcWaitFor polls cond until it holds or limit passes.
func mcWaitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// mcAPI sends a request to the service as token at microversion latest
// and decodes the JSON answer into out.
func mcAPI(t *testing.T, base, token, method, path string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("OpenStack-API-Version", "container-infra latest")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode < 300 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// mcWaitStackID waits until the cluster has a stack_id (the driver named
// its objects) and returns it.
func mcWaitStackID(t *testing.T, base, token, uuid string) string {
	t.Helper()
	var stack string
	var c struct {
		StackID      string `json:"cluster_id"` // stack_id before 1.13
		Status       string `json:"status"`
		StatusReason string `json:"status_reason"`
	}
	defer func() {
		if stack == "" {
			t.Logf("last cluster seen: %+v", c)
		}
	}()
	mcWaitFor(t, "the stack_id of "+uuid, 2*time.Minute, func() bool {
		if mcAPI(t, base, token, http.MethodGet, "/v1/clusters/"+uuid, &c) == 200 {
			if strings.HasSuffix(c.Status, "_FAILED") {
				t.Fatalf("cluster %s: %s: %s", uuid, c.Status, c.StatusReason)
			}
			stack = c.StackID
		}
		return stack != ""
	})
	return stack
}

// mcWaitStatus polls the cluster (with fresh demo tokens) until its status
// is want ("404": gone) or a *_FAILED status, and returns the last status.
func mcWaitStatus(t *testing.T, base string, id *keystonetest.Identity, uuid string, limit time.Duration, want string) string {
	t.Helper()
	token := id.Token(t, "demo", "demo")
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		var c struct {
			Status       string `json:"status"`
			StatusReason string `json:"status_reason"`
		}
		code := mcAPI(t, base, token, http.MethodGet, "/v1/clusters/"+uuid, &c)
		last = c.Status
		if code == 404 {
			last = "404"
		}
		if last == want || strings.HasSuffix(last, "_FAILED") {
			if last != want {
				t.Logf("cluster %s: %s: %s", uuid, c.Status, c.StatusReason)
			}
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
	return last
}

// ------------------------------------------------------------ objects

// mcListNamespace returns every object of mcNamespace: Secrets, ConfigMaps
// and every namespaced kind of the installed CRDs (at its storage
// version), sorted by kind and name.
func mcListNamespace(t *testing.T, env *kubetest.Env) []*unstructured.Unstructured {
	t.Helper()
	gvks := []schema.GroupVersionKind{
		{Version: "v1", Kind: "Secret"}, {Version: "v1", Kind: "ConfigMap"},
	}
	for _, crd := range env.CRDs {
		if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				gvks = append(gvks, schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind})
			}
		}
	}
	var out []*unstructured.Unstructured
	for _, gvk := range gvks {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := env.Client.List(t.Context(), l, client.InNamespace(mcNamespace)); err != nil {
			t.Fatalf("list %s: %v", gvk, err)
		}
		for i := range l.Items {
			u := l.Items[i].DeepCopy()
			u.SetGroupVersionKind(gvk)
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GetKind() != out[j].GetKind() {
			return out[i].GetKind() < out[j].GetKind()
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out
}

func mcKeys(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func mcFind(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// mcSecretData returns a Secret's key, decoded.
func mcSecretData(t *testing.T, s *unstructured.Unstructured, key string) string {
	t.Helper()
	v, _, _ := unstructured.NestedString(s.Object, "data", key)
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		t.Fatalf("%s data %s: %v", s.GetName(), key, err)
	}
	return string(b)
}

// mcAppCredential reads the application credential of the cloud-config
// Secret's clouds.yaml (cloud "default").
func mcAppCredential(t *testing.T, s *unstructured.Unstructured) (id, secret string) {
	t.Helper()
	var doc struct {
		Clouds map[string]struct {
			Auth struct {
				ID     string `json:"application_credential_id"`
				Secret string `json:"application_credential_secret"`
			} `json:"auth"`
		} `json:"clouds"`
	}
	if err := yaml.Unmarshal([]byte(mcSecretData(t, s, "clouds.yaml")), &doc); err != nil {
		t.Fatalf("clouds.yaml: %v", err)
	}
	c := doc.Clouds["default"]
	if c.Auth.ID == "" || c.Auth.Secret == "" {
		t.Fatalf("clouds.yaml of %s holds no application credential", s.GetName())
	}
	return c.Auth.ID, c.Auth.Secret
}

func mcParseCert(t *testing.T, p string) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode([]byte(p))
	if blk == nil || blk.Type != "CERTIFICATE" {
		t.Fatalf("not a certificate PEM: %.80q", p)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mcSamePublic(a, b crypto.PublicKey) bool {
	e, ok := a.(interface{ Equal(x crypto.PublicKey) bool })
	return ok && e.Equal(b)
}

// ------------------------------------------------------------ goldens

// mcMasker turns an object into its golden form.
type mcMasker struct {
	// replace lists literal values and their placeholders, applied in order.
	replace [][2]string
}

var (
	mcPEMBody = regexp.MustCompile(`(?s)(-----BEGIN ([A-Z0-9 ]+)-----)\n.*?\n(-----END ([A-Z0-9 ]+)-----)`)
	mcAnyPEM  = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----`)
	mcStamp   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
)

// golden renders obj without server-generated metadata, with Secret data
// decoded, and with key material, generated names and credentials masked.
func (m mcMasker) golden(obj *unstructured.Unstructured) string {
	u := obj.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	if u.GetKind() == "Secret" {
		if data, ok := u.Object["data"].(map[string]any); ok {
			addons := u.Object["type"] == mcAddonSecretType
			decoded := map[string]any{}
			for k, v := range data {
				s, _ := v.(string)
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					decoded[k] = "<undecodable>"
					continue
				}
				text := mcPEMBody.ReplaceAllString(string(b), "$1\n<masked>\n$3")
				if addons && k != "cloud-config-secret.yaml" {
					// Add-on manifests are long (calico alone is 250 KB):
					// the golden lists the objects each key installs.
					text = mcManifestSummary(string(b))
				}
				decoded[k] = text
			}
			delete(u.Object, "data")
			u.Object["data (decoded)"] = decoded
		}
	}
	raw, err := yaml.Marshal(u.Object)
	if err != nil {
		return "error: " + err.Error()
	}
	s := string(raw)
	if mcAnyPEM.MatchString(s) && !strings.Contains(s, "<masked>") {
		s = "# key material outside Secret data could not be masked\n" + s
	}
	for _, r := range m.replace {
		if r[0] != "" {
			s = strings.ReplaceAll(s, r[0], r[1])
		}
	}
	return mcStamp.ReplaceAllString(s, "<timestamp>")
}

// mcAddonSecretType is the type of the Secrets a ClusterResourceSet reads.
const mcAddonSecretType = "addons.cluster.x-k8s.io/resource-set"

// mcManifestSummary lists the objects of a YAML stream, one
// "apiVersion kind namespace/name" line each, then the container images,
// or says why it cannot.
func mcManifestSummary(stream string) string {
	objs, err := mcParseStream(stream)
	if err != nil {
		return "<not a stream of Kubernetes objects: " + err.Error() + ">"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d objects:\n", len(objs))
	for _, o := range objs {
		name := o.GetName()
		if ns := o.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
		fmt.Fprintf(&b, "%s %s %s\n", o.GetAPIVersion(), o.GetKind(), name)
	}
	var images []string
	for _, o := range objs {
		for _, path := range [][]string{{"spec", "template", "spec"}, {"spec"}} {
			pod, _, _ := unstructured.NestedMap(o.Object, path...)
			for _, key := range []string{"initContainers", "containers"} {
				list, _, _ := unstructured.NestedSlice(pod, key)
				for _, c := range list {
					if m, ok := c.(map[string]any); ok {
						if img, _ := m["image"].(string); img != "" && !slices.Contains(images, img) {
							images = append(images, img)
						}
					}
				}
			}
		}
	}
	slices.Sort(images)
	if len(images) > 0 {
		b.WriteString("images:\n")
		for _, img := range images {
			b.WriteString(img + "\n")
		}
	}
	return b.String()
}

// mcParseStream parses a "---"-separated YAML stream of Kubernetes
// objects; an empty document or one without apiVersion, kind or name is
// an error.
func mcParseStream(stream string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(stream, -1) {
		if i == 0 && strings.TrimSpace(doc) == "" && len(stream) > 0 && strings.HasPrefix(stream, "---") {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		u := &unstructured.Unstructured{Object: m}
		if len(m) == 0 || u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("document %d is empty or not a Kubernetes object", i+1)
		}
		out = append(out, u)
	}
	return out, nil
}

// mcCheckAddons checks the two add-on sets and their Secrets
// (driver-capi.md § 3.2 and § 3.5): each set selects the cluster by its
// cluster-uuid label and names its Secret; each Secret has exactly the
// expected keys, every one a non-empty stream of Kubernetes objects. The
// test cloud has no Cinder in its catalog, so no Cinder CSI is expected.
func mcCheckAddons(t *testing.T, objs []*unstructured.Unstructured, stack, uuid string) {
	t.Helper()
	for _, set := range []struct {
		name, strategy string
		keys           []string
	}{
		{uuid, "ApplyOnce", []string{"calico.yml", "cloud-config-secret.yaml", "keystone-auth.yaml"}},
		{stack + "-cloud-provider", "Reconcile", []string{"cloud-config-secret.yaml", "cloud-controller-manager.yaml"}},
	} {
		crs := mcFind(objs, "ClusterResourceSet", set.name)
		if crs == nil {
			t.Errorf("no ClusterResourceSet %s", set.name)
			continue
		}
		sel, _, _ := unstructured.NestedStringMap(crs.Object, "spec", "clusterSelector", "matchLabels")
		res, _, _ := unstructured.NestedSlice(crs.Object, "spec", "resources")
		strategy, _, _ := unstructured.NestedString(crs.Object, "spec", "strategy")
		if strategy == "" {
			strategy = "ApplyOnce" // the CRD's default when it sets none
		}
		if !cmp.Equal(sel, map[string]string{"cluster-uuid": uuid}) || strategy != set.strategy ||
			!cmp.Equal(res, []any{map[string]any{"kind": "Secret", "name": set.name}}) {
			t.Errorf("ClusterResourceSet %s: selector %v, resources %v, strategy %q (want %s)", set.name, sel, res, strategy, set.strategy)
		}
		s := mcFind(objs, "Secret", set.name)
		if s == nil {
			t.Errorf("no Secret %s", set.name)
			continue
		}
		if s.Object["type"] != mcAddonSecretType {
			t.Errorf("Secret %s: type %v", set.name, s.Object["type"])
		}
		data, _, _ := unstructured.NestedMap(s.Object, "data")
		var keys []string
		for k := range data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !cmp.Equal(keys, set.keys) {
			t.Errorf("Secret %s keys %v, want %v", set.name, keys, set.keys)
		}
		for _, k := range keys {
			content := mcSecretData(t, s, k)
			if strings.TrimSpace(content) == "" {
				t.Errorf("Secret %s key %s is empty", set.name, k)
				continue
			}
			if _, err := mcParseStream(content); err != nil {
				t.Errorf("Secret %s key %s: %v", set.name, k, err)
			}
		}
	}
	// The workload cluster's cloud.conf carries the cluster's credential
	// and the cloud provider is named after the cluster.
	if s := mcFind(objs, "Secret", stack+"-cloud-provider"); s != nil {
		ccm := mcSecretData(t, s, "cloud-controller-manager.yaml")
		if !strings.Contains(ccm, "--cluster-name="+uuid) {
			t.Errorf("cloud-controller-manager.yaml does not name the cluster %s", uuid)
		}
	}
}

// mcCompareGoldens compares the objects the driver wrote (field manager
// openkeel-magnum) with testdata/golden/<kind>.yaml, one file per kind,
// and checks that nothing else is in the namespace and that every golden
// kind was written.
func mcCompareGoldens(t *testing.T, objs []*unstructured.Unstructured, m mcMasker) {
	t.Helper()
	dir := filepath.Join("testdata", "golden")
	byKind := map[string][]string{}
	for _, o := range objs {
		managers := []string{}
		for _, f := range o.GetManagedFields() {
			managers = append(managers, f.Manager)
		}
		if !slices.Contains(managers, mcFieldManager) {
			t.Errorf("%s/%s was not written by %s (managers %v): nothing else may be in the namespace before the controllers run",
				o.GetKind(), o.GetName(), mcFieldManager, managers)
			continue
		}
		byKind[o.GetKind()] = append(byKind[o.GetKind()], m.golden(o))
	}
	if *mcUpdate {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	want, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for kind, docs := range byKind {
		file := filepath.Join(dir, strings.ToLower(kind)+".yaml")
		seen[file] = true
		got := "# " + kind + " objects written by the Cluster API driver for one cluster created with\n" +
			"# `openstack coe cluster create` (TestMagnumClientCAPI; go test -run TestMagnumClientCAPI -update).\n" +
			"---\n" + strings.Join(docs, "---\n")
		if *mcUpdate {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s objects were written but there is no golden %s (run with -update): %v", kind, file, err)
			continue
		}
		if diff := cmp.Diff(strings.Split(string(b), "\n"), strings.Split(got, "\n")); diff != "" {
			t.Errorf("%s objects differ from %s (-golden +got):\n%s", kind, file, diff)
		}
	}
	for _, f := range want {
		if !seen[f] && !*mcUpdate {
			t.Errorf("golden %s names objects that were not written", f)
		}
	}
}

// mcCheckSpecObjects checks the objects against driver-capi.md §§ 3-4
// directly (the goldens record what is written; this says what must be):
// the shared class objects (§ 3.1), the per-cluster objects (§ 3.2), and
// the Cluster variables that name OpenStack resources by ID (§ 4.1).
func mcCheckSpecObjects(t *testing.T, objs []*unstructured.Unstructured, stack, uuid string, groups map[string]string) {
	t.Helper()
	cl := mcFind(objs, "Cluster", stack)
	if cl == nil {
		t.Fatalf("no Cluster %s", stack)
	}
	class, _, _ := unstructured.NestedString(cl.Object, "spec", "topology", "classRef", "name")
	if !strings.HasPrefix(class, "magnum-v") {
		t.Errorf("Cluster %s: class %q, want magnum-v<version>", stack, class)
	}
	want := []string{
		// § 3.1, shared by the clusters of one driver version.
		"ClusterClass/" + class, "KubeadmConfigTemplate/" + class, "KubeadmControlPlaneTemplate/" + class,
		"OpenStackClusterTemplate/" + class, "OpenStackMachineTemplate/" + class,
		// § 3.2, per cluster.
		"Cluster/" + stack,
		"Secret/" + stack + "-cloud-config", "Secret/" + stack + "-ca", "Secret/" + stack + "-etcd",
		"Secret/" + stack + "-proxy", "Secret/" + stack + "-sa",
		"Secret/" + uuid, "ClusterResourceSet/" + uuid,
		"Secret/" + stack + "-cloud-provider", "ClusterResourceSet/" + stack + "-cloud-provider",
	}
	got := mcKeys(objs)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("driver-capi.md § 3 object %s was not created", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("object %s is not one of driver-capi.md § 3", g)
		}
	}

	vars := map[string]any{}
	list, _, _ := unstructured.NestedSlice(cl.Object, "spec", "topology", "variables")
	for _, v := range list {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		vars[name] = m["value"]
	}
	if len(vars) != 39 {
		t.Errorf("Cluster %s has %d variables, want the 39 of § 4.1", stack, len(vars))
	}
	for name, want := range map[string]any{
		"imageUUID":              mcImageID, // the Glance ID, not the name the template holds
		"externalNetworkId":      mcExtNetID,
		"controlPlaneFlavor":     mcFlavor, // the Nova flavor name
		"flavor":                 mcFlavor,
		"clusterIdentityRefName": stack + "-cloud-config",
		"serverGroupId":          groups[stack],
		"sshKeyName":             mcKeypair,
		"operatingSystem":        "ubuntu",
	} {
		if !cmp.Equal(vars[name], want) {
			t.Errorf("Cluster %s variable %s = %v, want %v (§ 4.1)", stack, name, vars[name], want)
		}
	}
	if groups[stack] == "" || groups[stack+"-default-worker"] == "" {
		t.Errorf("Nova server groups %s and %s-default-worker: have %v", stack, stack, groups)
	}
}
