package clients

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// suiteNames are the report's names of the top-level tests (the names the
// Rust harness gives the same suites).
var suiteNames = map[string]string{
	"TestGophercloudClusters": "gophercloud containerinfra checks",
	"TestAutoHealer":          "magnum-auto-healer OpenStack provider",
	"TestAutoscalerSequence":  "cluster-autoscaler Magnum provider sequence",
}

var report struct {
	sync.Mutex
	order []string
	rows  map[string]*[2]int // suite -> run, passed
}

func suiteOf(t *testing.T) string {
	suite, _, _ := strings.Cut(t.Name(), "/")
	if name, ok := suiteNames[suite]; ok {
		return name
	}
	return suite
}

// tally counts run checks of the suite t belongs to, passed of them
// passing.
func tally(t *testing.T, run int, passed bool) {
	n := 0
	if passed {
		n = run
	}
	suite := suiteOf(t)
	report.Lock()
	defer report.Unlock()
	if report.rows == nil {
		report.rows = map[string]*[2]int{}
	}
	r, ok := report.rows[suite]
	if !ok {
		r = &[2]int{}
		report.rows[suite] = r
		report.order = append(report.order, suite)
	}
	r[0] += run
	r[1] += n
}

// TestMain writes the per-suite counts to $OKM_CLIENT_REPORT when it is set
// (the Rust harness adds them to its report).
func TestMain(m *testing.M) {
	code := m.Run()
	if path := os.Getenv("OKM_CLIENT_REPORT"); path != "" {
		var b strings.Builder
		for _, suite := range report.order {
			r := report.rows[suite]
			fmt.Fprintf(&b, "%s\t%d\t%d\t\n", suite, r[0], r[1])
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "client report:", err)
			code = 1
		}
	}
	os.Exit(code)
}
