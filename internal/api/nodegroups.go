package api

import (
	"math/big"
	"net/http"
	"reflect"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/api/jsonpatch"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// registerSecondaryResources binds the nodegroup, quota, stats, federation
// and credential handlers; without a conductor their routes answer 501.
func (s *server) registerSecondaryResources() {
	if s.opts.Conductor == nil {
		return
	}
	s.register("nodegroup.get_all", s.listNodeGroups)
	s.register("nodegroup.get_one", s.getNodeGroup)
	s.register("nodegroup.post", s.createNodeGroup)
	s.register("nodegroup.patch", s.patchNodeGroup)
	s.register("nodegroup.delete", s.deleteNodeGroup)
	s.registerQuotas()
	s.registerStats()
	s.registerFederations()
	s.registerCredentials()
}

// nodeGroupAttrs are the attributes of WSME's NodeGroup type.
var nodeGroupAttrs = []string{"id", "uuid", "name", "cluster_id", "project_id", "docker_volume_size", "labels",
	"links", "flavor_id", "image_id", "node_addresses", "node_count", "role", "min_node_count", "max_node_count",
	"is_default", "stack_id", "status", "status_reason", "version", "merge_labels", "labels_overridden",
	"labels_added", "labels_skipped", "node_labels", "node_taints", "created_at", "updated_at"}

// ngCaller returns the request's identity (never nil).
func ngCaller(r *http.Request) *magnum.RequestContext {
	if rc := magnum.FromContext(r.Context()); rc != nil {
		return rc
	}
	return &magnum.RequestContext{}
}

// listNodeGroups is GET /v1/clusters/{cluster_id}/nodegroups (routes.md #11).
func (s *server) listNodeGroups(w http.ResponseWriter, r *http.Request) error {
	rc := ngCaller(r)
	if err := s.Enforce(r, "nodegroup:get_all", nil); err != nil {
		return err
	}
	all := false
	if rc.IsAdmin {
		if err := s.Enforce(r, "nodegroup:get_all_all_projects", nil); err != nil {
			return err
		}
		all = true
	}
	c := s.opts.Conductor
	cl, err := c.GetCluster(r.Context(), r.PathValue("cluster_id"), conductor.ScopeFor(rc, all))
	if err != nil {
		return err
	}
	role, _ := QueryString(r, "role")
	marker, limit, sortKey, sortDir, err := s.ngPageOptions(r)
	if err != nil {
		return err
	}
	rows, err := c.ListNodeGroups(r.Context(), rc, cl.UUID, role,
		conductor.ListParams{Marker: marker, Limit: limit, SortKey: sortKey, SortDir: sortDir})
	if err != nil {
		return err
	}
	items := make([]any, 0, len(rows))
	for i := range rows {
		items = append(items, nodeGroupSummary(&rows[i]))
	}
	out := map[string]any{"nodegroups": items}
	if len(rows) > 0 && len(rows) == limit {
		out["next"] = NextLink(r, "clusters/"+cl.UUID+"/nodegroups",
			[][2]string{{"sort_key", sortKey}, {"sort_dir", sortDir}}, limit, rows[len(rows)-1].UUID)
	}
	return WriteJSON(w, http.StatusOK, out)
}

// getNodeGroup is GET /v1/clusters/{cluster_id}/nodegroups/{nodegroup_id}
// (routes.md #12).
func (s *server) getNodeGroup(w http.ResponseWriter, r *http.Request) error {
	rc := ngCaller(r)
	if err := s.Enforce(r, "nodegroup:get", nil); err != nil {
		return err
	}
	all := false
	if rc.IsAdmin {
		if err := s.Enforce(r, "nodegroup:get_one_all_projects", nil); err != nil {
			return err
		}
		all = true
	}
	c := s.opts.Conductor
	cl, err := c.GetCluster(r.Context(), r.PathValue("cluster_id"), conductor.ScopeFor(rc, all))
	if err != nil {
		return err
	}
	ng, err := c.GetNodeGroup(r.Context(), cl.UUID, r.PathValue("nodegroup_id"), conductor.NodeGroupScopeFor(rc))
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, nodeGroupDetail(r, ng, cl.Labels, ngFieldsAll))
}

// nodeGroupInput is a parsed nodegroup POST body.
type nodeGroupInput struct {
	ng          magnum.NodeGroup
	mergeLabels bool
	labelsSet   bool
	labelOrder  []string
	nameSet     bool
}

// parseNodeGroup converts a nodegroup POST body with WSME's rules and
// NodeGroup's defaults (node_count 1, role worker, min_node_count 0).
func parseNodeGroup(r *http.Request) (*nodeGroupInput, error) {
	b, err := readWSBody(r, "nodegroup")
	if err != nil {
		return nil, err
	}
	if err := b.checkAttributes(nodeGroupAttrs); err != nil {
		return nil, err
	}
	in := &nodeGroupInput{}
	ng := &in.ng
	id, err := b.optInt("id", magnum.RangeID)
	if err != nil {
		return nil, err
	}
	if id != nil {
		ng.ID = int64(*id)
	}
	if _, err := b.optUUID("uuid"); err != nil {
		return nil, err
	}
	name, err := b.optString("name", 1, magnum.StringMaxLength, nil, "")
	if err != nil {
		return nil, err
	}
	if name != nil {
		ng.Name, in.nameSet = *name, true
	}
	if _, err := b.optUUID("cluster_id"); err != nil {
		return nil, err
	}
	if err := b.readonly("project_id"); err != nil {
		return nil, err
	}
	if ng.DockerVolumeSize, err = b.optInt("docker_volume_size", magnum.RangeDockerVolumeSize); err != nil {
		return nil, err
	}
	if ng.Labels, err = b.optLabels("labels"); err != nil {
		return nil, err
	}
	in.labelsSet = ng.Labels != nil
	if err := b.readonly("links"); err != nil {
		return nil, err
	}
	if ng.FlavorID, err = b.optString("flavor_id", 1, magnum.StringMaxLength, nil, ""); err != nil {
		return nil, err
	}
	if ng.ImageID, err = b.optString("image_id", 1, magnum.StringMaxLength, nil, ""); err != nil {
		return nil, err
	}
	if err := b.readonly("node_addresses"); err != nil {
		return nil, err
	}
	if ng.NodeCount, err = b.optInt("node_count", magnum.RangeNodeCount); err != nil {
		return nil, err
	}
	if !b.has("node_count") {
		one := 1
		ng.NodeCount = &one
	}
	if ng.Role, err = b.optString("role", 1, magnum.StringMaxLength, nil, ""); err != nil {
		return nil, err
	}
	if !b.has("role") {
		worker := magnum.RoleWorker
		ng.Role = &worker
	}
	if ng.MinNodeCount, err = b.optInt("min_node_count", magnum.RangeMinNodeCount); err != nil {
		return nil, err
	}
	if !b.has("min_node_count") {
		zero := 0
		ng.MinNodeCount = &zero
	}
	if ng.MaxNodeCount, err = b.optInt("max_node_count", magnum.RangeMaxNodeCount); err != nil {
		return nil, err
	}
	if ng.IsDefault, err = b.optBool("is_default"); err != nil {
		return nil, err
	}
	if err := b.readonly("stack_id"); err != nil {
		return nil, err
	}
	st, err := b.optEnum("status", ngStatusNames(magnum.ClusterStatuses))
	if err != nil {
		return nil, err
	}
	if st != nil {
		s := magnum.Status(*st)
		ng.Status = &s
	}
	if ng.StatusReason, err = b.optText("status_reason"); err != nil {
		return nil, err
	}
	if ng.Version, err = b.optText("version"); err != nil {
		return nil, err
	}
	merge, err := b.optBool("merge_labels")
	if err != nil {
		return nil, err
	}
	in.mergeLabels = merge != nil && *merge
	for _, k := range []string{"labels_overridden", "labels_added", "labels_skipped"} {
		if _, err := b.optLabels(k); err != nil {
			return nil, err
		}
	}
	if ng.NodeLabels, in.labelOrder, err = b.optStringMap("node_labels"); err != nil {
		return nil, err
	}
	taints, err := b.optTaints("node_taints")
	if err != nil {
		return nil, err
	}
	if taints != nil {
		ng.NodeTaints = make([]magnum.NodeTaint, len(taints))
		for i, t := range taints {
			ng.NodeTaints[i] = magnum.NodeTaint(t)
		}
	}
	if err := b.readonly("created_at", "updated_at"); err != nil {
		return nil, err
	}
	return in, nil
}

func ngStatusNames(ss []magnum.Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// validateNodeGroupRules applies logic.md §8 rules 1-4 (409); name is the
// nodegroup's name as Magnum prints it ("None" when unset).
func validateNodeGroupRules(ng *magnum.NodeGroup, name string, labelOrder []string) error {
	in := magnum.NodeGroupInput{Name: name, NodeLabels: ng.NodeLabels, NodeLabelOrder: labelOrder}
	if ng.Role != nil {
		in.Role = *ng.Role
	}
	if ng.NodeCount != nil {
		in.NodeCount = int64(*ng.NodeCount)
	}
	if ng.MinNodeCount != nil {
		in.MinNodeCount = int64(*ng.MinNodeCount)
	}
	if ng.MaxNodeCount != nil {
		m := int64(*ng.MaxNodeCount)
		in.MaxNodeCount = &m
	}
	for _, t := range ng.NodeTaints {
		in.NodeTaints = append(in.NodeTaints, map[string]string(t))
	}
	return magnum.ValidateNodeGroupInput(in)
}

// createNodeGroup is POST /v1/clusters/{cluster_id}/nodegroups (routes.md
// #13): 202 with the nodegroup as the API built it.
func (s *server) createNodeGroup(w http.ResponseWriter, r *http.Request) error {
	in, err := parseNodeGroup(r)
	if err != nil {
		return err
	}
	rc := ngCaller(r)
	if err := s.Enforce(r, "nodegroup:create", nil); err != nil {
		return err
	}
	c := s.opts.Conductor
	ctx := r.Context()
	cl, err := c.GetCluster(ctx, r.PathValue("cluster_id"), conductor.ScopeFor(rc, false))
	if err != nil {
		return err
	}
	if cl.APIAddress == nil || *cl.APIAddress == "" {
		return magnum.ClusterAPIAddressUnavailable()
	}
	ng := &in.ng
	if in.nameSet {
		used, err := c.NodeGroupNameUsed(ctx, cl.UUID, ng.Name)
		if err != nil {
			return err
		}
		if used {
			return magnum.NodeGroupAlreadyExists(ng.Name, cl.Name)
		}
	}
	display := ng.Name
	if !in.nameSet {
		display = "None"
	}
	if err := validateNodeGroupRules(ng, display, in.labelOrder); err != nil {
		return err
	}
	if ng.Role != nil && *ng.Role == magnum.RoleMaster {
		return magnum.CreateMasterNodeGroup()
	}
	if ng.ImageID == nil {
		t, err := c.ClusterTemplateOf(ctx, cl)
		if err != nil {
			return err
		}
		ng.ImageID = t.ImageID
	}
	if ng.FlavorID == nil {
		ng.FlavorID = cl.FlavorID
	}
	clusterLabels := cl.Labels
	if clusterLabels == nil {
		clusterLabels = map[string]string{}
	}
	switch {
	case !in.labelsSet:
		ng.Labels = ngCopyLabels(clusterLabels)
	case in.mergeLabels:
		merged := ngCopyLabels(clusterLabels)
		for k, v := range ng.Labels {
			merged[k] = v
		}
		ng.Labels = merged
	}
	if err := c.CheckFlavorRootVolume(ctx, ng.FlavorID, clusterLabels); err != nil {
		return err
	}
	if !in.nameSet {
		// Magnum: the NodeGroup object refuses a None name (an unhandled
		// 500).
		return magnum.ServerError("Field `name' cannot be None")
	}
	ng.ClusterID = cl.UUID
	ng.ProjectID = rc.ProjectID
	ng.UUID = ngNewUUID(c)
	if ng.IsDefault == nil {
		f := false
		ng.IsDefault = &f
	}
	sent := *ng
	if err := c.CreateNodeGroup(ctx, rc, cl, ng); err != nil {
		return err
	}
	// Deviation: Magnum answers with the unsaved object (no id or
	// created_at unless the client sent them); we store the row first and
	// show its id and created_at, as Magnum's own tests observe through
	// their synchronous conductor stand-in.
	sent.ID, sent.CreatedAt = ng.ID, ng.CreatedAt
	return WriteJSON(w, http.StatusAccepted, nodeGroupDetail(r, &sent, clusterLabels, ngFieldsSent))
}

func ngNewUUID(c *conductor.Conductor) string {
	if c.NewUUID != nil {
		return c.NewUUID()
	}
	return conductor.NewUUID()
}

func ngCopyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// patchNodeGroup is PATCH /v1/clusters/{cluster_id}/nodegroups/{nodegroup_id}
// (routes.md #14): only min_node_count, max_node_count, node_labels and
// node_taints can change.
func (s *server) patchNodeGroup(w http.ResponseWriter, r *http.Request) error {
	raw, err := RequireBody(r)
	if err != nil {
		return err
	}
	ops, err := jsonpatch.ParseAndCheck(raw, jsonpatch.NodeGroupRules)
	if err != nil {
		return err
	}
	rc := ngCaller(r)
	c := s.opts.Conductor
	ctx := r.Context()
	cl, err := c.GetCluster(ctx, r.PathValue("cluster_id"), conductor.ScopeFor(rc, false))
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "nodegroup:update", nil); err != nil {
		return err
	}
	ng, err := c.GetNodeGroup(ctx, cl.UUID, r.PathValue("nodegroup_id"), conductor.NodeGroupScopeFor(rc))
	if err != nil {
		return err
	}
	doc := nodeGroupDoc(ng)
	patched, err := jsonpatch.Apply(doc, ops, jsonpatch.NodeGroupRules)
	if err != nil {
		return err
	}
	updated := *ng
	cols, labelOrder, err := applyNodeGroupPatch(&updated, doc, patched)
	if err != nil {
		return err
	}
	clusterLabels := cl.Labels
	if clusterLabels == nil {
		clusterLabels = map[string]string{}
	}
	if err := c.CheckFlavorRootVolume(ctx, updated.FlavorID, clusterLabels); err != nil {
		return err
	}
	if err := validateNodeGroupRules(&updated, updated.Name, labelOrder); err != nil {
		return err
	}
	shown := updated
	if err := c.UpdateNodeGroup(ctx, rc, cl, &updated, cols); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, nodeGroupDetail(r, &shown, clusterLabels, ngFieldsAll))
}

// nodeGroupDoc is the nodegroup's as_dict(): every column, JSON-like.
func nodeGroupDoc(ng *magnum.NodeGroup) map[string]any {
	taints := make([]any, 0, len(ng.NodeTaints))
	for _, t := range ng.NodeTaints {
		m := map[string]any{}
		for k, v := range t {
			m[k] = v
		}
		taints = append(taints, m)
	}
	addrs := make([]any, 0, len(ng.NodeAddresses))
	for _, a := range ng.NodeAddresses {
		addrs = append(addrs, a)
	}
	return map[string]any{
		"id": ng.ID, "uuid": ng.UUID, "name": ng.Name, "cluster_id": ng.ClusterID, "project_id": ng.ProjectID,
		"docker_volume_size": ngInt(ng.DockerVolumeSize), "labels": ngMap(ng.Labels),
		"flavor_id": ngStr(ng.FlavorID), "image_id": ngStr(ng.ImageID), "node_addresses": addrs,
		"node_count": ngInt(ng.NodeCount), "role": ngStr(ng.Role), "max_node_count": ngInt(ng.MaxNodeCount),
		"min_node_count": ngInt(ng.MinNodeCount), "is_default": ngBool(ng.IsDefault),
		"stack_id": ngStr(ng.StackID), "status": ngStatus(ng.Status), "status_reason": ngStr(ng.StatusReason),
		"version": ngStr(ng.Version), "node_labels": ngMap(ng.NodeLabels), "node_taints": taints,
		"created_at": FormatTime(ng.CreatedAt), "updated_at": ngTime(FormatTimePtr(ng.UpdatedAt)),
	}
}

// applyNodeGroupPatch copies the attributes a patch changed onto ng, with
// WSME's checks of the rebuilt NodeGroup (an attribute removed by the patch
// takes its default: min_node_count 0, others None). It returns the
// changed columns and the key order of node_labels.
func applyNodeGroupPatch(ng *magnum.NodeGroup, before, after map[string]any) ([]string, []string, error) {
	var cols, labelOrder []string
	changed := func(k string) bool {
		a, aok := after[k]
		b := before[k]
		if !aok {
			return b != nil
		}
		return !reflect.DeepEqual(ngPlain(a), ngPlain(b))
	}
	if changed("min_node_count") {
		v, ok := after["min_node_count"]
		n, err := ngPatchedInt("min_node_count", v, ok, 0, true)
		if err != nil {
			return nil, nil, err
		}
		ng.MinNodeCount = n
		cols = append(cols, "min_node_count")
	}
	if changed("max_node_count") {
		v, ok := after["max_node_count"]
		n, err := ngPatchedInt("max_node_count", v, ok, 0, false)
		if err != nil {
			return nil, nil, err
		}
		ng.MaxNodeCount = n
		cols = append(cols, "max_node_count")
	}
	if changed("node_labels") {
		m, err := jsonpatch.StringMap("node_labels", after["node_labels"])
		if err != nil {
			return nil, nil, err
		}
		ng.NodeLabels = m
		labelOrder = jsonpatch.StringMapOrder(after["node_labels"])
		cols = append(cols, "node_labels")
	}
	if changed("node_taints") {
		ts, err := jsonpatch.Taints("node_taints", after["node_taints"])
		if err != nil {
			return nil, nil, err
		}
		if ts == nil {
			ng.NodeTaints = nil
		} else {
			ng.NodeTaints = make([]magnum.NodeTaint, len(ts))
			for i, t := range ts {
				ng.NodeTaints[i] = magnum.NodeTaint(t)
			}
		}
		cols = append(cols, "node_taints")
	}
	for _, k := range []string{"id", "uuid", "name", "cluster_id", "project_id", "docker_volume_size", "labels",
		"flavor_id", "image_id", "node_addresses", "node_count", "role", "is_default", "stack_id", "status",
		"status_reason", "version", "created_at", "updated_at"} {
		if changed(k) {
			// Nested paths (/labels/x, /node_addresses/0) escape the
			// internal-attribute list in Magnum and would be saved.
			// Deviation: we refuse them instead of writing internal fields.
			return nil, nil, magnum.PatchInternalAttribute("/" + k)
		}
	}
	return cols, labelOrder, nil
}

// ngPatchedInt checks a patched IntegerType(minimum=0) value: no conversion
// (a string is refused as Python's comparison error), None allowed, and a
// removed attribute takes its default.
func ngPatchedInt(field string, v any, present bool, def int, hasDefault bool) (*int, error) {
	if !present {
		if hasDefault {
			return &def, nil
		}
		return nil, nil
	}
	var n int64
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int64:
		n = x
	case int:
		n = int64(x)
	case bool:
		if x {
			n = 1
		}
	case *big.Int:
		return nil, magnum.InvalidInput(field, x, "Python int too large to convert to C long")
	default:
		return nil, magnum.InvalidInput(field, v, "'<' not supported between instances of '"+
			strings.TrimSuffix(strings.TrimPrefix(magnum.PyClass(v), "<class '"), "'>")+"' and 'int'")
	}
	if err := magnum.ValidateRange(field, n, magnum.IntegerRange{Min: &[]int64{0}[0]}); err != nil {
		return nil, err
	}
	i := int(n)
	return &i, nil
}

// ngPlain converts patched values for comparison.
func ngPlain(v any) any {
	out, _, ok := jsonpatch.ToJSON(v)
	if !ok {
		return v
	}
	switch x := out.(type) {
	case int:
		return int64(x)
	}
	return out
}

// deleteNodeGroup is DELETE /v1/clusters/{cluster_id}/nodegroups/{nodegroup_id}
// (routes.md #15).
func (s *server) deleteNodeGroup(w http.ResponseWriter, r *http.Request) error {
	rc := ngCaller(r)
	if err := s.Enforce(r, "nodegroup:delete", nil); err != nil {
		return err
	}
	c := s.opts.Conductor
	ctx := r.Context()
	cl, err := c.GetCluster(ctx, r.PathValue("cluster_id"), conductor.ScopeFor(rc, false))
	if err != nil {
		return err
	}
	ng, err := c.GetNodeGroup(ctx, cl.UUID, r.PathValue("nodegroup_id"), conductor.NodeGroupScopeFor(rc))
	if err != nil {
		return err
	}
	if err := c.DeleteNodeGroup(ctx, rc, cl, ng); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusNoContent, nil)
}

// Field sets of the detail view: a stored nodegroup shows its JSON columns
// as stored ({} / []); a nodegroup built from a POST shows null for what
// the client did not send.
const (
	ngFieldsAll = iota
	ngFieldsSent
)

// nodeGroupDetail is NodeGroup.convert(expand=True): every field, links and
// the labels diff against the cluster's labels.
func nodeGroupDetail(r *http.Request, ng *magnum.NodeGroup, clusterLabels map[string]string, mode int) map[string]any {
	labels := ng.Labels
	if labels == nil && mode == ngFieldsAll {
		labels = map[string]string{}
	}
	over, added, skipped := ngLabelsDiff(clusterLabels, labels)
	path := "clusters/" + ng.ClusterID
	args := "nodegroups/" + ng.UUID
	var id any = ng.ID
	if ng.ID == 0 {
		id = nil
	}
	var created any
	if !ng.CreatedAt.IsZero() {
		created = FormatTime(ng.CreatedAt)
	}
	out := map[string]any{
		"id": id, "uuid": ng.UUID, "name": ng.Name, "cluster_id": ng.ClusterID, "project_id": ng.ProjectID,
		"docker_volume_size": ngInt(ng.DockerVolumeSize), "labels": ngMap(labels),
		"links": []Link{
			MakeLink("self", BaseURL(r), path, args, false),
			MakeLink("bookmark", BaseURL(r), path, args, true),
		},
		"flavor_id": ngStr(ng.FlavorID), "image_id": ngStr(ng.ImageID),
		"node_addresses": ngListOrNil(ng.NodeAddresses, mode), "node_count": ngInt(ng.NodeCount),
		"role": ngStr(ng.Role), "min_node_count": ngInt(ng.MinNodeCount), "max_node_count": ngInt(ng.MaxNodeCount),
		"is_default": ngBool(ng.IsDefault), "stack_id": ngStr(ng.StackID), "status": ngStatus(ng.Status),
		"status_reason": ngStr(ng.StatusReason), "version": ngStr(ng.Version), "merge_labels": false,
		"labels_overridden": over, "labels_added": added, "labels_skipped": skipped,
		"node_labels": ngMapOrNil(ng.NodeLabels, mode), "node_taints": ngTaints(ng.NodeTaints, mode),
		"created_at": created, "updated_at": ngTime(FormatTimePtr(ng.UpdatedAt)),
	}
	return out
}

// nodeGroupSummary is NodeGroup.convert(expand=False): the summary fields,
// with min_node_count, max_node_count and merge_labels at their WSME
// defaults (0, null, false) whatever is stored, as Magnum shows them.
func nodeGroupSummary(ng *magnum.NodeGroup) map[string]any {
	return map[string]any{
		"uuid": ng.UUID, "name": ng.Name, "flavor_id": ngStr(ng.FlavorID), "image_id": ngStr(ng.ImageID),
		"node_count": ngInt(ng.NodeCount), "role": ngStr(ng.Role), "min_node_count": 0, "max_node_count": nil,
		"is_default": ngBool(ng.IsDefault), "stack_id": ngStr(ng.StackID), "status": ngStatus(ng.Status),
		"merge_labels": false,
	}
}

func ngInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func ngStr(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func ngBool(p *bool) any {
	if p == nil {
		return nil
	}
	return *p
}

func ngStatus(p *magnum.Status) any {
	if p == nil {
		return nil
	}
	return string(*p)
}

func ngTime(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func ngMap(m map[string]string) any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func ngMapOrNil(m map[string]string, mode int) any {
	if m == nil {
		if mode == ngFieldsAll {
			return map[string]any{}
		}
		return nil
	}
	return ngMap(m)
}

func ngListOrNil(l []string, mode int) any {
	if l == nil {
		if mode == ngFieldsAll {
			return []string{}
		}
		return nil
	}
	return l
}

func ngTaints(ts []magnum.NodeTaint, mode int) any {
	if ts == nil {
		if mode == ngFieldsAll {
			return []any{}
		}
		return nil
	}
	out := make([]map[string]string, len(ts))
	for i, t := range ts {
		out[i] = map[string]string(t)
	}
	return out
}
