package db

import (
	"context"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var nodeGroupTable = &table[magnum.NodeGroup]{
	name: "nodegroup",
	cols: []string{"created_at", "updated_at", "uuid", "name", "cluster_id", "project_id", "docker_volume_size",
		"labels", "flavor_id", "image_id", "node_addresses", "node_count", "max_node_count", "min_node_count",
		"role", "is_default", "stack_id", "status", "status_reason", "version", "node_labels", "node_taints"},
	markerCol: "uuid",
	id:        func(v *magnum.NodeGroup) *int64 { return &v.ID },
	created:   func(v *magnum.NodeGroup) *time.Time { return &v.CreatedAt },
	updated:   func(v *magnum.NodeGroup) **time.Time { return &v.UpdatedAt },
	binds: func(q *Queries, v *magnum.NodeGroup) []any {
		return []any{ts{&v.CreatedAt, q.d}, nts{&v.UpdatedAt, q.d}, str{&v.UUID}, str{&v.Name}, str{&v.ClusterID},
			str{&v.ProjectID}, &v.DockerVolumeSize, jsonMap{&v.Labels}, &v.FlavorID, &v.ImageID,
			jsonList{&v.NodeAddresses}, &v.NodeCount, &v.MaxNodeCount, &v.MinNodeCount, &v.Role, &v.IsDefault,
			&v.StackID, &v.Status, &v.StatusReason, &v.Version, jsonMap{&v.NodeLabels}, jsonTaints{&v.NodeTaints}}
	},
}

// NodeGroupFilter selects the nodegroups of one cluster.
type NodeGroupFilter struct {
	// ClusterID is the cluster's uuid (required).
	ClusterID string
	// ProjectID, when set, keeps nodegroups of that project (non-admin
	// callers).
	ProjectID string
	// Role, when set, keeps nodegroups with exactly that role.
	Role string
	// IsDefault, when set, keeps default (or non-default) nodegroups.
	IsDefault *bool
}

func (f NodeGroupFilter) cond() cond {
	var c cond
	c.add("cluster_id = ?", f.ClusterID)
	if f.ProjectID != "" {
		c.add("project_id = ?", f.ProjectID)
	}
	if f.Role != "" {
		c.add("role = ?", f.Role)
	}
	if f.IsDefault != nil {
		if *f.IsDefault {
			c.add("is_default = TRUE")
		} else {
			c.add("is_default = FALSE")
		}
	}
	return c
}

// nodeGroupScope adds Magnum's nodegroup scoping: non-admin callers see
// their project's nodegroups only (nodegroups have no user_id).
func nodeGroupScope(clusterID string, s Scope) (cond, error) {
	c := NodeGroupFilter{ClusterID: clusterID}.cond()
	w, args, err := s.where(false)
	if err != nil {
		return c, err
	}
	c.add(w, args...)
	return c, nil
}

// GetNodeGroupByID returns the nodegroup of the cluster with the database id.
func (q *Queries) GetNodeGroupByID(ctx context.Context, clusterID string, id int64, s Scope) (*magnum.NodeGroup, error) {
	c, err := nodeGroupScope(clusterID, s)
	if err != nil {
		return nil, err
	}
	c.add("id = ?", id)
	return getOne(ctx, q, nodeGroupTable, c)
}

// GetNodeGroupByUUID returns the nodegroup of the cluster with uuid.
func (q *Queries) GetNodeGroupByUUID(ctx context.Context, clusterID, uuid string, s Scope) (*magnum.NodeGroup, error) {
	c, err := nodeGroupScope(clusterID, s)
	if err != nil {
		return nil, err
	}
	c.add("uuid = ?", uuid)
	return getOne(ctx, q, nodeGroupTable, c)
}

// GetNodeGroupsByName returns the nodegroups of the cluster whose name
// matches (case-insensitively, as on MariaDB).
func (q *Queries) GetNodeGroupsByName(ctx context.Context, clusterID, name string, s Scope) ([]magnum.NodeGroup, error) {
	c, err := nodeGroupScope(clusterID, s)
	if err != nil {
		return nil, err
	}
	c.add(q.d.nameEquals("name"), name)
	return all(ctx, q, nodeGroupTable, c, "id ASC", 0)
}

// ListNodeGroups lists the nodegroups of a cluster with Magnum's
// pagination.
func (q *Queries) ListNodeGroups(ctx context.Context, f NodeGroupFilter, o ListOptions) ([]magnum.NodeGroup, error) {
	return list(ctx, q, nodeGroupTable, f.cond(), o)
}

// ListNodeGroupsOfClusters returns the nodegroups of several clusters in
// one query, keyed by cluster uuid, each ordered by id.
func (q *Queries) ListNodeGroupsOfClusters(ctx context.Context, clusterIDs []string) (map[string][]magnum.NodeGroup, error) {
	out := map[string][]magnum.NodeGroup{}
	if len(clusterIDs) == 0 {
		return out, nil
	}
	var c cond
	c.add(inList("cluster_id", len(clusterIDs)), anySlice(clusterIDs)...)
	rows, err := all(ctx, q, nodeGroupTable, c, "id ASC", 0)
	if err != nil {
		return nil, err
	}
	for _, ng := range rows {
		out[ng.ClusterID] = append(out[ng.ClusterID], ng)
	}
	return out, nil
}

// CountNodeGroups counts the nodegroups of the filter.
func (q *Queries) CountNodeGroups(ctx context.Context, f NodeGroupFilter) (int, error) {
	return count(ctx, q, "nodegroup", f.cond())
}

// CreateNodeGroup inserts v with Magnum's client-side defaults (is_default
// false; labels, node_labels {}, node_addresses, node_taints []) and sets
// v.ID and v.CreatedAt. A name already used in the cluster → ErrDuplicate.
func (q *Queries) CreateNodeGroup(ctx context.Context, v *magnum.NodeGroup) error {
	v.IsDefault = defaultBool(v.IsDefault, false)
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	if v.NodeLabels == nil {
		v.NodeLabels = map[string]string{}
	}
	if v.NodeAddresses == nil {
		v.NodeAddresses = []string{}
	}
	if v.NodeTaints == nil {
		v.NodeTaints = []magnum.NodeTaint{}
	}
	return insert(ctx, q, nodeGroupTable, v)
}

// UpdateNodeGroup writes the named columns of v and sets updated_at.
func (q *Queries) UpdateNodeGroup(ctx context.Context, v *magnum.NodeGroup, cols ...string) error {
	return update(ctx, q, nodeGroupTable, v, cols)
}

// DeleteNodeGroup deletes the nodegroup with uuid.
func (q *Queries) DeleteNodeGroup(ctx context.Context, uuid string) error {
	var c cond
	c.add("uuid = ?", uuid)
	return deleteOne(ctx, q, "nodegroup", c)
}

// DeleteNodeGroupsOfCluster deletes every nodegroup of the cluster uuid and
// returns how many there were.
func (q *Queries) DeleteNodeGroupsOfCluster(ctx context.Context, clusterID string) (int64, error) {
	var c cond
	c.add("cluster_id = ?", clusterID)
	return deleteWhere(ctx, q, "nodegroup", c)
}
