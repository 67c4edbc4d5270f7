package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kv is an entry reduced to what the parser decides.
type kv struct{ Group, Key, Value string }

func entriesOf(f *File) []kv {
	out := []kv{}
	for _, e := range f.Entries {
		out = append(out, kv{e.Group, e.Key, e.Value})
	}
	return out
}

func TestParseINI(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []kv
		wantErr string
	}{
		{
			name: "equals and colon separators",
			in:   "[api]\nport = 9511\nhost: 0.0.0.0\n",
			want: []kv{{"api", "port", "9511"}, {"api", "host", "0.0.0.0"}},
		},
		{
			name: "the first of '=' and ':' separates",
			in:   "[a]\nurl = http://x:1/y\nk: v = w\nk2=a:b\n",
			want: []kv{{"a", "url", "http://x:1/y"}, {"a", "k", "v = w"}, {"a", "k2", "a:b"}},
		},
		{
			name: "comments with # and ; and no inline comments",
			in:   "# top\n[a]\n; semicolon\n#x = 1\nb = c # d\ne = f ; g\n",
			want: []kv{{"a", "b", "c # d"}, {"a", "e", "f ; g"}},
		},
		{
			name: "empty value",
			in:   "[a]\nb =\nc:\n",
			want: []kv{{"a", "b", ""}, {"a", "c", ""}},
		},
		{
			name: "one pair of matching outer quotes is removed",
			in:   "[a]\nb = \"x y\"\nc = 'z'\nd = \"e'\ne = \"\nf = \"\"g\"\"\n",
			want: []kv{{"a", "b", "x y"}, {"a", "c", "z"}, {"a", "d", "\"e'"}, {"a", "e", ""}, {"a", "f", "\"g\""}},
		},
		{
			name: "continuation lines join with newlines",
			in:   "[a]\nb = one\n  two\n\tthree\nc = d\n",
			want: []kv{{"a", "b", "one\ntwo\nthree"}, {"a", "c", "d"}},
		},
		{
			name: "an indented option after a key is a continuation",
			in:   "[a]\nb = 1\n  c = 2\n",
			want: []kv{{"a", "b", "1\nc = 2"}},
		},
		{
			name: "a blank line ends a continued value",
			in:   "[a]\nb = one\n\nc = two\n",
			want: []kv{{"a", "b", "one"}, {"a", "c", "two"}},
		},
		{
			name: "repeated keys are all kept in order",
			in:   "[a]\nb = 1\nb = 2\n[a]\nb = 3\n",
			want: []kv{{"a", "b", "1"}, {"a", "b", "2"}, {"a", "b", "3"}},
		},
		{
			name: "group names are lower-cased except DEFAULT",
			in:   "[DEFAULT]\na = 1\n[API]\nb = 2\n[default]\nc = 3\n[ x ]\nd = 4\n",
			want: []kv{{"DEFAULT", "a", "1"}, {"api", "b", "2"}, {"default", "c", "3"}, {" x ", "d", "4"}},
		},
		{
			name:    "an indented first key is a stray continuation",
			in:      "[a]\n b_not_continuation_at_start = 1\n",
			wantErr: "f.conf:2: unexpected continuation line",
		},
		{
			name: "CRLF and CR line endings",
			in:   "[a]\r\nb = 1\r\nc = 2\rd = 3",
			want: []kv{{"a", "b", "1"}, {"a", "c", "2"}, {"a", "d", "3"}},
		},
		{
			name:    "key before any section",
			in:      "# c\nb = 1\n",
			wantErr: "f.conf:2: section must be started before assignment",
		},
		{
			name:    "section without closing bracket",
			in:      "[a\nb = 1\n",
			wantErr: "f.conf:1: invalid section (must end with ])",
		},
		{
			name:    "empty section name",
			in:      "[a]\n[]\n",
			wantErr: "f.conf:2: empty section name",
		},
		{
			name:    "line without separator",
			in:      "[a]\njust words\n",
			wantErr: "f.conf:2: no ':' or '=' found in assignment",
		},
		{
			name:    "empty key",
			in:      "[a]\n = v\n",
			wantErr: "f.conf:2: unexpected continuation line",
		},
		{
			name:    "empty key at column one",
			in:      "[a]\n= v\n",
			wantErr: "f.conf:2: key cannot be empty",
		},
		{
			name:    "continuation after a comment",
			in:      "[a]\nb = 1\n# c\n  d\n",
			wantErr: "f.conf:4: unexpected continuation line",
		},
		{
			name:    "continuation after a section header",
			in:      "[a]\n  d\n",
			wantErr: "f.conf:2: unexpected continuation line",
		},
		{
			name:    "invalid UTF-8",
			in:      "[a]\nb = \xff\n",
			wantErr: "f.conf:2: invalid UTF-8",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseINI("f.conf", []byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want prefix %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrParse) {
					t.Errorf("error %v does not match ErrParse", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, entriesOf(f)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseINILineNumbers(t *testing.T) {
	f, err := ParseINI("f.conf", []byte("[a]\n\n# x\nb = 1\n  2\nc = 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := []int{f.Entries[0].Line, f.Entries[1].Line}
	if diff := cmp.Diff([]int{4, 6}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
