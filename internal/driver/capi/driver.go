package capi

import (
	"context"
	"crypto/rand"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Name is the driver's default entry-point name. EntryPoints gives the five
// names magnum-cluster-api registers, which existing templates store.
const Name = "k8s_cluster_api"

// EntryPointOS maps magnum-cluster-api's entry-point names to the
// cluster_distro each provides (driver-capi.md § 2.3).
var EntryPointOS = map[string]string{
	"k8s_cluster_api_ubuntu":       "ubuntu",
	"k8s_cluster_api_ubuntu_focal": "ubuntu-focal",
	"k8s_cluster_api_debian":       "debian",
	"k8s_cluster_api_flatcar":      "flatcar",
	"k8s_cluster_api_rockylinux":   "rockylinux",
}

// supportedOS are the cluster_distro values the driver builds, sorted.
var supportedOS = []string{"debian", "flatcar", "rockylinux", "ubuntu", "ubuntu-focal"}

// AppCredentialStore creates and deletes Keystone application credentials
// (driver-capi.md § 6.2).
type AppCredentialStore interface {
	// Create makes an application credential owned by the caller, with the
	// caller's token, named name. It never grants admin.
	Create(ctx context.Context, cred driver.Credentials, name, description string) (AppCredential, error)
	// Delete removes an application credential by ID with the service's
	// own credentials. A credential that no longer exists is not an error.
	Delete(ctx context.Context, userID, id string) error
}

// ServerGroups manages the Nova server groups of a cluster.
type ServerGroups interface {
	// Ensure returns the ID of the server group named name, creating it
	// with the given policy when it does not exist.
	Ensure(ctx context.Context, cred driver.Credentials, name, policy string) (string, error)
	// Delete removes the server group named name; a missing group is not
	// an error.
	Delete(ctx context.Context, cred driver.Credentials, name string) error
}

// Resolver turns the names or IDs stored in Magnum rows into what the
// ClusterClass needs (flavor names, image and network IDs).
type Resolver interface {
	// FlavorName returns the Nova flavor name of a flavor name or ID.
	FlavorName(ctx context.Context, cred driver.Credentials, ref string) (string, error)
	// Image returns the Glance image (ID and hw_disk_bus) of a name or ID.
	Image(ctx context.Context, cred driver.Credentials, ref string) (Image, error)
	// NetworkID returns the Neutron network ID of a name or ID.
	NetworkID(ctx context.Context, cred driver.Credentials, ref string) (string, error)
	// SubnetID returns the Neutron subnet ID of a name or ID.
	SubnetID(ctx context.Context, cred driver.Credentials, ref string) (string, error)
}

// BlockStorage tells whether a project's cloud offers Cinder and lists its
// volume types, for the Cinder CSI add-on (driver-capi.md § 3.5).
type BlockStorage interface {
	// VolumeTypes returns the volume types the caller sees and whether the
	// catalog has a volumev3 or block-storage service at all (types is
	// then empty and the error nil when it has none).
	VolumeTypes(ctx context.Context, cred driver.Credentials) (types []VolumeType, available bool, err error)
}

// Options configures a Driver.
type Options struct {
	// Client reaches the management cluster. Its scheme must know the
	// client-go types and the Cluster API v1beta2 core, bootstrap and
	// control-plane kinds (see AddToScheme).
	Client client.Client
	// Namespace holds every object (DefaultNamespace when empty).
	Namespace string
	// Name is the driver's entry-point name (Name when empty).
	Name string
	// ClassVersion selects the ClusterClass of new clusters and upgrades
	// (DefaultClassVersion when empty).
	ClassVersion string
	// CAs returns the cluster's CAs and admin certificate, keyed
	// CAKeyKubernetes, CAKeyEtcd, CAKeyFrontProxy and CAKeyAdmin.
	CAs func(ctx context.Context, cluster magnum.Cluster) (map[string]certs.KeyPair, error)
	// AppCredentials creates and deletes application credentials.
	AppCredentials AppCredentialStore
	// ServerGroups manages Nova server groups; nil leaves serverGroupId
	// empty (no anti-affinity).
	ServerGroups ServerGroups
	// Resolver resolves flavors, images and networks; nil uses the stored
	// values unchanged.
	Resolver Resolver
	// LoadBalancers deletes the Octavia load balancers of a cluster before
	// its objects (§ 8.8 step 2); nil skips the step.
	LoadBalancers LoadBalancers
	// PreDeleteLBTimeout is how long a delete waits for those load
	// balancers to go ([cluster]/pre_delete_lb_timeout;
	// DefaultPreDeleteLBTimeout when zero or negative).
	PreDeleteLBTimeout time.Duration
	// LBPollInterval is how often the load balancers are listed meanwhile
	// (DefaultLBPollInterval when zero or negative).
	LBPollInterval time.Duration
	// Cloud is the clouds.yaml configuration.
	Cloud CloudConfig
	// Addons configures the add-on Secrets (CNI, cloud.conf, keystone
	// auth).
	Addons AddonConfig
	// BlockStorage finds Cinder and its volume types; nil installs no
	// Cinder CSI.
	BlockStorage BlockStorage
	// DefaultBootVolumeSize, DefaultBootVolumeType and DefaultVolumeType
	// are [cinder] defaults and Cinder's default volume type.
	DefaultBootVolumeSize int64
	DefaultBootVolumeType string
	DefaultVolumeType     string
	// UpdateGrace is how long TopologyReconciled may stay False with
	// reason ReconcileFailed before an update is UPDATE_FAILED (10 minutes
	// when zero).
	UpdateGrace time.Duration
	// DeleteTimeout is how long a deletion may make no progress before the
	// cluster is DELETE_FAILED (an hour when zero).
	DeleteTimeout time.Duration
	// Now returns the current time (time.Now when nil).
	Now func() time.Time
	// NewSuffix returns 5 random characters of [a-z0-9] for stack IDs and
	// application credential names (crypto/rand when nil).
	NewSuffix func() string
	// Timeout bounds each call to the management cluster (30 s when zero).
	Timeout time.Duration
}

// Driver is the Cluster API driver. It keeps no state of its own: every
// call reads what it needs from the management cluster.
type Driver struct {
	opts Options
}

var _ driver.Driver = (*Driver)(nil)

// New returns a Driver.
func New(opts Options) *Driver {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.Name == "" {
		opts.Name = Name
	}
	if opts.ClassVersion == "" {
		opts.ClassVersion = DefaultClassVersion
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewSuffix == nil {
		opts.NewSuffix = randomSuffix
	}
	if opts.UpdateGrace == 0 {
		opts.UpdateGrace = 10 * time.Minute
	}
	if opts.DeleteTimeout == 0 {
		opts.DeleteTimeout = time.Hour
	}
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.PreDeleteLBTimeout <= 0 {
		opts.PreDeleteLBTimeout = DefaultPreDeleteLBTimeout
	}
	if opts.LBPollInterval <= 0 {
		opts.LBPollInterval = DefaultLBPollInterval
	}
	return &Driver{opts: opts}
}

// EntryPoints returns one driver per magnum-cluster-api entry point
// (k8s_cluster_api_ubuntu, …), each providing its own cluster_distro and
// sharing d. Templates created for magnum-cluster-api store these names.
func (d *Driver) EntryPoints() []driver.Driver {
	out := make([]driver.Driver, 0, len(EntryPointOS))
	for _, name := range []string{
		"k8s_cluster_api_debian", "k8s_cluster_api_flatcar", "k8s_cluster_api_rockylinux",
		"k8s_cluster_api_ubuntu", "k8s_cluster_api_ubuntu_focal",
	} {
		out = append(out, &entryPoint{Driver: d, name: name, os: EntryPointOS[name]})
	}
	return out
}

// entryPoint is a Driver under another name providing one distro.
type entryPoint struct {
	*Driver
	name, os string
}

func (e *entryPoint) Name() string { return e.name }

func (e *entryPoint) Provides() []driver.Target {
	return []driver.Target{{ServerType: string(magnum.ServerTypeVM), OS: e.os, COE: "kubernetes"}}
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return d.opts.Name }

// Beta implements driver.Driver: the driver is not beta.
func (d *Driver) Beta() bool { return false }

// Provides implements driver.Driver: vm × (debian, flatcar, rockylinux,
// ubuntu, ubuntu-focal) × kubernetes.
func (d *Driver) Provides() []driver.Target {
	out := make([]driver.Target, len(supportedOS))
	for i, os := range supportedOS {
		out[i] = driver.Target{ServerType: string(magnum.ServerTypeVM), OS: os, COE: "kubernetes"}
	}
	return out
}

// Description implements driver.Driver.
func (d *Driver) Description() string {
	return "Kubernetes on OpenStack with Cluster API (ClusterClass " + ClassName(d.opts.ClassVersion) + ")"
}

// ValidateMasterSize implements driver.Driver with the base rule.
func (d *Driver) ValidateMasterSize(count int) error { return driver.ValidateMasterSize(count) }

// ValidateMasterResize implements driver.Driver: the control plane may be
// resized to an odd count ≥ 1 (magnum-cluster-api allows it).
func (d *Driver) ValidateMasterResize(count int) error { return driver.ValidateMasterSize(count) }

const suffixAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func randomSuffix() string {
	var b [5]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	for i := range b {
		b[i] = suffixAlphabet[int(b[i])%len(suffixAlphabet)]
	}
	return string(b[:])
}
