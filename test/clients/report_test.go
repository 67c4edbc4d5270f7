package clients

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// suiteNames are the report's names of the top-level tests.
var suiteNames = map[string]string{
	"TestOpenStackCoe":                "openstack coe matrix (Keystone tokens and catalog)",
	"TestOpenStackCoeWithoutKeystone": "openstack coe without Keystone (none, admin_token)",
	"TestGophercloudAcceptance":       "gophercloud upstream acceptance tests",
	"TestGophercloudClusters":         "gophercloud containerinfra checks",
	"TestTempestPlugin":               "magnum-tempest-plugin API tests",
	"TestOpenStackSDKFunctional":      "openstacksdk functional tests",
	"TestAutoHealer":                  "magnum-auto-healer OpenStack provider",
	"TestAutoscalerSequence":          "cluster-autoscaler Magnum provider sequence",
}

var report struct {
	sync.Mutex
	order []string
	rows  map[string]*[2]int // suite -> run, passed
	notes map[string]string
}

// reportNote attaches a note to t's suite in the report.
func reportNote(t *testing.T, note string) {
	suite := suiteOf(t)
	report.Lock()
	defer report.Unlock()
	if report.notes == nil {
		report.notes = map[string]string{}
	}
	report.notes[suite] = note
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
	tallyCounts(t, run, n)
}

// tallyCounts counts run checks of t's suite, passed of them passing.
func tallyCounts(t *testing.T, run, passed int) {
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
	r[1] += passed
}

// TestMain writes the per-suite counts to $OKM_CLIENT_REPORT when it is
// set (.ci/run prints them at the end of a run).
func TestMain(m *testing.M) {
	code := m.Run()
	if path := os.Getenv("OKM_CLIENT_REPORT"); path != "" {
		var b strings.Builder
		for _, suite := range report.order {
			r := report.rows[suite]
			fmt.Fprintf(&b, "%s\t%d\t%d\t%s\n", suite, r[0], r[1], report.notes[suite])
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "client report:", err)
			code = 1
		}
	}
	os.Exit(code)
}
