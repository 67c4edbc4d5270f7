package api

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/openkeel/openkeel-magnum/internal/api/jsonpatch"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// wsBody is a JSON object request body decoded the way WSME sees it: keys
// in document order (Python dicts keep it and Magnum's messages show it),
// integers as int64 or *big.Int, other numbers as float64.
type wsBody struct {
	// arg is the handler's body argument ("nodegroup", "quota", ...).
	arg  string
	dict *jsonpatch.Dict
}

// readWSBody reads the body of a create/update handler: absent → 400
// Missing argument; not an object → 400.
func readWSBody(r *http.Request, arg string) (*wsBody, error) {
	raw, err := RequireBody(r)
	if err != nil {
		return nil, err
	}
	v, err := jsonpatch.DecodeOrdered(raw)
	if err != nil {
		return nil, magnum.InvalidJSONBody()
	}
	d, ok := v.(*jsonpatch.Dict)
	if !ok {
		return nil, magnum.InvalidInput(arg, v, "Value not a valid dict: "+magnum.PyStr(v))
	}
	return &wsBody{arg: arg, dict: d}, nil
}

// has reports whether the body sets name (a JSON null counts: it sets the
// attribute to None).
func (b *wsBody) has(name string) bool {
	_, ok := b.dict.Get(name)
	return ok
}

// get returns the value of name (nil when absent or null).
func (b *wsBody) get(name string) any {
	v, _ := b.dict.Get(name)
	return v
}

// keys returns the body's keys in document order.
func (b *wsBody) keys() []string {
	out := make([]string, 0, len(b.dict.Keys))
	for _, k := range b.dict.Keys {
		out = append(out, k.(string))
	}
	return out
}

// checkAttributes refuses keys that are not attributes of the type (WSME
// checks them before converting any value).
func (b *wsBody) checkAttributes(attrs []string) error {
	var unknown []string
	for _, k := range b.keys() {
		if !wsStringIn(attrs, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return magnum.UnknownAttribute(b.arg, unknown)
	}
	return nil
}

// readonly refuses a read-only attribute the body sets; WSME checks each
// attribute in declaration order, so callers call it at that position.
func (b *wsBody) readonly(names ...string) error {
	for _, k := range names {
		if b.has(k) {
			return magnum.ReadOnlyField(k, b.get(k))
		}
	}
	return nil
}

// optInt converts an IntegerType attribute: absent or null → nil; Python
// int() of the value (a failure names the body argument and shows the whole
// body), then the bounds.
func (b *wsBody) optInt(name string, rng magnum.IntegerRange) (*int, error) {
	v := b.get(name)
	if v == nil {
		return nil, nil
	}
	n, err := magnum.ConvertInt(b.arg, b.dict, v)
	if err != nil {
		return nil, err
	}
	if err := magnum.ValidateRange(name, n, rng); err != nil {
		return nil, err
	}
	i := int(n)
	return &i, nil
}

// optString converts a StringType attribute: absent or null → nil.
func (b *wsBody) optString(name string, min, max int, pattern *regexp.Regexp, patternText string) (*string, error) {
	v := b.get(name)
	if v == nil {
		return nil, nil
	}
	s, err := magnum.ValidateString(name, v, min, max, pattern, patternText)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// optText converts a wtypes.text attribute (any string, no bounds).
func (b *wsBody) optText(name string) (*string, error) {
	return b.optString(name, 0, 0, nil, "")
}

// optBool converts a Magnum boolean attribute: JSON booleans or the strict
// oslo strings.
func (b *wsBody) optBool(name string) (*bool, error) {
	v := b.get(name)
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return &x, nil
	case string:
		if t, ok := strictBool(x); ok {
			return &t, nil
		}
	}
	// Deviation: Magnum fails with an unrenderable exception (a 500 from
	// the WSGI server); we answer 400.
	return nil, magnum.InvalidInput(name, v, "Unrecognized value '"+magnum.PyStr(v)+
		"', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'")
}

// optUUID converts a types.uuid attribute (400 "Expected a uuid but
// received <v>.").
func (b *wsBody) optUUID(name string) (*string, error) {
	v := b.get(name)
	if v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		s = magnum.PyStr(v)
	}
	if !magnum.IsUUIDLike(s) {
		return nil, magnum.InvalidUUID(s)
	}
	return &s, nil
}

// optEnum converts an Enum(text, ...) attribute.
func (b *wsBody) optEnum(name string, allowed []string) (*string, error) {
	v := b.get(name)
	if v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, magnum.NotAString(name, v)
	}
	if !wsStringIn(allowed, s) {
		return nil, magnum.InvalidEnum(name, s, allowed)
	}
	return &s, nil
}

// optStringMap converts a DictType(text, text) attribute, keeping the
// client's key order.
func (b *wsBody) optStringMap(name string) (map[string]string, []string, error) {
	v := b.get(name)
	if v == nil {
		return nil, nil, nil
	}
	d, ok := v.(*jsonpatch.Dict)
	if !ok {
		return nil, nil, magnum.InvalidInput(b.arg, b.dict, "Value not a valid dict: "+magnum.PyStr(v))
	}
	out := make(map[string]string, len(d.Keys))
	order := make([]string, 0, len(d.Keys))
	for i, k := range d.Keys {
		s, ok := d.Values[i].(string)
		if !ok {
			return nil, nil, magnum.InvalidInput(name, v, "Wrong type. Expected '<class 'str'>', got '"+magnum.PyClass(d.Values[i])+"'")
		}
		out[k.(string)] = s
		order = append(order, k.(string))
	}
	return out, order, nil
}

// optTextList converts a [text] attribute.
func (b *wsBody) optTextList(name string) ([]string, error) {
	v := b.get(name)
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, magnum.InvalidInput(b.arg, b.dict, "Value not a valid list: "+magnum.PyStr(v))
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, magnum.NotAString(name, e)
		}
		out = append(out, s)
	}
	return out, nil
}

// optLabels converts a labels attribute (values stringified as Magnum
// stores them).
func (b *wsBody) optLabels(name string) (map[string]string, error) {
	v := b.get(name)
	if v == nil {
		return nil, nil
	}
	return magnum.ValidateLabels(b.arg, b.dict, jsonpatch.Plain(v))
}

// optTaints converts a node_taints attribute ([{text: text}]).
func (b *wsBody) optTaints(name string) ([]map[string]string, error) {
	v := b.get(name)
	if v == nil {
		return nil, nil
	}
	return magnum.ValidateTaintsInput(b.arg, b.dict, jsonpatch.Plain(v))
}

// ngPageOptions reads and checks marker, limit, sort_key and sort_dir as
// Magnum's list handlers do (limit, then sort_dir), and returns the capped
// limit.
func (s *server) ngPageOptions(r *http.Request) (marker string, limit int, sortKey, sortDir string, err error) {
	limit = s.opts.MaxLimit
	if n, ok := QueryInt(r, "limit"); ok {
		n64 := int64(n)
		l, err := magnum.ValidateLimit(&n64, int64(s.opts.MaxLimit))
		if err != nil {
			return "", 0, "", "", err
		}
		limit = int(l)
	}
	sortKey, ok := QueryString(r, "sort_key")
	if !ok {
		sortKey = "id"
	}
	sortDir, ok = QueryString(r, "sort_dir")
	if !ok {
		sortDir = "asc"
	}
	if err := magnum.ValidateSortDir(sortDir); err != nil {
		return "", 0, "", "", err
	}
	if m, ok := QueryString(r, "marker"); ok {
		marker = m
	} else if n, ok := QueryInt(r, "marker"); ok {
		marker = strconv.Itoa(n)
	}
	return marker, limit, sortKey, sortDir, nil
}

// ngLabelsDiff is Magnum's get_labels_diff: labels overridden (parent value),
// added and skipped relative to the parent's labels.
func ngLabelsDiff(parent, labels map[string]string) (overridden, added, skipped map[string]string) {
	overridden, added, skipped = map[string]string{}, map[string]string{}, map[string]string{}
	for k, v := range parent {
		if _, ok := labels[k]; !ok {
			skipped[k] = v
		}
	}
	for k, v := range labels {
		pv, ok := parent[k]
		switch {
		case !ok:
			added[k] = v
		case pv != v:
			overridden[k] = pv
		}
	}
	return overridden, added, skipped
}

func wsStringIn(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
