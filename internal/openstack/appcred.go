package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// DefaultAppCredentialRoles are the roles an application credential of a
// cluster gets when the caller has them: what the cloud provider, the CSI
// drivers and CAPO need, never admin (driver-capi.md § 6.2).
var DefaultAppCredentialRoles = []string{"member", "load-balancer_member"}

// Caller is the identity an OpenStack call is made for: the user's token
// and its catalog, or, with Service set, openkeel's own service
// credentials (the periodic poll has no user token).
type Caller struct {
	// Token is the user's Keystone token. Never logged.
	Token string
	// UserID and ProjectID identify the user and the token's project.
	UserID    string
	ProjectID string
	// ServiceCatalog is the token's catalog (JSON), used to find endpoints.
	ServiceCatalog []byte
	// Roles are the token's role names; nil means "ask Keystone".
	Roles []string
	// Service asks for the service credentials instead of Token.
	Service bool
}

// String implements fmt.Stringer without the token.
func (c Caller) String() string {
	tok := "<none>"
	if c.Token != "" {
		tok = "<redacted>"
	}
	return fmt.Sprintf("Caller{UserID:%q ProjectID:%q Service:%t Token:%s}", c.UserID, c.ProjectID, c.Service, tok)
}

// GoString implements fmt.GoStringer without the token.
func (c Caller) GoString() string { return c.String() }

// ServiceAuth are openkeel's own Keystone credentials, used where no user
// token exists (deleting a deleted cluster's application credential and
// server groups). SystemScope asks for a system-scoped token ("all"),
// else the token is scoped to ProjectName.
type ServiceAuth struct {
	AuthURL           string
	Username          string
	Password          string
	UserDomainName    string
	ProjectName       string
	ProjectDomainName string
	SystemScope       bool
	// RegionName and Interface select catalog endpoints of the service
	// token ("" = any region; "public" when empty).
	RegionName string
	Interface  string
}

// SessionOptions are the HTTP settings shared by the stores.
type SessionOptions struct {
	// Timeout bounds each call (DefaultTimeout when zero).
	Timeout time.Duration
	// CAFile, CertFile, KeyFile and Insecure are the TLS settings.
	CAFile, CertFile, KeyFile string
	Insecure                  bool
	// Transport replaces the HTTP transport (tests).
	Transport http.RoundTripper
	// UserAgent is sent with every request ("openkeel-magnum" when empty).
	UserAgent string
}

// session is the HTTP client and the lazily authenticated service
// provider client shared by the stores.
type session struct {
	timeout time.Duration
	http    http.Client
	ua      string
	svc     *ServiceAuth

	mu       sync.Mutex
	provider *gophercloud.ProviderClient
}

func newSession(o SessionOptions, svc *ServiceAuth) (*session, error) {
	s := &session{timeout: o.Timeout, ua: o.UserAgent, svc: svc}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.ua == "" {
		s.ua = "openkeel-magnum"
	}
	rt := o.Transport
	if rt == nil {
		conf, err := tlsConfig(Options{CAFile: o.CAFile, CertFile: o.CertFile, KeyFile: o.KeyFile, Insecure: o.Insecure})
		if err != nil {
			return nil, err
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = conf
		rt = t
	}
	s.http = http.Client{Transport: rt, Timeout: s.timeout}
	return s, nil
}

// userProvider is a provider client carrying the user's token.
func (s *session) userProvider(token string) *gophercloud.ProviderClient {
	pc := &gophercloud.ProviderClient{HTTPClient: s.http}
	pc.UseTokenLock()
	pc.SetToken(token)
	pc.UserAgent.Prepend(s.ua)
	return pc
}

// serviceProvider returns the provider client of the service credentials,
// authenticating on first use; gophercloud re-authenticates on a 401.
func (s *session) serviceProvider(ctx context.Context) (*gophercloud.ProviderClient, error) {
	if s.svc == nil || s.svc.AuthURL == "" {
		return nil, errors.New("openstack: no service credentials configured")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider != nil {
		return s.provider, nil
	}
	pc, err := gcopenstack.NewClient(s.svc.AuthURL)
	if err != nil {
		return nil, fmt.Errorf("openstack: service auth URL: %w", err)
	}
	pc.HTTPClient = s.http
	pc.UserAgent.Prepend(s.ua)
	opts := gophercloud.AuthOptions{
		IdentityEndpoint: s.svc.AuthURL, Username: s.svc.Username, Password: s.svc.Password,
		DomainName: s.svc.UserDomainName, AllowReauth: true,
	}
	if s.svc.SystemScope {
		opts.Scope = &gophercloud.AuthScope{System: true}
	} else {
		opts.Scope = &gophercloud.AuthScope{ProjectName: s.svc.ProjectName, DomainName: s.svc.ProjectDomainName}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := gcopenstack.Authenticate(ctx, pc, opts); err != nil {
		return nil, fmt.Errorf("openstack: authenticate the service user: %w", err)
	}
	s.provider = pc
	return pc, nil
}

func (s *session) serviceEndpointOpts() gophercloud.EndpointOpts {
	iface := gophercloud.AvailabilityPublic
	switch normalizeInterface(s.svc.Interface) {
	case "internal":
		iface = gophercloud.AvailabilityInternal
	case "admin":
		iface = gophercloud.AvailabilityAdmin
	}
	return gophercloud.EndpointOpts{Region: s.svc.RegionName, Availability: iface}
}

// AppCredentialOptions configure NewAppCredentials.
type AppCredentialOptions struct {
	// AuthURL is the Keystone v3 endpoint user calls go to, for example
	// "https://keystone.example.com/v3". Required.
	AuthURL string
	// Roles are the roles a new credential gets, among those the caller
	// has (DefaultAppCredentialRoles when nil). admin is never granted.
	Roles []string
	// Service deletes credentials (nil: Delete fails).
	Service *ServiceAuth
	SessionOptions
}

// AppCredential is a Keystone application credential.
type AppCredential struct {
	// ID and Secret authenticate; Secret is never logged.
	ID     string
	Secret string
	Name   string
	// UserID owns the credential; ProjectID is its project.
	UserID    string
	ProjectID string
	// Roles are the role names granted.
	Roles []string
}

// String implements fmt.Stringer without the secret.
func (a AppCredential) String() string {
	return fmt.Sprintf("AppCredential{ID:%q Name:%q UserID:%q Roles:%v}", a.ID, a.Name, a.UserID, a.Roles)
}

// GoString implements fmt.GoStringer without the secret.
func (a AppCredential) GoString() string { return a.String() }

// AppCredentials creates application credentials as the calling user
// (POST /v3/users/{user_id}/application_credentials with the user's token:
// since trusts are gone it is the only way to act for the user) and deletes
// them by ID with the service credentials. It is safe for concurrent use.
type AppCredentials struct {
	opts AppCredentialOptions
	s    *session
}

// NewAppCredentials validates o.
func NewAppCredentials(o AppCredentialOptions) (*AppCredentials, error) {
	if o.AuthURL == "" {
		return nil, errors.New("openstack: application credentials need the Keystone URL")
	}
	if _, _, err := serviceRoots(o.AuthURL, "v3"); err != nil {
		return nil, fmt.Errorf("openstack: Keystone URL: %w", err)
	}
	if o.Roles == nil {
		o.Roles = DefaultAppCredentialRoles
	}
	s, err := newSession(o.SessionOptions, o.Service)
	if err != nil {
		return nil, err
	}
	return &AppCredentials{opts: o, s: s}, nil
}

// identity returns a Keystone v3 client for the user's token.
func (a *AppCredentials) identity(token string) (*gophercloud.ServiceClient, error) {
	_, base, err := serviceRoots(a.opts.AuthURL, "v3")
	if err != nil {
		return nil, err
	}
	return &gophercloud.ServiceClient{ProviderClient: a.s.userProvider(token), Endpoint: base}, nil
}

// ErrNoGrantableRole is returned by Create when the caller has none of the
// configured roles: a credential without an explicit role list would
// inherit every role of the caller, admin included.
var ErrNoGrantableRole = errors.New("openstack: the caller has none of the roles an application credential may get")

// Create makes an application credential owned by the caller, named name,
// restricted (it cannot create further credentials or trusts), with the
// configured roles the caller actually has, never admin.
func (a *AppCredentials) Create(ctx context.Context, caller Caller, name, description string) (AppCredential, error) {
	if caller.Token == "" || caller.UserID == "" {
		return AppCredential{}, errors.New("openstack: creating an application credential needs the user's token and ID")
	}
	client, err := a.identity(caller.Token)
	if err != nil {
		return AppCredential{}, err
	}
	have := caller.Roles
	if have == nil {
		if have, err = a.tokenRoles(ctx, client, caller.Token); err != nil {
			return AppCredential{}, err
		}
	}
	roles := grantable(a.opts.Roles, have)
	if len(roles) == 0 {
		return AppCredential{}, ErrNoGrantableRole
	}
	opts := applicationcredentials.CreateOpts{Name: name, Description: description, Unrestricted: false}
	for _, r := range roles {
		opts.Roles = append(opts.Roles, applicationcredentials.Role{Name: r})
	}
	cctx, cancel := context.WithTimeout(ctx, a.s.timeout)
	defer cancel()
	ac, err := applicationcredentials.Create(cctx, client, caller.UserID, opts).Extract()
	if err != nil {
		return AppCredential{}, fmt.Errorf("openstack: create application credential %s: %w", name, keystoneError(err))
	}
	out := AppCredential{ID: ac.ID, Secret: ac.Secret, Name: ac.Name, UserID: caller.UserID, ProjectID: ac.ProjectID}
	for _, r := range ac.Roles {
		out.Roles = append(out.Roles, r.Name)
	}
	return out, nil
}

// tokenRoles reads the role names of the caller's own token.
func (a *AppCredentials) tokenRoles(ctx context.Context, client *gophercloud.ServiceClient, token string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, a.s.timeout)
	defer cancel()
	roles, err := tokens.Get(ctx, client, token).ExtractRoles()
	if err != nil {
		return nil, fmt.Errorf("openstack: read the caller's roles: %w", keystoneError(err))
	}
	out := make([]string, 0, len(roles))
	for _, r := range roles {
		out = append(out, r.Name)
	}
	return out, nil
}

// grantable is want ∩ have (case-insensitive, in want's order), without
// admin.
func grantable(want, have []string) []string {
	var out []string
	for _, w := range want {
		if strings.EqualFold(w, "admin") {
			continue
		}
		if slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			out = append(out, w)
		}
	}
	return out
}

// Delete removes the application credential id of userID with the service
// credentials. A credential (or user) that no longer exists is not an
// error; a refusal (403) is returned and wraps ErrForbidden.
func (a *AppCredentials) Delete(ctx context.Context, userID, id string) error {
	if userID == "" || id == "" {
		return errors.New("openstack: deleting an application credential needs its user and ID")
	}
	pc, err := a.s.serviceProvider(ctx)
	if err != nil {
		return err
	}
	_, base, err := serviceRoots(a.opts.AuthURL, "v3")
	if err != nil {
		return err
	}
	client := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: base}
	ctx, cancel := context.WithTimeout(ctx, a.s.timeout)
	defer cancel()
	err = applicationcredentials.Delete(ctx, client, userID, id).ExtractErr()
	if err == nil || statusOf(err) == http.StatusNotFound {
		return nil
	}
	return fmt.Errorf("openstack: delete application credential %s: %w", id, keystoneError(err))
}

// ErrForbidden is wrapped by errors of calls Keystone or Nova refused
// (403).
var ErrForbidden = errors.New("forbidden")

// keystoneError keeps the HTTP status of a failed call and drops the
// response body (it may echo request content).
func keystoneError(err error) error {
	switch st := statusOf(err); {
	case st == http.StatusForbidden:
		return fmt.Errorf("HTTP 403: %w", ErrForbidden)
	case st != 0:
		return fmt.Errorf("HTTP %d", st)
	default:
		return err
	}
}
