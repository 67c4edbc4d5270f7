package jsonpatch

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Python values that have no JSON equivalent. ParseLiteral returns them so
// that callers (and Apply) can refuse them the way Magnum's type checks do.
type (
	// Tuple is a Python tuple.
	Tuple []any
	// Set is a Python set, elements in source order (Python iterates sets in
	// hash order; compare them as unordered collections).
	Set []any
	// Bytes is a Python bytes value.
	Bytes string
	// Ellipsis is Python's Ellipsis constant (the literal "...").
	Ellipsis struct{}
)

// Dict is a Python dict: keys in insertion order, which Python preserves and
// Magnum's messages expose (the first offending label key is the first in
// dict order). Keys may be any hashable Python value.
type Dict struct {
	Keys   []any
	Values []any
}

// Get returns the value stored under the string key k.
func (d *Dict) Get(k string) (any, bool) {
	for i, key := range d.Keys {
		if s, ok := key.(string); ok && s == k {
			return d.Values[i], true
		}
	}
	return nil, false
}

// PyRepr renders the tuple as Python's repr does.
func (t Tuple) PyRepr() string {
	if len(t) == 1 {
		return "(" + magnum.PyRepr(t[0]) + ",)"
	}
	parts := make([]string, len(t))
	for i, v := range t {
		parts[i] = magnum.PyRepr(v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// PyRepr renders the set as Python's repr does (in source order).
func (s Set) PyRepr() string {
	if len(s) == 0 {
		return "set()"
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = magnum.PyRepr(v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// PyRepr renders the bytes value as Python's repr does.
func (b Bytes) PyRepr() string { return magnum.PyBytesRepr(string(b)) }

// PyRepr renders Ellipsis as Python's repr does.
func (Ellipsis) PyRepr() string { return "Ellipsis" }

// PyRepr renders the dict as Python's repr does.
func (d *Dict) PyRepr() string {
	parts := make([]string, len(d.Keys))
	for i := range d.Keys {
		parts[i] = magnum.PyRepr(d.Keys[i]) + ": " + magnum.PyRepr(d.Values[i])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// LiteralError is the exception ast.literal_eval raises. Its Error method
// returns Python's str() of that exception, which Magnum embeds in the
// PatchError reason.
type LiteralError struct {
	// Type is the Python exception class: SyntaxError, IndentationError,
	// ValueError or TypeError. Magnum turns the first three into a 400
	// PatchError; a TypeError (unhashable key) escapes as a 500.
	Type string
	// Msg is the exception message without the location suffix.
	Msg string
	// Line is the 1-based line of a SyntaxError (0 for an empty source).
	Line int
}

// Error returns Python's str() of the exception.
func (e *LiteralError) Error() string {
	if e.Type == "SyntaxError" || e.Type == "IndentationError" {
		return fmt.Sprintf("%s (<unknown>, line %d)", e.Msg, e.Line)
	}
	return e.Msg
}

func syntaxErr(line int, format string, args ...any) *LiteralError {
	return &LiteralError{Type: "SyntaxError", Msg: fmt.Sprintf(format, args...), Line: line}
}

// ParseLiteral evaluates s as Python's ast.literal_eval (Python 3.11) does.
// Results: nil (None), bool, int64 or *big.Int, float64, complex128, string,
// Bytes, Ellipsis, []any (list), Tuple, Set, *Dict. Errors are *LiteralError.
//
// Supported: the full literal grammar (string prefixes and escapes, implicit
// concatenation, all number forms, containers, comments, line joining) and
// enough of the expression grammar to tell SyntaxError from ValueError the
// way literal_eval does. Known gaps: \N{...} escapes (no Unicode name table:
// reported as an unknown character name), comprehensions, lambda, walrus and
// f-string contents, and the location-specific wording of rarer syntax errors.
func ParseLiteral(s string) (any, error) {
	// Magnum: ast.literal_eval strips leading spaces and tabs before parsing.
	s = strings.TrimLeft(s, " \t")
	toks, soft, lerr := tokenize(s)
	if lerr != nil {
		return nil, lerr
	}
	p := &parser{toks: toks, soft: soft, empty: s == ""}
	n, lerr := p.parseEval()
	if lerr != nil {
		if soft != nil && lerr != soft.err && soft.open != nil && lerr.Line > soft.open.line {
			return nil, syntaxErr(soft.open.line, "'%c' was never closed", soft.open.ch)
		}
		return nil, lerr
	}
	v, lerr := convert(n)
	if lerr != nil {
		return nil, lerr
	}
	return v, nil
}

// ---- tokenizer ----

type tokKind int

const (
	tName tokKind = iota
	tNumber
	tString
	tOp
	tNewline
	tEnd
	tIndent
	tErr // a tokenizer error Python only reports when the parser reaches it
)

type token struct {
	kind  tokKind
	text  string
	line  int
	level int // bracket depth before the token
	// strings
	str     string
	isBytes bool
	isF     bool
	// numbers
	num any
	// String errors are raised by CPython's parser when it builds the
	// constant, so tokenizer errors later in the source win over them.
	asciiErr  bool
	decodeErr string
}

const maxLevel = 200

var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

func isIDStart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r)
}

func isIDCont(r rune) bool {
	return isIDStart(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) ||
		unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Other_ID_Continue, r)
}

var ops3 = []string{"**=", "//=", ">>=", "<<=", "..."}
var ops2 = []string{"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="}

type bracket struct {
	ch   byte
	line int
}

// softError is a tokenizer error that CPython raises only when the parser
// fetches the failing token (a stray line-continuation character, the end of
// input inside brackets). When the parser fails earlier, its own error stands,
// unless it lies on a line after the innermost open bracket, in which case
// CPython reports that bracket as never closed.
type softError struct {
	err       *LiteralError
	open      *bracket // innermost open bracket, if any
	tokenLine int
}

// tokenize scans the whole source first, as CPython does before reporting
// a parser error: tokenizer errors anywhere win over parser errors.
func tokenize(src string) ([]token, *softError, *LiteralError) {
	var toks []token
	var stack []bracket
	soft := func(line int, format string, args ...any) ([]token, *softError, *LiteralError) {
		se := &softError{err: syntaxErr(line, format, args...), tokenLine: line}
		if len(stack) > 0 {
			b := stack[len(stack)-1]
			se.open = &b
		}
		toks = append(toks, token{kind: tErr, line: line, level: len(stack)})
		return toks, se, nil
	}
	line := 1
	i := 0
	lineStart := true
	emit := func(t token) {
		t.level = len(stack)
		toks = append(toks, t)
		lineStart = false
	}
	for i < len(src) {
		c := src[i]
		if lineStart && len(stack) == 0 {
			// Measure indentation of a new logical line.
			j := i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\f') {
				j++
			}
			if j >= len(src) || src[j] == '\n' || src[j] == '\r' || src[j] == '#' {
				// blank or comment-only line
				i = j
				if i < len(src) && src[i] == '#' {
					for i < len(src) && src[i] != '\n' && src[i] != '\r' {
						i++
					}
				}
				if i < len(src) {
					i = skipEOL(src, i)
					line++
				}
				continue
			}
			// A form feed resets the indentation column, as in CPython.
			indent := src[i:j]
			if k := strings.LastIndexByte(indent, '\f'); k >= 0 {
				indent = indent[k+1:]
			}
			if indent != "" && !(line == 1 && len(toks) == 0) {
				// The parser fails on the INDENT token; later tokenizer
				// errors still take precedence, so keep scanning.
				emit(token{kind: tIndent, line: line})
			}
			i = j
			lineStart = false
			continue
		}
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i++
			}
		case c == '\\':
			if i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r') {
				i = skipEOL(src, i+1)
				line++
				continue
			}
			if i+1 >= len(src) {
				if len(stack) > 0 {
					return soft(stack[len(stack)-1].line, "'%c' was never closed", stack[len(stack)-1].ch)
				}
				return soft(line, "unexpected EOF while parsing")
			}
			return soft(line, "unexpected character after line continuation character")
		case c == '\n' || c == '\r':
			i = skipEOL(src, i)
			if len(stack) == 0 {
				if len(toks) > 0 && toks[len(toks)-1].kind != tNewline {
					emit(token{kind: tNewline, line: line})
				}
				lineStart = true
			}
			line++
		case c == '\'' || c == '"':
			t, n, err := scanString(src, i, "", line)
			if err != nil {
				return nil, nil, err
			}
			line += strings.Count(src[i:i+n], "\n")
			i += n
			emit(t)
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9'):
			t, n, err := scanNumber(src, i, line)
			if err != nil {
				return nil, nil, err
			}
			i += n
			emit(t)
		case c >= 0x80 || c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z'):
			r, size := utf8.DecodeRuneInString(src[i:])
			if !isIDStart(r) {
				// Python reports an invalid character; both are SyntaxErrors.
				return nil, nil, syntaxErr(line, "invalid character '%c' (U+%04X)", r, r)
			}
			j := i + size
			for j < len(src) {
				r, size = utf8.DecodeRuneInString(src[j:])
				if !isIDCont(r) {
					break
				}
				j += size
			}
			word := src[i:j]
			if j < len(src) && (src[j] == '\'' || src[j] == '"') && isStringPrefix(word) {
				t, n, err := scanString(src, j, strings.ToLower(word), line)
				if err != nil {
					return nil, nil, err
				}
				line += strings.Count(src[j:j+n], "\n")
				i = j + n
				emit(t)
				continue
			}
			emit(token{kind: tName, text: word, line: line})
			i = j
		default:
			op := ""
			for _, o := range ops3 {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				for _, o := range ops2 {
					if strings.HasPrefix(src[i:], o) {
						op = o
						break
					}
				}
			}
			if op == "" {
				op = src[i : i+1]
			}
			switch op {
			case "(", "[", "{":
				if len(stack) >= maxLevel {
					return nil, nil, syntaxErr(line, "too many nested parentheses")
				}
				emit(token{kind: tOp, text: op, line: line})
				stack = append(stack, bracket{op[0], line})
			case ")", "]", "}":
				if len(stack) == 0 {
					return nil, nil, syntaxErr(line, "unmatched '%s'", op)
				}
				open := stack[len(stack)-1]
				if closerOf(open.ch) != op[0] {
					if open.line != line {
						return nil, nil, syntaxErr(line, "closing parenthesis '%s' does not match opening parenthesis '%c' on line %d", op, open.ch, open.line)
					}
					return nil, nil, syntaxErr(line, "closing parenthesis '%s' does not match opening parenthesis '%c'", op, open.ch)
				}
				stack = stack[:len(stack)-1]
				emit(token{kind: tOp, text: op, line: line})
			default:
				emit(token{kind: tOp, text: op, line: line})
			}
			i += len(op)
		}
	}
	if len(stack) > 0 {
		return soft(stack[len(stack)-1].line, "'%c' was never closed", stack[len(stack)-1].ch)
	}
	if len(toks) > 0 && toks[len(toks)-1].kind != tNewline {
		toks = append(toks, token{kind: tNewline, line: line})
	}
	toks = append(toks, token{kind: tEnd, line: line})
	return toks, nil, nil
}

func skipEOL(src string, i int) int {
	if src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n' {
		return i + 2
	}
	return i + 1
}

func closerOf(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	}
	return '}'
}

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "b", "br", "rb", "f", "fr", "rf":
		return true
	}
	return false
}

// scanString scans a string literal whose opening quote is at src[i].
func scanString(src string, i int, prefix string, line int) (token, int, *LiteralError) {
	raw := strings.Contains(prefix, "r")
	isBytes := strings.Contains(prefix, "b")
	isF := strings.Contains(prefix, "f")
	q := src[i]
	q3 := strings.Repeat(string(q), 3)
	triple := strings.HasPrefix(src[i:], q3)
	qlen := 1
	if triple {
		qlen = 3
	}
	j := i + qlen
	startLine := line
	var body strings.Builder
	for {
		if j >= len(src) {
			if triple {
				return token{}, 0, syntaxErr(startLine, "unterminated triple-quoted string literal (detected at line %d)", line)
			}
			return token{}, 0, syntaxErr(startLine, "unterminated string literal (detected at line %d)", line)
		}
		c := src[j]
		if c == '\\' && j+1 < len(src) {
			body.WriteByte(c)
			body.WriteByte(src[j+1])
			if src[j+1] == '\n' {
				line++
			}
			j += 2
			continue
		}
		if c == q && (!triple || strings.HasPrefix(src[j:], q3)) {
			j += qlen
			break
		}
		if c == '\n' || c == '\r' {
			if !triple {
				return token{}, 0, syntaxErr(startLine, "unterminated string literal (detected at line %d)", line)
			}
			line++
		}
		body.WriteByte(c)
		j++
	}
	t := token{kind: tString, line: startLine, isBytes: isBytes, isF: isF, text: src[i-len(prefix) : j]}
	b := body.String()
	if isF {
		return t, j - i, nil
	}
	if isBytes {
		for k := 0; k < len(b); k++ {
			if b[k] >= 0x80 {
				t.asciiErr = true
				return t, j - i, nil
			}
		}
	}
	if raw {
		t.str = strings.ReplaceAll(b, "\r\n", "\n")
		return t, j - i, nil
	}
	s, err := decodeEscapes(b, isBytes, startLine)
	if err != nil {
		t.decodeErr = err.Msg
		return t, j - i, nil
	}
	t.str = s
	return t, j - i, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
}

// decodeEscapes interprets backslash escapes as Python's unicode-escape (or,
// for bytes, escape) decoder does.
func decodeEscapes(b string, isBytes bool, line int) (string, *LiteralError) {
	// Python reports positions in the body after turning every non-ASCII
	// character into a 10-byte \UXXXXXXXX escape.
	pos := func(k int) int {
		n := 0
		for _, r := range b[:k] {
			if r < 0x80 {
				n++
			} else {
				n += 10
			}
		}
		return n
	}
	var out strings.Builder
	for k := 0; k < len(b); {
		c := b[k]
		if c == '\r' {
			out.WriteByte('\n')
			if k+1 < len(b) && b[k+1] == '\n' {
				k++
			}
			k++
			continue
		}
		if c != '\\' || k+1 >= len(b) {
			out.WriteByte(c)
			k++
			continue
		}
		e := b[k+1]
		switch e {
		case '\n':
			k += 2
		case '\\', '\'', '"':
			out.WriteByte(e)
			k += 2
		case 'a':
			out.WriteByte(7)
			k += 2
		case 'b':
			out.WriteByte(8)
			k += 2
		case 'f':
			out.WriteByte(12)
			k += 2
		case 'n':
			out.WriteByte('\n')
			k += 2
		case 'r':
			out.WriteByte('\r')
			k += 2
		case 't':
			out.WriteByte('\t')
			k += 2
		case 'v':
			out.WriteByte(11)
			k += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := 0
			n := 0
			for n < 3 && k+1+n < len(b) && b[k+1+n] >= '0' && b[k+1+n] <= '7' {
				v = v*8 + int(b[k+1+n]-'0')
				n++
			}
			if isBytes {
				out.WriteByte(byte(v))
			} else {
				out.WriteRune(rune(v))
			}
			k += 1 + n
		case 'x', 'u', 'U':
			if isBytes && e != 'x' {
				out.WriteByte('\\')
				k++
				continue
			}
			want := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			n := 0
			for n < want && k+2+n < len(b) && isHex(b[k+2+n]) {
				n++
			}
			if n < want {
				if isBytes {
					return "", syntaxErr(line, "(value error) invalid \\x escape at position %d", k)
				}
				name := map[byte]string{'x': `\xXX`, 'u': `\uXXXX`, 'U': `\UXXXXXXXX`}[e]
				return "", syntaxErr(line, "(unicode error) 'unicodeescape' codec can't decode bytes in position %d-%d: truncated %s escape", pos(k), pos(k)+1+n, name)
			}
			v, _ := strconv.ParseUint(b[k+2:k+2+n], 16, 32)
			if isBytes {
				out.WriteByte(byte(v))
			} else {
				if v > unicode.MaxRune {
					return "", syntaxErr(line, "(unicode error) 'unicodeescape' codec can't decode bytes in position %d-%d: illegal Unicode character", pos(k), pos(k)+1+n)
				}
				out.WriteRune(rune(v))
			}
			k += 2 + n
		case 'N':
			if isBytes {
				out.WriteByte('\\')
				k++
				continue
			}
			// Deviation: no Unicode character name table; every \N escape is
			// reported as an unknown name (Python accepts valid names).
			end := k + 2
			if end < len(b) && b[end] == '{' {
				if c := strings.IndexByte(b[end:], '}'); c >= 0 {
					return "", syntaxErr(line, "(unicode error) 'unicodeescape' codec can't decode bytes in position %d-%d: unknown Unicode character name", pos(k), pos(end+c))
				}
			}
			return "", syntaxErr(line, "(unicode error) 'unicodeescape' codec can't decode bytes in position %d-%d: malformed \\N character escape", pos(k), pos(k)+1)
		default:
			// Unknown escapes are kept verbatim (a DeprecationWarning in Python).
			out.WriteByte('\\')
			k++
		}
	}
	return out.String(), nil
}

// scanNumber scans a Python number literal starting at src[i].
func scanNumber(src string, i int, line int) (token, int, *LiteralError) {
	j := i
	digits := func(ok func(byte) bool) (bool, bool) { // (some, badUnderscore)
		some := false
		for j < len(src) {
			if ok(src[j]) {
				some = true
				j++
				continue
			}
			if src[j] == '_' && some && j+1 < len(src) && ok(src[j+1]) {
				j++
				continue
			}
			if src[j] == '_' {
				return some, true
			}
			break
		}
		return some, false
	}
	isDec := func(c byte) bool { return c >= '0' && c <= '9' }
	endCheck := func(kind string) *LiteralError {
		if j < len(src) {
			r, _ := utf8.DecodeRuneInString(src[j:])
			if isIDCont(r) && !startsKeyword(src[j:]) {
				return syntaxErr(line, "invalid %s literal", kind)
			}
		}
		return nil
	}
	if src[j] == '0' && j+1 < len(src) && strings.ContainsRune("xXoObB", rune(src[j+1])) {
		base := 16
		kind := "hexadecimal"
		ok := isHex
		switch src[j+1] | 0x20 {
		case 'o':
			base, kind, ok = 8, "octal", func(c byte) bool { return c >= '0' && c <= '7' }
		case 'b':
			base, kind, ok = 2, "binary", func(c byte) bool { return c == '0' || c == '1' }
		}
		j += 2
		if j < len(src) && src[j] == '_' {
			j++
		}
		start := j
		some, bad := digits(ok)
		if !some || bad {
			if j < len(src) && isDec(src[j]) && base != 16 {
				return token{}, 0, syntaxErr(line, "invalid digit '%c' in %s literal", src[j], kind)
			}
			return token{}, 0, syntaxErr(line, "invalid %s literal", kind)
		}
		if j < len(src) && isDec(src[j]) && base != 16 {
			return token{}, 0, syntaxErr(line, "invalid digit '%c' in %s literal", src[j], kind)
		}
		if err := endCheck(kind); err != nil {
			return token{}, 0, err
		}
		text := strings.ReplaceAll(src[start:j], "_", "")
		bi, _ := new(big.Int).SetString(text, base)
		return token{kind: tNumber, text: src[i:j], line: line, num: normInt(bi)}, j - i, nil
	}
	// decimal integer part
	intStart := j
	_, bad := digits(isDec)
	if bad {
		return token{}, 0, syntaxErr(line, "invalid decimal literal")
	}
	intPart := src[intStart:j]
	isFloat := false
	if j < len(src) && src[j] == '.' {
		isFloat = true
		j++
		if j < len(src) && isDec(src[j]) {
			if _, bad := digits(isDec); bad {
				return token{}, 0, syntaxErr(line, "invalid decimal literal")
			}
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDec(src[k]) {
			isFloat = true
			j = k
			if _, bad := digits(isDec); bad {
				return token{}, 0, syntaxErr(line, "invalid decimal literal")
			}
		} else if !startsKeyword(src[j:]) {
			// "1else" is a number followed by a keyword; anything else is
			// a broken exponent.
			return token{}, 0, syntaxErr(line, "invalid decimal literal")
		}
	}
	imag := false
	if j < len(src) && (src[j] == 'j' || src[j] == 'J') {
		imag = true
		j++
	}
	if !isFloat && !imag {
		clean := strings.ReplaceAll(intPart, "_", "")
		if len(clean) > 1 && clean[0] == '0' && strings.Trim(clean, "0") != "" {
			return token{}, 0, syntaxErr(line, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers")
		}
	}
	if err := endCheck("decimal"); err != nil {
		if imag {
			err.Msg = "invalid imaginary literal"
		}
		return token{}, 0, err
	}
	text := strings.ReplaceAll(src[i:j], "_", "")
	tok := token{kind: tNumber, text: src[i:j], line: line}
	switch {
	case imag:
		f := parseFloat(strings.TrimRight(text, "jJ"))
		tok.num = complex(0, f)
	case isFloat:
		tok.num = parseFloat(text)
	default:
		clean := strings.ReplaceAll(intPart, "_", "")
		if len(clean) > 1 && clean[0] == '0' && strings.Trim(clean, "0") != "" {
			return token{}, 0, syntaxErr(line, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers")
		}
		if len(clean) > 4300 {
			return token{}, 0, syntaxErr(line, "Exceeds the limit (4300 digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge integer literals to avoid decimal conversion limits.", len(clean))
		}
		bi, _ := new(big.Int).SetString(clean, 10)
		tok.num = normInt(bi)
	}
	return tok, j - i, nil
}

// startsKeyword reports whether s starts with a keyword that Python 3.11
// accepts right after a number ("1if x else y", with a warning).
func startsKeyword(s string) bool {
	for _, kw := range []string{"and", "else", "for", "if", "in", "is", "not", "or"} {
		if strings.HasPrefix(s, kw) {
			rest := s[len(kw):]
			if rest == "" {
				return true
			}
			r, _ := utf8.DecodeRuneInString(rest)
			if !isIDCont(r) {
				return true
			}
		}
	}
	return false
}

func parseFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return math.NaN()
	}
	return f
}

func normInt(b *big.Int) any {
	if b.IsInt64() {
		return b.Int64()
	}
	return b
}

// ---- parser (a subset of Python's expression grammar) ----

type nodeKind int

const (
	nConst nodeKind = iota
	nTuple
	nList
	nSet
	nDict
	nSetCall // set()
	nUnary
	nBinOp
	nOther // any other expression node: malformed for literal_eval
)

type node struct {
	kind   nodeKind
	name   string // AST class name for nOther / op name
	line   int
	val    any
	elts   []*node
	keys   []*node // nil entry = ** unpacking
	op     string
	left   *node
	right  *node
	isBool bool
}

type parser struct {
	toks  []token
	pos   int
	soft  *softError
	empty bool // CPython reports line 0 for an empty source
	nest  int  // depth of nested expression nodes
}

// maxNest is the expression depth at which CPython 3.11, called from a
// shallow stack, gives up with a RecursionError while building the AST (which
// Magnum lets escape as a 500). CPython's real limit shrinks with the depth
// of the calling Python stack, so near this bound the two may differ; the
// bound also keeps our recursive descent shallow.
const maxNest = 2986

func (p *parser) enter(extra int) *LiteralError {
	p.nest++
	if p.nest+extra > maxNest {
		return &LiteralError{Type: "RecursionError", Msg: "maximum recursion depth exceeded during ast construction"}
	}
	return nil
}

func (p *parser) leave() { p.nest-- }

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if p.pos < len(p.toks)-1 {
		p.pos++
	}
	return t
}

func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == s
}

func (p *parser) isName(s string) bool {
	t := p.peek()
	return t.kind == tName && t.text == s
}

func (p *parser) invalid() *LiteralError {
	t := p.peek()
	if t.kind == tErr {
		return p.soft.err
	}
	if t.kind == tIndent {
		return &LiteralError{Type: "IndentationError", Msg: "unexpected indent", Line: t.line}
	}
	line := t.line
	if p.empty {
		line = 0
	}
	return syntaxErr(line, "invalid syntax")
}

func (p *parser) parseEval() (*node, *LiteralError) {
	if p.peek().kind == tErr {
		return nil, p.soft.err
	}
	if p.peek().kind == tEnd {
		if p.empty {
			return nil, syntaxErr(0, "invalid syntax")
		}
		return nil, syntaxErr(1, "invalid syntax")
	}
	if p.peek().kind == tNewline {
		return nil, syntaxErr(p.peek().line, "invalid syntax")
	}
	n, err := p.parseExprList(true)
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tNewline {
		p.next()
	}
	if p.peek().kind != tEnd {
		return nil, p.invalid()
	}
	return n, nil
}

// parseExprList parses "expr (',' expr)* [',']" (a bare tuple when a comma
// is present).
func (p *parser) parseExprList(top bool) (*node, *LiteralError) {
	first, err := p.parseStarOrExpr()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		if first.kind == nOther && first.name == "Starred" {
			return nil, p.invalid()
		}
		if top {
			if err := p.checkAdjacent(first); err != nil {
				return nil, err
			}
		}
		return first, nil
	}
	elts := []*node{first}
	for p.isOp(",") {
		p.next()
		if !p.startsExpr() {
			break
		}
		e, err := p.parseStarOrExpr()
		if err != nil {
			return nil, err
		}
		elts = append(elts, e)
	}
	return &node{kind: nTuple, elts: elts, line: first.line}, nil
}

// startsExpr reports whether the next token can begin an expression.
func (p *parser) startsExpr() bool {
	t := p.peek()
	switch t.kind {
	case tNumber, tString:
		return true
	case tName:
		return !pyKeywords[t.text] || t.text == "True" || t.text == "False" || t.text == "None" ||
			t.text == "not" || t.text == "lambda" || t.text == "await"
	case tOp:
		switch t.text {
		case "(", "[", "{", "-", "+", "~", "...", "*":
			return true
		}
	}
	return false
}

// checkAdjacent reproduces Python's "Perhaps you forgot a comma?" hint: two
// expressions side by side inside brackets.
func (p *parser) checkAdjacent(prev *node) *LiteralError {
	t := p.peek()
	if t.kind == tErr {
		return p.soft.err
	}
	if !p.startsExpr() || (t.kind == tOp && t.text == "*") {
		return nil
	}
	if prev.kind == nOther && prev.name == "Name" && t.kind == tString {
		if p.soft != nil {
			save := p.pos
			_, err := p.parseExpr()
			reached := p.peek().kind == tErr
			p.pos = save
			if reached || err == p.soft.err {
				return p.soft.err
			}
		}
		return nil
	}
	// CPython parses the second expression before giving the hint; doing so
	// may reach a pending tokenizer error, which then wins.
	save := p.pos
	_, err := p.parseExpr()
	reached := p.peek().kind == tErr
	p.pos = save
	if p.soft != nil && (reached || err == p.soft.err) {
		return p.soft.err
	}
	if err != nil || t.level == 0 {
		return nil
	}
	return syntaxErr(prev.line, "invalid syntax. Perhaps you forgot a comma?")
}

func (p *parser) parseStarOrExpr() (*node, *LiteralError) {
	if t := p.peek(); t.kind == tName && t.level > 0 && !pyKeywords[t.text] && p.toks[p.pos+1].kind == tOp && p.toks[p.pos+1].text == ":=" {
		p.next()
		p.next()
		if _, err := p.parseExpr(); err != nil {
			return nil, err
		}
		return &node{kind: nOther, name: "NamedExpr", line: t.line}, nil
	}
	if p.isOp("*") {
		t := p.next()
		e, err := p.parseBin(0)
		if err != nil {
			return nil, err
		}
		return &node{kind: nOther, name: "Starred", line: t.line, elts: []*node{e}}, nil
	}
	return p.parseExpr()
}

// parseExpr parses a conditional expression.
func (p *parser) parseExpr() (*node, *LiteralError) {
	if p.isName("lambda") {
		t := p.next()
		for !p.isOp(":") {
			switch {
			case p.peek().kind == tName && !pyKeywords[p.peek().text], p.isOp(","), p.isOp("*"), p.isOp("**"), p.isOp("/"):
				p.next()
			case p.isOp("="):
				p.next()
				if _, err := p.parseExpr(); err != nil {
					return nil, err
				}
			default:
				return nil, p.invalid()
			}
		}
		p.next()
		if _, err := p.parseExpr(); err != nil {
			return nil, err
		}
		return &node{kind: nOther, name: "Lambda", line: t.line}, nil
	}
	n, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.isName("if") {
		p.next()
		if err := p.enter(0); err != nil {
			return nil, err
		}
		defer p.leave()
		cond, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if !p.isName("else") {
			if p.peek().kind == tErr {
				return nil, p.soft.err
			}
			if !p.isOp(":") {
				return nil, syntaxErr(n.line, "expected 'else' after 'if' expression")
			}
			return nil, p.invalid()
		}
		p.next()
		alt, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		return &node{kind: nOther, name: "IfExp", line: n.line, elts: []*node{n, cond, alt}}, nil
	}
	return n, nil
}

func (p *parser) parseOr() (*node, *LiteralError) {
	return p.parseBoolOp("or", p.parseAnd)
}

func (p *parser) parseAnd() (*node, *LiteralError) {
	return p.parseBoolOp("and", p.parseNot)
}

func (p *parser) parseBoolOp(kw string, sub func() (*node, *LiteralError)) (*node, *LiteralError) {
	n, err := sub()
	if err != nil {
		return nil, err
	}
	for p.isName(kw) {
		p.next()
		r, err := sub()
		if err != nil {
			return nil, err
		}
		n = &node{kind: nOther, name: "BoolOp", line: n.line, elts: []*node{n, r}}
	}
	return n, nil
}

func (p *parser) parseNot() (*node, *LiteralError) {
	if p.isName("not") {
		t := p.next()
		if err := p.enter(0); err != nil {
			return nil, err
		}
		defer p.leave()
		e, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &node{kind: nUnary, op: "not", line: t.line, left: e}, nil
	}
	return p.parseComparison()
}

func (p *parser) parseComparison() (*node, *LiteralError) {
	n, err := p.parseBin(0)
	if err != nil {
		return nil, err
	}
	cmp := false
	for {
		t := p.peek()
		if t.kind == tOp && (t.text == "<" || t.text == ">" || t.text == "==" || t.text == ">=" || t.text == "<=" || t.text == "!=") {
			p.next()
		} else if p.isName("in") {
			p.next()
		} else if p.isName("not") && p.toks[p.pos+1].kind == tName && p.toks[p.pos+1].text == "in" {
			p.next()
			p.next()
		} else if p.isName("is") {
			p.next()
			if p.isName("not") {
				p.next()
			}
		} else {
			break
		}
		if _, err := p.parseBin(0); err != nil {
			return nil, err
		}
		cmp = true
	}
	if cmp {
		return &node{kind: nOther, name: "Compare", line: n.line}, nil
	}
	return n, nil
}

var binLevels = [][]string{{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}}

func (p *parser) parseBin(level int) (*node, *LiteralError) {
	if level == len(binLevels) {
		return p.parseFactor()
	}
	n, err := p.parseBin(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tOp || !contains(binLevels[level], t.text) {
			return n, nil
		}
		p.next()
		r, err := p.parseBin(level + 1)
		if err != nil {
			return nil, err
		}
		n = &node{kind: nBinOp, op: t.text, left: n, right: r, line: n.line}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) parseFactor() (*node, *LiteralError) {
	t := p.peek()
	if t.kind == tOp && (t.text == "-" || t.text == "+" || t.text == "~") {
		p.next()
		if err := p.enter(0); err != nil {
			return nil, err
		}
		defer p.leave()
		e, err := p.parseFactor()
		if err != nil {
			return nil, err
		}
		return &node{kind: nUnary, op: t.text, left: e, line: t.line}, nil
	}
	return p.parsePower()
}

func (p *parser) parsePower() (*node, *LiteralError) {
	n, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	if p.isOp("**") {
		p.next()
		if err := p.enter(0); err != nil {
			return nil, err
		}
		defer p.leave()
		r, err := p.parseFactor()
		if err != nil {
			return nil, err
		}
		return &node{kind: nBinOp, op: "**", left: n, right: r, line: n.line}, nil
	}
	return n, nil
}

func (p *parser) parsePrimary() (*node, *LiteralError) {
	n, err := p.parseAtom()
	if err != nil {
		return nil, err
	}
	trailers := 0
	for {
		if p.isOp(".") || p.isOp("(") || p.isOp("[") {
			trailers++
			if err := p.enter(trailers - 1); err != nil {
				return nil, err
			}
			p.leave()
		}
		switch {
		case p.isOp("."):
			p.next()
			if p.peek().kind != tName || pyKeywords[p.peek().text] {
				return nil, p.invalid()
			}
			p.next()
			n = &node{kind: nOther, name: "Attribute", line: n.line}
		case p.isOp("("):
			p.next()
			args := 0
			for !p.isOp(")") {
				if p.isOp("**") {
					p.next()
				} else if p.peek().kind == tName && p.toks[p.pos+1].kind == tOp && p.toks[p.pos+1].text == "=" {
					p.next()
					p.next()
				}
				e, err := p.parseStarOrExpr()
				if err != nil {
					return nil, err
				}
				if err := p.checkAdjacent(e); err != nil {
					return nil, err
				}
				args++
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			if !p.isOp(")") {
				return nil, p.invalid()
			}
			p.next()
			if n.kind == nOther && n.name == "Name" && n.val == "set" && args == 0 {
				n = &node{kind: nSetCall, line: n.line}
			} else {
				n = &node{kind: nOther, name: "Call", line: n.line}
			}
		case p.isOp("["):
			if nt := p.toks[p.pos+1]; nt.kind == tOp && nt.text == "]" {
				// An empty subscript is not a trailer: CPython's parser
				// backtracks and sees "[]" as the next expression.
				return n, nil
			}
			p.next()
			for !p.isOp("]") {
				if !p.isOp(":") {
					e, err := p.parseExpr()
					if err != nil {
						return nil, err
					}
					if err := p.checkAdjacent(e); err != nil {
						return nil, err
					}
				}
				for p.isOp(":") {
					p.next()
					if p.startsExpr() {
						if _, err := p.parseExpr(); err != nil {
							return nil, err
						}
					}
				}
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			if !p.isOp("]") {
				return nil, p.invalid()
			}
			p.next()
			n = &node{kind: nOther, name: "Subscript", line: n.line}
		default:
			return n, nil
		}
	}
}

func (p *parser) parseAtom() (*node, *LiteralError) {
	t := p.peek()
	switch t.kind {
	case tNumber:
		p.next()
		return &node{kind: nConst, val: t.num, line: t.line}, nil
	case tString:
		return p.parseStrings()
	case tName:
		switch t.text {
		case "True", "False":
			p.next()
			return &node{kind: nConst, val: t.text == "True", isBool: true, line: t.line}, nil
		case "None":
			p.next()
			return &node{kind: nConst, val: nil, line: t.line}, nil
		}
		if pyKeywords[t.text] {
			return nil, p.invalid()
		}
		p.next()
		return &node{kind: nOther, name: "Name", val: t.text, line: t.line}, nil
	case tOp:
		switch t.text {
		case "...":
			p.next()
			return &node{kind: nConst, val: Ellipsis{}, line: t.line}, nil
		case "(":
			p.next()
			if p.isOp(")") {
				p.next()
				return &node{kind: nTuple, line: t.line}, nil
			}
			first, err := p.parseStarOrExpr()
			if err != nil {
				return nil, err
			}
			if p.isName("for") || p.isName("async") {
				if err := p.parseComp(")"); err != nil {
					return nil, err
				}
				return &node{kind: nOther, name: "GeneratorExp", line: t.line}, nil
			}
			if p.isOp(")") {
				p.next()
				if first.kind == nOther && first.name == "Starred" {
					return nil, syntaxErr(t.line, "cannot use starred expression here")
				}
				return first, nil
			}
			elts, err := p.parseSeqTail(first, ")")
			if err != nil {
				return nil, err
			}
			return &node{kind: nTuple, elts: elts, line: t.line}, nil
		case "[":
			p.next()
			if p.isOp("]") {
				p.next()
				return &node{kind: nList, line: t.line}, nil
			}
			first, err := p.parseStarOrExpr()
			if err != nil {
				return nil, err
			}
			if p.isName("for") || p.isName("async") {
				if err := p.parseComp("]"); err != nil {
					return nil, err
				}
				return &node{kind: nOther, name: "ListComp", line: t.line}, nil
			}
			elts, err := p.parseSeqTail(first, "]")
			if err != nil {
				return nil, err
			}
			return &node{kind: nList, elts: elts, line: t.line}, nil
		case "{":
			return p.parseBrace()
		}
	}
	return nil, p.invalid()
}

// parseComp parses the "for ... in ... [if ...]" clauses of a comprehension
// and the closing bracket.
func (p *parser) parseComp(closer string) *LiteralError {
	for p.isName("for") || p.isName("async") {
		if p.isName("async") {
			p.next()
		}
		if !p.isName("for") {
			return p.invalid()
		}
		p.next()
		for !p.isName("in") {
			if p.isOp(",") || p.isOp("*") {
				p.next()
				continue
			}
			if _, err := p.parseBin(0); err != nil {
				return err
			}
			if !p.isName("in") && !p.isOp(",") {
				return p.invalid()
			}
		}
		p.next()
		if _, err := p.parseOr(); err != nil {
			return err
		}
		for p.isName("if") {
			p.next()
			if _, err := p.parseOr(); err != nil {
				return err
			}
		}
	}
	if !p.isOp(closer) {
		return p.invalid()
	}
	p.next()
	return nil
}

// parseSeqTail parses ", expr ..." up to the closing bracket.
func (p *parser) parseSeqTail(first *node, closer string) ([]*node, *LiteralError) {
	elts := []*node{first}
	for {
		if p.isOp(closer) {
			p.next()
			return elts, nil
		}
		if !p.isOp(",") {
			if err := p.checkAdjacent(elts[len(elts)-1]); err != nil {
				return nil, err
			}
			return nil, p.invalid()
		}
		p.next()
		if p.isOp(closer) {
			p.next()
			return elts, nil
		}
		e, err := p.parseStarOrExpr()
		if err != nil {
			return nil, err
		}
		elts = append(elts, e)
	}
}

func (p *parser) parseBrace() (*node, *LiteralError) {
	open := p.next()
	if p.isOp("}") {
		p.next()
		return &node{kind: nDict, line: open.line}, nil
	}
	// First item decides dict or set.
	isDict := false
	var keys, vals, elts []*node
	parseDictItem := func() *LiteralError {
		if p.isOp("**") {
			p.next()
			v, err := p.parseBin(0)
			if err != nil {
				return err
			}
			keys = append(keys, nil)
			vals = append(vals, v)
			return nil
		}
		k, err := p.parseExpr()
		if err != nil {
			return err
		}
		if !p.isOp(":") {
			if p.peek().kind == tErr {
				return p.soft.err
			}
			if len(keys) > 0 {
				return syntaxErr(k.line, "':' expected after dictionary key")
			}
			if err := p.checkAdjacent(k); err != nil {
				return err
			}
			return p.invalid()
		}
		colon := p.next()
		if p.isOp("}") || p.isOp(",") {
			return syntaxErr(colon.line, "expression expected after dictionary key and ':'")
		}
		v, err := p.parseExpr()
		if err != nil {
			return err
		}
		keys = append(keys, k)
		vals = append(vals, v)
		return nil
	}
	if p.isOp("**") {
		isDict = true
		if err := parseDictItem(); err != nil {
			return nil, err
		}
	} else {
		first, err := p.parseStarOrExpr()
		if err != nil {
			return nil, err
		}
		if p.isOp(":") && !(first.kind == nOther && first.name == "Starred") {
			isDict = true
			colon := p.next()
			if p.isOp("}") || p.isOp(",") {
				return nil, syntaxErr(colon.line, "expression expected after dictionary key and ':'")
			}
			v, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			if p.isName("for") || p.isName("async") {
				if err := p.parseComp("}"); err != nil {
					return nil, err
				}
				return &node{kind: nOther, name: "DictComp", line: open.line}, nil
			}
			keys = append(keys, first)
			vals = append(vals, v)
		} else {
			if p.isName("for") || p.isName("async") {
				if err := p.parseComp("}"); err != nil {
					return nil, err
				}
				return &node{kind: nOther, name: "SetComp", line: open.line}, nil
			}
			elts = append(elts, first)
		}
	}
	for {
		if p.isOp("}") {
			p.next()
			break
		}
		if !p.isOp(",") {
			var last *node
			if isDict {
				last = vals[len(vals)-1]
			} else {
				last = elts[len(elts)-1]
			}
			if err := p.checkAdjacent(last); err != nil {
				return nil, err
			}
			return nil, p.invalid()
		}
		p.next()
		if p.isOp("}") {
			p.next()
			break
		}
		if isDict {
			if err := parseDictItem(); err != nil {
				return nil, err
			}
		} else {
			e, err := p.parseStarOrExpr()
			if err != nil {
				return nil, err
			}
			elts = append(elts, e)
		}
	}
	if isDict {
		return &node{kind: nDict, keys: keys, elts: vals, line: open.line}, nil
	}
	return &node{kind: nSet, elts: elts, line: open.line}, nil
}

// parseStrings parses implicitly concatenated string literals.
func (p *parser) parseStrings() (*node, *LiteralError) {
	first := p.peek()
	var sb strings.Builder
	anyBytes, anyStr, anyF := false, false, false
	var group []token
	for p.peek().kind == tString {
		t := p.next()
		group = append(group, t)
		if t.isBytes {
			anyBytes = true
		} else {
			anyStr = true
		}
		if t.isF {
			anyF = true
		}
		sb.WriteString(t.str)
	}
	// CPython has fetched the next token before building the constant.
	look := p.peek()
	if look.kind == tErr {
		return nil, p.soft.err
	}
	if anyBytes && anyStr {
		return nil, syntaxErr(look.line, "cannot mix bytes and nonbytes literals")
	}
	for _, t := range group {
		if t.isF {
			continue
		}
		if t.asciiErr {
			return nil, syntaxErr(t.line, "bytes can only contain ASCII literal characters")
		}
		if t.decodeErr != "" {
			return nil, syntaxErr(look.line, "%s", t.decodeErr)
		}
	}
	if anyF {
		return &node{kind: nOther, name: "JoinedStr", line: first.line}, nil
	}
	if anyBytes {
		return &node{kind: nConst, val: Bytes(sb.String()), line: first.line}, nil
	}
	return &node{kind: nConst, val: sb.String(), line: first.line}, nil
}

// ---- conversion (ast.literal_eval's _convert) ----

var astNames = map[nodeKind]string{nConst: "Constant", nTuple: "Tuple", nList: "List", nSet: "Set", nDict: "Dict", nSetCall: "Call", nUnary: "UnaryOp", nBinOp: "BinOp"}

func malformed(n *node) *LiteralError {
	if n == nil {
		return &LiteralError{Type: "ValueError", Msg: "malformed node or string: None"}
	}
	name := n.name
	if n.kind != nOther {
		name = astNames[n.kind]
	}
	// Deviation: Python prints the node object's memory address; ours is fixed.
	return &LiteralError{Type: "ValueError", Msg: fmt.Sprintf("malformed node or string on line %d: <ast.%s object at 0x7f0000000000>", n.line, name)}
}

func convert(n *node) (any, *LiteralError) {
	if n == nil {
		return nil, malformed(nil)
	}
	switch n.kind {
	case nConst:
		return n.val, nil
	case nTuple, nList:
		out := make([]any, 0, len(n.elts))
		for _, e := range n.elts {
			v, err := convert(e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if n.kind == nTuple {
			return Tuple(out), nil
		}
		return out, nil
	case nSet:
		var out Set
		seen := map[string]bool{}
		for _, e := range n.elts {
			v, err := convert(e)
			if err != nil {
				return nil, err
			}
			if err := hashable(v); err != nil {
				return nil, err
			}
			if k := hashKey(v); !seen[k] {
				seen[k] = true
				out = append(out, v)
			}
		}
		if out == nil {
			out = Set{}
		}
		return out, nil
	case nSetCall:
		return Set{}, nil
	case nDict:
		d := &Dict{}
		index := map[string]int{}
		for i := range n.keys {
			k, err := convert(n.keys[i])
			if err != nil {
				return nil, err
			}
			v, err := convert(n.elts[i])
			if err != nil {
				return nil, err
			}
			if err := hashable(k); err != nil {
				return nil, err
			}
			if j, ok := index[hashKey(k)]; ok {
				d.Values[j] = v
			} else {
				index[hashKey(k)] = len(d.Keys)
				d.Keys = append(d.Keys, k)
				d.Values = append(d.Values, v)
			}
		}
		return d, nil
	case nBinOp:
		if n.op == "+" || n.op == "-" {
			left, err := convertSignedNum(n.left)
			if err != nil {
				return nil, err
			}
			right, err := convertNum(n.right)
			if err != nil {
				return nil, err
			}
			if c, ok := right.(complex128); ok {
				var l complex128
				switch x := left.(type) {
				case int64:
					l = complex(float64(x), 0)
				case *big.Int:
					f, _ := new(big.Float).SetInt(x).Float64()
					l = complex(f, 0)
				case float64:
					l = complex(x, 0)
				default:
					return nil, malformed(n)
				}
				if n.op == "+" {
					return complexAdd(l, c), nil
				}
				return complexSub(l, c), nil
			}
		}
	}
	return convertSignedNum(n)
}

// complexAdd adds a real-valued left operand to c as Python does: the real
// parts add, and the imaginary part is c's (0.0 + x keeps signs as IEEE).
func complexAdd(l, c complex128) complex128 {
	return complex(real(l)+real(c), imag(l)+imag(c))
}

func complexSub(l, c complex128) complex128 {
	return complex(real(l)-real(c), imag(l)-imag(c))
}

func convertNum(n *node) (any, *LiteralError) {
	if n == nil || n.kind != nConst || n.isBool {
		return nil, malformed(n)
	}
	switch n.val.(type) {
	case int64, *big.Int, float64, complex128:
		return n.val, nil
	}
	return nil, malformed(n)
}

func convertSignedNum(n *node) (any, *LiteralError) {
	if n != nil && n.kind == nUnary && (n.op == "+" || n.op == "-") {
		v, err := convertNum(n.left)
		if err != nil {
			return nil, err
		}
		if n.op == "+" {
			return v, nil
		}
		switch x := v.(type) {
		case int64:
			if x == math.MinInt64 {
				return new(big.Int).Neg(big.NewInt(x)), nil
			}
			return -x, nil
		case *big.Int:
			return normInt(new(big.Int).Neg(x)), nil
		case float64:
			return -x, nil
		case complex128:
			return complex(-real(x), -imag(x)), nil
		}
	}
	return convertNum(n)
}

// hashable returns Python's TypeError for values that cannot be dict keys or
// set members.
func hashable(v any) *LiteralError {
	switch x := v.(type) {
	case []any:
		return &LiteralError{Type: "TypeError", Msg: "unhashable type: 'list'"}
	case *Dict:
		return &LiteralError{Type: "TypeError", Msg: "unhashable type: 'dict'"}
	case Set:
		return &LiteralError{Type: "TypeError", Msg: "unhashable type: 'set'"}
	case Tuple:
		for _, e := range x {
			if err := hashable(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// numeric returns v as a complex number when it is a Python number (bool
// included, as Python compares True == 1).
func numeric(v any) (complex128, *big.Int, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, nil, true
		}
		return 0, nil, true
	case int64:
		return complex(float64(x), 0), big.NewInt(x), true
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return complex(f, 0), x, true
	case float64:
		return complex(x, 0), nil, true
	case complex128:
		return x, nil, true
	}
	return 0, nil, false
}

// hashKey returns a string that is equal for two hashable literal values
// exactly when Python's == holds (1 == 1.0 == True, 0 == -0.0 == False),
// so that dict keys and set members de-duplicate as in Python.
func hashKey(v any) string {
	switch x := v.(type) {
	case nil:
		return "N"
	case Ellipsis:
		return "E"
	case string:
		return "s" + x
	case Bytes:
		return "b" + string(x)
	case Tuple:
		var b strings.Builder
		b.WriteString("t(")
		for _, e := range x {
			k := hashKey(e)
			b.WriteString(strconv.Itoa(len(k)))
			b.WriteByte(':')
			b.WriteString(k)
		}
		b.WriteByte(')')
		return b.String()
	}
	c, bi, ok := numeric(v)
	if !ok {
		return fmt.Sprintf("?%T%v", v, v)
	}
	if bi != nil {
		return "n" + bi.String()
	}
	if imag(c) != 0 {
		return "c" + strconv.FormatFloat(real(c), 'g', -1, 64) + "," + strconv.FormatFloat(imag(c), 'g', -1, 64)
	}
	f := real(c)
	if f == math.Trunc(f) && !math.IsInf(f, 0) {
		bf, _ := new(big.Float).SetFloat64(f).Int(nil)
		return "n" + bf.String()
	}
	return "f" + strconv.FormatFloat(f, 'g', -1, 64)
}

// pyEqual is Python's == for hashable literal values.
func pyEqual(a, b any) bool {
	ca, ia, okA := numeric(a)
	cb, ib, okB := numeric(b)
	if okA || okB {
		if !(okA && okB) {
			return false
		}
		if ia != nil && ib != nil {
			return ia.Cmp(ib) == 0
		}
		if ia != nil || ib != nil {
			// int vs float: exact comparison through big.Float.
			bi := ia
			c := cb
			if bi == nil {
				bi, c = ib, ca
			}
			if imag(c) != 0 || math.IsInf(real(c), 0) || math.IsNaN(real(c)) {
				return false
			}
			return new(big.Float).SetInt(bi).Cmp(big.NewFloat(real(c))) == 0
		}
		return ca == cb
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case Bytes:
		y, ok := b.(Bytes)
		return ok && x == y
	case Ellipsis:
		_, ok := b.(Ellipsis)
		return ok
	case Tuple:
		y, ok := b.(Tuple)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false
}
