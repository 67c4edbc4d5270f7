package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/api/microversion"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// errorItem is one element of Magnum's {"errors": [...]} envelope
// (ParsableErrorMiddleware).
type errorItem struct {
	RequestID string   `json:"request_id"`
	Code      string   `json:"code"`
	Status    int      `json:"status"`
	Title     string   `json:"title"`
	Detail    string   `json:"detail"`
	Links     []string `json:"links"`
}

type errorEnvelope struct {
	Errors []any `json:"errors"`
}

// unknownMessage is MagnumException's default message, used for every
// unexpected error so that no internal text reaches the client.
//
// Deviation: Magnum returns str(exception) of unexpected exceptions (SQL
// errors, Python attribute errors); we never leak internals.
const unknownMessage = "An unknown exception occurred."

// Title returns the title Magnum derives from a message: the text before the
// first period (parsable_error.py).
func Title(message string) string {
	t, _, _ := strings.Cut(message, ".")
	return t
}

// writeJSON writes v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := marshal(v)
	if err != nil {
		body = []byte(`{"errors": []}`)
		status = http.StatusInternalServerError
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// marshal encodes v as Python's json does for these bodies: no HTML
// escaping of <, > and &.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeError writes err as Magnum's error body: *magnum.Error with its status
// and message, anything else as a logged 500.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var me *magnum.Error
	if !errors.As(err, &me) {
		s.log.ErrorContext(r.Context(), "unexpected error", slog.String("request_id", RequestID(r)),
			slog.String("method", r.Method), slog.String("route", routeID(r)), slog.Any("error", err))
		me = &magnum.Error{Status: http.StatusInternalServerError, Message: unknownMessage}
	}
	status := me.Status
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	code := "client"
	if status >= 500 {
		code = "server"
	}
	writeJSON(w, status, errorEnvelope{Errors: []any{errorItem{
		Code: code, Status: status, Title: Title(me.Message), Detail: me.Message, Links: []string{},
	}}})
}

// writeWebOb writes a pecan/WebOb error (producer B of errors.md): code "",
// and title/detail only when the client prefers JSON over HTML. The version
// headers are removed: Magnum's routing and method-version errors replace
// the response that carried them.
func writeWebOb(w http.ResponseWriter, r *http.Request, status int, detail string) {
	dropVersionHeaders(w.Header())
	title, desc := "", ""
	if prefersJSON(r.Header.Values("Accept")) {
		title, desc = http.StatusText(status), detail
	}
	writeJSON(w, status, errorEnvelope{Errors: []any{errorItem{
		Code: "", Status: status, Title: title, Detail: desc, Links: []string{},
	}}})
}

// microversionHelp is the link of the microversion-unsupported 406.
var microversionHelp = []map[string]string{{
	"rel": "help", "href": "http://docs.openstack.org/api-guide/compute/microversions.html",
}}

// writeVersionRange writes the 406 for a version outside the supported range
// (producer C); the version headers set before stay.
func writeVersionRange(w http.ResponseWriter, r *http.Request, e *microversion.RangeError) {
	item := map[string]any{
		"code":        "magnum.microversion-unsupported",
		"title":       "Requested microversion is unsupported",
		"max_version": microversion.Max.String(),
		"min_version": microversion.Min.String(),
		"links":       microversionHelp,
	}
	if prefersJSON(r.Header.Values("Accept")) {
		item["description"] = e.Message()
	}
	writeJSON(w, http.StatusNotAcceptable, errorEnvelope{Errors: []any{item}})
}

// write401 writes keystonemiddleware's 401 (producer D).
func (s *server) write401(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Keystone uri="`+s.opts.WWWAuthenticateURI+`"`)
	writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
		"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication.",
	}})
}

// write503 writes keystonemiddleware's answer when Keystone cannot be
// reached (a WebOb HTTPServiceUnavailable).
func write503(w http.ResponseWriter, r *http.Request) {
	const detail = "The Keystone service is temporarily unavailable."
	const expl = "The server is currently unavailable. Please try again at a later time."
	if prefersJSON(r.Header.Values("Accept")) {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{
			"code": "503 Service Unavailable", "title": "Service Unavailable", "message": expl + "<br /><br />\n" + detail + "\n\n\n",
		})
		return
	}
	body := "503 Service Unavailable\n\n" + expl + "\n\n " + detail + "  "
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(body))
}

func dropVersionHeaders(h http.Header) {
	h.Del(microversion.HeaderName)
	h.Del(microversion.MinHeaderName)
	h.Del(microversion.MaxHeaderName)
	h.Del("Vary")
}

// mediaRange is one element of an Accept header.
type mediaRange struct {
	typ, sub string
	q        float64
}

// parseAccept parses an Accept header; ok is false when it is invalid, which
// WebOb treats like an absent header.
func parseAccept(values []string) (ranges []mediaRange, present, ok bool) {
	if len(values) == 0 {
		return nil, false, true
	}
	for _, part := range strings.Split(strings.Join(values, ","), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		params := strings.Split(part, ";")
		mt := strings.ToLower(strings.TrimSpace(params[0]))
		typ, sub, found := strings.Cut(mt, "/")
		if !found || typ == "" || sub == "" || (typ == "*" && sub != "*") {
			return nil, true, false
		}
		q := 1.0
		for _, p := range params[1:] {
			k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
				if err != nil || f < 0 || f > 1 {
					return nil, true, false
				}
				q = f
			}
		}
		ranges = append(ranges, mediaRange{typ, sub, q})
	}
	return ranges, true, true
}

// quality returns the quality of offer under the most specific matching
// range, or -1 when no range matches.
func quality(ranges []mediaRange, offer string) float64 {
	typ, sub, _ := strings.Cut(offer, "/")
	best, spec := -1.0, 0
	for _, r := range ranges {
		s := 0
		switch {
		case r.typ == typ && r.sub == sub:
			s = 3
		case r.typ == typ && r.sub == "*":
			s = 2
		case r.typ == "*" && r.sub == "*":
			s = 1
		default:
			continue
		}
		if s > spec {
			best, spec = r.q, s
		}
	}
	return best
}

// prefersJSON reproduces WebOb's choice of an error body format: offers
// text/html then application/json, first acceptable offer by quality wins
// (ties go to HTML). JSON only when it strictly outranks HTML.
func prefersJSON(accept []string) bool {
	ranges, present, ok := parseAccept(accept)
	if !present || !ok {
		return false
	}
	type offer struct {
		name string
		q    float64
	}
	var offers []offer
	for _, o := range []string{"text/html", "application/json"} {
		if q := quality(ranges, o); q > 0 {
			offers = append(offers, offer{o, q})
		}
	}
	sort.SliceStable(offers, func(i, j int) bool { return offers[i].q > offers[j].q })
	return len(offers) > 0 && offers[0].name == "application/json"
}

// acceptsJSON reports whether pecan would render JSON for this Accept
// header: absent, empty or "*/*" always, otherwise application/json must be
// acceptable.
func acceptsJSON(accept []string) bool {
	ranges, present, ok := parseAccept(accept)
	if !present || !ok || len(ranges) == 0 {
		return true
	}
	return quality(ranges, "application/json") > 0
}
