package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/openkeel/openkeel-magnum/internal/app"
	"github.com/openkeel/openkeel-magnum/internal/db"
)

func newDBCommand(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Manage the database schema (magnum-db-manage)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "upgrade",
		Short: "Create the schema or migrate it to the latest version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := app.OpenDatabase(cmd.Context(), g.opts)
			if err != nil {
				return err
			}
			defer d.Close()
			if err := d.Upgrade(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "Database schema is at version %d\n", db.LatestVersion())
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the schema version and the Alembic revision",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := app.OpenDatabase(cmd.Context(), g.opts)
			if err != nil {
				return err
			}
			defer d.Close()
			ours, alembic, err := d.Version(cmd.Context())
			if err != nil {
				return err
			}
			if alembic == "" {
				alembic = "None"
			}
			// The second line is magnum-db-manage version's output.
			fmt.Fprintf(g.stdout, "openkeel-magnum schema version is %d (latest %d)\n", ours, db.LatestVersion())
			fmt.Fprintf(g.stdout, "Current DB revision is %s\n", alembic)
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "adopt",
		Short: "Take over an existing Magnum database (Alembic head b3e1cf4a2d5e) without changing its rows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := app.OpenDatabase(cmd.Context(), g.opts)
			if err != nil {
				return err
			}
			defer d.Close()
			if err := d.Adopt(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "Magnum database adopted at schema version %d\n", db.LatestVersion())
			return nil
		},
	})
	return cmd
}
