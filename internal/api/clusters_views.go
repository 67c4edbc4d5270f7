package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

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

// clStreamThreshold is the body size up to which a list page is written
// in one piece with a Content-Length, as every other response. A larger
// page is written while it is rendered, in pieces of about this size and
// without a Content-Length (chunked on HTTP/1.1), so that a request in
// flight holds this much of its body instead of all of it.
//
// Deviation: Magnum sends a Content-Length with every body; the body is
// the same bytes.
const clStreamThreshold = 64 << 10

// writeClusterPage writes a list page (status 200, see clStreamThreshold).
func writeClusterPage(w http.ResponseWriter, r *http.Request, page *conductor.ClusterPage, detail bool, next string) error {
	var werr error
	started := false
	flush := func(b []byte) []byte {
		if len(b) < clStreamThreshold {
			return b
		}
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
		}
		if werr == nil {
			_, werr = w.Write(b)
		}
		return b[:0]
	}
	b := appendClusterPage(nil, r, page, detail, next, flush)
	if started {
		if werr == nil {
			_, werr = w.Write(b)
		}
		// The status line is out: a failed write means the client is
		// gone, and there is nothing left to tell it.
		return nil
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}

// appendClusterPage renders the body of a cluster list page: what
// marshalling {"clusters": [clusterView(…) for each cluster], "next": next}
// gave, byte for byte (compact, fields in Magnum's order, map keys sorted,
// strings escaped as encoding/json does without HTML escaping), in one
// pass. next is omitted when empty. flush, when set, is called after each
// cluster with the pending bytes and returns the buffer to go on with.
func appendClusterPage(b []byte, r *http.Request, page *conductor.ClusterPage, detail bool, next string, flush func([]byte) []byte) []byte {
	base := BaseURL(r)
	p := clPageRenderer{
		detail:   detail,
		self:     appendJSONString(nil, base+"/v1/clusters/"),
		bookmark: appendJSONString(nil, base+"/clusters/"),
		stackKey: `"stack_id":`,
		parents:  map[string]clParentLabels{},
	}
	if APIVersion(r).Minor >= 13 {
		p.stackKey = `"cluster_id":`
	}
	// The self and bookmark hrefs are written as an escaped prefix plus
	// the escaped uuid: the prefixes end in ASCII, so escaping the parts
	// gives the bytes escaping the whole gives.
	p.self = p.self[:len(p.self)-1]
	p.bookmark = p.bookmark[:len(p.bookmark)-1]
	b = append(b, `{"clusters":[`...)
	for i := range page.Clusters {
		if i > 0 {
			b = append(b, ',')
		}
		start := len(b)
		b = p.appendCluster(b, page, &page.Clusters[i])
		if i == 0 && len(page.Clusters) > 1 {
			// Size the buffer once from the first item: the whole body,
			// or a piece and some slack when it is flushed.
			item := len(b) - start + 1
			need := item*(len(page.Clusters)-1)*9/8 + len(next) + 64
			if flush != nil {
				need = min(need, clStreamThreshold+4*item)
			}
			b = slices.Grow(b, need)
		}
		if flush != nil {
			b = flush(b)
		}
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"next":`...)
		b = appendJSONString(b, next)
	}
	return append(b, '}')
}

// clPageRenderer holds what every item of a page shares.
type clPageRenderer struct {
	detail         bool
	self, bookmark []byte // escaped href prefixes without the closing quote
	stackKey       string
	// parents caches the labels of each template and their sorted keys.
	parents map[string]clParentLabels
	// keys are the sorted label keys of the cluster being written;
	// scratch is for other maps.
	keys, scratch []string
}

type clParentLabels struct {
	labels map[string]string
	keys   []string
}

func (p *clPageRenderer) appendCluster(b []byte, page *conductor.ClusterPage, cl *magnum.Cluster) []byte {
	nodes, masters := 0, 0
	ngs := page.NodeGroups[cl.UUID]
	for i := range ngs {
		ng := &ngs[i]
		n := 0
		if ng.NodeCount != nil {
			n = *ng.NodeCount
		}
		if ng.Role != nil && *ng.Role == magnum.RoleMaster {
			masters += n
		} else {
			nodes += n
		}
	}
	b = append(b, `{"uuid":`...)
	b = appendJSONString(b, cl.UUID)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, cl.Name)
	b = append(b, `,"cluster_template_id":`...)
	b = appendJSONString(b, cl.ClusterTemplateID)
	b = append(b, `,"keypair":`...)
	b = appendJSONStringPtr(b, cl.Keypair)
	b = append(b, `,"node_count":`...)
	b = strconv.AppendInt(b, int64(nodes), 10)
	b = append(b, `,"master_count":`...)
	b = strconv.AppendInt(b, int64(masters), 10)
	b = append(b, `,"docker_volume_size":`...)
	b = appendJSONIntPtr(b, cl.DockerVolumeSize)
	b = append(b, `,"labels":`...)
	p.keys = sortedLabelKeys(p.keys[:0], cl.Labels)
	b = appendJSONLabels(b, p.keys, cl.Labels)
	b = append(b, `,"master_flavor_id":`...)
	b = appendJSONStringPtr(b, cl.MasterFlavorID)
	b = append(b, `,"flavor_id":`...)
	b = appendJSONStringPtr(b, cl.FlavorID)
	b = append(b, `,"create_timeout":`...)
	b = appendJSONIntPtr(b, cl.CreateTimeout)
	b = append(b, `,"links":[{"href":`...)
	b = append(b, p.self...)
	b = appendJSONStringBody(b, cl.UUID)
	b = append(b, `","rel":"self"},{"href":`...)
	b = append(b, p.bookmark...)
	b = appendJSONStringBody(b, cl.UUID)
	b = append(b, `","rel":"bookmark"}],`...)
	b = append(b, p.stackKey...)
	b = appendJSONStringPtr(b, cl.StackID)
	b = append(b, `,"status":`...)
	if cl.Status != nil {
		b = appendJSONString(b, string(*cl.Status))
	} else {
		b = append(b, "null"...)
	}
	if !p.detail {
		b = append(b, `,"health_status":`...)
		b = appendJSONStringPtr(b, cl.HealthStatus)
		return append(b, `,"merge_labels":false}`...)
	}
	b = append(b, `,"status_reason":`...)
	b = appendJSONStringPtr(b, cl.StatusReason)
	b = append(b, `,"health_status":`...)
	b = appendJSONStringPtr(b, cl.HealthStatus)
	b = append(b, `,"health_status_reason":`...)
	b = p.appendJSONMap(b, cl.HealthStatusReason)
	b = append(b, `,"discovery_url":`...)
	b = appendJSONStringPtr(b, cl.DiscoveryURL)
	b = append(b, `,"api_address":`...)
	b = appendJSONStringPtr(b, cl.APIAddress)
	b = append(b, `,"coe_version":`...)
	b = appendJSONStringPtr(b, cl.COEVersion)
	b = append(b, `,"container_version":`...)
	b = appendJSONStringPtr(b, cl.ContainerVersion)
	b = append(b, `,"project_id":`...)
	b = appendJSONString(b, cl.ProjectID)
	b = append(b, `,"user_id":`...)
	b = appendJSONString(b, cl.UserID)
	b = append(b, `,"node_addresses":`...)
	b = appendClAddresses(b, ngs, false)
	b = append(b, `,"master_addresses":`...)
	b = appendClAddresses(b, ngs, true)
	b = append(b, `,"fixed_network":`...)
	b = appendJSONStringPtr(b, cl.FixedNetwork)
	b = append(b, `,"fixed_subnet":`...)
	b = appendJSONStringPtr(b, cl.FixedSubnet)
	b = append(b, `,"floating_ip_enabled":`...)
	b = appendJSONBoolPtr(b, cl.FloatingIPEnabled)
	b = append(b, `,"merge_labels":false`...)
	b = p.appendLabelsDiff(b, page, cl)
	b = append(b, `,"master_lb_enabled":`...)
	b = appendJSONBoolPtr(b, cl.MasterLBEnabled)
	b = append(b, `,"created_at":`...)
	if cl.CreatedAt.IsZero() {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, FormatTime(cl.CreatedAt))
	}
	b = append(b, `,"updated_at":`...)
	if cl.UpdatedAt == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, FormatTime(*cl.UpdatedAt))
	}
	return append(b, '}')
}

// appendLabelsDiff writes labels_overridden, labels_added and
// labels_skipped (clLabelsDiff) from p.keys, the sorted keys of the
// cluster's labels, and the template's sorted keys.
func (p *clPageRenderer) appendLabelsDiff(b []byte, page *conductor.ClusterPage, cl *magnum.Cluster) []byte {
	tp, ok := p.parents[cl.ClusterTemplateID]
	if !ok {
		if t, ok := page.Templates[cl.ClusterTemplateID]; ok {
			tp.labels = t.Labels
		}
		tp.keys = sortedLabelKeys(nil, tp.labels)
		p.parents[cl.ClusterTemplateID] = tp
	}
	parent, pkeys := tp.labels, tp.keys
	b = append(b, `,"labels_overridden":{`...)
	first := true
	for _, k := range p.keys {
		if pv, ok := parent[k]; ok && pv != cl.Labels[k] {
			b = appendJSONPair(b, &first, k, pv)
		}
	}
	b = append(b, `},"labels_added":{`...)
	first = true
	for _, k := range p.keys {
		if _, ok := parent[k]; !ok {
			b = appendJSONPair(b, &first, k, cl.Labels[k])
		}
	}
	b = append(b, `},"labels_skipped":{`...)
	first = true
	for _, k := range pkeys {
		if _, ok := cl.Labels[k]; !ok {
			b = appendJSONPair(b, &first, k, parent[k])
		}
	}
	return append(b, '}')
}

// appendClAddresses writes the addresses of the master (or the other)
// nodegroups, in nodegroup order, as clCounts collects them.
func appendClAddresses(b []byte, ngs []magnum.NodeGroup, masters bool) []byte {
	b = append(b, '[')
	first := true
	for i := range ngs {
		ng := &ngs[i]
		if (ng.Role != nil && *ng.Role == magnum.RoleMaster) != masters {
			continue
		}
		for _, a := range ng.NodeAddresses {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, a)
		}
	}
	return append(b, ']')
}

// sortedLabelKeys appends the keys of m to dst, sorted as encoding/json
// sorts map keys.
func sortedLabelKeys(dst []string, m map[string]string) []string {
	for k := range m {
		dst = append(dst, k)
	}
	slices.Sort(dst)
	return dst
}

func appendJSONPair(b []byte, first *bool, k, v string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = appendJSONString(b, k)
	b = append(b, ':')
	return appendJSONString(b, v)
}

// appendJSONLabels writes m with its keys in the given (sorted) order.
func appendJSONLabels(b []byte, keys []string, m map[string]string) []byte {
	b = append(b, '{')
	first := true
	for _, k := range keys {
		b = appendJSONPair(b, &first, k, m[k])
	}
	return append(b, '}')
}

// appendJSONMap writes m as encoding/json does ({} for nil).
func (p *clPageRenderer) appendJSONMap(b []byte, m map[string]string) []byte {
	p.scratch = sortedLabelKeys(p.scratch[:0], m)
	return appendJSONLabels(b, p.scratch, m)
}

func appendJSONStringPtr(b []byte, p *string) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *p)
}

func appendJSONIntPtr(b []byte, p *int) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*p), 10)
}

func appendJSONBoolPtr(b []byte, p *bool) []byte {
	switch {
	case p == nil:
		return append(b, "null"...)
	case *p:
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendJSONString writes s as a JSON string the way encoding/json does
// with HTML escaping off.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendJSONStringBody(b, s)
	return append(b, '"')
}

const jsonHex = "0123456789abcdef"

// appendJSONStringBody writes s escaped, without the quotes: '"' and '\'
// backslashed, \b \f \n \r \t short forms, other control characters as
// \u00XX, invalid UTF-8 bytes as \ufffd, U+2028 and U+2029 escaped,
// everything else (<, >, & included) as is.
func appendJSONStringBody(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', jsonHex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
