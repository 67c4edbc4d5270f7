package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var (
	oidSubjectDirectoryAttributes = asn1.ObjectIdentifier{2, 5, 29, 9}
	oidSubjectKeyID               = asn1.ObjectIdentifier{2, 5, 29, 14}
	oidKeyUsage                   = asn1.ObjectIdentifier{2, 5, 29, 15}
	oidPrivateKeyUsagePeriod      = asn1.ObjectIdentifier{2, 5, 29, 16}
	oidSubjectAltName             = asn1.ObjectIdentifier{2, 5, 29, 17}
	oidIssuerAltName              = asn1.ObjectIdentifier{2, 5, 29, 18}
	oidBasicConstraints           = asn1.ObjectIdentifier{2, 5, 29, 19}
	oidCRLNumber                  = asn1.ObjectIdentifier{2, 5, 29, 20}
	oidCRLReason                  = asn1.ObjectIdentifier{2, 5, 29, 21}
	oidInvalidityDate             = asn1.ObjectIdentifier{2, 5, 29, 24}
	oidDeltaCRLIndicator          = asn1.ObjectIdentifier{2, 5, 29, 27}
	oidIssuingDistributionPoint   = asn1.ObjectIdentifier{2, 5, 29, 28}
	oidCertificateIssuer          = asn1.ObjectIdentifier{2, 5, 29, 29}
	oidNameConstraints            = asn1.ObjectIdentifier{2, 5, 29, 30}
	oidCRLDistributionPoints      = asn1.ObjectIdentifier{2, 5, 29, 31}
	oidCertificatePolicies        = asn1.ObjectIdentifier{2, 5, 29, 32}
	oidPolicyMappings             = asn1.ObjectIdentifier{2, 5, 29, 33}
	oidAuthorityKeyID             = asn1.ObjectIdentifier{2, 5, 29, 35}
	oidPolicyConstraints          = asn1.ObjectIdentifier{2, 5, 29, 36}
	oidExtKeyUsage                = asn1.ObjectIdentifier{2, 5, 29, 37}
	oidFreshestCRL                = asn1.ObjectIdentifier{2, 5, 29, 46}
	oidInhibitAnyPolicy           = asn1.ObjectIdentifier{2, 5, 29, 54}
	oidAuthorityInfoAccess        = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 1, 1}
	oidSubjectInfoAccess          = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 1, 11}
	oidTLSFeature                 = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 1, 24}
	oidOCSPNoCheck                = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 48, 1, 5}
)

// extensionNames is cryptography's _OID_NAMES for extensions, the names
// Magnum's validator compares with [x509]/allowed_extensions. An OID not
// listed has no name and is never allowed.
var extensionNames = []struct {
	oid  asn1.ObjectIdentifier
	name string
}{
	{oidSubjectDirectoryAttributes, "subjectDirectoryAttributes"},
	{oidSubjectKeyID, ExtSubjectKeyIdentifier},
	{oidKeyUsage, ExtKeyUsage},
	{oidPrivateKeyUsagePeriod, "privateKeyUsagePeriod"},
	{oidSubjectAltName, ExtSubjectAlternativeName},
	{oidIssuerAltName, ExtIssuerAlternativeName},
	{oidBasicConstraints, ExtBasicConstraints},
	{oidCRLNumber, "cRLNumber"},
	{oidCRLReason, "cRLReason"},
	{oidInvalidityDate, "invalidityDate"},
	{oidDeltaCRLIndicator, "deltaCRLIndicator"},
	{oidIssuingDistributionPoint, "issuingDistributionPoint"},
	{oidCertificateIssuer, "certificateIssuer"},
	{oidNameConstraints, ExtNameConstraints},
	{oidCRLDistributionPoints, ExtCRLDistributionPoints},
	{oidCertificatePolicies, ExtCertificatePolicies},
	{oidPolicyMappings, "policyMappings"},
	{oidAuthorityKeyID, ExtAuthorityKeyIdentifier},
	{oidPolicyConstraints, "policyConstraints"},
	{oidExtKeyUsage, ExtExtendedKeyUsage},
	{oidFreshestCRL, "freshestCRL"},
	{oidInhibitAnyPolicy, ExtInhibitAnyPolicy},
	{oidAuthorityInfoAccess, ExtAuthorityInformation},
	{oidSubjectInfoAccess, "subjectInfoAccess"},
	{oidTLSFeature, "TLSFeature"},
	{oidOCSPNoCheck, ExtOCSPNoCheck},
	{asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11129, 2, 4, 2}, "signedCertificateTimestampList"},
	{asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11129, 2, 4, 3}, "ctPoison"},
	{asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11129, 2, 4, 5}, "signedCertificateTimestampList"},
	{asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 21, 7}, "msCertificateTemplate"},
}

func extensionName(oid asn1.ObjectIdentifier) (string, bool) {
	for _, e := range extensionNames {
		if e.oid.Equal(oid) {
			return e.name, true
		}
	}
	return "", false
}

// Key usage bits that only a CA may keep unless [x509]/allow_ca.
const (
	bitKeyAgreement = 4
	bitKeyCertSign  = 5
	bitCRLSign      = 6
	bitEncipherOnly = 7
	bitDecipherOnly = 8
)

// ErrDuplicateExtensionSet is Magnum's 500 when a CSR carries an extension
// that sign() also adds itself (the subjectKeyIdentifier): cryptography's
// CertificateBuilder refuses a second extension with the same OID.
var ErrDuplicateExtensionSet = errors.New("this extension has already been set")

// SignCSR signs a PEM certificate signing request with ca, as Magnum's
// sign() (magnum/common/x509/operations.py) does for POST /v1/certificates:
// subject copied verbatim from the CSR, issuer = the CA's subject
// (CN=<cluster name or uuid>), validity from now-1 day to now +
// TermOfValidity days, a UUID4 serial, the CSR's public key, the CSR
// extensions filtered by opts (see filterExtensions), then a non-critical
// subjectKeyIdentifier, signed with SHA-256. The PEM has no trailing
// newline.
//
// Client errors are *magnum.Error: InvalidCsr (400) for anything that is
// not a parseable, correctly self-signed CSR, CertificateValidationError
// (400) for a refused critical extension or key usage. Other errors (the CA
// key cannot be decrypted, an extension value cryptography would refuse to
// parse) are plain errors, a 500 in Magnum too.
func SignCSR(ca *KeyPair, csrPEM []byte, opts X509Options) ([]byte, error) {
	// Magnum loads the CA key before it looks at the CSR.
	caKey, err := ca.PrivateKey()
	if err != nil {
		return nil, fmt.Errorf("load CA key: %w", err)
	}
	caCert, err := ca.Certificate()
	if err != nil {
		return nil, fmt.Errorf("load CA certificate: %w", err)
	}
	raw, err := latin1(csrPEM)
	if err != nil {
		return nil, err
	}
	csr, err := parseCSR(raw)
	if err != nil {
		return nil, err
	}
	exts, err := parseRequestedExtensions(csr)
	if err != nil {
		return nil, err
	}
	kept, err := filterExtensions(exts, opts)
	if err != nil {
		return nil, err
	}
	for _, e := range kept {
		if e.oid.Equal(oidSubjectKeyID) {
			// Magnum: operations.py copies the CSR's subjectKeyIdentifier
			// and then adds its own, which cryptography refuses.
			return nil, ErrDuplicateExtensionSet
		}
	}
	der, err := buildCertificate(caCert.RawSubject, csr.RawSubject, csr.RawSubjectPublicKeyInfo, kept, caKey, opts)
	if err != nil {
		return nil, err
	}
	return certPEM(der), nil
}

// latin1 reproduces Magnum's csr.encode('latin-1') of the JSON string: a
// UTF-8 request whose characters all fit in Latin-1 becomes one byte per
// character; a character above U+00FF is a UnicodeEncodeError (500).
func latin1(b []byte) ([]byte, error) {
	if !utf8.Valid(b) {
		return b, nil
	}
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return b, nil
	}
	out := make([]byte, 0, len(b))
	for _, r := range string(b) {
		if r > 0xff {
			return nil, errors.New("'latin-1' codec can't encode the CSR")
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// parseCSR finds the first CERTIFICATE REQUEST (or NEW CERTIFICATE
// REQUEST) PEM block, as cryptography's load_pem_x509_csr does, and parses
// it. Every failure is InvalidCsr with the CSR echoed as a Python bytes
// literal, as Magnum's message carries it.
func parseCSR(raw []byte) (*x509.CertificateRequest, error) {
	invalid := func() error { return magnum.InvalidCsr(pythonBytesRepr(raw)) }
	rest := raw
	var block *pem.Block
	for {
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, invalid()
		}
		if block.Type == "CERTIFICATE REQUEST" || block.Type == "NEW CERTIFICATE REQUEST" {
			break
		}
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, invalid()
	}
	switch csr.PublicKey.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
	default:
		// Deviation: cryptography also accepts DSA, Ed448, X25519 and X448
		// keys here; they cannot be verified by crypto/x509.
		return nil, invalid()
	}
	// Deviation: Magnum never verifies the CSR's self-signature, so it
	// would certify a public key the requester does not hold. We refuse.
	if err := csr.CheckSignature(); err != nil {
		return nil, invalid()
	}
	return csr, nil
}

// requestedExtension is a CSR extension with the values the filter needs.
type requestedExtension struct {
	extension
	// keyUsage holds the nine keyUsage bits when oid is keyUsage.
	keyUsage []bool
	// bcCA and bcPathLen hold basicConstraints (bcPathLen < 0: absent).
	bcCA      bool
	bcPathLen int
}

// parseRequestedExtensions reads the CSR extensions the way
// cryptography's csr.extensions does: a duplicate OID, or a value of a
// known type that does not parse, fails the whole request (ValueError in
// Magnum, hence a plain error).
func parseRequestedExtensions(csr *x509.CertificateRequest) ([]requestedExtension, error) {
	var out []requestedExtension
	for i, e := range csr.Extensions {
		for _, prev := range csr.Extensions[:i] {
			if prev.Id.Equal(e.Id) {
				return nil, fmt.Errorf("duplicate %s extension found", e.Id)
			}
		}
		re := requestedExtension{extension: extension{oid: e.Id, critical: e.Critical, value: e.Value}, bcPathLen: -1}
		if err := parseExtensionValue(&re); err != nil {
			return nil, fmt.Errorf("extension %s: %w", e.Id, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func unmarshalAll(b []byte, v any, params string) error {
	rest, err := asn1.UnmarshalWithParams(b, v, params)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return errors.New("trailing data")
	}
	return nil
}

func parseExtensionValue(re *requestedExtension) error {
	switch {
	case re.oid.Equal(oidKeyUsage):
		var bs asn1.BitString
		if err := unmarshalAll(re.value, &bs, ""); err != nil {
			return err
		}
		re.keyUsage = make([]bool, 9)
		for i := range re.keyUsage {
			re.keyUsage[i] = bs.At(i) == 1
		}
		if !re.keyUsage[bitKeyAgreement] && (re.keyUsage[bitEncipherOnly] || re.keyUsage[bitDecipherOnly]) {
			return errors.New("encipher_only and decipher_only can only be true when key_agreement is true")
		}
	case re.oid.Equal(oidBasicConstraints):
		var bc struct {
			CA      bool `asn1:"optional"`
			PathLen int  `asn1:"optional,default:-1"`
		}
		if err := unmarshalAll(re.value, &bc, ""); err != nil {
			return err
		}
		if bc.PathLen < -1 || (bc.PathLen >= 0 && !bc.CA) {
			return errors.New("path_length must be None when ca is False")
		}
		re.bcCA, re.bcPathLen = bc.CA, bc.PathLen
	case re.oid.Equal(oidExtKeyUsage):
		var oids []asn1.ObjectIdentifier
		if err := unmarshalAll(re.value, &oids, ""); err != nil {
			return err
		}
	case re.oid.Equal(oidSubjectKeyID):
		var id []byte
		if err := unmarshalAll(re.value, &id, ""); err != nil {
			return err
		}
	case re.oid.Equal(oidInhibitAnyPolicy):
		var n int
		if err := unmarshalAll(re.value, &n, ""); err != nil {
			return err
		}
		if n < 0 {
			return errors.New("skip_certs must be a non-negative integer")
		}
	case re.oid.Equal(oidOCSPNoCheck):
		var null asn1.RawValue
		if err := unmarshalAll(re.value, &null, ""); err != nil {
			return err
		}
		if null.Tag != asn1.TagNull || len(null.Bytes) != 0 {
			return errors.New("OCSPNoCheck is not NULL")
		}
	case re.oid.Equal(oidSubjectAltName), re.oid.Equal(oidIssuerAltName):
		var names []asn1.RawValue
		if err := unmarshalAll(re.value, &names, ""); err != nil {
			return err
		}
		for _, n := range names {
			if n.Class != asn1.ClassContextSpecific || n.Tag > 8 {
				return errors.New("invalid GeneralName")
			}
		}
	default:
		// Known structured types are copied as they are once they are
		// well-formed DER; unknown OIDs are UnrecognizedExtension values
		// in cryptography and are not parsed at all.
		if _, known := extensionName(re.oid); known {
			var v asn1.RawValue
			if err := unmarshalAll(re.value, &v, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// filterExtensions is Magnum's validator.filter_extensions
// (magnum/common/x509/validator.py), applied extension by extension in the
// CSR's order:
//   - an extension whose name is not in AllowedExtensions (unknown OIDs
//     have no name) is dropped, or refused when critical;
//   - keyUsage: each usage set in the CSR but not allowed is cleared, or
//     refused when the extension is critical. Certificate Sign and CRL Sign
//     are never allowed unless AllowCA;
//   - basicConstraints with CA:TRUE and not AllowCA is refused when
//     critical, otherwise replaced by a non-critical CA:FALSE.
func filterExtensions(exts []requestedExtension, opts X509Options) ([]extension, error) {
	allowedUsage := make([]bool, 9)
	for i, name := range AllKeyUsages {
		allowedUsage[i] = slices.Contains(opts.AllowedKeyUsage, name)
	}
	if !opts.AllowCA {
		allowedUsage[bitKeyCertSign] = false
		allowedUsage[bitCRLSign] = false
	}
	var out []extension
	for _, re := range exts {
		name, known := extensionName(re.oid)
		if !known || !slices.Contains(opts.AllowedExtensions, name) {
			if re.critical {
				return nil, magnum.CertificateValidationError(extensionRepr(re))
			}
			continue
		}
		switch {
		case re.oid.Equal(oidKeyUsage):
			bits := slices.Clone(re.keyUsage)
			for i, set := range bits {
				if set && !allowedUsage[i] {
					if re.critical {
						return nil, magnum.CertificateValidationError(extensionRepr(re))
					}
					bits[i] = false
				}
			}
			if !bits[bitKeyAgreement] && (bits[bitEncipherOnly] || bits[bitDecipherOnly]) {
				// cryptography's KeyUsage() refuses the merged value (500).
				return nil, errors.New("encipher_only and decipher_only can only be true when key_agreement is true")
			}
			out = append(out, extension{oid: oidKeyUsage, critical: re.critical, value: derNamedBits(bits)})
		case re.oid.Equal(oidBasicConstraints):
			if re.bcCA && !opts.AllowCA {
				if re.critical {
					return nil, magnum.CertificateValidationError(extensionRepr(re))
				}
				out = append(out, extension{oid: oidBasicConstraints, value: basicConstraintsValue(false, -1)})
				continue
			}
			out = append(out, extension{oid: oidBasicConstraints, critical: re.critical, value: basicConstraintsValue(re.bcCA, re.bcPathLen)})
		default:
			out = append(out, extension{oid: re.oid, critical: re.critical, value: bytes.Clone(re.value)})
		}
	}
	return out, nil
}
