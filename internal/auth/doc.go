// Package auth authenticates API requests and builds the caller's
// magnum.RequestContext, as keystonemiddleware's auth_token filter and
// Magnum's ContextHook do together for the Python service.
//
// Two Authenticators exist:
//
//   - Keystone validates the user's X-Auth-Token (or X-Storage-Token, as
//     keystonemiddleware also accepts) with GET /v3/auth/tokens, using a
//     token of the service user obtained with password authentication
//     ([keystone_authtoken] username/password/project). The token body gives
//     the user, project or domain or system scope, roles and catalog.
//   - NoAuth is the development mode of the all-in-one command: the identity
//     is read from the headers keystonemiddleware would have set.
//
// # Keystone behaviour
//
// The service token is obtained lazily (or eagerly by Check, used at start-up)
// and renewed 30 s before its expires_at, and once more when Keystone answers
// a validation with 401 (the service token was revoked or the fernet keys
// rotated), as keystonemiddleware retries once. A second 401, any other
// unexpected status, and transport errors are ErrKeystoneUnavailable: the
// API answers 503 with WriteServiceUnavailable, as keystonemiddleware raises
// HTTPServiceUnavailable. Keystone's 404 (unknown, malformed or revoked
// token) and an expires_at in the past are ErrInvalidToken, a missing token
// is ErrMissingToken: both are answered with WriteUnauthorized.
//
// Tokens of application credentials restricted by access rules are refused,
// as keystonemiddleware refuses them when [keystone_authtoken]/service_type
// is unset (Magnum's default). A token with bytes outside printable ASCII is
// refused without asking Keystone (Keystone would answer 404).
//
// Not reproduced: X-Service-Token (service tokens of service-to-service
// calls), delay_auth_decision, token bind enforcement, the memcached token
// cache, and version discovery (AuthURL gets /v3 appended when it lacks it).
//
// # Token cache
//
// Validated tokens are cached in memory for TokenCacheTime (default 300 s,
// keystonemiddleware's token_cache_time), never beyond the token's
// expires_at. The key is the SHA-256 of the token; the token itself is not
// stored. Like keystonemiddleware, a token revoked in Keystone stays
// accepted until its cache entry ends: operators who need immediate
// revocation set a short TokenCacheTime (a negative value disables the
// cache). Rejections by Keystone (404) are cached for at most 10 s, so that a
// client retrying a bad token does not reach Keystone on every request, while
// a wrong verdict cannot last. The cache holds at most 10000 entries and
// evicts the least recently used one. Concurrent validations of the same
// uncached token share one Keystone call.
//
// # Development mode (NoAuth)
//
// Magnum has no no-auth mode; NoAuth reuses the header names that
// keystonemiddleware sets and Magnum's ContextHook reads: X-User-Id,
// X-User-Name, X-User-Domain-Id, X-User-Domain-Name, X-Project-Id,
// X-Project-Name, X-Project-Domain-Id, X-Domain-Id, X-Domain-Name, X-Roles
// (comma-separated) and X-System-Scope. Absent headers take these defaults:
// project "openkeel-project" (name "openkeel"), user "openkeel-user" (name
// "openkeel"), domains "default"/"Default", and roles admin, member and
// reader. The roles default to admin so that an unmodified `openstack coe`
// session can use every API call, quotas and all-tenants listings included,
// against an all-in-one server; a caller that wants to see the API as a
// plain member sends X-Roles: member,reader. NoAuth must never be used where
// the port is reachable by untrusted clients.
//
// Tokens are never logged and never part of an error message.
package auth
