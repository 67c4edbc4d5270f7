package db

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var clusterTable = &table[magnum.Cluster]{
	name: "cluster",
	cols: []string{"created_at", "updated_at", "uuid", "name", "cluster_template_id", "api_address", "stack_id",
		"project_id", "user_id", "status", "discovery_url", "status_reason", "ca_cert_ref", "magnum_cert_ref",
		"create_timeout", "coe_version", "container_version", "keypair", "docker_volume_size", "labels",
		"master_flavor_id", "flavor_id", "health_status", "health_status_reason", "fixed_network", "fixed_subnet",
		"floating_ip_enabled", "master_lb_enabled", "etcd_ca_cert_ref", "front_proxy_ca_cert_ref"},
	markerCol: "uuid",
	id:        func(v *magnum.Cluster) *int64 { return &v.ID },
	created:   func(v *magnum.Cluster) *time.Time { return &v.CreatedAt },
	updated:   func(v *magnum.Cluster) **time.Time { return &v.UpdatedAt },
	binds: func(q *Queries, v *magnum.Cluster) []any {
		return []any{ts{&v.CreatedAt, q.d}, nts{&v.UpdatedAt, q.d}, str{&v.UUID}, str{&v.Name},
			str{&v.ClusterTemplateID}, &v.APIAddress, &v.StackID, str{&v.ProjectID}, str{&v.UserID}, &v.Status,
			&v.DiscoveryURL, &v.StatusReason, &v.CACertRef, &v.MagnumCertRef, &v.CreateTimeout, &v.COEVersion,
			&v.ContainerVersion, &v.Keypair, &v.DockerVolumeSize, jsonMap{&v.Labels}, &v.MasterFlavorID,
			&v.FlavorID, &v.HealthStatus, jsonMap{&v.HealthStatusReason}, &v.FixedNetwork, &v.FixedSubnet,
			&v.FloatingIPEnabled, &v.MasterLBEnabled, &v.EtcdCACertRef, &v.FrontProxyCACertRef}
	},
}

// ClusterFilter selects clusters.
type ClusterFilter struct {
	Scope
	// Statuses, when set, keeps clusters whose status is one of them.
	Statuses []magnum.Status
	// ClusterTemplateID, when set, keeps clusters of that template uuid.
	ClusterTemplateID string
	// UUIDs, when set, keeps the clusters with one of these uuids.
	UUIDs []string
}

func (f ClusterFilter) cond() (cond, error) {
	var c cond
	w, args, err := f.Scope.where(true)
	if err != nil {
		return c, err
	}
	c.add(w, args...)
	if len(f.Statuses) > 0 {
		args := make([]any, len(f.Statuses))
		for i, st := range f.Statuses {
			args[i] = string(st)
		}
		c.add(inList("status", len(f.Statuses)), args...)
	}
	if f.ClusterTemplateID != "" {
		c.add("cluster_template_id = ?", f.ClusterTemplateID)
	}
	if len(f.UUIDs) > 0 {
		c.add(inList("uuid", len(f.UUIDs)), anySlice(f.UUIDs)...)
	}
	return c, nil
}

// GetClusterByID returns the cluster with the database id.
func (q *Queries) GetClusterByID(ctx context.Context, id int64, s Scope) (*magnum.Cluster, error) {
	c, err := ClusterFilter{Scope: s}.cond()
	if err != nil {
		return nil, err
	}
	c.add("id = ?", id)
	return getOne(ctx, q, clusterTable, c)
}

// GetClusterByUUID returns the cluster with uuid.
func (q *Queries) GetClusterByUUID(ctx context.Context, uuid string, s Scope) (*magnum.Cluster, error) {
	c, err := ClusterFilter{Scope: s}.cond()
	if err != nil {
		return nil, err
	}
	c.add("uuid = ?", uuid)
	return getOne(ctx, q, clusterTable, c)
}

// GetClustersByName returns every cluster in scope whose name matches
// (case-insensitively, as on MariaDB); more than one is a 409 for the
// caller.
func (q *Queries) GetClustersByName(ctx context.Context, name string, s Scope) ([]magnum.Cluster, error) {
	c, err := ClusterFilter{Scope: s}.cond()
	if err != nil {
		return nil, err
	}
	c.add(q.d.nameEquals("name"), name)
	return all(ctx, q, clusterTable, c, "id ASC", 0)
}

// ListClusters lists clusters with Magnum's pagination.
func (q *Queries) ListClusters(ctx context.Context, f ClusterFilter, o ListOptions) ([]magnum.Cluster, error) {
	c, err := f.cond()
	if err != nil {
		return nil, err
	}
	return list(ctx, q, clusterTable, c, o)
}

// CountClusters counts the clusters of the filter (quota: the caller's
// scope, every status).
func (q *Queries) CountClusters(ctx context.Context, f ClusterFilter) (int, error) {
	c, err := f.cond()
	if err != nil {
		return 0, err
	}
	return count(ctx, q, "cluster", c)
}

// ClusterStats returns the number of clusters and the sum of node_count
// over the nodegroups (masters included) of one project, or of every
// project when projectID is "" (GET /v1/stats).
func (q *Queries) ClusterStats(ctx context.Context, projectID string) (clusters, nodes int, err error) {
	var c cond
	if projectID != "" {
		c.add("project_id = ?", projectID)
	}
	clusters, err = count(ctx, q, "cluster", c)
	if err != nil {
		return 0, 0, err
	}
	err = q.ex.QueryRowContext(ctx, q.d.rebind("SELECT COALESCE(SUM(node_count), 0) FROM nodegroup"+c.sql()), c.args...).Scan(&nodes)
	if err != nil {
		return 0, 0, fmt.Errorf("sum nodegroup node_count: %w", err)
	}
	return clusters, nodes, nil
}

// CreateCluster inserts v with Magnum's client-side defaults
// (floating_ip_enabled true, master_lb_enabled false, labels and
// health_status_reason {}) and sets v.ID and v.CreatedAt.
func (q *Queries) CreateCluster(ctx context.Context, v *magnum.Cluster) error {
	v.FloatingIPEnabled = defaultBool(v.FloatingIPEnabled, true)
	v.MasterLBEnabled = defaultBool(v.MasterLBEnabled, false)
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	if v.HealthStatusReason == nil {
		v.HealthStatusReason = map[string]string{}
	}
	return insert(ctx, q, clusterTable, v)
}

// UpdateCluster writes the named columns of v and sets updated_at.
func (q *Queries) UpdateCluster(ctx context.Context, v *magnum.Cluster, cols ...string) error {
	return update(ctx, q, clusterTable, v, cols)
}

// SetClusterStatus sets the status, status_reason and updated_at of the
// cluster with uuid in one statement (no read before it); ErrNotFound when
// there is no such cluster.
func (q *Queries) SetClusterStatus(ctx context.Context, uuid string, status magnum.Status, reason *string) error {
	var r any
	if reason != nil {
		r = *reason
	}
	now := q.d.truncTime(q.now())
	query := "UPDATE " + quote("cluster") + " SET " + quote("status") + " = ?, " + quote("status_reason") + " = ?, " +
		quote("updated_at") + " = ? WHERE uuid = ?"
	res, err := q.ex.ExecContext(ctx, q.d.rebind(query), string(status), r, q.d.timeValue(now), uuid)
	if err != nil {
		return q.writeErr("update", "cluster", err)
	}
	return affected(res, "update cluster")
}

// DeleteCluster deletes the cluster with uuid (its nodegroups stay; see
// DeleteClusterCascade).
func (q *Queries) DeleteCluster(ctx context.Context, uuid string) error {
	var c cond
	c.add("uuid = ?", uuid)
	return deleteOne(ctx, q, "cluster", c)
}

// DeleteClustersCascade deletes the clusters with these uuids and their
// nodegroups in two statements (none: nothing). Call it inside InTx.
func (q *Queries) DeleteClustersCascade(ctx context.Context, uuids []string) error {
	if len(uuids) == 0 {
		return nil
	}
	var ng, cl cond
	ng.add(inList("cluster_id", len(uuids)), anySlice(uuids)...)
	cl.add(inList("uuid", len(uuids)), anySlice(uuids)...)
	if _, err := deleteWhere(ctx, q, "nodegroup", ng); err != nil {
		return err
	}
	_, err := deleteWhere(ctx, q, "cluster", cl)
	return err
}

// DeleteClusterCascade deletes the cluster with uuid and its nodegroups,
// as Magnum's destroy_cluster does. Call it inside InTx so both go
// together.
func (q *Queries) DeleteClusterCascade(ctx context.Context, uuid string) error {
	if _, err := q.DeleteNodeGroupsOfCluster(ctx, uuid); err != nil {
		return err
	}
	return q.DeleteCluster(ctx, uuid)
}
