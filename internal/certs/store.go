package certs

import (
	"context"
	"errors"
	"fmt"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Store keeps the certificates of clusters (Magnum's cert manager
// backend, [certificates]/cert_manager_type). A reference returned by Put
// is what the cluster row stores in ca_cert_ref, magnum_cert_ref,
// etcd_ca_cert_ref and front_proxy_ca_cert_ref.
type Store interface {
	// Put stores kp and returns its reference. name is the name Magnum
	// gives the certificate (the issuer name for a CA, "Magnum-Conductor"
	// for the admin client certificate); stores that have no use for it
	// ignore it. The owner of the stored certificate is the caller of the
	// request context (magnum.FromContext).
	Put(ctx context.Context, kp KeyPair, name string) (string, error)
	// Get returns the certificate stored under ref; an unknown reference
	// is an error wrapping ErrNotFound.
	Get(ctx context.Context, ref string) (*KeyPair, error)
	// Delete removes the certificate stored under ref; an unknown
	// reference is an error wrapping ErrNotFound.
	Delete(ctx context.Context, ref string) error
}

// ErrNotFound is the error of Get and Delete for an unknown reference.
var ErrNotFound = errors.New("certificate not found")

// ClientCertName is the name Magnum gives the admin client certificate in
// its certificate store (CONDUCTOR_CLIENT_NAME in
// magnum/conductor/handlers/common/cert_manager.py).
const ClientCertName = "Magnum-Conductor"

// The values of [certificates]/cert_manager_type.
const (
	// StoreBarbican is Magnum's default: certificate containers in
	// Barbican. Not supported.
	StoreBarbican = "barbican"
	// StoreX509KeyPair keeps certificates in the x509keypair table of the
	// Magnum database.
	StoreX509KeyPair = "x509keypair"
	// StoreLocal is Magnum's file-system store, documented by Magnum as
	// unfit for production. Not supported.
	StoreLocal = "local"
	// StoreKubernetes keeps each certificate as a Secret in the management
	// namespace of the Cluster API driver.
	StoreKubernetes = "kubernetes"
)

// ResolveStoreType decides which store serves [certificates]/
// cert_manager_type. value is the option's value, set whether a
// configuration file sets it.
//
// Magnum's default is barbican. When the option is not set, the database
// store (x509keypair) is used instead and warning explains it; an explicit
// barbican or local, or an unknown value, is an error naming the option
// and the supported values.
func ResolveStoreType(value string, set bool) (storeType, warning string, err error) {
	if !set {
		return StoreX509KeyPair, "[certificates]/cert_manager_type is not set: Magnum's default (barbican) is " +
			"not supported, cluster certificates are stored in the database (x509keypair); set " +
			"cert_manager_type = x509keypair to silence this warning", nil
	}
	switch value {
	case StoreX509KeyPair, StoreKubernetes:
		return value, "", nil
	case StoreBarbican:
		return "", "", errors.New("[certificates]/cert_manager_type = barbican is not supported: set it to " +
			"x509keypair (cluster certificates in the x509keypair table of the database) or kubernetes " +
			"(cluster certificates as Secrets in the management namespace of the Cluster API driver)")
	case StoreLocal:
		return "", "", errors.New("[certificates]/cert_manager_type = local is not supported (it keeps keys in " +
			"files of one host): set it to x509keypair (cluster certificates in the x509keypair table of the " +
			"database) or kubernetes (cluster certificates as Secrets in the management namespace of the " +
			"Cluster API driver)")
	}
	return "", "", fmt.Errorf("[certificates]/cert_manager_type = %q is not a known certificate store: "+
		"the supported values are x509keypair and kubernetes", value)
}

// KeyPairRow is one row of Magnum's x509keypair table as the x509keypair
// store writes it.
type KeyPairRow struct {
	// UUID is the reference of the row (the cluster's *_cert_ref).
	UUID string
	// Certificate is the PEM certificate.
	Certificate string
	// PrivateKey is the encrypted PKCS#8 PEM private key.
	PrivateKey string
	// PrivateKeyPassphrase decrypts PrivateKey.
	PrivateKeyPassphrase string
	// ProjectID and UserID are the caller's at creation time.
	ProjectID string
	UserID    string
}

// KeyPairRows is the x509keypair table as the x509keypair store needs it.
// The database layer satisfies it through an adapter (certs does not
// import db). Lookups are by UUID only, in every project.
type KeyPairRows interface {
	// InsertKeyPair inserts row.
	InsertKeyPair(ctx context.Context, row KeyPairRow) error
	// KeyPairByUUID returns the row with uuid, or an error wrapping
	// ErrNotFound.
	KeyPairByUUID(ctx context.Context, uuid string) (*KeyPairRow, error)
	// DeleteKeyPair deletes the row with uuid, or returns an error wrapping
	// ErrNotFound.
	DeleteKeyPair(ctx context.Context, uuid string) error
}

// X509KeyPairStore is the x509keypair store: one row per certificate, as
// Magnum's x509keypair cert manager writes them
// (magnum/common/cert_manager/x509keypair_cert_manager.py): the PEM
// certificate, the encrypted PKCS#8 key, its passphrase, no
// intermediates, the caller's project_id and user_id, and a random UUID
// that is the reference.
type X509KeyPairStore struct {
	rows    KeyPairRows
	newUUID func() string
}

var _ Store = (*X509KeyPairStore)(nil)

// NewX509KeyPairStore returns the x509keypair store over rows; newUUID
// makes the row UUIDs (random version 4 UUIDs).
func NewX509KeyPairStore(rows KeyPairRows, newUUID func() string) *X509KeyPairStore {
	return &X509KeyPairStore{rows: rows, newUUID: newUUID}
}

// Put inserts kp as a new row and returns its UUID.
func (s *X509KeyPairStore) Put(ctx context.Context, kp KeyPair, _ string) (string, error) {
	row := KeyPairRow{
		UUID:                 s.newUUID(),
		Certificate:          string(kp.CertPEM),
		PrivateKey:           string(kp.KeyPEM),
		PrivateKeyPassphrase: string(kp.Passphrase),
	}
	if rc := magnum.FromContext(ctx); rc != nil {
		row.ProjectID, row.UserID = rc.ProjectID, rc.UserID
	}
	if err := s.rows.InsertKeyPair(ctx, row); err != nil {
		return "", fmt.Errorf("store certificate: %w", err)
	}
	return row.UUID, nil
}

// Get reads the row with UUID ref.
func (s *X509KeyPairStore) Get(ctx context.Context, ref string) (*KeyPair, error) {
	row, err := s.rows.KeyPairByUUID(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("get certificate %s: %w", ref, err)
	}
	return &KeyPair{
		CertPEM:    []byte(row.Certificate),
		KeyPEM:     []byte(row.PrivateKey),
		Passphrase: []byte(row.PrivateKeyPassphrase),
	}, nil
}

// Delete deletes the row with UUID ref.
func (s *X509KeyPairStore) Delete(ctx context.Context, ref string) error {
	if err := s.rows.DeleteKeyPair(ctx, ref); err != nil {
		return fmt.Errorf("delete certificate %s: %w", ref, err)
	}
	return nil
}
