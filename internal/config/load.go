package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNotFound is matched (errors.Is) when a --config-file or --config-dir
// does not exist.
var ErrNotFound = errors.New("not found")

// Defaults returns the options with every default applied and no file read.
func Defaults() *Options {
	o, _, err := FromFiles(nil)
	if err != nil {
		// The defaults are constants checked by the tests.
		panic("config: invalid built-in default: " + err.Error())
	}
	return o
}

// Load reads the configuration files (in order) and then, for each
// directory in dirs, every "*.conf" file in it (hidden files excepted) in
// sorted order, the way oslo.config handles --config-file and
// --config-dir; a later file wins for single-valued options and adds to
// multi-valued ones. It returns the options, the warnings (unknown groups
// and options, deprecated names, ignored options) and an error for a
// missing file or directory, a malformed file or an invalid value.
func Load(files, dirs []string) (*Options, []string, error) {
	paths := slicesClone(files)
	for _, dir := range dirs {
		found, err := confFilesIn(dir)
		if err != nil {
			return nil, nil, err
		}
		paths = append(paths, found...)
	}
	parsed := make([]*File, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("config file %s: %w", p, ErrNotFound)
		case err != nil:
			return nil, nil, fmt.Errorf("read config file: %w", err)
		}
		f, err := ParseINI(p, data)
		if err != nil {
			return nil, nil, err
		}
		parsed = append(parsed, f)
	}
	return FromFiles(parsed)
}

// FromFiles builds the options from already parsed files, in load order.
func FromFiles(files []*File) (*Options, []string, error) {
	o := &Options{}
	defs := o.defs()
	r := newResolver(defs)
	var warnings []string
	seenGroups := map[string]bool{}
	for _, f := range files {
		warnings = append(warnings, r.add(f, seenGroups)...)
		o.Files = append(o.Files, f.Name)
	}
	if err := r.build(o, defs); err != nil {
		return nil, warnings, err
	}
	return o, warnings, nil
}

// confFilesIn lists dir/*.conf like Python's sorted(glob.glob(...)): hidden
// files are skipped, names are sorted by code point. Sub-directories whose
// name ends in .conf are skipped too.
func confFilesIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("config dir %s: %w", dir, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("read config dir: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".conf") || e.IsDir() {
			continue
		}
		out = append(out, filepath.Join(dir, name))
	}
	sort.Strings(out)
	return out, nil
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
