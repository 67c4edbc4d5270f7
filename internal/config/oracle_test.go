package config

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// oracleOpt is an option definition handed to the Python oracle.
type oracleOpt struct {
	Group      string      `json:"group"`
	Name       string      `json:"name"`
	Kind       string      `json:"kind"`
	Default    *string     `json:"default"`
	Min        *int64      `json:"min,omitempty"`
	Max        *int64      `json:"max,omitempty"`
	Choices    []string    `json:"choices,omitempty"`
	Deprecated [][2]string `json:"deprecated,omitempty"`
}

type oracleResult struct {
	ParseError string `json:"parse_error"`
	Values     map[string]struct {
		Value any     `json:"value"`
		Error *string `json:"error"`
	} `json:"values"`
}

var oracleKinds = map[optKind]string{
	kindString: "string", kindInt: "int", kindFloat: "float", kindBool: "bool",
	kindList: "list", kindMulti: "multi", kindDict: "dict", kindPort: "port",
	kindIP: "ip", kindHostAddress: "host",
}

// oracleExtraDefs are test-only options in an [oracle] group covering the
// types and constraints no Magnum option uses (dict, float max, string
// choices on a multi-valued option...).
func oracleExtraDefs() []*optDef {
	var (
		s      string
		n      int
		f      float64
		l      []string
		dict   map[string]string
		multi  []string
		choice string
	)
	return []*optDef{
		opt("oracle", "dict", kindDict, "a:1,b:2", &dict),
		opt("oracle", "float", kindFloat, "0.5", &f).withMin(0).withMax(10),
		opt("oracle", "int", kindInt, none, &n).withMin(-5).withMax(5),
		opt("oracle", "choice", kindString, "b", &choice).withChoices("a", "b", "c"),
		opt("oracle", "list", kindList, "a", &l).withChoices("a", "b", "c d"),
		opt("oracle", "multi", kindMulti, "", &multi),
		opt("oracle", "str", kindString, "$dict/$multi", &s),
		opt("oracle", "ip", kindIP, none, &s),
		opt("oracle", "host", kindHostAddress, none, &s),
	}
}

// oracleDefs are the modelled options plus the test-only ones.
func oracleDefs() []*optDef {
	return append((&Options{}).defs(), oracleExtraDefs()...)
}

// oracleSchema describes every modelled and known option to oslo.config.
func oracleSchema() []oracleOpt {
	var out []oracleOpt
	for _, d := range oracleDefs() {
		o := oracleOpt{Group: d.group, Name: d.name, Kind: oracleKinds[d.kind], Min: d.min, Max: d.max, Choices: d.choices}
		if d.def != none {
			def := d.def
			o.Default = &def
		}
		for _, n := range d.deprecated {
			o.Deprecated = append(o.Deprecated, [2]string{d.group, n})
		}
		out = append(out, o)
	}
	modelled := map[optKey]bool{}
	for _, d := range (&Options{}).defs() {
		modelled[optKey{d.group, d.name}] = true
	}
	for _, k := range knownOptions {
		if modelled[optKey{k.group, k.name}] {
			continue
		}
		o := oracleOpt{Group: k.group, Name: k.name, Kind: "string"}
		if k.def != "<None>" {
			def := k.def
			o.Default = &def
		}
		for _, dep := range k.deprecated {
			g, n, _ := strings.Cut(dep, "/")
			o.Deprecated = append(o.Deprecated, [2]string{g, n})
		}
		out = append(out, o)
	}
	return out
}

// oracleCase generates one configuration file from a small grammar biased
// towards the parser's and the types' corner cases.
func oracleCase(rng *rand.Rand) string {
	sections := []string{"DEFAULT", "api", "API", "database", "x509", "oslo_policy", "keystone_auth", "drivers", "nosuch", "cors", "oracle", "Oracle"}
	keys := map[string][]string{
		"DEFAULT":       {"debug", "host", "transport_url", "log_dir", "log_file", "logfile", "state_path", "pybasedir", "bogus"},
		"api":           {"port", "host", "max_limit", "workers", "enabled_ssl", "ssl_cert_file", "api_paste_config"},
		"database":      {"connection", "connection_debug", "max_retries", "sqlite_synchronous"},
		"x509":          {"allowed_extensions", "allowed_key_usage", "term_of_validity", "allow_ca"},
		"oslo_policy":   {"policy_dirs", "remote_timeout", "policy_file", "enforce_new_defaults"},
		"keystone_auth": {"auth_url", "tenant_name", "project_name", "username", "user_name"},
		"drivers":       {"enabled_beta_drivers", "disabled_drivers", "default_driver", "verify_ca"},
		"nosuch":        {"a", "b"},
		"cors":          {"allowed_origin", "max_age", "allow_methods"},
		"oracle":        {"dict", "float", "int", "choice", "list", "multi", "str", "ip", "host"},
	}
	values := []string{
		"9511", "abc", " 12 ", "-1", "1_000", "1__0", "+7", "70000", "0", "1e3", "2.5", "-0.5",
		"true", "Yes", "on", "OFF", "0", "1", "t", "",
		`"quoted"`, `'single'`, `"mismatch'`, `"`,
		"a,b, c,", " , ", "keyUsage, subjectAltName", "Digital Signature,CRL Sign", "bogus,keyUsage",
		"$host", "${api.port}", "$$x", `\$y`, "$nope", "${api.nope}", "${nosuch.a}", "$ x", "${unclosed",
		"$port/$max_limit", "${x509.allow_ca}", "$allowed_key_usage", "$state_path/x", "$policy_dirs",
		"127.0.0.1", "::1", "10.0.0.300", "node-1", "node_1", "-bad-", "example.com.", "123",
		"x # y", "a:b", "k1:v1,k2:v2", "http://h:5000/v3", "mysql+pymysql://u:p@h/db",
		"k1:v1, k2 : v2 ,", "k:v:w", "novalue", "a,b", "c d", "a, c d", "inf", "nan", "1e-3", "10.5",
		"${oracle.dict}", "$multi", "${oracle.list}", "$float", "fe80::1%eth0", "1.2.3.4",
	}
	seps := []string{" = ", "=", ": ", ":", " =", "= "}
	var b strings.Builder
	if rng.IntN(40) == 0 {
		b.WriteString("early = 1\n")
	}
	for range 1 + rng.IntN(4) {
		sec := sections[rng.IntN(len(sections))]
		fmt.Fprintf(&b, "[%s]\n", sec)
		ks := keys[strings.ToLower(sec)]
		if sec == "DEFAULT" {
			ks = keys["DEFAULT"]
		}
		afterValue := false
		for range rng.IntN(6) {
			switch rng.IntN(12) {
			case 0:
				b.WriteString("# comment = 1\n")
				afterValue = false
			case 1:
				b.WriteString("\n")
				afterValue = false
			case 2:
				// A stray continuation (no value pending) is rare.
				if afterValue || rng.IntN(10) == 0 {
					b.WriteString("  continued $$ line\n")
				}
			case 3:
				if rng.IntN(10) == 0 {
					b.WriteString("not an assignment\n")
					continue
				}
				fallthrough
			default:
				fmt.Fprintf(&b, "%s%s%s\n", ks[rng.IntN(len(ks))], seps[rng.IntN(len(seps))], values[rng.IntN(len(values))])
				afterValue = true
			}
		}
	}
	return b.String()
}

// ours computes, like the oracle, each option's value or error.
func ours(paths []string) (parseErr error, values map[string]any, errs map[string]string) {
	var files []*File
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err, nil, nil
		}
		f, err := ParseINI(p, data)
		if err != nil {
			return err, nil, nil
		}
		files = append(files, f)
	}
	defs := oracleDefs()
	r := newResolver(defs)
	seen := map[string]bool{}
	for _, f := range files {
		r.add(f, seen)
	}
	values, errs = map[string]any{}, map[string]string{}
	for _, d := range defs {
		k := optKey{d.group, d.name}
		v, err := r.typed(k)
		if err != nil {
			errs[d.group+"/"+d.name] = err.Error()
			continue
		}
		values[d.group+"/"+d.name] = jsonish(v)
	}
	for k := range r.known {
		s, err := r.text(k)
		if err != nil {
			errs[k.group+"/"+k.name] = err.Error()
			continue
		}
		if len(r.entries[k]) == 0 && r.known[k].def == "<None>" {
			values[k.group+"/"+k.name] = nil
			continue
		}
		values[k.group+"/"+k.name] = s
	}
	return nil, values, errs
}

// jsonish converts a typed value to what encoding/json decoding of the
// oracle's answer gives.
func jsonish(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return map[string]any{"nonfinite": pyStr(x)}
		}
		return x
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case map[string]string:
		out := map[string]any{}
		for k, s := range x {
			out[k] = s
		}
		return out
	}
	return v
}

// TestOracleOsloConfig compares the parser, substitution and option types
// with oslo.config on generated files. It needs OPENKEEL_TEST_PYTHON, a
// python with oslo.config; it skips without it, except under CI.
// OPENKEEL_ORACLE_CASES (default 150) and OPENKEEL_ORACLE_SEED (default 1)
// change the number of generated cases and the generator's seed.
func TestOracleOsloConfig(t *testing.T) {
	python := os.Getenv("OPENKEEL_TEST_PYTHON")
	if python == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("OPENKEEL_TEST_PYTHON is not set")
		}
		t.Skip("OPENKEEL_TEST_PYTHON not set")
	}
	n := 150
	if s := os.Getenv("OPENKEEL_ORACLE_CASES"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			n = v
		}
	}
	seed := uint64(1)
	if s := os.Getenv("OPENKEEL_ORACLE_SEED"); s != "" {
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			seed = v
		}
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 2))
	type tcase struct {
		Files []string `json:"files"`
	}
	cases := make([]tcase, n)
	for i := range cases {
		for j := range 1 + rng.IntN(2) {
			p := filepath.Join(dir, fmt.Sprintf("case%03d-%d.conf", i, j))
			if err := os.WriteFile(p, []byte(oracleCase(rng)), 0o600); err != nil {
				t.Fatal(err)
			}
			cases[i].Files = append(cases[i].Files, p)
		}
	}
	input, err := json.Marshal(map[string]any{"opts": oracleSchema(), "cases": cases})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "oracle", "oslo_config_oracle.py"))
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	var results []oracleResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("oracle output: %v", err)
	}
	if len(results) != n {
		t.Fatalf("oracle answered %d cases, want %d", len(results), n)
	}
	failures, compared, parseErrors, valueErrors := 0, 0, 0, 0
	for i, res := range results {
		content := ""
		for _, p := range cases[i].Files {
			data, _ := os.ReadFile(p)
			content += "--- " + filepath.Base(p) + "\n" + string(data)
		}
		report := func(format string, args ...any) {
			failures++
			if failures <= 20 {
				t.Errorf("case %d: %s\n%s", i, fmt.Sprintf(format, args...), content)
			}
		}
		parseErr, values, errs := ours(cases[i].Files)
		if (res.ParseError != "") != (parseErr != nil) {
			report("parse: oslo %q, ours %v", res.ParseError, parseErr)
			continue
		}
		if parseErr != nil {
			parseErrors++
			continue
		}
		for key, want := range res.Values {
			compared++
			if want.Error != nil {
				valueErrors++
			}
			got, gotErr := values[key], errs[key]
			switch {
			case want.Error != nil && gotErr == "":
				report("%s: oslo fails (%s), ours gives %#v", key, *want.Error, got)
			case want.Error == nil && gotErr != "":
				report("%s: oslo gives %#v, ours fails (%s)", key, want.Value, gotErr)
			case want.Error == nil:
				if diff := cmp.Diff(want.Value, got); diff != "" {
					report("%s (-oslo +ours):\n%s", key, diff)
				}
			}
		}
	}
	t.Logf("%d cases: %d rejected by both parsers, %d option values compared, %d of them errors in both", n, parseErrors, compared, valueErrors)
	if failures > 0 {
		t.Errorf("%d differences in %d cases", failures, n)
	}
}

// TestOracleOsloConfigParser compares ParseINI with oslo.config's parser on
// random lines drawn from the characters the grammar cares about.
func TestOracleOsloConfigParser(t *testing.T) {
	python := os.Getenv("OPENKEEL_TEST_PYTHON")
	if python == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("OPENKEEL_TEST_PYTHON is not set")
		}
		t.Skip("OPENKEEL_TEST_PYTHON not set")
	}
	n, seed := 400, uint64(3)
	if s := os.Getenv("OPENKEEL_ORACLE_SEED"); s != "" {
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			seed = v
		}
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 4))
	pieces := []string{"[", "]", "=", ":", " ", "\t", "#", ";", "\"", "'", "k", "v", "$", "x y", "\f", "\u00a0", "\u2003", "é", "K"}
	word := func() string {
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	eols := []string{"\n", "\n", "\n", "\r\n", "\r", " \n", "\t\n"}
	paths := make([]string, n)
	for i := range paths {
		var b strings.Builder
		if rng.IntN(3) > 0 {
			b.WriteString("[s]\n")
		}
		for range rng.IntN(8) {
			switch rng.IntN(8) {
			case 0:
				b.WriteString("[" + word() + "]")
			case 1:
				b.WriteString([]string{"#", ";"}[rng.IntN(2)] + word())
			case 2:
				b.WriteString([]string{" ", "\t", "  "}[rng.IntN(3)] + word())
			case 3:
				b.WriteString(word())
			case 4:
			default:
				b.WriteString("k" + word() + []string{"=", ":", " = ", ": "}[rng.IntN(4)] + word())
			}
			b.WriteString(eols[rng.IntN(len(eols))])
		}
		paths[i] = filepath.Join(dir, fmt.Sprintf("p%03d.conf", i))
		if err := os.WriteFile(paths[i], []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	input, err := json.Marshal(map[string]any{"parse": paths})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "oracle", "oslo_config_oracle.py"))
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	var results []struct {
		ParseError string                         `json:"parse_error"`
		Sections   map[string]map[string][]string `json:"sections"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != n {
		t.Fatalf("oracle output: %v (%d results)", err, len(results))
	}
	failures, accepted := 0, 0
	for i, res := range results {
		data, _ := os.ReadFile(paths[i])
		f, err := ParseINI(paths[i], data)
		if (err != nil) != (res.ParseError != "") {
			failures++
			t.Errorf("%q: oslo %q, ours %v", data, res.ParseError, err)
			continue
		}
		if err != nil {
			continue
		}
		accepted++
		got := map[string]map[string][]string{}
		for _, s := range f.Sections {
			if got[NormalizeGroup(s)] == nil {
				got[NormalizeGroup(s)] = map[string][]string{}
			}
		}
		for _, e := range f.Entries {
			got[e.Group][e.Key] = append(got[e.Group][e.Key], e.Value)
		}
		if diff := cmp.Diff(res.Sections, got); diff != "" {
			failures++
			t.Errorf("%q (-oslo +ours):\n%s", data, diff)
		}
		if failures > 20 {
			t.Fatal("too many differences")
		}
	}
	t.Logf("%d files, %d accepted by both parsers", n, accepted)
}
