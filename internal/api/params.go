package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// queryValues parses a query string as WebOb does (parse_qsl with
// keep_blank_values): the values of each key in order.
func queryValues(raw string) map[string][]string {
	out := map[string][]string{}
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if dv, err := url.QueryUnescape(v); err == nil {
			v = dv
		}
		out[k] = append(out[k], v)
	}
	return out
}

// invalidInput is WSME's InvalidInput for an argument pecan passed
// positionally: "Invalid input for field/attribute <name>. Value: '<v>'.
// unable to convert to <type>. Error: <err>".
func invalidInput(name, value, typ, msg string) *magnum.Error {
	return magnum.Invalid("Invalid input for field/attribute %s. Value: '%s'. unable to convert to %s. Error: %s", name, value, typ, msg)
}

// convertQuery converts the declared query parameters of rt in signature
// order, as pecan and WSME do before the handler runs; the first failure is
// the answer. A repeated key reaches WSME as a Python list.
func convertQuery(r *http.Request, rt *Route, pathParams map[string]string) (map[string]any, error) {
	q := queryValues(r.URL.RawQuery)
	out := map[string]any{}
	for _, p := range rt.Query {
		vals, ok := q[p.Name]
		if v, inPath := pathParams[p.Name]; inPath {
			vals, ok = []string{v}, true
		}
		if !ok {
			continue
		}
		text, isList := vals[0], len(vals) > 1
		if isList {
			text = pyListRepr(vals)
		}
		switch p.Type {
		case ParamText:
			out[p.Name] = text
		case ParamInt:
			if isList {
				return nil, invalidInput(p.Name, text, "int",
					"int() argument must be a string, a bytes-like object or a real number, not 'list'")
			}
			n, ok := pyInt(text)
			if !ok {
				return nil, invalidInput(p.Name, text, "int", magnum.IntLiteralError(text))
			}
			out[p.Name] = n
		case ParamUUID:
			if !IsUUIDLike(text) {
				return nil, invalidInput(p.Name, text, "uuid", "Expected a uuid but received "+text+".")
			}
			out[p.Name] = text
		case ParamBool:
			b, ok := strictBool(text)
			if !ok {
				// Deviation: Magnum answers 500 ("__str__ returned non-string");
				// we answer 400 with oslo.utils' message.
				return nil, invalidInput(p.Name, text, "boolean", fmt.Sprintf(
					"Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'", text))
			}
			out[p.Name] = b
		}
	}
	return out, nil
}

// QueryString returns a converted text (or UUID) query parameter.
func QueryString(r *http.Request, name string) (string, bool) {
	v, ok := info(r).query[name].(string)
	return v, ok
}

// MarkerInPath reports whether the marker came from the path
// ("/v1/clusters/<uuid>/detail"): the detail handlers then answer, after
// their policy check, Magnum's literal 404 "The %(name)s resource %(id)s
// could not be found." (routes.md #4).
func MarkerInPath(r *http.Request) bool { return info(r).markerInPath }

// QueryInt returns a converted integer query parameter.
func QueryInt(r *http.Request, name string) (int, bool) {
	v, ok := info(r).query[name].(int)
	return v, ok
}

// QueryBool returns a converted boolean query parameter.
func QueryBool(r *http.Request, name string) (bool, bool) {
	v, ok := info(r).query[name].(bool)
	return v, ok
}

// IsUUIDLike reports whether s is UUID-like for oslo.utils'
// uuidutils.is_uuid_like: 32 hex digits once "urn:", "uuid:", surrounding
// braces and dashes are removed (upper case and missing dashes accepted).
func IsUUIDLike(s string) bool {
	h := strings.ReplaceAll(s, "urn:", "")
	h = strings.ReplaceAll(h, "uuid:", "")
	h = strings.Trim(h, "{}")
	h = strings.ReplaceAll(h, "-", "")
	if len(h) != 32 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// strictBool is oslo.utils bool_from_string(strict=True).
func strictBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "on", "y", "yes":
		return true, true
	case "0", "f", "false", "off", "n", "no":
		return false, true
	}
	return false, false
}

// pyInt is Python's int(s) for base 10: surrounding whitespace, a sign,
// digits with single underscores between them. Values beyond int saturate.
func pyInt(s string) (int, bool) {
	s = strings.TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' {
		return 0, false
	}
	var digits []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		case c == '_' && s[i-1] != '_':
		default:
			return 0, false
		}
	}
	n, err := strconv.Atoi(string(digits))
	if err != nil {
		n = int(^uint(0) >> 1)
	}
	if neg {
		n = -n
	}
	return n, true
}

// pyRepr is Python's repr() of a str.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// pyListRepr is Python's repr() of a list of str.
func pyListRepr(vals []string) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = pyRepr(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
