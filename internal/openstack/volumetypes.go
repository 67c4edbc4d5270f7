package openstack

import (
	"context"
	"errors"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
)

// VolumeTypeOptions configure NewVolumeTypes.
type VolumeTypeOptions struct {
	// Cinder selects the block-storage endpoint of a user's catalog
	// ([cinder_client] region_name, endpoint_type, or a fixed endpoint).
	Cinder ServiceOptions
	// Service lists when the caller has no token.
	Service *ServiceAuth
	SessionOptions
}

// VolumeTypes lists Cinder volume types for the Cinder CSI add-on of the
// Cluster API driver. It is safe for concurrent use.
type VolumeTypes struct {
	opts VolumeTypeOptions
	s    *session
}

// VolumeType is a Cinder volume type; Default marks Cinder's default type.
type VolumeType struct {
	Name    string
	Default bool
}

// blockStorageTypes are the catalog types of Cinder's v3 API, newest name
// first.
var blockStorageTypes = []string{"block-storage", "volumev3"}

// NewVolumeTypes validates o.
func NewVolumeTypes(o VolumeTypeOptions) (*VolumeTypes, error) {
	if o.Cinder.Endpoint != "" {
		if _, _, err := serviceRoots(o.Cinder.Endpoint, "v3"); err != nil {
			return nil, fmt.Errorf("[cinder_client] endpoint: %w", err)
		}
	}
	s, err := newSession(o.SessionOptions, o.Service)
	if err != nil {
		return nil, err
	}
	return &VolumeTypes{opts: o, s: s}, nil
}

// blockStorage returns a Cinder client for the caller, or nil when the
// catalog has no block-storage (or volumev3) service.
func (v *VolumeTypes) blockStorage(ctx context.Context, caller Caller) (*gophercloud.ServiceClient, error) {
	if caller.Service || caller.Token == "" {
		pc, err := v.s.serviceProvider(ctx)
		if err != nil {
			return nil, err
		}
		if v.opts.Cinder.Endpoint != "" {
			_, base, err := serviceRoots(v.opts.Cinder.Endpoint, "v3")
			if err != nil {
				return nil, err
			}
			return &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: base, ResourceBase: base}, nil
		}
		sc, err := gcopenstack.NewBlockStorageV3(pc, v.s.serviceEndpointOpts())
		var nf *gophercloud.ErrEndpointNotFound
		if errors.As(err, &nf) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("openstack: block-storage endpoint of the service user: %w", err)
		}
		return sc, nil
	}
	endpoint := v.opts.Cinder.Endpoint
	if endpoint == "" {
		entries, err := parseCatalog(caller.ServiceCatalog)
		if err != nil {
			return nil, fmt.Errorf("openstack: catalog: %w", err)
		}
		for _, t := range blockStorageTypes {
			if endpoint, err = endpointURL(entries, t, v.opts.Cinder.EndpointType, v.opts.Cinder.RegionName); err == nil {
				break
			}
			var nf *errEndpointNotFound
			if !errors.As(err, &nf) {
				return nil, fmt.Errorf("openstack: block-storage endpoint: %w", err)
			}
		}
		if endpoint == "" {
			return nil, nil
		}
	}
	_, base, err := serviceRoots(endpoint, "v3")
	if err != nil {
		return nil, err
	}
	return &gophercloud.ServiceClient{ProviderClient: v.s.userProvider(caller.Token), Endpoint: base, ResourceBase: base}, nil
}

// List returns the volume types the caller sees, Cinder's default type
// marked, and whether Cinder is in the catalog at all (false with no
// error when it is not).
func (v *VolumeTypes) List(ctx context.Context, caller Caller) ([]VolumeType, bool, error) {
	sc, err := v.blockStorage(ctx, caller)
	if err != nil || sc == nil {
		return nil, false, err
	}
	lctx, cancel := context.WithTimeout(ctx, v.s.timeout)
	defer cancel()
	pages, err := volumetypes.List(sc, volumetypes.ListOpts{}).AllPages(lctx)
	if err != nil {
		return nil, true, fmt.Errorf("openstack: list volume types: %w", keystoneError(err))
	}
	types, err := volumetypes.ExtractVolumeTypes(pages)
	if err != nil {
		return nil, true, fmt.Errorf("openstack: list volume types: %w", err)
	}
	// GET /types/default answers 404 when no default type is configured:
	// then no class is the default.
	def, err := volumetypes.Get(lctx, sc, "default").Extract()
	defName := ""
	if err == nil && def != nil {
		defName = def.Name
	}
	out := make([]VolumeType, 0, len(types))
	for _, t := range types {
		out = append(out, VolumeType{Name: t.Name, Default: t.Name == defName})
	}
	return out, true, nil
}
