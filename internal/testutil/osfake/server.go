package osfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Image is a Glance v2 image as seeded into the double.
type Image struct {
	ID   string
	Name string
	// OSDistro is the os_distro property; omitted from the body when empty.
	OSDistro string
	// MagnumDriver is the magnum_driver property; omitted when empty.
	MagnumDriver string
	// Properties are further top-level properties (Glance v2 flattens
	// custom properties into the image object).
	Properties map[string]string
	// Visibility defaults to "public".
	Visibility string
	// Hidden is os_hidden: Glance leaves hidden images out of lists unless
	// the query asks for os_hidden=true, but shows them by ID.
	Hidden bool
}

// Flavor is a Nova flavor.
type Flavor struct {
	ID    string
	Name  string
	VCPUs int
	RAM   int // MiB
	Disk  int // GiB; 0 means "boot from volume only"
}

// Keypair is a Nova keypair of the calling user.
type Keypair struct {
	Name        string
	Type        string // "ssh" when empty
	PublicKey   string
	Fingerprint string
}

// Network is a Neutron network.
type Network struct {
	ID       string
	Name     string
	External bool // router:external
	Shared   bool
}

// Subnet is a Neutron subnet.
type Subnet struct {
	ID        string
	Name      string
	NetworkID string
	CIDR      string
}

// Seed is the content the double serves. Collections are served in slice
// order.
type Seed struct {
	Images   []Image
	Flavors  []Flavor
	Keypairs []Keypair
	Networks []Network
	Subnets  []Subnet
}

// Service names used in Call.Service and Fault.Service.
const (
	ServiceImage   = "image"
	ServiceCompute = "compute"
	ServiceNetwork = "network"
)

// Call is one request received by the double.
type Call struct {
	// Service is "image", "compute" or "network".
	Service string
	// Interface is the Keystone interface whose URL was used: "public",
	// "internal" or "admin".
	Interface string
	Method    string
	// Path is the request path below the service prefix, for example
	// "/v2/images", "/v2.1/flavors/detail" or "/v2.0/networks".
	Path string
	// Query is the decoded query string.
	Query url.Values
	// Token is the X-Auth-Token header received.
	Token string
	// Header holds the other request headers (X-Auth-Token removed).
	Header http.Header
}

// IsList reports whether the call read a collection (rather than one
// resource by ID).
func (c Call) IsList() bool {
	switch c.Path {
	case "/v2/images", "/v2.1/flavors", "/v2.1/flavors/detail", "/v2.1/os-keypairs",
		"/v2.0/networks", "/v2.0/subnets":
		return true
	}
	return false
}

// Filtered reports whether a list call carried at least one filter that
// narrows the result by name or ID (pagination parameters do not count).
func (c Call) Filtered() bool {
	for _, k := range []string{"name", "id"} {
		if c.Query.Has(k) {
			return true
		}
	}
	return false
}

// String renders the call as "GET image /v2/images?name=x".
func (c Call) String() string {
	s := c.Method + " " + c.Service + " " + c.Path
	if len(c.Query) > 0 {
		s += "?" + c.Query.Encode()
	}
	return s
}

// Fault makes matching requests fail.
type Fault struct {
	// Service restricts the fault to one service ("" = all).
	Service string
	// Path restricts the fault to paths below the service prefix that start
	// with it ("" = all), e.g. "/v2/images".
	Path string
	// Status is the HTTP status returned (with a small JSON error body).
	Status int
	// Hang makes the request never answer: the handler waits until the
	// client gives up (its timeout) or the server closes. Status is ignored.
	Hang bool
	// Times is how many requests the fault applies to; 0 means forever.
	Times int
}

// served is what every double of this package shares: the test server,
// its URL, and the channel that releases requests held by a Hang fault when
// the double closes.
type served struct {
	// URL is the base URL, http://127.0.0.1:<port>.
	URL string

	srv     *httptest.Server
	closing chan struct{}
	once    sync.Once
}

// start serves h and closes the server when the test ends.
func (s *served) start(t testing.TB, h http.HandlerFunc) {
	t.Helper()
	s.closing = make(chan struct{})
	s.srv = httptest.NewServer(h)
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
}

// Close stops the server, releasing requests held by a Hang fault first.
// It is safe to call more than once.
func (s *served) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.srv.Close()
	})
}

// Server is a running double. Create it with New.
type Server struct {
	served // URL, Close

	mu       sync.Mutex
	seed     Seed
	calls    []Call
	faults   []*Fault
	token    string
	pageSize int
}

// New starts a double serving seed and closes it when the test ends.
func New(t testing.TB, seed Seed) *Server {
	t.Helper()
	s := &Server{seed: seed}
	s.start(t, s.serveHTTP)
	return s
}

// RequireToken makes the double answer 401 to requests whose X-Auth-Token
// is not tok. By default any token (or none) is accepted.
func (s *Server) RequireToken(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = tok
}

// SetPageSize sets the page size of list answers when the client sends no
// limit. 0 restores the services' defaults: Glance 25, Nova 1000, Neutron
// no pagination.
func (s *Server) SetPageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = n
}

// Inject adds a fault; faults are tried in the order they were added.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// Calls returns a copy of the requests received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Reset forgets the recorded calls and the faults.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
	s.faults = nil
}

// UnfilteredLists returns the list calls that carried no name or ID filter.
func (s *Server) UnfilteredLists() []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.IsList() && !c.Filtered() {
			out = append(out, c)
		}
	}
	return out
}

// Endpoint returns the URL Keystone would list for service ("image",
// "compute" or "network") and interface ("public", "internal", "admin").
func (s *Server) Endpoint(service, iface string) string {
	prefix := ""
	if iface != "" && iface != "public" {
		prefix = "/" + iface
	}
	switch service {
	case ServiceCompute:
		return s.URL + prefix + "/compute/v2.1"
	default:
		return s.URL + prefix + "/" + service
	}
}

// Catalog returns a Keystone v3 token catalog (the JSON array found under
// token.catalog, and in keystonemiddleware's X-Service-Catalog header) with
// the three services in region RegionOne, each with a public, internal and
// admin endpoint pointing at the double.
func (s *Server) Catalog() []byte {
	return s.CatalogForRegions("RegionOne")
}

// CatalogForRegions is Catalog with one set of endpoints per region, in
// the order given. The endpoints of every region other than RegionOne get a
// "/<region>" path prefix, which the double does not serve (404), so a
// client that picks the wrong region fails visibly.
func (s *Server) CatalogForRegions(regions ...string) []byte {
	type endpoint struct {
		ID        string `json:"id"`
		Interface string `json:"interface"`
		Region    string `json:"region"`
		RegionID  string `json:"region_id"`
		URL       string `json:"url"`
	}
	type entry struct {
		ID        string     `json:"id"`
		Name      string     `json:"name"`
		Type      string     `json:"type"`
		Endpoints []endpoint `json:"endpoints"`
	}
	names := map[string]string{ServiceImage: "glance", ServiceCompute: "nova", ServiceNetwork: "neutron"}
	var cat []entry
	for _, svc := range []string{ServiceImage, ServiceCompute, ServiceNetwork} {
		e := entry{ID: names[svc] + "-id", Name: names[svc], Type: svc}
		for _, region := range regions {
			for _, iface := range []string{"public", "internal", "admin"} {
				u := s.Endpoint(svc, iface)
				if region != "RegionOne" {
					u = s.URL + "/" + region + strings.TrimPrefix(u, s.URL)
				}
				e.Endpoints = append(e.Endpoints, endpoint{
					ID: fmt.Sprintf("%s-%s-%s", svc, region, iface), Interface: iface,
					Region: region, RegionID: region, URL: u,
				})
			}
		}
		cat = append(cat, e)
	}
	b, err := json.Marshal(cat)
	if err != nil {
		panic(err) // static types; cannot fail
	}
	return b
}

// route splits a request path into interface, service and the rest.
func route(p string) (iface, service, rest string, ok bool) {
	iface = "public"
	for _, pre := range []string{"/internal", "/admin"} {
		if strings.HasPrefix(p, pre+"/") {
			iface = pre[1:]
			p = strings.TrimPrefix(p, pre)
		}
	}
	for _, svc := range []string{ServiceImage, ServiceCompute, ServiceNetwork} {
		if p == "/"+svc || strings.HasPrefix(p, "/"+svc+"/") {
			return iface, svc, strings.TrimPrefix(p, "/"+svc), true
		}
	}
	return "", "", "", false
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	iface, service, rest, ok := route(r.URL.EscapedPath())
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"code": 404, "message": "no such service"}})
		return
	}
	if unescaped, err := url.PathUnescape(rest); err == nil {
		rest = unescaped
	}
	c := Call{
		Service: service, Interface: iface, Method: r.Method, Path: rest,
		Query: r.URL.Query(), Token: r.Header.Get("X-Auth-Token"), Header: r.Header.Clone(),
	}
	c.Header.Del("X-Auth-Token")

	s.mu.Lock()
	s.calls = append(s.calls, c)
	token := s.token
	fault := s.matchFault(service, rest)
	seed := s.seed
	pageSize := s.pageSize
	s.mu.Unlock()

	if fault != nil {
		if fault.Hang {
			select {
			case <-r.Context().Done():
			case <-s.closing:
			}
			return
		}
		writeJSON(w, fault.Status, map[string]any{"error": map[string]any{
			"code": fault.Status, "message": "injected fault", "title": http.StatusText(fault.Status),
		}})
		return
	}
	if token != "" && c.Token != token {
		w.Header().Set("WWW-Authenticate", `Keystone uri="http://127.0.0.1/identity"`)
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
			"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized",
		}})
		return
	}
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": map[string]any{"code": 405, "message": "read-only double"}})
		return
	}
	base := s.URL
	if iface != "public" {
		base += "/" + iface
	}
	switch service {
	case ServiceImage:
		serveGlance(w, c, seed, pageSize)
	case ServiceCompute:
		serveNova(w, c, seed, pageSize, base+"/compute")
	case ServiceNetwork:
		serveNeutron(w, c, seed, pageSize, base+"/network")
	}
}

// matchFault returns the first fault matching the request and consumes one
// of its uses. Callers hold s.mu.
func (s *Server) matchFault(service, path string) *Fault {
	for i, f := range s.faults {
		if f.Service != "" && f.Service != service {
			continue
		}
		if f.Path != "" && !strings.HasPrefix(path, f.Path) {
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

func writeJSON(w http.ResponseWriter, status int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// page cuts items after the element whose key is marker and to at most
// limit elements. It reports whether the page is full (services emit a next
// link then, even when nothing follows).
func page[T any](items []T, key func(T) string, marker string, limit int) ([]T, bool, bool) {
	if marker != "" {
		i := slices.IndexFunc(items, func(it T) bool { return key(it) == marker })
		if i < 0 {
			return nil, false, false
		}
		items = items[i+1:]
	}
	if limit > 0 && len(items) >= limit {
		return items[:limit], true, true
	}
	return items, false, true
}
