package config

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// optKind is the oslo.config type of an option.
type optKind int

// Option kinds, named after the oslo.config Opt classes they mirror.
const (
	kindString      optKind = iota // StrOpt
	kindInt                        // IntOpt
	kindFloat                      // FloatOpt
	kindBool                       // BoolOpt
	kindList                       // ListOpt (comma-separated strings)
	kindMulti                      // MultiStrOpt (one value per occurrence)
	kindDict                       // DictOpt (key:value pairs, comma-separated)
	kindPort                       // PortOpt (integer 0-65535)
	kindIP                         // IPOpt
	kindHostAddress                // HostAddressOpt (IP address or host name)
)

// String names the kind the way the sample configuration does.
func (k optKind) String() string {
	switch k {
	case kindString:
		return "string value"
	case kindInt:
		return "integer value"
	case kindFloat:
		return "floating point value"
	case kindBool:
		return "boolean value"
	case kindList:
		return "list value"
	case kindMulti:
		return "multi valued"
	case kindDict:
		return "dict value"
	case kindPort:
		return "port value"
	case kindIP:
		return "IP address value"
	case kindHostAddress:
		return "host address value"
	}
	return "unknown"
}

// pyInt parses an integer the way Python's int(str) does for base 10:
// surrounding whitespace, an optional sign and single underscores between
// digits are allowed.
func pyInt(s string) (int64, bool) {
	s = pyStrip(s)
	digits := s
	neg := false
	if digits != "" && (digits[0] == '+' || digits[0] == '-') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	if digits == "" || digits[0] == '_' || digits[len(digits)-1] == '_' || strings.Contains(digits, "__") {
		return 0, false
	}
	digits = strings.ReplaceAll(digits, "_", "")
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// pyFloat parses a float the way Python's float(str) does (close enough for
// configuration: decimal and exponent forms, inf, nan, underscores between
// digits; no hexadecimal forms).
func pyFloat(s string) (float64, bool) {
	s = pyStrip(s)
	if s == "" || strings.ContainsAny(s, "xXpP") && !isInfNaN(s) {
		return 0, false
	}
	if strings.Contains(s, "_") {
		for i := 0; i < len(s); i++ {
			if s[i] == '_' && (i == 0 || i == len(s)-1 || !isDigit(s[i-1]) || !isDigit(s[i+1])) {
				return 0, false
			}
		}
		s = strings.ReplaceAll(s, "_", "")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isInfNaN(s string) bool {
	s = strings.ToLower(strings.TrimLeft(s, "+-"))
	return s == "inf" || s == "infinity" || s == "nan"
}

// pyBool parses an oslo.config boolean: true/1/on/yes and false/0/off/no,
// case-insensitive, nothing else (not even surrounding spaces).
func pyBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "1", "on", "yes":
		return true, true
	case "false", "0", "off", "no":
		return false, true
	}
	return false, false
}

// splitList splits a ListOpt value: trimmed, trailing commas dropped, split
// on ',' with each item trimmed; an empty value is an empty list.
func splitList(s string) []string {
	s = strings.TrimRight(pyStrip(s), ",")
	if s == "" {
		return []string{}
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = pyStrip(parts[i])
	}
	return parts
}

// splitDict parses a DictOpt value: "k1:v1,k2:v2", keys and values trimmed.
// As in oslo.config, a piece without ':' is glued to the next one with a
// comma before giving up; empty and duplicate keys are errors.
func splitDict(s string) (map[string]string, error) {
	s = pyStrip(s)
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	pairs := strings.Split(s, ",")
	for len(pairs) > 0 {
		pair := pairs[0]
		pairs = pairs[1:]
		var k, v string
		for {
			var ok bool
			if k, v, ok = strings.Cut(pair, ":"); ok {
				break
			}
			if len(pairs) == 0 {
				return nil, fmt.Errorf("%q is not a list of key:value pairs", s)
			}
			pair += "," + pairs[0]
			pairs = pairs[1:]
		}
		k, v = pyStrip(k), pyStrip(v)
		if k == "" {
			return nil, fmt.Errorf("%q has an empty key", s)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%q has the key %q twice", s, k)
		}
		out[k] = v
	}
	return out, nil
}

var hostnameLabel = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// validHostname follows oslo.config's Hostname type: at most 253
// characters, an optional trailing dot, labels of 1-63 letters, digits and
// inner hyphens, and a top-level label that is not all digits.
func validHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	s = strings.TrimSuffix(s, ".")
	labels := strings.Split(s, ".")
	if !strings.ContainsAny(labels[len(labels)-1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") {
		return false
	}
	for _, l := range labels {
		if !hostnameLabel.MatchString(l) {
			return false
		}
	}
	return true
}

func validIP(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}

// pyRepr renders a string the way Python's repr() does for ordinary text,
// used when a list value is substituted into another option.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyStr renders a converted value the way Python's str() would, which is
// what oslo.config substitutes for "$option" when option is not a string.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		case math.IsNaN(x):
			return "nan"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = pyRepr(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
