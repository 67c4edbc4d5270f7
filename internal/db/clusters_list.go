package db

import (
	"context"
	"fmt"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// ClusterView selects the columns a cluster list reads.
type ClusterView int

const (
	// ClusterViewSummary reads what GET /v1/clusters shows: uuid, name,
	// cluster_template_id, keypair, docker_volume_size, labels,
	// master_flavor_id, flavor_id, create_timeout, stack_id, status and
	// health_status.
	ClusterViewSummary ClusterView = iota + 1
	// ClusterViewDetail reads what GET /v1/clusters/detail shows: every
	// column but the four certificate references.
	ClusterViewDetail
)

// clusterViewTables are clusterTable with the columns a view does not show
// skipped at scan time. The statement, and so the sort keys and the
// pagination, stay those of clusterTable; only the decoding (JSON columns,
// timestamps) of the skipped columns is saved.
var clusterViewTables = map[ClusterView]*table[magnum.Cluster]{
	ClusterViewSummary: clusterViewTable(func(q *Queries, v *magnum.Cluster) []any {
		return []any{skip{}, skip{}, str{&v.UUID}, str{&v.Name}, str{&v.ClusterTemplateID}, skip{},
			&v.StackID, skip{}, skip{}, &v.Status, skip{}, skip{}, skip{}, skip{}, &v.CreateTimeout, skip{},
			skip{}, &v.Keypair, &v.DockerVolumeSize, jsonMap{&v.Labels}, &v.MasterFlavorID, &v.FlavorID,
			&v.HealthStatus, skip{}, skip{}, skip{}, skip{}, skip{}, skip{}, skip{}}
	}),
	ClusterViewDetail: clusterViewTable(func(q *Queries, v *magnum.Cluster) []any {
		return []any{ts{&v.CreatedAt, q.d}, nts{&v.UpdatedAt, q.d}, str{&v.UUID}, str{&v.Name},
			str{&v.ClusterTemplateID}, &v.APIAddress, &v.StackID, str{&v.ProjectID}, str{&v.UserID}, &v.Status,
			&v.DiscoveryURL, &v.StatusReason, skip{}, skip{}, &v.CreateTimeout, &v.COEVersion,
			&v.ContainerVersion, &v.Keypair, &v.DockerVolumeSize, jsonMap{&v.Labels}, &v.MasterFlavorID,
			&v.FlavorID, &v.HealthStatus, jsonMap{&v.HealthStatusReason}, &v.FixedNetwork, &v.FixedSubnet,
			&v.FloatingIPEnabled, &v.MasterLBEnabled, skip{}, skip{}}
	}),
}

func clusterViewTable(binds func(*Queries, *magnum.Cluster) []any) *table[magnum.Cluster] {
	t := *clusterTable
	t.binds = binds
	return &t
}

// ListClustersView is ListClusters (same filter, pagination, order and
// errors) reading only the columns of view: the other fields of the
// returned clusters are left zero.
func (q *Queries) ListClustersView(ctx context.Context, f ClusterFilter, o ListOptions, view ClusterView) ([]magnum.Cluster, error) {
	t, ok := clusterViewTables[view]
	if !ok {
		return nil, fmt.Errorf("list clusters: unknown view %d", view)
	}
	c, err := f.cond()
	if err != nil {
		return nil, err
	}
	return list(ctx, q, t, c, o)
}

// skip is a column a view reads but does not use.
type skip struct{}

func (skip) Scan(any) error { return nil }
