package app

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const modulePath = "github.com/openkeel/openkeel-magnum/"

// allowed lists, per package (relative to internal/), the internal packages
// its non-test files may import (STYLE.md §3). A package absent from the map
// may import anything (app, cli, testutil).
var allowed = map[string][]string{
	"magnum":           {},
	"policy":           {},
	"config":           {},
	"api/microversion": {},
	// The patch parser returns Magnum's client errors directly.
	"api/jsonpatch": {"magnum"},
	"db":            {"magnum"},
	"certs":         {"magnum"},
	"openstack":     {"magnum"},
	"driver":        {"magnum"},
	"driver/fake":   {"driver", "magnum"},
	"driver/capi":   {"driver", "magnum", "certs"},
	"auth":          {"magnum"},
	"conductor":     {"magnum", "db", "driver", "certs", "openstack"},
	"api":           {"conductor", "magnum", "auth", "policy", "api/microversion", "api/jsonpatch"},
	"reconcile":     {"conductor", "driver", "magnum"},
}

// externalOwners names, per external import prefix, the only packages
// (relative to internal/) that may use it.
var externalOwners = map[string][]string{
	"github.com/go-sql-driver/mysql":     {"db"},
	"github.com/jackc/pgx":               {"db"},
	"modernc.org/sqlite":                 {"db"},
	"github.com/gophercloud/gophercloud": {"openstack", "auth"},
	"k8s.io/":                            {"driver/capi", "reconcile", "app", "testutil/kubetest"},
	"sigs.k8s.io/controller-runtime":     {"driver/capi", "reconcile", "app", "testutil/kubetest"},
	"sigs.k8s.io/cluster-api":            {"driver/capi", "reconcile", "app", "testutil/kubetest"},
}

// TestLayering checks the import rules of STYLE.md §3 on the source files.
func TestLayering(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	internal := filepath.Join(filepath.Dir(file), "..")
	checked := 0
	err := filepath.WalkDir(internal, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(internal, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rules, restricted := allowed[rel]
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			for prefix, owners := range externalOwners {
				if strings.HasPrefix(p, prefix) && !contains(owners, rel) {
					t.Errorf("%s imports %s, which only %v may use (STYLE.md §3)", path, p, owners)
				}
			}
			dep, isInternal := strings.CutPrefix(p, modulePath+"internal/")
			if !isInternal || !restricted {
				continue
			}
			checked++
			if !contains(rules, dep) {
				t.Errorf("%s imports internal/%s, which STYLE.md §3 does not allow (allowed: %v)", path, dep, rules)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no internal import was checked")
	}
}
