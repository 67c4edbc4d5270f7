package conductor

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
)

// OpenStack is what the conductor asks of Glance, Nova and Neutron, as the
// caller (the token is in the request context). openstack.Lookup and
// openstack.Static implement it.
type OpenStack interface {
	Image(ctx context.Context, ident string) (openstack.Image, error)
	Flavor(ctx context.Context, ident string) (openstack.Flavor, error)
	Keypair(ctx context.Context, name string) (openstack.Keypair, error)
	ExternalNetwork(ctx context.Context, ident string) (openstack.Network, error)
	FixedNetwork(ctx context.Context, ident string) (openstack.Network, error)
	FixedSubnet(ctx context.Context, ident string) (openstack.Subnet, error)
}

// Settings are the configuration values the use cases read.
type Settings struct {
	// MaxClustersPerProject is [quotas]/max_clusters_per_project.
	MaxClustersPerProject int
	// KubernetesAllowedNetworkDrivers is
	// [cluster_template]/kubernetes_allowed_network_drivers.
	KubernetesAllowedNetworkDrivers []string
	// KubernetesDefaultNetworkDriver is
	// [cluster_template]/kubernetes_default_network_driver.
	KubernetesDefaultNetworkDriver string
	// ServiceDownTime is [DEFAULT]/service_down_time.
	ServiceDownTime time.Duration
	// X509 are the [x509] options of certificate generation and signing;
	// nil means Magnum's defaults.
	X509 *certs.X509Options
}

// Conductor owns every state change of Magnum's resources. Use cases live
// in one file per resource (templates.go, clusters.go, nodegroups.go, …) as
// methods of Conductor.
type Conductor struct {
	DB        *db.DB
	Drivers   *driver.Registry
	OpenStack OpenStack
	// Certs stores the clusters' CAs and client certificates
	// ([certificates]/cert_manager_type). Nil means the x509keypair table.
	Certs    certs.Store
	Settings Settings
	Log      *slog.Logger
	// Now is the clock (UTC times are stored). Default time.Now.
	Now func() time.Time
	// NewUUID returns a random (version 4) UUID. Default crypto/rand.
	NewUUID func() string

	// busy holds the UUIDs of clusters with a driver operation in flight in
	// this process; the status poller skips them.
	busy sync.Map
	// jobs runs cluster creates after the API answered (createjobs.go).
	jobs createJobs
	// lockRowSeen is set once this process has seen the cluster lock row
	// (clusters_lock.go); clLock clears it when the row has gone.
	lockRowSeen atomic.Bool
	// quota spares creates the count of their project's clusters while
	// this process knows it is below the limit (clusters_quota.go).
	quota quotaBounds
}

// now returns the current time in UTC.
func (c *Conductor) now() time.Time {
	if c.Now != nil {
		return c.Now().UTC()
	}
	return time.Now().UTC()
}

// newUUID returns a new resource UUID.
func (c *Conductor) newUUID() string {
	if c.NewUUID != nil {
		return c.NewUUID()
	}
	return NewUUID()
}

// log returns the logger (never nil).
func (c *Conductor) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}

// NewUUID returns a random version 4 UUID in its canonical form.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
