package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/openkeel/openkeel-magnum/internal/app"
)

func newAPICommand(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "api",
		Short: "Run the API server (magnum-api)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServer(ctx, g, app.ModeAPI)
		},
	}
}

func newLogger(g *globalFlags) *slog.Logger {
	level := slog.LevelInfo
	if g.opts.Default.Debug {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(g.stderr, &slog.HandlerOptions{Level: level}))
}

// runServer opens the database, checks its schema, wires the service and
// serves until ctx ends. In all-in-one mode it also creates the schema and
// runs the background work.
func runServer(ctx context.Context, g *globalFlags, mode app.Mode) error {
	log := newLogger(g)
	d, err := app.OpenDatabase(ctx, g.opts)
	if err != nil {
		return err
	}
	defer d.Close()
	if mode == app.ModeAllInOne {
		if err := d.Upgrade(ctx); err != nil {
			return err
		}
	}
	if err := app.CheckSchema(ctx, d); err != nil {
		return err
	}
	svc, err := app.New(ctx, g.opts, mode, d, log)
	if err != nil {
		return err
	}
	if mode == app.ModeAllInOne {
		bctx, cancel := context.WithCancel(ctx)
		wait := svc.StartBackground(bctx)
		defer wait()
		defer cancel()
	}
	return svc.Serve(ctx)
}
