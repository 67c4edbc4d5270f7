package clients

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/certificates"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/clusters"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/clustertemplates"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/nodegroups"
	"github.com/gophercloud/gophercloud/v2/openstack/containerinfra/v1/quotas"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// gcClient returns a container-infra client for user at microversion mv
// ("" = none, i.e. 1.1), found through the catalog like Terraform,
// cluster-autoscaler and magnum-auto-healer do.
func gcClient(t *testing.T, s *stack, user, mv string) *gophercloud.ServiceClient {
	t.Helper()
	c, err := openstack.NewContainerInfraV1(gcProvider(t, s, user), gophercloud.EndpointOpts{Region: s.Region, Type: "container-infra", Name: "magnum"})
	if err != nil {
		t.Fatalf("catalog lookup: %v", err)
	}
	c.Microversion = mv
	return c
}

// gcProvider authenticates user (password, project of the same name)
// against the stack's Keystone.
func gcProvider(t *testing.T, s *stack, user string) *gophercloud.ProviderClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	provider, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: s.id.URL,
		Username:         user,
		Password:         s.id.Passwords[user],
		DomainName:       "Default",
		TenantName:       user,
	})
	if err != nil {
		t.Fatalf("gophercloud auth as %s: %v", user, err)
	}
	provider.HTTPClient = http.Client{Timeout: time.Minute}
	return provider
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// is404 reports whether err is gophercloud's 404.
func is404(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusNotFound) }

// strictCluster decodes the raw body the way the Go clients rely on: labels
// and faults as string maps, RFC 3339 times with an offset,
// health_status_reason as an object.
func strictCluster(t *testing.T, raw any) {
	t.Helper()
	b, _ := json.Marshal(raw)
	var c struct {
		Labels             map[string]string `json:"labels"`
		LabelsAdded        map[string]string `json:"labels_added"`
		LabelsOverridden   map[string]string `json:"labels_overridden"`
		LabelsSkipped      map[string]string `json:"labels_skipped"`
		Faults             map[string]string `json:"faults"`
		HealthStatusReason map[string]any    `json:"health_status_reason"`
		CreatedAt          *time.Time        `json:"created_at"`
		UpdatedAt          *time.Time        `json:"updated_at"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Errorf("strict decoding of a cluster: %v\n%s", err, b)
	}
	if c.CreatedAt == nil || c.CreatedAt.IsZero() {
		t.Errorf("created_at missing: %s", b)
	}
}

func waitGC(t *testing.T, what string, timeout time.Duration, get func() (string, error), want ...string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, err := get()
		if is404(err) {
			st = "404"
		} else if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, w := range want {
			if st == w {
				return st
			}
		}
		if strings.HasSuffix(st, "_FAILED") || time.Now().After(deadline) {
			t.Fatalf("%s: status %s, want %v", what, st, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestGophercloudClusters drives clusters, nodegroups, certificates,
// resize, upgrade and quotas through gophercloud's public containerinfra
// packages, as Terraform, cluster-autoscaler and magnum-auto-healer do, and
// checks the wire details they depend on (clients.md § 11.3, § 11.12).
func TestGophercloudClusters(t *testing.T) {
	needEnv(t, "OPENKEEL_TEST_GOPHERCLOUD")
	s := newStack(t)
	c11 := gcClient(t, s, "demo", "")
	var ctID, ct2ID, clusterID string

	step(t, s, "template create is 201 with a request id", func(t *testing.T) {
		f := false
		for i, name := range []string{"gc-ct", "gc-ct2"} {
			res := clustertemplates.Create(ctx(t), c11, clustertemplates.CreateOpts{
				Name: name, COE: "kubernetes", ImageID: s.ImageID, ExternalNetworkID: s.ExtNetID,
				FlavorID: s.FlavorSmall, MasterFlavorID: s.FlavorSmall, KeyPairID: s.Keypair,
				DNSNameServer: "8.8.8.8", DockerStorageDriver: "overlay2", ServerType: "vm",
				FloatingIPEnabled: &f, MasterLBEnabled: &f, Public: &f, RegistryEnabled: &f,
				Labels: map[string]string{"kube_tag": []string{"v1.30.2", "v1.31.1"}[i], "boot_volume_size": "10"},
			})
			ct, err := res.Extract()
			if err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
			if res.Header.Get("X-OpenStack-Request-Id") == "" {
				t.Error("no X-OpenStack-Request-Id")
			}
			if ct.CreatedAt.IsZero() || ct.Labels["kube_tag"] == "" {
				t.Errorf("template %+v", ct)
			}
			if i == 0 {
				ctID = ct.UUID
			} else {
				ct2ID = ct.UUID
			}
		}
	})
	step(t, s, "template list follows next with limit 1", func(t *testing.T) {
		var n int
		err := clustertemplates.List(c11, clustertemplates.ListOpts{Limit: 1}).EachPage(ctx(t), func(_ context.Context, p pagination.Page) (bool, error) {
			l, err := clustertemplates.ExtractClusterTemplates(p)
			n += len(l)
			return true, err
		})
		if err != nil || n != 2 {
			t.Errorf("paged list: %d templates, %v", n, err)
		}
	})
	step(t, s, "template update with string booleans", func(t *testing.T) {
		ct, err := clustertemplates.Update(ctx(t), c11, ct2ID, []clustertemplates.UpdateOptsBuilder{
			clustertemplates.UpdateOpts{Op: clustertemplates.ReplaceOp, Path: "/master_lb_enabled", Value: "true"},
			clustertemplates.UpdateOpts{Op: clustertemplates.AddOp, Path: "/labels/extra", Value: "1"},
		}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if !ct.MasterLBEnabled || ct.Labels["extra"] != "1" {
			t.Errorf("template %+v", ct)
		}
	})
	step(t, s, "cluster create is 202 and reads CREATE_IN_PROGRESS at once", func(t *testing.T) {
		two, one := 2, 1
		timeout := 10
		res := clusters.Create(ctx(t), c11, clusters.CreateOpts{
			ClusterTemplateID: ctID, Name: "gc-c", MasterCount: &one, NodeCount: &two, CreateTimeout: &timeout,
			Keypair: s.Keypair, Labels: map[string]string{"okm": "1"}, MergeLabels: new(bool),
		})
		id, err := res.Extract()
		if err != nil {
			t.Fatal(err)
		}
		if res.Header.Get("X-OpenStack-Request-Id") == "" {
			t.Error("no X-OpenStack-Request-Id")
		}
		clusterID = id
		cl, err := clusters.Get(ctx(t), c11, id).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if cl.Status != "CREATE_IN_PROGRESS" && cl.Status != "CREATE_COMPLETE" {
			t.Errorf("status right after create: %s", cl.Status)
		}
	})
	if clusterID == "" {
		t.Fatal("no cluster")
	}
	getStatus := func() (string, error) {
		cl, err := clusters.Get(context.Background(), c11, clusterID).Extract()
		if err != nil {
			return "", err
		}
		return cl.Status, nil
	}
	step(t, s, "cluster reaches CREATE_COMPLETE with 1.1 fields", func(t *testing.T) {
		waitGC(t, "cluster", 2*time.Minute, getStatus, "CREATE_COMPLETE")
		r := clusters.Get(ctx(t), c11, clusterID)
		cl, err := r.Extract()
		if err != nil {
			t.Fatal(err)
		}
		strictCluster(t, r.Body)
		if cl.StackID == "" || cl.APIAddress == "" || cl.COEVersion == "" || len(cl.NodeAddresses) != 2 || len(cl.MasterAddresses) != 1 {
			t.Errorf("cluster at 1.1: %+v", cl)
		}
		if cl.Labels["okm"] != "1" || cl.CreatedAt.IsZero() || cl.HealthStatus == "" {
			t.Errorf("cluster: %+v", cl)
		}
		if _, has := r.Body.(map[string]any)["cluster_id"]; has {
			t.Error("cluster_id present at 1.1")
		}
	})
	step(t, s, "cluster list and list detail", func(t *testing.T) {
		for name, pager := range map[string]pagination.Pager{
			"list": clusters.List(c11, nil), "detail": clusters.ListDetail(c11, nil),
		} {
			pages, err := pager.AllPages(ctx(t))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			l, err := clusters.ExtractClusters(pages)
			if err != nil || len(l) != 1 || l[0].UUID != clusterID {
				t.Errorf("%s: %v %+v", name, err, l)
			}
		}
	})
	step(t, s, "cluster PATCH node_count is accepted and visible as UPDATE_IN_PROGRESS", func(t *testing.T) {
		_, err := clusters.Update(ctx(t), c11, clusterID, []clusters.UpdateOptsBuilder{
			clusters.UpdateOpts{Op: clusters.ReplaceOp, Path: "/node_count", Value: 3},
		}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := getStatus(); st != "UPDATE_IN_PROGRESS" && st != "UPDATE_COMPLETE" {
			t.Errorf("status after PATCH: %s", st)
		}
		waitGC(t, "cluster", 2*time.Minute, getStatus, "UPDATE_COMPLETE")
	})
	step(t, s, "health PATCH with a Python-literal reason keeps *_COMPLETE (magnum-auto-healer)", func(t *testing.T) {
		latest := gcClient(t, s, "demo", "latest")
		_, err := clusters.Update(ctx(t), latest, clusterID, []clusters.UpdateOptsBuilder{
			clusters.UpdateOpts{Op: clusters.ReplaceOp, Path: "/health_status", Value: "UNHEALTHY"},
			clusters.UpdateOpts{Op: clusters.ReplaceOp, Path: "/health_status_reason", Value: "{'api': 'ok', 'node-0.Ready': 'False'}"},
		}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		cl, err := clusters.Get(ctx(t), latest, clusterID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if cl.HealthStatus != "UNHEALTHY" || cl.HealthStatusReason["node-0.Ready"] != "False" {
			t.Errorf("health: %s %v", cl.HealthStatus, cl.HealthStatusReason)
		}
		if !strings.HasSuffix(cl.Status, "_COMPLETE") {
			t.Errorf("status after a health-only PATCH: %s", cl.Status)
		}
	})
	step(t, s, "template labels PATCH with a Python-literal dict (Terraform)", func(t *testing.T) {
		ct, err := clustertemplates.Update(ctx(t), c11, ct2ID, []clustertemplates.UpdateOptsBuilder{
			clustertemplates.UpdateOpts{Op: clustertemplates.ReplaceOp, Path: "/labels", Value: "{'kube_tag': 'v1.31.1', 'tf': 'yes'}"},
		}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if ct.Labels["tf"] != "yes" || ct.Labels["kube_tag"] != "v1.31.1" || len(ct.Labels) != 2 {
			t.Errorf("labels %v", ct.Labels)
		}
	})
	step(t, s, "non-string label values still decode as a string map", func(t *testing.T) {
		// A Python client may send int/bool label values; Go clients decode
		// labels as map[string]string (clients.md § 11.4).
		tok := s.id.Token(t, "demo", "demo")
		var created struct {
			UUID string `json:"uuid"`
		}
		code, _ := s.api(t, tok, http.MethodPost, "/v1/clusters", "", map[string]any{
			"name": "gc-typed", "cluster_template_id": ctID, "node_count": 1, "master_count": 1,
			"labels": map[string]any{"int": 3, "bool": true, "str": "s"},
		}, &created)
		if code != http.StatusAccepted {
			t.Fatalf("POST with typed labels: %d", code)
		}
		cl, err := clusters.Get(ctx(t), c11, created.UUID).Extract()
		if err != nil {
			t.Errorf("gophercloud cannot decode the cluster: %v", err)
		} else if cl.Labels["str"] != "s" || cl.Labels["int"] == "" {
			t.Errorf("labels %v", cl.Labels)
		}
		waitGC(t, "typed cluster", 2*time.Minute, func() (string, error) {
			c, err := clusters.Get(context.Background(), c11, created.UUID).Extract()
			if err != nil {
				return "", err
			}
			return c.Status, nil
		}, "CREATE_COMPLETE")
		if err := clusters.Delete(ctx(t), c11, created.UUID).ExtractErr(); err != nil {
			t.Error(err)
		}
	})
	step(t, s, "cluster get unknown is 404", func(t *testing.T) {
		if _, err := clusters.Get(ctx(t), c11, "0b3c8c43-6a8e-4a0a-9a55-1d1f0b6f7a99").Extract(); !is404(err) {
			t.Errorf("err %v", err)
		}
	})

	c19 := gcClient(t, s, "demo", "1.9")
	var ngUUID string
	step(t, s, "nodegroups list at 1.9 (integer ids, two defaults)", func(t *testing.T) {
		pages, err := nodegroups.List(c19, clusterID, nil).AllPages(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		l, err := nodegroups.ExtractNodeGroups(pages)
		if err != nil || len(l) != 2 {
			t.Fatalf("nodegroups %v %+v", err, l)
		}
		pages, err = nodegroups.List(c19, clusterID, nodegroups.ListOpts{Role: "worker"}).AllPages(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		// The list view has no id (Magnum's summary fields).
		if w, _ := nodegroups.ExtractNodeGroups(pages); len(w) != 1 || w[0].Role != "worker" || w[0].UUID == "" {
			t.Errorf("workers %+v", w)
		}
	})
	step(t, s, "nodegroup list with an integer marker is 400", func(t *testing.T) {
		_, err := nodegroups.List(c19, clusterID, nodegroups.ListOpts{Marker: 5}).AllPages(ctx(t))
		if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
			t.Errorf("err %v", err)
		}
	})
	step(t, s, "nodegroup get by name", func(t *testing.T) {
		ng, err := nodegroups.Get(ctx(t), c19, clusterID, "default-worker").Extract()
		if err != nil {
			t.Fatal(err)
		}
		if ng.NodeCount != 3 || !ng.IsDefault || ng.ID == 0 || ng.CreatedAt.IsZero() {
			t.Errorf("nodegroup %+v", ng)
		}
	})
	ngStatus := func() (string, error) {
		ng, err := nodegroups.Get(context.Background(), c19, clusterID, "gc-ng").Extract()
		if err != nil {
			return "", err
		}
		return ng.Status, nil
	}
	step(t, s, "nodegroup create is 202 and reads CREATE_IN_PROGRESS", func(t *testing.T) {
		two, max := 2, 4
		ng, err := nodegroups.Create(ctx(t), c19, clusterID, nodegroups.CreateOpts{
			Name: "gc-ng", NodeCount: &two, MinNodeCount: 1, MaxNodeCount: &max, FlavorID: s.FlavorMedium,
			Labels: map[string]string{"ng": "yes"},
		}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		ngUUID = ng.UUID
		if st, _ := ngStatus(); st != "CREATE_IN_PROGRESS" && st != "CREATE_COMPLETE" {
			t.Errorf("status after create: %s", st)
		}
		waitGC(t, "nodegroup", 2*time.Minute, ngStatus, "CREATE_COMPLETE")
	})
	step(t, s, "nodegroup update min/max is 202", func(t *testing.T) {
		ng, err := nodegroups.Update(ctx(t), c19, clusterID, "gc-ng", []nodegroups.UpdateOptsBuilder{
			nodegroups.UpdateOpts{Op: nodegroups.ReplaceOp, Path: "/min_node_count", Value: 2},
			nodegroups.UpdateOpts{Op: nodegroups.ReplaceOp, Path: "/max_node_count", Value: 5},
		}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if ng.UUID != ngUUID {
			t.Errorf("update answered %+v", ng)
		}
		waitGC(t, "nodegroup", 2*time.Minute, ngStatus, "UPDATE_COMPLETE")
		got, err := nodegroups.Get(ctx(t), c19, clusterID, ngUUID).Extract()
		if err != nil || got.MinNodeCount != 2 || got.MaxNodeCount == nil || *got.MaxNodeCount != 5 {
			t.Errorf("after update: %v %+v", err, got)
		}
	})
	step(t, s, "resize a nodegroup is accepted and visible as UPDATE_IN_PROGRESS", func(t *testing.T) {
		three := 3
		c17 := gcClient(t, s, "demo", "1.7")
		if _, err := clusters.Resize(ctx(t), c17, clusterID, clusters.ResizeOpts{NodeCount: &three, NodeGroup: "gc-ng"}).Extract(); err != nil {
			t.Fatal(err)
		}
		if st, _ := ngStatus(); st != "UPDATE_IN_PROGRESS" && st != "UPDATE_COMPLETE" {
			t.Errorf("nodegroup status after resize: %s", st)
		}
		waitGC(t, "cluster", 2*time.Minute, getStatus, "UPDATE_COMPLETE")
		ng, err := nodegroups.Get(ctx(t), c19, clusterID, "gc-ng").Extract()
		if err != nil || ng.NodeCount != 3 || len(ng.NodeAddresses) != 3 {
			t.Errorf("after resize: %v %+v", err, ng)
		}
	})
	step(t, s, "resize with nodes_to_remove (auto-healer pattern)", func(t *testing.T) {
		ng, err := nodegroups.Get(ctx(t), c19, clusterID, "default-worker").Extract()
		if err != nil || len(ng.NodeAddresses) == 0 {
			t.Fatalf("%v %+v", err, ng)
		}
		same := ng.NodeCount
		cl := gcClient(t, s, "demo", "latest")
		if _, err := clusters.Resize(ctx(t), cl, clusterID, clusters.ResizeOpts{NodeCount: &same, NodeGroup: "default-worker",
			NodesToRemove: []string{ng.NodeAddresses[0]}}).Extract(); err != nil {
			t.Fatal(err)
		}
		waitGC(t, "cluster", 2*time.Minute, getStatus, "UPDATE_COMPLETE")
		after, err := nodegroups.Get(ctx(t), c19, clusterID, "default-worker").Extract()
		if err != nil || after.NodeCount != same || len(after.NodeAddresses) != same || slices.Contains(after.NodeAddresses, ng.NodeAddresses[0]) {
			t.Errorf("after replacing %s: %v %+v", ng.NodeAddresses[0], err, after)
		}
	})
	step(t, s, "resize below 1.7 is refused", func(t *testing.T) {
		one := 1
		_, err := clusters.Resize(ctx(t), c11, clusterID, clusters.ResizeOpts{NodeCount: &one}).Extract()
		if !gophercloud.ResponseCodeIs(err, http.StatusNotAcceptable) {
			t.Errorf("resize at 1.1: %v", err)
		}
	})
	step(t, s, "upgrade at 1.8 is 202", func(t *testing.T) {
		one := 1
		c18 := gcClient(t, s, "demo", "1.8")
		if _, err := clusters.Upgrade(ctx(t), c18, clusterID, clusters.UpgradeOpts{ClusterTemplate: ct2ID, MaxBatchSize: &one}).Extract(); err != nil {
			t.Fatal(err)
		}
		waitGC(t, "cluster", 2*time.Minute, getStatus, "UPDATE_COMPLETE")
		cl, err := clusters.Get(ctx(t), c11, clusterID).Extract()
		if err != nil || cl.ClusterTemplateID != ct2ID {
			t.Errorf("after upgrade: %v %+v", err, cl)
		}
	})
	step(t, s, "nodegroup delete then 404", func(t *testing.T) {
		if err := nodegroups.Delete(ctx(t), c19, clusterID, "gc-ng").ExtractErr(); err != nil {
			t.Fatal(err)
		}
		waitGC(t, "nodegroup", 2*time.Minute, ngStatus, "404")
	})
	step(t, s, "certificates get, sign (201) and rotate (202)", func(t *testing.T) {
		cert, err := certificates.Get(ctx(t), c11, clusterID).Extract()
		if err != nil || !strings.Contains(cert.PEM, "BEGIN CERTIFICATE") || cert.ClusterUUID != clusterID {
			t.Fatalf("get: %v %+v", err, cert)
		}
		key, _ := rsa.GenerateKey(rand.Reader, 2048)
		der, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "gc", Organization: []string{"system:masters"}}}, key)
		csr := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
		signed, err := certificates.Create(ctx(t), c11, certificates.CreateOpts{ClusterUUID: clusterID, CSR: csr}).Extract()
		if err != nil || !strings.Contains(signed.PEM, "BEGIN CERTIFICATE") || signed.CSR != csr {
			t.Errorf("sign: %v %+v", err, signed)
		}
		if err := certificates.Update(ctx(t), c11, clusterID).ExtractErr(); err != nil {
			t.Errorf("rotate: %v", err)
		}
		waitGC(t, "cluster", 2*time.Minute, getStatus, "UPDATE_COMPLETE")
	})
	step(t, s, "quota create as admin is 201", func(t *testing.T) {
		admin := gcClient(t, s, "admin", "")
		res := quotas.Create(ctx(t), admin, quotas.CreateOpts{ProjectID: s.id.Projects["alt"], Resource: "Cluster", HardLimit: 7})
		q, err := res.Extract()
		if err != nil || q.HardLimit != 7 || q.ProjectID != s.id.Projects["alt"] || res.Header.Get("X-OpenStack-Request-Id") == "" {
			t.Errorf("quota: %v %+v", err, q)
		}
	})
	step(t, s, "quota create as a member is 403", func(t *testing.T) {
		_, err := quotas.Create(ctx(t), c11, quotas.CreateOpts{ProjectID: s.id.Projects["demo"], Resource: "Cluster", HardLimit: 7}).Extract()
		if !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
			t.Errorf("err %v", err)
		}
	})
	step(t, s, "cluster delete twice is 204 twice, then 404", func(t *testing.T) {
		if err := clusters.Delete(ctx(t), c11, clusterID).ExtractErr(); err != nil {
			t.Fatal(err)
		}
		if err := clusters.Delete(ctx(t), c11, clusterID).ExtractErr(); err != nil {
			t.Errorf("second DELETE: %v", err)
		}
		waitGC(t, "cluster", 2*time.Minute, getStatus, "404")
		_, err := certificates.Get(ctx(t), c11, clusterID).Extract()
		if !is404(err) {
			t.Errorf("certificate after delete: %v", err)
		}
	})
	step(t, s, "template delete", func(t *testing.T) {
		for _, id := range []string{ctID, ct2ID} {
			if err := clustertemplates.Delete(ctx(t), c11, id).ExtractErr(); err != nil {
				t.Error(err)
			}
		}
		var e gophercloud.ErrUnexpectedResponseCode
		if err := clustertemplates.Delete(ctx(t), c11, ctID).ExtractErr(); !errors.As(err, &e) || e.Actual != 404 {
			t.Errorf("second delete: %v", err)
		}
	})
}
