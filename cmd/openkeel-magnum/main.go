// Command openkeel-magnum is the OpenStack Magnum container-infra API server
// and its administration commands, in one binary.
package main

import (
	"os"

	"github.com/openkeel/openkeel-magnum/internal/cli"

	// Drivers register themselves; only main imports them.
	_ "github.com/openkeel/openkeel-magnum/internal/driver/fake"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
