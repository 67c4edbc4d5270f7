package policy

import (
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// oslo's GenericCheck first tries ast.literal_eval on the kind (the text
// before the first ":"). A Python literal ("True", "'Member'", "42") is
// compared, as str(), with the formatted match. When literal_eval raises
// ValueError (a name such as "project_id" or a dotted path "user.id") the
// kind is a path into the credentials. When it raises SyntaxError the
// exception escapes from enforce().

// kindInfo is the precomputed result of literal_eval on a check kind.
type kindInfo struct {
	literal bool
	value   string   // str(literal) when literal
	path    []string // kind.split(".") otherwise
	err     error    // SyntaxError (or unsupported literal), raised on evaluation
}

func classifyKind(kind string) kindInfo {
	switch kind {
	case "True", "False", "None":
		return kindInfo{literal: true, value: kind}
	case "...":
		return kindInfo{literal: true, value: "Ellipsis"}
	}
	if isNamePath(kind) {
		return kindInfo{path: strings.Split(kind, ".")}
	}
	if kind != "" && (kind[0] == '-' || kind[0] == '+') {
		rest := kind[1:]
		if v, ok, err := numberLiteral(rest); ok || err != nil {
			if err != nil {
				return kindInfo{err: err}
			}
			if kind[0] == '-' {
				v = negate(v)
			}
			return kindInfo{literal: true, value: v}
		}
		// "-name" is a UnaryOp on a Name: ValueError, so a path lookup;
		// "-True" is a UnaryOp on a bool: ValueError as well.
		if isNamePath(rest) || rest == "True" || rest == "False" || rest == "None" {
			return kindInfo{path: strings.Split(kind, ".")}
		}
		return kindInfo{err: pyErr("%w: check kind %q", errUnsupported, kind)}
	}
	if v, ok, err := numberLiteral(kind); ok || err != nil {
		if err != nil {
			return kindInfo{err: err}
		}
		return kindInfo{literal: true, value: v}
	}
	if v, ok, err := stringLiteral(kind); ok || err != nil {
		if err != nil {
			return kindInfo{err: err}
		}
		return kindInfo{literal: true, value: v}
	}
	if kind == "" {
		return kindInfo{err: pyErr("SyntaxError: empty check kind")}
	}
	// Deviation: anything else (containers, bytes, complex numbers,
	// expressions) is either a literal, a ValueError or a SyntaxError in
	// Python; this package does not parse Python expressions and fails
	// closed with an evaluation error.
	return kindInfo{err: pyErr("%w: check kind %q", errUnsupported, kind)}
}

func negate(v string) string {
	if strings.HasPrefix(v, "-") {
		return v[1:]
	}
	if v == "0" {
		return v
	}
	return "-" + v
}

// isNamePath reports whether s parses in Python as a name or an attribute
// chain ("project_id", "user.id", "True.x"): literal_eval raises ValueError.
func isNamePath(s string) bool {
	if s == "" {
		return false
	}
	for i, seg := range strings.Split(s, ".") {
		if !isIdentifier(seg) || pyKeywords[seg] {
			return false
		}
		if i > 0 && (seg == "True" || seg == "False" || seg == "None") {
			return false
		}
		if i == 0 && s == seg && (seg == "True" || seg == "False" || seg == "None") {
			return false
		}
	}
	return true
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r):
		case i > 0 && (unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc)):
		default:
			return false
		}
	}
	return true
}

// numberLiteral parses a Python int or float literal and returns str() of
// its value. ok is false when s is not a number at all.
func numberLiteral(s string) (string, bool, error) {
	if s == "" || !(s[0] >= '0' && s[0] <= '9' || s[0] == '.' && len(s) > 1 && s[1] >= '0' && s[1] <= '9') {
		return "", false, nil
	}
	if strings.HasSuffix(s, "j") || strings.HasSuffix(s, "J") {
		return "", false, pyErr("%w: complex literal %q", errUnsupported, s)
	}
	if len(s) > 1 && s[0] == '0' && strings.IndexByte("xXoObB", s[1]) >= 0 {
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8, 'b': 2, 'B': 2}[s[1]]
		digits, ok := underscoreDigits(s[2:], base, true)
		if !ok {
			return "", false, pyErr("SyntaxError: invalid literal %q", s)
		}
		n, _ := new(big.Int).SetString(digits, base)
		return n.String(), true, nil
	}
	// Decimal integer.
	if digits, ok := underscoreDigits(s, 10, false); ok {
		if len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0") != "" {
			return "", false, pyErr("SyntaxError: leading zeros in decimal integer literals are not permitted")
		}
		n, _ := new(big.Int).SetString(digits, 10)
		return n.String(), true, nil
	}
	// Float: [digitpart] ["." [digitpart]] [("e"|"E") ["+"|"-"] digitpart].
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if _, ok := underscoreDigits(exp, 10, false); !ok {
			return "", false, pyErr("SyntaxError: invalid float literal %q", s)
		}
	}
	ip, fp, dot := strings.Cut(mant, ".")
	okI := ip == ""
	if !okI {
		_, okI = underscoreDigits(ip, 10, false)
	}
	okF := fp == ""
	if !okF {
		_, okF = underscoreDigits(fp, 10, false)
	}
	if !okI || !okF || (ip == "" && fp == "") || (!dot && exp == "" && !strings.ContainsAny(s, "eE")) {
		return "", false, pyErr("SyntaxError: invalid literal %q", s)
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return "", false, pyErr("SyntaxError: invalid literal %q", s)
		}
	}
	return pyFloatRepr(f), true, nil
}

// underscoreDigits checks Python's digit grammar (single underscores between
// digits, optionally one right after a base prefix) and strips them.
func underscoreDigits(s string, base int, prefixed bool) (string, bool) {
	if s == "" {
		return "", false
	}
	if prefixed && s[0] == '_' {
		s = s[1:]
		if s == "" {
			return "", false
		}
	}
	var b strings.Builder
	prevUnderscore := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			if prevUnderscore {
				return "", false
			}
			prevUnderscore = true
			continue
		}
		d := digitValue(c)
		if d < 0 || d >= base {
			return "", false
		}
		b.WriteByte(c)
		prevUnderscore = false
	}
	if prevUnderscore {
		return "", false
	}
	return b.String(), true
}

func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// stringLiteral parses one or more adjacent Python str literals (implicit
// concatenation), with an optional u/r prefix each, single or triple quoted.
func stringLiteral(s string) (string, bool, error) {
	if s == "" || !strings.ContainsRune("'\"uUrR", rune(s[0])) {
		return "", false, nil
	}
	var out strings.Builder
	first := true
	for s != "" {
		raw := false
		switch {
		case s[0] == 'u' || s[0] == 'U':
			s = s[1:]
		case s[0] == 'r' || s[0] == 'R':
			raw = true
			s = s[1:]
		}
		if s == "" || (s[0] != '\'' && s[0] != '"') {
			if first {
				return "", false, nil // a name starting with u or r
			}
			return "", false, pyErr("%w: expression after a string literal", errUnsupported)
		}
		first = false
		q := s[:1]
		if strings.HasPrefix(s, q+q+q) {
			q = q + q + q
		}
		body, rest, ok := scanString(s[len(q):], q)
		if !ok {
			return "", false, pyErr("SyntaxError: unterminated string literal")
		}
		if raw {
			out.WriteString(body)
		} else {
			v, err := unescapePy(body)
			if err != nil {
				return "", false, err
			}
			out.WriteString(v)
		}
		s = rest
	}
	return out.String(), true, nil
}

// scanString finds the closing quote q (a backslash always skips the next
// character, also in raw strings).
func scanString(s, q string) (body, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], q) {
			return s[:i], s[i+len(q):], true
		}
	}
	return "", "", false
}

func unescapePy(s string) (string, error) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 32)
			b.WriteRune(rune(n))
			i = j - 1
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+1+n > len(s) {
				return "", pyErr("SyntaxError: truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", pyErr("SyntaxError: truncated \\%c escape", e)
			}
			r := rune(v)
			if r > unicode.MaxRune {
				return "", pyErr("SyntaxError: illegal Unicode character")
			}
			if r >= 0xd800 && r <= 0xdfff {
				return "", pyErr("%w: surrogate escape", errUnsupported)
			}
			b.WriteRune(r)
			i += n
		case 'N':
			return "", pyErr("%w: \\N{...} escape", errUnsupported)
		default:
			// Unknown escapes keep the backslash (with a SyntaxWarning).
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	if !utf8.ValidString(b.String()) {
		return "", pyErr("%w: invalid text", errUnsupported)
	}
	return b.String(), nil
}
