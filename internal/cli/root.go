package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openkeel/openkeel-magnum/internal/config"
)

// globalFlags are the oslo.config-style options every subcommand accepts.
type globalFlags struct {
	configFiles []string
	configDirs  []string
	opts        *config.Options
	stdout      io.Writer
	stderr      io.Writer
}

// Default configuration locations, searched the way oslo.config searches
// them for project "magnum" when no --config-file is given.
var defaultConfigFiles = []string{"/etc/magnum/magnum.conf"}

// defaultConfigDirs mirror oslo.config's project config dir.
var defaultConfigDirs = []string{"/etc/magnum/magnum.conf.d"}

// Main runs the command line and returns the process exit code. Errors are
// printed as a single line naming the cause: never a stack trace.
func Main(args []string, stdout, stderr io.Writer) int {
	g := &globalFlags{stdout: stdout, stderr: stderr}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ec exitCode
	if errors.As(err, &ec) {
		return int(ec)
	}
	fmt.Fprintf(stderr, "openkeel-magnum: %s\n", oneLine(err.Error()))
	return 1
}

// exitCode is returned by commands that already printed their outcome and
// only need a specific exit status (status upgrade-check).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func newRoot(g *globalFlags) *cobra.Command {
	root := &cobra.Command{
		Use:           "openkeel-magnum",
		Short:         "OpenStack Magnum container-infra API on Cluster API",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return g.load(cmd)
		},
	}
	pf := root.PersistentFlags()
	pf.StringArrayVar(&g.configFiles, "config-file", nil,
		"path to a config file (repeatable; later files win). Default: /etc/magnum/magnum.conf when it exists")
	pf.StringArrayVar(&g.configDirs, "config-dir", nil,
		"directory of *.conf files read after the config files, in name order (repeatable)")
	root.AddCommand(
		newAPICommand(g),
		newAllInOneCommand(g),
		newReconcilerCommand(g),
		newDBCommand(g),
		newDriverCommand(g),
		newStatusCommand(g),
	)
	return root
}

// load reads the configuration once, before any subcommand runs.
func (g *globalFlags) load(cmd *cobra.Command) error {
	files, dirs := g.configFiles, g.configDirs
	if len(files) == 0 && len(dirs) == 0 && cmd.Name() != "all-in-one" {
		for _, f := range defaultConfigFiles {
			if st, err := os.Stat(f); err == nil && !st.IsDir() {
				files = append(files, f)
			}
		}
		for _, d := range defaultConfigDirs {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	for i, f := range files {
		if abs, err := filepath.Abs(f); err == nil {
			files[i] = abs
		}
	}
	opts, warnings, err := config.Load(files, dirs)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(g.stderr, "openkeel-magnum: warning: %s\n", w)
	}
	g.opts = opts
	return nil
}
