package magnum

import (
	"fmt"
	"net/http"
)

// Error is a client-visible error: an HTTP status and Magnum's message. The
// API layer renders it as {"errors":[{..., "title": <first sentence>,
// "detail": <Message>}]}. Constructors in errors_catalogue.go (named after
// Magnum's exception classes) are the only place messages are written.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Message is the full message (WSME's faultstring); the title is derived
	// from it by cutting at the first period.
	Message string
	// Kind names the Magnum exception class (e.g. "ClusterNotFound"); used by
	// errors.Is comparisons and tests, never sent to clients.
	Kind string
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

// Is matches another *Error of the same Kind, so errors.Is(err,
// &Error{Kind: "ClusterNotFound"}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind != "" && t.Kind == e.Kind
}

// NewError returns an *Error with a formatted message.
func NewError(status int, kind, format string, args ...any) *Error {
	return &Error{Status: status, Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Invalid is Magnum's generic 400 (exception.Invalid and its subclasses).
func Invalid(format string, args ...any) *Error {
	return NewError(http.StatusBadRequest, "Invalid", format, args...)
}

// NotAuthorized is Magnum's 403 for a policy denial.
func NotAuthorized(format string, args ...any) *Error {
	return NewError(http.StatusForbidden, "NotAuthorized", format, args...)
}
