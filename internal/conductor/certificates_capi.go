package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// ClusterKeyPairs reads the cluster's three CAs and its admin client
// certificate, with their private keys, from the certificate store: what a
// driver that runs the control plane itself (Cluster API) hands to it. A
// missing reference or certificate is an error naming it.
func (c *Conductor) ClusterKeyPairs(ctx context.Context, cl *magnum.Cluster) (*certs.ClusterCertificates, error) {
	store := c.certStore()
	load := func(what string, ref *string) (*certs.KeyPair, error) {
		if ref == nil || *ref == "" {
			return nil, fmt.Errorf("cluster %s has no %s certificate", cl.UUID, what)
		}
		kp, err := store.Get(ctx, *ref)
		if err != nil {
			return nil, fmt.Errorf("cluster %s %s certificate: %w", cl.UUID, what, err)
		}
		return kp, nil
	}
	var (
		out certs.ClusterCertificates
		err error
	)
	if out.Kubernetes, err = load("Kubernetes CA", cl.CACertRef); err != nil {
		return nil, err
	}
	if out.Etcd, err = load("etcd CA", cl.EtcdCACertRef); err != nil {
		return nil, err
	}
	if out.FrontProxy, err = load("front-proxy CA", cl.FrontProxyCACertRef); err != nil {
		return nil, err
	}
	if out.Client, err = load("client", cl.MagnumCertRef); err != nil {
		return nil, err
	}
	return &out, nil
}
