// Package cli holds the openkeel-magnum subcommands: one file per command.
// Commands parse flags, load the configuration once and hand it to
// internal/app; they hold no business logic.
package cli
