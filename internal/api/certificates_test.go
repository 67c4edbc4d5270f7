package api_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/api"
	"github.com/openkeel/openkeel-magnum/internal/auth"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/policy"
)

// certEnv is an API server over a migrated SQLite database holding one
// cluster ("c1", created by p1/u1, CREATE_COMPLETE) with its certificates.
type certEnv struct {
	t    *testing.T
	h    http.Handler
	db   *db.DB
	cond *conductor.Conductor
	cl   *magnum.Cluster
}

func certNewEnv(t *testing.T) *certEnv {
	t.Helper()
	ctx := t.Context()
	d, err := db.Open(ctx, db.DialectSQLite, filepath.Join(t.TempDir(), "magnum.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New(policy.Options{EnforceNewDefaults: true, EnforceScope: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &conductor.Conductor{
		DB:        d,
		Drivers:   driver.NewRegistry(driver.Selection{EnabledBeta: []string{"fake"}}, fake.New(fake.Options{})),
		OpenStack: openstack.NewStatic(false),
		Now:       func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
	h := api.New(api.Options{
		Auth:      auth.NewNoAuth(),
		Policy:    pol,
		Conductor: c,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	e := &certEnv{t: t, h: h, db: d, cond: c}
	e.cl = e.addCluster("c1", magnum.StatusCreateComplete, false, nil)
	return e
}

// addCluster inserts a template (fake driver) and a cluster of p1/u1 with
// generated certificates.
func (e *certEnv) addCluster(name string, status magnum.Status, tlsDisabled bool, labels map[string]string) *magnum.Cluster {
	e.t.Helper()
	ctx := context.Background()
	s := func(v string) *string { return &v }
	tpl := magnum.ClusterTemplate{
		UUID: conductor.NewUUID(), Name: "t-" + name, ProjectID: "p1", UserID: "u1",
		COE: s("kubernetes"), ServerType: s("vm"), ClusterDistro: s("ubuntu"), Driver: s("fake"),
		TLSDisabled: &tlsDisabled,
	}
	if err := e.db.CreateClusterTemplate(ctx, &tpl); err != nil {
		e.t.Fatal(err)
	}
	cl := magnum.Cluster{UUID: conductor.NewUUID(), Name: name, ProjectID: "p1", UserID: "u1",
		ClusterTemplateID: tpl.UUID, Status: &status, Labels: labels}
	rctx := magnum.WithRequestContext(ctx, &magnum.RequestContext{ProjectID: "p1", UserID: "u1"})
	if err := e.cond.GenerateClusterCertificates(rctx, &cl); err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.CreateCluster(ctx, &cl); err != nil {
		e.t.Fatal(err)
	}
	return &cl
}

type certCaller struct{ project, user, roles string }

var (
	certCreator = certCaller{"p1", "u1", "member,reader"}
	certReader  = certCaller{"p1", "u1", "reader"}
	certPeer    = certCaller{"p1", "u9", "member,reader"}
	certOther   = certCaller{"p2", "u2", "member"}
	certAdmin   = certCaller{"p1", "uadmin", "admin"}
)

type certResp struct {
	status int
	raw    string
	body   map[string]any
}

func (r certResp) detail() string {
	errs, _ := r.body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	m, _ := errs[0].(map[string]any)
	s, _ := m["detail"].(string)
	return s
}

func (e *certEnv) do(who certCaller, method, path string, body any) certResp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req := httptest.NewRequestWithContext(e.t.Context(), method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Project-Id", who.project)
	req.Header.Set("X-User-Id", who.user)
	req.Header.Set("X-Roles", who.roles)
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	out := certResp{status: w.Code, raw: w.Body.String()}
	if w.Body.Len() > 0 {
		_ = json.Unmarshal(w.Body.Bytes(), &out.body)
	}
	return out
}

// sub returns e bound to a subtest.
func (e *certEnv) sub(t *testing.T) *certEnv {
	c := *e
	c.t = t
	return &c
}

func (e *certEnv) expect(r certResp, status int, detail string) {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	if detail != "" && r.detail() != detail {
		e.t.Fatalf("detail %q, want %q", r.detail(), detail)
	}
}

// storedCA returns the PEM of the cluster's CA of the given type as stored.
func (e *certEnv) storedCA(cl *magnum.Cluster, caType string) string {
	e.t.Helper()
	p, err := e.cond.GetCACertificate(context.Background(), cl, caType)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func certCSR(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func certParse(t *testing.T, s string) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		t.Fatalf("no PEM: %q", s)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGetCertificate(t *testing.T) {
	e := certNewEnv(t)
	uuid := e.cl.UUID
	for _, tc := range []struct{ query, caType string }{
		{"", ""}, {"?ca_cert_type=kubernetes", ""}, {"?ca_cert_type=whatever", ""},
		{"?ca_cert_type=etcd", "etcd"}, {"?ca_cert_type=front_proxy", "front-proxy"},
		{"?ca_cert_type=front-proxy", "front-proxy"},
	} {
		t.Run("ca_cert_type "+tc.query, func(t *testing.T) {
			e := e.sub(t)
			r := e.do(certReader, http.MethodGet, "/v1/certificates/"+uuid+tc.query, nil)
			e.expect(r, http.StatusOK, "")
			want := map[string]any{
				"cluster_uuid": uuid,
				"pem":          e.storedCA(e.cl, tc.caType),
				"links": []any{
					map[string]any{"href": "http://example.com/v1/certificates/" + uuid, "rel": "self"},
					map[string]any{"href": "http://example.com/certificates/" + uuid, "rel": "bookmark"},
				},
			}
			gotJSON, _ := json.Marshal(r.body)
			wantJSON, _ := json.Marshal(want)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("body\n got %s\nwant %s", gotJSON, wantJSON)
			}
		})
	}
	t.Run("by name", func(t *testing.T) {
		e := e.sub(t)
		r := e.do(certCreator, http.MethodGet, "/v1/certificates/c1", nil)
		e.expect(r, http.StatusOK, "")
		if r.body["cluster_uuid"] != uuid {
			t.Errorf("cluster_uuid %v", r.body["cluster_uuid"])
		}
	})
	t.Run("unknown cluster", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodGet, "/v1/certificates/nope", nil), http.StatusNotFound, "Cluster nope could not be found.")
	})
	t.Run("another project's cluster is not found, even for an admin", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certOther, http.MethodGet, "/v1/certificates/"+uuid, nil), http.StatusNotFound, "")
		e.expect(e.do(certCaller{"p2", "a", "admin"}, http.MethodGet, "/v1/certificates/"+uuid, nil), http.StatusNotFound, "")
	})
	t.Run("a project member who is not the creator is denied", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certPeer, http.MethodGet, "/v1/certificates/"+uuid, nil), http.StatusForbidden,
			"Policy doesn't allow certificate:get to be performed.")
	})
	t.Run("an admin of the project is allowed", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certAdmin, http.MethodGet, "/v1/certificates/"+uuid, nil), http.StatusOK, "")
	})
	t.Run("detail is a cluster name", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodGet, "/v1/certificates/detail", nil), http.StatusNotFound, "Cluster detail could not be found.")
	})
}

func TestPostCertificate(t *testing.T) {
	e := certNewEnv(t)
	uuid := e.cl.UUID
	for _, caType := range []string{"", "kubernetes", "etcd", "front_proxy", "front-proxy"} {
		t.Run("signs with ca_cert_type "+caType, func(t *testing.T) {
			e := e.sub(t)
			csr := certCSR(t, "system:node:n1")
			body := map[string]any{"cluster_uuid": "c1", "csr": csr}
			if caType != "" {
				body["ca_cert_type"] = caType
			}
			r := e.do(certCreator, http.MethodPost, "/v1/certificates", body)
			e.expect(r, http.StatusCreated, "")
			if r.body["cluster_uuid"] != uuid || r.body["csr"] != csr {
				t.Errorf("body %s", r.raw)
			}
			if got, ok := r.body["ca_cert_type"]; (caType != "") != ok || (ok && got != caType) {
				t.Errorf("ca_cert_type %v", got)
			}
			pemStr, _ := r.body["pem"].(string)
			if strings.HasSuffix(pemStr, "\n") {
				t.Error("PEM ends with a newline")
			}
			ca := certParse(t, e.storedCA(e.cl, caType))
			cert := certParse(t, pemStr)
			if err := cert.CheckSignatureFrom(ca); err != nil {
				t.Errorf("not signed by the %q CA: %v", caType, err)
			}
			if cert.Subject.CommonName != "system:node:n1" || cert.Issuer.CommonName != "c1" {
				t.Errorf("subject %q issuer %q", cert.Subject.CommonName, cert.Issuer.CommonName)
			}
		})
	}
	t.Run("malformed CSR", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPost, "/v1/certificates", map[string]any{"cluster_uuid": uuid, "csr": "fake-csr"}),
			http.StatusBadRequest, "Received invalid csr b'fake-csr'.")
	})
	t.Run("CSR with a wrong signature", func(t *testing.T) {
		e := e.sub(t)
		blk, _ := pem.Decode([]byte(certCSR(t, "x")))
		der := append([]byte(nil), blk.Bytes...)
		der[len(der)-3] ^= 0xff
		bad := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
		r := e.do(certCreator, http.MethodPost, "/v1/certificates", map[string]any{"cluster_uuid": uuid, "csr": bad})
		e.expect(r, http.StatusBadRequest, "")
		if !strings.HasPrefix(r.detail(), "Received invalid csr ") {
			t.Errorf("detail %q", r.detail())
		}
	})
	t.Run("unknown cluster is a 400", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPost, "/v1/certificates", map[string]any{"cluster_uuid": "not_found", "csr": "x"}),
			http.StatusBadRequest, "Cluster not_found could not be found.")
	})
	t.Run("policy denial for a member who is not the creator", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certPeer, http.MethodPost, "/v1/certificates", map[string]any{"cluster_uuid": uuid, "csr": "x"}),
			http.StatusForbidden, "Policy doesn't allow certificate:create to be performed.")
	})
	t.Run("the cluster lookup comes before the policy", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certPeer, http.MethodPost, "/v1/certificates", map[string]any{"cluster_uuid": "nope", "csr": "x"}),
			http.StatusBadRequest, "Cluster nope could not be found.")
	})
	t.Run("unknown attribute", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPost, "/v1/certificates", map[string]any{"cluster_uuid": uuid, "csr": "x", "foo": 1}),
			http.StatusBadRequest, "Unknown attribute for argument certificate: foo")
	})
	t.Run("read-only links", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPost, "/v1/certificates", map[string]any{"cluster_uuid": uuid, "csr": "x", "links": "l"}),
			http.StatusBadRequest, "Invalid input for field/attribute links. Value: 'l'. Cannot set read only field.")
	})
	t.Run("empty csr", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPost, "/v1/certificates", map[string]any{"cluster_uuid": uuid, "csr": ""}),
			http.StatusBadRequest, "Invalid input for field/attribute csr. Value: ''. Value should have a minimum character requirement of 1")
	})
	t.Run("missing cluster_uuid", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPost, "/v1/certificates", map[string]any{"csr": "x"}), http.StatusBadRequest,
			"Invalid input for field/attribute cluster_uuid. Value: 'None'. Mandatory field missing.")
	})
	t.Run("missing csr", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPost, "/v1/certificates", map[string]any{"cluster_uuid": uuid}), http.StatusBadRequest,
			"Invalid input for field/attribute csr. Value: 'None'. Mandatory field missing.")
	})
	t.Run("no body", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPost, "/v1/certificates", nil), http.StatusBadRequest, `Missing argument: "certificate"`)
	})
}

func TestPatchCertificate(t *testing.T) {
	e := certNewEnv(t)
	count := func() int {
		rows, err := e.db.ListX509KeyPairs(context.Background(), db.AllProjects, db.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(rows)
	}
	t.Run("rotation", func(t *testing.T) {
		e := e.sub(t)
		oldCA := e.storedCA(e.cl, "")
		r := e.do(certCreator, http.MethodPatch, "/v1/certificates/"+e.cl.UUID, "{}")
		e.expect(r, http.StatusAccepted, "")
		if r.raw != fmt.Sprintf(`{"uuid":"%s"}`, e.cl.UUID) && r.body["uuid"] != e.cl.UUID {
			t.Errorf("body %s", r.raw)
		}
		cl, err := e.db.GetClusterByUUID(context.Background(), e.cl.UUID, db.AllProjects)
		if err != nil {
			t.Fatal(err)
		}
		if *cl.Status != magnum.StatusUpdateInProgress {
			t.Errorf("status %s", *cl.Status)
		}
		if e.storedCA(cl, "") == oldCA {
			t.Error("CA not replaced")
		}
		// GET serves the new CA.
		r = e.do(certCreator, http.MethodGet, "/v1/certificates/"+e.cl.UUID, nil)
		if r.body["pem"] != e.storedCA(cl, "") {
			t.Error("GET does not serve the rotated CA")
		}
	})
	t.Run("state guard", func(t *testing.T) {
		e := e.sub(t)
		// The cluster is now UPDATE_IN_PROGRESS.
		e.expect(e.do(certCreator, http.MethodPatch, "/v1/certificates/"+e.cl.UUID, nil), http.StatusBadRequest,
			`Updating a cluster when status is "UPDATE_IN_PROGRESS" is not supported.`)
	})
	t.Run("a driver that cannot rotate changes nothing", func(t *testing.T) {
		e := e.sub(t)
		cl := e.addCluster("norot", magnum.StatusCreateComplete, false, map[string]string{fake.LabelNoCARotation: "true"})
		before := count()
		e.expect(e.do(certCreator, http.MethodPatch, "/v1/certificates/norot", nil), http.StatusBadRequest,
			"'rotate_ca_certificate' is not supported by this driver.")
		if n := count(); n != before {
			t.Errorf("rows %d → %d", before, n)
		}
		got, _ := e.db.GetClusterByUUID(context.Background(), cl.UUID, db.AllProjects)
		if *got.Status != magnum.StatusCreateComplete {
			t.Errorf("status %s", *got.Status)
		}
	})
	t.Run("TLS disabled", func(t *testing.T) {
		e := e.sub(t)
		e.addCluster("notls", magnum.StatusCreateComplete, true, nil)
		e.expect(e.do(certCreator, http.MethodPatch, "/v1/certificates/notls", nil), http.StatusBadRequest,
			"Rotating the CA certificate on a non-TLS cluster is not supported")
	})
	t.Run("policy", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certReader, http.MethodPatch, "/v1/certificates/c1", nil), http.StatusForbidden,
			"Policy doesn't allow certificate:rotate_ca to be performed.")
	})
	t.Run("unknown cluster", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPatch, "/v1/certificates/nope", nil), http.StatusNotFound, "Cluster nope could not be found.")
	})
	t.Run("unknown body key", func(t *testing.T) {
		e := e.sub(t)
		e.expect(e.do(certCreator, http.MethodPatch, "/v1/certificates/c1", `{"x": 1}`), http.StatusBadRequest, `Unknown argument: "x"`)
	})
}

func TestDeleteClusterCertificatesRemovesRows(t *testing.T) {
	e := certNewEnv(t)
	ctx := context.Background()
	rows, _ := e.db.ListX509KeyPairs(ctx, db.AllProjects, db.ListOptions{})
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	if err := e.cond.DeleteClusterCertificates(ctx, e.cl); err != nil {
		t.Fatal(err)
	}
	rows, _ = e.db.ListX509KeyPairs(ctx, db.AllProjects, db.ListOptions{})
	if len(rows) != 0 {
		t.Errorf("%d rows left", len(rows))
	}
}
