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
			"Several instances may run; one at a time reconciles (a lease in the database).\n" +
			"With [capi]/enabled = true it watches the Cluster API objects of [capi]/namespace instead of\n" +
			"polling, and the active instance is elected by a Lease in the management cluster.",
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
			var wait func()
			if g.opts.CAPI.Enabled {
				// The Cluster API objects are watched: statuses follow
				// their events; the Lease elects the active instance.
				if wait, err = app.StartCAPIBackground(ctx, g.opts, d, cond, log); err != nil {
					return err
				}
				log.Info("reconciler running", "watching", "management cluster", "namespace", g.opts.CAPI.Namespace)
			} else {
				wait = app.StartBackground(ctx, g.opts, app.ModeAPI, d, cond, log)
				log.Info("reconciler running")
			}
			<-ctx.Done()
			wait()
			return nil
		},
	}
}
