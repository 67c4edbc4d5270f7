package jsonpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Operation is one validated JSON-patch operation.
type Operation struct {
	// Op is "add", "replace" or "remove".
	Op string
	// Path is the JSON pointer, matching ^(/[\w-]+)+$.
	Path string
	// Value is the operation's value: string, int64, *big.Int or bool (JSON
	// booleans pass WSME's integer check). Nil when absent or null.
	Value any
}

// BaseInternal is the internal attribute list shared by every resource
// (magnum/api/controllers/v1/types.py JsonPatchType.internal_attrs).
var BaseInternal = []string{"/created_at", "/id", "/links", "/updated_at", "/uuid", "/project_id", "/user_id"}

// DefaultLiteralFields are the paths whose "replace" value Magnum parses with
// ast.literal_eval (magnum/api/utils.py apply_jsonpatch).
var DefaultLiteralFields = []string{"/labels", "/health_status_reason", "/node_labels", "/node_taints"}

// Rules are the per-resource attribute lists of a PATCH.
type Rules struct {
	// Internal paths can never be patched (include BaseInternal).
	Internal []string
	// Mandatory paths cannot be removed (mandatory API attributes plus the
	// resource's extra non-removable set).
	Mandatory []string
	// LiteralFields are the paths whose replace value is a Python literal;
	// nil means DefaultLiteralFields.
	LiteralFields []string
}

// Resource rules of Magnum 23.0.0 (patch.md §3–§6).
var (
	// ClusterRules are the cluster PATCH lists (cluster.py:278-287).
	ClusterRules = Rules{
		Internal: append(append([]string(nil), BaseInternal...), "/api_address", "/node_addresses",
			"/master_addresses", "/stack_id", "/cluster_id", "/ca_cert_ref", "/magnum_cert_ref",
			"/etcd_ca_cert_ref", "/front_proxy_ca_cert_ref"),
		Mandatory: []string{"/cluster_template_id"},
	}
	// ClusterTemplateRules are the template PATCH lists (cluster_template.py:230-235).
	ClusterTemplateRules = Rules{
		Internal: BaseInternal,
		Mandatory: []string{"/image_id", "/network_driver", "/external_network_id", "/tls_disabled", "/public",
			"/server_type", "/coe", "/registry_enabled", "/cluster_distro", "/hidden"},
	}
	// NodeGroupRules are the nodegroup PATCH lists (nodegroup.py:322-333).
	NodeGroupRules = Rules{
		Internal: append(append([]string(nil), BaseInternal...), "/name", "/cluster_id", "/project_id",
			"/docker_volume_size", "/labels", "/flavor_id", "/image_id", "/node_addresses", "/node_count",
			"/role", "/is_default", "/stack_id", "/status", "/status_reason", "/version"),
	}
	// FederationRules are the federation PATCH lists.
	FederationRules = Rules{Internal: BaseInternal}
)

// pathPattern is WSME's pattern for "path"; Python's \w is Unicode-aware and
// its "$" also matches before a final newline.
var pathPattern = regexp.MustCompile(`^(/[\p{L}\p{N}_\p{Mn}\p{Mc}\p{Pc}-]+)+\n?$`)

const pathPatternText = `^(/[\w-]+)+$`

// opEnum is the order in which Magnum's (hash-ordered) enum was observed.
var opEnum = []string{"add", "remove", "replace"}

// serverError is an exception that escapes WSME's client-error handling:
// Magnum answers 500 with str(exception).
func serverError(msg string) *magnum.Error {
	return magnum.ServerError(msg)
}

// Parse decodes a PATCH body the way WSME converts it into a list of
// JsonPatchType (type checks only; see ParseAndCheck for the attribute rules).
func Parse(body []byte) ([]Operation, error) {
	return parse(body, nil)
}

// ParseAndCheck decodes a PATCH body and applies the resource's attribute
// rules element by element, in Magnum's order: each element's type checks,
// then its internal/mandatory/value checks, before the next element.
func ParseAndCheck(body []byte, rules Rules) ([]Operation, error) {
	return parse(body, &rules)
}

func parse(body []byte, rules *Rules) ([]Operation, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, magnum.MissingArgument("patch")
	}
	doc, err := decodeOrdered(body)
	if err != nil {
		return nil, magnum.InvalidJSONBody()
	}
	if doc == nil {
		return nil, magnum.MissingArgument("patch")
	}
	list, ok := doc.([]any)
	if !ok {
		return nil, magnum.InvalidInputRaw("patch", magnum.PyStr(doc), "Value not a valid list: "+magnum.PyStr(doc))
	}
	ops := make([]Operation, 0, len(list))
	for _, el := range list {
		obj, ok := el.(*Dict)
		if !ok {
			if el == nil {
				// Magnum keeps a null element and fails later subscripting it.
				return nil, serverError("'NoneType' object is not subscriptable")
			}
			return nil, serverError(fmt.Sprintf("'%s' object has no attribute 'keys'", pyTypeName(el)))
		}
		op, err := convertOp(obj)
		if err != nil {
			return nil, err
		}
		if rules != nil {
			if err := checkOp(op, *rules); err != nil {
				return nil, err
			}
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func convertOp(obj *Dict) (Operation, error) {
	var unknown []string
	for _, k := range obj.Keys {
		ks := k.(string)
		if ks != "path" && ks != "op" && ks != "value" {
			unknown = append(unknown, ks)
		}
	}
	if len(unknown) > 0 {
		return Operation{}, magnum.UnknownAttribute("patch", unknown)
	}
	var op Operation
	// WSME converts attributes in declaration order: path, op, value.
	if v, ok := obj.Get("path"); ok {
		if v != nil {
			s, ok := v.(string)
			if !ok {
				return Operation{}, magnum.NotAString("path", v)
			}
			if !pathPattern.MatchString(s) {
				return Operation{}, magnum.PatternMismatch("path", s, pathPatternText)
			}
			op.Path = s
		} else {
			// A null path passes WSME and breaks Magnum's apply_jsonpatch.
			return Operation{}, serverError("'NoneType' object has no attribute 'count'")
		}
	} else {
		return Operation{}, magnum.MandatoryFieldMissing("path")
	}
	if v, ok := obj.Get("op"); ok {
		s, _ := v.(string)
		if v == nil {
			return Operation{}, serverError("Unknown operation None")
		}
		if s != "add" && s != "replace" && s != "remove" {
			return Operation{}, magnum.InvalidEnum("op", v, opEnum)
		}
		op.Op = s
	} else {
		return Operation{}, magnum.MandatoryFieldMissing("op")
	}
	if v, ok := obj.Get("value"); ok && v != nil {
		switch v.(type) {
		case string, int64, *big.Int, bool:
			op.Value = v
		default:
			return Operation{}, magnum.InvalidInputRaw("value", magnum.PyStr(v),
				fmt.Sprintf("Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '<class '%s'>'", pyTypeName(v)))
		}
	}
	return op, nil
}

func pyTypeName(v any) string {
	switch v.(type) {
	case *Dict, map[string]any:
		return "dict"
	case []any:
		return "list"
	case float64:
		return "float"
	case string:
		return "str"
	case bool:
		return "bool"
	case int64, *big.Int:
		return "int"
	case nil:
		return "NoneType"
	case Tuple:
		return "tuple"
	case Set:
		return "set"
	case Bytes:
		return "bytes"
	case complex128:
		return "complex"
	case Ellipsis:
		return "ellipsis"
	}
	return fmt.Sprintf("%T", v)
}

// Check applies the resource's attribute rules to each operation
// (JsonPatchType.validate): internal attributes, non-removable attributes,
// and the presence of a value for add/replace.
func Check(ops []Operation, rules Rules) error {
	for _, op := range ops {
		if err := checkOp(op, rules); err != nil {
			return err
		}
	}
	return nil
}

func checkOp(op Operation, rules Rules) error {
	if contains(rules.Internal, op.Path) {
		return magnum.PatchInternalAttribute(op.Path)
	}
	if op.Op == "remove" && contains(rules.Mandatory, op.Path) {
		return magnum.PatchMandatoryAttribute(op.Path)
	}
	if op.Op != "remove" && op.Value == nil {
		return magnum.PatchValueMissing()
	}
	return nil
}

// patchList renders operations as Magnum's list of dicts (keys path, op,
// value), the form PatchError messages show.
type patchList []Operation

// PyRepr renders the list as Python's repr does.
func (l patchList) PyRepr() string {
	parts := make([]string, len(l))
	for i, op := range l {
		s := "{'path': " + magnum.PyRepr(op.Path) + ", 'op': " + magnum.PyRepr(op.Op)
		if op.Value != nil {
			s += ", 'value': " + magnum.PyRepr(op.Value)
		}
		parts[i] = s + "}"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Apply applies ops to doc with Magnum's semantics and returns the patched
// copy; doc is not modified. doc holds the resource's attributes as JSON-like
// values (every DB column, null when unset). Values parsed from Python
// literals keep their Python types (*Dict, Tuple, ...) when they have no JSON
// form; ToJSON converts the common ones.
func Apply(doc map[string]any, ops []Operation, rules Rules) (map[string]any, error) {
	if err := Check(ops, rules); err != nil {
		return nil, err
	}
	literal := rules.LiteralFields
	if literal == nil {
		literal = DefaultLiteralFields
	}
	work := append(patchList(nil), ops...)
	for i, op := range work {
		// Magnum: magnum/api/utils.py:72 — a top-level "add" must target an
		// existing attribute that is currently unset.
		if op.Op == "add" && strings.Count(op.Path, "/") == 1 {
			attr := op.Path[1:]
			v, ok := doc[attr]
			if !ok {
				return nil, magnum.PatchAddNewAttribute(op.Path)
			}
			if v != nil {
				return nil, magnum.PatchAttributeExists(op.Path)
			}
		}
		// Magnum: magnum/api/utils.py:84 — replace of a structured field takes
		// a Python literal string. The op list is updated in place, so later
		// error messages show the parsed values of earlier ops.
		if op.Op == "replace" && contains(literal, op.Path) {
			switch v := op.Value.(type) {
			case map[string]any, []any, *Dict:
				// Already structured (never produced by Parse).
			case string:
				parsed, err := ParseLiteral(v)
				if err != nil {
					var le *LiteralError
					if errors.As(err, &le) && le.Type != "SyntaxError" && le.Type != "IndentationError" && le.Type != "ValueError" {
						// Magnum catches only SyntaxError and ValueError; the
						// rest (unhashable keys, recursion) escape as a 500.
						return nil, serverError(le.Error())
					}
					return nil, magnum.PatchError(work.PyRepr(), err.Error())
				}
				work[i].Value = parsed
			default:
				return nil, magnum.PatchError(work.PyRepr(), "malformed node or string: "+magnum.PyRepr(v))
			}
		}
	}
	out := deepCopy(doc).(map[string]any)
	for _, op := range work {
		var err error
		out, err = applyOne(out, op)
		if err != nil {
			var me *magnum.Error
			if errors.As(err, &me) {
				return nil, me
			}
			return nil, magnum.PatchError(work.PyRepr(), err.Error())
		}
	}
	return out, nil
}

// applyOne applies a single operation as python-jsonpatch 1.33 does.
func applyOne(doc map[string]any, op Operation) (map[string]any, error) {
	parts := strings.Split(op.Path[1:], "/")
	var parent any = doc
	var setInParent func(v any) // replaces the container being walked
	setInParent = func(v any) {}
	for _, part := range parts[:len(parts)-1] {
		next, set, err := walk(parent, part, setInParent)
		if err != nil {
			return nil, err
		}
		parent, setInParent = next, set
	}
	last := parts[len(parts)-1]
	switch c := parent.(type) {
	case map[string]any:
		switch op.Op {
		case "add":
			c[last] = op.Value
		case "replace":
			if _, ok := c[last]; !ok {
				return nil, fmt.Errorf("can't replace a non-existent object '%s'", last)
			}
			c[last] = op.Value
		case "remove":
			if _, ok := c[last]; !ok {
				return nil, fmt.Errorf("can't remove a non-existent object '%s'", last)
			}
			delete(c, last)
		}
		return doc, nil
	case *Dict:
		idx := -1
		for i, k := range c.Keys {
			if s, ok := k.(string); ok && s == last {
				idx = i
			}
		}
		switch op.Op {
		case "add", "replace":
			if idx < 0 {
				if op.Op == "replace" {
					return nil, fmt.Errorf("can't replace a non-existent object '%s'", last)
				}
				c.Keys = append(c.Keys, last)
				c.Values = append(c.Values, op.Value)
			} else {
				c.Values[idx] = op.Value
			}
		case "remove":
			if idx < 0 {
				return nil, fmt.Errorf("can't remove a non-existent object '%s'", last)
			}
			c.Keys = append(c.Keys[:idx], c.Keys[idx+1:]...)
			c.Values = append(c.Values[:idx], c.Values[idx+1:]...)
		}
		return doc, nil
	case []any:
		idx, isEnd, err := seqIndex(last)
		if err != nil {
			return nil, err
		}
		switch op.Op {
		case "add":
			if isEnd {
				c = append(c, op.Value)
			} else if idx > len(c) {
				return nil, errors.New("can't insert outside of list")
			} else {
				c = append(c[:idx], append([]any{op.Value}, c[idx:]...)...)
			}
		case "replace":
			if isEnd {
				return nil, errors.New("'path' with '-' can't be applied to 'replace' operation")
			}
			if idx >= len(c) {
				return nil, errors.New("can't replace outside of list")
			}
			c[idx] = op.Value
		case "remove":
			if isEnd {
				return nil, fmt.Errorf("invalid array index '%s'", last)
			}
			if idx >= len(c) {
				return nil, fmt.Errorf("can't remove a non-existent object '%s'", last)
			}
			c = append(c[:idx:idx], c[idx+1:]...)
		}
		setInParent(c)
		return doc, nil
	case string, Tuple, Bytes:
		// Immutable sequences: python-jsonpatch fails after resolving the index.
		idx, isEnd, err := seqIndex(last)
		if err != nil {
			return nil, err
		}
		part := strconv.Itoa(idx)
		if isEnd {
			part = "-"
		}
		if op.Op == "remove" {
			return nil, serverError(fmt.Sprintf("'%s' object doesn't support item deletion", pyTypeName(c)))
		}
		return nil, fmt.Errorf("unable to fully resolve json pointer %s, part %s", op.Path, part)
	default:
		return nil, fmt.Errorf("Document '<class '%s'>' does not support indexing, must be mapping/sequence or support __getitem__", pyTypeName(parent))
	}
}

var arrayIndex = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

func seqIndex(part string) (int, bool, error) {
	if part == "-" {
		return 0, true, nil
	}
	if !arrayIndex.MatchString(part) {
		return 0, false, fmt.Errorf("'%s' is not a valid sequence index", part)
	}
	n, err := strconv.Atoi(part)
	if err != nil {
		n = int(^uint(0) >> 1)
	}
	return n, false, nil
}

// walk resolves one intermediate pointer step (jsonpointer.walk).
func walk(doc any, part string, setSelf func(any)) (any, func(any), error) {
	switch c := doc.(type) {
	case map[string]any:
		v, ok := c[part]
		if !ok {
			return nil, nil, fmt.Errorf("member '%s' not found in %s", part, magnum.PyStr(c))
		}
		return v, func(nv any) { c[part] = nv }, nil
	case *Dict:
		v, ok := c.Get(part)
		if !ok {
			return nil, nil, fmt.Errorf("member '%s' not found in %s", part, c.PyRepr())
		}
		return v, func(nv any) {
			for i, k := range c.Keys {
				if s, ok := k.(string); ok && s == part {
					c.Values[i] = nv
				}
			}
		}, nil
	case []any, Tuple, string, Bytes:
		idx, isEnd, err := seqIndex(part)
		if err != nil {
			return nil, nil, err
		}
		var n int
		switch x := c.(type) {
		case []any:
			n = len(x)
		case Tuple:
			n = len(x)
		case string:
			n = len([]rune(x))
		case Bytes:
			n = len(x)
		}
		if isEnd {
			// jsonpointer's EndOfList cannot be walked further.
			return nil, nil, fmt.Errorf("Document '<class 'jsonpointer.EndOfList'>' does not support indexing, must be mapping/sequence or support __getitem__")
		}
		if idx >= n {
			return nil, nil, fmt.Errorf("index '%d' is out of bounds", idx)
		}
		switch x := c.(type) {
		case []any:
			return x[idx], func(nv any) { x[idx] = nv }, nil
		case Tuple:
			return x[idx], func(any) {}, nil
		case string:
			return string([]rune(x)[idx]), func(any) {}, nil
		default:
			return int64(c.(Bytes)[idx]), func(any) {}, nil
		}
	default:
		return nil, nil, fmt.Errorf("Document '<class '%s'>' does not support indexing, must be mapping/sequence or support __getitem__", pyTypeName(doc))
	}
}

// deepCopy copies JSON-like and literal values.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m
	case []map[string]string:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	case []string:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = e
		}
		return l
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	case *Dict:
		d := &Dict{Keys: append([]any(nil), x.Keys...), Values: make([]any, len(x.Values))}
		for i, e := range x.Values {
			d.Values[i] = deepCopy(e)
		}
		return d
	}
	return v
}

// ToJSON converts a value produced by Apply to plain JSON-like Go values:
// *Dict with string keys → map[string]any, Tuple → []any; other Python-only
// values (non-string keys, sets, bytes, complex, Ellipsis) are refused with
// ok = false, and their Python class name is returned for error messages.
func ToJSON(v any) (out any, badClass string, ok bool) {
	switch x := v.(type) {
	case *Dict:
		m := make(map[string]any, len(x.Keys))
		for i, k := range x.Keys {
			ks, isStr := k.(string)
			if !isStr {
				return nil, pyTypeName(k), false
			}
			e, bad, ok := ToJSON(x.Values[i])
			if !ok {
				return nil, bad, false
			}
			m[ks] = e
		}
		return m, "", true
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, bad, ok := ToJSON(e)
			if !ok {
				return nil, bad, false
			}
			m[k] = c
		}
		return m, "", true
	case []any, Tuple:
		var src []any
		if t, isT := x.(Tuple); isT {
			src = t
		} else {
			src = x.([]any)
		}
		l := make([]any, len(src))
		for i, e := range src {
			c, bad, ok := ToJSON(e)
			if !ok {
				return nil, bad, false
			}
			l[i] = c
		}
		return l, "", true
	case nil, bool, string, int64, *big.Int, float64, int:
		return v, "", true
	}
	return nil, pyTypeName(v), false
}

// StringMap checks a patched value against WSME's DictType(text, text)
// (health_status_reason, node_labels) and returns it as a Go map; field names
// the attribute in the error.
func StringMap(field string, v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	keys, vals, ok := dictItems(v)
	if !ok {
		return nil, magnum.InvalidInputRaw(field, magnum.PyStr(v), fmt.Sprintf("Wrong type. Expected '{<class 'str'>: <class 'str'>}', got '<class '%s'>'", pyTypeName(v)))
	}
	out := make(map[string]string, len(keys))
	for i, k := range keys {
		ks, ok := k.(string)
		if !ok {
			return nil, magnum.InvalidInputRaw(field, magnum.PyStr(v), fmt.Sprintf("Wrong type. Expected '<class 'str'>', got '<class '%s'>'", pyTypeName(k)))
		}
		vs, ok := vals[i].(string)
		if !ok {
			return nil, magnum.InvalidInputRaw(field, magnum.PyStr(v), fmt.Sprintf("Wrong type. Expected '<class 'str'>', got '<class '%s'>'", pyTypeName(vals[i])))
		}
		out[ks] = vs
	}
	return out, nil
}

// StringMapOrder returns the keys of a patched dict value in Python's
// insertion order (Go maps lose it); nil for other values.
func StringMapOrder(v any) []string {
	keys, _, ok := dictItems(v)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if s, ok := k.(string); ok {
			out = append(out, s)
		}
	}
	if _, isMap := v.(map[string]any); isMap {
		sortStrings(out)
	}
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func dictItems(v any) ([]any, []any, bool) {
	switch x := v.(type) {
	case *Dict:
		return x.Keys, x.Values, true
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sortStrings(keys)
		ks := make([]any, len(keys))
		vs := make([]any, len(keys))
		for i, k := range keys {
			ks[i], vs[i] = k, x[k]
		}
		return ks, vs, true
	}
	return nil, nil, false
}

// Labels checks a patched labels value against WSME's DictType(text,
// MultiType(text, int, bool, float)) and returns it with values stringified
// as Magnum stores them (str(): 1 → "1", True → "True").
func Labels(field string, v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	keys, vals, ok := dictItems(v)
	if !ok {
		return nil, magnum.InvalidInputRaw(field, magnum.PyStr(v), fmt.Sprintf("Wrong type. Expected '{<class 'str'>: <class 'str'> | <class 'int'> | <class 'bool'> | <class 'float'>}', got '<class '%s'>'", pyTypeName(v)))
	}
	out := make(map[string]string, len(keys))
	for i, k := range keys {
		ks, ok := k.(string)
		if !ok {
			return nil, magnum.InvalidInputRaw(field, magnum.PyStr(v), fmt.Sprintf("Wrong type. Expected '<class 'str'>', got '<class '%s'>'", pyTypeName(k)))
		}
		switch x := vals[i].(type) {
		case string:
			out[ks] = x
		case int64, *big.Int, bool, float64:
			out[ks] = magnum.PyRepr(x)
		case nil:
			return nil, serverError(fmt.Sprintf("Field `%s[%s]' cannot be None", field, ks))
		default:
			return nil, magnum.InvalidInputRaw(field, magnum.PyStr(v), fmt.Sprintf("Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '<class '%s'>'", pyTypeName(x)))
		}
	}
	return out, nil
}

// Taints checks a patched node_taints value against WSME's
// ArrayType(DictType(text, text)).
func Taints(field string, v any) ([]map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, magnum.InvalidInputRaw(field, magnum.PyStr(v), fmt.Sprintf("Wrong type. Expected '[{<class 'str'>: <class 'str'>}]', got '<class '%s'>'", pyTypeName(v)))
	}
	out := make([]map[string]string, 0, len(list))
	for _, e := range list {
		if _, _, ok := dictItems(e); !ok {
			return nil, magnum.InvalidInputRaw(field, magnum.PyStr(v), fmt.Sprintf("Wrong type. Expected '{<class 'str'>: <class 'str'>}', got '<class '%s'>'", pyTypeName(e)))
		}
		m, err := StringMap(field, e)
		if err != nil {
			return nil, magnum.InvalidInputRaw(field, magnum.PyStr(v), strings.SplitN(err.Error(), ". ", 3)[2])
		}
		out = append(out, m)
	}
	return out, nil
}

// DecodeOrdered decodes JSON keeping object key order (*Dict) and Python's
// number types (int64/*big.Int for integers, float64 otherwise); a
// duplicate key keeps its first position and its last value, as Python's
// json does. Request bodies are decoded with it.
func DecodeOrdered(data []byte) (any, error) {
	return decodeOrdered(data)
}

// Plain turns ordered dicts (*Dict) back into Go maps, recursively, for
// code that takes plain JSON values.
func Plain(v any) any {
	switch x := v.(type) {
	case *Dict:
		m := make(map[string]any, len(x.Keys))
		for i, k := range x.Keys {
			m[k.(string)] = Plain(x.Values[i])
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Plain(e)
		}
		return out
	}
	return v
}

func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := &Dict{}
			index := map[string]int{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				// Python's json keeps the last duplicate at the first position.
				if i, ok := index[k]; ok {
					d.Values[i] = v
				} else {
					index[k] = len(d.Keys)
					d.Keys = append(d.Keys, k)
					d.Values = append(d.Values, v)
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return d, nil
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return l, nil
		}
		return nil, errors.New("unexpected delimiter")
	case json.Number:
		s := t.String()
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, err
			}
			return f, nil
		}
		b, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, errors.New("bad number")
		}
		return normInt(b), nil
	default:
		return t, nil
	}
}
