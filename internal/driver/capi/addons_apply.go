package capi

import (
	"context"
	"fmt"

	"github.com/openkeel/openkeel-magnum/internal/driver"
)

// addonInput gathers what the add-on Secrets of st need: the application
// credential of the cloud-config Secret (which must exist) and, when the
// label cinder_csi_enabled allows it, Cinder's volume types.
func (d *Driver) addonInput(ctx context.Context, cred driver.Credentials, st driver.ClusterState, stackID string) (AddonInput, error) {
	in := AddonInput{
		Namespace: d.opts.Namespace, StackID: stackID, ClusterUUID: st.Cluster.UUID, ProjectID: st.Cluster.ProjectID,
		Labels: st.Cluster.Labels, NetworkDriver: value(st.Template.NetworkDriver),
		Cloud: d.opts.Cloud, Addons: d.opts.Addons,
	}
	s, err := d.getSecret(ctx, stackID+SuffixCloudConfig)
	if err != nil {
		return in, err
	}
	var ok bool
	if s != nil {
		in.Credential, ok = appCredentialFromSecret(s)
	}
	if !ok {
		return in, fmt.Errorf("capi driver: Secret %s%s holds no application credential", stackID, SuffixCloudConfig)
	}
	cinder, err := labels(st.Cluster.Labels).boolean(LabelCinderCSIEnabled, true)
	if err != nil {
		return in, err
	}
	if cinder && d.opts.BlockStorage != nil {
		types, available, err := d.opts.BlockStorage.VolumeTypes(ctx, cred)
		if err != nil {
			return in, fmt.Errorf("list volume types: %w", err)
		}
		in.Cinder, in.VolumeTypes = available, types
	}
	return in, nil
}

// applyAddonSets applies the two ClusterResourceSets, or only the
// -cloud-provider one. A set may exist before its Secret: CAPI applies it
// once the Secret appears (§ 8.1).
func (d *Driver) applyAddonSets(ctx context.Context, stackID, clusterUUID string, cloudProviderOnly bool) error {
	sets := ClusterResourceSets(d.opts.Namespace, stackID, clusterUUID)
	if cloudProviderOnly {
		sets = sets[1:]
	}
	for _, crs := range sets {
		if err := d.apply(ctx, crs); err != nil {
			return err
		}
	}
	return nil
}

// applyAddonSecrets renders and applies the -cloud-provider Secret and,
// when cni is not nil, the apply-once "<uuid>" Secret with that CNI
// manifest.
func (d *Driver) applyAddonSecrets(ctx context.Context, cred driver.Credentials, st driver.ClusterState, stackID string, cni []byte) error {
	in, err := d.addonInput(ctx, cred, st, stackID)
	if err != nil {
		return err
	}
	if cni != nil {
		s, err := ClusterAddonsSecret(in, cni)
		if err != nil {
			return err
		}
		if err := d.apply(ctx, s); err != nil {
			return err
		}
	}
	s, err := CloudProviderSecret(in)
	if err != nil {
		return err
	}
	return d.apply(ctx, s)
}
