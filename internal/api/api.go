package api

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// HandlerFunc is the shape of every route handler. A returned error is
// written by the error writer: *magnum.Error in Magnum's envelope, anything
// else as a generic 500 (logged once with the request ID).
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Authenticator validates the caller of a non-public request. Any error is
// answered with keystonemiddleware's 401, unless the error (or one it wraps)
// has an HTTPStatus() method returning 503, which is answered with the 503 of
// an unreachable Keystone.
type Authenticator interface {
	Authenticate(r *http.Request) (*magnum.RequestContext, error)
}

// Policy evaluates one oslo.policy rule for a target and the caller's
// credentials (see CredentialsFrom).
type Policy interface {
	Enforce(rule string, target, creds map[string]any) (bool, error)
}

// MServices lists the rows of the magnum_service table.
type MServices interface {
	ListServices(ctx context.Context) ([]magnum.MagnumService, error)
}

// CORSOptions are the options of the [cors] section (oslo.middleware), with
// Magnum's defaults for the headers and methods.
type CORSOptions struct {
	// AllowedOrigin lists the origins allowed to share the resource; "*"
	// allows any. Empty disables CORS.
	AllowedOrigin []string
	// AllowCredentials adds Access-Control-Allow-Credentials: true.
	AllowCredentials bool
	// ExposeHeaders are sent in Access-Control-Expose-Headers on simple
	// requests.
	ExposeHeaders []string
	// MaxAge is sent in Access-Control-Max-Age on preflight answers (seconds;
	// 0 omits it).
	MaxAge int
	// AllowMethods are the methods a preflight may ask for.
	AllowMethods []string
	// AllowHeaders are the headers a preflight may ask for, besides the
	// simple headers.
	AllowHeaders []string
}

// DefaultCORSOptions returns the [cors] defaults Magnum sets
// (magnum/common/config.py set_cors_middleware_defaults) with no allowed
// origin.
func DefaultCORSOptions() CORSOptions {
	return CORSOptions{
		AllowCredentials: true,
		MaxAge:           3600,
		AllowHeaders: []string{"X-Auth-Token", "X-Identity-Status", "X-Roles", "X-Service-Catalog",
			"X-User-Id", "X-Tenant-Id", "X-OpenStack-Request-ID", "X-Server-Management-Url"},
		ExposeHeaders: []string{"X-Auth-Token", "X-Subject-Token", "X-Service-Token",
			"X-OpenStack-Request-ID", "X-Server-Management-Url"},
		AllowMethods: []string{"GET", "PUT", "POST", "DELETE", "PATCH"},
	}
}

// Options configure the handler returned by New.
type Options struct {
	// Auth authenticates non-public requests. Required.
	Auth Authenticator
	// Policy evaluates policy rules. Required by handlers that check rules.
	Policy Policy
	// MaxLimit is [api]/max_limit: the page size when no limit is given and
	// the cap of larger limits. Default 1000.
	MaxLimit int
	// MaxBodyBytes limits request bodies; larger bodies get a 413 in
	// Magnum's error body. Default 1 MiB.
	MaxBodyBytes int64
	// CORS configures cross-origin resource sharing ([cors]).
	CORS CORSOptions
	// ProxyHeaders is [oslo_middleware]/enable_proxy_headers_parsing: honour
	// Forwarded, X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Prefix
	// when building links.
	ProxyHeaders bool
	// PublicRoutes are the paths that need no token (acl_public_routes of
	// api-paste.ini); each also matches with a trailing ".json" and trailing
	// slashes. Default "/" and "/v1".
	PublicRoutes []string
	// WWWAuthenticateURI is [keystone_authtoken]/www_authenticate_uri, sent
	// in the WWW-Authenticate header of 401 answers.
	WWWAuthenticateURI string
	// Logger receives unexpected errors and panics. Default slog.Default().
	Logger *slog.Logger
	// HealthcheckDisableFile is [healthcheck]/disable_by_file_path: when the
	// file exists, /healthcheck answers 503 DISABLED BY FILE. Empty disables
	// the check.
	HealthcheckDisableFile string
	// ServiceDownTime is [DEFAULT]/service_down_time: a magnum service whose
	// last heartbeat is older is "down". Default 180 s.
	ServiceDownTime time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// NewRequestID returns a request ID ("req-<uuid4>"). Default random.
	NewRequestID func() string
	// MServices backs GET /v1/mservices.
	MServices MServices
	// Conductor performs the use cases of the resource handlers (templates,
	// clusters, nodegroups, quotas, ...). Required by those handlers.
	Conductor *conductor.Conductor
	// Extra registers handlers for route IDs of the route table, taking
	// precedence over the built-in ones. Route IDs without any handler
	// answer 501.
	Extra map[string]HandlerFunc
}

// server is the API handler built by New.
type server struct {
	opts     Options
	log      *slog.Logger
	routes   []*Route
	handlers map[string]HandlerFunc
	root     http.Handler
	// pages admits the cluster list pages read and rendered at once
	// (clusterList).
	pages chan struct{}
}

// New returns the API handler with the full middleware pipeline.
func New(o Options) http.Handler { return newServer(o) }

func newServer(o Options) *server {
	if o.Auth == nil {
		panic("api: Options.Auth is required")
	}
	if o.MaxLimit <= 0 {
		o.MaxLimit = 1000
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.PublicRoutes == nil {
		o.PublicRoutes = []string{"/", "/v1"}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ServiceDownTime <= 0 {
		o.ServiceDownTime = 180 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewRequestID == nil {
		o.NewRequestID = newRequestID
	}
	s := &server{opts: o, log: o.Logger, pages: make(chan struct{}, max(2, 4*runtime.GOMAXPROCS(0)))}
	s.routes = buildRoutes()
	s.handlers = map[string]HandlerFunc{}
	s.registerHandlers()
	for id, h := range o.Extra {
		s.handlers[id] = h
	}
	s.root = s.pipeline()
	return s
}

// ServeHTTP implements http.Handler.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.root.ServeHTTP(w, r)
}

// register binds a handler to a route ID; it panics on an unknown or
// duplicate ID (a programmer error found at start-up).
func (s *server) register(id string, h HandlerFunc) {
	found := false
	for _, rt := range s.routes {
		if rt.ID == id {
			found = true
		}
	}
	if !found {
		panic("api: register of unknown route " + id)
	}
	if _, dup := s.handlers[id]; dup {
		panic("api: duplicate handler for route " + id)
	}
	s.handlers[id] = h
}

// registerHandlers binds the resource handlers written so far. Each resource
// file adds its own register function here.
func (s *server) registerHandlers() {
	s.register("v1.get", s.getV1)
	s.registerMServices()
	s.registerClusterTemplates()
	s.registerCertificates()
	s.registerClusters()
	s.registerSecondaryResources()
}

// newRequestID returns "req-" and a random (version 4) UUID.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("req-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
