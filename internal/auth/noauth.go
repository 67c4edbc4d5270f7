package auth

import (
	"net/http"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Defaults of the NoAuth identity, used when the request does not name one.
const (
	NoAuthProjectID   = "openkeel-project"
	NoAuthProjectName = "openkeel"
	NoAuthUserID      = "openkeel-user"
	NoAuthUserName    = "openkeel"
	NoAuthDomainID    = "default"
	NoAuthDomainName  = "Default"
)

// NoAuthRoles is the comma-separated role list of a NoAuth request without
// X-Roles: admin, so that every call of `openstack coe` works against a
// development server.
const NoAuthRoles = "admin,member,reader"

// NoAuth is the development Authenticator: it trusts the identity headers
// of the request (the ones keystonemiddleware sets) and fills the rest with
// the NoAuth* defaults. It never fails.
type NoAuth struct{}

var _ Authenticator = NoAuth{}

// NewNoAuth returns the development Authenticator.
func NewNoAuth() NoAuth { return NoAuth{} }

// Authenticate implements Authenticator.
func (NoAuth) Authenticate(r *http.Request) (*magnum.RequestContext, error) {
	h := r.Header
	get := func(name, def string) string {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			return v
		}
		return def
	}
	rc := &magnum.RequestContext{
		RequestID:       requestID(r),
		AuthToken:       strings.TrimSpace(h.Get("X-Auth-Token")),
		UserID:          get("X-User-Id", NoAuthUserID),
		UserName:        get("X-User-Name", NoAuthUserName),
		UserDomainID:    get("X-User-Domain-Id", NoAuthDomainID),
		UserDomainName:  get("X-User-Domain-Name", NoAuthDomainName),
		ProjectID:       get("X-Project-Id", NoAuthProjectID),
		ProjectName:     get("X-Project-Name", NoAuthProjectName),
		ProjectDomainID: get("X-Project-Domain-Id", NoAuthDomainID),
		DomainID:        get("X-Domain-Id", ""),
		DomainName:      get("X-Domain-Name", ""),
		SystemScope:     get("X-System-Scope", ""),
	}
	roles := NoAuthRoles
	if _, ok := h["X-Roles"]; ok {
		roles = h.Get("X-Roles")
	}
	// Magnum: magnum/api/hooks.py:56 splits X-Roles on commas; blanks are
	// dropped here (Magnum would keep an empty role name).
	rc.Roles = []string{}
	for _, role := range strings.Split(roles, ",") {
		if role = strings.TrimSpace(role); role != "" {
			rc.Roles = append(rc.Roles, role)
		}
	}
	rc.IsAdmin = rc.HasRole("admin")
	return rc, nil
}
