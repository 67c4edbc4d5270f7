package api

import (
	"net/http"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/api/microversion"
)

// Route is one handler of the v1 API (routes.md §2). Several routes may share
// a method and pattern when the handler has microversion variants.
type Route struct {
	// ID names the handler: "<controller>.<method>" as in Magnum, with the
	// variant's minimum version appended when there are several
	// ("cluster.patch@1.3").
	ID string
	// Number is the row of routes.md ("6'" for a variant).
	Number string
	// Method is the HTTP method.
	Method string
	// Pattern is the path; {name} segments are path arguments named as the
	// WSME arguments of the Magnum handler (their names appear in
	// "Missing argument" messages).
	Pattern string
	// MinVersion and MaxVersion bound the microversions served (inclusive);
	// zero values mean unversioned.
	MinVersion, MaxVersion microversion.Version
	// Status is the success status.
	Status int
	// Query lists the declared query parameters in the handler's signature
	// order; they are converted before the handler runs (see QueryString,
	// QueryInt, QueryBool) and any other one is refused with 400 Unknown
	// argument. The detail routes also receive a marker from the path
	// ("/v1/clusters/<marker>/detail", pecan's positional argument).
	Query []Param
	// BodyArg names the WSME body argument ("" when the handler takes no
	// body); it appears in "Missing argument" messages.
	BodyArg string
	// Policy lists the policy rules the handler evaluates, in order
	// (documentation; the handler enforces them).
	Policy []string

	segments []string
}

// Allow headers of Magnum's controllers: a 405 lists the methods of the
// controller that owns the path, not of the path itself.
const (
	allowCRUD = "DELETE, GET, PATCH, POST"
	allowGET  = "GET"
)

// pathGroup is a controller: its paths and the Allow header of its 405.
type pathGroup struct {
	allow    string
	patterns []string
	// sub marks a sub-controller, which owns its paths even when a parent
	// handler could take the segments as arguments.
	sub bool
}

// ParamType is the WSME type of a query parameter.
type ParamType int

// Query parameter types.
const (
	// ParamText is wtypes.text: any value.
	ParamText ParamType = iota
	// ParamInt is int: Python int() of the value.
	ParamInt
	// ParamUUID is types.uuid: a UUID-like string.
	ParamUUID
	// ParamBool is types.boolean: a strict oslo boolean string.
	ParamBool
)

// Param is a declared query parameter.
type Param struct {
	Name string
	Type ParamType
}

var pagination = []Param{{"marker", ParamUUID}, {"limit", ParamInt}, {"sort_key", ParamText}, {"sort_dir", ParamText}}

func with(base []Param, extra ...Param) []Param {
	return append(append([]Param{}, base...), extra...)
}

func v(s string) microversion.Version { return microversion.MustParseVersion(s) }

// routeTable is routes.md §2: 43 handlers on 38 (method, path) routes,
// including the two version documents.
func routeTable() []Route {
	const (
		cl   = "/v1/clusters"
		clID = "/v1/clusters/{cluster_ident}"
		ng   = "/v1/clusters/{cluster_id}/nodegroups"
		ngID = "/v1/clusters/{cluster_id}/nodegroups/{nodegroup_id}"
		ct   = "/v1/clustertemplates"
		ctID = "/v1/clustertemplates/{cluster_template_ident}"
		qu   = "/v1/quotas"
		quID = "/v1/quotas/{project_id}/{resource}"
		fe   = "/v1/federations"
		feID = "/v1/federations/{federation_ident}"
	)
	return []Route{
		{ID: "root.get", Number: "1", Method: http.MethodGet, Pattern: "/", Status: 200},
		{ID: "v1.get", Number: "2", Method: http.MethodGet, Pattern: "/v1", Status: 200},

		{ID: "cluster.get_all", Number: "3", Method: http.MethodGet, Pattern: cl, Status: 200, Query: pagination,
			Policy: []string{"cluster:get_all", "cluster:get_all_all_projects"}},
		{ID: "cluster.detail", Number: "4", Method: http.MethodGet, Pattern: cl + "/detail", Status: 200, Query: pagination,
			Policy: []string{"cluster:detail", "cluster:detail_all_projects"}},
		{ID: "cluster.get_one", Number: "5", Method: http.MethodGet, Pattern: clID, Status: 200,
			Policy: []string{"cluster:get_one_all_projects", "cluster:get"}},
		{ID: "cluster.post@1.1", Number: "6", Method: http.MethodPost, Pattern: cl, MinVersion: v("1.1"), MaxVersion: v("1.9"),
			Status: 202, BodyArg: "cluster", Policy: []string{"cluster:create"}},
		{ID: "cluster.post@1.10", Number: "6'", Method: http.MethodPost, Pattern: cl, MinVersion: v("1.10"), MaxVersion: v("1.14"),
			Status: 202, BodyArg: "cluster", Policy: []string{"cluster:create"}},
		{ID: "cluster.patch@1.1", Number: "7", Method: http.MethodPatch, Pattern: clID, MinVersion: v("1.1"), MaxVersion: v("1.2"),
			Status: 202, BodyArg: "patch", Policy: []string{"cluster:update_all_projects", "cluster:update", "cluster:update_health_status"}},
		{ID: "cluster.patch@1.3", Number: "7'", Method: http.MethodPatch, Pattern: clID, MinVersion: v("1.3"), MaxVersion: v("1.9"),
			Status: 202, Query: []Param{{"rollback", ParamBool}}, BodyArg: "patch", Policy: []string{"cluster:update_all_projects", "cluster:update", "cluster:update_health_status"}},
		{ID: "cluster.patch@1.10", Number: "7''", Method: http.MethodPatch, Pattern: clID, MinVersion: v("1.10"), MaxVersion: v("1.14"),
			Status: 202, Query: []Param{{"rollback", ParamBool}}, BodyArg: "patch", Policy: []string{"cluster:update_all_projects", "cluster:update", "cluster:update_health_status"}},
		{ID: "cluster.delete", Number: "8", Method: http.MethodDelete, Pattern: clID, Status: 204,
			Policy: []string{"cluster:delete_all_projects", "cluster:delete"}},

		{ID: "cluster_actions.resize@1.7", Number: "9", Method: http.MethodPost, Pattern: clID + "/actions/resize", MinVersion: v("1.7"), MaxVersion: v("1.9"),
			Status: 202, BodyArg: "cluster_resize_req", Policy: []string{"cluster:resize"}},
		{ID: "cluster_actions.resize@1.10", Number: "9'", Method: http.MethodPost, Pattern: clID + "/actions/resize", MinVersion: v("1.10"), MaxVersion: v("1.14"),
			Status: 202, BodyArg: "cluster_resize_req", Policy: []string{"cluster:resize"}},
		{ID: "cluster_actions.upgrade@1.7", Number: "10", Method: http.MethodPost, Pattern: clID + "/actions/upgrade", MinVersion: v("1.7"), MaxVersion: v("1.7"),
			Status: 400, BodyArg: "cluster_upgrade_req"},
		{ID: "cluster_actions.upgrade@1.8", Number: "10'", Method: http.MethodPost, Pattern: clID + "/actions/upgrade", MinVersion: v("1.8"), MaxVersion: v("1.14"),
			Status: 202, BodyArg: "cluster_upgrade_req", Policy: []string{"cluster:upgrade_all_projects", "cluster:upgrade"}},

		{ID: "nodegroup.get_all", Number: "11", Method: http.MethodGet, Pattern: ng, MinVersion: v("1.9"), MaxVersion: v("1.14"), Status: 200,
			Query: with(pagination, Param{"role", ParamText}), Policy: []string{"nodegroup:get_all", "nodegroup:get_all_all_projects"}},
		{ID: "nodegroup.get_one", Number: "12", Method: http.MethodGet, Pattern: ngID, MinVersion: v("1.9"), MaxVersion: v("1.14"), Status: 200,
			Policy: []string{"nodegroup:get", "nodegroup:get_one_all_projects"}},
		{ID: "nodegroup.post", Number: "13", Method: http.MethodPost, Pattern: ng, MinVersion: v("1.9"), MaxVersion: v("1.14"), Status: 202,
			BodyArg: "nodegroup", Policy: []string{"nodegroup:create"}},
		{ID: "nodegroup.patch", Number: "14", Method: http.MethodPatch, Pattern: ngID, MinVersion: v("1.9"), MaxVersion: v("1.14"), Status: 202,
			BodyArg: "patch", Policy: []string{"nodegroup:update"}},
		{ID: "nodegroup.delete", Number: "15", Method: http.MethodDelete, Pattern: ngID, MinVersion: v("1.9"), MaxVersion: v("1.14"), Status: 204,
			Policy: []string{"nodegroup:delete"}},

		{ID: "cluster_template.get_all", Number: "16", Method: http.MethodGet, Pattern: ct, Status: 200, Query: pagination,
			Policy: []string{"clustertemplate:get_all", "clustertemplate:get_all_all_projects"}},
		{ID: "cluster_template.detail", Number: "17", Method: http.MethodGet, Pattern: ct + "/detail", Status: 200, Query: pagination,
			Policy: []string{"clustertemplate:detail", "clustertemplate:detail_all_projects"}},
		{ID: "cluster_template.get_one", Number: "18", Method: http.MethodGet, Pattern: ctID, Status: 200,
			Policy: []string{"clustertemplate:get_one_all_projects", "clustertemplate:get"}},
		{ID: "cluster_template.post", Number: "19", Method: http.MethodPost, Pattern: ct, Status: 201, BodyArg: "cluster_template",
			Policy: []string{"clustertemplate:create", "clustertemplate:publish"}},
		{ID: "cluster_template.patch", Number: "20", Method: http.MethodPatch, Pattern: ctID, Status: 200, BodyArg: "patch",
			Policy: []string{"clustertemplate:update_all_projects", "clustertemplate:update", "clustertemplate:publish"}},
		{ID: "cluster_template.delete", Number: "21", Method: http.MethodDelete, Pattern: ctID, Status: 204,
			Policy: []string{"clustertemplate:delete_all_projects", "clustertemplate:delete"}},

		{ID: "quota.get_all", Number: "22", Method: http.MethodGet, Pattern: qu, Status: 200,
			Query: []Param{{"marker", ParamInt}, {"limit", ParamInt}, {"sort_key", ParamText}, {"sort_dir", ParamText}, {"all_tenants", ParamBool}}, Policy: []string{"quota:get_all"}},
		{ID: "quota.get_one", Number: "23", Method: http.MethodGet, Pattern: quID, Status: 200, Policy: []string{"quota:get"}},
		{ID: "quota.post", Number: "24", Method: http.MethodPost, Pattern: qu, Status: 201, BodyArg: "quota", Policy: []string{"quota:create"}},
		{ID: "quota.patch", Number: "25", Method: http.MethodPatch, Pattern: quID, Status: 202, BodyArg: "quotapatch", Policy: []string{"quota:update"}},
		{ID: "quota.delete", Number: "26", Method: http.MethodDelete, Pattern: quID, Status: 204, Policy: []string{"quota:delete"}},

		{ID: "certificate.get_one", Number: "27", Method: http.MethodGet, Pattern: "/v1/certificates/{cluster_ident}", Status: 200,
			Query: []Param{{"ca_cert_type", ParamText}}, Policy: []string{"certificate:get"}},
		{ID: "certificate.post", Number: "28", Method: http.MethodPost, Pattern: "/v1/certificates", Status: 201, BodyArg: "certificate",
			Policy: []string{"certificate:create"}},
		{ID: "certificate.patch", Number: "29", Method: http.MethodPatch, Pattern: "/v1/certificates/{cluster_ident}", Status: 202,
			Policy: []string{"certificate:rotate_ca"}},

		{ID: "credential.patch", Number: "30", Method: http.MethodPatch, Pattern: "/v1/credentials/{cluster_ident}", MinVersion: v("1.12"), MaxVersion: v("1.14"),
			Status: 202, Policy: []string{"credential:rotate"}},

		{ID: "stats.get_all", Number: "31", Method: http.MethodGet, Pattern: "/v1/stats", Status: 200, Query: []Param{{"project_id", ParamText}, {"type", ParamText}},
			Policy: []string{"stats:get_all"}},

		{ID: "magnum_service.get_all", Number: "32", Method: http.MethodGet, Pattern: "/v1/mservices", Status: 200,
			Policy: []string{"magnum-service:get_all"}},

		{ID: "federation.get_all", Number: "33", Method: http.MethodGet, Pattern: fe, Status: 200, Query: pagination, Policy: []string{"federation:get_all"}},
		{ID: "federation.detail", Number: "34", Method: http.MethodGet, Pattern: fe + "/detail", Status: 200, Query: pagination, Policy: []string{"federation:detail"}},
		{ID: "federation.get_one", Number: "35", Method: http.MethodGet, Pattern: feID, Status: 200, Policy: []string{"federation:get"}},
		{ID: "federation.post", Number: "36", Method: http.MethodPost, Pattern: fe, Status: 202, BodyArg: "federation", Policy: []string{"federation:create"}},
		{ID: "federation.patch", Number: "37", Method: http.MethodPatch, Pattern: feID, Status: 202, Query: []Param{{"rollback", ParamBool}}, BodyArg: "patch",
			Policy: []string{"federation:update"}},
		{ID: "federation.delete", Number: "38", Method: http.MethodDelete, Pattern: feID, Status: 204, Policy: []string{"federation:delete"}},
	}
}

// pathGroups maps every path of the API to its controller's Allow header;
// some paths exist only to answer 405 (the actions sub-controller, stats
// members). A final "**" segment matches any non-empty remainder.
var pathGroups = []pathGroup{
	{allow: allowGET, patterns: []string{"/v1"}},
	{allow: allowCRUD, patterns: []string{"/v1/clusters", "/v1/clusters/detail", "/v1/clusters/{cluster_ident}"}},
	{allow: "", patterns: []string{"/v1/clusters/{cluster_ident}/actions", "/v1/clusters/{cluster_ident}/actions/resize",
		"/v1/clusters/{cluster_ident}/actions/upgrade", "/v1/clusters/{cluster_ident}/actions/**"}, sub: true},
	{allow: allowCRUD, patterns: []string{"/v1/clusters/{cluster_id}/nodegroups", "/v1/clusters/{cluster_id}/nodegroups/{nodegroup_id}"}, sub: true},
	{allow: allowCRUD, patterns: []string{"/v1/clustertemplates", "/v1/clustertemplates/detail", "/v1/clustertemplates/{cluster_template_ident}"}},
	{allow: allowCRUD, patterns: []string{"/v1/quotas", "/v1/quotas/{project_id}", "/v1/quotas/{project_id}/{resource}"}},
	{allow: "GET, PATCH, POST", patterns: []string{"/v1/certificates", "/v1/certificates/{cluster_ident}"}},
	{allow: "PATCH", patterns: []string{"/v1/credentials", "/v1/credentials/{cluster_ident}"}},
	{allow: allowGET, patterns: []string{"/v1/stats", "/v1/stats/{x}"}},
	{allow: allowGET, patterns: []string{"/v1/mservices", "/v1/mservices/{x}"}},
	{allow: allowCRUD, patterns: []string{"/v1/federations", "/v1/federations/detail", "/v1/federations/{federation_ident}"}},
}

// RouteTable returns a copy of the v1 route table (routes.md §2).
func RouteTable() []Route {
	rs := routeTable()
	for i := range rs {
		rs[i].segments = splitPath(rs[i].Pattern)
	}
	return rs
}

func buildRoutes() []*Route {
	rs := RouteTable()
	out := make([]*Route, len(rs))
	seen := map[string]bool{}
	for i := range rs {
		if seen[rs[i].ID] {
			panic("api: duplicate route ID " + rs[i].ID)
		}
		seen[rs[i].ID] = true
		out[i] = &rs[i]
	}
	return out
}

// splitPath splits "/v1/a/b" into ["v1","a","b"]; "/" gives nil. One
// trailing slash is ignored, as pecan does for collections; further ones
// leave empty segments ("/v1/clusters//" is get_one with an empty, i.e.
// missing, identifier).
func splitPath(p string) []string {
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// matchSegments matches path segments against pattern segments; it returns
// the number of literal segments matched (higher wins) or -1.
func matchSegments(pattern, path []string) int {
	if len(pattern) != len(path) {
		return -1
	}
	lit := 0
	for i, s := range pattern {
		if isParam(s) {
			continue
		}
		if s != path[i] {
			return -1
		}
		lit++
	}
	return lit
}

// match is the outcome of routing one request.
type match struct {
	// candidates are the variants of the matched (method, pattern), or of the
	// member handler a collection request fell through to.
	candidates []*Route
	// params are the path arguments.
	params map[string]string
	// missing is the first path argument absent from a request that pecan
	// dispatched to a member handler without its identifier (400 Missing
	// argument).
	missing string
	// markerInPath is set for "<collection>/<marker>/detail".
	markerInPath bool
	// postArg is the extra path segment of a POST on a member path, which
	// WSME tries to convert to the body type (400).
	postArg string
	// allow is set (with found false) when the path exists for other methods.
	allow    string
	pathSeen bool
	// group is the controller owning a path answered with 405.
	group *pathGroup
}

// uncoveredMethod returns the name of a versioned handler of the
// controller g that has no variant for v, or "". Pecan touches the
// controller's methods while computing a 405, and touching such a method
// raises the method-level 406 instead (GET /v1/credentials/x at 1.1 is a
// 406; at 1.12 a 405).
func (s *server) uncoveredMethod(g *pathGroup, v microversion.Version) string {
	if g == nil {
		return ""
	}
	covered := map[string]bool{}
	var names []string
	for _, rt := range s.routes {
		owned := false
		for _, p := range g.patterns {
			if p == rt.Pattern {
				owned = true
			}
		}
		if !owned || rt.MinVersion.IsZero() {
			continue
		}
		name := rt.methodName()
		if _, seen := covered[name]; !seen {
			names = append(names, name)
			covered[name] = false
		}
		if v.Between(rt.MinVersion, rt.MaxVersion) {
			covered[name] = true
		}
	}
	for _, n := range names {
		if !covered[n] {
			return n
		}
	}
	return ""
}

// route finds the handlers for method and the normalised path segments.
func (s *server) route(method string, segs []string) match {
	best, bestLit := "", -1
	for _, rt := range s.routes {
		if rt.Method != method {
			continue
		}
		if lit := matchSegments(rt.segments, segs); lit > bestLit {
			best, bestLit = rt.Pattern, lit
		}
	}
	if bestLit >= 0 {
		m := match{params: map[string]string{}}
		for _, rt := range s.routes {
			if rt.Method == method && rt.Pattern == best {
				m.candidates = append(m.candidates, rt)
			}
		}
		for i, seg := range m.candidates[0].segments {
			if !isParam(seg) {
				continue
			}
			// An empty identifier is a missing argument for WSME.
			if segs[i] == "" {
				if m.missing == "" {
					m.missing = seg[1 : len(seg)-1]
				}
				continue
			}
			m.params[seg[1:len(seg)-1]] = segs[i]
		}
		return m
	}
	// GET <collection>/<x>/detail reaches the detail handler with <x> as its
	// first positional argument, the marker (routes.md #4, #17).
	if method == http.MethodGet && len(segs) == 4 && segs[3] == "detail" {
		for _, rt := range s.routes {
			if rt.Method == method && len(rt.segments) == 3 && rt.segments[2] == "detail" && rt.segments[1] == segs[1] {
				return match{candidates: []*Route{rt}, params: map[string]string{"marker": segs[2]}, markerInPath: true}
			}
		}
	}
	// POST <collection>/<x> calls the create handler with <x> as its body
	// argument, which WSME fails to convert (routes.md §1 "Methods").
	tooMany := false
	if method == http.MethodPost && len(segs) > 1 {
		var create *Route
		for _, rt := range s.routes {
			if rt.Method != method || rt.BodyArg == "" || strings.Contains(rt.Pattern, "/actions/") || len(rt.segments) >= len(segs) {
				continue
			}
			if matchSegments(rt.segments, segs[:len(rt.segments)]) >= 0 && (create == nil || len(rt.segments) > len(create.segments)) {
				create = rt
			}
		}
		switch {
		case create != nil && len(segs) == len(create.segments)+1:
			m := match{params: map[string]string{}, postArg: segs[len(segs)-1]}
			for _, r2 := range s.routes {
				if r2.Method == method && r2.Pattern == create.Pattern {
					m.candidates = append(m.candidates, r2)
				}
			}
			for i, seg := range create.segments {
				if isParam(seg) {
					m.params[seg[1:len(seg)-1]] = segs[i]
				}
			}
			return m
		case create != nil:
			// More positional arguments than the handler takes: 404, unless
			// a sub-controller owns the path.
			tooMany = true
		}
	}
	// Pecan sends DELETE and PATCH on a collection, and GET with only part of
	// a member's identifiers, to the member handler, which then misses an
	// argument (routes.md §1 "Methods").
	for _, rt := range s.routes {
		if rt.Method != method || len(segs) >= len(rt.segments) {
			continue
		}
		if method != http.MethodDelete && method != http.MethodPatch && method != http.MethodGet {
			continue
		}
		prefix := rt.segments[:len(segs)]
		if matchSegments(prefix, segs) < 0 {
			continue
		}
		rest := rt.segments[len(segs):]
		allParams := true
		for _, r := range rest {
			if !isParam(r) {
				allParams = false
			}
		}
		if !allParams {
			continue
		}
		if method == http.MethodGet && !hasParamAfterCollection(rt.segments, len(segs)) {
			continue
		}
		m := match{params: map[string]string{}, missing: rest[0][1 : len(rest[0])-1]}
		for _, r2 := range s.routes {
			if r2.Method == method && r2.Pattern == rt.Pattern {
				m.candidates = append(m.candidates, r2)
			}
		}
		for i, seg := range prefix {
			if isParam(seg) {
				m.params[seg[1:len(seg)-1]] = segs[i]
			}
		}
		return m
	}
	for gi, g := range pathGroups {
		if tooMany && !g.sub {
			continue
		}
		for _, p := range g.patterns {
			ps := splitPath(p)
			if ps[len(ps)-1] == "**" {
				// Any path below the prefix belongs to the controller.
				if n := len(ps) - 1; len(segs) > n && matchSegments(ps[:n], segs[:n]) >= 0 {
					// Observed: deeper unknown paths answer 405 even where
					// the controller's own paths answer the method-level 406.
					return match{allow: g.allow, pathSeen: true}
				}
				continue
			}
			if matchSegments(ps, segs) >= 0 {
				return match{allow: g.allow, pathSeen: true, group: &pathGroups[gi]}
			}
		}
	}
	return match{}
}

// hasParamAfterCollection reports whether the first n segments of a member
// pattern already include one of the member's own identifiers (the
// parameters after the last literal segment), so that a GET is a get_one
// with missing arguments and not a get_all.
func hasParamAfterCollection(pattern []string, n int) bool {
	lastLit := -1
	for i, s := range pattern {
		if !isParam(s) {
			lastLit = i
		}
	}
	return n > lastLit+1
}

// pathArgs returns the names of the path arguments of a route.
func (rt *Route) pathArgs() []string {
	var out []string
	for _, s := range rt.segments {
		if isParam(s) {
			out = append(out, s[1:len(s)-1])
		}
	}
	return out
}

// knownArg reports whether name is an argument of the handler (WSME checks
// query and form keys against every argument: path, query and body).
func (rt *Route) knownArg(name string) bool {
	for _, q := range rt.Query {
		if q.Name == name {
			return true
		}
	}
	for _, p := range rt.pathArgs() {
		if p == name {
			return true
		}
	}
	return rt.BodyArg != "" && name == rt.BodyArg
}

// methodName is the Magnum method name of the handler ("get_all").
func (rt *Route) methodName() string {
	_, name, _ := strings.Cut(rt.ID, ".")
	name, _, _ = strings.Cut(name, "@")
	return name
}

// bodyTypes are the WSME body types of the create handlers, named in the 400
// of a POST on a member path.
var bodyTypes = map[string]string{
	"cluster": "Cluster", "cluster_template": "ClusterTemplate", "nodegroup": "NodeGroup",
	"quota": "Quota", "certificate": "Certificate", "federation": "Federation",
	"cluster_resize_req": "ClusterResizeRequest", "cluster_upgrade_req": "ClusterUpgradeRequest",
}
