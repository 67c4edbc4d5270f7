package api

import (
	"net/http"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// CredentialsFrom returns the credentials dictionary Magnum hands to
// oslo.policy for rc: RequestContext.to_dict() of magnum/common/context.py,
// i.e. oslo.context's to_dict plus Magnum's additions, with the
// to_policy_values keys. Tokens are left out.
//
// Magnum: magnum/common/context.py never passes the system scope, the domain
// or the project's domain to oslo.context, so system_scope, domain_id and
// project_domain_id are always None there: every token is evaluated as
// project-scoped (policies.md §1). We keep those keys null for the same
// answers.
func CredentialsFrom(rc *magnum.RequestContext) map[string]any {
	if rc == nil {
		rc = &magnum.RequestContext{}
	}
	roles := make([]any, len(rc.Roles))
	for i, r := range rc.Roles {
		roles[i] = r
	}
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	return map[string]any{
		// to_policy_values
		"user_id":           str(rc.UserID),
		"user_domain_id":    str(rc.UserDomainID),
		"system_scope":      nil,
		"domain_id":         nil,
		"project_id":        str(rc.ProjectID),
		"project_domain_id": nil,
		"roles":             roles,
		"is_admin_project":  true,
		// oslo.context to_dict
		"user":           str(rc.UserID),
		"project":        str(rc.ProjectID),
		"domain":         nil,
		"user_domain":    str(rc.UserDomainID),
		"project_domain": nil,
		"is_admin":       rc.IsAdmin,
		"read_only":      false,
		"show_deleted":   false,
		"request_id":     str(rc.RequestID),
		// Magnum's to_dict additions
		"user_domain_name": str(rc.UserDomainName),
		"user_name":        str(rc.UserName),
		"project_name":     str(rc.ProjectName),
		"all_tenants":      rc.AllProjects,
	}
}

// CallerTarget is the target Magnum uses when a handler passes none: the
// caller's own project and user (magnum/common/policy.py:97-99).
func CallerTarget(rc *magnum.RequestContext) map[string]any {
	if rc == nil {
		return map[string]any{"project_id": nil, "user_id": nil}
	}
	return map[string]any{"project_id": rc.ProjectID, "user_id": rc.UserID}
}

// PolicyNotAuthorized is Magnum's 403 for a policy denial.
func PolicyNotAuthorized(rule string) *magnum.Error {
	return magnum.NewError(http.StatusForbidden, "PolicyNotAuthorized", "Policy doesn't allow %s to be performed.", rule)
}

// Enforce evaluates rule for the caller of r against target (nil = the
// caller's own target) and returns PolicyNotAuthorized when it is denied.
func (s *server) Enforce(r *http.Request, rule string, target map[string]any) error {
	rc := magnum.FromContext(r.Context())
	if target == nil {
		target = CallerTarget(rc)
	}
	if s.opts.Policy == nil {
		return PolicyNotAuthorized(rule)
	}
	ok, err := s.opts.Policy.Enforce(rule, target, CredentialsFrom(rc))
	if err != nil {
		// A scope mismatch or a rule that cannot be evaluated is a denial:
		// Magnum answers it with the same 403 (oslo.policy's exceptions
		// become PolicyNotAuthorized).
		s.log.Debug("policy evaluation refused", "rule", rule, "error", err)
		return PolicyNotAuthorized(rule)
	}
	if !ok {
		return PolicyNotAuthorized(rule)
	}
	return nil
}
