package certs

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// certShape is everything about a certificate that must be identical
// between Magnum and us, leaving out keys, serial values and signatures.
type certShape struct {
	Version     int
	UUID4Serial bool
	SigAlg      x509.SignatureAlgorithm
	Issuer      []byte
	Subject     []byte
	ValidDays   float64
	Extensions  []extShape
}

type extShape struct {
	OID      string
	Critical bool
	Value    []byte // nil for the subject key identifier (checked apart)
}

func shapeOf(t *testing.T, c *x509.Certificate) certShape {
	t.Helper()
	s := certShape{
		Version:   c.Version,
		SigAlg:    c.SignatureAlgorithm,
		Issuer:    c.RawIssuer,
		Subject:   c.RawSubject,
		ValidDays: c.NotAfter.Sub(c.NotBefore).Hours() / 24,
	}
	// int(uuid.uuid4()): at most 128 bits, with the version 4 and variant
	// bits set.
	if c.SerialNumber.Sign() > 0 && c.SerialNumber.BitLen() <= 128 {
		var b [16]byte
		c.SerialNumber.FillBytes(b[:])
		s.UUID4Serial = b[6]>>4 == 4 && b[8]>>6 == 2
	}
	spki, err := subjectKeyIdentifier(c.RawSubjectPublicKeyInfo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Extensions {
		es := extShape{OID: e.Id.String(), Critical: e.Critical, Value: e.Value}
		if e.Id.Equal(oidSubjectKeyID) {
			if !bytes.Equal(e.Value, derOctetString(spki)) {
				t.Errorf("subject key identifier is not SHA-1 of the public key")
			}
			es.Value = nil
		}
		s.Extensions = append(s.Extensions, es)
	}
	return s
}

func TestGenerateMatchesSampleRows(t *testing.T) {
	rows := sampleKeyPairs(t)
	// Rows 1-3 are the kubernetes, etcd and front-proxy CAs of cluster
	// k8s-prod-1, row 4 its admin client certificate.
	ca := mustCert(t, []byte(rows[0].Cert))
	client := mustCert(t, []byte(rows[3].Cert))
	name := ca.Subject.CommonName
	if name != "k8s-prod-1" {
		t.Fatalf("sample CA name %q", name)
	}

	opts := testOptions()
	ours, err := GenerateCA(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	ourCA := mustCert(t, ours.CertPEM)
	if diff := cmp.Diff(shapeOf(t, ca), shapeOf(t, ourCA)); diff != "" {
		t.Errorf("CA differs from Magnum's (-magnum +ours):\n%s", diff)
	}
	for _, r := range rows[1:3] {
		if diff := cmp.Diff(shapeOf(t, mustCert(t, []byte(r.Cert))), shapeOf(t, ourCA)); diff != "" {
			t.Errorf("CA differs from Magnum's row %s (-magnum +ours):\n%s", r.ID, diff)
		}
	}
	ourClient, err := GenerateClientCert(ours, AdminCommonName, AdminOrganization, opts)
	if err != nil {
		t.Fatal(err)
	}
	oc := mustCert(t, ourClient.CertPEM)
	if diff := cmp.Diff(shapeOf(t, client), shapeOf(t, oc)); diff != "" {
		t.Errorf("client certificate differs from Magnum's (-magnum +ours):\n%s", diff)
	}
	if bytes.HasSuffix(ours.CertPEM, []byte("\n")) || bytes.HasSuffix([]byte(rows[0].Cert), []byte("\n")) {
		t.Error("certificate PEM must have no trailing newline")
	}
	if !bytes.HasSuffix(ours.KeyPEM, []byte("-----END ENCRYPTED PRIVATE KEY-----\n")) {
		t.Error("key PEM must be an ENCRYPTED PRIVATE KEY with a trailing newline")
	}
	// The sample client certificate is signed by the sample Kubernetes CA,
	// ours by ours.
	if err := client.CheckSignatureFrom(ca); err != nil {
		t.Errorf("sample client not signed by row 1: %v", err)
	}
	if err := oc.CheckSignatureFrom(ourCA); err != nil {
		t.Errorf("our client not signed by our CA: %v", err)
	}
}

func TestGenerateClusterCertificates(t *testing.T) {
	opts := testOptions()
	cc, err := GenerateClusterCertificates("my-cluster", opts)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	k8s := mustCert(t, cc.Kubernetes.CertPEM)
	pool.AddCert(k8s)
	for name, kp := range map[string]*KeyPair{"kubernetes": cc.Kubernetes, "etcd": cc.Etcd, "front-proxy": cc.FrontProxy, "client": cc.Client} {
		c := mustCert(t, kp.CertPEM)
		key, err := kp.PrivateKey()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if key.(*rsa.PrivateKey).N.BitLen() != 2048 {
			t.Errorf("%s: key size %d", name, key.(*rsa.PrivateKey).N.BitLen())
		}
		if c.Issuer.CommonName != "my-cluster" {
			t.Errorf("%s: issuer %s", name, c.Issuer)
		}
		wantBefore := time.Date(2026, 11, 29, 1, 48, 7, 0, time.UTC)
		if !c.NotBefore.Equal(wantBefore) || !c.NotAfter.Equal(wantBefore.Add(1826*24*time.Hour)) {
			t.Errorf("%s: validity %s - %s", name, c.NotBefore, c.NotAfter)
		}
		if len(kp.Passphrase) != 12 {
			t.Errorf("%s: passphrase length %d", name, len(kp.Passphrase))
		}
		dec, err := kp.DecryptedKeyPEM()
		if err != nil || !bytes.HasPrefix(dec, []byte("-----BEGIN PRIVATE KEY-----\n")) {
			t.Errorf("%s: decrypted key PEM: %v", name, err)
		}
	}
	client := mustCert(t, cc.Client.CertPEM)
	if client.Subject.CommonName != "admin" || len(client.Subject.Organization) != 1 || client.Subject.Organization[0] != "system:masters" {
		t.Errorf("client subject %s", client.Subject)
	}
	if _, err := client.Verify(x509.VerifyOptions{
		Roots: pool, CurrentTime: fixedClock(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		t.Errorf("client does not chain to the kubernetes CA: %v", err)
	}
	if bytes.Equal(cc.Kubernetes.CertPEM, cc.Etcd.CertPEM) || bytes.Equal(cc.Etcd.Passphrase, cc.FrontProxy.Passphrase) {
		t.Error("CAs are not independent")
	}
}

func TestGenerateNames(t *testing.T) {
	name := "c"
	if got := IssuerName(&name, "u"); got != "c" {
		t.Errorf("IssuerName(name) = %q", got)
	}
	if got := IssuerName(nil, "u"); got != "u" {
		t.Errorf("IssuerName(nil) = %q", got)
	}
	opts := testOptions()
	opts.RSAKeySize = 1024
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"", false},
		{string(bytes.Repeat([]byte("a"), 64)), true},
		{string(bytes.Repeat([]byte("a"), 65)), false},
		{"é" + string(bytes.Repeat([]byte("a"), 63)), true},
	} {
		_, err := GenerateCA(tc.name, opts)
		if (err == nil) != tc.ok {
			t.Errorf("GenerateCA(%d chars) error = %v, want ok=%v", len(tc.name), err, tc.ok)
		}
	}
}

func TestValidityUsesWallClockAsUTC(t *testing.T) {
	// Magnum: datetime.today() is naive local time, written as UTC.
	loc := time.FixedZone("UTC+2", 2*3600)
	opts := DefaultX509Options()
	opts.Now = func() time.Time { return time.Date(2026, 1, 10, 12, 0, 0, 999, loc) }
	nb, na := validity(opts)
	if want := time.Date(2026, 1, 9, 12, 0, 0, 0, time.UTC); !nb.Equal(want) {
		t.Errorf("notBefore %s, want %s", nb, want)
	}
	if want := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC).Add(1825 * 24 * time.Hour); !na.Equal(want) {
		t.Errorf("notAfter %s, want %s", na, want)
	}
	// Dates from 2050 are GeneralizedTime.
	if got := derTime(time.Date(2051, 1, 1, 0, 0, 0, 0, time.UTC)); got[0] != tagGeneralized {
		t.Errorf("2051 encoded with tag %#x", got[0])
	}
}

func TestParseCACertType(t *testing.T) {
	cc := &ClusterCertificates{Kubernetes: &KeyPair{}, Etcd: &KeyPair{}, FrontProxy: &KeyPair{}}
	for in, want := range map[string]CAKind{
		"": CAKubernetes, "kubernetes": CAKubernetes, "ETCD": CAKubernetes, "bogus": CAKubernetes,
		"etcd": CAEtcd, "front_proxy": CAFrontProxy, "front-proxy": CAFrontProxy,
	} {
		if got := ParseCACertType(in); got != want {
			t.Errorf("ParseCACertType(%q) = %s, want %s", in, got, want)
		}
	}
	if cc.CA(CAEtcd) != cc.Etcd || cc.CA(CAFrontProxy) != cc.FrontProxy || cc.CA(CAKubernetes) != cc.Kubernetes {
		t.Error("CA() picks the wrong key pair")
	}
}

func TestGenerateClusterCertificatesContextStops(t *testing.T) {
	opts := DefaultX509Options()
	opts.RSAKeySize = 1024
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cc, err := GenerateClusterCertificatesContext(ctx, "c1", opts)
	if !errors.Is(err, context.Canceled) || cc != nil {
		t.Fatalf("got %v, %v; want context.Canceled and nothing", cc, err)
	}
	cc, err = GenerateClusterCertificatesContext(context.Background(), "c1", opts)
	if err != nil || cc.Kubernetes == nil || cc.Etcd == nil || cc.FrontProxy == nil || cc.Client == nil {
		t.Fatalf("got %+v, %v", cc, err)
	}
}
