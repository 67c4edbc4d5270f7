package conductor

import (
	"context"
	"errors"
	"fmt"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// CertRows adapts the x509keypair table of the database to
// certs.KeyPairRows. Lookups and deletes ignore the project: references
// are UUIDs held by cluster rows the caller could already see.
type CertRows struct {
	DB *db.DB
}

var _ certs.KeyPairRows = CertRows{}

// InsertKeyPair inserts one x509keypair row (intermediates NULL).
func (r CertRows) InsertKeyPair(ctx context.Context, row certs.KeyPairRow) error {
	v := magnum.X509KeyPair{
		UUID:                 row.UUID,
		ProjectID:            row.ProjectID,
		UserID:               row.UserID,
		Certificate:          &row.Certificate,
		PrivateKey:           &row.PrivateKey,
		PrivateKeyPassphrase: &row.PrivateKeyPassphrase,
	}
	return r.DB.InTx(ctx, func(tx *db.Tx) error {
		w := v
		return tx.CreateX509KeyPair(ctx, &w)
	})
}

// KeyPairByUUID reads the x509keypair row with uuid.
func (r CertRows) KeyPairByUUID(ctx context.Context, uuid string) (*certs.KeyPairRow, error) {
	v, err := r.DB.GetX509KeyPairByUUID(ctx, uuid, db.AllProjects)
	if errors.Is(err, db.ErrNotFound) {
		return nil, certs.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &certs.KeyPairRow{
		UUID: v.UUID, Certificate: certStr(v.Certificate), PrivateKey: certStr(v.PrivateKey),
		PrivateKeyPassphrase: certStr(v.PrivateKeyPassphrase), ProjectID: v.ProjectID, UserID: v.UserID,
	}, nil
}

// DeleteKeyPair deletes the x509keypair row with uuid.
func (r CertRows) DeleteKeyPair(ctx context.Context, uuid string) error {
	err := r.DB.InTx(ctx, func(tx *db.Tx) error { return tx.DeleteX509KeyPair(ctx, uuid) })
	if errors.Is(err, db.ErrNotFound) {
		return certs.ErrNotFound
	}
	return err
}

// NewCertStore returns the certificate store of [certificates]/
// cert_manager_type after certs.ResolveStoreType: today only
// certs.StoreX509KeyPair, over database. newUUID makes the row UUIDs (nil:
// random version 4 UUIDs).
func NewCertStore(database *db.DB, storeType string, newUUID func() string) (certs.Store, error) {
	if newUUID == nil {
		newUUID = NewUUID
	}
	switch storeType {
	case certs.StoreX509KeyPair:
		return certs.NewX509KeyPairStore(CertRows{DB: database}, newUUID), nil
	}
	return nil, fmt.Errorf("certificate store %q is not supported", storeType)
}

// certStore is the store the certificate use cases write to.
//
// The Conductor has no store field yet: the x509keypair store over c.DB is
// the only supported one, so it is built here.
func (c *Conductor) certStore() certs.Store {
	if c.Certs != nil {
		return c.Certs
	}
	return certs.NewX509KeyPairStore(CertRows{DB: c.DB}, c.newUUID)
}

// x509Options are the [x509] options of generation and signing (Magnum's
// defaults when the settings carry none).
func (c *Conductor) x509Options() certs.X509Options {
	o := certs.DefaultX509Options()
	if x := c.Settings.X509; x != nil {
		o = *x
	}
	if c.Now != nil {
		o.Now = c.Now
	}
	return o
}

// certIssuer is the subject of a cluster's CAs: its name, or its UUID when
// it has none (the struct cannot tell NULL from an empty name; Magnum
// always stores a name).
func certIssuer(cl *magnum.Cluster) string {
	if cl.Name == "" {
		return certs.IssuerName(nil, cl.UUID)
	}
	return certs.IssuerName(&cl.Name, cl.UUID)
}

// GenerateClusterCertificates makes the cluster's three CAs (Kubernetes,
// etcd, front-proxy) and the admin client certificate as Magnum does at
// cluster creation, stores them as the caller of ctx, and sets
// CACertRef, EtcdCACertRef, FrontProxyCACertRef and MagnumCertRef on cl.
// It does not write the cluster row: the caller saves the four columns.
// Any failure is 500 CertificatesToClusterFailed, and the certificates
// already stored are removed again.
//
// Magnum: magnum/conductor/handlers/common/cert_manager.py
// generate_certificates_to_cluster.
func (c *Conductor) GenerateClusterCertificates(ctx context.Context, cl *magnum.Cluster) error {
	issuer := certIssuer(cl)
	var cc *certs.ClusterCertificates
	var err error
	// Key generation is the one CPU-bound step of a create: it yields to
	// requests (onLowPriorityThread).
	c.onLowPriorityThread(func() {
		cc, err = certs.GenerateClusterCertificatesContext(ctx, issuer, c.x509Options())
	})
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		c.log().ErrorContext(ctx, "generate cluster certificates", "cluster_uuid", cl.UUID, "error", err)
		return magnum.CertificatesToClusterFailed(cl.UUID)
	}
	store := c.certStore()
	var refs []string
	put := func(kp *certs.KeyPair, name string) (*string, error) {
		ref, err := store.Put(ctx, *kp, name)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
		return &ref, nil
	}
	var k8s, etcd, fp, client *string
	if k8s, err = put(cc.Kubernetes, issuer); err == nil {
		if etcd, err = put(cc.Etcd, issuer); err == nil {
			if fp, err = put(cc.FrontProxy, issuer); err == nil {
				client, err = put(cc.Client, certs.ClientCertName)
			}
		}
	}
	if err != nil {
		c.log().ErrorContext(ctx, "store cluster certificates", "cluster_uuid", cl.UUID, "error", err)
		// Deviation: Magnum leaves the rows it stored before the failure.
		for _, ref := range refs {
			if derr := store.Delete(ctx, ref); derr != nil {
				c.log().WarnContext(ctx, "remove certificate after failure", "cluster_uuid", cl.UUID, "error", derr)
			}
		}
		return magnum.CertificatesToClusterFailed(cl.UUID)
	}
	cl.CACertRef, cl.EtcdCACertRef, cl.FrontProxyCACertRef, cl.MagnumCertRef = k8s, etcd, fp, client
	return nil
}

// DeleteClusterCertificates removes every certificate the cluster
// references (the three CAs and the client certificate) and clears the
// references on cl. A reference whose certificate is already gone is
// skipped; other failures are logged, the remaining certificates are still
// deleted and the failures are returned joined.
//
// Deviation: Magnum (delete_certificates_from_cluster) deletes only the
// Kubernetes CA and the client certificate, leaving the etcd and
// front-proxy CA rows behind.
func (c *Conductor) DeleteClusterCertificates(ctx context.Context, cl *magnum.Cluster) error {
	store := c.certStore()
	var errs []error
	for _, p := range []**string{&cl.CACertRef, &cl.MagnumCertRef, &cl.EtcdCACertRef, &cl.FrontProxyCACertRef} {
		ref := *p
		if ref == nil || *ref == "" {
			*p = nil
			continue
		}
		err := store.Delete(ctx, *ref)
		if err != nil && !errors.Is(err, certs.ErrNotFound) {
			c.log().WarnContext(ctx, "delete cluster certificate", "cluster_uuid", cl.UUID, "error", err)
			errs = append(errs, err)
			continue
		}
		*p = nil
	}
	return errors.Join(errs...)
}

// caRef returns the reference of the CA a ca_cert_type selects.
func caRef(cl *magnum.Cluster, caType string) *string {
	switch certs.ParseCACertType(caType) {
	case certs.CAEtcd:
		return cl.EtcdCACertRef
	case certs.CAFrontProxy:
		return cl.FrontProxyCACertRef
	}
	return cl.CACertRef
}

// loadCA reads the CA of cl selected by caType: a missing reference or row
// is 404 X509KeyPairNotFound, as in Magnum.
func (c *Conductor) loadCA(ctx context.Context, cl *magnum.Cluster, caType string) (*certs.KeyPair, error) {
	ref := caRef(cl, caType)
	if ref == nil {
		return nil, magnum.X509KeyPairNotFound("None")
	}
	kp, err := c.certStore().Get(ctx, *ref)
	if errors.Is(err, certs.ErrNotFound) {
		return nil, magnum.X509KeyPairNotFound(*ref)
	}
	if err != nil {
		return nil, err
	}
	return kp, nil
}

// GetCACertificate returns the PEM of the cluster's CA chosen by caType
// (certs.ParseCACertType: "etcd", "front_proxy"/"front-proxy", anything
// else the Kubernetes CA), byte for byte as stored.
//
// Magnum: ca_conductor.py get_ca_certificate.
func (c *Conductor) GetCACertificate(ctx context.Context, cl *magnum.Cluster, caType string) (string, error) {
	kp, err := c.loadCA(ctx, cl, caType)
	if err != nil {
		return "", err
	}
	return string(kp.CertPEM), nil
}

// SignCertificate signs a PEM CSR with the cluster's CA chosen by caType
// and returns the certificate PEM (no trailing newline). A malformed CSR
// is 400 InvalidCsr, a refused extension 400 CertificateValidationError.
//
// Magnum: ca_conductor.py sign_certificate, cert_manager.py
// sign_node_certificate.
func (c *Conductor) SignCertificate(ctx context.Context, cl *magnum.Cluster, csr, caType string) (string, error) {
	ca, err := c.loadCA(ctx, cl, caType)
	if err != nil {
		return "", err
	}
	pem, err := certs.SignCSR(ca, []byte(csr), c.x509Options())
	if err != nil {
		var me *magnum.Error
		if errors.As(err, &me) {
			return "", me
		}
		return "", fmt.Errorf("sign certificate for cluster %s: %w", cl.UUID, err)
	}
	return string(pem), nil
}

// RotateCA regenerates the cluster's CAs and client certificate and asks
// its driver to roll the cluster onto them (PATCH /v1/certificates).
//
// Checks, in order: the template's tls_disabled (400), the state guard
// (*_COMPLETE, else 400 "Updating a cluster when status is ..."), then the
// driver's CanRotateCA (400 "'rotate_ca_certificate' is not supported by
// this driver."). Only then are the certificates generated, stored and
// the driver called; a driver error leaves the cluster UPDATE_FAILED with
// the error as status_reason and is returned. Success sets
// UPDATE_IN_PROGRESS.
//
// Deviation: Magnum regenerates and stores the new CAs before it asks the
// driver, so a driver that cannot rotate leaves the cluster UPDATE_FAILED
// with replaced CAs; here the refusal (same 400 and message) changes
// nothing.
func (c *Conductor) RotateCA(ctx context.Context, cl *magnum.Cluster) error {
	st, err := c.clState(ctx, &c.DB.Queries, cl.UUID)
	if err != nil {
		return err
	}
	if clBool(st.Template.TLSDisabled) {
		return magnum.RotateCANonTLS()
	}
	if status := clStatus(st.Cluster.Status); !magnum.CanRotateCA(status) {
		return magnum.UpdateStatusNotSupported(status)
	}
	drv, err := c.clDriverOf(&st.Template)
	if err != nil {
		return err
	}
	if err := drv.CanRotateCA(st); err != nil {
		return err
	}
	rotated := st.Cluster
	if err := c.GenerateClusterCertificates(ctx, &rotated); err != nil {
		c.clMarkFailed(ctx, cl.UUID, magnum.StatusUpdateFailed, err.Error())
		return err
	}
	st.Cluster = rotated
	rc := magnum.FromContext(ctx)
	upd, err := drv.RotateCA(ctx, driver.CredentialsFrom(rc), st)
	if err != nil {
		c.log().ErrorContext(ctx, "rotate CA", "cluster_uuid", cl.UUID, "error", err)
		c.certSaveRotation(ctx, &rotated, magnum.StatusUpdateFailed, err.Error())
		return err
	}
	row := rotated
	if upd.Cluster != nil {
		row = *upd.Cluster
		row.CACertRef, row.EtcdCACertRef = rotated.CACertRef, rotated.EtcdCACertRef
		row.FrontProxyCACertRef, row.MagnumCertRef = rotated.FrontProxyCACertRef, rotated.MagnumCertRef
	}
	status := magnum.StatusUpdateInProgress
	row.Status, row.StatusReason = &status, nil
	upd.Cluster = &row
	if err := c.SaveDriverUpdate(ctx, upd); err != nil {
		return fmt.Errorf("save CA rotation of cluster %s: %w", cl.UUID, err)
	}
	*cl = row
	c.log().InfoContext(ctx, "cluster CA rotation started", "cluster_uuid", cl.UUID)
	return nil
}

// certSaveRotation writes the new certificate references with a status and
// reason (a failed rotation keeps the new CAs, as Magnum saves them).
func (c *Conductor) certSaveRotation(ctx context.Context, cl *magnum.Cluster, status magnum.Status, reason string) {
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		row, err := tx.ForUpdate().GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
		if err != nil {
			return err
		}
		row.CACertRef, row.EtcdCACertRef = cl.CACertRef, cl.EtcdCACertRef
		row.FrontProxyCACertRef, row.MagnumCertRef = cl.FrontProxyCACertRef, cl.MagnumCertRef
		row.Status, row.StatusReason = &status, &reason
		return tx.UpdateCluster(ctx, row, "ca_cert_ref", "etcd_ca_cert_ref", "front_proxy_ca_cert_ref",
			"magnum_cert_ref", "status", "status_reason")
	})
	if err != nil {
		c.log().ErrorContext(ctx, "save failed CA rotation", "cluster_uuid", cl.UUID, "error", err)
	}
}

func certStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
