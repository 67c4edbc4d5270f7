package driver

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Target is one cluster type a driver provides: Magnum's
// {server_type, os, coe} entry of a driver's provides list. OS is the
// template's cluster_distro (the Glance image's os_distro).
type Target struct {
	ServerType string `json:"server_type"`
	OS         string `json:"os"`
	COE        string `json:"coe"`
}

// String renders the tuple as Magnum does in ClusterTypeNotSupported:
// "(vm, ubuntu, kubernetes)".
func (t Target) String() string {
	return fmt.Sprintf("(%s, %s, %s)", t.ServerType, t.OS, t.COE)
}

func (t Target) compare(u Target) int {
	if c := cmp.Compare(t.ServerType, u.ServerType); c != 0 {
		return c
	}
	if c := cmp.Compare(t.OS, u.OS); c != 0 {
		return c
	}
	return cmp.Compare(t.COE, u.COE)
}

// Credentials is the request-scoped identity a driver acts with: the caller's
// token and catalog for operations started by a user, or none (Admin true)
// for the periodic status and health poll, which Magnum runs with an admin
// context and service credentials. A driver never keeps it beyond the call.
type Credentials struct {
	// AuthToken is the user's Keystone token ("" for the periodic poll).
	// Never logged: String and LogValue redact it.
	AuthToken string
	// UserID and ProjectID identify the caller.
	UserID    string
	ProjectID string
	// ServiceCatalog is the token's catalog (JSON), used to find endpoints.
	ServiceCatalog []byte
	// Admin is true for the periodic poll's admin context
	// (make_admin_context(all_tenants=True) in Magnum): no token, the
	// driver uses the service's own credentials.
	Admin bool
}

// CredentialsFrom builds the Credentials of a request context.
func CredentialsFrom(rc *magnum.RequestContext) Credentials {
	if rc == nil {
		return Credentials{}
	}
	return Credentials{
		AuthToken:      rc.AuthToken,
		UserID:         rc.UserID,
		ProjectID:      rc.ProjectID,
		ServiceCatalog: rc.ServiceCatalog,
	}
}

// AdminCredentials are the Credentials of the periodic poll.
func AdminCredentials() Credentials { return Credentials{Admin: true} }

// String implements fmt.Stringer without the token.
func (c Credentials) String() string {
	return fmt.Sprintf("Credentials{UserID:%q ProjectID:%q Admin:%t Token:%s}",
		c.UserID, c.ProjectID, c.Admin, redacted(c.AuthToken))
}

// GoString implements fmt.GoStringer without the token.
func (c Credentials) GoString() string { return c.String() }

// LogValue implements slog.LogValuer without the token.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("user_id", c.UserID),
		slog.String("project_id", c.ProjectID),
		slog.Bool("admin", c.Admin),
	)
}

func redacted(s string) string {
	if s == "" {
		return `""`
	}
	return "***"
}

// ClusterState is the snapshot of the rows a driver works on: the cluster,
// its template (looked up by cluster_template_id) and every nodegroup of the
// cluster. Drivers treat it as read-only; changes come back in an Update.
type ClusterState struct {
	Cluster    magnum.Cluster
	Template   magnum.ClusterTemplate
	NodeGroups []magnum.NodeGroup
}

// NodeGroup returns the nodegroup with the given UUID.
func (s *ClusterState) NodeGroup(uuid string) (magnum.NodeGroup, bool) {
	for _, ng := range s.NodeGroups {
		if ng.UUID == uuid {
			return ng, true
		}
	}
	return magnum.NodeGroup{}, false
}

// Update is what a driver call changed: full copies of the rows the
// conductor must save, and the nodegroup rows to destroy. The zero Update
// means "nothing changed".
type Update struct {
	// Cluster is the new cluster row, nil when unchanged.
	Cluster *magnum.Cluster
	// NodeGroups are the changed (or new) nodegroup rows.
	NodeGroups []magnum.NodeGroup
	// DeletedNodeGroups are UUIDs of nodegroup rows to destroy (a
	// non-default nodegroup that reached DELETE_COMPLETE).
	DeletedNodeGroups []string
}

// Changed reports whether the update asks for any write.
func (u Update) Changed() bool {
	return u.Cluster != nil || len(u.NodeGroups) > 0 || len(u.DeletedNodeGroups) > 0
}

// Resize is the request of POST /v1/clusters/{id}/actions/resize.
type Resize struct {
	// NodeGroupUUID is the resized nodegroup (the default worker when the
	// request names none; the conductor resolves it).
	NodeGroupUUID string
	// NodeCount is the requested size. The conductor has already stored it
	// in the nodegroup row, as Magnum's conductor does before calling the
	// driver.
	NodeCount int
	// NodesToRemove are the servers to remove first, as sent by the client
	// (Nova server UUIDs for the autoscaler and magnum-auto-healer),
	// unvalidated.
	NodesToRemove []string
}

// Upgrade is the request of POST /v1/clusters/{id}/actions/upgrade.
type Upgrade struct {
	// Template is the template to upgrade to.
	Template magnum.ClusterTemplate
	// MaxBatchSize is the request's max_batch_size (0 when absent).
	MaxBatchSize int
	// NodeGroupUUID is the request's nodegroup, resolved ("" when absent).
	NodeGroupUUID string
}

// Driver builds and tracks clusters of the types it provides. It is the
// re-implementation of Magnum's magnum.drivers.common.driver.Driver, a
// published contract (driver-capi.md § 2).
//
// Conventions for every mutating method:
//   - the conductor has already applied Magnum's state guards and written the
//     rows Magnum writes before calling its driver (driver-capi.md § 2.2
//     "Before"); the state passed in reflects that;
//   - the method only declares the desired state and returns at once, with
//     the rows moved to their *_IN_PROGRESS status in the Update; it never
//     waits for the infrastructure;
//   - an error is either a *magnum.Error (a synchronous client error, such
//     as 400 NotSupported) or an internal error; for Magnum's RPC casts the
//     conductor turns it into *_FAILED with the error text as status_reason;
//   - completion (or failure) is reported later by PollStatus.
//
// Implementations are safe for concurrent use.
type Driver interface {
	// Name is the entry-point name stored in cluster_template.driver.
	Name() string
	// Beta reports whether the driver must be listed in
	// [drivers]/enabled_beta_drivers to be chosen by cluster type.
	Beta() bool
	// Provides lists the (server_type, os, coe) tuples the driver builds.
	Provides() []Target
	// Description is a one-line human description for `driver list`.
	Description() string

	// ValidateMasterSize checks master_count on cluster create (base rule:
	// odd and ≥ 1, see ValidateMasterSize).
	ValidateMasterSize(count int) error
	// ValidateMasterResize checks a resize of the master nodegroup (the base
	// driver always refuses with MasterNGResizeNotSupported).
	ValidateMasterResize(count int) error

	// CreateCluster starts building a new cluster (rows in
	// CREATE_IN_PROGRESS). It sets stack_id on the cluster and nodegroups.
	// timeout is create_timeout (0 = none).
	CreateCluster(ctx context.Context, cred Credentials, st ClusterState, timeout time.Duration) (Update, error)
	// UpdateCluster applies a PATCH of the cluster's node_count: the default
	// worker nodegroup row already carries the new count.
	UpdateCluster(ctx context.Context, cred Credentials, st ClusterState) (Update, error)
	// DeleteCluster starts deleting the cluster.
	DeleteCluster(ctx context.Context, cred Credentials, st ClusterState) (Update, error)
	// ResizeCluster resizes one nodegroup, removing NodesToRemove first.
	ResizeCluster(ctx context.Context, cred Credentials, st ClusterState, req Resize) (Update, error)
	// UpgradeCluster moves the cluster (or one nodegroup) to a template.
	UpgradeCluster(ctx context.Context, cred Credentials, st ClusterState, req Upgrade) (Update, error)

	// CreateNodeGroup starts building ng (its row is in st.NodeGroups, or
	// ng is new and not yet in st).
	CreateNodeGroup(ctx context.Context, cred Credentials, st ClusterState, ng magnum.NodeGroup) (Update, error)
	// UpdateNodeGroup applies a PATCH of min/max counts, labels or taints.
	UpdateNodeGroup(ctx context.Context, cred Credentials, st ClusterState, ng magnum.NodeGroup) (Update, error)
	// DeleteNodeGroup starts deleting a non-default nodegroup.
	DeleteNodeGroup(ctx context.Context, cred Credentials, st ClusterState, ng magnum.NodeGroup) (Update, error)

	// PollStatus is update_cluster_status and the health monitor in one:
	// it reports what changed since the rows in st were written — statuses
	// of the cluster and its nodegroups, status_reason, api_address,
	// coe_version, node addresses, node counts, health_status and
	// health_status_reason. It is called with AdminCredentials by the
	// periodic poll or the reconciler, for clusters in any status.
	PollStatus(ctx context.Context, cred Credentials, st ClusterState) (Update, error)

	// CanRotateCA reports (nil) whether the driver can rotate the CAs of
	// this cluster, so that the conductor refuses with the returned error
	// (400 CARotationNotSupported) before regenerating any certificate.
	CanRotateCA(st ClusterState) error
	// RotateCA rolls the cluster onto the CAs the conductor has just
	// generated (cluster → UPDATE_IN_PROGRESS).
	RotateCA(ctx context.Context, cred Credentials, st ClusterState) (Update, error)
	// RotateCredential replaces the cluster's cloud credential (for CAPI,
	// the application credential). Not supported → 400
	// CredentialRotationNotSupported. Magnum changes no status.
	RotateCredential(ctx context.Context, cred Credentials, st ClusterState) (Update, error)
}
