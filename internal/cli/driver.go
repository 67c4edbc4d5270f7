package cli

import (
	"github.com/spf13/cobra"

	"github.com/openkeel/openkeel-magnum/internal/app"
)

func newDriverCommand(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "driver",
		Short: "Inspect the installed cluster drivers (magnum-driver-manage)",
	}
	var details bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the installed drivers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg := app.NewDrivers(g.opts)
			header := []string{"Name"}
			if details {
				header = append(header, "Server_Type", "OS", "COE")
			}
			var rows [][]string
			for _, r := range reg.List(details) {
				row := []string{r.Name}
				if details {
					row = append(row, r.ServerType, r.OS, r.COE)
				}
				rows = append(rows, row)
			}
			printTable(g.stdout, header, rows)
			return nil
		},
	}
	list.Flags().BoolVarP(&details, "details", "d", false, "display the cluster types provided by each driver")
	cmd.AddCommand(list)
	return cmd
}
