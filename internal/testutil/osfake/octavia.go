package osfake

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ServiceLoadBalancer is the Call.Service of Octavia requests.
const ServiceLoadBalancer = "load-balancer"

// LoadBalancer is an Octavia v2 load balancer held by OctaviaServer.
type LoadBalancer struct {
	ID          string
	Name        string
	Description string
	ProjectID   string
	// ProvisioningStatus is ACTIVE when empty.
	ProvisioningStatus string
	VIPPortID          string
	VIPAddress         string
	// Listeners are listener IDs: Octavia refuses to delete a load
	// balancer with children unless the delete cascades.
	Listeners []string
	Tags      []string
}

// FloatingIP is a Neutron floating IP held by OctaviaServer.
type FloatingIP struct {
	ID          string
	Address     string
	PortID      string // "" when not associated
	ProjectID   string
	Description string
}

// OctaviaServer is a read-write double of Octavia's load balancers (v2
// API shapes) and of Neutron's floating IPs, with the minimal Keystone
// password authentication of ServerGroupsServer:
//
//	{URL}/load-balancer/v2/lbaas/loadbalancers[/{id}]   GET, DELETE (?cascade=true)
//	{URL}/network/v2.0/floatingips[/{id}]               GET (filters), DELETE
//	{URL}/identity/v3/auth/tokens                       POST (password), any user
//
// Tokens map to projects (AddToken); an unknown token gets 401. A user
// token sees the load balancers of its project only, and asking for
// another project_id is refused (403), as Octavia's default policy does;
// the service token (ServiceToken) is an admin that sees every project.
//
// A deleted load balancer turns PENDING_DELETE and disappears after the
// number of load-balancer reads set by SetDeleteDelay (0: at once; <0:
// never). When it disappears its VIP port goes too, so Neutron
// disassociates the floating IPs that were on it, as a real cloud does.
type OctaviaServer struct {
	served // URL, Close

	mu       sync.Mutex
	tokens   map[string]fakeToken
	lbs      []LoadBalancer
	pending  map[string]int // load balancer ID → reads left before it goes
	fips     []FloatingIP
	calls    []Call
	faults   []*Fault
	delay    int
	pageSize int
}

// NewOctavia starts the double and closes it when the test ends.
func NewOctavia(t testing.TB) *OctaviaServer {
	t.Helper()
	s := &OctaviaServer{
		tokens:  map[string]fakeToken{ServiceToken: {project: "service", admin: true}},
		pending: map[string]int{},
	}
	s.start(t, s.serve)
	return s
}

// AddToken makes tok a user token of project.
func (s *OctaviaServer) AddToken(tok, project string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[tok] = fakeToken{project: project}
}

// AddLoadBalancer adds a load balancer.
func (s *OctaviaServer) AddLoadBalancer(lb LoadBalancer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lb.ProvisioningStatus == "" {
		lb.ProvisioningStatus = "ACTIVE"
	}
	s.lbs = append(s.lbs, lb)
}

// AddFloatingIP adds a floating IP.
func (s *OctaviaServer) AddFloatingIP(f FloatingIP) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fips = append(s.fips, f)
}

// LoadBalancers returns the load balancers held (PENDING_DELETE ones
// included), in creation order.
func (s *OctaviaServer) LoadBalancers() []LoadBalancer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lbs)
}

// FloatingIPs returns the floating IPs held.
func (s *OctaviaServer) FloatingIPs() []FloatingIP {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.fips)
}

// SetDeleteDelay sets after how many load-balancer reads (lists or
// shows) a deleted load balancer disappears: 0 at once (the default),
// negative never (it stays PENDING_DELETE).
func (s *OctaviaServer) SetDeleteDelay(reads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = reads
}

// SetPageSize makes load-balancer lists paginate by n when the client
// sends no smaller limit (0: no pagination).
func (s *OctaviaServer) SetPageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = n
}

// Inject adds a fault (Service is ServiceLoadBalancer or ServiceNetwork,
// Path is below the service prefix, e.g. "/v2/lbaas/loadbalancers").
func (s *OctaviaServer) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// Calls returns the requests received (Keystone's excluded).
func (s *OctaviaServer) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// LoadBalancerEndpoint is the Octavia endpoint as a catalog lists it
// (unversioned, like most deployments).
func (s *OctaviaServer) LoadBalancerEndpoint() string { return s.URL + "/load-balancer" }

// NetworkEndpoint is the Neutron endpoint as a catalog lists it.
func (s *OctaviaServer) NetworkEndpoint() string { return s.URL + "/network" }

// IdentityEndpoint is the Keystone v3 endpoint.
func (s *OctaviaServer) IdentityEndpoint() string { return s.URL + "/identity/v3" }

// Catalog returns a Keystone v3 catalog (the token.catalog array) with the
// load-balancer and network services in RegionOne.
func (s *OctaviaServer) Catalog() []byte {
	return []byte(fmt.Sprintf(`[%s,%s]`,
		catalogEntryJSON("load-balancer", "octavia", s.LoadBalancerEndpoint()),
		catalogEntryJSON("network", "neutron", s.NetworkEndpoint())))
}

// CatalogWithoutLoadBalancer is Catalog without Octavia: a cloud that
// does not offer load balancers.
func (s *OctaviaServer) CatalogWithoutLoadBalancer() []byte {
	return []byte("[" + catalogEntryJSON("network", "neutron", s.NetworkEndpoint()) + "]")
}

func catalogEntryJSON(typ, name, u string) string {
	var eps []string
	for _, iface := range []string{"public", "internal", "admin"} {
		eps = append(eps, fmt.Sprintf(`{"id":%q,"interface":%q,"region":"RegionOne","region_id":"RegionOne","url":%q}`,
			typ+"-"+iface, iface, u))
	}
	return fmt.Sprintf(`{"id":%q,"name":%q,"type":%q,"endpoints":[%s]}`, name+"-id", name, typ, strings.Join(eps, ","))
}

// octaviaFault writes Octavia's (wsme) error body.
func octaviaFault(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"faultcode": "Client", "faultstring": msg, "debuginfo": nil})
}

func (s *OctaviaServer) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var service, rest string
	switch {
	case p == "/identity/v3/auth/tokens" && r.Method == http.MethodPost:
		s.issue(w)
		return
	case p == "/identity/v3" || p == "/identity/v3/":
		writeJSON(w, http.StatusOK, map[string]any{"version": map[string]any{"id": "v3.14", "status": "stable"}})
		return
	case strings.HasPrefix(p, "/load-balancer/"):
		service, rest = ServiceLoadBalancer, strings.TrimPrefix(p, "/load-balancer")
	case strings.HasPrefix(p, "/network/"):
		service, rest = ServiceNetwork, strings.TrimPrefix(p, "/network")
	default:
		octaviaFault(w, http.StatusNotFound, "The resource could not be found.")
		return
	}
	c := Call{Service: service, Interface: "public", Method: r.Method, Path: rest, Query: r.URL.Query(),
		Token: r.Header.Get("X-Auth-Token"), Header: r.Header.Clone()}
	c.Header.Del("X-Auth-Token")

	s.mu.Lock()
	s.calls = append(s.calls, c)
	tok, known := s.tokens[c.Token]
	fault := s.matchFault(service, rest)
	s.mu.Unlock()

	if fault != nil {
		if fault.Hang {
			select {
			case <-r.Context().Done():
			case <-s.closing:
			}
			return
		}
		octaviaFault(w, fault.Status, "injected fault")
		return
	}
	if !known {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
			"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}})
		return
	}
	if service == ServiceNetwork {
		s.serveFloatingIPs(w, r, c, tok)
		return
	}
	s.serveLoadBalancers(w, r, c, tok)
}

func (s *OctaviaServer) matchFault(service, path string) *Fault {
	for i, f := range s.faults {
		if f.Service != "" && f.Service != service || f.Path != "" && !strings.HasPrefix(path, f.Path) {
			continue
		}
		matched := *f
		if f.Times > 0 {
			f.Times--
			if f.Times == 0 {
				s.faults = slices.Delete(s.faults, i, i+1)
			}
		}
		return &matched
	}
	return nil
}

// tick advances the deletions in progress by one read. Callers hold s.mu.
func (s *OctaviaServer) tick() {
	for id, left := range s.pending {
		if left < 0 {
			continue
		}
		if left > 0 {
			s.pending[id] = left - 1
			continue
		}
		s.remove(id)
	}
}

// remove drops a load balancer and its VIP port: the floating IPs on the
// port are disassociated. Callers hold s.mu.
func (s *OctaviaServer) remove(id string) {
	delete(s.pending, id)
	i := slices.IndexFunc(s.lbs, func(lb LoadBalancer) bool { return lb.ID == id })
	if i < 0 {
		return
	}
	port := s.lbs[i].VIPPortID
	s.lbs = slices.Delete(s.lbs, i, i+1)
	for j := range s.fips {
		if port != "" && s.fips[j].PortID == port {
			s.fips[j].PortID = ""
		}
	}
}

func lbBody(lb LoadBalancer) map[string]any {
	listeners := []map[string]string{}
	for _, l := range lb.Listeners {
		listeners = append(listeners, map[string]string{"id": l})
	}
	tags := lb.Tags
	if tags == nil {
		tags = []string{}
	}
	operating := "ONLINE"
	if lb.ProvisioningStatus != "ACTIVE" {
		operating = "OFFLINE"
	}
	return map[string]any{
		"id": lb.ID, "name": lb.Name, "description": lb.Description,
		"project_id": lb.ProjectID, "tenant_id": lb.ProjectID,
		"provisioning_status": lb.ProvisioningStatus, "operating_status": operating, "admin_state_up": true,
		"vip_address": lb.VIPAddress, "vip_port_id": lb.VIPPortID, "vip_subnet_id": "vip-subnet",
		"vip_network_id": "vip-network", "vip_qos_policy_id": nil, "additional_vips": []any{},
		"listeners": listeners, "pools": []any{}, "provider": "amphora", "flavor_id": nil,
		"availability_zone": nil, "tags": tags, "created_at": timestamp, "updated_at": timestamp,
	}
}

func (s *OctaviaServer) serveLoadBalancers(w http.ResponseWriter, r *http.Request, c Call, tok fakeToken) {
	// Octavia serves the same API under /v2 and /v2.0.
	rest, ok := strings.CutPrefix(c.Path, "/v2/lbaas/loadbalancers")
	if !ok {
		rest, ok = strings.CutPrefix(c.Path, "/v2.0/lbaas/loadbalancers")
	}
	if !ok {
		octaviaFault(w, http.StatusNotFound, "The resource could not be found.")
		return
	}
	id := strings.TrimPrefix(rest, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	visible := func(lb LoadBalancer) bool { return tok.admin || lb.ProjectID == tok.project }
	switch {
	case id == "" && r.Method == http.MethodGet:
		s.tick()
		project := c.Query.Get("project_id")
		if project != "" && project != tok.project && !tok.admin {
			octaviaFault(w, http.StatusForbidden, "Policy does not allow this request to be performed.")
			return
		}
		var items []LoadBalancer
		for _, lb := range s.lbs {
			if visible(lb) && (project == "" || lb.ProjectID == project) {
				items = append(items, lb)
			}
		}
		limit := s.pageSize
		if v := c.Query.Get("limit"); v != "" {
			if n, err := strconv.Atoi(v); err == nil && (limit == 0 || n < limit) {
				limit = n
			}
		}
		items, full, found := page(items, func(lb LoadBalancer) string { return lb.ID }, c.Query.Get("marker"), limit)
		if !found {
			octaviaFault(w, http.StatusNotFound, "Load Balancer "+c.Query.Get("marker")+" not found.")
			return
		}
		out := []map[string]any{}
		for _, lb := range items {
			out = append(out, lbBody(lb))
		}
		links := []map[string]string{}
		if full {
			next := url.Values{}
			for k, v := range c.Query {
				next[k] = v
			}
			next.Set("limit", strconv.Itoa(limit))
			next.Set("marker", items[len(items)-1].ID)
			links = append(links, map[string]string{"rel": "next",
				"href": s.LoadBalancerEndpoint() + "/v2/lbaas/loadbalancers?" + next.Encode()})
		}
		writeJSON(w, http.StatusOK, map[string]any{"loadbalancers": out, "loadbalancers_links": links})
	case id != "" && r.Method == http.MethodGet:
		s.tick()
		i := slices.IndexFunc(s.lbs, func(lb LoadBalancer) bool { return lb.ID == id && visible(lb) })
		if i < 0 {
			octaviaFault(w, http.StatusNotFound, "Load Balancer "+id+" not found.")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"loadbalancer": lbBody(s.lbs[i])})
	case id != "" && r.Method == http.MethodDelete:
		i := slices.IndexFunc(s.lbs, func(lb LoadBalancer) bool { return lb.ID == id && visible(lb) })
		if i < 0 {
			octaviaFault(w, http.StatusNotFound, "Load Balancer "+id+" not found.")
			return
		}
		lb := &s.lbs[i]
		cascade, _ := strconv.ParseBool(c.Query.Get("cascade"))
		if len(lb.Listeners) > 0 && !cascade {
			// Octavia raises ValidationException (400) here.
			octaviaFault(w, http.StatusBadRequest, "Validation failure: Cannot delete Load Balancer "+id+" - it has children")
			return
		}
		if lb.ProvisioningStatus != "ACTIVE" && lb.ProvisioningStatus != "ERROR" {
			octaviaFault(w, http.StatusConflict, "Invalid state "+lb.ProvisioningStatus+" of loadbalancer resource "+id)
			return
		}
		lb.ProvisioningStatus = "PENDING_DELETE"
		if s.delay == 0 {
			s.remove(id)
		} else {
			s.pending[id] = s.delay
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		octaviaFault(w, http.StatusMethodNotAllowed, "The method is not allowed by the double.")
	}
}

func fipBody(f FloatingIP) map[string]any {
	var port any
	if f.PortID != "" {
		port = f.PortID
	}
	return map[string]any{
		"id": f.ID, "floating_ip_address": f.Address, "port_id": port, "project_id": f.ProjectID,
		"tenant_id": f.ProjectID, "description": f.Description, "floating_network_id": "ext-net",
		"router_id": nil, "fixed_ip_address": nil, "status": "ACTIVE", "tags": []string{},
		"created_at": timestamp, "updated_at": timestamp, "revision_number": 1,
	}
}

func (s *OctaviaServer) serveFloatingIPs(w http.ResponseWriter, r *http.Request, c Call, tok fakeToken) {
	s.mu.Lock()
	defer s.mu.Unlock()
	visible := func(f FloatingIP) bool { return tok.admin || f.ProjectID == tok.project }
	switch {
	case c.Path == "/v2.0/floatingips" && r.Method == http.MethodGet:
		out := []map[string]any{}
		for _, f := range s.fips {
			if visible(f) && matches(c.Query, map[string]string{"id": f.ID, "port_id": f.PortID,
				"project_id": f.ProjectID, "floating_ip_address": f.Address, "description": f.Description}) {
				out = append(out, fipBody(f))
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"floatingips": out})
	case strings.HasPrefix(c.Path, "/v2.0/floatingips/") && r.Method == http.MethodDelete:
		id := strings.TrimPrefix(c.Path, "/v2.0/floatingips/")
		i := slices.IndexFunc(s.fips, func(f FloatingIP) bool { return f.ID == id && visible(f) })
		if i < 0 {
			neutronNotFound(w, "FloatingIPNotFound", "Floating IP "+id+" could not be found")
			return
		}
		s.fips = slices.Delete(s.fips, i, i+1)
		w.WriteHeader(http.StatusNoContent)
	default:
		neutronNotFound(w, "HTTPNotFound", "The resource could not be found.")
	}
}

// issue answers a password authentication with ServiceToken and a catalog
// holding this double's endpoints.
func (s *OctaviaServer) issue(w http.ResponseWriter) {
	w.Header().Set("X-Subject-Token", ServiceToken)
	cat := fmt.Sprintf("[%s,%s,%s]",
		catalogEntryJSON("load-balancer", "octavia", s.LoadBalancerEndpoint()),
		catalogEntryJSON("network", "neutron", s.NetworkEndpoint()),
		catalogEntryJSON("identity", "keystone", s.IdentityEndpoint()))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = fmt.Fprintf(w, `{"token":{"methods":["password"],"expires_at":"2099-01-01T00:00:00.000000Z","issued_at":%q,`+
		`"user":{"id":"service-user","name":"magnum","domain":{"id":"default","name":"Default"}},`+
		`"project":{"id":"service","name":"service","domain":{"id":"default","name":"Default"}},`+
		`"roles":[{"id":"r-admin","name":"admin"}],"catalog":%s}}`, timestamp, cat)
}
