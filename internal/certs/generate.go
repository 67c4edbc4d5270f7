package certs

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
	"unicode/utf8"
)

var (
	oidCommonName       = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOrganizationName = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidSHA256WithRSA    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidECDSAWithSHA256  = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidClientAuth       = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 2}
)

// Names of the admin client certificate Magnum makes for every cluster
// (magnum/conductor/handlers/common/cert_manager.py): Kubernetes RBAC maps
// O=system:masters to cluster-admin.
const (
	AdminCommonName   = "admin"
	AdminOrganization = "system:masters"
)

// KeyPair is a certificate with its private key as Magnum stores them (one
// x509keypair row, or one Barbican certificate container).
type KeyPair struct {
	// CertPEM is the PEM certificate, without a trailing newline (Magnum
	// strips it).
	CertPEM []byte
	// KeyPEM is the PKCS#8 private key, "ENCRYPTED PRIVATE KEY" PEM
	// encrypted with Passphrase.
	KeyPEM []byte
	// Passphrase encrypts KeyPEM (private_key_passphrase).
	Passphrase []byte
}

// Certificate parses CertPEM.
func (kp *KeyPair) Certificate() (*x509.Certificate, error) {
	block, _ := pem.Decode(kp.CertPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate found")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	return c, nil
}

// PrivateKey decrypts KeyPEM with Passphrase.
func (kp *KeyPair) PrivateKey() (crypto.Signer, error) {
	return DecryptPKCS8PEM(kp.KeyPEM, kp.Passphrase)
}

// DecryptedKeyPEM returns the private key as unencrypted PKCS#8 PEM
// ("PRIVATE KEY"), as Magnum's get_decrypted_private_key and the CAPI
// cluster certificate Secrets (tls.key) hold it.
func (kp *KeyPair) DecryptedKeyPEM() ([]byte, error) {
	k, err := kp.PrivateKey()
	if err != nil {
		return nil, err
	}
	return EncryptPKCS8PEM(k, nil)
}

// ClusterCertificates are the certificates Magnum generates for a cluster.
type ClusterCertificates struct {
	// Kubernetes is the cluster CA (ca_cert_ref).
	Kubernetes *KeyPair
	// Etcd is the etcd CA (etcd_ca_cert_ref).
	Etcd *KeyPair
	// FrontProxy is the front-proxy CA (front_proxy_ca_cert_ref).
	FrontProxy *KeyPair
	// Client is the admin client certificate signed by Kubernetes
	// (magnum_cert_ref).
	Client *KeyPair
}

// IssuerName is the subject of a cluster's CAs: the cluster name, or its
// UUID when the cluster has no name (Magnum's _get_issuer_name; an empty
// name is a name).
func IssuerName(name *string, uuid string) string {
	if name == nil {
		return uuid
	}
	return *name
}

// GenerateClusterCertificates makes the three CAs and the admin client
// certificate in Magnum's order (kubernetes, etcd, front-proxy, client).
// The conductor maps any error to CertificatesToClusterFailed.
func GenerateClusterCertificates(issuer string, opts X509Options) (*ClusterCertificates, error) {
	return GenerateClusterCertificatesContext(context.Background(), issuer, opts)
}

// GenerateClusterCertificatesContext is GenerateClusterCertificates that
// stops before each of its four keys once ctx is done, returning ctx's
// error (a key being generated is finished first).
func GenerateClusterCertificatesContext(ctx context.Context, issuer string, opts X509Options) (*ClusterCertificates, error) {
	var cc ClusterCertificates
	var err error
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	if cc.Kubernetes, err = GenerateCA(issuer, opts); err != nil {
		return nil, fmt.Errorf("kubernetes CA: %w", err)
	}
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	if cc.Etcd, err = GenerateCA(issuer, opts); err != nil {
		return nil, fmt.Errorf("etcd CA: %w", err)
	}
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	if cc.FrontProxy, err = GenerateCA(issuer, opts); err != nil {
		return nil, fmt.Errorf("front-proxy CA: %w", err)
	}
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	if cc.Client, err = GenerateClientCert(cc.Kubernetes, AdminCommonName, AdminOrganization, opts); err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	return &cc, nil
}

// GenerateCA makes a self-signed CA with subject and issuer CN=name (UTF8),
// an RSA key of opts.RSAKeySize bits, validity from now-1 day to now +
// opts.TermOfValidity days, and the extensions Magnum sets: critical
// basicConstraints CA:TRUE pathlen:0, critical keyUsage keyCertSign, then a
// non-critical subjectKeyIdentifier. The key is encrypted with a fresh
// passphrase.
func GenerateCA(name string, opts X509Options) (*KeyPair, error) {
	if err := checkNameAttribute(name); err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, opts.rsaKeySize())
	if err != nil {
		return nil, fmt.Errorf("generate RSA key: %w", err)
	}
	subject := derName(nameAttr{oidCommonName, name})
	exts := []extension{
		{oid: oidBasicConstraints, critical: true, value: basicConstraintsValue(true, 0)},
		{oid: oidKeyUsage, critical: true, value: derNamedBits(keyUsageBits(5))},
	}
	return finishKeyPair(key, subject, subject, exts, key, opts)
}

// GenerateClientCert makes a client certificate CN=cn[, O=org] signed by
// ca, with Magnum's client extensions: critical keyUsage digitalSignature
// and keyEncipherment, non-critical extendedKeyUsage clientAuth, critical
// basicConstraints CA:FALSE, then a subjectKeyIdentifier. The issuer is the
// CA's subject (CN=<cluster name>, as Magnum writes it).
func GenerateClientCert(ca *KeyPair, cn, org string, opts X509Options) (*KeyPair, error) {
	if err := checkNameAttribute(cn); err != nil {
		return nil, err
	}
	attrs := []nameAttr{{oidCommonName, cn}}
	if org != "" {
		if err := checkNameAttribute(org); err != nil {
			return nil, err
		}
		attrs = append(attrs, nameAttr{oidOrganizationName, org})
	}
	caCert, err := ca.Certificate()
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	caKey, err := ca.PrivateKey()
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, opts.rsaKeySize())
	if err != nil {
		return nil, fmt.Errorf("generate RSA key: %w", err)
	}
	eku, _ := asn1.Marshal([]asn1.ObjectIdentifier{oidClientAuth})
	exts := []extension{
		{oid: oidKeyUsage, critical: true, value: derNamedBits(keyUsageBits(0, 2))},
		{oid: oidExtKeyUsage, critical: false, value: eku},
		{oid: oidBasicConstraints, critical: true, value: basicConstraintsValue(false, -1)},
	}
	return finishKeyPair(key, caCert.RawSubject, derName(attrs...), exts, caKey, opts)
}

func finishKeyPair(key *rsa.PrivateKey, issuer, subject []byte, exts []extension, signer crypto.Signer, opts X509Options) (*KeyPair, error) {
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("marshal public key: %w", err)
	}
	der, err := buildCertificate(issuer, subject, spki, exts, signer, opts)
	if err != nil {
		return nil, err
	}
	pass, err := GeneratePassphrase()
	if err != nil {
		return nil, err
	}
	keyPEM, err := EncryptPKCS8PEM(key, pass)
	if err != nil {
		return nil, err
	}
	return &KeyPair{CertPEM: certPEM(der), KeyPEM: keyPEM, Passphrase: pass}, nil
}

// checkNameAttribute applies cryptography's NameAttribute rule for
// commonName, which Magnum hits with long cluster names: 1 to 64
// characters.
func checkNameAttribute(v string) error {
	if n := utf8.RuneCountInString(v); n < 1 || n > 64 {
		return fmt.Errorf("attribute's length must be >= 1 and <= 64, but it was %d", n)
	}
	if !utf8.ValidString(v) {
		return errors.New("attribute is not valid UTF-8")
	}
	return nil
}

// keyUsageBits returns the keyUsage named bits with the given bits set.
func keyUsageBits(set ...int) []bool {
	bits := make([]bool, 9)
	for _, i := range set {
		bits[i] = true
	}
	return bits
}

// basicConstraintsValue encodes BasicConstraints; pathLen < 0 means absent.
func basicConstraintsValue(ca bool, pathLen int) []byte {
	var parts [][]byte
	if ca {
		parts = append(parts, derBoolTrue())
	}
	if pathLen >= 0 {
		parts = append(parts, derSmallInt(pathLen))
	}
	return derSequence(parts...)
}

// certPEM encodes a certificate as PEM without the trailing newline, as
// Magnum's sign() returns it (.strip()).
func certPEM(der []byte) []byte {
	p := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return p[:len(p)-1]
}

// validity reproduces Magnum's datetime.today() arithmetic: the server's
// local wall clock written as UTC, from one day before to term days after,
// in whole seconds.
func validity(opts X509Options) (notBefore, notAfter time.Time) {
	now := opts.now()
	y, mo, d := now.Date()
	h, mi, s := now.Clock()
	// Magnum: naive local time, which cryptography treats as UTC.
	wall := time.Date(y, mo, d, h, mi, s, 0, time.UTC)
	return wall.Add(-24 * time.Hour), wall.Add(time.Duration(opts.TermOfValidity) * 24 * time.Hour)
}

// uuid4Serial is int(uuid.uuid4()): 122 random bits with the version and
// variant bits of a version 4 UUID.
func uuid4Serial() (*big.Int, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("read random: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return new(big.Int).SetBytes(b), nil
}

type subjectPublicKeyInfo struct {
	Algorithm pkix.AlgorithmIdentifier
	PublicKey asn1.BitString
}

// subjectKeyIdentifier is RFC 5280 method 1, as cryptography's
// SubjectKeyIdentifier.from_public_key: SHA-1 of the subjectPublicKey bits.
func subjectKeyIdentifier(spki []byte) ([]byte, error) {
	var info subjectPublicKeyInfo
	if rest, err := asn1.Unmarshal(spki, &info); err != nil || len(rest) != 0 {
		return nil, errors.New("malformed SubjectPublicKeyInfo")
	}
	sum := sha1.Sum(info.PublicKey.Bytes)
	return sum[:], nil
}

// buildCertificate encodes and signs a v3 certificate: the given
// extensions in order, then a non-critical subjectKeyIdentifier.
func buildCertificate(issuer, subject, spki []byte, exts []extension, signer crypto.Signer, opts X509Options) ([]byte, error) {
	var sigAlg []byte
	switch signer.Public().(type) {
	case *rsa.PublicKey:
		sigAlg = derSequence(derOID(oidSHA256WithRSA), derNull())
	case *ecdsa.PublicKey:
		sigAlg = derSequence(derOID(oidECDSAWithSHA256))
	default:
		return nil, fmt.Errorf("unsupported CA key type %T", signer.Public())
	}
	serial, err := uuid4Serial()
	if err != nil {
		return nil, err
	}
	ski, err := subjectKeyIdentifier(spki)
	if err != nil {
		return nil, err
	}
	exts = append(append([]extension{}, exts...), extension{oid: oidSubjectKeyID, value: derOctetString(ski)})
	var extDER [][]byte
	for _, e := range exts {
		extDER = append(extDER, derExtension(e))
	}
	notBefore, notAfter := validity(opts)
	tbs := derSequence(
		derTLV(0xa0, derSmallInt(2)),
		derInteger(serial),
		sigAlg,
		issuer,
		derSequence(derTime(notBefore), derTime(notAfter)),
		subject,
		spki,
		derTLV(0xa3, derSequence(extDER...)),
	)
	digest := sha256.Sum256(tbs)
	sig, err := signer.Sign(rand.Reader, digest[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("sign certificate: %w", err)
	}
	return derSequence(tbs, sigAlg, derBitString(sig)), nil
}

// CAKind names one of a cluster's three CAs.
type CAKind string

// The three CAs of a cluster.
const (
	CAKubernetes CAKind = "kubernetes"
	CAEtcd       CAKind = "etcd"
	CAFrontProxy CAKind = "front-proxy"
)

// ParseCACertType maps the ca_cert_type of the certificate routes to a CA
// as Magnum does (cert_manager.py): "etcd" is the etcd CA, "front_proxy" and
// "front-proxy" the front-proxy CA, anything else (absent, "kubernetes",
// unknown strings) the Kubernetes CA. It never fails.
func ParseCACertType(s string) CAKind {
	switch s {
	case "etcd":
		return CAEtcd
	case "front_proxy", "front-proxy":
		return CAFrontProxy
	}
	return CAKubernetes
}

// CA returns the CA of the given kind.
func (cc *ClusterCertificates) CA(kind CAKind) *KeyPair {
	switch kind {
	case CAEtcd:
		return cc.Etcd
	case CAFrontProxy:
		return cc.FrontProxy
	}
	return cc.Kubernetes
}
