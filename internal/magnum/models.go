package magnum

import "time"

// The row types below mirror the tables of a Magnum 23.0.0 database (Alembic
// head b3e1cf4a2d5e) column for column. They are plain data: the db package
// reads and writes them, the conductor and the API work on them.
//
// Conventions:
//   - A nullable column whose NULL Magnum distinguishes from a value (it
//     renders null in the API) is a pointer; NULL reads as nil and nil
//     writes NULL.
//   - uuid, name, project_id and user_id are plain strings: Magnum always
//     writes them, NULL (only in hand-made rows) reads as "".
//   - JSON columns are typed Go values. A nil map or slice means the column
//     is NULL in the row; the db package writes nil as "{}" or "[]", as
//     Magnum's JSONEncoded types do.
//   - Times are UTC. CreatedAt is set on insert, UpdatedAt on every update
//     (nil until the first update).

// ClusterTemplate is a row of the cluster_template table (formerly baymodel).
type ClusterTemplate struct {
	ID                  int64
	UUID                string
	Name                string
	ProjectID           string
	UserID              string
	FlavorID            *string
	MasterFlavorID      *string
	KeypairID           *string
	ImageID             *string
	ExternalNetworkID   *string
	FixedNetwork        *string
	FixedSubnet         *string
	NetworkDriver       *string
	VolumeDriver        *string
	DNSNameserver       *string
	APIServerPort       *int
	DockerVolumeSize    *int
	DockerStorageDriver *string
	ClusterDistro       *string
	COE                 *string
	HTTPProxy           *string
	HTTPSProxy          *string
	NoProxy             *string
	RegistryEnabled     *bool
	Labels              map[string]string
	TLSDisabled         *bool
	Public              *bool
	ServerType          *string
	InsecureRegistry    *string
	MasterLBEnabled     *bool
	FloatingIPEnabled   *bool
	Hidden              *bool
	Tags                *string
	Driver              *string
	CreatedAt           time.Time
	UpdatedAt           *time.Time
}

// Cluster is a row of the cluster table (formerly bay). Node counts live in
// the cluster's nodegroups.
type Cluster struct {
	ID                  int64
	UUID                string
	Name                string
	ProjectID           string
	UserID              string
	ClusterTemplateID   string
	Keypair             *string
	DockerVolumeSize    *int
	Labels              map[string]string
	MasterFlavorID      *string
	FlavorID            *string
	StackID             *string
	APIAddress          *string
	Status              *Status
	StatusReason        *string
	HealthStatus        *string
	HealthStatusReason  map[string]string
	CreateTimeout       *int
	DiscoveryURL        *string
	COEVersion          *string
	ContainerVersion    *string
	CACertRef           *string
	MagnumCertRef       *string
	EtcdCACertRef       *string
	FrontProxyCACertRef *string
	FixedNetwork        *string
	FixedSubnet         *string
	FloatingIPEnabled   *bool
	MasterLBEnabled     *bool
	CreatedAt           time.Time
	UpdatedAt           *time.Time
}

// NodeTaint is one Kubernetes taint of a nodegroup, stored in
// nodegroup.node_taints as {"key": …, "value": …, "effect": …}. Magnum keeps
// the objects as the client sent them (string → string); extra keys survive
// a round trip.
type NodeTaint map[string]string

// NodeGroup is a row of the nodegroup table.
type NodeGroup struct {
	ID               int64
	UUID             string
	Name             string
	ClusterID        string // the cluster's uuid
	ProjectID        string
	DockerVolumeSize *int
	Labels           map[string]string
	FlavorID         *string
	ImageID          *string
	NodeAddresses    []string
	NodeCount        *int
	MaxNodeCount     *int
	MinNodeCount     *int
	Role             *string
	IsDefault        *bool
	StackID          *string
	Status           *Status
	StatusReason     *string
	Version          *string
	NodeLabels       map[string]string
	NodeTaints       []NodeTaint
	CreatedAt        time.Time
	UpdatedAt        *time.Time
}

// X509KeyPair is a row of the x509keypair table: a certificate and its
// encrypted PKCS#8 private key with the passphrase (cert_manager_type =
// x509keypair).
type X509KeyPair struct {
	ID                   int64
	UUID                 string
	ProjectID            string
	UserID               string
	Certificate          *string
	PrivateKey           *string
	Intermediates        *string
	PrivateKeyPassphrase *string
	CreatedAt            time.Time
	UpdatedAt            *time.Time
}

// Quota is a row of the quotas table.
type Quota struct {
	ID        int64
	ProjectID string
	Resource  string
	HardLimit int
	CreatedAt time.Time
	UpdatedAt *time.Time
}

// Federation is a row of the federation table.
type Federation struct {
	ID            int64
	UUID          string
	Name          string
	ProjectID     string
	HostClusterID *string
	MemberIDs     []string
	Status        *Status
	StatusReason  *string
	Properties    map[string]string
	CreatedAt     time.Time
	UpdatedAt     *time.Time
}

// MagnumService is a row of the magnum_service table: the heartbeat of one
// conductor (or reconciler) process.
type MagnumService struct {
	ID             int64
	Host           string
	Binary         string
	ReportCount    int
	Disabled       *bool
	DisabledReason *string
	LastSeenUp     *time.Time
	ForcedDown     *bool
	CreatedAt      time.Time
	UpdatedAt      *time.Time
}
