package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reproduces the few pieces of Python semantics that oslo.policy
// relies on when it evaluates a check: str() and repr() of the values found
// in credentials and targets, str.lower(), truthiness, printf-style
// formatting with a mapping ("%(project_id)s" % target) and ast.literal_eval
// of the left-hand side of a generic check.

// errPython marks an evaluation that raises an exception in oslo.policy
// (TypeError, ValueError, SyntaxError, AttributeError, RecursionError). The
// API turns it into a 500, as Magnum does.
var errPython = errors.New("python exception")

func pyErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errPython}, args...)...)
}

// pyStr returns Python's str(v) for a value decoded from JSON or built in Go.
// Maps are rendered with sorted keys.
//
// Deviation: Python renders a dict in insertion order; a Go map has none, so
// str() of a multi-key dict can differ. Policies never compare whole dicts.
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	var b strings.Builder
	writePy(&b, v, false)
	return b.String()
}

// pyRepr returns Python's repr(v).
func pyRepr(v any) string {
	var b strings.Builder
	writePy(&b, v, true)
	return b.String()
}

func writePy(b *strings.Builder, v any, repr bool) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		if repr {
			writeStrRepr(b, x)
		} else {
			b.WriteString(x)
		}
	case int:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case uint:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		b.WriteString(pyFloatRepr(x))
	case float32:
		b.WriteString(pyFloatRepr(float64(x)))
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			// A JSON integer is a Python int of any size.
			n, ok := new(big.Int).SetString(string(x), 10)
			if ok {
				b.WriteString(n.String())
			} else {
				b.WriteString(string(x))
			}
		} else if f, err := x.Float64(); err == nil || math.IsInf(f, 0) {
			b.WriteString(pyFloatRepr(f))
		} else {
			b.WriteString(x.String())
		}
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeStrRepr(b, e)
		}
		b.WriteByte(']')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e, true)
		}
		b.WriteByte(']')
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
			writeStrRepr(b, k)
			b.WriteString(": ")
			writePy(b, x[k], true)
		}
		b.WriteByte('}')
	default:
		writeReflect(b, v)
	}
}

// writeReflect handles the remaining Go kinds (other int sizes, typed slices
// and maps) by converting them to the canonical forms above.
func writeReflect(b *strings.Builder, v any) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(rv.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b.WriteString(pyFloatRepr(rv.Float()))
	case reflect.Bool:
		writePy(b, rv.Bool(), true)
	case reflect.String:
		writePy(b, rv.String(), true)
	case reflect.Slice, reflect.Array:
		l := make([]any, rv.Len())
		for i := range l {
			l[i] = rv.Index(i).Interface()
		}
		writePy(b, l, true)
	case reflect.Map:
		m := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			m[fmt.Sprint(it.Key().Interface())] = it.Value().Interface()
		}
		writePy(b, m, true)
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			b.WriteString("None")
			return
		}
		writePy(b, rv.Elem().Interface(), true)
	default:
		fmt.Fprint(b, v)
	}
}

// writeStrRepr writes Python's repr() of a str: single quotes unless the text
// contains a single quote and no double quote; backslash escapes for the
// quote, backslash, \t \n \r and non-printable characters.
func writeStrRepr(b *strings.Builder, s string) {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case !unicode.IsPrint(r):
			switch {
			case r <= 0xff:
				fmt.Fprintf(b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				fmt.Fprintf(b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
}

// pyFloatRepr returns Python's repr() of a float: the shortest round-trip
// digits, positional notation when the decimal exponent is in (-4, 16],
// scientific notation with a two-digit minimum exponent otherwise.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expPart, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expPart)
	decpt := exp + 1
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	out := sign + digits[:1]
	if len(digits) > 1 {
		out += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	x := strconv.Itoa(exp)
	if len(x) < 2 {
		x = "0" + x
	}
	return out + "e" + es + x
}

// pyTruthy is Python's bool(v).
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case []string:
		return len(x) > 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String:
		return rv.Len() > 0
	case reflect.Pointer, reflect.Interface:
		return !rv.IsNil()
	}
	return true
}

// pyLower is Python's str.lower(): full Unicode lower-casing, which differs
// from Go's simple mapping for U+0130 (İ → "i̇") and for a final capital
// sigma (Σ → ς at the end of a word).
func pyLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= 'A' && c <= 'Z' {
				return strings.ToLower(s)
			}
		}
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch r {
		case 0x130:
			b.WriteString("i\u0307")
		case 0x3a3:
			if finalSigma(rs, i) {
				b.WriteRune(0x3c2)
			} else {
				b.WriteRune(0x3c3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma implements Unicode's Final_Sigma condition: a cased letter
// before (skipping case-ignorable characters) and none after.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	k := i + 1
	for k < len(rs) && caseIgnorable(rs[k]) {
		k++
	}
	return k == len(rs) || !cased(rs[k])
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
}

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', 0xb7, 0x2018, 0x2019, 0x2024, 0xfe52, 0xff07, 0xff0e:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// pyIsSpace reports whether r is whitespace for Python's re "\s" on str:
// Go's unicode.IsSpace plus the four information separators U+001C-U+001F.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyKeywords are Python's hard keywords other than True, False and None:
// ast.literal_eval raises SyntaxError on a check kind that uses one.
var pyKeywords = map[string]bool{
	"and": true, "as": true, "assert": true, "async": true, "await": true, "break": true,
	"class": true, "continue": true, "def": true, "del": true, "elif": true, "else": true,
	"except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true,
	"or": true, "pass": true, "raise": true, "return": true, "try": true, "while": true,
	"with": true, "yield": true,
}
