package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// tokenBody is the part of Keystone's v3 token body ({"token": {...}}) that
// the context needs.
type tokenBody struct {
	Token struct {
		ExpiresAt string `json:"expires_at"`
		User      struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Domain struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"domain"`
		} `json:"user"`
		Project *struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Domain struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"domain"`
		} `json:"project"`
		Domain *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"domain"`
		System map[string]bool `json:"system"`
		Roles  []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"roles"`
		Catalog               json.RawMessage `json:"catalog"`
		ApplicationCredential *struct {
			AccessRules json.RawMessage `json:"access_rules"`
		} `json:"application_credential"`
	} `json:"token"`
}

// parseExpiry parses Keystone's expires_at ("2026-11-30T04:31:08.000000Z"),
// also accepting other RFC 3339 forms.
func parseExpiry(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("token has no expires_at")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		// Keystone's own format without a zone designator is UTC.
		t, err = time.Parse("2006-01-02T15:04:05.999999", s)
		if err != nil {
			return time.Time{}, fmt.Errorf("expires_at %q: %w", s, err)
		}
	}
	return t.UTC(), nil
}

// contextFromToken builds the caller's RequestContext from a validated token
// body, as Magnum's ContextHook builds it from keystonemiddleware's headers
// (X-User-Id, X-Project-Id, X-Roles...). RequestID and AuthToken are left
// for the caller: the context is cached across requests.
func contextFromToken(raw []byte) (*magnum.RequestContext, time.Time, error) {
	var b tokenBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, time.Time{}, fmt.Errorf("decode token body: %w", err)
	}
	t := &b.Token
	exp, err := parseExpiry(t.ExpiresAt)
	if err != nil {
		return nil, time.Time{}, err
	}
	if t.User.ID == "" {
		return nil, time.Time{}, errors.New("token has no user")
	}
	// keystonemiddleware: auth_token/__init__.py:543
	// (validate_allowed_request) — a token of an application credential
	// restricted by access rules is refused unless [keystone_authtoken]
	// service_type is set, which Magnum's configuration does not do.
	if ac := t.ApplicationCredential; ac != nil && len(ac.AccessRules) > 0 && string(ac.AccessRules) != "null" {
		return nil, time.Time{}, errors.New("application credential with access rules")
	}
	rc := &magnum.RequestContext{
		UserID:           t.User.ID,
		UserName:         t.User.Name,
		UserDomainID:     t.User.Domain.ID,
		UserDomainName:   t.User.Domain.Name,
		TokenExpiresUnix: exp.Unix(),
	}
	if t.Project != nil {
		rc.ProjectID = t.Project.ID
		rc.ProjectName = t.Project.Name
		rc.ProjectDomainID = t.Project.Domain.ID
	}
	if t.Domain != nil {
		rc.DomainID = t.Domain.ID
		rc.DomainName = t.Domain.Name
	}
	if t.System["all"] {
		rc.SystemScope = "all"
	}
	rc.Roles = make([]string, 0, len(t.Roles))
	for _, r := range t.Roles {
		rc.Roles = append(rc.Roles, r.Name)
	}
	// Magnum: magnum/common/context.py:59 — is_admin is the context_is_admin
	// rule (role:admin), evaluated once at context creation.
	rc.IsAdmin = rc.HasRole("admin")
	if len(t.Catalog) > 0 && string(t.Catalog) != "null" {
		rc.ServiceCatalog = append([]byte(nil), t.Catalog...)
	}
	return rc, exp, nil
}
