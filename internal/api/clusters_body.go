package api

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/openkeel/openkeel-magnum/internal/api/jsonpatch"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// clBodyKind is the WSME type of one attribute of a request body.
type clBodyKind int

const (
	clText     clBodyKind = iota // wtypes.text
	clString                     // StringType(min, max, pattern)
	clInteger                    // IntegerType(minimum)
	clBoolean                    // Magnum BooleanType
	clLabels                     // DictType(text, MultiType(text, int, bool, float))
	clStrDict                    // DictType(text, text)
	clEnum                       // Enum(text, ...)
	clUUID                       // types.uuid
	clStrList                    // [text]
	clReadOnly                   // readonly attribute
)

// clAttr is one attribute of a WSME complex type, in declaration order.
type clAttr struct {
	name      string
	kind      clBodyKind
	min, max  int
	pattern   *regexp.Regexp
	patText   string
	enum      []string
	mandatory bool
	minimum   *int64
}

var clNamePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.-]*\n?$`)

func clMin(n int64) *int64 { return &n }

func clStatusNames() []string {
	out := make([]string, len(magnum.ClusterStatuses))
	for i, s := range magnum.ClusterStatuses {
		out[i] = string(s)
	}
	return out
}

// clusterBodyAttrs is the Cluster API type (cluster.py:64-191).
var clusterBodyAttrs = []clAttr{
	{name: "uuid", kind: clUUID},
	{name: "name", kind: clString, min: 1, max: 242, pattern: clNamePattern, patText: magnum.NamePattern},
	{name: "cluster_template_id", kind: clText, mandatory: true},
	{name: "keypair", kind: clString, min: 1, max: 255},
	{name: "node_count", kind: clInteger, minimum: clMin(0)},
	{name: "master_count", kind: clInteger, minimum: clMin(1)},
	{name: "docker_volume_size", kind: clInteger, minimum: clMin(1)},
	{name: "labels", kind: clLabels},
	{name: "master_flavor_id", kind: clString, min: 1, max: 255},
	{name: "flavor_id", kind: clString, min: 1, max: 255},
	{name: "create_timeout", kind: clInteger, minimum: clMin(0)},
	{name: "links", kind: clReadOnly},
	{name: "stack_id", kind: clReadOnly},
	{name: "cluster_id", kind: clReadOnly},
	{name: "status", kind: clEnum, enum: clStatusNames()},
	{name: "status_reason", kind: clText},
	{name: "health_status", kind: clEnum, enum: []string{"HEALTHY", "UNHEALTHY", "UNKNOWN"}},
	{name: "health_status_reason", kind: clStrDict},
	{name: "discovery_url", kind: clText},
	{name: "api_address", kind: clReadOnly},
	{name: "coe_version", kind: clReadOnly},
	{name: "container_version", kind: clReadOnly},
	{name: "project_id", kind: clReadOnly},
	{name: "user_id", kind: clReadOnly},
	{name: "node_addresses", kind: clReadOnly},
	{name: "master_addresses", kind: clReadOnly},
	{name: "faults", kind: clStrDict},
	{name: "fixed_network", kind: clString, min: 1, max: 255},
	{name: "fixed_subnet", kind: clString, min: 1, max: 255},
	{name: "floating_ip_enabled", kind: clBoolean},
	{name: "merge_labels", kind: clBoolean},
	{name: "labels_overridden", kind: clLabels},
	{name: "labels_added", kind: clLabels},
	{name: "labels_skipped", kind: clLabels},
	{name: "master_lb_enabled", kind: clBoolean},
	{name: "created_at", kind: clReadOnly},
	{name: "updated_at", kind: clReadOnly},
}

// resizeBodyAttrs is ClusterResizeRequest (cluster_actions.py:42-56).
var resizeBodyAttrs = []clAttr{
	{name: "node_count", kind: clInteger, minimum: clMin(0), mandatory: true},
	{name: "nodes_to_remove", kind: clStrList},
	{name: "nodegroup", kind: clString, min: 1, max: 255},
	{name: "created_at", kind: clReadOnly},
	{name: "updated_at", kind: clReadOnly},
}

// upgradeBodyAttrs is ClusterUpgradeRequest (cluster_actions.py:59-72).
var upgradeBodyAttrs = []clAttr{
	{name: "max_batch_size", kind: clInteger, minimum: clMin(1)},
	{name: "nodegroup", kind: clString, min: 1, max: 255},
	{name: "cluster_template", kind: clString, min: 1, max: 255},
	{name: "created_at", kind: clReadOnly},
	{name: "updated_at", kind: clReadOnly},
}

// clBody is a decoded and converted request body: the attributes that were
// present (a JSON null is present with a nil value).
type clBody map[string]any

func (b clBody) has(k string) bool { _, ok := b[k]; return ok }

func (b clBody) str(k string) *string {
	if s, ok := b[k].(string); ok {
		return &s
	}
	return nil
}

func (b clBody) integer(k string) *int {
	if n, ok := b[k].(int64); ok {
		v := int(n)
		return &v
	}
	return nil
}

func (b clBody) boolean(k string) *bool {
	if v, ok := b[k].(bool); ok {
		return &v
	}
	return nil
}

func (b clBody) strMap(k string) map[string]string {
	m, _ := b[k].(map[string]string)
	return m
}

// clDecodeBody converts a JSON object body into the attributes of a WSME
// complex type the way WSME does: unknown attributes first, then each
// attribute in declaration order (conversion, read-only, mandatory).
func clDecodeBody(raw []byte, arg string, attrs []clAttr) (clBody, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, magnum.MissingArgument(arg)
	}
	doc, err := jsonpatch.DecodeOrdered(raw)
	if err != nil {
		return nil, magnum.InvalidJSONBody()
	}
	if doc == nil {
		return nil, magnum.MissingArgument(arg)
	}
	obj, ok := doc.(*jsonpatch.Dict)
	if !ok {
		return nil, magnum.InvalidInputRaw(arg, magnum.PyStr(doc), fmt.Sprintf("unable to convert to %s. Error: %s",
			clTypeName(arg), "Value not a valid dict: "+magnum.PyStr(doc)))
	}
	known := map[string]bool{}
	for _, a := range attrs {
		known[a.name] = true
	}
	var unknown []string
	for _, k := range obj.Keys {
		if ks := k.(string); !known[ks] {
			unknown = append(unknown, ks)
		}
	}
	if len(unknown) > 0 {
		return nil, magnum.UnknownAttribute(arg, unknown)
	}
	out := clBody{}
	for _, a := range attrs {
		v, present := obj.Get(a.name)
		if !present {
			if a.mandatory {
				return nil, magnum.MandatoryFieldMissing(a.name)
			}
			continue
		}
		cv, err := clConvert(arg, obj, a, jsonpatch.Plain(v))
		if err != nil {
			return nil, err
		}
		out[a.name] = cv
	}
	return out, nil
}

func clTypeName(arg string) string {
	switch arg {
	case "cluster_resize_req":
		return "ClusterResizeRequest"
	case "cluster_upgrade_req":
		return "ClusterUpgradeRequest"
	}
	return "Cluster"
}

// clConvert converts one attribute value (v already plain JSON values).
func clConvert(arg string, body any, a clAttr, v any) (any, error) {
	if a.kind == clReadOnly {
		return nil, magnum.ReadOnlyField(a.name, v)
	}
	if v == nil {
		return nil, nil
	}
	switch a.kind {
	case clText:
		if _, ok := v.(string); !ok {
			return nil, magnum.WrongType(a.name, v, "<class 'str'>")
		}
		return v, nil
	case clString:
		return magnum.ValidateString(a.name, v, a.min, a.max, a.pattern, a.patText)
	case clInteger:
		n, err := magnum.ConvertInt(arg, body, v)
		if err != nil {
			return nil, err
		}
		if a.minimum != nil && n < *a.minimum {
			return nil, magnum.BelowMinimum(a.name, n, int(*a.minimum))
		}
		return n, nil
	case clBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if b, ok := strictBool(x); ok {
				return b, nil
			}
		}
		// Deviation: Magnum fails with an unhandled 500 here; we answer 400
		// with oslo.utils' message.
		return nil, magnum.InvalidInput(a.name, v, fmt.Sprintf(
			"Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'", magnum.PyStr(v)))
	case clLabels:
		// A ValueError of WSME's dict conversion names the body argument
		// and shows the whole body.
		return magnum.ValidateLabels(arg, body, v)
	case clStrDict:
		return magnum.ValidateStringDict(arg, body, a.name, v)
	case clEnum:
		s, ok := v.(string)
		if !ok {
			return nil, magnum.WrongType(a.name, v, "<class 'str'>")
		}
		for _, e := range a.enum {
			if e == s {
				return s, nil
			}
		}
		return nil, magnum.InvalidEnum(a.name, s, a.enum)
	case clUUID:
		s, ok := v.(string)
		if !ok || !magnum.IsUUIDLike(s) {
			return nil, magnum.InvalidUUID(magnum.PyStr(v))
		}
		return s, nil
	case clStrList:
		l, ok := v.([]any)
		if !ok {
			return nil, magnum.InvalidInput(arg, body, "Value not a valid list: "+magnum.PyStr(v))
		}
		out := make([]string, 0, len(l))
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, magnum.WrongType(a.name, e, "<class 'str'>")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return v, nil
}
