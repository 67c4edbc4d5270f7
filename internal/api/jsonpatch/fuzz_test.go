package jsonpatch

import (
	"math"
	"testing"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// roundTrips reports whether PyRepr(v) is itself a literal that evaluates to
// v (false for values whose repr is not a literal: inf, nan, Ellipsis, and
// complex numbers whose signed zeros do not survive).
func roundTrips(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsInf(x, 0) && !math.IsNaN(x)
	case complex128, Ellipsis:
		return false
	case []any:
		return allRoundTrip(x)
	case Tuple:
		return allRoundTrip(x)
	case Set:
		return allRoundTrip(x)
	case *Dict:
		return allRoundTrip(x.Keys) && allRoundTrip(x.Values)
	}
	return true
}

func allRoundTrip(xs []any) bool {
	for _, x := range xs {
		if !roundTrips(x) {
			return false
		}
	}
	return true
}

func FuzzParseLiteral(f *testing.F) {
	for _, s := range handWrittenLiterals {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseLiteral(s)
		if err != nil {
			if _, ok := err.(*LiteralError); !ok {
				t.Fatalf("error %v is %T, want *LiteralError", err, err)
			}
			return
		}
		if !roundTrips(v) {
			return
		}
		repr := magnum.PyRepr(v)
		again, err := ParseLiteral(repr)
		if err != nil {
			t.Fatalf("repr %q of %q does not parse: %v", repr, s, err)
		}
		if a, b := canonical(encodeValue(v)), canonical(encodeValue(again)); a != b {
			t.Fatalf("round trip of %q through %q: %s != %s", s, repr, a, b)
		}
	})
}

func FuzzApply(f *testing.F) {
	f.Add(`[{"op":"replace","path":"/labels","value":"{'a': 'b'}"}]`, uint8(0))
	f.Add(`[{"op":"add","path":"/labels/x","value":"y"},{"op":"remove","path":"/labels/kube_tag"}]`, uint8(0))
	f.Add(`[{"op":"replace","path":"/node_taints","value":"[{'key': 'k', 'effect': 'NoSchedule'}]"},{"op":"add","path":"/node_taints/0/value","value":"v"}]`, uint8(1))
	f.Add(`[{"op":"remove","path":"/max_node_count"},{"op":"add","path":"/node_taints/-","value":1}]`, uint8(1))
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		ops, err := Parse([]byte(body))
		if err != nil {
			if _, ok := err.(*magnum.Error); !ok {
				t.Fatalf("Parse error %v is %T", err, err)
			}
			return
		}
		doc, rules := clusterDoc(), ClusterRules
		if which%2 == 1 {
			doc, rules = nodegroupDoc(), NodeGroupRules
		}
		before := canonicalDoc(doc)
		_, err = Apply(doc, ops, rules)
		if err != nil {
			if _, ok := err.(*magnum.Error); !ok {
				t.Fatalf("Apply error %v is %T", err, err)
			}
		}
		if after := canonicalDoc(doc); after != before {
			t.Fatalf("Apply modified its input: %s -> %s", before, after)
		}
	})
}

func canonicalDoc(doc map[string]any) string { return magnum.PyRepr(doc) }
