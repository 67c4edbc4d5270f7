package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var (
	testCAOnce sync.Once
	testCA     *KeyPair
	testCAErr  error
	testKey    *rsa.PrivateKey
)

// sharedCA is one CA (1024-bit keys keep the tests fast) for all signing
// tests.
func sharedCA(t testing.TB) (*KeyPair, *rsa.PrivateKey) {
	t.Helper()
	testCAOnce.Do(func() {
		o := testOptions()
		o.RSAKeySize = 1024
		testCA, testCAErr = GenerateCA("k8s-prod-1", o)
		if testCAErr == nil {
			testKey, testCAErr = rsa.GenerateKey(rand.Reader, 1024)
		}
	})
	if testCAErr != nil {
		t.Fatal(testCAErr)
	}
	return testCA, testKey
}

func ext(oid asn1.ObjectIdentifier, critical bool, value []byte) pkix.Extension {
	return pkix.Extension{Id: oid, Critical: critical, Value: value}
}

// kuValue encodes a keyUsage with the given bit numbers.
func kuValue(bits ...int) []byte { return derNamedBits(keyUsageBits(bits...)) }

func mustOID(s string) asn1.ObjectIdentifier {
	var oid asn1.ObjectIdentifier
	for _, p := range strings.Split(s, ".") {
		n := 0
		for _, c := range p {
			n = n*10 + int(c-'0')
		}
		oid = append(oid, n)
	}
	return oid
}

func ia5(tag byte, s string) []byte { return derTLV(0x80|tag, []byte(s)) }

// sampleExtensionValues are valid values for each [x509]/allowed_extensions
// choice.
var sampleExtensionValues = map[string]struct {
	oid   asn1.ObjectIdentifier
	value []byte
}{
	ExtAuthorityKeyIdentifier: {oidAuthorityKeyID, derSequence(derTLV(0x80, []byte{1, 2, 3, 4}))},
	ExtSubjectKeyIdentifier:   {oidSubjectKeyID, derOctetString([]byte{1, 2, 3, 4})},
	ExtAuthorityInformation:   {oidAuthorityInfoAccess, derSequence(derSequence(derOID(mustOID("1.3.6.1.5.5.7.48.1")), ia5(6, "http://ocsp.example")))},
	ExtBasicConstraints:       {oidBasicConstraints, derSequence()},
	ExtCRLDistributionPoints:  {oidCRLDistributionPoints, derSequence(derSequence(derTLV(0xa0, derTLV(0xa0, ia5(6, "http://crl.example")))))},
	ExtCertificatePolicies:    {oidCertificatePolicies, derSequence(derSequence(derOID(mustOID("2.5.29.32.0"))))},
	ExtExtendedKeyUsage:       {oidExtKeyUsage, derSequence(derOID(mustOID("1.3.6.1.5.5.7.3.1")))},
	ExtOCSPNoCheck:            {oidOCSPNoCheck, derNull()},
	ExtInhibitAnyPolicy:       {oidInhibitAnyPolicy, derSmallInt(1)},
	ExtKeyUsage:               {oidKeyUsage, kuValue(0)},
	ExtNameConstraints:        {oidNameConstraints, derSequence(derTLV(0xa0, derSequence(ia5(2, "example.com"))))},
	ExtSubjectAlternativeName: {oidSubjectAltName, derSequence(ia5(2, "a.example"))},
	ExtIssuerAlternativeName:  {oidIssuerAltName, derSequence(ia5(2, "b.example"))},
}

type csrSpec struct {
	key     crypto.Signer // nil: the shared RSA key
	subject pkix.Name
	exts    []pkix.Extension
}

func makeCSR(t testing.TB, s csrSpec) []byte {
	t.Helper()
	_, key := sharedCA(t)
	var signer crypto.Signer = key
	if s.key != nil {
		signer = s.key
	}
	subj := s.subject
	if subj.CommonName == "" && len(subj.Organization) == 0 {
		subj = pkix.Name{CommonName: "system:node:worker-0", Organization: []string{"system:nodes"}}
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subj, ExtraExtensions: s.exts}, signer)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

type wantExt struct {
	OID      string
	Critical bool
	Value    []byte
}

func certExts(c *x509.Certificate) []wantExt {
	var out []wantExt
	for _, e := range c.Extensions {
		if e.Id.Equal(oidSubjectKeyID) {
			out = append(out, wantExt{OID: "ski"})
			continue
		}
		out = append(out, wantExt{OID: e.Id.String(), Critical: e.Critical, Value: e.Value})
	}
	return out
}

func we(oid asn1.ObjectIdentifier, critical bool, value []byte) wantExt {
	return wantExt{OID: oid.String(), Critical: critical, Value: value}
}

var ski = wantExt{OID: "ski"}

type signCase struct {
	name    string
	opts    func(*X509Options)
	csr     csrSpec
	want    []wantExt // expected certificate extensions, when signed
	status  int       // expected magnum.Error status, 0 when signed
	kind    string
	message string // expected exact message when set
	plain   bool   // expected a non-client (500) error
}

func signCases() []signCase {
	ku := func(crit bool, bits ...int) pkix.Extension { return ext(oidKeyUsage, crit, kuValue(bits...)) }
	bc := func(crit, ca bool, pathLen int) pkix.Extension {
		return ext(oidBasicConstraints, crit, basicConstraintsValue(ca, pathLen))
	}
	allowCA := func(o *X509Options) {
		o.AllowCA = true
		o.AllowedKeyUsage = append(o.AllowedKeyUsage, UsageCertificateSign, UsageCRLSign)
	}
	cases := []signCase{
		{name: "no extensions: only the subject key identifier", want: []wantExt{ski}},
		{
			name: "non-critical key usage: forbidden usages are cleared",
			csr:  csrSpec{exts: []pkix.Extension{ku(false, 0, 3, 5, 6)}},
			want: []wantExt{we(oidKeyUsage, false, kuValue(0)), ski},
		},
		{
			name: "critical key usage with allowed usages is kept",
			csr:  csrSpec{exts: []pkix.Extension{ku(true, 0, 1, 2)}},
			want: []wantExt{we(oidKeyUsage, true, kuValue(0, 1, 2)), ski},
		},
		{
			name:   "critical key usage with certificate sign is refused without allow_ca",
			csr:    csrSpec{exts: []pkix.Extension{ku(true, 0, 5)}},
			status: http.StatusBadRequest, kind: "CertificateValidationError",
			message: "Extension '<Extension(oid=<ObjectIdentifier(oid=2.5.29.15, name=keyUsage)>, critical=True, value=<KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=False, encipher_only=False, decipher_only=False)>)>' not allowed",
		},
		{
			name:   "certificate sign stays forbidden with allow_ca when not in allowed_key_usage",
			opts:   func(o *X509Options) { o.AllowCA = true },
			csr:    csrSpec{exts: []pkix.Extension{ku(true, 5)}},
			status: http.StatusBadRequest, kind: "CertificateValidationError",
		},
		{
			name: "certificate sign and CRL sign are removed from allowed_key_usage without allow_ca",
			opts: func(o *X509Options) {
				o.AllowedKeyUsage = append(o.AllowedKeyUsage, UsageCertificateSign, UsageCRLSign)
			},
			csr:  csrSpec{exts: []pkix.Extension{ku(false, 0, 5, 6)}},
			want: []wantExt{we(oidKeyUsage, false, kuValue(0)), ski},
		},
		{
			name: "allow_ca keeps certificate sign, CRL sign and CA:TRUE",
			opts: allowCA,
			csr:  csrSpec{exts: []pkix.Extension{bc(true, true, 0), ku(true, 5, 6)}},
			want: []wantExt{we(oidBasicConstraints, true, basicConstraintsValue(true, 0)), we(oidKeyUsage, true, kuValue(5, 6)), ski},
		},
		{
			name:   "critical CA:TRUE is refused without allow_ca",
			csr:    csrSpec{exts: []pkix.Extension{bc(true, true, -1)}},
			status: http.StatusBadRequest, kind: "CertificateValidationError",
			message: "Extension '<Extension(oid=<ObjectIdentifier(oid=2.5.29.19, name=basicConstraints)>, critical=True, value=<BasicConstraints(ca=True, path_length=None)>)>' not allowed",
		},
		{
			name: "non-critical CA:TRUE becomes a non-critical CA:FALSE",
			csr:  csrSpec{exts: []pkix.Extension{bc(false, true, 3)}},
			want: []wantExt{we(oidBasicConstraints, false, []byte{0x30, 0}), ski},
		},
		{
			name: "critical CA:FALSE is kept",
			csr:  csrSpec{exts: []pkix.Extension{bc(true, false, -1)}},
			want: []wantExt{we(oidBasicConstraints, true, []byte{0x30, 0}), ski},
		},
		{
			name:  "CA:FALSE with a path length is a ValueError",
			csr:   csrSpec{exts: []pkix.Extension{ext(oidBasicConstraints, false, derSequence(derSmallInt(1)))}},
			plain: true,
		},
		{
			name: "extension order is kept",
			csr: csrSpec{exts: []pkix.Extension{
				ext(oidSubjectAltName, false, sampleExtensionValues[ExtSubjectAlternativeName].value),
				ku(true, 0, 2),
				ext(oidExtKeyUsage, false, derSequence(derOID(mustOID("1.3.6.1.5.5.7.3.2")))),
			}},
			want: []wantExt{
				we(oidSubjectAltName, false, sampleExtensionValues[ExtSubjectAlternativeName].value),
				we(oidKeyUsage, true, kuValue(0, 2)),
				we(oidExtKeyUsage, false, derSequence(derOID(mustOID("1.3.6.1.5.5.7.3.2")))),
				ski,
			},
		},
		{
			name:  "a subject key identifier in the CSR collides with Magnum's own",
			csr:   csrSpec{exts: []pkix.Extension{ext(oidSubjectKeyID, false, derOctetString([]byte{1}))}},
			plain: true,
		},
		{
			name: "a subject key identifier is dropped when not allowed",
			opts: func(o *X509Options) { o.AllowedExtensions = []string{ExtKeyUsage} },
			csr:  csrSpec{exts: []pkix.Extension{ext(oidSubjectKeyID, false, derOctetString([]byte{1}))}},
			want: []wantExt{ski},
		},
		{
			name: "an unknown non-critical extension is dropped",
			csr:  csrSpec{exts: []pkix.Extension{ext(mustOID("1.2.3.4"), false, derNull())}},
			want: []wantExt{ski},
		},
		{
			name:   "an unknown critical extension is refused",
			csr:    csrSpec{exts: []pkix.Extension{ext(mustOID("1.2.3.4"), true, derNull())}},
			status: http.StatusBadRequest, kind: "CertificateValidationError",
			message: `Extension '<Extension(oid=<ObjectIdentifier(oid=1.2.3.4, name=Unknown OID)>, critical=True, value=<UnrecognizedExtension(oid=<ObjectIdentifier(oid=1.2.3.4, name=Unknown OID)>, value=b'\x05\x00')>)>' not allowed`,
		},
		{
			name:   "an unknown extension is refused even when every name is allowed",
			opts:   func(o *X509Options) { o.AllowedExtensions = AllExtensions },
			csr:    csrSpec{exts: []pkix.Extension{ext(mustOID("1.2.3.4"), true, derNull())}},
			status: http.StatusBadRequest, kind: "CertificateValidationError",
		},
		{
			name: "the first refused extension wins",
			csr: csrSpec{exts: []pkix.Extension{
				ext(oidInhibitAnyPolicy, true, derSmallInt(2)),
				ext(mustOID("1.2.3.4"), true, derNull()),
			}},
			status: http.StatusBadRequest, kind: "CertificateValidationError",
			message: "Extension '<Extension(oid=<ObjectIdentifier(oid=2.5.29.54, name=inhibitAnyPolicy)>, critical=True, value=<InhibitAnyPolicy(skip_certs=2)>)>' not allowed",
		},
		{
			name: "key agreement with encipher only is cleared as a whole",
			csr:  csrSpec{exts: []pkix.Extension{ku(false, 0, 4, 7)}},
			want: []wantExt{we(oidKeyUsage, false, kuValue(0)), ski},
		},
		{
			name:  "encipher only without key agreement cannot be parsed",
			csr:   csrSpec{exts: []pkix.Extension{ku(false, 7)}},
			plain: true,
		},
		{
			name:  "encipher only kept while key agreement is cleared is a ValueError",
			opts:  func(o *X509Options) { o.AllowedKeyUsage = []string{UsageEncipherOnly} },
			csr:   csrSpec{exts: []pkix.Extension{ku(false, 4, 7)}},
			plain: true,
		},
		{
			name: "key agreement, encipher and decipher only when allowed",
			opts: func(o *X509Options) { o.AllowedKeyUsage = AllKeyUsages },
			csr:  csrSpec{exts: []pkix.Extension{ku(true, 4, 7, 8)}},
			want: []wantExt{we(oidKeyUsage, true, kuValue(4, 7, 8)), ski},
		},
		{
			name: "an empty allowed key usage list clears everything",
			opts: func(o *X509Options) { o.AllowedKeyUsage = nil },
			csr:  csrSpec{exts: []pkix.Extension{ku(false, 0, 2)}},
			want: []wantExt{we(oidKeyUsage, false, []byte{0x03, 0x01, 0x00}), ski},
		},
		{
			name: "ECDSA request",
			csr:  csrSpec{key: mustECKey()},
			want: []wantExt{ski},
		},
		{
			name: "Ed25519 request",
			csr:  csrSpec{key: mustEdKey()},
			want: []wantExt{ski},
		},
	}
	// Each extension choice, non-critical: kept when allowed (the default
	// list, then all of them), otherwise dropped; critical and not allowed:
	// refused.
	for _, name := range AllExtensions {
		v := sampleExtensionValues[name]
		inDefault := false
		for _, d := range DefaultX509Options().AllowedExtensions {
			inDefault = inDefault || d == name
		}
		e := ext(v.oid, false, v.value)
		switch {
		case name == ExtSubjectKeyIdentifier:
			cases = append(cases, signCase{name: name + " allowed collides", csr: csrSpec{exts: []pkix.Extension{e}}, plain: true})
		case inDefault:
			cases = append(cases, signCase{name: name + " kept by default", csr: csrSpec{exts: []pkix.Extension{e}}, want: []wantExt{we(v.oid, false, v.value), ski}})
		default:
			cases = append(cases,
				signCase{name: name + " dropped by default", csr: csrSpec{exts: []pkix.Extension{e}}, want: []wantExt{ski}},
				signCase{name: name + " critical refused by default", csr: csrSpec{exts: []pkix.Extension{ext(v.oid, true, v.value)}}, status: http.StatusBadRequest, kind: "CertificateValidationError"},
				signCase{
					name: name + " kept when allowed", opts: func(o *X509Options) { o.AllowedExtensions = []string{name} },
					csr: csrSpec{exts: []pkix.Extension{e}}, want: []wantExt{we(v.oid, false, v.value), ski},
				},
			)
		}
	}
	// Each key usage alone, non-critical and critical, with the defaults.
	for bit, usage := range AllKeyUsages {
		if bit >= bitEncipherOnly {
			continue // needs key agreement; covered above
		}
		allowed := usage == UsageDigitalSignature || usage == UsageKeyEncipherment || usage == UsageNonRepudiation
		if allowed {
			cases = append(cases,
				signCase{name: usage + " kept", csr: csrSpec{exts: []pkix.Extension{ku(false, bit)}}, want: []wantExt{we(oidKeyUsage, false, kuValue(bit)), ski}},
				signCase{name: usage + " kept when critical", csr: csrSpec{exts: []pkix.Extension{ku(true, bit)}}, want: []wantExt{we(oidKeyUsage, true, kuValue(bit)), ski}},
			)
			continue
		}
		cases = append(cases,
			signCase{name: usage + " cleared", csr: csrSpec{exts: []pkix.Extension{ku(false, bit)}}, want: []wantExt{we(oidKeyUsage, false, kuValue()), ski}},
			signCase{name: usage + " refused when critical", csr: csrSpec{exts: []pkix.Extension{ku(true, bit)}}, status: http.StatusBadRequest, kind: "CertificateValidationError"},
		)
	}
	return cases
}

func mustECKey() crypto.Signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func mustEdKey() crypto.Signer {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func TestSignCSR(t *testing.T) {
	ca, _ := sharedCA(t)
	caCert := mustCert(t, ca.CertPEM)
	for _, tc := range signCases() {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			csrPEM := makeCSR(t, tc.csr)
			got, err := SignCSR(ca, csrPEM, opts)
			var me *magnum.Error
			switch {
			case tc.plain:
				if err == nil || errors.As(err, &me) {
					t.Fatalf("error = %v, want a plain (500) error", err)
				}
				return
			case tc.status != 0:
				if !errors.As(err, &me) || me.Status != tc.status || me.Kind != tc.kind {
					t.Fatalf("error = %#v, want %d %s", err, tc.status, tc.kind)
				}
				if tc.message != "" && me.Message != tc.message {
					t.Fatalf("message:\n got %s\nwant %s", me.Message, tc.message)
				}
				return
			case err != nil:
				t.Fatalf("SignCSR: %v", err)
			}
			if bytes.HasSuffix(got, []byte("\n")) {
				t.Error("PEM has a trailing newline")
			}
			c := mustCert(t, got)
			if err := c.CheckSignatureFrom(caCert); err != nil {
				t.Errorf("not signed by the CA: %v", err)
			}
			csr, _ := x509.ParseCertificateRequest(mustPEM(t, csrPEM))
			if !bytes.Equal(c.RawSubject, csr.RawSubject) || !bytes.Equal(c.RawIssuer, caCert.RawSubject) {
				t.Error("subject or issuer differs")
			}
			if !bytes.Equal(c.RawSubjectPublicKeyInfo, csr.RawSubjectPublicKeyInfo) {
				t.Error("public key differs")
			}
			if c.SignatureAlgorithm != x509.SHA256WithRSA || c.Version != 3 {
				t.Errorf("signature %s, version %d", c.SignatureAlgorithm, c.Version)
			}
			wantBefore := time.Date(2026, 11, 29, 1, 48, 7, 0, time.UTC)
			if !c.NotBefore.Equal(wantBefore) || !c.NotAfter.Equal(wantBefore.Add(1826*24*time.Hour)) {
				t.Errorf("validity %s - %s", c.NotBefore, c.NotAfter)
			}
			if diff := cmp.Diff(tc.want, certExts(c)); diff != "" {
				t.Errorf("extensions (-want +got):\n%s", diff)
			}
		})
	}
}

func mustPEM(t testing.TB, p []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(p)
	if b == nil {
		t.Fatal("no PEM")
	}
	return b.Bytes
}

func TestSignCSRInvalid(t *testing.T) {
	ca, _ := sharedCA(t)
	good := makeCSR(t, csrSpec{})
	der := mustPEM(t, good)
	badSig := bytes.Clone(der)
	badSig[len(badSig)-5] ^= 0xff
	badDER := bytes.Clone(der)
	badDER[0] = 0x31
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"not PEM", []byte("hello")},
		{"certificate instead of request", ca.CertPEM},
		{"garbage in a request block", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte{1, 2, 3}})},
		{"wrong DER tag", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: badDER})},
		{"trailing DER", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: append(bytes.Clone(der), 0)})},
		{"wrong signature", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: badSig})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SignCSR(ca, tc.in, testOptions())
			var me *magnum.Error
			if !errors.As(err, &me) || me.Status != http.StatusBadRequest || me.Kind != "InvalidCsr" {
				t.Fatalf("error = %v, want InvalidCsr", err)
			}
			if want := "Received invalid csr " + pythonBytesRepr(tc.in) + "."; me.Message != want {
				t.Fatalf("message %q, want %q", me.Message, want)
			}
		})
	}
	t.Run("NEW CERTIFICATE REQUEST after other blocks", func(t *testing.T) {
		in := append(bytes.Clone(ca.CertPEM), '\n')
		in = append(in, pem.EncodeToMemory(&pem.Block{Type: "NEW CERTIFICATE REQUEST", Bytes: der})...)
		if _, err := SignCSR(ca, in, testOptions()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("wrong CA passphrase is a server error", func(t *testing.T) {
		bad := *ca
		bad.Passphrase = []byte("nope")
		_, err := SignCSR(&bad, good, testOptions())
		var me *magnum.Error
		if err == nil || errors.As(err, &me) {
			t.Fatalf("error = %v, want a plain error", err)
		}
	})
	t.Run("character above latin-1 is a server error", func(t *testing.T) {
		_, err := SignCSR(ca, []byte("-----BEGIN CERTIFICATE REQUEST-----\n€"), testOptions())
		var me *magnum.Error
		if err == nil || errors.As(err, &me) {
			t.Fatalf("error = %v, want a plain error", err)
		}
	})
	t.Run("latin-1 characters are echoed as bytes", func(t *testing.T) {
		_, err := SignCSR(ca, []byte("é'"), testOptions())
		var me *magnum.Error
		if !errors.As(err, &me) || me.Message != `Received invalid csr b"\xe9'".` {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestSignCSRDuplicateExtension(t *testing.T) {
	ca, key := sharedCA(t)
	// crypto/x509 will not build such a request; assemble it by hand.
	e := derExtension(extension{oid: oidExtKeyUsage, value: sampleExtensionValues[ExtExtendedKeyUsage].value})
	attr := derSequence(derOID(asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 14}), derSet(derSequence(e, e)))
	spki, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	info := derSequence(derSmallInt(0), derName(nameAttr{oidCommonName, "x"}), spki, derTLV(0xa0, attr))
	csrPEM := signRequestInfo(t, info, key)
	if _, err := SignCSR(ca, csrPEM, testOptions()); err == nil {
		t.Fatal("duplicate extensions accepted")
	}
}

// signRequestInfo signs a hand-built CertificationRequestInfo.
func signRequestInfo(t testing.TB, info []byte, key *rsa.PrivateKey) []byte {
	t.Helper()
	h := crypto.SHA256.New()
	h.Write(info)
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h.Sum(nil))
	if err != nil {
		t.Fatal(err)
	}
	der := derSequence(info, derSequence(derOID(oidSHA256WithRSA), derNull()), derBitString(sig))
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestPythonBytesRepr(t *testing.T) {
	for in, want := range map[string]string{
		"":           `b''`,
		"a\nb":       `b'a\nb'`,
		"it's":       `b"it's"`,
		`'"`:         `b'\'"'`,
		"\x00\xff\\": `b'\x00\xff\\'`,
	} {
		if got := pythonBytesRepr([]byte(in)); got != want {
			t.Errorf("repr(%q) = %s, want %s", in, got, want)
		}
	}
}
