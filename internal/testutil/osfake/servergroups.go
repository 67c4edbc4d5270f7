package osfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// ServerGroup is a Nova server group held by ServerGroupsServer.
type ServerGroup struct {
	ID        string
	Name      string
	Policy    string
	ProjectID string
}

// ServerGroupsServer is a read-write double of Nova's os-server-groups
// (microversion 2.1 shapes) with a minimal Keystone password
// authentication whose catalog points at it, so that code using service
// credentials can be tested too:
//
//	{URL}/compute/v2.1/os-server-groups[/{id}]   GET, POST, DELETE
//	{URL}/identity/v3/auth/tokens                POST (password), any user
//
// Tokens map to projects (AddToken); a request with an unknown token gets
// 401. Groups are visible to their project, and to every token when
// all_projects=true is asked by an admin token.
type ServerGroupsServer struct {
	served // URL, Close

	mu      sync.Mutex
	tokens  map[string]fakeToken
	groups  []ServerGroup
	calls   []Call
	seq     int
	hang    bool
	refuse  int // status returned to every compute call when non-zero
	service fakeToken
}

type fakeToken struct {
	project string
	admin   bool
}

// ServiceToken is the token the double issues on password authentication;
// it is an admin token of project "service".
const ServiceToken = "service-token"

// NewServerGroups starts the double and closes it when the test ends.
func NewServerGroups(t testing.TB) *ServerGroupsServer {
	t.Helper()
	s := &ServerGroupsServer{tokens: map[string]fakeToken{ServiceToken: {project: "service", admin: true}}}
	s.start(t, s.serve)
	return s
}

// AddToken makes tok a user token of project.
func (s *ServerGroupsServer) AddToken(tok, project string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[tok] = fakeToken{project: project}
}

// Seed adds a group.
func (s *ServerGroupsServer) Seed(g ServerGroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups = append(s.groups, g)
}

// Groups returns the groups held, in creation order.
func (s *ServerGroupsServer) Groups() []ServerGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.groups)
}

// Calls returns the requests received.
func (s *ServerGroupsServer) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Hang makes compute requests never answer (until the client gives up).
func (s *ServerGroupsServer) Hang(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = on
}

// Refuse makes compute requests answer status (0 restores normal answers).
func (s *ServerGroupsServer) Refuse(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = status
}

// ComputeEndpoint is the Nova endpoint as a catalog lists it.
func (s *ServerGroupsServer) ComputeEndpoint() string { return s.URL + "/compute/v2.1" }

// IdentityEndpoint is the Keystone v3 endpoint.
func (s *ServerGroupsServer) IdentityEndpoint() string { return s.URL + "/identity/v3" }

func (s *ServerGroupsServer) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/identity/v3/auth/tokens" && r.Method == http.MethodPost:
		s.issue(w)
		return
	case p == "/identity/v3" || p == "/identity/v3/":
		writeJSON(w, http.StatusOK, map[string]any{"version": map[string]any{"id": "v3.14", "status": "stable"}})
		return
	case !strings.HasPrefix(p, "/compute/v2.1/os-server-groups"):
		novaNotFound(w, "The resource could not be found.")
		return
	}
	rest := strings.TrimPrefix(p, "/compute")
	c := Call{Service: ServiceCompute, Interface: "public", Method: r.Method, Path: rest, Query: r.URL.Query(),
		Token: r.Header.Get("X-Auth-Token"), Header: r.Header.Clone()}
	c.Header.Del("X-Auth-Token")
	s.mu.Lock()
	s.calls = append(s.calls, c)
	tok, known := s.tokens[c.Token]
	hang, refuse := s.hang, s.refuse
	s.mu.Unlock()
	if hang {
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	if !known {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}})
		return
	}
	if refuse != 0 {
		writeJSON(w, refuse, map[string]any{"forbidden": map[string]any{"code": refuse, "message": "refused by the double"}})
		return
	}
	id := strings.TrimPrefix(strings.TrimPrefix(rest, "/v2.1/os-server-groups"), "/")
	switch {
	case id == "" && r.Method == http.MethodGet:
		all := tok.admin && c.Query.Get("all_projects") == "true"
		out := []map[string]any{}
		s.mu.Lock()
		for _, g := range s.groups {
			if all || g.ProjectID == tok.project {
				out = append(out, groupBody(g))
			}
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"server_groups": out})
	case id == "" && r.Method == http.MethodPost:
		var body struct {
			ServerGroup struct {
				Name     string   `json:"name"`
				Policies []string `json:"policies"`
			} `json:"server_group"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.ServerGroup.Name == "" || len(body.ServerGroup.Policies) != 1 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"badRequest": map[string]any{"code": 400, "message": "Invalid input for field/attribute server_group."}})
			return
		}
		s.mu.Lock()
		s.seq++
		g := ServerGroup{ID: fmt.Sprintf("5e0c0000-0000-4000-8000-%012d", s.seq), Name: body.ServerGroup.Name,
			Policy: body.ServerGroup.Policies[0], ProjectID: tok.project}
		s.groups = append(s.groups, g)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"server_group": groupBody(g)})
	case id != "" && r.Method == http.MethodDelete:
		s.mu.Lock()
		i := slices.IndexFunc(s.groups, func(g ServerGroup) bool { return g.ID == id && (tok.admin || g.ProjectID == tok.project) })
		if i >= 0 {
			s.groups = slices.Delete(s.groups, i, i+1)
		}
		s.mu.Unlock()
		if i < 0 {
			novaNotFound(w, "Instance group "+id+" could not be found.")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": map[string]any{"code": 405, "message": "not supported by the double"}})
	}
}

func groupBody(g ServerGroup) map[string]any {
	return map[string]any{"id": g.ID, "name": g.Name, "policies": []string{g.Policy}, "members": []string{},
		"metadata": map[string]any{}, "project_id": g.ProjectID, "user_id": "fake-user"}
}

// issue answers a password authentication with ServiceToken and a catalog
// holding this double's compute and identity endpoints.
func (s *ServerGroupsServer) issue(w http.ResponseWriter) {
	endpoints := func(typ, u string) map[string]any {
		var eps []map[string]any
		for _, iface := range []string{"public", "internal", "admin"} {
			eps = append(eps, map[string]any{"id": typ + "-" + iface, "interface": iface, "region": "RegionOne", "region_id": "RegionOne", "url": u})
		}
		return map[string]any{"type": typ, "name": typ, "id": typ, "endpoints": eps}
	}
	w.Header().Set("X-Subject-Token", ServiceToken)
	writeJSON(w, http.StatusCreated, map[string]any{"token": map[string]any{
		"methods": []string{"password"}, "expires_at": "2099-01-01T00:00:00.000000Z", "issued_at": timestamp,
		"user":    map[string]any{"id": "service-user", "name": "magnum", "domain": map[string]any{"id": "default", "name": "Default"}},
		"project": map[string]any{"id": "service", "name": "service", "domain": map[string]any{"id": "default", "name": "Default"}},
		"roles":   []map[string]any{{"id": "r-admin", "name": "admin"}},
		"catalog": []map[string]any{endpoints("compute", s.ComputeEndpoint()), endpoints("identity", s.IdentityEndpoint())},
	}})
}
