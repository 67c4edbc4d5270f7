package capi

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// ErrNoLoadBalancerService is what LoadBalancers.List returns for a cloud
// without a load-balancer (Octavia) service: there is nothing to clean up.
var ErrNoLoadBalancerService = errors.New("no load-balancer service")

// LoadBalancer is an Octavia load balancer as the pre-delete step sees it.
type LoadBalancer struct {
	ID                 string
	Name               string
	Description        string
	ProjectID          string
	ProvisioningStatus string
	// VIPPortID is the Neutron port of the VIP, where a floating IP may be.
	VIPPortID string
}

// LoadBalancers lists and deletes the Octavia load balancers of a project
// (driver-capi.md § 8.8 step 2).
type LoadBalancers interface {
	// List returns the load balancers of projectID, read as cred. A cloud
	// without a load-balancer service gives ErrNoLoadBalancerService.
	List(ctx context.Context, cred driver.Credentials, projectID string) ([]LoadBalancer, error)
	// Delete deletes the floating IPs on lb's VIP port, then deletes lb
	// with everything it holds (cascade). A load balancer already gone, or
	// one that Octavia cannot change right now (being deleted, created or
	// updated), is not an error: the caller lists again and retries.
	Delete(ctx context.Context, cred driver.Credentials, lb LoadBalancer) error
}

// Defaults of the pre-delete step.
const (
	// DefaultPreDeleteLBTimeout is Magnum's [cluster]/pre_delete_lb_timeout.
	DefaultPreDeleteLBTimeout = 60 * time.Second
	// DefaultLBPollInterval is how often the step lists the load balancers
	// while it waits for them to go.
	DefaultLBPollInterval = 2 * time.Second
)

// provisioningPendingDelete is Octavia's status of a load balancer being
// deleted.
const provisioningPendingDelete = "PENDING_DELETE"

// clusterLoadBalancer reports whether lb was made for the cluster by the
// cloud controller manager (or the Octavia ingress controller) running in
// it. Both are deployed with the cluster name <uuid> and name their load
// balancers "kube_service_<uuid>_<namespace>_<service>" and
// "kube_ingress_<uuid>_<namespace>_<ingress>", with descriptions
// "Kubernetes external service <ns>/<name> from cluster <uuid>" and
// "Kubernetes Ingress <name> in namespace <ns> from cluster <uuid>,
// version: <n>" (k8s.io/cloud-provider-openstack v1.36:
// pkg/openstack/loadbalancer.go, pkg/ingress/controller/controller.go).
//
// Deviation: magnum-cluster-api matches the description only, on every
// load balancer the caller can see (and deletes through an admin client);
// here the load balancer must also belong to the cluster's project, so
// that a description written in another project never gets a load
// balancer deleted (docs/compatibility.md). Tags are not used: the cloud
// controller manager also tags a load balancer it merely shares
// (loadbalancer.openstack.org/load-balancer-id), which another cluster or
// the user may own.
func clusterLoadBalancer(lb LoadBalancer, cl magnum.Cluster) bool {
	if cl.ProjectID == "" || cl.UUID == "" || lb.ProjectID != cl.ProjectID {
		return false
	}
	for _, prefix := range []string{"kube_service_", "kube_ingress_"} {
		if strings.HasPrefix(lb.Name, prefix+cl.UUID+"_") {
			return true
		}
	}
	return clusterDescription(cl.UUID).MatchString(lb.Description)
}

// clusterDescription matches the descriptions the cloud controller
// manager and the ingress controller write; magnum-cluster-api's pattern
// is "Kubernetes .+ from cluster <uuid>".
func clusterDescription(uuid string) *regexp.Regexp {
	return regexp.MustCompile(`^Kubernetes .+ from cluster ` + regexp.QuoteMeta(uuid) + `(,|$)`)
}

// clusterLoadBalancers lists the cluster's load balancers.
func (d *Driver) clusterLoadBalancers(ctx context.Context, cred driver.Credentials, cl magnum.Cluster) ([]LoadBalancer, error) {
	all, err := d.opts.LoadBalancers.List(ctx, cred, cl.ProjectID)
	if err != nil {
		return nil, err
	}
	var out []LoadBalancer
	for _, lb := range all {
		if clusterLoadBalancer(lb, cl) {
			out = append(out, lb)
		}
	}
	return out, nil
}

// deleteLoadBalancers is step 2 of § 8.8: delete the cluster's load
// balancers and the floating IPs on their VIP ports, and wait up to
// PreDeleteLBTimeout for them to be gone. CAPO does not delete them, and
// a load balancer left in the cluster's network blocks the deletion of
// the network and router.
//
// The step is resumable: load balancers already being deleted are only
// waited for, and a load balancer that is gone is not an error, so a new
// DELETE after a timeout carries on where the last one stopped. Every
// failure is returned (the cluster becomes DELETE_FAILED, as with
// magnum-cluster-api's PreDeletionFailed, with Magnum's message); a
// timeout names the load balancers left.
func (d *Driver) deleteLoadBalancers(ctx context.Context, cred driver.Credentials, cl magnum.Cluster) error {
	if d.opts.LoadBalancers == nil {
		return nil
	}
	if err := d.removeLoadBalancers(ctx, cred, cl); err != nil {
		return magnum.PreDeletionFailed(cl.UUID, err.Error())
	}
	return nil
}

// removeLoadBalancers deletes and waits (see deleteLoadBalancers).
func (d *Driver) removeLoadBalancers(ctx context.Context, cred driver.Credentials, cl magnum.Cluster) error {
	deadline := time.NewTimer(d.opts.PreDeleteLBTimeout)
	defer deadline.Stop()
	expired := false
	for {
		left, err := d.clusterLoadBalancers(ctx, cred, cl)
		if errors.Is(err, ErrNoLoadBalancerService) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list load balancers: %w", err)
		}
		if len(left) == 0 {
			return nil
		}
		if expired {
			return fmt.Errorf("load balancers still exist after %s: %s", d.opts.PreDeleteLBTimeout, describeLoadBalancers(left))
		}
		for _, lb := range left {
			if lb.ProvisioningStatus == provisioningPendingDelete {
				continue
			}
			if err := d.opts.LoadBalancers.Delete(ctx, cred, lb); err != nil {
				return fmt.Errorf("delete load balancer %s: %w", describeLoadBalancers([]LoadBalancer{lb}), err)
			}
		}
		poll := time.NewTimer(d.opts.LBPollInterval)
		select {
		case <-ctx.Done():
			poll.Stop()
			return fmt.Errorf("load balancers still exist: %s: %w", describeLoadBalancers(left), ctx.Err())
		case <-deadline.C:
			poll.Stop()
			expired = true // one last look
		case <-poll.C:
		}
	}
}

// describeLoadBalancers renders "name (id)" for each load balancer.
func describeLoadBalancers(lbs []LoadBalancer) string {
	parts := make([]string, 0, len(lbs))
	for _, lb := range lbs {
		if lb.Name == "" {
			parts = append(parts, lb.ID)
			continue
		}
		parts = append(parts, lb.Name+" ("+lb.ID+")")
	}
	return strings.Join(parts, ", ")
}
