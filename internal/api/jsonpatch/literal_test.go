package jsonpatch

import (
	"testing"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// TestParseLiteral pins values and messages verified against Python 3.11's
// ast.literal_eval, so the behaviour is checked without a Python at hand.
func TestParseLiteral(t *testing.T) {
	tests := []struct {
		in   string
		repr string // PyRepr of the value
		err  string // Python's str() of the exception
		typ  string
	}{
		{in: "{'a': 'b', \"c\": 'd',}", repr: "{'a': 'b', 'c': 'd'}"},
		{in: "[{'key': 'k', 'effect': 'NoSchedule'}]", repr: "[{'key': 'k', 'effect': 'NoSchedule'}]"},
		{in: "  {'z': 1, 'a': 2}", repr: "{'z': 1, 'a': 2}"},
		{in: "(1, 2.5, -3, +4, True, None)", repr: "(1, 2.5, -3, 4, True, None)"},
		{in: "(1,)", repr: "(1,)"},
		{in: "1, 2", repr: "(1, 2)"},
		{in: "-(1)", repr: "-1"},
		{in: "{1: 'a', 1.0: 'b', True: 'c'}", repr: "{1: 'c'}"},
		{in: "{1, True, 2}", repr: "{1, 2}"},
		{in: "set()", repr: "set()"},
		{in: "'a' \"b\" '''c'''", repr: "'abc'"},
		{in: `'\x41\101\u00e9\U0001F600\n\q'`, repr: `'AAé😀\n\\q'`},
		{in: `r'\d+'`, repr: `'\\d+'`},
		{in: `b'\x00a'`, repr: `b'\x00a'`},
		{in: "0x_ff + 0j", repr: "(255+0j)"},
		{in: "1_000", repr: "1000"},
		{in: "0o17", repr: "15"},
		{in: "1e400", repr: "inf"},
		{in: "-1.5e3", repr: "-1500.0"},
		{in: "1-2j", repr: "(1-2j)"},
		{in: "99999999999999999999", repr: "99999999999999999999"},
		{in: "...", repr: "Ellipsis"},
		{in: "[1,\n 2, # c\n 3]", repr: "[1, 2, 3]"},
		{in: "\n1", repr: "1"},
		{in: "{'a'", err: "'{' was never closed (<unknown>, line 1)", typ: "SyntaxError"},
		{in: "{bad", err: "'{' was never closed (<unknown>, line 1)", typ: "SyntaxError"},
		{in: "'abc", err: "unterminated string literal (detected at line 1) (<unknown>, line 1)", typ: "SyntaxError"},
		{in: "[1}", err: "closing parenthesis '}' does not match opening parenthesis '[' (<unknown>, line 1)", typ: "SyntaxError"},
		{in: "[1,\n2}", err: "closing parenthesis '}' does not match opening parenthesis '[' on line 1 (<unknown>, line 2)", typ: "SyntaxError"},
		{in: "}", err: "unmatched '}' (<unknown>, line 1)", typ: "SyntaxError"},
		{in: "", err: "invalid syntax (<unknown>, line 0)", typ: "SyntaxError"},
		{in: "a b", err: "invalid syntax (<unknown>, line 1)", typ: "SyntaxError"},
		{in: "[1 2]", err: "invalid syntax. Perhaps you forgot a comma? (<unknown>, line 1)", typ: "SyntaxError"},
		{in: "{1:}", err: "expression expected after dictionary key and ':' (<unknown>, line 1)", typ: "SyntaxError"},
		{in: "01", err: "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<unknown>, line 1)", typ: "SyntaxError"},
		{in: "'a' b'c'", err: "cannot mix bytes and nonbytes literals (<unknown>, line 1)", typ: "SyntaxError"},
		{in: `'ab\x4'`, err: `(unicode error) 'unicodeescape' codec can't decode bytes in position 2-4: truncated \xXX escape (<unknown>, line 1)`, typ: "SyntaxError"},
		{in: " \n 1", err: "unexpected indent (<unknown>, line 2)", typ: "IndentationError"},
		{in: "foo", err: "malformed node or string on line 1: <ast.Name object at 0x7f0000000000>", typ: "ValueError"},
		{in: "1+2", err: "malformed node or string on line 1: <ast.BinOp object at 0x7f0000000000>", typ: "ValueError"},
		{in: "-True", err: "malformed node or string on line 1: <ast.Constant object at 0x7f0000000000>", typ: "ValueError"},
		{in: "{**{}}", err: "malformed node or string: None", typ: "ValueError"},
		{in: "{[1]: 2}", err: "unhashable type: 'list'", typ: "TypeError"},
		{in: "{(1, {2}): 3}", err: "unhashable type: 'set'", typ: "TypeError"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := ParseLiteral(tt.in)
			if tt.err != "" {
				le, ok := err.(*LiteralError)
				if !ok {
					t.Fatalf("ParseLiteral = %s, %v; want %s", magnum.PyRepr(v), err, tt.err)
				}
				if le.Error() != tt.err || le.Type != tt.typ {
					t.Fatalf("error %s(%s)\nwant  %s(%s)", le.Type, le.Error(), tt.typ, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseLiteral: %v", err)
			}
			if got := magnum.PyRepr(v); got != tt.repr {
				t.Errorf("value %s, want %s", got, tt.repr)
			}
		})
	}
}

// TestHashKey checks that dict/set de-duplication keys agree with Python's
// equality on the values literal_eval can produce.
func TestHashKey(t *testing.T) {
	vals := []any{nil, Ellipsis{}, true, false, int64(0), int64(1), int64(-1), 0.0, 1.0, -1.0, 1.5, complex(1, 0), complex(0, 1),
		complex(1, 1), "1", "", Bytes("1"), Bytes(""), Tuple{}, Tuple{int64(1)}, Tuple{1.0}, Tuple{"1"}, Tuple{Tuple{}},
		mustBig("18446744073709551616"), 18446744073709551616.0, 1e300}
	for _, a := range vals {
		for _, b := range vals {
			if got, want := hashKey(a) == hashKey(b), pyEqual(a, b); got != want {
				t.Errorf("%s == %s: hashKey says %v, Python says %v", magnum.PyRepr(a), magnum.PyRepr(b), got, want)
			}
		}
	}
}
