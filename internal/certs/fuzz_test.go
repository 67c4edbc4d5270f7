package certs

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// FuzzSignCSR checks that SignCSR never panics, fails only with InvalidCsr,
// CertificateValidationError or a plain (500) error, and signs only
// well-formed, correctly self-signed requests, never keeping what the
// options forbid. Seeds: testdata/fuzz/FuzzSignCSR plus the table cases.
func FuzzSignCSR(f *testing.F) {
	for _, tc := range signCases() {
		f.Add(makeCSR(f, tc.csr), false)
	}
	f.Add([]byte("-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n"), true)
	ca, _ := sharedCA(f)
	caCert := mustCert(f, ca.CertPEM)
	f.Fuzz(func(t *testing.T, in []byte, allowCA bool) {
		opts := testOptions()
		opts.AllowCA = allowCA
		opts.AllowedExtensions = AllExtensions
		if allowCA {
			opts.AllowedKeyUsage = AllKeyUsages
		}
		got, err := SignCSR(ca, in, opts)
		if err != nil {
			var me *magnum.Error
			if errors.As(err, &me) {
				if me.Status != http.StatusBadRequest || (me.Kind != "InvalidCsr" && me.Kind != "CertificateValidationError") {
					t.Fatalf("unexpected client error %s %d", me.Kind, me.Status)
				}
			}
			return
		}
		// Signed: the request must have been valid.
		raw, _ := latin1(in)
		var block *pem.Block
		for rest := raw; ; {
			block, rest = pem.Decode(rest)
			if block == nil {
				t.Fatal("signed without a request PEM block")
			}
			if block.Type == "CERTIFICATE REQUEST" || block.Type == "NEW CERTIFICATE REQUEST" {
				break
			}
		}
		csr, err := x509.ParseCertificateRequest(block.Bytes)
		if err != nil {
			t.Fatalf("signed an unparsable request: %v", err)
		}
		if err := csr.CheckSignature(); err != nil {
			t.Fatalf("signed a request with a bad signature: %v", err)
		}
		der, _ := pem.Decode(got)
		if der == nil {
			t.Fatal("result is not PEM")
		}
		// Parse leniently: a copied extension may be one crypto/x509
		// dislikes; the structure and signature must still be ours.
		c, err := x509.ParseCertificate(der.Bytes)
		if err != nil {
			return
		}
		if err := c.CheckSignatureFrom(caCert); err != nil {
			t.Fatalf("bad signature: %v", err)
		}
		if !bytes.Equal(c.RawSubject, csr.RawSubject) {
			t.Fatal("subject changed")
		}
		last := c.Extensions[len(c.Extensions)-1]
		if !last.Id.Equal(oidSubjectKeyID) || last.Critical {
			t.Fatal("the subject key identifier is not last")
		}
		for _, e := range c.Extensions[:len(c.Extensions)-1] {
			name, known := extensionName(e.Id)
			if !known || !slices.Contains(opts.AllowedExtensions, name) {
				t.Fatalf("extension %s kept", e.Id)
			}
		}
		if !allowCA {
			if c.IsCA {
				t.Fatal("CA:TRUE kept")
			}
			if c.KeyUsage&(x509.KeyUsageCertSign|x509.KeyUsageCRLSign|x509.KeyUsageDataEncipherment|x509.KeyUsageKeyAgreement) != 0 {
				t.Fatalf("forbidden key usage kept: %b", c.KeyUsage)
			}
		}
	})
}
