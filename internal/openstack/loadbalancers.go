package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"
)

// ErrNoLoadBalancerService is returned when the catalog has no
// load-balancer (Octavia) endpoint: a cloud without Octavia has no load
// balancers to clean up, so callers treat it as "nothing to do".
var ErrNoLoadBalancerService = errors.New("openstack: no load-balancer service in the catalog")

// LoadBalancerOptions configure NewLoadBalancers.
type LoadBalancerOptions struct {
	// Octavia selects the load-balancer endpoint of a catalog
	// ([octavia_client] region_name, endpoint_type, or a fixed endpoint).
	Octavia ServiceOptions
	// Neutron selects the network endpoint ([neutron_client]), where the
	// floating IPs of the load balancers' VIP ports are.
	Neutron ServiceOptions
	// Service is used when the caller has no token.
	Service *ServiceAuth
	SessionOptions
}

// LoadBalancer is an Octavia v2 load balancer, with the fields the cleanup
// of a cluster reads.
type LoadBalancer struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Description        string   `json:"description"`
	ProjectID          string   `json:"project_id"`
	ProvisioningStatus string   `json:"provisioning_status"`
	OperatingStatus    string   `json:"operating_status"`
	VIPPortID          string   `json:"vip_port_id"`
	VIPAddress         string   `json:"vip_address"`
	Tags               []string `json:"tags"`
}

// FloatingIP is a Neutron floating IP.
type FloatingIP struct {
	ID                string `json:"id"`
	FloatingIPAddress string `json:"floating_ip_address"`
	PortID            string `json:"port_id"`
	ProjectID         string `json:"project_id"`
	Description       string `json:"description"`
}

// LoadBalancers lists and deletes Octavia load balancers and the Neutron
// floating IPs of their VIP ports, as the caller (the caller's token and
// catalog) or, without a token, with the service credentials. It is safe
// for concurrent use.
type LoadBalancers struct {
	opts LoadBalancerOptions
	s    *session
}

var (
	serviceLoadBalancer = service{"octavia", "load-balancer", "v2"}
	// maxLoadBalancerPages bounds the pagination of one list.
	maxLoadBalancerPages = 100
)

// NewLoadBalancers validates o.
func NewLoadBalancers(o LoadBalancerOptions) (*LoadBalancers, error) {
	for _, s := range []struct {
		group string
		o     ServiceOptions
		svc   service
	}{{"octavia_client", o.Octavia, serviceLoadBalancer}, {"neutron_client", o.Neutron, serviceNetwork}} {
		if s.o.Endpoint != "" {
			if _, _, err := serviceRoots(s.o.Endpoint, s.svc.version); err != nil {
				return nil, fmt.Errorf("[%s] endpoint: %w", s.group, err)
			}
		}
	}
	s, err := newSession(o.SessionOptions, o.Service)
	if err != nil {
		return nil, err
	}
	return &LoadBalancers{opts: o, s: s}, nil
}

// client returns a client of svc for the caller. A catalog without svc
// gives errNoEndpoint.
func (l *LoadBalancers) client(ctx context.Context, caller Caller, svc service, so ServiceOptions) (*gophercloud.ServiceClient, error) {
	var pc *gophercloud.ProviderClient
	endpoint := so.Endpoint
	if caller.Service || caller.Token == "" {
		var err error
		if pc, err = l.s.serviceProvider(ctx); err != nil {
			return nil, err
		}
		if endpoint == "" {
			eo := l.s.serviceEndpointOpts()
			eo.Type = svc.serviceType
			if endpoint, err = pc.EndpointLocator(eo); err != nil {
				if _, ok := errors.AsType[*gophercloud.ErrEndpointNotFound](err); ok {
					return nil, &errNoEndpoint{svc: svc, err: err}
				}
				return nil, fmt.Errorf("openstack: %s endpoint of the service user: %w", svc.serviceType, err)
			}
		}
	} else {
		pc = l.s.userProvider(caller.Token)
		if endpoint == "" {
			entries, err := parseCatalog(caller.ServiceCatalog)
			if err != nil {
				return nil, fmt.Errorf("openstack: catalog: %w", err)
			}
			if endpoint, err = endpointURL(entries, svc.serviceType, so.EndpointType, so.RegionName); err != nil {
				return nil, &errNoEndpoint{svc: svc, err: err}
			}
		}
	}
	root, base, err := serviceRoots(endpoint, svc.version)
	if err != nil {
		return nil, err
	}
	return &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: root, ResourceBase: base}, nil
}

// errNoEndpoint is a catalog without the service.
type errNoEndpoint struct {
	svc service
	err error
}

func (e *errNoEndpoint) Error() string {
	return fmt.Sprintf("openstack: %s endpoint: %v", e.svc.serviceType, e.err)
}

func (e *errNoEndpoint) Unwrap() error { return e.err }

// List returns the load balancers of projectID (GET
// /v2/lbaas/loadbalancers?project_id=…, following the
// loadbalancers_links "next" links). Load balancers of other projects that
// Octavia might still return are dropped. A catalog without a
// load-balancer endpoint gives ErrNoLoadBalancerService.
func (l *LoadBalancers) List(ctx context.Context, caller Caller, projectID string) ([]LoadBalancer, error) {
	if projectID == "" {
		return nil, errors.New("openstack: listing load balancers needs a project")
	}
	sc, err := l.client(ctx, caller, serviceLoadBalancer, l.opts.Octavia)
	if _, ok := errors.AsType[*errNoEndpoint](err); ok {
		return nil, ErrNoLoadBalancerService
	}
	if err != nil {
		return nil, err
	}
	collection := sc.ServiceURL("lbaas", "loadbalancers")
	next := collection + "?" + url.Values{"project_id": {projectID}}.Encode()
	var out []LoadBalancer
	for range maxLoadBalancerPages {
		var body struct {
			LoadBalancers []LoadBalancer `json:"loadbalancers"`
			Links         []struct {
				Rel  string `json:"rel"`
				Href string `json:"href"`
			} `json:"loadbalancers_links"`
		}
		if err := l.get(ctx, sc, next, &body); err != nil {
			return nil, fmt.Errorf("octavia: list load balancers: %w", keystoneError(err))
		}
		for _, lb := range body.LoadBalancers {
			if lb.ProjectID == projectID {
				out = append(out, lb)
			}
		}
		link := ""
		for _, ln := range body.Links {
			if ln.Rel == "next" {
				link = ln.Href
			}
		}
		if link == "" || len(body.LoadBalancers) == 0 {
			return out, nil
		}
		if next, err = nextURL(collection, link); err != nil {
			return nil, fmt.Errorf("octavia: list load balancers: %w", err)
		}
	}
	return nil, fmt.Errorf("octavia: list load balancers: more than %d pages", maxLoadBalancerPages)
}

// Delete cascade-deletes the load balancer id (DELETE
// /v2/lbaas/loadbalancers/{id}?cascade=true: its listeners, pools,
// members and health monitors go with it). A load balancer that is gone
// (404) is not an error, nor is one Octavia cannot change now (409: it is
// being created, updated or already deleted); the caller lists again and
// retries until it is gone.
func (l *LoadBalancers) Delete(ctx context.Context, caller Caller, id string) error {
	if id == "" {
		return errors.New("openstack: deleting a load balancer needs its ID")
	}
	sc, err := l.client(ctx, caller, serviceLoadBalancer, l.opts.Octavia)
	if _, ok := errors.AsType[*errNoEndpoint](err); ok {
		return ErrNoLoadBalancerService
	}
	if err != nil {
		return err
	}
	u := sc.ServiceURL("lbaas", "loadbalancers", url.PathEscape(id)) + "?cascade=true"
	err = l.delete(ctx, sc, u)
	switch statusOf(err) {
	case 0:
		if err != nil {
			return fmt.Errorf("octavia: delete load balancer %s: %w", id, err)
		}
		return nil
	case http.StatusNotFound, http.StatusConflict:
		return nil
	default:
		return fmt.Errorf("octavia: delete load balancer %s: %w", id, keystoneError(err))
	}
}

// DeleteFloatingIPs deletes the floating IPs bound to portID (GET
// /v2.0/floatingips?port_id=…, then DELETE /v2.0/floatingips/{id}) and
// returns their addresses. Floating IPs already gone are skipped.
func (l *LoadBalancers) DeleteFloatingIPs(ctx context.Context, caller Caller, portID string) ([]string, error) {
	if portID == "" {
		return nil, nil
	}
	sc, err := l.client(ctx, caller, serviceNetwork, l.opts.Neutron)
	if err != nil {
		return nil, err
	}
	var body struct {
		FloatingIPs []FloatingIP `json:"floatingips"`
	}
	u := sc.ServiceURL("floatingips") + "?" + url.Values{"port_id": {portID}}.Encode()
	if err := l.get(ctx, sc, u, &body); err != nil {
		return nil, fmt.Errorf("neutron: list floating IPs of port %s: %w", portID, keystoneError(err))
	}
	var deleted []string
	for _, fip := range body.FloatingIPs {
		if fip.PortID != portID {
			continue // a Neutron that ignored the filter
		}
		err := l.delete(ctx, sc, sc.ServiceURL("floatingips", url.PathEscape(fip.ID)))
		if err != nil && statusOf(err) != http.StatusNotFound {
			return deleted, fmt.Errorf("neutron: delete floating IP %s: %w", fip.ID, keystoneError(err))
		}
		deleted = append(deleted, fip.FloatingIPAddress)
	}
	return deleted, nil
}

func (l *LoadBalancers) get(ctx context.Context, sc *gophercloud.ServiceClient, u string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, l.s.timeout)
	defer cancel()
	_, err := sc.Get(ctx, u, out, &gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
	return err
}

func (l *LoadBalancers) delete(ctx context.Context, sc *gophercloud.ServiceClient, u string) error {
	ctx, cancel := context.WithTimeout(ctx, l.s.timeout)
	defer cancel()
	_, err := sc.Delete(ctx, u, &gophercloud.RequestOpts{OkCodes: []int{http.StatusNoContent, http.StatusAccepted, http.StatusOK}})
	return err
}
