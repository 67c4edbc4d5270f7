package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// clObject is a JSON object whose keys keep their order (Magnum's
// serialisation order, types.md §3).
type clObject []clKV

type clKV struct {
	k string
	v any
}

// MarshalJSON implements json.Marshaler.
func (o clObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			buf.WriteString(", ")
		}
		k, _ := json.Marshal(kv.k)
		buf.Write(k)
		buf.WriteString(": ")
		v, err := marshal(kv.v)
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// clCounts computes the nodegroup-derived fields of a cluster.
func clCounts(ngs []magnum.NodeGroup) (nodes, masters int, nodeAddrs, masterAddrs []string) {
	nodeAddrs, masterAddrs = []string{}, []string{}
	for _, ng := range ngs {
		n := 0
		if ng.NodeCount != nil {
			n = *ng.NodeCount
		}
		if ng.Role != nil && *ng.Role == magnum.RoleMaster {
			masters += n
			masterAddrs = append(masterAddrs, ng.NodeAddresses...)
			continue
		}
		nodes += n
		nodeAddrs = append(nodeAddrs, ng.NodeAddresses...)
	}
	return
}

func clMapOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// clLabelsDiff is api_utils.get_labels_diff: overridden (template value),
// added (cluster value), skipped (template value).
func clLabelsDiff(parent, labels map[string]string) (overridden, added, skipped map[string]string) {
	overridden, added, skipped = map[string]string{}, map[string]string{}, map[string]string{}
	for k, v := range parent {
		if _, ok := labels[k]; !ok {
			skipped[k] = v
		}
	}
	for k, v := range labels {
		pv, ok := parent[k]
		switch {
		case !ok:
			added[k] = v
		case pv != v:
			overridden[k] = pv
		}
	}
	return
}

// clusterView renders a cluster in the summary (detail false) or detail
// form of the request's microversion; faults is added when non-nil.
func clusterView(r *http.Request, cl *magnum.Cluster, ngs []magnum.NodeGroup, tmpl *magnum.ClusterTemplate, detail bool, faults map[string]*string) clObject {
	nodes, masters, nodeAddrs, masterAddrs := clCounts(ngs)
	base := BaseURL(r)
	links := []Link{MakeLink("self", base, "clusters", cl.UUID, false), MakeLink("bookmark", base, "clusters", cl.UUID, true)}
	stackKey := "stack_id"
	if APIVersion(r).Minor >= 13 {
		stackKey = "cluster_id"
	}
	labels := clMapOrEmpty(cl.Labels)
	o := clObject{
		{"uuid", cl.UUID}, {"name", cl.Name}, {"cluster_template_id", cl.ClusterTemplateID},
		{"keypair", cl.Keypair}, {"node_count", nodes}, {"master_count", masters},
		{"docker_volume_size", cl.DockerVolumeSize}, {"labels", labels},
		{"master_flavor_id", cl.MasterFlavorID}, {"flavor_id", cl.FlavorID},
		{"create_timeout", cl.CreateTimeout}, {"links", links}, {stackKey, cl.StackID},
		{"status", cl.Status},
	}
	if !detail {
		return append(o, clKV{"health_status", cl.HealthStatus}, clKV{"merge_labels", false})
	}
	var parent map[string]string
	if tmpl != nil {
		parent = tmpl.Labels
	}
	overridden, added, skipped := clLabelsDiff(parent, labels)
	o = append(o,
		clKV{"status_reason", cl.StatusReason}, clKV{"health_status", cl.HealthStatus},
		clKV{"health_status_reason", clMapOrEmpty(cl.HealthStatusReason)}, clKV{"discovery_url", cl.DiscoveryURL},
		clKV{"api_address", cl.APIAddress}, clKV{"coe_version", cl.COEVersion},
		clKV{"container_version", cl.ContainerVersion}, clKV{"project_id", cl.ProjectID},
		clKV{"user_id", cl.UserID}, clKV{"node_addresses", nodeAddrs}, clKV{"master_addresses", masterAddrs})
	if faults != nil {
		o = append(o, clKV{"faults", faults})
	}
	o = append(o,
		clKV{"fixed_network", cl.FixedNetwork}, clKV{"fixed_subnet", cl.FixedSubnet},
		clKV{"floating_ip_enabled", cl.FloatingIPEnabled}, clKV{"merge_labels", false},
		clKV{"labels_overridden", overridden}, clKV{"labels_added", added}, clKV{"labels_skipped", skipped},
		clKV{"master_lb_enabled", cl.MasterLBEnabled},
		clKV{"created_at", FormatTimePtr(nonZero(cl.CreatedAt))}, clKV{"updated_at", FormatTimePtr(cl.UpdatedAt)})
	return o
}

// clusterFaults is the faults map of GET /clusters/{id} for a failed
// cluster: nodegroup name → status_reason of failed nodegroups; nil when
// the cluster is not in a failed status. A NULL status_reason stays null,
// as Magnum shows it.
func clusterFaults(cl *magnum.Cluster, ngs []magnum.NodeGroup) map[string]*string {
	if cl.Status == nil {
		return nil
	}
	failed := false
	for _, s := range magnum.FaultStatuses {
		if *cl.Status == s {
			failed = true
		}
	}
	if !failed {
		return nil
	}
	out := map[string]*string{}
	for _, ng := range ngs {
		if ng.Status != nil && magnum.IsFailed(*ng.Status) {
			out[ng.Name] = ng.StatusReason
		}
	}
	return out
}

// clusterTarget is the policy target of a cluster (its as_dict()).
func clusterTarget(cl *magnum.Cluster) map[string]any {
	return map[string]any{
		"id": cl.ID, "uuid": cl.UUID, "name": cl.Name, "project_id": cl.ProjectID, "user_id": cl.UserID,
		"cluster_template_id": cl.ClusterTemplateID, "status": clAnyStatus(cl.Status), "stack_id": clAnyStr(cl.StackID),
		"keypair": clAnyStr(cl.Keypair), "api_address": clAnyStr(cl.APIAddress),
	}
}

func clAnyStr(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func clAnyStatus(p *magnum.Status) any {
	if p == nil {
		return nil
	}
	return string(*p)
}

// clusterPageView renders a list page.
func clusterPageView(r *http.Request, page *conductor.ClusterPage, detail bool) []clObject {
	out := make([]clObject, 0, len(page.Clusters))
	for i := range page.Clusters {
		cl := &page.Clusters[i]
		var t *magnum.ClusterTemplate
		if tt, ok := page.Templates[cl.ClusterTemplateID]; ok {
			t = &tt
		}
		out = append(out, clusterView(r, cl, page.NodeGroups[cl.UUID], t, detail, nil))
	}
	return out
}
