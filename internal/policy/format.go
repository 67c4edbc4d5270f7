package policy

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The right-hand side of a check ("match") is a Python printf-style format
// string applied to the target with the % operator: "%(project_id)s" % target.
// A missing key makes the check false (oslo catches KeyError); any other
// formatting error is an exception in oslo and an error here.

// errUnsupported marks Python behaviour this package does not reproduce
// (for example "%x" conversions or container literals); it is reported as
// an evaluation error, so the request fails closed.
var errUnsupported = errors.New("unsupported by this implementation")

// maxWidth bounds the width and precision of a conversion.
const maxWidth = 4096

// errMissingKey is the KeyError of a format key absent from the target.
var errMissingKey = errors.New("missing key")

// matchFormat is a compiled format string. A format without any "%" is kept
// as a single literal and formats without allocating.
type matchFormat struct {
	raw   string
	parts []formatPart // literal text and conversions, in order
	plain bool         // no "%" at all: raw is the result
}

type formatPart struct {
	lit   string // literal text (when key is empty and conv == 0)
	key   string
	keyed bool
	conv  byte // 's', 'r', 'a', 'd', 'i', 'u'; 0 for a literal part
	flags string
	width int
	prec  int   // -1 when absent
	err   error // raised when formatting reaches this part (Python goes left to right)
}

func compileFormat(s string) matchFormat {
	if strings.IndexByte(s, '%') < 0 {
		return matchFormat{raw: s, plain: true}
	}
	f := matchFormat{raw: s}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f.parts = append(f.parts, formatPart{lit: lit.String()})
			lit.Reset()
		}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if c != '%' {
			lit.WriteByte(c)
			i++
			continue
		}
		i++
		if i >= len(s) {
			flush()
			f.parts = append(f.parts, formatPart{err: pyErr("ValueError: incomplete format")})
			return f
		}
		p := formatPart{prec: -1}
		keyed := false
		if s[i] == '(' {
			depth := 1
			start := i + 1
			j := start
			for j < len(s) && depth > 0 {
				switch s[j] {
				case '(':
					depth++
				case ')':
					depth--
				}
				j++
			}
			if depth > 0 {
				flush()
				f.parts = append(f.parts, formatPart{err: pyErr("ValueError: incomplete format key")})
				return f
			}
			p.key = s[start : j-1]
			p.keyed = true
			keyed = true
			i = j
		}
		fs := i
		for i < len(s) && strings.IndexByte("-+ #0", s[i]) >= 0 {
			i++
		}
		p.flags = s[fs:i]
		star := false
		if i < len(s) && s[i] == '*' {
			star = true
			i++
		} else {
			ws := i
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			if i > ws {
				p.width = atoiCapped(s[ws:i])
			}
		}
		if i < len(s) && s[i] == '.' {
			i++
			if i < len(s) && s[i] == '*' {
				star = true
				i++
			} else {
				ps := i
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				p.prec = atoiCapped(s[ps:i])
			}
		}
		for i < len(s) && (s[i] == 'h' || s[i] == 'l' || s[i] == 'L') {
			i++
		}
		if i >= len(s) {
			flush()
			p.err = pyErr("ValueError: incomplete format")
			f.parts = append(f.parts, p)
			return f
		}
		conv := s[i]
		i++
		switch {
		case p.width > maxWidth || p.prec > maxWidth:
			// Deviation: Python pads to any width that fits in memory
			// (ValueError "width too big" only past sys.maxsize); a policy
			// never needs more than this.
			p.err = pyErr("%w: width or precision above %d", errUnsupported, maxWidth)
		case conv == '%' && !keyed && !star && p.flags == "" && p.width == 0 && p.prec < 0:
			lit.WriteByte('%')
			continue
		case star:
			// "*" takes its value from a tuple argument; with a mapping
			// Python raises TypeError.
			p.err = pyErr("TypeError: * wants int")
		case !keyed:
			// Deviation: with a mapping argument Python formats the whole
			// target for the first un-keyed conversion ("%s" → str(target))
			// and raises TypeError for the next one; dict order is not
			// reproducible from a Go map, so this is an error here.
			p.err = pyErr("%w: un-keyed conversion %%%c in a policy match", errUnsupported, conv)
		case strings.IndexByte("sraiud", conv) >= 0:
			p.conv = conv
		case strings.IndexByte("xXoeEfFgGc%", conv) >= 0:
			p.err = pyErr("%w: conversion %%%c", errUnsupported, conv)
		default:
			p.err = pyErr("ValueError: unsupported format character %q", conv)
		}
		flush()
		f.parts = append(f.parts, p)
	}
	flush()
	return f
}

// apply formats the target. It returns errMissingKey when a key is absent
// (the check is then false) and a Python error for anything else.
func (f *matchFormat) apply(target Target) (string, error) {
	if f.plain {
		return f.raw, nil
	}
	// Fast path: a format that is exactly one "%(key)s" returns the value
	// itself when it is a string.
	if len(f.parts) == 1 && f.parts[0].conv == 's' && f.parts[0].err == nil && f.parts[0].flags == "" && f.parts[0].width == 0 && f.parts[0].prec < 0 {
		v, ok := target[f.parts[0].key]
		if !ok {
			return "", errMissingKey
		}
		return pyStr(v), nil
	}
	var b strings.Builder
	for i := range f.parts {
		p := &f.parts[i]
		if p.conv == 0 && p.err == nil {
			b.WriteString(p.lit)
			continue
		}
		// Python looks the key up as soon as it has read "%(key)", before
		// it reads the conversion: a missing key wins over a bad format.
		var v any
		if p.keyed {
			var ok bool
			if v, ok = target[p.key]; !ok {
				return "", errMissingKey
			}
		}
		if p.err != nil {
			return "", p.err
		}
		s, err := p.format(v)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func (p *formatPart) format(v any) (string, error) {
	left := strings.IndexByte(p.flags, '-') >= 0
	switch p.conv {
	case 's', 'r', 'a':
		var s string
		switch p.conv {
		case 's':
			s = pyStr(v)
		default:
			s = pyRepr(v)
			if p.conv == 'a' && !isASCII(s) {
				return "", pyErr("%w: %%a of non-ASCII text", errUnsupported)
			}
		}
		if p.prec >= 0 && utf8.RuneCountInString(s) > p.prec {
			s = string([]rune(s)[:p.prec])
		}
		return pad(s, p.width, left), nil
	default: // d, i, u
		var n string
		switch x := v.(type) {
		case bool:
			n = "0"
			if x {
				n = "1"
			}
		case string, nil, []any, []string, map[string]any:
			return "", pyErr("TypeError: %%%c format: a real number is required", p.conv)
		default:
			s := pyStr(v)
			if strings.ContainsAny(s, ".en") { // float: Python truncates towards zero
				fv, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return "", pyErr("%w: %%%c of %s", errUnsupported, p.conv, s)
				}
				if fv != fv || fv > 1e18 || fv < -1e18 {
					return "", pyErr("%w: %%%c of %s", errUnsupported, p.conv, s)
				}
				s = strconv.FormatInt(int64(fv), 10)
			}
			n = s
		}
		neg := strings.HasPrefix(n, "-")
		digits := strings.TrimPrefix(n, "-")
		if p.prec > len(digits) {
			digits = strings.Repeat("0", p.prec-len(digits)) + digits
		}
		sign := ""
		switch {
		case neg:
			sign = "-"
		case strings.IndexByte(p.flags, '+') >= 0:
			sign = "+"
		case strings.IndexByte(p.flags, ' ') >= 0:
			sign = " "
		}
		if !left && strings.IndexByte(p.flags, '0') >= 0 && len(sign)+len(digits) < p.width {
			digits = strings.Repeat("0", p.width-len(sign)-len(digits)) + digits
		}
		return pad(sign+digits, p.width, left), nil
	}
}

func pad(s string, width int, left bool) string {
	n := utf8.RuneCountInString(s)
	if n >= width {
		return s
	}
	if left {
		return s + strings.Repeat(" ", width-n)
	}
	return strings.Repeat(" ", width-n) + s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// atoiCapped parses digits, saturating above maxWidth.
func atoiCapped(d string) int {
	n := 0
	for i := 0; i < len(d); i++ {
		n = n*10 + int(d[i]-'0')
		if n > maxWidth {
			return maxWidth + 1
		}
	}
	return n
}
