package cli

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/openkeel/openkeel-magnum/internal/app"
)

func newReconcilerCommand(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "reconciler",
		Short: "Run the background work (magnum-conductor): status reconciliation and the service heartbeat",
		Long: "Runs what magnum-conductor did in the background: it polls the drivers for clusters in progress,\n" +
			"saves their statuses, removes deleted clusters, and reports this process in magnum_service.\n" +
			"Several instances may run; one at a time reconciles (a lease in the database).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := newLogger(g)
			d, err := app.OpenDatabase(ctx, g.opts)
			if err != nil {
				return err
			}
			defer d.Close()
			if err := app.CheckSchema(ctx, d); err != nil {
				return err
			}
			cond, err := app.NewConductor(g.opts, app.ModeAPI, d, log)
			if err != nil {
				return err
			}
			wait := app.StartBackground(ctx, g.opts, app.ModeAPI, d, cond, log)
			log.Info("reconciler running")
			<-ctx.Done()
			wait()
			return nil
		},
	}
}
