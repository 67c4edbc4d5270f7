// Package certs is the certificate machinery of openkeel-magnum: the three
// per-cluster CAs (Kubernetes, etcd, front-proxy) and the admin client
// certificate Magnum generates at cluster creation, the encrypted PKCS#8
// private keys Magnum stores next to a random passphrase, and the signing of
// user CSRs behind POST /v1/certificates with Magnum's extension and key
// usage filtering ([x509] options).
//
// The certificates are built byte for byte the way Magnum 23.0.0 builds them
// with Python cryptography (magnum/common/x509/operations.py): UTF8String
// names, extensions in Magnum's order, a subject key identifier appended
// last, no authority key identifier, a UUID4 serial number and SHA-256
// signatures. For that reason the TBSCertificate is encoded here rather than
// by crypto/x509.CreateCertificate, which adds and reorders extensions.
//
// Nothing in this package logs: keys, CSRs and passphrases never leave it
// except through return values.
package certs
