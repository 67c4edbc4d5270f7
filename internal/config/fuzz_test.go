package config

import (
	"strings"
	"testing"
)

// FuzzParseINI checks that the parser and the option resolution never
// panic and that what the parser returns obeys its invariants.
func FuzzParseINI(f *testing.F) {
	f.Add([]byte("[DEFAULT]\ndebug = true\n[api]\nport = 9511\n"))
	f.Add([]byte("[a]\nb = one\n  two\n\nc: d # e\n"))
	f.Add([]byte("[api]\nssl_cert_file = ${DEFAULT.host}/$$x/$port\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseINI("fuzz.conf", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.conf:") {
				t.Fatalf("error without location: %v", err)
			}
			return
		}
		for _, e := range file.Entries {
			if e.Key == "" || e.Key != pyStrip(e.Key) {
				t.Fatalf("bad key %q", e.Key)
			}
			if e.Group != NormalizeGroup(e.Section) {
				t.Fatalf("group %q for section %q", e.Group, e.Section)
			}
			if strings.ContainsAny(e.Value, "\r") || e.Line < 1 {
				t.Fatalf("bad entry %+v", e)
			}
		}
		o, _, err := FromFiles([]*File{file})
		if err == nil {
			for _, e := range file.Entries {
				o.Lookup(e.Group, e.Key)
				o.LookupAll(e.Group, e.Key)
			}
		}
	})
}

// FuzzParseDatabaseURL checks that URL translation never panics and never
// shows the password in Redacted or in an error.
func FuzzParseDatabaseURL(f *testing.F) {
	f.Add("mysql+pymysql://magnum:secretpw@db:3306/magnum?charset=utf8")
	f.Add("postgresql+psycopg2://magnum:secretpw@pg/magnum?sslmode=require")
	f.Add("sqlite:////var/lib/magnum/magnum.sqlite")
	f.Fuzz(func(t *testing.T, raw string) {
		target, err := ParseDatabaseURL(raw)
		pw := ""
		if m := sqlalchemyURL.FindStringSubmatch(strings.TrimSpace(raw)); m != nil {
			pw = m[3]
		}
		if len(pw) < 4 || strings.Count(raw, pw) != 1 {
			return
		}
		// The mask itself ("***", next to "://" or '@') must not count as
		// the password: replace it with a character the password lacks.
		sep := rune(1)
		for strings.ContainsRune(pw, sep) {
			sep++
		}
		unmask := func(s string) string { return strings.ReplaceAll(s, "***", string(sep)) }
		if strings.Contains(unmask(strings.Replace(raw, pw, "", 1)), pw) {
			return
		}
		if err != nil && strings.Contains(unmask(err.Error()), pw) {
			t.Fatalf("error %q shows the password %q", err, pw)
		}
		if strings.Contains(unmask(target.Redacted), pw) {
			t.Fatalf("Redacted %q shows the password %q", target.Redacted, pw)
		}
	})
}
