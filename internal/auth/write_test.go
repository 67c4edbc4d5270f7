package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteUnauthorized(t *testing.T) {
	w := httptest.NewRecorder()
	WriteUnauthorized(w, "http://127.0.0.1:5000/v3")
	if w.Code != http.StatusUnauthorized {
		t.Errorf("status %d", w.Code)
	}
	wantHeader := http.Header{
		"Content-Type":     {"application/json"},
		"Content-Length":   {"114"},
		"Www-Authenticate": {`Keystone uri="http://127.0.0.1:5000/v3"`},
	}
	if diff := cmp.Diff(wantHeader, w.Header()); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	// keystonemiddleware 13.0.1, as served by Magnum 23.0.0 (errors.md §2.3).
	want := `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`
	if got := w.Body.String(); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

func TestWriteServiceUnavailable(t *testing.T) {
	// Lengths and types as WebOb 1.8.11 serves
	// HTTPServiceUnavailable('The Keystone service is temporarily unavailable.').
	tests := []struct {
		accept      []string
		contentType string
		length      int
	}{
		{nil, "text/plain; charset=UTF-8", 148},
		{[]string{""}, "text/plain; charset=UTF-8", 148},
		{[]string{"application/json"}, "application/json", 218},
		{[]string{"*/*"}, "text/html; charset=UTF-8", 260},
		{[]string{"text/plain"}, "text/plain; charset=UTF-8", 148},
		{[]string{"text/html"}, "text/html; charset=UTF-8", 260},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
		if tt.accept != nil {
			r.Header["Accept"] = tt.accept
		}
		w := httptest.NewRecorder()
		WriteError(w, r, &Error{Kind: ErrKeystoneUnavailable}, "http://x")
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Content-Type") != tt.contentType ||
			w.Body.Len() != tt.length || w.Header().Get("Www-Authenticate") != "" {
			t.Errorf("Accept %q: %d %q %d bytes", tt.accept, w.Code, w.Header().Get("Content-Type"), w.Body.Len())
		}
	}
}

func TestWriteErrorUnauthorized(t *testing.T) {
	for _, err := range []error{&Error{Kind: ErrMissingToken}, invalidToken("x", nil), errors.New("other")} {
		w := httptest.NewRecorder()
		WriteError(w, httptest.NewRequest(http.MethodGet, "/", nil), err, "http://ks")
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%v: status %d", err, w.Code)
		}
	}
}

func TestNegotiateErrorType(t *testing.T) {
	// Expected values checked with WebOb 1.8.11 acceptable_offers.
	for accept, want := range map[string]string{
		"":                      "",
		"application/json":      "application/json",
		"application/json, */*": "text/html",
		"application/json;q=0.5, text/html;q=0.5": "text/html",
		"text/*":                    "text/html",
		"application/*":             "application/json",
		"application/json;q=0, */*": "text/html",
		"image/png":                 "",
		"text/html;q=0.1, application/json;q=0.2": "application/json",
		"*/*;q=0.5, application/json;q=0.5":       "text/html",
		"text/plain":                              "",
	} {
		if got := negotiateErrorType([]string{accept}); got != want {
			t.Errorf("Accept %q: %q, want %q", accept, got, want)
		}
	}
}
