package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Entry is one assignment read from a configuration file. Value holds the
// text after the separator, trimmed, with one pair of matching outer quotes
// removed and continuation lines joined with "\n", exactly as oslo.config's
// parser hands it to option types. No substitution has been applied yet.
type Entry struct {
	// Section is the section name as written in the file.
	Section string
	// Group is Section normalised the oslo.config way: lower-cased, except
	// that "DEFAULT" stays upper-case.
	Group string
	Key   string
	Value string
	File  string
	// Line is the 1-based line number of the key.
	Line int
}

// File is a parsed configuration file: its assignments in file order and the
// sections it opened (including empty ones).
type File struct {
	Name     string
	Entries  []Entry
	Sections []string
}

// ParseError is a malformed line in a configuration file.
type ParseError struct {
	File string
	Line int
	Msg  string
	// Text is the offending line, kept only for section headers: any other
	// malformed line may be part of a secret ("password hunter2", a
	// continued PEM block), so it is never shown.
	Text string
}

// Error renders "file:line: message: 'text'".
func (e *ParseError) Error() string {
	if e.Text == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %q", e.File, e.Line, e.Msg, e.Text)
}

// ErrParse is matched (errors.Is) by every *ParseError.
var ErrParse = errors.New("malformed configuration file")

// Is lets errors.Is(err, ErrParse) match.
func (e *ParseError) Is(target error) bool { return target == ErrParse }

// NormalizeGroup returns the group name oslo.config uses for a section
// header: "DEFAULT" is kept, every other name is lower-cased.
func NormalizeGroup(section string) string {
	if section == "DEFAULT" {
		return section
	}
	return strings.ToLower(section)
}

// isPySpace reports whether r is whitespace for Python's str.strip(), which
// also counts the ASCII information separators 0x1c-0x1f.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

func pyStrip(s string) string  { return strings.TrimFunc(s, isPySpace) }
func pyRStrip(s string) string { return strings.TrimRightFunc(s, isPySpace) }
func pyLStrip(s string) string { return strings.TrimLeftFunc(s, isPySpace) }

// splitLines splits like Python's text-mode readlines with universal
// newlines: "\n", "\r\n" and a lone "\r" all end a line.
func splitLines(s string) []string {
	var lines []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return lines
}

// ParseINI parses one configuration file the way oslo.config's iniparser and
// ConfigParser do:
//
//   - lines are right-trimmed; a blank line ends a multi-line value;
//   - a line starting with a space or a tab continues the previous value
//     (the continuation is left-trimmed and joined with "\n"); with no value
//     pending it is an error;
//   - "[name]" opens a section ("[]" and a missing "]" are errors; the name
//     is not trimmed);
//   - a line starting with '#' or ';' is a comment; there are no inline
//     comments ("a = b # c" sets a to "b # c");
//   - anything else is "key = value" or "key: value", split at whichever of
//     '=' and ':' comes first; key and value are trimmed and one pair of
//     matching outer quotes (" or ') is removed from the value;
//   - an assignment before the first section is an error.
//
// name is used in error messages and recorded in each Entry.
func ParseINI(name string, data []byte) (*File, error) {
	if !utf8.Valid(data) {
		return nil, &ParseError{File: name, Line: 1 + strings.Count(string(data[:firstInvalidUTF8(data)]), "\n"), Msg: "invalid UTF-8"}
	}
	f := &File{Name: name}
	var (
		section    string
		inSection  bool
		pending    bool
		pendingKey string
		pendingLn  int
		value      []string
	)
	flush := func() error {
		if !pending {
			return nil
		}
		pending = false
		if !inSection {
			return &ParseError{File: name, Line: pendingLn, Msg: "section must be started before assignment: " + strconv.Quote(pendingKey)}
		}
		f.Entries = append(f.Entries, Entry{
			Section: section,
			Group:   NormalizeGroup(section),
			Key:     pendingKey,
			Value:   strings.Join(value, "\n"),
			File:    name,
			Line:    pendingLn,
		})
		value = nil
		return nil
	}
	for i, raw := range splitLines(string(data)) {
		lineno := i + 1
		line := pyRStrip(raw)
		switch {
		case line == "":
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		case line[0] == ' ' || line[0] == '\t':
			if !pending {
				return nil, &ParseError{File: name, Line: lineno, Msg: "unexpected continuation line (an indented line must continue a value)"}
			}
			value = append(value, pyLStrip(line))
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		switch {
		case line[0] == '[':
			if !strings.HasSuffix(line, "]") {
				return nil, &ParseError{File: name, Line: lineno, Msg: "invalid section (must end with ])", Text: line}
			}
			if utf8.RuneCountInString(line) <= 2 {
				return nil, &ParseError{File: name, Line: lineno, Msg: "empty section name", Text: line}
			}
			section = line[1 : len(line)-1]
			inSection = true
			f.Sections = append(f.Sections, section)
		case line[0] == '#' || line[0] == ';':
			// Comment.
		default:
			key, val, ok := splitKeyValue(line)
			if !ok {
				return nil, &ParseError{File: name, Line: lineno, Msg: "no ':' or '=' found in assignment"}
			}
			if key == "" {
				return nil, &ParseError{File: name, Line: lineno, Msg: "key cannot be empty"}
			}
			pending, pendingKey, pendingLn, value = true, key, lineno, []string{val}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return f, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// splitKeyValue splits at the first '=' or ':' (whichever comes first), trims
// both sides and removes one pair of matching outer quotes from the value.
func splitKeyValue(line string) (key, value string, ok bool) {
	i := strings.IndexAny(line, "=:")
	if i < 0 {
		return "", "", false
	}
	key, value = pyStrip(line[:i]), pyStrip(line[i+1:])
	if value != "" && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		if len(value) == 1 {
			value = ""
		} else {
			value = value[1 : len(value)-1]
		}
	}
	return key, value, true
}
