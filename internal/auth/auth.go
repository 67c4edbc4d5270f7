package auth

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Authenticator authenticates one API request and returns the caller's
// context. Errors are ErrMissingToken or ErrInvalidToken (answer 401 with
// WriteUnauthorized) or ErrKeystoneUnavailable (answer 503 with
// WriteServiceUnavailable); see errors.Is.
type Authenticator interface {
	Authenticate(r *http.Request) (*magnum.RequestContext, error)
}

// RequestIDHeader is the header in which the request-ID middleware, which
// runs before authentication, leaves the request ID on the request (the same
// name as the response header oslo.middleware sets). A RequestContext
// already in the request's context takes precedence.
const RequestIDHeader = "X-Openstack-Request-Id"

// Sentinel errors, matched with errors.Is. The errors returned by the
// Authenticators are *Error values that wrap one of them.
var (
	// ErrMissingToken means the request carried no token.
	ErrMissingToken = errors.New("missing token")
	// ErrInvalidToken means the token was rejected: unknown, malformed,
	// revoked or expired.
	ErrInvalidToken = errors.New("invalid token")
	// ErrKeystoneUnavailable means the token could not be validated because
	// Keystone could not be reached or refused the service credentials.
	ErrKeystoneUnavailable = errors.New("keystone unavailable")
)

// Error is an authentication failure: Kind is one of the sentinel errors,
// Detail says why in words that never include a token or a password, and
// Cause is the underlying error, if any.
type Error struct {
	Kind   error
	Detail string
	Cause  error
}

// Error implements error.
func (e *Error) Error() string {
	s := e.Kind.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// HTTPStatus is the status the API answers with: 503 when Keystone cannot
// be reached (keystonemiddleware's behaviour), 401 otherwise.
func (e *Error) HTTPStatus() int {
	if errors.Is(e.Kind, ErrKeystoneUnavailable) {
		return http.StatusServiceUnavailable
	}
	return http.StatusUnauthorized
}

// Unwrap returns the kind and the cause, so that errors.Is matches both.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}

func invalidToken(detail string, cause error) error {
	return &Error{Kind: ErrInvalidToken, Detail: detail, Cause: cause}
}

func unavailable(detail string, cause error) error {
	return &Error{Kind: ErrKeystoneUnavailable, Detail: detail, Cause: cause}
}

// unauthorizedBody is keystonemiddleware's 401 body, byte for byte (Python's
// json.dumps separators and key order).
// keystonemiddleware: auth_token/__init__.py:680 (process_request).
const unauthorizedBody = `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`

// WriteUnauthorized writes keystonemiddleware's 401 as Magnum serves it:
// Content-Type application/json (no charset: WebOb adds none to JSON),
// WWW-Authenticate: Keystone uri="<wwwAuthenticateURI>" and the
// {"error": {...}} body, which Magnum does not wrap in its errors envelope
// because the auth filter runs outside the pecan application. For HEAD the
// server drops the body and keeps the length, as WebOb does.
func WriteUnauthorized(w http.ResponseWriter, wwwAuthenticateURI string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(unauthorizedBody)))
	h.Set("WWW-Authenticate", `Keystone uri="`+wwwAuthenticateURI+`"`)
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(unauthorizedBody))
}

// The three renderings of keystonemiddleware's
// webob.exc.HTTPServiceUnavailable('The Keystone service is temporarily
// unavailable.'), as WebOb 1.8 produces them (checked on WebOb 1.8.11).
const (
	unavailableJSON = `{"message": "The server is currently unavailable. Please try again at a later time.<br /><br />\nThe Keystone service is temporarily unavailable.\n\n", "code": "503 Service Unavailable", "title": "Service Unavailable"}`
	unavailableHTML = "<html>\n <head>\n  <title>503 Service Unavailable</title>\n </head>\n <body>\n  <h1>503 Service Unavailable</h1>\n" +
		"  The server is currently unavailable. Please try again at a later time.<br /><br />\nThe Keystone service is temporarily unavailable.\n\n\n </body>\n</html>"
	unavailablePlain = "503 Service Unavailable\n\nThe server is currently unavailable. Please try again at a later time.\n\n The Keystone service is temporarily unavailable.  "
)

// WriteServiceUnavailable writes the 503 that keystonemiddleware answers when
// it cannot validate a token (Keystone unreachable, or rejecting the service
// user). WebOb picks the body from the Accept header between text/html and
// application/json, and falls back to text/plain; Magnum does not wrap it.
func WriteServiceUnavailable(w http.ResponseWriter, r *http.Request) {
	var ctype, body string
	switch negotiateErrorType(r.Header.Values("Accept")) {
	case "application/json":
		ctype, body = "application/json", unavailableJSON
	case "text/html":
		ctype, body = "text/html; charset=UTF-8", unavailableHTML
	default:
		ctype, body = "text/plain; charset=UTF-8", unavailablePlain
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(body))
}

// negotiateErrorType reproduces WebOb's
// Accept.acceptable_offers(['text/html', 'application/json']) followed by
// "first offer wins": each offer takes the q of the most specific media range
// that matches it; the highest q wins, text/html on a tie; q=0 excludes. No
// (or an empty) Accept header gives "" (text/plain), as in WebOb, because
// WebOb reads a missing header as an empty, valid one.
func negotiateErrorType(values []string) string {
	type rng struct {
		typ, sub string
		q        float64
	}
	var ranges []rng
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			fields := strings.Split(part, ";")
			mt := strings.ToLower(strings.TrimSpace(fields[0]))
			typ, sub, ok := strings.Cut(mt, "/")
			if !ok || typ == "" || sub == "" {
				continue
			}
			q := 1.0
			for _, p := range fields[1:] {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") {
					f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
					if err != nil || f < 0 || f > 1 {
						f = 0
					}
					q = f
				}
			}
			ranges = append(ranges, rng{typ, sub, q})
		}
	}
	qualityOf := func(typ, sub string) float64 {
		best, q := -1, 0.0
		for _, r := range ranges {
			spec := -1
			switch {
			case r.typ == typ && r.sub == sub:
				spec = 2
			case r.typ == typ && r.sub == "*":
				spec = 1
			case r.typ == "*" && r.sub == "*":
				spec = 0
			}
			if spec > best {
				best, q = spec, r.q
			}
		}
		if best < 0 {
			return 0
		}
		return q
	}
	html, js := qualityOf("text", "html"), qualityOf("application", "json")
	switch {
	case html == 0 && js == 0:
		return ""
	case js > html:
		return "application/json"
	default:
		return "text/html"
	}
}

// WriteError answers a failed authentication as keystonemiddleware would:
// 503 (WriteServiceUnavailable) when Keystone is unavailable, 401
// (WriteUnauthorized) otherwise.
func WriteError(w http.ResponseWriter, r *http.Request, err error, wwwAuthenticateURI string) {
	if errors.Is(err, ErrKeystoneUnavailable) {
		WriteServiceUnavailable(w, r)
		return
	}
	WriteUnauthorized(w, wwwAuthenticateURI)
}

// requestID returns the request ID set by the pipeline: from a
// RequestContext already in the request's context, else from RequestIDHeader.
func requestID(r *http.Request) string {
	if rc := magnum.FromContext(r.Context()); rc != nil && rc.RequestID != "" {
		return rc.RequestID
	}
	return r.Header.Get(RequestIDHeader)
}
