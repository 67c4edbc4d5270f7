package conductor

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/fake"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// certDialects returns the dialects to test: SQLite always, MariaDB and
// PostgreSQL when their DSN variable is set (required when CI=true).
func certDialects(t *testing.T) []string {
	out := []string{db.DialectSQLite}
	for _, d := range []struct{ name, env string }{
		{db.DialectMySQL, "OPENKEEL_TEST_MYSQL_DSN"},
		{db.DialectPostgres, "OPENKEEL_TEST_POSTGRES_DSN"},
	} {
		switch {
		case os.Getenv(d.env) != "":
			out = append(out, d.name)
		case os.Getenv("CI") == "true":
			t.Errorf("%s is not set (required when CI=true)", d.env)
		default:
			t.Logf("%s not set: skipping %s", d.env, d.name)
		}
	}
	return out
}

// certFreshDB opens an empty, migrated database of the dialect, dropped
// when the test ends.
func certFreshDB(t *testing.T, dialect string) *db.DB {
	t.Helper()
	d := certEmptyDB(t, dialect)
	if err := d.Upgrade(context.Background()); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	return d
}

// certEmptyDB opens an empty database of the dialect, dropped when the
// test ends.
func certEmptyDB(t *testing.T, dialect string) *db.DB {
	t.Helper()
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "okm_cert_" + hex.EncodeToString(b[:])
	var dsn string
	switch dialect {
	case db.DialectSQLite:
		dsn = filepath.Join(t.TempDir(), name+".db")
	case db.DialectMySQL, db.DialectPostgres:
		env := map[string]string{db.DialectMySQL: "OPENKEEL_TEST_MYSQL_DSN", db.DialectPostgres: "OPENKEEL_TEST_POSTGRES_DSN"}[dialect]
		base := os.Getenv(env)
		admin, err := db.Open(ctx, dialect, base, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		create := "CREATE DATABASE " + name
		if dialect == db.DialectMySQL {
			create += " CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
		}
		if _, err := admin.SQL().ExecContext(ctx, create); err != nil {
			t.Fatalf("create database: %v", err)
		}
		t.Cleanup(func() {
			drop := "DROP DATABASE IF EXISTS " + name
			if dialect == db.DialectPostgres {
				drop += " WITH (FORCE)"
			}
			if _, err := admin.SQL().ExecContext(context.Background(), drop); err != nil {
				t.Errorf("drop database %s: %v", name, err)
			}
			admin.Close()
		})
		if dialect == db.DialectMySQL {
			q := strings.IndexByte(base, '?')
			if q < 0 {
				q = len(base)
			}
			slash := strings.LastIndexByte(base[:q], '/')
			dsn = base[:slash+1] + name + base[q:]
		} else {
			u, err := url.Parse(base)
			if err != nil {
				t.Fatal(err)
			}
			u.Path = "/" + name
			dsn = u.String()
		}
	}
	d, err := db.Open(ctx, dialect, dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// certConductor returns a Conductor over database with the fake driver.
func certConductor(database *db.DB) *Conductor {
	return &Conductor{
		DB:      database,
		Drivers: driver.NewRegistry(driver.Selection{EnabledBeta: []string{"fake"}}, fake.New(fake.Options{})),
	}
}

// certCtx is a request context of a project member.
func certCtx(project, user string) context.Context {
	return magnum.WithRequestContext(context.Background(), &magnum.RequestContext{
		ProjectID: project, UserID: user, Roles: []string{"member"},
	})
}

// certCreateCluster inserts a template (driver fake) and a cluster.
func certCreateCluster(t *testing.T, c *Conductor, name string, status magnum.Status, tlsDisabled bool, labels map[string]string) *magnum.Cluster {
	t.Helper()
	ctx := context.Background()
	str := func(s string) *string { return &s }
	tpl := magnum.ClusterTemplate{
		UUID: NewUUID(), Name: "tpl-" + name, ProjectID: "p1", UserID: "u1",
		COE: str("kubernetes"), ServerType: str("vm"), ClusterDistro: str("ubuntu"), Driver: str("fake"),
		TLSDisabled: &tlsDisabled,
	}
	if err := c.DB.CreateClusterTemplate(ctx, &tpl); err != nil {
		t.Fatal(err)
	}
	cl := magnum.Cluster{
		UUID: NewUUID(), Name: name, ProjectID: "p1", UserID: "u1", ClusterTemplateID: tpl.UUID,
		Status: &status, Labels: labels,
	}
	if err := c.DB.CreateCluster(ctx, &cl); err != nil {
		t.Fatal(err)
	}
	return &cl
}

// certSaveRefs writes the certificate references of cl.
func certSaveRefs(t *testing.T, c *Conductor, cl *magnum.Cluster) {
	t.Helper()
	err := c.DB.InTx(context.Background(), func(tx *db.Tx) error {
		return tx.UpdateCluster(context.Background(), cl, "ca_cert_ref", "etcd_ca_cert_ref", "front_proxy_ca_cert_ref", "magnum_cert_ref")
	})
	if err != nil {
		t.Fatal(err)
	}
}

func certCountRows(t *testing.T, c *Conductor) int {
	t.Helper()
	rows, err := c.DB.ListX509KeyPairs(context.Background(), db.AllProjects, db.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// certNewCSR returns a PEM CSR for CN=cn with an ECDSA key.
func certNewCSR(t *testing.T, cn string) string {
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

// certVerify checks that certPEM is signed by caPEM.
func certVerify(t *testing.T, certPEM, caPEM string) *x509.Certificate {
	t.Helper()
	parse := func(s string) *x509.Certificate {
		b, _ := pem.Decode([]byte(s))
		if b == nil {
			t.Fatalf("no PEM in %q", s)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cert, ca := parse(certPEM), parse(caPEM)
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Fatalf("certificate not signed by the CA: %v", err)
	}
	return cert
}

func TestCertificateStoreRoundTrip(t *testing.T) {
	for _, dialect := range certDialects(t) {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			database := certFreshDB(t, dialect)
			store, err := NewCertStore(database, certs.StoreX509KeyPair, nil)
			if err != nil {
				t.Fatal(err)
			}
			ca, err := certs.GenerateCA("round-trip", certs.DefaultX509Options())
			if err != nil {
				t.Fatal(err)
			}
			ctx := certCtx("proj-1", "user-1")
			ref, err := store.Put(ctx, *ca, "round-trip")
			if err != nil {
				t.Fatal(err)
			}
			if !magnum.IsUUIDLike(ref) {
				t.Fatalf("ref %q is not a UUID", ref)
			}
			row, err := database.GetX509KeyPairByUUID(context.Background(), ref, db.AllProjects)
			if err != nil {
				t.Fatal(err)
			}
			if row.ProjectID != "proj-1" || row.UserID != "user-1" || row.Intermediates != nil {
				t.Errorf("row owner/intermediates = %q %q %v", row.ProjectID, row.UserID, row.Intermediates)
			}
			if certStr(row.Certificate) != string(ca.CertPEM) || certStr(row.PrivateKey) != string(ca.KeyPEM) ||
				certStr(row.PrivateKeyPassphrase) != string(ca.Passphrase) {
				t.Error("row columns differ from the key pair")
			}
			if !strings.HasPrefix(certStr(row.PrivateKey), "-----BEGIN ENCRYPTED PRIVATE KEY-----") {
				t.Errorf("private_key is not encrypted PKCS#8: %.40q", certStr(row.PrivateKey))
			}
			got, err := store.Get(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.CertPEM) != string(ca.CertPEM) || string(got.KeyPEM) != string(ca.KeyPEM) || string(got.Passphrase) != string(ca.Passphrase) {
				t.Error("Get differs from Put")
			}
			if _, err := got.PrivateKey(); err != nil {
				t.Errorf("stored key does not decrypt: %v", err)
			}
			if err := store.Delete(ctx, ref); err != nil {
				t.Fatal(err)
			}
			if _, err := store.Get(ctx, ref); !errors.Is(err, certs.ErrNotFound) {
				t.Errorf("Get after Delete: %v, want ErrNotFound", err)
			}
			if err := store.Delete(ctx, ref); !errors.Is(err, certs.ErrNotFound) {
				t.Errorf("second Delete: %v, want ErrNotFound", err)
			}
		})
	}
}

func TestNewCertStoreRefusesOtherTypes(t *testing.T) {
	for _, typ := range []string{certs.StoreBarbican, certs.StoreLocal, ""} {
		if _, err := NewCertStore(nil, typ, nil); err == nil {
			t.Errorf("NewCertStore(%q) succeeded", typ)
		}
	}
}

// certSpecFile reads ${OKM_SPEC_DIR:-../shared/spec}/db/<name> relative to
// the repository root (skip, or fail on CI, when absent).
func certSpecFile(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("OKM_SPEC_DIR")
	if dir == "" {
		dir = "../shared/spec"
	}
	if !filepath.IsAbs(dir) {
		root, err := filepath.Abs(".")
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(root)
			if parent == root {
				t.Fatal("go.mod not found")
			}
			root = parent
		}
		dir = filepath.Join(root, dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "db", name))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("spec file: %v", err)
		}
		t.Skipf("spec file not found (set OKM_SPEC_DIR): %v", err)
	}
	return string(b)
}

var certInsertLine = regexp.MustCompile("^INSERT INTO `(\\w+)` \\(([^)]*)\\) VALUES \\((.*)\\);$")

// certParseValues parses a mysqldump value list: NULL, numbers and quoted
// strings with backslash escapes (nil for NULL).
func certParseValues(s string) ([]*string, error) {
	var out []*string
	for i := 0; i < len(s); {
		switch {
		case s[i] == ',' || s[i] == ' ':
			i++
		case strings.HasPrefix(s[i:], "NULL"):
			out = append(out, nil)
			i += 4
		case s[i] == '\'':
			var b strings.Builder
			i++
			for ; i < len(s) && s[i] != '\''; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					switch s[i] {
					case 'n':
						b.WriteByte('\n')
					case 'r':
						b.WriteByte('\r')
					case 't':
						b.WriteByte('\t')
					case '0':
						b.WriteByte(0)
					default:
						b.WriteByte(s[i])
					}
					continue
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated string")
			}
			i++
			v := b.String()
			out = append(out, &v)
		default:
			j := i
			for j < len(s) && s[j] != ',' {
				j++
			}
			v := s[i:j]
			out = append(out, &v)
			i = j
		}
	}
	return out, nil
}

// certSampleRows returns the rows of one table of the sample data as
// column → value maps.
func certSampleRows(t *testing.T, sample, table string) []map[string]*string {
	t.Helper()
	var out []map[string]*string
	for _, line := range strings.Split(sample, "\n") {
		m := certInsertLine.FindStringSubmatch(line)
		if m == nil || m[1] != table {
			continue
		}
		cols := strings.Split(strings.ReplaceAll(m[2], "`", ""), ", ")
		vals, err := certParseValues(m[3])
		if err != nil || len(vals) != len(cols) {
			t.Fatalf("parse %s row: %v (%d columns, %d values)", table, err, len(cols), len(vals))
		}
		row := map[string]*string{}
		for i, c := range cols {
			row[c] = vals[i]
		}
		out = append(out, row)
	}
	return out
}

// TestSampleCertificates reads the x509keypair rows Magnum wrote
// (spec/db/sample-data-mariadb.sql): each cluster's CAs come back byte for
// byte, their keys decrypt with the stored passphrase, a CSR signed with
// each CA verifies against it, and deleting the cluster's certificates
// removes its four rows.
func TestSampleCertificates(t *testing.T) {
	sample := certSpecFile(t, "sample-data-mariadb.sql")
	clusters := certSampleRows(t, sample, "cluster")
	keypairs := certSampleRows(t, sample, "x509keypair")
	if len(clusters) != 3 || len(keypairs) != 12 {
		t.Fatalf("sample has %d clusters and %d key pairs, want 3 and 12", len(clusters), len(keypairs))
	}
	for _, dialect := range certDialects(t) {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			c := certConductor(certFreshDB(t, dialect))
			ctx := context.Background()
			byUUID := map[string]map[string]*string{}
			checked := 0
			for _, kp := range keypairs {
				v := magnum.X509KeyPair{
					UUID: *kp["uuid"], ProjectID: *kp["project_id"], UserID: *kp["user_id"],
					Certificate: kp["certificate"], PrivateKey: kp["private_key"],
					PrivateKeyPassphrase: kp["private_key_passphrase"], Intermediates: kp["intermediates"],
				}
				if err := c.DB.CreateX509KeyPair(ctx, &v); err != nil {
					t.Fatal(err)
				}
				byUUID[v.UUID] = kp
			}
			for _, row := range clusters {
				status := magnum.Status(*row["status"])
				cl := &magnum.Cluster{
					UUID: *row["uuid"], Name: *row["name"], ProjectID: *row["project_id"], UserID: *row["user_id"],
					ClusterTemplateID: *row["cluster_template_id"], Status: &status,
					CACertRef: row["ca_cert_ref"], MagnumCertRef: row["magnum_cert_ref"],
					EtcdCACertRef: row["etcd_ca_cert_ref"], FrontProxyCACertRef: row["front_proxy_ca_cert_ref"],
				}
				if err := c.DB.CreateCluster(ctx, cl); err != nil {
					t.Fatal(err)
				}
				for caType, ref := range map[string]*string{
					"": cl.CACertRef, "kubernetes": cl.CACertRef, "etcd": cl.EtcdCACertRef,
					"front_proxy": cl.FrontProxyCACertRef, "front-proxy": cl.FrontProxyCACertRef,
				} {
					want, ok := byUUID[*ref]
					if !ok {
						// The sample's third cluster references a client
						// certificate row that was not dumped.
						continue
					}
					got, err := c.GetCACertificate(ctx, cl, caType)
					if err != nil {
						t.Fatalf("%s %q: %v", cl.Name, caType, err)
					}
					if got != *want["certificate"] {
						t.Errorf("%s %q: PEM differs from the stored row", cl.Name, caType)
					}
					kp, err := c.loadCA(ctx, cl, caType)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := kp.PrivateKey(); err != nil {
						t.Errorf("%s %q: Magnum's key does not decrypt: %v", cl.Name, caType, err)
					}
					signed, err := c.SignCertificate(ctx, cl, certNewCSR(t, "node-1"), caType)
					if err != nil {
						t.Fatalf("%s %q: sign: %v", cl.Name, caType, err)
					}
					cert := certVerify(t, signed, got)
					if cert.Issuer.CommonName != cl.Name || cert.Subject.CommonName != "node-1" {
						t.Errorf("issuer %q subject %q", cert.Issuer.CommonName, cert.Subject.CommonName)
					}
					checked++
				}
			}
			if checked != 15 {
				t.Errorf("checked %d (cluster, ca_cert_type) pairs, want 15", checked)
			}
			// Delete the first cluster's certificates: its four rows go.
			first := clusters[0]
			cl, err := c.DB.GetClusterByUUID(ctx, *first["uuid"], db.AllProjects)
			if err != nil {
				t.Fatal(err)
			}
			before := certCountRows(t, c)
			if err := c.DeleteClusterCertificates(ctx, cl); err != nil {
				t.Fatal(err)
			}
			if n := certCountRows(t, c); n != before-4 {
				t.Errorf("rows after delete = %d, want %d", n, before-4)
			}
			if cl.CACertRef != nil || cl.MagnumCertRef != nil || cl.EtcdCACertRef != nil || cl.FrontProxyCACertRef != nil {
				t.Error("references not cleared")
			}
			for _, ref := range []*string{first["ca_cert_ref"], first["etcd_ca_cert_ref"]} {
				if _, err := c.DB.GetX509KeyPairByUUID(ctx, *ref, db.AllProjects); !errors.Is(err, db.ErrNotFound) {
					t.Errorf("row %s still there: %v", *ref, err)
				}
			}
		})
	}
}

func TestGenerateClusterCertificates(t *testing.T) {
	c := certConductor(certFreshDB(t, db.DialectSQLite))
	cl := certCreateCluster(t, c, "gen-1", magnum.StatusCreateInProgress, false, nil)
	ctx := certCtx("p1", "u1")
	if err := c.GenerateClusterCertificates(ctx, cl); err != nil {
		t.Fatal(err)
	}
	refs := []*string{cl.CACertRef, cl.EtcdCACertRef, cl.FrontProxyCACertRef, cl.MagnumCertRef}
	seen := map[string]bool{}
	for _, r := range refs {
		if r == nil || seen[*r] {
			t.Fatalf("references %v", refs)
		}
		seen[*r] = true
	}
	if n := certCountRows(t, c); n != 4 {
		t.Fatalf("%d rows, want 4", n)
	}
	cas := map[string]string{}
	for _, typ := range []string{"kubernetes", "etcd", "front-proxy"} {
		p, err := c.GetCACertificate(ctx, cl, typ)
		if err != nil {
			t.Fatal(err)
		}
		ca := certVerify(t, p, p)
		if ca.Subject.CommonName != "gen-1" || !ca.IsCA {
			t.Errorf("%s CA subject %q CA %t", typ, ca.Subject.CommonName, ca.IsCA)
		}
		cas[typ] = p
	}
	if cas["kubernetes"] == cas["etcd"] || cas["etcd"] == cas["front-proxy"] {
		t.Error("the three CAs are not distinct")
	}
	client, err := c.certStore().Get(ctx, *cl.MagnumCertRef)
	if err != nil {
		t.Fatal(err)
	}
	cc := certVerify(t, string(client.CertPEM), cas["kubernetes"])
	if cc.Subject.CommonName != "admin" || len(cc.Subject.Organization) != 1 || cc.Subject.Organization[0] != "system:masters" {
		t.Errorf("client subject %v", cc.Subject)
	}
	row, err := c.DB.GetX509KeyPairByUUID(ctx, *cl.CACertRef, db.AllProjects)
	if err != nil {
		t.Fatal(err)
	}
	if row.ProjectID != "p1" || row.UserID != "u1" {
		t.Errorf("owner %q/%q", row.ProjectID, row.UserID)
	}
	if err := c.DeleteClusterCertificates(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if n := certCountRows(t, c); n != 0 {
		t.Errorf("%d rows after delete, want 0", n)
	}
	// A second delete finds nothing to do.
	if err := c.DeleteClusterCertificates(ctx, cl); err != nil {
		t.Error(err)
	}
}

func TestGetCACertificateMissing(t *testing.T) {
	c := certConductor(certFreshDB(t, db.DialectSQLite))
	cl := certCreateCluster(t, c, "nocerts", magnum.StatusCreateComplete, false, nil)
	_, err := c.GetCACertificate(context.Background(), cl, "")
	var me *magnum.Error
	if !errors.As(err, &me) || me.Status != http.StatusNotFound || me.Message != "A key pair None could not be found." {
		t.Errorf("no reference: %v", err)
	}
	ref := "3b6c8a52-1b0e-4bd7-9f0a-2a4b2b4c5d6e"
	cl.EtcdCACertRef = &ref
	_, err = c.GetCACertificate(context.Background(), cl, "etcd")
	if !errors.As(err, &me) || me.Status != http.StatusNotFound || me.Message != fmt.Sprintf("A key pair %s could not be found.", ref) {
		t.Errorf("missing row: %v", err)
	}
}

func TestSignCertificateErrors(t *testing.T) {
	c := certConductor(certFreshDB(t, db.DialectSQLite))
	cl := certCreateCluster(t, c, "sign-1", magnum.StatusCreateComplete, false, nil)
	ctx := certCtx("p1", "u1")
	if err := c.GenerateClusterCertificates(ctx, cl); err != nil {
		t.Fatal(err)
	}
	_, err := c.SignCertificate(ctx, cl, "fake-csr", "")
	var me *magnum.Error
	if !errors.As(err, &me) || me.Status != http.StatusBadRequest || me.Kind != "InvalidCsr" {
		t.Fatalf("malformed CSR: %v", err)
	}
	if me.Message != "Received invalid csr b'fake-csr'." {
		t.Errorf("message %q", me.Message)
	}
	// A CSR whose signature does not match its key.
	good := certNewCSR(t, "x")
	blk, _ := pem.Decode([]byte(good))
	der := append([]byte(nil), blk.Bytes...)
	der[len(der)-3] ^= 0xff
	bad := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	if _, err := c.SignCertificate(ctx, cl, bad, ""); !errors.As(err, &me) || me.Status != http.StatusBadRequest {
		t.Errorf("wrong signature: %v", err)
	}
}

func TestRotateCA(t *testing.T) {
	c := certConductor(certFreshDB(t, db.DialectSQLite))
	c.Now = func() time.Time { return time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC) }
	ctx := certCtx("p1", "u1")
	setup := func(name string, status magnum.Status, tls bool, labels map[string]string) *magnum.Cluster {
		cl := certCreateCluster(t, c, name, status, tls, labels)
		if err := c.GenerateClusterCertificates(ctx, cl); err != nil {
			t.Fatal(err)
		}
		certSaveRefs(t, c, cl)
		return cl
	}
	reload := func(cl *magnum.Cluster) *magnum.Cluster {
		r, err := c.DB.GetClusterByUUID(context.Background(), cl.UUID, db.AllProjects)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	expect400 := func(t *testing.T, err error, msg string) {
		t.Helper()
		var me *magnum.Error
		if !errors.As(err, &me) || me.Status != http.StatusBadRequest || me.Message != msg {
			t.Fatalf("error = %v, want 400 %q", err, msg)
		}
	}

	t.Run("success regenerates every certificate", func(t *testing.T) {
		cl := setup("rot-ok", magnum.StatusCreateComplete, false, nil)
		old := *cl.CACertRef
		if err := c.RotateCA(ctx, cl); err != nil {
			t.Fatal(err)
		}
		got := reload(cl)
		if *got.Status != magnum.StatusUpdateInProgress || got.StatusReason != nil {
			t.Errorf("status %v %v", *got.Status, got.StatusReason)
		}
		if *got.CACertRef == old || got.EtcdCACertRef == nil || got.MagnumCertRef == nil || got.FrontProxyCACertRef == nil {
			t.Error("references not replaced")
		}
		if _, err := c.GetCACertificate(ctx, got, ""); err != nil {
			t.Error(err)
		}
	})
	t.Run("a driver that cannot rotate changes nothing", func(t *testing.T) {
		cl := setup("rot-no", magnum.StatusUpdateComplete, false, map[string]string{fake.LabelNoCARotation: "true"})
		before := certCountRows(t, c)
		err := c.RotateCA(ctx, cl)
		expect400(t, err, "'rotate_ca_certificate' is not supported by this driver.")
		if n := certCountRows(t, c); n != before {
			t.Errorf("rows %d → %d", before, n)
		}
		got := reload(cl)
		if *got.Status != magnum.StatusUpdateComplete || *got.CACertRef != *cl.CACertRef {
			t.Errorf("cluster changed: %v", *got.Status)
		}
	})
	t.Run("state guard", func(t *testing.T) {
		cl := setup("rot-busy", magnum.StatusCreateInProgress, false, nil)
		before := certCountRows(t, c)
		expect400(t, c.RotateCA(ctx, cl), `Updating a cluster when status is "CREATE_IN_PROGRESS" is not supported.`)
		if n := certCountRows(t, c); n != before {
			t.Errorf("rows %d → %d", before, n)
		}
	})
	t.Run("TLS disabled", func(t *testing.T) {
		cl := setup("rot-notls", magnum.StatusCreateComplete, true, nil)
		expect400(t, c.RotateCA(ctx, cl), "Rotating the CA certificate on a non-TLS cluster is not supported")
	})
	t.Run("driver failure leaves UPDATE_FAILED", func(t *testing.T) {
		cl := setup("rot-fail", magnum.StatusCreateComplete, false, map[string]string{fake.LabelError: fake.OpRotateCA})
		old := *cl.CACertRef
		if err := c.RotateCA(ctx, cl); err == nil {
			t.Fatal("no error")
		}
		got := reload(cl)
		if *got.Status != magnum.StatusUpdateFailed || got.StatusReason == nil || *got.CACertRef == old {
			t.Errorf("status %v reason %v", *got.Status, got.StatusReason)
		}
	})
}

// certExecScript runs a mysqldump file statement by statement on one
// connection (a statement ends with ";" at the end of a line).
func certExecScript(t *testing.T, d *db.DB, script string) {
	t.Helper()
	ctx := t.Context()
	conn, err := d.SQL().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		tl := strings.TrimSpace(line)
		if tl == "" || strings.HasPrefix(tl, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(tl, ";") {
			stmt := strings.TrimSuffix(strings.TrimSpace(cur.String()), ";")
			cur.Reset()
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("exec %.200s: %v", stmt, err)
			}
		}
	}
}

// TestMagnumDatabaseCertificates loads Magnum's own schema and sample rows
// into MariaDB, adopts the database, and serves the stored CAs: GET returns
// the stored PEM byte for byte and a CSR signed with it verifies.
func TestMagnumDatabaseCertificates(t *testing.T) {
	if os.Getenv("OPENKEEL_TEST_MYSQL_DSN") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("OPENKEEL_TEST_MYSQL_DSN is not set (required when CI=true)")
		}
		t.Skip("OPENKEEL_TEST_MYSQL_DSN not set")
	}
	schema := certSpecFile(t, "schema-mariadb.sql")
	sample := certSpecFile(t, "sample-data-mariadb.sql")
	d := certEmptyDB(t, db.DialectMySQL)
	certExecScript(t, d, schema)
	certExecScript(t, d, sample)
	ctx := context.Background()
	if err := d.Adopt(ctx); err != nil {
		t.Fatalf("adopt: %v", err)
	}
	c := certConductor(d)
	rows := map[string]string{}
	for _, kp := range certSampleRows(t, sample, "x509keypair") {
		rows[*kp["uuid"]] = *kp["certificate"]
	}
	rctx := certCtx("8c1f4b2ba1c94e5c9a5d1f0e3b7a6d21", "2f0a6c9e3d8b4f1aa7e5c6d4b3a29180")
	cl, err := c.GetCluster(rctx, "k8s-prod-1", ScopeFor(magnum.FromContext(rctx), false))
	if err != nil {
		t.Fatal(err)
	}
	for _, caType := range []string{"", "etcd", "front_proxy"} {
		got, err := c.GetCACertificate(rctx, cl, caType)
		if err != nil {
			t.Fatal(err)
		}
		if want := rows[*caRef(cl, caType)]; got != want {
			t.Errorf("%q: PEM differs from the stored row", caType)
		}
		signed, err := c.SignCertificate(rctx, cl, certNewCSR(t, "kubelet"), caType)
		if err != nil {
			t.Fatal(err)
		}
		certVerify(t, signed, got)
	}
}
