package openstack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// DefaultTimeout bounds every call to Glance, Nova or Neutron when
// Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// ServiceOptions are the per-service options of Magnum's [glance_client],
// [nova_client] and [neutron_client] groups, plus a fixed endpoint.
type ServiceOptions struct {
	// RegionName is region_name: only catalog endpoints of this region are
	// used ("" = any region).
	RegionName string
	// EndpointType is endpoint_type: publicURL (default), internalURL or
	// adminURL; the v3 spellings public, internal, admin are accepted too.
	EndpointType string
	// Endpoint, when set, is used instead of the token's catalog.
	Endpoint string
}

// Options configures NewClients.
type Options struct {
	Glance  ServiceOptions
	Nova    ServiceOptions
	Neutron ServiceOptions

	// Timeout bounds each HTTP call (DefaultTimeout when zero).
	Timeout time.Duration

	// TLS settings of the session, as Magnum takes them from the
	// [keystone_auth] session options (cafile, certfile, keyfile, insecure).
	CAFile   string
	CertFile string
	KeyFile  string
	Insecure bool

	// Transport replaces the HTTP transport (and the TLS settings above);
	// for tests.
	Transport http.RoundTripper

	// UserAgent is sent with every request ("openkeel-magnum" when empty).
	UserAgent string
}

// Clients builds, for each request, gophercloud service clients that act as
// the caller: the caller's token, endpoints from the caller's catalog.
// It is safe for concurrent use.
type Clients struct {
	opts      Options
	timeout   time.Duration
	http      http.Client
	endpoints endpointCache
}

// NewClients validates opts and prepares the shared HTTP client.
func NewClients(opts Options) (*Clients, error) {
	c := &Clients{opts: opts, timeout: opts.Timeout}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	for _, s := range []struct {
		name string
		o    ServiceOptions
		want string
	}{{"glance_client", opts.Glance, "v2"}, {"nova_client", opts.Nova, "v2.1"}, {"neutron_client", opts.Neutron, "v2.0"}} {
		if s.o.Endpoint != "" {
			if _, _, err := serviceRoots(s.o.Endpoint, s.want); err != nil {
				return nil, fmt.Errorf("[%s] endpoint: %w", s.name, err)
			}
		}
	}
	rt := opts.Transport
	if rt == nil {
		tlsConf, err := tlsConfig(opts)
		if err != nil {
			return nil, err
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tlsConf
		// A cluster create reads up to seven resources at once (three from
		// Neutron, three from Nova), and requests run concurrently: keep
		// their connections for reuse rather than the default two per host.
		t.MaxIdleConnsPerHost = maxIdleConnsPerHost
		rt = t
	}
	c.http = http.Client{Transport: rt, Timeout: c.timeout}
	return c, nil
}

// maxIdleConnsPerHost is how many idle connections to each OpenStack
// service the clients keep.
const maxIdleConnsPerHost = 32

func tlsConfig(opts Options) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.Insecure} //nolint:gosec // operator's [keystone_auth]/insecure
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", opts.CAFile)
		}
		conf.RootCAs = pool
	}
	if opts.CertFile != "" || opts.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// service identifies one of the three services.
type service struct {
	client      string // Magnum's client name, used in AuthorizationFailure
	serviceType string // Keystone catalog type
	version     string // appended to an unversioned endpoint
}

var (
	serviceImage   = service{"glance", "image", "v2"}
	serviceCompute = service{"nova", "compute", "v2.1"}
	serviceNetwork = service{"neutron", "network", "v2.0"}
)

func (c *Clients) serviceOptions(s service) ServiceOptions {
	switch s {
	case serviceImage:
		return c.opts.Glance
	case serviceCompute:
		return c.opts.Nova
	default:
		return c.opts.Neutron
	}
}

// requestIDPattern is the form oslo.middleware accepts as a global request
// ID from another service.
var requestIDPattern = regexp.MustCompile(`^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Image returns a Glance v2 client acting as the caller of ctx.
func (c *Clients) Image(ctx context.Context) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, serviceImage)
}

// Compute returns a Nova v2.1 client acting as the caller of ctx.
func (c *Clients) Compute(ctx context.Context) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, serviceCompute)
}

// Network returns a Neutron v2.0 client acting as the caller of ctx.
func (c *Clients) Network(ctx context.Context) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, serviceNetwork)
}

// serviceClient builds a client for s with the token and catalog of the
// RequestContext in ctx. Failures are Magnum's AuthorizationFailure (403),
// with keystoneauth's texts (magnum/common/clients.py wraps them with
// "unexpected client error occurred: ").
func (c *Clients) serviceClient(ctx context.Context, s service) (*gophercloud.ServiceClient, error) {
	rc := magnum.FromContext(ctx)
	if rc == nil || rc.AuthToken == "" {
		// Magnum: magnum/common/keystone.py, no token in the context.
		return nil, AuthorizationFailure("keystone", "reason Keystone API connection failed: no password or token found.")
	}
	so := c.serviceOptions(s)
	endpoint := so.Endpoint
	if endpoint == "" {
		var err error
		endpoint, err = c.endpoints.resolve(rc.ServiceCatalog, s.serviceType, so.EndpointType, so.RegionName)
		if err != nil {
			return nil, AuthorizationFailure(s.client, "unexpected client error occurred: "+err.Error())
		}
	}
	root, base, err := serviceRoots(endpoint, s.version)
	if err != nil {
		return nil, AuthorizationFailure(s.client, "unexpected client error occurred: "+err.Error())
	}
	pc := &gophercloud.ProviderClient{HTTPClient: c.http}
	pc.UseTokenLock()
	pc.SetToken(rc.AuthToken)
	ua := c.opts.UserAgent
	if ua == "" {
		ua = "openkeel-magnum"
	}
	pc.UserAgent.Prepend(ua)
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: root, ResourceBase: base}
	if requestIDPattern.MatchString(rc.RequestID) {
		sc.MoreHeaders = map[string]string{"X-OpenStack-Request-ID": rc.RequestID}
	}
	return sc, nil
}

// get performs one GET bounded by the configured timeout and decodes the
// JSON answer into out.
func (c *Clients) get(ctx context.Context, sc *gophercloud.ServiceClient, u string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := sc.Get(ctx, u, out, &gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
	return err
}

// statusOf returns the HTTP status of a failed call, or 0 when the call
// did not get an answer (timeout, connection refused).
func statusOf(err error) int {
	var e gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &e) {
		return e.Actual
	}
	var pe *gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &pe) {
		return pe.Actual
	}
	return 0
}

// nextURL rebuilds a pagination link on the client's own collection URL,
// keeping only its query: services behind proxies often advertise hosts the
// caller cannot reach, and Glance's links are relative.
func nextURL(collection, link string) (string, error) {
	u, err := url.Parse(link)
	if err != nil {
		return "", fmt.Errorf("pagination link %q: %w", link, err)
	}
	if u.RawQuery == "" {
		return "", fmt.Errorf("pagination link %q has no marker", link)
	}
	return collection + "?" + u.RawQuery, nil
}
