package conductor

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// ClusterResize is the request of POST /v1/clusters/{id}/actions/resize.
type ClusterResize struct {
	// NodeGroup is the nodegroup ident ("" = the default worker).
	NodeGroup     string
	NodeCount     int
	NodesToRemove []string
}

// clResolveNodeGroup returns the nodegroup a cluster action names: the
// default worker when ident is empty, else the nodegroup of the cluster
// with that id, uuid or name (404, 409).
func (c *Conductor) clResolveNodeGroup(ctx context.Context, rc *magnum.RequestContext, cl *magnum.Cluster, ident string) (*magnum.NodeGroup, error) {
	if ident == "" {
		return clDefaultWorker(ctx, &c.DB.Queries, cl.UUID)
	}
	scope := ScopeFor(rc, false)
	if rc != nil && rc.IsAdmin {
		scope = db.AllProjects
	}
	return c.GetNodeGroup(ctx, cl.UUID, ident, scope)
}

// ResizeCluster is the body of a resize after the cluster:resize policy
// (cluster_actions.py:99-141 and cluster_conductor.py:193-264): nodegroup
// resolution (404/409), min/max bounds for a worker nodegroup (400), the
// driver's master rule for the master nodegroup (400), the state guard
// (409), then the nodegroup's node_count is stored and the driver called.
//
// Deviation: Magnum refuses a resize in a wrong status silently after its
// 202; we answer 409 (pack §3.4).
func (c *Conductor) ResizeCluster(ctx context.Context, rc *magnum.RequestContext, cl *magnum.Cluster, in ClusterResize) error {
	ng, err := c.clResolveNodeGroup(ctx, rc, cl, in.NodeGroup)
	if err != nil {
		return err
	}
	if clStr(ng.Role) != magnum.RoleMaster {
		var max *int64
		if ng.MaxNodeCount != nil {
			m := int64(*ng.MaxNodeCount)
			max = &m
		}
		if err := magnum.ValidateResizeBounds(ng.Name, int64(in.NodeCount), int64(clInt(ng.MinNodeCount)), max); err != nil {
			return err
		}
	} else {
		t, err := c.clTemplateOf(ctx, cl)
		if err != nil {
			return err
		}
		drv, err := c.clDriverOf(t)
		if err != nil {
			return err
		}
		if err := drv.ValidateMasterResize(in.NodeCount); err != nil {
			return err
		}
	}
	oldCount := 0
	err = c.DB.InTx(ctx, func(tx *db.Tx) error {
		q := tx.ForUpdate()
		cur, err := q.GetClusterByUUID(ctx, cl.UUID, db.AllProjects)
		if err != nil {
			return clNotFound(err, cl.UUID)
		}
		if !magnum.CanResize(clStatus(cur.Status)) {
			return magnum.StateGuardConflict("Resizing", clStatus(cur.Status))
		}
		row, err := q.GetNodeGroupByUUID(ctx, cl.UUID, ng.UUID, db.AllProjects)
		if err != nil {
			if errors.Is(err, db.ErrNotFound) {
				return magnum.NodeGroupNotFound(ng.UUID)
			}
			return err
		}
		oldCount = clInt(row.NodeCount)
		n := in.NodeCount
		row.NodeCount = &n
		st := magnum.StatusUpdateInProgress
		row.Status = &st
		return tx.UpdateNodeGroup(ctx, row, "node_count", "status")
	})
	if err != nil {
		return err
	}
	c.log().InfoContext(ctx, "cluster resize", "cluster_uuid", cl.UUID, "nodegroup_uuid", ng.UUID, "node_count", in.NodeCount)
	req := driver.Resize{NodeGroupUUID: ng.UUID, NodeCount: in.NodeCount, NodesToRemove: in.NodesToRemove}
	c.clRunDriver(ctx, rc, cl.UUID, magnum.StatusUpdateFailed, func(ctx context.Context, drv driver.Driver, st driver.ClusterState) (driver.Update, error) {
		upd, err := drv.ResizeCluster(ctx, driver.CredentialsFrom(rc), st, req)
		if err != nil {
			c.clRestoreNodeCount(ctx, ng.UUID, cl.UUID, oldCount)
		}
		return upd, err
	})
	return nil
}

// ClusterUpgrade is the request of POST /v1/clusters/{id}/actions/upgrade.
type ClusterUpgrade struct {
	// Template is the template to upgrade to, already resolved.
	Template     *magnum.ClusterTemplate
	MaxBatchSize int
	// NodeGroup is the nodegroup ident ("" = the default worker).
	NodeGroup string
}

// UpgradeCluster is the body of an upgrade after the cluster:upgrade policy
// (cluster_actions.py:155-194, cluster_conductor.py:266-327): nodegroup
// resolution, a non-default nodegroup may only move to the cluster's own
// template (409), the state guard (400, as Magnum's RPC call answers),
// then the driver. A driver client error (*magnum.Error) is returned
// without changing any status; another driver error marks the cluster
// UPDATE_FAILED and is returned.
func (c *Conductor) UpgradeCluster(ctx context.Context, rc *magnum.RequestContext, cl *magnum.Cluster, in ClusterUpgrade) error {
	ng, err := c.clResolveNodeGroup(ctx, rc, cl, in.NodeGroup)
	if err != nil {
		return err
	}
	if !clBool(ng.IsDefault) && in.Template.UUID != cl.ClusterTemplateID {
		cur, err := c.clTemplateOf(ctx, cl)
		if err != nil {
			return err
		}
		return magnum.NodeGroupUpgradeTemplateMismatch(ng.Name, cur.Name)
	}
	st, err := c.clState(ctx, &c.DB.Queries, cl.UUID)
	if err != nil {
		return err
	}
	if !magnum.CanUpgrade(clStatus(st.Cluster.Status)) {
		return magnum.UpgradeStatusNotSupported(clStatus(st.Cluster.Status))
	}
	drv, err := c.clDriverOf(&st.Template)
	if err != nil {
		return err
	}
	req := driver.Upgrade{Template: *in.Template, MaxBatchSize: in.MaxBatchSize}
	if in.NodeGroup != "" {
		req.NodeGroupUUID = ng.UUID
	}
	upd, err := drv.UpgradeCluster(ctx, driver.CredentialsFrom(rc), st, req)
	if err != nil {
		var me *magnum.Error
		if errors.As(err, &me) {
			return err
		}
		c.clMarkFailed(ctx, cl.UUID, magnum.StatusUpdateFailed, err.Error())
		return fmt.Errorf("upgrade cluster %s: %w", cl.UUID, err)
	}
	c.log().InfoContext(ctx, "cluster upgrade", "cluster_uuid", cl.UUID, "template", in.Template.UUID)
	return c.SaveDriverUpdate(ctx, upd)
}

// clTemplateOf reads the template of a cluster, whatever its project.
func (c *Conductor) clTemplateOf(ctx context.Context, cl *magnum.Cluster) (*magnum.ClusterTemplate, error) {
	t, err := c.DB.GetClusterTemplateByUUID(ctx, cl.ClusterTemplateID, db.TemplateScope{Scope: db.AllProjects})
	if errors.Is(err, db.ErrNotFound) {
		return nil, magnum.ClusterTemplateNotFound(cl.ClusterTemplateID)
	}
	if err != nil {
		return nil, fmt.Errorf("get template of cluster %s: %w", cl.UUID, err)
	}
	return t, nil
}

// inProgressStatuses are the statuses the status poller follows
// (magnum/service/periodic.py:166), plus DELETE_COMPLETE: a deleted
// cluster whose rows could not be removed is retried.
var inProgressStatuses = []magnum.Status{magnum.StatusCreateInProgress, magnum.StatusUpdateInProgress,
	magnum.StatusDeleteInProgress, magnum.StatusRollbackInProgress, magnum.StatusDeleteComplete}

// errStaleUpdate drops a poll result read before a concurrent change.
var errStaleUpdate = errors.New("cluster changed while polling")

// ClustersInProgress lists the clusters of every project whose status is
// *_IN_PROGRESS (or DELETE_COMPLETE, not yet removed), by id.
func (c *Conductor) ClustersInProgress(ctx context.Context) ([]magnum.Cluster, error) {
	rows, err := c.DB.ListClusters(ctx, db.ClusterFilter{Scope: db.AllProjects, Statuses: inProgressStatuses}, db.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list clusters in progress: %w", err)
	}
	return rows, nil
}

// PollCluster asks the cluster's driver for its status (admin credentials,
// as Magnum's periodic task) and saves what changed. It returns the
// cluster as saved, or nil when a driver operation of this process is in
// flight for it. A driver error is returned and changes nothing. A cluster
// the driver reports DELETE_COMPLETE is returned with that status without
// a write: FinishDelete removes it.
func (c *Conductor) PollCluster(ctx context.Context, uuid string) (*magnum.Cluster, error) {
	if _, busy := c.busy.Load(uuid); busy {
		// A driver operation of this process is in flight: its result is
		// saved by the operation; poll on the next tick.
		return nil, nil
	}
	st, err := c.clState(ctx, &c.DB.Queries, uuid)
	if err != nil {
		return nil, err
	}
	return c.clPoll(ctx, st)
}

// PollPass is one pass of the status poller: the clusters in progress
// (ClustersInProgress) with their templates and nodegroups, read in three
// queries at its start instead of three per cluster.
type PollPass struct {
	// Clusters are the clusters to poll, by id.
	Clusters   []magnum.Cluster
	templates  map[string]*magnum.ClusterTemplate
	nodegroups map[string][]magnum.NodeGroup
}

// StartPollPass reads the clusters in progress, their templates (any
// project) and their nodegroups.
func (c *Conductor) StartPollPass(ctx context.Context) (*PollPass, error) {
	clusters, err := c.ClustersInProgress(ctx)
	if err != nil {
		return nil, err
	}
	p := &PollPass{Clusters: clusters}
	if len(clusters) == 0 {
		return p, nil
	}
	uuids := make([]string, 0, len(clusters))
	var tmplIDs []string
	for _, cl := range clusters {
		uuids = append(uuids, cl.UUID)
		if !slices.Contains(tmplIDs, cl.ClusterTemplateID) {
			tmplIDs = append(tmplIDs, cl.ClusterTemplateID)
		}
	}
	if p.templates, err = c.DB.GetClusterTemplatesByUUIDs(ctx, tmplIDs, db.TemplateScope{Scope: db.AllProjects}); err != nil {
		return nil, fmt.Errorf("read the templates of the clusters in progress: %w", err)
	}
	if p.nodegroups, err = c.DB.ListNodeGroupsOfClusters(ctx, uuids); err != nil {
		return nil, fmt.Errorf("read the nodegroups of the clusters in progress: %w", err)
	}
	return p, nil
}

// PollInPass is PollCluster on the rows the pass read (the driver's
// update is saved only if the rows are unchanged since, see clSave). A
// cluster whose template the pass did not find is read again, as
// PollCluster does.
func (c *Conductor) PollInPass(ctx context.Context, p *PollPass, cl *magnum.Cluster) (*magnum.Cluster, error) {
	t, ok := p.templates[cl.ClusterTemplateID]
	if !ok {
		return c.PollCluster(ctx, cl.UUID)
	}
	if _, busy := c.busy.Load(cl.UUID); busy {
		return nil, nil
	}
	return c.clPoll(ctx, driver.ClusterState{Cluster: *cl, Template: *t, NodeGroups: slices.Clone(p.nodegroups[cl.UUID])})
}

// clPoll is the driver's poll of st and the save of its update.
func (c *Conductor) clPoll(ctx context.Context, st driver.ClusterState) (*magnum.Cluster, error) {
	uuid := st.Cluster.UUID
	drv, err := c.clDriverOf(&st.Template)
	if err != nil {
		return nil, err
	}
	upd, err := drv.PollStatus(ctx, driver.AdminCredentials(), st)
	if err != nil {
		return nil, fmt.Errorf("poll cluster %s: %w", uuid, err)
	}
	if upd.Cluster != nil && clStatus(upd.Cluster.Status) == magnum.StatusDeleteComplete {
		// The rows go next (FinishDelete): writing the status first would
		// only cost a transaction.
		cl := *upd.Cluster
		return &cl, nil
	}
	before := clStatus(st.Cluster.Status)
	if err := c.clSave(ctx, upd, &before); err != nil {
		if errors.Is(err, errStaleUpdate) {
			// Polled again on the next tick.
			return &st.Cluster, nil
		}
		return nil, err
	}
	cl := st.Cluster
	if upd.Cluster != nil {
		cl = *upd.Cluster
		if old, now := clStatus(st.Cluster.Status), clStatus(cl.Status); old != now {
			c.log().InfoContext(ctx, "cluster status changed", "cluster_uuid", uuid, "from", string(old), "to", string(now))
		}
	}
	return &cl, nil
}

// FinishDelete is FinishDeletes of one cluster.
func (c *Conductor) FinishDelete(ctx context.Context, cl magnum.Cluster, hook func(context.Context, magnum.Cluster) error) error {
	return c.FinishDeletes(ctx, []magnum.Cluster{cl}, hook)
}

// FinishDeletes ends the deletion of clusters PollCluster (or PollInPass)
// returned as DELETE_COMPLETE: the hook of each (the certificates'
// removal), then, in one transaction, the nodegroups and rows of those
// still as their poll read them (a deleting status, the same updated_at;
// the others are seen again by the next poll). A cluster whose hook
// failed is saved DELETE_COMPLETE instead, which the poller keeps
// following; the hooks' errors are returned joined. Clusters already gone
// are not an error.
func (c *Conductor) FinishDeletes(ctx context.Context, cls []magnum.Cluster, hook func(context.Context, magnum.Cluster) error) error {
	if len(cls) == 0 {
		return nil
	}
	var errs []error
	hookFailed := map[string]bool{}
	polled := make(map[string]*magnum.Cluster, len(cls))
	uuids := make([]string, 0, len(cls))
	for i := range cls {
		cl := &cls[i]
		polled[cl.UUID] = cl
		uuids = append(uuids, cl.UUID)
		if hook == nil {
			continue
		}
		if err := hook(ctx, *cl); err != nil {
			hookFailed[cl.UUID] = true
			errs = append(errs, fmt.Errorf("delete hook of cluster %s: %w", cl.UUID, err))
		}
	}
	var destroyed []string
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		destroyed = destroyed[:0]
		rows, err := tx.ForUpdate().ListClusters(ctx, db.ClusterFilter{Scope: db.AllProjects, UUIDs: uuids}, db.ListOptions{})
		if err != nil {
			return err
		}
		for i := range rows {
			cur, cl := &rows[i], polled[rows[i].UUID]
			if st := clStatus(cur.Status); (st != magnum.StatusDeleteInProgress && st != magnum.StatusDeleteComplete) ||
				!sameTime(cur.UpdatedAt, cl.UpdatedAt) {
				continue
			}
			if hookFailed[cur.UUID] {
				done := magnum.StatusDeleteComplete
				cur.Status, cur.StatusReason = &done, cl.StatusReason
				if err := tx.UpdateCluster(ctx, cur, "status", "status_reason"); err != nil {
					return err
				}
				continue
			}
			destroyed = append(destroyed, cur.UUID)
		}
		return tx.DeleteClustersCascade(ctx, destroyed)
	})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("remove deleted clusters: %w", err))...)
	}
	for _, uuid := range destroyed {
		c.log().InfoContext(ctx, "cluster destroyed", "cluster_uuid", uuid)
	}
	return errors.Join(errs...)
}
