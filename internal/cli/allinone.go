package cli

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/openkeel/openkeel-magnum/internal/app"
)

func newAllInOneCommand(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "all-in-one",
		Short: "Run the API and the background work on the embedded default (SQLite, fake driver, no Keystone)",
		Long: "Runs the API server and the background work in one process. Unless the configuration files say\n" +
			"otherwise, the database is the SQLite file " + app.AllInOneDatabaseFile + " in the working directory\n" +
			"(created and migrated on start), requests are not authenticated (identity from the X-Project-Id,\n" +
			"X-User-Id and X-Roles headers), and clusters are built by the built-in fake driver.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := app.ApplyAllInOneDefaults(g.opts); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServer(ctx, g, app.ModeAllInOne)
		},
	}
}
