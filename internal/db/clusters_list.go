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
			skip{}, &v.Keypair, &v.DockerVolumeSize, fastMap{&v.Labels}, &v.MasterFlavorID, &v.FlavorID,
			&v.HealthStatus, skip{}, skip{}, skip{}, skip{}, skip{}, skip{}, skip{}}
	}),
	ClusterViewDetail: clusterViewTable(func(q *Queries, v *magnum.Cluster) []any {
		return []any{ts{&v.CreatedAt, q.d}, nts{&v.UpdatedAt, q.d}, str{&v.UUID}, str{&v.Name},
			str{&v.ClusterTemplateID}, &v.APIAddress, &v.StackID, str{&v.ProjectID}, str{&v.UserID}, &v.Status,
			&v.DiscoveryURL, &v.StatusReason, skip{}, skip{}, &v.CreateTimeout, &v.COEVersion,
			&v.ContainerVersion, &v.Keypair, &v.DockerVolumeSize, fastMap{&v.Labels}, &v.MasterFlavorID,
			&v.FlavorID, &v.HealthStatus, fastMap{&v.HealthStatusReason}, &v.FixedNetwork, &v.FixedSubnet,
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

// fastMap is jsonMap with a fast path for the common case, a flat JSON
// object of plain ASCII strings: its keys and values are cut out of the
// column text instead of going through encoding/json. Anything else
// (escapes, non-ASCII, other value types, null) takes jsonMap's decoding,
// so the result is always the same as jsonMap's.
type fastMap struct{ p *map[string]string }

func (c fastMap) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return jsonMap(c).Scan(src)
	}
	if m, ok := parseFlatObject(s); ok {
		*c.p = m
		return nil
	}
	return jsonMap(c).Scan(s)
}

// fastList is jsonList with the same fast path as fastMap, for a flat
// JSON array of plain ASCII strings.
type fastList struct{ p *[]string }

func (c fastList) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return jsonList(c).Scan(src)
	}
	if l, ok := parseFlatArray(s); ok {
		*c.p = l
		return nil
	}
	return jsonList(c).Scan(s)
}

// jsonSpace reports JSON's insignificant whitespace.
func jsonSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func skipSpace(s string, i int) int {
	for i < len(s) && jsonSpace(s[i]) {
		i++
	}
	return i
}

// plainString reads the JSON string starting at s[i] (a '"') when it holds
// printable ASCII without escapes, returning it and the index after it.
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch b := s[j]; {
		case b == '"':
			return s[i+1 : j], j + 1, true
		case b == '\\' || b < 0x20 || b >= 0x80:
			return "", 0, false
		}
	}
	return "", 0, false
}

// parseFlatObject decodes s when it is a JSON object whose values are all
// plain strings (see plainString); a repeated key keeps its last value, as
// encoding/json does. ok is false for anything else.
func parseFlatObject(s string) (map[string]string, bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return nil, false
	}
	i = skipSpace(s, i+1)
	n := 0
	if i < len(s) && s[i] != '}' {
		// Size the map from the number of separators (an upper bound
		// on the number of pairs for plain strings without commas).
		n = 1
		for j := i; j < len(s); j++ {
			if s[j] == ',' {
				n++
			}
		}
	}
	m := make(map[string]string, n)
	if i < len(s) && s[i] == '}' {
		return m, skipSpace(s, i+1) == len(s)
	}
	for {
		k, j, ok := plainString(s, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return nil, false
		}
		v, j, ok := plainString(s, skipSpace(s, i+1))
		if !ok {
			return nil, false
		}
		m[k] = v
		i = skipSpace(s, j)
		if i >= len(s) {
			return nil, false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			return m, skipSpace(s, i+1) == len(s)
		default:
			return nil, false
		}
	}
}

// parseFlatArray decodes s when it is a JSON array of plain strings (see
// plainString). ok is false for anything else.
func parseFlatArray(s string) ([]string, bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return nil, false
	}
	i = skipSpace(s, i+1)
	l := []string{}
	if i < len(s) && s[i] == ']' {
		return l, skipSpace(s, i+1) == len(s)
	}
	for {
		v, j, ok := plainString(s, i)
		if !ok {
			return nil, false
		}
		l = append(l, v)
		i = skipSpace(s, j)
		if i >= len(s) {
			return nil, false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case ']':
			return l, skipSpace(s, i+1) == len(s)
		default:
			return nil, false
		}
	}
}
