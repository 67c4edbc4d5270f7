package conductor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// ScopeFor returns the database scope of a caller: every project when
// allProjects (the handler evaluated an *_all_projects rule for an admin),
// otherwise the caller's project, or the caller's user when the token has
// no project (Magnum's _add_tenant_filters).
func ScopeFor(rc *magnum.RequestContext, allProjects bool) db.Scope {
	if allProjects {
		return db.AllProjects
	}
	if rc == nil {
		return db.Scope{UserID: "\x00no-caller"}
	}
	if rc.ProjectID != "" {
		return db.ProjectScope(rc.ProjectID)
	}
	if rc.UserID == "" {
		// Magnum filters on user_id = NULL, which matches no row.
		return db.Scope{UserID: "\x00no-user"}
	}
	return db.Scope{UserID: rc.UserID}
}

// GetCluster looks a cluster up by UUID (when ident is UUID-like) or by
// name, within scope: none → 404 ClusterNotFound (a cluster of another
// project is invisible, hence also 404), several names → 409.
//
// Magnum: magnum/api/utils.py:99 (get_resource).
func (c *Conductor) GetCluster(ctx context.Context, ident string, scope db.Scope) (*magnum.Cluster, error) {
	return clGet(ctx, &c.DB.Queries, ident, scope)
}

func clGet(ctx context.Context, q *db.Queries, ident string, scope db.Scope) (*magnum.Cluster, error) {
	if magnum.IsUUIDLike(ident) {
		cl, err := q.GetClusterByUUID(ctx, ident, scope)
		if errors.Is(err, db.ErrNotFound) {
			return nil, magnum.ClusterNotFound(ident)
		}
		if err != nil {
			return nil, fmt.Errorf("get cluster %s: %w", ident, err)
		}
		return cl, nil
	}
	rows, err := q.GetClustersByName(ctx, ident, scope)
	if err != nil {
		return nil, fmt.Errorf("get cluster %s: %w", ident, err)
	}
	switch len(rows) {
	case 0:
		return nil, magnum.ClusterNotFound(ident)
	case 1:
		return &rows[0], nil
	}
	return nil, magnum.MultipleClusters()
}

// ClusterPage is one page of a cluster list with what the views need: the
// nodegroups of every listed cluster and the templates they reference.
type ClusterPage struct {
	Clusters []magnum.Cluster
	// NodeGroups are keyed by cluster uuid.
	NodeGroups map[string][]magnum.NodeGroup
	// Templates are keyed by template uuid.
	Templates map[string]magnum.ClusterTemplate
}

// ListClusters lists the clusters of scope with Magnum's pagination
// (unknown marker → 404 ClusterNotFound; bad sort key → 400), then reads
// the nodegroups of the page in one query and the referenced templates in
// one query: a template the caller cannot see (tscope) fails the whole list
// with 404 ClusterTemplateNotFound, as in Magnum.
func (c *Conductor) ListClusters(ctx context.Context, rc *magnum.RequestContext, allProjects bool, p ListParams) (*ClusterPage, error) {
	return c.listClusterPage(ctx, c.DB, rc, allProjects, p)
}

// clListStore is what a cluster list reads: three queries per page,
// whatever its size.
type clListStore interface {
	GetClusterByUUID(ctx context.Context, uuid string, s db.Scope) (*magnum.Cluster, error)
	ListClusters(ctx context.Context, f db.ClusterFilter, o db.ListOptions) ([]magnum.Cluster, error)
	ListNodeGroupsOfClusters(ctx context.Context, clusterIDs []string) (map[string][]magnum.NodeGroup, error)
	GetClusterTemplatesByUUIDs(ctx context.Context, uuids []string, s db.TemplateScope) (map[string]*magnum.ClusterTemplate, error)
}

// ListClusterView is ListClusters for the API's list views: the same
// scope, pagination, errors and three reads, but the clusters carry only
// the columns the summary (detail false) or detail view shows, and the
// nodegroups only their cluster_id, role, node_count and (detail)
// node_addresses.
func (c *Conductor) ListClusterView(ctx context.Context, rc *magnum.RequestContext, allProjects bool, p ListParams, detail bool) (*ClusterPage, error) {
	view := db.ClusterViewSummary
	if detail {
		view = db.ClusterViewDetail
	}
	return c.listClusterPageView(ctx, c.DB, rc, allProjects, p, view)
}

// clListViewStore is the narrower reads of a list view; a clListStore
// without them serves full rows instead.
type clListViewStore interface {
	ListClustersView(ctx context.Context, f db.ClusterFilter, o db.ListOptions, view db.ClusterView) ([]magnum.Cluster, error)
	ListNodeGroupSizesOfClusters(ctx context.Context, clusterIDs []string, withAddresses bool) (map[string][]magnum.NodeGroup, error)
}

func (c *Conductor) listClusterPage(ctx context.Context, store clListStore, rc *magnum.RequestContext, allProjects bool, p ListParams) (*ClusterPage, error) {
	return c.listClusterPageView(ctx, store, rc, allProjects, p, 0)
}

// listClusterPageView reads a page; view 0 reads full rows.
func (c *Conductor) listClusterPageView(ctx context.Context, store clListStore, rc *magnum.RequestContext, allProjects bool, p ListParams, view db.ClusterView) (*ClusterPage, error) {
	vs, _ := store.(clListViewStore)
	if view == 0 {
		vs = nil
	}
	o := p.options()
	tscope := c.TemplateScopeFor(rc, allProjects)
	scope := ScopeFor(rc, allProjects)
	if o.Marker != "" {
		// Magnum: the marker is looked up with the caller's scope.
		if _, err := store.GetClusterByUUID(ctx, o.Marker, scope); err != nil {
			return nil, clNotFound(err, o.Marker)
		}
	}
	var rows []magnum.Cluster
	var err error
	if vs != nil {
		rows, err = vs.ListClustersView(ctx, db.ClusterFilter{Scope: scope}, o, view)
	} else {
		rows, err = store.ListClusters(ctx, db.ClusterFilter{Scope: scope}, o)
	}
	var sk *db.InvalidSortKeyError
	switch {
	case errors.Is(err, db.ErrNotFound):
		return nil, magnum.ClusterNotFound(o.Marker)
	case errors.As(err, &sk):
		return nil, magnum.InvalidSortKey(sk.Key)
	case errors.Is(err, db.ErrInvalidSortDir):
		return nil, magnum.InvalidSortDir(o.SortDir)
	case err != nil:
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	page := &ClusterPage{Clusters: rows, Templates: map[string]magnum.ClusterTemplate{}}
	ids := make([]string, 0, len(rows))
	var tids []string
	seen := map[string]bool{}
	for i := range rows {
		cl := &rows[i]
		ids = append(ids, cl.UUID)
		if !seen[cl.ClusterTemplateID] {
			seen[cl.ClusterTemplateID] = true
			tids = append(tids, cl.ClusterTemplateID)
		}
	}
	if vs != nil {
		page.NodeGroups, err = vs.ListNodeGroupSizesOfClusters(ctx, ids, view == db.ClusterViewDetail)
	} else {
		page.NodeGroups, err = store.ListNodeGroupsOfClusters(ctx, ids)
	}
	if err != nil {
		return nil, fmt.Errorf("list nodegroups of clusters: %w", err)
	}
	if len(tids) > 0 {
		tmpls, err := store.GetClusterTemplatesByUUIDs(ctx, tids, tscope)
		if err != nil {
			return nil, fmt.Errorf("get templates of clusters: %w", err)
		}
		for id, t := range tmpls {
			if t != nil {
				page.Templates[id] = *t
			}
		}
		for _, id := range tids {
			if _, ok := page.Templates[id]; !ok {
				return nil, magnum.ClusterTemplateNotFound(id)
			}
		}
	}
	return page, nil
}

// ClusterDetail is one cluster with its nodegroups and template, for the
// detail view.
type ClusterDetail struct {
	Cluster    magnum.Cluster
	NodeGroups []magnum.NodeGroup
	// Template is nil when the caller cannot see it.
	Template *magnum.ClusterTemplate
}

// ClusterNodeGroups returns the nodegroups of a cluster by id.
func (c *Conductor) ClusterNodeGroups(ctx context.Context, cl *magnum.Cluster) ([]magnum.NodeGroup, error) {
	ngs, err := c.DB.ListNodeGroupsOfClusters(ctx, []string{cl.UUID})
	if err != nil {
		return nil, fmt.Errorf("list nodegroups of cluster %s: %w", cl.UUID, err)
	}
	return ngs[cl.UUID], nil
}

// ClusterDetails reads the nodegroups and the template of cl, the template
// with the caller's visibility (Magnum's detail view reads it to compute
// labels_*; an invisible template fails with 404 ClusterTemplateNotFound).
func (c *Conductor) ClusterDetails(ctx context.Context, rc *magnum.RequestContext, allProjects bool, cl *magnum.Cluster) (*ClusterDetail, error) {
	ngs, err := c.ClusterNodeGroups(ctx, cl)
	if err != nil {
		return nil, err
	}
	t, err := c.DB.GetClusterTemplateByUUID(ctx, cl.ClusterTemplateID, c.TemplateScopeFor(rc, allProjects))
	if errors.Is(err, db.ErrNotFound) {
		return nil, magnum.ClusterTemplateNotFound(cl.ClusterTemplateID)
	}
	if err != nil {
		return nil, fmt.Errorf("get template of cluster %s: %w", cl.UUID, err)
	}
	return &ClusterDetail{Cluster: *cl, NodeGroups: ngs, Template: t}, nil
}

// ClusterCreate is a cluster create request after the API has parsed and
// type-checked the body. Nil pointers and nil maps are absent (or null)
// fields.
type ClusterCreate struct {
	// Template is the template the request names, already resolved.
	Template           *magnum.ClusterTemplate
	Name               string
	Keypair            *string
	Labels             map[string]string
	MergeLabels        bool
	DockerVolumeSize   *int
	MasterFlavorID     *string
	FlavorID           *string
	FixedNetwork       *string
	FixedSubnet        *string
	FloatingIPEnabled  *bool
	MasterLBEnabled    *bool
	CreateTimeout      int
	MasterCount        int
	NodeCount          int
	HealthStatus       *string
	HealthStatusReason map[string]string
	DiscoveryURL       *string
}

// clDriverOf returns the driver of a template: by its stored driver name
// when set, else by (server_type, cluster_distro, coe).
//
// Deviation: Magnum checks the tuple in the API and then loads the stored
// name in the conductor; we use the stored name for both (pack §3.1).
func (c *Conductor) clDriverOf(t *magnum.ClusterTemplate) (driver.Driver, error) {
	return c.Drivers.Get(clStr(t.ServerType), clStr(t.ClusterDistro), clStr(t.COE), clStr(t.Driver))
}

// CheckClusterCreate runs the checks Magnum's decorators make before the
// cluster create handler (cluster.py:503-517), in order: a driver for the
// template (400), the devicemapper volume size (400), the driver's master
// size rule (400).
func (c *Conductor) CheckClusterCreate(t *magnum.ClusterTemplate, masterCount int, dockerVolumeSize *int) error {
	drv, err := c.clDriverOf(t)
	if err != nil {
		return err
	}
	if err := magnum.ValidateDevicemapperVolume(clStr(t.DockerStorageDriver), dockerVolumeSize, t.DockerVolumeSize); err != nil {
		return err
	}
	return drv.ValidateMasterSize(masterCount)
}

// clQuotaLimit is the caller's cluster quota: the quotas row, else
// [quotas]/max_clusters_per_project.
func (c *Conductor) clQuotaLimit(ctx context.Context, q *db.Queries, projectID string) (int, error) {
	qt, err := q.GetQuota(ctx, projectID, magnum.QuotaResourceCluster)
	switch {
	case err == nil:
		return qt.HardLimit, nil
	case errors.Is(err, db.ErrNotFound):
		return c.DefaultClusterQuota(), nil
	}
	return 0, fmt.Errorf("read cluster quota: %w", err)
}

// clCheckQuota refuses a create when the caller already has limit
// clusters (every status counted): 403 ResourceLimitExceeded. The check
// that holds is the one under the lock (clQuotaUnderLock); this one gives
// Magnum's error order when the validation fails too.
func (c *Conductor) clCheckQuota(ctx context.Context, q *db.Queries, rc *magnum.RequestContext) error {
	limit, err := c.clQuotaLimit(ctx, q, rc.ProjectID)
	if err != nil {
		return err
	}
	n, err := clCountProject(ctx, q, rc)
	if err != nil {
		return err
	}
	if n >= limit {
		return magnum.ResourceLimitExceeded(limit)
	}
	return nil
}

// clCountProject counts the clusters of the caller's project, every
// status (what the cluster quota limits).
func clCountProject(ctx context.Context, q *db.Queries, rc *magnum.RequestContext) (int, error) {
	n, err := q.CountClusters(ctx, db.ClusterFilter{Scope: ScopeFor(rc, false)})
	if err != nil {
		return 0, fmt.Errorf("count clusters: %w", err)
	}
	return n, nil
}

// CreateCluster is the body of POST /v1/clusters after the policy check
// (cluster.py:521-611 and the conductor's cluster_create): quota (403),
// hidden template (403), value inheritance (logic.md §1), flavor root disk
// (400), OpenStack resources, master_count/master_lb_enabled (400); then,
// in one transaction, the cluster row and its two default nodegroups and
// the quota under a lock (clQuotaUnderLock). Then the create job generates
// the cluster's certificates and calls the driver (a failure leaves the cluster
// CREATE_FAILED with the reason, as after Magnum's RPC cast): after the
// return, on the create-job pool, once StartCreateJobs ran; within the call
// otherwise. The returned cluster is the row as inserted.
//
// Deviation: the quota check is atomic with the insert. Magnum counts in
// the API and inserts later in the conductor, so concurrent creates may
// exceed the limit; here the count and the insert run in one transaction
// serialised by the cluster lock row (see clLock).
func (c *Conductor) CreateCluster(ctx context.Context, rc *magnum.RequestContext, in ClusterCreate) (*magnum.Cluster, error) {
	t := in.Template
	cl := clInherit(t, in)
	// The OpenStack reads of the validation below start now, together;
	// their answers are read in Magnum's order.
	var cloud OpenStack
	if c.OpenStack != nil {
		l := newLookups(c.OpenStack)
		l.prefetch(ctx, clCreateLookups(t, &cl))
		cloud = l
	}
	// Magnum checks the quota first (403 before any validation error).
	// The count under the lock below refuses an over-quota create anyway,
	// so the quota is counted here only when the validation fails: its
	// 403 then comes first, as in Magnum, and an accepted create counts
	// once.
	if err := c.clValidateCreate(ctx, cloud, rc, t, &cl, in.MasterCount); err != nil {
		if qerr := c.clCheckQuota(ctx, &c.DB.Queries, rc); qerr != nil {
			return nil, qerr
		}
		return nil, err
	}
	st := magnum.StatusCreateInProgress
	cl.Status = &st
	cl.StatusReason = nil
	master, worker := clDefaultNodeGroups(t, &cl, in.MasterCount, in.NodeCount)
	master.UUID, worker.UUID = c.newUUID(), c.newUUID()
	if err := c.clEnsureLockRow(ctx); err != nil {
		return nil, err
	}
	// From before the row is visible until its create job ends, this
	// process's status poller leaves the new cluster alone.
	c.busy.Store(cl.UUID, struct{}{})
	// The rows are written first and the lock row taken last, so that
	// concurrent creates wait for one another only during the count and
	// the commit. The count runs after the lock (its snapshot then holds
	// every create committed before), and includes this create's row; it
	// is skipped while this process knows the project is below the limit
	// (clQuotaUnderLock).
	var count, prevSeq, nextSeq int
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		row := cl
		if err := tx.CreateCluster(ctx, &row); err != nil {
			if errors.Is(err, db.ErrDuplicate) {
				return magnum.ClusterAlreadyExists(cl.UUID)
			}
			return err
		}
		m, w := master, worker
		if err := tx.CreateNodeGroup(ctx, &m); err != nil {
			return err
		}
		if err := tx.CreateNodeGroup(ctx, &w); err != nil {
			return err
		}
		lock, err := c.clLock(ctx, tx)
		if err != nil {
			return err
		}
		if count, prevSeq, nextSeq, err = c.clQuotaUnderLock(ctx, tx, rc, lock); err != nil {
			return err
		}
		cl = row
		return nil
	})
	if err != nil {
		c.busy.Delete(cl.UUID)
		return nil, err
	}
	c.quota.store(rc.ProjectID, count, prevSeq, nextSeq)
	c.log().InfoContext(ctx, "cluster created", "cluster_uuid", cl.UUID, "project_id", cl.ProjectID)
	// Certificates, then the driver: on the create-job pool once
	// StartCreateJobs ran, else here (createjobs.go).
	c.clStartCreate(ctx, rc, cl.UUID)
	return &cl, nil
}

// clValidateCreate is the validation of a create after the quota check,
// in Magnum's order: hidden template (403), flavors' root disk (400),
// OpenStack resources, master_count against master_lb_enabled (400). It
// sets the cluster's identity (uuid, project, user, generated name).
func (c *Conductor) clValidateCreate(ctx context.Context, cloud OpenStack, rc *magnum.RequestContext, t *magnum.ClusterTemplate, cl *magnum.Cluster, masterCount int) error {
	if clBool(t.Hidden) && !rc.IsAdmin {
		return magnum.NotAuthorizedDefault()
	}
	cl.UUID = c.newUUID()
	cl.ProjectID = rc.ProjectID
	cl.UserID = rc.UserID
	if cl.Name == "" {
		cl.Name = clGenerateName("cluster")
	}
	if err := clCheckFlavors(ctx, cloud, cl.Labels, cl.FlavorID, cl.MasterFlavorID); err != nil {
		return err
	}
	if err := clValidateResources(ctx, cloud, t, cl); err != nil {
		return err
	}
	return magnum.ValidateMasterLB(int64(masterCount), clBool(cl.MasterLBEnabled))
}

// clInherit computes the cluster row of a create request (logic.md §1).
func clInherit(t *magnum.ClusterTemplate, in ClusterCreate) magnum.Cluster {
	cl := magnum.Cluster{
		Name:               in.Name,
		ClusterTemplateID:  t.UUID,
		Keypair:            in.Keypair,
		DockerVolumeSize:   in.DockerVolumeSize,
		MasterFlavorID:     in.MasterFlavorID,
		FlavorID:           in.FlavorID,
		FixedNetwork:       in.FixedNetwork,
		FixedSubnet:        in.FixedSubnet,
		FloatingIPEnabled:  in.FloatingIPEnabled,
		MasterLBEnabled:    in.MasterLBEnabled,
		HealthStatus:       in.HealthStatus,
		HealthStatusReason: in.HealthStatusReason,
		DiscoveryURL:       in.DiscoveryURL,
	}
	timeout := in.CreateTimeout
	cl.CreateTimeout = &timeout
	if cl.Keypair == nil {
		cl.Keypair = t.KeypairID
	}
	switch {
	case len(in.Labels) == 0:
		cl.Labels = maps.Clone(t.Labels)
	case in.MergeLabels:
		cl.Labels = maps.Clone(t.Labels)
		if cl.Labels == nil {
			cl.Labels = map[string]string{}
		}
		maps.Copy(cl.Labels, in.Labels)
	default:
		cl.Labels = maps.Clone(in.Labels)
	}
	if cl.Labels == nil {
		cl.Labels = map[string]string{}
	}
	if cl.FloatingIPEnabled == nil {
		cl.FloatingIPEnabled = t.FloatingIPEnabled
	}
	if cl.MasterLBEnabled == nil {
		cl.MasterLBEnabled = t.MasterLBEnabled
	}
	if cl.DockerVolumeSize == nil || *cl.DockerVolumeSize == 0 {
		cl.DockerVolumeSize = t.DockerVolumeSize
	}
	for _, f := range []struct{ dst, src **string }{
		{&cl.MasterFlavorID, &t.MasterFlavorID}, {&cl.FlavorID, &t.FlavorID},
		{&cl.FixedNetwork, &t.FixedNetwork}, {&cl.FixedSubnet, &t.FixedSubnet},
	} {
		if *f.dst == nil || **f.dst == "" {
			*f.dst = *f.src
		}
	}
	return cl
}

// clDefaultNodeGroups builds the default master and worker nodegroups of a
// new cluster (magnum/conductor/utils.py:157-183).
func clDefaultNodeGroups(t *magnum.ClusterTemplate, cl *magnum.Cluster, masterCount, nodeCount int) (magnum.NodeGroup, magnum.NodeGroup) {
	st := magnum.StatusCreateInProgress
	yes := true
	mk := func(name, role string, count int, flavor *string) magnum.NodeGroup {
		n := count
		zero := 0
		return magnum.NodeGroup{
			Name: name, ClusterID: cl.UUID, ProjectID: cl.ProjectID, Role: &role, NodeCount: &n,
			FlavorID: flavor, ImageID: t.ImageID, Labels: maps.Clone(cl.Labels),
			DockerVolumeSize: cl.DockerVolumeSize, MinNodeCount: &zero, IsDefault: &yes, Status: &st,
		}
	}
	master := mk("default-master", magnum.RoleMaster, masterCount, clFirst(cl.MasterFlavorID, t.MasterFlavorID))
	worker := mk("default-worker", magnum.RoleWorker, nodeCount, clFirst(cl.FlavorID, t.FlavorID))
	if v, ok := cl.Labels["min_node_count"]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			worker.MinNodeCount = &n
		}
	}
	return master, worker
}

// clCheckFlavors is Magnum's validate_flavor_root_volume_size for the
// worker then the master flavor (attr_validator.py:181-201): when the
// labels' boot_volume_size is ≤ 0 (default 0), each flavor must exist
// (a null flavor is looked up as "None") and have a root disk.
func clCheckFlavors(ctx context.Context, cloud OpenStack, labels map[string]string, flavors ...*string) error {
	boot := 0
	if v, ok := labels["boot_volume_size"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return magnum.ServerError(magnum.IntLiteralError(v))
		}
		boot = n
	}
	if boot > 0 || cloud == nil {
		return nil
	}
	for _, f := range flavors {
		fl, err := cloud.Flavor(ctx, clFlavorName(f))
		if err != nil {
			return err
		}
		if fl.Disk == 0 {
			return magnum.FlavorZeroRootVolumeNotSupported()
		}
	}
	return nil
}

// clValidateResources is validate_os_resources(T, cluster)
// (attr_validator.py:151-169): the cluster's value when set, else the
// template's, for the image, flavors, external network, fixed network and
// subnet; then the cluster's keypair.
func clValidateResources(ctx context.Context, cloud OpenStack, t *magnum.ClusterTemplate, cl *magnum.Cluster) error {
	if cloud == nil {
		return nil
	}
	if t.ImageID != nil {
		img, err := cloud.Image(ctx, *t.ImageID)
		if err != nil {
			return err
		}
		if img.OSDistro == "" {
			return magnum.OSDistroFieldNotFound(*t.ImageID)
		}
	}
	if f := pick(cl.FlavorID, t.FlavorID); f != nil {
		if _, err := cloud.Flavor(ctx, *f); err != nil {
			return err
		}
	}
	if f := pick(cl.MasterFlavorID, t.MasterFlavorID); f != nil {
		if _, err := cloud.Flavor(ctx, *f); err != nil {
			return err
		}
	}
	if t.ExternalNetworkID != nil {
		if _, err := cloud.ExternalNetwork(ctx, *t.ExternalNetworkID); err != nil {
			return err
		}
	}
	if n := pick(cl.FixedNetwork, t.FixedNetwork); n != nil {
		if _, err := cloud.FixedNetwork(ctx, *n); err != nil {
			return err
		}
	}
	if n := pick(cl.FixedSubnet, t.FixedSubnet); n != nil {
		if _, err := cloud.FixedSubnet(ctx, *n); err != nil {
			return err
		}
	}
	if cl.Keypair != nil && *cl.Keypair != "" {
		if _, err := cloud.Keypair(ctx, *cl.Keypair); err != nil {
			return err
		}
	}
	return nil
}

// ClusterUpdate is a cluster PATCH after the API applied the patch and
// resolved the node count (patch.md §3).
type ClusterUpdate struct {
	NodeCount          int
	HealthStatus       *string
	HealthStatusReason map[string]string
	Rollback           bool
}

// CheckClusterUpdateFlavors is the root-disk check of a cluster PATCH
// (patch.md §3 step 2): it runs on every PATCH, on the cluster's flavors.
func (c *Conductor) CheckClusterUpdateFlavors(ctx context.Context, cl *magnum.Cluster) error {
	return clCheckFlavors(ctx, c.OpenStack, cl.Labels, cl.FlavorID, cl.MasterFlavorID)
}

// UpdateCluster applies a PATCH of node_count and health
// (cluster_conductor.py:89-164). The cluster must be in a *_COMPLETE
// status, else 409.
//
// Deviation: Magnum drops the update silently after its 202 (RPC cast);
// we refuse synchronously with 409 (pack §3.4).
func (c *Conductor) UpdateCluster(ctx context.Context, rc *magnum.RequestContext, uuid string, in ClusterUpdate) error {
	callDriver := false
	var oldCount int
	var workerUUID string
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		q := tx.ForUpdate()
		cl, err := q.GetClusterByUUID(ctx, uuid, db.AllProjects)
		if err != nil {
			return clNotFound(err, uuid)
		}
		if !magnum.CanUpdate(clStatus(cl.Status)) {
			return magnum.StateGuardConflict("Updating", clStatus(cl.Status))
		}
		worker, err := clDefaultWorker(ctx, q, cl.UUID)
		if err != nil {
			return err
		}
		oldCount = clInt(worker.NodeCount)
		healthSame := clStr(cl.HealthStatus) == clStr(in.HealthStatus) && (cl.HealthStatus == nil) == (in.HealthStatus == nil) &&
			maps.Equal(cl.HealthStatusReason, in.HealthStatusReason)
		if oldCount == in.NodeCount && healthSame {
			return nil
		}
		cl.HealthStatus = in.HealthStatus
		cl.HealthStatusReason = in.HealthStatusReason
		if cl.HealthStatusReason == nil {
			cl.HealthStatusReason = map[string]string{}
		}
		if err := tx.UpdateCluster(ctx, cl, "health_status", "health_status_reason"); err != nil {
			return err
		}
		if oldCount == in.NodeCount {
			return nil
		}
		n := in.NodeCount
		worker.NodeCount = &n
		if err := tx.UpdateNodeGroup(ctx, worker, "node_count"); err != nil {
			return err
		}
		callDriver, workerUUID = true, worker.UUID
		return nil
	})
	if err != nil || !callDriver {
		return err
	}
	c.clRunDriver(ctx, rc, uuid, magnum.StatusUpdateFailed, func(ctx context.Context, drv driver.Driver, st driver.ClusterState) (driver.Update, error) {
		upd, err := drv.UpdateCluster(ctx, driver.CredentialsFrom(rc), st)
		if err != nil {
			c.clRestoreNodeCount(ctx, workerUUID, uuid, oldCount)
		}
		return upd, err
	})
	return nil
}

// clRestoreNodeCount puts a nodegroup's node_count back after a failed
// driver call, as Magnum's conductor does.
func (c *Conductor) clRestoreNodeCount(ctx context.Context, ngUUID, clusterUUID string, count int) {
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		ng, err := tx.GetNodeGroupByUUID(ctx, clusterUUID, ngUUID, db.AllProjects)
		if err != nil {
			return err
		}
		ng.NodeCount = &count
		st := magnum.StatusUpdateFailed
		ng.Status = &st
		return tx.UpdateNodeGroup(ctx, ng, "node_count", "status")
	})
	if err != nil {
		c.log().ErrorContext(ctx, "restore node count", "cluster_uuid", clusterUUID, "nodegroup_uuid", ngUUID, "error", err)
	}
}

// DeleteCluster starts deleting a cluster (no state guard, as in Magnum):
// DELETE_IN_PROGRESS, then the driver's delete. The rows go when the
// reconciler sees DELETE_COMPLETE.
func (c *Conductor) DeleteCluster(ctx context.Context, rc *magnum.RequestContext, uuid string) error {
	// One statement: the status poller's writes compare the status and
	// updated_at they read (clSave), so none overwrites this one.
	if err := c.DB.SetClusterStatus(ctx, uuid, magnum.StatusDeleteInProgress, nil); err != nil {
		return clNotFound(err, uuid)
	}
	c.log().InfoContext(ctx, "cluster delete started", "cluster_uuid", uuid)
	c.clStopCertificates(uuid)
	// A create job of this process for the cluster finishes first (it sees
	// the new status and stops before the driver if it still can), so the
	// driver's delete is never followed by its create.
	unlock := c.clLockCluster(uuid)
	defer unlock()
	c.clRunDriver(ctx, rc, uuid, magnum.StatusDeleteFailed, func(ctx context.Context, drv driver.Driver, st driver.ClusterState) (driver.Update, error) {
		return drv.DeleteCluster(ctx, driver.CredentialsFrom(rc), st)
	})
	return nil
}

// clState reads the driver's view of a cluster: the row, its template
// (any project) and its nodegroups.
func (c *Conductor) clState(ctx context.Context, q *db.Queries, uuid string) (driver.ClusterState, error) {
	var st driver.ClusterState
	cl, err := q.GetClusterByUUID(ctx, uuid, db.AllProjects)
	if err != nil {
		return st, clNotFound(err, uuid)
	}
	t, err := q.GetClusterTemplateByUUID(ctx, cl.ClusterTemplateID, db.TemplateScope{Scope: db.AllProjects})
	if errors.Is(err, db.ErrNotFound) {
		return st, magnum.ClusterTemplateNotFound(cl.ClusterTemplateID)
	}
	if err != nil {
		return st, fmt.Errorf("get template of cluster %s: %w", uuid, err)
	}
	ngs, err := q.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: uuid}, db.ListOptions{})
	if err != nil {
		return st, fmt.Errorf("list nodegroups of cluster %s: %w", uuid, err)
	}
	return driver.ClusterState{Cluster: *cl, Template: *t, NodeGroups: ngs}, nil
}

// clRunDriver calls a driver operation on the current state of a cluster and
// saves its update. A failure (no driver, driver error) is recorded as
// failStatus with the error text as status_reason on the cluster, as
// Magnum's conductor does after an RPC cast; it is logged, not returned.
func (c *Conductor) clRunDriver(ctx context.Context, rc *magnum.RequestContext, uuid string, failStatus magnum.Status, call func(context.Context, driver.Driver, driver.ClusterState) (driver.Update, error)) {
	// The rows are already written: finish even if the client goes away,
	// within a bound.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), clDriverTimeout)
	defer cancel()
	// The poller of this process leaves the cluster alone meanwhile.
	if _, already := c.busy.LoadOrStore(uuid, struct{}{}); !already {
		defer c.busy.Delete(uuid)
	}
	st, err := c.clState(ctx, &c.DB.Queries, uuid)
	if err != nil {
		c.log().ErrorContext(ctx, "read cluster state", "cluster_uuid", uuid, "error", err)
		return
	}
	drv, err := c.clDriverOf(&st.Template)
	var upd driver.Update
	if err == nil {
		upd, err = call(ctx, drv, st)
	}
	if err != nil {
		c.log().ErrorContext(ctx, "driver operation failed", "cluster_uuid", uuid, "status", string(failStatus), "error", err)
		c.clMarkFailed(ctx, uuid, failStatus, err.Error())
		return
	}
	// The status poller may have moved the cluster on while the driver was
	// called (another process, or a poll that started before this call):
	// then only the driver's identifiers are kept, never an older status.
	before := clStatus(st.Cluster.Status)
	if upd.Cluster != nil && reflect.DeepEqual(*upd.Cluster, st.Cluster) {
		// Nothing to write (a delete the cluster is already marked for).
		upd.Cluster = nil
	}
	if err := c.clSave(ctx, upd, &before); err != nil {
		if errors.Is(err, errStaleUpdate) {
			c.clSaveStackID(ctx, upd)
			return
		}
		c.log().ErrorContext(ctx, "save driver update", "cluster_uuid", uuid, "error", err)
	}
}

// clSaveStackID stores the driver's cluster id from upd when the row has
// none yet.
func (c *Conductor) clSaveStackID(ctx context.Context, upd driver.Update) {
	if upd.Cluster == nil || upd.Cluster.StackID == nil {
		return
	}
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		cur, err := tx.ForUpdate().GetClusterByUUID(ctx, upd.Cluster.UUID, db.AllProjects)
		if err != nil {
			return err
		}
		if cur.StackID != nil && *cur.StackID != "" {
			return nil
		}
		cur.StackID = upd.Cluster.StackID
		return tx.UpdateCluster(ctx, cur, "stack_id")
	})
	if err != nil {
		c.log().ErrorContext(ctx, "save driver cluster id", "cluster_uuid", upd.Cluster.UUID, "error", err)
	}
}

// clMarkFailed sets the cluster (and its in-progress nodegroups) to status
// with reason.
func (c *Conductor) clMarkFailed(ctx context.Context, uuid string, status magnum.Status, reason string) {
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		cl, err := tx.ForUpdate().GetClusterByUUID(ctx, uuid, db.AllProjects)
		if err != nil {
			return err
		}
		cl.Status, cl.StatusReason = &status, &reason
		if err := tx.UpdateCluster(ctx, cl, "status", "status_reason"); err != nil {
			return err
		}
		ngs, err := tx.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: uuid}, db.ListOptions{})
		if err != nil {
			return err
		}
		for i := range ngs {
			if magnum.IsInProgress(clStatus(ngs[i].Status)) {
				ngs[i].Status, ngs[i].StatusReason = &status, &reason
				if err := tx.UpdateNodeGroup(ctx, &ngs[i], "status", "status_reason"); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		c.log().ErrorContext(ctx, "mark cluster failed", "cluster_uuid", uuid, "error", err)
	}
}

// clDriverTimeout bounds a driver call started by an API request and the
// writes that follow it.
const clDriverTimeout = 2 * time.Minute

// clSaveCols are the cluster columns a driver update may change.
var clSaveCols = []string{"name", "cluster_template_id", "api_address", "stack_id", "status", "discovery_url",
	"status_reason", "ca_cert_ref", "magnum_cert_ref", "create_timeout", "coe_version", "container_version",
	"keypair", "docker_volume_size", "labels", "master_flavor_id", "flavor_id", "health_status",
	"health_status_reason", "fixed_network", "fixed_subnet", "floating_ip_enabled", "master_lb_enabled",
	"etcd_ca_cert_ref", "front_proxy_ca_cert_ref"}

// clNGSaveCols are the nodegroup columns a driver update may change.
var clNGSaveCols = []string{"name", "docker_volume_size", "labels", "flavor_id", "image_id", "node_addresses",
	"node_count", "max_node_count", "min_node_count", "role", "is_default", "stack_id", "status",
	"status_reason", "version", "node_labels", "node_taints"}

// SaveDriverUpdate writes what a driver call returned, in one transaction:
// the cluster row, changed or new nodegroups, and deleted nodegroups.
func (c *Conductor) SaveDriverUpdate(ctx context.Context, upd driver.Update) error {
	return c.clSave(ctx, upd, nil)
}

// clSave is SaveDriverUpdate; with expect set, the update is dropped
// (ErrStaleUpdate) when the cluster's status is no longer *expect, so that
// a poll that read the rows before a concurrent API change cannot
// overwrite it.
func (c *Conductor) clSave(ctx context.Context, upd driver.Update, expect *magnum.Status) error {
	if !upd.Changed() {
		return nil
	}
	return c.DB.InTx(ctx, func(tx *db.Tx) error {
		if expect != nil && upd.Cluster != nil {
			cur, err := tx.ForUpdate().GetClusterByUUID(ctx, upd.Cluster.UUID, db.AllProjects)
			if err != nil {
				return clNotFound(err, upd.Cluster.UUID)
			}
			// Compare-and-swap on updated_at as well as on the status: a
			// write that kept the status (the API saving the driver's
			// cluster id, a health PATCH) must not be overwritten by a
			// result computed from the older row.
			if clStatus(cur.Status) != *expect || !sameTime(cur.UpdatedAt, upd.Cluster.UpdatedAt) {
				return errStaleUpdate
			}
		}
		if expect != nil {
			for _, ng := range upd.NodeGroups {
				if ng.ID == 0 {
					continue
				}
				cur, err := tx.ForUpdate().GetNodeGroupByUUID(ctx, ng.ClusterID, ng.UUID, db.AllProjects)
				if errors.Is(err, db.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if !sameTime(cur.UpdatedAt, ng.UpdatedAt) {
					return errStaleUpdate
				}
			}
		}
		if upd.Cluster != nil {
			cl := *upd.Cluster
			if cl.Labels == nil {
				cl.Labels = map[string]string{}
			}
			if cl.HealthStatusReason == nil {
				cl.HealthStatusReason = map[string]string{}
			}
			if err := tx.UpdateCluster(ctx, &cl, clSaveCols...); err != nil {
				return fmt.Errorf("save cluster %s: %w", cl.UUID, err)
			}
		}
		for _, ng := range upd.NodeGroups {
			ng := ng
			if ng.ID == 0 {
				if err := tx.CreateNodeGroup(ctx, &ng); err != nil {
					return fmt.Errorf("create nodegroup %s: %w", ng.UUID, err)
				}
				continue
			}
			if err := tx.UpdateNodeGroup(ctx, &ng, clNGSaveCols...); err != nil && !errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("save nodegroup %s: %w", ng.UUID, err)
			}
		}
		for _, id := range upd.DeletedNodeGroups {
			if err := tx.DeleteNodeGroup(ctx, id); err != nil && !errors.Is(err, db.ErrNotFound) {
				return fmt.Errorf("delete nodegroup %s: %w", id, err)
			}
		}
		return nil
	})
}

// clDefaultWorker returns the cluster's default worker nodegroup: the first
// default nodegroup whose role is not master.
func clDefaultWorker(ctx context.Context, q *db.Queries, clusterUUID string) (*magnum.NodeGroup, error) {
	ngs, err := q.ListNodeGroups(ctx, db.NodeGroupFilter{ClusterID: clusterUUID}, db.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodegroups of cluster %s: %w", clusterUUID, err)
	}
	for i := range ngs {
		if clBool(ngs[i].IsDefault) && clStr(ngs[i].Role) != magnum.RoleMaster {
			return &ngs[i], nil
		}
	}
	return nil, magnum.ServerError(fmt.Sprintf("Cluster %s has no default worker nodegroup.", clusterUUID))
}

func clNotFound(err error, ident string) error {
	if errors.Is(err, db.ErrNotFound) {
		return magnum.ClusterNotFound(ident)
	}
	return err
}

func clStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func clBool(p *bool) bool { return p != nil && *p }

func clInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func clStatus(p *magnum.Status) magnum.Status {
	if p == nil {
		return ""
	}
	return *p
}

func clFirst(a, b *string) *string {
	if a != nil && *a != "" {
		return a
	}
	return b
}

// sameTime reports whether two nullable timestamps are equal.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
