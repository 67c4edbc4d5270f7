package capi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Names of the certificate Secrets written by the kubernetes certificate
// store ([certificates]/cert_manager_type = kubernetes).
const (
	// CertSecretPrefix prefixes the name of every certificate Secret; the
	// rest of the name is a random UUID. The whole name is the reference
	// stored in the cluster row.
	CertSecretPrefix = "okm-cert-"
	// LabelManagedBy marks the Secrets the store owns.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy.
	ManagedByValue = "openkeel-magnum"

	// Data keys of a certificate Secret: the PEM certificate, the encrypted
	// PKCS#8 PEM private key as Magnum stores it, and its passphrase.
	certKeyCert       = "tls.crt"
	certKeyKey        = "tls.key"
	certKeyPassphrase = "passphrase"

	// annotationCertName records the name Magnum gives the certificate (the
	// issuer name of a CA, "Magnum-Conductor" for the client certificate).
	annotationCertName = "magnum.openstack.org/certificate-name"
	// annotationCertProject and annotationCertUser record the caller that
	// stored the certificate, as the x509keypair rows do.
	annotationCertProject = "magnum.openstack.org/project-id"
	annotationCertUser    = "magnum.openstack.org/user-id"

	// certStoreTimeout bounds each call of the store to the API server.
	certStoreTimeout = 30 * time.Second
)

// certStore is the kubernetes certificate store: one Opaque Secret per
// certificate in the management namespace.
type certStore struct {
	client    client.Client
	namespace string
	newName   func() string
}

var _ certs.Store = (*certStore)(nil)

// NewCertStore returns the kubernetes certificate store: each certificate
// is a Secret "okm-cert-<uuid>" of namespace (DefaultNamespace when empty)
// reached through c, and the Secret name is the reference. newName makes
// the <uuid> part of new names (nil: random version 4 UUIDs).
//
// Get and Delete only see Secrets carrying the managed-by label and the
// name prefix: any other reference is unknown (certs.ErrNotFound), as
// Delete of a certificate that is already gone is, matching the
// x509keypair store.
func NewCertStore(c client.Client, namespace string, newName func() string) certs.Store {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	if newName == nil {
		newName = uuid.NewString
	}
	return &certStore{client: c, namespace: namespace, newName: newName}
}

// Put creates a new Secret holding kp and returns its name.
func (s *certStore) Put(ctx context.Context, kp certs.KeyPair, name string) (string, error) {
	annotations := map[string]string{annotationCertName: name}
	if rc := magnum.FromContext(ctx); rc != nil {
		if rc.ProjectID != "" {
			annotations[annotationCertProject] = rc.ProjectID
		}
		if rc.UserID != "" {
			annotations[annotationCertUser] = rc.UserID
		}
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        CertSecretPrefix + s.newName(),
			Namespace:   s.namespace,
			Labels:      map[string]string{LabelManagedBy: ManagedByValue},
			Annotations: annotations,
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			certKeyCert:       kp.CertPEM,
			certKeyKey:        kp.KeyPEM,
			certKeyPassphrase: kp.Passphrase,
		},
	}
	ctx, cancel := context.WithTimeout(ctx, certStoreTimeout)
	defer cancel()
	if err := s.client.Create(ctx, sec); err != nil {
		return "", fmt.Errorf("store certificate in secret %s/%s: %w", s.namespace, sec.Name, err)
	}
	return sec.Name, nil
}

// Get reads the Secret named ref.
func (s *certStore) Get(ctx context.Context, ref string) (*certs.KeyPair, error) {
	sec, err := s.get(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("get certificate %s: %w", ref, err)
	}
	return &certs.KeyPair{
		CertPEM:    sec.Data[certKeyCert],
		KeyPEM:     sec.Data[certKeyKey],
		Passphrase: sec.Data[certKeyPassphrase],
	}, nil
}

// Delete deletes the Secret named ref. The delete is conditional on the
// UID read, so a Secret that is not the store's is never removed.
func (s *certStore) Delete(ctx context.Context, ref string) error {
	sec, err := s.get(ctx, ref)
	if err != nil {
		return fmt.Errorf("delete certificate %s: %w", ref, err)
	}
	ctx, cancel := context.WithTimeout(ctx, certStoreTimeout)
	defer cancel()
	err = s.client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone already, or replaced by another object under the same name.
		return fmt.Errorf("delete certificate %s: %w", ref, certs.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete certificate %s: %w", ref, err)
	}
	return nil
}

// get reads the store's Secret named ref: certs.ErrNotFound when there is
// none, or when ref is not a name the store writes or the Secret does not
// carry the managed-by label.
func (s *certStore) get(ctx context.Context, ref string) (*corev1.Secret, error) {
	if !isCertSecretName(ref) {
		return nil, certs.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, certStoreTimeout)
	defer cancel()
	var sec corev1.Secret
	err := s.client.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: ref}, &sec)
	if apierrors.IsNotFound(err) {
		return nil, certs.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", s.namespace, ref, err)
	}
	if sec.Labels[LabelManagedBy] != ManagedByValue {
		return nil, certs.ErrNotFound
	}
	return &sec, nil
}

// isCertSecretName reports whether ref can name a certificate Secret: the
// prefix followed by a lower-case DNS label part.
func isCertSecretName(ref string) bool {
	rest, ok := strings.CutPrefix(ref, CertSecretPrefix)
	if !ok || rest == "" || len(ref) > 253 {
		return false
	}
	for _, r := range rest {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return !strings.HasSuffix(rest, "-")
}
