package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/openkeel/openkeel-magnum/internal/app"
)

// checkResult is an oslo.upgradecheck result code.
type checkResult int

const (
	checkSuccess checkResult = 0
	checkWarning checkResult = 1
	checkFailure checkResult = 2
)

func (r checkResult) String() string {
	return [...]string{"Success", "Warning", "Failure"}[r]
}

type upgradeCheck struct {
	name string
	run  func(ctx context.Context, g *globalFlags) (checkResult, string)
}

var upgradeChecks = []upgradeCheck{
	{"Policy File JSON to YAML Migration", checkPolicyJSON},
	{"Database Schema", checkDatabase},
	{"Cluster Drivers", checkDrivers},
}

func newStatusCommand(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Deployment checks (magnum-status)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "upgrade-check",
		Short: "Check that this deployment can run this release (magnum-status upgrade check)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			worst := checkSuccess
			var blocks [][2]string
			for _, c := range upgradeChecks {
				ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
				res, details := c.run(ctx, g)
				cancel()
				if res > worst {
					worst = res
				}
				if details == "" {
					details = "None"
				}
				blocks = append(blocks, [2]string{c.name, "Result: " + res.String() + "\n" + "Details: " + details})
			}
			printUpgradeCheck(g, blocks)
			if worst != checkSuccess {
				return exitCode(worst)
			}
			return nil
		},
	})
	return cmd
}

// printUpgradeCheck prints results in oslo.upgradecheck's table layout.
func printUpgradeCheck(g *globalFlags, blocks [][2]string) {
	var lines []string
	lines = append(lines, "Upgrade Check Results")
	var body [][]string
	width := utf8.RuneCountInString(lines[0])
	for _, b := range blocks {
		l := append([]string{"Check: " + b[0]}, strings.Split(b[1], "\n")...)
		for _, s := range l {
			if n := utf8.RuneCountInString(s); n > width {
				width = n
			}
		}
		body = append(body, l)
	}
	sep := "+" + strings.Repeat("-", width+2) + "+"
	row := func(s string) string { return "| " + s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) + " |" }
	fmt.Fprintln(g.stdout, sep)
	fmt.Fprintln(g.stdout, row(lines[0]))
	fmt.Fprintln(g.stdout, sep)
	for _, l := range body {
		for _, s := range l {
			fmt.Fprintln(g.stdout, row(s))
		}
		fmt.Fprintln(g.stdout, sep)
	}
}

// checkPolicyJSON is oslo.upgradecheck's common policy check: a JSON
// policy file still in use is a warning.
func checkPolicyJSON(_ context.Context, g *globalFlags) (checkResult, string) {
	file := g.opts.OsloPolicy.PolicyFile
	if !strings.HasSuffix(strings.ToLower(file), ".json") {
		return checkSuccess, ""
	}
	candidates := []string{file}
	if !filepath.IsAbs(file) {
		candidates = []string{file, filepath.Join("/etc/magnum", file)}
	}
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return checkWarning, "Your policy file is JSON-formatted which is deprecated. " +
				"Convert it to YAML and set [oslo_policy]/policy_file to the new file."
		}
	}
	return checkSuccess, ""
}

func checkDatabase(ctx context.Context, g *globalFlags) (checkResult, string) {
	d, err := app.OpenDatabase(ctx, g.opts)
	if err != nil {
		return checkFailure, oneLine(err.Error())
	}
	defer d.Close()
	if err := app.CheckSchema(ctx, d); err != nil {
		return checkFailure, oneLine(err.Error())
	}
	return checkSuccess, ""
}

func checkDrivers(_ context.Context, g *globalFlags) (checkResult, string) {
	reg := app.NewDrivers(g.opts)
	if _, err := reg.DefaultName(); err != nil {
		return checkFailure, oneLine(err.Error())
	}
	if len(reg.Names()) == 0 {
		return checkWarning, "No cluster driver is enabled: cluster template creation will fail."
	}
	return checkSuccess, "Installed drivers: " + strings.Join(reg.Names(), ", ")
}
