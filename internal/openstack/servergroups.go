package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
)

// ServerGroupOptions configure NewServerGroups.
type ServerGroupOptions struct {
	// Nova selects the compute endpoint of a user's catalog ([nova_client]
	// region_name, endpoint_type, or a fixed endpoint).
	Nova ServiceOptions
	// Service lists and deletes groups when the caller has no token (the
	// deletion of a cluster finishes in the background); its listing uses
	// all_projects, as magnum-cluster-api does with an admin context.
	Service *ServiceAuth
	SessionOptions
}

// ServerGroups finds, creates and deletes Nova server groups by name
// (os-server-groups, microversion 2.1: one policy in "policies"). Names are
// unique per cluster ("<stack_id>" and "<stack_id>-<nodegroup>"), so a name
// identifies a group. It is safe for concurrent use.
type ServerGroups struct {
	opts ServerGroupOptions
	s    *session
}

// NewServerGroups validates o.
func NewServerGroups(o ServerGroupOptions) (*ServerGroups, error) {
	if o.Nova.Endpoint != "" {
		if _, _, err := serviceRoots(o.Nova.Endpoint, serviceCompute.version); err != nil {
			return nil, fmt.Errorf("[nova_client] endpoint: %w", err)
		}
	}
	s, err := newSession(o.SessionOptions, o.Service)
	if err != nil {
		return nil, err
	}
	return &ServerGroups{opts: o, s: s}, nil
}

// compute returns a Nova client for the caller, and whether it lists with
// all_projects (service credentials).
func (g *ServerGroups) compute(ctx context.Context, caller Caller) (*gophercloud.ServiceClient, bool, error) {
	if caller.Service || caller.Token == "" {
		pc, err := g.s.serviceProvider(ctx)
		if err != nil {
			return nil, false, err
		}
		if g.opts.Nova.Endpoint != "" {
			root, base, err := serviceRoots(g.opts.Nova.Endpoint, serviceCompute.version)
			if err != nil {
				return nil, false, err
			}
			return &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: root, ResourceBase: base}, true, nil
		}
		sc, err := gcopenstack.NewComputeV2(pc, g.s.serviceEndpointOpts())
		if err != nil {
			return nil, false, fmt.Errorf("openstack: compute endpoint of the service user: %w", err)
		}
		return sc, true, nil
	}
	endpoint := g.opts.Nova.Endpoint
	if endpoint == "" {
		entries, err := parseCatalog(caller.ServiceCatalog)
		if err != nil {
			return nil, false, fmt.Errorf("openstack: catalog: %w", err)
		}
		if endpoint, err = endpointURL(entries, serviceCompute.serviceType, g.opts.Nova.EndpointType, g.opts.Nova.RegionName); err != nil {
			return nil, false, fmt.Errorf("openstack: compute endpoint: %w", err)
		}
	}
	root, base, err := serviceRoots(endpoint, serviceCompute.version)
	if err != nil {
		return nil, false, err
	}
	return &gophercloud.ServiceClient{ProviderClient: g.s.userProvider(caller.Token), Endpoint: root, ResourceBase: base}, false, nil
}

// find returns the group named name (nil when there is none). With
// all_projects and a known project, groups of other projects are skipped.
func (g *ServerGroups) find(ctx context.Context, sc *gophercloud.ServiceClient, all bool, projectID, name string) (*servergroups.ServerGroup, error) {
	ctx, cancel := context.WithTimeout(ctx, g.s.timeout)
	defer cancel()
	pages, err := servergroups.List(sc, servergroups.ListOpts{AllProjects: all}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("openstack: list server groups: %w", keystoneError(err))
	}
	groups, err := servergroups.ExtractServerGroups(pages)
	if err != nil {
		return nil, fmt.Errorf("openstack: list server groups: %w", err)
	}
	for i := range groups {
		if groups[i].Name == name && (projectID == "" || groups[i].ProjectID == "" || groups[i].ProjectID == projectID) {
			return &groups[i], nil
		}
	}
	return nil, nil
}

// Ensure returns the ID of the caller's server group named name, creating
// it with policy (affinity, anti-affinity, soft-affinity or
// soft-anti-affinity) when it does not exist.
func (g *ServerGroups) Ensure(ctx context.Context, caller Caller, name, policy string) (string, error) {
	if name == "" || policy == "" {
		return "", errors.New("openstack: a server group needs a name and a policy")
	}
	sc, all, err := g.compute(ctx, caller)
	if err != nil {
		return "", err
	}
	found, err := g.find(ctx, sc, all, caller.ProjectID, name)
	if err != nil {
		return "", err
	}
	if found != nil {
		return found.ID, nil
	}
	cctx, cancel := context.WithTimeout(ctx, g.s.timeout)
	defer cancel()
	sg, err := servergroups.Create(cctx, sc, servergroups.CreateOpts{Name: name, Policies: []string{policy}}).Extract()
	if err != nil {
		return "", fmt.Errorf("openstack: create server group %s: %w", name, keystoneError(err))
	}
	return sg.ID, nil
}

// Delete removes the server group named name; a group that does not exist
// is not an error. Without a token the service credentials are used.
func (g *ServerGroups) Delete(ctx context.Context, caller Caller, name string) error {
	sc, all, err := g.compute(ctx, caller)
	if err != nil {
		return err
	}
	found, err := g.find(ctx, sc, all, caller.ProjectID, name)
	if err != nil || found == nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, g.s.timeout)
	defer cancel()
	err = servergroups.Delete(dctx, sc, found.ID).ExtractErr()
	if err == nil || statusOf(err) == http.StatusNotFound {
		return nil
	}
	return fmt.Errorf("openstack: delete server group %s: %w", name, keystoneError(err))
}
