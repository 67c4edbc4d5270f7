package api

import (
	"net/http"
	"reflect"
	"regexp"
	"sort"

	"github.com/openkeel/openkeel-magnum/internal/api/jsonpatch"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func (s *server) registerFederations() {
	s.register("federation.get_all", s.listFederations)
	s.register("federation.detail", s.listFederationsDetail)
	s.register("federation.get_one", s.getFederation)
	s.register("federation.post", s.createFederation)
	s.register("federation.patch", s.patchFederation)
	s.register("federation.delete", s.deleteFederation)
}

// federationAttrs are the attributes of WSME's Federation type.
var (
	federationAttrs = []string{"uuid", "name", "hostcluster_id", "member_ids", "status", "status_reason",
		"properties", "links", "created_at", "updated_at"}
	// fedNamePattern is the name pattern with Python's "$" (also before a
	// final newline).
	fedNamePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.-]*\n?$`)
)

// federationView is Federation.convert_with_links: the summary fields, or
// every field when detail.
func federationView(r *http.Request, f *magnum.Federation, detail bool) map[string]any {
	members := f.MemberIDs
	if members == nil {
		members = []string{}
	}
	out := map[string]any{
		"uuid": f.UUID, "name": f.Name, "hostcluster_id": ngStr(f.HostClusterID), "member_ids": members,
		"status": ngStatus(f.Status), "properties": ngMapOrNil(f.Properties, ngFieldsAll),
		"links": []Link{
			MakeLink("self", BaseURL(r), "federations", f.UUID, false),
			MakeLink("bookmark", BaseURL(r), "federations", f.UUID, true),
		},
	}
	if detail {
		out["status_reason"] = ngStr(f.StatusReason)
		out["created_at"] = FormatTime(f.CreatedAt)
		out["updated_at"] = ngTime(FormatTimePtr(f.UpdatedAt))
	}
	return out
}

// federationTarget is the federation's as_dict(), the policy target.
func federationTarget(f *magnum.Federation) map[string]any {
	return map[string]any{
		"id": f.ID, "uuid": f.UUID, "name": f.Name, "project_id": f.ProjectID,
		"hostcluster_id": ngStr(f.HostClusterID), "member_ids": f.MemberIDs, "status": ngStatus(f.Status),
		"status_reason": ngStr(f.StatusReason), "properties": f.Properties,
	}
}

// listFederations is GET /v1/federations (routes.md #33).
func (s *server) listFederations(w http.ResponseWriter, r *http.Request) error {
	return s.federationList(w, r, "federation:get_all", "federations", false)
}

// listFederationsDetail is GET /v1/federations/detail (routes.md #34).
func (s *server) listFederationsDetail(w http.ResponseWriter, r *http.Request) error {
	return s.federationList(w, r, "federation:detail", "federations/detail", true)
}

func (s *server) federationList(w http.ResponseWriter, r *http.Request, rule, resource string, detail bool) error {
	rc := ngCaller(r)
	if err := s.Enforce(r, rule, nil); err != nil {
		return err
	}
	marker, limit, sortKey, sortDir, err := s.ngPageOptions(r)
	if err != nil {
		return err
	}
	rows, err := s.opts.Conductor.ListFederations(r.Context(), conductor.ScopeFor(rc, false),
		conductor.ListParams{Marker: marker, Limit: limit, SortKey: sortKey, SortDir: sortDir})
	if err != nil {
		return err
	}
	items := make([]any, 0, len(rows))
	for i := range rows {
		items = append(items, federationView(r, &rows[i], detail))
	}
	out := map[string]any{"federations": items}
	if len(rows) > 0 && len(rows) == limit {
		out["next"] = NextLink(r, resource, [][2]string{{"sort_key", sortKey}, {"sort_dir", sortDir}}, limit,
			rows[len(rows)-1].UUID)
	}
	return WriteJSON(w, http.StatusOK, out)
}

// getFederation is GET /v1/federations/{federation_ident} (routes.md #35).
func (s *server) getFederation(w http.ResponseWriter, r *http.Request) error {
	rc := ngCaller(r)
	f, err := s.opts.Conductor.GetFederation(r.Context(), r.PathValue("federation_ident"), conductor.ScopeFor(rc, false))
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "federation:get", federationTarget(f)); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, federationView(r, f, true))
}

// createFederation is POST /v1/federations (routes.md #36): 202 {"uuid"}.
func (s *server) createFederation(w http.ResponseWriter, r *http.Request) error {
	b, err := readWSBody(r, "federation")
	if err != nil {
		return err
	}
	if err := b.checkAttributes(federationAttrs); err != nil {
		return err
	}
	f := &magnum.Federation{}
	if _, err := b.optUUID("uuid"); err != nil {
		return err
	}
	name, err := b.optString("name", 1, magnum.ClusterNameMaxLength, fedNamePattern, magnum.NamePattern)
	if err != nil {
		return err
	}
	if name != nil {
		f.Name = *name
	}
	if f.HostClusterID, err = b.optText("hostcluster_id"); err != nil {
		return err
	}
	if f.MemberIDs, err = b.optTextList("member_ids"); err != nil {
		return err
	}
	st, err := b.optEnum("status", ngStatusNames(magnum.FederationStatuses))
	if err != nil {
		return err
	}
	if st != nil {
		v := magnum.Status(*st)
		f.Status = &v
	}
	if f.StatusReason, err = b.optText("status_reason"); err != nil {
		return err
	}
	if f.Properties, _, err = b.optStringMap("properties"); err != nil {
		return err
	}
	if err := b.readonly("links", "created_at", "updated_at"); err != nil {
		return err
	}
	rc := ngCaller(r)
	if err := s.Enforce(r, "federation:create", nil); err != nil {
		return err
	}
	c := s.opts.Conductor
	if f.HostClusterID == nil {
		return magnum.FederationNoHostCluster()
	}
	if _, err := c.GetCluster(r.Context(), *f.HostClusterID, conductor.ScopeFor(rc, false)); err != nil {
		return err
	}
	if f.Properties == nil {
		return magnum.FederationNoProperties()
	}
	if _, ok := f.Properties["dns-zone"]; !ok {
		return magnum.FederationNoDNSZone()
	}
	f.ProjectID = rc.ProjectID
	f.UUID = ngNewUUID(c)
	if err := c.CreateFederation(r.Context(), f); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, map[string]any{"uuid": f.UUID})
}

// patchFederation is PATCH /v1/federations/{federation_ident} (routes.md
// #37): join/unjoin through /member_ids, or changes of properties.
func (s *server) patchFederation(w http.ResponseWriter, r *http.Request) error {
	raw, err := RequireBody(r)
	if err != nil {
		return err
	}
	ops, err := jsonpatch.ParseAndCheck(raw, jsonpatch.FederationRules)
	if err != nil {
		return err
	}
	rc := ngCaller(r)
	c := s.opts.Conductor
	ctx := r.Context()
	scope := conductor.ScopeFor(rc, false)
	f, err := c.GetFederation(ctx, r.PathValue("federation_ident"), scope)
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "federation:update", federationTarget(f)); err != nil {
		return err
	}
	if len(ops) == 0 {
		// Magnum: patch[0] of an empty list escapes as a 500.
		return magnum.ServerError("list index out of range")
	}
	// Magnum: federation.py:327-335 — only the first operation is rewritten
	// into a replace of the whole member list.
	if first := ops[0]; first.Path == "/member_ids" && first.Value != nil && (first.Op == "add" || first.Op == "remove") {
		member := magnum.PyStr(first.Value)
		if _, err := c.GetClusterByUUIDOnly(ctx, member, scope); err != nil {
			return err
		}
		isMember := false
		var rest []any
		for _, m := range f.MemberIDs {
			if m == member {
				isMember = true
				continue
			}
			rest = append(rest, m)
		}
		members := make([]any, 0, len(f.MemberIDs)+1)
		for _, m := range f.MemberIDs {
			members = append(members, m)
		}
		if first.Op == "add" {
			if isMember {
				return magnum.MemberAlreadyExists(member, f.Name)
			}
			members = append(members, member)
		} else {
			if !isMember {
				return magnum.FederationMemberNotFound(member, f.Name)
			}
			members = rest
			if members == nil {
				members = []any{}
			}
		}
		ops[0] = jsonpatch.Operation{Op: "replace", Path: "/member_ids", Value: members}
	}
	doc := federationDoc(f)
	patched, err := jsonpatch.Apply(doc, ops, jsonpatch.FederationRules)
	if err != nil {
		return err
	}
	var changed []string
	for _, k := range []string{"uuid", "name", "hostcluster_id", "member_ids", "status", "status_reason", "properties"} {
		if !reflect.DeepEqual(ngPlain(patched[k]), ngPlain(doc[k])) {
			changed = append(changed, k)
		}
	}
	updated := *f
	var disallowed []string
	for _, k := range changed {
		switch k {
		case "member_ids":
			l, err := fedMemberList(patched[k])
			if err != nil {
				return err
			}
			updated.MemberIDs = l
		case "properties":
			m, err := jsonpatch.StringMap("properties", patched[k])
			if err != nil {
				return err
			}
			updated.Properties = m
		default:
			disallowed = append(disallowed, k)
		}
	}
	if len(disallowed) > 0 {
		sort.Strings(disallowed)
		return magnum.CannotChangeProperties("federation", disallowed)
	}
	if err := c.UpdateFederation(ctx, &updated); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, map[string]any{"uuid": f.UUID})
}

// federationDoc is the federation's as_dict() for patching.
func federationDoc(f *magnum.Federation) map[string]any {
	members := make([]any, 0, len(f.MemberIDs))
	for _, m := range f.MemberIDs {
		members = append(members, m)
	}
	return map[string]any{
		"id": f.ID, "uuid": f.UUID, "name": f.Name, "project_id": f.ProjectID,
		"hostcluster_id": ngStr(f.HostClusterID), "member_ids": members, "status": ngStatus(f.Status),
		"status_reason": ngStr(f.StatusReason), "properties": ngMap(ngEmptyIfNil(f.Properties)),
		"created_at": FormatTime(f.CreatedAt), "updated_at": ngTime(FormatTimePtr(f.UpdatedAt)),
	}
}

func ngEmptyIfNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// fedMemberList checks a patched member_ids value ([text]).
func fedMemberList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, magnum.InvalidInputRaw("member_ids", magnum.PyStr(v), "Value not a valid list: "+magnum.PyStr(v))
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, magnum.NotAString("member_ids", e)
		}
		out = append(out, s)
	}
	return out, nil
}

// deleteFederation is DELETE /v1/federations/{federation_ident} (routes.md
// #38).
func (s *server) deleteFederation(w http.ResponseWriter, r *http.Request) error {
	rc := ngCaller(r)
	c := s.opts.Conductor
	f, err := c.GetFederation(r.Context(), r.PathValue("federation_ident"), conductor.ScopeFor(rc, false))
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "federation:delete", federationTarget(f)); err != nil {
		return err
	}
	if err := c.DeleteFederation(r.Context(), f.UUID); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusNoContent, nil)
}
