package db

import (
	"context"
	"fmt"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// ListNodeGroupSizesOfClusters is ListNodeGroupsOfClusters for the cluster
// list views: it reads only cluster_id, role and node_count (and
// node_addresses when withAddresses) of the nodegroups of several
// clusters, in one query, keyed by cluster uuid, each ordered by id. The
// other fields of the returned nodegroups are left zero.
func (q *Queries) ListNodeGroupSizesOfClusters(ctx context.Context, clusterIDs []string, withAddresses bool) (map[string][]magnum.NodeGroup, error) {
	out := make(map[string][]magnum.NodeGroup, len(clusterIDs))
	if len(clusterIDs) == 0 {
		return out, nil
	}
	var c cond
	c.add(inList("cluster_id", len(clusterIDs)), anySlice(clusterIDs)...)
	cols := "cluster_id, role, node_count"
	if withAddresses {
		cols += ", node_addresses"
	}
	query := "SELECT " + cols + " FROM " + quote("nodegroup") + c.sql() + " ORDER BY id ASC"
	if q.lock {
		query += q.d.forUpdate()
	}
	rows, err := q.ex.QueryContext(ctx, q.d.rebind(query), c.args...)
	if err != nil {
		return nil, fmt.Errorf("select nodegroup: %w", err)
	}
	defer rows.Close()
	// Rows are read into small records first, then laid out per cluster
	// in one backing array; the few distinct roles are shared.
	type record struct {
		cluster string
		role    *string
		count   *int
		addrs   []string
	}
	var (
		// Two default nodegroups per cluster is the common case.
		recs  = make([]record, 0, 2*len(clusterIDs))
		roles = map[string]*string{}
		r     record
	)
	// Scan sets every destination on every row (NULL included), so one
	// record and one destination list serve all rows.
	dest := []any{str{&r.cluster}, &r.role, &r.count}
	if withAddresses {
		dest = append(dest, jsonList{&r.addrs})
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan nodegroup: %w", err)
		}
		if r.role != nil {
			if shared, ok := roles[*r.role]; ok {
				r.role = shared
			} else {
				roles[*r.role] = r.role
			}
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("select nodegroup: %w", err)
	}
	type span struct{ start, n, filled int }
	spans := make(map[string]*span, len(clusterIDs))
	for _, r := range recs {
		sp := spans[r.cluster]
		if sp == nil {
			sp = &span{start: -1}
			spans[r.cluster] = sp
		}
		sp.n++
	}
	// Each cluster's slice starts where its first nodegroup appears.
	next := 0
	for _, r := range recs {
		if sp := spans[r.cluster]; sp.start < 0 {
			sp.start = next
			next += sp.n
		}
	}
	backing := make([]magnum.NodeGroup, len(recs))
	for _, r := range recs {
		sp := spans[r.cluster]
		backing[sp.start+sp.filled] = magnum.NodeGroup{ClusterID: r.cluster, Role: r.role, NodeCount: r.count, NodeAddresses: r.addrs}
		sp.filled++
	}
	for id, sp := range spans {
		out[id] = backing[sp.start : sp.start+sp.n : sp.start+sp.n]
	}
	return out, nil
}
