package microversion

import (
	"fmt"
	"strconv"
	"strings"
)

// Header names used for version negotiation.
const (
	// HeaderName is the request and response header carrying the version.
	HeaderName = "OpenStack-API-Version"
	// MinHeaderName is the response header with the lowest supported version.
	MinHeaderName = "OpenStack-API-Minimum-Version"
	// MaxHeaderName is the response header with the highest supported version.
	MaxHeaderName = "OpenStack-API-Maximum-Version"
	// ServiceName is the service type written in every response header,
	// whatever name the client used.
	ServiceName = "container-infrastructure-management"
)

// ServiceNames are the service types accepted in a request header
// (case-sensitive, magnum/api/controllers/versions.py:58).
var ServiceNames = [...]string{
	"container-infrastructure-management",
	"container-infrastructure",
	"container-infra",
}

// Version is a (major, minor) microversion. Values too large for an int are
// saturated; String still returns the digits the client sent (normalised),
// so that out-of-range requests are echoed exactly as Magnum echoes them.
type Version struct {
	Major, Minor int
	// text is the normalised "major.minor" when a component did not fit in
	// an int; empty otherwise.
	text string
}

// Supported range and defaults.
var (
	// Min is the lowest supported microversion (BASE_VER).
	Min = Version{Major: 1, Minor: 1}
	// Max is the highest supported microversion (CURRENT_MAX_VER); "latest"
	// resolves to it.
	Max = Version{Major: 1, Minor: 14}
	// Default is used when the request has no OpenStack-API-Version header.
	Default = Min
)

// New returns the version major.minor.
func New(major, minor int) Version { return Version{Major: major, Minor: minor} }

// MustParseVersion parses "X.Y" (plain decimal) and panics on error; it is
// meant for route tables built at start-up.
func MustParseVersion(s string) Version {
	maj, min, ok := strings.Cut(s, ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil {
		panic(fmt.Sprintf("microversion: bad version literal %q", s))
	}
	return Version{Major: a, Minor: b}
}

// String returns "major.minor" with Python's int formatting (no leading
// zeros, no plus sign).
func (v Version) String() string {
	if v.text != "" {
		return v.text
	}
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
}

// HeaderValue returns the value of the OpenStack-API-Version response header
// for v: always the long service name.
func (v Version) HeaderValue() string { return ServiceName + " " + v.String() }

// Compare returns -1, 0 or +1 comparing v and o numerically on (major, minor).
func (v Version) Compare(o Version) int {
	switch {
	case v.Major < o.Major:
		return -1
	case v.Major > o.Major:
		return 1
	case v.Minor < o.Minor:
		return -1
	case v.Minor > o.Minor:
		return 1
	}
	return 0
}

// Less reports whether v < o.
func (v Version) Less(o Version) bool { return v.Compare(o) < 0 }

// AtLeast reports whether v >= o.
func (v Version) AtLeast(o Version) bool { return v.Compare(o) >= 0 }

// Between reports whether lo <= v <= hi. A zero bound is open.
func (v Version) Between(lo, hi Version) bool {
	if lo != (Version{}) && v.Less(lo) {
		return false
	}
	if hi != (Version{}) && hi.Less(v) {
		return false
	}
	return true
}

// IsZero reports whether v is the zero Version.
func (v Version) IsZero() bool { return v == Version{} }

// HeaderError is a malformed OpenStack-API-Version header: Magnum answers a
// plain WebOb 406 whose JSON description is Detail, without version headers.
type HeaderError struct {
	// Detail is "Invalid service type for OpenStack-API-Version header" or
	// "Invalid value for OpenStack-API-Version header".
	Detail string
}

func (e *HeaderError) Error() string { return e.Detail }

// Messages of HeaderError.
const (
	msgInvalidService = "Invalid service type for " + HeaderName + " header"
	msgInvalidValue   = "Invalid value for " + HeaderName + " header"
)

// RangeError is a well-formed version outside Min..Max: Magnum answers the
// magnum.microversion-unsupported 406 and keeps the version headers, echoing
// the requested version.
type RangeError struct {
	// Requested is the version the client asked for.
	Requested Version
	// MajorMismatch is true when the major version is not 1.
	MajorMismatch bool
}

func (e *RangeError) Error() string { return e.Message() }

// Message is the description Magnum puts in the 406 body (including the
// missing space after "service." in the major-mismatch case).
func (e *RangeError) Message() string {
	rng := "[" + Min.HeaderValue() + ", " + Max.HeaderValue() + "]."
	if e.MajorMismatch {
		return "Mutually exclusive versions requested. Version " + e.Requested.String() +
			" requested but not supported by this service.The supported version range is: " + rng
	}
	return "Version " + e.Requested.String() +
		" was requested but the minor version is not supported by this service. " +
		"The supported version range is: " + rng
}

// Parse returns the version requested by the header values (as given by
// http.Header.Values; nil or empty means absent). It returns a *HeaderError
// when the value is malformed. The result may still be out of range: call
// Check.
//
// Magnum: versions.py:89-121. The value is split on whitespace into exactly
// two tokens; "latest" (any case) replaces both tokens, so the service is
// not checked then; the service must be one of ServiceNames; the version must
// be two Python ints separated by a dot.
func Parse(values []string) (Version, error) {
	if len(values) == 0 {
		return Default, nil
	}
	// A repeated header is joined by the WSGI server with commas.
	raw := values[0]
	if len(values) > 1 {
		raw = strings.Join(values, ",")
	}
	service, ver, ok := twoFields(raw)
	if !ok {
		return Version{}, &HeaderError{Detail: msgInvalidService}
	}
	if asciiLowerEqual(ver, "latest") {
		return Max, nil
	}
	if !knownService(service) {
		return Version{}, &HeaderError{Detail: msgInvalidService}
	}
	maj, min, ok := strings.Cut(ver, ".")
	if !ok || strings.Contains(min, ".") {
		return Version{}, &HeaderError{Detail: msgInvalidValue}
	}
	a, at, ok1 := pyInt(maj)
	b, bt, ok2 := pyInt(min)
	if !ok1 || !ok2 {
		return Version{}, &HeaderError{Detail: msgInvalidValue}
	}
	v := Version{Major: a, Minor: b}
	if at != "" || bt != "" {
		v.text = at + "." + bt
		if at == "" {
			v.text = strconv.Itoa(a) + "." + bt
		} else if bt == "" {
			v.text = at + "." + strconv.Itoa(b)
		}
	}
	return v, nil
}

// Check returns a *RangeError when v is outside Min..Max.
//
// Magnum: v1/__init__.py:199-223 (major first, then the range).
func Check(v Version) error {
	if v.Major != Min.Major {
		return &RangeError{Requested: v, MajorMismatch: true}
	}
	if v.Less(Min) || Max.Less(v) {
		return &RangeError{Requested: v}
	}
	return nil
}

func knownService(s string) bool {
	for _, n := range ServiceNames {
		if s == n {
			return true
		}
	}
	return false
}

// isPySpace reports whether the byte, read as a Latin-1 character (WSGI
// decodes header bytes as Latin-1), is whitespace for Python's str.split().
func isPySpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0:
		return true
	}
	return false
}

// twoFields splits s on runs of Python whitespace and reports whether there
// are exactly two fields.
func twoFields(s string) (a, b string, ok bool) {
	var fields [2]string
	n := 0
	i := 0
	for i < len(s) {
		for i < len(s) && isPySpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && !isPySpace(s[j]) {
			j++
		}
		if n == 2 {
			return "", "", false
		}
		fields[n] = s[i:j]
		n++
		i = j
	}
	if n != 2 {
		return "", "", false
	}
	return fields[0], fields[1], true
}

func asciiLowerEqual(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// pyMaxDigits is CPython's default int_max_str_digits: longer decimal
// strings make int() raise ValueError.
const pyMaxDigits = 4300

// pyInt parses s as Python's int(s) would for a token without whitespace:
// optional sign, ASCII digits with single underscores between digits,
// leading zeros allowed. It returns the value (saturated) and, when the value
// does not fit in an int, its normalised decimal text.
func pyInt(s string) (int, string, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' {
		return 0, "", false
	}
	digits := make([]byte, 0, len(s))
	prevUnderscore := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_':
			if prevUnderscore {
				return 0, "", false
			}
			prevUnderscore = true
			continue
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		default:
			return 0, "", false
		}
		prevUnderscore = false
	}
	if len(digits) > pyMaxDigits {
		return 0, "", false
	}
	// Normalise: strip leading zeros.
	k := 0
	for k < len(digits)-1 && digits[k] == '0' {
		k++
	}
	digits = digits[k:]
	if len(digits) == 1 && digits[0] == '0' {
		neg = false
	}
	n, err := strconv.Atoi(string(digits))
	if err != nil {
		text := string(digits)
		if neg {
			return minInt, "-" + text, true
		}
		return maxInt, text, true
	}
	if neg {
		n = -n
	}
	return n, "", true
}

const (
	maxInt = int(^uint(0) >> 1)
	minInt = -maxInt - 1
)
