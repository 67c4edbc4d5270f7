package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/api/microversion"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// jsonContentTypes are the body media types WSME parses as JSON.
var jsonContentTypes = []string{"application/json", "text/javascript", "application/javascript"}

// serveAPI is everything after the proxy-header filter: path normalisation,
// authentication, the version documents, microversion negotiation, routing
// and argument checks, then the handler.
func (s *server) serveAPI(w http.ResponseWriter, r *http.Request) {
	r, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	segs := splitPath(r.URL.Path)
	if len(segs) == 0 {
		s.serveRoot(w, r)
		return
	}
	// Magnum: root.py:98 — a first segment other than "v1" is routed to v1.
	if segs[0] != "v1" {
		segs = append([]string{"v1"}, segs...)
	}
	// Version negotiation (v1/__init__.py:226): parse, set the headers, then
	// check the range.
	ver, err := microversion.Parse(r.Header.Values(microversion.HeaderName))
	if err != nil {
		var he *microversion.HeaderError
		errors.As(err, &he)
		writeWebOb(w, r, http.StatusNotAcceptable, he.Detail)
		return
	}
	h := w.Header()
	h.Set(microversion.MinHeaderName, microversion.Min.HeaderValue())
	h.Set(microversion.MaxHeaderName, microversion.Max.HeaderValue())
	h.Set(microversion.HeaderName, ver.HeaderValue())
	h.Set("Vary", microversion.HeaderName)
	if err := microversion.Check(ver); err != nil {
		var re *microversion.RangeError
		errors.As(err, &re)
		writeVersionRange(w, r, re)
		return
	}
	info(r).version = ver

	m := s.route(r.Method, segs)
	if len(m.candidates) == 0 {
		if m.pathSeen {
			if name := s.uncoveredMethod(m.group, ver); name != "" {
				writeWebOb(w, r, http.StatusNotAcceptable, "Version "+ver.String()+
					" was requested but the requested API "+name+" is not supported for this version.")
				return
			}
			w.Header()["Allow"] = []string{m.allow}
			writeWebOb(w, r, http.StatusMethodNotAllowed, "")
			return
		}
		writeWebOb(w, r, http.StatusNotFound, "")
		return
	}
	var rt *Route
	for _, c := range m.candidates {
		if c.MinVersion.IsZero() || ver.Between(c.MinVersion, c.MaxVersion) {
			rt = c
			break
		}
	}
	if rt == nil {
		writeWebOb(w, r, http.StatusNotAcceptable, "Version "+ver.String()+
			" was requested but the requested API "+m.candidates[0].methodName()+" is not supported for this version.")
		return
	}
	s.serveRoute(w, r, rt, m)
}

// serveRoute runs the checks WSME does before a handler (content
// negotiation, unknown arguments, body media type, missing arguments) and
// then the handler.
func (s *server) serveRoute(w http.ResponseWriter, r *http.Request, rt *Route, m match) {
	params, missing := m.params, m.missing
	in := info(r)
	in.route = rt
	if !acceptsJSON(r.Header.Values("Accept")) {
		writeWebOb(w, r, http.StatusNotAcceptable, "")
		return
	}
	if m.postArg != "" {
		typ := bodyTypes[rt.BodyArg]
		// Magnum: the create handler receives the segment positionally and
		// WSME fails to build the body type from a string.
		s.writeError(w, r, invalidInput(rt.BodyArg, m.postArg, typ, typ+".__init__() takes 1 positional argument but 2 were given"))
		return
	}
	query, err := convertQuery(r, rt, params)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	in.query = query
	in.markerInPath = m.markerInPath
	body, err := s.readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := checkArguments(r, rt, body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if missing != "" {
		// Pecan also fills a handler's missing arguments from the keys of a
		// JSON object body (PATCH /v1/quotas with project_id and resource in
		// the body reaches the handler).
		missing = fillFromBody(rt, params, body, r)
	}
	if missing != "" {
		s.writeError(w, r, magnum.Invalid("Missing argument: \"%s\"", missing))
		return
	}
	in.body = body
	for k, v := range params {
		if k != "marker" {
			r.SetPathValue(k, v)
		}
	}
	h := s.handlers[rt.ID]
	if h == nil {
		h = notImplemented
	}
	if err := h(w, r); err != nil {
		s.writeError(w, r, err)
	}
}

// notImplemented answers routes whose handler is not written yet.
func notImplemented(http.ResponseWriter, *http.Request) error {
	return magnum.NewError(http.StatusNotImplemented, "NotImplemented", "Not implemented.")
}

// readBody reads the whole body within the size limit.
func (s *server) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	// Deviation: Magnum has no body size limit in its pipeline; we refuse
	// bodies over MaxBodyBytes with 413 in Magnum's error body.
	tooLarge := magnum.NewError(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "Request is too large.")
	if r.ContentLength > s.opts.MaxBodyBytes {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxBodyBytes+1))
	if err != nil {
		return nil, magnum.Invalid("Request body could not be read.")
	}
	if int64(len(b)) > s.opts.MaxBodyBytes {
		return nil, tooLarge
	}
	if len(b) == 0 {
		return nil, nil
	}
	return b, nil
}

// mediaType returns the Content-Type without parameters, as WebOb's
// request.content_type does (case kept).
func mediaType(r *http.Request) string {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.TrimSpace(ct)
}

func isJSONType(ct string) bool {
	for _, t := range jsonContentTypes {
		if ct == t {
			return true
		}
	}
	return false
}

// checkArguments reproduces wsme/rest/args.py get_args: query (and form)
// keys must be arguments of the handler, then the body must have a JSON
// media type (415 otherwise), be valid JSON and, for a handler without a
// body argument, be an object whose keys are arguments.
func checkArguments(r *http.Request, rt *Route, body []byte) error {
	keys := queryKeys(r.URL.RawQuery)
	ct := mediaType(r)
	isForm := len(body) > 0 && (ct == "" || ct == "application/x-www-form-urlencoded") && formMethod(r.Method)
	if isForm {
		keys = append(keys, queryKeys(string(body))...)
	}
	var unknown []string
	seen := map[string]bool{}
	for _, k := range keys {
		if !rt.knownArg(k) && !seen[k] {
			seen[k] = true
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		// Deviation: Magnum lists several unknown names in Python set order;
		// we keep the order of the request.
		return magnum.Invalid("Unknown argument: \"%s\"", strings.Join(unknown, ", "))
	}
	if len(body) == 0 || isForm || ct == "application/x-www-form-urlencoded" {
		return nil
	}
	if !isJSONType(ct) {
		return magnum.NewError(http.StatusUnsupportedMediaType, "UnknownMimeType", "Unknown mimetype: %s", ct)
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return magnum.Invalid("Request is not in valid JSON format")
	}
	if rt.BodyArg != "" {
		return nil
	}
	if _, ok := doc.(map[string]any); !ok {
		return magnum.Invalid("Request must be a JSON dict")
	}
	var extra []string
	for _, k := range objectKeys(body) {
		if !rt.knownArg(k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		return magnum.Invalid("Unknown argument: \"%s\"", strings.Join(extra, ", "))
	}
	return nil
}

// objectKeys returns the member names of a JSON object in document order
// (Python dicts keep it).
func objectKeys(body []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// formMethod reports whether WebOb parses a form body for the method.
func formMethod(m string) bool {
	switch m {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// queryKeys returns the keys of a query string as Python's parse_qsl with
// keep_blank_values does: split on '&', unquote_plus.
func queryKeys(raw string) []string {
	var out []string
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, _, _ := strings.Cut(part, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		out = append(out, k)
	}
	return out
}

// RequireBody returns the request body, or Magnum's 400 Missing argument
// naming the route's body argument when there is none (a form body counts as
// none, as in WSME).
func RequireBody(r *http.Request) ([]byte, error) {
	in := info(r)
	if len(in.body) == 0 || !isJSONType(mediaType(r)) {
		name := "body"
		if in.route != nil && in.route.BodyArg != "" {
			name = in.route.BodyArg
		}
		return nil, magnum.Invalid("Missing argument: \"%s\"", name)
	}
	return in.body, nil
}

// WriteJSON writes v as the JSON response with the given status; a nil v
// writes an empty body without Content-Type (Magnum's 204).
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	if v == nil {
		w.WriteHeader(status)
		return nil
	}
	body, err := marshal(v)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}

// serveRoot answers "/" (outside v1: no version headers, no version
// negotiation).
func (s *server) serveRoot(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header()["Allow"] = []string{"GET"}
		writeWebOb(w, r, http.StatusMethodNotAllowed, "")
		return
	}
	rt := s.routes[0]
	if !acceptsJSON(r.Header.Values("Accept")) {
		writeWebOb(w, r, http.StatusNotAcceptable, "")
		return
	}
	info(r).route = rt
	if err := checkArguments(r, rt, nil); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := WriteJSON(w, http.StatusOK, rootDocument(BaseURL(r))); err != nil {
		s.writeError(w, r, err)
	}
}

// healthcheckOr answers /healthcheck (oslo.middleware healthcheck with the
// disable_by_file backend) and passes everything else on.
func (s *server) healthcheckOr(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthcheck" && !strings.HasPrefix(r.URL.Path, "/healthcheck/") {
			next.ServeHTTP(w, r)
			return
		}
		status, reason := http.StatusOK, "OK"
		if f := s.opts.HealthcheckDisableFile; f != "" {
			if _, err := os.Stat(f); err == nil {
				status, reason = http.StatusServiceUnavailable, "DISABLED BY FILE"
			}
		}
		if r.Method == http.MethodHead {
			if status == http.StatusOK {
				status = http.StatusNoContent
			}
			w.WriteHeader(status)
			return
		}
		if healthJSON(r.Header.Values("Accept")) {
			_ = WriteJSON(w, status, map[string]any{"detailed": false, "reasons": []string{reason}})
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(reason)))
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reason)
	})
}

// healthJSON reports whether the health check answers JSON: its offers are
// text/plain, text/html, application/json in that order.
func healthJSON(accept []string) bool {
	ranges, present, ok := parseAccept(accept)
	if !present || !ok {
		return false
	}
	qj := quality(ranges, "application/json")
	return qj > 0 && qj > quality(ranges, "text/plain") && qj > quality(ranges, "text/html")
}

// fillFromBody sets the path arguments of rt absent from params from the
// string members of a JSON object body; it returns the first argument still
// missing.
func fillFromBody(rt *Route, params map[string]string, body []byte, r *http.Request) string {
	var obj map[string]any
	if len(body) > 0 && isJSONType(mediaType(r)) {
		_ = json.Unmarshal(body, &obj)
	}
	for _, name := range rt.pathArgs() {
		if _, ok := params[name]; ok {
			continue
		}
		v, ok := obj[name].(string)
		if !ok {
			return name
		}
		params[name] = v
	}
	return ""
}
