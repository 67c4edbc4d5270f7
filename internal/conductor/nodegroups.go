package conductor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// GetNodeGroup resolves a nodegroup of the cluster clusterUUID the way
// Magnum's NodeGroup.get does: an integer-like ident is a database id, a
// UUID-like ident a uuid, anything else a name (logic.md §13). Not found →
// 404 NodeGroupNotFound(ident); a name used twice → 409.
func (c *Conductor) GetNodeGroup(ctx context.Context, clusterUUID, ident string, scope db.Scope) (*magnum.NodeGroup, error) {
	var (
		ng  *magnum.NodeGroup
		err error
	)
	switch {
	case ngIsIntLike(ident):
		id, perr := strconv.ParseInt(strings.TrimSpace(ident), 10, 64)
		if perr != nil {
			return nil, magnum.NodeGroupNotFound(ident)
		}
		ng, err = c.DB.GetNodeGroupByID(ctx, clusterUUID, id, scope)
	case magnum.IsUUIDLike(ident):
		ng, err = c.DB.GetNodeGroupByUUID(ctx, clusterUUID, ident, scope)
	default:
		rows, lerr := c.DB.GetNodeGroupsByName(ctx, clusterUUID, ident, scope)
		if lerr != nil {
			return nil, fmt.Errorf("get nodegroup %s: %w", ident, lerr)
		}
		switch len(rows) {
		case 0:
			return nil, magnum.NodeGroupNotFound(ident)
		case 1:
			return &rows[0], nil
		}
		return nil, magnum.MultipleNodeGroups()
	}
	if errors.Is(err, db.ErrNotFound) {
		return nil, magnum.NodeGroupNotFound(ident)
	}
	if err != nil {
		return nil, fmt.Errorf("get nodegroup %s: %w", ident, err)
	}
	return ng, nil
}

// ngIsIntLike reports whether s is an integer for Python's strutils.is_int_like
// (int(s) succeeds and str(int(s)) == s).
func ngIsIntLike(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == s
}

// ListParams are the pagination parameters of a list request (Magnum's
// marker, limit, sort_key and sort_dir), already checked by the API.
type ListParams struct {
	Marker  string
	Limit   int
	SortKey string
	SortDir string
}

func (p ListParams) options() db.ListOptions {
	return db.ListOptions{Marker: p.Marker, Limit: p.Limit, SortKey: p.SortKey, SortDir: p.SortDir}
}

// NodeGroupScopeFor is the scope of nodegroup queries: admins see every
// project's nodegroups, others their project's (Magnum's nodegroup queries
// filter on project_id unless is_admin; a token without a project matches
// nothing).
func NodeGroupScopeFor(rc *magnum.RequestContext) db.Scope {
	if rc != nil && rc.IsAdmin {
		return db.AllProjects
	}
	if rc == nil || rc.ProjectID == "" {
		return db.Scope{UserID: "\x00no-project"}
	}
	return db.ProjectScope(rc.ProjectID)
}

// ListNodeGroups lists the nodegroups of one cluster with Magnum's
// pagination, for the caller rc (non-admins: their project's nodegroups
// only), optionally with exactly the given role. An unknown marker → 404
// NodeGroupNotFound(marker); a bad sort key → 400.
func (c *Conductor) ListNodeGroups(ctx context.Context, rc *magnum.RequestContext, clusterUUID, role string, p ListParams) ([]magnum.NodeGroup, error) {
	scope := NodeGroupScopeFor(rc)
	f := db.NodeGroupFilter{ClusterID: clusterUUID, Role: role}
	if !scope.AllProjects {
		if scope.ProjectID == "" {
			return nil, nil
		}
		f.ProjectID = scope.ProjectID
	}
	o := p.options()
	if o.Marker != "" {
		// Magnum: the marker is looked up inside the cluster (NodeGroup.get)
		// before the list, with the caller's scope.
		if _, err := c.GetNodeGroup(ctx, clusterUUID, o.Marker, scope); err != nil {
			return nil, err
		}
	}
	rows, err := c.DB.ListNodeGroups(ctx, f, o)
	if err != nil {
		return nil, ngListError(err, func(m string) error { return magnum.NodeGroupNotFound(m) }, o)
	}
	return rows, nil
}

// ngListError maps the db package's pagination errors to Magnum's answers.
func ngListError(err error, notFound func(marker string) error, o db.ListOptions) error {
	var sk *db.InvalidSortKeyError
	switch {
	case errors.As(err, &sk):
		return magnum.InvalidSortKey(sk.Key)
	case errors.Is(err, db.ErrInvalidSortDir):
		return magnum.InvalidSortDir(o.SortDir)
	case errors.Is(err, db.ErrNotFound):
		return notFound(o.Marker)
	}
	return err
}

// NodeGroupNameUsed reports whether a nodegroup of the cluster (any
// project) already has exactly this name, as Magnum's comparison of
// cluster.nodegroups names does.
func (c *Conductor) NodeGroupNameUsed(ctx context.Context, clusterUUID, name string) (bool, error) {
	rows, err := c.DB.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: clusterUUID}, db.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("list nodegroups of %s: %w", clusterUUID, err)
	}
	for _, ng := range rows {
		if ng.Name == name {
			return true, nil
		}
	}
	return false, nil
}

// ClusterTemplateOf returns the template a cluster was built from (any
// project: the cluster's reference is trusted).
func (c *Conductor) ClusterTemplateOf(ctx context.Context, cl *magnum.Cluster) (*magnum.ClusterTemplate, error) {
	t, err := c.DB.GetClusterTemplateByUUID(ctx, cl.ClusterTemplateID, db.TemplateScope{Scope: db.AllProjects})
	if errors.Is(err, db.ErrNotFound) {
		return nil, magnum.ClusterTemplateNotFound(cl.ClusterTemplateID)
	}
	if err != nil {
		return nil, fmt.Errorf("get template of cluster %s: %w", cl.UUID, err)
	}
	return t, nil
}

// CheckFlavorRootVolume is Magnum's validate_flavor_root_volume_size: when
// the cluster label boot_volume_size (default 0) is not positive, the flavor
// must exist (400 FlavorNotFound, a null flavor included) and have a root
// disk (400 FlavorZeroRootVolumeNotSupported).
//
// Magnum: magnum/api/attr_validator.py:181-201.
func (c *Conductor) CheckFlavorRootVolume(ctx context.Context, flavorID *string, clusterLabels map[string]string) error {
	boot := 0
	if v, ok := clusterLabels["boot_volume_size"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			// Magnum: strutils.validate_integer raises a ValueError that
			// escapes as a 500 (a 400 here, as every bad input).
			return magnum.ServerError("boot_volume_size must be an integer")
		}
		boot = n
	}
	if boot > 0 {
		return nil
	}
	if c.OpenStack == nil {
		return nil
	}
	ident := "None"
	if flavorID != nil {
		ident = *flavorID
	}
	f, err := c.OpenStack.Flavor(ctx, ident)
	if err != nil {
		return err
	}
	if f.Disk == 0 {
		return magnum.FlavorZeroRootVolumeNotSupported()
	}
	return nil
}

// driverFor returns the driver of a cluster: the template's stored driver
// name, else the driver providing the template's (server_type, distro,
// coe), as Magnum's get_driver_for_cluster does.
func (c *Conductor) driverFor(ctx context.Context, cl *magnum.Cluster) (driver.Driver, *magnum.ClusterTemplate, error) {
	t, err := c.ClusterTemplateOf(ctx, cl)
	if err != nil {
		return nil, nil, err
	}
	if c.Drivers == nil {
		return nil, t, errors.New("no driver registry")
	}
	if t.Driver != nil && *t.Driver != "" {
		d, err := c.Drivers.Lookup(*t.Driver)
		return d, t, err
	}
	d, err := c.Drivers.ForTarget(ngDeref(t.ServerType), ngDeref(t.ClusterDistro), ngDeref(t.COE))
	return d, t, err
}

func ngDeref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ngStateConflict is the synchronous refusal of a nodegroup operation in a
// status the conductor does not accept.
//
// Deviation: Magnum casts the operation and its conductor drops it
// silently (NotSupported '<op> when nodegroup status is "<S>"', logged
// only); we answer 409 with that text before writing anything (pack §3.4).
func ngStateConflict(op string, status magnum.Status) *magnum.Error {
	return magnum.NewError(http.StatusConflict, "NotSupported", "%s when nodegroup status is \"%s\" is not supported.", op, status)
}

// clusterState loads what a driver call needs.
func (c *Conductor) clusterState(ctx context.Context, q *db.Queries, cl *magnum.Cluster, t *magnum.ClusterTemplate) (driver.ClusterState, error) {
	ngs, err := q.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: cl.UUID}, db.ListOptions{})
	if err != nil {
		return driver.ClusterState{}, fmt.Errorf("list nodegroups of %s: %w", cl.UUID, err)
	}
	return driver.ClusterState{Cluster: *cl, Template: *t, NodeGroups: ngs}, nil
}

// CreateNodeGroup stores a new nodegroup built by the API (validated, with
// its uuid, cluster_id and project_id set) and starts it with the cluster's
// driver: the nodegroup goes CREATE_IN_PROGRESS and the cluster
// UPDATE_IN_PROGRESS; a driver failure leaves the nodegroup CREATE_FAILED
// and the cluster UPDATE_FAILED, as Magnum's nodegroup conductor does. ng's
// ID and CreatedAt are set. A status sent by the client outside the states
// Magnum's conductor accepts is refused with 409 before anything is written.
//
// Magnum: magnum/conductor/handlers/nodegroup_conductor.py:68-90.
func (c *Conductor) CreateNodeGroup(ctx context.Context, rc *magnum.RequestContext, cl *magnum.Cluster, ng *magnum.NodeGroup) error {
	if ng.Status != nil && !magnum.CanCreateNodeGroup(*ng.Status) {
		return ngStateConflict("nodegroup_create", *ng.Status)
	}
	row := *ng
	row.Status = ngStatusPtr(magnum.StatusCreateInProgress)
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		q := tx.ForUpdate()
		cur, err := q.GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
		if err != nil {
			return fmt.Errorf("lock cluster %s: %w", cl.UUID, err)
		}
		used, err := nodeGroupNameUsed(ctx, q, cl.UUID, ng.Name)
		if err != nil {
			return err
		}
		if used {
			return magnum.NodeGroupAlreadyExists(ng.Name, cl.Name)
		}
		if err := q.CreateNodeGroup(ctx, &row); err != nil {
			if errors.Is(err, db.ErrDuplicate) {
				return magnum.NodeGroupAlreadyExists(ng.Name, cl.Name)
			}
			return fmt.Errorf("insert nodegroup: %w", err)
		}
		cur.Status = ngStatusPtr(magnum.StatusUpdateInProgress)
		if err := q.UpdateCluster(ctx, cur, "status"); err != nil {
			return fmt.Errorf("update cluster %s: %w", cl.UUID, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	ng.ID, ng.CreatedAt = row.ID, row.CreatedAt
	c.runNodeGroupOp(ctx, rc, cl.UUID, row, "create")
	return nil
}

func nodeGroupNameUsed(ctx context.Context, q *db.Queries, clusterUUID, name string) (bool, error) {
	rows, err := q.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: clusterUUID}, db.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("list nodegroups of %s: %w", clusterUUID, err)
	}
	for _, r := range rows {
		if r.Name == name {
			return true, nil
		}
	}
	return false, nil
}

// NodeGroupPatchColumns are the nodegroup columns a PATCH may change.
var NodeGroupPatchColumns = []string{"min_node_count", "max_node_count", "node_labels", "node_taints"}

// UpdateNodeGroup writes the patched columns of ng (a subset of
// NodeGroupPatchColumns) and starts the update with the cluster's driver
// (nodegroup and cluster UPDATE_IN_PROGRESS; UPDATE_FAILED on a driver
// error). A nodegroup whose stored status the conductor refuses is a 409.
//
// Magnum: magnum/conductor/handlers/nodegroup_conductor.py:92-113.
func (c *Conductor) UpdateNodeGroup(ctx context.Context, rc *magnum.RequestContext, cl *magnum.Cluster, ng *magnum.NodeGroup, cols []string) error {
	for _, col := range cols {
		if !ngContains(NodeGroupPatchColumns, col) {
			return fmt.Errorf("update nodegroup: column %s is not patchable", col)
		}
	}
	var row magnum.NodeGroup
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		q := tx.ForUpdate()
		cur, err := q.GetNodeGroupByUUID(ctx, cl.UUID, ng.UUID, db.AllProjects)
		if errors.Is(err, db.ErrNotFound) {
			return magnum.NodeGroupNotFound(ng.UUID)
		}
		if err != nil {
			return fmt.Errorf("lock nodegroup %s: %w", ng.UUID, err)
		}
		if cur.Status != nil && !magnum.CanUpdateNodeGroup(*cur.Status) {
			return ngStateConflict("nodegroup_update", *cur.Status)
		}
		cur.MinNodeCount, cur.MaxNodeCount = ng.MinNodeCount, ng.MaxNodeCount
		cur.NodeLabels, cur.NodeTaints = ng.NodeLabels, ng.NodeTaints
		write := append([]string(nil), cols...)
		cur.Status = ngStatusPtr(magnum.StatusUpdateInProgress)
		write = append(write, "status")
		if err := q.UpdateNodeGroup(ctx, cur, write...); err != nil {
			return fmt.Errorf("update nodegroup %s: %w", ng.UUID, err)
		}
		clRow, err := q.GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
		if err != nil {
			return fmt.Errorf("lock cluster %s: %w", cl.UUID, err)
		}
		clRow.Status = ngStatusPtr(magnum.StatusUpdateInProgress)
		if err := q.UpdateCluster(ctx, clRow, "status"); err != nil {
			return fmt.Errorf("update cluster %s: %w", cl.UUID, err)
		}
		row = *cur
		return nil
	})
	if err != nil {
		return err
	}
	c.runNodeGroupOp(ctx, rc, cl.UUID, row, "update")
	return nil
}

// DeleteNodeGroup starts deleting a non-default nodegroup: it goes
// DELETE_IN_PROGRESS and the cluster UPDATE_IN_PROGRESS; the row is removed
// when the driver reports the deletion done. There is no state guard.
//
// Magnum: magnum/conductor/handlers/nodegroup_conductor.py:115-133.
func (c *Conductor) DeleteNodeGroup(ctx context.Context, rc *magnum.RequestContext, cl *magnum.Cluster, ng *magnum.NodeGroup) error {
	if ng.IsDefault != nil && *ng.IsDefault {
		return magnum.DeletingDefaultNGNotSupported()
	}
	var row magnum.NodeGroup
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		q := tx.ForUpdate()
		cur, err := q.GetNodeGroupByUUID(ctx, cl.UUID, ng.UUID, db.AllProjects)
		if errors.Is(err, db.ErrNotFound) {
			return magnum.NodeGroupNotFound(ng.UUID)
		}
		if err != nil {
			return fmt.Errorf("lock nodegroup %s: %w", ng.UUID, err)
		}
		cur.Status = ngStatusPtr(magnum.StatusDeleteInProgress)
		if err := q.UpdateNodeGroup(ctx, cur, "status"); err != nil {
			return fmt.Errorf("update nodegroup %s: %w", ng.UUID, err)
		}
		clRow, err := q.GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
		if err != nil {
			return fmt.Errorf("lock cluster %s: %w", cl.UUID, err)
		}
		clRow.Status = ngStatusPtr(magnum.StatusUpdateInProgress)
		if err := q.UpdateCluster(ctx, clRow, "status"); err != nil {
			return fmt.Errorf("update cluster %s: %w", cl.UUID, err)
		}
		row = *cur
		return nil
	})
	if err != nil {
		return err
	}
	c.runNodeGroupOp(ctx, rc, cl.UUID, row, "delete")
	return nil
}

// nodeGroupOpTimeout bounds the driver call of a nodegroup operation and the
// recording of its outcome.
const nodeGroupOpTimeout = 2 * time.Minute

// runNodeGroupOp calls the cluster's driver for a nodegroup operation whose
// rows are already written and records the outcome. Like Magnum's cast, the
// client has its answer already: failures end in *_FAILED statuses with the
// error as status_reason, and are logged.
func (c *Conductor) runNodeGroupOp(ctx context.Context, rc *magnum.RequestContext, clusterUUID string, ng magnum.NodeGroup, op string) {
	// The rows are committed: finish (or record the failure) even if the
	// client goes away, within a bound.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nodeGroupOpTimeout)
	defer cancel()
	fail := func(cause error) {
		c.log().Error("nodegroup operation failed", "operation", op, "cluster_uuid", clusterUUID,
			"nodegroup_uuid", ng.UUID, "error", cause.Error())
		if err := c.failNodeGroupOp(ctx, clusterUUID, ng.UUID, op, cause.Error()); err != nil {
			c.log().Error("record nodegroup failure", "cluster_uuid", clusterUUID, "nodegroup_uuid", ng.UUID, "error", err.Error())
		}
	}
	cl, err := c.DB.GetClusterByUUID(ctx, clusterUUID, db.AllProjects)
	if err != nil {
		fail(err)
		return
	}
	d, t, err := c.driverFor(ctx, cl)
	if err != nil {
		fail(err)
		return
	}
	st, err := c.clusterState(ctx, &c.DB.Queries, cl, t)
	if err != nil {
		fail(err)
		return
	}
	cred := driver.CredentialsFrom(rc)
	var up driver.Update
	switch op {
	case "create":
		up, err = d.CreateNodeGroup(ctx, cred, st, ng)
	case "update":
		up, err = d.UpdateNodeGroup(ctx, cred, st, ng)
	case "delete":
		up, err = d.DeleteNodeGroup(ctx, cred, st, ng)
	}
	if err != nil {
		fail(err)
		return
	}
	if err := c.SaveDriverUpdate(ctx, up); err != nil {
		fail(err)
	}
}

// failNodeGroupOp marks the nodegroup <OP>_FAILED and the cluster
// UPDATE_FAILED with reason.
func (c *Conductor) failNodeGroupOp(ctx context.Context, clusterUUID, ngUUID, op, reason string) error {
	failed := map[string]magnum.Status{
		"create": magnum.StatusCreateFailed, "update": magnum.StatusUpdateFailed, "delete": magnum.StatusDeleteFailed,
	}[op]
	return c.DB.InTx(ctx, func(tx *db.Tx) error {
		q := tx.ForUpdate()
		ng, err := q.GetNodeGroupByUUID(ctx, clusterUUID, ngUUID, db.AllProjects)
		if err == nil {
			ng.Status, ng.StatusReason = ngStatusPtr(failed), &reason
			if err := q.UpdateNodeGroup(ctx, ng, "status", "status_reason"); err != nil {
				return err
			}
		} else if !errors.Is(err, db.ErrNotFound) {
			return err
		}
		cl, err := q.GetClusterByUUID(ctx, clusterUUID, db.AllProjects)
		if errors.Is(err, db.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		cl.Status = ngStatusPtr(magnum.StatusUpdateFailed)
		return q.UpdateCluster(ctx, cl, "status")
	})
}

func ngStatusPtr(s magnum.Status) *magnum.Status { return &s }

func ngContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
