package certs

import "time"

// X509Options are Magnum's [x509] options (magnum/conf/x509.py).
type X509Options struct {
	// AllowCA is [x509]/allow_ca: whether a signed CSR may keep CA:TRUE and
	// the Certificate Sign / CRL Sign key usages.
	AllowCA bool
	// AllowedExtensions is [x509]/allowed_extensions: the short names
	// (cryptography's OID names, e.g. "keyUsage") of the CSR extensions that
	// are copied into a signed certificate.
	AllowedExtensions []string
	// AllowedKeyUsage is [x509]/allowed_key_usage: the key usages (e.g.
	// "Digital Signature") kept in a signed certificate's keyUsage.
	AllowedKeyUsage []string
	// TermOfValidity is [x509]/term_of_validity in days, for signed and
	// generated certificates alike.
	TermOfValidity int
	// RSAKeySize is [x509]/rsa_key_size in bits, for generated keys.
	RSAKeySize int
	// Now is the clock; nil means time.Now. Tests inject a fixed clock.
	Now func() time.Time
}

// Extension short names accepted by [x509]/allowed_extensions (the choices
// of the option, magnum/common/x509/extensions.py).
const (
	ExtAuthorityKeyIdentifier = "authorityKeyIdentifier"
	ExtSubjectKeyIdentifier   = "subjectKeyIdentifier"
	ExtAuthorityInformation   = "authorityInfoAccess"
	ExtBasicConstraints       = "basicConstraints"
	ExtCRLDistributionPoints  = "cRLDistributionPoints"
	ExtCertificatePolicies    = "certificatePolicies"
	ExtExtendedKeyUsage       = "extendedKeyUsage"
	ExtOCSPNoCheck            = "OCSPNoCheck"
	ExtInhibitAnyPolicy       = "inhibitAnyPolicy"
	ExtKeyUsage               = "keyUsage"
	ExtNameConstraints        = "nameConstraints"
	ExtSubjectAlternativeName = "subjectAltName"
	ExtIssuerAlternativeName  = "issuerAltName"
)

// Key usage names accepted by [x509]/allowed_key_usage, in keyUsage bit
// order (bit 0 first).
const (
	UsageDigitalSignature = "Digital Signature"
	UsageNonRepudiation   = "Non Repudiation"
	UsageKeyEncipherment  = "Key Encipherment"
	UsageDataEncipherment = "Data Encipherment"
	UsageKeyAgreement     = "Key Agreement"
	UsageCertificateSign  = "Certificate Sign"
	UsageCRLSign          = "CRL Sign"
	UsageEncipherOnly     = "Encipher Only"
	UsageDecipherOnly     = "Decipher Only"
)

// AllExtensions lists every choice of [x509]/allowed_extensions.
var AllExtensions = []string{
	ExtAuthorityKeyIdentifier, ExtSubjectKeyIdentifier, ExtAuthorityInformation,
	ExtBasicConstraints, ExtCRLDistributionPoints, ExtCertificatePolicies,
	ExtExtendedKeyUsage, ExtOCSPNoCheck, ExtInhibitAnyPolicy, ExtKeyUsage,
	ExtNameConstraints, ExtSubjectAlternativeName, ExtIssuerAlternativeName,
}

// AllKeyUsages lists every choice of [x509]/allowed_key_usage in bit order.
var AllKeyUsages = []string{
	UsageDigitalSignature, UsageNonRepudiation, UsageKeyEncipherment,
	UsageDataEncipherment, UsageKeyAgreement, UsageCertificateSign,
	UsageCRLSign, UsageEncipherOnly, UsageDecipherOnly,
}

// DefaultX509Options returns Magnum's defaults: allow_ca false, extensions
// keyUsage, extendedKeyUsage, subjectAltName, basicConstraints,
// subjectKeyIdentifier, key usages Digital Signature, Key Encipherment, Non
// Repudiation, 1825 days, RSA 2048.
func DefaultX509Options() X509Options {
	return X509Options{
		AllowCA: false,
		AllowedExtensions: []string{
			ExtKeyUsage, ExtExtendedKeyUsage, ExtSubjectAlternativeName,
			ExtBasicConstraints, ExtSubjectKeyIdentifier,
		},
		AllowedKeyUsage: []string{UsageDigitalSignature, UsageKeyEncipherment, UsageNonRepudiation},
		TermOfValidity:  1825,
		RSAKeySize:      2048,
	}
}

func (o X509Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o X509Options) rsaKeySize() int {
	if o.RSAKeySize <= 0 {
		return 2048
	}
	return o.RSAKeySize
}
