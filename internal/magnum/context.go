package magnum

import "context"

// RequestContext is the identity and request metadata of one API call, built
// by the auth layer the way Magnum's ContextHook builds its RequestContext
// from keystonemiddleware's headers.
type RequestContext struct {
	RequestID       string
	AuthToken       string // never logged
	UserID          string
	UserName        string
	UserDomainID    string
	UserDomainName  string
	ProjectID       string
	ProjectName     string
	ProjectDomainID string
	DomainID        string
	DomainName      string
	Roles           []string
	// SystemScope is "all" for a system-scoped token, "" otherwise.
	SystemScope string
	// IsAdmin is computed once at context creation from the context_is_admin
	// rule (role:admin), as magnum/common/context.py does.
	IsAdmin bool
	// AllProjects is set by handlers when an *_all_projects rule allowed the
	// caller to see every project's resources.
	AllProjects bool
	// TokenExpires is the token's expiry (zero in no-auth mode).
	TokenExpiresUnix int64
	// ServiceCatalog is the raw catalog of the token (JSON), used to call
	// other services as the user. Nil in no-auth mode.
	ServiceCatalog []byte
}

// HasRole reports whether the caller holds role (case-insensitive, as
// oslo.policy compares roles).
func (c *RequestContext) HasRole(role string) bool {
	for _, r := range c.Roles {
		if equalFold(r, role) {
			return true
		}
	}
	return false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

type ctxKey struct{}

// WithRequestContext returns ctx carrying rc.
func WithRequestContext(ctx context.Context, rc *RequestContext) context.Context {
	return context.WithValue(ctx, ctxKey{}, rc)
}

// FromContext returns the RequestContext stored in ctx, or nil.
func FromContext(ctx context.Context) *RequestContext {
	rc, _ := ctx.Value(ctxKey{}).(*RequestContext)
	return rc
}
