package db

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Magnum stores JSON columns with Python's json.dumps defaults: ", " and ": "
// separators, ensure_ascii (every non-ASCII character as a \uXXXX escape,
// astral characters as surrogate pairs), no HTML escaping. pyJSON writes
// that format so that rows we write look like rows Magnum wrote.
//
// Deviation: Magnum writes object keys in the order the client sent them
// (dict insertion order); Go maps do not keep an order, so we write keys
// sorted. json.loads does not care; only the bytes of a rewritten column
// differ from a Magnum-written one. Taint objects keep the conventional
// key, value, effect order.

// pyJSON encodes v (nil, bool, string, numbers, map[string]string,
// map[string]any, []string, []any, []map[string]string and the magnum
// NodeTaint slice) in Python's json.dumps format.
func pyJSON(v any) (string, error) {
	var b strings.Builder
	if err := writePyJSON(&b, v); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writePyJSON(b *strings.Builder, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writePyString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("json: unsupported float %v", x)
		}
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			// Python prints integral floats as "1.0"; integers decoded from
			// JSON by encoding/json arrive here as floats, write them back
			// as integers as json.loads would have read them.
			b.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
		} else {
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case json.Number:
		b.WriteString(x.String())
	case map[string]string:
		keys := sortedKeys(x)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, k)
			b.WriteString(": ")
			writePyString(b, x[k])
		}
		b.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, k)
			b.WriteString(": ")
			if err := writePyJSON(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []string:
		b.WriteByte('[')
		for i, s := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, s)
		}
		b.WriteByte(']')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writePyJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case []map[string]string:
		b.WriteByte('[')
		for i, m := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeTaint(b, m)
		}
		b.WriteByte(']')
	default:
		return fmt.Errorf("json: unsupported type %T", v)
	}
	return nil
}

// taintKeyOrder is the order Kubernetes, the clients and Magnum's own
// examples write a taint in; other keys follow sorted.
var taintKeyOrder = []string{"key", "value", "effect"}

func writeTaint(b *strings.Builder, m map[string]string) {
	b.WriteByte('{')
	n := 0
	emit := func(k string) {
		if n > 0 {
			b.WriteString(", ")
		}
		n++
		writePyString(b, k)
		b.WriteString(": ")
		writePyString(b, m[k])
	}
	for _, k := range taintKeyOrder {
		if _, ok := m[k]; ok {
			emit(k)
		}
	}
	for _, k := range sortedKeys(m) {
		if k != "key" && k != "value" && k != "effect" {
			emit(k)
		}
	}
	b.WriteByte('}')
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

const hexDigits = "0123456789abcdef"

// writePyString writes s as json.dumps(s, ensure_ascii=True) does. Invalid
// UTF-8 bytes are written as U+FFFD.
func writePyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r > 0x7e && r <= 0xffff):
			// Python escapes everything outside printable ASCII
			// (" " to "~"), DEL included.
			writeU16(b, uint16(r))
		case r > 0xffff:
			r -= 0x10000
			writeU16(b, uint16(0xd800+(r>>10)))
			writeU16(b, uint16(0xdc00+(r&0x3ff)))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func writeU16(b *strings.Builder, u uint16) {
	b.WriteString(`\u`)
	b.WriteByte(hexDigits[u>>12&0xf])
	b.WriteByte(hexDigits[u>>8&0xf])
	b.WriteByte(hexDigits[u>>4&0xf])
	b.WriteByte(hexDigits[u&0xf])
}

// pyString renders a decoded JSON scalar the way Magnum's object layer
// coerces it into a string field (str() of the Python value), for rows
// written by other tools with non-string values.
func pyString(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return x.String()
	default:
		s, _ := pyJSON(x)
		return s
	}
}

// decodeStringMap decodes a JSON object of strings; non-string values are
// coerced as Magnum's object fields coerce them.
func decodeStringMap(s string) (map[string]string, error) {
	if m, ok := parseFlatObject(s); ok {
		return m, nil
	}
	return decodeStringMapJSON(s)
}

// decodeStringMapJSON is decodeStringMap through encoding/json, for
// whatever the flat-object fast path does not take.
func decodeStringMapJSON(s string) (map[string]string, error) {
	var raw map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, nil
	}
	m := make(map[string]string, len(raw))
	for k, v := range raw {
		m[k] = pyString(v)
	}
	return m, nil
}

func decodeStringList(s string) ([]string, error) {
	if l, ok := parseFlatArray(s); ok {
		return l, nil
	}
	return decodeStringListJSON(s)
}

// decodeStringListJSON is decodeStringList through encoding/json, for
// whatever the flat-array fast path does not take.
func decodeStringListJSON(s string) ([]string, error) {
	var raw []any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, nil
	}
	l := make([]string, len(raw))
	for i, v := range raw {
		l[i] = pyString(v)
	}
	return l, nil
}

func decodeMapList(s string) ([]map[string]string, error) {
	var raw []map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, nil
	}
	l := make([]map[string]string, len(raw))
	for i, o := range raw {
		m := make(map[string]string, len(o))
		for k, v := range o {
			m[k] = pyString(v)
		}
		l[i] = m
	}
	return l, nil
}

// The fast paths of decodeStringMap and decodeStringList: the common
// column, a flat JSON object or array of plain ASCII strings, is cut out of
// the text instead of going through encoding/json, with the same result.

// jsonSpace reports JSON's insignificant whitespace.
func jsonSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func skipSpace(s string, i int) int {
	for i < len(s) && jsonSpace(s[i]) {
		i++
	}
	return i
}

// plainString reads the JSON string starting at s[i] (a '"') when it holds
// printable ASCII without escapes, returning it and the index after it.
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch b := s[j]; {
		case b == '"':
			return s[i+1 : j], j + 1, true
		case b == '\\' || b < 0x20 || b >= 0x80:
			return "", 0, false
		}
	}
	return "", 0, false
}

// parseFlatObject decodes s when it is a JSON object whose values are all
// plain strings (see plainString); a repeated key keeps its last value, as
// encoding/json does. ok is false for anything else.
func parseFlatObject(s string) (map[string]string, bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return nil, false
	}
	i = skipSpace(s, i+1)
	n := 0
	if i < len(s) && s[i] != '}' {
		// Size the map from the number of separators (an upper bound
		// on the number of pairs for plain strings without commas).
		n = 1
		for j := i; j < len(s); j++ {
			if s[j] == ',' {
				n++
			}
		}
	}
	m := make(map[string]string, n)
	if i < len(s) && s[i] == '}' {
		return m, skipSpace(s, i+1) == len(s)
	}
	for {
		k, j, ok := plainString(s, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return nil, false
		}
		v, j, ok := plainString(s, skipSpace(s, i+1))
		if !ok {
			return nil, false
		}
		m[k] = v
		i = skipSpace(s, j)
		if i >= len(s) {
			return nil, false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			return m, skipSpace(s, i+1) == len(s)
		default:
			return nil, false
		}
	}
}

// parseFlatArray decodes s when it is a JSON array of plain strings (see
// plainString). ok is false for anything else.
func parseFlatArray(s string) ([]string, bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return nil, false
	}
	i = skipSpace(s, i+1)
	l := []string{}
	if i < len(s) && s[i] == ']' {
		return l, skipSpace(s, i+1) == len(s)
	}
	for {
		v, j, ok := plainString(s, i)
		if !ok {
			return nil, false
		}
		l = append(l, v)
		i = skipSpace(s, j)
		if i >= len(s) {
			return nil, false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case ']':
			return l, skipSpace(s, i+1) == len(s)
		default:
			return nil, false
		}
	}
}
