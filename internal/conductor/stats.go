package conductor

import (
	"context"
	"fmt"
)

// Stats is the answer of GET /v1/stats.
type Stats struct {
	// Clusters counts the cluster rows (every status).
	Clusters int
	// Nodes sums node_count over the nodegroup rows, masters included.
	Nodes int
}

// ClusterStats counts the clusters and nodes of one project, or of every
// project when projectID is "" (logic.md §7).
//
// Magnum: magnum/db/sqlalchemy/api.py:221-236.
func (c *Conductor) ClusterStats(ctx context.Context, projectID string) (Stats, error) {
	clusters, nodes, err := c.DB.ClusterStats(ctx, projectID)
	if err != nil {
		return Stats{}, fmt.Errorf("cluster stats: %w", err)
	}
	return Stats{Clusters: clusters, Nodes: nodes}, nil
}
