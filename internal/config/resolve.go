package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

type optKey struct{ group, name string }

func (k optKey) String() string { return "[" + k.group + "]/" + k.name }

// ValueError is a value that does not fit its option's type or constraints.
type ValueError struct {
	Group, Name string
	// Reason says what is wrong; it quotes the value unless the option is
	// secret.
	Reason string
	// File and Line locate the value; empty for a default.
	File string
	Line int
}

// Error renders `invalid value for [group]/name: reason (file:line)`.
func (e *ValueError) Error() string {
	msg := fmt.Sprintf("invalid value for [%s]/%s: %s", e.Group, e.Name, e.Reason)
	if e.File != "" {
		msg += fmt.Sprintf(" (%s:%d)", e.File, e.Line)
	}
	return msg
}

// resolver merges the entries of several files and turns them into typed
// values on demand, applying "$var" substitution the way oslo.config does.
type resolver struct {
	defs   map[optKey]*optDef
	known  map[optKey]*knownOption
	alias  map[optKey]aliasOf // deprecated name -> current name
	groups map[string]bool
	// mu serialises lookups after Load: they fill cache and busy, and the
	// options are shared by concurrent requests.
	mu      sync.Mutex
	entries map[optKey][]rawEntry // by current name
	files   int                   // number of files added
	cache   map[optKey]any
	busy    map[optKey]bool
}

func newResolver(defs []*optDef) *resolver {
	r := &resolver{
		defs:    map[optKey]*optDef{},
		known:   map[optKey]*knownOption{},
		alias:   map[optKey]aliasOf{},
		groups:  map[string]bool{},
		entries: map[optKey][]rawEntry{},
		cache:   map[optKey]any{},
		busy:    map[optKey]bool{},
	}
	for _, d := range defs {
		k := optKey{d.group, d.name}
		r.defs[k] = d
		r.groups[d.group] = true
		for i, old := range d.deprecated {
			r.alias[optKey{d.group, old}] = aliasOf{k, i + 1}
		}
	}
	for i := range knownOptions {
		ko := &knownOptions[i]
		k := optKey{ko.group, ko.name}
		r.groups[ko.group] = true
		if _, modelled := r.defs[k]; !modelled {
			r.known[k] = ko
		}
		for i, dep := range ko.deprecated {
			g, n, _ := strings.Cut(dep, "/")
			if _, ok := r.alias[optKey{g, n}]; !ok {
				r.alias[optKey{g, n}] = aliasOf{k, i + 1}
			}
		}
	}
	return r
}

// aliasOf is the current name of a deprecated one, and the deprecated
// name's rank (1 for the first deprecated name).
type aliasOf struct {
	cur  optKey
	rank int
}

// rawEntry is an entry with the file it came from (1-based load order) and
// the rank of the name it used (0 for the current name).
type rawEntry struct {
	Entry
	file, rank int
}

// effective returns the entries that count for option k, in load order.
// As oslo.config does, within one file only the best-ranked name present
// counts (the current name over deprecated ones), so a file setting both
// uses the current name's values.
func (r *resolver) effective(k optKey) []Entry {
	raw := r.entries[k]
	var out []Entry
	for i := 0; i < len(raw); {
		j, best := i, raw[i].rank
		for j < len(raw) && raw[j].file == raw[i].file {
			best = min(best, raw[j].rank)
			j++
		}
		for _, e := range raw[i:j] {
			if e.rank == best {
				out = append(out, e.Entry)
			}
		}
		i = j
	}
	return out
}

// add records the entries of f in order and returns warnings for unknown
// groups and options, deprecated names and ignored options.
func (r *resolver) add(f *File, seenGroups map[string]bool) []string {
	var warnings []string
	r.files++
	for _, e := range f.Entries {
		k := optKey{e.Group, e.Key}
		rank := 0
		if a, ok := r.alias[k]; ok {
			warnings = append(warnings, fmt.Sprintf("%s:%d: option %s is deprecated, use %s", e.File, e.Line, k, a.cur))
			k, rank = a.cur, a.rank
		}
		r.entries[k] = append(r.entries[k], rawEntry{Entry: e, file: r.files, rank: rank})
		switch {
		case r.defs[k] != nil:
			if reason := r.defs[k].ignored; reason != "" {
				warnings = append(warnings, fmt.Sprintf("%s:%d: option %s is ignored: %s", e.File, e.Line, k, reason))
			}
		case r.known[k] != nil:
		case !r.groups[k.group]:
			if !seenGroups[k.group] {
				seenGroups[k.group] = true
				warnings = append(warnings, fmt.Sprintf("%s:%d: unknown group [%s]", e.File, e.Line, k.group))
			}
		default:
			warnings = append(warnings, fmt.Sprintf("%s:%d: unknown option %s", e.File, e.Line, k))
		}
	}
	return warnings
}

// typed returns the converted value of a modelled option: from the files
// if set, else its default (nil for none).
func (r *resolver) typed(k optKey) (any, error) {
	if v, ok := r.cache[k]; ok {
		return v, nil
	}
	d := r.defs[k]
	if r.busy[k] {
		return nil, &ValueError{Group: k.group, Name: k.name, Reason: "template substitution error: recursive reference"}
	}
	r.busy[k] = true
	defer delete(r.busy, k)

	entries := r.effective(k)
	var (
		v   any
		err error
	)
	switch {
	case len(entries) == 0 && d.def == none:
		v = nil
	case len(entries) == 0 && d.kind == kindMulti && d.def == "":
		v = []string{}
	case len(entries) == 0:
		// oslo.config substitutes defaults too.
		def, serr := r.substitute(d.def, k.group)
		if serr != nil {
			return nil, &ValueError{Group: k.group, Name: k.name, Reason: "default: " + serr.Error()}
		}
		v, err = convert(d, def)
	case d.kind == kindMulti:
		vals := make([]string, 0, len(entries))
		for _, e := range entries {
			s, serr := r.substitute(e.Value, k.group)
			if serr != nil {
				return nil, r.substError(k, e, serr)
			}
			vals = append(vals, s)
		}
		v = vals
	default:
		e := entries[len(entries)-1]
		s, serr := r.substitute(e.Value, k.group)
		if serr != nil {
			return nil, r.substError(k, e, serr)
		}
		v, err = convert(d, s)
		if err != nil {
			return nil, &ValueError{Group: k.group, Name: k.name, Reason: err.Error(), File: e.File, Line: e.Line}
		}
	}
	if err != nil {
		return nil, &ValueError{Group: k.group, Name: k.name, Reason: "bad default: " + err.Error()}
	}
	r.cache[k] = v
	return v, nil
}

// substError reports a failed substitution in entry e of option k; when the
// failure is a bad value of the referenced option, that error is returned
// as is, naming the option at fault.
// A secret value's error does not repeat the placeholder, which is part of
// the secret.
func (r *resolver) substError(k optKey, e Entry, err error) error {
	var ve *ValueError
	if errors.As(err, &ve) {
		return ve
	}
	reason := err.Error()
	if d := r.defs[k]; d != nil && d.secret {
		reason = "template substitution error in a secret value (write $$ for a literal $)"
	}
	return &ValueError{Group: k.group, Name: k.name, Reason: reason, File: e.File, Line: e.Line}
}

// text returns an option's value as the string oslo.config substitutes for
// "$name": str() of the typed value for modelled options, the raw value (or
// the sample default) for the others.
func (r *resolver) text(k optKey) (string, error) {
	if r.defs[k] != nil {
		v, err := r.typed(k)
		if err != nil {
			return "", err
		}
		return pyStr(v), nil
	}
	if s, ok := r.cache[k].(string); ok {
		return s, nil
	}
	if r.busy[k] {
		return "", fmt.Errorf("template substitution error: recursive reference to %s", k)
	}
	r.busy[k] = true
	defer delete(r.busy, k)
	raw := r.known[k].def
	if es := r.effective(k); len(es) > 0 {
		raw = es[len(es)-1].Value
	} else if raw == "<None>" {
		raw = ""
	}
	s, err := r.substitute(raw, k.group)
	if err != nil {
		return "", err
	}
	r.cache[k] = s
	return s, nil
}

func (r *resolver) has(k optKey) bool { return r.defs[k] != nil || r.known[k] != nil }

// reference resolves the name of a "$name" or "${name}" placeholder seen in
// group: "group.option" names another group; a plain name is looked up in
// the current group, then in [DEFAULT].
func (r *resolver) reference(name, group string) (string, error) {
	if g, o, ok := strings.Cut(name, "."); ok {
		// Deviation: oslo.config has no group named "DEFAULT" for
		// "${DEFAULT.x}" and fails; here it names [DEFAULT].
		if !r.groups[g] {
			return "", fmt.Errorf("template substitution error: no such group [%s]", g)
		}
		if k := (optKey{g, o}); r.has(k) {
			return r.text(k)
		}
		if k := (optKey{"DEFAULT", name}); r.has(k) {
			return r.text(k)
		}
		return "", fmt.Errorf("template substitution error: no such option %s in group [%s]", o, g)
	}
	if k := (optKey{group, name}); r.has(k) {
		return r.text(k)
	}
	if k := (optKey{"DEFAULT", name}); r.has(k) {
		return r.text(k)
	}
	return "", fmt.Errorf("template substitution error: no such option %s in group [%s]", name, group)
}

// maxValueLen bounds a value after substitution, so that options
// referencing each other several times cannot grow without limit.
const maxValueLen = 1 << 16

var errValueTooLong = fmt.Errorf("template substitution error: value longer than %d bytes after substitution", maxValueLen)

func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c == '.' || (c >= '0' && c <= '9') }

// substitute applies Python's string.Template.safe_substitute with
// oslo.config's identifier pattern ([_a-z][._a-z0-9]*, case-insensitive):
// "$$" (or "\$") is a literal '$', "$name" and "${name}" are replaced, and a
// '$' starting neither is kept as is. An unknown name is an error, as in
// oslo.config.
func (r *resolver) substitute(s, group string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	s = strings.ReplaceAll(s, `\$`, "$$")
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			if b.Len()+len(s) > maxValueLen {
				return "", errValueTooLong
			}
			b.WriteString(s)
			return b.String(), nil
		}
		if b.Len()+i > maxValueLen {
			return "", errValueTooLong
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		switch {
		case s != "" && s[0] == '$':
			b.WriteByte('$')
			s = s[1:]
		case s != "" && isIdentStart(s[0]):
			j := 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			v, err := r.reference(s[:j], group)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			s = s[j:]
		case len(s) > 1 && s[0] == '{' && isIdentStart(s[1]):
			j := 2
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			if j < len(s) && s[j] == '}' {
				v, err := r.reference(s[1:j], group)
				if err != nil {
					return "", err
				}
				b.WriteString(v)
				s = s[j+1:]
				continue
			}
			b.WriteByte('$')
		default:
			b.WriteByte('$')
		}
	}
}

// lookup returns the last value set for group/name, substituted when
// possible.
func (r *resolver) lookup(group, name string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := optKey{group, name}
	if a, ok := r.alias[k]; ok {
		k = a.cur
	}
	es := r.effective(k)
	if len(es) == 0 {
		return "", false
	}
	raw := es[len(es)-1].Value
	if s, err := r.substitute(raw, group); err == nil {
		return s, true
	}
	return raw, true
}

func (r *resolver) lookupAll(group, name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := optKey{group, name}
	if a, ok := r.alias[k]; ok {
		k = a.cur
	}
	var out []string
	for _, e := range r.effective(k) {
		s, err := r.substitute(e.Value, group)
		if err != nil {
			s = e.Value
		}
		out = append(out, s)
	}
	return out
}

// convert turns a (substituted) value into the option's Go type.
func convert(d *optDef, s string) (any, error) {
	show := fmt.Sprintf("%q", s)
	if d.secret {
		show = "the value"
	}
	switch d.kind {
	case kindString:
		if len(d.choices) > 0 && !slices.Contains(d.choices, s) {
			return nil, fmt.Errorf("%s is not one of: %s", show, strings.Join(d.choices, ", "))
		}
		return s, nil
	case kindInt, kindPort:
		if pyStrip(s) == "" {
			// oslo.config: an empty integer is None.
			return nil, nil
		}
		n, ok := pyInt(s)
		if !ok {
			return nil, fmt.Errorf("%s is not an integer", show)
		}
		lo, hi := d.min, d.max
		if d.kind == kindPort {
			lo, hi = i64(0), i64(65535)
		}
		if lo != nil && n < *lo {
			return nil, fmt.Errorf("%d is less than the minimum %d", n, *lo)
		}
		if hi != nil && n > *hi {
			return nil, fmt.Errorf("%d is greater than the maximum %d", n, *hi)
		}
		return n, nil
	case kindFloat:
		if pyStrip(s) == "" {
			return nil, nil
		}
		f, ok := pyFloat(s)
		if !ok {
			return nil, fmt.Errorf("%s is not a number", show)
		}
		if d.min != nil && f < float64(*d.min) {
			return nil, fmt.Errorf("%s is less than the minimum %d", pyStr(f), *d.min)
		}
		if d.max != nil && f > float64(*d.max) {
			return nil, fmt.Errorf("%s is greater than the maximum %d", pyStr(f), *d.max)
		}
		return f, nil
	case kindBool:
		v, ok := pyBool(s)
		if !ok {
			return nil, fmt.Errorf("%s is not a boolean (true/false, yes/no, on/off, 1/0)", show)
		}
		return v, nil
	case kindList:
		items := splitList(s)
		if len(d.choices) > 0 {
			for _, it := range items {
				if !slices.Contains(d.choices, it) {
					return nil, fmt.Errorf("item %q is not one of: %s", it, strings.Join(d.choices, ", "))
				}
			}
		}
		return items, nil
	case kindMulti:
		return []string{s}, nil
	case kindDict:
		m, err := splitDict(s)
		if err != nil {
			if d.secret {
				return nil, errors.New("the value is not a list of key:value pairs")
			}
			return nil, err
		}
		return m, nil
	case kindIP:
		if !validIP(s) {
			return nil, fmt.Errorf("%s is not an IPv4 or IPv6 address", show)
		}
		return s, nil
	case kindHostAddress:
		if validIP(s) {
			return s, nil
		}
		h := strings.TrimSuffix(s, ".")
		if !validHostname(s) {
			return nil, fmt.Errorf("%s is not a valid IP address or host name", show)
		}
		return h, nil
	}
	return nil, fmt.Errorf("unsupported option type %v", d.kind)
}

// assign stores a converted value (nil = none) into the option's field.
func assign(d *optDef, v any) {
	switch t := d.target.(type) {
	case nil:
	case *string:
		s, _ := v.(string)
		*t = s
	case *int:
		n, _ := v.(int64)
		*t = int(n)
	case *float64:
		f, _ := v.(float64)
		*t = f
	case *bool:
		b, _ := v.(bool)
		*t = b
	case *[]string:
		l, _ := v.([]string)
		*t = l
	case *map[string]string:
		m, _ := v.(map[string]string)
		*t = m
	default:
		panic(fmt.Sprintf("config: option %s/%s has an unsupported target %T", d.group, d.name, d.target))
	}
}

// build resolves every modelled option into o; value errors are joined.
func (r *resolver) build(o *Options, defs []*optDef) error {
	var errs []error
	seen := map[string]bool{}
	for _, d := range defs {
		if d.target == nil {
			// Accepted only (an option the reference does not have): its
			// value is never used, so it is not validated either.
			continue
		}
		v, err := r.typed(optKey{d.group, d.name})
		if err != nil {
			if !seen[err.Error()] {
				seen[err.Error()] = true
				errs = append(errs, err)
			}
			continue
		}
		assign(d, v)
	}
	o.raw = r
	return errors.Join(errs...)
}
