package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Record is one recorded exchange.
type Record struct {
	ID              string            `json:"id"`
	TestID          string            `json:"test_id"`
	Seq             int               `json:"seq"`
	App             string            `json:"app"`
	Request         RecordedRequest   `json:"request"`
	Response        RecordedResponse  `json:"response"`
	Context         *RecordedContext  `json:"context"`
	DBBefore        map[string][]any  `json:"db_before"`
	Mocks           []Mock            `json:"mocks"`
	PolicyOverrides map[string]string `json:"policy_overrides"`
	ConfOverrides   map[string]any    `json:"conf_overrides"`
	// DBBeforeRaw is db_before with every row kept as recorded (column
	// values in their original JSON text and key order), so that JSON
	// columns can be stored byte for byte as Magnum wrote them.
	DBBeforeRaw map[string][]json.RawMessage `json:"-"`
}

// RecordedRequest is the request half of a record.
type RecordedRequest struct {
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Query    string            `json:"query"`
	Headers  map[string]string `json:"headers"`
	Body     json.RawMessage   `json:"body"`
	BodyText *string           `json:"body_text"`
}

// RecordedResponse is the response half of a record.
type RecordedResponse struct {
	Status   int               `json:"status"`
	Headers  map[string]string `json:"headers"`
	Body     json.RawMessage   `json:"body"`
	BodyText *string           `json:"body_text"`
}

// RecordedContext is the request context Magnum built.
type RecordedContext struct {
	ProjectID any `json:"project_id"`
	UserID    any `json:"user_id"`
	Roles     any `json:"roles"`
	IsAdmin   any `json:"is_admin"`
	// AllTenants is the context's all_tenants (true, false or
	// "<MagicMock>").
	AllTenants any `json:"all_tenants"`
}

// Mock is a mock.patch active during the request.
type Mock struct {
	Target      string `json:"target"`
	ReturnValue any    `json:"return_value"`
	SideEffect  string `json:"side_effect"`
}

// Load reads an exchanges file.
func Load(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read exchanges: %w", err)
	}
	var recs []Record
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("parse exchanges %s: %w", path, err)
	}
	var raw []struct {
		DB map[string][]json.RawMessage `json:"db_before"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse exchanges %s: %w", path, err)
	}
	for i := range recs {
		recs[i].DBBeforeRaw = raw[i].DB
	}
	return recs, nil
}

// Header returns a recorded request header, case-insensitively.
func (q RecordedRequest) Header(name string) (string, bool) { return lookup(q.Headers, name) }

// Header returns a recorded response header, case-insensitively.
func (p RecordedResponse) Header(name string) (string, bool) { return lookup(p.Headers, name) }

func lookup(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// HasMock reports whether target was patched.
func (r Record) HasMock(target string) (Mock, bool) {
	for _, m := range r.Mocks {
		if m.Target == target {
			return m, true
		}
	}
	return Mock{}, false
}

// NewHTTPRequest builds the request to replay.
func (r Record) NewHTTPRequest() (*http.Request, error) {
	var body []byte
	switch {
	case r.Request.BodyText != nil:
		body = []byte(*r.Request.BodyText)
	case len(r.Request.Body) > 0 && string(r.Request.Body) != "null":
		body = r.Request.Body
	}
	u := &url.URL{Path: r.Request.Path, RawQuery: r.Request.Query}
	req, err := http.NewRequest(r.Request.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	req.ContentLength = int64(len(body))
	req.RemoteAddr = "127.0.0.1:12345"
	for k, v := range r.Request.Headers {
		switch {
		case strings.EqualFold(k, "Host"):
			req.Host = v
		case strings.EqualFold(k, "Content-Length"):
		default:
			req.Header.Set(k, v)
		}
	}
	return req, nil
}

// Response is what the handler answered.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

var (
	uuidRe    = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	genNameRe = regexp.MustCompile(`^[a-z]+-\d+-(template|cluster)$`)
	hostRe    = regexp.MustCompile(`^https?://[^/]+`)
)

// Compare returns every difference between the recorded response and got,
// following spec/exchanges/README.md "How to compare".
func Compare(rec Record, got Response) []string {
	var out []string
	want := rec.Response
	if got.Status != want.Status {
		msg := fmt.Sprintf("status: got %d, want %d", got.Status, want.Status)
		var ge struct {
			Errors []struct {
				Detail string `json:"detail"`
			} `json:"errors"`
		}
		if json.Unmarshal(got.Body, &ge) == nil && len(ge.Errors) > 0 && ge.Errors[0].Detail != "" {
			msg += fmt.Sprintf(" (got error %q)", ge.Errors[0].Detail)
		}
		out = append(out, msg)
	}
	for _, name := range []string{"OpenStack-API-Minimum-Version", "OpenStack-API-Maximum-Version", "OpenStack-API-Version", "WWW-Authenticate"} {
		wv, wok := want.Header(name)
		gv := got.Header.Get(name)
		gok := len(got.Header.Values(name)) > 0
		if wok != gok || wv != gv {
			out = append(out, fmt.Sprintf("header %s: got %q (present %v), want %q (present %v)", name, gv, gok, wv, wok))
		}
	}
	wvary, _ := want.Header("Vary")
	gvary := strings.Join(got.Header.Values("Vary"), ",")
	if strings.Contains(wvary, "OpenStack-API-Version") != strings.Contains(gvary, "OpenStack-API-Version") {
		out = append(out, fmt.Sprintf("header Vary: got %q, want %q", gvary, wvary))
	}
	wct, wok := want.Header("Content-Type")
	gct := got.Header.Get("Content-Type")
	if wok != (gct != "") || mediaType(wct) != mediaType(gct) {
		out = append(out, fmt.Sprintf("header Content-Type: got %q, want %q", gct, wct))
	}
	wloc, wok := want.Header("Location")
	gloc := got.Header.Get("Location")
	if wok != (gloc != "") || hostRe.ReplaceAllString(uuidRe.ReplaceAllString(wloc, "<uuid>"), "") != hostRe.ReplaceAllString(uuidRe.ReplaceAllString(gloc, "<uuid>"), "") {
		out = append(out, fmt.Sprintf("header Location: got %q, want %q", gloc, wloc))
	}
	if _, ok := want.Header("x-openstack-request-id"); ok && got.Header.Get("X-Openstack-Request-Id") == "" {
		out = append(out, "header x-openstack-request-id missing")
	}
	// Bodies.
	if want.BodyText != nil {
		if string(got.Body) != *want.BodyText {
			out = append(out, fmt.Sprintf("body: got %q, want %q", got.Body, *want.BodyText))
		}
		return out
	}
	if len(want.Body) == 0 || string(want.Body) == "null" {
		if len(bytes.TrimSpace(got.Body)) != 0 {
			out = append(out, fmt.Sprintf("body: got %q, want empty", trunc(got.Body)))
		}
		return out
	}
	var wb, gb any
	if err := json.Unmarshal(want.Body, &wb); err != nil {
		return append(out, "recorded body is not JSON: "+err.Error())
	}
	if err := json.Unmarshal(got.Body, &gb); err != nil {
		return append(out, fmt.Sprintf("body is not JSON: %q", trunc(got.Body)))
	}
	known := knownUUIDs(rec)
	if m, ok := wb.(map[string]any); ok {
		if errs, ok := m["errors"]; ok {
			return append(out, compareErrors(errs, gb, known)...)
		}
	}
	compareValue("$", wb, gb, known, &out)
	return out
}

func trunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func mediaType(ct string) string {
	t, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// knownUUIDs are the uuids of the request and db_before (any other uuid in
// a response was generated during the run) and the timestamps of db_before
// (a created_at / updated_at equal to one of them belongs to an existing
// row and must be answered exactly; others are new and ignored).
func knownUUIDs(rec Record) map[string]bool {
	raw, _ := json.Marshal(struct {
		Q  RecordedRequest
		DB map[string][]any
	}{rec.Request, rec.DBBefore})
	out := map[string]bool{}
	for _, u := range uuidRe.FindAllString(string(raw), -1) {
		out[strings.ToLower(u)] = true
	}
	for _, rows := range rec.DBBefore {
		for _, row := range rows {
			m, _ := row.(map[string]any)
			for _, c := range []string{"created_at", "updated_at"} {
				if v, ok := m[c].(string); ok && v != "" {
					out[timeKey(v)] = true
				}
			}
		}
	}
	return out
}

// timeKey is the key of a timestamp in the known values: db_before holds
// naive UTC ISO strings, responses add "+00:00".
func timeKey(v string) string {
	v = strings.TrimSuffix(v, "+00:00")
	return "time:" + strings.Replace(v, " ", "T", 1)
}

func maskUUIDs(s string, known map[string]bool) string {
	return uuidRe.ReplaceAllStringFunc(s, func(u string) string {
		if known[strings.ToLower(u)] {
			return u
		}
		return "<uuid>"
	})
}

func compareErrors(want, got any, known map[string]bool) []string {
	var out []string
	gm, ok := got.(map[string]any)
	if !ok {
		return []string{"body: want an errors envelope"}
	}
	wl, _ := want.([]any)
	gl, ok := gm["errors"].([]any)
	if !ok || len(gl) != len(wl) {
		return []string{fmt.Sprintf("errors: got %d elements, want %d", len(gl), len(wl))}
	}
	for i := range wl {
		we, _ := wl[i].(map[string]any)
		ge, _ := gl[i].(map[string]any)
		keys := map[string]bool{}
		for k := range we {
			keys[k] = true
		}
		for k := range ge {
			if k != "description" {
				keys[k] = true
			}
		}
		for _, k := range sortedKeys(keys) {
			wv, wok := we[k]
			gv, gok := ge[k]
			if wok != gok {
				out = append(out, fmt.Sprintf("errors[%d].%s: present %v, want %v", i, k, gok, wok))
				continue
			}
			if k == "detail" {
				ws, _ := wv.(string)
				gs, _ := gv.(string)
				if maskUUIDs(ws, map[string]bool{}) != maskUUIDs(gs, map[string]bool{}) {
					out = append(out, fmt.Sprintf("errors[%d].detail: got %q, want %q", i, gs, ws))
				}
				continue
			}
			wj, _ := json.Marshal(wv)
			gj, _ := json.Marshal(gv)
			if string(wj) != string(gj) {
				out = append(out, fmt.Sprintf("errors[%d].%s: got %s, want %s", i, k, gj, wj))
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// compareValue compares shapes, types and values, ignoring generated uuids,
// timestamps, generated names and link hosts.
func compareValue(path string, want, got any, known map[string]bool, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %T, want object", path, got))
			return
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			wv, wok := w[k]
			gv, gok := g[k]
			if wok != gok {
				*out = append(*out, fmt.Sprintf("%s.%s: present %v, want %v", path, k, gok, wok))
				continue
			}
			if k == "created_at" || k == "updated_at" {
				ws, _ := wv.(string)
				switch {
				case (wv == nil) != (gv == nil):
					*out = append(*out, fmt.Sprintf("%s.%s: got %v, want %v", path, k, gv, wv))
				case ws != "" && known[timeKey(ws)] && gv != wv:
					// A timestamp of a row that was in db_before.
					*out = append(*out, fmt.Sprintf("%s.%s: got %v, want %v", path, k, gv, wv))
				}
				continue
			}
			compareValue(path+"."+k, wv, gv, known, out)
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %T, want array", path, got))
			return
		}
		if len(g) != len(w) {
			*out = append(*out, fmt.Sprintf("%s: got %d elements, want %d", path, len(g), len(w)))
			return
		}
		for i := range w {
			compareValue(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], known, out)
		}
	case string:
		g, ok := got.(string)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: got %T, want string", path, got))
			return
		}
		ws, gs := maskUUIDs(w, known), maskUUIDs(g, known)
		ws, gs = hostRe.ReplaceAllString(ws, ""), hostRe.ReplaceAllString(gs, "")
		if genNameRe.MatchString(w) && genNameRe.MatchString(g) {
			return
		}
		if ws != gs {
			*out = append(*out, fmt.Sprintf("%s: got %q, want %q", path, g, w))
		}
	default:
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if string(wj) != string(gj) {
			*out = append(*out, fmt.Sprintf("%s: got %s, want %s", path, gj, wj))
		}
	}
}
